"""`make reproduce`: every lab's "paper vs ours" section and claims land in one HTML report.

Executing every notebook again here would repeat what tests/notebooks already runs at both presets
(minutes of CI), so: the report is built from every notebook's section (structure, no execution),
and one lab (the tour, the cheapest) goes through the whole command at preset ci, its papermill call
answered by the tour's execution at ci from the execution layer (tests/notebook_runs.py).
"""

import csv
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from notebook_runs import KERNEL, ROOT, NotebookRun

from cluster_sim.claims import MIME, VERDICTS, Claim, measure, records
from cluster_sim.reproduce import LabRun, build_report, claim_rows, figure_cells, main, notebooks, report_cells

TOUR_CI = NotebookRun(ROOT / "notebooks" / "00_cluster_sim_tour.ipynb", "ci")


def test_every_lab_has_a_paper_vs_ours_section_and_closing_claims():
    for path in notebooks():
        cells = report_cells(nbformat.read(path, as_version=4))
        assert re.search(r"vs what we see", cells[0].source), path.name
        assert any(c.cell_type == "code" for c in cells), f"{path.name}: the section computes nothing"
        assert "assert" in cells[-1].source, f"{path.name}: the closing claims are missing"


def test_the_report_holds_every_labs_section(tmp_path):
    runs = [LabRun(p, "ci", seconds=1.0, cells=report_cells(nbformat.read(p, as_version=4))) for p in notebooks()]
    runs[0].cpu_seconds, runs[0].load = 0.7, (3.5, 2.3)  # a shared machine: the CPU time and the load are shown
    html = build_report(runs, "ci", tmp_path, 8.0).read_text()
    assert "1.0 s wall, 0.7 s CPU, load 3.5-2.3" in html
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
    assert "What theory says vs what we see" in report and "<table" in report
    # the summary counts the claims table the tour displayed, and claims.csv holds the same rows
    rows = list(csv.DictReader(open(tmp_path / "claims.csv")))
    assert rows and {r["lab"] for r in rows} == {"00"}
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    line = ", ".join(f"{n} {'reported only' if v == 'reported' else v}" for v, n in counts.items() if n)
    assert f"claims: {line}" in report
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


def test_the_summary_and_claims_csv_are_counted_from_the_claims_tables(tmp_path):
    """Never "every claim holds" above rows that do not: the counts come from the tables the notebooks displayed."""
    import pandas as pd

    frame = pd.DataFrame({"policy": ["a", "b"] * 3, "seed": [0, 0, 1, 1, 2, 2], "v": [1.0, 0.0, 1.1, 0.1, 0.9, 0.0]})
    table = measure([
        Claim("a_beats_b", "a beats b", "Fig. 1", "v", treatment={"policy": "a"}, baseline={"policy": "b"},
              direction="higher", paper=0.8, must=True, why="central"),
        Claim("b_beats_a", "b beats a", "Fig. 2", "v", treatment={"policy": "b"}, baseline={"policy": "a"},
              direction="higher", why="reported"),
        Claim("size", "a's size", "Fig. 3", "v", treatment={"policy": "a"},
              paper_text="93 %, 84 % and 47 % of the value at 20 % capacity, one cluster-wide queue", why="trace"),
    ], frame, lab="05")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("record(table)", outputs=[
        nbformat.v4.new_output("display_data", data={MIME: records(table), "text/plain": "..."})])])
    assert [r["claim"] for r in claim_rows(nb)] == ["a_beats_b", "b_beats_a", "size"]
    path = notebooks(["05"])[0]
    run = LabRun(path, "ci", seconds=1.0, cells=report_cells(nbformat.read(path, as_version=4)), claims=claim_rows(nb))
    html = build_report([run], "ci", tmp_path, 1.0).read_text()
    assert "1 reproduced, 1 reversed, 1 reported only" in html
    rows = list(csv.DictReader(open(tmp_path / "claims.csv")))
    assert list(rows[0]) == ["lab", "claim", "paper", "ours", "low", "high", "n", "verdict"]
    assert [(r["lab"], r["claim"], r["verdict"]) for r in rows] == [
        ("05", "a_beats_b", "reproduced"), ("05", "b_beats_a", "reversed"), ("05", "size", "reported")]
    assert rows[0]["paper"] == "0.8" and float(rows[0]["low"]) > 0 and rows[2]["low"] == rows[2]["high"] == ""
    assert rows[2]["paper"].endswith("one cluster-wide queue")  # whole, never cut with "…"
