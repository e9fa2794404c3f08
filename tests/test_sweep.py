"""run_grid: the same frame in-process and on a 2-worker Dask cluster, resumes from its cache,
reports failed points without losing the others, and refuses a bad grid up front.

One LocalCluster serves the whole module (starting one costs seconds); the xdist group keeps these
tests in one pytest-xdist worker under ``--dist loadgroup``.
"""

from __future__ import annotations

import logging
import multiprocessing
import sys

import cloudpickle
import numpy as np
import pandas as pd
import pytest

from cluster_sim.engine import ClusterConfig, run
from cluster_sim.sweep import SweepError, cache_key, run_grid

pytestmark = pytest.mark.xdist_group("dask")

# the workers cannot import this test module by name: ship its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

BASE = ClusterConfig.ci().replace(horizon=30.0)
GRID = {"schedulers": [1, 2], "update_delay": [0.0, 2.0]}
CALLS = []


def counted_run(config):
    CALLS.append(config)
    return run(config)


def fails_at_three_schedulers(config):
    if config.schedulers == 3:
        raise RuntimeError(f"no room for {config.schedulers} schedulers")
    return run(config)


def headline(result):
    m = result.metrics
    return {"utilisation": m.utilisation, "conflicts": m.conflicts, "mean_job_wait": m.mean_job_wait}


@pytest.fixture(scope="module")
def dask_client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_a_two_worker_cluster_gives_the_frame_in_process_execution_gives(dask_client):
    here = run_grid(run, BASE, GRID, seeds=2, client="inprocess", cache=False, progress=False)
    there = run_grid(run, BASE, GRID, seeds=2, client=dask_client, cache=False, progress=False)
    assert there.attrs["sweep"]["where"] == "client" and here.attrs["sweep"]["where"] == "inprocess"
    pd.testing.assert_frame_equal(here, there)
    # one row per (point, seed), in grid order with the seed fastest, and the engine's metrics in it
    assert len(here) == 8
    assert list(here.columns[:3]) == ["schedulers", "update_delay", "seed"]
    assert here[["schedulers", "update_delay", "seed"]].values.tolist() == [
        [s, d, k] for s in (1, 2) for d in (0.0, 2.0) for k in (0, 1)]
    for name in ("utilisation", "conflicts", "mean_job_wait", "conflict_rate", "machines", "horizon"):
        assert name in here.columns, name
    # each row is what run(config) gives directly
    row = here.iloc[5]
    direct = run(BASE.replace(schedulers=int(row.schedulers), update_delay=row.update_delay, seed=int(row.seed)))
    assert row.utilisation == direct.metrics.utilisation and row.conflicts == direct.metrics.conflicts


def test_a_rerun_computes_nothing_and_a_wider_grid_only_its_new_points(tmp_path):
    CALLS.clear()
    first = run_grid(counted_run, BASE, GRID, client="inprocess", cache=tmp_path, progress=False)
    assert len(CALLS) == 4 and first.attrs["sweep"]["computed"] == 4
    CALLS.clear()
    again = run_grid(counted_run, BASE, GRID, client="inprocess", cache=tmp_path, progress=False)
    assert CALLS == [] and again.attrs["sweep"]["cached"] == 4
    pd.testing.assert_frame_equal(first, again)
    # a wider sweep computes only its new points
    wider = {**GRID, "schedulers": [1, 2, 4]}
    grown = run_grid(counted_run, BASE, wider, client="inprocess", cache=tmp_path, progress=False)
    assert [c.schedulers for c in CALLS] == [4, 4]
    pd.testing.assert_frame_equal(grown.iloc[:4], first)
    # another metrics function is another cache entry
    CALLS.clear()
    run_grid(counted_run, BASE, GRID, metrics=headline, client="inprocess", cache=tmp_path, progress=False)
    assert len(CALLS) == 4
    assert cache_key(BASE, counted_run) != cache_key(BASE, counted_run, headline)
    assert cache_key(BASE, counted_run) != cache_key(BASE.replace(seed=1), counted_run)


def test_cache_false_and_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CACHE", str(tmp_path / "env"))
    CALLS.clear()
    run_grid(counted_run, BASE, {"schedulers": [1]}, client="inprocess", progress=False)
    run_grid(counted_run, BASE, {"schedulers": [1]}, client="inprocess", progress=False)
    assert len(CALLS) == 1 and any((tmp_path / "env").rglob("*.pkl"))
    run_grid(counted_run, BASE, {"schedulers": [1]}, client="inprocess", cache=False, progress=False)
    assert len(CALLS) == 2


@pytest.mark.parametrize("where", ["inprocess", "cluster"])
def test_a_failing_point_is_reported_with_its_config_and_the_others_are_kept(where, tmp_path, dask_client):
    client = dask_client if where == "cluster" else "inprocess"
    grid = {"schedulers": [1, 3, 2]}
    with pytest.raises(SweepError) as info:
        run_grid(fails_at_three_schedulers, BASE, grid, seeds=2, metrics=headline, client=client,
                 cache=tmp_path, progress=False)
    err = info.value
    message = str(err)
    assert "2 of 6 runs" in message
    assert "schedulers=3, seed=0: RuntimeError: no room for 3 schedulers" in message
    assert "schedulers=3, seed=1" in message
    frame = err.frame
    assert len(frame) == 6 and frame["error"].notna().sum() == 2
    ok = frame[frame["error"].isna()]
    assert ok["utilisation"].notna().all() and frame.loc[frame.schedulers == 3, "utilisation"].isna().all()
    assert list(err.failed.schedulers) == [3, 3]
    # the points that finished are cached: recording instead of raising recomputes only the failures
    again = run_grid(fails_at_three_schedulers, BASE, grid, seeds=2, metrics=headline, client="inprocess",
                     cache=tmp_path, on_error="record", progress=False)
    assert again.attrs["sweep"]["cached"] == 4 and again.attrs["sweep"]["computed"] == 2
    pd.testing.assert_frame_equal(again, frame)


