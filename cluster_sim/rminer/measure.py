"""Exact measurement of shadow resources: free in the CSV, yet allocated in the views.

Between two view updates every local state view (LSV) still shows as allocated what tasks have
released since the last update. On machine ``m`` the released-since-update amount ``R_m`` stays
invisible; CSV allocations made in the meantime consume the *visible* free resources first (the
views only ever place there), and only when they exceed them do they eat into ``R_m``. So the
shadow on ``m`` is ``min(R_m, F_m)`` with ``F_m`` the CSV's free amount, and the cluster's shadow
is ``S(t) = sum_m min(R_m(t), F_m(t))`` - a piecewise-constant quantity that changes only at
releases, CSV allocations and view updates. :class:`ShadowMeter` keeps it up to date in O(1) per
event (it recomputes one machine's term) and integrates it exactly over time.

Example
-------
>>> import numpy as np
>>> m = ShadowMeter(n_machines=2, n_resources=1)
>>> m.release(1.0, machine=0, amount=np.array([4]), free_after=np.array([4]))
>>> m.sync(1.5)                       # 4 units invisible for 0.5 s
>>> float(m.integral[0]), m.survival_mean()
(2.0, 0.5)
"""

from __future__ import annotations

import numpy as np


class ShadowMeter:
    """Time integral of ``S(t) = sum_m min(R_m, F_m)`` per resource, and fragment survival times.

    Feed it every CSV release (:meth:`release`), every CSV allocation (:meth:`allocate`) and every
    view update (:meth:`sync`), each with the machine's CSV free row *after* the change. Survival
    time of a released fragment = time from its release to the next view update (``L(r)`` of
    Algorithm 1), weighted by the released amount of resource 0.

    ``R_m`` and the terms are numpy arrays, read and written one entry at a time through memoryviews
    (Python ints) by :meth:`release` and :meth:`allocate`, and a batch at a time by :meth:`feed` (what a
    paper-scale run uses: 5 million events, fed one by one, were a fifth of its time).
    """

    def __init__(
        self,
        n_machines: int,
        n_resources: int = 1,
        t0: float = 0.0,
        survival_span: float = 1.0,
        survival_bins: int = 20,
    ):
        if n_machines < 1:
            raise ValueError(f"n_machines={n_machines!r} is not allowed: need >= 1")
        if n_resources < 1:
            raise ValueError(f"n_resources={n_resources!r} is not allowed: need >= 1")
        if not survival_span > 0:
            raise ValueError(f"survival_span={survival_span!r} is not allowed: need > 0 (the update delay)")
        self.n_resources = n_resources
        self._released_rows = np.zeros((n_machines, n_resources), dtype=np.int64)  # R_m since the last sync
        self._term_rows = np.zeros((n_machines, n_resources), dtype=np.int64)  # min(R_m, F_m)
        self._views()
        self._shadow = [0] * n_resources  # S(t), the sum of the terms
        self._integral = [0.0] * n_resources  # int_t0^t S dt
        self._peak = [0] * n_resources
        self.t0 = float(t0)
        self.last_t = float(t0)
        self._release_t: list[float] = []  # release times (survival times measured at sync)
        self._release_amt: list[int] = []
        self.survival_sum = 0.0  # sum of amount * survival
        self.survival_weight = 0  # sum of amount
        # survival times are kept as a histogram so paper-scale runs stay small in memory
        self.edges = np.linspace(0.0, float(survival_span), survival_bins + 1)
        self.survival_hist = np.zeros(survival_bins)

    def _views(self) -> None:
        # element views of the same arrays: an event touches one machine's few entries, read and written as
        # Python ints (about twice as fast as numpy's scalar indexing)
        self._released = memoryview(self._released_rows)
        self._term = memoryview(self._term_rows)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_released"], state["_term"]  # memoryviews do not pickle: made again from the arrays
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._views()

    # ---- read-only views ---------------------------------------------------------------------
    @property
    def shadow(self) -> np.ndarray:
        """The shadow amount now, per resource."""
        return np.array(self._shadow, dtype=np.int64)

    @property
    def integral(self) -> np.ndarray:
        """The integral of the shadow from ``t0`` to the last event, per resource."""
        return np.array(self._integral)

    @property
    def peak(self) -> np.ndarray:
        return np.array(self._peak, dtype=np.int64)

    @property
    def released(self) -> np.ndarray:
        return self._released_rows.copy()

    def shadow_of(self, r: int = 0) -> int:
        return self._shadow[r]

    def has_released(self, machine: int) -> bool:
        """Has ``machine`` released anything since the last sync (so allocations may eat shadow)?"""
        rel = self._released
        return any(rel[machine, r] for r in range(self.n_resources))

    # ---- events ---------------------------------------------------------------------------
    def advance(self, t: float) -> None:
        """Integrate ``S`` up to time ``t`` (events arrive in time order)."""
        dt = t - self.last_t
        if dt > 0:
            integ, sh = self._integral, self._shadow
            for r in range(self.n_resources):
                integ[r] += sh[r] * dt
            self.last_t = t
        elif dt < 0:
            raise ValueError(f"t={t!r} is before the last event at {self.last_t!r}: events must be in time order")

    def _refresh(self, machine: int, free_after) -> None:
        rel, term, sh, peak = self._released, self._term, self._shadow, self._peak
        for r, f in enumerate(free_after):
            released = rel[machine, r]
            new = released if released < f else int(f)
            old = term[machine, r]
            if new != old:
                sh[r] += new - old
                term[machine, r] = new
                if sh[r] > peak[r]:
                    peak[r] = sh[r]

    def release(self, t: float, machine: int, amount, free_after) -> None:
        """A task released ``amount`` on ``machine`` in the CSV; the views learn it at the next sync."""
        if t != self.last_t:
            self.advance(t)
        rel = self._released
        for r, a in enumerate(amount):
            rel[machine, r] += int(a)
        self._refresh(machine, free_after)
        self._release_t.append(t)
        self._release_amt.append(int(amount[0]))

    def allocate(self, t: float, machine: int, free_after) -> None:
        """A CSV allocation on ``machine`` (it may eat into the invisible released part)."""
        self.advance(t)
        if self.has_released(machine):
            self._refresh(machine, free_after)

    def feed(self, t, machine, amount, free_after, released) -> np.ndarray:
        """A batch of events at once, with exactly the state and the numbers that feeding them one by one
        would give: event ``i`` at time ``t[i]`` on ``machine[i]`` is a release of ``amount[i]`` if
        ``released[i]``, else a CSV allocation (its ``amount`` is not used); ``free_after[i]`` is the machine's
        CSV free row after it. Times are in order and ``free_after >= 0`` (a CSV's free amount).

        Why: a paper-scale run has 5 million such events, and feeding each through :meth:`release` or
        :meth:`allocate` was a fifth of the run. Per machine, ``R`` after each event is a running sum
        of its releases and the term ``min(R, F)`` follows (integers: exact); ``S`` is the running sum of the
        terms' changes; the integral adds ``S * dt`` event by event, in the same order
        (``np.add.accumulate`` is sequential), so every float is the one the per-event path computes.
        """
        t = np.asarray(t, dtype=np.float64)
        n = len(t)
        if n == 0:
            return np.zeros((0, self.n_resources), dtype=np.int64)
        machine = np.asarray(machine, dtype=np.intp)
        amount = np.asarray(amount, dtype=np.int64).reshape(n, self.n_resources)
        free_after = np.asarray(free_after, dtype=np.int64).reshape(n, self.n_resources)
        released = np.asarray(released, dtype=bool)
        if machine.shape != (n,) or released.shape != (n,):
            raise ValueError(f"feed needs one machine and one released flag per event: {n} times, machine "
                             f"{machine.shape}, released {released.shape}")
        if t[0] < self.last_t or (n > 1 and (np.diff(t) < 0).any()):
            raise ValueError(f"t={t.tolist()[:5]}... is not in time order after the last event at {self.last_t!r}")
        if (free_after < 0).any():
            raise ValueError("free_after must be >= 0 (a CSV's free amount): got a negative entry")
        gained = np.where(released[:, None], amount, 0)
        order = np.argsort(machine, kind="stable")  # the events machine by machine, each machine's in time order
        by_machine = machine[order]
        starts = np.ones(n, dtype=bool)  # each machine's first event in that order
        starts[1:] = by_machine[1:] != by_machine[:-1]
        group = np.cumsum(starts) - 1  # which machine's run each (sorted) event is in
        firsts = order[starts]  # each touched machine's first event
        touched = machine[firsts]
        # R after each event: R before the batch plus the machine's releases so far (running sums in sorted order)
        running = np.cumsum(gained[order], axis=0)
        r_after = np.empty_like(gained)
        r_after[order] = running - (running - gained[order])[starts][group] + self._released_rows[touched][group]
        term = np.minimum(r_after, free_after)
        # each term's change: against the machine's previous event's term, or its term before the batch
        term_sorted = term[order]
        previous = np.empty_like(term_sorted)
        previous[1:] = term_sorted[:-1]
        previous[starts] = self._term_rows[touched]
        change = np.empty_like(term)
        change[order] = term_sorted - previous
        shadow_before = np.array(self._shadow, dtype=np.int64)
        shadow = shadow_before + np.cumsum(change, axis=0)  # S after each event
        # the integral, interval by interval as advance() adds it: S before each event times the time since the last
        before = np.vstack([shadow_before[None, :], shadow[:-1]])
        dt = np.diff(t, prepend=self.last_t)
        steps = np.vstack([np.array(self._integral)[None, :], before * dt[:, None]])
        self._integral = np.add.accumulate(steps, axis=0)[-1].tolist()
        if t[-1] > self.last_t:
            self.last_t = float(t[-1])
        self._peak = np.maximum(np.array(self._peak, dtype=np.int64), shadow.max(axis=0)).tolist()
        self._shadow = shadow[-1].tolist()
        lasts = order[np.append(starts[1:], True)]  # each touched machine's last event
        self._released_rows[touched] = r_after[lasts]
        self._term_rows[touched] = term[lasts]
        self._release_t.extend(t[released].tolist())
        self._release_amt.extend(amount[released, 0].tolist())
        return shadow

    def sync(self, t: float) -> None:
        """A view update: every released resource becomes visible, the shadow drops to zero."""
        self.advance(t)
        self._released_rows[:] = 0
        self._term_rows[:] = 0
        self._shadow = [0] * self.n_resources
        if self._release_t:
            surv = t - np.asarray(self._release_t)
            w = np.asarray(self._release_amt, dtype=np.float64)
            self.survival_sum += float(surv @ w)
            self.survival_weight += int(w.sum())
            # each time's bin, [edge i, edge i+1) with the last one closed (np.histogram's rule), and the amounts
            # summed per bin: whole numbers, so exact in any order and equal to np.histogram's (test_measure), at a
            # fraction of its cost on the short logs of frequent view updates
            bins = len(self.edges) - 1
            idx = np.searchsorted(self.edges, np.clip(surv, 0.0, self.edges[-1]), side="right") - 1
            self.survival_hist += np.bincount(np.minimum(idx, bins - 1), weights=w, minlength=bins)
            self._release_t.clear()
            self._release_amt.clear()

    # ---- read-out -------------------------------------------------------------------------
    def time_average(self, t: float | None = None) -> np.ndarray:
        """Time-average shadow per resource over ``[t0, t]``."""
        if t is not None:
            self.advance(t)
        span = self.last_t - self.t0
        return self.integral / span if span > 0 else np.zeros(self.n_resources)

    def survival_mean(self) -> float:
        """Amount-weighted mean survival time of the fragments closed by a sync (nan if none)."""
        return self.survival_sum / self.survival_weight if self.survival_weight else float("nan")

    def survival_histogram(self) -> tuple[np.ndarray, np.ndarray]:
        """(edges, amount-weighted density) of the survival times on ``[0, survival_span]``."""
        total = self.survival_hist.sum()
        dens = self.survival_hist / (total * np.diff(self.edges)) if total > 0 else self.survival_hist
        return self.edges, dens


def cumsum_by(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` (n, R) within each group of ``group`` (n,), in the events' order.

    >>> cumsum_by(np.array([0, 1, 0]), np.array([[1], [5], [2]])).ravel().tolist()
    [1, 5, 3]
    """
    order = np.argsort(group, kind="stable")
    v = values[order]
    total = np.cumsum(v, axis=0)
    g = group[order]
    starts = np.ones(len(g), dtype=bool)
    starts[1:] = g[1:] != g[:-1]
    before_group = (total - v)[starts][np.cumsum(starts) - 1]  # the running total before each group began
    out = np.empty_like(total)
    out[order] = total - before_group
    return out

