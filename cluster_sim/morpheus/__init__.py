"""Morpheus (Jyothi et al., OSDI'16): automated SLOs and job resource models for periodic jobs.

Pure layer (no Mesa), one job per module:

* :mod:`.history`: a seeded synthetic history (templates, the four times of Fig. 4, consumers,
  user provisioning, per-minute skylines, drift and input delays);
* :mod:`.inference`: §4, ``detect_periodic`` and ``infer_slo`` (a_j, d_j, slack, actionable);
* :mod:`.penalty`: J(s) in closed form (over-allocation, the debt recursion, epsilon);
* :mod:`.lp`, :mod:`.lp_compact`: §5's LP, cast with the debt recursion and in a compact form;
* :mod:`.skyline`: ``fit_skyline`` (R*, the two-solve beta scheme) and the baselines;
* :mod:`.contract`: period, a_j, d_j and R* per periodic job;
* :mod:`.fleet`: provisioning ratios, worst-case SLO misses, slack, R* over time, the §9.1 proxy;
* :mod:`.telemetry`: ``TelemetryLog``, what is recorded about each run and the contracts inferred
  from it (what an agent recording runs on the cluster fills and refits from);
* :mod:`.penalty_cases`: the J(s) exercise's seeded cases and checks (they name the misconception);
* :mod:`.lowcost`, :mod:`.plan`: §6, periodic reservations packed by LowCost in a cyclic
  ``ReservationPlan`` (and the greedy comparator); :mod:`.exact`: the min-peak MILP for tiny
  instances and Theorem 6.1's bound; :mod:`.reprovision`: §7's dynamic reprovisioning rule;
  :mod:`.packing_cases`: the packing exercise's seeded cases and checks.

Lab 03 (§6-§7, §9): :mod:`.periodic` (templates and runs as the engine runs them), :mod:`.model` (the
Mesa side: reservation queues on the engine's CapacityScheduler, the ``Reprovisioner``, the
``TelemetryCollector`` and the ``InferenceService``), :mod:`.simulation` (``MorpheusConfig`` ->
``MorpheusResult`` for the five arms, ``compare``, ``footprint``), :mod:`.rescue` (Fig. 12 as a constructed
case, and the rescue rate over a pool), :mod:`.experiments_packing` (Fig. 6,
7, many jobs packed, ad hoc jobs, the MILP comparison, the paper-vs-ours table) and
:mod:`.plots_packing`. :func:`run` takes either lab's config.

Lab 02's experiments: :mod:`.config` (``SLOConfig`` and its presets), :mod:`.experiments`
(``run(config) -> SLOResult``, the sweeps over alpha, runs of history and seeds, the drift experiment,
the lazy example, the paper-vs-ours table) and :mod:`.plots` (Fig. 2a, 3, 4, 5, 9a-c, R* after drift).

Example
-------
>>> runs = [[4, 4, 1], [4, 2, 1], [3, 4, 2]]
>>> fit = fit_skyline(runs, alpha=0.5)
>>> j = penalty(fit.skyline, runs, alpha=0.5, beta=fit.beta)   # J(R*) recomputed in closed form
>>> abs(j.objective - fit.objective) < 1e-7
True
"""

