"""The Stage Optimizer (SO, §3.2 and §5): Fuxi's plan, IPA's placement and RAA's resource plan.

The optimiser only sees the learned :class:`~.latency_model.LatencyModel`; plans are scored
against the hidden ground truth (or the model itself, or a noisy version of it) by
:func:`evaluate_plan`.

>>> import numpy as np
>>> from cluster_sim.stageopt.latency_model import LatencyModel, simulate_traces
>>> from cluster_sim.stageopt.workload import make_machines, make_stage
>>> rng = np.random.default_rng(0)
>>> model = LatencyModel(max_iter=40).fit(simulate_traces(rng, stages=20, instances_per_stage=20, machines=20))
>>> stage, machines = make_stage(rng, 30), make_machines(rng, 12)
>>> so = StageOptimizer(model, theta0=(2.0, 4.0), alpha=4)
>>> plan = so.raa(stage, machines, so.ipa(stage, machines))
>>> plan.assignment.shape, plan.theta.shape
((30,), (30, 2))
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..validate import finite_array
from .clustering import _ipa_clustered, dbscan_clusters_1d, density_clusters_1d, machine_groups
from .latency_model import LatencyModel, features
from .placement import check_capacity, fuxi_placement, ipa_placement, slots_per_machine
from .raa import _pareto_indices, _raa_path, pareto_indices, raa_general, raa_path, wun
from .workload import Machines, StageSpec, cloud_cost, resource_grid, true_latency


@dataclass(frozen=True)
class StagePlan:
    """A placement plan and a resource plan for one stage, with the model's predictions."""

    method: str
    assignment: np.ndarray          # (m,) machine index per instance
    theta: np.ndarray               # (m, 2) cores and memory per instance
    predicted_latency: np.ndarray   # (m,) model latency under this plan
    solve_seconds: float            # wall-clock time of the optimiser (not deterministic)

    @property
    def predicted_stage_latency(self) -> float:
        return float(self.predicted_latency.max())

    @property
    def predicted_cost(self) -> float:
        return float(cloud_cost(self.predicted_latency, self.theta).sum())


def predict_latency(model: LatencyModel, stage: StageSpec, rows, theta, machines: Machines, machine_idx) -> np.ndarray:
    """Model latency of (rows, θ, machine) triples; machines with identical features share a prediction."""
    return model.predict(features(stage, rows, theta, machines, machine_idx))


