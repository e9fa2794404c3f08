"""The solutions as an instructor uses them: a throw-away nbgrader course, released and autograded.

For each lab: ``solutions/NN_*.ipynb`` is the course's source; ``nbgrader generate_assignment``
releases it (the release must be exactly our ``exercises/NN_*.ipynb``, cell by cell); two students
submit, one the release untouched, one the release with the solution typed into its answer cells;
``nbgrader autograde`` grades both. The untouched copy scores 0 and every check cell fails with the
"not implemented yet" message before anything else fails; the answered copy gets full marks and no
error; the autograder logs no warning about our notebooks.

Allowed log noise, not about our notebooks: SQLAlchemy's ``SAWarning`` from nbgrader's gradebook
code, ipykernel's TCP note, and nbgrader's own checksum warning on cells with hidden tests
(jupyter/nbgrader#1961: the gradebook's checksum is taken before the hidden tests are removed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from cluster_sim.checking import NOT_IMPLEMENTED

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
KNOWN_NOISE = ("SAWarning", "TCP without encryption", "no_autoflush", "warnings.warn")


def nbgrader(course: Path, *args: str) -> str:
    """Run nbgrader in ``course``; its output (it shells out to ``alembic``, so the venv's bin goes first)."""
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run([str(Path(bin_dir) / "nbgrader"), *args], cwd=course, env=env,
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout + done.stderr


def answered(release: nbformat.NotebookNode, source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The release with each answer cell holding the solution, as a student would type it."""
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.from_dict(release)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", answers[meta["grade_id"]], flags=re.M)
    return nb


def unexpected_warnings(log: str, hidden_test_cells: set[str]) -> list[str]:
    out = []
    for line in log.splitlines():
        if "WARNING" not in line and "Warning" not in line:
            continue
        if any(noise in line for noise in KNOWN_NOISE):
            continue
        m = re.search(r"Attribute 'checksum' for cell (\S+) has changed", line)
        if m and m.group(1) in hidden_test_cells:
            continue  # jupyter/nbgrader#1961
        out.append(line.strip())
    return out


@pytest.mark.notebook
@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_a_course_releases_and_grades_the_lab(solution: Path, tmp_path: Path):
    lab = solution.stem
    course = tmp_path / "course"
    (course / "source" / lab).mkdir(parents=True)
    shutil.copy(solution, course / "source" / lab / solution.name)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'cluster_sim'\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.ExecutePreprocessor.timeout = 600\n")
    log = nbgrader(course, "generate_assignment", lab, "--force")

    release = nbformat.read(course / "release" / lab / solution.name, as_version=4)
    ours = nbformat.read(ROOT / "exercises" / solution.name, as_version=4)
    assert [c.source for c in release.cells] == [c.source for c in ours.cells], (
        f"nbgrader's release of {lab} differs from exercises/{solution.name}: run `make exercises`")

    source = nbformat.read(solution, as_version=4)
    for student, nb in (("untouched", release), ("answered", answered(release, source))):
        (course / "submitted" / student / lab).mkdir(parents=True)
        nbformat.write(nb, course / "submitted" / student / lab / solution.name)
    log += nbgrader(course, "autograde", lab, "--create", "--force")

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s: (gb.find_submission(lab, s).score, gb.find_submission(lab, s).max_score)
                  for s in ("untouched", "answered")}
    assert scores["untouched"][0] == 0, f"{lab}: the untouched release scored {scores['untouched']}"
    assert scores["answered"][0] == scores["answered"][1] > 0, f"{lab}: the answered copy scored {scores['answered']}"

    graded = nbformat.read(course / "autograded" / "untouched" / lab / solution.name, as_version=4)
    checks = [c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade")]
    for cell in checks:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        gid = cell.metadata["nbgrader"]["grade_id"]
        assert errors, f"{lab}: check {gid!r} passed on the untouched release"
        assert errors[0].ename == "AssertionError" and NOT_IMPLEMENTED in errors[0].evalue, (
            f"{lab}: check {gid!r} failed with {errors[0].ename}: {errors[0].evalue[:300]!r}, not the not-implemented message")
    first = next(c for c in graded.cells if c.cell_type == "code" and any(o.output_type == "error" for o in c.outputs))
    assert first in checks, f"{lab}: a cell fails before any check cell on the untouched release: {first.source[:200]!r}"

    graded = nbformat.read(course / "autograded" / "answered" / lab / solution.name, as_version=4)
    failing = [c.source[:120] for c in graded.cells if any(o.output_type == "error" for o in c.get("outputs", []))]
    assert not failing, f"{lab}: the answered copy has errors in {failing}"

    hidden = {c.metadata["nbgrader"]["grade_id"] for c in source.cells
              if c.metadata.get("nbgrader", {}).get("grade") and "### BEGIN HIDDEN TESTS" in c.source}
    warnings = unexpected_warnings(log, hidden)
    assert not warnings, f"{lab}: nbgrader warned:\n" + "\n".join(warnings)
