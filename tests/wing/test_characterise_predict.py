"""Table 1's heuristics, the observations of §2.3 and the §3 predictor, on hand-built logs with known answers."""

import numpy as np
import pandas as pd
import pytest

from cluster_sim.wing import (
    DAY,
    HOUR,
    PAPER,
    LakeConfig,
    best_threshold,
    classify,
    classify_templates,
    components,
    generate_lake,
    heuristic_agreement,
    observations,
    relative_error_cdf,
    single_hop,
    t1_curve,
    t2_errors,
    t2_summary,
    table1,
)
from cluster_sim.wing.characterise import first_consumption

MIN = 60.0


def log(rows):
    """Jobs from (template, submit, runtime) rows, numbered in order."""
    j = pd.DataFrame(rows, columns=["template", "submit", "runtime"])
    j.insert(0, "job", np.arange(len(j)))
    j["end"] = j["submit"] + j["runtime"]
    return j


@pytest.fixture(scope="module")
def lake():
    return generate_lake(LakeConfig.ci())


# ---- Table 1 ----------------------------------------------------------------------------------
def toy_log():
    """14 days: U daily on the clock, P polling on U (1-10 min after it ends), A irregular, X twice, W in week 2 only."""
    rng = np.random.default_rng(0)
    rows = []
    runtime = rng.uniform(300, 900, 14)
    for d in range(14):
        rows.append(("U", d * DAY + 3600.0 + rng.uniform(0, 1), runtime[d]))
    for d in range(14):
        rows.append(("P", d * DAY + 3600.0 + runtime[d] + rng.uniform(1, 10) * MIN, 300.0))
    for t in np.cumsum(rng.gamma(2.0, DAY / 2, 12)):
        rows.append(("A", float(t), 100.0))
    rows += [("X", 2 * DAY, 10.0), ("X", 9 * DAY, 10.0)]
    rows += [("W", d * DAY + 5.0, 10.0) for d in range(8, 13)]
    jobs = log(rows)
    u = jobs[jobs["template"] == "U"]["job"].to_numpy()
    p = jobs[jobs["template"] == "P"]["job"].to_numpy()
    deps = pd.DataFrame({"job": p, "depOn": u})
    return jobs, deps


def test_template_heuristics_on_a_toy_log():
    jobs, deps = toy_log()
    tc = classify_templates(jobs, deps)
    assert tc.loc["U", "recurring"] and tc.loc["U", "periodic"] and not tc.loc["U", "polling"]
    assert tc.loc["P", "recurring"] and tc.loc["P", "polling"]
    # P's gaps inherit U's daily cadence: a loose CV threshold calls it periodic, and so not polling
    loose = classify_templates(jobs, deps, periodic_cv=0.05)
    assert loose.loc["P", "periodic"] and not loose.loc["P", "polling"]
    assert tc.loc["A", "recurring"] and not tc.loc["A", "periodic"] and not tc.loc["A", "polling"]
    assert not tc.loc["X", "recurring"]  # two runs
    assert not tc.loc["W", "recurring"]  # five runs, none in the first week: not in every full period
    assert classify_templates(jobs, deps, period=28 * DAY).loc["W", "recurring"]  # no full period: count only
    with pytest.raises(ValueError, match="min_runs=0"):
        classify_templates(jobs, deps, min_runs=0)


def test_polling_needs_the_submission_close_to_the_latest_input():
    jobs, deps = toy_log()
    late = jobs.assign(submit=np.where(jobs["template"] == "P", jobs["submit"] + 20 * MIN, jobs["submit"]))
    assert not classify_templates(late, deps).loc["P", "polling"]  # 25 min after U ended: not within 15


