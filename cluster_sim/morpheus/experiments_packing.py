"""Lab 03's experiments around the pure packing layer and the simulation: Fig. 6 and 7 reproduced, many
jobs packed (LowCost against earliest-first), ad hoc jobs in the residual, LowCost against the MILP
optimum on tiny instances, the footprints of Fig. 10 and the paper-vs-ours table.

Example
-------
>>> fig7_example().stage_steps()
[(0, 4), (5, 10), (11, 18), (19, 19)]
>>> plan, names = lcm_example()
>>> plan.horizon, len(plan.allocations)
(60, 3)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..claims import Claim, measure, pool
from ..sweep import run_grid
from .config import ARMS, MorpheusConfig, TinyInstanceConfig
from .exact import theorem_6_1_bound, tiny_instance
from .lowcost import AdHocJob, PeriodicJob, lowcost_window
from .plan import ReservationPlan
from .simulation import compare, footprint, run

__all__ = ["FIG7", "fig7_example", "lcm_example", "pack_many", "adhoc_in_residual", "competitive_table",
           "footprints", "fig10a", "claims_table", "CLAIMS", "THEOREM_CLAIMS"]

#: Fig. 7's job: the paper gives stage 3's 16 of a remaining 38 and the 19 steps left; the rest is ours
FIG7 = dict(period=20, a=0, d=20, demands=(10, 12, 16, 8), gang=(1, 1, 1, 8))


def fig7_example(capacity: int = 10):
    """LowCost on Fig. 7's job in an empty 20-step window of ``capacity`` containers."""
    job = PeriodicJob(**FIG7)
    return lowcost_window(np.zeros((1, job.window)), np.full((1, job.window), float(capacity)), np.ones(1),
                          job.demands, job.gangs)


def lcm_example():
    """Fig. 6: jobs with periods 15, 20 and 30 minutes on a 60-minute LCM plan of 10 containers."""
    plan = ReservationPlan(10, 60)
    jobs = [("every 15 min", PeriodicJob(15, 0, 15, (3, 3, 2))), ("every 20 min", PeriodicJob(20, 2, 20, (4, 4))),
            ("every 30 min", PeriodicJob(30, 5, 30, (2, 5, 5, 2)))]
    for _, job in jobs:
        if plan.place(job) is None:
            raise AssertionError(f"the Fig. 6 example no longer fits: {plan.last_refusal}")
    return plan, [name for name, _ in jobs]


def _skyline(rng, K: int) -> list[int]:
    n = int(rng.integers(1, min(K, 4) + 1))
    cuts = np.sort(rng.choice(np.arange(1, K), size=n - 1, replace=False)) if n > 1 else np.array([], int)
    widths = rng.integers(1, 11, size=n)
    return np.repeat(widths, np.diff(np.concatenate([[0], cuts, [K]]))).astype(int).tolist()


