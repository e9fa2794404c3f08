"""Issue 26, item 3: Fig. 10a as the paper measures it (the smallest cluster, by bisection, at 5x the users'
attainment) for packing only, the model only and both. On our workload no static arm gets there within twice the
cluster (the notebook says why); the function refuses a factor below 1 and reports what it tried."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cluster_sim.morpheus import MorpheusConfig
from cluster_sim.morpheus.packing.experiments import fig10a


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
