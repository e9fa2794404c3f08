"""Lab 05: value-aware scheduling on a YARN-like cluster (Wing §5-§7): PRIO, Wing-Direct, Wing-Agg, Wing-MIL, Oracles.

:mod:`.config` (``WingConfig`` and its presets), :mod:`.workload` (the pure layer: a lake cut into
history and run, Wing-Agg's priority, Wing-MIL's value functions, value attained), :mod:`.model`
(``WingModel`` on the engine's capacity scheduler, ``ProvenanceRecorder``), :mod:`.experiments`
(``run(config) -> WingResult``, ``sweep``, ``lake_table`` and ``lake_calibration`` through ``run_grid``, the inversion example), :mod:`.plots`, :mod:`.exercise`
(the exercise's checks).
"""

from .config import POLICIES, POLICY_NAMES, QUEUE_MODES, WingConfig
from .exercise import check_priority_replay, check_priority_table, worked_history
from .experiments import WingResult, inversion_example, lake_calibration, lake_table, run, sweep, workload_for
from .model import ProvenanceRecorder, WingJobManager, WingModel
from .plots import plot_capacity, plot_iterations, plot_outcomes, plot_sensitivity
from .workload import ValueWorkload, decay_profiles, owl_by_iteration, peak_use, prepare, value_attained, value_efficiency

__all__ = ["POLICIES", "POLICY_NAMES", "ProvenanceRecorder", "QUEUE_MODES", "ValueWorkload", "WingConfig", "WingJobManager",
           "WingModel", "WingResult", "check_priority_replay", "check_priority_table", "decay_profiles",
           "inversion_example", "lake_calibration", "lake_table", "owl_by_iteration", "peak_use", "plot_capacity", "plot_iterations", "plot_outcomes",
           "plot_sensitivity", "prepare", "run", "sweep", "value_attained", "value_efficiency", "workload_for",
           "worked_history"]
