"""Benchmark: Wing's pipeline on a paper-scale day, beside a networkx all-paths baseline.

A paper-scale day (§6.1: about 40k jobs and 160k dependencies) is the second day of a two-day
lake (:meth:`LakeConfig.paper`): its jobs, the ProvRepo rows they need (their reads, every earlier
write, the day's downloads), :func:`single_hop` on those rows and :func:`owl_value` (Algorithm 1)
on the result. The target is under 60 s for the two together on this 2-core machine.

The baseline is the definition itself: for every job, enumerate every path to every downstream
job with networkx (``all_simple_paths``) and add up the products of the 1/N weights. It is run on
growing prefixes of the day's dependency table (edges in order of the downstream job's
submission) until it needs more than a time budget; at each size both methods run in this process,
their answers must agree, and the RATIO baseline / Algorithm 1 is printed.

    .venv/bin/python bench/wing.py           # a paper-scale day
    .venv/bin/python bench/wing.py --quick   # a tenth of it (4k jobs a day)

Measured on this 2-core machine (AMD EPYC, shared with other sessions), seed 0:

    full day  (bench/wing.py):          day 1 of 2: 39076 jobs, 298218 ProvRepo rows -> 146155 dependencies
                                        single_hop 0.64 s + owl_value 0.47 s = 1.11 s (target: 60 s);
                                        5 iterations (diameter 27), 858808 (job, depOn) pairs
                                        baseline: 128000 edges (1.06 M paths) in 53.8 s vs 0.32 s, RATIO 167x;
                                        at 64000 edges 7.8 s vs 0.10 s (78x); it did not reach the whole day
    quick day (bench/wing.py --quick):  3718 jobs -> 11916 dependencies, pipeline 0.12 s;
                                        baseline on the whole day (11916 edges, 85686 paths) 5.9 s, RATIO 157x

Pandas and numpy are enough at this scale: no DuckDB needed. The lake's generation (about 10 s for
two paper-scale days) is not part of the pipeline's time.

The value-aware scheduling lab will add a scheduling section (a simulated day for every policy at five capacities); keep
each measurement a function.
"""

from __future__ import annotations

import argparse
import math
import time

import networkx as nx
import numpy as np
import pandas as pd

from cluster_sim.wing import (
    LakeConfig,
    closed_form_value,
    diameter,
    generate_lake,
    hidden_value,
    job_local_value,
    multi_hop,
    owl_value,
    single_hop,
    value_exploration,
)


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def make_day(jobs_per_day: int, seed: int = 0):
    """The second day of a two-day lake: its jobs and the ProvRepo rows its dependencies need."""
    cfg = LakeConfig.paper().replace(jobs_per_day=jobs_per_day, seed=seed)
    lake, t_gen = timed(generate_lake, cfg)
    jobs, prov = lake.day(1)
    return lake, jobs, prov, t_gen


def pipeline(jobs: pd.DataFrame, prov: pd.DataFrame) -> dict:
    """single_hop then owl_value on one day; job-local value from the day's downloads."""
    deps, t_hop = timed(single_hop, prov)
    every = pd.Index(np.unique(np.concatenate([jobs["job"], deps["job"], deps["depOn"]])))
    k, t_k = timed(job_local_value, prov, every)
    agg, t_owl = timed(owl_value, deps, k)
    (table, iterations), t_mh = timed(multi_hop, deps)
    check = closed_form_value(deps, k)
    if not np.allclose(agg.to_numpy(), check.to_numpy(), rtol=1e-9, atol=1e-9):
        raise SystemExit("owl_value disagrees with the closed form (I - A)^-1 k")
    return {"deps": deps, "k": k, "agg": agg, "t_single_hop": t_hop, "t_value_k": t_k, "t_owl_value": t_owl,
            "t_multi_hop": t_mh, "pairs": len(table), "iterations": iterations, "diameter": diameter(deps)}


