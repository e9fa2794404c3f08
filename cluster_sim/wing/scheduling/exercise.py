"""Building blocks and checks for Lab 05's exercise: Wing-Agg's priority, plugged into the scheduler.

Students write ``wing_agg_priority(history, jobs) -> Series`` (one value efficiency per job of
``jobs``, indexed by job): for a recurring job, the median historical aggregate value of its
template over the median historical aggregate compute (§5); for an ad hoc job, the same over the
user's earlier ad hoc jobs. :func:`check_priority_table` compares it with
:func:`~.workload.value_efficiency` on a small history built so that each misconception gives
another answer, and names the misconception:

* **aggregate value instead of value efficiency** (the compute is left out);
* **mean instead of median** (a single very valuable run of a template pulls the mean);
* **median of ratios** (the paper divides the two medians);
* **ignoring ad hoc jobs** (no estimate from the same user's ad hoc history).

:func:`check_priority_replay` then replays a seeded run with the student's priority and reports the
value attained beside the reference's and the first scheduling decision that differs.

Example
-------
>>> from cluster_sim.wing.scheduling.workload import value_efficiency
>>> check_priority_table(value_efficiency)
'wing_agg_priority: all 6 jobs of the worked history agree with the reference'
>>> def by_value(history, jobs):                      # forgets to divide by the compute
...     return value_efficiency(history.assign(agg_compute=1.0), jobs)
>>> check_priority_table(by_value)
Traceback (most recent call last):
...
cluster_sim.checking.CheckFailed: wing_agg_priority: job 10 (template etl, recurring) got 10, expected 5: that is its median aggregate value, not its value efficiency: divide by the median aggregate compute, so a job that needs much of the cluster for its value waits behind cheaper ones
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ...checking import CheckFailed, call_student
from .config import WingConfig
from .workload import value_efficiency

#: the replay the check runs: the ci lake at the tightest capacity the lab studies
REPLAY = dict(capacity=0.2, policy="wing_agg", queues="org", seed=0)


def worked_history() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A history and the jobs to rank, chosen so each misconception gives a different answer.

    Template ``etl`` ran three times: values 10, 2, 30 on computes 5, 1, 2 (median 10 / median 2 =
    5; the mean gives 14 / 2.67 = 5.25; the median of the ratios 2, 2, 15 is 2). User ``ann``'s ad
    hoc jobs: values 4, 0, 9 on computes 2, 2, 3 (median 4 / median 2 = 2). Template ``report``
    ran once (value 1, compute 4). The jobs to rank: a run of each template, an ad hoc job of
    ``ann``, one of a user with no ad hoc history, and a run of a template new to the history.
    """
    history = pd.DataFrame({
        "job": [1, 2, 3, 4, 5, 6, 7],
        "template": ["etl", "etl", "etl", "adhoc/4", "adhoc/5", "adhoc/6", "report"],
        "kind": ["periodic"] * 3 + ["adhoc"] * 3 + ["periodic"],
        "user": ["bob", "bob", "bob", "ann", "ann", "ann", "cid"],
        "agg_value": [10.0, 2.0, 30.0, 4.0, 0.0, 9.0, 1.0],
        "agg_compute": [5.0, 1.0, 2.0, 2.0, 2.0, 3.0, 4.0],
    })
    jobs = pd.DataFrame({"job": [10, 11, 12, 13, 14, 15],
                         "template": ["etl", "report", "adhoc/12", "adhoc/13", "new", "etl"],
                         "kind": ["periodic", "periodic", "adhoc", "adhoc", "polling", "periodic"],
                         "user": ["bob", "cid", "ann", "dan", "bob", "eve"]})
    return history, jobs


def _variants(history: pd.DataFrame, jobs: pd.DataFrame) -> dict[str, pd.Series]:
    """What each misconception computes on the worked history."""
    h = history
    ratios = h.assign(agg_value=h["agg_value"] / h["agg_compute"], agg_compute=1.0)
    recurring_only = value_efficiency(h[h["kind"] != "adhoc"], jobs)
    return {
        "value": value_efficiency(h.assign(agg_compute=1.0), jobs),
        "mean": value_efficiency(h, jobs, stat="mean"),
        "ratios": value_efficiency(ratios, jobs),
        "adhoc": recurring_only,
    }


WHY = {
    "value": ("that is its median aggregate value, not its value efficiency: divide by the median aggregate compute, "
              "so a job that needs much of the cluster for its value waits behind cheaper ones"),
    "mean": ("that is the mean aggregate value over the mean aggregate compute: Wing-Agg takes medians, so one "
             "unusually valuable run of a template does not lift all its later runs"),
    "ratios": ("that is the median of each run's value / compute: the paper divides the median historical value by "
               "the median historical compute"),
    "adhoc": ("an ad hoc job has no template history: estimate it from the same user's earlier ad hoc jobs (and from "
              "all ad hoc history when the user has none)"),
}


