"""Labs 06–07: one config per experiment, with presets and an estimate of the work a run creates.

* :class:`PlacementConfig` (lab 06, Expt 1, 2 and 6): the latency model and Fuxi / IPA placement.
* :class:`ResourcePlanConfig` (lab 07, Expt 7–10): IPA+RAA resource plans, the MOO baselines and
  the model-accuracy study.

Both spend almost all their time asking the learned model for latencies, so the work of a run is
counted in **model predictions** (one row through the gradient-boosting model), estimated before
anything runs. A config estimated above its cap (``max_predictions``) is refused when it is built;
a panel refuses a change whose estimate is far above a second.

>>> PlacementConfig.default().work().seconds < 2
True
>>> PlacementConfig(instances=20000, machines=2500, alpha=8, stages=200)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: PlacementConfig would create about 652,095,895 model predictions (...), more than max_predictions=50,000,000 (...): lower stages, instances, machines, max_iter; or raise max_predictions on purpose
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..config import Config, Work, field_of, param, seed_param

__all__ = ["GRIDS", "PlacementConfig", "ResourcePlanConfig", "machine_groups_expected", "SECONDS_PER_PREDICTION"]

GRIDS = {
    "narrow": ((1.0, 2.0, 4.0), (2.0, 4.0, 8.0)),
    "default": ((0.5, 1.0, 2.0, 4.0, 8.0), (1.0, 2.0, 4.0, 8.0, 16.0)),
    "wide": ((0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0), (1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0)),
}

#: wall time of one model prediction (one row, 200 trees, one thread) on the reference 2-core
#: machine, measured with bench/panels.py and run_placement at 300-5000 instances: 6.8-8.6 us
SECONDS_PER_PREDICTION = 8e-6
#: everything else per latency-matrix cell of IPA(Org) (sorting each row of the m x n matrix,
#: expanding the machine groups to machines, scanning): measured ~15 ns at 5000 x 5000
SECONDS_PER_CELL = 15e-9
#: hardware types x IO states of :func:`.workload.make_machines` (the levels come from the config)
_HARDWARE_TYPES, _IO_STATES = 5, 2


def machine_groups_expected(machines: int, levels: int) -> float:
    """Expected number of distinct (hardware, CPU level, memory level, IO) machine groups.

    The model is asked once per group, not per machine (:func:`.optimizer.latency_matrix`), so a
    stage costs ``instances x groups`` predictions. With K = 5 x levels^2 x 2 possible states,
    n machines fill about K (1 - exp(-n/K)) of them (uniform draws: a slight overestimate).
    """
    k = _HARDWARE_TYPES * levels * levels * _IO_STATES
    return min(machines, k * (1 - math.exp(-machines / k)))


def _need_alpha(instances: int, machines: int) -> int:
    return -(-instances // machines)


@dataclass(frozen=True)
class PlacementConfig(Config):
    """Lab 06: placement plans (§5.2, Expt 6) over a learned latency model."""

    seed: int = seed_param(widget=False)
    instances: int = param(300, lo=1, hi=20000, step=10, slider=(10, 400), label='Instances per stage m',
                           doc="instances per stage (m)")
    machines: int = param(120, lo=1, hi=5000, step=10, slider=(10, 200), label='Machines offered n',
                          doc="machines offered to the stage (n)")
    stages: int = param(3, lo=1, hi=200, slider=(1, 4), doc="stages averaged over")
    skew: float = param(1.0, lo=0.0, hi=2.5, step=0.1, label='Input skew σ', doc="lognormal sigma of input rows per instance")
    busy_fraction: float = param(0.5, lo=0.0, hi=1.0, step=0.05, label='Busy machines', unit='share', doc="machine-state mix: share of busy machines")
    alpha: int = param(4, lo=1, hi=64, slider=(1, 16), label='Diversity cap α', unit='instances per machine', doc="diversity cap α: most instances of the stage per machine")
    cores0: float = param(2.0, lo=0.5, hi=8.0, step=0.5, label='HBO plan Θ0: cores', doc="HBO resource plan Θ0: cores")
    memory0: float = param(4.0, lo=1.0, hi=16.0, step=1.0, label='HBO plan Θ0: memory', unit='GB', doc="HBO resource plan Θ0: memory (GB)")
    levels: int = param(4, lo=2, hi=10, doc="discretisation degree of CPU/memory states (DD)", widget=False)
    train_stages: int = param(600, lo=20, hi=5000, doc="stages in the simulated training traces", widget=False)
    trace_noise: float = param(0.1, lo=0.0, hi=0.5, doc="lognormal run-to-run noise in the traces", widget=False)
    max_iter: int = param(200, lo=10, hi=2000, doc="boosting iterations of the latency model", widget=False)
    max_predictions: int = param(50_000_000, lo=1, hi=10**10, widget=False,
                                 doc="refuse a config estimated to need more model predictions than this "
                                     "(about 400 s); raise it on purpose")

    WORK_CAP = "max_predictions"

    def validate(self) -> None:
        need = _need_alpha(self.instances, self.machines)
        if self.alpha < need:
            raise ValueError(
                f"PlacementConfig.alpha={self.alpha} is too small for instances={self.instances} on "
                f"machines={self.machines}: the paper requires alpha >= ceil(m/n) = {need}"
            )

    def work(self) -> Work:
        """Model predictions of :func:`.experiments.run_placement` (training excluded: it is cached
        per process, and a panel never retrains).

        Per stage: Fuxi, IPA(Org) and IPA(Cluster) each predict their m instances; IPA(Org) also
        builds the m x groups latency matrix, IPA(Cluster) a (clusters x groups) one, counted as 3
        clusters (the density clustering finds 1-3 at these sizes). Seconds add the m x n cells
        IPA(Org) sorts.
        """
        g = machine_groups_expected(self.machines, self.levels)
        per_stage = self.instances * (g + 3) + 3 * g
        predictions = self.stages * per_stage
        trees = self.max_iter / 200
        cells = self.stages * self.instances * self.machines
        seconds = 0.05 + predictions * SECONDS_PER_PREDICTION * trees + cells * SECONDS_PER_CELL
        return Work(predictions, "model predictions",
                    f"{self.stages} stages x ({self.instances} instances x ({g:.0f} expected machine groups + 3) "
                    f"+ 3 x {g:.0f})",
                    up=("stages", "instances", "machines", "max_iter"), down=(), seconds=seconds)

    @classmethod
    def ci(cls):
        return cls(instances=150, machines=60, stages=3, train_stages=250, max_iter=120)

    @classmethod
    def paper(cls):
        return cls(instances=2000, machines=800, stages=20, train_stages=2000, max_iter=300)


@dataclass(frozen=True)
class ResourcePlanConfig(Config):
    """Lab 07: resource plans with RAA (§5.3, Expt 7–10)."""

    # Lab 06's fields, inherited: only what differs is restated
    seed: int = field_of(PlacementConfig, "seed")
    instances: int = field_of(PlacementConfig, "instances", 200)
    machines: int = field_of(PlacementConfig, "machines", 80)
    stages: int = field_of(PlacementConfig, "stages", 8, hi=500, slider=(1, 12), doc="stages in the net-benefit workload")
    skew: float = field_of(PlacementConfig, "skew")
    busy_fraction: float = field_of(PlacementConfig, "busy_fraction")
    alpha: int = field_of(PlacementConfig, "alpha")
    grid: str = param("default", choices=tuple(GRIDS), label="RAA's resource grid",
                      doc="resource configurations RAA may choose")
    latency_weight: float = param(0.5, lo=0.0, hi=1.0, step=0.05, label='WUN latency weight',
                                  doc="WUN weight on latency (cost gets 1 − it)")
    noise: float = param(0.15, lo=0.0, hi=0.33, step=0.01, label='Latency noise σ/μ',
                         doc="σ/μ of actual latency around the prediction (noisy case)")
    study_stages: int = param(8, lo=1, hi=100, doc="stages in the Expt 7 (RAA choices) and Expt 10 (model accuracy) "
                                                  "studies", widget=False)
    moo_instances: int = param(16, lo=2, hi=200, doc="instances per stage in the MOO-baseline study", widget=False)
    moo_machines: int = param(10, lo=2, hi=100, doc="machines in the MOO-baseline study", widget=False)
    moo_stages: int = param(3, lo=1, hi=50, doc="stages in the MOO-baseline study", widget=False)
    ws_samples: int = param(2000, lo=10, hi=200000, doc="WS(Sample): random plans per stage", widget=False)
    evo_generations: int = param(30, lo=1, hi=1000, doc="NSGA-II generations (population 40)", widget=False)
    levels: int = field_of(PlacementConfig, "levels")
    train_stages: int = field_of(PlacementConfig, "train_stages")
    trace_noise: float = field_of(PlacementConfig, "trace_noise")
    max_iter: int = field_of(PlacementConfig, "max_iter")
    max_predictions: int = field_of(PlacementConfig, "max_predictions")

    WORK_CAP = "max_predictions"

    def validate(self) -> None:
        need = _need_alpha(self.instances, self.machines)
        if self.alpha < need:
            raise ValueError(f"ResourcePlanConfig.alpha={self.alpha} is too small for instances={self.instances} on "
                             f"machines={self.machines}: the paper requires alpha >= ceil(m/n) = {need}")

    def grid_size(self) -> int:
        cores, memory = GRIDS[self.grid]
        return len(cores) * len(memory)

    def work(self) -> Work:
        """Model predictions of :func:`.experiments.run_resource_plans` (training excluded: cached).

        Per stage: Fuxi and IPA(Cluster) predict their m instances, IPA(Cluster) a clusters x groups
        matrix (counted as m), RAA one row per (unit, configuration) — at most m x r for r grid
        configurations — and its plan's m instances; stage 0 also predicts every instance under
        every configuration (the front drawn per instance). An upper bound: clustering usually
        leaves far fewer units than instances.
        """
        r = self.grid_size()
        predictions = self.stages * self.instances * (4 + r) + self.instances * r
        # the bound overcounts RAA's units, which the Pareto filtering per unit pays back: measured
        # 8-20 us per counted prediction at 120-5000 instances, plus ~30 ms of Python per stage
        seconds = 0.05 + 0.03 * self.stages + predictions * SECONDS_PER_PREDICTION * (self.max_iter / 200)
        return Work(predictions, "model predictions",
                    f"{self.stages} stages x {self.instances} instances x (4 + {r} configurations), "
                    f"+ {self.instances} x {r} for stage 0's front",
                    up=("stages", "instances", "grid", "max_iter"), down=(), seconds=seconds)

    @classmethod
    def ci(cls):
        return cls(instances=120, machines=50, stages=4, study_stages=6, moo_instances=12, moo_machines=8,
                   moo_stages=2, ws_samples=1000, evo_generations=15, train_stages=250, max_iter=120)

    @classmethod
    def paper(cls):
        return cls(instances=1000, machines=400, stages=100, study_stages=20, moo_instances=40, moo_machines=20,
                   moo_stages=10, ws_samples=20000, evo_generations=100, train_stages=2000, max_iter=300)
