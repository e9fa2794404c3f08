"""Lab 03's claims (:mod:`cluster_sim.claims`): DRA against static Morpheus over a seed pool (every arm on
every seed, paired), and Theorem 6.1's ratio and refusals on tiny instances, measured and reported.
"""

from __future__ import annotations

import pandas as pd

from ...claims import Claim, measure, pool
from ...sweep import run_grid
from .config import ARMS, MorpheusConfig
from .experiments import competitive_table
from .simulation import estimated_seconds, run, sweep_row

__all__ = ["claims_table", "CLAIMS", "THEOREM_CLAIMS", "POOL_SIZES", "TINY_INSTANCES", "run_metrics"]

#: seeds per claim pool, by preset (cycles of ``jobs`` templates): the intervals' half-widths on the
#: violation rate are about 0.03-0.05 at ci over 12 seeds and at default over 6 (a ci cycle has about nine
#: runs, so one seed moves its rate by a ninth); over 10 ci seeds DRA's interval ended 0.0002 from zero
#: at one seed offset
POOL_SIZES = {"ci": 12, "default": 6, "paper": 4}
#: tiny instances of Theorem 6.1's table (each a MILP of a few hundred variables)
TINY_INSTANCES = 40


#: a claims run's row (:func:`~.simulation.sweep_row`, shared with the notebook's other sweeps, so a cycle
#: ``compare`` simulated is read back from the sweep cache): the worst-case violation rate of its periodic runs,
#: the same rate over the runs not held back on purpose (``trace_violation_rate``: §9.2's experiment is the
#: trace's runs; the deliberately delayed run is §9.3's Fig. 12, an adversarial case for DRA), and the cluster
#: shares
run_metrics = sweep_row


CLAIMS = [
    Claim("dra_beats_static", "Dynamic reprovisioning repairs runs that outgrow their reservations: fewer worst-case "
          "violations than the same plan without it", "§7, Fig. 10b", "violation_rate",
          treatment={"arm": "morpheus_dra"}, baseline={"arm": "morpheus"}, direction="lower",
          paper_text="fewer violations (Fig. 10b: 'repair underallocations dynamically')", must=True,
          why="the mechanism of §7 on our workload: a run that outgrows R* gets more containers only with DRA",
          hint="more seeds (a larger pool), or check the Reprovisioner's caps (rho, hold_seconds)"),
    Claim("dra_beats_users", "Morpheus (with DRA) has fewer worst-case SLO violations than the users' own "
          "provisioning on the same cluster (the trace's runs)", "§9.2, Fig. 10", "trace_violation_rate",
          treatment={"arm": "morpheus_dra"}, baseline={"arm": "user"}, direction="lower",
          paper_text="5-13x fewer violations", must=False,
          why="reported: over ci seeds 0-11 the trace's runs miss 3/94 with DRA against the users' 11/94, but "
              "the paired interval straddles zero at ci seed offsets 5-9 (it excludes it at 0-4) and at every "
              "offset 0-9 at default (6 seeds); the paper's 5-13x comes from a month of its trace",
          hint=""),
    Claim("static_beats_users", "Morpheus without reprovisioning (R* packed by LowCost) has fewer worst-case "
          "violations than the users (the trace's runs: the run held back on purpose is Fig. 12's, §9.3)",
          "§9.2, Fig. 10a", "trace_violation_rate",
          treatment={"arm": "morpheus"}, baseline={"arm": "user"}, direction="lower",
          paper_text="19% smaller cluster at equal attainment (Fig. 10a)", must=False,
          why="reported, does not reproduce (issue 26): within noise at ci over the pools of seeds 0-33 (its "
              "sign changes with the pool) and at default within noise or reversed (pools of seeds 0-9). "
              "Measured causes (runs missed / "
              "runs, ci seeds 0-11): (1) the run held back on purpose, a §9.3 case Fig. 10 does not have, was "
              "counted: static misses it on 10 of 12 seeds; without it static is 7/94 against users' 11/94. A run "
              "that starts up to 2 minutes after its reservation misses no more often than one that waits for it "
              "(one reservation per run: 6/21 and 12/52 with work kept, 0/21 and 5/52 with running tasks kept). "
              "(2) Not LowCost's stretching: with worst_case='resume' and one reservation per run, "
              "min_parallelism 0, 0.5 and 1 give 31, 31 and 40/106 (users 16/106). (3) R*'s shape: R* from each "
              "run's own submission misses 44/106 with work kept; 17 of 24 such misses (seeds 0-5) had an R* "
              "covering their skyline in §5's fluid sense (final debt 0): the LP lets a run 'catch up' later, "
              "but our stages run at most their width, in tasks minutes long. (4) Not the LP's inputs: history "
              "skylines are the runs' own unconstrained skylines, task grain and stragglers included; 40 past "
              "runs instead of 10 take static from 31 to 24/106. (5) In the paper's skyline measure (a run's "
              "skyline against its provisioning, debt caught up by any later allocation) the trace's runs miss "
              "9/94 (static) against 8/94 (users): even the paper's own measure does not separate them on our "
              "workload"),
    Claim("packing_only_vs_users", "Packing alone (users' counts packed by LowCost)", "Fig. 10a",
          "trace_violation_rate",
          treatment={"arm": "packing_only"}, baseline={"arm": "user"}, direction="lower",
          paper_text="6% smaller cluster", must=False,
          why="reported: Fig. 10a's breakdown is a cluster size on the paper's trace; ours is the violation rate "
              "of the trace's runs on the same cluster"),
    Claim("model_only_vs_users", "The job model alone (R* from each run's submission)", "Fig. 10a",
          "trace_violation_rate", treatment={"arm": "model_only"}, baseline={"arm": "user"}, direction="lower",
          paper_text="16% smaller cluster", must=False,
          why="reported: as packing alone; R* without repair misses for the same reason as static Morpheus"),
    Claim("reserved_share_lower", "Morpheus reserves a smaller share of the cluster for periodic jobs than the "
          "users' counts", "§9.2, Fig. 9d", "reserved_share", treatment={"arm": "morpheus_dra"},
          baseline={"arm": "user"}, direction="lower", paper_text="lower", must=False,
          why="reported: R* is fitted to the runs and users ask for more than they use (Fig. 2a), and the "
              "difference reproduces at default (6 seeds), but at ci (two-hour cycles of six jobs) its interval "
              "straddles zero at some seed offsets; we have not found why, so it is not a must"),
    Claim("static_above_reservation", "Share of static Morpheus runs' container-time held above their reservation "
          "(tasks keep their containers when a reservation shrinks: opportunistic use)", "§9.2's worst case",
          "above_reservation", where={"arm": "morpheus"}, paper_text="0 (the worst case denies opportunistic use)",
          why="reported: our queues let running tasks finish when a reservation shrinks (worst_case='keep'); "
              "worst_case='literal' takes them back and makes this 0"),
    Claim("dra_above_reservation", "... and of Morpheus with DRA", "§9.2's worst case", "above_reservation",
          where={"arm": "morpheus_dra"}, paper_text="0", why="reported: as above"),
    Claim("utilisation_retained", "Utilisation is retained at equal cluster", "§9.2", "utilisation",
          treatment={"arm": "morpheus_dra"}, baseline={"arm": "user"}, direction="equal", tolerance=0.02,
          paper_text="retained", must=True,
          why="ad hoc jobs borrow whatever periodic queues leave idle, so the cluster stays as busy",
          hint="lower adhoc_load if the cluster saturates, or more seeds"),
]

