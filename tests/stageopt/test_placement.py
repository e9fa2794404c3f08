"""IPA, Fuxi and the exact min-max placement: the paper's Fig. 6, Theorem 5.1, errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cluster_sim.stageopt import (
    brute_force_min_max_placement,
    exact_min_max_placement,
    fuxi_placement,
    ipa_placement,
    is_column_ordered,
    slots_per_machine,
    stage_latency,
)

FIG6_L = np.array([[8.0, 12.0, 10.0], [16.0, 24.0, 20.0]])
FIG6_CPU = np.array([0.40, 0.60, 0.80])
FIG6_IO_BUSY = np.array([1.0, 1.0, 0.0])


def test_fig6_fuxi_gives_24s():
    # key resource CPU (the bottleneck column), the two lowest watermarks, instances in id order
    a = fuxi_placement(np.c_[FIG6_CPU, 0.5 * FIG6_IO_BUSY], np.ones(3, dtype=int), 2)
    assert a.tolist() == [0, 1]
    assert stage_latency(FIG6_L, a) == 24.0


def test_fig6_ipa_gives_16s_i2_to_m1_and_i1_to_m3():
    a = ipa_placement(FIG6_L, np.ones(3, dtype=int))
    assert a.tolist() == [2, 0]
    assert stage_latency(FIG6_L, a) == 16.0
    assert exact_min_max_placement(FIG6_L, np.ones(3, dtype=int))[1] == 16.0


def test_fuxi_wraps_round_and_skips_full_machines():
    a = fuxi_placement(np.array([0.3, 0.1, 0.2]), np.array([1, 3, 2]), 5)
    # round 0: m1, m2, m0; round 1: m1, m2
    assert a.tolist() == [1, 2, 0, 1, 2]


def test_slots_per_machine_is_beta_j():
    free = np.array([[8, 32], [3, 64], [16, 4], [1, 1]])
    beta = slots_per_machine(free, np.array([2, 4]), alpha=3)
    assert beta.tolist() == [3, 1, 1, 0]
    with pytest.raises(ValueError, match=r"alpha=1 is too small.*ceil\(m/n\) = 3"):
        slots_per_machine(free, np.array([2, 4]), alpha=1, m=10)
    with pytest.raises(ValueError, match="theta0"):
        slots_per_machine(free, np.array([0, 4]), alpha=3)


@st.composite
def column_ordered(draw, distinct=False):
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 5))
    cap = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    if cap.sum() < m:
        cap[draw(st.integers(0, n - 1))] += m - cap.sum()
    perm = np.array(draw(st.permutations(range(m))))
    cols = []
    for _ in range(n):
        if distinct:
            v = draw(st.lists(st.integers(1, 60), min_size=m, max_size=m, unique=True))
        else:
            v = draw(st.lists(st.integers(1, 12), min_size=m, max_size=m))
        cols.append(np.sort(v))
    L = np.stack(cols, axis=1)[perm].astype(float)   # one row order shared by every column
    return L, cap


@settings(max_examples=250, deadline=None)
@given(column_ordered(distinct=True))
def test_ipa_is_optimal_on_column_ordered_matrices(case):
    L, cap = case
    assert is_column_ordered(L)
    a = ipa_placement(L, cap)
    assert np.all(np.bincount(a, minlength=cap.size) <= cap)
    assert stage_latency(L, a) == exact_min_max_placement(L, cap)[1]


@settings(max_examples=150, deadline=None)
@given(column_ordered(distinct=False))
def test_ipa_is_optimal_on_column_ordered_matrices_with_ties(case):
    L, cap = case
    assert stage_latency(L, ipa_placement(L, cap)) == exact_min_max_placement(L, cap)[1]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_exact_milp_agrees_with_brute_force(m, n, data):
    L = np.array(data.draw(st.lists(st.integers(1, 30), min_size=m * n, max_size=m * n)), float).reshape(m, n)
    cap = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    if cap.sum() < m:
        cap[0] += m - cap.sum()
    a, v = exact_min_max_placement(L, cap)
    assert v == brute_force_min_max_placement(L, cap)[1] == stage_latency(L, a)
    assert np.all(np.bincount(a, minlength=n) <= cap)


def test_ipa_can_lose_without_column_order():
    # i0 is fast only on m0, i1 is slow everywhere but least slow on m0 -> IPA takes m0 for i1
    L = np.array([[1.0, 9.0], [5.0, 6.0]])
    assert not is_column_ordered(L)
    ipa = stage_latency(L, ipa_placement(L, [1, 1]))
    assert ipa == 9.0 and exact_min_max_placement(L, [1, 1])[1] == 6.0


def test_ipa_ties_go_to_the_larger_row_then_lowest_indices():
    L = np.full((2, 3), 5.0)
    assert ipa_placement(L, [1, 1, 1]).tolist() == [0, 1]
    assert ipa_placement(L, [2, 1, 1]).tolist() == [0, 0]
    # equal BPL 1: the row that is slower elsewhere (i1) goes first and takes m0
    L = np.array([[1.0, 1.0], [1.0, 2.0]])
    assert ipa_placement(L, [1, 1]).tolist() == [1, 0]


def test_ipa_respects_capacity_and_is_deterministic():
    rng = np.random.default_rng(3)
    L = rng.lognormal(size=(300, 40))
    cap = rng.integers(0, 4, size=40) + 8
    a = ipa_placement(L, cap)
    assert np.all(np.bincount(a, minlength=40) <= cap)
    assert np.array_equal(a, ipa_placement(L, cap))


@pytest.mark.parametrize(
    "L, cap, msg",
    [
        (np.zeros((3, 0)), np.zeros(0, int), "machine list is empty"),
        (np.ones((5, 2)), np.array([2, 2]), "need 5 slots, have 4"),
        (np.ones((2, 3)), np.array([1, 1]), r"shape \(3,\)"),
        (np.ones((2, 2)), np.array([1, -1]), r"capacity\[1\]=-1"),
        (np.array([[1.0, np.nan]]), np.array([1, 1]), "finite"),
        (np.ones(3), np.array([1, 1, 1]), "2-D"),
    ],
)
def test_bad_input_is_named(L, cap, msg):
    with pytest.raises(ValueError, match=msg):
        ipa_placement(L, cap)
    with pytest.raises(ValueError, match=msg):
        exact_min_max_placement(L, cap)


def test_fuxi_bad_input():
    with pytest.raises(ValueError, match="need 4 slots, have 3"):
        fuxi_placement(np.array([0.1, 0.2, 0.3]), np.ones(3, int), 4)
    with pytest.raises(ValueError, match="machine list is empty"):
        fuxi_placement(np.array([]), np.zeros(0, int), 1)


def _ipa_reference(L, cap):
    """IPA as it was before full machines were left out up front (the pointers walked past them one round at a
    time): the reference the faster version must equal decision for decision."""
    m, n = L.shape
    cap = cap.copy()
    rows = np.arange(m)
    order = np.argsort(L, axis=1, kind="stable")
    ptr = np.zeros(m, dtype=np.int64)

    def advance(idx):
        while idx.size:
            idx = idx[cap[order[idx, ptr[idx]]] == 0]
            ptr[idx] += 1

    advance(rows)
    best = order[rows, ptr].astype(np.int64)
    key = L[rows, best]
    rowsum = L.sum(axis=1)
    assignment = np.full(m, -1, dtype=np.int64)
    decisions = []
    for _ in range(m):
        cand = np.flatnonzero(key == key.max())
        i = int(cand[np.argmax(rowsum[cand])]) if cand.size > 1 else int(cand[0])
        j = int(best[i])
        decisions.append((i, j, float(key[i])))
        assignment[i] = j
        key[i] = -np.inf
        cap[j] -= 1
        if cap[j] == 0:
            movers = np.flatnonzero((best == j) & (assignment < 0))
            advance(movers)
            best[movers] = order[movers, ptr[movers]]
            key[movers] = L[movers, best[movers]]
    return assignment, decisions


@settings(max_examples=150, deadline=None)
@given(m=st.integers(1, 12), n=st.integers(1, 10), data=st.data())
def test_ipa_with_full_machines_decides_as_the_reference(m, n, data):
    """Full machines (no slot) are left out before IPA starts: the same decisions, in the same order, with ties
    (few distinct latencies) and most machines full."""
    L = np.array(data.draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 5.0]), min_size=m * n, max_size=m * n))).reshape(m, n)
    cap = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    if cap.sum() < m:
        cap[data.draw(st.integers(0, n - 1))] += m - cap.sum()
    from cluster_sim.stageopt.placement import ipa_decisions

    a, decisions = _ipa_reference(L, cap)
    assert ipa_placement(L, cap).tolist() == a.tolist()
    inst, mach, bpl = ipa_decisions(L, cap)
    assert list(zip(inst.tolist(), mach.tolist(), bpl.tolist())) == decisions


def test_ipa_sorts_only_the_machines_with_a_slot(monkeypatch):
    """A busy cluster (the capstone's 500 machines, most full in a scheduler's view): IPA orders each instance's
    machines among those with a slot, not all of them (counted: the columns argsort is given)."""
    rng = np.random.default_rng(5)
    L = rng.lognormal(size=(20, 500))
    cap = np.zeros(500, dtype=int)
    cap[rng.choice(500, 10, replace=False)] = 3
    sorted_columns = []
    argsort = np.argsort

    def counting(a, *args, **kwargs):
        sorted_columns.append(np.shape(a)[-1])
        return argsort(a, *args, **kwargs)

    monkeypatch.setattr(np, "argsort", counting)
    a = ipa_placement(L, cap)
    monkeypatch.undo()
    assert a.tolist() == _ipa_reference(L, cap)[0].tolist()
    assert sorted_columns == [10]
