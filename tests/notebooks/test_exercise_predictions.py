"""The exercises' graded predictions, cell by cell and without running the experiments (issue 30).

A prediction's graded cell is ``print(grade(QUESTION, prediction_x))``; what it prints and whether it fails depends
only on the recorded prediction, so each is checked in-process here: the solution's prediction passes, every wrong
one fails (``PredictionMissed``) with the explanation printed first, and the unsolved exercise (its answer cell a stub
that raises ``NotImplementedError`` after ``prediction_x = None``) fails with "no prediction recorded". The nbgrader
round trip (test_nbgrader.py) runs the same cells inside the released notebooks. Discussion answers live in the
solutions only.
"""

import ast
import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest

from cluster_sim.predict import Prediction, PredictionMissed

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
GRADED = re.compile(r"^print\(grade\((\w+), (prediction_\w+)\)\)$")


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def prediction_checks(path: Path):
    """(question name, variable, solution answer cell, exercise answer cell, graded cell source, imports)."""
    solution = nbformat.read(path, as_version=4)
    exercise = nbformat.read(ROOT / "exercises" / path.name, as_version=4)
    imports = "\n".join(line for c in solution.cells if c.cell_type == "code" for line in c.source.splitlines()
                        if re.match(r"from cluster_sim(\.\w+)*\.predictions import|from cluster_sim\.predict import", line))
    answers = {nbgrader_meta(c)["grade_id"]: c.source for c in solution.cells if nbgrader_meta(c).get("solution")}
    stubs = {nbgrader_meta(c)["grade_id"]: c.source for c in exercise.cells if nbgrader_meta(c).get("solution")}
    for cell in solution.cells:
        m = GRADED.match(cell.source.strip())
        if cell.cell_type == "code" and nbgrader_meta(cell).get("grade") and m:
            name, var = m.groups()
            yield name, var, answers[var], stubs[var], cell.source, imports


CASES = [pytest.param(path, *case, id=f"{path.stem}:{case[1]}") for path in SOLUTIONS for case in prediction_checks(path)]


def run_check(source: str, namespace: dict) -> tuple[BaseException | None, str]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(source, dict(namespace))
    except Exception as e:  # noqa: BLE001 - the outcome is what we check
        return e, out.getvalue()
    return None, out.getvalue()


# issue 30: every lab of the papers (00-09) asks at least two graded predictions; the capstone (10) asks one
# beside its open-ended exercise
AT_LEAST = {path.stem[:2]: 2 for path in SOLUTIONS}


def test_every_lab_has_graded_predictions():
    found = [path.stem[:2] for path, *_ in (c.values for c in CASES)]
    short = {lab: found.count(lab) for lab, n in AT_LEAST.items() if found.count(lab) < n}
    assert not short, f"labs with fewer graded predictions than {AT_LEAST}: {short}"


@pytest.mark.parametrize("path, name, var, answer_cell, stub_cell, check, imports", CASES)
def test_a_wrong_or_missing_prediction_loses_the_point_after_the_explanation(path, name, var, answer_cell, stub_cell,
                                                                              check, imports):
    namespace: dict = {}
    exec(imports, namespace)
    p = namespace[name]
    assert isinstance(p, Prediction), f"{path.name}: {name} is not a Prediction"
    # the solution's answer cell (markers removed, as a student types it) records the right answer
    exec(re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", answer_cell, flags=re.M), namespace)
    assert p.is_correct(namespace[var]), f"{path.name}: the solution records {namespace[var]!r}, not {p.answer!r}"
    error, out = run_check(check, namespace)
    assert error is None and f"{p.key}: correct" in out
    wrongs = [c for c in p.choices if c != p.answer] if p.choices else [p.answer + 2 * p.tolerance + 1,
                                                                          p.answer - 2 * p.tolerance - 1]
    for wrong in wrongs:
        error, out = run_check(check, namespace | {var: wrong})
        assert isinstance(error, PredictionMissed), f"{path.name}: {var} = {wrong!r} did not lose the point"
        assert "Not this time" in out and p.explanation in out, f"{path.name}: no explanation after {wrong!r}"
    # the unsolved exercise: the stub raises after recording None, and the check says nothing was recorded
    fresh: dict = {}
    exec(imports, fresh)
    with pytest.raises(NotImplementedError):  # the exercise's answer cell is a stub
        exec(stub_cell, fresh)
    assert fresh[var] is None
    error, _ = run_check(check, fresh)
    assert isinstance(error, PredictionMissed) and "no prediction recorded" in str(error)


def solution_text(source: str) -> list[str]:
    return [m.strip() for m in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", source, flags=re.S)]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_discussion_answers_are_in_the_solutions_only(path):
    solution = nbformat.read(path, as_version=4)
    exercise = (ROOT / "exercises" / path.name).read_text()
    answers = [text for c in solution.cells if c.cell_type == "markdown" for text in solution_text(c.source)]
    for text in answers:
        for line in filter(None, (s.strip() for s in text.splitlines())):
            assert line not in exercise, f"{path.name}: the model answer's line {line[:80]!r} ships in the exercise"
    if path.stem.startswith("00"):
        assert answers, "exercise 00's discussion question lost its model answer (a markdown solution cell)"
        assert "Answer (for discussion)" not in exercise and "Model answer" not in exercise
