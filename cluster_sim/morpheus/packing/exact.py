"""The offline optimum of §6.2 for tiny instances: the smallest maximal height, as an exact MILP.

The MILP has the same constraints as LowCost's allocations (see
:func:`~cluster_sim.morpheus.packing.lowcost.check_allocation`): per job one offset for every instance;
each stage with demand occupies a run of consecutive steps inside ``[a, d)``, stage ``k+1``
starting on the step after stage ``k`` ends (no holes, stages in order); every occupied step holds
at least one container; the containers of a stage are whole gangs plus at most one remainder
piece. It minimises ``h`` subject to ``load(r, t) / capacity(r) <= h <= 1`` at every step of the
horizon. Any plan in which LowCost placed every job is therefore feasible for it, so LowCost's
peak is never below the optimum: the ratio of the two is LowCost's empirical competitive ratio,
which the notebook shows beside Theorem 6.1's ``O(log(Pmax / Pmin))``.

Variables per job, stage ``k`` and window step ``w``: containers ``y`` (integer), gangs ``q``
(integer), remainder flag ``rho`` (binary), "started by w" ``S`` and "finished by w" ``F``
(binary, non-decreasing in ``w``); the stage is active at ``w`` when ``S - F = 1``, and the next
stage's ``S`` equals this stage's ``F`` step by step.

Example
-------
>>> jobs = [PeriodicJob(period=4, a=0, d=4, demands=(2, 2)), PeriodicJob(period=8, a=0, d=6, demands=(3, 3))]
>>> res = exact_min_peak(jobs, capacity=4, horizon=8)
>>> res.height, [a.blocks[0].tolist() for a in res.allocations]
(0.5, [[1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
>>> theorem_6_1_bound([j.period for j in jobs])     # log(Pmax / Pmin) = log 2
0.6931471805599453
>>> c = compare_with_optimum(*tiny_instance(seed=3))
>>> c.lowcost >= c.optimum and c.greedy >= c.optimum
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix

from ... import validate
from .jobs import Allocation, PeriodicJob

__all__ = [
    "ExactResult", "Competitive", "exact_min_peak", "theorem_6_1_bound", "compare_with_optimum", "tiny_instance",
    "MAX_EXACT_VARIABLES",
]

MAX_EXACT_VARIABLES = 4000


@dataclass
class ExactResult:
    """The optimal maximal height and one optimal allocation per job (in the given order)."""

    height: float
    allocations: list
    variables: int
    constraints: int


def theorem_6_1_bound(periods) -> float:
    """``log(Pmax / Pmin)``: the growth of Theorem 6.1's competitive ratio (the ``O()`` hides a
    constant the paper does not give; equal periods give 0, i.e. a constant ratio)."""
    p = np.asarray(periods, dtype=float)
    if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"periods={periods!r} must be a non-empty list of periods > 0")
    return math.log(p.max() / p.min())


class _Vars:
    def __init__(self):
        self.n = 0
        self.lb, self.ub, self.integer = [], [], []

    def add(self, count: int, lb: float, ub: float, integer: bool) -> np.ndarray:
        idx = np.arange(self.n, self.n + count)
        self.n += count
        self.lb += [lb] * count
        self.ub += [ub] * count
        self.integer += [1 if integer else 0] * count
        return idx


def exact_min_peak(jobs, capacity, horizon: int, *, time_limit: float = 60.0) -> ExactResult:
    """Solve the offline packing of ``jobs`` (periodic, periods dividing ``horizon``) exactly.

    ``capacity`` is a number or one number per resource (constant over time). Raises
    ``ValueError`` for instances too large for an exact solve (more than ``MAX_EXACT_VARIABLES``
    variables) and ``RuntimeError`` when HiGHS finds no feasible plan with height <= 1.
    """
    horizon = validate.whole_number(horizon, "horizon", lo=1)
    cap = np.atleast_1d(np.asarray(capacity, dtype=float))
    if cap.ndim != 1 or not np.all(np.isfinite(cap)) or np.any(cap <= 0):
        raise ValueError(f"capacity={capacity!r} must be a number or one number > 0 per resource")
    R = cap.size
    jobs = list(jobs)
    if not jobs:
        raise ValueError("jobs is empty: need at least one job")
    for j in jobs:
        if not isinstance(j, PeriodicJob) or horizon % j.period:
            raise ValueError(f"{j!r}: the MILP covers PeriodicJobs whose period divides horizon={horizon}")
    V = _Vars()
    rows, cols, vals, lo, hi = [], [], [], [], []

    def constraint(terms, lower, upper):
        r = len(lo)
        for c, v in terms:
            rows.append(r)
            cols.append(int(c))
            vals.append(float(v))
        lo.append(lower)
        hi.append(upper)

    layout = []
    h = V.add(1, 0.0, 1.0, False)[0]
    load_terms = [[[] for _ in range(horizon)] for _ in range(R)]
    for j in jobs:
        z = np.ones(R) if j.container is None else np.asarray(j.container, dtype=float)
        if z.shape != (R,):
            raise ValueError(f"{j!r}: container must give one size per resource ({R})")
        W, P = j.window, j.period
        pos = [k for k, s in enumerate(j.demands) if s > 0]
        per = {}
        for k in pos:
            s = j.demands[k]
            g = min(j.gangs[k], s)
            r = s % g
            y = V.add(W, 0, s, True)
            q = V.add(W, 0, s // g, True)
            S = V.add(W, 0, 1, True)
            F = V.add(W, 0, 1, True)
            rho = V.add(W, 0, 1, True) if r else None
            per[k] = (y, q, S, F, rho, s, g, r)
            for w in range(W):
                act = [(S[w], 1), (F[w], -1)]
                constraint([(y[w], 1)] + [(c, -s * v) for c, v in act], -np.inf, 0)   # y <= s * active
                constraint([(y[w], 1)] + [(c, -v) for c, v in act], 0, np.inf)        # y >= active
                constraint([(y[w], 1), (q[w], -g)] + ([(rho[w], -r)] if r else []), 0, 0)  # whole gangs
                if r:
                    constraint([(rho[w], 1)] + [(c, -v) for c, v in act], -np.inf, 0)
                constraint([(F[w], 1), (S[w], -1)], -np.inf, 0)                        # F <= S
                if w:
                    constraint([(S[w], 1), (S[w - 1], -1)], 0, np.inf)
                    constraint([(F[w], 1), (F[w - 1], -1)], 0, np.inf)
            constraint([(c, 1) for c in y], s, s)
            if r:
                constraint([(c, 1) for c in rho], 1, 1)
        for prev, nxt in zip(pos, pos[1:]):
            Fp, Sn = per[prev][3], per[nxt][2]
            for w in range(W):
                constraint([(Sn[w], 1), (Fp[w], -1)], 0, 0)  # k+1 starts on the step k is over
        for k in pos:
            y = per[k][0]
            for w in range(W):
                o = (j.a + w) % P
                for t in range(o, horizon, P):
                    for res in range(R):
                        if z[res] > 0:
                            load_terms[res][t].append((y[w], z[res] / cap[res]))
        layout.append((j, pos, per))
        if V.n > MAX_EXACT_VARIABLES:
            raise ValueError(f"the instance needs more than MAX_EXACT_VARIABLES={MAX_EXACT_VARIABLES} variables: "
                             f"keep exact solves to tiny instances")
    for res in range(R):
        for t in range(horizon):
            if load_terms[res][t]:
                constraint(load_terms[res][t] + [(h, -1.0)], -np.inf, 0)
    c = np.zeros(V.n)
    c[h] = 1.0
    from scipy.optimize import Bounds, LinearConstraint, milp  # here, not at the top: ~0.1 s of every kernel

    A = coo_matrix((vals, (rows, cols)), shape=(len(lo), V.n)).tocsr()
    out = milp(c, constraints=LinearConstraint(A, lo, hi), integrality=np.array(V.integer),
               bounds=Bounds(np.array(V.lb, dtype=float), np.array(V.ub, dtype=float)),
               options={"mip_rel_gap": 0.0, "time_limit": time_limit})
    if out.x is None or out.status not in (0,):
        raise RuntimeError(f"HiGHS found no optimal plan with height <= 1: {out.message}")
    x = np.round(out.x).astype(np.int64)
    allocations = []
    for j, pos, per in layout:
        block = np.zeros(j.window, dtype=np.int64)
        spans = {}
        for k in pos:
            y = x[per[k][0]]
            block += y
            occ = np.flatnonzero(y)
            spans[k] = (int(occ[0]), int(occ[-1]))
        left, right = spans[pos[0]][0], spans[pos[-1]][1]
        widths = [spans[k][1] - spans[k][0] + 1 if k in spans else 0 for k in range(len(j.demands))]
        bounds = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
        n = horizon // j.period
        blk = block[left:right + 1]
        allocations.append(Allocation(j, tuple(j.a + left + i * j.period for i in range(n)), (blk,) * n,
                                      (bounds,) * n, periodic=True, method="milp"))
    # the height the allocations really have (the solver's h is within its tolerance of it)
    load = np.zeros((R, horizon))
    for alloc in allocations:
        z = np.ones(R) if alloc.job.container is None else np.asarray(alloc.job.container, dtype=float)
        load += z[:, None] * alloc.containers(horizon)[None, :]
    height = float(np.max(load / cap[:, None]))
    return ExactResult(height, allocations, V.n, len(lo))


@dataclass
class Competitive:
    """Peaks of LowCost and the greedy (jobs arriving one by one) beside the offline optimum."""

    lowcost: float
    greedy: float
    optimum: float
    log_period_ratio: float  # Theorem 6.1's log(Pmax / Pmin)

    @property
    def ratio(self) -> float:
        """LowCost's empirical competitive ratio on this instance."""
        return self.lowcost / self.optimum

    @property
    def greedy_ratio(self) -> float:
        return self.greedy / self.optimum


