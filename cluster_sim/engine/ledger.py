"""The resource ledger: the one source of truth for per-machine capacity and allocation.

Pure numpy, no Mesa. The central state view owns one ``ResourceLedger``; machines, local views and
metrics read it or snapshots of it. Running tasks are kept in a heap by finish time so that due
completions can be settled in bulk whenever the model advances (one Mesa event per completion would
cap the engine at Mesa's event rate).

Example
-------
>>> import numpy as np
>>> ledger = ResourceLedger(np.array([[4, 8], [2, 2]]))
>>> ledger.fits(1, (2, 2)), ledger.fits(1, (3, 1))
(True, False)
>>> ledger.allocate(0, (3, 4)); ledger.free[0].tolist()
[1, 4]
"""

from __future__ import annotations

import heapq

import numpy as np


class ResourceLedger:
    """Per-machine integer capacity and allocation, with a heap of running holds."""

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
        self.allocated = np.zeros_like(self.capacity)
        # Cumulative flows, for the invariant "released equals allocated" (minus what still runs).
        self.allocated_total = np.zeros(self.capacity.shape[1], dtype=np.int64)
        self.released_total = np.zeros(self.capacity.shape[1], dtype=np.int64)
        self._holds: list = []  # (finish, seq, machine, demand, owner)
        self._seq = 0

    @property
    def n_machines(self) -> int:
        return self.capacity.shape[0]

    @property
    def free(self) -> np.ndarray:
        """A new array of free units per machine (capacity - allocation)."""
        return self.capacity - self.allocated

    def fits(self, machine: int, demand) -> bool:
        row_a, row_c = self.allocated[machine], self.capacity[machine]
        return all(a + d <= c for a, d, c in zip(row_a.tolist(), demand, row_c.tolist()))

    def allocate(self, machine: int, demand) -> None:
        if not self.fits(machine, demand):
            raise ValueError(
                f"demand {tuple(demand)} does not fit on machine {machine}: "
                f"free {self.free[machine].tolist()}"
            )
        self.allocated[machine] += demand
        self.allocated_total += demand

    def release(self, machine: int, demand) -> None:
        self.allocated[machine] -= demand
        self.released_total += demand
        if (self.allocated[machine] < 0).any():
            raise AssertionError(f"machine {machine} released more than it held: {self.allocated[machine].tolist()}")

    # ---- holds released at a known time ---------------------------------------------------------
    def hold(self, machine: int, demand, until: float, owner) -> None:
        """Allocate now and remember to release at ``until`` (settled by :meth:`pop_due`)."""
        self.allocate(machine, demand)
        heapq.heappush(self._holds, (until, self._seq, machine, demand, owner))
        self._seq += 1

    def try_hold(self, machine: int, demand, until: float, owner) -> bool:
        """:meth:`hold` if the demand fits, else False: a commit's single check."""
        if not self.fits(machine, demand):
            return False
        self.allocated[machine] += demand
        self.allocated_total += demand
        heapq.heappush(self._holds, (until, self._seq, machine, demand, owner))
        self._seq += 1
        return True

    def next_release_time(self) -> float:
        return self._holds[0][0] if self._holds else float("inf")

    def pop_due(self, t: float):
        """Yield ``(finish, machine, demand, owner)`` of holds due by ``t``, in finish order.

        The caller releases them (owners killed early were already released, so the caller skips
        them): the ledger only orders them.
        """
        holds = self._holds
        while holds and holds[0][0] <= t:
            finish, _, machine, demand, owner = heapq.heappop(holds)
            yield finish, machine, demand, owner

    def holds(self):
        """The holds not yet popped: ``(finish, machine, demand, owner)``."""
        return [(f, m, d, o) for f, _, m, d, o in self._holds]

    def check(self) -> None:
        """Raise ``AssertionError`` naming the broken rule."""
        over = np.argwhere(self.allocated > self.capacity)
        if len(over):
            m = int(over[0][0])
            raise AssertionError(
                f"machine {m} over capacity: allocated {self.allocated[m].tolist()} > capacity {self.capacity[m].tolist()}"
            )
        neg = np.argwhere(self.allocated < 0)
        if len(neg):
            m = int(neg[0][0])
            raise AssertionError(f"machine {m} has negative allocation {self.allocated[m].tolist()}")
        outstanding = self.allocated_total - self.released_total
        if not np.array_equal(outstanding, self.allocated.sum(axis=0)):
            raise AssertionError(
                f"released != allocated: allocated {self.allocated_total.tolist()} - released "
                f"{self.released_total.tolist()} = {outstanding.tolist()}, but machines hold {self.allocated.sum(axis=0).tolist()}"
            )
