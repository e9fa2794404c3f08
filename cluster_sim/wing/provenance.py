"""Single-hop dependencies from data provenance (§4.2): a self-join of ProvRepo with three rules.

ProvRepo holds one row per file operation: ``job``, ``file``, ``op`` (``read``, ``write`` or
``download``; a download is a user's, so its ``job`` may be missing) and ``time``. A job depends on
another if it read a file the other wrote. The naive self-join ``read.file = write.file`` is wrong
in three ways, and Wing adds one rule against each:

1. **R/W correctness** (``read_after_write``): the read must come *after* the write. Without it a
   read also matches later writes of the file: dependencies on jobs that ran after the reader
   (negative lags, and cycles).
2. **Last-writer wins** (``last_writer``): if a file was written several times, the read depends
   only on the latest write before it. Without it a read also depends on every writer of the
   versions it did not see: extra dependencies on stale, overwritten outputs.
3. **Time windowing** (``window`` T, 30 days by default): the write is at most T before the read.
   Without it, dependencies of any age count, so an operation issued early in the log has more
   time to be depended upon than a late one, and the join grows with the whole history.

A read strictly after the write sees it (a read at the very instant of a write does not). Reads
with no earlier write in the log (of uploaded data, or of files written before the log starts)
and reads whose last writer is older than T are *excluded and counted*, as are a job's reads of
its own output (not an inter-job dependency); the counts are in ``deps.attrs["excluded"]``.
Two jobs writing a file at the same instant leave its last writer unknown, which matters only to a
read that rule 2 must match to that version (within T): such a read is refused, naming it; a tie
nobody reads, or reads only before it or after a later write, is not an error. Downloads are
users' events, not a set: two downloads of a file in the same second are two downloads.

Example
-------
>>> prov = pd.DataFrame({
...     "job":  [1, 2, 3, 3, 4],
...     "file": ["f", "f", "f", "g", "f"],
...     "op":   ["write", "write", "read", "write", "read"],
...     "time": [1.0, 2.0, 3.0, 4.0, 0.5]})
>>> single_hop(prov)                      # 3 read f after 1 and 2 wrote it: only the last writer counts
   job  depOn  lag  files
0    3      2  1.0      1
>>> single_hop(prov).attrs["excluded"]["reads_without_writer"]   # 4 read f before anyone wrote it
1
>>> single_hop(prov, last_writer=False)[["job", "depOn"]].values.tolist()
[[3, 1], [3, 2]]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .multihop import check_deps, show

HOUR = 3600.0
DAY = 24 * HOUR
DEFAULT_WINDOW = 30 * DAY  # the paper's T (footnote 7: T = 31 would have caught every monthly cycle)
PROV_COLUMNS = ("job", "file", "op", "time")
OPS = ("read", "write", "download")


def check_prov(prov: pd.DataFrame, *, name: str = "prov") -> pd.DataFrame:
    """The ProvRepo table, validated: columns, known ops, numeric non-NaN times, a job on every read/write.

    >>> check_prov(pd.DataFrame({"job": [1], "file": ["f"], "op": ["delete"], "time": [0.0]}))
    Traceback (most recent call last):
    ...
    ValueError: prov.op has 1 row(s) with an unknown operation, e.g. 'delete': allowed are read, write, download
    """
    if not isinstance(prov, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with columns {', '.join(PROV_COLUMNS)}; "
                         f"got {type(prov).__name__}")
    missing = [c for c in PROV_COLUMNS if c not in prov.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it has {list(prov.columns)} "
                         f"(ProvRepo needs {', '.join(PROV_COLUMNS)})")
    bad_op = ~prov["op"].isin(OPS)
    if bad_op.any():
        raise ValueError(f"{name}.op has {int(bad_op.sum())} row(s) with an unknown operation, "
                         f"e.g. {show(prov.loc[bad_op, 'op'].iloc[0])}: allowed are {', '.join(OPS)}")
    if not pd.api.types.is_numeric_dtype(prov["time"]) or pd.api.types.is_bool_dtype(prov["time"]):
        raise ValueError(f"{name}.time must be numeric (seconds), got dtype {prov['time'].dtype}")
    t = prov["time"].to_numpy(dtype=float)
    nan = np.isnan(t) | np.isinf(t)
    if nan.any():
        raise ValueError(f"{name}.time has {int(nan.sum())} NaN or infinite value(s), e.g. in row "
                         f"{show(prov.index[int(np.flatnonzero(nan)[0])])}: every operation needs a time")
    if prov["file"].isna().any():
        raise ValueError(f"{name}.file has {int(prov['file'].isna().sum())} missing value(s)")
    jobless = prov["job"].isna() & prov["op"].isin(("read", "write"))
    if jobless.any():
        raise ValueError(f"{name}.job is missing on {int(jobless.sum())} read/write row(s), e.g. row "
                         f"{show(prov.index[int(np.flatnonzero(jobless.to_numpy())[0])])}: only downloads may lack a job")
    return prov


def _as_ids(s: pd.Series) -> pd.Series:
    """Job ids as plain int64 when they are whole numbers (a nullable or float column, from the downloads' NaN)."""
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) and s.notna().all():
        v = s.to_numpy(dtype=float)
        if np.array_equal(v, np.round(v)):
            return s.astype(np.int64)
    return s


