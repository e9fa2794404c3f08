"""``ClusterModel``: the Mesa model every lab shares, and ``run(config) -> ClusterResult``."""

from __future__ import annotations

import contextlib
import gc
import heapq
import itertools
import math
import operator
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from .._mesa import mesa  # mesa without its stack walk (cluster_sim/_mesa.py)
import numpy as np
from mesa.time import Priority, Schedule
from mesa.experimental.mesa_signals import ObservableSignals
from mesa.time.events import Event

from ..progress import advance, announce
from .agents import CentralStateView, JobManager, Machine, Scheduler
from .cluster_config import ClusterConfig
from .metrics import StepIntegral
from .placement import POLICIES
from .workload import COMPLETED, FAILED, KILLED, QUEUED, RUNNING, STATES, Job, generate_jobs

#: the workload's own random stream (``[seed, WORKLOAD_STREAM]``): changing a policy or a scheduler
#: count leaves the jobs unchanged
WORKLOAD_STREAM = 0xC1A5

RESOURCES = ("cpu", "mem")


@dataclass
class ClusterMetrics:
    """Headline numbers of a run, all exact (time integrals over [0, time], event counts)."""

    time: float
    utilisation: float  # time-average allocated CPU / CPU capacity
    mem_utilisation: float
    mean_queue_length: float  # time-average tasks waiting at schedulers
    mean_job_wait: float  # arrival -> first task start, over jobs that started
    mean_job_completion: float  # arrival -> last task finish, over completed jobs
    conflicts: int
    commits: int
    jobs_submitted: int
    jobs_completed: int
    jobs_failed: int
    tasks_submitted: int
    tasks_by_state: dict = field(default_factory=dict)

    @property
    def conflict_rate(self) -> float:
        """Conflicts per commit attempt."""
        attempts = self.conflicts + self.commits
        return self.conflicts / attempts if attempts else 0.0


class _Call:
    """One scheduled callback, kept alive until it fires (Mesa holds callbacks weakly)."""

    __slots__ = ("model", "fn", "settle", "recurring", "__weakref__")

    def __init__(self, model: "ClusterModel", fn: Callable, settle: bool, recurring: bool):
        self.model, self.fn, self.settle, self.recurring = model, fn, settle, recurring

    def fire(self) -> None:
        model = self.model
        if not self.recurring:
            model._calls.discard(self)
        if self.settle:
            model.settle()
        self.fn()
        model.after_event()


def _stop_default_steps(model: mesa.Model) -> None:
    """Mesa 3.5 schedules ``step()`` every 1.0 time units even in a pure event model; ours define
    no ``step``, so those ticks only cost time (about 6 us each: a simulated week is 600k ticks).
    Mesa has no public switch for it, so stop its generator; a test fails if Mesa renames it."""
    default = getattr(model, "_default_schedule", None)
    if default is None:
        raise RuntimeError("Mesa's default step schedule (Model._default_schedule) is gone: "
                           "check how this Mesa version schedules step() and update _stop_default_steps")
    default.stop()


def _event_ids() -> itertools.count:
    """Mesa's counter of event ids (``Event._ids``): a batched callback draws its id from it, so that it
    sorts against Mesa's events exactly as the event it stands for would have. A test fails if Mesa
    renames it."""
    ids = getattr(Event, "_ids", None)
    if not isinstance(ids, itertools.count):
        raise RuntimeError("Mesa's event id counter (Event._ids) is gone: check how this Mesa version orders "
                           "events of equal time and priority and update ClusterModel.schedule_batched")
    return ids


def _time_property() -> property:
    """``model.time`` read without a Python call: Mesa's ``time`` is an ``Observable`` descriptor, whose
    ``__get__`` (a Python function, plus a ``getattr``) runs at every read, about five times per task at the
    paper's scale. Reads go straight to the value it keeps (an ``attrgetter`` runs in C); writes still go
    through Mesa's descriptor, so subscribers to ``time`` are told of each change as before (what is lost:
    an experimental ``Computed`` cannot depend on ``time``). A test fails if Mesa keeps it elsewhere."""
    observable = vars(mesa.Model).get("time")
    if getattr(observable, "private_name", None) != "_time" or not hasattr(observable, "__set__"):
        raise RuntimeError("Mesa's Model.time is no longer an Observable kept in Model._time: check how this Mesa "
                           "version stores the time and update engine.model._time_property")
    return property(operator.attrgetter("_time"), observable.__set__, doc="Mesa's clock (see _time_property).")


