"""Building blocks and checks for Lab 05's exercise: Wing-Agg's priority, plugged into the scheduler.

Students write ``wing_agg_priority(history, jobs) -> Series`` (one value efficiency per job of
``jobs``, indexed by job): for a recurring job, the median historical aggregate value of its
template over the median historical aggregate compute (§5); for an ad hoc job, the same over the
user's earlier ad hoc jobs. :func:`check_priority_table` compares it with
:func:`~.workload.value_efficiency` on a small history built so that each misconception gives
another answer, and names the misconception:

* **aggregate value instead of value efficiency** (the compute is left out);
* **mean instead of median** (a single very valuable run of a template pulls the mean);
* **ignoring ad hoc jobs** (no estimate from the same user's ad hoc history);
* **an ad hoc job estimated from all of its user's history** (the user's recurring runs included).

Two readings of "median" are accepted: §5 divides the median value by the median compute (the
library's), §6.3's wording reads as the median of each run's value / compute. A function that gives
either on every job passes, and the replay compares it with the reference of its own reading.

:func:`check_priority_replay` then replays a seeded run with the student's priority and reports the
value attained beside the reference's and the first scheduling decision that differs.

Example
-------
>>> from cluster_sim.wing.scheduling.workload import value_efficiency
>>> check_priority_table(value_efficiency)            # the library's own answer is not the student's
Traceback (most recent call last):
...
cluster_sim.checking.Delegated: wing_agg_priority calls the library's cluster_sim.wing.scheduling.workload.value_efficiency, ...
>>> def by_value(history, jobs):                      # forgets to divide by the compute
...     median = history.groupby("template")["agg_value"].median()
...     return pd.Series(median.reindex(jobs["template"]).fillna(0.0).to_numpy(), index=jobs["job"])
>>> check_priority_table(by_value)
Traceback (most recent call last):
...
cluster_sim.checking.CheckFailed: wing_agg_priority: job 10 (template etl, recurring) got 10, expected 5: that is its median aggregate value, not its value efficiency: divide by the median aggregate compute, so a job that needs much of the cluster for its value waits behind cheaper ones
  to look at it: from cluster_sim.checking import show_case; show_case('the worked history')
"""

from __future__ import annotations

from collections.abc import Callable

import math

import numpy as np
import pandas as pd

from ...checking import NOT_IMPLEMENTED, CheckFailed, call_student, name_case
from .config import WingConfig
from .workload import READINGS, value_efficiency

#: the replay the check runs: the ci lake at the tightest capacity the lab studies. Seed 1: on it the variants
#: the check must tell apart do so (means attain more than the reference, no compute less); on the lake with
#: distinct inputs (round 8) seed 0 has it the other way round, and which variant attains more is a matter of
#: the seed (on seeds 0-7 means beat the reference on 3, no compute on 3)
REPLAY = dict(capacity=0.2, policy="wing_agg", queues="org", seed=1)


