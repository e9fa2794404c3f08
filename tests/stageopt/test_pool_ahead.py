"""Issue 33, Labs 06-07 at ``paper``: the notebooks' setup cells start the claims pool's seeds that need nothing from
the kernel on a Dask worker (:func:`~cluster_sim.stageopt.claims.start_pool_ahead`) while the kernel runs the
notebook's own experiments; the claims cell runs the pool's second seed in the kernel meanwhile, then reads the
worker's from the sweep cache. The same points (cache keys), the same frame and the same claims table as computing
them all in the kernel."""

import pandas as pd
import pytest

from cluster_sim import sweep
from cluster_sim.stageopt import claims as stageopt_claims
from cluster_sim.stageopt.claims import claims_table, start_pool_ahead, study_seconds
from cluster_sim.stageopt.config import PlacementConfig, ResourcePlanConfig
from cluster_sim.stageopt.experiments import run_baselines, run_model_accuracy, run_raa_choices, run_resource_plans

SMALL07 = ResourcePlanConfig.ci().replace(instances=60, machines=25, stages=2, study_stages=2, moo_stages=1,
                                          train_stages=60, max_iter=40, ws_samples=200, evo_generations=5)
EXPERIMENTS07 = (run_resource_plans, run_raa_choices, run_baselines, run_model_accuracy)
TIMED = ("solve ms",)  # wall-clock metrics: no two runs time alike


def _keys(kwargs, directory):
    return sweep._plan(kwargs["run"], kwargs["base_config"], kwargs["grid"], kwargs.get("seeds"),
                       kwargs.get("metrics"), kwargs.get("cache_key"), directory)[-1]


def _untimed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in frame.columns if any(t in c for t in TIMED)])


def _same_table(a: pd.DataFrame, b: pd.DataFrame):
    """Equal but for wall-clock solve times."""
    timed = [c for c in a.index if "solve" in a.at[c, "claim"] or "slower" in a.at[c, "claim"]]
    pd.testing.assert_frame_equal(a.drop(index=timed), b.drop(index=timed))


@pytest.mark.parametrize("config", [PlacementConfig.paper(), ResourcePlanConfig.paper()], ids=["06", "07"])
def test_the_seeds_started_ahead_are_the_claims_pools_after_its_first_two(config, tmp_path, monkeypatch):
    """What start_pool_ahead hands start_ahead, against what claims_table hands run_grid at paper with the notebook's
    results: the same cache keys, the config's own seed and the next left to the kernel."""
    started, asked = [], []
    monkeypatch.setattr(stageopt_claims, "start_ahead", lambda sweeps, cache=None: started.extend(sweeps))
    monkeypatch.setattr(stageopt_claims, "run_grid",
                        lambda *a, **kw: asked.append(dict(zip(("run", "base_config", "grid"), a), **kw)) or 1 / 0)
    start_pool_ahead(config)
    with pytest.raises(ZeroDivisionError):
        claims_table(config)
    assert len(started) == 1 and started[0]["estimate"](config) > 60
    ahead, cell = _keys(started[0], tmp_path), _keys(asked[0], tmp_path)
    assert len(cell) == 5 and len(set(ahead)) == 3 and ahead == cell[2:]


def test_nothing_starts_ahead_where_a_seed_takes_seconds(tmp_path, monkeypatch):
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    for cls in (PlacementConfig, ResourcePlanConfig):
        for preset in ("ci", "default"):
            assert start_pool_ahead(getattr(cls, preset)(), cache=tmp_path) is None
        assert start_pool_ahead(cls.paper(), pool_size=2, cache=tmp_path) is None  # the kernel's own two seeds
        assert start_pool_ahead(cls.paper(), cache=False) is None  # no cache to hand them over
    monkeypatch.setattr(sweep.clients, "_machine_workers", lambda: 1)
    assert start_pool_ahead(ResourcePlanConfig.paper(), cache=tmp_path) is None
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")  # the test suite's notebooks
    monkeypatch.setattr(sweep.clients, "_machine_workers", lambda: 2)
    assert start_pool_ahead(ResourcePlanConfig.paper(), cache=tmp_path) is None
    with pytest.raises(ValueError, match="config=ClusterConfig is not a Lab 06 or Lab 07 config"):
        from cluster_sim.engine import ClusterConfig
        start_pool_ahead(ClusterConfig.ci(), cache=tmp_path)


