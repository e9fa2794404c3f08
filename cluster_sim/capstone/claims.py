"""Lab 10's claims: each mechanism's own direction, alone, and what they do to each other.

No paper ran these mechanisms together, so the claims are ours, each tied to the lab whose paper
states the mechanism's effect (``source``). Every claim is a paired difference between two arms of
the same days (same seeds), measured by :func:`cluster_sim.claims.measure` over a seed pool:

* **alone** (must reproduce: the lab's own direction on this workload): Morpheus lowers the SLO
  violations of periodic jobs, Wing raises the value attained, the shaper lowers the tokens held
  idle, IPA shortens stages, Resource Miner shortens the wait for placement;
* **RAA's resource plans** (Lab 07) on top of IPA's placement (Lab 06), the stage optimiser alone with
  and without them (``stageopt`` against ``stageopt[ipa]``): must reproduce, RAA shortens stages and
  jobs hold fewer tokens idle (every seed of the ci pool 0-7 and the default pool 0-5); reported, the
  tokens held over the day (lower at ci, within noise at default);
* **interactions**: must reproduce, IPA's placements under stale views meet more conflicts and the
  shaper's released tokens feed the shadow that Resource Miner harvests (the pair against Resource Miner
  alone: with RAA's plans on as well, all against all-shaper is within noise at ci); reported, Morpheus on top
  of the others lowers the value attained (its reservations shrink what Wing orders; clear in some
  pools, within noise in others) and Wing adds little once the shaper has emptied its queues;
* **all together** and **all but one** on each mechanism's metric: reported.

Pool sizes (:data:`POOL_SIZES`): every must-reproduce claim was reproduced in every shifted pool we
measured, at ci over the 7 pools of 8 seeds in seeds 0-13 and at default over the 5 pools of 6 seeds
in seeds 0-9, measured again with Morpheus's reservations packed by LowCost and reprovisioned (Wing alone
is the narrowest: its value depends on a few valuable jobs per day, and at ci it needs the 900-second day
and 8 seeds). A run costs about 0.2-0.3 CPU-seconds at ci and default; the default ablation (72 runs, each
day built once) took 15 CPU-seconds (bench/capstone.py --ablation; 167 s of wall time on the shared 2-core
machine at a load average of 20, which is what the notebook's timing line shows on a busy machine).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .. import claims as _claims
from .config import SWITCHES, CapstoneConfig
from ..sweep import AUTO_PARALLEL_SECONDS, run_grid, start_ahead
from .experiments import CapstoneResult, ablation, arm_name, arms, metrics_of, plans_of, run

LAB = "10"
POOL_SIZES = {"ci": 8, "default": 6, "paper": 3}
#: the metric each mechanism is judged on, and the lab that teaches it
OWN = {
    "morpheus": ("slo_violation_rate", "lower", "Lab 03 (Morpheus §9: fewer SLO violations with R* reservations)"),
    "wing": ("value_share", "higher", "Lab 05 (Wing §7: Wing-Agg attains more value than priority order)"),
    "shaper": ("idle_held_share", "lower", "Lab 01 (the shaper §5: tokens released early)"),
    "stageopt": ("mean_stage_latency", "lower", "Labs 06-07 (stage optimiser §6: IPA and RAA lower stage latency)"),
    "rminer": ("mean_placement_delay", "lower", "Labs 08-09 (RMiner §4: shadow resources cut scheduling delay)"),
}


def _alone() -> list[_claims.Claim]:
    out = []
    for mech, (metric, direction, source) in OWN.items():
        out.append(_claims.Claim(
            key=f"{mech}_alone", statement=f"{mech} alone moves {metric} the way its lab shows ({direction})",
            source=source, metric=metric, treatment={"arm": mech}, baseline={"arm": "none"}, direction=direction,
            must=True, why="the mechanism's central effect, here on the shared day: it must still work in the composition",
            hint=f"run the notebook's section 2 for {mech} alone; check the day has the work it acts on "
                 f"(periodic jobs, queues that bind, short tasks on stale views)"))
    return out


def _on_top() -> list[_claims.Claim]:
    out = []
    for mech, (metric, direction, source) in OWN.items():
        out.append(_claims.Claim(
            key=f"{mech}_on_top", statement=f"{mech} on top of the other four, on {metric}",
            source=source, metric=metric, treatment={"arm": "all"}, baseline={"arm": f"all-{mech}"},
            direction=direction, why="reported: what a mechanism adds depends on what the others already did"))
    return out


def _resource_plans() -> list[_claims.Claim]:
    """What RAA's resource plans (Lab 07) add to IPA's placement (Lab 06): the stage optimiser with and
    without them, alone on the same days."""
    raa, ipa = {"arm": "stageopt"}, {"arm": "stageopt[ipa]"}
    return [
        _claims.Claim(
            key="raa_shortens_stages", statement="RAA's resource plans shorten stages on top of IPA's placement",
            source="Lab 07 (MaxCompute Expt 9, Table 4: IPA+RAA lowers stage latency against IPA alone)",
            metric="mean_stage_latency", treatment=raa, baseline=ipa, direction="lower", must=True,
            why="RAA gives the vertices that set a stage's latency more cores or memory (the latency model says "
                "a vertex on one GB spills), so the slowest vertex of a stage ends sooner",
            hint="check raa=True and that the plans give some vertices more than one core or GB (model.plans)"),
        _claims.Claim(
            key="raa_idles_fewer_tokens", statement="with RAA's resource plans, jobs hold fewer tokens idle",
            source="Lab 07 (MaxCompute §5.3: resource plans fitted to each instance, instead of HBO's one plan for all)",
            metric="idle_held_share", treatment=raa, baseline=ipa, direction="lower", must=True,
            why="a job holds its user's tokens until it ends; its vertices, sized by their plans, fill more of "
                "them and end sooner, so the job gives them all back sooner",
            hint="compare held_share and utilisation between the arms: the tokens are held for less time"),
        _claims.Claim(
            key="raa_holds_fewer_tokens", statement="with RAA's resource plans, jobs hold fewer tokens over the day",
            source="Lab 07 (MaxCompute Expt 9, Table 4: RAA lowers the cost, resources x time, against IPA alone)",
            metric="held_share", treatment=raa, baseline=ipa, direction="lower",
            why="reported: a vertex holds more tokens under its plan, for less time; here HBO's plan is the grid's "
                "cheapest (one core, one GB), so RAA can only buy speed with resources, and its vertices use "
                "more CPU-seconds than one-token vertices (utilisation rises), unlike Lab 07's, whose HBO plan "
                "is generous; what the jobs hold over the day falls on some days and not on others"),
    ]


def _interactions() -> list[_claims.Claim]:
    return [
        _claims.Claim(
            key="ipa_meets_conflicts", statement="IPA's stage plans on stale views meet more commit conflicts",
            source="Labs 06 and 08 (IPA plans on the scheduler's view; Omega's optimistic commits)",
            metric="conflict_rate", treatment={"arm": "stageopt"}, baseline={"arm": "none"}, direction="higher",
            must=True, why="every scheduler's plan sends the longest vertices to the same fastest machines, "
                           "which its stale view shows free",
            hint="check update_delay > 0 and schedulers > 1: with one scheduler or fresh views nothing conflicts"),
        _claims.Claim(
            key="morpheus_crowds_wing", statement="on top of the others, Morpheus lowers the value attained",
            source="Labs 03 and 05 (reservations are taken from the capacity Wing orders)",
            metric="value_share", treatment={"arm": "all"}, baseline={"arm": "all-morpheus"}, direction="lower",
            why="reported: once the shaper has freed the queues, a reservation is room set aside that the valuable "
                "jobs no longer get, most of it after its run has ended (the reservation lasts to its block's end); "
                "how much value that costs depends on how many valuable jobs wait while reservations are held, "
                "which varies from day to day: over 6-seed pools at default it is clear in some pools and within "
                "noise in others (the exercise's release rule removes most of it)",
            hint="compare with morpheus_value_alone: alone, right-sized reservations free room instead"),
        _claims.Claim(
            key="morpheus_value_alone", statement="alone, Morpheus raises the value attained",
            source="Labs 03 and 05", metric="value_share", treatment={"arm": "morpheus"}, baseline={"arm": "none"},
            direction="higher", why="reported: R* reservations are smaller than the users' over-allocated requests, "
                                    "so the organisations get more room than the periodic jobs took before"),
        _claims.Claim(
            key="shaper_feeds_rminer", statement="with Resource Miner on, the shaper raises the shadow it harvests",
            source="Labs 01 and 08 (released tokens start more work, whose ends are shadow until views refresh)",
            metric="shadow_utilisation", treatment={"arm": "shaper+rminer"}, baseline={"arm": "rminer"},
            direction="higher", must=True,
            why="tokens a shaper gives back admit more jobs; more running and ending vertices mean more "
                "resources released between refreshes. Measured on the pair alone: with the others on as well "
                "(all against all-shaper) RAA's resource plans end jobs sooner, the queues bind less, and the "
                "effect is within noise over the ci pool",
            hint="check rminer is on in both arms and update_delay > 0"),
        _claims.Claim(
            key="wing_after_shaper", statement="once the shaper empties the queues, Wing adds little value",
            source="Labs 01 and 05", metric="value_share", treatment={"arm": "all"}, baseline={"arm": "all-wing"},
            direction="equal", tolerance=0.05,
            why="reported: ordering matters only while jobs wait; how little depends on the load"),
    ]


CLAIMS = _alone() + _resource_plans() + _interactions() + _on_top()


def claim_arms() -> list[dict]:
    """The arms the claims read: every arm of :func:`~cluster_sim.capstone.experiments.arms`, the stage
    optimiser alone with IPA's placement only (``stageopt[ipa]``: RAA's resource plans off), and the shaper
    with Resource Miner (``shaper+rminer``)."""
    off = {s: False for s in SWITCHES}
    return arms() + [{**off, "stageopt": True, "raa": False}, {**off, "shaper": True, "rminer": True}]


def pool_size_for(config: CapstoneConfig) -> int:
    """The preset's pool size (a seed override keeps it); a config changed elsewhere gets ``ci``'s."""
    name = config.replace(**{s: False for s in SWITCHES}).preset_name()
    return POOL_SIZES.get(name, POOL_SIZES["ci"])


def claims_frame(config: CapstoneConfig, *, pool_size: int | None = None, client=None, cache=None,
                 results=()) -> pd.DataFrame:
    """The ablation over the claims' pool: one row per arm and seed.

    ``results``: days the notebook already ran (:func:`~cluster_sim.capstone.experiments.run`) on one of the pool's
    arms, e.g. its example with every mechanism on at ``config.seed``: their metrics are read instead of running
    them again (the same frame: a run is deterministic). A run of any other config is refused."""
    base = config.replace(**{s: False for s in SWITCHES})
    size = pool_size_for(config) if pool_size is None else pool_size
    seeds = _claims.pool(config.seed, size)
    given = _given_runs(base, seeds, results)
    if not given:
        return ablation(base, seeds, points=claim_arms(), client=client, cache=cache)
    # the other (arm, seed) pairs through run_grid, each point naming its seed; then every row in ablation's order
    # (arm by arm, the seed fastest) and columns (the switches and raa, the seed, the metrics, the other fields)
    points = claim_arms()
    runs = [(k, seed) for k in range(len(points)) for seed in seeds]
    rows = {(k, seed): _row(c, given[c]) for k, seed in runs if (c := base.replace(**points[k], seed=seed)) in given}
    rest = [(k, seed) for k, seed in runs if (k, seed) not in rows]
    frame = run_grid(run, base, [{**points[k], "seed": seed} for k, seed in rest], metrics=metrics_of, client=client,
                     cache=cache, group=plans_of)
    rows.update(zip(rest, frame.to_dict("records")))
    lead = list(dict.fromkeys(key for point in points for key in point)) + ["seed"]
    out = pd.DataFrame([rows[r] for r in runs])
    out = out[lead + [k for k in frame.columns if k not in lead]]
    out.insert(0, "arm", [arm_name(row) for row in out[[*SWITCHES, "raa"]].to_dict("records")])
    return out


def start_claims_ahead(config: CapstoneConfig, *, pool_size: int | None = None, cache=None):
    """At ``paper``, start now on a Dask worker the ablation's days that read no resource plans (every arm but the
    stage optimiser with RAA, which :func:`claims_frame` sends to a worker as one task per seed so a day is planned
    once), while the kernel makes the day and runs its example on one core. Each day lands in the sweep cache;
    :func:`claims_frame` reads those stored, computes itself those the worker has not started yet, and waits only
    for the one it is running (:func:`cluster_sim.sweep.start_ahead`): the same points, the same frame. Returns
    ``start_ahead``'s handle, or None where nothing is worth starting (``ci`` and ``default``: the days take
    seconds; the test suite; one core; no sweep cache)."""
    if estimated_seconds(config.replace(**{s: True for s in SWITCHES})) <= AUTO_PARALLEL_SECONDS:
        return None  # the kernel's example takes seconds: nothing to do meanwhile (ci and default)
    return start_ahead([dict(_days_without_plans(config, pool_size), estimate=estimated_seconds)], cache=cache)


def _days_without_plans(config: CapstoneConfig, pool_size: int | None = None) -> dict:
    """:func:`start_claims_ahead`'s sweep (``run_grid``'s arguments): the claims' days whose arm reads no plans, but
    the first (no mechanism on, at the config's seed): :func:`claims_frame`'s sweep times that cheap day in the
    kernel to choose where the rest run, as it did before any day started ahead; had the worker stored it, the first
    day left to time would be one with plans, minutes alone in the kernel while a core idles."""
    base = config.replace(**{s: False for s in SWITCHES})
    size = pool_size_for(config) if pool_size is None else pool_size
    points = [{**arm, "seed": seed} for arm in claim_arms() for seed in _claims.pool(config.seed, size)]
    return dict(run=run, base_config=base, grid=[p for p in points[1:] if plans_of(base.replace(**p))[1] != "plans"],
                metrics=metrics_of)


def estimated_seconds(config: CapstoneConfig) -> float:
    """One day's estimated seconds (``config.work().seconds``)."""
    return config.work().seconds


def _row(config: CapstoneConfig, result: CapstoneResult) -> dict:
    """A given run's row as run_grid makes one: the config's fields and the metrics, numpy scalars as Python's."""
    values = {str(k): v.item() if isinstance(v, np.generic) else v for k, v in metrics_of(result).items()}
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)} | values


