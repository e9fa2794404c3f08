"""The notebook's figures: ``plot_*(result) -> matplotlib Figure`` (made with ``cluster_sim.ui.new_figure``,
never pyplot, so a panel redraw leaks no global figure).

>>> from cluster_sim.shaper.experiments import run_job
>>> from cluster_sim.shaper.config import ShaperConfig
>>> fig = plot_skyline(run_job(ShaperConfig.ci()))
>>> [ax.get_xlabel() for ax in fig.axes]
['time (s)']
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd

from cluster_sim.ui import new_figure, plot_cdf, step_curve

from .experiments import ClusterResult, FleetResult, JobResult, Snapshot
from .graph import StageGraph


def plot_cluster(result: ClusterResult):
    """Tokens held by all jobs and jobs waiting for admission, shaping off vs on."""
    fig, axes = new_figure(2, 1, size=(8.0, 4.6))
    colours = {"off": "k"}
    end = max(r.jobs["finished"].max() for r in result.runs.values())
    for mode, r in result.runs.items():
        c = colours.get(mode, "tab:blue")
        label = f"{mode}: mean queueing {r.jobs['queueing'].mean():.0f} s, mean completion {r.jobs['completion'].mean():.0f} s"
        step_curve(axes[0], *r.held, t_end=end, color=c, lw=1.3, label=label)
        step_curve(axes[1], *r.waiting, t_end=end, color=c, lw=1.3)
    axes[0].axhline(result.shaped.capacity, color="grey", ls=":", lw=1, label="token capacity")
    axes[0].set_ylabel("tokens held")
    # below the axes: inside, a legend covers one of the curves (the static one reaches the capacity)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    axes[1].set_ylabel("jobs waiting")
    axes[1].set_xlabel("time (s)")
    axes[0].set_title(f"a token-limited virtual cluster: the same job stream, shaping off vs on\n(one seed, "
                      f"{result.config.seed}; the claims pool seeds)", fontsize=10)
    return fig



# ---- figures --------------------------------------------------------------------------------------
#: plans up to this many stages get curved arrows; bigger ones straight lines (a panel redraws in time)
ARROWS_UP_TO = 24
NODE_SIZE = 260
TREE_COLOURS = ("#d62728", "#2ca02c", "#e6b800", "#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def _layers(graph: StageGraph) -> dict:
    depth = {}
    for s in graph.topological_order:
        depth[s] = 1 + max((depth[p] for p in graph.producers(s)), default=-1)
    return depth


def layered_positions(graph: StageGraph, sweeps: int = 6) -> dict:
    """Node positions: one row per depth (inputs on top), each row ordered by the barycentre of the
    neighbours in the rows above and below (a few sweeps), so edges cross few nodes and labels."""
    depth = _layers(graph)
    rows: dict[int, list[str]] = {}
    for s in graph.stages:
        rows.setdefault(depth[s], []).append(s)
    x = {s: float(i) for r in rows.values() for i, s in enumerate(r)}
    for k in range(sweeps):
        order = sorted(rows) if k % 2 == 0 else sorted(rows, reverse=True)
        for d in order:
            def centre(s):
                nbrs = graph.producers(s) if k % 2 == 0 else graph.consumers(s)
                return float(np.mean([x[n] for n in nbrs])) if nbrs else x[s]
            rows[d].sort(key=lambda s: (centre(s), x[s]))
            for i, s in enumerate(rows[d]):
                x[s] = i - (len(rows[d]) - 1) / 2
    return {s: (x[s], -float(depth[s])) for s in graph.stages}


def draw_stage_graph(ax, graph: StageGraph, trees=None, dropped=(), completed=None, running=None) -> None:
    """Draw the stage DAG top-down (inputs on top, as in the paper's Fig. 5).

    Node colour: its tree (a shared spool takes the first); dashed grey edges: dropped by
    tree-ification; the name inside the node and ``[completed/running/total]`` vertices in a box
    under it, drawn above the edges so no edge hides a count.
    """
    g = graph.to_networkx()
    pos = layered_positions(graph)
    colour = {}
    for k, t in enumerate(trees or []):
        for s in t.stages:
            colour.setdefault(s, TREE_COLOURS[k % len(TREE_COLOURS)])
    completed = completed or {}
    running = running or {}
    V = graph.vertices
    drop = set(dropped)
    kept = [e for e in graph.edges if e not in drop]
    # Small plans: slightly curved arrows (a long edge would otherwise run straight through nodes;
    # dropped edges curve more, so they never hide behind a kept one). Big plans: straight lines in
    # one collection (data flows downwards anyway): an arrow patch per edge takes seconds to draw.
    arrows = len(graph) <= ARROWS_UP_TO
    nx.draw_networkx_edges(g, pos, edgelist=kept, ax=ax, arrows=arrows, arrowsize=10, edge_color="#555",
                           node_size=NODE_SIZE, **({"connectionstyle": "arc3,rad=0.08"} if arrows else {}))
    if drop:
        nx.draw_networkx_edges(g, pos, edgelist=list(drop), ax=ax, arrows=arrows, arrowsize=10, style="dashed",
                               edge_color="#999", node_size=NODE_SIZE, **({"connectionstyle": "arc3,rad=0.25"} if arrows else {}))
    done = [s for s in g.nodes if completed.get(s, 0) >= V[s]]
    nodes = list(g.nodes)
    for subset, alpha in (([s for s in nodes if s not in done], 0.95), (done, 0.35)):
        if subset:  # completed stages fade out
            nx.draw_networkx_nodes(g, pos, nodelist=subset, ax=ax, node_size=NODE_SIZE, alpha=alpha,
                                   node_color=[colour.get(s, "#ddd") for s in subset], edgecolors="k")
    # one text per stage (name and counts), in a white box above the edges: text layout is what a
    # redraw of a big plan spends its time on
    for s, (x, y) in pos.items():
        counts = f"[{completed.get(s, 0)}/{running.get(s, 0)}/{V[s]}]" if (completed or running) else f"[{V[s]}]"
        ax.text(x, y - 0.17, f"{s} {counts}", ha="center", va="top", fontsize=7, zorder=5,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.9})
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.55, max(ys) + 0.2)
    ax.set_axis_off()


def plot_snapshot(snap: Snapshot):
    """The job at an execution point: the trees, each tree's remaining width and the sum."""
    depth = _layers(snap.graph)
    layers = max(depth.values()) + 1
    widest = max(list(depth.values()).count(d) for d in range(layers))
    # capped: a bigger canvas costs a panel redraw more than it shows
    fig, ax = new_figure(1, 1, size=(max(7.0, min(11.0, 1.1 * widest + 3)), max(3.6, min(8.0, 0.6 * layers + 1.2))))
    draw_stage_graph(ax, snap.graph, snap.trees, snap.dropped, snap.completed, snap.running)
    parts = " + ".join(f"{w}" for w in snap.widths)
    ax.set_title(f"t = {snap.time:.0f} s: tree widths {parts} = remaining peak {snap.peak}; "
                 f"holding {snap.tokens} -> release {max(0, snap.tokens - snap.peak)}\n"
                 "[completed/running/total] vertices; colour = tree; dashed = edge dropped by tree-ification",
                 fontsize=9)
    return fig


def plot_skyline(result: JobResult):
    """Fig. 1 / Fig. 3 style: static allocation, shaped allocation and actual usage over time."""
    off, on = result.runs["off"], result.shaped
    fig, ax = new_figure(1, 1, size=(8.0, 3.4))
    end = max(off.latency, on.latency)
    step_curve(ax, *off.allocation, t_end=end, color="k", ls=":", lw=1.5, label=f"static allocation ({off.tokens} tokens)")
    if result.config.mode != "off":
        step_curve(ax, *on.allocation, t_end=end, color="tab:blue", lw=2,
                   label=f"shaped allocation ({result.config.mode})")
    step_curve(ax, *off.usage, t_end=end, color="tab:orange", lw=1.2, label="tokens in use (vertices running)")
    if result.config.mode != "off" and on.latency != off.latency:
        step_curve(ax, *on.usage, t_end=end, color="tab:red", lw=1, ls="--", label="in use, shaped run")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tokens")
    ax.set_ylim(0, off.tokens * 1.08)
    ax.set_title(f"one job (seed {result.config.seed}): savings {100 * result.savings:.1f}% of the allocated "
                 f"token-seconds, slowdown {100 * result.slowdown:.1f}%", fontsize=10)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def plot_estimates(df: pd.DataFrame):
    """The remaining-peak estimates along the run against the peak the job really reaches."""
    fig, ax = new_figure(1, 1, size=(8.0, 3.4))
    t = df["time"]
    ax.step(t, df["tree"], where="post", lw=2, label="tree max-cut (paper, not completed)")
    if "tree_once" in df and (df["tree_once"] != df["tree"]).any():
        ax.step(t, df["tree_once"], where="post", lw=1.2, color="tab:purple", label="each spool counted once (ours)")
    ax.step(t, df["not_started"], where="post", lw=1, ls="--", label="variant: not started only")
    ax.step(t, df["cost_aware"], where="post", lw=1, label="cost-aware replay")
    if df["exact"].notna().any():
        e = df.dropna(subset=["exact"])
        ax.step(e["time"], e["exact"], where="post", lw=1, color="grey", label="exact antichain bound")
    ax.step(t, df["actual"], where="post", lw=2, color="k", label="actual future peak")
    ax.set_ylim(0, 1.15 * max(df["tree"].max(), df["actual"].max()))
    ax.set_title(f"estimates of the rest of the job's peak (the user holds {df.attrs.get('tokens')} tokens)",
                 fontsize=10)
    ax.set_xlabel("time of the vertex completion (s)")
    ax.set_ylabel("tokens")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper")
    return fig


def plot_fleet_cdfs(fleet: FleetResult):
    """Fig. 4a / 4b: CDFs of allocated/peak and allocated/average per job, per cluster."""
    df = fleet.jobs
    fig, axes = new_figure(1, 2, size=(10.0, 3.4))
    groups = dict(list(df.groupby("cluster", sort=False)))
    plot_cdf(axes[0], {k: g["alloc_over_peak"] for k, g in groups.items()}, "allocated / peak tokens", log=True)
    plot_cdf(axes[1], {k: g["alloc_over_average"] for k, g in groups.items()}, "allocated / average tokens", log=True)
    for ax, title in zip(axes, ("(a) allocated vs peak", "(b) allocated vs average")):
        ax.axvline(1.0, color="k", lw=1)
        ax.set_title(title, fontsize=10)
    return fig


def plot_opportunity(fleet: FleetResult):
    """Fig. 4c next to Fig. 7, like for like: (a) over-allocated jobs, the paper's denominator for
    both figures, with the paper's per-cluster values as markers; (b) the entire workload."""
    from .fleet import PAPER_CLUSTERS

    s = fleet.summary
    paper = PAPER_CLUSTERS.reindex(s.index)
    fig, axes = new_figure(1, 2, size=(11.0, 3.6))
    x = np.arange(len(s))
    for ax, suffix, title in ((axes[0], "_over", "(a) over-allocated jobs (the paper's Figs. 4c and 7)"),
                              (axes[1], "", "(b) the entire workload")):
        ax.bar(x - 0.2, s[f"alloc_minus_peak{suffix}"], 0.38, label="allocated - peak", color="#9ecae1")
        ax.bar(x - 0.2, s[f"peak_minus_actual{suffix}"], 0.38, bottom=s[f"alloc_minus_peak{suffix}"],
               label="peak - actual", color="#3182bd")
        ax.bar(x + 0.2, s[f"shaper_savings{suffix}"], 0.38, label="shaper's savings", color="#31a354")
        ax.set_xticks(x, s.index, fontsize=8)
        ax.set_ylabel("% of allocated token-seconds")
        ax.set_title(title, fontsize=10)
    axes[0].plot(x - 0.2, paper["opportunity_over"], "k_", ms=18, mew=2, label="paper: the two gaps")
    axes[0].plot(x + 0.2, paper["shaper_savings_over"], "kx", ms=8, mew=2, label="paper: savings")
    axes[1].plot(x + 0.2, paper["shaper_savings"], "kx", ms=8, mew=2)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=5)
    fig.suptitle(f"one fleet (seed {fleet.config.seed}): the claims table pools seeds", fontsize=10)
    return fig


