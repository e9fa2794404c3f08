"""Recurrence and characterisation (Table 1) and the six observations of §2.3.

Everything here reads only what Wing reads: JobRepo (``job``, ``template``, ``user``, ``org``,
``queue``, ``priority``, ``submit``, ``end``, ``runtime``), the single-hop dependencies from
:func:`~cluster_sim.wing.provenance.single_hop` and, for downloads, ProvRepo. The generator's truth
(``kind``, ``dep_mode``) is used only by :func:`heuristic_agreement`, to say how often the
heuristics are right (the paper checked 25 jobs by hand and found 24 right).

Table 1's heuristics, as we apply them:

* **recurring**: a template submitted at least ``min_runs`` (3) times, at least once in every full
  ``period`` of the log. The paper's period is a month of a three-month log; our lakes span weeks,
  so the default period is a week. A dependency is recurring if both of its jobs are.
* **periodic**: recurring, with a coefficient of variation of inter-arrival times below
  ``periodic_cv``. The paper says only "small"; we use 0.002. On-the-clock submissions vary by
  seconds (a CV near 1e-4 for an hourly job), while a polling job downstream of a periodic one
  inherits its cadence plus the trigger's runtime noise and a polling delay of minutes (a CV of a
  few 1e-3 even for a daily job): a threshold such as 0.05 would call most polling jobs periodic.
* **polling**: recurring, not periodic, and (for at least 90% of its jobs with dependencies)
  submitted within 15 minutes of its latest-completing upstream job; its input dependencies are
  polling. The paper's extra condition, "never fails for a missing input", holds trivially in a
  trace with no failures.
* **hard** (a dependency, unless polling): ad hoc; or recurring and over 95% of the downstream
  template's jobs read exactly one job of the upstream template; or they always read the same
  number of its jobs.

A row of the dependency table whose ``job`` is its own ``depOn`` (a job that read its own earlier
output) is not an inter-job dependency: every function here drops it before counting
(:func:`~cluster_sim.wing.multihop.drop_self_dependencies`; :func:`components` reports how many in
``attrs["self_dependencies"]``). :func:`~cluster_sim.wing.provenance.single_hop` never returns one.

Example
-------
>>> from cluster_sim.wing.lake import LakeConfig, generate_lake
>>> from cluster_sim.wing.provenance import single_hop
>>> lake = generate_lake(LakeConfig.ci())
>>> deps = single_hop(lake.prov)
>>> t1 = table1(lake.jobs, deps)
>>> list(t1["characteristic"])
['recurring jobs', 'ad hoc jobs', 'periodic jobs', 'polling jobs', 'recurring dependencies', 'hard dependencies', 'polling dependencies']
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .multihop import _levels, check_deps, drop_self_dependencies, show
from .provenance import DAY, HOUR, attribute_downloads

MINUTE = 60.0
JOB_COLUMNS = ("job", "template", "submit", "end")

# The paper's numbers (§2.3), quoted as published: not computed here.
PAPER = {
    "recurring job share": 0.68,
    "recurring dependency share": 0.79,
    "templates with a priority-inverted consumer in their queue": 0.21,
    "ad hoc jobs above their queue's mean recurring priority": 0.33,
    "uncoordinated share of recurring jobs": 0.34,
    "organisations with cross-org dependencies": 0.95,
    "cross-org share of dependencies": 0.33,
    "cross-org share of template dependencies": 0.17,
    "jobs in cross-org dependencies": 0.28,
    "recurring jobs in cross-org dependencies": 0.23,
    "jobs in the largest component": 0.50,
    "jobs in components of size >= 10": 0.80,
    "size vs bottom-heaviness (Spearman)": float("nan"),
    "bottom-heaviness of components of size >= 10": float("nan"),
    "bottom-heaviness of components of size 2-9": float("nan"),
    "load-shiftable by 1 h": 0.31,
    "load-shiftable by 3 h": 0.27,
    "load-shiftable by 6 h": 0.22,
    "load-shiftable by 12 h": 0.14,
}
PAPER_NOTES = {
    "templates with a priority-inverted consumer in their queue": "21% of templates (within a queue: footnote 3)",
    "ad hoc jobs above their queue's mean recurring priority": "up to 33%",
    "organisations with cross-org dependencies": "up to 95%",
    "jobs in the largest component": "more than 50%",
    "jobs in components of size >= 10": "more than 80%",
    "size vs bottom-heaviness (Spearman)": "'the larger a CC, the more bottom-heavy' (no number)",
}


def _check_jobs(jobs: pd.DataFrame, need=JOB_COLUMNS) -> pd.DataFrame:
    if not isinstance(jobs, pd.DataFrame):
        raise ValueError(f"jobs must be a pandas DataFrame (JobRepo), got {type(jobs).__name__}")
    missing = [c for c in need if c not in jobs.columns]
    if missing:
        raise ValueError(f"jobs lacks column(s) {missing}; it has {list(jobs.columns)}")
    for c in ("submit", "end", "runtime", "priority"):
        if c in need and jobs[c].isna().any():
            raise ValueError(f"jobs.{c} has {int(jobs[c].isna().sum())} NaN value(s)")
    if not jobs["job"].is_unique:
        raise ValueError(f"jobs.job has a duplicated job, e.g. {show(jobs['job'][jobs['job'].duplicated()].iloc[0])}")
    return jobs


# ---- Table 1 -----------------------------------------------------------------------------------
def classify_templates(
    jobs: pd.DataFrame,
    deps: pd.DataFrame,
    *,
    min_runs: int = 3,
    period: float = 7 * DAY,
    periodic_cv: float = 0.002,
    poll_window: float = 15 * MINUTE,
    poll_share: float = 0.9,
) -> pd.DataFrame:
    """One row per template: ``runs``, ``recurring``, ``cv`` of inter-arrival times, ``periodic``, ``polling``."""
    jobs = _check_jobs(jobs)
    deps = drop_self_dependencies(deps)
    if min_runs < 1 or not period > 0 or not periodic_cv >= 0 or not poll_window >= 0 or not 0 < poll_share <= 1:
        raise ValueError(f"bad heuristic parameter: min_runs={show(min_runs)} (>= 1), period={show(period)} (> 0), "
                         f"periodic_cv={show(periodic_cv)} (>= 0), poll_window={show(poll_window)} (>= 0), "
                         f"poll_share={show(poll_share)} (in (0, 1])")
    t0 = np.floor(jobs["submit"].min() / DAY) * DAY
    full = int((jobs["submit"].max() - t0) // period)
    j = jobs[["job", "template", "submit", "end"]].sort_values(["template", "submit"])
    g = j.groupby("template", sort=True)
    out = pd.DataFrame({"runs": g.size()})
    slot = ((j["submit"] - t0) // period).astype(int)
    in_full = slot < full
    slots_hit = slot[in_full].groupby(j.loc[in_full, "template"]).nunique().reindex(out.index, fill_value=0)
    out["recurring"] = (out["runs"] >= min_runs) & ((slots_hit >= full) if full > 0 else True)
    gaps = g["submit"].diff()
    stats = gaps.groupby(j["template"]).agg(["mean", "std"])
    out["cv"] = (stats["std"] / stats["mean"]).reindex(out.index)
    out["periodic"] = out["recurring"] & (out["cv"] < periodic_cv)
    # polling: submitted within poll_window of the end of the latest-completing upstream job
    ends = jobs.set_index("job")["end"]
    latest = pd.Series(ends.reindex(deps["depOn"]).to_numpy(), index=deps["job"].to_numpy()).groupby(level=0).max()
    sub = jobs.set_index("job")["submit"].reindex(latest.index)
    quick = ((sub - latest) >= 0) & ((sub - latest) <= poll_window)
    tmpl = jobs.set_index("job")["template"].reindex(latest.index)
    share = quick.groupby(tmpl.to_numpy()).mean().reindex(out.index)
    out["polling"] = out["recurring"] & ~out["periodic"] & (share >= poll_share).fillna(False)
    return out


def classify(
    jobs: pd.DataFrame,
    deps: pd.DataFrame,
    **heuristics,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 applied: per job (``recurring``, ``periodic``, ``polling``) and per dependency (``recurring``, ``hard``, ``polling``)."""
    jobs = _check_jobs(jobs)
    deps = drop_self_dependencies(deps)
    tc = classify_templates(jobs, deps, **heuristics)
    jc = jobs[["job", "template"]].join(tc[["recurring", "periodic", "polling"]], on="template").set_index("job")
    d = deps[["job", "depOn"]].copy()
    d["t_job"] = jc["template"].reindex(d["job"]).to_numpy()
    d["t_dep"] = jc["template"].reindex(d["depOn"]).to_numpy()
    d["recurring"] = jc["recurring"].reindex(d["job"]).to_numpy() & jc["recurring"].reindex(d["depOn"]).to_numpy()
    d["polling"] = jc["polling"].reindex(d["job"]).to_numpy()
    # how many jobs of the upstream template each downstream job reads
    per_job = d.groupby(["t_job", "t_dep", "job"]).size().rename("n").reset_index()
    # per pair of templates: the share of downstream jobs reading exactly one upstream job, and whether they all read
    # the same number (grouped reductions: a Python function per pair took 15 s a seed at paper, 20k pairs)
    g = per_job.assign(one=(per_job["n"] == 1).astype(float)).groupby(["t_job", "t_dep"])
    pair = pd.DataFrame({"one": g["one"].mean(), "same": g["n"].nunique() == 1})
    pair["hard"] = (pair["one"] > 0.95) | pair["same"]
    hard_pair = pair["hard"].reindex(pd.MultiIndex.from_arrays([d["t_job"], d["t_dep"]])).to_numpy()
    d["hard"] = ~d["polling"] & (~d["recurring"] | hard_pair.astype(bool))
    return jc, d[["job", "depOn", "recurring", "hard", "polling"]]


