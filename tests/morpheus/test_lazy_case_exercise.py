"""Lab 02's graded "construct a lazy case" (issue 30): the LP charges the debt only at the last step, so a lazy
allocation can be strictly cheaper than one covering every step; the check names the misconception of a case that
is not one."""

import pytest

from cluster_sim.checking import NOT_IMPLEMENTED, CheckFailed
from cluster_sim.morpheus.slo.lazy_case import WHY, check_lazy_case

SOLUTION = {"runs": [[2, 0], [0, 2]], "alpha": 0.5, "lazy": [0, 2], "covering": [2, 2]}


def case(**kw):
    return {**SOLUTION, **kw}


@pytest.mark.parametrize("c", [SOLUTION, case(lazy=[0, 1]), case(alpha=0.3)],
                         ids=["the model answer", "half repaid", "lower alpha"])
def test_a_lazy_case_passes_and_says_why(c):
    msg = check_lazy_case(c)
    assert "the LP charges only what is left at the last step" in msg and "fit_skyline" in msg


@pytest.mark.parametrize("c, cause", [
    (case(runs=[[2, 0]], covering=[2, 0]), "repaid_by_waste"),                            # one run
    (case(runs=[[2, 1], [2, 1]], lazy=[1, 2], covering=[2, 1]), "repaid_by_waste"),       # the same peak
    (case(runs=[[0, 2], [0, 2]], lazy=[2, 0], covering=[0, 2]), "repaid_by_waste"),
    (case(lazy=[2, 0]), "credit"),                                                      # surplus before the deficit
    (case(lazy=[0, 0], alpha=0.9), "alpha"),                                            # cheaper at every step too
    (case(runs=[[3, 0], [0, 2], [1, 1]], lazy=[1, 2], covering=[3, 2]), "alpha"),
], ids=["one run", "same peak", "same peak, surplus first", "credit", "alpha 0.9", "saves more than any debt"])
def test_a_case_that_is_not_lazy_names_the_misconception(c, cause):
    with pytest.raises(CheckFailed) as err:
        check_lazy_case(c)
    assert WHY[cause] in str(err.value)


def test_covering_and_lazy_mean_what_they_say():
    with pytest.raises(CheckFailed, match="covering means every step gets at least every run's use"):
        check_lazy_case(case(covering=[1, 2]))
    with pytest.raises(CheckFailed, match="covers every run at every step"):
        check_lazy_case(case(lazy=[2, 2]))


def test_the_unsolved_exercise_is_not_implemented():
    with pytest.raises(CheckFailed, match=NOT_IMPLEMENTED.split(":")[0]):
        check_lazy_case(None)


@pytest.mark.parametrize("c, match", [
    (case(alpha=1.0), r"lazy_case\['alpha'\]=1 is not allowed: need 0 < alpha < 1"),
    (case(alpha=float("nan")), r"lazy_case\['alpha'\]"),
    (case(runs=[[2, 0, 1], [0, 2, 1]]), r"lazy_case\['runs'\] has 3 steps; allowed: 2"),
    (case(lazy=[0, -1]), r"lazy_case\['lazy'\]"),
    (case(covering=[2]), r"lazy_case\['covering'\] has shape \(1,\)"),
    ({"runs": [[2, 0]], "alpha": 0.5}, "allowed: a dict with exactly the keys runs, alpha, lazy, covering"),
])
def test_a_malformed_case_is_refused_naming_the_field(c, match):
    with pytest.raises(ValueError, match=match):
        check_lazy_case(c)
