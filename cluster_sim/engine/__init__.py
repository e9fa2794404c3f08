"""The Mesa substrate every lab shares.

- :class:`ClusterConfig` (``cluster_config.py``): the engine's experiment config and presets.
- :class:`ClusterModel`, :func:`run`, :class:`ClusterResult`, :class:`ClusterMetrics` (``model.py``).
- Agents (``agents.py``): :class:`Machine`, :class:`CentralStateView` (owns the ledger, commits with
  conflict detection, pushes snapshots to :class:`LocalStateView` every ``update_delay``; listener
  hooks ``release_listeners``, ``commit_listeners``, ``sync_listeners``), :class:`Scheduler`
  (override ``choose(task)`` for another policy), :class:`JobManager`.
- Pure layer: :class:`ResourceLedger` (``ledger.py``), placement policies (``placement.py``),
  :class:`StepIntegral` (``metrics.py``), ``Job``/``Stage``/``Task`` and generators (``workload.py``),
  :class:`Config`/:func:`param` (``config.py``).
"""

from .agents import CentralStateView, JobManager, LocalStateView, Machine, Scheduler
from .cluster_config import ClusterConfig
from ..config import Config, param
from .ledger import ResourceLedger
from .metrics import StepIntegral
from .model import ClusterMetrics, ClusterModel, ClusterResult, collect, run
from .placement import POLICIES, best_fit, first_fit, random_fit, worst_fit
from .workload import Job, Stage, Task, WorkloadSpec, generate_jobs

__all__ = [
    "CentralStateView", "ClusterConfig", "ClusterMetrics", "ClusterModel", "ClusterResult", "Config",
    "Job", "JobManager", "LocalStateView", "Machine", "POLICIES", "ResourceLedger", "Scheduler", "Stage",
    "StepIntegral", "Task", "WorkloadSpec", "best_fit", "collect", "first_fit", "generate_jobs", "param",
    "random_fit", "run", "worst_fit",
]
