"""ClusterModel end to end: invariants after every event, determinism, exact metrics, stale views."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cluster_sim.engine import ClusterConfig, ClusterModel, Job, Stage, Task, run
from cluster_sim.engine.workload import COMPLETED, FAILED, KILLED, RUNNING


def make_job(job_id, arrival, stages, priority=0):
    """stages: list of (parents, [(cpu, mem, duration), ...])."""
    job = Job(id=job_id, arrival=arrival, priority=priority)
    next_id = job_id * 100
    children = {i: [] for i in range(len(stages))}
    for i, (parents, _) in enumerate(stages):
        for p in parents:
            children[p].append(i)
    for i, (parents, tasks) in enumerate(stages):
        ts = [Task(next_id + k, job, i, (c, m), d) for k, (c, m, d) in enumerate(tasks)]
        next_id += len(ts)
        job.stages.append(Stage(i, ts, tuple(parents), tuple(children[i])))
    return job


def same_metrics(a, b):
    """Field by field; NaN (e.g. the mean wait of a run with no jobs) equals NaN."""
    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    return da.keys() == db.keys() and all(
        x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))
        for x, y in ((da[k], db[k]) for k in da)
    )


def same_results(a, b):
    if not same_metrics(a.metrics, b.metrics):
        return False
    for k in a.tasks:
        x, y = a.tasks[k], b.tasks[k]
        if not (np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y)):
            return False
    return True


configs = st.builds(
    lambda m, s, d, load, stages, pol, think, refresh, seed, dist: ClusterConfig(
        machines=m, cpu_per_machine=4, mem_per_machine=8, schedulers=s, update_delay=d, load=load,
        stages_per_job=stages, placement=pol, think_time=think, view_refresh=refresh, seed=seed,
        duration_dist=dist, mean_task_duration=3.0, tasks_per_job=3.0, mean_task_cpu=1.5,
        mean_task_mem=2.0, horizon=40.0, hardware_types=2, speed_spread=0.5),
    st.integers(1, 5), st.integers(1, 3), st.sampled_from([0.0, 0.5, 2.0]), st.floats(0.2, 2.0),
    st.integers(1, 4), st.sampled_from(["first_fit", "best_fit", "worst_fit", "random"]),
    st.sampled_from([0.0, 0.05]), st.sampled_from(["synchronous", "staggered"]), st.integers(0, 10**6),
    st.sampled_from(["exponential", "lognormal"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_invariants_hold_after_every_event(cfg):
    model = ClusterModel(cfg, check_every_event=True)
    model.run_until(cfg.horizon)
    model.check_invariants()
    m = model.metrics
    assert sum(m.tasks_by_state.values()) == m.tasks_submitted
    assert 0.0 <= m.utilisation <= 1.0 + 1e-12
    if cfg.update_delay == 0:
        assert m.conflicts == 0  # a fresh view never disagrees with the ledger


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
@example(ClusterConfig(machines=1, cpu_per_machine=4, mem_per_machine=8, load=0.25, horizon=40.0, seed=10192,
                       tasks_per_job=3.0, mean_task_duration=3.0, mean_task_cpu=1.5))  # no job arrives: NaN waits
def test_bulk_settling_equals_one_event_per_completion(cfg):
    assert same_results(run(cfg), run(cfg, completion_events="each"))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_batched_decisions_equal_one_event_per_decision(cfg):
    """Issue 33: decisions batched outside Mesa's event list run in the same order as one event each (the
    engine's default since the tour's paper run; "each" is the reference)."""
    assert same_results(run(cfg, check_every_event=True), run(cfg, decision_events="each"))


def test_mesa_still_numbers_its_events_with_one_counter():
    """Batched decisions draw their ids from Mesa's event counter: fail loudly if Mesa renames it."""
    from cluster_sim.engine.model import _event_ids

    ids = _event_ids()
    model = ClusterModel(ClusterConfig.ci())
    before = next(ids)
    event = model.schedule(lambda: None, after=1.0)
    assert event.unique_id > before


