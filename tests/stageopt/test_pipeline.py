"""Workload, latency model, clustered IPA, the stage optimiser, baselines, experiments, Mesa layer."""

import dataclasses

import numpy as np
import pytest

from cluster_sim.stageopt import exact_min_max_placement, ipa_placement, stage_latency
from cluster_sim.stageopt.clustering import density_clusters_1d, ipa_clustered, machine_groups
from cluster_sim.stageopt.workload import make_machines, make_stage, true_latency


def test_ground_truth_is_column_ordered_within_a_stage_and_has_diminishing_returns():
    rng = np.random.default_rng(0)
    stage, mach = make_stage(rng, 50), make_machines(rng, 20)
    L = true_latency(stage, stage.rows[:, None], 2.0, 4.0, mach, np.arange(20)[None, :])
    order = np.argsort(stage.rows)
    assert np.all(np.diff(L[order], axis=0) >= 0)
    t = true_latency(stage, stage.rows[:1], np.array([1.0, 2.0, 4.0, 8.0]), 64.0, mach, 0)
    gains = -np.diff(t)
    assert np.all(gains > 0) and np.all(np.diff(gains) < 0)        # each doubling helps less
    spill = true_latency(stage, stage.rows.max(), 2.0, np.array([0.25, 64.0]), mach, 0)
    assert spill[0] > spill[1]


def test_density_clusters_split_modes_and_label_largest_first():
    rows = np.r_[np.full(20, 1e4), np.full(5, 1e7)] * np.linspace(1, 1.2, 25)
    lab = density_clusters_1d(rows)
    assert set(lab[20:]) == {0} and set(lab[:20]) == {1}
    assert density_clusters_1d(np.full(4, 7.0)).tolist() == [0, 0, 0, 0]


def test_clustered_ipa_with_singleton_clusters_equals_ipa():
    rng = np.random.default_rng(2)
    rows = rng.lognormal(10, 1, size=12)
    speed = rng.uniform(0.5, 2, size=5)
    L = rows[:, None] / speed[None, :]
    cap = np.array([3, 2, 3, 2, 2])
    a = ipa_clustered(L, np.arange(12), rows, np.arange(5), cap)
    assert stage_latency(L, a) == stage_latency(L, ipa_placement(L, cap)) == exact_min_max_placement(L, cap)[1]
    assert np.all(np.bincount(a, minlength=5) <= cap)


def test_clustered_ipa_respects_capacity_and_errors():
    labels, reps = machine_groups(np.array([[0, 1], [0, 1], [1, 0]]))
    assert labels.tolist() == [0, 0, 1] and reps.tolist() == [0, 2]
    a = ipa_clustered(np.array([[5.0, 9.0], [1.0, 2.0]]), np.array([0, 0, 1, 1]), np.array([9, 8, 2, 1]),
                      labels, np.array([1, 1, 2]))
    assert a[:2].tolist() == [0, 1] and a[2:].tolist() == [2, 2]
    with pytest.raises(ValueError, match="need 4 slots, have 3"):
        ipa_clustered(np.ones((2, 2)), np.array([0, 0, 1, 1]), np.ones(4), labels, np.array([1, 1, 1]))


@pytest.fixture(scope="module")
def model():
    from cluster_sim.stageopt.latency_model import LatencyModel, simulate_traces
    return LatencyModel(max_iter=60).fit(simulate_traces(np.random.default_rng(1), stages=60, instances_per_stage=30, machines=40))


def test_model_metrics_and_aim_helps():
    from cluster_sim.stageopt.latency_model import channel_ablation, simulate_traces, split_by_stage
    rng = np.random.default_rng(5)
    train, test = split_by_stage(simulate_traces(rng, stages=150, instances_per_stage=30, machines=50), 0.3, rng)
    assert not set(train.stage_id) & set(test.stage_id)
    ab = channel_ablation(train, test, max_iter=80)
    assert ab["all_on+AIM"]["WMAPE"] < ab["all_on"]["WMAPE"] < ab["Ch2_off"]["WMAPE"]
    assert 0 < ab["all_on+AIM"]["MdErr"] < ab["all_on+AIM"]["95%Err"]
    assert ab["all_on+AIM"]["Corr"] > 0.5