THEOREM_CLAIMS = [
    Claim("lowcost_ratio", "LowCost's peak / the offline optimum on tiny instances (measured, not the bound: the "
          "paper states O(log Pmax/Pmin) with no constant)", "§6, Theorem 6.1", "lowcost_ratio",
          where={"refused_lowcost": 0, "optimum_fits": True}, paper_text="O(log Pmax/Pmin), no constant", must=False,
          why="reported: the theorem bounds the ratio up to a constant the paper does not give"),
    Claim("lowcost_refusals", "Jobs LowCost refuses per tiny instance where the optimum places every job",
          "§6, Theorem 6.1", "refused_lowcost", where={"optimum_fits": True},
          paper_text="(the theorem assumes every job placed)", must=False,
          why="reported: an online placer can refuse what the offline optimum places"),
    Claim("greedy_refusals", "Jobs earliest-first refuses per tiny instance where the optimum places every job",
          "§6", "refused_greedy", where={"optimum_fits": True},
          paper_text="", must=False, why="reported, beside LowCost's"),
]


def claims_table(config: MorpheusConfig, *, pool_size: int | None = None, client=None, cache=None) -> pd.DataFrame:
    """Lab 03's claims measured over ``claims.pool(config.seed, pool_size)`` (default by preset size:
    :data:`POOL_SIZES`): every arm on every seed of the pool (paired by seed), and Theorem 6.1's tiny
    instances (:data:`TINY_INSTANCES` seeds from the config's). ``client`` and ``cache`` go to
    :func:`cluster_sim.sweep.run_grid`."""

    size = POOL_SIZES[_preset_of(config)] if pool_size is None else pool_size
    seeds = pool(config.seed, size)
    frame = run_grid(run, config, {"arm": list(ARMS)}, seeds=seeds, metrics=run_metrics, client=client,
                     cache=cache, estimate=estimated_seconds)
    tiny = competitive_table(range(config.seed, config.seed + TINY_INSTANCES), client=client, cache=cache)
    return pd.concat([measure(CLAIMS, frame, lab="03"), measure(THEOREM_CLAIMS, tiny, lab="03")],
                     ignore_index=True)


def _preset_of(config: MorpheusConfig) -> str:
    """The preset a config is closest to (by its number of jobs), for the pool's size."""
    for name in ("ci", "default"):
        if config.jobs <= getattr(MorpheusConfig, name)().jobs:
            return name
    return "paper"
