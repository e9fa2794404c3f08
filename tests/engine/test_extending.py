"""Issue 31: a lab extends the engine as in Mesa (super().__init__() first), through one subscription
for cluster events, one settle path, and the scheduler protocol's requeue."""

import numpy as np
import pytest

from cluster_sim.engine import (CapacityClusterModel, ClusterConfig, ClusterModel, Job, JobManager, QueueSpec,
                                Scheduler, Stage, Task, run)
from cluster_sim.engine.workload import COMPLETED, QUEUED, RUNNING

CI = ClusterConfig.ci()


def one_job(cpu=1, duration=5.0, tasks=3):
    job = Job(id=0, arrival=0.0)
    job.stages.append(Stage(0, [Task(k, job, 0, (cpu, 1), duration) for k in range(tasks)]))
    return job


def test_a_subclass_calls_super_init_first_and_its_hooks_see_its_state():
    # before issue 31 the base constructor called make_schedulers/make_jobs, so this raised AttributeError
    class Tagged(ClusterModel):
        def __init__(self, config, tag):
            super().__init__(config)
            self.tag = tag

        def make_jobs(self, rng):
            jobs = super().make_jobs(rng)
            for job in jobs:
                job.tag = self.tag
            return jobs

    model = Tagged(CI, "mine")
    assert not model.started  # the substrate only, until the run starts
    for name in ("schedulers", "jobs"):
        with pytest.raises(RuntimeError, match=f"Tagged.{name} .* call start()"):
            getattr(model, name)
    model.run_until(20.0)
    model.check_invariants()
    assert model.jobs and {j.tag for j in model.jobs} == {"mine"}
    with pytest.raises(RuntimeError, match="start"):
        model.start()


def test_starting_changes_no_result():
    a = run(CI)
    model = ClusterModel(CI)
    model.start()  # by hand, then the run: the same events in the same order
    model.run_until(CI.horizon)
    assert a.metrics.utilisation == model.metrics.utilisation and a.metrics.conflicts == model.metrics.conflicts


def test_the_agent_classes_are_constructor_arguments():
    class Counting(Scheduler):
        def choose(self, task):
            self.model.chosen += 1
            return super().choose(task)

    class Loud(JobManager):
        pass

    model = ClusterModel(CI, scheduler_class=Counting, job_manager_class=Loud)
    model.chosen = 0
    model.run_until(20.0)
    assert all(type(s) is Counting for s in model.schedulers) and model.chosen > 0
    assert all(type(m) is Loud for m in model.job_managers.values())
    assert ClusterModel.scheduler_class is Scheduler  # the class attribute is untouched
    assert run(CI).metrics == run(CI, scheduler_class=Scheduler).metrics


def test_one_subscription_delivers_the_events_a_subscriber_handles():
    class Recorder:
        def __init__(self):
            self.seen = []

        def on_commit(self, task, t):
            self.seen.append(("commit", task.id, t))

        def on_release(self, task, t):
            self.seen.append(("release", task.id, t))

    model = ClusterModel(CI.replace(update_delay=0.0), jobs=[one_job()])
    rec = Recorder()
    model.csv.subscribe(rec)
    model.run_until(20.0)
    assert sorted(k for k, *_ in rec.seen) == ["commit"] * 3 + ["release"] * 3
    when = {(k, i): t for k, i, t in rec.seen}
    assert all(when["release", i] == pytest.approx(when["commit", i] + 5.0) for i in range(3))
    with pytest.raises(ValueError, match="on_release"):
        model.csv.subscribe(object())  # no handler at all: a misspelt one would never be called


def test_a_release_wake_up_settles_through_the_model():
    # a lab's settle() must run for every settle, the central state's wake-ups included (Morpheus
    # used to refresh in after_event for "an event that does not settle through the model")
    class Watching(ClusterModel):
        inside = False

        def settle(self):
            self.inside = True
            try:
                super().settle()
            finally:
                self.inside = False

    model = Watching(CI.replace(update_delay=0.0, load=2.0))
    model.start()
    plain = model.csv.settle
    outside = []

    def csv_settle():
        if not model.inside:
            outside.append(model.time)
        plain()

    model.csv.settle = csv_settle
    model.run_until(CI.horizon)
    assert model.metrics.jobs_completed > 0 and outside == []


def test_requeue_takes_an_evicted_task_back_in_either_family():
    job = one_job(cpu=2, duration=10.0, tasks=1)
    model = ClusterModel(CI.replace(update_delay=0.0, schedulers=1), jobs=[job])
    model.run_until(2.0)
    task = job.tasks[0]
    scheduler = model.schedulers[0]
    with pytest.raises(ValueError, match="only an evicted"):
        scheduler.requeue(task)  # still running
    model.csv.evict(task)
    scheduler.requeue(task)
    model.check_invariants()
    model.run_until(30.0)
    assert task.state == COMPLETED and task.finish == pytest.approx(12.0 + CI.think_time)

    job = one_job(cpu=2, duration=10.0, tasks=2)
    yarn = CapacityClusterModel(CI, [QueueSpec("q")], jobs=[job])
    yarn.run_until(2.0)
    task = job.tasks[1]
    assert task.state == RUNNING
    yarn.csv.evict(task)
    assert task.state == QUEUED
    yarn.capacity_scheduler.requeue(task)
    yarn.check_invariants()
    yarn.run_until(30.0)
    assert task.state == COMPLETED and task.finish == pytest.approx(12.0)


def test_admission_and_release_are_two_steps():
    class HeldBack(JobManager):
        def start(self):  # hold every job until t = 3, then admit it and release its first stage
            self.model.schedule(lambda: self.admit() and self.release_ready(), at=3.0)

    job = one_job(tasks=2)
    model = ClusterModel(CI.replace(update_delay=0.0), jobs=[job], job_manager_class=HeldBack)
    model.run_until(20.0)
    assert all(t.released == 3.0 and t.state == COMPLETED for t in job.tasks)
    too_big = Job(id=1, arrival=0.0)
    too_big.stages.append(Stage(0, [Task(9, too_big, 0, (CI.cpu_per_machine + 1, 1), 1.0)]))
    manager = JobManager(model, too_big, model.schedulers[0])
    assert manager.admit() is False and too_big.failed and "can fit on no machine" in too_big.tasks[0].note
    assert np.isnan(too_big.first_start)
