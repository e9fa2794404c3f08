"""Figures every lab shares: utilisation, queue length, a Gantt view of tasks, CDFs.

Each function returns (or draws on) a ``matplotlib.figure.Figure`` made without pyplot, so a
notebook shows it once and headless runs leak no global figure state.
"""

from __future__ import annotations

import matplotlib
import matplotlib.ticker
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from cluster_sim.engine.metrics import binned_means


def new_figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = (7.0, 3.2)):
    """A constrained-layout Figure and its axes (a single Axes, or an array of them)."""
    fig = Figure(figsize=size, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True)
    return fig, axes


class PlainLogFormatter(matplotlib.ticker.LogFormatterSciNotation):
    """A log axis's tick labels as plain numbers (2, 0.5, 1000), on the ticks matplotlib would label: its own
    labels, such as 2×10⁰ on an axis spanning less than a decade, read as a formula, not a value."""

    def __call__(self, x, pos=None):
        return f"{x:g}" if super().__call__(x, pos) else ""


def plain_log_ticks(axis) -> None:
    """Label the ticks of a log-scaled ``axis`` (``ax.xaxis`` or ``ax.yaxis``) with :class:`PlainLogFormatter`."""
    axis.set_major_formatter(PlainLogFormatter(base=axis.get_transform().base))
    axis.set_minor_formatter(PlainLogFormatter(base=axis.get_transform().base, labelOnlyBase=False))


def legend_beside(ax: Axes, **kwargs):
    """The axes' legend to the right of it, where it covers no data (a constrained layout makes room for it)."""
    return ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), **kwargs)


def step_curve(ax: Axes, times, values, t_end: float | None = None, **kwargs) -> None:
    """Draw a step function whose value holds from each change time on (exactly as recorded)."""
    times, values = np.asarray(times, float), np.asarray(values, float)
    if t_end is not None and (len(times) == 0 or times[-1] < t_end):
        times, values = np.append(times, t_end), np.append(values, values[-1] if len(values) else 0.0)
    ax.step(times, values, where="post", **kwargs)


def plot_cdf(ax: Axes, samples: dict, xlabel: str, log: bool = False) -> None:
    """Empirical CDFs of several samples on one axes (NaNs, e.g. unfinished jobs, are left out)."""
    for label, x in samples.items():
        x = np.sort(np.asarray(x, float))
        x = x[~np.isnan(x)]
        if len(x):
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=f"{label} (n={len(x)})")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction ≤ x")
    ax.set_ylim(0, 1.02)
    if log:
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
    ax.legend()


def plot_utilisation(result, ax: Axes | None = None, bins: int = 120):
    """Allocated CPU and memory as a share of capacity: exact averages over time bins."""
    fig = None
    if ax is None:
        fig, ax = new_figure()
    horizon = result.metrics.time
    for r, name in enumerate(("cpu", "mem")):
        times, values = result.series[name]
        edges, means = binned_means(times, values / result.capacity[r], horizon, bins)
        ax.stairs(means, edges, baseline=None, label=f"{name} (mean {np.sum(means * np.diff(edges)) / horizon:.0%})")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("allocated / capacity")
    # the legend sits in a band above 100 %, where no share can be drawn: in the lower right it covered the
    # memory curve of a run whose use dips late (the tour at ci, seed 3)
    ax.set_ylim(0, 1.3)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_title("Utilisation")
    ax.legend(loc="upper center", ncol=2)
    return fig or ax.figure


def plot_queue(result, ax: Axes | None = None, bins: int = 120):
    """Tasks waiting at the schedulers: exact averages over time bins (the raw step curve is a blur)."""
    fig = None
    if ax is None:
        fig, ax = new_figure()
    times, values = result.series["queue"]
    edges, means = binned_means(times, values, result.metrics.time, bins)
    ax.stairs(means, edges, baseline=None, color="tab:red")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queued tasks (bin average)")
    ax.set_title(f"Queue (time-average {result.metrics.mean_queue_length:.1f})")
    return fig or ax.figure


