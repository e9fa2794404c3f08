"""A YARN-like central scheduler: a tree of queues with guaranteed and elastic capacity.

The second scheduler family of the engine (the first is Omega-style shared state). One central
:class:`CapacityScheduler` sees the true state of the one ledger and admits work from a tree of
queues, as Hadoop YARN's CapacityScheduler does **[YARN]**:

- every queue has a **guaranteed** capacity (a share of its parent's, or absolute resources) and a
  **maximum** (its elastic limit): idle guaranteed capacity of one queue is lent to others up to
  their maximum, and reclaimed when the lender needs it again — without preemption (the default),
  by serving the queues below their guarantee first and letting no queue borrow while one waits for
  work within its guarantee; with ``preemption=True``, also by taking back the borrowers' youngest
  tasks;
- capacities may **change over time** (:meth:`CapacityScheduler.set_capacity`,
  :meth:`CapacityScheduler.follow`): a Morpheus reservation follows its skyline minute by minute;
- a job is admitted in **gangs**: ``job.gang`` tasks of each released stage start together, or none
  does (Wing's rigid jobs; ``gang=1`` is one task at a time);
- within a leaf queue the jobs are **ordered** first come, first served, by priority, or by any key;
  a job further down is tried when the ones before it do not fit (``backfill=True``, the default),
  or the queue holds its room for the gang at its head and admits nothing behind it until that
  gang starts (``backfill=False``: YARN reserves room for the request at the head of a queue, so a
  big gang is not starved by a stream of small ones behind it).

Decisions take no time and happen at every change (an arrival, a release, a capacity change),
where YARN decides at node heartbeats; a note in the tour says so. Queues are charged through the
ledger's queue tags, so their usage has one source of truth.

Example
-------
>>> from cluster_sim.engine import ClusterConfig
>>> queues = [QueueSpec("prod", share=0.7), QueueSpec("dev", share=0.3, max_share=0.5)]
>>> model = CapacityClusterModel(ClusterConfig.ci(), queues, check_every_event=True)
>>> model.run_until(50.0)
>>> model.check_invariants()
>>> sorted(model.capacity_scheduler.queues)
['dev', 'prod', 'root']
"""

from __future__ import annotations

import math
from array import array
from operator import add, le
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .._mesa import mesa  # mesa without its stack walk (cluster_sim/_mesa.py)
import numpy as np
from mesa.time import Priority

from ..validate import number
from .agents import CentralStateView
from .metrics import StepIntegral
from .model import ClusterModel
from .placement import best_fit, first_fit, random_among, random_fit, worst_fit
from .workload import QUEUED, Job, Task

if TYPE_CHECKING:
    from .model import ClusterModel

ORDERS = ("fifo", "priority")
#: what :meth:`CapacityScheduler._place_listed` returns for a gang it does not place (None means "fits nowhere")
_UNLISTED = object()
#: :meth:`CapacityScheduler._candidates` of a queue whose one startable gang is its candidate: the first job
_HEAD = (0,)
#: the policies that draw no random number when no machine fits (a one-task gang they cannot place fits nowhere)
_NO_DRAW_WHEN_NONE_FITS = frozenset({first_fit, random_fit, best_fit, worst_fit})


@dataclass(frozen=True)
class QueueSpec:
    """One queue of the tree, as a lab declares it.

    ``share``: guaranteed share of the parent's guaranteed capacity; ``max_share``: elastic limit as
    a share of the parent's maximum (1 = may borrow everything idle, ``share`` = no borrowing);
    ``parent``: None for a child of the root; ``order``: ``"fifo"`` (arrival), ``"priority"``
    (highest ``job.priority`` first, then arrival) or ``key(job)`` (smallest first, then arrival);
    ``backfill``: a job behind one whose gang does not fit may start first (False: the head of the
    queue waits for its gang, and nothing behind it starts meanwhile).
    """

    name: str
    share: float = 1.0
    max_share: float = 1.0
    parent: str | None = None
    order: str | Callable = "fifo"
    backfill: bool = True

    def __post_init__(self) -> None:
        if not self.name or self.name == "root":
            raise ValueError(f"QueueSpec.name={self.name!r} is not allowed: a non-empty name other than 'root'")
        for field in ("share", "max_share"):
            try:  # the one validation kit: a bool, NaN or an int past float range is refused, not compared
                number(getattr(self, field), field, lo=0, hi=1)
            except ValueError as e:
                raise ValueError(f"QueueSpec {self.name!r}: {e}") from None
        if self.max_share < self.share:
            raise ValueError(f"QueueSpec {self.name!r}: max_share={self.max_share!r} is below share={self.share!r}: "
                             "the elastic limit cannot be below the guarantee")
        if not isinstance(self.backfill, bool):
            raise ValueError(f"QueueSpec {self.name!r}: backfill={self.backfill!r} is not allowed: True or False")
        if not (callable(self.order) or self.order in ORDERS):
            raise ValueError(f"QueueSpec {self.name!r}: order={self.order!r} is not allowed: choose "
                             f"{' or '.join(map(repr, ORDERS))}, or give a key(job) function")


