"""Lab 05's experiments: one run (``run(config) -> WingResult``) and the sweeps of §7.

A run replays the run window of a :class:`~cluster_sim.wing.scheduling.workload.ValueWorkload` on a
:class:`~cluster_sim.wing.scheduling.model.WingModel`:

* **capacity**: each organisation's peak use in the trace is what it needs; at ``capacity`` c its
  queue holds ``ceil(c * peak)`` containers, and at least its largest job (:func:`queue_plan`).
  With ``queues="org"`` the queues have hard boundaries (no borrowing, §6); with
  ``queues="cluster"`` one queue holds the same machines (§7.3: the organisations' peaks do not
  coincide, so one queue serves more);
* **jobs** are rigid gangs of ``containers`` tasks of one container each; a queue's first job keeps
  the room it waits for, and nothing behind it starts meanwhile (``backfill=False``: YARN reserves
  room for the request at the head of a queue; Wing §7.2 credits Wing-Direct's knowledge of job
  sizes for completing "jobs at the head of queue"); with ``backfill=True`` a job behind it that
  fits starts first;
* **orderings** (smallest key first, then arrival): PRIO by user priority; the Wing policies by
  value efficiency, highest first (times a mis-prediction factor in [1/s, s] when s > 1);
  Wing-MIL by Wing-Agg's efficiency times its value function at the job's lateness, re-placed in its
  queue each time that steps down (the decay model: :func:`~.workload.decay_profiles`);
* **value**: a job earns its outputs' downloads later than its completion; ``value_share`` is what
  the run's jobs earned over every download of their outputs (the paper's "value achievable").

Example
-------
>>> r = run(WingConfig.ci().replace(capacity=1.0, queues="cluster", policy="prio"))
>>> r.value_share, r.failed_jobs, r.pending_jobs          # at 100% every job runs as in the trace
(1.0, 0, 0)
"""

from __future__ import annotations

import copy
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from ...engine import ClusterConfig, Job, QueueSpec, Stage, Task
from ...engine.model import gc_paused
from ...sweep import run_grid
from ..multihop import show
from ..lake import GIB, ROW_BYTES, generate_lake, lake_rows
from ..provenance import DAY
from .config import CONVERGED, PAPER_REQUEST_PEAK, POLICIES, POLICY_NAMES, WingConfig
from .model import ProvenanceRecorder, WingModel
from .workload import GRID, ValueWorkload, decay_at, prepare, value_attained, value_efficiency

#: the random stream of the mis-prediction factors (one per run job, the same for every policy and s)
MISPREDICTION_STREAM = 0x5E5
CLUSTER = "cluster"
_CACHE: "OrderedDict[tuple, ValueWorkload]" = OrderedDict()
#: prepared lakes remembered: at least the last CACHE_SIZE, and more while the remembered lakes' estimated size
#: (``lake.ROW_BYTES`` a ProvRepo row) stays within CACHE_BYTES. Lab 05's notebook reads 26 lakes at ci and
#: default (its pool's 20, six under another priority rule, then the pool's first seeds again); a ci lake is
#: estimated at 14 MB (11 MiB measured), a paper one at 190 MB, so only small lakes are kept beyond six
CACHE_SIZE = 6
CACHE_BYTES = GIB // 2


def workload_for(config: WingConfig) -> ValueWorkload:
    """The prepared lake of ``config`` (remembered: a run with another policy, capacity or queue mode reuses
    it). Each call returns its own copy: a reader may change it without changing a later call or run."""
    return copy.deepcopy(_remembered_lake(config))


def _remembered_lake(config: WingConfig) -> ValueWorkload:
    """The remembered lake itself, for :func:`run` only: a run reads it (and fills its memos of Wing's
    predictions, which later runs reuse) and never hands it out."""
    key = config.lake_key()
    if key in _CACHE:
        _CACHE.move_to_end(key)
        w = _CACHE[key]
    else:
        w = prepare(config)
        _CACHE[key] = w
        while len(_CACHE) > CACHE_SIZE and sum(_lake_bytes(k) for k in _CACHE) > CACHE_BYTES:
            _CACHE.popitem(last=False)
    return w


