"""Lab 05's Mesa side: a lake's jobs replayed on the engine's YARN-like capacity scheduler.

:class:`WingModel` is a :class:`~cluster_sim.engine.CapacityClusterModel` whose jobs are a lake's:
each job is a rigid gang (all its containers start together), submitted at its trace time, and its
inputs behave as in Wing §6.3:

* a **hard** job submitted before an input exists fails for missing input (and so, later, may its
  own dependents);
* a **polling** job waits for its inputs, and is submitted the same lag after the last one lands as
  in the trace; if an input's writer fails, the input never comes and the poller fails too;
* an input overwritten in place that had an older version never stops a job: it reads the stale one.

Upstream jobs outside the simulation (earlier than the run) wrote their outputs at their trace
times. :class:`ProvenanceRecorder` (Lab 04's Mesa side) writes the ProvRepo events of the run as they
happen: reads when a job starts, writes when it ends, downloads at their trace times once the output
exists, so Wing's pipeline can analyse a lake the simulation produced.

Example
-------
>>> from cluster_sim.engine import ClusterConfig, Job, QueueSpec, Stage, Task
>>> def job(i, t, n, runtime):
...     j = Job(id=i, arrival=t, queue="q", gang=n)
...     j.stages.append(Stage(0, [Task(10 * i + k, j, 0, (1, 1), runtime) for k in range(n)]))
...     return j
>>> cfg = ClusterConfig(machines=1, cpu_per_machine=4, mem_per_machine=4, placement="first_fit", horizon=100.0)
>>> up, hard, poll = job(1, 0.0, 4, 10.0), job(2, 5.0, 2, 1.0), job(3, 6.0, 2, 1.0)
>>> model = WingModel(cfg, [QueueSpec("q")], [up, hard, poll], needs={2: [1], 3: [1]}, polling={3},
...                   poll_delay={3: 2.0}, check_every_event=True)
>>> model.run_until(100.0)
>>> hard.failed, poll.failed, poll.tasks[0].start      # 2 came before 1's output; 3 waited, 2 s after 1 ended
(True, False, 12.0)
"""

from __future__ import annotations

import math
from collections import defaultdict

from ..._mesa import mesa  # mesa without its stack walk (cluster_sim/_mesa.py)
import numpy as np
import pandas as pd

from ...engine import CapacityClusterModel, JobManager
from ...engine.workload import QUEUED


class WingJobManager(JobManager):
    """A job of the lake: at its trace submission the model checks its inputs before it is released."""

    def start(self) -> None:
        self.model.submitted(self)

    def release(self) -> None:
        """The inputs are there: admit the job and hand its first stages to the capacity scheduler."""
        if self.admit():
            self.release_ready()

    def watched(self, task) -> bool:
        # a completion releases waiting pollers and is a write: it must be handled at its exact time
        return True


class ProvenanceRecorder(mesa.Agent):
    """Writes ProvRepo (``job``, ``file``, ``op``, ``time``) as the simulation runs.

    ``reads`` / ``writes``: each job's files (from the lake); ``downloads``: each writer's trace
    downloads (file, time); ``outside``: writes of jobs that are not simulated but write during the
    run (submitted before it, ending in it), as (job, file, time): they happen at their trace times,
    as the model assumes. A job reads when its gang starts and writes when it completes; a download
    happens at its trace time if the writer's output exists by then (later ones are not
    rescheduled: the user came and found nothing). :attr:`seen` is the run's truth: for each read,
    the job whose version of the file it got (the newest version written before it, in the engine's
    event order; a job's reads of its own output are not dependencies).

    ProvRepo's convention is that a read at the very instant of a write does not see it, so a read
    that does see a write of the same instant (the writer's completion was handled first, as the
    engine settles completions before it admits work) is logged at the next representable time
    after it: the log then says what happened, and :func:`~cluster_sim.wing.provenance.single_hop`
    recovers :attr:`seen` exactly.
    """

    def __init__(self, model, reads: dict, writes: dict, downloads: dict, outside=()):
        super().__init__(model)
        self.reads, self.writes, self.downloads = reads, writes, downloads
        self.rows: list[tuple] = []  # (job, file, op, time, logged just after time)
        self.versions: dict[str, tuple[float, int]] = {}  # file -> (time, job) of its newest version
        self.seen: list[tuple[int, int]] = []  # (reader, writer) for every read of another job's output
        for job_id, f, when in outside:
            if when < 0:
                raise ValueError(f"outside: the write of {f!r} by job {job_id} at time={when!r} is not allowed: "
                                 "outside writes happen during the run, at time >= 0")
            self.model.schedule(lambda j=job_id, f=f, when=when: self._write(j, f, when), at=when)

    def _write(self, job_id: int, f: str, t: float) -> None:
        self.rows.append((job_id, f, "write", t, False))
        self.versions[f] = (t, job_id)

    def job_started(self, job_id: int, t: float) -> None:
        for f in self.reads.get(job_id, ()):
            v = self.versions.get(f)
            self.rows.append((job_id, f, "read", t, v is not None and v[0] == t))
            if v is not None and v[1] != job_id:
                self.seen.append((job_id, v[1]))

    def job_finished(self, job_id: int, t: float) -> None:
        for f in self.writes.get(job_id, ()):
            self._write(job_id, f, t)
        for f, when in self.downloads.get(job_id, ()):
            if when > t:
                self.model.schedule(lambda f=f, when=when: self.rows.append((pd.NA, f, "download", when, False)), at=when)

    def prov(self, offset: float = 0.0) -> pd.DataFrame:
        """The recorded ProvRepo, times shifted by ``offset`` (the simulation's start in lake time)."""
        p = pd.DataFrame(self.rows, columns=["job", "file", "op", "time", "after"])
        p["job"] = p["job"].astype("Int64")
        t = p["time"].astype(float).to_numpy() + offset
        p["time"] = np.where(p["after"].to_numpy(bool), np.nextafter(t, np.inf), t)
        return p.drop(columns="after").sort_values(["time", "op"], kind="stable", ignore_index=True)


