"""Every figure every notebook draws is readable: no text cut off at the figure's edge, no text on other text, no
legend over plotted data, no tick label written as a formula (issue 28).

Each figure is checked by ``cluster_sim.ui.layout.layout_problems`` in the kernel of the notebook's one execution
per preset (tests/notebook_runs.py): ``CLUSTER_SIM_LAYOUT_CHECK=on`` makes ``import cluster_sim`` install
:class:`cluster_sim.figure_watch.FigureWatch`, which records each cell's findings in the cell's output; the tests
here read them back. The checker itself is tested first, on figures made to fail, then the watch in a shell.
"""

from __future__ import annotations

import numpy as np
import pytest

from test_notebooks import RUNS

from cluster_sim.ui import new_figure
from cluster_sim.ui.figures import legend_beside, plain_log_ticks
from cluster_sim.ui.layout import layout_problems


# ---- the checker fails on what a student cannot read --------------------------------------------------------------

def test_a_figure_made_to_clip_its_title_fails():
    fig, ax = new_figure(size=(4.0, 2.5))
    ax.plot([0, 1], [0, 1])
    ax.set_title("a title far longer than this small figure is wide, so both of its ends are cut off")
    problems = layout_problems(fig)
    assert problems and problems[0].startswith("text outside the figure: title 'a title far longer"), problems


def test_text_on_text_fails():
    fig, ax = new_figure(size=(4.0, 2.5))
    ax.plot([0, 1], [0, 1])
    ax.annotate("20%", (0.5, 0.5))
    ax.annotate("40%", (0.51, 0.5))
    assert any(p.startswith("text on text: text '20%' overlaps text '40%'") for p in layout_problems(fig))


def test_a_legend_over_the_data_fails_and_beside_it_passes():
    fig, ax = new_figure(size=(4.0, 2.5))
    x = np.linspace(0, 1, 50)
    ax.plot(x, np.ones_like(x), label="finished")  # a line along the top, where "upper right" puts the legend
    ax.plot(x, x, label="rising")
    ax.legend(loc="upper right")
    assert any("legend over data" in p and "'finished'" in p for p in layout_problems(fig))
    legend_beside(ax)
    assert layout_problems(fig) == []


def test_a_marker_under_a_legend_fails():
    fig, ax = new_figure(size=(4.0, 2.5))
    ax.plot([0, 1], [0, 0], label="ours")
    ax.plot([0.95], [0.95], "D", label="the paper")
    ax.set_xlim(0, 1), ax.set_ylim(0, 1)
    ax.legend(loc="upper right")
    assert any("'the paper'" in p for p in layout_problems(fig))


def test_a_log_tick_written_as_a_formula_fails_and_plain_passes():
    fig, ax = new_figure(size=(4.0, 2.5))
    ax.plot([1.1, 3.5], [0, 1])
    ax.set_xscale("log")
    assert any("tick label written as a formula" in p for p in layout_problems(fig))
    plain_log_ticks(ax.xaxis)
    assert layout_problems(fig) == []
    assert [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()][:2] == ["2", "3"]


def test_a_readable_figure_passes():
    fig, ax = new_figure()
    ax.plot([0, 1], [0, 1], label="data")
    ax.set_title("a short title")
    ax.legend(loc="lower right")
    assert layout_problems(fig) == []


# ---- the watch records what the checker finds, cell by cell ------------------------------------------------------

def _shell_output(source: str, monkeypatch) -> list[dict]:
    """What ``source`` run as one cell of an IPython shell with the figure watch on displays (its mime bundles)."""
    from IPython.core.interactiveshell import InteractiveShell

    from cluster_sim.figure_watch import FigureWatch

    shown: list[dict] = []
    shell = InteractiveShell.instance()
    try:
        monkeypatch.setattr(shell.display_pub, "publish", lambda data, *args, **kwargs: shown.append(data))
        watch = FigureWatch(shell)
        try:
            assert shell.run_cell(source).success
        finally:
            watch.stop()
    finally:
        InteractiveShell.clear_instance()
    return shown


def test_the_watch_records_a_clipped_title_in_the_cells_output(monkeypatch):
    from cluster_sim.figure_watch import MIME

    shown = _shell_output(
        "from cluster_sim.ui import new_figure\n"
        "fig, ax = new_figure(size=(4.0, 2.5))\n"
        "ax.set_title('a title far longer than this small figure is wide, so both of its ends are cut off')\n"
        "ok, _ = new_figure()\n", monkeypatch)
    records = [bundle[MIME] for bundle in shown if MIME in bundle]
    assert len(records) == 1 and [r["figure"] for r in records[0]] == [0, 1], shown
    assert records[0][0]["problems"][0].startswith("text outside the figure: title 'a title far longer")
    assert records[0][1]["problems"] == []
    assert _shell_output("x = 1", monkeypatch) == []  # a cell that draws nothing shows no record


def layout_findings(nb) -> tuple[int, list[str]]:
    """The figures an executed notebook's cells drew (counted from their layout records), and each problem found."""
    from cluster_sim.figure_watch import MIME

    figures, problems = 0, []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            for figure in out.get("data", {}).get(MIME, []):
                figures += 1
                first = cell.source.strip().splitlines()[0][:60] if cell.source.strip() else ""
                problems += [f"cell {i} ({first!r}), figure {figure['figure']}: {p}" for p in figure["problems"]]
    return figures, problems


def test_the_findings_read_back_name_the_cell_and_the_problem():
    import nbformat

    from cluster_sim.figure_watch import MIME

    nb = nbformat.v4.new_notebook()
    record = [{"figure": 0, "problems": []}, {"figure": 1, "problems": ["text on text: a overlaps b"]}]
    nb.cells = [nbformat.v4.new_markdown_cell("prose"),
                nbformat.v4.new_code_cell("plot_overview(result)", outputs=[
                    nbformat.v4.new_output("display_data", data={MIME: record})])]
    assert layout_findings(nb) == (2, ["cell 1 ('plot_overview(result)'), figure 1: text on text: a overlaps b"])


# ---- every figure of every notebook, from its one execution per preset ----------------------------------------------

@pytest.mark.notebook
@pytest.mark.parametrize("run", [run.param() for run in RUNS if not run.overrides])  # each lab at ci and default
def test_every_figure_a_notebook_draws_is_readable(run, executed):
    figures, problems = layout_findings(executed(run).notebook)
    assert figures, f"{run.id} drew no figure (or its kernel did not check them: CLUSTER_SIM_LAYOUT_CHECK)"
    assert not problems, f"{run.id}: {len(problems)} problem(s):\n" + "\n".join(problems[:20])


def test_the_check_updates_ticks_a_fixed_number_of_times_however_many_texts(monkeypatch):
    """Its cost is a draw of the figure: finding what each text is once updated every axis's ticks again for every
    text (518 updates here where 206 do with one label; on the tour's overview figure the check took as long as its
    PNG, in every notebook run). Counted work, not a stopwatch."""
    from matplotlib.axis import Axis

    calls = []
    original = Axis._update_ticks
    monkeypatch.setattr(Axis, "_update_ticks", lambda axis: calls.append(axis) or original(axis))

    def updates(n_texts: int) -> int:
        fig, (a, b) = new_figure(ncols=2, size=(8.0, 3.0))
        for ax in (a, b):
            ax.plot([0, 1], [0, 1], label="data")
            ax.set_title("a title")
        for k in range(n_texts):
            a.annotate(f"{k}", (k / max(n_texts, 1), 0.5), fontsize=4)
        calls.clear()
        assert layout_problems(fig) is not None
        return len(calls)

    assert updates(40) == updates(1)
