"""``RMinerConfig``: one experiment of Labs 08-09 (a shared-state cluster, optionally with RMiner).

The paper's setting (§4.1.3, Table 3): 1500 machines x 64 CPU slots x 16 memory slots, 8 or 16
schedulers, a 0.5 s update delay, 1000 tasks/s per scheduler, 300 simulated seconds, jobs of 12
tasks on average, exponential task durations of mean ~5 s, demands of ~1/64 of a node, and a job
inter-arrival time of 1.43 ms at load 1x (0.7 ms at 2x; "200+ thousand jobs in 300 s").

Smaller presets keep the paper's *per-machine* quantities: the job arrival rate and the schedulers'
rate both scale with the number of machines, so a 50-machine cluster sees the same utilisation and
the same ratio of scheduling capacity to offered tasks as the paper's 1500 machines.

Example
-------
>>> RMinerConfig.ci().machines, RMinerConfig.paper().machines
(50, 1500)
>>> round(RMinerConfig.paper().job_arrival_rate(), 1)   # jobs per second at load 1x
699.3
>>> RMinerConfig.ci().replace(mode="fast")
Traceback (most recent call last):
...
ValueError: RMinerConfig.mode='fast' is not allowed: choose one of 'none', 'safe', 'smart' (NoRM (plain shared-state), SafeRM or SmartRM)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine import ClusterConfig
from ..config import Config, Work, count, param

PAPER_MACHINES = 1500
PAPER_JOB_INTERARRIVAL = 1.43e-3  # seconds between jobs at load 1x on 1500 machines (Table 3)
PAPER_SCHEDULING_RATE = 1000.0  # tasks per second per scheduler (§4.1.3)


def scaled_rate(machines: int) -> float:
    """A scheduler's rate keeping the paper's ratio of scheduling capacity to offered tasks."""
    return PAPER_SCHEDULING_RATE * machines / PAPER_MACHINES


@dataclass(frozen=True)
class RMinerConfig(Config):
    """Shared-state scheduling with NoRM / SafeRM / SmartRM (Wang et al., SoCC'23)."""

    # cluster
    machines: int = param(100, lo=1, hi=20_000, step=10, slider=(10, 200), doc="machines in the cluster (the paper: 1500)")
    cpu_per_machine: int = param(64, lo=1, hi=1024, widget=False, doc="CPU slots per machine (the paper: 64)")
    mem_per_machine: int = param(1024, lo=1, hi=65536, widget=False,
                                 doc="memory units per machine: the paper's 16 slots at 1/64-slot resolution")
    # shared state
    schedulers: int = param(8, lo=1, hi=64, slider=(1, 32), doc="parallel schedulers (the paper: 8 or 16)")
    scheduling_rate: float = param(scaled_rate(100), lo=0.1, hi=100_000.0, widget=False,
                                   doc="tasks per second one scheduler decides (the paper: 1000 at 1500 machines)")
    update_delay: float = param(0.5, lo=0.0, hi=5.0, step=0.05,
                                doc="seconds between view updates d_u (0 = views always fresh)")
    view_refresh: str = param("synchronous", choices=("synchronous", "staggered"),
                              doc="all local views refreshed at once, or spread evenly over the period")
    placement: str = param("random", choices=("first_fit", "best_fit", "worst_fit", "random"),
                           doc="how a normal scheduler picks a machine on its local view")
    assignment: str = param("round_robin", choices=("round_robin", "random"), doc="how jobs go to schedulers")
    # workload
    load: float = param(1.0, lo=0.05, hi=3.0, step=0.05, slider=(0.05, 2.5),
                        doc="job arrival rate as a multiple of the paper's 1x (1.43 ms between jobs at 1500 machines)")
    mean_task_duration: float = param(5.0, lo=0.1, hi=60.0, step=0.1, doc="mean task execution time l (s)")
    duration_dist: str = param("exponential", choices=("exponential", "lognormal"),
                               doc="task duration distribution (the paper's model: exponential)")
    tasks_per_job: float = param(12.0, lo=1.0, hi=100.0, step=1.0, doc="mean tasks per job (the paper: 12)")
    mean_task_cpu: float = param(1.0, lo=1.0, hi=64.0, step=0.5, doc="mean CPU slots per task (the paper: ~1.03 of 64)")
    mean_task_mem: float = param(16.0, lo=1.0, hi=1024.0, step=1.0, widget=False,
                                 doc="mean memory units per task (1/64 of a node, like the CPU)")
    priority_levels: int = param(4, lo=1, hi=16, widget=False, doc="job priorities 0 (lowest) .. levels-1, uniform")
    # Resource Miner
    mode: str = param("none", choices=("none", "safe", "smart"), doc="NoRM (plain shared-state), SafeRM or SmartRM")
    filter_ratio: float = param(0.5, lo=0.0, hi=1.0, step=0.05,
                                doc="share of the tasks passing the RM filter that go to the RM scheduler")
    filter_threshold: float = param(1.0, lo=0.25, hi=8.0, step=0.25,
                                    doc="filter threshold on execution time, in update delays (SmartRM-C: 2, -A: 4)")
    waiting_allowance: float = param(1.0, lo=0.0, hi=8.0, step=0.5, widget=False,
                                     doc="SmartRM's budget for the resource waiting delay W_d, in update delays")
    adaptive_filter: bool = param(True, doc="scale the threshold by the five factors of §3.3")
    rm_max_priority: int = param(2, lo=0, hi=15, widget=False,
                                 doc="highest job priority the RM filter accepts (the top level is never preempted)")
    # run
    horizon: float = param(30.0, lo=1.0, hi=3600.0, step=5.0, slider=(5.0, 60.0), doc="simulated seconds")
    seed: int = param(0, lo=0, hi=2**31 - 1, doc="random seed (same config and seed: identical results)")
    max_events: int = param(20_000_000, lo=1, hi=10**9, widget=False,
                            doc="refuse a config estimated to create more tasks plus view refreshes than this "
                                "(the paper's scale is about 2.5 million; raise it on purpose)")

    WORK_CAP = "max_events"

    def validate(self) -> None:
        if self.mem_per_machine < self.mean_task_mem or self.cpu_per_machine < self.mean_task_cpu:
            raise ValueError(
                f"mean_task_cpu={self.mean_task_cpu!r} / mean_task_mem={self.mean_task_mem!r} must not exceed "
                f"cpu_per_machine={self.cpu_per_machine!r} / mem_per_machine={self.mem_per_machine!r}"
            )

    @classmethod
    def ci(cls):
        return cls(machines=50, scheduling_rate=scaled_rate(50), horizon=20.0)

    @classmethod
    def default(cls):
        return cls(machines=100, scheduling_rate=scaled_rate(100), horizon=20.0)

    @classmethod
    def paper(cls):
        return cls(machines=PAPER_MACHINES, scheduling_rate=PAPER_SCHEDULING_RATE, horizon=300.0)

    # ---- derived ----------------------------------------------------------------------------
    def job_arrival_rate(self) -> float:
        """Jobs per second: the paper's 1/1.43 ms per 1500 machines, times ``load``."""
        return self.load * self.machines / (PAPER_MACHINES * PAPER_JOB_INTERARRIVAL)

    def offered_cpu_load(self) -> float:
        """Offered CPU demand / CPU capacity (about 0.44 at load 1x)."""
        work = self.job_arrival_rate() * self.tasks_per_job * self.mean_task_cpu * self.mean_task_duration
        return work / (self.machines * self.cpu_per_machine)

    def work(self) -> Work:
        """Events a run processes: tasks (jobs/s x horizon x tasks per job) plus view refreshes
        (horizon / update_delay for each scheduler's view), at the engine's cost per event."""
        rate = self.job_arrival_rate()
        tasks = rate * self.horizon * self.tasks_per_job
        refreshes = self.horizon / self.update_delay * self.schedulers if self.update_delay > 0 else 0.0
        seconds = tasks * ClusterConfig.SECONDS_PER_TASK + refreshes * (
            ClusterConfig.SECONDS_PER_REFRESH + self.machines * ClusterConfig.SECONDS_PER_REFRESHED_MACHINE)
        formula = f"{count(tasks)} tasks = {rate:,.3g} jobs/s x horizon {self.horizon:g} s x {self.tasks_per_job:g} per job"
        if refreshes:
            formula += (f", plus {count(refreshes)} view refreshes = horizon {self.horizon:g} s / update_delay "
                        f"{self.update_delay:g} s x {self.schedulers} schedulers")
        return Work(tasks + refreshes, "events", formula, up=("machines", "load", "horizon", "tasks_per_job", "schedulers"),
                    down=("update_delay",), seconds=seconds)

    def cluster_config(self) -> ClusterConfig:
        """The engine's config for the same cluster, schedulers and workload."""
        return ClusterConfig(
            machines=self.machines, cpu_per_machine=self.cpu_per_machine, mem_per_machine=self.mem_per_machine,
            schedulers=self.schedulers, update_delay=self.update_delay, view_refresh=self.view_refresh,
            think_time=1.0 / self.scheduling_rate, placement=self.placement, assignment=self.assignment,
            job_rate=self.job_arrival_rate(), tasks_per_job=self.tasks_per_job, stages_per_job=1,
            duration_dist=self.duration_dist, mean_task_duration=self.mean_task_duration,
            mean_task_cpu=self.mean_task_cpu, mean_task_mem=self.mean_task_mem,
            horizon=self.horizon, seed=self.seed,
            max_events=self.max_events,  # the same estimate as work(), checked there first
        )
