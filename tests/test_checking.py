"""The exercise checks grade the student's code, not the library's (issue 29, item 1).

First the mechanism (:func:`cluster_sim.checking.forbidden`, ``call_student(forbid=, using=)``): every path to
a forbidden reference is refused while the student's function runs, and nothing else is. Then, per lab, a
one-line delegation to the library's reference through that lab's own check functions: it fails with the
message that says so (the nbgrader round trip in tests/notebooks/test_nbgrader.py grades the same through the
notebooks' check cells).

Then what a student reads when a check fails: one clear message, and a case a message names can be looked at.

The in-process IPython shell here is what a kernel runs; tests/notebooks/test_check_messages.py shows the same
through papermill and nbgrader's autograder (the cell still fails there).
"""

from __future__ import annotations

import functools
import io
import re
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from cluster_sim import checking
from cluster_sim.checking import (COPIED, DELEGATED, CheckFailed, Copied, Delegated, call_student, check_cases, forbidden,
                                  show_case, using_references)
from cluster_sim.claims import ClaimFailed
from cluster_sim.predict import PredictionMissed
from cluster_sim.wing.exercise import check_owl_weights


def _reference(x):
    return 2 * x


def _library_helper(x):          # a library function that uses the reference: no way around the trap
    return _reference(x)


REGISTRY = {"double": _reference}


@pytest.mark.parametrize("student", [
    lambda x: _reference(x),                              # a direct call
    lambda x: REGISTRY["double"](x),                      # through a registry
    lambda x: functools.partial(_reference)(x),           # through a partial
    lambda x: _library_helper(x),                         # through a library helper
    lambda x: list(map(_reference, [x]))[0],              # called by a builtin
], ids=["direct", "registry", "partial", "helper", "builtin"])
def test_every_path_to_a_forbidden_reference_fails_with_the_message(student):
    with pytest.raises(Delegated, match="double calls the library's .*_reference") as err:
        call_student(student, 3, name="double", forbid=_reference)
    assert DELEGATED in str(err.value)
    assert isinstance(err.value, AssertionError)       # nbgrader scores the cell 0


def test_a_delegation_the_student_catches_still_fails():
    def hides_it(x):
        try:
            return _reference(x)
        except Exception:  # noqa: BLE001 - what a student might write
            return 2 * x

    with pytest.raises(Delegated, match="hides_it calls the library's"):
        call_student(hides_it, 3, forbid=_reference)


def test_the_reference_is_free_outside_the_students_call_and_for_the_check():
    assert call_student(lambda x: x + x, 3, forbid=_reference) == 6
    assert _reference(3) == 6 and _library_helper(3) == 6          # afterwards: untouched
    assert check_cases(lambda x: x + x, _reference, [((k,), {}) for k in range(5)], name="double").endswith(
        "all 5 cases agree with the reference")


def test_forbidding_nests_and_a_wrapped_reference_is_forbidden_through_its_wrapper():
    @functools.wraps(_reference)
    def wrapper(x):
        return _reference(x)

    def inner_calls_the_wrapped_function():
        with forbidden(wrapper, student="inner"):
            return _reference(1)

    def outer(call_helper):
        with forbidden(_library_helper, student="outer"):
            assert _reference(1) == 2                          # only the helper is forbidden here
            with pytest.raises(Delegated, match="inner"):
                inner_calls_the_wrapped_function()              # the wrapped function is forbidden too
            assert _reference(1) == 2                          # the inner scope ended: allowed again
            return _library_helper(1) if call_helper else 0

    assert outer(call_helper=False) == 0
    with pytest.raises(Delegated, match="outer"):
        outer(call_helper=True)
    assert _library_helper(1) == 2


def test_a_class_is_forbidden_by_its_methods():
    class Meter:
        def __init__(self):
            self.n = 0

    def builds_one():
        with forbidden(Meter, student="yours"):
            Meter()

    with pytest.raises(Delegated, match="yours calls the library's .*Meter"):
        builds_one()


def test_forbid_refuses_what_has_no_python_code():
    with pytest.raises(ValueError, match="forbid: .*len.*allowed: Python functions"):
        with forbidden(len):
            pass


