"""Issue 33 (Lab 03 at paper): the Reprovisioner calls ``_reprovision`` directly, skipping the per-call validation
of the public :func:`reprovision` (its arguments come from the model), which validates and then calls it. Whole DRA
cycles run both ways must give the same decisions, grants, task records, capacities and metrics: validating must
not change a value (a check that coerced a type or rounded a count would change the decisions' digest)."""

import numpy as np
import pandas as pd
import pytest

from cluster_sim.morpheus.packing import model as model_mod
from cluster_sim.morpheus.packing.config import MorpheusConfig
from cluster_sim.morpheus.packing.reprovision import reprovision
from cluster_sim.morpheus.packing.simulation import build_model


def _checked(plan, job_id, now, demand, rule, granted_recent, *, reserved_now=None, own_recent=None, skyline,
             container=None):
    """The Reprovisioner's call through the public, validating function (which makes the container and reads the
    plan's room itself: ``container``, the Reprovisioner's kept one, is not passed on)."""
    return reprovision(plan, job_id, now, demand, rule, granted_recent=granted_recent, reserved_now=reserved_now,
                       own_recent=own_recent, skyline=skyline)


def _cycle(config):
    model, _, plan, _, end = build_model(config)
    model.run_until(end)
    model.check_invariants()
    tasks = sorted((t.id, t.start, t.finish) for j in model.jobs for t in j.tasks)
    return (pd.DataFrame(model.reprovisioner.decisions), tasks, plan.load.copy(), sorted(plan.grants),
            {n: list(v) for n, v in model.capacity_log.items()}, repr(model.metrics))


CASES = [dict(seed=s) for s in (0, 1, 2)] + [
    dict(seed=1, reservations="per_run"),
    dict(seed=2, recent_counts_grants=True),
    dict(seed=0, worst_case="literal", rho=1.0, hold_seconds=180.0),
]


@pytest.mark.parametrize("fields", CASES, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
def test_fast_reprovision_gives_the_checked_cycle(monkeypatch, fields):
    config = MorpheusConfig.ci().replace(arm="morpheus_dra", **fields)
    fast = _cycle(config)
    assert len(fast[0]) > 0 and int((fast[0].granted > 0).sum()) > 0, "the cycle must grant something"
    monkeypatch.setattr(model_mod, "_reprovision", _checked)
    checked = _cycle(config)
    pd.testing.assert_frame_equal(fast[0], checked[0], check_exact=True)
    assert fast[1] == checked[1]
    np.testing.assert_array_equal(fast[2], checked[2])
    assert fast[3:] == checked[3:]
