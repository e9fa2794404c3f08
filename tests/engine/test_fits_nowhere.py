"""Issue 33 (Lab 03 at ``paper``): within one admission scan the capacity scheduler remembers the one-task demands
that fit no machine and skips the later tasks asking the same, as nothing changes the free rows until a gang starts.
On Lab 03's small clusters (the footprint searches go down to half the machines) most of a hundred queues pass the
totals test with no machine to take their task, and placing each again was most of a cycle.

Whole Morpheus cycles are run with the memo and without it (``_NO_DRAW_WHEN_NONE_FITS`` emptied, the scan before this
change) and must give the same admissions, task records, capacity changes and metrics, for every placement policy
(random fit draws a number only when a machine fits, so skipping a call that fits nowhere keeps every later draw),
while the memo must skip most placements (counted), or the comparison would prove nothing."""

import pytest

from cluster_sim.engine import capacity as cap
from cluster_sim.morpheus.packing import simulation as sim
from cluster_sim.morpheus.packing.config import MorpheusConfig
from cluster_sim.morpheus.packing.experiments import on_the_trace

#: a hundred queues on forty machines for two hours: the regime of Lab 03's paper footprints, in about a second a run
CROWDED = dict(jobs=100, machines=40, cycle_minutes=120, history_runs=5)


def _cycle(config, monkeypatch, *, memo: bool, placement: str = "first_fit"):
    calls = {"place": 0}
    place = cap.CapacityScheduler._place_listed  # every gang the scan tries goes through it first

    def counted(self, *args, **kwargs):
        calls["place"] += 1
        return place(self, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(cap.CapacityScheduler, "_place_listed", counted)
        if not memo:
            m.setattr(cap, "_NO_DRAW_WHEN_NONE_FITS", frozenset())
        if placement != "first_fit":
            cluster = sim.cluster_config
            m.setattr(sim, "cluster_config", lambda c, end: cluster(c, end).replace(placement=placement))
        model, _, _, _, end = sim.build_model(config)
        model.run_until(end)
        model.check_invariants()
    tasks = sorted((t.id, t.machine, t.start, t.finish, t.attempts) for j in model.jobs for t in j.tasks)
    record = (model.capacity_scheduler.admissions, tasks, {n: list(v) for n, v in model.capacity_log.items()},
              repr(model.metrics), model.rng.bit_generator.state)
    return record, calls["place"]


@pytest.mark.parametrize("arm", ["user", "morpheus", "morpheus_dra"])
def test_the_memo_gives_the_same_cycle_and_skips_most_placements(arm, monkeypatch):
    config = on_the_trace(MorpheusConfig.ci().replace(**CROWDED)).replace(arm=arm)
    fast, fast_calls = _cycle(config, monkeypatch, memo=True)
    slow, slow_calls = _cycle(config, monkeypatch, memo=False)
    assert len(fast[1]) > 1000 and len(fast[0]) > 1000, "the cycle must run and admit work"
    assert fast_calls < slow_calls / 3, f"the memo skipped too little: {fast_calls} placements against {slow_calls}"
    assert fast == slow


@pytest.mark.parametrize("placement", ["random", "best_fit", "worst_fit"])
def test_the_memo_keeps_every_policy_and_its_draws(placement, monkeypatch):
    config = on_the_trace(MorpheusConfig.ci().replace(**CROWDED)).replace(arm="user")
    fast, fast_calls = _cycle(config, monkeypatch, memo=True, placement=placement)
    slow, slow_calls = _cycle(config, monkeypatch, memo=False, placement=placement)
    assert fast_calls < slow_calls / 3, f"the memo skipped too little: {fast_calls} placements against {slow_calls}"
    assert fast == slow


def test_a_policy_of_ones_own_is_never_skipped(monkeypatch):
    """A policy the engine does not know may draw when nothing fits: the scan calls it every time, as before."""
    calls = {"policy": 0}

    def mine(free, demand, rng):
        calls["policy"] += 1
        rng.random()  # a draw even when nothing fits
        return cap.first_fit(free, demand)

    config = on_the_trace(MorpheusConfig.ci().replace(**CROWDED)).replace(arm="user")
    with monkeypatch.context() as m:
        m.setattr(cap.CapacityScheduler, "__init__", _with_policy(cap.CapacityScheduler.__init__, mine))
        _, mine_calls = _cycle(config, monkeypatch, memo=True)
    assert calls["policy"] == mine_calls > 10_000, "every placement must reach a policy of one's own"


def _with_policy(init, policy):
    def wrapped(self, model, specs, _policy, **kwargs):
        init(self, model, specs, policy, **kwargs)
    return wrapped
