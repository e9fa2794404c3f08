"""Owl's closure within ω without holding the closure (issue 33: Wing scheduling at the paper's scale).

:func:`owl_closure` used to keep every (ancestor, descendant) pair until the end: about 650 pairs a job
at 5.8k jobs a day, billions at the paper's 40k. It now adds each job's pairs to the aggregates as they
are built and forgets them once the last upstream job has read them, and ``needed=`` (the Oracles'
run jobs) skips the pairs no needed job reads. The pair-based code it replaced is kept below as the
oracle: every job's sum is added in the same order, so the answers are equal bit for bit.
"""

import tracemalloc

import numpy as np
import pandas as pd
import pytest

import cluster_sim.wing.multihop as multihop
from cluster_sim.wing.multihop import _aggregate, _heights, _pair_sums, _prepared, _rows_of, owl_closure
from cluster_sim.wing.provenance import job_local_value, single_hop
from cluster_sim.wing.scheduling import WingConfig
from cluster_sim.wing.scheduling.experiments import workload_for


# ---- the oracle: owl_closure before issue 33, every pair held to the end ---------------------------------
class _AllPairs:
    def __init__(self):
        self.size = 0
        self._a = [np.zeros(1024, np.int32), np.zeros(1024, np.int32), np.zeros(1024), np.zeros(1024, np.int32)]

    def append(self, *columns):
        new = self.size + len(columns[0])
        if new > len(self._a[0]):
            grown = [np.empty(max(new, 2 * len(a)), a.dtype) for a in self._a]
            for g, a in zip(grown, self._a):
                g[:self.size] = a[:self.size]
            self._a = grown
        for a, c in zip(self._a, columns):
            a[self.size:new] = c
        self.size = new

    up = property(lambda self: self._a[0][:self.size])
    down = property(lambda self: self._a[1][:self.size])
    wt = property(lambda self: self._a[2][:self.size])
    length = property(lambda self: self._a[3][:self.size])


def oracle(deps, values, *, omega=None, jobs=None):
    job, dep, wt, labels, keep, _ = _prepared(deps, omega, jobs)
    n = max(len(labels), 1)
    height = _heights(job, dep, len(labels))
    by_level = np.argsort(height[dep], kind="stable")
    level_starts = np.searchsorted(height[dep][by_level], np.arange(int(height.max(initial=0)) + 2))
    start, count = np.zeros(len(labels), np.int64), np.zeros(len(labels), np.int64)
    pairs = _AllPairs()
    for h in range(1, len(level_starts) - 1):
        e = by_level[level_starts[h]:level_starts[h + 1]]
        reader, up, w = job[e], dep[e], wt[e]
        idx, edge = _rows_of(reader, start, count)
        u = np.concatenate([up, up[edge]])
        d = np.concatenate([reader, pairs.down[idx]])
        ww = np.concatenate([w, w[edge] * pairs.wt[idx]])
        ln = np.concatenate([np.ones(len(e), np.int64), pairs.length[idx] + 1])
        ok = keep(u, d)
        u, d, ww, ln = _pair_sums(u[ok], d[ok], ww[ok], n, ln[ok])
        first = np.flatnonzero(np.r_[True, u[1:] != u[:-1]]) if u.size else np.zeros(0, np.int64)
        start[u[first]] = pairs.size + first
        count[u[first]] = np.diff(np.r_[first, len(u)])
        pairs.append(u, d, ww, ln)
    return _aggregate(values, labels, pairs.up, pairs.down, pairs.wt), int(pairs.length.max(initial=0)).bit_length()


def identical(new: dict, old: dict) -> None:
    assert new.keys() == old.keys()
    for name in old:
        assert new[name].index.equals(old[name].index), name
        np.testing.assert_array_equal(new[name].to_numpy(), old[name].to_numpy(), err_msg=name)  # bit for bit


def random_dag(seed: int, n: int = 120, edges: int = 500):
    """A DAG whose times are monotone along the edges, with chains, diamonds and wide fan-outs."""
    rng = np.random.default_rng(seed)
    pairs = {(int(j), int(d)) for j, d in rng.integers(0, n, (edges, 2)) if j > d}
    pairs |= {(i + 1, i) for i in range(0, n - 1, 3)}  # some long chains
    deps = pd.DataFrame(sorted(pairs), columns=["job", "depOn"]).sample(frac=1.0, random_state=seed)  # any row order
    submit = np.sort(rng.uniform(0, 30, n))
    jobs = pd.DataFrame({"job": np.arange(n), "submit": submit, "end": submit + rng.uniform(0.0, 1.0, n)})
    jobs["end"] = np.maximum.accumulate(jobs["end"].to_numpy())
    values = {"k": pd.Series(rng.integers(0, 5, n).astype(float), index=np.arange(n)),
              "c": pd.Series(rng.uniform(0.1, 3.0, n), index=np.arange(n))}
    return deps, jobs, values


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("omega", [None, 2.0, 6.0])
@pytest.mark.parametrize("slice_rows", [1, 50, 4_000_000])
def test_the_streamed_closure_is_the_pair_based_one_bit_for_bit(monkeypatch, seed, omega, slice_rows):
    monkeypatch.setattr(multihop, "CLOSURE_SLICE_ROWS", slice_rows)  # slices of one job, of a few, a whole level
    monkeypatch.setattr(multihop, "COMPACT_SLACK", 0)  # compact as soon as half the pairs are no longer read
    deps, jobs, values = random_dag(seed)
    new, it_new = owl_closure(deps, values, omega=omega, jobs=jobs if omega else None)
    old, it_old = oracle(deps, values, omega=omega, jobs=jobs if omega else None)
    identical(new, old)
    assert it_new == it_old