def test_stage_optimizer_plans_are_feasible_and_deterministic(model):
    from cluster_sim.stageopt.optimizer import StageOptimizer, evaluate_plan
    rng = np.random.default_rng(3)
    stage, mach = make_stage(rng, 80), make_machines(rng, 30)
    so = StageOptimizer(model, alpha=4)
    cap = so.capacity(stage, mach)
    for clustered in (True, False):
        ipa = so.ipa(stage, mach, clustered=clustered)
        assert np.all(np.bincount(ipa.assignment, minlength=mach.n) <= cap)
        for method in ("path", "general"):
            raa = so.raa(stage, mach, ipa, clustered=clustered, method=method)
            use = np.zeros((mach.n, 2))
            np.add.at(use, raa.assignment, raa.theta)
            assert np.all(use <= mach.free + 1e-9)
    a, b = so.raa(stage, mach, so.ipa(stage, mach)), so.raa(stage, mach, so.ipa(stage, mach))
    assert np.array_equal(a.theta, b.theta) and np.array_equal(a.assignment, b.assignment)
    with pytest.raises(ValueError, match="noise=0.5 must be in"):
        evaluate_plan(a, stage, mach, mode="noisy", noise=0.5, rng=rng)
    lat, _ = evaluate_plan(a, stage, mach, mode="noisy", noise=0.2, rng=rng)
    assert a.predicted_latency.max() * 0.4 <= lat <= a.predicted_latency.max() * 1.6


def test_baselines_return_feasible_plans(model):
    from cluster_sim.stageopt.baselines import StageProblem, nsga2, ws_sample
    from cluster_sim.stageopt.optimizer import StageOptimizer
    rng = np.random.default_rng(4)
    stage, mach = make_stage(rng, 8), make_machines(rng, 6)
    prob = StageProblem(StageOptimizer(model, alpha=4), stage, mach)
    for p in (ws_sample(prob, rng, samples=300), nsga2(prob, seed=0, pop_size=20, generations=5)):
        assert p is not None
        use = np.zeros((mach.n, 2))
        np.add.at(use, p.assignment, p.theta)
        assert np.all(use <= mach.free + 1e-9)


def test_configs_validate_alpha():
    from cluster_sim.stageopt.experiments import PlacementConfig, ResourcePlanConfig
    with pytest.raises(ValueError, match=r"alpha=1 is too small.*ceil\(m/n\) = 3"):
        PlacementConfig(instances=300, machines=100, alpha=1)
    with pytest.raises(ValueError, match="grid"):
        ResourcePlanConfig(grid="huge")


def test_mesa_layer_ipa_beats_fuxi_on_stage_latency_and_keeps_invariants():
    from cluster_sim.engine import ClusterConfig
    from cluster_sim.stageopt.agents import run_cluster, stage_latencies
    cfg = ClusterConfig.ci().replace(hardware_types=3, speed_spread=2.0, tasks_per_job=12.0, duration_dist="lognormal")
    fuxi, ipa = stage_latencies(run_cluster(cfg, "fuxi")), stage_latencies(run_cluster(cfg, "ipa"))
    assert len(fuxi) > 5 and len(ipa) > 5
    assert ipa.mean() < fuxi.mean()
    with pytest.raises(ValueError, match="planner='best'"):
        run_cluster(cfg, "best")


def test_density_clusters_are_numbered_without_gaps_and_ipa_predicts_no_empty_cluster():
    """Issue 32 (found through the capstone's small stages): a density minimum with no instance beyond it
    gave a label to no instance ([0 2 2 2 0 0 0]); clustered IPA then asked the model about an empty
    cluster's representative of 0 rows (log10(0): a RuntimeWarning in every notebook that planned it)."""
    import warnings

    from cluster_sim.stageopt.clustering import density_clusters_1d
    from cluster_sim.stageopt.latency_model import LatencyModel, simulate_traces
    from cluster_sim.stageopt.optimizer import StageOptimizer
    from cluster_sim.stageopt.workload import make_machines, make_stage

    rows = np.array([3860550.0, 1128209.0, 1387541.0, 1250789.0, 2009878.0, 2264116.0, 2098917.0])
    labels = density_clusters_1d(rows)
    assert sorted(set(labels.tolist())) == list(range(labels.max() + 1)), labels
    assert labels[np.argmax(rows)] == 0  # still numbered from the largest instances down
    rng = np.random.default_rng(3)
    model = LatencyModel(max_iter=20).fit(simulate_traces(rng, stages=10, instances_per_stage=10, machines=10))
    stage = dataclasses.replace(make_stage(rng, rows.size), rows=rows)
    so = StageOptimizer(model, theta0=(1.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        machines = make_machines(rng, 8)
        so.raa(stage, machines, so.ipa(stage, machines))
