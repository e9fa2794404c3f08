"""The old name of :mod:`cluster_sim.config`, kept for callers that import it from here: import
``Config``, ``param`` and ``field_of`` from :mod:`cluster_sim.config` (pure modules need no Mesa)."""

from ..config import Config, Work, field_of, param, seed_param

__all__ = ["Config", "Work", "field_of", "param", "seed_param"]
