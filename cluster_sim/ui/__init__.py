"""Widget panels built from config dataclasses, and the matplotlib figures labs share."""

from .figures import (binned_means, new_figure, plot_cdf, plot_gantt, plot_overview, plot_queue,
                      plot_queue_usage, plot_utilisation, step_curve)
from .panel import ConfigPanel, control_for

__all__ = ["ConfigPanel", "binned_means", "control_for", "new_figure", "plot_cdf", "plot_gantt",
           "plot_overview", "plot_queue", "plot_queue_usage", "plot_utilisation", "step_curve"]


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


_show_figures_inline()
