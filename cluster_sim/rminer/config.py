"""``RMinerConfig``: one experiment of Labs 08-09 (a shared-state cluster, optionally with RMiner).

The paper's setting (§4.1.3, Table 3): 1500 machines x 64 CPU slots x 16 memory slots, 8 or 16
schedulers, a 0.5 s update delay, 1000 tasks/s per scheduler, 300 simulated seconds, jobs of 12
tasks on average, exponential task durations of mean ~5 s, demands of ~1/64 of a node, and a job
inter-arrival time of 1.43 ms at workload level 1x (0.7 ms at 2x; "200+ thousand jobs in 300 s").

``RMinerConfig`` is an engine config (a :class:`~cluster_sim.engine.BaseClusterConfig`, like the
engine's ``ClusterConfig``): the cluster, schedulers and workload fields are the engine's own, with
the paper's defaults. Two speak the paper's vocabulary:

* ``workload_level`` (the paper's "1x workload level", §4.1.3) is the job arrival rate as a multiple
  of the paper's 1x (1.43 ms between jobs per 1500 machines). It is not the engine's ``load``
  (``ClusterConfig.load``: offered CPU load), so it has a name of its own: ``load`` is refused here,
  naming ``workload_level``. The engine's ``job_rate`` (jobs per second, 0 = from ``workload_level``)
  still overrides it when set;
* ``think_time`` is one over the scheduling rate (:attr:`scheduling_rate`, tasks per second).

Smaller presets keep the paper's *per-machine* quantities: the job arrival rate and the schedulers'
rate both scale with the number of machines, so a 50-machine cluster sees the same utilisation and
the same ratio of scheduling capacity to offered tasks as the paper's 1500 machines.

Example
-------
>>> RMinerConfig.ci().machines, RMinerConfig.paper().machines
(50, 1500)
>>> round(RMinerConfig.paper().arrival_rate(), 1)   # jobs per second at workload level 1x
699.3
>>> RMinerConfig.ci().replace(load=2.0)
Traceback (most recent call last):
...
ValueError: unknown RMinerConfig field(s) ['load']; RMinerConfig.load is now workload_level (job arrival rate as a multiple of the paper's 1x (1.43 ms between jobs at 1500 machines); the engine's load is offered CPU load); the fields are: ...
>>> RMinerConfig.paper().scheduling_rate
1000.0
>>> RMinerConfig.ci().replace(mode="fast")
Traceback (most recent call last):
...
ValueError: RMinerConfig.mode='fast' is not allowed: choose one of 'none', 'plus1', 'safe', 'smart' (NoRM (plain shared-state), NoRM + 1 scheduler (one more normal scheduler deciding at the RM scheduler's rate: RMiner's extra capacity without shadow mining), SafeRM or SmartRM)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..config import Work, field_of, param
from ..engine import BaseClusterConfig, ClusterConfig

PAPER_MACHINES = 1500
PAPER_JOB_INTERARRIVAL = 1.43e-3  # seconds between jobs at workload level 1x on 1500 machines (Table 3)
PAPER_SCHEDULING_RATE = 1000.0  # tasks per second per scheduler (§4.1.3)
MODES = ("none", "plus1", "safe", "smart")
RM_MODES = ("safe", "smart")  # the modes with an RM scheduler


def scaled_rate(machines: int) -> float:
    """A scheduler's rate keeping the paper's ratio of scheduling capacity to offered tasks."""
    return PAPER_SCHEDULING_RATE * machines / PAPER_MACHINES


def scaled_think_time(machines: int) -> float:
    """Seconds per decision of a scheduler at :func:`scaled_rate`."""
    return 1.0 / scaled_rate(machines)


def engine_field(name: str, default, **changes):
    """The engine's field ``name`` with RMiner's default and whatever ``changes`` says (range, step,
    slider, doc): :func:`cluster_sim.config.field_of` of :class:`ClusterConfig`."""
    return field_of(ClusterConfig, name, default, **changes)


@dataclass(frozen=True)
class RMinerConfig(BaseClusterConfig):
    """Shared-state scheduling with NoRM / SafeRM / SmartRM (Wang et al., SoCC'23)."""

    # the engine's fields, with the paper's defaults
    machines: int = engine_field("machines", 100, step=10, slider=(10, 200),
                                 doc="machines in the cluster (the paper: 1500)")
    cpu_per_machine: int = engine_field("cpu_per_machine", 64, widget=False, doc="CPU slots per machine (the paper: 64)")
    mem_per_machine: int = engine_field("mem_per_machine", 1024, widget=False,
                                        doc="memory units per machine: the paper's 16 slots at 1/64-slot resolution")
    schedulers: int = engine_field("schedulers", 8, slider=(1, 32), doc="parallel schedulers (the paper: 8 or 16)")
    update_delay: float = engine_field("update_delay", 0.5, hi=5.0, step=0.05, slider=None,
                                       label="View update delay d_u",
                                       doc="seconds between view updates d_u (0 = views always fresh)")
    think_time: float = engine_field("think_time", scaled_think_time(100), lo=0.0, closed="right", slider=None,
                                     widget=False,
                                     doc="seconds a normal scheduler spends per task, 1 / scheduling rate "
                                         "(the paper: 1 ms, 1000 tasks/s at 1500 machines; presets scale it)")
    tasks_per_job: float = engine_field("tasks_per_job", 12.0, hi=100.0, slider=None, doc="mean tasks per job (the paper: 12)")
    mean_task_duration: float = engine_field("mean_task_duration", 5.0, lo=0.1, hi=60.0, step=0.1, slider=None,
                                             label="Mean task run time l", doc="mean task execution time l (s)")
    mean_task_cpu: float = engine_field("mean_task_cpu", 1.0, hi=64.0, unit="slots", doc="mean CPU slots per task (the paper: ~1.03 of 64)")
    mean_task_mem: float = engine_field("mean_task_mem", 16.0, hi=1024.0, step=1.0, widget=False,
                                        doc="mean memory units per task (1/64 of a node, like the CPU)")
    horizon: float = engine_field("horizon", 30.0, hi=3600.0, step=5.0, slider=(5.0, 60.0), doc="simulated seconds")
    max_events: int = engine_field("max_events", 20_000_000,
                                   doc="refuse a config estimated to create more tasks plus view refreshes than this "
                                       "(the paper's scale is about 2.5 million; raise it on purpose)")
    # the paper's workload level (§4.1.3: "1x" to "2x"), not the engine's offered CPU load
    workload_level: float = param(1.0, lo=0.05, hi=3.0, step=0.05, slider=(0.05, 2.5), label="Workload level",
                                  unit="× the paper's job rate",
                                  doc="job arrival rate as a multiple of the paper's 1x (1.43 ms between jobs at "
                                      "1500 machines); the engine's load is offered CPU load")
    # the workload's priorities
    priority_levels: int = param(4, lo=1, hi=16, widget=False, doc="job priorities 0 (lowest) .. levels-1, uniform")
    # Resource Miner
    mode: str = param("none", choices=MODES,
                      label='Resource Miner mode', doc="NoRM (plain shared-state), NoRM + 1 scheduler (one more normal scheduler deciding at the "
                          "RM scheduler's rate: RMiner's extra capacity without shadow mining), SafeRM or SmartRM")
    rm_speedup: float = param(1.0, lo=0.25, hi=16.0, step=0.25, slider=(0.25, 8.0),
                              label='RM scheduler speed-up', unit='×', doc="the RM scheduler decides this many times faster than a normal scheduler "
                                  "(the paper: 'lower cost than one conventional scheduler', no number)")
    filter_ratio: float = param(0.5, lo=0.0, hi=1.0, step=0.05,
                                label='Share sent to the RM scheduler', doc="share of the tasks passing the RM filter that go to the RM scheduler")
    filter_threshold: float = param(1.0, lo=0.25, hi=8.0, step=0.25,
                                    label='RM filter threshold', unit='update delays', doc="filter threshold on execution time, in update delays (the paper: 1; "
                                        "SmartRM-C: 2, SmartRM-A: 4)")
    adaptive_filter: bool = param(True, label='Adaptive filter (§3.3)', doc="scale the threshold by the five factors of §3.3")
    rm_max_priority: int = param(2, lo=0, hi=15, widget=False,
                                 doc="highest job priority the RM filter accepts (the top level is never preempted)")

    RATE_FIELD = "workload_level"
    RENAMED = {"load": "workload_level"}

    def validate(self) -> None:
        if self.mem_per_machine < self.mean_task_mem or self.cpu_per_machine < self.mean_task_cpu:
            raise ValueError(
                f"mean_task_cpu={self.mean_task_cpu!r} / mean_task_mem={self.mean_task_mem!r} must not exceed "
                f"cpu_per_machine={self.cpu_per_machine!r} / mem_per_machine={self.mem_per_machine!r}"
            )

    @classmethod
    def ci(cls):
        return cls(machines=50, think_time=scaled_think_time(50), horizon=20.0)

    @classmethod
    def default(cls):
        return cls(machines=100, think_time=scaled_think_time(100), horizon=20.0)

    @classmethod
    def paper(cls):
        return cls(machines=PAPER_MACHINES, think_time=1.0 / PAPER_SCHEDULING_RATE, horizon=300.0)

    # ---- derived ----------------------------------------------------------------------------
    @property
    def scheduling_rate(self) -> float:
        """Tasks per second one normal scheduler decides (1 / ``think_time``)."""
        return 1.0 / self.think_time

    @property
    def rm_think_time(self) -> float:
        """Seconds the RM scheduler (and NoRM + 1's extra scheduler) spends per task."""
        return self.think_time / self.rm_speedup

    @property
    def has_rm(self) -> bool:
        """Does this mode run RMiner (an RM filter and an RM scheduler)?"""
        return self.mode in RM_MODES

    def arrival_rate(self) -> float:
        """Jobs per second: ``job_rate`` if set, else the paper's 1/1.43 ms per 1500 machines, times
        ``workload_level``."""
        if self.job_rate > 0:
            return self.job_rate
        return self.workload_level * self.machines / (PAPER_MACHINES * PAPER_JOB_INTERARRIVAL)

    def offered_cpu_load(self) -> float:
        """Offered CPU demand / CPU capacity (about 0.44 at workload level 1x): what the engine's
        ``ClusterConfig.load`` would be for this workload."""
        work = self.arrival_rate() * self.tasks_per_job * self.mean_task_cpu * self.mean_task_duration
        return work / (self.machines * self.cpu_per_machine)

    def view_count(self) -> int:
        """Local views the central state refreshes: one per normal scheduler (NoRM + 1 adds one)."""
        return self.schedulers + (self.mode == "plus1")

    def shadow_period(self) -> float:
        """Longest time a released resource stays invisible to *every* local view: ``update_delay``,
        or ``update_delay / views`` when the views are refreshed one after another (staggered)."""
        if self.view_refresh == "staggered":
            return self.update_delay / self.view_count()
        return self.update_delay

    def work(self) -> Work:
        """Events a run processes: the engine's estimate (tasks plus view refreshes), with the fields that
        drive RMiner's job rate (it does not depend on task durations or sizes)."""
        w = super().work()
        return dataclasses.replace(w, up=("machines", "workload_level", "job_rate", "horizon", "tasks_per_job", "schedulers"),
                                   down=("update_delay",))