def plot_gantt(result, ax: Axes | None = None, max_tasks: int = 400, machines: int = 20):
    """Tasks as bars on the first ``machines`` machines; at most ``max_tasks`` bars (evenly sampled).

    The bars are one ``PolyCollection`` (hundreds of separate patches take most of a panel's redraw).
    """
    fig = None
    if ax is None:
        fig, ax = new_figure(size=(7.0, 3.6))
    t = result.tasks
    horizon = result.metrics.time
    shown_machines = min(machines, int(result.config.machines)) if hasattr(result.config, "machines") else machines
    on_shown = (t["machine"] >= 0) & (t["machine"] < shown_machines)
    ran = np.flatnonzero(on_shown)
    if len(ran) > max_tasks:
        ran = ran[np.linspace(0, len(ran) - 1, max_tasks).astype(int)]
    start = t["start"][ran]
    finish = np.where(np.isnan(t["finish"][ran]), horizon, t["finish"][ran])
    y = t["machine"][ran].astype(float)
    boxes = np.stack([np.column_stack([start, y - 0.4]), np.column_stack([finish, y - 0.4]),
                      np.column_stack([finish, y + 0.4]), np.column_stack([start, y + 0.4])], axis=1)
    cmap = matplotlib.colormaps["tab10"]
    ax.add_collection(PolyCollection(boxes, facecolors=cmap(np.asarray(t["job"][ran]) % 10), edgecolors="none",
                                     alpha=0.8))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("machine")
    sampled = "" if len(ran) == int(on_shown.sum()) else f", {len(ran)} sampled"
    which = f"machine 0" if shown_machines == 1 else f"machines 0–{shown_machines - 1}"
    of_all = "" if shown_machines == getattr(result.config, "machines", shown_machines) else \
        f" of {result.config.machines}"
    ax.set_title(f"Tasks on {which}{of_all} (colour = job{sampled})")
    ax.set_xlim(0, horizon)
    ax.set_ylim(-0.6, shown_machines - 0.4)
    ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    return fig or ax.figure


def plot_queue_usage(scheduler, horizon: float, ax: Axes | None = None):
    """CPU each leaf queue of a :class:`~cluster_sim.engine.CapacityScheduler` held over time (exact
    step curves), with its guarantee (dashed) and its elastic maximum (dotted) as they are now."""
    fig = None
    if ax is None:
        fig, ax = new_figure(size=(7.0, 3.2))
    total = scheduler.total[0]
    for k, q in enumerate(scheduler.leaves):
        colour = f"C{k}"
        times, values = q.usage.steps()
        step_curve(ax, times, 100 * values / total, t_end=horizon, color=colour, lw=1.2,
                   label=f"{q.name}: mean {100 * q.usage.total(horizon) / (total * horizon):.0f}%")
        ax.axhline(100 * q.guaranteed[0] / total, color=colour, ls="--", lw=0.8)
        if q.maximum[0] > q.guaranteed[0]:
            ax.axhline(100 * q.maximum[0] / total, color=colour, ls=":", lw=0.8)
    ax.set_xlim(0, horizon)
    ax.set_ylim(0, 105)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("CPU held (% of cluster)")
    ax.set_title("Queues: CPU held (lines), guarantee (dashed), elastic maximum (dotted)", fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig or ax.figure


def plot_overview(result):
    """Utilisation, queue, a Gantt view and the job wait / completion CDFs of one run."""
    fig, axes = new_figure(2, 2, size=(11.0, 6.5))
    plot_utilisation(result, axes[0, 0])
    plot_queue(result, axes[0, 1])
    plot_gantt(result, axes[1, 0])
    j = result.jobs
    # log scale: waits are often orders of magnitude shorter than completions
    plot_cdf(axes[1, 1], {"wait": j["first_start"] - j["arrival"], "completion": j["finish"] - j["arrival"]},
             "seconds after arrival", log=True)
    axes[1, 1].set_title("Jobs")
    return fig
