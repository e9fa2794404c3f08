"""Lab 03's periodic workload as the engine runs it: templates, their runs as tasks, and what is recorded.

Pure (no Mesa). A :class:`Template` is a periodic job as a cluster sees it: a period, when its input
is usually written and when it is submitted (minutes after the period start), a chain of stages (a
width in containers and a length in minutes each), the length of its tasks, the container count
its user provisions by hand, and when its consumer reads the output. :func:`make_templates` draws them from a generator.

A :class:`Run` is one instance of a template. A stage of width ``w`` and length ``L`` is about
``w * L / task_minutes`` tasks (one container each) of which the job keeps at most ``w`` going at
once (its parallelism, as a framework's container request sets it): with ``w`` containers the stage
takes about ``L``, with fewer it takes longer, and more does not help. The inherent variance of §7
is drawn from the same generator: noisy widths and lengths, **stragglers** (a task much longer than
the others, which holds the next stage back), **input delays** (the input written late, so the run
is submitted late) and, for the run a caller picks, a **deliberately late start** (Fig. 12).

What a telemetry system records of a run is its **skyline**: containers used per one-minute step
from its start. :func:`skyline_from_intervals` computes it exactly from task start and finish times
(the time each task held its container in each minute, divided by the minute);
:func:`run_intervals` list-schedules a run's tasks on a number of containers (each task starts as
soon as one of them is free; a stage starts when the previous one has ended), and
:func:`unconstrained_skyline` is the skyline of a run that gets its full width, which is what the
engine records on a cluster with room to spare (a test checks it). :func:`history_log` fills a
:class:`~cluster_sim.morpheus.slo.telemetry.TelemetryLog` with past runs of every template, so the
contracts of Lab 02 (SLO inference, then R* by the LP) can be inferred from it.

Time: templates are in minutes (the plan's steps); runs, tasks and the log in seconds.

Example
-------
>>> import numpy as np
>>> t = Template("etl", period=60, input_offset=2.0, submit_offset=3.0, stages=((4, 6.0), (2, 4.0)),
...              task_minutes=2.0, provisioned=8, read_offset=30.0)
>>> run = draw_run(np.random.default_rng(0), t, 0, run_noise=0.0, task_noise=0.0, straggler_rate=0.0,
...                input_delay_rate=0.0)
>>> [len(d) for d in run.durations], run.widths, run.submit_time   # 12 tasks 4 at a time, 4 tasks 2 at a time
([12, 4], [4, 2], 180.0)
>>> unconstrained_skyline(run).tolist()          # 4 containers for 6 minutes, then 2 for 4
[4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 2.0, 2.0, 2.0, 2.0]
>>> minutes_on(run, 2)                           # on 2 containers the first stage takes twice as long
16
>>> skyline_from_intervals([0.0, 30.0], [90.0, 60.0]).tolist()    # 1.5 minutes and a half minute
[1.5, 0.5]
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ...config import shown
from ..slo.telemetry import TelemetryLog

STEP = 60.0  # seconds per plan step (one minute)

__all__ = ["STEP", "Template", "Run", "make_templates", "draw_run", "list_schedule", "run_intervals",
           "skyline_from_intervals", "unconstrained_skyline", "minutes_on", "history_log", "history_runs"]


def _positive(name: str, value, *, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}={shown(value)} is not allowed: need a number")
    try:
        v = float(value)
    except OverflowError:  # an int too large for a float
        v = math.inf
    if not math.isfinite(v) or v < 0 or (strict and v == 0):
        raise ValueError(f"{name}={shown(value)} is out of range: need a finite {name} {'>' if strict else '>='} 0")
    return v


@dataclass(frozen=True)
class Template:
    """A periodic job (times in minutes after the period start, widths in containers)."""

    name: str
    period: int
    input_offset: float
    submit_offset: float
    stages: tuple  # ((width, minutes), ...) in order: a chain
    task_minutes: float
    provisioned: int
    read_offset: float

    def __post_init__(self):
        if not isinstance(self.period, (int, np.integer)) or self.period < 1:
            raise ValueError(f"Template {self.name!r}: period={self.period!r} is not allowed: whole minutes >= 1")
        for f in ("input_offset", "submit_offset", "read_offset"):
            _positive(f"Template {self.name!r}: {f}", getattr(self, f))
        _positive(f"Template {self.name!r}: task_minutes", self.task_minutes, strict=True)
        if self.submit_offset < self.input_offset:
            raise ValueError(f"Template {self.name!r}: submit_offset={self.submit_offset!r} is before "
                             f"input_offset={self.input_offset!r}: a job is submitted once its input is written")
        if not self.stages or any(len(s) != 2 or not 1 <= s[0] < 1e308 or not 0 < s[1] < 1e308 for s in self.stages):
            raise ValueError(f"Template {self.name!r}: stages={self.stages!r} is not allowed: need "
                             "(width >= 1, minutes > 0) per stage, both finite")
        if not isinstance(self.provisioned, (int, np.integer)) or self.provisioned < 1:
            raise ValueError(f"Template {self.name!r}: provisioned={self.provisioned!r} is not allowed: "
                             "whole containers >= 1")

    @property
    def minutes(self) -> float:
        """The typical run's length (the stages' lengths added up)."""
        return float(sum(m for _, m in self.stages))

    @property
    def peak(self) -> float:
        return float(max(w for w, _ in self.stages))

    @property
    def area(self) -> float:
        """Container-minutes of the typical run."""
        return float(sum(w * m for w, m in self.stages))


@dataclass(eq=False)
class Run:
    """One instance of a template: task durations per stage (seconds) and its times (seconds)."""

    template: Template
    instance: int
    period_start: float
    input_time: float  # when the input was written
    submit_time: float
    durations: list = field(default_factory=list)  # one array of task durations (seconds) per stage
    widths: list = field(default_factory=list)  # the most tasks of each stage the run keeps going at once
    input_delayed: bool = False
    straggled: bool = False
    late_start: float = 0.0  # seconds it was held back on purpose (Fig. 12)

    @property
    def n_tasks(self) -> int:
        return int(sum(d.size for d in self.durations))


def make_templates(rng: np.random.Generator, n: int, *, periods, weights, median_width: float = 6.0,
                   width_sigma: float = 0.5, duration_share=(0.1, 0.2), task_minutes: float = 2.0, slack: float = 2.0, under_share: float = 0.25,
                   tenfold_share: float = 0.2) -> list[Template]:
    """``n`` templates: periods drawn from ``periods`` (minutes) with ``weights``; 1-3 stages whose
    widths are lognormal around ``median_width``; a typical length of ``duration_share`` of the period;
    inputs written in the first 10% of the period and submitted up to 2 minutes later, so submissions
    bunch at the top of the period, as scheduled jobs do; a consumer reading after the typical end by
    a slack ratio lognormal around ``slack`` (capped at 90% of the period); users provisioning as in
    Fig. 2a: ``under_share`` of them below the typical peak (down to a tenth), the others above,
    ``tenfold_share`` of those 10-30 times, the rest 1.05-10 times (log-uniform).
    """
    if n < 1:
        raise ValueError(f"n={n!r} is not allowed: need at least one template")
    periods = np.asarray(periods, dtype=int)
    w = np.asarray(weights, dtype=float)
    if periods.size == 0 or periods.size != w.size or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"periods={periods.tolist()} and weights={w.tolist()} must have the same length, weights >= 0")
    _positive("slack", slack)
    for name, share in (("under_share", under_share), ("tenfold_share", tenfold_share)):
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share < 1.0:
            raise ValueError(f"{name}={share!r} is out of range: need a share 0 <= {name} < 1")
    lo, hi = duration_share
    out = []
    for i in range(n):
        P = int(rng.choice(periods, p=w / w.sum()))
        minutes = float(rng.uniform(lo, hi) * P)
        k = int(rng.integers(1, 4)) if minutes >= 6 else 1
        lengths = rng.dirichlet(np.full(k, 3.0)) * minutes
        widths = np.clip(np.round(median_width * rng.lognormal(0.0, width_sigma, k)), 1, None)
        stages = tuple((int(wd), max(1.0, float(L))) for wd, L in zip(widths, lengths))
        input_offset = float(rng.uniform(0.0, 0.1) * P)
        submit_offset = input_offset + float(rng.uniform(0.0, 2.0))
        length = sum(m for _, m in stages)
        ratio = float(slack * rng.lognormal(0.0, 0.4))
        read = min(submit_offset + length * (1.0 + ratio), 0.9 * P)
        read = max(read, submit_offset + length + 1.0)  # always some slack
        peak = max(wd for wd, _ in stages)
        if rng.random() < under_share:  # counting on fair-share capacity beyond what they ask for
            factor = float(np.exp(rng.uniform(np.log(0.1), np.log(0.95))))
        else:  # Fig. 2a: a fifth of the over-provisioned at 10x or more (10-30x), the rest 1.05-10x; one draw
            u = float(rng.uniform(0.0, 1.0))
            lo_f, hi_f, v = (10.0, 30.0, u / tenfold_share) if u < tenfold_share else \
                (1.05, 10.0, (u - tenfold_share) / (1.0 - tenfold_share))
            factor = float(np.exp(np.log(lo_f) + v * (np.log(hi_f) - np.log(lo_f))))
        provisioned = max(1, int(math.ceil(factor * peak)))
        out.append(Template(f"p{i:02d}-{P}m", P, input_offset, submit_offset, stages, float(task_minutes),
                            provisioned, float(read)))
    return out


def draw_run(rng: np.random.Generator, template: Template, instance: int, *, period_start: float | None = None,
             run_noise: float = 0.1, task_noise: float = 0.1, straggler_rate: float = 0.1,
             input_delay_rate: float = 0.05, input_delay_minutes: float = 5.0, late_start: float = 0.0) -> Run:
    """One run of ``template`` (instance ``instance`` of its period, starting at ``period_start``
    seconds; default ``instance * period``). Each stage's width and length get lognormal noise
    ``run_noise``; the stage is ``width * round(length / task_minutes)`` tasks of ``length / rounds``
    minutes (lognormal noise ``task_noise``); with ``straggler_rate`` one of its tasks runs 2-4 times
    longer; with ``input_delay_rate`` the input comes exponentially late (mean
    ``input_delay_minutes``); ``late_start`` seconds are added to the submission on purpose."""
    t = template
    ps = instance * t.period * STEP if period_start is None else float(period_start)
    durations, widths, straggled = [], [], False
    for width, minutes in t.stages:
        w = max(1, int(round(width * rng.lognormal(0.0, run_noise))))
        L = minutes * rng.lognormal(0.0, run_noise)
        rounds = max(1, int(round(L / t.task_minutes)))
        d = (L / rounds) * STEP * rng.lognormal(0.0, task_noise, w * rounds)
        if rng.random() < straggler_rate:
            d[int(rng.integers(0, d.size))] *= rng.uniform(2.0, 4.0)
            straggled = True
        durations.append(np.maximum(d, 1.0))
        widths.append(w)
    delayed = bool(rng.random() < input_delay_rate)
    input_time = ps + t.input_offset * STEP + (rng.exponential(input_delay_minutes * STEP) if delayed else 0.0)
    submit = max(ps + t.submit_offset * STEP, input_time) + float(late_start)
    return Run(t, int(instance), ps, float(input_time), float(submit), durations, widths, delayed, straggled,
               float(late_start))


def list_schedule(durations, slots: int, t0: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Start and end times of tasks run in order on ``slots`` containers from ``t0``: each task starts as
    soon as a container is free (the earliest free one)."""
    if slots < 1:
        raise ValueError(f"slots={slots!r} is not allowed: need at least one container")
    free = [t0] * int(slots)
    heapq.heapify(free)
    starts = np.empty(len(durations))
    for i, d in enumerate(durations):
        starts[i] = heapq.heappop(free)
        heapq.heappush(free, starts[i] + d)
    return starts, starts + np.asarray(durations, dtype=float)


