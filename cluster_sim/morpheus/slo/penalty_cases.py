"""Seeded cases and checks for Lab 02's exercise: J(s) term by term, then the LP's debt rows.

The checks compare a student's functions with the library (:mod:`.penalty`, :mod:`.lp`) on a hand
case and on seeded random skylines, and on the first disagreement raise an ``AssertionError`` that
names the case, the run and the step (:func:`.penalty.first_debt_difference`) and, where it can,
the misconception behind it:

* **credit**: letting the debt go below zero, so that an early surplus pays for a later shortfall;
* **every step**: charging the debt at every step instead of only the debt left at the last one;
* **steps for runs**: averaging over the K steps instead of over the N runs.

The hand case (two runs of three steps, allocation 1 at every step) is built so that each of the
three gives a different answer from the right one.

Example
-------
>>> def debt_table(s, runs):
...     d, out = np.zeros(len(runs)), []
...     for k in range(runs.shape[1]):
...         d = np.maximum(d + runs[:, k] - s[k], 0.0)
...         out.append(d)
...     return np.stack(out, axis=1)
>>> check_debt_table(debt_table)
'debt_table: all 10 cases agree with the library, run by run and step by step'
>>> from cluster_sim.morpheus.slo.penalty import penalty
>>> check_penalty(lambda s, runs, alpha: penalty(s, runs, alpha).objective)   # the library's J: not the student's
Traceback (most recent call last):
...
cluster_sim.checking.Delegated: J calls the library's cluster_sim.morpheus.slo.penalty.penalty, the reference this check compares it with: ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import sparse

from ...checking import CheckFailed, call_student, name_case
from .lp import LPLayout, build_lp, debt_constraints
from .penalty import _debt, _terms, debt, first_debt_difference, penalty

__all__ = ["PenaltyCase", "HAND", "penalty_cases", "check_over_allocation", "check_debt_table", "check_penalty",
           "check_debt_rows", "solve_with_debt_rows", "wrong_under"]


@dataclass(frozen=True)
class PenaltyCase:
    """Runs (N x K) and one candidate allocation ``s`` (K)."""

    name: str
    runs: np.ndarray
    s: np.ndarray


#: the hand case: run 0's surplus at step 1 is not credit; each misconception gives another A_u
HAND = PenaltyCase("the hand case", np.array([[2.0, 0.0, 1.0], [0.0, 2.0, 1.0]]), np.ones(3))


def penalty_cases(seed: int = 0, n_cases: int = 9) -> list[PenaltyCase]:
    """The hand case, then ``n_cases`` seeded random ones (2-6 runs, 3-9 steps, N != K, integer
    containers with idle steps, allocations around the runs' mean so that both terms are non-zero)."""
    rng = np.random.default_rng(seed)
    out = [HAND]
    for c in range(n_cases):
        n = int(rng.integers(2, 7))
        k = int(rng.choice([x for x in range(3, 10) if x != n]))
        runs = rng.integers(0, 8, size=(n, k)).astype(float)
        runs[runs.sum(axis=1) == 0, 0] = 1.0
        s = np.round(runs.mean(axis=0) + rng.normal(0.0, 1.5, k)).clip(0.0)
        out.append(PenaltyCase(f"seeded case {c} (seed {seed}, {n} runs x {k} steps)", runs, s))
    return out


def _show(case: PenaltyCase) -> str:
    return f"{case.name}: runs = {case.runs.astype(int).tolist()}, s = {case.s.astype(int).tolist()}"


def _look(case: PenaltyCase, **inputs) -> str:
    """The hint a message ends with: the call that shows ``case`` (its inputs as the student's function gets them)."""
    return name_case(case.name, inputs or {"s": case.s, "runs": case.runs})


def _close(a, b) -> bool:
    return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=1e-9))


