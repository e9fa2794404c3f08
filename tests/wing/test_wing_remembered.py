"""Lab 05's prepared lake is remembered (a run with another policy or capacity reuses it), but
``workload_for`` returns a copy: a reader who edits it changes neither a later call nor a run."""

import pandas as pd

from cluster_sim.wing.scheduling import WingConfig, run, workload_for

CI = WingConfig.ci()


def test_a_lake_changed_by_its_reader_does_not_change_the_next_call_or_a_run():
    before = run(CI)
    w = workload_for(CI)
    jobs, deps = w.jobs.copy(), w.deps.copy()
    w.jobs["containers"] = 10**6  # too big for any queue: every job would be refused
    w.downloads["time"] = 0.0
    w.hist_agg.clear()
    again = workload_for(CI)
    pd.testing.assert_frame_equal(again.jobs, jobs)
    pd.testing.assert_frame_equal(again.deps, deps)
    after = run(CI)
    assert after.value == before.value and after.achievable == before.achievable
    pd.testing.assert_frame_equal(after.jobs, before.jobs)


def test_the_remembered_lakes_stay_within_their_memory_bound(monkeypatch):
    from cluster_sim.wing.scheduling import experiments

    one = CI.work().memory / 2**30
    monkeypatch.setattr(experiments, "CACHE_GIB", 2.5 * one)  # room for two of these lakes
    monkeypatch.setattr(experiments, "_CACHE", experiments.OrderedDict())
    before = run(CI.replace(seed=3))
    for seed in (3, 4, 5, 6):
        run(CI.replace(seed=seed))
    assert [k[0].seed for k in experiments._CACHE] == [5, 6]  # the two used last
    again = run(CI.replace(seed=3))  # prepared again: the same run
    assert again.value == before.value and again.admissions.equals(before.admissions)
