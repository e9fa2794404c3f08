"""Exact metrics of seeded runs of every lab that runs on the engine, before and after a refactor.

``golden_metrics.json`` was written by this module from the engine as it stood before the seams
refactor (issue 8: ``model.schedule``, the Scheduler template, one ledger with tagged holds). The
test in ``test_golden.py`` recomputes every scenario and requires identical numbers (floats compared
by their exact repr), so a refactor that changes any result, however slightly, is caught.

    python -m tests.engine.golden --write   # only when a change of results is intended and explained

Intended changes, each explained:

- ``rminer_smart_synchronous`` (issue 8): the old RM scheduler kept a ledger of its own and settled
  it lazily, only when certain listeners fired, so the RM filter at a job's arrival could read shadow
  that a due RM completion should already have returned. Every event now settles the one ledger
  first. The old code with its filter settling first gives exactly the new numbers (checked).
- ``rminer_smart_synchronous`` (issue 13): SmartRM's filter threshold is the update delay, as §4.7
  says (SmartRM-C 2x, SmartRM-A 4x); it was twice that (SmartRM's shadow resource time T_s + W_d was
  counted again in the threshold), so fewer, shorter tasks are diverted now.
- ``rminer_*_staggered`` (issue 13): with staggered view refreshes, shadow is what *no* view can see,
  for the meter as for the RM scheduler: a release stays shadow until the next refresh of any view
  (``RMinerConfig.shadow_period`` = d_u / views). The meter used to keep each view's own shadow
  (d_u long) and average them, while the RM side cleared its shadow at every view's refresh. For
  ``none`` only ``shadow_ratio`` and ``theory_shadow_ratio`` change (d_u/2l becomes d_u/(2 k l));
  for ``safe`` and ``smart`` the RM filter's nominal shadow (factor 2 of §3.3) now uses the same
  period, so its threshold is no longer pinned at its lower clip and more tasks are diverted.
  ``rminer_none_synchronous`` and ``rminer_safe_synchronous`` are unchanged.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

FILE = Path(__file__).with_name("golden_metrics.json")


def _clean(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out[k] = _clean(v)
        elif isinstance(v, float):
            out[k] = "nan" if math.isnan(v) else repr(v)
        elif isinstance(v, (int, str, bool)):
            out[k] = v
        elif hasattr(v, "item"):
            out[k] = _clean({"x": v.item()})["x"]
    return out


def engine_scenarios() -> dict:
    import dataclasses

    from cluster_sim.engine import ClusterConfig, run

    base = ClusterConfig.ci()
    cases = {
        "ci": base,
        "stale_4sched": base.replace(schedulers=4, update_delay=1.0, load=0.9),
        "staggered": base.replace(schedulers=3, update_delay=2.0, view_refresh="staggered"),
        "dags_lognormal": base.replace(stages_per_job=4, duration_dist="lognormal", size_dist="lognormal"),
        "best_fit_hetero": base.replace(placement="best_fit", hardware_types=3, speed_spread=1.0, load=1.2),
        "random_assign": base.replace(assignment="random", schedulers=3, update_delay=0.5, think_time=0.05),
        "oversized_tail": base.replace(cpu_per_machine=2, mean_task_cpu=1.5, tasks_per_job=1.0),
    }
    return {name: dataclasses.asdict(run(cfg).metrics) for name, cfg in cases.items()}


def lab_scenarios() -> dict:
    from cluster_sim.engine import ClusterConfig
    from cluster_sim.rminer import RMinerConfig
    from cluster_sim.rminer import run as rminer_run
    from cluster_sim.shaper.lab import ShaperConfig, run_cluster, run_job
    from cluster_sim.stageopt.agents import run_cluster as stage_run

    out = {}
    shaper = ShaperConfig.ci()
    for mode in ("conservative", "aggressive", "not_started", "cost_aware"):
        r = run_job(shaper.replace(mode=mode, cost_error=0.3))
        out[f"shaper_job_{mode}"] = {"latency": r.shaped.latency, "area": r.shaped.allocation_area,
                                     "off_latency": r.runs["off"].latency, "released": r.released}
    c = run_cluster(shaper)
    for mode, cr in c.runs.items():
        out[f"shaper_cluster_{mode}"] = {"queueing": float(cr.jobs["queueing"].sum()),
                                         "completion": float(cr.jobs["completion"].sum()), "released": cr.released}
    cfg = ClusterConfig.ci().replace(hardware_types=3, speed_spread=1.0, stages_per_job=2)
    for planner in ("ipa", "fuxi"):
        import dataclasses

        out[f"stageopt_{planner}"] = dataclasses.asdict(stage_run(cfg, planner).metrics)
    rm = RMinerConfig.ci().replace(horizon=6.0)
    for mode in ("none", "safe", "smart"):
        for refresh in ("synchronous", "staggered"):
            r = rminer_run(rm.replace(mode=mode, view_refresh=refresh))
            out[f"rminer_{mode}_{refresh}"] = {**r.summary(), **{k: v for k, v in r.counts.items()}}
    return out


def compute() -> dict:
    return _clean({"engine": engine_scenarios(), "labs": lab_scenarios()})


if __name__ == "__main__":
    if "--write" in sys.argv:
        FILE.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {FILE}")
    else:
        print(json.dumps(compute(), indent=1, sort_keys=True))
