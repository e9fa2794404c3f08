"""Seeded packing cases for the exercise: replay LowCost with a student's building blocks and name
the first job and stage whose allocation differs from the reference.

A :class:`PackingCase` is a small plan (one resource, one hour of minutes) with a few rigid
*background* reservations (placed earliest-first, so the costs are uneven) and a sequence of
periodic jobs to pack. :func:`replay` places the jobs in order with
:func:`~cluster_sim.morpheus.packing.lowcost.lowcost_reference` and the given ``split``
(:func:`~cluster_sim.morpheus.packing.stages.stage_interval`) and ``place``
(:func:`~cluster_sim.morpheus.packing.stages.place_stage_gangs`); :func:`check_packing` compares a
student's replay with the library's; at the first job that differs it follows the reference LowCost
through that job's window and calls the student's functions on the very same inputs
(:func:`diagnose`), so the ``AssertionError`` names the job, the end point, the stage and the call
whose answer differs, with both answers.

The cases are built so that the misconceptions the exercise teaches against change the answer:
sharing the window over the *total* rather than the *remaining* demand, allocating *forward* in
time, and leaving *holes* (each is shown by a test).

Example
-------
>>> case = exercise_cases(seed=0)[0]
>>> len(case.jobs) > 0 and case.horizon == 60
True
>>> check_packing(stage_interval, place_stage_gangs, seeds=(0,))
'LowCost with your stage_interval and place_stage_gangs: all 4 cases (24 jobs) agree with the reference'
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ...checking import CheckFailed, call_student
from ...memo import remembered
from .jobs import PeriodicJob
from .lowcost import lowcost_reference
from .stages import place_stage_gangs, stage_interval
from .plan import ReservationPlan

__all__ = ["PackingCase", "exercise_cases", "replay", "first_difference", "diagnose", "check_packing", "folded_load",
           "folded_cases", "check_folded_load"]


@dataclass(frozen=True)
class PackingCase:
    """A plan (``capacity`` containers, ``horizon`` steps), its rigid background and the jobs to pack."""

    capacity: int
    horizon: int
    background: tuple
    jobs: tuple
    name: str = ""


def exercise_cases(seed: int = 0, n_cases: int = 4, jobs_per_case: int = 6) -> list[PackingCase]:
    """Seeded cases: periods dividing the hour, 2-5 stages of 1-6 containers, windows with slack,
    gangs of 1-3, over a background of rigid reservations."""
    rng = np.random.default_rng(seed)
    H = 60
    cases = []
    for c in range(n_cases):
        cap = int(rng.integers(8, 13))
        background = []
        for _ in range(int(rng.integers(2, 5))):
            P = int(rng.choice([20, 30, 60]))
            K = int(rng.integers(1, 4))
            a = int(rng.integers(0, P - K + 1))
            background.append(PeriodicJob(P, a, min(a + K + 2, a + P), rng.integers(2, 5, size=K).tolist()))
        jobs = []
        for i in range(jobs_per_case):
            P = int(rng.choice([15, 20, 30, 60]))
            K = int(rng.integers(2, 6))
            W = int(rng.integers(K + 2, min(P, 3 * K + 6) + 1))
            a = int(rng.integers(0, P - W + 1))
            demands = rng.integers(1, 7, size=K).tolist()
            gang = rng.integers(1, 4, size=K).tolist()
            jobs.append(PeriodicJob(P, a, a + W, demands, gang=gang, name=f"job {i}"))
        cases.append(PackingCase(cap, H, tuple(background), tuple(jobs), name=f"seed {seed}, case {c}"))
    return cases


def replay(case: PackingCase, split: Callable = stage_interval, place: Callable = place_stage_gangs) -> list:
    """Place the case's jobs in order with LowCost built from ``split`` and ``place``.

    Returns one entry per job: ``None`` when it was refused, else a list over stages of
    ``(first plan step, containers per step)`` of its first instance.
    """
    if split is stage_interval and place is place_stage_gangs:
        return _expected(case)[0]
    return _replay(case, split, place)[0]


def _replay(case: PackingCase, split: Callable, place: Callable) -> tuple[list, list]:
    plan = ReservationPlan(case.capacity, case.horizon)
    for b in case.background:
        if plan.place(b, method="greedy") is None:
            raise ValueError(f"{case.name}: the background reservation {b!r} does not fit")
    seen = []

    def solver(L, C, z, job):
        seen.append((L.copy(), C.copy(), z.copy()))  # the job's folded window, for the diagnosis
        return lowcost_reference(L, C, z, job.demands, job.gangs, job.alignment, split=split, place=place,
                                 max_end_points=plan.max_end_points)

    out, windows = [], []
    for job in case.jobs:
        alloc = plan.place(job, method=solver)
        windows.append(seen[-1])
        if alloc is None:
            out.append(None)
            continue
        stages = []
        for k in range(len(job.demands)):
            start, cont = alloc.stage(k)
            stages.append((start, cont.tolist()))
        out.append(stages)
    return out, windows


def _head(case: PackingCase, i: int) -> str:
    job = case.jobs[i]
    return (f"{case.name}, {job.name or f'job {i}'} (period {job.period}, window [{job.a}, {job.d}), "
            f"demands {list(job.demands)}, gangs {list(job.gangs)})")


def _show(stage) -> str:
    start, cont = stage
    return f"steps {start}..{start + len(cont) - 1}: {cont}" if cont else "no steps"


def first_difference(yours: Sequence, expected: Sequence, case: PackingCase) -> str | None:
    """``None`` when two replays agree, else a message naming the first job and stage that differ
    (stages in LowCost's order, the last stage first)."""
    for i, (a, b) in enumerate(zip(yours, expected)):
        if a == b:
            continue
        if a is None or b is None:
            return (f"{_head(case, i)}: you {'refused' if a is None else 'placed'} it, "
                    f"the reference {'refused' if b is None else 'placed'} it")
        job = case.jobs[i]
        for k in reversed(range(len(job.demands))):
            if a[k] != b[k]:
                return (f"{_head(case, i)}, stage {k} (LowCost places stages last to first):\n"
                        f"  yours:    {_show(a[k])}\n  expected: {_show(b[k])}")
    return None


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(np.asarray(a), np.asarray(b))


def _forbidden(split: Callable, place: Callable) -> tuple[Callable, ...]:
    """The references a student's block may not call: each one the student replaces (the other block may be
    the reference itself, handed in so that a check grades one block at a time)."""
    return tuple(ref for ref, given in ((stage_interval, split), (place_stage_gangs, place)) if given is not ref)


def diagnose(window, job, split: Callable, place: Callable, max_end_points=None) -> str | None:
    """Follow the reference LowCost through one job's window and call the student's building blocks
    on the very same inputs; describe the first call whose answer differs (None if none does).

    ``window`` is ``(load, capacity, container)`` of the job's folded window (step 0 is ``a``).
    """
    from .lowcost import end_points

    L, C, z = window
    pos = [k for k, s in enumerate(job.demands) if s > 0]
    for e in end_points(len(pos), L.shape[1], max_end_points).tolist():
        tau_r = e
        for k in reversed(pos):
            want = stage_interval(job.demands, k, tau_r, 0)
            got = call_student(split, job.demands, k, tau_r, 0, name=getattr(split, "__name__", "split"),
                               forbid=_forbidden(split, place))
            where = f"end point {e} (window steps count from a = {job.a}), stage {k}"
            if not _same(tuple(got) if got is not None else None, want):
                return (f"{where}: {getattr(split, '__name__', 'split')}(demands, k={k}, tau_r={tau_r}) "
                        f"returned {got!r}, expected {want!r}" + _split_hint(job.demands, k, tau_r, got))
            tau_l = want[0]
            ref = place_stage_gangs(L, C, tau_l, tau_r, job.demands[k], job.gangs[k], z)
            mine = call_student(place, L, C, tau_l, tau_r, job.demands[k], job.gangs[k], z,
                                name=getattr(place, "__name__", "place"), forbid=_forbidden(split, place))
            if not _same(mine, ref):
                shown = "None" if mine is None else np.asarray(mine).tolist()
                return (f"{where}: {getattr(place, '__name__', 'place')}(tau_l={tau_l}, tau_r={tau_r}, "
                        f"demand={job.demands[k]}, gang={job.gangs[k]}) returned\n  yours:    {shown}\n"
                        f"  expected: {'None' if ref is None else ref.tolist()}\n  load:     "
                        f"{L[0].astype(int).tolist()} (capacity {C[0].astype(int).tolist()})")
            if ref is None:
                break
            tau_r = int(np.flatnonzero(ref)[0]) - 1
    return None


def _readings(demands, k: int, tau_r: int, avail: int, shared: int) -> set:
    """The intervals |I_k| = s_k / shared * avail gives, rounded down or up (a student may round either way),
    capped as LowCost caps it (a length of 0 or less is what an off-by-one leaves with no step to spare)."""
    earlier = sum(1 for s in demands[:k] if s > 0)
    exact = demands[k] * avail / shared
    return {(tau_r - min(max(n, 1), avail - earlier) + 1, tau_r) for n in (math.floor(exact), math.ceil(exact))}


def _split_hint(demands, k: int, tau_r: int, got) -> str:
    """What the student's interval says about their reading of |I_k| (the exercise's misconceptions)."""
    try:
        lo, hi = (int(x) for x in got)
    except (TypeError, ValueError):
        return " (return a pair (tau_l, tau_r) of whole steps)"
    avail, remaining, total = tau_r + 1, sum(demands[: k + 1]), sum(demands)  # window steps 0..tau_r (a = 0)
    readings = []
    if (lo, hi) in _readings(demands, k, tau_r, avail - 1, remaining):
        readings.append(f"counts the steps still available as tau_r - a = {avail - 1}; both ends count: "
                        f"tau_r - a + 1 = {avail}")
    if (lo, hi) in _readings(demands, k, tau_r, avail, total):
        readings.append(f"shares the time over the total demand {total}; LowCost shares it over the demand still "
                        f"to place, stages 0..{k}: {remaining}")
    if readings:
        return " -- your split " + "; or it ".join(readings) + (" (both readings give this interval here)"
                                                                 if len(readings) > 1 else "")
    if lo > hi:
        return f" -- an empty interval (tau_l {lo} > tau_r {hi}): a stage gets at least one step"
    if hi != tau_r:
        return f" -- the interval must end at tau_r = {tau_r}, right before the next stage's allocation"
    return ""


@remembered(maxsize=64)
def _expected(case: PackingCase) -> tuple:
    # a copy per call: diagnose() hands the windows' loads to the student's place(), which may write into them
    out, windows = _replay(case, stage_interval, place_stage_gangs)
    return out, windows


def check_packing(split: Callable = stage_interval, place: Callable = place_stage_gangs,
                  seeds: Sequence[int] = (0, 1, 2)) -> str:
    """Replay the seeded cases with the given building blocks; raise on the first difference.

    The message names the case, the job and, where it can, the first call of ``split`` or ``place``
    (end point and stage) that answers differently from the reference on the same inputs.
    """
    n_cases = n_jobs = 0
    for seed in seeds:
        for case in exercise_cases(seed):
            want, windows = _expected(case)
            try:
                got, _ = call_student(_replay, case, split, place, name="LowCost with your building blocks",
                                      forbid=_forbidden(split, place))
            except ValueError as error:
                # the library refused what your blocks handed it (e.g. an empty interval): name your call
                for i, job in enumerate(case.jobs):
                    why = diagnose(windows[i], job, split, place, ReservationPlan(1).max_end_points)
                    if why:
                        raise CheckFailed(f"{_head(case, i)}:\n  {why}") from error
                raise
            msg = first_difference(got, want, case)
            msg = first_difference(got, want, case)
            if msg:
                i = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
                why = diagnose(windows[i], case.jobs[i], split, place, ReservationPlan(1).max_end_points)
                raise CheckFailed(f"{_head(case, i)}:\n  {why}" if why else msg)
            n_cases += 1
            n_jobs += len(case.jobs)
    names = f"{getattr(split, '__name__', 'split')} and {getattr(place, '__name__', 'place')}"
    return f"LowCost with your {names}: all {n_cases} cases ({n_jobs} jobs) agree with the reference"


# ---- the cost at an offset: the maximum over a job's instances (§6.3) -----------------------------------------
def folded_load(load, period: int, a: int, window: int) -> np.ndarray:
    """What one instance of a periodic job sees at each step of its window ``[a, a + window)`` (minutes after its
    period start) in a cyclic one-resource plan ``load`` (containers per step over the horizon): one offset serves
    every instance, so step ``t`` of the window costs the **maximum** over the instances ``i`` of
    ``load[(a + t) % period + i * period]``. The library's :class:`~cluster_sim.morpheus.packing.plan.ReservationPlan` does
    the same for every resource (``_propose_periodic``).

    >>> folded_load([1, 5, 0, 2, 0, 4], period=2, a=1, window=2).tolist()   # odd steps 5, 2, 4; even 1, 0, 0
    [5.0, 1.0]
    """
    load = np.asarray(load, dtype=float).reshape(-1)
    H = load.size
    if not (isinstance(period, (int, np.integer)) and 1 <= period <= H and H % period == 0):
        raise ValueError(f"period={period!r} is not allowed: need a whole number of steps that divides the "
                         f"horizon ({H})")
    if not (isinstance(window, (int, np.integer)) and 1 <= window <= period):
        raise ValueError(f"window={window!r} is out of range: need 1 <= window <= period={period}")
    offsets = (int(a) + np.arange(window)) % period
    return load.reshape(H // period, period)[:, offsets].max(axis=0)


#: what each misconception computes, and the message that names it
_FOLD_MISTAKES = {
    "only the first instance": (
        lambda L, P, a, W: L[(a + np.arange(W)) % L.size],
        "you read only the first period's steps: one offset serves every instance, so each step of the window costs "
        "the largest load over all H/P instances (the other periods may be fuller)"),
    "the sum over instances": (
        lambda L, P, a, W: L.reshape(-1, P)[:, (a + np.arange(W)) % P].sum(axis=0),
        "you added the instances' loads: each instance holds its containers in its own period, so the step costs the "
        "largest of them, not their total"),
    "the mean over instances": (
        lambda L, P, a, W: L.reshape(-1, P)[:, (a + np.arange(W)) % P].mean(axis=0),
        "you averaged the instances: the job must fit in every period, so the fullest one decides (the maximum)"),
    "no wrap at the period's end": (
        lambda L, P, a, W: L.reshape(-1, P)[:, np.minimum(a + np.arange(W), P - 1)].max(axis=0),
        "a window that crosses the period's end continues at the start of the next period: step (a + t) % P"),
}


def folded_cases(seed: int = 0, n: int = 6) -> list[tuple[np.ndarray, int, int, int]]:
    """Seeded ``(load, period, a, window)`` cases on a 60-step plan: periods 10, 15, 20 and 30, windows that
    cross the period's end in some, loads uneven across periods (so every misconception gives another answer)."""
    rng = np.random.default_rng([seed, 6])
    out = []
    for i in range(n):
        P = int(rng.choice([10, 15, 20, 30]))
        W = int(rng.integers(2, P + 1))
        a = int(rng.integers(P - W + 1, P)) if i % 2 == 0 and W < P else int(rng.integers(0, P))  # every other crosses
        load = rng.integers(0, 9, size=60).astype(float)
        out.append((load, P, a, W))
    return out


def check_folded_load(fn: Callable, seeds: Sequence[int] = (0,)) -> str:
    """Compare a student's ``fn(load, period, a, window)`` with :func:`folded_load` on :func:`folded_cases`; an
    ``AssertionError`` names the first case that differs, both answers and, when the answer is a known
    misconception's, what it is."""
    n = 0
    for seed in seeds:
        for load, P, a, W in folded_cases(seed):
            want = folded_load(load, P, a, W)
            got = call_student(fn, load.copy(), P, a, W, name=getattr(fn, "__name__", "fn"), forbid=folded_load)
            got_arr = np.asarray(got, dtype=float).reshape(-1) if got is not None else np.array([])
            n += 1
            if got_arr.shape == want.shape and np.allclose(got_arr, want):
                continue
            case = f"period {P}, window [{a}, {a + W}) on a {load.size}-step plan (seed {seed})"
            for name, (wrong, why) in _FOLD_MISTAKES.items():
                w = wrong(load, P, a, W)
                if got_arr.shape == w.shape and np.allclose(got_arr, w) and not np.allclose(w, want):
                    raise AssertionError(f"{case}: {why} ({name}). You gave {got_arr.tolist()}, the answer is "
                                         f"{want.tolist()}")
            raise AssertionError(f"{case}: you gave {got_arr.tolist()}, the answer is {want.tolist()} (one value "
                                 f"per step of the window: the maximum over the {load.size // P} instances)")
    return f"your folded load agrees on all {n} cases: the cost at an offset is the maximum over the instances"
