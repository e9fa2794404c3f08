"""Lab 03's result of one simulated cycle (:class:`MorpheusResult`), how it is collected from the model
(:func:`collect`) and the one row every Lab 03 sweep keeps of it (:func:`sweep_row`).

Split from :mod:`.simulation`, which builds and runs the cycle and re-exports these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .config import MorpheusConfig
from .model import ADHOC, MorpheusModel
from .periodic import Run
from .plan import ReservationPlan

#: the arms whose runs are placed by a LowCost plan (a refused template keeps its user's count)
PLAN_ARMS = ("packing_only", "morpheus", "morpheus_dra")


@dataclass(eq=False)
class MorpheusResult:
    """One simulated cycle: SLO violations, utilisation, what was provisioned and what DRA decided."""

    config: MorpheusConfig
    slo_violation_rate: float  # worst case: runs finishing after period start + d_j (or never)
    utilisation: float  # allocated containers / cluster containers, time average over the run
    periodic_utilisation: float  # periodic containers used / provisioned to periodic jobs (Fig. 9d)
    reserved_share: float  # share of the cluster held for periodic jobs (not guaranteed to ad hoc ones), time average
    runs: pd.DataFrame  # one row per periodic run
    decisions: pd.DataFrame  # DRA's evaluations (empty without reprovisioning)
    refused: list  # templates the plan could not place (they kept their users' counts)
    plan: ReservationPlan | None
    workload: "Workload"  # .simulation.Workload: the templates, history and contracts this cycle ran
    series: dict  # name -> (times, values): "provisioned", "periodic", "adhoc" containers over time
    focus: dict  # the held-back run: its template, times and its queue's capacity and use over time
    tasks: int
    end: float
    seconds: float
    above_reservation: float = 0.0  # share of the periodic runs' container-time held above their reservation

    @property
    def seed(self) -> int:
        return self.config.seed

    @property
    def arm(self) -> str:
        return self.config.arm

    @property
    def attainment(self) -> float:
        return 1.0 - self.slo_violation_rate

    @property
    def violations(self) -> int:
        """Runs that finished after their deadline (or never)."""
        return int(self.runs.violated.sum())

    @property
    def grants(self) -> int:
        """DRA's evaluations that granted extra containers."""
        return int((self.decisions.granted > 0).sum()) if len(self.decisions) else 0

    def summary(self) -> dict:
        return dict(arm=self.arm, machines=self.config.machines, seed=self.seed, runs=len(self.runs),
                    violations=self.violations, slo_violation_rate=self.slo_violation_rate,
                    utilisation=self.utilisation, periodic_utilisation=self.periodic_utilisation,
                    reserved_share=self.reserved_share, refused=len(self.refused), grants=self.grants)


def _integral(times, values, end: float) -> float:
    t = np.append(np.asarray(times, float), end)
    return float(np.sum(np.asarray(values, float) * np.diff(t)))


def _above(usage, capacity_log, end: float) -> float:
    """Container-seconds a queue held above its capacity (opportunistic use: tasks kept running after the
    reservation shrank), from its usage steps and its capacity log."""
    ut, uv = usage
    ct = np.array([t for t, _ in capacity_log], float)
    cv = np.array([c for _, c in capacity_log], float)
    times = np.union1d(np.union1d(ut, ct), [end])
    times = times[times <= end]
    u = uv[np.searchsorted(ut, times, side="right") - 1] if len(ut) else np.zeros_like(times)
    c = cv[np.searchsorted(ct, times, side="right") - 1]
    u = np.where(np.searchsorted(ut, times, side="right") > 0, u, 0.0)
    return float(np.sum(np.clip(u - c, 0, None)[:-1] * np.diff(times)))


