"""Lab 01's claims (``notebooks/01_plan_aware_shaper.ipynb``): the shaper's savings and the paper's §5.

Every claim is measured by :func:`cluster_sim.claims.measure` on one frame of runs made with
:func:`cluster_sim.sweep.run_grid` (cached; on Dask when long), from three experiments, each run at
every seed of its pool (``claims.pool(config.seed, size)``: a seed override shifts the pools):

* ``job``: the configured random job on Mesa's clock, with the paper's conservative shaper and our
  two §6 variants (each spool counted once; the aggressive shaper with instant grants), each next to
  the same job with its static allocation (``run_job``, :func:`~cluster_sim.shaper.experiments.mode_metrics`);
  and ``bound``: the tree bound along the job's static run, against the peak the job really reaches
  from each vertex completion on (:func:`bound_metrics`);
* ``cluster``: the same stream of jobs through a token-limited virtual cluster, shaping off and on
  (``run_cluster``, :func:`cluster_metrics`);
* ``fleet``: the synthetic clusters that stand in for the paper's production fleet (Figs. 4, 6, 7),
  each job replayed with shaping off and on (``run_fleet``, :func:`fleet_metrics`: each metric is
  the mean over the clusters run, set beside the mean of the paper's same-named clusters).

The cluster and the fleet always run the paper's conservative shaper: the claims are the paper's,
whatever mode the notebook's parameters choose for its own figures.

**Must reproduce** (the mechanism's central effects, which do not depend on the paper's trace): the
shaper saves token-seconds; it costs no latency (§5.2) and never holds fewer tokens than the rest of
the job can use (§4: the estimate is conservative); its savings stay below the opportunity (§5.1);
the tokens it frees shorten other jobs' queueing (§3.1) and never make a job wait longer; our two §6
variants cost no latency either (a theorem of their construction: a failure is a bug).
**Reported** (sizes that depend on the paper's production trace, which is not public): every number of
Figs. 4, 6 and 7, each beside the paper's (``ratio`` = ours / the paper's), and whether our variants
save more than the paper's shaper on this workload.

**The pools** (:data:`POOL_SIZE`). The widest intervals relative to their means are the queueing gap
(its per-seed values vary with the token-limited cluster's load, from about 10 s to 230 s at ci and
280 s at default; a 95 % t interval clears zero for every window of consecutive seeds we tried from 6
seeds on at ci (seeds 0-23) and 5 at default (seeds 0-13)) and the gap between savings and opportunity
in the fleet (clear from 3 seeds on at both). So the job and the cluster pool 8 seeds and the fleet,
by far the costliest run, 3. Every other must-reproduce claim is either an equality that holds at
every seed (its interval is [0, 0]) or clears zero from 3 seeds on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..claims import Claim, measure, pool
from ..sweep import run_grid
from .config import ShaperConfig
from .experiments import ClusterResult, FleetResult, estimate_trace, mode_metrics, run_cluster, run_fleet, run_job
from .fleet import CLUSTERS, PAPER_CLUSTERS, PAPER_VIRTUAL_CLUSTER

__all__ = ["POOL_SIZE", "JOB_POINTS", "lab_claims", "claims_table", "pool_runs", "pool_sizes", "bound_metrics",
           "cluster_metrics", "fleet_metrics"]

#: seeds per pool, per preset (the module docstring says why); a config that is no preset gets the largest
POOL_SIZE = {"ci": {"job": 8, "fleet": 3}, "default": {"job": 8, "fleet": 3}, "paper": {"job": 4, "fleet": 3}}
#: the job's runs: the paper's shaper and our two §6 variants, the aggressive one with instant grants
JOB_POINTS = [{"mode": "conservative"}, {"mode": "spool_once"}, {"mode": "aggressive", "request_delay": 0.0}]
#: an equality that holds exactly at every seed: any nonzero seed widens its interval past this band
EXACT = 1e-9


# ---- the metrics of each experiment's runs ----------------------------------------------------------
def bound_point(config: ShaperConfig) -> dict:
    """The tree bound along the configured job's static run (:func:`bound_metrics` of its trace)."""
    return bound_metrics(estimate_trace(config, exact_points=0))


def bound_metrics(trace: pd.DataFrame) -> dict:
    """Vertex completions (sampled evenly for a big job) and how many of them the paper's tree bound
    fell below the peak the job really reaches from then on (a conservative bound: never)."""
    return {"completions": int(len(trace)), "bound_below_actual": int((trace["tree"] < trace["actual"]).sum())}


