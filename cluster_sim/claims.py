"""Claims: a paper's statement measured over a pool of seeds, with one rule for the verdict.

A :class:`Claim` is what a lab says it reproduces: the paper's statement and where it is made (a figure
or a section), the metric, the two arms it compares (or the metric against a fixed value, or two
metrics of the same runs), the paper's direction, and the paper's own number. :func:`measure` reads
the claims off one tidy frame of runs (what :func:`cluster_sim.sweep.run_grid` returns: one row per
point and seed), so the runs are cached and can go to Dask like every other sweep.

**Paired differences.** Both arms run the same seeds, so the same workload: for each seed (and each
value of the ``pair_on`` columns, e.g. each capacity) the difference treatment − baseline is taken,
then averaged per seed. The seeds are the independent units: ``n`` is the number of seeds, and the
interval is Student's t interval at 95 % on the mean of the per-seed differences,
mean ± t(0.975, n−1) · sd / √n. One seed gives no interval (it is an example, not a measurement).

**The verdict** follows one rule, written here and nowhere else:

* ``"reproduced"``: the interval excludes zero in the paper's direction (for an ``"equal"`` claim: the
  whole interval lies within ± ``tolerance``);
* ``"reversed"``: the interval excludes zero the other way (for ``"equal"``: the interval lies wholly
  outside ± ``tolerance``, reported as ``"differs"``);
* ``"within noise"``: the interval includes zero (or straddles the tolerance band);
* ``"reported"``: a claim with no comparison (``baseline=None``): its size is reported beside the
  paper's with its interval, and no verdict is drawn from it.

The size is reported as ``ratio`` = our mean ÷ the paper's value where the paper gives one. Whether a
claim **must reproduce** (the mechanism's central effect on our workload: the notebook fails when it
does not) or is **reported only** (a size that depends on the paper's trace) is the lab's decision,
with its reason in ``why``.

>>> import pandas as pd
>>> frame = pd.DataFrame({"policy": ["new", "old"] * 4, "seed": [0, 0, 1, 1, 2, 2, 3, 3],
...                       "value": [0.61, 0.50, 0.58, 0.49, 0.66, 0.52, 0.60, 0.50]})
>>> claim = Claim("new_beats_old", "The new policy attains more value", "Fig. 1", "value",
...               treatment={"policy": "new"}, baseline={"policy": "old"}, direction="higher",
...               paper=0.10, must=True, why="the mechanism's central effect")
>>> row = measure([claim], frame).iloc[0]
>>> row["verdict"], int(row["n"]), round(float(row["ours"]), 3), round(float(row["ratio"]), 2)
('reproduced', 4, 0.11, 1.1)
"""

from __future__ import annotations

import dataclasses
import html as _html
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .checking import CheckFailed

__all__ = ["Claim", "ClaimFailed", "measure", "verdict", "check", "record", "records", "show", "pool",
           "summary", "VERDICTS", "DIRECTIONS", "CONFIDENCE", "MIME", "COLUMNS"]

VERDICTS = ("reproduced", "within noise", "reversed", "differs", "reported")
DIRECTIONS = ("higher", "lower", "equal")
CONFIDENCE = 0.95
#: the mime type a notebook's claims table is displayed under, read back by ``make reproduce``
MIME = "application/vnd.cluster-sim.claims+json"
#: the machine-readable columns (``claims.csv``)
COLUMNS = ("lab", "claim", "paper", "ours", "low", "high", "n", "verdict")


class ClaimFailed(CheckFailed):
    """A claim that must reproduce did not; the message names it, its interval and what to try."""