def table1(jobs: pd.DataFrame, deps: pd.DataFrame, **heuristics) -> pd.DataFrame:
    """Table 1's characteristics measured on the log: the share of jobs or of dependencies with each."""
    jc, dc = classify(jobs, deps, **heuristics)
    n_j, n_d = max(len(jc), 1), max(len(dc), 1)
    rows = [
        ("recurring jobs", "jobs", jc["recurring"].sum() / n_j),
        ("ad hoc jobs", "jobs", (~jc["recurring"]).sum() / n_j),
        ("periodic jobs", "jobs", jc["periodic"].sum() / n_j),
        ("polling jobs", "jobs", jc["polling"].sum() / n_j),
        ("recurring dependencies", "dependencies", dc["recurring"].sum() / n_d),
        ("hard dependencies", "dependencies", dc["hard"].sum() / n_d),
        ("polling dependencies", "dependencies", dc["polling"].sum() / n_d),
    ]
    return pd.DataFrame(rows, columns=["characteristic", "of", "share"]).astype({"share": float})


def heuristic_agreement(jobs: pd.DataFrame, deps: pd.DataFrame, **heuristics) -> pd.DataFrame:
    """How often Table 1's heuristics agree with the generator's truth (``kind``, ``dep_mode`` of the lake's jobs)."""
    _check_jobs(jobs, JOB_COLUMNS + ("kind", "dep_mode"))
    jc, dc = classify(jobs, deps, **heuristics)
    kind = jobs.set_index("job")["kind"].reindex(jc.index)
    mode = jobs.set_index("job")["dep_mode"].reindex(dc["job"]).to_numpy()
    rows = [
        ("recurring", float((jc["recurring"] == (kind != "adhoc")).mean())),
        ("periodic", float((jc["periodic"] == (kind == "periodic")).mean())),
        ("polling", float((jc["polling"] == (kind == "polling")).mean())),
        ("polling dependency", float((dc["polling"].to_numpy() == (mode == "polling")).mean()) if len(dc) else 1.0),
        ("hard dependency", float((dc["hard"].to_numpy() == (mode == "hard")).mean()) if len(dc) else 1.0),
    ]
    return pd.DataFrame(rows, columns=["heuristic", "agreement"])


