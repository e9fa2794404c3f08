"""The stage graph of a SCOPE-like job: stages with vertex counts, edges producer -> consumer.

A *stage* runs as several parallel *vertices* (instances on data partitions); each running vertex
holds one *token*. Data flows from inputs (no producers) to outputs (no consumers). A *spool* is a
stage with more than one consumer: in SCOPE only the Spool operator may feed several stages (paper
§4, footnote 1).

Example
-------
>>> g = StageGraph({"scan": 40, "spool": 10, "join": 5, "agg": 2},
...                [("scan", "spool"), ("spool", "join"), ("spool", "agg")])
>>> g.spools, g.inputs, g.outputs
(('spool',), ('scan',), ('join', 'agg'))
>>> StageGraph({"a": 1}, [("a", "b")])
Traceback (most recent call last):
...
ValueError: edge ('a', 'b') names unknown stage 'b'; the stages are: a
>>> g.check_state({"join": 5})
Traceback (most recent call last):
...
ValueError: completed['join']=5, but its producer 'spool' has completed only 0 of its 10 vertices: under stage barriers a stage starts only once every producer has completed (allowed: completed['join'] = 0 until 'spool' completes)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property

import networkx as nx
import numpy as np


class StageGraph:
    """An immutable stage DAG. ``vertices[s]`` is the number of vertices of stage ``s`` (>= 1).

    Stages keep the order of ``vertices``; every derived list (spools, inputs, consumers, ...)
    follows it, which is what makes tree-ification reproducible for a given seed.
    """

    def __init__(self, vertices: Mapping[str, int], edges: Iterable[tuple[str, str]]):
        if not isinstance(vertices, Mapping) or len(vertices) == 0:
            raise ValueError(f"vertices must be a non-empty dict stage -> vertex count, got {vertices!r}")
        verts: dict[str, int] = {}
        for stage, count in vertices.items():
            if not isinstance(stage, str) or not stage:
                raise ValueError(f"stage names must be non-empty strings, got {stage!r}")
            if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
                raise ValueError(f"stage {stage!r} has vertex count {count!r}: must be an integer >= 1")
            if count < 1:
                raise ValueError(f"stage {stage!r} has vertex count {count}: must be an integer >= 1")
            verts[stage] = int(count)
        self._vertices = verts
        pos = {s: i for i, s in enumerate(verts)}
        if edges is None or isinstance(edges, (str, bytes, Mapping)) or not isinstance(edges, Iterable):
            raise ValueError(
                f"edges must be a list of (producer, consumer) tuples, got {edges!r}; "
                "a job without edges takes edges=[]"
            )
        seen: set[tuple[str, str]] = set()
        edge_list: list[tuple[str, str]] = []
        for e in edges:
            if not (isinstance(e, tuple) and len(e) == 2):
                raise ValueError(f"edge {e!r} must be a (producer, consumer) tuple")
            for s in e:
                if s not in pos:
                    raise ValueError(
                        f"edge {e!r} names unknown stage {s!r}; the stages are: {', '.join(verts)}"
                    )
            if e in seen:
                raise ValueError(f"duplicate edge {e!r}: each producer -> consumer edge may appear once")
            seen.add(e)
            edge_list.append(e)
        self._edges = tuple(edge_list)
        self._consumers: dict[str, list[str]] = {s: [] for s in verts}
        self._producers: dict[str, list[str]] = {s: [] for s in verts}
        for u, v in edge_list:
            self._consumers[u].append(v)
            self._producers[v].append(u)
        for d in (self._consumers, self._producers):
            for s in d:
                d[s].sort(key=pos.__getitem__)
        g = self.to_networkx()
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            on_cycle = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
            raise ValueError(
                f"the stage graph has a cycle through stage {cycle[0][0]!r} ({on_cycle}); "
                "a job's stage graph must be acyclic"
            )

    # ---- structure -------------------------------------------------------------------------
    @property
    def vertices(self) -> dict[str, int]:
        """Stage -> vertex count (a copy)."""
        return dict(self._vertices)

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        return self._edges

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(self._vertices)

    def __len__(self) -> int:
        return len(self._vertices)

    def __contains__(self, stage: object) -> bool:
        return stage in self._vertices

    def consumers(self, stage: str) -> tuple[str, ...]:
        """Stages that read ``stage``'s output (its out-neighbours)."""
        return tuple(self._consumers[self._known(stage)])

    def producers(self, stage: str) -> tuple[str, ...]:
        """Stages whose output ``stage`` reads (its in-neighbours)."""
        return tuple(self._producers[self._known(stage)])

    def in_degree(self, stage: str) -> int:
        return len(self._producers[self._known(stage)])

    @cached_property
    def spools(self) -> tuple[str, ...]:
        """Stages with more than one consumer."""
        return tuple(s for s in self._vertices if len(self._consumers[s]) > 1)

    @cached_property
    def inputs(self) -> tuple[str, ...]:
        return tuple(s for s in self._vertices if not self._producers[s])

    @cached_property
    def outputs(self) -> tuple[str, ...]:
        return tuple(s for s in self._vertices if not self._consumers[s])

    @cached_property
    def topological_order(self) -> tuple[str, ...]:
        """Producers before consumers; ties in stage order (deterministic)."""
        pos = {s: i for i, s in enumerate(self._vertices)}
        return tuple(nx.lexicographical_topological_sort(self.to_networkx(), key=pos.__getitem__))

    @property
    def total_vertices(self) -> int:
        return sum(self._vertices.values())

    def to_networkx(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for s, n in self._vertices.items():
            g.add_node(s, vertices=n)
        g.add_edges_from(self._edges)
        return g

    def check_completed(self, completed: Mapping[str, int] | None, name: str = "completed") -> dict[str, int]:
        """Validate a stage -> count map against this graph (missing stages count as 0)."""
        return _check_counts(self._vertices, completed, name)

    def check_state(
        self, completed: Mapping[str, int] | None, running: Mapping[str, int] | None = None
    ) -> tuple[dict[str, int], dict[str, int]]:
        """Validate a completion state: counts in range, and reachable under stage barriers.

        A stage may have completed or running vertices only once every producer has completed all
        of its vertices; a ``ValueError`` names the stage and the producer otherwise. Returns the
        completed and running counts with every stage present.
        """
        done = _check_counts(self._vertices, completed, "completed")
        run = _check_counts(self._vertices, running, "running")
        _check_barriers(self._vertices, self._producers, done, run)
        return done, run

    def _known(self, stage: str) -> str:
        if stage not in self._vertices:
            raise ValueError(f"unknown stage {stage!r}; the stages are: {', '.join(self._vertices)}")
        return stage

    # ---- value semantics -------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StageGraph)
            and self._vertices == other._vertices
            and set(self._edges) == set(other._edges)
        )

    def __hash__(self) -> int:
        return hash((tuple(self._vertices.items()), frozenset(self._edges)))

    def __repr__(self) -> str:
        return f"StageGraph(vertices={self._vertices!r}, edges={list(self._edges)!r})"