def run_intervals(run: Run, containers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Start and end times (seconds from the run's start) of every task when the run has ``containers``
    (default: as many as it asks, its width in each stage): each stage list-scheduled on
    ``min(containers, width)``, starting when the previous stage's last task ends."""
    starts, ends, t0 = [], [], 0.0
    for d, w in zip(run.durations, run.widths):
        slots = w if containers is None else min(int(containers), w)
        s, e = list_schedule(d, slots, t0)
        starts.append(s)
        ends.append(e)
        t0 = float(e.max())
    return np.concatenate(starts), np.concatenate(ends)


def skyline_from_intervals(starts, ends, origin: float = 0.0, step: float = STEP) -> np.ndarray:
    """Containers used per ``step`` from ``origin``: each interval ``[start, end)`` holds one container;
    step ``m`` is the time they held in ``[origin + m*step, origin + (m+1)*step)``, divided by ``step``.
    The skyline ends with the step of the last finish."""
    s = np.asarray(starts, dtype=float) - origin
    e = np.asarray(ends, dtype=float) - origin
    if s.shape != e.shape or s.ndim != 1 or s.size == 0:
        raise ValueError("starts and ends must be non-empty 1-D sequences of the same length")
    if not (np.isfinite(s).all() and np.isfinite(e).all()) or (e < s).any() or (s < 0).any():
        raise ValueError("each interval needs origin <= start <= end, all finite")
    K = max(1, int(math.ceil(e.max() / step - 1e-9)))
    edges = np.arange(K + 1) * step
    held = np.clip(edges[:, None] - s[None, :], 0.0, (e - s)[None, :]).sum(axis=1)  # container-seconds by each edge
    return np.diff(held) / step


def unconstrained_skyline(run: Run, step: float = STEP) -> np.ndarray:
    """The run's skyline when it gets all it asks for (its width in each stage), from its start."""
    return skyline_from_intervals(*run_intervals(run), 0.0, step)


def minutes_on(run: Run, containers: int) -> int:
    """Whole minutes the run takes on a constant ``containers`` (it uses at most its width)."""
    return int(math.ceil(run_intervals(run, containers)[1].max() / STEP - 1e-9))


def history_runs(rng: np.random.Generator, templates, n_runs: int, **draw) -> dict[str, list[Run]]:
    """``n_runs`` past runs of every template, periods back to back from time 0."""
    if n_runs < 1:
        raise ValueError(f"n_runs={n_runs!r} is not allowed: need at least one run of history")
    return {t.name: [draw_run(rng, t, r, **draw) for r in range(n_runs)] for t in templates}


def history_log(runs: dict, rng: np.random.Generator, *, read_noise: float = 0.5) -> TelemetryLog:
    """A :class:`TelemetryLog` of past runs as an uncontended cluster would record them: each run
    starts at its submission and ends when its unconstrained skyline does; its consumer reads at the
    template's read offset (normal noise ``read_noise`` minutes), or when the output appears if it is
    late."""
    log = TelemetryLog()
    for name, rs in runs.items():
        for r in rs:
            sky = unconstrained_skyline(r)
            t_end = r.submit_time + STEP * sky.size
            read = r.period_start + STEP * (r.template.read_offset + rng.normal(0.0, read_noise))
            log.submit(name, r.instance, r.submit_time, period_start=r.period_start)
            log.finish(name, r.instance, t_in_avail=r.input_time, t_start=r.submit_time, t_end=t_end, skyline=sky)
            log.read(name, r.instance, max(read, t_end))
    return log
