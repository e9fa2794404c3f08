"""Fig. 12's R_recent, read two ways (step 3 of issue 26): ours counts the job's reservation alone, so a
reservation ending at minute 9 is stretched at minutes 10 and 11 and then refused ("no recent skyline");
the other reading counts earlier grants, and the job keeps being stretched."""

from __future__ import annotations

import pytest

from cluster_sim.morpheus import MorpheusConfig
from cluster_sim.morpheus.packing.jobs import PeriodicJob
from cluster_sim.morpheus.packing.plan import ReservationPlan
from cluster_sim.morpheus.packing.reprovision import ReprovisionRule, reprovision


def _story(rule: ReprovisionRule) -> list[str]:
    plan = ReservationPlan(capacity=100, horizon=60)
    job = plan.place(PeriodicJob(period=60, a=0, d=10, demands=[10] * 10))  # reserved at minutes 0..9
    granted: dict[int, int] = {}
    reasons = []
    for minute in (10, 11, 12, 13):
        now = minute * 60.0
        past = [granted.get(int(s), 0) for s in rule.recent_steps(now, 60.0)]
        grant, gid = reprovision(plan, job.job_id, now, demand=10, rule=rule, granted_recent=past)
        reasons.append(grant.reason)
        if gid is not None:
            for s in rule.hold_steps(now, 60.0):
                granted[int(s)] = granted.get(int(s), 0) + grant.containers
            plan.remove_grant(gid)  # T = 60 s: over before the next minute's evaluation
    return reasons


def test_ours_refuses_once_the_look_back_holds_no_reservation():
    assert _story(ReprovisionRule()) == ["granted", "granted", "no recent skyline to scale", "no recent skyline to scale"]


def test_the_other_reading_keeps_stretching_from_its_own_grants():
    assert _story(ReprovisionRule(recent_counts_grants=True)) == ["granted"] * 4


def test_the_reading_is_a_config_field_of_the_simulation():
    from cluster_sim.morpheus.packing.simulation import build_model

    c = MorpheusConfig.ci().replace(arm="morpheus_dra")
    assert c.recent_counts_grants is False  # ours is the default
    model, *_ = build_model(c.replace(recent_counts_grants=True))
    assert model.reprovisioner.rule.recent_counts_grants is True
    with pytest.raises(ValueError, match="recent_counts_grants"):
        c.replace(recent_counts_grants="yes")
