"""Lab 03's simulation (§9 in miniature): ``simulate(config) -> MorpheusResult`` and ``footprint``.

One run, for the arm ``config.arm`` names (:data:`~cluster_sim.morpheus.packing.config.ARMS`):

1. **Templates and their history** (:mod:`.periodic`): ``config.jobs`` periodic jobs and
   ``history_runs`` past runs of each, recorded as an uncontended cluster would.
2. **Contracts** (Lab 02): SLOs (a_j, d_j) inferred from the provenance times and R* fitted by the LP
   at ``alpha`` (:meth:`~cluster_sim.morpheus.slo.telemetry.TelemetryLog.contracts`). They depend on the
   workload only, so they are cached across runs that change the cluster or the arm.
3. **Provisioning**, by arm. ``user``: each run holds its user's count from its submission until it
   ends, sharing the cluster by the capacity scheduler's fair order when the counts add up to more
   than the cluster. ``model_only``: R* from each run's submission (the job model, no packing).
   ``packing_only``: the user's count as a rectangle (as long as the typical run takes on it) packed
   by LowCost inside [a_j, d_j]. ``morpheus``: R* packed by LowCost. ``morpheus_dra``: the same plan
   with the :class:`~cluster_sim.morpheus.packing.model.Reprovisioner`. A job the plan refuses keeps its
   user's count (counted in ``refused``).
4. **One cycle on the engine** (:class:`~cluster_sim.morpheus.packing.model.MorpheusModel`): every run of the
   cycle, with stragglers, input delays and one run held back ``late_start`` minutes, beside Poisson
   ad hoc jobs (one task of 1 to ``containers_per_machine`` containers each) offering ``adhoc_load``
   of the cluster. Periodic queues never borrow, so a run that
   finishes after its deadline ``period start + d_j`` is a **worst-case SLO violation**.

:func:`footprint` finds the smallest cluster (in machines) whose attainment (1 - violation rate,
pooled over seeds) reaches a target: the paper's Fig. 10 measure.

Example
-------
>>> r = simulate(MorpheusConfig.ci().replace(arm="morpheus"))
>>> 0.0 <= r.slo_violation_rate <= 1.0 and 0.0 < r.utilisation < 1.0 and r.seed == 0
True
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...engine import ClusterConfig
from ...memo import remembered
from ...sweep import run_grid
from .config import ARMS, MorpheusConfig
from .jobs import PeriodicJob
from .stages import alignment_weight
from .model import MorpheusModel, Provisioning, job_queue, run_queue
from .periodic import STEP, Run, draw_run, history_log, history_runs, make_templates, minutes_on
from .plan import ReservationPlan
from .reprovision import ReprovisionRule
from ..slo.stored import stored_fit
from .result import MorpheusResult, _integral, collect, pooled_counts, sweep_row  # noqa: F401 (re-exported)

#: random streams of a seed: templates, history, the simulated cycle's runs, ad hoc jobs
TEMPLATES, HISTORY, CYCLE, ADHOC_STREAM = 1, 2, 3, 4


@dataclass(frozen=True, eq=False)
class Workload:
    """What does not depend on the cluster or the arm: templates, history, contracts, the cycle's runs."""

    templates: tuple
    history: dict  # template -> past runs
    log: object  # the TelemetryLog of the history
    contracts: dict  # template -> Contract (SLO + R*)
    runs: tuple  # the cycle's runs, in submission order
    late: Run | None  # the run held back on purpose
    seconds: float  # time spent building it (LPs included)

    def deadline(self, name: str) -> float:
        """The SLO's deadline, seconds after the period start: the contract's d_j (the consumer's read
        time if the job has no contract)."""
        c = self.contracts.get(name)
        return c.d_j if c is not None else STEP * self.template(name).read_offset

    @functools.cached_property
    def run_table(self) -> pd.DataFrame:
        """The history's runs (:meth:`TelemetryLog.runs`), built once per workload: :func:`plan_job` reads each
        template's rows of it (building it for each of a paper cycle's 100 jobs cost about a tenth of a run)."""
        return self.log.runs()

    def template(self, name: str):
        return next(t for t in self.templates if t.name == name)

    def rstar(self, name: str) -> np.ndarray:
        """R* in whole containers per step, without leading or trailing empty steps."""
        sky = np.ceil(np.asarray(self.contracts[name].skyline) - 1e-6).astype(np.int64)
        nz = np.flatnonzero(sky > 0)
        return sky[nz[0]:nz[-1] + 1] if nz.size else sky[:0]

    def user_rectangle(self, name: str) -> np.ndarray:
        """The user's count for as many steps as the median past run takes on it."""
        t = self.template(name)
        minutes = [minutes_on(r, t.provisioned) for r in self.history[name]]
        return np.full(int(math.ceil(np.median(minutes))), t.provisioned, dtype=np.int64)


