"""The stage optimiser's resource plans: Lab 07's RAA on every stage of the day (pure: numpy, no Mesa).

With ``stageopt`` on (and ``raa``, the default), each stage of the day gets the resource plan Lab 07's
stage optimiser chooses for it, through Lab 07's own public functions: IPA places the stage's instances
(``StageOptimizer.ipa``, Algorithm 1 on the learned model), then RAA (``StageOptimizer.raa``: RAA Path,
Algorithm 3, and WUN's pick on its front) gives each instance its (cores, memory). The engine then runs
each vertex with that plan: it holds ``cores`` tokens (CPU units) and ``memory`` memory units, for its
duration times the model's predicted latency under its plan over that under θ0 on the machine IPA gave
it (Lab 07's noise-free case: the model is the truth).

Lab 07's inputs for one of the day's stages (:func:`stage_inputs`):

* the stage (a ``StageSpec``): operators, selectivities and row size drawn by Lab 07's ``make_stage``
  from the stream ``[seed, PLANS, job, stage]``; its instances' input rows proportional to the
  vertices' durations (``ROWS_PER_INSTANCE`` on average), so the longest vertex reads the most rows;
* the machines (``Machines``): the cluster's, idle when the plan is made (the optimiser plans a stage
  before it runs, as HBO does): the engine's hardware type of each machine, every state level 0, and
  ``cpu_per_machine`` cores and GB free (the engine's memory units are GB here);
* θ0 = (1 core, 1 GB): HBO's plan, the vertex every other arm runs (one token, one memory unit);
* the latency model: Lab 07's, trained on its simulated traces with ``ResourcePlanConfig.ci()``'s
  training fields (:func:`stage_optimizer`; trained once per process).

RAA's grid is Lab 07's with whole units only (:data:`GRID`: 1, 2 or 4 cores and GB), since the queue
layer grants whole tokens.

Example
-------
>>> from cluster_sim.capstone.config import CapstoneConfig
>>> from cluster_sim.capstone.day import make_day
>>> config = CapstoneConfig.ci().replace(horizon=120.0, stageopt=True)
>>> plans = resource_plans(config)
>>> spec = make_day(config).jobs[0]
>>> plan = plans.stages[spec.id, 0]
>>> plan.theta.shape == (spec.widths[0], 2) and set(plan.theta[:, 0]) <= {1, 2, 4}
True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..memo import ReadOnlyDict, remembered
from ..shaper.shaper import ResourceShaper
from ..stageopt.config import ResourcePlanConfig
from ..stageopt.experiments import trained_model
from ..stageopt.optimizer import StageOptimizer, StagePlan, run_batched, run_steps
from ..stageopt.workload import HARDWARE_SPEED, Machines, StageSpec, make_stage, resource_grid
from ..validate import finite_array, whole_number
from .config import CapstoneConfig
from .day import Day, JobSpec, day_config, make_day, shaper_trees
from .stored_plans import store_plans, stored_plans

__all__ = ["GRID", "PLANS", "ROWS_PER_INSTANCE", "THETA0", "ResourcePlans", "StageResources", "cluster_machines",
           "plan_stage", "plan_stage_steps", "read_only_plans", "resource_plans", "stage_inputs", "stage_optimizer"]

#: the random stream of a stage's operators (beside the day's streams 11-15)
PLANS = 16
#: mean input rows of a vertex (Lab 07's ``make_stage`` default)
ROWS_PER_INSTANCE = 2e6
#: HBO's plan: what a vertex holds with the resource plans off (one token, one memory unit)
THETA0 = (1.0, 1.0)
#: RAA's resource configurations: Lab 07's grid in whole cores and GB (the queue layer grants whole tokens)
GRID = resource_grid(cores=(1.0, 2.0, 4.0), memory=(1.0, 2.0, 4.0))
#: stages planned together (one model call a round for all of them): bounds the feature matrices
#: (at most about 9 rows per vertex, 30 features) to tens of MB at paper
STAGES_PER_BATCH = 1000
#: the latency model's training: Lab 07's ``ci`` fields, seed 0 (the cluster's model, the same for every day)
MODEL_CONFIG = ResourcePlanConfig.ci()


def stage_optimizer() -> StageOptimizer:
    """Lab 07's stage optimiser over its trained latency model, with θ0 = :data:`THETA0` and RAA's
    grid :data:`GRID` (RAA Path, WUN's equal weights, clustering on: Lab 07's defaults)."""
    c = MODEL_CONFIG
    model = trained_model(c.seed, c.train_stages, c.levels, c.trace_noise, c.max_iter)[0]
    return StageOptimizer(model, theta0=THETA0, alpha=c.alpha, grid=GRID)


def cluster_machines(config: CapstoneConfig) -> Machines:
    """The cluster's machines as Lab 07 sees them when it plans a stage (module docstring)."""
    n = config.machines
    hardware = np.arange(n) % config.hardware_types % len(HARDWARE_SPEED)  # the engine's type of machine j
    zeros = np.zeros(n, dtype=np.int64)
    free = np.tile([float(config.cpu_per_machine), float(config.cpu_per_machine)], (n, 1))
    return Machines(hardware, zeros, zeros.copy(), np.zeros(n, dtype=bool), free, MODEL_CONFIG.levels)


