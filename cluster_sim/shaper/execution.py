"""Stage-barrier execution of one job with a token budget, and the shaping policies (pure, no Mesa).

:class:`JobExecution` is the job manager's state machine: which vertices are done, running or
runnable, how many tokens the job holds, and what the shaper decides at each vertex completion.
It is driven by events from outside: :func:`replay` drives it with a heap (the "lightweight
simulator of the vertex scheduler" of paper §2), the Mesa job manager
(:mod:`cluster_sim.shaper.agents`) drives it with Mesa's event clock, and both give the same run.

Execution model (SCOPE-like, simplified as in the paper): a stage's vertices become runnable when
every producer stage has completed (a *stage barrier*); at most ``tokens`` vertices run at once;
runnable stages are served first-come first-served, vertices in index order.

Shaping modes (``MODES``):

* ``"off"``: the user's tokens are held for the whole job (today's SCOPE);
* ``"conservative"``: the paper's greedy shaper: at every completion, release tokens above the
  tree max-cut remaining peak (never asks for more);
* ``"spool_once"``: the same bound with each spool counted once (our variant, see
  :mod:`cluster_sim.shaper.trees`): still never below the job's future peak, so still no latency
  penalty, and never above the paper's bound;
* ``"not_started"``: the same with the other reading of "remaining" (running vertices not counted);
  it cannot take back tokens from running vertices, so it stops at the tokens in use;
* ``"cost_aware"``: release tokens above the peak of a replay of the remaining plan with the
  optimizer's per-stage duration estimates (paper §6 "modeling task scheduler");
* ``"aggressive"``: follow the curve down *and* back up: hold what running and runnable vertices
  need plus the stages about to become runnable (all their producers' vertices started), capped
  by the conservative bound; re-request tokens when that need rises above what is held, granted
  after ``request_delay`` (paper §6 "beyond conservative").

Example
-------
>>> import numpy as np
>>> from cluster_sim.shaper.examples import figure5_job
>>> g = figure5_job()
>>> d = {s: np.ones(n) for s, n in g.vertices.items()}     # every vertex takes 1 s
>>> off = replay(g, d, tokens=200, mode="off")
>>> on = replay(g, d, tokens=200, mode="conservative")
>>> on.latency == off.latency, on.allocation_area < off.allocation_area
(True, True)
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..engine.metrics import StepIntegral
from .graph import StageGraph
from .peak import IncrementalPeak
from .trees import treeify

MODES = ("off", "conservative", "spool_once", "not_started", "cost_aware", "aggressive")


def draw_durations(
    graph: StageGraph,
    rng: np.random.Generator,
    mean: float = 10.0,
    stage_sigma: float = 0.6,
    vertex_sigma: float = 0.3,
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Vertex durations per stage and the per-stage means (what an optimizer's cost model would know).

    Stage means are lognormal around ``mean``; a vertex is lognormal around its stage's mean (both
    mean-preserving), so ``vertex_sigma=0`` makes every vertex of a stage equally long.
    """
    for name, v in (("mean", mean), ("stage_sigma", stage_sigma), ("vertex_sigma", vertex_sigma)):
        if not np.isfinite(v) or v < 0 or (name == "mean" and v <= 0):
            raise ValueError(f"{name}={v!r} must be a finite number {'> 0' if name == 'mean' else '>= 0'}")
    means = {}
    durations = {}
    for s, n in graph.vertices.items():
        m = float(mean * rng.lognormal(-stage_sigma**2 / 2, stage_sigma)) if stage_sigma > 0 else float(mean)
        means[s] = m
        if vertex_sigma > 0:
            durations[s] = m * rng.lognormal(-vertex_sigma**2 / 2, vertex_sigma, size=n)
        else:
            durations[s] = np.full(n, m)
    return durations, means


