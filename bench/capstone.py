"""Lab 10's speed: one day with every mechanism on, against the plain engine on the same jobs.

The plain engine is :class:`~cluster_sim.engine.ClusterModel` with the day's jobs and the same
placement layer (schedulers, views, placement), without the queue layer or any lab's mechanism.
Its run is not the capstone's (no admission), so the ratio is the cost of the composition per
day, not per task; the script prints both task counts.

Targets (issue 32): ``default`` with everything on in at most 60 s on this machine; ``paper`` (a day
of about 5,000 jobs on 500 machines) in at most 5 minutes.

    python bench/capstone.py            # default and paper
    python bench/capstone.py --quick    # ci and default
"""

from __future__ import annotations

import argparse
import time

from cluster_sim.capstone import SWITCHES, CapstoneConfig, make_day, run_model
from cluster_sim.capstone.model import engine_config
from cluster_sim.engine import ClusterModel


def bench(preset: str) -> None:
    config = CapstoneConfig.from_preset(preset).replace(**{s: True for s in SWITCHES})
    t0 = time.perf_counter()
    day = make_day(config)
    t_day = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = run_model(config, day=day)
    t_all = time.perf_counter() - t0
    t0 = time.perf_counter()
    plain = ClusterModel(engine_config(config, day), jobs=day.engine_jobs(), record_series=False)
    plain.run_until(config.horizon)
    plain.check_invariants()
    t_plain = time.perf_counter() - t0
    started = sum(t.start == t.start for j in model.arrived for t in j.tasks)
    started_plain = sum(t.start == t.start for j in plain.arrived for t in j.tasks)
    print(f"{preset}: {len(day.jobs):,} jobs, {sum(j.n_tasks for j in day.jobs):,} tasks on {config.machines} machines; "
          f"the day built in {t_day:.1f} s")
    print(f"  all five on: {t_all:.1f} s ({started:,} tasks started)")
    print(f"  plain engine, same jobs: {t_plain:.1f} s ({started_plain:,} tasks started); "
          f"ratio {t_all / t_plain:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="ci and default instead of default and paper")
    args = parser.parse_args()
    for preset in (("ci", "default") if args.quick else ("default", "paper")):
        bench(preset)


if __name__ == "__main__":
    main()
