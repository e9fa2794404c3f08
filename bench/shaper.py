"""Benchmark: the resource shaper invoked at every vertex completion of a big job.

A 500-stage job with about 100k vertices runs under stage barriers; at each of its vertex
completions we time

* recomputing the remaining peak from scratch (Algorithm 1: one pass over every tree), and
* the incremental version (:class:`IncrementalPeak`: walk from the changed stage to its root(s)),

check that both agree at every sampled completion, and print the time per invocation and the
RATIO scratch / incremental, plus the overhead of shaping on the whole replay (ratio of a shaped
replay to an unshaped one, same process). No absolute-time assertions.

    .venv/bin/python bench/shaper.py           # 500 stages, ~100k completions
    .venv/bin/python bench/shaper.py --quick   # 200 stages, ~10k completions
"""

from __future__ import annotations

import argparse
import heapq
import time

import numpy as np

from cluster_sim.shaper import (
    IncrementalPeak,
    JobExecution,
    StageGraph,
    draw_durations,
    random_stage_graph,
    remaining_peak,
    replay,
    treeify,
)
from cluster_sim.shaper.peak import tree_width


def big_job(stages: int, vertices: int, seed: int = 0) -> StageGraph:
    rng = np.random.default_rng(seed)
    g = random_stage_graph(rng, stages=stages, spools=stages // 8, max_vertices=1000, decay=0.98)
    scale = vertices / g.total_vertices
    counts = {s: max(1, int(round(n * scale))) for s, n in g.vertices.items()}
    return StageGraph(counts, g.edges)


def completion_order(graph: StageGraph, durations, tokens: int) -> list[str]:
    """The stages of the vertex completions, in order, of an unshaped run."""
    job = JobExecution(graph, durations, tokens, "off")
    heap = [(f, i, s, k) for i, (s, k, f) in enumerate(job.start(0.0))]
    heapq.heapify(heap)
    seq = len(heap)
    order = []
    while heap:
        t, _, s, k = heapq.heappop(heap)
        order.append(s)
        for s2, k2, f in job.vertex_finished(s, k, t):
            heapq.heappush(heap, (f, seq, s2, k2))
            seq += 1
    return order


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200 stages, ~10k vertices")
    args = ap.parse_args()
    stages, vertices = (200, 10_000) if args.quick else (500, 100_000)
    g = big_job(stages, vertices)
    durations, _ = draw_durations(g, np.random.default_rng(1))
    tokens = max(1, g.total_vertices // 20)
    trees = treeify(g, np.random.default_rng(0))
    order = completion_order(g, durations, tokens)
    n = len(order)
    print(f"job: {len(g)} stages, {g.total_vertices} vertices, {len(g.spools)} spools, {len(trees)} trees; "
          f"{n} completions, {tokens} tokens")

    # incremental: every completion
    inc = IncrementalPeak(trees)
    completed = {s: 0 for s in g.stages}
    sample_every = max(1, n // 2000)  # scratch is timed on a sample (it is the slow one)
    incremental_peaks = {}
    t0 = time.perf_counter()
    for i, s in enumerate(order):
        completed[s] += 1
        p = inc.complete(s, completed[s])
        if i % sample_every == 0:
            incremental_peaks[i] = p
    t_inc = (time.perf_counter() - t0) / n

    # from scratch: a sample of completions, each a full Algorithm 1
    completed = {s: 0 for s in g.stages}
    states = []
    for i, s in enumerate(order):
        completed[s] += 1
        if i % sample_every == 0:
            states.append((i, dict(completed)))
    t0 = time.perf_counter()
    scratch = [(i, remaining_peak(trees, c)) for i, c in states]
    t_scratch = (time.perf_counter() - t0) / len(states)
    # the bare recursion (no input validation): what a job manager that trusts its own state pays
    V = g.vertices
    t0 = time.perf_counter()
    for i, c in states:
        rem = {s: V[s] - c[s] for s in V}
        done = {s: c[s] >= V[s] for s in V}
        sum(tree_width(t, rem, done) for t in trees)
    t_bare = (time.perf_counter() - t0) / len(states)
    bad = [(i, p, incremental_peaks[i]) for i, p in scratch if p != incremental_peaks[i]]
    if bad:
        raise SystemExit(f"incremental and scratch disagree at completion {bad[0][0]}: {bad[0][1]} vs {bad[0][2]}")

    # the whole replay, shaping off vs the paper's shaper (incremental inside)
    t0 = time.perf_counter()
    off = replay(g, durations, tokens, "off")
    t_off = time.perf_counter() - t0
    t0 = time.perf_counter()
    on = replay(g, durations, tokens, "conservative")
    t_on = time.perf_counter() - t0
    assert on.latency == off.latency

    mean_vertex = float(np.mean(np.concatenate(list(durations.values()))))
    print(f"shaper from scratch : {1e6 * t_scratch:9.1f} us per invocation ({len(states)} sampled, all agree)")
    print(f"shaper incremental  : {1e6 * t_inc:9.1f} us per invocation (all {n})")
    print(f"bare recursion      : {1e6 * t_bare:9.1f} us per invocation (no input validation)")
    print(f"RATIO scratch / incremental = {t_scratch / t_inc:.1f}x; bare recursion / incremental = {t_bare / t_inc:.1f}x")
    print(f"RATIO shaped replay / unshaped replay = {t_on / t_off:.2f}x "
          f"({t_off:.2f} s vs {t_on:.2f} s for {n} completions)")
    print(f"scratch invocation / mean vertex duration ({mean_vertex:.0f} s of simulated work) = "
          f"{t_scratch / mean_vertex:.1e}: negligible, as the paper says")
    print(f"savings on this job: {100 * on.savings_vs(off):.1f}% of {tokens} tokens x {off.latency:.0f} s")

    # a panel's estimate against a measured redraw: SECONDS_PER_JOB_VERTEX is calibrated here, by eye
    # (tests count the vertex runs the estimate is made of; they never time them)
    from cluster_sim.shaper.config import ShaperConfig
    from cluster_sim.shaper.experiments import run_job

    cfg = ShaperConfig.default().replace(stages=30, max_vertices=300)
    t0 = time.perf_counter()
    run_job(cfg)
    measured = time.perf_counter() - t0
    estimate = cfg.work().seconds
    print(f"RATIO run_job estimate / measured = {estimate / measured:.2f} ({estimate:.2f} s estimated for "
          f"{cfg.work().describe()}, {measured:.2f} s measured; within 3x is what the panels need)")


if __name__ == "__main__":
    main()
