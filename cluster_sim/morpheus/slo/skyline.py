"""R*, the job resource model (paper §5): the LP fit of a periodic job's skylines, and baselines.

:func:`fit_skyline` solves ``min alpha A_o(s) + (1 - alpha) A_u(s)`` over allocations ``s >= 0``
with HiGHS (the LP is built by :mod:`.lp`), then, as the paper does, rolls the regulariser into the
objective: the first solve's optimum ``V`` sets ``beta = beta_fraction * V`` and a second solve
minimises ``alpha A_o + (1 - alpha) A_u + beta epsilon``. ``beta_fraction=0`` stops after the first
solve, which shows the "lazy" solution the regulariser exists to prevent.

Over, under and epsilon in the returned :class:`SkylineFit` are recomputed in closed form from the
returned skyline (:func:`.penalty.penalty`), not read off the LP's auxiliary variables (those are
arbitrary wherever their weight is zero, e.g. the debts when ``alpha = 1``); ``objective`` is the
solver's. The two agree to solver tolerance, which the tests check.

The baselines score on the same J(s): the user's constant provisioning, the max envelope (never
in debt, most waste), the mean and a high per-step percentile.

Example
-------
>>> runs = [[4, 4, 1], [4, 2, 1], [3, 4, 2]]
>>> fit = fit_skyline(runs, alpha=0.5)
>>> fit.skyline.round(3).tolist(), round(fit.over, 3), round(fit.under, 3)
([4.0, 4.0, 1.0], 1.0, 0.333)
>>> fit_skyline(runs, alpha=0.0).under            # all weight on the final debt
0.0
>>> max_envelope(runs).tolist()
[4.0, 4.0, 2.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import validate
from .runs import MIN_RUNS, check_skylines
from .lp import LinearProgram, build_lp
from .lp_compact import build_compact_lp
from .penalty import _terms

DEFAULT_BETA_FRACTION = 0.1  # the paper: "setting beta as 0.1V yields good results across the board"
FORMULATIONS = {"compact": build_compact_lp, "recursion": build_lp}


class SkylineFitError(RuntimeError):
    """The LP solver failed (time limit, numerical trouble): there is no R* to return."""


@dataclass(frozen=True, eq=False)
class SkylineFit:
    """R* for one periodic job, with the terms of J(R*) and the size of the LP that produced it."""

    skyline: np.ndarray  # R*: containers to reserve at each step, shape (K,)
    over: float  # A_o(R*), closed form
    under: float  # A_u(R*), closed form
    epsilon: float  # normalised under-allocation of R*, closed form
    objective: float  # the solver's optimum: alpha*over + (1-alpha)*under + beta*epsilon
    alpha: float
    beta: float  # beta_fraction * unregularised_objective (0 when the regulariser is off)
    beta_fraction: float
    unregularised_objective: float  # V, the first solve's optimum
    n_runs: int
    n_steps: int
    n_variables: int  # of the last solve
    n_constraints: int  # rows of A_ub in the last solve
    solves: int  # 1 without the regulariser, 2 with it
    formulation: str  # the LP casting solved: "compact" or "recursion"

    @property
    def peak(self) -> float:
        return float(self.skyline.max())

    @property
    def area(self) -> float:
        """Container-steps reserved by R*."""
        return float(self.skyline.sum())


def _solve(runs: np.ndarray, alpha: float, beta: float | None, formulation: str, options: dict | None):
    lp: LinearProgram = FORMULATIONS[formulation](runs, alpha, beta)
    from scipy.optimize import linprog  # here, not at the top: ~0.1 s of every kernel

    res = linprog(
        lp.c, A_ub=lp.A_ub, b_ub=lp.b_ub, A_eq=lp.A_eq, b_eq=lp.b_eq, bounds=lp.bounds,
        method="highs", options=options or {},
    )
    if res.status != 0 or res.x is None:
        stage = "unregularised" if beta is None else f"regularised (beta={beta:g})"
        raise SkylineFitError(
            f"the {stage} {formulation} LP for {runs.shape[0]} runs x {runs.shape[1]} steps did not solve: "
            f"status {res.status}, {res.message}"
        )
    return lp.skyline(res.x), float(res.fun) + lp.constant, lp


def fit_skyline(
    skylines,
    alpha: float,
    *,
    beta_fraction: float = DEFAULT_BETA_FRACTION,
    min_runs: int = MIN_RUNS,
    formulation: str = "compact",
    solver_options: dict | None = None,
) -> SkylineFit:
    """Fit R* to ``skylines`` (N x K: runs aligned at start, one-minute steps, zero-padded).

    ``alpha`` in [0, 1] weighs over-allocation against the final debt (1: least waste; the paper
    finds 0.01 the best balance). ``beta_fraction * V`` is the regulariser's weight; 0 switches it
    off (one solve). ``formulation`` picks the casting: ``"recursion"`` is the textbook one with a debt
    variable per run and step (:mod:`.lp`), ``"compact"`` the same optimum with the per-step costs as
    bounded segments and the debt unrolled (:mod:`.lp_compact`; 30 x 1440 in seconds instead of
    a minute or more). ``solver_options`` go to
    HiGHS through ``linprog`` (e.g. ``{"time_limit": 5}``).
    Raises ``ValueError`` on bad input and :class:`SkylineFitError` when the solver fails.

    With ``alpha = 0`` the first optimum is ``V = 0`` (reserve enough and no debt is left), so
    ``beta = 0`` too: the paper's scaling switches the regulariser off there.

    >>> fit_skyline([[1, 1], [1, 1]], alpha=0.5).skyline.tolist()
    [1.0, 1.0]
    >>> fit_skyline([[1, 1]], alpha=0.5)
    Traceback (most recent call last):
    ...
    ValueError: skylines has 1 run(s): need at least min_runs=2 runs of history
    """
    runs = check_skylines(skylines, min_runs=min_runs)
    a = validate.number(alpha, "alpha", lo=0, hi=1)
    frac = validate.number(beta_fraction, "beta_fraction", lo=0)
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation={formulation!r} is not allowed: choose one of {', '.join(map(repr, FORMULATIONS))}")
    x, value, lp = _solve(runs, a, None, formulation, solver_options)
    v, beta, solves = value, 0.0, 1
    if frac > 0 and v > 0:
        beta = frac * v
        x, value, lp = _solve(runs, a, beta, formulation, solver_options)
        solves = 2
    # HiGHS honours the bound s >= 0 up to its feasibility tolerance; clip the last 1e-9s
    s = np.maximum(x, 0.0)
    over, under, eps = _terms(s, runs)
    return SkylineFit(
        skyline=s, over=over, under=under, epsilon=eps, objective=value, alpha=a, beta=beta,
        beta_fraction=frac, unregularised_objective=v, n_runs=runs.shape[0], n_steps=runs.shape[1],
        n_variables=lp.n_variables, n_constraints=lp.n_constraints, solves=solves, formulation=formulation,
    )


# ---- baselines ---------------------------------------------------------------------------------
def max_envelope(skylines, *, min_runs: int = 1) -> np.ndarray:
    """The per-step maximum over runs: never leaves a debt, wastes the most."""
    return check_skylines(skylines, min_runs=min_runs).max(axis=0)


def mean_skyline(skylines, *, min_runs: int = 1) -> np.ndarray:
    """The per-step mean over runs.

    >>> mean_skyline([[2, 0], [0, 2]]).tolist()
    [1.0, 1.0]
    """
    return check_skylines(skylines, min_runs=min_runs).mean(axis=0)


def percentile_skyline(skylines, q: float = 95.0, *, min_runs: int = 1) -> np.ndarray:
    """The per-step ``q``-th percentile over runs (linear interpolation)."""
    return np.percentile(check_skylines(skylines, min_runs=min_runs), validate.number(q, "q", lo=0, hi=100), axis=0)


def user_skyline(provisioned: float, n_steps: int) -> np.ndarray:
    """A user's manual provisioning: the same container count at every step of the job.

    >>> user_skyline(5, 3).tolist()
    [5.0, 5.0, 5.0]
    """
    p = validate.number(provisioned, "provisioned", lo=0)
    if not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps={n_steps!r} is not allowed: need an integer >= 1")
    return np.full(int(n_steps), p)
