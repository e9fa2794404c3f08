"""LowCost (§6.3 of Morpheus, Jyothi et al., OSDI'16): periodic reservations packed stage by stage.

Vocabulary and units (the paper's, made concrete)
--------------------------------------------------
* Time is in **plan steps** (one minute by default, as the paper quantises skylines). A job's
  ``period``, start ``a`` and deadline ``d`` are whole steps; ``a`` and ``d`` are relative to the
  period start (``0 <= a < period``, ``a < d <= a + period``) and the window is ``[a, d)``: the last
  step a job may use is ``d - 1``.
* A **stage** is one step of the job's skyline R* (§5: "each stage k captures a timestep of the
  reservation"). Its **demand** ``s_k`` is a whole number of containers for one step, i.e.
  ``s_k`` container-steps; by §5's default minimum parallelism of one container it may be stretched
  over several steps. A stage of demand 0 needs no time and is skipped (it keeps its index).
* A **gang** ``g_k`` is the stage's minimum parallelism: containers are allocated ``g_k`` at a time,
  one step each. A stage's demand is cut into ``s_k // g_k`` gangs and, when ``g_k`` does not
  divide ``s_k``, one last smaller piece of ``s_k % g_k`` containers (the paper is silent; this keeps
  the demand exact). A gang larger than its stage is the whole stage.
* Each container has a size in every resource of the plan (``container``, default one unit of each);
  the plan's cost is ``c(t) = max_r load(r, t) / capacity(r, t)``.

Stages are numbered from 0 in code and messages (the paper's stage 3 of Fig. 7 is ``k = 2``).

LowCost, step by step (the choices where the paper is silent are marked *ours*)
---------------------------------------------------------------------------------
1. For every **end point** ``e`` in the window (the step the job's allocation ends on) run 2-4 and
   keep the cheapest allocation (``repeats the above procedure for different end points``).
   *Ours:* when a window has more than 64 possible end points, 64 evenly spaced ones counted back
   from the deadline (:func:`end_points`; ``max_end_points=None`` tries every one).
2. Stages are handled in **reverse chronological order**. Stage ``k``'s interval
   ``I_k = [tau_l, tau_r]`` ends right before stage ``k+1``'s allocation (for the last stage,
   ``tau_r = e``) and its length is the stage's share of the **remaining** demand times the time
   still available, ``s_k / sum_{k'<=k} s_k' * (tau_r - a + 1)`` (Fig. 7: ``16/38 * 19 = 8``), see
   :func:`stage_interval`. *Ours:* rounded half up, at least one step, and at most what leaves one
   step for every earlier stage (so a job is never stranded by rounding).
3. Gangs go one by one to the **cheapest eligible step**, eligible steps being
   ``[max(tau_cur - 1, tau_l), tau_r]`` where ``tau_cur`` is the stage's leftmost occupied step, see
   :func:`place_stage_gangs`. *Ours:* an empty stage has ``tau_cur = tau_r + 1``, so its first gang
   lands on ``tau_r`` - the only reading under which the paper's rule leaves no hole between
   stages; "cheapest" is the cost ``c(t)`` now (with the job's own gangs so far, as in Hadoop's
   LowCost); a step where the gang would exceed capacity is not eligible; ties go to the later step.
   A stage that cannot be completed inside its interval makes that end point infeasible.
4. **Cost of an allocation** (*ours*, the paper says "minimum cost"): the largest cost ``c(t)`` the
   job leaves on the steps it occupies, plus §7's alignment penalty; ties go to the smaller
   container-weighted sum of those costs, then to the earlier end point.
5. **Periodic jobs** (§6.3 "Multiple instances"): every instance keeps one offset, so LowCost works
   on one period in which the cost of offset ``o`` is the maximum over the instances' steps
   ``o, o + P, o + 2P, ...`` of the LCM horizon (the plan does that folding, see
   :class:`~cluster_sim.morpheus.packing.plan.ReservationPlan`).
6. **Alignment penalty** (§7) for problematic jobs: ``alignment * |mid(alloc) - (a + d)/2| / (d - a)``
   added to the allocation's cost; the weight is the job's ``alignment`` (0 for most jobs).

Two implementations of 1-4 live here and are tested to agree decision for decision:
:func:`lowcost_reference` (a plain loop over end points calling the two building blocks, the
version the exercise rebuilds) and :func:`lowcost_window` (the same steps run for all end points at
once with numpy, what the plan uses). :func:`greedy_window` is the comparator: the rigid skyline at
the earliest start where it fits.

Example (the worked example of Fig. 7)
--------------------------------------
The paper gives stage 3's demand (16), the remaining demand (38) and the time left (19 steps); the
other stages (10, 12 and a gang of 8 for stage 4) and the 20-step window are our reconstruction,
chosen so that the wrong readings differ: 16/46 of the time (over the *total* demand) gives 7
steps, whether of the 19 steps left or of the whole window.

>>> stage_interval((10, 12, 16, 8), k=2, tau_r=18)     # 16/38 of the 19 steps left: 8 steps
(11, 18)
>>> from cluster_sim.morpheus.packing.jobs import PeriodicJob
>>> job = PeriodicJob(period=20, a=0, d=20, demands=(10, 12, 16, 8), gang=(1, 1, 1, 8))
>>> w = lowcost_window(np.zeros((1, 20)), np.full((1, 20), 10.0), np.ones(1), job.demands, job.gangs)
>>> w.x.tolist()                                        # containers per step of the window
[2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 8]
>>> w.stage_steps()                                     # [first, last] step of each stage
[(0, 4), (5, 10), (11, 18), (19, 19)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ... import validate
from .jobs import ROUND_UP, Allocation, _gangs
from .stages import _as_lines, allocation_key, gang_pieces, place_stage_gangs, stage_interval

__all__ = ["WindowResult", "MAX_END_POINTS", "end_points", "lowcost_reference", "lowcost_window", "greedy_window",
           "check_allocation"]


# ---- LowCost on one window ----------------------------------------------------------------------------
@dataclass
class WindowResult:
    """LowCost's (or the greedy's) answer on one window: containers per window step and stage spans.

    ``x`` is None when no end point worked; then ``reason`` says why and ``stage`` names the stage
    that failed at the most promising end point. ``spans[k] = (first, last)`` window step of stage
    ``k`` (``(first, first - 1)`` for a stage without demand).
    """

    x: np.ndarray | None
    spans: list = field(default_factory=list)
    key: tuple = ()
    reason: str = ""
    stage: int | None = None

    def stage_steps(self) -> list[tuple[int, int]]:
        return [(int(lo), int(hi)) for lo, hi in self.spans]

    @property
    def left(self) -> int:
        return int(np.flatnonzero(self.x)[0])

    @property
    def right(self) -> int:
        return int(np.flatnonzero(self.x)[-1])

    def bounds(self) -> np.ndarray:
        """Stage bounds relative to the allocation's first step (see :class:`Allocation`)."""
        widths = [hi - lo + 1 for lo, hi in self.spans]
        return np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)


