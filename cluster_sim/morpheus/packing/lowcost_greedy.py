"""LowCost's search over end points (§6.3, steps 1-3) as the paper states it, compiled: the kernel of
:func:`~cluster_sim.morpheus.packing.lowcost.lowcost_window`.

Each end point is a row; stage by stage, right to left, every row places its stage's gangs one by one
at the cheapest eligible step of the stage's interval (the rule of
:func:`~cluster_sim.morpheus.packing.stages.place_stage_gangs`), as the numpy reference
(:func:`~cluster_sim.morpheus.packing.lowcost_scan._scan_reference`) does with one round of numpy calls per
gang. Here they are plain loops compiled by Numba (``numba.njit``): a job's search is one call, so its cost is
the work itself (rows x gangs x eligible steps), not the interpreter's (issue 33: 1,000 periodic jobs in about
2.4 s, against about 9 s for the numpy search by sorting each stage's gangs that this replaced).

The same numbers, not close ones: a cost ``c(t) = max over lines of (L + x*z) / C`` is computed with the
same IEEE operations in the same order (an unused empty line costs 0), ties go to the same step, and a
stage's area (the container-weighted sum of its costs over the stage's width) is added in numpy's order
(:func:`_numpy_sum`). ``tests/morpheus/test_lowcost_scan.py`` holds the two searches to the same answer, field
by field to the last bit, on seeded random windows (with many ties) and the benchmark's jobs.

Numba keeps the machine code in ``__pycache__`` (``cache=True``): the first call in a fresh clone compiles it
(about 5 s of CPU, once), later processes load it (about 0.3 s, with Numba's import).
"""

from __future__ import annotations

import numba
import numpy as np

from .lowcost_scan import Scan

__all__ = ["greedy_scan"]


@numba.njit(cache=True, error_model="numpy")  # x / 0 is inf or nan, as in numpy
def _cost(L, C, z, t, x, safe):
    """``c(t)`` with ``x`` more containers at window step ``t``, in the reference's float operations: ``(L + x *
    z) / C`` per line, the largest (``safe``: every capacity is positive, else 0 / 0 counts 0)."""
    best = -np.inf
    for q in range(L.shape[0]):
        v = (L[q, t] + x * z[q]) / C[q, t]
        if not safe and v != v:  # 0 / 0: an unused empty line costs nothing
            v = 0.0
        if q == 0 or v > best:
            best = v
    return best