def stage_inputs(config: CapstoneConfig, job: int, stage: int, durations) -> StageSpec:
    """Lab 07's stage for stage ``stage`` of job ``job`` whose vertices last ``durations`` (s, speed 1)."""
    job = whole_number(job, "job", lo=0)
    stage = whole_number(stage, "stage", lo=0)
    d = finite_array(np.asarray(durations, dtype=float), "durations", nonneg=True, what="vertex durations (s)")
    if d.ndim != 1 or d.size == 0 or (d <= 0).any():
        raise ValueError(f"durations={d.tolist()!r} is not allowed: need one positive duration per vertex, at least one")
    spec = make_stage(np.random.default_rng([config.seed, PLANS, job, stage]), d.size)
    rows = np.maximum(np.round(ROWS_PER_INSTANCE * d / d.mean()), 1.0)
    return dataclasses.replace(spec, rows=rows)


@dataclass(frozen=True, eq=False)
class StageResources:
    """One stage's plans (Lab 07's) and what the engine runs: each vertex's (cores, memory) and duration."""

    ipa: StagePlan  # IPA's placement with θ0 for every instance
    raa: StagePlan  # RAA's resource plan on IPA's placement
    durations: np.ndarray  # (m,) the vertices' durations under RAA's plan (s at speed 1)

    @property
    def theta(self) -> np.ndarray:
        """(m, 2) whole cores (tokens) and memory units of every vertex."""
        return self.raa.theta.astype(np.int64)


def plan_stage(so: StageOptimizer, stage: StageSpec, machines: Machines, durations) -> StageResources:
    """Lab 07's IPA then RAA on ``stage``; the vertices' ``durations`` scaled by the model's latency
    under RAA's plan over that under θ0, instance by instance, on the machine IPA placed it."""
    return run_steps(so.model, plan_stage_steps(so, stage, machines, durations))


def plan_stage_steps(so: StageOptimizer, stage: StageSpec, machines: Machines, durations):
    """:func:`plan_stage` as steps (Lab 07's ``ipa_steps`` then ``raa_with_front_steps``), so
    :func:`~cluster_sim.stageopt.optimizer.run_batched` plans many stages with one model call a round."""
    d = np.asarray(durations, dtype=float)
    if d.shape != (stage.instances,):
        raise ValueError(f"durations has shape {d.shape}: need one per instance of the stage ({stage.instances})")
    ipa = yield from so.ipa_steps(stage, machines)
    raa = (yield from so.raa_with_front_steps(stage, machines, ipa))[0]
    return StageResources(ipa, raa, d * raa.predicted_latency / ipa.predicted_latency)


