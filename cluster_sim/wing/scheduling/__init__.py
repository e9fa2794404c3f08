"""Lab 05: value-aware scheduling on a YARN-like cluster (Wing §5-§7): PRIO, Wing-Direct, Wing-Agg, Wing-MIL, Oracles.

:mod:`.config` (``WingConfig`` and its presets), :mod:`.workload` (the pure layer: a lake cut into
history and run, Wing-Agg's priority, Wing-MIL's value functions, value attained), :mod:`.model`
(``WingModel`` on the engine's capacity scheduler, ``ProvenanceRecorder``), :mod:`.experiments`
(``run(config) -> WingResult``), :mod:`.sweeps` (the experiments of §7), :mod:`.plots`.
"""

from .config import POLICIES, POLICY_NAMES, QUEUE_MODES, WingConfig
from .experiments import WingResult, run, workload_for
from .model import ProvenanceRecorder, WingJobManager, WingModel
from .workload import ValueWorkload, decay_profiles, owl_by_iteration, peak_use, prepare, value_attained, value_efficiency

__all__ = ["POLICIES", "POLICY_NAMES", "ProvenanceRecorder", "QUEUE_MODES", "ValueWorkload", "WingConfig", "WingJobManager",
           "WingModel", "WingResult", "decay_profiles", "owl_by_iteration", "peak_use", "prepare", "run",
           "value_attained", "value_efficiency", "workload_for"]
