"""The greedy resource shaper (paper §4, Algorithm 1): release tokens above the remaining peak.

The job manager calls it at every vertex completion. It never asks for more tokens: if the
remaining peak is below the tokens the job holds, the difference is released; otherwise nothing.

Example: the paper's Fig. 5 job holds 200 tokens; at the shown point the remaining peak is 130.

>>> import numpy as np
>>> from cluster_sim.shaper.examples import figure5_job, FIGURE5_COMPLETED
>>> ResourceShaper().tokens_to_release(figure5_job(), 200, FIGURE5_COMPLETED)
70
>>> ResourceShaper().tokens_to_release(figure5_job(), 100, FIGURE5_COMPLETED)   # never asks for more
0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .graph import StageGraph
from .peak import COUNTS, remaining_peak
from .trees import Tree, treeify


class ResourceShaper:
    """Greedy, release-only shaper.

    Parameters
    ----------
    count : "not_completed" (default) or "not_started"
        Which vertices count as remaining (see :mod:`cluster_sim.shaper.peak`).
    seed : int
        Seeds the tie-breaks of tree-ification when given a graph (the trees are cached per graph).
    spool_once : bool
        Count each spool once (our variant, :mod:`cluster_sim.shaper.trees`): never above the
        paper's bound, never below what can really run at once.
    """

    def __init__(self, count: str = "not_completed", seed: int = 0, spool_once: bool = False):
        if count not in COUNTS:
            raise ValueError(f"count={count!r} is not allowed: choose one of {', '.join(COUNTS)}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed={seed!r} must be an integer >= 0")
        if not isinstance(spool_once, bool):
            raise ValueError(f"spool_once={spool_once!r} must be True or False")
        self.count = count
        self.seed = int(seed)
        self.spool_once = spool_once
        self._cache: tuple[StageGraph, list[Tree]] | None = None

    def trees(self, graph_or_trees: StageGraph | Sequence[Tree]) -> list[Tree]:
        """The trees for a graph (tree-ified once and cached), or the trees passed in."""
        if isinstance(graph_or_trees, StageGraph):
            if self._cache is None or self._cache[0] is not graph_or_trees:
                self._cache = (graph_or_trees, treeify(graph_or_trees, np.random.default_rng(self.seed),
                                                       spool_once=self.spool_once))
            return self._cache[1]
        if isinstance(graph_or_trees, (list, tuple)) and all(isinstance(t, Tree) for t in graph_or_trees):
            return list(graph_or_trees)
        raise ValueError(
            f"graph_or_trees must be a StageGraph or a list of Tree, got {type(graph_or_trees).__name__}"
        )

    def peak(self, graph_or_trees, completed: Mapping[str, int] | None, running: Mapping[str, int] | None = None) -> int:
        """The remaining peak (Algorithm 1's ``maxRemaining``)."""
        return remaining_peak(self.trees(graph_or_trees), completed, running=running, count=self.count)

    def tokens_to_release(
        self,
        graph_or_trees: StageGraph | Sequence[Tree],
        current_tokens: int,
        completed: Mapping[str, int] | None,
        running: Mapping[str, int] | None = None,
    ) -> int:
        """``max(0, current_tokens - remaining peak)``: how many tokens to give back now."""
        if isinstance(current_tokens, bool) or not isinstance(current_tokens, (int, np.integer)):
            raise ValueError(f"current_tokens={current_tokens!r} must be an integer >= 0")
        if current_tokens < 0:
            raise ValueError(f"current_tokens={current_tokens} is negative: allowed current_tokens >= 0")
        peak = self.peak(graph_or_trees, completed, running)
        return int(max(0, current_tokens - peak))

    def __repr__(self) -> str:
        return f"ResourceShaper(count={self.count!r}, seed={self.seed}, spool_once={self.spool_once})"
