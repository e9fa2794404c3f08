"""LowCost's search over end points (§6.3, steps 1-3), one numpy pass per stage: the kernel of
:func:`~cluster_sim.morpheus.packing.lowcost.lowcost_window`.

Each end point is a row; the rows walk through the stages right to left together. Within a stage,
the paper places gangs one by one at the cheapest eligible step (:func:`place_stage_gangs`); running
that rule gang by gang costs one round of numpy calls per gang (:func:`_scan_reference`, the way
``lowcost_window`` worked until now, kept as the slow reference). :func:`scan_end_points` places
all of a stage's gangs at every row in a fixed number of numpy calls, with the *same* decisions, by
reading the greedy rule as a sort.

Why one sort gives the greedy's choices
---------------------------------------
Local step ``u`` counts back from the stage's ``tau_r`` (``u = 0`` is ``tau_r``). The ``j``-th gang put
on step ``u`` is chosen at the cost ``K[u, j] = c(u)`` with ``j`` gangs already there; ``K[u, :]`` never
decreases (more containers never lower a cost: float addition and division are monotone), and it is
infinite once gang ``j + 1`` would pass capacity or ``u`` is outside the interval. The greedy takes the
eligible element with the smallest ``(cost, u)`` (ties to the later step, the smaller ``u``); eligible
steps are ``0 .. far + 1``, so step ``q`` opens when step ``q - 1`` takes its first gang (its *head*,
cost ``h[q] = K[q, 0]``). Call the time from opening step ``q`` until its head is taken **phase q**.
While step ``q``'s head waits, every element of the open steps ``u < q`` that costs at most ``h[q]``
comes before it (a lower cost, or an equal one at a smaller ``u``), and nothing dearer is taken. So

* the head of step ``u`` is taken in phase ``u``, last in that phase;
* element ``(u, j >= 1)`` is taken in phase ``q(u, j)``, the first ``q > u`` with
  ``max(h[u+1 .. q]) >= K[u, j]`` (the phase after the last step opens, when a head is infinite or the
  interval ends, never ends: there ``q = U``);
* within a phase the order is ``(cost, u, j)``.

The greedy's sequence is therefore the elements sorted by ``(phase, cost, u, j)``; a stage of ``n``
full gangs takes the first ``n`` of them (a row whose ``n``-th is unreachable or infinite fails). The
remainder piece (when the gang does not divide the demand) then goes to the cheapest eligible step
where it fits, as in the reference. Costs come from one table ``c(t, x)`` per window, built with the
reference's float operations, so every comparison sees the same numbers.
``tests/morpheus/test_lowcost_scan.py`` checks the two searches agree on seeded random windows (with
many ties) and on the benchmark's jobs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Scan", "scan_end_points"]

# the cost table c(t, x) is built when it holds at most this many numbers per line; else costs are
# computed where needed (stages of thousands of containers over long windows)
TABLE_LIMIT = 1 << 22
# a stage is placed with one sort when its steps x full gangs are at most this many (the sort's arrays
# grow as steps^2 x gangs), else gang by gang
SORT_LIMIT = 128


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


def _cost_function(L: np.ndarray, C: np.ndarray, z: np.ndarray, most: int):
    """``cost(t, x)``: ``c(t) = max over lines of (load + x * size) / capacity`` at window steps ``t``
    holding ``x`` more containers (arrays that broadcast), in the reference's float operations (an
    unused empty line costs 0). A table over ``x = 0 .. most`` when it is small enough."""
    Q, W = L.shape
    safe = bool(np.all(C > 0))

    def direct(t, x):
        x = np.asarray(x)
        shape = np.broadcast_shapes(np.shape(t), x.shape)
        num = L[:, t] + x * z.reshape((Q,) + (1,) * len(shape))
        with np.errstate(divide="ignore", invalid="ignore"):
            num = num / C[:, t]
        if not safe:
            num[np.isnan(num)] = 0.0
        return num.max(axis=0) if Q > 1 else num[0]

    if (most + 1) * W > TABLE_LIMIT:
        return direct
    table = direct(np.arange(W)[None, :], np.arange(most + 1)[:, None])  # [x, t]
    return lambda t, x: table[x, t]


def _place_stage(cost, tq: np.ndarray, xm: np.ndarray, g: int, nfull: int, remainder: int):
    """One stage at every row: ``(containers per local step, far, ok)``, as the reference decides.

    ``tq[r, u]`` is row ``r``'s window step ``tau_r - u``, ``xm[r, u]`` the containers that fit there
    (``-1`` outside the row's interval); ``nfull`` gangs of ``g`` then, if ``remainder``, one smaller
    piece. ``far`` is the furthest occupied ``u`` (the stage's leftmost step). See the module docstring.
    """
    E, U = xm.shape
    rows, uu = np.arange(E), np.arange(U)
    maxcnt = xm // g                                       # whole gangs a step can hold (-1 outside)
    J = int(min(nfull, max(int(maxcnt.max()), 1)))         # no step takes more than nfull gangs
    if nfull > U * J:                                      # not enough room at any row
        return np.zeros((E, U), dtype=np.int64), np.full(E, -1), np.zeros(E, dtype=bool)
    jj = np.arange(J)
    Kc = cost(tq[:, :, None], jj * g)                      # [r, u, j]: the cost the j-th gang sees
    Kc[jj >= maxcnt[:, :, None]] = np.inf                  # gang j + 1 does not fit there
    h = Kc[:, :, 0]
    reach = np.logical_and.accumulate(np.isfinite(h), axis=1)  # steps the frontier can open
    # phase of (u, j): #{q : top[u, q] < K[u, j]} with top[u, q] = max(h[u+1 .. q]) (-inf for q <= u,
    # so those count too, making it u + 1 + #{q > u : ...})
    later = np.where(uu[:, None] < uu[None, :], h[:, None, :], -np.inf)  # [r, u, q]
    top = np.maximum.accumulate(later, axis=2)
    phase = np.count_nonzero(top[:, :, :, None] < Kc[:, :, None, :], axis=2)
    phase[:, :, 0] = uu                                    # a head is taken in its own phase
    phase[~(np.isfinite(Kc) & reach[:, :, None])] = U + 1  # never taken: sorts last
    # the greedy's order: (phase, cost, u, j) - lexsort is stable and the flat index is (u, j)
    order = np.lexsort((Kc.reshape(E, U * J), phase.reshape(E, U * J)), axis=-1)
    first = order[:, :nfull]
    ok = phase.reshape(E, U * J)[rows, first[:, -1]] <= U
    take = np.zeros((E, U * J), dtype=bool)
    take[rows[:, None], first] = True
    x = take.reshape(E, U, J).sum(axis=2) * g
    far = (x > 0).sum(axis=1) - 1                          # the occupied steps are 0 .. far
    if remainder:
        # the last piece: the cheapest step of 0 .. far + 1 inside the interval where it fits
        c = np.where((uu <= far[:, None] + 1) & (x + remainder <= xm), cost(tq, x), np.inf)
        j = np.argmin(c, axis=1)
        ok &= np.isfinite(c[rows, j])
        x[rows, j] += remainder
        far = np.maximum(far, j)
    return x, far, ok


def _place_stage_gang_by_gang(cost, tq: np.ndarray, xm: np.ndarray, g: int, nfull: int, remainder: int):
    """:func:`_place_stage` gang by gang (the reference's loop, every row in lock step): one round of
    numpy calls per gang on arrays of one entry per row, cheaper than the sort when a stage has many
    gangs over many steps. Same arguments and answer."""
    E, U = xm.shape
    tqf, xmax = tq.ravel(), xm.ravel()
    rows = np.arange(E)
    base = rows * U
    maxcnt = xmax // g                           # whole gangs an entry can hold (-1 outside)
    cnt = np.zeros(E * U, dtype=np.int64)
    far = np.full(E, -1)                         # furthest occupied u (the stage's leftmost step)
    alive = np.ones(E, dtype=bool)
    oc = np.full(E * U, np.inf)                  # cost of eligible entries where a gang fits, else inf
    oc2 = oc.reshape(E, U)
    hi = 1                                       # entries at u >= hi are all closed
    oc[base] = np.where(maxcnt[base] >= 1, cost(tqf[base], 0), np.inf)
    for _ in range(nfull):
        j = np.argmin(oc2[:, :hi], axis=1)       # first minimum: ties go to the later step
        f = base + j
        r = rows
        ok = oc[f] < np.inf
        if not ok.all():
            alive &= ok
            if not alive.any():
                break
            r, j, f = rows[alive], j[alive], f[alive]
        cnt[f] += 1
        c = cnt[f]
        grew = j > far[r]                        # the frontier was taken: open the next step left
        if grew.any():
            rg, ug = r[grew], j[grew]
            far[rg] = ug
            hi = min(U, max(hi, int(ug.max()) + 2))
            fn = f[grew][ug + 1 < U] + 1         # outside the interval xmax = -1: never fits
            if fn.size:
                f = np.concatenate([f, fn])
                c = np.concatenate([c, np.zeros(fn.size, dtype=np.int64)])
        oc[f] = np.where(c < maxcnt[f], cost(tqf[f], c * g), np.inf)
    x = (cnt * g).reshape(E, U)
    if remainder:
        uu = np.arange(U)
        c = np.where((uu <= far[:, None] + 1) & (x + remainder <= xm), cost(tq, x), np.inf)
        j = np.argmin(c, axis=1)
        alive &= np.isfinite(c[rows, j])
        x[rows, j] += remainder
        far = np.maximum(far, j)
    return x, far, alive


def scan_end_points(L, C, z, xmax_w, demands, gangs, pos, ends) -> Scan:
    """LowCost's stages 3-1 at every end point ``ends`` (window steps) at once.

    ``L``/``C`` are (lines, W) load and capacity over the window, ``z`` the container's size on each
    line, ``xmax_w`` the containers that fit at each window step, ``demands``/``gangs`` the job's stages
    and ``pos`` the stages with demand. Same answer as :func:`_scan_reference` (see the module
    docstring), in a fixed number of numpy calls per stage.
    """
    W = L.shape[1]
    Kp = len(pos)
    csum = np.cumsum([demands[k] for k in pos])
    cost = _cost_function(L, C, z, max(demands[k] for k in pos))
    ids = np.arange(ends.size)              # row -> index into ends; failed rows leave between stages
    tau_r = ends.copy()
    failed_at = np.full(ends.size, -1)      # the stage where a row failed and how many it had placed
    placed = np.full(ends.size, -1)
    stage_lo, stage_hi, stage_x, stage_ids, stage_peak, stage_area = {}, {}, {}, {}, {}, {}
    sk = np.array([demands[k] for k in pos], dtype=np.int64)
    idx = Kp - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        while idx >= 0:
            k = pos[idx]
            s, remaining = demands[k], int(csum[idx])
            g = min(gangs[k], s)
            nfull, remainder = s // g, s % g
            # the stage's interval: its share of the remaining demand times the steps left (tau_r + 1,
            # rounded half up), at least one step and at most what leaves one step for each earlier stage
            length = np.minimum(np.maximum((2 * s * tau_r + (2 * s + remaining)) // (2 * remaining), 1),
                                tau_r + (1 - idx))
            # a stage of n pieces occupies at most n steps and can see one more: look no further
            U = min(int(length.max()), nfull + (remainder > 0) + 1)
            run = _single_step_run(xmax_w, sk, csum, tau_r, idx) if U == 1 and idx > 0 else 0
            if run > 1:  # the next `run` stages each stack on one step at every row: all of them at once
                steps = tau_r[None, :] - np.arange(run)[:, None]   # stage idx - m sits on tau_r - m
                s_run = sk[idx - run + 1: idx + 1][::-1, None]
                post = cost(steps, s_run)
                area = s_run * post
                for m in range(run):
                    k = pos[idx - m]
                    stage_peak[k], stage_area[k], stage_ids[k] = post[m], area[m], ids
                    stage_hi[k] = stage_lo[k] = steps[m]
                    stage_x[k] = np.full((ids.size, 1), sk[idx - m])
                tau_r = steps[-1] - 1
                idx -= run
                continue
            if U == 1:  # every interval is the single step tau_r: the stage stacks there or fails
                tq = tau_r[:, None]
                ok = xmax_w[tau_r] >= s
                x = np.where(ok, s, 0)[:, None]
                far = np.zeros(ids.size, dtype=np.int64)
            else:
                uu = np.arange(U)
                tq = tau_r[:, None] - uu            # local step u is tau_r - u (outside: never used)
                xm = np.where(uu < length[:, None], xmax_w[tq], -1)
                place = _place_stage if U * nfull <= SORT_LIMIT else _place_stage_gang_by_gang
                x, far, ok = place(cost, tq, xm, g, nfull, remainder)
            post = np.where(x > 0, cost(tq, x), 0.0)
            peak, area = post.max(axis=1), (x * post).sum(axis=1)
            lo = tau_r - far
            if not ok.all():
                failed_at[ids[~ok]], placed[ids[~ok]] = k, Kp - 1 - idx
                if not ok.any():
                    break
                ids, peak, area, tau_r, lo, x = ids[ok], peak[ok], area[ok], tau_r[ok], lo[ok], x[ok]
            stage_peak[k], stage_area[k], stage_ids[k] = peak, area, ids
            stage_hi[k], stage_lo[k], stage_x[k] = tau_r, lo, x
            tau_r = lo - 1
            idx -= 1
        else:
            return Scan(ids, stage_ids, stage_lo, stage_hi, stage_x, stage_peak, stage_area)
    return Scan(refused=int(failed_at[np.argmax(placed)]))  # where the row that got furthest failed


def _single_step_run(xmax_w, sk, csum, tau_r, idx, most: int = 32) -> int:
    """How many stages from ``idx`` down (at most ``most``) have a one-step interval at every row and
    fit there: such a stage stacks on ``tau_r``, the next on ``tau_r - 1``, and so on."""
    M = min(idx + 1, most)
    m = np.arange(M)[:, None]
    s, rem = sk[idx - M + 1: idx + 1][::-1, None], csum[idx - M + 1: idx + 1][::-1, None]
    tau = tau_r[None, :] - m
    length = np.minimum(np.maximum((2 * s * tau + (2 * s + rem)) // (2 * rem), 1), tau + (1 - (idx - m)))
    single = (length.max(axis=1) == 1) & (xmax_w[tau] >= s).all(axis=1)
    return int(M if single.all() else np.argmin(single))


def _scan_reference(L, C, z, xmax_w, demands, gangs, pos, ends) -> Scan:
    """The slow reference: the gang-by-gang search ``lowcost_window`` ran until now (every row in lock
    step, one round of numpy calls per gang), kept to test :func:`scan_end_points` against and as the
    benchmark's baseline. Same arguments and answer."""
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
