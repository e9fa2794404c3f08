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

from ...config import Config, Work, field_of, param, seed_param
from .history import HistoryParams

#: HiGHS time per LP cell (one run at one step) and per solve on the 2-core machine, measured with
#: ``bench/panels.py 02`` and ``bench/morpheus.py``; the fleet replay adds a little per held-out run.
SECONDS_PER_CELL = 4e-6
SECONDS_PER_SOLVE = 6e-3


@dataclass(frozen=True)
class SLOConfig(Config):
    """A history of periodic, aperiodic and ad hoc jobs; SLOs inferred from it; R* per periodic job."""

    # ---- the history (no trace ships: a seeded generator stands in for the paper's month) ----------
    # the generator's own fields (HistoryParams), inherited: only the range, default and panel restated
    days: float = field_of(HistoryParams, "days", lo=1.0, step=1.0, slider=(3.0, 30.0), widget=True,
                           label="History", unit="days")
    n_periodic: int = field_of(HistoryParams, "n_periodic", lo=2, step=1, slider=(4, 40), widget=True,
                               label="Periodic templates")
    n_off_kilter: int = field_of(HistoryParams, "n_off_kilter")
    n_aperiodic: int = field_of(HistoryParams, "n_aperiodic")
    n_adhoc: int = field_of(HistoryParams, "n_adhoc")
    max_steps: int = field_of(HistoryParams, "max_steps", 90, lo=4, step=1, slider=(10, 180), widget=True,
                              label="Longest run K", unit="minutes")
    run_noise: float = field_of(HistoryParams, "run_noise", step=0.05, slider=(0.0, 0.5), widget=True,
                                label="Run-to-run noise σ")
    usage_noise: float = field_of(HistoryParams, "usage_noise", step=0.05, slider=(0.0, 0.5), widget=True,
                                  label="Usage noise σ")
    straggler_rate: float = field_of(HistoryParams, "straggler_rate", step=0.05, slider=(0.0, 0.5), widget=True,
                                     label="Straggler chance", unit="per stage")
    input_delay_rate: float = field_of(HistoryParams, "input_delay_rate", step=0.05)
    failure_rate: float = field_of(HistoryParams, "failure_rate", step=0.01)
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
    drift_factor: float = field_of(HistoryParams, "drift_factor", lo=0.2, hi=5.0, step=0.1, slider=(0.5, 2.5),
                                   widget=True, label="Run length after drift", unit="×")
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
        """The generator's parameters: the fields this config shares with :class:`HistoryParams` (every one
        of them, by name), then ``changes``. A shared value this config accepts the generator accepts too
        (their ranges nest), so a refusal here is about ``changes`` and names HistoryParams' field."""
        return HistoryParams.from_config(self, **changes)

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
