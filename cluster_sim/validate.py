"""One validation kit for every pure function's arguments: each refusal is a ``ValueError`` naming the
argument, the value and what is allowed.

Config fields are checked by ``param(...)`` (``cluster_sim.config``); this module is for the arguments of
pure functions (arrays of skylines, latency matrices, index vectors, frames of submissions). It gathers
what labs 02–03 (``morpheus``), 06–07 (``stageopt``) and the engine's queue specs used to check each in
their own way, so one rule reads the same everywhere.

>>> number(0.5, "alpha", lo=0, hi=1)
0.5
>>> number(10**400, "alpha", lo=0, hi=1)
Traceback (most recent call last):
...
ValueError: alpha=~1e400 is out of range: allowed 0 <= alpha <= 1
>>> number(0.0, "rho", lo=0, lo_open=True)
Traceback (most recent call last):
...
ValueError: rho=0.0 is out of range: allowed rho > 0
>>> whole_number(2.5, "gang", lo=1)
Traceback (most recent call last):
...
ValueError: gang=2.5 is not allowed: need a whole number >= 1
>>> whole_number(0, "horizon", lo=1)
Traceback (most recent call last):
...
ValueError: horizon=0 is out of range: allowed horizon >= 1
>>> finite_array([[1.0, float("nan")]], "L")
Traceback (most recent call last):
...
ValueError: L[0, 1] is nan: L must hold finite numbers
"""

from __future__ import annotations

import datetime
import math
import numbers
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .config import shown

__all__ = [
    "number",
    "whole_number",
    "whole_numbers",
    "finite_array",
    "index_array",
    "columns",
    "seconds",
    "names",
    "allowed_range",
]


def allowed_range(name: str, lo=None, hi=None, *, lo_open: bool = False, hi_open: bool = False) -> str:
    """``"0 <= alpha <= 1"``, ``"rho > 0"``: the range as a reader writes it."""
    left = f"{lo} {'<' if lo_open else '<='} " if lo is not None else ""
    right = f" {'<' if hi_open else '<='} {hi}" if hi is not None else ""
    if lo is not None and hi is None:
        return f"{name} {'>' if lo_open else '>='} {lo}"
    return f"{left}{name}{right}"


def _as_float(value) -> float:
    """``float(value)``, with an int too large for a float read as infinite (out of any range), and a
    bool or non-number as NaN (refused by every range)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        return math.nan
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def number(value, name: str, *, lo=None, hi=None, lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real number in the range (bounds inclusive unless ``*_open``); NaN, inf and bools refused."""
    v = _as_float(value)
    if math.isnan(v) and not isinstance(value, (float, np.floating)):
        raise ValueError(f"{name}={shown(value)} is not allowed: need a number"
                         + (f" with {allowed_range(name, lo, hi, lo_open=lo_open, hi_open=hi_open)}"
                            if lo is not None or hi is not None else ""))
    ok = math.isfinite(v)
    if ok and lo is not None:
        ok = v > lo if lo_open else v >= lo
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    if not ok:
        if lo is None and hi is None:
            raise ValueError(f"{name}={shown(value)} is not allowed: need a finite number")
        raise ValueError(f"{name}={shown(value)} is out of range: allowed "
                         f"{allowed_range(name, lo, hi, lo_open=lo_open, hi_open=hi_open)}")
    return v


def whole_number(value, name: str, *, lo: int | None = None) -> int:
    """A whole number: an int, or a float with no fraction (numpy forms accepted); bools refused."""
    v = _as_float(value)
    if not math.isfinite(v) or v != math.floor(v):
        need = f"a whole number >= {lo}" if lo is not None else "a whole number"
        raise ValueError(f"{name}={shown(value)} is not allowed: need {need}")
    if lo is not None and v < lo:  # a whole number, below the range: said as ``number`` says it
        raise ValueError(f"{name}={shown(value)} is out of range: allowed {allowed_range(name, lo)}")
    return int(value)


def whole_numbers(values, name: str, *, lo: int = 0, hint: str = "") -> tuple[int, ...]:
    """A non-empty 1-D sequence of whole numbers >= ``lo``; the first bad entry is named (``hint`` is added
    to its message, e.g. how to round a fractional skyline)."""
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    if arr.dtype.kind not in "iuf" or arr.dtype == bool:
        raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype}")
    f = arr.astype(float)
    bad = ~np.isfinite(f) | (f != np.floor(np.where(np.isfinite(f), f, 0))) | (f < lo)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        # the entry as the caller wrote it (a numpy scalar's repr would be np.float64(1.5))
        raise ValueError(f"{name}[{i}]={shown(arr[i].item())} is not allowed: need whole numbers >= {lo}{hint}")
    return tuple(int(v) for v in f)


