"""Fine-grained stage optimisation (Lyu et al., VLDB 2022): IPA placement and RAA resource plans.

The pure layer (no Mesa): :mod:`.placement` (Fuxi, IPA — Algorithm 1, the exact min-max MILP),
:mod:`.raa` (instance Pareto sets, RAA General — Algorithm 2, RAA Path — Algorithm 3, WUN),
:mod:`.clustering` (Algorithm 4), :mod:`.latency_model` (§4), :mod:`.optimizer` (the stage
optimiser over the learned model), :mod:`.baselines` (WS(Sample), NSGA-II).

The labs: :mod:`.config` (``PlacementConfig``, ``ResourcePlanConfig`` and their presets),
:mod:`.experiments` (``run_*``: Expts 1-2, 6-10 and Theorem 5.1), :mod:`.plots` (``plot_*``),
:mod:`.checks` (the exercise checks), :mod:`.agents` (IPA and Fuxi as engine schedulers) and
:mod:`.claims` (each lab's claims, measured over a pool of seeds: ``claims_table(config)``).

>>> from cluster_sim.stageopt import ipa_placement, fuxi_placement, raa_general, raa_path, wun
"""

from .config import PlacementConfig, ResourcePlanConfig
from .experiments import (
    optimality_study,
    run_baselines,
    run_model_accuracy,
    run_model_study,
    run_placement,
    run_raa_choices,
    run_resource_plans,
)
from .placement import (
    brute_force_min_max_placement,
    exact_min_max_placement,
    fuxi_placement,
    ipa_decisions,
    ipa_placement,
    is_column_ordered,
    slots_per_machine,
    stage_latency,
)
from .raa import brute_force_stage_pareto, pareto_indices, raa_general, raa_path, wun
from ..lazy import lazy

# the figures import matplotlib (about 0.5 s of CPU a process): read from .plots when first used, so an exercise
# that draws nothing (each nbgrader autograde is a fresh kernel) does not load it (cluster_sim/lazy.py)
__getattr__, __dir__ = lazy(__name__, f"{__name__}.plots", ("plot_channel_ablation", "plot_model_accuracy",
                                                         "plot_placement", "plot_resource_plans"))

__all__ = [
    "ipa_placement",
    "ipa_decisions",
    "fuxi_placement",
    "exact_min_max_placement",
    "brute_force_min_max_placement",
    "is_column_ordered",
    "slots_per_machine",
    "stage_latency",
    "raa_path",
    "raa_general",
    "brute_force_stage_pareto",
    "pareto_indices",
    "wun",
    "PlacementConfig",
    "ResourcePlanConfig",
    "run_placement",
    "run_model_study",
    "optimality_study",
    "run_resource_plans",
    "run_raa_choices",
    "run_baselines",
    "run_model_accuracy",
    "plot_placement",
    "plot_channel_ablation",
    "plot_resource_plans",
    "plot_model_accuracy",
]
