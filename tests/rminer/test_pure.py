"""The pure layer of Resource Miner: theory, shadow measurement, shadow state view, filter,
Algorithm 2's choice and the eviction rules - against the paper's numbers and brute force."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cluster_sim.rminer.eviction import conflict_victims, evict_at_view_update
from cluster_sim.rminer.measure import ShadowMeter
from cluster_sim.rminer.rm_filter import FilterFactors, RMFilter
from cluster_sim.rminer.rm_scheduler import rm_choice, shadow_order
from cluster_sim.rminer.shadow_view import ShadowResourceManager
from cluster_sim.rminer.theory import expected_shadow, expected_survival_time, theory_shadow_ratio


# ---- theory (§2.3) -------------------------------------------------------------------------
def test_paper_range_3_to_12_5_percent():
    # "l as 4s~5s and d_u as 0.3s~1.0s ... shadow resources account for about 3% ~ 12.5%"
    assert theory_shadow_ratio(0.3, 5.0) == pytest.approx(0.03)
    assert theory_shadow_ratio(1.0, 4.0) == pytest.approx(0.125)


def test_equation_5_tends_to_equation_6():
    e6 = expected_shadow(0.5, 1000.0, 5.0)
    assert e6 == pytest.approx(0.5 * 1000 / 10)
    assert expected_shadow(0.5, 1000.0, 5.0, mean_demand=1e-6) == pytest.approx(e6)
    assert expected_shadow(0.5, 1000.0, 5.0, mean_demand=10.0) > e6
    assert expected_survival_time(0.5) == 0.25


@pytest.mark.parametrize("kw, name", [
    ({"update_delay": -1, "mean_task_duration": 5}, "update_delay=-1"),
    ({"update_delay": 0.5, "mean_task_duration": 0}, "mean_task_duration=0"),
    ({"update_delay": math.nan, "mean_task_duration": 5}, "update_delay=nan"),
])
def test_theory_rejects_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        theory_shadow_ratio(**kw)


def test_equation_5_needs_demand_below_allocated():
    with pytest.raises(ValueError, match="mean_demand=5"):
        expected_shadow(0.5, 5.0, 5.0, mean_demand=5.0)


# ---- the shadow measurement ------------------------------------------------------------------
def test_released_slot_invisible_until_refresh():
    # one machine, 4 slots; a task holding 1 slot ends at t=0.2, the views refresh at t=0.5:
    # the slot is shadow for 0.3 s (Fig. 3 of the paper)
    m = ShadowMeter(1, 1, survival_span=0.5)
    m.release(0.2, 0, np.array([1]), free_after=np.array([1]))
    assert m.shadow[0] == 1
    m.sync(0.5)
    assert m.shadow[0] == 0 and m.integral[0] == pytest.approx(0.3)
    assert m.survival_mean() == pytest.approx(0.3)


def test_allocation_eats_shadow_only_beyond_visible_free():
    m = ShadowMeter(1, 1)
    # 2 visible free slots at the sync, then 3 released
    m.release(0.0, 0, np.array([3]), free_after=np.array([5]))
    m.allocate(0.1, 0, free_after=np.array([3]))  # takes the 2 visible slots: shadow still 3
    assert m.shadow[0] == 3
    m.allocate(0.2, 0, free_after=np.array([1]))  # overcommitted views spill into the shadow
    assert m.shadow[0] == 1
    m.sync(0.4)
    assert m.integral[0] == pytest.approx(3 * 0.2 + 1 * 0.2)


def test_meter_rejects_time_going_backwards():
    m = ShadowMeter(1, 1)
    m.sync(1.0)
    with pytest.raises(ValueError, match="t=0.5"):
        m.advance(0.5)


def brute_force_shadow(n, cap, events):
    """Recompute S = sum_m min(R_m, F_m) from scratch after each event and integrate it."""
    free = np.full(n, cap)
    released = np.zeros(n, dtype=int)
    area, last, s = 0.0, 0.0, 0
    for t, kind, mach, amt in events:
        area += s * (t - last)
        last = t
        if kind == "alloc":
            free[mach] -= amt
        elif kind == "release":
            free[mach] += amt
            released[mach] += amt
        else:
            released[:] = 0
        s = int(np.minimum(released, free).sum())
    return area


@st.composite
def traces(draw):
    n = draw(st.integers(1, 4))
    cap = 8
    free = [cap] * n
    t = 0.0
    events = []
    for _ in range(draw(st.integers(1, 40))):
        t += draw(st.sampled_from([0.0, 0.05, 0.1, 0.3]))
        kind = draw(st.sampled_from(["alloc", "release", "sync"]))
        m = draw(st.integers(0, n - 1))
        if kind == "alloc" and free[m] > 0:
            a = draw(st.integers(1, free[m]))
            free[m] -= a
        elif kind == "release" and free[m] < cap:
            a = draw(st.integers(1, cap - free[m]))
            free[m] += a
        else:
            kind, a = "sync", 0
        events.append((t, kind, m, a))
    return n, cap, events


@settings(max_examples=150, deadline=None)
@given(traces())
def test_meter_equals_brute_force(trace):
    n, cap, events = trace
    meter = ShadowMeter(n, 1)
    free = np.full((n, 1), cap)
    for t, kind, mach, amt in events:
        if kind == "alloc":
            free[mach] -= amt
            meter.allocate(t, mach, free[mach])
        elif kind == "release":
            free[mach] += amt
            meter.release(t, mach, np.array([amt]), free[mach])
        else:
            meter.sync(t)
    meter.advance(events[-1][0])
    assert meter.integral[0] == pytest.approx(brute_force_shadow(n, cap, events))


# ---- the shadow state view (Algorithm 1) ---------------------------------------------------------
def test_normal_release_creates_one_merged_index_per_machine():
    srm = ShadowResourceManager(4, 2)
    srm.view_update(0.0, next_update=0.5)
    srm.echo_release(0.1, 2, np.array([1, 1]))
    srm.echo_release(0.2, 2, np.array([2, 0]))
    srm.echo_release(0.3, 0, np.array([1, 0]))
    ix = srm.indexes(0.3)
    assert [i.machine for i in ix] == [0, 2]
    assert ix[1].available.tolist() == [3, 1] and ix[1].occupied.tolist() == [0, 0]
    assert ix[1].allocated_tasks == 0 and ix[0].survival_time == pytest.approx(0.2)
    assert len({i.shadow_id for i in ix}) == 2


def test_view_update_clears_all_but_occupied():
    srm = ShadowResourceManager(3, 1)
    srm.view_update(0.0, 0.5)
    for m in range(3):
        srm.echo_release(0.1, m, np.array([4]))
    srm.allocate_rm(1, np.array([3]))
    srm.view_update(0.5, 1.0)
    ix = srm.indexes(0.5)
    assert [(i.machine, int(i.available[0]), int(i.occupied[0])) for i in ix] == [(1, 0, 3)]
    # the RM task placed before this update ends: its resources were visible, not shadow
    srm.echo_release(0.7, 1, np.array([3]), rm_epoch=0)
    assert srm.indexes(0.7) == []


def test_rm_release_in_same_period_merges_back():
    srm = ShadowResourceManager(1, 1)
    srm.view_update(0.0, 0.5)
    srm.echo_release(0.1, 0, np.array([4]))
    srm.allocate_rm(0, np.array([3]))
    srm.echo_release(0.3, 0, np.array([3]), rm_epoch=srm.epoch)
    assert srm.available[0, 0] == 4 and srm.occupied[0, 0] == 0 and srm.allocated_tasks[0] == 0


def test_csv_allocation_shrinks_shadow_and_reports_overflow():
    srm = ShadowResourceManager(1, 1)
    srm.view_update(0.0, 0.5)
    srm.echo_release(0.1, 0, np.array([4]))
    srm.allocate_rm(0, np.array([2]))
    assert srm.echo_allocate(0, csv_free_after=np.array([3])) is None
    assert srm.available[0, 0] == 1
    assert srm.echo_allocate(0, csv_free_after=np.array([1])).tolist() == [1]
    assert srm.available[0, 0] == 0


def test_rm_allocation_beyond_shadow_is_refused():
    srm = ShadowResourceManager(1, 1)
    with pytest.raises(ValueError, match="does not fit the available shadow"):
        srm.allocate_rm(0, np.array([1]))


# ---- the RM filter (§3.3) ---------------------------------------------------------------------
NOMINAL = FilterFactors(0, 10.0, 100.0, 1.0, 0.5)


def test_filter_threshold_is_update_delay_at_nominal_state():
    assert RMFilter(multiplier=1.0).threshold(NOMINAL, NOMINAL) == 0.5
    assert RMFilter(multiplier=4.0).threshold(NOMINAL, NOMINAL) == 2.0



@pytest.mark.parametrize("name, multiplier, expected", [("SmartRM", 1.0, 0.5), ("SmartRM-C", 2.0, 1.0),
                                                        ("SmartRM-A", 4.0, 2.0)])
def test_smartrm_thresholds_are_the_papers(name, multiplier, expected):
    """§4.7: SmartRM's default threshold is d_u, SmartRM-C 2x, SmartRM-A 4x (issue 13: they were doubled,
    because SmartRM's shadow resource time T_s + W_d was counted again in the threshold)."""
    assert RMFilter(mode="smart", multiplier=multiplier).threshold(NOMINAL, NOMINAL) == expected, name
    assert RMFilter(mode="safe", multiplier=1.0).threshold(NOMINAL, NOMINAL) == 0.5


