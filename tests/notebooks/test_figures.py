"""Every figure every notebook draws is readable: no text cut off at the figure's edge, no text on other text, no
legend over plotted data, no tick label written as a formula (issue 28).

Each notebook runs in-process (``cluster_sim.ui.inprocess.notebook_figures``: its code cells in an IPython shell,
``interactive=False``) and every Figure its cells make is checked by ``cluster_sim.ui.layout.layout_problems``.
The checker itself is tested first, on figures made to fail.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cluster_sim.ui import new_figure
from cluster_sim.ui.figures import legend_beside, plain_log_ticks
from cluster_sim.ui.layout import layout_problems

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


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


# ---- every figure of every notebook -------------------------------------------------------------------------------

@pytest.mark.notebook
@pytest.mark.parametrize("preset", ["ci", "default"])
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_figure_a_notebook_draws_is_readable(path: Path, preset: str, monkeypatch):
    from cluster_sim.ui.inprocess import notebook_figures

    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "off")
    figures = notebook_figures(path, preset=preset)
    assert figures, f"{path.name} drew no figure"
    problems = [f"code cell {cell}: {problem}" for cell, fig in figures for problem in layout_problems(fig)]
    assert not problems, f"{path.name} at {preset}: {len(problems)} problem(s):\n" + "\n".join(problems[:20])
