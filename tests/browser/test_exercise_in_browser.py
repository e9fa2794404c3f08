"""A lab's exercise in a real browser: from the workspace, a wrong answer, then a right one (issue 28).

``make exercise LAB=NN`` copies each lab's exercise into a workspace; one JupyterLab serves it and one Chromium
opens the copies of :data:`BROWSER_LABS` in turn. The student types a wrong answer into one answer cell (the seeded
misconception of tests/notebooks/seeded_answers.py, a one-line edit of the solution) and runs what the check needs:
the parameters cell, the imports cell (and the cells named in ``exercise_labs.LABS``), the answer and its check.
JupyterLab shows the check cell's output as one clear message (``CheckFailed: ...``: what differs, on which case,
and the ``show_case(...)`` call that shows the case), not a traceback. Then the right answer (the solution's code):
the check cell says so. The student saves, and regenerating the exercise (what ``make exercises`` does) and
``make exercise`` again leave the saved workspace copy as it was.

Every lab's exercise is worked the same way, with the same answers and the same expected messages, in an in-process
shell (tests/notebooks/test_exercise_messages.py: the output compared is what a kernel sends); a browser adds what
it alone shows, which is the same for every lab (the same ``CheckFailed`` output, the same saving and copying), so
it runs two labs, not eleven (each a kernel, its imports and a page: about 10 s at load 2).

Cheap on purpose: one JupyterLab and one Chromium, only the cells a check needs (no Run All: a lab's runs and
figures are tests/notebooks/' business), one kernel at a time.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from .conftest import ROOT, _missing, student_lab

pytestmark = [pytest.mark.notebook, pytest.mark.xdist_group("browser")]

sys.path.insert(0, str(ROOT / "tests" / "notebooks"))
from exercise_labs import EXERCISES, LABS, message_problems  # noqa: E402  (tests/notebooks is not a package)
from exercise_labs import cells as exercise_cells  # noqa: E402
from exercise_labs import solution as _solution  # noqa: E402
from exercise_labs import wrong as _wrong  # noqa: E402


#: the labs worked in the browser: a check of generated cases (Lab 00) and one of random DAGs whose message names a
#: case (Lab 04), both quick; every lab is worked in-process (tests/notebooks/test_exercise_messages.py)
BROWSER_LABS = ("00", "04")
CHECK_TIMEOUT = 300  # seconds for a check's cells


def test_the_browser_labs_are_labs_with_an_exercise():
    assert set(BROWSER_LABS) <= set(LABS) and sorted(LABS) == sorted(EXERCISES)


def _cells(lab: str, home: Path) -> tuple[list[int], int, int]:
    """Indices of the cells to run before the answer, of the answer cell and of its check, in the workspace copy."""
    return exercise_cells(lab, home / "workspace" / EXERCISES[lab])


@pytest.fixture(scope="module")
def workspace_lab(tmp_path_factory):
    """``(base_url, home)``: a JupyterLab on a folder where ``make exercise LAB=NN`` made every lab's workspace copy."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("student")
    (home / "exercises").mkdir()
    for lab, name in EXERCISES.items():
        (home / "exercises" / name).write_bytes((ROOT / "exercises" / name).read_bytes())
        made = subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "exercise", f"LAB={lab}"], cwd=home,
                              capture_output=True, text=True, timeout=60)
        assert made.returncode == 0 and (home / "workspace" / name).is_file(), made.stdout + made.stderr
        assert f"workspace/{name}" in made.stdout
    with student_lab(home) as base:
        yield base, home


@pytest.fixture(scope="module")
def student(browser):
    """One browser context for every lab (JupyterLab's assets load once, then come from its cache); a page per lab."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


def _shut_down_kernels(base: str) -> None:
    """One lab's kernel at a time: eleven idle kernels would hold gigabytes."""
    for kernel in json.load(urllib.request.urlopen(f"{base}/api/kernels", timeout=10)):
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels/{kernel['id']}", method="DELETE"), timeout=30)


def _cell(page, index: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _type_into_cell(page, index: int, source: str) -> None:
    _cell(page, index).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)  # as pasted: no auto-indent in between
    page.keyboard.press("Escape")


def _prompt(page, index: int) -> str:
    return _cell(page, index).locator(".jp-InputPrompt").inner_text().strip()


