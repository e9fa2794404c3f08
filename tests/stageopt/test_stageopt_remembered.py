"""The trained latency model and its traces are remembered (sliders must not retrain it), but each call
returns its own copy: a reader who refits the model or edits the traces changes no later call."""

import numpy as np

from cluster_sim.stageopt.experiments import PlacementConfig, trained_model, training_traces

C = PlacementConfig.ci().replace(train_stages=30, max_iter=20)
KEY = (C.seed, C.train_stages, C.levels, C.trace_noise)


def test_a_trained_model_changed_by_its_reader_does_not_change_the_next_call():
    model, metrics = trained_model(*KEY, C.max_iter)
    train, test = training_traces(*KEY)
    want = model.predict(test.X)
    wmape = metrics["WMAPE"]
    metrics["WMAPE"] = 0.0
    model.fit(type(train)(train.X[:50], train.latency[:50] * 10.0, train.cost[:50], train.stage_id[:50]))
    again, again_metrics = trained_model(*KEY, C.max_iter)
    assert again_metrics["WMAPE"] == wmape
    np.testing.assert_array_equal(again.predict(test.X), want)


def test_traces_changed_by_their_reader_do_not_change_the_next_call():
    train, _ = training_traces(*KEY)
    x, latency = train.X.copy(), train.latency.copy()
    train.X[:] = 0.0
    train.latency = latency[:1]
    again, _ = training_traces(*KEY)
    np.testing.assert_array_equal(again.X, x)
    np.testing.assert_array_equal(again.latency, latency)
