"""Engine speed, both scheduler families, each against a plain heapq event loop in the same process.

1. **Shared state**: ~200k tasks on 1500 machines through ``ClusterModel`` (parallel schedulers with
   think time, random placement on local views refreshed every 0.5 s, commits with conflict
   detection, completions).
2. **Capacity scheduler**: jobs through ``CapacityClusterModel`` with two elastic queues (60/40
   guarantees, both may borrow everything), gangs of whole jobs for a third of them, first-fit
   placement, lending and reclaiming.

Both baselines are independent re-implementations of the same semantics: their counts (and, for
the capacity case, every task's start time) must equal the engine's exactly, which the script
checks; the ratio is meaningful on a noisy machine, absolute times are not.

    python bench/engine.py           # ~200k tasks (RMiner's cluster, 25 s); capacity case ~40k tasks
    python bench/engine.py --quick   # ~30k tasks; capacity case ~8k tasks
"""

from __future__ import annotations

import argparse
import heapq
import time
import tracemalloc
from collections import deque

import numpy as np

from cluster_sim.engine import CapacityClusterModel, ClusterConfig, ClusterModel, QueueSpec, generate_jobs
from cluster_sim.engine.placement import first_fit, random_fit


def workload(cfg: ClusterConfig):
    return generate_jobs(cfg.workload_spec(), cfg.horizon, np.random.default_rng([cfg.seed, 0xC1A5]))


def run_engine(cfg: ClusterConfig):
    model = ClusterModel(cfg, record_series=False)
    model.run_until(cfg.horizon)
    return model


def engine_stats(model: ClusterModel):
    cfg = model.config
    states = model.tasks_by_state()
    return {"commits": model.csv.commits, "conflicts": model.csv.conflicts, "completed": states["completed"],
            "decisions": sum(s.placed + s.conflicts + s.blocked_decisions for s in model.schedulers),
            "jobs": len(model.arrived), "syncs": int(cfg.horizon / cfg.update_delay)}


def run_plain_loop(cfg: ClusterConfig):
    """The same bookkeeping with a heap of tuples and numpy arrays: no agents, no Mesa."""
    rng = np.random.default_rng(cfg.seed)
    jobs = sorted(workload(cfg), key=lambda j: j.arrival)
    n, k = cfg.machines, cfg.schedulers
    capacity = np.tile(np.array([cfg.cpu_per_machine, cfg.mem_per_machine], dtype=np.int64), (n, 1))
    allocated = np.zeros_like(capacity)
    views = [capacity.copy() for _ in range(k)]
    queues = [deque() for _ in range(k)]
    busy = [False] * k
    blocked = [False] * k
    events, holds = [], []
    seq = 0
    stats = dict(commits=0, conflicts=0, completed=0, decisions=0, jobs=0, syncs=0)

    def push(t, kind, arg=None):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, arg))
        seq += 1

    def settle(now):
        while holds and holds[0][0] <= now:
            _, _, m, demand = heapq.heappop(holds)
            allocated[m] -= demand
            stats["completed"] += 1

    def next_decision(s, now):
        if queues[s]:
            busy[s] = True
            push(now + cfg.think_time, "decide", s)
        else:
            busy[s] = False

    push(cfg.update_delay, "sync")
    if jobs:
        push(jobs[0].arrival, "arrive")
    i = 0
    hold_seq = 0
    while events and events[0][0] <= cfg.horizon:
        now, _, kind, s = heapq.heappop(events)
        settle(now)
        if kind == "decide":
            stats["decisions"] += 1
            task = queues[s][0]
            m = random_fit(views[s], task.demand, rng)
            if m < 0:
                blocked[s] = True
                busy[s] = False
                continue
            demand = np.asarray(task.demand)
            if (allocated[m] + demand <= capacity[m]).all():
                allocated[m] += demand
                heapq.heappush(holds, (now + task.duration, hold_seq, m, demand))
                hold_seq += 1
                stats["commits"] += 1
                queues[s].popleft()
                views[s][m] -= demand
            else:
                stats["conflicts"] += 1
                views[s][m] = capacity[m] - allocated[m]
            next_decision(s, now)
        elif kind == "arrive":
            while i < len(jobs) and jobs[i].arrival <= now:
                job = jobs[i]
                i += 1
                stats["jobs"] += 1
                q = job.id % k
                queues[q].extend(job.stages[0].tasks)
                if not busy[q] and not blocked[q]:
                    next_decision(q, now)
            if i < len(jobs):
                push(jobs[i].arrival, "arrive")
        else:  # sync
            stats["syncs"] += 1
            snapshot = capacity - allocated
            for q in range(k):
                views[q] = snapshot.copy()
            for q in range(k):
                if blocked[q]:
                    blocked[q] = False
                    next_decision(q, now)
            push(now + cfg.update_delay, "sync")
    settle(cfg.horizon)
    return stats


