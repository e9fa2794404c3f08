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

**Composing the two** (``queue_layer.py``): :class:`QueueLayer`, an admit-only layer of guaranteed
tokens (a reservation queue and organisation queues, as the capacity family admits) above the shared-state
family's placement schedulers. Put :class:`QueuedModel` first in a model's bases
(``class MyModel(QueuedModel, ClusterModel)``, or above a lab's Omega model); its seam
``model.make_queue_layer()`` builds the layer at the start (tokens, organisations, the queues' order
``key(job)``, and ``release_rule(job, tokens, now)`` for what a reserved job gives back);
``layer.reserve(job_id, tokens)`` sets tokens aside for a reservation; ``layer.top_up(manager, tokens)``
gives a running job more for a while (a reprovisioning grant) and ``layer.take_back(manager, tokens)``
ends it. Its job manager,
:class:`TokenJobManager`, holds the job's tokens and hands at most that many tasks to its scheduler; its
seams are ``request()`` (tokens and queue) and ``tokens_to_release(task)`` (give some back early). The
layer's books are part of ``check_invariants()``.

The pure layer (no Mesa): :class:`ResourceLedger` (``ledger.py``), placement policies
(``placement.py``), :class:`StepIntegral` (``metrics.py``), ``Job``/``Stage``/``Task`` and their
generator (``workload.py``); configs are :class:`cluster_sim.config.Config` dataclasses (imported from
``cluster_sim.config``, their one home): :class:`ClusterConfig` in ``cluster_config.py``, on
:class:`BaseClusterConfig`, whose subclasses state the job arrival rate each in its own words
(``ClusterConfig.load``: offered CPU load; Labs 08-09's ``workload_level``: the paper's multiple of its rate).
"""

from .agents import (BLOCKED, EVENTS, PLACED, RETRY, CentralStateView, JobManager, LocalStateView, Machine, Scheduler,
                     SchedulerProtocol, TaskQueue)
from .cluster_config import BaseClusterConfig, ClusterConfig
from .ledger import Hold, ResourceLedger
from .metrics import StepIntegral, work_accounting
from .model import ClusterMetrics, ClusterModel, ClusterResult, collect, run
from .capacity import CapacityClusterModel, CapacityScheduler, Queue, QueueSpec
from .queue_layer import (DEFAULT_QUEUE, RELEASE_CHOICES, RESERVED, QueuedClusterModel, QueuedModel, QueueLayer,
                          TokenJobManager, arrival_order, keep_reservation)
from .placement import POLICIES, best_fit, first_fit, random_fit, worst_fit
from .workload import Job, Stage, Task, WorkloadSpec, generate_jobs

__all__ = [
    "BLOCKED", "EVENTS", "PLACED", "RETRY",
    "BaseClusterConfig", "CapacityClusterModel", "CapacityScheduler", "CentralStateView", "ClusterConfig", "ClusterMetrics",
    "ClusterModel", "ClusterResult", "DEFAULT_QUEUE", "Hold", "Job", "JobManager", "LocalStateView", "Machine", "POLICIES",
    "QueuedClusterModel", "QueuedModel", "QueueLayer", "RELEASE_CHOICES", "RESERVED", "TokenJobManager",
    "arrival_order", "keep_reservation",
    "Queue", "QueueSpec", "ResourceLedger", "Scheduler", "SchedulerProtocol", "Stage", "StepIntegral", "Task",
    "TaskQueue",
    "WorkloadSpec", "best_fit", "collect", "first_fit", "generate_jobs", "random_fit", "run",
    "work_accounting", "worst_fit",
]