def _writes(prov: pd.DataFrame) -> pd.DataFrame:
    """The writes, one row per (job, file, time): ``depOn``, ``file``, ``wtime``. Two jobs may write a file
    at the same instant; that matters only to a read that must pick its last writer (:func:`_refuse_ties`)."""
    w = prov.loc[prov["op"] == "write", ["job", "file", "time"]].drop_duplicates()
    return w.rename(columns={"job": "depOn", "time": "wtime"})


def _refuse_ties(m: pd.DataFrame, what: str) -> None:
    """A read (or download) matched to its last writer by rule 2 but to two jobs that wrote that version at the
    same instant: which one it saw is unknown, so its dependency (or value) cannot be given to either."""
    n = m.groupby("read_id")["depOn"].transform("size")
    tied = m[n > 1]
    if len(tied):
        first = tied[tied["read_id"] == tied["read_id"].iloc[0]]
        r = first.iloc[0]
        who = f" by job {show(_as_ids(first['job']).iloc[0])}" if what == "read" else ""
        writers = _as_ids(first["depOn"])
        raise ValueError(f"the {what} of {show(r['file'])}{who} at {show(r['time'])} sees a version written by jobs "
                         f"{show(writers.iloc[0])} and {show(writers.iloc[1])} at the same time {show(r['wtime'])}: "
                         f"the last writer is ambiguous ({tied['read_id'].nunique()} {what}(s) like this)")


def _check_window(window) -> float | None:
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, (int, float, np.integer, np.floating)) \
            or not np.isfinite(window) or window < 0:
        raise ValueError(f"window={show(window)} is not allowed: need a finite number of seconds >= 0, or None for no window")
    return float(window)