class Queue:
    """A queue of the tree at run time: capacities (absolute resource vectors) and pending jobs.

    Every change of its jobs or capacities puts it in ``changed`` (a set its scheduler shares and empties
    when it brings its cached numbers up to date: see :meth:`CapacityScheduler._refresh`)."""

    def __init__(self, name: str, parent: "Queue | None", order, n_resources: int, backfill: bool = True):
        self.name, self.parent = name, parent
        self.backfill = backfill
        self.children: list[Queue] = []
        # the children with work (a leaf with jobs, a parent with such a leaf below it), kept as jobs come and go:
        # the scan serves only these, and a Morpheus cycle's hundred queues mostly have none (a set: the scan sorts
        # them by a key no two share, so its order is not the set's)
        self.working: set[Queue] = set()
        self.changed: set = set()
        # the scheduler's cached numbers, as plain numbers (valid once it has refreshed them): what the
        # queue holds, its ratio and whether it is owed work (leaves), whether its smallest need fits
        # its own room, by whether some queue is starved (leaves)
        self.used_ints: list = [0] * n_resources
        self.ratio = 0.0
        self.owed = False
        self.own_fit: list = [None, None]
        self.guaranteed = np.zeros(n_resources, dtype=float)
        self.maximum = np.zeros(n_resources, dtype=float)
        # usage above a lowered maximum, shrinking as work finishes: plain floats (``excess`` reads them as an
        # array), as the scheduler updates them for every queue holding some after every admission pass
        self.excess_list: list = [0.0] * n_resources
        self.excess_from = None  # (use, maximum_list) it was last shrunk from, or None (see _shrink_excess)
        if order == "fifo":
            self.key = lambda job: (job.arrival, job.id)
        elif order == "priority":
            self.key = lambda job: (-job.priority, job.arrival, job.id)
        else:
            self.key = lambda job, k=order: (k(job), job.arrival, job.id)
        self.jobs: list[Job] = []  # jobs with pending tasks, in the queue's order
        self.keys: list = []  # their ordering keys (for insertion)
        self.needs = np.zeros((0, n_resources))  # each job's next gang's total demand, row by row
        self._least: list | None = None  # the startable needs' smallest amount per resource (None: to compute)
        self.usage = StepIntegral()  # CPU held over time

    @property
    def guaranteed(self) -> np.ndarray:
        return self._guaranteed

    @guaranteed.setter
    def guaranteed(self, value: np.ndarray) -> None:
        # read-only, as its plain numbers (``guaranteed_list``, read at every admission) are kept beside it
        value.flags.writeable = False
        self._guaranteed, self.guaranteed_list = value, value.tolist()
        self.guaranteed_tol = [g + 1e-9 for g in self.guaranteed_list]  # what _owed compares a need with
        self.changed.add(self)

    @property
    def maximum(self) -> np.ndarray:
        return self._maximum

    @maximum.setter
    def maximum(self, value: np.ndarray) -> None:
        value.flags.writeable = False  # as ``guaranteed``
        self._maximum, self.maximum_list = value, value.tolist()
        self.changed.add(self)

    @property
    def excess(self) -> np.ndarray:
        """What the queue holds above a lowered maximum and may keep until it finishes (one number per resource)."""
        return np.array(self.excess_list, dtype=float)

    @excess.setter
    def excess(self, value) -> None:
        self.excess_list, self.excess_from = np.asarray(value, dtype=float).tolist(), None

    def add(self, job: Job, need: np.ndarray) -> None:
        """A job with newly pending tasks joins the queue at its place in the order."""
        key = self.key(job)
        i = bisect_right(self.keys, key)
        self.jobs.insert(i, job)
        if len(self.jobs) == 1:
            self._working(True)
        self.keys.insert(i, key)
        # the same rows as np.insert(needs, i, need, axis=0), without its general path (about 15x the cost of a
        # concatenation here, and it runs at every admission and arrival: 8 % of a Lab 05 run at paper)
        needs = self.needs
        self.needs = np.concatenate((needs[:i], np.asarray(need, dtype=needs.dtype).reshape(1, -1), needs[i:]))
        self._least = None
        self.changed.add(self)

    def set_need(self, job: Job, need: np.ndarray) -> None:
        """``job``'s next gang changed (tasks released, started or taken back)."""
        self.needs[self.jobs.index(job)] = need
        self._least = None
        self.changed.add(self)

    @property
    def least_need(self) -> list:
        """The smallest startable need per resource, as plain numbers: no gang of this queue fits a room
        this does not fit (a necessary test, cheap enough to run on every queue at every admission)."""
        if self._least is None:  # (numpy's reduction called directly: ndarray.min's Python wrappers cost more here)
            self._least = (np.minimum.reduce(self.needs, axis=0) if self.backfill else self.needs[0]).tolist()
        return self._least

    @property
    def startable_needs(self) -> np.ndarray:
        """The next gangs' demands of the jobs that may start now: every job's with backfill, the head's
        only without."""
        return self.needs if self.backfill else self.needs[:1]

    def drop(self, job: Job) -> None:
        i = self.jobs.index(job)
        del self.jobs[i], self.keys[i]
        if not self.jobs:
            self._working(False)
        needs = self.needs  # the rows of np.delete(needs, i, axis=0), as in add
        self.needs = np.concatenate((needs[:i], needs[i + 1:]))
        self._least = None
        self.changed.add(self)

    def _working(self, has: bool) -> None:
        """This queue now has work (its first job) or none (its last one left): its ancestors' ``working`` follow."""
        child, node = self, self.parent
        while node is not None:
            if has:
                first = not node.working
                node.working.add(child)
                if not first:
                    return
            else:
                node.working.discard(child)
                if node.working:
                    return
            child, node = node, node.parent

    @property
    def leaf(self) -> bool:
        return not self.children

    def path(self) -> list["Queue"]:
        """This queue and its ancestors, up to the root."""
        node, out = self, []
        while node is not None:
            out.append(node)
            node = node.parent
        return out

    def __repr__(self) -> str:
        return f"Queue({self.name!r}, guaranteed {self.guaranteed.tolist()}, maximum {self.maximum.tolist()})"


