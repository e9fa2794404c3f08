"""Figures of Labs 08-09 (matplotlib Figures made without pyplot)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from ..claims import CONFIDENCE
from ..ui import binned_means, new_figure, policy_colour, step_curve
from ..ui.figures import legend_beside, plain_log_ticks

# each mode in the colour of its role, the same in every lab (cluster_sim.ui.style)
MODE_COLOURS = {mode: policy_colour(mode) for mode in ("none", "plus1", "safe", "smart")}
MODE_NAMES = {"none": "NoRM", "plus1": "NoRM + 1 scheduler", "safe": "SafeRM", "smart": "SmartRM"}


def seed_stats(df: pd.DataFrame, keys: list, col: str) -> pd.DataFrame:
    """Per group of ``keys``: the mean of ``col`` over its rows (one per seed), the half-width of its
    Student t interval (0 for one row: one seed is an example, it has no interval) and the count."""
    from scipy import stats

    def one(x):
        x = x.dropna().to_numpy(dtype=float)
        n = len(x)
        half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * x.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0
        return pd.Series({"mean": x.mean() if n else math.nan, "half": half, "n": n})

    return df.groupby(keys, sort=False)[col].apply(one).unstack()


def _yerr(stats: pd.DataFrame, scale: float = 1.0):
    """Error bars of ``scale`` times :func:`seed_stats`' half-widths, or none when every group has a single
    row (one seed, or a frame averaged already: no interval to draw)."""
    return scale * stats["half"].to_numpy(dtype=float) if (stats["n"] > 1).any() else None


def seeds_note(df: pd.DataFrame) -> str:
    """What a figure's numbers are: ``"one seed (seed 0)"``, or ``"mean of 4 seeds (0-3), bars: 95 %
    interval"`` for a frame with a row per seed, or ``"mean of 4 seeds"`` for one averaged over them."""
    if "seed" in df.columns:
        seeds = sorted(df["seed"].unique())
        if len(seeds) == 1:
            return f"one seed (seed {seeds[0]})"
        return f"mean of {len(seeds)} seeds ({seeds[0]}-{seeds[-1]}), bars: {CONFIDENCE:.0%} interval"
    n = int(df["seeds"].max()) if "seeds" in df.columns else 1
    return "one seed" if n == 1 else f"mean of {n} seeds"


def _box(ax, x, y, w, h, text, colour):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", fc=colour, ec="k", lw=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8)


def _arrow(ax, a, b, style="-|>", ls="-"):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=10, lw=0.9, ls=ls))


def plot_architectures():
    """Fig. 2 of the paper: monolithic, two-level and shared-state scheduling in one picture."""
    fig, axes = new_figure(1, 3, size=(11.0, 3.4))
    titles = ["(a) monolithic", "(b) two-level", "(c) shared-state"]
    for ax, title in zip(axes, titles):
        ax.set_xlim(0, 10), ax.set_ylim(0, 10), ax.axis("off"), ax.set_title(title, fontsize=10)
    # (a) one scheduler, full up-to-date view
    ax = axes[0]
    _box(ax, 2.5, 6.5, 5, 2, "one scheduler\n(up-to-date view)", "#cde")
    _box(ax, 0.5, 0.8, 9, 2.5, "cluster: all machines", "#eee")
    _arrow(ax, (5, 6.5), (5, 3.3), "<|-|>")
    # (b) a manager hands partitions to schedulers
    ax = axes[1]
    _box(ax, 2.5, 7.2, 5, 1.6, "resource manager", "#fdc")
    for i, x in enumerate((0.4, 3.6, 6.8)):
        _box(ax, x, 4.3, 2.8, 1.6, f"scheduler {i + 1}", "#cde")
        _box(ax, x, 0.8, 2.8, 2.0, f"partition {i + 1}", "#eee")
        _arrow(ax, (5, 7.2), (x + 1.4, 5.9))
        _arrow(ax, (x + 1.4, 4.3), (x + 1.4, 2.8))
    # (c) CSV pushes (stale) snapshots to every LSV; commits go back to the CSV
    ax = axes[2]
    _box(ax, 2.2, 7.2, 5.6, 1.8, "central state view (CSV)\nup-to-date", "#fdc")
    for i, x in enumerate((0.4, 3.6, 6.8)):
        _box(ax, x, 4.0, 2.8, 1.9, f"scheduler {i + 1}\nLSV (stale)", "#cde")
        _arrow(ax, (5, 7.2), (x + 1.4, 5.9), ls="--")
        _arrow(ax, (x + 2.2, 5.9), (5.6, 7.2))
    _box(ax, 0.4, 0.6, 9.2, 2.0, "cluster: all machines, seen by every scheduler", "#eee")
    ax.text(5, 3.2, "dashed: snapshot every d_u   solid: commit (conflict check)", ha="center", fontsize=7)
    return fig


