"""Lab 00's claims (the tour, ``notebooks/00_cluster_sim_tour.ipynb``), measured over a seed pool.

The tour rebuilds no paper; what it claims is what the engine promises and what stale views do:

* **identities** of exact time integrals, which hold on every run to the last bit or so: Little's law
  ``L = λW`` (the mean queue length equals the rate of tasks entering the queue times their mean time
  in it, counted up to the horizon), utilisation computed from the task records, and no work lost
  (what the jobs offered = what ran + what still runs or waits at the horizon). Each is an ``"equal"``
  claim with a band of ±1e-9: rounding moves them by 1e-12 at most in the runs we made (ci and
  default), a task lost or counted twice by its share of C·T (or its time in the queue over T);
* **stale views** ([RMiner] §2.1–2.2, after [Omega]): with an always-fresh view no commit can fail;
  with views refreshed every 0.5 s, parallel schedulers conflict; with 4 s views, jobs wait longer.
  Each is measured as a paired difference against always-fresh views on the same seeds (the same
  workload), on the tour's stale cluster (:data:`STALE`: 4 schedulers at load 0.9).

The claims run through :func:`cluster_sim.sweep.run_grid` (cached, Dask when long) with
:func:`tour_metrics`, the engine's metrics plus both sides of each identity.

**The pool.** The identities hold at any seed; their intervals are 1e-12 wide at most. What sets the
pool's size is ``waiting_grows_with_staleness``: the gap in mean job wait between 4 s views and fresh
ones is positive at every seed we ran (ci seeds 0-59, default seeds 0-29) but varies about as much
as its mean from seed to seed (ci: 0.2 to 12 s), because the load the workload happens to offer
varies. A 95 % t interval clears zero for every window of consecutive seeds we tried from 8 seeds on
at ci and 6 at default; :data:`POOL_SIZE` takes 10 and 8, so a seed override (which shifts the pool)
keeps the claim's interval clear of zero with margin.

>>> from cluster_sim.engine import ClusterConfig
>>> table = claims_table(ClusterConfig.ci().replace(horizon=60.0), pool_size=3, client="inprocess", cache=False)
>>> table.set_index("claim").loc[["littles_law", "fresh_views_never_conflict"], "verdict"].tolist()
['reproduced', 'reproduced']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..claims import Claim, measure, pool
from ..sweep import run_grid, start_ahead
from .cluster_config import ClusterConfig
from .metrics import work_accounting
from .model import ClusterResult, run

__all__ = ["CLAIMS", "DECISION_LOAD", "DECISION_POINTS", "POOL_SIZE", "STALE", "STALE_DELAYS", "claims_table",
           "STALE_MAX_MACHINES", "decision_throughput", "default_pool_size", "FAMILY_METRICS", "SHARED_STATE", "STALE_SWEEP",
           "shared_state_metrics", "start_sweeps_ahead", "estimated_seconds", "offered_task_rate", "pool_runs", "stale_config",
           "tour_metrics", "accounting", "littles_law"]

#: the tour's stale cluster (§4): more schedulers and a busier cluster than the tour's own run
STALE = {"schedulers": 4, "load": 0.9}
#: the stale cluster's largest size. §4's sweep and the claims' pool run it about a dozen times; at RMiner's 1,500
#: machines (``paper``) one run at load 0.9 is 5.2 M tasks, past the engine's ``max_events`` and about 7 minutes each
#: here, so at ``paper`` the stale cluster keeps the paper's machine shape on the teaching preset's 50 machines (the
#: tour's own run stays at the paper's size). Conflicts and waits are per commit and per job: they need a busy
#: cluster, not a big one.
STALE_MAX_MACHINES = 50
#: the view refresh periods the claims compare: always fresh, and §4's smallest and largest staleness
STALE_DELAYS = (0.0, 0.5, 4.0)
#: seeds per pool, per preset (see the module docstring); a config that is no preset gets the largest
POOL_SIZE = {"ci": 10, "default": 8, "paper": 3}
#: the identities' band: rounding moves them by 1e-12 at most (module docstring)
IDENTITY_TOLERANCE = 1e-9

CLAIMS = [
    Claim("littles_law", "Little's law holds over every run: the mean queue length L equals λW, the rate of "
          "tasks entering the queue times their mean time in it (counted up to the horizon)",
          "Little's law; tour §3", "mean_queue_length", baseline="lambda_w", direction="equal",
          tolerance=IDENTITY_TOLERANCE, must=True,
          why="an identity of exact time integrals: a gap means the engine lost a task or counted one twice",
          hint="a bug in the engine's queue accounting: compare model.queue_length with the task records of one "
               "run (tour §3's cell)"),
    Claim("utilisation_exact", "Utilisation is an exact integral: the engine's equals Σ cpu·(min(finish, T) − "
          "start) / (C·T) computed from the task records", "tour §3", "utilisation",
          baseline="utilisation_from_records", direction="equal", tolerance=IDENTITY_TOLERANCE, must=True,
          why="the engine integrates the ledger's allocation at every change; the task records must give the same "
              "area", hint="a bug in the ledger's usage integral or in a task's start/finish times"),
    Claim("nothing_lost", "Nothing is lost: the work the jobs offered equals the work done plus the work still "
          "running or waiting at the horizon (shares of C·T)", "tour §3", "offered_share",
          baseline="accounted_share", direction="equal", tolerance=IDENTITY_TOLERANCE, must=True,
          why="every task ends in exactly one state; a gap is work that vanished or ran twice",
          hint="a task whose state, start or finish is wrong: model.check_invariants() names the rule"),
    Claim("fresh_views_never_conflict", "An always-fresh view never conflicts: with update_delay = 0 no commit "
          "is rejected", "[RMiner] §2.1 (after [Omega]); tour §4", "conflicts", treatment={"update_delay": 0.0},
          baseline=0.0, direction="equal", tolerance=IDENTITY_TOLERANCE, must=True,
          why="a scheduler that sees the true state never picks resources that are taken; one conflict at one "
              "seed widens the interval past the band",
          hint="a local view that is not refreshed at every change when update_delay = 0"),
    Claim("stale_views_conflict", "Stale views make parallel schedulers conflict: conflicts per commit attempt "
          "with views 0.5 s old, against always-fresh views on the same workload", "[RMiner] §2.1; tour §4",
          "conflict_rate", treatment={"update_delay": 0.5}, baseline={"update_delay": 0.0}, direction="higher",
          must=True, why="the shared-state design's central cost: two schedulers pick the same free slot on their "
                         "copies and the second commit fails",
          hint="a busier cluster or more schedulers (STALE); check that views are refreshed only every update_delay"),
    Claim("waiting_grows_with_staleness", "Stale views make jobs wait: mean job wait (arrival to first task "
          "start) with views 4 s old, against always-fresh views on the same workload",
          "[RMiner] §2.2 (shadow resources); tour §4", "mean_job_wait", treatment={"update_delay": 4.0},
          baseline={"update_delay": 0.0}, direction="higher", must=True,
          why="a scheduler whose view shows no room waits for the next refresh although the central state has "
              "room: released resources stay invisible (RMiner's shadow resources)",
          hint="the gap varies with the load each seed offers: more seeds (pool_size) before anything else"),
]


def stale_config(config: ClusterConfig) -> ClusterConfig:
    """The tour's stale cluster (§4): ``config`` with :data:`STALE`'s schedulers and load, on at most
    :data:`STALE_MAX_MACHINES` machines (the machines keep their shape; ci and default are below the cap).

    >>> stale_config(ClusterConfig.paper()).machines, stale_config(ClusterConfig.ci()).machines
    (50, 10)
    """
    return config.replace(machines=min(config.machines, STALE_MAX_MACHINES), **STALE)


#: §4's sweep of the stale cluster's view refresh period (one seed)
STALE_SWEEP = {"update_delay": [0.0, 0.5, 1.0, 2.0, 4.0]}
#: §5's shared-state cluster beside the capacity scheduler, and the metrics its table compares
SHARED_STATE = {"schedulers": 4, "update_delay": 1.0}
FAMILY_METRICS = ["utilisation", "mean_job_wait", "conflicts", "jobs_completed"]

#: §5's decision-throughput example: each decision takes DECISION_LOAD / λ seconds (λ the tasks offered per second),
#: so one scheduler would be busy DECISION_LOAD of the time (Little's law on the scheduler): it cannot keep up
DECISION_LOAD = 2.0
#: §5's two arms: one scheduler on the true state (a monolithic scheduler), four sharing it on views 0.5 s old
DECISION_POINTS = ({"schedulers": 1, "update_delay": 0.0}, {"schedulers": 4, "update_delay": 0.5})


def offered_task_rate(config: ClusterConfig) -> float:
    """λ, the tasks the workload offers per second (jobs per second x mean tasks per job, nominal means)."""
    return config.arrival_rate() * config.tasks_per_job


def _decision_sweep(config: ClusterConfig, seeds=None) -> dict:
    """:func:`decision_throughput`'s ``run_grid`` arguments (also what :func:`start_sweeps_ahead` starts)."""
    think = DECISION_LOAD / offered_task_rate(config)
    # three decimals as the panel's slider steps; at paper (λ = 7,680 tasks/s) that is 0, so three digits there
    base = config.replace(think_time=round(think, 3) or float(f"{think:.3g}"))
    # the arms are the engine's own run of their configs, which config.work() estimates: at paper (about 3 min of
    # CPU each) both start at once on two workers, where timing the first here ran them one after the other
    return dict(run=run, base_config=base, grid=[dict(p) for p in DECISION_POINTS], seeds=seeds,
                metrics=tour_metrics, estimate=estimated_seconds)


