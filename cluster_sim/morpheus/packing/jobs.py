"""What LowCost packs and what it returns: the jobs (:class:`PeriodicJob`, :class:`AdHocJob`), their
validation, and an :class:`Allocation` or a :class:`Refusal`.

Units and vocabulary (plan steps, stages, demands, gangs, container sizes) are the ones of
:mod:`.lowcost`'s docstring: a job's window is ``[a, d)`` in whole plan steps, ``demands`` is its
skyline R* in whole containers per stage, ``gang`` its minimum parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import validate

__all__ = ["PeriodicJob", "AdHocJob", "Allocation", "Refusal"]


# ---- validation -----------------------------------------------------------------------------
#: what a fractional skyline's refusal suggests (R* is fitted in fractional containers; LowCost packs whole ones)
ROUND_UP = " (round a fractional skyline up, e.g. with np.ceil)"


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


def _gangs(gang, demands: tuple[int, ...]) -> tuple[int, ...]:
    if gang is None:
        return (1,) * len(demands)
    if np.ndim(gang) == 0:
        g = validate.whole_number(gang, "gang", lo=1)
        return (g,) * len(demands)
    gangs = validate.whole_numbers(gang, "gang", lo=1)
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
        period = validate.whole_number(self.period, "period", lo=1)
        a = validate.whole_number(self.a, "a", lo=0)
        d = validate.whole_number(self.d, "d")
        demands = validate.whole_numbers(self.demands, "demands", lo=0, hint=ROUND_UP)
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
        object.__setattr__(self, "alignment", validate.number(self.alignment, "alignment", lo=0))

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
        a = validate.whole_number(self.a, "a", lo=0)
        d = validate.whole_number(self.d, "d")
        demands = validate.whole_numbers(self.demands, "demands", lo=0, hint=ROUND_UP)
        _check_window(a, d, demands)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "demands", demands)
        object.__setattr__(self, "gang", _gangs(self.gang, demands))
        object.__setattr__(self, "container", _container(self.container))
        object.__setattr__(self, "alignment", validate.number(self.alignment, "alignment", lo=0))

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
