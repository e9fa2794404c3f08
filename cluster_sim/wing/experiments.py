"""Lab 04's experiments: Wing's pipeline on a lake (run → result), the self-join's rules one at a
time, Algorithm 1 iteration by iteration, and tables pooled over seeds (the claims beside the
paper's numbers are in :mod:`.claims`).

:func:`analyse` takes a JobRepo and a ProvRepo table from any source (the generator here, a
simulation or a real log) and runs what Wing runs on them; :func:`run` generates the lake of a
:class:`~cluster_sim.wing.config.WingDepsConfig` first. Each returns a :class:`WingDepsResult`.

Example
-------
>>> r = run(WingDepsConfig.ci())
>>> r.truth_recovered, bool(r.hidden > 0)          # single_hop finds exactly the generator's dependencies
(True, True)
>>> list(r.exploration["stage"][:3])
['job-local', 'single hop', 'iteration 1']
>>> again = analyse(r.jobs, r.prov, window=r.window, omega=r.omega, tr=r.tr)   # the same tables from elsewhere
>>> again.agg.equals(r.agg), again.lake is None
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np
import pandas as pd

from .characterise import classify_templates, components, heuristic_agreement, observations, table1
from .config import WingDepsConfig
from .lake import Lake, generate_lake
from .multihop import check_deps, depths, diameter, doubling, expected_iterations, show
from .predict import best_threshold, predict, t2_errors, t2_summary
from .provenance import DAY, DEFAULT_WINDOW, job_local_value, read_matches, single_hop
from .value import check_values, valid_jobs, value_exploration
from ..sweep import run_grid
from ..validate import number

WEEK = 7 * DAY
#: Algorithm 1's loop counter i covers paths of up to 2**i hops; "99% within four iterations" (§4.5.3)
PAPER_ITERATIONS = 4
#: the paper's numbers outside Table 1 and §2.3 (§1, §4.4, §4.5.3), quoted as published
PAPER_INTRO = {
    "jobs depending on at least one other job": (0.80, "almost 80% (§1)"),
    "dependencies per job": (4.0, "16M dependencies / 4M jobs (§1)"),
    "Table 1 heuristics right": (24 / 25, "24 of 25 sampled jobs (§4.2)"),
    "value hidden from job-local valuation": (0.83, "83% (§4.5.3)"),
    f"value found within {PAPER_ITERATIONS} iterations": (0.99, "99% (§4.5.3, Fig. 6)"),
}
JOB_NEEDS = ("job", "template", "submit", "end")


# ---- the pipeline on one lake ------------------------------------------------------------------
@dataclass
class WingDepsResult:
    """What Wing's pipeline finds in one pair of logs (JobRepo ``jobs``, ProvRepo ``prov``)."""

    jobs: pd.DataFrame
    prov: pd.DataFrame
    deps: pd.DataFrame  # single-hop dependencies within T: job, depOn, lag, files
    k: pd.Series  # job-local value: downloads of each job's outputs
    window: float  # T (s)
    omega: float  # ω (s)
    tr: float  # T1's threshold (%)
    train_week: int
    horizon: float  # the end of the log (s)
    templates: pd.DataFrame  # Table 1's heuristics per template
    curve: pd.DataFrame  # Fig. 2: T1's precision and recall over tr
    best_tr: float  # the tr maximising precision x recall
    t2: pd.DataFrame  # Fig. 3: T2's errors at tr (predictions made and right)
    t2_stats: dict  # RMSE, median absolute error, within +-20%, over-estimated by 2x
    valid: pd.Index  # jobs ending at least ω before the log ends (§4.5.1)
    exploration: pd.DataFrame  # Fig. 6: value found per stage of Algorithm 1, over the valid jobs
    iterations: int  # Algorithm 1's loop with ω
    config: WingDepsConfig | None = None
    lake: Lake | None = field(default=None, repr=False)  # the generator's truth, when there is one

    @cached_property
    def agg(self) -> pd.Series:
        """The aggregate value of every job, with ω (what :func:`~.value.owl_value` gives).

        The exploration's doubling kept only the paths of the valid jobs (all that Fig. 6 and the claims
        read); the other jobs' values come from a second doubling kept to their paths, run when ``agg``
        is first read (at ``paper`` it costs about as much as the first). Both give the numbers of one
        doubling over every job, bit for bit."""
        agg = self.exploration.attrs["agg"]
        rest = agg.index.difference(self.valid, sort=False)
        if not len(rest):
            return agg
        others = value_exploration(self.deps, self.k, omega=self.omega, jobs=self.jobs, over=rest).attrs["agg"]
        return agg.where(agg.index.isin(self.valid), others)

    @property
    def hidden(self) -> float:
        """The share of the valid jobs' aggregate value job-local valuation misses (§4.5.3: 83%)."""
        return 1.0 - float(self.exploration["share"].iloc[0])

    def found_within(self, iterations: int) -> float:
        """Share of aggregate value found after ``iterations`` iterations of Algorithm 1: 0 is job-local value
        (Fig. 6's iteration 0), ``i`` >= 1 the paths of up to ``2**i`` hops (the loop counter)."""
        ex = self.exploration
        hops = 0 if iterations == 0 else 2 ** iterations
        return float(ex.loc[ex["hops"] <= hops, "share"].iloc[-1])

    @property
    def truth_recovered(self) -> bool | None:
        """Does the self-join find exactly the generator's dependencies with a lag of at most T? (None: no truth)"""
        if self.lake is None:
            return None
        want = self.lake.truth[self.lake.truth["lag"] <= self.window]
        return set(zip(self.deps["job"], self.deps["depOn"])) == set(zip(want["job"], want["depOn"]))

    @cached_property
    def shares(self) -> dict[str, float]:
        """Headline counts and shares: of jobs, of dependencies, of value."""
        j, d, tc = self.jobs, self.deps, self.templates
        rec = j["template"].map(tc["recurring"]).to_numpy(bool)
        rec_of = pd.Series(rec, index=j["job"].to_numpy())
        n_j, n_d = max(len(j), 1), max(len(d), 1)
        out = {
            "jobs": float(len(j)), "dependencies": float(len(d)), "dependencies per job": len(d) / n_j,
            "jobs depending on at least one other job": d["job"].nunique() / n_j,
            "recurring job share": float(rec.mean()) if len(j) else np.nan,
            "recurring dependency share": float((rec_of.reindex(d["job"]).to_numpy()
                                                 & rec_of.reindex(d["depOn"]).to_numpy()).sum() / n_d),
        }
        if "org" in j.columns:
            org = j.set_index("job")["org"]
            out["cross-org share of dependencies"] = float(
                (org.reindex(d["job"]).to_numpy() != org.reindex(d["depOn"]).to_numpy()).sum() / n_d)
        out["value hidden from job-local valuation"] = self.hidden
        return out

    # the characterisation of §2.3: a few tenths of a second at the default preset, so computed on demand
    @cached_property
    def table1(self) -> pd.DataFrame:
        """Table 1 measured by its heuristics, beside the generator's truth when there is one."""
        t = table1(self.jobs, self.deps)
        t["generator's truth"] = np.nan
        if self.lake is not None:
            t["generator's truth"] = t["characteristic"].map(_truth_shares(self.lake, self.deps))
        return t

    @cached_property
    def agreement(self) -> pd.DataFrame | None:
        """How often Table 1's heuristics agree with the generator (None without a generator's truth)."""
        if self.lake is None:
            return None
        return heuristic_agreement(self.lake.jobs, self.deps)

    @cached_property
    def jobs_classified_right(self) -> float:
        """The share of jobs whose three Table 1 labels (recurring, periodic, polling) all match the
        generator (the paper checked 25 jobs by hand: 24 right); NaN without a generator's truth."""
        if self.lake is None:
            return float("nan")
        tc = self.templates
        j = self.lake.jobs
        kind = j["kind"].to_numpy()
        t = j["template"]
        right = ((t.map(tc["recurring"]).to_numpy(bool) == (kind != "adhoc"))
                 & (t.map(tc["periodic"]).to_numpy(bool) == (kind == "periodic"))
                 & (t.map(tc["polling"]).to_numpy(bool) == (kind == "polling")))
        return float(right.mean()) if len(j) else float("nan")

    @cached_property
    def observations(self) -> pd.DataFrame:
        """The six observations of §2.3 on this log, beside the paper's numbers."""
        return observations(self.jobs, self.deps, self.prov)

    @cached_property
    def components(self) -> pd.DataFrame:
        """Weakly connected components of the job DAG: size and bottom-heaviness (Observation 5)."""
        return components(self.jobs, self.deps)