def decision_throughput(config: ClusterConfig, *, seeds=None, client=None, cache=None) -> pd.DataFrame:
    """§5: ``config`` with a decision time of :data:`DECISION_LOAD` / λ per task, run with one scheduler on the
    true state and with four on views 0.5 s old (:data:`DECISION_POINTS`); one row per arm and seed with
    :func:`tour_metrics` and the think time. The engine's schedulers already spend ``think_time`` per task; only
    its value changes here, so no other result moves."""
    return _run_sweep(_decision_sweep(config, seeds), client, cache)


def _run_sweep(sweep: dict, client, cache) -> pd.DataFrame:
    """``run_grid`` over one of this module's sweeps (the arguments :func:`start_sweeps_ahead` starts ahead)."""
    fn, base, grid, metrics = sweep["run"], sweep["base_config"], sweep["grid"], sweep["metrics"]
    return run_grid(fn, base, grid, seeds=sweep.get("seeds"), metrics=metrics, client=client, cache=cache,
                    estimate=sweep["estimate"])


def _shared_state_sweep(config: ClusterConfig) -> dict:
    return dict(run=run, base_config=config, grid=[dict(SHARED_STATE)], metrics=tour_metrics,
                estimate=estimated_seconds)


def shared_state_metrics(config: ClusterConfig, *, client=None, cache=None) -> pd.Series:
    """§5's shared-state cluster beside the capacity scheduler: :data:`FAMILY_METRICS` of
    ``run(config.replace(**SHARED_STATE))``, through ``run_grid`` (cached; at ``paper`` computed ahead on a worker
    while the kernel runs the capacity scheduler, see :func:`start_sweeps_ahead`)."""
    row = _run_sweep(_shared_state_sweep(config), client, cache).iloc[0]
    # plain Python numbers in an object column, as vars(run(...).metrics) gave the notebook's table: the same display
    return pd.Series({k: row[k].item() if isinstance(row[k], np.generic) else row[k] for k in FAMILY_METRICS},
                     dtype=object)


