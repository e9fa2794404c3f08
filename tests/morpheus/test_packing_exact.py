"""LowCost against the offline optimum (an exact MILP) on tiny instances, and Theorem 6.1's bound."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cluster_sim.morpheus.packing import (
    PeriodicJob, ReservationPlan, check_allocation, exact_min_peak, theorem_6_1_bound,
)


@st.composite
def tiny(draw):
    H = draw(st.sampled_from([6, 8, 12]))
    periods = [p for p in range(2, H + 1) if H % p == 0]
    jobs = []
    for _ in range(draw(st.integers(1, 4))):
        P = draw(st.sampled_from(periods))
        W = draw(st.integers(1, P))
        a = draw(st.integers(0, P - 1))
        K = draw(st.integers(1, min(W, 3)))
        demands = draw(st.lists(st.integers(1, 4), min_size=K, max_size=K))
        gang = draw(st.lists(st.integers(1, 3), min_size=K, max_size=K))
        jobs.append(PeriodicJob(P, a, a + W, demands, gang=gang))
    cap = draw(st.integers(3, 8))
    return jobs, cap, H


def _lowcost(jobs, cap, H, method="lowcost"):
    plan = ReservationPlan(cap, H)
    for j in jobs:
        if plan.place(j, method=method) is None:
            return None
    return plan


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny())
def test_lowcost_height_is_never_below_the_optimum(inst):
    jobs, cap, H = inst
    plan = _lowcost(jobs, cap, H)
    if plan is None:
        return  # LowCost refused a job: the comparison is about jobs it placed
    opt = exact_min_peak(jobs, cap, H)
    # the optimum is a plan LowCost could have produced: same constraints
    for alloc in opt.allocations:
        check_allocation(alloc, H)
    assert opt.height <= plan.peak() + 1e-9
    greedy = _lowcost(jobs, cap, H, "greedy")
    if greedy is not None:
        assert opt.height <= greedy.peak() + 1e-9


def test_optimum_beats_online_lowcost_on_a_constructed_case():
    # online, the first job spreads over its whole window [0, 3); the second, arriving later with
    # window [2, 4), has to stack on step 2. Offline, the first job would have kept to steps 0-1.
    jobs = [PeriodicJob(4, 0, 3, (4,)), PeriodicJob(4, 2, 4, (4,))]
    plan = _lowcost(jobs, 4, 8)
    opt = exact_min_peak(jobs, 4, 8)
    assert [a.blocks[0].tolist() for a in plan.allocations.values()] == [[1, 1, 2], [1, 3]]
    assert plan.peak() == 0.75 and opt.height == 0.5
    assert [(a.starts, a.blocks[0].tolist()) for a in opt.allocations] == [((0, 4), [2, 2]), ((2, 6), [2, 2])]


def test_exact_respects_gangs_and_contiguity():
    # one gang of 3 must sit on a single step: height 3/4, though 3 containers spread would give 1/4
    res = exact_min_peak([PeriodicJob(4, 0, 4, (3,), gang=3)], 4, 4)
    assert res.height == 0.75
    check_allocation(res.allocations[0], 4)


def test_theorem_6_1_bound():
    assert theorem_6_1_bound([60, 60]) == 0.0
    assert theorem_6_1_bound([15, 60, 1440]) == pytest.approx(math.log(96))
    with pytest.raises(ValueError, match="periods"):
        theorem_6_1_bound([0, 5])


def test_exact_refuses_what_it_does_not_cover():
    with pytest.raises(ValueError, match="period divides horizon=10"):
        exact_min_peak([PeriodicJob(7, 0, 3, (1,))], 4, 10)
    with pytest.raises(ValueError, match="MAX_EXACT_VARIABLES"):
        exact_min_peak([PeriodicJob(200, 0, 200, [1] * 40)], 4, 200)
    with pytest.raises(RuntimeError, match="no optimal plan"):
        exact_min_peak([PeriodicJob(4, 0, 1, (9,))], 4, 4)


def test_compare_with_optimum_on_seeded_instances():
    from cluster_sim.morpheus.packing.exact import compare_with_optimum, tiny_instance

    seen = 0
    for seed in range(8):
        c = compare_with_optimum(*tiny_instance(seed))
        if c is None:
            continue
        seen += 1
        assert c.ratio >= 1.0 - 1e-9 and c.greedy_ratio >= 1.0 - 1e-9
        assert c.log_period_ratio >= 0
    assert seen >= 4
