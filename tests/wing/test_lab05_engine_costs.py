"""Lab 05's runs at the paper's scale (issue 33): the capacity scheduler's largest costs, profiled on a
5,000-jobs-a-day run, were scans that cannot change a decision in Lab 05's setting (queues with hard
boundaries, no capacity lowered while running):

* ``_limits`` looked for starved queues at every admission, although without elasticity every
  queue's maximum is its guarantee, so nothing is held back either way (a sixth of the run);
* every pass shrank every queue's excess over a lowered maximum, summing each parent's leaves, when
  no maximum had been lowered and every excess was zero.

The tests count those scans, and check that every policy's run is decision for decision the one the
full scans give."""

import numpy as np
import pytest

from cluster_sim.engine.capacity import CapacityScheduler
from cluster_sim.wing.scheduling import POLICIES, WingConfig, run
from cluster_sim.wing.scheduling.experiments import workload_for

CI = WingConfig.ci()


def full_scans(monkeypatch):
    """The scheduler as it was: starved queues looked for at every admission, every excess shrunk every pass."""
    def limits(self):
        if self._starved():
            return {q.name: np.minimum(q.maximum, q.guaranteed) for q in self.queues.values()}
        return {q.name: q.maximum for q in self.queues.values()}

    original = CapacityScheduler._pass

    def every_pass(self):
        self._excess_held = True
        original(self)

    monkeypatch.setattr(CapacityScheduler, "_limits", limits)
    monkeypatch.setattr(CapacityScheduler, "_pass", every_pass)


def counting(monkeypatch, name):
    calls = {"n": 0}
    original = getattr(CapacityScheduler, name)

    def counted(self, *args, **kwargs):
        calls["n"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CapacityScheduler, name, counted)
    return calls


def test_a_run_without_elasticity_never_scans_for_starved_queues(monkeypatch):
    starved = counting(monkeypatch, "_starved")
    r = run(CI.replace(capacity=0.4, policy="wing_agg"))
    assert len(r.admissions) > 100 and starved["n"] == 0


def test_a_pass_reads_no_queues_use_for_excess_when_no_maximum_was_lowered(monkeypatch):
    used = counting(monkeypatch, "used")
    run(CI.replace(capacity=0.4, policy="prio"))
    now = used["n"]
    monkeypatch.undo()
    used = counting(monkeypatch, "used")
    full_scans(monkeypatch)
    run(CI.replace(capacity=0.4, policy="prio"))
    assert now < 0.8 * used["n"], (now, used["n"])


@pytest.mark.parametrize("capacity", [0.2, 0.6])
@pytest.mark.parametrize("queues", ["org", "cluster"])
def test_every_policys_run_is_the_full_scans_decision_for_decision(monkeypatch, capacity, queues):
    w = workload_for(CI)
    fast = {p: run(CI.replace(policy=p, capacity=capacity, queues=queues), workload=w) for p in POLICIES}
    full_scans(monkeypatch)
    for p in POLICIES:
        full = run(CI.replace(policy=p, capacity=capacity, queues=queues), workload=w)
        assert fast[p].admissions.equals(full.admissions), p
        assert fast[p].value == full.value and fast[p].jobs["finish"].equals(full.jobs["finish"]), p
