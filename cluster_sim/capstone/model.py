"""The composition on the engine: the engine's queue layer of tokens above Labs 08-09's placement schedulers.

Two layers, each the engine's or a lab's (built through the engine's seams: ``job_manager_class``,
``request``, ``tokens_to_release``, ``make_queue_layer``, ``scheduler_class``, ``start``, ``make_jobs``):

* the engine's :class:`~cluster_sim.engine.QueueLayer` decides **when** a job may run and **how much**
  of the cluster it may hold: guaranteed tokens (one per CPU unit), admitted from a reservation queue
  (periodic jobs, when Morpheus is on) or from organisation queues (equal guaranteed shares, elastic up
  to what is free; the least-served organisation first, inside it the queue's order: first come first
  served, or Wing-Agg's predicted value efficiency when Wing is on; a job behind one that does not fit
  may go first). Reservations are taken from the organisations' capacity while they are active.
* :class:`CapstoneJobManager` is the engine's :class:`~cluster_sim.engine.TokenJobManager` (it holds
  the job's tokens and hands at most that many of its vertices to a placement scheduler at once,
  stage by stage) asking for the day's tokens and, with the shaper on, giving back at every vertex
  completion what Lab 01's :class:`~cluster_sim.shaper.shaper.ResourceShaper` says its remaining
  stages cannot use.
* Placement is the engine's shared-state family as Labs 08-09 run it
  (:class:`~cluster_sim.rminer.model.RMinerModel`: parallel schedulers on stale views, with SmartRM
  when Resource Miner is on); with the stage optimiser on, each scheduler is also Lab 06's
  :class:`~cluster_sim.stageopt.agents.IPAScheduler` (Python's method order composes the two: the
  RM filter sees a stage first, IPA plans what it leaves to the normal scheduler).

No mechanism is re-implemented here: each is the lab's own class or function, switched on by the
config.

A completion no one waits for (no child stage, no vertex of the job waiting for a token, nobody in
the queue layer, shaper off) is settled at the next event, as in the engine; the tokens it frees are
booked at its exact finish time.
"""

from __future__ import annotations

import numpy as np

from ..engine import QueuedModel, QueueLayer, TokenJobManager
from ..engine.queue_layer import RELEASE_CHOICES, RESERVED, arrival_order, keep_reservation
from ..morpheus import ReprovisionRule, reprovision
from ..rminer.config import RMinerConfig
from ..rminer.model import RMAwareScheduler, RMinerModel
from ..shaper.peak import IncrementalPeak
from ..stageopt.agents import IPAScheduler
from .config import CapstoneConfig
from .day import Day, make_day, shaper_trees
from .plans import resource_plans

__all__ = ["RELEASE_CHOICES", "RESERVED", "CapstoneJobManager", "CapstoneModel", "IPARMAwareScheduler",
           "engine_config", "keep_reservation"]


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


