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

How it is computed (issue 33): ``q(u, j)`` depends only on window steps, not on the row - it is
``u + d`` with ``d`` the distance from step ``t = tau_r - u`` back to the nearest head costing at least
``K[u, j]``, cut at the interval's end (outside it a head costs infinity) and at ``U``. So the distances
are computed once per window and gang size (:class:`_GangGrid`, with the costs replaced by their ranks,
which keep every comparison and tie), and a stage only gathers them. The order ``(phase, cost, u, j)``
is then one integer per element, and the first ``n`` are those up to the ``n``-th smallest
(``np.partition``): a few numpy calls on arrays of rows x steps x gangs per stage.
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
# grow as rows x steps x gangs), else gang by gang (as is every stage when the cost table is not built)
SORT_LIMIT = 1 << 14
# ... and when its gang size's grid (window steps x gang counts, see _GangGrid) holds at most this many cells:
# the grid's distances take up to gang counts + 1 passes over it
GRID_LIMIT = 1 << 16


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
    unused empty line costs 0). A table over ``x = 0 .. most`` (``cost.table[x, t]``) when it is small
    enough, else ``cost.table`` is None. ``cost.placed(t, x)`` is a stage's cost where it placed ``x``: the
    same numbers where ``x > 0``, 0 where it placed nothing (``t`` may be the sentinel step ``W``)."""
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
        def placed_direct(t, x):
            return np.where(x > 0, direct(np.minimum(t, W - 1), x), 0.0)

        direct.table, direct.placed = None, placed_direct
        return direct
    table = direct(np.arange(W)[None, :], np.arange(most + 1)[:, None])  # [x, t]
    # the same table with 0 for nothing placed (x = 0) and at the sentinel step W: one lookup, no mask
    placed_table = np.zeros((most + 1, W + 1))
    placed_table[1:, :W] = table[1:]

    def lookup(t, x):
        return table[x, t]

    def placed(t, x):
        return placed_table[x, t]

    lookup.table, lookup.placed = table, placed
    return lookup


class _GangGrid(NamedTuple):
    """What the sort needs about gangs of one size at every window step ``t``, flat at ``t * J + j``:
    ``rank`` orders the cost the ``j``-th gang sees (equal costs share a rank below ``inf``; where that gang does
    not fit and at the sentinel step ``W``, outside every interval, the rank is ``never``, so large that such an
    element's sort key is above every other's whatever its phase); ``dist`` is how far back the
    nearest head at least as dear is (the first ``d >= 1`` with ``rank[t - d, 0] >= rank[t, j]``, before the
    window's start everything is full; 0 for a head itself; at most ``J + 1``); ``open[t]`` counts the steps
    ``t, t - 1, ...`` whose heads fit, up to the first that does not."""

    rank: np.ndarray
    dist: np.ndarray
    open: np.ndarray
    J: int
    inf: int
    never: int


def _gang_grid(table: np.ndarray, xmax_w: np.ndarray, g: int) -> _GangGrid:
    """The :class:`_GangGrid` of gangs of ``g`` over a window's cost table ``table[x, t]``, once per window
    and gang size. Ranks replace the costs exactly: the sort compares only them, never adds them."""
    most, W = table.shape[0] - 1, table.shape[1]
    J = most // g + 1
    ranks = np.unique(np.append(table[: J * g: g], np.inf), return_inverse=True)[1]  # inf always the largest
    inf = int(ranks[-1])
    rank = np.full((J, W + 1), inf)
    rank[:, :W] = ranks[:-1].reshape(J, W)
    rank[(np.arange(J) + 1)[:, None] * g > np.append(xmax_w, -1)] = inf  # gang j + 1 does not fit there
    h = rank[0, :W]
    # dist = 1 + #{d in [1, cap) : max(h[t - d .. t - 1]) < rank[t, j]}; a stage never sees more than
    # J + 1 steps (nfull + a remainder + the next), so looking further back changes no phase
    cap = min(W, J + 1)
    behind = np.concatenate([np.full(cap, inf), h])
    dist = np.ones((J, W + 1), dtype=np.int64)
    dist[0] = 0
    top = np.full(W, -1)
    for d in range(1, cap):
        np.maximum(top, behind[cap - d: cap - d + W], out=top)
        dist[1:, :W] += top < rank[1:, :W]
    full = np.maximum.accumulate(np.where(h == inf, np.arange(W), -1))  # the last step at or before t
    open_ = np.append(np.arange(W) - full, 0)
    # a stage sees U <= J + 1 steps, so a key (phase * (inf + 1) + rank) * U * J + (u * J + j) with a phase <= U
    # and a rank < inf stays below (J + 2) * (inf + 1) * U * J, where a key with the rank `never` starts
    never = (J + 2) * (inf + 1)
    rank[rank == inf] = never
    return _GangGrid(np.ascontiguousarray(rank.T).ravel(), np.ascontiguousarray(dist.T).ravel(), open_, J, inf,
                     never)


_LAYOUTS: dict = {}


def _layout(U: int, J: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The steps ``0 .. U - 1``, the step ``u`` and the position ``u * J + j`` of each element of a row (both
    ``[u, j]``), and ``J`` ones (to count a step's elements taken with one product), reused stage to stage."""
    if (U, J) not in _LAYOUTS:
        uu = np.arange(U)
        _LAYOUTS[U, J] = (uu, np.repeat(uu, J).reshape(U, J), np.arange(U * J).reshape(U, J),
                          np.ones(J, dtype=np.float32))
    return _LAYOUTS[U, J]


def _reach(grid: _GangGrid, tau_r: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The local steps ``0 .. reach - 1`` a stage can use at each row: its interval, cut after the first step back
    from ``tau_r`` whose head does not fit (the frontier never opens the steps behind it; that step stays, a
    remainder piece may fit there). Phases are the same: every phase before that step ends at it."""
    return np.minimum(length, grid.open[tau_r] + 1)


def _place_stage(cost, grid: _GangGrid, tq: np.ndarray, xm: np.ndarray, length: np.ndarray, g: int, nfull: int,
                 remainder: int):
    """One stage at every row: ``(containers per local step, far, ok)``, as the reference decides.

    ``tq[r, u]`` is row ``r``'s window step ``tau_r - u`` (the sentinel ``W`` outside the row's reach, see
    :func:`_reach`), ``xm[r, u]`` the containers that fit there (``-1`` outside), ``length`` the reaches and
    ``grid`` the window's :class:`_GangGrid` for gangs of ``g``; ``nfull`` gangs of ``g`` then, if
    ``remainder``, one smaller piece. ``far`` is the furthest occupied ``u`` (the stage's leftmost step).
    See the module docstring.
    """
    E, U = xm.shape
    J = int(min(nfull, max(int(xm.max()) // g, 1)))        # no step takes more than nfull gangs
    if nfull > U * J:                                      # not enough room at any row
        return np.zeros((E, U), dtype=np.int64), np.full(E, -1), np.zeros(E, dtype=bool)
    UJ = U * J
    uu, u_of, flat, ones = _layout(U, J)
    # [r, u, j]: the grid's lines [t, :J] at the rows' steps (whole lines taken, the first J kept: one take each);
    # outside the reach, the sentinel step's, where no gang fits: those elements are never taken
    rank = grid.rank.reshape(-1, grid.J).take(tq, axis=0)[:, :, :J]
    # phase of (u, j): the first q > u whose head costs at least K[u, j] - q = length (the reach; beyond it a head is
    # infinite) at the latest, and never past U; a head's is u
    key = grid.dist.reshape(-1, grid.J).take(tq, axis=0)[:, :, :J] + u_of
    np.minimum(key, np.minimum(length, U)[:, None, None], out=key)
    # the greedy's order (phase, cost, u, j) as one integer (in place: these arrays are the stage's largest);
    # the first nfull are those up to the nfull-th. Elements never taken (no room for the gang, or a step the
    # frontier cannot open) have the rank grid.never: their keys are at least `beyond`
    inf1 = grid.inf + 1
    key *= inf1
    key += rank
    key *= UJ
    key += flat
    key = key.reshape(E, UJ)
    beyond = (U + 1) * inf1 * UJ                           # above every key of an element that can be taken
    last = np.partition(key, nfull - 1, axis=1)[:, nfull - 1]
    ok = last < beyond
    taken = key <= last[:, None]
    # gangs per step: a product with ones counts them in one BLAS call (cheaper than a sum over the short axis
    # j; exact, counts are far below float32's 2**24); the occupied steps are 0 .. far, those whose head is taken
    x = (taken.reshape(E * U, J).astype(np.float32) @ ones).astype(np.int64).reshape(E, U) * g
    far = taken[:, ::J].sum(axis=1) - 1
    if remainder:
        # the last piece: the cheapest step of 0 .. far + 1 inside the interval where it fits
        rows = np.arange(E)
        inside = np.minimum(tq, grid.open.size - 2)        # the sentinel's cost is never used (xm = -1 there)
        c = np.where((uu <= far[:, None] + 1) & (x + remainder <= xm), cost(inside, x), np.inf)
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
    most = max(demands[k] for k in pos)
    cost = _cost_function(L, C, z, most)
    ids = np.arange(ends.size)              # row -> index into ends; failed rows leave between stages
    tau_r = ends.copy()
    failed_at = np.full(ends.size, -1)      # the stage where a row failed and how many it had placed
    placed = np.full(ends.size, -1)
    stage_lo, stage_hi, stage_x, stage_ids, stage_peak, stage_area = {}, {}, {}, {}, {}, {}
    sk = np.array([demands[k] for k in pos], dtype=np.int64)
    xmax_s = np.append(xmax_w, -1)          # with the sentinel step W, outside every interval
    grids = {}                              # a _GangGrid per gang size, built when first needed
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
                x_run = np.repeat(s_run, ids.size, axis=1)[:, :, None]  # stage idx - m's containers at every row
                for m in range(run):
                    k = pos[idx - m]
                    stage_peak[k], stage_area[k], stage_ids[k] = post[m], area[m], ids
                    stage_hi[k] = stage_lo[k] = steps[m]
                    stage_x[k] = x_run[m]
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
                sort = cost.table is not None and U * nfull <= SORT_LIMIT and (most // g + 1) * W <= GRID_LIMIT
                if sort and g not in grids:
                    grids[g] = _gang_grid(cost.table, xmax_w, g)
                reach = _reach(grids[g], tau_r, length) if sort else length
                # local step u is tau_r - u; outside the reach the sentinel step W, where nothing fits
                tq = np.where(uu < reach[:, None], tau_r[:, None] - uu, W)
                xm = xmax_s[tq]
                if sort:
                    x, far, ok = _place_stage(cost, grids[g], tq, xm, reach, g, nfull, remainder)
                else:
                    x, far, ok = _place_stage_gang_by_gang(cost, np.minimum(tq, W - 1), xm, g, nfull, remainder)
            post = cost.placed(tq, x)
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
