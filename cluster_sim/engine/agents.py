"""The engine's Mesa agents: machines, the central state view, schedulers and job managers.

Agents own behaviour over time; the arithmetic lives in the pure modules (``ledger``,
``placement``, ``metrics``, ``workload``). Time is Mesa's event clock (``model.time``), and every
timed callback goes through :meth:`ClusterModel.schedule <cluster_sim.engine.model.ClusterModel.schedule>`,
which settles due completions first and checks invariants after.

Completions are *settled in bulk*: a running task is a hold in the ledger's heap, and every event
first calls :meth:`CentralStateView.settle`, which releases all holds due by now in finish order
(each at its own finish time, so integrals stay exact). A Mesa event is scheduled at a finish time
only when something must react exactly then: a stage whose children wait on it, or a scheduler
waiting for capacity on an always-fresh view. ``completion_events="each"`` schedules one for every
task instead; a test checks that both give identical results.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import TYPE_CHECKING, Callable, Iterable, Protocol, runtime_checkable

from .._mesa import mesa  # mesa without its stack walk (cluster_sim/_mesa.py)
import numpy as np
from mesa.time import Priority

from .ledger import ResourceLedger
from .metrics import StepIntegral
from .placement import FitLists, random_among, random_fit
from .workload import COMPLETED, FAILED, KILLED, QUEUED, RUNNING, WAITING, Job, Task

if TYPE_CHECKING:
    from .model import ClusterModel

#: the cluster events :meth:`CentralStateView.subscribe` delivers: handler name -> its arguments and when it runs
EVENTS = {
    "on_release": "(task, time): a visible task's resources returned to the ledger (completed, killed or evicted)",
    "on_hidden_release": "(task, time): a hidden task (one no view shows) completed",
    "on_commit": "(task, time): a visible commit succeeded",
    "before_sync": "(view, time): a view is about to take its snapshot (None: all views at once)",
    "on_sync": "(view, time): a view was refreshed",
}


class Machine(mesa.Agent):
    """A machine: its hardware type and speed; its capacity and allocation live in the ledger."""

    def __init__(self, model: "ClusterModel", index: int, hardware_type: int, speed: float):
        super().__init__(model)
        self.index = index
        self.hardware_type = hardware_type
        self.speed = speed

    @property
    def capacity(self) -> np.ndarray:
        return self.model.csv.ledger.capacity[self.index]

    @property
    def allocated(self) -> np.ndarray:
        return self.model.csv.ledger.allocated[self.index]

    @property
    def free(self) -> np.ndarray:
        return self.capacity - self.allocated


class LocalStateView:
    """A scheduler's picture of the cluster: a snapshot of the central state plus its own claims.

    With ``fresh=True`` (update delay 0) it reads the ledger itself and is never stale.
    """

    def __init__(self, csv: "CentralStateView", fresh: bool):
        self.csv = csv
        self.fresh = fresh
        self.synced_at = 0.0
        self._free = None if fresh else csv.ledger.free.copy(order="F")
        self._claims = None if fresh else memoryview(self._free)  # element view of _free, for claim()
        self._fit = FitLists()  # the machines each demand fits in this snapshot (fitting_machines)

    @property
    def free(self) -> np.ndarray:
        return self.csv.ledger.free if self.fresh else self._free

    def fitting_machines(self, demand: tuple) -> list[int] | None:
        """The machines ``demand`` fits in this (stale) view, ascending: a list kept up to date at our own claims
        and rejected commits until the next refresh (:class:`~cluster_sim.engine.placement.FitLists`); None for
        an always-fresh view (it reads the ledger) or past the kept lists' limit. Read it, never change it."""
        if self.fresh:
            return None
        kept = self._fit.get(demand)
        return kept[1] if kept is not None else self._fit.machines(demand, self._free)

    def sync(self, snapshot: np.ndarray, now: float) -> None:
        # column-major: the placement policies compare one resource column with the demand at every
        # decision, and a contiguous column reads faster (the same numbers, so the same choices)
        self._free = snapshot.copy(order="F")
        self._claims = memoryview(self._free)
        if self._fit:
            self._fit = FitLists()  # made again from the new snapshot when first asked
        self.synced_at = now

    def claim(self, machine: int, demand) -> None:
        """A successful commit of our own: we know about it without waiting for a refresh."""
        if not self.fresh:
            free = self._claims  # element by element (Python ints): a numpy row operation on a tuple costs 3x
            for r, d in enumerate(demand):
                free[machine, r] -= d
            if self._fit:
                self._fit.update(machine, [free[machine, r] for r in range(len(demand))])

    def check(self) -> None:
        """Raise ``AssertionError`` if a kept list of fitting machines is not what this snapshot shows."""
        if not self.fresh:
            self._fit.check(self._free, "a scheduler's view")

    def refresh_row(self, machine: int) -> None:
        """A rejected commit returns the machine's true state (as Omega's transactions do)."""
        if not self.fresh:
            row = self.csv.ledger.row(machine)
            self._free[machine] = row  # the one row, not the whole free array
            if self._fit:
                self._fit.update(machine, row)


