"""The solutions as an instructor uses them: a throw-away nbgrader course, released and autograded.

``solutions/NN_*.ipynb`` are the course's source, all of them one assignment; ``nbgrader
generate_assignment`` releases it (each release must be exactly our ``exercises/NN_*.ipynb``, cell
by cell); students submit: one the release untouched, one the release with the solution typed
into its answer cells, and two "rotation" students whose answer cells are, in turn, a seeded wrong answer and
a one-line delegation to the library's reference (tests/notebooks/seeded_answers.py; a prediction cell gets a
wrong prediction): over the two, every answer cell is each of them once, next to answers of the other kind (an
answer with nothing in the library to delegate to, a prediction or an open question, is the solution in its
delegating turn). The answered student shows every answer cell's solution mode, so the rotation needs only the
two failing ones: four executions of each lab, not five (a third rotation student typed the solution, next to
wrong and delegating answers: what it showed dynamically, that a check reads no other answer, the audit of
tests/test_grading_cells.py shows from the notebook's names, and the no-delegation cells still show here).
``nbgrader autograde`` grades them all and ``nbgrader generate_feedback`` writes each student's feedback. The
untouched copy of each lab scores 0 and every check cell fails with the "not implemented yet" message before
anything else fails; the answered copy gets full marks and no error; in a rotation copy each graded cell (found
from its nbgrader metadata, so cells added later are covered) keeps its points when the answer it grades
(:func:`cluster_sim.course.graded_cells`) is the solution, and loses them all when that answer is wrong (with its
own message) or delegates (with the delegation message), whatever the other answers are; the autograder logs no
warning about our notebooks.

The round trip is nbgrader's own, as cheap as it can be: the labs are split into two courses (one
per xdist worker, each in its xdist group), and each course runs its three steps for all its labs in
one process through nbgrader's Python API (tests/notebooks/nbgrader_steps.py: the same converters as the
``nbgrader`` command, whose process per step paid about 2.8 s of CPU for its imports); each notebook is still
executed by nbgrader's autograder exactly once per student (each lab's test reads its course's results).

Allowed log noise, not about our notebooks: SQLAlchemy's ``SAWarning`` from nbgrader's gradebook
code, ipykernel's TCP note, nbconvert's note that a figure in the feedback HTML has no alt text, and nbgrader's own
checksum warning on cells with hidden tests
(jupyter/nbgrader#1961: the gradebook's checksum is taken before the hidden tests are removed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from cluster_sim.checking import DELEGATED, NOT_IMPLEMENTED
from cluster_sim.course import graded_cells
from nbgrader_steps import RELEASED
from notebook_runs import SHUTDOWN
from seeded_answers import DELEGATING, WRONG

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
ASSIGNMENT = "labs"
#: two courses, so the two xdist workers grade one each (alternate labs: each gets cheap and dear ones)
COURSES = {"a": SOLUTIONS[0::2], "b": SOLUTIONS[1::2]}
ROTATION = ("rotation-0", "rotation-1")
STUDENTS = ("untouched", "answered", *ROTATION)
MODES = ("wrong", "delegating")  # rotation-r types answer cell i as MODES[(i + r) % 2]
KNOWN_NOISE = ("SAWarning", "TCP without encryption", "no_autoflush", "warnings.warn",
               "Alternative text is missing")  # nbconvert's HTML of a figure in the feedback: matplotlib sets none


#: what a prediction's graded cell says on an unanswered release (cluster_sim.predict.grade with None)
PREDICTION_MISSING = "no prediction recorded"


def is_prediction_answer(cell) -> bool:
    """A prediction's answer cell: an nbgrader solution cell that records ``prediction_<id>``."""
    return bool(cell.metadata.get("nbgrader", {}).get("solution")) and cell.source.lstrip().startswith("prediction_")


#: seconds one nbgrader step may take before it counts as hung: a guard against a hang, never a speed check (one
#: course's autograde took over 15 minutes at load average 20 on the shared 2-core machine, 3 at load 2)
HANG = 3600