def remembered_lakes(config: WingConfig, seeds) -> list:
    """The generated lakes (:class:`~cluster_sim.wing.lake.Lake`) of ``config`` at those of ``seeds`` whose prepared
    lakes this process remembers (Lab 05's claims prepared its pool's), each a copy; the others are left out. The
    calibration reads them instead of generating them again (:func:`cluster_sim.wing.calibration.calibration_table`'s
    ``lakes``): at ``ci`` and ``default`` generating ten lakes costs about 1.5 s, copying them 0.03 s."""
    out = []
    for seed in seeds:
        w = _CACHE.get(config.replace(seed=int(seed)).lake_key())
        if w is not None:
            out.append(copy.deepcopy(w.lake))
    return out


def lake_of(config: WingConfig) -> tuple:
    """What a sweep groups its points by (``run_grid``'s ``group=``): the runs of one lake go to one Dask worker,
    which prepares the lake once and remembers it, instead of every worker preparing every lake."""
    return config.lake_key()
def _lake_bytes(key: tuple) -> float:
    """The estimated size of a remembered lake, from its :meth:`WingConfig.lake_key` (its rows)."""
    lake = key[0]
    return ROW_BYTES * lake_rows(lake.days * lake.jobs_per_day)


@dataclass
class WingResult:
    """One run: the value attained, each job's outcome, the decisions, the cluster."""

    config: WingConfig
    value: float  # downloads earned by the run's jobs
    achievable: float  # every download of the run's jobs' outputs
    jobs: pd.DataFrame  # per run job: outcome (state, start, finish, value) beside the trace
    admissions: pd.DataFrame  # every gang admitted, in order: time (s from the run's start), job, queue
    machines: int
    slots: int  # containers the cluster holds
    queue_capacity: pd.Series  # containers each queue may hold
    failures: pd.Series  # job -> why it failed
    wall_seconds: float
    events: int  # arrivals, admissions, job and task completions, re-placements
    rekeys: int
    prov: pd.DataFrame | None = field(default=None, repr=False)  # ProvRepo of the run, when recorded
    seen: pd.DataFrame | None = field(default=None, repr=False)  # the run's true read dependencies, when recorded

    @property
    def value_share(self) -> float:
        """Value attained over value achievable (the paper's normalisation)."""
        return self.value / self.achievable if self.achievable > 0 else 1.0

    @property
    def failed_jobs(self) -> int:
        """Jobs that failed for missing input."""
        return int((self.jobs["state"] == "failed").sum())

    @property
    def completed_jobs(self) -> int:
        return int((self.jobs["state"] == "completed").sum())

    @property
    def pending_jobs(self) -> int:
        """Jobs neither completed nor failed at the horizon (waiting for input, queued, or running)."""
        return int((self.jobs["state"] == "pending").sum())

    @property
    def too_big_jobs(self) -> int:
        """Jobs whose gang is larger than their queue will ever hold at this capacity (they wait to the horizon)."""
        return int(self.jobs["too_big"].sum())

    @property
    def policy(self) -> str:
        return POLICY_NAMES[self.config.policy]

    def by_kind(self) -> pd.DataFrame:
        """Recurring vs ad hoc jobs: how many, the share failed, completed and pending, and value (§7.1)."""
        j = self.jobs.assign(cls=np.where(self.jobs["kind"] == "adhoc", "ad hoc", "recurring"))
        rows = []
        for cls, g in j.groupby("cls"):
            rows.append({"jobs": len(g), "failed": float((g["state"] == "failed").mean()),
                         "completed": float((g["state"] == "completed").mean()),
                         "pending": float((g["state"] == "pending").mean()),
                         "value achievable": float(g["k_true"].sum()), "value attained": float(g["value"].sum()),
                         "value share": float(g["value"].sum() / g["k_true"].sum()) if g["k_true"].sum() > 0 else 1.0})
        return pd.DataFrame(rows, index=pd.Index([c for c, _ in j.groupby("cls")], name="jobs"))

    def summary(self) -> dict:
        return {"policy": self.policy, "capacity": self.config.capacity, "queues": self.config.queues,
                "seed": self.config.seed, "value_share": self.value_share, "failed_jobs": self.failed_jobs,
                "completed_jobs": self.completed_jobs, "pending_jobs": self.pending_jobs,
                "too_big_jobs": self.too_big_jobs, "jobs": len(self.jobs)}


