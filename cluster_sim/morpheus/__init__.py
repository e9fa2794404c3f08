"""Morpheus (Jyothi et al., OSDI'16): automated SLOs and job resource models for periodic jobs.

One subpackage per lab, named after the paper's two halves:

* :mod:`.slo` (Lab 02, §4-§5, §9.1): *SLO inference* and the *job resource model*, from a history of
  runs to a contract (period, a_j, d_j and the skyline R*);
* :mod:`.packing` (Lab 03, §6-§7, §9): the contracts *packed* as recurring reservations by LowCost,
  reprovisioned by DRA, and simulated on a cluster beside ad hoc jobs.

Each has its pure layer, config, experiments, claims, plots, predictions and exercise cases (their package
docstrings list them). This package re-exports both labs' public names, so ``from cluster_sim.morpheus import
...`` (the notebooks', the capstone's and the docs' entry point: one paper, one import) keeps working, and
:func:`run` takes either lab's config.

Example
-------
>>> runs = [[4, 4, 1], [4, 2, 1], [3, 4, 2]]
>>> fit = fit_skyline(runs, alpha=0.5)
>>> j = penalty(fit.skyline, runs, alpha=0.5, beta=fit.beta)   # J(R*) recomputed in closed form
>>> abs(j.objective - fit.objective) < 1e-7
True
"""

from . import packing, slo
from .packing import (
    ARMS, AdHocJob, Allocation, ExactResult, Grant, MorpheusConfig, MorpheusResult, PeriodicJob, Refusal,
    RescueCase, ReprovisionRule, ReservationPlan, TinyInstanceConfig, adhoc_in_residual, compare,
    compare_with_optimum, competitive_table, exact_min_peak, fig7_example, footprint, footprints, lcm_example,
    pack_many, place_stage_gangs, plot_comparison, plot_cycle, plot_fig7, plot_lcm, plot_packing, plot_residual,
    reprovision, rescue_case, rescue_rate, simulate, stage_interval, theorem_6_1_bound,
)
from .packing import claims_table as packing_claims_table
from .slo import (
    MIN_RUNS, Contract, DriftResult, FleetEvaluation, History, HistoryParams, LazyExample, LinearProgram, LPLayout,
    Penalty, Pooled, SkylineFit, SkylineFitError, SLOConfig, SLOResult, TelemetryLog, align_skylines, alpha_sweep,
    build_compact_lp, build_lp, consumer_harm, debt, debt_constraints, detect_periodic, drift_experiment,
    elastic_completion, epsilon_constraint, evaluate_fleet, first_debt_difference, fit_skyline, generate_history,
    history_sweep, infer_contracts, infer_slo, lazy_example, max_envelope, mean_skyline, penalty, percentile_skyline,
    plot_drift, plot_fig2a, plot_fig4, plot_fig5, plot_fig9a, plot_fig9bc, plot_history_sweep, plot_lazy, plot_life,
    plot_penalty_terms, plot_periodicity, plot_result, pooled_fleet, refit, regulariser_sweep, robust_cv,
    rstar_over_time, shortfall_constraints, slack_cdf, user_ratios, user_skyline,
)
from .slo import claims_table as slo_claims_table


def run(config):
    """Lab 02's ``run`` for an :class:`SLOConfig` (an :class:`SLOResult`), Lab 03's for a
    :class:`MorpheusConfig` (a :class:`MorpheusResult`, remembered per config)."""
    if isinstance(config, MorpheusConfig):
        return packing.run(config)
    if isinstance(config, SLOConfig):
        return slo.run(config)
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
