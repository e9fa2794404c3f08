"""Issue 33, Lab 00 at ``paper``: the tour's sweeps and side runs start ahead on a worker
(:func:`cluster_sim.engine.claims.start_sweeps_ahead`, :func:`cluster_sim.sweep.start_ahead`) while the kernel runs
the tour's own cluster and the capacity scheduler. The notebook's cells then read them from the sweep cache: the same
points (the same cache keys) and the same numbers as computing them in the kernel."""

import pandas as pd
import pytest

from cluster_sim import sweep
from cluster_sim.engine import ClusterConfig, collect, run
from cluster_sim.engine import claims as tour
from cluster_sim.engine import CapacityClusterModel, QueueSpec


def keys_of(kwargs, directory):
    kwargs = {k: v for k, v in kwargs.items() if k != "estimate"}
    return sweep._plan(kwargs["run"], kwargs["base_config"], kwargs["grid"], kwargs.get("seeds"),
                       kwargs.get("metrics"), kwargs.get("cache_key"), directory)[-1]


def test_the_sweeps_started_ahead_are_the_ones_the_notebook_runs(tmp_path):
    """Every point the notebook's cells ask run_grid for at paper (§4's stale sweep as its cell calls it, §5's
    shared-state cluster and decision arms, §7's pool) is one start_sweeps_ahead computes: the same cache key."""
    config = ClusterConfig.paper()
    ahead = [keys_of(s, tmp_path) for s in (tour._stale_sweep(config), tour._shared_state_sweep(config),
                                            tour._decision_sweep(config), tour._pool_sweep(config))]
    stale_cell = sweep._plan(run, tour.stale_config(config), tour.STALE_SWEEP, None, tour.tour_metrics, None,
                             tmp_path)[-1]
    shared_cell = sweep._plan(run, config, [dict(tour.SHARED_STATE)], None, tour.tour_metrics, None, tmp_path)[-1]
    assert ahead[0] == stale_cell and ahead[1] == shared_cell
    assert len(set(ahead[2])) == 2 and len(set(ahead[3])) == 3 * len(tour.STALE_DELAYS)
    # the old cell's run: config.replace(schedulers=4, update_delay=1.0)
    assert sweep._plan(run, config.replace(schedulers=4, update_delay=1.0), [{}], None, tour.tour_metrics, None,
                       tmp_path)[-1] == shared_cell


def test_nothing_starts_ahead_where_the_points_take_seconds(tmp_path, monkeypatch):
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    assert tour.start_sweeps_ahead(ClusterConfig.ci(), cache=tmp_path) is None
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")  # the test suite's notebooks
    assert tour.start_sweeps_ahead(ClusterConfig.paper(), cache=tmp_path) is None


def test_the_families_table_is_the_one_the_cell_showed(tmp_path):
    """§5's table with the shared-state column from shared_state_metrics (run_grid, cached) is the table the cell
    built from vars(run(config.replace(schedulers=4, update_delay=1.0)).metrics): equal and displayed alike."""
    config = ClusterConfig.ci()
    queues = [QueueSpec("prod", share=0.7, max_share=1.0), QueueSpec("dev", share=0.3, max_share=0.5)]
    central = CapacityClusterModel(config, queues)
    central.run_until(config.horizon)
    capacity = vars(collect(central).metrics)
    rows = ["utilisation", "mean_job_wait", "conflicts", "jobs_completed"]
    before = pd.DataFrame({"shared": vars(run(config.replace(schedulers=4, update_delay=1.0)).metrics),
                           "capacity": capacity}).loc[rows]
    for cache in (tmp_path, tmp_path):  # computed, then read from the cache
        after = pd.DataFrame({"shared": tour.shared_state_metrics(config, client="inprocess", cache=cache),
                              "capacity": capacity}).loc[rows]
        assert after.equals(before) and list(after.dtypes) == list(before.dtypes)
        assert after.to_html() == before.to_html()
        assert [type(v) for v in after["shared"]] == [type(v) for v in before["shared"]]


def counted_points(monkeypatch):
    """The configs the worker ahead runs (sweep._ahead_point, called in this process's thread ahead)."""
    ran, real = [], sweep._ahead_point
    monkeypatch.setattr(sweep, "_ahead_point", lambda s, config, *a: (ran.append(config), real(s, config, *a)))
    return ran


def test_a_sweep_waits_for_the_points_started_ahead_and_reads_the_same_numbers(ahead_gate_open, tmp_path, monkeypatch):
    """start_ahead on a real one-worker LocalCluster; the sweep in this process reads what the worker stored, computes
    what it had not started, and no point is computed twice; its frame equals the frame computed without a cache."""
    ran = counted_points(monkeypatch)
    config = ClusterConfig.ci().replace(horizon=30.0)
    kwargs = tour._stale_sweep(config)
    handle = sweep.start_ahead([kwargs], cache=tmp_path)
    assert handle is not None and handle.points == len(tour.STALE_SWEEP["update_delay"])
    plain = {k: v for k, v in kwargs.items() if k != "estimate"}
    assert handle.wait(120)  # the worker computes every point (nothing takes one from it)
    frame = sweep.run_grid(**plain, client="inprocess", cache=tmp_path, progress=False)
    assert frame.attrs["sweep"]["computed"] == 0 and frame.attrs["sweep"]["cached"] == len(frame) == len(ran)
    expected = sweep.run_grid(**plain, client="inprocess", cache=False, progress=False)
    pd.testing.assert_frame_equal(frame, expected)
    assert not sweep._AHEAD and not sweep._AHEAD_STARTED  # every event set and dropped