def test_hard_dependency_rules():
    # D1 reads exactly one U job each time (rule b); D3 always reads three (rule c); DV reads 1, 2 or 3 (neither)
    rows = [("U", h * HOUR, 60.0) for h in range(24 * 14)]
    rows += [(t, d * DAY + 12 * HOUR, 60.0) for d in range(14) for t in ("D1", "D3", "DV")]
    jobs = log(rows)
    sub = jobs.set_index("job")
    u = jobs[jobs["template"] == "U"].set_index("submit")["job"]
    deps = []
    for j, row in sub[sub["template"] != "U"].iterrows():
        n = {"D1": 1, "D3": 3, "DV": 1 + (int(row["submit"] // DAY) % 3)}[row["template"]]
        before = u[u.index < row["submit"] - 3600]
        deps += [(j, int(x)) for x in before.iloc[-n:]]
    deps = pd.DataFrame(deps, columns=["job", "depOn"])
    _, dc = classify(jobs, deps)
    kind = sub["template"].reindex(dc["job"]).to_numpy()
    assert dc["recurring"].all()
    assert dc["hard"][kind == "D1"].all() and dc["hard"][kind == "D3"].all()
    assert not dc["hard"][kind == "DV"].any()
    # an ad hoc consumer's dependencies are hard (rule a)
    jobs2 = pd.concat([jobs, log([("adhoc1", 13 * DAY, 5.0)]).assign(job=len(jobs))], ignore_index=True)
    deps2 = pd.concat([deps, pd.DataFrame({"job": [len(jobs)], "depOn": [0]})], ignore_index=True)
    _, dc2 = classify(jobs2, deps2)
    assert dc2.iloc[-1]["hard"] and not dc2.iloc[-1]["recurring"]


def test_table1_and_the_heuristics_against_the_generators_truth(lake):
    deps = single_hop(lake.prov)
    t1 = table1(lake.jobs, deps).set_index("characteristic")["share"]
    assert t1["recurring jobs"] + t1["ad hoc jobs"] == pytest.approx(1.0)
    assert t1["periodic jobs"] + t1["polling jobs"] <= t1["recurring jobs"] + 1e-12
    assert t1.between(0, 1).all()
    ag = heuristic_agreement(lake.jobs, deps).set_index("heuristic")["agreement"]
    assert ag["recurring"] >= 0.8 and ag["periodic"] >= 0.8 and ag["polling"] >= 0.8
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['kind', 'dep_mode'\]"):
        heuristic_agreement(lake.jobs.drop(columns=["kind", "dep_mode"]), deps)


# ---- the observations -----------------------------------------------------------------------------
def test_components_and_bottom_heaviness():
    jobs = pd.DataFrame({"job": range(30)})
    star = pd.DataFrame({"job": [1, 2, 3, 4], "depOn": [0, 0, 0, 0]})  # one job feeding four: bottom-heavy
    fan_in = pd.DataFrame({"job": [29] * 4, "depOn": [25, 26, 27, 28]})  # four feeding one: top-heavy
    chain = pd.DataFrame({"job": [11, 12], "depOn": [10, 11]})
    cc = components(jobs, pd.concat([star, fan_in, chain]))
    by_size = cc.groupby("size")["bottom_heaviness"].apply(list)
    assert sorted(by_size[5]) == pytest.approx([0.2, 0.8])
    assert by_size[3] == pytest.approx([0.5])
    assert cc["size"].sum() == 30 and (cc["size"] == 1).sum() == 17
    with pytest.raises(ValueError, match="not in jobs"):
        components(jobs, pd.DataFrame({"job": [99], "depOn": [0]}))


def test_observations_table_sits_beside_the_papers_numbers(lake):
    deps = single_hop(lake.prov)
    obs = observations(lake.jobs, deps, lake.prov)
    assert list(obs["observation"].unique()) == [1, 2, 3, 4, 5, 6]
    assert (obs["paper"].dropna() == obs["metric"].map(PAPER).dropna()).all()
    shares = obs[~obs["metric"].str.contains("Spearman")]["ours"].dropna()
    assert shares.between(0, 1).all()
    # the paper's numbers are quoted, not computed: spot-check them against the text
    assert PAPER["recurring job share"] == 0.68 and PAPER["recurring dependency share"] == 0.79
    assert [PAPER[f"load-shiftable by {t} h"] for t in (1, 3, 6, 12)] == [0.31, 0.27, 0.22, 0.14]
    shift = obs[obs["observation"] == 6]["ours"].to_numpy()
    assert (np.diff(shift) <= 0).all()  # a longer shift is possible for fewer jobs
    big = obs.set_index("metric")["ours"]
    assert big["jobs in components of size >= 10"] >= big["jobs in the largest component"]


def test_first_consumption_is_infinite_for_unused_outputs():
    jobs = pd.DataFrame({"job": [0, 1, 2]})
    deps = pd.DataFrame({"job": [1, 2], "depOn": [0, 0], "lag": [50.0, 20.0]})
    gap = first_consumption(jobs, deps)
    assert gap.tolist() == [20.0, np.inf, np.inf]
    with pytest.raises(ValueError, match="lacks column 'lag'"):
        first_consumption(jobs, deps.drop(columns="lag"))


# ---- §3: the predictor -----------------------------------------------------------------------------
def predictor_log():
    """U hourly for three weeks; D reads every other U job (one hour later), E reads every U job (ten minutes later)."""
    rows = [("U", h * HOUR + 1.0, 60.0) for h in range(24 * 21)]
    n = len(rows)
    rows += [("D", (h + 1) * HOUR + 2.0, 60.0) for h in range(0, 24 * 21, 2)]
    rows += [("E", h * HOUR + 600.0 + 1.0, 60.0) for h in range(24 * 21)]
    jobs = log(rows)
    d = jobs[jobs["template"] == "D"]["job"].to_numpy()
    e = jobs[jobs["template"] == "E"]["job"].to_numpy()
    deps = pd.DataFrame({"job": np.concatenate([d, e]), "depOn": np.concatenate([np.arange(0, n, 2), np.arange(n)])})
    return jobs, deps


def test_t1_precision_and_recall_are_exact_on_a_known_log():
    jobs, deps = predictor_log()
    curve = t1_curve(jobs, deps, train_week=0, thresholds=[0, 50, 51, 100]).set_index("tr")
    # test week: 168 U jobs; E reads all 168, D reads 84: 252 true (job, template) pairs
    assert curve["actual"].tolist() == [252] * 4
    # tr <= 50: both predicted for every U job: 336 predictions, 252 right
    assert curve.loc[0, "predicted"] == 336 and curve.loc[0, "precision"] == pytest.approx(252 / 336)
    assert curve.loc[50, "recall"] == 1.0
    # tr > 50: only E (read 100% of the time): all right, two thirds of the truth
    assert curve.loc[51, "precision"] == 1.0 and curve.loc[51, "recall"] == pytest.approx(168 / 252)
    # P x R: 0.75 x 1 at tr <= 50 beats 1 x 2/3 above, so the complete predictor wins here
    assert best_threshold(curve.reset_index()) == 0


def test_t2_forecasts_the_median_time_to_dependency():
    jobs, deps = predictor_log()
    err = t2_errors(jobs, deps, tr=0)
    e = err[err["Jd"] == "E"]
    assert len(e) == 168 and np.allclose(e["forecast"], 600.0) and np.allclose(e["error"], 0.0)
    d = err[err["Jd"] == "D"]
    assert np.allclose(d["actual"], 3601.0) and np.allclose(d["forecast"], 3601.0)
    s = t2_summary(err)
    assert s["RMSE (h)"] == pytest.approx(0.0, abs=1e-9) and s["within +-20%"] == 1.0
    cdf = relative_error_cdf(err)
    assert cdf["cdf"].is_monotonic_increasing and cdf["cdf"].iloc[-1] == 1.0


def test_t2_errors_are_relative_to_the_actual_time():
    jobs, deps = predictor_log()
    # in the test week D comes two hours late: forecast 1 h, actual 3 h: relative error -2/3
    late = jobs.assign(submit=np.where((jobs["template"] == "D") & (jobs["submit"] >= 7 * DAY + HOUR),
                                       jobs["submit"] + 2 * HOUR, jobs["submit"]))
    err = t2_errors(late, deps, tr=0)
    d = err[(err["Jd"] == "D")]
    assert np.allclose(d["relative"], (3601.0 - 10801.0) / 10801.0)
    assert t2_summary(err)["over-estimated by 2x or more"] == 0.0


def test_predictor_on_a_lake(lake):
    deps = single_hop(lake.prov)
    curve = t1_curve(lake.jobs, deps)
    assert curve["recall"].is_monotonic_decreasing and curve["actual"].nunique() == 1
    tr = best_threshold(curve)
    assert tr in set(curve["tr"])
    s = t2_summary(t2_errors(lake.jobs, deps, tr=tr))
    assert s["predictions"] > 0 and s["RMSE (h)"] >= 0


def test_predictor_refuses_bad_input(lake):
    deps = single_hop(lake.prov)
    with pytest.raises(ValueError, match="train_week=1 needs two weeks"):
        t1_curve(lake.jobs, deps, train_week=1)
    with pytest.raises(ValueError, match="train_week=-1"):
        t1_curve(lake.jobs, deps, train_week=-1)
    with pytest.raises(ValueError, match="tr=120"):
        t2_errors(lake.jobs, deps, tr=120)
    with pytest.raises(ValueError, match="thresholds"):
        t1_curve(lake.jobs, deps, thresholds=[-5])
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['submit'\]"):
        t1_curve(lake.jobs.drop(columns="submit"), deps)
    with pytest.raises(ValueError, match="errors is empty"):
        t2_summary(pd.DataFrame({"error": [], "relative": []}))


def test_predict_trains_once_and_equals_the_two_functions(lake):
    from cluster_sim.wing import predict

    deps = single_hop(lake.prov)
    curve, errors = predict(lake.jobs, deps, tr=35.0)
    pd.testing.assert_frame_equal(curve, t1_curve(lake.jobs, deps))
    pd.testing.assert_frame_equal(errors, t2_errors(lake.jobs, deps, tr=35.0))
    with pytest.raises(ValueError, match="tr=True is not allowed"):
        predict(lake.jobs, deps, tr=True)
    with pytest.raises(ValueError, match="thresholds=\\[101\\] is not allowed"):
        predict(lake.jobs, deps, thresholds=[101])