# ---- the run -----------------------------------------------------------------------------------------
def misprediction_factors(config: WingConfig, jobs: pd.DataFrame) -> np.ndarray:
    """One factor per run job, log-uniform in [1/s, s] (s = ``config.misprediction``); all 1 when s = 1.

    The same uniform draws serve every s and every policy, so runs differ only by s."""
    u = np.random.default_rng([config.seed, MISPREDICTION_STREAM]).uniform(-1.0, 1.0, len(jobs))
    return config.misprediction ** u


def efficiency(config: WingConfig, w: ValueWorkload, priority: Callable | None = None) -> pd.Series | None:
    """The value efficiency the policy orders by (None for PRIO), mis-prediction factors included.

    ``priority(history, jobs) -> Series`` replaces Wing-Agg's (and Wing-MIL's) prediction: an
    exercise plugs its own :func:`~.workload.value_efficiency` in here."""
    p = config.policy
    if p == "prio":
        return None
    jobs = w.jobs
    if p in ("wing_agg", "wing_mil"):
        if priority is not None:
            a = w.hist_aggregates(config.iterations)
            history = w._history(agg_value=a["value"], agg_compute=a["compute"])
            e = priority(history.copy(), jobs[["job", "template", "kind", "user", "submit"]].copy())
            e = _check_priority(e, jobs)
        else:
            e = w.agg_prediction(config.iterations).to_numpy(float)
    elif p == "wing_direct":
        e = jobs["direct_pred"].to_numpy(float)
    elif p == "oracle_wing_direct":
        e = jobs["direct_true"].to_numpy(float)
    elif p == "oracle_wing_agg":
        e = jobs["agg_true"].to_numpy(float)
    else:  # pragma: no cover - the config refuses other names
        raise ValueError(f"policy={show(p)} is not allowed: choose one of {', '.join(POLICIES)}")
    return pd.Series(e * misprediction_factors(config, jobs), index=jobs["job"].to_numpy(), name="efficiency")


def _check_priority(e, jobs: pd.DataFrame) -> np.ndarray:
    if not isinstance(e, pd.Series):
        raise ValueError(f"priority(history, jobs) must return a pandas Series indexed by job; got {type(e).__name__}")
    missing = pd.Index(jobs["job"]).difference(e.index)
    if len(missing):
        raise ValueError(f"priority(history, jobs) gave no value for {len(missing)} job(s), e.g. job {show(missing[0])}")
    v = pd.to_numeric(e.reindex(jobs["job"]), errors="coerce").to_numpy(float)
    if not np.isfinite(v).all():
        bad = jobs["job"].to_numpy()[~np.isfinite(v)][0]
        raise ValueError(f"priority(history, jobs) gave job {show(bad)} a NaN or infinite value")
    return v


def queue_plan(config: WingConfig, peaks: pd.Series, biggest: pd.Series | None = None, peak: int | None = None
               ) -> tuple[int, list[QueueSpec] | None, pd.Series]:
    """Machines, the queues (None: one cluster-wide queue) and each queue's capacity (containers).

    ``peaks``: each organisation's peak use in the trace (what it needs); ``biggest``: its largest
    job; ``peak``: the trace's cluster-wide peak (needed with ``capacity_basis="paper"``).
    Organisation o holds ``max(ceil(f * peaks[o]), biggest[o])`` containers, where the share f is
    ``capacity`` itself (``capacity_basis="peaks"``: a share of the organisation's own peak) or, on
    the paper's basis, ``capacity / 0.6 * peak / sum(peaks)`` (the paper's cluster is such that the
    job requests peak at 60 % of it, §7.3; its queues split it in proportion to the organisations'
    peaks). A queue always holds its largest gang, so no job waits forever for want of a big enough
    queue (this floor is what keeps a reduced-scale lake's small queues meaningful at 20%). With
    ``queues="org"`` the queues have hard boundaries (no borrowing, §6); with ``queues="cluster"``
    one queue holds the same machines (§7.3)."""
    peaks = peaks[peaks > 0]
    if biggest is None:
        biggest = pd.Series(1, index=peaks.index)
    share = config.capacity
    if config.capacity_basis == "paper":
        if peak is None or not peak > 0:
            raise ValueError(f"peak={peak!r}: capacity_basis='paper' needs the trace's cluster-wide peak use (> 0)")
        share = config.capacity / PAPER_REQUEST_PEAK * float(peak) / float(peaks.sum())
    cap = pd.Series({o: float(max(math.ceil(share * p - 1e-9), int(biggest.get(o, 1)))) for o, p in peaks.items()})
    s = config.slots_per_machine
    machines = max(1, math.ceil(cap.sum() / s))
    total = machines * s
    if config.queues == "cluster":
        return machines, None, pd.Series({CLUSTER: float(total)})
    specs = [QueueSpec(org_queue(o), share=c / total, max_share=c / total) for o, c in cap.items()]
    return machines, specs, pd.Series({org_queue(o): c for o, c in cap.items()})