class CapacityScheduler(mesa.Agent):
    """The central scheduler of the YARN family (see the module docstring).

    ``policy(free, demand, rng) -> machine`` places each task of a gang on the true free resources;
    ``elastic=False`` pins every queue to its guarantee; ``preemption=True`` lets a queue below its
    guarantee take back borrowed resources at once.
    """

    def __init__(self, model: "ClusterModel", specs: list[QueueSpec], policy: Callable, *,
                 elastic: bool = True, preemption: bool = False):
        super().__init__(model)
        self.csv = model.csv
        self.policy = policy
        self.elastic = elastic
        self.preemption = preemption
        self.index = 0  # the model's only scheduler (SchedulerProtocol)
        n_res = self.csv.ledger.capacity.shape[1]
        self.total = self.csv.ledger.capacity.sum(axis=0).astype(float)
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"queue names must be unique, got {names}")
        if not specs:
            raise ValueError("a CapacityScheduler needs at least one QueueSpec")
        self._nothing = np.zeros(n_res, dtype=np.int64)
        self.root = Queue("root", None, "fifo", n_res)
        self.queues: dict[str, Queue] = {"root": self.root}
        self._specs = {s.name: s for s in specs}
        self._absolute: set[str] = set()  # queues given absolute capacities by set_capacity
        pending = list(specs)
        while pending:  # parents before children, whatever the order given
            placed = [s for s in pending if s.parent is None or s.parent in self.queues]
            if not placed:
                raise ValueError(f"queues {[s.name for s in pending]} name parents that do not exist "
                                 f"(or form a cycle); known queues: {sorted(self.queues)}")
            for s in placed:
                parent = self.root if s.parent is None else self.queues[s.parent]
                if parent is not self.root and parent.jobs:
                    raise ValueError(f"queue {parent.name!r} holds jobs: it cannot have children")
                q = Queue(s.name, parent, s.order, n_res, s.backfill)
                parent.children.append(q)
                self.queues[s.name] = q
            pending = [s for s in pending if s not in placed]
        for q in self.queues.values():
            if q.children and sum(self._specs[c.name].share for c in q.children) > 1.0 + 1e-9:
                shares = {c.name: self._specs[c.name].share for c in q.children}
                raise ValueError(f"the children of {q.name!r} are guaranteed more than all of it: shares {shares}")
        self.root.guaranteed, self.root.maximum = self.total.copy(), self.total.copy()
        self._resolve(self.root)
        self.leaves = [q for q in self.queues.values() if q.leaf and q is not self.root]
        self._pending: dict[int, list[Task]] = {}  # job id -> its released tasks not yet started
        self._waiting = 0
        self._pass_scheduled = False
        self._used_now: dict | None = None  # queue -> used, while one admission decision reads a fixed state
        self._changed: set[Queue] = set(self.queues.values())  # queues whose cached numbers are out of date
        for q in self.queues.values():
            q.changed = self._changed
        self._n_owed = 0  # leaves owed work (Queue.owed): some queue is starved while it is above 0
        self._over: set[str] = set()  # queues holding some usage above a lowered maximum (excess > 0)
        self._pass_call = model.callback(self._pass)
        # gangs committed in one go (CentralStateView.commit_gang) unless a lab's central state commits its own way
        csv = self.csv
        self._gang_commits = type(csv).commit is CentralStateView.commit and "commit" not in vars(csv) and \
            type(csv).commit_gang is CentralStateView.commit_gang
        # every admission's time, job, tasks admitted and gang size expected, as columns of C numbers (a
        # paper-scale run admits 2.4 M gangs: a tuple each held 100 bytes); :attr:`admissions` reads them
        self._admitted = (array("d"), array("q"), array("q"), array("q"))
        self.preempted = 0
        self.csv.subscribe(self)

    @property
    def admissions(self) -> list[tuple[float, int, int, int]]:
        """Every admission so far: (time, job id, tasks admitted, gang size expected)."""
        return list(zip(*self._admitted))

    # ---- capacities --------------------------------------------------------------------------
    def _resolve(self, node: Queue) -> None:
        """Children's capacities from their shares of ``node``'s. A child given absolute capacities by
        :meth:`set_capacity` keeps them, and so does its subtree (shares of what did not change), as a
        queue configured with absolute resources does in YARN when its parent's capacity changes."""
        for child in node.children:
            if child.name in self._absolute:
                continue
            spec = self._specs[child.name]
            child.guaranteed = spec.share * node.guaranteed
            child.maximum = (spec.max_share if self.elastic else spec.share) * node.maximum
            self._resolve(child)

    def _subtree(self, node: Queue) -> list[Queue]:
        out = [node]
        for child in node.children:
            out.extend(self._subtree(child))
        return out

    def set_capacity(self, name: str, guaranteed, maximum=None) -> None:
        """Set queue ``name``'s guaranteed capacity (absolute resources, one number per resource)
        and its elastic maximum (default: the guarantee, no borrowing), from now on. The queue keeps
        these absolute capacities when its parent changes later; its children that follow shares
        are rescaled with it. A queue using more than its new maximum (this one, or a child whose
        share of it shrank) keeps what runs (no preemption) but admits nothing until under."""
        q = self._queue(name)
        g = self._vector(guaranteed, "guaranteed")
        if maximum is None:
            m = g.copy()  # the guarantee: not below it
        else:
            m = self._vector(maximum, "maximum")
            if (m < g).any():
                raise ValueError(f"queue {name!r}: maximum {m.tolist()} is below guaranteed {g.tolist()}")
        q.guaranteed, q.maximum = g, (m if self.elastic else g.copy())
        self._absolute.add(name)
        self._resolve(q)
        # every queue whose maximum may have moved: this one, its subtree (rescaled) and its ancestors
        for node in (self._subtree(q) if q.children else [q]) + q.path()[1:]:
            used = self._used_ints(node)
            if node.name not in self._over and all(u <= m for u, m in zip(used, node.maximum_list)):
                continue  # no excess before and none now (a Morpheus cycle sets a capacity 70k times, mostly so)
            self._raise_excess(node, used)
        self._request_pass()

    # What a queue holds above its maximum, per resource: ``max(excess, used - maximum)`` (at least 0) when its
    # maximum changes, ``min(excess, max(used - maximum, 0))`` as its work finishes. In plain numbers, the IEEE
    # operations numpy made on 2-element arrays: whole amounts made floats exactly, then the same subtraction,
    # and max/min of values that are never NaN nor -0.0 (tests/morpheus/test_result_golden.py compares whole
    # cycles with the code that used the arrays).
    def _raise_excess(self, node: Queue, used: list) -> None:
        node.excess_list = [max(e, u - m, 0.0) for e, u, m in zip(node.excess_list, used, node.maximum_list)]
        node.excess_from = None
        self._note_excess(node)

    def _shrink_excess(self, node: Queue) -> None:
        used, maximum = self._used_ints(node), node.maximum_list
        seen = node.excess_from
        if seen is not None and seen[1] is maximum and seen[0] == used:
            return  # shrunk from this use and this maximum already: min(e, x) is e again (most queues, most passes)
        node.excess_list = [min(e, max(u - m, 0.0)) for e, u, m in zip(node.excess_list, used, maximum)]
        node.excess_from = (used, maximum)
        self._note_excess(node)

    def _note_excess(self, node: Queue) -> None:
        """Keep the set of queues with an excess: only they need shrinking after each pass."""
        if any(node.excess_list):
            self._over.add(node.name)
        else:
            self._over.discard(node.name)

    def follow(self, name: str, times, guaranteed, maximum=None) -> None:
        """Schedule :meth:`set_capacity` of ``name`` at each of ``times`` (e.g. a reservation's
        skyline, one change per minute)."""
        guaranteed = list(guaranteed)
        maximum = [None] * len(guaranteed) if maximum is None else list(maximum)
        if not len(times) == len(guaranteed) == len(maximum):
            raise ValueError(f"follow({name!r}): {len(times)} times, {len(guaranteed)} guaranteed and "
                             f"{len(maximum)} maximum values: give one of each per time")
        self._queue(name)
        for t, g, m in zip(times, guaranteed, maximum):
            self.model.schedule(lambda g=g, m=m: self.set_capacity(name, g, m), at=float(t))

    def _vector(self, value, what: str) -> np.ndarray:
        if type(value) is tuple and len(value) == len(self.total) and all(
                type(x) is int and 0 <= x <= 2**53 for x in value):
            # the common call, (containers, containers) from a lab at every capacity change: whole
            # amounts >= 0 are finite, so the checks below would pass; the same array, without numpy's
            # broadcasting machinery
            return np.array(value, dtype=float)
        v = np.broadcast_to(np.asarray(value, dtype=float), self.total.shape).copy()
        if not np.isfinite(v).all() or (v < 0).any():
            raise ValueError(f"{what}={np.asarray(value).tolist()} is not allowed: finite amounts >= 0 per resource")
        return v

    def _queue(self, name: str) -> Queue:
        if name not in self.queues or name == "root":
            raise ValueError(f"queue {name!r} does not exist; the queues are {sorted(set(self.queues) - {'root'})}")
        return self.queues[name]

    def used(self, node: Queue) -> np.ndarray:
        """What ``node`` (a leaf, or a parent summing its leaves) holds now, from the ledger."""
        memo = self._used_now
        if memo is not None and node.name in memo:
            return memo[node.name]
        if node.leaf:
            used = self.csv.ledger.queue_used.get(node.name)
            used = self._nothing if used is None else used
        else:  # whole amounts: the cached sums are exact, whatever the order of their changes
            used = np.array(self._used_ints(node), dtype=np.int64)
        if memo is not None:
            memo[node.name] = used
        return used

    def _used_ints(self, node: Queue) -> list:
        """:meth:`used` as plain ints: a leaf's from the ledger, a parent's from the scheduler's cached
        sums (brought up to date first), as summing a hundred leaves at every admission cost more than
        the admission."""
        if node.leaf:
            used = self.csv.ledger.queue_used.get(node.name)
            return self._nothing.tolist() if used is None else used.tolist()
        self._refresh()
        return list(node.used_ints)

    def _summed_ints(self, node: Queue) -> list:
        """What ``node`` holds, summed from the ledger over its leaves (what the cache must equal)."""
        if node.leaf:
            return self._used_ints(node)
        used = self._nothing.tolist()
        for c in node.children:
            used = [a + b for a, b in zip(used, self._summed_ints(c))]
        return used

    def _ratio(self, node: Queue) -> float:
        """How served a queue is: its dominant share of its guarantee (YARN sorts by used/capacity)."""
        return _dominant_share(self._used_ints(node), node.guaranteed_list)

    def _refresh(self) -> None:
        """Bring the scan's cached numbers up to date, for the queues whose use (the ledger names them),
        jobs or capacities changed since the last scan: a leaf's use, ratio and whether it is owed work,
        and its ancestors' use (changed by the same whole amounts, so the sums stay exact)."""
        ledger = self.csv.ledger
        changed = self._changed
        if ledger.queues_changed:
            queues = self.queues
            changed.update(queues[name] for name in ledger.queues_changed if name in queues)
            ledger.queues_changed.clear()
        if not changed:
            return
        queue_used = ledger.queue_used
        for q in changed:  # any order: each leaf's numbers are its own, its ancestors' change by sums
            if q.children:
                continue
            used = queue_used.get(q.name)
            used = self._nothing.tolist() if used is None else used.tolist()
            old = q.used_ints
            if used != old:
                n = q.parent
                while n is not None:  # its ancestors (q.path()[1:])
                    n.used_ints = [a + b - c for a, b, c in zip(n.used_ints, used, old)]
                    n = n.parent
                q.used_ints = used
            q.ratio = _dominant_share(used, q.guaranteed_list)
            owed = self._owed(q, used)
            self._n_owed += owed - q.owed
            q.owed = owed
            q.own_fit = [None, None]
        changed.clear()

    # ---- jobs arriving, tasks released -----------------------------------------------------------
    def route(self, job: Job) -> Queue:
        """The leaf queue a job goes to: ``job.queue``; a job that names none goes round robin over
        the leaf queues (by job id), and its queue is recorded on it."""
        if job.queue is None:
            job.queue = self.leaves[job.id % len(self.leaves)].name
        q = self.queues.get(job.queue)
        if q is None or not q.leaf or q is self.root:
            raise ValueError(f"job {job.id} names queue {job.queue!r}, which is not a leaf queue; "
                             f"the leaf queues are {sorted(q.name for q in self.leaves)}")
        return q

    def enqueue(self, tasks: list[Task]) -> None:
        """A job manager releases tasks (a stage): they wait in the job's queue for admission."""
        if not tasks:
            return
        now = self.model.time
        job = tasks[0].job
        for t in tasks:
            t.state, t.released = QUEUED, now
        queue = self.route(job)
        pending = self._pending.setdefault(job.id, [])
        new = not pending
        pending.extend(tasks)
        if new:
            queue.add(job, self._need(job))
        else:
            queue.set_need(job, self._need(job))
        self._waiting += len(tasks)
        self.model.queue_changed(len(tasks))
        self._request_pass()

    def waiting(self) -> int:
        return self._waiting

    def reorder(self, job: Job) -> bool:
        """``job``'s ordering key changed: put it back in its queue at its new place (False if it
        no longer waits). A new head may fit where the old one did not, so look for work."""
        q = self.queues[job.queue]
        if job not in q.jobs:
            return False
        need = q.needs[q.jobs.index(job)].copy()
        q.drop(job)
        q.add(job, need)
        self._request_pass()
        return True

    def unblock(self) -> None:
        """Resources came back (the central state's wake-up): look for work that fits now."""
        self._request_pass()

    def on_release(self, task: Task, t: float) -> None:
        """A cluster event (see :meth:`CentralStateView.subscribe`): the queue's usage series follows."""
        q = self.queues[task.job.queue]
        q.usage.set(t, float(self.used(q)[0]))

    def _request_pass(self) -> None:
        # one pass per instant, after everything else that happens then (arrivals, releases, changes)
        if not self._pass_scheduled:
            self._pass_scheduled = True
            if self.model.decision_events == "batched":  # in the same place, without a Mesa event per pass
                self.model.schedule_batched(self._pass_call, after=0.0, priority=Priority.LOW)
            else:
                self.model.schedule(self._pass_call, after=0.0, priority=Priority.LOW)

    # ---- admission ---------------------------------------------------------------------------------
    def _pass(self) -> None:
        self._pass_scheduled = False
        while self._admit_one():
            pass
        if self.preemption:
            while self._preempt_one():
                while self._admit_one():
                    pass
        for name in list(self._over):  # a lowered maximum's excess shrinks as work finishes (others have none)
            self._shrink_excess(self.queues[name])
        if self._waiting:
            self.csv.wait_for_release(self)

    def _limits(self) -> dict:
        """Each queue's limit now: its maximum; but while some queue waits for work within its own
        guarantee, no queue borrows (each is held to its guarantee), so idle capacity is lent and
        reclaimed as borrowed tasks finish (or at once, with preemption)."""
        if self._starved():
            return {q.name: np.minimum(q.maximum, q.guaranteed) for q in self.queues.values()}
        return {q.name: q.maximum for q in self.queues.values()}

    def _starved(self) -> set[str]:
        """Leaf queues with a waiting gang that fits within their guarantee (work they are owed; without
        backfill, only the gang at the head counts)."""
        return {q.name for q in self.leaves if self._owed(q)}

    def _owed(self, q: Queue, used: list | None = None) -> bool:
        """Whether leaf ``q`` has a waiting gang that fits within its guarantee. Most queues fail the test
        on their smallest need per resource (plain numbers); the rest are tested gang by gang. ``used``: what
        it holds, as plain ints, if the caller has read it already."""
        if not q.jobs:
            return False
        if used is None:
            used = self._used_ints(q)
        # (u + n <= g + 1e-9 resource by resource, the sums in C: g + 1e-9 kept from when the guarantee was set)
        if not all(map(le, map(add, used, q.least_need), q.guaranteed_tol)):
            return False  # not even the smallest amounts fit: no gang does (the same sums as below)
        if len(q.startable_needs) == 1:
            return True  # the one gang's need is the least need: it fits, by the same sums
        return bool(((self.used(q) + q.startable_needs) <= q.guaranteed + 1e-9).all(axis=1).any())

    def _order(self, node: Queue, starved: bool):
        """Leaves in the order they are served: the least served child first, at every level (from the
        cached numbers: call :meth:`_refresh` first). Leaves whose smallest need is known not to fit their
        own room are left out before sorting: the scan would pass over them, and the others keep their order."""
        children = [c for c in node.working if c.children or c.own_fit[starved] is not False]
        children.sort(key=lambda c: (c.ratio if not c.children else _dominant_share(c.used_ints, c.guaranteed_list), c.name))
        for c in children:
            if c.leaf:
                yield c
            else:
                yield from self._order(c, starved)

    def _has_work(self, node: Queue) -> bool:
        return bool(node.jobs) if node.leaf else any(self._has_work(c) for c in node.children)

    def _gang(self, job: Job) -> list[Task]:
        pending = self._pending[job.id]
        return pending[: min(job.gang, len(pending))]

    def _need(self, job: Job) -> np.ndarray:
        """The total demand of the job's next gang."""
        return _total_demand(self._gang(job))

    def _candidates(self, q: Queue, limits: dict, free: np.ndarray | None, free_total: list | None = None, *,
                    fits_least: bool = False):
        """Indices of ``q``'s jobs whose next gang fits the queue's room (at every level of the
        tree) and the cluster's free total, in the queue's order (without backfill, only the head's).
        ``free`` is read for its total only when ``free_total`` is not given.
        ``fits_least``: :meth:`_may_fit` passed for ``q`` on this scan; then a queue with one startable
        gang (most admissions at the tour's paper scale) has it as its candidate, as its need is the least
        need that test compared with the same sums, and the arrays below are not built."""
        needs = q.startable_needs
        if fits_least and len(needs) == 1:
            return _HEAD
        room = limits[q.name] - self.used(q)
        for n in q.path()[1:]:
            room = np.minimum(room, limits[n.name] - self.used(n))
        fits = (needs <= room + 1e-9) & (needs <= (free.sum(axis=0) if free_total is None else free_total))
        return np.flatnonzero(fits.all(axis=1))

    def _may_fit(self, q: Queue, starved: bool, free_total: list, rooms: dict) -> bool:
        """A necessary test for :meth:`_candidates` on plain numbers: does the queue's smallest need per
        resource fit its room at every level and the free total? The same sums and comparisons, level by
        level (``need <= min(room) + 1e-9`` is ``need <= room + 1e-9`` at every level, as rounding is
        monotone), so a queue that fails it has no candidate. It runs on every queue with work at every
        admission (a hundred Morpheus queues): the leaf's own level is cached until the leaf changes,
        its ancestors' rooms (``rooms``) are computed once per scan."""
        # (the comparisons by map(operator.le, ...), in C: generators in all() cost more, at every admission)
        least = q.least_need
        if not all(map(le, least, free_total)):
            return False
        own = q.own_fit[starved]
        if own is None:
            own = q.own_fit[starved] = all(map(le, least, self._room(q, starved)))
        if not own:
            return False
        node = q.parent
        while node is not None:
            room = rooms.get(node.name)
            if room is None:
                room = rooms[node.name] = self._room(node, starved)
            if not all(map(le, least, room)):
                return False
            node = node.parent
        return True

    @staticmethod
    def _room(node: Queue, starved: bool) -> list:
        """``limit - used + 1e-9`` of ``node`` in plain numbers (its limit as :meth:`_limits` says), from the
        cache: what a need is compared with (``need <= (limit - used) + 1e-9``, the sums of :meth:`_candidates`)."""
        m = node.maximum_list
        limit = [min(a, b) for a, b in zip(m, node.guaranteed_list)] if starved else m
        return [(a - u) + 1e-9 for a, u in zip(limit, node.used_ints)]

    def _admit_one(self) -> bool:
        """Admit the first gang that fits, serving queues in order; True if one was admitted.

        Nothing changes the ledger until a gang starts, so the scan reads each queue's use once and the
        cluster's free total once. The numbers of each queue (its use, ratio, whether it is owed work)
        are cached and refreshed only for the queues that changed since the last scan
        (:meth:`_refresh`): a Morpheus cycle has a hundred queues, and one admission changes one of them.
        Every queue with work is served in order, but only those whose smallest need fits
        (:meth:`_may_fit`) are tested gang by gang."""
        self._refresh()
        self._used_now = {}
        try:
            starved = self._n_owed > 0
            limits = None  # each queue's limit (_Limits), made when a queue first needs its candidates
            ledger = self.csv.ledger
            free = None  # the (machines, R) array, made when a gang first needs it
            free_total, rooms = ledger.truly_free_total(), {}
            # one-task demands that fit no machine in this scan: nothing changes the free rows until a gang starts,
            # so every later task asking the same fits nowhere too (on a small, fragmented cluster most of a
            # hundred queues pass the totals test with no machine to take their task); only for the engine's
            # policies, which draw nothing when no machine fits, so skipping the call keeps every later draw
            nowhere = set() if self.policy in _NO_DRAW_WHEN_NONE_FITS else None
            pending_of = self._pending
            for q in list(self._order(self.root, starved)):
                if not self._may_fit(q, starved, free_total, rooms):
                    continue
                if limits is None:
                    limits = _Limits(self.queues, starved)
                for i in self._candidates(q, limits, free, free_total, fits_least=True):
                    job = q.jobs[i]
                    pending = pending_of[job.id]
                    demand = None
                    if nowhere is not None and (job.gang == 1 or len(pending) == 1):  # a gang of one task
                        demand = pending[0].demand
                        if demand in nowhere:
                            continue  # (tested before the gang's list is made: an ad hoc queue holds hundreds)
                    gang = pending[: min(job.gang, len(pending))]  # self._gang(job)
                    machines = self._place_listed(gang)
                    if machines is _UNLISTED:
                        if free is None:
                            free = ledger.truly_free
                        machines = self._place(gang, free)
                    if machines is None:
                        if demand is not None:
                            nowhere.add(demand)
                        continue  # room in total, but fragmented over machines: try the next job
                    self._used_now = None  # the ledger changes from here on
                    self._start(q, job, gang, machines)
                    return True
            return False
        finally:
            self._used_now = None

    def _place_listed(self, gang: list[Task]):
        """:meth:`_place` of a gang of one task under random fit or first fit, from the ledger's kept list of the
        machines its demand fits (:meth:`~cluster_sim.engine.ledger.ResourceLedger.fitting_machines`): the machines
        ``random_fit`` or ``first_fit`` would find on ``truly_free``, in the same (ascending) order, so the same
        draw and machine under random fit, the first of them under first fit (or None: it fits nowhere).
        ``_UNLISTED`` where there is no list: a larger gang (placed on a scratch copy), another policy, or a demand
        past the ledger's lists; the caller places it on the array. (Lab 03's cycles place first fit: their gangs of
        one retried at every pass, most of them ad hoc tasks that fit no machine, cost a pass over every machine.)"""
        policy = self.policy
        if len(gang) != 1 or (policy is not random_fit and policy is not first_fit):
            return _UNLISTED
        fitting = self.csv.ledger.fitting_machines(gang[0].demand)
        if fitting is None:
            return _UNLISTED
        if policy is first_fit:
            return [fitting[0]] if fitting else None
        m = random_among(fitting, self.model.rng)
        return None if m < 0 else [m]

    def _place(self, gang: list[Task], free: np.ndarray, policy=None, rng=None) -> list[int] | None:
        """A machine for every task of the gang on the true free resources, or None. A gang the
        policy cannot place (say, random choices that fragment) is tried again first fit, so "the
        machines have room" means one thing to the scheduler and to its invariant."""
        for pol in ((policy or self.policy), first_fit):
            if pol is first_fit and len(gang) > 1:
                return _first_fit_gang(free, gang)
            # a gang's tasks take their room from a scratch copy one by one; a gang of one is placed on
            # ``free`` itself, which the policies only read (a copy per admission at 1,500 machines)
            several = len(gang) > 1
            scratch = free.copy() if several else free
            out = []
            for task in gang:
                m = pol(scratch, task.demand, self.model.rng if rng is None else rng)
                if m < 0:
                    break
                if several:
                    scratch[m] -= task.demand
                out.append(m)
            else:
                return out
            if len(gang) == 1 or pol is first_fit:
                return None  # one task fits nowhere: first fit cannot do better
        return None

    def _start(self, q: Queue, job: Job, gang: list[Task], machines: list[int]) -> None:
        manager = self.model.job_managers[job.id]
        pending = self._pending[job.id]
        csv, watched, name = self.csv, manager.watched, q.name  # looked up once a gang, not a task
        together = len(gang) > 1 and self._gang_commits
        if together:
            # the gang's holds in one go (the same holds, usage and reports: CentralStateView.commit_gang)
            for task in gang:
                task.attempts += 1
            together = csv.commit_gang(gang, machines, watched=[watched(task) for task in gang], queue=name)
            if not together:  # told again task by task below, which names the task that does not fit
                for task in gang:
                    task.attempts -= 1
        if not together:
            commit = csv.commit
            for task, m in zip(gang, machines):
                task.attempts += 1
                if not commit(task, m, watched=watched(task), queue=name):
                    raise AssertionError(f"task {task.id} did not fit machine {m} on the true state")
        for column, value in zip(self._admitted, (self.model.time, job.id, len(gang), min(job.gang, len(pending)))):
            column.append(value)
        del pending[: len(gang)]
        self._waiting -= len(gang)
        self.model.queue_changed(-len(gang))
        if not pending:
            q.drop(job)
            del self._pending[job.id]
        else:
            after = self._gang(job)
            if len(after) == len(gang) and _gang_total(after) == _gang_total(gang):
                # the next gang needs what this one did (a job's tasks mostly ask alike): its row and the queue's
                # least need stay as they are, where set_need made them again with numpy at every admission
                q.changed.add(q)
            else:
                q.set_need(job, _total_demand(after))
        q.usage.set(self.model.time, float(self.used(q)[0]))

    def _preempt_one(self) -> bool:
        """Take back one borrowed task (the youngest of the queue furthest above its guarantee) for a
        starved queue; True if one was taken."""
        if not self._starved():
            return False
        over = [q for q in self.leaves if (self.used(q) > q.guaranteed + 1e-9).any()]
        if not over:
            return False
        victim_queue = max(over, key=lambda q: (self._ratio(q), q.name))
        running = [h.owner for h in self.csv.ledger.holds() if h.queue == victim_queue.name and h.visible]
        if not running:
            return False
        task = max(running, key=lambda t: (t.start, t.id))
        self._requeue(task, victim_queue, f"preempted at {self.model.time:g} for a queue below its guarantee")
        return True

    def _requeue(self, task, queue, note: str) -> None:
        """Take a running task back (evicted, its work lost) and queue it first among its job's pending tasks."""
        self.csv.evict(task)
        task.note = note
        self.preempted += 1
        self._pend_first(task, queue)

    def requeue(self, task: Task) -> None:
        """Queue an evicted task (``csv.evict``) again, first among its job's pending tasks, and look for
        work that fits."""
        if task.state != QUEUED:
            raise ValueError(f"task {task.id} is {task.state}: only an evicted (queued) task can be requeued")
        self._pend_first(task, self.queues[task.job.queue])
        self._request_pass()

    def _pend_first(self, task: Task, queue: Queue) -> None:
        job = task.job
        pending = self._pending.setdefault(job.id, [])
        new = not pending
        pending.insert(0, task)
        if new:
            queue.add(job, self._need(job))
        else:
            queue.set_need(job, self._need(job))
        self._waiting += 1
        self.model.queue_changed(1)

    def reclaim(self, name: str) -> int:
        """Bring leaf queue ``name`` down to its maximum now: its youngest running tasks are taken back
        (evicted and queued again, their work lost, as YARN's preemption of a shrinking reservation
        queue kills containers) until it holds no more than its maximum. Returns how many were taken."""
        q = self._queue(name)
        if not q.leaf:
            raise ValueError(f"queue {name!r} is not a leaf: reclaim a leaf queue")
        self._used_now = None  # the ledger changes from here on
        taken = 0
        while (self.used(q) > q.maximum + 1e-9).any():
            running = [h.owner for h in self.csv.ledger.holds() if h.queue == name and h.visible]
            if not running:
                break
            task = max(running, key=lambda t: (t.start, t.id))
            self._requeue(task, q, f"reclaimed at {self.model.time:g} when queue {name!r} shrank below what it held")
            taken += 1
        for node in q.path():
            self._shrink_excess(node)
        if taken:
            self._request_pass()
        return taken

    # ---- invariants --------------------------------------------------------------------------------
    def check(self) -> None:
        """No queue over its limit (maximum, plus what it held above a lowered maximum), every
        pending task queued, gangs whole, and no job waiting while its queue and the machines have
        room for its gang."""
        self._refresh()  # the scan's cached numbers: each queue's use, ratio and whether it is owed work
        for q in self.queues.values():
            fresh = self._summed_ints(q)
            if q.used_ints != fresh:
                raise AssertionError(f"queue {q.name!r}: the scheduler's cached use {q.used_ints} is not what it "
                                     f"holds, {fresh}")
            if q.leaf and q is not self.root and (q.ratio != self._ratio(q) or q.owed != self._owed(q)):
                raise AssertionError(f"queue {q.name!r}: cached ratio {q.ratio} and owed {q.owed}, they are "
                                     f"{self._ratio(q)} and {self._owed(q)}")
        for q in self.queues.values():
            working = {c for c in q.children if self._has_work(c)}
            if q.working != working:
                raise AssertionError(f"queue {q.name!r} keeps {sorted(c.name for c in q.working)} as its children "
                                     f"with work, they are {sorted(c.name for c in working)}")
        if self._n_owed != len(self._starved()):
            raise AssertionError(f"the scheduler counts {self._n_owed} queues owed work, they are "
                                 f"{sorted(self._starved())}")
        for q in self.queues.values():
            used = self.used(q)
            if (used > q.maximum + q.excess + 1e-9).any():
                raise AssertionError(f"queue {q.name!r} holds {used.tolist()}, over its maximum "
                                     f"{q.maximum.tolist()} (+ {q.excess.tolist()} held from before a change)")
        n = 0
        for job_id, tasks in self._pending.items():
            n += len(tasks)
            bad = [t.id for t in tasks if t.state != QUEUED]
            if bad:
                raise AssertionError(f"job {job_id}'s pending tasks {bad} are not queued")
        if n != self._waiting:
            raise AssertionError(f"{n} tasks pending in queues, the scheduler counts {self._waiting}")
        for t, job_id, got, want in zip(*self._admitted):
            if got != want:
                raise AssertionError(f"job {job_id} was admitted {got} tasks at {t}, its gang is {want}")
        for q in self.leaves:
            for job, need in zip(q.jobs, q.needs):
                if not np.array_equal(need, self._need(job)):
                    raise AssertionError(f"queue {q.name!r} has job {job.id}'s next gang as {need.tolist()}, "
                                         f"it is {self._need(job).tolist()}")
            if q.jobs and q._least is not None:  # kept across admissions whose next gang needs the same
                least = (np.minimum.reduce(q.needs, axis=0) if q.backfill else q.needs[0]).tolist()
                if q._least != least:
                    raise AssertionError(f"queue {q.name!r} keeps {q._least} as its least need, it is {least}")
        if not self._pass_scheduled:
            limits = self._limits()
            free = self.csv.ledger.truly_free
            for q in self.leaves:
                for i in self._candidates(q, limits, free):
                    gang = self._gang(q.jobs[i])
                    if self._place(gang, free, policy=first_fit, rng=np.random.default_rng(0)) is not None:
                        raise AssertionError(f"job {q.jobs[i].id} waits in queue {q.name!r} although its queue and "
                                             f"the machines have room for its gang of {len(gang)}")


