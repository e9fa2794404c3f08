"""Issue 33, Lab 10 at ``paper``: the setup cell starts the ablation's days that read no resource plans on a Dask
worker (:func:`~cluster_sim.capstone.claims.start_claims_ahead`) while the kernel makes the day and runs its example;
``claims_frame`` then reads them from the sweep cache. The same points (cache keys) and the same frame."""

import pandas as pd

from cluster_sim import sweep
from cluster_sim.capstone import SWITCHES, CapstoneConfig, run
from cluster_sim.capstone import claims as capstone_claims
from cluster_sim.capstone.experiments import plans_of

EVERY = {s: True for s in SWITCHES}


def _keys(kwargs, directory):
    return sweep._plan(kwargs["run"], kwargs["base_config"], kwargs["grid"], kwargs.get("seeds"),
                       kwargs.get("metrics"), kwargs.get("cache_key"), directory)[-1]


def test_the_days_started_ahead_are_the_claims_days_that_read_no_plans(tmp_path, monkeypatch):
    """What start_claims_ahead hands start_ahead, against what claims_frame hands run_grid at paper with the
    notebook's example given: the same cache keys, every day but the plan-reading arms' (and the example's)."""
    config = CapstoneConfig.paper()
    started, asked = [], []
    monkeypatch.setattr(capstone_claims, "start_ahead", lambda sweeps, cache=None: started.extend(sweeps))
    monkeypatch.setattr(capstone_claims, "run_grid",
                        lambda *a, **kw: asked.append(dict(zip(("run", "base_config", "grid"), a), **kw)) or 1 / 0)
    capstone_claims.start_claims_ahead(config)
    example = capstone_claims.CapstoneResult.__new__(capstone_claims.CapstoneResult)  # only its config is read
    example.config, example.metrics = config.replace(**EVERY), {}
    try:
        capstone_claims.claims_frame(config, results=(example,))
    except ZeroDivisionError:
        pass
    assert len(started) == 1 and started[0]["estimate"](config) > 0
    ahead = _keys({k: v for k, v in started[0].items() if k != "estimate"}, tmp_path)
    cell = asked[0]
    cell_keys = _keys(cell, tmp_path)
    configs = sweep._plan(cell["run"], cell["base_config"], cell["grid"], None, cell["metrics"], None, tmp_path)[3]
    single = [k for k, c in zip(cell_keys, configs) if plans_of(c)[1] != "plans"]
    arms, seeds = len(capstone_claims.claim_arms()), capstone_claims.POOL_SIZES["paper"]
    assert len(cell_keys) == arms * seeds - 1  # the example is read, not run
    # every day of the arms without plans but the sweep's first (the cheap day it times here), the example's seed
    # included (the example is an arm with plans)
    assert configs[0] == config.replace(**{s: False for s in SWITCHES}) and plans_of(configs[0])[1] != "plans"
    assert len(ahead) == len(set(ahead)) == len(single) - 1 == arms * seeds - 6 * seeds - 1
    assert set(ahead) == set(single[1:])


def test_nothing_starts_ahead_where_the_days_take_seconds(tmp_path, monkeypatch):
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    assert capstone_claims.start_claims_ahead(CapstoneConfig.ci(), cache=tmp_path) is None
    assert capstone_claims.start_claims_ahead(CapstoneConfig.default(), cache=tmp_path) is None
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")  # the test suite's notebooks
    assert capstone_claims.start_claims_ahead(CapstoneConfig.paper(), cache=tmp_path) is None


def test_claims_frame_reads_the_days_stored_ahead_and_runs_each_day_once(tmp_path):
    config = CapstoneConfig.ci()
    example = run(config.replace(**EVERY))
    fresh = capstone_claims.claims_frame(config, pool_size=2, client="inprocess", cache=False, results=(example,))
    # what the worker ahead stores: start_claims_ahead's sweep (at ci here), run_grid as start_ahead calls it
    sweep.run_grid(**capstone_claims._days_without_plans(config, pool_size=2), client="inprocess", cache=tmp_path,
                   progress=False)
    stored = len(list(tmp_path.rglob("*.json")))
    again = capstone_claims.claims_frame(config, pool_size=2, client="inprocess", cache=tmp_path, results=(example,))
    pd.testing.assert_frame_equal(again, fresh, check_exact=True)
    base = config.replace(**{s: False for s in SWITCHES})
    with_plans = sum(plans_of(base.replace(**arm))[1] == "plans" for arm in capstone_claims.claim_arms())
    assert with_plans >= 1 and stored == 2 * (len(capstone_claims.claim_arms()) - with_plans) - 1  # stored ahead
    # claims_frame computed (and stored) the plan arms' days and the first day only, the example's read from the
    # notebook's run
    assert len(list(tmp_path.rglob("*.json"))) == stored + 2 * with_plans - 1 + 1