def compare_with_optimum(jobs, capacity, horizon: int) -> Competitive | None:
    """Place ``jobs`` in order with LowCost and with the greedy, solve the optimum; None when either
    online placer refuses a job (the ratio is only defined for instances both place whole)."""
    from .plan import ReservationPlan

    peaks = {}
    for method in ("lowcost", "greedy"):
        plan = ReservationPlan(capacity, horizon)
        if any(plan.place(j, method=method) is None for j in jobs):
            return None
        peaks[method] = plan.peak()
    opt = exact_min_peak(jobs, capacity, horizon)
    return Competitive(peaks["lowcost"], peaks["greedy"], opt.height, theorem_6_1_bound([j.period for j in jobs]))


def tiny_instance(seed: int, horizon: int = 12, n_jobs: int = 4, capacity: int = 6,
                  same_skyline: bool = True) -> tuple[list, int, int]:
    """A seeded tiny instance ``(jobs, capacity, horizon)``: periods dividing ``horizon``, windows
    of at most a period. ``same_skyline`` gives every job one skyline, Theorem 6.1's assumption
    (jobs then differ only in period and window)."""
    rng = np.random.default_rng(seed)
    periods = [p for p in range(2, horizon + 1) if horizon % p == 0]
    K = int(rng.integers(1, 3))
    shared = rng.integers(1, 4, size=K).tolist()
    jobs = []
    for _ in range(n_jobs):
        P = int(rng.choice([p for p in periods if p >= K]))
        demands = shared if same_skyline else rng.integers(1, 4, size=int(rng.integers(1, min(P, 3) + 1))).tolist()
        W = int(rng.integers(len(demands), P + 1))
        a = int(rng.integers(0, P))
        jobs.append(PeriodicJob(P, a, a + W, demands))
    return jobs, capacity, horizon
