"""Job value across many hops (§4.3, §4.5): Owl's equal-contribution valuation on Algorithm 1.

Each job ``d`` with ``N_d`` upstream dependencies gives ``1/N_d`` of its value to each of them, and
they pass it on upstream in the same way. A job's *aggregate value* is its own job-local value
``k_j`` plus what reaches it from every job downstream, along every path (§4.5.1):

    agg(j) = k_j + sum_{d in D_j} sum_{p in P(j, d)} prod_{e in p} w_e * k_d

which is :func:`~cluster_sim.wing.multihop.multi_hop` with ``wt_fn`` = :func:`owl_weights`,
``e_op`` = product, ``p_op`` = sum, followed by ``ds_op`` = sum over the downstream jobs of
``agg * k_d``. In matrix form ``agg = (I - A)^-1 k`` with ``A[u, d] = 1/N_d`` for each edge
(job = d, depOn = u). Value is conserved: on an untruncated DAG the aggregate values of the jobs
with no upstream dependency add up to the total job-local value.

Example (Fig. 5 of the paper, with reconstructed numbers: :func:`figure5_example`)
---------------------------------------------------------------------------------
>>> ex = figure5_example()
>>> owl_value(ex.deps, ex.k).to_dict()
{'A': 31.0, 'B': 2.0, 'C': 28.0, 'D': 8.0, 'E': 16.0}
>>> value_decay(ex.deps, ex.k, ex.submit, "A", [2.9, 3.0, 4.9, 5.0, 9.0]).tolist()  # A completes at t
[31.0, 29.0, 29.0, 1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import pandas as pd

from .multihop import check_deps, doubling, multi_hop, owl_weights, show


def check_values(k: pd.Series, deps: pd.DataFrame | None = None, *, name: str = "k") -> pd.Series:
    """``k`` as float: unique index, no NaN or negative value, and a value for every job named in ``deps``."""
    if not isinstance(k, pd.Series):
        raise ValueError(f"{name} must be a pandas Series indexed by job; got {type(k).__name__}")
    if not k.index.is_unique:
        d = k.index[k.index.duplicated()][0]
        raise ValueError(f"{name} has a duplicated job in its index, e.g. {show(d)}")
    v = pd.to_numeric(k, errors="coerce").astype(float)
    bad = v.isna() | ~np.isfinite(v.to_numpy()) | (v < 0)
    if bad.any():
        j = v.index[bad.to_numpy()][0]
        raise ValueError(f"{name}[{show(j)}]={show(k[j])} is not allowed: job values must be finite numbers >= 0 "
                         f"({int(bad.sum())} such value(s))")
    if deps is not None:
        named = pd.Index(pd.concat([deps["job"], deps["depOn"]]).unique())
        absent = named.difference(v.index)
        if len(absent):
            raise ValueError(f"{name} has no value for {len(absent)} job(s) of deps, e.g. {show(absent[0])}: "
                             "give every job a value (0 for a job nobody downloads from)")
    return v


def _downstream_value(table: pd.DataFrame, k: pd.Series, weight: str = "agg") -> pd.Series:
    """ds_op: for each upstream job, the sum over its downstream jobs of path weight x k_d."""
    contrib = table[weight].to_numpy() * k.reindex(table["job"]).to_numpy()
    return pd.Series(contrib).groupby(table["depOn"].to_numpy()).sum()


def owl_value(
    deps: pd.DataFrame,
    k: pd.Series,
    *,
    omega: float | None = None,
    jobs: pd.DataFrame | None = None,
    max_iterations: int | None = None,
) -> pd.Series:
    """Each job's aggregate value, indexed like ``k`` (every job of ``k``, in its order).

    ``deps`` is the single-hop table (``job``, ``depOn``); ``k`` the job-local values. ``omega``
    and ``jobs`` apply the multi-hop time window (only downstream jobs submitted at most ω after
    the job ended count); ``max_iterations`` truncates Algorithm 1 (paths of at most
    ``2**max_iterations`` hops). With either, value is no longer conserved. A row of ``deps`` whose
    job is its own ``depOn`` passes no value: it is dropped and counted in ``attrs["self_dependencies"]``.

    >>> deps = pd.DataFrame({"job": ["a", "b", "d", "d"], "depOn": ["u", "u", "a", "b"]})   # a diamond
    >>> k = pd.Series({"u": 1.0, "a": 0.0, "b": 0.0, "d": 10.0})
    >>> owl_value(deps, k).tolist()                 # d's 10 reaches u whole, half through a, half through b
    [11.0, 5.0, 5.0, 10.0]
    """
    deps = check_deps(deps)
    k = check_values(k, deps)
    table, _ = multi_hop(deps, owl_weights, np.multiply, "sum", omega=omega, jobs=jobs, max_iterations=max_iterations)
    agg = _value_of(table, k)
    agg.attrs["self_dependencies"] = deps.attrs["self_dependencies"]
    return agg


def _value_of(table: pd.DataFrame, k: pd.Series) -> pd.Series:
    ds = _downstream_value(table, k)
    return (k + ds.reindex(k.index, fill_value=0.0)).rename("agg_value")


def owl_value_of(table: pd.DataFrame, k: pd.Series) -> pd.Series:
    """:func:`owl_value` from a closure already computed: ``table`` is :func:`~.multihop.multi_hop`'s with Owl's
    functions (its defaults) on the same ``deps``, so the closure is not computed a second time.

    >>> deps = pd.DataFrame({"job": ["a", "b", "d", "d"], "depOn": ["u", "u", "a", "b"]})
    >>> k = pd.Series({"u": 1.0, "a": 0.0, "b": 0.0, "d": 10.0})
    >>> owl_value_of(multi_hop(deps).table, k).equals(owl_value(deps, k))
    True
    """
    if not isinstance(table, pd.DataFrame) or [c for c in ("job", "depOn", "agg") if c not in table.columns]:
        raise ValueError(f"table must be multi_hop's table (columns job, depOn, agg); got {type(table).__name__}"
                         + (f" with columns {list(table.columns)}" if isinstance(table, pd.DataFrame) else ""))
    k = check_values(k, table)
    agg = _value_of(table, k)
    agg.attrs["self_dependencies"] = table.attrs.get("self_dependencies", 0)
    return agg


def valid_jobs(jobs: pd.DataFrame, omega: float, horizon: float) -> pd.Index:
    """The jobs whose window is fully observed: completed at least ω before the log ends (§4.5.1).

    A job completing later has part of its ω window cut off by the end of the log, so its
    windowed aggregate value is biased low; the paper values only the valid jobs.

    >>> valid_jobs(pd.DataFrame({"job": [1, 2, 3], "end": [1.0, 5.0, 9.0]}), omega=4.0, horizon=10.0).tolist()
    [1, 2]
    """
    if not (np.isfinite(omega) and omega >= 0 and np.isfinite(horizon)):
        raise ValueError(f"omega={show(omega)} and horizon={show(horizon)} must be finite, omega >= 0")
    missing = [c for c in ("job", "end") if c not in jobs.columns]
    if missing:
        raise ValueError(f"jobs lacks column(s) {missing}; it has {list(jobs.columns)}")
    if jobs["end"].isna().any():
        raise ValueError(f"jobs.end has {int(jobs['end'].isna().sum())} NaN value(s)")
    return pd.Index(jobs.loc[jobs["end"] <= horizon - omega, "job"])


def closed_form_value(deps: pd.DataFrame, k: pd.Series) -> pd.Series:
    """``(I - A)^-1 k`` with ``A[u, d] = 1/N_d`` per edge (job = d, depOn = u): a check on :func:`owl_value`.

    >>> deps = pd.DataFrame({"job": ["b", "c", "c"], "depOn": ["a", "a", "b"]})
    >>> closed_form_value(deps, pd.Series({"a": 1.0, "b": 2.0, "c": 4.0})).tolist()
    [7.0, 4.0, 4.0]
    """
    from scipy.sparse import csr_matrix, identity
    from scipy.sparse.linalg import spsolve

    deps = check_deps(deps)
    k = check_values(k, deps)
    pos = pd.Index(k.index)
    u, d = pos.get_indexer(deps["depOn"]), pos.get_indexer(deps["job"])
    n = len(pos)
    a = csr_matrix((owl_weights(deps).to_numpy(), (u, d)), shape=(n, n))
    if n == 0:
        return k.rename("agg_value")
    x = spsolve((identity(n, format="csc") - a.tocsc()), k.to_numpy())
    return pd.Series(np.atleast_1d(x), index=k.index, name="agg_value")


# ---- Fig. 6: how much value each iteration uncovers -------------------------------------------
def value_exploration(
    deps: pd.DataFrame,
    k: pd.Series,
    *,
    omega: float | None = None,
    jobs: pd.DataFrame | None = None,
    over=None,
) -> pd.DataFrame:
    """The share of aggregate value found as Algorithm 1 proceeds (Fig. 6), one row per stage.

    Stages: ``job-local`` (0 hops: what a scheduler sees without Wing, Fig. 6's iteration 0),
    ``single hop`` (the preprocessed table), then ``iteration i`` (paths of at most ``2**i``
    hops). ``share`` is found / aggregate summed over the jobs (the share of the average job's
    value); ``mean_job_share`` averages each job's own share over the jobs with a positive value.
    ``over`` restricts both to some jobs of ``k`` (e.g. the :func:`valid_jobs` of a window ω);
    every job of ``k`` still passes its value upstream. ``attrs["agg"]`` holds the aggregate value
    of every job of ``k`` (what :func:`owl_value` returns with the same ``omega``), and
    ``attrs["self_dependencies"]`` the rows of ``deps`` dropped because their job is its own ``depOn``.

    With ``over``, the doubling keeps only the short paths whose upstream job is in ``over``
    (:func:`~.multihop.doubling`'s ``upstream``): the shares read nothing else, and the table is the
    same, bit for bit, as without the restriction (the jobs of the last ω of the log, not valid, reach
    every job after them: at ``default`` the doubling's tables hold 56 % fewer rows). ``attrs["agg"]`` then holds the aggregate value
    of the jobs of ``over`` only, NaN for the other jobs of ``k`` (run again with ``over`` = those
    jobs for theirs: the same numbers, bit for bit, as a run without ``over``).

    >>> deps = pd.DataFrame({"job": [2, 3, 4], "depOn": [1, 2, 3]})   # a chain, all value at its end:
    >>> k = pd.Series({1: 0.0, 2: 0.0, 3: 0.0, 4: 4.0})                # every job's aggregate value is 4
    >>> value_exploration(deps, k)[["stage", "hops", "share"]]
             stage  hops  share
    0    job-local     0   0.25
    1   single hop     1   0.50
    2  iteration 1     2   0.75
    3  iteration 2     4   1.00
    """
    deps = check_deps(deps)
    k = check_values(k, deps)
    keep = k.index if over is None else pd.Index(over)
    outside = keep.difference(k.index)
    if len(outside):
        raise ValueError(f"over names {len(outside)} job(s) that k has no value for, e.g. {show(outside[0])}")
    rows = []

    def record(stage, hops, found):
        rows.append((stage, hops, found))

    record("job-local", 0, k)
    for i, short, ftr, labels in doubling(deps, omega=omega, jobs=jobs, upstream=None if over is None else keep):
        kk = k.reindex(labels).to_numpy()
        # the short pairs' then the frontier's, each added in turn (bincount and add.at add one row at a time, in
        # order): the sums of one bincount over both tables, without a copy of them
        ds = np.bincount(short.dep, weights=short.wt * kk[short.job], minlength=len(labels)).astype(float, copy=False)
        np.add.at(ds, ftr.dep, ftr.wt * kk[ftr.job])
        # a job of k without any dependency finds only its own value (not NaN: it must count)
        found = k + pd.Series(ds, index=labels).reindex(k.index, fill_value=0.0)
        record("single hop" if i == 0 else f"iteration {i}", 2 ** i, found)
    agg = rows[-1][2].rename("agg_value")
    total = agg.reindex(keep)
    pos = total > 0
    out = pd.DataFrame({
        "stage": [r[0] for r in rows],
        "hops": [r[1] for r in rows],
        "share": [float(r[2].reindex(keep).sum() / total.sum()) if total.sum() > 0 else 1.0 for r in rows],
        "mean_job_share": [float((r[2].reindex(keep)[pos] / total[pos]).mean()) if pos.any() else 1.0 for r in rows],
    })
    out.attrs["agg"] = agg if over is None else agg.where(agg.index.isin(keep))  # the others' short paths were not kept
    out.attrs["self_dependencies"] = deps.attrs["self_dependencies"]  # rows job == depOn, dropped by check_deps
    return out


def hidden_value(k: pd.Series, agg: pd.Series) -> float:
    """The share of aggregate value invisible to job-local valuation: ``1 - sum(k) / sum(agg)`` (§4.5.3: 83%).

    >>> hidden_value(pd.Series([1.0, 1.0]), pd.Series([6.0, 6.0]))
    0.8333333333333334
    """
    total = float(agg.sum())
    if not total > 0:
        raise ValueError(f"sum(agg)={show(total)}: the hidden share needs a positive total aggregate value")
    return 1.0 - float(k.sum()) / total


# ---- Fig. 5: value decay ---------------------------------------------------------------------
def value_decay(deps: pd.DataFrame, k: pd.Series, submit: pd.Series, job, times: Iterable[float]) -> np.ndarray:
    """The aggregate value ``job`` still earns if it completes at each time in ``times`` (hard dependencies).

    A direct downstream job ``d`` submitted at or before the completion cannot read the output and
    fails, taking with it the share ``w(d -> job) * agg(d)`` it would have passed up, which
    includes everything downstream of ``d`` (Fig. 5: C's failure also loses D and E, at *C's*
    submission). The job keeps its own value ``k_job`` (the figure's "until the end").
    """
    deps = check_deps(deps)
    k = check_values(k, deps)
    if job not in k.index:
        raise ValueError(f"job={show(job)} has no value in k")
    s = pd.to_numeric(submit, errors="coerce")
    direct = deps.assign(wt=owl_weights(deps).to_numpy())
    direct = direct[direct["depOn"] == job]
    missing = [d for d in direct["job"] if d not in s.index or pd.isna(s[d])]
    if missing:
        raise ValueError(f"submit has no (or a NaN) time for downstream job {show(missing[0])}")
    agg = owl_value(deps, k)
    share = direct["wt"].to_numpy() * agg.reindex(direct["job"]).to_numpy()
    when = s.reindex(direct["job"]).to_numpy(float)
    t = np.asarray(list(times), dtype=float)
    if np.isnan(t).any():
        raise ValueError("times holds NaN")
    kept = (when[None, :] > t[:, None]) @ share  # a read at the very instant of the write does not see it
    return k[job] + kept


class Figure5(NamedTuple):
    """Fig. 5's toy DAG: dependencies, job-local values and submission times (hours after A)."""

    deps: pd.DataFrame
    k: pd.Series
    submit: pd.Series


def figure5_example() -> Figure5:
    """Fig. 5 with **reconstructed** numbers (the figure shows the shape of the decay, not its values).

    B and C depend on A; D and E on C. The values are powers of two (A=1, B=2, C=4, D=8, E=16),
    so every subset of lost jobs gives a different total and each wrong reading shows: A's value
    is 31, 29 after B's submission at 3 h and 1 (its own) after C's at 5 h. Losing D and E at their
    own submissions (6 h, 8 h) instead would give 25 and 17 in between; forgetting A's own value
    would end at 0; taking the max over downstream jobs instead of the sum would start at 29.
    """
    deps = pd.DataFrame({"job": ["B", "C", "D", "E"], "depOn": ["A", "A", "C", "C"]})
    k = pd.Series({"A": 1.0, "B": 2.0, "C": 4.0, "D": 8.0, "E": 16.0})
    submit = pd.Series({"A": 0.0, "B": 3.0, "C": 5.0, "D": 6.0, "E": 8.0})
    return Figure5(deps, k, submit)