def replayed_peak(
    graph: StageGraph,
    now: float,
    completed: Mapping[str, int],
    started: Mapping[str, int],
    running_since: Mapping[str, list[float]],
    estimates: Mapping[str, float],
) -> int:
    """Peak concurrency of the rest of the job if it ran unconstrained with estimated stage durations.

    Running vertices are assumed to end at ``start + estimate`` (or now, if overdue); runnable
    vertices start now; a later stage starts when its last producer is estimated to end. The
    shaper takes ``min(tokens, this)``, which equals the peak of the replay under the token cap
    (if the unconstrained peak is below the cap, the cap never binds).
    """
    V = graph.vertices
    end: dict[str, float] = {}
    starts: list[float] = []
    ends: list[float] = []
    counts: list[int] = []
    for s in graph.topological_order:
        if completed.get(s, 0) >= V[s]:
            end[s] = now
            continue
        est = estimates[s]
        if started.get(s, 0) > 0 or all(completed.get(p, 0) >= V[p] for p in graph.producers(s)):
            fin = now
            for t0 in running_since.get(s, ()):
                f = max(now, t0 + est)
                starts.append(now); ends.append(f); counts.append(1)
                fin = max(fin, f)
            waiting = V[s] - started.get(s, 0)
            if waiting:
                starts.append(now); ends.append(now + est); counts.append(waiting)
                fin = max(fin, now + est)
            end[s] = fin
        else:
            r = max(end[p] for p in graph.producers(s))
            starts.append(r); ends.append(r + est); counts.append(V[s])
            end[s] = r + est
    if not counts:
        return 0
    t = np.concatenate([starts, ends])
    d = np.concatenate([counts, np.negative(counts)])
    # half-open intervals: at equal times, ends (negative deltas) come first
    order = np.lexsort((d, t))
    return int(max(0, np.cumsum(d[order]).max()))


@dataclass
class JobRun:
    """One job's run: curves, areas, latency and the shaper's trace."""

    mode: str
    tokens: int
    latency: float
    allocation: tuple[np.ndarray, np.ndarray]  # tokens held (times, values)
    usage: tuple[np.ndarray, np.ndarray]  # vertices running (times, values)
    allocation_area: float
    usage_area: float
    peak_usage: int
    releases: int
    requests: int
    estimates: list[tuple[float, int]] = field(repr=False, default_factory=list)

    @property
    def static_area(self) -> float:
        """What holding all the user's tokens for this run's latency would cost."""
        return self.tokens * self.latency

    def savings_vs(self, baseline: "JobRun") -> float:
        """1 - shaped area / static area of ``baseline`` (the same job with shaping off)."""
        return 1.0 - self.allocation_area / baseline.allocation_area