def plot_timeline(tl):
    """CSV free CPU vs scheduler 0's view on one machine: released slots stay invisible until a sync."""
    fig, ax = new_figure(size=(9.0, 3.4))
    step_curve(ax, tl.times, tl.csv_free, tl.horizon, color="tab:green", label="free in the CSV (truth)")
    step_curve(ax, tl.times, tl.view_free, tl.horizon, color="tab:purple", ls="--", label="free in scheduler 0's LSV")
    t = np.append(tl.times, tl.horizon)
    c = np.append(tl.csv_free, tl.csv_free[-1])
    v = np.append(tl.view_free, tl.view_free[-1])
    ax.fill_between(t, v, c, where=c > v, step="post", color="tab:green", alpha=0.25, label="invisible (shadow)")
    ax.fill_between(t, c, v, where=v > c, step="post", color="tab:purple", alpha=0.15,
                    label="taken by another scheduler (conflict risk)")
    for s in tl.syncs:
        ax.axvline(s, color="k", lw=0.5, alpha=0.4)
    ax.plot(tl.releases, np.interp(tl.releases, tl.times, tl.csv_free), "v", color="tab:red", ms=5,
            label="a task ends (release)")
    ax.set_xlabel("time (s)   (vertical lines: view updates)")
    ax.set_ylabel(f"free CPU slots on machine {tl.machine}")
    ax.set_xlim(0, tl.horizon)
    ax.legend(loc="upper right", ncol=2)
    ax.set_title("Stale local view: what ends between two updates stays invisible until the next")
    return fig


def plot_shadow_run(result, window: float | None = None):
    """Shadow amount over time (sawtooth between updates) with the theory, and survival times."""
    fig, axes = new_figure(1, 2, size=(11.0, 3.4))
    ax = axes[0]
    cfg = result.config
    if cfg.update_delay == 0:
        for a in axes:
            a.text(0.5, 0.5, "update_delay = 0: every view is always fresh,\nso nothing is ever invisible: no shadow "
                             "to measure.\nMove update_delay above 0.", ha="center", va="center", fontsize=9,
                   transform=a.transAxes)
            a.set_xticks([]), a.set_yticks([])
        axes[0].set_title("Shadow resources: none (d_u = 0)")
        axes[1].set_title("Survival times: none (d_u = 0)")
        return fig
    if "shadow" in result.series:
        times, values = result.series["shadow"]
        # the last ten update periods: the cluster has filled up by then (it starts empty)
        span = window or 10 * max(cfg.update_delay, 0.1)
        start, end = max(cfg.horizon - span, 0.0), cfg.horizon
        keep = times >= start
        t0 = times[keep]
        v0 = values[keep]
        before = np.flatnonzero(times < start)
        if len(before):
            t0, v0 = np.insert(t0, 0, start), np.insert(v0, 0, values[before[-1]])
        step_curve(ax, t0, v0, end, color="tab:green", lw=0.8, label="shadow S(t) (CPU slots)")
        ax.axhline(result.mean_shadow, color="tab:green", ls=":", label=f"time average {result.mean_shadow:.1f}")
        ax.axhline(result.theory_shadow_ratio * result.mean_allocated, color="k", ls="--",
                   label=f"theory d_u·A/2l = {result.theory_shadow_ratio * result.mean_allocated:.1f}")
        ax.set_xlim(start, end)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("CPU slots")
    ax.set_title(f"Shadow resources (ratio {result.shadow_ratio:.3f} vs theory {result.theory_shadow_ratio:.3f})")
    # below the axes, in a row: inside, it covered S(t), which fills the axes
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    ax = axes[1]
    edges, dens = result.survival_hist
    ax.stairs(dens, edges, fill=True, alpha=0.5, color="tab:green", label="measured")
    if cfg.update_delay > 0:
        ax.axhline(1 / cfg.update_delay, color="k", ls="--", label="U(0, d_u) of §2.3")
    ax.set_xlabel("survival time T_s (s)")
    ax.set_ylabel("density (weighted by amount)")
    ax.set_title(f"Survival times (mean {result.survival_mean:.3f} s, d_u/2 = {cfg.update_delay / 2:.3f} s)")
    ax.legend()
    return fig


