"""The engine's Mesa agents: machines, the central state view, schedulers and job managers.

Agents own behaviour over time; the arithmetic lives in the pure modules (``ledger``,
``placement``, ``metrics``, ``workload``). Time is Mesa's event clock (``model.time``).

Completions are *settled in bulk*: a running task is a hold in the ledger's heap, and every agent
interaction first calls :meth:`CentralStateView.settle`, which releases all holds due by now in
finish order (each at its own finish time, so integrals stay exact). A Mesa event is scheduled at a
finish time only when something must react exactly then: a stage whose children wait on it, or a
scheduler waiting for capacity on an always-fresh view. ``completion_events="each"`` schedules one
for every task instead; a test checks that both give identical results.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Callable

import mesa
import numpy as np
from mesa.time import Priority, Schedule

from .ledger import ResourceLedger
from .metrics import StepIntegral
from .workload import COMPLETED, FAILED, KILLED, QUEUED, RUNNING, WAITING, Job, Task

if TYPE_CHECKING:
    from .model import ClusterModel


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
        self._free = None if fresh else csv.ledger.free

    @property
    def free(self) -> np.ndarray:
        return self.csv.ledger.free if self.fresh else self._free

    def sync(self, snapshot: np.ndarray, now: float) -> None:
        self._free = snapshot.copy()
        self.synced_at = now

    def claim(self, machine: int, demand) -> None:
        """A successful commit of our own: we know about it without waiting for a refresh."""
        if not self.fresh:
            self._free[machine] -= demand

    def refresh_row(self, machine: int) -> None:
        """A rejected commit returns the machine's true state (as Omega's transactions do)."""
        if not self.fresh:
            self._free[machine] = self.csv.ledger.free[machine]


class CentralStateView(mesa.Agent):
    """The shared cluster state: owns the ledger, commits claims, pushes snapshots to local views.

    Listener hooks for labs (called with the model time of the event):
    ``release_listeners``: ``fn(task, time)`` when a task's resources return to the ledger;
    ``commit_listeners``: ``fn(task, time)`` after a successful commit;
    ``sync_listeners``: ``fn(view, time)`` after a local view was refreshed;
    ``pre_sync_listeners``: ``fn(view, time)`` just before a view takes its snapshot (``view`` is
    None for a synchronous refresh of all views), so a lab can commit claims the snapshot must show.
    """

    def __init__(self, model: "ClusterModel", capacity: np.ndarray, *, completion_events: str = "bulk",
                 record_series: bool = True):
        super().__init__(model)
        if completion_events not in ("bulk", "each"):
            raise ValueError(f"completion_events={completion_events!r} is not allowed: choose 'bulk' or 'each'")
        self.ledger = ResourceLedger(capacity)
        self.each_completion = completion_events == "each"
        self.views: list[LocalStateView] = []
        self.release_listeners: list[Callable] = []
        self.commit_listeners: list[Callable] = []
        self.sync_listeners: list[Callable] = []
        self.pre_sync_listeners: list[Callable] = []
        self.commits = 0
        self.conflicts = 0
        self.usage = [StepIntegral(record=record_series) for _ in range(capacity.shape[1])]
        self._usage_now = [0] * capacity.shape[1]
        self._release_waiters: list[Scheduler] = []
        self._wake_times: set[float] = set()

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
            self.model.schedule_recurring(self._sync_all, Schedule(interval=update_delay, start=update_delay))
            return
        n = len(self.views)
        self._syncers = []
        for i, view in enumerate(self.views):
            syncer = _ViewSyncer(self, view)  # a bound method per view, kept alive by this list
            self._syncers.append(syncer)
            start = update_delay * (i + 1) / n
            self.model.schedule_recurring(syncer.sync, Schedule(interval=update_delay, start=start))

    def _sync_all(self) -> None:
        self.settle()
        now = self.model.time
        for fn in self.pre_sync_listeners:
            fn(None, now)
        snapshot = self.ledger.free
        for view in self.views:
            view.sync(snapshot, now)
            for fn in self.sync_listeners:
                fn(view, now)
        self.model.view_synced(None)
        self.model.after_event()

    def sync_view(self, view: LocalStateView) -> None:
        self.settle()
        for fn in self.pre_sync_listeners:
            fn(view, self.model.time)
        view.sync(self.ledger.free, self.model.time)
        for fn in self.sync_listeners:
            fn(view, self.model.time)
        self.model.view_synced(view)
        self.model.after_event()

    # ---- commits and releases ------------------------------------------------------------------
    def commit(self, task: Task, machine: int, watched: bool = False) -> bool:
        """Claim ``task.demand`` on ``machine``; False (a conflict) if it no longer fits."""
        self.settle()
        now = self.model.time
        finish = now + task.duration / self.model.speed[machine]
        if not self.ledger.try_hold(machine, task.demand, finish, task):
            self.conflicts += 1
            return False
        self.commits += 1
        task.state, task.machine, task.start = RUNNING, machine, now
        self._add_usage(now, task.demand, +1)
        if watched or self.each_completion or self._release_waiters:
            self._request_wake(finish)
        for fn in self.commit_listeners:
            fn(task, now)
        return True

    def kill(self, task: Task, reason: str) -> None:
        """End a running task now (eviction, preemption): its resources return at once."""
        if task.state != RUNNING:
            raise ValueError(f"task {task.id} is {task.state}, only a running task can be killed")
        self.settle()
        now = self.model.time
        self.ledger.release(task.machine, task.demand)
        task.state, task.finish, task.note = KILLED, now, reason
        self._add_usage(now, task.demand, -1)
        for fn in self.release_listeners:
            fn(task, now)
        self.model.task_ended(task)

    def settle(self) -> None:
        """Release every hold due by now, in finish order, each at its own time."""
        now = self.model.time
        if self.ledger.next_release_time() > now:
            return
        released = False
        for finish, machine, demand, task in self.ledger.pop_due(now):
            if task.state != RUNNING:  # killed earlier: already released
                continue
            self.ledger.release(machine, demand)
            task.state, task.finish = COMPLETED, finish
            self._add_usage(finish, demand, -1)
            for fn in self.release_listeners:
                fn(task, finish)
            self.model.task_ended(task)
            released = True
        if released and self._release_waiters:
            self._request_wake(now)

    def _add_usage(self, t: float, demand, sign: int) -> None:
        for r, d in enumerate(demand):
            self._usage_now[r] += sign * d
            self.usage[r].set(t, self._usage_now[r])

    # ---- waking up at the right time ----------------------------------------------------------
    def wait_for_release(self, scheduler: "Scheduler") -> None:
        """A scheduler on a fresh view found no room: wake it when resources next come back."""
        self._release_waiters.append(scheduler)
        t = self.ledger.next_release_time()
        if t < float("inf"):
            self._request_wake(t)

    def _request_wake(self, t: float) -> None:
        if t not in self._wake_times:
            self._wake_times.add(t)
            self.model.schedule_event(self._wake, at=t, priority=Priority.HIGH)

    def _wake(self) -> None:
        self._wake_times.discard(self.model.time)
        self.settle()
        if self._release_waiters:
            waiters, self._release_waiters = self._release_waiters, []
            for s in waiters:
                s.unblock()
        self.model.after_event()


class _ViewSyncer:
    """Holds one view's staggered refresh (Mesa keeps callbacks weakly; this object stays alive)."""

    def __init__(self, csv: CentralStateView, view: LocalStateView):
        self.csv, self.view = csv, view

    def sync(self) -> None:
        self.csv.sync_view(self.view)


