"""Issue 26, item 4: users provision as Fig. 2a (75% over-provisioned at the peak, 20% of those 10x or more).
Before, Lab 02's generator applied the user's factor to the template's nominal widest stage, while Fig. 2a
divides by the peak the runs use (noisier and higher), so its shares came out at 64-69% and 13-18%; Lab 03's
templates had no user at 10x or more."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cluster_sim.morpheus import MorpheusConfig, SLOConfig, generate_history
from cluster_sim.morpheus.slo.experiments import PERIODIC_KINDS
from cluster_sim.morpheus.slo.fleet import user_ratios
from cluster_sim.morpheus.packing.periodic import make_templates, unconstrained_skyline
from cluster_sim.morpheus.packing.simulation import workload


def _shares(ratios):
    r = np.asarray(ratios, float)
    over = r[r > 1]
    return float((r > 1).mean()), float((over >= 10).mean())


def test_lab02_generator_matches_fig2a_over_10_seeds():
    # the paper preset's fleet (about 105 periodic templates a seed): per job, the median over its runs of
    # provisioned / peak used, pooled over seeds 0-9. Five days of history, not the preset's 30: the shares are the
    # templates' (1,050 of them either way), and 30 days drew six times the runs (14.5 s of CPU against 3.0 s) for
    # the same test: over-provisioned 76.0 % and 10x 19.9 % at 30 days, 74.9 % and 21.4 % at 5; the generator before
    # the fix (the factor on the nominal widest stage) fails on the first at both, 68.9 % and 69.6 %.
    cfg = SLOConfig.paper()
    per_job = pd.concat([user_ratios(generate_history(np.random.default_rng(s), cfg.history_params(days=5.0)),
                                     kinds=PERIODIC_KINDS).groupby("template").peak_ratio.median() for s in range(10)])
    over, tenfold = _shares(per_job)
    assert abs(over - 0.75) <= 0.03, f"over-provisioned {over:.3f}, the paper's 75%"
    assert abs(tenfold - 0.20) <= 0.03, f"10x or more {tenfold:.3f} of the over-provisioned, the paper's 20%"


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_lab03_templates_match_fig2a_over_10_seeds(preset):
    ratios = []
    for s in range(10):
        w = workload(getattr(MorpheusConfig, preset)().replace(seed=s))
        ratios += [t.provisioned / np.median([unconstrained_skyline(r).max() for r in w.history[t.name]])
                   for t in w.templates]
    over, tenfold = _shares(ratios)
    assert abs(over - 0.75) <= 0.03 and abs(tenfold - 0.20) <= 0.03, (over, tenfold)


def test_tenfold_share_is_checked():
    with pytest.raises(ValueError, match="tenfold_share=1.5 is out of range"):
        make_templates(np.random.default_rng(0), 2, periods=[60], weights=[1.0], tenfold_share=1.5)
