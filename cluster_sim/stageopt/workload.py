"""A synthetic MaxCompute-like workload and its hidden ground-truth instance latency.

Stages are pipelines of operators (with selectivities) run by many parallel instances whose input
rows are heavy-tailed (a lognormal body plus a few hot partitions). Machines have a hardware type
and a discretised system state (CPU utilisation level, memory utilisation level, IO busy/idle).
A resource configuration θ is (cores, memory GB) from a grid.

:func:`true_latency` is the *hidden* ground truth: the optimiser never calls it; it only sees the
learned model of :mod:`.latency_model`. Its shape follows what §3.1 and §4 say matters: work grows
with input rows and the operator mix, cores help with diminishing returns (a serial fraction),
memory below the instance's working set spills (a penalty growing with the shortfall), a busy
CPU slows everything, IO-heavy operators slow down on an IO-busy machine, and hardware types
differ in speed. Noise is multiplicative lognormal.

>>> rng = np.random.default_rng(0)
>>> stage = make_stage(rng, instances=4)
>>> machines = make_machines(rng, 3)
>>> lat = true_latency(stage, stage.rows, 2.0, 4.0, machines, np.array([0, 1, 2, 0]))
>>> lat.shape
(4,)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OPERATORS = ("TableScan", "Filter", "Project", "HashJoin", "MergeJoin", "HashAgg", "Sort", "StreamLineWrite")
#: true CPU cost per input row of each operator, microseconds (hidden from the model)
OP_COST_US = np.array([0.9, 0.25, 0.15, 1.6, 1.3, 1.1, 2.2, 0.8])
#: the CBO's cost model: the true costs seen through a fixed distortion (it is only an estimate)
CBO_COST_US = OP_COST_US * np.array([0.8, 1.2, 1.0, 0.7, 1.3, 0.9, 1.1, 1.25])
#: operators that read or write through the IO subsystem
OP_IO = np.array([1, 0, 0, 0, 1, 0, 0, 1], dtype=bool)
#: working-set bytes per input byte kept in memory by each operator (joins, aggs, sorts hold state)
OP_MEM = np.array([0.0, 0.0, 0.0, 1.2, 0.6, 0.8, 1.5, 0.0])
#: relative speed of each hardware type (hidden); the paper saw 5 types in workload A
HARDWARE_SPEED = np.array([1.0, 1.2, 0.8, 1.35, 0.9])

SERIAL_FRACTION = 0.12      # Amdahl: cores beyond a few bring little
STARTUP_S = 0.4             # container start and plan deserialisation
IO_MB_PER_S = 180.0         # per-instance IO bandwidth on an idle disk
IO_BUSY_SLOWDOWN = 2.2      # the same disk when another tenant keeps it busy
SPILL_PENALTY = 1.6         # extra time per doubling of the memory shortfall


@dataclass(frozen=True)
class StageSpec:
    """One stage: an operator pipeline and its instances' input rows.

    ``ops`` holds operator ids (indices into :data:`OPERATORS`) in pipeline order,
    ``selectivity`` the output/input row ratio of each, ``row_bytes`` the average input row size,
    ``rows`` the (m,) input rows of every instance (the partition of the stage input).
    """

    ops: np.ndarray
    selectivity: np.ndarray
    row_bytes: float
    rows: np.ndarray

    @property
    def instances(self) -> int:
        return int(self.rows.size)

    @property
    def cardinality(self) -> float:
        return float(self.rows.sum())

    def rows_into_ops(self, rows) -> np.ndarray:
        """Rows entering each operator for instances with ``rows`` input rows: (len(rows), n_ops).

        Assumes the stage's selectivities hold in every instance — the AIM assumption of §4.1.
        """
        cum = np.concatenate([[1.0], np.cumprod(self.selectivity)[:-1]])
        return np.asarray(rows, dtype=float)[:, None] * cum[None, :]


@dataclass(frozen=True)
class Machines:
    """n machines: hardware type, discretised state, and free cores / memory (GB)."""

    hardware: np.ndarray     # (n,) int in [0, len(HARDWARE_SPEED))
    cpu_level: np.ndarray    # (n,) int in [0, levels)
    mem_level: np.ndarray    # (n,) int in [0, levels)
    io_busy: np.ndarray      # (n,) bool
    free: np.ndarray         # (n, 2) free (cores, memory GB)
    levels: int

    @property
    def n(self) -> int:
        return int(self.hardware.size)

    @property
    def cpu_util(self) -> np.ndarray:
        return (self.cpu_level + 0.5) / self.levels

    @property
    def mem_util(self) -> np.ndarray:
        return (self.mem_level + 0.5) / self.levels

    def state_keys(self) -> np.ndarray:
        """(n, 4) integer features of Ch4 and Ch5: what the machine clustering groups on."""
        # np.stack, not np.c_: the same array at a fifth of the cost (the optimiser asks twice a stage)
        return np.stack([self.hardware, self.cpu_level, self.mem_level, self.io_busy.astype(int)], axis=1)


def make_stage(rng: np.random.Generator, instances: int, skew: float = 1.0, hot_fraction: float = 0.03,
               rows_per_instance: float = 2e6) -> StageSpec:
    """A random stage with ``instances`` instances.

    ``skew`` is the lognormal sigma of the input rows per instance; ``hot_fraction`` of the
    instances are hot partitions holding 4-12x the rows (the multi-modal inputs that the 1-D
    density clustering of IPA separates).
    """
    if instances < 1:
        raise ValueError(f"instances={instances} must be >= 1")
    n_mid = int(rng.integers(0, 5))
    mid = rng.choice(np.arange(1, 7), size=n_mid)
    ops = np.concatenate([[0], mid, [7]]).astype(np.int64)
    sel = np.ones(ops.size)
    for k, op in enumerate(ops):
        if op == 1:
            sel[k] = rng.uniform(0.1, 0.9)
        elif op in (3, 4):
            sel[k] = rng.uniform(0.6, 1.8)
        elif op == 5:
            sel[k] = rng.uniform(0.05, 0.4)
    row_bytes = float(rng.uniform(60, 400))
    base = rows_per_instance * rng.lognormal(0.0, 0.5)
    rows = base * rng.lognormal(0.0, skew, size=instances)
    hot = rng.random(instances) < hot_fraction
    rows[hot] *= rng.uniform(4, 12, size=int(hot.sum()))
    rows = np.maximum(np.round(rows), 1.0)
    return StageSpec(ops=ops, selectivity=sel, row_bytes=row_bytes, rows=rows)


def make_machines(rng: np.random.Generator, n: int, busy_fraction: float = 0.5, hardware_types: int = 5,
                  levels: int = 4, cores: float = 32.0, memory: float = 128.0) -> Machines:
    """``n`` machines; ``busy_fraction`` of them are busy (high CPU level, often IO busy).

    Free resources shrink with the utilisation level, so busy machines also take fewer instances.
    """
    if n < 1:
        raise ValueError(f"machines={n} must be >= 1")
    if not 1 <= hardware_types <= len(HARDWARE_SPEED):
        raise ValueError(f"hardware_types={hardware_types} must be in [1, {len(HARDWARE_SPEED)}]")
    busy = rng.random(n) < busy_fraction
    half = max(levels // 2, 1)
    cpu = np.where(busy, rng.integers(half, levels, size=n), rng.integers(0, half, size=n))
    mem = rng.integers(0, levels, size=n)
    io = np.where(busy, rng.random(n) < 0.7, rng.random(n) < 0.15)
    hw = rng.integers(0, hardware_types, size=n)
    util_c = (cpu + 0.5) / levels
    util_m = (mem + 0.5) / levels
    free = np.c_[np.floor(cores * (1 - util_c)), np.floor(memory * (1 - util_m))]
    return Machines(hw, cpu, mem, io.astype(bool), free, levels)


def memory_need_gb(stage: StageSpec, rows) -> np.ndarray:
    """Working-set memory (GB) of instances with ``rows`` input rows (hidden from the model)."""
    into = stage.rows_into_ops(rows)
    return (into * OP_MEM[stage.ops]).sum(axis=1) * stage.row_bytes / 1e9 + 0.3


def true_latency(stage: StageSpec, rows, cores, memory, machines: Machines, machine_idx,
                 rng: np.random.Generator | None = None, noise: float = 0.0) -> np.ndarray:
    """Hidden ground-truth latency (s) of instances with ``rows`` on machines ``machine_idx``.

    All arguments broadcast: ``rows``, ``cores``, ``memory`` and ``machine_idx`` may be scalars or
    arrays of one common shape. ``noise`` is the sigma of a multiplicative lognormal term.
    """
    rows = np.asarray(rows, dtype=float)
    cores = np.asarray(cores, dtype=float)
    memory = np.asarray(memory, dtype=float)
    j = np.asarray(machine_idx)
    shape = np.broadcast_shapes(rows.shape, cores.shape, memory.shape, j.shape)
    rows, cores, memory, j = (np.broadcast_to(a, shape) for a in (rows, cores, memory, j))
    flat = rows.reshape(-1)
    into = stage.rows_into_ops(flat)
    cpu_us = (into * OP_COST_US[stage.ops]).sum(axis=1).reshape(shape)
    io_rows = (into * OP_IO[stage.ops]).sum(axis=1).reshape(shape)
    speed = HARDWARE_SPEED[machines.hardware[j]]
    contention = 1.0 + 1.3 * machines.cpu_util[j] ** 2 + 0.25 * machines.mem_util[j]
    cpu_s = cpu_us * 1e-6 / speed * (SERIAL_FRACTION + (1 - SERIAL_FRACTION) / cores) * contention
    io_s = io_rows * stage.row_bytes / (IO_MB_PER_S * 1e6) * np.where(machines.io_busy[j], IO_BUSY_SLOWDOWN, 1.0)
    need = memory_need_gb(stage, flat).reshape(shape)
    spill = 1.0 + SPILL_PENALTY * np.log2(np.maximum(need / memory, 1.0))
    lat = STARTUP_S + (cpu_s + io_s) * spill
    if noise > 0:
        if rng is None:
            raise ValueError("noise > 0 needs an rng")
        lat = lat * rng.lognormal(0.0, noise, size=shape)
    return lat


def resource_grid(cores=(0.5, 1.0, 2.0, 4.0, 8.0), memory=(1.0, 2.0, 4.0, 8.0, 16.0)) -> np.ndarray:
    """All (cores, memory GB) resource configurations as a (r, 2) array."""
    c, m = np.meshgrid(np.asarray(cores, float), np.asarray(memory, float), indexing="ij")
    return np.c_[c.ravel(), m.ravel()]


#: price weights w of the cloud cost w·θ × latency: per core-second and per GB-second
COST_WEIGHTS = np.array([1.0, 0.25])


def cloud_cost(latency, theta, w=COST_WEIGHTS) -> np.ndarray:
    """Cost of running for ``latency`` seconds with resources ``theta`` (…, 2): latency × w·θ."""
    return np.asarray(latency) * (np.asarray(theta, dtype=float) @ np.asarray(w, dtype=float))