def plot_job_savings(fleet: FleetResult, cluster: str | None = None):
    """Fig. 6: per-job savings bars for one cluster, sorted."""
    df = fleet.jobs
    name = cluster or df["cluster"].iloc[0]
    g = df[df["cluster"] == name].sort_values("savings", ascending=False)
    fig, ax = new_figure(1, 1, size=(8.0, 3.0))
    ax.bar(np.arange(len(g)), 100 * g["savings"], color=np.where(g["over_allocated"], "#31a354", "#a1d99b"))
    total = 100 * (1 - g["shaped_area"].sum() / g["static_area"].sum())
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_title(f"{name} (Fig. 6, one seed, {fleet.config.seed}): {(g['savings'] >= 0.01).sum()} of {len(g)} jobs "
                 f"save at least 1% (dotted);\n"
                 f"mean {100 * g['savings'].mean():.1f}%, cumulative {total:.1f}% (dark: over-allocated jobs)",
                 fontsize=9)
    ax.set_xlabel("jobs, sorted by savings")
    ax.set_ylabel("savings (%)")
    return fig


def plot_delay_tradeoff(sweep: pd.DataFrame):
    """Aggressive shaper (paper §6): savings and slowdown against the request delay."""
    fig, ax = new_figure(1, 1, size=(7.0, 3.4))
    ax.plot(sweep["delay"], 100 * sweep["aggressive_savings"], "o-", label="aggressive: savings")
    ax.plot(sweep["delay"], 100 * sweep["conservative_savings"], "s--", label="conservative: savings")
    ax.plot(sweep["delay"], 100 * sweep["slowdown"], "^-", color="tab:red", label="aggressive: slowdown")
    ax.set_xlabel("request delay: seconds until re-requested tokens arrive")
    ax.set_ylabel("savings (% of static token-s)\nslowdown (% of latency)", fontsize=9)
    jobs = sweep.attrs.get("jobs")
    ax.set_title("following the curve back up costs latency once tokens arrive late"
                 + (f" (mean over {jobs} jobs)" if jobs else ""), fontsize=10)
    ax.legend()
    return fig


def plot_job_panel(result: JobResult):
    """What the notebook's panel redraws: the skyline of the configured job and mode."""
    return plot_skyline(result)
