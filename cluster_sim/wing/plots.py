"""Figures of Lab 04 (matplotlib Figures made without pyplot): the lake (Fig. 1), the self-join's
rules, Table 1 and the observations beside the paper, T1 and T2 (Figs. 2-3), value aggregation
and decay (Fig. 5), Algorithm 1 iteration by iteration and the value it finds (Fig. 6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.ticker import MaxNLocator

from ..ui import new_figure, style
from ..ui.figures import legend_beside, plain_log_ticks
from .characterise import PAPER
from .experiments import PAPER_INTRO, PAPER_ITERATIONS, Ablation, LakeSlice, WingDepsResult, lake_slice
from .predict import PAPER_T1, PAPER_T2, relative_error_cdf
from .provenance import DAY, HOUR
from .value import Figure5, owl_value, value_decay

ORG_COLOURS = ("#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5", "#d9d9d9")
PAPER_COLOUR = style.PAPER  # the paper's numbers look the same in every lab (cluster_sim.ui.style)


def _arrow(ax, a, b, colour="k", ls="-", lw=1.0, rad=0.0):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, lw=lw, ls=ls, color=colour,
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=2, shrinkB=2))


def _box(ax, x, y, w, h, text, colour, fontsize=7):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02", fc=colour, ec="k", lw=0.7))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


# ---- Fig. 1 ----------------------------------------------------------------------------------------
def plot_lake(source: WingDepsResult | LakeSlice, max_jobs: int = 6):
    """Fig. 1 on our lake: jobs of several organisations (top, one lane each, in order of
    submission) write files to the shared storage (bottom, solid arrows) and read what others
    wrote (dashed): each read of another job's output is a hidden dependency. A file written
    twice appears once per version (by its writer). Downloads of a job's outputs above its box."""
    sl = source if isinstance(source, LakeSlice) else lake_slice(source, max_jobs)
    jobs, edges = sl.jobs, sl.edges
    org_of = jobs["org"] if "org" in jobs.columns else pd.Series(0, index=jobs.index)
    orgs = sorted(org_of.unique())
    lane = {o: i for i, o in enumerate(orgs)}
    n = len(jobs)
    step = 1.9
    x_of = {j: step * i for i, j in enumerate(jobs["job"])}
    top = 2.0 + 0.85 * (len(orgs) - 1)
    y_of = {j: top - 0.85 * lane[o] for j, o in zip(jobs["job"], org_of)}
    versions: dict[tuple, list] = {}
    for e in edges.itertuples(index=False):
        versions.setdefault((e.file, e.depOn), []).append(e)
    # a file version sits under its first reader, nudged right of the one before it
    fx, last = {}, -np.inf
    for key in sorted(versions, key=lambda v: min(x_of[e.job] for e in versions[v])):
        x = max(min(x_of[e.job] for e in versions[key]) - 0.5, last + 1.5)
        fx[key], last = x, x
    right = max([step * (n - 1)] + list(fx.values()))
    fig, ax = new_figure(size=(10.5, 2.6 + 0.75 * len(orgs)))
    ax.add_patch(FancyBboxPatch((-0.9, -0.55), right + 1.8, 1.05, boxstyle="round,pad=0.02", fc="#f2f2f2",
                                ec="0.5", lw=0.8))
    ax.text(-0.8, 0.36, "shared storage: every organisation reads and writes here", fontsize=7, va="center",
            color="0.3")
    for o in orgs:
        ax.text(-1.0, top - 0.85 * lane[o], f"org {o}", ha="right", va="center", fontsize=8, color="0.2")
        ax.axhline(top - 0.85 * lane[o], color=ORG_COLOURS[lane[o] % len(ORG_COLOURS)], lw=6, alpha=0.3, zorder=0)
    for (f, w), es in versions.items():
        x = fx[(f, w)]
        ax.add_patch(FancyBboxPatch((x - 0.65, -0.32), 1.3, 0.42, boxstyle="square,pad=0.0", fc="white", ec="0.3",
                                    lw=0.6))
        ax.text(x, -0.11, f"{f}\n(by job {w})", ha="center", va="center", fontsize=5.2)
        _arrow(ax, (x_of[w], y_of[w] - 0.3), (x - 0.25, 0.1), colour="tab:blue")
        for e in es:
            more = f" +{e.files - 1}" if e.files > 1 else ""
            _arrow(ax, (x + 0.25, 0.1), (x_of[e.job] + 0.1, y_of[e.job] - 0.3), colour="tab:green", ls="--")
            if more:
                ax.text(x + 0.3, 0.2, f"{more} files", fontsize=5, color="tab:green")
    for r, o in zip(jobs.itertuples(index=False), org_of):
        label = f"job {r.job}\n{r.template}\nat {r.submit / HOUR:.0f} h"
        _box(ax, x_of[r.job], y_of[r.job], 1.4, 0.58, label, ORG_COLOURS[lane[o] % len(ORG_COLOURS)], fontsize=6)
        if r.k > 0:
            ax.text(x_of[r.job], y_of[r.job] + 0.36, f"{r.k:g} downloads", ha="center", fontsize=6, color="0.25")
    ax.plot([], [], color="tab:blue", label="W: the job wrote this version")
    ax.plot([], [], color="tab:green", ls="--", label="R: a job read it (a hidden dependency)")
    ax.legend(loc="upper right", frameon=False)
    ax.set_xlim(-1.9, right + 1.0)
    ax.set_ylim(-0.75, top + 0.65)
    ax.axis("off")
    ax.set_title(f"A slice of the lake: {n} jobs of {len(orgs)} organisations and the files between them "
                 f"(job {sl.target} at the end)", fontsize=9)
    return fig


