"""LowCost's two building blocks (§6.3) and the cost it ranks an allocation by.

:func:`stage_interval` is stage ``k``'s interval ``I_k`` (its share of the remaining demand times the
steps still available, Fig. 7), :func:`place_stage_gangs` puts one stage's gangs at the cheapest
eligible steps of it, and :func:`allocation_key` ranks a whole allocation (its peak cost plus §7's
alignment penalty, :func:`alignment_penalty`). Units and the choices where the paper is silent are in
:mod:`.lowcost`'s docstring; :func:`.lowcost.lowcost_reference` is the plain loop built on these two,
the version the exercise rebuilds.
"""

from __future__ import annotations

import numpy as np

from ... import validate
from .jobs import ROUND_UP

__all__ = ["gang_pieces", "stage_interval", "place_stage_gangs", "alignment_penalty", "alignment_weight",
           "allocation_key"]


# ---- the two building blocks ------------------------------------------------------------------------
def gang_pieces(demand: int, gang: int) -> list[int]:
    """The pieces a stage is allocated in: ``demand // gang`` gangs, then the remainder if any.

    >>> gang_pieces(10, 4)
    [4, 4, 2]
    >>> gang_pieces(3, 8)        # a gang larger than its stage is the whole stage
    [3]
    """
    demand = validate.whole_number(demand, "demand", lo=0)
    gang = min(validate.whole_number(gang, "gang", lo=1), max(demand, 1))
    pieces = [gang] * (demand // gang)
    if demand % gang:
        pieces.append(demand % gang)
    return pieces


def stage_interval(demands, k: int, tau_r: int, a: int = 0) -> tuple[int, int]:
    """Stage ``k``'s interval ``I_k = [tau_l, tau_r]`` (§6.3, Fig. 7).

    ``demands`` is the whole skyline, ``k`` the (0-based) stage being placed, ``tau_r`` the step
    right before the allocation of stage ``k+1`` and ``a`` the job's start. The length is the stage's
    share of the remaining demand (stages ``0..k``) times the steps still available,
    ``tau_r - a + 1``, rounded half up, at least 1 and at most what leaves one step for each earlier
    stage with demand.

    >>> stage_interval((10, 12, 16, 8), k=2, tau_r=18)     # Fig. 7: 16/38 * 19 = 8 steps
    (11, 18)
    >>> stage_interval((10, 12, 16, 8), k=0, tau_r=4)      # the first stage takes what is left
    (0, 4)
    """
    demands = validate.whole_numbers(demands, "demands", lo=0, hint=ROUND_UP)
    k = validate.whole_number(k, "k", lo=0)
    if k >= len(demands) or demands[k] == 0:
        raise ValueError(f"k={k} is not a stage with demand > 0 of demands={demands!r}")
    tau_r = validate.whole_number(tau_r, "tau_r")
    a = validate.whole_number(a, "a")
    earlier = sum(1 for s in demands[:k] if s > 0)
    avail = tau_r - a + 1
    if avail < earlier + 1:
        raise ValueError(
            f"tau_r={tau_r} leaves {avail} steps after a={a}: stage {k} and the {earlier} stages before it "
            f"need at least {earlier + 1}"
        )
    remaining = sum(demands[: k + 1])
    length = (2 * demands[k] * avail + remaining) // (2 * remaining)  # round half up, exactly
    length = min(max(length, 1), avail - earlier)
    return tau_r - length + 1, tau_r


def _ratio(num, cap) -> np.ndarray:
    """``num / cap``; an empty capacity costs 0 while unused and infinity once used."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(num, dtype=float) / cap
    return np.nan_to_num(r, nan=0.0, posinf=np.inf, copy=False)  # 0/0 only: an unused empty line


def _as_lines(load, capacity, container) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Load and capacity as (Q, W) arrays of *lines* (resources, or resources x instances) and sizes.

    A 1-D ``load`` is one resource over W steps (then a 1-D ``capacity`` is per step); a 2-D load is
    (resources, W) (then a 1-D ``capacity`` is per resource). A scalar capacity is everywhere.
    """
    load = np.asarray(load, dtype=float)
    one = load.ndim == 1
    if one:
        load = load[None, :]
    if load.ndim != 2 or load.shape[1] == 0:
        raise ValueError(f"load must be (steps,) or (resources, steps) with steps > 0, got shape {load.shape}")
    if not np.all(np.isfinite(load)) or np.any(load < 0):
        raise ValueError("load must hold finite values >= 0")
    cap = np.asarray(capacity, dtype=float)
    if cap.ndim == 1:
        cap = cap[None, :] if one else cap[:, None]
    try:
        cap = np.broadcast_to(cap, load.shape).astype(float)
    except ValueError:
        raise ValueError(f"capacity of shape {np.shape(capacity)} does not match load of shape {load.shape}") from None
    if not np.all(np.isfinite(cap)) or np.any(cap < 0):
        raise ValueError("capacity must hold finite values >= 0")
    z = np.asarray(container, dtype=float)
    if z.ndim > 1 or (z.ndim == 1 and z.size not in (1, load.shape[0])):
        raise ValueError(f"container={container!r} must be one size per resource ({load.shape[0]})")
    z = np.broadcast_to(z, (load.shape[0],)).astype(float)
    if not np.all(np.isfinite(z)) or np.any(z < 0) or not np.any(z > 0):
        raise ValueError(f"container={container!r} must hold finite sizes >= 0, at least one > 0")
    return load, cap, z


def place_stage_gangs(load, capacity, tau_l: int, tau_r: int, demand: int, gang: int = 1,
                      container=1.0) -> np.ndarray | None:
    """Place one stage's gangs in ``[tau_l, tau_r]``; containers per window step, or None.

    ``load`` and ``capacity`` cover the job's window, one row per resource (a 1-D ``load`` is one
    resource); ``container`` is the size of one container in each. Gangs (see :func:`gang_pieces`)
    go one at a time to the cheapest eligible step: eligible steps are
    ``[max(tau_cur - 1, tau_l), tau_r]`` with ``tau_cur`` the leftmost step already holding part of
    this stage (``tau_r + 1`` while it is empty, so the first gang lands on ``tau_r``), restricted to
    steps where the gang fits under capacity. The cost of a step is ``max_r (load + x*size)/capacity``
    with ``x`` the stage's containers there so far; ties go to the later step. Returns None when a
    gang finds no eligible step.

    >>> place_stage_gangs(np.array([0, 0, 5, 0, 0]), 10, tau_l=1, tau_r=4, demand=6).tolist()
    [0, 0, 0, 3, 3]
    >>> place_stage_gangs(np.array([0, 0, 3, 0, 0]), 10, tau_l=0, tau_r=4, demand=12).tolist()
    [1, 2, 1, 4, 4]
    >>> place_stage_gangs(np.array([0, 0, 9, 0, 0]), 10, tau_l=0, tau_r=4, demand=6, gang=2).tolist()
    [0, 0, 0, 2, 4]
    """
    load, cap, z = _as_lines(load, capacity, container)
    W = load.shape[1]
    tau_l, tau_r = validate.whole_number(tau_l, "tau_l"), validate.whole_number(tau_r, "tau_r")
    if not 0 <= tau_l <= tau_r < W:
        raise ValueError(f"tau_l={tau_l}, tau_r={tau_r} are out of range: need 0 <= tau_l <= tau_r < {W}")
    x = np.zeros(W, dtype=np.int64)
    cur = tau_r + 1
    for piece in gang_pieces(demand, gang):
        best, best_cost = -1, np.inf
        # right to left with a strict '<': among equal costs the later step wins
        for t in range(tau_r, max(cur - 1, tau_l) - 1, -1):
            if np.any(load[:, t] + (x[t] + piece) * z > cap[:, t]):
                continue
            c = float(np.max(_ratio(load[:, t] + x[t] * z, cap[:, t])))
            if c < best_cost:
                best, best_cost = t, c
        if best < 0:
            return None
        x[best] += piece
        cur = min(cur, best)
    return x


# ---- the cost of a whole allocation -----------------------------------------------------------------
def alignment_penalty(left: int, right: int, window: int, weight: float) -> float:
    """§7's alignment penalty: ``weight * |mid(allocation) - mid(window)| / window``.

    ``left``/``right`` are the first and last steps of the allocation in window steps (0 = ``a``),
    ``window = d - a``; the allocation's mid-point is ``(left + right + 1) / 2``, the window's
    ``window / 2``, so an allocation centred in ``[a, d)`` pays nothing and one touching an edge
    pays up to ``weight / 2``.

    >>> alignment_penalty(0, 9, 40, weight=1.0)      # the first quarter of a 40-step window
    0.375
    """
    return weight * abs((left + right + 1) / 2 - window / 2) / window


def alignment_weight(cv_start_delay: float, cv_slack: float, *, threshold: float = 0.5,
                     weight: float = 1.0) -> float:
    """The alignment weight of a job: ``weight`` for "problematic" jobs, else 0 (§7).

    Problematic means a high coefficient of variation of ``T_start - T_inAvail`` (variable input
    arrival) or of ``T_outRead - T_end`` (variable slack); the threshold is ours.

    >>> alignment_weight(0.8, 0.1), alignment_weight(0.1, 0.2)
    (1.0, 0.0)
    """
    cv_start_delay, cv_slack, threshold, weight = (
        validate.number(v, name, lo=0) for name, v in (("cv_start_delay", cv_start_delay), ("cv_slack", cv_slack),
                                                        ("threshold", threshold), ("weight", weight)))
    return weight if max(cv_start_delay, cv_slack) > threshold else 0.0


def allocation_key(load, capacity, container, x, alignment: float = 0.0) -> tuple[float, float, int]:
    """How LowCost ranks one end point's allocation ``x`` (containers per window step); smaller wins.

    ``(peak + alignment penalty, container-weighted sum of costs, end step)``: the peak is the largest
    cost ``c(t)`` on the steps ``x`` occupies once it is added. The sum is rounded to 9 decimals so
    that summation order never decides a tie.
    """
    load, cap, z = _as_lines(load, capacity, container)
    x = np.asarray(x, dtype=np.int64)
    occ = np.flatnonzero(x)
    post = np.max(_ratio(load + x[None, :] * z[:, None], cap), axis=0)
    peak = float(np.max(post[occ]))
    area = float(np.round(np.sum(x * np.where(x > 0, post, 0.0)), 9))
    pen = alignment_penalty(int(occ[0]), int(occ[-1]), x.size, alignment)
    return peak + pen, area, int(occ[-1])
