"""Lab 05's failure chains (issue 33's `oracle_beats_agg` at paper): a failed job fails exactly its failure reach,
and the Oracle's key has no hole (NaN, or 0 for a job with value downstream) that would starve a producer."""

import numpy as np
import pandas as pd
import pytest

from cluster_sim.wing.scheduling import WingConfig, run, workload_for
from cluster_sim.wing.scheduling.workload import failure_reach


def test_failure_reach_counts_descendants_through_inputs_that_break():
    # 1 <- 2 <- 3, 1 <- 4 (stale: 4 reads an older version), 5 <- 6 <- 5 (a cycle: counted once, not forever)
    deps = pd.DataFrame({"job": [2, 3, 4, 6, 5], "depOn": [1, 2, 1, 5, 6],
                         "stale_ok": [False, False, True, False, False]})
    reach = failure_reach(deps, [1, 2, 3, 4, 5, 6])
    assert reach.to_dict() == {1: 2, 2: 1, 3: 0, 4: 0, 5: 1, 6: 1}
    assert failure_reach(deps.iloc[:0], [1, 2]).tolist() == [0, 0]


def test_failure_reach_refuses_what_it_cannot_count():
    deps = pd.DataFrame({"job": [2], "depOn": [9], "stale_ok": [False]})
    with pytest.raises(ValueError, match="deps names job 9, which is not in jobs"):
        failure_reach(deps, [1, 2])
    with pytest.raises(ValueError, match=r"deps is missing column\(s\) \['stale_ok'\]"):
        failure_reach(deps.drop(columns="stale_ok"), [2, 9])
    with pytest.raises(ValueError, match="jobs holds 1 repeated id"):
        failure_reach(deps, [2, 9, 9])


@pytest.mark.parametrize("queues", ["cluster", "org"])
@pytest.mark.parametrize("policy", ["wing_agg", "oracle_wing_agg"])
def test_a_run_fails_exactly_the_failure_reach_of_its_late_producers(policy, queues):
    """Every failure is a job submitted before its input existed (a hard consumer of a late producer) or in the
    failure reach of one: what fails beyond the late jobs is what failure_reach counts, no more, no less."""
    cfg = WingConfig.ci().replace(queues=queues, capacity=0.2, policy=policy)
    r = run(cfg)
    w = workload_for(cfg)
    late = r.failures[r.failures.str.contains("had not completed")].index
    failed = set(r.jobs.loc[r.jobs["state"] == "failed", "job"])
    assert len(late) > 0 and failed > set(late)
    deps = w.deps[~w.deps["stale_ok"]]
    chain = set(late)
    for j in late:  # the descendants of each late job, which failure_reach counts
        frontier = {j}
        while frontier:
            frontier = set(deps.loc[deps["depOn"].isin(frontier), "job"]) - chain
            chain |= frontier
    assert failed == chain
    reach = failure_reach(w.deps, w.jobs["job"])
    assert all(reach[j] <= len(chain) for j in late)


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_the_oracles_key_is_finite_and_zero_only_without_value_downstream(preset):
    """The Oracle orders by the true aggregate value efficiency: no run job lacks it (NaN), and a job gets 0 only
    when neither it nor any run job downstream of it has a download (the run is shorter than ω, so all of them
    count; a key can be positive through jobs after the run, within ω, as Wing-Agg's prediction is)."""
    w = workload_for(getattr(WingConfig, preset)())
    j = w.jobs.set_index("job")
    key = j["agg_true"].to_numpy(float)
    assert np.isfinite(key).all() and (key >= 0).all()
    assert (j["agg_value_true"] >= j["k_true"]).all()
    valued = set(j.index[j["k_true"] > 0])
    upstream = set(valued)
    frontier = valued
    while frontier:
        frontier = set(w.deps.loc[w.deps["job"].isin(frontier), "depOn"]) - upstream
        upstream |= frontier
    assert upstream <= set(j.index[j["agg_true"] > 0])
