"""Algorithm 1 (§4.4): Wing's generic multi-hop analysis, a doubling transitive closure on tables.

Input: a single-hop dependency table, one row per edge, ``job`` (the downstream job) and ``depOn``
(the job whose output it read). Output: one row per pair of jobs joined by at least one path,
``job`` (downstream), ``depOn`` (upstream, possibly many hops away) and ``agg``, the weights of all
paths between them aggregated by the four Aggregation Functions of the paper:

* ``wt_fn(deps)`` turns each edge into a weight once (Owl's is :func:`owl_weights`: 1/N over a
  job's N upstream dependencies);
* ``e_op(w1, w2)`` joins the weights of two consecutive path pieces (Owl: the product);
* ``p_op`` aggregates the weights of different paths between the same pair (Owl: the sum);
  ``e_op`` must distribute over ``p_op`` and ``p_op`` must be associative;
* ``ds_op`` (the downstream operation) is applied afterwards by the caller: see
  :func:`cluster_sim.wing.value.owl_value`.

**The doubling.** The frontier ``ftr_i`` holds the paths of exactly ``2**i`` hops; the short table
holds all paths of ``1 .. 2**i - 1`` hops. One iteration (:func:`extend_reach` twice) builds
``ftr_{i+1} = ftr_i ∘ ftr_i`` and the paths of ``2**i + 1 .. 2**(i+1) - 1`` hops as ``ftr_i ∘ short``
(every such path splits in exactly one way into its first ``2**i`` hops from the downstream end
and the rest), so each path is counted exactly once.

**Why the short paths are kept apart.** In the printed pseudocode ``base`` holds the short paths
(grouped per pair) *and*, as rows of their own, the frontier; ``base - ftr`` must remove exactly
the frontier's rows. That needs bag semantics (``UNION ALL``, ``EXCEPT ALL``). With SQL's set
``UNION``/``EXCEPT`` a short-path row equal to a frontier row (same pair, same weight, which 1/N
weights make common for two paths of different lengths) is merged by the union and then removed by
the except, and those paths are lost. Keeping the short paths in a table of their own needs no
subtraction at all and works for every ``p_op``. :func:`algorithm1_literal` runs the printed
pseudocode under either semantics for the notebook.

**Iterations.** With ``D`` the longest path (in hops, the DAG's *diameter*), the loop stops after
the first iteration whose frontier is empty: iteration ``i`` finds paths of ``2**i`` hops, which
exist iff ``2**i <= D``. So it runs exactly ``floor(log2(D)) + 1`` iterations for ``D >= 1``
(:func:`expected_iterations`), and none for an empty table.

**Multi-hop time window ω (§4.5.1).** With ``omega`` and the jobs' ``submit`` and ``end`` times, a
pair is kept only if the downstream job was submitted at most ω after the upstream job ended. The
window is applied to every table in every iteration, which is exact (it drops no path of a kept
pair) when ``submit`` and ``end`` never decrease along an edge; that is checked, and an edge
breaking it (clock skew) is a ``ValueError``.

Example (a diamond: d reads a and b, both read u)
-------------------------------------------------
>>> import pandas as pd
>>> deps = pd.DataFrame({"job": ["a", "b", "d", "d"], "depOn": ["u", "u", "a", "b"]})
>>> table, iterations = multi_hop(deps)
>>> table
  job depOn  agg
0   a     u  1.0
1   b     u  1.0
2   d     a  0.5
3   d     b  0.5
4   d     u  1.0
>>> iterations, expected_iterations(diameter(deps))
(2, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

DEP_COLUMNS = ("job", "depOn")
P_OPS = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}


def show(x: Any) -> str:
    """``repr`` of a value as a student wrote it: ``1``, not numpy 2's ``np.int64(1)``."""
    if isinstance(x, np.generic):
        x = x.item()
    return repr(x)


class MultiHop(NamedTuple):
    """The result of :func:`multi_hop`: the table (``job``, ``depOn``, ``agg``) and the loop's iterations."""

    table: pd.DataFrame
    iterations: int


# ---- validation ------------------------------------------------------------------------------
def drop_self_dependencies(deps: pd.DataFrame) -> pd.DataFrame:
    """``deps`` without its rows whose ``job`` is its own ``depOn`` (a job that read its own earlier output:
    not a dependency on another job), counted in ``attrs["self_dependencies"]``.

    >>> d = drop_self_dependencies(pd.DataFrame({"job": [1, 2], "depOn": [1, 1]}))
    >>> d.values.tolist(), d.attrs["self_dependencies"]
    ([[2, 1]], 1)
    """
    own = (deps["job"] == deps["depOn"]).to_numpy(bool)
    out = deps[~own].reset_index(drop=True) if own.any() else deps.reset_index(drop=True)
    out.attrs["self_dependencies"] = int(own.sum())
    return out


