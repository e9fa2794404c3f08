"""Inputs that cannot happen are refused, naming the stage (issue 14, finding 5).

Each test here failed on the code before the fix: ``tokens_to_release`` released all 10 tokens of a
job whose last stage was "complete" before its producer, ``exact_peak`` dropped negative counts and
unknown stages silently, ``StageGraph(..., None)`` raised a bare ``TypeError`` and
``random_stage_graph(stages=2.5)`` complained about spools.
"""

import numpy as np
import pytest

from cluster_sim.shaper import (
    FIGURE5_COMPLETED,
    ResourceShaper,
    StageGraph,
    Tree,
    exact_peak,
    figure5_job,
    random_stage_graph,
    remaining_peak,
    tree_widths,
    treeify,
)

CHAIN = StageGraph({"a": 3, "b": 2, "c": 1}, [("a", "b"), ("b", "c")])


def test_a_stage_complete_before_its_producer_is_refused():
    # before: 10 tokens released while 5 vertices of a and b remained
    with pytest.raises(ValueError, match=r"completed\['c'\]=1, but its producer 'b' has completed only 0 of its 2"):
        ResourceShaper().tokens_to_release(CHAIN, 10, {"c": 1})


def test_a_stage_running_before_its_producer_is_refused():
    with pytest.raises(ValueError, match=r"running\['b'\]=1, but its producer 'a' has completed only 2 of its 3"):
        ResourceShaper(count="not_started").tokens_to_release(CHAIN, 10, {"a": 2}, running={"b": 1})


def test_the_check_sees_producers_across_dropped_edges():
    # S8 -> S11 is dropped by tree-ification; S11 complete while S8 has not even started is still refused
    g = figure5_job()
    trees = treeify(g, np.random.default_rng(0))
    assert ("S8", "S11") not in {e for t in trees for e in t.edges}
    state = {s: v for s, v in g.vertices.items() if s in ("S1", "S2", "S3", "S4", "S6")} | {"S11": 50}
    with pytest.raises(ValueError, match=r"completed\['S11'\]=50, but its producer 'S8' has completed only 0"):
        remaining_peak(trees, state)


def test_hand_built_trees_are_checked_along_their_own_edges():
    t = Tree(root="b", children={"a": (), "b": ("a",)}, vertices={"a": 2, "b": 2}, order=("a", "b"))
    with pytest.raises(ValueError, match=r"completed\['b'\]=1, but its producer 'a'"):
        tree_widths([t], {"b": 1})
    assert tree_widths([t], {"a": 2, "b": 1}) == [1]


def test_a_reachable_state_still_gives_the_paper_answer():
    assert ResourceShaper().tokens_to_release(figure5_job(), 200, FIGURE5_COMPLETED) == 70
    assert ResourceShaper().tokens_to_release(CHAIN, 10, {"a": 3, "b": 1}) == 9


@pytest.mark.parametrize("remaining, message", [
    ({"a": -1, "b": 2, "c": 1}, r"remaining\['a'\]=-1 is negative: allowed 0 <= remaining\['a'\] <= 3"),
    ({"a": 3, "b": 2, "c": 1, "zz": 4}, r"remaining names unknown stage 'zz'"),
    ({"a": 4, "b": 2, "c": 1}, r"remaining\['a'\]=4 exceeds the stage's 3 vertices"),
    ({"a": 2.5, "b": 2, "c": 1}, r"remaining\['a'\]=2.5 must be an integer count"),
    ({"a": 1, "b": 2, "c": 0}, r"remaining\['c'\]=0 says 1 of the 1 vertices of stage 'c' are done, but its producer 'b'"),
    ({"a": 1}, r"stage 'b' is left out of remaining, so it counts as done"),
])
def test_exact_peak_refuses_impossible_remaining_counts(remaining, message):
    # before: negative counts and unknown stages were ignored, an impossible state solved as if valid
    with pytest.raises(ValueError, match=message):
        exact_peak(CHAIN, remaining)


def test_exact_peak_needs_a_graph():
    with pytest.raises(ValueError, match="graph must be a StageGraph, got dict"):
        exact_peak({"a": 1}, {"a": 1})


@pytest.mark.parametrize("edges", [None, "ab", {"a": "b"}, 3])
def test_stage_graph_edges_must_be_a_list_of_pairs(edges):
    # before: StageGraph({"a": 1}, None) raised TypeError: 'NoneType' object is not iterable
    with pytest.raises(ValueError, match=r"edges must be a list of \(producer, consumer\) tuples.*edges=\[\]"):
        StageGraph({"a": 1}, edges)


@pytest.mark.parametrize("kwargs, message", [
    ({"stages": 2.5}, r"stages=2.5 must be an integer >= 1"),
    ({"stages": True}, r"stages=True must be an integer >= 1"),
    ({"spools": 1.0}, r"spools=1.0 must be an integer >= 0"),
    ({"max_vertices": 10.0}, r"max_vertices=10.0 must be an integer >= 1"),
    ({"decay": float("nan")}, r"decay=nan is out of range"),
    ({"stages": 6, "inputs": 7}, r"inputs=7 is out of range: allowed an integer 1 <= inputs <= 6"),
])
def test_random_stage_graph_names_the_argument(kwargs, message):
    # before: stages=2.5 complained "spools=3 is out of range: allowed 0 <= spools <= 0.5"
    with pytest.raises(ValueError, match=message):
        random_stage_graph(np.random.default_rng(0), **kwargs)


def test_random_stage_graph_accepts_numpy_integers():
    g = random_stage_graph(np.random.default_rng(0), stages=np.int64(8), spools=np.int32(2), max_vertices=np.int64(9))
    assert len(g) == 8
