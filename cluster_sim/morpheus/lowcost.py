"""LowCost (§6.3 of Morpheus, Jyothi et al., OSDI'16): periodic reservations packed stage by stage.

Vocabulary and units (the paper's, made concrete)
--------------------------------------------------
* Time is in **plan steps** (one minute by default, as the paper quantises skylines). A job's
  ``period``, start ``a`` and deadline ``d`` are whole steps; ``a`` and ``d`` are relative to the
  period start (``0 <= a < period``, ``a < d <= a + period``) and the window is ``[a, d)``: the last
  step a job may use is ``d - 1``.
* A **stage** is one step of the job's skyline R* (§5: "each stage k captures a timestep of the
  reservation"). Its **demand** ``s_k`` is a whole number of containers for one step, i.e.
  ``s_k`` container-steps; by §5's default minimum parallelism of one container it may be stretched
  over several steps. A stage of demand 0 needs no time and is skipped (it keeps its index).
* A **gang** ``g_k`` is the stage's minimum parallelism: containers are allocated ``g_k`` at a time,
  one step each. A stage's demand is cut into ``s_k // g_k`` gangs and, when ``g_k`` does not
  divide ``s_k``, one last smaller piece of ``s_k % g_k`` containers (the paper is silent; this keeps
  the demand exact). A gang larger than its stage is the whole stage.
* Each container has a size in every resource of the plan (``container``, default one unit of each);
  the plan's cost is ``c(t) = max_r load(r, t) / capacity(r, t)``.

Stages are numbered from 0 in code and messages (the paper's stage 3 of Fig. 7 is ``k = 2``).

LowCost, step by step (the choices where the paper is silent are marked *ours*)
---------------------------------------------------------------------------------
1. For every **end point** ``e`` in the window (the step the job's allocation ends on) run 2-4 and
   keep the cheapest allocation (``repeats the above procedure for different end points``).
   *Ours:* when a window has more than 64 possible end points, 64 evenly spaced ones counted back
   from the deadline (:func:`end_points`; ``max_end_points=None`` tries every one).
2. Stages are handled in **reverse chronological order**. Stage ``k``'s interval
   ``I_k = [tau_l, tau_r]`` ends right before stage ``k+1``'s allocation (for the last stage,
   ``tau_r = e``) and its length is the stage's share of the **remaining** demand times the time
   still available, ``s_k / sum_{k'<=k} s_k' * (tau_r - a + 1)`` (Fig. 7: ``16/38 * 19 = 8``), see
   :func:`stage_interval`. *Ours:* rounded half up, at least one step, and at most what leaves one
   step for every earlier stage (so a job is never stranded by rounding).
3. Gangs go one by one to the **cheapest eligible step**, eligible steps being
   ``[max(tau_cur - 1, tau_l), tau_r]`` where ``tau_cur`` is the stage's leftmost occupied step, see
   :func:`place_stage_gangs`. *Ours:* an empty stage has ``tau_cur = tau_r + 1``, so its first gang
   lands on ``tau_r`` - the only reading under which the paper's rule leaves no hole between
   stages; "cheapest" is the cost ``c(t)`` now (with the job's own gangs so far, as in Hadoop's
   LowCost); a step where the gang would exceed capacity is not eligible; ties go to the later step.
   A stage that cannot be completed inside its interval makes that end point infeasible.
4. **Cost of an allocation** (*ours*, the paper says "minimum cost"): the largest cost ``c(t)`` the
   job leaves on the steps it occupies, plus §7's alignment penalty; ties go to the smaller
   container-weighted sum of those costs, then to the earlier end point.
5. **Periodic jobs** (§6.3 "Multiple instances"): every instance keeps one offset, so LowCost works
   on one period in which the cost of offset ``o`` is the maximum over the instances' steps
   ``o, o + P, o + 2P, ...`` of the LCM horizon (the plan does that folding, see
   :class:`~cluster_sim.morpheus.plan.ReservationPlan`).
6. **Alignment penalty** (§7) for problematic jobs: ``alignment * |mid(alloc) - (a + d)/2| / (d - a)``
   added to the allocation's cost; the weight is the job's ``alignment`` (0 for most jobs).

Two implementations of 1-4 live here and are tested to agree decision for decision:
:func:`lowcost_reference` (a plain loop over end points calling the two building blocks, the
version the exercise rebuilds) and :func:`lowcost_window` (the same steps run for all end points at
once with numpy, what the plan uses). :func:`greedy_window` is the comparator: the rigid skyline at
the earliest start where it fits.

Example (the worked example of Fig. 7)
--------------------------------------
The paper gives stage 3's demand (16), the remaining demand (38) and the time left (19 steps); the
other stages (10, 12 and a gang of 8 for stage 4) and the 20-step window are our reconstruction,
chosen so that the wrong readings differ: 16/46 of the time (over the *total* demand) gives 7
steps, whether of the 19 steps left or of the whole window.

>>> stage_interval((10, 12, 16, 8), k=2, tau_r=18)     # 16/38 of the 19 steps left: 8 steps
(11, 18)
>>> job = PeriodicJob(period=20, a=0, d=20, demands=(10, 12, 16, 8), gang=(1, 1, 1, 8))
>>> w = lowcost_window(np.zeros((1, 20)), np.full((1, 20), 10.0), np.ones(1), job.demands, job.gangs)
>>> w.x.tolist()                                        # containers per step of the window
[2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 8]
>>> w.stage_steps()                                     # [first, last] step of each stage
[(0, 4), (5, 10), (11, 18), (19, 19)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Callable

import numpy as np

from .lowcost_scan import scan_end_points

__all__ = [
    "PeriodicJob",
    "AdHocJob",
    "Allocation",
    "Refusal",
    "WindowResult",
    "gang_pieces",
    "stage_interval",
    "place_stage_gangs",
    "end_points",
    "lowcost_reference",
    "lowcost_window",
    "greedy_window",
    "allocation_key",
    "alignment_penalty",
    "alignment_weight",
    "check_allocation",
]


# ---- validation helpers -----------------------------------------------------------------------------
def _whole(name: str, value, *, minimum: int | None = None) -> int:
    """A whole number (an int, or a float with no fraction); NaN, inf, bools and fractions refused."""
    if isinstance(value, bool) or not isinstance(value, (Integral, Real, np.integer, np.floating)):
        raise ValueError(f"{name}={value!r} is not allowed: need a whole number")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != math.floor(value):
            raise ValueError(f"{name}={value!r} is not allowed: need a whole number")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name}={value!r} is out of range: need {name} >= {minimum}")
    return v


def _whole_vector(name: str, values, *, minimum: int) -> tuple[int, ...]:
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    if arr.dtype.kind not in "iuf" or arr.dtype == bool:
        raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype}")
    arr = arr.astype(float)
    bad = ~np.isfinite(arr) | (arr != np.floor(arr)) | (arr < minimum)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}[{i}]={values[i]!r} is not allowed: need whole numbers >= {minimum}"
            + (" (round a fractional skyline up, e.g. with np.ceil)" if name == "demands" else "")
        )
    return tuple(int(v) for v in arr)


def _container(container) -> tuple[float, ...] | None:
    if container is None:
        return None
    arr = np.atleast_1d(np.asarray(container, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"container={container!r} must be one size per resource")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or not np.any(arr > 0):
        raise ValueError(
            f"container={container!r} is not allowed: need finite sizes >= 0, at least one > 0"
        )
    return tuple(float(v) for v in arr)


def _check_alignment(alignment) -> float:
    if isinstance(alignment, bool) or not isinstance(alignment, (Real, np.floating, np.integer)):
        raise ValueError(f"alignment={alignment!r} is not allowed: need a number >= 0")
    if not math.isfinite(alignment) or alignment < 0:
        raise ValueError(f"alignment={alignment!r} is out of range: need a finite alignment >= 0")
    return float(alignment)


def _gangs(gang, demands: tuple[int, ...]) -> tuple[int, ...]:
    if gang is None:
        return (1,) * len(demands)
    if np.ndim(gang) == 0:
        g = _whole("gang", gang, minimum=1)
        return (g,) * len(demands)
    gangs = _whole_vector("gang", gang, minimum=1)
    if len(gangs) != len(demands):
        raise ValueError(f"gang has {len(gangs)} entries but demands has {len(demands)}: need one gang per stage")
    return gangs


def _check_window(a: int, d: int, demands: tuple[int, ...]) -> None:
    if d <= a:
        raise ValueError(f"a={a} > d={d} is not allowed: the window [a, d) needs a < d" if d < a else
                         f"a={a} = d={d} is not allowed: the window [a, d) needs a < d")
    stages = sum(1 for s in demands if s > 0)
    if stages == 0:
        raise ValueError(f"demands={demands!r} is not allowed: need at least one stage with demand > 0")
    if stages > d - a:
        raise ValueError(
            f"demands has {stages} stages with demand > 0 but the window d - a = {d - a} steps: "
            f"the demand is longer than the window (each stage needs at least one step)"
        )


# ---- jobs ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PeriodicJob:
    """A periodic job's reservation request: skyline ``demands`` inside ``[a, d)`` of every period.

    ``period``, ``a`` and ``d`` are in plan steps, ``a`` and ``d`` relative to the period start (see
    the module docstring); ``demands`` are containers per stage (the skyline R*), ``gang`` the
    minimum parallelism (one value for every stage or one per stage; default 1 container),
    ``container`` the size of one container in each resource of the plan (default one unit of each),
    ``alignment`` the weight of §7's alignment penalty (0: none).

    >>> PeriodicJob(period=60, a=5, d=50, demands=(4, 4, 2)).gangs
    (1, 1, 1)
    >>> PeriodicJob(period=60, a=50, d=40, demands=(4,))
    Traceback (most recent call last):
    ...
    ValueError: a=50 > d=40 is not allowed: the window [a, d) needs a < d
    """

    period: int
    a: int
    d: int
    demands: tuple
    gang: object = None
    container: tuple | None = None
    alignment: float = 0.0
    name: str | None = None

    def __post_init__(self):
        period = _whole("period", self.period, minimum=1)
        a = _whole("a", self.a, minimum=0)
        d = _whole("d", self.d)
        demands = _whole_vector("demands", self.demands, minimum=0)
        if a >= period:
            raise ValueError(f"a={a} is out of range: a is relative to the period start, need 0 <= a < period={period}")
        _check_window(a, d, demands)
        if d - a > period:
            raise ValueError(
                f"d - a = {d - a} is longer than period={period}: need a window no longer than the period "
                f"(instances of one job must not overlap)"
            )
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "demands", demands)
        object.__setattr__(self, "gang", _gangs(self.gang, demands))
        object.__setattr__(self, "container", _container(self.container))
        object.__setattr__(self, "alignment", _check_alignment(self.alignment))

    @property
    def gangs(self) -> tuple[int, ...]:
        """The gang size of every stage (the ``gang`` argument expanded)."""
        return self.gang

    @property
    def window(self) -> int:
        """``d - a``: the steps an instance may use."""
        return self.d - self.a

    @property
    def total_demand(self) -> int:
        """Container-steps of one instance."""
        return sum(self.demands)


@dataclass(frozen=True)
class AdHocJob:
    """A non-periodic job planned in the residual left by the periodic reservations (§6.3).

    ``a`` and ``d`` are absolute plan steps (the plan is cyclic: ``d`` may pass the horizon and wrap
    to its start); the other fields are as for :class:`PeriodicJob`.

    >>> AdHocJob(a=100, d=160, demands=(3, 3)).window
    60
    """

    a: int
    d: int
    demands: tuple
    gang: object = None
    container: tuple | None = None
    alignment: float = 0.0
    name: str | None = None

    def __post_init__(self):
        a = _whole("a", self.a, minimum=0)
        d = _whole("d", self.d)
        demands = _whole_vector("demands", self.demands, minimum=0)
        _check_window(a, d, demands)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "demands", demands)
        object.__setattr__(self, "gang", _gangs(self.gang, demands))
        object.__setattr__(self, "container", _container(self.container))
        object.__setattr__(self, "alignment", _check_alignment(self.alignment))

    period = None

    @property
    def gangs(self) -> tuple[int, ...]:
        return self.gang

    @property
    def window(self) -> int:
        return self.d - self.a

    @property
    def total_demand(self) -> int:
        return sum(self.demands)


@dataclass(eq=False)
class Allocation:
    """Where a job's containers are reserved: one block of containers per instance.

    ``starts[i]`` is the plan step (not wrapped, may pass the horizon) of instance ``i``'s first
    reserved step and ``blocks[i]`` its containers per step from there; stage ``k`` of instance ``i``
    occupies ``blocks[i][bounds[i][k]:bounds[i][k+1]]``. A periodic allocation (``periodic=True``)
    has one block and one offset shared by every instance, ``starts[i] = starts[0] + i * period``.
    :meth:`containers` turns it into containers per plan step, the capacity of the job's queue.
    """

    job: object
    starts: tuple
    blocks: tuple
    bounds: tuple
    periodic: bool
    method: str = "lowcost"
    job_id: int | None = None
    cost: float = float("nan")  # the allocation's cost when it was chosen (peak + penalty)

    @property
    def offset(self) -> int:
        """Offset of the (first) instance's allocation from its period start (or its ``a``-origin)."""
        return int(self.starts[0])

    def containers(self, horizon: int) -> np.ndarray:
        """Containers reserved for this job at every plan step of a cyclic horizon."""
        out = np.zeros(horizon, dtype=np.int64)
        for s, b in zip(self.starts, self.blocks):
            np.add.at(out, (s + np.arange(len(b))) % horizon, b)
        return out

    def stage(self, k: int, instance: int = 0) -> tuple[int, np.ndarray]:
        """``(first plan step, containers per step)`` of stage ``k`` in one instance."""
        lo, hi = self.bounds[instance][k], self.bounds[instance][k + 1]
        return int(self.starts[instance] + lo), self.blocks[instance][lo:hi].copy()

    def same_as(self, other: "Allocation") -> bool:
        """True when both reserve the same containers at the same steps, stage by stage."""
        return (
            len(self.starts) == len(other.starts)
            and all(int(a) == int(b) for a, b in zip(self.starts, other.starts))
            and all(np.array_equal(a, b) for a, b in zip(self.blocks, other.blocks))
            and all(np.array_equal(a, b) for a, b in zip(self.bounds, other.bounds))
        )

    def copy(self) -> "Allocation":
        return Allocation(self.job, tuple(self.starts), tuple(b.copy() for b in self.blocks),
                          tuple(b.copy() for b in self.bounds), self.periodic, self.method, self.job_id,
                          self.cost)


