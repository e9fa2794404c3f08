"""The composition on the engine: a queue layer of tokens above the Omega family's placement schedulers.

Two layers, each built through the engine's seams (``job_manager_class``, ``release_stage``,
``scheduler_class``, ``make_jobs``, ``job_finished``, ``check_invariants``):

* :class:`QueueLayer` decides **when** a job may run and **how much** of the cluster it may hold:
  guaranteed tokens (one per CPU unit), admitted from a reservation queue (periodic jobs, when
  Morpheus is on) or from organisation queues (equal guaranteed shares, elastic up to what is free;
  the least-served organisation first, inside it the queue's order: first come first served, or
  Wing-Agg's predicted value efficiency when Wing is on; a job behind one that does not fit may go
  first). Reservations are taken from the organisations' capacity while they are active.
* :class:`CapstoneJobManager` holds the job's tokens, hands at most that many of its vertices to a
  placement scheduler at once (released stage by stage, as the engine's job manager does) and, with
  the shaper on, gives back at every vertex completion what Lab 01's
  :class:`~cluster_sim.shaper.shaper.ResourceShaper` says its remaining stages cannot use.
* Placement is the engine's shared-state family as Labs 08-09 run it
  (:class:`~cluster_sim.rminer.model.RMinerModel`: parallel schedulers on stale views, with SmartRM
  when Resource Miner is on); with the stage optimiser on, each scheduler is also Lab 06's
  :class:`~cluster_sim.stageopt.agents.IPAScheduler` (Python's method order composes the two: the
  RM filter sees a stage first, IPA plans what it leaves to the normal scheduler).

No mechanism is re-implemented here: each is the lab's own class or function, switched on by the
config. What is new is the queue layer, the composition itself.

A completion no one waits for (no child stage, no vertex of the job waiting for a token, nobody in
the queue layer, shaper off) is settled at the next event, as in the engine; the tokens it frees are
booked at its exact finish time.
"""

from __future__ import annotations

import math
from bisect import bisect_right

import mesa
import numpy as np

from ..engine import JobManager, StepIntegral
from ..rminer.config import RMinerConfig
from ..rminer.model import RMAwareScheduler, RMinerModel
from ..shaper.shaper import ResourceShaper
from ..stageopt.agents import IPAScheduler
from .config import CapstoneConfig
from .day import Day, make_day

RESERVED = "reserved"
#: where tokens a reserved run gives back go (:meth:`QueueLayer._release_reservation`)
RELEASE_CHOICES = ("reservation", "organisations")


def keep_reservation(job, tokens: int, now: float) -> str:
    """The naive rule: a reservation keeps what its run gives back until its deadline."""
    return "reservation"


class IPARMAwareScheduler(RMAwareScheduler, IPAScheduler):
    """A placement scheduler with both labs' behaviour: the RM filter first, then IPA's stage plan."""


def engine_config(config: CapstoneConfig, day: Day) -> RMinerConfig:
    """The engine (Labs 08-09's) config of the placement layer for ``config``'s day."""
    n = max(len(day.jobs), 1)
    return RMinerConfig(
        machines=config.machines, cpu_per_machine=config.cpu_per_machine, mem_per_machine=config.cpu_per_machine,
        hardware_types=config.hardware_types, speed_spread=config.speed_spread, schedulers=config.schedulers,
        update_delay=config.update_delay, think_time=config.think_time, placement=config.placement,
        horizon=config.horizon, seed=config.seed, mode="smart" if config.rminer else "none",
        mean_task_duration=config.mean_task_duration, duration_dist="lognormal",
        job_rate=n / config.horizon, tasks_per_job=max(1.0, sum(j.n_tasks for j in day.jobs) / n),
        mean_task_cpu=1.0, mean_task_mem=1.0, priority_levels=4, max_events=10**9,
    )


