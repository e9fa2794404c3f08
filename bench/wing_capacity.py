"""Lab 05's runs on the capacity scheduler: this checkout's event loop against an older one (issues 24 and 33).

About 70 % of Lab 05's claims cell is the capacity scheduler's event loop (:class:`~cluster_sim.engine.
CapacityClusterModel` under :class:`~cluster_sim.wing.scheduling.model.WingModel`). This runs, in fresh
processes taken in turns (the machine is shared: alternating spreads its load over both sides), by the code of
an older checkout (``--before``: a directory holding its ``cluster_sim``, e.g. ``git archive a5ea532 cluster_sim
| tar -x -C /tmp/before``) and by this one:

* ``ci``: every run of the claims cell at ``ci`` (``claims_runs(WingConfig.ci(), cache=False)``, 404 runs over
  20 lakes), its lakes prepared first (timed apart: they are not the event loop);
* ``paper``: one paper-size run (``WingConfig.paper()``, Wing-Agg at capacity 0.2 on one cluster-wide queue and
  on organisation queues), its lake prepared first.

Each side prints the CPU seconds of its runs and a digest of what they computed (every run's metrics but its
wall time; the paper run's every job's start, finish and state): the RATIO before / now is of the medians, and
"same results" compares the digests.

Measured (2-core machine shared with two other sessions, a5ea532 against c58ecd5, 3 rounds each, same results):
``ci`` 28.04 s against 20.70 s of CPU, RATIO 1.35x (load 1.9-5.5; an earlier set 1.41x at 2.4-5.9); ``paper``
3.14 s against 2.24 s, RATIO 1.40x (load 6.1-8.7; earlier 1.36x at 2.0-2.2). Peak RSS 0.30 and 0.66-0.68 GiB.

    git archive a5ea532 cluster_sim | tar -x -C /tmp/before
    .venv/bin/python bench/wing_capacity.py --before /tmp/before            # both parts
    .venv/bin/python bench/wing_capacity.py --before /tmp/before --part ci --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: what a fresh process runs: the part's runs by the code under ``src`` (or by this checkout), printing their CPU
#: time and a digest of what they computed. An editable install is found before ``sys.path``: its finder goes first.
_RUNS = """
import hashlib, json, os, sys, time, resource
src, part = sys.argv[1], sys.argv[2]
if src:
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in repr(f)]
    sys.path.insert(0, src)
os.environ["CLUSTER_SIM_PROGRESS"] = "off"
import numpy as np
import cluster_sim
from cluster_sim.wing.scheduling.config import WingConfig
from cluster_sim.wing.scheduling import claims, experiments
h = hashlib.sha256()
if part == "ci":
    cfg = WingConfig.ci()
    c0 = time.process_time()
    for seed in claims._claims.pool(cfg.seed, claims.POOL_SIZE["ci"]):
        experiments._remembered_lake(cfg.replace(seed=int(seed)))
    lakes = time.process_time() - c0
    c0 = time.process_time()
    df = claims.claims_runs(cfg, cache=False, client="inprocess")
    cpu = time.process_time() - c0
    h.update(df.drop(columns=[c for c in df.columns if "wall" in c]).to_csv().encode())
    n = len(df)
else:
    cpu = lakes = 0.0
    n = 0
    for queues in ("cluster", "org"):
        cfg = WingConfig.paper().replace(policy="wing_agg", capacity=0.2, queues=queues)
        c0 = time.process_time()
        w = experiments._remembered_lake(cfg)
        lakes += time.process_time() - c0
        c0 = time.process_time()
        r = experiments.run(cfg, workload=w)
        cpu += time.process_time() - c0
        n += len(r.jobs)
        h.update(r.jobs[["job", "start", "finish", "state"]].to_csv().encode())
        h.update(repr(sorted(r.summary().items())).encode())
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps(dict(cpu=cpu, lakes=lakes, n=n, digest=h.hexdigest(), rss=rss,
                      where=os.path.dirname(cluster_sim.__file__))))
"""


def bench_against_checkout(src: str, part: str, rounds: int) -> None:
    times: dict[str, list[float]] = {"before": [], "now": []}
    digests: dict[str, set] = {"before": set(), "now": set()}
    for _ in range(rounds):
        for side, where in (("before", src), ("now", "")):
            out = subprocess.run([sys.executable, "-c", _RUNS, where, part], check=True, capture_output=True,
                                 text=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            times[side].append(r["cpu"])
            digests[side].add(r["digest"])
            print(f"  {side:<6} {part:<5} {r['n']:,} {'runs' if part == 'ci' else 'jobs'}: runs' cpu {r['cpu']:6.2f}s "
                  f"(lakes {r['lakes']:5.1f}s), peak RSS {r['rss']:.2f} GiB, code in {r['where']}; "
                  f"load {open('/proc/loadavg').read().split()[0]}", flush=True)
    before, now = (sorted(times[k])[len(times[k]) // 2] for k in ("before", "now"))
    same = len(digests["before"]) == 1 and digests["before"] == digests["now"]
    print(f"RATIO before / now = {before / now:4.2f}x CPU of the runs (medians of {rounds}: {before:.2f}s / "
          f"{now:.2f}s), part {part}; same results: {same}", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="a directory holding an older checkout's cluster_sim")
    ap.add_argument("--part", choices=("ci", "paper", "all"), default="all")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each side, in turns")
    args = ap.parse_args(argv)
    if not os.path.isdir(os.path.join(args.before, "cluster_sim")):
        raise ValueError(f"--before={args.before!r} is not allowed: give a directory holding an older checkout's "
                         "cluster_sim (git archive <commit> cluster_sim | tar -x -C <dir>)")
    for part in (("ci", "paper") if args.part == "all" else (args.part,)):
        bench_against_checkout(args.before, part, args.rounds)


if __name__ == "__main__":
    main()
