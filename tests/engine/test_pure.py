"""The pure layer: ledger, placement policies, step integrals, workload generation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_sim.engine import ResourceLedger, StepIntegral, WorkloadSpec, generate_jobs
from cluster_sim.engine.placement import best_fit, first_fit, random_fit, worst_fit


def test_ledger_allocate_release_and_flows():
    ledger = ResourceLedger(np.array([[4, 8], [2, 2]]))
    ledger.allocate(0, (3, 4))
    assert not ledger.fits(0, (2, 1)) and ledger.fits(0, (1, 4))
    with pytest.raises(ValueError, match=r"demand \(2, 1\) does not fit on machine 0: free \[1, 4\]"):
        ledger.allocate(0, (2, 1))
    ledger.release(0, (3, 4))
    assert ledger.allocated.sum() == 0
    assert ledger.allocated_total.tolist() == ledger.released_total.tolist() == [3, 4]
    ledger.check()


def test_ledger_truly_free_total_is_the_sum_of_truly_free_at_every_step():
    """The capacity scheduler reads the cluster's free total from the flows at every admission (issue 33: summing
    the (machines, R) array was a tenth of an admission at 1,500 machines): it must equal the array's sum after
    visible and hidden holds, early releases, due releases and untimed allocations."""
    ledger = ResourceLedger(np.array([[4, 8], [2, 2], [3, 5]]))

    def agrees():
        assert ledger.truly_free_total() == ledger.truly_free.sum(axis=0).tolist()
        assert all(type(v) is int for v in ledger.truly_free_total())

    agrees()
    ledger.hold(0, (2, 3), until=5.0, owner="a")
    ledger.hold(1, (1, 1), until=2.0, owner="b", visible=False, queue="adhoc")
    ledger.hold(2, (3, 5), until=9.0, owner="c", queue="prod")
    agrees()
    ledger.allocate(1, (1, 1))
    agrees()
    ledger.release_hold("c")
    agrees()
    list(ledger.pop_due(5.0))
    agrees()
    ledger.release(1, (1, 1))
    agrees()
    assert ledger.truly_free_total() == [9, 15]


def test_ledger_refuses_a_fractional_demand_before_writing_anything():
    """The rows are written through int64 memoryviews (the RMiner speed-up): a fraction must be a ValueError that
    names the entry, with nothing half-written, not a TypeError from the view."""
    ledger = ResourceLedger(np.array([[4, 4], [4, 4]]))
    with pytest.raises(ValueError, match=r"demand\[1\]=0.5 is not allowed: need whole numbers"):
        ledger.allocate(0, (1, 0.5))
    with pytest.raises(ValueError, match=r"demand\[0\]=1.5 is not allowed"):
        ledger.hold(1, (1.5, 1), until=1.0, owner="t")
    assert ledger.allocated.sum() == 0 and not ledger.holds()
    ledger.allocate(0, (1.0, 2.0))  # whole floats are whole numbers
    assert ledger.free[0].tolist() == [3, 2]


def test_ledger_check_names_the_broken_rule():
    ledger = ResourceLedger(np.array([[4, 8]]))
    ledger.allocated[0] = [5, 1]
    with pytest.raises(AssertionError, match=r"machine 0 over capacity: allocated \[5, 1\] > capacity \[4, 8\]"):
        ledger.check()
    ledger = ResourceLedger(np.array([[4, 8]]))
    ledger.allocated[0] = [1, 1]  # allocated behind the ledger's back: the flows no longer add up
    with pytest.raises(AssertionError, match="released != allocated"):
        ledger.check()


@pytest.mark.parametrize("bad, message", [
    (np.array([4, 8]), "must be a \\(machines, resources\\) array"),
    (np.array([[4.0, 8.0]]), "integer resource units"),
    (np.array([[4, 0]]), "capacity of machine 0 is \\[4, 0\\]"),
])
def test_ledger_rejects_bad_capacity(bad, message):
    with pytest.raises(ValueError, match=message):
        ResourceLedger(bad)


def test_holds_come_due_in_finish_order():
    ledger = ResourceLedger(np.array([[10, 10]]))
    for finish, name in [(3.0, "c"), (1.0, "a"), (2.0, "b"), (5.0, "d")]:
        ledger.hold(0, (1, 1), finish, name)
    assert [h.owner for h in ledger.pop_due(3.0)] == ["a", "b", "c"]
    assert ledger.next_release_time() == 5.0


FREE = np.array([[4, 4], [1, 1], [2, 8], [0, 9]])


def test_policies_on_a_known_view():
    assert first_fit(FREE, (1, 1)) == 0
    assert best_fit(FREE, (1, 1)) == 1  # leaves 0 units
    assert worst_fit(FREE, (1, 1)) == 2  # 10 units free
    assert first_fit(FREE, (5, 1)) == best_fit(FREE, (5, 1)) == worst_fit(FREE, (5, 1)) == -1
    rng = np.random.default_rng(0)
    assert {random_fit(FREE, (2, 2), rng) for _ in range(50)} == {0, 2}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=12),
       st.tuples(st.integers(1, 9), st.integers(1, 9)))
def test_policies_agree_with_brute_force(rows, demand):
    free = np.array(rows, dtype=np.int64)
    fitting = [i for i, r in enumerate(rows) if r[0] >= demand[0] and r[1] >= demand[1]]
    expect_first = fitting[0] if fitting else -1
    expect_best = min(fitting, key=lambda i: (sum(rows[i]) - sum(demand), i)) if fitting else -1
    expect_worst = min(fitting, key=lambda i: (-sum(rows[i]), i)) if fitting else -1
    assert first_fit(free, demand) == expect_first
    assert best_fit(free, demand) == expect_best
    assert worst_fit(free, demand) == expect_worst
    got = random_fit(free, demand, np.random.default_rng(1))
    assert got in fitting if fitting else got == -1


def test_step_integral_is_exact_and_refuses_time_travel():
    q = StepIntegral()
    q.set(2.0, 3)
    q.set(5.0, 1)
    assert q.total(6.0) == 10.0
    edges, means = q.binned(6.0, 3)  # bins [0,2) [2,4) [4,6): 0, 3, (3+1)/2
    assert means.tolist() == [0.0, 3.0, 2.0]
    with pytest.raises(ValueError, match="time went backwards"):
        q.set(4.0, 2)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.integers(0, 50)), min_size=1, max_size=30))
def test_step_integral_matches_a_riemann_sum(changes):
    changes = sorted(changes)
    q = StepIntegral()
    for t, v in changes:
        q.set(t, v)
    grid = np.linspace(0, 12, 120_001)
    # value at each grid point: the last change at or before it
    idx = np.searchsorted([t for t, _ in changes], grid, side="right") - 1
    values = np.where(idx >= 0, np.array([v for _, v in changes] + [0])[idx], 0)
    assert q.total(12.0) == pytest.approx(values[:-1].sum() * (grid[1] - grid[0]), abs=0.05)


def test_workload_is_seeded_and_well_formed():
    spec = WorkloadSpec(arrival_rate=2.0, tasks_per_job=6.0, stages_per_job=4, duration_dist="lognormal")
    a = generate_jobs(spec, 50.0, np.random.default_rng(7))
    b = generate_jobs(spec, 50.0, np.random.default_rng(7))
    assert [(j.arrival, [(t.demand, t.duration) for t in j.tasks]) for j in a] == \
           [(j.arrival, [(t.demand, t.duration) for t in j.tasks]) for j in b]
    assert 60 < len(a) < 140  # Poisson(100)
    for job in a:
        assert all(len(s.tasks) >= 1 for s in job.stages)
        for s in job.stages:
            assert all(p < s.index for p in s.parents)  # a DAG in topological order
            assert all(s.index in job.stages[c].parents for c in s.children)
            assert all(min(t.demand) >= 1 and t.duration > 0 for t in s.tasks)
    ids = [t.id for j in a for t in j.tasks]
    assert ids == list(range(len(ids)))


def test_workload_means_match_the_spec():
    spec = WorkloadSpec(arrival_rate=50.0, tasks_per_job=5.0, mean_task_duration=3.0,
                        duration_dist="lognormal", duration_sigma=1.0, mean_task_cpu=4.0)
    jobs = generate_jobs(spec, 200.0, np.random.default_rng(3))
    tasks = [t for j in jobs for t in j.tasks]
    assert len(jobs) / 200.0 == pytest.approx(50.0, rel=0.03)
    assert np.mean([j.n_tasks for j in jobs]) == pytest.approx(5.0, rel=0.03)
    assert np.mean([t.duration for t in tasks]) == pytest.approx(3.0, rel=0.05)
    assert np.mean([t.demand[0] for t in tasks]) == pytest.approx(4.0, rel=0.05)


def test_workload_rejects_bad_distribution():
    with pytest.raises(ValueError, match="dist='pareto' is not allowed"):
        generate_jobs(WorkloadSpec(arrival_rate=1.0, duration_dist="pareto"), 10.0, np.random.default_rng(0))


def test_work_accounting_holds_when_some_tasks_never_start():
    # an overloaded cluster stopped early: many tasks still wait at the horizon (as at Lab 00's paper preset)
    from cluster_sim.engine import ClusterConfig, run
    from cluster_sim.engine.metrics import work_accounting

    config = ClusterConfig.ci().replace(load=3.0, horizon=20.0, hardware_types=2, speed_spread=0.5)
    result = run(config)
    t = result.tasks
    assert 0 < np.isnan(t["start"]).sum() < len(t["start"])  # some started, some never did
    a = work_accounting(t, result.metrics.time, result.capacity[0], config.speeds())
    assert a["done"] == pytest.approx(result.metrics.utilisation, rel=1e-12)  # the engine's exact integral
    assert a["offered"] == pytest.approx(a["done"] + a["left"], rel=1e-12)  # nothing lost
