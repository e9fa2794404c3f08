"""Lab 02 as the notebook uses it: the config and its work cap, run -> result, the sweeps, the drift
refits through a TelemetryLog, the figures, the panel in-process, and the exercise's checks
catching each named misconception."""

import math
import time

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from cluster_sim.checking import NOT_IMPLEMENTED
from cluster_sim.morpheus import (
    SLOConfig, TelemetryLog, align_skylines, debt, debt_constraints, drift_experiment, fit_skyline, history_sweep,
    infer_contracts, lazy_example, penalty, slo_claims_table, plot_drift, plot_fig2a, plot_fig4, plot_fig5, plot_fig9a,
    plot_fig9bc, plot_history_sweep, plot_lazy, plot_life, plot_penalty_terms, plot_periodicity, plot_result,
    pooled_fleet, refit, regulariser_sweep, run,
)
from cluster_sim.morpheus.slo.experiments import FLEET_ALPHAS, month_lp_size, policy
from cluster_sim.morpheus.slo.penalty_cases import (
    HAND, check_debt_rows, check_debt_table, check_over_allocation, check_penalty, penalty_cases,
    solve_with_debt_rows, wrong_under,
)
from cluster_sim.ui import ConfigPanel

# a small history: a few seconds for the whole module
TINY = SLOConfig.ci().replace(days=6.0, n_periodic=6, n_adhoc=4, max_steps=30, history_runs=10)


@pytest.fixture(scope="module")
def result():
    return run(TINY)


@pytest.fixture(scope="module")
def pooled():
    return pooled_fleet(TINY)


# ---- the config ---------------------------------------------------------------------------------------
def test_presets_grow_and_stay_under_their_cap():
    ci, default, paper = SLOConfig.ci(), SLOConfig.default(), SLOConfig.paper()
    assert ci.work().amount < default.work().amount < paper.work().amount
    for cfg in (ci, default, paper):
        assert cfg.work().amount <= cfg.max_lp_cells
    assert paper.days == 30.0 and paper.history_runs == 30  # the paper keeps about a month


@pytest.mark.parametrize("field, value, message", [
    ("alpha", -0.1, "SLOConfig.alpha=-0.1 is out of range: allowed 0 <= alpha <= 1"),
    ("history_runs", 1, "SLOConfig.history_runs=1 is out of range: allowed 2 <= history_runs <= 1000"),
    ("a_percentile", float("nan"), "SLOConfig.a_percentile=nan is not a number"),
    ("n_periodic", 2.5, "SLOConfig.n_periodic=2.5 has the wrong type: expected int"),
])
def test_bad_values_name_the_field(field, value, message):
    with pytest.raises(ValueError) as e:
        SLOConfig.ci().replace(**{field: value})
    assert message in str(e.value)


def test_an_oversized_config_is_refused_before_anything_runs(forbid):
    from cluster_sim.morpheus.slo import experiments, history, lp, lp_compact  # noqa: F401 (forbid reaches experiments' names too)

    # what a run does: generate a history, build an LP from it
    ran = forbid(history.generate_history, lp.build_lp, lp_compact.build_compact_lp)
    with pytest.raises(ValueError) as e:
        SLOConfig.default().replace(n_periodic=500, history_runs=1000, max_steps=1440, days=120.0)
    assert ran == []
    msg = str(e.value)
    assert "LP cells" in msg and "more than max_lp_cells=3,000,000" in msg
    assert "lower n_periodic" in msg and "history_runs" in msg and "raise max_lp_cells on purpose" in msg
    big = SLOConfig.default().replace(n_periodic=500, history_runs=100, max_lp_cells=10**9)
    assert big.work().amount > 3_000_000


def test_the_work_estimate_follows_the_fields_that_drive_it():
    base = SLOConfig.default()
    assert base.replace(history_runs=40).work().amount > base.work().amount
    assert base.replace(max_steps=180).work().amount > base.work().amount
    assert base.replace(days=2.0, history_runs=200).work().amount < base.replace(history_runs=200).work().amount