def plot_fig4(df):
    """Fig. 4: measured vs theoretical shadow ratio over (d_u, l), pooled over the frame's seeds (mean,
    and the 95 % interval of the mean when there are several)."""
    fig, axes = new_figure(1, 2, size=(11.0, 3.6))
    note = seeds_note(df)
    ax = axes[0]
    cells = ["update_delay", "mean_task_duration"]
    measured = seed_stats(df, cells, "measured")
    theory = df.groupby(cells, sort=False)["theory"].first()
    labels = [f"{d_u:g}/{l:g}" for d_u, l in measured.index]
    x = np.arange(len(measured))
    ax.bar(x - 0.2, theory.loc[measured.index], 0.4, label="theory d_u/2l", color="tab:gray")
    ax.bar(x + 0.2, measured["mean"], 0.4, yerr=_yerr(measured), capsize=2, label="measured (exact integral)",
           color="tab:green")
    ax.set_xticks(x, labels, rotation=60, fontsize=7)
    ax.set_xlabel("update delay d_u (s) / mean task duration l (s)")
    ax.set_ylabel("shadow / allocated")
    ax.legend()
    ax.set_title(f"Fig. 4 in miniature: {note}", fontsize=9)
    ax = axes[1]
    deviation = seed_stats(df, cells, "deviation")
    for d_u in dict.fromkeys(deviation.index.get_level_values(0)):
        sub = deviation.xs(d_u, level=0).sort_index()
        ax.errorbar(sub.index, 100 * sub["mean"], yerr=_yerr(sub, 100), fmt="o-", capsize=2,
                    label=f"d_u = {d_u:g} s")
    ax.axhline(0, color="k", lw=0.6)
    ax.axhspan(-15, 15, color="tab:green", alpha=0.08, label="±15%")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ticks = sorted(df["mean_task_duration"].unique())
    ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
    ax.minorticks_off()
    ax.set_xlabel("mean task duration l (s)")
    ax.set_ylabel("measured / theory − 1 (%)")
    ax.set_title(f"Deviation from the model: {note}", fontsize=9)
    ax.legend()
    return fig


def _cell_bars(ax, df, cells, modes, col, scale):
    """Bars per (schedulers, workload_level) cell and mode: the mean over the frame's seeds, with the interval of
    the mean as an error bar when the frame has a row per seed."""
    x = np.arange(len(cells))
    w = 0.8 / len(modes)
    stats = seed_stats(df, ["mode", "schedulers", "workload_level"], col)
    for i, m in enumerate(modes):
        sub = stats.loc[m].loc[cells]
        ax.bar(x + (i - (len(modes) - 1) / 2) * w, scale * sub["mean"].to_numpy(), w, color=MODE_COLOURS[m],
               label=MODE_NAMES[m], yerr=_yerr(sub, scale), capsize=2, error_kw={"lw": 0.8})
    ax.set_xticks(x, [f"{k} sched.\n{l:g}x workload" for k, l in cells], fontsize=7)
    return x