IDLE, DECIDING, BLOCKED = "idle", "deciding", "blocked"


class Scheduler(mesa.Agent):
    """A scheduler with a FIFO queue, a local state view and a placement policy.

    It decides one task per ``think_time`` on its (possibly stale) view and commits the decision to
    the central state view; a rejected commit is a conflict: counted, the machine's row refreshed,
    the task retried. When no machine fits in its view, the head task blocks the queue until the
    view changes (the next refresh, or the next release when the view is always fresh).
    """

    def __init__(self, model: "ClusterModel", index: int, csv: CentralStateView, view: LocalStateView,
                 policy: Callable, think_time: float):
        super().__init__(model)
        self.index = index
        self.csv = csv
        self.view = view
        self.policy = policy
        self.think_time = think_time
        self.queue: deque[Task] = deque()
        self.status = IDLE
        self.placed = 0
        self.conflicts = 0
        self.blocked_decisions = 0

    def enqueue(self, tasks: list[Task]) -> None:
        now = self.model.time
        for t in tasks:
            t.state, t.released = QUEUED, now
        self.queue.extend(tasks)
        self.model.queue_changed(len(tasks))
        if self.status == IDLE:
            self._next()

    def _next(self) -> None:
        if self.queue:
            self.status = DECIDING
            self.model.schedule_event(self._decide, after=self.think_time)
        else:
            self.status = IDLE

    def choose(self, task: Task) -> int:
        """The machine for ``task`` on our view, or -1. Labs override this to change the policy."""
        return self.policy(self.view.free, task.demand, self.model.rng)

    def _decide(self) -> None:
        self.csv.settle()
        task = self.queue[0]
        machine = self.choose(task)
        if machine < 0:
            self.status = BLOCKED
            self.blocked_decisions += 1
            if self.view.fresh:
                self.csv.wait_for_release(self)
        else:
            task.attempts += 1
            manager = self.model.job_managers[task.job.id]
            if self.csv.commit(task, machine, watched=manager.watched(task)):
                self.queue.popleft()
                self.model.queue_changed(-1)
                self.view.claim(machine, task.demand)
                self.placed += 1
                manager.on_task_started(task)
            else:
                self.conflicts += 1
                self.view.refresh_row(machine)
            self._next()
        self.model.after_event()

    def unblock(self) -> None:
        """The view changed (refresh or release): try the head task again."""
        if self.status == BLOCKED:
            self._next()


class JobManager(mesa.Agent):
    """One per job: owns the job's stage DAG, releases runnable stages, reacts to completions."""

    def __init__(self, model: "ClusterModel", job: Job, scheduler: Scheduler):
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
        unplaceable = self.model.unplaceable(self.job)
        if unplaceable is not None:
            task, reason = unplaceable
            self.fail(f"task {task.id} can fit on no machine: {reason}")
            return
        for stage in self.job.stages:
            if not stage.parents:
                self.scheduler.enqueue(stage.tasks)

    def on_task_started(self, task: Task) -> None:
        if self.job.first_start != self.job.first_start:  # NaN: the first one
            self.job.first_start = task.start

    def on_task_finished(self, task: Task) -> None:
        s = task.stage
        self.tasks_left[s] -= 1
        if self.tasks_left[s]:
            return
        self.stages_left -= 1
        for c in self.job.stages[s].children:
            self.parents_left[c] -= 1
            if self.parents_left[c] == 0:
                self.scheduler.enqueue(self.job.stages[c].tasks)
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