def _check_barriers(
    vertices: Mapping[str, int],
    producers: Mapping[str, Iterable[str]],
    done: Mapping[str, int],
    run: Mapping[str, int],
) -> None:
    """Refuse a state stage barriers cannot reach (a stage under way before a producer completed)."""
    for s, v in vertices.items():
        if done[s] + run[s] > v:
            raise ValueError(f"stage {s!r}: completed ({done[s]}) + running ({run[s]}) exceeds its {v} vertices")
        if done[s] == 0 and run[s] == 0:
            continue
        for p in producers.get(s, ()):
            if done[p] < vertices[p]:
                what = f"completed[{s!r}]={done[s]}" if done[s] else f"running[{s!r}]={run[s]}"
                raise ValueError(
                    f"{what}, but its producer {p!r} has completed only {done[p]} of its {vertices[p]} vertices: "
                    "under stage barriers a stage starts only once every producer has completed "
                    f"(allowed: {what.split('=')[0]} = 0 until {p!r} completes)"
                )


def _check_counts(vertices: Mapping[str, int], counts: Mapping[str, int] | None, name: str) -> dict[str, int]:
    """Stage -> count with every stage present; ValueError names the offending stage."""
    out = {s: 0 for s in vertices}
    if counts is None:
        return out
    if not isinstance(counts, Mapping):
        raise ValueError(f"{name} must be a dict stage -> count, got {type(counts).__name__}")
    for s, c in counts.items():
        if s not in vertices:
            raise ValueError(f"{name} names unknown stage {s!r}; the stages are: {', '.join(vertices)}")
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
            raise ValueError(f"{name}[{s!r}]={c!r} must be an integer count")
        if c < 0:
            raise ValueError(f"{name}[{s!r}]={c} is negative: allowed 0 <= {name}[{s!r}] <= {vertices[s]}")
        if c > vertices[s]:
            raise ValueError(
                f"{name}[{s!r}]={c} exceeds the stage's {vertices[s]} vertices: "
                f"allowed 0 <= {name}[{s!r}] <= {vertices[s]}"
            )
        out[s] = int(c)
    return out
