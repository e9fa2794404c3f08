"""Issue 33 (round 15): ``job_tokens`` reads the shaper's remembered trees of a job's graph in tokens
(``day.shaper_trees``) instead of tree-ifying the graph again; every job's tokens are the rule's as before."""

import math

import pytest

from cluster_sim.capstone.config import CapstoneConfig
from cluster_sim.capstone.day import make_day
from cluster_sim.capstone.plans import job_tokens, resource_plans
from cluster_sim.shaper.shaper import ResourceShaper


def job_tokens_before(config, spec, widths, largest) -> int:
    """The rule as it was: the peak of a fresh shaper on the job's graph."""
    peak = ResourceShaper().peak(spec.graph(widths), {})
    ask = min(max(1, config.tokens // 4), max(1, math.ceil(config.over_allocation * peak)))
    return int(max(ask, largest))


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_job_tokens_are_the_rule_on_a_fresh_shapers_graph(preset):
    config = CapstoneConfig.from_preset(preset).replace(stageopt=True)
    day, plans = make_day(config), resource_plans(config)
    checked = 0
    for spec in day.jobs:
        widths = plans.widths(spec.id)
        largest = max(int(plans.stages[spec.id, s].theta[:, 0].max()) for s in range(len(spec.durations)))
        for w, big in ((widths, largest), (spec.widths, 1), (tuple(2 * x for x in widths), largest)):
            assert job_tokens(config, spec, w, big) == job_tokens_before(config, spec, w, big)
            checked += 1
        assert plans.tokens[spec.id] == job_tokens_before(config, spec, widths, largest)
    assert checked >= 3 * len(day.jobs) > 0


def test_job_tokens_refuse_widths_of_another_graph():
    config = CapstoneConfig.ci().replace(stageopt=True)
    spec = make_day(config).jobs[0]
    with pytest.raises(ValueError, match="need one per stage"):
        job_tokens(config, spec, tuple(spec.widths) + (1,), 1)
