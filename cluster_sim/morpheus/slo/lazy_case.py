"""Lab 02's graded "construct a lazy case": the LP charges the debt only at the last step, so a lazy allocation can
be strictly cheaper than one that covers every run at every step.

A student gives a two-step case as a dict: ``runs`` (N x 2 skylines), ``alpha`` (strictly between 0 and 1),
``lazy`` (an allocation that leaves some run short at some step) and ``covering`` (one that gives every step at
least every run's use). :func:`check_lazy_case` passes when the lazy allocation is strictly cheaper by J **and**
would not be if the debt were charged at every step: the last-step charge, not the weight α, makes it cheaper.
Otherwise it names the misconception the case shows (:data:`WHY`):

* **credit**: the lazy allocation is cheaper only if an early surplus paid for a later shortfall (a debt below zero);
* **debt left**: its debt is not repaid by the last step, so it is charged in full;
* **repaid by waste**: one run, or runs that peak at the same step: what repays the debt later is over-allocation
  for every run, so laziness saves nothing;
* **not the last step**: the lazy allocation is cheaper even with the debt charged at every step: the
  over-allocation it saves outweighs any debt, so the last-step charge is not what makes it cheaper.

Example
-------
>>> check_lazy_case({"runs": [[2, 0], [0, 2]], "alpha": 0.5, "lazy": [0, 2], "covering": [2, 2]})
'lazy case: J(lazy) = 0.5 < J(covering) = 1; charged at every step the lazy allocation would cost 1: the debt of 2 it builds at step 0 is repaid by step 1, and the LP charges only what is left at the last step. fit_skyline(runs, alpha, beta_fraction=0) returns [0, 2]'
>>> check_lazy_case({"runs": [[2, 0]], "alpha": 0.5, "lazy": [0, 2], "covering": [2, 0]})
Traceback (most recent call last):
...
cluster_sim.checking.CheckFailed: lazy case: J(lazy) = 1 is not below J(covering) = 0 (alpha = 0.5): with one run: what repays the debt later is over-allocation ...
"""

from __future__ import annotations

import numpy as np

from ... import validate
from ...checking import NOT_IMPLEMENTED, CheckFailed
from .runs import check_skyline, check_skylines
from .penalty import _debt, _terms

KEYS = ("runs", "alpha", "lazy", "covering")

WHY = {
    "credit": ("it is cheaper only if the debt could go below zero: an early surplus kept as credit for a later "
               "shortfall. The debt is floored at zero (a container reserved and unused is waste, not credit), so "
               "the shortfall after the surplus is still owed at the last step"),
    "debt_left": ("its debt is not repaid by the last step, so the LP charges it in full: a lazy allocation gains only "
                  "from a shortfall that a later surplus repays before the end"),
    "repaid_by_waste": ("what repays the debt later is over-allocation at that step for every run, so laziness saves "
                        "nothing; it pays only when the runs peak at *different* steps, so that one step's allocation is "
                        "one run's peak and another's repayment"),
    "alpha": ("the lazy allocation is cheaper even with the debt charged at every step: at this alpha the "
              "over-allocation it saves outweighs any debt, so the last-step charge is not what makes it cheaper. "
              "Find a case whose lazy allocation would lose if every step's debt counted"),
}


def _every_step(s: np.ndarray, runs: np.ndarray, alpha: float) -> float:
    """J with the debt charged at every step (the misreading the question contrasts with the LP's last step)."""
    over, _, _ = _terms(s, runs)
    return alpha * over + (1 - alpha) * float(_debt(s, runs).sum() / runs.shape[0])


def _with_credit(s: np.ndarray, runs: np.ndarray, alpha: float) -> float:
    """J with a debt that may go below zero (an early surplus kept as credit)."""
    over, _, _ = _terms(s, runs)
    final = np.maximum((runs - s[None, :]).sum(axis=1), 0.0)  # D_iK without the floor, but no negative final charge
    return alpha * over + (1 - alpha) * float(final.mean())


def _J(s: np.ndarray, runs: np.ndarray, alpha: float) -> float:
    over, under, _ = _terms(s, runs)
    return alpha * over + (1 - alpha) * under


