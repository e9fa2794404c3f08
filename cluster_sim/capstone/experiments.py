"""``run(config)``: one day with the config's switches, and ``ablation(config, seeds)`` over the arms.

The metrics (each the mechanism's own, read off the same run):

* ``slo_violation_rate`` (Morpheus): periodic jobs whose deadline falls within the day that did not
  finish by it (worst case: an unfinished run counts as violated), / those jobs;
* ``value_share`` (Wing): downloads after their job ended (the value attained) / all downloads of
  the day's jobs (what was achievable);
* ``idle_held_share`` (the shaper): the integral of tokens held by jobs but not used by a running
  task / (tokens x day); ``held_share``: all tokens held by jobs / (tokens x day);
* ``mean_stage_latency`` (the stage optimiser): release of a stage to its last vertex's end, over
  completed stages (seconds);
* ``utilisation`` (Resource Miner): CPU held by running tasks, visible or on shadow resources /
  (CPU x day); and ``mean_placement_delay``: a vertex's wait at the placement layer (handed to a
  scheduler to started), which shadow resources shorten where stale views make tasks wait.

Example
-------
>>> r = run(CapstoneConfig.ci().replace(horizon=300.0))
>>> 0.0 <= r.metrics["utilisation"] <= 1.0 and r.metrics["jobs"] > 0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..engine import collect
from ..stageopt.agents import stage_latencies
from ..sweep import run_grid
from ..wing.scheduling.workload import value_attained
from .config import SWITCHES, CapstoneConfig
from .day import Day, make_day
from .model import CapstoneModel

METRICS = ("slo_violation_rate", "value_share", "idle_held_share", "mean_stage_latency", "utilisation")


@dataclass(eq=False)
class CapstoneResult:
    config: CapstoneConfig
    metrics: dict
    jobs: pd.DataFrame  # one row per job: kind, arrival, admitted, finish, deadline
    series: dict


def arm_name(switches: dict) -> str:
    """``none``, ``all``, ``<mechanism>`` (alone) or ``all-<mechanism>`` (all but one); with the stage
    optimiser on but ``raa`` off (IPA placement only), the name ends in ``[ipa]``."""
    on = [s for s in SWITCHES if switches[s]]
    ipa_only = "[ipa]" if switches["stageopt"] and not switches.get("raa", True) else ""
    if not on:
        return "none"
    if len(on) == len(SWITCHES):
        return "all" + ipa_only
    if len(on) == 1:
        return on[0] + ipa_only
    if len(on) == len(SWITCHES) - 1:
        return "all-" + next(s for s in SWITCHES if not switches[s]) + ipa_only
    return "+".join(on) + ipa_only


def run_model(config: CapstoneConfig, *, day: Day | None = None, check_every_event: bool = False,
              tokens: int | None = None, release_rule=None) -> CapstoneModel:
    """Build and run the model to the day's end; the invariants are checked at the end."""
    model = CapstoneModel(config, day=day, tokens=tokens, release_rule=release_rule,
                          check_every_event=check_every_event)
    model.run_until(config.horizon)
    model.check_invariants()
    return model


def run(config: CapstoneConfig, release_rule=None) -> CapstoneResult:
    """One day with ``config``'s switches: the metrics (module docstring). ``release_rule``: see
    :class:`~cluster_sim.capstone.model.CapstoneModel` (the exercise's composition decision)."""
    model = run_model(config, release_rule=release_rule)
    return summarise(model)


