"""Exact records of whole Lab 03 cycles (every field of :class:`MorpheusResult`, and the model's admissions,
capacity logs, queue usage and task records), written from the code before round 16's speed-up (s16cap, issue 33).

``result_golden.json`` was written by this module from the capacity scheduler and Morpheus model as they stood
before that round (main at 6b6a1ca). ``test_result_golden.py`` recomputes the cycles and requires every record
equal, so an optimisation that changes a decision, an order, a float's last bit or a recorded series is caught.
Round 17 added the preemption count and the static arm's "resume" worst case at seed 1, written from main at 9402da2
after its cycles equalled both this file's records and tests/engine/capacity_golden.json's (no older field changed):
the records are now a superset of the latter's Lab 03 cycles, so the suite simulates those cycles once, here.

A record is one SHA-256 per field (so a difference names the field): numbers, arrays, frames, dicts, lists and
the objects they hold (a plan, its allocations, the contracts, the workload's runs) are hashed exactly, by their
bytes and their reprs; only ``seconds`` (wall-clock time) is left out, of the result and of its workload.

    python -m tests.morpheus.result_golden --write              # the ci and default cycles (the test's cases)
    python -m tests.morpheus.result_golden --write --paper      # and the paper cycles (kept in the same file)

Write again only when a change of results is intended and explained.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

FILE = Path(__file__).with_name("result_golden.json")
#: the paper cycles kept in the file (each about 10-30 s of CPU): the static and DRA arms and the users'
PAPER_ARMS = ("user", "morpheus", "morpheus_dra")


def _feed(h, obj, seen: set) -> None:
    """Hash ``obj`` exactly into ``h``: its type, then its contents (floats by their bits, arrays by their bytes)."""
    if obj is None or isinstance(obj, (bool, np.bool_, str, bytes)):
        h.update(repr((type(obj).__name__, obj)).encode())
    elif isinstance(obj, (int, np.integer)):
        h.update(f"int:{int(obj)};".encode())
    elif isinstance(obj, (float, np.floating)):
        v = float(obj)
        h.update(f"float:{'nan' if math.isnan(v) else v.hex()};".encode())
    elif isinstance(obj, np.ndarray):
        if obj.dtype == object:
            h.update(f"objarray{obj.shape};".encode())
            for x in obj.ravel().tolist():
                _feed(h, x, seen)
        else:
            a = np.ascontiguousarray(obj)
            h.update(str((a.dtype.str, a.shape)).encode())
            h.update(a.tobytes())
    elif isinstance(obj, pd.DataFrame):
        h.update(f"frame{obj.shape};".encode())
        _feed(h, list(map(str, obj.columns)), seen)
        _feed(h, [str(d) for d in obj.dtypes], seen)
        _feed(h, obj.index.to_numpy(), seen)
        for c in obj.columns:
            _feed(h, obj[c].to_numpy(), seen)
    elif isinstance(obj, pd.Series):
        _feed(h, obj.to_numpy(), seen)
    elif isinstance(obj, dict):
        h.update(f"dict{len(obj)};".encode())
        for k, v in obj.items():  # in insertion order: an order the code gives is part of the result
            _feed(h, k, seen)
            _feed(h, v, seen)
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}{len(obj)};".encode())
        for x in obj:
            _feed(h, x, seen)
    elif isinstance(obj, (set, frozenset)):
        h.update(f"set{len(obj)};".encode())
        for x in sorted(obj, key=repr):
            _feed(h, x, seen)
    elif callable(obj) and hasattr(obj, "__qualname__"):
        h.update(f"callable:{obj.__module__}.{obj.__qualname__};".encode())
    elif dataclasses.is_dataclass(obj) or hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
        if id(obj) in seen:  # an object met again (a run shared by the workload and a frame): by name only
            h.update(f"again:{type(obj).__qualname__};".encode())
            return
        seen.add(id(obj))
        h.update(f"obj:{type(obj).__qualname__};".encode())
        fields = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
        for cls in type(obj).__mro__:
            for s in getattr(cls, "__slots__", ()):
                if hasattr(obj, s):
                    fields[s] = getattr(obj, s)
        for k in sorted(fields):
            if k.startswith("__"):
                continue
            _feed(h, k, seen)
            _feed(h, fields[k], seen)
    else:
        r = repr(obj)
        if " at 0x" in r:
            raise TypeError(f"cannot hash {type(obj)} exactly: its repr names an address ({r})")
        h.update(f"{type(obj).__qualname__}:{r};".encode())


def digest(obj) -> str:
    h = hashlib.sha256()
    _feed(h, obj, set())
    return h.hexdigest()


def cycle_record(config) -> dict:
    """One cycle as :func:`~cluster_sim.morpheus.packing.simulation.simulate` runs it, with its model kept: a
    digest per field of the result (``seconds`` left out) and of the model's admissions, capacities and tasks."""
    from cluster_sim.morpheus.packing.simulation import build_model, collect

    model, w, plan, refused, end = build_model(config)
    model.run_until(end)
    model.check_invariants()
    result = collect(model, config, w, plan, refused, end, 0.0)
    out = {}
    for f in dataclasses.fields(result):
        if f.name in ("seconds", "config"):
            continue
        value = getattr(result, f.name)
        if f.name == "workload":
            value = {k.name: getattr(value, k.name) for k in dataclasses.fields(value) if k.name != "seconds"}
        out[f"result.{f.name}"] = digest(value)
    out["result.summary"] = digest(result.summary())
    scheduler = model.scheduler
    out["model.admissions"] = digest(np.array(scheduler.admissions, dtype=float).reshape(-1, 4))
    out["model.n_admissions"] = len(scheduler.admissions)
    out["model.preempted"] = scheduler.preempted
    out["model.capacity_log"] = digest(model.capacity_log)
    out["model.queues"] = digest({name: (q.guaranteed, q.maximum, q.excess, q.usage.steps(), q.used_ints)
                                  for name, q in scheduler.queues.items()})
    tasks = sorted((t for j in model.jobs for t in j.tasks), key=lambda t: t.id)
    out["model.tasks"] = digest([(t.id, t.machine, t.released, t.start, t.finish, t.state, t.attempts, t.duration)
                                 for t in tasks])
    out["model.metrics"] = digest(repr(model.metrics))
    out["model.used"] = digest([u.steps() for u in model.csv.usage])
    if model.reprovisioner is not None:
        out["model.decisions"] = digest(model.reprovisioner.decisions)
        out["model.granted"] = digest(model.reprovisioner.granted)
    out["model.time"] = digest(model.time)
    return out