def worked_history() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A history and the jobs to rank, chosen so each misconception gives a different answer.

    Template ``etl`` ran three times: values 10, 2, 30 on computes 5, 1, 2 (median 10 / median 2 =
    5; the mean gives 14 / 2.67 = 5.25; the median of the ratios 2, 2, 15 is 2). User ``ann``'s ad
    hoc jobs: values 4, 0, 9 on computes 2, 2, 3 (median 4 / median 2 = 2; with her recurring run
    of ``daily``, value 40 on compute 1, all her history gives 6.5 / 2 = 3.25). Template ``report``
    ran once (value 1, compute 4). The jobs to rank: a run of each template, an ad hoc job of
    ``ann``, one of a user with no ad hoc history, and a run of a template new to the history.
    """
    history = pd.DataFrame({
        "job": [1, 2, 3, 4, 5, 6, 7, 8],
        "template": ["etl", "etl", "etl", "adhoc/4", "adhoc/5", "adhoc/6", "report", "daily"],
        "kind": ["periodic"] * 3 + ["adhoc"] * 3 + ["periodic"] * 2,
        "user": ["bob", "bob", "bob", "ann", "ann", "ann", "cid", "ann"],
        "agg_value": [10.0, 2.0, 30.0, 4.0, 0.0, 9.0, 1.0, 40.0],
        "agg_compute": [5.0, 1.0, 2.0, 2.0, 2.0, 3.0, 4.0, 1.0],
    })
    jobs = pd.DataFrame({"job": [10, 11, 12, 13, 14, 15],
                         "template": ["etl", "report", "adhoc/12", "adhoc/13", "new", "etl"],
                         "kind": ["periodic", "periodic", "adhoc", "adhoc", "polling", "periodic"],
                         "user": ["bob", "cid", "ann", "dan", "bob", "eve"]})
    return history, jobs


def _variants(history: pd.DataFrame, jobs: pd.DataFrame) -> dict[str, pd.Series]:
    """What each misconception computes on the worked history."""
    h = history
    return {
        "value": value_efficiency(h.assign(agg_compute=1.0), jobs),
        "mean": value_efficiency(h, jobs, stat="mean"),
        # every history job of the user counts (a question about ad hoc jobs only: NaN for the others)
        "user_all": value_efficiency(h.assign(kind="adhoc"), jobs).where((jobs["kind"] == "adhoc").to_numpy()),
        "adhoc": value_efficiency(h[h["kind"] != "adhoc"], jobs),
    }


WHY = {
    "value": ("that is its median aggregate value, not its value efficiency: divide by the median aggregate compute, "
              "so a job that needs much of the cluster for its value waits behind cheaper ones"),
    "mean": ("that is the mean aggregate value over the mean aggregate compute: Wing-Agg takes medians, so one "
             "unusually valuable run of a template does not lift all its later runs"),
    "user_all": ("that estimate uses all of the user's history, her recurring runs included: an ad hoc job is "
                 "estimated from the same user's earlier ad hoc jobs only, because a recurring run's value belongs "
                 "to its template (a daily report read by many is no guide to the user's one-off queries)"),
    "adhoc": ("an ad hoc job has no template history: estimate it from the same user's earlier ad hoc jobs (and from "
              "all ad hoc history when the user has none)"),
}
#: what a passing function is told about the reading of "median" it used
READING_NOTE = {
    "ratio_of_medians": "the median value over the median compute (§5's reading, the library's)",
    "median_of_ratios": ("the median of each run's value / compute (§6.3's wording; §5 and the library divide the "
                         "medians: both readings are accepted)"),
}


def reading_of(student: Callable, *, name: str = "wing_agg_priority") -> str | None:
    """Which reading of "median" ``student`` computes on every job of :func:`worked_history`, or None."""
    history, jobs = worked_history()
    got = _student_series(student, history, jobs, name)
    for reading in READINGS:
        want = value_efficiency(history, jobs, reading=reading)
        if np.allclose(got.to_numpy(float), want.to_numpy(float), rtol=1e-9, atol=1e-12):
            return reading
    return None


def _student_series(student: Callable, history: pd.DataFrame, jobs: pd.DataFrame, name: str) -> pd.Series:
    got = call_student(student, history.copy(), jobs.copy(), name=name, forbid=value_efficiency)
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
    reading = reading_of(student, name=name)
    if reading is not None:
        return f"{name}: all {len(jobs)} jobs of the worked history agree with {READING_NOTE[reading]}"
    bad = ~np.isclose(got.to_numpy(float), want.to_numpy(float), rtol=1e-9, atol=1e-12)
    i = int(np.flatnonzero(bad)[0])
    row = jobs.iloc[i]
    kind = "ad hoc" if row["kind"] == "adhoc" else "recurring"
    msg = (f"{name}: job {row['job']} (template {row['template']}, {kind}) got {got.iloc[i]:.4g}, "
           f"expected {want.iloc[i]:.4g}")
    look = name_case("the worked history", {"history": history, "jobs": jobs})
    for cause, v in _variants(history, jobs).items():
        if np.isclose(got.iloc[i], v.iloc[i], rtol=1e-9, atol=1e-12):
            return _fail(f"{msg}: {WHY[cause]}" + look)
    adhoc = (jobs["kind"] == "adhoc").to_numpy()
    if adhoc[i] and not bad[~adhoc].any():
        return _fail(f"{msg}: {WHY['adhoc']}" + look)
    source = want.attrs["source"].iloc[i]
    hint = {"template": f"the median over template {row['template']!r}'s history jobs",
            "user": f"the median over user {row['user']!r}'s earlier ad hoc jobs",
            "fallback": f"the medians over all history jobs of its class ({kind}): nothing else is known of it"}[source]
    return _fail(f"{msg}: its value efficiency is {hint}" + look)


def _fail(msg: str):
    raise CheckFailed(msg)


def check_priority_replay(student: Callable, *, name: str = "wing_agg_priority", config: WingConfig | None = None) -> str:
    """Replay a seeded run (the ci lake at 20% capacity) with ``student`` as Wing-Agg's priority; compare
    the value attained and the decisions with the reference's.

    The same decisions pass. Different decisions that attain at least the reference's value pass too, with a
    message saying so: a defensible variant of the priority (means instead of medians attain 57.8% here against
    the reference's 56.4%), whose formula :func:`check_priority_table` grades, so one mistake costs one check.
    Less value fails on the first decision that differs."""
    from .experiments import run

    cfg = (WingConfig.ci().replace(**REPLAY) if config is None else config)
    reading = reading_of(student, name=name) or READINGS[0]  # the reference of the student's reading of "median"
    ref = run(cfg) if reading == READINGS[0] else run(cfg, priority=lambda h, j: value_efficiency(h, j, reading=reading))
    try:
        mine = run(cfg, priority=lambda h, j: call_student(student, h, j, name=name, forbid=value_efficiency))
    except ValueError as e:
        raise CheckFailed(f"{name}: the scheduler refused your priorities: {e}") from None
    a, b = ref.admissions, mine.admissions
    n = min(len(a), len(b))
    diff = np.flatnonzero(a["job"].to_numpy()[:n] != b["job"].to_numpy()[:n])
    head = (f"{name}: value attained {mine.value_share:.1%} (reference {ref.value_share:.1%}"
            f"{'' if reading == READINGS[0] else ', median of ratios'}) at capacity {cfg.capacity:.0%}, seed {cfg.seed}")
    if len(diff) == 0 and len(a) == len(b):
        return f"{head}; all {len(a)} admissions in the reference's order"
    k = int(diff[0]) if len(diff) else n
    if mine.value_share >= ref.value_share:
        return (f"{head}; your decisions differ from the reference's from decision {k + 1} on, but your policy attains "
                f"at least the reference's value: a defensible variant of Wing-Agg (the table check grades the formula)")
    if k < n:
        ra, rb = a.iloc[k], b.iloc[k]
        eff = ref.jobs.set_index("job")["efficiency"]
        return _fail(f"{head}; decision {k + 1} differs: at t = {ra['time'] / 3600:.2f} h in queue {ra['queue']} the "
                     f"reference admits job {ra['job']} (efficiency {eff.get(ra['job'], float('nan')):.3g}), yours "
                     f"job {rb['job']} (efficiency {eff.get(rb['job'], float('nan')):.3g} by the reference)")
    return _fail(f"{head}; the first {n} admissions agree, then the reference admits {len(a) - n} more and yours "
                 f"{len(b) - n} more")


# ---- §1's inversion by hand -----------------------------------------------------------------------------------------
#: §1's three jobs: (containers, minutes, downloads); C reads A's output, so A's aggregates include all of C's
INVERSION_JOBS = {"A": (2, 30, 0), "B": (2, 60, 1), "C": (1, 10, 5)}


def inversion_efficiencies() -> dict[str, float]:
    """Each job's aggregate value efficiency in §1's inversion (downloads per container-second): A's aggregate value
    is its own 0 plus C's 5 (C reads only A: weight 1), its aggregate compute 2 x 1,800 + 1 x 600 = 4,200.

    >>> {j: round(e, 6) for j, e in inversion_efficiencies().items()}
    {'A': 0.00119, 'B': 0.000139, 'C': 0.008333}
    """
    compute = {j: c * m * 60.0 for j, (c, m, _) in INVERSION_JOBS.items()}
    k = {j: float(d) for j, (_, _, d) in INVERSION_JOBS.items()}
    return {"A": (k["A"] + k["C"]) / (compute["A"] + compute["C"]), "B": k["B"] / compute["B"], "C": k["C"] / compute["C"]}


def _inversion_wrong() -> dict[str, tuple[dict[str, float], str]]:
    """Each misconception's numbers for A and B, and why it is wrong."""
    a_own, c_own = 2 * 1800.0, 600.0
    return {
        "job-local": ({"A": 0.0}, "that is A's job-local efficiency (its own downloads: none); its aggregate value "
                      "adds the 5 downloads of C, which cannot run without A's output"),
        "own compute": ({"A": 5 / a_own}, "that divides A's aggregate value by A's own compute only: the aggregate "
                        "compute adds C's 600 container-seconds too, because running A is worth C's downloads only "
                        "if C runs as well"),
        "minutes": ({"A": 5 / (2 * 30 + 10), "B": 1 / (2 * 60)}, "that counts compute in container-minutes: the "
                    "lab's unit is container-seconds (containers x seconds)"),
        "containers": ({"A": 5 / (1800 + 600), "B": 1 / 3600}, "that leaves out the containers: compute is "
                       "containers x run time, and A and B each hold 2 containers"),
        "value": ({"A": 5.0, "B": 1.0}, "that is the aggregate value, not its efficiency: divide by the aggregate "
                  "compute"),
    }


def check_inversion_efficiencies(eff, *, name: str = "efficiencies") -> str:
    """Compare a student's ``{"A": ..., "B": ..., "C": ...}`` (downloads per container-second) with
    :func:`inversion_efficiencies`, naming the misconception a wrong number matches."""
    if not isinstance(eff, dict) or set(eff) != {"A", "B", "C"}:
        raise CheckFailed(f"{name}: give a dict with keys 'A', 'B', 'C' (one efficiency per job); got {eff!r}")
    if all(v is None for v in eff.values()):  # the exercise's unsolved cell (its stub stops before any number)
        raise CheckFailed(f"{name} {NOT_IMPLEMENTED}")
    want = inversion_efficiencies()
    for job in ("A", "B", "C"):
        got = eff[job]
        if got is None or not isinstance(got, (int, float, np.floating)):
            raise CheckFailed(f"{name}: {job}'s efficiency is {got!r}; give a number (downloads per container-second)")
        if np.isclose(got, want[job], rtol=1e-3, atol=0):
            continue
        msg = f"{name}: {job} has {float(got):.6g}, expected {want[job]:.6g} downloads per container-second"
        for numbers, why in _inversion_wrong().values():
            if job in numbers and np.isclose(got, numbers[job], rtol=1e-3, atol=1e-12):
                raise CheckFailed(f"{msg}: {why}")
        raise CheckFailed(f"{msg}: aggregate value (own downloads plus those of every job that reads it, by Owl's "
                             "weights) over aggregate compute (the same sum over containers x seconds)")
    return (f"{name}: A {want['A']:.6g}, B {want['B']:.6g}, C {want['C']:.6g} downloads per container-second: "
            f"Wing-Agg serves A before B (A's is {want['A'] / want['B']:.1f} times B's)")


# ---- a case where Wing-Agg loses (§1's three jobs, changed) --------------------------------------------------------
#: §1's three jobs as knobs (minutes, downloads, priorities), and the history Wing-Agg predicts A's and B's aggregate
#: value efficiency from: (aggregate value in downloads, aggregate compute in container-seconds) of earlier runs of
#: their templates. In §1 the history is what this run does (A's 5 downloads behind it through C, over 3,600 + 600)
SECTION1_CASE = {
    "A_minutes": 30, "B_minutes": 60, "C_minutes": 10,
    "A_priority": 1, "B_priority": 9, "C_priority": 5,
    "B_downloads": 1, "B_download_at": 180,
    "C_comes": True, "C_arrives": 45, "C_downloads": 5, "C_download_at": 300,
    "history_A": [(5, 4200), (5, 4200), (5, 4200)],
    "history_B": [(1, 7200), (1, 7200), (1, 7200)],
}
#: containers each job holds (fixed: A and B do not fit together on the machine's 3)
CONTAINERS = {"A": 2, "B": 2, "C": 1}
MINUTE = 60.0


def section1_case() -> dict:
    """A fresh copy of §1's case (:data:`SECTION1_CASE`), to change."""
    return {k: (list(v) if isinstance(v, list) else v) for k, v in SECTION1_CASE.items()}


def _check_case(case) -> dict:
    """``case`` validated: the keys of :data:`SECTION1_CASE`, each in its range (ValueError naming the first bad one)."""
    from ...validate import number, whole_number

    if not isinstance(case, dict):
        raise ValueError(f"case is {type(case).__name__}; allowed: a dict like section1_case(), with keys "
                         f"{', '.join(SECTION1_CASE)}")
    unknown, missing = sorted(set(case) - set(SECTION1_CASE)), [k for k in SECTION1_CASE if k not in case]
    if unknown or missing:
        raise ValueError(f"case has unknown key(s) {unknown} and lacks {missing}; allowed: exactly the keys of "
                         "section1_case()")
    out = {}
    for key, value in case.items():
        if key.endswith(("_minutes", "_arrives", "_download_at")):
            out[key] = number(value, f"case[{key!r}]", lo=0, lo_open=key.endswith("_minutes"))
        elif key.endswith(("_priority", "_downloads")):
            out[key] = whole_number(value, f"case[{key!r}]", lo=0)
        elif key == "C_comes":
            if not isinstance(value, bool):
                raise ValueError(f"case['C_comes']={value!r} is not allowed: need True or False")
            out[key] = value
        else:  # a history: (aggregate value, aggregate compute) per earlier run
            try:
                pairs = [(v, c) for v, c in value]
            except (TypeError, ValueError):
                raise ValueError(f"case[{key!r}]={value!r} is not allowed: need a list of (aggregate value, aggregate "
                                 "compute) pairs, one per earlier run") from None
            if not pairs:
                raise ValueError(f"case[{key!r}] is empty: give at least one earlier run")
            runs = [(number(v, f"case[{key!r}][{i}] value", lo=0),
                     number(c, f"case[{key!r}][{i}] compute", lo=0, lo_open=True)) for i, (v, c) in enumerate(pairs)]
            out[key] = runs
    return out


def predicted_efficiencies(case: dict, reading: str = "ratio_of_medians") -> dict[str, float]:
    """Wing-Agg's keys for ``case``: A's and B's aggregate value efficiency predicted from their history (``reading``:
    either reading of "median", :func:`~.workload.value_efficiency`), C's its own downloads per container-second (it
    has nothing downstream). Downloads per container-second."""
    case = _check_case(case)
    rows = [(t, v, c) for t in ("A", "B") for v, c in case[f"history_{t}"]]
    history = pd.DataFrame({"job": range(len(rows)), "template": [r[0] for r in rows], "kind": "periodic",
                            "user": "u", "agg_value": [r[1] for r in rows], "agg_compute": [r[2] for r in rows]})
    jobs = pd.DataFrame({"job": [1, 2], "template": ["A", "B"], "kind": "periodic", "user": "u"})
    eff = value_efficiency(history, jobs, reading=reading)
    return {"A": float(eff[1]), "B": float(eff[2]),
            "C": case["C_downloads"] / (CONTAINERS["C"] * case["C_minutes"] * MINUTE)}


def true_efficiencies(case: dict) -> dict[str, float]:
    """This run's aggregate value efficiencies (what an Oracle ranks by): A's counts C only if C comes."""
    case = _check_case(case)
    compute = {j: CONTAINERS[j] * case[f"{j}_minutes"] * MINUTE for j in CONTAINERS}
    c_value, c_compute = (case["C_downloads"], compute["C"]) if case["C_comes"] else (0, 0.0)
    return {"A": c_value / (compute["A"] + c_compute), "B": case["B_downloads"] / compute["B"],
            "C": case["C_downloads"] / compute["C"]}


def case_run(case: dict, policy: str, reading: str = "ratio_of_medians") -> pd.DataFrame:
    """``case`` on one machine of 3 containers under ``policy``: "prio" (user priority), "wing_agg" (the efficiencies
    predicted from history, :func:`predicted_efficiencies`) or "oracle" (this run's, :func:`true_efficiencies`). One
    row per job: start and finish (min), state and the value it earns (downloads after it completes)."""
    from ...engine import ClusterConfig, Job, QueueSpec, Stage, Task
    from .model import WingModel
    from .workload import value_attained

    case = _check_case(case)
    if policy not in ("prio", "wing_agg", "oracle"):
        raise ValueError(f"policy={policy!r} is not allowed: choose 'prio', 'wing_agg' or 'oracle'")
    ids = {"A": 1, "B": 2, "C": 3}
    names = {i: n for n, i in ids.items()}
    eff = {"prio": None, "wing_agg": lambda: predicted_efficiencies(case, reading),
           "oracle": lambda: true_efficiencies(case)}[policy]
    eff = eff() if eff else None
    present = ["A", "B"] + (["C"] if case["C_comes"] else [])
    jobs = []
    for n in present:
        arrival = case["C_arrives"] * MINUTE if n == "C" else 0.0
        job = Job(id=ids[n], arrival=arrival, queue="q", gang=CONTAINERS[n], priority=case[f"{n}_priority"])
        job.stages.append(Stage(0, [Task(10 * ids[n] + m, job, 0, (1, 1), case[f"{n}_minutes"] * MINUTE)
                                    for m in range(CONTAINERS[n])]))
        jobs.append(job)
    downloads = pd.DataFrame({"job": [2] * case["B_downloads"] + ([3] * case["C_downloads"] if case["C_comes"] else []),
                              "time": [case["B_download_at"] * MINUTE] * case["B_downloads"]
                              + ([case["C_download_at"] * MINUTE] * case["C_downloads"] if case["C_comes"] else [])},
                             dtype=float).astype({"job": int})
    order = "priority" if eff is None else (lambda job: -eff[names[job.id]])
    horizon = MINUTE * (10 + max(case["B_download_at"], case["C_download_at"], case["C_arrives"])
                        + sum(case[f"{n}_minutes"] for n in CONTAINERS))
    cfg = ClusterConfig(machines=1, cpu_per_machine=3, mem_per_machine=3, placement="first_fit", horizon=horizon)
    model = WingModel(cfg, [QueueSpec("q", order=order, backfill=False)], jobs,
                      needs={3: [1]} if case["C_comes"] else {}, check_every_event=True)
    model.run_until(horizon)
    model.check_invariants()
    finish = pd.Series({j.id: j.finish for j in jobs})
    value = value_attained(downloads, finish).reindex([ids[n] for n in present], fill_value=0.0)
    return pd.DataFrame({"job": present, "start (min)": [j.first_start / MINUTE for j in jobs],
                         "finish (min)": [j.finish / MINUTE for j in jobs],
                         "state": ["failed" if j.failed else ("completed" if not math.isnan(j.finish) else "pending")
                                   for j in jobs],
                         "value": value.to_numpy()}).set_index("job")


#: why a case where Wing-Agg does not lose misses, by the misconception it shows
LOSS_WHY = {
    "sjf": ("you changed only run times, as if value efficiency were shortest-job-first. It is not (the paper's "
            "footnote 10): it is value per container-second, and a job nobody needs ranks last however short. Longer "
            "or shorter jobs move the efficiencies, and at most make Wing-Agg run B first as PRIO does: a tie. "
            "Wing-Agg loses only when its ranking puts A first and that costs value: a prediction this run breaks, "
            "or value lost by waiting"),
    "priority": ("you changed only user priorities: they reorder PRIO, not what a job is worth, and Wing-Agg never "
                 "reads them. The best a change of priority does is make PRIO run A first too: a tie"),
    "forgiven": ("Wing-Agg was misled (its history predicts an order this run's true values do not give), but the delay "
                 "cost nothing: B's download comes after B finishes even when it waits. The paper's value model "
                 "forgives a delay no user sees; a loss needs value that waiting loses (a download due before B "
                 "would finish)"),
    "same_order": ("Wing-Agg and PRIO run the jobs in the same order here, so they earn the same: a loss needs "
                   "Wing-Agg to put A before B where B's value is lost by waiting"),
}


def _values(case: dict) -> dict[str, float]:
    out = {"prio": case_run(case, "prio")["value"].sum(), "oracle": case_run(case, "oracle")["value"].sum()}
    for r in READINGS:
        out[r] = case_run(case, "wing_agg", reading=r)["value"].sum()
    return {k: float(v) for k, v in out.items()}


def check_agg_loses(case, *, name: str = "case") -> str:
    """Grade a student's case where Wing-Agg attains less value than PRIO: it passes if Wing-Agg loses under either
    reading of "median" (:data:`~.workload.READINGS`), and says which input misled it (the prediction, or the
    ranking itself) and whether the readings clash; a case where it does not lose fails, naming the misconception
    it matches (:data:`LOSS_WHY`)."""
    if case is None:
        raise CheckFailed(f"{name} {NOT_IMPLEMENTED}: start from section1_case() and change it")
    case = _check_case(case)
    if case == _check_case(SECTION1_CASE):
        raise CheckFailed(f"{name} {NOT_IMPLEMENTED}: it is still §1's case, where Wing-Agg attains 6 and PRIO 1")
    v = _values(case)
    shown = (f"Wing-Agg attains {v['ratio_of_medians']:g} (ratio of medians) and {v['median_of_ratios']:g} (median "
             f"of ratios), PRIO {v['prio']:g}, an Oracle ranking by this run's true values {v['oracle']:g}")
    loses = [r for r in READINGS if v[r] < v["prio"]]
    if loses:
        if v["oracle"] < v["prio"]:
            cause = ("even ranked by this run's true values Wing-Agg's order loses: value per container-second does not "
                     "see *when* the value comes (a download due before a job that waits can finish), so the greedy "
                     "ranking itself misled it")
        else:
            cause = ("ranked by this run's true values it would not lose: its prediction from history misled it (the "
                     "prediction error §7.2 studies)")
        clash = ("" if len(loses) == 2 else
                 f"; only under the {loses[0].replace('_', ' ')} reading: the two readings of \"median\" clash on this "
                 "history (the ratio of medians mixes the value of one run with the compute of another)")
        return f"{name}: Wing-Agg loses. {shown}: {cause}{clash}"
    base = _check_case(SECTION1_CASE)
    changed = {k for k in case if case[k] != base[k]}
    pred, true = predicted_efficiencies(case), true_efficiencies(case)
    if changed <= {"A_minutes", "B_minutes", "C_minutes"}:
        why = LOSS_WHY["sjf"]
    elif changed <= {"A_priority", "B_priority", "C_priority"}:
        why = LOSS_WHY["priority"]
    elif (pred["A"] > pred["B"]) != (true["A"] > true["B"]):
        why = LOSS_WHY["forgiven"]
    elif all(case_run(case, "prio")["start (min)"].equals(case_run(case, "wing_agg", reading=r)["start (min)"])
             for r in READINGS):
        why = LOSS_WHY["same_order"]
    else:
        why = ("Wing-Agg puts A first and loses nothing by it: make B's value depend on finishing early, or C's value "
               "smaller than Wing-Agg expects")
    raise CheckFailed(f"{name}: Wing-Agg does not lose. {shown}: {why}")