def plot_modes(df):
    """Figs. 10, 12, 13, 14 in miniature. Top: utilisation, throughput, job wait and conflicts per
    mode. Bottom: the gains over NoRM (points, %), what RMiner adds beyond NoRM + 1 scheduler, and the
    share of shadow RMiner used (lines, labelled). A frame with a row per seed (``compare_modes(...,
    per_seed=True)``) is pooled: bars are the mean over the seeds with the 95 % interval of the mean (for
    the gains, of the paired differences); the title says how many seeds, or "one seed"."""
    fig, axes = new_figure(2, 4, size=(13.0, 6.9))
    cells = [(k, l) for k, l in df[["schedulers", "workload_level"]].drop_duplicates().itertuples(index=False)]
    modes = [m for m in ("none", "plus1", "safe", "smart") if m in set(df["mode"])]
    top = [("cpu_utilization", "CPU utilisation (%)", 100), ("throughput", "throughput (tasks/s)", 1),
           ("mean_job_wait", "mean job wait (s)", 1), ("conflict_rate", "conflict rate (%)", 100)]
    for ax, (col, title, scale) in zip(axes[0], top):
        _cell_bars(ax, df, cells, modes, col, scale)
        ax.set_title(title, fontsize=9)
    others = [m for m in modes if m != "none"]
    rm_modes = [m for m in modes if m in ("safe", "smart")]
    bottom = [("util_gain", "utilisation gain over NoRM (points)", 100, others),
              ("throughput_gain", "throughput gain over NoRM (%)", 100, others),
              ("util_gain_vs_plus1", "utilisation gain over NoRM + 1 (points)", 100, rm_modes)]
    for ax, (col, title, scale, ms) in zip(axes[1], bottom):
        if col in df and ms:
            _cell_bars(ax, df, cells, ms, col, scale)
            ax.axhline(0, color="k", lw=0.6)
        ax.set_title(title, fontsize=9)
    ax = axes[1][3]
    x = np.arange(len(cells))
    if rm_modes:
        stats = seed_stats(df, ["mode", "schedulers", "workload_level"], "shadow_used_share")
    for m in rm_modes:
        sub = stats.loc[m].loc[cells]
        ax.errorbar(x, 100 * sub["mean"].to_numpy(), yerr=_yerr(sub, 100), fmt="o-", capsize=2,
                    color=MODE_COLOURS[m], label=f"{MODE_NAMES[m]}: shadow used")
    ax.set_xticks(x, [f"{k} sched.\n{l:g}x workload" for k, l in cells], fontsize=7)
    ax.set_ylim(bottom=0)
    ax.set_title("share of the shadow used by RM tasks (%)", fontsize=9)
    legend_beside(ax)  # inside, it covered the points at default
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(modes), frameon=False)
    fig.suptitle(f"Figs. 10-14 in miniature: {seeds_note(df)}", fontsize=10)
    return fig


def plot_reach(df, paper_util: float = 5.8, paper_throughput: float = 28.0):
    """Gains over NoRM of each RMiner setting and of NoRM + 1 scheduler, against the paper's headline
    (lines); SmartRM's bars split into shadow use, RM normal path and the normal schedulers."""
    fig, axes = new_figure(1, 2, size=(12.0, 0.5 * len(df) + 1.6))
    sub = df[df["mode"] != "none"].reset_index(drop=True)
    y = np.arange(len(sub))[::-1]
    ax = axes[0]
    left = np.zeros(len(sub))
    parts = [("gain_from_shadow", "RM tasks on shadow", "tab:orange"),
             ("gain_from_rm_normal_path", "RM scheduler, normal path", "tab:red"),
             ("gain_from_normal", "normal schedulers", "tab:gray")]
    plus = (sub["mode"] == "plus1").to_numpy()
    for col, label, colour in parts:
        v = 100 * sub[col].to_numpy()
        colours = [MODE_COLOURS["plus1"] if p and col == "gain_from_normal" else colour for p in plus]
        ax.barh(y, v, left=left, color=colours)
        left = left + v
    line = ax.axvline(paper_util, color="k", ls="--")
    ax.axvline(0, color="k", lw=0.6)
    ax.set_yticks(y, sub["setting"], fontsize=7)
    ax.set_xlabel("utilisation gain over NoRM (points)")
    handles = [Patch(color=c, label=f"SmartRM: {label}") for _, label, c in parts]
    handles += [Patch(color=MODE_COLOURS["plus1"], label="NoRM + 1 scheduler"), line]
    fig.legend(handles, [h.get_label() for h in handles[:-1]] + [f"paper: +{paper_util:g} points"],
               loc="outside lower center", ncol=len(handles), frameon=False)
    ax = axes[1]
    ax.barh(y, 100 * sub["throughput_gain"].to_numpy(), color=[MODE_COLOURS[m] for m in sub["mode"]])
    ax.axvline(paper_throughput, color="k", ls="--")
    ax.set_yticks(y, [""] * len(y))
    ax.set_xlabel(f"throughput gain over NoRM (%)  (dashed: paper, +{paper_throughput:g}%)")
    fig.suptitle(f"Gains over NoRM of each setting: {seeds_note(df)}", fontsize=10)
    return fig


