"""Lab 10's claims read the day the notebook ran as its example (issue 24: the example, every mechanism on at the
notebook's seed, is one of the ablation's runs, and was run twice): the same frame, that day run once."""

import pandas as pd
import pytest

from cluster_sim.capstone import SWITCHES, CapstoneConfig, run
from cluster_sim.capstone import claims as capstone_claims
from cluster_sim.capstone.claims import claims_frame, claims_table

CONFIG = CapstoneConfig.ci()
EVERY = {s: True for s in SWITCHES}


def test_lab10s_claims_read_the_notebooks_example_and_give_the_same_frame(monkeypatch):
    example = run(CONFIG.replace(**EVERY))
    ran = []

    def counted(config):
        ran.append((tuple(getattr(config, s) for s in SWITCHES), config.raa, config.seed))
        return run(config)

    monkeypatch.setattr(capstone_claims, "run", counted)
    given = claims_frame(CONFIG, pool_size=2, client="inprocess", cache=False, results=(example,))
    assert len(ran) == 27 and ((True,) * len(SWITCHES), CONFIG.raa, CONFIG.seed) not in ran  # 14 arms x 2 seeds - 1
    fresh = claims_frame(CONFIG, pool_size=2, client="inprocess", cache=False)
    pd.testing.assert_frame_equal(given, fresh)
    pd.testing.assert_frame_equal(claims_table(CONFIG, frame=given), claims_table(CONFIG, frame=fresh))


def test_runs_of_another_config_are_refused():
    other = run(CONFIG.replace(**EVERY, seed=CONFIG.seed + 5))  # a seed outside the pool of 2
    with pytest.raises(ValueError, match=r"results holds the run of a config that is none of the claims' arms at "
                                         r"seeds 0-1 \(seed 5\)"):
        claims_frame(CONFIG, pool_size=2, results=(other,))
    with pytest.raises(ValueError, match="results holds the run of a config"):
        claims_frame(CONFIG, pool_size=2, results=(run(CONFIG.replace(**EVERY, load=CONFIG.load * 0.9)),))
    with pytest.raises(ValueError, match="results holds a DataFrame"):
        claims_frame(CONFIG, pool_size=2, results=(pd.DataFrame(),))
    with pytest.raises(ValueError, match="results=CapstoneResult is not allowed"):
        claims_frame(CONFIG, pool_size=2, results=other)
