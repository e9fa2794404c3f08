"""A student's exercise in a real browser: from the workspace, a wrong answer, then a right one (issue 28).

``make exercise LAB=00`` copies the exercise into a workspace; JupyterLab opens it from there; the student types
a wrong ``best_fit`` (first fit) and runs the notebook: the check cell shows one clear message (what differs,
on which case), not a traceback; then the right one: the check cell says every case agrees. The student saves,
and regenerating the exercises (what ``make exercises`` does) leaves the saved workspace copy as it was.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from .conftest import ROOT, STUDENT_ENV, _free_port, _missing, _serving, _settings

pytestmark = [pytest.mark.notebook, pytest.mark.xdist_group("browser")]

LAB = "00"
EXERCISE = next((ROOT / "exercises").glob(f"{LAB}_*.ipynb")).name
WRONG = ("def best_fit(free, demand, rng=None):\n"
         "    fits = (np.asarray(free) >= np.asarray(demand)).all(axis=1)\n"
         "    return int(fits.argmax()) if fits.any() else -1")


def _cell_index(grade_id: str) -> int:
    nb = nbformat.read(ROOT / "exercises" / EXERCISE, as_version=4)
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _solution(grade_id: str) -> str:
    nb = nbformat.read(ROOT / "solutions" / EXERCISE, as_version=4)
    source = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", source, flags=re.M)


@pytest.fixture(scope="module")
def workspace_lab(tmp_path_factory):
    """``(base_url, home)``: a JupyterLab on a folder where ``make exercise LAB=00`` made the workspace copy."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("student")
    (home / "exercises").mkdir()
    (home / "exercises" / EXERCISE).write_bytes((ROOT / "exercises" / EXERCISE).read_bytes())
    made = subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "exercise", f"LAB={LAB}"], cwd=home,
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0 and (home / "workspace" / EXERCISE).is_file(), made.stdout + made.stderr
    assert f"workspace/{EXERCISE}" in made.stdout
    _settings(home / "settings")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               **STUDENT_ENV)
    base = f"http://127.0.0.1:{_free_port()}"
    args = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={base.rsplit(':', 1)[1]}",
            "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={home}",
            "--ServerApp.disable_check_xsrf=True", "--LabApp.news_url=", "--allow-root"]
    with _serving("jupyterlab", args, home, env, f"{base}/api/status"):
        yield base, home


def _type_into_cell(page, index: int, source: str) -> None:
    editor = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)  # as pasted: no auto-indent in between


def _run_all_and_read(page, index: int) -> str:
    from .test_notebooks_in_browser import run_all

    run_all(page)
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea").inner_text()


def test_a_wrong_answer_reads_one_message_a_right_one_success_and_the_workspace_is_kept(browser, workspace_lab):
    from .test_notebooks_in_browser import open_notebook

    base, home = workspace_lab
    answer, check = _cell_index("best_fit"), _cell_index("check_best_fit")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{base}/lab/workspaces/ex/tree/workspace/{EXERCISE}?reset")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=90_000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]"
            ".some(e => /cluster_sim\\) \\| Idle/.test(e.textContent))", timeout=90_000, polling=250)

        _type_into_cell(page, answer, WRONG)
        shown = _run_all_and_read(page, check)
        assert "best_fit: case" in shown and "disagrees with the reference" in shown, shown
        assert "Traceback" not in shown and "File " not in shown and "---->" not in shown, shown
        assert len(shown.strip().splitlines()) <= 6, f"more than one message:\n{shown}"

        _type_into_cell(page, answer, _solution("best_fit"))
        shown = _run_all_and_read(page, check)
        assert re.search(r"best_fit: all \d+ cases agree with the reference", shown), shown
        assert "Error" not in shown and "Traceback" not in shown, shown

        page.keyboard.press("Control+s")
        page.wait_for_timeout(2000)
    finally:
        context.close()
    saved = home / "workspace" / EXERCISE
    assert "leftover" in saved.read_text(), "the right answer was not saved into the workspace copy"
    before = hashlib.sha256(saved.read_bytes()).hexdigest()

    # what `make exercises` runs, on this folder's exercises/: the generated copies only
    from cluster_sim import exercises

    exercises.generate(exercises=home / "exercises")
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == before
    again = subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "exercise", f"LAB={LAB}"], cwd=home,
                           capture_output=True, text=True, timeout=60)
    assert "your work is kept" in again.stdout and hashlib.sha256(saved.read_bytes()).hexdigest() == before
