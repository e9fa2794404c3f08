"""Issue 30, Lab 03: the exercise on the cost at an offset, the maximum over a job's instances. The reference is
what the plan itself does; each misconception the check teaches against fails with a message naming it."""

from __future__ import annotations

import numpy as np
import pytest

from cluster_sim.checking import NOT_IMPLEMENTED
from cluster_sim.morpheus import PeriodicJob, ReservationPlan
from cluster_sim.morpheus.packing.lowcost_cases import _FOLD_MISTAKES, check_folded_load, folded_cases, folded_load


def test_the_reference_is_what_the_plan_folds():
    # a plan whose load differs across the hour's four 15-minute periods; the greedy placer of a one-step job
    # puts it at the earliest offset where the *maximum* over the instances has room
    plan = ReservationPlan(10, 60)
    plan.place(PeriodicJob(60, 0, 60, [9] * 5), method="greedy")  # steps 0-4 of the hour only: the first period
    folded = folded_load(plan.load[0], 15, 0, 15)
    assert folded[:5].tolist() == [9.0] * 5 and folded[5:].tolist() == [0.0] * 10
    alloc = plan.place(PeriodicJob(15, 0, 15, [2]), method="greedy")
    assert alloc.starts[0] == 5  # steps 0-4 are full in the first instance, so every instance starts at 5


def test_the_answer_passes(reference_as_student):
    assert "agrees on all 12 cases" in check_folded_load(folded_load, seeds=(0, 1))


@pytest.mark.parametrize("name", list(_FOLD_MISTAKES))
def test_each_misconception_fails_naming_it(name):
    wrong, _ = _FOLD_MISTAKES[name]
    with pytest.raises(AssertionError, match=f"\\({name}\\)"):
        check_folded_load(lambda load, P, a, W: wrong(np.asarray(load, float), P, a, W), seeds=(0, 1))


def test_the_cases_separate_every_misconception():
    for name, (wrong, _) in _FOLD_MISTAKES.items():
        assert any(not np.allclose(wrong(L, P, a, W), folded_load(L, P, a, W)) for L, P, a, W in folded_cases(0)), name


def test_the_stub_says_not_implemented():
    def stub(load, period, a, window):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match=NOT_IMPLEMENTED[:30]):
        check_folded_load(stub)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="period=7 is not allowed"):
        folded_load(np.zeros(60), 7, 0, 3)
    with pytest.raises(ValueError, match="window=0 is out of range"):
        folded_load(np.zeros(60), 10, 0, 0)
