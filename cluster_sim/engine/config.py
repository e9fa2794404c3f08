"""The engine's name for :mod:`cluster_sim.config` (pure modules import that one: it needs no Mesa)."""

from ..config import Config, Work, param

__all__ = ["Config", "Work", "param"]