@numba.njit(cache=True)
def _block_sum(a, lo, n):
    """numpy's sum of ``a[lo:lo + n]`` for ``n <= 128``: below 8 numbers in order, else in eight running sums."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r = a[lo: lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@numba.njit(cache=True)
def _numpy_sum(a, n):
    """``a[:n].sum()`` as numpy adds float64 numbers (pairwise: blocks of at most 128 by :func:`_block_sum`,
    longer runs as the sum of two halves cut at a multiple of 8), so a stage's area is numpy's float to the last
    bit (``tests/morpheus/test_lowcost_scan.py`` holds it to numpy's ``sum`` on lengths up to 600). The halves
    are walked with a stack, not recursion (Numba's cache does not keep recursive functions)."""
    if n <= 128:
        return _block_sum(a, 0, n)
    todo_lo, todo_n = np.empty(128, np.int64), np.empty(128, np.int64)  # runs to sum; n < 0: add the top two sums
    sums = np.empty(128)
    todo_lo[0], todo_n[0], t, v = 0, n, 1, 0
    while t:
        t -= 1
        lo, m = todo_lo[t], todo_n[t]
        if m < 0:
            v -= 1
            sums[v - 1] += sums[v]
        elif m <= 128:
            sums[v] = _block_sum(a, lo, m)
            v += 1
        else:
            h = m // 2
            h -= h % 8
            todo_lo[t], todo_n[t] = 0, -1                              # then add them, left + right
            todo_lo[t + 1], todo_n[t + 1] = lo + h, m - h              # the right half second
            todo_lo[t + 2], todo_n[t + 2] = lo, h                      # the left half first
            t += 3
    return sums[0]


@numba.njit(cache=True, error_model="numpy")  # x / 0 is inf or nan, as in numpy
def _search(L, C, z, xmax_w, sizes, gangs, ends, safe, X, lo, hi, peak, area, alive, widths, offsets):
    """Every row's stages, right to left. ``sizes``/``gangs`` are the stages with demand (``pos`` order).
    Writes, for stage ``i`` at row ``r``: ``X``, the containers over local steps ``u = 0 .. widths[i] - 1``
    (step ``hi - u``) at ``offsets[i] + r * widths[i]``; ``lo``/``hi``; ``peak``/``area``, the largest cost and
    the container-weighted sum of costs over those steps (a cost counts 0 where nothing is placed); ``alive[i,
    r]``, whether the row placed the stage. The width of a stage is the same at every row, as in the numpy
    reference (its arrays are rows x width), and sums of that many numbers decide the area's last bit.
    Returns, per row, the stage where it failed (-1 if none) and how many stages it placed before, and the last
    stage (in ``pos`` order) that was run."""
    W = L.shape[1]
    E = ends.size
    Kp = sizes.size
    fail = np.full(E, -1, np.int64)
    placed = np.full(E, -1, np.int64)
    tau = ends.copy()
    live = np.ones(E, np.bool_)
    remaining = 0
    for i in range(Kp):
        remaining += sizes[i]
    off = 0
    U_most = 1
    for i in range(Kp):
        g = min(gangs[i], sizes[i])
        U_most = max(U_most, min(W, (sizes[i] + g - 1) // g + 1))
    oc = np.empty(U_most)
    cnt = np.empty(U_most, np.int64)
    xm = np.empty(U_most, np.int64)
    weighted = np.empty(U_most)
    length = np.empty(E, np.int64)
    last = Kp
    for idx in range(Kp - 1, -1, -1):
        s = sizes[idx]
        g = min(gangs[idx], s)
        nfull = s // g
        rem = s - nfull * g
        # the stage's interval: its share of the remaining demand times the steps left (tau + 1, rounded
        # half up), at least one step and at most what leaves one step for each earlier stage
        most_len = 0
        for r in range(E):
            if live[r]:
                n = (2 * s * (tau[r] + 1) + remaining) // (2 * remaining)
                length[r] = min(max(n, 1), tau[r] + 1 - idx)
                most_len = max(most_len, length[r])
        # a stage of n pieces occupies at most n steps and can see one more: look no further
        U = min(most_len, nfull + (1 if rem else 0) + 1)
        widths[idx] = U
        offsets[idx] = off
        any_live = False
        for r in range(E):
            if not live[r]:
                continue
            t0 = tau[r]
            n = length[r]
            base = off + r * U
            for u in range(U):
                xm[u] = xmax_w[t0 - u] if u < n else -1
                X[base + u] = 0
            ok = True
            far = -1
            if U == 1:  # the interval is the single step tau: the stage stacks there or fails
                if xm[0] >= s:
                    X[base] = s
                    far = 0
                else:
                    ok = False
            else:
                for u in range(U):
                    cnt[u] = 0
                    oc[u] = np.inf
                if xm[0] >= g:
                    oc[0] = _cost(L, C, z, t0, 0, safe)
                for _ in range(nfull):
                    j = 0  # the cheapest open step (the first minimum: ties go to the later step, the smaller u)
                    for u in range(1, min(far + 2, U)):
                        if oc[u] < oc[j]:
                            j = u
                    if oc[j] == np.inf:
                        ok = False
                        break
                    cnt[j] += 1
                    if j > far:  # the frontier was taken: open the next step left
                        far = j
                        if j + 1 < n and xm[j + 1] >= g:
                            oc[j + 1] = _cost(L, C, z, t0 - j - 1, 0, safe)
                    oc[j] = _cost(L, C, z, t0 - j, cnt[j] * g, safe) if (cnt[j] + 1) * g <= xm[j] else np.inf
                if ok and rem:  # the last piece: the cheapest step of 0 .. far + 1 inside the interval where it fits
                    j = -1
                    best = np.inf
                    for u in range(min(far + 2, n)):
                        if cnt[u] * g + rem <= xm[u]:
                            c = _cost(L, C, z, t0 - u, cnt[u] * g, safe)
                            if c < best:
                                best, j = c, u
                    if j < 0:
                        ok = False
                    else:
                        X[base + j] = rem
                        far = max(far, j)
                if ok:
                    for u in range(far + 1):
                        X[base + u] += cnt[u] * g
            if not ok:
                live[r] = False
                fail[r] = idx
                placed[r] = Kp - 1 - idx
                continue
            any_live = True
            top = 0.0
            for u in range(U):
                c = _cost(L, C, z, t0 - u, X[base + u], safe) if X[base + u] > 0 else 0.0
                top = max(top, c) if u else c
                weighted[u] = X[base + u] * c
            peak[idx, r] = top
            area[idx, r] = _numpy_sum(weighted, U)
            hi[idx, r] = t0
            lo[idx, r] = t0 - far
            alive[idx, r] = True
            tau[r] = t0 - far - 1
        off += E * U
        remaining -= s
        last = idx
        if not any_live:
            break
    return fail, placed, last


def greedy_scan(L, C, z, xmax_w, demands, gangs, pos, ends) -> Scan:
    """LowCost's stages 3-1 at every end point ``ends`` (window steps): the arguments and the answer of
    :func:`~cluster_sim.morpheus.packing.lowcost_scan._scan_reference`, computed by the compiled loops."""
    Kp, E = len(pos), ends.size
    sizes = np.array([demands[k] for k in pos], dtype=np.int64)
    stage_gangs = np.array([gangs[k] for k in pos], dtype=np.int64)
    pieces = -(-sizes // np.minimum(stage_gangs, sizes))
    X = np.zeros(E * int(np.minimum(pieces + 1, L.shape[1]).sum()), dtype=np.int64)  # a width <= pieces + 1, W
    lo, hi = np.zeros((Kp, E), dtype=np.int64), np.zeros((Kp, E), dtype=np.int64)
    peak, area = np.zeros((Kp, E)), np.zeros((Kp, E))
    alive = np.zeros((Kp, E), dtype=bool)
    widths, offsets = np.zeros(Kp, dtype=np.int64), np.zeros(Kp, dtype=np.int64)
    C = np.ascontiguousarray(C, dtype=float)
    fail, placed, last = _search(np.ascontiguousarray(L, dtype=float), C, np.ascontiguousarray(z, dtype=float),
                                 np.ascontiguousarray(xmax_w, dtype=np.int64), sizes, stage_gangs,
                                 np.ascontiguousarray(ends, dtype=np.int64), bool(np.all(C > 0)), X, lo, hi, peak,
                                 area, alive, widths, offsets)
    if last > 0 or not alive[0].any():  # no row placed every stage: where the row that got furthest failed
        return Scan(refused=int(pos[fail[np.argmax(placed)]]))
    stage_lo, stage_hi, stage_x, stage_ids, stage_peak, stage_area = {}, {}, {}, {}, {}, {}
    left = alive.sum(axis=1).tolist()  # rows only leave, stage by stage from the right
    ids = np.arange(E)
    for idx in range(Kp - 1, -1, -1):
        k, U, off = pos[idx], int(widths[idx]), int(offsets[idx])
        x = X[off: off + E * U].reshape(E, U)
        if left[idx] == E:
            stage_lo[k], stage_hi[k], stage_x[k], stage_peak[k], stage_area[k] = lo[idx], hi[idx], x, peak[idx], area[idx]
        else:
            if left[idx] < ids.size:
                ids = np.flatnonzero(alive[idx])
            stage_lo[k], stage_hi[k], stage_x[k] = lo[idx, ids], hi[idx, ids], x[ids]
            stage_peak[k], stage_area[k] = peak[idx, ids], area[idx, ids]
        stage_ids[k] = ids
    return Scan(ids, stage_ids, stage_lo, stage_hi, stage_x, stage_peak, stage_area)
