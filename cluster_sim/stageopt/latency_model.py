"""The instance-level latency model of §4: multi-channel features, a learned regressor, metrics.

Features come in the paper's five channels plus AIM (§4.1):

* Ch1 query plan (shared by the stage's instances): operator counts, stage cardinality, mean
  selectivity, row size, partition count;
* Ch2 instance meta: input rows and input bytes;
* Ch3 resource plan: cores and memory;
* Ch4 machine system state: CPU level, memory level, IO busy;
* Ch5 hardware type (one-hot);
* AIM: the instance's estimated rows into each operator type (stage selectivities applied to its
  own input rows), the CBO's cost estimate for the instance and its estimate of the bytes held by
  stateful operators.

The paper embeds Ch1 with a graph transformer; our plans are short pipelines, so a fixed-length
encoding and scikit-learn's histogram gradient boosting on log latency play that role.

>>> rng = np.random.default_rng(1)
>>> traces = simulate_traces(rng, stages=30, instances_per_stage=40, machines=20)
>>> model = LatencyModel(max_iter=60).fit(traces)
>>> metrics = evaluate(model, traces)
>>> sorted(metrics)
['95%Err', 'Corr', 'GlbErr', 'MdErr', 'WMAPE']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import ThreadpoolController

from .workload import CBO_COST_US, HARDWARE_SPEED, OPERATORS, Machines, StageSpec, cloud_cost, make_machines, make_stage, resource_grid, true_latency

if TYPE_CHECKING:  # sklearn is imported by LatencyModel.fit, the one place that needs it
    from sklearn.ensemble import HistGradientBoostingRegressor

#: which operators the CBO treats as stateful (holding their input in memory)
CBO_STATE = np.array([0.0, 0.0, 0.0, 1.0, 0.5, 1.0, 1.0, 0.0])
_THREADPOOLS: ThreadpoolController | None = None


def _one_openmp_thread():
    """A context that runs scikit-learn's OpenMP loops on one thread.

    On a shared 2-core machine oversubscribed spinning threads cost 10x. The controller is built
    once (scanning the loaded libraries takes ~6 ms, which every prediction used to pay).
    """
    global _THREADPOOLS
    if _THREADPOOLS is None:
        _THREADPOOLS = ThreadpoolController()
    return _THREADPOOLS.limit(limits=1, user_api="openmp")


CHANNELS = ("Ch1", "Ch2", "Ch3", "Ch4", "Ch5", "AIM")
N_OPS = len(OPERATORS)
N_HW = len(HARDWARE_SPEED)


def _channel_columns() -> dict[str, slice]:
    widths = {"Ch1": N_OPS + 4, "Ch2": 2, "Ch3": 2, "Ch4": 3, "Ch5": N_HW, "AIM": N_OPS + 2}
    out, start = {}, 0
    for ch in CHANNELS:
        out[ch] = slice(start, start + widths[ch])
        start += widths[ch]
    return out


CHANNEL_COLUMNS = _channel_columns()
N_FEATURES = max(s.stop for s in CHANNEL_COLUMNS.values())


def features(stage: StageSpec, rows, theta, machines: Machines, machine_idx) -> np.ndarray:
    """The (N, F) multi-channel feature matrix for N (instance rows, θ, machine) triples.

    ``rows`` (N,), ``theta`` (N, 2) or (2,), ``machine_idx`` (N,) broadcast together.
    """
    rows = np.atleast_1d(np.asarray(rows, dtype=float))
    j = np.atleast_1d(np.asarray(machine_idx))
    theta = np.asarray(theta, dtype=float)
    N = max(rows.size, j.size, theta.shape[0] if theta.ndim == 2 else 1)
    # broadcast only what needs it (np.broadcast_to is ~20 us a call, and the stage optimiser calls this
    # ~50,000 times a paper day with arrays that already have their shape); a mismatch still raises
    if rows.shape != (N,):
        rows = np.broadcast_to(rows, (N,))
    if j.shape != (N,):
        j = np.broadcast_to(j, (N,))
    # every column is written below, each from the same arrays and the same numpy calls as the channels'
    # np.r_/np.c_ stacks were (each ufunc into a fresh array, then copied into X): the same bits
    X = np.empty((N, N_FEATURES))
    ch1, ch2, ch4, ch5, aim = (CHANNEL_COLUMNS[ch].start for ch in ("Ch1", "Ch2", "Ch4", "Ch5", "AIM"))
    X[:, ch1: ch1 + N_OPS] = np.bincount(stage.ops, minlength=N_OPS)
    X[:, ch1 + N_OPS] = np.log10(stage.cardinality)
    X[:, ch1 + N_OPS + 1] = stage.selectivity.mean()
    X[:, ch1 + N_OPS + 2] = np.log10(stage.row_bytes)
    X[:, ch1 + N_OPS + 3] = np.log10(stage.instances)
    X[:, ch2] = np.log10(rows)
    X[:, ch2 + 1] = np.log10(rows * stage.row_bytes)
    X[:, CHANNEL_COLUMNS["Ch3"]] = theta                      # (2,) or (N, 2): broadcast by the assignment
    X[:, ch4] = machines.cpu_level[j]
    X[:, ch4 + 1] = machines.mem_level[j]
    X[:, ch4 + 2] = machines.io_busy[j]
    onehot = X[:, ch5: ch5 + N_HW]                            # Ch5: the hardware type, one-hot
    onehot[:] = 0.0
    onehot[np.arange(N), machines.hardware[j]] = 1.0          # (a type out of range raises, as np.eye's rows did)
    into = stage.rows_into_ops(rows)                          # (N, n_ops)
    per_type = np.zeros((N, N_OPS))
    for k, op in enumerate(stage.ops.tolist()):               # rows into each operator type, in pipeline order
        per_type[:, op] += into[:, k]                         # (np.add.at's order: the same sums)
    cbo = (into * CBO_COST_US[stage.ops]).sum(axis=1)
    # the CBO's estimate of the bytes that stateful operators (join, agg, sort) hold
    state_bytes = (into * CBO_STATE[stage.ops]).sum(axis=1) * stage.row_bytes
    X[:, aim: aim + N_OPS] = np.log10(1 + per_type)
    X[:, aim + N_OPS] = np.log10(cbo)
    X[:, aim + N_OPS + 1] = np.log10(1 + state_bytes)
    return X


@dataclass
class Traces:
    """Simulated runtime traces: features, the observed latency and cost, and the stage id."""

    X: np.ndarray
    latency: np.ndarray
    cost: np.ndarray
    stage_id: np.ndarray


def simulate_traces(rng: np.random.Generator, stages: int = 200, instances_per_stage: int = 60, machines: int = 100,
                    skew: float = 1.0, busy_fraction: float = 0.5, noise: float = 0.1, levels: int = 4,
                    grid: np.ndarray | None = None) -> Traces:
    """Run random stages on random machines with random resource plans and record the traces.

    Resource plans are drawn from the whole grid (unlike production, where HBO's few plans
    dominate: §6.1 notes Ch3's sparsity), so the model can later rank configurations in RAA.
    """
    grid = resource_grid() if grid is None else grid
    Xs, ys, cs, ids = [], [], [], []
    for s in range(stages):
        m = int(rng.integers(max(instances_per_stage // 4, 1), instances_per_stage * 2 + 1))
        stage = make_stage(rng, m, skew=skew)
        mach = make_machines(rng, machines, busy_fraction=busy_fraction, levels=levels)
        j = rng.integers(0, mach.n, size=m)
        theta = grid[rng.integers(0, len(grid), size=m)]
        lat = true_latency(stage, stage.rows, theta[:, 0], theta[:, 1], mach, j, rng=rng, noise=noise)
        Xs.append(features(stage, stage.rows, theta, mach, j))
        ys.append(lat)
        cs.append(cloud_cost(lat, theta))
        ids.append(np.full(m, s))
    return Traces(np.concatenate(Xs), np.concatenate(ys), np.concatenate(cs), np.concatenate(ids))


@dataclass
class LatencyModel:
    """A regressor of log latency over the chosen channels (default: all five plus AIM)."""

    channels: tuple[str, ...] = CHANNELS
    max_iter: int = 250
    random_state: int = 0
    regressor: HistGradientBoostingRegressor | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        bad = [c for c in self.channels if c not in CHANNELS]
        if bad:
            raise ValueError(f"channels={bad} are not channels: choose from {CHANNELS}")

    def _cols(self) -> np.ndarray:
        return np.concatenate([np.arange(N_FEATURES)[CHANNEL_COLUMNS[c]] for c in self.channels])

    def fit(self, traces: Traces) -> "LatencyModel":
        from sklearn.ensemble import HistGradientBoostingRegressor  # here: a kernel that fits no model never loads sklearn

        self.regressor = HistGradientBoostingRegressor(
            max_iter=self.max_iter, learning_rate=0.1, max_leaf_nodes=31, random_state=self.random_state
        )
        with _one_openmp_thread():
            self.regressor.fit(traces.X[:, self._cols()], np.log(traces.latency))
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        if self.regressor is None:
            raise ValueError("the model is not trained yet: call fit(traces) first")
        with _one_openmp_thread():
            return np.exp(self.regressor.predict(np.asarray(X)[:, self._cols()]))


def split_by_stage(traces: Traces, test_fraction: float, rng: np.random.Generator) -> tuple[Traces, Traces]:
    """Hold out whole stages, so no test instance shares a stage with a training instance."""
    ids = np.unique(traces.stage_id)
    test = rng.permutation(ids)[: max(1, int(round(test_fraction * ids.size)))]
    mask = np.isin(traces.stage_id, test)
    pick = lambda k: Traces(traces.X[k], traces.latency[k], traces.cost[k], traces.stage_id[k])  # noqa: E731
    return pick(~mask), pick(mask)


def evaluate(model: LatencyModel, traces: Traces) -> dict[str, float]:
    """The paper's five model metrics (§6.1), as fractions.

    WMAPE = Σ|ŷ−y| / Σy; MdErr and 95%Err are the median and 95th percentile of |ŷ−y|/y; Corr is
    Pearson's r between ŷ and y; GlbErr is the relative error of the total cloud cost.
    """
    y = traces.latency
    yhat = model.predict(traces.X)
    rel = np.abs(yhat - y) / y
    theta = traces.X[:, CHANNEL_COLUMNS["Ch3"]]
    cost_hat = cloud_cost(yhat, theta)
    return {
        "WMAPE": float(np.abs(yhat - y).sum() / y.sum()),
        "MdErr": float(np.median(rel)),
        "95%Err": float(np.percentile(rel, 95)),
        "Corr": float(np.corrcoef(yhat, y)[0, 1]),
        "GlbErr": float(abs(cost_hat.sum() - traces.cost.sum()) / traces.cost.sum()),
    }


ABLATIONS = {
    "Ch1_off": ("Ch2", "Ch3", "Ch4", "Ch5"),
    "Ch2_off": ("Ch1", "Ch3", "Ch4", "Ch5"),
    "Ch3_off": ("Ch1", "Ch2", "Ch4", "Ch5"),
    "Ch4_off": ("Ch1", "Ch2", "Ch3", "Ch5"),
    "Ch5_off": ("Ch1", "Ch2", "Ch3", "Ch4"),
    "all_on": ("Ch1", "Ch2", "Ch3", "Ch4", "Ch5"),
    "all_on+AIM": CHANNELS,
}


def channel_ablation(train: Traces, test: Traces, max_iter: int = 250) -> dict[str, dict[str, float]]:
    """Fig. 9(a): retrain with each channel left out, all five on, and all five plus AIM."""
    return {name: evaluate(LatencyModel(chs, max_iter=max_iter).fit(train), test) for name, chs in ABLATIONS.items()}
