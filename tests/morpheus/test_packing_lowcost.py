"""LowCost (§6.3) and the reservation plan: Fig. 7, the building blocks, the plan's properties, errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cluster_sim.morpheus.packing import (
    AdHocJob, Allocation, PeriodicJob, ReservationPlan, allocation_key, check_allocation, end_points, gang_pieces,
    greedy_window, lowcost_reference, lowcost_window, place_stage_gangs, stage_interval,
)

FIG7 = dict(demands=(10, 12, 16, 8), gang=(1, 1, 1, 8))


# ---- Fig. 7 -------------------------------------------------------------------------------------------
def test_fig7_stage_3_gets_16_of_38_of_19_steps():
    # stage 3 of the paper is index 2; 19 steps are left before stage 4's allocation (tau_r = 18)
    tau_l, tau_r = stage_interval(FIG7["demands"], 2, tau_r=18)
    assert (tau_l, tau_r) == (11, 18) and tau_r - tau_l + 1 == 8


def test_fig7_wrong_readings_give_other_lengths():
    s, avail = FIG7["demands"], 19
    over_total = round(16 / sum(s) * avail)                # 16/46 of what is left: 7 steps
    over_total_window = round(16 / sum(s) * 20)            # 16/46 of the whole window: 7 steps
    assert over_total == 7 and over_total_window == 7      # both differ from the paper's 8


def test_fig7_whole_job_in_an_empty_plan():
    job = PeriodicJob(period=20, a=0, d=20, **FIG7)
    plan = ReservationPlan(capacity=10, horizon=20)
    alloc = plan.place(job)
    # stage 4 (one gang of 8) takes the last step; stage 3 spreads 2 per step over its 8 steps, ...
    assert alloc.blocks[0].tolist() == [2] * 19 + [8]
    assert [alloc.stage(k)[0] for k in range(4)] == [0, 5, 11, 19]
    assert plan.peak() == 0.8
    check_allocation(alloc, 20)


# ---- building blocks ----------------------------------------------------------------------------------
def test_interval_is_proportional_to_remaining_not_total_demand():
    # the first stage placed (the last one) gets 8/46 of 20 steps: round(3.48) = 3
    assert stage_interval(FIG7["demands"], 3, tau_r=19) == (17, 19)
    # the first stage (k = 0) always gets everything that is left
    assert stage_interval(FIG7["demands"], 0, tau_r=4) == (0, 4)
    # never more than what leaves one step per earlier stage
    assert stage_interval((1, 1, 50), 2, tau_r=3) == (2, 3)


def test_interval_rounds_half_up():
    # 1 / 2 of 3 steps = 1.5 -> 2
    assert stage_interval((1, 1), 1, tau_r=2) == (1, 2)


def test_gang_pieces_keep_the_demand_exact():
    assert gang_pieces(7, 3) == [3, 3, 1]
    assert gang_pieces(6, 3) == [3, 3]
    assert gang_pieces(2, 5) == [2]


def test_first_gang_lands_on_tau_r_and_the_stage_grows_left_without_holes():
    load = np.array([0, 0, 0, 6, 0, 9])
    # step 4 first (forced); step 3 (load 6) is crossed only once step 4's cost reaches 0.7, and
    # then the empty steps behind it fill: the allocation stays one block, step 5 is never used
    assert place_stage_gangs(load, 10, tau_l=0, tau_r=4, demand=5).tolist() == [0, 0, 0, 0, 5, 0]
    assert place_stage_gangs(load, 10, tau_l=0, tau_r=4, demand=10).tolist() == [0, 1, 1, 1, 7, 0]
    assert place_stage_gangs(load, 10, tau_l=0, tau_r=4, demand=12).tolist() == [1, 1, 2, 1, 7, 0]


def test_a_full_step_blocks_the_stage():
    # the step left of tau_r is full, so the stage must stack on tau_r
    x = place_stage_gangs(np.array([0, 10, 0]), 10, tau_l=0, tau_r=2, demand=7)
    assert x.tolist() == [0, 0, 7]
    assert place_stage_gangs(np.array([0, 10, 5]), 10, tau_l=0, tau_r=2, demand=7) is None


def test_ties_go_to_the_later_step():
    x = place_stage_gangs(np.zeros(4), 10, tau_l=0, tau_r=3, demand=5)
    assert x.tolist() == [1, 1, 1, 2]


def test_two_resources_cost_is_the_max_ratio():
    load = np.array([[0, 0, 0], [8, 0, 0]])   # memory, cores: step 0 is core-heavy
    cap = np.array([10, 10])
    x = place_stage_gangs(load, cap, tau_l=0, tau_r=2, demand=3, container=(1, 1))
    assert x.tolist() == [0, 1, 2]


# ---- the reference and the vectorised LowCost agree ---------------------------------------------------
@st.composite
def windows(draw):
    Q = draw(st.integers(1, 3))
    W = draw(st.integers(1, 12))
    L = np.array(draw(st.lists(st.integers(0, 6), min_size=Q * W, max_size=Q * W)), dtype=float).reshape(Q, W)
    C = np.array(draw(st.lists(st.integers(0, 9), min_size=Q * W, max_size=Q * W)), dtype=float).reshape(Q, W)
    C = np.maximum(C, L)
    z = np.array(draw(st.lists(st.integers(0, 2), min_size=Q, max_size=Q)), dtype=float)
    z[draw(st.integers(0, Q - 1))] += 1
    K = draw(st.integers(1, 5))
    d = draw(st.lists(st.integers(0, 7), min_size=K, max_size=K))
    if not any(d):
        d[-1] = 1
    g = draw(st.lists(st.integers(1, 4), min_size=K, max_size=K))
    alignment = draw(st.sampled_from([0.0, 0.3, 2.0]))
    mep = draw(st.sampled_from([None, 2, 5]))
    return L, C, z, d, g, alignment, mep


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(windows())
def test_vectorised_lowcost_makes_the_reference_decisions(w):
    L, C, z, d, g, alignment, mep = w
    a = lowcost_reference(L, C, z, d, g, alignment, max_end_points=mep)
    b = lowcost_window(L, C, z, d, g, alignment, max_end_points=mep)
    assert (a.x is None) == (b.x is None)
    if a.x is None:
        assert (a.reason, a.stage) == (b.reason, b.stage)
    else:
        assert a.x.tolist() == b.x.tolist() and a.spans == b.spans and a.key == b.key
        assert a.key == allocation_key(L, C, z, a.x, alignment)


def test_greedy_is_the_rigid_skyline_at_the_earliest_fit():
    r = greedy_window(np.array([[0, 9, 0, 0, 0, 0]]), 10, 1, (3, 2, 0, 1))
    assert r.x.tolist() == [0, 0, 3, 2, 1, 0] and r.stage_steps() == [(2, 2), (3, 3), (4, 3), (4, 4)]
    assert greedy_window(np.array([[9, 9]]), 10, 1, (3,)).x is None


def test_end_points_counted_back_from_the_deadline():
    assert end_points(2, 5).tolist() == [1, 2, 3, 4]
    assert end_points(1, 100, 10).tolist()[-1] == 99 and len(end_points(1, 100, 10)) == 10
    assert end_points(4, 3).size == 0


# ---- the plan's properties ----------------------------------------------------------------------------
@st.composite
def scenarios(draw):
    H = draw(st.sampled_from([12, 24, 30]))
    R = draw(st.integers(1, 2))
    varying = draw(st.booleans())
    base = np.array(draw(st.lists(st.integers(4, 12), min_size=R, max_size=R)), dtype=float)
    cap = base[:, None] * np.ones(H)
    if varying:
        cap = cap - np.array(draw(st.lists(st.integers(0, 3), min_size=R * H, max_size=R * H))).reshape(R, H)
    jobs = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["periodic", "periodic", "offkilter", "adhoc"]))
        K = draw(st.integers(1, 4))
        demands = draw(st.lists(st.integers(0, 6), min_size=K, max_size=K))
        if not any(demands):
            demands[0] = 2
        kpos = sum(1 for s in demands if s > 0)
        gang = draw(st.lists(st.integers(1, 3), min_size=K, max_size=K))
        container = draw(st.lists(st.integers(1, 2), min_size=R, max_size=R))
        alignment = draw(st.sampled_from([0.0, 1.0]))
        if kind == "adhoc":
            a = draw(st.integers(0, H - 1))
            W = draw(st.integers(kpos, H))
            jobs.append(AdHocJob(a, a + W, demands, gang, container, alignment))
            continue
        if kind == "periodic":
            P = draw(st.sampled_from([p for p in range(kpos, H + 1) if H % p == 0] or [H]))
        else:
            P = draw(st.sampled_from([7, 11, H + 5]))
        P = max(P, kpos)
        a = draw(st.integers(0, P - 1))
        W = draw(st.integers(kpos, min(P, H)))
        jobs.append(PeriodicJob(P, a, a + W, demands, gang, container, alignment))
    return cap, H, jobs


def _state(plan):
    return (plan.load.copy(), plan.adhoc_load.copy(), {k: v.copy() for k, v in plan.allocations.items()},
            {k: v.copy() for k, v in plan.adhoc.items()})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from(["lowcost", "greedy"]))
def test_every_placement_fits_delivers_inside_the_window_and_never_moves_earlier_jobs(sc, method):
    cap, H, jobs = sc
    plan = ReservationPlan(cap, H)
    placed = {}
    for job in jobs:
        before = _state(plan)
        alloc = plan.place(job, method=method)
        if alloc is None:
            # a refused job leaves the plan exactly as it was, and says why
            after = _state(plan)
            assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])
            assert before[2].keys() == after[2].keys() and before[3].keys() == after[3].keys()
            assert plan.last_refusal is not None and plan.last_refusal.job is job and str(plan.last_refusal)
            continue
        assert plan.last_refusal is None
        check_allocation(alloc, H if alloc.periodic else None)
        if isinstance(job, PeriodicJob) and H % job.period == 0:
            # one offset for every instance in the LCM
            assert alloc.periodic and len(alloc.starts) == H // job.period
            assert len({s - i * job.period for i, s in enumerate(alloc.starts)}) == 1
        elif isinstance(job, PeriodicJob):
            # off-kilter or longer than the LCM: one non-periodic reservation per instance
            assert not alloc.periodic and len(alloc.starts) == -(-H // job.period)
        if not isinstance(job, AdHocJob):
            placed[alloc.job_id] = alloc.copy()
        # incremental: production reservations already in the plan never move
        for jid, old in placed.items():
            assert plan.allocations[jid].same_as(old)
        plan.check()


def test_check_allocation_catches_a_hole_a_short_stage_and_a_step_outside_the_window():
    job = PeriodicJob(period=10, a=2, d=8, demands=(2, 2))
    good = Allocation(job, (3,), (np.array([1, 1, 2]),), (np.array([0, 2, 3]),), periodic=True)
    check_allocation(good)
    with pytest.raises(AssertionError, match="hole"):
        check_allocation(Allocation(job, (3,), (np.array([2, 0, 2]),), (np.array([0, 1, 3]),), periodic=True))
    with pytest.raises(AssertionError, match="stage 1: delivers 1"):
        check_allocation(Allocation(job, (3,), (np.array([1, 1, 1]),), (np.array([0, 2, 3]),), periodic=True))
    with pytest.raises(AssertionError, match="leave the window"):
        check_allocation(Allocation(job, (6,), (np.array([1, 1, 2]),), (np.array([0, 2, 3]),), periodic=True))


def test_plan_check_catches_over_capacity():
    plan = ReservationPlan(5, 10)
    plan.place(PeriodicJob(10, 0, 10, (3,)))
    plan.load[0, 0] += 10
    with pytest.raises(AssertionError):
        plan.check()


def test_periodic_cost_is_the_max_over_instances():
    # the second instance of an hourly job (120-step plan) would meet a busy step at 65: offset 5
    # looks free in the first hour, but its cost is the max over both instances
    plan = ReservationPlan(10, 120)
    plan.place(AdHocJob(0, 1, (1,)))  # the ad hoc layer plays no part for production jobs
    plan.place(PeriodicJob(period=120, a=65, d=66, demands=(9,)))
    alloc = plan.place(PeriodicJob(period=60, a=5, d=7, demands=(2,), gang=2))
    assert alloc.starts == (6, 66)
    plan.check()


def test_lowcost_spreads_where_greedy_stacks():
    jobs = [PeriodicJob(60, 0, 30, [4] * 10) for _ in range(3)]
    low, rigid = ReservationPlan(12, 60), ReservationPlan(12, 60)
    for j in jobs:
        low.place(j)
        rigid.place(j, method="greedy")
    assert rigid.peak() == 1.0 and low.peak() <= 0.5


def test_adhoc_jobs_use_the_residual_and_give_way_to_production():
    plan = ReservationPlan(10, 20)
    plan.place(PeriodicJob(20, 0, 10, [6] * 10))
    ad = plan.place(AdHocJob(0, 20, [4] * 4))
    assert plan.cost("adhoc").max() <= 1.0
    # a new production job takes the room the ad hoc job had: the ad hoc job is planned again
    prod = plan.place(PeriodicJob(20, 10, 20, [10] * 10))
    assert prod is not None
    plan.check()
    if ad.job_id in plan.adhoc:
        assert not plan.adhoc[ad.job_id].same_as(ad)
    else:
        assert plan.dropped_adhoc and plan.dropped_adhoc[0][0].job_id == ad.job_id
    # the production job was placed as if the ad hoc layer were empty (strict priority)
    assert prod.blocks[0].tolist() == [10] * 10


def test_adhoc_job_is_dropped_when_no_room_is_left():
    plan = ReservationPlan(10, 10)
    ad = plan.place(AdHocJob(0, 10, [5] * 5))
    plan.place(PeriodicJob(10, 0, 10, [10] * 10))
    assert ad.job_id not in plan.adhoc and plan.dropped_adhoc[-1][0].job_id == ad.job_id
    assert "no end point" in str(plan.dropped_adhoc[-1][1])
    plan.check()


def test_alignment_penalty_pulls_the_allocation_to_the_middle_of_the_window():
    plain = ReservationPlan(20, 60)
    aligned = ReservationPlan(20, 60)
    for plan in (plain, aligned):  # the middle of the window is busy
        plan.place(PeriodicJob(60, 20, 40, [8] * 20), method="greedy")
    a = plain.place(PeriodicJob(60, 0, 60, [6] * 6))
    b = aligned.place(PeriodicJob(60, 0, 60, [6] * 6, alignment=5.0))

    def mid(alloc):
        return alloc.starts[0] + len(alloc.blocks[0]) / 2

    assert abs(mid(b) - 30) < abs(mid(a) - 30)
    assert b.cost > aligned.peak() - 1e-12 or b.cost >= 0


def test_queue_capacity_reads_from_the_allocation():
    plan = ReservationPlan(10, 60)
    alloc = plan.place(PeriodicJob(20, 0, 5, (3, 3)))
    per_step = plan.containers(alloc.job_id)
    assert per_step.shape == (60,) and per_step.sum() == 3 * 6
    assert np.array_equal(per_step[:20], per_step[20:40])


def test_heatmap_and_residual():
    plan = ReservationPlan((100, 50))
    plan.place(PeriodicJob(60, 0, 60, [10] * 60, container=(2, 1)))
    assert plan.heatmap(60).shape == (24, 60)
    assert np.allclose(plan.heatmap(60), 0.2)
    assert plan.residual().shape == (2, 1440) and plan.residual()[0, 0] == 80
    assert plan.resources == ("memory", "cores")


# ---- bad input ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, msg", [
    (dict(period=0, a=0, d=1, demands=(1,)), r"period=0 is out of range"),
    (dict(period=60, a=10, d=5, demands=(1,)), r"a=10 > d=5"),
    (dict(period=60, a=70, d=80, demands=(1,)), r"a=70 is out of range.*0 <= a < period=60"),
    (dict(period=60, a=0, d=61, demands=(1,)), r"longer than period=60"),
    (dict(period=60, a=0, d=10, demands=(1, -2)), r"demands\[1\]=-2 is not allowed"),
    (dict(period=60, a=0, d=10, demands=(1, float("nan"))), r"demands\[1\]=nan is not allowed"),
    (dict(period=60, a=0, d=10, demands=(1.5,)), r"demands\[0\]=1.5.*whole numbers.*np.ceil"),
    (dict(period=60, a=0, d=2, demands=(1, 1, 1)), r"3 stages.*d - a = 2.*longer than the window"),
    (dict(period=60, a=0, d=10, demands=(0, 0)), r"at least one stage with demand > 0"),
    (dict(period=60, a=0, d=10, demands=(1, 1), gang=(1,)), r"gang has 1 entries.*demands has 2"),
    (dict(period=60, a=0, d=10, demands=(1,), gang=0), r"gang=0 is out of range"),
    (dict(period=60, a=0, d=10, demands=(1,), container=(-1, 1)), r"container=.*not allowed"),
    (dict(period=60, a=0, d=10, demands=(1,), alignment=float("inf")), r"alignment=inf is out of range"),
    (dict(period=float("nan"), a=0, d=10, demands=(1,)), r"period=nan is not allowed"),
    (dict(period=True, a=0, d=10, demands=(1,)), r"period=True is not allowed"),
])
def test_periodic_job_errors_name_the_argument(kw, msg):
    with pytest.raises(ValueError, match=msg):
        PeriodicJob(**kw)


def test_plan_and_building_block_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"capacity=.*finite values >= 0"):
        ReservationPlan(float("nan"))
    with pytest.raises(ValueError, match=r"horizon=0 is out of range"):
        ReservationPlan(10, 0)
    with pytest.raises(ValueError, match=r"capacity of shape \(2, 5\)"):
        ReservationPlan(np.ones((2, 5)), 10)
    plan = ReservationPlan((10, 10), 60)
    with pytest.raises(ValueError, match=r"container=\(1.0, 1.0, 1.0\) must give one size per resource"):
        plan.place(PeriodicJob(60, 0, 10, (1,), container=(1, 1, 1)))
    with pytest.raises(ValueError, match=r"d - a = 90 is longer than horizon=60"):
        plan.place(AdHocJob(0, 90, (1,)))
    with pytest.raises(ValueError, match=r"method='best' is not allowed"):
        plan.place(PeriodicJob(60, 0, 10, (1,)), method="best")
    with pytest.raises(ValueError, match=r"tau_l=3, tau_r=2 are out of range"):
        place_stage_gangs(np.zeros(5), 10, tau_l=3, tau_r=2, demand=1)
    with pytest.raises(ValueError, match=r"k=1 is not a stage with demand > 0"):
        stage_interval((3, 0), 1, tau_r=5)
    with pytest.raises(ValueError, match=r"tau_r=1 leaves 2 steps.*need at least 3"):
        stage_interval((1, 1, 1), 2, tau_r=1)
    with pytest.raises(ValueError, match=r"load must hold finite values"):
        lowcost_window(np.array([[np.nan, 0]]), 5, 1, (1,))
    with pytest.raises(ValueError, match=r"AdHocJob|PeriodicJob"):
        plan.place("a job")
