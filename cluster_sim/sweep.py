"""One sweep runner for every lab: a grid of configs × seeds → a tidy pandas frame.

:func:`run_grid` runs ``run(config)`` for every point of a grid and every seed, and returns one
row per (point, seed): the grid's fields and the seed first, then the result's metrics, then the
config's other fields. Configs are the labs' frozen dataclasses (``base_config.replace(**point)``),
so every point is validated before anything runs: a bad grid field or value is refused up front
with a ``ValueError`` naming the point.

>>> from cluster_sim.engine import ClusterConfig, run
>>> base = ClusterConfig.ci().replace(horizon=20.0)
>>> df = run_grid(run, base, {"schedulers": [1, 2]}, seeds=2, client="inprocess", cache=False,
...               progress=False)
>>> df[["schedulers", "seed"]].values.tolist()
[[1, 0], [1, 1], [2, 0], [2, 1]]
>>> bool((df["utilisation"] > 0).all())
True

**Metrics protocol.** A row holds the scalar metrics of the result, found in this order:

1. ``metrics=`` given to :func:`run_grid`: a callable ``result -> dict`` of scalars (module-level
   or defined in a notebook; it runs where ``run`` runs, so only the small dict travels back);
2. the result's ``metrics`` attribute: called if it is a method, a mapping used as is, a
   dataclass read as below (the engine's ``ClusterResult.metrics`` is a ``ClusterMetrics``);
3. a mapping or a ``pandas.Series`` result: its items; a number: one column ``value``;
4. a dataclass result: its scalar fields and its scalar-valued properties (e.g. the shaper's
   ``JobResult.savings``).

Non-scalar values (arrays, frames, nested results) are left out; pass ``metrics=`` to pick them.

**Where it runs** (``client=``):

* ``None`` (the default): ``$CLUSTER_SIM_SWEEP_CLIENT`` if set (one of the names below; the test suite
  sets ``inprocess``: two notebooks executing side by side must not each start a cluster), else the
  Dask scheduler at ``DASK_SCHEDULER_ADDRESS`` if that variable is
  set, otherwise ``"auto"``.
* ``"auto"``: points run in this process one after another, each timed; as soon as the points left
  would take more than ``AUTO_PARALLEL_SECONDS`` (a minute) at the pace of the slowest point so far,
  they go to a Dask ``LocalCluster`` (as ``"local"``), else they all run here. The route is decided
  after every point, not from the first alone: a first point the run function remembers (a cycle a
  notebook already showed) takes no time and would keep a long sweep on one core. The slowest pace is
  remembered in this process per run function and base config, so the next sweep of the same runs
  (another grid on the same config) goes to the workers at once instead of running a probe here first. A notebook's sweeps at the ``ci`` and ``default``
  presets take seconds, so they never pay the seconds a cluster takes to start (nor compete with
  other notebooks CI runs at the same time); paper-scale sweeps use every core. The time of a
  point is measured rather than taken from ``config.work()``, which estimates the config's own
  ``run`` and not the smaller or larger function a lab may sweep with it; a caller whose ``run`` is the
  config's own passes ``estimate=`` (e.g. ``lambda c: c.work().seconds``): the route is then chosen before
  anything runs, so a grid of two long points starts both at once instead of timing the first alone. A long
  estimated sweep runs on a LocalCluster of one worker fewer than the cores and in this process too (it would
  otherwise only wait), the longest points first, each worker given one point at a time (see ``_run_lanes``).
  With ``group=``, the rest of the group the probe point began stays here (what it prepared is remembered
  here), run while the workers run the other groups. After :func:`keep_sweep_cluster` (a notebook's setup
  cell) the cluster is kept for the process's next sweeps, and a group goes back to the worker it ran on.
* ``"inprocess"``: one point after another in this process (tests, tiny grids, ``pdb``).
* ``"local"``: a ``LocalCluster`` of ``workers`` processes (default: the cores this process may
  use), one thread each, closed when the sweep ends, fails or is interrupted. Its scheduler, workers
  and dashboard listen on 127.0.0.1 only (anyone who reaches a Dask scheduler can run code on it);
  ``$CLUSTER_SIM_DASK_HOST`` names another address to listen on.
* a ``distributed.Client``, or a scheduler address such as ``"tcp://10.0.0.5:8786"``: the same
  grid, unchanged, on an existing Dask cluster (a client you pass stays open).

**Cache.** Each point's metrics are stored on disk under a key hashing the config (its class and
its fields' values), the fingerprints of the run and metrics functions, the package version and a
digest of the package's source, so a rerun or an interrupted sweep resumes where it stopped, and
editing any lab's code starts afresh. A function's fingerprint (:mod:`cluster_sim.fingerprint`)
covers what decides its result: its code, defaults and closure values and the globals it reads (a
helper it calls, a constant, an array), each fingerprinted in turn; a ``functools.partial``'s
arguments; a callable object's state. A function defined in a notebook is keyed by its code and
the notebook's globals it reads: running its cell again keeps the key, editing it or a global it
reads changes it. What has no stable state (a generator, an open file, a random generator, an
object whose state Python cannot read) is refused with a ``ValueError`` naming where it was found:
pass ``cache_key="..."`` (a string that stands for the functions; change it whenever what they
compute changes) or ``cache=False``.

An entry is a JSON file ``<key>.json``: the metrics (floats written exactly, as ``float.hex``), the
key and a sha256 checksum of both. Reading one runs no code; one that fails a check (damaged, not
JSON, or copied from another key) is computed again with a :class:`SweepCacheWarning` naming the
file. Only numbers, booleans, strings and None are stored: a point whose metrics hold anything else
(a frame, a whole result) is computed every time (``attrs["sweep"]["uncached"]`` counts them).
Entries of earlier versions (``.pkl``) are never read; they can be deleted. The directory is
``cache=`` (a path), else ``$CLUSTER_SIM_SWEEP_CACHE``, else ``$XDG_CACHE_HOME/cluster_sim/sweeps``
(by default ``~/.cache/cluster_sim/sweeps``); ``cache=False`` turns it off. Failed points are not
cached: a rerun tries them again.

**Failures.** A point that raises does not stop the others. With ``on_error="raise"`` (the
default), once every other point has finished, :class:`SweepError` lists each failed point (its
grid values, seed and the exception) and carries the whole frame (``err.frame``, with an ``error``
column) - a student cannot average over rows that silently went missing. ``on_error="record"``
returns that frame instead: metrics NaN and ``error`` set on the failed rows.

**Progress.** A ``tqdm.auto`` bar (a widget in JupyterLab, text in a terminal) shows when
``progress=True``, or with ``progress=None`` as soon as the points finished so far say the rest
will take more than ``PROGRESS_AFTER_SECONDS`` (short sweeps draw no bar, so headless notebook
runs create no widget). ``$CLUSTER_SIM_PROGRESS=text`` draws a plain text bar instead of a
widget (what the headless notebook tests and ``make reproduce`` set: widgets can stall a headless
kernel), ``off`` none; interrupting (Ctrl-C, the notebook's stop button) cancels the pending
points and closes a cluster the sweep started, leaving no workers behind.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import inspect
import itertools
import json
import math
import numbers
import os
import struct
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .fingerprint import Unfingerprintable, fingerprint
from .progress import PROGRESS_AFTER_SECONDS as _PROGRESS_AFTER_SECONDS
from .progress import LazyBar, quiet
from .progress import style as progress_style

__all__ = ["run_grid", "SweepError", "grid_points", "result_metrics", "cache_dir", "cache_key",
           "SweepCacheWarning", "keep_sweep_cluster", "close_sweep_cluster", "MALLOC_ENV",
           "AUTO_PARALLEL_SECONDS", "PROGRESS_AFTER_SECONDS"]

#: ``client="auto"`` starts a LocalCluster when the remaining points are estimated above this
AUTO_PARALLEL_SECONDS = 60.0
#: ``progress=None`` shows a bar when the sweep is estimated above this
PROGRESS_AFTER_SECONDS = _PROGRESS_AFTER_SECONDS
CLIENTS = ("auto", "inprocess", "local")
ON_ERROR = ("raise", "record")


class SweepError(RuntimeError):
    """Some points of a sweep failed; ``frame`` holds every row (``error`` set on the failed ones)."""

    def __init__(self, message: str, frame: pd.DataFrame, failed: pd.DataFrame):
        super().__init__(message)
        self.frame = frame
        self.failed = failed


# ---- the grid --------------------------------------------------------------------------------------
def _field_names(config) -> list[str]:
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise ValueError(f"base_config={config!r} is not a config dataclass instance "
                         "(give e.g. ShaperConfig.ci())")
    return [f.name for f in dataclasses.fields(config)]


def grid_points(base_config, grid: Mapping[str, Sequence] | Sequence[Mapping[str, Any]]) -> list[dict]:
    """The grid's points as dicts of field -> value, checked against the config's fields.

    ``grid`` is a mapping field -> list of values (every combination, the last field varying
    fastest) or a list of dicts (exactly those points).

    >>> from cluster_sim.engine import ClusterConfig
    >>> grid_points(ClusterConfig.ci(), {"schedulers": [1, 2], "load": [0.5]})
    [{'schedulers': 1, 'load': 0.5}, {'schedulers': 2, 'load': 0.5}]
    >>> grid_points(ClusterConfig.ci(), {"scheduler": [1]})
    Traceback (most recent call last):
    ...
    ValueError: grid field 'scheduler' is not a ClusterConfig field; the fields are: ...
    """
    names = _field_names(base_config)
    cls = type(base_config).__name__

    def check_field(name):
        if name not in names:
            raise ValueError(f"grid field {name!r} is not a {cls} field; the fields are: {', '.join(names)}")

    if isinstance(grid, Mapping):
        for name, values in grid.items():
            check_field(name)
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise ValueError(f"grid[{name!r}]={values!r} is not a list of values: give e.g. "
                                 f"{{{name!r}: [{values!r}]}}")
        lists = {name: list(values) for name, values in grid.items()}
        for name, values in lists.items():
            if not values:
                raise ValueError(f"grid[{name!r}] is empty: give at least one value")
        return [dict(zip(lists, combo)) for combo in itertools.product(*lists.values())]
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise ValueError(f"grid={grid!r} must be a mapping field -> list of values, or a list of dicts")
    points = []
    for k, point in enumerate(grid):
        if not isinstance(point, Mapping):
            raise ValueError(f"grid[{k}]={point!r} is not a dict of field -> value")
        for name in point:
            check_field(name)
        points.append(dict(point))
    if not points:
        raise ValueError("grid is empty: give at least one point")
    return points


def _seed_list(base_config, seeds) -> list | None:
    """The seeds to run (None: the config has no seed field, one run per point)."""
    has_seed = "seed" in _field_names(base_config)
    if seeds is None:
        return [base_config.seed] if has_seed else None
    if not has_seed:
        raise ValueError(f"seeds={seeds!r} given, but {type(base_config).__name__} has no seed field: "
                         "leave seeds=None")
    if isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds={seeds!r} is out of range: give a count >= 1 or a list of seeds")
        return [base_config.seed + k for k in range(int(seeds))]
    if isinstance(seeds, (str, bytes, bool)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds={seeds!r} must be a count (seed, seed+1, ...) or a list of seeds")
    out = list(seeds)
    if not out:
        raise ValueError("seeds=[] is empty: give a count >= 1 or at least one seed")
    return out


def _describe(point: Mapping, seed) -> str:
    parts = [f"{k}={v!r}" for k, v in point.items()]
    if seed is not None:
        parts.append(f"seed={seed!r}")
    return ", ".join(parts) or "(the base config)"


def _configs(base_config, points: list[dict], seeds: list | None) -> list[tuple[dict, Any, Any]]:
    """(point, seed, config) for every run, each config built (and so validated) now."""
    out = []
    for k, point in enumerate(points):
        if seeds is not None and "seed" in point:
            raise ValueError(f"grid point {k} ({_describe(point, None)}) sets seed, and seeds= sets it too: "
                             "put the seeds in seeds= only")
        for seed in (seeds if seeds is not None else [None]):
            changes = dict(point) if seed is None else {**point, "seed": seed}
            try:
                config = base_config.replace(**changes) if hasattr(base_config, "replace") \
                    else dataclasses.replace(base_config, **changes)
            except (ValueError, TypeError) as err:
                raise ValueError(f"grid point {k} ({_describe(point, seed)}) is refused: {err}") from err
            out.append((point, seed, config))
    return out


# ---- metrics ---------------------------------------------------------------------------------------
def _scalar(value) -> bool:
    return isinstance(value, (numbers.Number, str, np.generic)) and not isinstance(value, np.ndarray)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _dataclass_scalars(obj) -> dict:
    out = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    for name, attr in inspect.getmembers(type(obj)):
        if isinstance(attr, property) and not name.startswith("_"):
            out[name] = getattr(obj, name)
    return {k: _plain(v) for k, v in out.items() if _scalar(v) and not k.startswith("_")}


def result_metrics(result) -> dict:
    """The scalar metrics of a result, by the protocol in this module's docstring.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class R:
    ...     latency: float
    ...     trace: list
    ...     @property
    ...     def fast(self): return self.latency < 1
    >>> result_metrics(R(0.5, [1, 2]))
    {'latency': 0.5, 'fast': True}
    """
    m = getattr(result, "metrics", None)
    if m is not None and not isinstance(result, (Mapping, pd.Series)):
        if callable(m) and not dataclasses.is_dataclass(m):
            m = m()
        if isinstance(m, Mapping):
            return {k: _plain(v) for k, v in m.items() if _scalar(v)}
        if isinstance(m, pd.Series):
            return {k: _plain(v) for k, v in m.items() if _scalar(v)}
        if dataclasses.is_dataclass(m):
            return _dataclass_scalars(m)
    if isinstance(result, (Mapping, pd.Series)):
        return {k: _plain(v) for k, v in result.items() if _scalar(v)}
    if _scalar(result):
        return {"value": _plain(result)}
    if dataclasses.is_dataclass(result):
        return _dataclass_scalars(result)
    raise TypeError(f"cannot read metrics from a {type(result).__name__}: give run_grid a "
                    "metrics=callable(result) -> dict of numbers")


def _evaluate(config, run: Callable, metrics: Callable | None) -> dict:
    """What each task runs, wherever it runs: the metrics of ``run(config)`` (a small dict). A point
    draws no bar of its own (:func:`cluster_sim.progress.quiet`): the sweep's bar counts points."""
    with quiet():
        result = run(config)
    values = metrics(result) if metrics is not None else result_metrics(result)
    if not isinstance(values, Mapping):
        raise TypeError(f"metrics(result) returned a {type(values).__name__}, not a dict")
    return {str(k): _plain(v) for k, v in values.items()}


