"""Composing the two scheduler families: an admit-only queue layer of tokens above the Omega schedulers.

The capacity family decides **when** a job may run and **how much** of the cluster it may hold; the
shared-state family decides **where** each task runs, on stale views. :class:`QueueLayer` is the
first above the second:

* a job asks for guaranteed **tokens** (one per task it may have at the schedulers or running at
  once) in one queue: an **organisation** queue (equal guaranteed shares, elastic up to what is free;
  the least-served organisation first, inside it the queue's ``key`` order; a job behind one that does
  not fit may go first) or the **reservation** queue :data:`RESERVED` (reservations set capacity
  aside for it: see :meth:`QueueLayer.reserve`);
* the layer admits what fits and never preempts: admission is the only decision it takes;
* a :class:`TokenJobManager` holds its job's tokens and hands its tasks to its placement scheduler
  while the tokens they hold (:meth:`TokenJobManager.tokens_of`: one per task by default) fit in what
  it holds (released stage by stage, as the engine's job manager does); it may
  give tokens back before its job ends (:meth:`TokenJobManager.tokens_to_release`), and gives the
  rest back when the job ends.

:class:`QueuedModel` adds the layer to any :class:`~cluster_sim.engine.ClusterModel` (a lab's
subclass included: ``class MyModel(QueuedModel, RMinerModel)``) through the engine's seams
(``start``, ``job_finished``, ``check_invariants``, ``job_manager_class``); its own seam is
:meth:`QueuedModel.make_queue_layer`. :class:`QueuedClusterModel` is the plain engine with it.

Example
-------
>>> from cluster_sim.engine import ClusterConfig
>>> model = QueuedClusterModel(ClusterConfig.ci(), check_every_event=True)
>>> model.run_until(60.0)
>>> model.layer.held.value <= model.layer.total
True
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Callable, Iterable

from .._mesa import mesa  # mesa without its stack walk (cluster_sim/_mesa.py)

from .agents import JobManager
from .metrics import StepIntegral
from .model import ClusterModel

#: the reservation queue's name
RESERVED = "reserved"
#: the organisation queue of a job that names none (``job.queue`` is None)
DEFAULT_QUEUE = "default"
#: where tokens a reserved job gives back go (:meth:`QueueLayer.give_back`)
RELEASE_CHOICES = ("reservation", "organisations")


def keep_reservation(job, tokens: int, now: float) -> str:
    """The naive rule: a reservation keeps what its job gives back until the reservation ends."""
    return "reservation"


def arrival_order(job) -> tuple:
    """First come, first served: an organisation queue's default order."""
    return (job.arrival, job.id)


