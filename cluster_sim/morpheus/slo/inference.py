"""SLO inference (paper §4): which jobs are periodic, and a deadline read off their consumers.

**Isolating periodic jobs.** Runs are grouped by their templatised name (an exact name match;
the paper also matches source-code signatures approximately, which a synthetic history has no use
for), and a group is periodic when its submissions arrive at a near-constant interval: the
coefficient of variation ``CV = MAD / median`` of the inter-arrival times (MAD, the median
absolute deviation, is robust to the odd skipped run) is at most ``cv_threshold``. The period is
the median inter-arrival, rounded to ``round_to`` seconds (one minute, the model's time step);
submission times are used, not start times, because they carry no queueing delay. Submissions of a
template at the same instant are one submission (counted in ``n_duplicates``): a log that records
each submission twice would otherwise make half the inter-arrivals 0, and no robust statistic
survives half its sample being one wrong value (the median gap, hence the period, would be 0).

*Off-kilter* periods (58 minutes) are reported as they are: they are periodic, they just do not
divide a day, which matters to the packer (issue 10), not here. *Ad hoc* jobs (fewer than
``min_submissions`` submissions) and *aperiodic* recurring ones (CV above the threshold) come out
with ``periodic = False``.

**Deadlines from provenance** (Fig. 4). Each run has four times, all made relative to the start of
its period: ``T_inAvail`` (inputs written), ``T_start``, ``T_end`` and ``T_outRead`` (first read
of the output). ``a_j``, the earliest start, is a high percentile of ``T_inAvail`` (95th) and
``d_j``, the deadline, the median of ``T_outRead``. A deadline is *actionable* when the output is
read at a roughly fixed time (``CV(T_outRead) <= cv_threshold``) and with real slack (the median of
``(T_outRead - T_end) / (T_end - T_start)`` at least ``min_slack_ratio``). Non-actionable templates
get no SLO (``a_j`` and ``d_j`` are NaN) and stay on manual provisioning. The paper handles
latency-sensitive jobs (read immediately) as a deadline with no slack; we follow its §4
thresholds and leave them on manual provisioning. Its footnote 5 (a daily job read by a monthly
report gets a daily deadline) needs consumer periods we do not model.

All times are seconds, as numbers: datetime columns are refused (see :func:`cluster_sim.validate.seconds`),
as are infinite times and rows with no template.

Example
-------
>>> import pandas as pd
>>> subs = pd.DataFrame({"template": ["a"] * 6 + ["b"] * 2,
...                      "submit_time": [0, 3600, 7205, 10790, 14400, 18000, 50, 9000]})
>>> detect_periodic(subs)[["period", "periodic"]]
          period  periodic
template                  
a         3600.0      True
b            NaN     False
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import validate

SUBMISSION_COLUMNS = ("template", "submit_time")
RUN_COLUMNS = ("template", "period_start", "t_in_avail", "t_start", "t_end", "t_out_read")


def robust_cv(values) -> float:
    """``MAD / median`` of ``values`` (NaN when empty, ``inf`` when the median is 0 but MAD is not).

    >>> robust_cv([10, 11, 9, 10, 30])      # one outlier barely moves it
    0.1
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return float("nan")
    med = float(np.median(x))
    mad = float(np.median(np.abs(x - med)))
    if med == 0:
        return 0.0 if mad == 0 else float("inf")
    return mad / abs(med)


def detect_periodic(
    submissions: pd.DataFrame,
    *,
    cv_threshold: float = 0.1,
    min_submissions: int = 5,
    round_to: float = 60.0,
) -> pd.DataFrame:
    """One row per template (the index): ``period`` (s), ``cv``, ``periodic``, ``n_submissions`` (distinct
    submission times) and ``n_duplicates`` (rows repeating a submission time of the same template,
    counted once).

    ``period`` and ``cv`` are NaN for templates with fewer than 3 submissions (two inter-arrivals are
    the least a dispersion needs); ``periodic`` also needs ``min_submissions``. ``round_to=0`` keeps
    the raw median.

    >>> import pandas as pd
    >>> hourly = [3600.0 * i for i in range(6)]
    >>> d = detect_periodic(pd.DataFrame({"template": "etl", "submit_time": hourly + hourly}))  # logged twice
    >>> d[["period", "periodic", "n_submissions", "n_duplicates"]]
              period  periodic  n_submissions  n_duplicates
    template                                               
    etl       3600.0      True              6             6
    """
    validate.columns(submissions, SUBMISSION_COLUMNS, "submissions")
    validate.names(submissions, "template", "submissions")
    validate.seconds(submissions, ["submit_time"], "submissions")
    thr = validate.number(cv_threshold, "cv_threshold", lo=0)
    quantum = validate.number(round_to, "round_to", lo=0)
    if not isinstance(min_submissions, (int, np.integer)) or min_submissions < 3:
        raise ValueError(f"min_submissions={min_submissions!r} is not allowed: need an integer >= 3")
    rows = {}
    for name, g in submissions.groupby("template", sort=True):
        t = np.unique(g["submit_time"].to_numpy(dtype=float))  # sorted; the same instant twice is one submission
        duplicates = len(g) - t.size
        gaps = np.diff(t)
        if t.size < 3:
            rows[name] = (np.nan, np.nan, False, t.size, duplicates)
            continue
        med = float(np.median(gaps))
        period = quantum * round(med / quantum) if quantum > 0 else med
        cv = robust_cv(gaps)
        rows[name] = (float(period), cv, bool(t.size >= min_submissions and cv <= thr and period > 0), t.size,
                      duplicates)
    out = pd.DataFrame.from_dict(rows, orient="index",
                                 columns=["period", "cv", "periodic", "n_submissions", "n_duplicates"])
    out.index.name = "template"
    return out


