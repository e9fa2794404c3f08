"""Exercise 01's checks catch each named misconception, with a message naming the spool, edge or stage.

The wrong variants are written as a student might write them. Before issue 14, the check cells compared
whole forests and totals: the max-of-children variant passed the Fig. 5 case (every reading gave 130), and
a tie broken by index failed with two whole forests printed side by side.
"""

import numpy as np
import pytest

from cluster_sim.shaper import (
    FIGURE5_COMPLETED,
    FIGURE5_RUNNING,
    FIGURE5_SEED,
    dropped_edges,
    figure5_job,
    remaining_peak,
    tree_widths,
    trees_from_edges,
    treeify,
)
from cluster_sim.shaper.exercise import (
    check_remaining_peak,
    check_treeify,
    completion_state,
    exercise_dag,
    peak_cases,
    treeify_cases,
)


# ---- treeify, right and wrong ---------------------------------------------------------------------
def treeify_student(graph, rng, *, ties="rng", repeat=True):
    dropped = set()
    for spool in graph.spools:
        kept = list(graph.consumers(spool))
        while len(kept) > 1:
            top = max(graph.in_degree(c) for c in kept)
            if top <= 1:
                break
            tied = [c for c in kept if graph.in_degree(c) == top]
            if ties == "rng":
                victim = tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
            else:  # misconception: ties by index
                victim = tied[0]
            dropped.add((spool, victim))
            kept.remove(victim)
            if not repeat:  # misconception: one drop per spool
                break
    return trees_from_edges(graph, [e for e in graph.edges if e not in dropped])


def test_the_solution_passes_every_case_and_the_hidden_ones(reference_as_student):
    assert check_treeify(treeify_student).startswith("treeify: all 64 cases agree")
    assert check_treeify(treeify_student, hidden=True).startswith("treeify: all 60 cases agree")
    assert check_treeify(treeify).startswith("treeify: all 64 cases agree")


def test_ties_by_index_fail_at_fig5_naming_the_spool_and_the_edge():
    with pytest.raises(AssertionError) as e:
        check_treeify(lambda g, rng: treeify_student(g, rng, ties="index"))
    msg = str(e.value)
    assert msg.startswith("treeify: case 0 (the paper's Fig. 5 job, rng = np.random.default_rng(0)): spool S2 feeds")
    assert "you dropped:  S2 -> S5 (kept S2 -> S6)" in msg
    assert "the rule drops: S2 -> S6 (keeps S2 -> S5)" in msg
    assert "you seem to take the first tied consumer (S5) every time" in msg
    assert "StageGraph(" not in msg and "Tree(" not in msg  # no whole forests


def test_one_drop_per_spool_fails_naming_a_spool_with_three_consumers():
    with pytest.raises(AssertionError) as e:
        check_treeify(lambda g, rng: treeify_student(g, rng, repeat=False))
    msg = str(e.value)
    assert "repeat the rule while the spool feeds several consumers" in msg
    spool = msg.split("spool ")[1].split(" ")[0]
    case = int(msg.split("case ")[1].split(" ")[0])
    graph = treeify_cases()[case][0]
    assert len(graph.consumers(spool)) >= 3


def test_not_dropping_at_all_and_dropping_a_non_spool_edge_are_named(reference_as_student):
    with pytest.raises(AssertionError, match=r"(?s)case 0 .*spool S2 feeds .*you dropped:  none.*loses the edge"):
        check_treeify(lambda g, rng: trees_from_edges(g, g.edges))

    def drops_a_chain_edge(g, rng):
        drop = set(dropped_edges(g, rng)) | {("S4", "S7")}
        return trees_from_edges(g, [e for e in g.edges if e not in drop])

    with pytest.raises(AssertionError, match=r"you dropped S4 -> S7, but S4 feeds only S7"):
        check_treeify(drops_a_chain_edge)


def test_treeify_must_return_trees(reference_as_student):
    with pytest.raises(AssertionError, match=r"treeify must return a list of Tree .* got set"):
        check_treeify(lambda g, rng: set(dropped_edges(g, rng)))


def test_an_unsolved_treeify_gets_the_not_implemented_message():
    def stub(graph, rng):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="treeify is not implemented yet"):
        check_treeify(stub)


# ---- remaining_peak, right and wrong -------------------------------------------------------------
def peak_student(trees, completed, *, children=sum, completed_rule=True, comparison=">=", counts="not_completed"):
    total = 0
    for t in trees:
        value = {}
        for s in t.order:
            v, done = t.vertices[s], completed.get(s, 0)
            finished = done >= v if comparison == ">=" else done > v
            if completed_rule and finished:
                value[s] = 0
                continue
            rem = v - done if counts == "not_completed" else v
            kids = [value[c] for c in t.children[s]]
            value[s] = max(rem, children(kids) if kids else 0)
        total += value[t.root]
    return int(total)


def test_the_solution_passes_every_peak_case_and_the_hidden_ones(reference_as_student):
    assert check_remaining_peak(peak_student) == (
        "remaining_peak: all 62 cases agree with the reference (case 0, Fig. 5: 30 + 50 + 50 = 130)")
    assert check_remaining_peak(peak_student, hidden=True).startswith("remaining_peak: all 60 cases agree")
    assert check_remaining_peak(remaining_peak).startswith("remaining_peak: all 62 cases agree")