@settings(max_examples=100, deadline=None)
@given(q=st.floats(0, 1000), s=st.floats(0.1, 30), r=st.floats(1, 300), ok=st.floats(0.05, 1), d=st.floats(0.1, 2),
       which=st.sampled_from(["q", "s", "r", "ok", "d"]))
def test_filter_threshold_follows_the_five_factors(q, s, r, ok, d, which):
    f = RMFilter(lo=1e-9, hi=1e9)
    now = FilterFactors(q, s, r, ok, d)
    bumped = {
        "q": FilterFactors(q * 2 + 1, s, r, ok, d), "s": FilterFactors(q, s * 2, r, ok, d),
        "r": FilterFactors(q, s, r * 2, ok, d), "ok": FilterFactors(q, s, r, min(ok * 2, 1.0), d),
        "d": FilterFactors(q, s, r, ok, d * 2),
    }[which]
    a, b = f.threshold(now, NOMINAL), f.threshold(bumped, NOMINAL)
    assert (b < a) if which == "q" else (b >= a)


def test_filter_eligibility_and_orders():
    f = RMFilter(max_demand=(4, 2), max_priority=1)
    assert f.eligible(0.4, (4, 2), 1, threshold=0.5)
    assert not f.eligible(0.6, (1, 1), 0, threshold=0.5)  # too long
    assert not f.eligible(0.1, (5, 1), 0, threshold=0.5)  # too big
    assert not f.eligible(0.1, (1, 1), 2, threshold=0.5)  # priority too high to preempt
    tasks = [(0.3, (2, 1), 1, 0), (0.1, (1, 1), 1, 1), (0.2, (3, 1), 0, 2), (0.2, (1, 1), 0, 3)]
    safe = sorted(tasks, key=lambda x: RMFilter(mode="safe").queue_key(*x))
    smart = sorted(tasks, key=lambda x: RMFilter(mode="smart").queue_key(*x))
    assert [x[3] for x in safe] == [1, 2, 3, 0]  # shortest job first
    assert [x[3] for x in smart] == [2, 3, 0, 1]  # lowest priority first, hungrier first


