"""Every lab's exercise as a student works it, in an in-process IPython shell (what a kernel runs), from a copy of
``exercises/``: the parameters and imports cells (and the cells the check reads, :data:`exercise_labs.LABS`), then
a wrong answer typed into one answer cell (the seeded misconception of seeded_answers.py, a one-line edit of the
solution) and its check: the check cell shows one clear message (``CheckFailed: ...``: what differs, on which case,
and the ``show_case(...)`` call that shows the case), not a traceback. Then the right answer: the check says so.

The output compared is what a kernel sends as the cell's error output: the lines IPython hands to
``_showtraceback``, the method ipykernel overrides to send them (cluster_sim.checking's handler goes through it).
In Chromium, tests/browser/test_exercise_in_browser.py shows on two labs what only a browser can: JupyterLab shows
that output as one message, and the workspace copy a student saved is kept by ``make exercises`` and
``make exercise``. Each lab here costs its imports and its check, where a browser costs a kernel and a page.
"""

from __future__ import annotations

import io
import re
import shutil
from contextlib import redirect_stderr, redirect_stdout

import nbformat
import pytest
from exercise_labs import EXERCISES, LABS, ROOT, cells, message_problems, solution, wrong
from IPython.core.interactiveshell import InteractiveShell

from cluster_sim import checking
from cluster_sim.ui.inprocess import _settings_restored

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_every_lab_has_its_exercise_worked_here():
    assert sorted(LABS) == sorted(p.name[:2] for p in (ROOT / "exercises").glob("*.ipynb"))


class Student:
    """An in-process shell that runs cells as a kernel does and keeps what each shows."""

    def __init__(self):
        self.shell = InteractiveShell.instance()
        checking.install(self.shell)  # what `import cluster_sim.checking` does in a kernel (once per process here)
        self.errors: list[str] = []
        # the error output a kernel sends: ipykernel overrides this method to send ``stb`` as the traceback
        self.shell._showtraceback = lambda etype, value, stb: self.errors.append(ANSI.sub("", "\n".join(stb)))

    def run(self, source: str) -> tuple[bool, str, str]:
        """(success, what the cell printed, its error output)."""
        self.errors.clear()
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            result = self.shell.run_cell(source)
        return result.success, out.getvalue().strip(), "\n".join(self.errors).strip()


@pytest.fixture
def student(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the workspace: a cell that writes a file writes it here, never in the repository
    with _settings_restored():
        try:
            yield Student()
        finally:
            InteractiveShell.clear_instance()


@pytest.mark.parametrize("lab", sorted(LABS))
def test_a_wrong_answer_shows_one_message_and_the_right_one_success(student, tmp_path, lab):
    spec = LABS[lab]
    exercise = tmp_path / EXERCISES[lab]
    shutil.copy(ROOT / "exercises" / EXERCISES[lab], exercise)  # what `make exercise` copies
    setup, answer, check = cells(lab, exercise)
    nb = nbformat.read(exercise, as_version=4).cells
    for i in setup:
        ok, _, error = student.run(nb[i].source)
        assert ok, f"lab {lab}: cell {i}, which the check needs, fails:\n{error}"

    ok, _, error = student.run(wrong(lab, spec.answer))
    assert ok, f"lab {lab}: the wrong answer's cell itself fails:\n{error}"
    ok, printed, shown = student.run(nb[check].source)
    assert not ok, f"lab {lab}: the check passed the wrong answer:\n{printed}"
    problems = message_problems(lab, shown)
    assert not problems, "\n".join(problems)

    ok, _, error = student.run(solution(lab, spec.answer))
    assert ok, f"lab {lab}: the right answer's cell fails:\n{error}"
    ok, printed, error = student.run(nb[check].source)
    assert ok, f"lab {lab}: the check fails the right answer:\n{error}"
    assert re.search(spec.right, printed, flags=re.M), f"lab {lab}: the right answer's check prints\n{printed}"


def test_the_message_check_catches_a_traceback_and_a_second_message():
    good = ("CheckFailed: owl_weights: on random DAG 0 you gave 1/N over the consumers\n"
            "  to look at it: from cluster_sim.checking import show_case; show_case('random DAG 0')")
    assert message_problems("04", good) == []
    traceback = "Traceback (most recent call last):\n  File \"<ipython-input-1>\", line 1\n" + good
    assert any("does not start with" in p for p in message_problems("04", traceback))
    assert any("shows a traceback" in p for p in message_problems("04", traceback))
    assert any("more than one message" in p for p in message_problems("04", good + "\nCheckFailed: again"))
    assert any("without the call" in p for p in message_problems("04", good.splitlines()[0]))