def test_max_for_sum_fails_at_fig5_naming_the_stage_and_its_children():
    with pytest.raises(AssertionError) as e:
        check_remaining_peak(lambda t, c: peak_student(t, c, children=max))
    msg = str(e.value)
    assert msg.startswith("remaining_peak: case 0 (the paper's Fig. 5 job at its execution point")
    assert "yours 110, expected 130" in msg
    assert "In the tree rooted at S12: stage S7 (20 vertices, 0 completed; children S4 = 20, S6 = 30)" in msg
    assert "Algorithm 2 gives max(20, 20 + 30) = 50" in msg
    assert "you took the largest child: S4, S6 can run side by side" in msg


def test_counting_every_vertex_fails_at_fig5_naming_a_part_done_stage():
    with pytest.raises(AssertionError) as e:
        check_remaining_peak(lambda t, c: peak_student(t, c, counts="all"))
    msg = str(e.value)
    assert msg.startswith("remaining_peak: case 0 ")
    assert "In the tree rooted at S12: stage S4 (35 vertices, 15 completed, no children): yours 35" in msg
    assert "count only the 20 vertices not completed yet (vertices - completed), not all 35" in msg


def test_forgetting_to_add_the_trees_is_named():
    def largest_tree(trees, completed):
        return max(peak_student([t], completed) for t in trees)

    with pytest.raises(AssertionError, match=r"(?s)case 0 .*the trees' widths are 30 \+ 50 \+ 50 = 130; Algorithm 1 adds"):
        check_remaining_peak(largest_tree)


@pytest.mark.parametrize("variant", [dict(completed_rule=False), dict(comparison=">")])
def test_algorithm_2s_completed_line_is_redundant_on_every_reachable_state(variant):
    """Dropping "if W[s] >= V[s]: return Empty" (or writing > for >=) cannot be caught by any reachable
    state: a completed stage's producers (its children) have completed too, so they add 0 anyway. The
    check passes these variants because their answers are right; the states where they differ are
    exactly the ones the library refuses."""
    assert check_remaining_peak(lambda t, c: peak_student(t, c, **variant)).startswith(
        "remaining_peak: all 62 cases agree")
    rng = np.random.default_rng(7)
    for k in range(300):  # reachable states of random DAGs agree too
        g = exercise_dag(k, 14)
        trees = treeify(g, rng)
        state = completion_state(g, k + 5)
        assert peak_student(trees, state, **variant) == remaining_peak(trees, state)
    # where they differ: a stage complete before its producer, which remaining_peak refuses
    g = figure5_job()
    trees = treeify(g, np.random.default_rng(0))
    impossible = {"S1": 40, "S2": 30, "S5": 30, "S8": 30}  # S7 complete while S4 and S6 have not started
    impossible["S7"] = 20
    assert peak_student(trees, impossible, **variant) != peak_student(trees, impossible)
    with pytest.raises(ValueError, match=r"completed\['S6'\]|completed\['S7'\]"):
        remaining_peak(trees, impossible)


def test_an_unsolved_remaining_peak_gets_the_not_implemented_message():
    def stub(trees, completed):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="remaining_peak is not implemented yet"):
        check_remaining_peak(stub)


# ---- Fig. 5 tells the readings apart ---------------------------------------------------------------
def test_fig5_discriminates_the_readings():
    g = figure5_job()
    trees = treeify(g, np.random.default_rng(FIGURE5_SEED))
    assert tree_widths(trees, FIGURE5_COMPLETED) == [30, 50, 50]
    assert remaining_peak(trees, FIGURE5_COMPLETED) == 130
    assert peak_student(trees, FIGURE5_COMPLETED, children=max) == 110  # max for sum
    assert remaining_peak(trees, FIGURE5_COMPLETED, running=FIGURE5_RUNNING, count="not_started") == 115
    assert peak_student(trees, FIGURE5_COMPLETED, counts="all") != 130
    # ties by index keep S6 -> S11 instead of S6 -> S7: another forest and another peak
    by_index = treeify_student(g, np.random.default_rng(FIGURE5_SEED), ties="index")
    assert remaining_peak(by_index, FIGURE5_COMPLETED) == 100
    # every case list starts with Fig. 5 at its execution point
    assert peak_cases()[0][2] == FIGURE5_COMPLETED and peak_cases()[0][1] == FIGURE5_SEED


def test_the_readings_table_computes_every_reading_at_fig5():
    from cluster_sim.shaper.exercise import readings

    r = readings(figure5_job(), FIGURE5_COMPLETED, FIGURE5_RUNNING)["remaining peak"]
    assert r.iloc[0] == 130
    assert r["max of the children instead of their sum"] == 110
    assert r["remaining = not started (running vertices not counted)"] == 115
    assert r["without the 'completed -> Empty' line"] == 130
    ties = r.filter(like="another tie-break")
    assert len(ties) == 3 and sorted(ties) == [100, 100, 130]
    assert r.filter(like="exact").iloc[0] == 80
