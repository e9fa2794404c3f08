"""Exercise checks for labs 06–07 that name the cause of a wrong answer, not only the two answers.

:func:`check_ipa` (exercise 06) checks a student's IPA in this order: the plan's shape and machine
indices, then **feasibility** ("machine j over capacity"), then the first decision (in the
library's order) that differs, with the rule that decides it (the instance tie rule, the machine
tie rule, or a BPL that rose when a machine filled up). :func:`check_ipa_optimal` checks Theorem 5.1
(IPA's stage latency equals the exact MILP's on column-ordered matrices). :func:`check_raa_front`
(exercise 07) names a front in the wrong order, a dominated or duplicated point, a missing point or
a wrong cost.

Each returns a one-line summary when every case passes, so a check cell ends on a statement.

>>> import numpy as np
>>> check_ipa(lambda L, cap: np.array([1, 0]), [(np.array([[4.0, 5.0], [4.0, 9.0]]), np.array([1, 1]))])
'my_ipa: all 1 cases agree with the library (feasible, same decisions)'
>>> from cluster_sim.stageopt import ipa_placement
>>> check_ipa(ipa_placement, [(np.array([[4.0, 5.0], [4.0, 9.0]]), np.array([1, 1]))])
Traceback (most recent call last):
...
cluster_sim.checking.Delegated: my_ipa calls the library's cluster_sim.stageopt.placement.ipa_placement, the reference this check compares it with: ...
>>> def lower_index_first(L, cap):          # ties sent to the lower instance index
...     return np.array([0, 1])
>>> check_ipa(lower_index_first, [(np.array([[4.0, 5.0], [4.0, 9.0]]), np.array([1, 1]))])
Traceback (most recent call last):
...
cluster_sim.checking.CheckFailed: my_ipa, case 0: decision 1 of 2 differs. The library sends instance 1 to machine 0 (BPL 4); your plan sends instance 1 to machine 1.
  cause: instances 0 and 1 tie at the largest BPL 4. Break the tie as the library does: the instance slower everywhere (the larger row sum of L: instance 1, 13 vs 9) goes first, then the lower index. Sending the lower index first breaks Theorem 5.1 on column-ordered stages (here: stage latency 9 instead of 5).
  L = [[4.0, 5.0], [4.0, 9.0]], capacity = [1, 1]
  to look at it: from cluster_sim.checking import show_case; show_case('my_ipa case 0')
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from ..checking import CheckFailed, call_student, name_case
from .placement import (_ipa, brute_force_min_max_placement, check_latency_matrix, exact_min_max_placement,
                        ipa_decisions, ipa_placement, is_column_ordered, stage_latency)
from .raa import brute_force_stage_pareto, raa_general, raa_path

#: what a student's IPA / RAA Path may not call while its check runs: the library's plans and fronts
IPA_REFERENCES = (ipa_placement, ipa_decisions, _ipa, exact_min_max_placement, brute_force_min_max_placement)
RAA_REFERENCES = (raa_path, raa_general, brute_force_stage_pareto)

__all__ = ["check_ipa", "check_ipa_optimal", "check_raa_front"]


def _g(x: float) -> str:
    return f"{x:.6g}"


def _and(items) -> str:
    items = [str(int(x)) for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _show(L: np.ndarray, cap: np.ndarray, label: str, case: int) -> str:
    """The case in a message, ending with the call that shows it (:func:`~cluster_sim.checking.show_case`)."""
    look = name_case(f"{label} case {case}", {"L": L, "capacity": cap})
    if L.size > 60:
        return f"L of shape {L.shape}, capacity = {cap.tolist()}{look}"
    return f"L = {np.round(L, 4).tolist()}, capacity = {cap.tolist()}{look}"


def _plan(student: Callable, L: np.ndarray, cap: np.ndarray, label: str, case: int) -> np.ndarray:
    """The student's plan as an int array, after the checks every plan must pass."""
    got = call_student(student, L.copy(), cap.copy(), name=label, forbid=IPA_REFERENCES)
    m, n = L.shape
    head = f"{label}, case {case}"
    a = np.asarray(got)
    if a.shape != (m,):
        raise CheckFailed(f"{head}: returned shape {a.shape}; expected one machine per instance, shape ({m},).\n"
                             f"  {_show(L, cap, label, case)}")
    if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and np.all(a == np.round(a))):
        raise CheckFailed(f"{head}: returned {a.dtype} values {a.tolist()}; expected whole machine indices.")
    a = a.astype(np.int64)
    bad = np.flatnonzero((a < 0) | (a >= n))
    if bad.size:
        i = int(bad[0])
        hint = " (never placed? every instance needs a machine)" if a[i] < 0 else ""
        raise CheckFailed(f"{head}: instance {i} is sent to machine {a[i]}, which does not exist: "
                             f"machines are 0..{n - 1}{hint}.\n  {_show(L, cap, label, case)}")
    used = np.bincount(a, minlength=n)
    over = np.flatnonzero(used > cap)
    if over.size:
        j = int(over[0])
        who = np.flatnonzero(a == j).tolist()
        raise CheckFailed(
            f"{head}: machine {j} over capacity: your plan puts {used[j]} instances on it ({who}), "
            f"capacity[{j}] = {cap[j]}. A machine with no free slot leaves the pool: an instance's BPL is its "
            f"smallest latency over machines that still have a slot.\n  {_show(L, cap, label, case)}")
    return a