def test_using_hands_the_students_function_the_librarys_other_answers():
    namespace = {}
    exec("def twice(x):\n    return 3 * x\n\ndef quadruple(x):\n    return twice(twice(x))\n", namespace)
    quadruple = namespace["quadruple"]
    assert quadruple(1) == 9                                            # the student's wrong twice
    assert call_student(quadruple, 1, using={"twice": lambda x: x + x}) == 4
    assert quadruple(1) == 9                                            # restored
    with pytest.raises(ValueError, match="using_references: twice=3"):
        with using_references(quadruple, {"twice": 3}):
            pass


# ---- per lab: a one-line delegation to the reference fails that lab's checks -----------------------------------
def _delegating(check, message):
    with pytest.raises(Delegated, match=message):
        check()


def pasted(reference, name: str, ns: dict | None = None):
    """``reference``'s source pasted into a notebook as ``name``: its docstring dropped, a comment added, every local
    name changed, compiled as a cell (the namespace holds what the module's globals held, as a student's imports
    would)."""
    import ast
    import inspect
    import textwrap

    codes, names = [reference.__code__], set()
    while codes:
        c = codes.pop()
        names |= set(c.co_varnames) | set(c.co_cellvars) | set(c.co_freevars)
        codes += [k for k in c.co_consts if hasattr(k, "co_code")]
    tree = ast.parse(textwrap.dedent(inspect.getsource(reference)))
    fn = tree.body[0]
    fn.name, fn.decorator_list = name, []
    if isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant):
        fn.body = fn.body[1:]
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = f"my_{node.id}"
        elif isinstance(node, ast.arg) and node.arg in names:
            node.arg = f"my_{node.arg}"
        elif isinstance(node, ast.FunctionDef) and node is not fn and node.name in names:
            node.name = f"my_{node.name}"
    source = "# my answer\n" + ast.unparse(tree)
    ns = ns if ns is not None else {**vars(inspect.getmodule(reference)), "__name__": "__main__"}
    exec(compile(source, "<ipython-input-7>", "exec"), ns)
    return ns[name]


def test_a_pasted_reference_fails_as_a_copy():
    """Issue 29: the reference's source pasted into the notebook (renamed, locals renamed, no docstring) scored full
    marks; it fails, before it runs, with a message saying why."""
    from cluster_sim.wing.exercise import check_extend_reach
    from cluster_sim.wing.multihop import extend_reach
    from cluster_sim.wing.scheduling.exercise import check_priority_table
    from cluster_sim.wing.scheduling.workload import value_efficiency

    mine = pasted(value_efficiency, "wing_agg_priority")
    with pytest.raises(Copied, match="wing_agg_priority is a copy of the library's "
                                     "cluster_sim.wing.scheduling.workload.value_efficiency") as err:
        check_priority_table(mine)
    assert COPIED in str(err.value) and isinstance(err.value, Delegated)
    with pytest.raises(Copied, match="extend_reach is a copy of the library's cluster_sim.wing.multihop.extend_reach"):
        check_extend_reach(pasted(extend_reach, "extend_reach"))


def test_a_student_function_calling_a_pasted_reference_fails_as_a_copy():
    from cluster_sim.wing.scheduling.exercise import check_priority_table
    from cluster_sim.wing.scheduling.workload import value_efficiency

    ns = {**vars(__import__("cluster_sim.wing.scheduling.workload", fromlist=["x"])), "__name__": "__main__"}
    pasted(value_efficiency, "efficiency_from_the_library", ns)
    exec(compile("def wing_agg_priority(history, jobs):\n    return efficiency_from_the_library(history, jobs)\n",
                 "<ipython-input-8>", "exec"), ns)
    with pytest.raises(Copied, match="wing_agg_priority \\(through efficiency_from_the_library, which it calls\\) is a "
                                     "copy of the library's"):
        check_priority_table(ns["wing_agg_priority"])


def test_an_answer_written_independently_is_not_a_copy():
    """The model answers of solutions/ are not copies (the nbgrader round trip grades them full); nor is a short
    reference's natural one-liner compared (too short to tell a copy from an answer)."""
    from cluster_sim.checking import MIN_COPY_INSTRUCTIONS, _fingerprint, copied_from
    from cluster_sim.wing.multihop import owl_weights

    assert len(_fingerprint(owl_weights.__code__)) < MIN_COPY_INSTRUCTIONS
    assert copied_from(pasted(owl_weights, "owl_weights"), [owl_weights]) is None
    assert call_student(lambda x: x + x, 3, forbid=_reference) == 6


