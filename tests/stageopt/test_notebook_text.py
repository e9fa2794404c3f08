"""Notebooks 06–07 and their exercises, read without running them (issue 15 finding 4, issue 19).

- No verdict the printed numbers contradicted survives as fixed prose ("roughly an order of
  magnitude more solve time", "coverage 100%", "close to optimal otherwise", "because we train on
  a few hundred stages"); the comparison tables are shown with uncut columns.
- The paper is cited as [MaxCompute] with a link to docs/references.md, never a path into the papers' own folder.
- Each notebook has a "What this lab leaves out" section, and its "paper vs ours" section lists the
  experiments left out.
- Every assert in a notebook has a message; exercise check cells end on a statement.
"""

import ast
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [ROOT / "notebooks" / "06_stageopt_placement.ipynb", ROOT / "notebooks" / "07_stageopt_resource_plans.ipynb"]
SOLUTIONS = [ROOT / "solutions" / p.name for p in NOTEBOOKS]
ALL = NOTEBOOKS + SOLUTIONS + [ROOT / "exercises" / p.name for p in NOTEBOOKS]


def text(path, kind=None):
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if kind is None or c.cell_type == kind)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_verdict_the_numbers_contradicted(path):
    prose = text(path, "markdown")
    for phrase in ("roughly an order of magnitude", "coverage 100%", "close to optimal otherwise",
                   "because we train on a few hundred", "always find feasible plans"):
        assert phrase not in prose, f"{path.name}: fixed verdict {phrase!r}: compute it from the run"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_comparison_tables_are_never_cut(path):
    assert 'pd.set_option("display.max_colwidth", None)' in text(path, "code")


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_paper_is_cited_by_key_with_the_bibliography_link(path):
    src = text(path)
    # both literals are split so tests/test_references.py does not read them as paths of our own
    assert "**[MaxCompute]**" in src and "(../docs/" "references.md)" in src
    assert "shared" "/" not in src and "maxcompute_fine_grained" not in src


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_what_this_lab_leaves_out_and_the_left_out_experiments(path):
    prose = text(path, "markdown")
    assert "## What this lab leaves out" in prose
    code = text(path, "code")
    assert "left out (see below)" in prose, f"{path.name}: the paper-vs-ours section does not list what is left out"
    wanted = ("Expt 3", "Expt 4", "Expt 5") if path.name.startswith("06") else ("PF(MOGD)", "Expt 7", "Expt 10")
    for expt in wanted:
        assert expt in prose + code, f"{path.name}: {expt} is neither built nor declared left out"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_assert_says_which_claim_failed(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Assert):
                assert node.msg is not None, f"{path.name} cell {i} line {node.lineno}: an assert without a message"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_check_cells_end_on_a_statement(path):
    nb = nbformat.read(path, as_version=4)
    # code check cells (a markdown grade cell is a discussion answer, read by the instructor)
    checks = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    assert checks
    for cell in checks:
        last = ast.parse(cell.source).body[-1]
        bare = isinstance(last, ast.Expr) and not (
            isinstance(last.value, ast.Call) and getattr(last.value.func, "id", None) == "print")
        assert not bare, f"{path.name} {cell.metadata.nbgrader.grade_id}: ends on a bare value (nbgrader reads it as a score)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_verdicts_come_from_the_claims_layer_not_from_strings(path):
    """Issue 25: "holds" was written by hand beside numbers that did not hold on other seeds. The
    verdicts are the claims table's (cluster_sim.claims); the closing cell records and checks it."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for phrase in ("holds", "inside the paper's range", "all claims hold", "not monotone"):
                    assert phrase not in node.value, f"{path.name} cell {i}: a verdict written by hand: {node.value!r}"
    closing = [c for c in nb.cells if c.cell_type == "code" and "assert" in c.source][-1].source
    assert "record(table)" in closing and "check(table)" in closing, f"{path.name}: the closing cell must record and check"
    assert "claims_table(config" in text(path, "code"), f"{path.name}: the claims are not measured over the pool"
