"""The notebook's experiments: one config, ``run_*`` functions returning results, ``plot_*`` figures.

Everything a slider in ``notebooks/01_plan_aware_shaper.ipynb`` shows comes from here, so a
headless run (papermill) draws the same figures from the ``parameters`` cell.

>>> cfg = ShaperConfig.ci()
>>> res = run_job(cfg)
>>> res.runs["off"].latency == res.runs[cfg.mode].latency    # conservative shaping: no slowdown
True
>>> 0.0 < res.savings < 1.0
True
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from cluster_sim.engine.config import Config, param
from cluster_sim.ui import new_figure, plot_cdf, step_curve

from .agents import JobPlan, ShapingClusterModel
from .examples import random_stage_graph
from .execution import MODES, JobRun, draw_durations, replay, replayed_peak
from .fleet import CLUSTERS, analyse_fleet, fleet_summary, synthetic_fleet
from .graph import StageGraph
from .peak import exact_peak, remaining_peak, tree_widths
from .trees import dropped_edges, treeify


@dataclass(frozen=True)
class ShaperConfig(Config):
    """One random SCOPE-like job (and a synthetic fleet) run with and without resource shaping."""

    stages: int = param(14, lo=2, hi=60, doc="stages in the random job")
    spools: int = param(3, lo=0, hi=30, doc="stages allowed to feed several consumers (spools)")
    max_vertices: int = param(80, lo=1, hi=2000, step=1, slider=(1, 400), doc="vertices of the widest (first) stages")
    decay: float = param(0.8, lo=0.3, hi=1.0, step=0.05, doc="vertex count shrink per stage level (taper)")
    over_allocation: float = param(2.0, lo=0.1, hi=30.0, step=0.1,
                                   doc="user's tokens / the job's natural peak (1 = exactly the peak)")
    mode: str = param("conservative", choices=MODES, doc="shaper: off, the paper's conservative, or a variant")
    request_delay: float = param(10.0, lo=0.0, hi=200.0, step=1.0,
                                 doc="aggressive mode: seconds until re-requested tokens arrive")
    mean_duration: float = param(10.0, lo=1.0, hi=100.0, step=1.0, doc="mean vertex duration (s)")
    vertex_sigma: float = param(0.3, lo=0.0, hi=1.5, step=0.05, doc="lognormal spread of vertex durations in a stage")
    cost_error: float = param(0.0, lo=0.0, hi=1.5, step=0.05,
                              doc="lognormal spread of the optimizer's stage-duration estimates (cost-aware mode)")
    progress: float = param(0.3, lo=0.0, hi=1.0, step=0.01, doc="execution point: share of the job's time elapsed")
    cluster_jobs: int = param(12, lo=2, hi=500, slider=(2, 60), doc="jobs arriving at the token-limited virtual cluster")
    cluster_tokens: float = param(1.5, lo=1.0, hi=20.0, step=0.1,
                                  doc="virtual cluster's token capacity / the largest job's tokens")
    fleet_jobs: int = param(30, lo=5, hi=2000, slider=(5, 100), doc="jobs per synthetic cluster")
    fleet_clusters: int = param(3, lo=1, hi=5, doc="synthetic clusters (profiles of the paper's Fig. 4c)")
    fleet_max_width: int = param(1000, lo=2, hi=3000, slider=(2, 1000), doc="cap on a fleet job's widest stage (CI speed)")
    seed: int = param(0, lo=0, hi=2**31 - 1, doc="random seed (same seed and config: identical results)")

    def validate(self) -> None:
        if self.spools > max(self.stages - 2, 0):
            raise ValueError(
                f"ShaperConfig.spools={self.spools} is out of range for stages={self.stages}: "
                f"allowed 0 <= spools <= stages - 2 = {max(self.stages - 2, 0)}"
            )

    @classmethod
    def ci(cls):
        return cls(stages=12, max_vertices=50, cluster_jobs=8, fleet_jobs=16, fleet_clusters=3, fleet_max_width=300)

    @classmethod
    def default(cls):
        return cls(stages=14, max_vertices=80, fleet_jobs=40, fleet_clusters=5, fleet_max_width=1000)

    @classmethod
    def paper(cls):
        """Fig. 5-sized jobs, 154 jobs per cluster as in the paper's §5.2 virtual cluster."""
        return cls(stages=20, max_vertices=200, cluster_jobs=40, fleet_jobs=154, fleet_clusters=5,
                   fleet_max_width=3000)