# ---- the cache -------------------------------------------------------------------------------------
def cache_dir(cache=None) -> Path | None:
    """Where results are stored: ``cache`` (a path), ``$CLUSTER_SIM_SWEEP_CACHE``, else
    ``$XDG_CACHE_HOME/cluster_sim/sweeps`` (``~/.cache/...``); None when ``cache=False``."""
    if cache is False:
        return None
    if cache is None or cache is True:
        env = os.environ.get("CLUSTER_SIM_SWEEP_CACHE")
        if env:
            return Path(env).expanduser()
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "cluster_sim" / "sweeps"
    if isinstance(cache, (str, os.PathLike)):
        return Path(cache).expanduser()
    raise ValueError(f"cache={cache!r} is not allowed: give a directory, None (the default place) or False")


_SOURCE_DIGEST: str | None = None


def _source_digest() -> str:
    """A digest of every .py file of the package: editing a lab invalidates its cached points."""
    global _SOURCE_DIGEST
    if _SOURCE_DIGEST is None:
        h = hashlib.sha256()
        root = Path(__file__).resolve().parent
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
        _SOURCE_DIGEST = h.hexdigest()[:16]
    return _SOURCE_DIGEST


@functools.cache
def _version() -> str:
    try:
        return importlib.metadata.version("cluster_sim")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _callable_name(fn) -> str:
    if isinstance(fn, functools.partial):
        return f"functools.partial({_callable_name(fn.func)}, ...)"
    name = getattr(fn, "__qualname__", None)
    if isinstance(name, str):
        return f"{getattr(fn, '__module__', None) or '?'}.{name}"
    return f"a {type(fn).__module__}.{type(fn).__qualname__} object"


