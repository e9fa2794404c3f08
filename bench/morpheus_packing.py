"""Benchmark of LowCost packing (Morpheus §6). Prints per-job times and a ratio against the greedy placer
run in the same process.

    PYTHONPATH=. .venv/bin/python bench/morpheus_packing.py            # 1,000 periodic jobs
    PYTHONPATH=. .venv/bin/python bench/morpheus_packing.py --quick    # 200 jobs

The workload: half hourly jobs (skylines of 5-50 steps in windows of up to 60 minutes), half daily
jobs (skylines of 10-120 steps in windows of 1-6 times their length), stage-shaped skylines of
1-20 containers per step, gangs of 1 (most) to 4, containers of 1-2 cores and 2-8 GB. They arrive
one by one into an empty one-day, minute-level plan (1,440 steps, two resources) whose capacity is
2.5 times the workload's mean load. The same jobs go, in the same order, to LowCost and to the
greedy earliest-first placer (the rigid skyline at the earliest start that fits).

Measured on the project's 2-core machine, seed 0, while other sessions ran their test suites on
the same cores (wall time varied up to 2x between runs of the same code; CPU time is steadier):

    1,000 jobs (500 hourly, 500 daily), 386,532 gangs in all (387 per job)
    LowCost: 29.1 s in all (CPU 23.3 s), 29.1 ms per job (75 us per gang);
    greedy: 0.7 ms per job; ratio x40 -- the one-minute target is met
    accepted: LowCost 1000 / 1000, greedy 1000 / 1000
    peak c(t): LowCost 0.471, greedy 0.686 (mean load 0.400)

    --quick, 200 jobs: LowCost 38-65 ms per job (CPU 6.1-7.6 s in all), greedy 0.8-1.3 ms per job,
    ratio x50; peak c(t) 0.526 vs 0.738

LowCost's time grows with the number of gangs a job places (every end point places the same gangs
in lock step, see ``lowcost_window``) and, more slowly, with the end points tried (at most 64 by
default; hourly windows try all of theirs).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def skyline(rng: np.random.Generator, K: int) -> list[int]:
    """A stage-shaped skyline: 1-4 plateaus of 1-20 containers with a little noise."""
    cuts = np.sort(rng.choice(np.arange(1, K), size=min(int(rng.integers(0, 4)), K - 1), replace=False))
    levels = rng.integers(1, 21, size=cuts.size + 1)
    s = np.repeat(levels, np.diff(np.concatenate([[0], cuts, [K]])))
    return np.clip(s + rng.integers(-1, 2, size=K), 1, None).astype(int).tolist()


def workload(rng: np.random.Generator, n: int):
    from cluster_sim.morpheus.packing.jobs import PeriodicJob

    jobs = []
    for i in range(n):
        container = [(2, 1), (4, 1), (4, 2), (8, 2)][int(rng.integers(0, 4))]
        gang = int(rng.choice([1, 1, 1, 2, 4]))
        if i % 2 == 0:  # hourly
            K = int(rng.integers(5, 51))
            W = int(rng.integers(K, 61))
            a = int(rng.integers(0, 60 - W + 1))
            jobs.append(PeriodicJob(60, a, a + W, skyline(rng, K), gang=gang, container=container, name=f"h{i}"))
        else:  # daily
            K = int(rng.integers(10, 121))
            W = int(min(1440, K * rng.uniform(1.0, 6.0)))
            W = max(W, K)
            a = int(rng.integers(0, 1440 - W + 1))
            jobs.append(PeriodicJob(1440, a, a + W, skyline(rng, K), gang=gang, container=container, name=f"d{i}"))
    return jobs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a fast run: 200 jobs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    n = 200 if args.quick else 1000

    from cluster_sim.morpheus.packing.stages import gang_pieces
    from cluster_sim.morpheus.packing.plan import ReservationPlan

    rng = np.random.default_rng(args.seed)
    jobs = workload(rng, n)
    H = 1440
    mean = np.zeros(2)
    gangs = 0
    for j in jobs:
        mean += np.asarray(j.container) * j.total_demand * (H // j.period) / H
        gangs += sum(len(gang_pieces(s, g)) for s, g in zip(j.demands, j.gangs) if s)
    capacity = np.ceil(2.5 * mean)
    print(f"== {n} jobs ({sum(j.period == 60 for j in jobs)} hourly, {sum(j.period == 1440 for j in jobs)} daily), "
          f"{gangs:,} gangs in all ({gangs / n:.0f} per job); capacity (memory, cores) = {capacity.tolist()}, "
          f"2.5 x the mean load")

    results = {}
    for method in ("greedy", "lowcost"):
        plan = ReservationPlan(capacity, H)
        t, c = time.perf_counter(), time.process_time()
        accepted = sum(plan.place(j, method=method) is not None for j in jobs)
        dt, dc = time.perf_counter() - t, time.process_time() - c
        plan.check()
        results[method] = (dt, accepted, plan.peak(), dc)
    (tg, ag, pg, cg), (tl, al, pl, cl) = results["greedy"], results["lowcost"]
    print(f"LowCost: {tl:.1f} s in all (CPU {cl:.1f} s), {tl / n * 1e3:.1f} ms per job "
          f"({tl / gangs * 1e6:.0f} us per gang); greedy: {tg / n * 1e3:.1f} ms per job; ratio x{tl / tg:.0f}")
    print(f"accepted: LowCost {al} / {n}, greedy {ag} / {n}")
    print(f"peak c(t): LowCost {pl:.3f}, greedy {pg:.3f} (mean load {float(np.max(mean / capacity)):.3f})")
    print(f"target: 1,000 jobs in under a minute -> {'met' if tl / n * 1000 < 60 else 'MISSED'} "
          f"({tl / n * 1000:.0f} s for 1,000 at this rate)")


if __name__ == "__main__":
    main()