def _student_series(student: Callable, history: pd.DataFrame, jobs: pd.DataFrame, name: str) -> pd.Series:
    got = call_student(student, history.copy(), jobs.copy(), name=name)
    if not isinstance(got, pd.Series):
        raise CheckFailed(f"{name}: return a pandas Series indexed by job (one value efficiency per row of jobs); "
                             f"got {type(got).__name__}")
    missing = pd.Index(jobs["job"]).difference(got.index)
    if len(missing):
        raise CheckFailed(f"{name}: no value for job(s) {missing.tolist()}: index the Series by jobs['job']")
    return pd.to_numeric(got.reindex(jobs["job"]), errors="coerce")


def check_priority_table(student: Callable, *, name: str = "wing_agg_priority") -> str:
    """Compare ``student(history, jobs)`` with Wing-Agg's priority on :func:`worked_history`; name the
    first job that differs and the misconception its answer matches."""
    history, jobs = worked_history()
    want = value_efficiency(history, jobs)
    got = _student_series(student, history, jobs, name)
    bad = ~np.isclose(got.to_numpy(float), want.to_numpy(float), rtol=1e-9, atol=1e-12)
    if not bad.any():
        return f"{name}: all {len(jobs)} jobs of the worked history agree with the reference"
    i = int(np.flatnonzero(bad)[0])
    row = jobs.iloc[i]
    kind = "ad hoc" if row["kind"] == "adhoc" else "recurring"
    msg = (f"{name}: job {row['job']} (template {row['template']}, {kind}) got {got.iloc[i]:.4g}, "
           f"expected {want.iloc[i]:.4g}")
    adhoc = (jobs["kind"] == "adhoc").to_numpy()
    if adhoc[i] and not bad[~adhoc].any():
        return _fail(f"{msg}: {WHY['adhoc']}")
    for cause, v in _variants(history, jobs).items():
        if np.isclose(got.iloc[i], v.iloc[i], rtol=1e-9, atol=1e-12):
            return _fail(f"{msg}: {WHY[cause]}")
    source = want.attrs["source"].iloc[i]
    hint = {"template": f"the median over template {row['template']!r}'s history jobs",
            "user": f"the median over user {row['user']!r}'s earlier ad hoc jobs",
            "fallback": f"the medians over all history jobs of its class ({kind}): nothing else is known of it"}[source]
    return _fail(f"{msg}: its value efficiency is {hint}")


def _fail(msg: str):
    raise CheckFailed(msg)


def check_priority_replay(student: Callable, *, name: str = "wing_agg_priority", config: WingConfig | None = None) -> str:
    """Replay a seeded run (the ci lake at 20% capacity) with ``student`` as Wing-Agg's priority; compare
    the value attained and the decisions with the reference's; fail on the first decision that differs."""
    from .experiments import run

    cfg = (WingConfig.ci().replace(**REPLAY) if config is None else config)
    ref = run(cfg)
    try:
        mine = run(cfg, priority=lambda h, j: call_student(student, h, j, name=name))
    except ValueError as e:
        raise CheckFailed(f"{name}: the scheduler refused your priorities: {e}") from None
    a, b = ref.admissions, mine.admissions
    n = min(len(a), len(b))
    diff = np.flatnonzero(a["job"].to_numpy()[:n] != b["job"].to_numpy()[:n])
    head = (f"{name}: value attained {mine.value_share:.1%} (reference {ref.value_share:.1%}) at "
            f"capacity {cfg.capacity:.0%}, seed {cfg.seed}")
    if len(diff) == 0 and len(a) == len(b):
        return f"{head}; all {len(a)} admissions in the reference's order"
    k = int(diff[0]) if len(diff) else n
    if k < n:
        ra, rb = a.iloc[k], b.iloc[k]
        eff = ref.jobs.set_index("job")["efficiency"]
        return _fail(f"{head}; decision {k + 1} differs: at t = {ra['time'] / 3600:.2f} h in queue {ra['queue']} the "
                     f"reference admits job {ra['job']} (efficiency {eff.get(ra['job'], float('nan')):.3g}), yours "
                     f"job {rb['job']} (efficiency {eff.get(rb['job'], float('nan')):.3g} by the reference)")
    return _fail(f"{head}; the first {n} admissions agree, then the reference admits {len(a) - n} more and yours "
                 f"{len(b) - n} more")
