"""Lab 10, the capstone: one cluster, one day, the five labs' mechanisms at once, each a switch.

``CapstoneConfig`` (presets ``ci``, ``default``, ``paper``; switches ``morpheus``, ``wing``,
``shaper``, ``stageopt``, ``rminer``), ``make_day`` (the generated day), ``CapstoneModel`` (the
composition on the engine), ``run(config)`` (the metrics) and ``ablation(config, seeds)``.
"""

from .config import LAYERS, SWITCHES, CapstoneConfig
from .day import Day, JobSpec, make_day
from .experiments import METRICS, ablation, arm_name, arms, run, run_model
from ..engine import QueueLayer
from .model import CapstoneModel

__all__ = ["LAYERS", "METRICS", "SWITCHES", "CapstoneConfig", "CapstoneModel", "Day", "JobSpec", "QueueLayer",
           "ablation", "arm_name", "arms", "make_day", "run", "run_model"]