def org_queue(org) -> str:
    """The queue of organisation ``org``."""
    return f"o{org}"


def build_jobs(w: ValueWorkload, cluster_wide: bool) -> list[Job]:
    """The run's jobs as engine jobs: one stage, a gang of one-container tasks, at their trace submission."""
    rs = w.config.run_start
    out, tid = [], 0
    j = w.jobs
    queue = CLUSTER if cluster_wide else None
    demand = (1, 1)  # one container: the one tuple for every task (Task checks a tuple it has seen once only)
    # the columns as Python numbers (tolist), not numpy scalars: the same values, and the same float subtraction,
    # without a numpy scalar operation per job and a float() per task
    for job_id, submit, org, n, runtime, prio in zip(j["job"].tolist(), j["submit"].to_numpy(float).tolist(),
                                                     j["org"].tolist(), j["containers"].tolist(),
                                                     j["runtime"].to_numpy(float).tolist(), j["priority"].tolist()):
        n = int(n)
        job = Job(id=int(job_id), arrival=float(submit - rs), queue=queue or org_queue(org), gang=n,
                  priority=int(prio))
        job.stages.append(Stage(0, [Task(tid + k, job, 0, demand, runtime) for k in range(n)]))
        tid += n
        out.append(job)
    return out


def order_for(config: WingConfig, w: ValueWorkload, eff: pd.Series | None, model_ref: list):
    """The queue ordering: "priority", or a key (smallest first). Wing-MIL's key reads the model's clock."""
    if eff is None:
        return "priority", None
    e = {int(k): float(v) for k, v in eff.items()}
    if config.policy != "wing_mil":
        return (lambda job: -e[job.id]), None
    phi = {g: row.to_numpy(float) for g, row in w.phi.iterrows()}
    group = {int(k): phi[g] for k, g in w.groups.items()}

    def key(job):
        return -e[job.id] * decay_at(group[job.id], model_ref[0].time - job.arrival)

    rs = w.config.run_start
    times = {int(j): (s - rs) + GRID[1:] for j, s in zip(w.jobs["job"], w.jobs["submit"])}
    return key, times


def engine_config(config: WingConfig, w: ValueWorkload, machines: int) -> ClusterConfig:
    """The engine's config for the run: its machines, first-fit placement, the horizon, the job count."""
    horizon = w.horizon
    if horizon > 1e6:
        raise ValueError(f"run_days={config.run_days!r}: the run and the week of downloads after it take "
                         f"{horizon:,.0f} s, more than the engine's horizon of 1e6 s; lower run_days")
    n = max(len(w.jobs), 1)
    tasks_per_job = float(np.clip(w.jobs["containers"].mean() if len(w.jobs) else 1.0, 1.0, 1000.0))
    s = config.slots_per_machine
    return ClusterConfig(machines=machines, cpu_per_machine=s, mem_per_machine=s, placement="first_fit",
                         horizon=horizon, job_rate=n / horizon, tasks_per_job=tasks_per_job, seed=config.seed,
                         max_events=10**9)