@contextlib.contextmanager
def gc_paused(pause: bool = True):
    """Python's cyclic garbage collector off inside (and back on after, if it was on).

    A paper-scale run holds millions of live objects (tasks, jobs, holds) and makes millions more:
    every full collection walks all of them, about a tenth of RMiner's run at 2.5 M tasks, yet a run
    makes no cyclic garbage (reference counting frees what it drops). Results do not depend on it."""
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


#: how scheduling decisions are timed: one Mesa event each, or batched (see ClusterModel.schedule_batched)
DECISION_EVENTS = ("each", "batched")


class ClusterModel(mesa.Model):
    """A cluster of ``Machine`` agents, one ``CentralStateView``, parallel ``Scheduler`` agents and
    a ``JobManager`` per arrived job, on Mesa's event clock.

    The seams a lab uses (the contract, also listed in the package docstring): ``__init__`` builds the
    substrate and :meth:`start` the schedulers and jobs (a subclass calls ``super()`` first in both);
    :meth:`schedule` and
    :meth:`schedule_every` for every timed callback; :meth:`make_jobs` for the workload;
    :meth:`make_schedulers` and :meth:`route` for who schedules what; :meth:`settle` and
    :meth:`after_event`, which every event passes through; :meth:`task_started`, :meth:`task_ended`,
    :meth:`job_finished`, :meth:`job_failed`, :meth:`queue_changed`, :meth:`view_synced` for the
    agents' reports; ``scheduler_class`` and ``job_manager_class`` for the agents themselves.

    Example
    -------
    >>> model = ClusterModel(ClusterConfig.ci())
    >>> model.run_until(50.0)
    >>> model.check_invariants()
    >>> 0.0 < model.metrics.utilisation < 1.0
    True
    """

    #: the class of the parallel schedulers (the default; ``ClusterModel(config, scheduler_class=...)``
    #: or a subclass's class attribute names another ``Scheduler`` subclass, e.g. one that filters tasks at enqueue)
    scheduler_class = Scheduler
    #: the class of the per-job managers (the default; ``job_manager_class=...`` or a subclass's class
    #: attribute names another, e.g. one that holds a token budget and shapes it)
    job_manager_class = JobManager
    #: ``"each"``: every scheduling decision is a Mesa event; ``"batched"`` (the default): decisions and
    #: arrivals go through :meth:`schedule_batched` (same order, same results, far fewer Mesa events: a Mesa
    #: event per decision was a fifth of a paper-scale run). ``"each"`` is the reference the batched path is
    #: tested against; ``decision_events=`` in the constructor overrides it.
    decision_events = "batched"
    #: pause Python's cyclic garbage collector while the jobs are made and while the run runs
    #: (:func:`gc_paused`): a paper-scale run holds millions of tasks and makes no cyclic garbage, and a
    #: full collection walks them all (about a tenth of the run). A lab whose events make cyclic garbage
    #: in bulk sets it False.
    pause_gc = True
    time = _time_property()

    def __init__(self, config: ClusterConfig, *, jobs: list[Job] | None = None, policy=None,
                 scheduler_class: type | None = None, job_manager_class: type | None = None,
                 completion_events: str = "bulk", decision_events: str | None = None,
                 check_every_event: bool = False, record_series: bool = True):
        """Build the substrate: the ledger, the central state view and the machines. The schedulers and
        the jobs are made when the run starts (:meth:`start`), so a subclass calls ``super().__init__()``
        first and sets its own state after, as in Mesa.

        ``jobs`` replaces the generated workload (refused at once if a task fits no machine);
        ``policy(free, demand, rng) -> machine`` replaces ``config.placement`` (to try a policy of your
        own); ``scheduler_class`` and ``job_manager_class`` replace the class attributes of those names;
        ``completion_events="each"`` spends one Mesa event per completion (the slow reference the bulk
        path is tested against); ``decision_events`` replaces the class attribute of that name ("each" is
        the reference the batched path is tested against); ``check_every_event`` checks the invariants
        after every event (tests)."""
        super().__init__(rng=config.seed)
        _stop_default_steps(self)
        if decision_events is not None:
            if decision_events not in DECISION_EVENTS:
                raise ValueError(f"decision_events={decision_events!r} is not allowed: choose 'each' or 'batched'")
            self.decision_events = decision_events
        self._calls: set[_Call] = set()
        # batched callbacks (schedule_batched): a heap of (time, Mesa event id, call), the one Mesa
        # event that stands for its head, and the end of the run_until slice under way
        self._batched: list = []
        self._pump_event: Event | None = None
        self._run_end = -math.inf
        self._ids = _event_ids()
        self.config = config
        self.check_every_event = check_every_event
        if scheduler_class is not None:
            self.scheduler_class = scheduler_class
        if job_manager_class is not None:
            self.job_manager_class = job_manager_class
        n = config.machines
        speeds = config.speeds()
        types = np.arange(n) % config.hardware_types
        self.speed = [speeds[k] for k in types]
        capacity = np.tile(np.array([config.cpu_per_machine, config.mem_per_machine], dtype=np.int64), (n, 1))
        self.csv = CentralStateView(self, capacity, completion_events=completion_events,
                                    record_series=record_series)
        self.machines = [Machine(self, i, int(types[i]), self.speed[i]) for i in range(n)]
        # distinct capacity rows, to tell at arrival whether a task can fit anywhere at all
        self._capacity_rows = np.unique(capacity, axis=0)
        self._capacity_row = self._capacity_rows[0].tolist()  # the one row, when every machine is alike
        self.policy = policy or POLICIES[config.placement]
        if jobs is not None:
            self._refuse_impossible(jobs)
        self._given_jobs = jobs
        self.started = False
        self._schedulers: list = []
        self._jobs: list[Job] | None = None if jobs is None else sorted(jobs, key=lambda j: j.arrival)
        self.arrived: list[Job] = []
        self.job_managers: dict[int, JobManager] = {}
        self.failures: list[tuple[int, str]] = []
        self.queue_length = StepIntegral(record=record_series)
        self._queued = 0
        self._next_job = 0
        self._arrive_call = self.callback(self._arrive)

    def start(self) -> None:
        """Make the schedulers (:meth:`make_schedulers`) and the jobs (:meth:`make_jobs`, unless given)
        and schedule the first arrival. The first :meth:`run_until` calls it; call it yourself to look at
        the jobs or schedulers before running. A lab that needs them (or schedules events of its own at
        the start) overrides it and calls ``super().start()`` first."""
        if self.started:
            raise RuntimeError(f"{type(self).__name__} has started already: start() runs once")
        self.started = True
        self._schedulers = self.make_schedulers(self.policy)
        if self._jobs is None:
            with gc_paused(self.pause_gc):
                jobs = self.make_jobs(np.random.default_rng([self.config.seed, WORKLOAD_STREAM]))
            self._jobs = sorted(jobs, key=lambda j: j.arrival)
        if self.jobs:
            self._schedule_arrival(self.jobs[0].arrival)

    @property
    def schedulers(self) -> list:
        """The schedulers, made by :meth:`start` (refused before it: an empty list would mislead)."""
        if not self.started:
            raise RuntimeError(f"{type(self).__name__}.schedulers are made when the run starts: call start() "
                               "(or run_until) first")
        return self._schedulers

    @property
    def jobs(self) -> list[Job]:
        """The jobs in arrival order: hand-built ones from construction on, generated ones from :meth:`start`."""
        if self._jobs is None:
            raise RuntimeError(f"{type(self).__name__}.jobs are generated when the run starts: call start() "
                               "(or run_until) first")
        return self._jobs

    # ---- the seams a lab extends -----------------------------------------------------------------
    def make_schedulers(self, policy: Callable) -> list:
        """The schedulers (default: ``config.schedulers`` shared-state schedulers, each on a local
        view refreshed every ``update_delay``)."""
        config = self.config
        fresh = config.update_delay == 0
        schedulers = [
            self.scheduler_class(self, i, self.csv, self.csv.new_view(fresh), policy, config.think_time)
            for i in range(config.schedulers)
        ]
        self.csv.start_view_updates(config.update_delay, config.view_refresh == "staggered")
        return schedulers

    def make_jobs(self, rng: np.random.Generator) -> list[Job]:
        """The workload, drawn from ``rng`` (the model's workload stream). Override to add
        attributes (priorities, templates, values) drawn from the same stream."""
        return generate_jobs(self.config.workload_spec(), self.config.horizon, rng)

    def route(self, job: Job):
        """The scheduler an arriving job goes to (``config.assignment``: round robin or random)."""
        if self.config.assignment == "round_robin":
            return self.schedulers[job.id % len(self.schedulers)]
        return self.schedulers[int(self.rng.integers(len(self.schedulers)))]

    # ---- time ----------------------------------------------------------------------------------
    def callback(self, fn: Callable, *, settle: bool = True) -> _Call:
        """A reusable callback for :meth:`schedule`: an agent that schedules the same method again
        and again (a scheduler's next decision) makes it once, so no event allocates a new one."""
        call = _Call(self, fn, settle, recurring=True)
        self._calls.add(call)
        return call

    def schedule(self, fn: Callable, *, at: float | None = None, after: float | None = None,
                 priority: Priority = Priority.DEFAULT, settle: bool = True):
        """Run ``fn()`` at time ``at`` (or ``after`` seconds from now): the one way every event in
        the engine and the labs is scheduled. The model first settles the completions due by then
        (``settle=False`` only for a callback that settles itself), runs ``fn``, then calls
        :meth:`after_event` (the invariants, when checked every event). ``fn`` is kept alive until
        it fires, so lambdas and partials are fine. Returns Mesa's event (``.cancel()`` works)."""
        if type(fn) is _Call:
            call = fn
        else:
            call = _Call(self, fn, settle, recurring=False)
            self._calls.add(call)
        return self.schedule_event(call.fire, at=at, after=after, priority=priority)

    def schedule_every(self, fn: Callable, interval: float, *, start: float | None = None,
                       priority: Priority = Priority.DEFAULT):
        """Run ``fn()`` every ``interval`` seconds from ``start`` (default: one interval from now),
        with the same settling and checks as :meth:`schedule`. Returns Mesa's event generator."""
        call = _Call(self, fn, True, recurring=True)
        self._calls.add(call)  # recurring: kept for the model's life
        first = self.time + interval if start is None else start
        return self.schedule_recurring(call.fire, Schedule(interval=interval, start=first), priority=priority)

    def schedule_batched(self, call: _Call, *, at: float | None = None, after: float | None = None,
                         priority: Priority = Priority.DEFAULT) -> None:
        """Run ``call`` at time ``at`` (or ``after`` seconds from now), exactly where a Mesa event of that
        ``priority`` made now would run, but without making one for each: what makes a paper-scale run decision-bound is
        a Mesa event per scheduling decision (an Event, two weak references and a heap of Python-level
        comparisons each).

        The calls wait in a heap of their own, keyed like Mesa's events (time, priority, then the id Mesa
        would have given the event). One Mesa event stands for the earliest, with that very key, so it runs
        in that call's place; it then runs the calls that follow it for as long as they precede every
        Mesa event (a run of decisions, and of arrivals when the model batches decisions, uninterrupted by
        refreshes or wake-ups: the common case), each through :meth:`_Call.fire <_Call>` as before (settling first, the invariants after),
        and hands over to a new stand-in for the rest. The order of everything that happens is
        today's, so results are identical (tested against ``decision_events="each"``)."""
        if type(call) is not _Call:
            raise ValueError(f"schedule_batched takes a model.callback(...), not {call!r}")
        if (at is None) == (after is None):
            raise ValueError(f"schedule_batched needs one of at={at!r} and after={after!r}, not both or neither")
        t = self.time + after if at is None else at
        if t < self.time:
            raise ValueError(f"schedule_batched at={t!r} is not allowed: it is before now ({self.time!r})")
        # int(): Priority is an IntEnum, and its .value is a Python-level property (a fifth of this call)
        entry = (t, int(priority), next(self._ids), call)
        heapq.heappush(self._batched, entry)
        pump = self._pump_event
        if pump is False:
            return  # scheduled by a batched call: the loop running it arms a stand-in when it stops
        if pump is None:
            self._arm_pump()
        elif self._batched[0] is entry:
            pump.cancel()  # it stood for a later call: this one comes first
            self._arm_pump()

    def _arm_pump(self) -> None:
        t, priority, uid, _ = self._batched[0]
        event = Event(t, self._pump, priority=Priority(priority))
        event.unique_id = uid  # sorts exactly where the head call's own event would have
        self._event_list.add_event(event)
        self._pump_event = event

    def _pump(self) -> None:
        batched, events = self._batched, self._event_list._events
        self._pump_event = False  # running: calls scheduled meanwhile wait for the loop below
        # _Call.fire spelt out (up to three calls fewer per decision) when nothing runs after the call: no lab's
        # after_event, no checks after every event; the engine's settle is the central state's own
        cls = type(self)
        plain = not self.check_every_event and cls.after_event is ClusterModel.after_event
        settle = self.csv.settle if cls.settle is ClusterModel.settle else self.settle
        # the clock set directly when no one subscribes to it (Mesa's descriptor only checks that, then sets it)
        subscribers, time_changed = self.subscribers, ("time", ObservableSignals.CHANGED)
        try:
            t, _, _, call = heapq.heappop(batched)  # the call this event stood for
            call.fire()
            while batched:
                t, priority, uid, call = batched[0]
                if t > self._run_end:
                    break
                if events:
                    top = events[0]  # a cancelled one may hide a later one: stopping early is safe
                    if top.time < t or (top.time == t and (top.priority, top.unique_id) < (priority, uid)):
                        break
                heapq.heappop(batched)
                if subscribers.get(time_changed):
                    self.time = t
                else:
                    self._time = t
                if plain and call.recurring:
                    if call.settle:
                        settle()
                    call.fn()
                else:
                    call.fire()
        finally:
            self._pump_event = None
            if batched:
                self._arm_pump()

    def settle(self) -> None:
        """Bring the state up to now before an event acts: release every hold due by now."""
        self.csv.settle()

    def after_event(self) -> None:
        """Called after every event: checks the invariants when ``check_every_event``."""
        if self.check_every_event:
            self.check_invariants()

    def run_until(self, end_time: float) -> None:
        """Run to ``end_time``. A long run says first how long it will roughly take and shows a
        progress bar in simulated seconds (:mod:`cluster_sim.progress`; neither changes a result).
        The first call starts the run (:meth:`start`)."""
        with gc_paused(self.pause_gc):
            if not self.started:
                self.start()
            if end_time > self.time:
                tasks = self.tasks_due(end_time)
                estimate = self.estimated_seconds(end_time, tasks)
                announce(estimate, f"{type(self).__name__}: {tasks:,} tasks over "
                                   f"{end_time - self.time:g} simulated seconds")
                advance(self._run_slice, self.time, end_time, desc=type(self).__name__, estimate=estimate)
            else:
                self._run_slice(end_time)
            self.settle()  # completions due by the horizon are part of the run

    def _run_slice(self, end_time: float) -> None:
        """Mesa's run_until, telling batched calls how far they may run on their own."""
        self._run_end = end_time
        try:
            super().run_until(end_time)
        finally:
            self._run_end = -math.inf

    def tasks_due(self, end_time: float) -> int:
        """Tasks of the jobs still to arrive by ``end_time``."""
        return sum(j.n_tasks for j in itertools.takewhile(lambda j: j.arrival <= end_time,
                                                          itertools.islice(self.jobs, self._next_job, None)))

    def estimated_seconds(self, end_time: float, tasks: int | None = None) -> float:
        """Rough wall time to run to ``end_time``: the engine's cost per task and per view refresh
        (``ClusterConfig.SECONDS_PER_*``, measured by bench/engine.py) times what is due by then
        (``tasks``: :meth:`tasks_due`, if the caller has counted them already)."""
        c = self.config
        seconds = (self.tasks_due(end_time) if tasks is None else tasks) * c.SECONDS_PER_TASK
        if self.csv.views and c.update_delay > 0:
            refreshes = (end_time - self.time) / c.update_delay * len(self.csv.views)
            seconds += refreshes * (c.SECONDS_PER_REFRESH + len(self.machines) * c.SECONDS_PER_REFRESHED_MACHINE)
        return seconds

    # ---- arrivals and job bookkeeping ----------------------------------------------------------
    def _arrive(self) -> None:
        now = self.time
        jobs, i = self.jobs, self._next_job
        while i < len(jobs) and jobs[i].arrival <= now:
            job = jobs[i]
            i += 1
            scheduler = self.route(job)
            job.scheduler = scheduler.index
            self.arrived.append(job)
            manager = self.job_manager_class(self, job, scheduler)
            self.job_managers[job.id] = manager
            manager.start()
        self._next_job = i
        if i < len(jobs):
            self._schedule_arrival(jobs[i].arrival)

    def _schedule_arrival(self, at: float) -> None:
        # with batched decisions the arrivals are batched too: a Mesa event for each would end the pump's
        # run of decisions at every arrival (a paper-scale run has one every 1.5 ms) and make a stand-in again
        if self.decision_events == "batched":
            self.schedule_batched(self._arrive_call, at=at)
        else:
            self.schedule(self._arrive_call, at=at)

    def _refuse_impossible(self, jobs: list[Job]) -> None:
        """Hand-built work stops at the door: a task no machine can hold, or a stage DAG that points
        at stages the job does not have. (A generated workload's heavy tail may still produce a
        task too big for every machine: that job fails at arrival with the reason.)"""
        for job in jobs:
            n = len(job.stages)
            for s in job.stages:
                bad = [k for k in (*s.parents, *s.children) if not 0 <= k < n]
                if bad:
                    raise ValueError(f"Job {job.id}: stage {s.index} links to stages {bad}, but the job has "
                                     f"stages 0..{n - 1}")
            found = self.unplaceable(job)
            if found is not None:
                task, reason = found
                raise ValueError(f"Job {job.id}: task {task.id} can fit on no machine of this cluster: {reason}")

    def unplaceable(self, job: Job):
        """``(task, reason)`` for the first task of ``job`` that no machine could ever hold, or None."""
        rows = self._capacity_rows  # distinct machine capacities: few, so compare all at once
        if len(rows) == 1:  # one kind of machine: a plain loop, as this runs at every arrival
            cap = self._capacity_row
            passed = None  # the last demand that fits: a job's tasks mostly share one demand tuple (the
            task = None    # workload's), so most tasks cost an identity test, not a set of demands per job
            for s in job.stages:
                for t in s.tasks:
                    demand = t.demand
                    if demand is passed:
                        continue
                    for d, c in zip(demand, cap):
                        if d > c:
                            task = t
                            break
                    if task is not None:
                        break
                    passed = demand
                if task is not None:
                    break
            if task is None:
                return None
        else:
            demands = np.array([t.demand for s in job.stages for t in s.tasks], dtype=np.int64)
            fits_some = (demands[:, None, :] <= rows[None, :, :]).all(axis=2).any(axis=1)
            if fits_some.all():
                return None
            task = job.tasks[int(np.argmin(fits_some))]
        largest = rows.max(axis=0).tolist()
        return task, f"demand {list(task.demand)} exceeds the largest machine {largest} ({'/'.join(RESOURCES)})"

    def queue_changed(self, delta: int) -> None:
        """``delta`` tasks joined (or left) the schedulers' queues."""
        self._queued += delta
        self.queue_length.set(self.time, self._queued)

    def task_started(self, task) -> None:
        """The first start of ``task`` (called once per task, whichever way it started)."""
        job = task.job
        if math.isnan(job.first_start):
            job.first_start = task.start
        manager = self.job_managers.get(job.id)
        if manager is not None:
            manager.on_task_started(task)

    def task_ended(self, task) -> None:
        manager = self.job_managers.get(task.job.id)
        if manager is None:
            return
        if task.state == COMPLETED:
            manager.on_task_finished(task)
        elif task.state == KILLED:
            manager.on_task_killed(task)

    def job_finished(self, manager: JobManager) -> None:
        del self.job_managers[manager.job.id]
        manager.remove()

    def job_failed(self, manager: JobManager, reason: str) -> None:
        self.failures.append((manager.job.id, reason))
        # keep the manager while tasks of the job still run or wait, so their ends are handled
        if not any(t.state in (RUNNING, QUEUED) for t in manager.job.tasks):
            self.job_managers.pop(manager.job.id, None)
            manager.remove()

    def view_synced(self, view) -> None:
        for s in self.schedulers:
            if view is None or s.view is view:
                s.unblock()

    # ---- results -------------------------------------------------------------------------------
    def tasks_by_state(self) -> dict[str, int]:
        counts = Counter(t.state for j in self.arrived for s in j.stages for t in s.tasks)
        return {s: counts.get(s, 0) for s in STATES}

    @property
    def metrics(self) -> ClusterMetrics:
        t = self.time
        cap = self.csv.ledger.capacity.sum(axis=0)
        waits = [j.first_start - j.arrival for j in self.arrived if not math.isnan(j.first_start)]
        done = [j.finish - j.arrival for j in self.arrived if not math.isnan(j.finish)]
        span = t if t > 0 else 1.0
        return ClusterMetrics(
            time=t,
            utilisation=float(self.csv.usage[0].total(t) / (cap[0] * span)),
            mem_utilisation=float(self.csv.usage[1].total(t) / (cap[1] * span)),
            mean_queue_length=float(self.queue_length.total(t) / span),
            mean_job_wait=float(np.mean(waits)) if waits else float("nan"),
            mean_job_completion=float(np.mean(done)) if done else float("nan"),
            conflicts=self.csv.conflicts,
            commits=self.csv.commits,
            jobs_submitted=len(self.arrived),
            jobs_completed=len(done),
            jobs_failed=sum(j.failed for j in self.arrived),
            tasks_submitted=sum(j.n_tasks for j in self.arrived),
            tasks_by_state=self.tasks_by_state(),
        )

    # ---- invariants ----------------------------------------------------------------------------
    def check_invariants(self) -> None:
        """Raise ``AssertionError`` naming the first broken rule."""
        self.check_tasks(running=self.check_ledger())

    def check_ledger(self) -> int:
        """The ledger's rules, and that it holds exactly what its running tasks demand (visible
        holds in ``allocated``, hidden ones in ``hidden``). Returns how many running tasks it holds."""
        ledger = self.csv.ledger
        ledger.check()
        for view in self.csv.views:
            view.check()
        if ledger.next_release_time() < self.time:  # every event settles first: nothing due is left
            raise AssertionError(f"a hold due at {ledger.next_release_time()} is still held at {self.time}")
        holds = ledger.holds()
        for hold in holds:
            task = hold.owner
            if task.state != RUNNING or task.machine != hold.machine:
                raise AssertionError(f"task {task.id} holds machine {hold.machine} but is {task.state} "
                                     f"on machine {task.machine}")
        # the holds summed per machine in numpy (a Python add per hold cost most of a check after every event)
        held = {True: np.zeros_like(ledger.allocated), False: np.zeros_like(ledger.hidden)}
        if holds:
            machine = np.fromiter((h.machine for h in holds), dtype=np.intp, count=len(holds))
            visible = np.fromiter((h.visible for h in holds), dtype=bool, count=len(holds))
            demand = np.array([h.demand for h in holds])
            for kind in (True, False):
                rows = visible == kind
                np.add.at(held[kind], machine[rows], demand[rows])
        for visible, rows in ((True, ledger.allocated), (False, ledger.hidden)):
            if not np.array_equal(held[visible], rows):
                m = int(np.argwhere((held[visible] != rows).any(axis=1))[0][0])
                kind = "visible" if visible else "hidden"
                raise AssertionError(
                    f"ledger and running tasks disagree on machine {m} ({kind}): ledger {rows[m].tolist()}, "
                    f"running tasks hold {held[visible][m].tolist()}"
                )
        return len(holds)

    def check_tasks(self, running: int, queued: int | None = None) -> dict[str, int]:
        """No task lost; ``running`` tasks held and ``queued`` tasks waiting (default: in the
        schedulers' queues) agree with the tasks' own states; ends are consistent. Returns the
        counts by state."""
        tasks = [t for j in self.arrived for s in j.stages for t in s.tasks]  # every submitted task, once
        counts = Counter(map(operator.attrgetter("state"), tasks))
        states = {s: counts.get(s, 0) for s in STATES}
        submitted = len(tasks)
        if sum(states.values()) != submitted:
            raise AssertionError(f"tasks lost: {submitted} submitted, states count {sum(states.values())}: {states}")
        if states[RUNNING] != running:
            raise AssertionError(f"{states[RUNNING]} tasks say running, {running} are held")
        if queued is None:
            queued = sum(s.waiting() for s in self.schedulers)
        if queued != self._queued or queued != states[QUEUED]:
            raise AssertionError(
                f"queues disagree: queues hold {queued}, the metric says {self._queued}, "
                f"{states[QUEUED]} tasks say queued"
            )
        now = self.time  # read once: the clock is a property
        for t in tasks:
            state = t.state
            if state == COMPLETED and not (t.start <= t.finish <= now):
                raise AssertionError(f"task {t.id} completed at {t.finish}, outside [start {t.start}, now {now}]")
            if state == FAILED and not t.note:
                raise AssertionError(f"task {t.id} failed without a reason")
        return states


