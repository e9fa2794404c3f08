"""The job resource model's LP (paper §5), built block by block as sparse ``A_ub x <= b_ub`` rows.

J(s) (see :mod:`.penalty`) has two non-linear pieces, positive parts and the debt recursion. The
"standard lossless transformations" the paper mentions turn them into linear constraints on extra
variables that the objective pushes down onto their lower bounds:

* ``u_ik >= s_ik - s_k``, ``u_ik >= 0``: the shortfall ``(s_ik - s_k)+``. The over-allocation needs
  no variable of its own, because ``(s_k - s_ik)+ = (s_k - s_ik) + (s_ik - s_k)+``:
  ``A_o(s) = 1/N [N sum_k s_k - sum_ik s_ik + sum_ik u_ik]`` (a third fewer variables);
* ``D_ik >= D_i,k-1 + s_ik - s_k``, ``D_ik >= 0`` (with ``D_i,-1 = 0``): the debt. Only ``D_iK``
  is in the objective, but every ``D_ik`` is bounded below by the recursion, so the cheapest
  feasible ``D_iK`` is exactly the recursion's ``(.)+`` value;
* ``epsilon >= 1/N sum_i sum_k u_ik / sum_k s_ik``: the regulariser, whose weight is ``beta``.

Variables, in this order (see :class:`LPLayout`): ``s`` (K), ``u`` (N*K, run-major), ``D`` (N*K,
run-major) and, when the regulariser is on, ``epsilon``; all bounded below by 0. A month of
minute-level history (30 x 1440) gives 2NK + K + 1 = 87,841 variables and 2NK + 1 = 86,401 rows,
inside the paper's "less than 100K variables and constraints".

Example
-------
>>> layout = LPLayout(n_runs=2, n_steps=2)
>>> layout.n_variables, layout.s(1), layout.u(1, 0), layout.d(0, 1)
(10, 1, 4, 7)
>>> A, b = debt_constraints([[2, 0], [0, 3]], layout)
>>> A.toarray()[3], float(b[3])     # run 1, step 1:  -s_1 + D_10 - D_11 <= -s_11
(array([ 0., -1.,  0.,  0.,  0.,  0.,  0.,  0.,  1., -1.]), -3.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ... import validate
from .runs import check_skylines


@dataclass(frozen=True)
class LPLayout:
    """Where each variable of the LP sits in the vector ``x``: ``s | u | D | [epsilon]``."""

    n_runs: int
    n_steps: int
    with_epsilon: bool = False

    def __post_init__(self):
        for name in ("n_runs", "n_steps"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name}={v!r} is not allowed: need an integer >= 1")

    def s(self, k):
        """Index of ``s_k`` (works on arrays of k too)."""
        return k

    def u(self, i, k):
        """Index of the shortfall ``u_ik``."""
        return self.n_steps + i * self.n_steps + k

    def d(self, i, k):
        """Index of the debt ``D_ik``."""
        return self.n_steps * (1 + self.n_runs) + i * self.n_steps + k

    @property
    def epsilon(self) -> int:
        if not self.with_epsilon:
            raise ValueError("this layout has no epsilon variable (with_epsilon=False)")
        return self.n_steps * (1 + 2 * self.n_runs)

    @property
    def n_variables(self) -> int:
        return self.n_steps * (1 + 2 * self.n_runs) + int(self.with_epsilon)


def _grid(layout: LPLayout) -> tuple[np.ndarray, np.ndarray]:
    i, k = np.divmod(np.arange(layout.n_runs * layout.n_steps), layout.n_steps)
    return i, k


def _runs_for(skylines, layout: LPLayout) -> np.ndarray:
    runs = check_skylines(skylines, min_runs=1)
    if runs.shape != (layout.n_runs, layout.n_steps):
        raise ValueError(
            f"skylines has shape {runs.shape} but layout is for ({layout.n_runs}, {layout.n_steps}) runs x steps"
        )
    return runs


def shortfall_constraints(skylines, layout: LPLayout) -> tuple[sparse.csr_array, np.ndarray]:
    """Rows ``-s_k - u_ik <= -s_ik`` (i.e. ``u_ik >= s_ik - s_k``), row ``i*K + k``."""
    runs = _runs_for(skylines, layout)
    i, k = _grid(layout)
    rows = np.arange(i.size)
    A = sparse.coo_array(
        (np.full(2 * i.size, -1.0), (np.concatenate([rows, rows]), np.concatenate([layout.s(k), layout.u(i, k)]))),
        shape=(i.size, layout.n_variables),
    ).tocsr()
    return A, -runs.ravel()


def debt_constraints(skylines, layout: LPLayout) -> tuple[sparse.csr_array, np.ndarray]:
    """Rows ``-s_k + D_i,k-1 - D_ik <= -s_ik`` (i.e. ``D_ik >= D_i,k-1 + s_ik - s_k``), row ``i*K + k``.

    At ``k = 0`` there is no ``D_i,-1`` (the debt starts at 0), so that row has two entries.
    Together with the bound ``D_ik >= 0`` these rows are the debt recursion's ``(.)+``.
    """
    runs = _runs_for(skylines, layout)
    i, k = _grid(layout)
    rows = np.arange(i.size)
    later = k > 0
    r = np.concatenate([rows, rows, rows[later]])
    c = np.concatenate([layout.s(k), layout.d(i, k), layout.d(i[later], k[later] - 1)])
    v = np.concatenate([np.full(i.size, -1.0), np.full(i.size, -1.0), np.ones(int(later.sum()))])
    A = sparse.coo_array((v, (r, c)), shape=(i.size, layout.n_variables)).tocsr()
    return A, -runs.ravel()


def epsilon_constraint(skylines, layout: LPLayout) -> tuple[sparse.csr_array, np.ndarray]:
    """The one row ``1/N sum_ik u_ik / sum_k s_ik - epsilon <= 0``."""
    runs = _runs_for(skylines, layout)
    i, k = _grid(layout)
    weights = 1.0 / (layout.n_runs * runs.sum(axis=1))[i]
    cols = np.concatenate([layout.u(i, k), [layout.epsilon]])
    vals = np.concatenate([weights, [-1.0]])
    A = sparse.coo_array((vals, (np.zeros(cols.size, dtype=int), cols)), shape=(1, layout.n_variables)).tocsr()
    return A, np.zeros(1)


def objective(skylines, layout: LPLayout, alpha: float, beta: float = 0.0) -> tuple[np.ndarray, float]:
    """Cost vector ``c`` and the constant term, so that ``c @ x + constant = J(s)`` at the optimum.

    The constant ``-alpha/N sum_ik s_ik`` comes from writing the over-allocation through ``u``.
    """
    runs = _runs_for(skylines, layout)
    a = validate.number(alpha, "alpha", lo=0, hi=1)
    b = validate.number(beta, "beta", lo=0)
    n, k = runs.shape
    c = np.zeros(layout.n_variables)
    c[layout.s(np.arange(k))] = a  # 1/N * sum over the N runs of s_k
    c[layout.u(0, 0) : layout.u(0, 0) + n * k] = a / n
    c[layout.d(np.arange(n), k - 1)] = (1.0 - a) / n  # only the last step's debt is charged
    if layout.with_epsilon:
        c[layout.epsilon] = b
    elif b:
        raise ValueError(f"beta={beta!r} needs a layout with_epsilon=True")
    return c, -a * float(runs.sum()) / n


@dataclass(frozen=True, eq=False)
class LinearProgram:
    """One LP for ``linprog``: ``min c @ x + constant`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``,
    ``0 <= x <= upper``; the allocation is ``s = skyline_map @ x``."""

    c: np.ndarray
    constant: float
    A_ub: sparse.csr_array
    b_ub: np.ndarray
    A_eq: sparse.csr_array | None
    b_eq: np.ndarray | None
    upper: np.ndarray | None  # None: no upper bounds
    skyline_map: sparse.csr_array  # K x n_variables
    formulation: str

    @property
    def n_variables(self) -> int:
        return int(self.c.size)

    @property
    def n_constraints(self) -> int:
        """Rows of ``A_ub`` and ``A_eq`` (variable bounds are not counted)."""
        return int(self.A_ub.shape[0] + (0 if self.A_eq is None else self.A_eq.shape[0]))

    @property
    def bounds(self):
        """``bounds`` for ``linprog``."""
        if self.upper is None:
            return (0, None)
        return np.column_stack([np.zeros(self.n_variables), self.upper])

    def skyline(self, x: np.ndarray) -> np.ndarray:
        """The allocation ``s`` in a solution ``x``."""
        return self.skyline_map @ x


def build_lp(skylines, alpha: float, beta: float | None = None) -> LinearProgram:
    """The paper's casting with the debt recursion; ``beta=None`` leaves out the regulariser."""
    runs = check_skylines(skylines, min_runs=1)
    layout = LPLayout(*runs.shape, with_epsilon=beta is not None)
    blocks = [shortfall_constraints(runs, layout), debt_constraints(runs, layout)]
    if layout.with_epsilon:
        blocks.append(epsilon_constraint(runs, layout))
    A = sparse.vstack([blk[0] for blk in blocks], format="csr")
    b_ub = np.concatenate([blk[1] for blk in blocks])
    c, constant = objective(runs, layout, alpha, 0.0 if beta is None else beta)
    pick_s = sparse.eye_array(layout.n_steps, layout.n_variables, format="csr")  # s is x[:K]
    return LinearProgram(c, constant, A, b_ub, None, None, None, pick_s, "recursion")