class QueueLayer(mesa.Agent):
    """Guaranteed tokens: a reservation queue and organisation queues (module docstring)."""

    def __init__(self, model: "CapstoneModel", tokens: int, key, release_rule=None):
        super().__init__(model)
        self.total = tokens
        self.key = key
        orgs = sorted({j.org for j in model.day.jobs}) or ["org0"]
        self.guarantee = {o: tokens / len(orgs) for o in orgs}
        self.waiting: dict[str, list] = {o: [] for o in orgs}  # org -> managers in the queue's order
        self._keys: dict[str, list] = {o: [] for o in orgs}
        self.reserved_waiting: list = []  # periodic jobs whose reservation is held by an overrunning run
        self.held_by: dict[str, int] = {o: 0 for o in orgs}  # tokens held per organisation queue
        self.reserved_held = 0  # tokens held by jobs admitted to their reservation
        self.reserved_now = 0  # tokens of the reservations active now
        self.held = StepIntegral(record=False)  # all tokens held by jobs
        self.reserved = StepIntegral(record=False)  # tokens set aside for reservations
        self.admitted: dict[int, float] = {}  # job id -> admission time
        self.released_early = 0  # tokens given back by shapers before their job ended
        self.shaper_log: list[tuple] = []  # (job, completed, running, held before, released)
        self._serving = False
        self.reservation_left: dict[int, int] = {}  # job id -> tokens its active reservation sets aside
        self.release_rule = keep_reservation if release_rule is None else release_rule
        # a lower bound on the tokens the smallest waiting organisation job asks for (exact after a scan that
        # admitted nothing; lowered by every submission; admissions only remove jobs, so it stays a bound)
        self._smallest_need = math.inf

    # ---- capacity ------------------------------------------------------------------------------
    @property
    def org_capacity(self) -> int:
        """What the organisations share: the cluster minus the reservations (or what reserved jobs
        hold, if an overrunning run holds more than its reservation still sets aside)."""
        return self.total - max(self.reserved_now, self.reserved_held)

    @property
    def org_free(self) -> int:
        return self.org_capacity - sum(self.held_by.values())

    def reserve(self, job_id: int, tokens: int) -> None:
        """Job ``job_id``'s reservation starts with ``tokens``, or ends (``tokens`` = 0: what is left of it
        is returned to the organisations)."""
        left = self.reservation_left.pop(job_id, 0)
        if tokens:
            self.reservation_left[job_id] = tokens
        self._set_reserved(self.reserved_now - left + tokens)

    def _set_reserved(self, value: int) -> None:
        self.reserved_now = value
        self.reserved.set(self.model.time, value)
        self.serve()

    def _release_reservation(self, manager, tokens: int) -> None:
        """The composition decision (the exercise): tokens a reserved run gives back either stay set aside
        for its reservation until its deadline (``"reservation"``, the default) or shrink it, so the
        organisations may use them at once (``"organisations"``)."""
        job = manager.job
        if job.id not in self.reservation_left:
            return
        choice = self.release_rule(job.tag, tokens, self.model.time)
        if choice not in RELEASE_CHOICES:
            raise ValueError(f"release_rule returned {choice!r} for job {job.id}: allowed {' or '.join(map(repr, RELEASE_CHOICES))}")
        if choice == "organisations":
            shrink = min(tokens, self.reservation_left[job.id])
            self.reservation_left[job.id] -= shrink
            self._set_reserved(self.reserved_now - shrink)

    def n_waiting(self) -> int:
        return sum(len(q) for q in self.waiting.values()) + len(self.reserved_waiting)

    # ---- jobs ----------------------------------------------------------------------------------
    def submit(self, manager: "CapstoneJobManager") -> None:
        spec = manager.job.tag
        if self.model.config_capstone.morpheus and spec.reservation is not None:
            manager.queue = RESERVED
            self.reserved_waiting.append(manager)
        else:
            manager.queue = spec.org
            k = self.key(manager.job)
            i = bisect_right(self._keys[spec.org], k)
            self._keys[spec.org].insert(i, k)
            self.waiting[spec.org].insert(i, manager)
            self._smallest_need = min(self._smallest_need, spec.tokens)
        self.serve()

    def give_back(self, manager: "CapstoneJobManager", tokens: int, t: float) -> None:
        """``manager``'s job returns ``tokens`` (a shaper's release, or all of them at its end), booked at ``t``."""
        if tokens <= 0:
            return
        if manager.queue == RESERVED:
            self.reserved_held -= tokens
            self._release_reservation(manager, tokens)
        else:
            self.held_by[manager.queue] -= tokens
        # settling books several completions at once, in finish order: one may have admitted a job
        # (booked now) before a later one in the batch returns its tokens
        self.held.add(max(t, self.held.t), -tokens)
        self.serve()

    def serve(self) -> None:
        """Admit what fits: reserved runs first (their capacity is set aside), then the
        organisations, the least served (held / guarantee) first, each in its queue's order."""
        if self._serving:
            return
        self._serving = True
        try:
            while self.reserved_waiting:
                m = self.reserved_waiting[0]
                need = m.job.tag.reservation[0]
                # reserved runs go first: the organisations never take their reservations' room, but a
                # run may wait for organisation work admitted before its reservation began to end
                if self.reserved_held + need + sum(self.held_by.values()) > self.total:
                    break
                self.reserved_waiting.pop(0)
                self.reserved_held += need
                self._admit(m, need)
            while self._admit_one_org():
                pass
        finally:
            self._serving = False

    def _admit_one_org(self) -> bool:
        free = self.org_free
        if free <= 0 or free < self._smallest_need:
            return False  # no waiting job asks for as little as is free (the scan's cost is every waiting job)
        for org in sorted((o for o in self.waiting if self.waiting[o]),
                          key=lambda o: (self.held_by[o] / self.guarantee[o], o)):
            queue = self.waiting[org]
            for i, m in enumerate(queue):
                if m.job.tag.tokens <= free:
                    del queue[i], self._keys[org][i]
                    self.held_by[org] += m.job.tag.tokens
                    self._admit(m, m.job.tag.tokens)
                    return True
        self._smallest_need = min((m.job.tag.tokens for q in self.waiting.values() for m in q), default=math.inf)
        return False

    def _admit(self, manager: "CapstoneJobManager", tokens: int) -> None:
        self.held.add(self.model.time, tokens)
        self.admitted[manager.job.id] = self.model.time
        manager.admit(tokens)

    # ---- invariants ----------------------------------------------------------------------------
    def check(self, managers) -> None:
        held = {o: 0 for o in self.held_by}
        reserved = 0
        for m in managers:
            if m.held < m.in_use:
                raise AssertionError(f"job {m.job.id} has {m.in_use} vertices at schedulers or running on {m.held} tokens")
            if m.queue == RESERVED:
                reserved += m.held
            elif m.queue is not None:
                held[m.queue] += m.held
        if held != self.held_by or reserved != self.reserved_held:
            raise AssertionError(f"the queue layer books {self.held_by} (+ {self.reserved_held} reserved), "
                                 f"the jobs hold {held} (+ {reserved} reserved)")
        total = sum(held.values()) + reserved
        if abs(self.held.value - total) > 1e-9:
            raise AssertionError(f"tokens held over time say {self.held.value}, the jobs hold {total}")
        if total > self.total:
            raise AssertionError(f"jobs hold {total} tokens, the cluster has {self.total}")
        if not self._serving:
            fits = [m.job.id for q in self.waiting.values() for m in q if m.job.tag.tokens <= self.org_free]
            if fits:
                raise AssertionError(f"jobs {fits[:5]} wait in the organisation queues although {self.org_free} tokens "
                                     "are free for them")
            if self.reserved_waiting and (self.reserved_held + self.reserved_waiting[0].job.tag.reservation[0]
                                          + sum(self.held_by.values()) <= self.total):
                raise AssertionError(f"reserved run {self.reserved_waiting[0].job.id} waits although its tokens are free")