def _dominant_share(used: list, guaranteed: list) -> float:
    """A queue's dominant share of its guarantee: the largest used / guaranteed over the resources (a
    resource guaranteed nothing counts as infinitely served if used, not at all if not)."""
    best = 0.0  # plain floats: two numbers per queue, compared at every admission
    for u, g in zip(used, guaranteed):
        share = u / g if g > 0 else (math.inf if u > 0 else 0.0)
        if share > best:  # max(best, share), without a call (never NaN: u >= 0, and g > 0 here)
            best = share
    return best


class _Limits(dict):
    """:meth:`CapacityScheduler._limits` computed only for the queues asked for (the few whose gangs
    may fit), not for every queue at every admission."""

    def __init__(self, queues: dict, starved: bool):
        super().__init__()
        self.queues, self.starved = queues, starved

    def __missing__(self, name: str) -> np.ndarray:
        q = self.queues[name]
        limit = self[name] = np.minimum(q.maximum, q.guaranteed) if self.starved else q.maximum
        return limit


#: up to this many machines a gang is placed by a loop over the machines' rows, above by numpy over its columns
#: (Lab 05's runs have 7 to 40 machines, where numpy's calls cost more than the loop)
LOOP_MACHINES = 64


def _first_fit_gang(free: np.ndarray, gang: list[Task]) -> list[int] | None:
    """First fit of a gang, task after task on a scratch copy of ``free`` (what :meth:`CapacityScheduler._place`
    does with :func:`~cluster_sim.engine.placement.first_fit`), computed at once when the tasks ask alike.

    Task by task, first fit puts each task on the lowest machine it fits, which keeps taking tasks until it
    has no room for one more: machine m takes ``min_r free[m, r] // demand[r]`` of them in turn. So the gang's
    machines are those counts, cumulated, cut at the gang's size: the same machines in the same order, without
    a pass over the machines per task (Lab 05's gangs have up to hundreds of containers)."""
    demand = gang[0].demand
    if not all(d > 0 for d in demand) or any(t.demand != demand for t in gang):
        return _first_fit_each(free, gang)  # a zero demand fits without bound; unlike tasks go one by one
    if len(free) <= LOOP_MACHINES:
        return _first_fit_alike_loop(free, demand, len(gang))
    return _first_fit_alike_arrays(free, demand, len(gang))


