"""The Mesa side of Morpheus: reservations as capacity-scheduler queues, DRA, telemetry and inference.

* :class:`MorpheusModel` - the engine's :class:`~cluster_sim.engine.CapacityClusterModel` with one
  queue per periodic job and one for ad hoc jobs. Each periodic queue's capacity is what the job is
  provisioned *now*: its reservation in a LowCost plan, its user's count while a run is active, or R*
  from a run's start (see :class:`Provisioning`), plus any live DRA grant. Periodic queues never
  borrow (maximum = guarantee): SLO violations are **worst case**, with no opportunistic capacity.
  The ad hoc queue is guaranteed the rest and may borrow everything idle.
* :class:`Reprovisioner` - §7's DRA as an agent: every plan step it compares each active job's
  demand (containers used plus tasks waiting) with its reservation, and calls
  :func:`~cluster_sim.morpheus.packing.reprovision.reprovision` on the plan; a grant raises the queue for T
  seconds, after which the job is evaluated again.
* :class:`TelemetryCollector` - records each finished periodic run (its four times and its skyline,
  computed exactly from its tasks' start and finish times) into a
  :class:`~cluster_sim.morpheus.slo.telemetry.TelemetryLog` (Fig. 3, steps 1a-1b).
* :class:`InferenceService` - refits the contracts from that log on a recurring schedule
  (``model.schedule_every``), Fig. 3 step 6.

Every timed callback goes through ``model.schedule`` / ``model.schedule_every``; queue capacities
change only through ``CapacityScheduler.set_capacity``; no private member of the engine is used.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from ..._mesa import mesa  # mesa without its stack walk (cluster_sim/_mesa.py)
import numpy as np
from mesa.time import Priority

from ...engine import CapacityClusterModel, ClusterConfig, Job, JobManager, QueueSpec, Stage, Task
from ...engine.workload import COMPLETED, QUEUED, RUNNING
from .periodic import STEP, Run, skyline_from_intervals
from .reprovision import ReprovisionRule, _reprovision, reprovision  # noqa: F401 (reprovision: the checked one)
from ..slo.telemetry import TelemetryLog

ADHOC = "adhoc"


@dataclass
class Provisioning:
    """How one periodic job is provisioned over time (containers), before DRA grants.

    ``base``: containers per absolute plan step (a reservation in a plan, repeated cycle after
    cycle), or None. ``while_running``: containers a run holds from its submission until it ends (a
    user's own count), or 0. ``from_start``: containers per step from each run's submission (R*
    without packing), or None.
    """

    base: np.ndarray | None = None
    while_running: int = 0
    from_start: np.ndarray | None = None


class Reprovisioner(mesa.Agent):
    """DRA (§7): grant a job extra containers for ``rule.hold_seconds`` when its demand exceeds its
    reservation, capped at ``rule.rho * max(R_recent)``, never more than asked, only if the plan has room.

    ``decisions`` records every evaluation that found demand above the reservation: the numbers the
    rule saw and what it granted.
    """

    def __init__(self, model: "MorpheusModel", plan, job_ids: dict, rule: ReprovisionRule, per_run: bool = False):
        super().__init__(model)
        self.plan, self.job_ids, self.rule = plan, dict(job_ids), rule
        self.per_run = per_run  # job_ids keyed by run queue: each run is evaluated against its own reservation
        self.live: dict[str, tuple[int, int, float]] = {}  # queue -> (grant id, containers, expiry)
        self.granted: dict[str, dict[int, int]] = {}  # queue -> absolute plan step -> containers granted
        self.decisions: list[dict] = []
        self._skylines: dict[int, tuple] = {}  # job id -> (its allocation, its reservation per plan step)
        self._containers: dict[int, tuple] = {}  # job id -> (its allocation, its container as the plan makes it)
        model.schedule_every(self.tick, STEP, start=0.0, priority=Priority.LOW)

    def extra(self, name: str) -> int:
        """Containers granted to ``name`` right now."""
        live = self.live.get(name)
        return live[1] if live else 0

    def skyline(self, job_id: int) -> np.ndarray:
        """The job's reservation at every plan step, without grants: built once per allocation (a paper cycle
        evaluates its jobs tens of thousands of times, and the plan's allocations do not move meanwhile)."""
        alloc = self.plan.allocations[job_id]
        kept = self._skylines.get(job_id)
        if kept is None or kept[0] is not alloc:
            sky = alloc.containers(self.plan.horizon)
            sky.flags.writeable = False  # shared by every evaluation: no reader may change it
            kept = self._skylines[job_id] = (alloc, sky)
        return kept[1]

    def container(self, job_id: int) -> np.ndarray:
        """The job's container as the plan makes it (``plan._container``), once per allocation, read-only: the
        plan validated it for every one of a paper cycle's 22,790 decisions and every grant kept a copy."""
        alloc = self.plan.allocations[job_id]
        kept = self._containers.get(job_id)
        if kept is None or kept[0] is not alloc:
            z = self.plan._container(alloc.job.container)
            z.flags.writeable = False
            kept = self._containers[job_id] = (alloc, z)
        return kept[1]

    def tick(self) -> None:
        for name in self.job_ids:
            if name not in self.live:
                self.evaluate(name)

    def evaluate(self, name: str) -> None:
        model = self.model
        demand = model.demand(name)
        if demand == 0:
            return
        reserved = model.now_capacity[name]  # the plan's reservation now, grants included
        if demand <= reserved:
            return
        now = model.time
        job_id = self.job_ids[name]
        past = self.granted.setdefault(name, {})
        recent_steps = self.rule._recent_steps(now, STEP)  # now: the model's clock, valid
        granted_recent = [past.get(s, 0) for s in recent_steps.tolist()]
        if self.per_run:  # the run's own reservation: the plan's skyline of the job holds its other instances
            base = model.provisioning[name].base
            recent = np.array([int(base[s]) if 0 <= s < base.size else 0 for s in recent_steps.tolist()])
            grant, gid = _reprovision(self.plan, job_id, now, demand, self.rule, granted_recent,
                                      reserved_now=reserved, own_recent=recent, skyline=self.skyline(job_id),
                                      container=self.container(job_id))
        else:
            skyline = self.skyline(job_id)
            grant, gid = _reprovision(self.plan, job_id, now, demand, self.rule, granted_recent, skyline=skyline,
                                      container=self.container(job_id))
            recent = skyline[recent_steps % self.plan.horizon]
        self.decisions.append(dict(time=now, job=name, demand=demand, reserved=reserved, recent_max=int(recent.max()),
                                   asked=grant.asked, cap=grant.cap, room=grant.room, granted=grant.containers,
                                   reason=grant.reason))
        if gid is None:
            return
        self.live[name] = (gid, grant.containers, now + self.rule.hold_seconds)
        for s in self.rule._hold_steps(now, STEP).tolist():
            past[s] = past.get(s, 0) + grant.containers
        model.apply(name)
        model.schedule(lambda: self.expire(name, gid), after=self.rule.hold_seconds)

    def expire(self, name: str, gid: int) -> None:
        """T seconds are over: give the containers back to the plan, then evaluate the job again."""
        self.plan.remove_grant(gid)
        del self.live[name]
        self.model.apply(name)
        self.evaluate(name)


class TelemetryCollector(mesa.Agent):
    """Records every finished periodic run into ``log``: submission, the four times of Fig. 4 and the
    skyline (containers per minute from its first task's start, exact from its tasks' holds). The
    consumer's read comes from ``read_time(run, t_end)`` (default: none recorded)."""

    def __init__(self, model, log: TelemetryLog | None = None, read_time=None):
        super().__init__(model)
        self.log = TelemetryLog() if log is None else log
        self.read_time = read_time
        self.recorded: list[tuple[str, int]] = []

    def submitted(self, run: Run) -> None:
        self.log.submit(run.template.name, run.instance, run.submit_time, period_start=run.period_start)

    def finished(self, job: Job) -> None:
        run: Run = job.tag
        tasks = job.tasks
        starts = np.array([t.start for t in tasks])
        ends = np.array([t.finish for t in tasks])
        t0 = float(starts.min())
        sky = skyline_from_intervals(starts, ends, t0, STEP)
        self.log.finish(run.template.name, run.instance, t_in_avail=run.input_time, t_start=t0, t_end=float(job.finish),
                        skyline=sky)
        if self.read_time is not None:
            self.log.read(run.template.name, run.instance, max(float(self.read_time(run, job.finish)), job.finish))
        self.recorded.append((run.template.name, run.instance))


class InferenceService(mesa.Agent):
    """Refits the contracts every ``interval`` seconds from what the collector recorded so far
    (``fit(log) -> {template: Contract}``); ``history`` keeps each refit's time and contracts."""

    def __init__(self, model, collector: TelemetryCollector, fit, interval: float, start: float | None = None):
        super().__init__(model)
        self.collector, self.fit = collector, fit
        self.history: list[tuple[float, dict]] = []
        model.schedule_every(self.refit, interval, start=start)

    def refit(self) -> None:
        self.history.append((self.model.time, self.fit(self.collector.log)))

    @property
    def contracts(self) -> dict:
        return self.history[-1][1] if self.history else {}


class CappedJobManager(JobManager):
    """A job manager that keeps at most ``width`` tasks of a stage released at once (a framework's
    parallelism: the job asks for that many containers, and one more each time a task ends), for the
    periodic runs; ad hoc jobs release each stage whole, as the engine's manager does."""

    def __init__(self, model, job: Job, scheduler):
        super().__init__(model, job, scheduler)
        run = job.tag if isinstance(job.tag, Run) else None
        self.widths = list(run.widths) if run is not None else None
        self.released = [0] * len(job.stages)
        self.outstanding = [0] * len(job.stages)

    def watched(self, task: Task) -> bool:
        return self.widths is not None or super().watched(task)

    def release_stage(self, s: int) -> None:
        if self.widths is None:
            super().release_stage(s)
            return
        tasks = self.job.stages[s].tasks
        n = min(self.widths[s] - self.outstanding[s], len(tasks) - self.released[s])
        if n > 0:
            self.scheduler.enqueue(tasks[self.released[s]:self.released[s] + n])
            self.released[s] += n
            self.outstanding[s] += n

    def on_task_finished(self, task: Task) -> None:
        if self.widths is not None:
            self.outstanding[task.stage] -= 1
            self.release_stage(task.stage)  # one more of this stage, if it has any left
        super().on_task_finished(task)


def job_queue(run: Run) -> str:
    """One queue per periodic job: every run of a template shares it (a capacity-scheduler queue)."""
    return run.template.name


def run_queue(run: Run) -> str:
    """One queue per run (Rayon's model: each reservation is its own queue), ``template#instance``."""
    return f"{run.template.name}#{run.instance}"


def build_jobs(runs: list[Run], adhoc, first_task: int = 0, queue_of=job_queue) -> list[Job]:
    """Engine jobs: each periodic run a chain of stages in the queue ``queue_of(run)`` names (one
    container per task; :class:`CappedJobManager` keeps at most the stage's width going), each ad hoc
    job ``(arrival, containers, seconds)`` one task of that many containers in the ad hoc queue."""
    jobs, tid = [], first_task
    for run in runs:
        job = Job(id=len(jobs), arrival=run.submit_time, queue=queue_of(run), tag=run)
        n = len(run.durations)
        for k, durations in enumerate(run.durations):
            tasks = [Task(tid + i, job, k, (1, 1), float(d)) for i, d in enumerate(durations)]
            tid += len(tasks)
            job.stages.append(Stage(k, tasks, (k - 1,) if k else (), (k + 1,) if k < n - 1 else ()))
        jobs.append(job)
    for arrival, width, seconds in adhoc:
        job = Job(id=len(jobs), arrival=float(arrival), queue=ADHOC, tag="adhoc")
        job.stages.append(Stage(0, [Task(tid, job, 0, (int(width), int(width)), float(seconds))]))
        tid += 1
        jobs.append(job)
    return jobs


class MorpheusModel(CapacityClusterModel):
    """Periodic jobs in queues provisioned as ``provisioning`` says, ad hoc jobs in the rest.

    ``cluster``: the engine's config (machines, containers as CPU and memory units); ``runs``: the
    periodic runs of the cycle; ``adhoc``: ``(arrival, containers, seconds)`` per ad hoc job;
    ``provisioning``: a :class:`Provisioning` per template name; ``reprovision``: ``(plan, job ids,
    rule)`` to start a :class:`Reprovisioner`; ``collector``: a :class:`TelemetryCollector` factory
    (``collector(model)``) or None. ``literal``: a shrinking periodic queue takes back at once what it
    holds above its new capacity (``resume``: the tasks taken back keep the work done). ``queue_of(run)`` names a run's queue: :func:`job_queue` (one per
    job, the default) or :func:`run_queue` (one per run, Rayon's reservations); ``provisioning`` is keyed
    by those names.
    """

    job_manager_class = CappedJobManager

    def __init__(self, cluster: ClusterConfig, runs: list[Run], adhoc, provisioning: dict, *,
                 reprovision_with=None, collector=None, check_every_event: bool = False, literal: bool = False,
                 queue_of=job_queue, resume: bool = False):
        names = sorted({queue_of(r) for r in runs} | set(provisioning))
        specs = [QueueSpec(n, 0.0, 0.0) for n in names] + [QueueSpec(ADHOC, 0.0, 1.0)]
        jobs = build_jobs(runs, adhoc, queue_of=queue_of)
        super().__init__(cluster, specs, jobs=jobs, elastic=True, preemption=False,
                         check_every_event=check_every_event, record_series=True)
        self.scheduler = self.capacity_scheduler
        self.queue_of = queue_of
        self.literal = literal  # a shrinking periodic queue takes back what it holds above its new capacity
        self.resume = resume  # ... and the tasks it takes back keep their work
        self.total = int(self.scheduler.total[0])
        self.names = names
        self.provisioning = {n: provisioning.get(n, Provisioning()) for n in names}
        self.active: dict[str, list[Job]] = {n: [] for n in names}  # submitted runs not yet finished
        self.pieces: dict[str, list[tuple[float, np.ndarray]]] = {n: [] for n in names}  # R* from a run's start
        self.now_capacity: dict[str, int] = {n: 0 for n in names}
        self.capacity_log: dict[str, list[tuple[float, int]]] = {n: [(0.0, 0)] for n in names}
        self.finished_at: dict[int, float] = {}
        self.runs = runs
        self._applied_step = -1
        self._rest = -1  # the ad hoc queue is set to the whole cluster below, before anything is provisioned
        self._changes: list[float] = []  # times R* pieces change (a heap)
        self._with_pieces: set[str] = set()  # the queues holding R* pieces (read at each of their changes)
        # the steps at which a queue's planned base changes (from the step before, or from nothing before step 0):
        # at a new step only those queues can be provisioned otherwise than they are, since a run's submission or
        # end and a DRA grant or its expiry set their queue at once (apply), and the times R* pieces change are in
        # _changes
        self._base_changes: dict[int, list[str]] = {}
        for name in names:
            base = self.provisioning[name].base
            if base is None or not base.size:
                continue
            steps = np.flatnonzero(np.diff(base, prepend=0, append=0)).tolist()  # the last: back to 0 after base
            for step in steps:
                self._base_changes.setdefault(step, []).append(name)
        self._order = {name: i for i, name in enumerate(names)}
        self._collector, self._reprovision_with = collector, reprovision_with
        self.collector = self.reprovisioner = None  # made at the start: they schedule events of their own

    def start(self) -> None:
        """The engine's start, then the collector, the reprovisioner, the first capacities and the
        provisioning's events (after the engine's, so that events at the same time keep their order)."""
        super().start()
        collector, reprovision_with = self._collector, self._reprovision_with
        self.collector = collector(self) if collector is not None else None
        self.reprovisioner = Reprovisioner(self, *reprovision_with) if reprovision_with is not None else None
        self._residual()
        self.schedule_every(self._nothing, STEP, start=0.0)  # an event at every step: provisioning moves on
        for job in self.jobs:
            if isinstance(job.tag, Run):
                self.schedule(lambda j=job: self._submitted(j), at=job.arrival, priority=Priority.HIGH)

    # ---- provisioning over time -------------------------------------------------------------------------
    def capacity_now(self, name: str) -> int:
        """Containers ``name`` is provisioned right now: reservation + user's count per active run +
        R* pieces + a live DRA grant."""
        p, now = self.provisioning[name], self.time
        step = int(now // STEP)
        c = 0
        if p.base is not None and step < p.base.size:
            c += int(p.base[step])
        c += p.while_running * len(self.active[name])
        for t0, sky in self.pieces[name]:
            k = int((now - t0 + 1e-9) // STEP)
            if 0 <= k < sky.size:
                c += int(sky[k])
        if self.reprovisioner is not None:
            c += self.reprovisioner.extra(name)
        return c

    def apply(self, name: str, residual: bool = True) -> bool:
        """Set ``name``'s queue to what it is provisioned now (no borrowing), and the ad hoc queue to the
        rest; True if it changed."""
        c = self.capacity_now(name)
        if c == self.now_capacity[name]:
            return False
        self.now_capacity[name] = c
        self.scheduler.set_capacity(name, (c, c))
        if self.literal:
            self._take_back(name, c)
        self.capacity_log[name].append((self.time, c))
        if residual:
            self._residual()
        return True

    def _take_back(self, name: str, c: int) -> None:
        """The literal worst case: the queue gives back what it holds above ``c`` at once (its youngest
        tasks). With ``resume`` a task taken back keeps the work it has done and needs only the rest when it
        runs again (the LP's fluid model: a run progresses by the container-time it is given); without, its
        work is lost (YARN's preemption kills the container)."""
        if float(self.scheduler.used(self.scheduler.queues[name])[0]) <= c + 1e-9:
            return
        now = self.time
        # work left of each running task: what its hold still has to run, at its machine's speed
        left = {h.owner: (h.finish - now) * self.speed[h.machine] for h in self.csv.ledger.holds()
                if h.queue == name and h.visible} if self.resume else {}
        self.scheduler.reclaim(name)
        for t, work in left.items():
            if t.state == QUEUED:
                t.duration = max(work, 1e-3)

    def _residual(self) -> None:
        rest = max(self.total - sum(self.now_capacity.values()), 0)
        if rest != self._rest:
            self._rest = rest
            self.scheduler.set_capacity(ADHOC, (rest, rest), (self.total, self.total))

    def _nothing(self) -> None:
        """The step's event: :meth:`settle` brings every queue's provisioning up to the new step."""

    def _refresh(self) -> None:
        """Bring every queue up to now once a step begins or an R* piece changes (cheap otherwise). Only the queues
        whose base changes at the new steps, and at a piece's change those holding R* pieces, are read: the others
        are provisioned as they were (a run's submission or end and a DRA grant or its expiry set their queue at once)
        (tests/morpheus/test_refresh_steps.py compares whole cycles with reading every queue at every step)."""
        now = self.time
        step = int(now // STEP)
        pieces = False
        while self._changes and self._changes[0] <= now + 1e-9:
            heapq.heappop(self._changes)
            pieces = True
        if not pieces and step == self._applied_step:
            return
        names = {name for s in range(self._applied_step + 1, step + 1) for name in self._base_changes.get(s, ())}
        if pieces:  # and the queues holding R* pieces (the others' capacity moves only with their base, read above)
            names |= self._with_pieces
        names = sorted(names, key=self._order.__getitem__)  # in the queues' order: the same set_capacity calls
        self._applied_step = step
        changed = [self.apply(name, residual=False) for name in names]
        if any(changed):
            self._residual()

    def settle(self) -> None:
        super().settle()
        self._refresh()

    def _submitted(self, job: Job) -> None:
        run: Run = job.tag
        name = self.queue_of(run)
        self.active[name].append(job)
        p = self.provisioning[name]
        if p.from_start is not None:
            self.pieces[name].append((job.arrival, p.from_start))
            self._with_pieces.add(name)
            for k in range(1, p.from_start.size + 1):  # R* changes every step from the run's start
                if k == p.from_start.size or p.from_start[k] != p.from_start[k - 1]:
                    heapq.heappush(self._changes, job.arrival + k * STEP)
                    self.schedule(self._nothing, at=job.arrival + k * STEP)
        if self.collector is not None:
            self.collector.submitted(run)
        self.apply(name)

    def demand(self, name: str) -> int:
        """Containers the job's active runs use plus the tasks they have waiting (the ask)."""
        return sum(1 for job in self.active[name] for t in job.tasks if t.state in (RUNNING, QUEUED))

    # ---- reports ----------------------------------------------------------------------------------------
    def job_finished(self, manager) -> None:
        job = manager.job
        if isinstance(job.tag, Run):
            name = self.queue_of(job.tag)
            self.active[name].remove(job)
            self.finished_at[job.id] = job.finish
            if self.collector is not None:
                self.collector.finished(job)
            super().job_finished(manager)
            self.apply(name)
            return
        super().job_finished(manager)

    # ---- invariants -------------------------------------------------------------------------------------
    def check_invariants(self) -> None:
        """The engine's rules, and: each periodic queue's capacity is what it is provisioned now, it never
        borrows, and the ad hoc queue is guaranteed exactly the rest."""
        super().check_invariants()
        queues = self.scheduler.queues
        for name in self.names:
            q = queues[name]
            want = self.capacity_now(name)
            if q.guaranteed[0] != want or q.maximum[0] != want:
                raise AssertionError(f"queue {name!r} is guaranteed {q.guaranteed[0]:g} (maximum {q.maximum[0]:g}) "
                                     f"at {self.time:g} s, but it is provisioned {want}")
        if self.literal:
            for name in self.names:
                held = float(self.scheduler.used(queues[name])[0])
                if held > self.now_capacity[name] + 1e-9:
                    raise AssertionError(f"periodic queue {name!r} holds {held:g} containers at {self.time:g} s, "
                                         f"above its reservation {self.now_capacity[name]} (worst_case='literal')")
        rest = max(self.total - sum(self.now_capacity.values()), 0)
        if queues[ADHOC].guaranteed[0] != rest:
            raise AssertionError(f"the ad hoc queue is guaranteed {queues[ADHOC].guaranteed[0]:g}, the rest is {rest}")
