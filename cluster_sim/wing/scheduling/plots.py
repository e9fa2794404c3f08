"""Lab 05's figures (matplotlib Figures made without pyplot): value attained vs capacity (Fig. 10-12),
one run's outcomes (the panel), mis-prediction sensitivity and value vs iterations."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...ui import new_figure, policy_colour
from .config import PAPER_REQUEST_PEAK, POLICY_NAMES

# each policy in the colour of its role, the same in every lab (cluster_sim.ui.style)
COLOURS = {name: policy_colour(name) for name in ("PRIO", "Wing-Direct", "Wing-Agg", "Wing-MIL", "Oracle Wing-Direct",
                                                 "Oracle Wing-Agg")}
PAPER_FIG10 = {"PRIO": {0.6: 0.80, 0.4: 0.62, 0.2: 0.35}, "Wing-Agg": {0.6: 0.87, 0.4: 0.77, 0.2: 0.55}}


def plot_capacity(table: pd.DataFrame, title: str = "value attained vs capacity (Fig. 10)", paper: bool = True):
    """Mean value share per policy and capacity over the seeds of ``table`` (a :func:`~.experiments.sweep`
    frame), with a 95 % t interval over the seeds where there are several (a point of one seed has no
    bar); the paper's PRIO and Wing-Agg points (quoted from its text) as crosses, each at its capacity over
    0.6 (the paper's capacity is a share of a cluster whose job requests peak at 60 % of it; ours a share of
    the peak itself)."""
    from scipy import stats

    fig, ax = new_figure(size=(7.0, 3.4))
    g = table.groupby(["policy", "capacity"])["value_share"].agg(["mean", "std", "count"]).reset_index()
    t = stats.t.ppf(0.975, np.maximum(g["count"] - 1, 1))
    g["half"] = np.where(g["count"] > 1, t * g["std"].fillna(0.0) / np.sqrt(g["count"]), 0.0)
    for name in [n for n in COLOURS if n in set(g["policy"])]:
        s = g[g["policy"] == name].sort_values("capacity")
        x = s["capacity"].to_numpy() * 100
        ax.errorbar(x, s["mean"] * 100, yerr=s["half"] * 100, marker="o", ms=4, capsize=2, color=COLOURS[name],
                    label=name)
        if paper and name in PAPER_FIG10:
            px = np.array(sorted(PAPER_FIG10[name]))
            ax.plot(px / PAPER_REQUEST_PEAK * 100, [PAPER_FIG10[name][c] * 100 for c in px], "x", ms=8,
                    color=COLOURS[name])
    ax.set_xlabel("capacity (% of each queue's peak in the trace; the paper's c at c / 0.6)")
    ax.set_ylabel("value attained (% of achievable)")
    ax.set_title(title + (" · x = the paper's" if paper else ""))
    ax.legend(ncol=2)
    ax.grid(alpha=0.3)
    return fig


def plot_outcomes(result):
    """One run: value attained by recurring and ad hoc jobs, and how their jobs ended."""
    fig, (a, b) = new_figure(1, 2, size=(8.0, 3.0))
    k = result.by_kind()
    a.bar(k.index, k["value share"] * 100, color=["#ff7f0e", "#1f77b4"][: len(k)])
    a.set_ylabel("value attained (%)")
    a.set_ylim(0, 105)
    a.set_title(f"{result.policy} at {result.config.capacity:.0%}: {result.value_share:.1%} of value")
    states = ["completed", "failed", "pending"]
    bottom = np.zeros(len(k))
    for s, colour in zip(states, ["#2ca02c", "#d62728", "#bbbbbb"]):
        v = k[s].to_numpy() * 100
        b.bar(k.index, v, bottom=bottom, color=colour, label=s)
        bottom += v
    b.set_ylabel("jobs (%)")
    b.set_title(f"{result.failed_jobs} failed for missing input, {result.pending_jobs} pending")
    b.legend(loc="lower right")
    return fig


def plot_sensitivity(table: pd.DataFrame, reference: dict | None = None, title: str = ""):
    """Value share vs the mis-prediction scale s (Oracle values times a factor in [1/s, s]), the mean over
    the table's seeds; ``reference``: policy name -> value share drawn as a dashed line (e.g. predicted
    Wing-Agg, PRIO); ``title`` says how many seeds."""
    fig, ax = new_figure(size=(6.0, 3.0))
    s = table.groupby("misprediction")["value_share"].mean()
    ax.plot(s.index, s.to_numpy() * 100, "o-", color=COLOURS["Oracle Wing-Agg"], label="Oracle Wing-Agg, mis-predicted")
    for name, v in (reference or {}).items():
        ax.axhline(v * 100, ls="--", color=COLOURS.get(name, "k"), label=name)
    ax.set_xscale("log")
    ax.set_xlabel("s (each value times a random factor in [1/s, s])")
    ax.set_ylabel("value attained (%)")
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def plot_iterations(table: pd.DataFrame, title: str = ""):
    """Wing-Agg's value share vs the iterations of Algorithm 1 behind its profiles: the mean over the
    table's seeds, with its 95 % interval when there are several (``title`` says which seeds)."""
    from .claims import pooled

    fig, ax = new_figure(size=(6.0, 3.0))
    s = pooled(table, "iterations")
    labels = [str(i) if i < 20 else "converged" for i in s.index]
    x = np.arange(len(s))
    ax.plot(x, s["mean"].to_numpy() * 100, "o-", color=COLOURS["Wing-Agg"], label="mean over the seeds")
    if s["n"].max() > 1:  # the interval of the mean (one seed has none)
        half = s["±"].fillna(0.0).to_numpy() * 100
        ax.fill_between(x, s["mean"].to_numpy() * 100 - half, s["mean"].to_numpy() * 100 + half,
                        color=COLOURS["Wing-Agg"], alpha=0.15, label="95 % interval")
        ax.legend(loc="lower right")
    ax.set_xticks(range(len(s)), labels)
    ax.set_xlabel("iterations of Algorithm 1 (0 = job-local value, i >= 1: paths of up to 2**i hops)")
    ax.set_ylabel("value attained (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return fig


def policy_name(policy: str) -> str:
    return POLICY_NAMES[policy]
