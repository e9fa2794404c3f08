"""What Morpheus records about each run (Fig. 3, steps 1a-1b), and the contracts it infers from it (step 2, 6).

A :class:`TelemetryLog` is the Telemetry-History store and the part of the provenance graph the
inference needs, as plain tables: each submission, each finished run's four times of Fig. 4 and
its per-minute skyline, and the first read of its output (which may come much later, or never).
Whoever sees runs happen writes to it: :meth:`TelemetryLog.from_history` replays a synthetic
history, and an agent on the cluster can call :meth:`~TelemetryLog.submit`,
:meth:`~TelemetryLog.finish` and :meth:`~TelemetryLog.read` as events fire. Inference reads it:
:meth:`~TelemetryLog.contracts` is :func:`.contract.infer_contracts` on the runs recorded so far,
and :meth:`~TelemetryLog.until` is the log as it stood at an earlier time (a run not yet finished is
not in it; an output not yet read has ``t_out_read = NaN``), so refitting on a schedule needs nothing
else.

Example
-------
>>> log = TelemetryLog()
>>> for r in range(6):                                    # an hourly job, read 40 minutes into the hour
...     t0 = 3600.0 * r
...     log.submit("etl", r, t0 + 60, period_start=t0)
...     log.finish("etl", r, t_in_avail=t0 + 30, t_start=t0 + 90, t_end=t0 + 690, skyline=[4, 4, 2, 2, 1, 1, 1, 1, 1, 1])
...     log.read("etl", r, t0 + 2400)
>>> log.runs()[["run", "t_end", "t_out_read"]].tail(2).to_dict("list")
{'run': [4, 5], 't_end': [15090.0, 18690.0], 't_out_read': [16800.0, 20400.0]}
>>> log.until(20000.0).runs().t_out_read.isna().tolist()[-1]      # run 5 ended, its output not yet read
True
>>> c = log.contracts(alpha=0.01)["etl"]
>>> c.period, c.d_j, c.skyline.round(3).tolist()
(3600.0, 2400.0, [4.0, 4.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import validate
from .contract import Contract, infer_contracts
from .skyline import DEFAULT_BETA_FRACTION

RUN_TABLE = ("template", "run", "period_start", "submit_time", "t_in_avail", "t_start", "t_end", "t_out_read",
             "failed")


@dataclass
class _Run:
    template: str
    run: int
    period_start: float
    submit_time: float
    t_in_avail: float = math.nan
    t_start: float = math.nan
    t_end: float = math.nan
    t_out_read: float = math.nan
    failed: bool = False
    skyline: np.ndarray | None = field(default=None, repr=False)

    @property
    def finished(self) -> bool:
        return self.skyline is not None


def _time(value, name: str) -> float:
    return validate.number(value, name, lo=0)


class TelemetryLog:
    """Submissions, finished runs (times and skylines) and first reads, keyed by (template, run)."""

    def __init__(self):
        self._runs: dict[tuple[str, int], _Run] = {}

    def __len__(self) -> int:
        return sum(r.finished for r in self._runs.values())

    # ---- writing -------------------------------------------------------------------------------------
    def submit(self, template: str, run: int, submit_time: float, *, period_start: float) -> None:
        """A run of ``template`` was submitted (its number ``run`` counts from 0 in period order)."""
        key = (str(template), int(run))
        if key in self._runs:
            raise ValueError(f"run {run} of template {template!r} was already submitted")
        self._runs[key] = _Run(key[0], key[1], _time(period_start, "period_start"), _time(submit_time, "submit_time"))

    def finish(self, template: str, run: int, *, t_in_avail: float, t_start: float, t_end: float, skyline,
               failed: bool = False) -> None:
        """The run ended at ``t_end`` having used ``skyline`` (containers per minute from ``t_start``)."""
        r = self._get(template, run)
        if r.finished:
            raise ValueError(f"run {run} of template {template!r} already finished")
        sky = np.asarray(skyline, dtype=float).ravel()
        if sky.size == 0 or not np.isfinite(sky).all() or (sky < 0).any():
            raise ValueError(f"skyline of run {run} of {template!r} must be a non-empty vector of finite numbers >= 0")
        t_in, t0, t1 = _time(t_in_avail, "t_in_avail"), _time(t_start, "t_start"), _time(t_end, "t_end")
        if t1 < t0:
            raise ValueError(f"run {run} of {template!r} ends before it starts (t_end={t_end!r} < t_start={t_start!r})")
        r.t_in_avail, r.t_start, r.t_end, r.failed, r.skyline = t_in, t0, t1, bool(failed), sky

    def read(self, template: str, run: int, t_out_read: float) -> None:
        """A consumer read the run's output at ``t_out_read`` (only the first read is kept)."""
        r = self._get(template, run)
        t = _time(t_out_read, "t_out_read")
        if r.finished and t < r.t_end:
            raise ValueError(f"run {run} of {template!r} was read at {t!r}, before it ended at {r.t_end!r}")
        if math.isnan(r.t_out_read) or t < r.t_out_read:
            r.t_out_read = t

    def _get(self, template: str, run: int) -> _Run:
        key = (str(template), int(run))
        if key not in self._runs:
            raise ValueError(f"run {run} of template {template!r} was never submitted")
        return self._runs[key]

    # ---- reading -------------------------------------------------------------------------------------
    def submissions(self) -> pd.DataFrame:
        """``template``, ``run``, ``submit_time``: the input of :func:`.inference.detect_periodic`."""
        rows = [(r.template, r.run, r.submit_time) for r in self._runs.values()]
        return pd.DataFrame(rows, columns=["template", "run", "submit_time"])

    def runs(self) -> pd.DataFrame:
        """One row per finished run (``RUN_TABLE`` columns): the input of :func:`.inference.infer_slo`."""
        rows = [tuple(getattr(r, c) for c in RUN_TABLE) for r in self._runs.values() if r.finished]
        return pd.DataFrame(rows, columns=list(RUN_TABLE)).sort_values(["template", "run"], ignore_index=True)

    def skylines(self) -> dict[str, list[np.ndarray]]:
        """Each template's successful runs' skylines in run order: the input of :func:`.skyline.fit_skyline`."""
        out: dict[str, list[np.ndarray]] = {}
        for r in sorted(self._runs.values(), key=lambda r: (r.template, r.run)):
            if r.finished and not r.failed:
                out.setdefault(r.template, []).append(r.skyline)
        return out

    def until(self, t: float) -> "TelemetryLog":
        """The log as it stood at time ``t``: submissions up to ``t``, runs finished by ``t``, reads by ``t``."""
        t = _time(t, "t")
        out = TelemetryLog()
        for key, r in self._runs.items():
            if r.submit_time > t:
                continue
            copy = _Run(r.template, r.run, r.period_start, r.submit_time)
            if r.finished and r.t_end <= t:
                copy.t_in_avail, copy.t_start, copy.t_end, copy.failed, copy.skyline = (
                    r.t_in_avail, r.t_start, r.t_end, r.failed, r.skyline)
                if r.t_out_read <= t:
                    copy.t_out_read = r.t_out_read
            out._runs[key] = copy
        return out

    def contracts(self, *, alpha: float = 0.01, beta_fraction: float = DEFAULT_BETA_FRACTION,
                  max_history: int | None = None, detect_options: dict | None = None,
                  slo_options: dict | None = None, templates=None, fit=None) -> dict[str, Contract]:
        """:func:`.contract.infer_contracts` on what is recorded (``templates``: only these; ``fit``: what fits
        R*, by default :func:`.skyline.fit_skyline`)."""
        validate.number(alpha, "alpha", lo=0, hi=1)
        subs, runs, skylines = self.submissions(), self.runs(), self.skylines()
        if templates is not None:
            keep = set(templates)
            subs, runs = subs[subs.template.isin(keep)], runs[runs.template.isin(keep)]
            skylines = {k: v for k, v in skylines.items() if k in keep}
        if subs.empty or runs.empty:
            return {}
        return infer_contracts(subs, runs, skylines, alpha=alpha, beta_fraction=beta_fraction,
                               max_history=max_history, detect_options=detect_options, slo_options=slo_options,
                               **({} if fit is None else {"fit": fit}))

    @classmethod
    def from_history(cls, history, templates=None) -> "TelemetryLog":
        """Every run of a synthetic :class:`.history.History` (``templates``: only these), as if recorded."""
        log = cls()
        runs = history.runs if templates is None else history.runs[history.runs.template.isin(set(templates))]
        for r in runs.itertuples(index=False):
            log.submit(r.template, r.run, r.submit_time, period_start=r.period_start)
            log.finish(r.template, r.run, t_in_avail=r.t_in_avail, t_start=r.t_start, t_end=r.t_end,
                       skyline=history.skylines[r.template][r.run], failed=r.failed)
            if not math.isnan(r.t_out_read):
                log.read(r.template, r.run, r.t_out_read)
        return log