def _plain(x: float) -> str:
    return f"{float(x):.6g}"


def check_case_fields(case) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """``case``'s runs (N x 2), alpha (0 < alpha < 1), lazy and covering (length 2), or a ValueError naming the field."""
    if not isinstance(case, dict) or set(case) != set(KEYS):
        got = sorted(case) if isinstance(case, dict) else type(case).__name__
        raise ValueError(f"lazy_case is {got!r}; allowed: a dict with exactly the keys {', '.join(KEYS)}")
    runs = check_skylines(case["runs"], min_runs=1, name="lazy_case['runs']")
    if runs.shape[1] != 2:
        raise ValueError(f"lazy_case['runs'] has {runs.shape[1]} steps; allowed: 2 (a two-step case)")
    alpha = validate.number(case["alpha"], "lazy_case['alpha']", lo=0, hi=1)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"lazy_case['alpha']={alpha:g} is not allowed: need 0 < alpha < 1 (at 0 over-allocation is "
                         "free, at 1 the debt is: neither charge can make the other allocation cheaper)")
    lazy = check_skyline(case["lazy"], 2, name="lazy_case['lazy']")
    covering = check_skyline(case["covering"], 2, name="lazy_case['covering']")
    return runs, alpha, lazy, covering


def check_lazy_case(case, *, name: str = "lazy case") -> str:
    """Grade a student's lazy case (see the module docstring); the message names what it shows."""
    if case is None:
        raise CheckFailed(f"{name} {NOT_IMPLEMENTED}")
    runs, alpha, lazy, covering = check_case_fields(case)
    peak = runs.max(axis=0)
    if (covering < peak).any():
        k = int(np.flatnonzero(covering < peak)[0])
        raise CheckFailed(f"{name}: the covering allocation gives step {k} {_plain(covering[k])}, below a run's "
                          f"{_plain(peak[k])}: covering means every step gets at least every run's use there")
    if (lazy >= peak).all():
        raise CheckFailed(f"{name}: the lazy allocation {lazy.tolist()} covers every run at every step: a lazy one "
                          "leaves some run short at some step (and lets the debt be repaid later)")
    j_lazy, j_cover = _J(lazy, runs, alpha), _J(covering, runs, alpha)
    head = f"{name}: J(lazy) = {_plain(j_lazy)}"
    if j_lazy >= j_cover - 1e-12:
        msg = f"{head} is not below J(covering) = {_plain(j_cover)} (alpha = {_plain(alpha)})"
        final = _debt(lazy, runs)[:, -1]
        if _with_credit(lazy, runs, alpha) < j_cover - 1e-12:
            why = WHY["credit"]
        elif runs.shape[0] == 1 or len(set(np.argmax(runs, axis=1).tolist())) == 1:
            who = "with one run" if runs.shape[0] == 1 else "your runs all peak at the same step"
            why = f"{who}: " + WHY["repaid_by_waste"]
        elif (final > 0).any():
            why = WHY["debt_left"]
        else:
            why = "make the lazy allocation's shortfall smaller than the waste it saves"
        raise CheckFailed(f"{msg}: {why}")
    j_every = _every_step(lazy, runs, alpha)
    if j_every < j_cover - 1e-12:
        raise CheckFailed(f"{head} < J(covering) = {_plain(j_cover)}, but with the debt charged at every step it would "
                          f"cost {_plain(j_every)}, still below: {WHY['alpha']}")
    from .skyline import fit_skyline

    fit = fit_skyline(runs, alpha, beta_fraction=0.0, min_runs=1).skyline
    built = _debt(lazy, runs)
    return (f"{head} < J(covering) = {_plain(j_cover)}; charged at every step the lazy allocation would cost "
            f"{_plain(j_every)}: the debt of {_plain(built[:, 0].max())} it builds at step 0 is repaid by step 1, and "
            f"the LP charges only what is left at the last step. fit_skyline(runs, alpha, beta_fraction=0) returns "
            f"[{', '.join(_plain(v) for v in fit)}]")
