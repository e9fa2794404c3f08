"""Seeded packing cases for the exercise: replay LowCost with a student's building blocks and name
the first job and stage whose allocation differs from the reference.

A :class:`PackingCase` is a small plan (one resource, one hour of minutes) with a few rigid
*background* reservations (placed earliest-first, so the costs are uneven) and a sequence of
periodic jobs to pack. :func:`replay` places the jobs in order with
:func:`~cluster_sim.morpheus.lowcost.lowcost_reference` and the given ``split``
(:func:`~cluster_sim.morpheus.lowcost.stage_interval`) and ``place``
(:func:`~cluster_sim.morpheus.lowcost.place_stage_gangs`); :func:`check_packing` compares a
student's replay with the library's and raises an ``AssertionError`` naming the first job, the first
stage (in LowCost's order, last stage first) and both allocations.

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

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..checking import call_student
from .lowcost import PeriodicJob, lowcost_reference, place_stage_gangs, stage_interval
from .plan import ReservationPlan

__all__ = ["PackingCase", "exercise_cases", "replay", "first_difference", "check_packing"]


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
    plan = ReservationPlan(case.capacity, case.horizon)
    for b in case.background:
        if plan.place(b, method="greedy") is None:
            raise ValueError(f"{case.name}: the background reservation {b!r} does not fit")

    def solver(L, C, z, job):
        return lowcost_reference(L, C, z, job.demands, job.gangs, job.alignment, split=split, place=place,
                                 max_end_points=plan.max_end_points)

    out = []
    for job in case.jobs:
        alloc = plan.place(job, method=solver)
        if alloc is None:
            out.append(None)
            continue
        stages = []
        for k in range(len(job.demands)):
            start, cont = alloc.stage(k)
            stages.append((start, cont.tolist()))
        out.append(stages)
    return out


def _show(stage) -> str:
    start, cont = stage
    return f"steps {start}..{start + len(cont) - 1}: {cont}" if cont else "no steps"


def first_difference(yours: Sequence, expected: Sequence, case: PackingCase) -> str | None:
    """``None`` when the replays agree, else a message naming the first job and stage that differ."""
    for i, (a, b) in enumerate(zip(yours, expected)):
        if a == b:
            continue
        job = case.jobs[i]
        head = (f"{case.name}, {job.name or f'job {i}'} (period {job.period}, window [{job.a}, {job.d}), "
                f"demands {list(job.demands)}, gangs {list(job.gangs)})")
        if a is None or b is None:
            return (f"{head}: you {'refused' if a is None else 'placed'} it, "
                    f"the reference {'refused' if b is None else 'placed'} it")
        for k in reversed(range(len(job.demands))):  # LowCost's order: the last stage first
            if a[k] != b[k]:
                return (f"{head}, stage {k} (LowCost places stages last to first):\n"
                        f"  yours:    {_show(a[k])}\n  expected: {_show(b[k])}")
    return None


def check_packing(split: Callable = stage_interval, place: Callable = place_stage_gangs,
                  seeds: Sequence[int] = (0, 1, 2)) -> str:
    """Replay the seeded cases with the given building blocks; raise on the first difference."""
    n_cases = n_jobs = 0
    for seed in seeds:
        for case in exercise_cases(seed):
            want = replay(case)
            got = call_student(replay, case, split, place, name="LowCost with your building blocks")
            msg = first_difference(got, want, case)
            if msg:
                raise AssertionError(msg)
            n_cases += 1
            n_jobs += len(case.jobs)
    names = f"{getattr(split, '__name__', 'split')} and {getattr(place, '__name__', 'place')}"
    return f"LowCost with your {names}: all {n_cases} cases ({n_jobs} jobs) agree with the reference"
