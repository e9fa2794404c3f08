"""A failed check in a kernel: one clear message in the cell, and still a failure for papermill.

tests/test_checking.py shows the message in an in-process shell; here a real kernel runs it (papermill). That
nbgrader's autograder scores a failed check 0 and its cell shows one error, its message without a traceback, is
checked on every check cell of every lab's untouched release in tests/notebooks/test_nbgrader.py (which had a
second round trip here, on a one-cell lab: three nbgrader processes and two kernels for what the labs' round
trip already shows).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # notebook_runs, as tests/conftest.py does
from notebook_runs import KERNEL  # noqa: E402

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
