"""Argument checks shared by the pure functions of labs 06–07: every message names the argument.

>>> finite_array([[1.0, float("nan")]], "L")
Traceback (most recent call last):
...
ValueError: L[0, 1] is nan: L must hold finite numbers
>>> whole_number(2.5, "alpha", lo=1)
Traceback (most recent call last):
...
ValueError: alpha=2.5 must be a whole number >= 1
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _where(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def finite_array(x, name: str, *, nonneg: bool = False, what: str = "finite numbers") -> np.ndarray:
    """``x`` as a float array; a ``ValueError`` naming the first NaN/inf (or negative) entry of ``name``."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
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


def whole_number(x, name: str, *, lo: int = 0) -> int:
    """A scalar whole number >= ``lo`` (numpy and float forms of whole numbers accepted)."""
    ok = isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) and x == int(x) and x >= lo
    if not ok:
        raise ValueError(f"{name}={x!r} must be a whole number >= {lo}")
    return int(x)


def real_number(x, name: str, *, lo: float | None = None, hi: float | None = None, lo_open: bool = False) -> float:
    """A finite real scalar in ``lo..hi``."""
    ok = isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)
    if ok and lo is not None:
        ok = x > lo if lo_open else x >= lo
    if ok and hi is not None:
        ok = x <= hi
    if not ok:
        rng = " and ".join(s for s in ((f"{'>' if lo_open else '>='} {lo}" if lo is not None else ""),
                                       (f"<= {hi}" if hi is not None else "")) if s)
        raise ValueError(f"{name}={x!r} must be a finite number{' ' + rng if rng else ''}")
    return float(x)
