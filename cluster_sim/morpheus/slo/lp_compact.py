"""A compact casting of the same LP (paper §5), for a month of minute-level history in seconds.

:mod:`.lp` casts J(s) the textbook way: a shortfall ``u_ik`` and a debt ``D_ik`` per run and step.
For 30 runs x 1440 steps HiGHS needs over a minute for the two solves with it, because every
``s_k`` couples N rows and every run's debts form a chain of K. Two other lossless
transformations give an LP with the same optimum over ``s`` that HiGHS solves in a few seconds:

* **each step's cost as segments.** ``alpha/N sum_i (s_k - s_ik)+ + beta/N sum_i (s_ik - s_k)+ / A_i``
  (``A_i = sum_k s_ik``) is a convex piecewise-linear function of the single number ``s_k``, with
  breakpoints at the runs' values at that step. Write ``s_k`` as a sum of segment variables
  ``delta_kj``, segment j running from the j-th to the (j+1)-th smallest run value, bounded by its
  length and costing its slope (j runs over-allocated, N - j short). The slopes increase with j, so
  a minimiser fills the segments in order and the cost is exact. Segments are bounds, not rows,
  which is what makes this fast. The regulariser's ``epsilon`` is rolled into the slopes (the
  paper's ``beta * epsilon`` with ``epsilon`` at its lower bound, which the positive weight
  ``beta`` enforces anyway).
* **the debt recursion unrolled** (Lindley's identity). ``D_ik = (D_i,k-1 + s_ik - s_k)+`` from
  ``D_i0 = 0`` gives ``D_iK = max(0, max_j sum_{l >= j} (s_il - s_l))``: the worst shortfall over
  any suffix of the run. With suffix sums ``T_j = sum_{l >= j} s_l`` (K equality rows) that is
  ``D_i >= C_ij - T_j`` for every j, where ``C_ij = sum_{l >= j} s_il`` is fixed data. Rows with
  ``s_ij = 0`` are implied by row ``j + 1`` (``C_ij = C_i,j+1`` and ``T_j >= T_j+1``) and dropped.

Variables: ``delta`` ((N+1) K, step-major, bounded), ``T`` (K), ``D`` (N), all >= 0. The tests
check that both castings reach the same optimum on random skylines.

>>> lp = build_compact_lp([[2, 0], [0, 2]], alpha=1.0)
>>> lp.n_variables, lp.n_constraints
(10, 4)
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ... import validate
from .runs import check_skylines
from .lp import LinearProgram


def _coo(rows, cols, vals, shape) -> sparse.csr_array:
    return sparse.coo_array((vals, (rows, cols)), shape=shape).tocsr()


def segment_costs(runs: np.ndarray, alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Per step: the slopes and lengths of the N + 1 segments of its cost, and the total cost at s = 0.

    Returns ``slope`` and ``length`` ((N+1) x K; the last segment is unbounded, length ``inf``) and
    ``sum_k cost_k(0)``, so that ``cost_k(s) = cost_k(0) + sum_j slope_jk * (filled part of segment j)``.
    """
    n, k = runs.shape
    order = np.argsort(runs, axis=0, kind="stable")
    x = np.take_along_axis(runs, order, axis=0)  # each step's run values, ascending
    short_w = np.take_along_axis(np.broadcast_to((beta / (n * runs.sum(axis=1)))[:, None], (n, k)), order, axis=0)
    zero = np.zeros((1, k))
    # on segment j the j lowest runs are over-allocated (weight alpha/N each), the others short
    over_w = np.vstack([zero, np.cumsum(np.full((n, k), alpha / n), axis=0)])
    still_short = np.vstack([np.cumsum(short_w[::-1], axis=0)[::-1], zero])
    slope = over_w - still_short
    length = np.diff(np.vstack([zero, x, np.full((1, k), np.inf)]), axis=0)
    return slope, length, float((short_w * x).sum())


def build_compact_lp(skylines, alpha: float, beta: float | None = None) -> LinearProgram:
    """The compact casting; ``beta=None`` (or 0) leaves out the regulariser."""
    runs = check_skylines(skylines, min_runs=1)
    a = validate.number(alpha, "alpha", lo=0, hi=1)
    b = 0.0 if beta is None else validate.number(beta, "beta", lo=0)
    n, k = runs.shape
    n_seg = (n + 1) * k
    T0, d0 = n_seg, n_seg + k
    n_var = n_seg + k + n
    slope, length, cost_at_zero = segment_costs(runs, a, b)

    c = np.zeros(n_var)
    c[:n_seg] = slope.T.ravel()  # step-major: variable k*(N+1) + j
    c[d0:] = (1.0 - a) / n  # the final debt of each run
    upper = np.full(n_var, np.inf)
    upper[:n_seg] = length.T.ravel()

    step = np.repeat(np.arange(k), n + 1)
    s_map = _coo(step, np.arange(n_seg), np.ones(n_seg), (k, n_var))  # s_k = sum_j delta_kj

    # suffix sums: T_j - T_j+1 - sum_m delta_jm = 0 (T_K = 0)
    jj = np.arange(k)
    A_eq = _coo(
        np.concatenate([jj, jj[:-1], step]),
        np.concatenate([T0 + jj, T0 + jj[:-1] + 1, np.arange(n_seg)]),
        np.concatenate([np.ones(k), -np.ones(k - 1), -np.ones(n_seg)]),
        (k, n_var),
    )

    # debt: D_i + T_j >= C_ij for every j with s_ij > 0
    suffix = np.cumsum(runs[:, ::-1], axis=1)[:, ::-1]
    i_idx, j_idx = np.nonzero(runs > 0)
    r = np.arange(i_idx.size)
    A_ub = _coo(np.concatenate([r, r]), np.concatenate([d0 + i_idx, T0 + j_idx]), -np.ones(2 * r.size),
                (r.size, n_var))
    return LinearProgram(c, cost_at_zero, A_ub, -suffix[i_idx, j_idx], A_eq, np.zeros(k), upper, s_map, "compact")

