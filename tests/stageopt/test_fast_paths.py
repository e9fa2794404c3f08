"""Issue 33 (round 15): the stage optimiser's cheaper paths give the numbers of the code they replaced, bit for bit.

Lab 10 plans about 12,000 stages a paper day with Lab 07's optimiser, on arrays of a few dozen rows, where numpy's
own checks cost more than the work. Each function below is the code as it was before that round (kept here as the
reference, verbatim): ``features`` stacked its channels with ``np.r_``/``np.c_`` and ``np.eye``;
``density_clusters_1d`` asked ``np.percentile``, ``np.histogram`` and ``np.unique``; ``ipa_clustered`` checked its
arguments and built every machine cluster's slots on each call; the optimiser re-checked its own Pareto points and
sets; ``Machines.state_keys`` used ``np.c_``. The tests compare the new paths with them on many random stages and
edge cases (one instance, all rows equal, zero rows, a few far-apart rows), with exact equality of every byte, and
the whole optimiser with every fast path swapped back for the old code against the optimiser as it is.
"""

import numpy as np
import pytest

from cluster_sim.stageopt import clustering, latency_model, optimizer, raa
from cluster_sim.stageopt.clustering import density_clusters_1d, ipa_clustered
from cluster_sim.stageopt.latency_model import (CBO_STATE, CHANNEL_COLUMNS, N_FEATURES, N_HW, N_OPS, LatencyModel,
                                                features, simulate_traces)
from cluster_sim.stageopt.optimizer import StageOptimizer, run_batched, run_steps
from cluster_sim.stageopt.placement import check_capacity
from cluster_sim.stageopt.workload import (CBO_COST_US, Machines, StageSpec, make_machines, make_stage,
                                           resource_grid)
from cluster_sim.validate import finite_array, index_array, number, whole_number

GRID = resource_grid((1.0, 2.0, 4.0), (1.0, 2.0, 4.0))


# ---- the code before round 15, verbatim ---------------------------------------------------------------------------
def features_before(stage: StageSpec, rows, theta, machines: Machines, machine_idx) -> np.ndarray:
    rows = np.atleast_1d(np.asarray(rows, dtype=float))
    j = np.atleast_1d(np.asarray(machine_idx))
    theta = np.asarray(theta, dtype=float)
    N = max(rows.size, j.size, theta.shape[0] if theta.ndim == 2 else 1)
    rows = np.broadcast_to(rows, (N,))
    j = np.broadcast_to(j, (N,))
    theta = np.broadcast_to(theta, (N, 2))
    X = np.zeros((N, N_FEATURES))
    c = CHANNEL_COLUMNS
    counts = np.bincount(stage.ops, minlength=N_OPS)
    X[:, c["Ch1"]] = np.r_[counts, np.log10(stage.cardinality), stage.selectivity.mean(),
                           np.log10(stage.row_bytes), np.log10(stage.instances)]
    X[:, c["Ch2"]] = np.c_[np.log10(rows), np.log10(rows * stage.row_bytes)]
    X[:, c["Ch3"]] = theta
    X[:, c["Ch4"]] = np.c_[machines.cpu_level[j], machines.mem_level[j], machines.io_busy[j]]
    X[:, c["Ch5"]] = np.eye(N_HW)[machines.hardware[j]]
    into = stage.rows_into_ops(rows)                          # (N, n_ops)
    per_type = np.zeros((N, N_OPS))
    np.add.at(per_type.T, stage.ops, into.T)                  # rows into each operator type
    cbo = (into * CBO_COST_US[stage.ops]).sum(axis=1)
    state_bytes = (into * CBO_STATE[stage.ops]).sum(axis=1) * stage.row_bytes
    X[:, c["AIM"]] = np.c_[np.log10(1 + per_type), np.log10(cbo), np.log10(1 + state_bytes)]
    return X