def _run(page, indices: list[int]) -> None:
    """Run these cells as a student does (select one, Ctrl+Enter, the next...), and wait until the last has run."""
    last = indices[-1]
    before = _prompt(page, last)
    for index in indices:
        _cell(page, index).locator(".jp-InputPrompt").click()
        page.keyboard.press("Control+Enter")
    # done when the last cell shows a new execution count and nothing is queued or running, or when an error
    # has stopped the queue (the last cell then shows no count: the assertions below say which cell failed)
    page.wait_for_function(
        """([cell, before]) => {
            const busy = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                .some(p => p.textContent.includes('*'));
            const shown = cell.querySelector('.jp-InputPrompt').textContent.trim();
            window.__csIdle = busy ? 0 : (window.__csIdle || 0) + 1;
            return !busy && ((/\\[\\d+\\]/.test(shown) && shown !== before) || window.__csIdle >= 6);
        }""", arg=[_cell(page, last).element_handle(), before], timeout=CHECK_TIMEOUT * 1000, polling=500)


def _output(page, index: int) -> str:
    """The cell's output once it has one: the execution count can show before the output arrives (they come on
    different channels of the kernel), and every check this test runs prints or fails."""
    cell = _cell(page, index)
    page.wait_for_function("cell => (cell.querySelector('.jp-OutputArea')?.innerText || '').trim().length > 0",
                           arg=cell.element_handle(), timeout=30_000, polling=250)
    return cell.locator(".jp-OutputArea").inner_text().strip()


def _errors(page, indices: list[int]) -> list[str]:
    out = []
    for index in indices:
        error = _cell(page, index).locator("[data-mime-type='application/vnd.jupyter.error']")
        if error.count():
            out.append(f"cell {index}: {error.first.inner_text()[:1000]}")
    return out


@pytest.mark.parametrize("lab", BROWSER_LABS)
def test_a_wrong_answer_reads_one_message_a_right_one_success_and_the_workspace_is_kept(student, workspace_lab, report,
                                                                                        tmp_path, lab):
    base, home = workspace_lab
    spec, name = LABS[lab], EXERCISES[lab]
    setup, answer, check = _cells(lab, home)
    saved = home / "workspace" / name
    first = saved.read_bytes()
    page = student.new_page()
    try:
        t0 = time.perf_counter()
        page.goto(f"{base}/lab/workspaces/ex{lab}/tree/workspace/{name}?reset")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=90_000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]"
            ".some(e => /cluster_sim\\) \\| Idle/.test(e.textContent))", timeout=90_000, polling=250)
        report(f"workspace/{name}", "opened, kernel idle", "", time.perf_counter() - t0, "")

        t0 = time.perf_counter()
        _type_into_cell(page, answer, _wrong(lab, spec.answer))
        _run(page, [*setup, answer, check])
        assert not _errors(page, [*setup, answer]), f"lab {lab}: " + "\n".join(_errors(page, [*setup, answer]))
        shown = _output(page, check)
        problems = message_problems(lab, shown)
        assert not problems, "\n".join(problems)
        report(f"workspace/{name}", "wrong answer, its cells run", spec.check, time.perf_counter() - t0, "one message")

        t0 = time.perf_counter()
        right = _solution(lab, spec.answer)
        _type_into_cell(page, answer, right)
        _run(page, [answer, check])
        shown = _output(page, check)
        assert not _errors(page, [answer, check]), f"lab {lab}: the right answer fails:\n{shown}"
        assert re.search(spec.right, shown, flags=re.M), f"lab {lab}: the right answer's check shows\n{shown}"
        report(f"workspace/{name}", "right answer, re-run", spec.check, time.perf_counter() - t0, "success")

        t0 = time.perf_counter()
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 30
        while saved.read_bytes() == first and time.monotonic() < deadline:
            page.wait_for_timeout(200)
    finally:
        page.close()  # without its beforeunload prompt: a failed test may leave the notebook unsaved
        _shut_down_kernels(base)
    kept = nbformat.read(saved, as_version=4).cells[answer].source
    assert kept == right, f"lab {lab}: the right answer was not saved into the workspace copy"
    before = hashlib.sha256(saved.read_bytes()).hexdigest()

    # what `make exercises` does for this lab, on this folder's exercises/ (made stale first, so it writes): it
    # writes the generated copy only, and `make exercise` keeps the student's
    from cluster_sim import exercises

    (tmp_path / "solutions").mkdir()
    shutil.copy(ROOT / "solutions" / name, tmp_path / "solutions" / name)
    (home / "exercises" / name).write_text("{}")
    written = exercises.generate(solutions=tmp_path / "solutions", exercises=home / "exercises", prune=False)
    assert written == [home / "exercises" / name]
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == before
    again = subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "exercise", f"LAB={lab}"], cwd=home,
                           capture_output=True, text=True, timeout=60)
    assert "your work is kept" in again.stdout and hashlib.sha256(saved.read_bytes()).hexdigest() == before
    report(f"workspace/{name}", "saved; make exercises, make exercise", "", time.perf_counter() - t0, "workspace kept")