def _truth_shares(lake: Lake, deps: pd.DataFrame) -> dict[str, float]:
    """Table 1's characteristics as the generator made them (recurring = not ad hoc; hard/polling from the reader)."""
    j = lake.jobs.set_index("job")
    kind = j["kind"]
    t = deps[["job", "depOn"]]
    rec = (kind != "adhoc")
    n_j, n_d = max(len(j), 1), max(len(t), 1)
    mode = j["dep_mode"].reindex(t["job"]).to_numpy()
    return {
        "recurring jobs": float(rec.mean()), "ad hoc jobs": float((~rec).mean()),
        "periodic jobs": float((kind == "periodic").mean()), "polling jobs": float((kind == "polling").mean()),
        "recurring dependencies": float((rec.reindex(t["job"]).to_numpy() & rec.reindex(t["depOn"]).to_numpy()).sum() / n_d),
        "hard dependencies": float((mode == "hard").sum() / n_d),
        "polling dependencies": float((mode == "polling").sum() / n_d),
    }


def _check_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(jobs, pd.DataFrame):
        raise ValueError(f"jobs must be a pandas DataFrame (JobRepo) with columns {', '.join(JOB_NEEDS)}; "
                         f"got {type(jobs).__name__}")
    missing = [c for c in JOB_NEEDS if c not in jobs.columns]
    if missing:
        raise ValueError(f"jobs lacks column(s) {missing}; it has {list(jobs.columns)} (JobRepo needs {', '.join(JOB_NEEDS)})")
    return jobs


