"""Shared strategies for the shaper tests: random SCOPE-like DAGs and consistent completion states."""

import numpy as np
from hypothesis import strategies as st

from cluster_sim.shaper import StageGraph, random_stage_graph


@st.composite
def dags(draw, max_stages=12, max_vertices=30):
    """Random stage DAGs: the lab's generator plus raw random DAGs (any spool shape, shared spools)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, max_stages))
    if draw(st.booleans()):
        spools = draw(st.integers(0, max(n - 2, 0)))
        return random_stage_graph(rng, stages=n, spools=spools, max_vertices=max_vertices)
    # raw: each pair i<j is an edge with probability p (covers 3+ consumers, shared spools)
    p = draw(st.sampled_from([0.15, 0.3, 0.5]))
    names = [f"S{i + 1}" for i in range(n)]
    edges = [(names[i], names[j]) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    verts = {s: int(rng.integers(1, max_vertices + 1)) for s in names}
    return StageGraph(verts, edges)


def consistent_state(graph, rng):
    """A completion state reachable under stage barriers: done stages form a down-closed set,
    stages whose producers are all done may be partly completed/running."""
    V = graph.vertices
    completed, running = {}, {}
    done = set()
    for s in graph.topological_order:
        if all(p in done for p in graph.producers(s)):
            u = rng.random()
            if u < 0.45:
                completed[s] = V[s]
                done.add(s)
            elif u < 0.8:
                c = int(rng.integers(0, V[s] + 1))
                completed[s] = c
                if c == V[s]:
                    done.add(s)
                else:
                    running[s] = int(rng.integers(0, V[s] - c + 1))
    return completed, running
