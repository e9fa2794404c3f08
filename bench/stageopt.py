"""Benchmark of the stage optimiser (labs 06-07). Prints ratios against baselines run in the same process.

    .venv/bin/python bench/stageopt.py            # 10,000 instances x 2,000 machines
    .venv/bin/python bench/stageopt.py --quick    # 2,000 x 400

1. clustered IPA + RAA Path on one big stage (the paper: 0.02-0.23 s in production; target < 0.5 s);
2. clustered vs unclustered IPA (Algorithm 4 vs Algorithm 1 on the full m x n matrix);
3. RAA Path vs RAA General vs brute force on small random Pareto sets;
4. IPA+RAA vs NSGA-II (pymoo) on a reduced stage.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best_of(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a fast run: 2,000 instances x 400 machines")
    args = ap.parse_args()
    m, n = (2000, 400) if args.quick else (10_000, 2000)

    from cluster_sim.stageopt import brute_force_stage_pareto, raa_general, raa_path
    from cluster_sim.stageopt.baselines import StageProblem, nsga2
    from cluster_sim.stageopt.experiments import trained_model
    from cluster_sim.stageopt.optimizer import StageOptimizer, evaluate_plan
    from cluster_sim.stageopt.workload import make_machines, make_stage

    model, metrics = trained_model(0, 400, 4, 0.1, 150)
    rng = np.random.default_rng(11)
    stage, mach = make_stage(rng, m), make_machines(rng, n)
    so = StageOptimizer(model, alpha=3 * -(-m // n) + 4)

    print(f"== 1. one stage: {m} instances x {n} machines")
    # solve time as the paper's T_s: model calls the decision needs included, scoring the final plan not
    _, ipa_c = best_of(lambda: so.ipa(stage, mach, clustered=True))
    _, raa = best_of(lambda: so.raa(stage, mach, ipa_c))
    t_c = min(so.ipa(stage, mach, clustered=True).solve_seconds for _ in range(3))
    t_r = min(so.raa(stage, mach, ipa_c).solve_seconds - ipa_c.solve_seconds for _ in range(3))
    total = t_c + t_r
    print(f"clustered IPA {t_c*1e3:.1f} ms + RAA Path {t_r*1e3:.1f} ms = {total:.3f} s "
          f"({'under' if total < 0.5 else 'OVER'} the 0.5 s target)")

    print("== 2. clustered vs unclustered IPA")
    ipa_o = so.ipa(stage, mach, clustered=False)
    t_o = ipa_o.solve_seconds
    lat_c = evaluate_plan(ipa_c, stage, mach, mode="model")[0]
    lat_o = evaluate_plan(ipa_o, stage, mach, mode="model")[0]
    print(f"IPA(Org) {t_o:.3f} s, IPA(Cluster) {t_c:.3f} s: speed-up x{t_o / t_c:.1f}; "
          f"stage latency ratio Cluster/Org = {lat_c / lat_o:.3f}")

    print("== 3. RAA Path vs RAA General vs brute force (random strict Pareto sets)")
    def sets(k, p):
        out = []
        for _ in range(k):
            lat = np.sort(rng.choice(np.arange(1, 1000), p, replace=False))[::-1].astype(float)
            cost = np.sort(rng.choice(np.arange(1, 1000), p, replace=False)).astype(float)
            out.append(np.c_[lat, cost])
        return out
    for k, p in ((6, 4), (8, 5)):
        S = sets(k, p)
        tp, fp = best_of(lambda: raa_path(S))
        tg, fg = best_of(lambda: raa_general(S))
        tb, fb = best_of(lambda: brute_force_stage_pareto(S, max_plans=10**6), repeat=1)
        same = np.array_equal(fp[0], fb[0]) and np.array_equal(fg[0], fb[0])
        print(f"m={k}, p={p} ({p**k} plans): Path {tp*1e3:.2f} ms, General x{tg/tp:.0f}, brute force x{tb/tp:.0f} "
              f"slower; same front: {same}")
    big = sets(1000 if not args.quick else 200, 8)
    tp, _ = best_of(lambda: raa_path(big))
    tg, _ = best_of(lambda: raa_general(big), repeat=1)
    print(f"m={len(big)}, p=8: Path {tp*1e3:.1f} ms, General {tg*1e3:.0f} ms (x{tg/tp:.0f})")

    print("== 4. IPA+RAA vs NSGA-II (Def. 5.2 directly), 24 instances x 12 machines")
    st2, m2 = make_stage(rng, 24), make_machines(rng, 12)
    fux = so.fuxi(st2, m2)
    f_lat, f_cost = evaluate_plan(fux, st2, m2, mode="model")
    plan = so.raa(st2, m2, so.ipa(st2, m2))
    t_so = min(so.raa(st2, m2, so.ipa(st2, m2)).solve_seconds for _ in range(3))
    prob = StageProblem(so, st2, m2)
    evo = nsga2(prob, seed=0, generations=40)
    t_evo = evo.solve_seconds if evo is not None else float("nan")
    for name, p, t in (("IPA+RAA(Path)", plan, t_so), ("EVO (NSGA-II)", evo, t_evo)):
        if p is None:
            print(f"{name}: no feasible plan")
            continue
        lat, cost = evaluate_plan(p, st2, m2, mode="model")
        print(f"{name}: latency RR vs Fuxi {1-lat/f_lat:+.0%}, cost RR {1-cost/f_cost:+.0%}, {t*1e3:.0f} ms")
    print(f"solve-time ratio EVO / IPA+RAA = x{t_evo / t_so:.0f}")


if __name__ == "__main__":
    main()
