"""LowCost's compiled search (lowcost_greedy) makes exactly the numpy gang-by-gang search's decisions.

The numpy search is ``lowcost_scan._scan_reference``; both answer with a ``Scan``, compared field by field to the
last bit (the costs, peaks and areas included). The windows are small integers, so equal costs - the
tie-breaks - are everywhere.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cluster_sim.morpheus.packing import lowcost, lowcost_greedy, lowcost_scan
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


def test_the_compiled_search_makes_the_numpy_searchs_decisions_at_every_end_point():
    rng = np.random.default_rng(33)
    n, refused = 800, 0
    for i in range(n):
        L, C, z, d, g, mep, _ = random_window(rng)
        args = scan_args(L, C, z, d, g, mep)
        if args[-1].size == 0:
            continue
        ref = lowcost_scan._scan_reference(*args)
        refused += ref.ids is None
        try:
            assert_same_scan(lowcost_greedy.greedy_scan(*args), ref)
        except AssertionError as e:
            raise AssertionError(f"window {i}: {e}\nL={L.tolist()}\nC={C.tolist()}\nz={z.tolist()} "
                                 f"demands={d} gangs={g} max_end_points={mep}") from None
    assert 0 < refused < n / 2  # both outcomes were exercised


def test_the_compiled_search_gives_the_numpy_searchs_floats_on_wide_windows_of_fractional_loads():
    """Fractional loads, capacities and container sizes over up to four lines (a size of 0 on one; capacities of 0 at
    some steps, where 0 / 0 counts 0; a full stretch), windows up to 400 steps and jobs of up to 20 stages: every
    field to the last bit, so the costs, peaks and areas are computed as the numpy search computes them."""
    rng = np.random.default_rng(18)
    placed = 0
    for i in range(300):
        Q, W = int(rng.integers(1, 5)), int(rng.integers(1, 400))
        L = rng.random((Q, W)) * rng.choice([1, 10, 100])
        if rng.random() < 0.5:
            L = np.round(L, 1)
        C = L + rng.random((Q, W)) * rng.choice([50, 500, 5000])
        if rng.random() < 0.1:
            C[:, rng.integers(0, W, size=3)] = 0.0
            L[C == 0] = 0.0
        if rng.random() < 0.2:
            C[:, : W // 3] = L[:, : W // 3]
        z = rng.random(Q) * 3
        z[int(rng.integers(0, Q))] += 0.5
        if Q > 1 and rng.random() < 0.3:
            z[0] = 0.0
        K = int(rng.integers(1, 21))
        d = rng.integers(0, 51, size=K)
        d[-1] = max(d[-1], 1)
        args = scan_args(L, C, z, d.tolist(), rng.integers(1, 7, size=K).tolist(), [None, 5, 64][int(rng.integers(0, 3))])
        if args[-1].size == 0:
            continue
        ref = lowcost_scan._scan_reference(*args)
        placed += ref.ids is not None
        try:
            assert_same_scan(lowcost_greedy.greedy_scan(*args), ref)
        except AssertionError as e:
            raise AssertionError(f"window {i}: {e}") from None
    assert placed > 100


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
        assert_same_scan(lowcost_greedy.greedy_scan(*args), lowcost_scan._scan_reference(*args))


def test_stages_wider_than_128_steps_and_many_lines_give_the_numpy_searchs_floats():
    """A stage's area is a sum over its steps, which numpy adds pairwise (in blocks of 128, halves beyond): stages of
    hundreds of one-container gangs spread one per step on an empty plan, three lines, uneven loads."""
    rng = np.random.default_rng(128)
    for W, demands, gangs in ((400, [300], [1]), (700, [5, 520, 7], [1, 1, 2]), (300, [130, 140], [1, 3])):
        L = rng.integers(0, 4, size=(3, W)).astype(float) * 0.37
        args = scan_args(L, np.full_like(L, 2000.3), np.array([0.3, 1.1, 0.7]), demands, gangs, 8)
        found = lowcost_greedy.greedy_scan(*args)
        assert max(x.shape[1] for x in found.stage_x.values()) > 128
        assert_same_scan(found, lowcost_scan._scan_reference(*args))


def test_numpy_sum_is_numpys_sum_to_the_last_bit():
    """The compiled search adds a stage's weighted costs as numpy does (pairwise): held to numpy's own sum on every
    length up to 600 and a few longer ones, with terms of mixed magnitudes (where the order of additions shows)."""
    rng = np.random.default_rng(7)
    differ = 0
    for n in [*range(601), 1000, 4097, 20001]:
        v = rng.random(n) * 10.0 ** rng.uniform(-3, 3, n)
        assert lowcost_greedy._numpy_sum(v, n) == v.sum(), n
        total = 0.0
        for t in v:
            total += t
        differ += total != v.sum()
    assert differ > 100  # the order of additions matters on these terms: a plain running sum would fail


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
    for name, scan in (("new", lowcost_greedy.greedy_scan), ("old", lowcost_scan._scan_reference)):
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