def test_the_config_feeds_the_generator_and_the_inference():
    cfg = SLOConfig.ci().replace(straggler_rate=0.3, d_percentile=75.0)
    assert cfg.history_params().straggler_rate == 0.3 and cfg.history_params(days=2.0).days == 2.0
    assert cfg.slo_options()["d_percentile"] == 75.0


# ---- run -> result ------------------------------------------------------------------------------------
def test_run_is_deterministic_and_refits_what_it_reports(result):
    again = run(TINY)
    pd.testing.assert_frame_equal(result.summary(), again.summary())
    assert np.array_equal(result.focus_fit.skyline, again.focus_fit.skyline)
    assert result.focus in result.slo.index[result.slo.actionable]
    assert result.focus_runs.shape[0] == result.focus_fit.n_runs <= TINY.history_runs
    refit_ = fit_skyline(result.focus_runs, TINY.alpha, beta_fraction=TINY.beta_fraction)
    assert np.array_equal(refit_.skyline, result.focus_fit.skyline)
    j = penalty(result.focus_fit.skyline, result.focus_runs, TINY.alpha, result.focus_fit.beta).objective
    assert j == pytest.approx(result.focus_fit.objective, rel=1e-6, abs=1e-6)
    assert list(result.summary().index) == ["user", policy(TINY.alpha)]


def test_run_finds_the_periodic_templates_and_their_periods(result):
    det = result.detection()
    assert (det.loc["periodic", "right period"] == det.loc["periodic", "templates"])
    assert det.loc[["aperiodic", "adhoc"], "found periodic"].sum() == 0


def test_the_focus_table_scores_every_allocation_on_the_same_j(result):
    t = result.focus_table()
    assert list(t.index) == [f"R* ({policy(TINY.alpha)})", "max envelope", "95th percentile", "mean", "user"]
    assert t.loc["max envelope", "final debt A_u"] == 0.0
    assert t["J(s)"].idxmin() == f"R* ({policy(TINY.alpha)})"  # R* minimises J among them
    assert all("/" in m for m in t["held-out misses"])


def test_no_actionable_template_is_named_in_the_error():
    with pytest.raises(ValueError, match="no periodic template has an actionable SLO"):
        run(TINY.replace(min_slack_ratio=10.0))


# ---- sweeps -------------------------------------------------------------------------------------------
def test_pooled_fleet_trades_waste_for_misses_over_alpha(pooled):
    s = pooled.summary()
    assert list(s.index) == ["user"] + [policy(a) for a in FLEET_ALPHAS]
    order = [policy(a) for a in FLEET_ALPHAS]
    misses, areas = s.miss_rate[order].to_numpy(), s.median_area_ratio[order].to_numpy()
    assert (np.diff(misses) >= 0).all() and misses[-1] > misses[0]
    assert (np.diff(areas) <= 0).all() and areas[-1] < areas[0]
    assert set(pooled.per_run.seed) == {TINY.seed, TINY.seed + 1, TINY.seed + 2}
    assert pooled.detection_errors() == []
    assert 0 < pooled.with_slo_share() <= 1
    assert set(pooled.harm().index) == {"meet", "miss", "fail"}


def test_pooled_fleet_adds_the_configs_alpha():
    p = pooled_fleet(TINY.replace(alpha=0.3), seeds=(0,))
    assert p.alphas == (0.01, 0.1, 0.3, 0.5)


def test_more_history_means_fewer_worst_case_misses(result):
    sweep = history_sweep(result, sizes=(2, 10))
    assert sweep.miss_rate.loc[10] < sweep.miss_rate.loc[2]
    assert sweep.user_miss_rate.nunique() == 1  # the users' provisioning does not learn


def test_the_regulariser_sweep_makes_r_star_less_lazy(result):
    reg = regulariser_sweep(result, fractions=(0.0, 2.0))
    assert reg.epsilon.loc[2.0] <= reg.epsilon.loc[0.0] + 1e-9
    assert reg.beta.loc[0.0] == 0.0


def test_the_lazy_example_is_lazy_without_the_regulariser_only():
    lz = lazy_example()
    assert lz.lazy.skyline.tolist() == pytest.approx([0, 1, 1, 0], abs=1e-9)
    assert lz.regularised.skyline.tolist() == pytest.approx([1, 1, 1, 0], abs=1e-9)
    t = lz.table()
    assert t["J without beta"].iloc[0] < t["J without beta"].iloc[1]  # lazy is cheaper without beta ...
    assert t["J with beta"].iloc[0] > t["J with beta"].iloc[1]  # ... and dearer with it