def _key(config: MorpheusConfig) -> tuple:
    return (config.jobs, config.hourly_share, config.cycle_minutes, config.median_width, config.task_minutes,
            config.slack,
            config.run_noise, config.straggler_rate, config.input_delay_rate, config.late_start,
            config.history_runs, config.alpha, config.seed)


def workload(config: MorpheusConfig) -> Workload:
    """The config's templates, history, contracts and cycle (the 8 most recent workloads are remembered;
    each call returns its own copy, so a run's result may be changed by its reader without changing
    the workload the next run is built on)."""
    return _workload(_key(config))


@remembered(maxsize=8)
def _workload(key: tuple) -> Workload:
    (jobs, hourly, cycle, width, task, slack, noise, stragglers, delays, late, n_hist, alpha, seed) = key
    t0 = time.perf_counter()
    templates, past, log, contracts = _history(key[:9] + key[10:])
    draw = dict(run_noise=noise, straggler_rate=stragglers, input_delay_rate=delays)
    rng = np.random.default_rng([seed, CYCLE])
    shortest = min(t.period for t in templates)
    # Fig. 12's run: of the most frequent jobs, the one whose consumers leave the most slack (minutes),
    # so that a late start can still be rescued
    focus = max((t for t in templates if t.period == shortest),
                key=lambda t: (t.read_offset - t.submit_offset - t.minutes, t.name))
    runs, late_run = [], None
    for t in templates:
        for i in range(cycle // t.period):
            held = late * STEP if (t is focus and i == min(1, cycle // t.period - 1)) else 0.0
            r = draw_run(rng, t, i, late_start=held, **draw)
            runs.append(r)
            if held:
                late_run = r
    runs.sort(key=lambda r: (r.submit_time, r.template.name))
    return Workload(tuple(templates), past, log, contracts, tuple(runs), late_run, time.perf_counter() - t0)


@remembered(maxsize=8)
def _history(key: tuple) -> tuple:
    """The templates, their history, its log and the contracts fitted to it: everything of a workload but the
    cycle's runs, so the same for every ``late_start`` (the notebook's configs and the trace's, ``late_start=0``,
    share it). The contracts' LPs are read from the sweep cache's store when another process of the notebook
    solved them (:func:`~cluster_sim.morpheus.slo.stored.stored_fit`)."""
    (jobs, hourly, cycle, width, task, slack, noise, stragglers, delays, n_hist, alpha, seed) = key
    cfg = MorpheusConfig(jobs=jobs, hourly_share=hourly, cycle_minutes=cycle, median_width=width, task_minutes=task,
                         slack=slack, run_noise=noise, straggler_rate=stragglers, input_delay_rate=delays,
                         history_runs=n_hist, alpha=alpha, seed=seed)
    periods, weights = cfg.periods()
    templates = make_templates(np.random.default_rng([seed, TEMPLATES]), jobs, periods=periods, weights=weights,
                               median_width=width, task_minutes=task, slack=slack)
    draw = dict(run_noise=noise, straggler_rate=stragglers, input_delay_rate=delays)
    hrng = np.random.default_rng([seed, HISTORY])
    past = history_runs(hrng, templates, n_hist, **draw)
    log = history_log(past, hrng)
    return templates, past, log, log.contracts(alpha=alpha, fit=stored_fit)


def plan_job(w: Workload, name: str, config: MorpheusConfig, demands: np.ndarray) -> PeriodicJob | None:
    """The periodic reservation request of ``name``: ``demands`` inside [a_j, d_j] (whole minutes), gangs of
    ``min_parallelism`` of each step, the alignment penalty for jobs whose input comes at variable times;
    None when the request cannot be a reservation (window too short or not within a period)."""
    c, t = w.contracts[name], w.template(name)
    P = t.period
    a = int(math.ceil(c.a_j / STEP - 1e-9))
    d = min(int(math.floor(c.d_j / STEP + 1e-9)), a + P)
    if a >= P or d - a < int((demands > 0).sum()):
        return None
    gang = [max(1, int(math.ceil(config.min_parallelism * s))) for s in demands]
    runs = w.run_table
    mine = runs[runs.template == name]
    delay = (mine.t_start - mine.t_in_avail).to_numpy()
    slack = (mine.t_out_read - mine.t_end).to_numpy()
    cv = [float(np.std(x) / np.mean(x)) if np.mean(x) > 0 else 0.0 for x in (delay, slack)]
    weight = alignment_weight(cv[0], cv[1], weight=config.alignment) if config.alignment > 0 else 0.0
    return PeriodicJob(P, a, d, demands.tolist(), gang=gang, alignment=weight, name=name)


def provision(config: MorpheusConfig, w: Workload, end_steps: int):
    """Each template's :class:`Provisioning` for ``config.arm``, the plan (plan arms), the plan's job ids and
    the templates the plan refused."""
    arm = config.arm
    users = {t.name: Provisioning(while_running=t.provisioned) for t in w.templates}
    if arm == "user":
        return users, None, {}, []
    if arm == "model_only":
        out = dict(users)
        for name in w.contracts:
            sky = w.rstar(name)
            if sky.size:
                out[name] = Provisioning(from_start=sky)
        return out, None, {}, []
    H = config.cycle_minutes
    plan = ReservationPlan(config.containers, H)
    out, ids, refused = dict(users), {}, []
    for t in w.templates:  # jobs arrive one by one, in template order
        if t.name not in w.contracts:
            refused.append(t.name)
            continue
        demands = w.user_rectangle(t.name) if arm == "packing_only" else w.rstar(t.name)
        job = plan_job(w, t.name, config, demands) if demands.size else None
        alloc = plan.place(job) if job is not None else None
        if alloc is None:
            refused.append(t.name)
            continue
        reps = -(-end_steps // H)
        out[t.name] = Provisioning(base=np.tile(alloc.containers(H), reps)[:end_steps])
        ids[t.name] = alloc.job_id
    return out, plan, ids, refused


def per_run(w: Workload, provisioning: dict, plan, ids: dict, end_steps: int):
    """One reservation per run (Rayon's model, ``reservations='per_run'``): each run's queue is provisioned
    with its own instance's block of the job's allocation, so a run that falls behind keeps nothing of
    the next instance's reservation (and the next run loses nothing to it). A user's count and R* from the
    submission are per run already. Returns the provisioning and the plan's job ids keyed by run queue."""
    out, out_ids = {}, {}
    for r in w.runs:
        name, q = r.template.name, run_queue(r)
        p = provisioning[name]
        if p.base is None:
            out[q] = p
            continue
        alloc = plan.allocations[ids[name]]
        n = len(alloc.starts)  # instances per cycle the allocation lists
        cycle, k = divmod(r.instance, n)
        start = int(alloc.starts[k]) + cycle * plan.horizon
        block = np.asarray(alloc.blocks[k if len(alloc.blocks) > 1 else 0], dtype=np.int64)
        base = np.zeros(end_steps, dtype=np.int64)
        steps = start + np.arange(block.size)
        keep = steps < end_steps
        base[steps[keep]] = block[keep]
        out[q] = Provisioning(base=base)
        out_ids[q] = ids[name]
    return out, out_ids


def adhoc_jobs(config: MorpheusConfig, end: float) -> list[tuple[float, int, float]]:
    """Poisson ad hoc jobs over [0, end): ``(arrival, containers, seconds)`` each, one task of 1 to
    ``containers_per_machine`` containers (uniform) on one machine, of exponential length, offering
    ``adhoc_load`` of the cluster."""
    if config.adhoc_load <= 0:
        return []
    rng = np.random.default_rng([config.seed, ADHOC_STREAM])
    mean = config.adhoc_task_minutes * STEP
    width = config.containers_per_machine
    rate = config.adhoc_load * config.containers / ((1 + width) / 2 * mean)
    out, t = [], float(rng.exponential(1.0 / rate))
    while t < end:
        out.append((t, int(rng.integers(1, width + 1)), max(float(rng.exponential(mean)), 1.0)))
        t += float(rng.exponential(1.0 / rate))
    return out


def cluster_config(config: MorpheusConfig, end: float) -> ClusterConfig:
    c = config.containers_per_machine
    return ClusterConfig(machines=config.machines, cpu_per_machine=c, mem_per_machine=c, placement="first_fit",
                         horizon=max(end, 1.0), seed=config.seed, load=0.001, max_events=10**9)


def build_model(config: MorpheusConfig, *, check_every_event: bool = False, collector=None):
    """The model of one run (not yet run), its plan, the plan's refusals and the end time."""
    w = workload(config)
    end = max(r.period_start + w.deadline(r.template.name) for r in w.runs) + STEP
    end = max(end, config.cycle_minutes * STEP)
    end_steps = int(math.ceil(end / STEP)) + 1
    prov, plan, ids, refused = provision(config, w, end_steps)
    by_run = config.reservations == "per_run"
    if by_run:
        prov, ids = per_run(w, prov, plan, ids, end_steps)
    rule = ReprovisionRule(rho=config.rho, hold_seconds=config.hold_seconds, recent_seconds=config.recent_seconds,
                           recent_counts_grants=config.recent_counts_grants)
    dra = (plan, ids, rule, by_run) if config.arm == "morpheus_dra" else None
    model = MorpheusModel(cluster_config(config, end), list(w.runs), adhoc_jobs(config, end), prov,
                          reprovision_with=dra, collector=collector, check_every_event=check_every_event,
                          literal=config.worst_case in ("literal", "resume"), resume=config.worst_case == "resume",
                          queue_of=run_queue if by_run else job_queue)
    model.start()  # ready to run: its collector and reprovisioner exist
    return model, w, plan, refused, end


def simulate(config: MorpheusConfig, *, check_every_event: bool = False) -> MorpheusResult:
    """Run one cycle for ``config.arm`` (see the module docstring) and measure it."""
    t0 = time.perf_counter()
    model, w, plan, refused, end = build_model(config, check_every_event=check_every_event)
    model.run_until(end)
    model.check_invariants()
    return collect(model, config, w, plan, refused, end, time.perf_counter() - t0)


# ---- footprint (Fig. 10) ---------------------------------------------------------------------------------------
# Sweeps go through cluster_sim.sweep.run_grid: a point is one seeded cycle, and only sweep_row travels back
# (a MorpheusResult holds the runs' frames and the model's series). Counts are summed over seeds and the
# rates averaged in seed order, as the loops these replace did, so the tables keep their last bits.
def attainment(config: MorpheusConfig, machines: int, seeds, *, client=None, cache=None) -> float:
    """SLO attainment on ``machines`` machines, pooled over the runs of ``seeds``. ``client`` and ``cache``
    go to :func:`cluster_sim.sweep.run_grid`."""
    point = (config.arm, int(machines))
    return attainments(config, [point], seeds, client=client, cache=cache)[point]


def footprint(config: MorpheusConfig, target: float | None = None, *, seeds=None, max_machines: int | None = None,
              sizes=None, client=None, cache=None):
    """The smallest cluster (machines) whose attainment, pooled over ``seeds`` (default: the config's
    seed), reaches ``target`` (default ``config.target_attainment``); None if even ``max_machines``
    (default 8x the config's) does not. Attainment is taken to grow with the cluster: by bisection, or,
    given ``sizes``, trying them from the largest down and stopping at the first that falls short (a
    coarse, cheaper search). Each size tried is one sweep over the seeds (:func:`attainment`; ``client``
    and ``cache`` go to :func:`cluster_sim.sweep.run_grid`).

    Returns ``(machines or None, {machines: attainment})`` with every size tried.
    """
    return footprint_arms(config, (config.arm,), target, seeds=seeds, max_machines=max_machines, sizes=sizes,
                          client=client, cache=cache)[config.arm]


def attainments(config: MorpheusConfig, points, seeds, *, client=None, cache=None, paced_as=None) -> dict:
    """:func:`attainment` of each ``(arm, machines)`` of ``points`` on ``config``, all in one sweep over
    ``seeds``: ``{(arm, machines): attainment}``. ``paced_as``: the config whose sweeps' pace this one shares
    (:func:`cluster_sim.sweep.run_grid`; the footprints' trace config costs what the notebook's config does)."""
    points = list(dict.fromkeys((arm, int(m)) for arm, m in points))
    seeds = [int(s) for s in seeds]
    df = run_grid(run, config, [{"arm": arm, "machines": m} for arm, m in points], seeds=seeds, metrics=sweep_row,
                  client=client, cache=cache, paced_as=paced_as, estimate=estimated_seconds)
    out = {}
    for k, point in enumerate(points):
        rs = df.iloc[k * len(seeds):(k + 1) * len(seeds)]  # the point's seeds (the seed varies fastest)
        runs, violated = int(rs.runs.sum()), int(rs.violations.sum())
        out[point] = 1.0 - violated / runs if runs else 0.0
    return out


def footprint_arms(config: MorpheusConfig, arms, target: float | None = None, *, seeds=None,
                   max_machines: int | None = None, sizes=None, client=None, cache=None, known=None,
                   paced_as=None) -> dict:
    """:func:`footprint` of each of ``arms`` on ``config`` (``{arm: (machines or None, {machines:
    attainment})}``), the searches run side by side: each arm tries the sizes its own search would try alone,
    and the sizes all the arms ask for next are one sweep (:func:`attainments`), so a LocalCluster's workers
    get every arm's seeds at once instead of one arm's few seeds at a time. ``known``: attainments already
    measured over the same seeds (``{(arm, machines): attainment}``), not measured again. ``paced_as`` goes to
    :func:`attainments`."""
    target = config.target_attainment if target is None else target
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0.0 < target <= 1.0:
        raise ValueError(f"target={target!r} is out of range: need 0 < target <= 1")
    seeds = (config.seed,) if seeds is None else tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds=() is not allowed: need at least one seed")
    for arm in arms:
        if arm not in ARMS:
            raise ValueError(f"arms contains {arm!r}, which is not allowed: choose from {', '.join(map(repr, ARMS))}")
    cap = max_machines or 8 * config.machines
    sizes = None if sizes is None else search_sizes(sizes, cap)
    searches = {arm: _search(target, config.machines, cap, sizes) for arm in dict.fromkeys(arms)}
    found, asked, got = {}, {}, dict(known or {})
    for arm, search in searches.items():
        try:
            asked[arm] = next(search)
        except StopIteration as stop:
            found[arm] = stop.value
    while asked:
        todo = [point for point in asked.items() if point not in got]  # (arm, machines), in the arms' order
        if todo:
            got.update(attainments(config, todo, seeds, client=client, cache=cache, paced_as=paced_as))
        for arm in list(asked):
            try:
                asked[arm] = searches[arm].send(got[(arm, asked[arm])])
            except StopIteration as stop:
                found[arm] = stop.value
                del asked[arm]
    return {arm: found[arm] for arm in searches}


def search_sizes(sizes, cap: int) -> list[int]:
    """A coarse search's sizes, largest first; a ``ValueError`` unless every one is from 1 to ``cap``."""
    out = sorted({int(m) for m in sizes}, reverse=True)
    if not out or out[-1] < 1 or out[0] > cap:
        raise ValueError(f"sizes={out!r} is out of range: need machines from 1 to max_machines={cap}")
    return out


def _search(target: float, start: int, cap: int, sizes):
    """One footprint search as a generator: it yields the machines it needs the attainment of and is sent
    that attainment; it returns ``(machines or None, {machines: attainment})``. Given ``sizes`` (largest
    first) it tries them down to the first that falls short; else it doubles from ``start`` up to ``cap``
    until one reaches ``target``, then bisects between 0 (which reaches nothing) and that size."""
    tried: dict[int, float] = {}
    if sizes is not None:
        best = None
        for m in sizes:
            if m not in tried:
                tried[m] = yield m
            if tried[m] < target:
                break
            best = m
        return best, dict(sorted(tried.items()))
    hi = start
    while True:
        if hi not in tried:
            tried[hi] = yield hi
        if tried[hi] >= target:
            break
        if hi >= cap:
            return None, dict(sorted(tried.items()))
        hi = min(2 * hi, cap)
    lo = 0  # 0 machines reach nothing
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid not in tried:
            tried[mid] = yield mid
        if tried[mid] >= target:
            hi = mid
        else:
            lo = mid
    return hi, dict(sorted(tried.items()))


# ---- run -> result, cached; pooled comparisons -------------------------------------------------------------------
def estimated_seconds(config: MorpheusConfig) -> float:
    """A cycle's estimated time (``config.work().seconds``), the sweeps' ``run_grid`` estimate=: at ``paper`` a
    sweep of two or more cycles goes to the workers at once (a pace timed here could come from a cycle this process
    remembered, or from the cheapest arm, and keep a round of three cycles here, one after another); at ``ci`` and
    ``default`` the sweeps stay in this process, as before."""
    return config.work().seconds


@remembered(maxsize=256)
def _cached(config: MorpheusConfig) -> MorpheusResult:
    return simulate(config)


def run(config: MorpheusConfig) -> MorpheusResult:
    """``simulate(config)``, remembered: the same config (seed included) is simulated once, so a notebook's
    pooled tables, footprint searches and panel redraws never simulate a cycle twice. Each call returns
    its own copy of the result: what a reader changes in it changes no later call."""
    if not isinstance(config, MorpheusConfig):
        raise ValueError(f"config={type(config).__name__} is not allowed: need a MorpheusConfig")
    return _cached(config)


def compare(config: MorpheusConfig, arms=ARMS, seeds=(0, 1, 2), *, client=None, cache=None,
            paced_as=None) -> pd.DataFrame:
    """Every arm on the same seeded workloads, pooled over ``seeds``: runs, worst-case violations and
    their rate (pooled: violations / runs), mean utilisation and reserved share, DRA grants. ``client``
    and ``cache`` go to :func:`cluster_sim.sweep.run_grid`, and so does ``paced_as``."""
    for arm in arms:
        if arm not in ARMS:
            raise ValueError(f"arms contains {arm!r}, which is not allowed: choose from {', '.join(map(repr, ARMS))}")
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds=() is not allowed: need at least one seed")
    df = run_grid(run, config, {"arm": list(arms)}, seeds=list(seeds), metrics=sweep_row, client=client,
                  cache=cache, paced_as=paced_as, estimate=estimated_seconds)
    rows = []
    for k, arm in enumerate(arms):
        rs = df.iloc[k * len(seeds):(k + 1) * len(seeds)]  # the arm's seeds, in order (the seed varies fastest)
        runs, violations = int(rs.runs.sum()), int(rs.violations.sum())
        rows.append(dict(arm=arm, runs=runs, violations=violations,
                         slo_violation_rate=violations / runs if runs else 0.0,
                         utilisation=float(np.mean(rs.utilisation.to_numpy())),
                         reserved_share=float(np.mean(rs.reserved_share.to_numpy())),
                         periodic_utilisation=float(np.mean(rs.periodic_utilisation.to_numpy())),
                         refused=int(rs.refused.sum()), grants=int(rs.grants.sum())))
    return pd.DataFrame(rows).set_index("arm")
