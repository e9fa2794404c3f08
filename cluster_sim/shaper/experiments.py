"""The notebook's experiments: ``run_*`` functions from a :class:`ShaperConfig` to results (run -> result).

Everything a slider in ``notebooks/01_plan_aware_shaper.ipynb`` shows comes from here (figures in
:mod:`cluster_sim.shaper.plots`), so a headless run (papermill) draws the same figures from the
``parameters`` cell.

>>> cfg = ShaperConfig.ci()
>>> res = run_job(cfg)
>>> res.runs["off"].latency == res.runs[cfg.mode].latency    # conservative shaping: no slowdown
True
>>> 0.0 < res.savings < 1.0
True
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .agents import JobPlan, ShapingClusterModel
from .config import ShaperConfig
from .examples import random_stage_graph
from .execution import MODES, JobRun, draw_durations, replay, replayed_peak
from .fleet import CLUSTERS, analyse_fleet, fleet_summary, synthetic_fleet
from .graph import StageGraph
from .peak import IncrementalPeak, exact_peak, remaining_peak, tree_widths
from .trees import dropped_edges, times_counted, treeify
from ..sweep import run_grid


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


# ---- the estimate along the run -------------------------------------------------------------------
def estimate_trace(config: ShaperConfig, exact_points: int = 40, points: int = 4000) -> pd.DataFrame:
    """At the vertex completions of the static run: the estimates and the truth they bound.

    Columns: ``time``, ``tree`` (the paper's max-cut, not-completed counting), ``tree_once`` (our
    variant counting each spool once), ``not_started`` (the other reading), ``cost_aware`` (replay
    with the optimizer's estimates), ``exact`` (max-weight antichain of the DAG, solved at about
    ``exact_points`` completions, NaN elsewhere), ``in_use`` and ``actual`` (the peak the job
    really reaches from then on). Every completion is a row up to ``points`` of them; a bigger job
    is sampled evenly (``attrs["every"]``). ``attrs`` also hold the tokens, the natural peak, the
    latency and ``counted``: how many times Algorithm 2 counts each stage the paper's trees share.
    """
    s = make_job(config)
    g = s.graph
    every = max(1, -(-g.total_vertices // max(points, 1)))
    exact_every = max(1, g.total_vertices // every // max(exact_points, 1))
    trees = treeify(g, np.random.default_rng(config.seed))
    once = treeify(g, np.random.default_rng(config.seed), spool_once=True)
    rows = []
    seen = [0]

    def observe(job, now):
        if job.done:
            return
        seen[0] += 1
        if (seen[0] - 1) % every:
            return
        rem = {st: v - job.completed[st] for st, v in g.vertices.items()}
        since = {st: list(d.values()) for st, d in job._running_since.items()}
        rows.append({
            "time": now,
            "tree": remaining_peak(trees, job.completed),
            "tree_once": remaining_peak(once, job.completed),
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
    df["actual"] = future[idx].astype(int)
    df.attrs.update(tokens=s.tokens, natural_peak=s.natural_peak, latency=run.latency, every=every,
                    completions=seen[0], stages=len(g), vertices=g.total_vertices,
                    counted={st: n for st, n in times_counted(trees).items() if n > 1})
    return df


def bound_slack(df: pd.DataFrame) -> pd.Series:
    """How loose the bounds are along a trace (:func:`estimate_trace`) and where the slack comes from.

    In tokens, averaged over the sampled completions: the paper's bound over the actual future peak,
    split (at the completions where the exact bound was solved) into *shared spools* (paper's trees
    - each spool counted once), *cross-tree waits* (spool-once trees - the exact antichain: the trees
    forget that a stage waits for one in another tree) and *what a DAG-only bound cannot know*
    (exact - actual: durations decide which stages really overlap).
    """
    e = df.dropna(subset=["exact"])
    natural = df.attrs.get("natural_peak", np.nan)
    out = {
        "completions": int(df.attrs.get("completions", len(df))),
        "natural peak (tokens)": int(natural),
        "paper's bound at the first completion": int(df["tree"].iloc[0]),
        "spool-once bound at the first completion": int(df["tree_once"].iloc[0]),
        "exact bound at the first completion": int(e["exact"].iloc[0]) if len(e) and e.index[0] == df.index[0] else np.nan,
        "mean slack of the paper's bound": float(np.mean(df["tree"] - df["actual"])),
        "mean slack, spool-once": float(np.mean(df["tree_once"] - df["actual"])),
        "mean slack, cost-aware": float(np.mean(df["cost_aware"] - df["actual"])),
        "slack from shared spools": float(np.mean(e["tree"] - e["tree_once"])),
        "slack from cross-tree waits": float(np.mean(e["tree_once"] - e["exact"])),
        "slack a DAG-only bound cannot avoid": float(np.mean(e["exact"] - e["actual"])),
        "most times a shared stage is counted": int(max(df.attrs.get("counted", {}).values(), default=1)),
    }
    return pd.Series({k: round(v, 1) if isinstance(v, float) else v for k, v in out.items()}, dtype=object)


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


# ---- sweeps: every loop over configs and seeds goes through cluster_sim.sweep.run_grid -------------
# A point is one job (one seed) at one value of the swept field, job by job; run_grid runs them in this
# process while a sweep is short and on a Dask cluster when it is long (see run_grid's docstring).
@functools.lru_cache(maxsize=8)
def _baselines(config: ShaperConfig) -> tuple[JobSetup, JobRun, JobRun]:
    """The job of ``config`` replayed with shaping off and conservative, computed once per job and
    process (a sweep's points share it). Callers pass ``request_delay=0`` and ``cost_error=0``: the
    job's plan, durations and tokens do not depend on them (the estimate noise is drawn last)."""
    s = make_job(config)
    return s, replay(s.graph, s.durations, s.tokens, "off"), replay(s.graph, s.durations, s.tokens, "conservative")


def _delay_point(config: ShaperConfig) -> dict:
    """delay_sweep's point: the aggressive shaper at ``config.request_delay`` next to off and conservative."""
    s, off, cons = _baselines(config.replace(request_delay=0.0, cost_error=0.0))
    agg = replay(s.graph, s.durations, s.tokens, "aggressive", request_delay=config.request_delay)
    return {"aggressive_savings": agg.savings_vs(off), "slowdown": agg.latency / off.latency - 1.0,
            "conservative_savings": cons.savings_vs(off)}


def delay_sweep(config: ShaperConfig, delays=(0.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0), jobs: int = 6,
                decay: float = 1.0, *, client=None, cache=None) -> pd.DataFrame:
    """Savings and slowdown of the aggressive shaper as the request delay grows (paper §6).

    Averaged over ``jobs`` random jobs (seeds ``seed .. seed+jobs-1``), each next to the
    conservative shaper. ``decay=1`` gives plans whose later stages are as wide as the first, so
    the skyline has valleys to climb out of (a tapering plan rarely needs tokens back).
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`.
    """
    # job by job, every delay for each (the row order of a groupby's mean decides its last bit)
    grid = [{"seed": config.seed + k, "request_delay": float(d)} for k in range(jobs) for d in delays]
    df = run_grid(_delay_point, config.replace(decay=decay), grid, client=client, cache=cache)
    df = df.rename(columns={"request_delay": "delay"})[["delay", "aggressive_savings", "slowdown",
                                                         "conservative_savings"]]
    out = df.groupby("delay", as_index=False).mean(numeric_only=True)
    out.attrs["jobs"] = jobs
    return out


def _cost_point(config: ShaperConfig) -> dict:
    """cost_sweep's point: the cost-aware shaper on estimates with ``config.cost_error`` lognormal error."""
    base, off, cons = _baselines(config.replace(request_delay=0.0, cost_error=0.0))
    s = make_job(config)
    run = replay(s.graph, s.durations, s.tokens, "cost_aware", estimates=s.estimates)
    return {"savings": run.savings_vs(off), "slowdown": run.latency / off.latency - 1.0,
            "conservative_savings": cons.savings_vs(off)}


def cost_sweep(config: ShaperConfig, errors=(0.0, 0.25, 0.5, 1.0), jobs: int = 6, *, client=None,
               cache=None) -> pd.DataFrame:
    """The cost-aware shaper as the optimizer's stage-duration estimates get worse (paper §6).

    Per error level, over ``jobs`` random jobs (seeds ``seed .. seed+jobs-1``; the same plans and
    durations at every level, only the estimates change): mean savings, mean and worst slowdown,
    and the share of jobs slowed down; the conservative shaper on the same jobs for reference.
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`.
    """
    grid = [{"seed": config.seed + k, "cost_error": float(e)} for k in range(jobs) for e in errors]
    df = run_grid(_cost_point, config, grid, client=client, cache=cache)
    out = df.groupby("cost_error").agg(savings=("savings", "mean"), slowdown=("slowdown", "mean"),
                                        worst_slowdown=("slowdown", "max"),
                                        jobs_slowed=("slowdown", lambda x: float(np.mean(x > 1e-12))),
                                        conservative_savings=("conservative_savings", "mean"))
    return out


# ---- every mode on the same job (the lab's claims over seed pools: cluster_sim.shaper.claims) -------
MODE_COLUMNS = ("savings %", "slowdown %", "token-seconds", "releases", "re-requests")


def mode_metrics(r: JobResult) -> dict:
    """compare_modes' row for one run: savings and slowdown in %, token-seconds, releases, re-requests."""
    return {"savings %": 100 * r.savings, "slowdown %": 100 * r.slowdown,
            "token-seconds": r.shaped.allocation_area, "releases": int(r.shaped.releases),
            "re-requests": int(r.shaped.requests)}


def compare_modes(config: ShaperConfig, modes=MODES, *, client=None, cache=None) -> pd.DataFrame:
    """Every shaping mode on the config's job (Mesa, same durations): savings and slowdown in %,
    token-seconds, and the releases and re-requests as integers. ``aggressive`` gets its tokens back
    at once (``request_delay=0``) and ``cost_aware`` works from estimates with 50 % lognormal error,
    unless the config sets them otherwise for the mode it runs. ``client`` and ``cache`` go to
    :func:`cluster_sim.sweep.run_grid`."""
    points = [{"mode": m,
               "request_delay": 0.0 if m == "aggressive" and config.mode != "aggressive" else config.request_delay,
               "cost_error": 0.5 if m == "cost_aware" and config.mode != "cost_aware" else config.cost_error}
              for m in modes]
    df = run_grid(run_job, config, points, metrics=mode_metrics, client=client, cache=cache)
    out = df[list(MODE_COLUMNS)].copy()
    out.index = list(modes)
    return out


def shaper_overhead(config: ShaperConfig, samples: int = 300) -> dict:
    """Measured wall time of one shaper invocation on the config's job, in microseconds: the
    incremental update the job manager uses (:class:`IncrementalPeak`, every completion) and
    Algorithm 1 from scratch (``remaining_peak``, at ``samples`` completions), next to the mean
    vertex duration it is amortised over (seconds of simulated work)."""
    s = make_job(config)
    g = s.graph
    trees = treeify(g, np.random.default_rng(config.seed))
    order: list[tuple[str, dict]] = []

    def observe(job, now):
        if not job.done:
            order.append(dict(job.completed))

    replay(g, s.durations, s.tokens, "off", observer=observe)
    stages = []
    prev = {st: 0 for st in g.stages}
    for state in order:  # the stage whose count changed at each completion
        stages.append(next(st for st in g.stages if state[st] != prev[st]))
        prev = state
    inc = IncrementalPeak(trees)
    t0 = time.perf_counter()
    for st, state in zip(stages, order):
        inc.complete(st, state[st])
    t_inc = (time.perf_counter() - t0) / max(len(order), 1)
    sample = order[:: max(1, len(order) // samples)]
    t0 = time.perf_counter()
    for state in sample:
        remaining_peak(trees, state)
    t_scratch = (time.perf_counter() - t0) / max(len(sample), 1)
    mean_vertex = float(np.mean(np.concatenate(list(s.durations.values()))))
    return {"stages": len(g), "completions": len(order), "incremental (us)": 1e6 * t_inc,
            "from scratch (us)": 1e6 * t_scratch, "mean vertex duration (s)": mean_vertex}