def _stale_sweep(config: ClusterConfig) -> dict:
    return dict(run=run, base_config=stale_config(config), grid=STALE_SWEEP, metrics=tour_metrics,
                estimate=estimated_seconds)


def start_sweeps_ahead(config: ClusterConfig, *, pool_size: int | None = None, cache=None):
    """At ``paper``, start the tour's sweeps and side runs now on a Dask worker, in the order the notebook reads
    them (§4's stale sweep, §5's shared-state cluster and decision-throughput arms, §7's claims pool), while the
    kernel runs the tour's own cluster and the capacity scheduler (minutes on one core, which the sweeps need nothing
    from). Each point lands in the sweep cache; the notebook's cells then run the same ``run_grid`` calls and read
    them (waiting for those still running), so every number is the one they would have computed themselves.
    Returns :func:`cluster_sim.sweep.start_ahead`'s handle, or None where nothing is worth starting (``ci`` and
    ``default``: the points take seconds; the test suite; no sweep cache)."""
    return start_ahead([_stale_sweep(config), _shared_state_sweep(config), _decision_sweep(config),
                        _pool_sweep(config, pool_size)], cache=cache)


def estimated_seconds(config: ClusterConfig) -> float:
    """The engine's estimate of ``run(config)``'s time (``config.work().seconds``): a ``run_grid`` estimate=."""
    return config.work().seconds


