"""Seeded traces from a real run, for the exercises: replay them and find the first difference.

* :func:`shadow_trace` records every CSV release, allocation and view update of a small run
  (view 0's updates): the input of the shadow measurement. :func:`replay_shadow` is the reference
  answer - the CPU shadow after each event - computed by :class:`ShadowMeter`.
* :func:`decision_trace` records the inputs and the choice of every RM scheduler decision
  (Algorithm 2) of a small SafeRM or SmartRM run.
* :func:`first_difference` compares a student's answers with the reference and names the first
  event / decision that differs, with its inputs.

Example
-------
>>> tr = shadow_trace(RMinerConfig.ci().replace(machines=4, horizon=3.0, think_time=0.05))
>>> len(tr.events) > 0 and tr.capacity.shape == (4, 2)
True
>>> s = replay_shadow(tr.events, tr.capacity)
>>> len(s) == len(tr.events) and min(s) >= 0
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..checking import CheckFailed, name_case
from .config import RMinerConfig
from .measure import ShadowMeter
from .model import RMinerModel


@dataclass
class ShadowTrace:
    capacity: np.ndarray  # (n, R) per machine
    events: list  # (t, kind, machine, amount): kind in "alloc", "release", "sync"
    t_end: float
    update_delay: float


def shadow_trace(config: RMinerConfig) -> ShadowTrace:
    """Run ``config`` (NoRM) and record the events the shadow measurement needs."""
    model = RMinerModel(config.replace(mode="none", view_refresh="synchronous"), record_series=False)
    model.probe.event_log = []
    model.run_until(config.horizon)
    return ShadowTrace(model.csv.ledger.capacity.copy(), model.probe.event_log, config.horizon, config.update_delay)


def replay_shadow(events: Sequence, capacity: np.ndarray) -> list[int]:
    """Reference: the CPU shadow ``sum_m min(R_m, F_m)`` right after each event."""
    cap = np.asarray(capacity)
    meter = ShadowMeter(cap.shape[0], cap.shape[1])
    free = cap.copy()
    out = []
    for t, kind, m, amount in events:
        if kind == "alloc":
            free[m] -= amount
            meter.allocate(t, m, free[m])
        elif kind == "release":
            free[m] += amount
            meter.release(t, m, np.asarray(amount), free[m])
        elif kind == "sync":
            meter.sync(t)
        else:
            raise ValueError(f"event kind {kind!r} is not allowed: choose 'alloc', 'release' or 'sync'")
        out.append(meter.shadow_of(0))
    return out


#: Hand cases for the shadow measurement (Lab 08's exercise): (events, capacity). The second one is
#: crowded: machine 0 fills up, a task ends there and another scheduler, whose view was refreshed
#: earlier, takes the released slots again (R_0 = 2 released, F_0 = 0 free: no shadow), while
#: machine 1 has free slots nobody released (R_1 = 0, F_1 = 4). "Everything released since the
#: update" says 2 (no min with F), "min of the cluster totals" says min(2, 4) = 2; the shadow is 0.
SHADOW_HAND_CASES = [
    ([(0.0, "alloc", 0, (2, 1)), (0.2, "release", 0, (1, 0)), (0.5, "sync", -1, ()), (0.6, "release", 0, (1, 1))],
     np.array([[4, 4]])),
    ([(0.0, "alloc", 0, (4, 4)), (0.1, "release", 0, (2, 2)), (0.2, "alloc", 0, (2, 2)), (0.5, "sync", -1, ()),
      (0.6, "release", 0, (1, 1))],
     np.array([[4, 4], [4, 4]])),
]


def shadow_state(events: Sequence, capacity: np.ndarray, i: int) -> dict:
    """Per machine, after event ``i``: R_m (CPU released since the last view update) and F_m (CPU free
    in the CSV); the shadow on m is min(R_m, F_m). For messages that name the machine that differs."""
    if not 0 <= i < len(events):
        raise ValueError(f"i={i!r} is out of range: allowed 0 <= i < {len(events)} (the number of events)")
    free = np.array(capacity, dtype=np.int64)[:, 0].copy()
    released = np.zeros_like(free)
    for t, kind, m, amount in events[: i + 1]:
        if kind == "alloc":
            free[m] -= amount[0]
        elif kind == "release":
            free[m] += amount[0]
            released[m] += amount[0]
        elif kind == "sync":
            released[:] = 0
    return {int(m): (int(released[m]), int(free[m])) for m in range(len(free))}


def describe_shadow_event(events: Sequence, capacity: np.ndarray, i: int) -> str:
    """Event ``i`` with every machine's R_m and F_m after it (CPU), and the shadow min(R_m, F_m)."""
    t, kind, m, amount = events[i]
    state = shadow_state(events, capacity, i)
    busy = {k: v for k, v in state.items() if v[0] > 0 or k == m} or state
    per = "; ".join(f"machine {k}: R_m={r}, F_m={f}, min={min(r, f)}" for k, (r, f) in list(busy.items())[:8])
    return (f"event {i}: t={t:.4f} {kind} on machine {m} amount={amount}. After it, CPU per machine: {per} "
            f"(cluster: sum R={sum(r for r, _ in state.values())}, sum F={sum(f for _, f in state.values())}, "
            f"shadow = sum of min(R_m, F_m) = {sum(min(r, f) for r, f in state.values())})")


