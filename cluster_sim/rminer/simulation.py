"""``run(config) -> RMinerResult``: one shared-state run (NoRM, SafeRM or SmartRM) and its metrics.

Every metric is exact: time integrals of step functions (allocated CPU in the CSV, CPU held by RM
tasks, the shadow amount) and event counts.

Example
-------
>>> r = run(RMinerConfig.ci().replace(horizon=10.0))
>>> abs(r.shadow_ratio - r.theory_shadow_ratio) < 0.02
True
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..engine.model import gc_paused
from ..engine.workload import COMPLETED, KILLED, RUNNING
from .config import RMinerConfig
from .model import STARTED_NAMES, RMinerModel
from .theory import theory_shadow_ratio


#: the headline numbers of :meth:`RMinerResult.summary`, in its order
SUMMARY_COLUMNS = ("shadow_ratio", "theory_shadow_ratio", "cpu_utilization", "throughput", "mean_job_wait",
                   "conflict_rate", "shadow_used_share", "rm_killed_share")


@dataclass
class RMinerResult:
    """Headline metrics of one run, plus the series and counts the figures need."""

    config: RMinerConfig
    shadow_ratio: float  # time-average shadow / time-average CSV-allocated (CPU)
    theory_shadow_ratio: float  # d_u / (2 l), with d_u the shadow period (d_u / views when staggered)
    cpu_utilization: float  # time-average (CSV + RM) CPU / CPU capacity
    throughput: float  # tasks scheduled (started and not killed) per second of horizon
    tasks_scheduled: int
    tasks_completed: int
    tasks_submitted: int
    mean_job_wait: float  # arrival -> all tasks started; censored at the horizon
    conflict_rate: float  # (CSV conflicts + commits colliding with RM tasks) / commit attempts
    csv_conflict_rate: float  # CSV conflicts only (normal schedulers' stale views)
    rm_conflict_rate: float  # commits colliding with RM tasks / commit attempts
    shadow_used_share: float  # time integral of CPU held by RM tasks / time integral of shadow
    rm_killed_share: float  # RM tasks killed / RM tasks placed on shadow (Fig. 16)
    mean_shadow: float  # time-average shadow CPU slots
    mean_allocated: float  # time-average CSV-allocated CPU slots
    survival_mean: float  # amount-weighted mean survival time of shadow fragments (s)
    survival_hist: tuple  # (edges, density)
    counts: dict = field(default_factory=dict)
    series: dict = field(default_factory=dict)  # name -> (times, values) step functions
    capacity_cpu: int = 0
    events: int = 0
    # where the utilisation comes from (they add up to cpu_utilization): RM tasks on shadow resources,
    # tasks the RM scheduler committed to the CSV (Algorithm 2's normal path, SafeRM's migrations),
    # and the normal schedulers' tasks
    util_shadow: float = 0.0
    util_rm_normal_path: float = 0.0
    util_normal: float = 0.0
    # tasks scheduled (started, not killed) by how they first started: "normal", "rm_shadow", "rm_normal_path"
    scheduled_by: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """The headline numbers as a flat dict (for tables)."""
        return {k: getattr(self, k) for k in SUMMARY_COLUMNS}


def run(config: RMinerConfig, *, check_every_event: bool = False, record_series: bool = True) -> RMinerResult:
    """Build the RMiner model, run it to the horizon, check the invariants, return the metrics."""
    model = RMinerModel(config, check_every_event=check_every_event, record_series=record_series)
    model.run_until(config.horizon)
    with gc_paused(model.pause_gc):  # the checks and the read-out walk millions of tasks too
        model.check_invariants()
        return collect(model)


def collect(model: RMinerModel) -> RMinerResult:
    cfg = model.config
    h = model.time
    csv = model.csv
    cap_cpu = int(csv.ledger.capacity[:, 0].sum())
    alloc_int = csv.usage[0].total(h)
    rm = model.rm
    rm_int = csv.hidden_usage[0].total(h)
    shadow_int = float(model.probe.integral(h)[0]) if model.probe.active else 0.0
    tasks = [t for j in model.arrived for t in j.tasks]
    started = model.started_by
    killed = sum(t.state == KILLED for t in tasks)
    by = Counter(started[t.id] for t in tasks if t.state != KILLED)
    scheduled_by = {name: by.get(code, 0) for code, name in STARTED_NAMES.items()}
    scheduled = sum(scheduled_by.values())
    path_int = rm.normal_path_usage.total(h) if rm is not None else 0.0
    completed = sum(t.state == COMPLETED for t in tasks)
    waits = [model.job_scheduled_at.get(j.id, h) - j.arrival for j in model.arrived]
    counts = dict(rm.counts) if rm is not None else {}
    collisions = counts.get("rm_collisions", 0)
    attempts = csv.commits + csv.conflicts
    meter = model.probe.meter
    series = {}
    if csv.usage[0].recording:
        series["cpu"] = csv.usage[0].steps()
        if rm is not None:
            series["rm_cpu"] = rm.usage.steps()
        if model.probe.series is not None:
            series["shadow"] = model.probe.series.steps()
    if model.node_samples:
        # Fig. 11: (times, mean over nodes, standard deviation over nodes) of per-node CPU utilisation
        t = np.array([s[0] for s in model.node_samples])
        u = np.array([s[1] for s in model.node_samples])
        series["node_util"] = (t, u.mean(axis=1), u.std(axis=1))
    counts.update(csv_commits=csv.commits, csv_conflicts=csv.conflicts, killed=killed,
                  running_at_horizon=sum(t.state == RUNNING for t in tasks))
    return RMinerResult(
        config=cfg,
        shadow_ratio=shadow_int / alloc_int if alloc_int > 0 else 0.0,
        theory_shadow_ratio=theory_shadow_ratio(cfg.shadow_period(), cfg.mean_task_duration),
        cpu_utilization=(alloc_int + rm_int) / (cap_cpu * h),
        throughput=scheduled / h,
        tasks_scheduled=scheduled,
        tasks_completed=int(completed),
        tasks_submitted=len(tasks),
        mean_job_wait=float(np.mean(waits)) if waits else math.nan,
        conflict_rate=(csv.conflicts + collisions) / attempts if attempts else 0.0,
        csv_conflict_rate=csv.conflicts / attempts if attempts else 0.0,
        rm_conflict_rate=collisions / attempts if attempts else 0.0,
        shadow_used_share=rm_int / shadow_int if shadow_int > 0 else 0.0,
        rm_killed_share=counts.get("rm_killed", 0) / max(counts.get("rm_placed", 0), 1),
        mean_shadow=shadow_int / h,
        mean_allocated=alloc_int / h,
        survival_mean=meter.survival_mean(),
        survival_hist=meter.survival_histogram(),
        counts=counts,
        series=series,
        capacity_cpu=cap_cpu,
        util_shadow=rm_int / (cap_cpu * h),
        util_rm_normal_path=path_int / (cap_cpu * h),
        util_normal=(alloc_int - path_int) / (cap_cpu * h),
        scheduled_by=scheduled_by,
    )