def cluster_metrics(result: ClusterResult) -> dict:
    """The token-limited cluster, shaping off and on: mean queueing (arrival to admission, s), the jobs
    the shaper admitted later than without it, and the stream's token-seconds."""
    off, on = result.runs["off"].jobs, result.shaped.jobs
    return {"queueing_off": float(off["queueing"].mean()), "queueing_shaped": float(on["queueing"].mean()),
            "jobs_admitted_later": int((on["admitted"] > off["admitted"] + 1e-9).sum()),
            "token_seconds_off": float(off["token_seconds"].sum()),
            "token_seconds_shaped": float(on["token_seconds"].sum())}


#: fleet summary columns averaged over the clusters run (percentages, see ``fleet.fleet_summary``)
FLEET_MEANS = ("over_allocated_jobs", "alloc_minus_peak_over", "peak_minus_actual_over", "opportunity_over",
               "shaper_savings_over", "captured_over", "shaper_savings", "jobs_saving_1pct", "mean_job_savings")


def _cluster2_lead(table: pd.DataFrame, column: str) -> float:
    """Cluster2's value minus the mean of the other clusters' (NaN without Cluster2 and another)."""
    if "Cluster2" not in table.index or len(table) < 2:
        return float("nan")
    return float(table.loc["Cluster2", column] - table.drop(index="Cluster2")[column].mean())


def fleet_metrics(result: FleetResult) -> dict:
    """The fleet's Fig. 4/6/7 numbers, each the mean over the clusters run; the worst slowdown of any
    job (%), and Cluster2's lead in savings over the others (§5.1 names it the highest)."""
    s = result.summary
    out = {c: float(s[c].mean()) for c in FLEET_MEANS}
    out["max_slowdown"] = float(s["max_slowdown"].max())
    out["cluster2_lead"] = _cluster2_lead(s, "shaper_savings_over")
    return out


# ---- the claims ------------------------------------------------------------------------------------
def _paper_mean(column: str, clusters: list[str]) -> float:
    return float(PAPER_CLUSTERS.loc[clusters, column].mean())


def _paper_values(column: str, clusters: list[str], unit: str = " %") -> str:
    values = ", ".join(f"{v:.3g}" for v in PAPER_CLUSTERS.loc[clusters, column])
    return f"{', '.join(clusters)}: {values}{unit} (mean {_paper_mean(column, clusters):.3g})"


