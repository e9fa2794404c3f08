"""Dynamic reprovisioning (DRA, §7 of Morpheus): the pure rule the ``Reprovisioner`` agent calls.

When a job's demand (containers used plus pending) exceeds what its skyline reserves now, DRA
grants extra containers for ``T`` seconds (60 by default), after which it is evaluated again. The
grant follows the instantaneous shortfall, but is capped at ``rho * max(R_recent)`` where
``R_recent`` is the skyline over the last few minutes (120 s by default) and ``rho`` a fudge factor
(2 by default) that lets an elastic job use extra parallelism to catch up; it is never more than
the job asks for, and it is accepted only if the reservation plan has room for it over the whole
``T`` seconds.

Readings where the paper is terse (ours, stated once):

* the cap bounds the *extra* containers, as the paper words it ("the amount of extra resources
  ... capped at rho * max(R_recent)"), not the job's total;
* ``R_recent`` is the job's own reservation (its skyline in the plan, without earlier grants, so
  grants never compound), over the steps that overlap ``[now - recent_seconds, now]``; "reserved
  now" does include a grant still running, so a job is not granted twice for one shortfall;
* with ``recent_counts_grants=True`` (the other reading, shown beside ours) ``R_recent`` also counts the
  containers granted over those steps, so a job whose reservation has ended can be stretched again and
  again from its own grants; ours refuses it once the look-back holds no reservation ("no recent skyline");
* "accepted only if enough resources exist in the plan" is all-or-nothing by default; with
  ``partial=True`` the rule grants what the plan holds instead.

Example
-------
>>> rule = ReprovisionRule()                 # rho = 2, T = 60 s, last 120 s
>>> rule.decide(demand=30, reserved_now=10, recent=[8, 10, 10], room=100)
Grant(containers=20, asked=20, cap=20, room=100, reason='granted')
>>> rule.decide(demand=50, reserved_now=10, recent=[8, 10, 10], room=100).containers   # capped
20
>>> rule.decide(demand=30, reserved_now=10, recent=[8, 10, 10], room=5).reason
'no room in the plan'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import validate
from .lowcost import _max_fit_step

__all__ = ["Grant", "ReprovisionRule", "reprovision"]


@dataclass(frozen=True)
class Grant:
    """One DRA decision: ``containers`` granted (0 for none) and the numbers that bound it."""

    containers: int
    asked: int      # demand above the reservation now
    cap: int        # floor(rho * max(recent skyline))
    room: int       # containers the plan holds over the hold window
    reason: str


@dataclass(frozen=True)
class ReprovisionRule:
    """DRA's parameters: ``rho`` (the cap's fudge factor), ``hold_seconds`` (T), ``recent_seconds``
    (the look-back of ``R_recent``), ``partial`` (grant what fits instead of nothing) and
    ``recent_counts_grants`` (``R_recent`` counts earlier grants too: the other reading)."""

    rho: float = 2.0
    hold_seconds: float = 60.0
    recent_seconds: float = 120.0
    partial: bool = False
    recent_counts_grants: bool = False

    def __post_init__(self):
        validate.number(self.rho, "rho", lo=0, lo_open=True)
        validate.number(self.hold_seconds, "hold_seconds", lo=0, lo_open=True)
        validate.number(self.recent_seconds, "recent_seconds", lo=0)
        if not isinstance(self.partial, bool):
            raise ValueError(f"partial={self.partial!r} is not allowed: need True or False")
        if not isinstance(self.recent_counts_grants, bool):
            raise ValueError(f"recent_counts_grants={self.recent_counts_grants!r} is not allowed: need True or False")

    def decide(self, demand, reserved_now, recent, room) -> Grant:
        """The grant for a job whose ``demand`` meets ``reserved_now`` containers of reservation,
        given its skyline ``recent`` over the look-back and the plan's ``room`` over the hold."""
        demand = validate.number(demand, "demand", lo=0)
        reserved_now = validate.number(reserved_now, "reserved_now", lo=0)
        room = validate.number(room, "room", lo=0)
        rec = np.atleast_1d(np.asarray(recent, dtype=float))
        if rec.ndim != 1 or rec.size == 0 or not np.all(np.isfinite(rec)) or np.any(rec < 0):
            raise ValueError(f"recent={recent!r} is not allowed: need a non-empty list of containers >= 0")
        return self._decide(demand, reserved_now, float(rec.max()), room)

    def _decide(self, demand, reserved_now, recent_max: float, room) -> Grant:
        """:meth:`decide` on arguments already known to be valid (the
        :class:`~cluster_sim.morpheus.packing.model.Reprovisioner`'s, read from its own model and plan):
        ``recent_max`` is the largest value of ``recent``."""
        asked = int(math.ceil(demand - reserved_now)) if demand > reserved_now else 0
        cap = int(math.floor(self.rho * recent_max + 1e-9))
        room_i = int(math.floor(room))
        if asked == 0:
            return Grant(0, 0, cap, room_i, "demand within the reservation")
        want = min(asked, cap)
        if want == 0:
            return Grant(0, asked, cap, room_i, "no recent skyline to scale")
        if want <= room_i:
            return Grant(want, asked, cap, room_i, "granted" if want == asked else "capped at rho * max(recent)")
        if self.partial and room_i > 0:
            return Grant(room_i, asked, cap, room_i, "partial: what the plan holds")
        return Grant(0, asked, cap, room_i, "no room in the plan")

    def hold_steps(self, now: float, step_seconds: float) -> np.ndarray:
        """Plan steps (not wrapped) overlapping ``[now, now + T)``."""
        return self._hold_steps(validate.number(now, "now", lo=0), step_seconds)

    def _hold_steps(self, now: float, step_seconds: float) -> np.ndarray:
        """:meth:`hold_steps` for a ``now`` known to be valid (the model's clock)."""
        first = int(math.floor(now / step_seconds))
        last = int(math.ceil((now + self.hold_seconds) / step_seconds)) - 1
        return np.arange(first, max(last, first) + 1)

    def recent_steps(self, now: float, step_seconds: float) -> np.ndarray:
        """Plan steps (not wrapped) overlapping ``[now - recent_seconds, now]``."""
        return self._recent_steps(validate.number(now, "now", lo=0), step_seconds)

    def _recent_steps(self, now: float, step_seconds: float) -> np.ndarray:
        """:meth:`recent_steps` for a ``now`` known to be valid (the model's clock)."""
        return np.arange(int(math.floor((now - self.recent_seconds) / step_seconds)),
                         int(math.floor(now / step_seconds)) + 1)


