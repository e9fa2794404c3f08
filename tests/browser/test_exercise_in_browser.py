"""Every lab's exercise in a real browser: from the workspace, a wrong answer, then a right one (issue 28).

``make exercise LAB=NN`` copies each lab's exercise into a workspace; one JupyterLab serves it and one Chromium
opens each copy in turn. For every lab the student types a wrong answer into one answer cell (the seeded
misconception of tests/notebooks/seeded_answers.py, a one-line edit of the solution; Lab 10's is a typo, which
fails at once where its misconception fails only after a minute of runs) and runs what the check needs: the
parameters cell, the imports cell (and, where a check reads them, the cells named in :data:`LABS`), the answer and
its check. The check cell shows one clear message (``CheckFailed: ...``: what differs, on which case, and the
``show_case(...)`` call that shows the case), not a traceback. Then the right answer (the solution's code): the
check cell says so. The student saves, and regenerating the exercise (what ``make exercises`` does) and
``make exercise`` again leave the saved workspace copy as it was.

Cheap on purpose: one JupyterLab and one Chromium for every lab, only the cells a check needs (no Run All: a
lab's runs and figures are tests/notebooks/' business), one kernel at a time.
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
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from .conftest import ROOT, _missing, student_lab

pytestmark = [pytest.mark.notebook, pytest.mark.xdist_group("browser")]

sys.path.insert(0, str(ROOT / "tests" / "notebooks"))
from seeded_answers import WRONG  # noqa: E402  (tests/notebooks is not a package)


@dataclass(frozen=True)
class Lab:
    """What the browser does in one lab's exercise."""

    answer: str     #: the grade id of the answer cell typed into (its wrong answer is WRONG[answer])
    check: str      #: the grade id of the check cell that grades it
    wrong: str      #: what the check's one message says on the wrong answer (a regex)
    right: str      #: what the check prints on the right answer (a regex)
    reads: tuple[str, ...] = ()  #: how other cells the check reads begin (beyond the parameters and imports)
    slip: tuple[str, str] | None = None  #: a wrong answer (old -> new in the solution) other than WRONG[answer]


LABS = {
    "00": Lab("best_fit", "check_best_fit", r"best_fit: case \d+ disagrees with the reference",
              r"best_fit: all \d+ cases agree with the reference"),
    "01": Lab("treeify_solution", "treeify_check", r"treeify: case \d+ \(.*\): .*you seem to take the first tied",
              r"treeify: all \d+ cases agree with the reference"),
    "02": Lab("over_allocation", "check_over_allocation", r"over_allocation: .*\n.*yours: .*expected .*\n.*cause: ",
              r"over_allocation: all \d+ cases agree"),
    "03": Lab("folded_load", "check_folded_load", r"period \d+, .*you averaged the instances",
              r"your folded load agrees on all \d+ cases"),
    "04": Lab("owl_weights", "check_owl_weights", r"owl_weights: on random DAG 0 .*1/N over the consumers",
              r"owl_weights: all \d+ random DAGs agree"),
    "05": Lab("wing_agg_priority", "check_table", r"wing_agg_priority: job \d+ .*not its value efficiency",
              r"wing_agg_priority: all \d+ jobs of the worked history agree"),
    "06": Lab("stageopt_06_my_ipa", "stageopt_06_check_library", r"my_ipa, case \d+: decision \d+ of \d+ differs",
              r"my_ipa: all \d+ cases agree"),
    "07": Lab("stageopt_07_my_raa_path", "stageopt_07_check_library", r"my_raa_path, case 0: .*ascending latency order",
              r"my_raa_path: all \d+ fronts agree", reads=("# the cases both checks use",)),
    "08": Lab("model", "check_model", r"shadow_ratio_model: case \d+ disagrees with the reference",
              r"shadow_ratio_model: all \d+ cases agree"),
    "09": Lab("traverse_order", "check_traverse_order", r"traverse_order \(hand cases\): case \d+ disagrees",
              r"traverse_order: all \d+ replayed decisions agree"),
    # the seeded naive rule fails only after the paired ablation (about a minute): a typo fails on the first call
    "10": Lab("my_release_rule", "check_release_rule", r"my_release_rule\(job \d+, .*\) returned 'organisation': allowed",
              r"my_release_rule: invariants hold after every event",
              slip=('return "organisations"', 'return "organisation"')),
}
EXERCISES = {lab: next((ROOT / "exercises").glob(f"{lab}_*.ipynb")).name for lab in LABS}
CHECK_TIMEOUT = 300  # seconds for a check's cells (the slowest, Lab 10's, replays a few short runs)


def test_every_lab_has_an_exercise_in_the_browser_test():
    assert sorted(LABS) == sorted(p.name[:2] for p in (ROOT / "exercises").glob("*.ipynb"))


def _solution(lab: str, grade_id: str) -> str:
    nb = nbformat.read(ROOT / "solutions" / EXERCISES[lab], as_version=4)
    source = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", source, flags=re.M)


def _wrong(lab: str, grade_id: str) -> str:
    right = _solution(lab, grade_id)
    old, new = LABS[lab].slip or WRONG[grade_id]
    assert old in right, f"{grade_id}: the seeded wrong answer's edit no longer applies to the solution"
    return right.replace(old, new)


def _cells(lab: str, home: Path) -> tuple[list[int], int, int]:
    """Indices of the cells to run before the answer, of the answer cell and of its check, in the workspace copy."""
    spec = LABS[lab]
    cells = nbformat.read(home / "workspace" / EXERCISES[lab], as_version=4).cells
    grade = [c.metadata.get("nbgrader", {}).get("grade_id") for c in cells]
    params = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    imports = next(i for i in range(params + 1, len(cells)) if cells[i].cell_type == "code")
    reads = [i for i, c in enumerate(cells) if c.cell_type == "code" and c.source.startswith(spec.reads)] \
        if spec.reads else []
    assert len(reads) == len(spec.reads), f"lab {lab}: the cells beginning {spec.reads} are not all there"
    return [params, imports, *reads], grade.index(spec.answer), grade.index(spec.check)


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


@pytest.mark.parametrize("lab", sorted(LABS))
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
        assert shown.startswith("CheckFailed: "), f"lab {lab}: the wrong answer's check shows\n{shown}"
        assert re.search(spec.wrong, shown, flags=re.S), \
            f"lab {lab}: the wrong answer's message does not say {spec.wrong!r}:\n{shown}"
        assert not re.search(r"Traceback|File \"|---->|Cell In\[", shown), f"lab {lab}: a traceback:\n{shown}"
        assert shown.count("CheckFailed") == 1, f"lab {lab}: more than one message:\n{shown}"
        assert re.search(r"\n  to look at it: from cluster_sim.checking import show_case; show_case\('[^']+'\)$", shown), \
            f"lab {lab}: the message names a case without the call that shows it:\n{shown}"
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
