"""Round 17: a Wing run reads its lake's inputs once per remembered lake (``experiments._run_inputs``) and counts
each job's value in numpy (``_collect``). The same results as before: a run on a fresh copy of the lake (inputs read
afresh) gives the same outcome, and every job's value is :func:`value_attained`'s, the function ``_collect`` called."""

import pandas as pd
import pytest

from cluster_sim.wing.scheduling import WingConfig, run, value_attained, workload_for
from cluster_sim.wing.scheduling.experiments import org_queue


@pytest.mark.parametrize("policy,queues,capacity", [("wing_agg", "org", 0.3), ("prio", "cluster", 0.2),
                                                    ("wing_mil", "org", 0.2)])
def test_a_run_on_the_remembered_lake_is_the_run_on_a_fresh_copy(policy, queues, capacity):
    config = WingConfig.ci().replace(policy=policy, queues=queues, capacity=capacity)
    kept, again, fresh = run(config), run(config), run(config, workload=workload_for(config))
    for other in (again, fresh):
        pd.testing.assert_frame_equal(kept.jobs, other.jobs)
        pd.testing.assert_frame_equal(kept.admissions, other.admissions)
        assert (kept.value, kept.events, kept.rekeys) == (other.value, other.events, other.rekeys)
    w = workload_for(config)
    finish = pd.Series(kept.jobs["finish"].to_numpy(), index=kept.jobs["job"].to_numpy())
    want = value_attained(w.downloads, finish)
    assert kept.jobs["value"].tolist() == want.tolist() and kept.value == float(want.sum())
    assert 0 < kept.value < kept.achievable  # some value earned, some lost: the comparison means something


def test_the_admissions_name_their_queues_as_before():
    # the old expression (a map by a function: pandas infers the column's string dtype from its values)
    r = run(WingConfig.ci().replace(policy="prio", capacity=0.3))
    org = {int(j): o for j, o in zip(r.jobs["job"], r.jobs["org"])}
    before = r.admissions["job"].map(lambda i: org_queue(org[int(i)])).rename("queue")
    assert len(r.admissions) > 0
    pd.testing.assert_series_equal(r.admissions["queue"], before)
