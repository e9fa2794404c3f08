"""The engine's stage planners (cluster_sim/stageopt/agents.py) call IPA and β_j without checking again what they
built at every stage (issue 33: the capstone's paper days plan 16k stages each). The same placements as the checked
public functions, on the inputs the planners build, and the same engine records."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_sim.engine import ClusterConfig
from cluster_sim.stageopt import agents
from cluster_sim.stageopt.agents import IPAScheduler, lab_cluster_config, run_cluster
from cluster_sim.stageopt.placement import _ipa, _slots_per_machine, ipa_placement, slots_per_machine


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), m=st.integers(1, 60), speeds=st.integers(1, 4),
       alpha=st.integers(1, 6), whole=st.booleans())
def test_the_planners_unchecked_calls_place_as_the_checked_functions(seed, n, m, speeds, alpha, whole):
    """Free rows as a view holds them (some machines full or over-committed, whole or fractional units), a stage's
    demand and durations, machines of a few speeds (ties): β_j and IPA's placement equal, element for element."""
    rng = np.random.default_rng(seed)
    free = rng.integers(-2, 9, (n, 2)).astype(float) if whole else rng.uniform(-1, 8, (n, 2))
    demand = rng.choice([0.0, 0.5, 1.0, 2.0, 4.0], 2)
    durations = rng.lognormal(0, 1, m)
    speed = rng.choice(np.linspace(0.5, 2.0, speeds), n)
    a = max(alpha, -(-m // n))
    free0, theta0 = np.maximum(free, 0), np.maximum(demand, 1e-9)
    cap = _slots_per_machine(free0, theta0, a)
    assert cap.dtype == np.int64 and np.array_equal(cap, slots_per_machine(free0, theta0, a))
    k = min(m, int(cap.sum()))
    if k == 0:
        return
    keep = np.argsort(-durations, kind="stable")[:k]
    L = durations[keep, None] / speed[None, :]
    assert np.array_equal(_ipa(L, cap)[0], ipa_placement(L, cap))


@pytest.mark.parametrize("config", [lab_cluster_config(3), ClusterConfig.ci().replace(hardware_types=3,
                                                                                       speed_spread=1.0, seed=7)])
def test_an_engine_run_with_the_checked_planner_is_the_same_run(config, monkeypatch):
    fast = run_cluster(config, "ipa")
    monkeypatch.setattr(IPAScheduler, "plan_stage", lambda self, L, capacity, free: ipa_placement(L, capacity))
    monkeypatch.setattr(agents, "_slots_per_machine", lambda f, t, a: slots_per_machine(f, t, a))
    checked = run_cluster(config, "ipa")
    assert fast.metrics == checked.metrics
    for k in fast.tasks:
        assert np.array_equal(fast.tasks[k], checked.tasks[k], equal_nan=fast.tasks[k].dtype.kind == "f"), k
