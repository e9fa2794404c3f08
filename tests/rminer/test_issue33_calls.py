"""RMiner's paper run toward a minute (issue 33, third round): fewer Python calls per task.

The decision, the commit and the release each used to go through a chain of small calls (the pump's
``fire``, ``decide``, ``choose``, one call per listener, ``task_ended``, Mesa's ``time`` descriptor at every
read). :class:`RMAwareScheduler` and :class:`RMinerStateView` now spell those steps out in one call each; the
engine's path stays as the reference (``fused_events=False``). These tests count calls (work, not time) and
compare the two paths' task records and metrics."""

import sys

import pytest

from cluster_sim.rminer import RMinerConfig
from cluster_sim.rminer.model import RMinerModel

from test_issue33_speed import assert_same_run


def finished(cfg, **kwargs):
    model = RMinerModel(cfg, **kwargs)
    model.run_until(cfg.horizon)
    model.check_invariants()
    return model


def python_calls(model, end):
    """Python-level calls (functions of Python code and of C) made while running ``model`` to ``end``."""
    calls = [0]

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            calls[0] += 1

    sys.setprofile(count)
    try:
        model.run_until(end)
    finally:
        sys.setprofile(None)
    return calls[0]


@pytest.mark.parametrize("mode", ["none", "plus1", "safe", "smart"])
@pytest.mark.parametrize("preset", ["ci", "default"])
def test_one_call_paths_give_the_same_tasks_and_metrics_as_the_engines(preset, mode):
    cfg = getattr(RMinerConfig, preset)().replace(mode=mode, seed=11)
    assert_same_run(finished(cfg, fused_events=False), finished(cfg))


@pytest.mark.parametrize("refresh", ["synchronous", "staggered"])
@pytest.mark.parametrize("mode", ["safe", "smart"])
def test_one_call_paths_keep_the_invariants_after_every_event(mode, refresh):
    # crowded: conflicts, blocked heads, collisions with RM tasks, refreshes tying with decisions
    cfg = RMinerConfig.ci().replace(mode=mode, view_refresh=refresh, schedulers=16, workload_level=3.0, machines=12,
                                    think_time=1 / 40.0, horizon=6.0, filter_threshold=4.0)
    checked = finished(cfg, check_every_event=True)
    assert checked.rm.counts["rm_placed"] > 0 and sum(s.conflicts for s in checked.schedulers) > 0
    if (mode, refresh) != ("safe", "staggered"):  # that one has none: SafeRM converts its tasks at each refresh
        assert checked.rm.counts["rm_collisions"] > 0
    assert_same_run(finished(cfg, fused_events=False), checked)


def test_another_subscriber_takes_the_engines_path_and_is_told_everything():
    """A lab that subscribes its own listener after the start is told of every commit and release, in order."""
    cfg = RMinerConfig.ci().replace(mode="smart", horizon=8.0)
    seen = {True: [], False: []}
    models = {}
    for fused in (True, False):
        model = RMinerModel(cfg, fused_events=fused)
        model.run_until(2.0)

        class Listener:
            def on_release(self, task, t, log=seen[fused]):
                log.append(("release", task.id, t))

            def on_commit(self, task, t, log=seen[fused]):
                log.append(("commit", task.id, t))

        model.csv.subscribe(Listener())
        model.run_until(cfg.horizon)
        model.check_invariants()
        models[fused] = model
    assert len(seen[True]) > 100 and seen[True] == seen[False]
    assert_same_run(models[False], models[True])


def test_the_clock_reads_and_writes_mesas_time():
    """``model.time`` is read without Mesa's descriptor; writes still tell Mesa's subscribers."""
    from mesa.experimental.mesa_signals import ObservableSignals

    model = RMinerModel(RMinerConfig.ci().replace(mode="smart", horizon=3.0))
    changes = []

    def handler(signal):  # Mesa keeps a weak reference: a name here keeps it alive
        changes.append(signal.additional_kwargs["new"])

    model.observe("time", ObservableSignals.CHANGED, handler)
    model.run_until(3.0)
    assert model.time == model._time == 3.0
    assert len(changes) > 100 and changes == sorted(changes) and changes[-1] == 3.0


def test_fused_events_is_checked():
    with pytest.raises(ValueError, match="fused_events='yes' is not allowed: choose True or False"):
        RMinerModel(RMinerConfig.ci(), fused_events="yes")


def test_a_paper_scale_task_costs_few_python_calls():
    """Python calls per task at the paper's scale: 83 before this round (this count, a 1 s slice), 61 now, 70 by
    the engine's path (``fused_events=False``, which still has the engine's own savings). Count them (work, not
    time)."""
    cfg = RMinerConfig.paper().replace(mode="smart", horizon=1.0)
    counts = {}
    for fused in (False, True):
        model = RMinerModel(cfg, record_series=False, fused_events=fused)
        model.start()  # the jobs are made before counting
        counts[fused] = python_calls(model, cfg.horizon) / sum(j.n_tasks for j in model.arrived)
    assert counts[True] < 65 and counts[True] < 0.9 * counts[False], counts
