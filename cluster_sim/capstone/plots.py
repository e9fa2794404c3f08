"""Lab 10's figures: the day in one picture, one run (the panel's), and the arms pooled over seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..ui import new_figure
from .config import SWITCHES
from .day import Day
from .experiments import METRICS

COLOURS = {"periodic": "tab:red", "recurring": "tab:blue", "adhoc": "tab:green"}


def plot_day(day: Day):
    """Every job of the day: when it arrives and how many tokens its user asks for (size: its vertices),
    and the tokens Morpheus reserves over the day."""
    f = day.frame()
    fig, (ax, ax2) = new_figure(1, 2, size=(10, 3.4))
    for kind, rows in f.groupby("kind"):
        ax.scatter(rows.arrival, rows.tokens, s=4 + rows.tasks, alpha=0.6, color=COLOURS[kind], label=f"{kind} ({len(rows)})")
    ax.axhline(day.config.tokens, color="k", lw=0.8, ls=":")
    ax.set_xlabel("arrival (s)"); ax.set_ylabel("tokens asked for")
    ax.set_title(f"one day: {len(f)} jobs, {f.tasks.sum():,} vertices (seed {day.config.seed})")
    ax.legend()
    t = np.linspace(0, day.config.horizon, 400)
    reserved = np.zeros_like(t)
    for j in day.jobs:
        if j.reservation is not None:
            n, a, d = j.reservation
            reserved += n * ((t >= a) & (t < d))
    ax2.plot(t, reserved, color="tab:red", label="reserved by Morpheus (R*)")
    ax2.axhline(day.config.tokens, color="k", lw=0.8, ls=":", label="the cluster's tokens")
    ax2.set_xlabel("time (s)"); ax2.set_ylabel("tokens"); ax2.legend()
    ax2.set_title("reservations when Morpheus is on")
    return fig


def plot_run(result):
    """One run (the panel's): each job's wait for admission and its run, and the five metrics."""
    j = result.jobs
    fig, (ax, ax2) = new_figure(1, 2, size=(10, 3.4))
    end = result.config.horizon
    for kind, rows in j.groupby("kind"):
        y = rows.index.to_numpy()
        ax.hlines(y, rows.arrival, rows.admitted.fillna(end), color="0.7", lw=1)
        ax.hlines(y, rows.admitted, rows.finish.fillna(end), color=COLOURS[kind], lw=1.5, label=kind)
    p = j[j.kind == "periodic"]
    ax.scatter(p.deadline, p.index, marker="|", color="k", s=30, label="deadline")
    ax.set_xlabel("time (s): grey waits for tokens, colour runs"); ax.set_ylabel("job")
    on = [s for s in SWITCHES if getattr(result.config, s)] or ["none"]
    ax.set_title(f"one run (seed {result.config.seed}): {', '.join(on)}")
    ax.legend(loc="lower right")
    m = result.metrics
    shares = [m[k] for k in METRICS if k != "mean_stage_latency"]
    names = [k for k in METRICS if k != "mean_stage_latency"]
    ax2.barh(names, shares, color="tab:purple")
    ax2.set_xlim(0, 1)
    ax2.set_title(f"shares (mean stage latency {m['mean_stage_latency']:.0f} s)")
    return fig


def interval(values) -> tuple[float, float]:
    """Mean and half-width of the 95 % t interval."""
    v = np.asarray(values, float)
    if v.size < 2:
        return float(v.mean()), float("nan")
    from scipy import stats  # here: the one use; scipy.stats is half a second of a kernel's start

    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


def arm_table(frame: pd.DataFrame, arms, metrics=METRICS) -> pd.DataFrame:
    """Each arm's mean of each metric over the pool's seeds."""
    return frame[frame.arm.isin(arms)].groupby("arm", sort=False)[list(metrics)].mean().loc[list(arms)]


def plot_alone(frame: pd.DataFrame, own: dict):
    """Each mechanism's own metric: none vs the mechanism alone, mean and 95 % interval over the seeds."""
    seeds = sorted(frame.seed.unique())
    fig, axes = new_figure(1, len(own), size=(12, 2.8))
    for ax, (mech, (metric, direction, _)) in zip(axes, own.items()):
        for k, arm in enumerate(("none", mech)):
            m, h = interval(frame.loc[frame.arm == arm, metric])
            ax.bar(k, m, yerr=h, color="0.6" if arm == "none" else "tab:orange", capsize=3)
        ax.set_xticks([0, 1], ["none", mech]); ax.set_title(f"{metric}\n({direction} is better)", fontsize=8)
    fig.suptitle(f"each mechanism alone, on its own metric (mean, 95 % interval over seeds {seeds[0]}-{seeds[-1]})",
                 fontsize=9)
    return fig


def plot_on_top(frame: pd.DataFrame, own: dict):
    """What each mechanism changes on its own metric: alone (vs none) and on top of the four others (all vs all-but-it)."""
    fig, axes = new_figure(1, len(own), size=(12, 2.8))
    seeds = sorted(frame.seed.unique())
    for ax, (mech, (metric, _, _)) in zip(axes, own.items()):
        for k, (t, b) in enumerate((((mech,), "none"), (("all",), f"all-{mech}"))):
            d = (frame[frame.arm == t[0]].set_index("seed")[metric] - frame[frame.arm == b].set_index("seed")[metric])
            m, h = interval(d.dropna())
            ax.bar(k, m, yerr=h, color=("tab:orange", "tab:purple")[k], capsize=3)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xticks([0, 1], ["alone", "on top"]); ax.set_title(f"{mech}: Δ {metric}", fontsize=8)
    fig.suptitle(f"what each adds alone and on top of the others (paired by seed, 95 % interval, seeds "
                 f"{seeds[0]}-{seeds[-1]})", fontsize=9)
    return fig