def _functions_fingerprint(run: Callable, metrics: Callable | None, key: str | None = None) -> str:
    """The part of the key that stands for the run and metrics functions: their fingerprints
    (:mod:`cluster_sim.fingerprint`), or the ``cache_key=`` the sweep was given instead."""
    if key is not None:
        parts = {"cache_key": key}
    else:
        parts = {}
        for role, fn in (("run", run), ("metrics", metrics)):
            try:
                parts[role] = "default" if fn is None else fingerprint(fn)
            except Unfingerprintable as err:
                where = " -> ".join(err.where) if err.where else "it"
                raise ValueError(
                    f"run_grid cannot fingerprint {role}={_callable_name(fn)} for its cache key: "
                    f"{where} is {err.what}. "
                    "Pass cache_key='...' (a string you change whenever what the functions compute changes) "
                    "or cache=False") from None
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _point_key(config, functions: str) -> str:
    try:
        config_fp = fingerprint(config)
    except Unfingerprintable as err:
        raise ValueError(f"run_grid cannot fingerprint the config {config!r} for its cache key: {err}; "
                         "pass cache=False") from None
    payload = json.dumps({"format": ENTRY_FORMAT, "config": config_fp, "functions": functions,
                          "version": _version(), "source": _source_digest()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def cache_key(config, run: Callable, metrics: Callable | None = None) -> str:
    """The hash a point's result is stored under: the config's fingerprint (its class and fields),
    the run and metrics functions' fingerprints (:mod:`cluster_sim.fingerprint`), the package's
    version and a digest of its source. A ``ValueError`` if a function cannot be fingerprinted."""
    return _point_key(config, _functions_fingerprint(run, metrics))


class SweepCacheWarning(UserWarning):
    """A cache entry failed its check (damaged, or not what its name says) and was computed again."""


class _BadEntry(Exception):
    pass


ENTRY_FORMAT = "cluster_sim.sweep/2"
#: no entry is larger (a larger file did not come from this module)
MAX_ENTRY_BYTES = 1 << 22
_STORED = (type(None), bool, int, str)  # as JSON; floats as text, below


def _cache_path(directory: Path, key: str) -> Path:
    return directory / key[:2] / f"{key}.json"


def _float_text(x: float) -> str:
    """A float exactly: ``float.hex``, and a NaN by its bits (its sign and payload are not in "nan")."""
    return "nan:" + struct.pack(">d", x).hex() if math.isnan(x) else x.hex()


def _text_float(text: str) -> float:
    x = struct.unpack(">d", bytes.fromhex(text[4:]))[0] if text.startswith("nan:") else float.fromhex(text)
    if _float_text(x) != text:  # only what _float_text writes (so nothing reads two ways)
        raise _BadEntry(f"the float {text!r} is not written as this module writes floats")
    return x


def _canonical(payload) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def _entry_bytes(key: str, config, values: dict) -> bytes | None:
    """The file a point is stored as (None if a value is not a number, bool, str or None)."""
    metrics = []
    for name, value in values.items():
        if type(value) is float:
            metrics.append([name, {"float": _float_text(value)}])
        elif type(value) in _STORED:
            metrics.append([name, value])
        else:
            return None
    payload = {"format": ENTRY_FORMAT, "key": key, "metrics": metrics, "config": repr(config)}
    return _canonical({"payload": payload, "sha256": hashlib.sha256(_canonical(payload)).hexdigest()})


def _read_entry(path: Path, key: str) -> dict:
    """The metrics a file stores, if it passes every check; else ``_BadEntry`` saying which failed.
    JSON is parsed, never executed; the checksum covers the payload, the payload names its key."""
    with open(path, "rb") as fh:
        data = fh.read(MAX_ENTRY_BYTES + 1)
    if len(data) > MAX_ENTRY_BYTES:
        raise _BadEntry(f"it is larger than {MAX_ENTRY_BYTES} bytes")
    try:
        doc = json.loads(data.decode("ascii"))
        if not isinstance(doc, dict) or sorted(doc) != ["payload", "sha256"]:
            raise _BadEntry("it is not an entry (payload and sha256)")
        if hashlib.sha256(_canonical(doc["payload"])).hexdigest() != doc["sha256"]:
            raise _BadEntry("its checksum does not match its payload")
    except (ValueError, RecursionError, TypeError) as err:  # undecodable text or JSON, or JSON floats
        raise _BadEntry(f"it is not an entry ({type(err).__name__}: {err})") from None
    payload = doc["payload"]
    if not isinstance(payload, dict) or payload.get("format") != ENTRY_FORMAT:
        raise _BadEntry(f"it is not a {ENTRY_FORMAT} entry")
    if payload.get("key") != key:
        raise _BadEntry("it is stored under another point's name")
    metrics = payload.get("metrics")
    if not isinstance(metrics, list):
        raise _BadEntry("its metrics are not a list")
    values = {}
    for item in metrics:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)) or item[0] in values:
            raise _BadEntry(f"the metric {item!r} is not a [name, value] pair of its own")
        name, value = item
        if isinstance(value, dict) and list(value) == ["float"] and isinstance(value["float"], str):
            try:
                values[name] = _text_float(value["float"])
            except (ValueError, OverflowError, struct.error) as err:
                raise _BadEntry(f"the float {value['float']!r} cannot be read ({err})") from None
        elif type(value) in _STORED:
            values[name] = value
        else:
            raise _BadEntry(f"the metric {name!r} holds a {type(value).__name__}")
    return values