def density_clusters_1d_before(rows, bandwidth=None, bins: int = 256) -> np.ndarray:
    r = finite_array(rows, "rows", nonneg=True, what="input row counts")
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"rows must be a non-empty 1-D array, got shape {np.shape(rows)}")
    bins = whole_number(bins, "bins", lo=2)
    if bandwidth is not None:
        bandwidth = number(bandwidth, "bandwidth", lo=0, lo_open=True)
    x = np.log10(np.maximum(r, 1.0))
    lo, hi = x.min(), x.max()
    if hi - lo < 1e-12:
        return np.zeros(x.size, dtype=np.int64)
    if bandwidth is None:
        sd = x.std()
        iqr = np.subtract(*np.percentile(x, [75, 25]))
        spread = min(sd, iqr / 1.34) if iqr > 0 else sd
        bandwidth = 0.9 * spread * x.size ** (-0.2) if spread > 0 else (hi - lo) / 10
    if bandwidth <= 0:
        raise ValueError(f"bandwidth={bandwidth} must be > 0")
    hist, edges = np.histogram(x, bins=bins, range=(lo, hi))
    from scipy.ndimage import gaussian_filter1d

    dens = gaussian_filter1d(hist.astype(float), sigma=bandwidth / (edges[1] - edges[0]), mode="constant")
    interior = np.flatnonzero((dens[1:-1] < dens[:-2]) & (dens[1:-1] <= dens[2:])) + 1
    cuts = edges[interior] + (edges[1] - edges[0]) / 2
    labels_low_first = np.searchsorted(cuts, x, side="right")
    return np.unique(cuts.size - labels_low_first, return_inverse=True)[1].reshape(-1).astype(np.int64)


def ipa_clustered_before(L_rep, inst_labels, rows, mach_labels, capacity) -> np.ndarray:
    if np.ndim(inst_labels) != 1 or np.size(inst_labels) == 0:
        raise ValueError(f"inst_labels must be a non-empty 1-D array, got shape {np.shape(inst_labels)}")
    if np.ndim(mach_labels) != 1 or np.size(mach_labels) == 0:
        raise ValueError("mach_labels is empty: the machine list is empty")
    inst_labels = index_array(inst_labels, "inst_labels", what="instance cluster label")
    mach_labels = index_array(mach_labels, "mach_labels", what="machine cluster label")
    m, n = inst_labels.size, mach_labels.size
    cap = check_capacity(m, n, capacity, "mach_labels")
    Lr = np.asarray(L_rep, dtype=float)
    mp, np_ = int(inst_labels.max()) + 1, int(mach_labels.max()) + 1
    if Lr.shape != (mp, np_):
        raise ValueError(f"L_rep must be (instance clusters, machine clusters) = ({mp}, {np_}), got {Lr.shape}")
    finite_array(Lr, "L_rep", nonneg=True, what="latencies")
    rows = finite_array(rows, "rows", nonneg=True, what="input row counts")
    if rows.shape != (m,):
        raise ValueError(f"rows must have one entry per instance: shape ({m},) like inst_labels, got {rows.shape}")
    order = np.lexsort((np.arange(m), -rows, inst_labels))
    starts = np.searchsorted(inst_labels[order], np.arange(mp))
    ends = np.searchsorted(inst_labels[order], np.arange(mp), side="right")
    taken = starts.copy()
    beta = ends - starts
    slot_lists = []
    for g in range(np_):
        ms = np.flatnonzero(mach_labels == g)
        c = cap[ms]
        slot_lists.append(np.concatenate([ms[c > r] for r in range(int(c.max()) if c.size else 0)] or [np.zeros(0, np.int64)]))
    s = np.array([len(x) for x in slot_lists], dtype=np.int64)
    used = np.zeros(np_, dtype=np.int64)
    assignment = np.full(m, -1, dtype=np.int64)
    Lm = np.where(s[None, :] > 0, Lr, np.inf)
    active = beta > 0
    while active.any():
        best = np.argmin(Lm, axis=1)
        bpl = np.where(active, Lm[np.arange(mp), best], -np.inf)
        i = int(np.argmax(bpl))
        j = int(best[i])
        delta = int(min(beta[i], s[j]))
        inst = order[taken[i]: taken[i] + delta]
        assignment[inst] = slot_lists[j][used[j]: used[j] + delta]
        taken[i] += delta
        used[j] += delta
        beta[i] -= delta
        s[j] -= delta
        if beta[i] == 0:
            active[i] = False
        if s[j] == 0:
            Lm[:, j] = np.inf
    return assignment


def state_keys_before(self) -> np.ndarray:
    return np.c_[self.hardware, self.cpu_level, self.mem_level, self.io_busy.astype(int)]