class QueueLayer(mesa.Agent):
    """Guaranteed tokens in a reservation queue and organisation queues (module docstring).

    ``tokens``: the layer's total; ``queues``: the organisations' names (equal guarantees);
    ``key(job)``: the order inside an organisation queue (default :func:`arrival_order`);
    ``release_rule(job, tokens, now) -> "reservation" | "organisations"``: where tokens a reserved job
    gives back go (default :func:`keep_reservation`).
    """

    def __init__(self, model, tokens: int, queues: Iterable[str], key: Callable = arrival_order,
                 release_rule: Callable | None = None):
        super().__init__(model)
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise ValueError(f"tokens={tokens!r} is not allowed: need a whole number >= 1")
        orgs = sorted(set(queues))
        if not orgs or RESERVED in orgs:
            raise ValueError(f"queues={orgs!r} is not allowed: need at least one organisation queue, "
                             f"none named {RESERVED!r} (the reservation queue's name)")
        self.total = tokens
        self.key = key
        self.guarantee = {o: tokens / len(orgs) for o in orgs}
        self.waiting: dict[str, list] = {o: [] for o in orgs}  # org -> managers in the queue's order
        self._keys: dict[str, list] = {o: [] for o in orgs}
        self.reserved_waiting: list = []  # reserved jobs waiting for their tokens, first come first served
        self.held_by: dict[str, int] = {o: 0 for o in orgs}  # tokens held per organisation queue
        self.reserved_held = 0  # tokens held by jobs admitted to their reservation
        self.reserved_now = 0  # tokens of the reservations active now
        self.held = StepIntegral(record=False)  # all tokens held by jobs
        self.reserved = StepIntegral(record=False)  # tokens set aside for reservations
        self.admitted: dict[int, float] = {}  # job id -> admission time
        self.released_early = 0  # tokens given back before their job ended
        self._serving = False
        self.reservation_left: dict[int, int] = {}  # job id -> tokens its active reservation sets aside
        self.release_rule = keep_reservation if release_rule is None else release_rule
        # a lower bound on the tokens the smallest waiting organisation job asks for (exact after a scan that
        # admitted nothing; lowered by every submission; admissions only remove jobs, so it stays a bound)
        self._smallest_need = math.inf

    # ---- capacity ------------------------------------------------------------------------------
    @property
    def org_capacity(self) -> int:
        """What the organisations share: the layer minus the reservations (or what reserved jobs
        hold, if an overrunning job holds more than its reservation still sets aside)."""
        return self.total - max(self.reserved_now, self.reserved_held)

    @property
    def org_free(self) -> int:
        return self.org_capacity - sum(self.held_by.values())

    def reserve(self, job_id: int, tokens: int) -> None:
        """Job ``job_id``'s reservation sets ``tokens`` aside from now on; ``tokens`` = 0 ends it (what is
        left of it is returned to the organisations)."""
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise ValueError(f"tokens={tokens!r} is not allowed for job {job_id}'s reservation: need a whole number >= 0")
        left = self.reservation_left.pop(job_id, 0)
        if tokens:
            self.reservation_left[job_id] = tokens
        self._set_reserved(self.reserved_now - left + tokens)

    def _set_reserved(self, value: int) -> None:
        self.reserved_now = value
        self.reserved.set(self.model.time, value)
        self.serve()

    def _release_reservation(self, manager, tokens: int) -> None:
        """Tokens a reserved job gives back either stay set aside for its reservation until it ends
        (``"reservation"``) or shrink it, so the organisations may use them at once (``"organisations"``):
        ``release_rule`` decides."""
        job = manager.job
        if job.id not in self.reservation_left:
            return
        choice = self.release_rule(job, tokens, self.model.time)
        if choice not in RELEASE_CHOICES:
            raise ValueError(f"release_rule returned {choice!r} for job {job.id}: allowed {' or '.join(map(repr, RELEASE_CHOICES))}")
        if choice == "organisations":
            shrink = min(tokens, self.reservation_left[job.id])
            self.reservation_left[job.id] -= shrink
            self._set_reserved(self.reserved_now - shrink)

    def n_waiting(self) -> int:
        return sum(len(q) for q in self.waiting.values()) + len(self.reserved_waiting)

    # ---- jobs ----------------------------------------------------------------------------------
    def submit(self, manager: "TokenJobManager", tokens: int, queue: str) -> None:
        """``manager``'s job asks for ``tokens`` in ``queue`` (an organisation, or :data:`RESERVED`)."""
        if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= self.total:
            raise ValueError(f"tokens={tokens!r} is not allowed for job {manager.job.id}: need a whole number "
                             f"from 1 to the layer's {self.total}")
        if queue != RESERVED and queue not in self.waiting:
            raise ValueError(f"queue={queue!r} is not allowed for job {manager.job.id}: choose {RESERVED!r} or one of "
                             f"{sorted(self.waiting)}")
        manager.queue, manager.asked = queue, tokens
        if queue == RESERVED:
            self.reserved_waiting.append(manager)
        else:
            k = self.key(manager.job)
            i = bisect_right(self._keys[queue], k)
            self._keys[queue].insert(i, k)
            self.waiting[queue].insert(i, manager)
            self._smallest_need = min(self._smallest_need, tokens)
        self.serve()

    def give_back(self, manager: "TokenJobManager", tokens: int, t: float) -> None:
        """``manager``'s job returns ``tokens`` (early, or all of them at its end), booked at ``t``."""
        if tokens <= 0:
            return
        if manager.queue == RESERVED:
            self.reserved_held -= tokens
            self._release_reservation(manager, tokens)
        else:
            self.held_by[manager.queue] -= tokens
        # settling books several completions at once, in finish order: one may have admitted a job
        # (booked now) before a later one in the batch returns its tokens
        self.held.add(max(t, self.held.t), -tokens)
        self.serve()

    def top_up(self, manager: "TokenJobManager", tokens: int) -> int:
        """Give an admitted job up to ``tokens`` more, of what no job holds (a reprovisioning grant);
        returns how many it got. Hand them back with :meth:`take_back`."""
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise ValueError(f"tokens={tokens!r} is not allowed for job {manager.job.id}'s top-up: need a whole number >= 0")
        if manager.queue is None or manager.held == 0:
            raise ValueError(f"job {manager.job.id} holds no tokens: only an admitted, running job is topped up")
        n = min(tokens, self.total - self.reserved_held - sum(self.held_by.values()))
        if n <= 0:
            return 0
        if manager.queue == RESERVED:
            self.reserved_held += n
        else:
            self.held_by[manager.queue] += n
        self.held.add(self.model.time, n)
        manager.held += n
        manager.dispatch()
        return n

    def take_back(self, manager: "TokenJobManager", tokens: int) -> None:
        """``manager``'s job owes ``tokens``: it returns at once what it holds unused, the rest as its tasks end."""
        manager.owed += tokens
        manager.pay_back(self.model.time)

    def serve(self) -> None:
        """Admit what fits: reserved jobs first (their capacity is set aside), then the
        organisations, the least served (held / guarantee) first, each in its queue's order."""
        if self._serving:
            return
        self._serving = True
        try:
            while self.reserved_waiting:
                m = self.reserved_waiting[0]
                # reserved jobs go first: the organisations never take their reservations' room, but a
                # job may wait for organisation work admitted before its reservation began to end
                if self.reserved_held + m.asked + sum(self.held_by.values()) > self.total:
                    break
                self.reserved_waiting.pop(0)
                self.reserved_held += m.asked
                self._admit(m, m.asked)
            while self._admit_one_org():
                pass
        finally:
            self._serving = False

    def _admit_one_org(self) -> bool:
        free = self.org_free
        if free <= 0 or free < self._smallest_need:
            return False  # no waiting job asks for as little as is free (the scan's cost is every waiting job)
        for org in sorted((o for o in self.waiting if self.waiting[o]),
                          key=lambda o: (self.held_by[o] / self.guarantee[o], o)):
            queue = self.waiting[org]
            for i, m in enumerate(queue):
                if m.asked <= free:
                    del queue[i], self._keys[org][i]
                    self.held_by[org] += m.asked
                    self._admit(m, m.asked)
                    return True
        self._smallest_need = min((m.asked for q in self.waiting.values() for m in q), default=math.inf)
        return False

    def _admit(self, manager: "TokenJobManager", tokens: int) -> None:
        self.held.add(self.model.time, tokens)
        self.admitted[manager.job.id] = self.model.time
        manager.grant(tokens)

    # ---- invariants ----------------------------------------------------------------------------
    def check(self, managers) -> None:
        """The layer's books against the jobs' holdings; no job waits for tokens that are free."""
        held = {o: 0 for o in self.held_by}
        reserved = 0
        for m in managers:
            if m.held < m.in_use:
                raise AssertionError(f"job {m.job.id}'s tasks at schedulers or running hold {m.in_use} tokens, "
                                     f"the job holds {m.held}")
            if m.ready and m.held and not m.in_use and m.tokens_of(m.ready[0][1][0]) > m.held:
                raise AssertionError(f"job {m.job.id} holds {m.held} tokens and its next task needs "
                                     f"{m.tokens_of(m.ready[0][1][0])}: it can never run")
            if m.queue == RESERVED:
                reserved += m.held
            elif m.queue is not None:
                held[m.queue] += m.held
        if held != self.held_by or reserved != self.reserved_held:
            raise AssertionError(f"the queue layer books {self.held_by} (+ {self.reserved_held} reserved), "
                                 f"the jobs hold {held} (+ {reserved} reserved)")
        total = sum(held.values()) + reserved
        if abs(self.held.value - total) > 1e-9:
            raise AssertionError(f"tokens held over time say {self.held.value}, the jobs hold {total}")
        if total > self.total:
            raise AssertionError(f"jobs hold {total} tokens, the layer has {self.total}")
        if not self._serving:
            fits = [m.job.id for q in self.waiting.values() for m in q if m.asked <= self.org_free]
            if fits:
                raise AssertionError(f"jobs {fits[:5]} wait in the organisation queues although {self.org_free} tokens "
                                     "are free for them")
            if self.reserved_waiting and (self.reserved_held + self.reserved_waiting[0].asked
                                          + sum(self.held_by.values()) <= self.total):
                raise AssertionError(f"reserved job {self.reserved_waiting[0].job.id} waits although its tokens are free")


