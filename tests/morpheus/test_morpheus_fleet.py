"""Fleet metrics (Fig. 2a, 9a-c, §9.1) and contracts, on seeded synthetic histories."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from cluster_sim.morpheus import (
    HistoryParams, align_skylines, consumer_harm, elastic_completion, evaluate_fleet, fit_skyline,
    generate_history, infer_contracts, infer_slo, max_envelope, rstar_over_time, slack_cdf, user_ratios,
)
from cluster_sim.morpheus.slo.fleet import PERIODIC_KINDS

# hourly jobs make many runs; daily and 6-hourly ones keep the LPs small and the test quick
FLEET = HistoryParams(days=10, n_periodic=8, n_off_kilter=1, n_aperiodic=1, n_adhoc=5, max_steps=60,
                      periods=(21600.0, 43200.0, 86400.0), period_weights=(0.4, 0.2, 0.4))


@pytest.fixture(scope="module")
def evaluations():
    out = []
    for seed in (0, 1, 2):
        h = generate_history(np.random.default_rng(seed), FLEET)
        out.append((h, evaluate_fleet(h, alphas=(0.01, 0.5, 0.9))))
    return out


# ---- elastic completion ---------------------------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=12), st.floats(0, 3))
def test_enough_allocation_finishes_on_time_and_less_never_sooner(run, extra):
    run = np.array(run) + 0.1
    assert elastic_completion(run + extra, run) == run.size
    short = elastic_completion(run * 0.5, run, after=1.0)
    assert short >= run.size and math.isfinite(short)


def test_elastic_completion_is_the_lp_debt():
    # finishing within R*'s K steps is exactly "no debt left at the end" in J(s)
    rng = np.random.default_rng(0)
    runs = rng.uniform(0, 5, (6, 8))
    fit = fit_skyline(runs, 0.3)
    from cluster_sim.morpheus import debt
    final = debt(fit.skyline, runs)[:, -1]
    done = [math.isfinite(elastic_completion(fit.skyline, r)) for r in runs]
    assert done == (final <= 1e-9).tolist()


def test_elastic_completion_refuses_bad_input():
    with pytest.raises(ValueError, match="skyline is empty"):
        elastic_completion([1], [])
    with pytest.raises(ValueError, match="after=-1"):
        elastic_completion([1], [1], after=-1)


# ---- Fig. 2a and 9b/9c ------------------------------------------------------------------------------
def test_users_over_provision_most_runs_as_fig_2a():
    h = generate_history(np.random.default_rng(0), dataclasses.replace(FLEET, n_periodic=60, days=3))
    u = user_ratios(h)
    share_over = (u.peak_ratio > 1).mean()
    assert 0.6 < share_over < 0.9  # the paper: 75% over-provisioned even at their peak
    assert (u.peak_ratio >= 10).mean() > 0.08  # some 10x or more
    assert (u.area_ratio >= u.peak_ratio * 0.999).all()  # a run never uses its peak all the time


def test_alpha_trades_waste_for_worst_case_misses(evaluations):
    per_run = pd.concat([ev.per_run for _, ev in evaluations])
    s = per_run.groupby("policy").agg(miss=("missed", "mean"), area=("area_ratio", "median"))
    assert s.area["alpha=0.01"] > s.area["alpha=0.5"] > s.area["alpha=0.9"]
    assert s.miss["alpha=0.01"] < s.miss["alpha=0.5"] < s.miss["alpha=0.9"]
    # the paper's direction (Fig. 9b/9c): at alpha = 1% closer to 1:1 than users, and no more misses. Since users
    # provision relative to the peak their runs use (Fig. 2a, issue 26) they miss as often as R* on this fleet
    # (0.105 each); fewer misses than users is a reported claim of Lab 02 (rstar_fewer_misses), not a must
    assert abs(np.log(s.area["alpha=0.01"])) < abs(np.log(s.area["user"]))
    assert s.miss["alpha=0.01"] <= s.miss["user"]


def test_every_held_out_run_is_judged_once_per_policy(evaluations):
    for h, ev in evaluations:
        counts = ev.per_run.groupby(["template", "run"]).policy.nunique()
        assert (counts == 4).all()
        held = ev.per_run.merge(h.runs, on=["template", "run"])
        assert not held.failed.any()
        n = h.runs.groupby("template").run.max() + 1
        assert (held.run >= (0.7 * held.template.map(n)).astype(int)).all()  # never trained on


def test_r_star_that_covers_every_run_never_misses_for_lack_of_capacity():
    runs = [np.array([3.0, 5, 2]), np.array([4.0, 1, 1, 1]), np.array([2.0, 2])]
    cover = max_envelope(align_skylines(runs))
    assert all(elastic_completion(cover, r) == r.size for r in runs)


# ---- Fig. 9a -------------------------------------------------------------------------------------
def test_slack_cdf_is_a_cdf_and_most_jobs_have_room(evaluations):
    h, _ = evaluations[0]
    slo = infer_slo(h.runs[h.runs.kind.isin(PERIODIC_KINDS)])
    cdf = slack_cdf(slo)
    assert cdf.slack_ratio.is_monotonic_increasing and cdf.cdf.iloc[-1] == 1.0
    assert len(cdf) == int(slo.actionable.sum())
    assert (cdf.slack_ratio >= 0.25).all()  # actionable means real slack


def test_slack_cdf_names_its_missing_column():
    with pytest.raises(ValueError, match="slo is missing column 'slack_ratio'"):
        slack_cdf(pd.DataFrame({"d_j": [1.0]}))


# ---- R* over time and drift ------------------------------------------------------------------------
def drifting_job(factor, seed=3):
    p = dataclasses.replace(FLEET, days=36, n_periodic=1, n_off_kilter=0, n_aperiodic=0, n_adhoc=0,
                            periods=(86400.0,), period_weights=(1.0,), drift_at=0.5, drift_share=1.0,
                            drift_factor=factor, failure_rate=0.0, straggler_rate=0.0)
    h = generate_history(np.random.default_rng(seed), p)
    return h.skyline_list(h.templates.index[0]), int(h.templates.drift_run.iloc[0])


def test_r_star_readapts_when_the_job_slows_down():
    runs, drift = drifting_job(1.6)
    window = rstar_over_time(runs, 0.01, window=5)
    before = window[window.fitted_at < drift].area.mean()
    settled = window[window.fitted_at >= drift + 5].area.mean()
    assert settled > 1.3 * before  # the contract grew with the job
    assert window[window.fitted_at == drift].delay.iloc[0] > 0  # the first slow run outgrew the old R*


def test_only_a_window_lets_r_star_shrink_when_the_job_speeds_up():
    runs, drift = drifting_job(0.6)
    window = rstar_over_time(runs, 0.01, window=5, every=2)
    grown = rstar_over_time(runs, 0.01, every=2)
    before = window[window.fitted_at < drift].area.mean()
    after = lambda df: df[df.fitted_at >= drift + 5].area.mean()
    assert after(window) < 0.8 * before  # the last five runs are all fast: R* follows
    assert after(grown) > 0.9 * before  # all the history keeps reserving for the slow runs


def test_r_star_settles_as_history_grows():
    runs, _ = drifting_job(1.0)  # no drift: the same job every day
    df = rstar_over_time(runs, 0.5)
    step = df.area.diff().abs()
    early, late = step[df.fitted_at <= 10].mean(), step[df.fitted_at >= 26].mean()
    assert late < 0.5 * early  # each new run moves R* less


@pytest.mark.parametrize("kwargs, message", [
    ({"window": 1}, r"window=1 is not allowed"),
    ({"first": 1}, r"first=1 is not allowed"),
    ({"first": 9}, r"first=9 is not allowed: need 2 <= first < 4"),
    ({"every": 0}, r"every=0 is not allowed"),
])
def test_rstar_over_time_refuses_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rstar_over_time([[1.0, 2.0]] * 4, 0.5, **kwargs)


# ---- the §9.1 proxy ------------------------------------------------------------------------------
def pooled_harm(histories, shift=0.0):
    tables = []
    for h in histories:
        slo = infer_slo(h.runs[h.runs.kind.isin(PERIODIC_KINDS)])
        slo = slo.assign(d_j=slo.d_j + shift * h.templates.period.reindex(slo.index))
        tables.append(consumer_harm(h, slo))
    total = sum(t[["pairs", "consumer_failures"]] for t in tables)
    return total.consumer_failures / total.pairs


@pytest.fixture(scope="module")
def proxy_histories():
    p = dataclasses.replace(FLEET, days=20, n_periodic=20, input_delay_rate=0.15, input_delay_mean=0.3)
    return [generate_history(np.random.default_rng(s), p) for s in (0, 1, 2)]


def test_missing_the_inferred_slo_hurts_the_consumer_like_a_failure(proxy_histories):
    p = pooled_harm(proxy_histories)
    assert p["miss"] > 4 * p["meet"] and p["fail"] > 4 * p["meet"]  # the paper's inequality
    assert 0.5 < p["miss"] / p["fail"] < 2.0  # "about as much"


def test_the_proxy_needs_the_deadline_where_consumers_read(proxy_histories):
    # put d_j a third of a period early: many "misses" then hurt nobody
    right, early = pooled_harm(proxy_histories), pooled_harm(proxy_histories, shift=-1 / 3)
    assert early["miss"] / early["meet"] < 0.5 * right["miss"] / right["meet"]


def test_consumer_harm_names_its_missing_column(proxy_histories):
    with pytest.raises(ValueError, match="slo is missing column 'd_j'"):
        consumer_harm(proxy_histories[0], pd.DataFrame({"actionable": [True]}))


# ---- contracts -------------------------------------------------------------------------------------
def test_contracts_cover_exactly_the_actionable_periodic_templates_and_refit_the_recorded_runs():
    h = generate_history(np.random.default_rng(2), FLEET)
    contracts = infer_contracts(h.submissions, h.runs, h.skyline_lists(), alpha=0.01, max_history=6)
    slo = infer_slo(h.runs[h.runs.kind.isin(PERIODIC_KINDS)])
    assert set(contracts) == set(slo.index[slo.actionable])
    for name, c in contracts.items():
        assert c.period == h.templates.period[name]
        assert (c.a_j, c.d_j) == (slo.a_j[name], slo.d_j[name])
        again = fit_skyline(align_skylines(h.skyline_list(name)[-6:]), 0.01)
        assert np.array_equal(c.skyline, again.skyline) and c.n_runs == 6
        assert c.window_steps == int((c.d_j - c.a_j) // 60)


def test_infer_contracts_refuses_a_tiny_history_cap():
    h = generate_history(np.random.default_rng(2), FLEET)
    with pytest.raises(ValueError, match="max_history=1 is not allowed"):
        infer_contracts(h.submissions, h.runs, h.skyline_lists(), max_history=1)