# ---- random stages and edge cases ---------------------------------------------------------------------------------
def row_cases(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Input rows of many shapes: Lab 07's stages, heavy tails, few distinct values with zeros, all equal,
    one instance, two far-apart modes, and rows exactly on a power of ten."""
    out = [np.array([1.0]), np.array([0.0]), np.array([0.0, 0.0]), np.full(7, 5e6), np.array([1.0, 10.0]),
           np.array([0.0, 1.0, 1e9]), 10.0 ** np.arange(9)]
    for t in range(n):
        m = int(rng.integers(1, 150))
        kind = t % 6
        if kind == 0:
            r = make_stage(rng, m).rows
        elif kind == 1:
            r = np.round(rng.lognormal(10, 3, size=m))
        elif kind == 2:
            r = rng.choice([0.0, 1.0, 5.0, 100.0, 1e6], size=m)
        elif kind == 3:
            r = np.full(m, float(rng.integers(0, 1000)))
        elif kind == 4:
            r = np.round(10 ** rng.uniform(0, 8, size=m))
        else:
            r = np.round(np.r_[rng.lognormal(5, 0.1, size=m), rng.lognormal(12, 0.1, size=max(1, m // 10))])
        out.append(r)
    return out


def same(got: np.ndarray, want: np.ndarray) -> None:
    """Exactly the same array: dtype, shape and every byte (NaN and -0.0 included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


# ---- each fast path against the code it replaced ------------------------------------------------------------------
def test_features_are_the_stacked_channels_bit_for_bit():
    rng = np.random.default_rng(0)
    for t in range(300):
        m = int(rng.integers(1, 60))
        stage, machines = make_stage(rng, m), make_machines(rng, int(rng.integers(1, 30)))
        if t % 10 == 0:
            stage = StageSpec(stage.ops, stage.selectivity, stage.row_bytes, np.full(m, stage.rows[0]))
        j = rng.integers(0, machines.n, size=m)
        thetas = GRID[rng.integers(0, len(GRID), size=m)]
        for args in ((stage.rows, thetas, j), (stage.rows, np.array([1.0, 1.0]), j),
                     (stage.rows[:1], np.array([2.0, 4.0]), j[:1]), (stage.rows[0], thetas, j),
                     (np.repeat(stage.rows, 3), np.tile(GRID[:3], (m, 1)), np.repeat(j, 3))):
            same(features(stage, args[0], args[1], machines, args[2]), features_before(stage, args[0], args[1], machines, args[2]))


def test_features_of_zero_rows_are_the_same_infinities():
    rng = np.random.default_rng(1)
    stage, machines = make_stage(rng, 4), make_machines(rng, 3)
    rows = np.array([0.0, 1.0, 0.0, 3.0])
    with np.errstate(divide="ignore"):
        same(features(stage, rows, (1.0, 1.0), machines, [0, 1, 2, 0]),
             features_before(stage, rows, (1.0, 1.0), machines, [0, 1, 2, 0]))


def test_features_refuse_what_they_refused():
    rng = np.random.default_rng(2)
    stage, machines = make_stage(rng, 4), make_machines(rng, 3)
    with pytest.raises(ValueError):          # rows and machines of different lengths
        features(stage, stage.rows, (1.0, 1.0), machines, [0, 1, 2])
    with pytest.raises(ValueError):          # one θ per instance, but for three instances
        features(stage, stage.rows, GRID[:3], machines, [0, 1, 2, 0])
    bad = Machines(np.array([0, N_HW]), np.zeros(2, int), np.zeros(2, int), np.zeros(2, bool), np.ones((2, 2)), 4)
    with pytest.raises(IndexError):          # a hardware type out of range, as np.eye's rows refused it
        features(stage, stage.rows[:2], (1.0, 1.0), bad, [0, 1])


@pytest.mark.parametrize("bandwidth, bins", [(None, 256), (None, 2), (None, 7), (0.05, 256), (1.5, 31)])
def test_density_clusters_are_numpys_percentile_histogram_and_unique(bandwidth, bins):
    rng = np.random.default_rng(3)
    for rows in row_cases(rng, 1500):
        # the remembered labels and a fresh computation, both against the code with numpy's functions
        want = density_clusters_1d_before(rows, bandwidth, bins)
        same(density_clusters_1d(rows, bandwidth, bins), want)
        x = np.log10(np.maximum(rows, 1.0))
        same(clustering._density_labels(x, None if bandwidth is None else float(bandwidth), bins), want)


def test_linear_percentile_is_numpys_and_histogram_counts_are_numpys():
    rng = np.random.default_rng(4)
    for rows in row_cases(rng, 600):
        x = np.log10(np.maximum(rows, 1.0))
        if x.size < 2:
            continue
        xs = np.sort(x)
        for q in (0.25, 0.5, 0.75):
            assert clustering._linear_percentile(xs, q) == np.percentile(x, 100 * q)
        if xs[-1] - xs[0] >= 1e-12:
            hist, edges = np.histogram(x, bins=256, range=(xs[0], xs[-1]))
            same(np.linspace(xs[0], xs[-1], 257, endpoint=True, dtype=float), edges)
            below = np.searchsorted(xs, edges, side="left")
            below[-1] = xs.size
            same(np.diff(below), hist)


def test_linear_percentile_interpolates_from_numpys_side():
    """numpy's lerp computes b - (b - a)(1 - t) when t >= 0.5 and a + (b - a) t below: pairs where the two
    differ in the last bit (about 1 in 1,000), as the 25th and 75th percentiles of four values."""
    rng = np.random.default_rng(10)
    a = rng.uniform(0, 9, 200_000)
    b = a + rng.uniform(0, 3, a.size) * 10 ** rng.uniform(-12, 0, a.size)
    d = b - a
    split = np.flatnonzero((a + 0.75 * d != b - 0.25 * d) & (b < a + 1))[:50]
    assert split.size == 50
    for i in split:
        x = np.array([b[i] + 2.0, a[i], b[i] + 1.0, b[i]])        # sorted: a, b, b + 1, b + 2
        xs = np.sort(x)
        assert clustering._linear_percentile(xs, 0.25) == np.percentile(x, 25)   # t = 0.75 between a and b
        assert clustering._linear_percentile(xs, 0.75) == np.percentile(x, 75)   # t = 0.25
        assert np.percentile(x, 25) != a[i] + 0.75 * d[i]                         # the side matters here


def test_density_clusters_give_each_caller_its_own_array():
    rows = np.array([10.0, 11, 12, 1000, 1100, 13])
    first = density_clusters_1d(rows)
    first[:] = 7
    assert density_clusters_1d(rows).tolist() == [1, 1, 1, 0, 0, 1]


def test_density_clusters_still_refuse_bad_rows():
    with pytest.raises(ValueError, match="rows"):
        density_clusters_1d([1.0, np.nan])
    with pytest.raises(ValueError, match="negative"):
        density_clusters_1d([1.0, -2.0])
    with pytest.raises(ValueError, match="bins"):
        density_clusters_1d([1.0, 2.0], bins=1)


def test_ipa_clustered_fast_path_is_the_checked_one():
    rng = np.random.default_rng(5)
    for t in range(400):
        m = int(rng.integers(1, 80))
        rows = make_stage(rng, m).rows if t % 4 else np.full(m, 3.0)
        inst = density_clusters_1d(rows)
        machines = make_machines(rng, int(rng.integers(1, 25)), hardware_types=int(rng.integers(1, 6)))
        mlab, _ = clustering.machine_groups(machines.state_keys())
        cap = rng.integers(0, 5, size=machines.n)
        if cap.sum() < m:
            cap[rng.integers(0, machines.n)] += m - cap.sum()
        Lr = rng.lognormal(0, 1, size=(inst.max() + 1, mlab.max() + 1))
        if t % 7 == 0:
            Lr = np.round(Lr)          # ties between clusters and machine groups
        want = ipa_clustered_before(Lr, inst, rows, mlab, cap)
        same(ipa_clustered(Lr, inst, rows, mlab, cap), want)
        same(clustering._ipa_clustered(Lr, inst, rows, mlab, cap.astype(np.int64)), want)
    with pytest.raises(ValueError, match="need 3 slots, have 2"):
        ipa_clustered(np.ones((1, 1)), [0, 0, 0], [1.0, 2.0, 3.0], [0, 0], [1, 1])


def test_machine_slots_are_remembered_read_only():
    slots = clustering._machine_slots(np.array([0, 1, 0], dtype=np.int64).tobytes(),
                                      np.array([2, 1, 1], dtype=np.int64).tobytes(), 2)
    assert [s.tolist() for s in slots] == [[0, 2, 0], [1]]
    with pytest.raises(ValueError):
        slots[0][0] = 5


def test_state_keys_are_np_c_s():
    rng = np.random.default_rng(6)
    for n in range(1, 40):
        machines = make_machines(rng, n)
        same(machines.state_keys(), state_keys_before(machines))


# ---- the whole optimiser: every fast path swapped back -----------------------------------------------------------
@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(5)
    return LatencyModel(max_iter=30).fit(simulate_traces(rng, stages=20, instances_per_stage=20, machines=20, grid=GRID))


def plan(so, stage, machines, clustered):
    ipa = yield from so.ipa_steps(stage, machines, clustered)
    raa, front = yield from so.raa_with_front_steps(stage, machines, ipa, clustered, "path")
    return ipa, raa, front


def all_plans(model, stages, machines):
    """Every stage's IPA and RAA (Lab 07's per-stage calls, clustered and not) and the capstone's batched plans."""
    so = StageOptimizer(model, theta0=(1.0, 1.0), alpha=4, grid=GRID)
    out = []
    for clustered in (True, False):
        for stage in stages:
            ipa = so.ipa(stage, machines, clustered)
            out.append((ipa,) + so.raa_with_front(stage, machines, ipa, clustered))
    out += run_batched(model, [plan(so, s, machines, True) for s in stages])
    return out


def stage_set(rng):
    """Lab 07's random stages, with one instance, all rows equal, and a few far-apart rows among them."""
    stages = [make_stage(rng, int(rng.integers(1, 60))) for _ in range(40)]
    base = stages[0]
    stages += [StageSpec(base.ops, base.selectivity, base.row_bytes, np.array([3e6])),
               StageSpec(base.ops, base.selectivity, base.row_bytes, np.full(12, 2e6)),
               StageSpec(base.ops, base.selectivity, base.row_bytes, np.array([1.0, 1.0, 1e8, 5e3]))]
    return stages


def test_the_optimiser_plans_as_the_code_before_did(model, monkeypatch):
    rng = np.random.default_rng(8)
    machines = make_machines(rng, 16)
    stages = stage_set(rng)
    new = all_plans(model, stages, machines)
    # the optimiser of before: every fast path swapped for the code it replaced
    clustering._remembered_density_labels.cache_clear()
    monkeypatch.setattr(optimizer, "features", features_before)
    monkeypatch.setattr(optimizer, "density_clusters_1d", density_clusters_1d_before)
    monkeypatch.setattr(optimizer, "_ipa_clustered", lambda Lr, inst, rows, mlab, cap: ipa_clustered_before(Lr, inst, rows, mlab, cap))
    monkeypatch.setattr(optimizer, "_pareto_indices", raa.pareto_indices)
    monkeypatch.setattr(optimizer, "_raa_path", raa.raa_path)
    monkeypatch.setattr(Machines, "state_keys", state_keys_before)
    old = all_plans(model, stages, machines)
    assert len(new) == len(old)
    for (ipa, raa_plan, front), (ipa0, raa0, front0) in zip(new, old):
        for got, want in ((ipa, ipa0), (raa_plan, raa0)):
            assert got.method == want.method
            same(got.assignment, want.assignment)
            same(got.theta, want.theta)
            same(got.predicted_latency, want.predicted_latency)
        same(front.units, front0.units)
        same(front.front, front0.front)
        same(front.choice, front0.choice)
        assert front.pick == front0.pick
        assert len(front.sets) == len(front0.sets)
        for s, s0, c, c0 in zip(front.sets, front0.sets, front.configs, front0.configs):
            same(s, s0)
            same(c, c0)


class NaNModel:
    """A latency model whose predictions are NaN: pareto_indices' check must still catch them."""

    def __init__(self, model):
        self.model = model

    def predict(self, X):
        y = self.model.predict(X)
        y[len(y) // 2] = np.nan
        return y


def test_a_non_finite_prediction_is_still_refused(model):
    rng = np.random.default_rng(9)
    stage, machines = make_stage(rng, 10), make_machines(rng, 8)
    so = StageOptimizer(model, theta0=(1.0, 1.0), alpha=4, grid=GRID)
    ipa = so.ipa(stage, machines)
    with pytest.raises(ValueError, match="must hold finite"):
        run_steps(NaNModel(model), so.instance_pareto_sets_steps(stage, machines, ipa))


def test_a_non_finite_prediction_is_still_refused_by_ipa(model):
    rng = np.random.default_rng(9)
    stage, machines = make_stage(rng, 10), make_machines(rng, 8)
    so = StageOptimizer(model, theta0=(1.0, 1.0), alpha=4, grid=GRID)
    with pytest.raises(ValueError, match="L_rep"):
        run_steps(NaNModel(model), so.ipa_steps(stage, machines))
