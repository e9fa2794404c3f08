"""The SCOPE-like job manager on the engine's Mesa event clock (paper Fig. 2, steps 6-8).

:class:`ShapingJobManager` replaces the engine's :class:`~cluster_sim.engine.JobManager` in a
:class:`ShapingClusterModel`. It holds the job's guaranteed tokens, hands at most that many
vertices to the cluster scheduler at once, and at every vertex completion asks the shaper (the
pure :class:`~cluster_sim.shaper.execution.JobExecution`) how many tokens to keep, releasing the
rest to the :class:`TokenPool` (the virtual cluster's guaranteed-token account). In aggressive
mode it also re-requests tokens, which the pool grants after ``request_delay``. With a token
capacity the pool admits jobs first-come first-served when their whole allocation is free, so
tokens one job's shaper gives back let the next job start sooner.

The mathematics stays in the pure layer; this module only turns it into behaviour over time.

Example
-------
>>> import numpy as np
>>> from cluster_sim.shaper.examples import figure5_job
>>> from cluster_sim.shaper.execution import draw_durations
>>> g = figure5_job()
>>> d, _ = draw_durations(g, np.random.default_rng(0))
>>> model = ShapingClusterModel([JobPlan(g, d, tokens=200, mode="conservative")])
>>> model.run()                      # until every job has finished; checks the invariants
>>> run = model.runs[0]
>>> run.latency > 0 and run.allocation_area < 200 * run.latency
True
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from .._mesa import mesa  # mesa without its stack walk (cluster_sim/_mesa.py)
import numpy as np

from cluster_sim.engine import ClusterConfig, ClusterModel, JobManager
from cluster_sim.engine.metrics import StepIntegral
from cluster_sim.engine.workload import Job, Stage, Task

from .execution import JobExecution, JobRun
from .graph import StageGraph


@dataclass
class JobPlan:
    """One job for the model: its stage graph, vertex durations, guaranteed tokens and shaper."""

    graph: StageGraph
    durations: dict
    tokens: int
    mode: str = "conservative"
    arrival: float = 0.0
    request_delay: float = 0.0
    estimates: dict | None = None
    seed: int = 0


class TokenPool(mesa.Agent):
    """The virtual cluster's guaranteed tokens: who holds how many, who waits, what was given back.

    The pool is the one account of tokens: ``holding[job]`` is what each job holds, ``held`` an exact
    step integral of their sum (the cluster-level allocation curve); ``released`` counts tokens
    returned early by shapers; requests are granted after
    ``request_delay`` (the negotiation cost of asking for more). With a ``capacity``, a job is
    admitted only when its whole allocation is free, and jobs and late grants wait first-come
    first-served: tokens a shaper gives back let the next job start sooner (paper §3.1).
    """

    def __init__(self, model: "ShapingClusterModel", capacity: int | None = None):
        super().__init__(model)
        self.capacity = capacity
        self.holding: dict[int, int] = {}  # job id -> tokens it holds
        self.held = StepIntegral()
        self.waiting_jobs = StepIntegral()
        self.released = 0
        self.granted = 0
        self._waiting: deque = deque()  # (manager, tokens, is_admission)
        self._serving = False

    @property
    def free(self) -> float:
        return float("inf") if self.capacity is None else self.capacity - self.held.value

    def set_holding(self, job_id: int, tokens: int, *, released_early: bool = True) -> None:
        """Job ``job_id`` now holds ``tokens`` (its shaper's decision). Tokens it gives back are
        counted as released early unless the job has ended; given-back tokens go to whoever waits."""
        delta = tokens - self.holding.get(job_id, 0)
        if tokens:
            self.holding[job_id] = tokens
        else:
            self.holding.pop(job_id, None)
        self.held.add(self.model.time, delta)
        if delta < 0:
            if released_early:
                self.released -= delta
            self._serve()

    def admit(self, manager: "ShapingJobManager") -> None:
        """A job arrives: start it if its tokens are free and nobody waits, else queue it."""
        self._waiting.append((manager, manager.plan.tokens, True))
        self.waiting_jobs.add(self.model.time, 1)
        self._serve()

    def request(self, manager: "ShapingJobManager", tokens: int, due: float) -> None:
        """Tokens re-requested now arrive at ``due`` (the negotiation delay), then wait their turn."""
        self.model.schedule(lambda: self._grant_due(manager, tokens), at=due)

    def _grant_due(self, manager: "ShapingJobManager", tokens: int) -> None:
        self._waiting.append((manager, tokens, False))
        self._serve()

    def _serve(self) -> None:
        if self._serving:
            return  # a start or grant below released tokens: the loop we are in picks that up
        self._serving = True
        try:
            while self._waiting and self._waiting[0][1] <= self.free:
                manager, tokens, is_admission = self._waiting.popleft()
                if is_admission:
                    self.waiting_jobs.add(self.model.time, -1)
                    manager.on_admitted()
                else:
                    self.granted += tokens
                    manager.on_tokens_granted(tokens)
        finally:
            self._serving = False


class ShapingJobManager(JobManager):
    """A job manager with a token budget and a resource shaper (one per job)."""

    def __init__(self, model: "ShapingClusterModel", job: Job, scheduler):
        super().__init__(model, job, scheduler)
        plan: JobPlan = model.plans[job.id]
        self.plan = plan
        self.execution = JobExecution(
            plan.graph, plan.durations, plan.tokens, plan.mode,
            request_delay=plan.request_delay, estimates=plan.estimates, seed=plan.seed,
        )
        self.stage_names = list(plan.graph.stages)
        self._tasks = {(name, i): t for name, s in zip(self.stage_names, job.stages) for i, t in enumerate(s.tasks)}
        self.admitted_at: float | None = None

    def watched(self, task: Task) -> bool:
        return True  # the shaper runs at every vertex completion, at its exact time

    def start(self) -> None:
        """Admitted by the engine (it fits), the job waits in the pool for its tokens."""
        if self.admit():
            self.model.pool.admit(self)

    def on_admitted(self) -> None:
        """The pool has our tokens: the job starts now (queueing delay = now - arrival)."""
        self.admitted_at = self.model.time
        self.model.admitted[self.job.id] = self.model.time
        self._act(self.execution.start(self.model.time))

    def on_task_finished(self, task: Task) -> None:
        name = self.stage_names[task.stage]
        self._act(self.execution.vertex_finished(name, task.tag, task.finish))
        if self.execution.done:
            self.job.finish = task.finish
            self.model.job_done(self)

    def on_tokens_granted(self, tokens: int) -> None:
        self._act(self.execution.tokens_granted(tokens, self.model.time))

    def _act(self, started) -> None:
        """Mirror the state machine's decisions: token changes to the pool, vertices to the scheduler."""
        pool = self.model.pool
        # the job's end sends its tokens home; before that, tokens given back are released early
        pool.set_holding(self.job.id, self.execution.held, released_early=not self.execution.done)
        for due, tokens in self.execution.outbox:
            pool.request(self, tokens, due)
        self.execution.outbox.clear()
        if started:
            self.scheduler.enqueue([self._tasks[(s, i)] for s, i, _ in started])


class ShapingClusterModel(ClusterModel):
    """A virtual cluster running the given jobs with their token budgets and shapers.

    The machines are sized so that the tokens of every job fit at once (tokens, not machines, are
    the constraint, as for SCOPE's guaranteed resources); the scheduler decides instantly. Under
    these conditions each job's run equals the pure :func:`~cluster_sim.shaper.execution.replay`
    (a test checks it).
    """

    job_manager_class = ShapingJobManager

    def __init__(self, plans: list[JobPlan], *, seed: int = 0, token_capacity: int | None = None,
                 check_every_event: bool = False):
        if not plans:
            raise ValueError("plans must hold at least one JobPlan")
        biggest = max(p.tokens for p in plans)
        if token_capacity is not None and token_capacity < biggest:
            raise ValueError(
                f"token_capacity={token_capacity} is below the largest job's {biggest} tokens: that job could "
                f"never be admitted; allowed token_capacity >= {biggest} (or None for no limit)"
            )
        # Machines never bind (tokens are the constraint): as many of the engine's largest machines
        # as the tokens need, so any token count fits (64-slot machines capped jobs at 1.28M tokens).
        cpu = 1024
        total = sum(p.tokens for p in plans)
        if token_capacity is not None:
            total = min(total, token_capacity)
        # The jobs are given, so the engine's workload generator (and its horizon) is not used:
        # horizon=1 keeps the config's work estimate honest; run() goes to self.horizon below.
        config = ClusterConfig(
            machines=max(1, math.ceil(total / cpu)), cpu_per_machine=cpu, mem_per_machine=cpu,
            think_time=0.0, placement="first_fit", schedulers=1, horizon=1.0, seed=seed,
        )
        super().__init__(config, jobs=[_engine_job(k, p) for k, p in enumerate(plans)],
                         check_every_event=check_every_event)
        self.plans = {k: p for k, p in enumerate(plans)}
        self.runs: dict[int, JobRun] = {}
        self.admitted: dict[int, float] = {}
        self.finished: dict[int, float] = {}
        self.pool = TokenPool(self, token_capacity)
        # a bound on when everything has finished: all vertices one after another, each perhaps
        # waiting a request delay (run_until jumps over empty time, so a loose bound costs nothing)
        self.horizon = max(p.arrival for p in plans) + sum(
            float(np.sum(d)) + p.request_delay * p.graph.total_vertices for p in plans
            for d in [np.concatenate(list(p.durations.values()))]) + 1.0

    def run(self) -> None:
        """Run until every job has finished; check the invariants."""
        self.run_until(self.horizon)
        self.check_invariants()
        if len(self.runs) != len(self.plans):
            missing = sorted(set(self.plans) - set(self.runs))
            raise AssertionError(f"jobs {missing} did not finish by the horizon {self.horizon:.0f}")

    def job_done(self, manager: ShapingJobManager) -> None:
        self.runs[manager.job.id] = manager.execution.result()
        self.finished[manager.job.id] = self.time
        self.job_finished(manager)

    def check_invariants(self) -> None:
        super().check_invariants()
        managers = [m for m in self.job_managers.values() if isinstance(m, ShapingJobManager)]
        for m in managers:
            booked = self.pool.holding.get(m.job.id, 0)
            if m.admitted_at is not None and booked != m.execution.held:
                raise AssertionError(f"job {m.job.id}: the token pool says it holds {booked}, its shaper {m.execution.held}")
        live = sum(self.pool.holding.values())
        if self.pool.held.value != live:
            raise AssertionError(f"token pool's total {self.pool.held.value} is not the sum of its jobs' {live}")
        if self.pool.capacity is not None and live > self.pool.capacity:
            raise AssertionError(f"jobs hold {live} tokens, the pool has {self.pool.capacity}")
        for m in self.job_managers.values():
            ex = m.execution
            if ex.in_use > ex.held:
                raise AssertionError(f"job {m.job.id} runs {ex.in_use} vertices on {ex.held} tokens")


def _engine_job(job_id: int, plan: JobPlan) -> Job:
    """The engine's Job/Stage/Task objects for a stage graph: one task (1 CPU, 1 memory) per vertex."""
    g = plan.graph
    index = {s: i for i, s in enumerate(g.stages)}
    job = Job(id=job_id, arrival=float(plan.arrival))
    tid = job_id * 10_000_000
    for s in g.stages:
        tasks = [Task(tid + k, job, index[s], (1, 1), float(d)) for k, d in enumerate(plan.durations[s])]
        tid += len(tasks)
        job.stages.append(Stage(
            index[s], tasks,
            tuple(index[p] for p in g.producers(s)), tuple(index[c] for c in g.consumers(s)),
        ))
    for st in job.stages:
        for k, t in enumerate(st.tasks):
            t.tag = k  # vertex index within its stage
    return job
