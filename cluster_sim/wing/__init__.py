"""Wing (Chung et al., OSDI'20): hidden inter-job dependencies, their prediction, multi-hop job value.

Lab 04 rebuilds §2-§4; the value-aware scheduling lab after it builds on this package.

Pure layer (no Mesa): :mod:`.lake` (a seeded synthetic data lake: JobRepo, ProvRepo and the
generator's truth), :mod:`.provenance` (the single-hop self-join of §4.2 and its three rules,
downloads as job-local value), :mod:`.characterise` (Table 1 and the six observations of §2.3),
:mod:`.predict` (§3: T1 and T2), :mod:`.multihop` (Algorithm 1, the doubling closure),
:mod:`.value` (Owl's aggregate value, Fig. 5 and Fig. 6), :mod:`.exercise` (the exercise's
building blocks and checks).

Lab 04: :mod:`.config` (``WingDepsConfig`` and its presets), :mod:`.experiments`
(``run(config) -> WingDepsResult``, ``analyse(jobs, prov)`` for logs from any source, the
self-join's rules one at a time, Algorithm 1 iteration by iteration, the paper's numbers beside
ours), :mod:`.plots` (``plot_*``).

Example
-------
>>> lake = generate_lake(LakeConfig.ci())
>>> deps = single_hop(lake.prov)
>>> deps.equals(lake.truth[["job", "depOn", "lag", "files"]])     # the self-join finds what the generator made
True
>>> k = job_local_value(lake.prov, lake.jobs["job"])
>>> agg = owl_value(deps, k)
>>> bool(agg.sum() >= k.sum()), bool((agg >= k).all())
(True, True)
"""

from .config import WingDepsConfig
from .experiments import (
    WingDepsResult,
    analyse,
    doubling_example,
    doubling_trace,
    lake_slice,
    rule_ablation,
    run,
    run_seeds,
    self_join_example,
)
from .characterise import PAPER, classify, classify_templates, components, heuristic_agreement, observations, table1
from .exercise import check_extend_reach, check_owl_value, check_owl_weights, owl_value_with, random_dag
from .lake import Lake, LakeConfig, generate_lake
from .multihop import (
    MultiHop,
    algorithm1_literal,
    check_deps,
    depths,
    diameter,
    doubling,
    drop_self_dependencies,
    expected_iterations,
    extend_reach,
    multi_hop,
    owl_weights,
)
from .predict import best_threshold, predict, relative_error_cdf, t1_curve, t2_errors, t2_summary, train
from .provenance import (
    DAY,
    DEFAULT_WINDOW,
    HOUR,
    attribute_downloads,
    check_prov,
    job_local_value,
    read_matches,
    single_hop,
)
from .value import (
    Figure5,
    closed_form_value,
    figure5_example,
    hidden_value,
    owl_value,
    owl_value_of,
    valid_jobs,
    value_decay,
    value_exploration,
)

from ..lazy import lazy

# the figures import matplotlib (about 0.5 s of CPU a process): read from .plots when first used, so an exercise
# that draws nothing (each nbgrader autograde is a fresh kernel) does not load it (cluster_sim/lazy.py)
__getattr__, __dir__ = lazy(__name__, f"{__name__}.plots", (
    "plot_doubling", "plot_fig2", "plot_fig3", "plot_fig5", "plot_fig6", "plot_lake",
    "plot_observations", "plot_overview", "plot_provenance", "plot_rules", "plot_table1"))

__all__ = [
    "WingDepsConfig", "WingDepsResult", "analyse", "doubling_example", "doubling_trace", "lake_slice",
    "plot_doubling", "plot_fig2", "plot_fig3", "plot_fig5", "plot_fig6", "plot_lake",
    "plot_observations", "plot_overview", "plot_provenance", "plot_rules", "plot_table1", "rule_ablation", "run",
    "run_seeds", "self_join_example",
    "DAY", "DEFAULT_WINDOW", "Figure5", "HOUR", "Lake", "LakeConfig", "MultiHop", "PAPER", "algorithm1_literal",
    "attribute_downloads", "best_threshold", "check_deps", "check_extend_reach", "check_owl_value",
    "check_owl_weights", "check_prov", "classify", "classify_templates", "closed_form_value", "components", "depths",
    "diameter", "doubling", "drop_self_dependencies", "expected_iterations", "extend_reach", "figure5_example", "generate_lake",
    "heuristic_agreement", "hidden_value", "job_local_value", "multi_hop", "observations", "owl_value",
    "owl_value_of", "owl_value_with", "owl_weights", "predict", "random_dag", "read_matches", "relative_error_cdf", "single_hop", "t1_curve",
    "t2_errors", "t2_summary", "table1", "train", "valid_jobs", "value_decay", "value_exploration",
]