# ---- the contract over time (TelemetryLog, refit, drift) ----------------------------------------------------
def test_a_log_replays_the_history_and_refits_what_infer_contracts_does(result):
    h = result.history
    log = TelemetryLog.from_history(h)
    assert len(log) == len(h.runs)
    direct = infer_contracts(h.submissions, h.runs, h.skyline_lists(), alpha=TINY.alpha,
                             beta_fraction=TINY.beta_fraction, max_history=TINY.history_runs,
                             detect_options=TINY.detect_options(), slo_options=TINY.slo_options())
    via_log = refit(log, TINY)
    assert set(via_log) == set(direct) and via_log
    for name, c in via_log.items():
        assert (c.period, c.a_j, c.d_j) == (direct[name].period, direct[name].a_j, direct[name].d_j)
        again = fit_skyline(align_skylines(h.skyline_list(name)[-TINY.history_runs:]), TINY.alpha,
                            beta_fraction=TINY.beta_fraction)
        assert np.array_equal(c.skyline, again.skyline)


def test_a_log_until_t_holds_only_what_had_happened(result):
    h = result.history
    log = TelemetryLog.from_history(h)
    t = 2.5 * 86400
    past = log.until(t)
    runs = past.runs()
    assert (runs.t_end <= t).all() and (past.submissions().submit_time <= t).all()
    read_later = h.runs[(h.runs.t_end <= t) & (h.runs.t_out_read > t)]
    if len(read_later):
        r = read_later.iloc[0]
        row = runs[(runs.template == r.template) & (runs.run == r.run)]
        assert row.t_out_read.isna().all()  # read after t: not in the provenance graph yet


@pytest.mark.parametrize("action, message", [
    (lambda log: log.submit("a", 0, 5.0, period_start=0.0), "already submitted"),
    (lambda log: log.finish("b", 0, t_in_avail=0, t_start=0, t_end=60, skyline=[1]), "never submitted"),
    (lambda log: log.finish("a", 0, t_in_avail=0, t_start=100, t_end=60, skyline=[1]), "ends before it starts"),
    (lambda log: log.finish("a", 0, t_in_avail=0, t_start=0, t_end=60, skyline=[1, -2]), "finite numbers >= 0"),
    (lambda log: log.finish("a", 0, t_in_avail=0, t_start=0, t_end=60, skyline=[]), "non-empty"),
    (lambda log: log.submit("c", 0, float("nan"), period_start=0.0), "submit_time=nan"),
])
def test_a_log_refuses_impossible_records(action, message):
    log = TelemetryLog()
    log.submit("a", 0, 5.0, period_start=0.0)
    with pytest.raises(ValueError, match=message):
        action(log)


def test_a_read_before_the_run_ended_is_refused_and_only_the_first_read_is_kept():
    log = TelemetryLog()
    log.submit("a", 0, 5.0, period_start=0.0)
    log.finish("a", 0, t_in_avail=0.0, t_start=10.0, t_end=130.0, skyline=[1, 2])
    with pytest.raises(ValueError, match="before it ended"):
        log.read("a", 0, 100.0)
    log.read("a", 0, 500.0)
    log.read("a", 0, 300.0)
    log.read("a", 0, 900.0)
    assert log.runs().t_out_read.tolist() == [300.0]


def test_a_long_window_gets_a_history_long_enough_to_settle():
    d = drift_experiment(TINY.replace(drift_window=30))
    before, after = d.areas("window")
    assert math.isfinite(before) and math.isfinite(after)