def pack_many(n_jobs: int, *, horizon: int = 240, seed: int = 0, load: float = 0.4):
    """``n_jobs`` periodic jobs (periods 30, 60, 120 and ``horizon`` minutes, stage-shaped skylines of 2 to
    20 steps, windows of 1-4 times their length) arriving one by one into two empty plans, LowCost's
    and earliest-first's; capacity set so the jobs' mean load is ``load`` of it. Returns both plans and
    the peak c(t) after every job (columns jobs, lowcost, greedy, mean)."""
    if not (isinstance(n_jobs, (int, np.integer)) and n_jobs >= 1):
        raise ValueError(f"n_jobs={n_jobs!r} is out of range: need a whole number >= 1")
    if not 0 < load <= 1:
        raise ValueError(f"load={load!r} is out of range: need 0 < load <= 1")
    rng = np.random.default_rng(seed)
    periods = [p for p in (30, 60, 120, horizon) if horizon % p == 0 and p <= horizon]
    jobs, area = [], 0.0
    for _ in range(int(n_jobs)):
        P = int(rng.choice(periods))
        K = int(rng.integers(2, min(20, P // 2) + 1))
        demands = _skyline(rng, K)
        W = min(P, int(K * rng.uniform(1.0, 4.0)) + 1)
        a = int(rng.integers(0, P - W + 1))
        jobs.append(PeriodicJob(P, a, a + W, demands))
        area += sum(demands) * horizon // P
    capacity = max(10, int(math.ceil(area / horizon / load)))
    plans = {m: ReservationPlan(capacity, horizon) for m in ("lowcost", "greedy")}
    rows = []
    for i, job in enumerate(jobs, 1):
        for m, plan in plans.items():
            plan.place(job, method=m)
        rows.append(dict(jobs=i, lowcost=plans["lowcost"].peak(), greedy=plans["greedy"].peak(),
                         mean=float(plans["lowcost"].load.sum() / (capacity * horizon)),
                         refused_lowcost=i - len(plans["lowcost"].allocations),
                         refused_greedy=i - len(plans["greedy"].allocations)))
    return plans["lowcost"], plans["greedy"], pd.DataFrame(rows)


def adhoc_in_residual(plan: ReservationPlan, n_jobs: int, *, seed: int = 0):
    """``n_jobs`` ad hoc jobs (1-3 stages of 1-8 containers, windows of 2-4 times their length, anywhere
    in the cycle) planned in a copy of ``plan``'s residual; then one more periodic job placed on top,
    which may push ad hoc jobs out (production has strict priority). Returns the plan, what the
    production layer was before, and the periodic job placed last."""
    rng = np.random.default_rng(seed)
    out = plan.copy()
    H = out.horizon
    for _ in range(int(n_jobs)):
        K = int(rng.integers(1, 4))
        demands = rng.integers(1, 9, size=K).tolist()
        a = int(rng.integers(0, H))
        out.place(AdHocJob(a, a + int(K * rng.uniform(2.0, 4.0)) + 1, demands))
    before = out.load.copy()
    late = PeriodicJob(60 if H % 60 == 0 else H, 0, 60 if H % 60 == 0 else H, [int(out.capacity.max() // 3)] * 20)
    out.place(late)
    return out, before, late


def _competitive_point(config: TinyInstanceConfig) -> dict:
    """competitive_table's point: one tiny instance, what each online placer refused, their peaks and the
    optimum (``optimum_fits`` False, and the optimum NaN, when no plan holds every job within capacity)."""
    from .plan import ReservationPlan
    from .exact import exact_min_peak

    jobs, capacity, horizon = tiny_instance(config.seed, horizon=config.horizon, n_jobs=config.n_jobs,
                                            capacity=config.capacity, same_skyline=config.same_skyline)
    try:
        optimum = exact_min_peak(jobs, capacity, horizon).height
    except RuntimeError:  # HiGHS: no plan of height <= 1 holds every job
        optimum = math.nan
    row = dict(log_pmax_pmin=theorem_6_1_bound([j.period for j in jobs]), optimum=optimum,
               optimum_fits=not math.isnan(optimum))
    for method in ("lowcost", "greedy"):
        plan = ReservationPlan(capacity, horizon)
        refused = sum(plan.place(j, method=method) is None for j in jobs)
        row[f"refused_{method}"] = refused
        row[method] = plan.peak() if refused == 0 else math.nan
        row[f"{method}_ratio"] = row[method] / optimum if refused == 0 and row["optimum_fits"] else math.nan
    row["both_placed"] = row["refused_lowcost"] == 0 and row["refused_greedy"] == 0
    return row


def competitive_table(seeds=range(12), *, client=None, cache=None, **tiny) -> pd.DataFrame:
    """LowCost and earliest-first against the exact MILP optimum on seeded tiny instances (jobs arriving
    one by one), with Theorem 6.1's log(Pmax/Pmin). Every instance is kept: ``refused_lowcost`` and
    ``refused_greedy`` count the jobs each online placer refused, ``optimum_fits`` says whether the
    offline optimum places them all; the measured ratio peak / optimum (``lowcost_ratio``,
    ``greedy_ratio``) is defined where both the placer and the optimum place every job. ``tiny`` sets :class:`~.config.TinyInstanceConfig`'s fields; each seed is a point of
    a :func:`cluster_sim.sweep.run_grid` sweep (``client`` and ``cache`` go to it)."""
    df = run_grid(_competitive_point, TinyInstanceConfig().replace(**tiny), {}, seeds=[int(s) for s in seeds],
                  client=client, cache=cache, progress=False)
    cols = ["seed", "optimum_fits", "optimum", "lowcost", "greedy", "lowcost_ratio", "greedy_ratio",
            "refused_lowcost", "refused_greedy", "both_placed", "log_pmax_pmin"]
    return df[cols].assign(seed=df.seed.astype(int))


def footprints(config: MorpheusConfig, arms=("user", "morpheus_dra"), seeds=(0, 1, 2), target: float | None = None,
               shares=(1.0, 0.75, 0.5), *, client=None, cache=None):
    """Fig. 10's measure: the smallest cluster among ``shares`` of the config's machines on which each arm
    reaches ``target`` attainment pooled over ``seeds`` (a coarse search, from the largest down); the
    default target is what the users' own provisioning attains on the config's cluster ("match the
    current SLO attainment"). Returns ``{"target": ...,
    "arms": {arm: (machines or None, {machines: attainment})}}``. Each size tried is a sweep over the seeds
    (``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`); the arms' searches run one after
    the other, each stopping where its own attainment falls short."""
    if target is None:
        table = compare(config, arms=("user",), seeds=seeds, client=client, cache=cache)
        target = 1.0 - float(table.loc["user", "slo_violation_rate"])
    out = {}
    for arm in arms:
        sizes = {max(1, round(f * config.machines)) for f in shares}
        out[arm] = footprint(config.replace(arm=arm), target, seeds=seeds, max_machines=config.machines, sizes=sizes,
                             client=client, cache=cache)
    return {"target": target, "arms": out}


def fig10a(config: MorpheusConfig, seeds=(0, 1, 2), *, factor: float = 5.0, max_machines: int | None = None,
           arms=("packing_only", "model_only", "morpheus"), client=None, cache=None) -> pd.DataFrame:
    """Fig. 10a's measure: the smallest cluster (machines, by bisection) on which each static arm's
    worst-case violation rate, pooled over ``seeds``, is ``factor`` times lower than the users' own
    provisioning on the config's cluster (attainment ``1 - users' rate / factor``), and that cluster as a
    share of the config's. A row's ``machines`` is None when even ``max_machines`` (default 4x the config's)
    does not reach it. ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor >= 1:
        raise ValueError(f"factor={factor!r} is out of range: need a number >= 1 (how many times fewer violations)")
    users = compare(config, arms=("user",), seeds=seeds, client=client, cache=cache)
    rate = float(users.loc["user", "slo_violation_rate"])
    target = 1.0 - rate / factor
    cap = max_machines or 4 * config.machines
    rows = []
    for arm in arms:
        machines, tried = footprint(config.replace(arm=arm), target, seeds=seeds, max_machines=cap, client=client,
                                    cache=cache)
        rows.append(dict(arm=arm, users_violation_rate=rate, target_attainment=target, machines=machines,
                         share=machines / config.machines if machines else math.nan, tried=tried))
    return pd.DataFrame(rows).set_index("arm")


# ---- Lab 03's claims (cluster_sim.claims) ---------------------------------------------------------------------
#: seeds per claim pool, by preset (cycles of ``jobs`` templates): the intervals' half-widths on the
#: violation rate are about 0.03-0.05 at ci over 12 seeds and at default over 6 (a ci cycle has about nine
#: runs, so one seed moves its rate by a ninth); over 10 ci seeds DRA's interval ended 0.0002 from zero
#: at one seed offset
POOL_SIZES = {"ci": 12, "default": 6, "paper": 4}
#: tiny instances of Theorem 6.1's table (each a MILP of a few hundred variables)
TINY_INSTANCES = 40


def run_metrics(result) -> dict:
    """A claims run's row: the worst-case violation rate of its periodic runs and the cluster shares."""
    runs = len(result.runs)
    return dict(runs=runs, violations=result.violations, violation_rate=result.violations / runs if runs else 0.0,
                reserved_share=result.reserved_share, utilisation=result.utilisation, grants=result.grants,
                above_reservation=result.above_reservation)


CLAIMS = [
    Claim("dra_beats_static", "Dynamic reprovisioning repairs runs that outgrow their reservations: fewer worst-case "
          "violations than the same plan without it", "§7, Fig. 10b", "violation_rate",
          treatment={"arm": "morpheus_dra"}, baseline={"arm": "morpheus"}, direction="lower",
          paper_text="fewer violations (Fig. 10b: 'repair underallocations dynamically')", must=True,
          why="the mechanism of §7 on our workload: a run that outgrows R* gets more containers only with DRA",
          hint="more seeds (a larger pool), or check the Reprovisioner's caps (rho, hold_seconds)"),
    Claim("dra_beats_users", "Morpheus (with DRA) has fewer worst-case SLO violations than the users' own "
          "provisioning on the same cluster", "§9.2, Fig. 10", "violation_rate",
          treatment={"arm": "morpheus_dra"}, baseline={"arm": "user"}, direction="lower",
          paper_text="5-13x fewer violations", must=False,
          why="reported: measured over 12 ci seeds the pooled counts are 9/106 against 15/106, but the paired "
              "interval at our pool sizes straddles zero at some seed offsets; the paper's 5-13x comes from a "
              "month of its trace",
          hint=""),
    Claim("static_beats_users", "Morpheus without reprovisioning (R* packed by LowCost) has fewer worst-case "
          "violations than the users", "§9.2, Fig. 10a", "violation_rate",
          treatment={"arm": "morpheus"}, baseline={"arm": "user"}, direction="lower",
          paper_text="19% smaller cluster at equal attainment (Fig. 10a)", must=False,
          why="reported, does not reproduce (issue 26, measured over ci seeds 0-11 and default seeds 0-5): the "
              "cause is not the shared queue: one reservation per run (reservations='per_run') moves static "
              "Morpheus from 17/106 to 17/106 (keep) and 50 to 49/106 (literal). The literal worst case kills "
              "the tasks a shrinking R* takes back (750 kills over 106 runs; 46 of the 49 misses had one); with "
              "their work kept (worst_case='resume') static is 31/106 (default 44/156) against users' 15/106 "
              "(18/156). Of those 31 missed runs, 25 had a reservation whose area covers their work: R* is "
              "fitted in the LP's fluid model, where any container-minute advances a run, but our runs are "
              "chains of stages of bounded width, so area reserved in the wrong shape cannot be used; users' "
              "constant counts do not depend on the shape"),
    Claim("packing_only_vs_users", "Packing alone (users' counts packed by LowCost)", "Fig. 10a", "violation_rate",
          treatment={"arm": "packing_only"}, baseline={"arm": "user"}, direction="lower",
          paper_text="6% smaller cluster", must=False,
          why="reported: Fig. 10a's breakdown is a cluster size on the paper's trace; ours is the violation rate "
              "on the same cluster"),
    Claim("model_only_vs_users", "The job model alone (R* from each run's submission)", "Fig. 10a",
          "violation_rate", treatment={"arm": "model_only"}, baseline={"arm": "user"}, direction="lower",
          paper_text="16% smaller cluster", must=False,
          why="reported: as packing alone; R* without repair misses for the same reason as static Morpheus"),
    Claim("reserved_share_lower", "Morpheus reserves a smaller share of the cluster for periodic jobs than the "
          "users' counts", "§9.2, Fig. 9d", "reserved_share", treatment={"arm": "morpheus_dra"},
          baseline={"arm": "user"}, direction="lower", paper_text="lower", must=False,
          why="reported: R* is fitted to the runs and users ask for more than they use (Fig. 2a), and the "
              "difference reproduces at default (6 seeds), but at ci (two-hour cycles of six jobs) its interval "
              "straddles zero at some seed offsets; we have not found why, so it is not a must"),
    Claim("static_above_reservation", "Share of static Morpheus runs' container-time held above their reservation "
          "(tasks keep their containers when a reservation shrinks: opportunistic use)", "§9.2's worst case",
          "above_reservation", where={"arm": "morpheus"}, paper_text="0 (the worst case denies opportunistic use)",
          why="reported: our queues let running tasks finish when a reservation shrinks (worst_case='keep'); "
              "worst_case='literal' takes them back and makes this 0"),
    Claim("dra_above_reservation", "... and of Morpheus with DRA", "§9.2's worst case", "above_reservation",
          where={"arm": "morpheus_dra"}, paper_text="0", why="reported: as above"),
    Claim("utilisation_retained", "Utilisation is retained at equal cluster", "§9.2", "utilisation",
          treatment={"arm": "morpheus_dra"}, baseline={"arm": "user"}, direction="equal", tolerance=0.02,
          paper_text="retained", must=True,
          why="ad hoc jobs borrow whatever periodic queues leave idle, so the cluster stays as busy",
          hint="lower adhoc_load if the cluster saturates, or more seeds"),
]

THEOREM_CLAIMS = [
    Claim("lowcost_ratio", "LowCost's peak / the offline optimum on tiny instances (measured, not the bound: the "
          "paper states O(log Pmax/Pmin) with no constant)", "§6, Theorem 6.1", "lowcost_ratio",
          where={"refused_lowcost": 0, "optimum_fits": True}, paper_text="O(log Pmax/Pmin), no constant", must=False,
          why="reported: the theorem bounds the ratio up to a constant the paper does not give"),
    Claim("lowcost_refusals", "Jobs LowCost refuses per tiny instance where the optimum places every job",
          "§6, Theorem 6.1", "refused_lowcost", where={"optimum_fits": True},
          paper_text="(the theorem assumes every job placed)", must=False,
          why="reported: an online placer can refuse what the offline optimum places"),
    Claim("greedy_refusals", "Jobs earliest-first refuses per tiny instance where the optimum places every job",
          "§6", "refused_greedy", where={"optimum_fits": True},
          paper_text="", must=False, why="reported, beside LowCost's"),
]


def claims_table(config: MorpheusConfig, *, pool_size: int | None = None, client=None, cache=None) -> pd.DataFrame:
    """Lab 03's claims measured over ``claims.pool(config.seed, pool_size)`` (default by preset size:
    :data:`POOL_SIZES`): every arm on every seed of the pool (paired by seed), and Theorem 6.1's tiny
    instances (:data:`TINY_INSTANCES` seeds from the config's). ``client`` and ``cache`` go to
    :func:`cluster_sim.sweep.run_grid`."""

    size = POOL_SIZES[_preset_of(config)] if pool_size is None else pool_size
    seeds = pool(config.seed, size)
    frame = run_grid(run, config, {"arm": list(ARMS)}, seeds=seeds, metrics=run_metrics, client=client,
                     cache=cache)
    tiny = competitive_table(range(config.seed, config.seed + TINY_INSTANCES), client=client, cache=cache)
    return pd.concat([measure(CLAIMS, frame, lab="03"), measure(THEOREM_CLAIMS, tiny, lab="03")],
                     ignore_index=True)


def _preset_of(config: MorpheusConfig) -> str:
    """The preset a config is closest to (by its number of jobs), for the pool's size."""
    for name in ("ci", "default"):
        if config.jobs <= getattr(MorpheusConfig, name)().jobs:
            return name
    return "paper"
