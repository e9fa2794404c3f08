"""Lab 10's speed: one day with every mechanism on, against the plain engine on the same jobs.

The plain engine is :class:`~cluster_sim.engine.ClusterModel` with the day's jobs and the same
placement layer (schedulers, views, placement), without the queue layer or any lab's mechanism.
Its run is not the capstone's (no admission), so the ratio is the cost of the composition per
day, not per task; the script prints both task counts.

Targets (issue 32): ``default`` with everything on in at most 60 s on this machine; ``paper`` (a day
of about 5,000 jobs on 500 machines) in at most 5 minutes.

Measured on 2026-11-26 with the stage optimiser's resource plans (Lab 07's IPA and RAA on every stage),
on the shared 2-core machine at a load average of 15-19 (seven workers):

* ``default`` (65 jobs, 1,425 tasks, 16 machines): all five on 14.8 s wall, **1.7 s CPU** (the
  resource plans of its 142 stages 1.4 s CPU) at load 14.7; again at load 24.7, 24.9 s wall, 1.6 s CPU;
  the plain engine 0.1-0.2 s CPU, so the ratio (7.7x and 25x in CPU time) is mostly the plans, and noisy;
* ``paper`` (4,858 jobs, 121,065 tasks, 500 machines): all five on 1,111 s wall, **163.5 s CPU**
  (the resource plans of its 12,117 stages 115.1 s CPU, 9.5 ms a stage; the run 48 s); the plain
  engine 7.7 s CPU: 21x in CPU time. The day itself took 57 s of wall time to build.

Both targets hold in CPU time; in wall time ``paper`` took 18.5 minutes because the machine gave this
process about a seventh of a core. The profile (``python -m cProfile -s cumtime``) put 70 % of
``paper``'s CPU in the plans, nearly all of it the latency model's cost per call (four predictions a
stage, each walking its 120 trees from Python), whatever the stage's width.

With the plans batched (issue 33: Lab 07's IPA and RAA as steps, 1,000 stages' feature rows in one model call a
round, bit-identical plans; ``machine_groups`` remembered), measured on 2026-11-26 at a load average of 1.4-2.8:

* ``default``: all five on 0.4 s CPU (the plans of its 142 stages 0.3 s); the plain engine 0.1 s CPU;
* ``paper``: all five on **66.5 s CPU** (the plans of its 12,117 stages **25.4 s CPU**, 2.1 ms a stage, against
  115.1 s; the run 41 s); the plain engine 5.4 s CPU: 12.3x in CPU time (was 21x). The day built in 3.5 s. Peak
  RSS of the process (default and paper) 0.45 GB. The forest is now about 5 % of the plans' cost: the rest is Lab
  07's numpy work per stage (the density clustering, done twice a stage, the features, ``np.unique``), and the
  run's per-event cost at 500 machines is now the larger part.

    python bench/capstone.py              # default and paper
    python bench/capstone.py --quick      # ci and default
    python bench/capstone.py --ablation   # also the notebook's ablation at default (12 arms x its seed pool)
    python bench/capstone.py --arms 600   # CPU per run of five arms on a paper day's first 600 s
    python bench/capstone.py --plans-held ci default paper   # how often IPA's planned machine decides a task

``--plans-held`` (round 16, the figures Lab 10's section 4 quotes; seed 0, every mechanism on, counted once on
2026-11-27): the share of the tasks IPA planned that take their planned machine at their first decision, ``ci``
641 of 742 (86 %), ``default`` 889 of 1,067 (83 %), ``paper`` 27,735 of 93,563 (30 %; 267,948 decisions in all,
the others retries and tasks the stage's plan did not cover).

Round 7 (s7p10) cut the runs' per-event cost with identical results (docs/performance.md, Lab 10): on a paper day's
first 600 s, CPU per run before -> after at load 25-37 (fresh processes in turns): see docs/performance.md.

The machine is shared: each line gives the load average beside the time, and the process's CPU time.
"""

from __future__ import annotations

import argparse
import time

from cluster_sim.capstone import SWITCHES, CapstoneConfig, make_day, run_model
from cluster_sim.capstone.claims import claims_frame, pool_size_for
from cluster_sim.claims import pool
from cluster_sim.capstone.model import engine_config
from cluster_sim.capstone.plans import resource_plans, stage_optimizer
from cluster_sim.engine import ClusterModel


def load() -> str:
    return "load " + " ".join(open("/proc/loadavg").read().split()[:3])


def plain_engine(config: CapstoneConfig, day) -> ClusterModel:
    plain = ClusterModel(engine_config(config, day), jobs=day.engine_jobs(), record_series=False)
    plain.run_until(config.horizon)
    plain.check_invariants()
    return plain