def _where(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def finite_array(x, name: str, *, nonneg: bool = False, what: str = "finite numbers") -> np.ndarray:
    """``x`` as a float array; a ``ValueError`` naming the first NaN/inf (or negative) entry of ``name``."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be an array of numbers, got {x!r}") from None
    bad = ~np.isfinite(a)
    if bad.any():
        idx = np.argwhere(bad)[0] if a.ndim else ()
        raise ValueError(f"{name}{_where(idx)} is {a[tuple(idx)]}: {name} must hold {what}")
    if nonneg and (a < 0).any():
        idx = np.argwhere(a < 0)[0] if a.ndim else ()
        raise ValueError(f"{name}{_where(idx)}={a[tuple(idx)]} is negative: {name} must hold non-negative {what}")
    return a


def index_array(x, name: str, *, lo: int = 0, hi: int | None = None, what: str = "index") -> np.ndarray:
    """``x`` as an int64 array of whole numbers in ``lo..hi`` (inclusive); the first bad entry is named."""
    a = np.asarray(x)
    if a.dtype.kind == "b" or a.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold whole numbers ({what}s), got dtype {a.dtype}")
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.floor(np.where(np.isfinite(a), a, 0)))
        if bad.any():
            idx = np.argwhere(bad)[0]
            raise ValueError(f"{name}{_where(idx)}={a[tuple(idx)]} is not a whole number: {name} holds {what}s")
    a = a.astype(np.int64)
    if (a < lo).any() or (hi is not None and (a > hi).any()):
        idx = np.argwhere((a < lo) | ((a > hi) if hi is not None else False))[0]
        v = a[tuple(idx)]
        if v < 0 and lo == 0 and hi is None:
            raise ValueError(f"{name}{_where(idx)}={v} is negative: {name} holds {what}s >= 0")
        rng = f"{lo} <= {what} <= {hi}" if hi is not None else f"{what} >= {lo}"
        raise ValueError(f"{name}{_where(idx)}={v} is not a {what}: allowed {rng}")
    return a


def columns(df, required: Sequence[str], name: str) -> pd.DataFrame:
    """``df`` is a non-empty DataFrame holding ``required`` columns."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with columns {list(required)}, got {type(df).__name__}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"{name} is missing column(s) {missing}: need {list(required)}, got {list(df.columns)}")
    if df.empty:
        raise ValueError(f"{name} is empty: need at least one row")
    return df


_CLOCK_TYPES = (datetime.date, datetime.time, datetime.timedelta, np.datetime64, np.timedelta64, pd.Period)


def _clock_values(col: pd.Series) -> str | None:
    """What a column holds when it holds clock values (datetimes, durations, periods) rather than numbers."""
    if (pd.api.types.is_datetime64_any_dtype(col) or pd.api.types.is_timedelta64_dtype(col)
            or isinstance(col.dtype, pd.PeriodDtype)):
        return f"{col.dtype} values"
    if col.dtype == object:
        kinds = sorted({type(v).__name__ for v in col if isinstance(v, _CLOCK_TYPES)})
        if kinds:
            return f"{' and '.join(kinds)} objects"
    return None


def seconds(df: pd.DataFrame, cols: Sequence[str], name: str, *, nan_ok: Sequence[str] = ()) -> None:
    """Times in seconds: every value of ``cols`` a finite number (NaN only in ``nan_ok``, where it means
    "never"), named with the first offending row.

    Datetimes, durations and booleans are refused, not read as numbers: ``float()`` of a datetime64 column
    gives its ticks since 1970 (microseconds or nanoseconds, by its resolution), so an hourly job would get
    a period of 3.6e9 "seconds"."""
    for c in cols:
        col = df[c]
        clock = _clock_values(col)
        if clock is not None or pd.api.types.is_bool_dtype(col):
            raise ValueError(
                f"{name}[{c!r}] holds {clock or 'booleans'}: need seconds as numbers (from datetimes: "
                f"(t - t0).dt.total_seconds() with t0 a reference time, the same for every time column)")
        try:
            values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        except OverflowError:  # an int too large for a float, in an object column: no time is that far
            values = np.array([_as_float(v) for v in col], dtype=float)
        bad = np.isnan(values) & (col.notna().to_numpy() if c in nan_ok else True)
        if bad.any():
            row = col.index[int(np.argmax(bad))]
            raise ValueError(f"{name}[{c!r}] has NaN or a non-number at row {row!r}: need numbers (seconds)"
                             + (" or NaN (never)" if c in nan_ok else ""))
        inf = np.isinf(values)
        if inf.any():
            i = int(np.argmax(inf))
            raise ValueError(f"{name}[{c!r}] is {float(values[i])!r} at row {col.index[i]!r}: need finite seconds"
                             + (" (NaN, not inf, means never)" if c in nan_ok else ""))


def names(df: pd.DataFrame, column: str, name: str) -> None:
    """Every row has a ``column`` name (a row with none would fall out of a groupby without a word)."""
    missing = df[column].isna().to_numpy()
    if missing.any():
        row = df.index[int(np.argmax(missing))]
        raise ValueError(f"{name}[{column!r}] is missing at row {row!r}: every row needs a {column} name")