@pytest.mark.parametrize("seed", range(6))
def test_needed_jobs_get_the_whole_closures_aggregates_and_the_others_nan(seed):
    deps, jobs, values = random_dag(seed)
    rng = np.random.default_rng(100 + seed)
    needed = rng.choice(jobs["job"], 25, replace=False)
    new, _ = owl_closure(deps, values, omega=3.0, jobs=jobs, needed=needed)
    old, _ = oracle(deps, values, omega=3.0, jobs=jobs)
    in_deps = pd.Index(pd.unique(pd.concat([deps["job"], deps["depOn"]])))
    for name in values:
        wanted = new[name].index.isin(needed) | ~new[name].index.isin(in_deps)
        np.testing.assert_array_equal(new[name][wanted].to_numpy(), old[name][wanted].to_numpy())
        assert new[name][~wanted].isna().all()


def test_needed_must_be_a_collection_of_job_ids():
    deps, jobs, values = random_dag(0)
    with pytest.raises(ValueError, match=r"needed=5 is not allowed: give the job ids"):
        owl_closure(deps, values, omega=3.0, jobs=jobs, needed=5)


def test_memory_holds_the_pairs_still_to_be_read_not_the_closure(monkeypatch):
    # a chain of 3,000 jobs: 4.5M (ancestor, descendant) pairs, but each job's are read once, by the next one up;
    # no slack before compacting (by default up to a million forgotten pairs wait, to spare copies)
    monkeypatch.setattr(multihop, "COMPACT_SLACK", 0)
    n = 3_000
    deps = pd.DataFrame({"job": np.arange(1, n), "depOn": np.arange(n - 1)})
    k = pd.Series(np.ones(n), index=np.arange(n))
    tracemalloc.start()
    agg, iterations = owl_closure(deps, {"k": k})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert agg["k"].iloc[0] == n and iterations == (n - 1).bit_length()
    closure_bytes = 16 * n * (n - 1) // 2  # a descendant, a weight and a length per pair
    assert peak < closure_bytes / 3, f"peak {peak / 2**20:.0f} MiB for a closure of {closure_bytes / 2**20:.0f} MiB"


def lab05_closures(config: WingConfig):
    """The two closures prepare() takes: the history's (every job) and the Oracles' (the run's jobs)."""
    w = workload_for(config)
    lake, rs, omega = w.lake, config.run_start, config.omega
    prov_h = lake.prov[lake.prov["time"] < rs]
    hist = lake.jobs[lake.jobs["end"] < rs].reset_index(drop=True)
    deps_h = single_hop(prov_h)
    deps_h = deps_h[deps_h["job"].isin(hist["job"])].reset_index(drop=True)
    h_values = {"value": job_local_value(prov_h, hist["job"]),
                "compute": pd.Series(hist["compute"].to_numpy(float), index=hist["job"])}
    after = lake.jobs[lake.jobs["submit"] >= rs]
    t = lake.truth[lake.truth["job"].isin(after["job"])][["job", "depOn"]]
    t_values = {"value": lake.downloads.groupby("job").size().astype(float).reindex(lake.jobs["job"], fill_value=0.0),
                "compute": pd.Series(lake.jobs["compute"].to_numpy(float), index=lake.jobs["job"])}
    return w, (deps_h, h_values, hist), (t, t_values, lake.jobs)


@pytest.mark.parametrize("config", [WingConfig.ci(), WingConfig.ci().replace(seed=1), WingConfig.default()],
                         ids=["ci", "ci-seed1", "default"])
def test_lab05s_closures_are_the_pair_based_ones_on_seeded_days(config):
    w, (deps_h, h_values, hist), (t, t_values, jobs) = lab05_closures(config)
    new, it_new = owl_closure(deps_h, h_values, omega=config.omega, jobs=hist)
    old, it_old = oracle(deps_h, h_values, omega=config.omega, jobs=hist)
    identical(new, old)
    assert it_new == it_old == w.hist_iterations
    identical(w.hist_agg, old)
    old_truth, _ = oracle(t, t_values, omega=config.omega, jobs=jobs)
    ids = w.jobs["job"]
    for name, col in (("value", "agg_value_true"), ("compute", "agg_compute_true")):
        np.testing.assert_array_equal(w.jobs[col].to_numpy(), old_truth[name].reindex(ids).to_numpy())


def test_the_configs_bytes_per_closure_pair_cover_what_the_closure_holds(monkeypatch):
    # WingConfig.work() estimates the closure's memory as CLOSURE_PAIR_BYTES per (ancestor, descendant) pair;
    # 12,000 jobs each reading three of the 60 before it: 3.7M pairs within the window
    from cluster_sim.wing.scheduling.config import CLOSURE_PAIR_BYTES

    rng = np.random.default_rng(0)
    n = 12_000
    job = np.repeat(np.arange(1, n), 3)
    deps = pd.DataFrame({"job": job, "depOn": job - rng.integers(1, 60, len(job))})
    deps = deps[deps["depOn"] >= 0].drop_duplicates()
    jobs = pd.DataFrame({"job": np.arange(n), "submit": np.arange(n) * 1.0, "end": np.arange(n) + 0.5})
    built = {"pairs": 0}

    def counted(*args, **kwargs):
        out = _pair_sums(*args, **kwargs)
        built["pairs"] += len(out[0])
        return out

    monkeypatch.setattr(multihop, "_pair_sums", counted)
    tracemalloc.start()
    owl_closure(deps, {"k": pd.Series(rng.random(n), index=np.arange(n))}, omega=400.0, jobs=jobs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert built["pairs"] > 3_000_000
    assert peak <= CLOSURE_PAIR_BYTES * built["pairs"], f"{peak / built['pairs']:.1f} bytes a pair"
