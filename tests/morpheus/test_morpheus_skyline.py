"""The job resource model (§5): J(s) in closed form, the LP in both castings, fit_skyline, baselines."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.optimize import linprog

from cluster_sim.morpheus import (
    LPLayout, SkylineFitError, align_skylines, build_compact_lp, build_lp, debt, debt_constraints,
    first_debt_difference, fit_skyline, max_envelope, mean_skyline, penalty, percentile_skyline, user_skyline,
)

TOL = 1e-6


@st.composite
def skylines(draw, max_runs=5, max_steps=8):
    n = draw(st.integers(2, max_runs))
    k = draw(st.integers(1, max_steps))
    rows = draw(st.lists(st.lists(st.integers(0, 6), min_size=k, max_size=k), min_size=n, max_size=n))
    arr = np.array(rows, dtype=float)
    arr[arr.sum(axis=1) == 0, 0] = 1.0  # every run uses something
    scale = draw(st.sampled_from([1.0, 0.5, 13.0]))  # non-integer values too
    return arr * scale


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- J(s) in closed form ----------------------------------------------------------------------
def slow_penalty(s, runs, alpha, beta=0.0):
    """J(s) straight from the paper's formulas, loops and all."""
    n, k = len(runs), len(s)
    over = sum(max(s[j] - runs[i][j], 0) for i in range(n) for j in range(k)) / n
    finals, short = [], []
    for i in range(n):
        d = 0.0
        for j in range(k):
            d = max(d + runs[i][j] - s[j], 0.0)
        finals.append(d)
        short.append(sum(max(runs[i][j] - s[j], 0) for j in range(k)) / sum(runs[i]))
    under, eps = sum(finals) / n, sum(short) / n
    return over, under, eps, alpha * over + (1 - alpha) * under + beta * eps


@SETTINGS
@given(skylines(), st.floats(0, 1), st.floats(0, 5), st.data())
def test_penalty_matches_the_papers_formulas(runs, alpha, beta, data):
    s = np.array(data.draw(st.lists(st.floats(0, 10), min_size=runs.shape[1], max_size=runs.shape[1])))
    p = penalty(s, runs, alpha, beta)
    assert (p.over, p.under, p.epsilon, p.objective) == pytest.approx(slow_penalty(s, runs.tolist(), alpha, beta))


def test_worked_example_separates_the_three_misconceptions():
    # the exercise's case: each wrong reading of the debt gives a different A_u
    runs = np.array([[2, 0, 1], [0, 2, 1]], dtype=float)
    s = np.ones(3)
    right = penalty(s, runs, alpha=0.0).under
    d_credit = np.zeros(2)
    for k in range(3):
        d_credit = d_credit + runs[:, k] - s[k]  # debt allowed to go negative
    every_step = debt(s, runs).sum(axis=1).mean()  # charged at every step
    per_step = debt(s, runs)[:, -1].sum() / runs.shape[1]  # averaged over steps, not runs
    wrong = [max(d_credit.mean(), 0.0), every_step, per_step]
    assert right == 0.5
    assert all(not math.isclose(w, right) for w in wrong)
    assert len({right, *wrong}) == 4


def test_the_first_wrong_debt_is_named_by_run_and_step():
    runs = np.array([[2, 0, 1], [0, 2, 1]], dtype=float)
    s = np.ones(3)
    credit = np.cumsum(runs - s, axis=1)  # the recursion without its (.)+
    assert first_debt_difference(credit, debt(s, runs)) == (1, 0)
    assert first_debt_difference(debt(s, runs), debt(s, runs)) is None
    with pytest.raises(ValueError, match=r"got has shape \(2, 2\) but expected has \(2, 3\)"):
        first_debt_difference(credit[:, :2], debt(s, runs))


def test_debt_never_goes_negative_and_is_paid_back():
    d = debt([0, 5, 0], [[3, 1, 0], [0, 0, 2]])
    assert d.tolist() == [[3.0, 0.0, 0.0], [0.0, 0.0, 2.0]]


# ---- the LP ---------------------------------------------------------------------------------------
@SETTINGS
@given(skylines(), st.sampled_from([0.0, 0.01, 0.3, 0.5, 0.9, 1.0]), st.sampled_from([0.0, 0.1, 1.0]),
       st.sampled_from(["compact", "recursion"]))
def test_lp_objective_is_j_of_its_skyline(runs, alpha, beta_fraction, formulation):
    fit = fit_skyline(runs, alpha, beta_fraction=beta_fraction, formulation=formulation)
    closed = penalty(fit.skyline, runs, alpha, fit.beta)
    scale = 1.0 + abs(fit.objective)
    assert abs(closed.objective - fit.objective) <= TOL * scale
    assert (fit.over, fit.under, fit.epsilon) == pytest.approx((closed.over, closed.under, closed.epsilon))
    assert fit.solves == (2 if beta_fraction > 0 and fit.unregularised_objective > 0 else 1)
    assert fit.beta == pytest.approx(beta_fraction * fit.unregularised_objective if fit.solves == 2 else 0.0)