@dataclasses.dataclass(frozen=True)
class Claim:
    """One of a paper's claims, as a lab measures it.

    Parameters
    ----------
    key : a short identifier (``"agg_beats_direct"``), unique within a lab.
    statement : what the paper says, in a sentence a student can check against the paper.
    source : where the paper says it (``"§7.2, Fig. 8"``).
    metric : the frame's column the claim is about.
    treatment : the rows of the arm the paper says is higher/lower (column -> value or list of values).
    baseline : the arm compared with: a mapping (other rows, paired by seed), a string (another metric
        of the same rows, e.g. Little's law's ``"lambda_w"`` beside ``"l"``), a number (a fixed
        reference value), or None (the claim is only reported: the metric's mean and interval).
    direction : ``"higher"``, ``"lower"`` or ``"equal"`` (then ``tolerance`` is the band of agreement).
    paper : the paper's value of the same quantity (the difference, or the metric), for the ratio.
    paper_text : how the paper states it, quoted or summarised (``"Wing-Agg 55 %, Wing-Direct 42 %"``).
    must : True when the notebook must fail if the claim is not reproduced.
    why : why it must reproduce, or why it is only reported.
    hint : what to try when it fails (more seeds, another preset, the modelling choice to look at).
    where : rows both arms are restricted to (column -> value or list of values).
    pair_on : columns besides ``seed`` that pair a treatment row with its baseline row (e.g.
        ``("capacity",)`` when the claim pools capacities); differences are averaged per seed.
    """

    key: str
    statement: str
    source: str
    metric: str
    treatment: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    baseline: Mapping[str, Any] | str | float | None = None
    direction: str | None = None
    tolerance: float | None = None
    paper: float | None = None
    paper_text: str = ""
    must: bool = False
    why: str = ""
    hint: str = ""
    where: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    pair_on: tuple[str, ...] = ()

    def __post_init__(self):
        for name in ("key", "statement", "source", "metric"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"Claim.{name}={value!r} must be a non-empty string")
        if self.baseline is None:
            if self.direction is not None:
                raise ValueError(f"Claim {self.key!r}: direction={self.direction!r} needs a baseline to compare "
                                 "with; a claim with baseline=None is only reported (direction=None)")
            if self.must:
                raise ValueError(f"Claim {self.key!r}: must=True needs a baseline and a direction; a claim with "
                                 "baseline=None is only reported")
        elif self.direction not in DIRECTIONS:
            raise ValueError(f"Claim {self.key!r}: direction={self.direction!r} is not allowed: choose one of "
                             f"{', '.join(DIRECTIONS)}")
        if self.direction == "equal":
            if not _finite_number(self.tolerance) or self.tolerance <= 0:
                raise ValueError(f"Claim {self.key!r}: tolerance={self.tolerance!r} must be a number > 0 for an "
                                 "'equal' claim (the band within which the difference counts as agreement)")
        elif self.tolerance is not None:
            raise ValueError(f"Claim {self.key!r}: tolerance={self.tolerance!r} is only for direction='equal'")
        if isinstance(self.baseline, numbers.Number) and not _finite_number(self.baseline):
            raise ValueError(f"Claim {self.key!r}: baseline={self.baseline!r} must be a finite number")
        if self.paper is not None and not _finite_number(self.paper):
            raise ValueError(f"Claim {self.key!r}: paper={self.paper!r} must be a finite number or None")
        for name in ("treatment", "where"):
            if not isinstance(getattr(self, name), Mapping):
                raise ValueError(f"Claim {self.key!r}: {name}={getattr(self, name)!r} must be a mapping "
                                 "column -> value or list of values")
        if isinstance(self.pair_on, str) or not all(isinstance(c, str) for c in self.pair_on):
            raise ValueError(f"Claim {self.key!r}: pair_on={self.pair_on!r} must be a tuple of column names")

    @property
    def role(self) -> str:
        return "must reproduce" if self.must else "reported"


def _finite_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


# ---- measuring ---------------------------------------------------------------------------------------
def _select(frame: pd.DataFrame, conditions: Mapping[str, Any], claim: Claim, arm: str) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for column, value in conditions.items():
        if column not in frame.columns:
            raise ValueError(f"claim {claim.key!r}: {arm} names column {column!r}, which the frame lacks; "
                             f"its columns are: {', '.join(map(str, frame.columns))}")
        values = list(value) if isinstance(value, (list, tuple, set, frozenset, range)) else [value]
        mask &= frame[column].isin(values).to_numpy()
    rows = frame[mask]
    if rows.empty:
        raise ValueError(f"claim {claim.key!r}: no row of the frame matches its {arm} {dict(conditions)!r}")
    return rows