def test_same_config_and_seed_give_identical_results():
    cfg = ClusterConfig.ci().replace(update_delay=0.5, schedulers=3, stages_per_job=3)
    a, b = run(cfg), run(cfg)
    assert same_results(a, b)
    c = run(cfg.replace(seed=1))
    assert not same_results(a, c)


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_a_run_stopped_half_way_and_taken_on_equals_one_run(preset):
    """The tour (§1, §3) takes §1's half-way model on to the horizon instead of running it again from the start
    (issue 33: a minute at paper): the records and series must be exactly run(config)'s."""
    from cluster_sim.engine import collect

    cfg = ClusterConfig.from_preset(preset)
    one = run(cfg)
    model = ClusterModel(cfg)
    model.run_until(cfg.horizon / 2)
    model.run_until(cfg.horizon)
    model.check_invariants()
    halves = collect(model)
    assert same_results(one, halves)
    assert all(np.array_equal(one.jobs[k], halves.jobs[k], equal_nan=one.jobs[k].dtype.kind == "f") for k in one.jobs)
    assert one.series.keys() == halves.series.keys()
    for name, (times, values) in one.series.items():
        assert np.array_equal(times, halves.series[name][0]) and np.array_equal(values, halves.series[name][1]), name


def test_workload_does_not_depend_on_scheduling_choices():
    cfg = ClusterConfig.ci()
    a, b = run(cfg), run(cfg.replace(placement="first_fit", schedulers=5))
    assert np.array_equal(a.jobs["arrival"], b.jobs["arrival"])


def test_utilisation_equals_the_exact_area_of_the_task_records():
    cfg = ClusterConfig.ci().replace(stages_per_job=3, hardware_types=3, speed_spread=1.0)
    r = run(cfg)
    t = r.tasks
    ran = t["machine"] >= 0
    end = np.where(np.isnan(t["finish"]), cfg.horizon, t["finish"])
    model = ClusterModel(cfg)
    model.run_until(cfg.horizon)
    cpu = np.array([task.demand[0] for j in model.arrived for task in j.tasks])
    area = (cpu[ran] * (end[ran] - t["start"][ran])).sum()
    assert r.metrics.utilisation == pytest.approx(area / (r.capacity[0] * cfg.horizon), rel=1e-12)


def test_task_durations_scale_with_hardware_speed():
    cfg = ClusterConfig.ci().replace(hardware_types=2, speed_spread=1.0)
    model = ClusterModel(cfg)
    model.run_until(cfg.horizon)
    for task in (t for j in model.arrived for t in j.tasks if t.state == COMPLETED):
        assert task.finish - task.start == pytest.approx(task.duration / model.speed[task.machine])
    assert sorted(set(model.speed)) == [1.0, 2.0]


def one_machine(update_delay, schedulers=1, cpu=2, think=0.0):
    return ClusterConfig(machines=1, cpu_per_machine=cpu, mem_per_machine=8, schedulers=schedulers,
                         update_delay=update_delay, think_time=think, placement="first_fit", horizon=30.0)


def test_a_released_slot_stays_invisible_until_the_view_refresh():
    jobs = [make_job(0, 0.5, [((), [(2, 1, 3.0)])]), make_job(1, 1.0, [((), [(2, 1, 3.0)])])]
    stale = ClusterModel(one_machine(update_delay=10.0), jobs=jobs)
    stale.run_until(30.0)
    a, b = jobs[0].tasks[0], jobs[1].tasks[0]
    assert (a.start, a.finish) == (0.5, 3.5)
    assert b.start == 10.0  # free since 3.5 in the central state, seen only at the refresh at 10

    jobs = [make_job(0, 0.5, [((), [(2, 1, 3.0)])]), make_job(1, 1.0, [((), [(2, 1, 3.0)])])]
    fresh = ClusterModel(one_machine(update_delay=0.0), jobs=jobs)
    fresh.run_until(30.0)
    assert jobs[1].tasks[0].start == 3.5  # woken by the release itself


def test_parallel_schedulers_on_stale_views_conflict_and_retry():
    jobs = [make_job(0, 1.0, [((), [(2, 1, 20.0)])]), make_job(1, 1.0, [((), [(2, 1, 5.0)])])]
    model = ClusterModel(one_machine(update_delay=25.0, schedulers=2), jobs=jobs)
    model.run_until(30.0)
    model.check_invariants()
    assert model.metrics.conflicts == 1  # both believed the machine free; the second commit failed
    assert jobs[1].tasks[0].attempts == 2 and jobs[1].tasks[0].start == 25.0  # one conflict, one commit
    assert model.schedulers[1].conflicts == 1


def test_stages_start_when_all_parents_complete():
    job = make_job(0, 0.0, [((), [(1, 1, 2.0), (1, 1, 5.0)]), ((), [(1, 1, 1.0)]), ((0, 1), [(1, 1, 1.0)])])
    cfg = one_machine(update_delay=0.0, cpu=8)
    model = ClusterModel(cfg, jobs=[job], check_every_event=True)
    model.run_until(30.0)
    assert job.stages[2].tasks[0].start == 5.0
    assert job.finish == 6.0 and job.first_start == 0.0
    assert model.metrics.mean_job_completion == 6.0