class CapstoneJobManager(TokenJobManager):
    """The engine's token-holding job manager, asking for the day's tokens; with the shaper on it gives
    back, at every vertex completion, what Lab 01's :class:`ResourceShaper` says its remaining stages
    cannot use."""

    def __init__(self, model: "CapstoneModel", job, scheduler):
        super().__init__(model, job, scheduler)
        plans = model.plans
        # Lab 01's shaper on the job's stage graph; under the stage optimiser's resource plans a stage weighs its
        # vertices' tokens. Its trees (ResourceShaper's, remembered per graph: shaper_trees) are read at the first
        # completion
        self.shaping = model.shaping
        if self.shaping:
            self.widths = job.tag.widths if plans is None else plans.widths(job.id)
            self.names = [f"s{i}" for i in range(len(job.stages))]
            self.peak: IncrementalPeak | None = None  # the shaper's remaining peak, kept up to date (first completion)
            self.peak_completed = [0] * len(job.stages)  # the completed tokens the peak has seen, per stage

    def tokens_of(self, task) -> int:
        """One token per CPU unit: a vertex's cores under the stage optimiser's plan (1 otherwise)."""
        return task.demand[0]

    @property
    def demand(self) -> int:
        """Tokens the job could use now: its vertices' at the schedulers or running, and those waiting for a token."""
        return self.in_use + sum(self.tokens_of(t) for _, tasks in self.ready for t in tasks)

    def request(self) -> tuple[int, str]:
        """A periodic run asks its Morpheus reservation (when Morpheus is on); every other job asks its
        user's tokens in its organisation's queue. Under the stage optimiser's resource plans the user's
        tokens follow the day's rule in tokens, and a reservation is at least the run's largest vertex."""
        spec, plans = self.job.tag, self.model.plans
        tokens = spec.tokens if plans is None else plans.tokens[spec.id]
        if self.model.config_capstone.morpheus and spec.reservation is not None:
            least = 1 if plans is None else max(self.tokens_of(t) for s in self.job.stages for t in s.tasks)
            return max(spec.reservation[0], least), RESERVED
        return tokens, spec.org

    def watched(self, task) -> bool:
        return self.shaping or super().watched(task)

    def tokens_to_release(self, task) -> int:
        if not self.shaping:
            return 0
        # Lab 01's remaining peak on the shaper's own trees, updated from the stages whose completions changed
        # (what its job manager does: IncrementalPeak equals remaining_peak at every state, walking up from the
        # changed stage instead of re-validating and re-walking the whole job at every completion)
        if self.peak is None:
            self.peak = IncrementalPeak(list(shaper_trees(self.widths, self.job.tag.parents)))
        seen = self.peak_completed
        for s, done in enumerate(self.tokens_completed):
            if done != seen[s]:
                self.peak.complete(self.names[s], done)
                seen[s] = done
        release = max(0, self.held - self.peak.peak)
        self.model.shaper_log.append((self.job.id, dict(zip(self.names, self.tokens_completed)),
                                      dict(zip(self.names, self.tokens_in_flight)), self.held, release))
        return release