class CentralStateView(mesa.Agent):
    """The shared cluster state: owns the ledger, commits claims, pushes snapshots to local views.

    **Cluster events.** An object calls :meth:`subscribe` once and is told of the events it has a
    handler for (see :data:`EVENTS`; each is called with the model time of the event):
    ``on_release(task, time)`` when a *visible* task's resources return to the ledger (it completed,
    was killed or was evicted); ``on_hidden_release(task, time)`` when a *hidden* task (one no view
    shows) completes; ``on_commit(task, time)`` after a successful visible commit;
    ``before_sync(view, time)`` just before a view takes its snapshot (``view`` is None for a
    synchronous refresh of all views), so a lab can commit claims the snapshot must show;
    ``on_sync(view, time)`` after a local view was refreshed. Subscribers are told in the order they
    subscribed.
    """

    def __init__(self, model: "ClusterModel", capacity: np.ndarray, *, completion_events: str = "bulk",
                 record_series: bool = True):
        super().__init__(model)
        if completion_events not in ("bulk", "each"):
            raise ValueError(f"completion_events={completion_events!r} is not allowed: choose 'bulk' or 'each'")
        self.ledger = ResourceLedger(capacity)
        self.each_completion = completion_events == "each"
        self.views: list[LocalStateView] = []
        # the handlers of each cluster event, in subscription order (filled by subscribe; the
        # ``*_listeners`` names are the old spelling of the same lists, kept for callers that append)
        self.listeners: dict[str, list[Callable]] = {name: [] for name in EVENTS}
        self.release_listeners = self.listeners["on_release"]
        self.hidden_release_listeners = self.listeners["on_hidden_release"]
        self.commit_listeners = self.listeners["on_commit"]
        self.pre_sync_listeners = self.listeners["before_sync"]
        self.sync_listeners = self.listeners["on_sync"]
        self.commits = 0
        self.conflicts = 0
        self.usage = [StepIntegral(record=record_series) for _ in range(capacity.shape[1])]
        self.hidden_usage = [StepIntegral(record=record_series) for _ in range(capacity.shape[1])]
        self._usage_now = [0] * capacity.shape[1]
        self._hidden_now = [0] * capacity.shape[1]
        self._release_waiters: list = []
        self._wake_times: set[float] = set()
        # the wake-up forgets its time before settling, so a release it settles can ask for
        # another wake-up at this same time: it settles itself (through the model, like every event)
        self._wake_call = model.callback(self._wake, settle=False)

    def subscribe(self, subscriber) -> None:
        """Tell ``subscriber`` of every cluster event it has a handler for (a method named as in
        :data:`EVENTS`); refused if it has none (a misspelt handler would never be called)."""
        found = [name for name in EVENTS if callable(getattr(subscriber, name, None))]
        if not found:
            raise ValueError(f"subscriber {subscriber!r} has no handler for a cluster event: define one or more of "
                             f"{', '.join(EVENTS)}")
        for name in found:
            self.listeners[name].append(getattr(subscriber, name))

    # ---- views ---------------------------------------------------------------------------------
    def new_view(self, fresh: bool) -> LocalStateView:
        view = LocalStateView(self, fresh)
        self.views.append(view)
        return view

    def start_view_updates(self, update_delay: float, staggered: bool) -> None:
        """Recurring snapshots every ``update_delay`` s: all views at once, or spread over the period."""
        if update_delay <= 0:
            return
        if not staggered:
            self.model.schedule_every(self._sync_all, update_delay, start=update_delay)
            return
        n = len(self.views)
        for i, view in enumerate(self.views):
            self.model.schedule_every(lambda v=view: self.sync_view(v), update_delay,
                                      start=update_delay * (i + 1) / n)

    def _sync_all(self) -> None:
        now = self.model.time
        for fn in self.pre_sync_listeners:
            fn(None, now)
        snapshot = self.ledger.free
        for view in self.views:
            view.sync(snapshot, now)
            for fn in self.sync_listeners:
                fn(view, now)
        self.model.view_synced(None)

    def sync_view(self, view: LocalStateView) -> None:
        now = self.model.time
        for fn in self.pre_sync_listeners:
            fn(view, now)
        view.sync(self.ledger.free, now)
        for fn in self.sync_listeners:
            fn(view, now)
        self.model.view_synced(view)

    # ---- commits and releases ------------------------------------------------------------------
    def commit(self, task: Task, machine: int, *, watched: bool = False, duration: float | None = None,
               visible: bool = True, queue=None) -> bool:
        """Claim ``task.demand`` on ``machine`` for ``duration`` seconds of work (default: the task's
        own; a migrated task brings what it has left); False (a conflict) if it no longer fits.

        A hidden commit (``visible=False``) runs the task on resources no view shows: it needs room
        in what is *truly* free and is not counted as a commit of the central state.
        """
        model = self.model
        now = model.time
        work = task.duration if duration is None else duration
        finish = now + work / model.speed[machine]
        if self.ledger.try_hold(machine, task.demand, finish, task, visible=visible, queue=queue) is None:
            if visible:
                self.conflicts += 1
            return False
        first = math.isnan(task.start)
        task.state, task.machine = RUNNING, machine
        if first:
            task.start = now
        if visible:
            self.commits += 1
            self._add_usage(now, task.demand, +1)
        else:
            self._add_hidden(now, task.demand, +1)
        if watched or (visible and (self.each_completion or self._release_waiters)):
            self._request_wake(finish)  # hidden work frees nothing a view shows: no waiter cares
        if first:
            model.task_started(task)
        if visible:
            for fn in self.commit_listeners:
                fn(task, now)
        return True

    def commit_gang(self, tasks: list[Task], machines: list[int], *, watched: list[bool], queue=None) -> bool:
        """:meth:`commit` of a gang (``tasks[i]`` on ``machines[i]``, visible, for its own duration), all or none:
        False (nothing committed, no conflict counted) if the tasks do not fit together.

        What committing them one by one does, with the holds made first (the gang starts together): the same holds
        in the same order (:meth:`ResourceLedger.try_hold_gang`), the same usage (set once, at the gang's total:
        the same integral and change points, as every step is at this same time), then each task's wake-up,
        start and ``on_commit`` in the tasks' order. ``watched[i]``: as :meth:`commit`'s ``watched`` for task i."""
        model = self.model
        now = model.time
        speed = model.speed
        finishes = [now + task.duration / speed[m] for task, m in zip(tasks, machines)]
        demands = [task.demand for task in tasks]
        if self.ledger.try_hold_gang(machines, demands, finishes, tasks, queue=queue) is None:
            return False
        n_res = len(self._usage_now)
        summed = [0] * n_res
        for demand in demands:
            for r, d in enumerate(demand):
                summed[r] += d
        self.commits += len(tasks)
        self._add_usage(now, summed, +1)
        started, listeners, isnan, wakes = model.task_started, self.commit_listeners, math.isnan, self._wake_times
        for task, m, finish, watch in zip(tasks, machines, finishes, watched):
            first = isnan(task.start)
            task.state, task.machine = RUNNING, m
            if first:
                task.start = now
            # (a gang's tasks mostly finish together: a wake-up asked for already is not asked for again)
            if (watch or self.each_completion or self._release_waiters) and finish not in wakes:
                self._request_wake(finish)
            if first:
                started(task)
            for fn in listeners:
                fn(task, now)
        return True

    def kill(self, task: Task, reason: str) -> None:
        """End a running task now (eviction, preemption): its resources return at once."""
        self._stop(task)
        task.state, task.finish, task.note = KILLED, self.model.time, reason
        self.model.task_ended(task)

    def evict(self, task: Task) -> None:
        """Take a running task off its machine now without ending it (to migrate or requeue it)."""
        self._stop(task)
        task.state, task.machine = QUEUED, -1

    def _stop(self, task: Task) -> None:
        if task.state != RUNNING:
            raise ValueError(f"task {task.id} is {task.state}, only a running task can be stopped")
        now = self.model.time
        hold = self.ledger.release_hold(task)
        if hold.visible:
            self._add_usage(now, task.demand, -1)
            for fn in self.release_listeners:
                fn(task, now)
        else:  # hidden work is stopped early only by the lab that placed it: it knows already
            self._add_hidden(now, task.demand, -1)

    def settle(self) -> None:
        """Complete every hold due by now, in finish order, each at its own time."""
        model = self.model
        now = model.time
        ledger = self.ledger
        if ledger.next_release_time() > now:
            return
        released = False
        release_listeners, task_ended = self.release_listeners, model.task_ended
        for hold in ledger.pop_due(now):
            task, finish = hold.owner, hold.finish
            task.state, task.finish = COMPLETED, finish
            if hold.visible:
                self._add_usage(finish, task.demand, -1)
                for fn in release_listeners:
                    fn(task, finish)
                released = True
            else:
                self._add_hidden(finish, task.demand, -1)
                for fn in self.hidden_release_listeners:
                    fn(task, finish)
            task_ended(task)
        if released and self._release_waiters:
            self._request_wake(now)

    def _add_usage(self, t: float, demand, sign: int) -> None:
        now, usage = self._usage_now, self.usage
        for r, d in enumerate(demand):
            now[r] = value = now[r] + sign * d
            usage[r].set(t, value)

    def _add_hidden(self, t: float, demand, sign: int) -> None:
        for r, d in enumerate(demand):
            self._hidden_now[r] += sign * d
            self.hidden_usage[r].set(t, self._hidden_now[r])

    # ---- waking up at the right time ----------------------------------------------------------
    def wait_for_release(self, waiter) -> None:
        """A scheduler on a fresh view found no room: call ``waiter.unblock()`` when resources next
        come back."""
        self._release_waiters.append(waiter)
        t = self.ledger.next_release_time()
        if t < float("inf"):
            self._request_wake(t)

    def _request_wake(self, t: float) -> None:
        if t not in self._wake_times:
            self._wake_times.add(t)
            if self.model.decision_events == "batched":  # in the same place, without a Mesa event per wake-up
                self.model.schedule_batched(self._wake_call, at=t, priority=Priority.HIGH)
            else:
                self.model.schedule(self._wake_call, at=t, priority=Priority.HIGH)

    def _wake(self) -> None:
        self._wake_times.discard(self.model.time)
        self.model.settle()  # the one settle path: a lab's settle() runs for a wake-up too
        if self._release_waiters:
            waiters, self._release_waiters = self._release_waiters, []
            for s in waiters:
                s.unblock()