def accounting(result: ClusterResult) -> dict:
    """Utilisation from the task records, and the work offered and accounted for, as shares of C·T.

    ``done`` is Σ cpu·(min(finish, T) − start) over the tasks that started; ``left`` is what the
    running tasks still have to run after T plus the whole service of the tasks not started; a task's
    service is its duration over its machine's speed (its nominal duration if it never ran).
    """
    shares = work_accounting(result.tasks, result.metrics.time, float(result.capacity[0]), result.config.speeds())
    return {"utilisation_from_records": shares["done"], "accounted_share": shares["done"] + shares["left"],
            "offered_share": shares["offered"]}


def littles_law(result: ClusterResult) -> dict:
    """λ (tasks entering the scheduler queues per second), W (their mean time there, counted up to the
    horizon for those still queued) and λW, the other side of Little's law ``L = λW``."""
    t, T = result.tasks, result.metrics.time
    released = ~np.isnan(t["released"])
    in_queue = (np.where(np.isnan(t["start"]), T, t["start"]) - t["released"])[released]
    lam = float(released.sum() / T)
    w = float(in_queue.mean()) if in_queue.size else 0.0
    return {"lambda": lam, "w": w, "lambda_w": lam * w}


def tour_metrics(result: ClusterResult) -> dict:
    """The engine's metrics of a run and both sides of the tour's identities (a ``run_grid`` metrics=)."""
    m = result.metrics
    return {"utilisation": m.utilisation, "mean_queue_length": m.mean_queue_length,
            "mean_job_wait": m.mean_job_wait, "mean_job_completion": m.mean_job_completion,
            "conflicts": m.conflicts, "commits": m.commits, "conflict_rate": m.conflict_rate,
            "jobs_completed": m.jobs_completed, **littles_law(result), **accounting(result)}


def default_pool_size(config: ClusterConfig) -> int:
    """The pool's size for ``config``'s preset (:data:`POOL_SIZE`); the largest for a config that is
    no preset (its noise is unknown)."""
    return POOL_SIZE.get(config.preset_name(), max(POOL_SIZE.values()))


def _pool_sweep(config: ClusterConfig, pool_size: int | None = None) -> dict:
    seeds = pool(config.seed, default_pool_size(config) if pool_size is None else pool_size)
    return dict(run=run, base_config=stale_config(config), grid={"update_delay": list(STALE_DELAYS)}, seeds=seeds,
                metrics=tour_metrics, estimate=estimated_seconds)


def pool_runs(config: ClusterConfig, *, pool_size: int | None = None, client=None, cache=None) -> pd.DataFrame:
    """The runs the claims read: the stale cluster at :data:`STALE_DELAYS`, at the seeds
    ``claims.pool(config.seed, pool_size)`` (default: :func:`default_pool_size`); one row per delay
    and seed, with :func:`tour_metrics`. ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    return _run_sweep(_pool_sweep(config, pool_size), client, cache)


def claims_table(config: ClusterConfig, *, pool_size: int | None = None, client=None, cache=None) -> pd.DataFrame:
    """The tour's claims (:data:`CLAIMS`) measured on :func:`pool_runs`: one row per claim, with its
    paired difference, 95 % interval and verdict (:func:`cluster_sim.claims.measure`)."""
    return measure(CLAIMS, pool_runs(config, pool_size=pool_size, client=client, cache=cache), lab="00")