def test_a_generated_task_that_fits_nowhere_fails_its_job_with_the_reason_and_is_not_retried():
    # one-task jobs, exponential sizes of mean 1.5 on 2-CPU machines: ~5% ask for more than any machine has
    cfg = ClusterConfig.ci().replace(cpu_per_machine=2, mean_task_cpu=1.5, tasks_per_job=1.0, horizon=200.0)
    model = ClusterModel(cfg, check_every_event=True)
    model.run_until(cfg.horizon)
    model.check_invariants()
    failed = [j for j in model.arrived if j.failed]
    assert failed and len(model.failures) == len(failed)
    big = next(t for t in failed[0].tasks if t.demand[0] > 2)
    assert f"task {big.id} can fit on no machine: demand {list(big.demand)} exceeds the largest machine [2, 64]" \
        in failed[0].tasks[0].note
    assert all(t.state == FAILED and t.attempts == 0 for j in failed for t in j.tasks)
    assert model.metrics.jobs_failed == len(failed) and model.metrics.jobs_completed > 0


def test_hand_built_work_a_cluster_cannot_hold_is_refused_when_the_model_is_built():
    job = make_job(0, 1.0, [((), [(3, 1, 1.0)]), ((0,), [(1, 1, 1.0)])])
    with pytest.raises(ValueError, match=r"Job 0: task 0 can fit on no machine of this cluster: demand \[3, 1\] "
                                         r"exceeds the largest machine \[2, 8\] \(cpu/mem\)"):
        ClusterModel(one_machine(update_delay=0.0), jobs=[job])
    dangling = make_job(1, 0.0, [((), [(1, 1, 1.0)])])
    dangling.stages[0].children = (3,)
    with pytest.raises(ValueError, match=r"Job 1: stage 0 links to stages \[3\], but the job has stages 0..0"):
        ClusterModel(one_machine(update_delay=0.0), jobs=[dangling])


@pytest.mark.parametrize("demand, duration, message", [
    ((-2, 1), 1.0, r"Task 7: demand=\(-2, 1\) is not allowed: a negative demand \(-2\) would create resources"),
    ((1.5, 1), 1.0, r"Task 7: demand=\(1.5, 1\) is not allowed: resource units are whole numbers, and 1.5 is not"),
    ("2", 1.0, r"Task 7: demand='2' is not allowed: give one whole number per resource"),
    ((), 1.0, r"Task 7: demand=\(\) is not allowed"),
    ((2, 1), float("nan"), r"Task 7: duration=nan is not allowed: a task runs for a finite, positive number"),
    ((2, 1), 0.0, r"Task 7: duration=0.0 is not allowed"),
    ((2, 1), -3.0, r"Task 7: duration=-3.0 is not allowed"),
    ((2, 1), float("inf"), r"Task 7: duration=inf is not allowed"),
])
def test_impossible_tasks_are_refused_when_built(demand, duration, message):
    """The tour teaches building jobs by hand: (-2, 1) for nan seconds ran 'forever' with finish nan."""
    job = Job(id=0, arrival=0.0)
    with pytest.raises(ValueError, match=message):
        Task(7, job, 0, demand, duration)


def test_demands_are_normalised_to_tuples_of_ints():
    job = Job(id=0, arrival=0.0)
    assert Task(1, job, 0, [np.int64(2), 3.0], 1.0).demand == (2, 3)
    assert type(Task(1, job, 0, [np.int64(2), 3.0], 1.0).demand[0]) is int


@pytest.mark.parametrize("arrival", [float("nan"), float("inf"), -1.0])
def test_impossible_arrivals_are_refused(arrival):
    with pytest.raises(ValueError, match=r"Job 4: arrival=.* is not allowed: a job arrives at a finite time >= 0"):
        Job(id=4, arrival=arrival)


def test_a_stage_cannot_be_its_own_parent():
    with pytest.raises(ValueError, match="Stage 2 lists itself as its own parent or child"):
        Stage(2, [], parents=(2,))


