"""Placement plans (§5.2): the Fuxi baseline, IPA (Algorithm 1) and the exact min-max assignment.

A placement plan sends each of the ``m`` instances of a stage to one of ``n`` machines. Machine
``j`` can take at most ``capacity[j]`` instances (the paper's β_j, see :func:`slots_per_machine`).
The stage latency is the largest instance latency, ``max_i L[i, assignment[i]]`` (Eq. 3).

Tie rule (stated once, used everywhere): among instances with the same best possible latency the
one with the larger row sum of ``L`` goes first (under column order that is the instance that is
slower on every machine, which keeps Theorem 5.1 true with ties), then the lower instance index;
among machines with the same latency the lowest machine index wins. The result is therefore a
deterministic function of ``L`` and ``capacity``.

Example (Fig. 6 of the paper)
-----------------------------
>>> import numpy as np
>>> L = np.array([[8.0, 12.0, 10.0], [16.0, 24.0, 20.0]])
>>> ipa_placement(L, np.ones(3, dtype=int)).tolist()       # i1 -> m3, i2 -> m1
[2, 0]
>>> fuxi_placement(np.array([0.4, 0.6, 0.8]), np.ones(3, dtype=int), 2).tolist()
[0, 1]
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.sparse import coo_matrix

from ..validate import finite_array, index_array, whole_number

__all__ = [
    "check_latency_matrix",
    "slots_per_machine",
    "stage_latency",
    "fuxi_placement",
    "ipa_placement",
    "ipa_decisions",
    "exact_min_max_placement",
    "brute_force_min_max_placement",
    "is_column_ordered",
]


# ---- validation ---------------------------------------------------------------------------------
def check_latency_matrix(L, capacity) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``L`` (m, n) and ``capacity`` (n,) and return them as float / int64 arrays.

    Raises ``ValueError`` for an empty machine list, mismatched shapes, non-finite or negative
    latencies, negative or fractional capacities, and a stage that does not fit
    (``"need X slots, have Y"``).
    """
    L = np.asarray(L, dtype=float)
    if L.ndim != 2:
        raise ValueError(f"L must be a 2-D (instances, machines) matrix, got shape {L.shape}")
    m, n = L.shape
    if n == 0:
        raise ValueError("L has no machines (0 columns): the machine list is empty")
    if m == 0:
        raise ValueError("L has no instances (0 rows): a stage has at least one instance")
    _check_latencies(L, "L")
    return L, check_capacity(m, n, capacity, f"L {L.shape}")


def _check_latencies(L: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(L)) or np.any(L < 0):
        idx = np.argwhere(~np.isfinite(L) | (L < 0))[0]
        raise ValueError(f"{name} must hold finite, non-negative latencies: {name}[{', '.join(map(str, idx))}] "
                         f"is {L[tuple(idx)]}")


def check_capacity(m: int, n: int, capacity, against: str = "the machine list") -> np.ndarray:
    """Validate ``capacity`` (n,) whole, non-negative slots with room for ``m`` instances."""
    cap = np.asarray(capacity)
    L_shape = against
    if cap.shape != (n,):
        raise ValueError(
            f"capacity must have one entry per machine: shape ({n},) to match {L_shape}, "
            f"got shape {cap.shape}"
        )
    if cap.dtype.kind == "f":
        if not np.all(cap == np.floor(cap)):
            raise ValueError("capacity must hold whole numbers of instance slots")
    elif cap.dtype.kind not in "iu":
        raise ValueError(f"capacity must be integers, got dtype {cap.dtype}")
    cap = cap.astype(np.int64)
    if np.any(cap < 0):
        j = int(np.argmin(cap))
        raise ValueError(f"capacity[{j}]={cap[j]} is negative: allowed capacity >= 0")
    have = int(cap.sum())
    if have < m:
        raise ValueError(f"the stage does not fit: need {m} slots, have {have}")
    return cap