def plot_provenance(prov: pd.DataFrame, unit: float = DAY, unit_name: str = "day"):
    """A ProvRepo log drawn per file: each write (W) and read (R) at its time, labelled with its job.
    A long quiet stretch (more than half the log) is cut out of the time axis."""
    files = list(dict.fromkeys(prov["file"]))
    t = np.sort(prov["time"].to_numpy(float) / unit)
    gaps = np.diff(t)
    cut = int(np.argmax(gaps)) if len(gaps) and gaps.max() > 0.5 * (t[-1] - t[0]) else None
    spans = [(t[0], t[-1])] if cut is None else [(t[0], t[cut]), (t[cut + 1], t[-1])]
    fig = Figure(figsize=(9.0, 0.55 * len(files) + 1.1), layout="constrained")
    widths = [max(hi - lo, 1.0) for lo, hi in spans]
    axes = np.atleast_1d(fig.subplots(1, len(spans), sharey=True, gridspec_kw={"width_ratios": widths}))
    for ax, (lo, hi) in zip(axes, spans):
        for i, f in enumerate(files):
            ax.axhline(i, color="0.85", lw=1, zorder=0)
            for r in prov[prov["file"] == f].itertuples(index=False):
                x = r.time / unit
                if not lo - 1e-9 <= x <= hi + 1e-9:
                    continue
                colour, marker, tag = {"write": ("tab:blue", "s", "W"), "read": ("tab:green", "o", "R")}.get(
                    r.op, ("0.5", "v", "D"))
                ax.plot(x, i, marker, color=colour, ms=7)
                ax.annotate(f"{tag} {r.job}", (x, i), textcoords="offset points", xytext=(0, 7), ha="center",
                            fontsize=7, color=colour)
        pad = 0.08 * max(hi - lo, 1.0)
        ax.set_xlim(lo - pad, hi + pad)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=max(2, min(8, int(hi - lo) + 1)), integer=True))
        ax.set_xlabel(f"time ({unit_name}s)")
    axes[0].set_yticks(range(len(files)), files, fontsize=8)
    axes[0].set_ylim(-0.6, len(files) - 0.2)
    if len(axes) > 1:
        axes[1].tick_params(left=False)
        axes[0].spines["right"].set_linestyle(":")
        axes[1].spines["left"].set_linestyle(":")
    fig.suptitle("The log: W = a job wrote the file, R = a job read it (label: the job)"
                 + ("; the time axis skips a quiet stretch" if len(axes) > 1 else ""), fontsize=9)
    return fig


