"""A failed check in a kernel: one clear message in the cell, and still a failure for papermill and nbgrader.

tests/test_checking.py shows the message in an in-process shell; here a real kernel runs it (papermill) and
nbgrader's autograder grades it (its own round trip, from tests/notebooks/test_nbgrader.py, on a one-cell lab).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # notebook_runs, as tests/conftest.py does
from notebook_runs import KERNEL  # noqa: E402
from test_nbgrader import grade_course  # noqa: E402

from cluster_sim.checking import NOT_IMPLEMENTED  # noqa: E402

pytestmark = pytest.mark.notebook

STUB = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
CHECK = ("from cluster_sim.checking import check_cases\n"
         "print(check_cases(double, lambda x: x + x, [((1,), {}), ((5,), {})]))")


def one_check_lab(answer: str = STUB) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "cluster_sim", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(answer), nbformat.v4.new_code_cell(CHECK)]
    nb.cells[0].metadata["nbgrader"] = {"grade_id": "double", "solution": True, "grade": False, "locked": False,
                                        "schema_version": 3}
    nb.cells[1].metadata["nbgrader"] = {"grade_id": "check_double", "solution": False, "grade": True,
                                        "locked": True, "points": 1, "schema_version": 3}
    return nb


def only_the_message(error) -> str:
    """The error output's text, asserted to hold no traceback: no frames, no source lines."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback))
    assert "Traceback" not in text and "File " not in text and "---->" not in text and "Cell In[" not in text, text
    return text


def test_papermill_stops_at_a_failed_check_that_shows_only_its_message(tmp_path):
    import papermill as pm

    path = tmp_path / "lab.ipynb"
    nbformat.write(one_check_lab("def double(x):\n    return x + 1\n"), path)
    with pytest.raises(pm.PapermillExecutionError) as failed:
        pm.execute_notebook(str(path), str(tmp_path / "out.ipynb"), kernel_name=KERNEL, execution_timeout=120,
                            progress_bar=False)
    assert failed.value.ename == "CheckFailed"
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    check = next(c for c in out.cells if c.source == CHECK)  # papermill adds a banner cell above
    errors = [o for o in check.outputs if o.output_type == "error"]
    assert len(errors) == 1
    text = only_the_message(errors[0])
    assert text.startswith("CheckFailed: double: case 1 disagrees with the reference."), text
    assert "expected: 10" in text


def test_nbgrader_scores_a_failed_check_zero_and_the_student_reads_one_message(tmp_path):
    solution = tmp_path / "solutions" / "99_one_check.ipynb"
    solution.parent.mkdir()
    nbformat.write(one_check_lab(), solution)
    course = grade_course(tmp_path / "course", [solution], rotation=False)

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        untouched = gb.find_submission_notebook(solution.stem, "labs", "untouched")
        answered = gb.find_submission_notebook(solution.stem, "labs", "answered")
        assert (untouched.score, answered.score, answered.max_score) == (0, 1, 1)
    graded = nbformat.read(course.root / "autograded" / "untouched" / "labs" / solution.name, as_version=4)
    errors = [o for o in graded.cells[1].outputs if o.output_type == "error"]
    assert len(errors) == 1 and errors[0].ename == "CheckFailed"
    assert NOT_IMPLEMENTED in only_the_message(errors[0])


def test_numbers_print_plain_in_a_kernel(tmp_path):
    """Lab 04 printed {0: np.float64(0.75), ...}: in a notebook's kernel, cluster_sim.ui makes numpy print plainly."""
    import papermill as pm

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "cluster_sim", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("import numpy as np\nimport cluster_sim.ui\n"
                                          "print({0: np.float64(0.75), 1: np.int64(3)})")]
    nbformat.write(nb, tmp_path / "plain.ipynb")
    pm.execute_notebook(str(tmp_path / "plain.ipynb"), str(tmp_path / "out.ipynb"), kernel_name=KERNEL,
                        execution_timeout=120, progress_bar=False)
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in out.cells for o in c.get("outputs", []) if o.output_type == "stream")
    assert printed == "{0: 0.75, 1: 3}\n"