# ---- the capacity-scheduler family ---------------------------------------------------------------
QUEUES = [QueueSpec("q0", share=0.6, max_share=1.0), QueueSpec("q1", share=0.4, max_share=1.0)]


def capacity_config(quick: bool) -> ClusterConfig:
    return ClusterConfig(machines=100, cpu_per_machine=16, mem_per_machine=256, placement="first_fit",
                         load=0.95, tasks_per_job=6.0, mean_task_duration=20.0, mean_task_cpu=2.0,
                         mean_task_mem=2.0, horizon=150.0 if quick else 800.0, seed=1)


class GangModel(CapacityClusterModel):
    """Every third job is rigid: all its tasks start together."""

    def make_jobs(self, rng):
        jobs = super().make_jobs(rng)
        for j in jobs:
            j.gang = j.n_tasks if j.id % 3 == 0 else 1
        return jobs


def run_capacity_engine(cfg: ClusterConfig):
    model = GangModel(cfg, QUEUES, record_series=False)
    model.run_until(cfg.horizon)
    return model


def capacity_engine_stats(model) -> dict:
    starts = {t.id: t.start for j in model.arrived for t in j.tasks if not np.isnan(t.start)}
    return {"commits": model.csv.commits, "completed": model.tasks_by_state()["completed"],
            "jobs": len(model.arrived), "starts": starts}


def run_capacity_plain_loop(cfg: ClusterConfig) -> dict:
    """The capacity scheduler's rules on plain arrays: at every instant something happens, admit
    the first gang that fits, serving the least-served queue first; no queue borrows while one
    waits for work within its guarantee; first-fit placement; one pass per instant."""
    jobs = sorted(generate_jobs(cfg.workload_spec(), cfg.horizon, np.random.default_rng([cfg.seed, 0xC1A5])),
                  key=lambda j: j.arrival)
    for j in jobs:
        j.gang = j.n_tasks if j.id % 3 == 0 else 1
    n = cfg.machines
    capacity = np.tile(np.array([cfg.cpu_per_machine, cfg.mem_per_machine], dtype=np.int64), (n, 1))
    allocated = np.zeros_like(capacity)
    total = capacity.sum(axis=0).astype(float)
    guaranteed = [q.share * total for q in QUEUES]
    maximum = [q.max_share * total for q in QUEUES]
    used = [np.zeros(2) for _ in QUEUES]
    waiting = [[] for _ in QUEUES]  # per queue: [job, pending tasks] in arrival order
    holds = []
    stats = {"commits": 0, "completed": 0, "jobs": 0, "starts": {}}

    def ratio(q):
        g = guaranteed[q]
        return max((used[q][r] / g[r]) if g[r] > 0 else (np.inf if used[q][r] > 0 else 0.0) for r in range(2))

    def gang(entry):
        job, pending = entry
        return pending[: min(job.gang, len(pending))]

    def need(tasks):
        return np.sum([t.demand for t in tasks], axis=0).astype(float)

    def admit_one(now):
        starved = any((used[q] + need(gang(e)) <= guaranteed[q] + 1e-9).all() for q in range(2) for e in waiting[q])
        limits = [np.minimum(maximum[q], guaranteed[q]) if starved else maximum[q] for q in range(2)]
        free = capacity - allocated
        total_free = free.sum(axis=0)
        for q in sorted((q for q in range(2) if waiting[q]), key=lambda q: (ratio(q), f"q{q}")):
            room = [limits[q] - used[q], total - used[0] - used[1]]
            for entry in waiting[q]:
                tasks = gang(entry)
                d = need(tasks)
                if (d > total_free).any() or any((d > r + 1e-9).any() for r in room):
                    continue
                scratch, machines = free.copy(), []
                for t in tasks:
                    m = first_fit(scratch, t.demand)
                    if m < 0:
                        break
                    scratch[m] -= t.demand
                    machines.append(m)
                else:
                    for t, m in zip(tasks, machines):
                        allocated[m] += t.demand
                        used[q] += t.demand
                        heapq.heappush(holds, (now + t.duration, t.id, m, q, t.demand))
                        stats["commits"] += 1
                        stats["starts"][t.id] = now
                    del entry[1][: len(tasks)]
                    if not entry[1]:
                        waiting[q].remove(entry)
                    return True
        return False

    i = 0
    while True:
        next_arrival = jobs[i].arrival if i < len(jobs) else np.inf
        next_release = holds[0][0] if holds and any(waiting) else np.inf
        now = min(next_arrival, next_release)
        if now > cfg.horizon:
            break
        while holds and holds[0][0] <= now:
            _, _, m, q, d = heapq.heappop(holds)
            allocated[m] -= d
            used[q] -= d
            stats["completed"] += 1
        while i < len(jobs) and jobs[i].arrival <= now:
            job = jobs[i]
            i += 1
            stats["jobs"] += 1
            waiting[job.id % 2].append([job, list(job.stages[0].tasks)])
        while admit_one(now):
            pass
    while holds and holds[0][0] <= cfg.horizon:
        heapq.heappop(holds)
        stats["completed"] += 1
    return stats