@dataclass
class ClusterResult:
    """What ``run`` returns: the config, the metrics, the exact step series and per-task records."""

    config: ClusterConfig
    metrics: ClusterMetrics
    series: dict  # name -> (times, values): step functions, value holds from each time on
    tasks: dict  # column -> ndarray: job, stage, cpu, mem, duration, machine, released, start, finish, state
    jobs: dict  # column -> ndarray: arrival, first_start, finish, n_tasks, failed
    capacity: np.ndarray  # total capacity per resource
    failures: list


def run(config: ClusterConfig, **model_kwargs) -> ClusterResult:
    """Build the model, run it to ``config.horizon``, check the invariants, collect the result."""
    model = ClusterModel(config, **model_kwargs)
    model.run_until(config.horizon)
    with gc_paused(model.pause_gc):  # the checks and the read-out walk every task too
        model.check_invariants()
        return collect(model)


def collect(model: ClusterModel) -> ClusterResult:
    tasks = [t for j in model.arrived for t in j.tasks]
    jobs = model.arrived
    series = {}
    if model.queue_length.recording:
        for r, name in enumerate(RESOURCES):
            series[name] = model.csv.usage[r].steps()
        series["queue"] = model.queue_length.steps()
    return ClusterResult(
        config=model.config,
        metrics=model.metrics,
        series=series,
        tasks={
            "job": np.array([t.job.id for t in tasks], dtype=np.int64),
            "stage": np.array([t.stage for t in tasks], dtype=np.int64),
            "cpu": np.array([t.demand[0] for t in tasks], dtype=np.int64),
            "mem": np.array([t.demand[1] for t in tasks], dtype=np.int64),
            "duration": np.array([t.duration for t in tasks]),  # seconds of work at speed 1
            "machine": np.array([t.machine for t in tasks], dtype=np.int64),
            "released": np.array([t.released for t in tasks]),
            "start": np.array([t.start for t in tasks]),
            "finish": np.array([t.finish for t in tasks]),
            "state": np.array([t.state for t in tasks]),
        },
        jobs={
            "arrival": np.array([j.arrival for j in jobs]),
            "first_start": np.array([j.first_start for j in jobs]),
            "finish": np.array([j.finish for j in jobs]),
            "n_tasks": np.array([j.n_tasks for j in jobs], dtype=np.int64),
            "failed": np.array([j.failed for j in jobs], dtype=bool),
        },
        capacity=model.csv.ledger.capacity.sum(axis=0),
        failures=list(model.failures),
    )
