"""A capacity change costs what it changes (issue 33: a paper Morpheus cycle sets a queue's capacity about 70k
times, and each built half a dozen numpy arrays to find that no queue held anything above its maximum).
Work is counted, not timed; the numbers and the refusals are those of the general path."""

import numpy as np
import pytest

from cluster_sim.engine import CapacityClusterModel, ClusterConfig, QueueSpec
from cluster_sim.engine import capacity

from .test_capacity_scan import reserved_model


class _CountingNumpy:
    """numpy, counting the calls of the functions a capacity change used to build its arrays with."""

    watched = ("broadcast_to", "maximum")

    def __init__(self):
        self.calls = {name: 0 for name in self.watched}

    def __getattr__(self, name):
        attr = getattr(np, name)
        if name in self.watched:
            def counted(*args, **kwargs):
                self.calls[name] += 1
                return attr(*args, **kwargs)
            return counted
        return attr


def test_a_change_that_leaves_no_queue_above_its_maximum_builds_no_excess_arrays(monkeypatch):
    model = reserved_model(n_full=4)
    model.run_until(20.0)
    sched = model.capacity_scheduler
    counting = _CountingNumpy()
    monkeypatch.setattr(capacity, "np", counting)
    for c in (3, 1, 2, 5):  # Lab 03's call: whole containers, as a tuple, no queue left above its maximum
        sched.set_capacity("r00", (c, c))
        sched.set_capacity("adhoc", (10 - c, 10 - c), (160, 160))
    assert counting.calls == {"broadcast_to": 0, "maximum": 0}, counting.calls
    assert sched.queues["r00"].guaranteed.tolist() == [5.0, 5.0] and sched.queues["r00"].maximum.dtype == float
    assert not sched._over
    model.run_until(60.0)
    model.check_invariants()


def test_a_lowered_maximum_still_records_what_the_queue_holds_above_it():
    model = reserved_model(n_full=4)
    model.run_until(20.0)
    sched = model.capacity_scheduler
    sched.set_capacity("r00", (2, 2))
    model.run_until(30.0)
    assert sched.used(sched.queues["r00"]).tolist() == [2, 2]  # both its tasks run
    sched.set_capacity("r00", (0, 0))
    assert sched.queues["r00"].excess.tolist() == [2.0, 2.0] and "r00" in sched._over
    model.run_until(60.0)
    model.check_invariants()


@pytest.mark.parametrize("value", [(3, 3), (0, 0), (2**53, 2**53), (3.0, 3), (True, 1), (np.int64(3), 3), 3, [3, 3],
                                   np.array([3, 3]), (2**53 + 1, 1)])
def test_capacities_read_as_before(value):
    sched = CapacityClusterModel(ClusterConfig.ci(), [QueueSpec("a", 0.5)], jobs=[]).capacity_scheduler
    want = np.broadcast_to(np.asarray(value, dtype=float), sched.total.shape).copy()
    got = sched._vector(value, "guaranteed")
    assert got.dtype == want.dtype and got.shape == want.shape and got.tolist() == want.tolist()


@pytest.mark.parametrize("value", [(-1, 1), (1, float("nan")), (1, float("inf")), (1, 2, 3), (-(2**60), 1)])
def test_impossible_capacities_are_refused_as_before(value):
    sched = CapacityClusterModel(ClusterConfig.ci(), [QueueSpec("a", 0.5)], jobs=[]).capacity_scheduler
    with pytest.raises(ValueError):
        sched.set_capacity("a", value)
