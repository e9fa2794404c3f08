"""RMiner's paper run toward a minute (issue 33, third round): fewer Python calls per task.

A batched decision went through ``_Call.fire`` (settle, the call, ``after_event``), and every read of
``model.time`` through Mesa's ``Observable`` descriptor (a Python ``__get__`` and a ``getattr``, about five
reads per task). The pump now spells ``fire`` out when nothing runs after the call, the clock is read in C,
and the RM filter no longer re-checks the config's values at each arrival. These tests count calls (work,
not time) and check that what was replaced still does what it did: a lab's settle and after_event still
run at each decision, Mesa's subscribers to ``time`` are still told, results are unchanged (the digests of
test_issue33_speed)."""

import pytest

from cluster_sim.engine import ClusterConfig, ClusterModel
from cluster_sim.rminer import RMinerConfig
from cluster_sim.rminer.model import RMinerModel
from cluster_sim.rminer.theory import expected_shadow, shadow_of
from counting import python_calls


def test_a_paper_scale_task_costs_fewer_python_calls():
    """Python calls per task at the paper's scale (SmartRM, a 1 s slice): 83 before this round, 62 now.
    Count them (work, not time)."""
    cfg = RMinerConfig.paper().replace(mode="smart", horizon=1.0)
    model = RMinerModel(cfg, record_series=False)
    model.start()  # the jobs are made before counting
    per_task = python_calls(model, cfg.horizon) / sum(j.n_tasks for j in model.arrived)
    assert per_task < 66, per_task


def test_arrivals_do_not_cut_the_runs_of_batched_decisions(monkeypatch):
    """With batched decisions every arrival was a Mesa event of its own, and each ended the pump's run of
    decisions (one every 1.5 ms at the paper's scale: a stand-in Event made again each time). Arrivals are
    batched too now, with the keys their Mesa events would have had. Count the Mesa events (without the
    progress bar, whose 200 slices of simulated time each end a run too)."""
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "off")
    cfg = RMinerConfig.paper().replace(mode="smart", horizon=1.0)
    model = RMinerModel(cfg, record_series=False)
    added = []
    add = model._event_list.add_event
    model._event_list.add_event = lambda event: (added.append(event), add(event))[1]
    model.run_until(cfg.horizon)
    assert len(model.arrived) > 500 and len(added) < 0.05 * len(model.arrived), (len(added), len(model.arrived))


@pytest.mark.parametrize("mode", ["none", "smart"])
def test_batched_arrivals_give_the_same_run_as_mesa_events(mode):
    from test_issue33_speed import assert_same_run

    cfg = RMinerConfig.default().replace(mode=mode, seed=21, horizon=20.0)
    runs = []
    for decision_events in ("each", "batched"):
        model = RMinerModel(cfg, decision_events=decision_events)
        model.run_until(cfg.horizon)
        model.check_invariants()
        runs.append(model)
    assert_same_run(*runs)


def test_schedule_batched_is_checked():
    model = RMinerModel(RMinerConfig.ci())
    model.run_until(1.0)
    call = model.callback(lambda: None)
    with pytest.raises(ValueError, match="needs one of at=None and after=None"):
        model.schedule_batched(call)
    with pytest.raises(ValueError, match="needs one of at=2.0 and after=1.0"):
        model.schedule_batched(call, at=2.0, after=1.0)
    with pytest.raises(ValueError, match="at=0.5 is not allowed: it is before now"):
        model.schedule_batched(call, at=0.5)


@pytest.mark.parametrize("decision_events", ["each", "batched"])
def test_a_labs_settle_and_after_event_run_at_every_batched_decision(decision_events):
    """The pump spells ``_Call.fire`` out only when no lab adds to it: a lab's own settle and after_event
    still run once per decision, as through one Mesa event each."""
    counted = {"settle": 0, "after": 0}

    class Lab(RMinerModel):
        def settle(self):
            counted["settle"] += 1
            super().settle()

        def after_event(self):
            counted["after"] += 1
            super().after_event()

    cfg = RMinerConfig.ci().replace(mode="smart", horizon=4.0)
    model = Lab(cfg, decision_events=decision_events)
    model.run_until(cfg.horizon)
    decisions = sum(s.placed + s.conflicts + s.blocked_decisions for s in model.schedulers)
    decisions += model.rm.placed + model.rm.conflicts + model.rm.blocked_decisions
    assert counted["after"] > decisions > 100 and counted["settle"] > decisions
    plain = RMinerModel(cfg, decision_events=decision_events)
    plain.run_until(cfg.horizon)
    assert [t.finish for j in plain.arrived for t in j.tasks] == [t.finish for j in model.arrived for t in j.tasks]


def test_the_same_counts_of_settle_and_after_event_either_way():
    counts = {}
    for decision_events in ("each", "batched"):
        seen = [0, 0]

        class Lab(RMinerModel):
            def settle(self, seen=seen):
                seen[0] += 1
                super().settle()

            def after_event(self, seen=seen):
                seen[1] += 1
                super().after_event()

        cfg = RMinerConfig.ci().replace(mode="safe", horizon=4.0)
        Lab(cfg, decision_events=decision_events).run_until(cfg.horizon)
        counts[decision_events] = seen
    assert counts["each"] == counts["batched"]


def test_the_clock_is_read_directly_and_written_through_mesa():
    """``model.time`` is read without Mesa's descriptor; writes still tell Mesa's subscribers, batched
    decisions included."""
    from mesa.experimental.mesa_signals import ObservableSignals

    model = RMinerModel(RMinerConfig.ci().replace(mode="smart", horizon=3.0))
    changes = []

    def handler(signal):  # Mesa keeps a weak reference: a name here keeps it alive
        changes.append(signal.additional_kwargs["new"])

    model.observe("time", ObservableSignals.CHANGED, handler)
    model.run_until(3.0)
    assert model.time == model._time == 3.0
    decisions = sum(s.placed + s.conflicts + s.blocked_decisions for s in model.schedulers)
    assert len(changes) > decisions > 100 and changes == sorted(changes) and changes[-1] == 3.0
    assert type(model).time is ClusterModel.time and ClusterModel(ClusterConfig.ci()).time == 0.0


def test_the_filters_shadow_is_equation_5_unchecked():
    """What the RM filter now calls at each arrival is :func:`expected_shadow` without the checks."""
    for args in [(0.5, 1000.0, 5.0, 0.0), (0.5, 100.0, 5.0, 1.0), (1.0, 0.0, 4.0, 0.0), (0.3, 17.0, 4.5, 0.0)]:
        assert shadow_of(*args) == expected_shadow(*args)
    with pytest.raises(ValueError, match="allocated"):
        expected_shadow(0.5, -1.0, 5.0)
