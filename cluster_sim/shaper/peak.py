"""Max-cut (paper §4, step 2): the peak number of tokens the rest of the job can use at once.

Algorithm 2 (``RemainingPeak``) on one inverted tree: a completed stage contributes nothing;
otherwise a stage contributes ``max(Resources(s), sum over its children)``, where ``Resources(s)``
is the stage's remaining vertices. Algorithm 1 sums the trees' widths.

**Which vertices remain.** The paper says ``Resources(s)`` counts vertices "yet to be executed",
which could mean *not completed* (running + waiting) or *not yet started* (waiting only). We use
**not completed** (``count="not_completed"``, the default): a running vertex still holds its
token until it finishes, so the estimate must cover it, and then it is provably never below the
peak the rest of the job can reach under stage-barrier execution (a set of stages that can run at
the same time is an antichain of the DAG, and every antichain of the DAG is an antichain of each
tree). ``count="not_started"`` is the other reading, kept as a variant: it can fall below the
tokens in use right now, so a shaper built on it would release tokens held by running vertices.

Example (a spool feeding two consumers that join again)
-------------------------------------------------------
>>> import numpy as np
>>> from cluster_sim.shaper.graph import StageGraph
>>> from cluster_sim.shaper.trees import treeify
>>> g = StageGraph({"a": 30, "b": 20, "c": 10, "d": 5}, [("a", "c"), ("b", "c"), ("c", "d")])
>>> trees = treeify(g, np.random.default_rng(0))
>>> remaining_peak(trees, {})                    # a and b can run together: 30 + 20
50
>>> remaining_peak(trees, {"a": 30, "b": 15})    # a done, 5 of b left; c (10) is next
10
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .graph import StageGraph, _check_barriers, _check_counts
from .trees import Tree

COUNTS = ("not_completed", "not_started")


def _check_trees(trees) -> list[Tree]:
    if isinstance(trees, Tree):
        return [trees]
    if not isinstance(trees, (list, tuple)):
        raise ValueError(f"trees must be a list of Tree (from treeify), got {type(trees).__name__}")
    for t in trees:
        if not isinstance(t, Tree):
            raise ValueError(f"trees must contain Tree objects (from treeify), got {type(t).__name__}")
    return list(trees)


def _all_vertices(trees: Sequence[Tree]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in trees:
        out.update(t.vertices)
    return out


def _job_of(trees: Sequence[Tree]) -> tuple[dict[str, int], dict[str, tuple[str, ...]]]:
    """Every stage's vertex count and producers, from the trees' graph when they carry one (all
    trees from :func:`treeify` do), else from the trees themselves (kept edges only)."""
    graphs = {id(t.graph): t.graph for t in trees if t.graph is not None}
    if len(graphs) == 1 and all(t.graph is not None for t in trees):
        g = next(iter(graphs.values()))
        return g.vertices, {s: g.producers(s) for s in g.stages}
    vertices = _all_vertices(trees)
    producers: dict[str, set[str]] = {s: set() for s in vertices}
    for t in trees:
        for s in t.order:
            producers[s].update(t.children[s])
    return vertices, {s: tuple(p) for s, p in producers.items()}


def remaining_counts(
    vertices: Mapping[str, int],
    completed: Mapping[str, int] | None,
    running: Mapping[str, int] | None = None,
    count: str = "not_completed",
    producers: Mapping[str, Sequence[str]] | None = None,
) -> tuple[dict[str, int], dict[str, bool]]:
    """Per stage: the vertices that count as remaining, and whether the stage is completed (W[s] >= V[s]).

    With ``producers`` (stage -> its producer stages), a state stage barriers cannot reach (a stage
    with completed or running vertices while a producer has not completed) is refused, naming both.
    """
    if count not in COUNTS:
        raise ValueError(f"count={count!r} is not allowed: choose one of {', '.join(COUNTS)}")
    done_v = _check_counts(vertices, completed, "completed")
    run_v = _check_counts(vertices, running, "running")
    _check_barriers(vertices, producers or {}, done_v, run_v)
    rem, done = {}, {}
    for s, v in vertices.items():
        done[s] = done_v[s] >= v
        rem[s] = v - done_v[s] - (run_v[s] if count == "not_started" else 0)
    return rem, done


def tree_width(tree: Tree, remaining: Mapping[str, int], done: Mapping[str, bool]) -> int:
    """Algorithm 2 from ``tree.root``: one pass children-before-parents instead of recursion."""
    value: dict[str, int] = {}
    for s in tree.order:
        if done[s]:
            value[s] = 0  # Algorithm 2 returns Empty without looking at the children
        else:
            value[s] = max(remaining[s], sum(value[c] for c in tree.children[s]))
    return value[tree.root]


def tree_widths(
    trees: Sequence[Tree],
    completed: Mapping[str, int] | None = None,
    *,
    running: Mapping[str, int] | None = None,
    count: str = "not_completed",
) -> list[int]:
    """The remaining width (max-cut) of each tree, in the order of ``trees``.

    The completion state is validated first: counts within each stage's vertices, stages the trees
    know, and a state stage barriers can reach (``ValueError`` naming the stage otherwise).
    """
    trees = _check_trees(trees)
    vertices, producers = _job_of(trees)
    rem, done = remaining_counts(vertices, completed, running, count, producers)
    return [tree_width(t, rem, done) for t in trees]


def remaining_peak(
    trees: Sequence[Tree],
    completed: Mapping[str, int] | None = None,
    *,
    running: Mapping[str, int] | None = None,
    count: str = "not_completed",
) -> int:
    """Algorithm 1's estimate: the sum over trees of their remaining max-cut.

    ``completed`` maps stage -> completed vertices (missing stages count as 0). ``running`` is
    only used by the ``count="not_started"`` variant (module docstring).
    """
    return int(sum(tree_widths(trees, completed, running=running, count=count)))


class IncrementalPeak:
    """The same estimate, kept up to date by walking only from the changed stage to its root(s).

    Each stage stores its value ``max(remaining, sum of children's values)`` (0 once completed) and
    the sum of its children's values; a change at stage ``s`` propagates a delta up the parents'
    chain and stops as soon as a value no longer changes. Cost per update: the depth of ``s``
    instead of the size of the job.

    >>> import numpy as np
    >>> from cluster_sim.shaper.graph import StageGraph
    >>> from cluster_sim.shaper.trees import treeify
    >>> g = StageGraph({"a": 30, "b": 20, "c": 10}, [("a", "c"), ("b", "c")])
    >>> inc = IncrementalPeak(treeify(g, np.random.default_rng(0)))
    >>> inc.peak
    50
    >>> inc.complete("a", 30)   # a done: b (20) is all that can still run alongside c's wait
    20
    """

    def __init__(self, trees: Sequence[Tree]):
        trees = _check_trees(trees)
        self._vertices = _all_vertices(trees)
        # Parents in the unfolded forest: a shared spool has several (one per kept consumer).
        self._parents: dict[str, list[str]] = {s: [] for s in self._vertices}
        self._children: dict[str, tuple[str, ...]] = {}
        self._root_count: dict[str, int] = {s: 0 for s in self._vertices}
        for t in trees:
            self._root_count[t.root] += 1
            for s in t.order:
                if s not in self._children:
                    self._children[s] = tuple(t.children[s])
                    for c in t.children[s]:
                        self._parents[c].append(s)
        self._done = {s: False for s in self._vertices}
        self._remaining = dict(self._vertices)
        self._value: dict[str, int] = {}
        self._child_sum: dict[str, int] = {}
        for s in self._topo():
            cs = sum(self._value[c] for c in self._children[s])
            self._child_sum[s] = cs
            self._value[s] = max(self._remaining[s], cs)
        self._peak = sum(self._value[r] * n for r, n in self._root_count.items() if n)

    def _topo(self) -> list[str]:
        indeg = {s: len(self._children[s]) for s in self._vertices}
        ready = [s for s in self._vertices if indeg[s] == 0]
        out = []
        while ready:
            s = ready.pop()
            out.append(s)
            for p in self._parents[s]:
                indeg[p] -= 1
                if indeg[p] == 0:
                    ready.append(p)
        return out

    @property
    def peak(self) -> int:
        """The current remaining peak (equals ``remaining_peak(trees, completed)``)."""
        return int(self._peak)

    def set_remaining(self, stage: str, remaining: int, done: bool) -> int:
        """Set a stage's remaining vertex count and completion flag; return the new peak."""
        if stage not in self._vertices:
            raise ValueError(f"unknown stage {stage!r}; the stages are: {', '.join(self._vertices)}")
        if not 0 <= remaining <= self._vertices[stage]:
            raise ValueError(
                f"remaining[{stage!r}]={remaining} is out of range: allowed 0..{self._vertices[stage]}"
            )
        self._remaining[stage] = int(remaining)
        self._done[stage] = bool(done)
        stack = [stage]
        while stack:  # walk towards the root(s); stop where a value does not change
            s = stack.pop()
            new = 0 if self._done[s] else max(self._remaining[s], self._child_sum[s])
            d = new - self._value[s]
            if d == 0:
                continue
            self._value[s] = new
            self._peak += d * self._root_count[s]
            for p in self._parents[s]:
                self._child_sum[p] += d
                stack.append(p)
        return self.peak

    def complete(self, stage: str, completed: int) -> int:
        """Record that ``completed`` vertices of ``stage`` have finished (not-completed counting)."""
        v = self._vertices.get(stage)
        if v is None:
            raise ValueError(f"unknown stage {stage!r}; the stages are: {', '.join(self._vertices)}")
        if not 0 <= completed <= v:
            raise ValueError(f"completed[{stage!r}]={completed} is out of range: allowed 0 <= completed <= {v}")
        return self.set_remaining(stage, v - completed, completed >= v)


def exact_peak(graph: StageGraph, remaining: Mapping[str, int]) -> int:
    """The largest total of ``remaining`` over stages that can run at the same time (a max-weight antichain).

    This is the tightest bound that uses only the DAG (no durations). Solved as a small integer
    program with HiGHS: pick stages, no two of which are ordered by a path in the DAG.

    ``remaining[s]`` is the number of stage ``s``'s vertices still to run, between 0 and its vertex
    count; a stage left out counts as 0 (done). A state stage barriers cannot reach (a stage with
    some vertices done while a producer still has vertices to run) is refused, naming both.

    >>> g = StageGraph({"a": 3, "b": 4, "c": 5}, [("a", "c")])
    >>> exact_peak(g, {"a": 3, "b": 4, "c": 5})
    9
    >>> exact_peak(g, {"a": 1, "b": 4, "c": 2})
    Traceback (most recent call last):
    ...
    ValueError: remaining['c']=2 says 3 of the 5 vertices of stage 'c' are done, but its producer 'a' still has 1 to run: under stage barriers 'c' starts only once 'a' has completed
    """
    import networkx as nx
    from scipy.optimize import Bounds, LinearConstraint, milp

    if not isinstance(graph, StageGraph):
        raise ValueError(f"graph must be a StageGraph, got {type(graph).__name__}")
    V = graph.vertices
    rem = _check_counts(V, remaining, "remaining")
    for s in graph.stages:
        if rem[s] < V[s]:
            for p in graph.producers(s):
                if rem[p] > 0:
                    left_out = "" if s in remaining else f" (stage {s!r} is left out of remaining, so it counts as done)"
                    raise ValueError(
                        f"remaining[{s!r}]={rem[s]} says {V[s] - rem[s]} of the {V[s]} vertices of stage {s!r} are done"
                        f"{left_out}, but its producer {p!r} still has {rem[p]} to run: under stage barriers {s!r} "
                        f"starts only once {p!r} has completed"
                    )
    stages = [s for s in graph.stages if rem[s] > 0]
    if not stages:
        return 0
    idx = {s: i for i, s in enumerate(stages)}
    g = graph.to_networkx()
    rows = []
    for u in stages:
        for v in nx.descendants(g, u):
            if v in idx:
                rows.append((idx[u], idx[v]))
    w = np.array([rem[s] for s in stages], dtype=float)
    cons = []
    if rows:
        a = np.zeros((len(rows), len(stages)))
        for k, (i, j) in enumerate(rows):
            a[k, i] = a[k, j] = 1.0
        cons.append(LinearConstraint(a, -np.inf, 1.0))
    res = milp(-w, constraints=cons, integrality=np.ones(len(stages)), bounds=Bounds(0, 1))
    if not res.success:  # pragma: no cover - HiGHS solves these tiny programs
        raise RuntimeError(f"exact_peak: HiGHS failed: {res.message}")
    return int(round(-res.fun))
