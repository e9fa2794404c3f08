"""LowCost's one-sort-per-stage search (lowcost_scan) makes exactly the gang-by-gang search's decisions.

The gang-by-gang search is ``_scan_reference`` (what ``lowcost_window`` ran until now). The windows are
small integers, so equal costs - the tie-breaks - are everywhere.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cluster_sim.morpheus.packing import lowcost, lowcost_scan
from cluster_sim.morpheus.packing.lowcost import (
    _as_lines,
    _check_stages,
    _max_fit,
    end_points,
    lowcost_reference,
    lowcost_window,
)
from cluster_sim.morpheus.packing.plan import ReservationPlan

STAGE_FIELDS = ("stage_ids", "stage_lo", "stage_hi", "stage_x", "stage_peak", "stage_area")


def random_window(rng: np.random.Generator):
    """A window of small whole loads and capacities (ties everywhere), some lines empty or full."""
    Q = int(rng.integers(1, 3))
    W = int(rng.integers(1, 41))
    L = rng.integers(0, 7, size=(Q, W)).astype(float)
    C = L + rng.integers(0, 16, size=(Q, W))
    if rng.random() < 0.3:  # a stretch of the window already full
        a = int(rng.integers(0, W))
        b = a + int(rng.integers(1, 5))
        C[:, a:b] = L[:, a:b]
    z = rng.integers(0, 2, size=Q).astype(float)
    z[int(rng.integers(0, Q))] += 1
    K = int(rng.integers(1, 7))
    demands = rng.integers(0, 11, size=K)
    if not demands.any():
        demands[-1] = 1
    gangs = rng.integers(1, 5, size=K)
    mep = [None, 3, 64][int(rng.integers(0, 3))]
    alignment = [0.0, 0.3][int(rng.integers(0, 2))]
    return L, C, z, demands.tolist(), gangs.tolist(), mep, alignment


def scan_args(L, C, z, demands, gangs, mep):
    L, C, z = _as_lines(L, C, z)
    demands, gangs = _check_stages(demands, gangs)
    pos = [k for k in range(len(demands)) if demands[k] > 0]
    ends = end_points(len(pos), L.shape[1], mep)
    return L, C, z, _max_fit(L, C, z), demands, gangs, pos, ends


def assert_same_scan(new, ref):
    assert (new.ids is None) == (ref.ids is None)
    if ref.ids is None:
        assert new.refused == ref.refused
        return
    assert np.array_equal(new.ids, ref.ids)
    for name in STAGE_FIELDS:
        a, b = getattr(new, name), getattr(ref, name)
        assert a.keys() == b.keys(), name
        for k in b:
            assert a[k].dtype.kind == b[k].dtype.kind and np.array_equal(a[k], b[k]), (name, k)


# every way the scan can place a stage: the sort or gang by gang, costs from the table or computed
MODES = {
    "as shipped": {},
    "sort only": {"SORT_LIMIT": 10**9},
    "gang by gang only": {"SORT_LIMIT": 0},
    "no cost table": {"TABLE_LIMIT": 0},
}


@pytest.mark.parametrize("mode", MODES)
def test_scan_makes_the_gang_by_gang_decisions_at_every_end_point(mode, monkeypatch):
    for name, value in MODES[mode].items():
        monkeypatch.setattr(lowcost_scan, name, value)
    rng = np.random.default_rng(33)
    n = 800 if mode == "as shipped" else 250
    refused = 0
    for i in range(n):
        L, C, z, d, g, mep, _ = random_window(rng)
        args = scan_args(L, C, z, d, g, mep)
        if args[-1].size == 0:
            continue
        ref = lowcost_scan._scan_reference(*args)
        refused += ref.ids is None
        try:
            assert_same_scan(lowcost_scan.scan_end_points(*args), ref)
        except AssertionError as e:
            raise AssertionError(f"window {i}: {e}\nL={L.tolist()}\nC={C.tolist()}\nz={z.tolist()} "
                                 f"demands={d} gangs={g} max_end_points={mep}") from None
    assert 0 < refused < n / 2  # both outcomes were exercised


def test_lowcost_window_keeps_the_plain_references_answers():
    rng = np.random.default_rng(330)
    for _ in range(200):
        L, C, z, d, g, mep, alignment = random_window(rng)
        a = lowcost_reference(L, C, z, d, g, alignment, max_end_points=mep)
        b = lowcost_window(L, C, z, d, g, alignment, max_end_points=mep)
        assert (a.x is None) == (b.x is None)
        if a.x is None:
            assert (a.reason, a.stage) == (b.reason, b.stage)
        else:
            assert a.x.tolist() == b.x.tolist() and a.spans == b.spans and a.key == b.key


def test_a_stage_of_many_gangs_and_a_tie_at_the_frontier():
    # an empty plan: every step costs the same, so each gang ties with the frontier and the stage
    # spreads one gang per step before stacking; and a dearer step in the middle of the interval
    L = np.array([[0, 0, 0, 0, 5, 0, 0, 0, 0, 0]], dtype=float)
    for demands, gangs in (([10, 30], [1, 2]), ([7, 23], [3, 1]), ([40], [1])):
        args = scan_args(L, np.full_like(L, 20.0), np.ones(1), demands, gangs, None)
        assert_same_scan(lowcost_scan.scan_end_points(*args), lowcost_scan._scan_reference(*args))


def test_the_benchmarks_jobs_get_the_allocations_the_gang_by_gang_search_gave(monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from morpheus_packing import workload
    finally:
        sys.path.pop(0)
    jobs = workload(np.random.default_rng(0), 1000)[:60]
    H = 1440
    mean = sum(np.asarray(j.container) * j.total_demand * (H // j.period) / H for j in jobs)
    capacity = np.ceil(1.2 * mean)  # tighter than the benchmark's: some jobs are refused
    plans = {}
    for name, scan in (("new", lowcost_scan.scan_end_points), ("old", lowcost_scan._scan_reference)):
        monkeypatch.setattr(lowcost, "scan_end_points", scan)
        plan = ReservationPlan(capacity, H)
        plans[name] = [plan.place(j) for j in jobs]
    refused = 0
    for a, b in zip(plans["new"], plans["old"]):
        assert (a is None) == (b is None)
        refused += a is None
        assert a is None or (a.same_as(b) and a.cost == b.cost)
    assert refused < len(jobs)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e6), st.floats(0, 1e6), st.sampled_from([0.0, 1e-300, 0.1, 0.3, 1.0, 2.5, 7.0])),
                min_size=1, max_size=3),
       st.integers(1, 4))
def test_max_fit_at_one_step_in_python_floats_is_max_fit(lines, steps):
    """DRA's room over a grant's step or two is read one step at a time in Python floats (issue 33): the same
    answer as the numpy _max_fit on every line, even where the float estimate is one off."""
    from cluster_sim.morpheus.packing.lowcost import _max_fit_step

    L = np.array([[l + 0.1 * k for k in range(steps)] for l, _, _ in lines])
    C = np.array([[c] * steps for _, c, _ in lines])
    z = np.array([q for _, _, q in lines])
    if not (z > 0).any():
        z[0] = 1.0
    want = _max_fit(L, C, z)
    got = [_max_fit_step(L[:, j].tolist(), C[:, j].tolist(), z.tolist()) for j in range(steps)]
    assert got == want.tolist()


def test_room_over_a_grants_steps_is_the_numpy_answer():
    from cluster_sim.morpheus.packing.plan import ReservationPlan
    from cluster_sim.morpheus.packing.jobs import PeriodicJob

    plan = ReservationPlan(capacity=(7.3, 11.0), horizon=60)
    plan.place(PeriodicJob(60, 0, 30, [2] * 10, container=(0.7, 1.1)))
    for steps in ([0], [3, 4], [10, 11, 12, 13], list(range(60))):
        z = plan._container((0.3, 0.9))
        numpy = int(max(_max_fit(plan.load[:, steps], plan.capacity[:, steps], z).min(), 0))
        assert plan.room(steps, (0.3, 0.9)) == numpy, steps


@pytest.mark.parametrize("load, capacity, z", [(20.5, 20.5, 1e-300), (1.0, 1.0 + 2 ** -52, 2 ** -60),
                                               (3.0, 3.0 + 2 ** -51, 2 ** -58), (0.7, 0.7, 1e-17)])
def test_max_fit_with_a_size_below_the_loads_last_digit_is_the_largest_fit_found_without_a_walk(load, capacity, z):
    """A z below L's last digit leaves L + X*z == L for many X: the fit was settled one X at a time, up to 2**40
    rounds (a hypothesis example hung the suite). Both versions give the largest X that fits, the clip included."""
    from cluster_sim.morpheus.packing.lowcost import _max_fit_step

    big = 1 << 40

    def fits(x):
        return load + x * z <= capacity

    lo, hi = 0, big  # the largest X <= big that fits, by bisection on the same float test (monotone in X)
    if fits(big):
        want = big
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        want = lo
    assert _max_fit(np.array([[load]]), np.array([[capacity]]), np.array([z])).tolist() == [want]
    assert _max_fit_step([load], [capacity], [z]) == want


def test_the_sort_places_each_stage_as_the_gang_by_gang_loop_does_from_any_start():
    """The sort reads a stage's phases off distances computed once per window (issue 33's fast path). On random
    windows with ties and full steps, and rows starting anywhere in the window with any interval length, it
    makes the gang-by-gang loop's decisions for every stage shape, and the distances are what they say."""
    rng = np.random.default_rng(3333)
    checked = 0
    for _ in range(300):
        L, C, z, _, _, _, _ = random_window(rng)
        L, C, z = _as_lines(L, C, z)
        W = L.shape[1]
        xmax_w = _max_fit(L, C, z)
        most = int(rng.integers(1, 13))
        cost = lowcost_scan._cost_function(L, C, z, most)
        g = int(rng.integers(1, 4))
        s = int(rng.integers(1, most + 1))
        g = min(g, s)
        nfull, remainder = s // g, s % g
        grid = lowcost_scan._gang_grid(cost.table, xmax_w, g)
        # the distances back to a dearer head, by their definition
        h = grid.rank.reshape(W + 1, grid.J)[:W, 0]
        for t in range(W):
            for j in range(1, grid.J):
                want = next((d for d in range(1, min(W, grid.J + 1)) if t - d < 0 or h[t - d] >= grid.rank[t * grid.J + j]),
                            min(W, grid.J + 1))
                assert grid.dist[t * grid.J + j] == want, (t, j)
        E = int(rng.integers(1, 9))
        tau_r = rng.integers(0, W, size=E)
        length = np.minimum(rng.integers(1, 8, size=E), tau_r + 1)
        U = min(int(length.max()), nfull + (remainder > 0) + 1)
        if U < 2:
            continue
        uu = np.arange(U)
        tq = np.where(uu < length[:, None], tau_r[:, None] - uu, W)
        xm = np.append(xmax_w, -1)[tq]
        # the sort sees the steps up to its reach (the interval cut after the first head that does not fit), the loop
        # the whole interval
        reach = lowcost_scan._reach(grid, tau_r, length)
        tq_reach = np.where(uu < reach[:, None], tau_r[:, None] - uu, W)
        fast = lowcost_scan._place_stage(cost, grid, tq_reach, np.append(xmax_w, -1)[tq_reach], reach, g, nfull,
                                         remainder)
        loop = lowcost_scan._place_stage_gang_by_gang(cost, np.minimum(tq, W - 1), xm, g, nfull, remainder)
        assert np.array_equal(fast[2], loop[2])
        ok = loop[2]
        assert np.array_equal(fast[0][ok], loop[0][ok]) and np.array_equal(fast[1][ok], loop[1][ok])
        checked += int(ok.sum())
    assert checked > 300