def latency_matrix(model: LatencyModel, stage: StageSpec, machines: Machines, theta0, rows=None) -> np.ndarray:
    """The (m, n) matrix L of §5.2: predicted latency of every instance on every machine under Θ0.

    Machines are predicted once per distinct (state, hardware) group and the columns expanded,
    which gives the same matrix as predicting every cell.
    """
    rows = stage.rows if rows is None else np.asarray(rows, dtype=float)
    labels, reps = machine_groups(machines.state_keys())
    m, g = rows.size, reps.size
    out = np.empty((m, g))
    step = max(1, 200_000 // g)          # bounded feature matrices: 200k rows at a time
    for lo in range(0, m, step):
        r = rows[lo: lo + step]
        out[lo: lo + r.size] = predict_latency(model, stage, np.repeat(r, g), np.asarray(theta0, float),
                                               machines, np.tile(reps, r.size)).reshape(r.size, g)
    return out[:, labels]


def run_steps(model: LatencyModel, steps):
    """Run one plan's steps, one model call per feature matrix it yields; return what it returns.

    The optimiser's methods come in two forms: ``ipa`` and ``raa`` call the model themselves, and
    ``ipa_steps`` and ``raa_with_front_steps`` are generators that yield each feature matrix they need
    predicted and receive the predictions back, so :func:`run_batched` can serve many stages' requests
    with one model call (the forest's cost per call is far above its cost per row)."""
    try:
        X = next(steps)
        while True:
            X = steps.send(model.predict(X))
    except StopIteration as done:
        return done.value


def run_batched(model: LatencyModel, many: list) -> list:
    """Run many plans' steps in rounds, each round's feature matrices stacked into one model call;
    return each plan's result, in order.

    Each plan gets the numbers :func:`run_steps` gives it: its feature rows are the same, and the
    forest predicts a row from that row alone. (A plan's ``solve_seconds`` then spans the rounds it
    waited in, the other plans' work included.)"""
    results: list = [None] * len(many)
    waiting = {}
    for i, steps in enumerate(many):
        try:
            waiting[i] = next(steps)
        except StopIteration as done:
            results[i] = done.value
    while waiting:
        order = list(waiting)
        y = model.predict(np.concatenate([waiting[i] for i in order]))
        bounds = np.cumsum([len(waiting[i]) for i in order])[:-1]
        waiting = {}
        for i, part in zip(order, np.split(y, bounds)):
            try:
                waiting[i] = many[i].send(part.copy())  # its own array, as a call of its own gives
            except StopIteration as done:
                results[i] = done.value
    return results


@dataclass
class StageOptimizer:
    """IPA + RAA over a learned model (the SO of Fig. 3).

    ``theta0`` is HBO's resource plan for every instance, ``alpha`` the diversity cap of β_j,
    ``grid`` the resource configurations RAA may choose, ``weights`` the WUN weights
    (latency, cost), ``clustered`` switches the IPA/RAA clustering of Appendix D.2 / E.1 on.
    """

    model: LatencyModel
    theta0: tuple[float, float] = (2.0, 4.0)
    alpha: int = 4
    grid: np.ndarray | None = None
    weights: tuple[float, float] = (0.5, 0.5)
    clustered: bool = True
    raa_method: str = "path"

    def __post_init__(self) -> None:
        self.grid = resource_grid() if self.grid is None else np.asarray(self.grid, dtype=float)
        if self.raa_method not in ("path", "general"):
            raise ValueError(f"raa_method={self.raa_method!r} is not allowed: choose 'path' or 'general'")

    def capacity(self, stage: StageSpec, machines: Machines) -> np.ndarray:
        return slots_per_machine(machines.free, self.theta0, self.alpha, m=stage.instances)

    # ---- placement ------------------------------------------------------------------------------
    def fuxi(self, stage: StageSpec, machines: Machines) -> StagePlan:
        """Fuxi: lowest watermarks on the key resource, instances in id order, HBO's Θ0 for all."""
        t = time.perf_counter()
        watermark = np.c_[machines.cpu_util, machines.mem_util]
        a = fuxi_placement(watermark, self.capacity(stage, machines), stage.instances)
        dt = time.perf_counter() - t
        theta = np.tile(np.asarray(self.theta0, float), (stage.instances, 1))
        pred = predict_latency(self.model, stage, stage.rows, theta, machines, a)
        return StagePlan("Fuxi", a, theta, pred, dt)

    def ipa(self, stage: StageSpec, machines: Machines, clustered: bool | None = None) -> StagePlan:
        """IPA (Algorithm 1), or its clustered form (Algorithm 4), with Θ0 for every instance."""
        return run_steps(self.model, self.ipa_steps(stage, machines, clustered))

    def ipa_steps(self, stage: StageSpec, machines: Machines, clustered: bool | None = None):
        """:meth:`ipa` as steps (see :func:`run_steps`): yields the feature matrices it needs predicted."""
        clustered = self.clustered if clustered is None else clustered
        t = time.perf_counter()
        cap = self.capacity(stage, machines)
        if clustered:
            inst = density_clusters_1d(stage.rows)
            mlab, mreps = machine_groups(machines.state_keys())
            rep_rows = np.zeros(inst.max() + 1)
            np.maximum.at(rep_rows, inst, stage.rows)        # a cluster is its largest instance
            g = mreps.size
            Lr = (yield features(stage, np.repeat(rep_rows, g), np.asarray(self.theta0, float), machines,
                                 np.tile(mreps, rep_rows.size))).reshape(rep_rows.size, g)
            # ipa_clustered's checks of the labels and rows this code just made are skipped; the model's
            # latencies are still checked (a NaN would win every argmin), and the stage still has to fit
            finite_array(Lr, "L_rep", nonneg=True, what="latencies")
            a = _ipa_clustered(Lr, inst, stage.rows, mlab, check_capacity(inst.size, mlab.size, cap, "the machines"))
        else:
            a = ipa_placement(latency_matrix(self.model, stage, machines, self.theta0), cap)
        dt = time.perf_counter() - t
        theta = np.tile(np.asarray(self.theta0, float), (stage.instances, 1))
        pred = yield features(stage, stage.rows, theta, machines, a)
        return StagePlan("IPA(Cluster)" if clustered else "IPA(Org)", a, theta, pred, dt)

    # ---- resource plan -------------------------------------------------------------------------------
    def allowed_configs(self, machines: Machines, assignment: np.ndarray) -> np.ndarray:
        """(m, r) mask of configurations an instance may take: at most its machine's free resources
        divided by the stage's instances on that machine, so every mix of choices fits (Eq. 9)."""
        count = np.bincount(assignment, minlength=machines.n)
        share = machines.free[assignment] / count[assignment][:, None]
        return np.all(self.grid[None, :, :] <= share[:, None, :] + 1e-9, axis=2)

    def instance_clusters(self, stage: StageSpec, clustering: str = "density") -> np.ndarray:
        """Instance cluster labels by input rows: ``"density"`` (the KDE of Appendix D.2, the
        default) or ``"dbscan"`` (scikit-learn's DBSCAN, Expt 7's IPA+RAA(DBSCAN))."""
        if clustering == "density":
            return density_clusters_1d(stage.rows)
        if clustering == "dbscan":
            return dbscan_clusters_1d(stage.rows)
        raise ValueError(f"clustering={clustering!r} is not allowed: choose 'density' or 'dbscan'")

    def instance_pareto_sets(self, stage: StageSpec, machines: Machines, plan: StagePlan, clustered: bool | None = None,
                             clustering: str = "density"):
        """Instance-level (latency, cost) Pareto sets over the allowed grid for each RAA unit.

        Clustered (RAA Fast_MCI): units are the instance clusters (``clustering``) split by machine
        group and by the configurations that fit; a unit is represented by its largest instance and
        its cost is scaled by the unit size (so a unit's cost is an upper bound on its instances'
        summed cost). Unclustered (the paper's W/O_C): one unit per instance. Returns
        ``(units (m,) unit id per instance, sets, configs)`` where ``configs[u]`` holds the grid
        rows behind ``sets[u]``.
        """
        return run_steps(self.model, self.instance_pareto_sets_steps(stage, machines, plan, clustered, clustering))

    def instance_pareto_sets_steps(self, stage: StageSpec, machines: Machines, plan: StagePlan,
                                   clustered: bool | None = None, clustering: str = "density"):
        """:meth:`instance_pareto_sets` as steps (see :func:`run_steps`)."""
        clustered = self.clustered if clustered is None else clustered
        a = plan.assignment
        allowed = self.allowed_configs(machines, a)
        if clustered:
            inst = self.instance_clusters(stage, clustering)
            mlab, reps = machine_groups(machines.state_keys())
            # a unit must also share one allowed set: split by the allowed mask too (packed to one int)
            packed = np.packbits(allowed, axis=1)
            packed = np.pad(packed, ((0, 0), (0, -packed.shape[1] % 8))).view(np.uint64)
            mask_id = np.unique(packed[:, 0] if packed.shape[1] == 1 else packed, axis=None if packed.shape[1] == 1 else 0,
                                return_inverse=True)[1].reshape(-1)
            key = (inst.astype(np.int64) * reps.size + mlab[a]) * (int(mask_id.max()) + 1) + mask_id
            units = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        else:
            units = np.arange(stage.instances)
        nu = int(units.max()) + 1
        size = np.bincount(units, minlength=nu)
        # the representative of a unit is its largest instance (ties: the lower id)
        order = np.lexsort((np.arange(stage.instances), -stage.rows, units))
        rep = order[np.searchsorted(units[order], np.arange(nu))]
        lat = (yield self.config_features(stage, machines, a, rep)).reshape(rep.size, len(self.grid))
        cost = cloud_cost(lat, self.grid[None, :, :]) * size[:, None]
        # pareto_indices' check that every point is finite, made once on the stage's whole matrices
        finite_array(lat, "predicted latency", what="finite latencies")
        finite_array(cost, "cost", what="finite costs")
        sets, configs = [], []
        for u in range(nu):
            ok = np.flatnonzero(allowed[rep[u]])
            pts = np.empty((ok.size, 2))
            pts[:, 0] = lat[u, ok]
            pts[:, 1] = cost[u, ok]
            keep = _pareto_indices(pts) if ok.size else pareto_indices(pts)  # (none allowed: its ValueError)
            sets.append(pts[keep])
            configs.append(ok[keep])
        return units, sets, configs

    def config_latencies(self, stage: StageSpec, machines: Machines, assignment: np.ndarray, instances=None) -> np.ndarray:
        """(k, r) model latency of each of ``instances`` (default: all) under every grid
        configuration, on the machine ``assignment`` gives it."""
        k = stage.instances if instances is None else np.asarray(instances).size
        return self.model.predict(self.config_features(stage, machines, assignment, instances)).reshape(k, len(self.grid))

    def config_features(self, stage: StageSpec, machines: Machines, assignment: np.ndarray, instances=None) -> np.ndarray:
        """The (k r, F) feature rows behind :meth:`config_latencies`: instance by instance, every configuration."""
        idx = np.arange(stage.instances) if instances is None else np.asarray(instances)
        r = len(self.grid)
        return features(stage, np.repeat(stage.rows[idx], r), np.tile(self.grid, (idx.size, 1)), machines,
                        np.repeat(assignment[idx], r))

    def raa_front(self, stage: StageSpec, machines: Machines, plan: StagePlan, clustered: bool | None = None,
                  method: str | None = None, clustering: str = "density") -> "RAAFront":
        """RAA's whole stage front over the units (Path or General) and WUN's pick on it."""
        return run_steps(self.model, self.raa_front_steps(stage, machines, plan, clustered, method, clustering))

    def raa_front_steps(self, stage: StageSpec, machines: Machines, plan: StagePlan, clustered: bool | None = None,
                        method: str | None = None, clustering: str = "density"):
        """:meth:`raa_front` as steps (see :func:`run_steps`)."""
        method = self.raa_method if method is None else method
        if method not in ("path", "general"):
            raise ValueError(f"method={method!r} is not allowed: choose 'path' or 'general'")
        units, sets, configs = yield from self.instance_pareto_sets_steps(stage, machines, plan, clustered, clustering)
        # RAA Path on the sets just made strictly Pareto by pareto_indices (raa_path would check them again)
        front, choice = (_raa_path if method == "path" else raa_general)(sets)
        return RAAFront(units, sets, configs, front, choice, wun(front, self.weights))

    def raa(self, stage: StageSpec, machines: Machines, plan: StagePlan, clustered: bool | None = None,
            method: str | None = None, clustering: str = "density") -> StagePlan:
        """RAA: stage Pareto set from instance sets (Path or General), then WUN picks a plan."""
        return self.raa_with_front(stage, machines, plan, clustered, method, clustering)[0]

    def raa_with_front(self, stage: StageSpec, machines: Machines, plan: StagePlan, clustered: bool | None = None,
                       method: str | None = None, clustering: str = "density") -> tuple[StagePlan, "RAAFront"]:
        """:meth:`raa`'s plan and the front WUN picked it from (its units, sets and every plan on it),
        so a study that needs both solves RAA once."""
        return run_steps(self.model, self.raa_with_front_steps(stage, machines, plan, clustered, method, clustering))

    def raa_with_front_steps(self, stage: StageSpec, machines: Machines, plan: StagePlan,
                             clustered: bool | None = None, method: str | None = None, clustering: str = "density"):
        """:meth:`raa_with_front` as steps (see :func:`run_steps`)."""
        method = self.raa_method if method is None else method
        t = time.perf_counter()
        rf = yield from self.raa_front_steps(stage, machines, plan, clustered, method, clustering)
        theta = self.grid[rf.config_rows(rf.pick)]
        dt = time.perf_counter() - t
        pred = yield features(stage, stage.rows, theta, machines, plan.assignment)
        name = f"{plan.method.replace('(Cluster)', '').replace('(Org)', '')}+RAA({method.capitalize()})"
        return StagePlan(name, plan.assignment, theta, pred, plan.solve_seconds + dt), rf


@dataclass(frozen=True)
class RAAFront:
    """RAA's stage front over its units, as RAA saw it, and the plan behind every point.

    ``front`` is in the units' terms (each unit priced as its representative × its size); score a
    plan per instance with :func:`per_instance_front` to compare it with other plans.
    """

    units: np.ndarray       # (m,) unit of every instance
    sets: list              # the units' instance-level Pareto sets (latency, cost)
    configs: list           # the grid rows behind each set's points
    front: np.ndarray       # (q, 2) stage front over the units
    choice: np.ndarray      # (q, units) row of each unit's set at every front point
    pick: int               # WUN's choice

    def config_rows(self, k: int | np.ndarray) -> np.ndarray:
        """Grid row of every instance at front point(s) ``k``: (m,) for one point, (len(k), m) for many."""
        ks = np.atleast_1d(k)
        per_unit = np.empty((ks.size, len(self.sets)), dtype=np.int64)
        for u, cfg in enumerate(self.configs):
            per_unit[:, u] = cfg[self.choice[ks, u]]
        rows = per_unit[:, self.units]
        return rows[0] if np.ndim(k) == 0 else rows


def per_instance_front(so: StageOptimizer, stage: StageSpec, machines: Machines, plan: StagePlan, rf: RAAFront,
                       latencies: np.ndarray | None = None) -> np.ndarray:
    """(q, 2) every plan on RAA's front scored per instance by the model (stage latency, cost).

    This is how :func:`evaluate_plan` (``mode="model"``) scores the plan RAA returns, so WUN's
    pick lands exactly on the noise-free table's numbers. ``latencies`` is the (m, r) matrix of
    :meth:`StageOptimizer.config_latencies` when the caller already has it.
    """
    P = so.config_latencies(stage, machines, plan.assignment) if latencies is None else latencies
    rows = rf.config_rows(np.arange(len(rf.front)))                 # (q, m)
    lat = P[np.arange(stage.instances)[None, :], rows]
    cost = cloud_cost(lat, so.grid[rows]).sum(axis=1)
    return np.c_[lat.max(axis=1), cost]


def exact_front(so: StageOptimizer, machines: Machines, plan: StagePlan, latencies: np.ndarray) -> np.ndarray:
    """The unclustered (W/O_C) stage front from the (m, r) per-instance latencies: exact per instance."""
    allowed = so.allowed_configs(machines, plan.assignment)
    sets = []
    for i in range(latencies.shape[0]):
        ok = np.flatnonzero(allowed[i])
        pts = np.c_[latencies[i, ok], cloud_cost(latencies[i, ok], so.grid[ok])]
        sets.append(pts[pareto_indices(pts)])
    return raa_path(sets)[0]


def evaluate_plan(plan: StagePlan, stage: StageSpec, machines: Machines, mode: str = "truth",
                  noise: float = 0.0, rng: np.random.Generator | None = None) -> tuple[float, float]:
    """The (stage latency, cost) a plan actually gets.

    ``mode``: ``"truth"`` runs the hidden ground truth (with lognormal run noise ``noise``);
    ``"model"`` takes the model's prediction as the truth (Expt 9's noise-free case); ``"noisy"``
    draws each instance from N(μ, σ=noise·μ) around the prediction, truncated to μ ± 3σ (Expt 9's
    noisy case, the paper's GPR simulator).
    """
    if mode == "truth":
        lat = true_latency(stage, stage.rows, plan.theta[:, 0], plan.theta[:, 1], machines, plan.assignment,
                           rng=rng, noise=noise)
    elif mode == "model":
        lat = plan.predicted_latency
    elif mode == "noisy":
        mu = plan.predicted_latency
        if not 0 <= noise < 1 / 3:
            raise ValueError(f"noise={noise} must be in [0, 1/3) so that mu - 3 sigma stays positive")
        if noise == 0:
            lat = mu
        else:
            if rng is None:
                raise ValueError("mode='noisy' needs an rng")
            from scipy.stats import truncnorm  # here: the one use; scipy.stats is half a second of a kernel's start

            lat = mu * (1 + noise * truncnorm.rvs(-3, 3, size=mu.size, random_state=rng))
    else:
        raise ValueError(f"mode={mode!r} is not allowed: choose 'truth', 'model' or 'noisy'")
    return float(lat.max()), float(cloud_cost(lat, plan.theta).sum())


def with_method(plan: StagePlan, method: str) -> StagePlan:
    return replace(plan, method=method)