def analyse(
    jobs: pd.DataFrame,
    prov: pd.DataFrame,
    *,
    window: float | None = DEFAULT_WINDOW,
    omega: float = WEEK,
    tr: float = 20.0,
    train_week: int = 0,
    horizon: float | None = None,
    config: WingDepsConfig | None = None,
    lake: Lake | None = None,
) -> WingDepsResult:
    """Wing's pipeline on a JobRepo and a ProvRepo table, from any source.

    ``jobs`` needs ``job``, ``template``, ``submit`` and ``end`` (the observations also read
    ``org``, ``queue``, ``priority`` and ``runtime``); ``prov`` is ProvRepo (``job``, ``file``,
    ``op``, ``time``). ``window`` is T and ``omega`` ω, in seconds; ``horizon`` is the end of the
    log (default: its last event). ``lake`` (optional) is the generator's truth to check against.
    """
    jobs = _check_jobs(jobs)
    omega = number(omega, "omega", lo=0)
    tr = number(tr, "tr", lo=0, hi=100)
    deps = single_hop(prov, window)
    ids = pd.Index(jobs["job"])
    strangers = pd.Index(pd.concat([deps["job"], deps["depOn"]]).unique()).difference(ids)
    if len(strangers):
        raise ValueError(f"prov names {len(strangers)} job(s) that jobs (JobRepo) does not hold, e.g. "
                         f"{show(strangers[0])}: give every job that reads or writes a row in jobs")
    if horizon is None:
        horizon = float(max(jobs["end"].max(), prov["time"].max()))
    horizon = number(horizon, "horizon")
    k = job_local_value(prov, ids)
    templates = classify_templates(jobs, deps)
    # recurring templates as Table 1 finds them on the whole log (the paper classifies over its three months)
    recurring = templates.index[templates["recurring"]]
    curve, t2 = predict(jobs, deps, train_week, tr, recurring=recurring)
    best = best_threshold(curve) if (curve["product"] > 0).any() else float("nan")
    stats = t2_summary(t2) if len(t2) else {"predictions": 0.0, "RMSE (h)": np.nan, "median absolute error (min)": np.nan,
                                            "within +-20%": np.nan, "over-estimated by 2x or more": np.nan}
    valid = valid_jobs(jobs, omega, horizon)
    exploration = value_exploration(deps, k, omega=omega, jobs=jobs, over=valid)
    iterations = int(len(exploration) - 2)  # rows: job-local, single hop, then one per iteration
    return WingDepsResult(jobs=jobs, prov=prov, deps=deps, k=k, window=window, omega=omega, tr=tr,
                          train_week=train_week, horizon=horizon, templates=templates, curve=curve, best_tr=best,
                          t2=t2, t2_stats=stats, valid=valid, exploration=exploration, iterations=iterations,
                          config=config, lake=lake)


