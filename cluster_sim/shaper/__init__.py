"""Lab 01: plan-aware resource shaping (Bag, Jindal, Patel, HotCloud'20).

A SCOPE job holds a user-chosen number of *tokens* for its whole run. The resource shaper turns
the job's stage graph into trees (:func:`treeify`), computes the peak number of tokens the rest of
the job can use (:func:`remaining_peak`, a max-cut per tree) and releases the excess at every
vertex completion (:class:`ResourceShaper`).

Pure layer (no Mesa): ``graph``, ``trees``, ``peak``, ``shaper``, ``execution``, ``examples``,
``fleet``, ``exercise`` (the exercise's cases and checks). On the engine: ``config``
(``ShaperConfig``, presets, the work estimate), ``agents`` (the job manager on Mesa's event clock),
``experiments`` (``run_job``, ``snapshot``, ``run_cluster``, ``run_fleet``, sweeps -> results),
``plots`` (``plot_*`` -> figures); ``lab`` re-exports those three for the notebook.

>>> import numpy as np
>>> from cluster_sim.shaper import StageGraph, treeify, remaining_peak, ResourceShaper
>>> g = StageGraph({"scan": 100, "join": 20, "out": 5}, [("scan", "join"), ("join", "out")])
>>> remaining_peak(treeify(g, np.random.default_rng(0)), {"scan": 100})
20
>>> ResourceShaper().tokens_to_release(g, 150, {"scan": 100})
130
"""

from .examples import FIGURE5_COMPLETED, FIGURE5_RUNNING, FIGURE5_SEED, FIGURE5_TOKENS, figure5_job, random_stage_graph
from .execution import MODES, JobExecution, JobRun, draw_durations, replay, replayed_peak
from .graph import StageGraph
from .peak import IncrementalPeak, exact_peak, remaining_peak, tree_widths
from .shaper import ResourceShaper
from .trees import Tree, canonical_forest, dropped_edges, times_counted, trees_from_edges, treeify

from .config import ShaperConfig  # noqa: E402  (after the pure layer it builds on)
from .experiments import run_cluster, run_fleet, run_job, snapshot  # noqa: E402
from .plots import (  # noqa: E402
    plot_cluster, plot_delay_tradeoff, plot_estimates, plot_fleet_cdfs, plot_job_savings, plot_opportunity,
    plot_skyline, plot_snapshot,
)

__all__ = [
    "ShaperConfig", "plot_cluster", "plot_delay_tradeoff", "plot_estimates", "plot_fleet_cdfs", "plot_job_savings",
    "plot_opportunity", "plot_skyline", "plot_snapshot", "run_cluster", "run_fleet", "run_job", "snapshot",
    "FIGURE5_COMPLETED", "FIGURE5_RUNNING", "FIGURE5_SEED", "FIGURE5_TOKENS", "IncrementalPeak", "JobExecution", "JobRun",
    "MODES", "ResourceShaper", "StageGraph", "Tree", "canonical_forest", "draw_durations",
    "dropped_edges", "exact_peak", "figure5_job", "random_stage_graph", "remaining_peak", "replay",
    "replayed_peak", "times_counted", "tree_widths", "trees_from_edges", "treeify",
]
