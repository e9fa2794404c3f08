"""The Mesa layer of Resource Miner: an RM-aware shared-state cluster on the engine.

* :class:`RMAwareScheduler` - the engine's parallel :class:`~cluster_sim.engine.Scheduler`, except
  that tasks handed to it first pass the RM filter; the chosen ones go to the RM scheduler.
* :class:`RMScheduler` - the RM scheduler agent (Algorithm 2) with the shadow resource manager
  (Algorithm 1) and the eviction rules of §3.5. RM tasks run on shadow resources without being
  committed to the CSV: they are held in a ledger of their own, and ``CSV + RM <= capacity`` on
  every machine is an invariant (RM tasks only ever sit on resources truly free in the CSV).
* :class:`ShadowProbe` - the exact shadow measurement: a :class:`ShadowMeter` fed by the CSV's
  release / commit / view-sync listeners (one meter per local view when refreshes are staggered).
* :class:`RMinerModel` - the engine's :class:`~cluster_sim.engine.ClusterModel` with the above.

Everything is event time on Mesa's clock; all randomness comes from the config's seed.
"""

from __future__ import annotations

import math
from array import array

import numpy as np

from ..engine import ClusterModel, LocalStateView, Scheduler, StepIntegral
from ..engine.agents import BLOCKED, PLACED
from ..engine.workload import KILLED, RUNNING
from .config import RMinerConfig
from .eviction import conflict_victims
from .measure import ShadowMeter, cumsum_by
from .placement import UniformBuffer, probe_random_fit
from .rm_filter import FilterFactors, RMFilter
from .rm_scheduler import NORMAL, SHADOW, rm_choice
from .shadow_view import ShadowResourceManager
from .theory import shadow_of


#: how a task first started (0: never): by a normal scheduler, on shadow by the RM scheduler, or
#: committed to the CSV by the RM scheduler (Algorithm 2's normal path)
STARTED_BY = {None: 1, "rm": 2, "rm-normal": 3}
STARTED_NAMES = {1: "normal", 2: "rm_shadow", 3: "rm_normal_path"}


class RMAwareScheduler(Scheduler):
    """A normal parallel scheduler whose incoming tasks first meet the RM filter (§3.3).

    With ``placement="random"`` it places by :func:`probe_random_fit` (the same distribution as the
    engine's ``random_fit``, without scanning every machine per decision).
    """

    def choose(self, task) -> int:
        model = self.model
        if model.config.placement == "random":
            return probe_random_fit(self.view.free, task.demand, model.rng, uniforms=model.uniforms)
        return super().choose(task)

    def enqueue(self, tasks) -> None:
        rm = self.model.rm
        if rm is None or not tasks:
            super().enqueue(tasks)
            return
        normal, diverted = rm.filter_tasks(tasks)
        if normal:
            super().enqueue(normal)
        if diverted:
            rm.enqueue(diverted)


class RMRun:
    """One stay of an RM task on shadow resources (a task may have several: restarts, migrations)."""

    __slots__ = ("task", "machine", "demand", "epoch", "start", "finish", "alive")

    def __init__(self, task, machine: int, demand: np.ndarray, epoch: int, start: float, finish: float):
        self.task, self.machine, self.demand = task, machine, demand
        self.epoch, self.start, self.finish, self.alive = epoch, start, finish, True



#: a log of at most this many commits and releases is fed to the meter event by event, a longer one in one batch:
#: the batch's fixed cost (about forty numpy calls) is larger below it. RMiner's labs feed a few hundred events at a
#: view update; the capstone's every ten or so (the batches were a tenth of a run's CPU)
SMALL_BATCH = 32