class CapstoneModel(QueuedModel, RMinerModel):
    """One day through the queue layer and the placement layer, with the config's switches.

    ``tokens`` overrides the queue layer's tokens (default: the cluster's CPU); a test sets it so
    large that admission never binds, to compare the composition with the plain engine.
    ``release_rule(job, tokens, now) -> "reservation" | "organisations"`` decides where the tokens a
    reserved run gives back go (default :func:`keep_reservation`; the exercise writes another).
    """

    job_manager_class = CapstoneJobManager
    plans = None  # Lab 07's resource plans of the day's stages, with the stage optimiser on

    def __init__(self, config: CapstoneConfig, *, day: Day | None = None, tokens: int | None = None,
                 release_rule=None, check_every_event: bool = False):
        if not isinstance(config, CapstoneConfig):
            raise ValueError(f"config={config!r} is not allowed: give a CapstoneConfig")
        day = make_day(config) if day is None else day
        super().__init__(engine_config(config, day), scheduler_class=IPARMAwareScheduler if config.stageopt
                         else RMAwareScheduler, check_every_event=check_every_event, record_series=False)
        self.config_capstone = config
        self.day = day
        self.shaping = config.shaper
        self.dra_rule = ReprovisionRule(hold_seconds=day.step, recent_seconds=2 * day.step)  # Lab 03's, in plan steps
        self.dra_log: list[dict] = []  # every reprovisioning decision: what the rule saw and granted
        self.shaper_log: list[tuple] = []  # (job, completed, running, held before, released) per completion
        self.queue_tokens = config.tokens if tokens is None else tokens  # the queue layer's
        self.release_rule = release_rule
        # Lab 07's resource plans of the day's stages (None: one token per vertex)
        self.plans = resource_plans(config) if config.stageopt and config.raa else None
        if self.plans is not None and set(self.plans.tokens) != {j.id for j in day.jobs}:
            raise ValueError("day= is not the config's day: the stage optimiser's resource plans are made for "
                             "make_day(config)'s jobs")

    def make_queue_layer(self) -> QueueLayer:
        """The engine's queue layer: the organisations of the day, ordered first come first served or, with
        Wing on, by Wing-Agg's predicted value efficiency; reserved runs' returned tokens go where the
        ``release_rule`` says."""
        if self.config_capstone.wing:
            efficiency = self.day.efficiency.to_dict()
            key = lambda job: (-efficiency[job.id], job.arrival, job.id)  # Wing-Agg: most value per compute first
        else:
            key = arrival_order
        rule = self.release_rule
        release_rule = None if rule is None else (lambda job, tokens, now: rule(job.tag, tokens, now))
        orgs = {j.org for j in self.day.jobs} or {"org0"}
        return QueueLayer(self, self.queue_tokens, orgs, key, release_rule)

    def start(self) -> None:
        """The engine's start (RMiner's, then the queue layer's), then the reservations' events."""
        super().start()
        config = self.config_capstone
        if config.morpheus:
            # Lab 03's dynamic reprovisioning on this run's copy of the day's plan, every plan step
            self.plan = self.day.plan.copy()
            self.live_grants: dict[int, tuple] = {}  # job id -> (plan grant id, tokens granted)
            self.schedule_every(self.reprovision_tick, self.day.step, start=self.day.step)
            for spec in self.day.jobs:
                if spec.reservation is not None:
                    n, start, end = spec.reservation
                    self.schedule(lambda j=spec.id, n=n: self.layer.reserve(j, n), at=start)
                    if end < config.horizon:
                        self.schedule(lambda j=spec.id: self.layer.reserve(j, 0), at=end)

    # ---- Morpheus's dynamic reprovisioning (Lab 03, §7) ---------------------------------------------
    def reprovision_tick(self) -> None:
        """Every plan step: each reserved run of a packed template whose demand exceeds its tokens, and that
        holds no live grant, asks Lab 03's :func:`~cluster_sim.morpheus.reprovision` on the plan."""
        for m in list(self.job_managers.values()):
            if m.queue == RESERVED and m.held > 0 and m.job.id not in self.live_grants and m.demand > m.held:
                alloc = self.day.allocations.get(m.job.tag.template)
                if alloc is not None:
                    self.reprovision_run(m, alloc)

    def reprovision_run(self, manager, alloc) -> None:
        rule = self.dra_rule
        spec, now = manager.job.tag, self.time
        first = int(round(spec.reservation[1] / self.day.step))  # the run's block: its own reservation
        block = np.asarray(alloc.blocks[0])
        steps = rule.recent_steps(now, self.day.step)
        recent = np.array([int(block[s - first]) if 0 <= s - first < block.size else 0 for s in steps])
        demand, reserved = manager.demand, manager.held
        grant, gid = reprovision(self.plan, alloc.job_id, now, demand, rule, reserved_now=reserved, own_recent=recent)
        given = self.layer.top_up(manager, grant.containers) if grant.containers else 0
        if gid is not None and given < grant.containers:  # the plan had room, the cluster's tokens did not
            self.plan.remove_grant(gid)
            gid = self.plan.add_grant(alloc.job_id, rule.hold_steps(now, self.day.step), given) if given else None
        self.dra_log.append(dict(time=now, job=spec.id, demand=demand, reserved=reserved,
                                 recent=recent.tolist(), room=grant.room, granted=grant.containers, given=given,
                                 reason=grant.reason))
        if given:
            self.live_grants[spec.id] = (gid, given)
            self.schedule(lambda: self.grant_expires(manager, gid, given), after=rule.hold_seconds)

    def grant_expires(self, manager, gid, tokens: int) -> None:
        """T seconds are over: the plan and the run give the grant back (the run as its vertices end)."""
        self.plan.remove_grant(gid)
        del self.live_grants[manager.job.id]
        if manager.held > 0:  # still running
            self.layer.take_back(manager, tokens)

    def make_jobs(self, rng):
        """The day's jobs (the same at every switch setting; with the resource plans, each vertex sized and
        timed by its stage's plan)."""
        return self.day.engine_jobs(self.plans)
