"""Benchmark: a 64-point sweep through ``run_grid`` on 1 and 2 Dask workers, against ``run`` called directly.

The grid is the engine's ``ClusterConfig.ci()`` × 4 scheduler counts × 4 update delays × 4 loads
(64 runs, no cache). In the same process we time

* ``run(config)`` for every point, one after another (the baseline),
* ``run_grid(..., client="inprocess")`` (run_grid's own bookkeeping: configs, hashing, the frame),
* ``run_grid`` on a LocalCluster of 1 worker and of 2 workers (each cluster started, and its workers
  made to import cluster_sim, before the clock starts; the start is reported on its own),
* the same grid with a no-op ``run`` on each route: what run_grid and Dask add per point, measured
  alone (robust on a busy machine, where the difference of two totals is mostly noise),

check that every route gives the same frame, and print RATIOS: the speed-up of 2 workers over 1
(ideal 2 on a 2-core machine, less when other work shares the cores) and the per-point overhead of
each route as a share of a point's own run time. No absolute-time assertions.

    .venv/bin/python bench/sweep.py           # ci horizon (200 s simulated per point)
    .venv/bin/python bench/sweep.py --quick   # horizon 100 s: shorter points, overhead weighs more
"""

from __future__ import annotations

import argparse
import logging
import os
import time

import pandas as pd

from cluster_sim.engine import ClusterConfig, run
from cluster_sim.sweep import grid_points, run_grid

GRID = {"schedulers": [1, 2, 4, 8], "update_delay": [0.0, 0.5, 1.0, 2.0], "load": [0.5, 0.7, 0.8, 0.9]}


def noop(config) -> dict:
    """A point that costs nothing: what run_grid and Dask add per point, alone."""
    return {"x": 0.0}


def on_cluster(base, workers: int) -> tuple[pd.DataFrame, float, float, float]:
    """(frame, seconds to start the cluster and warm its workers, seconds of the sweep, seconds of
    the same grid with a no-op run)."""
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    client.run(__import__, "cluster_sim.engine")  # the import every worker pays once
    t_start = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        frame = run_grid(run, base, GRID, client=client, cache=False, progress=False)
        t_sweep = time.perf_counter() - t0
        t0 = time.perf_counter()
        run_grid(noop, base, GRID, client=client, cache=False, progress=False)
        return frame, t_start, t_sweep, time.perf_counter() - t0
    finally:
        logging.getLogger("distributed").setLevel(logging.ERROR)
        client.close()
        cluster.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="horizon 100 s instead of the ci preset's 200 s")
    ap.add_argument("--repeats", type=int, default=None,
                    help="time each route this many times and keep the fastest (default 2, --quick 1)")
    args = ap.parse_args()
    repeats = args.repeats or (1 if args.quick else 2)
    if repeats < 1:
        raise SystemExit(f"--repeats={repeats} is out of range: give 1 or more")
    base = ClusterConfig.ci()
    if args.quick:
        base = base.replace(horizon=100.0)
    points = grid_points(base, GRID)
    n = len(points)
    print(f"{n} points of ClusterConfig.ci() (horizon {base.horizon:g} s) over {', '.join(GRID)}")

    load = os.getloadavg()[0]
    run(base)  # warm this process's imports and caches like the workers'
    t_direct = t_here = t_one = t_two = t_noop_here = t_noop_one = t_noop_two = float("inf")
    for _ in range(repeats):  # interleaved, so a burst of other work on the machine hits every route
        t0 = time.perf_counter()
        for p in points:
            run(base.replace(**p))
        t_direct = min(t_direct, time.perf_counter() - t0)

        t0 = time.perf_counter()
        here = run_grid(run, base, GRID, client="inprocess", cache=False, progress=False)
        t_here = min(t_here, time.perf_counter() - t0)

        t0 = time.perf_counter()
        run_grid(noop, base, GRID, client="inprocess", cache=False, progress=False)
        t_noop_here = min(t_noop_here, time.perf_counter() - t0)

        one, start1, t, t_noop = on_cluster(base, 1)
        t_one, t_noop_one = min(t_one, t), min(t_noop_one, t_noop)
        two, start2, t, t_noop = on_cluster(base, 2)
        t_two, t_noop_two = min(t_two, t), min(t_noop_two, t_noop)
    pd.testing.assert_frame_equal(here, one)
    pd.testing.assert_frame_equal(here, two)

    per_point = t_direct / n
    print(f"run() directly          : {per_point * 1e3:8.1f} ms per point ({t_direct:.1f} s for {n})")
    for name, t in (("run_grid in-process", t_here), ("run_grid, 1 worker", t_one), ("run_grid, 2 workers", t_two)):
        print(f"{name:<24}: {t / n * 1e3:8.1f} ms per point ({t:.1f} s)")
    print(f"cluster start + worker imports: {start1:.1f} s (1 worker), {start2:.1f} s (2 workers) "
          f"= {start2 / per_point:.0f} points' worth of run time")
    print(f"RATIO speed-up 2 workers / 1 worker = {t_one / t_two:.2f}x (ideal 2 on 2 free cores)")
    print(f"RATIO speed-up 2 workers / run() directly = {t_direct / t_two:.2f}x")
    print(f"RATIO per-point overhead vs run() directly: in-process {(t_here - t_direct) / t_direct:+.1%}, "
          f"1 worker {(t_one - t_direct) / t_direct:+.1%} of a point's run time (differences of two noisy totals)")
    print(f"RATIO per-point overhead measured with a no-op run / a point's run time: in-process "
          f"{t_noop_here / t_direct:.1%} ({t_noop_here / n * 1e3:.1f} ms), 1 worker {t_noop_one / t_direct:.1%} "
          f"({t_noop_one / n * 1e3:.1f} ms), 2 workers {t_noop_two / t_direct:.1%} ({t_noop_two / n * 1e3:.1f} ms)")
    print("all four routes give the same frame")
    print(f"load average (1 min) before / after: {load:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(other work on the machine lowers the speed-up)")


if __name__ == "__main__":
    main()