class WingModel(CapacityClusterModel):
    """A lake's jobs on the capacity scheduler, with Wing's dependency semantics (module docstring).

    ``needs``: job id -> the upstream job ids (simulated ones) whose output it must find;
    ``polling``: the ids of jobs that wait for their inputs; ``poll_delay``: job id -> seconds from
    the last input landing to the poller's submission. ``rekey_times``: job id -> times (sorted) at
    which its ordering key changes (Wing-MIL's value functions step down as a job grows late); the
    job is re-placed in its queue at each while it waits. ``recorder``: a
    :class:`ProvenanceRecorder` factory, ``recorder(model)``.
    """

    job_manager_class = WingJobManager

    def __init__(self, config, queues, jobs, *, needs=None, polling=(), poll_delay=None, rekey_times=None,
                 recorder=None, **kwargs):
        super().__init__(config, queues, jobs=jobs, elastic=kwargs.pop("elastic", False), **kwargs)
        self.needs = {} if needs is None else dict(needs)
        self.polling = set(polling)
        self.poll_delay = {} if poll_delay is None else dict(poll_delay)
        self.rekey_times = {} if rekey_times is None else dict(rekey_times)
        self.done: dict[int, float] = {}
        self.failed: set[int] = set()
        self.fail_reason: dict[int, str] = {}
        self.watchers: dict[int, list[int]] = defaultdict(list)  # upstream -> pollers waiting on it
        self.missing: dict[int, int] = {}  # poller -> inputs still missing
        self.released: dict[int, float] = {}
        self.rekeys = 0
        self.by_id = {j.id: j for j in self.jobs}
        self.recorder = recorder(self) if recorder is not None else None

    # ---- inputs -------------------------------------------------------------------------------------
    def submitted(self, manager: WingJobManager) -> None:
        """A job's trace submission: release it, fail it for missing input, or let it poll."""
        j = manager.job.id
        ups = self.needs.get(j, ())
        gone = [u for u in ups if u in self.failed]
        if gone:
            manager.fail(f"missing input: job {gone[0]}, which writes it, failed")
            return
        missing = [u for u in ups if u not in self.done]
        if not missing:
            self._release(manager)
        elif j in self.polling:
            self.missing[j] = len(missing)
            for u in missing:
                self.watchers[u].append(j)
        else:
            manager.fail(f"missing input: job {missing[0]} had not completed when job {j} was submitted")

    def _release(self, manager: WingJobManager) -> None:
        self.released[manager.job.id] = self.time
        manager.release()
        times = self.rekey_times.get(manager.job.id)
        if times is not None:
            self._next_rekey(manager.job, times)

    def _next_rekey(self, job, times) -> None:
        i = int(np.searchsorted(times, self.time, side="right"))
        if i < len(times):
            self.schedule(lambda: self._rekey(job, times), at=float(times[i]))

    def _rekey(self, job, times) -> None:
        """The job's key changed: if it still waits, take it out of its queue and put it back in its new place."""
        if self.capacity_scheduler.reorder(job):
            self.rekeys += 1
            self._next_rekey(job, times)

    # ---- the engine's reports -----------------------------------------------------------------------
    def task_started(self, task) -> None:
        first = math.isnan(task.job.first_start)
        super().task_started(task)
        if first and self.recorder is not None:
            self.recorder.job_started(task.job.id, self.time)

    def job_finished(self, manager) -> None:
        job = manager.job
        self.done[job.id] = job.finish
        super().job_finished(manager)
        if self.recorder is not None:
            self.recorder.job_finished(job.id, job.finish)
        for w in self.watchers.pop(job.id, ()):
            if w in self.failed:
                continue
            self.missing[w] -= 1
            if self.missing[w] == 0:
                del self.missing[w]
                waiter = self.job_managers[w]
                self.schedule(lambda waiter=waiter: self._release(waiter), after=self.poll_delay.get(w, 0.0))

    def job_failed(self, manager, reason: str) -> None:
        j = manager.job.id
        self.failed.add(j)
        self.fail_reason[j] = reason
        super().job_failed(manager, reason)
        for w in self.watchers.pop(j, ()):  # its output never comes: the jobs polling for it fail too
            if w not in self.failed:
                self.missing.pop(w, None)
                self.job_managers[w].fail(f"missing input: job {j}, which writes it, failed")

    # ---- invariants ---------------------------------------------------------------------------------
    def check_invariants(self) -> None:
        """The engine's rules, and Wing's: no job started before the inputs it needs existed; every job
        is in exactly one state (completed, failed for missing input, or pending)."""
        super().check_invariants()
        for job in self.arrived:
            done, failed = not math.isnan(job.finish), job.failed
            if done and failed:
                raise AssertionError(f"job {job.id} both completed and failed")
            if failed and not self.fail_reason.get(job.id, "").startswith("missing input"):
                raise AssertionError(f"job {job.id} failed without a missing input")
            if not math.isnan(job.first_start):
                for u in self.needs.get(job.id, ()):
                    if u not in self.done or self.done[u] > job.first_start:
                        raise AssertionError(f"job {job.id} started at {job.first_start} before its input from job {u} "
                                             f"existed (done: {self.done.get(u)})")
            if failed and any(t.state == QUEUED for t in job.tasks):
                raise AssertionError(f"job {job.id} failed but still waits in a queue")
