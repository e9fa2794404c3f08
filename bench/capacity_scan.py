"""The capacity scheduler's admission scan on Lab 03's shape: a hundred Morpheus queues (issue 33).

Lab 03 at ``paper`` runs a day of 100 periodic jobs, each in its own queue whose capacity changes every
minute, beside ad hoc jobs in a 101st queue, on 80 machines. Every admission used to test every queue
with work gang by gang (numpy on two numbers per queue, the limits of every queue, a parent's use summed
from all its leaves) and to shrink every queue's excess after each pass: 56% of notebook 03's time at
``paper``. The scheduler now tests each queue first on its smallest need per resource in plain numbers
(the same sums, so a queue that fails it has no gang that fits), computes limits only for the queues that
pass, and shrinks only the excesses that exist.

This runs the same seeded Morpheus cycle twice in one process, with the reference scan (:class:`FullScan`:
the code before the change, kept here as the baseline) and with the engine's, checks that every task's
record and every admission are identical, and prints both times, the RATIO and the queues each tested
gang by gang (counted work, which does not depend on the machine's load).

Measured (2-core machine shared with other sessions; wall times are noisy, the counts are not):

* ``--fraction 0.25`` of the paper day, arm ``morpheus`` (11,551 admissions, identical): reference 29-31 s
  CPU (125-168 s wall), engine 4.2 s CPU (19-24 s wall), RATIO 0.134-0.144 (7x less CPU); queues tested gang
  by gang 602,812 against 13,040 (0.022). Load average 16-25 (seven sessions on two cores).
* ``--preset default`` (the whole 240-minute cycle, 657 admissions): RATIO 0.56 (0.34 s against 0.19 s CPU).

    .venv/bin/python bench/capacity_scan.py                   # a quarter of the paper day
    .venv/bin/python bench/capacity_scan.py --fraction 1.0    # the whole day (minutes for the reference)
    .venv/bin/python bench/capacity_scan.py --preset default  # the teaching preset's whole cycle
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cluster_sim.engine import CapacityScheduler
from cluster_sim.morpheus.packing.config import MorpheusConfig
from cluster_sim.morpheus.packing.model import MorpheusModel
from cluster_sim.morpheus.packing.simulation import build_model, workload


class Counting(CapacityScheduler):
    """The engine's scheduler, counting the queues it tests gang by gang."""

    tested = 0

    def _candidates(self, q, limits, free, free_total=None):
        type(self).tested += 1
        return super()._candidates(q, limits, free, free_total)


class FullScan(Counting):
    """The reference: the admission scan as it was before issue 33 (every queue tested gang by gang at
    every admission, every queue's limit computed, a parent's use summed from its leaves' arrays, every
    queue's excess shrunk after each pass)."""

    tested = 0

    def used(self, node):
        memo = self._used_now
        if memo is not None and node.name in memo:
            return memo[node.name]
        if node.leaf:
            used = self.csv.ledger.queue_used.get(node.name)
            used = self._nothing if used is None else used
        else:
            used = sum((self.used(c) for c in node.children), self._nothing)
        if memo is not None:
            memo[node.name] = used
        return used

    def _ratio(self, node):
        best = 0.0
        for u, g in zip(self.used(node).tolist(), node.guaranteed.tolist()):
            best = max(best, u / g if g > 0 else (np.inf if u > 0 else 0.0))
        return best

    def _order(self, node):
        children = [c for c in node.children if self._has_work(c)]
        children.sort(key=lambda c: (self._ratio(c), c.name))
        for c in children:
            if c.leaf:
                yield c
            else:
                yield from self._order(c)

    def _starved(self):
        return {q.name for q in self.leaves
                if q.jobs and ((self.used(q) + q.startable_needs) <= q.guaranteed + 1e-9).all(axis=1).any()}

    def _limits(self):
        if self._starved():
            return {q.name: np.minimum(q.maximum, q.guaranteed) for q in self.queues.values()}
        return {q.name: q.maximum for q in self.queues.values()}

    def _pass(self):
        self._pass_scheduled = False
        while self._admit_one():
            pass
        if self.preemption:
            while self._preempt_one():
                while self._admit_one():
                    pass
        for q in self.queues.values():
            q.excess = np.minimum(q.excess, (self.used(q) - q.maximum).clip(min=0))
            self._note_excess(q)
        if self._waiting:
            self.csv.wait_for_release(self)

    def _admit_one(self):
        self._used_now = {}
        try:
            limits = self._limits()
            free = self.csv.ledger.truly_free
            free_total = free.sum(axis=0)
            for q in list(self._order(self.root)):
                for i in self._candidates(q, limits, free, free_total):
                    job = q.jobs[i]
                    gang = self._gang(job)
                    machines = self._place(gang, free)
                    if machines is None:
                        continue
                    self._used_now = None
                    self._start(q, job, gang, machines)
                    return True
            return False
        finally:
            self._used_now = None


def one_run(config: MorpheusConfig, fraction: float, scheduler: type):
    MorpheusModel.capacity_scheduler_class = scheduler  # this process only: the bench's two arms
    try:
        model, _, _, _, end = build_model(config)
    finally:
        del MorpheusModel.capacity_scheduler_class
    wall, cpu = time.perf_counter(), time.process_time()
    model.run_until(end * fraction)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    tasks = sorted((t for j in model.arrived for t in j.tasks), key=lambda t: t.id)
    record = ([(t.id, t.machine, repr(t.start), repr(t.finish), t.state) for t in tasks],  # repr: NaN equals NaN
              list(model.capacity_scheduler.admissions))
    return record, wall, cpu


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="paper", choices=("ci", "default", "paper"))
    parser.add_argument("--arm", default="morpheus")
    parser.add_argument("--fraction", type=float, default=0.25, help="share of the cycle simulated")
    args = parser.parse_args()
    config = MorpheusConfig.from_preset(args.preset).replace(arm=args.arm)
    t0 = time.perf_counter()
    workload(config)  # the contracts' LPs, shared by both runs (remembered)
    print(f"Morpheus {args.preset}, arm {args.arm}: {config.jobs} periodic jobs, {config.machines} machines, "
          f"{args.fraction:g} of a {config.cycle_minutes}-minute cycle (workload {time.perf_counter() - t0:.1f} s); "
          f"load average {load()}")
    rows = {}
    for name, cls in (("reference scan", FullScan), ("engine", Counting)):
        cls.tested = 0
        record, wall, cpu = one_run(config, args.fraction, cls)
        rows[name] = (record, wall, cpu, cls.tested)
        print(f"{name:15s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  admissions {len(record[1]):6d}  "
              f"queues tested gang by gang {cls.tested:8d}  (load average {load()})", flush=True)
    (old, _, old_cpu, old_n), (new, _, new_cpu, new_n) = rows["reference scan"], rows["engine"]
    same = old == new
    print(f"identical task records and admissions: {same}")
    print(f"RATIO engine / reference (CPU time): {new_cpu / old_cpu:.3f}; queues tested gang by gang: "
          f"{new_n / max(old_n, 1):.3f}")
    if not same:
        raise SystemExit("the engine's scan and the reference disagree: a change of decisions, not of speed")


if __name__ == "__main__":
    main()