def _cause(L: np.ndarray, cap: np.ndarray, inst: np.ndarray, mach: np.ndarray, bpl: np.ndarray, t: int,
           student: np.ndarray) -> str:
    """Why the library's decision ``t`` is what it is, in terms of the rule a student may have missed."""
    m, n = L.shape
    placed = np.zeros(m, bool)
    placed[inst[:t]] = True
    free = cap - np.bincount(mach[:t], minlength=n)
    Lm = np.where(free[None, :] > 0, L, np.inf)
    best = Lm.min(axis=1)
    i, j = int(inst[t]), int(mach[t])
    unplaced = np.flatnonzero(~placed)
    tied = unplaced[best[unplaced] == bpl[t]]
    if tied.size > 1:
        rs = L.sum(axis=1)
        lower = int(tied.min())
        text = (f"instances {_and(tied)} tie at the largest BPL {_g(bpl[t])}. Break the tie as the library "
                f"does: the instance slower everywhere (the larger row sum of L: instance {i}, "
                f"{' vs '.join(_g(rs[k]) for k in [i] + [k for k in tied if k != i])}) goes first, then the lower index")
        if lower != i:
            text += ". Sending the lower index first breaks Theorem 5.1 on column-ordered stages"
            if is_column_ordered(L):
                text += f" (here: stage latency {_g(stage_latency(L, student))} instead of {_g(stage_latency(L, _library(L, cap)))})"
        return text + "."
    fast = np.flatnonzero((free > 0) & (L[i] == bpl[t]))
    if fast.size > 1 and student[i] in fast:
        return (f"machines {_and(fast)} give instance {i} its BPL {_g(bpl[t])}; the library takes the "
                f"lowest machine index ({j}).")
    start = L[i].min()
    if bpl[t] > start:
        filled = [int(k) for k in range(t) if free[mach[k]] == 0 and L[i, mach[k]] < bpl[t]]
        k0 = filled[0] if filled else None
        where = f" when machine {mach[k0]} filled up at decision {k0 + 1}" if k0 is not None else ""
        return (f"instance {i}'s BPL rose from {_g(start)} to {_g(bpl[t])}{where}, which made it the largest. "
                f"BPLs only ever rise, so refresh the BPL of every instance that wanted a machine as soon as that "
                f"machine fills up; a heap refreshed only when an entry is popped keeps a stale, smaller BPL below "
                f"the top and sends the wrong instance first.")
    return (f"instance {i} has the largest BPL among the unplaced instances ({_g(bpl[t])}, on machine {j}); "
            f"take the largest, not the smallest, and send it to the machine that gives it.")


def _library(L, cap):
    from .placement import ipa_placement
    return ipa_placement(L, cap)


def check_ipa(student: Callable, cases: Iterable, *, name: str = "my_ipa") -> str:
    """Check ``student(L, capacity)`` against the library's IPA on ``cases`` of ``(L, capacity)``.

    Fails on the first case with a problem, in this order: the plan's shape and machine indices,
    feasibility ("machine j over capacity"), then the first of the library's decisions the plan
    does not make, with its cause.
    """
    n_cases = 0
    for c, (L, cap) in enumerate(cases):
        L, cap = check_latency_matrix(L, cap)
        a = _plan(student, L, cap, name, c)
        inst, mach, bpl = ipa_decisions(L, cap)
        n_cases += 1
        for t in range(len(inst)):
            i, j = int(inst[t]), int(mach[t])
            if a[i] != j:
                raise CheckFailed(
                    f"{name}, case {c}: decision {t + 1} of {len(inst)} differs. The library sends instance {i} to "
                    f"machine {j} (BPL {_g(bpl[t])}); your plan sends instance {i} to machine {a[i]}.\n"
                    f"  cause: {_cause(L, cap, inst, mach, bpl, t, a)}\n  {_show(L, cap, name, c)}")
    return f"{name}: all {n_cases} cases agree with the library (feasible, same decisions)"


def check_ipa_optimal(student: Callable, cases: Iterable, *, name: str = "my_ipa") -> str:
    """Theorem 5.1: on column-ordered ``(L, capacity)`` cases the plan's stage latency is the MILP's."""
    n_cases = 0
    for c, (L, cap) in enumerate(cases):
        L, cap = check_latency_matrix(L, cap)
        if not is_column_ordered(L):
            raise ValueError(f"case {c} is not column-ordered: Theorem 5.1 says nothing about it")
        a = _plan(student, L, cap, name, c)
        got, best = stage_latency(L, a), exact_min_max_placement(L, cap)[1]
        n_cases += 1
        if not np.isclose(got, best, rtol=1e-9, atol=1e-12):
            worst = int(np.argmax(L[np.arange(L.shape[0]), a]))
            raise CheckFailed(
                f"{name}, case {c}: stage latency {_g(got)} (instance {worst} on machine {a[worst]}), but the optimum "
                f"is {_g(best)}. L is column-ordered, so IPA must reach the optimum (Theorem 5.1); check_ipa names the "
                f"first decision that differs from the library's.\n  {_show(L, cap, name, c)}")
    return f"{name}: optimal on all {n_cases} column-ordered cases (Theorem 5.1)"


