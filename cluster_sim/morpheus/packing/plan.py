"""The reservation plan (§6.1-§6.3): reserved load per step over one LCM cycle, and where jobs go.

The plan covers ``horizon`` steps (one day of one-minute steps by default: the paper sets the LCM
to one day because most periods divide a day, Fig. 1b) and is cyclic: the step after the last is
the first again, as the repeating unit of Fig. 6. It keeps two layers, one row per resource:

* ``load``: the **production** reservations - periodic jobs (one offset for every instance),
  periodic jobs whose period does not divide the horizon ("off-kilter", or longer than it), which
  get a separate non-periodic reservation per instance, and reprovisioning grants (§7);
* ``adhoc_load``: **ad hoc** jobs, planned with the same LowCost in the residual capacity
  ``capacity - load``. Production has strict priority: placing a production job ignores the ad
  hoc layer, then ad hoc jobs left without room are re-planned, and dropped if that fails
  (§6.3 "Non-periodic jobs").

The cost of a step is ``c(t) = max_r load(r, t) / capacity(r, t)``; for ad hoc jobs the same with
the ad hoc load over the residual capacity.

Placing is incremental: it never moves a production reservation already in the plan. A job that
does not fit gets ``None`` from :meth:`ReservationPlan.place`, the reason is in
:attr:`ReservationPlan.last_refusal` (a :class:`~cluster_sim.morpheus.packing.jobs.Refusal`) and the
plan is unchanged; :meth:`ReservationPlan.propose` returns the allocation or the refusal without
placing anything.

Example (a daily and an hourly job on a one-resource plan of 10 containers)
----------------------------------------------------------------------------
>>> daily = PeriodicJob(period=1440, a=0, d=120, demands=[6] * 30)
>>> hourly = PeriodicJob(period=60, a=0, d=60, demands=[4] * 20)
>>> plan, rigid = ReservationPlan(capacity=10), ReservationPlan(capacity=10)
>>> for job in (daily, hourly):
...     a, b = plan.place(job), rigid.place(job, method="greedy")
>>> len(a.starts), len({s % 60 for s in a.starts})    # the hourly job: 24 instances, one offset
(24, 1)
>>> round(plan.peak(), 2), round(rigid.peak(), 2)     # LowCost spreads, earliest-first stacks
(0.3, 1.0)
>>> plan.place(PeriodicJob(period=60, a=0, d=10, demands=[10] * 10)) is None
True
>>> print(plan.last_refusal)
no end point in the 10-step window fits: stage 9 finds no room in its interval even where the most stages fit
"""

from __future__ import annotations

import numpy as np

from ... import validate
from .jobs import AdHocJob, Allocation, PeriodicJob, Refusal
from .lowcost import MAX_END_POINTS, _max_fit, _max_fit_step, check_allocation, greedy_window, lowcost_window
from .stages import _ratio

__all__ = ["ReservationPlan", "METHODS"]

METHODS = ("lowcost", "greedy")
_NAMES = {1: ("containers",), 2: ("memory", "cores")}


