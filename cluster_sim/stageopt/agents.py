"""The thin Mesa layer: IPA and Fuxi as stage placement policies of the engine's ``Scheduler``.

When a job manager hands a stage's tasks to the scheduler, a :class:`StagePlanningScheduler`
plans the whole stage at once on its local view: the latency matrix is the engine's own
``L[i, j] = duration_i / speed_j`` (a perfect model, column-ordered by construction), the slots
per machine are β_j of §5.2 with the stage's demand as Θ0. Tasks are then committed one by one
as usual; a planned machine that no longer fits (another stage took it, a stale view) falls back
to the fastest machine that fits in the view.

>>> from cluster_sim.engine import ClusterConfig
>>> cfg = ClusterConfig.ci().replace(hardware_types=3, speed_spread=1.0)
>>> res = run_cluster(cfg, "ipa")
>>> res.metrics.jobs_submitted > 0
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine import ClusterConfig, ClusterModel, ClusterResult, Scheduler, collect
from ..engine.placement import fitting
from .placement import _ipa, _slots_per_machine, fuxi_placement

__all__ = ["StagePlanningScheduler", "IPAScheduler", "FuxiScheduler", "run_cluster", "stage_latencies",
           "LAB_CLUSTER", "lab_cluster_config", "planner_stage_latencies"]


class StagePlanningScheduler(Scheduler):
    """A scheduler that places each stage as a whole (``plan_stage``) and then follows the plan."""

    alpha = 4

    def plan_stage(self, L: np.ndarray, capacity: np.ndarray, free: np.ndarray) -> np.ndarray:
        """The stage's placement plan; subclasses choose the planner (the base plans with IPA: Algorithm 1 as
        ``ipa_placement`` runs it, without checking again what :meth:`_plan` built, finite non-negative latencies
        and whole slots that hold the stage; tests/stageopt/test_engine_planners.py compares the two)."""
        return _ipa(L, capacity)[0]

    def enqueue(self, tasks) -> None:
        self._plan(tasks)
        super().enqueue(tasks)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.planned: dict[int, int] = {}     # task id -> machine, until the task is decided
        self.speed_array: np.ndarray | None = None

    def _plan(self, tasks) -> None:
        free = self.view.free
        demand = np.asarray(tasks[0].demand, dtype=float)
        m, n = len(tasks), free.shape[0]
        alpha = max(self.alpha, -(-m // n))
        # the view's free rows (floats) and a positive demand: β_j without checking its inputs again at every stage
        cap = _slots_per_machine(np.maximum(free, 0), np.maximum(demand, 1e-9), alpha)
        speed = self.speeds
        durations = np.array([t.duration for t in tasks])
        # the view may not hold the whole stage: plan the longest tasks, the rest fall back
        k = min(m, int(cap.sum()))
        if k == 0:
            return
        keep = np.argsort(-durations, kind="stable")[:k]
        L = durations[keep, None] / speed[None, :]
        a = self.plan_stage(L, cap, free)
        for i, j in zip(keep, a):
            self.planned[tasks[i].id] = int(j)

    def choose(self, task) -> int:
        free = self.view.free
        demand = task.demand
        j = self.planned.pop(task.id, -1)
        # the planned machine alone decides many tasks: test it before every machine (500 at the capstone's paper),
        # element by element (a numpy comparison and .all() on a two-element row cost more than the test)
        if j >= 0:
            row = free[j]
            if all(row[r] >= d for r, d in enumerate(demand)):
                return j
        # the fastest machine that fits, ties to the lower index (the engine's column-by-column test of every
        # machine, and nonzero without np.flatnonzero's wrappers: this runs at most decisions of a busy day)
        fits = fitting(free, demand).nonzero()[0]
        if fits.size == 0:
            return -1
        return int(fits[self.speeds[fits].argmax()])

    @property
    def speeds(self) -> np.ndarray:
        """The machines' speeds as an array (the model's list, converted once)."""
        if self.speed_array is None:
            self.speed_array = np.asarray(self.model.speed, dtype=float)
        return self.speed_array


class IPAScheduler(StagePlanningScheduler):
    """Places each stage with IPA (Algorithm 1)."""


class FuxiScheduler(StagePlanningScheduler):
    """Places each stage like Fuxi: lowest watermark on the key resource, tasks in id order."""

    def plan_stage(self, L, capacity, free):
        watermark = 1 - free / np.asarray(self.csv.ledger.capacity, dtype=float)
        return fuxi_placement(watermark, capacity, L.shape[0])


#: the scheduler class of each planner
PLANNERS = {"ipa": IPAScheduler, "fuxi": FuxiScheduler}


def run_cluster(config: ClusterConfig, planner: str = "ipa") -> ClusterResult:
    """Run the engine with stage-level IPA or Fuxi placement; invariants are checked."""
    if planner not in PLANNERS:
        raise ValueError(f"planner={planner!r} is not allowed: choose {' or '.join(map(repr, PLANNERS))}")
    model = ClusterModel(config, scheduler_class=PLANNERS[planner])
    model.run_until(config.horizon)
    model.check_invariants()
    return collect(model)


def stage_latencies(result: ClusterResult) -> pd.Series:
    """Completed stages' latency: release of the stage to its last task's finish."""
    t = pd.DataFrame({k: result.tasks[k] for k in ("job", "stage", "released", "finish")})
    t["done"] = result.tasks["state"] == "completed"
    g = t.groupby(["job", "stage"])
    # whole-column aggregations: a Python function per stage cost the capstone's ablation 6 % of its time
    lat = g.finish.max() - g.released.min()
    return lat[g.done.all()]


#: Lab 06's engine cluster (section 6): the engine's ``ci`` scale at every preset, with machines of
#: three speeds and lognormal task durations, so that where a task runs matters
LAB_CLUSTER = dict(hardware_types=3, speed_spread=2.0, tasks_per_job=12.0, duration_dist="lognormal", stages_per_job=2)


def lab_cluster_config(seed: int) -> ClusterConfig:
    """The engine config of Lab 06's Mesa run for ``seed`` (the lab config's seed)."""
    return ClusterConfig.from_preset("ci", **LAB_CLUSTER, seed=seed)


def planner_stage_latencies(config: ClusterConfig) -> dict[str, pd.Series]:
    """The completed stages' latencies with Fuxi and with IPA placing the same cluster's stages. Each series is
    labelled with the run that made it (``attrs["made by"]``), so that Lab 06's claims can read the notebook's Mesa
    run of its own seed instead of running it again (:func:`cluster_sim.stageopt.claims.claims_table`'s ``results``)."""
    out = {planner: stage_latencies(run_cluster(config, planner)) for planner in ("fuxi", "ipa")}
    for series in out.values():
        series.attrs["made by"] = ("planner_stage_latencies", config)
    return out