def _paired_differences(claim: Claim, frame: pd.DataFrame) -> pd.Series:
    """One difference (treatment − baseline, in the paper's sign convention) per seed."""
    if claim.metric not in frame.columns:
        raise ValueError(f"claim {claim.key!r}: metric {claim.metric!r} is not a column of the frame; its "
                         f"columns are: {', '.join(map(str, frame.columns))}")
    if "seed" not in frame.columns:
        raise ValueError(f"claim {claim.key!r}: the frame has no 'seed' column to pair runs by")
    keys = ["seed", *claim.pair_on]
    treated = _select(frame, {**claim.where, **claim.treatment}, claim, "treatment")
    if isinstance(claim.baseline, Mapping):
        base = _select(frame, {**claim.where, **claim.baseline}, claim, "baseline")
        for name, rows in (("treatment", treated), ("baseline", base)):
            dup = rows.duplicated(keys)
            if dup.any():
                varying = [c for c in rows.columns if c not in keys and c != claim.metric
                           and rows[c].astype(str).nunique() > 1]
                raise ValueError(f"claim {claim.key!r}: its {name} has several rows per {keys} (columns that "
                                 f"vary: {varying}); restrict it with where= or pair on them with pair_on=")
        joined = treated[keys + [claim.metric]].merge(base[keys + [claim.metric]], on=keys,
                                                      suffixes=("_t", "_b"), validate="one_to_one")
        if joined.empty:
            raise ValueError(f"claim {claim.key!r}: its treatment and baseline share no {keys}: pair runs of "
                             "the same seeds")
        diff = joined[f"{claim.metric}_t"] - joined[f"{claim.metric}_b"]
    elif isinstance(claim.baseline, str):
        if claim.baseline not in frame.columns:
            raise ValueError(f"claim {claim.key!r}: baseline metric {claim.baseline!r} is not a column of the frame")
        joined = treated
        diff = treated[claim.metric] - treated[claim.baseline]
    elif claim.baseline is None:
        joined = treated
        diff = treated[claim.metric]
    else:
        joined = treated
        diff = treated[claim.metric] - float(claim.baseline)
    values = pd.to_numeric(diff, errors="coerce").astype(float)
    if values.isna().any():
        bad = joined.loc[values.isna().to_numpy(), keys].to_dict("records")[:3]
        raise ValueError(f"claim {claim.key!r}: metric {claim.metric!r} is missing or not a number at {bad}")
    if claim.direction == "lower":
        values = -values
    return values.groupby(joined["seed"].to_numpy()).mean()


def _interval(per_seed: pd.Series) -> tuple[float, float, float, int]:
    from scipy import stats

    n = int(per_seed.size)
    mean = float(per_seed.mean())
    if n < 2:
        return mean, -math.inf, math.inf, n
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * per_seed.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half, n


def verdict(claim: Claim, low: float, high: float) -> str:
    """The one rule (see the module docstring), on an interval in the paper's sign convention."""
    if claim.baseline is None:
        return "reported"
    if claim.direction == "equal":
        tol = claim.tolerance
        if low >= -tol and high <= tol:
            return "reproduced"
        if low > tol or high < -tol:
            return "differs"
        return "within noise"
    if low > 0:
        return "reproduced"
    if high < 0:
        return "reversed"
    return "within noise"


