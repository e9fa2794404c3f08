"""Everything the notebook imports, in one place: the config, the experiments and the figures.

The lab follows the suite's layout: :mod:`.config` (``ShaperConfig`` and its presets, the work
estimate), :mod:`.agents` (the Mesa job manager), :mod:`.experiments` (``run_*`` -> results),
:mod:`.plots` (``plot_*`` -> figures) and :mod:`.claims` (the lab's claims over seed pools). This
module re-exports them so that ``from cluster_sim.shaper.lab import ...`` in the notebooks keeps
working.

>>> from cluster_sim.shaper.lab import ShaperConfig, run_job, plot_skyline
>>> plot_skyline(run_job(ShaperConfig.ci())) is not None
True
"""

from __future__ import annotations

from .config import ShaperConfig
from .experiments import (
    ClusterResult,
    ClusterRun,
    FleetResult,
    JobResult,
    JobSetup,
    Snapshot,
    bound_slack,
    cluster_plans,
    compare_modes,
    cost_sweep,
    delay_sweep,
    estimate_trace,
    make_job,
    run_cluster,
    run_fleet,
    run_job,
    shaper_overhead,
    snapshot,
)
from .claims import claims_table, lab_claims
from .plots import (
    TREE_COLOURS,
    draw_stage_graph,
    plot_cluster,
    plot_delay_tradeoff,
    plot_estimates,
    plot_fleet_cdfs,
    plot_job_panel,
    plot_job_savings,
    plot_opportunity,
    plot_skyline,
    plot_snapshot,
)

__all__ = [
    "ClusterResult", "ClusterRun", "FleetResult", "JobResult", "JobSetup", "ShaperConfig", "Snapshot", "TREE_COLOURS",
    "bound_slack", "claims_table", "cluster_plans", "compare_modes", "cost_sweep", "delay_sweep",
    "draw_stage_graph", "estimate_trace", "lab_claims", "make_job", "plot_cluster", "plot_delay_tradeoff", "plot_estimates",
    "plot_fleet_cdfs", "plot_job_panel", "plot_job_savings", "plot_opportunity", "plot_skyline", "plot_snapshot",
    "run_cluster", "run_fleet", "run_job", "shaper_overhead", "snapshot",
]
