"""Widget panels built from config dataclasses, and the matplotlib figures labs share."""

from .figures import (binned_means, new_figure, plot_cdf, plot_gantt, plot_overview, plot_queue,
                      plot_utilisation, step_curve)
from .panel import ConfigPanel, control_for

__all__ = ["ConfigPanel", "binned_means", "control_for", "new_figure", "plot_cdf", "plot_gantt",
           "plot_overview", "plot_queue", "plot_utilisation", "step_curve"]
