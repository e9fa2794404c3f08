"""Tree-ification and max-cut: the paper's Fig. 5 example, the rule's edge cases, brute force."""

import itertools

import networkx as nx
import numpy as np
import pytest
from shaper_strategies import consistent_state, dags
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_sim.shaper import (
    FIGURE5_COMPLETED,
    FIGURE5_RUNNING,
    FIGURE5_SEED,
    FIGURE5_TOKENS,
    IncrementalPeak,
    ResourceShaper,
    StageGraph,
    canonical_forest,
    dropped_edges,
    exact_peak,
    figure5_job,
    remaining_peak,
    tree_widths,
    treeify,
)


# ---- the paper's worked example (Fig. 5) ---------------------------------------------------------
def test_figure5_shape_matches_the_text():
    g = figure5_job()
    assert len(g) == 12 and len(g.inputs) == 4 and len(g.outputs) == 3
    assert g.spools == ("S2", "S6", "S8")
    assert all(len(g.consumers(s)) == 2 for s in g.spools)
    assert [g.in_degree(c) for c in g.consumers("S2")] == [2, 2]
    assert [g.in_degree(c) for c in g.consumers("S6")] == [2, 2]
    assert g.in_degree("S11") > g.in_degree("S10")


@pytest.mark.parametrize("seed", range(16))
def test_figure5_widths_follow_the_tie_breaks(seed):
    """30 + 50 + 50 = 130 when S6 keeps S7 (S4 and S6 then add up under S7); 30 + 50 + 20 = 100 when S6 keeps
    S11 (S6's 30 remaining vertices hide under S11's 50). S2's pick does not change the widths here."""
    g = figure5_job()
    drops = dropped_edges(g, np.random.default_rng(seed))
    assert ("S8", "S11") in drops and ("S8", "S10") not in drops
    assert len(drops) == 3
    trees = treeify(g, np.random.default_rng(seed))
    assert [t.root for t in trees] == ["S10", "S11", "S12"]
    s6_keeps_s7 = ("S6", "S11") in drops
    expected = [30, 50, 50] if s6_keeps_s7 else [30, 50, 20]
    assert tree_widths(trees, FIGURE5_COMPLETED) == expected
    assert ResourceShaper(seed=seed).tokens_to_release(g, FIGURE5_TOKENS, FIGURE5_COMPLETED) == 200 - sum(expected)


def test_figure5_at_the_papers_seed():
    g = figure5_job()
    trees = treeify(g, np.random.default_rng(FIGURE5_SEED))
    assert tree_widths(trees, FIGURE5_COMPLETED) == [30, 50, 50]
    assert remaining_peak(trees, FIGURE5_COMPLETED) == 130
    assert ResourceShaper(seed=FIGURE5_SEED).tokens_to_release(g, FIGURE5_TOKENS, FIGURE5_COMPLETED) == 70
    # the execution point is one stage barriers can reach, and the job holds what is running
    g.check_state(FIGURE5_COMPLETED, FIGURE5_RUNNING)
    assert sum(FIGURE5_RUNNING.values()) <= 130


def test_figure5_tie_breaks_really_are_random():
    g = figure5_job()
    seen = {tuple(dropped_edges(g, np.random.default_rng(s))) for s in range(40)}
    assert len(seen) == 4  # S2 and S6 each pick one of two consumers


def test_figure5_not_started_variant_and_the_exact_bound():
    g = figure5_job()
    trees = treeify(g, np.random.default_rng(0))
    assert remaining_peak(trees, FIGURE5_COMPLETED, running=FIGURE5_RUNNING, count="not_started") == 115
    remaining = {s: v - FIGURE5_COMPLETED.get(s, 0) for s, v in g.vertices.items()}
    # S4 + S6 + S8: the trees forget that S11 waits for S8 (another tree), so the bound is 50 tokens loose
    assert exact_peak(g, remaining) == 80


# ---- the rule's edge cases ----------------------------------------------------------------------
def test_all_consumers_in_degree_one_drops_nothing_and_shares_the_spool():
    g = StageGraph({"s": 10, "a": 3, "b": 4}, [("s", "a"), ("s", "b")])
    assert dropped_edges(g, np.random.default_rng(0)) == []
    trees = treeify(g, np.random.default_rng(0))
    assert [t.root for t in trees] == ["a", "b"]
    assert all("s" in t.stages for t in trees)  # shared child, counted in both trees
    assert remaining_peak(trees, {}) == 20  # conservative: the truth is 10
    assert exact_peak(g, g.vertices) == 10