# ---- the self-join's rules -----------------------------------------------------------------------
def plot_rules(ab: Ablation):
    """Each rule of the self-join, dropped: (a) reads matched to later writes, (b) reads matched to
    several writers, (c) older writers depended upon more without the window."""
    fig, axes = new_figure(1, 3, size=(12.0, 3.3))
    ax = axes[0]
    lags = ab.lags_without_rw / HOUR
    lim = np.nanpercentile(np.abs(lags), 99) if len(lags) else 1.0
    bins = np.linspace(-lim, lim, 41)
    ax.hist(lags[lags >= 0], bins=bins, color="tab:blue", label="write before the read")
    ax.hist(lags[lags < 0], bins=bins, color="tab:red", label=f"write after the read ({int((lags < 0).sum())})")
    ax.set_xlabel("read time - write time (hours)")
    ax.set_ylabel("matched reads")
    ax.set_title("(a) without R/W correctness", fontsize=9)
    ax.legend()
    ax = axes[1]
    w = ab.writers_per_read
    ax.bar(w.index.astype(int), w.to_numpy(), color=["tab:blue" if i == 1 else "tab:red" for i in w.index])
    ax.set_xlabel("writers a read is matched to")
    ax.set_ylabel("reads")
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_title("(b) without last-writer wins (1 is right)", fontsize=9)
    ax = axes[2]
    d = ab.per_writer_day
    ax.plot(d.iloc[:, 0], d["without T"], "o-", color="tab:red", ms=3, label="without the window")
    ax.plot(d.iloc[:, 0], d["with T"], "o-", color="tab:blue", ms=3, label=f"with T = {ab.window / DAY:g} days")
    ax.set_xlabel("day the upstream job wrote its output")
    ax.set_ylabel("dependents per upstream job")
    ax.set_title("(c) without the time window: early writers gain", fontsize=9)
    legend_beside(ax)  # inside, it covered one of the curves
    return fig


