"""Issue 33, Lab 00 at ``paper``: the engine's per-task work in the tour's runs, counted (never timed).

The tour runs RMiner's cluster (1,500 machines, 2.4 M tasks) in ``ClusterModel``, ``CapacityClusterModel``
and ``run``; what each run spends per task is counted here on short runs of the paper's cluster."""

import gc

import numpy as np
import pytest

from cluster_sim.engine import ClusterConfig, ClusterModel
from cluster_sim.engine.workload import WorkloadSpec, generate_jobs
from counting import python_calls


@pytest.fixture
def paper_second(monkeypatch):
    """One simulated second of the paper's cluster (about 7,700 tasks), without the progress bar (its slices
    of simulated time each end a run of batched calls)."""
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "off")
    return ClusterConfig.paper().replace(horizon=1.0)


def count_mesa_events(model):
    added = []
    add = model._event_list.add_event
    model._event_list.add_event = lambda event: (added.append(event), add(event))[1]
    return added


def test_the_engines_model_makes_few_mesa_events_per_task(paper_second):
    """A Mesa event per scheduling decision and per arrival (an Event, two weak references, a heap entry) was a
    fifth of a paper run's time; the engine's model batches them now (identical results: test_model.py)."""
    model = ClusterModel(paper_second)
    added = count_mesa_events(model)
    model.run_until(paper_second.horizon)
    tasks = sum(j.n_tasks for j in model.arrived)
    assert tasks > 5_000
    assert len(added) < 0.05 * tasks, (len(added), tasks)  # a stand-in per refresh and wake-up, not per decision


def test_the_collector_is_paused_while_a_run_runs(paper_second):
    """Millions of live tasks and no cyclic garbage: a full collection walked them all about every 25 % of
    growth. Results do not depend on it."""
    seen = []
    model = ClusterModel(paper_second)
    model.schedule(lambda: seen.append(gc.isenabled()), at=0.1)
    enabled = gc.isenabled()
    model.run_until(0.2)
    assert seen == [False] and gc.isenabled() == enabled


def test_a_stale_views_snapshot_keeps_each_resource_contiguous():
    """The placement policies compare one resource column at a time against the demand, once per decision: a
    column-major snapshot reads each column contiguously (the same numbers, so the same choices)."""
    cfg = ClusterConfig.ci().replace(schedulers=2, update_delay=0.5)
    model = ClusterModel(cfg)
    model.run_until(2.0)
    for s in model.schedulers:
        assert s.view.free.flags.f_contiguous
        assert np.array_equal(s.view.free, model.csv.ledger.free) or s.view.synced_at > 0


def test_generated_tasks_share_their_demand_tuples():
    """At ``paper`` every task demands (1, 1): 2.4 M equal tuples, 56 bytes each, per run held in memory."""
    spec = WorkloadSpec(arrival_rate=50.0, tasks_per_job=12.0, mean_task_cpu=2.0, mean_task_mem=3.0)
    tasks = [t for j in generate_jobs(spec, 20.0, np.random.default_rng(3)) for s in j.stages for t in s.tasks]
    assert len({id(t.demand) for t in tasks}) == len({t.demand for t in tasks}) < len(tasks) / 10


def test_a_recorded_series_costs_two_doubles_per_change_point():
    """A paper run records about seven change points per task (usage of each resource, queue length); kept in
    lists, each was a pointer plus a Python number (about 40 bytes), as much memory as the tasks themselves."""
    import tracemalloc

    from cluster_sim.engine.metrics import StepIntegral

    q = StepIntegral()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for k in range(1, 100_001):
        q.set(k * 0.001, 1000 + k % 7919)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 100_000 * 2 * 8 * 1.2, grown  # two doubles a change point, plus the arrays' spare room
    times, values = q.steps()
    assert times.dtype == values.dtype == np.float64 and len(times) == 100_001 and values[-1] == 1000 + 100_000 % 7919


def test_the_capacity_scheduler_keeps_its_admissions_in_a_few_bytes_each():
    """Every admission is recorded for the invariants (gangs whole); at paper that is 2.4 M of them, and a tuple
    each held about 100 bytes in the tour's capacity run, which the notebook keeps for its figure."""
    import tracemalloc

    from cluster_sim.engine import CapacityClusterModel, QueueSpec
    from cluster_sim.engine import capacity

    model = CapacityClusterModel(ClusterConfig.ci().replace(machines=40, horizon=100.0),
                                 [QueueSpec("prod", share=0.7), QueueSpec("dev", share=0.3, max_share=0.5)])
    tracemalloc.start()
    model.run_until(100.0)
    held = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, capacity.__file__)])
    tracemalloc.stop()
    admitted = len(model.capacity_scheduler.admissions)
    assert admitted > 1_000
    assert sum(s.size for s in held.statistics("filename")) < 50 * admitted, admitted
    model.check_invariants()


def test_a_paper_scale_task_costs_few_python_calls(paper_second):
    """Python calls per task in the tour's run at the paper's scale (a 1 s slice): 103 before this round (a Mesa
    event per decision, np.flatnonzero's wrappers at each placement), 57 now. Counted, not timed."""
    model = ClusterModel(paper_second)
    model.start()  # the jobs are made before counting
    calls = python_calls(model, paper_second.horizon)
    per_task = calls / sum(j.n_tasks for j in model.arrived)
    assert per_task < 60, per_task
