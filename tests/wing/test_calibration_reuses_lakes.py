"""Lab 05's calibration reads the lakes its claims already prepared (issue 24: the calibration cell generated ten of
the pool's lakes a second time): the same table, those lakes generated once."""

import pandas as pd
import pytest

import cluster_sim.wing.calibration as calibration
from cluster_sim.wing.calibration import calibration_table
from cluster_sim.wing.lake import generate_lake
from cluster_sim.wing.scheduling import WingConfig, workload_for
from cluster_sim.wing.scheduling.experiments import remembered_lakes

CONFIG = WingConfig.ci().replace(seed=900)  # seeds no other test prepares
SEEDS = [900, 901, 902]


def test_the_calibration_reads_the_prepared_lakes_and_gives_the_same_table(monkeypatch):
    for seed in SEEDS[:2]:
        workload_for(CONFIG.replace(seed=seed))  # as the claims' runs prepare them
    lakes = remembered_lakes(CONFIG, SEEDS)
    assert [lake.config.seed for lake in lakes] == SEEDS[:2]  # seed 902 was never prepared
    generated = []

    def counted(config):
        generated.append(config.seed)
        return generate_lake(config)

    monkeypatch.setattr(calibration, "generate_lake", counted)
    given = calibration_table(CONFIG.lake_config(), SEEDS, client="inprocess", cache=False, lakes=lakes)
    assert generated == [902]
    fresh = calibration_table(CONFIG.lake_config(), SEEDS, client="inprocess", cache=False)
    assert generated == [902, *SEEDS]
    pd.testing.assert_frame_equal(given, fresh)
    pd.testing.assert_frame_equal(given.attrs["per_seed"], fresh.attrs["per_seed"])


def test_a_remembered_lake_is_a_copy():
    workload_for(CONFIG)
    lake = remembered_lakes(CONFIG, [900])[0]
    lake.jobs["job"] = -1
    assert (remembered_lakes(CONFIG, [900])[0].jobs["job"] >= 0).all()


def test_lakes_of_another_config_or_seed_are_refused():
    cfg = CONFIG.lake_config()
    other = generate_lake(cfg.replace(users_per_org=cfg.users_per_org + 1))
    with pytest.raises(ValueError, match=r"lakes holds the lake of another config \(seed 900\)"):
        calibration_table(cfg, SEEDS, lakes=[other])
    with pytest.raises(ValueError, match=r"lakes holds the lake of another config \(seed 903\)"):
        calibration_table(cfg, SEEDS, lakes=[generate_lake(cfg.replace(seed=903))])
    with pytest.raises(ValueError, match="lakes holds a DataFrame"):
        calibration_table(cfg, SEEDS, lakes=[other.jobs])
    with pytest.raises(ValueError, match="lakes=Lake is not allowed"):
        calibration_table(cfg, SEEDS, lakes=other)


def test_lab05s_calibration_measures_each_lake_where_it_was_prepared_and_gives_the_same_table(monkeypatch):
    """Issue 33 (Lab 05 at paper): the calibration cell generated again, in the kernel or on a fresh worker, the
    lakes the claims had prepared on the kept cluster's workers. ``lake_calibration`` measures each where it was
    prepared (``run_grid(group=lake_of)``) and generates only the lakes no run prepared: the same table."""
    import cluster_sim.wing.scheduling.experiments as experiments
    from cluster_sim.wing.scheduling import lake_calibration

    seeds = [904, 905, 906]
    workload_for(CONFIG.replace(seed=904))  # as the claims' runs prepare it
    generated = []

    def counted(config):
        generated.append(config.seed)
        return generate_lake(config)

    monkeypatch.setattr(experiments, "generate_lake", counted)
    mine = lake_calibration(CONFIG.replace(seed=904), seeds, client="inprocess", cache=False)
    assert generated == [905, 906], "the prepared lake is measured, not generated again"
    fresh = calibration_table(CONFIG.lake_config(), seeds, client="inprocess", cache=False)
    pd.testing.assert_frame_equal(mine, fresh)
    pd.testing.assert_frame_equal(mine.attrs["per_seed"], fresh.attrs["per_seed"])
    with pytest.raises(ValueError, match="measured=.* is not allowed"):
        calibration_table(CONFIG.lake_config(), seeds, measured={907: {}})
    with pytest.raises(ValueError, match="config must be a WingConfig"):
        lake_calibration(CONFIG.lake_config(), seeds)
