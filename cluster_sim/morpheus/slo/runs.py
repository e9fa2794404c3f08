"""Input checks shared by the pure layer: bad input raises ``ValueError`` naming the argument.

The LP and J(s) assume an N x K array of skylines (runs aligned at their start, one-minute steps,
zero-padded to the longest run) with finite, non-negative values and at least one used container
per run (the regulariser divides by each run's area). Anything else is refused here, with the
argument, the offending value and what is allowed, rather than producing a silently wrong R*.

>>> check_skylines([[1, 2], [3, 0]], min_runs=2).shape
(2, 2)
>>> check_skylines([[1, 2], [3]])
Traceback (most recent call last):
...
ValueError: skylines has ragged lengths: run 0 has 2 steps, run 1 has 1; pad the runs with zeros to one length (align_skylines does it)
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ...config import shown

MIN_RUNS = 2  # one run is no history: R* would just copy it


def check_alpha(alpha: float, name: str = "alpha") -> float:
    """``alpha`` as a float in [0, 1]."""
    try:
        a = float(alpha)
    except OverflowError:  # an int too large for a float is out of any range
        a = math.inf
    except (TypeError, ValueError):
        raise ValueError(f"{name}={shown(alpha)} is not allowed: need a number in [0, 1]") from None
    if not 0.0 <= a <= 1.0:  # also refuses nan
        raise ValueError(f"{name}={shown(alpha)} is out of range: allowed 0 <= {name} <= 1")
    return a


def check_nonnegative(value: float, name: str) -> float:
    """A finite float >= 0."""
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    except (TypeError, ValueError):
        raise ValueError(f"{name}={shown(value)} is not allowed: need a finite number >= 0") from None
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name}={shown(value)} is out of range: need a finite number >= 0")
    return v


def check_percentile(q: float, name: str) -> float:
    """A percentile in [0, 100]."""
    try:
        v = float(q)
    except OverflowError:
        v = math.inf
    except (TypeError, ValueError):
        raise ValueError(f"{name}={shown(q)} is not allowed: need a percentile in [0, 100]") from None
    if not 0.0 <= v <= 100.0:
        raise ValueError(f"{name}={shown(q)} is out of range: allowed 0 <= {name} <= 100")
    return v


def _locate(bad: np.ndarray) -> tuple[int, int]:
    i, k = np.argwhere(bad)[0]
    return int(i), int(k)


def check_skylines(skylines, *, min_runs: int = MIN_RUNS, name: str = "skylines") -> np.ndarray:
    """An N x K float array of usable skylines, or a ``ValueError`` that says what is wrong.

    Refused: fewer than ``min_runs`` runs, no steps, ragged rows, NaN or infinite values, negative
    values, and a run that uses no container at all (an empty skyline).
    """
    if isinstance(skylines, np.ndarray):
        rows = skylines
    else:
        rows = list(skylines) if isinstance(skylines, Iterable) else skylines
        if isinstance(rows, list) and rows and all(np.ndim(r) == 1 for r in rows):
            lengths = [len(r) for r in rows]
            if len(set(lengths)) > 1:
                j = next(j for j, n in enumerate(lengths) if n != lengths[0])
                raise ValueError(
                    f"{name} has ragged lengths: run 0 has {lengths[0]} steps, run {j} has {lengths[j]}; "
                    "pad the runs with zeros to one length (align_skylines does it)"
                )
    try:
        arr = np.asarray(rows, dtype=float)
    except (TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"{name} is not an N x K array of numbers: {e}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (runs x steps), got {arr.ndim}-D with shape {arr.shape}")
    n, k = arr.shape
    if n < min_runs:
        raise ValueError(f"{name} has {n} run(s): need at least min_runs={min_runs} runs of history")
    if k == 0:
        raise ValueError(f"{name} is empty: its runs have 0 steps, need at least 1")
    if not np.isfinite(arr).all():
        i, s = _locate(~np.isfinite(arr))
        raise ValueError(f"{name}[{i}, {s}]={float(arr[i, s])!r} is not allowed: need finite numbers (no NaN or inf)")
    if (arr < 0).any():
        i, s = _locate(arr < 0)
        raise ValueError(f"{name}[{i}, {s}]={float(arr[i, s])!r} is negative: container counts must be >= 0")
    empty = np.flatnonzero(arr.sum(axis=1) <= 0)
    if empty.size:
        raise ValueError(
            f"{name} run {int(empty[0])} is an empty skyline (uses no container at all): every run must use some"
        )
    return arr


def check_skyline(skyline, n_steps: int, name: str = "skyline") -> np.ndarray:
    """One candidate allocation s of length ``n_steps``: finite and >= 0."""
    try:
        s = np.asarray(skyline, dtype=float)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name} is not a vector of numbers: {e}") from None
    if s.ndim != 1 or s.shape[0] != n_steps:
        raise ValueError(f"{name} has shape {s.shape}: need ({n_steps},), one value per step of the skylines")
    if not np.isfinite(s).all():
        k = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"{name}[{k}]={float(s[k])!r} is not allowed: need finite numbers (no NaN or inf)")
    if (s < 0).any():
        k = int(np.flatnonzero(s < 0)[0])
        raise ValueError(f"{name}[{k}]={float(s[k])!r} is negative: an allocation must be >= 0")
    return s


def align_skylines(runs: Sequence) -> np.ndarray:
    """Zero-pad runs of different lengths into an N x K array (runs aligned at their start).

    >>> align_skylines([[1, 2, 3], [4]])
    array([[1., 2., 3.],
           [4., 0., 0.]])
    """
    rows = [np.asarray(r, dtype=float).ravel() for r in runs]
    if not rows:
        raise ValueError("runs is empty: need at least one skyline to align")
    k = max(r.size for r in rows)
    out = np.zeros((len(rows), k))
    for i, r in enumerate(rows):
        out[i, : r.size] = r
    return out


def check_columns(df, required: Sequence[str], name: str) -> pd.DataFrame:
    """``df`` is a non-empty DataFrame holding ``required`` columns."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with columns {list(required)}, got {type(df).__name__}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(
            f"{name} is missing column(s) {missing}: need {list(required)}, got {list(df.columns)}"
        )
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


def _number(v) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf
    except (TypeError, ValueError):
        return math.nan


def check_seconds(df: pd.DataFrame, columns: Sequence[str], name: str, *, nan_ok: Sequence[str] = ()) -> None:
    """Times in seconds: every value of ``columns`` a finite number (NaN only in ``nan_ok``, where it means
    "never"), named with the first offending row.

    Datetimes, durations and booleans are refused, not read as numbers: ``float()`` of a datetime64 column
    gives its ticks since 1970 (microseconds or nanoseconds, by its resolution), so an hourly job would get
    a period of 3.6e9 "seconds"."""
    for c in columns:
        col = df[c]
        clock = _clock_values(col)
        if clock is not None or pd.api.types.is_bool_dtype(col):
            raise ValueError(
                f"{name}[{c!r}] holds {clock or 'booleans'}: need seconds as numbers (from datetimes: "
                f"(t - t0).dt.total_seconds() with t0 a reference time, the same for every time column)")
        try:
            values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        except OverflowError:  # an int too large for a float, in an object column: no time is that far
            values = np.array([_number(v) for v in col], dtype=float)
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


def check_names(df: pd.DataFrame, column: str, name: str) -> None:
    """Every row has a ``column`` name (a row with none would fall out of a groupby without a word)."""
    missing = df[column].isna().to_numpy()
    if missing.any():
        row = df.index[int(np.argmax(missing))]
        raise ValueError(f"{name}[{column!r}] is missing at row {row!r}: every row needs a {column} name")
