"""The claims layer: synthetic metrics with known answers get the verdict the rule gives."""

import math

import numpy as np
import pandas as pd
import pytest

from cluster_sim.claims import MIME, Claim, ClaimFailed, check, measure, pool, records, show, summary


def arms(effect: float, noise: float = 0.01, seeds: int = 8, capacities=(0.2,)) -> pd.DataFrame:
    """Two policies on the same seeds: the seed's workload shifts both (what pairing removes)."""
    rng = np.random.default_rng(7)
    rows = []
    for seed in range(seeds):
        workload = rng.normal(0, 0.2)  # large, shared by both arms of the seed
        for cap in capacities:
            rows.append({"policy": "old", "capacity": cap, "seed": seed, "value": 0.5 + workload + rng.normal(0, noise)})
            rows.append({"policy": "new", "capacity": cap, "seed": seed,
                         "value": 0.5 + workload + effect + rng.normal(0, noise)})
    return pd.DataFrame(rows)


def claim(**kw) -> Claim:
    base = dict(key="new_beats_old", statement="new attains more value than old", source="Fig. 1", metric="value",
                treatment={"policy": "new"}, baseline={"policy": "old"}, direction="higher", must=True,
                why="the central effect", hint="more seeds")
    base.update(kw)
    return Claim(**base)


@pytest.mark.parametrize("effect, expected", [(0.05, "reproduced"), (0.0, "within noise"), (-0.05, "reversed")])
def test_a_real_effect_no_effect_and_a_reversed_one_get_their_verdicts(effect, expected):
    row = measure([claim()], arms(effect)).iloc[0]
    assert row["verdict"] == expected
    assert row["n"] == 8
    assert row["low"] <= effect <= row["high"]


def test_pairing_removes_the_workload_shared_by_both_arms():
    """Unpaired, a seed's workload (sd 0.2) would swamp an effect of 0.05; paired it does not."""
    frame = arms(0.05)
    row = measure([claim()], frame).iloc[0]
    assert row["high"] - row["low"] < 0.05
    assert row["verdict"] == "reproduced"


def test_a_lower_is_better_claim_is_read_in_the_papers_direction():
    frame = arms(-0.05)
    row = measure([claim(direction="lower")], frame).iloc[0]
    assert row["verdict"] == "reproduced" and row["ours"] < 0 and row["high"] < 0
    assert measure([claim(direction="lower")], arms(0.05)).iloc[0]["verdict"] == "reversed"


def test_the_ratio_to_the_paper_and_the_interval_match_a_t_interval_computed_by_hand():
    from scipy import stats

    frame = arms(0.05, capacities=(0.2, 0.3))
    row = measure([claim(paper=0.1, pair_on=("capacity",))], frame).iloc[0]
    wide = frame.pivot_table(index=["seed", "capacity"], columns="policy", values="value")
    per_seed = (wide["new"] - wide["old"]).groupby(level="seed").mean()
    half = stats.t.ppf(0.975, 7) * per_seed.std(ddof=1) / math.sqrt(8)
    assert row["ours"] == pytest.approx(per_seed.mean())
    assert row["low"] == pytest.approx(per_seed.mean() - half) and row["high"] == pytest.approx(per_seed.mean() + half)
    assert row["ratio"] == pytest.approx(per_seed.mean() / 0.1)
    assert row["n"] == 8  # capacities are averaged within a seed: the seeds are the independent units


def test_one_seed_is_an_example_not_a_measurement():
    row = measure([claim()], arms(0.5, seeds=1)).iloc[0]
    assert row["verdict"] == "within noise" and row["low"] == -math.inf


def test_equality_claims_against_another_metric_of_the_same_runs():
    rng = np.random.default_rng(0)
    l = rng.uniform(5, 10, 6)
    frame = pd.DataFrame({"seed": range(6), "l": l, "lambda_w": l + rng.normal(0, 1e-3, 6), "off": l + 1})
    agree = Claim("little", "L = λW", "Little's law", "l", baseline="lambda_w", direction="equal", tolerance=0.01,
                  must=True, why="exact accounting")
    far = Claim("little_off", "L = λW", "Little's law", "off", baseline="lambda_w", direction="equal",
                tolerance=0.01)
    table = measure([agree, far], frame)
    assert table["verdict"].tolist() == ["reproduced", "differs"]


