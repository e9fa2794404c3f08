"""Exercises 02-03's graded predictions, in-process and without running the experiments (issue 30): the solution's
prediction passes, every wrong one fails (``PredictionMissed``) after the explanation, and the unsolved exercise (its
answer cell a stub that raises ``NotImplementedError`` after ``prediction_x = None``) fails with "no prediction
recorded". The nbgrader round trip (tests/notebooks/test_nbgrader.py) runs the same cells in the released notebooks."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest

from cluster_sim.predict import PredictionMissed

ROOT = Path(__file__).resolve().parents[2]
LABS = ("02_morpheus_slo_and_skyline.ipynb", "03_morpheus_packing_and_reprovisioning.ipynb")
GRADED = re.compile(r"^print\(grade\((\w+), (prediction_\w+)\)\)$")
IMPORTS = "from cluster_sim.morpheus.predictions import *\nfrom cluster_sim.predict import grade\n"


def _cases():
    for lab in LABS:
        sol = nbformat.read(ROOT / "solutions" / lab, as_version=4)
        ex = nbformat.read(ROOT / "exercises" / lab, as_version=4)
        meta = lambda c: c.metadata.get("nbgrader", {})  # noqa: E731
        answers = {meta(c)["grade_id"]: c.source for c in sol.cells if meta(c).get("solution")}
        stubs = {meta(c)["grade_id"]: c.source for c in ex.cells if meta(c).get("solution")}
        for c in sol.cells:
            m = GRADED.match(c.source.strip())
            if c.cell_type == "code" and meta(c).get("grade") and m:
                yield pytest.param(m.group(1), m.group(2), answers[m.group(2)], stubs[m.group(2)], c.source,
                                   id=f"{lab[:2]}:{m.group(2)}")


CASES = list(_cases())


def _run(source, namespace):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(source, dict(namespace))
    except Exception as e:  # noqa: BLE001 - the outcome is what we check
        return e, out.getvalue()
    return None, out.getvalue()


def test_two_graded_predictions_per_lab():
    labs = [c.id[:2] for c in CASES]
    assert labs.count("02") >= 2 and labs.count("03") >= 2


@pytest.mark.parametrize("name, var, answer, stub, check", CASES)
def test_a_wrong_or_missing_prediction_loses_the_point_after_the_explanation(name, var, answer, stub, check):
    ns: dict = {}
    exec(IMPORTS, ns)
    p = ns[name]
    exec(re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", answer, flags=re.M), ns)
    assert p.is_correct(ns[var])
    error, out = _run(check, ns)
    assert error is None and f"{p.key}: correct" in out
    for wrong in [c for c in p.choices if c != p.answer]:
        error, out = _run(check, ns | {var: wrong})
        assert isinstance(error, PredictionMissed) and "Not this time" in out and p.explanation in out
    fresh: dict = {}
    exec(IMPORTS, fresh)
    with pytest.raises(NotImplementedError):
        exec(stub, fresh)
    error, _ = _run(check, fresh)
    assert isinstance(error, PredictionMissed) and "no prediction recorded" in str(error)
