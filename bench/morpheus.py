"""Benchmark: Morpheus's job resource model (§5) on a month of minute-level history for one job, and
Lab 03's ``compare`` sweep in this process against a 2-worker Dask LocalCluster.

30 daily runs of a stage-shaped job, zero-padded or cropped to 1440 one-minute steps, go through
``fit_skyline`` (both solves: V, then the regularised LP with beta = 0.1 V). We print the LP's size
in both castings, the fit's wall time beside the max-envelope baseline computed in the same
process (the RATIO), and check that the LP's objective is J(R*) recomputed in closed form. No
absolute-time assertions; the issue's target is under 10 s for 30 x 1440 on the 2-core machine.

Measured on the 2-core machine while other engineers' jobs ran (load average 2-6), 30 x 1440:

* compact casting (the default; 46,110 variables, 37,929 rows, 120,497 non-zeros): 5.3-6.0 s for
  both solves at alpha = 0.01 and 2.4-6.0 s at alpha = 0.5, under the 10 s target. The max envelope
  takes 0.05-0.08 ms, so the RATIO is about 5 x 10^4 to 10^5.
* the textbook casting with a debt variable per run and step (``--recursion``; 87,841 variables,
  86,401 rows, inside the paper's "less than 100K"): 127 s at alpha = 0.01 and 54 s at alpha = 0.5,
  with the same over-allocation and final debt as the compact one.

The sweep: ``compare`` over arms x seeds through ``run_grid`` (no cache), first on a LocalCluster of 2
worker processes started for it (its start and the workers' imports counted), then in this process
(fresh: nothing simulated yet); the two tables must be equal to the last bit, and the RATIO is
in-process time / cluster time (ideal: 2 on the 2-core machine). Measured once at the paper preset
(2 arms x 2 seeds, 37,584 tasks a cycle): cluster 1,050 s, in-process 925 s (231 s a cycle), RATIO
0.88x, the same table. The machine's load average was 5-7 from other sessions while the cluster ran
(each worker got about 60% of a core) and fell to 1-2 during the in-process half, so that run says
more about the shared machine than about Dask; at the default preset (15 cycles of ~1.5 s) the
cluster's start and its workers' imports dominate (RATIO 0.48x), which is why run_grid's "auto" keeps
short sweeps in-process.

    .venv/bin/python bench/morpheus.py               # 30 x 1440; compare at MorpheusConfig.paper()
    .venv/bin/python bench/morpheus.py --quick       # 30 x 360; compare at MorpheusConfig.default()
    .venv/bin/python bench/morpheus.py --recursion   # also time the textbook casting (slow)
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np

from cluster_sim.morpheus import (
    ARMS, HistoryParams, MorpheusConfig, build_compact_lp, build_lp, compare, fit_skyline, generate_history,
    max_envelope, penalty,
)


def month_of_runs(n_runs: int = 30, steps: int = 1440, seed: int = 0) -> np.ndarray:
    """``n_runs`` runs of one daily job from the history generator, as an n_runs x steps array."""
    p = HistoryParams(days=float(n_runs), n_periodic=1, n_off_kilter=0, n_aperiodic=0, n_adhoc=0,
                      periods=(86400.0,), period_weights=(1.0,), failure_rate=0.0, max_steps=steps,
                      duration_share=(0.8 * steps / 1440, 0.8 * steps / 1440))  # typical run: 80% of steps
    h = generate_history(np.random.default_rng(seed), p)
    name = h.templates.index[0]
    matrix = h.skyline_matrix(name)
    out = np.zeros((n_runs, steps))
    k = min(steps, matrix.shape[1])
    out[:, :k] = matrix[:n_runs, :k]
    return out


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def skyline_section(runs: np.ndarray, alphas=(0.01, 0.5), recursion: bool = False) -> None:
    """Time fit_skyline against the max envelope on the same runs, print the LP's size."""
    n, k = runs.shape
    print(f"history: {n} runs x {k} one-minute steps, {runs.sum():.0f} container-minutes used")
    for name, build in (("compact", build_compact_lp), ("recursion", build_lp)):
        lp = build(runs, 0.01, 1.0)
        nnz = lp.A_ub.nnz + (0 if lp.A_eq is None else lp.A_eq.nnz)
        print(f"LP size ({name:9s}, regularised): {lp.n_variables:7,d} variables, "
              f"{lp.n_constraints:7,d} constraints, {nnz:8,d} non-zeros")
    t_env = best_of(lambda: max_envelope(runs), 20)
    formulations = ("compact", "recursion") if recursion else ("compact",)
    for alpha in alphas:
        for formulation in formulations:
            t0 = time.perf_counter()
            fit = fit_skyline(runs, alpha, formulation=formulation)
            t_fit = time.perf_counter() - t0
            j = penalty(fit.skyline, runs, alpha, fit.beta).objective
            if abs(j - fit.objective) > 1e-6 * (1 + abs(j)):
                raise SystemExit(f"LP objective {fit.objective} differs from J(R*) = {j}")
            env = penalty(max_envelope(runs), runs, alpha)
            print(f"alpha={alpha:<5g} {formulation:9s}: fit_skyline {t_fit:6.2f} s ({fit.solves} solves), "
                  f"max envelope {1e3 * t_env:.3f} ms, RATIO {t_fit / t_env:,.0f}x; "
                  f"over {fit.over:,.0f} vs envelope {env.over:,.0f} container-minutes per run, "
                  f"final debt {fit.under:,.1f}")


def sweep_section(config: MorpheusConfig, arms, seeds) -> None:
    """compare() on a 2-worker LocalCluster, then in this process: the same table, and the speed-up."""
    from distributed import Client, LocalCluster

    points = len(arms) * len(seeds)
    print(f"sweep: compare over {len(arms)} arms x {len(seeds)} seeds = {points} cycles of {config.jobs} jobs, "
          f"{config.machines} machines, {config.cycle_minutes} min ({config.work().describe()})")
    t0 = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        there = compare(config, arms, seeds, client=client, cache=False)
    t_there = time.perf_counter() - t0
    t0 = time.perf_counter()  # this process has simulated nothing yet: every point runs afresh
    here = compare(config, arms, seeds, client="inprocess", cache=False)
    t_here = time.perf_counter() - t0
    if not here.equals(there):
        raise SystemExit(f"the cluster's table differs from this process's:\n{here}\n{there}")
    print(f"in-process {t_here:7.1f} s ({t_here / points:.1f} s per cycle); LocalCluster of 2 workers "
          f"{t_there:7.1f} s (its start included); RATIO {t_here / t_there:.2f}x (ideal 2); the same table")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="30 runs x 360 steps")
    ap.add_argument("--recursion", action="store_true", help="also time the textbook casting (about 80 s)")
    args = ap.parse_args()
    steps = 360 if args.quick else 1440
    skyline_section(month_of_runs(30, steps), recursion=args.recursion)
    if args.quick:
        sweep_section(MorpheusConfig.default(), ARMS, (0, 1, 2))
    else:
        sweep_section(MorpheusConfig.paper(), ("user", "morpheus_dra"), (0, 1))


if __name__ == "__main__":
    main()