def test_three_consumers_drop_repeatedly_down_to_one():
    # s feeds x (in-degree 3), y (in-degree 2), z (in-degree 1): drop x, then y; keep z.
    # p is a spool too (x, y): it drops x (in-degree 3 > 2).
    g = StageGraph(
        {"s": 5, "p": 1, "q": 1, "x": 1, "y": 1, "z": 1},
        [("s", "x"), ("s", "y"), ("s", "z"), ("p", "x"), ("q", "x"), ("p", "y")],
    )
    assert dropped_edges(g, np.random.default_rng(0)) == [("s", "x"), ("s", "y"), ("p", "x")]


def test_three_consumers_stop_when_only_in_degree_one_remain():
    g = StageGraph({"s": 5, "p": 1, "x": 1, "y": 1, "z": 1}, [("s", "x"), ("s", "y"), ("s", "z"), ("p", "x")])
    assert dropped_edges(g, np.random.default_rng(0)) == [("s", "x")]


def test_tie_break_uses_rng_integers_over_tied_consumers_in_stage_order():
    g = StageGraph({"s": 1, "p": 1, "a": 1, "b": 1}, [("s", "a"), ("s", "b"), ("p", "a"), ("p", "b")])
    for seed in range(10):
        rng = np.random.default_rng(seed)
        first = ["a", "b"][int(rng.integers(2))]  # spool s (stage order), then spool p
        second = ["a", "b"][int(rng.integers(2))]
        assert dropped_edges(g, np.random.default_rng(seed)) == [("s", first), ("p", second)]


def test_treeify_rejects_a_seed_instead_of_a_generator():
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        treeify(figure5_job(), 0)


def test_remaining_peak_errors_name_the_offending_item():
    trees = treeify(figure5_job(), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"completed\['S7'\]=21 exceeds the stage's 20 vertices"):
        remaining_peak(trees, {"S7": 21})
    with pytest.raises(ValueError, match="completed names unknown stage 'S99'"):
        remaining_peak(trees, {"S99": 1})
    with pytest.raises(ValueError, match=r"completed\['S1'\]=-2 is negative"):
        remaining_peak(trees, {"S1": -2})
    with pytest.raises(ValueError, match=r"stage 'S3': completed \(15\) \+ running \(8\) exceeds its 20"):
        remaining_peak(trees, {"S3": 15}, running={"S3": 8}, count="not_started")
    with pytest.raises(ValueError, match="count='started' is not allowed"):
        remaining_peak(trees, {}, count="started")
    with pytest.raises(ValueError, match="trees must be a list of Tree"):
        remaining_peak(figure5_job(), {})


def test_shaper_errors():
    with pytest.raises(ValueError, match="current_tokens=-1 is negative"):
        ResourceShaper().tokens_to_release(figure5_job(), -1, {})
    with pytest.raises(ValueError, match="count='x' is not allowed"):
        ResourceShaper(count="x")


# ---- properties against brute force ---------------------------------------------------------------
def brute_max_antichain(graph, weights):
    """Largest total weight of stages no two of which are connected by a path (2^n subsets)."""
    g = graph.to_networkx()
    reach = {s: nx.descendants(g, s) for s in graph.stages}
    stages = [s for s in graph.stages if weights.get(s, 0) > 0]
    best = 0
    for r in range(1, len(stages) + 1):
        for combo in itertools.combinations(stages, r):
            if all(b not in reach[a] and a not in reach[b] for a, b in itertools.combinations(combo, 2)):
                best = max(best, sum(weights[s] for s in combo))
    return best


@settings(max_examples=150, deadline=None)
@given(dags(max_stages=9), st.integers(0, 2**32 - 1))
def test_remaining_peak_is_never_below_the_exact_antichain_bound(graph, seed):
    rng = np.random.default_rng(seed)
    completed, running = consistent_state(graph, rng)
    trees = treeify(graph, np.random.default_rng(seed))
    remaining = {s: v - completed.get(s, 0) for s, v in graph.vertices.items()}
    exact = brute_max_antichain(graph, remaining)
    assert exact_peak(graph, remaining) == exact
    assert remaining_peak(trees, completed) >= exact


@settings(max_examples=150, deadline=None)
@given(dags(max_stages=9), st.integers(0, 2**32 - 1))
def test_each_tree_width_is_its_own_max_antichain_when_nothing_is_shared(graph, seed):
    trees = treeify(graph, np.random.default_rng(seed))
    members = [s for t in trees for s in t.stages]
    producers = [u for t in trees for u, _ in t.edges]
    if len(producers) != len(set(producers)):
        return  # a shared spool: the recursion counts it per consumer (tested elsewhere)
    assert sorted(members) == sorted(graph.stages)  # a partition of the stages
    completed, _ = consistent_state(graph, np.random.default_rng(seed + 1))
    remaining = {s: v - completed.get(s, 0) for s, v in graph.vertices.items()}
    for t, w in zip(trees, tree_widths(trees, completed)):
        sub = StageGraph({s: graph.vertices[s] for s in t.stages}, list(t.edges))
        assert w == brute_max_antichain(sub, {s: remaining[s] for s in t.stages})