from .checks import MIN_RUNS, align_skylines
from .config import ARMS, MorpheusConfig, SLOConfig, TinyInstanceConfig
from .contract import Contract, infer_contracts
from .exact import ExactResult, compare_with_optimum, exact_min_peak, theorem_6_1_bound
from .fleet import (
    FleetEvaluation, consumer_harm, elastic_completion, evaluate_fleet, rstar_over_time, slack_cdf, user_ratios,
)
from .history import History, HistoryParams, generate_history
from .inference import detect_periodic, infer_slo, robust_cv
from .lp import LinearProgram, LPLayout, build_lp, debt_constraints, epsilon_constraint, shortfall_constraints
from .lowcost import AdHocJob, Allocation, PeriodicJob, Refusal, place_stage_gangs, stage_interval
from .lp_compact import build_compact_lp
from .penalty import Penalty, debt, first_debt_difference, penalty
from .plan import ReservationPlan
from .reprovision import Grant, ReprovisionRule, reprovision
from .skyline import (
    SkylineFit, SkylineFitError, fit_skyline, max_envelope, mean_skyline, percentile_skyline, user_skyline,
)
from .telemetry import TelemetryLog
from .experiments import (
    DriftResult, LazyExample, Pooled, SLOResult, alpha_sweep, drift_experiment, history_sweep, lazy_example,
    pooled_fleet, refit, regulariser_sweep,
)
from .experiments import claims_table as slo_claims_table
from .experiments import run as _run_slo
from .simulation import MorpheusResult, compare, footprint, simulate
from .simulation import run as _run_morpheus
from .experiments_packing import (
    adhoc_in_residual, competitive_table, fig7_example, footprints, lcm_example, pack_many,
)
from .experiments_packing import claims_table as packing_claims_table
from .rescue import RescueCase, rescue_case, rescue_rate
from .plots_packing import plot_comparison, plot_cycle, plot_fig7, plot_lcm, plot_packing, plot_residual
from .plots import (
    plot_drift, plot_fig2a, plot_fig4, plot_fig5, plot_fig9a, plot_fig9bc, plot_history_sweep, plot_lazy, plot_life,
    plot_penalty_terms, plot_periodicity, plot_result,
)



def run(config):
    """Lab 02's ``run`` for an :class:`SLOConfig` (an :class:`SLOResult`), Lab 03's for a
    :class:`MorpheusConfig` (a :class:`MorpheusResult`, remembered per config)."""
    if isinstance(config, MorpheusConfig):
        return _run_morpheus(config)
    if isinstance(config, SLOConfig):
        return _run_slo(config)
    raise ValueError(f"config={type(config).__name__} is not allowed: need an SLOConfig (Lab 02) or a "
                     "MorpheusConfig (Lab 03)")


__all__ = [
    "ARMS", "MorpheusConfig", "MorpheusResult", "TinyInstanceConfig", "compare", "footprint", "simulate", "adhoc_in_residual",
    "competitive_table", "RescueCase", "rescue_case", "rescue_rate", "fig7_example", "footprints", "lcm_example", "pack_many", "packing_claims_table",
    "plot_comparison", "plot_cycle", "plot_fig7", "plot_lcm", "plot_packing", "plot_residual",
    "SLOConfig", "SLOResult", "Pooled", "DriftResult", "LazyExample", "TelemetryLog", "run", "alpha_sweep",
    "drift_experiment", "history_sweep", "lazy_example", "slo_claims_table", "pooled_fleet", "refit", "regulariser_sweep",
    "plot_drift", "plot_fig2a", "plot_fig4", "plot_fig5", "plot_fig9a", "plot_fig9bc", "plot_history_sweep",
    "plot_lazy", "plot_life", "plot_penalty_terms", "plot_periodicity", "plot_result",
    "AdHocJob", "Allocation", "ExactResult", "Grant", "PeriodicJob", "Refusal", "ReprovisionRule", "ReservationPlan",
    "compare_with_optimum", "exact_min_peak", "place_stage_gangs", "reprovision", "stage_interval",
    "theorem_6_1_bound",
    "MIN_RUNS", "Contract", "FleetEvaluation", "History", "HistoryParams", "LPLayout", "LinearProgram", "Penalty",
    "SkylineFit", "SkylineFitError", "align_skylines", "build_compact_lp", "build_lp", "consumer_harm", "debt",
    "debt_constraints", "detect_periodic", "elastic_completion", "epsilon_constraint", "evaluate_fleet",
    "first_debt_difference", "fit_skyline", "generate_history", "infer_contracts", "infer_slo", "max_envelope", "mean_skyline", "penalty",
    "percentile_skyline", "robust_cv", "rstar_over_time", "shortfall_constraints", "slack_cdf", "user_ratios",
    "user_skyline",
]
