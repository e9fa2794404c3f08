"""Lab 03's experiments around the pure packing layer and the simulation: Fig. 6 and 7 reproduced, many
jobs packed (LowCost against earliest-first), ad hoc jobs in the residual, LowCost against the MILP
optimum on tiny instances and the footprints of Fig. 10 (the claims table is :mod:`.claims`').

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

from ...sweep import run_grid
from .config import MorpheusConfig, TinyInstanceConfig
from .exact import theorem_6_1_bound, tiny_instance
from .jobs import AdHocJob, PeriodicJob
from .lowcost import lowcost_window
from .plan import ReservationPlan
from .simulation import attainments, compare, footprint_arms, run, search_sizes

__all__ = ["FIG7", "fig7_example", "lcm_example", "pack_many", "adhoc_in_residual", "competitive_table",
           "on_the_trace", "footprints", "fig10a"]

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


def on_the_trace(config: MorpheusConfig) -> MorpheusConfig:
    """The config with no run held back (``late_start=0``): Fig. 10 (§9.2) measures the trace's runs; the run
    delayed on purpose is §9.3's Fig. 12, an adversarial case for DRA that static arms miss by design (it would
    count against every static arm in a footprint search). The runs are otherwise the same draws."""
    return config.replace(late_start=0.0)


def footprints(config: MorpheusConfig, arms=("user", "morpheus_dra"), seeds=(0, 1, 2), target: float | None = None,
               shares=(1.0, 0.75, 0.5), *, client=None, cache=None):
    """Fig. 10's measure: the smallest cluster among ``shares`` of the config's machines on which each arm
    reaches ``target`` attainment pooled over ``seeds`` (a coarse search, from the largest down); the
    default target is what the users' own provisioning attains on the config's cluster ("match the
    current SLO attainment"). Returns ``{"target": ...,
    "arms": {arm: (machines or None, {machines: attainment})}}``. The arms' searches run side by side
    (:func:`~.simulation.footprint_arms`: the sizes they ask for next, with the users' target first, are one
    sweep over the seeds; ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`), each stopping
    where its own attainment falls short. Measured on the trace (no run held back: :func:`on_the_trace`), whose
    cycles cost what the config's do: the sweeps start at the pace the config's own sweeps set (a first round
    probed here ran its points one after another in this process, a core idle)."""
    paced_as, config = config, on_the_trace(config)
    sizes = search_sizes({max(1, round(f * config.machines)) for f in shares}, config.machines)
    known = None
    if target is None:
        # the users' attainment on the config's cluster and every arm's largest size: one sweep, not two
        known = attainments(config, [("user", config.machines)] + [(arm, sizes[0]) for arm in arms], seeds,
                            client=client, cache=cache, paced_as=paced_as)
        target = known[("user", config.machines)]
    out = footprint_arms(config, arms, target, seeds=seeds, max_machines=config.machines, sizes=sizes, client=client,
                         cache=cache, known=known, paced_as=paced_as)
    return {"target": target, "arms": {arm: out[arm] for arm in arms}}


def fig10a(config: MorpheusConfig, seeds=(0, 1, 2), *, factor: float = 5.0, max_machines: int | None = None,
           arms=("packing_only", "model_only", "morpheus"), client=None, cache=None) -> pd.DataFrame:
    """Fig. 10a's measure: the smallest cluster (machines, by bisection) on which each static arm's
    worst-case violation rate, pooled over ``seeds``, is ``factor`` times lower than the users' own
    provisioning on the config's cluster (attainment ``1 - users' rate / factor``), and that cluster as a
    share of the config's. A row's ``machines`` is None when even ``max_machines`` (default 4x the config's)
    does not reach it. Measured on the trace (no run held back: :func:`on_the_trace`). ``client`` and ``cache``
    go to :func:`cluster_sim.sweep.run_grid`; the sweeps share the config's pace, as :func:`footprints`' do."""
    paced_as, config = config, on_the_trace(config)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor >= 1:
        raise ValueError(f"factor={factor!r} is out of range: need a number >= 1 (how many times fewer violations)")
    users = compare(config, arms=("user",), seeds=seeds, client=client, cache=cache, paced_as=paced_as)
    rate = float(users.loc["user", "slo_violation_rate"])
    target = 1.0 - rate / factor
    cap = max_machines or 4 * config.machines
    found = footprint_arms(config, arms, target, seeds=seeds, max_machines=cap, client=client, cache=cache,
                           paced_as=paced_as)
    rows = []
    for arm in arms:
        machines, tried = found[arm]
        rows.append(dict(arm=arm, users_violation_rate=rate, target_attainment=target, machines=machines,
                         share=machines / config.machines if machines else math.nan, tried=tried))
    return pd.DataFrame(rows).set_index("arm")
