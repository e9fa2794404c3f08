"""Widget panels built from config dataclasses, and the matplotlib figures labs share."""

from .figures import (binned_means, new_figure, plot_cdf, plot_gantt, plot_overview, plot_queue,
                      plot_queue_usage, plot_utilisation, step_curve)
from .panel import ConfigPanel, control_for
from . import style
from .style import policy_colour

__all__ = ["ConfigPanel", "binned_means", "control_for", "new_figure", "plot_cdf", "plot_gantt",
           "plot_overview", "plot_queue", "plot_queue_usage", "plot_utilisation", "policy_colour", "step_curve"]


def _show_figures_inline() -> None:
    """Let IPython render our pyplot-free Figures as PNG (what ``%matplotlib inline`` sets up)."""
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"png"}, bbox_inches="tight")
    if type(shell).__name__ == "ZMQInteractiveShell":
        # a notebook's kernel: numbers print as a student writes them ({0: 0.75}, not {0: np.float64(0.75)});
        # only there, so doctests and scripts keep numpy's own repr
        import numpy as np

        np.set_printoptions(legacy="1.25")


style.apply()
_show_figures_inline()