def test_a_fixed_reference_value_and_a_reported_claim():
    frame = arms(0.05)
    table = measure([
        claim(key="above_half", treatment={"policy": "new"}, baseline=0.3),
        Claim("size", "new's value", "Fig. 1", "value", treatment={"policy": "new"}, paper=0.55,
              paper_text="55 %", why="depends on the paper's trace"),
    ], frame)
    assert table["verdict"].tolist() == ["reproduced", "reported"]
    assert math.isnan(table.loc[1, "low"]) and table.loc[1, "role"] == "reported"
    assert summary(table) == {"reproduced": 1, "within noise": 0, "reversed": 0, "differs": 0, "reported": 1}


def test_check_fails_naming_the_claim_its_interval_and_what_to_try():
    table = measure([claim(), claim(key="also", must=False)], arms(0.0))
    with pytest.raises(ClaimFailed) as err:
        check(table)
    message = str(err.value)
    assert "'new_beats_old'" in message and "within noise" in message and "interval [" in message
    assert "Try: more seeds" in message and "'also'" not in message  # a reported claim never fails the check
    check(measure([claim()], arms(0.05)))  # a reproduced claim passes


def test_a_must_claim_made_false_fails_the_check():
    frame = arms(0.05)
    check(measure([claim()], frame))
    swapped = frame.assign(policy=frame["policy"].map({"new": "old", "old": "new"}))
    with pytest.raises(ClaimFailed, match="reversed"):
        check(measure([claim()], swapped))


@pytest.mark.parametrize("kwargs, message", [
    (dict(direction="up"), "direction='up' is not allowed"),
    (dict(baseline=None), "direction='higher' needs a baseline"),
    (dict(direction="equal"), "tolerance=None must be a number > 0"),
    (dict(tolerance=0.1), "tolerance=0.1 is only for direction='equal'"),
    (dict(paper=float("nan")), "paper=nan must be a finite number"),
    (dict(metric=""), "Claim.metric='' must be a non-empty string"),
    (dict(pair_on="capacity"), "pair_on='capacity' must be a tuple"),
])
def test_a_malformed_claim_is_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        claim(**kwargs)


def test_frames_that_cannot_carry_the_claim_are_refused_by_name():
    frame = arms(0.05, capacities=(0.2, 0.3))
    with pytest.raises(ValueError, match="several rows per"):
        measure([claim()], frame)  # capacities neither restricted nor paired
    with pytest.raises(ValueError, match="metric 'valu' is not a column"):
        measure([claim(metric="valu")], frame)
    with pytest.raises(ValueError, match="no row of the frame matches its baseline"):
        measure([claim(baseline={"policy": "older"}, where={"capacity": 0.2})], frame)
    with pytest.raises(ValueError, match="claim keys repeat"):
        measure([claim(where={"capacity": 0.2}), claim(where={"capacity": 0.3})], frame)
    broken = frame.astype({"value": object})
    broken.loc[0, "value"] = None
    with pytest.raises(ValueError, match="missing or not a number"):
        measure([claim(where={"capacity": 0.2})], broken)


def test_the_pool_shifts_with_a_seed_override_and_never_shrinks():
    assert pool(0, 5) == [0, 1, 2, 3, 4] and pool(3, 5) == [3, 4, 5, 6, 7]
    with pytest.raises(ValueError, match="size=1 must be an integer >= 2"):
        pool(0, 1)


def test_records_are_plain_json_and_show_keeps_the_papers_text_whole():
    import json

    long_text = "Wing-Agg 93 %, Wing-Direct 84 %, PRIO 47 % of the value at 20 % capacity (one cluster-wide queue)"
    table = measure([claim(paper_text=long_text, paper=0.1)], arms(0.05))
    rows = records(table)
    json.dumps(rows)  # no numpy scalars, no inf
    assert rows[0]["verdict"] == "reproduced" and rows[0]["lab"] == ""
    assert show(table)["paper"].iloc[0] == long_text
    assert MIME.startswith("application/")


def test_a_zero_difference_prints_as_plus_zero_not_minus_zero():
    """Lab 10's claim message printed "-0, 95% interval [-0, -0]" for runs that did not differ."""
    from cluster_sim.claims import _interval_text

    row = {"verdict": "not reproduced", "ours": -0.0, "low": -0.0, "high": -0.0, "n": 3}
    assert _interval_text(row) == "+0, 95% interval [+0, +0] over 3 seed(s)"
