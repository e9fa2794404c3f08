"""Placement policies: pure functions choosing a machine for a demand on a (possibly stale) view.

Signature: ``policy(free, demand, rng) -> int``, where ``free`` is an ``(n, R)`` integer array of
free units per machine as the scheduler believes it to be, ``demand`` an ``R``-vector, and the
result a machine index, or -1 when no machine fits in that view.

Example
-------
>>> import numpy as np
>>> free = np.array([[4, 4], [1, 1], [2, 8]])
>>> first_fit(free, (1, 1), None), best_fit(free, (1, 1), None), worst_fit(free, (1, 1), None)
(0, 1, 2)
"""

from __future__ import annotations

import numpy as np


def _fitting(free: np.ndarray, demand) -> np.ndarray:
    d = np.asarray(demand)
    return (free >= d).all(axis=1)


def first_fit(free: np.ndarray, demand, rng=None) -> int:
    """The lowest-numbered machine that fits."""
    ok = _fitting(free, demand)
    i = int(ok.argmax())
    return i if ok[i] else -1


def best_fit(free: np.ndarray, demand, rng=None) -> int:
    """The fitting machine with the least free capacity left after placing (units summed over
    resources); ties to the lowest index. Packs tightly, leaving whole machines free for big tasks."""
    ok = _fitting(free, demand)
    if not ok.any():
        return -1
    left = (free - np.asarray(demand)).sum(axis=1).astype(float)
    left[~ok] = np.inf
    return int(left.argmin())


def worst_fit(free: np.ndarray, demand, rng=None) -> int:
    """The fitting machine with the most free capacity left (spreads load); ties to the lowest index."""
    ok = _fitting(free, demand)
    if not ok.any():
        return -1
    left = free.sum(axis=1).astype(float)
    left[~ok] = -np.inf
    return int(left.argmax())


def random_fit(free: np.ndarray, demand, rng: np.random.Generator) -> int:
    """A uniformly random fitting machine (Omega's default: spreads parallel schedulers apart)."""
    idx = np.flatnonzero(_fitting(free, demand))
    if len(idx) == 0:
        return -1
    return int(idx[rng.integers(len(idx))])


POLICIES = {"first_fit": first_fit, "best_fit": best_fit, "worst_fit": worst_fit, "random": random_fit}