# ---- one job --------------------------------------------------------------------------------------
@dataclass
class JobSetup:
    graph: StageGraph
    durations: dict
    estimates: dict
    natural_peak: int
    tokens: int


def make_job(config: ShaperConfig) -> JobSetup:
    """The random job of ``config``: plan, vertex durations, the optimizer's estimates and tokens."""
    rng = np.random.default_rng(config.seed)
    g = random_stage_graph(rng, stages=config.stages, spools=config.spools,
                           max_vertices=config.max_vertices, decay=config.decay)
    durations, means = draw_durations(g, rng, mean=config.mean_duration, vertex_sigma=config.vertex_sigma)
    noise = rng.lognormal(-config.cost_error**2 / 2, config.cost_error, len(g)) if config.cost_error > 0 else np.ones(len(g))
    estimates = {s: means[s] * float(e) for s, e in zip(g.stages, noise)}
    natural = replay(g, durations, g.total_vertices, "off").peak_usage
    tokens = max(1, int(round(config.over_allocation * natural)))
    return JobSetup(g, durations, estimates, natural, tokens)


@dataclass
class JobResult:
    config: ShaperConfig
    setup: JobSetup
    runs: dict  # "off" and the config's mode -> JobRun (from the Mesa model)
    released: int  # tokens given back early, as the token pool counted them

    @property
    def shaped(self) -> JobRun:
        return self.runs[self.config.mode]

    @property
    def savings(self) -> float:
        return self.shaped.savings_vs(self.runs["off"])

    @property
    def slowdown(self) -> float:
        return self.shaped.latency / self.runs["off"].latency - 1.0


def run_job(config: ShaperConfig) -> JobResult:
    """Run the job twice in a Mesa virtual cluster: shaping off, and the config's mode."""
    s = make_job(config)
    modes = ["off"] if config.mode == "off" else ["off", config.mode]
    plans = [JobPlan(s.graph, s.durations, s.tokens, mode=m, request_delay=config.request_delay,
                     estimates=s.estimates, seed=config.seed) for m in modes]
    model = ShapingClusterModel(plans, seed=config.seed)
    model.run()
    return JobResult(config, s, {m: model.runs[k] for k, m in enumerate(modes)}, model.pool.released)


# ---- a token-limited virtual cluster: released tokens let queued jobs start ----------------------
@dataclass
class ClusterRun:
    mode: str
    capacity: int
    jobs: pd.DataFrame  # per job: arrival, admitted, finished, tokens, queueing, completion
    held: tuple  # tokens held by all jobs (times, values)
    waiting: tuple  # jobs waiting for admission (times, values)
    released: int


@dataclass
class ClusterResult:
    config: ShaperConfig
    runs: dict  # "off" and the shaped mode -> ClusterRun

    @property
    def shaped(self) -> ClusterRun:
        return self.runs[[m for m in self.runs if m != "off"][0]]