class TaskQueue:
    """Tasks waiting at a scheduler: first come, first served, or ordered by ``key(task)`` (ties
    first come, first served), like SimPy's ``Store`` and ``PriorityStore``.

    >>> q = TaskQueue(key=lambda t: -t)
    >>> q.extend([3, 9, 5]); q.peek(), len(q)
    (9, 3)
    """

    __slots__ = ("key", "_items", "_seq")

    def __init__(self, key: Callable | None = None):
        self.key = key
        self._items = deque() if key is None else []
        self._seq = 0

    def extend(self, tasks: Iterable) -> None:
        if self.key is None:
            self._items.extend(tasks)
            return
        for t in tasks:
            heapq.heappush(self._items, (self.key(t), self._seq, t))
            self._seq += 1

    def peek(self):
        return self._items[0] if self.key is None else self._items[0][2]

    def pop(self):
        return self._items.popleft() if self.key is None else heapq.heappop(self._items)[2]

    def remove(self, task) -> None:
        """Remove ``task`` (the head, unless something was queued ahead of it meanwhile)."""
        if self.peek() is task:
            self.pop()
        elif self.key is None:
            self._items.remove(task)
        else:
            i = next(k for k, entry in enumerate(self._items) if entry[2] is task)
            self._items[i] = self._items[-1]
            self._items.pop()
            heapq.heapify(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self._items) if self.key is None else (t for _, _, t in self._items)