@SETTINGS
@given(skylines(), st.sampled_from([0.0, 0.01, 0.5, 1.0]), st.sampled_from([0.0, 0.1]))
def test_both_castings_reach_the_same_optimum(runs, alpha, beta_fraction):
    a = fit_skyline(runs, alpha, beta_fraction=beta_fraction, formulation="compact")
    b = fit_skyline(runs, alpha, beta_fraction=beta_fraction, formulation="recursion")
    assert a.unregularised_objective == pytest.approx(b.unregularised_objective, rel=TOL, abs=TOL)
    assert a.objective == pytest.approx(b.objective, rel=TOL, abs=TOL)


@SETTINGS
@given(skylines(), st.sampled_from(["compact", "recursion"]))
def test_alpha_one_wastes_nothing_alpha_zero_leaves_no_debt(runs, formulation):
    assert fit_skyline(runs, 1.0, formulation=formulation).over == pytest.approx(0.0, abs=TOL)
    assert fit_skyline(runs, 0.0, formulation=formulation).under == pytest.approx(0.0, abs=TOL)


@SETTINGS
@given(skylines(), st.lists(st.integers(0, 100), min_size=2, max_size=5, unique=True))
def test_raising_alpha_never_raises_over_allocation(runs, percents):
    # exact for any pair of optima of the unregularised LP (swap the two optimality inequalities);
    # alphas on a 0.01 grid, because 1e-45 and 0 are the same alpha to a solver
    overs = [fit_skyline(runs, a / 100, beta_fraction=0.0).over for a in sorted(percents)]
    assert all(later <= earlier + TOL * (1 + earlier) for earlier, later in zip(overs, overs[1:]))


def test_raising_alpha_lowers_over_with_the_regulariser_on_a_real_job():
    runs = np.array([[5, 40, 40, 5, 0], [5, 5, 40, 40, 5], [5, 40, 40, 5, 5], [5, 5, 5, 40, 40]], float)
    overs = [fit_skyline(runs, a).over for a in (0.01, 0.2, 0.5, 0.8, 1.0)]
    assert overs == sorted(overs, reverse=True) and overs[0] > overs[-1]


def test_debt_rows_are_the_recursion():
    # with s fixed, the least D satisfying the rows (and D >= 0) is the recursion's debt
    rng = np.random.default_rng(3)
    runs = rng.integers(0, 5, (3, 6)).astype(float) + 0.5
    s = rng.uniform(0, 5, 6)
    layout = LPLayout(3, 6)
    A, b = debt_constraints(runs, layout)
    free = np.zeros(layout.n_variables, bool)
    free[layout.d(0, 0):] = True
    c = np.zeros(layout.n_variables)
    c[free] = 1.0
    bounds = [(v, v) for v in s] + [(0, 0)] * (3 * 6) + [(0, None)] * (3 * 6)
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    assert res.status == 0
    got = res.x[layout.d(0, 0):].reshape(3, 6)
    assert got == pytest.approx(debt(s, runs), abs=1e-9)


def test_lp_size_matches_the_paper_for_a_month():
    layout = LPLayout(30, 1440)
    # s, u, D: 2NK + K variables, under the paper's "less than 100K variables and constraints"
    assert layout.n_variables == 87_840 and layout.n_variables < 100_000
    lp = build_lp(np.ones((30, 1440)), alpha=0.5, beta=1.0)
    assert lp.n_variables == 87_841 and lp.n_constraints == 2 * 30 * 1440 + 1


def test_compact_casting_drops_rows_implied_by_zero_usage():
    runs = np.array([[2, 0, 0, 3], [1, 1, 0, 0]], float)
    lp = build_compact_lp(runs, 0.5)
    assert lp.A_ub.shape[0] == int((runs > 0).sum())


# ---- the regulariser and the lazy solution ----------------------------------------------------------
LAZY = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 1, 1, 200]], float)


def test_without_the_regulariser_the_lazy_solution_wins():
    # run 0 works at steps 0-1, runs 1-2 at steps 1-2. Reserving nothing at step 0 starves run 0
    # (debt 1), which it pays back at step 2 from what is reserved for the others: half the waste of
    # covering step 0. Run 2's final burst of 200 is too dear to reserve at alpha = 0.5 and is most of V.
    lazy = fit_skyline(LAZY, 0.5, beta_fraction=0.0)
    assert lazy.skyline.tolist() == pytest.approx([0, 1, 1, 0], abs=1e-9)
    covered = penalty([1, 1, 1, 0], LAZY, 0.5)
    assert lazy.objective < covered.objective  # strictly cheaper, not a tie
    assert lazy.epsilon > covered.epsilon


