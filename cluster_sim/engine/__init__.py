"""The Mesa substrate every lab shares: one ledger, one event loop, two scheduler families.

**The contract for lab authors.** A lab extends the engine only through these seams (a test
fails if a lab calls or overrides a private member of the engine):

- **Construction, as in Mesa.** ``ClusterModel(config, *, jobs=None, policy=None,
  scheduler_class=None, job_manager_class=None)`` builds the substrate: the ledger, the central
  state view and the machines. A lab's model calls ``super().__init__(config, ...)`` first, then sets
  its own state. ``model.start()`` (called by the first ``run_until``, or by hand to look at the jobs
  and schedulers before running) makes the schedulers and the jobs and schedules the first
  arrival; a lab that needs them, or schedules events of its own at the start, overrides it and
  calls ``super().start()`` first.
- **Events.** ``model.schedule(fn, at=|after=)`` runs ``fn()`` at that time: the model first
  settles the completions due by then, then runs ``fn``, then calls ``after_event()`` (the
  invariants, when ``check_every_event``). It keeps ``fn`` alive (Mesa holds callbacks weakly), so
  lambdas are fine. ``model.schedule_every(fn, interval, start=)`` repeats; ``model.callback(fn)``
  makes a reusable callback for something scheduled again and again. Every event in the engine
  and the labs goes through these, the central state's release wake-ups included; no handler
  settles or checks by hand. ``model.settle()`` and ``model.after_event()`` are what runs around
  each event: a lab with state of its own to bring up to now, or rules of its own to check,
  overrides them and calls ``super()``. ``model.schedule_batched(call, after=)`` runs a
  ``model.callback`` exactly where such an event would run, without making a Mesa event for each
  one in an uninterrupted run of them; a model whose class sets ``decision_events = "batched"``
  (RMiner's) sends its schedulers' decisions through it, with results identical to one event each
  (tested). ``pause_gc = True`` pauses Python's cyclic garbage collector while it makes its jobs
  and runs (for millions of tasks; a run makes no cyclic garbage).
- **The workload.** ``model.make_jobs(rng)`` builds the jobs from the model's workload stream;
  override it to add attributes (``job.priority``, ``job.queue``, ``job.gang``, ``job.tag``) drawn
  from the same stream. ``jobs=...`` runs hand-built jobs instead (refused at once if a task fits
  no machine).
- **Who schedules.** ``model.make_schedulers(policy)`` builds the schedulers and
  ``model.route(job)`` picks the one a job goes to; ``scheduler_class`` and ``job_manager_class``
  (class attributes, or the constructor's arguments) name the agents. Every scheduler, of either
  family, implements :class:`SchedulerProtocol`: ``enqueue(tasks)``, ``requeue(task)`` (an evicted
  task waits again), ``unblock()``, ``waiting()`` and its ``index``. A :class:`JobManager`'s
  ``start()`` runs two steps: ``admit()`` (the job fails if a task fits no machine) and
  ``release_ready()`` (its stages without parents go to the scheduler through ``release_stage(s)``,
  all at once; a framework that caps its parallelism overrides that); a lab that holds a job back
  (for tokens, for its inputs) overrides ``start()`` and calls the steps when it is time. A
  :class:`Scheduler` is a template: ``queue_key()`` orders its queue, ``decide(task)`` does
  something with the head task (returns ``PLACED``, ``RETRY`` or ``BLOCKED``), ``choose(task)``
  picks a machine, ``on_blocked()`` says what to wait for.
- **The one ledger.** ``model.csv.ledger`` (a :class:`ResourceLedger`) holds every running task as
  a hold tagged visible or hidden, with its owner and queue. Commit with
  ``csv.commit(task, machine, duration=, visible=, queue=, watched=)``; stop early with
  ``csv.kill(task, reason)`` or ``csv.evict(task)`` (taken off its machine, to requeue or migrate).
  ``ledger.free`` is what the central state shows; ``ledger.truly_free`` subtracts hidden work.
- **Cluster events.** ``csv.subscribe(obj)`` once: ``obj`` is told of each event it has a handler
  for (:data:`EVENTS`): ``on_release(task, time)``, ``on_hidden_release(task, time)``,
  ``on_commit(task, time)``, ``before_sync(view, time)``, ``on_sync(view, time)`` (see
  :class:`CentralStateView`).
- **Reports.** Agents call ``model.task_started(task)`` (once per task), ``model.task_ended(task)``,
  ``model.job_finished(manager)``, ``model.job_failed(manager, reason)``,
  ``model.queue_changed(delta)``, ``model.view_synced(view)``; labs override them to keep their
  own books, calling ``super()``.
- **Invariants.** ``model.check_invariants()`` = ``check_ledger()`` + ``check_tasks(running, queued)``;
  labs add their own rules after calling them.

Two families share all of this:

- **Shared state (Omega)**: :class:`ClusterModel` with parallel :class:`Scheduler` agents on
  :class:`LocalStateView` snapshots of the :class:`CentralStateView`, refreshed every
  ``update_delay``; optimistic commits and conflicts.
- **Central capacity scheduling (YARN)**: :class:`CapacityClusterModel` with one
  :class:`CapacityScheduler` over a tree of :class:`QueueSpec` queues: guarantees, elastic
  limits, capacities that change over time, gangs, orderings, optional preemption.

The pure layer (no Mesa): :class:`ResourceLedger` (``ledger.py``), placement policies
(``placement.py``), :class:`StepIntegral` (``metrics.py``), ``Job``/``Stage``/``Task`` and their
generator (``workload.py``); configs are :class:`cluster_sim.config.Config` dataclasses
(:class:`ClusterConfig` in ``cluster_config.py``).
"""

from ..config import Config, Work, param
from .agents import (BLOCKED, EVENTS, PLACED, RETRY, CentralStateView, JobManager, LocalStateView, Machine, Scheduler,
                     SchedulerProtocol, TaskQueue)
from .cluster_config import ClusterConfig
from .ledger import Hold, ResourceLedger
from .metrics import StepIntegral, work_accounting
from .model import ClusterMetrics, ClusterModel, ClusterResult, collect, run
from .capacity import CapacityClusterModel, CapacityScheduler, Queue, QueueSpec
from .placement import POLICIES, best_fit, first_fit, random_fit, worst_fit
from .workload import Job, Stage, Task, WorkloadSpec, generate_jobs

__all__ = [
    "BLOCKED", "EVENTS", "PLACED", "RETRY",
    "CapacityClusterModel", "CapacityScheduler", "CentralStateView", "ClusterConfig", "ClusterMetrics",
    "ClusterModel", "ClusterResult", "Config", "Hold", "Job", "JobManager", "LocalStateView", "Machine", "POLICIES",
    "Queue", "QueueSpec", "ResourceLedger", "Scheduler", "SchedulerProtocol", "Stage", "StepIntegral", "Task",
    "TaskQueue", "Work",
    "WorkloadSpec", "best_fit", "collect", "first_fit", "generate_jobs", "param", "random_fit", "run",
    "work_accounting", "worst_fit",
]