def capacity_case(quick: bool, repeat: int) -> None:
    cfg = capacity_config(quick)
    tasks = sum(j.n_tasks for j in workload(cfg))
    print(f"\ncapacity scheduler: {cfg.machines} machines, queues 60%/40% (elastic), {tasks} tasks in {cfg.horizon:g} s")
    t_plain = t_engine = float("inf")
    for _ in range(repeat):
        plain, t, _ = timed(run_capacity_plain_loop, cfg)
        t_plain = min(t_plain, t)
        model, t, _ = timed(run_capacity_engine, cfg)
        t_engine = min(t_engine, t)
    model.check_invariants()
    engine = capacity_engine_stats(model)
    print(f"{'':12s} {'seconds':>8s}  commits completed jobs")
    for name, st, t in (("plain heapq", plain, t_plain), ("engine", engine, t_engine)):
        print(f"{name:12s} {t:8.2f}  {st['commits']:7d} {st['completed']:9d} {st['jobs']:4d}")
    same = all(plain[k] == engine[k] for k in ("commits", "completed", "jobs", "starts"))
    print(f"identical results (every task's start time included): {same}")
    print(f"ratio engine / plain loop: {t_engine / t_plain:.2f}x")
    if not same:
        raise SystemExit("the capacity scheduler and its plain loop disagree: a semantic difference")


def timed(fn, cfg, memory=False):
    if memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    stats = fn(cfg)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if memory else float("nan")
    if memory:
        tracemalloc.stop()
    return stats, elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~30k tasks instead of ~200k")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved runs of each; the best time counts")
    args = parser.parse_args()
    cfg = ClusterConfig.paper().replace(horizon=4.0 if args.quick else 25.0)
    tasks = sum(j.n_tasks for j in workload(cfg))
    print(f"workload: {cfg.machines} machines, {cfg.schedulers} schedulers, {tasks} tasks in {cfg.horizon:g} s")
    if args.repeat < 1:
        raise SystemExit(f"--repeat={args.repeat}: must be at least 1")
    # Interleaved, best of each: a noisy neighbour slows whichever runs during its burst.
    t_plain = t_engine = float("inf")
    for _ in range(args.repeat):
        plain, t, _ = timed(run_plain_loop, cfg)
        t_plain = min(t_plain, t)
        model, t, _ = timed(run_engine, cfg)
        t_engine = min(t_engine, t)
    model.check_invariants()  # outside the timing: the plain loop checks nothing
    engine = engine_stats(model)
    events = engine["decisions"] + engine["jobs"] + engine["syncs"] + engine["completed"]
    print(f"{'':12s} {'seconds':>8s} {'events/s':>10s}  commits conflicts completed")
    for name, st, t in (("plain heapq", plain, t_plain), ("engine", engine, t_engine)):
        print(f"{name:12s} {t:8.2f} {events / t:10.0f}  {st['commits']:7d} {st['conflicts']:9d} {st['completed']:9d}")
    same = all(plain[k] == engine[k] for k in ("commits", "conflicts", "completed", "decisions", "jobs"))
    print(f"identical results: {same}")
    print(f"ratio engine / plain loop: {t_engine / t_plain:.2f}x (target: within 2x)")
    if not same:
        raise SystemExit("the engine and the plain loop disagree: a semantic difference, not a speed one")
    capacity_case(args.quick, args.repeat)


if __name__ == "__main__":
    main()
