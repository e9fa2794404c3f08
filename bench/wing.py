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

Lab 05's section (value-aware scheduling): one simulated day of a lake (WingConfig.paper()'s lake,
``run_days=1``) replayed on the capacity scheduler for every policy at five capacities (1.0, 0.8,
0.6, 0.4, 0.2). The baseline, run in the same process at each capacity, is the engine alone: a plain
``CapacityClusterModel`` on the same jobs, queues and machines, ordered by user priority, without
Wing's inputs (no hard or polling dependencies, no recorder). Each run prints its wall time, events
per second and the RATIO run / plain engine; PRIO / Wing-Agg is printed too.

Issue 12 asks for about 5k simulated jobs: the section runs 5,000 jobs a day (5,059 simulated jobs,
14 days of history: 69,966 jobs) and ``--quick`` 300 (311 jobs); ``--sched-jobs-per-day`` sets
another size. Two things kept it at 500 jobs a day before, both measured with cProfile:

* preparing the lake (``prepare``) took Owl's aggregates from Algorithm 1's doubling, whose joins
  build each pair once per path length and split: at 3,000 jobs a day 90M rows for 6M pairs (86 s),
  at 4,000 past 14 GB of memory. :func:`owl_closure` builds the pairs level by level (each once per
  upstream edge): prepare at 1k / 2k / 4k / 5k jobs a day took 1.9 / 2.2 / 13 / ~40 s (lake
  generation apart: 2 / 3 / 7 / ~10 s), 1.8 GB at 5k. What still grows faster than the jobs is the
  closure itself: pairs within ω per history job, 70 at 1k, 650 at 5.8k a day (52M pairs, 19 s);
  that is the definition (every job reachable within a week), not the method;