class ShadowProbe:
    """Feeds the CSV's releases, commits and view updates into one :class:`ShadowMeter`.

    **What counts as shadow** is what no scheduler can see: a released resource stays shadow until
    the next refresh of *any* local view (with synchronous refreshes, all views at once). The RM
    scheduler's shadow state view (Algorithm 1) uses the same definition, so the meter measures what
    RMiner can mine and "shadow used" compares like with like. With staggered refreshes the views
    are refreshed one after another, ``update_delay / views`` apart: each view is still ``d_u``
    stale, but a release is invisible to *every* view only until the next refresh of any of them,
    so the shadow is ``views`` times smaller (see ``RMinerConfig.shadow_period``).
    """

    def __init__(self, model: "RMinerModel", record_series: bool = True):
        cfg = model.config
        self.csv = model.csv
        self.active = cfg.update_delay > 0  # fresh views: nothing is ever invisible
        n, r = self.csv.ledger.capacity.shape
        self._meter = ShadowMeter(n, r, survival_span=max(cfg.shadow_period(), 1e-9))
        self.staggered = cfg.view_refresh == "staggered"
        self.event_log: list | None = None  # (t, kind, machine, amount) when a lab records a trace
        # the shadow as a step function, for figures (not at paper scale)
        self.series = StepIntegral(record=True) if (record_series and self.active) else None
        # Commits and releases since the meter was last fed (their times, machines - a commit's as ~machine -
        # and demands, in C arrays: numpy reads them without a copy), and the CSV's free resources then: the meter
        # is fed them in one batch (ShadowMeter.feed, the same numbers) when it is read or a view is refreshed,
        # as feeding each one was a fifth of a paper-scale run.
        self._new_log()
        self._free_fed = self.csv.ledger.free

    def _new_log(self) -> None:
        self._times, self._machines, self._amounts = array("d"), array("q"), array("q")

    @property
    def meter(self) -> ShadowMeter:
        """The shadow meter, up to date with every commit and release so far."""
        self._feed()
        return self._meter

    def _feed(self) -> None:
        """Feed the meter the events since it was last fed: each machine's CSV free row after each event is its
        row at the last feed plus what its events since gave back and took (the ledger's free now, checked)."""
        if not self._times:
            return
        if len(self._times) <= SMALL_BATCH:
            self._feed_each()
        else:
            self._feed_batch()
        free_now = self.csv.ledger.free
        if not np.array_equal(self._free_fed, free_now):
            m = int(np.argwhere((self._free_fed != free_now).any(axis=1))[0][0])
            raise AssertionError(f"machine {m}'s free resources changed without a commit or release the shadow probe "
                                 f"was told of: {self._free_fed[m].tolist()} from its events, {free_now[m].tolist()} "
                                 "in the ledger")

    def _feed_each(self) -> None:
        """A short log, event by event through the meter's ``release`` and ``allocate`` (the numbers ``feed`` gives:
        tests/rminer/test_issue33_work.py), in Python ints."""
        times, codes, amounts = self._times, self._machines, self._amounts
        self._new_log()
        meter, series = self._meter, self.series
        n_r = meter.n_resources
        free = memoryview(self._free_fed)
        for i, (t, code) in enumerate(zip(times, codes)):
            amount = amounts[i * n_r:(i + 1) * n_r]
            m = code if code >= 0 else ~code
            sign = 1 if code >= 0 else -1
            after = [free[m, r] + sign * amount[r] for r in range(n_r)]
            for r in range(n_r):
                free[m, r] = after[r]
            if code >= 0:
                meter.release(t, m, amount, after)
            else:
                meter.allocate(t, m, after)
            if series is not None:
                series.set(t, meter.shadow_of(0))

    def _feed_batch(self) -> None:
        """A long log in one vectorised batch (``ShadowMeter.feed``)."""
        t = np.frombuffer(self._times, dtype=np.float64)
        coded = np.frombuffer(self._machines, dtype=np.int64)
        demand = np.frombuffer(self._amounts, dtype=np.int64).reshape(len(t), -1)
        self._new_log()  # the arrays above keep the old ones alive
        released = coded >= 0
        machine = np.where(released, coded, ~coded)
        change = np.where(released[:, None], demand, -demand)
        free_after = self._free_fed[machine] + cumsum_by(machine, change)
        np.add.at(self._free_fed, machine, change)
        shadow = self._meter.feed(t, machine, demand, free_after, released)
        if self.series is not None:  # the step series, event by event as before (ci and default runs)
            for when, s in zip(t.tolist(), shadow[:, 0].tolist()):
                self.series.set(when, s)

    def on_release(self, task, t: float) -> None:
        if self.event_log is not None:
            self.event_log.append((t, "release", task.machine, tuple(task.demand)))
        if self.active:
            self._times.append(t)
            self._machines.append(task.machine)
            self._amounts.extend(task.demand)

    def on_commit(self, task, t: float) -> None:
        if self.event_log is not None:
            self.event_log.append((t, "alloc", task.machine, tuple(task.demand)))
        if self.active:
            self._times.append(t)
            self._machines.append(~task.machine)
            self._amounts.extend(task.demand)

    def on_sync(self, view, t: float) -> None:
        # a synchronous refresh calls this once per view at the same time: the first one counts
        if not self.active or not (self.staggered or view is self.csv.views[0]):
            return
        if self.event_log is not None:
            self.event_log.append((t, "sync", -1, ()))
        meter = self.meter
        meter.sync(t)
        if self.series is not None:
            self.series.set(t, meter.shadow_of(0))

    def integral(self, t: float) -> np.ndarray:
        """Time integral of the shadow per resource up to ``t``."""
        meter = self.meter
        meter.advance(t)
        return meter.integral


