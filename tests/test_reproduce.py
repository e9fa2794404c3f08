"""`make reproduce`: every lab's "paper vs ours" section and claims land in one HTML report.

Executing every notebook again here would repeat what tests/notebooks already runs at both presets
(minutes of CI), so: the report is built from every notebook's section (structure, no execution),
and one lab (the tour, the cheapest) goes through the whole command at preset ci, its papermill call
answered by the tour's execution at ci from the execution layer (tests/notebook_runs.py).
"""

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from notebook_runs import KERNEL, ROOT, NotebookRun

from cluster_sim.reproduce import LabRun, build_report, figure_cells, main, notebooks, report_cells

TOUR_CI = NotebookRun(ROOT / "notebooks" / "00_cluster_sim_tour.ipynb", "ci")


def test_every_lab_has_a_paper_vs_ours_section_and_closing_claims():
    for path in notebooks():
        cells = report_cells(nbformat.read(path, as_version=4))
        assert re.search(r"vs what we see", cells[0].source), path.name
        assert any(c.cell_type == "code" for c in cells), f"{path.name}: the section computes nothing"
        assert "assert" in cells[-1].source, f"{path.name}: the closing claims are missing"


def test_the_report_holds_every_labs_section(tmp_path):
    runs = [LabRun(p, "ci", seconds=1.0, cells=report_cells(nbformat.read(p, as_version=4))) for p in notebooks()]
    html = build_report(runs, "ci", tmp_path, 8.0).read_text()
    assert len(runs) >= 8
    for r in runs:
        assert f'id="{r.lab}"' in html, r.lab
    assert html.count("vs what we see") >= len(runs)
    for word in ("Environment", "python", "mesa", "git commit", "wall time"):
        assert word in html, word


def test_unknown_labs_and_scales_are_refused(capsys):
    with pytest.raises(ValueError, match=r"labs=\['42'\] are not notebooks: the labs are 00, 01"):
        notebooks(["42"])
    with pytest.raises(SystemExit):
        main(["--scale", "huge"])
    assert "--scale='huge' is not allowed: choose one of ci, default, paper" in capsys.readouterr().err


@pytest.mark.notebook
@pytest.mark.parametrize("tour", [TOUR_CI.param()])
def test_make_reproduce_runs_a_lab_and_reports_its_table(tour, executed, tmp_path, monkeypatch):
    """The whole command; its one papermill call is the call the execution layer made for the tour at
    ci (checked here), so it gets that execution instead of running the notebook a second time."""
    import papermill

    execution = executed(tour)  # before papermill is replaced below
    calls = []

    def execute_notebook(input_path, output_path, *, parameters, kernel_name, cwd, **kwargs):
        calls.append(Path(input_path).name)
        assert (Path(input_path), parameters, kernel_name, Path(cwd)) == (tour.path, tour.parameters, KERNEL,
                                                                          tour.path.parent)
        if execution.error is not None:
            raise execution.error
        shutil.copy(execution.output, output_path)

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "off")  # main() would set it for the rest of this process
    assert main(["--scale", "ci", "--labs", "00", "--out", str(tmp_path)]) == 0
    assert calls == [tour.path.name]
    report = (tmp_path / "report.html").read_text()
    assert "What theory says vs what we see" in report and "every claim holds" in report
    # the claims table the tour computed, with its verdict column, is in the report
    assert "holds" in report and "<table" in report
    assert (tmp_path / "00_cluster_sim_tour.html").exists()
    assert report.count("<img") >= 3, "the tour's figures (outside its panel) are missing from the report"


def test_the_report_shows_every_figure_a_lab_drew_outside_its_panel(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## 1 · The worked example (Fig. 5)"),
        nbformat.v4.new_code_cell("plot()", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="a log line\n"),
            nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})]),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("## 2 · Try it: the panel"),
        nbformat.v4.new_code_cell("panel()", outputs=[
            nbformat.v4.new_output("display_data", data={"image/png": "cGFuZWw=", "text/plain": "<Figure>"})]),
    ])
    figures = figure_cells(nb)
    assert [c.cell_type for c in figures] == ["markdown", "code"]
    assert figures[0].source == "#### 1 · The worked example (Fig. 5)"
    assert [list(o.data) for o in figures[1].outputs] == [["image/png", "text/plain"]]  # the log line is dropped
    path = notebooks(["00"])[0]
    run = LabRun(path, "ci", seconds=1.0, cells=report_cells(nbformat.read(path, as_version=4)), figures=figures)
    html = build_report([run], "ci", tmp_path, 1.0).read_text()
    assert html.count("<img") == 1 and "iVBORw0KGgo=" in html and "cGFuZWw=" not in html