def reprovision(plan, job_id: int, now: float, demand, rule: ReprovisionRule = ReprovisionRule(), granted_recent=None,
                *, reserved_now=None, own_recent=None, skyline=None):
    """Apply DRA to one job of a :class:`~cluster_sim.morpheus.packing.plan.ReservationPlan` at ``now`` s.

    Reads the job's reservation from the plan, decides with ``rule`` and, when something is
    granted, adds it to the plan for the hold window. Returns ``(grant, grant_id or None)``; the
    caller ends the grant with ``plan.remove_grant(grant_id)`` after T seconds. ``granted_recent``: the
    containers granted to the job at each step of ``rule.recent_steps(now)`` (the caller's record),
    added to ``R_recent`` when ``rule.recent_counts_grants``. With one reservation per run (Rayon's model)
    the plan's skyline of the job mixes its instances and their grants, so the caller passes the run's own:
    ``reserved_now`` (its reservation now, its live grant included) and ``own_recent`` (its reservation at
    each step of ``rule.recent_steps(now)``, 0 where it has none). ``skyline``: the job's reservation at every plan
    step (``plan.allocations[job_id].containers(plan.horizon)``, without grants) when the caller keeps it, as the
    :class:`~cluster_sim.morpheus.packing.model.Reprovisioner` does for a run: building it is most of a call's cost.

    >>> from cluster_sim.morpheus.packing.plan import ReservationPlan
    >>> from cluster_sim.morpheus.packing.jobs import PeriodicJob
    >>> plan = ReservationPlan(capacity=100, horizon=60)
    >>> job = plan.place(PeriodicJob(period=60, a=0, d=10, demands=[20] * 10))
    >>> grant, gid = reprovision(plan, job.job_id, now=300.0, demand=70)   # 5 minutes in
    >>> grant.containers, int(plan.containers(job.job_id)[5])
    (40, 60)
    """
    H, dt = plan.horizon, plan.step_seconds
    alloc = plan.allocations.get(job_id) or plan.adhoc.get(job_id)
    if alloc is None:
        raise KeyError(f"job_id={job_id} is not in the plan")
    if skyline is None:
        skyline = alloc.containers(H)
    elif np.shape(skyline) != (H,):
        raise ValueError(f"skyline has shape {np.shape(skyline)}, need one value per plan step ({H},)")
    now = validate.number(now, "now", lo=0)
    demand = validate.number(demand, "demand", lo=0)
    if reserved_now is not None:
        reserved_now = validate.number(reserved_now, "reserved_now", lo=0)
    steps = rule.recent_steps(now, dt)
    recent = skyline[steps % H] if own_recent is None else np.asarray(own_recent, dtype=float)
    if recent.shape != steps.shape:
        raise ValueError(f"own_recent has {recent.size} values, need one per recent step ({steps.size})")
    if rule.recent_counts_grants and granted_recent is not None:
        extra = np.asarray(granted_recent, dtype=float)
        if extra.shape != recent.shape:
            raise ValueError(f"granted_recent has {extra.size} values, need one per recent step ({recent.size})")
        recent = recent + extra
    if not np.all(np.isfinite(recent)) or np.any(recent < 0):
        raise ValueError(f"recent={recent.tolist()!r} is not allowed: need containers >= 0 at each recent step")
    return _reprovision(plan, job_id, now, demand, rule, granted_recent, reserved_now=reserved_now,
                        own_recent=own_recent, skyline=skyline)


