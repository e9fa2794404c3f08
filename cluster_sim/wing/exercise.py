"""Building blocks and checks for Lab 04's exercise: one doubling iteration and Owl's weight function.

Students write ``extend_reach(t1, t2)`` (join ``t1.depOn = t2.job``, multiply the weights, sum per
pair) and ``owl_weights(deps)`` (1/N over each job's N upstream dependencies). :func:`owl_value_with`
runs Algorithm 1 (frontier and short paths kept apart, as in :mod:`.multihop`) on *their*
functions, so the whole valuation can be compared with the library's. The checks try random DAGs
with diamonds and fail on the first disagreement, naming the (job, depOn) pair or the job, and
the misconception it looks like:

* **set instead of bag semantics**: paths through different middle jobs deduplicated instead of
  summed, so a diamond counts once;
* **1/N over downstream edges**: dividing by the consumers of ``depOn`` instead of by the
  upstream dependencies of ``job``;
* **max instead of sum over paths**: the largest path's weight kept for a pair instead of the sum of all;
* **forgetting a job's own value**: aggregate value without ``k_j``;
* **the upstream job's value** (``k`` of ``depOn``) on each path instead of the downstream job's;
* **value flowing downstream**: summed per ``job`` (the reader) instead of per ``depOn`` (the producer);
* **single hop only**: only a job's direct readers counted, not the paths of several hops.

Example
-------
>>> def bag_semantics(t1, t2):      # every path, summed per pair
...     m = t1.merge(t2, left_on="depOn", right_on="job", suffixes=("", "_2"))
...     out = pd.DataFrame({"job": m["job"], "depOn": m["depOn_2"], "wt": m["wt"] * m["wt_2"]})
...     return out.groupby(["job", "depOn"], as_index=False)["wt"].sum()
>>> check_extend_reach(bag_semantics)
'extend_reach: all 12 random DAGs agree with the reference'
>>> def set_semantics(t1, t2):      # keeps one path per pair
...     m = t1.merge(t2, left_on="depOn", right_on="job", suffixes=("", "_2"))
...     out = pd.DataFrame({"job": m["job"], "depOn": m["depOn_2"], "wt": m["wt"] * m["wt_2"]})
...     return out.drop_duplicates(["job", "depOn"])
>>> check_extend_reach(set_semantics)
Traceback (most recent call last):
...
cluster_sim.checking.CheckFailed: extend_reach: on random DAG 0 the pair (job=5, depOn=0) has wt=0.5, expected 1; it is reached through 2 middle jobs (2, 3) and you kept one path: sum the paths of a pair (bag semantics), do not drop duplicates
  to look at it: from cluster_sim.checking import show_case; show_case('random DAG 0')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..checking import CheckFailed, call_student, name_case
from .multihop import check_deps, extend_reach, multi_hop, owl_weights, show
from .provenance import DAY, single_hop
from .value import _downstream_value, check_values, owl_value

#: what a student's function may not call while its check runs: the library's version of it
WEIGHTS_REFERENCES = (owl_weights,)
EXTEND_REFERENCES = (extend_reach,)
DOWNSTREAM_REFERENCES = (_downstream_value, owl_value)

N_CASES = 12


def random_dag(rng: np.random.Generator, n_jobs: int = 12, p_edge: float = 0.25, diamonds: int = 2) -> pd.DataFrame:
    """A random dependency DAG (``job`` reads ``depOn``, ``depOn < job``) with at least ``diamonds`` diamonds.

    Jobs are integers; each diamond is u <- a, u <- b, d <- a, d <- b on four fresh jobs, so a pair
    joined by two paths of the same length is always present.

    >>> random_dag(np.random.default_rng(0), n_jobs=1, p_edge=0.0, diamonds=1).values.tolist()
    [[1, 0], [2, 1], [3, 1], [4, 2], [4, 3]]
    """
    if n_jobs < 1 or not 0 <= p_edge <= 1 or diamonds < 0:
        raise ValueError(f"n_jobs={show(n_jobs)} (>= 1), p_edge={show(p_edge)} (in [0, 1]), diamonds={show(diamonds)} (>= 0)")
    edges = set()
    for j in range(n_jobs):
        for u in range(j):
            if rng.random() < p_edge:
                edges.add((j, u))
    base = n_jobs
    for _ in range(diamonds):
        u, a, b, d = base, base + 1, base + 2, base + 3
        edges |= {(a, u), (b, u), (d, a), (d, b)}
        if base > 0:  # hang the diamond under an earlier job so it is not isolated
            edges.add((u, int(rng.integers(base))))
        base += 4
    return pd.DataFrame(sorted(edges, key=lambda e: (e[0], e[1])), columns=["job", "depOn"])


def _cases(seed: int = 0, n: int = N_CASES) -> list[tuple[pd.DataFrame, pd.Series]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        deps = random_dag(rng, n_jobs=int(rng.integers(2, 12)), p_edge=float(rng.uniform(0.1, 0.4)),
                          diamonds=1 + i % 2)
        jobs = sorted(set(deps["job"]) | set(deps["depOn"]))
        out.append((deps, pd.Series(rng.integers(0, 10, len(jobs)).astype(float), index=jobs)))
    # the first case is small and fixed, so the messages above are stable: one diamond 0 <- 2, 3 <- 5
    out[0] = (pd.DataFrame({"job": [1, 2, 3, 5, 5], "depOn": [0, 0, 0, 2, 3]}),
              pd.Series([1.0, 2.0, 3.0, 4.0, 5.0], index=[0, 1, 2, 3, 5]))
    return out


def _dag_name(i: int, seed: int) -> str:
    """How messages call case ``i`` (and the name :func:`~cluster_sim.checking.show_case` shows it under)."""
    return f"random DAG {i}" if seed == 0 else f"random DAG {i} of seed {seed}"


def _as_table(t, name: str, cols=("job", "depOn", "wt")) -> pd.DataFrame:
    if not isinstance(t, pd.DataFrame):
        raise CheckFailed(f"{name} must return a pandas DataFrame, got {type(t).__name__}")
    missing = [c for c in cols if c not in t.columns]
    if missing:
        raise CheckFailed(f"{name} returned a table without column(s) {missing}; it has {list(t.columns)}")
    return t.loc[:, list(cols)]


def first_difference(got: pd.DataFrame, want: pd.DataFrame, value: str = "wt") -> tuple | None:
    """The first (job, depOn) pair, in sorted order, whose ``value`` differs or that only one table has.

    Returns ``(job, depOn, got_value, want_value)`` (a missing side is NaN), or None if they agree.
    A pair listed twice in ``got`` counts as a difference (its values are summed).

    >>> a = pd.DataFrame({"job": [1, 2], "depOn": [0, 0], "wt": [1.0, 0.5]})
    >>> first_difference(a, a.assign(wt=[1.0, 1.0]))
    (2, 0, 0.5, 1.0)
    """
    g = got.groupby(["job", "depOn"])[value].agg(["sum", "size"])
    w = want.groupby(["job", "depOn"])[value].sum()
    both = g.join(w.rename("want"), how="outer").sort_index()
    diff = ~np.isclose(both["sum"].fillna(np.inf), both["want"].fillna(np.inf), rtol=1e-9, atol=1e-12) \
        | (both["size"].fillna(1) > 1)
    diff &= ~(both["sum"].isna() & both["want"].isna())
    if not diff.any():
        return None
    (j, d), row = next(iter(both[diff].iterrows()))
    return j, d, float(row["sum"]), float(row["want"])


def check_extend_reach(student: Callable, *, seed: int = 0, name: str = "extend_reach") -> str:
    """Compare ``student(t1, t2)`` with :func:`extend_reach` on random DAGs with diamonds (t1 = t2 = the weighted single hops).

    ``name`` is how messages call the student's function (the checks of :func:`check_owl_weights`
    and :func:`check_owl_value` take it too).
    """
    label = name
    for i, (deps, _) in enumerate(_cases(seed)):
        ftr = deps.assign(wt=owl_weights(deps).to_numpy())
        want = extend_reach(ftr, ftr)
        got = _as_table(call_student(student, ftr.copy(), ftr.copy(), name=label, forbid=EXTEND_REFERENCES), label)
        diff = first_difference(got, want)
        if diff is None:
            continue
        j, d, gv, wv = diff
        mids = sorted(set(ftr.loc[ftr["job"] == j, "depOn"]) & set(ftr.loc[ftr["depOn"] == d, "job"]))
        msg = f"{label}: on {_dag_name(i, seed)} the pair (job={j}, depOn={d}) has wt={gv:g}, expected {wv:g}"
        if np.isnan(wv):
            msg += "; no path of two hops joins them: join t1.depOn to t2.job (t1 is the downstream piece)"
        elif np.isnan(gv):
            msg += f"; it is reached through middle job(s) {tuple(mids)}: keep every pair the join finds"
        elif got.duplicated(["job", "depOn"]).any():
            msg += "; your table lists a pair more than once: group by (job, depOn) and sum"
        elif len(mids) > 1 and gv < wv and _is_max_of_paths(student, label):
            msg += (f"; it is reached through {len(mids)} middle jobs {tuple(mids)} and you kept the heaviest path "
                    "(max over the paths): Owl's p_op is a sum, because each path carries its own share of the "
                    "reader's value; the max drops the shares of every other path")
        elif len(mids) > 1 and gv < wv:
            msg += (f"; it is reached through {len(mids)} middle jobs {tuple(mids)} and you kept one path: "
                    "sum the paths of a pair (bag semantics), do not drop duplicates")
        else:
            msg += "; the weight of a path is the product of its pieces' weights, summed over the middle jobs"
        raise CheckFailed(msg + name_case(_dag_name(i, seed), {"deps": deps, "t1 = t2 (the weighted single hops)": ftr}))
    return f"{label}: all {N_CASES} random DAGs agree with the reference"


def _is_max_of_paths(student: Callable, label: str) -> bool:
    """Whether ``student`` agrees with ``extend_reach`` with ``p_op = max`` on every case and on a diamond whose two
    paths weigh differently (4 reads 2 and 3; 2 reads 0 and 1, 3 reads 0: paths of 1/4 and 1/2 from 4 to 0), where
    keeping the first path found and keeping the heaviest differ."""
    uneven = pd.DataFrame({"job": [2, 2, 3, 4, 4], "depOn": [0, 1, 0, 2, 3]})
    for deps in [uneven] + [d for d, _ in _cases()]:
        ftr = deps.assign(wt=owl_weights(deps).to_numpy())
        got = _as_table(call_student(student, ftr.copy(), ftr.copy(), name=label, forbid=EXTEND_REFERENCES), label)
        if first_difference(got, extend_reach(ftr, ftr, p_op="max")) is not None:
            return False
    return True


def check_owl_weights(student: Callable, *, seed: int = 0, name: str = "owl_weights") -> str:
    """Compare ``student(deps)`` (one weight per row of deps) with :func:`owl_weights` on random DAGs.

    >>> def downstream(deps):            # divides by the consumers of depOn instead
    ...     return 1.0 / deps.groupby("depOn")["job"].transform("size")
    >>> check_owl_weights(downstream)
    Traceback (most recent call last):
    ...
    cluster_sim.checking.CheckFailed: owl_weights: on random DAG 0 the edge (job=1, depOn=0) has weight 0.333333, expected 1; job 1 has 1 upstream dependencies and 0 has 3 consumers: your weights look like 1/N over the consumers of depOn (downstream edges). Owl divides a job's value among its own N upstream dependencies: 1/N with N counted per job
      to look at it: from cluster_sim.checking import show_case; show_case('random DAG 0')
    """
    label = name
    for i, (deps, _) in enumerate(_cases(seed)):
        want = owl_weights(deps).to_numpy()
        got = np.asarray(call_student(student, deps.copy(), name=label, forbid=WEIGHTS_REFERENCES), dtype=float).reshape(-1)
        if got.shape != want.shape:
            raise CheckFailed(f"{label}: on {_dag_name(i, seed)} you returned {got.size} weights for {len(deps)} edges: "
                              "return one weight per row of deps, in its order" + name_case(_dag_name(i, seed), {"deps": deps}))
        bad = ~np.isclose(got, want)
        if not bad.any():
            continue
        r = int(np.flatnonzero(bad)[0])
        j, d = deps["job"].iloc[r], deps["depOn"].iloc[r]
        n_up = int((deps["job"] == j).sum())
        n_down = int((deps["depOn"] == d).sum())
        msg = f"{label}: on {_dag_name(i, seed)} the edge (job={j}, depOn={d}) has weight {got[r]:g}, expected {want[r]:g}"
        downstream = 1.0 / deps.groupby("depOn")["job"].transform("size").to_numpy()
        if np.allclose(got, downstream):
            msg += (f"; job {j} has {n_up} upstream dependencies and {d} has {n_down} consumers: your weights look like "
                    "1/N over the consumers of depOn (downstream edges). Owl divides a job's value among its own N "
                    "upstream dependencies: 1/N with N counted per job")
        else:
            msg += f"; job {j} reads {n_up} job(s), so each of its upstream edges gets 1/{n_up}"
        raise CheckFailed(msg + name_case(_dag_name(i, seed), {"deps": deps}))
    return f"{label}: all {N_CASES} random DAGs agree with the reference"


#: what a wrong aggregate value matches on a case, and why it is wrong (:func:`_value_misconception`)
VALUE_WHY = {
    "upstream_k": ("your values match the paths weighted by the upstream job's own value k[depOn]: the value that "
                   "reaches a job is its readers' (each row's agg x k of its job, the downstream end), not its own "
                   "value again"),
    "downstream": ("your values match value flowing downstream (summed per job, the reader, instead of per depOn, "
                   "the producer): a job is worth what the jobs that read its output are worth, so value flows "
                   "upstream, from job to depOn"),
    "single_hop": ("your values match the single-hop value: only a job's direct readers count. Value reaches a job "
                   "along every path of any length: use the converged table of Algorithm 1, not one hop"),
}


def _value_misconception(deps: pd.DataFrame, k: pd.Series, got: pd.Series) -> str | None:
    """The misconception in :data:`VALUE_WHY` whose aggregate value ``got`` matches on this case, if any."""
    table = multi_hop(check_deps(deps)).table
    w = table["agg"].to_numpy()
    k_job, k_dep = k.reindex(table["job"]).to_numpy(), k.reindex(table["depOn"]).to_numpy()

    def per(weights, key):
        return k + pd.Series(weights).groupby(table[key].to_numpy()).sum().reindex(k.index, fill_value=0.0)

    variants = [("upstream_k", per(w * k_dep, "depOn")), ("downstream", per(w * k_dep, "job")),
                ("downstream", per(w * k_job, "job")), ("single_hop", owl_value(deps, k, max_iterations=0))]
    for cause, v in variants:
        if np.allclose(got.to_numpy(float), v.reindex(got.index).to_numpy(float)):
            return VALUE_WHY[cause]
    return None


def owl_value_with(
    deps: pd.DataFrame,
    k: pd.Series,
    extend: Callable = extend_reach,
    wt_fn: Callable = owl_weights,
    *,
    max_iterations: int | None = None,
) -> pd.Series:
    """Owl's aggregate value by Algorithm 1 built from ``extend(t1, t2)`` and ``wt_fn(deps)`` (a student's or the library's)."""
    deps = check_deps(deps)
    k = check_values(k, deps)
    cols = ["job", "depOn", "wt"]
    ftr = deps.assign(wt=np.asarray(wt_fn(deps), dtype=float))
    short = ftr.iloc[:0]
    i = 0
    while len(ftr) and (max_iterations is None or i < max_iterations):
        i += 1
        new_ftr = _as_table(extend(ftr, ftr), "extend")
        mid = _as_table(extend(ftr, short), "extend") if len(short) else short
        short = pd.concat([short, ftr, mid], ignore_index=True).groupby(["job", "depOn"], as_index=False)["wt"].sum()
        ftr = new_ftr[cols]
    table = pd.concat([short, ftr], ignore_index=True)
    ds = pd.Series(table["wt"].to_numpy() * k.reindex(table["job"]).to_numpy()).groupby(table["depOn"].to_numpy()).sum()
    return (k + ds.reindex(k.index, fill_value=0.0)).rename("agg_value")