@settings(max_examples=150, deadline=None)
@given(dags(max_stages=14), st.integers(0, 2**32 - 1))
def test_treeify_invariants(graph, seed):
    drops = dropped_edges(graph, np.random.default_rng(seed))
    trees = treeify(graph, np.random.default_rng(seed))
    assert canonical_forest(trees) == canonical_forest(treeify(graph, np.random.default_rng(seed)))
    kept = set(graph.edges) - set(drops)
    assert {e for t in trees for e in t.edges} == kept
    assert {s for t in trees for s in t.stages} == set(graph.stages)
    for u, v in drops:
        assert u in graph.spools and graph.in_degree(v) >= 2
    for s in graph.spools:
        still = [c for u, c in kept if u == s]
        assert len(still) == 1 or all(graph.in_degree(c) == 1 for c in still)
    for t in trees:
        assert t.order[-1] == t.root and not any(u == t.root for u, _ in kept)


@settings(max_examples=100, deadline=None)
@given(dags(max_stages=14), st.integers(0, 2**32 - 1))
def test_incremental_peak_equals_recomputing(graph, seed):
    from cluster_sim.shaper.peak import tree_width

    rng = np.random.default_rng(seed)
    trees = treeify(graph, rng)
    inc = IncrementalPeak(trees)
    assert inc.peak == remaining_peak(trees, {})
    V = graph.vertices
    # any sequence of updates (the data structure does not judge the state): the bare recursion
    completed = {s: 0 for s in graph.stages}
    for _ in range(30):
        s = graph.stages[int(rng.integers(len(graph)))]
        completed[s] = int(rng.integers(0, V[s] + 1))
        rem = {x: V[x] - completed[x] for x in V}
        done = {x: completed[x] >= V[x] for x in V}
        assert inc.complete(s, completed[s]) == sum(tree_width(t, rem, done) for t in trees)
    # states stage barriers can reach: Algorithm 1 from scratch, with its input checks
    for _ in range(5):
        state, _running = consistent_state(graph, rng)
        for s in graph.stages:
            inc.complete(s, state.get(s, 0))
        assert inc.peak == remaining_peak(trees, state)


def test_running_vertices_count_as_remaining_only_in_the_default_reading():
    g = StageGraph({"a": 8, "b": 3}, [("a", "b")])
    trees = treeify(g, np.random.default_rng(0))
    # a: 2 done, 6 running, 0 waiting
    assert remaining_peak(trees, {"a": 2}, running={"a": 6}) == 6  # not completed: the 6 running count
    assert remaining_peak(trees, {"a": 2}, running={"a": 6}, count="not_started") == 3  # only b's 3 waiting


@pytest.mark.parametrize("tokens, released", [(200, 70), (131, 1), (130, 0), (100, 0), (0, 0)])
def test_the_shaper_only_ever_releases(tokens, released):
    assert ResourceShaper().tokens_to_release(figure5_job(), tokens, FIGURE5_COMPLETED) == released


# ---- counting each spool once (our variant) --------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(dags(max_stages=9), st.integers(0, 2**32 - 1))
def test_spool_once_stays_between_the_exact_bound_and_the_papers(graph, seed):
    rng = np.random.default_rng(seed)
    completed, _ = consistent_state(graph, rng)
    paper = treeify(graph, np.random.default_rng(seed))
    once = treeify(graph, np.random.default_rng(seed), spool_once=True)
    # the paper's drops are kept (the extra drops use no randomness); each spool keeps <= 1 consumer
    assert set(dropped_edges(graph, np.random.default_rng(seed))) <= set(
        dropped_edges(graph, np.random.default_rng(seed), spool_once=True))
    kept = [e for t in once for e in t.edges]
    assert len({u for u, _ in kept}) == len(kept)
    assert sorted(s for t in once for s in t.stages) == sorted(graph.stages)  # a partition
    remaining = {s: v - completed.get(s, 0) for s, v in graph.vertices.items()}
    exact = brute_max_antichain(graph, remaining)
    assert exact <= remaining_peak(once, completed) <= remaining_peak(paper, completed)


def test_spool_once_tightens_the_shared_spool():
    g = StageGraph({"s": 10, "a": 3, "b": 4}, [("s", "a"), ("s", "b")])
    assert remaining_peak(treeify(g, np.random.default_rng(0)), {}) == 20  # s counted under a and b
    once = treeify(g, np.random.default_rng(0), spool_once=True)
    assert dropped_edges(g, np.random.default_rng(0), spool_once=True) == [("s", "b")]
    # s under a only: max(3, 10) + b's 4 = 14, between the exact 10 (s alone) and the paper's 20
    assert remaining_peak(once, {}) == 14 and exact_peak(g, g.vertices) == 10
    assert ResourceShaper(spool_once=True).tokens_to_release(g, 30, {}) == 16
