"""Lab 02's inference at the edges of its input: duplicate submissions, datetimes, infinities, rows with no
template, huge numbers. Each either gives the right answer or a ValueError naming the argument; none is
a silent wrong answer."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_sim.morpheus import HistoryParams, detect_periodic, fit_skyline, infer_slo, penalty
from cluster_sim.morpheus.slo.runs import check_skylines

HOUR, DAY = 3600.0, 86400.0


def hourly(n: int = 8) -> np.ndarray:
    return np.arange(n) * HOUR


def daily_runs(n: int = 5) -> pd.DataFrame:
    """Five daily runs whose output is read at 16:00 (infer_slo's docstring example)."""
    ps = np.arange(n) * DAY
    t_in = ps + np.array([600.0, 620.0, 590.0, 3000.0, 610.0])[:n]
    return pd.DataFrame({"template": "etl", "period_start": ps, "t_in_avail": t_in, "t_start": t_in + 60.0,
                         "t_end": t_in + 3660.0, "t_out_read": ps + 57600.0})


# ---- (a) the same submissions twice ---------------------------------------------------------------------
def test_duplicate_submissions_count_once_and_keep_the_period():
    """Every hourly submission logged twice: half the inter-arrivals are 0, which takes the median (and
    the period) to 0 -- no robust statistic survives half its sample being one wrong value. A duplicate
    is the same submission, so it counts once; the table says how many were folded in."""
    subs = pd.DataFrame({"template": "a", "submit_time": np.r_[hourly(), hourly()]})
    d = detect_periodic(subs).loc["a"]
    assert d.period == HOUR and bool(d.periodic) and d.cv == 0.0
    assert d.n_submissions == 8 and d.n_duplicates == 8


def test_duplicates_are_counted_per_template_and_a_clean_history_has_none():
    subs = pd.DataFrame({"template": ["a"] * 9 + ["b"] * 6,
                         "submit_time": np.r_[hourly(), [2 * HOUR], np.arange(6) * DAY]})
    d = detect_periodic(subs)
    assert d.n_duplicates.to_dict() == {"a": 1, "b": 0} and d.periodic.all()
    assert d.period.to_dict() == {"a": HOUR, "b": DAY}


def test_duplicates_do_not_make_too_few_submissions_periodic():
    subs = pd.DataFrame({"template": "a", "submit_time": np.r_[hourly(4), hourly(4)]})
    d = detect_periodic(subs, min_submissions=5).loc["a"]
    assert d.n_submissions == 4 and not d.periodic


# ---- (b) datetimes are not seconds ----------------------------------------------------------------------
START = pd.Timestamp("2024-01-01")


@pytest.mark.parametrize("times", [
    pd.Series(START + pd.to_timedelta(hourly(), unit="s")),                              # datetime64[us]
    pd.Series((START + pd.to_timedelta(hourly(), unit="s")).to_numpy().astype("datetime64[ns]")),
    pd.Series(list(START + pd.to_timedelta(hourly(), unit="s")), dtype=object),          # Timestamps
    pd.Series(pd.to_timedelta(hourly(), unit="s")),                                      # timedelta64
], ids=["datetime64[us]", "datetime64[ns]", "Timestamp objects", "timedelta64"])
def test_datetime_submit_times_are_refused_naming_the_unit(times):
    subs = pd.DataFrame({"template": "a", "submit_time": times})
    with pytest.raises(ValueError, match=r"submissions\['submit_time'\] holds .*: need seconds as numbers"):
        detect_periodic(subs)


def test_datetime_run_times_are_refused_naming_the_column():
    runs = daily_runs()
    runs["t_in_avail"] = START + pd.to_timedelta(runs.t_in_avail, unit="s")
    with pytest.raises(ValueError, match=r"runs\['t_in_avail'\] holds datetime64.*: need seconds as numbers"):
        infer_slo(runs)


# ---- (c) infinities -------------------------------------------------------------------------------------
@pytest.mark.parametrize("column", ["period_start", "t_in_avail", "t_start", "t_end", "t_out_read"])
@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_infinite_run_times_are_refused(column, value):
    runs = daily_runs()
    runs.loc[3, column] = value
    with pytest.raises(ValueError, match=rf"runs\['{column}'\] is {value!r} at row 3: need finite seconds"):
        infer_slo(runs)


def test_an_infinite_submit_time_is_refused():
    subs = pd.DataFrame({"template": "a", "submit_time": np.r_[hourly(), math.inf]})
    with pytest.raises(ValueError, match=r"submissions\['submit_time'\] is inf at row 8: need finite seconds"):
        detect_periodic(subs)


# ---- (d) rows with no template --------------------------------------------------------------------------
def test_a_submission_with_no_template_is_refused():
    subs = pd.DataFrame({"template": ["a"] * 6 + [None], "submit_time": np.r_[hourly(6), 5.0]})
    with pytest.raises(ValueError, match=r"submissions\['template'\] is missing at row 6"):
        detect_periodic(subs)


def test_a_run_with_no_template_is_refused():
    runs = daily_runs().astype({"template": object})
    runs.loc[3, "template"] = np.nan
    with pytest.raises(ValueError, match=r"runs\['template'\] is missing at row 3"):
        infer_slo(runs)


# ---- (e) numbers too large for a float ------------------------------------------------------------------
def test_huge_integers_are_refused_by_the_pure_checks():
    with pytest.raises(ValueError, match=r"alpha=~1e400 is out of range"):
        penalty([1, 1], [[1, 2], [2, 1]], alpha=10**400)
    with pytest.raises(ValueError, match=r"alpha=~1e5000 is out of range"):  # too long for repr itself
        fit_skyline([[1, 2], [2, 1]], alpha=10**5000)
    with pytest.raises(ValueError, match=r"skylines is not an N x K array of numbers"):
        check_skylines([[1, 10**400], [1, 2]])


@pytest.mark.parametrize("changes, message", [
    (dict(periods=(0.0,), period_weights=(1.0,)), r"HistoryParams.periods=\(0.0,\) is not allowed: need periods > 0"),
    (dict(periods=(-3600.0,), period_weights=(1.0,)), r"HistoryParams.periods=\(-3600.0,\) is not allowed"),
    (dict(period_weights=(0.4, 0.05, 0.05, 0.05, 0.05, math.nan)), r"HistoryParams.period_weights=.* is not allowed"),
    (dict(period_weights=(-1.0, 0.5, 0.5, 0.5, 0.5, 0.0)), r"HistoryParams.period_weights=.* is not allowed"),
    (dict(period_weights=(0.0,) * 6), r"HistoryParams.period_weights=.* is not allowed: .*positive sum"),
    (dict(off_kilter_periods=(0.0,)), r"HistoryParams.off_kilter_periods=\(0.0,\) is not allowed"),
    (dict(periods=3600.0), r"HistoryParams.periods=3600.0 is not allowed: need periods > 0 .*as a tuple"),
    (dict(duration_share=(0.1,)), r"HistoryParams.duration_share=\(0.1,\) is not allowed"),
    (dict(duration_share=("a", "b")), r"HistoryParams.duration_share=\('a', 'b'\) is not allowed"),
    (dict(days=10**5000), r"HistoryParams.days=~1e5000 is out of range: allowed 0.5 <= days <= 120"),
    (dict(days="3"), r"HistoryParams.days='3' has the wrong type"),
    (dict(n_periodic=2.5), r"HistoryParams.n_periodic=2.5 has the wrong type: expected int"),
    (dict(days=np.array(3.0)), r"HistoryParams.days=array\(3.\) is an array"),
])
def test_history_params_refuse_what_the_generator_cannot_use(changes, message):
    with pytest.raises(ValueError, match=message):
        HistoryParams(**changes)


# ---- a fuzz of the inference's edge inputs --------------------------------------------------------------
EDGE_TIMES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, HOUR, DAY, -1.0]),
                       st.integers(-10**30, 10**30).map(float))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(times=st.lists(EDGE_TIMES, min_size=1, max_size=12), dup=st.booleans(),
       names=st.lists(st.sampled_from(["a", "b", None]), min_size=1, max_size=12))
