"""RMiner at paper scale within a minute (issue 33): batched scheduling decisions make far fewer Mesa events, with results
identical to one Mesa event per decision (``decision_events="each"``, today's path kept as the reference)."""

import json
from pathlib import Path

import numpy as np
import pytest

from cluster_sim.rminer import RMinerConfig
from cluster_sim.rminer.model import RMinerModel
from cluster_sim.rminer.simulation import collect

import digest33


def records(model):
    """Every task's record: what it is, where and when it ran, how it ended, how many tries it took."""
    return [(t.id, t.job.id, t.demand, t.duration, t.state, t.machine, t.released, t.start, t.finish, t.attempts,
             t.tag, t.note) for j in model.arrived for t in j.tasks]


def finished(cfg, decision_events, **kwargs):
    model = RMinerModel(cfg, decision_events=decision_events, **kwargs)
    model.run_until(cfg.horizon)
    model.check_invariants()
    return model


def assert_same_run(a, b):
    assert records(a) == records(b)
    ra, rb = collect(a), collect(b)
    assert ra.summary() == rb.summary() and ra.counts == rb.counts
    assert ra.scheduled_by == rb.scheduled_by and ra.survival_mean == rb.survival_mean
    assert ra.series.keys() == rb.series.keys()
    for name in ra.series:
        for x, y in zip(ra.series[name], rb.series[name]):
            assert np.array_equal(x, y), name
    assert [s.placed for s in a.schedulers] == [s.placed for s in b.schedulers]
    assert a.time == b.time


@pytest.mark.parametrize("mode", ["none", "plus1", "safe", "smart"])
@pytest.mark.parametrize("preset", ["ci", "default"])
def test_batched_decisions_give_the_same_tasks_and_metrics_as_one_event_each(preset, mode):
    cfg = getattr(RMinerConfig, preset)().replace(mode=mode, seed=3)
    assert_same_run(finished(cfg, "each"), finished(cfg, "batched"))


@pytest.mark.parametrize("mode", ["none", "safe", "smart"])
@pytest.mark.parametrize("refresh", ["synchronous", "staggered"])
def test_batched_decisions_keep_the_invariants_after_every_decision(mode, refresh):
    # crowded, with decisions that tie with refreshes and with each other (think time divides the delay)
    cfg = RMinerConfig.ci().replace(mode=mode, view_refresh=refresh, schedulers=16, workload_level=3.0, machines=12,
                                    think_time=1 / 40.0, horizon=6.0, filter_threshold=4.0)
    checked = []

    class Checking(RMinerModel):
        def after_event(self):
            checked.append(self.time)
            super().after_event()

    model = Checking(cfg, decision_events="batched", check_every_event=True)
    model.run_until(cfg.horizon)
    decisions = sum(s.placed + s.conflicts + s.blocked_decisions for s in model.schedulers)
    assert len(checked) > decisions > 0  # checked after each decision, as after every other event
    assert checked == sorted(checked)
    assert_same_run(finished(cfg, "each"), model)


def test_a_run_sliced_by_run_until_is_the_run_in_one_go():
    cfg = RMinerConfig.ci().replace(mode="smart", horizon=6.0)
    whole = finished(cfg, "batched")
    sliced = RMinerModel(cfg)
    for end in (0.5, 1.3, 2.0, 4.25, 6.0):
        sliced.run_until(end)
    assert_same_run(whole, sliced)


def test_paper_scale_decisions_need_few_mesa_events():
    """What made the paper's run slow: a Mesa event per decision. Count them (work, not wall time)."""
    cfg = RMinerConfig.paper().replace(mode="smart", horizon=1.0)
    model = RMinerModel(cfg, record_series=False)
    added = []
    add = model._event_list.add_event
    model._event_list.add_event = lambda event: (added.append(event), add(event))[1]
    model.run_until(cfg.horizon)
    decisions = sum(s.placed + s.conflicts + s.blocked_decisions for s in model.schedulers)
    decisions += model.rm.placed + model.rm.blocked_decisions
    assert decisions > 4000
    assert len(added) < 0.25 * decisions, (len(added), decisions)


@pytest.mark.parametrize("mode", digest33.MODES)
@pytest.mark.parametrize("preset", digest33.PRESETS)
def test_seeded_runs_give_what_they_gave_before_the_speed_ups(preset, mode):
    """Digests computed by the code before issue 33's changes (see digest33.py): task records, metrics, series."""
    want = json.loads((Path(__file__).parent / "digests33.json").read_text())
    assert digest33.compute(preset, mode) == want[f"{preset}/{mode}"]


@pytest.mark.parametrize("mode", digest33.PAPER_MODES)
def test_paper_scale_slices_give_what_they_gave_before_the_speed_ups(mode):
    """The paper's 1,500 machines for a few seconds (digests by commit b71cc94): the shape the speed-ups are for."""
    want = json.loads((Path(__file__).parent / "digests33.json").read_text())
    assert digest33.compute("paper", mode) == want[f"paper/{mode}"]


def test_decision_events_is_checked():
    with pytest.raises(ValueError, match="decision_events='bulk' is not allowed: choose 'each' or 'batched'"):
        RMinerModel(RMinerConfig.ci(), decision_events="bulk")


def test_no_garbage_collection_passes_over_the_tasks_while_running():
    """A full collection walks every live task: a tenth of a paper-scale run. Count them (work, not time)."""
    import gc

    full, collector_on = [], []

    def count(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(info)

    class Watched(RMinerModel):
        def after_event(self):
            collector_on.append(gc.isenabled())
            super().after_event()

    cfg = RMinerConfig.default().replace(mode="smart", horizon=5.0)
    model = Watched(cfg, record_series=False)
    gc.callbacks.append(count)
    try:
        model.run_until(cfg.horizon)  # makes the jobs, then runs
    finally:
        gc.callbacks.remove(count)
    assert full == [] and collector_on and not any(collector_on)
    assert gc.isenabled()  # back on after the run
    assert sum(j.n_tasks for j in model.arrived) > 2000


def test_the_ledger_and_the_shadow_view_copy_with_their_element_views():
    """Both read and write one machine's entries through memoryviews of their arrays: a copy (pickle, deepcopy)
    must get views of its own arrays, not share (or lose) the original's."""
    import copy
    import pickle

    from cluster_sim.engine.ledger import ResourceLedger
    from cluster_sim.rminer.shadow_view import ShadowResourceManager

    led = ResourceLedger(np.array([[4, 8], [2, 2]]))
    led.hold(0, (1, 2), until=1.0, owner="a")
    for twin in (pickle.loads(pickle.dumps(led)), copy.deepcopy(led)):
        twin.hold(0, (3, 6), until=2.0, owner="b")
        assert twin.allocated[0].tolist() == [4, 8] and twin.row(0) == [0, 0]
        assert [h.owner for h in twin.pop_due(5.0)] == ["a", "b"] and twin.row(0) == [4, 8]
    assert led.allocated[0].tolist() == [1, 2] and led.row(0) == [3, 6]

    srm = ShadowResourceManager(n_machines=2, n_resources=2)
    srm.echo_release(0.1, machine=1, amount=np.array([4, 1]))
    twin = pickle.loads(pickle.dumps(srm))
    twin.allocate_rm(1, np.array([3, 1]))
    assert twin.available[1].tolist() == [1, 0] and twin.occupied[1].tolist() == [3, 1]
    assert srm.available[1].tolist() == [4, 1] and srm.occupied[1].tolist() == [0, 0]