def test_lab00_best_fit_and_utilisation():
    from cluster_sim.engine import placement
    from cluster_sim.engine.metrics import work_accounting

    cases = [((np.array([[4, 4], [1, 1]]), (1, 1)), {})]
    _delegating(lambda: check_cases(lambda free, d, rng=None: placement.best_fit(free, d), placement.best_fit,
                                    cases, name="best_fit"), "best_fit calls the library's .*best_fit")
    _delegating(lambda: call_student(lambda *a: work_accounting({}, 1, 1, [1])["done"], name="utilisation_from_tasks",
                                     forbid=work_accounting), "work_accounting")


def test_lab01_treeify_and_remaining_peak():
    from cluster_sim.shaper import remaining_peak, treeify
    from cluster_sim.shaper.exercise import check_remaining_peak, check_treeify
    from cluster_sim.shaper.peak import tree_widths

    _delegating(lambda: check_treeify(lambda g, rng: treeify(g, rng)), "treeify calls the library's .*treeify")
    _delegating(lambda: check_remaining_peak(lambda t, c: remaining_peak(t, c)), "remaining_peak calls")
    _delegating(lambda: check_remaining_peak(lambda t, c: sum(tree_widths(t, c))), "tree_widths")


def test_lab02_penalty_debt_and_lp_rows():
    from cluster_sim.morpheus.slo.lp import debt_constraints
    from cluster_sim.morpheus.slo.penalty import debt, penalty
    from cluster_sim.morpheus.slo.penalty_cases import (
        check_debt_rows, check_debt_table, check_over_allocation, check_penalty,
    )

    _delegating(lambda: check_over_allocation(lambda s, runs: penalty(s, runs, 1.0).over), "over_allocation calls")
    _delegating(lambda: check_debt_table(lambda s, runs: debt(s, runs)), "debt_table calls the library's .*debt")
    _delegating(lambda: check_penalty(lambda s, runs, a: penalty(s, runs, a).objective), "J calls the library's")
    _delegating(lambda: check_debt_rows(lambda runs, layout: debt_constraints(runs, layout)), "debt_rows calls")


def test_lab03_stage_interval_and_place_stage_gangs():
    from cluster_sim.morpheus.packing.stages import place_stage_gangs, stage_interval
    from cluster_sim.morpheus.packing.lowcost_cases import check_packing

    _delegating(lambda: check_packing(lambda *a: stage_interval(*a), place_stage_gangs, seeds=(0,)),
                "calls the library's .*stage_interval")
    _delegating(lambda: check_packing(stage_interval, lambda *a: place_stage_gangs(*a), seeds=(0,)),
                "calls the library's .*place_stage_gangs")


def test_lab04_weights_extend_and_downstream_value():
    from cluster_sim.wing import multi_hop, owl_value
    from cluster_sim.wing.exercise import check_extend_reach, check_owl_value, check_owl_weights
    from cluster_sim.wing.multihop import extend_reach, owl_weights

    _delegating(lambda: check_owl_weights(lambda d: owl_weights(d)), "owl_weights calls")
    _delegating(lambda: check_extend_reach(lambda a, b: extend_reach(a, b)), "extend_reach calls")
    # aggregate_value(table, k) cannot call owl_value without the deps; a student who rebuilds them is caught too
    rebuilt = lambda table, k: owl_value(table[table["agg"] > 0][["job", "depOn"]].drop_duplicates(), k)  # noqa: E731
    _delegating(lambda: check_owl_value(lambda deps, k: rebuilt(multi_hop(deps).table, k), name="aggregate_value"),
                "aggregate_value calls the library's .*owl_value")


def test_lab05_wing_agg_priority():
    from cluster_sim.wing.scheduling import check_priority_table
    from cluster_sim.wing.scheduling.workload import value_efficiency

    _delegating(lambda: check_priority_table(lambda h, j: value_efficiency(h, j)),
                "wing_agg_priority calls the library's .*value_efficiency")