@runtime_checkable
class SchedulerProtocol(Protocol):
    """What the model and the job managers ask of a scheduler, in either family (:class:`Scheduler`
    for shared state, :class:`~cluster_sim.engine.capacity.CapacityScheduler` for capacity queues);
    a scheduler of a new kind implements these and nothing else is assumed of it."""

    #: its number among the model's schedulers (recorded on each job it is given as ``job.scheduler``)
    index: int

    def enqueue(self, tasks: list[Task]) -> None:
        """Released tasks (a stage, or part of one) join the scheduler: they wait until placed."""

    def requeue(self, task: Task) -> None:
        """A task taken off its machine (``csv.evict``) waits again, to be placed anew."""

    def unblock(self) -> None:
        """Resources came back or the view changed: try the waiting work again."""

    def waiting(self) -> int:
        """How many tasks wait at this scheduler (for the invariants)."""


IDLE, DECIDING, BLOCKED = "idle", "deciding", "blocked"
#: what :meth:`Scheduler.decide` did with the head task
PLACED, RETRY = "placed", "retry"


class Scheduler(mesa.Agent):
    """A scheduler: a queue, a local state view, a placement policy and a think time per task.

    It decides one task per ``think_time`` on its (possibly stale) view and commits the decision to
    the central state view; a rejected commit is a conflict: counted, the machine's row refreshed,
    the task retried. When no machine fits in its view, the head task blocks the queue until the
    view changes (the next refresh, or the next release when the view is always fresh).

    A template for labs: override :meth:`queue_key` to order the queue, :meth:`decide` to do
    something else with the head task (place it elsewhere, divert it), :meth:`choose` to change the
    placement policy, :meth:`enqueue` to filter tasks on arrival.
    """

    def __init__(self, model: "ClusterModel", index: int, csv: CentralStateView, view: LocalStateView,
                 policy: Callable, think_time: float):
        super().__init__(model)
        self.index = index
        self.csv = csv
        self.view = view
        self.policy = policy
        self.think_time = think_time
        self.queue = TaskQueue(self.queue_key())
        self._decide_call = model.callback(self._decide_head)
        self.status = IDLE
        self.placed = 0
        self.conflicts = 0
        self.blocked_decisions = 0

    def queue_key(self) -> Callable | None:
        """The queue's ordering: None (first come, first served) or ``key(task)``, smallest first."""
        return None

    def enqueue(self, tasks: list[Task]) -> None:
        now = self.model.time
        for t in tasks:
            t.state, t.released = QUEUED, now
        self.queue.extend(tasks)
        self.model.queue_changed(len(tasks))
        if self.status == IDLE:
            self._next()

    def requeue(self, task: Task) -> None:
        """Take ``task`` back into the queue: it was evicted (``csv.evict``) and is to be placed again,
        behind what waits now (its release time is kept)."""
        if task.state != QUEUED:
            raise ValueError(f"task {task.id} is {task.state}: only an evicted (queued) task can be requeued")
        self.queue.extend([task])
        self.model.queue_changed(1)
        if self.status == IDLE:
            self._next()

    def _next(self) -> None:
        if self.queue:
            self.status = DECIDING
            if self.model.decision_events == "batched":
                self.model.schedule_batched(self._decide_call, after=self.think_time)
            else:
                self.model.schedule(self._decide_call, after=self.think_time)
        else:
            self.status = IDLE

    def _decide_head(self) -> None:
        queue = self.queue
        task = queue.peek()
        outcome = self.decide(task)
        if outcome == PLACED:
            queue.remove(task)  # deciding may have queued other work ahead of it (a restart)
            self.model.queue_changed(-1)
            self.placed += 1
            self._next()
        elif outcome == RETRY:
            self._next()
        else:
            self.status = BLOCKED
            self.blocked_decisions += 1
            self.on_blocked()

    def on_blocked(self) -> None:
        """The head task fits nowhere in our view: wait until it changes (a fresh view changes at
        the next release; a stale one at its next refresh, which unblocks every scheduler)."""
        if self.view.fresh:
            self.csv.wait_for_release(self)

    def decide(self, task: Task) -> str:
        """What to do with the head task: ``PLACED`` (it leaves the queue), ``RETRY`` (a conflict:
        decide again after another think time) or ``BLOCKED`` (wait until the view changes)."""
        machine = self.choose(task)
        if machine < 0:
            return BLOCKED
        task.attempts += 1
        manager = self.model.job_managers[task.job.id]
        if self.csv.commit(task, machine, watched=manager.watched(task)):
            self.view.claim(machine, task.demand)
            return PLACED
        self.conflicts += 1
        self.view.refresh_row(machine)
        return RETRY

    def choose(self, task: Task) -> int:
        """The machine for ``task`` on our view, or -1. Labs override this to change the policy."""
        if self.policy is random_fit:
            # the same machine from the same draw, from the view's kept list of the machines the demand fits
            # instead of comparing every machine's row at every decision (a third of a decision at 1,500 machines)
            fitting = self.view.fitting_machines(task.demand)
            if fitting is not None:
                return random_among(fitting, self.model.rng)
        return self.policy(self.view.free, task.demand, self.model.rng)

    def unblock(self) -> None:
        """The view changed (refresh or release): try the head task again."""
        if self.status == BLOCKED:
            self._next()

    def waiting(self) -> int:
        """Tasks in this scheduler's queue (for the invariants)."""
        return len(self.queue)