# ---- the observations of §2.3 ---------------------------------------------------------------------
def components(jobs: pd.DataFrame, deps: pd.DataFrame) -> pd.DataFrame:
    """Weakly connected components of the job DAG (every job is a node): ``size`` and ``bottom_heaviness``.

    A job's *position* is ``depth / (depth + height)``: its place on the longest path through it,
    0 at the top (no upstream job), 1 at the bottom (no downstream job). A component's
    bottom-heaviness is its jobs' mean position: a job feeding ten consumers gives 10/11, 24
    hourly jobs feeding one daily job give 1/25. (Normalising depth by the component's deepest
    path instead would let one long chain through time decide for the whole component.) Single
    jobs get NaN.

    >>> jobs = pd.DataFrame({"job": [0, 1, 2, 3, 4]})
    >>> components(jobs, pd.DataFrame({"job": [1, 2, 3], "depOn": [0, 0, 0]}))   # one job feeding three
       size  bottom_heaviness
    0     4              0.75
    1     1               NaN
    """
    deps = check_deps(deps)  # a self-dependency is dropped (and counted), not a one-job cycle
    ids = pd.Index(jobs["job"])
    u, d = ids.get_indexer(deps["depOn"]), ids.get_indexer(deps["job"])
    if (u < 0).any() or (d < 0).any():
        raise ValueError("deps names jobs that are not in jobs")
    n = len(ids)
    _, label = connected_components(coo_matrix((np.ones(len(u)), (u, d)), shape=(n, n)), directed=True,
                                    connection="weak")
    depth, height = np.zeros(n), np.zeros(n)
    if len(deps):
        lv, labels = _levels(deps[["job", "depOn"]])
        depth[ids.get_indexer(labels)] = lv
        lv, labels = _levels(deps[["job", "depOn"]].set_axis(["depOn", "job"], axis=1))  # the reversed DAG
        height[ids.get_indexer(labels)] = lv
    span = depth + height
    c = pd.DataFrame({"cc": label, "pos": np.where(span > 0, depth / np.where(span > 0, span, 1), np.nan)})
    out = c.groupby("cc").agg(size=("pos", "size"), bottom_heaviness=("pos", "mean"))
    out = out.sort_values("size", ascending=False, ignore_index=True)
    out.attrs["self_dependencies"] = deps.attrs["self_dependencies"]
    return out


