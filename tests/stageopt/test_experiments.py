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
                    fields=["instances", "machines", "skew", "busy_fraction", "alpha"])
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