@pytest.mark.parametrize("grid, words", [
    ({"schedulerz": [1, 2]}, ["'schedulerz'", "not a ClusterConfig field", "schedulers"]),
    ({"update_delay": [1.0, -5.0]}, ["grid point 1", "update_delay=-5.0", "out of range", "0 <= update_delay"]),
    ({"placement": ["first_fit", "nearest"]}, ["grid point 1", "'nearest'", "choose one of"]),
    ({"schedulers": 2}, ["grid['schedulers']=2", "not a list"]),
    ({"schedulers": []}, ["grid['schedulers'] is empty"]),
    ([{"schedulers": 1}, {"seed": 3}], ["grid point 1", "sets seed, and seeds= sets it too"]),
])
def test_a_bad_grid_is_refused_before_anything_runs(grid, words):
    CALLS.clear()
    with pytest.raises(ValueError) as info:
        run_grid(counted_run, BASE, grid, seeds=2, client="inprocess", cache=False, progress=False)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    assert CALLS == []


@pytest.mark.parametrize("kwargs, words", [
    (dict(seeds=0), ["seeds=0", ">= 1"]),
    (dict(seeds="3"), ["seeds='3'"]),
    (dict(client="laptop"), ["client='laptop'", "inprocess"]),
    (dict(on_error="ignore"), ["on_error='ignore'", "record"]),
    (dict(workers=0), ["workers=0"]),
    (dict(cache=3), ["cache=3"]),
])
def test_bad_arguments_are_refused_with_their_name(kwargs, words):
    with pytest.raises(ValueError) as info:
        run_grid(run, BASE, {"schedulers": [1]}, **{"progress": False, **kwargs})
    for w in words:
        assert w in str(info.value)


def test_metrics_from_a_dataclass_result_and_its_properties():
    from cluster_sim.shaper import ShaperConfig
    from cluster_sim.shaper.experiments import run_job

    df = run_grid(run_job, ShaperConfig.ci(), {"mode": ["conservative", "aggressive"]}, client="inprocess",
                  cache=False, progress=False)
    for mode, row in zip(("conservative", "aggressive"), df.itertuples()):
        r = run_job(ShaperConfig.ci().replace(mode=mode))
        assert (row.savings, row.slowdown, row.released) == (r.savings, r.slowdown, r.released)
    assert np.isfinite(df["savings"]).all()


def test_auto_runs_a_short_sweep_here_and_the_environment_names_a_cluster(dask_client, monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    here = run_grid(run, BASE, GRID, cache=False, progress=False)
    assert here.attrs["sweep"]["where"] == "inprocess"
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_client.scheduler.address)
    there = run_grid(run, BASE, GRID, cache=False, progress=False)
    assert there.attrs["sweep"]["where"] == dask_client.scheduler.address
    pd.testing.assert_frame_equal(here, there)


def test_an_interrupted_sweep_leaves_no_workers_and_resumes_from_its_cache(monkeypatch, tmp_path):
    import distributed

    import cluster_sim.sweep as sweep

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr(sweep, "AUTO_PARALLEL_SECONDS", 0.0)  # every sweep is "long": auto starts a cluster
    monkeypatch.setattr(sweep, "_machine_workers", lambda: 2)
    before = {p.pid for p in multiprocessing.active_children()}
    real = distributed.as_completed

    def interrupted(futures, *args, **kwargs):  # Ctrl-C once the cluster has returned one point
        for future in real(futures, *args, **kwargs):
            yield future
            raise KeyboardInterrupt

    monkeypatch.setattr(distributed, "as_completed", interrupted)
    grid = {"schedulers": [1, 2, 3, 4]}
    with pytest.raises(KeyboardInterrupt):
        run_grid(counted_run, BASE, grid, workers=1, cache=tmp_path, progress=False)
    stray = {p.pid for p in multiprocessing.active_children()} - before
    assert stray == set(), f"worker processes left running: {stray}"
    # the probe ran here and one point came back from the cluster: both are kept
    CALLS.clear()
    resumed = run_grid(counted_run, BASE, grid, client="inprocess", cache=tmp_path, progress=False)
    assert resumed.attrs["sweep"]["cached"] == 2 and len(CALLS) == 2
    fresh = run_grid(run, BASE, grid, client="inprocess", cache=False, progress=False)
    pd.testing.assert_frame_equal(resumed, fresh)


def cheap(config):
    return {"x": float(config.schedulers)}


def test_progress_bars_count_every_point_once_and_short_sweeps_draw_none(capsys, monkeypatch):
    import cluster_sim.sweep as sweep

    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    run_grid(cheap, BASE, GRID, client="inprocess", cache=False, progress=True)
    assert "4/4" in capsys.readouterr().err
    run_grid(cheap, BASE, GRID, client="inprocess", cache=False)  # progress=None: a short sweep, no bar
    assert "sweep" not in capsys.readouterr().err
    monkeypatch.setattr(sweep, "PROGRESS_AFTER_SECONDS", 0.0)  # every sweep "long": the bar opens mid-way
    run_grid(cheap, BASE, GRID, client="inprocess", cache=False)
    err = capsys.readouterr().err
    assert "4/4" in err and "5/4" not in err
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "loud")
    with pytest.raises(ValueError, match="CLUSTER_SIM_PROGRESS='loud' is not allowed: choose one of 'auto', 'text', 'off'"):
        run_grid(cheap, BASE, GRID, client="inprocess", cache=False)
