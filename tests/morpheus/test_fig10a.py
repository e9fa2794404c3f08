"""Issue 26, item 3: Fig. 10a as the paper measures it (the smallest cluster, by bisection, at 5x the users'
attainment) for packing only, the model only and both. On our workload no static arm gets there within twice the
cluster (the notebook says why); the function refuses a factor below 1 and reports what it tried."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cluster_sim.morpheus import MorpheusConfig
from cluster_sim.morpheus.packing.experiments import fig10a, on_the_trace
from cluster_sim.morpheus.packing.simulation import compare, run


def test_factor_is_checked():
    with pytest.raises(ValueError, match="factor=0.5 is out of range"):
        fig10a(MorpheusConfig.ci(), factor=0.5)


def test_rows_per_arm_with_the_target_and_the_sizes_tried():
    c = MorpheusConfig.ci()
    t = fig10a(c, seeds=(0,), max_machines=c.machines, cache=False)
    assert list(t.index) == ["packing_only", "model_only", "morpheus"]
    rate = float(t.users_violation_rate.iloc[0])
    assert t.target_attainment.iloc[0] == pytest.approx(1 - rate / 5)
    for arm, row in t.iterrows():
        assert c.machines in row.tried
        assert (pd.isna(row.machines) and math.isnan(row.share)) or row.share == row.machines / c.machines


def test_fig10_measures_the_trace_without_the_run_held_back():
    """§9.2's Fig. 10 has no run delayed on purpose (that is §9.3's Fig. 12): the searches run on the trace, whose
    runs are the same draws with none held back."""
    c = MorpheusConfig.ci()
    held, trace = run(c.replace(arm="user")).runs, run(on_the_trace(c).replace(arm="user")).runs
    assert held.held_back.sum() == 1 and not trace.held_back.any()
    assert len(held) == len(trace)
    t = fig10a(c, seeds=(0,), max_machines=c.machines, cache=False, arms=("morpheus",))
    users = compare(on_the_trace(c), arms=("user",), seeds=(0,), cache=False)
    assert float(t.users_violation_rate.iloc[0]) == float(users.loc["user", "slo_violation_rate"])