def recorder_for(w: ValueWorkload):
    """A :class:`ProvenanceRecorder` factory for the run's jobs (lake files; sim times from the run's start)."""
    rs = w.config.run_start
    ids = set(w.jobs["job"].tolist())
    p = w.lake.prov
    mine = p[p["job"].isin(ids)]
    reads = mine[mine["op"] == "read"].groupby("job")["file"].apply(list).to_dict()
    writes = mine[mine["op"] == "write"].groupby("job")["file"].apply(list).to_dict()
    d = w.lake.downloads[w.lake.downloads["job"].isin(ids)]
    downloads = {}
    for j, f, t in zip(d["job"].to_numpy(), d["file"].to_numpy(), d["time"].to_numpy(float)):
        downloads.setdefault(int(j), []).append((f, t - rs))
    # jobs submitted before the run and ending in it are not simulated: they write at their trace times
    before = w.lake.jobs.loc[w.lake.jobs["submit"] < rs, "job"]
    o = p[(p["op"] == "write") & (p["time"] >= rs) & p["job"].isin(before)]
    outside = [(int(j), f, t - rs) for j, f, t in zip(o["job"].to_numpy(), o["file"].to_numpy(), o["time"].to_numpy(float))]
    return lambda model: ProvenanceRecorder(model, {int(k): v for k, v in reads.items()},
                                            {int(k): v for k, v in writes.items()}, downloads, outside)


def run(config: WingConfig, *, priority: Callable | None = None, workload: ValueWorkload | None = None,
        record: bool = False, check_every_event: bool = False) -> WingResult:
    """Replay ``config``'s run window with its policy and capacity; check the invariants; collect the outcome.

    ``priority(history, jobs) -> Series`` replaces Wing-Agg's prediction (policy ``wing_agg`` or
    ``wing_mil``); ``record`` keeps the run's ProvRepo (:class:`ProvenanceRecorder`);
    ``check_every_event`` checks the engine's and Wing's invariants after every event (tests).
    """
    if not isinstance(config, WingConfig):
        raise ValueError(f"config must be a WingConfig, got {type(config).__name__}")
    if priority is not None and config.policy not in ("wing_agg", "wing_mil"):
        raise ValueError(f"priority= replaces Wing-Agg's prediction: it needs policy 'wing_agg' or 'wing_mil', "
                         f"not policy={config.policy!r}")
    t0 = time.perf_counter()
    w = _remembered_lake(config) if workload is None else workload
    eff = efficiency(config, w, priority)
    biggest, needs, polling, delay = _run_inputs(w) if workload is None else _lake_inputs(w)
    machines, specs, cap = queue_plan(config, w.peaks, biggest, w.peak)
    # the collector paused from the jobs' making to the outcome, as the model pauses it while it runs (gc_paused):
    # a run makes thousands of tasks, jobs and agents that refer to each other, and young-generation collections
    # walked them again and again while they were made and read; they are collected once the run is over
    with gc_paused(WingModel.pause_gc):
        jobs = build_jobs(w, specs is None)
        ref: list = []
        order, times = order_for(config, w, eff, ref)
        if specs is None:
            specs = [QueueSpec(CLUSTER, order=order, backfill=config.backfill)]
        else:
            specs = [QueueSpec(s.name, share=s.share, max_share=s.max_share, order=order, backfill=config.backfill)
                     for s in specs]
        model = WingModel(engine_config(config, w, machines), specs, jobs, needs=needs, polling=polling,
                          poll_delay=delay, rekey_times=times, recorder=recorder_for(w) if record else None,
                          check_every_event=check_every_event, record_series=False)
        ref.append(model)
        model.run_until(w.horizon)
        model.check_invariants()
        return _collect(config, w, model, cap, eff, time.perf_counter() - t0)


def _lake_inputs(w: ValueWorkload) -> tuple:
    """What every run of lake ``w`` reads from it alike: each organisation's largest job, each job's hard inputs
    (the upstream jobs it needs), the polling jobs and their delays (the model copies the last three)."""
    biggest = w.jobs.groupby("org")["containers"].max()
    needs: dict[int, list[int]] = {}
    hard = w.deps[~w.deps["stale_ok"]]
    for j, u in zip(hard["job"].to_numpy(), hard["depOn"].to_numpy()):
        needs.setdefault(int(j), []).append(int(u))
    polling = set(w.jobs.loc[w.jobs["dep_mode"] == "polling", "job"].astype(int))
    delay = dict(zip(w.jobs["job"].astype(int), w.jobs["poll_delay"].astype(float)))
    return biggest, needs, polling, delay