@dataclass(frozen=True, eq=False)
class ResourcePlans:
    """Every stage's plan, and the tokens each job asks for under them (read-only: :func:`read_only_plans`)."""

    stages: dict  # (job id, stage) -> StageResources
    tokens: dict  # job id -> tokens its user asks for: the day's rule in tokens (at least its largest vertex)

    def widths(self, job: int) -> tuple[int, ...]:
        """The job's stages in tokens: the sum of its vertices' cores (the shaper's graph under the plans)."""
        out, s = [], 0
        while (job, s) in self.stages:
            out.append(int(self.stages[job, s].theta[:, 0].sum()))
            s += 1
        return tuple(out)


def job_tokens(config: CapstoneConfig, spec: JobSpec, widths: tuple[int, ...], largest: int) -> int:
    """The day's request rule in tokens: ``over_allocation`` x the job's peak (its stage graph weighted by
    each stage's tokens), at most a quarter of the cluster, and never less than its largest vertex."""
    if len(widths) != len(spec.widths):  # spec.graph's check
        raise ValueError(f"widths={widths!r} is not allowed for job {spec.id}: need one per stage ({len(spec.widths)})")
    # the shaper's trees of the job's graph in tokens, remembered per graph (day.shaper_trees: the same trees
    # ResourceShaper().peak(spec.graph(widths), ...) makes): 2,800 distinct graphs among a paper day's 4,858
    # jobs, and a run with the shaper on reads the same trees again
    peak = ResourceShaper().peak(list(shaper_trees(tuple(widths), spec.parents)), {})
    ask = min(max(1, config.tokens // 4), max(1, math.ceil(config.over_allocation * peak)))
    return int(max(ask, largest))


def resource_plans(config: CapstoneConfig) -> ResourcePlans:
    """The resource plans of ``config``'s day: remembered and shared read-only by every arm and run of the day in
    this process, and stored on disk for the notebook's other processes (:mod:`.stored_plans`)."""
    # keyed by the day's config, not read off a remembered day (a deep copy of the whole day for its config)
    return _resource_plans(day_config(config))


def read_only_plans(stages: dict, tokens: dict) -> ResourcePlans:
    """The plans every run of the day shares (none can change them): every array read-only, the mappings
    :class:`~cluster_sim.memo.ReadOnlyDict`."""
    for plan in stages.values():
        for array in (plan.ipa.assignment, plan.ipa.theta, plan.ipa.predicted_latency, plan.raa.assignment,
                      plan.raa.theta, plan.raa.predicted_latency, plan.durations):
            array.setflags(write=False)
    return ResourcePlans(ReadOnlyDict(stages), ReadOnlyDict(tokens))


@remembered(maxsize=8, read_only=True)
def _resource_plans(config: CapstoneConfig) -> ResourcePlans:
    """Read from the sweep cache's store when another process of the notebook planned this day (the kernel and a
    Dask worker both need a seed's plans), else planned here and stored (:mod:`.stored_plans`). Shared read-only
    by every run of the day in this process: a paper day's plans took 2 s to copy at every run."""
    plans = stored_plans(config, read_only_plans)
    if plans is None:
        plans = _plan_day(config)
        store_plans(config, plans)
    return plans


def _plan_day(config: CapstoneConfig) -> ResourcePlans:
    day: Day = make_day(config)
    so, machines = stage_optimizer(), cluster_machines(config)
    keys = [(spec.id, s) for spec in day.jobs for s in range(len(spec.durations))]
    durations = {(spec.id, s): d for spec in day.jobs for s, d in enumerate(spec.durations)}
    stages = {}
    for lo in range(0, len(keys), STAGES_PER_BATCH):  # the day's stages in batches: one model call a round each
        batch = keys[lo: lo + STAGES_PER_BATCH]
        steps = [plan_stage_steps(so, stage_inputs(config, job, s, durations[job, s]), machines, durations[job, s])
                 for job, s in batch]
        stages.update(zip(batch, run_batched(so.model, steps)))
    tokens = {}
    for spec in day.jobs:
        widths = tuple(int(stages[spec.id, s].theta[:, 0].sum()) for s in range(len(spec.durations)))
        largest = max(int(stages[spec.id, s].theta[:, 0].max()) for s in range(len(spec.durations)))
        tokens[spec.id] = job_tokens(config, spec, widths, largest)
    return read_only_plans(stages, tokens)
