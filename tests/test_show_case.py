"""Issue 28: every lab's check message that names a case ends with the one call that shows it.

A check that fails on a case (a DAG, a plan, an instance matrix, a job's runs) names it; the message's last line is
``to look at it: from cluster_sim.checking import show_case; show_case('...')``, and that case holds the very inputs
the student's function was called with when it went wrong. Each check below gets a wrong answer that records its
last call. Lab 04's own test is in tests/test_checking.py.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from cluster_sim import checking
from cluster_sim.checking import CheckFailed

HINT = re.compile(r"^  to look at it: from cluster_sim\.checking import show_case; show_case\('(?P<name>[^']+)'\)$")


def _recording(fn):
    """``fn`` that remembers the arguments of its last call in ``.last``."""
    def wrapper(*args):
        wrapper.last = args
        return fn(*args)
    wrapper.last = None
    return wrapper


def _shown(message: str) -> str:
    """The name of the case the message's last line shows (asserting it is the one call)."""
    last = message.splitlines()[-1]
    match = HINT.match(last)
    assert match, f"the message does not end with the call that shows its case:\n{message}"
    return match["name"]


def _fails(check, *args, **kwargs) -> str:
    with pytest.raises(CheckFailed) as failed:
        check(*args, **kwargs)
    return str(failed.value)


def test_check_cases_shows_a_failing_case_by_the_students_parameter_names():
    def best_fit(free, demand):  # worst fit: the misconception of Lab 00's first check
        return int(np.argmax(np.asarray(free).sum(axis=1)))

    cases = [((np.array([[4, 4], [1, 1]]), (1, 1)), {}), ((np.array([[1, 1], [4, 4], [2, 2]]), (1, 1)), {})]
    message = _fails(checking.check_cases, best_fit, lambda free, demand: int(np.argmin(free.sum(axis=1))), cases,
                     name="best_fit")
    assert message.startswith("best_fit: case 0 disagrees")
    name = _shown(message)
    assert name == "best_fit case 0"
    shown = checking.case(name)
    assert list(shown) == ["free", "demand"] and shown["free"].tolist() == [[4, 4], [1, 1]] and shown["demand"] == (1, 1)


def test_arguments_without_a_signature_are_shown_by_position():
    assert checking.arguments(max, (1, 2), {"key": abs}) == {"argument 0": 1, "argument 1": 2, "key": abs}


def test_lab02_deadline_check_is_one_message_and_shows_its_runs():
    from cluster_sim.morpheus.slo.deadline_cases import check_deadline

    mine = _recording(lambda runs, q: float(np.nanmedian(runs["t_out_read"] - runs["period_start"])) + 1.0)
    message = _fails(check_deadline, mine)  # a CheckFailed: a notebook shows the message only, no traceback
    shown = checking.case(_shown(message))
    runs, q = mine.last
    assert shown["runs"].equals(runs) and shown["d_percentile"] == q


def test_lab03_folded_load_check_is_one_message_and_shows_the_whole_load():
    from cluster_sim.morpheus.packing.lowcost_cases import check_folded_load

    mine = _recording(lambda load, P, a, W: np.asarray(load, float).reshape(-1, P)[:, (a + np.arange(W)) % P].mean(0))
    message = _fails(check_folded_load, mine)
    assert "(the mean over instances)" in message
    shown = checking.case(_shown(message))
    load, P, a, W = mine.last
    assert shown["load"].tolist() == list(load) and (shown["period"], shown["a"], shown["window"]) == (P, a, W)


def test_lab01_treeify_check_shows_the_graph():
    from cluster_sim.shaper.exercise import check_treeify
    from cluster_sim.shaper.trees import trees_from_edges

    def first_tied(graph, rng):  # ties by position instead of rng
        dropped = set()
        for spool in graph.spools:
            kept = list(graph.consumers(spool))
            while len(kept) > 1 and max(graph.in_degree(c) for c in kept) > 1:
                top = max(graph.in_degree(c) for c in kept)
                victim = next(c for c in kept if graph.in_degree(c) == top)
                dropped.add((spool, victim))
                kept.remove(victim)
        return trees_from_edges(graph, [e for e in graph.edges if e not in dropped])

    mine = _recording(first_tied)
    message = _fails(check_treeify, mine)
    shown = checking.case(_shown(message))
    graph, _ = mine.last
    assert shown["graph"].edges == graph.edges