def test_lab06_ipa_and_its_optimum():
    from cluster_sim.stageopt import ipa_placement
    from cluster_sim.stageopt.checks import check_ipa, check_ipa_optimal
    from cluster_sim.stageopt.placement import exact_min_max_placement

    case = [(np.array([[4.0, 5.0], [4.0, 9.0]]), np.array([1, 1]))]
    _delegating(lambda: check_ipa(lambda L, c: ipa_placement(L, c), case), "my_ipa calls the library's .*ipa")
    _delegating(lambda: check_ipa_optimal(lambda L, c: exact_min_max_placement(L, c)[0], case),
                "exact_min_max_placement")


def test_lab07_raa_path_and_brute_force():
    from cluster_sim.stageopt.checks import check_raa_front
    from cluster_sim.stageopt.raa import brute_force_stage_pareto, raa_path

    case = [[np.array([[150.0, 5.0], [55.0, 20.0]]), np.array([[300.0, 4.0], [100.0, 5.0]])]]
    _delegating(lambda: check_raa_front(lambda sets: raa_path(sets)[0], case), "my_raa_path calls .*raa_path")
    _delegating(lambda: check_raa_front(lambda sets: brute_force_stage_pareto(sets)[0], case, brute_force=True),
                "brute_force_stage_pareto")


def test_lab08_model_shadow_and_time_average():
    from cluster_sim.rminer import theory_shadow_ratio
    from cluster_sim.rminer.measure import ShadowMeter
    from cluster_sim.rminer.traces import SHADOW_HAND_CASES, replay_shadow, time_average

    _delegating(lambda: check_cases(lambda d, l: theory_shadow_ratio(d, l), theory_shadow_ratio, [((0.3, 5.0), {})],
                                    name="shadow_ratio_model"), "shadow_ratio_model calls")
    hand, cap = SHADOW_HAND_CASES[0]
    _delegating(lambda: call_student(lambda e, c: replay_shadow(e, c), hand, cap, name="shadow_after_events",
                                     forbid=(replay_shadow, ShadowMeter)), "shadow_after_events calls .*replay_shadow")
    _delegating(lambda: check_cases(lambda e, v, t: time_average(e, v, t), time_average,
                                    [(([(1.0, "release", 0, (1, 0))], [2], 4.0), {})], name="time_average_of_steps"),
                "time_average_of_steps calls")


def test_lab09_traverse_order_and_rm_choice():
    from cluster_sim.rminer import rm_choice, shadow_order
    from cluster_sim.rminer.traces import CHOICE_HAND_CASES, reference_traverse_order

    shadow, free = np.array([[2, 1], [6, 1]]), np.array([[10, 4], [7, 2]])
    _delegating(lambda: check_cases(lambda s, f, m: list(shadow_order(s, f, m)), reference_traverse_order,
                                    [((shadow, free, "safe"), {})], name="traverse_order", forbid=[shadow_order]),
                "traverse_order calls the library's .*shadow_order")
    from cluster_sim.rminer.baseline import check_gain_split, gain_split

    _delegating(lambda: check_gain_split(lambda n, p, r: gain_split(n, p, r)), "gain_split calls the library's")
    cases = [((s, f, np.array(d), m), {}) for s, f, d, m in CHOICE_HAND_CASES]
    _delegating(lambda: check_cases(lambda *a: rm_choice(*a), rm_choice, cases, name="rm_choose"),
                "rm_choose calls the library's .*rm_choice")
    # rm_choose may use the library's order: that is the other exercise's answer, handed to it by the check
    namespace = {"np": np}
    exec("def traverse_order(shadow, free, mode):\n    return []   # wrong\n\n"
         "def rm_choose(shadow, free, demand, mode):\n"
         "    for m in traverse_order(shadow, free, mode):\n"
         "        if all(shadow[m] >= demand):\n            return int(m), 'shadow'\n"
         "    for m in range(len(free)):\n"
         "        if all(free[m] >= demand):\n            return int(m), 'normal'\n"
         "    return -1, 'none'\n", namespace)
    assert "agree" in check_cases(namespace["rm_choose"], rm_choice, cases, name="rm_choose",
                                  using={"traverse_order": reference_traverse_order})
    with pytest.raises(AssertionError, match="disagrees"):
        check_cases(namespace["rm_choose"], rm_choice, cases, name="rm_choose")