* the engine's capacity scheduler summed every leaf's use for the root at every queue it checked:
  the plain engine at 20% capacity on these 30 queues took 73 s (cluster_sim/engine/capacity.py now reads each
  queue's use once per admission decision: 33 s, the same decisions).

Measured (``bench/wing.py --part scheduling``, seed 0, machine shared, nothing else of ours running):
lake and profiles 50.6 s; at 100% capacity every run 4.2-6.1 s for 41,934 events (plain engine 5.7 s,
7,372 events/s; RATIO Wing run / plain engine 0.74x-1.07x); at 80% 6.5-8.1 s (RATIO 0.82x-1.03x);
at 60% 9.9-12.4 s (plain engine 11.2 s, RATIO 0.88x-1.10x).
At 40% 10.6-22.0 s (plain engine 14.2 s, RATIO 0.75x-1.55x, Oracle Wing-Agg the slowest); at 20%
10.6-17.1 s (plain engine 22.6 s, 1,856 events/s, RATIO 0.47x-0.76x). Median RATIO over the 30 runs
0.91x; events/s 3,929 (Wing runs) vs 3,404 (plain engine); the section took 385 s + 51 s preparing.
Value at this size (one seed, not a claim): 20%: PRIO 57.6%, Wing-Direct 51.8%, Wing-Agg 59.5%,
Oracle Wing-Agg 63.0%; 40%: PRIO 80.2%, Wing-Direct 76.6%, Wing-Agg 79.5%.

    .venv/bin/python bench/wing.py --part scheduling          # only Lab 05's section
    .venv/bin/python bench/wing.py --part scheduling --sched-jobs-per-day 40000 --capacities 0.4   # refused
    .venv/bin/python bench/wing.py --part scheduling --sched-jobs-per-day 40000 --omega-days 1 \
        --history-days 7 --max-memory-gib 16 --capacities 0.4           # a 40k-job day at ω a day
    .venv/bin/python bench/wing.py --part window-pairs --sched-jobs-per-day 40000 --history-days 14 \
        --omegas 1,2,3.5,7 --samples 10000                               # the closure at ω a week, counted

Issue 33 (a paper-scale day, 40k jobs, through ``prepare`` and the six policies at one capacity in 5 min and
8 GB) at the paper's ω (a week) and history (two weeks) is NOT possible on this machine: WingConfig refuses
it before building anything (estimated 202 GiB on round 8's lakes: 10.7 billion (ancestor, descendant) pairs
within ω over the two weeks of history, at 20 bytes each; 184 GiB and 9.7 billion on the lakes before). Owl's
aggregate within ω is by definition a sum over those pairs, whatever the code; the paper ran it on Cosmos.

What runs (round 9, s9w40): the same day with a short window, ``--omega-days 1 --history-days 7`` (the
smallest history WingConfig allows is 7 days, and ω is at most half of it; the printed header says that ω and
the history are not the paper's, and why). WingConfig estimates it at 12.4 GiB (the closure's envelope, 3.9x
the fit: 537M pairs), so the run raises the cap on purpose (``--max-memory-gib 16``). Measured once, seed 0,
capacity 0.4, 19:28-19:31 UTC at load 2.9-3.6 (other helpers' work beside it):

* the command: 2 min 48 s wall, 109 s CPU (102 user + 7 system), peak RSS 2.06 GiB (``/usr/bin/time -v``);
  so within the target's 5 minutes and 8 GB, at ω a day;
* the lake: 615,415 jobs, 8.0M ProvRepo rows in 21.1 s CPU (25.7 s wall), 2.03 GiB peak RSS (LakeConfig
  estimates 3.8 GiB); ``prepare`` without the lake 24.9 s CPU (37.3 s wall), of which Owl's closures within ω
  8.3 s (the history's: 44.1M pairs, 163 a history job, 7.8M held at once, 0.20 µs a pair) and 2.6 s (the
  Oracles'); 38,232 simulated jobs, 270,314 history jobs, 87,645 dependencies among the run's jobs;
* the runs at 40 %: plain engine 7.7 s CPU (326,190 events); PRIO 7.2 s, Wing-Direct 7.4 s, Wing-Agg 7.9 s,
  Oracle Wing-Direct 7.6 s, Oracle Wing-Agg 8.0 s (300-309k events each), Wing-MIL 14.8 s (393k events: its
  rekeys); RATIO Wing run / plain engine 1.00x in CPU (median), the six 53 s of CPU. Nothing grew faster than
  the jobs: at 5,000 / 20,000 / 40,000 jobs a day (same window) prepare took 5.2 / 24 / 46 s CPU with the lake
  (the first two under cProfile), PRIO's run 2.0 / 6.8 / 7.2 s; the lake's ad hoc jobs (a Python loop over
  jobs, ``lake._Builder.adhoc``) and pandas' factorising in ``read_matches`` are prepare's largest parts,
  and the engine's admissions (``capacity._admit_one``) and Mesa's event queue the runs' (cluster_sim/engine
  is another helper's this round: not changed here);
* value at 40 % (one seed, ω a day, not a claim): PRIO 47.0 %, Wing-Direct 49.2 %, Wing-Agg 65.4 %, Wing-MIL
  67.3 %, Oracle Wing-Direct 47.0 %, Oracle Wing-Agg 71.8 % (failed jobs 13,137 / 12,958 / 10,147 / 9,354 /
  12,934 / 8,369 of 38,232: failure chains).

How far the window goes at 40k jobs a day. The history's closure alone, built (``owl_closure`` with its pairs
counted, 7 days of history, one process, load 3.4-4.1): ω 1 day 44.1M pairs (163 a history job), 8.6 s CPU,
2.1 GiB peak RSS; ω 2 days 264M pairs (978 a job), 49M held at once, 62.7 s CPU (0.24 µs a pair), 4.5 GiB;
ω 3.5 days passed 10 GiB of RSS and was stopped (about 4 min of CPU in). Counted without building it
(``--part window-pairs``: :func:`window_pairs` on 10,000 history jobs drawn at random, their descendants within
ω; equal to Algorithm 1's table job by job on the ci lake, tested; at 7 days of history 151 ± 22 and 924 ± 128
a job for the built 163 and 978), the paper's two weeks of history, seed 0, 19:51-19:57 UTC at load 3.2-4.1,
5 min 8 s wall, 178 s CPU, 2.8 GiB peak RSS:

    ω (days)   pairs a history job (95 %)   pairs in all (536,377 history jobs)   WingConfig's estimate (fit)
    1            191 ± 14                      102M                                   1,491 (382) a job
    2          1,291 ± 85                      692M                                   3,696 (948)
    3.5        5,325 ± 295                     2.86 billion                           7,693 (1,973)
    7         17,302 ± 883                     9.28 billion [8.81, 9.75]              19,074 (4,891): 202 GiB

So the paper's window holds about 9.3 billion pairs: the estimate's envelope (10.7 billion) holds: 0.91x of it a job, 0.87x in all
(the fit alone is 3.5x short: the pairs grow as ω^2.8 from one day to two, ω^1.7 from 3.5 days to 7, against
the fit's ω^1.31). At the 20 bytes a pair measured at 5,000 jobs a day that is about 175 GiB with the lake,
and about 2,200 s of CPU at the 0.24 µs a pair measured at ω two days, for the history's closure alone: out
of reach of a 2-core, 24 GiB machine, as the config's refusal says.

Measured on the old
5,000-a-day lake (seed 0, CPU seconds because the shared machine ran at load 15-23):

* the history's closure within ω holds 174M pairs (2,475 a history job, not the 650 once counted at 5.8k:
  that was at fewer organisations); :func:`owl_closure` now adds each job's pairs to the aggregates as they
  are built and forgets them once its last upstream job has read them: 42M held at once instead of 174M,
  peak RSS 3.0 GiB instead of 6.3 GiB, 58 s CPU instead of 85 s, aggregates identical bit for bit
  (tests/wing/test_closure_streamed.py keeps the pair-based code as the oracle). The Oracles' closure is
  limited to what the run's jobs read (``needed=``): 54M pairs instead of 101M, 14.6 s CPU instead of
  25.0 s, the run's values identical;
* what is left is the definition: every job reachable within a week, each pair weighted by all its paths.
  A per-job window (a pair counts while the descendant is submitted within ω of the ancestor's end) does
  not fold into a DP over jobs: the aggregate of job u is the whole-DAG aggregate on the jobs submitted by
  end(u) + ω, a different graph for every job. At 40k a day the pairs grow to about 12 billion (2,475 a
  job times 8.5, the fit's jobs_per_day ** 1.03): about 4,000 s of CPU at today's 0.33 µs a pair and about
  46 GB for the quarter held at once;
* the runs: profiled at 5,000 jobs a day and 40% capacity, the capacity scheduler spent a sixth of each
  run looking for starved queues at every admission and every pass re-summed every queue's use to shrink
  an excess no lowered maximum had created. Both went with the scheduler's cached queue state (issue 33's
  Lab 03 work: each queue's use, ratio and owed work refreshed only when it changes; identical decisions,
  tests/engine/test_capacity_golden.py, which covers Wing's policies at ci and default). Before it, at
  5,000 jobs a day PRIO took 11.7 s CPU and Wing-MIL 23.3 s under cProfile; the six policies at 40k jobs
  were not run (the closure comes first).

Lab 05's claims pool (round 17, issues 24 and 33): ``--part claims05`` runs ``claims_runs(WingConfig.ci(),
pool_size=4)`` (120 Wing runs through run_grid in one process, a fresh cache each time, the 4 lakes prepared
in it) by an older checkout's code and by this one, in fresh processes taken in turns, and checks that both give
the same frame of runs (``pd.testing.assert_frame_equal``, the runs' wall times left out):

    git archive 9402da2 cluster_sim | tar -x -C /tmp/s17w/old
    .venv/bin/python bench/wing.py --part claims05 --before /tmp/s17w/old --rounds 5

Measured 19:05-19:09 UTC at load 1.0-1.2 (the lead's work beside it; CPU times of one side varied by a third
from round to round): before 17.28 / 13.09 / 18.02 / 15.42 / 16.51 s, now 11.83 / 14.09 / 12.53 / 13.01 /
14.03 s; RATIO 1.27x CPU time (medians 16.51 s / 13.01 s), the same frame of runs. About a fifth of what is
left is preparing the 4 lakes (``prepare``: lake generation, single hop, Owl's closure), which this round did
not touch. What changed, each tested against the old path (tests/engine/test_gang_commit.py, the golden records
of tests/engine/test_capacity_golden.py, tests/wing/test_lab05_run_inputs.py):

* a gang is committed in one go (``ResourceLedger.try_hold_gang``, ``CentralStateView.commit_gang``): its rows,
  totals and queue use written once per machine, the usage set once at the gang's total; the same holds in the
  same order, then each task's wake-up, start and ``on_commit`` in order;
* the ledger's kept lists of fitting machines follow the machines that changed when next read
  (``fitting_machines``), not at every hold and release; ``pop_due`` releases the common hold inline;
* the admission scan: ``_owed``'s sums and ``_dominant_share`` without Python calls, the limits made only when a
  queue needs its candidates, a gang's total of alike tasks by a product;
* a Wing run: its lake's inputs read once per remembered lake, the jobs built and the outcome collected on plain
  numbers (each job's value counted by ``np.bincount``: ``value_attained``'s counts), the collector paused from
  the jobs' making to the outcome (as the model pauses it while it runs).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import resource
import time

import networkx as nx
import numpy as np
import pandas as pd

from cluster_sim.config import count
from cluster_sim.engine import CapacityClusterModel, QueueSpec
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
from cluster_sim.wing.lake import PAIRS_ENVELOPE, closure_pairs_per_job
from cluster_sim.wing.provenance import DAY
from cluster_sim.wing.scheduling import POLICIES, WingConfig, run
from cluster_sim.wing.scheduling.config import POLICY_NAMES, TAIL_DAYS
from cluster_sim.wing.scheduling import workload as scheduling_workload
from cluster_sim.wing.scheduling.experiments import build_jobs, engine_config, queue_plan
from cluster_sim.wing.scheduling.workload import prepare

#: the capacities of Lab 05's section, and the simulated size issue 12 names
CAPACITIES = (1.0, 0.8, 0.6, 0.4, 0.2)
ISSUE_JOBS = 5_000


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def cpu_timed(fn, *args, **kwargs):
    """``fn``'s result, wall seconds and CPU seconds of this process (the machine is shared: wall time waits too)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def peak_rss_gib() -> float:
    """This process's peak resident memory so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def load() -> str:
    """The machine's load average (1, 5, 15 min), to read any time printed beside it."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


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


def plain_engine(config: WingConfig, w) -> tuple[float, int, float]:
    """The baseline: the engine alone on the run's jobs, queues and machines (user priority, no Wing inputs).
    Returns its wall seconds, events and CPU seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    machines, specs, _ = queue_plan(config, w.peaks, w.jobs.groupby("org")["containers"].max())
    jobs = build_jobs(w, specs is None)
    specs = [QueueSpec(s.name, share=s.share, max_share=s.max_share, order="priority", backfill=config.backfill)
             for s in specs]
    model = CapacityClusterModel(engine_config(config, w, machines), specs, jobs=jobs, elastic=False,
                                 record_series=False)
    model.run_until(w.horizon)
    model.check_invariants()
    done = sum(not math.isnan(j.finish) for j in jobs)
    events = len(jobs) + len(model.capacity_scheduler.admissions) + done + sum(len(j.tasks) for j in jobs)
    return time.perf_counter() - t0, events, time.process_time() - c0


def bench_config(jobs_per_day: int, seed: int = 0, omega_days: float | None = None,
                 history_days: int | None = None, max_memory_gib: float | None = None) -> WingConfig:
    """The scheduling section's config: ``WingConfig.paper()`` with one simulated day of ``jobs_per_day`` (a
    bigger lake on purpose: ``max_jobs`` is raised to fit it) and, if given, another ω, history or memory cap.
    Anything the config does not allow is refused with its ValueError (naming the field, the value and what is
    allowed), before anything is built."""
    paper = WingConfig.paper()
    if isinstance(jobs_per_day, bool) or not isinstance(jobs_per_day, int):
        raise ValueError(f"jobs_per_day={jobs_per_day!r} is not allowed: give a whole number of jobs a day "
                         f"(at least 20, WingConfig.jobs_per_day)")
    changes = {name: value for name, value in (("omega_days", omega_days), ("history_days", history_days),
                                               ("max_memory_gib", max_memory_gib)) if value is not None}
    days = changes.get("history_days", paper.history_days) + 1 + TAIL_DAYS
    return paper.replace(jobs_per_day=jobs_per_day, run_days=1, seed=seed,
                         max_jobs=max(paper.max_jobs, days * max(jobs_per_day, 0)), **changes)


def window_note(config: WingConfig) -> str:
    """What the header says about ω and the history when they are not the paper's (a week, two weeks)."""
    paper = WingConfig.paper()
    if (config.omega_days, config.history_days) == (paper.omega_days, paper.history_days):
        return f"ω = {config.omega_days:g} days and {config.history_days} days of history, as in the paper"
    return (f"ω = {config.omega_days:g} days and {config.history_days} days of history, NOT the paper's "
            f"ω = {paper.omega_days:g} days and {paper.history_days} days (--omega-days, --history-days). Why: Owl's "
            f"aggregate within ω is by definition a sum over every (ancestor, descendant) pair within ω, and at the "
            f"paper's window this lake's closure is estimated at {paper_window_gib(config):.1f} GiB; the shorter "
            f"window keeps it small, so the scheduling side runs at this size, but the aggregates, Wing's "
            f"predictions and the Oracles' keys are those of a {config.omega_days:g}-day window, not the paper's")


def paper_window_gib(config: WingConfig) -> float:
    """The estimated memory of ``config`` at the paper's ω and history (a week, two weeks)."""
    paper = WingConfig.paper()
    big = config.replace(omega_days=paper.omega_days, history_days=paper.history_days, max_memory_gib=4096.0,
                         max_jobs=max(config.max_jobs, (paper.history_days + 1 + TAIL_DAYS) * config.jobs_per_day))
    return big.work().gib


@contextlib.contextmanager
def timed_closures():
    """The CPU seconds of each :func:`owl_closure` that ``prepare`` calls inside the block (the history's, then the
    Oracles'): a list of (what, seconds), filled as they run. The function is wrapped, not changed."""
    seen: list[tuple[str, float]] = []
    inner = scheduling_workload.owl_closure

    def wrapped(*args, **kwargs):
        out, _, c = cpu_timed(inner, *args, **kwargs)
        seen.append(("the history's" if not seen else "the Oracles'", c))
        return out
    scheduling_workload.owl_closure = wrapped
    try:
        yield seen
    finally:
        scheduling_workload.owl_closure = inner


def scheduling(config: WingConfig, capacities=CAPACITIES) -> pd.DataFrame:
    """Lab 05: every policy at each capacity on one simulated day of ``config`` (:func:`bench_config`), each
    beside a plain engine run."""
    work = config.work()
    print(f"\nLab 05: value-aware scheduling, one simulated day of {config.jobs_per_day} jobs/day; "
          f"{window_note(config)}")
    print(f"estimated {work.gib:.1f} GiB ({work.memory_formula}); cap max_memory_gib={config.max_memory_gib:g}; "
          f"lake generation alone {config.lake_config().work().gib:.1f} GiB (LakeConfig.work); load {load()}")
    # prepared once here and handed to every run (workload=): workload_for would keep the lake in the
    # module's memo and return a deep copy of it, twice the memory at this size, for the same runs
    lake, t_lake, c_lake = cpu_timed(generate_lake, config.lake_config())
    print(f"lake generated: {len(lake.jobs)} jobs, {len(lake.prov)} ProvRepo rows in {t_lake:.1f} s (CPU "
          f"{c_lake:.1f} s, peak RSS {peak_rss_gib():.2f} GiB, load {load()})")
    with timed_closures() as closures:
        w, t_prep, c_prep = cpu_timed(prepare, config, lake)
    print(f"prepare (without the lake): {t_prep:.1f} s, CPU {c_prep:.1f} s, of which Owl's closures within ω "
          + " and ".join(f"{c:.1f} s CPU ({what})" for what, c in closures) + f"; peak RSS {peak_rss_gib():.2f} GiB")
    t_prep, c_prep = t_prep + t_lake, c_prep + c_lake
    n = len(w.jobs)
    size = "the size issue 12 names" if n >= 0.9 * ISSUE_JOBS else f"issue 12 names about {ISSUE_JOBS} jobs"
    print(f"{n} simulated jobs ({size}); lake and Wing's profiles prepared in {t_prep:.1f} s (CPU {c_prep:.1f} s, "
          f"load {load()}, peak RSS {peak_rss_gib():.2f} GiB): {len(w.history)} history jobs, "
          f"{len(w.deps)} dependencies among the run's jobs, {int(w.achievable)} downloads achievable")
    print(f"{'capacity':>8} {'policy':>19} {'value':>6} {'failed':>6} {'wall':>8} {'CPU':>8} {'events':>7} "
          f"{'events/s':>9} {'RATIO':>7}")
    rows = []
    for cap in capacities:
        t_plain, ev_plain, c_plain = plain_engine(config.replace(capacity=cap), w)
        print(f"{cap:8.1f} {'plain engine':>19} {'':>6} {'':>6} {t_plain:6.2f} s {c_plain:6.2f} s {ev_plain:7d} "
              f"{ev_plain / t_plain:9.0f} {1.0:6.2f}x")
        for p in POLICIES:
            r, _, c_run = cpu_timed(run, config.replace(capacity=cap, policy=p), workload=w)
            rows.append({"capacity": cap, "policy": POLICY_NAMES[p], "value_share": r.value_share, "failed": r.failed_jobs,
                         "wall": r.wall_seconds, "cpu": c_run, "events": r.events, "plain": t_plain,
                         "plain_cpu": c_plain, "plain_events": ev_plain})
            print(f"{cap:8.1f} {POLICY_NAMES[p]:>19} {100 * r.value_share:5.1f}% {r.failed_jobs:6d} {r.wall_seconds:6.2f} s "
                  f"{c_run:6.2f} s {r.events:7d} {r.events / r.wall_seconds:9.0f} {r.wall_seconds / t_plain:6.2f}x")
    t = pd.DataFrame(rows)
    wall = t.pivot(index="capacity", columns="policy", values="wall")
    total = t["wall"].sum() + t.groupby("capacity")["plain"].first().sum()
    cpu = t["cpu"].sum() + t.groupby("capacity")["plain_cpu"].first().sum()
    print(f"RATIO Wing run / plain engine (median over the {len(t)} runs) = {(t['wall'] / t['plain']).median():.2f}x "
          f"(CPU {(t['cpu'] / t['plain_cpu']).median():.2f}x); PRIO / Wing-Agg = "
          + ", ".join(f"{c:g}: {wall.loc[c, 'PRIO'] / wall.loc[c, 'Wing-Agg']:.2f}x" for c in capacities))
    print(f"events/s: Wing runs {t['events'].sum() / t['wall'].sum():.0f}, plain engine "
          f"{t.groupby('capacity')['plain_events'].first().sum() / t.groupby('capacity')['plain'].first().sum():.0f}; "
          f"section total {total:.0f} s, CPU {cpu:.0f} s (+ {t_prep:.0f} s, CPU {c_prep:.0f} s preparing); "
          f"peak RSS {peak_rss_gib():.2f} GiB; load {load()}")
    return t


def window_pairs(deps: pd.DataFrame, jobs: pd.DataFrame, omega: float, sources) -> np.ndarray:
    """For each job of ``sources``, how many (ancestor, descendant) pairs within ω it heads in the closure of
    ``deps`` (``job`` reads ``depOn``; ``jobs``: ``job``, ``submit``, ``end``): its descendants ``d`` with
    ``submit[d] <= end + ω``, the keep test of :func:`owl_closure`. A reader is submitted after its input ends,
    so submits grow along a path and a breadth-first walk may stop at a job past the window. Counts only (one
    job's descendants at a time), so a sample of ancestors estimates a closure too big to build."""
    ids = pd.Index(jobs["job"])
    up, down = ids.get_indexer(deps["depOn"]), ids.get_indexer(deps["job"])
    ok = (up >= 0) & (down >= 0)
    order = np.argsort(up[ok], kind="stable")
    up, down = up[ok][order], down[ok][order]
    indptr = np.searchsorted(up, np.arange(len(ids) + 1))
    submit, end = jobs["submit"].to_numpy(float), jobs["end"].to_numpy(float)
    seen = np.zeros(len(ids), bool)
    counts = np.zeros(len(sources), np.int64)
    for i, u in enumerate(ids.get_indexer(pd.Index(sources))):
        if u < 0:
            raise ValueError(f"sources holds job {sources[i]!r}, which is not in jobs: give jobs of the table")
        limit, frontier, reached = end[u] + omega, np.array([u]), []
        while frontier.size:
            lo, n = indptr[frontier], indptr[frontier + 1] - indptr[frontier]
            kids = np.unique(down[np.repeat(lo - np.r_[0, n.cumsum()[:-1]], n) + np.arange(n.sum())])
            frontier = kids[~seen[kids] & (submit[kids] <= limit)]
            seen[frontier] = True
            reached.append(frontier)
        done = np.concatenate(reached)
        counts[i] = len(done)
        seen[done] = False
    return counts


def window_pairs_section(jobs_per_day: int, seed: int, history_days: int, omegas, samples: int) -> None:
    """The history's closure within each ω of ``omegas`` at ``jobs_per_day``, estimated from ``samples`` ancestors
    drawn at random (:func:`window_pairs`): what ``prepare`` would build, counted without building it."""
    config = bench_config(jobs_per_day, seed, min(omegas), history_days, 4096.0)  # nothing of the closure is held
    lake, _, c_lake = cpu_timed(generate_lake, config.lake_config())
    rs = config.run_start
    prov_h = lake.prov[lake.prov["time"] < rs]
    hist = lake.jobs[lake.jobs["end"] < rs].reset_index(drop=True)
    deps = single_hop(prov_h)
    deps = deps[deps["job"].isin(hist["job"])][["job", "depOn"]].drop_duplicates()
    print(f"\nthe history's closure within ω, sampled: {jobs_per_day} jobs a day, {history_days} days of history, "
          f"seed {seed}: {len(hist)} history jobs, {len(deps)} dependencies (lake CPU {c_lake:.1f} s, peak RSS "
          f"{peak_rss_gib():.2f} GiB, load {load()})")
    sources = np.random.default_rng(seed).choice(hist["job"].to_numpy(), size=min(samples, len(hist)), replace=False)
    for om in omegas:
        counts, _, c = cpu_timed(window_pairs, deps, hist, om * DAY, sources)
        mean, half = counts.mean(), 1.96 * counts.std(ddof=1) / math.sqrt(len(counts))
        est = config.replace(omega_days=om, history_days=history_days, max_memory_gib=4096.0)
        per_job = closure_pairs_per_job(jobs_per_day, om, config.orgs)
        print(f"ω {om:g} days: {mean:.0f} ± {half:.0f} pairs a history job (95 %, {len(counts)} sampled; largest "
              f"{counts.max()}), about {count(mean * len(hist))} pairs in all [{count((mean - half) * len(hist))}, "
              f"{count((mean + half) * len(hist))}]; the estimate {per_job:.0f} a job (the fit {per_job / PAIRS_ENVELOPE:.0f}), "
              f"{est.work().gib:.1f} GiB; CPU {c:.1f} s")


_CLAIMS05 = """
import json, os, sys, tempfile, time
src = sys.argv[1]
if src:  # an older checkout's code first, without this worktree's editable install
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in repr(f)]
    sys.path.insert(0, src)
os.environ["CLUSTER_SIM_PROGRESS"] = "off"
os.environ["CLUSTER_SIM_SWEEP_CLIENT"] = "inprocess"
import cluster_sim
from cluster_sim.wing.scheduling.claims import claims_runs
from cluster_sim.wing.scheduling.config import WingConfig
c0, t0 = time.process_time(), time.perf_counter()
df = claims_runs(WingConfig.ci(), pool_size=int(sys.argv[2]), cache=tempfile.mkdtemp())
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
df.drop(columns=["wall_seconds"]).to_pickle(sys.argv[3])
print(json.dumps(dict(cpu=cpu, wall=wall, runs=len(df), where=os.path.dirname(cluster_sim.__file__))))
"""


def claims05_against_checkout(src: str, pool_size: int, rounds: int) -> None:
    """Lab 05's claims pool at ``ci`` (``claims_runs(WingConfig.ci(), pool_size=...)``, through run_grid in this
    process, a fresh cache each time) by an older checkout's code (``src``: a directory holding its
    ``cluster_sim``, e.g. ``git archive 9402da2 cluster_sim | tar -x -C /tmp/old``) and by this one, in fresh
    processes taken in turns; the RATIO of their CPU times (the median of each side's rounds), and whether both
    computed the same frame of runs (``pd.testing.assert_frame_equal``, the runs' wall times left out)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    times: dict[str, list[float]] = {"before": [], "now": []}
    frames: dict[str, pd.DataFrame] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for side, where in (("before", src), ("now", "")):
                out_file = os.path.join(tmp, f"{side}{r}.pkl")
                out = subprocess.run([sys.executable, "-c", _CLAIMS05, where, str(pool_size), out_file], check=True,
                                     capture_output=True, text=True).stdout
                res = json.loads(out.strip().splitlines()[-1])
                times[side].append(res["cpu"])
                frames[side] = pd.read_pickle(out_file)
                print(f"  {side:<6} claims_runs(ci, pool_size={pool_size}): {res['runs']} runs, cpu {res['cpu']:6.2f}s "
                      f"wall {res['wall']:6.2f}s (code in {res['where']}) load {os.getloadavg()[0]:.1f}", flush=True)
    try:
        pd.testing.assert_frame_equal(frames["before"], frames["now"])
        same = True
    except AssertionError:
        same = False
    before, now = (sorted(times[k])[len(times[k]) // 2] for k in ("before", "now"))
    print(f"RATIO before / now = {before / now:4.2f}x CPU time (medians of {rounds}: {before:.2f}s / {now:.2f}s); "
          f"same frame of runs: {same}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of a paper-scale day (4k jobs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--part", choices=("all", "pipeline", "scheduling", "window-pairs", "claims05"), default="all",
                    help="Lab 04's pipeline, Lab 05's scheduling section, or both; or the history's closure "
                         "within ω sampled (window-pairs: --sched-jobs-per-day, --history-days, --omegas); or "
                         "Lab 05's claims pool at ci by an older checkout's code (--before) against this one (claims05)")
    ap.add_argument("--before", help="claims05: a directory holding an older checkout's cluster_sim")
    ap.add_argument("--pool-size", type=int, default=4, help="claims05: seeds in the claims pool (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="claims05: runs of each side, in turns (default %(default)s)")
    ap.add_argument("--omegas", default="1,3.5,7", help="window-pairs: the ω to count, in days (default %(default)s)")
    ap.add_argument("--samples", type=int, default=10_000, help="window-pairs: ancestors sampled (default %(default)s)")
    ap.add_argument("--sched-jobs-per-day", type=int, default=None,
                    help="lake size of the scheduling section (default 5000, --quick 300) and of window-pairs (default 40000)")
    ap.add_argument("--capacities", default=",".join(f"{c:g}" for c in CAPACITIES),
                    help="capacities of the scheduling section, comma-separated (default %(default)s)")
    ap.add_argument("--omega-days", type=float, default=None,
                    help="ω of the scheduling section, in days (default the paper's 7; WingConfig allows 0.25-7 "
                         "and at most half of the history): a 40k-job day fits this machine only with a short ω")
    ap.add_argument("--history-days", type=int, default=None,
                    help="days of history of the scheduling section (default the paper's 14; WingConfig allows 7-28)")
    ap.add_argument("--max-memory-gib", type=float, default=None,
                    help="raise WingConfig's memory cap (default 8 GiB) on purpose for a bigger run")
    args = ap.parse_args()
    if args.part == "claims05":
        import os

        if not args.before or not os.path.isdir(os.path.join(args.before, "cluster_sim")):
            raise SystemExit(f"--before={args.before!r} is not allowed: give a directory holding an older checkout's "
                             "cluster_sim (git archive <commit> cluster_sim | tar -x -C <dir>)")
        if args.pool_size < 2 or args.rounds < 1:
            raise SystemExit(f"--pool-size={args.pool_size} and --rounds={args.rounds} are not allowed: a pool of 2 "
                             "seeds or more, 1 round or more")
        claims05_against_checkout(args.before, args.pool_size, args.rounds)
        return
    if args.part in ("all", "pipeline"):
        pipeline_section(args.quick, args.seed)
    if args.part == "window-pairs":
        try:
            try:
                omegas = tuple(float(o) for o in args.omegas.split(","))
            except ValueError:
                raise ValueError(f"--omegas={args.omegas!r} is not allowed: give days (0.25-7) separated by commas")
            history = 14 if args.history_days is None else args.history_days
            for om in omegas:  # each ω as the config allows it, before the lake is built
                bench_config(args.sched_jobs_per_day or 40_000, args.seed, om, history, 4096.0)
            if args.samples < 2:
                raise ValueError(f"--samples={args.samples} is not allowed: give at least 2 (an interval needs two)")
        except ValueError as e:
            raise SystemExit(f"refused: {e}")
        window_pairs_section(args.sched_jobs_per_day or 40_000, args.seed, history, omegas, args.samples)
    if args.part in ("all", "scheduling"):
        per_day = args.sched_jobs_per_day or (300 if args.quick else ISSUE_JOBS)
        try:
            capacities = tuple(float(c) for c in args.capacities.split(","))
        except ValueError:
            raise SystemExit(f"--capacities={args.capacities!r} is not allowed: give numbers in (0, 1] separated by commas")
        try:  # a size over the config's caps, or a window it does not allow, is refused before anything is built
            config = bench_config(per_day, args.seed, args.omega_days, args.history_days, args.max_memory_gib)
            config.replace(capacity=min(capacities)).replace(capacity=max(capacities))
        except ValueError as e:
            raise SystemExit(f"refused: {e}")
        scheduling(config, capacities)


def pipeline_section(quick: bool, seed: int) -> None:
    """Lab 04: a paper-scale day through single_hop and owl_value, beside the networkx baseline."""
    per_day, budget = (4_000, 5.0) if quick else (40_000, 20.0)

    lake, jobs, prov, t_gen = make_day(per_day, seed)
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