def test_with_the_regulariser_the_lazy_solution_is_gone():
    fit = fit_skyline(LAZY, 0.5)  # beta = 0.1 V, the paper's default
    assert fit.skyline.tolist() == pytest.approx([1, 1, 1, 0], abs=1e-9)
    lazy = penalty([0, 1, 1, 0], LAZY, 0.5, beta=fit.beta)
    assert fit.objective < lazy.objective
    # ...but only just: the regulariser can outweigh at most 10% of V (epsilon <= 1)
    assert fit.beta == pytest.approx(0.1 * fit.unregularised_objective)


def test_a_much_cheaper_lazy_solution_survives_the_papers_beta():
    # a pure shift: the lazy allocation costs half of covering both runs, and here beta must
    # exceed 4 V to remove it (segment slope 1/4 - beta/8 with V = 1/2)
    runs = np.array([[2, 2, 0], [0, 2, 2]], float)
    assert fit_skyline(runs, 0.5).skyline.tolist() == pytest.approx([0, 2, 2], abs=1e-9)
    assert fit_skyline(runs, 0.5, beta_fraction=5.0).skyline.tolist() == pytest.approx([2, 2, 2], abs=1e-9)


# ---- baselines ------------------------------------------------------------------------------------
def test_baselines():
    runs = np.array([[1, 4, 0], [3, 2, 2], [2, 6, 1]], float)
    assert max_envelope(runs).tolist() == [3, 6, 2]
    assert mean_skyline(runs).tolist() == [2, 4, 1]
    assert percentile_skyline(runs, 50).tolist() == [2, 4, 1]
    assert user_skyline(4, 3).tolist() == [4, 4, 4]
    # the max envelope never leaves a debt; the LP at alpha = 0.5 wastes less than it
    assert penalty(max_envelope(runs), runs, 0.5).under == 0
    assert fit_skyline(runs, 0.5).over < penalty(max_envelope(runs), runs, 0.5).over


def test_align_skylines_pads_with_zeros():
    assert align_skylines([[1, 2], [3, 4, 5]]).tolist() == [[1, 2, 0], [3, 4, 5]]


# ---- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("runs, kwargs, message", [
    ([[1, 2]], {}, r"skylines has 1 run\(s\): need at least min_runs=2"),
    ([[1, 2], [1, 2]], {"min_runs": 3}, r"need at least min_runs=3"),
    (np.zeros((2, 0)), {}, r"skylines is empty: its runs have 0 steps"),
    ([[1, 2], [0, 0]], {}, r"skylines run 1 is an empty skyline"),
    ([[1, -2], [1, 2]], {}, r"skylines\[0, 1\]=-2.0 is negative"),
    ([[1, 2], [1, 2, 3]], {}, r"ragged lengths: run 0 has 2 steps, run 1 has 3"),
    ([[1, np.nan], [1, 2]], {}, r"skylines\[0, 1\]=nan is not allowed"),
    ([[1, np.inf], [1, 2]], {}, r"skylines\[0, 1\]=inf is not allowed"),
    ([1, 2, 3], {}, r"skylines must be 2-D"),
])
def test_fit_skyline_refuses_bad_skylines(runs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_skyline(runs, 0.5, **kwargs)


@pytest.mark.parametrize("alpha", [-0.1, 1.5, float("nan"), "high"])
def test_fit_skyline_refuses_alpha_outside_0_1(alpha):
    with pytest.raises(ValueError, match=r"alpha=.* (is out of range: allowed|is not allowed: need a number with) 0 <= alpha <= 1"):
        fit_skyline([[1, 2], [2, 1]], alpha)


@pytest.mark.parametrize("kwargs, message", [
    ({"beta_fraction": -1}, r"beta_fraction=-1 is out of range"),
    ({"beta_fraction": float("nan")}, r"beta_fraction=nan"),
    ({"formulation": "simplex"}, r"formulation='simplex' is not allowed: choose one of 'compact', 'recursion'"),
])
def test_fit_skyline_refuses_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_skyline([[1, 2], [2, 1]], 0.5, **kwargs)


@pytest.mark.parametrize("skyline, message", [
    ([1, 2], r"skyline has shape \(2,\): need \(3,\)"),
    ([1, -1, 0], r"skyline\[1\]=-1.0 is negative"),
    ([1, np.nan, 0], r"skyline\[1\]=nan is not allowed"),
])
def test_penalty_refuses_bad_allocations(skyline, message):
    with pytest.raises(ValueError, match=message):
        penalty(skyline, [[1, 2, 3], [3, 2, 1]], 0.5)


def test_a_failed_solve_raises_instead_of_returning_a_skyline():
    runs = np.random.default_rng(0).uniform(1, 10, (20, 200))
    with pytest.raises(SkylineFitError, match=r"did not solve: status 1"):
        fit_skyline(runs, 0.5, solver_options={"time_limit": 1e-6})