@pytest.mark.parametrize("kw, name", [({"mode": "greedy"}, "mode='greedy'"), ({"ratio": 1.5}, "ratio=1.5"),
                                      ({"multiplier": 0}, "multiplier=0")])
def test_filter_rejects_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        RMFilter(**kw)


# ---- Algorithm 2 -------------------------------------------------------------------------------
def brute_choice(shadow, free, demand, mode):
    n = len(shadow)
    cands = [m for m in range(n) if shadow[m][0] > 0]
    if mode == "safe":
        cands.sort(key=lambda m: (-shadow[m][0], m))
    else:
        cands.sort(key=lambda m: (-free[m][0], -shadow[m][0], m))
    for m in cands:
        if all(shadow[m][r] >= demand[r] for r in range(len(demand))):
            return m, "shadow"
    for m in range(n):
        if all(free[m][r] >= demand[r] for r in range(len(demand))):
            return m, "normal"
    return -1, "none"


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 8), mode=st.sampled_from(["safe", "smart"]))
def test_rm_choice_equals_brute_force(data, n, mode):
    shadow = np.array(data.draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), min_size=n, max_size=n)))
    extra = np.array(data.draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), min_size=n, max_size=n)))
    free = shadow + extra  # the shadow is part of the truly free resources
    demand = np.array(data.draw(st.tuples(st.integers(1, 8), st.integers(0, 3))))
    assert rm_choice(shadow, free, demand, mode) == brute_choice(shadow.tolist(), free.tolist(), demand.tolist(), mode)


