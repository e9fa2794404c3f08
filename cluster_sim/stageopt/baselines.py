"""MOO baselines of Expt 8 / Table 2 at reduced scale: WS(Sample) and NSGA-II (EVO).

Both solve Def. 5.2 directly: Plan A over the placement B *and* the resource plan Θ, Plan B over
Θ only with IPA's placement (the "IPA+" rows of Table 2). They see the same learned model as
IPA+RAA through a precomputed table ``P[i, g, r]`` of predicted latency of instance ``i`` on
machine group ``g`` with configuration ``r``. A solver *covers* a stage when it returns a
feasible plan (capacity per machine, at most α instances per machine); budgets are counted in
samples and generations, not seconds, so results are reproducible.
"""

from __future__ import annotations

import time

import functools

import numpy as np

from .clustering import machine_groups
from .optimizer import StageOptimizer, StagePlan, predict_latency
from .raa import pareto_indices, wun
from .workload import COST_WEIGHTS, Machines, StageSpec


class StageProblem:
    """Def. 5.2 as arrays: objectives and feasibility of whole-stage (assignment, config) plans."""

    def __init__(self, so: StageOptimizer, stage: StageSpec, machines: Machines):
        self.so, self.stage, self.machines = so, stage, machines
        self.grid = so.grid
        labels, reps = machine_groups(machines.state_keys())
        self.group = labels
        m, g, r = stage.instances, reps.size, len(self.grid)
        lat = predict_latency(so.model, stage, np.repeat(stage.rows, g * r), np.tile(self.grid, (m * g, 1)),
                              machines, np.tile(np.repeat(reps, r), m))
        self.P = lat.reshape(m, g, r)
        self.price = self.grid @ COST_WEIGHTS

    def objectives(self, A: np.ndarray, C: np.ndarray) -> np.ndarray:
        """(s, 2) stage latency and cost of s plans: A (s, m) machines, C (s, m) grid rows."""
        i = np.arange(A.shape[1])[None, :]
        lat = self.P[i, self.group[A], C]
        return np.c_[lat.max(axis=1), (lat * self.price[C]).sum(axis=1)]

    def violation(self, A: np.ndarray, C: np.ndarray) -> np.ndarray:
        """(s, 3n) constraint values (<= 0 when feasible): cores, memory and α per machine."""
        s, n = A.shape[0], self.machines.n
        out = np.zeros((s, 3 * n))
        for k in range(s):
            use = np.zeros((n, 2))
            np.add.at(use, A[k], self.grid[C[k]])
            cnt = np.bincount(A[k], minlength=n)
            out[k] = np.r_[use[:, 0] - self.machines.free[:, 0], use[:, 1] - self.machines.free[:, 1], cnt - self.so.alpha]
        return out

    def plan(self, name: str, a: np.ndarray, c: np.ndarray, seconds: float) -> StagePlan:
        theta = self.grid[c]
        pred = self.P[np.arange(a.size), self.group[a], c]
        return StagePlan(name, a.astype(np.int64), theta, pred, seconds)


def ws_sample(problem: StageProblem, rng: np.random.Generator, samples: int = 2000, fixed_assignment=None,
              weights: int = 11) -> StagePlan | None:
    """WS(Sample) [25]: sample plans, drop infeasible ones, keep the weighted-sum optimum for each
    of ``weights`` latency/cost weights, then recommend one of those with WUN. ``None`` if no
    sample was feasible (the stage is not covered)."""
    t = time.perf_counter()
    m, n, r = problem.stage.instances, problem.machines.n, len(problem.grid)
    A = np.broadcast_to(fixed_assignment, (samples, m)).copy() if fixed_assignment is not None else rng.integers(0, n, size=(samples, m))
    C = rng.integers(0, r, size=(samples, m))
    ok = np.all(problem.violation(A, C) <= 1e-9, axis=1)
    name = "IPA+WS(Sample)" if fixed_assignment is not None else "WS(Sample)"
    if not ok.any():
        return None
    A, C = A[ok], C[ok]
    F = problem.objectives(A, C)
    z = (F - F.min(0)) / np.where(np.ptp(F, 0) > 0, np.ptp(F, 0), 1)
    picks = sorted({int(np.argmin(z @ np.array([w, 1 - w]))) for w in np.linspace(0, 1, weights)})
    k = picks[wun(F[picks], problem.so.weights)]
    return problem.plan(name, A[k], C[k], time.perf_counter() - t)


@functools.cache
def _pymoo_problem() -> type:
    """pymoo's Problem for a :class:`StageProblem`: pymoo is imported here, by the EVO baseline that uses it,
    not by every kernel that imports the package (a fifth of a second each)."""
    from pymoo.core.problem import Problem

    class _Pymoo(Problem):
        def __init__(self, problem: StageProblem, fixed_assignment):
            self.p, self.fixed = problem, fixed_assignment
            m, n, r = problem.stage.instances, problem.machines.n, len(problem.grid)
            if fixed_assignment is None:
                xl, xu = np.zeros(2 * m), np.r_[np.full(m, n - 1), np.full(m, r - 1)]
            else:
                xl, xu = np.zeros(m), np.full(m, r - 1)
            super().__init__(n_var=xl.size, n_obj=2, n_ieq_constr=3 * n, xl=xl, xu=xu, vtype=int)

        def split(self, X):
            X = np.rint(X).astype(np.int64)
            m = self.p.stage.instances
            if self.fixed is None:
                return X[:, :m], X[:, m:]
            return np.broadcast_to(self.fixed, (X.shape[0], m)), X

        def _evaluate(self, X, out, *args, **kwargs):
            A, C = self.split(X)
            out["F"] = self.p.objectives(A, C)
            out["G"] = self.p.violation(A, C)

    return _Pymoo


def nsga2(problem: StageProblem, seed: int, pop_size: int = 40, generations: int = 30, fixed_assignment=None) -> StagePlan | None:
    """EVO [7]: pymoo's NSGA-II on Def. 5.2 (Plan A) or on Θ given IPA's placement (Plan B).

    The final feasible non-dominated set goes through WUN; ``None`` if no feasible plan was found.
    """
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.repair.rounding import RoundingRepair
    from pymoo.operators.sampling.rnd import IntegerRandomSampling
    from pymoo.optimize import minimize

    t = time.perf_counter()
    prob = _pymoo_problem()(problem, fixed_assignment)
    algo = NSGA2(pop_size=pop_size, sampling=IntegerRandomSampling(),
                 crossover=SBX(prob=0.9, eta=15, vtype=float, repair=RoundingRepair()),
                 mutation=PM(eta=20, vtype=float, repair=RoundingRepair()), eliminate_duplicates=True)
    res = minimize(prob, algo, ("n_gen", generations), seed=seed, verbose=False)
    name = "IPA+EVO" if fixed_assignment is not None else "EVO"
    if res.X is None or res.F is None:
        return None
    X = np.atleast_2d(res.X)
    A, C = prob.split(X)
    ok = np.all(problem.violation(A, C) <= 1e-9, axis=1)
    if not ok.any():
        return None
    A, C = A[ok], C[ok]
    F = problem.objectives(A, C)
    keep = pareto_indices(F)
    k = keep[wun(F[keep], problem.so.weights)]
    return problem.plan(name, np.asarray(A[k]), np.asarray(C[k]), time.perf_counter() - t)
