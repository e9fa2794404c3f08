"""Jobs to play with: the paper's Fig. 5 job (reconstructed) and random SCOPE-like stage graphs.

**Fig. 5, reconstructed.** The text fixes: 12 stages, 4 inputs, 3 outputs, spools S2, S6, S8 with
two consumers each; S8 drops its edge to S11 (in-degree 2) rather than S10 (in-degree 1); the
consumers of S2 and of S6 all have in-degree 2 (a random pick); three trees of widths 30, 50, 50 at
the execution point shown, so the remaining peak is 130 and a 200-token job releases 70. The
figure's edges, its bracketed vertex counts and the pick the paper's random tie-breaks made are not
in the text, so we chose them (ours, not the paper's):

    S1 -> S5, S2 -> S5, S2 -> S6, S3 -> S6, S4 -> S7, S6 -> S7, S5 -> S8,
    S6 -> S11, S8 -> S10, S8 -> S11, S7 -> S9, S9 -> S12

(12 stages and 12 edges; dropping 3 edges leaves 9, i.e. exactly three trees rooted at the outputs
S10, S11, S12.) At our execution point S1, S2, S3 have completed and S4, S5, S6 are under way:

    stage     S1  S2  S3  S4  S5  S6  S7  S8  S9  S10 S11 S12
    vertices  40  30  20  35  30  45  20  30  20   5  50  10
    completed 40  30  20  15   5  15   .   .   .   .   .   .
    running    .   .   .  10  15   5   .   .   .   .   .   .

With the tie-breaks of ``np.random.default_rng(0)`` (S2 keeps S5, S6 keeps S7) the trees are
S10 <- S8 <- S5 <- {S1, S2}; S11 alone; S12 <- S9 <- S7 <- {S4, S6 <- S3}, and their widths are
30 (S8's 30 vertices), 50 (S11) and 50 = 20 + 30: S4's and S6's remaining vertices can run side by
side, so Algorithm 2 **adds** them at S7. The numbers are chosen so that the wrong readings give
other answers (a test checks each):

* max of the children instead of their sum: 30 + 50 + 30 = 110;
* remaining = vertices *not started* (running ones not counted): 30 + 50 + 35 = 115;
* the other tie-breaks: S6 keeping S11 instead of S7 puts S6 under S11, and the peak is 100.

(Dropping Algorithm 2's "completed -> Empty" line changes nothing on any state stage barriers can
reach, this one included: a completed stage's producers have all completed too, so its children
contribute 0 anyway.)

>>> g = figure5_job()
>>> g.spools, g.inputs, g.outputs
(('S2', 'S6', 'S8'), ('S1', 'S2', 'S3', 'S4'), ('S10', 'S11', 'S12'))
"""

from __future__ import annotations

import numpy as np

from .graph import StageGraph

FIGURE5_VERTICES = {
    "S1": 40, "S2": 30, "S3": 20, "S4": 35, "S5": 30, "S6": 45,
    "S7": 20, "S8": 30, "S9": 20, "S10": 5, "S11": 50, "S12": 10,
}
FIGURE5_EDGES = [
    ("S1", "S5"), ("S2", "S5"), ("S2", "S6"), ("S3", "S6"), ("S4", "S7"), ("S6", "S7"),
    ("S5", "S8"), ("S6", "S11"), ("S8", "S10"), ("S8", "S11"), ("S7", "S9"), ("S9", "S12"),
]
#: Completed vertices at the execution point of Fig. 5 ("green" numbers).
FIGURE5_COMPLETED = {"S1": 40, "S2": 30, "S3": 20, "S4": 15, "S5": 5, "S6": 15}
#: Running vertices at that point ("yellow" numbers); everything else is yet to be scheduled.
FIGURE5_RUNNING = {"S4": 10, "S5": 15, "S6": 5}
FIGURE5_TOKENS = 200
#: The seed whose tie-breaks give the paper's three widths (S2 keeps S5, S6 keeps S7).
FIGURE5_SEED = 0


