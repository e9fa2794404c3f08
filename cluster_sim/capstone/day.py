"""One generated day whose jobs carry every mechanism's inputs (pure data and numpy; no Mesa).

Every job of the day is one stage graph (the shaper's input) of vertices with their own durations
(the stage optimiser's instance-level latencies), submitted by a user of an organisation, and is one
of three kinds:

* **periodic** (Morpheus's input): runs of a template every ``period`` seconds, each with a deadline
  (submission + ``slo_slack`` x the template's typical uncontended run time, within the day: the runs
  whose deadline would fall after it are not in the day) and ``history_runs``
  past runs whose skylines (tokens in use per step) Morpheus fits R* to;
* **recurring** and **ad hoc** (Wing's inputs): Poisson arrivals of a template's runs or of a user's
  one-off jobs, with downloads of their outputs after they end (the value) and a history of past
  runs (value and compute) from which Wing-Agg predicts each job's value efficiency.

Each user asks for ``over_allocation`` times the job's peak in tokens (as SCOPE's users do), never
more than a quarter of the cluster. Everything is drawn from ``[seed, stream]`` random streams, so
the day does not depend on the switches: every arm of an ablation runs the same jobs.

Example
-------
>>> from cluster_sim.capstone.config import CapstoneConfig
>>> day = make_day(CapstoneConfig.ci())
>>> sorted(set(j.kind for j in day.jobs))
['adhoc', 'periodic', 'recurring']
>>> all(j.reservation is not None for j in day.jobs if j.kind == "periodic")
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..engine import Job, Stage, Task
from ..engine.workload import random_stage_dag
from ..memo import remembered
from ..morpheus import PeriodicJob, ReservationPlan
from ..morpheus.slo.stored import stored_fit
from ..shaper.graph import StageGraph
from ..shaper.shaper import ResourceShaper
from ..wing.scheduling.workload import value_efficiency
from .config import CapstoneConfig

#: random streams of a seed: templates, arrivals, the runs' durations, history, downloads
TEMPLATES, ARRIVALS, RUNS, HISTORY, DOWNLOADS = 11, 12, 13, 14, 15
#: Morpheus's alpha (over-allocation against the final debt; Lab 03 shows small values keep SLOs)
ALPHA = 0.1
#: steps of a skyline: the day in this many steps
SKYLINE_STEPS = 180
KINDS = ("periodic", "recurring", "adhoc")


@dataclass(frozen=True, eq=False)
class Template:
    name: str
    kind: str
    user: str
    org: str
    widths: tuple[int, ...]
    parents: tuple[tuple[int, ...], ...]
    stage_mean: tuple[float, ...]  # mean vertex duration of each stage (s, speed 1)
    value_rate: float  # mean downloads of a run's output
    period: float = math.nan
    offset: float = math.nan


@dataclass(frozen=True, eq=False)
class JobSpec:
    """One job of the day: its graph, its vertices' durations, and what each mechanism reads."""

    id: int
    arrival: float
    kind: str
    template: str
    user: str
    org: str
    priority: int
    widths: tuple[int, ...]
    parents: tuple[tuple[int, ...], ...]
    durations: tuple[np.ndarray, ...]  # per stage, one per vertex (s at speed 1)
    tokens: int  # the user's request
    peak: int  # the graph's peak (the shaper's remaining peak at the start)
    runtime: float  # uncontended run time (every vertex of a stage at once, speed 1)
    deadline: float = math.nan  # periodic jobs: the SLO's deadline (absolute time)
    reservation: tuple[int, float, float] | None = None  # periodic jobs: (tokens, start, end) of its LowCost block

    def __post_init__(self):
        for d in self.durations:  # read-only: a JobSpec cannot change, so every copy of its day shares it
            d.setflags(write=False)

    def __deepcopy__(self, memo):
        # immutable (frozen, every field a number, a string, a tuple or a read-only array): a copy of the remembered
        # day (make_day) shares its jobs; copying them was most of the 0.8 s each run of a paper day spent copying it
        return self

    @property
    def n_tasks(self) -> int:
        return sum(self.widths)

    def graph(self, widths: tuple[int, ...] | None = None) -> StageGraph:
        """The shaper's stage graph (stages ``s0``, ``s1``, ...): each stage's vertices, or ``widths``
        (each stage's tokens, when its vertices hold several: the stage optimiser's resource plans)."""
        widths = self.widths if widths is None else widths
        if len(widths) != len(self.widths):
            raise ValueError(f"widths={widths!r} is not allowed for job {self.id}: need one per stage ({len(self.widths)})")
        return stage_graph(tuple(widths), self.parents)