class RMScheduler(Scheduler):
    """The RM scheduler with its shadow resource manager, RM filter and eviction rules.

    A :class:`~cluster_sim.engine.Scheduler` whose queue is ordered by the RM filter's key and whose
    :meth:`decide` is Algorithm 2: an RM task runs on shadow resources as a *hidden* hold in the one
    ledger (no view shows it, so the central state may hand its resources to a normal task: a
    collision this class resolves by eviction), or takes the normal path as a visible commit.
    """

    def __init__(self, model: "RMinerModel", record_series: bool = True):
        cfg = model.config
        self.cfg = cfg
        self.mode = cfg.mode
        self.filter = RMFilter(
            mode=cfg.mode, multiplier=cfg.filter_threshold, ratio=cfg.filter_ratio,
            max_demand=(cfg.cpu_per_machine // 4, cfg.mem_per_machine // 4),
            max_priority=cfg.rm_max_priority, adaptive=cfg.adaptive_filter,
            # the RM queue length at which the threshold halves: what it decides in one update delay
            queue_scale=max(max(cfg.update_delay, 1e-3) / cfg.rm_think_time, 1.0),
        )
        # it decides on the true state: a fresh view of its own, not one the CSV refreshes
        view = LocalStateView(model.csv, fresh=True)
        super().__init__(model, len(model.schedulers), model.csv, view, policy=None, think_time=cfg.rm_think_time)
        n, r = self.csv.ledger.capacity.shape
        self.srm = ShadowResourceManager(n, r)
        self.srm.next_update = cfg.shadow_period()
        self.frng = np.random.default_rng([cfg.seed, 0xF117E])  # the filter's draws only
        # ... handed out from blocks: the same numbers in the same order as one frng.random() each
        self._filter_draws = UniformBuffer(self.frng)
        self.running: dict[int, RMRun] = {}  # task id -> live run on shadow resources
        self.on_machine: list[dict[int, RMRun]] = [dict() for _ in range(n)]
        # filter factors (3) and (4): exponentially weighted estimates
        self._rate_t, self._rate = 0.0, 0.0
        self._success = 1.0
        self.nominal_rate = cfg.arrival_rate() * cfg.tasks_per_job
        self.decision_log: list | None = None  # Algorithm 2's inputs and choice, when recorded
        # CPU of the tasks the RM scheduler committed to the CSV (normal path, SafeRM's migrations)
        self.normal_path_usage = StepIntegral(record=False)
        self.counts = dict(diverted=0, rm_placed=0, rm_normal_path=0, rm_completed=0, rm_collisions=0,
                           rm_killed=0, rm_migrated=0, rm_converted=0, rm_restarted=0, rm_blocked=0)

    def queue_key(self):
        f = self.filter
        return lambda t: f.queue_key(t.duration, t.demand, t.job.priority, 0)  # ties: arrival order

    @property
    def usage(self) -> StepIntegral:
        """CPU held by RM tasks on shadow resources over time (the ledger's hidden holds)."""
        return self.csv.hidden_usage[0]

    # ---- the RM filter (§3.3) -------------------------------------------------------------------
    def factors(self, now: float) -> tuple[FilterFactors, FilterFactors]:
        cfg = self.cfg
        allocated = float(self.csv.usage[0].value)
        shadow0 = shadow_of(cfg.shadow_period(), allocated, cfg.mean_task_duration)  # all checked already
        rate = self._rate * math.exp(-(now - self._rate_t))  # decay to now (tau = 1 s)
        now_f = FilterFactors(len(self.queue), float(self.srm.available[:, 0].sum()), rate,
                              self._success, cfg.update_delay)
        nominal = FilterFactors(0.0, shadow0, self.nominal_rate, 1.0, cfg.update_delay)
        return now_f, nominal

    def filter_tasks(self, tasks):
        now = self.model.time
        # submission-rate estimate: an exponentially weighted count with a 1 s time constant
        self._rate = self._rate * math.exp(-(now - self._rate_t)) + len(tasks)
        self._rate_t = now
        threshold = self.filter.threshold(*self.factors(now))
        normal, diverted = [], []
        ratio, eligible, draw = self.filter.ratio, self.filter.eligible, self._filter_draws.next
        for t in tasks:
            if eligible(t.duration, t.demand, t.job.priority, threshold) and draw() < ratio:
                diverted.append(t)
            else:
                normal.append(t)
        self.counts["diverted"] += len(diverted)
        return normal, diverted

    # ---- deciding (Algorithm 2) -------------------------------------------------------------------
    def decide(self, task) -> str:
        now = self.model.time
        demand = np.asarray(task.demand, dtype=np.int64)
        free = self.csv.ledger.truly_free
        machine, path = rm_choice(self.srm.available, free, demand, self.mode)
        if self.decision_log is not None:
            self.decision_log.append((now, self.srm.available.copy(), free, demand, self.mode, machine, path))
        if path == SHADOW:
            self._start(task, machine, demand, task.duration)
            self.counts["rm_placed"] += 1
            self._success = 0.9 * self._success + 0.1
            return PLACED
        if path == NORMAL:
            self.srm.take_shadow(machine)  # Algorithm 2 line 11
            task.attempts += 1
            if not self._commit(task, machine, task.duration):
                raise AssertionError(f"task {task.id} did not fit machine {machine} on an up-to-date view")
            self.counts["rm_normal_path"] += 1
            self._success = 0.9 * self._success
            return PLACED
        self.counts["rm_blocked"] += 1
        return BLOCKED

    def on_blocked(self) -> None:
        """Nothing fits: the next release, RM completion or view update unblocks us (listeners)."""

    def _start(self, task, machine: int, demand: np.ndarray, duration: float) -> None:
        """Run ``task`` on ``machine``'s shadow: a hidden hold the central state does not see."""
        now = self.model.time
        task.tag = "rm"
        self.srm.allocate_rm(machine, demand)
        manager = self.model.job_managers[task.job.id]
        if not self.csv.commit(task, machine, duration=duration, visible=False, watched=manager.watched(task)):
            raise AssertionError(f"RM task {task.id} does not fit machine {machine}'s truly free resources")
        run = RMRun(task, machine, demand, self.srm.epoch, now, now + duration / self.model.speed[machine])
        self.running[task.id] = run
        self.on_machine[machine][task.id] = run

    def _commit(self, task, machine: int, duration: float) -> bool:
        """Commit to the CSV (normal path or migration) with ``duration`` left to run."""
        manager = self.model.job_managers[task.job.id]
        task.tag = "rm-normal"
        if not self.csv.commit(task, machine, watched=manager.watched(task), duration=duration):
            return False
        self.normal_path_usage.add(self.model.time, task.demand[0])
        return True

    # ---- RM tasks ending ----------------------------------------------------------------------------
    def on_hidden_release(self, task, t: float) -> None:
        """An RM task finished on shadow resources: echoed to Algorithm 1 with its epoch."""
        run = self._forget(task)
        self.srm.echo_release(t, run.machine, run.demand, rm_epoch=run.epoch)
        self.counts["rm_completed"] += 1
        self.unblock()

    def _forget(self, task) -> RMRun:
        run = self.running.pop(task.id)
        del self.on_machine[run.machine][task.id]
        run.alive = False
        return run

    # ---- listeners on the CSV ---------------------------------------------------------------------
    def on_release(self, task, t: float) -> None:
        if task.tag == "rm-normal":
            self.normal_path_usage.add(t, -task.demand[0])
        self.srm.echo_release(t, task.machine, task.demand)  # a task the CSV knew: new shadow
        self.unblock()

    def on_commit(self, task, t: float) -> None:
        m = task.machine
        if m not in self.srm.live:
            return  # no shadow index: nothing available to shrink, no RM task to collide with
        overflow = self.srm.echo_allocate(m, self.csv.ledger.row(m))
        if overflow is not None:
            self._resolve_conflict(m, overflow, t)

    def before_sync(self, view, t: float) -> None:
        if self.mode == "safe":
            # SafeRM uses shadow only during its survival time: migrate, then kill (§3.5.1)
            for run in list(self.running.values()):
                self._evict(run, t, at_update=True)

    def on_sync(self, view, t: float) -> None:
        # the same definition of shadow as the meter's (ShadowProbe): invisible to every view
        if self.cfg.view_refresh == "staggered" or view is self.csv.views[0]:
            self.srm.view_update(t, t + self.cfg.shadow_period())
        self.unblock()

    # ---- eviction (§3.5) ----------------------------------------------------------------------------
    def _resolve_conflict(self, machine: int, overflow: np.ndarray, t: float) -> None:
        self.counts["rm_collisions"] += 1
        runs = self.on_machine[machine]
        victims = conflict_victims([(tid, r.demand, r.task.job.priority) for tid, r in runs.items()],
                                   overflow, self.mode)
        for tid in victims:
            self._evict(runs[tid], t, at_update=False)

    def _evict(self, run: RMRun, t: float, at_update: bool) -> None:
        task = run.task
        self._forget(task)
        self.csv.evict(task)
        self.srm.evict(run.machine, run.demand)
        left = run.finish - t
        if self.mode == "safe":
            if at_update and self._commit(task, run.machine, left):
                self.counts["rm_converted"] += 1  # committed in place: now visible, a normal task
                return
            machine, path = rm_choice(self.srm.available, self.csv.ledger.truly_free, run.demand, "safe")
            if path == SHADOW:
                self._start(task, machine, run.demand, left)
                self.counts["rm_migrated"] += 1
                return
            if path == NORMAL:
                self.srm.take_shadow(machine)
                if self._commit(task, machine, left):
                    self.counts["rm_migrated"] += 1
                    return
            self._kill(task, t, "RM task evicted by a conflict; no room to migrate")
            return
        # SmartRM: kill first, then migrate (the task restarts from the RM queue)
        self.counts["rm_killed"] += 1
        self.counts["rm_restarted"] += 1
        task.tag = "rm-restart"
        self.requeue(task)

    def _kill(self, task, t: float, reason: str) -> None:
        self.counts["rm_killed"] += 1
        task.state, task.finish, task.note = KILLED, t, reason
        self.model.task_ended(task)


class RMinerModel(ClusterModel):
    """The engine's shared-state cluster with an RM-aware filter, an RM scheduler and a shadow probe.

    Example
    -------
    >>> model = RMinerModel(RMinerConfig.ci().replace(mode="smart", horizon=5.0))
    >>> model.run_until(5.0)
    >>> model.check_invariants()
    >>> model.rm.counts["rm_placed"] > 0
    True
    """

    scheduler_class = RMAwareScheduler
    #: a paper-scale run is a few million scheduling decisions: batch them (identical results, tested)
    decision_events = "batched"
    #: millions of live tasks and no cyclic garbage: no collector passes over them while running
    pause_gc = True

    def __init__(self, config: RMinerConfig, *, check_every_event: bool = False, record_series: bool = True,
                 **kwargs):
        """``kwargs``: the engine's (``scheduler_class``, ``job_manager_class``, ...)."""
        super().__init__(config, check_every_event=check_every_event, record_series=record_series, **kwargs)
        self.record_series = record_series
        self.rm = None  # the RM scheduler, made at the start (after the parallel schedulers) when the mode has one
        self._rr_credit: list[float] = []  # NoRM + 1's weighted round robin (see route)
        self.uniforms = UniformBuffer(self.rng)
        self._unstarted = {}  # job id -> tasks not yet started
        self.job_scheduled_at = {}  # job id -> time its last task first started
        self.probe = ShadowProbe(self, record_series)
        self.csv.subscribe(self.probe)
        # Fig. 11: every node's CPU utilisation (CSV + RM tasks), sampled 40 times over the run
        self.node_samples: list[tuple[float, np.ndarray]] = []

    def start(self) -> None:
        """The engine's start, then the per-task records, the node samples and the RM scheduler."""
        super().start()
        config = self.config
        self.n_tasks_total = sum(j.n_tasks for j in self.jobs)
        self.started_by = bytearray(self.n_tasks_total + 1)  # task id -> how it first started (STARTED_BY)
        if self.record_series and config.horizon > 0:
            self.schedule_every(self._sample_nodes, config.horizon / 40, start=0.0)
        if config.has_rm:
            self.rm = RMScheduler(self, record_series=self.record_series)
            self.csv.subscribe(self.rm)

    def make_schedulers(self, policy):
        """The engine's parallel schedulers; NoRM + 1 adds one more, deciding at the RM scheduler's rate."""
        cfg = self.config
        if cfg.mode != "plus1":
            return super().make_schedulers(policy)
        fresh = cfg.update_delay == 0
        think = [cfg.think_time] * cfg.schedulers + [cfg.rm_think_time]
        schedulers = [self.scheduler_class(self, i, self.csv, self.csv.new_view(fresh), policy, t)
                      for i, t in enumerate(think)]
        self.csv.start_view_updates(cfg.update_delay, cfg.view_refresh == "staggered")
        return schedulers

    def route(self, job):
        """The engine's routing; NoRM + 1 with a faster extra scheduler sends it jobs in proportion to its
        rate (a smooth weighted round robin, or weighted random draws), so its capacity is not left idle."""
        cfg = self.config
        if cfg.mode != "plus1" or cfg.rm_speedup == 1.0:
            return super().route(job)
        weights = [1.0] * cfg.schedulers + [cfg.rm_speedup]
        total = sum(weights)
        if cfg.assignment == "random":
            u = self.rng.random() * total
            return self.schedulers[min(int(u), cfg.schedulers) if u < cfg.schedulers else cfg.schedulers]
        if not self._rr_credit:
            self._rr_credit = [0.0] * len(weights)
        credit = self._rr_credit
        for i, w in enumerate(weights):
            credit[i] += w
        best = max(range(len(credit)), key=lambda i: (credit[i], -i))
        credit[best] -= total
        return self.schedulers[best]

    def make_jobs(self, rng: np.random.Generator):
        """The engine's workload, with job priorities 0 .. levels-1 from a stream of their own."""
        jobs = super().make_jobs(rng)
        prng = np.random.default_rng([self.config.seed, 0x9A1])
        for job, p in zip(jobs, prng.integers(0, self.config.priority_levels, len(jobs))):
            job.priority = int(p)
        return jobs

    def _sample_nodes(self) -> None:
        led = self.csv.ledger
        cap = led.capacity[:, 0]
        self.node_samples.append((self.time, (cap - led.truly_free[:, 0]) / cap))

    # ---- bookkeeping ---------------------------------------------------------------------------
    def task_started(self, task) -> None:
        """First start of ``task`` (normal or RM): the job is fully scheduled when all have started."""
        super().task_started(task)
        self.started_by[task.id] = STARTED_BY[task.tag]
        job = task.job
        left = self._unstarted.get(job.id)
        if left is None:  # the job's first start (n_tasks sums over its stages: not at every start)
            left = job.n_tasks
        left -= 1
        if left == 0:
            self.job_scheduled_at[job.id] = self.time
            self._unstarted.pop(job.id, None)  # only jobs still starting are kept: the dict stays small
        else:
            self._unstarted[job.id] = left

    # ---- invariants -----------------------------------------------------------------------------
    def check_invariants(self) -> None:
        """The engine's rules (RM tasks are the ledger's hidden holds), plus RMiner's own."""
        led = self.csv.ledger
        running = self.check_ledger()
        if self.rm is not None:
            rm = self.rm
            if not np.array_equal(rm.srm.occupied, led.hidden):
                m = int(np.argwhere((rm.srm.occupied != led.hidden).any(axis=1))[0][0])
                raise AssertionError(f"shadow view's occupied {rm.srm.occupied[m].tolist()} and the ledger's hidden "
                                     f"holds {led.hidden[m].tolist()} disagree on machine {m}")
            if (rm.srm.available < 0).any() or (rm.srm.available > led.truly_free).any():
                raise AssertionError("available shadow is negative or more than what is truly free")
            if any(r.task.state != RUNNING or r.task.tag != "rm" for r in rm.running.values()):
                raise AssertionError("a live RM run belongs to a task that is not a running RM task")
            if len(rm.running) != sum(not h.visible for h in led.holds()):
                raise AssertionError(f"{len(rm.running)} RM runs, but the ledger holds "
                                     f"{sum(not h.visible for h in led.holds())} hidden tasks")
        elif led.hidden.any():
            raise AssertionError("hidden holds without RMiner")
        queued = sum(s.waiting() for s in self.schedulers) + (self.rm.waiting() if self.rm is not None else 0)
        states = self.check_tasks(running=running, queued=queued)
        killed_rm = states[KILLED]
        if self.rm is not None and self.rm.mode == "safe" and killed_rm != self.rm.counts["rm_killed"]:
            raise AssertionError(f"{killed_rm} tasks killed but RMiner counted {self.rm.counts['rm_killed']}")
        if self.rm is not None and self.rm.mode == "smart":
            c = self.rm.counts
            if killed_rm or c["rm_killed"] != c["rm_restarted"]:
                raise AssertionError(
                    f"SmartRM kills restart their task: {c['rm_killed']} kills, {c['rm_restarted']} restarts, "
                    f"{killed_rm} tasks left killed"
                )
        if self.rm is None and killed_rm:
            raise AssertionError(f"{killed_rm} tasks killed without RMiner")
