"""Resource plans (§5.3): Pareto sets, RAA General (Algorithm 2), RAA Path (Algorithm 3) and WUN.

Each instance ``i`` arrives with its own Pareto set: a ``(p_i, k)`` array of objective vectors,
one row per resource configuration θ_i^j that is Pareto optimal for that instance. A stage-level
plan picks one row per instance; its stage objectives aggregate the instance rows with ``max``
(latency: the slowest instance) or ``sum`` (cost). The hierarchical MOO of Def. 5.3 builds the
stage-level Pareto set from the instance-level ones without enumerating the ``Π p_i`` plans.

Rules for ties and duplicates (what every function here assumes and checks)
----------------------------------------------------------------------------
* Instance sets must be *strictly* Pareto: no row dominates another and no two rows are equal.
  A set that is not raises ``ValueError`` naming the instance and the rows (reduce a raw grid
  with :func:`pareto_indices` first). For two objectives this means latency strictly decreasing
  ⇔ cost strictly increasing, so an instance never holds two points with the same latency.
* Stage level: several plans can reach the same objective vector; the front lists each distinct
  vector once, with one plan for it. RAA Path returns the plan on its path (every instance below
  the stage latency stays at its cheapest point that is fast enough); RAA General returns the
  plan its ``find_optimal`` picks. Both are checked against brute force on the vectors.
* Fronts come sorted by the first objective descending (the path order: slowest and cheapest
  first), ties by the remaining objectives ascending.

Example (Fig. 7 of the paper)
-----------------------------
>>> inst1 = np.array([[150.0, 5.0], [55.0, 20.0]])
>>> inst2 = np.array([[300.0, 4.0], [100.0, 5.0]])
>>> front, choice = raa_path([inst1, inst2])
>>> front.tolist()
[[300.0, 9.0], [150.0, 10.0], [100.0, 25.0]]
>>> choice.tolist()
[[0, 0], [0, 1], [1, 1]]
>>> front[wun(front)].tolist()
[150.0, 10.0]
"""

from __future__ import annotations

import heapq
import itertools
from typing import Sequence

import numpy as np

from ..validate import finite_array

__all__ = [
    "pareto_indices",
    "check_pareto_sets",
    "raa_path",
    "raa_general",
    "brute_force_stage_pareto",
    "wun",
]

AGGREGATORS = ("max", "sum")


# ---- Pareto filtering ----------------------------------------------------------------------------
def pareto_indices(points) -> np.ndarray:
    """Indices of the Pareto-optimal rows of ``points`` (q, k), minimising every column.

    A duplicate of a Pareto point is dropped (the first occurrence is kept). Returned in the
    front order of this module: first objective descending, then the others ascending.

    >>> pareto_indices(np.array([[3, 1], [2, 2], [2, 3], [1, 5], [1, 5]])).tolist()
    [0, 1, 3]
    """
    P = np.asarray(points, dtype=float)
    if P.ndim != 2 or P.shape[0] == 0:
        raise ValueError(f"points must be a non-empty (q, k) array, got shape {P.shape}")
    # a NaN compares false with everything: it would neither dominate nor be dominated, and
    # silently knock valid points off the front
    finite_array(P, "points", what="finite objective values")
    return _pareto_indices(P)


def _pareto_indices(P: np.ndarray) -> np.ndarray:
    """:func:`pareto_indices` of a finite, non-empty float (q, k) array (the stage optimiser's own
    (latency, cost) points, checked where they are made)."""
    # sort lexicographically ascending (first objective primary); a point can only be dominated
    # by one earlier in this order, and an exact duplicate comes right after its twin
    order = np.lexsort(P.T[::-1])
    S = P[order]
    keep = np.ones(len(S), dtype=bool)
    if P.shape[1] == 2:
        # 2-D: a point survives iff its second objective beats every earlier (smaller-first) point
        best = np.minimum.accumulate(S[:, 1])
        keep[1:] = S[1:, 1] < best[:-1]
    else:
        for t in range(1, len(S)):
            prev = S[:t][keep[:t]]
            if np.any(np.all(prev <= S[t], axis=1)):
                keep[t] = False
    idx = order[keep]
    return _front_order(P, idx)


