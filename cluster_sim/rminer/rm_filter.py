"""The RM filter (§3.3): which tasks go to the RM scheduler, and in what order.

An RM task must match the fleeting, fragmented shadow resources (short execution time, small
demand) and be preemptible and of low priority (it may be killed or migrated, §3.5). Of the tasks
that pass, a share ``ratio`` is diverted to the RM queue (the paper's *filter ratio*, 50% by
default). The execution-time cut-off is the *filter threshold*: ``multiplier * d_u`` by default (the
paper: "the default filter threshold is the updating delay"), scaled by the five factors of §3.3:
it grows with (2) the current shadow amount, (3) the task submission rate, (4) the RM scheduling
success rate and (5) the update delay, and shrinks with (1) the RM queue length. The paper calls
this function qualitative; ours is the simplest one with those directions, each factor measured
relative to its nominal value so that the threshold is exactly ``multiplier * d_u`` at the nominal
state, clipped to ``[lo, hi]`` times that.

Thresholds of §4.7: SafeRM and SmartRM both start from the update delay (``multiplier=1``);
SmartRM-C and SmartRM-A are SmartRM with 2x and 4x the update delay. SmartRM's longer *shadow
resource time* (Table 2: ``T_s + W_d`` against SafeRM's ``T_s``) is not in the threshold: it is
how long its RM tasks may keep running, through the resource waiting delay ``W_d`` after a view
update until a conflict (SafeRM evicts them at the update, :mod:`.eviction`).

Queue order (Table 2): SafeRM is *shortest job first*; SmartRM is *lowest priority first* (then the
hungrier task first: SmartRM "gives priority to hungry tasks with lower priority").

Example
-------
>>> f = RMFilter(mode="safe", multiplier=1.0, ratio=0.5, max_demand=(4, 2), max_priority=1)
>>> nominal = FilterFactors(rm_queue_length=0, shadow_amount=10, submission_rate=100,
...                         success_rate=1.0, update_delay=0.5)
>>> f.threshold(nominal, nominal)
0.5
>>> f.eligible(duration=0.3, demand=(1, 1), priority=0, threshold=0.5)
True
>>> f.queue_key(duration=0.3, demand=(1, 1), priority=0, seq=7)
(0.3, 7)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MODES = ("safe", "smart")


@dataclass(frozen=True)
class FilterFactors:
    """The five factors of §3.3, measured now (or their nominal values)."""

    rm_queue_length: float  # (1) tasks waiting in the RM queue
    shadow_amount: float  # (2) shadow resources in the shadow state view (resource 0)
    submission_rate: float  # (3) tasks submitted per second
    success_rate: float  # (4) share of RM-queue tasks placed on shadow resources (0..1)
    update_delay: float  # (5) seconds between view updates


@dataclass(frozen=True)
class RMFilter:
    """Filter policy of one RMiner mode. ``multiplier`` scales the update delay into the threshold."""

    mode: str = "safe"
    multiplier: float = 1.0
    ratio: float = 0.5
    max_demand: tuple = (16, 4)
    max_priority: int = 1
    adaptive: bool = True
    queue_scale: float = 500.0  # the RM queue length at which the threshold halves
    lo: float = 0.25
    hi: float = 4.0

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode={self.mode!r} is not allowed: choose one of {', '.join(map(repr, MODES))}")
        if not 0.0 <= self.ratio <= 1.0:
            raise ValueError(f"ratio={self.ratio!r} is out of range: allowed 0 <= ratio <= 1")
        if not self.multiplier > 0:
            raise ValueError(f"multiplier={self.multiplier!r} is out of range: need multiplier > 0")
        if not 0 < self.lo <= 1 <= self.hi:
            raise ValueError(f"lo={self.lo!r}, hi={self.hi!r} are not allowed: need 0 < lo <= 1 <= hi")
        if not self.queue_scale > 0:
            raise ValueError(f"queue_scale={self.queue_scale!r} is out of range: need queue_scale > 0")

    def threshold(self, now: FilterFactors, nominal: FilterFactors) -> float:
        """Execution-time cut-off in seconds (see the module docstring)."""
        base = self.multiplier * now.update_delay  # factor (5); the same for SafeRM and SmartRM (§4.7)
        if not self.adaptive:
            return base

        def rel(x: float, x0: float) -> float:
            return x / x0 if x0 > 0 else 1.0

        g = (
            rel(now.shadow_amount, nominal.shadow_amount)  # (2)
            * rel(now.submission_rate, nominal.submission_rate)  # (3)
            * rel(now.success_rate, nominal.success_rate)  # (4)
            * self.queue_scale / (self.queue_scale + now.rm_queue_length)  # (1), inversely
        )
        return base * min(max(float(g), self.lo), self.hi)  # np.clip on a scalar costs 20x, once per job

    def eligible(self, duration: float, demand, priority: int, threshold: float) -> bool:
        """Short enough, small enough, low-priority (so preemptible) - before the ``ratio`` draw."""
        if not (duration <= threshold and priority <= self.max_priority):
            return False
        for d, m in zip(demand, self.max_demand):  # a loop, not all(generator): once per arriving task
            if d > m:
                return False
        return True

    def queue_key(self, duration: float, demand, priority: int, seq: int) -> tuple:
        """Sort key of the RM queue (smallest first); ``seq`` (arrival order) breaks ties."""
        if self.mode == "safe":
            return (duration, seq)  # SJF
        return (priority, -int(demand[0]), seq)  # lowest priority first, hungrier first
