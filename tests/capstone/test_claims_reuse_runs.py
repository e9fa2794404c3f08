"""Lab 10's claims read the day the notebook ran as its example (issue 24: the example, every mechanism on at the
notebook's seed, is one of the ablation's runs, and was run twice): the same frame, that day run once."""

import pandas as pd
import pytest

from cluster_sim.capstone import SWITCHES, CapstoneConfig, run
from cluster_sim.capstone import claims as capstone_claims
from cluster_sim.capstone import experiments as capstone_experiments
from cluster_sim.capstone.claims import claims_frame, claims_table
from cluster_sim.memo import remembered

CONFIG = CapstoneConfig.ci()
EVERY = {s: True for s in SWITCHES}


def test_lab10s_claims_read_the_notebooks_example_and_give_the_same_frame(monkeypatch):
    example = run(CONFIG.replace(**EVERY))
    ran = []
    # The 27 days both frames share are run once, for the first, and the second reads them (each a deep copy):
    # what the two frames compare is how the example's row is placed among the others, which these days do not
    # decide (they ran twice before, 9 of this test's 19 s; determinism is tested in test_capstone.py). The day the
    # example stands for is not among them: the second frame runs it itself, so the example is still compared with
    # a run of its own config.
    day = remembered(maxsize=None)(run)

    def counted(config):
        ran.append((tuple(getattr(config, s) for s in SWITCHES), config.raa, config.seed))
        return day(config)

    monkeypatch.setattr(capstone_claims, "run", counted)
    monkeypatch.setattr(capstone_experiments, "run", day)  # the second frame's days, through ablation
    given = claims_frame(CONFIG, pool_size=2, client="inprocess", cache=False, results=(example,))
    assert len(ran) == 27 and ((True,) * len(SWITCHES), CONFIG.raa, CONFIG.seed) not in ran  # 14 arms x 2 seeds - 1
    fresh = claims_frame(CONFIG, pool_size=2, client="inprocess", cache=False)
    assert len(ran) == 27 and day.cache_info().hits == 27 and day.cache_info().misses == 28  # only the example's
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
