"""The SCOPE-like job manager on the engine's Mesa event clock (paper Fig. 2, steps 6-8).

:class:`ShapingJobManager` replaces the engine's :class:`~cluster_sim.engine.JobManager` in a
:class:`ShapingClusterModel`. It holds the job's guaranteed tokens, hands at most that many
vertices to the cluster scheduler at once, and at every vertex completion asks the shaper (the
pure :class:`~cluster_sim.shaper.execution.JobExecution`) how many tokens to keep, releasing the
rest to the :class:`TokenPool` (the virtual cluster's guaranteed-token account). In aggressive
mode it also re-requests tokens, which the pool grants after ``request_delay``.

The mathematics stays in the pure layer; this module only turns it into behaviour over time.

Example
-------
>>> import numpy as np
>>> from cluster_sim.shaper.examples import figure5_job
>>> from cluster_sim.shaper.execution import draw_durations
>>> g = figure5_job()
>>> d, _ = draw_durations(g, np.random.default_rng(0))
>>> model = ShapingClusterModel([JobPlan(g, d, tokens=200, mode="conservative")])
>>> model.run_until(model.horizon)
>>> model.check_invariants()
>>> run = model.runs[0]
>>> run.latency > 0 and run.allocation_area < 200 * run.latency
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mesa
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
    name: str = field(default="")


class TokenPool(mesa.Agent):
    """The virtual cluster's guaranteed tokens: who holds how many, and what was given back.

    ``held`` is an exact step integral of the tokens all jobs hold (the cluster-level allocation
    curve); ``released`` counts tokens returned early by shapers; requests are granted after
    ``request_delay`` (the queueing/negotiation cost of asking for more).
    """

    def __init__(self, model: "ShapingClusterModel"):
        super().__init__(model)
        self.held = StepIntegral()
        self.released = 0
        self.granted = 0
        self._grants: list[_Grant] = []

    def change(self, delta: int) -> None:
        self.held.add(self.model.time, delta)

    def give_back(self, tokens: int) -> None:
        self.released += tokens
        self.change(-tokens)

    def request(self, manager: "ShapingJobManager", tokens: int, due: float) -> None:
        grant = _Grant(self, manager, tokens)  # kept alive here: Mesa holds callbacks weakly
        self._grants.append(grant)
        self.model.schedule_event(grant.fire, at=due)

    def _granted(self, grant: "_Grant") -> None:
        self._grants.remove(grant)
        self.granted += grant.tokens


class _Grant:
    def __init__(self, pool: TokenPool, manager: "ShapingJobManager", tokens: int):
        self.pool, self.manager, self.tokens = pool, manager, tokens

    def fire(self) -> None:
        self.pool._granted(self)
        self.manager.on_tokens_granted(self.tokens)


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
        self._held = 0

    def watched(self, task: Task) -> bool:
        return True  # the shaper runs at every vertex completion, at its exact time

    def start(self) -> None:
        unplaceable = self.model.unplaceable(self.job)
        if unplaceable is not None:
            self.fail(f"task {unplaceable[0].id} can fit on no machine: {unplaceable[1]}")
            return
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
        held = self.execution.held
        if held < self._held and self.execution.done:
            pool.change(held - self._held)  # the job ended: its tokens go home, not "released early"
        elif held < self._held:
            pool.give_back(self._held - held)
        elif held > self._held:
            pool.change(held - self._held)
        self._held = held
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

    def __init__(self, plans: list[JobPlan], *, seed: int = 0, check_every_event: bool = False):
        if not plans:
            raise ValueError("plans must hold at least one JobPlan")
        cpu = 64
        total = sum(p.tokens for p in plans)
        config = ClusterConfig(
            machines=max(1, math.ceil(total / cpu)), cpu_per_machine=cpu, mem_per_machine=cpu,
            think_time=0.0, placement="first_fit", schedulers=1, horizon=1e6, seed=seed,
        )
        jobs = [_engine_job(k, p) for k, p in enumerate(plans)]
        self.plans = {k: p for k, p in enumerate(plans)}
        self.runs: dict[int, JobRun] = {}
        super().__init__(config, jobs=jobs, check_every_event=check_every_event)
        self.pool = TokenPool(self)
        # an upper bound on when everything has finished: all vertices one after another
        self.horizon = max(p.arrival for p in plans) + sum(
            float(np.sum(d)) for p in plans for d in p.durations.values()) + sum(
            p.request_delay for p in plans) * 4 + 1.0

    def job_done(self, manager: ShapingJobManager) -> None:
        self.runs[manager.job.id] = manager.execution.result()
        self.job_finished(manager)

    def check_invariants(self) -> None:
        super().check_invariants()
        live = sum(m.execution.held for m in self.job_managers.values() if isinstance(m, ShapingJobManager))
        if self.pool.held.value != live:
            raise AssertionError(f"token pool says {self.pool.held.value} held, job managers hold {live}")
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
