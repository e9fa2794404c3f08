"""The sweep's cache on disk: what a point is stored under (its key) and how (a checksummed JSON entry).

A key hashes the config's fingerprint, the run and metrics functions' fingerprints (:mod:`cluster_sim.fingerprint`)
or the sweep's ``cache_key=``, the package's version and a digest of the whole package's source. An entry holds a
point's scalar metrics (floats exact), its key and a checksum of both: reading one runs no code, and one that fails
a check is ignored with a :class:`SweepCacheWarning`. The format is described in :mod:`cluster_sim.sweep`'s docstring.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import math
import os
import struct
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

from ..fingerprint import Unfingerprintable, fingerprint


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
    """A digest of every .py file of the package (cluster_sim, not only this folder): editing a lab invalidates its
    cached points."""
    global _SOURCE_DIGEST
    if _SOURCE_DIGEST is None:
        h = hashlib.sha256()
        root = Path(__file__).resolve().parents[1]  # cluster_sim/, of which the sweep is one folder
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
    try:
        _write_aside(path, data)
    except OSError as err:  # a full disk or a read-only cache costs the entry, not the sweep's results
        warnings.warn(f"run_grid: cannot store the cache entry {path}: {err}", SweepCacheWarning, stacklevel=3)
        return False
    return True


def _write_aside(path: Path, data: bytes) -> None:
    """``data`` as the file ``path`` (its folder made), written aside and then renamed: an interrupt never leaves
    half a file. An ``OSError`` (a full disk, a read-only cache) is the caller's to say."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)

