"""The pure layer of Lab 05 (no Mesa): a lake cut for value-aware scheduling, Wing's profiles, value attained.

A :class:`ValueWorkload` is what one lake gives the scheduling experiments (Wing §6.3):

* **history** (the paper's first two weeks): the jobs that ended before the run, with what Wing's
  pipeline finds in the log as it stands when the run starts (single-hop dependencies, downloads,
  Owl's aggregate value and aggregate compute within ω, converged and, on demand, after fewer iterations of Algorithm 1);
* **the run** (the paper's third week): the jobs submitted in it, their dependencies on each other
  (``hard`` or ``polling``, and ``stale_ok`` when an older version of the input would do), their
  downloads (a job earns those after it completes), the true job-local and aggregate values (the
  Oracles), and each policy's predicted value efficiency;
* the trace's **peak** use of each queue (what the workload needs: at 100% capacity every job starts
  when it is submitted);
* Wing-MIL's **value functions**: the share of a job's aggregate value still there when it completes
  δ late, learned from history (:func:`decay_profiles`).

:func:`value_efficiency` is Wing-Agg's priority (§5): median historical value over median
historical compute per template, ad hoc jobs from the same user's earlier ad hoc jobs.

Example
-------
>>> history = pd.DataFrame({"job": [1, 2, 3, 4, 5], "template": ["a", "a", "a", "adhoc/4", "adhoc/5"],
...                         "kind": ["periodic"] * 3 + ["adhoc"] * 2, "user": ["u", "u", "u", "v", "v"],
...                         "agg_value": [10.0, 2.0, 30.0, 4.0, 0.0], "agg_compute": [5.0, 1.0, 2.0, 2.0, 2.0]})
>>> jobs = pd.DataFrame({"job": [6, 7], "template": ["a", "adhoc/7"], "kind": ["periodic", "adhoc"], "user": ["u", "v"]})
>>> value_efficiency(history, jobs).tolist()          # a: median 10 / median 2; v's ad hoc jobs: median 2 / median 2
[5.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..lake import Lake, generate_lake
from ..multihop import check_deps, doubling, owl_closure, owl_weights, owl_within_hops, show
from ..provenance import DAY, HOUR, attribute_downloads, job_local_value, read_matches, single_hop
from .config import CONVERGED, WingConfig

MINUTE = 60.0
#: lateness (completion after the trace's) at which Wing-MIL's value functions are tabulated (s)
GRID = np.array([0.0, 1, 2, 5, 10, 15, 30, 45]) * MINUTE
GRID = np.concatenate([GRID, np.array([1.0, 1.5, 2, 3, 4, 6, 8, 12, 18]) * HOUR,
                       np.array([1.0, 1.5, 2, 3, 4, 5, 6, 7]) * DAY])
STATS = ("median", "mean")
#: the two readings of Wing-Agg's predictor: §5 divides the median value by the median compute; §6.3's wording
#: ("the median aggregate value efficiency of its previous jobs") reads as the median of each job's ratio
READINGS = ("ratio_of_medians", "median_of_ratios")
HISTORY_NEEDS = ("job", "template", "kind", "user")


# ---- Wing-Agg's priority ------------------------------------------------------------------------
def value_efficiency(history: pd.DataFrame, jobs: pd.DataFrame, *, value: str = "agg_value",
                     compute: str = "agg_compute", stat: str = "median",
                     reading: str = "ratio_of_medians") -> pd.Series:
    """Each job's predicted value efficiency from history (Wing-Agg with the aggregate columns, §5).

    A recurring job (``kind`` not ``"adhoc"``) whose template has history gets
    ``stat(value) / stat(compute)`` over its template's history jobs; an ad hoc job gets the same
    over its user's earlier ad hoc jobs; any other job (a template or a user new to the history)
    the same over all history jobs of its class (recurring or ad hoc). Returns a Series indexed by
    ``jobs["job"]``; ``attrs["source"]`` says which rule each job got (``template``, ``user``,
    ``fallback``). ``reading="median_of_ratios"`` takes ``stat`` of each history job's
    ``value / compute`` instead (§6.3's wording; the library's runs use §5's ratio of medians).
    """
    for name, t, need in (("history", history, HISTORY_NEEDS + (value, compute)), ("jobs", jobs, HISTORY_NEEDS)):
        if not isinstance(t, pd.DataFrame):
            raise ValueError(f"{name} must be a pandas DataFrame with columns {', '.join(need)}; got {type(t).__name__}")
        missing = [c for c in need if c not in t.columns]
        if missing:
            raise ValueError(f"{name} lacks column(s) {missing}; it has {list(t.columns)}")
    if stat not in STATS:
        raise ValueError(f"stat={show(stat)} is not allowed: choose {' or '.join(STATS)}")
    if reading not in READINGS:
        raise ValueError(f"reading={show(reading)} is not allowed: choose {' or '.join(READINGS)}")
    v = pd.to_numeric(history[value], errors="coerce").to_numpy(float)
    c = pd.to_numeric(history[compute], errors="coerce").to_numpy(float)
    if np.isnan(v).any() or (v < 0).any():
        raise ValueError(f"history.{value} holds NaN or negative values: values are downloads, >= 0")
    if np.isnan(c).any() or (c <= 0).any():
        raise ValueError(f"history.{compute} holds NaN or non-positive values: compute is container-seconds, > 0")
    if reading == "median_of_ratios":  # each job's own efficiency, then its statistic (a compute of 1 each)
        v, c = v / c, np.ones_like(c)
    h = pd.DataFrame({"template": history["template"].to_numpy(), "user": history["user"].to_numpy(),
                      "adhoc": (history["kind"] == "adhoc").to_numpy(), "v": v, "c": c})

    def ratio(g):
        a = g.agg(stat)
        return a["v"] / a["c"]

    by_template = ratio(h[~h["adhoc"]].groupby("template")[["v", "c"]])
    by_user = ratio(h[h["adhoc"]].groupby("user")[["v", "c"]])
    pooled = {flag: (ratio(h.loc[h["adhoc"] == flag, ["v", "c"]]) if (h["adhoc"] == flag).any() else 0.0)
              for flag in (False, True)}
    adhoc = (jobs["kind"] == "adhoc").to_numpy()
    t = jobs["template"].map(by_template).to_numpy(float, copy=True)
    u = jobs["user"].map(by_user).to_numpy(float, copy=True)
    t[adhoc] = np.nan
    u[~adhoc] = np.nan
    fallback = np.where(adhoc, pooled[True], pooled[False])
    eff = np.where(~np.isnan(t), t, np.where(~np.isnan(u), u, fallback))
    out = pd.Series(eff, index=pd.Index(jobs["job"], name="job"), name="efficiency")
    out.attrs["source"] = pd.Series(np.where(~np.isnan(t), "template", np.where(~np.isnan(u), "user", "fallback")),
                                    index=out.index)
    return out


# ---- Owl's value, iteration by iteration ----------------------------------------------------------
def owl_by_iteration(deps: pd.DataFrame, values: dict[str, pd.Series], *, omega: float | None = None,
                     jobs: pd.DataFrame | None = None, max_iterations: int | None = None) -> dict[str, pd.DataFrame]:
    """Owl's aggregate of each Series in ``values`` (indexed by job) after every iteration of Algorithm 1.

    One pass of :func:`~cluster_sim.wing.multihop.doubling` serves all of them: column ``i`` holds
    the aggregate over paths of at most ``2**i`` hops (column 0: single hops); the last column is
    where the loop stopped (what :func:`~cluster_sim.wing.value.owl_value` returns).

    >>> deps = pd.DataFrame({"job": [2, 3, 4], "depOn": [1, 2, 3]})
    >>> owl_by_iteration(deps, {"k": pd.Series({1: 0.0, 2: 0.0, 3: 0.0, 4: 4.0})})["k"].loc[1].tolist()
    [0.0, 0.0, 4.0]
    """
    deps = check_deps(deps)
    out = {name: {} for name in values}
    for i, short, ftr, labels in doubling(deps, omega=omega, jobs=jobs, max_iterations=max_iterations):
        j = np.concatenate([short.job, ftr.job])
        d = np.concatenate([short.dep, ftr.dep])
        w = np.concatenate([short.wt, ftr.wt])
        for name, k in values.items():
            kk = k.reindex(labels).to_numpy(float)
            ds = np.bincount(d, weights=w * kk[j], minlength=len(labels)) if len(labels) else np.zeros(0)
            out[name][i] = k + pd.Series(ds, index=labels).reindex(k.index, fill_value=0.0)
    return {name: pd.DataFrame(cols) for name, cols in out.items()}


# ---- Wing-MIL's value functions ------------------------------------------------------------------
def _tail_sums(group: np.ndarray, lag: np.ndarray, weight: np.ndarray, n_groups: int) -> np.ndarray:
    """For each group and grid point δ: the weight of the contributions whose lag exceeds δ."""
    idx = np.searchsorted(GRID, lag, side="left")  # grid points strictly below the lag
    hist = np.zeros((n_groups, len(GRID) + 1))
    np.add.at(hist, (group, idx), weight)
    # VF[δ_i] = sum over contributions with idx > i
    return hist[:, ::-1].cumsum(axis=1)[:, ::-1][:, 1:]


def decay_profiles(history: pd.DataFrame, deps: pd.DataFrame, downloads: pd.DataFrame, agg: pd.Series,
                   submit: pd.Series) -> pd.DataFrame:
    """Wing-MIL's value functions: the share of aggregate value left when a job completes δ late (§6.2, Fig. 5).

    For each history job h, completing δ after its trace completion keeps its downloads later than
    that and, from each direct downstream job d submitted later than that, the share
    ``w(d -> h) * agg(d)`` it passes up; a downstream job submitted earlier is counted as lost (it
    would fail for missing input), whether it polls for its input or not: that is the flaw §7.1
    finds. Pooled over a template's history jobs (a user's ad hoc jobs; a group with no value in
    its history borrows the pooled shape of its class): ``phi.loc[group][δ]`` = ΣVF(δ) / ΣVF(0).

    ``history``: the jobs to learn from (job, template, kind, user, end); ``deps``: single hops
    (job, depOn); ``downloads``: time, job (the writer); ``agg``: aggregate value and ``submit``:
    submission time of every job of ``deps``. Returns ``phi``: one row per group (templates,
    ``user:<name>``, and ``recurring`` / ``adhoc`` for the pooled shapes), one column per GRID point.
    """
    h = history.set_index("job")
    groups = _groups(history)
    names = pd.Index(pd.unique(groups.to_numpy()))
    names = names.append(pd.Index(["recurring", "adhoc"]).difference(names))
    gi = pd.Series(names.get_indexer(groups.to_numpy()), index=groups.index)
    n = len(names)
    end = h["end"]
    cls = pd.Series((h["kind"] == "adhoc").to_numpy().astype(int), index=h.index)
    vf, pooled = np.zeros((n, len(GRID))), np.zeros((2, len(GRID)))
    d = downloads[downloads["job"].isin(h.index)]
    parts = [(d["job"].to_numpy(), d["time"].to_numpy(float) - end.reindex(d["job"]).to_numpy(float),
              np.ones(len(d)))]
    mine = deps["depOn"].isin(h.index).to_numpy()
    if mine.any():
        e = deps[mine]
        w = np.asarray(owl_weights(deps), dtype=float)[mine]
        lag = submit.reindex(e["job"]).to_numpy(float) - end.reindex(e["depOn"]).to_numpy(float)
        parts.append((e["depOn"].to_numpy(), lag, w * agg.reindex(e["job"]).to_numpy(float)))
    for owner, lag, weight in parts:
        if len(owner):
            vf += _tail_sums(gi.reindex(owner).to_numpy(), lag, weight, n)
            pooled += _tail_sums(cls.reindex(owner).to_numpy(), lag, weight, 2)
    phi = np.divide(vf, vf[:, :1], out=np.ones_like(vf), where=vf[:, :1] > 0)
    shape = np.divide(pooled, pooled[:, :1], out=np.ones_like(pooled), where=pooled[:, :1] > 0)
    for k, name in enumerate(names):
        if vf[k, 0] <= 0:
            phi[k] = shape[1] if name == "adhoc" or name.startswith("user:") else shape[0]
    return pd.DataFrame(phi, index=names, columns=GRID)


def _groups(jobs: pd.DataFrame) -> pd.Series:
    """The value-function group of each job: its template (recurring) or ``user:<name>`` (ad hoc)."""
    adhoc = (jobs["kind"] == "adhoc").to_numpy()
    g = np.where(adhoc, "user:" + jobs["user"].astype(str).to_numpy(), jobs["template"].astype(str).to_numpy())
    return pd.Series(g, index=pd.Index(jobs["job"], name="job"))


def decay_at(phi: np.ndarray, lateness: float) -> float:
    """The share of value left at ``lateness`` seconds late: the value function is a step function on GRID."""
    i = int(np.searchsorted(GRID, lateness, side="right")) - 1
    return float(phi[max(i, 0)])


# ---- the trace's needs ------------------------------------------------------------------------------
def peak_use(jobs: pd.DataFrame, by: str | None = None) -> pd.Series | int:
    """The most containers held at once in the trace (each job from ``submit`` to ``end``), per ``by`` group.

    A job ending at the instant another starts frees its containers first (the engine settles
    completions before it admits work).

    >>> peak_use(pd.DataFrame({"submit": [0.0, 1.0, 5.0], "end": [5.0, 3.0, 9.0], "containers": [4, 2, 4]}))
    6
    """
    def one(g):
        t = np.concatenate([g["submit"].to_numpy(float), g["end"].to_numpy(float)])
        dlt = np.concatenate([g["containers"].to_numpy(), -g["containers"].to_numpy()])
        order = np.lexsort((dlt, t))  # at equal times the releases (negative) first
        return int(np.cumsum(dlt[order]).max()) if len(t) else 0

    if by is None:
        return one(jobs)
    return jobs.groupby(by).apply(one, include_groups=False).astype(int)


def failure_reach(deps: pd.DataFrame, jobs) -> pd.Series:
    """How many of ``jobs`` fail when one job fails: its descendants along the dependencies a missing input
    breaks (the model's rule, :mod:`.model`: a hard consumer fails when its input's writer failed, a
    polling one too; an input with an older version, ``stale_ok``, is read stale and breaks nothing).

    ``deps``: job, depOn, stale_ok (a run's :attr:`ValueWorkload.deps`); ``jobs``: the job ids to count
    (every id in ``deps`` must be one). Value shares (Owl's 1/N weights, the policies' keys) do not see
    this number: a job read by 15 others' hard inputs passes each of them a fifteenth of its value.

    >>> deps = pd.DataFrame({"job": [2, 3, 4, 4], "depOn": [1, 2, 2, 1], "stale_ok": [False, False, True, False]})
    >>> failure_reach(deps, [1, 2, 3, 4, 5]).tolist()    # 1 fails 2, 4 and 3 (after 2); 4 reads 2 stale
    [3, 1, 0, 0, 0]
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    from ...validate import columns

    ids = pd.Index(np.asarray(jobs))
    if not ids.is_unique:
        raise ValueError(f"jobs holds {int(ids.duplicated().sum())} repeated id(s), e.g. {show(ids[ids.duplicated()][0])}")
    if len(deps):
        columns(deps, ("job", "depOn", "stale_ok"), "deps")
    breaks = deps[~deps["stale_ok"].astype(bool)] if len(deps) else deps
    consumer, producer = ids.get_indexer(breaks["job"]), ids.get_indexer(breaks["depOn"])
    if (consumer < 0).any() or (producer < 0).any():
        bad = np.concatenate([breaks["job"].to_numpy()[consumer < 0], breaks["depOn"].to_numpy()[producer < 0]])[0]
        raise ValueError(f"deps names job {show(bad)}, which is not in jobs: count the reach within the jobs deps joins")
    edges = csr_matrix((np.ones(len(breaks)), (producer, consumer)), shape=(len(ids), len(ids)))
    # one breadth-first search a job (the dependencies need not be acyclic); the job itself is not counted
    reach = [len(breadth_first_order(edges, i, directed=True, return_predecessors=False)) - 1 for i in range(len(ids))]
    return pd.Series(reach, index=pd.Index(ids, name="job"), name="failure_reach", dtype=int)


def value_attained(downloads: pd.DataFrame, finish: pd.Series) -> pd.Series:
    """Each job's value: its outputs' downloads later than its completion (``finish``; NaN = never completed).

    >>> d = pd.DataFrame({"job": [1, 1, 1, 2], "time": [5.0, 7.0, 9.0, 3.0]})
    >>> value_attained(d, pd.Series({1: 6.0, 2: float("nan"), 3: 1.0})).tolist()
    [2.0, 0.0, 0.0]
    """
    f = finish.reindex(downloads["job"]).to_numpy(float)
    earned = downloads["time"].to_numpy(float) > f  # NaN compares False: no value without completion
    return pd.Series(earned.astype(float)).groupby(downloads["job"].to_numpy()).sum().reindex(finish.index,
                                                                                               fill_value=0.0)


# ---- one lake, cut for the experiments -----------------------------------------------------------
@dataclass
class ValueWorkload:
    """What one lake gives the scheduling experiments (see the module docstring)."""

    config: WingConfig
    lake: Lake = field(repr=False)
    history: pd.DataFrame  # jobs ended before the run: job, template, kind, user, submit, end, compute, k, valid
    hist_deps: pd.DataFrame  # single_hop on the log as it stands at the run's start
    hist_agg: dict  # "value" / "compute" -> Series: Owl's aggregate within ω over every path (Algorithm 1 converged)
    hist_iterations: int  # Algorithm 1's iterations on the history until it converges (its last loop counter)
    jobs: pd.DataFrame  # the run's jobs, in submission order, with their true and predicted efficiencies
    deps: pd.DataFrame  # the run's dependencies on run jobs: job, depOn, mode, stale_ok
    downloads: pd.DataFrame  # the run's jobs' downloads: job, time (a job earns those after it completes)
    peaks: pd.Series  # each organisation's peak containers in the trace, over the run
    peak: int  # the cluster-wide peak containers in the trace, over the run
    phi: pd.DataFrame  # Wing-MIL's value functions per group (rows) on GRID (columns)
    groups: pd.Series  # each run job's value-function group
    predictions: dict = field(default_factory=dict, repr=False)  # iterations -> Wing-Agg's efficiency per run job
    _within: dict = field(default_factory=dict, repr=False)  # iterations i >= 1 -> hist aggregates, paths of <= 2**i hops

    @property
    def achievable(self) -> float:
        """Every download of the run's jobs: the value if every job completes no later than in the trace."""
        return float(len(self.downloads))

    @property
    def horizon(self) -> float:
        """Seconds from the run's start after which no run job can earn anything (its last download)."""
        last = self.downloads["time"].max() if len(self.downloads) else self.config.run_end
        return float(max(last, self.config.run_end, (self.jobs["submit"] + self.jobs["runtime"]).max())
                     - self.config.run_start + 1.0)

    def hist_aggregates(self, iterations: int = CONVERGED) -> dict[str, pd.Series]:
        """Owl's aggregate value and compute of every history job after ``iterations`` iterations of Algorithm 1.

        Iteration 0 is job-local value and compute (no hop: the paper's "0 iterations", Wing-Direct's
        view, Fig. 6's iteration 0); iteration ``i`` >= 1 holds the paths of at most ``2**i`` hops
        (Algorithm 1's loop counter); from :attr:`hist_iterations` on, every path. The converged
        aggregates are computed with the lake; the shorter ones when first asked."""
        i = min(int(iterations), self.hist_iterations)
        if i == self.hist_iterations:
            return self.hist_agg
        if i == 0:
            h = self.history.set_index("job")
            return {"value": h["k"].astype(float), "compute": h["compute"].astype(float)}
        if i not in self._within:
            h = self.history.set_index("job")
            self._within[i] = owl_within_hops(self.hist_deps, {"value": h["k"], "compute": h["compute"].astype(float)},
                                              2**i, omega=self.config.omega, jobs=self.history)
        return self._within[i]

    def agg_prediction(self, iterations: int = CONVERGED) -> pd.Series:
        """Wing-Agg's efficiency per run job from aggregates after ``iterations`` iterations of Algorithm 1
        (0: job-local, which is Wing-Direct's key)."""
        if iterations not in self.predictions:
            a = self.hist_aggregates(iterations)
            self.predictions[iterations] = value_efficiency(
                self._history(agg_value=a["value"], agg_compute=a["compute"]), self.jobs)
        return self.predictions[iterations]

    def _history(self, **columns) -> pd.DataFrame:
        """The valid history jobs (their window ω fully in the log) with extra columns."""
        h = self.history.assign(**{k: s.reindex(self.history["job"]).to_numpy() for k, s in columns.items()})
        return h[h["valid"]]


def _stale_ok(prov: pd.DataFrame, readers: pd.Index) -> pd.Series:
    """(job, depOn) -> True when every file ``job`` read from ``depOn`` is overwritten in place and had an
    older version: if the newest is missing the reader reads the stale one."""
    keep = (prov["op"] == "write") | ((prov["op"] == "read") & prov["job"].isin(readers))
    m, _ = read_matches(prov[keep], None)
    first = prov.loc[prov["op"] == "write"].groupby("file")["time"].min()
    latest = ~m["file"].str.contains("/p", regex=False)
    older = m["wtime"].to_numpy() > first.reindex(m["file"]).to_numpy()
    ok = pd.Series(latest.to_numpy() & older)
    return ok.groupby([m["job"].to_numpy(), m["depOn"].to_numpy()]).all()


def _pairs_in(flags: pd.Series, job: pd.Series, dep: pd.Series) -> np.ndarray:
    """``flags`` (a bool per (job, depOn) pair, as :func:`_stale_ok` gives) at each pair of ``job``, ``dep``; False
    for a pair it lacks. One reindex, where a lookup per pair cost about 40 µs (16k pairs a paper lake)."""
    if not len(flags) or not len(job):
        return np.zeros(len(job), dtype=bool)
    at = pd.MultiIndex.from_arrays([job.to_numpy(), dep.to_numpy()])
    return flags.reindex(at, fill_value=False).to_numpy(dtype=bool)


def prepare(config: WingConfig, lake: Lake | None = None) -> ValueWorkload:
    """Generate ``config``'s lake (or take ``lake``) and cut it for the experiments (see the module docstring)."""
    if not isinstance(config, WingConfig):
        raise ValueError(f"config must be a WingConfig, got {type(config).__name__}")
    lake = generate_lake(config.lake_config()) if lake is None else lake
    J = lake.jobs
    rs, re_, omega = config.run_start, config.run_end, config.omega
    # ---- history: the log as it stands when the run starts
    prov_h = lake.prov[lake.prov["time"] < rs]
    hist = J[J["end"] < rs].reset_index(drop=True)
    deps_h = single_hop(prov_h)
    deps_h = deps_h[deps_h["job"].isin(hist["job"])].reset_index(drop=True)  # readers still running at rs: not yet
    k_h = job_local_value(prov_h, hist["job"])
    comp_h = pd.Series(hist["compute"].to_numpy(float), index=hist["job"])
    # Owl's aggregates within ω from the closure's pairs (owl_by_iteration's last column, without the
    # doubling's joins, which outgrow memory on a lake of a few thousand jobs a day)
    hist_agg, hist_iterations = owl_closure(deps_h, {"value": k_h, "compute": comp_h}, omega=omega, jobs=hist)
    hist = hist.assign(k=k_h.to_numpy(), valid=(hist["end"] <= rs - omega).to_numpy())
    # ---- the run and the truth after it (the Oracles)
    after = J[J["submit"] >= rs]
    run = after[after["submit"] < re_].sort_values(["submit", "job"], ignore_index=True)
    truth = lake.truth
    # every input of the jobs from the run on, those written before the run too: Owl's 1/N counts each of
    # them (dropping them would hand the run's producers the shares of inputs that were already there)
    t_after = truth[truth["job"].isin(after["job"])]
    k_t = lake.downloads.groupby("job").size().astype(float).reindex(J["job"], fill_value=0.0)
    comp_t = pd.Series(J["compute"].to_numpy(float), index=J["job"])
    ids = run["job"]
    # only the run's jobs' aggregates are read: the closure skips the pairs none of them needs (the days after the run)
    true_agg, _ = owl_closure(t_after[["job", "depOn"]], {"value": k_t, "compute": comp_t}, omega=omega, jobs=J,
                              needed=ids)
    run = run.assign(k_true=k_t.reindex(ids).to_numpy(), agg_value_true=true_agg["value"].reindex(ids).to_numpy(),
                     agg_compute_true=true_agg["compute"].reindex(ids).to_numpy())
    run["direct_true"] = run["k_true"] / run["compute"]
    run["agg_true"] = run["agg_value_true"] / run["agg_compute_true"]
    # ---- the run's dependencies among its own jobs (earlier inputs exist: they were written before the run)
    deps = truth[truth["job"].isin(ids) & truth["depOn"].isin(ids)][["job", "depOn", "mode"]].reset_index(drop=True)
    stale = _stale_ok(lake.prov, pd.Index(ids))
    deps["stale_ok"] = _pairs_in(stale, deps["job"], deps["depOn"])
    # a polling job is submitted in the trace this long after its last input landed; it keeps the lag
    ends = J.set_index("job")["end"]
    tr = truth[truth["job"].isin(ids)]
    last_in = (ends.reindex(tr["depOn"]).to_numpy()
               if len(tr) else np.zeros(0))
    last_in = pd.Series(last_in).groupby(tr["job"].to_numpy()).max()
    run["poll_delay"] = (run["submit"] - run["job"].map(last_in)).fillna(0.0).clip(lower=0.0).to_numpy()
    downloads = lake.downloads[lake.downloads["job"].isin(ids)][["job", "time"]].sort_values("time", ignore_index=True)
    peaks = peak_use(run, by="org")
    peak = peak_use(run)
    # ---- Wing's predictions from history (valid jobs: their window ω is in the log)
    valid = hist[hist["valid"]]
    direct = value_efficiency(valid.assign(agg_value=valid["k"], agg_compute=valid["compute"]), run)
    run["direct_pred"] = direct.to_numpy()
    run["source"] = direct.attrs["source"].to_numpy()
    submit_h = pd.Series(hist["submit"].to_numpy(float), index=hist["job"])
    phi = decay_profiles(valid, deps_h, attribute_downloads(prov_h), hist_agg["value"], submit_h)
    groups = _groups(run)
    known = groups.isin(phi.index)
    groups[~known] = np.where(run["kind"].to_numpy()[~known.to_numpy()] == "adhoc", "adhoc", "recurring")
    w = ValueWorkload(config=config, lake=lake, history=hist, hist_deps=deps_h, hist_agg=hist_agg,
                      hist_iterations=hist_iterations, jobs=run,
                      deps=deps, downloads=downloads, peaks=peaks, peak=peak, phi=phi, groups=groups)
    run["agg_pred"] = w.agg_prediction(CONVERGED).to_numpy()
    return w
