"""``CapstoneConfig``: one day on one cluster, with the five labs' mechanisms each switched on or off.

The cluster is the engine's shared-state family (``schedulers`` placement schedulers on local views
``update_delay`` seconds stale) under a queue layer of guaranteed tokens (one token = one CPU unit):
a reservation queue for periodic jobs and organisation queues for the rest. The five switches:

* ``morpheus``: periodic jobs run in a reservation: Morpheus's R* (fitted to their history) packed by
  Lab 03's LowCost into one plan of the day, each run reserved the peak of its instance's block from the
  block's first step to its last (a template the plan cannot fit keeps R* from its submission to its
  deadline); off, they queue with everything else on their user's (over-allocated) token count;
* ``wing``: the organisation queues admit by Wing-Agg's predicted value efficiency; off, first come
  first served;
* ``shaper``: each job gives back, at every vertex completion, the tokens its remaining stages cannot
  use (the greedy resource shaper); off, a job holds its tokens until it ends;
* ``stageopt``: each stage gets Lab 07's resource plan (IPA's placement and RAA's cores and memory
  for each vertex on the learned latency model, before the day runs: :mod:`.plans`; ``raa=False``
  keeps one token per vertex) and is placed by Lab 06's IPA on the scheduler's (stale) view; off, one
  token per vertex, placed task by task with the config's ``placement`` policy;
* ``rminer``: SmartRM diverts short tasks to a Resource Miner scheduler that runs them on shadow
  resources (released but not yet visible to any view); off, NoRM.

Example
-------
>>> CapstoneConfig.ci().machines, CapstoneConfig.paper().machines
(12, 500)
>>> CapstoneConfig.ci().switches()
{'morpheus': False, 'wing': False, 'shaper': False, 'stageopt': False, 'rminer': False}
>>> CapstoneConfig.ci().replace(load=0.0)
Traceback (most recent call last):
...
ValueError: CapstoneConfig.load=0.0 is out of range: allowed 0.05 <= load <= 2 (offered task work / the cluster's CPU over the day)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, Work, count, field_of, param, seed_param
from ..engine import ClusterConfig
from ..shaper.config import ShaperConfig
from ..wing.scheduling.config import WingConfig

#: the five mechanisms, in the order of the course (Labs 03, 05, 01, 06, 08-09)
SWITCHES = ("morpheus", "wing", "shaper", "stageopt", "rminer")
#: the layer of the cluster each acts on (the lab's first learning goal)
LAYERS = {
    "morpheus": "admission and reservation (the queue layer's reservation queue)",
    "wing": "ordering (which waiting job the organisation queues admit first)",
    "shaper": "the job's own holding (tokens it keeps while it runs)",
    "stageopt": "placement and size of a stage (which machines its vertices go to, and the cores each holds)",
    "rminer": "the schedulers' view of the cluster (resources no view shows yet)",
}


@dataclass(frozen=True)
class CapstoneConfig(Config):
    """One generated day through the five mechanisms (each a switch)."""

    morpheus: bool = param(False, doc="Morpheus: reservations sized by R* for periodic jobs (Lab 03)")
    wing: bool = param(False, doc="Wing: value-aware ordering of the organisation queues (Lab 05)")
    shaper: bool = param(False, doc="the shaper: jobs release tokens their remaining stages cannot use (Lab 01)")
    stageopt: bool = param(False, doc="the stage optimiser: RAA sizes and IPA places each stage (Labs 06-07)")
    rminer: bool = param(False, doc="Resource Miner: SmartRM harvests shadow resources (Labs 08-09)")
    raa: bool = param(True, widget=False,
                      doc="with the stage optimiser on: RAA also chooses each stage's resource plan (Lab 07); "
                          "off, IPA placement only (Lab 06)")
    # the cluster: the engine's fields (Labs 06 and 08-09 run on it), with the day's defaults and ranges
    machines: int = field_of(ClusterConfig, "machines", 16, lo=2, hi=2000, step=2, slider=(4, 64))
    cpu_per_machine: int = field_of(ClusterConfig, "cpu_per_machine", 8, lo=4, hi=128, widget=False,
                                    doc="CPU units (tokens) per machine")
    hardware_types: int = field_of(ClusterConfig, "hardware_types", 3, widget=False,
                                   doc="machine generations (speeds differ: IPA's input)")
    speed_spread: float = field_of(ClusterConfig, "speed_spread", 1.0, widget=False)
    schedulers: int = field_of(ClusterConfig, "schedulers", 4, hi=32, slider=(1, 8),
                               doc="parallel placement schedulers (Omega)")
    update_delay: float = field_of(ClusterConfig, "update_delay", 5.0, hi=30.0, step=0.5,
                                   doc="view staleness: seconds between refreshes of the schedulers' views")
    think_time: float = field_of(ClusterConfig, "think_time", 0.02, hi=1.0, step=0.005, slider=None, widget=False,
                                 doc="seconds a placement scheduler spends per task")
    placement: str = field_of(ClusterConfig, "placement", "worst_fit", choices=("first_fit", "best_fit", "worst_fit"),
                              widget=False, doc="task-by-task placement when the stage optimiser is off")
    # the day
    horizon: float = field_of(ClusterConfig, "horizon", 900.0, lo=60.0, hi=86_400.0, step=60.0, slider=(300.0, 3600.0),
                              label="Length of the day",
                              doc="length of the day (simulated seconds; the day is compressed)")
    load: float = field_of(ClusterConfig, "load", 0.8, lo=0.05, hi=2.0, closed="both", slider=(0.2, 1.4),
                           doc="offered task work / the cluster's CPU over the day")
    mean_task_duration: float = field_of(ClusterConfig, "mean_task_duration", 45.0, lo=0.5, hi=600.0, slider=None,
                                         widget=False, doc="mean task duration at speed 1 (s)")
    duration_sigma: float = field_of(ClusterConfig, "duration_sigma", 1.5, widget=False,
                                     doc="lognormal shape of task durations (short tasks are what Resource Miner mines)")
    periodic_share: float = param(0.25, lo=0.0, hi=0.9, step=0.05, doc="share of the day's jobs that are periodic")
    adhoc_share: float = param(0.4, lo=0.0, hi=1.0, step=0.05, widget=False,
                               doc="share of the non-periodic jobs that are ad hoc (the rest are recurring)")
    # the users' over-allocation (Lab 01's) and the organisations (Lab 05's)
    over_allocation: float = field_of(ShaperConfig, "over_allocation", 1.8, lo=1.0, hi=5.0, slider=None, widget=False,
                                      doc="users ask for this many times their job's peak in tokens")
    slo_slack: float = param(2.5, lo=1.0, hi=10.0, step=0.25, widget=False,
                             doc="a periodic job's deadline: submission + slack x its typical uncontended run time")
    orgs: int = field_of(WingConfig, "orgs", 3, hi=16, doc="organisation queues (equal guaranteed shares)")
    history_runs: int = param(6, lo=2, hi=40, widget=False, doc="past runs of every template (Morpheus's and Wing's history)")
    seed: int = seed_param()
    max_tasks: int = param(2_000_000, lo=1, hi=10**9, widget=False,
                           doc="refuse a day estimated to have more tasks than this (raise it on purpose)")

    WORK_CAP = "max_tasks"
    #: mean vertices per stage and stages per job of the generated day (what sets the job rate)
    MEAN_WIDTH, MAX_STAGES = 10.0, 4
    #: wall seconds per task of the composition with everything on, a fixed part and a part per machine (IPA's
    #: plans and the views scale with the cluster): bench/capstone.py measured 0.7-1.3 ms per task at default
    #: (16 machines) and 1.1 ms at paper (500 machines, 133 s for the day) on the shared 2-core machine
    SECONDS_PER_TASK, SECONDS_PER_TASK_MACHINE = 8e-4, 6e-7
    #: CPU seconds of Lab 07's IPA and RAA per stage of the day (the resource plans, with ``stageopt`` and ``raa``
    #: on): bench/capstone.py measured 10 ms at default (142 stages) and 9.5 ms at paper (12,117 stages), almost
    #: all of it the latency model's per-call cost (four predictions a stage), whatever the stage's width
    SECONDS_PER_STAGE_PLAN = 0.01

    def switches(self) -> dict[str, bool]:
        return {s: getattr(self, s) for s in SWITCHES}

    @property
    def tokens(self) -> int:
        """The cluster's tokens: every machine's CPU."""
        return self.machines * self.cpu_per_machine

    def mean_tasks_per_job(self) -> float:
        return self.MEAN_WIDTH * (1 + self.MAX_STAGES) / 2

    def job_rate(self) -> float:
        """Jobs per second that offer ``load`` of the cluster's CPU (each task holds one token)."""
        return self.load * self.tokens / (self.mean_tasks_per_job() * self.mean_task_duration)

    def work(self) -> Work:
        tasks = self.job_rate() * self.horizon * self.mean_tasks_per_job()
        plans = tasks / self.MEAN_WIDTH * self.SECONDS_PER_STAGE_PLAN if self.stageopt and self.raa else 0.0
        return Work(tasks, "tasks", f"{count(tasks)} tasks = {self.job_rate():.3g} jobs/s x horizon {self.horizon:g} s x "
                                    f"{self.mean_tasks_per_job():g} tasks per job",
                    up=("machines", "load", "horizon"), down=("mean_task_duration",),
                    seconds=tasks * (self.SECONDS_PER_TASK + self.machines * self.SECONDS_PER_TASK_MACHINE) + plans)

    @classmethod
    def ci(cls):
        return cls(machines=12, horizon=900.0)

    @classmethod
    def default(cls):
        return cls(machines=16, horizon=900.0)

    @classmethod
    def paper(cls):
        """A day of about 5,000 jobs on 500 machines."""
        return cls(machines=500, horizon=1800.0, schedulers=8)