def measure(claims: Sequence[Claim], frame: pd.DataFrame, *, lab: str = "") -> pd.DataFrame:
    """The claims table: one row per claim, measured on ``frame`` (one row per run, with ``seed``).

    ``ours``, ``low`` and ``high`` are in the metric's own sign (a ``"lower"`` claim whose treatment is
    lower has a negative ``ours``); ``low``/``high`` are empty for a claim that is only reported.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame={type(frame).__name__} is not a pandas DataFrame (give run_grid's frame)")
    keys = [c.key for c in claims]
    if len(set(keys)) != len(keys):
        raise ValueError(f"claim keys repeat: {sorted(k for k in set(keys) if keys.count(k) > 1)}")
    rows = []
    for claim in claims:
        if not isinstance(claim, Claim):
            raise ValueError(f"claims must be Claim objects, not {type(claim).__name__}")
        per_seed = _paired_differences(claim, frame)
        mean, low, high, n = _interval(per_seed)
        sign = -1.0 if claim.direction == "lower" else 1.0
        v = verdict(claim, low, high)
        ours = sign * mean
        lo, hi = sorted((sign * low, sign * high))
        rows.append({
            "lab": lab, "claim": claim.key, "statement": claim.statement, "source": claim.source,
            "metric": claim.metric, "role": claim.role, "direction": claim.direction or "",
            "paper": claim.paper, "paper_text": claim.paper_text, "ours": ours,
            "low": math.nan if claim.baseline is None else lo, "high": math.nan if claim.baseline is None else hi,
            "spread": (hi - lo) / 2 if math.isfinite(hi - lo) else math.inf,
            "n": n, "seeds": ",".join(map(str, per_seed.index.tolist())),
            "ratio": ours / claim.paper if claim.paper not in (None, 0) else math.nan,
            "verdict": v, "why": claim.why, "hint": claim.hint,
        })
    return pd.DataFrame(rows)


# ---- checking and showing ------------------------------------------------------------------------------
def _number(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    x = x + 0.0  # -0.0 (a difference of equal runs, negated) would print as "-0"
    return f"{x:+.3g}" if abs(x) < 1e4 else f"{x:+.3e}"


def _interval_text(row) -> str:
    if row["verdict"] == "reported":
        return f"mean {_number(row['ours'])} over {row['n']} seed(s)"
    return f"{_number(row['ours'])}, {CONFIDENCE:.0%} interval [{_number(row['low'])}, {_number(row['high'])}] over {row['n']} seed(s)"


def check(table: pd.DataFrame) -> None:
    """Raise :class:`ClaimFailed` naming every must-reproduce claim that was not reproduced."""
    failed = table[(table["role"] == "must reproduce") & (table["verdict"] != "reproduced")]
    if failed.empty:
        return
    lines = []
    for _, row in failed.iterrows():
        where = f"lab {row['lab']}: " if row["lab"] else ""
        lines.append(f"{where}claim {row['claim']!r} ({row['statement']}; {row['source']}) must reproduce and is "
                     f"{row['verdict']}: paired difference in {row['metric']} {_interval_text(row)}, seeds "
                     f"{row['seeds']}." + (f" Try: {row['hint']}" if row["hint"] else ""))
    raise ClaimFailed("\n".join(lines))


def show(table: pd.DataFrame) -> pd.DataFrame:
    """The table as a student reads it: the statement, the paper, ours with its interval, the verdict."""
    out = pd.DataFrame({
        "claim": table["statement"] + " (" + table["source"] + ")",
        "role": table["role"],
        "paper": [t or _number(p) for t, p in zip(table["paper_text"], table["paper"])],
        "ours (paired difference)": [_interval_text(r) for _, r in table.iterrows()],
        "vs paper": [f"{r:.2g}×" if math.isfinite(r) else "" for r in table["ratio"]],
        "verdict": table["verdict"],
    })
    return out


def summary(table: pd.DataFrame) -> dict[str, int]:
    """How many claims are reproduced, within noise, reversed (or differ), and reported only."""
    counts = table["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def records(table: pd.DataFrame) -> list[dict]:
    """The table as plain JSON-able rows (what ``make reproduce`` reads back)."""
    out = []
    for row in table.to_dict("records"):
        out.append({k: (None if isinstance(v, float) and not math.isfinite(v) else
                        v.item() if isinstance(v, np.generic) else v) for k, v in row.items()})
    return out


def record(table: pd.DataFrame):
    """Display the claims table: as HTML for the reader, and machine-readable for ``make reproduce``."""
    from IPython.display import display

    counts = summary(table)
    line = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    with pd.option_context("display.max_colwidth", None):
        body = show(table).to_html(index=False, escape=True)
    display({MIME: records(table), "text/html": f"<p><b>Claims</b>: {_html.escape(line)}</p>{body}",
             "text/plain": f"Claims: {line}\n" + show(table).to_string(index=False)}, raw=True)


def pool(seed: int, size: int) -> list[int]:
    """The seed pool of a claim: ``size`` seeds from ``seed`` on (a seed override shifts the pool, it
    never shrinks it)."""
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed={seed!r} must be an integer >= 0")
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < 2:
        raise ValueError(f"size={size!r} must be an integer >= 2: one seed is an example, not a pool")
    return list(range(int(seed), int(seed) + int(size)))