def test_rm_choice_rejects_bad_input():
    with pytest.raises(ValueError, match="shapes do not match"):
        rm_choice(np.zeros((2, 2)), np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="mode='fast'"):
        shadow_order(np.ones((2, 1)), np.ones((2, 1)), "fast")


# ---- eviction (§3.5) ------------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(data=st.data(), mode=st.sampled_from(["safe", "smart"]))
def test_conflict_victims_cover_the_overflow_and_no_more_than_needed(data, mode):
    k = data.draw(st.integers(1, 6))
    running = [(i, np.array([data.draw(st.integers(1, 5)), 1]), data.draw(st.integers(0, 1))) for i in range(k)]
    total = sum(int(r[1][0]) for r in running)
    over = np.array([data.draw(st.integers(1, total)), 0])
    v = conflict_victims(running, over, mode)
    dem = {r[0]: int(r[1][0]) for r in running}
    assert sum(dem[i] for i in v) >= over[0]
    assert sum(dem[i] for i in v[:-1]) < over[0]  # the last victim was needed
    if mode == "smart":  # lowest priority first
        pri = {r[0]: r[2] for r in running}
        assert [pri[i] for i in v] == sorted(pri[i] for i in v)


def test_eviction_rules_per_mode():
    assert evict_at_view_update("safe") and not evict_at_view_update("smart")
    with pytest.raises(ValueError, match="exceeds"):
        conflict_victims([(1, np.array([1]), 0)], np.array([2]), "safe")
    with pytest.raises(ValueError, match="mode='none'"):
        conflict_victims([], np.array([0]), "none")


# ---- one meaning per name (issue 31, item 6) -------------------------------------------------
def test_the_papers_workload_level_is_not_the_engines_load():
    """``RMinerConfig.load`` was the job arrival rate as a multiple of the paper's 1x while the engine's
    ``ClusterConfig.load`` is the offered CPU load: one name, two meanings. RMiner's is the paper's
    "workload level" now; the old name is refused, saying what it is called now."""
    import dataclasses

    from cluster_sim.engine import ClusterConfig
    from cluster_sim.rminer import RMinerConfig

    names = {f.name for f in dataclasses.fields(RMinerConfig)}
    assert "workload_level" in names and "load" not in names
    base = RMinerConfig.ci()
    assert base.replace(workload_level=2.0).arrival_rate() == 2 * base.arrival_rate()
    for make in (lambda: base.replace(load=2.0), lambda: RMinerConfig(load=2.0),
                 lambda: RMinerConfig.from_preset("ci", load=2.0),
                 lambda: RMinerConfig.from_config(ClusterConfig.ci(), load=2.0)):
        with pytest.raises(ValueError, match=r"RMinerConfig\.load is now workload_level \(job arrival rate as a "
                                             r"multiple of the paper's 1x"):
            make()
    # a field the config never had is refused by the same error, which lists the fields
    with pytest.raises(ValueError, match=r"unknown RMinerConfig field\(s\) \['lod'\]; the fields are: machines"):
        RMinerConfig(lod=2.0)
    # the engine's ClusterConfig keeps its load (offered CPU load); RMiner's offered load is derived
    assert ClusterConfig.ci().replace(load=0.5).load == 0.5
    assert 0.4 < RMinerConfig.paper().offered_cpu_load() < 0.5


@pytest.mark.parametrize("call, msg", [
    (lambda: theory_shadow_ratio(10**400, 5.0), r"update_delay=~1e400 is out of range"),  # was an OverflowError
    (lambda: theory_shadow_ratio("0.5", 5.0), r"update_delay='0.5' is not allowed: need a number"),  # was 0.05
    (lambda: expected_shadow(0.5, True, 5.0), r"allocated=True is not allowed: need a number"),  # was read as 1
    (lambda: theory_shadow_ratio(0.5, 0.0), r"mean_task_duration=0.0 is out of range: allowed mean_task_duration > 0"),
    (lambda: expected_survival_time(float("nan")), r"update_delay=nan"),
])
def test_the_theory_checks_its_arguments_with_the_one_validation_module(call, msg):
    """Issue 31, item 5: the model's own argument check (``theory._check``) let a string or a bool through
    as a number and raised an OverflowError for an int past float range; ``cluster_sim.validate`` refuses each
    with a ValueError naming the argument."""
    with pytest.raises(ValueError, match=msg):
        call()
