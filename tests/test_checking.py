"""A failed check reads as one clear message, and a case a message names can be looked at.

The in-process IPython shell here is what a kernel runs; tests/notebooks/test_check_messages.py shows the same
through papermill and nbgrader's autograder (the cell still fails there).
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from cluster_sim import checking
from cluster_sim.checking import CheckFailed, check_cases, show_case
from cluster_sim.claims import ClaimFailed
from cluster_sim.predict import PredictionMissed
from cluster_sim.wing.exercise import check_owl_weights


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
