"""The capacity scheduler's admission scan does work in proportion to what can change, not to the queues
(issue 33: a hundred Morpheus queues made every admission test every queue). Work is counted, not timed."""

import pytest

from cluster_sim.engine import CapacityClusterModel, CapacityScheduler, ClusterConfig, Job, QueueSpec, Stage, Task


class Counting(CapacityScheduler):
    tested: list

    def _candidates(self, q, limits, free, free_total=None, **kw):
        self.tested.append(q.name)
        return super()._candidates(q, limits, free, free_total, **kw)


class CountingModel(CapacityClusterModel):
    capacity_scheduler_class = Counting


def job(job_id, arrival, n, queue, cpu=1, duration=10.0):
    j = Job(id=job_id, arrival=arrival, queue=queue)
    j.stages.append(Stage(0, [Task(job_id * 1000 + k, j, 0, (cpu, 1), duration) for k in range(n)]))
    return j


def reserved_model(n_full=60, **kw):
    """``n_full`` reservation queues whose capacity is all in use, each with a task waiting, beside an ad hoc
    queue that takes the rest of the cluster in a stream of short jobs (Lab 03's shape)."""
    queues = [QueueSpec(f"r{i:02d}", share=0.0, max_share=0.0) for i in range(n_full)] + [QueueSpec("adhoc", 0.0, 1.0)]
    jobs = [job(i, 0.0, 2, f"r{i:02d}", duration=1000.0) for i in range(n_full)]
    jobs += [job(n_full + k, 1.0 + k, 3, "adhoc") for k in range(40)]
    config = ClusterConfig(machines=20, cpu_per_machine=8, mem_per_machine=64, placement="first_fit", horizon=200.0)
    model = CountingModel(config, queues, jobs=jobs, **kw)
    model.capacity_scheduler.tested = []
    for i in range(n_full):  # one container each: the first task runs, the second waits for the reservation
        model.capacity_scheduler.set_capacity(f"r{i:02d}", (1, 1))
    return model


def test_queues_whose_smallest_need_cannot_fit_are_not_tested_gang_by_gang():
    model = reserved_model()  # not checked every event: the check tests every queue itself
    model.run_until(200.0)
    sched = model.capacity_scheduler
    tested = len(sched.tested)
    model.check_invariants()
    admitted = len(sched.admissions)
    assert admitted == 60 + 40 * 3  # every reservation's first task, every ad hoc task
    waiting = {f"r{i:02d}" for i in range(60)}
    assert all(len(model.capacity_scheduler.queues[q].jobs) == 1 for q in waiting)  # each still has a task waiting
    # the full scan tested every full queue with work at every admission (thousands of tests); now a queue is
    # tested only when its smallest need fits its room: about once per admission
    assert 0 < tested <= 2 * admitted, f"{tested} queues tested gang by gang for {admitted} admissions"


def test_an_admission_that_tests_no_queue_builds_no_free_array(monkeypatch):
    """The per-machine free array (a (machines, R) array, new at each read) is built only when a queue has a gang
    to test, and the free total comes from the ledger's flows, not from summing that array (issue 33: both cost
    a tenth of an admission at RMiner's 1,500 machines). Counted, not timed."""
    from cluster_sim.engine.ledger import ResourceLedger

    reads = []
    array = ResourceLedger.truly_free.fget
    monkeypatch.setattr(ResourceLedger, "truly_free", property(lambda self: reads.append(1) or array(self)))
    model = reserved_model()
    model.run_until(200.0)
    sched = model.capacity_scheduler
    assert len(sched.admissions) == 60 + 40 * 3
    # every admission scans the queues once; most find every full queue's smallest need over its room and test none
    assert 0 < len(reads) <= len(sched.tested), f"{len(reads)} free arrays built for {len(sched.tested)} queues tested"


def test_the_invariants_catch_a_stale_cache():
    model = reserved_model(n_full=3)
    model.run_until(5.0)
    model.check_invariants()
    q = model.capacity_scheduler.queues["r01"]
    q.used_ints = [u + 1 for u in q.used_ints]  # as if a release had not been seen
    with pytest.raises(AssertionError, match="r01.*cached use"):
        model.check_invariants()


class Watching(CapacityScheduler):
    """Counts what an admission computes for a queue that has one startable gang."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.rooms_computed = 0  # queue rooms computed by _candidates as arrays (limit - used, per level)
        self.copies = 0  # free arrays copied to place a gang of one
        self.single_gangs = 0
        self._in_candidates = False
        policy = self.policy

        def watched_policy(free, demand, rng):
            self.copies += free is not self._free_given
            return policy(free, demand, rng)

        self.policy = watched_policy

    def _candidates(self, q, limits, free, free_total=None, **kw):
        self._in_candidates = True
        try:
            return super()._candidates(q, limits, free, free_total, **kw)
        finally:
            self._in_candidates = False

    def used(self, node):
        self.rooms_computed += self._in_candidates
        return super().used(node)

    def _place(self, gang, free, policy=None, rng=None):
        self._free_given = free
        self.single_gangs += len(gang) == 1
        return super()._place(gang, free, policy, rng)


class WatchingModel(CapacityClusterModel):
    capacity_scheduler_class = Watching


def test_a_gang_of_one_that_passed_the_least_need_test_is_not_tested_again_nor_placed_on_a_copy():
    """The tour at paper admits millions of one-task gangs, most from a queue holding one job: the least-need test
    (:meth:`_may_fit`) has already compared that gang's need with the queue's rooms and the free total, so
    ``_candidates`` builds no room arrays for it, and a gang of one is placed on the free array itself, which the
    policies only read (issue 33). Same decisions: the golden records (test_capacity_golden.py)."""
    queues = [QueueSpec("prod", share=0.7, max_share=1.0), QueueSpec("dev", share=0.3, max_share=0.5)]
    model = WatchingModel(ClusterConfig.ci(), queues)
    model.run_until(60.0)
    model.check_invariants()
    sched = model.capacity_scheduler
    assert sched.single_gangs > 100
    assert sched.copies == 0, f"{sched.copies} free arrays copied for {sched.single_gangs} gangs of one"
    # rooms are computed only for queues with several startable gangs (with backfill, jobs waiting behind the head)
    assert sched.rooms_computed < sched.single_gangs / 2, (sched.rooms_computed, sched.single_gangs)