def _cache_get(directory: Path | None, key: str) -> dict | None:
    """The stored metrics of a point, or None: absent, or failing a check (then with a warning)."""
    if directory is None:
        return None
    path = _cache_path(directory, key)
    try:
        return _read_entry(path, key)
    except FileNotFoundError:
        return None
    except (OSError, _BadEntry) as err:
        warnings.warn(f"run_grid: ignoring the cache entry {path}: {err}; computing its point again",
                      SweepCacheWarning, stacklevel=3)
        return None


def _cache_put(directory: Path | None, key: str, config, values: dict) -> bool:
    """Store a point's metrics; False if they hold what an entry cannot (a frame, a whole result)."""
    if directory is None:
        return True
    data = _entry_bytes(key, config, values)
    if data is None:
        return False
    path = _cache_path(directory, key)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:  # written aside, then renamed: an interrupt never leaves half a file
            fh.write(data)
        os.replace(tmp, path)
    except OSError as err:  # a full disk or a read-only cache costs the entry, not the sweep's results
        warnings.warn(f"run_grid: cannot store the cache entry {path}: {err}", SweepCacheWarning, stacklevel=3)
        return False
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return True


# ---- execution -------------------------------------------------------------------------------------
def _machine_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Progress(LazyBar):
    """The sweep's bar, in points: with ``progress=None`` opened only once the pace so far says the
    sweep is long (``PROGRESS_AFTER_SECONDS``, read when the sweep starts)."""

    def __init__(self, progress, total: int, done: int):
        super().__init__(total, desc="sweep", unit="point", done=done, show=progress, after=PROGRESS_AFTER_SECONDS)


def _run_here(todo, configs, run, metrics, record, progress):
    for i in todo:
        try:
            values = _evaluate(configs[i], run, metrics)
        except Exception as err:  # a failed point is reported with the others, not raised alone
            record(i, None, err, traceback.format_exc())
        else:
            record(i, values, None, None)
        progress.step()


def _dask_host() -> str:
    """Where a LocalCluster listens: ``$CLUSTER_SIM_DASK_HOST``, by default 127.0.0.1 (this machine only:
    its scheduler, workers and dashboard would otherwise let anyone on the network run code here)."""
    host = os.environ.get("CLUSTER_SIM_DASK_HOST") or "127.0.0.1"
    if not host.strip() or any(c.isspace() for c in host):
        raise ValueError(f"CLUSTER_SIM_DASK_HOST={host!r} is not allowed: give the address a LocalCluster listens "
                         "on, e.g. 127.0.0.1 (the default: this machine only) or 0.0.0.0 (every interface)")
    return host


