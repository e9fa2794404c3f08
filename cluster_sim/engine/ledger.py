"""The resource ledger: the one source of truth for per-machine capacity and allocation.

Pure numpy, no Mesa. The central state view owns the one ``ResourceLedger``; machines, local views,
queues and metrics read it or snapshots of it. Running work is a :class:`Hold` with a release time,
kept in a heap so that due completions are settled in bulk whenever the model advances (one Mesa
event per completion would cap the engine at Mesa's event rate).

Holds are tagged:

- ``visible``: counted in ``allocated``, what the central state view (and every snapshot of it)
  shows; a *hidden* hold (``visible=False``, e.g. a Resource Miner task on shadow resources) is
  counted in ``hidden`` instead: it occupies the machine, but no scheduler's view shows it;
- ``owner``: the task (or any object) the hold belongs to;
- ``queue``: the capacity-scheduler queue it is charged to (``queue_used`` sums them).

``free`` is what the central state believes is free (capacity - allocated); ``truly_free`` also
subtracts hidden holds. A visible hold needs room in ``free`` (the central state does not know the
hidden ones: that collision is the lab's to resolve); a hidden one needs room in ``truly_free``.

Example
-------
>>> import numpy as np
>>> ledger = ResourceLedger(np.array([[4, 8], [2, 2]]))
>>> ledger.fits(1, (2, 2)), ledger.fits(1, (3, 1))
(True, False)
>>> ledger.allocate(0, (3, 4)); ledger.free[0].tolist()
[1, 4]
>>> h = ledger.hold(1, (1, 1), until=5.0, owner="task 7", visible=False, queue="adhoc")
>>> ledger.free[1].tolist(), ledger.truly_free[1].tolist(), ledger.queue_used["adhoc"].tolist()
([2, 2], [1, 1], [1, 1])
>>> [hold.owner for hold in ledger.pop_due(6.0)], ledger.truly_free[1].tolist()
(['task 7'], [2, 2])
"""

from __future__ import annotations

import heapq
from collections import Counter
from operator import attrgetter

import numpy as np

from ..validate import whole_numbers
from .placement import FitLists


class Hold(float):
    """Resources held on one machine until ``finish`` by ``owner`` (released by the ledger).

    A hold *is* its release time (a float subclass: ``float(hold) == hold.finish``), so the ledger's heap of
    holds compares plain floats, in C: a heap of (time, seq, hold) tuples compared twice as slowly, and a heap of
    bare times needed a dict from each time to its holds, whose look-ups cost as much again at every commit and
    release (a paper-scale RMiner run has 40,000 running tasks and 2.5 million of each). Only the heap compares
    holds; everything else tells them apart by identity. ``seq`` orders holds due at the same time (the first
    made goes first); ``live`` is False once released early (killed, evicted), until the heap reaches it."""

    __slots__ = ("owner", "machine", "demand", "finish", "visible", "queue", "seq", "live")

    def __new__(cls, owner, machine: int, demand, finish: float, visible: bool, queue, seq: int = 0,
                live: bool = True):
        self = float.__new__(cls, finish)
        self.owner, self.machine, self.demand = owner, machine, demand
        self.finish, self.visible, self.queue = finish, visible, queue
        self.seq, self.live = seq, live
        return self

    def __reduce__(self):  # pickle and copy by the fields (a float's own reduction knows only the value)
        return (Hold, (self.owner, self.machine, self.demand, self.finish, self.visible, self.queue, self.seq,
                       self.live))

    def __repr__(self) -> str:
        kind = "" if self.visible else ", hidden"
        return f"Hold({self.owner!r}, machine {self.machine}, {list(self.demand)} until {self.finish:g}{kind})"


_made = attrgetter("seq")  # the order holds were made in