def test_a_sweep_computes_the_points_the_worker_has_not_started_and_waits_only_for_the_one_it_runs(
        ahead_gate_open, tmp_path, monkeypatch):
    """The kernel reaches its sweep while the worker ahead is on its first point: it takes the others and computes
    them first (instead of waiting while they queue, or waiting for the worker's point before starting them), then
    reads the worker's point once stored; each point is computed once, and the frame is the one computed without a
    cache. The worker is held at its first point until the sweep here has computed the rest: a sweep that waited first
    would never see it stored (the worker gives up after 20 s) and would compute it too."""
    import threading

    # the worker ahead runs in this process (a thread), held at its first point
    monkeypatch.setattr(sweep.clients, "_open_client", lambda kind, n: ("inprocess", None, False))
    on_first, release, ran, real = threading.Event(), threading.Event(), [], sweep._ahead_point

    def held(s, config, *args):
        ran.append(config)
        if len(ran) == 1:
            on_first.set()
            if not release.wait(20):
                raise TimeoutError("the sweep here did not compute its points before waiting for this one")
        real(s, config, *args)

    monkeypatch.setattr(sweep, "_ahead_point", held)
    here, run_here = [], sweep.execute._run_here

    def computed_here(todo, *args):
        run_here(todo, *args)
        if threading.current_thread() is threading.main_thread():  # not the worker's own (in its thread here)
            here.extend(todo)
            release.set()  # the points taken are done: now the worker may finish its own

    monkeypatch.setattr(sweep.execute, "_run_here", computed_here)
    kwargs = tour._stale_sweep(ClusterConfig.ci().replace(horizon=30.0))
    plain = {k: v for k, v in kwargs.items() if k != "estimate"}
    n = len(tour.STALE_SWEEP["update_delay"])
    handle = sweep.start_ahead([kwargs], cache=tmp_path)
    assert handle is not None and on_first.wait(60)
    with sweep._AHEAD_LOCK:
        assert len(sweep._AHEAD_STARTED) == 1 and len(sweep._AHEAD) == n
    frame = sweep.run_grid(**plain, client="inprocess", cache=tmp_path, progress=False)
    assert handle.wait(60)
    assert len(ran) == 1  # the worker skipped the points the sweep took
    assert sorted(here) == list(range(1, n))  # the sweep computed the others, the worker's first read from the cache
    assert frame.attrs["sweep"]["computed"] == n - 1 and frame.attrs["sweep"]["cached"] == 1
    monkeypatch.setattr(sweep.execute, "_run_here", run_here)
    pd.testing.assert_frame_equal(frame, sweep.run_grid(**plain, client="inprocess", cache=False, progress=False))
    assert not sweep._AHEAD and not sweep._AHEAD_STARTED


def test_start_ahead_refuses_what_run_grid_would_not_take():
    with pytest.raises(ValueError, match="estimate"):
        sweep.start_ahead([{"run": run, "base_config": ClusterConfig.ci(), "grid": {}}])
    with pytest.raises(ValueError, match="client"):
        sweep.start_ahead([{"run": run, "base_config": ClusterConfig.ci(), "grid": {}, "estimate": len,
                            "client": "local"}])


def test_when_the_sweeps_ahead_cannot_run_the_sweep_computes_its_points_and_says_why(ahead_gate_open, tmp_path,
                                                                                     monkeypatch, capsys):
    """A worker that cannot start (here: the LocalCluster refuses) is said, not swallowed; the points it would have
    stored are computed by the sweep that needs them, with the numbers computed without a cache."""

    def refused(*args, **kwargs):
        raise OSError("no ports left")

    monkeypatch.setattr(sweep.clients, "_open_client", refused)
    kwargs = tour._stale_sweep(ClusterConfig.ci().replace(horizon=30.0))
    handle = sweep.start_ahead([kwargs], cache=tmp_path)
    assert handle is not None and handle.wait(60)
    assert "the sweeps ahead stopped (OSError: no ports left)" in capsys.readouterr().out
    assert not sweep._AHEAD
    plain = {k: v for k, v in kwargs.items() if k != "estimate"}
    frame = sweep.run_grid(**plain, client="inprocess", cache=tmp_path, progress=False)
    assert frame.attrs["sweep"]["computed"] == len(frame)
    pd.testing.assert_frame_equal(frame, sweep.run_grid(**plain, client="inprocess", cache=False, progress=False))