def _first_fit_alike_loop(free: np.ndarray, demand: tuple, k: int) -> list[int] | None:
    """:func:`_first_fit_gang` for ``k`` tasks of ``demand`` (all > 0), machine by machine in plain numbers."""
    out: list[int] = []
    for m, row in enumerate(free.tolist()):
        copies = min(f // d for f, d in zip(row, demand))  # < 0 on a machine over a lowered capacity: none
        if copies > 0:
            if copies >= k - len(out):
                out.extend([m] * (k - len(out)))
                return out
            out.extend([m] * copies)
    return None  # not enough room in all: the task-by-task loop stops at the task that fits nowhere


def _first_fit_alike_arrays(free: np.ndarray, demand: tuple, k: int) -> list[int] | None:
    """:func:`_first_fit_alike_loop` by numpy over the machines' columns (many machines)."""
    copies = free[:, 0] // demand[0]
    for r in range(1, free.shape[1]):
        copies = np.minimum(copies, free[:, r] // demand[r])
    copies = np.maximum(copies, 0)
    reach = np.cumsum(copies)
    if not len(reach) or reach[-1] < k:
        return None
    last = int(np.searchsorted(reach, k))  # the first machine by which k tasks are placed
    take = copies[: last + 1].copy()
    take[last] -= reach[last] - k
    return np.repeat(np.arange(last + 1), take).tolist()


def _first_fit_each(free: np.ndarray, gang: list[Task]) -> list[int] | None:
    """First fit task after task on a scratch copy of ``free``: the reference :func:`_first_fit_gang` equals."""
    scratch = free.copy()
    out = []
    for task in gang:
        m = first_fit(scratch, task.demand)
        if m < 0:
            return None
        scratch[m] -= task.demand
        out.append(m)
    return out


def _gang_total(tasks: list[Task]) -> tuple:
    """The tasks' total demand per resource, in whole units (Python ints)."""
    if len(tasks) == 1:
        return tasks[0].demand
    demands = [t.demand for t in tasks]
    d0 = demands[0]
    if demands.count(d0) == len(demands):  # a job's tasks mostly ask alike: the same whole units, times their count
        n = len(demands)
        return tuple(d * n for d in d0)
    return tuple(map(sum, zip(*demands)))


def _total_demand(tasks: list[Task]) -> np.ndarray:
    # whole units summed as Python ints, then made floats: the same numbers as adding the tasks' demands
    # to a float array one by one (every partial sum is a whole number far below 2**53), without a numpy
    # call per task
    return np.array(_gang_total(tasks), dtype=float)


class CapacityClusterModel(ClusterModel):
    """The YARN family: one central :class:`CapacityScheduler` over a tree of queues, on the same
    ledger and event loop as the shared-state family (``config.schedulers``, ``update_delay`` and
    ``think_time`` do not apply: the central scheduler sees the true state and decides at once).

    ``queues`` declares the tree (default: one queue with the whole cluster); ``elastic`` and
    ``preemption`` as for :class:`CapacityScheduler`. Jobs go to the queue named by ``job.queue``.
    """

    #: the central scheduler's class (a subclass may name another, e.g. a benchmark's reference scan)
    capacity_scheduler_class = CapacityScheduler

    def __init__(self, config, queues: list[QueueSpec] | None = None, *, elastic: bool = True,
                 preemption: bool = False, **kwargs):
        super().__init__(config, **kwargs)
        # the central scheduler needs only the substrate and the queues: it exists from construction
        # on, so a lab can set capacities (``set_capacity``, ``follow``) before the run starts
        specs = list(queues) if queues else [QueueSpec("default")]
        self.capacity_scheduler = self.capacity_scheduler_class(self, specs, self.policy, elastic=elastic,
                                                                preemption=preemption)

    def make_schedulers(self, policy: Callable) -> list:
        return [self.capacity_scheduler]

    def route(self, job: Job):
        return self.capacity_scheduler

    def check_invariants(self) -> None:
        super().check_invariants()
        self.capacity_scheduler.check()
