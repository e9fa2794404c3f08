"""Every figure a notebook's cells draw, checked by :func:`cluster_sim.ui.layout.layout_problems` in the kernel that
runs the notebook, when the environment asks for it (``CLUSTER_SIM_LAYOUT_CHECK=on``).

The test suite executes each notebook once per preset (tests/notebook_runs.py sets the variable for its papermill
runs); the figure checks (tests/notebooks/test_figures.py) read the records this leaves in that execution instead of
running the notebook a second time. ``import cluster_sim`` installs the watch, so it is on before any cell draws.
Without the variable it imports nothing; with it, matplotlib's ``Figure`` at once and :mod:`cluster_sim.ui` (whose
import sets the suite's figure style) only after a cell has made a figure, so the cells run as they would without it.
"""

from __future__ import annotations

import os

#: the environment variable that asks a kernel to check every figure its cells draw
VARIABLE = "CLUSTER_SIM_LAYOUT_CHECK"
#: the mime type of a cell's layout record: one entry per figure the cell made, ``{"figure": k, "problems": [...]}``
MIME = "application/vnd.cluster-sim.layout+json"


class FigureWatch:
    """After each cell of an IPython shell, the layout problems of every Figure the cell made, displayed as a
    :data:`MIME` record in the cell's output (nothing for a cell that made no figure).

    It runs on ``post_run_cell``, after the inline backend has shown (and closed) the cell's figures, so drawing
    them again here changes nothing a student sees. Figures are found as they are made (``Figure.__init__``): a
    pyplot-free ``Figure`` never reaches pyplot's list of open figures.
    """

    def __init__(self, shell):
        from matplotlib.figure import Figure

        self.shell, self.made = shell, []
        made, self._original = self.made, Figure.__init__

        def recording_init(fig, *args, **kwargs):
            self._original(fig, *args, **kwargs)
            made.append(fig)

        Figure.__init__ = recording_init
        shell.events.register("post_run_cell", self.after_cell)

    def stop(self) -> None:
        """Figures are no longer watched (a kernel's watch is never stopped; a test's is)."""
        from matplotlib.figure import Figure

        Figure.__init__ = self._original
        self.shell.events.unregister("post_run_cell", self.after_cell)

    def after_cell(self, result) -> None:
        figures = list(self.made)
        self.made.clear()
        if not figures:
            return
        from IPython.display import display

        from .ui.layout import layout_problems

        record = [{"figure": k, "problems": layout_problems(fig)} for k, fig in enumerate(figures)]
        # a line of text too, so a renderer without this mime type (nbconvert's HTML) shows it instead of warning
        line = f"{VARIABLE}: {len(record)} figure(s), {sum(len(r['problems']) for r in record)} layout problem(s)"
        display({MIME: record, "text/plain": line}, raw=True)


def watch_when_asked() -> FigureWatch | None:
    """A :class:`FigureWatch` on the running IPython shell when :data:`VARIABLE` is ``on`` (one per shell)."""
    if os.environ.get(VARIABLE) != "on":
        return None
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None:
        return None
    if getattr(shell, "_cluster_sim_figure_watch", None) is None:
        shell._cluster_sim_figure_watch = FigureWatch(shell)
    return shell._cluster_sim_figure_watch
