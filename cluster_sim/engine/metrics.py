"""Exact time-weighted metrics: integrals of piecewise-constant quantities, not per-step samples.

Example
-------
>>> q = StepIntegral()
>>> q.set(2.0, 3); q.set(5.0, 1)
>>> q.total(6.0)      # 0 on [0,2), 3 on [2,5), 1 on [5,6)
10.0
>>> q.mean(6.0)
1.6666666666666667
"""

from __future__ import annotations

from array import array

import numpy as np


class StepIntegral:
    """Integral over time of a value that changes only at events.

    ``record=True`` also keeps the change points, so figures can show the exact step curve (or
    exact bin averages, :meth:`binned`) instead of samples. They are kept as C doubles (8 bytes each, where
    a list held a pointer and a Python number per entry): a paper-scale run records about seven change
    points per task in its usage and queue series.
    """

    __slots__ = ("t", "value", "area", "t0", "_times", "_values")

    def __init__(self, t0: float = 0.0, value: float = 0.0, record: bool = True):
        self.t0 = self.t = t0
        self.value = value
        self.area = 0.0
        self._times = array("d", [t0]) if record else None
        self._values = array("d", [value]) if record else None

    def set(self, t: float, value: float) -> None:
        if t < self.t:
            raise ValueError(f"time went backwards: {t} < {self.t}")
        self.area += self.value * (t - self.t)
        self.t = t
        self.value = value
        if self._times is not None:
            if self._times[-1] == t:
                self._values[-1] = value
            elif self._values[-1] != value:  # an unchanged value is no change point
                self._times.append(t)
                self._values.append(value)

    def add(self, t: float, delta: float) -> None:
        self.set(t, self.value + delta)

    def total(self, t: float) -> float:
        """Integral from ``t0`` to ``t`` (``t`` at or after the last change)."""
        return self.area + self.value * (t - self.t)

    def mean(self, t: float) -> float:
        span = t - self.t0
        return self.total(t) / span if span > 0 else float(self.value)

    @property
    def recording(self) -> bool:
        """Whether change points are kept (``record=True``), so :meth:`steps` can be called."""
        return self._times is not None

    def steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Change times and the value from each time on."""
        if self._times is None:
            raise ValueError("this StepIntegral was created with record=False")
        return np.array(self._times, dtype=float), np.array(self._values, dtype=float)  # copies: recording goes on

    def binned(self, t_end: float, bins: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact averages over ``bins`` equal bins of [t0, t_end]: bin edges and means."""
        return binned_means(*self.steps(), t_end, bins)


def binned_means(times, values, t_end: float, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact averages of a step function (``values[i]`` from ``times[i]`` on) over ``bins`` equal
    bins of [times[0], t_end]: the cumulative integral is linear between changes, so interpolating
    it at the bin edges is exact."""
    times, values = np.asarray(times, float), np.asarray(values, float)
    t = np.append(times, t_end) if times[-1] < t_end else times
    cum = np.concatenate([[0.0], np.cumsum(values[: len(t) - 1] * np.diff(t))])
    edges = np.linspace(times[0], t_end, bins + 1)
    return edges, np.diff(np.interp(edges, t, cum)) / np.diff(edges)


def work_accounting(tasks: dict, horizon: float, cpu_capacity: float, speeds) -> dict[str, float]:
    """CPU work from the task records, as shares of ``C·T`` (capacity times horizon): ``done`` up to
    ``horizon``, ``left`` (still running or waiting then) and ``offered`` (every task that did not
    fail). Nothing is lost: ``offered == done + left``; and ``done`` is the utilisation integral.

    ``tasks`` is :attr:`ClusterResult.tasks` (``cpu``, ``duration`` at speed 1, ``machine``, ``start``,
    ``finish``, ``state``); ``speeds`` the speed of each hardware type (machine ``i`` is of type
    ``i mod len(speeds)``). A task that never started counts at speed 1.
    """
    cpu, machine = np.asarray(tasks["cpu"], float), np.asarray(tasks["machine"])
    start, finish, state = np.asarray(tasks["start"], float), np.asarray(tasks["finish"], float), np.asarray(tasks["state"])
    speed = np.asarray(speeds, float)[np.maximum(machine, 0) % len(speeds)]
    duration = np.asarray(tasks["duration"], float)
    service = np.where(machine >= 0, duration / speed, duration)  # a task's run time on its machine
    started, ended = ~np.isnan(start), ~np.isnan(finish)
    # select the started tasks after the product (their cpu too): a task that never started has no run time
    done = np.sum((cpu * (np.where(ended, finish, horizon) - start))[started])
    running = started & ~ended
    alive = state != "failed"
    left = np.sum((cpu * (start + service - horizon))[running]) + np.sum((cpu * service)[~started & alive])
    offered = np.sum((cpu * service)[alive])
    ct = cpu_capacity * horizon
    return {"done": float(done / ct), "left": float(left / ct), "offered": float(offered / ct)}
