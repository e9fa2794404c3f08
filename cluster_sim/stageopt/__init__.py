"""Fine-grained stage optimisation (Lyu et al., VLDB 2022): IPA placement and RAA resource plans.

The pure layer (no Mesa): :mod:`.placement` (Fuxi, IPA — Algorithm 1, the exact min-max MILP),
:mod:`.raa` (instance Pareto sets, RAA General — Algorithm 2, RAA Path — Algorithm 3, WUN).

>>> from cluster_sim.stageopt import ipa_placement, fuxi_placement, raa_general, raa_path, wun
"""

from .placement import (
    brute_force_min_max_placement,
    exact_min_max_placement,
    fuxi_placement,
    ipa_placement,
    is_column_ordered,
    slots_per_machine,
    stage_latency,
)
from .raa import brute_force_stage_pareto, pareto_indices, raa_general, raa_path, wun

__all__ = [
    "ipa_placement",
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
]