def _front_order(P: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Sort row indices by the first objective descending, then the rest ascending."""
    F = P[idx]
    keys = [F[:, c] for c in range(F.shape[1] - 1, 0, -1)] + [-F[:, 0]]
    return idx[np.lexsort(keys)]


def check_pareto_sets(pareto_sets, k: int | None = None) -> list[np.ndarray]:
    """Validate a list of instance-level Pareto sets; return them as float (p_i, k) arrays.

    Raises ``ValueError`` for an empty list, an empty set, mismatched shapes, non-finite values,
    and a set that is not strictly Pareto (a dominated or duplicated row).
    """
    if isinstance(pareto_sets, np.ndarray) and pareto_sets.ndim == 2:
        raise ValueError("pareto_sets must be a list of (p_i, k) arrays, one per instance, not one array")
    sets = [np.asarray(s, dtype=float) for s in pareto_sets]
    if not sets:
        raise ValueError("pareto_sets is empty: a stage has at least one instance")
    k = sets[0].shape[-1] if k is None and sets[0].ndim == 2 else k
    for i, s in enumerate(sets):
        if s.ndim != 2:
            raise ValueError(f"pareto_sets[{i}] must be a (points, objectives) array, one row per point, "
                             f"got shape {s.shape}")
        if s.shape[0] == 0:
            raise ValueError(f"pareto_sets[{i}] is an empty Pareto set (shape {s.shape}): every instance needs at least one point")
        if s.shape[1] != k:
            raise ValueError(f"pareto_sets[{i}] has {s.shape[1]} objectives, expected {k} (shape {s.shape})")
        if not np.all(np.isfinite(s)):
            r, c = np.argwhere(~np.isfinite(s))[0]
            raise ValueError(f"pareto_sets[{i}] holds a non-finite value: row {r}, objective {c} is {s[r, c]}")
        keep = pareto_indices(s)
        if keep.size != s.shape[0]:
            bad = sorted(set(range(s.shape[0])) - set(keep.tolist()))[0]
            raise ValueError(
                f"pareto_sets[{i}] is not strictly Pareto: row {bad} {s[bad].tolist()} is dominated "
                f"or duplicated; reduce it with pareto_indices() first"
            )
    return sets


# ---- RAA Path (Algorithm 3) -----------------------------------------------------------------------
def raa_path(pareto_sets: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 3 (RAA Path): the full stage Pareto set for (max latency, sum cost).

    Start every instance at its slowest (cheapest) point; repeatedly pop the instance holding the
    stage latency from a max-heap and move it one step down its own Pareto set (faster, dearer);
    record a stage point whenever the popped latency drops below the last recorded one. Stop when
    the slowest instance has no faster point left. O(m·p·log(m·p)) for m instances, p points each.

    Returns ``(front (q, 2), choice (q, m))``: the stage-level points (latency descending) and,
    for each, the row chosen in every instance's input array.
    """
    return _raa_path(check_pareto_sets(pareto_sets, k=2))


def _raa_path(sets: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`raa_path` of sets that are already strictly Pareto float (p_i, 2) arrays (the stage
    optimiser's, each just reduced by :func:`pareto_indices`: checking them again would repeat it)."""
    m = len(sets)
    # pre-sort each set in descending latency; remember the original row of every position
    orders = [np.argsort(-s[:, 0], kind="stable") for s in sets]
    lat = [s[o, 0] for s, o in zip(sets, orders)]
    lam = np.zeros(m, dtype=np.int64)
    cur = np.array([o[0] for o in orders], dtype=np.int64)   # the current plan, in original rows
    # heap entries (-latency, instance): ties pop the lowest instance index first
    heap = [(-lat[i][0], i) for i in range(m)]
    heapq.heapify(heap)
    s_max = np.inf
    choice = []
    while True:
        neg_q, i = heapq.heappop(heap)
        q_max = -neg_q
        if q_max < s_max:
            # the state before stepping is a stage Pareto point: every other instance is already
            # at its cheapest point below q_max
            choice.append(cur.copy())
            s_max = q_max
        lam[i] += 1
        if lam[i] >= len(lat[i]):
            break
        cur[i] = orders[i][lam[i]]
        heapq.heappush(heap, (-lat[i][lam[i]], i))
    choice = np.asarray(choice, dtype=np.int64)
    # objectives from the plans, summed in instance order (bit-identical to brute force)
    return _stage_objectives(sets, choice, ("max", "sum")), choice


def _stage_objectives(sets, choice: np.ndarray, aggregators) -> np.ndarray:
    """Stage objective vectors of plans ``choice`` (q, m): aggregate each instance's chosen row."""
    q, m = choice.shape
    k = len(aggregators)
    out = np.zeros((q, k))
    for c, g in enumerate(aggregators):
        if g == "max":
            out[:, c] = -np.inf
    # instance by instance, in order: no (q, m, k) temporary, and sums in one fixed order keep
    # every function here bit-identical to the others
    for i in range(m):
        rows = sets[i][choice[:, i]]
        for c, g in enumerate(aggregators):
            out[:, c] = np.maximum(out[:, c], rows[:, c]) if g == "max" else out[:, c] + rows[:, c]
    return out


def _check_aggregators(aggregators, k: int) -> tuple[str, ...]:
    aggs = tuple(aggregators)
    if len(aggs) != k:
        raise ValueError(f"aggregators={aggs!r} has {len(aggs)} entries but the Pareto sets have {k} objectives")
    for g in aggs:
        if g not in AGGREGATORS:
            raise ValueError(f"aggregator {g!r} is not allowed: choose 'max' or 'sum'")
    return aggs


# ---- RAA General (Algorithm 2) ---------------------------------------------------------------------
def _simplex_grid(k: int, steps: int = 10) -> list[tuple[float, ...]]:
    if k == 1:
        return [(1.0,)]
    grid = [c for c in itertools.product(range(steps + 1), repeat=k) if sum(c) == steps]
    return [tuple(x / steps for x in c) for c in grid]


def raa_general(pareto_sets: Sequence, aggregators=("max", "sum"), weights=None, max_candidates: int = 1_000_000):
    """Algorithm 2 (General hierarchical MOO) for k objectives with ``max`` or ``sum`` aggregators.

    For every combination ``c`` of candidate values of the max objectives (all values the
    instances offer between each objective's lower bound ``max_i min_j`` and upper bound
    ``max_i max_j``), each instance picks, among its points within ``c`` on every max objective,
    the one minimising a weighted sum of the sum objectives (``find_optimal``; ties broken by the
    objectives in order); the stage points are then filtered for dominance. ``weights`` is a
    list of weight vectors over the sum objectives (default: ``(1,)`` for one, a 0.1-step simplex
    grid for more). With one max and one sum objective the result is the full stage Pareto set;
    otherwise a subset of it (Proposition 5.1).

    Returns ``(front (q, k), choice (q, m))`` like :func:`raa_path`.
    """
    k = np.asarray(pareto_sets[0]).shape[-1] if len(pareto_sets) else 0
    sets = check_pareto_sets(pareto_sets, k=k if k else None)
    aggs = _check_aggregators(aggregators, sets[0].shape[1])
    imax = [c for c, g in enumerate(aggs) if g == "max"]
    isum = [c for c, g in enumerate(aggs) if g == "sum"]
    if weights is None:
        weights = _simplex_grid(len(isum)) if isum else [()]
    weights = [np.asarray(w, dtype=float) for w in weights]
    for w in weights:
        if w.shape != (len(isum),) or np.any(w < 0):
            raise ValueError(f"each weight vector needs {len(isum)} non-negative entries (one per sum objective), got {w.tolist()}")
    allp = np.concatenate(sets)                                # (Σp_i, k)
    # find_range + find_all_possible_values: the candidate values of every max objective
    cand = []
    for c in imax:
        lo = max(s[:, c].min() for s in sets)
        hi = max(s[:, c].max() for s in sets)
        v = np.unique(allp[:, c])
        cand.append(v[(v >= lo) & (v <= hi)])
    n_comb = int(np.prod([len(v) for v in cand])) if cand else 1
    if n_comb * len(weights) > max_candidates:
        raise ValueError(f"raa_general would try {n_comb * len(weights)} candidates, more than max_candidates={max_candidates}")
    combos = np.array(list(itertools.product(*cand))) if cand else np.zeros((1, 0))
    # all points of all instances in one array, so that find_optimal runs for every instance at
    # once: sort the points by (instance, weighted sum, sum objectives, max objectives, row) and,
    # for a candidate c, each instance's first point within c on every max objective is its pick
    set_id = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    row = np.concatenate([np.arange(len(s)) for s in sets])
    plans = []
    for w in weights:
        ws = allp[:, isum] @ w if isum else np.zeros(len(allp))
        keys = [row] + [allp[:, col] for col in (imax[::-1] + isum[::-1])] + [ws, set_id]
        order = np.lexsort(keys)
        sid, srow, smax = set_id[order], row[order], allp[order][:, imax]
        for c in combos:
            ok = np.all(smax <= c, axis=1) if imax else np.ones(len(order), dtype=bool)
            first_sets, first = np.unique(sid[ok], return_index=True)
            if first_sets.size == len(sets):       # every instance has a point within c
                plans.append(srow[ok][first])
    choice = np.unique(np.asarray(plans, dtype=np.int64), axis=0)
    F = _stage_objectives(sets, choice, aggs)
    keep = pareto_indices(F)           # filter_dominated, one plan per distinct vector
    return F[keep], choice[keep]


# ---- brute force ------------------------------------------------------------------------------------
def brute_force_stage_pareto(pareto_sets: Sequence, aggregators=("max", "sum"), max_plans: int = 500_000):
    """Enumerate all Π p_i stage plans and keep the Pareto-optimal objective vectors.

    The reference the tests and exercises compare RAA with. Returns ``(front, choice)``; for a
    vector reached by several plans the lexicographically smallest plan is returned.
    """
    k = np.asarray(pareto_sets[0]).shape[-1] if len(pareto_sets) else 0
    sets = check_pareto_sets(pareto_sets, k=k if k else None)
    aggs = _check_aggregators(aggregators, sets[0].shape[1])
    total = int(np.prod([len(s) for s in sets], dtype=float))
    if total > max_plans:
        raise ValueError(f"brute force would enumerate {total} stage plans, more than max_plans={max_plans}")
    choice = np.array(list(itertools.product(*[range(len(s)) for s in sets])), dtype=np.int64)
    F = _stage_objectives(sets, choice, aggs)
    keep = pareto_indices(F)
    return F[keep], choice[keep]


# ---- WUN --------------------------------------------------------------------------------------------
def wun(front, weights=None) -> int:
    """Weighted Utopia Nearest: the index of the front point closest to the utopia point.

    Each objective is min–max normalised over the front (an objective with zero range — every
    point equal — normalises to 0, so it cannot decide), then the weighted Euclidean distance
    ``sqrt(Σ_k w_k z_k²)`` to the utopia point (all zeros) is minimised. ``weights`` default to
    equal; they are rescaled to sum to 1. Ties go to the lowest index.

    >>> wun(np.array([[100.0, 25.0], [150.0, 10.0], [300.0, 9.0]]))
    1
    >>> wun(np.array([[100.0, 25.0], [150.0, 10.0], [300.0, 9.0]]), weights=(1.0, 0.0))
    0
    """
    F = np.asarray(front, dtype=float)
    if F.ndim != 2 or F.shape[0] == 0:
        raise ValueError(f"front must be a non-empty (q, k) array, got shape {F.shape}")
    if not np.all(np.isfinite(F)):
        raise ValueError("front holds a non-finite value")
    k = F.shape[1]
    w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (k,):
        raise ValueError(f"weights must have one entry per objective: shape ({k},), got {w.shape}")
    if np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError(f"weights={w.tolist()} must be non-negative and not all zero")
    w = w / w.sum()
    lo, hi = F.min(axis=0), F.max(axis=0)
    span = hi - lo
    z = np.divide(F - lo, span, out=np.zeros_like(F), where=span > 0)
    d = np.sqrt((w * z**2).sum(axis=1))
    return int(np.argmin(d))
