"""Benchmark of Labs 08-09: RMiner on the engine at CI, interactive and paper scale.

Prints, for each run: wall time, simulated tasks, Mesa events, events/s, tasks/s, and the RATIO of
the engine's cost per task to a plain-Python event loop's (heapq, two events per task, trivial
bookkeeping; best of three, measured right after the run in the same process) - the interpreter's
floor for this event count. Peak memory is the process's maximum resident set size.

Measured on the shared 2-core machine (2026-11-22): paper scale, 300 s, 2.51 M tasks: NoRM 238 s,
SmartRM 283 s wall (under contention, load average 2-4), peak RSS 1.2 GB; a quiet 20 s slice runs at
75 us/task (~190 s for the full run). Where the time goes (cProfile, SmartRM): the engine's per-task
decision event (Mesa schedule_event + weakref, ~20%), Scheduler._decide / CSV.commit / ledger
(~27%), RMiner's listeners (~13%), the probing placement (~6%), RM decisions (~9%, 4% of tasks).

    .venv/bin/python bench/rminer.py --quick      # CI + default presets, a 20 s slice of the paper scale
    .venv/bin/python bench/rminer.py              # ... and the paper's full 300 s (NoRM and SmartRM)
"""

from __future__ import annotations

import argparse
import gc
import heapq
import resource
import sys
import time

import numpy as np

from cluster_sim.rminer import RMinerConfig
from cluster_sim.rminer.model import RMinerModel
from cluster_sim.rminer.simulation import collect


class CountingModel(RMinerModel):
    """RMinerModel that counts the Mesa events it schedules (decisions, arrivals, wake-ups)."""

    events = 0

    def schedule_event(self, function, **kwargs):
        self.events += 1
        return super().schedule_event(function, **kwargs)


def plain_loop(n_tasks: int, seed: int = 0) -> float:
    """Seconds per task of a bare heapq event loop: one decision and one completion per task."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1e-3, n_tasks)).tolist()
    durations = rng.exponential(5.0, n_tasks).tolist()
    t0 = time.perf_counter()
    heap = [(a, 0, i) for i, a in enumerate(arrivals)]
    heapq.heapify(heap)
    running, done = 0, 0
    while heap:
        t, kind, i = heapq.heappop(heap)
        if kind == 0:  # decide and start
            running += 1
            heapq.heappush(heap, (t + durations[i], 1, i))
        else:  # complete
            running -= 1
            done += 1
    return (time.perf_counter() - t0) / n_tasks


def peak_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 if sys.platform != "darwin" else rss / 2**20


def bench(label: str, cfg: RMinerConfig) -> dict:
    gc.collect()
    t0 = time.perf_counter()
    model = CountingModel(cfg, record_series=False)
    t_build = time.perf_counter() - t0
    model.run_until(cfg.horizon)
    t_run = time.perf_counter() - t0 - t_build
    model.check_invariants()
    res = collect(model)
    wall = time.perf_counter() - t0
    n = res.tasks_submitted
    syncs = int(cfg.horizon / cfg.update_delay) if cfg.update_delay > 0 else 0
    events = model.events + syncs
    # best of three, right after the run: the machine is shared, so take the least disturbed
    base = min(plain_loop(min(n, 300_000), seed=k) for k in range(3))
    row = dict(label=label, mode=cfg.mode, machines=cfg.machines, horizon=cfg.horizon, tasks=n, wall=wall,
               build=t_build, run=t_run, events=events, events_per_s=events / t_run, tasks_per_s=n / wall,
               us_per_task=wall / n * 1e6, ratio=(wall / n) / base, peak_mb=peak_mb(),
               util=res.cpu_utilization, throughput=res.throughput, shadow_ratio=res.shadow_ratio)
    print(f"{label:<24} mode={cfg.mode:<5} tasks={n:>9,} wall={wall:7.1f}s (build {t_build:.1f}s) "
          f"events/s={events / t_run:>9,.0f} tasks/s={n / wall:>8,.0f} us/task={wall / n * 1e6:6.1f} "
          f"RATIO vs plain loop={row['ratio']:5.1f}x peak RSS={row['peak_mb']:,.0f} MB "
          f"[util {res.cpu_utilization:.3f}, shadow ratio {res.shadow_ratio:.4f}]", flush=True)
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="CI + default presets and a 20 s paper-scale slice")
    ap.add_argument("--modes", default="none,smart", help="modes for the full paper-scale runs")
    args = ap.parse_args(argv)
    print(f"plain-loop baseline: {plain_loop(200_000) * 1e6:.2f} us per task (2 heap events)")
    for mode in ("none", "safe", "smart"):
        bench("ci preset", RMinerConfig.ci().replace(mode=mode))
    for mode in ("none", "safe", "smart"):
        bench("default preset", RMinerConfig.default().replace(mode=mode))
    bench("paper scale, 20 s slice", RMinerConfig.paper().replace(mode="smart", horizon=20.0))
    if args.quick:
        return
    for mode in args.modes.split(","):
        bench("paper scale, 300 s", RMinerConfig.paper().replace(mode=mode))


if __name__ == "__main__":
    main()