class JobExecution:
    """The pure job-manager state machine (module docstring). Drive it with :meth:`start`,
    :meth:`vertex_finished`, :meth:`tokens_granted`; read :attr:`outbox` for token requests.
    """

    def __init__(
        self,
        graph: StageGraph,
        durations: Mapping[str, np.ndarray],
        tokens: int,
        mode: str = "conservative",
        *,
        request_delay: float = 0.0,
        estimates: Mapping[str, float] | None = None,
        seed: int = 0,
        record_estimates: bool = False,
    ):
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is not allowed: choose one of {', '.join(MODES)}")
        if isinstance(tokens, bool) or not isinstance(tokens, (int, np.integer)) or tokens < 1:
            raise ValueError(f"tokens={tokens!r} must be an integer >= 1 (the job's guaranteed tokens R)")
        if not np.isfinite(request_delay) or request_delay < 0:
            raise ValueError(f"request_delay={request_delay!r} must be a finite number >= 0")
        V = graph.vertices
        for s, n in V.items():
            if s not in durations or len(durations[s]) != n:
                got = len(durations[s]) if s in durations else "none"
                raise ValueError(f"durations[{s!r}] must hold {n} vertex durations, got {got}")
            if np.any(~np.isfinite(durations[s])) or np.any(np.asarray(durations[s]) <= 0):
                raise ValueError(f"durations[{s!r}] must be finite and > 0")
        if mode == "cost_aware":
            if estimates is None:
                raise ValueError("mode='cost_aware' needs estimates: stage -> estimated vertex duration")
            missing = [s for s in V if s not in estimates]
            if missing:
                raise ValueError(f"estimates has no entry for stage {missing[0]!r}")
        self.graph = graph
        self.durations = {s: np.asarray(durations[s], dtype=float) for s in V}
        self.R = int(tokens)
        self.mode = mode
        self.request_delay = float(request_delay)
        self.estimates = dict(estimates) if estimates is not None else None
        self._V = V
        self.completed = {s: 0 for s in V}
        self.started = {s: 0 for s in V}
        self.running = {s: 0 for s in V}
        self._running_since: dict[str, dict[int, float]] = {s: {} for s in V}
        self._producers_left = {s: graph.in_degree(s) for s in V}
        self._ready: deque[str] = deque()
        self._stages_left = len(V)
        self.held = self.R
        self.pending = 0  # tokens requested, not yet granted (aggressive mode)
        self.in_use = 0
        self.outbox: list[tuple[float, int]] = []  # (due time, tokens) requests for the driver
        self.finished_at: float | None = None
        self.releases = 0
        self.requests = 0
        self.record_estimates = record_estimates
        self.estimate_trace: list[tuple[float, int]] = []
        self._peak = IncrementalPeak(treeify(graph, np.random.default_rng(seed), spool_once=mode == "spool_once")) \
            if mode in ("conservative", "spool_once", "not_started", "aggressive") else None
        self.allocation: StepIntegral | None = None
        self.usage: StepIntegral | None = None

    # ---- driving -------------------------------------------------------------------------------
    def start(self, now: float = 0.0) -> list[tuple[str, int, float]]:
        """Begin the job: input stages become runnable. Returns vertices started (stage, index, finish)."""
        self.allocation = StepIntegral(now, self.held)
        self.usage = StepIntegral(now, 0)
        for s in self.graph.stages:
            if self._producers_left[s] == 0:
                self._ready.append(s)
        out = self._dispatch(now)
        if self.mode == "aggressive":
            self._aggressive(now)
        return out

    def vertex_finished(self, stage: str, index: int, now: float) -> list[tuple[str, int, float]]:
        """A vertex ended: update the completion state, call the shaper, start what now fits."""
        if index not in self._running_since[stage]:
            raise ValueError(f"vertex {stage}[{index}] is not running")
        del self._running_since[stage][index]
        self.running[stage] -= 1
        self.completed[stage] += 1
        self.in_use -= 1
        if self.completed[stage] == self._V[stage]:
            self._stages_left -= 1
            for c in self.graph.consumers(stage):
                self._producers_left[c] -= 1
                if self._producers_left[c] == 0:
                    self._ready.append(c)
        if self._peak is not None:
            self._update_peak(stage)
        if self._stages_left == 0:
            self.finished_at = now
            self.held = 0
            self.allocation.set(now, 0)
            self.usage.set(now, 0)
            return []
        self._shape(now)
        out = self._dispatch(now)
        if self.mode == "aggressive":
            self._aggressive(now)
        return out

    def tokens_granted(self, amount: int, now: float) -> list[tuple[str, int, float]]:
        """Requested tokens arrive (aggressive mode)."""
        self.pending -= amount
        if self.finished_at is not None:
            return []  # the job ended meanwhile: the grant goes straight back
        self.held += amount
        self.allocation.set(now, self.held)
        out = self._dispatch(now)
        self._aggressive(now)
        return out

    @property
    def done(self) -> bool:
        return self.finished_at is not None

    # ---- the shaper ----------------------------------------------------------------------------
    def _update_peak(self, stage: str) -> None:
        v, c, r = self._V[stage], self.completed[stage], self.running[stage]
        if self.mode in ("conservative", "spool_once", "aggressive"):
            self._peak.set_remaining(stage, v - c, c >= v)
        else:
            self._peak.set_remaining(stage, v - c - r, c >= v)

    def remaining_peak_now(self, now: float) -> int:
        """The current mode's estimate of the rest of the job's peak."""
        if self.mode in ("conservative", "spool_once", "not_started"):
            return self._peak.peak
        if self.mode == "cost_aware":
            since = {s: list(d.values()) for s, d in self._running_since.items()}
            return replayed_peak(self.graph, now, self.completed, self.started, since, self.estimates)
        raise ValueError(f"mode {self.mode!r} has no remaining-peak estimate")

    def _shape(self, now: float) -> None:
        if self.mode in ("off", "aggressive"):
            return
        est = self.remaining_peak_now(now)
        if self.record_estimates:
            self.estimate_trace.append((now, est))
        # Release-only; a job cannot give back tokens its running vertices hold.
        target = max(est, self.in_use)
        if target < self.held:
            self.held = target
            self.releases += 1
            self.allocation.set(now, self.held)

    def _aggressive(self, now: float) -> None:
        need = self.in_use + sum(self._V[s] - self.started[s] for s in self._ready)
        for s in self.graph.stages:  # imminent: every producer done or fully started
            if self._producers_left[s] > 0 and all(
                self.started[p] == self._V[p] for p in self.graph.producers(s)
            ):
                need += self._V[s]
        # Never hold more than the conservative bound either: imminent stages cannot run while
        # their producers still do, so in_use + imminent can overshoot the true next peak.
        target = min(self.R, need, self._peak.peak)
        if target < self.held:
            self.held = max(target, self.in_use)
            self.releases += 1
            self.allocation.set(now, self.held)
        elif target > self.held + self.pending:
            amount = target - self.held - self.pending
            self.pending += amount
            self.requests += 1
            self.outbox.append((now + self.request_delay, amount))

    def _dispatch(self, now: float) -> list[tuple[str, int, float]]:
        out = []
        while self.in_use < self.held and self._ready:
            s = self._ready[0]
            i = self.started[s]
            self.started[s] += 1
            self.running[s] += 1
            self.in_use += 1
            self._running_since[s][i] = now
            out.append((s, i, now + float(self.durations[s][i])))
            if self._peak is not None and self.mode == "not_started":
                self._update_peak(s)
            if self.started[s] == self._V[s]:
                self._ready.popleft()
        self.usage.set(now, self.in_use)
        if self.in_use > self.held:
            raise AssertionError(f"{self.in_use} vertices run on {self.held} tokens at t={now}")
        return out

    # ---- result --------------------------------------------------------------------------------
    def result(self) -> JobRun:
        if self.finished_at is None:
            raise ValueError("the job has not finished yet")
        end = self.finished_at
        return JobRun(
            mode=self.mode,
            tokens=self.R,
            latency=end - self.allocation.t0,
            allocation=self.allocation.steps(),
            usage=self.usage.steps(),
            allocation_area=self.allocation.total(end),
            usage_area=self.usage.total(end),
            peak_usage=int(self.usage.steps()[1].max()),
            releases=self.releases,
            requests=self.requests,
            estimates=list(self.estimate_trace),
        )


def replay(
    graph: StageGraph,
    durations: Mapping[str, np.ndarray],
    tokens: int,
    mode: str = "conservative",
    *,
    observer=None,
    **kwargs,
) -> JobRun:
    """Run one job to completion with a heap of events (no Mesa); see :class:`JobExecution`.

    ``observer(job, now)``, if given, is called after every event (tests use it to look at the
    completion state at each vertex completion).
    """
    job = JobExecution(graph, durations, tokens, mode, **kwargs)
    heap: list[tuple[float, int, int, str, int]] = []  # (time, seq, kind, stage, index|amount)
    seq = 0

    def push(started):
        nonlocal seq
        for s, i, fin in started:
            heapq.heappush(heap, (fin, seq, 0, s, i))
            seq += 1
        for due, amount in job.outbox:
            heapq.heappush(heap, (due, seq, 1, "", amount))
            seq += 1
        job.outbox.clear()

    push(job.start(0.0))
    while heap:
        t, _, kind, s, x = heapq.heappop(heap)
        if kind == 0:
            push(job.vertex_finished(s, x, t))
        else:
            push(job.tokens_granted(x, t))
        if observer is not None:
            observer(job, t)
    return job.result()
