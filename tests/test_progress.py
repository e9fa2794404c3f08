"""Progress on long single runs: slicing a run for its bar changes nothing, a long run says its
estimate first, and nothing is drawn inside a sweep point, a panel or with CLUSTER_SIM_PROGRESS=off."""

from __future__ import annotations

import dataclasses
import time

import pytest

import cluster_sim.progress as progress
from cluster_sim.engine import ClusterConfig, ClusterModel, collect, run
from cluster_sim.progress import LazyBar, track
from cluster_sim.rminer import RMinerConfig
from cluster_sim.rminer.simulation import run as rminer_run
from cluster_sim.sweep import run_grid


def _finishes(model: ClusterModel) -> list:
    # repr: a task that never started has NaN times, and NaN != NaN
    return [repr((t.id, t.machine, t.start, t.finish, t.state, t.attempts)) for j in model.arrived for t in j.tasks]


@pytest.mark.parametrize("config", [ClusterConfig.ci().replace(update_delay=0.7, schedulers=3),
                                    ClusterConfig.ci().replace(view_refresh="staggered", update_delay=0.3)],
                         ids=["synchronous", "staggered"])
def test_a_run_sliced_for_its_progress_bar_is_the_run_in_one_piece(config, monkeypatch, capsys):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "off")  # one run_until(horizon)
    whole = ClusterModel(config)
    whole.run_until(config.horizon)
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")  # SLICES slices, and a bar at once
    monkeypatch.setattr(progress, "PROGRESS_AFTER_SECONDS", 0.0)
    sliced = ClusterModel(config)
    sliced.run_until(config.horizon)
    assert "ClusterModel" in capsys.readouterr().err  # the bar was drawn
    assert _finishes(sliced) == _finishes(whole)
    assert dataclasses.asdict(collect(sliced).metrics) == dataclasses.asdict(collect(whole).metrics)


def test_rminer_metrics_are_unchanged_by_slicing(monkeypatch):
    config = RMinerConfig.ci().replace(mode="smart", workload_level=2.0)
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "off")
    whole = rminer_run(config, record_series=False).summary()
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    assert rminer_run(config, record_series=False).summary() == whole


def test_a_long_run_announces_its_estimate_before_it_starts(monkeypatch, capsys):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    monkeypatch.setattr(progress, "ESTIMATE_AFTER_SECONDS", 0.0)  # every run "long"
    config = ClusterConfig.ci()
    model = ClusterModel(config)
    model.start()  # the jobs are made at the start
    tasks = sum(j.n_tasks for j in model.jobs)
    model.run_until(config.horizon)
    out = capsys.readouterr().out
    assert out.startswith(f"ClusterModel: {tasks:,} tasks over {config.horizon:g} simulated seconds: roughly ")
    assert "CLUSTER_SIM_PROGRESS=off hides both" in out
    assert model.estimated_seconds(config.horizon) == 0.0  # nothing left to run
    # a short run at the real threshold says nothing
    monkeypatch.undo()
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    run(config)
    assert capsys.readouterr().out == ""


def test_the_estimate_counts_the_tasks_still_to_arrive_and_the_view_refreshes():
    config = ClusterConfig.ci().replace(update_delay=0.5)
    model = ClusterModel(config)
    model.start()
    half = config.horizon / 2
    due = sum(j.n_tasks for j in model.jobs if j.arrival <= half)
    refreshes = half / 0.5 * config.schedulers
    expected = due * config.SECONDS_PER_TASK + refreshes * (
        config.SECONDS_PER_REFRESH + config.machines * config.SECONDS_PER_REFRESHED_MACHINE)
    assert model.tasks_due(half) == due
    assert model.estimated_seconds(half) == pytest.approx(expected)
    model.run_until(half)
    assert model.tasks_due(half) == 0


@pytest.mark.parametrize("style", ["off", "quiet"])
def test_nothing_is_drawn_when_off_or_quiet(style, monkeypatch, capsys):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "off" if style == "off" else "text")
    monkeypatch.setattr(progress, "ESTIMATE_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(progress, "PROGRESS_AFTER_SECONDS", 0.0)
    if style == "quiet":
        with progress.quiet():
            run(ClusterConfig.ci())
    else:
        run(ClusterConfig.ci())
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_a_sweep_point_draws_no_bar_of_its_own(monkeypatch, capsys):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    monkeypatch.setattr(progress, "ESTIMATE_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(progress, "PROGRESS_AFTER_SECONDS", 0.0)
    run_grid(run, ClusterConfig.ci(), {"schedulers": [1, 2]}, client="inprocess", cache=False, progress=True)
    captured = capsys.readouterr()
    assert "ClusterModel" not in captured.out + captured.err  # no estimate, no run bar
    assert "2/2" in captured.err  # the sweep's own bar


def test_track_yields_every_item_and_its_bar_counts_each_once(monkeypatch, capsys):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    monkeypatch.setattr(progress, "PROGRESS_AFTER_SECONDS", 0.0)  # the bar opens after the first item
    assert list(track(range(5), desc="stages", unit="stage")) == [0, 1, 2, 3, 4]
    err = capsys.readouterr().err
    assert "5/5" in err and "6/5" not in err


def test_a_lazy_bar_stays_closed_for_short_work(monkeypatch, capsys):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    bar = LazyBar(1000, desc="short", unit="it")
    for _ in range(1000):
        bar.step()
    bar.close()
    assert capsys.readouterr().err == ""


def test_a_bad_progress_style_is_refused(monkeypatch):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "bars")
    with pytest.raises(ValueError, match="CLUSTER_SIM_PROGRESS='bars' is not allowed: choose one of 'auto', 'text', 'off'"):
        run(ClusterConfig.ci())


def test_a_run_bar_waits_for_the_elapsed_time_not_a_slow_first_slice(monkeypatch, capsys):
    # seen in CI: a shaper run's first slices held most of its work; extrapolating their pace opened a
    # bar over a run that ended 0.06 s later
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    bar = LazyBar(100, desc="run", unit="sim s", extrapolate=False, after=1.0)
    time.sleep(0.05)
    bar.step(1)  # extrapolated: 5 s left, over the threshold
    assert bar.bar is None
    bar.close()
    sweep = LazyBar(100, desc="sweep", unit="point", after=1.0)  # points cost alike: extrapolating is right
    time.sleep(0.05)
    sweep.step(1)
    assert sweep.bar is not None
    sweep.close()
    capsys.readouterr()


def test_a_run_estimated_long_shows_its_bar_from_the_start(monkeypatch, capsys):
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    calls = []
    progress.advance(calls.append, 0.0, 10.0, desc="long run", estimate=progress.PROGRESS_AFTER_SECONDS + 1)
    assert calls[-1] == 10.0 and len(calls) == progress.SLICES and calls == sorted(calls)
    assert "long run" in capsys.readouterr().err
    progress.advance(calls.append, 10.0, 20.0, desc="short run", estimate=0.1)
    assert "short run" not in capsys.readouterr().err