def test_drift_contract_follows_the_job_and_is_refitted_from_the_past_only():
    cfg = TINY.replace(drift_factor=1.8, drift_window=4, days=10.0)
    d = drift_experiment(cfg)
    w = d.timeline[d.timeline.policy == "window"]
    before, after = d.areas("window")
    assert after > 1.3 * before
    assert w.time.max() >= d.settled_time + 86400  # the history is long enough for the window to settle
    # each day's contract is what refit gives on the log as it stood at midnight
    log = TelemetryLog.from_history(d.history)
    row = w.iloc[len(w) // 2]
    c = refit(log.until(row.time), cfg, max_history=cfg.drift_window)[d.template]
    assert (c.fit.area, c.d_j, c.n_runs) == pytest.approx((row.area, row.d_j, row.n_runs))
    assert set(d.runs.policy) == {"window", "history"}
    assert (d.runs.period_start >= d.runs.fitted_day * 86400).all()  # replayed only after the refit


# ---- the claims (issue 25) ---------------------------------------------------------------------------------
def test_lab02_claims_reproduce_at_ci(tmp_path):
    from cluster_sim import claims

    table = slo_claims_table(SLOConfig.ci(), pool_size=4, cache=tmp_path)
    claims.check(table)
    rows = table.set_index("claim")
    assert rows.loc["rstar_fewer_misses", "role"] == "reported"  # 13x does not reproduce: never a "holds"
    assert rows.loc["over_provisioned", "paper"] == 0.75 and rows.loc["over_provisioned", "verdict"] == "reported"


def test_alpha_ignored_fails_its_claim(monkeypatch):
    from cluster_sim import claims
    from cluster_sim.morpheus.slo import fleet

    real = fleet.fit_skyline
    # the LP's alpha switched off: every policy's R* fitted at the smallest alpha
    monkeypatch.setattr(fleet, "fit_skyline", lambda runs, alpha, **kw: real(runs, min(FLEET_ALPHAS), **kw))
    table = slo_claims_table(SLOConfig.ci(), pool_size=3, cache=False)
    with pytest.raises(claims.ClaimFailed, match="alpha_trades_waste"):
        claims.check(table)


def test_alpha_one_is_refused_as_an_empty_contract():
    # at alpha = 1 the LP weighs only over-allocation: R* = 0, which the old closing cell read as "wastes nothing"
    runs = np.array([[2.0, 3.0, 1.0], [1.0, 4.0, 2.0]])
    assert fit_skyline(runs, 1.0).skyline.sum() == pytest.approx(0.0, abs=1e-7)
    with pytest.raises(ValueError, match=r"alpha=1.0 is out of range: allowed 0 <= alpha < 1 \(at alpha = 1"):
        SLOConfig.ci().replace(alpha=1.0)


def test_the_month_lp_is_the_papers_size():
    size = month_lp_size()
    assert size["recursion"] == (2 * 30 * 1440 + 1440 + 1, 2 * 30 * 1440 + 1)  # under 100K, as §5 says
    assert size["compact"][0] < size["recursion"][0]


# ---- figures and the panel ---------------------------------------------------------------------------------
def test_every_figure_draws_without_pyplot(result, pooled):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    d = drift_experiment(TINY)
    figs = [plot_life(), plot_fig2a(result), plot_periodicity(result), plot_fig4(result), plot_fig9a(result),
            plot_penalty_terms(HAND.runs, HAND.s), plot_lazy(lazy_example()), plot_fig5(result),
            plot_fig9bc(pooled.per_run), plot_fig9bc(result.fleet), plot_history_sweep(history_sweep(result, sizes=(2, 5))),
            plot_drift(d), plot_result(result)]
    assert all(isinstance(f, Figure) and f.axes for f in figs)
    assert plt.get_fignums() == before


def test_the_panel_reruns_refuses_and_names_the_field():
    panel = ConfigPanel(TINY, run, plot_result,
                        fields=["alpha", "beta_fraction", "history_runs", "run_noise", "straggler_rate",
                                "a_percentile", "d_percentile", "seed"])
    panel.set(alpha=0.5)
    assert panel.runs == 2 and panel.result.config.alpha == 0.5 and panel.image is not None
    panel.set(history_runs=500)  # beyond the slider: the parameters cell's business
    assert panel.error.startswith("history_runs = 500 was refused") and panel.runs == 2
    panel.type_value("a_percentile", "120")
    assert "a_percentile" in panel.error and panel.config.a_percentile == TINY.a_percentile
    panel.set(seed=3)
    assert panel.runs == 3 and panel.error is None


# ---- the exercise's checks and its misconceptions ------------------------------------------------------------
def over_right(s, runs):
    return penalty(s, runs, 1.0).over


def debt_right(s, runs):
    return debt(s, runs)


def j_right(s, runs, alpha):
    return penalty(s, runs, alpha).objective


def debt_with_credit(s, runs):
    """The recursion without its (.)+: an early surplus is kept as credit."""
    return np.cumsum(np.asarray(runs) - np.asarray(s), axis=1)


def j_every_step(s, runs, alpha):
    """Charges the debt at every step instead of the last."""
    return alpha * over_right(s, runs) + (1 - alpha) * debt(s, runs).sum(axis=1).mean()


def j_over_steps(s, runs, alpha):
    """Averages the final debt over the K steps instead of the N runs."""
    return alpha * over_right(s, runs) + (1 - alpha) * debt(s, runs)[:, -1].sum() / runs.shape[1]


def over_over_steps(s, runs):
    """Averages the over-allocation over the K steps instead of the N runs."""
    return np.maximum(s[None, :] - runs, 0).sum() / runs.shape[1]


def rows_without_the_chain(runs, layout):
    """Forgets D_i,k-1: each row is D_ik >= s_ik - s_k alone."""
    A, b = debt_constraints(runs, layout)
    A = A.toarray()
    A[A == 1.0] = 0.0
    return A, b


def test_the_right_answers_pass_every_check(reference_as_student):
    assert "agree" in check_over_allocation(over_right, seeds=(0, 1))
    assert "agree" in check_debt_table(debt_right, seeds=(0, 1))
    assert "agree" in check_penalty(j_right, seeds=(0, 1))
    assert "agree" in check_debt_rows(lambda runs, layout: debt_constraints(runs, layout), seeds=(0, 1))


def test_the_hand_case_separates_the_three_misconceptions():
    right = penalty(HAND.s, HAND.runs, 0.0).under
    wrong = wrong_under(HAND.runs, HAND.s)
    assert len({right, *wrong.values()}) == 4, wrong


@pytest.mark.parametrize("check, wrong, cause", [
    (check_debt_table, debt_with_credit, "the debt went below zero"),
    (check_penalty, j_every_step, "the debt was charged at every step"),
    (check_penalty, j_over_steps, "averages over the K steps instead of the N runs"),
    (check_over_allocation, over_over_steps, "averages over the K steps instead of the N runs"),
])
def test_each_misconception_fails_its_check_naming_the_cause(check, wrong, cause, reference_as_student):
    for seed in (0, 1, 2):
        with pytest.raises(AssertionError) as e:
            check(wrong, seeds=(seed,))
        msg = str(e.value)
        assert cause in msg, msg
        assert "the hand case" in msg  # the first case already discriminates


def test_a_wrong_debt_is_located_by_run_and_step():
    with pytest.raises(AssertionError, match=r"run 1, step 0: yours D_1,0 = -1, expected 0"):
        check_debt_table(debt_with_credit)


def test_a_wrong_debt_row_is_named_with_its_run_step_and_variables(reference_as_student):
    with pytest.raises(AssertionError) as e:
        check_debt_rows(rows_without_the_chain)
    msg = str(e.value)
    assert "row 1 (run 0, step 1) differs" in msg and "+ 1·D_0,0" in msg


def test_the_lp_with_the_students_rows_reaches_the_librarys_optimum(reference_as_student):
    case = penalty_cases(0)[3]
    s, value = solve_with_debt_rows(lambda runs, layout: debt_constraints(runs, layout), case.runs, 0.3)
    assert value == pytest.approx(fit_skyline(case.runs, 0.3, beta_fraction=0.0).objective, abs=1e-7)
    assert penalty(s, case.runs, 0.3).objective == pytest.approx(value, abs=1e-7)


@pytest.mark.parametrize("check, arity", [
    (check_over_allocation, 2), (check_debt_table, 2), (check_penalty, 3), (check_debt_rows, 2),
])
def test_an_unsolved_exercise_fails_every_check_with_the_not_implemented_message(check, arity):
    def stub(*args):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="not implemented yet") as e:
        check(stub)
    assert NOT_IMPLEMENTED in str(e.value)