def summarise(model: CapstoneModel) -> CapstoneResult:
    config, day, H = model.config_capstone, model.day, model.config_capstone.horizon
    T = model.layer.total
    running = model.csv.usage[0].total(H) + model.csv.hidden_usage[0].total(H)
    cap = float(model.csv.ledger.capacity[:, 0].sum())
    held = model.layer.held.total(H)
    jobs = pd.DataFrame({
        "job": [j.id for j in model.arrived],
        "kind": [j.tag.kind for j in model.arrived],
        "arrival": [j.arrival for j in model.arrived],
        "admitted": [model.layer.admitted.get(j.id, math.nan) for j in model.arrived],
        "finish": [j.finish for j in model.arrived],
        "deadline": [j.tag.deadline for j in model.arrived],
    })
    periodic = jobs[(jobs.kind == "periodic") & (jobs.deadline <= H)]
    violated = ~(periodic.finish <= periodic.deadline)  # NaN (unfinished) counts as violated
    finish = pd.Series(jobs.finish.to_numpy(), index=jobs.job.to_numpy())
    downloads = day.downloads[day.downloads.job.isin(finish.index)]
    value = float(value_attained(downloads, finish).sum())
    result = collect(model)
    latencies = stage_latencies(result)
    started = ~np.isnan(result.tasks["start"])
    delay = result.tasks["start"][started] - result.tasks["released"][started]
    c = model.rm.counts if model.rm is not None else {}
    metrics = dict(
        slo_violation_rate=float(violated.mean()) if len(periodic) else math.nan,
        value_share=value / len(downloads) if len(downloads) else math.nan,
        idle_held_share=(held - running) / (T * H),
        held_share=held / (T * H),
        mean_stage_latency=float(latencies.mean()) if len(latencies) else math.nan,
        utilisation=running / (cap * H),
        shadow_utilisation=model.csv.hidden_usage[0].total(H) / (cap * H),
        conflict_rate=model.metrics.conflict_rate,
        mean_placement_delay=float(delay.mean()) if delay.size else math.nan,
        jobs=len(jobs),
        jobs_completed=int(jobs.finish.notna().sum()),
        periodic_jobs=len(periodic),
        mean_admission_wait=float((jobs.admitted - jobs.arrival).mean()),
        tokens_released=model.layer.released_early,
        rm_placed=c.get("rm_placed", 0),
        rm_collisions=c.get("rm_collisions", 0),
    )
    return CapstoneResult(config, metrics, jobs, {})


def arms() -> list[dict]:
    """Every mechanism alone, all together, all but one, and none (the plain composition)."""
    off = {s: False for s in SWITCHES}
    points = [dict(off)]
    points += [{**off, s: True} for s in SWITCHES]
    points.append({s: True for s in SWITCHES})
    points += [{**{t: True for t in SWITCHES}, s: False} for s in SWITCHES]
    return points


def metrics_of(result: CapstoneResult) -> dict:
    return dict(result.metrics)


def plans_of(config: CapstoneConfig) -> tuple:
    """What an ablation groups its points by (``run_grid``'s ``group=``): the arms that read the day's resource
    plans (the stage optimiser with RAA) go to one Dask worker as one task per seed, so the day is planned once
    (about 45 s of CPU at paper on the current machine) instead of by every worker that starts one of its arms
    before the first has stored them (:mod:`.stored_plans`: a day planned in another process, e.g. the kernel's
    example, is read back); every other arm is a task of its own, so the two workers share the rest evenly (three
    seeds' plans on two workers would leave one idle)."""
    if config.stageopt and config.raa:
        return config.seed, "plans"
    return config.seed, arm_name(config.switches() | {"raa": config.raa})


def ablation(config: CapstoneConfig, seeds, *, points: list[dict] | None = None, client=None,
             cache=None) -> pd.DataFrame:
    """The day at every arm (:func:`arms`, or ``points``) and seed, through ``run_grid``; an ``arm`` column names
    each. On Dask the arms with the resource plans of a seed run on one worker (:func:`plans_of`)."""
    frame = run_grid(run, config, arms() if points is None else points, seeds, metrics=metrics_of,
                     client=client, cache=cache, group=plans_of)
    frame.insert(0, "arm", [arm_name(row) for row in frame[[*SWITCHES, "raa"]].to_dict("records")])
    return frame
