"""What LowCost's search over end points (§6.3, steps 1-3) finds, and the search in numpy as the reference.

Each end point is a row; the rows walk through the stages right to left together, and within a stage every row
places its gangs one by one at the cheapest eligible step (the paper's rule,
:func:`~cluster_sim.morpheus.packing.stages.place_stage_gangs`). :func:`_scan_reference` does that with one
round of numpy calls per gang, every row in lock step: the spec the compiled search
(:mod:`~cluster_sim.morpheus.packing.lowcost_greedy`, what ``lowcost_window`` runs) is tested against, and the
benchmark's baseline. Both answer with a :class:`Scan`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Scan"]


class Scan(NamedTuple):
    """What the search over end points found, stage by stage (``k`` as in ``demands``): for the rows
    that placed every stage, ``stage_ids[k]`` (rows, as indices into the end points), ``stage_lo[k]``
    and ``stage_hi[k]`` (the stage's first and last window step), ``stage_x[k]`` (containers per local
    step ``u``, step ``hi - u``), ``stage_peak[k]`` and ``stage_area[k]`` (largest cost and
    container-weighted sum of costs on its steps); ``ids`` the rows that placed every stage. When no
    row did, ``ids`` is None and ``refused`` the stage that failed at the row that got furthest."""

    ids: np.ndarray | None = None
    stage_ids: dict | None = None
    stage_lo: dict | None = None
    stage_hi: dict | None = None
    stage_x: dict | None = None
    stage_peak: dict | None = None
    stage_area: dict | None = None
    refused: int | None = None


def _scan_reference(L, C, z, xmax_w, demands, gangs, pos, ends) -> Scan:
    """LowCost's stages 3-1 at every end point ``ends`` (window steps), gang by gang in numpy (every row in
    lock step, one round of numpy calls per gang).

    ``L``/``C`` are (lines, W) load and capacity over the window, ``z`` the container's size on each line,
    ``xmax_w`` the containers that fit at each window step, ``demands``/``gangs`` the job's stages and ``pos``
    the stages with demand."""
    from .stages import gang_pieces

    W, K = L.shape[1], len(demands)
    Kp = len(pos)
    zq = z[:, None]
    csum = np.cumsum([demands[k] for k in pos])
    ids = np.arange(ends.size)              # row -> index into ends; failed rows leave between stages
    tau_r = ends.copy()
    placed_all = np.zeros(ends.size, dtype=np.int64)
    fail_all = np.full(ends.size, -1)
    stage_lo, stage_hi, stage_x, stage_ids, stage_peak, stage_area = {}, {}, {}, {}, {}, {}
    safe = bool(np.all(C > 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        for idx in range(Kp - 1, -1, -1):
            k = pos[idx]
            s, remaining = demands[k], int(csum[idx])
            E = ids.size
            rows = np.arange(E)
            avail = tau_r + 1
            length = np.clip((2 * s * avail + remaining) // (2 * remaining), 1, avail - idx)
            pieces = gang_pieces(s, gangs[k])
            # a stage of n pieces occupies at most n steps and can see one more: gather no further
            U = min(int(length.max()), len(pieces) + 1)
            u = np.arange(U)
            inside = u[None, :] < length[:, None]
            tq = np.clip(tau_r[:, None] - u[None, :], 0, W - 1)   # local step u is tau_r - u
            Lf = L[:, tq].reshape(L.shape[0], E * U)             # the stage's intervals, flat
            Cf = C[:, tq].reshape(L.shape[0], E * U)
            xmax = np.where(inside, xmax_w[tq], -1).ravel()

            def cost(f, xv):  # c(t) at flat entries f holding xv containers of this stage
                num = Lf.take(f, axis=1)
                num += xv * zq
                num /= Cf.take(f, axis=1)
                if not safe:
                    num[np.isnan(num)] = 0.0  # an unused empty line costs nothing
                return num.max(axis=0) if num.shape[0] > 1 else num[0]

            # full gangs first, then the remainder piece (if any)
            g = pieces[0]
            nfull = len(pieces) if pieces[-1] == g else len(pieces) - 1
            remainder = pieces[-1] if nfull < len(pieces) else 0
            maxcnt = np.where(xmax >= 0, xmax // g, -1)  # whole gangs an entry can hold
            cnt = np.zeros(E * U, dtype=np.int64)
            far = np.full(E, -1)                   # furthest occupied u (the stage's leftmost step)
            alive = np.ones(E, dtype=bool)
            base = rows * U
            if U == 1:  # every interval is the single step tau_r: the stage stacks there or fails
                fits = xmax[base] >= s
                fail_all[ids[~fits]] = k
                alive &= fits
                far[alive] = 0
                xl = np.zeros(E * U, dtype=np.int64)
                xl[base[alive]] = s
            else:
                oc = np.full(E * U, np.inf)        # cost of eligible entries where a gang fits, else inf
                oc2 = oc.reshape(E, U)
                hi = 1                             # entries at u >= hi are all closed
                oc[base] = np.where(maxcnt[base] >= 1, cost(base, np.zeros(E, dtype=np.int64)), np.inf)
                for i in range(nfull + (1 if remainder else 0)):
                    if i == nfull:  # the remainder piece: re-check every open entry with its size
                        fo = np.flatnonzero(((u[None, :] <= (far + 1)[:, None]) & inside & alive[:, None]).ravel())
                        xo = cnt[fo] * g
                        oc[fo] = np.where(xo + remainder <= xmax[fo], cost(fo, xo), np.inf)
                    j = np.argmin(oc2[:, :hi], axis=1)
                    f = base + j
                    r = rows
                    v = oc[f]
                    if v.max() == np.inf:
                        ok = v < np.inf
                        died = alive & ~ok
                        if died.any():
                            fail_all[ids[died]] = k
                            alive &= ok
                        r, j, f = rows[ok], j[ok], f[ok]
                        if not r.size:
                            break
                    if i == nfull:
                        break  # the remainder goes to f; nothing is placed after it
                    cnt[f] += 1
                    c = cnt[f]
                    grew = j > far[r]                  # the frontier was taken: open the next step left
                    if grew.any():
                        rg, ug = r[grew], j[grew]
                        far[rg] = ug
                        hi = min(U, max(hi, int(ug.max()) + 2))
                        fn = f[grew][ug + 1 < length[rg]] + 1
                        if fn.size:
                            f = np.concatenate([f, fn])
                            c = np.concatenate([c, np.zeros(fn.size, dtype=np.int64)])
                    oc[f] = np.where(c < maxcnt[f], cost(f, c * g), np.inf)
                xl = cnt * g
                if remainder and alive.any():
                    xl[f] += remainder
                    far[r] = np.maximum(far[r], j)
            if not alive.any():
                break
            xl2 = xl.reshape(E, U)
            occ = xl > 0
            post = np.where(occ, cost(np.arange(E * U), xl), 0.0).reshape(E, U)
            stage_peak[k] = post.max(axis=1)[alive]
            stage_area[k] = (xl2 * post).sum(axis=1)[alive]
            stage_ids[k] = ids[alive]
            stage_hi[k] = tau_r[alive]
            stage_lo[k] = tau_r[alive] - far[alive]
            stage_x[k] = xl2[alive]
            placed_all[ids[alive]] += 1
            tau_r = stage_lo[k] - 1
            ids = ids[alive]
        else:
            return Scan(ids, stage_ids, stage_lo, stage_hi, stage_x, stage_peak, stage_area)
    far_row = int(np.argmax(np.where(fail_all >= 0, placed_all, -1)))
    return Scan(refused=int(fail_all[far_row]))