def _reprovision(plan, job_id: int, now: float, demand: int, rule: ReprovisionRule, granted_recent, *,
                 reserved_now=None, own_recent=None, skyline, container=None):
    """:func:`reprovision`'s decision and grant on arguments known to be valid: the public function's, once checked,
    and the :class:`~cluster_sim.morpheus.packing.model.Reprovisioner`'s, which come from its own model and plan
    (``now >= 0``, ``demand`` and ``reserved_now`` whole containers, ``skyline`` the job's reservation at every plan
    step, ``own_recent`` and ``granted_recent`` one value per recent step), so a paper cycle's 22,790 calls are not
    validated again. The plan's room over the hold is read once (``plan.add_grant`` would read it again to check the
    grant fits; the rule never grants more than that room). A test runs whole cycles both ways
    (tests/morpheus/test_reprovision_fast.py). ``container``: the job's container as ``plan._container`` makes it,
    when the caller keeps it (read-only: the grants share it); the room over a hold of a step or two is read in
    Python floats as :meth:`ReservationPlan.room` reads it, without validating the container again."""
    H, dt = plan.horizon, plan.step_seconds
    alloc = plan.allocations.get(job_id) or plan.adhoc.get(job_id)
    cur = int(math.floor(now / dt)) % H
    first = int(math.floor(now / dt))  # rule.hold_steps(now, dt), without validating now again
    hold = np.arange(first, max(int(math.ceil((now + rule.hold_seconds) / dt)) - 1, first) + 1) % H
    steps = np.arange(int(math.floor((now - rule.recent_seconds) / dt)), first + 1)  # rule.recent_steps(now, dt)
    recent = skyline[steps % H] if own_recent is None else np.asarray(own_recent, dtype=float)
    if rule.recent_counts_grants and granted_recent is not None:
        recent = recent + np.asarray(granted_recent, dtype=float)
    z = plan._container(alloc.job.container) if container is None else container
    if reserved_now is None:
        reserved = int(skyline[cur]) + sum(n for jid, at, n, _ in plan.grants.values() if jid == job_id and cur in at)
    else:
        reserved = reserved_now
    if hold.size * z.size <= 8:  # plan.room's own path for a step or two (hold is already wrapped), in the same floats
        zs = z.tolist()
        room = max(min(_max_fit_step(plan.load[:, s].tolist(), plan.capacity[:, s].tolist(), zs)
                       for s in hold.tolist()), 0)
    else:
        room = plan.room(hold, z)
    grant = rule._decide(demand, reserved, float(recent.max()), room)
    if not grant.containers:
        return grant, None
    # np.unique(hold): the hold's plan steps, sorted, once each (a sorted set of a step or two, without numpy's sort)
    steps = np.array(sorted(set(hold.tolist())), dtype=hold.dtype)
    gid = plan._add_grant(job_id, steps, grant.containers, z)
    return grant, gid
