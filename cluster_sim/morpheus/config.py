"""``SLOConfig``: one experiment of Lab 02 (a synthetic history, SLO inference and the job resource model).

A run draws a history of a cluster's jobs (:mod:`.history`), finds its periodic jobs and their
deadlines (§4), fits R* for each actionable one on its most recent ``history_runs`` training runs
(§5) and replays the held-out runs against R* and against the users' own provisioning with no
opportunistic capacity (§9.1, Fig. 9). The generator's knobs that a student moves (noise,
stragglers, the history's size) sit beside the inference's (percentiles, thresholds) and the LP's
(alpha, the regulariser's beta fraction).

Work grows with the LPs: each actionable template's R* is an LP over ``history_runs`` runs of up
to ``max_steps`` minutes (two solves: V, then the regularised one). :meth:`SLOConfig.work`
estimates the LP cells (templates x runs x steps) before anything runs, and a config over
``max_lp_cells`` is refused.

Example
-------
>>> SLOConfig.ci().n_periodic, SLOConfig.default().n_periodic, SLOConfig.paper().days
(10, 16, 30.0)
>>> SLOConfig.ci().history_params().straggler_rate
0.1
>>> SLOConfig.ci().replace(alpha=1.5)
Traceback (most recent call last):
...
ValueError: SLOConfig.alpha=1.5 is out of range: allowed 0 <= alpha <= 1 (weight of over-allocation against the final debt (the paper's best: 0.01))
>>> SLOConfig.ci().replace(alpha=1.0)
Traceback (most recent call last):
...
ValueError: SLOConfig.alpha=1.0 is out of range: allowed 0 <= alpha < 1 (at alpha = 1 the LP weighs only over-allocation and R* = 0, an empty contract; the paper's best: 0.01)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..config import Config, Work, param, seed_param
from .history import HistoryParams

#: HiGHS time per LP cell (one run at one step) and per solve on the 2-core machine, measured with
#: ``bench/panels.py 02`` and ``bench/morpheus.py``; the fleet replay adds a little per held-out run.
SECONDS_PER_CELL = 4e-6
SECONDS_PER_SOLVE = 6e-3


@dataclass(frozen=True)
class SLOConfig(Config):
    """A history of periodic, aperiodic and ad hoc jobs; SLOs inferred from it; R* per periodic job."""

    # ---- the history (no trace ships: a seeded generator stands in for the paper's month) ----------
    days: float = param(14.0, lo=1.0, hi=120.0, step=1.0, slider=(3.0, 30.0),
                        label='History', unit='days', doc="days of history (the paper: one month)")
    n_periodic: int = param(20, lo=2, hi=500, step=1, slider=(4, 40),
                            label='Periodic templates', doc="periodic templates whose period divides a day (hourly, daily, ...)")
    n_off_kilter: int = param(2, lo=0, hi=100, widget=False, doc="periodic templates with a 58 or 100 minute period")
    n_aperiodic: int = param(3, lo=0, hi=100, widget=False, doc="recurring templates with irregular arrivals")
    n_adhoc: int = param(20, lo=0, hi=5000, widget=False, doc="one-off jobs")
    max_steps: int = param(90, lo=4, hi=1440, step=1, slider=(10, 180),
                           label='Longest run K', unit='minutes', doc="longest typical run, in one-minute steps (the LP's K)")
    run_noise: float = param(0.1, lo=0.0, hi=1.0, step=0.05, slider=(0.0, 0.5),
                             label='Run-to-run noise σ', doc="noise: lognormal sigma of a run's stage widths and lengths")
    usage_noise: float = param(0.15, lo=0.0, hi=1.0, step=0.05, slider=(0.0, 0.5),
                               label='Usage noise σ', doc="lognormal sigma of the minute-by-minute usage")
    straggler_rate: float = param(0.1, lo=0.0, hi=1.0, step=0.05, slider=(0.0, 0.5),
                                  label='Straggler chance', unit='per stage', doc="chance that a stage of a run has a straggler tail")
    input_delay_rate: float = param(0.05, lo=0.0, hi=1.0, step=0.05, widget=False,
                                    doc="chance that a run's input arrives late")
    failure_rate: float = param(0.03, lo=0.0, hi=0.5, step=0.01, widget=False, doc="chance that a run fails")
    # ---- SLO inference (§4) ----------------------------------------------------------------------------
    a_percentile: float = param(95.0, lo=0.0, hi=100.0, step=5.0,
                                label='Input-availability percentile a_j', unit='%', doc="a_j: this percentile of T_inAvail (the paper: 95th)")
    d_percentile: float = param(50.0, lo=0.0, hi=100.0, step=5.0,
                                label='Deadline percentile d_j', unit='%', doc="d_j: this percentile of T_outRead (the paper: 50th)")
    cv_threshold: float = param(0.1, lo=0.0, hi=2.0, step=0.01, widget=False,
                                doc="largest CV = MAD/median of inter-arrivals (periodic) and of T_outRead (actionable)")
    min_slack_ratio: float = param(0.25, lo=0.0, hi=10.0, step=0.05, widget=False,
                                   doc="least median (T_outRead - T_end) / (T_end - T_start) for an actionable deadline")
    # ---- the job resource model (§5) -------------------------------------------------------------------
    alpha: float = param(0.01, lo=0.0, hi=1.0, step=0.01, slider=(0.0, 0.99),
                         label='Over-allocation weight α', doc="weight of over-allocation against the final debt (the paper's best: 0.01)")
    beta_fraction: float = param(0.1, lo=0.0, hi=10.0, step=0.05, slider=(0.0, 2.0),
                                 label='Regulariser β', unit='× V', doc="the regulariser's weight beta as a fraction of V (the paper: 0.1)")
    history_runs: int = param(20, lo=2, hi=1000, step=1, slider=(2, 40),
                              label='Training runs', doc="runs of history R* is fitted on (the most recent training runs)")
    train_fraction: float = param(0.7, lo=0.1, hi=0.9, step=0.05, widget=False,
                                  doc="share of each template's runs to learn from; the rest are held out (the paper: 70%)")
    # ---- the contract after drift (§2.3) ---------------------------------------------------------------
    drift_factor: float = param(1.4, lo=0.2, hi=5.0, step=0.1, slider=(0.5, 2.5),
                                label='Run length after drift', unit='×', doc="a drifting job's run length after the change (§2.3: 40% slower on another SKU)")
    drift_window: int = param(7, lo=2, hi=200, step=1, slider=(2, 30),
                              label='Refit window', unit='runs', doc="runs in the sliding window the contract is refitted on after drift")
    # ---- run ----------------------------------------------------------------------------------------------
    seed: int = seed_param()
    max_lp_cells: int = param(3_000_000, lo=1, hi=10**10, widget=False,
                              doc="refuse a config estimated to need more LP cells than this (raise it on purpose)")

    WORK_CAP = "max_lp_cells"

    def validate(self) -> None:
        if self.alpha >= 1.0:
            # at alpha = 1 the LP's objective weighs only over-allocation: R* = 0 minimises it, an empty
            # contract that "wastes nothing" and promises nothing
            raise ValueError(f"SLOConfig.alpha={self.alpha!r} is out of range: allowed 0 <= alpha < 1 (at alpha = 1 "
                             "the LP weighs only over-allocation and R* = 0, an empty contract; the paper's best: 0.01)")
        self.history_params()  # the generator's own cross-field checks, named by its fields

    @classmethod
    def ci(cls):
        return cls(days=8.0, n_periodic=10, n_adhoc=10, max_steps=60)

    @classmethod
    def default(cls):
        return cls(days=10.0, n_periodic=16)

    @classmethod
    def paper(cls):
        """A month of history (the paper keeps about one), 100 periodic templates, runs up to 4 hours,
        R* fitted on the last 30 runs; minutes on the 2-core machine."""
        return cls(days=30.0, n_periodic=100, n_off_kilter=5, n_aperiodic=10, n_adhoc=200, max_steps=240,
                   history_runs=30)

    # ---- derived --------------------------------------------------------------------------------------
    def history_params(self, **changes) -> HistoryParams:
        """The generator's parameters for this config (``changes`` override them)."""
        fields = dict(days=self.days, n_periodic=self.n_periodic, n_off_kilter=self.n_off_kilter,
                      n_aperiodic=self.n_aperiodic, n_adhoc=self.n_adhoc, max_steps=self.max_steps,
                      run_noise=self.run_noise, usage_noise=self.usage_noise, straggler_rate=self.straggler_rate,
                      input_delay_rate=self.input_delay_rate, failure_rate=self.failure_rate)
        fields.update(changes)
        try:
            return HistoryParams(**fields)
        except ValueError as e:  # name our field, not the generator's class
            raise ValueError(str(e).replace("HistoryParams.", "SLOConfig.")) from None

    def slo_options(self) -> dict:
        """Keyword arguments of :func:`.inference.infer_slo` for this config."""
        return dict(a_percentile=self.a_percentile, d_percentile=self.d_percentile,
                    cv_threshold=self.cv_threshold, min_slack_ratio=self.min_slack_ratio)

    def detect_options(self) -> dict:
        """Keyword arguments of :func:`.inference.detect_periodic` for this config."""
        return dict(cv_threshold=self.cv_threshold)

    def runs_per_template(self) -> int:
        """Training runs R* can use at most: the hourly templates' (the most frequent period)."""
        return max(2, min(self.history_runs, math.ceil(self.train_fraction * self.days * 24)))

    def work(self) -> Work:
        """LP cells of one run: templates x runs of history x steps (a run's skyline can outgrow
        ``max_steps`` by its stragglers and noise: x1.5)."""
        templates = self.n_periodic + self.n_off_kilter
        runs = self.runs_per_template()
        steps = 1.5 * self.max_steps
        cells = templates * runs * steps
        seconds = 2 * (cells * SECONDS_PER_CELL + templates * SECONDS_PER_SOLVE)
        return Work(cells, "LP cells",
                    f"{templates} periodic templates x {runs} runs of history x {steps:g} steps",
                    up=("n_periodic", "n_off_kilter", "history_runs", "days", "max_steps"), down=(),
                    seconds=seconds)


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
    history_runs: int = param(10, lo=5, hi=200, step=1, widget=False,
                              doc="past runs per job the contracts are inferred from (Lab 02)")
    alpha: float = param(0.01, lo=0.0, hi=1.0, step=0.01, widget=False,
                         doc="the LP's weight of over-allocation against the final debt (the paper: 0.01)")
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
    """One seeded tiny packing instance (:func:`~cluster_sim.morpheus.exact.tiny_instance`): small enough
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
