"""A day's resource plans stored on disk, keyed by what decides them: :func:`stored_plans`, :func:`store_plans`.

The stage optimiser's plans of a day (:func:`~cluster_sim.capstone.plans.resource_plans`) are a pure function of the
day's config, the package's code and the libraries that train and run the latency model. At ``paper`` they take
about 45 s of CPU a day, and Lab 10's notebook needed the same day's plans in two processes: the kernel (for the
example with every mechanism on) and the Dask worker that runs the other arms with the plans at that seed. Stored
here, each day is planned once per notebook, and every other process reads it back (Lab 03 keeps its contract fits
the same way: :mod:`cluster_sim.morpheus.slo.stored`).

The store is the sweep cache's (:mod:`cluster_sim.sweep.cache`), in its folder ``capstone_plans``: for each day, an
``.npz`` of plain arrays (read with ``allow_pickle=False``: reading runs no code) and a sweep-cache entry (checksummed
JSON) that names the arrays file's SHA-256 (which the file's name ends with) and sizes. An entry or arrays file that
fails a check (absent, damaged, another day's, arrays that do not fit together) is ignored with a
:class:`~cluster_sim.sweep.SweepCacheWarning` and the day is planned again. The key hashes the day's config (its
fingerprint), the package's version and a digest of its source, and the versions of NumPy, SciPy and scikit-learn:
editing the package or upgrading one of them plans afresh. ``$CLUSTER_SIM_SWEEP_CACHE`` names the folder for every
process of a notebook (the workers inherit the kernel's environment).

A plan read back equals the plan made, bit for bit, but for each plan's ``solve_seconds``: a wall-clock time, which
is the first process's (no result reads it).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import warnings
from pathlib import Path

import numpy as np

from ..fingerprint import fingerprint
from ..sweep.cache import (SweepCacheWarning, _cache_get, _cache_path, _cache_put, _source_digest, _version,
                           _write_aside, cache_dir)
from ..stageopt.optimizer import StagePlan

__all__ = ["FOLDER", "PLANS_FORMAT", "plans_key", "store_plans", "stored_plans"]

PLANS_FORMAT = "cluster_sim.capstone.stored_plans/1"
#: the store's folder inside the sweep cache's
FOLDER = "capstone_plans"
#: a paper day's arrays are about 9 MB; no arrays file is larger (a larger file did not come from this module)
MAX_ARRAYS_BYTES = 1 << 30
#: each plan's per-vertex arrays, stored concatenated over the day's stages in key order
_VERTEX_ARRAYS = {"ipa_assignment": np.int64, "ipa_theta": np.float64, "ipa_latency": np.float64,
                  "raa_assignment": np.int64, "raa_theta": np.float64, "raa_latency": np.float64,
                  "durations": np.float64}


def _library_versions() -> dict:
    return {name: importlib.metadata.version(name) for name in ("numpy", "scipy", "scikit-learn")}


def plans_key(config) -> str:
    """What a day's plans are stored under: a hash of everything that decides them (the module docstring);
    ``config`` is the day's config (:func:`~cluster_sim.capstone.day.day_config`)."""
    payload = json.dumps({"format": PLANS_FORMAT, "config": fingerprint(config), "version": _version(),
                          "source": _source_digest(), "libraries": _library_versions()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _folder(directory) -> Path | None:
    folder = cache_dir(directory) if directory is not False else None
    return None if folder is None else Path(folder) / FOLDER


def _arrays_path(folder: Path, key: str, sha256: str) -> Path:
    """Named by its content too: two processes that plan the same day at once each write a file of their own (their
    solve times differ), and the entry, written last, names one of them whole."""
    return _cache_path(folder, key).with_name(f"{key}-{sha256[:16]}.npz")


def _arrays(plans) -> dict:
    """The plans as plain arrays: the stages' keys, their vertices' offsets, every per-vertex array concatenated,
    the two methods' names and solve times, and the jobs' tokens."""
    keys = list(plans.stages)
    stages = [plans.stages[k] for k in keys]
    sizes = [s.durations.size for s in stages]
    out = {"keys": np.array(keys, dtype=np.int64).reshape(-1, 2),
           "offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)}
    for name, dtype in _VERTEX_ARRAYS.items():
        plan, field = name.split("_") if name != "durations" else (None, "durations")
        field = {"latency": "predicted_latency"}.get(field, field)
        parts = [getattr(s, field) if plan is None else getattr(getattr(s, plan), field) for s in stages]
        if any(p.dtype != dtype for p in parts):
            raise ValueError(f"store_plans: {name} is not all {np.dtype(dtype)}: these plans cannot be stored")
        out[name] = np.concatenate(parts) if parts else np.zeros((0, 2) if "theta" in name else 0, dtype)
    methods = sorted({(s.ipa.method, s.raa.method) for s in stages})
    if len(methods) > 1:
        raise ValueError(f"store_plans: the stages were planned by several methods {methods}: not stored")
    out["methods"] = np.array(methods[0] if methods else ("", ""), dtype=str)
    out["solve_seconds"] = np.array([(s.ipa.solve_seconds, s.raa.solve_seconds) for s in stages],
                                    dtype=np.float64).reshape(-1, 2)
    out["tokens"] = np.array(list(plans.tokens.items()), dtype=np.int64).reshape(-1, 2)
    return out


def _plans(arrays, build):
    """The plans from their arrays (``build(stages, tokens)`` makes the ResourcePlans), or a ValueError saying what
    does not fit together."""
    from .plans import StageResources

    a = {name: arrays[name] for name in ("keys", "offsets", "methods", "solve_seconds", "tokens", *_VERTEX_ARRAYS)}
    n, offsets = len(a["keys"]), a["offsets"]
    vertices = int(offsets[-1]) if offsets.size else -1
    if a["keys"].shape != (n, 2) or offsets.shape != (n + 1,) or offsets[0] != 0 or np.any(np.diff(offsets) < 0) \
            or a["solve_seconds"].shape != (n, 2) or a["methods"].shape != (2,) or a["tokens"].ndim != 2 \
            or a["tokens"].shape[1:] != (2,):
        raise ValueError("its arrays do not fit together (keys, offsets, methods, solve times, tokens)")
    for name, dtype in _VERTEX_ARRAYS.items():
        shape = (vertices, 2) if "theta" in name else (vertices,)
        if a[name].dtype != dtype or a[name].shape != shape:
            raise ValueError(f"its {name} is {a[name].dtype} {a[name].shape}, not {np.dtype(dtype)} {shape}")
    ipa_method, raa_method = (str(m) for m in a["methods"])
    stages = {}
    for i, (job, stage) in enumerate(a["keys"].tolist()):
        lo, hi = int(offsets[i]), int(offsets[i + 1])
        ipa = StagePlan(ipa_method, a["ipa_assignment"][lo:hi], a["ipa_theta"][lo:hi], a["ipa_latency"][lo:hi],
                        float(a["solve_seconds"][i, 0]))
        raa = StagePlan(raa_method, a["raa_assignment"][lo:hi], a["raa_theta"][lo:hi], a["raa_latency"][lo:hi],
                        float(a["solve_seconds"][i, 1]))
        stages[job, stage] = StageResources(ipa, raa, a["durations"][lo:hi])
    return build(stages, dict(a["tokens"].tolist()))


def stored_plans(config, build, *, directory=None):
    """The plans of the day of ``config`` (a day's config) read from the store, or None: not stored, or stored but
    failing a check (then with a warning, and the caller plans the day again). ``build(stages, tokens)`` makes the
    ResourcePlans; ``directory``: the sweep cache's folder (None: ``$CLUSTER_SIM_SWEEP_CACHE``'s), False for none."""
    folder = _folder(directory)
    if folder is None:
        return None
    key = plans_key(config)
    values = _cache_get(folder, key)  # None, with a warning, for an entry that fails the sweep cache's checks
    if values is None:
        return None
    sha256 = values.get("sha256")
    path = _arrays_path(folder, key, sha256 if isinstance(sha256, str) else "")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_ARRAYS_BYTES + 1)
        if len(data) > MAX_ARRAYS_BYTES:
            raise ValueError(f"it is larger than {MAX_ARRAYS_BYTES} bytes")
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ValueError("its SHA-256 is not the one its entry names")
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            plans = _plans(arrays, build)
        if (len(plans.stages), len(plans.tokens)) != (values.get("stages"), values.get("jobs")):
            raise ValueError("it holds another number of stages or jobs than its entry names")
        return plans
    except (OSError, ValueError, KeyError, EOFError) as err:  # a damaged zip is a ValueError or an OSError
        warnings.warn(f"stored_plans: ignoring the stored plans {path}: {err}; planning the day again",
                      SweepCacheWarning, stacklevel=2)
        return None


def store_plans(config, plans, *, directory=None) -> bool:
    """Store the plans of the day of ``config``; False where there is no store or it cannot be written (a full disk
    or a read-only cache costs the entry, with a warning, not the plans)."""
    folder = _folder(directory)
    if folder is None:
        return False
    key = plans_key(config)
    buffer = io.BytesIO()
    np.savez(buffer, **_arrays(plans))
    data = buffer.getvalue()
    sha256 = hashlib.sha256(data).hexdigest()
    path = _arrays_path(folder, key, sha256)
    try:
        _write_aside(path, data)
    except OSError as err:
        warnings.warn(f"store_plans: cannot store the plans {path}: {err}", SweepCacheWarning, stacklevel=2)
        return False
    # the entry last: an entry always names arrays written whole before it
    return _cache_put(folder, key, f"resource_plans({config!r})",
                      {"sha256": sha256, "stages": len(plans.stages), "jobs": len(plans.tokens)})