def slots_per_machine(free, theta0, alpha: int, m: int | None = None) -> np.ndarray:
    """β_j = min(⌊U_j^1/Θ0^1⌋, …, ⌊U_j^d/Θ0^d⌋, α): instances machine j can take (§5.2).

    ``free`` is (n, d) free resources per machine, ``theta0`` the (d,) HBO resource plan, and
    ``alpha`` the diversity cap. When the stage size ``m`` is given, the paper's lower bound
    α ≥ ⌈m/n⌉ is enforced.

    >>> slots_per_machine(np.array([[8, 32], [3, 64]]), np.array([2, 4]), alpha=3).tolist()
    [3, 1]
    """
    free = finite_array(free, "free", nonneg=True, what="free resources")
    theta0 = finite_array(theta0, "theta0", what="resources per instance")
    if free.ndim != 2 or free.shape[0] == 0:
        raise ValueError(f"free must be a non-empty (machines, resources) array, got shape {free.shape}")
    if theta0.shape != (free.shape[1],):
        raise ValueError(
            f"theta0 must have one entry per resource: shape ({free.shape[1]},), got {theta0.shape}"
        )
    if np.any(theta0 <= 0):
        raise ValueError(f"theta0={theta0.tolist()} must be positive in every resource")
    alpha = whole_number(alpha, "alpha", lo=1)
    n = free.shape[0]
    if m is not None:
        m = whole_number(m, "m", lo=1)
    if m is not None and alpha < -(-m // n):
        raise ValueError(f"alpha={alpha} is too small: the paper requires alpha >= ceil(m/n) = {-(-m // n)}")
    return _slots_per_machine(free, theta0, alpha)


def _slots_per_machine(free: np.ndarray, theta0: np.ndarray, alpha: int) -> np.ndarray:
    """:func:`slots_per_machine` on arrays already checked (float (n, d) free, positive (d,) θ0, whole α >= 1): the
    engine's stage planners call it at every stage with what they built themselves."""
    # a tiny tolerance so that 4.0/2.0 computed in floating point never floors to 1
    fit = np.floor(free / theta0 + 1e-9).min(axis=1)
    return np.minimum(np.maximum(fit, 0), alpha).astype(np.int64)


def stage_latency(L, assignment) -> float:
    """The stage latency of a placement: the largest instance latency ``max_i L[i, a_i]``.

    ``assignment`` must name an existing machine for every instance (0 .. n-1; no negative index
    silently read from the end).
    """
    L = np.asarray(L, dtype=float)
    if L.ndim != 2 or 0 in L.shape:
        raise ValueError(f"L must be a non-empty 2-D (instances, machines) matrix, got shape {L.shape}")
    _check_latencies(L, "L")
    a = np.asarray(assignment)
    if a.shape != (L.shape[0],):
        raise ValueError(f"assignment must have one machine per instance: shape ({L.shape[0]},), got {a.shape}")
    a = index_array(a, "assignment", lo=0, hi=L.shape[1] - 1, what="machine")
    return float(L[np.arange(L.shape[0]), a].max())


def _check_feasible(a: np.ndarray, cap: np.ndarray) -> None:
    used = np.bincount(a, minlength=cap.size)
    assert np.all(used <= cap), "placement exceeds a machine's capacity"


# ---- Fuxi ---------------------------------------------------------------------------------------
def fuxi_placement(watermark, capacity, m: int) -> np.ndarray:
    """The Fuxi scheduler's placement as §5 describes it.

    (1) the key resource is the bottleneck: the column of ``watermark`` (n, R) with the highest
    mean utilisation (a 1-D ``watermark`` is already the key resource); (2) machines are taken in
    increasing watermark on it (ties: lower index; only the order matters, so
    any finite scale works and NaN is refused); (3) instances, in id order, go to those
    machines one each; a stage larger than the machine list wraps round again, one more
    instance per machine per round, skipping full machines. Latency plays no part.
    """
    w = finite_array(watermark, "watermark", what="utilisations")
    cap = np.asarray(capacity)
    if w.ndim == 2:
        w = w[:, int(np.argmax(w.mean(axis=0)))] if w.shape[0] else w[:, 0]
    if w.ndim != 1 or w.size == 0:
        raise ValueError("watermark is empty: the machine list is empty")
    m = whole_number(m, "m", lo=1)
    cap = check_capacity(m, w.size, cap, "the watermarks")
    order = np.argsort(w, kind="stable")
    # round r offers one slot on every machine that still has more than r slots
    slots = [order[cap[order] > r] for r in range(int(cap.max()))]
    return np.concatenate(slots)[:m].astype(np.int64)


# ---- IPA (Algorithm 1) ----------------------------------------------------------------------------
def ipa_placement(L, capacity) -> np.ndarray:
    """Algorithm 1 (IPA): send the instance with the largest best possible latency (BPL) first.

    ``L`` is the (m, n) predicted latency matrix, ``capacity`` the (n,) slots per machine (β_j).
    Repeatedly take the unplaced instance whose BPL — its smallest latency over machines that
    still have a slot — is largest, and send it to that machine. When a machine fills up it
    leaves the pool and the BPL of the instances that wanted it is recomputed. Returns the
    (m,) machine index of every instance.

    Optimal for the min-max objective when ``L`` is column-ordered (Theorem 5.1), see
    :func:`exact_min_max_placement`.

    >>> ipa_placement(np.array([[8.0, 12.0, 10.0], [16.0, 24.0, 20.0]]), [1, 1, 1]).tolist()
    [2, 0]
    """
    return _ipa(*check_latency_matrix(L, capacity))[0]


def ipa_decisions(L, capacity) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IPA's decisions in the order it makes them: ``(instance, machine, BPL)``, three (m,) arrays.

    Decision ``t`` sends ``instance[t]`` to ``machine[t]`` at its best possible latency ``BPL[t]``
    (the largest among the instances not yet placed). The exercise checks use it to name the
    first decision where a student's plan departs from the library's.

    >>> inst, mach, bpl = ipa_decisions(np.array([[8.0, 12.0, 10.0], [16.0, 24.0, 20.0]]), [1, 1, 1])
    >>> inst.tolist(), mach.tolist(), bpl.tolist()
    ([1, 0], [0, 2], [16.0, 10.0])
    """
    _, trace = _ipa(*check_latency_matrix(L, capacity), trace=True)
    return trace


def _ipa(L: np.ndarray, cap: np.ndarray, trace: bool = False):
    # ties between instances go to the one slower everywhere: its sum over every machine, full ones included
    rowsum = L.sum(axis=1)
    # a machine without a slot never takes an instance: plan over the machines with one (kept in index order, so
    # every tie still goes to the lower machine) and map back. On a busy cluster most machines are full, and the
    # pointers below walked past each of them one numpy round at a time (the capstone's 500 machines at paper)
    n_all = cap.size
    open_machines = np.flatnonzero(cap > 0)
    if open_machines.size < n_all:
        L, cap = L[:, open_machines], cap[open_machines]
    m, n = L.shape
    cap = cap.copy()
    rows = np.arange(m)
    # every instance's machines from fastest to slowest (stable: ties to the lower machine index);
    # a pointer per instance walks past full machines, so recomputing a BPL costs amortised O(1).
    # Sorted in blocks of rows, so the int64 temporary of argsort never spans the whole matrix.
    order = np.empty((m, n), dtype=np.int32 if n < 2**31 else np.int64)
    block = max(1, 2_000_000 // n)
    for lo in range(0, m, block):
        order[lo: lo + block] = np.argsort(L[lo: lo + block], axis=1, kind="stable")
    ptr = np.zeros(m, dtype=np.int64)

    def advance(idx: np.ndarray) -> None:
        # the slots left always cover the instances left, so a pointer never runs off the end
        while idx.size:
            idx = idx[cap[order[idx, ptr[idx]]] == 0]
            ptr[idx] += 1

    advance(rows)
    best = order[rows, ptr].astype(np.int64)
    # the BPL of unplaced instances, -inf once placed. Not a heap: a BPL only ever rises (its
    # machine fills up), so every instance that wanted a full machine is refreshed at once, and
    # the next decision scans for the largest key (a lazy heap refreshed on pop would hide an
    # instance whose stale, smaller key has risen above the top)
    key = L[rows, best]
    assignment = np.full(m, -1, dtype=np.int64)
    log = (np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m)) if trace else None
    for t in range(m):
        cand = np.flatnonzero(key == key.max())
        # ties: the instance slower everywhere (larger row sum), then the lower index
        i = int(cand[np.argmax(rowsum[cand])]) if cand.size > 1 else int(cand[0])
        j = int(best[i])
        if trace:
            log[0][t], log[1][t], log[2][t] = i, j, key[i]
        assignment[i] = j
        key[i] = -np.inf
        cap[j] -= 1
        if cap[j] == 0:
            # machine j leaves the pool: recompute the BPL of the instances that wanted it
            movers = np.flatnonzero((best == j) & (assignment < 0))
            advance(movers)
            best[movers] = order[movers, ptr[movers]]
            key[movers] = L[movers, best[movers]]
    if open_machines.size < n_all:
        assignment = open_machines[assignment]
        if trace:
            log = (log[0], open_machines[log[1]], log[2])
    return assignment, log


# ---- exact references ------------------------------------------------------------------------------
def exact_min_max_placement(L, capacity) -> tuple[np.ndarray, float]:
    """The optimal min-max placement of Eq. (3), solved exactly as a MILP with HiGHS.

    Variables: binary ``B[i, j]`` and the stage latency ``z``; minimise ``z`` subject to every
    instance on one machine, at most ``capacity[j]`` instances on machine ``j`` and
    ``Σ_j L[i, j] B[i, j] <= z`` for every instance. Returns ``(assignment, stage latency)``.
    Meant for small stages (tests, notebooks): the problem is NP-hard in general.
    """
    L, cap = check_latency_matrix(L, capacity)
    m, n = L.shape
    nv = m * n + 1
    c = np.zeros(nv)
    c[-1] = 1.0
    rows, cols, vals = [], [], []
    # one machine per instance
    for i in range(m):
        rows += [i] * n
        cols += list(range(i * n, (i + 1) * n))
        vals += [1.0] * n
    # machine capacity
    for j in range(n):
        rows += [m + j] * m
        cols += [i * n + j for i in range(m)]
        vals += [1.0] * m
    # instance latency below z
    for i in range(m):
        r = m + n + i
        rows += [r] * (n + 1)
        cols += list(range(i * n, (i + 1) * n)) + [m * n]
        vals += list(L[i]) + [-1.0]
    from scipy.optimize import Bounds, LinearConstraint, milp  # here, not at the top: ~0.1 s of every kernel

    A = coo_matrix((vals, (rows, cols)), shape=(2 * m + n, nv)).tocsr()
    lb = np.concatenate([np.ones(m), np.zeros(n), np.full(m, -np.inf)])
    ub = np.concatenate([np.ones(m), cap.astype(float), np.zeros(m)])
    integrality = np.concatenate([np.ones(m * n), [0]])
    bounds = Bounds(np.zeros(nv), np.concatenate([np.ones(m * n), [np.inf]]))
    # mip_rel_gap=0: the default 1e-4 gap would accept a slightly worse plan as 'optimal'
    res = milp(c, constraints=LinearConstraint(A, lb, ub), integrality=integrality, bounds=bounds,
               options={"mip_rel_gap": 0.0})
    if not res.success:  # pragma: no cover - feasibility was checked above
        raise RuntimeError(f"HiGHS could not solve the placement MILP: {res.message}")
    B = res.x[: m * n].reshape(m, n)
    assignment = np.argmax(B, axis=1).astype(np.int64)
    _check_feasible(assignment, cap)
    return assignment, stage_latency(L, assignment)


def brute_force_min_max_placement(L, capacity, max_plans: int = 200_000) -> tuple[np.ndarray, float]:
    """Enumerate every placement (n^m of them) and keep the best: a reference for tiny stages."""
    L, cap = check_latency_matrix(L, capacity)
    m, n = L.shape
    if n**m > max_plans:
        raise ValueError(f"brute force would enumerate n^m = {n}^{m} plans, more than max_plans={max_plans}")
    best, best_a = np.inf, None
    for a in itertools.product(range(n), repeat=m):
        a = np.asarray(a)
        if np.any(np.bincount(a, minlength=n) > cap):
            continue
        v = L[np.arange(m), a].max()
        if v < best:
            best, best_a = v, a
    return best_a.astype(np.int64), float(best)


def is_column_ordered(L) -> bool:
    """True when every column of ``L`` orders the instances the same way (ties allowed).

    This is the column-order assumption of Theorem 5.1: sorting the rows by one column sorts
    every column.
    """
    L = np.asarray(L, dtype=float)
    if L.ndim != 2 or 0 in L.shape:
        raise ValueError(f"L must be a non-empty 2-D (instances, machines) matrix, got shape {L.shape}")
    _check_latencies(L, "L")
    order = np.lexsort(L.T[::-1])   # sort rows by column 0, then 1, ... to break ties
    return bool(np.all(np.diff(L[order], axis=0) >= 0))