@dataclass(frozen=True)
class Refusal:
    """Why a job was not placed. ``stage`` (0-based) and ``instance`` say where, when known."""

    job: object
    reason: str
    stage: int | None = None
    instance: int | None = None

    def __str__(self) -> str:
        return self.reason


# ---- the two building blocks ------------------------------------------------------------------------
def gang_pieces(demand: int, gang: int) -> list[int]:
    """The pieces a stage is allocated in: ``demand // gang`` gangs, then the remainder if any.

    >>> gang_pieces(10, 4)
    [4, 4, 2]
    >>> gang_pieces(3, 8)        # a gang larger than its stage is the whole stage
    [3]
    """
    demand = _whole("demand", demand, minimum=0)
    gang = min(_whole("gang", gang, minimum=1), max(demand, 1))
    pieces = [gang] * (demand // gang)
    if demand % gang:
        pieces.append(demand % gang)
    return pieces


def stage_interval(demands, k: int, tau_r: int, a: int = 0) -> tuple[int, int]:
    """Stage ``k``'s interval ``I_k = [tau_l, tau_r]`` (§6.3, Fig. 7).

    ``demands`` is the whole skyline, ``k`` the (0-based) stage being placed, ``tau_r`` the step
    right before the allocation of stage ``k+1`` and ``a`` the job's start. The length is the stage's
    share of the remaining demand (stages ``0..k``) times the steps still available,
    ``tau_r - a + 1``, rounded half up, at least 1 and at most what leaves one step for each earlier
    stage with demand.

    >>> stage_interval((10, 12, 16, 8), k=2, tau_r=18)     # Fig. 7: 16/38 * 19 = 8 steps
    (11, 18)
    >>> stage_interval((10, 12, 16, 8), k=0, tau_r=4)      # the first stage takes what is left
    (0, 4)
    """
    demands = _whole_vector("demands", demands, minimum=0)
    k = _whole("k", k, minimum=0)
    if k >= len(demands) or demands[k] == 0:
        raise ValueError(f"k={k} is not a stage with demand > 0 of demands={demands!r}")
    tau_r = _whole("tau_r", tau_r)
    a = _whole("a", a)
    earlier = sum(1 for s in demands[:k] if s > 0)
    avail = tau_r - a + 1
    if avail < earlier + 1:
        raise ValueError(
            f"tau_r={tau_r} leaves {avail} steps after a={a}: stage {k} and the {earlier} stages before it "
            f"need at least {earlier + 1}"
        )
    remaining = sum(demands[: k + 1])
    length = (2 * demands[k] * avail + remaining) // (2 * remaining)  # round half up, exactly
    length = min(max(length, 1), avail - earlier)
    return tau_r - length + 1, tau_r


def _ratio(num, cap) -> np.ndarray:
    """``num / cap``; an empty capacity costs 0 while unused and infinity once used."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(num, dtype=float) / cap
    return np.nan_to_num(r, nan=0.0, posinf=np.inf, copy=False)  # 0/0 only: an unused empty line


def _as_lines(load, capacity, container) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Load and capacity as (Q, W) arrays of *lines* (resources, or resources x instances) and sizes.

    A 1-D ``load`` is one resource over W steps (then a 1-D ``capacity`` is per step); a 2-D load is
    (resources, W) (then a 1-D ``capacity`` is per resource). A scalar capacity is everywhere.
    """
    load = np.asarray(load, dtype=float)
    one = load.ndim == 1
    if one:
        load = load[None, :]
    if load.ndim != 2 or load.shape[1] == 0:
        raise ValueError(f"load must be (steps,) or (resources, steps) with steps > 0, got shape {load.shape}")
    if not np.all(np.isfinite(load)) or np.any(load < 0):
        raise ValueError("load must hold finite values >= 0")
    cap = np.asarray(capacity, dtype=float)
    if cap.ndim == 1:
        cap = cap[None, :] if one else cap[:, None]
    try:
        cap = np.broadcast_to(cap, load.shape).astype(float)
    except ValueError:
        raise ValueError(f"capacity of shape {np.shape(capacity)} does not match load of shape {load.shape}") from None
    if not np.all(np.isfinite(cap)) or np.any(cap < 0):
        raise ValueError("capacity must hold finite values >= 0")
    z = np.asarray(container, dtype=float)
    if z.ndim > 1 or (z.ndim == 1 and z.size not in (1, load.shape[0])):
        raise ValueError(f"container={container!r} must be one size per resource ({load.shape[0]})")
    z = np.broadcast_to(z, (load.shape[0],)).astype(float)
    if not np.all(np.isfinite(z)) or np.any(z < 0) or not np.any(z > 0):
        raise ValueError(f"container={container!r} must hold finite sizes >= 0, at least one > 0")
    return load, cap, z


def place_stage_gangs(load, capacity, tau_l: int, tau_r: int, demand: int, gang: int = 1,
                      container=1.0) -> np.ndarray | None:
    """Place one stage's gangs in ``[tau_l, tau_r]``; containers per window step, or None.

    ``load`` and ``capacity`` cover the job's window, one row per resource (a 1-D ``load`` is one
    resource); ``container`` is the size of one container in each. Gangs (see :func:`gang_pieces`)
    go one at a time to the cheapest eligible step: eligible steps are
    ``[max(tau_cur - 1, tau_l), tau_r]`` with ``tau_cur`` the leftmost step already holding part of
    this stage (``tau_r + 1`` while it is empty, so the first gang lands on ``tau_r``), restricted to
    steps where the gang fits under capacity. The cost of a step is ``max_r (load + x*size)/capacity``
    with ``x`` the stage's containers there so far; ties go to the later step. Returns None when a
    gang finds no eligible step.

    >>> place_stage_gangs(np.array([0, 0, 5, 0, 0]), 10, tau_l=1, tau_r=4, demand=6).tolist()
    [0, 0, 0, 3, 3]
    >>> place_stage_gangs(np.array([0, 0, 3, 0, 0]), 10, tau_l=0, tau_r=4, demand=12).tolist()
    [1, 2, 1, 4, 4]
    >>> place_stage_gangs(np.array([0, 0, 9, 0, 0]), 10, tau_l=0, tau_r=4, demand=6, gang=2).tolist()
    [0, 0, 0, 2, 4]
    """
    load, cap, z = _as_lines(load, capacity, container)
    W = load.shape[1]
    tau_l, tau_r = _whole("tau_l", tau_l), _whole("tau_r", tau_r)
    if not 0 <= tau_l <= tau_r < W:
        raise ValueError(f"tau_l={tau_l}, tau_r={tau_r} are out of range: need 0 <= tau_l <= tau_r < {W}")
    x = np.zeros(W, dtype=np.int64)
    cur = tau_r + 1
    for piece in gang_pieces(demand, gang):
        best, best_cost = -1, np.inf
        # right to left with a strict '<': among equal costs the later step wins
        for t in range(tau_r, max(cur - 1, tau_l) - 1, -1):
            if np.any(load[:, t] + (x[t] + piece) * z > cap[:, t]):
                continue
            c = float(np.max(_ratio(load[:, t] + x[t] * z, cap[:, t])))
            if c < best_cost:
                best, best_cost = t, c
        if best < 0:
            return None
        x[best] += piece
        cur = min(cur, best)
    return x


# ---- the cost of a whole allocation -----------------------------------------------------------------
def alignment_penalty(left: int, right: int, window: int, weight: float) -> float:
    """§7's alignment penalty: ``weight * |mid(allocation) - mid(window)| / window``.

    ``left``/``right`` are the first and last steps of the allocation in window steps (0 = ``a``),
    ``window = d - a``; the allocation's mid-point is ``(left + right + 1) / 2``, the window's
    ``window / 2``, so an allocation centred in ``[a, d)`` pays nothing and one touching an edge
    pays up to ``weight / 2``.

    >>> alignment_penalty(0, 9, 40, weight=1.0)      # the first quarter of a 40-step window
    0.375
    """
    return weight * abs((left + right + 1) / 2 - window / 2) / window


def alignment_weight(cv_start_delay: float, cv_slack: float, *, threshold: float = 0.5,
                     weight: float = 1.0) -> float:
    """The alignment weight of a job: ``weight`` for "problematic" jobs, else 0 (§7).

    Problematic means a high coefficient of variation of ``T_start - T_inAvail`` (variable input
    arrival) or of ``T_outRead - T_end`` (variable slack); the threshold is ours.

    >>> alignment_weight(0.8, 0.1), alignment_weight(0.1, 0.2)
    (1.0, 0.0)
    """
    for name, v in (("cv_start_delay", cv_start_delay), ("cv_slack", cv_slack), ("threshold", threshold),
                    ("weight", weight)):
        if not isinstance(v, (Real, np.floating, np.integer)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name}={v!r} is out of range: need a finite {name} >= 0")
    return float(weight) if max(cv_start_delay, cv_slack) > threshold else 0.0


def allocation_key(load, capacity, container, x, alignment: float = 0.0) -> tuple[float, float, int]:
    """How LowCost ranks one end point's allocation ``x`` (containers per window step); smaller wins.

    ``(peak + alignment penalty, container-weighted sum of costs, end step)``: the peak is the largest
    cost ``c(t)`` on the steps ``x`` occupies once it is added. The sum is rounded to 9 decimals so
    that summation order never decides a tie.
    """
    load, cap, z = _as_lines(load, capacity, container)
    x = np.asarray(x, dtype=np.int64)
    occ = np.flatnonzero(x)
    post = np.max(_ratio(load + x[None, :] * z[:, None], cap), axis=0)
    peak = float(np.max(post[occ]))
    area = float(np.round(np.sum(x * np.where(x > 0, post, 0.0)), 9))
    pen = alignment_penalty(int(occ[0]), int(occ[-1]), x.size, alignment)
    return peak + pen, area, int(occ[-1])


# ---- LowCost on one window ----------------------------------------------------------------------------
@dataclass
class WindowResult:
    """LowCost's (or the greedy's) answer on one window: containers per window step and stage spans.

    ``x`` is None when no end point worked; then ``reason`` says why and ``stage`` names the stage
    that failed at the most promising end point. ``spans[k] = (first, last)`` window step of stage
    ``k`` (``(first, first - 1)`` for a stage without demand).
    """

    x: np.ndarray | None
    spans: list = field(default_factory=list)
    key: tuple = ()
    reason: str = ""
    stage: int | None = None

    def stage_steps(self) -> list[tuple[int, int]]:
        return [(int(lo), int(hi)) for lo, hi in self.spans]

    @property
    def left(self) -> int:
        return int(np.flatnonzero(self.x)[0])

    @property
    def right(self) -> int:
        return int(np.flatnonzero(self.x)[-1])

    def bounds(self) -> np.ndarray:
        """Stage bounds relative to the allocation's first step (see :class:`Allocation`)."""
        widths = [hi - lo + 1 for lo, hi in self.spans]
        return np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)


