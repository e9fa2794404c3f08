"""Dynamic reprovisioning (§7): the rule's bounds and its use of the plan."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cluster_sim.morpheus.packing.jobs import PeriodicJob
from cluster_sim.morpheus.packing.plan import ReservationPlan
from cluster_sim.morpheus.packing.reprovision import Grant, ReprovisionRule, reprovision


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 500), st.integers(0, 300), st.lists(st.integers(0, 200), min_size=1, max_size=4),
       st.integers(0, 400), st.floats(0.5, 4.0), st.booleans())
def test_grant_never_exceeds_ask_cap_or_room(demand, reserved, recent, room, rho, partial):
    g = ReprovisionRule(rho=rho, partial=partial).decide(demand, reserved, recent, room)
    assert 0 <= g.containers
    assert g.containers <= max(demand - reserved, 0)          # never more than asked
    assert g.containers <= rho * max(recent) + 1e-9           # never more than rho * max(recent)
    assert g.containers <= room                               # never more than the plan holds
    want = min(demand - reserved, int(rho * max(recent) + 1e-9))
    if demand > reserved and max(recent) > 0 and room >= want:
        assert g.containers == want  # and grants it all when it fits


def test_rule_reasons():
    r = ReprovisionRule()
    assert r.decide(10, 10, [10], 100) == Grant(0, 0, 20, 100, "demand within the reservation")
    assert r.decide(50, 10, [5, 10], 100).reason == "capped at rho * max(recent)"
    assert r.decide(15, 10, [10], 100).reason == "granted"
    assert r.decide(30, 10, [10], 15).containers == 0
    partial = ReprovisionRule(partial=True).decide(30, 10, [10], 15)
    assert partial == Grant(15, 20, 20, 15, "partial: what the plan holds")
    assert r.decide(30, 0, [0, 0], 100).reason == "no recent skyline to scale"


def test_hold_and_recent_windows_in_steps():
    r = ReprovisionRule()
    assert r.hold_steps(300.0, 60.0).tolist() == [5]
    assert r.hold_steps(330.0, 60.0).tolist() == [5, 6]           # 30 s into step 5: T reaches step 6
    assert r.recent_steps(300.0, 60.0).tolist() == [3, 4, 5]


def test_reprovision_updates_the_plan_only_with_room():
    plan = ReservationPlan(capacity=50, horizon=60)
    job = plan.place(PeriodicJob(period=60, a=0, d=10, demands=[20] * 10))
    other = plan.place(PeriodicJob(period=60, a=5, d=6, demands=(25,)))
    assert other is not None
    room = plan.room([5])
    grant, gid = reprovision(plan, job.job_id, now=300.0, demand=60)
    assert grant.asked == 40 and grant.cap == 40 and grant.room == room == 5
    assert grant.containers == 0 and gid is None                 # all-or-nothing: 40 do not fit
    grant, gid = reprovision(plan, job.job_id, now=300.0, demand=60, rule=ReprovisionRule(partial=True))
    assert grant.containers == 5 and plan.containers(job.job_id)[5] == 25
    plan.check()
    plan.remove_grant(gid)
    assert plan.containers(job.job_id)[5] == 20
    plan.check()


def test_grants_do_not_compound():
    plan = ReservationPlan(capacity=200, horizon=60)
    job = plan.place(PeriodicJob(period=60, a=0, d=10, demands=[20] * 10))
    g1, _ = reprovision(plan, job.job_id, now=300.0, demand=100)
    g2, _ = reprovision(plan, job.job_id, now=300.0, demand=100)   # the first grant still runs
    assert g1.containers == 40 and g2.cap == 40 and g2.asked == 40 and g2.containers == 40
    assert plan.containers(job.job_id)[5] == 100


def test_add_grant_refuses_what_does_not_fit():
    plan = ReservationPlan(capacity=10, horizon=10)
    plan.place(PeriodicJob(10, 0, 10, [8] * 10))
    with pytest.raises(ValueError, match="containers=3 does not fit: the plan has room for 2"):
        plan.add_grant(0, [3], 3)


@pytest.mark.parametrize("kw, msg", [
    (dict(rho=0), "rho=0 is out of range"),
    (dict(hold_seconds=float("nan")), "hold_seconds=nan is out of range"),
    (dict(recent_seconds=-1), "recent_seconds=-1 is out of range"),
    (dict(partial="yes"), "partial='yes' is not allowed"),
])
def test_rule_errors_name_the_field(kw, msg):
    with pytest.raises(ValueError, match=msg):
        ReprovisionRule(**kw)


def test_decide_errors_name_the_argument():
    r = ReprovisionRule()
    with pytest.raises(ValueError, match="demand=-1 is out of range"):
        r.decide(-1, 0, [1], 1)
    with pytest.raises(ValueError, match="recent=.*not allowed"):
        r.decide(1, 0, [np.nan], 1)
    with pytest.raises(ValueError, match="recent=.*not allowed"):
        r.decide(1, 0, [], 1)
    with pytest.raises(KeyError, match="job_id=7"):
        reprovision(ReservationPlan(10, 10), 7, 0.0, 5)


def test_a_skyline_the_caller_keeps_gives_the_same_grants_and_plan():
    """The Reprovisioner passes each job's skyline once built (issue 33); the grants, the plan's load and the
    reserved-now reading (the skyline plus the job's live grants) are those of reprovision building it."""
    plans = []
    for keep in (False, True):
        plan = ReservationPlan(capacity=120, horizon=60)
        job = plan.place(PeriodicJob(period=30, a=0, d=12, demands=[20] * 6 + [35] * 4))
        plan.place(PeriodicJob(period=60, a=3, d=9, demands=(30, 30)))
        sky = plan.allocations[job.job_id].containers(60) if keep else None
        grants = [reprovision(plan, job.job_id, now=t, demand=d, skyline=sky)[0]
                  for t, d in ((60.0, 50), (90.0, 90), (150.0, 200), (330.0, 40), (1900.0, 80))]
        plans.append((grants, plan.load.copy(), dict(plan.grants).keys()))
    assert plans[0][0] == plans[1][0] and np.array_equal(plans[0][1], plans[1][1])
    assert any(g.containers for g in plans[0][0])
    with pytest.raises(ValueError, match=r"skyline has shape \(3,\), need one value per plan step \(60,\)"):
        reprovision(_one_job_plan(), 0, 0.0, 5, skyline=[1, 2, 3])


def _one_job_plan():
    plan = ReservationPlan(capacity=10, horizon=60)
    plan.place(PeriodicJob(60, 0, 10, [2] * 5))
    return plan


@pytest.mark.parametrize("kw, msg", [
    (dict(demand=-1), "demand=-1 is out of range"),
    (dict(now=-60.0), "now=-60.0 is out of range"),
    (dict(reserved_now=float("nan")), "reserved_now=nan is out of range"),
    (dict(own_recent=[1.0, 2.0]), "own_recent has 2 values, need one per recent step"),
    (dict(own_recent=[1.0, np.nan, 1.0]), "recent=.*not allowed: need containers >= 0"),
    (dict(own_recent=[1.0, -1.0, 1.0]), "recent=.*not allowed: need containers >= 0"),
    (dict(skyline=np.zeros(3)), r"skyline has shape \(3,\)"),
])
def test_reprovision_checks_its_arguments_before_the_plan_changes(kw, msg):
    """The public function validates, then calls the Reprovisioner's unchecked ``_reprovision``: a bad argument is
    refused by name, and the plan is left as it was (no grant added)."""
    plan = ReservationPlan(capacity=100, horizon=60)
    job = plan.place(PeriodicJob(period=60, a=0, d=10, demands=[20] * 10))
    args = dict(now=120.0, demand=70) | kw
    with pytest.raises(ValueError, match=msg):
        reprovision(plan, job.job_id, **args)
    assert plan.grants == {}