def test_lab02_penalty_checks_show_s_and_runs():
    from cluster_sim.morpheus.slo.penalty_cases import check_over_allocation

    mine = _recording(lambda s, runs: float((s[None, :] - runs).sum() / runs.shape[0]))  # no (.)+
    message = _fails(check_over_allocation, mine)
    shown = checking.case(_shown(message))
    s, runs = mine.last
    assert shown["s"].tolist() == s.tolist() and shown["runs"].tolist() == runs.tolist()


def test_lab06_and_lab07_checks_show_the_instance():
    from cluster_sim.stageopt.checks import check_ipa, check_raa_front
    from cluster_sim.stageopt.raa import raa_path

    L, cap = np.array([[4.0, 5.0], [4.0, 9.0]]), np.array([1, 1])
    lower_index_first = _recording(lambda L, c: np.array([0, 1]))
    message = _fails(check_ipa, lower_index_first, [(L, cap)])
    shown = checking.case(_shown(message))
    assert _shown(message) == "my_ipa case 0" and shown["L"].tolist() == L.tolist() and shown["capacity"].tolist() == [1, 1]

    fig7 = [np.array([[150.0, 5.0], [55.0, 20.0]]), np.array([[300.0, 4.0], [100.0, 5.0]])]
    ascending = raa_path(fig7)[0][::-1].copy()
    message = _fails(check_raa_front, lambda sets: ascending, [fig7])
    shown = checking.case(_shown(message))
    assert [s.tolist() for s in shown["pareto_sets"]] == [s.tolist() for s in fig7]


def test_lab05_priority_table_check_shows_the_worked_history():
    from cluster_sim.wing.scheduling.exercise import check_priority_table, worked_history

    def median_value_only(history, jobs):
        adhoc = history["kind"] == "adhoc"
        by_t = history[~adhoc].groupby("template")["agg_value"].median()
        by_u = history[adhoc].groupby("user")["agg_value"].median()
        return pd.Series({j: (by_u.get(u, 0.0) if k == "adhoc" else by_t.get(t, 0.0))
                          for j, t, k, u in zip(jobs["job"], jobs["template"], jobs["kind"], jobs["user"])})

    message = _fails(check_priority_table, median_value_only)
    shown = checking.case(_shown(message))
    history, jobs = worked_history()
    assert shown["history"].equals(history) and shown["jobs"].equals(jobs)


def test_lab10_release_rule_check_shows_the_job_it_asked_about():
    from cluster_sim.capstone.exercise import check_release_rule

    asked = _recording(lambda job, tokens, now: "both")  # not one of the allowed answers
    message = _fails(check_release_rule, asked)
    shown = checking.case(_shown(message))
    job, tokens, now = asked.last
    assert shown["job"].id == job.id and (shown["tokens"], shown["now"]) == (tokens, now)


def test_lab08_replay_check_shows_the_trace_it_replayed():
    from cluster_sim.rminer.traces import SHADOW_HAND_CASES, first_difference, replay_shadow

    hand, cap = SHADOW_HAND_CASES[1]
    expected = replay_shadow(hand, cap)
    yours = [int(v) + 1 for v in expected]  # off by one at every event
    message = _fails(first_difference, yours, expected, str, "event", inputs=lambda i: {"events": hand, "capacity": cap})
    assert message.startswith("event 0 of ")
    shown = checking.case(_shown(message))
    assert shown["events"] == list(hand) and np.array_equal(shown["capacity"], cap)


def test_the_replay_checks_in_the_exercises_name_their_inputs():
    """Labs 08 and 09 replay recorded events and decisions with first_difference: each call passes ``inputs=``,
    so its message shows the event's or decision's inputs with one call."""
    import ast
    from pathlib import Path

    import nbformat

    calls = []
    for path in sorted((Path(__file__).resolve().parents[1] / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and "first_difference(" in cell.source:
                tree = ast.parse(re.sub(r"^[ \t]*###.*$", "", cell.source, flags=re.M))
                calls += [(path.name, node.lineno, {k.arg for k in node.keywords}) for node in ast.walk(tree)
                          if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "first_difference"]
    assert len(calls) >= 4
    assert all("inputs" in keywords for _, _, keywords in calls), [c[:2] for c in calls if "inputs" not in c[2]]


def test_lab04_self_join_check_shows_the_log():
    from cluster_sim.wing.exercise import check_self_join

    nothing_found = _recording(lambda prov, window: pd.DataFrame({"job": [], "depOn": []}))
    message = _fails(check_self_join, nothing_found)
    assert "you miss (job, depOn)" in message
    shown = checking.case(_shown(message))
    prov, window = nothing_found.last
    assert shown["prov"].equals(prov) and shown["window"] == window