def test_lab02_J_is_graded_alone():
    """A wrong debt_table costs its own check only: the J check hands the student's J the library's."""
    from cluster_sim.morpheus.slo.penalty_cases import check_penalty

    namespace = {"np": np}
    exec("def over_allocation(s, runs):\n    return float(np.maximum(s[None, :] - runs, 0.0).sum() / runs.shape[0])\n\n"
         "def debt_table(s, runs):\n    return np.cumsum(runs - s[None, :], axis=1)   # credit: wrong\n\n"
         "def J(s, runs, alpha):\n"
         "    return alpha * over_allocation(s, runs) + (1 - alpha) * float(debt_table(s, runs)[:, -1].mean())\n",
         namespace)
    assert "agree" in check_penalty(namespace["J"])
    assert pd.notna(namespace["debt_table"](np.ones(2), np.zeros((1, 2)))[0, 0])   # the student's own is back


def test_the_trap_costs_nothing_once_the_check_is_over():
    """No tool callback stays registered on a code object after the student's call (counted, not timed)."""
    call_student(lambda x: x, 1, forbid=_reference)
    assert not checking._TRAP.active


# ---- what a failed check shows ----------------------------------------------------------------------------------
@pytest.fixture
def shell():
    shell = InteractiveShell.instance()
    try:
        yield shell
    finally:
        InteractiveShell.clear_instance()


def run(shell, source: str):
    out = io.StringIO()
    with redirect_stdout(out):
        result = shell.run_cell(source)
    return result, re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())  # without the colours


def test_the_failures_a_student_reads_are_check_failures():
    assert issubclass(ClaimFailed, CheckFailed) and issubclass(PredictionMissed, CheckFailed)
    assert issubclass(CheckFailed, AssertionError)  # pytest.raises(AssertionError) and nbgrader see a failure


def test_a_failed_check_in_ipython_is_its_message_and_still_an_error(shell):
    assert checking.install(shell)
    shell.user_ns["check_cases"] = check_cases
    result, shown = run(shell, "def double(x):\n    return x + 1\n"
                               "check_cases(double, lambda x: 2 * x, [((1,), {}), ((5,), {})])")
    assert not result.success and isinstance(result.error_in_exec, CheckFailed)
    assert "double: case 1 disagrees with the reference" in shown and "expected: 10" in shown
    # no traceback: no header, no frames, no checker source
    assert "Traceback" not in shown and "File " not in shown and "---->" not in shown and "raise " not in shown
    assert shown.strip().splitlines()[0].endswith("CheckFailed: double: case 1 disagrees with the reference.")


def test_a_plain_assertion_keeps_its_traceback(shell):
    checking.install(shell)
    result, shown = run(shell, "def mine():\n    assert 1 == 2, 'my own assert'\nmine()")
    assert not result.success and "my own assert" in shown
    assert "Traceback" in shown and "mine()" in shown


def test_without_ipython_install_does_nothing():
    InteractiveShell.clear_instance()
    assert checking.install() is False


def test_a_named_case_is_shown_by_the_call_its_message_gives():
    def downstream(deps):  # the misconception: 1/N over the consumers of depOn
        return 1.0 / deps.groupby("depOn")["job"].transform("size")

    with pytest.raises(CheckFailed) as failed:
        check_owl_weights(downstream)
    message = str(failed.value)
    call = "from cluster_sim.checking import show_case; show_case('random DAG 0')"
    assert message.splitlines()[-1].strip() == "to look at it: " + call
    shown = io.StringIO()
    with redirect_stdout(shown):  # outside IPython, display prints
        exec(call, {})
    assert shown.getvalue().startswith("random DAG 0:\ndeps:\n")
    deps = checking.case("random DAG 0")["deps"]
    assert isinstance(deps, pd.DataFrame) and deps.values.tolist() == [[1, 0], [2, 0], [3, 0], [5, 2], [5, 3]]
    deps.loc[0, "job"] = 99  # a copy: editing it changes nothing a later look shows
    assert checking.case("random DAG 0")["deps"].loc[0, "job"] == 1


def test_an_unknown_case_is_refused_with_the_names_there_are():
    checking.name_case("random DAG 0", {"deps": pd.DataFrame()})
    with pytest.raises(ValueError, match=r"no case is named 'random DAG 77'; the cases checks named: .*'random DAG 0'"):
        show_case("random DAG 77")
    with pytest.raises(ValueError, match="name is ''"):
        checking.name_case("", 1)
