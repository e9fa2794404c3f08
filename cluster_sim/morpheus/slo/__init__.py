"""Lab 02 (Morpheus §4-§5, §9.1): SLOs inferred from a job's history and its job resource model R*.

The paper's first two steps turn a history into a contract: *automatic SLO inference* (§4: which jobs are
periodic, when their input arrives a_j and when their output is read d_j) and the *job resource model*
(§5: the skyline R* that covers the runs seen, an LP over their debts). Lab 03 (:mod:`..packing`) packs the
contracts made here.

Pure layer (no Mesa), one job per module:

* :mod:`.history`: a seeded synthetic history (templates, the four times of Fig. 4, consumers,
  user provisioning, per-minute skylines, drift and input delays);
* :mod:`.runs`: a job's runs as an N x K array of skylines (aligned, and the rules the LP needs of them);
* :mod:`.inference`: §4, ``detect_periodic`` and ``infer_slo`` (a_j, d_j, slack, actionable);
* :mod:`.penalty`: J(s) in closed form (over-allocation, the debt recursion, epsilon);
* :mod:`.lp`, :mod:`.lp_compact`: §5's LP, cast with the debt recursion and in a compact form;
* :mod:`.skyline`: ``fit_skyline`` (R*, the two-solve beta scheme) and the baselines;
* :mod:`.contract`: period, a_j, d_j and R* per periodic job;
* :mod:`.fleet`: provisioning ratios, worst-case SLO misses, slack, R* over time, the §9.1 proxy;
* :mod:`.telemetry`: ``TelemetryLog``, what is recorded about each run and the contracts inferred
  from it (what an agent recording runs on the cluster fills and refits from);
* :mod:`.penalty_cases`, :mod:`.deadline_cases`: the exercise's seeded cases and checks (they name the
  misconception).

The lab: :mod:`.config` (``SLOConfig`` and its presets), :mod:`.experiments` (``run(config) -> SLOResult``,
the sweeps over alpha, runs of history and seeds, the lazy example, the paper's numbers beside ours),
:mod:`.drift` (the contract refitted while a job drifts, §2.3), :mod:`.claims` (the claims table), :mod:`.plots` (Fig. 2a, 3, 4, 5, 9a-c, R* after drift) and
:mod:`.predictions`.

Example
-------
>>> runs = [[4, 4, 1], [4, 2, 1], [3, 4, 2]]
>>> fit = fit_skyline(runs, alpha=0.5)
>>> j = penalty(fit.skyline, runs, alpha=0.5, beta=fit.beta)   # J(R*) recomputed in closed form
>>> abs(j.objective - fit.objective) < 1e-7
True
"""

from .claims import claims_table
from .config import SLOConfig
from .contract import Contract, infer_contracts
from .drift import DriftResult, drift_experiment, refit
from .experiments import (
    LazyExample, Pooled, SLOResult, alpha_sweep, history_sweep, lazy_example, pooled_fleet, regulariser_sweep, run,
)
from .fleet import (
    FleetEvaluation, consumer_harm, elastic_completion, evaluate_fleet, rstar_over_time, slack_cdf, user_ratios,
)
from .history import History, HistoryParams, generate_history
from .inference import detect_periodic, infer_slo, robust_cv
from .lp import LinearProgram, LPLayout, build_lp, debt_constraints, epsilon_constraint, shortfall_constraints
from .lp_compact import build_compact_lp
from .penalty import Penalty, debt, first_debt_difference, penalty
from .plots import (
    plot_drift, plot_fig2a, plot_fig4, plot_fig5, plot_fig9a, plot_fig9bc, plot_history_sweep, plot_lazy, plot_life,
    plot_penalty_terms, plot_periodicity, plot_result,
)
from .runs import MIN_RUNS, align_skylines
from .skyline import (
    SkylineFit, SkylineFitError, fit_skyline, max_envelope, mean_skyline, percentile_skyline, user_skyline,
)
from .telemetry import TelemetryLog

__all__ = [
    "SLOConfig", "SLOResult", "Pooled", "DriftResult", "LazyExample", "TelemetryLog", "run", "alpha_sweep",
    "claims_table", "drift_experiment", "history_sweep", "lazy_example", "pooled_fleet", "refit", "regulariser_sweep",
    "plot_drift", "plot_fig2a", "plot_fig4", "plot_fig5", "plot_fig9a", "plot_fig9bc", "plot_history_sweep",
    "plot_lazy", "plot_life", "plot_penalty_terms", "plot_periodicity", "plot_result",
    "MIN_RUNS", "Contract", "FleetEvaluation", "History", "HistoryParams", "LPLayout", "LinearProgram", "Penalty",
    "SkylineFit", "SkylineFitError", "align_skylines", "build_compact_lp", "build_lp", "consumer_harm", "debt",
    "debt_constraints", "detect_periodic", "elastic_completion", "epsilon_constraint", "evaluate_fleet",
    "first_debt_difference", "fit_skyline", "generate_history", "infer_contracts", "infer_slo", "max_envelope",
    "mean_skyline", "penalty", "percentile_skyline", "robust_cv", "rstar_over_time", "shortfall_constraints",
    "slack_cdf", "user_ratios", "user_skyline",
]
