"""The labs' functions as the notebooks use them: panels re-run on a slider change, figures draw,
the experiment tables have the paper's shape, and the exercise traces replay exactly."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from cluster_sim.rminer import RMinerConfig, rm_choice, run
from cluster_sim.rminer.experiments import compare_modes, shadow_sweep, stale_view_timeline
from cluster_sim.rminer.plots import plot_architectures, plot_fig4, plot_modes, plot_run, plot_shadow_run, plot_timeline
from cluster_sim.rminer.traces import decision_trace, first_difference, replay_shadow, shadow_trace, time_average
from cluster_sim.ui import ConfigPanel

TINY = RMinerConfig.ci().replace(machines=10, think_time=1500 / (10 * 1000), horizon=5.0)


def test_panel_reruns_on_a_slider_change():
    panel = ConfigPanel(TINY.replace(mode="smart"), run, plot_run,
                        fields=["update_delay", "mean_task_duration", "schedulers", "workload_level", "mode", "filter_ratio"])
    panel.set(update_delay=1.0, mode="safe")
    assert panel.runs == 2 and panel.result.config.mode == "safe" and panel.result.config.update_delay == 1.0
    assert panel.figure.axes
    panel.set(filter_ratio=1.5)  # rejected: the error is shown, the last good result stays
    assert panel.error.startswith("filter_ratio = 1.5 was refused") and panel.runs == 2
    assert panel.controls["filter_ratio"].value == panel.config.filter_ratio


def test_lab08_panel_and_figures():
    panel = ConfigPanel(TINY, run, plot_shadow_run, fields=["update_delay", "mean_task_duration", "view_refresh"])
    panel.set(view_refresh="staggered")
    assert panel.result.shadow_ratio > 0
    assert plot_architectures().axes
    tl = stale_view_timeline(TINY.replace(machines=4, schedulers=2, think_time=1 / 12.0, update_delay=1.0, horizon=4.0))
    # the CSV never shows less free than scheduler 0's view right after a sync
    at_sync = np.isin(tl.times, tl.syncs)
    assert np.array_equal(tl.csv_free[at_sync], tl.view_free[at_sync])
    assert plot_timeline(tl).axes


def test_experiment_tables_and_figures():
    df = shadow_sweep(TINY, update_delays=(0.5,), durations=(2.0, 5.0))
    assert set(df["theory"]) == {0.125, 0.05} and plot_fig4(df).axes
    modes = compare_modes(TINY, schedulers=(8,), workload_levels=(1.0,))
    assert list(modes["mode"]) == ["none", "plus1", "safe", "smart"]  # every comparison has NoRM + 1 scheduler
    assert modes.loc[modes["mode"] == "none", "throughput_gain"].item() == 0.0
    assert plot_modes(modes).axes


def test_shadow_trace_replays_to_the_models_own_integral():
    cfg = TINY.replace(update_delay=0.5)
    tr = shadow_trace(cfg)
    shadows = replay_shadow(tr.events, tr.capacity)
    r = run(cfg)
    assert time_average(tr.events, shadows, tr.t_end) == pytest.approx(r.mean_shadow, rel=1e-9)


def test_decision_trace_replays_through_rm_choice():
    ds = decision_trace(TINY.replace(mode="smart", workload_level=2.0, filter_threshold=4.0))
    assert ds and {d.path for d in ds} <= {"shadow", "normal"}
    assert all(rm_choice(d.shadow, d.free, d.demand, d.mode) == (d.machine, d.path) for d in ds)
    with pytest.raises(ValueError, match="mode='none'"):
        decision_trace(TINY)


def test_first_difference_names_the_decision():
    with pytest.raises(AssertionError, match=r"decision 2 of 3 differs"):
        first_difference([1, 2, 4], [1, 2, 3], lambda i: f"case {i}", "decision")
    with pytest.raises(AssertionError, match="returned 2 values for 3"):
        first_difference([1, 2], [1, 2, 3], str, "event")