#: glibc's malloc settings for the processes that run points: a LocalCluster's workers (in place of Dask's
#: ``MALLOC_TRIM_THRESHOLD_=65536``, in ``distributed.nanny.pre-spawn-environ``) and the notebooks' kernel
#: (``kernelspec/kernel.json``'s ``env``, which a test keeps equal to this). Dask's setting hands freed memory back
#: to the system at once and turns off glibc's dynamic mmap threshold: every array over 128 KiB is mapped when
#: made and unmapped when freed, its pages faulted in and zeroed again each time, and Lab 04's doubling makes and
#: frees such tables all the time. Here arrays up to 32 MiB (glibc's largest threshold) come from the heap, and up
#: to 1 GiB freed at its top is kept for the next ones. Measured on Lab 04's paper seed 0 in one process (load
#: 18-21; the same numbers each time): Dask's setting 5.0M minor page faults, 31.6 s system CPU, 43.5 s user, peak
#: RSS 1.77 GiB; glibc's defaults (the kernel before) 0.53M, 12.7 s, 39.9 s, 1.90 GiB; these 0.10M, 5.0 s, 41.6 s,
#: 1.97 GiB; on Lab 05's lake preparation (1,200 jobs a day, load 19) Dask's setting 1.73M faults and 6.3 s of
#: system CPU, glibc's defaults 169k and 1.7 s, settings like these 53k and 0.6 s. Set explicitly, not only left out: a Nanny copies its pre-spawn settings into this process's own
#: environment, and takes that environment over its settings when the next cluster starts.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824",
              "MALLOC_TOP_PAD_": "67108864"}


def _open_client(client, workers: int | None):
    """(client, cluster, close): the Dask client to use and what this sweep must close. A LocalCluster's worker
    processes start with :data:`MALLOC_ENV`."""
    from distributed import Client, LocalCluster
    import dask
    import logging

    if client == "local":
        n = workers or _machine_workers()
        host = _dask_host()
        # port 0: a free port for the dashboard (another cluster may hold 8787)
        dashboard = f"[{host}]:0" if ":" in host else f"{host}:0"
        # the nanny puts its pre-spawn variables into this process's environment (an earlier cluster's stay there
        # and win over the config): set ours for the workers' start, and give this process its own back after
        saved = {k: os.environ.get(k) for k in MALLOC_ENV}
        os.environ.update(MALLOC_ENV)
        try:
            with dask.config.set({f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in MALLOC_ENV.items()}):
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host=host,
                                       dashboard_address=dashboard, silence_logs=logging.ERROR)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return Client(cluster), cluster, True
    if isinstance(client, str):
        return Client(client), None, True
    return client, None, False


#: the LocalCluster ``client="auto"`` started, kept for this process's next sweeps while its workers live, once
#: :func:`keep_sweep_cluster` is on (a notebook's sweeps at paper scale: each new cluster costs its start, and its
#: fresh workers would prepare again what the last ones remembered, e.g. Lab 05's lakes): client, cluster, its
#: (workers, host), and ``homes``, the worker each group key (``run_grid(group=)``) last ran on. Closed at exit, by
#: :func:`close_sweep_cluster`, or when a sweep on it fails or is interrupted (a cancelled point may still be running
#: in a worker).
_KEPT: dict = {}
_AT_EXIT: list = []
_KEEP: list = [False]


def keep_sweep_cluster(keep: bool = True) -> None:
    """Whether ``client="auto"`` keeps the LocalCluster it starts for this process's next sweeps (off by default:
    a sweep's cluster is closed when the sweep ends, and its workers' memory with it). A notebook whose sweeps at
    paper scale reuse what the workers prepared turns it on in its setup cell (Lab 05: each seed's lake, prepared
    once on one worker; a group of points goes back to the worker it ran on). The kept cluster's workers start with
    :data:`MALLOC_ENV`. It is closed at exit, by :func:`close_sweep_cluster`, or by ``keep_sweep_cluster(False)``.
    Sweeps at the ``ci`` and ``default`` presets never start a cluster, so this changes nothing there."""
    if type(keep) is not bool:
        raise ValueError(f"keep={keep!r} is not allowed: give True (keep the cluster for the next sweeps) or False")
    _KEEP[0] = keep
    if not keep:
        close_sweep_cluster()


def close_sweep_cluster() -> None:
    """Close the LocalCluster ``client="auto"`` keeps between sweeps (if any); the next long sweep starts another.
    Called at exit; call it to free the workers' memory (and what they remember) before then."""
    kept = dict(_KEPT)
    _KEPT.clear()
    if not kept:
        return
    try:
        _close_quietly(kept["client"], kept["cluster"])
    except Exception:  # at exit or after a failure: the cluster may be half gone already
        pass


def _kept_cluster(workers: int | None) -> dict:
    """The cluster ``client="auto"`` keeps (see :data:`_KEPT`): the running one if it has this size and host,
    else a new one (the old one closed)."""
    import atexit

    shape = (workers or _machine_workers(), _dask_host())
    if _KEPT:
        if _KEPT["shape"] == shape and _KEPT["client"].status == "running" and \
                getattr(_KEPT["cluster"].status, "name", "") == "running":
            return _KEPT
        close_sweep_cluster()
    client, cluster, _ = _open_client("local", shape[0])
    _KEPT.update(client=client, cluster=cluster, shape=shape, homes={})
    if not _AT_EXIT:
        atexit.register(close_sweep_cluster)
        _AT_EXIT.append(True)
    return _KEPT


def _close_quietly(dask_client, cluster) -> None:
    """Close a sweep's client and its LocalCluster (if any) without the page of INFO lines closing logs."""
    import logging

    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        dask_client.close()
        if cluster is not None:
            cluster.close()
    finally:
        quiet.setLevel(level)


def _evaluate_group(configs, run: Callable, metrics: Callable | None) -> list[tuple]:
    """One task of a grouped sweep: its points one after another in one process (so what they share, e.g. a
    lab's prepared workload remembered in the worker, is built once); each point's (values, error, traceback)."""
    out = []
    for config in configs:
        try:
            out.append((_evaluate(config, run, metrics), None, None))
        except Exception as err:  # a failed point is reported with the others, not raised alone
            out.append((None, err, traceback.format_exc()))
    return out


def _evaluate_group_on_worker(configs, run: Callable, metrics: Callable | None) -> tuple[str, list[tuple]]:
    """:func:`_evaluate_group` on a Dask worker, and the worker's address (where the group's state now lives)."""
    from distributed import get_worker

    return get_worker().address, _evaluate_group(configs, run, metrics)