def _run_inputs(w: ValueWorkload) -> tuple:
    """:func:`_lake_inputs` of a remembered lake, kept on it: its runs (a claims pool runs 30 on each) read them
    once. Only for the remembered lake, which no caller changes (a lake given to :func:`run` is read afresh)."""
    kept = w.__dict__.get("_run_inputs")
    if kept is None:
        kept = w.__dict__["_run_inputs"] = _lake_inputs(w)
    return kept


def _collect(config, w, model: WingModel, cap: pd.Series, eff, wall: float) -> WingResult:
    rs = config.run_start
    j = w.jobs
    by_id = model.by_id
    engine_jobs = [by_id[i] for i in j["job"].tolist()]  # the run's jobs in the frame's order (read once)
    start = np.array([job.first_start for job in engine_jobs]) + rs
    finish = np.array([job.finish for job in engine_jobs]) + rs
    failed = np.array([job.failed for job in engine_jobs])
    state = np.where(failed, "failed", np.where(np.isnan(finish), "pending", "completed"))
    # value_attained(w.downloads, finish by job) counted in numpy: each download of a run job's output is earned if
    # later than the job's completion (NaN compares False); the same counts, as floats (whole numbers, exact)
    d = w.downloads
    writer = pd.Index(j["job"].to_numpy()).get_indexer(d["job"].to_numpy())  # -1: not a run job (none, by prepare)
    ok = writer >= 0
    earned = np.zeros(len(d), dtype=bool)
    earned[ok] = d["time"].to_numpy(float)[ok] > finish[writer[ok]]
    value = np.bincount(writer[earned], minlength=len(j)).astype(float)
    leaf = np.array([job.queue for job in engine_jobs])
    too_big = j["containers"].to_numpy() > cap.reindex(leaf).to_numpy() + 1e-9
    out = j[["job", "template", "kind", "user", "org", "queue", "priority", "submit", "runtime", "containers",
             "compute", "dep_mode", "k_true", "direct_true", "agg_true", "direct_pred", "agg_pred"]].copy()
    out["end_trace"] = j["submit"] + j["runtime"]
    out["start"], out["finish"], out["state"] = start, finish, state
    out["value"] = value
    out["too_big"] = too_big
    out["efficiency"] = eff.to_numpy() if eff is not None else np.nan
    adm = pd.DataFrame(model.capacity_scheduler.admissions, columns=["time", "job", "tasks", "gang"])
    adm["queue"] = adm["job"].map(lambda i: by_id[int(i)].queue)
    n_tasks = int(j["containers"].sum())
    events = len(j) + len(adm) + int((state == "completed").sum()) + n_tasks + model.rekeys
    prov = seen = None
    if model.recorder is not None:
        prov = model.recorder.prov(offset=rs)
        seen = pd.DataFrame(model.recorder.seen, columns=["job", "depOn"]).drop_duplicates().sort_values(
            ["job", "depOn"], ignore_index=True)
    return WingResult(config=config, value=float(value.sum()), achievable=w.achievable, jobs=out,
                      admissions=adm[["time", "job", "queue"]], machines=model.config.machines,
                      slots=int(model.csv.ledger.capacity[:, 0].sum()), queue_capacity=cap,
                      failures=pd.Series(model.fail_reason, dtype=object), wall_seconds=wall, events=events,
                      rekeys=model.rekeys, prov=prov, seen=seen)


# ---- the sweeps of §7: every loop over configs and seeds goes through cluster_sim.sweep.run_grid ------
SWEEP_METRICS = ("value_share", "failed_jobs", "completed_jobs", "pending_jobs", "too_big_jobs", "jobs", "wall_seconds")


def sweep_metrics(result: WingResult) -> dict:
    """sweep's row for one run: the summary's numbers and the run's wall time."""
    row = result.summary()
    return {k: row[k] if k in row else getattr(result, k) for k in SWEEP_METRICS}