def test_the_study_estimate_is_over_a_minute_at_paper_only():
    for cls in (PlacementConfig, ResourcePlanConfig):
        assert study_seconds(cls.ci()) < 15 and study_seconds(cls.default()) < 15
        assert study_seconds(cls.paper()) > 60


def test_the_claims_run_the_kernels_seed_while_the_worker_computes_the_rest(tmp_path, ahead_gate_open, monkeypatch):
    """start_ahead on a real one-worker LocalCluster: claims_table runs the pool's second seed here, first, then reads
    the worker's seeds from the cache (computing only those the worker had not started: each seed once); its table
    and the pool's frame equal those computed here without a cache."""
    ahead, real_point = [], sweep._ahead_point  # the seeds the worker runs (its thread is in this process)
    monkeypatch.setattr(sweep, "_ahead_point", lambda s, c, *a: (ahead.append(c.seed), real_point(s, c, *a)))
    handle = start_pool_ahead(SMALL07, pool_size=4, cache=tmp_path)
    assert handle is not None and handle.points == 2
    made = tuple(fn(SMALL07) for fn in EXPERIMENTS07)  # the notebook's cells, in the kernel meanwhile
    calls, real = [], sweep.run_grid

    def recorded(*args, **kwargs):
        frame = real(*args, **kwargs)
        calls.append((list(kwargs["seeds"]), frame.attrs["sweep"]))
        return frame

    monkeypatch.setattr(stageopt_claims, "run_grid", recorded)
    table = claims_table(SMALL07, pool_size=4, client="inprocess", cache=tmp_path, results=made)
    assert handle.wait(120) and not sweep._AHEAD
    (first, here), (whole, read) = calls
    assert first == [SMALL07.seed + 1] and here["computed"] == 1  # the kernel's seed, run while the worker ran
    assert whole == [SMALL07.seed + k for k in (1, 2, 3)] and set(ahead) <= {SMALL07.seed + 2, SMALL07.seed + 3}
    assert read["cached"] == 1 + len(ahead) and read["computed"] == 2 - len(ahead)  # each seed computed once
    monkeypatch.setattr(stageopt_claims, "run_grid", real)
    # the pool computed here, none ahead: its frame, and the table claims_table makes of it (read from that cache)
    plain = tmp_path / "plain"
    expected = real(stageopt_claims.resource_plan_study, SMALL07, {}, seeds=whole, client="inprocess", cache=plain,
                    progress=False)
    _same_table(table, claims_table(SMALL07, pool_size=4, client="inprocess", cache=plain, results=made))
    frame = real(stageopt_claims.resource_plan_study, SMALL07, {}, seeds=whole, client="inprocess", cache=tmp_path,
                 progress=False)
    assert frame.attrs["sweep"]["cached"] == 3
    pd.testing.assert_frame_equal(_untimed(frame), _untimed(expected))


def test_when_the_seeds_ahead_cannot_run_the_claims_compute_them_and_say_why(tmp_path, ahead_gate_open, monkeypatch,
                                                                               capsys):
    """A worker that cannot start (here: the LocalCluster refuses) is said, not swallowed; claims_table computes the
    seeds it would have stored, with the numbers computed without a cache."""
    def refused(*args, **kwargs):
        raise OSError("no ports left")

    monkeypatch.setattr(sweep.clients, "_open_client", refused)
    handle = start_pool_ahead(SMALL07, pool_size=3, cache=tmp_path)
    assert handle is not None and handle.wait(60)
    assert "the sweeps ahead stopped (OSError: no ports left)" in capsys.readouterr().out
    assert not sweep._AHEAD
    made = tuple(fn(SMALL07) for fn in EXPERIMENTS07)
    table = claims_table(SMALL07, pool_size=3, client="inprocess", cache=tmp_path, results=made)
    _same_table(table, claims_table(SMALL07, pool_size=3, client="inprocess", cache=False, results=made))
