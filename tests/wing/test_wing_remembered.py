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


def _count_preparations(monkeypatch):
    """The lakes ``prepare`` is asked for (a stand-in that prepares nothing), with an empty memo."""
    from collections import OrderedDict

    import cluster_sim.wing.scheduling.experiments as experiments

    asked = []
    monkeypatch.setattr(experiments, "_CACHE", OrderedDict())
    monkeypatch.setattr(experiments, "prepare", lambda config: asked.append(config.seed) or object())
    return experiments, asked


def test_lab05s_notebook_prepares_each_small_lake_once(monkeypatch):
    # the notebook's order at ci: the claims' pool of 20 seeds, 6 lakes of another priority rule, then the pool's
    # first seeds again (its tables and the iterations' sweep): a small lake is kept, not prepared again
    experiments, asked = _count_preparations(monkeypatch)
    ci = WingConfig.ci()
    rise = ci.replace(priorities="rise_upstream")
    order = [ci.replace(seed=s) for s in range(20)] + [rise.replace(seed=s) for s in range(6)]
    for config in order + [ci.replace(seed=s) for s in range(6)]:
        experiments._remembered_lake(config)
    assert len(asked) == len(order), asked


def test_large_lakes_are_kept_by_count(monkeypatch):
    # at the papers' scale a lake is hundreds of MB: the memo keeps CACHE_SIZE of them, as before
    experiments, asked = _count_preparations(monkeypatch)
    paper = WingConfig.paper()
    for s in range(experiments.CACHE_SIZE + 2):
        experiments._remembered_lake(paper.replace(seed=s))
    assert len(experiments._CACHE) == experiments.CACHE_SIZE
    experiments._remembered_lake(paper.replace(seed=0))  # evicted: prepared again
    assert asked.count(0) == 2
