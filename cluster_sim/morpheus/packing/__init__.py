"""Lab 03 (Morpheus §6-§7, §9): periodic reservations packed by LowCost, dynamic reprovisioning, and the
simulation of §9 in miniature.

The paper's contracts (Lab 02, :mod:`..slo`) become recurring reservations: §6 *packs* them so that the
cluster's peak stays low (LowCost), §7 *reprovisions* the runs that outgrow them (DRA), and §9 measures the
two on a cluster beside ad hoc jobs.

Pure layer (no Mesa), one job per module:

* :mod:`.jobs`: what LowCost packs and returns (``PeriodicJob``, ``AdHocJob``, ``Allocation``, ``Refusal``);
* :mod:`.stages`: LowCost's two building blocks (``stage_interval``, ``place_stage_gangs``) and the cost an
  allocation is ranked by;
* :mod:`.lowcost`: LowCost on one window (``lowcost_window`` and the plain ``lowcost_reference``), the
  greedy comparator and ``check_allocation``;
* :mod:`.plan`: ``ReservationPlan``, the cyclic plan the jobs are packed in;
* :mod:`.exact`: the min-peak MILP for tiny instances and Theorem 6.1's bound;
* :mod:`.reprovision`: §7's dynamic reprovisioning rule;
* :mod:`.lowcost_cases`: the exercise's seeded cases and checks.

The simulation: :mod:`.periodic` (templates and runs as the engine runs them), :mod:`.model` (the Mesa side:
reservation queues on the engine's CapacityScheduler, the ``Reprovisioner``, the ``TelemetryCollector`` and
the ``InferenceService``), :mod:`.simulation` (``MorpheusConfig`` -> ``MorpheusResult`` for the five arms,
``compare``, ``footprint``), :mod:`.rescue` (Fig. 12 as a constructed case, and the rescue rate over a pool).

The lab: :mod:`.config` (``MorpheusConfig``, ``TinyInstanceConfig``), :mod:`.experiments` (Fig. 6, 7, many
jobs packed, ad hoc jobs, the MILP comparison, Fig. 10's footprints), :mod:`.claims` (the claims table),
:mod:`.plots` and :mod:`.predictions`.

Example
-------
>>> w = fig7_example()                      # Fig. 7: stage 3 gets 16/38 of the 19 steps left
>>> w.stage_steps()[2]
(11, 18)
"""

from .claims import claims_table
from .config import ARMS, MorpheusConfig, TinyInstanceConfig
from .exact import ExactResult, compare_with_optimum, exact_min_peak, theorem_6_1_bound
from .experiments import adhoc_in_residual, competitive_table, fig7_example, fig10a, footprints, lcm_example, pack_many
from .jobs import AdHocJob, Allocation, PeriodicJob, Refusal
from .lowcost import WindowResult, check_allocation, end_points, greedy_window, lowcost_reference, lowcost_window
from .plan import ReservationPlan
from .plots import plot_comparison, plot_cycle, plot_fig7, plot_lcm, plot_packing, plot_residual
from .reprovision import Grant, ReprovisionRule, reprovision
from .rescue import RescueCase, rescue_case, rescue_rate
from .simulation import MorpheusResult, compare, footprint, run, simulate
from .stages import (
    alignment_penalty, alignment_weight, allocation_key, gang_pieces, place_stage_gangs, stage_interval,
)

__all__ = [
    "ARMS", "MorpheusConfig", "MorpheusResult", "TinyInstanceConfig", "run", "compare", "footprint", "simulate",
    "adhoc_in_residual", "claims_table", "competitive_table", "fig7_example", "fig10a", "footprints", "lcm_example",
    "pack_many", "RescueCase", "rescue_case", "rescue_rate",
    "plot_comparison", "plot_cycle", "plot_fig7", "plot_lcm", "plot_packing", "plot_residual",
    "AdHocJob", "Allocation", "ExactResult", "Grant", "PeriodicJob", "Refusal", "ReprovisionRule", "ReservationPlan",
    "WindowResult", "alignment_penalty", "alignment_weight", "allocation_key", "check_allocation",
    "compare_with_optimum", "end_points", "exact_min_peak", "gang_pieces", "greedy_window", "lowcost_reference",
    "lowcost_window", "place_stage_gangs", "reprovision", "stage_interval", "theorem_6_1_bound",
]
