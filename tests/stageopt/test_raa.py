"""RAA Path, RAA General and WUN: Fig. 7, Appendix E, brute force, ties, errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cluster_sim.stageopt import brute_force_stage_pareto, pareto_indices, raa_general, raa_path, wun

FIG7 = [np.array([[150.0, 5.0], [55.0, 20.0]]), np.array([[300.0, 4.0], [100.0, 5.0]])]


@pytest.mark.parametrize("solver", [raa_path, raa_general])
def test_fig7_stage_pareto_set_and_wun(solver):
    front, choice = solver(FIG7)
    assert sorted(map(tuple, front.tolist())) == [(100, 25), (150, 10), (300, 9)]
    assert front.tolist() == [[300, 9], [150, 10], [100, 25]]       # path order
    assert choice.tolist() == [[0, 0], [0, 1], [1, 1]]
    assert front[wun(front)].tolist() == [150, 10]
    # the dominated (300, 24) of Fig. 7 = [theta_1^2, theta_2^1] is not in the front
    assert [300, 24] not in front.tolist()


def test_fig8_path_starts_at_300_14_then_150_15():
    # our reconstruction of Fig. 8: 2, 4 and 3 points, first two path states as in the text
    sets = [
        np.array([[120.0, 6.0], [60.0, 9.0]]),
        np.array([[300.0, 3.0], [150.0, 4.0], [80.0, 7.0], [40.0, 12.0]]),
        np.array([[150.0, 5.0], [90.0, 8.0], [50.0, 13.0]]),
    ]
    front, choice = raa_path(sets)
    assert front[:2].tolist() == [[300, 14], [150, 15]]
    assert choice[1].tolist() == [0, 1, 0]
    assert np.array_equal(front, brute_force_stage_pareto(sets)[0])


def test_appendix_e_three_objectives():
    sets = [np.array([[15, 10, 5], [20, 15, 2]], float), np.array([[30, 5, 15], [40, 10, 5]], float)]
    f, _ = raa_general(sets, ("max", "sum", "sum"), weights=[(0.5, 0.5)])
    assert sorted(f.tolist()) == [[30, 15, 20], [40, 20, 10]]
    f, _ = raa_general(sets, ("max", "sum", "sum"), weights=[(0.1, 0.9)])
    assert sorted(f.tolist()) == [[30, 20, 17], [40, 25, 7]]


def test_appendix_e_four_objectives_two_max():
    sets = [np.array([[15, 6, 10, 5], [20, 30, 15, 2]], float), np.array([[30, 10, 5, 15], [40, 50, 10, 5]], float)]
    f, _ = raa_general(sets, ("max", "max", "sum", "sum"), weights=[(0.5, 0.5)])
    assert sorted(f.tolist()) == [[30, 10, 15, 20], [40, 50, 20, 10]]


@st.composite
def strict_pareto_sets(draw, k=2, max_m=4, max_p=4):
    m = draw(st.integers(1, max_m))
    sets = []
    for _ in range(m):
        p = draw(st.integers(1, max_p))
        if k == 2:
            lat = sorted(draw(st.lists(st.integers(1, 40), min_size=p, max_size=p, unique=True)), reverse=True)
            cost = sorted(draw(st.lists(st.integers(1, 40), min_size=p, max_size=p, unique=True)))
            s = np.c_[lat, cost].astype(float)
        else:
            pts = np.array(draw(st.lists(st.lists(st.integers(1, 9), min_size=k, max_size=k), min_size=p, max_size=p)), float)
            s = pts[pareto_indices(pts)]
        perm = draw(st.permutations(range(len(s))))          # input order must not matter
        sets.append(s[list(perm)])
    return sets


@settings(max_examples=300, deadline=None)
@given(strict_pareto_sets())
def test_raa_path_and_general_equal_brute_force(sets):
    want, _ = brute_force_stage_pareto(sets)
    for solver in (raa_path, raa_general):
        front, choice = solver(sets)
        assert np.array_equal(front, want)
        # every plan really produces its point
        chosen = np.stack([sets[i][choice[:, i]] for i in range(len(sets))], axis=1)
        assert np.array_equal(front[:, 0], chosen[:, :, 0].max(axis=1))
        assert np.array_equal(front[:, 1], chosen[:, :, 1].sum(axis=1))


@settings(max_examples=100, deadline=None)
@given(strict_pareto_sets(k=3, max_m=3, max_p=3), st.sampled_from([("max", "sum", "sum"), ("max", "max", "sum"), ("sum", "max", "max")]))
def test_raa_general_is_a_subset_of_the_pareto_set(sets, aggs):
    want, _ = brute_force_stage_pareto(sets, aggs)
    front, _ = raa_general(sets, aggs)
    assert len(front) >= 1
    assert {tuple(r) for r in front.tolist()} <= {tuple(r) for r in want.tolist()}


def test_stage_level_ties_list_each_vector_once():
    # two plans reach (10, 4): (a0,b1) and (a1,b0); the front holds the vector once
    sets = [np.array([[10.0, 1.0], [5.0, 3.0]]), np.array([[10.0, 1.0], [5.0, 3.0]])]
    front, choice = raa_path(sets)
    assert front.tolist() == [[10, 2], [5, 6]]
    assert choice.tolist() == [[0, 0], [1, 1]]
    # equal latency in two instances: both must step before a new point is recorded
    f2, _ = raa_general(sets)
    assert np.array_equal(front, f2)


def test_pareto_indices_drops_dominated_and_duplicates():
    pts = np.array([[3, 1], [2, 2], [2, 3], [1, 5], [1, 5], [4, 1]])
    assert pareto_indices(pts).tolist() == [0, 1, 3]


@pytest.mark.parametrize(
    "sets, msg",
    [
        ([], "pareto_sets is empty"),
        ([np.zeros((0, 2))], r"pareto_sets\[0\] is an empty Pareto set"),
        ([np.array([[1.0, 2.0]]), np.array([[1.0, 2.0, 3.0]])], r"pareto_sets\[1\] has 3 objectives, expected 2"),
        ([np.array([[5.0, 1.0], [6.0, 2.0]])], r"pareto_sets\[0\] is not strictly Pareto: row 1 \[6.0, 2.0\]"),
        ([np.array([[5.0, 1.0], [5.0, 1.0]])], r"pareto_sets\[0\] is not strictly Pareto: row 1"),
        ([np.array([[5.0, np.inf]])], "non-finite"),
    ],
)
def test_bad_pareto_sets(sets, msg):
    with pytest.raises(ValueError, match=msg):
        raa_path(sets)
    if sets:
        with pytest.raises(ValueError, match=msg):
            raa_general(sets)


def test_bad_aggregators_and_weights():
    with pytest.raises(ValueError, match="aggregator 'mean' is not allowed"):
        raa_general(FIG7, ("max", "mean"))
    with pytest.raises(ValueError, match="has 3 entries but the Pareto sets have 2"):
        raa_general(FIG7, ("max", "sum", "sum"))


def test_wun_normalises_weights_and_guards_zero_range():
    f = np.array([[100.0, 25.0], [150.0, 10.0], [300.0, 9.0]])
    assert wun(f) == 1
    assert wun(f, (1, 0)) == 0 and wun(f, (0, 1)) == 2
    assert wun(f, (2, 2)) == wun(f, (0.5, 0.5))
    assert wun(np.array([[5.0, 1.0], [5.0, 1.0]])) == 0            # zero range in both: lowest index
    assert wun(np.array([[5.0, 3.0], [5.0, 1.0]])) == 1            # latency cannot decide, cost does
    with pytest.raises(ValueError, match="non-empty"):
        wun(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="weights must have one entry per objective"):
        wun(f, (1, 1, 1))
    with pytest.raises(ValueError, match="not all zero"):
        wun(f, (0, 0))
