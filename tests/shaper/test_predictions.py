"""Lab 01's predictions (cluster_sim/shaper/predictions.py): each answer recomputed from the runs it is about, so an
answer cannot drift from what the lab shows; a wrong prediction loses the points after the explanation."""

import numpy as np
import pytest

from cluster_sim.predict import PredictionMissed, grade
from cluster_sim.shaper import StageGraph, replay
from cluster_sim.shaper import predictions as P
from cluster_sim.shaper.lab import ShaperConfig, run_cluster, run_fleet


def test_not_started_answer_is_the_toy_run():
    toy = StageGraph({"a": 10, "b": 10, "c": 10}, [("a", "c")])
    durations = {"a": np.full(10, 1.0), "b": np.full(10, 5.0), "c": np.full(10, 1.0)}
    latency = {m: replay(toy, durations, 20, m).latency for m in ("off", "conservative", "not_started")}
    assert latency["off"] == latency["conservative"] == 5.0 and latency["not_started"] > 5.0, latency
    assert P.NOT_STARTED.answer.startswith("later than 5 s")


@pytest.mark.parametrize("preset, seed", [("ci", 0), ("ci", 7), ("default", 1)])
def test_cluster_queueing_answer_is_the_run(preset, seed):
    result = run_cluster(ShaperConfig.from_preset(preset).replace(seed=seed))
    off, on = result.runs["off"].jobs, result.shaped.jobs
    run_off, run_on = off["finished"] - off["admitted"], on["finished"] - on["admitted"]
    assert np.allclose(run_off, run_on, rtol=0, atol=1e-9), "a job ran longer or shorter with the shaper"
    assert on["queueing"].mean() < off["queueing"].mean(), (on["queueing"].mean(), off["queueing"].mean())
    assert P.CLUSTER_QUEUEING.answer.startswith("each job runs exactly as long")


@pytest.mark.parametrize("preset, seed", [("ci", 0), ("ci", 1), ("default", 0)])
def test_opportunity_answer_is_the_run(preset, seed):
    summary = run_fleet(ShaperConfig.from_preset(preset).replace(seed=seed)).summary
    assert (summary["shaper_savings_over"] < summary["opportunity_over"]).all(), summary
    assert (summary["captured_over"] < 100).all() and (summary["captured_over"] > 0).all(), summary
    assert P.OPPORTUNITY.answer.startswith("a share of it")