def _weighted(cc: pd.DataFrame) -> float:
    """Mean position of the jobs in these components (each component weighted by its size)."""
    return float(np.average(cc["bottom_heaviness"], weights=cc["size"])) if len(cc) else float("nan")


def first_consumption(jobs: pd.DataFrame, deps: pd.DataFrame, prov: pd.DataFrame | None = None) -> pd.Series:
    """Per job: the time from its end to the first use of its output (a dependent's read or a download), inf if none."""
    if "lag" not in deps.columns:
        raise ValueError("deps lacks column 'lag' (use the table single_hop returns)")
    deps = drop_self_dependencies(deps)  # a job's read of its own output is no consumption by another
    gap = deps.groupby("depOn")["lag"].min()
    if prov is not None:
        dl = attribute_downloads(prov)
        if len(dl):
            gap = pd.concat([gap, dl.groupby("job")["lag"].min()]).groupby(level=0).min()
    return gap.reindex(jobs["job"]).fillna(np.inf).rename("gap")


def observations(
    jobs: pd.DataFrame,
    deps: pd.DataFrame,
    prov: pd.DataFrame | None = None,
    *,
    shift_hours: tuple[float, ...] = (1, 3, 6, 12),
    **heuristics,
) -> pd.DataFrame:
    """The six observations of §2.3 on this log, one metric a row, beside the paper's number (quoted)."""
    jobs = _check_jobs(jobs, JOB_COLUMNS + ("org", "queue", "priority", "runtime"))
    jc, dc = classify(jobs, deps, **heuristics)
    J = jobs.set_index("job")
    rec = jc["recurring"]
    rows: list[tuple[int, str, float]] = []
    add = lambda obs, name, v: rows.append((obs, name, float(v)))
    n_d = max(len(dc), 1)
    # 1: recurring jobs and dependencies
    add(1, "recurring job share", rec.mean())
    add(1, "recurring dependency share", dc["recurring"].sum() / n_d)
    # 2: priority inversions among recurring templates, and ad hoc jobs above the queue's recurring mean; priorities
    # are only comparable within a queue (footnote 3), so an inversion is a consumer of higher priority in the same queue
    rd = dc[dc["recurring"]]
    p_job, p_dep = J["priority"].reindex(rd["job"]).to_numpy(), J["priority"].reindex(rd["depOn"]).to_numpy()
    same_queue = J["queue"].reindex(rd["job"]).to_numpy() == J["queue"].reindex(rd["depOn"]).to_numpy()
    inverted = set(J["template"].reindex(rd["depOn"][(p_job > p_dep) & same_queue]).unique())
    rec_templates = set(J["template"][rec.reindex(J.index).to_numpy()])
    add(2, "templates with a priority-inverted consumer in their queue",
        len(inverted & rec_templates) / max(len(rec_templates), 1))
    qmean = J[rec.reindex(J.index).to_numpy()].groupby("queue")["priority"].mean()
    adhoc = J[~rec.reindex(J.index).to_numpy()]
    add(2, "ad hoc jobs above their queue's mean recurring priority",
        (adhoc["priority"] > adhoc["queue"].map(qmean)).mean() if len(adhoc) else np.nan)
    # 3: recurring jobs submitted blind: a hard dependency, not polling
    blind = dc[dc["hard"]].groupby("job").size().reindex(jc.index, fill_value=0) > 0
    add(3, "uncoordinated share of recurring jobs", (blind & rec & ~jc["polling"]).sum() / max(rec.sum(), 1))
    # 4: cross-organisation dependencies
    o_job, o_dep = J["org"].reindex(dc["job"]).to_numpy(), J["org"].reindex(dc["depOn"]).to_numpy()
    cross = o_job != o_dep
    add(4, "organisations with cross-org dependencies",
        len(set(o_job[cross]) | set(o_dep[cross])) / max(J["org"].nunique(), 1))
    add(4, "cross-org share of dependencies", cross.sum() / n_d)
    tp = pd.DataFrame({"a": J["template"].reindex(rd["job"]).to_numpy(), "b": J["template"].reindex(rd["depOn"]).to_numpy(),
                       "x": cross[dc["recurring"].to_numpy()]}).drop_duplicates(["a", "b"])
    add(4, "cross-org share of template dependencies", tp["x"].mean() if len(tp) else np.nan)
    involved = pd.Index(np.unique(np.concatenate([dc["job"].to_numpy()[cross], dc["depOn"].to_numpy()[cross]])))
    add(4, "jobs in cross-org dependencies", len(involved) / max(len(J), 1))
    add(4, "recurring jobs in cross-org dependencies", rec.reindex(involved).sum() / max(rec.sum(), 1))
    # 5: components
    cc = components(jobs, deps)
    add(5, "jobs in the largest component", cc["size"].iloc[0] / len(J) if len(cc) else np.nan)
    add(5, "jobs in components of size >= 10", cc.loc[cc["size"] >= 10, "size"].sum() / len(J))
    multi = cc[cc["size"] >= 2]
    varied = len(multi) > 2 and multi["size"].nunique() > 1 and multi["bottom_heaviness"].nunique() > 1
    from scipy.stats import spearmanr  # here: scipy.stats costs every kernel importing the Wing labs half a second

    rho = spearmanr(multi["size"], multi["bottom_heaviness"]).statistic if varied else np.nan  # undefined if constant
    add(5, "size vs bottom-heaviness (Spearman)", rho)
    add(5, "bottom-heaviness of components of size >= 10", _weighted(cc[cc["size"] >= 10]))
    add(5, "bottom-heaviness of components of size 2-9", _weighted(cc[(cc["size"] >= 2) & (cc["size"] < 10)]))
    # 6: load-shift potential (jobs ending at least max(T) before the log's end; unused output = no deadline)
    gap = first_consumption(jobs, deps, prov)
    horizon = J["submit"].max()
    eligible = J["end"] <= horizon - max(shift_hours) * HOUR
    for T in shift_hours:
        ok = rec.reindex(J.index) & (gap.to_numpy() > T * HOUR) & (J["runtime"] < T * HOUR)
        add(6, f"load-shiftable by {T:g} h", (ok & eligible).sum() / max(eligible.sum(), 1))
    out = pd.DataFrame(rows, columns=["observation", "metric", "ours"])
    out["paper"] = out["metric"].map(PAPER)
    out["paper_note"] = out["metric"].map(PAPER_NOTES).fillna("")
    return out
