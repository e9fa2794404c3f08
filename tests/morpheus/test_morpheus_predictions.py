"""Labs 02-03's predictions (issue 30): each answer recomputed from runs at ci with the labs' own functions, so an
answer cannot drift from what the code shows (the wider seed ranges are in the predictions' comments)."""

from __future__ import annotations

import pytest

from cluster_sim.morpheus import MorpheusConfig, SLOConfig, alpha_sweep, compare, fig7_example, rescue_case, run
from cluster_sim.morpheus.packing import predictions as P03
from cluster_sim.morpheus.slo import predictions as P02
from cluster_sim.predict import registry


def _share_choice(rate: float) -> str:
    return ("none of them" if rate == 0 else "a few (5-20%)" if 0.05 <= rate <= 0.20 else
            "about half" if 0.35 <= rate <= 0.65 else "most of them" if rate > 0.65 else "between the choices")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_heldout_answer(seed):
    rate = float(run(SLOConfig.ci().replace(seed=seed)).summary().miss_rate["alpha=0.01"])
    assert _share_choice(rate) == P02.HELD_OUT.answer, rate


@pytest.mark.parametrize("seed", [0, 1])
def test_alpha_answer(seed):
    s = alpha_sweep(run(SLOConfig.ci().replace(seed=seed)), (0.01, 0.5)).summary().median_area_ratio
    got = "it shrinks" if s["alpha=0.5"] < s["alpha=0.01"] else "it grows" if s["alpha=0.5"] > s["alpha=0.01"] \
        else "it stays the same"
    assert got == P02.ALPHA.answer


def test_fig7_answer():
    first, last = fig7_example().stage_steps()[2]
    assert P03.FIG7_STAGE3.is_correct(last - first + 1)


def test_dra_answer():
    t = compare(MorpheusConfig.ci(), arms=("morpheus", "morpheus_dra"), seeds=range(12))
    assert t.loc["morpheus_dra", "violations"] < t.loc["morpheus", "violations"]
    assert P03.DRA.answer == "fewer"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rescue_answer(seed):
    case = rescue_case(MorpheusConfig.ci().replace(seed=seed))
    got = {(True, True): "misses without, meets with", (False, True): "meets both ways",
           (True, False): "misses both ways", (False, False): "meets without, misses with"}[
        (case.missed_without, case.met_with)]
    assert got == P03.RESCUE.answer


def test_two_graded_predictions_per_lab():
    keys = registry()
    assert sum(k.startswith("02.") for k in keys) >= 2 and sum(k.startswith("03.") for k in keys) >= 2