def read_matches(
    prov: pd.DataFrame,
    window: float | None = DEFAULT_WINDOW,
    *,
    read_after_write: bool = True,
    last_writer: bool = True,
    ops: tuple[str, ...] = ("read",),
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Each read (or download, with ``ops=("download",)``) matched to its writer(s): the self-join before grouping.

    Returns the matches (``job``, ``file``, ``time``, ``depOn``, ``wtime``, ``lag``) and the
    counts of excluded reads. Rules can be dropped one by one to see what each prevents.
    """
    prov = check_prov(prov)
    T = _check_window(window)
    reads = prov.loc[prov["op"].isin(ops), ["job", "file", "time", "op"]]
    # a job reading a file twice at one instant reads it once; downloads are users' events: each one counts
    reads = reads[~(reads.duplicated() & (reads["op"] == "read"))].drop(columns="op").reset_index(drop=True)
    reads["read_id"] = np.arange(len(reads))
    writes = _writes(prov)
    if read_after_write and last_writer:
        # the fast, exact path: one backward as-of join per file finds the version each read sees (the
        # latest strictly earlier write time), then every job that wrote that version (two, if tied)
        versions = writes[["file", "wtime"]].drop_duplicates().sort_values("wtime")
        m = pd.merge_asof(reads.sort_values("time"), versions, left_on="time", right_on="wtime",
                          by="file", direction="backward", allow_exact_matches=False)
        no_writer = int(m["wtime"].isna().sum())
        m = m.dropna(subset=["wtime"]).merge(writes, on=["file", "wtime"])
    else:
        m = reads.merge(writes, on="file", how="left")
        if read_after_write:
            m = m[~(m["wtime"] >= m["time"])]  # keeps the NaN rows of files never written
        matched = m.dropna(subset=["wtime"])
        no_writer = len(reads) - int(matched["read_id"].nunique())
        m = matched
        if T is not None and not read_after_write:
            m = m[(m["time"] - m["wtime"]).abs() <= T]
        if last_writer:
            # without the order rule "last" is the latest write of the file, before or after the read
            m = m[m["wtime"] == m.groupby("read_id")["wtime"].transform("max")] if len(m) else m
    m = m.assign(lag=m["time"] - m["wtime"])
    before = int(m["read_id"].nunique())
    if T is not None:
        m = m[m["lag"].abs() <= T] if not read_after_write else m[m["lag"] <= T]
    outside = before - int(m["read_id"].nunique())
    if last_writer:  # a tie older than T does not matter: the read is excluded whoever wrote last
        _refuse_ties(m, "read" if "read" in ops else "download")
    if "read" in ops:
        own = m["job"] == m["depOn"]
        self_reads = int(m.loc[own, "read_id"].nunique())
        m = m[~own]
    else:
        self_reads = 0
    m = m.drop(columns="read_id").reset_index(drop=True)
    m["depOn"] = _as_ids(m["depOn"])
    m["job"] = _as_ids(m["job"])
    excluded = {"reads_without_writer": no_writer, "reads_outside_window": outside, "self_reads": self_reads}
    return m[["job", "file", "time", "depOn", "wtime", "lag"]], excluded


def single_hop(
    prov: pd.DataFrame,
    window: float | None = DEFAULT_WINDOW,
    *,
    read_after_write: bool = True,
    last_writer: bool = True,
) -> pd.DataFrame:
    """Wing's single-hop dependencies: ``job``, ``depOn``, the smallest ``lag`` (read - write) and ``files``.

    ``window`` is T in seconds (``None`` drops rule 3); ``read_after_write=False`` and
    ``last_writer=False`` drop rules 1 and 2. With rule 1 in force a dependency cycle can only
    come from skewed clocks and raises ``ValueError``; without it the cycles it creates are the
    error being shown and are returned. Excluded reads are counted in ``attrs["excluded"]``.
    """
    m, excluded = read_matches(prov, window, read_after_write=read_after_write, last_writer=last_writer)
    deps = (m.groupby(["job", "depOn"], as_index=False, sort=True)
            .agg(lag=("lag", "min"), files=("file", "nunique")))
    if read_after_write:
        check_deps(deps, name="the single-hop dependencies")
    deps.attrs["excluded"] = excluded
    deps.attrs["rules"] = {"read_after_write": read_after_write, "last_writer": last_writer, "window": window}
    return deps


def attribute_downloads(prov: pd.DataFrame, horizon: float | None = None) -> pd.DataFrame:
    """Each download matched to the job whose write of the file it read (the last writer before it).

    ``horizon`` (seconds) keeps only downloads at most that long after the write (the paper counts
    value up to a week after completion). Returns ``file``, ``time``, ``job`` (the writer), ``lag``;
    downloads of files no job wrote are counted in ``attrs["excluded"]``.

    >>> prov = pd.DataFrame({"job": [1, 2, None, None], "file": ["f", "f", "f", "f"],
    ...                      "op": ["write", "write", "download", "download"], "time": [0.0, 5.0, 3.0, 6.0]})
    >>> attribute_downloads(prov)[["time", "job"]].to_dict("list")
    {'time': [3.0, 6.0], 'job': [1, 2]}
    """
    m, excluded = read_matches(prov, horizon, ops=("download",))
    out = m[["file", "time", "depOn", "lag"]].rename(columns={"depOn": "job"}).sort_values("time", ignore_index=True)
    out.attrs["excluded"] = {"downloads_without_writer": excluded["reads_without_writer"],
                             "downloads_outside_horizon": excluded["reads_outside_window"]}
    return out


def job_local_value(prov: pd.DataFrame, jobs, horizon: float | None = None) -> pd.Series:
    """Job-local value k: the downloads of each job's outputs (§4.3), for every job in ``jobs`` (0 if none).

    >>> prov = pd.DataFrame({"job": [1, 2, None, None], "file": ["f", "g", "f", "f"],
    ...                      "op": ["write", "write", "download", "download"], "time": [0.0, 1.0, 3.0, 6.0]})
    >>> job_local_value(prov, [1, 2, 3]).to_dict()
    {1: 2.0, 2: 0.0, 3: 0.0}
    """
    d = attribute_downloads(prov, horizon)
    idx = pd.Index(jobs)
    if not idx.is_unique:
        raise ValueError(f"jobs has a duplicated job, e.g. {show(idx[idx.duplicated()][0])}")
    return d.groupby("job").size().astype(float).reindex(idx, fill_value=0.0).rename("k")