def plot_node_utilisation(series: dict, title: str = ""):
    """Fig. 11: mean per-node CPU utilisation over time (line) and its spread over nodes (one standard
    deviation, shaded), per mode."""
    fig, ax = new_figure(size=(9.0, 3.4))
    for mode, (t, mean, std) in series.items():
        c = MODE_COLOURS[mode]
        ax.plot(t, 100 * mean, color=c, label=f"{MODE_NAMES[mode]} (mean {100 * mean[len(mean) // 2:].mean():.1f}% "
                                               f"in the second half)")
        ax.fill_between(t, 100 * (mean - std), 100 * (mean + std), color=c, alpha=0.15)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("per-node CPU utilisation (%)")
    ax.set_ylim(bottom=0)
    ax.set_title(title or "Fig. 11 in miniature: node utilisation (line: mean over nodes; band: ± 1 s.d.)", fontsize=9)
    ax.legend(loc="lower right")
    return fig


def plot_variants(df):
    """Figs. 15-16: throughput and utilisation of NoRM and the SmartRM variants per update delay, and
    the share of RM tasks killed by conflicts (with the counts)."""
    fig, axes = new_figure(1, 3, size=(13.0, 3.6))
    delays = sorted(df["update_delay"].unique())
    variants = list(dict.fromkeys(df["variant"]))
    colours = {"NoRM": "tab:gray", "NoRM + 1 scheduler": "tab:purple", "SmartRM": "tab:orange",
               "SmartRM-C": "tab:brown", "SmartRM-A": "tab:red"}
    x = np.arange(len(delays))
    w = 0.8 / len(variants)
    for ax, (col, title, scale) in zip(axes, [("throughput", "throughput (tasks/s)", 1),
                                              ("cpu_utilization", "CPU utilisation (%)", 100),
                                              ("rm_killed_share", "RM tasks killed by conflicts (%)", 100)]):
        for i, v in enumerate(variants):
            sub = df[df["variant"] == v].set_index("update_delay").reindex(delays)
            xs = x + (i - (len(variants) - 1) / 2) * w
            ax.bar(xs, scale * sub[col].to_numpy(), w, color=colours.get(v, "tab:blue"), label=v)
            if col == "rm_killed_share" and v.startswith("Smart"):
                for xi, k in zip(xs, sub["rm_killed"].to_numpy()):
                    ax.text(xi, 0, f"{k:.0f}", ha="center", va="bottom", fontsize=6)
        ax.set_xticks(x, [f"d_u = {d:g} s" for d in delays])
        ax.set_title(title, fontsize=9)
    lo = df["cpu_utilization"].min() * 100
    axes[1].set_ylim(max(0.0, lo - 5), None)
    lo = df["throughput"].min()
    axes[0].set_ylim(max(0.0, lo * 0.9), None)
    axes[2].set_xlabel("numbers: RM tasks killed")
    if not (df["rm_killed"] > 0).any():
        axes[2].set_ylim(0, 1)
        axes[2].text(0.5, 0.6, "no RM task was killed:\nno normal commit collided with one", ha="center",
                     va="center", fontsize=8, transform=axes[2].transAxes)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(variants), frameon=False)
    fig.suptitle(f"SmartRM variants (Figs. 15-16): {seeds_note(df)}", fontsize=10)
    return fig


