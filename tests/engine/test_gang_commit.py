"""Round 17, Lab 05's claims: a capacity scheduler's gang is committed in one go (``ResourceLedger.try_hold_gang``,
``CentralStateView.commit_gang``) and the ledger's kept lists of fitting machines follow the changed machines when
read. Each must give what the old path gave: holds and rows against holding task by task, and seeded runs (with
their usage series recorded) against the same runs committing task by task (``_gang_commits`` off)."""

import numpy as np
import pytest

from cluster_sim.engine import CapacityClusterModel, ClusterConfig, Job, QueueSpec, Stage, Task
from cluster_sim.engine.capacity import CapacityScheduler
from cluster_sim.engine.ledger import ResourceLedger

from .capacity_golden import model_record


def _ledger_state(ledger: ResourceLedger) -> dict:
    heap = sorted(ledger._heap, key=lambda h: (float(h), h.seq))
    return {"allocated": ledger.allocated.tolist(), "allocated_total": ledger.allocated_total.tolist(),
            "queue_used": {q: v.tolist() for q, v in ledger.queue_used.items()},
            "queues_changed": set(ledger.queues_changed), "seq": ledger._seq,
            "heap": [(float(h), h.seq, h.owner, h.machine, h.demand, h.finish, h.visible, h.queue, h.live) for h in heap],
            "heap_order": [(float(h), h.seq) for h in ledger._heap],  # the heap's own layout: the same pushes
            "live": {o: (h.machine, h.seq) for o, h in ledger._live.items()},
            "fits": {d: ledger.fitting_machines(d) for d in ((1, 1), (2, 3))}}


GANGS = [  # (machines, demands): alike and unlike tasks, one machine and several
    ([0, 0, 0, 1, 1], [(1, 1)] * 5),
    ([2, 0, 2], [(2, 3), (1, 1), (2, 3)]),
    ([1], [(3, 1)]),
]


@pytest.mark.parametrize("machines,demands", GANGS)
def test_a_gang_held_in_one_go_is_held_as_task_by_task(machines, demands):
    capacity = np.array([[4, 6], [3, 3], [6, 8]])
    one, gang = ResourceLedger(capacity), ResourceLedger(capacity)
    for ledger in (one, gang):
        ledger.fitting_machines((1, 1)), ledger.fitting_machines((2, 3))  # kept lists, followed at each change
        ledger.try_hold(2, (1, 1), 3.0, "before", queue="q")
    owners = [f"t{i}" for i in range(len(machines))]
    until = [5.0 + (i % 2) for i in range(len(machines))]
    for o, m, d, t in zip(owners, machines, demands, until):
        assert one.try_hold(m, d, t, o, queue="q") is not None
    holds = gang.try_hold_gang(machines, demands, until, owners, queue="q")
    assert [h.owner for h in holds] == owners
    assert _ledger_state(gang) == _ledger_state(one)
    gang.check()
    assert [h.owner for h in gang.pop_due(10.0)] == [h.owner for h in one.pop_due(10.0)]
    assert _ledger_state(gang) == _ledger_state(one)


def test_a_gang_that_does_not_fit_together_holds_nothing():
    ledger = ResourceLedger(np.array([[2, 2], [1, 1]]))
    before = _ledger_state(ledger)
    # each task fits its machine alone; the three on machine 0 do not
    assert ledger.try_hold_gang([0, 0, 0, 1], [(1, 1)] * 4, [1.0] * 4, ["a", "b", "c", "d"], queue="q") is None
    assert _ledger_state(ledger) == before
    with pytest.raises(ValueError, match="already holds|listed twice"):
        ledger.try_hold_gang([0, 1], [(1, 1)] * 2, [1.0] * 2, ["a", "a"])