def infer_slo(
    runs: pd.DataFrame,
    *,
    a_percentile: float = 95.0,
    d_percentile: float = 50.0,
    cv_threshold: float = 0.1,
    min_slack_ratio: float = 0.25,
    min_runs: int = 5,
) -> pd.DataFrame:
    """One row per template (the index): ``a_j``, ``d_j`` (s after the period start), ``slack_ratio``,
    ``cv_out_read``, ``actionable``, ``reason`` (why not), ``n_runs`` and ``n_read``.

    ``runs`` holds one row per run with the columns of ``RUN_COLUMNS`` (absolute seconds). Rows with
    ``failed == True`` are left out when that column exists (the paper learns from successful
    runs). ``t_out_read`` may be NaN, meaning nobody read that run's output: such runs count in
    ``n_runs`` but not in ``n_read``, and a template needs ``min_runs`` read runs for an SLO. Any
    other NaN, an infinite or datetime time, a row with no template, a run ending before it starts,
    or an output read before the run ended is refused.

    >>> import pandas as pd
    >>> day = 86400
    >>> runs = pd.DataFrame({"template": "etl", "period_start": [i * day for i in range(5)]})
    >>> runs["t_in_avail"] = runs.period_start + [600, 620, 590, 3000, 610]   # one late input
    >>> runs["t_start"] = runs.t_in_avail + 60
    >>> runs["t_end"] = runs.t_start + 3600
    >>> runs["t_out_read"] = runs.period_start + [57600, 57700, 57500, 57600, 57650]  # 16:00
    >>> slo = infer_slo(runs)
    >>> float(slo.at["etl", "d_j"]), bool(slo.at["etl", "actionable"])
    (57600.0, True)
    >>> round(float(slo.at["etl", "a_j"]))      # the 95th percentile keeps most of the late input
    2524
    >>> round(float(slo.at["etl", "slack_ratio"]), 1)   # it could run 14 more times before 16:00
    14.8
    """
    validate.columns(runs, RUN_COLUMNS, "runs")
    qa = validate.number(a_percentile, "a_percentile", lo=0, hi=100)
    qd = validate.number(d_percentile, "d_percentile", lo=0, hi=100)
    thr = validate.number(cv_threshold, "cv_threshold", lo=0)
    min_slack = validate.number(min_slack_ratio, "min_slack_ratio", lo=0)
    if not isinstance(min_runs, (int, np.integer)) or min_runs < 1:
        raise ValueError(f"min_runs={min_runs!r} is not allowed: need an integer >= 1")
    validate.names(runs, "template", "runs")
    df = runs
    if "failed" in df.columns:
        df = df[~df["failed"].astype(bool)]
        if df.empty:
            raise ValueError("runs has only failed runs: SLOs are learnt from successful runs")
    validate.seconds(df, ["period_start", "t_in_avail", "t_start", "t_end", "t_out_read"], "runs", nan_ok=["t_out_read"])
    backwards = df["t_end"] < df["t_start"]
    if backwards.any():
        r = backwards.idxmax()
        raise ValueError(f"runs row {r!r} ends before it starts (t_end={df.at[r, 't_end']!r} < t_start={df.at[r, 't_start']!r})")
    early = df["t_out_read"] < df["t_end"]
    if early.any():
        r = early.idxmax()
        raise ValueError(
            f"runs row {r!r} has its output read before the run ended (t_out_read={df.at[r, 't_out_read']!r} "
            f"< t_end={df.at[r, 't_end']!r})"
        )
    rows = {}
    for name, g in df.groupby("template", sort=True):
        ps = g["period_start"].to_numpy(dtype=float)
        t_in = g["t_in_avail"].to_numpy(dtype=float) - ps
        start = g["t_start"].to_numpy(dtype=float)
        end = g["t_end"].to_numpy(dtype=float)
        read_abs = g["t_out_read"].to_numpy(dtype=float)
        read = ~np.isnan(read_abs)
        n_read = int(read.sum())
        rel_read = read_abs[read] - ps[read]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (read_abs[read] - end[read]) / (end[read] - start[read])
        slack = float(np.median(ratio)) if n_read else np.nan
        cv = robust_cv(rel_read)
        if n_read < min_runs:
            reason = f"too few read runs ({n_read} < min_runs={min_runs})"
        elif not cv <= thr:
            reason = f"output read at no fixed time (cv_out_read={cv:.3g} > {thr:g})"
        elif not slack >= min_slack:
            reason = f"no slack (median slack ratio {slack:.3g} < {min_slack:g})"
        else:
            reason = ""
        ok = reason == ""
        a_j = float(np.percentile(t_in, qa)) if ok else np.nan
        d_j = float(np.percentile(rel_read, qd)) if ok else np.nan
        rows[name] = (a_j, d_j, slack, cv, ok, reason, len(g), n_read)
    out = pd.DataFrame.from_dict(
        rows, orient="index",
        columns=["a_j", "d_j", "slack_ratio", "cv_out_read", "actionable", "reason", "n_runs", "n_read"],
    )
    out.index.name = "template"
    return out
