"""Labs 06-07's claims read what the notebook already ran on its own config (issue 24: the claims cell ran the
pool's first seed, the notebook's own, a second time): the same table, the seed's experiments run once."""

import dataclasses

import pandas as pd
import pytest

from cluster_sim.stageopt import claims as stageopt_claims
from cluster_sim.stageopt.claims import claims_table
from cluster_sim.stageopt.config import PlacementConfig, ResourcePlanConfig
from cluster_sim.stageopt.experiments import (run_baselines, run_model_accuracy, run_placement, run_raa_choices,
                                              run_resource_plans)

SMALL06 = PlacementConfig.ci().replace(instances=80, machines=30, stages=2, train_stages=60, max_iter=40)
SMALL07 = ResourcePlanConfig.ci().replace(instances=60, machines=25, stages=2, study_stages=2, moo_stages=1,
                                          train_stages=60, max_iter=40, ws_samples=200, evo_generations=5)
EXPERIMENTS07 = (run_resource_plans, run_raa_choices, run_baselines, run_model_accuracy)


def _counted(monkeypatch, experiments):
    """Each experiment as the claims call it, counting its runs by the seed of the config it ran on."""
    calls = []
    for fn in experiments:
        def counting(config, fn=fn):
            calls.append((fn.__name__, config.seed))
            return fn(config)
        monkeypatch.setattr(stageopt_claims, fn.__name__, counting)
    return calls


def _same_table(a: pd.DataFrame, b: pd.DataFrame):
    """Equal but for wall-clock solve times (no two runs time alike)."""
    timed = [c for c in a.index if "solve" in a.at[c, "claim"] or "slower" in a.at[c, "claim"]]
    pd.testing.assert_frame_equal(a.drop(index=timed), b.drop(index=timed))


def test_lab07s_claims_read_the_notebooks_runs_of_its_own_seed(monkeypatch):
    made = tuple(fn(SMALL07) for fn in EXPERIMENTS07)
    calls = _counted(monkeypatch, EXPERIMENTS07)
    given = claims_table(SMALL07, pool_size=2, client="inprocess", cache=False, results=made)
    assert sorted(calls) == sorted((fn.__name__, SMALL07.seed + 1) for fn in EXPERIMENTS07)  # seed 0: read, not run
    calls.clear()
    _same_table(given, claims_table(SMALL07, pool_size=2, client="inprocess", cache=False))
    assert len(calls) == 8


def test_lab06s_claims_read_the_notebooks_placement_run(monkeypatch):
    result = run_placement(SMALL06)
    calls = _counted(monkeypatch, (run_placement,))
    given = claims_table(SMALL06, pool_size=2, client="inprocess", cache=False, results=(result,))
    assert calls == [("run_placement", SMALL06.seed + 1)]
    _same_table(given, claims_table(SMALL06, pool_size=2, client="inprocess", cache=False))


def test_results_of_another_config_or_lab_are_refused():
    other = dataclasses.replace(SMALL07, seed=SMALL07.seed + 1)
    with pytest.raises(ValueError, match=r"results holds run_model_accuracy's result for another config \(seed 1\)"):
        claims_table(SMALL07, pool_size=2, results=(run_model_accuracy(other),))
    with pytest.raises(ValueError, match="results holds the result of run_raa_choices, which is not a Lab 06"):
        claims_table(SMALL06, pool_size=2, results=(run_raa_choices(SMALL07),))
    with pytest.raises(ValueError, match="results holds a DataFrame that no experiment of this lab made"):
        claims_table(SMALL07, pool_size=2, results=(pd.DataFrame({"x": [1]}),))
    with pytest.raises(ValueError, match="results=DataFrame is not allowed"):
        claims_table(SMALL07, pool_size=2, results=run_baselines(SMALL07))


def test_lab06s_claims_read_the_notebooks_mesa_run(monkeypatch):
    from cluster_sim.stageopt.agents import lab_cluster_config, planner_stage_latencies

    mesa = planner_stage_latencies(lab_cluster_config(SMALL06.seed))
    result = run_placement(SMALL06)
    calls = []

    def counting(config):
        calls.append(config.seed)
        return planner_stage_latencies(config)

    monkeypatch.setattr(stageopt_claims, "planner_stage_latencies", counting)
    given = claims_table(SMALL06, pool_size=2, client="inprocess", cache=False, results=(result, mesa))
    assert calls == [SMALL06.seed + 1]  # the notebook's seed: read, not run
    _same_table(given, claims_table(SMALL06, pool_size=2, client="inprocess", cache=False))
    other = planner_stage_latencies(lab_cluster_config(SMALL06.seed + 1))
    with pytest.raises(ValueError, match=r"results holds planner_stage_latencies's result for another config \(seed 1\)"):
        claims_table(SMALL06, pool_size=2, results=(other,))
    with pytest.raises(ValueError, match="results holds the result of planner_stage_latencies, which is not a Lab 07"):
        claims_table(SMALL07, pool_size=2, results=(mesa,))
