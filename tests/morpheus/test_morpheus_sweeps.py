"""The Morpheus labs' sweeps go through run_grid and give, to the last bit, what the hand-written loops
over seeds and configs they replaced gave: each reference below is the old loop, kept here."""

from __future__ import annotations

import numpy as np
import math

import pandas as pd
import pytest

from cluster_sim.morpheus import MorpheusConfig, SLOConfig, TinyInstanceConfig, compare, footprint, run
from cluster_sim.morpheus.packing.exact import compare_with_optimum, tiny_instance
from cluster_sim.morpheus.slo.experiments import (
    FLEET_ALPHAS, evaluate_fleet, history_sweep, policy, pooled_fleet, run_history,
)
from cluster_sim.morpheus.slo.experiments import run as run_slo
from cluster_sim.morpheus.packing.experiments import competitive_table, footprints, on_the_trace
from cluster_sim.morpheus.packing.simulation import attainment

SMALL = MorpheusConfig.ci().replace(jobs=4, machines=6, cycle_minutes=120)
TINY = SLOConfig.ci().replace(days=6.0, n_periodic=6, n_adhoc=4, max_steps=30, history_runs=10)
HERE = dict(client="inprocess", cache=False)


# ---- Lab 03: compare, attainment, footprint(s) ---------------------------------------------------------------
def reference_compare(config, arms, seeds) -> pd.DataFrame:
    rows = []
    for arm in arms:
        rs = [run(config.replace(arm=arm, seed=s)) for s in seeds]
        runs = sum(len(r.runs) for r in rs)
        violations = sum(int(r.runs.violated.sum()) for r in rs)
        rows.append(dict(arm=arm, runs=runs, violations=violations,
                         slo_violation_rate=violations / runs if runs else 0.0,
                         utilisation=float(np.mean([r.utilisation for r in rs])),
                         reserved_share=float(np.mean([r.reserved_share for r in rs])),
                         periodic_utilisation=float(np.mean([r.periodic_utilisation for r in rs])),
                         refused=sum(len(r.refused) for r in rs),
                         grants=sum(int((r.decisions.granted > 0).sum()) if len(r.decisions) else 0 for r in rs)))
    return pd.DataFrame(rows).set_index("arm")


def reference_attainment(config, machines, seeds) -> float:
    runs = violated = 0
    for s in seeds:
        r = run(config.replace(machines=int(machines), seed=int(s)))
        runs += len(r.runs)
        violated += int(r.runs.violated.sum())
    return 1.0 - violated / runs if runs else 0.0


def test_compare_pools_exactly_as_the_loop_did(tmp_path):
    arms, seeds = ("user", "morpheus_dra", "morpheus"), (0, 1, 2)
    expected = reference_compare(SMALL, arms, seeds)
    pd.testing.assert_frame_equal(compare(SMALL, arms, seeds, **HERE), expected, check_exact=True)
    # read back from the sweep's cache: the same table
    compare(SMALL, arms, seeds, client="inprocess", cache=tmp_path)
    again = compare(SMALL, arms, seeds, client="inprocess", cache=tmp_path)
    pd.testing.assert_frame_equal(again, expected, check_exact=True)
    # an arm twice pools each copy over the seeds, as the loop did
    pd.testing.assert_frame_equal(compare(SMALL, ("user", "user"), (1, 0), **HERE),
                                  reference_compare(SMALL, ("user", "user"), (1, 0)), check_exact=True)


def test_footprints_search_with_the_loops_attainments():
    seeds = (0, 1)
    fp = footprints(SMALL, seeds=seeds, shares=(1.0, 0.5), **HERE)
    trace = on_the_trace(SMALL)  # Fig. 10 measures the trace: no run held back
    assert fp["target"] == 1.0 - reference_compare(trace, ("user",), seeds).loc["user", "slo_violation_rate"]
    for arm, (machines, tried) in fp["arms"].items():
        assert tried, arm
        for m, a in tried.items():
            assert a == reference_attainment(trace.replace(arm=arm), m, seeds), (arm, m)
    m, tried = footprint(SMALL.replace(arm="morpheus_dra"), 0.8, seeds=seeds, **HERE)
    assert tried == {k: reference_attainment(SMALL.replace(arm="morpheus_dra"), k, seeds) for k in tried}
    assert attainment(SMALL, 3, [0, 1], **HERE) == reference_attainment(SMALL, 3, (0, 1))


# ---- Lab 02: pooled_fleet and history_sweep ------------------------------------------------------------------
def reference_pooled(config, seeds, alphas):
    rows, histories, slos, fits = [], [], [], []
    for s in seeds:
        h = run_history(config.replace(seed=s))
        ev = evaluate_fleet(h, alphas, train_fraction=config.train_fraction, beta_fraction=config.beta_fraction,
                            max_history=config.history_runs, slo_options=config.slo_options())
        rows.append(ev.per_run.assign(seed=s))
        histories.append(h), slos.append(ev.slo), fits.append(ev.fits)
    return pd.concat(rows, ignore_index=True), histories, slos, fits


@pytest.mark.parametrize("seeds, alphas", [((0, 1, 2), tuple(sorted(set(FLEET_ALPHAS) | {TINY.alpha}))),
                                           ((2,), (0.5, 0.01, 0.5))])