class ReservationPlan:
    """Reserved containers per step, per resource, over a cyclic LCM horizon.

    ``capacity`` is a number (one resource, "containers"), one number per resource (e.g.
    ``(memory, cores)``), or a (resources, horizon) array when capacity varies over time.
    ``horizon`` is in steps of ``step_seconds``. ``max_end_points`` is LowCost's end-point budget
    per job (see :func:`~cluster_sim.morpheus.packing.lowcost.end_points`).
    """

    def __init__(self, capacity, horizon: int = 1440, *, step_seconds: float = 60.0, resources=None,
                 max_end_points: int | None = MAX_END_POINTS):
        self.horizon = validate.whole_number(horizon, "horizon", lo=1)
        if not np.isfinite(step_seconds) or step_seconds <= 0:
            raise ValueError(f"step_seconds={step_seconds!r} is out of range: need step_seconds > 0")
        self.step_seconds = float(step_seconds)
        cap = np.asarray(capacity, dtype=float)
        if cap.ndim == 0:
            cap = cap[None]
        if cap.ndim == 1:
            cap = np.repeat(cap[:, None], self.horizon, axis=1)
        if cap.ndim != 2 or cap.shape[1] != self.horizon or cap.shape[0] == 0:
            raise ValueError(
                f"capacity of shape {np.shape(capacity)} is not allowed: need a number, one per resource, "
                f"or (resources, horizon={self.horizon})"
            )
        if not np.all(np.isfinite(cap)) or np.any(cap < 0) or not np.any(cap > 0):
            raise ValueError(f"capacity={capacity!r} is not allowed: need finite values >= 0, some > 0")
        self.capacity = cap
        R = cap.shape[0]
        names = tuple(resources) if resources is not None else _NAMES.get(R, tuple(f"r{i}" for i in range(R)))
        if len(names) != R:
            raise ValueError(f"resources={resources!r} must name the {R} resources of capacity")
        self.resources = names
        self.max_end_points = max_end_points
        self._constant = bool(np.all(cap == cap[:, :1]))
        self.load = np.zeros_like(cap)          # production reservations
        self.adhoc_load = np.zeros_like(cap)    # ad hoc reservations, inside the residual
        self.allocations: dict[int, Allocation] = {}
        self.adhoc: dict[int, Allocation] = {}
        self.grants: dict[int, tuple[int, np.ndarray, int, np.ndarray]] = {}
        self.dropped_adhoc: list[tuple[Allocation, Refusal]] = []
        self.last_refusal: Refusal | None = None
        self._next_id = 0

    # ---- read-outs -----------------------------------------------------------------------------------
    def cost(self, layer: str = "production") -> np.ndarray:
        """``c(t)`` per step: ``"production"`` (reservations over capacity), ``"adhoc"`` (ad hoc over
        the residual) or ``"total"`` (both over capacity)."""
        if layer == "production":
            num, cap = self.load, self.capacity
        elif layer == "adhoc":
            num, cap = self.adhoc_load, self.residual()
        elif layer == "total":
            num, cap = self.load + self.adhoc_load, self.capacity
        else:
            raise ValueError(f"layer={layer!r} is not allowed: choose 'production', 'adhoc' or 'total'")
        return np.max(_ratio(num, cap), axis=0)

    def peak(self, layer: str = "production") -> float:
        """The plan's maximal height ``max_t c(t)``, LowCost's objective."""
        return float(np.max(self.cost(layer)))

    def residual(self) -> np.ndarray:
        """Capacity left by the production reservations, (resources, horizon)."""
        return self.capacity - self.load

    def heatmap(self, period: int = 60, layer: str = "production") -> np.ndarray:
        """``c(t)`` folded into rows of ``period`` steps (e.g. hours x minutes) for an image plot."""
        period = validate.whole_number(period, "period", lo=1)
        if self.horizon % period:
            raise ValueError(f"period={period} does not divide horizon={self.horizon}")
        return self.cost(layer).reshape(self.horizon // period, period)

    def containers(self, job_id: int) -> np.ndarray:
        """Containers reserved for a job at every step (its queue's capacity), grants included."""
        if job_id in self.allocations:
            out = self.allocations[job_id].containers(self.horizon)
        elif job_id in self.adhoc:
            out = self.adhoc[job_id].containers(self.horizon)
        else:
            raise KeyError(f"job_id={job_id} is not in the plan")
        for jid, steps, n, _ in self.grants.values():
            if jid == job_id:
                out[steps] += n
        return out

    def room(self, steps, container=None) -> int:
        """How many containers of this size fit in the production layer at every one of ``steps``."""
        steps = np.asarray(steps, dtype=np.int64) % self.horizon
        z = self._container(container)
        if steps.size == 0:
            raise ValueError("steps is empty: need at least one step")
        if steps.size * z.size <= 8:  # DRA's grant: a step or two, one at a time in Python floats (the same answer)
            zs = z.tolist()
            fit = min(_max_fit_step(self.load[:, s].tolist(), self.capacity[:, s].tolist(), zs) for s in steps.tolist())
            return max(fit, 0)
        return int(max(_max_fit(self.load[:, steps], self.capacity[:, steps], z).min(), 0))

    # ---- placing ------------------------------------------------------------------------------------
    def propose(self, job, method: str = "lowcost") -> Allocation | Refusal:
        """Where ``job`` would go (an :class:`Allocation`) or why it cannot (a :class:`Refusal`);
        the plan is not changed.

        ``method`` is ``"lowcost"``, ``"greedy"`` or a solver ``f(load, capacity, container, job)``
        returning a :class:`~cluster_sim.morpheus.packing.lowcost.WindowResult` for the job's (folded) window,
        e.g. :func:`~cluster_sim.morpheus.packing.lowcost.lowcost_reference` with a student's building blocks.
        """
        if not callable(method) and method not in METHODS:
            raise ValueError(f"method={method!r} is not allowed: choose one of {', '.join(map(repr, METHODS))} "
                             f"or pass a solver function")
        if isinstance(job, AdHocJob):
            return self._propose_adhoc(job, method, self.adhoc_load, self.residual())
        if not isinstance(job, PeriodicJob):
            raise ValueError(f"job={job!r} is not allowed: need a PeriodicJob or an AdHocJob")
        z = self._container(job.container)
        H, P = self.horizon, job.period
        if job.window > H:
            raise ValueError(f"the window d - a = {job.window} is longer than horizon={H}: need d - a <= horizon")
        if H % P == 0:
            return self._propose_periodic(job, method, z)
        # off-kilter or longer than the LCM: one non-periodic reservation per instance in this cycle
        load = self.load.copy()
        starts, blocks, bounds, costs = [], [], [], []
        for i in range(-(-H // P)):
            steps = (i * P + job.a + np.arange(job.window)) % H
            res = self._solve(job, method, load[:, steps], self.capacity[:, steps], z)
            if res.x is None:
                return Refusal(job, f"instance {i} (of the off-kilter period {P}): {res.reason}", res.stage, i)
            block, left = res.x[res.left:res.right + 1], res.left
            load[:, steps[left:left + block.size]] += z[:, None] * block
            starts.append(i * P + job.a + left)
            blocks.append(_frozen(block))
            bounds.append(_frozen(res.bounds()))
            costs.append(res.key[0])
        return Allocation(job, tuple(starts), tuple(blocks), tuple(bounds), periodic=False, method=_name(method),
                          cost=max(costs))

    def place(self, job, method: str = "lowcost") -> Allocation | None:
        """Place ``job`` (LowCost by default, ``"greedy"`` for the earliest-first comparator).

        Returns its :class:`Allocation`, or None when it does not fit; then :attr:`last_refusal` says
        why and the plan is unchanged. Never moves a production reservation already placed.
        """
        found = self.propose(job, method)
        if isinstance(found, Refusal):
            self.last_refusal = found
            return None
        self.last_refusal = None
        found.job_id = self._next_id
        self._next_id += 1
        if isinstance(job, AdHocJob):
            self._add(self.adhoc_load, found, +1)
            self.adhoc[found.job_id] = found
        else:
            self._add(self.load, found, +1)
            self.allocations[found.job_id] = found
            self._replan_adhoc()
        return found

    def remove(self, job_id: int) -> Allocation:
        """Take a job's reservation out of the plan (e.g. when its contract changes) and return it."""
        if job_id in self.allocations:
            alloc = self.allocations.pop(job_id)
            self._add(self.load, alloc, -1)
        elif job_id in self.adhoc:
            alloc = self.adhoc.pop(job_id)
            self._add(self.adhoc_load, alloc, -1)
        else:
            raise KeyError(f"job_id={job_id} is not in the plan")
        return alloc

    # ---- reprovisioning grants (§7) -------------------------------------------------------------------
    def add_grant(self, job_id: int, steps, containers: int, container=None) -> int:
        """Reserve ``containers`` more for a job at ``steps`` of this cycle (a DRA grant); its id.

        Raises ``ValueError`` when they do not fit (see :meth:`room`); ad hoc jobs that lose their
        room are re-planned, as for any production reservation.
        """
        containers = validate.whole_number(containers, "containers", lo=1)
        steps = np.unique(np.asarray(steps, dtype=np.int64) % self.horizon)
        z = self._container(container)
        have = self.room(steps, z)
        if containers > have:
            raise ValueError(f"containers={containers} does not fit: the plan has room for {have} at those steps")
        return self._add_grant(job_id, steps, containers, z)

    def _add_grant(self, job_id: int, steps: np.ndarray, containers: int, z: np.ndarray) -> int:
        """:meth:`add_grant` once checked: ``steps`` unique plan steps, ``z`` the container (an array), and
        ``containers`` known to fit (DRA's rule grants at most the room it read)."""
        _add_at(self.load, steps, z, containers)
        gid = self._next_id
        self._next_id += 1
        self.grants[gid] = (job_id, steps, containers, z)
        self._replan_adhoc()
        return gid

    def remove_grant(self, grant_id: int) -> None:
        """End a grant (its T seconds are over)."""
        _, steps, n, z = self.grants.pop(grant_id)
        _add_at(self.load, steps, z, -n)

    # ---- checks and copies --------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ``AssertionError`` unless the layers equal their allocations and fit their capacity."""
        prod = np.zeros_like(self.load)
        for a in self.allocations.values():
            check_allocation(a, self.horizon)
            self._add(prod, a, +1)
        for _, steps, n, z in self.grants.values():
            prod[:, steps] += z[:, None] * n
        ad = np.zeros_like(self.load)
        for a in self.adhoc.values():
            check_allocation(a)
            self._add(ad, a, +1)
        assert np.allclose(prod, self.load), "the production load differs from the sum of its reservations"
        assert np.allclose(ad, self.adhoc_load), "the ad hoc load differs from the sum of its reservations"
        assert np.all(self.load <= self.capacity), "a production reservation exceeds capacity"
        assert np.all(self.adhoc_load <= self.capacity - self.load), "an ad hoc reservation exceeds the residual"

    def copy(self) -> "ReservationPlan":
        new = ReservationPlan.__new__(ReservationPlan)
        new.__dict__.update(self.__dict__)
        new.capacity = self.capacity.copy()
        new.load, new.adhoc_load = self.load.copy(), self.adhoc_load.copy()
        new.allocations, new.adhoc = dict(self.allocations), dict(self.adhoc)
        new.grants, new.dropped_adhoc = dict(self.grants), list(self.dropped_adhoc)
        return new

    # ---- internals ----------------------------------------------------------------------------------
    def _container(self, container) -> np.ndarray:
        R = self.capacity.shape[0]
        if container is None:
            return np.ones(R)
        z = np.atleast_1d(np.asarray(container, dtype=float))
        if z.shape != (R,):
            raise ValueError(f"container={container!r} must give one size per resource {self.resources}")
        if not np.all(np.isfinite(z)) or np.any(z < 0) or not np.any(z > 0):
            raise ValueError(f"container={container!r} is not allowed: need finite sizes >= 0, some > 0")
        return z

    def _solve(self, job, method, L, C, z):
        if callable(method):
            return method(L, C, z, job)
        if method == "greedy":
            return greedy_window(L, C, z, job.demands, job.gangs)
        return lowcost_window(L, C, z, job.demands, job.gangs, job.alignment, max_end_points=self.max_end_points)

    def _propose_periodic(self, job: PeriodicJob, method: str, z: np.ndarray) -> Allocation | Refusal:
        H, P, R = self.horizon, job.period, self.capacity.shape[0]
        n = H // P
        off = (job.a + np.arange(job.window)) % P
        # §6.3: the cost an instance sees at offset o is the max over every instance's step o + iP;
        # with time-varying capacity each (resource, instance) pair is a line of its own
        Lp = self.load.reshape(R, n, P)[:, :, off]
        Cp = self.capacity.reshape(R, n, P)[:, :, off]
        if self._constant:
            L, C, zl = Lp.max(axis=1), Cp[:, 0, :], z
        else:
            L, C, zl = Lp.reshape(R * n, -1), Cp.reshape(R * n, -1), np.repeat(z, n)
        res = self._solve(job, method, L, C, zl)
        if res.x is None:
            return Refusal(job, res.reason, res.stage)
        block = _frozen(res.x[res.left:res.right + 1])
        bounds = _frozen(res.bounds())
        start = job.a + res.left
        return Allocation(job, tuple(start + i * P for i in range(n)), (block,) * n, (bounds,) * n,
                          periodic=True, method=_name(method), cost=res.key[0])

    def _propose_adhoc(self, job: AdHocJob, method: str, layer: np.ndarray, cap: np.ndarray):
        z = self._container(job.container)
        H = self.horizon
        if job.window > H:
            raise ValueError(f"the window d - a = {job.window} is longer than horizon={H}: need d - a <= horizon")
        steps = (job.a + np.arange(job.window)) % H
        res = self._solve(job, method, layer[:, steps], np.maximum(cap[:, steps], 0.0), z)
        if res.x is None:
            return Refusal(job, res.reason, res.stage)
        return Allocation(job, (job.a + res.left,), (_frozen(res.x[res.left:res.right + 1]),),
                          (_frozen(res.bounds()),), periodic=False, method=_name(method), cost=res.key[0])

    def _add(self, layer: np.ndarray, alloc: Allocation, sign: int) -> None:
        z = self._container(alloc.job.container)
        for s, b in zip(alloc.starts, alloc.blocks):
            steps = (s + np.arange(b.size)) % self.horizon
            layer[:, steps] += sign * z[:, None] * b

    def _replan_adhoc(self) -> None:
        """Strict priority: ad hoc jobs whose room a production change took are planned again."""
        if not self.adhoc:  # nothing to re-plan (Lab 03's cycles plan no ad hoc job): the test below is not made
            return
        over = np.any(self.adhoc_load > self.capacity - self.load, axis=0)
        if not over.any():
            return
        hit = {jid: a for jid, a in self.adhoc.items() if np.any(over[a.containers(self.horizon) > 0])}
        for jid, old in hit.items():
            del self.adhoc[jid]
            self._add(self.adhoc_load, old, -1)
        for jid, old in hit.items():  # in their original order; each keeps its id
            method = old.method if old.method in METHODS else "lowcost"
            found = self._propose_adhoc(old.job, method, self.adhoc_load, self.residual())
            if isinstance(found, Refusal):
                self.dropped_adhoc.append((old, found))
                continue
            found.job_id = jid
            self._add(self.adhoc_load, found, +1)
            self.adhoc[jid] = found
        self.adhoc = dict(sorted(self.adhoc.items()))


def _add_at(load: np.ndarray, steps: np.ndarray, z: np.ndarray, n: int) -> None:
    """``load[:, steps] += z[:, None] * n`` for unique ``steps``: element by element for a grant of a step or two (the
    same float product and sum at each element; numpy's fancy indexing cost most of a DRA grant), by numpy above."""
    if steps.size * z.size > 8:
        load[:, steps] += z[:, None] * n
        return
    for r, zr in enumerate(z.tolist()):
        add = zr * n  # the product numpy makes, a float (n a whole number)
        row = load[r]
        for s in steps.tolist():
            row[s] += add


def _name(method) -> str:
    return method if isinstance(method, str) else getattr(method, "__name__", "custom")


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.int64)
    a.flags.writeable = False
    return a