def check_deps(deps: pd.DataFrame, *, name: str = "deps") -> pd.DataFrame:
    """A validated ``(job, depOn)`` copy of a single-hop table: no NaN, no duplicate, no cycle.

    A row whose job is its own ``depOn`` (a job that read its own earlier write) is not an inter-job
    dependency: it is dropped, not refused as a one-job cycle, and counted in the copy's
    ``attrs["self_dependencies"]`` (the functions of Lab 04 that take a single-hop table report it).

    >>> check_deps(pd.DataFrame({"job": [1, 2], "depOn": [2, 1]}))
    Traceback (most recent call last):
    ...
    ValueError: deps has a dependency cycle (clock skew in the provenance log?): 1 -> 2 -> 1 (each job reads the next one's output); 2 jobs lie on or downstream of a cycle
    """
    if not isinstance(deps, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with columns job, depOn; got {type(deps).__name__}")
    missing = [c for c in DEP_COLUMNS if c not in deps.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it has {list(deps.columns)} (need job, depOn)")
    out = deps.loc[:, list(DEP_COLUMNS)].reset_index(drop=True)
    for c in DEP_COLUMNS:
        n_nan = int(out[c].isna().sum())
        if n_nan:
            raise ValueError(f"{name}.{c} has {n_nan} missing value(s) (NaN/None), e.g. in row {int(np.flatnonzero(out[c].isna())[0])}")
    out = drop_self_dependencies(out)
    dup = out.duplicated(list(DEP_COLUMNS))
    if dup.any():
        j, d = out.loc[dup].iloc[0]
        raise ValueError(f"{name} has {int(dup.sum())} duplicate (job, depOn) row(s), e.g. ({show(j)}, {show(d)}); "
                         "single-hop dependencies are pairs: drop_duplicates() first")
    _levels(out, name=name)  # raises on a cycle
    return out


def _codes(deps: pd.DataFrame, jobs: pd.Index | None = None) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Integer codes for job and depOn over one shared set of labels (``jobs`` first, if given)."""
    labels = pd.Index(pd.concat([deps["job"], deps["depOn"]], ignore_index=True).unique())
    if jobs is not None:
        labels = jobs.append(labels.difference(jobs, sort=False)) if len(labels) else jobs
    return (labels.get_indexer(deps["job"]).astype(np.int64), labels.get_indexer(deps["depOn"]).astype(np.int64),
            labels)


def _levels(deps: pd.DataFrame, *, name: str = "deps") -> tuple[np.ndarray, pd.Index]:
    """Depth of every job (longest path from a job without upstream), by peeling sources level by level.

    Raises ``ValueError`` naming one cycle if some jobs can never be peeled.
    """
    job, dep, labels = _codes(deps)
    n = len(labels)
    depth = np.zeros(n, dtype=np.int64)
    if n == 0:
        return depth, labels
    indeg = np.bincount(job, minlength=n)
    order = np.argsort(dep, kind="stable")  # edges grouped by their upstream end
    starts = np.searchsorted(dep[order], np.arange(n + 1))
    frontier = np.flatnonzero(indeg == 0)
    seen = 0
    level = 0
    while frontier.size:
        seen += frontier.size
        depth[frontier] = level
        lo, hi = starts[frontier], starts[frontier + 1]
        cnt = hi - lo
        idx = np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))
        down = job[order[idx]]
        indeg -= np.bincount(down, minlength=n)
        frontier = np.unique(down[indeg[down] == 0])
        level += 1
    if seen < n:
        stuck = indeg > 0
        # walk upstream inside the stuck set until a job repeats: that is a cycle
        up = {}
        for j, d in zip(job, dep):
            if stuck[j] and stuck[d]:
                up.setdefault(j, d)
        start = int(np.flatnonzero(stuck)[0])
        path, pos = [], {}
        while start not in pos:
            pos[start] = len(path)
            path.append(start)
            start = up[start]
        cycle = path[pos[start]:] + [start]
        shown = " -> ".join(repr(labels[c]) if not isinstance(labels[c], (int, np.integer)) else str(labels[c])
                            for c in cycle)
        raise ValueError(f"{name} has a dependency cycle (clock skew in the provenance log?): {shown} "
                         f"(each job reads the next one's output); {int(stuck.sum())} jobs lie on or downstream of a cycle")
    return depth, labels


def depths(deps: pd.DataFrame) -> pd.Series:
    """Each job's depth: hops on the longest path from a job with no upstream dependency.

    >>> depths(pd.DataFrame({"job": ["b", "c", "c"], "depOn": ["a", "b", "a"]})).to_dict()
    {'b': 1, 'c': 2, 'a': 0}
    """
    d, labels = _levels(check_deps(deps))
    return pd.Series(d, index=labels, name="depth")


def diameter(deps: pd.DataFrame) -> int:
    """The longest path of the dependency DAG, in hops (0 for an empty table)."""
    d, _ = _levels(check_deps(deps))
    return int(d.max()) if d.size else 0


def expected_iterations(diameter: int) -> int:
    """Iterations of Algorithm 1 on a DAG whose longest path has ``diameter`` hops: ``floor(log2 D) + 1``.

    Iteration ``i`` finds the paths of ``2**i`` hops and the loop stops at the first empty frontier,
    i.e. at the smallest ``i`` with ``2**i > D``. An empty table needs no iteration.

    >>> [expected_iterations(d) for d in (0, 1, 2, 3, 4, 7, 8)]
    [0, 1, 2, 2, 3, 3, 4]
    """
    d = int(diameter)
    if d < 0:
        raise ValueError(f"diameter={show(diameter)} is not allowed: need >= 0")
    return d.bit_length()  # == floor(log2(d)) + 1 for d >= 1, and 0 for d == 0


# ---- the Aggregation Functions and one iteration ---------------------------------------------
def owl_weights(deps: pd.DataFrame) -> pd.Series:
    """Owl's ``wt_fn``: each of a job's N upstream dependencies gets weight 1/N (the job splits its value equally).

    N counts the rows with the same ``job`` (the *upstream* edges of the downstream job), not the
    consumers of ``depOn``: a job gives away all of its value, however many jobs read its inputs.

    >>> deps = pd.DataFrame({"job": ["c", "c", "d"], "depOn": ["a", "b", "a"]})
    >>> owl_weights(deps).tolist()
    [0.5, 0.5, 1.0]
    """
    return (1.0 / deps.groupby("job", sort=False)["depOn"].transform("size")).rename("wt")


def extend_reach(t1: pd.DataFrame, t2: pd.DataFrame, e_op: Callable = np.multiply, p_op: Any = "sum") -> pd.DataFrame:
    """One ``extend_reach`` of Algorithm 1: join ``t1.depOn = t2.job``, weight ``e_op(t1.wt, t2.wt)``, group by pair.

    ``t1`` is the downstream piece of each new path and ``t2`` the upstream piece. Paths that join
    the same pair through different middle jobs are all kept and aggregated with ``p_op`` (bag
    semantics): dropping duplicates instead would count a diamond once.

    >>> t = pd.DataFrame({"job": ["d", "d", "a", "b"], "depOn": ["a", "b", "u", "u"], "wt": [0.5, 0.5, 1.0, 1.0]})
    >>> extend_reach(t, t)
      job depOn   wt
    0   d     u  1.0
    """
    for nm, t in (("t1", t1), ("t2", t2)):
        missing = [c for c in ("job", "depOn", "wt") if c not in t.columns]
        if missing:
            raise ValueError(f"{nm} lacks column(s) {missing}; it has {list(t.columns)} (need job, depOn, wt)")
    m = t1.merge(t2, left_on="depOn", right_on="job", suffixes=("", "_2"))
    e_agg = pd.DataFrame({"job": m["job"], "depOn": m["depOn_2"],
                          "wt": e_op(m["wt"].to_numpy(), m["wt_2"].to_numpy())})
    return e_agg.groupby(["job", "depOn"], as_index=False, sort=True)["wt"].agg(p_op)


# ---- the fast internal form: integer codes, tables sorted by pair key ------------------------
class _Tab(NamedTuple):
    job: np.ndarray
    dep: np.ndarray
    wt: np.ndarray

    def __len__(self) -> int:
        return len(self.job)


def _reducer(p_op: Any) -> Callable[[np.ndarray, np.ndarray, np.ndarray, int], tuple]:
    if isinstance(p_op, str):
        if p_op not in P_OPS:
            raise ValueError(f"p_op={show(p_op)} is not allowed: use one of {', '.join(P_OPS)} or a numpy ufunc")
        p_op = P_OPS[p_op]
    if isinstance(p_op, np.ufunc):
        ufunc = p_op

        def reduce(job, dep, wt, n):
            key = job * n + dep
            order = np.argsort(key, kind="stable")
            key = key[order]
            starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.zeros(0, np.int64)
            w = ufunc.reduceat(wt[order], starts) if key.size else wt[:0]
            k = key[starts]
            return k // n, k % n, w

        return reduce
    if callable(p_op):
        def reduce(job, dep, wt, n):
            g = pd.DataFrame({"job": job, "dep": dep, "wt": wt}).groupby(["job", "dep"], sort=True)["wt"].agg(p_op)
            return (g.index.get_level_values(0).to_numpy(np.int64), g.index.get_level_values(1).to_numpy(np.int64),
                    g.to_numpy(dtype=float))

        return reduce
    raise ValueError(f"p_op={show(p_op)} is not allowed: use one of {', '.join(P_OPS)}, a numpy ufunc or a callable")


def _matches(t1: _Tab, t2: _Tab, times: tuple[np.ndarray, np.ndarray, float] | None) -> tuple[_Tab, np.ndarray, np.ndarray]:
    """The rows of ``t2`` (sorted by job) each row of ``t1`` joins with (``t1.dep = t2.job``) and the window ω
    keeps: ``(t2', lo, cnt)``, row ``r`` of ``t1`` joining rows ``lo[r] .. lo[r] + cnt[r]`` of ``t2'``.

    Without a window ``t2'`` is ``t2``. With one, a joined row (``t1.job``, ``t2.dep``) is kept iff
    ``submit[t1.job] <= end[t2.dep] + ω``; ``t2'`` orders each job's rows by ``end[dep] + ω`` (its *reach*), so
    the rows a ``t1`` row keeps are the end of its middle job's group and the rows the window drops are never
    built (at ``paper`` most of the doubling's join rows were dropped by the window after being built). The
    rows of one output pair still come one per ``t1`` row, in ``t1``'s order, so their sums are unchanged."""
    if times is None:
        lo = np.searchsorted(t2.job, t1.dep, side="left")
        return t2, lo, np.searchsorted(t2.job, t1.dep, side="right") - lo
    submit, end, omega = times
    reach = end + omega  # per job: the same float the window compares with, submit[job] <= end[dep] + omega
    levels = np.unique(reach)
    rank = np.searchsorted(levels, reach)[t2.dep]  # exact: levels[rank] == reach[t2.dep]
    width = len(levels) + 1
    # by job, then reach (the order of equal reaches does not matter: each t1 row takes all of them or none)
    order = np.argsort(t2.job * width + rank)
    key = t2.job[order] * width + rank[order]
    need = np.searchsorted(levels, submit[t1.job], side="left")  # reach >= submit[job] iff rank >= need
    lo = np.searchsorted(key, t1.dep * width + need, side="left")
    hi = np.searchsorted(key, (t1.dep + 1) * width, side="left")
    return _Tab(t2.job[order], t2.dep[order], t2.wt[order]), lo, hi - lo


def _join(t1: _Tab, t2: _Tab, e_op: Callable, lo: np.ndarray, cnt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of ``t1 ⋈ t2``: row ``r`` of ``t1`` with rows ``lo[r] .. lo[r] + cnt[r]`` of ``t2`` (:func:`_matches`)."""
    total = int(cnt.sum())
    if total == 0:
        z = np.zeros(0, np.int64)
        return z, z, np.zeros(0)
    i1 = np.repeat(np.arange(len(t1)), cnt)
    i2 = np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(total)
    return t1.job[i1], t2.dep[i2], np.asarray(e_op(t1.wt[i1], t2.wt[i2]), dtype=float)


#: rows one slice of the doubling's joins may build and sum (join rows and the kept tables' rows; about 60 bytes
#: each while it is reduced)
JOIN_SLICE_ROWS = 2_000_000


def _slices(per_job: np.ndarray, n: int, budget: int) -> list[tuple[int, int]]:
    """Ranges ``[lo, hi)`` of job codes covering ``0 .. n``, cut so that each range's join rows (``per_job``)
    number about ``budget`` (one job's rows are never split)."""
    cuts = np.flatnonzero(np.diff(np.cumsum(per_job) // max(budget, 1), prepend=0.0) > 0)
    edges = np.unique(np.r_[0, cuts, n])
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def _part(t: _Tab, lo: int, hi: int) -> _Tab:
    """The rows of ``t`` (sorted by job) whose job code is in ``[lo, hi)``."""
    a, b = np.searchsorted(t.job, [lo, hi], side="left")
    return _Tab(t.job[a:b], t.dep[a:b], t.wt[a:b])


def _extend(t1: _Tab, t2: _Tab, e_op, times, reduce, n: int, keep: tuple[_Tab, ...] = ()) -> _Tab:
    """``reduce(keep ∪ window(t1 ⋈ t2))``, built a slice of ``t1``'s jobs at a time.

    Every output pair's job is its ``t1`` row's job, so a slice holds all the rows of its pairs, in the
    order the whole join would give them (``keep``'s rows first, then one row per ``t1`` row): each pair's
    sum is added in the same order, bit for bit, while memory holds one slice's join (``JOIN_SLICE_ROWS``)
    instead of every path piece at once (a lake of 700 jobs a day built 88M join rows for 2.4M pairs in one
    go). The window ω (``times``) is applied as the rows are chosen (:func:`_matches`), not after.

    Two things are not redone. Only the rows of ``t2`` whose job is some ``t1`` row's ``dep`` are sorted for the
    join (the others join nothing). ``keep[0]``, when given, must already be summed per pair (the short table):
    the rows of its jobs that nothing is added to (no row of ``t1`` or of the other ``keep`` tables has their
    job) pass through unchanged instead of being sorted and summed again, which gives the same numbers (a sum
    of one row is that row). At ``paper`` the last iterations add a few thousand pairs to a short table of
    40M: they cost as much as a sort of the whole table each before."""
    if len(t2):
        middle = np.zeros(n, bool)
        middle[t1.dep] = True
        joined = middle[t2.job]
        if not joined.all():
            t2 = _Tab(*(c[joined] for c in t2))
    touched = np.zeros(n, bool)  # the jobs some row is added to: keep[0]'s pairs of the others pass through
    touched[t1.job] = True
    for k in keep[1:]:
        touched[k.job] = True
    t2, lo, cnt = _matches(t1, t2, times)
    # a slice's rows: its join rows and its keep rows (a pass-through row is copied once more)
    per_job = np.bincount(t1.job, weights=cnt, minlength=n) if len(t1) else np.zeros(n)
    for k in keep:
        per_job += np.bincount(k.job, minlength=n)
    out = []
    for a, b in _slices(per_job, n, JOIN_SLICE_ROWS):
        parts = [_part(k, a, b) for k in keep]
        passed = None
        if parts:
            mask = touched[parts[0].job]
            if not mask.all():
                passed = _Tab(*(c[~mask] for c in parts[0]))
                parts[0] = _Tab(*(c[mask] for c in parts[0]))
        r1, r2 = np.searchsorted(t1.job, [a, b], side="left")
        j, d, w = _join(_Tab(t1.job[r1:r2], t1.dep[r1:r2], t1.wt[r1:r2]), t2, e_op, lo[r1:r2], cnt[r1:r2])
        summed = reduce(np.concatenate([p.job for p in parts] + [j]), np.concatenate([p.dep for p in parts] + [d]),
                        np.concatenate([p.wt for p in parts] + [w]), n)
        if passed is not None:
            # both are sorted by pair and their jobs differ: each passed row goes where its pair sorts
            at = np.searchsorted(summed[0] * n + summed[1], passed.job * n + passed.dep)
            summed = tuple(np.insert(c, at, p) for c, p in zip(summed, passed))
        out.append(summed)
    return _Tab(*(np.concatenate(c) for c in zip(*out)))


def _window(times: tuple[np.ndarray, np.ndarray, float] | None):
    if times is None:
        return lambda job, dep, wt: (job, dep, wt)
    submit, end, omega = times

    def prune(job, dep, wt):
        keep = submit[job] <= end[dep] + omega
        return job[keep], dep[keep], wt[keep]

    return prune


def _job_times(jobs: pd.DataFrame, labels: pd.Index, omega: float, deps_codes) -> tuple[np.ndarray, np.ndarray, float]:
    if not (isinstance(omega, (int, float, np.floating, np.integer)) and np.isfinite(omega) and omega >= 0):
        raise ValueError(f"omega={show(omega)} is not allowed: need a finite number >= 0 (in the time unit of submit/end)")
    if jobs is None:
        raise ValueError("omega needs jobs: a DataFrame with columns job, submit, end")
    missing = [c for c in ("job", "submit", "end") if c not in jobs.columns]
    if missing:
        raise ValueError(f"jobs lacks column(s) {missing}; it has {list(jobs.columns)} (need job, submit, end)")
    dup = pd.unique(jobs.loc[jobs["job"].duplicated(), "job"])
    if len(dup):
        shown = ", ".join(show(j) for j in dup[:5]) + (", ..." if len(dup) > 5 else "")
        raise ValueError(f"jobs has {len(dup)} job(s) with more than one row (JobRepo holds one row per job): {shown}; "
                         "which row's submit and end the window should use is unknown")
    t = jobs.set_index("job")
    absent = labels.difference(t.index)
    if len(absent):
        raise ValueError(f"jobs has no submit/end for {len(absent)} job(s) of deps, e.g. {show(absent[0])}")
    t = t.reindex(labels)
    submit, end = t["submit"].to_numpy(float), t["end"].to_numpy(float)
    for nm, a in (("submit", submit), ("end", end)):
        if np.isnan(a).any():
            raise ValueError(f"jobs.{nm} is NaN for job {show(labels[int(np.flatnonzero(np.isnan(a))[0])])}")
    job, dep = deps_codes
    bad = (submit[dep] > submit[job]) | (end[dep] > end[job])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"times are not monotone along the dependency (job={show(labels[job[i]])}, depOn={show(labels[dep[i]])}): "
            f"the upstream job was submitted at {submit[dep[i]]} and ended at {end[dep[i]]}, the downstream one at "
            f"{submit[job[i]]} and {end[job[i]]} (clock skew?); {int(bad.sum())} edge(s) like this. "
            "The window omega can only be applied hop by hop when submit and end never decrease downstream")
    return submit, end, float(omega)


def doubling(
    deps: pd.DataFrame,
    wt_fn: Callable[[pd.DataFrame], Any] = owl_weights,
    e_op: Callable = np.multiply,
    p_op: Any = "sum",
    *,
    omega: float | None = None,
    jobs: pd.DataFrame | None = None,
    max_iterations: int | None = None,
    upstream=None,
) -> Iterator[tuple[int, _Tab, _Tab, pd.Index]]:
    """The loop of Algorithm 1 as a generator of ``(iteration, short, frontier, labels)``.

    After iteration ``i`` (0 = the preprocessed single hops) ``short`` holds the paths of fewer
    than ``2**i`` hops and ``frontier`` those of exactly ``2**i`` hops, as integer codes into
    ``labels``. :func:`multi_hop` and :func:`cluster_sim.wing.value.value_exploration` consume it.

    ``upstream`` (job ids; None: every job) keeps in ``short`` only the pairs whose upstream job
    (``depOn``) is one of them: the short table is only ever the upstream piece of a join
    (``ftr ∘ short``), so a pair with another upstream job only makes pairs with that upstream job.
    The pairs kept are those of the whole loop, bit for bit (each is summed from the same rows in the
    same order). The frontier stays whole (it is the downstream piece of both joins, its upstream
    jobs are the middle of the new paths), so the iterations are those of the whole loop too.
    """
    deps = check_deps(deps)
    if max_iterations is not None and (not isinstance(max_iterations, (int, np.integer)) or max_iterations < 0):
        raise ValueError(f"max_iterations={show(max_iterations)} is not allowed: need an integer >= 0 or None")
    wt = np.asarray(wt_fn(deps), dtype=float)
    if wt.shape != (len(deps),):
        raise ValueError(f"wt_fn returned {wt.shape[0] if wt.ndim else 'a scalar'} weights for {len(deps)} edges")
    if np.isnan(wt).any():
        raise ValueError("wt_fn returned NaN weight(s)")
    job, dep, labels = _codes(deps)
    n = max(len(labels), 1)
    times = None if omega is None else _job_times(jobs, labels, omega, (job, dep))
    if upstream is not None and (isinstance(upstream, (str, bytes)) or not hasattr(upstream, "__len__")):
        raise ValueError(f"upstream={show(upstream)} is not allowed: give the job ids whose pairs are read "
                         "(a list, an array or a Series), or None for every job")
    read = None if upstream is None else labels.isin(pd.Index(upstream))

    def read_only(t: _Tab) -> _Tab:  # the rows of t whose upstream job is read (t's order kept)
        return t if read is None else _Tab(*(c[read[t.dep]] for c in t))

    prune = _window(times)
    reduce = _reducer(p_op)
    empty = _Tab(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    ftr = _Tab(*reduce(*prune(job, dep, wt), n))
    short = empty
    i = 0
    yield i, short, ftr, labels
    if len(ftr) == 0:
        return
    while max_iterations is None or i < max_iterations:
        i += 1
        new_ftr = _extend(ftr, ftr, e_op, times, reduce, n)
        # the paths of 2**(i-1)+1 .. 2**i - 1 hops (ftr ∘ short) join the shorter ones and the old frontier
        short = _extend(ftr, short, e_op, times, reduce, n, keep=(short, read_only(ftr)))
        ftr = new_ftr
        yield i, short, ftr, labels
        if len(ftr) == 0:
            return


def multi_hop(
    deps: pd.DataFrame,
    wt_fn: Callable[[pd.DataFrame], Any] = owl_weights,
    e_op: Callable = np.multiply,
    p_op: Any = "sum",
    *,
    omega: float | None = None,
    jobs: pd.DataFrame | None = None,
    max_iterations: int | None = None,
) -> MultiHop:
    """Algorithm 1: every (downstream ``job``, upstream ``depOn``) pair joined by a path, with ``agg`` over its paths.

    ``wt_fn(deps)`` returns one weight per row of ``deps``; ``e_op`` is a vectorised binary
    function; ``p_op`` is ``"sum"``, ``"max"``, ``"min"``, ``"prod"``, a numpy ufunc, or any
    callable pandas' ``groupby().agg`` accepts. ``omega`` (with ``jobs``: ``job``, ``submit``,
    ``end``) is the multi-hop time window of §4.5.1; ``max_iterations`` stops early (the result then
    holds the paths of at most ``2**max_iterations`` hops). Returns ``MultiHop(table, iterations)``
    with the table sorted by (job, depOn); rows of ``deps`` whose job is its own ``depOn`` are
    dropped (:func:`check_deps`) and counted in ``table.attrs["self_dependencies"]``.

    >>> deps = pd.DataFrame({"job": [2, 3, 4], "depOn": [1, 2, 3]})      # a chain 1 <- 2 <- 3 <- 4
    >>> table, n = multi_hop(deps, p_op="max")
    >>> len(table), n                                                 # all 6 pairs; D = 3: 2 iterations
    (6, 2)
    >>> multi_hop(deps, max_iterations=0).table["agg"].tolist()      # only the single hops
    [1.0, 1.0, 1.0]
    """
    state = None
    for state in doubling(deps, wt_fn, e_op, p_op, omega=omega, jobs=jobs, max_iterations=max_iterations):
        pass
    i, short, ftr, labels = state
    reduce = _reducer(p_op)
    j, d, w = reduce(np.concatenate([short.job, ftr.job]), np.concatenate([short.dep, ftr.dep]),
                     np.concatenate([short.wt, ftr.wt]), max(len(labels), 1))
    table = pd.DataFrame({"job": labels.take(j), "depOn": labels.take(d), "agg": w})
    table.attrs["self_dependencies"] = int((deps["job"] == deps["depOn"]).sum())  # dropped by check_deps
    return MultiHop(table, i)


# ---- Owl's aggregate without the doubling: what Lab 05 needs at scale -----------------------------
# The doubling joins the 2**i-hop frontier with every shorter path, so a pair joined by paths of many
# lengths (rolling-window readers on long chains of periodic jobs) is built once per length and per
# split: on a lake of 3,000 jobs a day those joins reach 90M rows for 6M pairs. Owl's aggregate only
# needs, per upstream job, the sum over its pairs; the two functions below get it from the pairs
# themselves (all paths: level by level, each pair built once per upstream edge) or from the paths of
# at most ``hops`` hops (hop by hop), with the same window ω applied to every pair as the doubling.
def _heights(job: np.ndarray, dep: np.ndarray, n: int) -> np.ndarray:
    """Each job's height: hops on the longest path down to a job nobody reads (the table must be acyclic)."""
    height = np.zeros(n, dtype=np.int64)
    readers = np.bincount(dep, minlength=n)  # edges on which a job is the upstream end
    order = np.argsort(job, kind="stable")  # edges grouped by their downstream end
    starts = np.searchsorted(job[order], np.arange(n + 1))
    frontier = np.flatnonzero(readers == 0)
    level = 0
    while frontier.size:
        height[frontier] = level
        lo, cnt = starts[frontier], starts[frontier + 1] - starts[frontier]
        up = dep[order[np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))]]
        readers -= np.bincount(up, minlength=n)
        frontier = np.unique(up[readers[up] == 0])
        level += 1
    return height


def _prepared(deps: pd.DataFrame, omega, jobs):
    """Codes, Owl's weights, the window's keep-test of a single-hop table (validated as :func:`doubling` does)
    and the jobs' times (submit, end, ω; None without a window)."""
    deps = check_deps(deps)
    wt = np.asarray(owl_weights(deps), dtype=float)
    job, dep, labels = _codes(deps)
    if omega is None:
        return job, dep, wt, labels, lambda up, down: np.ones(len(up), dtype=bool), None
    submit, end, om = _job_times(jobs, labels, omega, (job, dep))
    return job, dep, wt, labels, lambda up, down: submit[down] <= end[up] + om, (submit, end, om)


def _rows_of(nodes: np.ndarray, start: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each node, the positions ``start[node] ..`` of its ``count[node]`` rows, and which node each is."""
    cnt = count[nodes]
    owner = np.repeat(np.arange(len(nodes)), cnt)
    return np.repeat(start[nodes] - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum())), owner


def _pair_sums(up, down, wt, n, length=None):
    """Rows grouped by (up, down) pair, sorted by it: weights summed, lengths (if given) maximised."""
    key = up * n + down
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.zeros(0, np.int64)
    w = np.add.reduceat(wt[order], starts) if key.size else wt[:0]
    ln = None if length is None else (np.maximum.reduceat(length[order], starts) if key.size else length[:0])
    return key[starts] // n, key[starts] % n, w, ln


def _aggregate(values: dict[str, pd.Series], labels: pd.Index, up, down, wt) -> dict[str, pd.Series]:
    """``k + Σ_pairs wt * k[down]`` credited to ``up``, for each Series ``k`` of ``values`` (as :func:`doubling`'s users)."""
    out = {}
    for name, k in values.items():
        kk = k.reindex(labels).to_numpy(float)
        ds = np.bincount(up, weights=wt * kk[down], minlength=len(labels)) if len(labels) else np.zeros(0)
        out[name] = k + pd.Series(ds, index=labels).reindex(k.index, fill_value=0.0)
    return out


#: pairs no longer read that :class:`_Pairs` may hold before it compacts (beyond as many as it still reads)
COMPACT_SLACK = 1_000_000


class _Pairs:
    """The pairs of the jobs whose upstream jobs still have to read them, in arrays that grow by doubling
    (appending stays linear) and are compacted when more than half of what they hold is no longer read;
    codes and lengths in 32 bits. A job's pairs sit at ``start[job] .. start[job] + count[job]``."""

    def __init__(self, n: int):
        self.size = 0
        self._a = [np.zeros(1024, np.int32), np.zeros(1024), np.zeros(1024, np.int32)]
        self.start, self.count = np.zeros(n, np.int64), np.zeros(n, np.int64)

    def append(self, up: np.ndarray, first: np.ndarray, *columns) -> None:
        """Store the pairs of the jobs ``up[first]`` (``columns``: down, wt, length, grouped by ``up``)."""
        new = self.size + len(columns[0])
        if new > len(self._a[0]):
            grown = [np.empty(max(new, 2 * len(a)), a.dtype) for a in self._a]
            for g, a in zip(grown, self._a):
                g[:self.size] = a[:self.size]
            self._a = grown
        for a, c in zip(self._a, columns):
            a[self.size:new] = c
        self.start[up[first]] = self.size + first
        self.count[up[first]] = np.diff(np.r_[first, len(columns[0])])
        self.size = new

    def drop(self, jobs: np.ndarray) -> None:
        """Forget the pairs of ``jobs`` (no upstream job reads them any more); compact when they are most of it."""
        self.count[jobs] = 0
        live = int(self.count.sum())
        if self.size > 2 * live + COMPACT_SLACK:
            keep = np.flatnonzero(self.count)
            idx, _ = _rows_of(keep, self.start, self.count)
            self._a = [a[idx] for a in self._a]
            self.start[keep] = np.cumsum(self.count[keep]) - self.count[keep]
            self.size = live

    down = property(lambda self: self._a[0][:self.size])
    wt = property(lambda self: self._a[1][:self.size])
    length = property(lambda self: self._a[2][:self.size])


#: rows (readers' pairs, one hop longer) :func:`owl_closure` builds at once: a level's upstream jobs are taken a
#: slice at a time (about 40 bytes a row while a slice is summed)
CLOSURE_SLICE_ROWS = 4_000_000


def _horizons(job, dep, n, needed: np.ndarray, until: np.ndarray) -> np.ndarray:
    """For each job, the latest ``until`` of a needed job upstream of it or itself (-inf: none, it is not needed)."""
    h = np.where(needed, until, -np.inf)
    depth = _heights(dep, job, n)  # hops on the longest path from a job with no upstream
    order = np.argsort(depth[job], kind="stable")  # edges by the depth of their reader
    starts = np.searchsorted(depth[job][order], np.arange(int(depth.max(initial=0)) + 2))
    for level in range(1, len(starts) - 1):
        e = order[starts[level]:starts[level + 1]]
        np.maximum.at(h, job[e], h[dep[e]])
    return h


def owl_closure(deps: pd.DataFrame, values: dict[str, pd.Series], *, omega: float | None = None,
                jobs: pd.DataFrame | None = None, needed=None) -> tuple[dict[str, pd.Series], int]:
    """Owl's aggregate of each Series of ``values`` over every path (within ω), and Algorithm 1's iterations.

    The same numbers as the last iteration of :func:`doubling` (equal up to the order of the
    floating-point sums), built from the closure's pairs level by level instead of path pieces: a
    job's pairs are its readers' pairs, one hop longer, plus its direct readers, kept while the
    reader is submitted within ω of its end and summed per pair. Each pair is built once per
    upstream edge, so the work grows with the pairs, not with the paths between them. The
    iterations are those :func:`doubling` would run: ``floor(log2 D) + 1`` for the longest windowed
    path ``D``.

    Memory holds the pairs still to be read, not the closure: a job's pairs are added to the
    aggregates as they are built and forgotten once its last upstream job has read them, and a
    level is built a slice of ``CLOSURE_SLICE_ROWS`` rows at a time. ``needed`` (job ids; None:
    every job) limits the work to what those jobs' aggregates read: the jobs downstream of them,
    and of each only the pairs within the latest window of a needed job upstream of it. Their
    aggregates are bit for bit those of the whole closure; every other job of ``deps`` gets NaN, and
    the iterations count the paths that start at a needed job.

    >>> deps = pd.DataFrame({"job": ["a", "b", "d", "d"], "depOn": ["u", "u", "a", "b"]})
    >>> agg, iterations = owl_closure(deps, {"k": pd.Series({"u": 0.0, "a": 1.0, "b": 0.0, "d": 4.0})})
    >>> agg["k"].to_dict(), iterations
    ({'u': 5.0, 'a': 3.0, 'b': 2.0, 'd': 4.0}, 2)
    >>> owl_closure(deps, {"k": pd.Series({"u": 0.0, "a": 1.0, "b": 0.0, "d": 4.0})}, needed=["a"])[0]["k"].to_dict()
    {'u': nan, 'a': 3.0, 'b': nan, 'd': nan}
    """
    job, dep, wt, labels, keep, times = _prepared(deps, omega, jobs)
    n_labels = len(labels)
    n = max(n_labels, 1)
    if needed is None:
        active, horizon = np.ones(n_labels, bool), None
    else:
        if isinstance(needed, (str, bytes)) or not hasattr(needed, "__len__"):
            raise ValueError(f"needed={show(needed)} is not allowed: give the job ids whose aggregates are wanted "
                             "(a list, an array or a Series), or None for every job")
        wanted = labels.isin(pd.Index(needed))
        until = times[1] + times[2] if times is not None else np.full(n_labels, np.inf)
        horizon = _horizons(job, dep, n_labels, wanted, until)
        active = horizon > -np.inf
    height = _heights(job, dep, n_labels)
    use = active[dep]  # edges read for a needed job: their upstream end is needed or downstream of one
    last_read = np.zeros(n_labels, np.int64)  # the level at which a job's pairs are read for the last time
    np.maximum.at(last_read, job[use], height[dep[use]])
    by_level = np.flatnonzero(use)[np.argsort(height[dep[use]], kind="stable")]  # edges by their upstream's height
    level_starts = np.searchsorted(height[dep[by_level]], np.arange(int(height.max(initial=0)) + 2))
    kk = {name: k.reindex(labels).to_numpy(float) for name, k in values.items()}
    ds = {name: np.zeros(n_labels) for name in values}
    pairs = _Pairs(n_labels)
    longest = 0
    for h in range(1, len(level_starts) - 1):
        level = by_level[level_starts[h]:level_starts[h + 1]]
        level = level[np.argsort(dep[level], kind="stable")]  # grouped by upstream job, each in the table's order
        for e in _slices_by_upstream(level, dep, pairs.count[job[level]], CLOSURE_SLICE_ROWS):
            reader, up, w = job[e], dep[e], wt[e]
            idx, edge = _rows_of(reader, pairs.start, pairs.count)  # the readers' own pairs, built at lower levels
            u = np.concatenate([up, up[edge]])
            d = np.concatenate([reader, pairs.down[idx]])
            ww = np.concatenate([w, w[edge] * pairs.wt[idx]])
            ln = np.concatenate([np.ones(len(e), np.int32), pairs.length[idx] + 1])
            ok = keep(u, d) if horizon is None or times is None else keep(u, d) & (times[0][d] <= horizon[u])
            u, d, ww, ln = _pair_sums(u[ok], d[ok], ww[ok], n, ln[ok])
            if not u.size:
                continue
            first = np.flatnonzero(np.r_[True, u[1:] != u[:-1]])
            group = np.cumsum(np.r_[False, u[1:] != u[:-1]])
            for name, k in kk.items():  # each job's sum in the order of its pairs, as a bincount over all would add
                ds[name][u[first]] = np.bincount(group, weights=ww * k[d], minlength=len(first))
            longest = max(longest, int(ln.max()))
            readers_left = last_read[u[first]] > h
            if readers_left.any():
                rows = np.repeat(readers_left, np.diff(np.r_[first, len(u)]))
                pairs.append(u[rows], np.flatnonzero(np.r_[True, u[rows][1:] != u[rows][:-1]]),
                             d[rows], ww[rows], ln[rows])
        pairs.drop(np.flatnonzero(last_read == h))
    out = {}
    for name, k in values.items():
        total = k + pd.Series(ds[name], index=labels).reindex(k.index, fill_value=0.0)
        if needed is not None:
            total[total.index.isin(labels[~wanted])] = np.nan
        out[name] = total
    return out, longest.bit_length()


def _slices_by_upstream(edges: np.ndarray, dep: np.ndarray, rows: np.ndarray, budget: int) -> list[np.ndarray]:
    """``edges`` (grouped by upstream job) cut between upstream jobs into slices of about ``budget`` rows
    (``rows``: each edge's reader's pairs; one job's edges are never split, so a slice may hold more)."""
    if len(edges) == 0:
        return []
    before = np.r_[0, np.cumsum(rows + 1)[:-1]]  # rows built before each edge
    starts = np.flatnonzero(np.r_[True, dep[edges][1:] != dep[edges][:-1]])
    bucket = before[starts] // budget
    cuts = np.r_[starts[np.r_[True, bucket[1:] != bucket[:-1]]], len(edges)]
    return [edges[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


def owl_within_hops(deps: pd.DataFrame, values: dict[str, pd.Series], hops: int, *, omega: float | None = None,
                    jobs: pd.DataFrame | None = None) -> dict[str, pd.Series]:
    """Owl's aggregate of each Series of ``values`` over the paths of at most ``hops`` hops (within ω).

    Iteration ``i`` of :func:`doubling` holds the paths of at most ``2**i`` hops: this gives its
    aggregate (equal up to the order of the sums) by extending paths one hop at a time upstream.

    >>> deps = pd.DataFrame({"job": [2, 3, 4], "depOn": [1, 2, 3]})
    >>> owl_within_hops(deps, {"k": pd.Series({1: 0.0, 2: 0.0, 3: 0.0, 4: 4.0})}, 2)["k"].tolist()
    [0.0, 4.0, 4.0, 4.0]
    """
    if not isinstance(hops, (int, np.integer)) or isinstance(hops, bool) or hops < 1:
        raise ValueError(f"hops={show(hops)} is not allowed: need an integer >= 1")
    job, dep, wt, labels, keep, _ = _prepared(deps, omega, jobs)
    n = max(len(labels), 1)
    order = np.argsort(job, kind="stable")  # edges grouped by their reader: a path grows upstream through them
    e_job, e_dep, e_wt = job[order], dep[order], wt[order]
    ok = keep(dep, job)
    up, down, w, _ = _pair_sums(dep[ok], job[ok], wt[ok], n)
    parts = [(up, down, w)]
    for _ in range(int(hops) - 1):
        if not up.size:
            break
        lo = np.searchsorted(e_job, up, side="left")
        cnt = np.searchsorted(e_job, up, side="right") - lo
        row = np.repeat(np.arange(len(up)), cnt)
        e = np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))
        u, d, ww = e_dep[e], down[row], w[row] * e_wt[e]
        ok = keep(u, d)
        up, down, w, _ = _pair_sums(u[ok], d[ok], ww[ok], n)
        parts.append((up, down, w))
    up, down, w = (np.concatenate(a) for a in zip(*parts))
    return _aggregate(values, labels, up, down, w)


# ---- the literal pseudocode, for the notebook --------------------------------------------------
def algorithm1_literal(deps: pd.DataFrame, semantics: str = "bag") -> MultiHop:
    """Algorithm 1 exactly as printed, with Owl's functions, under bag or set semantics for ``∪`` and ``-``.

    ``"bag"`` is ``UNION ALL`` / ``EXCEPT ALL`` and agrees with :func:`multi_hop`. ``"set"`` is
    SQL's ``UNION`` / ``EXCEPT`` on whole rows (job, depOn, wt): here j reaches u directly (weight
    1/2) and through m (1/2 x 1), the two rows are equal, and the set union keeps one of them.

    >>> deps = pd.DataFrame({"job": ["m", "j", "j"], "depOn": ["u", "m", "u"]})
    >>> algorithm1_literal(deps, "bag").table.query("job == 'j' and depOn == 'u'")["agg"].item()
    1.0
    >>> algorithm1_literal(deps, "set").table.query("job == 'j' and depOn == 'u'")["agg"].item()  # a path lost
    0.5
    """
    if semantics not in ("set", "bag"):
        raise ValueError(f"semantics={show(semantics)} is not allowed: choose 'bag' or 'set'")
    deps = check_deps(deps)
    cols = ["job", "depOn", "wt"]

    def union(a, b):
        u = pd.concat([a, b], ignore_index=True)
        return u.drop_duplicates(cols, ignore_index=True) if semantics == "set" else u

    def minus(a, b):
        if semantics == "set":
            m = a.merge(b.drop_duplicates(cols), how="left", on=cols, indicator=True)
            return m.loc[m["_merge"] == "left_only", cols].drop_duplicates(cols, ignore_index=True)
        # EXCEPT ALL: the k-th copy of a row survives iff b holds fewer than k copies of it
        a = a.assign(_k=a.groupby(cols).cumcount())
        b = b.assign(_k=b.groupby(cols).cumcount())
        m = a.merge(b, how="left", on=cols + ["_k"], indicator=True)
        return m.loc[m["_merge"] == "left_only", cols].reset_index(drop=True)

    ftr = deps.assign(wt=owl_weights(deps).to_numpy())
    base = ftr.copy()
    i = 0
    while True:
        i += 1
        base_tmp = minus(base, ftr)
        new_ftr = extend_reach(ftr, ftr)
        base_tmp = union(extend_reach(ftr, base_tmp), base)
        base = base_tmp.groupby(["job", "depOn"], as_index=False)["wt"].sum()
        base = union(base, new_ftr)
        ftr = new_ftr
        if len(ftr) == 0:
            break
    table = base.groupby(["job", "depOn"], as_index=False)["wt"].sum().rename(columns={"wt": "agg"})
    return MultiHop(table, i)
