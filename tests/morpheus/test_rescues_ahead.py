"""Issue 33, Lab 03 at ``paper``: the notebook's setup cell starts the rescue sweep's cycles of the seeds other than the
config's on a Dask worker (:func:`~cluster_sim.morpheus.packing.rescue.start_rescues_ahead`) while the kernel runs
the first cells; ``rescue_rate`` then reads them from the sweep cache and takes the config's own seed from the kernel's
memory. The same points (cache keys) and the same frame as computing them all in the kernel."""

import pandas as pd

from cluster_sim import sweep
from cluster_sim.morpheus import MorpheusConfig
from cluster_sim.morpheus.packing import rescue, simulation

SMALL = MorpheusConfig.ci().replace(jobs=4, machines=6, cycle_minutes=120, seed=5)
SEEDS = (5, 6, 7)


def _keys(kwargs, directory):
    return sweep._plan(kwargs["run"], kwargs["base_config"], kwargs["grid"], kwargs.get("seeds"),
                       kwargs.get("metrics"), kwargs.get("cache_key"), directory)[-1]


def test_the_cycles_started_ahead_are_the_rescue_sweeps_other_seeds(tmp_path, monkeypatch):
    """What start_rescues_ahead hands start_ahead, against what rescue_rate hands run_grid at paper: the same cache
    keys, the config's own seed left out."""
    config = MorpheusConfig.paper()
    seeds = (config.seed, config.seed + 1, config.seed + 2)
    started, asked = [], []
    monkeypatch.setattr(rescue, "start_ahead", lambda sweeps, cache=None: started.extend(sweeps))
    monkeypatch.setattr(rescue, "run_grid",
                        lambda *a, **kw: asked.append(dict(zip(("run", "base_config", "grid"), a), **kw)) or 1 / 0)
    rescue.start_rescues_ahead(config, seeds)
    try:
        rescue.rescue_rate(config, seeds)
    except ZeroDivisionError:
        pass
    assert len(started) == 1 and started[0]["estimate"](config) > 0
    ahead = _keys({k: v for k, v in started[0].items() if k != "estimate"}, tmp_path)
    cell = _keys(asked[0], tmp_path)
    assert len(set(ahead)) == 4 and set(ahead) == set(cell[1:3] + cell[4:6])  # the seed varies fastest


def test_nothing_starts_ahead_where_the_cycles_take_seconds(tmp_path, monkeypatch):
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    assert rescue.start_rescues_ahead(MorpheusConfig.ci(), (0, 1, 2), cache=tmp_path) is None
    assert rescue.start_rescues_ahead(MorpheusConfig.default(), (0, 1, 2), cache=tmp_path) is None
    assert rescue.start_rescues_ahead(MorpheusConfig.paper(), (0,), cache=tmp_path) is None  # the kernel's own
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")  # the test suite's notebooks
    assert rescue.start_rescues_ahead(MorpheusConfig.paper(), (0, 1, 2), cache=tmp_path) is None


def test_rescue_rate_reads_the_cycles_computed_ahead_and_simulates_the_rest_once(tmp_path, monkeypatch):
    fresh = rescue.rescue_rate(SMALL, SEEDS, client="inprocess", cache=False)
    # what the worker ahead stores: the sweep of the other seeds, run_grid as start_ahead calls it
    sweep.run_grid(**rescue._rescue_sweep(SMALL, SEEDS[1:]), client="inprocess", cache=tmp_path, progress=False)
    calls = []
    real = simulation.simulate
    monkeypatch.setattr(simulation, "simulate", lambda c, **k: calls.append((c.arm, c.seed)) or real(c, **k))
    simulation._cached.cache_clear()
    simulation.run(SMALL.replace(arm="morpheus"))  # the kernel's cells: the config's static and DRA cycles
    simulation.run(SMALL.replace(arm="morpheus_dra"))
    again = rescue.rescue_rate(SMALL, SEEDS, client="inprocess", cache=tmp_path)
    pd.testing.assert_frame_equal(again, fresh, check_exact=True)
    assert sorted(calls) == [("morpheus", 5), ("morpheus_dra", 5)], "a cycle was simulated twice"


def test_the_notebooks_sweeps_stay_in_process_at_ci_and_default():
    """Lab 03's sweeps route by the cycles' estimate (run_grid estimate=): at ci and default every sweep of the
    notebook (the comparison, a footprint round, the claims' pool) is estimated under the minute, so it runs in the
    process as before; at paper two cycles are over it, so a round goes to the workers at once."""
    from cluster_sim.morpheus.packing.claims import POOL_SIZES
    from cluster_sim.morpheus.packing.config import ARMS
    from cluster_sim.morpheus.packing.simulation import estimated_seconds

    for preset in ("ci", "default"):
        config = MorpheusConfig.from_preset(preset)
        assert len(ARMS) * POOL_SIZES[preset] * estimated_seconds(config) <= sweep.AUTO_PARALLEL_SECONDS
    assert 2 * estimated_seconds(MorpheusConfig.paper()) > sweep.AUTO_PARALLEL_SECONDS
