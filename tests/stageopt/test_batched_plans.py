"""Issue 33: many stages' IPA and RAA with one model call a round (``run_batched``) give each stage the
plan Lab 07's per-stage calls give it, bit for bit, with a few model calls instead of four a stage."""

import numpy as np
import pytest

from cluster_sim.stageopt.latency_model import LatencyModel, simulate_traces
from cluster_sim.stageopt.optimizer import StageOptimizer, run_batched, run_steps
from cluster_sim.stageopt.workload import make_machines, make_stage, resource_grid

GRID = resource_grid((1.0, 2.0, 4.0), (1.0, 2.0, 4.0))


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(5)
    return LatencyModel(max_iter=30).fit(simulate_traces(rng, stages=20, instances_per_stage=20, machines=20, grid=GRID))


def stages_and_machines(n: int):
    rng = np.random.default_rng(7)
    machines = make_machines(rng, 12)
    return [make_stage(rng, int(rng.integers(1, 40))) for _ in range(n)], machines


class Counting:
    """A latency model that counts its calls and the rows it predicts."""

    def __init__(self, model):
        self.model, self.calls, self.rows = model, 0, 0

    def predict(self, X):
        self.calls += 1
        self.rows += len(X)
        return self.model.predict(X)


def plan(so, stage, machines, clustered, method):
    ipa = yield from so.ipa_steps(stage, machines, clustered)
    raa, front = yield from so.raa_with_front_steps(stage, machines, ipa, clustered, method)
    return ipa, raa, front


@pytest.mark.parametrize("clustered, method", [(True, "path"), (False, "path"), (True, "general")])
def test_batched_plans_equal_lab_07s_per_stage_calls_bit_for_bit(model, clustered, method):
    stages, machines = stages_and_machines(25)
    so = StageOptimizer(model, theta0=(1.0, 1.0), alpha=4, grid=GRID)
    batched = run_batched(model, [plan(so, s, machines, clustered, method) for s in stages])
    for stage, (ipa, raa, front) in zip(stages, batched):
        want_ipa = so.ipa(stage, machines, clustered)
        want_raa, want_front = so.raa_with_front(stage, machines, want_ipa, clustered, method)
        for got, want in ((ipa, want_ipa), (raa, want_raa)):
            assert got.method == want.method
            np.testing.assert_array_equal(got.assignment, want.assignment)
            np.testing.assert_array_equal(got.theta, want.theta)
            np.testing.assert_array_equal(got.predicted_latency, want.predicted_latency)
        np.testing.assert_array_equal(front.front, want_front.front)
        assert front.pick == want_front.pick


def test_batched_plans_call_the_model_once_a_round_not_four_times_a_stage(model):
    stages, machines = stages_and_machines(25)
    one, many = Counting(model), Counting(model)
    so_one = StageOptimizer(one, theta0=(1.0, 1.0), alpha=4, grid=GRID)
    so_many = StageOptimizer(many, theta0=(1.0, 1.0), alpha=4, grid=GRID)
    for s in stages:
        run_steps(one, plan(so_one, s, machines, True, "path"))
    run_batched(many, [plan(so_many, s, machines, True, "path") for s in stages])
    assert one.calls == 4 * len(stages)  # IPA's matrix and prediction, RAA's configurations and prediction
    assert many.calls == 4 and many.rows == one.rows  # the same rows, one call a round


def test_run_batched_returns_what_steps_without_requests_return(model):
    def nothing_to_predict(x):
        return x
        yield  # a generator that asks nothing

    assert run_batched(model, [nothing_to_predict(1), nothing_to_predict(2)]) == [1, 2]
    assert run_batched(model, []) == []


def test_machine_groups_of_the_same_machines_are_computed_once_and_each_caller_gets_its_own_arrays():
    """Issue 33: the capstone asks for the groups of its 500 machines twice a stage (12,117 stages at paper);
    np.unique over rows sorts them every time."""
    from cluster_sim.stageopt.clustering import _machine_groups, machine_groups

    keys = make_machines(np.random.default_rng(11), 300).state_keys()
    labels, reps = machine_groups(keys)
    misses = _machine_groups.cache_info().misses
    labels[:] = -1
    again, again_reps = machine_groups(keys.copy())
    assert _machine_groups.cache_info().misses == misses  # remembered
    _, want_first, want = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    np.testing.assert_array_equal(again, want.reshape(-1))
    np.testing.assert_array_equal(again_reps, want_first)
    machine_groups(keys[:, :3])  # other keys: computed anew
    assert _machine_groups.cache_info().misses == misses + 1
