"""SLO inference (§4) on seeded synthetic histories, and the generator it reads."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from cluster_sim.morpheus import HistoryParams, detect_periodic, generate_history, infer_slo, robust_cv
from cluster_sim.morpheus.slo.inference import RUN_COLUMNS

SEEDS = (0, 1, 2)
SMALL = HistoryParams(days=5, n_periodic=10, n_off_kilter=2, n_aperiodic=3, n_adhoc=10)


@pytest.fixture(scope="module", params=SEEDS)
def history(request):
    return generate_history(np.random.default_rng(request.param), SMALL)


def periodic_runs(h):
    return h.runs[h.runs.kind.isin(["periodic", "off_kilter"])]


# ---- the generator ---------------------------------------------------------------------------
def test_same_seed_same_history_different_seed_different():
    a = generate_history(np.random.default_rng(7), SMALL)
    b = generate_history(np.random.default_rng(7), SMALL)
    c = generate_history(np.random.default_rng(8), SMALL)
    pd.testing.assert_frame_equal(a.runs, b.runs)
    pd.testing.assert_frame_equal(a.reads, b.reads)
    assert all(np.array_equal(x, y) for t in a.skylines for x, y in zip(a.skylines[t], b.skylines[t]))
    assert not a.runs[["t_start", "t_end"]].equals(c.runs[["t_start", "t_end"]])


def test_fig4_times_are_in_order(history):
    r = history.runs
    assert (r.t_start >= r.t_in_avail).all() and (r.t_start >= r.submit_time).all()
    assert np.allclose(r.t_end - r.t_start, 60.0 * r.steps)
    read = r.t_out_read.notna()
    assert (r.t_out_read[read] >= r.t_end[read]).all()
    assert r.t_out_read[r.failed].isna().all()  # a failed run leaves no output to read


def test_skylines_are_usable_and_failed_runs_are_cut_short(history):
    for t, runs in history.skylines.items():
        steps = history.runs_of(t).steps.to_numpy()
        assert [s.size for s in runs] == steps.tolist()
        assert all(np.isfinite(s).all() and (s > 0).all() for s in runs)


def test_user_provisioning_follows_fig_2a():
    h = generate_history(np.random.default_rng(0), dataclasses.replace(SMALL, n_periodic=300, days=1))
    f = h.templates.provision_factor
    assert 0.2 < (f < 1).mean() < 0.3  # 25% under-provisioned
    over = f[f > 1]
    assert 0.12 < (over >= 10).mean() < 0.28  # a fifth of the over-provisioned at 10x or more


def test_drift_lengthens_the_runs_after_it():
    p = dataclasses.replace(SMALL, days=20, n_periodic=6, drift_at=0.5, drift_share=1.0, drift_factor=2.0,
                            straggler_rate=0.0, failure_rate=0.0)
    h = generate_history(np.random.default_rng(4), p)
    for t, spec in h.templates[h.templates.kind == "periodic"].iterrows():
        runs = h.runs_of(t)
        assert runs.drifted.to_numpy().tolist() == (runs.run >= spec.drift_run).tolist()
        before, after = runs[~runs.drifted].steps.mean(), runs[runs.drifted].steps.mean()
        assert after > 1.5 * before


def test_input_delays_delay_the_start():
    p = dataclasses.replace(SMALL, input_delay_rate=0.5, input_delay_mean=0.2)
    r = periodic_runs(generate_history(np.random.default_rng(5), p))
    late = r.t_start - r.period_start
    assert late[r.input_delayed].median() > late[~r.input_delayed].median()


@pytest.mark.parametrize("change, message", [
    ({"days": 0}, r"HistoryParams.days=0 is out of range"),
    ({"straggler_rate": float("nan")}, r"HistoryParams.straggler_rate=nan is not a number"),
    ({"periods": (3600.0, 3480.0), "period_weights": (0.5, 0.5)}, r"do not divide a day"),
    ({"period_weights": (1.0,)}, r"need the same non-zero length"),
    ({"min_steps": 50, "max_steps": 10}, r"min_steps=50 exceeds max_steps=10"),
])
def test_history_params_refuse_bad_values(change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(SMALL, **change)


def test_generate_history_needs_a_generator():
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        generate_history(42, SMALL)


# ---- detect_periodic ---------------------------------------------------------------------------
def test_detection_recovers_the_periodic_templates_and_their_periods(history):
    found = detect_periodic(history.submissions)
    truth = history.templates
    periodic = truth.kind.isin(["periodic", "off_kilter"])
    assert found.periodic.reindex(truth.index).tolist() == periodic.tolist()
    assert (found.period[periodic[periodic].index] == truth.period[periodic]).all()  # exact, to the minute


def test_off_kilter_periods_stay_as_they_are(history):
    found = detect_periodic(history.submissions)
    off = history.templates[history.templates.kind == "off_kilter"]
    assert set(found.period[off.index]) <= {3480.0, 6000.0}
    assert (86400 % found.period[off.index] != 0).all()  # periodic, but not dividing a day


def test_ad_hoc_jobs_are_not_periodic_and_have_no_period(history):
    found = detect_periodic(history.submissions)
    adhoc = history.templates.index[history.templates.kind == "adhoc"]
    assert not found.periodic[adhoc].any()
    assert found.period[adhoc].isna().all() and found.cv[adhoc].isna().all()
    assert (found.n_submissions[adhoc] == 1).all()


def test_aperiodic_recurring_jobs_fail_on_cv(history):
    found = detect_periodic(history.submissions)
    ap = history.templates.index[history.templates.kind == "aperiodic"]
    assert (found.cv[ap] > 0.1).all() and not found.periodic[ap].any()
    # the threshold is what separates them: loosen it enough and they pass
    assert detect_periodic(history.submissions, cv_threshold=10).periodic[ap].all()


def test_a_skipped_run_does_not_hide_a_period():
    t = np.arange(0, 20) * 3600.0
    t = np.delete(t, [5, 11])  # two missed hours
    found = detect_periodic(pd.DataFrame({"template": "x", "submit_time": t}))
    assert found.loc["x", "period"] == 3600.0 and found.loc["x", "periodic"]


def test_robust_cv():
    assert robust_cv([10, 10, 10]) == 0.0
    assert robust_cv([1, 2, 3, 4, 100]) == pytest.approx(1 / 3)
    assert np.isnan(robust_cv([]))


# ---- infer_slo --------------------------------------------------------------------------------
def test_scheduled_consumers_give_deadlines_near_their_read_time(history):
    slo = infer_slo(periodic_runs(history))
    truth = history.templates
    sched = truth.index[truth.consumer_kind == "scheduled"]
    assert slo.actionable[sched].all()
    period = truth.period[sched]
    assert (abs(slo.d_j[sched] - truth.read_offset[sched]) < 0.03 * period).all()
    assert ((slo.a_j[sched] >= truth.input_offset[sched]) & (slo.a_j[sched] < slo.d_j[sched])).all()


def test_non_actionable_templates_get_no_slo(history):
    slo = infer_slo(periodic_runs(history))
    kind = history.templates.consumer_kind.reindex(slo.index)
    assert (~slo.actionable).tolist() == kind.isin(["chained", "random"]).tolist()
    off = slo[~slo.actionable]
    assert off.a_j.isna().all() and off.d_j.isna().all()
    assert off.reason[kind[~slo.actionable] == "chained"].str.startswith("no slack").all()
    assert off.reason[kind[~slo.actionable] == "random"].str.startswith("output read at no fixed time").all()


def test_percentiles_move_a_j_and_d_j(history):
    runs = periodic_runs(history)
    base = infer_slo(runs)
    ok = base.index[base.actionable]
    early = infer_slo(runs, a_percentile=50, d_percentile=10)
    assert (early.a_j[ok] <= base.a_j[ok]).all() and (early.d_j[ok] <= base.d_j[ok]).all()


def test_too_few_runs_means_no_slo():
    day = 86400.0
    runs = pd.DataFrame({"template": "weekly", "period_start": np.arange(4) * 7 * day})
    runs["t_in_avail"] = runs.period_start + 60
    runs["t_start"] = runs.t_in_avail + 60
    runs["t_end"] = runs.t_start + 600
    runs["t_out_read"] = runs.period_start + 36000
    slo = infer_slo(runs)  # the paper's four weekly samples: too little data
    assert not slo.loc["weekly", "actionable"] and "too few read runs (4 < min_runs=5)" in slo.loc["weekly", "reason"]
    assert infer_slo(runs, min_runs=4).loc["weekly", "actionable"]


def test_failed_runs_are_left_out(history):
    runs = periodic_runs(history)
    with_col = infer_slo(runs)
    by_hand = infer_slo(runs[~runs.failed].drop(columns="failed"))
    pd.testing.assert_frame_equal(with_col, by_hand)


@pytest.mark.parametrize("column", RUN_COLUMNS)
def test_infer_slo_names_a_missing_column(column):
    runs = pd.DataFrame({c: [0.0] for c in RUN_COLUMNS}).drop(columns=column)
    with pytest.raises(ValueError, match=rf"runs is missing column\(s\) \['{column}'\]"):
        infer_slo(runs)


def test_detect_periodic_names_a_missing_column():
    with pytest.raises(ValueError, match=r"submissions is missing column\(s\) \['submit_time'\]"):
        detect_periodic(pd.DataFrame({"template": ["a"], "time": [0.0]}))


def small_runs():
    return pd.DataFrame({"template": ["a"] * 2, "period_start": [0.0, 100.0], "t_in_avail": [1.0, 101.0],
                         "t_start": [2.0, 102.0], "t_end": [5.0, 105.0], "t_out_read": [50.0, 150.0]})


@pytest.mark.parametrize("column, value, message", [
    ("t_start", np.nan, r"runs\['t_start'\] has NaN or a non-number at row 1"),
    ("t_end", 1.0, r"runs row 1 ends before it starts"),
    ("t_out_read", 104.0, r"runs row 1 has its output read before the run ended"),
])
def test_infer_slo_refuses_impossible_runs(column, value, message):
    runs = small_runs()
    runs.loc[1, column] = value
    with pytest.raises(ValueError, match=message):
        infer_slo(runs)


@pytest.mark.parametrize("kwargs, message", [
    ({"a_percentile": 101}, r"a_percentile=101 is out of range"),
    ({"d_percentile": -1}, r"d_percentile=-1 is out of range"),
    ({"cv_threshold": -0.1}, r"cv_threshold=-0.1 is out of range"),
    ({"min_runs": 0}, r"min_runs=0 is not allowed"),
])
def test_infer_slo_refuses_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        infer_slo(small_runs(), **kwargs)


def test_empty_tables_are_refused():
    with pytest.raises(ValueError, match="submissions is empty"):
        detect_periodic(pd.DataFrame({"template": [], "submit_time": []}))
    with pytest.raises(ValueError, match="runs is empty"):
        infer_slo(small_runs().iloc[:0])