# ---- the wrong readings, as the checks recognise them ------------------------------------------------------
def wrong_under(runs, s) -> dict[str, float]:
    """A_u as each misconception computes it (the cause -> the value)."""
    runs, s = np.asarray(runs, float), np.asarray(s, float)
    n, k = runs.shape
    d = _debt(s, runs)
    credit = np.cumsum(runs - s, axis=1)  # the recursion without its (.)+
    return {
        "credit": float(credit[:, -1].mean()),
        "every step": float(d.sum(axis=1).mean()),
        "steps for runs": float(d[:, -1].sum() / k),
    }


def wrong_over(runs, s) -> dict[str, float]:
    runs, s = np.asarray(runs, float), np.asarray(s, float)
    n, k = runs.shape
    gap = np.maximum(s[None, :] - runs, 0.0)
    return {"steps for runs": float(gap.sum() / k), "net": float((s[None, :] - runs).sum() / n)}


CAUSES = {
    "credit": "the debt went below zero: an early surplus is wasted, never credit for a later shortfall "
              "(D_ik = (D_i,k-1 + s_ik - s_k)+ stops at zero)",
    "every step": "the debt was charged at every step: only the debt left at the last step counts "
                  "(A_u = 1/N sum_i D_iK)",
    "steps for runs": "it averages over the K steps instead of the N runs (divide the sum over runs by N)",
    "net": "it sums s_k - s_ik without the (.)+: a step where the run uses more than s cancels waste elsewhere",
}


def _cause(name: str, n: int, k: int) -> str:
    text = CAUSES[name]
    return text + (f" (here N = {n} runs, K = {k} steps)" if name == "steps for runs" else "")


def reference_over_allocation(s: np.ndarray, runs: np.ndarray) -> float:
    """A_o(s), the library's answer to Exercise 1 under the exercise's name and signature."""
    return float(np.maximum(s[None, :] - runs, 0.0).sum() / runs.shape[0])


#: the library's versions of the exercise's other functions, by the names a student's J calls them: the J
#: check grades J alone (a wrong debt_table costs the debt_table check, not this one too)
J_USES = {"over_allocation": reference_over_allocation, "debt_table": _debt}


# ---- the checks ---------------------------------------------------------------------------------------------
def check_over_allocation(student: Callable, seeds=(0,)) -> str:
    """``student(s, runs) -> A_o``, against :func:`.penalty.penalty` on the hand and seeded cases."""
    n_cases = 0
    for seed in seeds:
        for case in penalty_cases(seed):
            got = call_student(student, case.s.copy(), case.runs.copy(), name="over_allocation", forbid=(penalty, _terms))
            want = penalty(case.s, case.runs, 1.0).over
            n_cases += 1
            if not _close(got, want):
                n, k = case.runs.shape
                per_run = np.maximum(case.s[None, :] - case.runs, 0.0).sum(axis=1)
                why = next((_cause(c, n, k) for c, v in wrong_over(case.runs, case.s).items() if _close(got, v)), None)
                raise CheckFailed(
                    f"over_allocation: {_show(case)}\n  yours: {float(got):g}, expected {want:g} (each run's summed "
                    f"over-allocation {per_run.tolist()}, averaged over the {n} runs)" + (f"\n  cause: {why}" if why else "")
                    + _look(case)
                )
    return f"over_allocation: all {n_cases} cases agree with the library"