def check_raa_front(student: Callable, cases: Iterable, *, name: str = "my_raa_path", brute_force: bool = False) -> str:
    """Check ``student(pareto_sets)`` returns RAA Path's stage front, as a (q, 2) array, latency descending.

    The reference is :func:`.raa.raa_path`, or brute force over all plans (``brute_force=True``).
    """
    n_cases = 0
    for c, sets in enumerate(cases):
        sets = [np.asarray(s, dtype=float) for s in sets]
        want = brute_force_stage_pareto(sets)[0] if brute_force else raa_path(sets)[0]
        got = np.asarray(call_student(student, [s.copy() for s in sets], name=name, forbid=RAA_REFERENCES), dtype=float)
        head = f"{name}, case {c}"

        def shown(sets=sets, c=c):  # the case, ending with the call that shows it (named only when a message needs it)
            return f"  pareto_sets = {[s.tolist() for s in sets]}" + name_case(f"{name} case {c}", {"pareto_sets": sets})

        n_cases += 1
        if got.ndim != 2 or got.shape[1:] != (2,):
            raise CheckFailed(f"{head}: returned shape {got.shape}; expected a (points, 2) array of "
                                 f"(stage latency, stage cost).\n{shown()}")
        if got.shape == want.shape and np.allclose(got, want, rtol=1e-9):
            continue
        if got.shape == want.shape and len(got) > 1 and np.allclose(got, want[::-1], rtol=1e-9):
            raise CheckFailed(f"{head}: your front is in ascending latency order; RAA Path records it slowest "
                                 f"(and cheapest) first: latency descending.\n{shown()}")
        same = [tuple(p) for p in np.round(want, 9)]
        mine = [tuple(p) for p in np.round(got, 9)]
        if len(set(mine)) < len(mine):
            dup = next(p for p in mine if mine.count(p) > 1)
            raise CheckFailed(f"{head}: the point {list(dup)} appears twice. Record a state only when the popped "
                                 f"latency is lower than the last recorded one (instances tied at the stage latency "
                                 f"must all step before the stage gets faster).\n{shown()}")
        lats, counts = np.unique(np.round(got[:, 0], 9), return_counts=True)
        if (counts > 1).any():
            lat = lats[counts > 1][0]
            pts = got[np.isclose(got[:, 0], lat, rtol=1e-9)]
            raise CheckFailed(
                f"{head}: your front has {len(pts)} points at stage latency {_g(lat)} ({pts.tolist()}); only the "
                f"cheapest is Pareto-optimal. Record a state only when the popped latency is lower than the last "
                f"recorded one (instances tied at the stage latency must all step before the stage gets faster).\n{shown()}")
        for k, p in enumerate(got):
            lat_match = np.flatnonzero(np.isclose(want[:, 0], p[0], rtol=1e-9))
            if lat_match.size and not np.isclose(want[lat_match[0], 1], p[1], rtol=1e-9):
                raise CheckFailed(
                    f"{head}: at stage latency {_g(p[0])} your cost is {_g(p[1])}, the front's is "
                    f"{_g(want[lat_match[0], 1])}. The stage cost is the sum of every instance's current point's cost, "
                    f"recorded before the popped instance steps.\n{shown()}")
        for k, p in enumerate(got):
            dom = want[np.all(want <= p + 1e-9, axis=1) & np.any(want < p - 1e-9, axis=1)]
            if len(dom):
                raise CheckFailed(
                    f"{head}: your point {k} {p.tolist()} is dominated by {dom[0].tolist()}, so it is not on the stage "
                    f"Pareto front. Record a state only when the popped latency is lower than the last recorded "
                    f"one.\n{shown()}")
        missing = [list(p) for p in same if p not in mine]
        if missing:
            raise CheckFailed(
                f"{head}: your front lacks {missing[0]} ({len(missing)} of {len(want)} points missing). Sort each "
                f"instance's set by latency descending, start everyone at their slowest point, and stop only when the "
                f"instance holding the stage latency has no faster point.\n{shown()}")
        order = "" if np.all(np.diff(got[:, 0]) < 0) else " and is not in latency-descending order"
        raise CheckFailed(f"{head}: your front {got.tolist()} differs from {want.tolist()}{order}.\n{shown()}")
    ref = "brute force over all plans" if brute_force else "the library's raa_path"
    return f"{name}: all {n_cases} fronts agree with {ref}"