def _gang_jobs(n_jobs: int, seed: int) -> list[Job]:
    """Rigid jobs of one-container tasks, as Lab 05's (and some of two shapes, and gangs smaller than the job)."""
    rng = np.random.default_rng(seed)
    jobs, tid = [], 0
    for i in range(n_jobs):
        n = int(rng.integers(1, 12))
        job = Job(id=i, arrival=float(rng.uniform(0, 200)), queue=("a", "b")[i % 2],
                  gang=n if i % 4 else max(1, n // 2), priority=int(rng.integers(0, 5)))
        demand = (1, 1) if i % 5 else (2, 1)
        job.stages.append(Stage(0, [Task(tid + k, job, 0, demand, float(rng.uniform(5, 60))) for k in range(n)]))
        tid += n
        jobs.append(job)
    return jobs


def _run(gang_commits: bool, *, backfill: bool, check: bool = False):
    config = ClusterConfig(machines=5, cpu_per_machine=8, mem_per_machine=8, placement="first_fit", horizon=400.0,
                           hardware_types=2, speed_spread=0.5)
    queues = [QueueSpec("a", share=0.6, max_share=1.0, order="priority", backfill=backfill),
              QueueSpec("b", share=0.4, max_share=0.6, backfill=backfill)]
    model = CapacityClusterModel(config, queues, jobs=_gang_jobs(80, 7), check_every_event=check)
    model.capacity_scheduler._gang_commits = gang_commits
    model.run_until(config.horizon)
    model.check_invariants()
    series = {name: [a.tolist() for a in steps] for name, steps in
              [("cpu", model.csv.usage[0].steps()), ("mem", model.csv.usage[1].steps()),
               ("queue", model.queue_length.steps())]
              + [(f"q_{q}", model.capacity_scheduler.queues[q].usage.steps()) for q in ("a", "b")]}
    attempts = sorted((t.id, t.attempts) for j in model.arrived for t in j.tasks)
    return model_record(model), series, attempts, model.csv.commits, model


@pytest.mark.parametrize("backfill", [True, False])
def test_runs_committing_gangs_in_one_go_give_the_records_of_task_by_task(backfill):
    gang, gang_series, gang_attempts, gang_commits, model = _run(True, backfill=backfill)
    one, one_series, one_attempts, one_commits, _ = _run(False, backfill=backfill)
    assert gang == one and gang_series == one_series and gang_attempts == one_attempts
    assert gang_commits == one_commits
    assert gang["n_admissions"] > 0 and max(t for _, _, t, _ in model.capacity_scheduler.admissions) > 1  # gangs ran


def test_the_gang_path_checked_after_every_event():
    assert _run(True, backfill=True, check=True)[:3] == _run(False, backfill=True)[:3]


def test_the_gang_path_is_taken_and_a_lab_that_commits_its_own_way_keeps_task_by_task(monkeypatch):
    calls = []
    from cluster_sim.engine.agents import CentralStateView

    gang = CentralStateView.commit_gang
    monkeypatch.setattr(CentralStateView, "commit_gang", lambda self, *a, **k: calls.append(1) or gang(self, *a, **k))
    _run(True, backfill=True)
    assert calls, "no gang was committed in one go"

    model = CapacityClusterModel(ClusterConfig.ci(), [QueueSpec("q")])
    model.csv.commit = lambda *a, **k: CentralStateView.commit(model.csv, *a, **k)  # a lab's own commit
    assert not CapacityScheduler(model, [QueueSpec("r")], model.policy)._gang_commits


def test_the_ledgers_kept_lists_follow_changes_when_read():
    ledger = ResourceLedger(np.array([[2, 2], [1, 1], [4, 4]]))
    fits = ledger.fitting_machines((2, 2))
    ledger.hold(2, (3, 3), until=1.0, owner="a")
    assert ledger.fitting_machines((2, 2)) is fits == [0]
    ledger.check()  # follows the changed machines before it compares
    list(ledger.pop_due(1.0))
    assert ledger.fitting_machines((2, 2)) is fits == [0, 2]