def _home_key(key):
    """A group key as a key of ``homes`` (None if it cannot be one: that group has no remembered home)."""
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _groups(todo, configs, group: Callable | None) -> list[list[int]]:
    """The points of ``todo`` in tasks: one each, or (``group`` given) one task per key, in the grid's order."""
    if group is None:
        return [[i] for i in todo]
    tasks: dict[Any, list[int]] = {}
    for i in todo:
        tasks.setdefault(group(configs[i]), []).append(i)
    return list(tasks.values())


def _run_dask(todo, configs, run, metrics, record, progress, client, workers, group=None, here=()):
    """The points of ``todo`` on Dask: ``client`` ``"auto"`` is the LocalCluster kept between sweeps
    (:func:`_kept_cluster`) if :func:`keep_sweep_cluster` is on, else as ``"local"``: a LocalCluster of this
    sweep's own; else a client or an address.
    ``here``: points that run in this process meanwhile (once the others are sent)."""
    from distributed import as_completed

    kept = _kept_cluster(workers) if client == "auto" and _KEEP[0] else None
    if kept is not None:
        dask_client, cluster, close, homes = kept["client"], None, False, kept["homes"]
    else:
        (dask_client, cluster, close), homes = _open_client("local" if client == "auto" else client, workers), {}
    futures = []
    try:
        tasks = _groups(todo, configs, group)
        if group is None:
            futures = dask_client.map(_evaluate, [configs[i] for i in todo], run=run, metrics=metrics, pure=False)
        else:
            # the tasks of most points first (submitted first, and Dask runs higher priorities first among those
            # waiting): a long group handed out last would run alone at the end while the other workers idle (Lab
            # 10's ablation: a seed's six plan-reading arms among single arms); equal sizes in the grid's order
            tasks.sort(key=len, reverse=True)
            # a group goes to the worker it last ran on, which remembers what it prepared, if that worker still
            # lives (a restarted one has another address and remembers nothing); only there, so Dask's work
            # stealing does not move it to a worker that would prepare it again
            keys = [_home_key(group(configs[t[0]])) for t in tasks]
            alive = set(dask_client.scheduler_info(n_workers=-1)["workers"]) if homes else set()
            for t, key in zip(tasks, keys):
                home = homes.get(key) if key is not None else None
                where = {"workers": [home], "allow_other_workers": False} if home in alive else {}
                futures.append(dask_client.submit(_evaluate_group_on_worker, [configs[i] for i in t], run=run,
                                                  metrics=metrics, pure=False, priority=len(t),
                                                  **where))
        index = {f.key: (t, k) for f, t, k in zip(futures, tasks, keys if group is not None else tasks)}
        if here:
            _run_here(here, configs, run, metrics, record, progress)
        for future in as_completed(futures):
            task, key = index[future.key]
            if future.status == "error":  # the task itself failed (a point's error is in its result)
                err = future.exception()
                tb = "".join(traceback.format_exception(type(err), err, future.traceback()))
                for i in task:
                    record(i, None, err, tb)
            elif group is None:
                record(task[0], future.result(), None, None)
            else:
                address, results = future.result()
                if key is not None:
                    homes[key] = address
                for i, (values, err, tb) in zip(task, results):
                    record(i, values, err, tb)
            progress.step(len(task))
            future.release()
    except BaseException:
        if futures:
            dask_client.cancel(futures)
        if kept is not None:
            close_sweep_cluster()  # a cancelled point may still run in a worker: no workers are left behind
        raise
    finally:
        if close:
            _close_quietly(dask_client, cluster)


def _run_lanes(tasks, costs, configs, run, metrics, record, progress, workers: int):
    """``tasks`` (lists of point indices) on a new LocalCluster of ``workers`` processes and in this process, longest
    first (``costs``, their estimated seconds; ties keep the grid's order): each worker is given one task at a time,
    the next when its last one ends, and this process takes the next task whenever it is free.

    Handing every task to Dask's scheduler at once let one worker hold two of Lab 04's three paper seeds while the
    other core idled, and this process only waited: here no worker ever holds a task it has not started, so a free
    lane never waits behind a busy one. Which lane runs a task does not change its numbers (``run`` is
    deterministic), only when it ends."""
    import collections
    import threading

    from distributed import as_completed

    pending = collections.deque(sorted(range(len(tasks)), key=lambda k: -costs[k]))  # stable: ties in grid order
    lock = threading.Lock()  # record and the bar are called from this thread and the feeder
    stop = threading.Event()
    failure: list[BaseException] = []

    def take():
        with lock:
            return pending.popleft() if pending and not stop.is_set() else None

    def finish(task, outcomes):
        with lock:
            for i, (values, err, tb) in zip(task, outcomes):
                record(i, values, err, tb)
            progress.step(len(task))

    dask_client, cluster, close = _open_client("local", workers)
    submitted = {}  # future key -> (task, worker, future)

    def submit(k, address):
        future = dask_client.submit(_evaluate_group, [configs[i] for i in tasks[k]], run=run, metrics=metrics,
                                    pure=False, workers=[address], allow_other_workers=False)
        submitted[future.key] = (tasks[k], address, future)
        return future

    def feed(running):
        try:
            for future in running:
                task, address, _ = submitted.pop(future.key)
                if stop.is_set():
                    break
                if future.status == "error":  # the task itself failed (a point's error is in its result)
                    err = future.exception()
                    tb = "".join(traceback.format_exception(type(err), err, future.traceback()))
                    finish(task, [(None, err, tb)] * len(task))
                else:
                    finish(task, future.result())
                future.release()
                k = take()
                if k is not None:
                    running.add(submit(k, address))
        except BaseException as err:  # raised in this process once the lanes stop
            failure.append(err)
            stop.set()

    feeder = None
    try:
        dask_client.wait_for_workers(workers)
        running = as_completed()
        for address in sorted(dask_client.scheduler_info()["workers"])[:workers]:
            k = take()
            if k is None:
                break
            running.add(submit(k, address))
        feeder = threading.Thread(target=feed, args=(running,), name="run_grid lanes", daemon=True)
        feeder.start()
        while (k := take()) is not None:
            finish(tasks[k], _evaluate_group([configs[i] for i in tasks[k]], run, metrics))
        feeder.join()
        if failure:
            raise failure[0]
    except BaseException:
        stop.set()
        if submitted:
            dask_client.cancel([f for _, _, f in list(submitted.values())])
        raise
    finally:
        if close:
            _close_quietly(dask_client, cluster)


