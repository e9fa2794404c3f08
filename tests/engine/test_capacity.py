"""The YARN-like capacity scheduler: guarantees, lending and reclaiming, capacities that change at
their time, gangs admitted whole, orderings, preemption, and its invariants after every event."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_sim.engine import CapacityClusterModel, ClusterConfig, Job, QueueSpec, Stage, Task
from cluster_sim.engine.workload import COMPLETED, QUEUED, RUNNING


def cluster(machines=2, cpu=4, **kw):
    return ClusterConfig(machines=machines, cpu_per_machine=cpu, mem_per_machine=64, placement="first_fit",
                         horizon=1000.0, **kw)


def job(job_id, arrival, n, duration, queue=None, gang=1, cpu=1, priority=0):
    j = Job(id=job_id, arrival=arrival, queue=queue, gang=gang, priority=priority)
    j.stages.append(Stage(0, [Task(job_id * 100 + k, j, 0, (cpu, 1), duration) for k in range(n)]))
    return j


def run(jobs, queues, until=1000.0, **kw):
    model = CapacityClusterModel(kw.pop("config", cluster()), queues, jobs=jobs, check_every_event=True, **kw)
    model.run_until(until)
    model.check_invariants()
    return model


def starts(j):
    return sorted(t.start for t in j.tasks)


def test_idle_capacity_is_lent_and_a_lender_gets_it_back_as_borrowed_tasks_finish():
    # 8 CPUs, two queues guaranteed 4 each, both may borrow everything
    a = job(0, 0.0, 8, 10.0, queue="a")  # a asks for the whole cluster while b is idle
    b = job(1, 1.0, 4, 10.0, queue="b")  # b's guaranteed work arrives later
    model = run([a, b], [QueueSpec("a", 0.5, 1.0), QueueSpec("b", 0.5, 1.0)])
    assert starts(a) == [0.0] * 8  # lent: a uses b's idle half
    assert starts(b) == [10.0] * 4  # reclaimed without preemption: when a's borrowed tasks finish
    assert model.capacity_scheduler.preempted == 0


def test_while_a_queue_waits_for_its_guarantee_no_other_queue_borrows():
    a1 = job(0, 0.0, 8, 10.0, queue="a")
    b = job(1, 1.0, 4, 10.0, queue="b")
    a2 = job(2, 2.0, 4, 10.0, queue="a")  # more work for the borrower arrives before the release
    run([a1, b, a2], [QueueSpec("a", 0.5, 1.0), QueueSpec("b", 0.5, 1.0)])
    assert starts(b) == [10.0] * 4  # b gets its half back first ...
    assert starts(a2) == [10.0] * 4  # ... a only its own half (a1's other 4 CPUs come back at 10 too)


def test_without_elasticity_a_queue_never_exceeds_its_guarantee():
    a = job(0, 0.0, 8, 10.0, queue="a")
    run([a], [QueueSpec("a", 0.5, 1.0), QueueSpec("b", 0.5, 1.0)], elastic=False)
    assert starts(a) == [0.0] * 4 + [10.0] * 4


def test_preemption_takes_back_borrowed_tasks_at_once():
    a = job(0, 0.0, 8, 10.0, queue="a")
    b = job(1, 1.0, 4, 10.0, queue="b")
    model = run([a, b], [QueueSpec("a", 0.5, 1.0), QueueSpec("b", 0.5, 1.0)], preemption=True)
    assert starts(b) == [1.0] * 4
    assert model.capacity_scheduler.preempted == 4
    preempted = [t for t in a.tasks if t.note.startswith("preempted")]
    # re-run from scratch when a's other four tasks end at 10
    assert len(preempted) == 4 and all(t.state == COMPLETED and t.finish == 20.0 for t in preempted)


def test_a_capacity_change_takes_effect_at_its_time():
    # a reservation queue with nothing until t=10, then 4 CPUs, then 1 CPU from t=20
    r = job(0, 0.0, 4, 15.0, queue="res")
    late = job(1, 21.0, 1, 5.0, queue="res")
    cfg = cluster()
    model = CapacityClusterModel(cfg, [QueueSpec("res", 0.0, 0.0), QueueSpec("adhoc", 0.5, 1.0)],
                                 jobs=[r, late], check_every_event=True)
    model.capacity_scheduler.follow("res", [10.0, 20.0], [(4, 4), (1, 1)])
    model.run_until(100.0)
    model.check_invariants()
    assert starts(r) == [10.0] * 4  # waited for its reservation, started the instant it came
    # at 20 the queue shrank below what runs: nothing is killed, nothing new starts until under
    assert all(t.state == COMPLETED and t.finish == 25.0 for t in r.tasks)
    assert starts(late) == [25.0]


def test_a_gang_starts_whole_or_not_at_all():
    small = job(0, 0.0, 5, 10.0, queue="q")  # takes 5 of 8 CPUs
    gang = job(1, 1.0, 4, 5.0, queue="q", gang=4)  # 4 together: must wait for small to end
    single = job(2, 2.0, 3, 5.0, queue="q")  # fits now, behind the gang: not blocked by it
    model = run([small, gang, single], [QueueSpec("q")])
    assert starts(gang) == [10.0] * 4
    assert starts(single) == [2.0] * 3
    assert all(n == want for _, _, n, want in model.capacity_scheduler.admissions)


def test_without_backfill_the_head_of_the_queue_holds_its_room_for_its_gang():
    small = job(0, 0.0, 5, 10.0, queue="q")
    gang = job(1, 1.0, 4, 5.0, queue="q", gang=4)
    single = job(2, 2.0, 3, 5.0, queue="q")  # fits at 2.0, but the gang ahead of it waits: so does it
    run([small, gang, single], [QueueSpec("q", backfill=False)])
    assert starts(gang) == [10.0] * 4 and starts(single) == [10.0] * 3
    # the head that fits starts at once; a queue without backfill does not hold back another queue
    a, b = job(0, 0.0, 6, 10.0, queue="a", gang=6), job(1, 0.0, 2, 10.0, queue="b")
    run([a, b], [QueueSpec("a", 0.5, backfill=False), QueueSpec("b", 0.5)])
    assert starts(a) == [0.0] * 6 and starts(b) == [0.0] * 2


def test_a_job_reordered_to_the_head_starts_when_its_gang_fits():
    blocker, big, small = job(0, 0.0, 5, 10.0, "q"), job(1, 1.0, 4, 5.0, "q", gang=4), job(2, 2.0, 2, 5.0, "q", gang=2)
    rank = {0: 0, 1: 1, 2: 2}
    model = CapacityClusterModel(cluster(), [QueueSpec("q", order=lambda j: rank[j.id], backfill=False)],
                                 jobs=[blocker, big, small], check_every_event=True)
    model.run_until(3.0)
    assert np.isnan(small.tasks[0].start)  # behind the big gang, which waits for the blocker
    rank[2] = -1
    model.schedule(lambda: model.capacity_scheduler.reorder(small), at=4.0)
    model.run_until(20.0)
    model.check_invariants()
    assert starts(small) == [4.0, 4.0] and starts(big) == [10.0] * 4
    assert not model.capacity_scheduler.reorder(small)  # it no longer waits


def test_priority_order_within_a_queue():
    blocker = job(0, 0.0, 8, 10.0, queue="q")
    low = job(1, 1.0, 8, 1.0, queue="q", priority=0)
    high = job(2, 2.0, 8, 1.0, queue="q", priority=5)
    run([blocker, low, high], [QueueSpec("q", order="priority")])
    assert starts(high) == [10.0] * 8 and starts(low) == [11.0] * 8
    blocker, low, high = job(0, 0.0, 8, 10.0, "q"), job(1, 1.0, 8, 1.0, "q"), job(2, 2.0, 8, 1.0, "q", priority=5)
    run([blocker, low, high], [QueueSpec("q", order="fifo")])
    assert starts(low) == [10.0] * 8 and starts(high) == [11.0] * 8


def test_a_key_function_orders_jobs():
    blocker = job(0, 0.0, 8, 10.0, queue="q")
    long, short = job(1, 1.0, 8, 9.0, "q"), job(2, 2.0, 8, 1.0, "q")
    run([blocker, long, short], [QueueSpec("q", order=lambda j: j.tasks[0].duration)])  # shortest first
    assert starts(short) == [10.0] * 8 and starts(long) == [11.0] * 8


def test_hierarchical_queues_respect_every_ancestor():
    # org (max 50%) has two teams that could each borrow all of org's share, never beyond it
    specs = [QueueSpec("org", 0.5, 0.5), QueueSpec("team1", 0.5, 1.0, parent="org"),
             QueueSpec("team2", 0.5, 1.0, parent="org"), QueueSpec("other", 0.5, 1.0)]
    t1 = job(0, 0.0, 8, 10.0, queue="team1")
    model = run([t1], specs)
    assert starts(t1) == [0.0] * 4 + [10.0] * 4
    assert model.capacity_scheduler.queues["org"].maximum.tolist() == [4.0, 64.0]


def test_usage_per_queue_is_an_exact_integral_of_the_ledger():
    a, b = job(0, 0.0, 3, 10.0, queue="a"), job(1, 5.0, 2, 4.0, queue="b")
    model = run([a, b], [QueueSpec("a", 0.5), QueueSpec("b", 0.5)], until=20.0)
    q = model.capacity_scheduler.queues
    assert q["a"].usage.total(20.0) == 3 * 10.0 and q["b"].usage.total(20.0) == 2 * 4.0


@pytest.mark.parametrize("specs, message", [
    ([QueueSpec("a", 0.7), QueueSpec("b", 0.6)], "the children of 'root' are guaranteed more than all of it"),
    ([QueueSpec("a"), QueueSpec("a")], "queue names must be unique"),
    ([QueueSpec("a", parent="nowhere")], "name parents that do not exist"),
])
def test_bad_trees_are_refused_naming_the_queues(specs, message):
    with pytest.raises(ValueError, match=message):
        CapacityClusterModel(cluster(), specs, jobs=[])


@pytest.mark.parametrize("kw, message", [
    (dict(share=1.5), "share=1.5 is out of range"),
    (dict(share=0.5, max_share=0.2), "max_share=0.2 is below share=0.5"),
    (dict(order="newest"), "order='newest' is not allowed"),
    (dict(name="root"), "a non-empty name other than 'root'"),
    (dict(backfill="no"), "backfill='no' is not allowed: True or False"),
    # issue 31: a bool is not a share (True passed as 1 before), checked by cluster_sim.validate like every
    # pure function's argument
    (dict(share=True), "share=True is not allowed: need a number"),
    (dict(max_share=float("nan")), "max_share=nan is out of range: allowed 0 <= max_share <= 1"),
    (dict(share=10**400), r"share=~1e400 is out of range"),
])
def test_bad_queue_specs_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        QueueSpec(**{"name": "q", **kw})


def test_a_job_naming_a_missing_queue_is_refused():
    model = CapacityClusterModel(cluster(), [QueueSpec("a")], jobs=[job(0, 0.0, 1, 1.0, queue="b")])
    with pytest.raises(ValueError, match="job 0 names queue 'b', which is not a leaf queue; the leaf queues are"):
        model.run_until(5.0)


def test_set_capacity_refuses_impossible_values():
    model = CapacityClusterModel(cluster(), [QueueSpec("a", 0.5)], jobs=[])
    sched = model.capacity_scheduler
    with pytest.raises(ValueError, match=r"maximum \[1.0, 1.0\] is below guaranteed \[2.0, 2.0\]"):
        sched.set_capacity("a", 2, 1)
    with pytest.raises(ValueError, match="guaranteed=-1 is not allowed: finite amounts >= 0 per resource"):
        sched.set_capacity("a", -1)
    with pytest.raises(ValueError, match="queue 'zz' does not exist"):
        sched.set_capacity("zz", 1)


@st.composite
def capacity_scenarios(draw):
    # a random tree: one to three queues under the root, each a leaf or a parent of one to three leaves
    specs = []

    def level(parent, depth):
        n = draw(st.integers(1, 3))
        shares = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
        total = sum(shares) or 1.0
        for s in shares:
            name = f"q{len(specs)}"
            share = round(s / total * 0.95, 3)
            inner = depth == 0 and draw(st.booleans())
            specs.append(QueueSpec(name, share=share, max_share=draw(st.sampled_from([share, 1.0])), parent=parent,
                                   order=draw(st.sampled_from(["fifo", "priority"])), backfill=draw(st.booleans())))
            if inner:
                level(name, depth + 1)
    level(None, 0)
    n_queues = len(specs)
    cfg = ClusterConfig(machines=draw(st.integers(1, 4)), cpu_per_machine=draw(st.integers(2, 8)),
                        mem_per_machine=16, placement=draw(st.sampled_from(["first_fit", "random", "best_fit"])),
                        load=draw(st.floats(0.3, 1.5)), tasks_per_job=draw(st.floats(1.0, 6.0)),
                        stages_per_job=draw(st.integers(1, 3)), mean_task_duration=5.0, horizon=40.0,
                        seed=draw(st.integers(0, 1000)))
    gangs = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    # capacity changes hit any queue, inner ones too (their share children follow them)
    changes = draw(st.lists(st.tuples(st.floats(1.0, 39.0), st.integers(0, n_queues - 1), st.integers(0, 8)),
                            max_size=6))
    return cfg, specs, gangs, changes, draw(st.booleans()), draw(st.booleans())


class _GangModel(CapacityClusterModel):
    gangs = (1,)

    def make_jobs(self, rng):
        jobs = super().make_jobs(rng)
        for j in jobs:
            j.gang = self.gangs[j.id % len(self.gangs)]
            j.priority = j.id % 3
        return jobs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(capacity_scenarios())
def test_invariants_hold_after_every_event_for_random_queue_trees(scenario):
    cfg, specs, gangs, changes, elastic, preemption = scenario
    model = _GangModel.__new__(_GangModel)
    model.gangs = tuple(gangs)
    _GangModel.__init__(model, cfg, specs, elastic=elastic, preemption=preemption, check_every_event=True)
    for t, queue, cpu in changes:
        model.capacity_scheduler.follow(f"q{queue}", [t], [(cpu, 8)], [(cpu + 2, 16)])
    model.run_until(cfg.horizon)
    model.check_invariants()  # queues within limits, gangs whole, no job waiting while it fits, ...
    states = model.tasks_by_state()
    assert sum(states.values()) == sum(j.n_tasks for j in model.arrived)
    assert states[QUEUED] == model.capacity_scheduler.waiting()
    assert states[RUNNING] == len(model.csv.ledger.holds())
    for job_ in model.arrived:  # a stage's tasks are admitted in order, gang by gang, each gang at one instant
        if any(t.note.startswith("preempted") for t in job_.tasks):
            continue  # a preempted task goes back to the front of its job's queue
        for stage in job_.stages:
            for k in range(0, len(stage.tasks), job_.gang):
                chunk = [t.start for t in stage.tasks[k:k + job_.gang]]
                started = [x for x in chunk if not np.isnan(x)]
                assert not started or (len(started) == len(chunk) and len(set(started)) == 1), (
                    f"job {job_.id} stage {stage.index}: gang {k // job_.gang} started partly: {chunk}")


def test_a_childs_explicit_capacity_survives_its_parents_change():
    # p and o share the cluster (8 CPUs); c, under p, is set to 4 CPUs explicitly and runs 4 tasks;
    # then p is set to 4: c keeps its own 4 (absolute capacities stay as set, as in YARN's absolute
    # mode), it is not reset to its spec's share of p (2), which would put it over its maximum
    c_job = job(0, 0.0, 4, 20.0, queue="c")
    specs = [QueueSpec("p", 0.5, 0.5), QueueSpec("c", 0.5, 0.5, parent="p"), QueueSpec("o", 0.5, 0.5)]
    model = CapacityClusterModel(cluster(), specs, jobs=[c_job], check_every_event=True)
    sched = model.capacity_scheduler
    sched.set_capacity("c", 4)
    model.schedule(lambda: sched.set_capacity("p", 4), at=5.0)
    model.run_until(30.0)
    model.check_invariants()
    assert starts(c_job) == [0.0] * 4
    assert sched.queues["c"].guaranteed.tolist() == [4.0, 4.0] and sched.queues["c"].maximum.tolist() == [4.0, 4.0]


def test_a_parents_change_rescales_its_share_children_and_a_running_child_keeps_what_runs():
    # c holds all of p's share; p grows, shrinks below what c runs, then grows again
    big = job(0, 0.0, 6, 20.0, queue="c")
    later = job(1, 6.0, 1, 5.0, queue="c")
    specs = [QueueSpec("p", 0.75, 0.75), QueueSpec("c", 1.0, 1.0, parent="p"), QueueSpec("o", 0.25, 0.25)]
    model = CapacityClusterModel(cluster(), specs, jobs=[big, later], check_every_event=True)
    sched = model.capacity_scheduler
    model.schedule(lambda: sched.set_capacity("p", 4), at=5.0)  # c's maximum follows p's: 4, below the 6 it runs
    model.schedule(lambda: sched.set_capacity("p", 8), at=25.0)
    model.run_until(40.0)
    model.check_invariants()
    assert starts(big) == [0.0] * 6
    assert sched.queues["c"].maximum.tolist() == [8.0, 8.0]  # a share of p's, whatever p is set to
    assert starts(later) == [20.0]  # nothing new while c is over its lowered maximum; it starts when under


def _first_fit_task_by_task(free, gang):
    """The capacity scheduler's gang placement before it placed a gang at once: first fit, task after task, on a
    scratch copy of the free resources (the reference the one-shot placement must equal)."""
    from cluster_sim.engine.placement import first_fit

    scratch = free.copy()
    out = []
    for task in gang:
        m = first_fit(scratch, task.demand, None)
        if m < 0:
            return None
        scratch[m] -= task.demand
        out.append(m)
    return out


@settings(max_examples=300, deadline=None)
@given(free=st.lists(st.tuples(st.integers(-2, 9), st.integers(-2, 9)), min_size=1, max_size=8),
       demands=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=14),
       alike=st.booleans())
def test_a_gang_placed_at_once_takes_the_machines_first_fit_gives_task_by_task(free, demands, alike):
    from cluster_sim.engine.capacity import _first_fit_alike_arrays, _first_fit_alike_loop, _first_fit_gang

    free = np.array(free, dtype=np.int64)
    j = Job(id=0, arrival=0.0, gang=len(demands))
    gang = [Task(k, j, 0, demands[0] if alike else d, 1.0) for k, d in enumerate(demands)]
    before = free.copy()
    want = _first_fit_task_by_task(free, gang)
    assert _first_fit_gang(free, gang) == want
    if alike and all(d > 0 for d in demands[0]):  # both ways of placing alike tasks, whatever the machine count
        assert _first_fit_alike_loop(free, demands[0], len(gang)) == want
        assert _first_fit_alike_arrays(free, demands[0], len(gang)) == want
    assert np.array_equal(free, before)  # the free resources are only read