class ResourceLedger:
    """Per-machine integer capacity and allocation, with a heap of timed, tagged holds."""

    def __init__(self, capacity: np.ndarray):
        capacity = np.asarray(capacity)
        if capacity.ndim != 2 or capacity.shape[0] < 1 or capacity.shape[1] < 1:
            raise ValueError(f"capacity must be a (machines, resources) array, got shape {capacity.shape}")
        if capacity.dtype.kind not in "iu":
            raise ValueError(f"capacity must hold integer resource units, got dtype {capacity.dtype}")
        if (capacity < 1).any():
            m = int(np.argwhere(capacity < 1)[0][0])
            raise ValueError(f"capacity of machine {m} is {capacity[m].tolist()}: every entry must be >= 1")
        self.capacity = capacity.astype(np.int64)
        self.allocated = np.zeros_like(self.capacity)  # visible to the central state
        self.hidden = np.zeros_like(self.capacity)  # held, but shown by no view
        self._views()
        # Cumulative flows, for the invariant "released equals allocated" (minus what still runs);
        # plain ints: updated at every commit, and numpy arithmetic on a tuple costs 4x more.
        self._allocated_total = [0] * self.capacity.shape[1]
        self._released_total = [0] * self.capacity.shape[1]
        self._capacity_total = self.capacity.sum(axis=0).tolist()
        self.queue_used: dict = {}  # queue -> resource vector held by holds charged to it
        self._queue_rows: dict = {}  # queue -> a memoryview of its queue_used vector (written element by element)
        # queues whose queue_used changed since their reader (the capacity scheduler) last emptied this set
        self.queues_changed: set = set()
        # When holds come due: a heap of the holds themselves, each a float (its release time, see Hold);
        # holds due at the same time come out in the order they were made (``seq``). Holds released early
        # (killed, evicted) stay in the heap until their time and are skipped then.
        self._heap: list[Hold] = []
        self._seq = 0
        self._live: dict = {}  # owner -> its current hold
        # the machines each demand fits on truly_free, kept from the first fitting_machines(demand) on, at every
        # change of a machine's rows (_refit)
        self._fit = FitLists()
        self._stale: set = set()  # machines whose rows changed since the kept lists last followed them (_refit)

    def _views(self) -> None:
        # Element views of the same memory (not copies): a commit or a release touches one machine's
        # few entries, and a memoryview reads and writes them as Python ints about twice as fast as
        # numpy's scalar indexing (whose int64 scalars then make every sum slower too).
        self._cap = memoryview(self.capacity)
        self._alloc = memoryview(self.allocated)
        self._hid = memoryview(self.hidden)
        self._n_res = self.capacity.shape[1]

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        for name in ("_cap", "_alloc", "_hid"):
            del state[name]  # memoryviews do not pickle: made again from the arrays
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._views()

    def row(self, machine: int, visible: bool = True) -> list[int]:
        """What ``machine`` has free, as Python ints: as the central state shows it (``free``), or truly
        (``truly_free``, with ``visible=False``); for code that reads one machine at each event."""
        cap, alloc = self._cap, self._alloc
        if visible:
            if self._n_res == 2:  # CPU and memory: the common case, spelt out (it runs at every release)
                return [cap[machine, 0] - alloc[machine, 0], cap[machine, 1] - alloc[machine, 1]]
            return [cap[machine, r] - alloc[machine, r] for r in range(self._n_res)]
        hid = self._hid
        return [cap[machine, r] - alloc[machine, r] - hid[machine, r] for r in range(self._n_res)]

    @property
    def n_machines(self) -> int:
        return self.capacity.shape[0]

    @property
    def free(self) -> np.ndarray:
        """A new array of what the central state shows free per machine (capacity - allocated)."""
        return self.capacity - self.allocated

    @property
    def truly_free(self) -> np.ndarray:
        """A new array of what is really free per machine (hidden holds subtracted too)."""
        return self.capacity - self.allocated - self.hidden

    def truly_free_total(self) -> list[int]:
        """``truly_free.sum(axis=0)`` as Python ints, from the cumulative flows: everything held now
        (visible or hidden) is what was ever held minus what was released (:meth:`check` holds the two
        equal). The capacity scheduler reads it at every admission, where summing the (machines, R)
        array cost a tenth of the admission at RMiner's 1,500 machines."""
        return [c - a + r for c, a, r in zip(self._capacity_total, self._allocated_total, self._released_total)]

    def fitting_machines(self, demand: tuple) -> list[int] | None:
        """The machines where ``demand`` fits what is truly free (``(truly_free >= demand).all(axis=1)``), in
        ascending order, as a list this ledger keeps from this first call on (read it, never change it) and brings
        up to date whenever it is read here: call this again after a hold or a release (the same list, followed);
        None once :data:`~cluster_sim.engine.placement.FIT_LISTS` other demands have lists
        (:class:`~cluster_sim.engine.placement.FitLists`).

        For a placement that reads only which machines fit (the capacity scheduler's random fit, at every
        admission): at RMiner's 1,500 machines building ``truly_free`` and comparing its columns cost about a
        fifth of an admission, where a hold or a release changes one machine, which the list follows by one test.
        The machines whose rows changed are noted at each hold and release and the lists follow them here, once
        each, when next read: a gang of hundreds of containers lands on a few machines and comes back on them
        (Lab 05), and following every hold and release cost more than the reads.

        >>> ledger = ResourceLedger(np.array([[2, 2], [1, 1], [4, 4]]))
        >>> fits = ledger.fitting_machines((2, 2)); fits
        [0, 2]
        >>> h = ledger.hold(2, (3, 3), until=1.0, owner="a"); ledger.fitting_machines((2, 2))
        [0]
        >>> [hold.owner for hold in ledger.pop_due(1.0)], ledger.fitting_machines((2, 2)) is fits, fits
        (['a'], True, [0, 2])
        """
        if self._stale:
            self._follow()
        kept = self._fit.get(demand)
        if kept is not None:
            return kept[1]
        return self._fit.machines(demand, self.truly_free)  # a new list (the array is made for it only)

    def _refit(self, machine: int) -> None:
        """Note that ``machine``'s rows changed: the kept lists of fitting machines follow it when next read."""
        self._stale.add(machine)

    def _follow(self) -> None:
        """Bring the kept lists of fitting machines up to date for the machines whose rows changed."""
        cap, alloc, hid, update = self._cap, self._alloc, self._hid, self._fit.update
        for machine in self._stale:  # any order: each machine's place in a list depends on its row only
            if self._n_res == 2:  # CPU and memory, spelt out
                row = (cap[machine, 0] - alloc[machine, 0] - hid[machine, 0],
                       cap[machine, 1] - alloc[machine, 1] - hid[machine, 1])
            else:
                row = [cap[machine, r] - alloc[machine, r] - hid[machine, r] for r in range(self._n_res)]
            update(machine, row)
        self._stale.clear()

    @property
    def allocated_total(self) -> np.ndarray:
        """Everything ever held, per resource."""
        return np.array(self._allocated_total, dtype=np.int64)

    @property
    def released_total(self) -> np.ndarray:
        """Everything ever released, per resource."""
        return np.array(self._released_total, dtype=np.int64)

    def fits(self, machine: int, demand, visible: bool = True) -> bool:
        # element by element: this runs at every commit, and is 3x faster than row arithmetic
        cap, alloc = self._cap, self._alloc
        if visible:
            for r, d in enumerate(demand):
                if alloc[machine, r] + d > cap[machine, r]:
                    return False
            return True
        hidden = self._hid
        for r, d in enumerate(demand):
            if alloc[machine, r] + hidden[machine, r] + d > cap[machine, r]:
                return False
        return True

    def _add(self, rows: memoryview, machine: int, demand, sign: int) -> None:
        for r, d in enumerate(demand):
            rows[machine, r] += sign * d

    # ---- untimed allocations ------------------------------------------------------------------
    def allocate(self, machine: int, demand) -> None:
        # the direct API checks its demand (the rows are written through int64 memoryviews, which would refuse a
        # fraction with a TypeError after writing the entries before it); commits go through try_hold, whose
        # demands are the tasks', checked whole when the tasks were made
        demand = whole_numbers(demand, "demand")
        if not self.fits(machine, demand):
            raise ValueError(
                f"demand {tuple(demand)} does not fit on machine {machine}: "
                f"free {self.free[machine].tolist()}"
            )
        self._add(self._alloc, machine, demand, +1)
        self._flow(self._allocated_total, demand)
        if self._fit:
            self._refit(machine)

    @staticmethod
    def _flow(total: list, demand) -> None:
        for r, d in enumerate(demand):
            total[r] += d

    def release(self, machine: int, demand) -> None:
        self._add(self._alloc, machine, demand, -1)
        self._flow(self._released_total, demand)
        if self._fit:
            self._refit(machine)
        if (self.allocated[machine] < 0).any():
            raise AssertionError(f"machine {machine} released more than it held: {self.allocated[machine].tolist()}")

    # ---- holds released at a known time -------------------------------------------------------
    def _charge(self, queue, amount) -> None:
        """Add ``amount`` to ``queue``'s use (its vector made at its first hold) and note the queue changed."""
        row = self._queue_rows.get(queue)
        if row is None:
            used = self.queue_used[queue] = np.zeros(self.capacity.shape[1], dtype=np.int64)
            row = self._queue_rows[queue] = memoryview(used)
        for r, d in enumerate(amount):  # the vector's own memory: numpy's += of a tuple cost 4x more a commit
            row[r] += d
        self.queues_changed.add(queue)

    def try_hold(self, machine: int, demand, until: float, owner, *, visible: bool = True, queue=None):
        """Hold ``demand`` on ``machine`` until ``until`` if it fits (a commit's single check);
        the :class:`Hold`, or None. An owner holds one place at a time."""
        if not self.fits(machine, demand, visible):
            return None
        if owner in self._live:
            raise ValueError(f"{owner!r} already holds {self._live[owner]}: release it first")
        rows, total = (self._alloc if visible else self._hid), self._allocated_total
        for r, d in enumerate(demand):  # _add and _flow in one loop: this runs at every commit
            rows[machine, r] += d
            total[r] += d
        if queue is not None:
            self._charge(queue, demand)
        if self._fit:
            self._refit(machine)
        hold = Hold(owner, machine, demand, until, visible, queue, self._seq)
        self._seq += 1
        self._live[owner] = hold
        heapq.heappush(self._heap, hold)
        return hold

    def try_hold_gang(self, machines: list[int], demands: list, until: list[float], owners: list, *,
                      queue=None) -> list[Hold] | None:
        """:meth:`try_hold` of visible holds, one per owner (``owners[i]`` holds ``demands[i]`` on ``machines[i]``
        until ``until[i]``), all or none: the holds, or None (nothing held) if the gang does not fit together.

        The same holds, made in the same order (the same ``seq``, the same heap), and the same rows and totals as
        holding them one by one; but the rows, totals, queue use and kept lists are written once per machine
        (a capacity scheduler's gang of hundreds of containers lands on a few machines: Lab 05's admissions)."""
        d0 = demands[0]
        if demands.count(d0) == len(demands):  # a job's tasks ask alike: whole units times counts
            take = {m: [c * d for d in d0] for m, c in Counter(machines).items()}
        else:
            take = {}
            for m, demand in zip(machines, demands):
                row = take.get(m)
                take[m] = list(demand) if row is None else [a + d for a, d in zip(row, demand)]
        cap, alloc, live = self._cap, self._alloc, self._live
        for m, amount in take.items():
            for r, d in enumerate(amount):
                if alloc[m, r] + d > cap[m, r]:
                    return None
        if len(set(owners)) != len(owners) or not live.keys().isdisjoint(owners):
            held = next((o for o in owners if o in live), None)
            raise ValueError(f"{held!r} already holds {live.get(held)}, or an owner is listed twice: release it first")
        total = self._allocated_total
        summed = [0] * self._n_res
        for m, amount in take.items():
            for r, d in enumerate(amount):
                alloc[m, r] += d
                summed[r] += d
        for r, d in enumerate(summed):
            total[r] += d
        if queue is not None:
            self._charge(queue, summed)
        if self._fit:
            for m in take:
                self._refit(m)
        seq, push, heap, new = self._seq, heapq.heappush, self._heap, float.__new__
        holds = []
        for owner, m, demand, finish in zip(owners, machines, demands, until):
            hold = new(Hold, finish)  # Hold(owner, m, demand, finish, True, queue, seq), its fields set here
            hold.owner, hold.machine, hold.demand, hold.finish = owner, m, demand, finish
            hold.visible, hold.queue, hold.seq, hold.live = True, queue, seq, True
            seq += 1
            live[owner] = hold
            push(heap, hold)
            holds.append(hold)
        self._seq = seq
        return holds

    def hold(self, machine: int, demand, until: float, owner, *, visible: bool = True, queue=None) -> Hold:
        """:meth:`try_hold`, raising ``ValueError`` if the demand is not whole numbers or does not fit."""
        demand = whole_numbers(demand, "demand")
        hold = self.try_hold(machine, demand, until, owner, visible=visible, queue=queue)
        if hold is None:
            room = self.free[machine] if visible else self.truly_free[machine]
            raise ValueError(f"demand {tuple(demand)} does not fit on machine {machine}: free {room.tolist()}")
        return hold

    def held_by(self, owner) -> Hold | None:
        return self._live.get(owner)

    def release_hold(self, owner) -> Hold:
        """Release ``owner``'s hold now (a kill, an eviction, a migration); return it."""
        hold = self._live.pop(owner, None)
        if hold is None:
            raise ValueError(f"{owner!r} holds nothing in the ledger")
        hold.live = False  # its heap entry is skipped when it comes due
        self._give_back(hold)
        return hold

    def _give_back(self, hold: Hold) -> None:
        rows = self._alloc if hold.visible else self._hid
        m = hold.machine
        negative = False
        total = self._released_total
        for r, d in enumerate(hold.demand):  # _add and _flow in one loop: this runs at every release
            left = rows[m, r] - d
            rows[m, r] = left
            negative |= left < 0
            total[r] += d
        if hold.queue is not None:
            row = self._queue_rows[hold.queue]
            for r, d in enumerate(hold.demand):  # as in try_hold
                row[r] -= d
            self.queues_changed.add(hold.queue)
        if self._fit:
            self._refit(m)
        if negative:
            row = (self.allocated if hold.visible else self.hidden)[m]
            raise AssertionError(f"machine {m} released more than it held: {row.tolist()}")

    def next_release_time(self) -> float:
        """When the next hold comes due: a lower bound, as an entry released early (killed,
        evicted) stays in the heap until its time; :meth:`pop_due` skips it then."""
        return float(self._heap[0]) if self._heap else float("inf")

    def pop_due(self, t: float):
        """Release every hold due by ``t``, in finish order, and yield each (the caller updates its
        owner's state: the ledger only keeps the numbers)."""
        heap, live = self._heap, self._live
        while heap and heap[0] <= t:
            hold = heapq.heappop(heap)
            if heap and heap[0] == hold:  # several due at this very time: the first made goes first
                ties = [hold]
                while heap and heap[0] == hold:
                    ties.append(heapq.heappop(heap))
                ties.sort(key=_made)
            else:
                ties = (hold,)
            for hold in ties:
                if not hold.live:
                    continue  # released early (killed, evicted, migrated)
                hold.live = False
                del live[hold.owner]
                if hold.visible and hold.queue is not None and len(hold.demand) == 2:
                    # _give_back spelt out for the capacity scheduler's common hold (visible, charged to a queue,
                    # CPU and memory): it runs at every completion
                    rows, m, (d0, d1), total = self._alloc, hold.machine, hold.demand, self._released_total
                    left0, left1 = rows[m, 0] - d0, rows[m, 1] - d1
                    rows[m, 0], rows[m, 1] = left0, left1
                    total[0] += d0
                    total[1] += d1
                    row = self._queue_rows[hold.queue]
                    row[0] -= d0
                    row[1] -= d1
                    self.queues_changed.add(hold.queue)
                    if self._fit:
                        self._stale.add(m)
                    if left0 < 0 or left1 < 0:
                        raise AssertionError(f"machine {m} released more than it held: {self.allocated[m].tolist()}")
                else:
                    self._give_back(hold)
                yield hold

    def holds(self) -> list[Hold]:
        """The live holds (not yet released)."""
        return list(self._live.values())

    def check(self) -> None:
        """Raise ``AssertionError`` naming the broken rule."""
        over = np.argwhere(self.allocated > self.capacity)
        if len(over):
            m = int(over[0][0])
            raise AssertionError(
                f"machine {m} over capacity: allocated {self.allocated[m].tolist()} > capacity {self.capacity[m].tolist()}"
            )
        both = np.argwhere(self.allocated + self.hidden > self.capacity)
        if len(both):
            m = int(both[0][0])
            raise AssertionError(
                f"machine {m} over capacity: visible {self.allocated[m].tolist()} + hidden {self.hidden[m].tolist()} "
                f"> capacity {self.capacity[m].tolist()}"
            )
        neg = np.argwhere((self.allocated < 0) | (self.hidden < 0))
        if len(neg):
            m = int(neg[0][0])
            raise AssertionError(f"machine {m} has negative allocation {self.allocated[m].tolist()} / "
                                 f"{self.hidden[m].tolist()}")
        outstanding = self.allocated_total - self.released_total
        held = self.allocated.sum(axis=0) + self.hidden.sum(axis=0)
        if not np.array_equal(outstanding, held):
            raise AssertionError(
                f"released != allocated: allocated {self.allocated_total.tolist()} - released "
                f"{self.released_total.tolist()} = {outstanding.tolist()}, but machines hold {held.tolist()}"
            )
        for queue, used in self.queue_used.items():
            if (used < 0).any():
                raise AssertionError(f"queue {queue!r} holds a negative amount {used.tolist()}")
        if self._stale:
            self._follow()
        self._fit.check(self.truly_free, "the ledger")