def configs(presets=("ci", "default")) -> dict:
    """Every arm at each preset; at ``ci`` also per-run reservations with DRA and the literal worst case."""
    from cluster_sim.morpheus.packing.config import ARMS, MorpheusConfig

    out = {}
    for preset in presets:
        base = MorpheusConfig.from_preset(preset)
        arms = PAPER_ARMS if preset == "paper" else ARMS
        for arm in arms:
            out[f"{arm}_{preset}"] = base.replace(arm=arm)
        if preset == "ci":
            out["morpheus_dra_per_run_ci"] = base.replace(arm="morpheus_dra", reservations="per_run")
            out["morpheus_literal_ci"] = base.replace(arm="morpheus", worst_case="literal")
            out["morpheus_dra_resume_seed1_ci"] = base.replace(arm="morpheus_dra", worst_case="resume", seed=1)
            out["morpheus_resume_seed1_ci"] = base.replace(arm="morpheus", worst_case="resume", seed=1)
            out["morpheus_late0_seed2_ci"] = base.replace(arm="morpheus", late_start=0.0, seed=2)
    return out


if __name__ == "__main__":
    presets = ("ci", "default", "paper") if "--paper" in sys.argv else ("ci", "default")
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    old = json.loads(FILE.read_text()) if FILE.exists() else {}
    records = dict(old)
    for name, config in configs(presets).items():
        if only and name not in only:
            continue
        records[name] = cycle_record(config)
        print(name, records[name]["result.summary"][:16], flush=True)
    if "--write" in sys.argv:
        FILE.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
        print(f"wrote {FILE}")
    else:
        print(json.dumps(records, indent=1, sort_keys=True))