def check_owl_value(student: Callable, *, seed: int = 0, name: str = "owl_value",
                    forbid: tuple[Callable, ...] = DOWNSTREAM_REFERENCES) -> str:
    """Compare ``student(deps, k)`` (a Series indexed like k) with :func:`owl_value` on random DAGs.

    ``forbid``: the references the student's code may not call (default: Owl's downstream operation; the
    lake check forbids the library's ``owl_weights`` and ``extend_reach`` instead).

    >>> check_owl_value(lambda deps, k: owl_value_with(deps, k) - k)      # the job's own value forgotten
    Traceback (most recent call last):
    ...
    cluster_sim.checking.CheckFailed: owl_value: on random DAG 0 job 0 has aggregate value 14, expected 15; every job is short by exactly its own job-local value k: agg(j) = k_j + what reaches it from downstream
      to look at it: from cluster_sim.checking import show_case; show_case('random DAG 0')
    """
    label = name
    for i, (deps, k) in enumerate(_cases(seed)):
        want = owl_value(deps, k)
        got = call_student(student, deps.copy(), k.copy(), name=label, forbid=forbid)
        if not isinstance(got, pd.Series):
            raise CheckFailed(f"{label} must return a pandas Series indexed like k, got {type(got).__name__}")
        got = got.reindex(want.index).astype(float)
        bad = ~np.isclose(got.to_numpy(), want.to_numpy())
        if not bad.any():
            continue
        j = want.index[int(np.flatnonzero(bad)[0])]
        msg = f"{label}: on {_dag_name(i, seed)} job {j} has aggregate value {got[j]:g}, expected {want[j]:g}"
        if np.allclose(want - got, k):
            msg += "; every job is short by exactly its own job-local value k: agg(j) = k_j + what reaches it from downstream"
        elif (cause := _value_misconception(deps, k, got)) is not None:
            msg += "; " + cause
        elif got.isna().any():
            msg += "; some jobs are missing: return every job of k (a job nobody reads keeps agg = k)"
        raise CheckFailed(msg + name_case(_dag_name(i, seed), {"deps": deps, "k": k}))
    return f"{label}: all {N_CASES} random DAGs agree with the reference"