def run(config: WingDepsConfig) -> WingDepsResult:
    """Generate ``config``'s lake and run Wing's pipeline on it."""
    if not isinstance(config, WingDepsConfig):
        raise ValueError(f"config must be a WingDepsConfig, got {type(config).__name__}")
    lake = generate_lake(config.lake_config())
    return analyse(lake.jobs, lake.prov, window=config.window, omega=config.omega, tr=config.tr,
                   train_week=config.train_week, horizon=config.horizon, config=config, lake=lake)


def whole_result(result: WingDepsResult) -> dict:
    """run_seeds' ``metrics=``: the whole result (the notebook's tables pool frames across seeds)."""
    return {"result": result}


def estimated_seconds(config: WingDepsConfig) -> float:
    """``run(config)``'s time as ``config.work()`` estimates it: ``run_grid``'s ``estimate=``, so that a paper
    pool's seeds start together on a worker and in this process instead of the first running here alone."""
    return config.work().seconds


def run_seeds(config: WingDepsConfig, n: int = 3, *, client=None, cache=None) -> list[WingDepsResult]:
    """``config`` at seeds ``seed, seed + 1, ..., seed + n - 1``: claims are made over all of them.

    The seeds go through :func:`cluster_sim.sweep.run_grid` (``client`` and ``cache`` are passed
    on), which returns each seed's whole result (a few MB at the ``default`` preset)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n={show(n)} is not allowed: need an integer >= 1 (how many seeds)")
    df = run_grid(run, config, {}, seeds=int(n), metrics=whole_result, client=client, cache=cache,
                  estimate=estimated_seconds)
    return list(df["result"])


# ---- the self-join's rules, one at a time (§4.2) ---------------------------------------------------
def self_join_example() -> pd.DataFrame:
    """A hand-made ProvRepo where dropping each rule of the self-join gives a different wrong answer.

    Times are in days (as seconds). ``sales/latest`` is written by jobs 1, 2 and 8 (days 1, 2, 5)
    and read by 3 (day 3) and 5 (day 4): the truth is 3 <- 2 and 5 <- 2. Job 4 reads ``clicks/p7``
    on day 3, before 5 writes it on day 4; 8 reads it on day 4.5 (8 <- 5). Job 7 reads
    ``archive/2019`` 40 days after 6 wrote it, beyond T = 30 days.

    >>> sorted(map(tuple, single_hop(self_join_example())[["job", "depOn"]].values.tolist()))
    [(3, 2), (5, 2), (8, 5)]
    """
    rows = [  # job, file, op, day
        (6, "archive/2019", "write", 0.0),
        (1, "sales/latest", "write", 1.0),
        (2, "sales/latest", "write", 2.0),
        (3, "sales/latest", "read", 3.0),
        (4, "clicks/p7", "read", 3.0),
        (5, "sales/latest", "read", 4.0),
        (5, "clicks/p7", "write", 4.2),
        (8, "clicks/p7", "read", 4.5),
        (8, "sales/latest", "write", 5.0),
        (7, "archive/2019", "read", 40.0),
    ]
    prov = pd.DataFrame(rows, columns=["job", "file", "op", "time"])
    prov["time"] = prov["time"] * DAY
    return prov


RULE_VARIANTS = {
    "all three rules": {},
    "without R/W correctness": {"read_after_write": False},
    "without last-writer wins": {"last_writer": False},
    "without the time window": {"window": None},
}


class Ablation(NamedTuple):
    """The self-join with each rule dropped: a summary table and what the figure draws."""

    table: pd.DataFrame  # variant, dependencies, wrong, missed, error, the error's count
    lags_without_rw: np.ndarray  # read - write (s) of every match without rule 1 (negative: a later write)
    writers_per_read: pd.Series  # without rule 2: how many writers each read is matched to (histogram)
    per_writer_day: pd.DataFrame  # dependents per writing job by the day it ended, with and without T
    window: float


def rule_ablation(prov: pd.DataFrame, window: float = DEFAULT_WINDOW) -> Ablation:
    """The self-join with all three rules, then without each one: how many dependencies, how many
    wrong (not found with all rules), how many missed, and the error the paper warns of."""
    window = number(window, "window", lo=0)
    good = single_hop(prov, window)
    key = set(zip(good["job"], good["depOn"]))
    rows = []
    for name, change in RULE_VARIANTS.items():
        kw = {"window": window, **change}
        deps = single_hop(prov, kw.pop("window"), **kw)
        pairs = set(zip(deps["job"], deps["depOn"]))
        wrong, missed = pairs - key, key - pairs
        if name == "all three rules":
            error, count = "none: the reference", 0
        elif name == "without R/W correctness":
            later = int((deps["lag"] < 0).sum())
            both = sum(1 for j, d in pairs if (d, j) in pairs) // 2
            error, count = f"dependencies on a later write; {both} pair(s) depend on each other (a cycle)", later
        elif name == "without last-writer wins":
            error, count = "dependencies on overwritten versions the read never saw", len(wrong)
        else:
            error, count = f"dependencies older than T = {window / DAY:g} days", int((deps["lag"] > window).sum())
        rows.append({"variant": name, "dependencies": len(deps), "wrong": len(wrong), "missed": len(missed),
                     "error": error, "count": count})
    table = pd.DataFrame(rows)
    m, _ = read_matches(prov, window, read_after_write=False)
    lags = m["lag"].to_numpy()
    m, _ = read_matches(prov, window, last_writer=False)
    writers = m.groupby(["job", "file", "time"]).size().value_counts().sort_index()
    per_day = []
    writes = prov[prov["op"] == "write"].groupby("job")["time"].max()  # when each writing job wrote last
    day = np.floor(writes / DAY).astype(int).to_numpy()
    for label, T in (("with T", window), ("without T", None)):
        per = single_hop(prov, T).groupby("depOn").size().reindex(writes.index, fill_value=0)
        per_day.append(per.groupby(day).mean().rename(label))
    per_writer_day = pd.concat(per_day, axis=1).rename_axis("day the writer ended").reset_index()
    return Ablation(table, lags, writers.rename("reads"), per_writer_day, window)


# ---- Fig. 1: a few jobs of the lake, their files and who read them -------------------------------
class LakeSlice(NamedTuple):
    """A handful of jobs joined by dependencies across organisations, with the files between them."""

    jobs: pd.DataFrame  # job, template, org, submit, end, k
    edges: pd.DataFrame  # job (reader), depOn (writer), file (the latest it read), wtime, rtime, files (how many)
    target: object  # the job the slice ends in


def lake_slice(result: WingDepsResult, max_jobs: int = 6) -> LakeSlice:
    """A small sub-DAG for Fig. 1: a downloaded job two or more hops deep whose upstream jobs span
    several organisations, and up to two upstream jobs per job (other organisations first)."""
    if isinstance(max_jobs, bool) or not isinstance(max_jobs, (int, np.integer)) or max_jobs < 2:
        raise ValueError(f"max_jobs={show(max_jobs)} is not allowed: need an integer >= 2")
    deps, J = result.deps, result.jobs.set_index("job")
    if len(deps) == 0:
        raise ValueError("the log has no dependency to draw")
    org = J["org"] if "org" in J.columns else pd.Series(0, index=J.index)
    depth = depths(deps)
    up = deps.groupby("job")["depOn"].apply(list)

    def pick(j):
        cands = sorted(up.get(j, []), key=lambda d: (org[d] == org[j], -J.at[d, "end"]))
        return cands[:2]

    def grow(target):
        chosen, tree, frontier = [target], [], [target]
        while frontier and len(chosen) < max_jobs:
            nxt = []
            for j in frontier:
                for d in pick(j):
                    if d not in chosen and len(chosen) < max_jobs:
                        chosen.append(d)
                        tree.append((j, d))
                        nxt.append(d)
            frontier = nxt
        return chosen, tree

    deep = depth[depth >= 2].index
    cands = [j for j in deep if result.k.get(j, 0) > 0] or list(deep) or list(depth.index)
    best, best_score = None, (-1, -1)
    for j in sorted(cands)[:400]:  # a bounded search: enough to find a good picture
        chosen, tree = grow(j)
        score = (org.reindex(chosen).nunique(), len(chosen))
        if score > best_score:
            best, best_score = (chosen, tree), score
    chosen, tree = best
    m, _ = read_matches(result.prov, result.window)
    m = m[m["job"].isin(chosen) & m["depOn"].isin(chosen)]
    m = m.sort_values("wtime").groupby(["job", "depOn"], as_index=False).agg(
        file=("file", "last"), wtime=("wtime", "last"), rtime=("time", "last"), files=("file", "nunique"))
    keep = set(tree)  # the dependencies the slice follows (others among its jobs would clutter it)
    edges = m[[(a, b) in keep for a, b in zip(m["job"], m["depOn"])]].reset_index(drop=True)
    cols = [c for c in ("template", "org", "submit", "end") if c in J.columns]
    sj = J.loc[chosen, cols].assign(k=result.k.reindex(chosen).to_numpy()).rename_axis("job").reset_index()
    return LakeSlice(sj.sort_values("submit", ignore_index=True), edges, chosen[0])


# ---- Algorithm 1, iteration by iteration ----------------------------------------------------------
def doubling_example() -> tuple[pd.DataFrame, pd.Series]:
    """A chain of nine jobs (a0 <- a1 <- ... <- a8, diameter 8) with a shortcut and a diamond, and job-local values.

    Algorithm 1 needs floor(log2 8) + 1 = 4 iterations. a2 also reads a0 directly, so a2 reaches
    a0 by one hop (weight 1/2) and by two (1/2 x 1): two rows of equal weight, which set semantics
    merge into one. The diamond (d reads b and c, both read a3) joins a pair by two paths of the
    same length. a0 is the only job without an upstream dependency, so it collects all the value.

    >>> deps, k = doubling_example()
    >>> diameter(deps), expected_iterations(diameter(deps)), float(k.sum())
    (8, 4, 13.0)
    """
    chain = [f"a{i}" for i in range(9)]
    rows = [(chain[i + 1], chain[i]) for i in range(8)] + [("a2", "a0"), ("b", "a3"), ("c", "a3"), ("d", "b"),
                                                          ("d", "c")]
    deps = pd.DataFrame(rows, columns=["job", "depOn"])
    k = pd.Series(0.0, index=chain + ["b", "c", "d"])
    k["a8"], k["d"], k["a0"] = 8.0, 4.0, 1.0
    return deps, k


def doubling_trace(deps: pd.DataFrame, k: pd.Series | None = None, *, omega: float | None = None,
                   jobs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Algorithm 1 one iteration at a time: the paths it knows after each (pairs in the frontier,
    of exactly 2**i hops, and in the short table, of fewer), the longest path covered, and with
    ``k`` the share of aggregate value found."""
    deps = check_deps(deps)
    if k is not None:
        k = check_values(k, deps)
    rows = []
    for i, short, ftr, labels in doubling(deps, omega=omega, jobs=jobs):
        n = max(len(labels), 1)
        found = np.unique(np.concatenate([short.job * n + short.dep, ftr.job * n + ftr.dep]))
        row = {"iteration": i, "paths up to (hops)": 2 ** i, "frontier pairs": len(ftr),
               "short pairs": len(short), "pairs found": len(found)}
        if k is not None:
            kk = k.reindex(labels).to_numpy()
            j = np.concatenate([short.job, ftr.job])
            d = np.concatenate([short.dep, ftr.dep])
            w = np.concatenate([short.wt, ftr.wt])
            row["value found"] = float(k.sum() + (w * kk[j]).sum())
        rows.append(row)
    out = pd.DataFrame(rows)
    if k is not None and len(out):
        out["share of value found"] = out["value found"] / out["value found"].iloc[-1]
    # a pair may sit in both tables (paths of two lengths); the last iteration's frontier is empty: the stop
    out.attrs["diameter"] = diameter(deps)
    out.attrs["expected"] = expected_iterations(out.attrs["diameter"])
    return out