def check_debt_table(student: Callable, seeds=(0,)) -> str:
    """``student(s, runs) -> D`` (N x K), against :func:`.penalty.debt`; names the first run and step."""
    n_cases = 0
    for seed in seeds:
        for case in penalty_cases(seed):
            got = call_student(student, case.s.copy(), case.runs.copy(), name="debt_table", forbid=(_debt, debt))
            want = _debt(case.s, case.runs)
            n_cases += 1
            arr = np.asarray(got, dtype=float)
            if arr.shape != want.shape:
                raise CheckFailed(f"debt_table: {_show(case)}\n  yours has shape {arr.shape}, expected "
                                  f"{want.shape} (one debt per run and step)" + _look(case))
            where = first_debt_difference(arr, want)
            if where is None:
                continue
            i, k = where
            if k == 0:
                rule = f"max(s_{{{i},0}} - s_0, 0) = max({case.runs[i, 0]:g} - {case.s[0]:g}, 0) (the debt starts at zero)"
            else:
                rule = (f"max(D_{i},{k - 1} + s_{{{i},{k}}} - s_{k}, 0) = max({want[i, k - 1]:g} + {case.runs[i, k]:g} - "
                        f"{case.s[k]:g}, 0)")
            msg = (f"debt_table: {_show(case)}\n  run {i}, step {k}: yours D_{i},{k} = {arr[i, k]:g}, expected "
                   f"{want[i, k]:g} = {rule}")
            if arr[i, k] < 0 or (arr < -1e-9).any():
                msg += f"\n  cause: {_cause('credit', *case.runs.shape)}"
            raise CheckFailed(msg + _look(case))
    return f"debt_table: all {n_cases} cases agree with the library, run by run and step by step"


def check_penalty(student: Callable, seeds=(0,), alphas=(0.0, 0.5, 1.0)) -> str:
    """``student(s, runs, alpha) -> J`` (without the regulariser), against :func:`.penalty.penalty`.

    At ``alpha = 0`` J is A_u alone and at ``alpha = 1`` A_o alone, so a wrong J is traced to its term
    and, where the value matches one, to the misconception. While it runs, the student's J calls the
    library's ``over_allocation`` and ``debt_table`` (:data:`J_USES`): this check grades J alone.
    """
    n_cases = 0
    for seed in seeds:
        for case in penalty_cases(seed):
            n, k = case.runs.shape
            right = penalty(case.s, case.runs, 0.5)
            for a in alphas:
                got = call_student(student, case.s.copy(), case.runs.copy(), a, name="J", forbid=(penalty, _terms),
                                   using=J_USES)
                want = a * right.over + (1 - a) * right.under
                n_cases += 1
                if _close(got, want):
                    continue
                msg = (f"J: {_show(case)}, alpha = {a:g}\n  yours: {float(got):g}, expected {want:g} = {a:g} x A_o "
                       f"({right.over:g}) + {1 - a:g} x A_u ({right.under:g})")
                overs = {"": right.over, **wrong_over(case.runs, case.s)}
                unders = {"": right.under, **wrong_under(case.runs, case.s)}
                for co, o in overs.items():
                    for cu, u in unders.items():
                        if (co or cu) and _close(got, a * o + (1 - a) * u):
                            if cu:
                                msg += f"\n  your A_u is {u:g}: {_cause(cu, n, k)}"
                            if co:
                                msg += f"\n  your A_o is {o:g}: {_cause(co, n, k)}"
                            raise CheckFailed(msg + _look(case, s=case.s, runs=case.runs, alpha=a))
                raise CheckFailed(msg + _look(case, s=case.s, runs=case.runs, alpha=a))
    return f"J: all {n_cases} cases ({n_cases // len(alphas)} skylines x alpha in {', '.join(f'{a:g}' for a in alphas)}) agree with the library"


def _variable_name(layout: LPLayout, col: int) -> str:
    k, n = layout.n_steps, layout.n_runs
    if col < k:
        return f"s_{col}"
    if col < k * (1 + n):
        i, j = divmod(col - k, k)
        return f"u_{i},{j}"
    if col < k * (1 + 2 * n):
        i, j = divmod(col - k * (1 + n), k)
        return f"D_{i},{j}"
    return "epsilon"


def _row_text(row: np.ndarray, b: float, layout: LPLayout) -> str:
    terms = [f"{'+' if v > 0 else '-'} {abs(v):g}·{_variable_name(layout, c)}" for c, v in enumerate(row) if v != 0]
    text = " ".join(terms).lstrip("+ ") if terms else "0"
    return f"{text} <= {b:g}"