MAX_END_POINTS = 64


def end_points(stages: int, window: int, max_end_points: int | None = MAX_END_POINTS) -> np.ndarray:
    """The end points LowCost tries, as window steps: every step from ``stages - 1`` (room for one
    step per stage) to ``window - 1`` (the deadline), or, when there are more than
    ``max_end_points``, evenly spaced ones counted back from the deadline (ours: the paper repeats
    over "different end points" without saying which; ``None`` tries them all).

    >>> end_points(3, 10).tolist()
    [2, 3, 4, 5, 6, 7, 8, 9]
    >>> end_points(3, 10, max_end_points=3).tolist()
    [3, 6, 9]
    """
    n = window - stages + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    if max_end_points is None or n <= max_end_points:
        return np.arange(stages - 1, window, dtype=np.int64)
    stride = -(-n // validate.whole_number(max_end_points, "max_end_points", lo=1))
    return np.arange(window - 1, stages - 2, -stride, dtype=np.int64)[::-1].copy()


def _check_stages(demands, gangs) -> tuple[tuple[int, ...], tuple[int, ...]]:
    demands = validate.whole_numbers(demands, "demands", lo=0, hint=ROUND_UP)
    gangs = _gangs(gangs, demands)
    if not any(demands):
        raise ValueError(f"demands={demands!r} is not allowed: need at least one stage with demand > 0")
    return demands, gangs


def _spans_from(lo_by_stage: dict, hi_by_stage: dict, K: int, left: int) -> list[tuple[int, int]]:
    spans, nxt = [], left
    for k in range(K):
        if k in lo_by_stage:
            spans.append((lo_by_stage[k], hi_by_stage[k]))
            nxt = hi_by_stage[k] + 1
        else:
            spans.append((nxt, nxt - 1))
    return spans


def lowcost_reference(load, capacity, container, demands, gangs=None, alignment: float = 0.0, *,
                      split: Callable = stage_interval, place: Callable = place_stage_gangs,
                      max_end_points: int | None = MAX_END_POINTS) -> WindowResult:
    """LowCost on one window, written plainly: every end point, stages right to left, gangs one by one.

    ``load``/``capacity`` are (resources, W) over the job's window (W = d - a; window step 0 is
    ``a``), already folded over the instances for a periodic job. ``split`` and ``place`` are the two
    building blocks (:func:`stage_interval`, :func:`place_stage_gangs`) and can be swapped for a
    student's; ``max_end_points`` as in :func:`end_points`. Same answer as :func:`lowcost_window`,
    much slower.
    """
    load, cap, z = _as_lines(load, capacity, container)
    demands, gangs = _check_stages(demands, gangs)
    W, K = load.shape[1], len(demands)
    pos = [k for k in range(K) if demands[k] > 0]
    best: WindowResult | None = None
    closest = (-1, None)  # (stages placed, refusal stage) at the end point that got furthest
    for e in end_points(len(pos), W, max_end_points).tolist():
        x = np.zeros(W, dtype=np.int64)
        lo_s, hi_s = {}, {}
        tau_r, failed = e, None
        for placed, k in enumerate(reversed(pos)):
            tau_l, _ = split(demands, k, tau_r, 0)
            stage = place(load, cap, tau_l, tau_r, demands[k], gangs[k], z)
            if stage is None:
                failed = k
                if placed > closest[0]:
                    closest = (placed, k)
                break
            occ = np.flatnonzero(stage)
            lo_s[k], hi_s[k] = int(occ[0]), int(occ[-1])
            x += stage
            tau_r = int(occ[0]) - 1
        if failed is not None:
            continue
        key = allocation_key(load, cap, z, x, alignment)
        if best is None or key < best.key:
            best = WindowResult(x, _spans_from(lo_s, hi_s, K, int(np.flatnonzero(x)[0])), key)
    if best is None:
        return _no_room(closest[1], W)
    return best


def _no_room(stage: int | None, W: int) -> WindowResult:
    if stage is None:
        return WindowResult(None, reason=f"no end point in the {W}-step window leaves room", stage=None)
    return WindowResult(
        None, stage=stage,
        reason=f"no end point in the {W}-step window fits: stage {stage} finds no room in its interval "
               f"even where the most stages fit",
    )


def _max_fit(Lf: np.ndarray, Cf: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Largest ``X`` with ``L + X*z <= C`` on every line, in the same float arithmetic as the
    reference's test (so ``x + piece <= X`` decides exactly what ``place_stage_gangs`` decides); -1
    when even the current load exceeds a line."""
    zq = z[:, None]
    big = np.int64(1) << 40
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(zq > 0, np.floor((Cf - Lf) / np.where(zq > 0, zq, 1.0)), big)
    X = np.clip(np.min(est, axis=0), -1, big).astype(np.int64)
    X = np.where(np.any(Lf > Cf, axis=0), -1, X)
    for _ in range(3):  # the float estimate can be one off either way: settle it with the reference's test
        over = (X >= 0) & np.any(Lf + X * zq > Cf, axis=0)
        under = (X < big) & ~over & np.all(Lf + (X + 1) * zq <= Cf, axis=0)
        if not (over.any() or under.any()):
            return X
        X = X - over + under
    # a step still moving has a z below its load's last digit (L + X*z == L for many X): steps of one would
    # take up to 2**40 rounds, so it is settled alone, galloping (the same largest X that fits)
    over = (X >= 0) & np.any(Lf + X * zq > Cf, axis=0)
    under = (X < big) & ~over & np.all(Lf + (X + 1) * zq <= Cf, axis=0)
    for j in np.flatnonzero(over | under):
        X[j] = _max_fit_step(Lf[:, j].tolist(), Cf[:, j].tolist(), z.tolist())
    return X


def _floor_below(v: float, big: int) -> int:
    """``floor(v)``, or ``big`` from there up (an infinite quotient included), as :func:`_max_fit`'s clip."""
    return math.floor(v) if v < big else big


def _max_fit_step(L, C, z) -> int:
    """:func:`_max_fit` at one step (``L``, ``C``, ``z``: a float per resource), in Python floats: the same IEEE
    double arithmetic in the same order, so the same answer. For DRA's room over a grant's step or two (tens of
    thousands of calls in a paper cycle), where numpy's cost per call is most of the answer's."""
    big = 1 << 40
    if any(l > c for l, c in zip(L, C)):
        return -1
    est = min((_floor_below((c - l) / q, big) if q > 0 else big) for l, c, q in zip(L, C, z))
    X = int(min(max(est, -1), big))
    while X >= 0 and any(l + X * q > c for l, c, q in zip(L, C, z)):  # the float estimate can be one over
        X -= 1
    # ... or under: walk up by steps that double while they fit (L + X*z can stay L for many X when z is below
    # L's last digit), back to one when a step overshoots; it stops where X + 1 does not fit, as steps of one would
    step = 1
    while X < big:
        up = min(X + step, big)
        if all(l + up * q <= c for l, c, q in zip(L, C, z)):
            X, step = up, step * 2
        elif step == 1:
            break
        else:
            step = 1
    return X


def scan_end_points(L, C, z, xmax_w, demands, gangs, pos, ends):
    """LowCost's search over end points: :func:`~cluster_sim.morpheus.packing.lowcost_greedy.greedy_scan`, the
    paper's gang-by-gang rule compiled by Numba, imported on first use (importing Numba costs each process about
    0.4 s, which only the packing labs should pay). The benchmark and the tests swap in the numpy reference,
    :func:`~cluster_sim.morpheus.packing.lowcost_scan._scan_reference`, here."""
    from .lowcost_greedy import greedy_scan

    return greedy_scan(L, C, z, xmax_w, demands, gangs, pos, ends)


def lowcost_window(load, capacity, container, demands, gangs=None, alignment: float = 0.0, *,
                   max_end_points: int | None = MAX_END_POINTS) -> WindowResult:
    """LowCost on one window, all end points at once; the same decisions as the reference.

    Arguments as :func:`lowcost_reference`. Each end point is a row; :func:`scan_end_points` places every
    stage's gangs at every row in one compiled call (:mod:`~cluster_sim.morpheus.packing.lowcost_greedy`), and
    the cheapest row that placed every stage is kept.
    """
    L, C, z = _as_lines(load, capacity, container)
    demands, gangs = _check_stages(demands, gangs)
    W, K = L.shape[1], len(demands)
    pos = [k for k in range(K) if demands[k] > 0]
    Kp = len(pos)
    ends = end_points(Kp, W, max_end_points)
    if ends.size <= 0:
        return _no_room(None, W)
    xmax_w = _max_fit(L, C, z)  # containers that fit at each window step (the same for every row)
    found = scan_end_points(L, C, z, xmax_w, demands, gangs, pos, ends)  # stages 3-1
    if found.ids is None:
        return _no_room(found.refused, W)
    return _best_end_point(ends, found.ids, pos, K, W, found.stage_ids, found.stage_lo, found.stage_hi,
                           found.stage_x, found.stage_peak, found.stage_area, alignment)


def _best_end_point(ends, ids, pos, K, W, stage_ids, stage_lo, stage_hi, stage_x, stage_peak, stage_area,
                    alignment):
    """Keep the cheapest surviving end point (see :func:`allocation_key`) and assemble its allocation."""
    peak = np.full(ids.size, -np.inf)
    area = np.zeros(ids.size)
    rows = {}  # the survivors, as rows of each stage's arrays (None: no row failed after that stage, the same rows)
    for k in pos:
        if stage_ids[k].size == ids.size:
            rows[k] = None
            peak = np.maximum(peak, stage_peak[k])
            area = area + stage_area[k]
            continue
        rows[k] = where = np.searchsorted(stage_ids[k], ids)
        peak = np.maximum(peak, stage_peak[k][where])
        area = area + stage_area[k][where]
    area = np.round(area, 9)
    left = stage_lo[pos[0]] if rows[pos[0]] is None else stage_lo[pos[0]][rows[pos[0]]]
    right = ends[ids]
    score = peak + alignment * np.abs((left + right + 1) / 2 - W / 2) / W if alignment else peak + 0.0
    b = int(np.lexsort((right, area, score))[0])
    x = np.zeros(W, dtype=np.int64)
    lo_b, hi_b = {}, {}
    for k in pos:
        row = b if rows[k] is None else rows[k][b]
        lo, hi = lo_b[k], hi_b[k] = int(stage_lo[k][row]), int(stage_hi[k][row])
        x[lo:hi + 1] = stage_x[k][row][: hi - lo + 1][::-1]  # local step u is hi - u
    spans = _spans_from(lo_b, hi_b, K, int(left[b]))
    return WindowResult(x, spans, (float(score[b]), float(area[b]), int(right[b])))


def greedy_window(load, capacity, container, demands, gangs=None) -> WindowResult:
    """The comparator: the rigid skyline (stage ``k`` = ``s_k`` containers in one step) at the earliest
    start of the window where every step fits. Gangs are respected trivially (a stage is one stack).

    >>> greedy_window(np.array([[0, 9, 0, 0, 0]]), 10, 1, (3, 2)).x.tolist()
    [0, 0, 3, 2, 0]
    """
    L, C, z = _as_lines(load, capacity, container)
    demands, gangs = _check_stages(demands, gangs)
    W, K = L.shape[1], len(demands)
    pos = [k for k in range(K) if demands[k] > 0]
    shape = np.array([demands[k] for k in pos], dtype=np.int64)
    n = W - shape.size + 1
    if n <= 0:
        return _no_room(None, W)
    win_L = np.lib.stride_tricks.sliding_window_view(L, shape.size, axis=1)  # (Q, n, Kp)
    win_C = np.lib.stride_tricks.sliding_window_view(C, shape.size, axis=1)
    fits = np.all(win_L + shape[None, None, :] * z[:, None, None] <= win_C, axis=(0, 2))
    if not fits.any():
        return WindowResult(None, reason=f"no start in the {W}-step window fits the rigid skyline")
    s0 = int(np.argmax(fits))
    x = np.zeros(W, dtype=np.int64)
    x[s0:s0 + shape.size] = shape
    lo = {k: s0 + i for i, k in enumerate(pos)}
    return WindowResult(x, _spans_from(lo, dict(lo), K, s0),
                        allocation_key(L, C, z, x))


# ---- checking an allocation ---------------------------------------------------------------------------
def check_allocation(alloc: Allocation, horizon: int | None = None) -> None:
    """Raise ``AssertionError`` naming the instance and stage unless ``alloc`` is a valid reservation.

    Every instance: each stage's demand delivered exactly, inside ``[a, d)`` of its period (or of the
    ad hoc job's window), in whole gangs (plus at most one remainder piece); the allocation is one
    contiguous block (no step without containers) with the stages in order. A periodic allocation's
    instances share one offset and one shape.
    """
    job = alloc.job
    K = len(job.demands)
    n = len(alloc.starts)
    if not (len(alloc.blocks) == len(alloc.bounds) == n) or n == 0:
        raise AssertionError("starts, blocks and bounds must have one entry per instance")
    for i in range(n):
        start, block, bounds = int(alloc.starts[i]), np.asarray(alloc.blocks[i]), np.asarray(alloc.bounds[i])
        where = f"instance {i}"
        if block.ndim != 1 or block.size == 0 or np.any(block <= 0):
            raise AssertionError(f"{where}: the allocation has a hole or is empty (a step without containers)")
        if bounds.shape != (K + 1,) or bounds[0] != 0 or bounds[-1] != block.size or np.any(np.diff(bounds) < 0):
            raise AssertionError(f"{where}: stage bounds {bounds.tolist()} do not cover the block in order")
        # instance i of a periodic job (placed with one offset or not) belongs to period i
        lo, hi = (job.a, job.d) if job.period is None else (i * job.period + job.a, i * job.period + job.d)
        if start < lo or start + block.size > hi:
            raise AssertionError(f"{where}: steps [{start}, {start + block.size}) leave the window [{lo}, {hi})")
        for k in range(K):
            part = block[bounds[k]:bounds[k + 1]]
            s = job.demands[k]
            if int(part.sum()) != s:
                raise AssertionError(f"{where}, stage {k}: delivers {int(part.sum())} containers, demand is {s}")
            if s == 0:
                continue
            if part.size == 0:
                raise AssertionError(f"{where}, stage {k}: has demand but no step")
            g = min(job.gangs[k], s)
            r = s % g
            rest = part % g
            if r == 0 and np.any(rest):
                raise AssertionError(f"{where}, stage {k}: {part.tolist()} is not whole gangs of {g}")
            if r and not (np.count_nonzero(rest == r) == 1 and np.count_nonzero(rest) == 1):
                raise AssertionError(f"{where}, stage {k}: {part.tolist()} is not gangs of {g} plus one piece of {r}")
    if alloc.periodic:
        P = job.period
        for i in range(1, n):
            same_shape = np.array_equal(alloc.blocks[i], alloc.blocks[0])
            if int(alloc.starts[i]) - i * P != int(alloc.starts[0]) or not same_shape:
                raise AssertionError(f"instance {i} does not share instance 0's offset and shape")
    if horizon is not None and alloc.periodic and job.period is not None and n * job.period != horizon:
        raise AssertionError(
            f"a periodic allocation must have horizon/period = {horizon // job.period} instances, has {n}")