class CapstoneJobManager(JobManager):
    """A job holding tokens: at most that many of its vertices at the schedulers or running."""

    def __init__(self, model: "CapstoneModel", job, scheduler):
        super().__init__(model, job, scheduler)
        n = len(job.stages)
        self.held = 0
        self.queue: str | None = None
        self.ready: list[list] = []  # [stage, tasks not yet handed] in release order
        self.in_flight = [0] * n  # handed to a scheduler, not finished
        self.completed = [0] * n
        # one shaper per job: it tree-ifies the job's graph once and keeps the trees
        self.shaper = ResourceShaper() if model.shaping else None
        if self.shaper is not None:
            self.graph = job.tag.graph()
            self.names = [f"s{i}" for i in range(n)]

    @property
    def in_use(self) -> int:
        return sum(self.in_flight)

    def watched(self, task) -> bool:
        return (super().watched(task) or bool(self.ready) or self.model.shaping
                or self.model.layer.n_waiting() > 0)

    def start(self) -> None:
        unplaceable = self.model.unplaceable(self.job)
        if unplaceable is not None:
            self.fail(f"task {unplaceable[0].id} can fit on no machine: {unplaceable[1]}")
            return
        self.model.layer.submit(self)

    def admit(self, tokens: int) -> None:
        """The queue layer granted ``tokens``: release the stages without parents (the engine's start)."""
        self.held = tokens
        super().start()

    def release_stage(self, s: int) -> None:
        self.ready.append([s, list(self.job.stages[s].tasks)])
        self.dispatch()

    def dispatch(self) -> None:
        """Hand waiting vertices to the scheduler, stage by stage, while tokens allow."""
        room = self.held - self.in_use
        while self.ready and room > 0:
            entry = self.ready[0]
            s, tasks = entry
            batch, entry[1] = tasks[:room], tasks[room:]
            if not entry[1]:
                self.ready.pop(0)
            self.in_flight[s] += len(batch)
            room -= len(batch)
            self.scheduler.enqueue(batch)

    def on_task_finished(self, task) -> None:
        s = task.stage
        self.in_flight[s] -= 1
        self.completed[s] += 1
        super().on_task_finished(task)  # children released, or the job finished
        if self.stages_left == 0:
            return
        if self.shaper is not None:
            completed = dict(zip(self.names, self.completed))
            running = dict(zip(self.names, self.in_flight))
            release = self.shaper.tokens_to_release(self.graph, self.held, completed, running)
            self.model.layer.shaper_log.append((self.job.id, completed, running, self.held, release))
            if release:
                self.held -= release
                self.model.layer.released_early += release
                self.model.layer.give_back(self, release, task.finish)
        self.dispatch()