def nbgrader_steps(course: Path) -> subprocess.Popen:
    """The course's nbgrader steps, started in one process (tests/notebooks/nbgrader_steps.py); it shells out to
    ``alembic``, so the venv's bin goes first."""
    bin_dir = str(Path(sys.executable).parent)
    # headless kernels: no progress bar (a widget can stall one; tests/test_progress.py tests the bars)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), CLUSTER_SIM_PROGRESS="off")
    return subprocess.Popen([sys.executable, "-u", str(Path(__file__).with_name("nbgrader_steps.py")), str(course),
                             ASSIGNMENT, str(HANG)], cwd=course, env=env, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def released(steps: subprocess.Popen) -> str:
    """The log of the steps' release, read until the steps wait for the submissions."""
    lines = []
    for line in steps.stdout:
        if line.rstrip("\n") == RELEASED:
            return "".join(lines)
        lines.append(line)
    steps.wait()
    raise AssertionError(f"nbgrader generate_assignment failed:\n{''.join(lines)[-6000:]}")


def graded(steps: subprocess.Popen) -> str:
    """The log of the steps' grading and feedback, once the submissions are written."""
    out, _ = steps.communicate("submitted\n", timeout=HANG)
    if steps.returncode != 0:
        raise AssertionError(f"nbgrader's autograde or generate_feedback failed:\n{out[-6000:]}")
    return out


def _typed(solution_source: str) -> str:
    return re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", solution_source, flags=re.M)


PREDICTION = re.compile(r"^(prediction_\w+)[ \t]*=", re.M)


def _prediction_named(name: str):
    """The Prediction a notebook imports as ``name`` from a lab's predictions module."""
    import importlib

    from cluster_sim.predict import LAB_PACKAGES, Prediction

    for pkg in LAB_PACKAGES:
        try:
            module = importlib.import_module(f"cluster_sim.{pkg}.predictions")
        except ModuleNotFoundError:
            continue
        if isinstance(getattr(module, name, None), Prediction):
            return getattr(module, name)
    raise AssertionError(f"no lab's predictions module defines {name!r}")


def wrong_prediction(source: nbformat.NotebookNode, answer: str) -> str:
    """The answer cell with its prediction set to a wrong one (a wrong choice, or the number well off)."""
    variable = PREDICTION.search(answer).group(1)
    check = next(c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")
                 and re.search(rf"\bgrade\(\s*(\w+)\s*,\s*{variable}\b", c.source))
    p = _prediction_named(re.search(rf"\bgrade\(\s*(\w+)\s*,\s*{variable}\b", check).group(1))
    wrong = next(c for c in p.choices if c != p.answer) if p.choices is not None else float(p.answer) + 2 * p.tolerance + 1
    return re.sub(rf"^{variable}[ \t]*=.*$", f"{variable} = {wrong!r}", answer, flags=re.M)  # every line that sets it


def answer_modes(source: nbformat.NotebookNode, rotation: int) -> dict[str, str]:
    """Rotation student ``rotation``'s kind of answer for each code answer cell of a lab, by grade id."""
    cells = [c for c in source.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    modes = {c.metadata["nbgrader"]["grade_id"]: MODES[(i + rotation) % len(MODES)] for i, c in enumerate(cells)}
    for c in cells:  # a prediction, or an open question, has no library answer to delegate to: answered right
        gid = c.metadata["nbgrader"]["grade_id"]
        if (PREDICTION.search(_typed(c.source)) or DELEGATING.get(gid, "") is None) and modes[gid] == "delegating":
            modes[c.metadata["nbgrader"]["grade_id"]] = "answered"
    return modes


def typed_answer(source: nbformat.NotebookNode, cell: nbformat.NotebookNode, mode: str) -> str:
    """What a student of this ``mode`` types in an answer cell (the solution cell ``cell`` of ``source``)."""
    gid, answer = cell.metadata["nbgrader"]["grade_id"], _typed(cell.source)
    if mode == "answered" or cell.cell_type != "code":
        return answer
    if PREDICTION.search(answer):  # a prediction: no library function to delegate to
        return wrong_prediction(source, answer) if mode == "wrong" else answer
    assert gid in WRONG and gid in DELEGATING, (
        f"answer cell {gid!r} has no seeded wrong and delegating answer: add them to tests/notebooks/seeded_answers.py")
    if mode == "delegating" and DELEGATING[gid] is not None:
        return DELEGATING[gid]
    old, new = WRONG[gid]
    assert old in answer, f"seeded_answers.WRONG[{gid!r}]: {old!r} is not in the solution any more"
    return answer.replace(old, new)


def answered(release: nbformat.NotebookNode, source: nbformat.NotebookNode,
             modes: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The release with each answer cell typed in as a student would: the solution, or per ``modes`` (grade id
    -> "answered" | "wrong" | "delegating") a seeded wrong or delegating answer."""
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in source.cells
             if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.from_dict(release)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            gid = meta["grade_id"]
            cell.source = typed_answer(source, cells[gid], (modes or {}).get(gid, "answered"))
    return nb


def traceback_shown(error) -> str | None:
    """The traceback an error output shows a student beyond its message (frames, source lines), or None: a failed
    check shows only ``CheckFailed: message`` (cluster_sim.checking's handler), in nbgrader's kernels too."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback))
    return text if any(frame in text for frame in ("Traceback", "File ", "---->", "Cell In[")) else None


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


@dataclass
class Course:
    """A course graded by nbgrader: its folder, and its log split by the notebook each line is about."""

    root: Path
    labs: list[Path]
    log: dict[str, list[str]] = field(default_factory=dict)  # lab -> lines; "" -> lines about no one lab

    def log_of(self, lab: str) -> str:
        return "\n".join(self.log.get("", []) + self.log.get(lab, []))


def split_log(log: str, labs: list[str]) -> dict[str, list[str]]:
    """Each line under the last notebook nbgrader named ("Converting notebook", "Sanitizing",
    "Autograding"); lines before any, or after a step's end, under ""."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in log.splitlines():
        named = re.search(r"(?:Converting notebook|Sanitizing|Autograding) \S*?([^/\s]+)\.ipynb", line)
        if named and named.group(1) in labs:
            current = named.group(1)
        elif "nbgrader step" in line:
            current = ""
        out.setdefault(current, []).append(line)
    return out


def grade_course(root: Path, labs: list[Path], rotation: bool = True) -> Course:
    """All ``labs`` as one assignment, released, autograded and given feedback by one ``nbgrader`` process
    (:func:`nbgrader_steps`; with ``rotation``, the rotation students too: their seeded answers exist for the
    project's labs only)."""
    (root / "source" / ASSIGNMENT).mkdir(parents=True)
    for solution in labs:
        shutil.copy(solution, root / "source" / ASSIGNMENT / solution.name)
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'cluster_sim'\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        "c.ExecutePreprocessor.timeout = 600\n"
        f"c.Execute.shutdown_kernel = {SHUTDOWN!r}\n")  # as the execution layer's runs (tests/notebook_runs.py)
    with nbgrader_steps(root) as steps:
        try:
            log = released(steps)
            for solution in labs:
                release = nbformat.read(root / "release" / ASSIGNMENT / solution.name, as_version=4)
                source = nbformat.read(solution, as_version=4)
                submissions = [("untouched", release), ("answered", answered(release, source))]
                if rotation:
                    submissions += [(name, answered(release, source, answer_modes(source, r)))
                                    for r, name in enumerate(ROTATION)]
                for student, nb in submissions:
                    (root / "submitted" / student / ASSIGNMENT).mkdir(parents=True, exist_ok=True)
                    nbformat.write(nb, root / "submitted" / student / ASSIGNMENT / solution.name)
            log += graded(steps)
        finally:
            if steps.poll() is None:  # the test failed while the steps waited or ran: they end with it
                steps.kill()
    return Course(root, labs, split_log(log, [s.stem for s in labs]))


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """``course(name)``: the graded :class:`Course` of ``COURSES[name]``, graded on first use."""
    graded: dict[str, Course | BaseException] = {}

    def get(name: str) -> Course:
        if name not in graded:
            try:
                graded[name] = grade_course(tmp_path_factory.mktemp(f"course-{name}"), COURSES[name])
            except Exception as err:  # noqa: BLE001 - every lab of the course reports it
                graded[name] = err
        if isinstance(graded[name], BaseException):
            raise graded[name]
        return graded[name]

    return get


def _labs():
    for name, labs in COURSES.items():
        for solution in labs:
            yield pytest.param(name, solution, id=solution.stem, marks=pytest.mark.xdist_group(f"nbgrader-{name}"))


@pytest.mark.notebook
@pytest.mark.parametrize("name, solution", sorted(_labs(), key=lambda p: p.values[1]))
def test_a_course_releases_and_grades_the_lab(name: str, solution: Path, course):
    lab = solution.stem
    graded = course(name)
    root = graded.root

    release = nbformat.read(root / "release" / ASSIGNMENT / solution.name, as_version=4)
    ours = nbformat.read(ROOT / "exercises" / solution.name, as_version=4)
    assert [c.source for c in release.cells] == [c.source for c in ours.cells], (
        f"nbgrader's release of {lab} differs from exercises/{solution.name}: run `make exercises`")

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        scores = {s: (gb.find_submission_notebook(lab, ASSIGNMENT, s).score,
                      gb.find_submission_notebook(lab, ASSIGNMENT, s).max_score) for s in STUDENTS}
    assert scores["untouched"][0] == 0, f"{lab}: the untouched release scored {scores['untouched']}"
    assert scores["answered"][0] == scores["answered"][1] > 0, f"{lab}: the answered copy scored {scores['answered']}"

    graded_nb = nbformat.read(root / "autograded" / "untouched" / ASSIGNMENT / solution.name, as_version=4)
    # code check cells (a markdown grade cell is a discussion answer, read by the instructor)
    checks = [c for c in graded_nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    for cell in checks:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        gid = cell.metadata["nbgrader"]["grade_id"]
        assert errors, f"{lab}: check {gid!r} passed on the untouched release"
        # a prediction's check (cluster_sim.predict.grade) says no prediction was recorded
        expected = PREDICTION_MISSING if "grade(" in cell.source else NOT_IMPLEMENTED
        assert errors[0].ename in ("CheckFailed", "PredictionMissed") and expected in errors[0].evalue, (
            f"{lab}: check {gid!r} failed with {errors[0].ename}: {errors[0].evalue[:300]!r}, not {expected!r}")
        # the student reads one message, not a traceback (this once had a round trip of its own on a one-cell lab)
        assert len(errors) == 1 and traceback_shown(errors[0]) is None, (
            f"{lab}: check {gid!r} shows {len(errors)} error(s), the first with a traceback:\n"
            f"{traceback_shown(errors[0])}")
    first = next(c for c in graded_nb.cells if c.cell_type == "code" and any(o.output_type == "error" for o in c.outputs))
    # a prediction's answer cell is a stub that raises NotImplementedError, like any answer cell; it may come first
    assert first in checks or is_prediction_answer(first), (
        f"{lab}: a cell fails before any check cell on the untouched release: {first.source[:200]!r}")

    graded_nb = nbformat.read(root / "autograded" / "answered" / ASSIGNMENT / solution.name, as_version=4)
    failing = [c.source[:120] for c in graded_nb.cells if any(o.output_type == "error" for o in c.get("outputs", []))]
    assert not failing, f"{lab}: the answered copy has errors in {failing}"

    source = nbformat.read(solution, as_version=4)
    hidden = {c.metadata["nbgrader"]["grade_id"] for c in source.cells
              if c.metadata.get("nbgrader", {}).get("grade") and "### BEGIN HIDDEN TESTS" in c.source}
    warnings = unexpected_warnings(graded.log_of(lab), hidden)
    assert not warnings, f"{lab}: nbgrader warned:\n" + "\n".join(warnings)

    for student in STUDENTS:
        assert (root / "feedback" / student / ASSIGNMENT / f"{lab}.html").is_file(), f"{lab}: no feedback for {student}"

    grades = {c.grade_id: c for c in graded_cells(solution)}
    for r, student in enumerate(ROTATION):
        modes = answer_modes(source, r)
        graded_nb = nbformat.read(root / "autograded" / student / ASSIGNMENT / solution.name, as_version=4)
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            points = {gid: (gb.find_grade(gid, lab, ASSIGNMENT, student).score,
                            gb.find_grade(gid, lab, ASSIGNMENT, student).max_score) for gid in grades}
        for cell in graded_nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid not in grades:
                continue
            (answer,) = grades[gid].grades
            mode = modes[answer]
            errors = [o for o in cell.outputs if o.output_type == "error"]
            where = f"{lab}, {student}: check {gid!r} with answer {answer!r} {mode}"
            if mode == "answered":
                assert not errors and points[gid][0] == points[gid][1], (
                    f"{where}: lost points {points[gid]} to another answer: "
                    + (f"{errors[0].ename}: {errors[0].evalue[:300]}" if errors else "no error"))
                continue
            assert errors and points[gid][0] == 0, f"{where}: kept {points[gid]}"
            assert errors[0].ename in ("CheckFailed", "Delegated", "PredictionMissed", "ClaimFailed", "AssertionError"), (
                f"{where}: failed with {errors[0].ename}: {errors[0].evalue[:300]}, not a check's message")
            message = errors[0].evalue
            assert NOT_IMPLEMENTED not in message, f"{where}: failed as not implemented: {message[:300]}"
            if mode == "delegating":
                assert DELEGATED in message, f"{where}: failed without the delegation message: {message[:300]}"
            else:
                assert DELEGATED not in message, f"{where}: a wrong answer reported as a delegation: {message[:300]}"


def test_the_log_is_split_by_the_notebook_each_line_is_about():
    log = ("nbgrader step: autograde\n[AutogradeApp | WARNING] about the course\n"
           "[AutogradeApp | INFO] Sanitizing /c/submitted/untouched/labs/01_a.ipynb\n"
           "[AutogradeApp | WARNING] Attribute 'checksum' for cell x has changed\n"
           "[AutogradeApp | INFO] Autograding /c/submitted/untouched/labs/02_b.ipynb\n"
           "[AutogradeApp | WARNING] about 02\n")
    parts = split_log(log, ["01_a", "02_b"])
    assert parts["01_a"][1:] == ["[AutogradeApp | WARNING] Attribute 'checksum' for cell x has changed"]
    assert parts["02_b"][1:] == ["[AutogradeApp | WARNING] about 02"]
    assert parts[""] == ["nbgrader step: autograde", "[AutogradeApp | WARNING] about the course"]


def test_an_error_output_with_a_traceback_is_told_from_one_with_its_message_only():
    """What the round trip asserts on every failed check cell of an untouched release: the student reads one line."""
    message = nbformat.v4.new_output("error", ename="CheckFailed", evalue="double: not implemented yet",
                                     traceback=["\x1b[31mCheckFailed\x1b[39m: double: not implemented yet"])
    framed = nbformat.v4.new_output("error", ename="CheckFailed", evalue="double: not implemented yet", traceback=[
        "\x1b[31m---------------------------------------------------------------------------\x1b[39m",
        "\x1b[31mCheckFailed\x1b[39m                               Traceback (most recent call last)",
        "Cell In[3], line 2\n----> 2 print(check_double(double))", "CheckFailed: double: not implemented yet"])
    assert traceback_shown(message) is None
    assert "Traceback (most recent call last)" in traceback_shown(framed)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem[:2])
def test_the_rotation_types_every_answer_cell_wrong_once_and_delegating_once(solution):
    """Over the rotation students every code answer cell is wrong once and delegates once (the solution instead,
    where the library holds nothing to delegate to): with the answered student, every mode of every cell once."""
    source = nbformat.read(solution, as_version=4)
    per_student = [answer_modes(source, r) for r in range(len(ROTATION))]
    for gid in per_student[0]:
        seen = sorted(modes[gid] for modes in per_student)
        delegates = DELEGATING.get(gid, "") is not None and not any(
            PREDICTION.search(_typed(c.source)) for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)
        assert seen == (["delegating", "wrong"] if delegates else ["answered", "wrong"]), (
            f"{solution.stem}: answer cell {gid!r} is typed {seen} by the rotation students")