# ---- the runner ------------------------------------------------------------------------------------
#: the slowest point ``client="auto"`` ran in this process, per run function and base config (see _pace_key)
_PACES: dict[tuple, float] = {}


def _pace_key(run: Callable, metrics: Callable | None, base_config) -> tuple | None:
    """What an earlier sweep's pace is remembered under: the run and metrics functions (by name) and the base config
    (its fingerprint), so a notebook's next sweep of the same runs (another grid on the same config: Lab 03's
    footprint rounds, its comparison after its rescue sweep) needs no probe in this process before using the
    workers. None (nothing remembered) for a config that cannot be fingerprinted."""
    try:
        return (_callable_name(run), None if metrics is None else _callable_name(metrics), fingerprint(base_config))
    except Unfingerprintable:
        return None


def run_grid(run: Callable, base_config, grid, seeds=None, *, metrics: Callable | None = None,
             client=None, workers: int | None = None, cache=None, on_error: str = "raise",
             progress: bool | None = None, cache_key: str | None = None,
             group: Callable | None = None, estimate: Callable | None = None, paced_as=None) -> pd.DataFrame:
    """Run ``run(config)`` at every grid point and seed; one row per (point, seed).

    Parameters
    ----------
    run : callable ``config -> result`` (a lab's ``run``, ``run_job``, ...).
    base_config : the config every point changes (a frozen config dataclass).
    grid : mapping field -> list of values (all combinations), or a list of dicts (those points).
    seeds : None (the base config's seed, or the grid's own ``seed`` values), a count ``n``
        (``seed .. seed + n - 1``, the labs' convention) or a list of seeds. The seed varies fastest.
    metrics : optional ``result -> dict`` of scalars (else the protocol in the module docstring).
    client : None, ``"auto"``, ``"inprocess"``, ``"local"``, a ``distributed.Client`` or a
        scheduler address (see the module docstring).
    workers : the size of a LocalCluster this sweep starts (default: the usable cores).
    cache : a directory, None (the default place) or False (no cache).
    on_error : ``"raise"`` (a :class:`SweepError` after the other points finish) or ``"record"``
        (an ``error`` column).
    progress : True, False, or None (a bar once the sweep is estimated to take over a few seconds).
    cache_key : a string that stands for ``run`` and ``metrics`` in the cache key, instead of their
        fingerprints: for functions that cannot be fingerprinted (see the module docstring). Change
        it whenever what they compute changes; sweeps that give the same string share entries.
    group : optional ``config -> key``: on a Dask cluster, the points with the same key go to one worker as
        one task and run there one after another, in the grid's order (e.g. a lab's points on one lake:
        the worker prepares it once and remembers it, where single points would have each worker prepare
        every lake). The frame is the same; in this process the points run in the grid's order anyway.
    estimate : optional ``config -> seconds``: with ``client="auto"``, the points' estimated seconds choose where
        they run before any of them does, instead of timing the first here (which runs it alone, before the
        others start: a grid of two long points ran one after the other). For a ``run`` that ``config.work()``
        estimates (the engine's own ``run``): ``estimate=lambda c: c.work().seconds``. The points then run
        longest first, one at a time on each worker and in this process (``workers`` is then the cluster's
        size; by default one fewer than the cores, as this process is a lane too).
    paced_as : optional config whose remembered pace (``client="auto"``) this sweep shares, instead of
        ``base_config``'s: for a base config that changes what the runs compute but not what they cost
        (Lab 03's footprints measure the trace's runs, ``late_start=0``, on the same cycles as its comparison).

    The frame's ``attrs["sweep"]`` records the runs computed and read from the cache, the computed
    ones the cache could not hold (``uncached``), where they ran and the wall time.
    """
    t0 = time.perf_counter()
    if not callable(run):
        raise ValueError(f"run={run!r} is not callable: give the lab's run function, e.g. run_job")
    if metrics is not None and not callable(metrics):
        raise ValueError(f"metrics={metrics!r} is not callable: give a function result -> dict")
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error={on_error!r} is not allowed: choose one of {', '.join(map(repr, ON_ERROR))}")
    if progress not in (True, False, None):
        raise ValueError(f"progress={progress!r} is not allowed: choose True, False or None")
    progress_style()  # a bad $CLUSTER_SIM_PROGRESS is refused before anything runs
    if workers is not None and (not isinstance(workers, numbers.Integral) or isinstance(workers, bool) or workers < 1):
        raise ValueError(f"workers={workers!r} is out of range: give a count >= 1")
    if client is None:
        client = (os.environ.get("CLUSTER_SIM_SWEEP_CLIENT") or os.environ.get("DASK_SCHEDULER_ADDRESS")
                  or "auto")
    if isinstance(client, str) and client not in CLIENTS and "://" not in client:
        raise ValueError(f"client={client!r} is not allowed: choose one of {', '.join(map(repr, CLIENTS))}, "
                         "a scheduler address such as 'tcp://host:8786', or a distributed.Client")
    if cache_key is not None and (type(cache_key) is not str or not cache_key.strip()):
        raise ValueError(f"cache_key={cache_key!r} is not allowed: give a non-empty string naming what run and "
                         "metrics compute (e.g. 'my_run v2'), or None to fingerprint them")
    if group is not None and not callable(group):
        raise ValueError(f"group={group!r} is not callable: give a function config -> key (e.g. the seed), or None")
    if estimate is not None and not callable(estimate):
        raise ValueError(f"estimate={estimate!r} is not callable: give a function config -> seconds "
                         "(e.g. lambda c: c.work().seconds), or None")
    if client in ("auto", "local"):
        _dask_host()  # a bad $CLUSTER_SIM_DASK_HOST is refused before anything runs
    directory = cache_dir(cache)

    points = grid_points(base_config, grid)
    # a grid that sets seed itself (e.g. every seed of a job next to every delay) needs no seeds=
    seed_list = None if seeds is None and any("seed" in p for p in points) else _seed_list(base_config, seeds)
    runs = _configs(base_config, points, seed_list)  # every config validated before anything runs
    configs = [c for _, _, c in runs]
    if directory is None:
        keys = [""] * len(configs)  # no cache: nothing needs a key (or a fingerprint)
    else:
        functions = _functions_fingerprint(run, metrics, cache_key)  # once: the functions are the same at every point
        keys = [_point_key(c, functions) for c in configs]

    values: list[dict | None] = [None] * len(runs)
    errors: list[str | None] = [None] * len(runs)
    tracebacks: list[str | None] = [None] * len(runs)
    todo = []
    for i, key in enumerate(keys):
        hit = _cache_get(directory, key)
        if hit is None:
            todo.append(i)
        else:
            values[i] = hit
    cached = len(runs) - len(todo)
    uncached = []

    def record(i, result, err, tb):
        if err is None:
            values[i] = result
            if not _cache_put(directory, keys[i], configs[i], result):
                uncached.append(i)
        else:
            errors[i] = f"{type(err).__name__}: {err}"
            tracebacks[i] = tb

    bar = _Progress(progress, len(runs), cached)
    where = "cache"
    try:
        if todo:
            if client == "inprocess":
                where = "inprocess"
                _run_here(todo, configs, run, metrics, record, bar)
            elif client == "auto" and estimate is not None:
                tasks = _groups(todo, configs, group)
                costs = [sum(float(estimate(configs[i])) for i in task) for task in tasks]
                seconds = sum(costs)
                if len(tasks) > 1 and seconds > AUTO_PARALLEL_SECONDS and _machine_workers() > 1 and _KEEP[0]:
                    # a kept cluster (keep_sweep_cluster): its workers, where each group ran before
                    where = "local"
                    print(f"run_grid: {len(todo)} points estimated at ~{seconds:.0f} s in one process: on the kept Dask "
                          f"LocalCluster (client='inprocess' keeps them here)", flush=True)
                    _run_dask(todo, configs, run, metrics, record, bar, "auto", workers, group)
                elif len(tasks) > 1 and seconds > AUTO_PARALLEL_SECONDS and _machine_workers() > 1:
                    where = "local"
                    # this process is one of the lanes: it would otherwise only wait for the workers
                    n = workers or min(_machine_workers() - 1, len(tasks) - 1)
                    print(f"run_grid: {len(todo)} points estimated at ~{seconds:.0f} s in one process: starting a Dask "
                          f"LocalCluster of {n} worker{'s' if n > 1 else ''}, this process running points too "
                          "(client='inprocess' keeps them all here)", flush=True)
                    _run_lanes(tasks, costs, configs, run, metrics, record, bar, n)
                else:
                    where = "inprocess"
                    _run_here(todo, configs, run, metrics, record, bar)
            elif client == "auto":
                where = "inprocess"
                paced = _pace_key(run, metrics, base_config if paced_as is None else paced_as)
                pace = _PACES.get(paced, 0.0)  # the slowest point run here so far (or by an earlier sweep)
                probed = set()  # the groups of the points run here: what they prepared is remembered here
                home = {j: _home_key(group(configs[j])) for j in todo} if group is not None else {}
                for k, i in enumerate(todo):
                    rest = todo[k:]
                    # the rest of a group a point here started stays here (it would be prepared again on a
                    # worker), run while the workers run the other groups
                    mine = [j for j in rest if home.get(j) is not None and home[j] in probed]
                    theirs = [j for j in rest if not (home.get(j) is not None and home[j] in probed)]
                    # decided again after every point: a point the run function remembers takes no time and
                    # says nothing of the rest, so the first point that costs something sets the pace
                    # one point left runs here: a cluster's start would cost more than it saves
                    if len(theirs) > 1 and pace * len(rest) > AUTO_PARALLEL_SECONDS and _machine_workers() > 1:
                        where = "local"
                        print(f"run_grid: {len(rest)} points left at about {pace:.1f} s each (~{pace * len(rest):.0f} "
                              f"s in one process): {len(theirs)} to a Dask LocalCluster of "
                              f"{workers or _machine_workers()} workers"
                              + (f", the {len(mine)} of the groups begun here stay here" if mine else "")
                              + " (client='inprocess' keeps them all here)", flush=True)
                        _run_dask(theirs, configs, run, metrics, record, bar, "auto", workers, group,
                                  **({"here": mine} if mine else {}))
                        break
                    if home.get(i) is not None:
                        probed.add(home[i])
                    t = time.perf_counter()
                    _run_here([i], configs, run, metrics, record, bar)
                    pace = max(pace, time.perf_counter() - t)
                    if paced is not None:
                        _PACES[paced] = pace
            else:
                where = client if isinstance(client, str) else "client"
                _run_dask(todo, configs, run, metrics, record, bar, client, workers, group)
    finally:
        bar.close()

    frame = _frame(runs, values, errors, points, seed_list, on_error == "record" or any(errors))
    frame.attrs["sweep"] = {"runs": len(runs), "cached": cached, "computed": len(todo), "uncached": len(uncached),
                            "failed": sum(e is not None for e in errors), "where": where,
                            "seconds": time.perf_counter() - t0}
    failed = [i for i, e in enumerate(errors) if e is not None]
    if failed and on_error == "raise":
        lines = [f"  {_describe(runs[i][0], runs[i][1])}: {errors[i]}" for i in failed]
        first_tb = tracebacks[failed[0]] or ""
        raise SweepError(
            f"{len(failed)} of {len(runs)} runs of {getattr(run, '__qualname__', run)!r} failed "
            f"(the other {len(runs) - len(failed)} finished and are cached; err.frame holds every row):\n"
            + "\n".join(lines) + f"\nthe first failure's traceback:\n{first_tb}",
            frame, frame.loc[failed])
    return frame


def _frame(runs, values, errors, points, seed_list, with_error: bool) -> pd.DataFrame:
    grid_fields = list(dict.fromkeys(k for p in points for k in p))
    lead = grid_fields + (["seed"] if seed_list is not None and "seed" not in grid_fields else [])
    metric_names = list(dict.fromkeys(k for v in values if v for k in v))
    rows = []
    for (point, seed, config), v, err in zip(runs, values, errors):
        fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
        clash = sorted(set(v or ()) & set(fields))
        if clash:
            raise ValueError(f"metric(s) {clash} have the names of config fields: rename them with metrics=")
        row = {k: fields[k] for k in lead}
        row.update({k: (v or {}).get(k, math.nan) for k in metric_names})
        if with_error:
            row["error"] = err
        row.update({k: val for k, val in fields.items() if k not in row})
        rows.append(row)
    return pd.DataFrame(rows)
