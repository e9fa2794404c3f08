"""Tree-ification (paper §4, step 1): turn the stage DAG into inverted trees by dropping spool edges.

A spool cannot run concurrently with any of its consumers (they read its output), so removing one
of its output edges loses little information about which stages can run *together*. The rule:

* for each spool, drop the output edge to the consumer with the **largest in-degree** (in-degree in
  the original graph, as in the paper's Fig. 5 walk-through); ties are broken at random;
* if every consumer of the spool has in-degree 1, drop nothing ("the subgraph is already a tree").

**Spools with three or more consumers** (the paper only shows two): we apply the rule *repeatedly*
until the spool keeps a single consumer or only consumers of in-degree 1 remain. One drop would
leave the spool with several consumers, i.e. not a tree; repeating the same rule is the natural
generalisation and never detaches a consumer that has no other producer.

Trees are *inverted*: outputs are the roots and a stage's children are its producers. A spool that
keeps several consumers (the "drop nothing" case) becomes a *shared* child: it appears under each
consumer, possibly in several trees. The max-cut recursion then counts it once per consumer, which
is conservative (never below the truth) but looser.

**Counting each spool once** (``spool_once=True``, our variant, not the paper's): after the paper's
rule, a spool that still feeds several consumers (all of in-degree 1) keeps only the first of them
in stage order. Every stage then sits in exactly one tree, and the bound stays an upper bound:

* *never above the paper's*: the variant's trees are the paper's minus some edges, and removing a
  child never raises a ``max(remaining, sum of children)``;
* *never below the heaviest antichain of the DAG* (what can really run at once): take a heaviest
  antichain ``A``. A path in a tree is a path in the DAG, so ``A`` restricted to one tree is an
  antichain of that tree, whose weight is at most the tree's max-cut; the trees partition the
  stages, so summing over trees gives ``w(A) <= sum of the widths``.

Randomness, exactly (so a seeded ``rng`` gives the same trees everywhere, including in the
exercise): spools are visited in the graph's stage order; for a tie among ``k >= 2`` consumers
(listed in stage order) the dropped one is ``tied[rng.integers(k)]``; ``rng`` is not used otherwise.

Example
-------
>>> import numpy as np
>>> from cluster_sim.shaper.graph import StageGraph
>>> g = StageGraph({"a": 4, "b": 3, "c": 2, "d": 1},
...                [("a", "c"), ("a", "d"), ("b", "d")])   # a is a spool; d has in-degree 2
>>> dropped_edges(g, np.random.default_rng(0))
[('a', 'd')]
>>> [(t.root, t.edges) for t in treeify(g, np.random.default_rng(0))]
[('c', (('a', 'c'),)), ('d', (('b', 'd'),))]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .graph import StageGraph


@dataclass(frozen=True)
class Tree:
    """One inverted tree: ``root`` is an output stage; ``children[s]`` are the producers kept under ``s``.

    ``order`` lists the tree's stages children-before-parents (root last), so the max-cut is a
    single pass over it. ``vertices`` holds the vertex count of every stage in the tree. ``graph``
    is the stage graph the tree came from (set by :func:`trees_from_edges`): with it, a completion
    state is checked against the whole job (every producer, also across dropped edges).
    """

    root: str
    children: Mapping[str, tuple[str, ...]]
    vertices: Mapping[str, int]
    order: tuple[str, ...] = field(repr=False)
    graph: StageGraph | None = field(default=None, repr=False, compare=False)

    @property
    def stages(self) -> tuple[str, ...]:
        return self.order

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        """Kept edges producer -> consumer, in ``order`` of the consumer."""
        return tuple((c, s) for s in self.order for c in self.children[s])

    def canonical(self) -> tuple:
        """A hashable, order-free description: ``(root, sorted edges, sorted stages)``."""
        return (self.root, tuple(sorted(self.edges)), tuple(sorted(self.order)))

    def __len__(self) -> int:
        return len(self.order)


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(0)), got {type(rng).__name__}"
        )
    return rng


def dropped_edges(graph: StageGraph, rng: np.random.Generator, *, spool_once: bool = False) -> list[tuple[str, str]]:
    """The spool output edges tree-ification removes (see the module docstring for the exact rule).

    ``spool_once`` also drops, after the paper's rule, the edges of a spool still shared by several
    consumers, keeping the first in stage order (``rng`` is not used for these, so the paper's drops
    are the same with and without it).
    """
    _check_rng(rng)
    if not isinstance(graph, StageGraph):
        raise ValueError(f"graph must be a StageGraph, got {type(graph).__name__}")
    dropped: list[tuple[str, str]] = []
    for spool in graph.spools:
        kept = list(graph.consumers(spool))
        while len(kept) > 1:
            degree = {c: graph.in_degree(c) for c in kept}
            top = max(degree.values())
            if top <= 1:
                break  # the paper's trivial case: every remaining consumer has in-degree 1
            tied = [c for c in kept if degree[c] == top]
            victim = tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
            dropped.append((spool, victim))
            kept.remove(victim)
        if spool_once:
            dropped.extend((spool, c) for c in kept[1:])
    return dropped


def trees_from_edges(graph: StageGraph, kept_edges: Iterable[tuple[str, str]]) -> list[Tree]:
    """Build the inverted trees of ``graph`` restricted to ``kept_edges`` (roots = stages with no kept consumer).

    Roots come in the graph's stage order. A stage with several kept consumers is a shared child.
    """
    if not isinstance(graph, StageGraph):
        raise ValueError(f"graph must be a StageGraph, got {type(graph).__name__}")
    kept = set(kept_edges)
    unknown = kept - set(graph.edges)
    if unknown:
        raise ValueError(f"kept edge {sorted(unknown)[0]!r} is not an edge of the graph")
    children: dict[str, list[str]] = {s: [] for s in graph.stages}
    has_consumer: set[str] = set()
    for u, v in graph.edges:  # graph edge order keeps children in a stable order
        if (u, v) in kept:
            children[v].append(u)
            has_consumer.add(u)
    pos = {s: i for i, s in enumerate(graph.stages)}
    for s in children:
        children[s].sort(key=pos.__getitem__)
    topo = graph.topological_order  # producers first: a valid children-before-parents order
    V = graph.vertices
    trees = []
    for root in graph.stages:
        if root in has_consumer:
            continue
        members: set[str] = set()
        stack = [root]
        while stack:
            s = stack.pop()
            if s not in members:
                members.add(s)
                stack.extend(children[s])
        order = tuple(s for s in topo if s in members)
        trees.append(
            Tree(
                root=root,
                children={s: tuple(children[s]) for s in order},
                vertices={s: V[s] for s in order},
                order=order,
                graph=graph,
            )
        )
    return trees


def treeify(graph: StageGraph, rng: np.random.Generator, *, spool_once: bool = False) -> list[Tree]:
    """Convert the stage graph into inverted trees, one per output stage (paper §4, Algorithm 1's ``Treeify``).

    ``spool_once=True`` is our variant that counts each spool once (module docstring): never above
    the paper's bound, never below the heaviest antichain.
    """
    drop = set(dropped_edges(graph, rng, spool_once=spool_once))
    return trees_from_edges(graph, [e for e in graph.edges if e not in drop])


def canonical_forest(trees: Iterable[Tree]) -> tuple:
    """Order-free description of a list of trees, for comparing two tree-ifications."""
    if not isinstance(trees, (list, tuple)):
        raise ValueError(f"trees must be a list of Tree, got {type(trees).__name__}")
    for t in trees:
        if not isinstance(t, Tree):
            raise ValueError(f"trees must contain Tree objects, got {type(t).__name__}")
    return tuple(sorted(t.canonical() for t in trees))


def times_counted(trees: Iterable[Tree]) -> dict[str, int]:
    """How many times Algorithm 2 visits each stage: once per path from a root down to it.

    1 for every stage when no spool is shared; a spool kept under ``k`` consumers counts ``k`` times
    (more if those consumers are shared too). Its remaining vertices enter the bound that often.

    >>> import numpy as np
    >>> g = StageGraph({"s": 10, "a": 3, "b": 4, "c": 1}, [("s", "a"), ("s", "b"), ("s", "c")])
    >>> times_counted(treeify(g, np.random.default_rng(0)))["s"]
    3
    """
    counts: dict[str, int] = {}
    for t in trees:
        paths = {t.root: 1}
        for s in reversed(t.order):  # parents before children
            for c in t.children[s]:
                paths[c] = paths.get(c, 0) + paths.get(s, 0)
        for s, n in paths.items():
            counts[s] = counts.get(s, 0) + n
    return counts