MAX_END_POINTS = 64


def end_points(stages: int, window: int, max_end_points: int | None = MAX_END_POINTS) -> np.ndarray:
    """The end points LowCost tries, as window steps: every step from ``stages - 1`` (room for one
    step per stage) to ``window - 1`` (the deadline), or, when there are more than
    ``max_end_points``, evenly spaced ones counted back from the deadline (ours: the paper repeats
    over "different end points" without saying which; ``None`` tries them all).

    >>> end_points(3, 10).tolist()
    [2, 3, 4, 5, 6, 7, 8, 9]
    >>> end_points(3, 10, max_end_points=3).tolist()
    [3, 6, 9]
    """
    n = window - stages + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    if max_end_points is None or n <= max_end_points:
        return np.arange(stages - 1, window, dtype=np.int64)
    stride = -(-n // _whole("max_end_points", max_end_points, minimum=1))
    return np.arange(window - 1, stages - 2, -stride, dtype=np.int64)[::-1].copy()


def _check_stages(demands, gangs) -> tuple[tuple[int, ...], tuple[int, ...]]:
    demands = _whole_vector("demands", demands, minimum=0)
    gangs = _gangs(gangs, demands)
    if not any(demands):
        raise ValueError(f"demands={demands!r} is not allowed: need at least one stage with demand > 0")
    return demands, gangs


def _spans_from(lo_by_stage: dict, hi_by_stage: dict, K: int, left: int) -> list[tuple[int, int]]:
    spans, nxt = [], left
    for k in range(K):
        if k in lo_by_stage:
            spans.append((lo_by_stage[k], hi_by_stage[k]))
            nxt = hi_by_stage[k] + 1
        else:
            spans.append((nxt, nxt - 1))
    return spans


def lowcost_reference(load, capacity, container, demands, gangs=None, alignment: float = 0.0, *,
                      split: Callable = stage_interval, place: Callable = place_stage_gangs,
                      max_end_points: int | None = MAX_END_POINTS) -> WindowResult:
    """LowCost on one window, written plainly: every end point, stages right to left, gangs one by one.

    ``load``/``capacity`` are (resources, W) over the job's window (W = d - a; window step 0 is
    ``a``), already folded over the instances for a periodic job. ``split`` and ``place`` are the two
    building blocks (:func:`stage_interval`, :func:`place_stage_gangs`) and can be swapped for a
    student's; ``max_end_points`` as in :func:`end_points`. Same answer as :func:`lowcost_window`,
    much slower.
    """
    load, cap, z = _as_lines(load, capacity, container)
    demands, gangs = _check_stages(demands, gangs)
    W, K = load.shape[1], len(demands)
    pos = [k for k in range(K) if demands[k] > 0]
    best: WindowResult | None = None
    closest = (-1, None)  # (stages placed, refusal stage) at the end point that got furthest
    for e in end_points(len(pos), W, max_end_points).tolist():
        x = np.zeros(W, dtype=np.int64)
        lo_s, hi_s = {}, {}
        tau_r, failed = e, None
        for placed, k in enumerate(reversed(pos)):
            tau_l, _ = split(demands, k, tau_r, 0)
            stage = place(load, cap, tau_l, tau_r, demands[k], gangs[k], z)
            if stage is None:
                failed = k
                if placed > closest[0]:
                    closest = (placed, k)
                break
            occ = np.flatnonzero(stage)
            lo_s[k], hi_s[k] = int(occ[0]), int(occ[-1])
            x += stage
            tau_r = int(occ[0]) - 1
        if failed is not None:
            continue
        key = allocation_key(load, cap, z, x, alignment)
        if best is None or key < best.key:
            best = WindowResult(x, _spans_from(lo_s, hi_s, K, int(np.flatnonzero(x)[0])), key)
    if best is None:
        return _no_room(closest[1], W)
    return best


def _no_room(stage: int | None, W: int) -> WindowResult:
    if stage is None:
        return WindowResult(None, reason=f"no end point in the {W}-step window leaves room", stage=None)
    return WindowResult(
        None, stage=stage,
        reason=f"no end point in the {W}-step window fits: stage {stage} finds no room in its interval "
               f"even where the most stages fit",
    )


def _max_fit(Lf: np.ndarray, Cf: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Largest ``X`` with ``L + X*z <= C`` on every line, in the same float arithmetic as the
    reference's test (so ``x + piece <= X`` decides exactly what ``place_stage_gangs`` decides); -1
    when even the current load exceeds a line."""
    zq = z[:, None]
    big = np.int64(1) << 40
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(zq > 0, np.floor((Cf - Lf) / np.where(zq > 0, zq, 1.0)), big)
    X = np.clip(np.min(est, axis=0), -1, big).astype(np.int64)
    X = np.where(np.any(Lf > Cf, axis=0), -1, X)
    while True:  # the float estimate can be one off either way: settle it with the reference's test
        over = (X >= 0) & np.any(Lf + X * zq > Cf, axis=0)
        under = (X < big) & ~over & np.all(Lf + (X + 1) * zq <= Cf, axis=0)
        if not (over.any() or under.any()):
            return X
        X = X - over + under


def lowcost_window(load, capacity, container, demands, gangs=None, alignment: float = 0.0, *,
                   max_end_points: int | None = MAX_END_POINTS) -> WindowResult:
    """LowCost on one window, all end points at once (numpy); the same decisions as the reference.

    Arguments as :func:`lowcost_reference`. Each end point is a row; rows walk through the stages
    together, and :func:`~cluster_sim.morpheus.lowcost_scan.scan_end_points` places all of a stage's
    gangs at every row in a fixed number of numpy calls (the greedy's order is one sort, see that
    module), so the Python loop runs once per stage, not once per gang and end point.
    """
    L, C, z = _as_lines(load, capacity, container)
    demands, gangs = _check_stages(demands, gangs)
    W, K = L.shape[1], len(demands)
    pos = [k for k in range(K) if demands[k] > 0]
    Kp = len(pos)
    ends = end_points(Kp, W, max_end_points)
    if ends.size <= 0:
        return _no_room(None, W)
    xmax_w = _max_fit(L, C, z)  # containers that fit at each window step (the same for every row)
    found = scan_end_points(L, C, z, xmax_w, demands, gangs, pos, ends)  # lowcost_scan: stages 3-1
    if found.ids is None:
        return _no_room(found.refused, W)
    return _best_end_point(ends, found.ids, pos, K, W, found.stage_ids, found.stage_lo, found.stage_hi,
                           found.stage_x, found.stage_peak, found.stage_area, alignment)


def _best_end_point(ends, ids, pos, K, W, stage_ids, stage_lo, stage_hi, stage_x, stage_peak, stage_area,
                    alignment):
    """Keep the cheapest surviving end point (see :func:`allocation_key`) and assemble its allocation."""
    peak = np.full(ids.size, -np.inf)
    area = np.zeros(ids.size)
    lo_s, hi_s = {}, {}
    for k in pos:
        where = np.searchsorted(stage_ids[k], ids)  # the survivors, as rows of that stage's arrays
        peak = np.maximum(peak, stage_peak[k][where])
        area = area + stage_area[k][where]
        lo_s[k], hi_s[k] = stage_lo[k][where], stage_hi[k][where]
    area = np.round(area, 9)
    left = lo_s[pos[0]]
    right = ends[ids]
    score = peak + alignment * np.abs((left + right + 1) / 2 - W / 2) / W if alignment else peak + 0.0
    b = int(np.lexsort((right, area, score))[0])
    x = np.zeros(W, dtype=np.int64)
    for k in pos:
        row = np.searchsorted(stage_ids[k], ids[b])
        lo, hi = int(lo_s[k][b]), int(hi_s[k][b])
        x[lo:hi + 1] = stage_x[k][row][: hi - lo + 1][::-1]  # local step u is hi - u
    spans = _spans_from({k: int(lo_s[k][b]) for k in pos}, {k: int(hi_s[k][b]) for k in pos}, K, int(left[b]))
    return WindowResult(x, spans, (float(score[b]), float(area[b]), int(right[b])))


def greedy_window(load, capacity, container, demands, gangs=None) -> WindowResult:
    """The comparator: the rigid skyline (stage ``k`` = ``s_k`` containers in one step) at the earliest
    start of the window where every step fits. Gangs are respected trivially (a stage is one stack).

    >>> greedy_window(np.array([[0, 9, 0, 0, 0]]), 10, 1, (3, 2)).x.tolist()
    [0, 0, 3, 2, 0]
    """
    L, C, z = _as_lines(load, capacity, container)
    demands, gangs = _check_stages(demands, gangs)
    W, K = L.shape[1], len(demands)
    pos = [k for k in range(K) if demands[k] > 0]
    shape = np.array([demands[k] for k in pos], dtype=np.int64)
    n = W - shape.size + 1
    if n <= 0:
        return _no_room(None, W)
    win_L = np.lib.stride_tricks.sliding_window_view(L, shape.size, axis=1)  # (Q, n, Kp)
    win_C = np.lib.stride_tricks.sliding_window_view(C, shape.size, axis=1)
    fits = np.all(win_L + shape[None, None, :] * z[:, None, None] <= win_C, axis=(0, 2))
    if not fits.any():
        return WindowResult(None, reason=f"no start in the {W}-step window fits the rigid skyline")
    s0 = int(np.argmax(fits))
    x = np.zeros(W, dtype=np.int64)
    x[s0:s0 + shape.size] = shape
    lo = {k: s0 + i for i, k in enumerate(pos)}
    return WindowResult(x, _spans_from(lo, dict(lo), K, s0),
                        allocation_key(L, C, z, x))


# ---- checking an allocation ---------------------------------------------------------------------------
def check_allocation(alloc: Allocation, horizon: int | None = None) -> None:
    """Raise ``AssertionError`` naming the instance and stage unless ``alloc`` is a valid reservation.

    Every instance: each stage's demand delivered exactly, inside ``[a, d)`` of its period (or of the
    ad hoc job's window), in whole gangs (plus at most one remainder piece); the allocation is one
    contiguous block (no step without containers) with the stages in order. A periodic allocation's
    instances share one offset and one shape.
    """
    job = alloc.job
    K = len(job.demands)
    n = len(alloc.starts)
    if not (len(alloc.blocks) == len(alloc.bounds) == n) or n == 0:
        raise AssertionError("starts, blocks and bounds must have one entry per instance")
    for i in range(n):
        start, block, bounds = int(alloc.starts[i]), np.asarray(alloc.blocks[i]), np.asarray(alloc.bounds[i])
        where = f"instance {i}"
        if block.ndim != 1 or block.size == 0 or np.any(block <= 0):
            raise AssertionError(f"{where}: the allocation has a hole or is empty (a step without containers)")
        if bounds.shape != (K + 1,) or bounds[0] != 0 or bounds[-1] != block.size or np.any(np.diff(bounds) < 0):
            raise AssertionError(f"{where}: stage bounds {bounds.tolist()} do not cover the block in order")
        # instance i of a periodic job (placed with one offset or not) belongs to period i
        lo, hi = (job.a, job.d) if job.period is None else (i * job.period + job.a, i * job.period + job.d)
        if start < lo or start + block.size > hi:
            raise AssertionError(f"{where}: steps [{start}, {start + block.size}) leave the window [{lo}, {hi})")
        for k in range(K):
            part = block[bounds[k]:bounds[k + 1]]
            s = job.demands[k]
            if int(part.sum()) != s:
                raise AssertionError(f"{where}, stage {k}: delivers {int(part.sum())} containers, demand is {s}")
            if s == 0:
                continue
            if part.size == 0:
                raise AssertionError(f"{where}, stage {k}: has demand but no step")
            g = min(job.gangs[k], s)
            r = s % g
            rest = part % g
            if r == 0 and np.any(rest):
                raise AssertionError(f"{where}, stage {k}: {part.tolist()} is not whole gangs of {g}")
            if r and not (np.count_nonzero(rest == r) == 1 and np.count_nonzero(rest) == 1):
                raise AssertionError(f"{where}, stage {k}: {part.tolist()} is not gangs of {g} plus one piece of {r}")
    if alloc.periodic:
        P = job.period
        for i in range(1, n):
            same_shape = np.array_equal(alloc.blocks[i], alloc.blocks[0])
            if int(alloc.starts[i]) - i * P != int(alloc.starts[0]) or not same_shape:
                raise AssertionError(f"instance {i} does not share instance 0's offset and shape")
    if horizon is not None and alloc.periodic and job.period is not None and n * job.period != horizon:
        raise AssertionError(
            f"a periodic allocation must have horizon/period = {horizon // job.period} instances, has {n}")
