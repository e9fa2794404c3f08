"""Lab 05's graded "a case where Wing-Agg loses" (issue 30): §1's three jobs, changed by the student.

The check passes a case where Wing-Agg attains less value than PRIO under either reading of "median", saying which
input misled it and whether the readings clash; a case where it does not lose fails with the misconception it shows
(shortest-job-first, the paper's footnote 10; priority read as value; a misprediction whose delay no user sees).
"""

import pytest

from cluster_sim.checking import NOT_IMPLEMENTED, CheckFailed
from cluster_sim.wing.scheduling import inversion_example
from cluster_sim.wing.scheduling.exercise import (LOSS_WHY, case_run, check_agg_loses, predicted_efficiencies,
                                                  section1_case)


def changed(**kw):
    case = section1_case()
    case.update(kw)
    return case


def test_section1_case_is_the_walkthroughs_inversion():
    for policy in ("prio", "wing_agg"):
        mine, walk = case_run(section1_case(), policy), inversion_example(policy)
        assert mine[["start (min)", "finish (min)", "state", "value"]].equals(
            walk[["start (min)", "finish (min)", "state", "value"]]), policy


@pytest.mark.parametrize("case, cause", [
    # the solution's: C does not come this time, B's download is due at 75 min (B would finish at 90 behind A)
    (changed(B_download_at=75, C_comes=False), "its prediction from history misled it"),
    # true predictions, yet the greedy ranking loses: B's 3 downloads are due at 75 min, C brings 2
    (changed(B_downloads=3, B_download_at=75, C_downloads=2, history_A=[(2, 4200)] * 3, history_B=[(3, 7200)] * 3),
     "the greedy ranking itself misled it"),
], ids=["misprediction", "urgency"])
def test_a_case_where_wing_agg_loses_passes_and_names_what_misled_it(case, cause):
    msg = check_agg_loses(case)
    assert msg.startswith("case: Wing-Agg loses") and cause in msg and "clash" not in msg


def test_either_reading_of_the_median_is_accepted_and_the_clash_is_said():
    # A's history: ratios 0, 0.002, 0.00002 (median 0.00002, below B's 1/7,200); medians 2 / 1,000 = 0.002, above
    case = changed(B_download_at=75, C_comes=False, history_A=[(0, 1000), (2, 1000), (2, 100000)])
    eff = {r: predicted_efficiencies(case, r) for r in ("ratio_of_medians", "median_of_ratios")}
    assert eff["ratio_of_medians"]["A"] > eff["ratio_of_medians"]["B"] > eff["median_of_ratios"]["A"]
    msg = check_agg_loses(case)
    assert "only under the ratio of medians reading" in msg and "clash" in msg


@pytest.mark.parametrize("case, cause", [
    (changed(A_minutes=90), "sjf"),
    (changed(B_minutes=20), "sjf"),
    (changed(A_priority=10), "priority"),
    (changed(C_comes=False), "forgiven"),
    (changed(C_downloads=0), "forgiven"),
], ids=["A longer", "B shorter", "priority", "C gone, no urgency", "C worthless, no urgency"])
def test_a_case_where_wing_agg_does_not_lose_names_the_misconception(case, cause):
    with pytest.raises(CheckFailed, match="Wing-Agg does not lose") as err:
        check_agg_loses(case)
    assert LOSS_WHY[cause] in str(err.value)
    if cause == "sjf":
        assert "footnote 10" in str(err.value)


def test_the_unsolved_exercise_is_not_implemented():
    for unsolved in (None, section1_case()):   # the stub's None, or §1's case unchanged
        with pytest.raises(CheckFailed, match=NOT_IMPLEMENTED.split(":")[0]):
            check_agg_loses(unsolved)


@pytest.mark.parametrize("case, match", [
    (changed(A_minutes=0), r"case\['A_minutes'\]=0 is out of range: allowed case\['A_minutes'\] > 0"),
    (changed(B_downloads=1.5), r"case\['B_downloads'\]=1.5 is not allowed: need a whole number >= 0"),
    (changed(C_comes="yes"), r"case\['C_comes'\]='yes' is not allowed: need True or False"),
    (changed(history_A=[(1, 0)]), r"case\['history_A'\]\[0\] compute=0 is out of range"),
    (changed(history_B=[]), r"case\['history_B'\] is empty"),
    ({**section1_case(), "D_minutes": 3}, r"unknown key\(s\) \['D_minutes'\]"),
    ("B_download_at=75", "allowed: a dict like section1_case()"),
])
def test_a_malformed_case_is_refused_naming_the_key(case, match):
    with pytest.raises(ValueError, match=match):
        check_agg_loses(case)