def test_kill_returns_resources_and_fails_the_job():
    job = make_job(0, 0.0, [((), [(2, 1, 10.0)]), ((0,), [(1, 1, 1.0)])])
    model = ClusterModel(one_machine(update_delay=0.0), jobs=[job])
    model.run_until(4.0)
    task = job.tasks[0]
    assert task.state == RUNNING
    released = []
    model.csv.release_listeners.append(lambda t, time: released.append((t.id, time)))
    model.csv.kill(task, "evicted by a test")
    model.check_invariants()
    assert task.state == KILLED and task.finish == 4.0
    assert model.csv.ledger.allocated.sum() == 0 and released == [(task.id, 4.0)]
    assert job.tasks[1].state == FAILED and "evicted by a test" in job.tasks[1].note
    with pytest.raises(ValueError, match="only a running task can be stopped"):
        model.csv.kill(task, "again")
    model.run_until(30.0)  # the killed task's hold comes due and is skipped, not released twice
    model.check_invariants()


def test_check_invariants_names_a_corrupted_state():
    model = ClusterModel(ClusterConfig.ci())
    model.run_until(50.0)
    running = next(t for j in model.arrived for t in j.tasks if t.state == RUNNING)
    running.state = COMPLETED
    with pytest.raises(AssertionError, match=f"task {running.id} holds machine {running.machine} but is completed"):
        model.check_invariants()
    running.state = RUNNING
    model.csv.ledger.allocated[running.machine, 0] += 1  # a phantom allocation
    with pytest.raises(AssertionError, match=r"released != allocated: .* but machines hold"):
        model.check_invariants()


def test_check_invariants_names_every_broken_rule_of_the_tasks_and_the_ledger():
    """The rules the check after every event applies (its per-machine sums are numpy's, its task counts one pass)."""
    model = ClusterModel(ClusterConfig.ci())
    model.run_until(50.0)
    model.check_invariants()
    tasks = [t for j in model.arrived for t in j.tasks]
    done = next(t for t in tasks if t.state == COMPLETED)
    finish = done.finish
    done.finish = model.time + 1.0
    with pytest.raises(AssertionError, match=f"task {done.id} completed at .*, outside \\[start"):
        model.check_invariants()
    done.finish = finish
    done.state = "lost"  # a state the engine does not know
    with pytest.raises(AssertionError, match="tasks lost"):
        model.check_invariants()
    done.state = COMPLETED
    hold = model.csv.ledger.holds()[0]
    demand = hold.demand
    hold.demand = tuple(np.asarray(demand) + 1)  # a hold that says more than the ledger booked
    with pytest.raises(AssertionError, match=f"disagree on machine {hold.machine} \\(visible\\)"):
        model.check_ledger()
    hold.demand = demand
    assert model.check_ledger() == sum(t.state == RUNNING for t in tasks)
    model.check_invariants()


def test_listeners_see_every_release_and_sync():
    cfg = ClusterConfig.ci().replace(update_delay=1.0, schedulers=3)
    model = ClusterModel(cfg)
    releases, syncs = [], []
    model.csv.release_listeners.append(lambda t, time: releases.append(time))
    model.csv.sync_listeners.append(lambda v, time: syncs.append(time))
    model.run_until(cfg.horizon)
    assert len(releases) == model.metrics.tasks_by_state[COMPLETED]
    assert releases == sorted(releases)
    assert len(syncs) == 3 * math.floor(cfg.horizon / 1.0)


def test_staggered_refresh_spreads_views_over_the_period():
    cfg = ClusterConfig.ci().replace(update_delay=1.0, schedulers=4, view_refresh="staggered")
    model = ClusterModel(cfg)
    model.run_until(2.1)
    assert sorted(v.synced_at for v in model.csv.views) == [1.25, 1.5, 1.75, 2.0]


def test_more_load_means_more_waiting():
    low = run(ClusterConfig.ci().replace(load=0.3)).metrics
    high = run(ClusterConfig.ci().replace(load=1.5)).metrics
    assert high.utilisation > low.utilisation
    assert high.mean_queue_length > low.mean_queue_length


def test_no_clock_ticks_between_events():
    """Mesa 3.5 calls step() every time unit by default; the engine is event-driven, so an empty
    stretch of simulated time costs nothing (a week of Wing or a day of Morpheus would otherwise
    tick 600k times)."""
    from cluster_sim.engine import ClusterConfig, ClusterModel

    class Counting(ClusterModel):
        ticks = 0

        def step(self):
            Counting.ticks += 1

    model = Counting(ClusterConfig.ci(), jobs=[])
    model.run_until(10_000.0)
    assert Counting.ticks == 0 and model.time == 10_000.0
