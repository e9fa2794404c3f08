"""Labs 06–07 figures: ``plot_*(result) -> matplotlib Figure``, pyplot-free (panel redraws leak none)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.ticker import LogFormatter

from ..ui import new_figure
from ..ui.figures import legend_beside, plain_log_ticks

__all__ = ["plot_placement", "plot_channel_ablation", "plot_resource_plans", "plot_model_accuracy", "plot_claims"]


class _PlainLogFormatter(LogFormatter):
    """matplotlib's choice of which log ticks to label, written as plain numbers ("2000", "3e+06")."""

    def _num_to_string(self, x, vmin, vmax):
        return f"{x:g}"


def _log_axes(ax) -> None:
    """Log scales with plain tick labels, not mathtext's 10^3: parsing mathtext took a third of a
    panel redraw. Minor ticks are labelled when the axis spans under two decades, as by default."""
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(_PlainLogFormatter())
        axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def plot_placement(result):
    """(a) stage latency and cost reduction vs Fuxi per method; (b) the first stage's instances."""
    fig, (ax1, ax2) = new_figure(1, 2, size=(11, 3.8))
    t = result.table.drop(index="Fuxi")
    x = np.arange(len(t))
    ax1.bar(x - 0.2, 100 * t["latency RR vs Fuxi"], 0.4, label="stage latency")
    ax1.bar(x + 0.2, 100 * t["cost RR vs Fuxi"], 0.4, label="cost")
    c = result.clusters
    ax1.set_xticks(x, [f"{m}\n({c['mean instance clusters']:.1f} instance clusters)" if m == "IPA(Cluster)" else m
                       for m in t.index])
    ax1.axhline(0, color="k", lw=0.8)
    ax1.set_ylabel("reduction vs Fuxi (%)")
    ax1.set_title(f"Expt 6, one seed ({result.config.seed}): {result.config.stages} stages × "
                  f"{result.config.instances} instances")
    lo, hi = ax1.get_ylim()
    ax1.set_ylim(lo, hi + 0.25 * (hi - lo))  # a band above the bars for the legend, so it hides none
    ax1.legend(ncols=2, loc="upper center")
    ex = result.example
    order = np.argsort(ex["rows"])
    for method, style in (("Fuxi", "C3"), ("IPA(Cluster)", "C0")):
        a, lat = ex[method]
        ax2.scatter(ex["rows"][order], lat[order], s=8, c=style, alpha=0.6, label=f"{method}: max {lat.max():.0f} s")
    _log_axes(ax2)
    ax2.set_xlabel("instance input rows")
    ax2.set_ylabel("predicted instance latency (s)")
    ax2.set_title("stage 0: the slowest instance sets the stage latency")
    ax2.legend()
    return fig


def plot_channel_ablation(ablation: pd.DataFrame):
    """Fig. 9(a): held-out WMAPE with each channel off, all five on, and all five plus AIM."""
    fig, ax = new_figure(size=(7, 3))
    colours = ["C3" if name.endswith("_off") else ("C2" if "AIM" in name else "C0") for name in ablation.index]
    ax.bar(ablation.index, 100 * ablation["WMAPE"], color=colours)
    ax.set_ylabel("WMAPE (%)")
    ax.set_title("Fig. 9(a)-style channel ablation (held-out stages, one seed)")
    ax.tick_params(axis="x", labelrotation=20)
    return fig