def stage_graph(widths: tuple[int, ...], parents: tuple[tuple[int, ...], ...]) -> StageGraph:
    """The shaper's stage graph of a job whose stage ``i`` has ``widths[i]`` vertices (or tokens) and ``parents[i]``."""
    names = [f"s{i}" for i in range(len(widths))]
    return StageGraph(dict(zip(names, widths)), [(names[p], names[i]) for i, ps in enumerate(parents) for p in ps])


@functools.lru_cache(maxsize=16384)
def shaper_trees(widths: tuple[int, ...], parents: tuple[tuple[int, ...], ...]) -> tuple:
    """Lab 01's shaper's trees of :func:`stage_graph` (tree-ified with its default seed), remembered: a graph
    depends only on its widths and parents, and every run of a day with the shaper on tree-ified every job's graph
    again (a recurring template's jobs share one). Read only: the job managers' remaining peaks read them."""
    return tuple(ResourceShaper().trees(stage_graph(widths, parents)))


@dataclass(frozen=True, eq=False)
class Day:
    config: CapstoneConfig
    jobs: tuple[JobSpec, ...]
    history: pd.DataFrame  # Wing's history: job, template, kind, user, agg_value, agg_compute
    downloads: pd.DataFrame  # job, time: each download of a job's output (the value)
    skylines: dict  # periodic template -> its history's skylines (runs x steps, tokens)
    rstar: dict  # periodic template -> R* (tokens per step)
    step: float  # seconds per skyline step
    efficiency: pd.Series  # Wing-Agg's predicted value efficiency, by job id
    plan: ReservationPlan  # Lab 03's plan: the periodic templates' R* packed by LowCost over the day's cycle
    requests: dict  # periodic template -> the PeriodicJob it asked the plan for (None: no window for R*)
    allocations: dict  # periodic template -> its Allocation in the plan (None: refused)

    def engine_jobs(self, plans=None) -> list[Job]:
        """Fresh engine jobs (a run changes its jobs' states): one task (1 CPU, 1 memory) per vertex, or,
        with the stage optimiser's ``plans`` (:func:`~cluster_sim.capstone.plans.resource_plans`), each
        vertex's cores and memory and its duration under its stage's plan."""
        out, tid = [], 0
        for spec in self.jobs:
            job = Job(id=spec.id, arrival=spec.arrival, priority=spec.priority, queue=spec.org, tag=spec)
            children = [[] for _ in spec.widths]
            for i, ps in enumerate(spec.parents):
                for p in ps:
                    children[p].append(i)
            for i, d in enumerate(spec.durations):
                if plans is None:
                    tasks = [Task(tid + k, job, i, (1, 1), float(x)) for k, x in enumerate(d)]
                else:
                    plan = plans.stages[spec.id, i]
                    tasks = [Task(tid + k, job, i, (int(c), int(m)), float(x))
                             for k, ((c, m), x) in enumerate(zip(plan.theta.tolist(), plan.durations))]
                tid += len(tasks)
                job.stages.append(Stage(i, tasks, spec.parents[i], tuple(children[i])))
            out.append(job)
        return out

    def frame(self) -> pd.DataFrame:
        """One row per job (for figures)."""
        return pd.DataFrame([dict(job=j.id, arrival=j.arrival, kind=j.kind, template=j.template, org=j.org,
                                  tasks=j.n_tasks, tokens=j.tokens, peak=j.peak, runtime=j.runtime,
                                  deadline=j.deadline) for j in self.jobs])