# ---- pooled over seeds ----------------------------------------------------------------------------
def bottom_heaviness_by_size(results: list[WingDepsResult]) -> pd.DataFrame:
    """Observation 5 over pooled seeds: the jobs' mean position (0 top, 1 bottom) in components of
    size 2-9 and of size >= 10 (a small lake may have no small component in one seed)."""
    cc = pd.concat([r.components for r in results], ignore_index=True)
    out = []
    for label, sel in (("2-9", (cc["size"] >= 2) & (cc["size"] < 10)), (">= 10", cc["size"] >= 10)):
        c = cc[sel]
        bh = float(np.average(c["bottom_heaviness"], weights=c["size"])) if len(c) else np.nan
        out.append({"component size": label, "components": len(c), "jobs": int(c["size"].sum()),
                    "bottom-heaviness": bh})
    return pd.DataFrame(out)


def pooled_curve(results: list[WingDepsResult]) -> pd.DataFrame:
    """Fig. 2 over pooled seeds: predictions, hits and actual arrivals summed at each tr (small lakes have few)."""
    if not results:
        raise ValueError("results is empty: give the results of at least one seed")
    c = pd.concat([r.curve for r in results]).groupby("tr", as_index=False)[["predicted", "actual", "hits"]].sum()
    c["precision"] = c["hits"] / c["predicted"].where(c["predicted"] > 0)
    c["recall"] = c["hits"] / c["actual"].where(c["actual"] > 0)
    c["product"] = (c["precision"] * c["recall"]).fillna(0.0)
    return c[["tr", "precision", "recall", "product", "predicted", "actual", "hits"]]


