"""``ClusterConfig``: the engine's experiment config (cluster, schedulers, workload, horizon), on
``BaseClusterConfig`` (every field but the one that states the job arrival rate)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..config import Config, Work, count, param, seed_param
from .workload import WorkloadSpec


@dataclass(frozen=True)
class BaseClusterConfig(Config):
    """The engine's config with jobs arriving at ``job_rate`` per second: the fields every engine config
    shares, whatever words it states its job arrival rate in.

    :class:`ClusterConfig` states the rate as the offered CPU ``load``; Labs 08-09's ``RMinerConfig``
    as the paper's ``workload_level`` (a multiple of its job arrival rate). Two meanings, two names: a
    subclass declares its rate field, names it in ``RATE_FIELD`` and turns it into jobs per second in
    :meth:`arrival_rate` (``job_rate``, when set, overrides it in both).

    >>> BaseClusterConfig(job_rate=2.0).arrival_rate()
    2.0
    """

    # cluster
    machines: int = param(50, lo=1, hi=20_000, slider=(1, 100), label='Machines', doc="machines in the cluster")
    cpu_per_machine: int = param(16, lo=1, hi=1024, label='CPU per machine', unit='units', doc="CPU units per machine")
    mem_per_machine: int = param(64, lo=1, hi=65_536, label='Memory per machine', unit='units', doc="memory units per machine")
    hardware_types: int = param(1, lo=1, hi=8, label='Hardware types', doc="hardware generations; machine i has type i mod types")
    speed_spread: float = param(0.0, lo=0.0, hi=3.0, step=0.1,
                                label='Speed spread', unit='× slowest − 1', doc="the fastest type runs tasks (1 + spread) times faster than the slowest")
    # schedulers and the shared state
    schedulers: int = param(1, lo=1, hi=64, slider=(1, 16), label='Parallel schedulers', doc="parallel schedulers sharing the central state")
    update_delay: float = param(0.0, lo=0.0, hi=60.0, step=0.1, slider=(0.0, 10.0),
                                label='View update delay', unit='s', doc="seconds between snapshots of the central state pushed to schedulers' local views; 0 = always fresh")
    view_refresh: str = param("synchronous", choices=("synchronous", "staggered"),
                              label='View refresh', doc="all local views refreshed at once, or spread evenly over the period")
    think_time: float = param(0.01, lo=0.0, hi=10.0, step=0.001, slider=(0.0, 0.2),
                              label='Decision time per task', unit='s', doc="seconds a scheduler spends deciding one task")
    placement: str = param("random", choices=("first_fit", "best_fit", "worst_fit", "random"),
                           label='Placement rule', doc="how a scheduler picks a machine on its local view")
    assignment: str = param("round_robin", choices=("round_robin", "random"), label='Job → scheduler', doc="how jobs are assigned to schedulers")
    # workload (the rate field is the subclass's)
    job_rate: float = param(0.0, lo=0.0, hi=1e7, widget=False,
                            doc="jobs per second; 0 = the rate the config's rate field states (ClusterConfig: "
                                "`load`; a lab that counts jobs sets it)")
    tasks_per_job: float = param(8.0, lo=1.0, hi=1000.0, step=1.0, slider=(1.0, 50.0), label='Mean tasks per job', doc="mean tasks per job")
    stages_per_job: int = param(1, lo=1, hi=20, label='Max stages per job', doc="at most this many stages (a DAG) per job")
    duration_dist: str = param("exponential", choices=("exponential", "lognormal"), label='Task durations', doc="task duration distribution")
    mean_task_duration: float = param(10.0, lo=0.01, hi=3600.0, step=0.5, slider=(2.0, 60.0),
                                      label='Mean task duration', unit='s', doc="mean task duration (s)")
    duration_sigma: float = param(1.0, lo=0.0, hi=3.0, step=0.1, label='Duration spread σ', doc="lognormal shape of durations")
    size_dist: str = param("exponential", choices=("exponential", "lognormal"), label='Task sizes', doc="task size distribution")
    mean_task_cpu: float = param(2.0, lo=1.0, hi=1024.0, step=0.5, label='Mean task CPU', unit='units', doc="mean CPU units per task")
    mean_task_mem: float = param(4.0, lo=1.0, hi=65_536.0, step=0.5, label='Mean task memory', unit='units', doc="mean memory units per task")
    # run
    horizon: float = param(300.0, lo=1.0, hi=1e6, step=10.0, slider=(10.0, 600.0), label='Simulated time', unit='s',
                           doc="simulated seconds")
    seed: int = seed_param()
    max_events: int = param(5_000_000, lo=1, hi=10**9, widget=False,
                            doc="refuse a config estimated to create more tasks plus view refreshes than this "
                                "(raise it on purpose)")

    #: the field that states the job arrival rate (a subclass's own; ``job_rate`` overrides it when set)
    RATE_FIELD: ClassVar[str] = "job_rate"
    WORK_CAP = "max_events"
    #: engine wall time per task on the reference 2-core machine (bench/engine.py; ~40-100 us)
    SECONDS_PER_TASK = 80e-6
    #: and per view refresh: a fixed cost plus a copy of the machines' free resources
    SECONDS_PER_REFRESH, SECONDS_PER_REFRESHED_MACHINE = 3e-6, 4e-9

    # ---- derived ---------------------------------------------------------------------------
    def speeds(self) -> list[float]:
        """Speed factor per hardware type (durations are divided by it)."""
        n = self.hardware_types
        return [1.0 + self.speed_spread * k / (n - 1) if n > 1 else 1.0 for k in range(n)]

    def arrival_rate(self) -> float:
        """Jobs per second: ``job_rate`` (a subclass: if set, else what its ``RATE_FIELD`` states)."""
        return self.job_rate

    def work(self) -> Work:
        """Events the run will process: tasks (arrival rate x horizon x tasks per job) plus view
        refreshes (horizon / update_delay, for each scheduler's view)."""
        rate = self.arrival_rate()
        tasks = rate * self.horizon * self.tasks_per_job
        refreshes = self.horizon / self.update_delay * self.schedulers if self.update_delay > 0 else 0.0
        seconds = tasks * self.SECONDS_PER_TASK + refreshes * (
            self.SECONDS_PER_REFRESH + self.machines * self.SECONDS_PER_REFRESHED_MACHINE)
        formula = (f"{count(tasks)} tasks = {rate:,.3g} jobs/s x horizon {self.horizon:g} s x "
                   f"{self.tasks_per_job:g} tasks per job")
        if refreshes:
            formula += (f", plus {count(refreshes)} view refreshes = horizon {self.horizon:g} s / update_delay "
                        f"{self.update_delay:g} s x {self.schedulers} schedulers")
        return Work(tasks + refreshes, "events", formula,
                    up=("machines", "cpu_per_machine", self.RATE_FIELD, "horizon", "tasks_per_job", "schedulers"),
                    down=("mean_task_duration", "mean_task_cpu", "update_delay"), seconds=seconds)

    def workload_spec(self) -> WorkloadSpec:
        return WorkloadSpec(
            arrival_rate=self.arrival_rate(), tasks_per_job=self.tasks_per_job,
            stages_per_job=self.stages_per_job, duration_dist=self.duration_dist,
            mean_task_duration=self.mean_task_duration, duration_sigma=self.duration_sigma,
            size_dist=self.size_dist, mean_task_cpu=self.mean_task_cpu, mean_task_mem=self.mean_task_mem,
        )


@dataclass(frozen=True)
class ClusterConfig(BaseClusterConfig):
    """A cluster of machines, parallel schedulers over a shared state, and a synthetic workload whose
    jobs arrive at the rate that offers ``load`` of the cluster's CPU.

    Example
    -------
    >>> ClusterConfig.ci().machines
    10
    >>> ClusterConfig(update_delay=-1)
    Traceback (most recent call last):
    ...
    ValueError: ClusterConfig.update_delay=-1 is out of range: allowed 0 <= update_delay <= 60 (seconds between snapshots of the central state pushed to schedulers' local views; 0 = always fresh)
    """

    load: float = param(0.7, lo=0.0, hi=3.0, closed="right", step=0.05, slider=(0.05, 1.5),
                        label='Offered CPU load', unit='share of capacity',
                        doc="offered CPU load: mean demand / cluster CPU capacity")

    RATE_FIELD = "load"

    @classmethod
    def ci(cls):
        return cls(machines=10, horizon=200.0, schedulers=2, think_time=0.01)

    @classmethod
    def default(cls):
        return cls(machines=50, horizon=300.0, schedulers=2)

    @classmethod
    def paper(cls):
        """RMiner's setting (§4): 1500 machines, 16 schedulers deciding 1000 tasks/s each on views
        refreshed every 0.5 s, ~12 tasks per job of ~5 s and ~1/64 of a node each (so both
        resources are counted in 1/64-node units: 64 per machine); load 0.4 gives ~8000 tasks/s,
        ~2.4 million tasks in 300 s."""
        return cls(machines=1500, cpu_per_machine=64, mem_per_machine=64, schedulers=16,
                   update_delay=0.5, think_time=0.001, load=0.4, tasks_per_job=12.0,
                   mean_task_duration=5.0, mean_task_cpu=1.0, mean_task_mem=1.0, horizon=300.0)

    def arrival_rate(self) -> float:
        """Jobs per second: ``job_rate`` if set, else the rate that offers ``load`` times the
        cluster's CPU capacity (nominal means)."""
        if self.job_rate > 0:
            return self.job_rate
        speeds = self.speeds()
        mean_speed = sum(speeds[i % len(speeds)] for i in range(self.machines)) / self.machines
        capacity = self.machines * self.cpu_per_machine * mean_speed
        work_per_job = self.tasks_per_job * self.mean_task_cpu * self.mean_task_duration
        return self.load * capacity / work_per_job