def cluster_plans(config: ShaperConfig, mode: str) -> list[JobPlan]:
    """``cluster_jobs`` random jobs (seeds after ``seed``) arriving as a Poisson stream.

    Each job asks ``over_allocation`` times its natural peak, times a lognormal spread (users
    differ); jobs arrive every ``3 * mean_duration`` seconds on average.
    """
    rng = np.random.default_rng([config.seed, 11])
    gaps = rng.exponential(3.0 * config.mean_duration, config.cluster_jobs)
    arrivals = np.concatenate([[0.0], np.cumsum(gaps[:-1])])
    spread = rng.lognormal(0.0, 0.5, config.cluster_jobs)
    plans = []
    for k in range(config.cluster_jobs):
        s = make_job(config.replace(seed=config.seed + 1 + k))
        tokens = max(1, int(round(config.over_allocation * spread[k] * s.natural_peak)))
        plans.append(JobPlan(s.graph, s.durations, tokens, mode=mode, arrival=float(arrivals[k]),
                             request_delay=config.request_delay, estimates=s.estimates, seed=config.seed))
    return plans


def run_cluster(config: ShaperConfig) -> ClusterResult:
    """The same job stream through a token pool of fixed size, shaping off and on (Mesa)."""
    shaped_mode = config.mode if config.mode != "off" else "conservative"
    runs = {}
    for mode in ("off", shaped_mode):
        plans = cluster_plans(config, mode)
        capacity = int(np.ceil(config.cluster_tokens * max(p.tokens for p in plans)))
        model = ShapingClusterModel(plans, seed=config.seed, token_capacity=capacity)
        model.run()
        rows = []
        for k, p in enumerate(plans):
            rows.append({"arrival": p.arrival, "admitted": model.admitted[k], "finished": model.finished[k],
                         "tokens": p.tokens, "token_seconds": model.runs[k].allocation_area})
        df = pd.DataFrame(rows)
        df["queueing"] = df["admitted"] - df["arrival"]
        df["completion"] = df["finished"] - df["arrival"]
        runs[mode] = ClusterRun(mode, capacity, df, model.pool.held.steps(), model.pool.waiting_jobs.steps(),
                                model.pool.released)
    return ClusterResult(config, runs)


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
    axes[0].legend(fontsize=7, loc="upper right")
    axes[1].set_ylabel("jobs waiting")
    axes[1].set_xlabel("time (s)")
    axes[0].set_title("a token-limited virtual cluster: the same job stream, shaping off vs on", fontsize=10)
    return fig