def plot_run(result):
    """One run, for the panel: utilisation of CSV and RM tasks over time, and the shadow."""
    fig, axes = new_figure(1, 2, size=(11.0, 3.4))
    ax = axes[0]
    h = result.config.horizon
    cap = result.capacity_cpu
    bins = 60
    if "cpu" in result.series:
        t, v = result.series["cpu"]
        e, m = binned_means(t, v / cap, h, bins)
        ax.stairs(100 * m, e, baseline=None, label="normal tasks (in the CSV)", color="tab:gray")
        if "rm_cpu" in result.series:
            t2, v2 = result.series["rm_cpu"]
            e2, m2 = binned_means(t2, v2 / cap, h, bins)
            # RM tasks hold ~1% of the cluster: on the main axis they would be invisible
            ax2 = ax.twinx()
            ax2.stairs(100 * m2, e2, baseline=None, color=MODE_COLOURS[result.config.mode])
            ax2.set_ylabel("CPU held by RM tasks (%)", color=MODE_COLOURS[result.config.mode], fontsize=8)
            ax.plot([], [], color=MODE_COLOURS[result.config.mode], label="RM tasks on shadow (right axis)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("CPU allocated (%)")
    ax.set_title(f"{MODE_NAMES[result.config.mode]}: utilisation {100 * result.cpu_utilization:.1f}%, "
                 f"{result.throughput:.0f} tasks/s", fontsize=9)
    ax.legend(loc="lower right")
    ax = axes[1]
    labels = ["shadow ratio", "theory d_u/2l", "shadow used", "conflict rate", "RM killed share"]
    vals = [result.shadow_ratio, result.theory_shadow_ratio, result.shadow_used_share, result.conflict_rate,
            result.rm_killed_share]
    ax.barh(labels[::-1], [100 * v for v in vals[::-1]], color=["tab:red", "tab:purple", "tab:orange", "k", "tab:green"])
    for i, v in enumerate(vals[::-1]):
        ax.text(100 * v, i, f" {100 * v:.1f}%", va="center", fontsize=8)
    ax.set_xlabel("%")
    ax.set_title(f"job wait {result.mean_job_wait:.2f} s", fontsize=9)
    return fig


def plot_modes_message(df):
    """The two panels that carry section 7's message, before the full Figs. 10-14: the utilisation gain over
    NoRM of NoRM + 1 scheduler, SafeRM and SmartRM (one more normal scheduler gains more), and the share of
    the shadow each one's tasks use (only RMiner's RM tasks use any: the mechanism). Same frame and pooling
    as :func:`plot_modes`."""
    fig, axes = new_figure(1, 2, size=(10.0, 3.6))
    cells = [(k, l) for k, l in df[["schedulers", "workload_level"]].drop_duplicates().itertuples(index=False)]
    modes = [m for m in ("plus1", "safe", "smart") if m in set(df["mode"])]
    for ax, (col, title) in zip(axes, [("util_gain", "utilisation gain over NoRM (points)"),
                                       ("shadow_used_share", "share of the shadow used by RM tasks (%)")]):
        _cell_bars(ax, df, cells, modes, col, 100)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_title(title, fontsize=9)
    axes[0].legend(loc="upper right")
    fig.suptitle(f"One more scheduler gains more; only RMiner uses shadow ({seeds_note(df)})", fontsize=10)
    return fig


def plot_mining_timeline(d_u: float = 0.5, release: float = 0.1, rm_start: float = 0.2, commit: float = 0.8,
                         amount: int = 2, capacity: int = 4):
    """One machine, one fragment mined (§3, Figs. 6 and 8): a normal task releases ``amount`` CPU at
    ``release``; the RM scheduler starts an RM task on that shadow at ``rm_start`` (not committed to the
    CSV); the view update at ``d_u`` shows the CPU as free to every scheduler (the survival time T_s ends,
    the resource waiting delay W_d begins); a normal scheduler commits there at ``commit``, the CSV accepts
    (it does not know the RM task) and SmartRM kills the RM task. SafeRM would have migrated it (committed
    it to the CSV) at the update. Times in seconds, one update period from 0 to ``d_u`` and on."""
    if not 0 < release < rm_start < d_u < commit < 2 * d_u:
        raise ValueError(f"release={release!r}, rm_start={rm_start!r}, d_u={d_u!r}, commit={commit!r} are not "
                         "allowed: need 0 < release < rm_start < d_u < commit < 2 d_u (one fragment, one update)")
    if not 0 < amount < capacity:
        raise ValueError(f"amount={amount!r} is not allowed with capacity={capacity!r}: need 0 < amount < capacity")
    end = 1.25 * d_u + commit * 0.5
    fig, ax = new_figure(size=(10.0, 3.8))
    csv, lsv = "free in the CSV\n(it does not know RM tasks)", "free in the normal\nschedulers' views (LSVs)"
    lanes = {csv: 3, lsv: 2, "RM task (SmartRM)": 1, "RM task (SafeRM)": 0}
    for y in lanes.values():
        ax.axhline(y, color="0.85", lw=0.8, zorder=0)
    # what is free on the machine, in the CSV and in the views (the machine is otherwise full)
    ax.broken_barh([(release, commit - release)], (lanes[csv] - 0.3, 0.6), color="tab:green",
                   alpha=0.6)
    ax.broken_barh([(d_u, commit - d_u)], (lanes[lsv] - 0.3, 0.6), color="tab:purple",
                   alpha=0.5)
    ax.broken_barh([(rm_start, commit - rm_start)], (lanes["RM task (SmartRM)"] - 0.3, 0.6), color="tab:orange")
    ax.broken_barh([(rm_start, d_u - rm_start)], (lanes["RM task (SafeRM)"] - 0.3, 0.6), color="tab:blue")
    ax.broken_barh([(d_u, end - d_u)], (lanes["RM task (SafeRM)"] - 0.3, 0.6), color="tab:blue", alpha=0.35,
                   hatch="//")
    ax.text(d_u + 0.02, lanes["RM task (SafeRM)"] + 0.35, "migrated: committed to the CSV at the update",
            fontsize=7, va="bottom")
    ax.text(commit + 0.01, lanes["RM task (SmartRM)"], "killed", fontsize=8, va="center", color="tab:red")
    # the events
    events = [(release, f"release:\na normal task\nfrees {amount} CPU"), (rm_start, "RM task starts\n(on shadow,\nnot committed)"),
              (d_u, "view update"), (commit, "normal commit\n(CSV accepts:\nconflict)")]
    for t, label in events:
        ax.axvline(t, color="k", lw=0.6, ls=":" if t != d_u else "-")
        ax.text(t, 3.75, label, fontsize=7, ha="center", va="bottom")
    # the two delays of Table 2
    y = 2.55
    ax.annotate("", (release, y), (d_u, y), arrowprops=dict(arrowstyle="<->", lw=1.0))
    ax.text((release + d_u) / 2, y + 0.05, "survival time $T_s$", ha="center", va="bottom", fontsize=8)
    ax.annotate("", (d_u, y), (commit, y), arrowprops=dict(arrowstyle="<->", lw=1.0))
    ax.text((d_u + commit) / 2, y + 0.05, "waiting delay $W_d$", ha="center", va="bottom", fontsize=8)
    ax.set_yticks(list(lanes.values()), list(lanes))
    ax.set_ylim(-0.6, 4.9)
    ax.set_xlim(0, end)
    ax.set_xlabel(f"time (s); the views were last updated at 0, the next update is at d_u = {d_u:g} s")
    ax.set_title("One fragment mined on one machine: shadow for $T_s$, visible but unused for $W_d$", fontsize=10)
    return fig