def figure5_job() -> StageGraph:
    """The 12-stage job of the paper's Fig. 5 with our chosen edges and vertex counts (module docstring)."""
    return StageGraph(FIGURE5_VERTICES, FIGURE5_EDGES)


def random_stage_graph(
    rng: np.random.Generator,
    stages: int = 12,
    spools: int = 3,
    inputs: int | None = None,
    max_vertices: int = 100,
    decay: float = 0.7,
) -> StageGraph:
    """A random SCOPE-like job: wide scans first, narrower stages later, some spools.

    Stages are created in order ``S1..Sn``; each non-input stage reads 1-3 earlier stages. A stage
    may feed a second consumer only if it is one of ``spools`` designated stages, so there are at
    most ``spools`` spools. Vertex counts shrink with depth by ``decay`` (analytical queries scan
    and shuffle early, then aggregate), with lognormal noise.

    >>> g = random_stage_graph(np.random.default_rng(1), stages=8, spools=2)
    >>> len(g), len(g.spools) <= 2
    (8, True)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    for name, value, low in (("stages", stages, 1), ("spools", spools, 0), ("max_vertices", max_vertices, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    if stages < 1:
        raise ValueError(f"stages={stages} must be an integer >= 1")
    if spools < 0 or spools > max(stages - 2, 0):
        raise ValueError(f"spools={spools} is out of range: allowed 0 <= spools <= {max(stages - 2, 0)} (stages - 2)")
    if max_vertices < 1:
        raise ValueError(f"max_vertices={max_vertices} must be an integer >= 1")
    if isinstance(decay, bool) or not isinstance(decay, (int, float, np.integer, np.floating)) or not 0 < decay <= 1:
        raise ValueError(f"decay={decay!r} is out of range: allowed 0 < decay <= 1")
    if inputs is None:
        inputs = max(1, min(stages - 1, int(round(stages / 4)))) if stages > 1 else 1
    if isinstance(inputs, bool) or not isinstance(inputs, (int, np.integer)) or not 1 <= inputs <= stages:
        raise ValueError(f"inputs={inputs!r} is out of range: allowed an integer 1 <= inputs <= {stages}")
    stages, spools, max_vertices, inputs = int(stages), int(spools), int(max_vertices), int(inputs)
    names = [f"S{i + 1}" for i in range(stages)]
    n_outputs = max(1, int(round(stages / 5)))
    # Designated spools are drawn among the stages that can still have consumers.
    spool_set = set(rng.choice(stages - 1, size=spools, replace=False).tolist()) if spools else set()
    out_deg = np.zeros(stages, dtype=int)
    depth = np.zeros(stages, dtype=int)
    edges: list[tuple[str, str]] = []
    for i in range(inputs, stages):
        free = [j for j in range(i) if out_deg[j] == 0]
        k = int(rng.choice([1, 2, 3], p=[0.45, 0.4, 0.15]))
        picks: list[int] = []
        if len(free) >= n_outputs:  # read a dangling stage first: about n_outputs outputs remain
            picks.append(free[int(rng.integers(len(free)))])
        cands = [j for j in range(i) if (out_deg[j] == 0 or j in spool_set) and j not in picks]
        while len(picks) < k and cands:
            picks.append(cands.pop(int(rng.integers(len(cands)))))
        # (no candidate at all: the stage becomes one more input)
        for j in picks:
            edges.append((names[j], names[i]))
            out_deg[j] += 1
        depth[i] = 1 + max((depth[j] for j in picks), default=-1)
    base = max_vertices * decay ** depth
    noise = rng.lognormal(0.0, 0.5, size=stages)
    counts = np.clip(np.round(base * noise), 1, max(1, max_vertices)).astype(int)
    return StageGraph({n: int(c) for n, c in zip(names, counts)}, edges)