def test_pooled_fleet_gives_the_loops_tables(seeds, alphas):
    per_run, histories, slos, fits = reference_pooled(TINY, seeds, alphas)
    p = pooled_fleet(TINY, seeds=seeds, alphas=alphas, **HERE)
    assert p.seeds == seeds and p.alphas == alphas
    pd.testing.assert_frame_equal(p.per_run, per_run, check_exact=True)
    for got, want in zip(p.slos, slos):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
    for got, want in zip(p.fits, fits):
        assert list(got) == list(want)
        assert all(np.array_equal(got[k].skyline, want[k].skyline) and got[k].beta == want[k].beta for k in want)
    assert all(a.runs.equals(b.runs) for a, b in zip(p.histories, histories))
    assert p.detection_errors() == []  # the Pooled methods read the histories


def test_pooled_fleet_refuses_no_seeds_or_no_alphas():
    with pytest.raises(ValueError, match=r"must not be empty"):
        pooled_fleet(TINY, seeds=(), **HERE)
    with pytest.raises(ValueError, match=r"must not be empty"):
        pooled_fleet(TINY, alphas=(), **HERE)


def test_history_sweep_gives_the_loops_table():
    result = run_slo(TINY)
    c = result.config
    rows = []
    for n in (2, 5, 10):
        ev = evaluate_fleet(result.history, (c.alpha,), train_fraction=c.train_fraction,
                            beta_fraction=c.beta_fraction, max_history=int(n), slo_options=c.slo_options())
        s = ev.summary()
        rows.append({"history_runs": int(n), "mean runs used": float(np.mean([f.n_runs for f in ev.fits.values()])),
                     "miss_rate": s.miss_rate[policy(c.alpha)], "median_area_ratio": s.median_area_ratio[policy(c.alpha)],
                     "user_miss_rate": s.miss_rate["user"], "user_median_area_ratio": s.median_area_ratio["user"]})
    expected = pd.DataFrame(rows).set_index("history_runs")
    pd.testing.assert_frame_equal(history_sweep(result, (2, 5, 10), **HERE), expected, check_exact=True)


# ---- Lab 03: LowCost against the optimum ---------------------------------------------------------------------
def reference_competitive(seeds, **tiny) -> pd.DataFrame:
    """The table as a loop: every instance kept, what each placer refused, ratios where both it and the
    optimum place every job."""
    from cluster_sim.morpheus.packing.exact import exact_min_peak, theorem_6_1_bound
    from cluster_sim.morpheus.packing.plan import ReservationPlan

    rows = []
    for s in seeds:
        jobs, cap, H = tiny_instance(int(s), **tiny)
        try:
            opt = exact_min_peak(jobs, cap, H).height
        except RuntimeError:
            opt = math.nan
        row = dict(seed=int(s), optimum_fits=not math.isnan(opt), optimum=opt)
        for m in ("lowcost", "greedy"):
            plan = ReservationPlan(cap, H)
            refused = sum(plan.place(j, method=m) is None for j in jobs)
            row[f"refused_{m}"] = refused
            row[m] = plan.peak() if refused == 0 else math.nan
        for m in ("lowcost", "greedy"):
            row[f"{m}_ratio"] = row[m] / opt if row[f"refused_{m}"] == 0 and row["optimum_fits"] else math.nan
        row["both_placed"] = row["refused_lowcost"] == 0 and row["refused_greedy"] == 0
        row["log_pmax_pmin"] = theorem_6_1_bound([j.period for j in jobs])
        rows.append(row)
    cols = ["seed", "optimum_fits", "optimum", "lowcost", "greedy", "lowcost_ratio", "greedy_ratio",
            "refused_lowcost", "refused_greedy", "both_placed", "log_pmax_pmin"]
    return pd.DataFrame(rows)[cols]


# some instances refused, none, all (the table's columns then differ)
@pytest.mark.parametrize("seeds, tiny", [(range(5), {}), ((2, 3), {}), ((3, 1), {"capacity": 3, "same_skyline": False})])
def test_competitive_table_gives_the_loops_table(seeds, tiny):
    pd.testing.assert_frame_equal(competitive_table(seeds, **HERE, **tiny), reference_competitive(seeds, **tiny),
                                  check_exact=True)


def test_a_bad_tiny_instance_is_refused_naming_the_field():
    with pytest.raises(ValueError, match=r"TinyInstanceConfig.horizon=1 is out of range"):
        competitive_table(range(2), horizon=1, **HERE)
    with pytest.raises(ValueError, match=r"unknown TinyInstanceConfig field\(s\) \['jobs'\]"):
        competitive_table(range(2), jobs=3, **HERE)
    assert TinyInstanceConfig().horizon == 12


# ---- the same tables from worker processes (string hashing, solver state and caches differ there) -----------
@pytest.mark.xdist_group("dask")
def test_a_two_worker_cluster_gives_the_same_tables(dask_client):
    there = dict(client=dask_client, cache=False)
    table = compare(SMALL, ("user", "morpheus_dra"), (0, 1), **there)
    fleet = pooled_fleet(TINY, seeds=(0, 1), **there)
    pd.testing.assert_frame_equal(table, compare(SMALL, ("user", "morpheus_dra"), (0, 1), **HERE), check_exact=True)
    pd.testing.assert_frame_equal(fleet.per_run, pooled_fleet(TINY, seeds=(0, 1), **HERE).per_run, check_exact=True)