def sweep(config: WingConfig, *, policies=POLICIES, capacities=(1.0, 0.6, 0.4, 0.2), seeds=None,
          queues=None, misprediction=None, iterations=None, client=None, cache=None) -> pd.DataFrame:
    """One row per run of ``config`` with each combination given (None: the config's own value).

    Columns: policy (its name), capacity, queues, seed, value_share, failed_jobs, completed_jobs,
    pending_jobs, too_big_jobs, jobs, misprediction, iterations, wall_seconds (of the run that
    computed the row: a row read from run_grid's cache keeps its first run's time). Rows go seed by
    seed, then queues, capacity, policy, misprediction, iterations. ``client`` and ``cache`` go to
    :func:`cluster_sim.sweep.run_grid`."""
    seeds = (config.seed,) if seeds is None else tuple(seeds)
    queues = (config.queues,) if queues is None else tuple(queues)
    mis = (config.misprediction,) if misprediction is None else tuple(misprediction)
    its = (config.iterations,) if iterations is None else tuple(iterations)
    grid = [{"seed": seed, "queues": q, "capacity": cap, "policy": p, "misprediction": s, "iterations": it}
            for seed in seeds for q in queues for cap in capacities for p in policies for s in mis for it in its]
    df = run_grid(run, config, grid, metrics=sweep_metrics, client=client, cache=cache, group=lake_of)
    df["policy"] = df["policy"].map(POLICY_NAMES)
    head = ["policy", "capacity", "queues", "seed"]
    return df[head + list(SWEEP_METRICS[:-1]) + ["misprediction", "iterations", "wall_seconds"]]


LAKE_ROWS = ("history jobs", "run jobs", "run dependencies", "hard / polling jobs", "value achievable (downloads)",
             "queue peaks (containers)", "aggregate predictions within ±20%", "job-local predictions within ±20%")


def lake_summary(w: ValueWorkload) -> dict:
    """What one prepared lake holds (:data:`LAKE_ROWS`), and how well Wing predicts its run jobs' efficiencies."""
    def within(pred, true):
        return float((np.abs(pred / true - 1) <= 0.2)[true > 0].mean())

    j = w.jobs
    values = (len(w.history), len(j), len(w.deps),
              f"{(j['dep_mode'] == 'hard').sum()} / {(j['dep_mode'] == 'polling').sum()}", int(w.achievable),
              ", ".join(map(str, w.peaks.tolist())), within(j["agg_pred"], j["agg_true"]),
              within(j["direct_pred"], j["direct_true"]))
    return dict(zip(LAKE_ROWS, values))


def _lake_summary_of(config: WingConfig) -> dict:
    """:func:`lake_summary` of the remembered lake (it only reads it: no copy of a paper-scale lake)."""
    return lake_summary(_remembered_lake(config))


def lake_table(config: WingConfig, seeds, *, client=None, cache=None) -> pd.DataFrame:
    """:func:`lake_summary` of ``config``'s lake at each of ``seeds``: one column per seed.
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`; each seed where its lake was prepared
    (``group=lake_of``: on a notebook's kept cluster, the worker that ran the claims' runs of that lake)."""
    df = run_grid(_lake_summary_of, config, {}, seeds=list(seeds), client=client, cache=cache, group=lake_of)
    table = df.set_index("seed")[list(LAKE_ROWS)].T.astype(object)
    table.columns.name = "seed"
    return table


def _lake_statistics_of(config: WingConfig) -> dict:
    """:func:`cluster_sim.wing.calibration.lake_statistics` of ``config``'s generated lake: the remembered one if
    this process prepared it (it only reads it), else generated (not prepared: the statistics need no cut)."""
    from ..calibration import lake_statistics

    w = _CACHE.get(config.lake_key())
    return lake_statistics(w.lake if w is not None else generate_lake(config.lake_config()))