class TokenJobManager(JobManager):
    """A job holding tokens: its tasks at the schedulers or running hold at most that many.

    Seams: :meth:`request` (how many tokens, in which queue; default: its widest stage's tasks in
    ``job.queue``), :meth:`tokens_of` (the tokens one task holds; default 1) and
    :meth:`tokens_to_release` (tokens to give back after one of its tasks completed; default none).
    """

    def __init__(self, model, job, scheduler):
        super().__init__(model, job, scheduler)
        n = len(job.stages)
        self.held = 0
        self.asked = 0
        self.owed = 0  # tokens to hand back as soon as they are unused (QueueLayer.take_back)
        self.queue: str | None = None
        self.ready: list[list] = []  # [stage, tasks not yet handed] in release order
        self.in_flight = [0] * n  # tasks handed to a scheduler, not finished
        self.completed = [0] * n  # tasks completed
        self.tokens_in_flight = [0] * n  # the tokens those tasks hold
        self.tokens_completed = [0] * n  # the tokens completed tasks held

    @property
    def in_use(self) -> int:
        """Tokens held by the job's tasks at the schedulers or running."""
        return sum(self.tokens_in_flight)

    def tokens_of(self, task) -> int:
        """Tokens ``task`` holds from its hand-over to a scheduler to its end: 1 here (one per task); a lab
        whose tasks differ in size overrides it (a whole number from 1 to what its job asks for)."""
        return 1

    def request(self) -> tuple[int, str]:
        """``(tokens, queue)`` this job asks the layer for (default: its widest stage's tasks, at most the
        layer's tokens, in ``job.queue`` or :data:`DEFAULT_QUEUE`)."""
        widest = max(len(s.tasks) for s in self.job.stages)
        return min(widest, self.model.layer.total), self.job.queue or DEFAULT_QUEUE

    def tokens_to_release(self, task) -> int:
        """Tokens to give back now that ``task`` completed (the job goes on): 0 here; a lab's shaper
        overrides it. At most what the job holds beyond its tasks at the schedulers or running."""
        return 0

    def watched(self, task) -> bool:
        # a completion frees a token someone may wait for: a stage of ours, or a job in the layer
        return super().watched(task) or bool(self.ready) or self.model.layer.n_waiting() > 0

    def start(self) -> None:
        """Admitted by the engine (it fits), the job waits in the queue layer for its tokens."""
        if self.admit():
            self.model.layer.submit(self, *self.request())

    def grant(self, tokens: int) -> None:
        """The queue layer granted ``tokens``: release the stages without parents (the engine's step)."""
        self.held = tokens
        self.release_ready()

    def release_stage(self, s: int) -> None:
        self.ready.append([s, list(self.job.stages[s].tasks)])
        self.dispatch()

    def dispatch(self) -> None:
        """Hand waiting tasks to the scheduler, stage by stage and in order, while their tokens fit in
        what the job holds unused (a task that does not fit waits, and so do the tasks behind it)."""
        room = self.held - self.in_use
        while self.ready and room > 0:
            entry = self.ready[0]
            s, tasks = entry
            n = need = 0
            for task in tasks:
                k = self.tokens_of(task)
                if need + k > room:
                    break
                need += k
                n += 1
            if n == 0:
                return
            batch, entry[1] = tasks[:n], tasks[n:]
            if not entry[1]:
                self.ready.pop(0)
            self.in_flight[s] += n
            self.tokens_in_flight[s] += need
            room -= need
            self.scheduler.enqueue(batch)

    def on_task_finished(self, task) -> None:
        s = task.stage
        k = self.tokens_of(task)
        self.in_flight[s] -= 1
        self.completed[s] += 1
        self.tokens_in_flight[s] -= k
        self.tokens_completed[s] += k
        super().on_task_finished(task)  # children released, or the job finished
        if self.stages_left == 0:
            return
        release = self.tokens_to_release(task)
        if release:
            if isinstance(release, bool) or not isinstance(release, int) or not 0 < release <= self.held - self.in_use:
                raise ValueError(f"tokens_to_release={release!r} for job {self.job.id} is not allowed: need a whole "
                                 f"number from 0 to the {self.held - self.in_use} tokens it holds unused")
            self.held -= release
            self.owed = max(0, self.owed - release)
            self.model.layer.released_early += release
            self.model.layer.give_back(self, release, task.finish)
        self.pay_back(task.finish)
        self.dispatch()

    def pay_back(self, t: float) -> None:
        """Hand back what is owed (:meth:`QueueLayer.take_back`) that the job holds unused, booked at ``t``."""
        n = min(self.owed, self.held - self.in_use)
        if n > 0:
            self.owed -= n
            self.held -= n
            self.model.layer.give_back(self, n, t)


