"""Lab 05's aggregates without the doubling give the old answers (the doubling, kept as the reference).

``prepare()`` used to take Owl's aggregates from :func:`owl_by_iteration` (Algorithm 1's doubling,
every iteration); it now takes the converged ones from :func:`owl_closure` (the closure's pairs,
level by level) and the shorter ones, when asked, from :func:`owl_within_hops`. The sums run in
another order, so a value may differ in its last bits (below 1e-13 relative): the tests pin that
bound, the iteration counts, the orders the predictions put the jobs in, and that every policy's
run is decision for decision the run the old aggregates give.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from cluster_sim.wing.multihop import owl_closure, owl_within_hops
from cluster_sim.wing.provenance import job_local_value, single_hop
from cluster_sim.wing.scheduling import POLICIES, WingConfig, owl_by_iteration, run
from cluster_sim.wing.scheduling.experiments import workload_for

CI = WingConfig.ci()
ROUNDING = 1e-13  # relative, per job: sums of hundreds of path weights in another order


def same(new: pd.Series, old: pd.Series) -> None:
    assert new.index.equals(old.index)
    a, b = new.to_numpy(), old.to_numpy()
    rel = np.abs(a - b) / np.maximum(np.abs(b), 1e-300)
    assert ((a == b) | (rel <= ROUNDING)).all(), f"largest relative difference {rel.max():.3g}"


def old_history_aggregates(config: WingConfig):
    """What prepare() computed before: owl_by_iteration on the history as it stands at the run's start."""
    lake = workload_for(config).lake
    rs = config.run_start
    prov_h = lake.prov[lake.prov["time"] < rs]
    hist = lake.jobs[lake.jobs["end"] < rs].reset_index(drop=True)
    deps_h = single_hop(prov_h)
    deps_h = deps_h[deps_h["job"].isin(hist["job"])].reset_index(drop=True)
    values = {"value": job_local_value(prov_h, hist["job"]),
              "compute": pd.Series(hist["compute"].to_numpy(float), index=hist["job"])}
    return owl_by_iteration(deps_h, values, omega=config.omega, jobs=hist)


def old_truth(config: WingConfig) -> dict[str, pd.Series]:
    """The Oracles' converged aggregates on the jobs after the run's start (every input counted, those written
    before the run too), by the doubling."""
    lake = workload_for(config).lake
    after = lake.jobs[lake.jobs["submit"] >= config.run_start]
    t = lake.truth[lake.truth["job"].isin(after["job"])]
    values = {"value": lake.downloads.groupby("job").size().astype(float).reindex(lake.jobs["job"], fill_value=0.0),
              "compute": pd.Series(lake.jobs["compute"].to_numpy(float), index=lake.jobs["job"])}
    return {k: v.iloc[:, -1] for k, v in owl_by_iteration(t[["job", "depOn"]], values, omega=config.omega,
                                                              jobs=lake.jobs).items()}


@pytest.mark.parametrize("seed", [0, 1])
def test_the_history_aggregates_are_the_doublings_every_iteration(seed):
    config = CI.replace(seed=seed)
    w = workload_for(config)
    old = old_history_aggregates(config)
    assert w.hist_iterations == old["value"].columns[-1] >= 3  # the lake has paths of 4 hops and more
    for i in old["value"].columns[1:]:  # the doubling's loop counter i >= 1: paths of up to 2**i hops
        new = w.hist_aggregates(i)
        for name in ("value", "compute"):
            same(new[name], old[name][i])
    # iteration 0 is job-local value (the doubling's column 0 holds the single hops)
    h = w.history.set_index("job")
    assert w.hist_aggregates(0)["value"].equals(h["k"].astype(float))
    # beyond convergence: the converged aggregates
    assert w.hist_aggregates(20) is w.hist_agg


def test_the_oracles_aggregates_are_the_doublings():
    w = workload_for(CI)
    truth = old_truth(CI)
    ids = w.jobs["job"]
    same(pd.Series(w.jobs["agg_value_true"].to_numpy(), index=ids), truth["value"].reindex(ids))
    same(pd.Series(w.jobs["agg_compute_true"].to_numpy(), index=ids), truth["compute"].reindex(ids))


def test_every_policy_runs_as_it_did_with_the_doublings_aggregates():
    w = workload_for(CI)
    hist, truth = old_history_aggregates(CI), old_truth(CI)
    ids = w.jobs["job"]
    jobs = w.jobs.copy()
    jobs["agg_true"] = (truth["value"] / truth["compute"]).reindex(ids).to_numpy()
    old = dataclasses.replace(w, jobs=jobs, hist_agg={k: v.iloc[:, -1] for k, v in hist.items()}, predictions={},
                              _within={i: {k: v[i] for k, v in hist.items()} for i in hist["value"].columns[:-1]})
    for it in (0, 1, 20):
        a, b = w.agg_prediction(it).to_numpy(), old.agg_prediction(it).to_numpy()
        assert (np.argsort(-a, kind="stable") == np.argsort(-b, kind="stable")).all(), it
    for policy in POLICIES:
        for capacity in (0.2, 0.4):
            config = CI.replace(policy=policy, capacity=capacity)
            new_run, old_run = run(config, workload=w), run(config, workload=old)
            assert new_run.value == old_run.value and new_run.admissions.equals(old_run.admissions), (policy, capacity)


@pytest.mark.parametrize("omega", [None, 2.5])
def test_closure_and_bounded_hops_on_a_random_dag_match_the_doubling(omega):
    rng = np.random.default_rng(7)
    n = 60
    edges = {(int(j), int(d)) for j, d in rng.integers(0, n, (240, 2)) if j > d}
    deps = pd.DataFrame(sorted(edges), columns=["job", "depOn"])
    jobs = pd.DataFrame({"job": np.arange(n), "submit": np.arange(n) * 0.1, "end": np.arange(n) * 0.1 + 0.5})
    k = pd.Series(rng.integers(0, 4, n).astype(float), index=np.arange(n))
    old = owl_by_iteration(deps, {"k": k}, omega=omega, jobs=jobs)["k"]
    agg, iterations = owl_closure(deps, {"k": k}, omega=omega, jobs=jobs)
    assert iterations == old.columns[-1]
    same(agg["k"], old[iterations])
    for i in old.columns[:-1]:
        same(owl_within_hops(deps, {"k": k}, 2**i, omega=omega, jobs=jobs)["k"], old[i])


def test_bad_hops_are_refused():
    deps = pd.DataFrame({"job": [2], "depOn": [1]})
    with pytest.raises(ValueError, match="hops=0"):
        owl_within_hops(deps, {"k": pd.Series({1: 0.0, 2: 1.0})}, 0)
