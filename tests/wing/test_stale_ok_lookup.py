"""The run's dependencies' ``stale_ok`` flags by one reindex (round 12, issue 33: a lookup per pair cost about 0.7 s
of a paper lake's preparation): the flags the per-pair lookup gave, pairs it lacks False."""

import numpy as np
import pandas as pd

from cluster_sim.wing.scheduling import WingConfig, workload_for
from cluster_sim.wing.scheduling.workload import _pairs_in, _stale_ok


def _per_pair(flags, job, dep):  # the lookup prepare made before
    return [bool(flags.get((j, u), False)) for j, u in zip(job, dep)]


def test_the_flags_are_the_per_pair_lookups():
    flags = pd.Series([True, False, True], index=pd.MultiIndex.from_tuples([(1, 2), (1, 3), (4, 2)]))
    job, dep = pd.Series([1, 1, 4, 4, 9]), pd.Series([2, 3, 2, 3, 1])
    got = _pairs_in(flags, job, dep)
    assert got.dtype == bool and got.tolist() == _per_pair(flags, job, dep) == [True, False, True, False, False]
    assert _pairs_in(flags.iloc[:0], job, dep).tolist() == [False] * 5
    assert _pairs_in(flags, job.iloc[:0], dep.iloc[:0]).tolist() == []


def test_a_prepared_lakes_flags_are_the_per_pair_lookups():
    for config in (WingConfig.ci(), WingConfig.ci().replace(seed=7)):
        w = workload_for(config)
        stale = _stale_ok(w.lake.prov, pd.Index(w.jobs["job"]))
        assert w.deps["stale_ok"].dtype == bool
        assert w.deps["stale_ok"].tolist() == _per_pair(stale, w.deps["job"], w.deps["depOn"])
        assert 0 < int(np.sum(w.deps["stale_ok"])) < len(w.deps)