class JobManager(mesa.Agent):
    """One per job: owns the job's stage DAG, releases runnable stages, reacts to completions."""

    def __init__(self, model: "ClusterModel", job: Job, scheduler):
        super().__init__(model)
        self.job = job
        self.scheduler = scheduler
        self.parents_left = [len(s.parents) for s in job.stages]
        self.tasks_left = [len(s.tasks) for s in job.stages]
        self.stages_left = len(job.stages)

    def watched(self, task: Task) -> bool:
        """Must this task's completion be handled at its exact time? Yes if a stage waits on it."""
        return bool(self.job.stages[task.stage].children)

    def start(self) -> None:
        """The job arrived (the model calls this): :meth:`admit` it, then :meth:`release_ready` its first
        stages. A lab that holds a job back first (for tokens, for its inputs) overrides this and calls
        the two steps when it is time."""
        if self.admit():
            self.release_ready()

    def admit(self) -> bool:
        """Admission: True if every task of the job fits some machine; otherwise the job fails, with the
        first task that fits none as the reason, and this returns False."""
        unplaceable = self.model.unplaceable(self.job)
        if unplaceable is None:
            return True
        task, reason = unplaceable
        self.fail(f"task {task.id} can fit on no machine: {reason}")
        return False

    def release_ready(self) -> None:
        """Release the stages ready once the job is admitted: those without parents (each later stage
        is released by :meth:`on_task_finished` when its last parent completes)."""
        for s, stage in enumerate(self.job.stages):
            if not stage.parents:
                self.release_stage(s)

    def release_stage(self, s: int) -> None:
        """Stage ``s`` is ready (its parents are complete): hand its tasks to the scheduler. All at once
        here; a framework that caps its parallelism overrides this and releases more as tasks end."""
        self.scheduler.enqueue(self.job.stages[s].tasks)

    def on_task_started(self, task: Task) -> None:
        """The first start of one of our tasks (called once per task, by the model)."""

    def on_task_finished(self, task: Task) -> None:
        s = task.stage
        self.tasks_left[s] -= 1
        if self.tasks_left[s]:
            return
        self.stages_left -= 1
        for c in self.job.stages[s].children:
            self.parents_left[c] -= 1
            if self.parents_left[c] == 0:
                self.release_stage(c)
        if self.stages_left == 0:
            self.job.finish = task.finish
            self.model.job_finished(self)

    def on_task_killed(self, task: Task) -> None:
        """By default a killed task fails its job: stages that would wait on it fail too."""
        self.fail(f"task {task.id} was killed: {task.note}")

    def fail(self, reason: str) -> None:
        self.job.failed = True
        for t in self.job.tasks:
            if t.state == WAITING:  # never released: it can no longer run
                t.state, t.note = FAILED, reason
        self.model.job_failed(self, reason)
