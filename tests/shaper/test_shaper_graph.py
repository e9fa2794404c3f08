"""StageGraph: structure and the error messages a user sees for a broken plan."""

import numpy as np
import pytest

from cluster_sim.shaper import StageGraph


def test_structure_follows_stage_order():
    g = StageGraph({"a": 3, "b": 2, "c": 1, "d": 4}, [("a", "c"), ("a", "d"), ("b", "d")])
    assert g.spools == ("a",)
    assert g.inputs == ("a", "b")
    assert g.outputs == ("c", "d")
    assert g.consumers("a") == ("c", "d")
    assert g.producers("d") == ("a", "b")
    assert g.in_degree("d") == 2
    assert g.topological_order.index("a") < g.topological_order.index("d")
    assert g.total_vertices == 10


def test_cycle_names_a_stage_on_it():
    with pytest.raises(ValueError, match=r"cycle through stage '(b|c|d)'.*acyclic"):
        StageGraph({"a": 1, "b": 1, "c": 1, "d": 1}, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")])


def test_self_loop_is_a_cycle():
    with pytest.raises(ValueError, match="cycle through stage 'a'"):
        StageGraph({"a": 1}, [("a", "a")])


def test_unknown_stage_in_edge():
    with pytest.raises(ValueError, match=r"edge \('a', 'zz'\) names unknown stage 'zz'"):
        StageGraph({"a": 1, "b": 2}, [("a", "zz")])


@pytest.mark.parametrize("count", [0, -3])
def test_vertex_count_below_one(count):
    with pytest.raises(ValueError, match=rf"stage 'b' has vertex count {count}: must be an integer >= 1"):
        StageGraph({"a": 1, "b": count}, [])


def test_vertex_count_not_integer():
    with pytest.raises(ValueError, match="stage 'a' has vertex count 2.5"):
        StageGraph({"a": 2.5}, [])


def test_duplicate_edge():
    with pytest.raises(ValueError, match=r"duplicate edge \('a', 'b'\)"):
        StageGraph({"a": 1, "b": 1}, [("a", "b"), ("a", "b")])


def test_empty_graph():
    with pytest.raises(ValueError, match="non-empty"):
        StageGraph({}, [])


def test_numpy_counts_are_accepted_and_equality_ignores_edge_order():
    g1 = StageGraph({"a": np.int64(3), "b": 1, "c": 1}, [("a", "b"), ("a", "c")])
    g2 = StageGraph({"a": 3, "b": 1, "c": 1}, [("a", "c"), ("a", "b")])
    assert g1 == g2 and hash(g1) == hash(g2)
    assert "StageGraph(vertices=" in repr(g1)


@pytest.mark.parametrize(
    "counts, message",
    [
        ({"zz": 1}, "completed names unknown stage 'zz'"),
        ({"a": 4}, r"completed\['a'\]=4 exceeds the stage's 3 vertices"),
        ({"a": -1}, r"completed\['a'\]=-1 is negative"),
    ],
)
def test_completion_state_errors(counts, message):
    g = StageGraph({"a": 3, "b": 1}, [("a", "b")])
    with pytest.raises(ValueError, match=message):
        g.check_completed(counts)
