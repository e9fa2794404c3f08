"""Lab 03's configs: ``MorpheusConfig`` (§9's simulation in miniature, five arms) and ``TinyInstanceConfig``
(one tiny packing instance for the exact MILP of Theorem 6.1).

Example
-------
>>> MorpheusConfig.ci().cycle_minutes, TinyInstanceConfig().n_jobs
(120, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

from ...config import Config, Work, field_of, param, seed_param
from ..slo.config import SLOConfig

# ---- Lab 03: the simulation of §9 in miniature ---------------------------------------------------------------
#: the comparison ``MorpheusConfig.arm`` names (Fig. 10a's breakdown and Fig. 10b's reprovisioning on/off)
ARMS = ("user", "packing_only", "model_only", "morpheus", "morpheus_dra")
#: engine CPU time per task on the capacity scheduler with a dozen queues (``bench/panels.py 03``), and
#: per LP solve of a contract (cached across redraws that do not change the workload)
SECONDS_PER_SIM_TASK = 4e-4
SECONDS_PER_CONTRACT = 0.05
CYCLES = (120, 240, 480, 720, 1440)


@dataclass(frozen=True)
class MorpheusConfig(Config):
    """Periodic jobs in reservations packed by LowCost, ad hoc jobs in the rest, and DRA (Lab 03).

    One LCM cycle (``cycle_minutes``; the paper's is a day) of a cluster of ``machines`` machines of
    ``containers_per_machine`` containers. ``jobs`` periodic templates (a share ``hourly_share``
    hourly, the rest at the cycle's other divisors, half of them at the cycle itself) learn their
    contracts from ``history_runs`` past runs (Lab 02: SLO inference, then R* at ``alpha``); one cycle
    of their runs, with stragglers, input delays and one run held back ``late_start`` minutes on
    purpose, then runs on the engine's capacity scheduler beside ad hoc jobs offering ``adhoc_load``
    of the cluster. ``arm`` chooses how the periodic jobs are provisioned (see :data:`ARMS`).

    Example
    -------
    >>> MorpheusConfig.ci().jobs, MorpheusConfig.default().jobs, MorpheusConfig.paper().cycle_minutes
    (6, 10, 1440)
    >>> MorpheusConfig.ci().replace(arm="both")
    Traceback (most recent call last):
    ...
    ValueError: MorpheusConfig.arm='both' is not allowed: choose one of 'user', 'packing_only', 'model_only', 'morpheus', 'morpheus_dra' (how periodic jobs are provisioned: users' own counts on fair sharing, their counts packed by LowCost in [a_j, d_j], R* from each run's start, R* packed by LowCost, and the same with dynamic reprovisioning)
    """

    arm: str = param("morpheus_dra", choices=ARMS,
                     label='Provisioning', doc="how periodic jobs are provisioned: users' own counts on fair sharing, their counts packed "
                         "by LowCost in [a_j, d_j], R* from each run's start, R* packed by LowCost, and the same "
                         "with dynamic reprovisioning")
    # ---- the cluster ---------------------------------------------------------------------------------------------
    machines: int = param(12, lo=1, hi=2000, step=1, slider=(2, 24), label='Machines', doc="machines in the cluster")
    containers_per_machine: int = param(4, lo=1, hi=256, widget=False, doc="containers per machine (one core each)")
    # ---- the periodic jobs ---------------------------------------------------------------------------------------
    jobs: int = param(10, lo=1, hi=400, step=1, slider=(2, 14), label='Periodic jobs', doc="periodic jobs (templates)")
    hourly_share: float = param(0.5, lo=0.0, hi=1.0, step=0.05,
                                label='Hourly jobs', unit='share', doc="period mix: the share of hourly jobs (the rest divide the cycle; half of them "
                                    "run once per cycle)")
    cycle_minutes: int = param(240, choices=CYCLES,
                               label='Cycle simulated', unit='minutes', doc="the LCM cycle simulated, in minutes (the paper's: a day)")
    median_width: float = param(6.0, lo=1.0, hi=200.0, step=0.5, widget=False,
                                doc="median containers of a stage (lognormal across templates)")
    task_minutes: float = param(5.0, lo=0.25, hi=60.0, step=0.25, widget=False,
                                doc="length of a periodic job's tasks: a stage runs in waves of its width")
    slack: float = param(2.0, lo=0.25, hi=10.0, step=0.25, slider=(0.25, 5.0),
                         label='Median slack ratio', doc="median slack ratio (T_outRead - T_end) / (T_end - T_start) of the consumers (Fig. 9a)")
    run_noise: float = param(0.1, lo=0.0, hi=1.0, step=0.05, widget=False,
                             doc="lognormal sigma of a run's stage widths and lengths")
    straggler_rate: float = param(0.1, lo=0.0, hi=1.0, step=0.05, slider=(0.0, 0.5),
                                  label='Straggler chance', unit='per stage', doc="chance that a stage of a run has a straggler (one task 2-4x longer)")
    input_delay_rate: float = param(0.05, lo=0.0, hi=1.0, step=0.05, slider=(0.0, 0.5),
                                    label='Late-input chance', unit='per run', doc="chance that a run's input is written late (exponential, mean 5 minutes)")
    late_start: float = param(15.0, lo=0.0, hi=120.0, step=1.0, slider=(0.0, 30.0),
                              label='Held-back run delay', unit='minutes', doc="minutes one run is held back on purpose (Fig. 12)")
    # ---- ad hoc jobs -------------------------------------------------------------------------------------------
    adhoc_load: float = param(0.3, lo=0.0, hi=0.9, step=0.05, slider=(0.0, 0.75),
                              label='Ad hoc load', unit='share of cluster', doc="ad hoc work offered, as a share of the cluster (the paper: up to 75%)")
    adhoc_task_minutes: float = param(10.0, lo=0.5, hi=60.0, step=0.5, widget=False,
                                      doc="mean length of an ad hoc task (exponential)")
    # ---- Morpheus: contracts, packing, reprovisioning --------------------------------------------------------
    # Lab 02's fields, inherited (the same meaning): fewer runs here, each contract is fitted for every template
    history_runs: int = field_of(SLOConfig, "history_runs", 10, lo=5, hi=200, slider=(5, 40), widget=False,
                                 doc="past runs per job the contracts are inferred from (Lab 02)")
    alpha: float = field_of(SLOConfig, "alpha", widget=False)
    min_parallelism: float = param(0.5, lo=0.0, hi=1.0, step=0.05, widget=False,
                                   doc="each minute of a reservation is allocated in gangs of this share of its "
                                       "containers (0: one container at a time, LowCost may stretch it freely)")
    worst_case: str = param("keep", choices=("keep", "literal", "resume"), widget=False,
                            doc="when a periodic queue shrinks below what its runs hold: 'keep' lets running tasks "
                                "finish (YARN's capacity scheduler without preemption), 'literal' takes the youngest "
                                "back at once, their work lost (a reservation queue: no run ever holds more than its "
                                "reservation), 'resume' takes them back too but they keep their work (the LP's fluid "
                                "model: a run progresses by the container-time it is given)")
    reservations: str = param("per_job", choices=("per_job", "per_run"), widget=False,
                              doc="a periodic job's queues: 'per_job' is one queue for all its runs (a run that falls "
                                  "behind eats the next run's reservation), 'per_run' one reservation queue per run "
                                  "(Rayon's model, §9's worst case: a late run keeps nothing of the next one's)")
    alignment: float = param(1.0, lo=0.0, hi=10.0, step=0.1, widget=False,
                             doc="§7's alignment penalty weight for jobs whose input arrives at variable times")
    recent_counts_grants: bool = param(False, choices=(False, True), widget=False,
                                       doc="DRA's R_recent: False (ours) is the job's reservation alone, so a run "
                                           "whose reservation ended is refused once the look-back holds none of it; "
                                           "True (the other reading) counts earlier grants too")
    rho: float = param(2.0, lo=0.1, hi=10.0, step=0.1, slider=(0.5, 4.0),
                       label='DRA fudge factor ρ', doc="DRA's fudge factor: extra containers capped at rho * max(reservation in the last minutes)")
    hold_seconds: float = param(60.0, lo=10.0, hi=1800.0, step=10.0, slider=(30.0, 300.0),
                                label='DRA grant length T', unit='s', doc="T: seconds a DRA grant lasts before it is evaluated again (the paper: 60)")
    recent_seconds: float = param(120.0, lo=0.0, hi=3600.0, step=60.0, widget=False,
                                  doc="the look-back of R_recent (the paper: 2 minutes)")
    # ---- run -------------------------------------------------------------------------------------------------
    target_attainment: float = param(0.9, lo=0.05, hi=1.0, step=0.01, widget=False,
                                     doc="SLO attainment the footprint experiments look for")
    seed: int = seed_param()
    max_tasks: int = param(400_000, lo=1, hi=10**9, widget=False,
                           doc="refuse a config estimated to create more tasks than this (raise it on purpose)")

    WORK_CAP = "max_tasks"

    @classmethod
    def ci(cls):
        return cls(jobs=6, machines=8, cycle_minutes=120)

    @classmethod
    def default(cls):
        return cls()

    @classmethod
    def paper(cls):
        """A day of one-minute steps with 100 periodic jobs on 40 machines (minutes on the 2-core machine)."""
        return cls(jobs=100, machines=80, cycle_minutes=1440, hourly_share=0.4, history_runs=20)

    # ---- derived -----------------------------------------------------------------------------------------------
    def periods(self) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """Periods (minutes) and their weights: hourly with ``hourly_share``; half the rest at the cycle,
        half spread over its other divisors that are whole hours."""
        cycle = self.cycle_minutes
        others = [p for p in range(120, cycle, 60) if cycle % p == 0]
        rest = 1.0 - self.hourly_share
        periods, weights = [60], [self.hourly_share]
        if cycle > 60:
            periods.append(cycle)
            weights.append(rest if not others else rest / 2)
        for p in others:
            periods.append(p)
            weights.append(rest / 2 / len(others))
        return tuple(periods), tuple(weights)

    def runs_per_job(self) -> float:
        """Mean runs of a job in one cycle."""
        periods, weights = self.periods()
        return sum(w * self.cycle_minutes / p for p, w in zip(periods, weights)) / sum(weights)

    @property
    def containers(self) -> int:
        return self.machines * self.containers_per_machine

    def work(self) -> Work:
        """Tasks of one run: periodic (a run lasts ~15% of its period at its width, so a job's runs in a
        cycle hold ~0.15 x cycle x width container-minutes, in tasks of ``task_minutes``) and ad hoc
        (ad hoc load x containers over ~1.5 cycles, in tasks of (1 + containers per machine) / 2
        containers lasting ``adhoc_task_minutes``)."""
        periodic = self.jobs * 0.15 * self.cycle_minutes * self.median_width * 1.13 / self.task_minutes
        per_task = (1 + self.containers_per_machine) / 2 * self.adhoc_task_minutes
        adhoc = self.adhoc_load * self.containers * 1.5 * self.cycle_minutes / per_task
        tasks = periodic + adhoc
        seconds = tasks * SECONDS_PER_SIM_TASK * (1 + self.jobs / 20) + self.jobs * SECONDS_PER_CONTRACT
        return Work(tasks, "tasks",
                    f"{periodic:,.0f} periodic = {self.jobs} jobs x 0.15 x {self.cycle_minutes} min x "
                    f"{1.13 * self.median_width:.3g} containers / {self.task_minutes:g} min, plus {adhoc:,.0f} "
                    f"ad hoc = {self.adhoc_load:g} x {self.containers} containers x 1.5 x {self.cycle_minutes} min / "
                    f"({(1 + self.containers_per_machine) / 2:g} containers x {self.adhoc_task_minutes:g} min)",
                    up=("jobs", "cycle_minutes", "machines", "adhoc_load", "median_width"),
                    down=("task_minutes", "adhoc_task_minutes"), seconds=seconds)


# ---- Lab 03: LowCost against the exact optimum on tiny instances (Theorem 6.1) -------------------------------
@dataclass(frozen=True)
class TinyInstanceConfig(Config):
    """One seeded tiny packing instance (:func:`~cluster_sim.morpheus.packing.exact.tiny_instance`): small enough
    for the exact min-peak MILP, so LowCost's peak can be set beside the optimum.

    Example
    -------
    >>> TinyInstanceConfig().horizon, TinyInstanceConfig(seed=3).n_jobs
    (12, 4)
    """

    horizon: int = param(12, lo=2, hi=120, widget=False, doc="steps of the plan; every period divides it")
    n_jobs: int = param(4, lo=1, hi=20, widget=False, doc="periodic jobs, arriving one by one")
    capacity: int = param(6, lo=1, hi=1000, widget=False, doc="containers of the cluster")
    same_skyline: bool = param(True, widget=False,
                               doc="every job has one skyline (Theorem 6.1's assumption: jobs differ only in "
                                   "period and window)")
    seed: int = seed_param(widget=False)
