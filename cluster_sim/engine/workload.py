"""The workload model: ``Job`` -> ``Stage`` (a DAG) -> ``Task``, and seeded generators for it.

Pure data and numpy; no Mesa. A ``Task`` carries its own life cycle fields (state, machine, start,
finish) so that the engine's invariants ("every submitted task ends in exactly one state") can be
checked by looking at the tasks themselves.

Example
-------
>>> import numpy as np
>>> spec = WorkloadSpec(arrival_rate=0.5, tasks_per_job=4.0, stages_per_job=2)
>>> jobs = generate_jobs(spec, horizon=20.0, rng=np.random.default_rng(1))
>>> all(j.arrival < 20.0 for j in jobs) and all(len(j.stages) <= 2 for j in jobs)
True
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Task life cycle. A task is WAITING until its stage becomes runnable, QUEUED at a scheduler,
# RUNNING on a machine, and ends COMPLETED, KILLED or FAILED; at the horizon it may still be
# WAITING/QUEUED (together "pending") or RUNNING.
WAITING, QUEUED, RUNNING, COMPLETED, KILLED, FAILED = (
    "waiting", "queued", "running", "completed", "killed", "failed",
)
TERMINAL = (COMPLETED, KILLED, FAILED)
STATES = (WAITING, QUEUED, RUNNING, COMPLETED, KILLED, FAILED)


@dataclass(eq=False, slots=True)
class Task:
    """One unit of work: a demand vector (integer resource units) held for ``duration`` seconds."""

    id: int
    job: "Job"
    stage: int
    demand: tuple[int, ...]
    duration: float
    state: str = WAITING
    machine: int = -1
    released: float = float("nan")  # when it was handed to a scheduler
    start: float = float("nan")
    finish: float = float("nan")
    attempts: int = 0  # commit attempts, conflicts included
    note: str = ""  # why it was killed or failed
    tag: Any = None  # free slot for a lab's own bookkeeping (e.g. "rm" for Resource Miner tasks)

    def __post_init__(self) -> None:
        # Built by the million: the common case (a tuple of non-negative ints) is checked cheaply, and the very
        # tuple checked last (a job's tasks mostly share one) not again: a tuple of ints cannot change
        global _last_whole
        d = self.demand
        if d is not _last_whole:
            whole = type(d) is tuple and len(d) > 0
            if whole:
                for x in d:  # a plain loop: a generator in all() here was 3 % of Lab 05's runs
                    if type(x) is not int or x < 0:
                        whole = False
                        break
            if whole:
                _last_whole = d
            else:
                self.demand = _demand(d, self.id)
        if not 0.0 < self.duration < math.inf:  # also refuses NaN
            raise ValueError(f"Task {self.id}: duration={self.duration!r} is not allowed: "
                             "a task runs for a finite, positive number of seconds")


#: the demand tuple a Task checked last (whole, non-negative ints): the next task given that very tuple needs no loop
_last_whole = None


def _demand(demand, task_id) -> tuple[int, ...]:
    """A demand as a tuple of whole, non-negative resource units; a ValueError saying what is wrong."""
    if isinstance(demand, (str, bytes)) or not hasattr(demand, "__iter__"):
        raise ValueError(f"Task {task_id}: demand={demand!r} is not allowed: give one whole number per resource, "
                         "e.g. (2, 4) for 2 CPU and 4 memory units")
    units = []
    for x in demand:
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not float(x).is_integer():
            raise ValueError(f"Task {task_id}: demand={tuple(demand)!r} is not allowed: resource units are "
                             f"whole numbers, and {x!r} is not")
        if x < 0:
            raise ValueError(f"Task {task_id}: demand={tuple(demand)!r} is not allowed: a negative demand ({x!r}) "
                             "would create resources")
        units.append(int(x))
    if not units:
        raise ValueError(f"Task {task_id}: demand=() is not allowed: give one whole number per resource")
    return tuple(units)


@dataclass(eq=False, slots=True)
class Stage:
    """A set of identical-shape tasks that may start once every parent stage has completed."""

    index: int
    tasks: list[Task]
    parents: tuple[int, ...] = ()
    children: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.index in self.parents or self.index in self.children:
            raise ValueError(f"Stage {self.index} lists itself as its own parent or child")


@dataclass(eq=False, slots=True)
class Job:
    """A job arriving at ``arrival`` with a DAG of stages.

    ``priority`` is for labs that order by it; ``queue`` names the capacity-scheduler queue it is
    submitted to (None: the scheduler's default); ``gang`` is how many tasks of each released stage
    must start together (YARN's gang admission; 1 = one at a time); ``tag`` is a free slot for a
    lab's own data (a template, a value).
    """

    id: int
    arrival: float
    stages: list[Stage] = field(default_factory=list)
    priority: int = 0
    queue: str | None = None
    gang: int = 1
    tag: Any = None
    scheduler: int = -1
    first_start: float = float("nan")
    finish: float = float("nan")
    failed: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.arrival < math.inf:  # also refuses NaN
            raise ValueError(f"Job {self.id}: arrival={self.arrival!r} is not allowed: a job arrives at a finite "
                             "time >= 0 (the simulation starts at 0)")
        if type(self.gang) is not int or self.gang < 1:
            raise ValueError(f"Job {self.id}: gang={self.gang!r} is not allowed: a whole number >= 1 of tasks "
                             "that start together")

    @property
    def tasks(self) -> list[Task]:
        return [t for s in self.stages for t in s.tasks]

    @property
    def n_tasks(self) -> int:
        return sum(len(s.tasks) for s in self.stages)


@dataclass(frozen=True)
class WorkloadSpec:
    """Distribution parameters of a synthetic workload (means; sizes are in integer units)."""

    arrival_rate: float  # jobs per second (Poisson)
    tasks_per_job: float = 8.0  # mean; 1 + Poisson(mean - 1)
    stages_per_job: int = 1  # at most this many stages per job
    duration_dist: str = "exponential"  # or "lognormal"
    mean_task_duration: float = 10.0
    duration_sigma: float = 1.0  # lognormal shape
    size_dist: str = "exponential"  # or "lognormal"
    mean_task_cpu: float = 1.0
    mean_task_mem: float = 1.0
    size_sigma: float = 0.5


def _positive_draws(dist: str, mean: float, sigma: float, n: int, rng: np.random.Generator):
    if dist == "exponential":
        return rng.exponential(mean, n)
    if dist == "lognormal":
        # mu chosen so that the lognormal's mean is exactly `mean`
        return rng.lognormal(np.log(mean) - sigma**2 / 2, sigma, n)
    raise ValueError(f"dist={dist!r} is not allowed: choose 'exponential' or 'lognormal'")


def integer_sizes(dist: str, mean: float, sigma: float, n: int, rng: np.random.Generator):
    """Integer demands >= 1 whose mean is close to ``mean`` (1 + a draw of mean ``mean - 1``)."""
    if mean <= 1.0:
        return np.ones(n, dtype=np.int64)
    extra = _positive_draws(dist, mean - 1.0, sigma, n, rng)
    return 1 + np.floor(extra + 0.5).astype(np.int64)


def random_stage_dag(n_stages: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Parents of each stage: stage i > 0 depends on stage i-1 and, with p=0.3, on one earlier stage.

    Keeps every job connected (a chain backbone) while giving joins, as in data-parallel plans.
    """
    parents: list[tuple[int, ...]] = [()]
    for i in range(1, n_stages):
        ps = {i - 1}
        if i >= 2 and rng.random() < 0.3:
            ps.add(int(rng.integers(0, i - 1)))
        parents.append(tuple(sorted(ps)))
    return parents


def generate_jobs(spec: WorkloadSpec, horizon: float, rng: np.random.Generator, first_id: int = 0):
    """Poisson job arrivals on [0, horizon) with their stage DAGs and tasks, all from ``rng``."""
    if spec.arrival_rate <= 0:
        raise ValueError(f"arrival_rate={spec.arrival_rate!r} must be > 0 (jobs per second)")
    # Draw inter-arrival gaps in blocks: exact Poisson process, vectorised.
    expected = spec.arrival_rate * horizon
    gaps = rng.exponential(1.0 / spec.arrival_rate, int(expected + 6 * np.sqrt(expected) + 16))
    arrivals = np.cumsum(gaps)
    while arrivals[-1] < horizon:
        more = np.cumsum(rng.exponential(1.0 / spec.arrival_rate, len(gaps))) + arrivals[-1]
        arrivals = np.concatenate([arrivals, more])
    arrivals = arrivals[arrivals < horizon]
    n_jobs = len(arrivals)
    n_tasks = 1 + rng.poisson(max(spec.tasks_per_job - 1.0, 0.0), n_jobs)
    total = int(n_tasks.sum())
    durations = _positive_draws(
        spec.duration_dist, spec.mean_task_duration, spec.duration_sigma, total, rng
    )
    cpu = integer_sizes(spec.size_dist, spec.mean_task_cpu, spec.size_sigma, total, rng)
    mem = integer_sizes(spec.size_dist, spec.mean_task_mem, spec.size_sigma, total, rng)
    n_stages = np.minimum(rng.integers(1, spec.stages_per_job + 1, n_jobs), n_tasks)

    # plain Python numbers read once (a numpy scalar per task and field cost more than the Task itself), and
    # equal demands as one tuple: at paper every task demands (1, 1), 2.4 M tuples of 56 bytes held per run
    durations, cpu, mem = durations.tolist(), cpu.tolist(), mem.tolist()
    demands: dict = {}
    jobs: list[Job] = []
    k = 0
    task_id = 0
    for j in range(n_jobs):
        job = Job(id=first_id + j, arrival=float(arrivals[j]))
        s_count = int(n_stages[j])
        parents = random_stage_dag(s_count, rng) if s_count > 1 else [()]
        # split the job's tasks over its stages: every stage gets at least one task
        cuts = np.sort(rng.choice(np.arange(1, n_tasks[j]), s_count - 1, replace=False)) if s_count > 1 else []
        bounds = [0, *map(int, cuts), int(n_tasks[j])]
        children: list[list[int]] = [[] for _ in range(s_count)]
        for s, ps in enumerate(parents):
            for p in ps:
                children[p].append(s)
        for s in range(s_count):
            tasks = []
            for _ in range(bounds[s], bounds[s + 1]):
                demand = (cpu[k], mem[k])
                tasks.append(Task(task_id, job, s, demands.setdefault(demand, demand), durations[k]))
                task_id += 1
                k += 1
            job.stages.append(Stage(s, tasks, parents[s], tuple(children[s])))
        jobs.append(job)
    return jobs