def _runtime(widths, parents, durations) -> tuple[float, list[float], list[float]]:
    """Uncontended run: each stage starts when its parents end, all its vertices at once."""
    start, end = [], []
    for i in range(len(widths)):
        s = max((end[p] for p in parents[i]), default=0.0)
        start.append(s)
        end.append(s + float(np.max(durations[i])))
    return max(end), start, end


def skyline(parents, durations, step: float) -> np.ndarray:
    """Tokens in use per step of an uncontended run (a vertex counts in every step it overlaps)."""
    total, start, _ = _runtime([len(d) for d in durations], parents, durations)
    n = max(1, int(math.ceil(total / step)))
    out = np.zeros(n)
    for s0, d in zip(start, durations):
        for x in d:
            a, b = s0 / step, (s0 + x) / step
            out[int(a):int(math.ceil(b))] += 1
    return out


def _durations(rng, t: Template, sigma: float):
    # instance-level spread inside a stage: what makes where each vertex runs matter (IPA)
    return tuple(m * rng.lognormal(-0.125, 0.5, w) for w, m in zip(t.widths, t.stage_mean))


def _template(rng, name, kind, user, org, config: CapstoneConfig) -> Template:
    stages = int(rng.integers(1, config.MAX_STAGES + 1))
    cap = max(1, min(40, config.tokens // 4))
    widths = tuple(int(min(cap, 1 + rng.poisson(config.MEAN_WIDTH - 1))) for _ in range(stages))
    parents = tuple(random_stage_dag(stages, rng))
    sigma = config.duration_sigma
    means = tuple(float(x) for x in rng.lognormal(math.log(config.mean_task_duration) - sigma**2 / 2, sigma, stages))
    return Template(name, kind, user, org, widths, parents, means, value_rate=float(rng.lognormal(1.0, 1.0)))


def rstar_containers(rstar: np.ndarray) -> np.ndarray:
    """R* in whole tokens per step, without leading or trailing empty steps (Lab 03's reading)."""
    sky = np.ceil(np.asarray(rstar) - 1e-6).astype(np.int64)
    nz = np.flatnonzero(sky > 0)
    return sky[nz[0]:nz[-1] + 1] if nz.size else sky[:0]


def reservation_request(t: Template, demands: np.ndarray, deadline_after: float, step: float) -> PeriodicJob | None:
    """The template's periodic reservation request in the plan's steps: R* (``demands``) inside
    [a_j, d_j) of every period, a_j its submission and d_j its deadline (whole steps inside them, as
    Lab 03's ``plan_job``); None when R* cannot fit the window."""
    P = int(round(t.period / step))
    a = int(math.ceil(t.offset / step - 1e-9))
    d = min(int(math.floor((t.offset + deadline_after) / step + 1e-9)), a + P)
    if a >= P or demands.size == 0 or d - a < int((demands > 0).sum()):
        return None
    return PeriodicJob(P, a, d, demands.tolist(), name=t.name)


def run_reservation(alloc, instance: int, step: float) -> tuple[int, float, float]:
    """Run ``instance``'s reservation from a periodic allocation: the peak of its block (the queue
    layer grants a flat count of tokens) from the block's first step to the end of its last (seconds)."""
    block = np.asarray(alloc.blocks[0])
    first = int(alloc.starts[0]) + instance * alloc.job.period
    return int(block.max()), first * step, (first + block.size) * step


def day_config(config: CapstoneConfig) -> CapstoneConfig:
    """What the day depends on: ``config`` with every switch off (every arm of a seed runs the same day)."""
    return config.replace(**{s: False for s in config.switches()}, raa=True)


def make_day(config: CapstoneConfig) -> Day:
    """The config's day (remembered: every arm of an ablation builds the same day once)."""
    return _make_day(day_config(config))


#: days remembered: a sweep varies the seed fastest, so every arm of an ablation cycles through the whole
#: pool; fewer than the pool's seeds (8 at ci) and every run rebuilt its day (a third of the ablation's time)
DAYS_REMEMBERED = 32


@remembered(maxsize=DAYS_REMEMBERED)
def _make_day(config: CapstoneConfig) -> Day:
    seed, H = config.seed, config.horizon
    trng = np.random.default_rng([seed, TEMPLATES])
    arng = np.random.default_rng([seed, ARRIVALS])
    rrng = np.random.default_rng([seed, RUNS])
    hrng = np.random.default_rng([seed, HISTORY])
    drng = np.random.default_rng([seed, DOWNLOADS])
    n_jobs = config.job_rate() * H
    orgs = [f"org{k}" for k in range(config.orgs)]
    periods = (H / 6, H / 4, H / 3)
    n_periodic = config.periodic_share * n_jobs
    k_periodic = max(1, round(n_periodic / np.mean([H / p for p in periods]))) if n_periodic > 0 else 0
    n_rest = n_jobs - n_periodic
    n_adhoc = config.adhoc_share * n_rest
    k_recurring = max(2, round((n_rest - n_adhoc) / 4))
    k_users = max(2, round(n_adhoc / 4))
    periodic = []
    for k in range(k_periodic):
        t = _template(trng, f"p{k}", "periodic", f"pu{k}", orgs[k % len(orgs)], config)
        period = float(periods[int(trng.integers(len(periods)))])
        # a periodic pipeline is sized to meet its deadline several times a day: its stages together
        # take at most a period / slack on average (longer draws are scaled down)
        scale = min(1.0, period / config.slo_slack / sum(t.stage_mean))
        periodic.append(Template(**{**t.__dict__, "stage_mean": tuple(m * scale for m in t.stage_mean),
                                    "period": period, "offset": float(trng.uniform(0, period))}))
    recurring = [_template(trng, f"r{k}", "recurring", f"ru{k}", orgs[int(trng.integers(len(orgs)))], config)
                 for k in range(k_recurring)]
    users = [_template(trng, f"a{k}", "adhoc", f"au{k}", orgs[int(trng.integers(len(orgs)))], config)
             for k in range(k_users)]
    step = H / SKYLINE_STEPS
    # history: past runs of every template (and of every ad hoc user's jobs)
    hist_rows, skylines, typical = [], {}, {}
    hid = -1
    for t in periodic + recurring + users:
        sky, times = [], []
        for _ in range(config.history_runs):
            d = _durations(hrng, t, config.duration_sigma)
            sky.append(skyline(t.parents, d, step))
            times.append(_runtime(t.widths, t.parents, d)[0])
            hist_rows.append(dict(job=hid, template=t.name if t.kind != "adhoc" else f"{t.name}-h{hid}",
                                  kind=t.kind if t.kind == "adhoc" else "recurring", user=t.user,
                                  agg_value=float(hrng.poisson(t.value_rate * 4)),
                                  agg_compute=float(sum(x.sum() for x in d))))
            hid -= 1
        typical[t.name] = float(np.median(times))
        if t.kind == "periodic":
            n = max(len(s) for s in sky)
            skylines[t.name] = np.array([np.pad(s, (0, n - len(s))) for s in sky])
    # arrivals: the periodic runs, then Poisson recurring and ad hoc jobs
    arrivals = []
    for t in periodic:
        # the runs whose deadline falls within the day (their SLOs are decided by the day's end)
        arrivals += [(float(a), t) for a in np.arange(t.offset, H, t.period) if a + config.slo_slack * typical[t.name] <= H]
    rate = n_rest / H
    if rate > 0:
        times = np.cumsum(arng.exponential(1 / rate, int(n_rest + 6 * math.sqrt(n_rest) + 16)))
        times = times[times < H]
        adhoc = arng.random(len(times)) < config.adhoc_share
        pick_r = arng.integers(0, len(recurring), len(times))
        pick_u = arng.integers(0, len(users), len(times))
        for a, is_adhoc, r, u in zip(times, adhoc, pick_r, pick_u):
            if is_adhoc:
                # an ad hoc job: its user's habits (value, size) but a graph of its own
                base = users[u]
                t = _template(arng, base.name, "adhoc", base.user, base.org, config)
                arrivals.append((float(a), Template(**{**t.__dict__, "value_rate": base.value_rate})))
            else:
                arrivals.append((float(a), recurring[r]))
    arrivals.sort(key=lambda x: (x[0], x[1].name))
    history = pd.DataFrame(hist_rows)
    shaper = ResourceShaper()
    # R* read from the sweep cache's store when another process of the notebook fitted this day (Lab 03's store:
    # the same fits, bit for bit), else fitted here and stored: a paper day's LPs are most of its 7 s to make
    rstar = {name: stored_fit(s, ALPHA).skyline for name, s in skylines.items()}
    # Lab 03's LowCost packs every template's R* into one cyclic plan over the day, in template order
    plan = ReservationPlan(config.tokens, SKYLINE_STEPS, step_seconds=step)
    requests, allocations = {}, {}
    for t in periodic:
        requests[t.name] = reservation_request(t, rstar_containers(rstar[t.name]), config.slo_slack * typical[t.name],
                                               step)
        allocations[t.name] = plan.place(requests[t.name]) if requests[t.name] is not None else None
    cap = max(1, config.tokens // 4)
    jobs, downloads = [], []
    for i, (a, t) in enumerate(arrivals):
        d = _durations(rrng, t, config.duration_sigma)
        run, _, _ = _runtime(t.widths, t.parents, d)
        spec = dict(id=i, arrival=a, kind=t.kind, template=t.name, user=t.user, org=t.org,
                    priority=3 if t.kind == "periodic" else int(rrng.integers(0, 3)),
                    widths=t.widths, parents=t.parents, durations=d, runtime=run, tokens=1, peak=1)
        job = JobSpec(**spec)
        peak = shaper.peak(job.graph(), {})
        spec.update(peak=peak, tokens=int(min(cap, max(1, math.ceil(config.over_allocation * peak)))))
        if t.kind == "periodic":
            spec.update(deadline=a + config.slo_slack * typical[t.name])
            alloc = allocations[t.name]
            if alloc is not None:
                n, start, end = run_reservation(alloc, int(round((a - t.offset) / t.period)), step)
            else:
                # the plan has no window for R* (a deadline past the next run's submission, or too short for
                # R*'s steps): R* from the submission, unpacked (Lab 03's "model_only" provisioning)
                n, start, end = int(math.ceil(float(rstar[t.name].max()) - 1e-6)), a, spec["deadline"]
            spec.update(reservation=(int(min(spec["tokens"], max(1, n))), start, end))
        jobs.append(JobSpec(**spec))
        # the value: downloads of the output after the job would end uncontended, spread over the day
        n = int(drng.poisson(t.value_rate * 4))
        downloads += [(i, a + run + float(x)) for x in drng.exponential(max(2 * run, H / 10), n)]
    meta = pd.DataFrame([dict(job=j.id, template=j.template if j.kind != "adhoc" else f"{j.template}-{j.id}",
                              kind="adhoc" if j.kind == "adhoc" else "recurring", user=j.user) for j in jobs])
    efficiency = value_efficiency(history, meta) if len(jobs) else pd.Series(dtype=float)
    return Day(config, tuple(jobs), history, pd.DataFrame(downloads, columns=["job", "time"]), skylines, rstar, step,
               efficiency, plan, requests, allocations)