# ---- Table 1 and the observations ----------------------------------------------------------------
def plot_table1(t1: pd.DataFrame):
    """Table 1's characteristics as its heuristics measure them, beside the generator's truth."""
    fig, ax = new_figure(size=(8.0, 3.2))
    y = np.arange(len(t1))
    ax.barh(y + 0.2, t1["share"], height=0.4, color="tab:blue", label="Table 1's heuristics (what Wing sees)")
    if "generator's truth" in t1.columns and t1["generator's truth"].notna().any():
        ax.barh(y - 0.2, t1["generator's truth"], height=0.4, color="0.6", label="the generator's truth")
    ax.set_yticks(y, [f"{c} (of {o})" for c, o in zip(t1["characteristic"], t1["of"])], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share")
    ax.legend(loc="lower right")
    ax.set_title("Table 1 on our lake", fontsize=9)
    return fig


def plot_observations(table: pd.DataFrame):
    """The paper's numbers (red diamonds) beside ours over the pool (bar: min to max over the seeds, dot:
    the mean), for every reported row of a claims table (:func:`~cluster_sim.wing.claims.claims_table`)
    that is a share with a number from the paper; the seeds' values come from ``table.attrs["runs"]``."""
    runs = table.attrs.get("runs")
    if runs is None:
        raise ValueError("table has no attrs['runs']: give claims_table's result (it keeps the per-seed frame)")
    c = table[(table["verdict"] == "reported") & table["paper"].notna() & (table["paper"] <= 1.0)]
    c = c[c["metric"].isin(runs.columns)]
    values = [runs[m].astype(float) for m in c["metric"]]
    fig, ax = new_figure(size=(9.0, 0.28 * len(c) + 1.2))
    y = np.arange(len(c))
    ax.hlines(y, [v.min() for v in values], [v.max() for v in values], color="tab:blue", lw=4, alpha=0.5)
    ax.plot(c["ours"], y, "o", color="tab:blue", ms=4, label=f"ours (mean; bar: min to max over {runs['seed'].nunique()} seeds)")
    ax.plot(c["paper"], y, "D", color=PAPER_COLOUR, ms=5, label="the paper")
    ax.set_yticks(y, [f"{s}: {m}" for s, m in zip(c["source"], c["metric"])], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("share")
    fig.legend(loc="outside lower center", ncol=2, frameon=False)
    ax.set_title("The paper's numbers beside ours", fontsize=9)
    return fig


# ---- §3: Figs. 2 and 3 ------------------------------------------------------------------------------
def _fig2(ax, curve, tr=None, best=None):
    ax.plot(curve["recall"], curve["precision"], "o-", color="tab:blue", ms=3)
    labelled = []  # points already labelled: a label next to a close one would print over it
    for r in curve.iloc[::4].itertuples(index=False):
        if any(np.hypot(r.recall - x, r.precision - y) < 0.08 for x, y in labelled):
            continue
        labelled.append((r.recall, r.precision))
        # a point at the top edge (precision near 1) gets its label below it: above, it would print into the title
        ax.annotate(f"{r.tr:g}%", (r.recall, r.precision), textcoords="offset points", fontsize=7,
                    xytext=(4, -10) if r.precision > 0.95 else (4, 3))
    if best is not None and np.isfinite(best):
        b = curve[curve["tr"] == best].iloc[0]
        ax.plot(b["recall"], b["precision"], "*", color="tab:orange", ms=12, label=f"best tr = {best:g}% (max P x R)")
    if tr is not None:
        row = curve.iloc[int(np.argmin(np.abs(curve["tr"] - tr)))]
        ax.plot(row["recall"], row["precision"], "s", mfc="none", mec="k", ms=9, label=f"tr = {tr:g}% (the panel's)")
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower left")
    ax.set_title(f"Fig. 2: T1 over tr (the paper's best: {PAPER_T1['best tr (%)']:g}%)", fontsize=9)


def plot_fig2(result: WingDepsResult):
    """Fig. 2: T1's precision-recall trade-off over the threshold tr (labels: tr)."""
    fig, ax = new_figure(size=(5.0, 4.0))
    _fig2(ax, result.curve, result.tr, result.best_tr)
    return fig


def _fig3(ax, errors: dict):
    for tr, e in errors.items():
        cdf = relative_error_cdf(e)
        ax.plot(cdf["relative_error"], cdf["cdf"], label=f"tr = {tr:g}% ({len(e)} predictions)")
    ax.axvspan(-0.2, 0.2, color="tab:green", alpha=0.12, label="within ±20% (the paper: 50%)")
    ax.axvline(1.0, color="k", ls=":", lw=0.8)
    ax.text(1.03, 0.6, "right of this line:\nover-estimated 2x or more\n(the paper: 7%)", fontsize=6)
    ax.set_xlabel("relative error (f - a) / a")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    legend_beside(ax)  # inside, it covered a curve at default
    ax.set_title(f"Fig. 3: T2's time to dependency\n(the paper: RMSE {PAPER_T2['RMSE (h)']:g} h, "
                 f"MAE {PAPER_T2['median absolute error (min)']:g} min)", fontsize=8)


def plot_fig3(errors: dict | WingDepsResult):
    """Fig. 3: the CDF of T2's relative error (forecast - actual) / actual, one curve per threshold tr."""
    if isinstance(errors, WingDepsResult):
        errors = {errors.tr: errors.t2}
    fig, ax = new_figure(size=(6.0, 3.6))
    _fig3(ax, errors)
    return fig


# ---- §4: Fig. 5, Algorithm 1, Fig. 6 ---------------------------------------------------------------
def plot_fig5(ex: Figure5):
    """Fig. 5: the toy DAG on a time axis (left) and the aggregate value the root keeps if it completes at t (right)."""
    fig, axes = new_figure(1, 2, size=(11.0, 3.4))
    ax = axes[0]
    agg = owl_value(ex.deps, ex.k)
    rows = {"A": 1.0, "B": 2.0, "C": 0.0, "D": -0.5, "E": 0.5}
    for j in ex.k.index:
        y = rows.get(j, 0.0)
        _box(ax, ex.submit[j], y, 1.2, 0.55, f"{j}: k={ex.k[j]:g}\nagg={agg[j]:g}", "#cde" if j != "A" else "#fdc")
    for d, u in zip(ex.deps["job"], ex.deps["depOn"]):
        _arrow(ax, (ex.submit[u] + 0.6, rows.get(u, 0.0)), (ex.submit[d] - 0.6, rows.get(d, 0.0)), colour="0.3")
    ax.set_xlim(-1, ex.submit.max() + 1.5)
    ax.set_ylim(-1.1, 2.6)
    ax.set_yticks([])
    ax.set_xlabel("submission time (hours after A)")
    ax.set_title("B and C read A; D and E read C (hard dependencies)", fontsize=9)
    ax = axes[1]
    t = np.linspace(0, ex.submit.max() + 2, 401)
    v = value_decay(ex.deps, ex.k, ex.submit, "A", t)
    ax.step(t, v, where="post", color="tab:blue")
    for j in ("B", "C"):
        ax.axvline(ex.submit[j], color="0.6", ls=":", lw=0.8)
        ax.text(ex.submit[j] + 0.05, v.max() * 0.92, f"{j} submitted", fontsize=7, color="0.4")
    ax.set_xlabel("the time A completes (hours after its submission)")
    ax.set_ylabel("aggregate value A still earns")
    ax.set_ylim(0, v.max() * 1.05)
    ax.set_title(f"Value decay: B's share lost at {ex.submit['B']:g} h, C's (with D's and E's) at {ex.submit['C']:g} h",
                 fontsize=9)
    return fig


def plot_doubling(trace: pd.DataFrame):
    """Algorithm 1 iteration by iteration: pairs in the short table and the frontier, and the longest path covered."""
    fig, axes = new_figure(1, 2, size=(10.5, 3.2))
    ax = axes[0]
    i = trace["iteration"]
    ax.bar(i, trace["short pairs"], color="tab:blue", label="short: paths of fewer than 2^i hops")
    ax.bar(i, trace["frontier pairs"], bottom=trace["short pairs"], color="tab:orange",
           label="frontier: paths of exactly 2^i hops")
    ax.set_xlabel("iteration i")
    ax.set_ylabel("(job, depOn) rows")
    ax.set_xticks(i)
    ax.legend()
    ax.set_title(f"The loop stops when the frontier is empty: {int(i.iloc[-1])} iterations", fontsize=9)
    ax = axes[1]
    ax.step(i, trace["paths up to (hops)"], where="mid", color="tab:blue", label="paths covered: up to 2^i hops")
    D = trace.attrs.get("diameter")
    if D is not None:
        ax.axhline(D, color="tab:red", ls="--", label=f"diameter D = {D}")
    ax.set_yscale("log", base=2)
    plain_log_ticks(ax.yaxis)
    ax.set_xticks(i)
    ax.set_xlabel("iteration i")
    ax.set_ylabel("hops")
    ax.legend()
    ax.set_title("floor(log2 D) + 1 iterations reach the longest path", fontsize=9)
    return fig


def _fig6(ax, ex: pd.DataFrame):
    x = np.arange(len(ex))
    ax.bar(x, ex["share"], color="tab:blue", label="share of the total aggregate value")
    ax.plot(x, ex["mean_job_share"], "o-", color="tab:orange", ms=3, label="mean of each job's share")
    ax.axhline(0.99, color=PAPER_COLOUR, ls="--", lw=0.8)
    it = np.flatnonzero(ex["hops"].to_numpy() == 2 ** PAPER_ITERATIONS)
    if it.size:
        ax.axvline(it[0], color=PAPER_COLOUR, ls=":", lw=0.8)
    ax.text(0.02, 0.97, f"the paper: 99% within {PAPER_ITERATIONS} iterations; 17% job-local (83% hidden)",
            transform=ax.transAxes, fontsize=6, color=PAPER_COLOUR, va="top")
    labels = ["job-local" if s == "job-local" else ("1 hop" if s == "single hop" else f"it {s.split()[-1]}\n≤{h}")
              for s, h in zip(ex["stage"], ex["hops"])]
    ax.set_xticks(x, labels, fontsize=6)
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("value found")
    ax.legend(loc="center right")


def plot_fig6(result: WingDepsResult):
    """Fig. 6: the share of aggregate value Algorithm 1 has found after each iteration (valid jobs, window ω)."""
    fig, ax = new_figure(size=(6.5, 3.4))
    _fig6(ax, result.exploration)
    ax.set_title(f"Fig. 6: value found per iteration ({len(result.valid)} valid jobs, ω = {result.omega / DAY:g} days)",
                 fontsize=9)
    return fig


def plot_overview(result: WingDepsResult):
    """The panel's figure: T1 (Fig. 2), T2 (Fig. 3), value per iteration (Fig. 6) and the lake's headline shares."""
    fig, axes = new_figure(2, 2, size=(10.0, 6.4))
    _fig2(axes[0, 0], result.curve, result.tr, result.best_tr)
    ax = axes[0, 1]
    if len(result.t2):
        _fig3(ax, {result.tr: result.t2})
    else:
        ax.text(0.5, 0.5, f"no prediction at tr = {result.tr:g}% was both made and right", ha="center",
                transform=ax.transAxes, fontsize=8)
        ax.set_title("Fig. 3: T2", fontsize=9)
    _fig6(axes[1, 0], result.exploration)
    axes[1, 0].set_title(f"Fig. 6: {result.iterations} iterations with ω = {result.omega / DAY:g} days", fontsize=9)
    ax = axes[1, 1]
    s = result.shares
    names = ["jobs depending on at least one other job", "recurring job share", "recurring dependency share",
             "cross-org share of dependencies", "value hidden from job-local valuation"]
    paper = [PAPER_INTRO[names[0]][0], PAPER["recurring job share"], PAPER["recurring dependency share"],
             PAPER["cross-org share of dependencies"], PAPER_INTRO[names[4]][0]]
    vals = [s.get(n, np.nan) for n in names]
    y = np.arange(len(names))
    ax.barh(y, vals, color="tab:blue", label="this lake")
    ax.plot(paper, y, "D", color=PAPER_COLOUR, label="the paper")
    ax.set_yticks(y, names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    legend_beside(ax)  # inside, it hid the paper's diamonds
    T = "none" if result.window is None else f"{result.window / DAY:g} days"
    ax.set_title(f"{int(s['jobs'])} jobs, {int(s['dependencies'])} dependencies (T = {T})", fontsize=9)
    return fig
