"""Exact records of seeded runs of every lab on the engine's capacity scheduler, before and after a speed-up.

``capacity_golden.json`` was written by this module from the capacity scheduler as it stood before issue
33's speed-up (one full scan of every queue per admission). ``test_capacity_golden.py`` recomputes every
scenario and requires identical records, so an optimisation that changes any decision is caught.

The users of :class:`~cluster_sim.engine.CapacityClusterModel`: Lab 00's tour (two elastic queues,
preemption), Lab 03's Morpheus (a queue per periodic job or run, capacities changing every minute, DRA)
and Lab 05's Wing (organisation queues ordered by value, no backfill, re-keyed jobs); plus engine
scenarios that reach the parts the labs do not (a tree of queues, gangs, preemption, priority order).
Each scenario's record is its metrics and a SHA-256 of every task's (id, machine, released, start,
finish, state) and of the admissions, in order.

    python -m tests.engine.capacity_golden --write   # only when a change of results is intended and explained
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np

FILE = Path(__file__).with_name("capacity_golden.json")


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _number(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    v = float(v)
    return "nan" if math.isnan(v) else repr(v)  # exact: the repr round-trips


def model_record(model) -> dict:
    """Metrics, and a digest of every task's record and of the capacity scheduler's admissions."""
    tasks = sorted((t for j in model.arrived for t in j.tasks), key=lambda t: t.id)
    adm = model.capacity_scheduler.admissions
    m = model.metrics
    return {
        "tasks": _digest(np.array([t.id for t in tasks], dtype=np.int64),
                         np.array([t.machine for t in tasks], dtype=np.int64),
                         np.array([t.released for t in tasks], dtype=float),
                         np.array([t.start for t in tasks], dtype=float),
                         np.array([t.finish for t in tasks], dtype=float),
                         np.array([t.state for t in tasks], dtype="U16")),
        "admissions": _digest(np.array(adm, dtype=float).reshape(-1, 4)),
        "n_admissions": len(adm),
        "preempted": model.capacity_scheduler.preempted,
        "utilisation": _number(m.utilisation),
        "mean_queue_length": _number(m.mean_queue_length),
        "mean_job_wait": _number(m.mean_job_wait),
        "mean_job_completion": _number(m.mean_job_completion),
        "jobs_completed": m.jobs_completed,
        "tasks_by_state": m.tasks_by_state,
    }


def engine_scenarios() -> dict:
    """The tour's runs (Lab 00) and the engine's other shapes: a tree, gangs, priorities, preemption."""
    from cluster_sim.engine import CapacityClusterModel, ClusterConfig, Job, QueueSpec, Stage, Task

    class Gangs(CapacityClusterModel):
        def make_jobs(self, rng):
            jobs = super().make_jobs(rng)
            for j in jobs:
                j.gang = j.n_tasks if j.id % 3 == 0 else 1 + j.id % 2
                j.priority = j.id % 4
            return jobs

    out = {}
    for preset in ("ci", "default"):
        config = ClusterConfig.from_preset(preset)
        tour = [QueueSpec("prod", share=0.7, max_share=1.0), QueueSpec("dev", share=0.3, max_share=0.5)]
        model = CapacityClusterModel(config, tour)
        model.run_until(config.horizon)
        out[f"tour_{preset}"] = model_record(model)
        tree = [QueueSpec("a", share=0.5, max_share=1.0), QueueSpec("b", share=0.4, max_share=0.8),
                QueueSpec("a1", share=0.6, max_share=1.0, parent="a", order="priority"),
                QueueSpec("a2", share=0.4, max_share=0.5, parent="a", backfill=False),
                QueueSpec("b1", share=1.0, max_share=1.0, parent="b", order=lambda j: -j.n_tasks)]
        for preemption in (False, True):
            cfg = config.replace(load=1.3, machines=max(config.machines // 2, 2))
            model = Gangs(cfg, tree, preemption=preemption)
            model.capacity_scheduler.follow("a2", [cfg.horizon / 3, 2 * cfg.horizon / 3],
                                            [(4, 64), (1, 8)], [(8, 128), (2, 16)])
            model.run_until(cfg.horizon)
            out[f"tree_gangs_preemption={preemption}_{preset}"] = model_record(model)

    def job_of(job_id, arrival, n, queue):  # the tour's lending example (§ elastic queues)
        job = Job(id=job_id, arrival=arrival, queue=queue)
        job.stages.append(Stage(0, [Task(10 * job_id + k, job, 0, (1, 1), 10.0) for k in range(n)]))
        return job

    halves = [QueueSpec("prod", share=0.5, max_share=1.0), QueueSpec("dev", share=0.5, max_share=1.0)]
    eight = ClusterConfig(machines=2, cpu_per_machine=4, mem_per_machine=16, placement="first_fit", horizon=40.0)
    for preemption in (False, True):
        model = CapacityClusterModel(eight, halves, jobs=[job_of(0, 0.0, 8, "dev"), job_of(1, 1.0, 4, "prod")],
                                     preemption=preemption)
        model.run_until(40.0)
        out[f"tour_lending_preemption={preemption}"] = model_record(model)
    return out


def morpheus_scenarios(presets=("ci", "default")) -> dict:
    """Lab 03: every arm at ci and default, both reservation layouts and the literal worst case at ci."""
    from cluster_sim.morpheus.packing.config import ARMS, MorpheusConfig
    from cluster_sim.morpheus.packing.simulation import build_model

    out = {}
    for preset in presets:
        base = MorpheusConfig.from_preset(preset)
        variants = {arm: base.replace(arm=arm) for arm in ARMS}
        if preset == "ci":
            variants["morpheus_dra_per_run"] = base.replace(arm="morpheus_dra", reservations="per_run")
            variants["morpheus_literal"] = base.replace(arm="morpheus", worst_case="literal")
            variants["morpheus_resume_seed1"] = base.replace(arm="morpheus", worst_case="resume", seed=1)
        for name, config in variants.items():
            model, _, _, _, end = build_model(config)
            model.run_until(end)
            rec = model_record(model)
            rec["capacity_log"] = _digest(*(np.array(model.capacity_log[n], dtype=float) for n in model.names))
            if model.reprovisioner is not None:
                rec["grants"] = [_number(d["granted"]) for d in model.reprovisioner.decisions]
            out[f"morpheus_{name}_{preset}"] = rec
    return out


def wing_scenarios(presets=("ci", "default")) -> dict:
    """Lab 05: every policy at two capacities, organisation queues without backfill and one cluster queue
    (at ``default``, the three policies that order differently: priority, Wing-Agg and Wing-MIL)."""
    import pandas as pd

    from cluster_sim.wing.scheduling.config import POLICIES, WingConfig
    from cluster_sim.wing.scheduling.experiments import run

    out = {}
    for preset in presets:
        base = WingConfig.from_preset(preset)
        for policy in POLICIES if preset == "ci" else ("prio", "wing_agg", "wing_mil"):
            for capacity in (0.6, 0.3):
                r = run(base.replace(policy=policy, capacity=capacity))
                jobs = r.jobs[["job", "state", "start", "finish", "value"]]
                out[f"wing_{policy}_{capacity}_{preset}"] = {
                    "jobs": str(pd.util.hash_pandas_object(jobs, index=False).sum()),
                    "admissions": _digest(r.admissions[["time", "job"]].to_numpy(dtype=float)),
                    "value": _number(r.value), "events": r.events, "rekeys": r.rekeys}
        for backfill in (True, False):
            r = run(base.replace(policy="wing_agg", capacity=0.4, queues="cluster", backfill=backfill))
            jobs = r.jobs[["job", "state", "start", "finish", "value"]]
            out[f"wing_cluster_backfill={backfill}_{preset}"] = {
                "jobs": str(pd.util.hash_pandas_object(jobs, index=False).sum()),
                "admissions": _digest(r.admissions[["time", "job"]].to_numpy(dtype=float)),
                "value": _number(r.value), "events": r.events}
    return out


def compute() -> dict:
    return {"engine": engine_scenarios(), "morpheus": morpheus_scenarios(), "wing": wing_scenarios()}


if __name__ == "__main__":
    if "--write" in sys.argv:
        FILE.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {FILE}")
    else:
        print(json.dumps(compute(), indent=1, sort_keys=True))
