"""The engine's composition of its two families: an admit-only queue layer of tokens above the Omega schedulers."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_sim.engine import (RESERVED, ClusterConfig, ClusterModel, QueuedClusterModel, QueueLayer,
                                TokenJobManager, generate_jobs)
from cluster_sim.engine.model import WORKLOAD_STREAM

import numpy as np


def jobs_of(config: ClusterConfig, orgs: int):
    """The config's generated jobs, each in one of ``orgs`` organisation queues (by id)."""
    jobs = generate_jobs(config.workload_spec(), config.horizon, np.random.default_rng([config.seed, WORKLOAD_STREAM]))
    for j in jobs:
        j.queue = f"org{j.id % orgs}"
    return jobs


def records(model) -> list[tuple]:
    return [(t.job.id, t.stage, t.machine, t.start, t.finish, t.state) for j in model.arrived for t in j.tasks]


class Reserving(QueuedClusterModel):
    """Every third job is reserved: its reservation sets its tokens aside from its arrival for ``hold`` seconds."""

    hold = 20.0

    class Manager(TokenJobManager):
        def request(self):
            tokens, queue = super().request()
            return (tokens, RESERVED) if self.job.id % 3 == 0 else (tokens, queue)

    job_manager_class = Manager

    def start(self):
        super().start()
        self.granted = 0
        self.schedule_every(self.grant, 7.0)
        for j in self.jobs:
            if j.id % 3 == 0:
                tokens = max(len(s.tasks) for s in j.stages)
                self.schedule(lambda j=j.id, n=min(tokens, self.layer.total): self.layer.reserve(j, n), at=j.arrival)
                self.schedule(lambda j=j.id: self.layer.reserve(j, 0), at=j.arrival + self.hold)

    def grant(self):
        """A grant of 2 tokens for 5 s to every running job (reserved or not), handed back as its tasks end."""
        for m in list(self.job_managers.values()):
            if m.held > 0:
                n = self.layer.top_up(m, 2)
                self.granted += n
                if n:
                    self.schedule(lambda m=m, n=n: self.layer.take_back(m, n) if m.held else None, after=5.0)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machines=st.integers(2, 8), schedulers=st.integers(1, 3), update_delay=st.sampled_from([0.0, 1.0, 5.0]),
       orgs=st.integers(1, 3), reserving=st.booleans(), seed=st.integers(0, 30), rate=st.floats(0.2, 2.0))
def test_the_engines_invariants_and_the_layers_books_hold_after_every_event(machines, schedulers, update_delay, orgs,
                                                                           reserving, seed, rate):
    config = ClusterConfig.ci().replace(machines=machines, schedulers=schedulers, update_delay=update_delay,
                                        seed=seed, job_rate=rate, horizon=80.0)
    model = (Reserving if reserving else QueuedClusterModel)(config, jobs=jobs_of(config, orgs),
                                                             check_every_event=True)
    model.run_until(config.horizon)  # every event checks: raises AssertionError naming the first broken rule
    model.check_invariants()
    assert model.layer.held.value <= model.layer.total
    assert model.layer.admitted  # jobs were admitted
    if reserving:
        assert model.granted > 0 or model.layer.n_waiting() > 0  # grants were given, unless nothing was free


def test_with_tokens_that_never_bind_the_layer_is_the_plain_engine():
    config = ClusterConfig.ci().replace(horizon=120.0)

    class Unbound(QueuedClusterModel):
        def make_queue_layer(self):
            return QueueLayer(self, 10**9, {"default"})

        class job_manager_class(TokenJobManager):
            def request(self):
                return self.job.n_tasks, "default"

    layered = Unbound(config, jobs=jobs_of(config, 1), check_every_event=True)
    layered.run_until(config.horizon)
    for j in jobs_of(config, 1):
        j.queue = None
    plain = ClusterModel(config, jobs=jobs_of(config, 1), check_every_event=True)
    plain.run_until(config.horizon)
    assert records(layered) == records(plain) and len(records(plain)) > 0