#: Hand cases for Algorithm 2 (Lab 09's exercise): (shadow, truly free, demand, mode). In the last two no
#: shadow fits and the normal path must use the *truly free* resources (shadow included): machine 0's
#: free - shadow is too small in the first, machine 0's free + shadow would wrongly fit in the second.
CHOICE_HAND_CASES = [
    (np.array([[2, 20], [6, 20], [4, 40], [0, 0]]), np.array([[10, 200], [7, 100], [30, 800], [64, 1024]]), dem, mode)
    for dem in ([3, 16], [5, 16], [8, 16], [80, 16], [4, 30]) for mode in ("safe", "smart")
] + [
    (np.array([[2, 20], [0, 0], [0, 0]]), np.array([[4, 100], [1, 100], [64, 1024]]), [3, 16], mode)
    for mode in ("safe", "smart")
] + [
    (np.array([[2, 20], [0, 0], [0, 0]]), np.array([[2, 100], [5, 100], [64, 1024]]), [3, 16], mode)
    for mode in ("safe", "smart")
]


def time_average(events: Sequence, shadows: Sequence[int], t_end: float) -> float:
    """Time-average of the step function that takes value ``shadows[i]`` from ``events[i]``'s time."""
    if len(events) != len(shadows):
        raise ValueError(f"{len(shadows)} shadow values for {len(events)} events: need one per event")
    times = [e[0] for e in events] + [t_end]
    area = sum(s * (times[i + 1] - times[i]) for i, s in enumerate(shadows))
    return area / t_end if t_end > 0 else 0.0


@dataclass
class Decision:
    t: float
    shadow: np.ndarray
    free: np.ndarray
    demand: np.ndarray
    mode: str
    machine: int
    path: str


def decision_trace(config: RMinerConfig) -> list[Decision]:
    """Run ``config`` (SafeRM or SmartRM) and record every RM scheduler decision."""
    if not config.has_rm:
        raise ValueError(f"config.mode={config.mode!r} has no RM scheduler: choose 'safe' or 'smart'")
    model = RMinerModel(config, record_series=False)
    model.start()  # the RM scheduler is made at the start
    model.rm.decision_log = []
    model.run_until(config.horizon)
    return [Decision(*d) for d in model.rm.decision_log]


def reference_traverse_order(shadow, free, mode: str) -> list[int]:
    """Exercise 09's ``traverse_order`` answered by the library (:func:`.rm_scheduler.shadow_order`), as plain
    ints: the check of ``rm_choose`` hands it to the student's ``rm_choose`` (``using=``), so a wrong
    ``traverse_order`` costs its own check only.

    >>> reference_traverse_order([[2, 1], [6, 1], [0, 0]], [[9, 9], [7, 2], [5, 5]], "safe")
    [1, 0]
    """
    from .rm_scheduler import shadow_order

    return [int(m) for m in shadow_order(np.asarray(shadow), np.asarray(free), mode)]


def first_difference(yours: Sequence, expected: Sequence, describe: Callable[[int], str], what: str,
                     inputs: Callable[[int], Mapping[str, Any]] | None = None) -> None:
    """Raise :class:`~cluster_sim.checking.CheckFailed` naming the first index where ``yours`` and ``expected`` differ.

    ``inputs(i)``: what the student's function was given for index ``i`` (by its parameter names); the message then
    ends with the call that shows it, ``show_case('<what> <i>')``.

    >>> first_difference([1, 5], [1, 2], lambda i: f"machine {i}", "decision", inputs=lambda i: {"machine": i})
    Traceback (most recent call last):
    ...
    cluster_sim.checking.CheckFailed: decision 1 of 2 differs from the reference:
      machine 1
      yours:    5
      expected: 2
      to look at it: from cluster_sim.checking import show_case; show_case('decision 1')
    """
    if len(yours) != len(expected):
        raise CheckFailed(f"{what}: you returned {len(yours)} values for {len(expected)} {what}s")
    for i, (a, b) in enumerate(zip(yours, expected)):
        if not _same(a, b):
            raise CheckFailed(
                f"{what} {i} of {len(expected)} differs from the reference:\n  {describe(i)}\n"
                f"  yours:    {a!r}\n  expected: {b!r}" + (name_case(f"{what} {i}", dict(inputs(i))) if inputs else "")
            )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.integer, int)) and isinstance(b, (np.integer, int)):
        return int(a) == int(b)
    return a == b
