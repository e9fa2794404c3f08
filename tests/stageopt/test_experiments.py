"""Lab configs, run/plot functions and their widget panels (called in-process, as CONTRIBUTING.md asks)."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from cluster_sim.stageopt.experiments import (PlacementConfig, ResourcePlanConfig, optimality_study,  # noqa: E402
                                              plot_placement, plot_resource_plans, run_placement, run_resource_plans)

SMALL = dict(train_stages=60, max_iter=40, stages=2)


def test_run_placement_is_deterministic_and_ipa_beats_fuxi():
    cfg = PlacementConfig.ci().replace(instances=80, machines=30, **SMALL)
    a, b = run_placement(cfg), run_placement(cfg)
    cols = ["stage", "method", "latency", "cost", "predicted latency"]
    pd.testing.assert_frame_equal(a.per_stage[cols], b.per_stage[cols])
    assert (a.table["latency RR vs Fuxi"].drop("Fuxi") > 0).all()


def test_run_resource_plans_modes_and_noise_free_equals_prediction():
    cfg = ResourcePlanConfig.ci().replace(instances=60, machines=25, **SMALL)
    r = run_resource_plans(cfg)
    assert set(r.table["mode"]) == {"noise-free", "noisy", "ground truth"}
    nf = r.table[r.table["mode"] == "noise-free"]
    assert nf.loc["IPA+RAA(Path)", "cost RR vs Fuxi"] > 0
    front = r.example["front"]
    assert np.all(np.diff(front[:, 0]) < 0) and np.all(np.diff(front[:, 1]) > 0)


def test_optimality_study_column_ordered_is_always_optimal():
    df = optimality_study(cases=30)
    assert df["column ordered"].all() and (df.gap.abs() < 1e-12).all()


def test_panels_rerun_and_redraw():
    from cluster_sim.ui import ConfigPanel
    p = ConfigPanel(PlacementConfig.ci().replace(instances=60, machines=30, **SMALL), run_placement, plot_placement,
                    fields=["instances", "machines", "stages", "skew", "busy_fraction", "alpha"])
    p.set(skew=1.5, alpha=5)
    assert p.config.skew == 1.5 and p.result.config.alpha == 5 and p.figure is not None
    q = ConfigPanel(ResourcePlanConfig.ci().replace(instances=40, machines=20, **SMALL), run_resource_plans,
                    plot_resource_plans, fields=["grid", "latency_weight", "noise"])
    q.set(grid="narrow", latency_weight=0.9)
    assert q.result.config.grid == "narrow" and q.figure is not None


@pytest.mark.parametrize("bad, msg", [({"noise": 0.5}, "noise=0.5 is out of range"),
                                      ({"grid": "huge"}, "grid='huge' is not allowed"),
                                      ({"alpha": 1, "instances": 500, "machines": 50}, "alpha >= ceil")])
def test_resource_plan_config_errors(bad, msg):
    with pytest.raises(ValueError, match=msg):
        ResourcePlanConfig.ci().replace(**bad)


def test_lab07_front_is_scored_per_instance_so_the_pick_is_the_tables_plan():
    """Issue 15, finding 2: the clustered front priced every unit as its largest instance, so the
    WUN pick was drawn at a cost far above the plan the table reported (23,883 vs 13,864)."""
    cfg = ResourcePlanConfig.ci().replace(instances=60, machines=25, **SMALL)
    r = run_resource_plans(cfg)
    ex = r.example
    row = r.per_stage[(r.per_stage.stage == 0) & (r.per_stage["mode"] == "noise-free")].set_index("method")
    pick = ex["front"][ex["pick"]]
    assert np.allclose(pick, row.loc["IPA+RAA(Path)", ["latency", "cost"]].to_numpy(dtype=float), rtol=1e-9)
    assert np.allclose(ex["IPA(Cluster)"], row.loc["IPA(Cluster)", ["latency", "cost"]].to_numpy(dtype=float))
    # priced per unit, RAA saw its plans at or above their real cost
    assert np.all(ex["front as RAA saw it"][:, 1] >= ex["front"][:, 1] * (1 - 1e-9))
    # the exact (unclustered) front is a front: latency falls as cost rises
    exact = ex["exact front"]
    assert np.all(np.diff(exact[:, 0]) < 0) and np.all(np.diff(exact[:, 1]) > 0)


def test_raa_choices_are_table_2s_rows_and_general_equals_path():
    from cluster_sim.stageopt.experiments import run_raa_choices
    cfg = ResourcePlanConfig.ci().replace(instances=60, machines=25, study_stages=2, **SMALL)
    t = run_raa_choices(cfg)
    assert list(t.index) == ["Fuxi", "IPA(Org)", "IPA(Cluster)", "IPA+RAA(W/O_C)", "IPA+RAA(DBSCAN)",
                             "IPA+RAA(General)", "IPA+RAA(Path)"]
    assert t.loc["IPA+RAA(W/O_C)", "RAA units"] == 60 > t.loc["IPA+RAA(Path)", "RAA units"]
    for col in ("stage latency (s)", "cost"):
        assert np.isclose(t.loc["IPA+RAA(General)", col], t.loc["IPA+RAA(Path)", col])
    assert (t.coverage == 1).all()


def test_model_accuracy_study_orders_models_by_accuracy():
    from cluster_sim.stageopt.experiments import ACCURACY_MODELS, run_model_accuracy
    cfg = ResourcePlanConfig.ci().replace(instances=60, machines=25, study_stages=2, **SMALL)
    t = run_model_accuracy(cfg)
    assert list(t.index) == list(ACCURACY_MODELS)
    assert t.WMAPE.is_monotonic_increasing
    assert {"latency RR vs Fuxi", "cost RR vs Fuxi", "GlbErr"} <= set(t.columns)


def test_placement_result_reports_cluster_counts():
    r = run_placement(PlacementConfig.ci().replace(instances=80, machines=30, **SMALL))
    c = r.clusters
    assert 1 <= c["instance clusters"] <= c["most instance clusters"] and c["mean machine groups"] > 1