def test_tokens_bound_the_tasks_a_job_has_at_the_schedulers_or_running():
    config = ClusterConfig.ci().replace(horizon=120.0, job_rate=2.0)
    seen = []

    class Watched(QueuedClusterModel):
        def after_event(self):
            super().after_event()
            seen.append(max((m.in_use for m in self.job_managers.values()), default=0))

    model = Watched(config, jobs=jobs_of(config, 2), check_every_event=True)
    model.run_until(config.horizon)
    asked = {m.job.id: m.asked for m in model.job_managers.values()}
    assert max(seen) > 0 and all(m.in_use <= m.held for m in model.job_managers.values()), asked
    assert model.layer.n_waiting() > 0 or model.layer.held.value < model.layer.total


@pytest.mark.parametrize("kwargs, words", [
    (dict(tokens=0, queues=["a"]), "tokens=0"),
    (dict(tokens=4, queues=[]), "queues"),
    (dict(tokens=4, queues=[RESERVED]), "queues"),
])
def test_a_layer_refuses_bad_tokens_and_queues_naming_them(kwargs, words):
    model = QueuedClusterModel(ClusterConfig.ci(), jobs=[])
    with pytest.raises(ValueError, match=words):
        QueueLayer(model, kwargs["tokens"], kwargs["queues"])


def test_a_job_asking_for_a_queue_the_layer_lacks_or_too_many_tokens_is_refused():
    config = ClusterConfig.ci().replace(horizon=30.0)

    class Bad(QueuedClusterModel):
        class job_manager_class(TokenJobManager):
            def request(self):
                return 1, "nowhere"

    with pytest.raises(ValueError, match="queue='nowhere'"):
        Bad(config, jobs=jobs_of(config, 1)).run_until(config.horizon)
    model = QueuedClusterModel(config, jobs=[])
    model.start()
    with pytest.raises(ValueError, match="reservation: need a whole number"):
        model.layer.reserve(0, -1)


def test_tasks_that_hold_several_tokens_fit_in_what_their_job_holds():
    """Issue 32: a task held one token whatever its size. ``tokens_of`` sizes it (here: its CPU units); a job
    hands its tasks to the schedulers in order while their tokens fit in what it holds unused."""
    config = ClusterConfig.ci().replace(horizon=120.0, job_rate=2.0, mean_task_cpu=2.5)
    seen = []

    class CpuTokens(QueuedClusterModel):
        class job_manager_class(TokenJobManager):
            def tokens_of(self, task):
                return task.demand[0]

            def request(self):
                largest = max(t.demand[0] for t in self.job.tasks)
                return min(max(largest, 6), self.model.layer.total), self.job.queue

        def after_event(self):
            super().after_event()
            for m in self.job_managers.values():
                running = sum(t.demand[0] for t in m.job.tasks if t.released == t.released and t.finish != t.finish)
                seen.append((m.in_use, running, sum(m.in_flight), m.held))

    model = CpuTokens(config, jobs=jobs_of(config, 2), check_every_event=True)
    model.run_until(config.horizon)
    assert all(in_use == running <= held for in_use, running, _, held in seen)
    assert any(in_use > tasks for in_use, _, tasks, _ in seen)  # tasks did hold several tokens
    assert sum(t.state == "completed" for j in model.arrived for t in j.tasks) > 0


def test_a_job_holding_fewer_tokens_than_its_next_task_needs_breaks_the_invariants():
    config = ClusterConfig.ci().replace(horizon=60.0, mean_task_cpu=3.0)

    class TooFew(QueuedClusterModel):
        class job_manager_class(TokenJobManager):
            def tokens_of(self, task):
                return task.demand[0] + 1

            def request(self):
                return 1, self.job.queue

    with pytest.raises(AssertionError, match="can never run"):
        TooFew(config, jobs=jobs_of(config, 1), check_every_event=True).run_until(config.horizon)