def bench(preset: str) -> None:
    config = CapstoneConfig.from_preset(preset).replace(**{s: True for s in SWITCHES})
    t0 = time.perf_counter()
    day = make_day(config)
    t_day = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    stage_optimizer()  # Lab 07's latency model, trained once per process
    t_model, c_model = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    resource_plans(config)  # remembered: the run below reads them
    t_plans, c_plans = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    model = run_model(config, day=day)
    t_all, c_all = time.perf_counter() - t0 + t_plans, time.process_time() - c0 + c_plans
    t0, c0 = time.perf_counter(), time.process_time()
    plain = plain_engine(config, day)
    t_plain, c_plain = time.perf_counter() - t0, time.process_time() - c0
    started = sum(t.start == t.start for j in model.arrived for t in j.tasks)
    started_plain = sum(t.start == t.start for j in plain.arrived for t in j.tasks)
    print(f"{preset}: {len(day.jobs):,} jobs, {sum(j.n_tasks for j in day.jobs):,} tasks on {config.machines} machines; "
          f"the day built in {t_day:.1f} s")
    print(f"  the stage optimiser's latency model trained in {t_model:.1f} s (CPU {c_model:.1f} s), once per process")
    print(f"  all five on: {t_all:.1f} s, CPU {c_all:.1f} s ({started:,} tasks started; {load()}), of which RAA's "
          f"resource plans for {len(model.plans.stages):,} stages {t_plans:.1f} s, CPU {c_plans:.1f} s")
    print(f"  plain engine, same jobs: {t_plain:.1f} s ({started_plain:,} tasks started); "
          f"CPU {c_plain:.1f} s; ratio {c_all / c_plain:.1f}x in CPU time ({t_all / t_plain:.1f}x wall)")


def bench_ablation(preset: str = "default") -> None:
    """The notebook's ablation (every arm over its seed pool, in this process), against the plain engine on
    the same days (one run per seed: the jobs do not depend on the arm)."""
    config = CapstoneConfig.from_preset(preset)
    seeds = pool(config.seed, pool_size_for(config))
    t0, c0 = time.perf_counter(), time.process_time()
    frame = claims_frame(config, client="inprocess", cache=False)
    t_abl, c_abl = time.perf_counter() - t0, time.process_time() - c0
    c0 = time.process_time()
    for seed in seeds:
        c = config.replace(seed=seed)
        plain_engine(c, make_day(c))
    c_plain = time.process_time() - c0
    print(f"{preset} ablation: {len(frame)} runs in {t_abl:.1f} s, CPU {c_abl:.1f} s ({load()}); the plain engine on "
          f"its {len(seeds)} days: CPU {c_plain:.1f} s; ratio per run {c_abl / len(frame) / (c_plain / len(seeds)):.1f}x "
          "in CPU time")


def bench_arms(horizon: float, arms=("all", "stageopt", "shaper", "all-rminer", "none")) -> None:
    """CPU seconds of one run per arm on the first ``horizon`` seconds of seed 0's paper day (the day and its plans
    made first, not timed): the ablation's per-event cost, arm by arm. Compare code versions in fresh processes in
    turns (the machine's load moves these numbers by a third)."""
    base = CapstoneConfig.paper().replace(horizon=horizon)
    make_day(base)
    resource_plans(base.replace(stageopt=True))
    cpu = {}
    for arm in arms:
        on = set(SWITCHES) if arm == "all" else set(SWITCHES) - {arm[4:]} if arm.startswith("all-") else \
            set() if arm == "none" else {arm}
        c0 = time.process_time()
        run_model(base.replace(**{s: s in on for s in SWITCHES}))
        cpu[arm] = time.process_time() - c0
    print(f"paper, first {horizon:g} s, CPU per run: " + ", ".join(f"{a} {c:.2f} s" for a, c in cpu.items())
          + f"; ratio all/none {cpu['all'] / cpu['none']:.1f}x ({load()})")


def plans_held(preset: str) -> None:
    """Count, over one day with every mechanism on, how the IPA scheduler's decisions went: a planned task on its
    planned machine, a planned task elsewhere (its machine no longer fits the view), or a task with no plan left."""
    from collections import Counter

    from cluster_sim.stageopt import agents

    counts, choose = Counter(), agents.StagePlanningScheduler.choose

    def counted(self, task):
        planned = self.planned.get(task.id, -1)
        machine = choose(self, task)
        if planned < 0:
            counts["no plan"] += 1
        else:
            counts["planned"] += 1
            counts["on its planned machine" if machine == planned else "elsewhere or nowhere"] += 1
        return machine

    agents.StagePlanningScheduler.choose = counted
    try:
        run_model(CapstoneConfig.from_preset(preset).replace(**{s: True for s in SWITCHES}))
    finally:
        agents.StagePlanningScheduler.choose = choose
    share = counts["on its planned machine"] / max(counts["planned"], 1)
    print(f"{preset}: {counts['on its planned machine']:,} of {counts['planned']:,} planned tasks on their planned "
          f"machine ({share:.0%}); decisions with no plan left {counts['no plan']:,} ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="ci and default instead of default and paper")
    parser.add_argument("--ablation", action="store_true", help="also the notebook's ablation at default")
    parser.add_argument("--arms", type=float, metavar="SECONDS",
                        help="only CPU per run of five arms on the first SECONDS of a paper day (e.g. 600)")
    parser.add_argument("--plans-held", nargs="+", metavar="PRESET",
                        help="only count how often IPA's planned machine decides a task, at each PRESET")
    args = parser.parse_args()
    if args.plans_held:
        for preset in args.plans_held:
            plans_held(preset)
        return
    if args.arms:
        bench_arms(args.arms)
        return
    for preset in (("ci", "default") if args.quick else ("default", "paper")):
        bench(preset)
    if args.ablation:
        bench_ablation()


if __name__ == "__main__":
    main()