def plot_resource_plans(result):
    """(a) stage 0: every plan on RAA's front scored per instance, the exact front, the WUN pick,
    Fuxi and IPA, all in the model's (noise-free) terms; (b) Table 4's reductions vs Fuxi."""
    fig, (ax1, ax2) = new_figure(1, 2, size=(14, 3.8))  # wide: ax1's legend beside it, six labels under ax2
    ex = result.example
    exact = ex["exact front"]
    ax1.plot(exact[:, 0], exact[:, 1], "-", lw=1, color="0.55", label=f"exact front, per instance ({len(exact)} points)")
    f = ex["front"]
    ax1.plot(f[:, 0], f[:, 1], "o", ms=3, color="C0", label=f"RAA front over {ex['units']} units, scored per instance")
    ax1.plot(*f[ex["pick"]], "*", ms=16, color="C2", label="WUN pick = IPA+RAA(Path) in the table")
    ax1.plot(*ex["Fuxi"], "s", ms=9, color="C3", label="Fuxi (HBO Θ0)")
    ax1.plot(*ex["IPA(Cluster)"], "^", ms=9, color="C1", label="IPA(Cluster) (Θ0)")
    _log_axes(ax1)
    ax1.set_xlabel("stage latency (s, predicted)")
    ax1.set_ylabel("stage cost (predicted)")
    ax1.set_title(f"stage 0: {ex['instances']} instances, {ex['units']} RAA units")
    legend_beside(ax1)  # inside, it hid Fuxi's point at default
    t = result.table.reset_index()
    t = t[t.method != "Fuxi"]
    labels = [f"{m}\n{mo}" for m, mo in zip(t.method, t["mode"])]
    x = np.arange(len(t))
    ax2.bar(x - 0.2, 100 * t["latency RR vs Fuxi"], 0.4, label="stage latency")
    ax2.bar(x + 0.2, 100 * t["cost RR vs Fuxi"], 0.4, label="cost")
    ax2.set_xticks(x, labels, fontsize=7)
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set_ylabel("reduction vs Fuxi (%)")
    ax2.set_title(f"Expt 9: net benefit, one seed ({result.config.seed})")
    ax2.legend()
    return fig


def plot_model_accuracy(table: pd.DataFrame):
    """Expt 10: each bootstrap model's held-out WMAPE against the reductions RAA reaches with it."""
    fig, (ax1, ax2) = new_figure(1, 2, size=(11, 3.4))
    x = np.arange(len(table))
    ax1.bar(x - 0.2, 100 * table["WMAPE"], 0.4, color="C3", label="WMAPE (instance latency)")
    ax1.bar(x + 0.2, 100 * table["GlbErr"], 0.4, color="C1", label="GlbErr (total cost)")
    ax1.set_xticks(x, [n.replace(" (", "\n(") for n in table.index], fontsize=7)
    ax1.set_ylabel("held-out error (%)")
    ax1.set_title("bootstrap models, most accurate first (one seed)")
    ax1.legend()
    ax2.bar(x - 0.2, 100 * table["latency RR vs Fuxi"], 0.4, label="stage latency")
    ax2.bar(x + 0.2, 100 * table["cost RR vs Fuxi"], 0.4, label="cost")
    ax2.set_xticks(x, [n.replace(" (", "\n(") for n in table.index], fontsize=7)
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set_ylabel("RAA's reduction vs Fuxi (%, ground truth)")
    ax2.set_title("Expt 10: RAA on Fuxi's placement (one seed)")
    ax2.legend()
    return fig


def plot_claims(table: pd.DataFrame, keys, title: str = "our claims beside the paper's"):
    """Claims in percent (reduction rates, errors) beside the paper's values: ours is the mean over the
    seed pool with its 95 % interval (a reported claim has only its mean), the paper's the mean of its
    workloads A-C. ``table`` is a claims table (:func:`cluster_sim.claims.measure`)."""
    rows = table.set_index("claim").loc[list(keys)]
    fig, ax = new_figure(size=(8, 1.3 + 0.42 * len(rows)))
    y = np.arange(len(rows))[::-1]
    ours = 100 * rows["ours"].to_numpy(dtype=float)
    low = np.nan_to_num(ours - 100 * rows["low"].to_numpy(dtype=float))
    high = np.nan_to_num(100 * rows["high"].to_numpy(dtype=float) - ours)
    seeds = sorted(set(rows["n"]))
    ax.errorbar(ours, y, xerr=[low, high], fmt="o", color="C0", capsize=3,
                label=f"ours: mean over {'/'.join(map(str, seeds))} seeds, 95 % interval (none for a size only reported)")
    paper = 100 * rows["paper"].astype(float).to_numpy()
    ax.scatter(paper, y, marker="x", s=50, color="C3", zorder=3, label="the paper: mean of workloads A–C")
    ax.set_yticks(y, [f"{k}\n({src})" for k, src in zip(rows.index, rows["source"])], fontsize=7)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("percent (a reduction rate, a difference of two, or an error)")
    ax.set_title(title)
    ax.legend(loc="best")
    return fig
