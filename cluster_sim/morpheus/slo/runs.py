"""A job's runs as the LP and J(s) need them: an N x K array of skylines, aligned at their start.

The LP and J(s) assume runs aligned at their start, one-minute steps, zero-padded to the longest run
(:func:`align_skylines`), with finite, non-negative values and at least one used container per run (the
regulariser divides by each run's area). Anything else is refused here with the argument, the offending
value and what is allowed, rather than producing a silently wrong R*. The generic argument rules (numbers
in a range, frames with columns, times in seconds) are :mod:`cluster_sim.validate`'s.

>>> check_skylines([[1, 2], [3, 0]], min_runs=2).shape
(2, 2)
>>> check_skylines([[1, 2], [3]])
Traceback (most recent call last):
...
ValueError: skylines has ragged lengths: run 0 has 2 steps, run 1 has 1; pad the runs with zeros to one length (align_skylines does it)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

MIN_RUNS = 2  # one run is no history: R* would just copy it


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
