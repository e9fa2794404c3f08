"""The contract after drift (§2.3, Fig. 3 step 6): a job whose runs slow down, its contract refitted every day.

An agent that records runs on a simulated cluster feeds the same functions: it fills a
:class:`~.telemetry.TelemetryLog` and calls :func:`refit` (the contracts of the recorded runs with
the config's alpha, beta fraction, history length and percentiles), which is what
:func:`drift_experiment` does once a day.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .config import SLOConfig
from .contract import Contract
from .fleet import elastic_completion
from .history import DAY, History, generate_history
from .telemetry import TelemetryLog


def refit(log: TelemetryLog, config: SLOConfig, *, max_history: int | None = None, templates=None) -> dict[str, Contract]:
    """The contracts of what ``log`` recorded, with ``config``'s alpha, beta fraction, percentiles and
    thresholds; R* on the last ``max_history`` runs (default ``config.history_runs``)."""
    return log.contracts(alpha=config.alpha, beta_fraction=config.beta_fraction,
                         max_history=config.history_runs if max_history is None else max_history,
                         detect_options=config.detect_options(), slo_options=config.slo_options(),
                         templates=templates)


@dataclass(frozen=True, eq=False)
class DriftResult:
    """A job that slows down by ``config.drift_factor`` half-way, its contract refitted every day."""

    config: SLOConfig
    history: History
    template: str
    drift_run: int  # the first run after the change
    drift_time: float  # its period start (s)
    timeline: pd.DataFrame  # one row per (refit day, policy): contract and the next day's runs against it
    runs: pd.DataFrame  # one row per (run, policy): the contract in force and whether the run missed

    @property
    def settled_time(self) -> float:
        """The first midnight at which the sliding window holds only runs from after the change."""
        return self.drift_time + DAY * math.ceil(self.config.drift_window * DRIFT_PERIOD / DAY)

    def areas(self, policy: str = "window") -> tuple[float, float]:
        """Mean R* area of ``policy``'s contracts fitted before the change, and once settled after it."""
        tl = self.timeline[self.timeline.policy == policy]
        return float(tl[tl.time <= self.drift_time].area.mean()), float(tl[tl.time >= self.settled_time].area.mean())


DRIFT_PERIOD = 6 * 3600.0  # four runs a day: a refit a day sees four new ones


def drift_experiment(config: SLOConfig, *, days: float | None = None) -> DriftResult:
    """One 6-hourly job whose runs get ``drift_factor`` times longer half-way through ``days`` (default
    ``config.days``, at least 10 and long enough for the window to settle after the change). Every midnight the contract is refitted on the log recorded so far, once on
    the last ``drift_window`` runs and once on the last ``history_runs``; each run of the next day is
    replayed against the contract in force (R* only, no opportunistic capacity)."""
    # half the days before the change, and after it enough days for the window to hold only new runs, and two more
    settle = math.ceil(config.drift_window * DRIFT_PERIOD / DAY)
    days = max(config.days, 10.0, 2.0 * (settle + 2)) if days is None else float(days)
    p = config.history_params(days=days, n_periodic=1, n_off_kilter=0, n_aperiodic=0, n_adhoc=0,
                              periods=(DRIFT_PERIOD,), period_weights=(1.0,), failure_rate=0.0,
                              input_delay_rate=0.0, non_actionable_share=0.0, drift_at=0.5, drift_share=1.0,
                              drift_factor=config.drift_factor,
                              duration_share=(0.05, 0.25))
    history = generate_history(np.random.default_rng(config.seed), p)
    name = history.templates.index[0]
    drift_run = int(history.templates.drift_run[name])
    log = TelemetryLog.from_history(history)
    runs = history.runs_of(name)
    windows = {"window": config.drift_window, "history": config.history_runs}
    timeline, per_run = [], []
    for day in range(2, int(math.ceil(days))):
        now = day * DAY
        seen = log.until(now)
        nxt = runs[(runs.period_start >= now) & (runs.period_start < now + DAY)]
        if nxt.empty:
            break
        for label, n in windows.items():
            contract = refit(seen, config, max_history=n).get(name)
            if contract is None:
                continue
            missed = []
            for r in nxt.itertuples():
                minutes = elastic_completion(contract.skyline, history.skylines[name][r.run])
                finish = r.t_start - r.period_start + 60.0 * minutes
                missed.append(bool(finish > contract.d_j))
                per_run.append((int(r.run), float(r.period_start), label, day, bool(r.drifted), float(minutes),
                                float(finish), contract.d_j, missed[-1]))
            timeline.append((day, now, label, contract.n_runs, contract.a_j, contract.d_j, contract.fit.peak,
                             contract.fit.area, int(sum(missed)), len(missed)))
    tl = pd.DataFrame(timeline, columns=["day", "time", "policy", "n_runs", "a_j", "d_j", "peak", "area",
                                         "next_day_misses", "next_day_runs"])
    pr = pd.DataFrame(per_run, columns=["run", "period_start", "policy", "fitted_day", "drifted", "minutes", "finish",
                                        "d_j", "missed"])
    drift_time = float(runs.period_start[runs.run == drift_run].iloc[0]) if drift_run >= 0 else math.nan
    return DriftResult(config, history, name, drift_run, drift_time, tl, pr)