def lab_claims(config: ShaperConfig) -> list[Claim]:
    """The lab's claims. The fleet's are set beside the paper's clusters that the config runs (the
    first ``fleet_clusters`` of the paper's five), so the list depends on ``config``."""
    clusters = [p.name for p in CLUSTERS[: config.fleet_clusters]]
    job, bound, cluster, fleet = ({"experiment": e} for e in ("job", "bound", "cluster", "fleet"))
    vc = PAPER_VIRTUAL_CLUSTER
    reported_why = ("a size set by the paper's production trace (a day of SCOPE jobs, not public); ours comes from "
                    "a synthetic fleet, so only the direction is ours to reproduce")
    claims = [
        # the job on Mesa's clock
        Claim("shaper_saves", "The shaper gives back tokens the rest of the job cannot use: token-seconds saved on the "
              "configured random job, against the same job holding its static allocation (%)", "§3, Fig. 3; §4",
              "savings %", where=job, treatment={"mode": "conservative"}, baseline=0.0, direction="higher",
              must=True, why="the mechanism itself: a job over-allocated at its start tapers, and the shaper returns "
                             "what the remaining peak cannot use",
              hint="a job that never tapers has nothing to give back: raise over_allocation or lower decay"),
        Claim("no_latency_penalty", "The shaper costs no latency: the job's slowdown against its static allocation (%)",
              "§5.2", "slowdown %", where=job, treatment={"mode": "conservative"}, baseline=0.0, direction="equal",
              tolerance=EXACT, paper=0.0, paper_text="no performance penalty", must=True,
              why="the bound is never below what the rest of the job can run at once, so no vertex ever waits for a "
                  "token (stage barriers make it a theorem: notebook section 3)",
              hint="a bug in the shaper or the job manager: compare the Mesa run with replay() on the same job"),
        Claim("bound_is_conservative", "The remaining-peak bound is never below the peak the job really reaches from "
              "that moment on: vertex completions where it is", "§4 (the conservative estimate)",
              "bound_below_actual", where=bound, baseline=0.0, direction="equal", tolerance=EXACT, paper=0.0,
              paper_text="never (conservative)", must=True,
              why="tree-ification only drops 'must wait' facts, so each tree's max-cut bounds what can run at once",
              hint="a counterexample to section 3's argument: save the config and look at the first completion"),
        Claim("variants_no_latency_penalty", "Our §6 variants (each spool counted once; the aggressive shaper with "
              "instant grants) cost no latency either: their slowdown (%)", "ours (§6)", "slowdown %", where=job,
              treatment={"mode": ["spool_once", "aggressive"]}, baseline=0.0, direction="equal", tolerance=EXACT,
              must=True, why="both stay above what can run at once (spool-once by the same argument, aggressive by "
                             "construction when grants are instant): a failure is a bug in the variant",
              hint="compare the variant's replay with the conservative one on the same job"),
        Claim("spool_once_saves_more", "Counting each spool once saves more than the paper's shaper on the same job "
              "(savings, points of %)", "ours (§4: shared spools)", "savings %", where=job,
              treatment={"mode": "spool_once"}, baseline={"mode": "conservative"}, direction="higher",
              why="our variant; it can only tighten the bound, by as much as the job's shared spools allow "
                  "(nothing when the job has none)"),
        Claim("aggressive_saves_more", "The aggressive shaper with instant grants saves more than the paper's on the "
              "same job (savings, points of %)", "§6 (our reading)", "savings %", where=job,
              treatment={"mode": "aggressive"}, baseline={"mode": "conservative"}, direction="higher",
              why="our reading of §6's question, not the paper's design; with grants that take time it slows jobs "
                  "down (section 8)"),
        # the token-limited cluster
        Claim("queueing_falls", "The tokens the shaper frees shorten other jobs' queueing: mean time from arrival to "
              "admission in a token-limited virtual cluster, shaping on against off (s)",
              "§3.1 ('it reduces the queuing time of jobs')", "queueing_shaped", where=cluster,
              baseline="queueing_off", direction="lower", paper_text="less (not measured in the paper)", must=True,
              why="the point of giving tokens back: admission is first-come first-served, so freed tokens let the "
                  "next job in sooner",
              hint="a pool with room for every job has no queue to shorten: lower cluster_tokens or raise "
                   "cluster_jobs"),
        Claim("no_job_admitted_later", "No job is admitted later with the shaper than without it (jobs)",
              "ours: §5.2's no penalty under first-come first-served admission", "jobs_admitted_later",
              where=cluster, baseline=0.0, direction="equal", tolerance=EXACT, must=True,
              why="every earlier job holds at most its static tokens and ends no later, so by induction the free "
                  "tokens are never fewer (notebook section 6)",
              hint="a job that ran longer with the shaper: check no_latency_penalty first"),
        # the fleet
        Claim("fleet_saves", "The shaper frees guaranteed tokens in every cluster's over-allocated jobs (% of their "
              "allocated token-seconds, mean over the clusters)", "§5.1, Fig. 7", "shaper_savings_over", where=fleet,
              baseline=0.0, direction="higher", paper=_paper_mean("shaper_savings_over", clusters),
              paper_text="4–13 % per cluster: " + _paper_values("shaper_savings_over", clusters), must=True,
              why="the direction is the mechanism's; the size depends on how much the paper's jobs taper (ratio)",
              hint="raise fleet_jobs (small fleets hold few over-allocated jobs)"),
        Claim("savings_below_opportunity", "Savings stay below the opportunity (the allocated − peak and peak − "
              "actual gaps of Fig. 4c): savings minus opportunity, over-allocated jobs (points of %)",
              "§5.1 ('modest compared to the opportunity'), Figs. 4c and 7", "shaper_savings_over", where=fleet,
              baseline="opportunity_over", direction="lower",
              paper=_paper_mean("shaper_savings_over", clusters) - _paper_mean("opportunity_over", clusters),
              paper_text=f"{_paper_mean('shaper_savings_over', clusters):.3g} % saved of an opportunity of "
                         f"{_paper_mean('opportunity_over', clusters):.3g} % (means)", must=True,
              why="a release-only shaper bounded by the remaining peak can never hold fewer tokens than are in use, "
                  "and after a valley it keeps what the next peak needs",
              hint="savings above the opportunity are impossible (a test checks every job): look for a job whose "
                   "shaped allocation falls below its usage"),
        Claim("fleet_no_latency_penalty", "No fleet job is slowed down by the shaper: the worst slowdown (%)", "§5.2",
              "max_slowdown", where=fleet, baseline=0.0, direction="equal", tolerance=EXACT, paper=0.0,
              paper_text="no performance penalty", must=True, why="as no_latency_penalty, over every job of the fleet",
              hint="a bug in the replay's shaper: find the job with the largest slowdown in fleet.jobs"),
    ]
    if "Cluster2" in clusters and len(clusters) >= 2:
        claims.append(Claim(
            "cluster2_saves_most", "Cluster2, whose jobs are very wide and taper fast, saves the most: its savings "
            "minus the other clusters' mean (points of %)", "§5.1", "cluster2_lead", where=fleet, baseline=0.0,
            direction="higher", paper=_cluster2_lead(PAPER_CLUSTERS.loc[clusters], "shaper_savings_over"),
            paper_text="Cluster2 12.4 % against the others' mean",
            why="our Cluster2 is built from the paper's description (wide early stages that taper fast); how much "
                "more it saves depends on the paper's trace"))
    for key, column, statement, source in (
        ("over_allocated_jobs", "over_allocated_jobs", "Jobs over-allocated against their peak (% of jobs)", "Fig. 4a"),
        ("alloc_minus_peak", "alloc_minus_peak_over", "Allocated − peak, over-allocated jobs (% of their allocated "
         "token-seconds)", "Fig. 4c"),
        ("peak_minus_actual", "peak_minus_actual_over", "Peak − actual, over-allocated jobs (% of their allocated "
         "token-seconds)", "Fig. 4c"),
        ("opportunity", "opportunity_over", "The opportunity: the two gaps together, over-allocated jobs (%)",
         "Fig. 4c"),
        ("share_of_opportunity_taken", "captured_over", "Share of the opportunity the shaper takes (savings / "
         "opportunity, over-allocated jobs, %)", "Figs. 4c and 7"),
        ("savings_whole_workload", "shaper_savings", "The shaper's savings over the entire workload (% of all jobs' "
         "allocated token-seconds)", "Fig. 7's table"),
    ):
        why = ("calibrated: our fleet draws this share from the paper's table, so it checks the calibration, not the "
               "mechanism" if key == "over_allocated_jobs" else reported_why)
        claims.append(Claim(key, statement + ", mean over the clusters", source, column, where=fleet,
                            paper=_paper_mean(column, clusters), paper_text=_paper_values(column, clusters), why=why))
    for key, column, paper_key, statement in (
        ("jobs_that_save", "jobs_saving_1pct", "jobs_with_savings", "Jobs that save (ours: at least 1 % of their "
         "token-seconds; % of jobs)"),
        ("mean_job_savings", "mean_job_savings", "mean_job_savings", "Mean per-job savings (%)"),
        ("cumulative_savings", "shaper_savings", "cumulative_savings", "Cumulative savings over all jobs (% of their "
         "allocated token-seconds)"),
    ):
        claims.append(Claim(key, statement + ", mean over the clusters", "§5.2, Fig. 6", column, where=fleet,
                            paper=float(vc[paper_key]),
                            paper_text=f"{vc[paper_key]:.3g} (one virtual cluster of {vc['jobs']} production jobs)",
                            why=reported_why + "; the paper's is one virtual cluster, ours each synthetic cluster"))
    return claims