def collect(model: MorpheusModel, config, w: Workload, plan, refused, end: float, seconds: float) -> MorpheusResult:
    rows = []
    for job in model.jobs:
        run = job.tag
        if not isinstance(run, Run):
            continue
        name = run.template.name
        deadline = run.period_start + w.deadline(name)
        finish = job.finish
        done = not math.isnan(finish)
        rows.append(dict(template=name, instance=run.instance, period=run.template.period,
                         period_start=run.period_start, submit=run.submit_time, first_start=job.first_start,
                         finish=finish, deadline=deadline, violated=(not done) or finish > deadline + 1e-6,
                         late_by=(finish - deadline) if done else math.inf, held_back=run.late_start > 0,
                         input_delayed=run.input_delayed, straggled=run.straggled, tasks=job.n_tasks,
                         planned=name not in refused and config.arm in PLAN_ARMS))
    runs = pd.DataFrame(rows)
    C = model.total
    q = model.scheduler.queues
    periodic_used = sum(q[n].usage.total(end) for n in model.names)
    provisioned_total = 0.0
    events: dict[float, float] = {}
    for name, log in model.capacity_log.items():
        for (t, c), (_, prev) in zip(log[1:], log[:-1]):
            events[t] = events.get(t, 0.0) + c - prev
        times = [t for t, _ in log]
        provisioned_total += _integral(times, [c for _, c in log], end)
    ts = np.array(sorted(events))
    provisioned = (ts, np.cumsum([events[t] for t in ts])) if ts.size else (np.zeros(1), np.zeros(1))
    # The queues' counts are promises: users' counts (kept by the jobs a plan refuses too) come once per active
    # run and may add up to more than the cluster, which the queues then share in fair order. What the cluster
    # holds back for periodic jobs is what the ad hoc queue is not guaranteed: min(promised, C) at each moment.
    reserved_total = _integral(provisioned[0], np.minimum(provisioned[1], C), end)
    series = {"provisioned": provisioned}
    periodic_steps = {}
    for name in model.names:
        periodic_steps[name] = q[name].usage.steps()
    series["adhoc"] = q[ADHOC].usage.steps()
    series["used"] = model.csv.usage[0].steps()
    focus = {}
    if w.late is not None:
        name = w.late.template.name
        row = runs[(runs.template == name) & runs.held_back].iloc[0]
        fq = model.queue_of(w.late)
        focus = dict(template=name, queue=fq, run=row.to_dict(), capacity=model.capacity_log[fq],
                     usage=periodic_steps[fq],
                     contract=w.contracts.get(name))
    above = sum(_above(periodic_steps[n], model.capacity_log[n], end) for n in model.names)
    decisions = pd.DataFrame(model.reprovisioner.decisions if model.reprovisioner else [],
                             columns=["time", "job", "demand", "reserved", "recent_max", "asked", "cap", "room",
                                      "granted", "reason"])
    return MorpheusResult(
        config=config, slo_violation_rate=float(runs.violated.mean()) if len(runs) else 0.0,
        utilisation=float(model.csv.usage[0].total(end) / (C * end)),
        periodic_utilisation=float(periodic_used / provisioned_total) if provisioned_total > 0 else 0.0,
        reserved_share=float(reserved_total / (C * end)), runs=runs, decisions=decisions, refused=refused,
        plan=plan, workload=w, series=series, focus=focus,
        above_reservation=float(above / periodic_used) if periodic_used > 0 else 0.0,
        tasks=sum(j.n_tasks for j in model.jobs), end=end, seconds=seconds)


def sweep_row(result: MorpheusResult) -> dict:
    """A sweep point's row, one for every sweep of Lab 03 (:func:`compare`, :func:`attainment`, the claims and
    :func:`~.rescue.rescue_rate`): what each pools over seeds. One row function gives one cache key per (config,
    seed), so a cycle one sweep simulated is read back by the next from :func:`cluster_sim.sweep.run_grid`'s cache
    instead of simulated again (at ``paper`` a cycle is tens of CPU seconds). ``trace_violation_rate`` leaves
    out the run held back on purpose (§9.2 measures the trace; that run is §9.3's Fig. 12); ``held_back_met``
    says whether it met its deadline (False when the cycle has none)."""
    runs = len(result.runs)
    trace = result.runs[~result.runs.held_back]
    held = result.runs[result.runs.held_back]
    return dict(runs=runs, violations=result.violations, violation_rate=result.violations / runs if runs else 0.0,
                trace_violation_rate=float(trace.violated.mean()) if len(trace) else 0.0,
                utilisation=result.utilisation, reserved_share=result.reserved_share,
                periodic_utilisation=result.periodic_utilisation, refused=len(result.refused), grants=result.grants,
                above_reservation=result.above_reservation,
                held_back_met=bool(len(held)) and not bool(held.violated.iloc[0]))


#: the name the sweeps used before every Lab 03 sweep shared :func:`sweep_row`
pooled_counts = sweep_row