def networkx_all_paths_value(deps: pd.DataFrame, k: pd.Series) -> tuple[pd.Series, int]:
    """The baseline: aggregate value by enumerating every path (and the number of paths it walked)."""
    g = nx.DiGraph()
    g.add_nodes_from(k.index)
    n_up = deps.groupby("job")["depOn"].transform("size").to_numpy()
    for (d, u), n in zip(zip(deps["job"], deps["depOn"]), n_up):
        g.add_edge(u, d, w=1.0 / n)
    agg = k.astype(float).copy()
    paths = 0
    for u in g:
        down = nx.descendants(g, u)
        if not down:
            continue
        for p in nx.all_simple_paths(g, u, down):
            agg[u] += math.prod(g[a][b]["w"] for a, b in zip(p, p[1:])) * k[p[-1]]
            paths += 1
    return agg, paths


def baseline_ratios(deps: pd.DataFrame, k: pd.Series, jobs: pd.DataFrame, budget: float) -> list[dict]:
    """Both methods on growing prefixes of the dependency table, while the baseline stays within ``budget`` s."""
    submit = jobs.set_index("job")["submit"]
    order = np.argsort(submit.reindex(deps["job"]).to_numpy(), kind="stable")
    rows = []
    sizes = [n for n in (250 * 2**i for i in range(30)) if n < len(deps)] + [len(deps)]
    for n in sizes:
        sub = deps.iloc[order[:n]]
        kk = k.reindex(pd.Index(np.unique(np.concatenate([sub["job"], sub["depOn"]]))))
        ours, t_ours = timed(owl_value, sub, kk)
        (base, paths), t_base = timed(networkx_all_paths_value, sub, kk)
        if not np.allclose(ours.to_numpy(), base.reindex(ours.index).to_numpy(), rtol=1e-9, atol=1e-9):
            raise SystemExit(f"owl_value and the all-paths baseline disagree on {n} edges")
        rows.append({"edges": n, "jobs": len(kk), "paths": paths, "t_ours": t_ours, "t_networkx": t_base,
                     "ratio": t_base / t_ours})
        if t_base > budget:
            break
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of a paper-scale day (4k jobs)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    per_day, budget = (4_000, 5.0) if args.quick else (40_000, 20.0)

    lake, jobs, prov, t_gen = make_day(per_day, args.seed)
    print(f"lake: {lake.config.days} days of {per_day} jobs/day generated in {t_gen:.1f} s; "
          f"day 1: {len(jobs)} jobs, {len(prov)} ProvRepo rows")
    r = pipeline(jobs, prov)
    total = r["t_single_hop"] + r["t_owl_value"]
    print(f"single_hop : {r['t_single_hop']:6.2f} s -> {len(r['deps'])} dependencies "
          f"({len(r['deps']) / len(jobs):.2f} per job of the day; excluded {r['deps'].attrs['excluded']})")
    print(f"owl_value  : {r['t_owl_value']:6.2f} s ({r['iterations']} iterations, diameter {r['diameter']}, "
          f"{r['pairs']} (job, depOn) pairs; agrees with (I - A)^-1 k)")
    print(f"pipeline   : {total:6.2f} s for single_hop + owl_value (target: under 60 s)"
          f"{'' if total < 60 else '  ** OVER TARGET **'}")
    print(f"value      : {100 * hidden_value(r['k'], r['agg']):.0f}% of aggregate value hidden from job-local "
          f"valuation (the paper: 83%)")
    ex = value_exploration(r["deps"], r["k"])
    print("Fig. 6     : " + ", ".join(f"{s} {100 * v:.0f}%" for s, v in zip(ex["stage"], ex["share"])))
    rows = baseline_ratios(r["deps"], r["k"], lake.jobs, budget)
    print(f"\nnetworkx all-paths baseline (growing prefixes of the day, budget {budget:g} s):")
    print(f"{'edges':>7} {'jobs':>7} {'paths':>9} {'Algorithm 1':>12} {'networkx':>10} {'RATIO':>8}")
    for row in rows:
        print(f"{row['edges']:7d} {row['jobs']:7d} {row['paths']:9d} {row['t_ours']:10.3f} s "
              f"{row['t_networkx']:8.2f} s {row['ratio']:7.0f}x")
    last = rows[-1]
    reach = "the whole day" if last["edges"] == len(r["deps"]) else f"{last['edges']} of {len(r['deps'])} edges"
    print(f"RATIO networkx / Algorithm 1 = {last['ratio']:.0f}x on {last['edges']} edges; the baseline reached {reach}")


if __name__ == "__main__":
    main()