# ---- the pools and the table -------------------------------------------------------------------------
def pool_sizes(config: ShaperConfig) -> dict[str, int]:
    """Seeds per experiment for ``config``'s preset (:data:`POOL_SIZE`); the largest for a config that
    is no preset (its noise is unknown)."""
    name = config.preset_name()
    if name in POOL_SIZE:
        return dict(POOL_SIZE[name])
    return {k: max(sizes[k] for sizes in POOL_SIZE.values()) for k in ("job", "fleet")}


def pool_runs(config: ShaperConfig, *, pool_size: int | None = None, client=None, cache=None) -> pd.DataFrame:
    """Every run the claims read, one frame: an ``experiment`` column (job, bound, cluster, fleet), the
    seed, the config's fields and each experiment's metrics (NaN in the others' columns). The job, the
    bound and the cluster run at ``claims.pool(config.seed, n)`` with ``n`` from :func:`pool_sizes`, the
    fleet at its own pool from the same seed; ``pool_size`` sets every pool. ``client`` and ``cache``
    go to :func:`cluster_sim.sweep.run_grid`."""
    sizes = pool_sizes(config) if pool_size is None else {"job": pool_size, "fleet": pool_size}
    seeds = {k: pool(config.seed, n) for k, n in sizes.items()}
    paper = config.replace(mode="conservative")  # the cluster's and the fleet's claims are the paper's shaper's
    kw = {"client": client, "cache": cache}
    frames = {
        "job": run_grid(run_job, config, JOB_POINTS, seeds=seeds["job"], metrics=mode_metrics, **kw),
        "bound": run_grid(bound_point, config, {}, seeds=seeds["job"], **kw),
        "cluster": run_grid(run_cluster, paper, {}, seeds=seeds["job"], metrics=cluster_metrics, **kw),
        "fleet": run_grid(run_fleet, paper, {}, seeds=seeds["fleet"], metrics=fleet_metrics, **kw),
    }
    return pd.concat([f.assign(experiment=name) for name, f in frames.items()], ignore_index=True)


def claims_table(config: ShaperConfig, *, pool_size: int | None = None, client=None, cache=None) -> pd.DataFrame:
    """The lab's claims (:func:`lab_claims`) measured on :func:`pool_runs`: one row per claim, with its
    paired difference, 95 % interval and verdict (:func:`cluster_sim.claims.measure`)."""
    return measure(lab_claims(config), pool_runs(config, pool_size=pool_size, client=client, cache=cache), lab="01")
