"""J(s) in closed form: the job resource model's cost of a candidate allocation (paper §5).

Given N runs' skylines ``s_ik`` (containers used by run i at step k, runs aligned at their start,
zero-padded to K steps) and a candidate allocation ``s = (s_1, ..., s_K)``:

* over-allocation  ``A_o(s) = 1/N sum_i sum_k (s_k - s_ik)+``: containers reserved and not used;
  a container wasted at one step cannot be used later;
* debt  ``D_ik = (D_i,k-1 + s_ik - s_k)+`` with ``D_i0 = 0``: work run i could not do so far. The
  job is elastic and catches up when it gets more than it needs, but the debt never goes below
  zero: an early surplus is waste, not *credit* for later;
* under-allocation  ``A_u(s) = 1/N sum_i D_iK``: only the debt left at the *last* step counts;
* the regulariser's  ``epsilon(s) = 1/N sum_i [sum_k (s_ik - s_k)+ / sum_k s_ik]``: the average
  normalised instantaneous under-allocation, which a "lazy" allocation (starve early, catch up at
  the end) makes large;
* ``J(s) = alpha A_o(s) + (1 - alpha) A_u(s) + beta epsilon(s)``.

The LP of :mod:`.lp` minimises exactly this; :func:`penalty` recomputes it from any skyline, so the
LP's answer can be checked and the baselines (max envelope, mean, the user's constant) scored on the
same scale.

Example (the tiny case the exercise uses: each wrong reading gives a different ``under``)
-------
>>> runs = [[2, 0, 1], [0, 2, 1]]
>>> debt([1, 1, 1], runs)            # run 1's surplus at step 0 is NOT credit
array([[1., 0., 0.],
       [0., 1., 1.]])
>>> p = penalty([1, 1, 1], runs, alpha=0.5)
>>> p.over, p.under, round(p.epsilon, 4), p.objective
(1.0, 0.5, 0.3333, 0.75)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import validate
from .runs import check_skyline, check_skylines


@dataclass(frozen=True)
class Penalty:
    """The terms of J(s) for one allocation against one set of runs."""

    over: float  # A_o(s): mean over runs of the summed over-allocation (container-steps)
    under: float  # A_u(s): mean over runs of the debt left at the last step (container-steps)
    epsilon: float  # mean over runs of the normalised instantaneous under-allocation (0..1)
    objective: float  # alpha * over + (1 - alpha) * under + beta * epsilon


def _debt(s: np.ndarray, runs: np.ndarray) -> np.ndarray:
    n, k = runs.shape
    out = np.empty((n, k))
    d = np.zeros(n)
    for step in range(k):  # a recursion over steps, vectorised over runs
        d = np.maximum(d + runs[:, step] - s[step], 0.0)
        out[:, step] = d
    return out


def debt(skyline, skylines, *, min_runs: int = 1) -> np.ndarray:
    """The debt ``D_ik`` of every run at every step (N x K) under allocation ``skyline``.

    >>> debt([1, 3], [[2, 1]])   # short by 1 at step 0, then 2 spare: the debt is paid, never negative
    array([[1., 0.]])
    """
    runs = check_skylines(skylines, min_runs=min_runs)
    s = check_skyline(skyline, runs.shape[1])
    return _debt(s, runs)


def first_debt_difference(got, expected, *, tol: float = 1e-9) -> tuple[int, int] | None:
    """The first (run, step), in run-major order, where two N x K debt tables differ; ``None`` if none.

    What an exercise check reports instead of two whole tables.

    >>> right = debt([1, 1, 1], [[2, 0, 1], [0, 2, 1]])
    >>> with_credit = np.array([[1, 0, 0], [-1, 0, 0]])   # run 1's early surplus kept as credit
    >>> first_debt_difference(with_credit, right)
    (1, 0)
    """
    a, b = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"got has shape {a.shape} but expected has {b.shape}: need one debt per run and step")
    bad = ~np.isclose(a, b, rtol=0.0, atol=tol)
    if not bad.any():
        return None
    i, k = np.argwhere(bad)[0]
    return int(i), int(k)


def _terms(s: np.ndarray, runs: np.ndarray) -> tuple[float, float, float]:
    n = runs.shape[0]
    gap = s[None, :] - runs  # > 0: over-allocated, < 0: under-allocated at that step
    over = float(np.maximum(gap, 0.0).sum() / n)
    under = float(_debt(s, runs)[:, -1].sum() / n)
    short = np.maximum(-gap, 0.0).sum(axis=1) / runs.sum(axis=1)
    return over, under, float(short.mean())


def penalty(skyline, skylines, alpha: float, beta: float = 0.0, *, min_runs: int = 1) -> Penalty:
    """J(s) and its terms for allocation ``skyline`` (length K) against ``skylines`` (N x K).

    ``beta`` is the weight of the regulariser (the LP's ``beta = beta_fraction * V``); 0 leaves it out
    of ``objective`` but ``epsilon`` is always reported.

    >>> penalty([2, 2], [[2, 0], [0, 2]], alpha=1.0).over   # the max envelope wastes 2 per run
    2.0
    >>> penalty([0, 2], [[2, 0], [0, 2]], alpha=1.0)        # the lazy allocation: half the waste, no debt
    Penalty(over=1.0, under=0.0, epsilon=0.5, objective=1.0)
    """
    runs = check_skylines(skylines, min_runs=min_runs)
    s = check_skyline(skyline, runs.shape[1])
    a = validate.number(alpha, "alpha", lo=0, hi=1)
    b = validate.number(beta, "beta", lo=0)
    over, under, eps = _terms(s, runs)
    return Penalty(over, under, eps, a * over + (1.0 - a) * under + b * eps)