def lake_calibration(config: WingConfig, seeds, *, client=None, cache=None) -> pd.DataFrame:
    """:func:`cluster_sim.wing.calibration.calibration_table` of ``config``'s lakes at ``seeds``, each measured
    where it was prepared (``run_grid(group=lake_of)``: in this process, or on a notebook's kept cluster the worker
    that ran the claims' runs of that lake), so no lake the claims prepared is generated again. The same lakes, so
    the same table. ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    from ..calibration import SHOWN, TARGETS, calibration_table

    if not isinstance(config, WingConfig):
        raise ValueError(f"config must be a WingConfig, got {type(config).__name__}")
    seeds = list(seeds)
    df = run_grid(_lake_statistics_of, config, {}, seeds=seeds, client=client, cache=cache, group=lake_of)
    names = list(TARGETS) + list(SHOWN)
    measured = {int(seed): dict(zip(names, row)) for seed, row in zip(df["seed"], df[names].to_numpy(float))}
    return calibration_table(config.lake_config(), seeds, measured=measured)


# ---- the inversion, on a tiny example ---------------------------------------------------------------
def inversion_example(policy: str) -> pd.DataFrame:
    """A priority inversion that aggregate value unblocks, on three jobs and one machine of 3 containers.

    At t = 0 job **B** (user priority 9, 2 containers, 60 min; its output is downloaded once, at
    3 h) and job **A** (priority 1, 2 containers, 30 min; nobody downloads its output) are
    submitted; they do not fit together. Job **C** (1 container, 10 min) reads A's output with a
    hard dependency: it is submitted at 45 min and its output is downloaded 5 times, at 5 h.
    Job-local value efficiency (downloads per container-second) ranks B over A (1/7200 vs 0);
    aggregate value efficiency ranks A first ((0 + 5) / (3600 + 600) vs 1/7200). ``policy``:
    "prio", "wing_direct" or "wing_agg". Returns one row per job: priority, efficiency, start,
    finish (min), state, value earned.
    """
    if policy not in ("prio", "wing_direct", "wing_agg"):
        raise ValueError(f"policy={policy!r} is not allowed: choose 'prio', 'wing_direct' or 'wing_agg'")
    minute = 60.0
    spec = {"A": (1, 0.0, 2, 30 * minute), "B": (2, 0.0, 2, 60 * minute), "C": (3, 45 * minute, 1, 10 * minute)}
    prio = {"A": 1, "B": 9, "C": 5}
    downloads = pd.DataFrame({"job": [2, 3, 3, 3, 3, 3], "time": [3 * 3600.0] + [5 * 3600.0] * 5})
    compute = {n: c * r for n, (_, _, c, r) in spec.items()}
    k = downloads.groupby("job").size().reindex([1, 2, 3], fill_value=0).astype(float)
    direct = {n: k[spec[n][0]] / compute[n] for n in spec}
    agg = {"A": (k[1] + k[3]) / (compute["A"] + compute["C"]), "B": direct["B"], "C": direct["C"]}
    eff = {"prio": None, "wing_direct": direct, "wing_agg": agg}[policy]
    jobs = []
    for n, (i, t, c, r) in spec.items():
        job = Job(id=i, arrival=t, queue="q", gang=c, priority=prio[n])
        job.stages.append(Stage(0, [Task(10 * i + m, job, 0, (1, 1), r) for m in range(c)]))
        jobs.append(job)
    names = {spec[n][0]: n for n in spec}
    order = "priority" if eff is None else (lambda job: -eff[names[job.id]])
    cfg = ClusterConfig(machines=1, cpu_per_machine=3, mem_per_machine=3, placement="first_fit", horizon=6 * 3600.0)
    model = WingModel(cfg, [QueueSpec("q", order=order, backfill=False)], jobs, needs={3: [1]}, check_every_event=True)
    model.run_until(6 * 3600.0)
    model.check_invariants()
    finish = pd.Series({j.id: j.finish for j in jobs})
    value = value_attained(downloads, finish)
    return pd.DataFrame({"job": list(spec), "user priority": [prio[n] for n in spec],
                         "efficiency": [np.nan if eff is None else eff[n] for n in spec],
                         "start (min)": [j.first_start / minute for j in jobs],
                         "finish (min)": [j.finish / minute for j in jobs],
                         "state": ["failed" if j.failed else ("completed" if not math.isnan(j.finish) else "pending")
                                   for j in jobs],
                         "value": value.reindex([spec[n][0] for n in spec]).to_numpy()}).set_index("job")