def _given_runs(base: CapstoneConfig, seeds: list, results) -> dict:
    """``results`` by config, each checked to be a day of one of the claims' arms at a seed of the pool."""
    if isinstance(results, CapstoneResult) or not hasattr(results, "__iter__"):
        raise ValueError(f"results={type(results).__name__} is not allowed: give a tuple of the runs the notebook "
                         "made (e.g. (example,)), or () for none")
    allowed = {base.replace(**arm, seed=seed) for arm in claim_arms() for seed in seeds}
    given = {}
    for r in results:
        if not isinstance(r, CapstoneResult):
            raise ValueError(f"results holds a {type(r).__name__}: give what cluster_sim.capstone.run returned")
        if r.config not in allowed:
            raise ValueError(f"results holds the run of a config that is none of the claims' arms at seeds "
                             f"{seeds[0]}-{seeds[-1]} (seed {r.config.seed}): the claims read only their own runs; "
                             "give those, or leave them out")
        given[r.config] = r
    return given


def claims_table(config: CapstoneConfig, *, pool_size: int | None = None, client=None, cache=None,
                 frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Lab 10's claims measured over ``claims.pool(config.seed, pool_size)`` (or on ``frame``, the
    ablation :func:`claims_frame` gave, so a notebook runs it once)."""
    if frame is None:
        frame = claims_frame(config, pool_size=pool_size, client=client, cache=cache)
    return _claims.measure(CLAIMS, frame, lab=LAB)


__all__ = ["CLAIMS", "LAB", "OWN", "POOL_SIZES", "arm_name", "claim_arms", "claims_frame", "claims_table",
           "estimated_seconds", "pool_size_for", "start_claims_ahead"]