def t2_by_threshold(result: WingDepsResult, thresholds=(0.0, 20.0, 50.0, 80.0)) -> dict[float, pd.DataFrame]:
    """Fig. 3's curves: T2's errors at several thresholds tr (the paper: tr changes which jobs are predicted, not how well)."""
    recurring = result.templates.index[result.templates["recurring"]]
    return {float(tr): t2_errors(result.jobs, result.deps, result.train_week, tr, recurring=recurring)
            for tr in thresholds}


def _t2_windows(result: WingDepsResult) -> pd.DataFrame:
    J = result.jobs.set_index("job")["template"]
    d = result.deps[["job", "depOn"]].assign(Jd=lambda x: J.reindex(x["job"]).to_numpy(),
                                             Ju=lambda x: J.reindex(x["depOn"]).to_numpy())
    window = d.groupby(["Jd", "Ju", "job"]).size().groupby(level=[0, 1]).median().rename("window")
    e = result.t2.assign(Ju=J.reindex(result.t2["ju"]).to_numpy()).join(window, on=["Jd", "Ju"])
    return e.assign(reads=np.where(e["window"] > 1, "several upstream runs", "one upstream run"))


def t2_by_window(results: WingDepsResult | list[WingDepsResult]) -> pd.DataFrame:
    """T2's errors split by how many runs of the upstream template a downstream job reads at once
    (over the pooled predictions of several results when given a list).

    A downstream template reading a rolling window of several upstream runs (a daily job reading
    24 hourly partitions, a weekly one reading 7 daily ones) reads each run at a different time
    after it was submitted, yet T2 forecasts one median per pair of templates: its errors are as
    large as the window. Computed from the log alone (the dependencies), no generator truth needed.
    """
    results = [results] if isinstance(results, WingDepsResult) else list(results)
    e = pd.concat([_t2_windows(r) for r in results], ignore_index=True)
    sq = e["error"] ** 2
    rows = []
    for label in ("one upstream run", "several upstream runs"):
        g = e[e["reads"] == label]
        rows.append({"downstream job reads": label, "predictions": len(g), "share of predictions": len(g) / max(len(e), 1),
                     "median absolute error (min)": float(np.median(np.abs(g["error"])) / 60.0) if len(g) else np.nan,
                     "RMSE (h)": float(np.sqrt(np.mean(g["error"] ** 2)) / 3600.0) if len(g) else np.nan,
                     "share of squared error": float(sq[g.index].sum() / sq.sum()) if sq.sum() > 0 else np.nan})
    return pd.DataFrame(rows)


__all__ = [
    "Ablation", "LakeSlice", "PAPER_INTRO", "PAPER_ITERATIONS", "RULE_VARIANTS", "WingDepsResult", "analyse",
    "bottom_heaviness_by_size", "doubling_example", "pooled_curve", "doubling_trace", "lake_slice",
    "rule_ablation", "run", "run_seeds", "self_join_example", "t2_by_threshold", "t2_by_window",
]