class CapstoneModel(RMinerModel):
    """One day through the queue layer and the placement layer, with the config's switches.

    ``tokens`` overrides the queue layer's tokens (default: the cluster's CPU); a test sets it so
    large that admission never binds, to compare the composition with the plain engine.
    ``release_rule(job, tokens, now) -> "reservation" | "organisations"`` decides where the tokens a
    reserved run gives back go (default :func:`keep_reservation`; the exercise writes another).
    """

    job_manager_class = CapstoneJobManager

    def __init__(self, config: CapstoneConfig, *, day: Day | None = None, tokens: int | None = None,
                 release_rule=None, check_every_event: bool = False):
        if not isinstance(config, CapstoneConfig):
            raise ValueError(f"config={config!r} is not allowed: give a CapstoneConfig")
        self.config_capstone = config
        self.day = make_day(config) if day is None else day
        self.scheduler_class = IPARMAwareScheduler if config.stageopt else RMAwareScheduler
        self.shaping = config.shaper
        self.layer = None
        super().__init__(engine_config(config, self.day), check_every_event=check_every_event, record_series=False)
        efficiency = self.day.efficiency.to_dict()
        if config.wing:
            key = lambda job: (-efficiency[job.id], job.arrival, job.id)  # Wing-Agg: most value per compute first
        else:
            key = lambda job: (job.arrival, job.id)
        self.layer = QueueLayer(self, config.tokens if tokens is None else tokens, key, release_rule)
        if config.morpheus:
            for spec in self.day.jobs:
                if spec.reservation is not None:
                    n, start, end = spec.reservation
                    self.schedule(lambda j=spec.id, n=n: self.layer.reserve(j, n), at=start)
                    if end < config.horizon:
                        self.schedule(lambda j=spec.id: self.layer.reserve(j, 0), at=end)

    def make_jobs(self, rng):
        """The day's jobs (the same at every switch setting)."""
        return self.day.engine_jobs()

    def job_finished(self, manager) -> None:
        self.layer.give_back(manager, manager.held, manager.job.finish)
        manager.held = 0
        super().job_finished(manager)

    def check_invariants(self) -> None:
        super().check_invariants()
        if self.layer is not None:
            self.layer.check(self.job_managers.values())