class QueuedModel:
    """Mixin: a :class:`QueueLayer` above a :class:`~cluster_sim.engine.ClusterModel`'s schedulers
    (put it first: ``class MyModel(QueuedModel, ClusterModel)``). The layer is made at the start, after
    the schedulers, by :meth:`make_queue_layer`; a job's end returns its tokens; the layer's books are
    part of the invariants."""

    job_manager_class = TokenJobManager
    layer: QueueLayer | None = None

    def make_queue_layer(self) -> QueueLayer:
        """The layer (default: every machine's CPU as tokens, one organisation per ``job.queue``)."""
        tokens = int(self.csv.ledger.capacity[:, 0].sum())
        return QueueLayer(self, tokens, {j.queue or DEFAULT_QUEUE for j in self.jobs} or {DEFAULT_QUEUE})

    def start(self) -> None:
        super().start()
        self.layer = self.make_queue_layer()

    def job_finished(self, manager) -> None:
        self.layer.give_back(manager, manager.held, manager.job.finish)
        manager.held = manager.owed = 0
        super().job_finished(manager)

    def check_invariants(self) -> None:
        super().check_invariants()
        if self.layer is not None:
            self.layer.check(self.job_managers.values())


class QueuedClusterModel(QueuedModel, ClusterModel):
    """The engine's shared-state model with a queue layer above its schedulers."""