def test_detect_periodic_answers_or_refuses(times, dup, names):
    t = np.r_[times, times] if dup else np.asarray(times, dtype=float)
    subs = pd.DataFrame({"template": (names * len(t))[:len(t)], "submit_time": t})
    try:
        d = detect_periodic(subs)
    except ValueError:
        return
    assert np.isfinite(subs.submit_time).all() and subs.template.notna().all()
    periodic = d[d.periodic]
    assert (np.isfinite(periodic.period) & (periodic.period > 0)).all()
    assert (d.n_submissions + d.n_duplicates).sum() == len(subs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row=st.integers(0, 4), column=st.sampled_from(["period_start", "t_in_avail", "t_start", "t_end", "t_out_read"]),
       value=EDGE_TIMES)
def test_infer_slo_answers_or_refuses(row, column, value):
    runs = daily_runs()
    runs.loc[row, column] = value
    try:
        slo = infer_slo(runs)
    except ValueError:
        return
    ok = slo[slo.actionable]
    assert np.isfinite(ok[["a_j", "d_j", "slack_ratio", "cv_out_read"]].to_numpy()).all(), slo


@pytest.mark.parametrize("changes, message", [
    (dict(task_minutes=10**400), r"task_minutes=~1e400 is out of range"),
    (dict(stages=((math.nan, 2.0),)), r"stages=.* is not allowed: need \(width >= 1, minutes > 0\) per stage, both finite"),
    (dict(stages=((2, math.inf),)), r"stages=.* is not allowed"),
])
def test_lab03_templates_refuse_numbers_they_cannot_use(changes, message):
    from cluster_sim.morpheus.packing.periodic import Template

    base = dict(name="etl", period=60, input_offset=2.0, submit_offset=3.0, stages=((4, 6.0),), task_minutes=2.0,
                provisioned=8, read_offset=30.0)
    with pytest.raises(ValueError, match=message):
        Template(**{**base, **changes})