# ---- the estimate along the run -------------------------------------------------------------------
def estimate_trace(config: ShaperConfig, exact_points: int = 40) -> pd.DataFrame:
    """At every vertex completion of the static run: the estimates and the truth they bound.

    Columns: ``time``, ``tree`` (the paper's max-cut, not-completed counting), ``not_started``
    (the variant), ``cost_aware`` (replay with the optimizer's estimates), ``exact`` (max-weight
    antichain of the DAG, solved at about ``exact_points`` completions), ``actual`` (the peak the
    job really reaches from then on).
    """
    s = make_job(config)
    exact_every = max(1, s.graph.total_vertices // max(exact_points, 1))
    g = s.graph
    trees = treeify(g, np.random.default_rng(config.seed))
    rows = []

    def observe(job, now):
        if job.done:
            return
        rem = {st: v - job.completed[st] for st, v in g.vertices.items()}
        since = {st: list(d.values()) for st, d in job._running_since.items()}
        rows.append({
            "time": now,
            "tree": remaining_peak(trees, job.completed),
            "not_started": remaining_peak(trees, job.completed, running=job.running, count="not_started"),
            "cost_aware": min(job.held, replayed_peak(g, now, job.completed, job.started, since, s.estimates)),
            "exact": exact_peak(g, rem) if len(rows) % exact_every == 0 else np.nan,
            "in_use": job.in_use,
        })

    run = replay(g, s.durations, s.tokens, "off", observer=observe)
    df = pd.DataFrame(rows)
    t, v = run.usage
    # the actual future peak: a running maximum from the end
    future = np.maximum.accumulate(v[::-1])[::-1]
    idx = np.searchsorted(t, df["time"].to_numpy(), side="right") - 1
    df["actual"] = future[idx]
    df.attrs["tokens"] = s.tokens
    df.attrs["latency"] = run.latency
    return df


# ---- a snapshot of the job at an execution point --------------------------------------------------
@dataclass
class Snapshot:
    graph: StageGraph
    trees: list
    dropped: list
    completed: dict
    running: dict
    widths: list
    peak: int
    tokens: int
    time: float


def snapshot(config: ShaperConfig) -> Snapshot:
    """The job's completion state at ``config.progress`` of its static run, with the trees' widths."""
    s = make_job(config)
    g = s.graph
    rng = np.random.default_rng(config.seed)
    dropped = dropped_edges(g, rng)
    trees = treeify(g, np.random.default_rng(config.seed))
    latency = replay(g, s.durations, s.tokens, "off").latency
    t_stop = config.progress * latency
    state = {}

    def observe(job, now):
        if now <= t_stop or not state:
            state.update(completed=dict(job.completed), running=dict(job.running), time=now)

    replay(g, s.durations, s.tokens, "off", observer=observe)
    if config.progress == 0.0:
        state.update(completed={st: 0 for st in g.stages}, running={}, time=0.0)
    widths = tree_widths(trees, state["completed"])
    return Snapshot(g, trees, dropped, state["completed"], state["running"], widths, sum(widths), s.tokens,
                    state["time"])


# ---- the fleet ------------------------------------------------------------------------------------
@dataclass
class FleetResult:
    config: ShaperConfig
    jobs: pd.DataFrame
    summary: pd.DataFrame


def run_fleet(config: ShaperConfig) -> FleetResult:
    """Synthetic clusters of jobs, each replayed with shaping off and on (paper §3.1, §5)."""
    rng = np.random.default_rng([config.seed, 7])
    frames = []
    for profile in CLUSTERS[: config.fleet_clusters]:
        jobs = synthetic_fleet(rng, config.fleet_jobs, profile, max_width=config.fleet_max_width,
                               mean_duration=config.mean_duration, vertex_sigma=config.vertex_sigma)
        mode = config.mode if config.mode != "off" else "conservative"
        frames.append(analyse_fleet(jobs, mode=mode, request_delay=config.request_delay))
    df = pd.concat(frames, ignore_index=True)
    return FleetResult(config, df, fleet_summary(df))


# ---- the aggressive shaper's trade-off --------------------------------------------------------------
def delay_sweep(config: ShaperConfig, delays=(0.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0), jobs: int = 6,
                decay: float = 1.0) -> pd.DataFrame:
    """Savings and slowdown of the aggressive shaper as the request delay grows (paper §6).

    Averaged over ``jobs`` random jobs (seeds ``seed .. seed+jobs-1``), each next to the
    conservative shaper. ``decay=1`` gives plans whose later stages are as wide as the first, so
    the skyline has valleys to climb out of (a tapering plan rarely needs tokens back).
    """
    rows = []
    for k in range(jobs):
        s = make_job(config.replace(seed=config.seed + k, decay=decay))
        off = replay(s.graph, s.durations, s.tokens, "off")
        cons = replay(s.graph, s.durations, s.tokens, "conservative")
        for d in delays:
            agg = replay(s.graph, s.durations, s.tokens, "aggressive", request_delay=float(d))
            rows.append({"job": k, "delay": float(d), "aggressive_savings": agg.savings_vs(off),
                         "slowdown": agg.latency / off.latency - 1.0,
                         "conservative_savings": cons.savings_vs(off)})
    return pd.DataFrame(rows).groupby("delay", as_index=False).mean(numeric_only=True).drop(columns="job")


def cost_sweep(config: ShaperConfig, errors=(0.0, 0.25, 0.5, 1.0), jobs: int = 6) -> pd.DataFrame:
    """The cost-aware shaper as the optimizer's stage-duration estimates get worse (paper §6).

    Per error level, over ``jobs`` random jobs (seeds ``seed .. seed+jobs-1``; the same plans and
    durations at every level, only the estimates change): mean savings, mean and worst slowdown,
    and the share of jobs slowed down; the conservative shaper on the same jobs for reference.
    """
    rows = []
    for k in range(jobs):
        base = make_job(config.replace(seed=config.seed + k, cost_error=0.0))
        off = replay(base.graph, base.durations, base.tokens, "off")
        cons = replay(base.graph, base.durations, base.tokens, "conservative")
        for e in errors:
            s = make_job(config.replace(seed=config.seed + k, cost_error=float(e)))
            run = replay(s.graph, s.durations, s.tokens, "cost_aware", estimates=s.estimates)
            rows.append({"cost_error": float(e), "savings": run.savings_vs(off),
                         "slowdown": run.latency / off.latency - 1.0,
                         "conservative_savings": cons.savings_vs(off)})
    df = pd.DataFrame(rows)
    out = df.groupby("cost_error").agg(savings=("savings", "mean"), slowdown=("slowdown", "mean"),
                                        worst_slowdown=("slowdown", "max"),
                                        jobs_slowed=("slowdown", lambda x: float(np.mean(x > 1e-12))),
                                        conservative_savings=("conservative_savings", "mean"))
    return out


# ---- figures --------------------------------------------------------------------------------------
TREE_COLOURS = ("#d62728", "#2ca02c", "#e6b800", "#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def _layers(graph: StageGraph) -> dict:
    depth = {}
    for s in graph.topological_order:
        depth[s] = 1 + max((depth[p] for p in graph.producers(s)), default=-1)
    return depth


def draw_stage_graph(ax, graph: StageGraph, trees=None, dropped=(), completed=None, running=None) -> None:
    """Draw the stage DAG top-down (inputs on top, as in the paper's Fig. 5).

    Node colour: its tree (a shared spool takes the first); dashed grey edges: dropped by
    tree-ification; label ``name`` and ``[done/running/total]`` vertices.
    """
    g = graph.to_networkx()
    depth = _layers(graph)
    for s in g.nodes:
        g.nodes[s]["layer"] = depth[s]
    pos = nx.multipartite_layout(g, subset_key="layer", align="horizontal")
    pos = {s: (x, -y) for s, (x, y) in pos.items()}  # inputs on top
    colour = {}
    for k, t in enumerate(trees or []):
        for s in t.stages:
            colour.setdefault(s, TREE_COLOURS[k % len(TREE_COLOURS)])
    completed = completed or {}
    running = running or {}
    V = graph.vertices
    drop = set(dropped)
    kept = [e for e in graph.edges if e not in drop]
    # slightly curved: in a layered layout a long edge would otherwise run straight through nodes
    nx.draw_networkx_edges(g, pos, edgelist=kept, ax=ax, arrows=True, arrowsize=10, edge_color="#555",
                           node_size=900, connectionstyle="arc3,rad=0.12")
    if drop:
        # curved, so a dropped edge never hides behind a kept one on the same line
        nx.draw_networkx_edges(g, pos, edgelist=list(drop), ax=ax, arrows=True, arrowsize=10, style="dashed",
                               edge_color="#999", node_size=900, connectionstyle="arc3,rad=0.25")
    done = [s for s in g.nodes if completed.get(s, 0) >= V[s]]
    nodes = list(g.nodes)
    for subset, alpha in (([s for s in nodes if s not in done], 0.9), (done, 0.3)):
        if subset:  # completed stages fade out
            nx.draw_networkx_nodes(g, pos, nodelist=subset, ax=ax, node_size=900, alpha=alpha,
                                   node_color=[colour.get(s, "#ddd") for s in subset], edgecolors="k")
    labels = {s: f"{s}\n[{completed.get(s, 0)}/{running.get(s, 0)}/{V[s]}]" if (completed or running)
              else f"{s}\n[{V[s]}]" for s in g.nodes}
    nx.draw_networkx_labels(g, pos, labels=labels, ax=ax, font_size=7)
    ax.set_axis_off()


def plot_snapshot(snap: Snapshot):
    """The job at an execution point: the trees, each tree's remaining width and the sum."""
    depth = _layers(snap.graph)
    layers = max(depth.values()) + 1
    widest = max(list(depth.values()).count(d) for d in range(layers))
    fig, ax = new_figure(1, 1, size=(max(7.0, min(14.0, 1.3 * widest + 3)), max(3.6, min(12.0, 0.75 * layers + 1.2))))
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
    ax.set_title(f"savings {100 * result.savings:.1f}% of the allocated token-seconds, "
                 f"slowdown {100 * result.slowdown:.1f}%", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    return fig


def plot_estimates(df: pd.DataFrame):
    """The remaining-peak estimates along the run against the peak the job really reaches."""
    fig, ax = new_figure(1, 1, size=(8.0, 3.4))
    t = df["time"]
    ax.step(t, df["tree"], where="post", lw=2, label="tree max-cut (paper, not completed)")
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
    ax.legend(fontsize=7, loc="upper right")
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
    """Fig. 4c next to Fig. 7: the over-allocation opportunity and what the shaper realises."""
    s = fleet.summary
    fig, ax = new_figure(1, 1, size=(8.0, 3.4))
    x = np.arange(len(s))
    ax.bar(x - 0.2, s["alloc_minus_peak"], 0.38, label="allocated - peak", color="#9ecae1")
    ax.bar(x - 0.2, s["peak_minus_actual"], 0.38, bottom=s["alloc_minus_peak"], label="peak - actual",
           color="#3182bd")
    ax.bar(x + 0.2, s["shaper_savings"], 0.38, label="shaper's savings (Fig. 7)", color="#31a354")
    ax.set_xticks(x, s.index)
    ax.set_ylabel("% of allocated token-seconds")
    ax.set_title("opportunity (Fig. 4c, stacked) vs realised savings, whole workload", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def plot_job_savings(fleet: FleetResult, cluster: str | None = None):
    """Fig. 6: per-job savings bars for one cluster, sorted."""
    df = fleet.jobs
    name = cluster or df["cluster"].iloc[0]
    g = df[df["cluster"] == name].sort_values("savings", ascending=False)
    fig, ax = new_figure(1, 1, size=(8.0, 3.0))
    ax.bar(np.arange(len(g)), 100 * g["savings"], color=np.where(g["over_allocated"], "#31a354", "#a1d99b"))
    total = 100 * (1 - g["shaped_area"].sum() / g["static_area"].sum())
    ax.set_title(f"{name}: {(g['savings'] > 1e-9).sum()} of {len(g)} jobs save; mean {100 * g['savings'].mean():.1f}%, "
                 f"cumulative {total:.1f}% (dark: over-allocated jobs)", fontsize=9)
    ax.set_xlabel("jobs, sorted by savings")
    ax.set_ylabel("savings (%)")
    return fig


def plot_delay_tradeoff(sweep: pd.DataFrame):
    """Aggressive shaper: savings and slowdown against the request delay."""
    fig, ax = new_figure(1, 1, size=(7.0, 3.2))
    ax.plot(sweep["delay"], 100 * sweep["aggressive_savings"], "o-", label="aggressive: savings")
    ax.plot(sweep["delay"], 100 * sweep["conservative_savings"], "s--", label="conservative: savings")
    ax.plot(sweep["delay"], 100 * sweep["slowdown"], "^-", color="tab:red", label="aggressive: slowdown")
    ax.set_xlabel("request delay (s)")
    ax.set_ylabel("%")
    ax.legend(fontsize=8)
    return fig


def plot_job_panel(result: JobResult):
    """What the notebook's panel redraws: the skyline of the configured job and mode."""
    return plot_skyline(result)