# ---- the provenance self-join (§4.2) ------------------------------------------------------------------------------
#: what a wrong self-join matches, by the rule it drops (the arguments :func:`~.provenance.single_hop` takes to drop it)
SELF_JOIN_WHY = {
    "last_writer": ({"last_writer": False},
                    "your pairs match a read to every earlier write of its file: a read sees only the version written "
                    "last before it (last writer wins), so keep, per read, the write with the latest time before it"),
    "read_after_write": ({"read_after_write": False},
                         "your pairs match a read to a write that came after it: a job can only depend on output "
                         "that existed when it read (R/W correctness): keep writes strictly before the read"),
    "window": ({"window": None},
               "your pairs keep a write older than the window T before the read: a dependency counts only if the "
               "version read was written at most T earlier (rule 3), so drop a read whose last writer is older"),
}


def self_join_cases() -> list[tuple[str, pd.DataFrame, float]]:
    """The logs :func:`check_self_join` tries: §2's worked log with T = 30 days, then the same log with T = 1 day (a
    window that binds on the day-long gaps), each as (name, ProvRepo, T in seconds)."""
    from .experiments import self_join_example

    example = self_join_example()
    return [("the worked log of §2 (T = 30 days)", example, 30 * DAY),
            ("the worked log of §2 with T = 1 day", example, 1 * DAY)]