def check_debt_rows(student: Callable, seeds=(0,)) -> str:
    """``student(runs, layout) -> (A, b)``: the debt rows ``A x <= b`` of the LP, one per run and step in
    run-major order (row ``i*K + k``), against :func:`.lp.debt_constraints`; names the first row that differs."""
    n_cases = 0
    for seed in seeds:
        for case in penalty_cases(seed):
            layout = LPLayout(*case.runs.shape)
            got = call_student(student, case.runs.copy(), layout, name="debt_rows", forbid=(debt_constraints, build_lp))
            if not (isinstance(got, tuple) and len(got) == 2):
                raise CheckFailed(f"debt_rows: {case.name}: return a pair (A, b), got {type(got).__name__}"
                                  + _look(case, runs=case.runs, layout=layout))
            A = got[0].toarray() if sparse.issparse(got[0]) else np.asarray(got[0], dtype=float)
            b = np.asarray(got[1], dtype=float).ravel()
            A_ref, b_ref = debt_constraints(case.runs, layout)
            A_ref = A_ref.toarray()
            n_cases += 1
            if A.shape != A_ref.shape or b.shape != b_ref.shape:
                raise CheckFailed(
                    f"debt_rows: {_show(case)}\n  yours: A {A.shape}, b {b.shape}; expected A {A_ref.shape}, "
                    f"b {b_ref.shape} (one row per run and step, one column per LP variable: layout.n_variables)"
                    + _look(case, runs=case.runs, layout=layout)
                )
            bad = ~(np.isclose(A, A_ref).all(axis=1) & np.isclose(b, b_ref))
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                i, k = divmod(r, layout.n_steps)
                hint = " (at step 0 there is no D_i,-1: the debt starts at zero)" if k == 0 else ""
                raise CheckFailed(
                    f"debt_rows: {_show(case)}\n  row {r} (run {i}, step {k}) differs{hint}:\n"
                    f"    yours:    {_row_text(A[r], b[r], layout)}\n    expected: {_row_text(A_ref[r], b_ref[r], layout)}"
                    + (f"\n  i.e. D_{i},0 >= s_{{{i},0}} - s_0 written as -s_0 - D_{i},0 <= -s_{{{i},0}}" if k == 0 else
                       f"\n  i.e. D_{i},{k} >= D_{i},{k - 1} + s_{{{i},{k}}} - s_{k} written as "
                       f"-s_{k} + D_{i},{k - 1} - D_{i},{k} <= -s_{{{i},{k}}}")
                    + _look(case, runs=case.runs, layout=layout)
                )
    return f"debt_rows: all {n_cases} cases agree with the library, row by row"


def solve_with_debt_rows(debt_rows: Callable, runs, alpha: float) -> tuple[np.ndarray, float]:
    """Solve the paper's LP (no regulariser) with the library's shortfall rows and objective and
    ``debt_rows``' debt rows: ``(R*, J(R*))``."""
    runs = np.asarray(runs, dtype=float)
    ref = build_lp(runs, alpha)
    layout = LPLayout(*runs.shape)
    A_d, b_d = call_student(debt_rows, runs.copy(), layout, name="debt_rows", forbid=(debt_constraints, build_lp))
    n = runs.shape[0] * runs.shape[1]
    from scipy.optimize import linprog  # here, not at the top: ~0.1 s of every kernel

    A = sparse.vstack([ref.A_ub[:n], sparse.csr_array(A_d)], format="csr")
    b = np.concatenate([ref.b_ub[:n], np.asarray(b_d, dtype=float).ravel()])
    res = linprog(ref.c, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
    if res.status != 0:
        raise CheckFailed(f"the LP with your debt rows did not solve: {res.message}")
    return ref.skyline(res.x), float(res.fun) + ref.constant
