"""Seeded cases for Lab 02's SLO-inference exercise: the deadline d_j read off when the consumers read the output.

§4: a periodic job's deadline is when its consumers need its output, measured from the period start: d_j is a
percentile (``d_percentile``, the median by default) over the runs whose output was read of
``t_out_read - period_start``. :func:`deadline` is the reference (what :func:`~.inference.infer_slo` computes for an
actionable template); :func:`check_deadline` compares a student's ``fn(runs, d_percentile)`` with it on
:func:`deadline_cases` and names the misconception when the answer is a known wrong one.

Example
-------
>>> import numpy as np
>>> def mine(runs, q):
...     read = runs[runs["t_out_read"].notna()]
...     return float(np.percentile(read["t_out_read"] - read["period_start"], q))
>>> check_deadline(mine)
'your deadline agrees on all 6 cases'
>>> check_deadline(lambda runs, q: deadline(runs, q))   # the library's own: refused, the check grades your code
Traceback (most recent call last):
...
cluster_sim.checking.Delegated: <lambda> calls the library's ...deadline...
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ...checking import call_student

__all__ = ["deadline", "deadline_cases", "check_deadline"]


def deadline(runs: pd.DataFrame, d_percentile: float = 50.0) -> float:
    """d_j in seconds after the period start: the ``d_percentile`` of ``t_out_read - period_start`` over the runs
    whose output was read (``t_out_read`` not NaN)."""
    if not 0.0 <= d_percentile <= 100.0:
        raise ValueError(f"d_percentile={d_percentile!r} is out of range: need 0 <= d_percentile <= 100")
    read = runs.t_out_read.to_numpy(float)
    ps = runs.period_start.to_numpy(float)
    ok = ~np.isnan(read)
    if not ok.any():
        raise ValueError("runs has no read run: a deadline needs at least one read time")
    return float(np.percentile(read[ok] - ps[ok], d_percentile))


_MISTAKES = {
    "absolute read times": (
        lambda r, q: float(np.nanpercentile(r.t_out_read.to_numpy(float), q)),
        "you took the percentile of the absolute read times: each run has its own period start, and d_j is measured "
        "from it (t_out_read - period_start)"),
    "the mean": (
        lambda r, q: float(np.nanmean(r.t_out_read.to_numpy(float) - r.period_start.to_numpy(float))),
        "you averaged: one consumer that read very late drags the mean; the paper takes a percentile (here the "
        "d_percentile given)"),
    "unread runs kept": (
        lambda r, q: float(np.percentile(np.nan_to_num(r.t_out_read.to_numpy(float) - r.period_start.to_numpy(float),
                                                       nan=0.0), q)),
        "you counted the runs nobody read as reads at the period start: a run without a read time says nothing about "
        "when the output is needed; leave it out"),
    "from the run's end": (
        lambda r, q: float(np.nanpercentile(r.t_out_read.to_numpy(float) - r.t_end.to_numpy(float), q)),
        "you measured from the run's end (that is the slack): the deadline is a time after the period start"),
}


def deadline_cases(seed: int = 0, n: int = 3) -> list[tuple[pd.DataFrame, float]]:
    """``(runs, d_percentile)`` cases: one template's runs (period starts a day apart from day 3, reads around
    16:00 with noise, one consumer very late, two runs unread), at the median and at another percentile."""
    rng = np.random.default_rng([seed, 4])
    out = []
    for i in range(n):
        k = int(rng.integers(8, 14))
        ps = (3 + np.arange(k)) * 86400.0
        start = ps + rng.uniform(600, 1200, k)
        end = start + rng.uniform(1800, 3600, k)
        read = ps + 57600 + rng.normal(0, 300, k)
        read[int(rng.integers(0, k))] += 6 * 3600  # one consumer very late
        read[rng.choice(k, size=2, replace=False)] = np.nan
        read = np.where(np.isnan(read), np.nan, np.maximum(read, end))
        runs = pd.DataFrame({"template": "etl", "period_start": ps, "t_start": start, "t_end": end,
                             "t_out_read": read})
        out += [(runs, 50.0), (runs, float(rng.choice([25.0, 75.0, 90.0])))]
    return out


def check_deadline(fn: Callable, seeds: Sequence[int] = (0,)) -> str:
    """Compare ``fn(runs, d_percentile)`` with :func:`deadline` on :func:`deadline_cases`; an ``AssertionError``
    names the first case that differs and, for a known misconception, what it is."""
    n = 0
    for seed in seeds:
        for runs, q in deadline_cases(seed):
            want = deadline(runs, q)
            got = call_student(fn, runs.copy(), q, name=getattr(fn, "__name__", "fn"), forbid=deadline)
            n += 1
            try:
                g = float(got)
            except (TypeError, ValueError):
                raise AssertionError(f"seed {seed}, d_percentile={q:g}: return one number (seconds after the period "
                                     f"start), not {got!r}") from None
            if math.isclose(g, want, rel_tol=1e-9, abs_tol=1e-6):
                continue
            case = f"seed {seed}, {len(runs)} runs, d_percentile={q:g}"
            for name, (wrong, why) in _MISTAKES.items():
                w = wrong(runs, q)
                if math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-6) and not math.isclose(w, want, rel_tol=1e-9):
                    raise AssertionError(f"{case}: {why} ({name}). You gave {g:.1f} s, d_j is {want:.1f} s")
            raise AssertionError(f"{case}: you gave {g:.1f} s, d_j is {want:.1f} s after the period start")
    return f"your deadline agrees on all {n} cases"