def check_self_join(student: Callable, *, name: str = "self_join") -> str:
    """Compare ``student(prov, window)`` (a DataFrame with columns job, depOn: one row per dependency) with Wing's
    three-rule self-join (:func:`~.provenance.single_hop`) on :func:`self_join_cases`; name the first pair that
    differs and the rule it drops."""
    for case, prov, T in self_join_cases():
        got = call_student(student, prov.copy(), T, name=name, forbid=single_hop)
        got = _as_table(got, name, cols=("job", "depOn"))
        pairs = set(map(tuple, got.astype({"job": "int64", "depOn": "int64"}).values.tolist()))
        want = set(map(tuple, single_hop(prov, T)[["job", "depOn"]].values.tolist()))
        if pairs == want:
            continue
        extra, missing = sorted(pairs - want), sorted(want - pairs)
        look = name_case(case, {"prov": prov, "window": T})
        msg = (f"{name}: on {case}, " + (f"you found (job, depOn) = {extra[0]}, which the reference does not"
                                         if extra else f"you miss (job, depOn) = {missing[0]}"))
        for rule, (kw, why) in SELF_JOIN_WHY.items():
            variant = set(map(tuple, single_hop(prov, **{"window": T, **kw})[["job", "depOn"]].values.tolist()))
            if pairs == variant:
                raise CheckFailed(f"{msg}; {why}" + look)
        if missing and not extra:
            raise CheckFailed(f"{msg}: match each read (op 'read') to the file's writes, by file name" + look)
        raise CheckFailed(f"{msg}: the reference keeps, per read, the latest write of the file before it, if it is "
                          "at most T older" + look)
    return f"{name}: every case agrees with Wing's three-rule self-join"
