"""The exercise's cases and checks: messages that name the spool, the edge or the stage that differs.

Exercise 01 asks for ``treeify(graph, rng)`` and ``remaining_peak(trees, completed)``. The checks
here run a student's function on the cases (the paper's Fig. 5 job first, then seeded random
DAGs) and, at the first case that disagrees with the library, say *where*:

* :func:`check_treeify` compares the edges dropped at each spool (in the order the rule visits
  them) and names the first spool whose dropped edges differ, with its consumers' in-degrees and,
  for a tie, the consumer ``rng`` picks;
* :func:`check_remaining_peak` finds the first tree whose width differs, then the first stage of
  that tree (children before parents) whose value differs, by calling the student's function on
  the subtree rooted at that stage, and shows Algorithm 2's arithmetic there.

The misconceptions the exercise teaches against, each caught by a test (``tests/shaper``): ties
broken by index instead of ``rng``, one drop for a spool with three or more consumers, the max of
the children instead of their sum, and every vertex counted instead of the ones not completed.
Dropping Algorithm 2's first line ("completed -> Empty") is *not* a mistake these checks can see:
on every state stage barriers can reach, a completed stage's producers have completed too, so its
children add nothing (a test shows the variant agrees on every case; the states where it would
differ are the ones :func:`~cluster_sim.shaper.peak.remaining_peak` refuses).

Example
-------
>>> def peak(trees, completed):                    # Algorithm 2 on each tree, summed
...     total = 0
...     for t in trees:
...         value = {}
...         for s in t.order:
...             left = t.vertices[s] - completed.get(s, 0)
...             value[s] = 0 if left <= 0 else max(left, sum(value[c] for c in t.children[s]))
...         total += value[t.root]
...     return total
>>> check_remaining_peak(peak)
'remaining_peak: all 62 cases agree with the reference (case 0, Fig. 5: 30 + 50 + 50 = 130)'
>>> from cluster_sim.shaper import treeify
>>> check_treeify(treeify)                         # the library's own answer is not the student's
Traceback (most recent call last):
...
cluster_sim.checking.Delegated: treeify calls the library's cluster_sim.shaper.trees.treeify, the reference this check compares it with: ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..checking import CheckFailed, call_student, name_case
from .examples import FIGURE5_COMPLETED, FIGURE5_SEED, figure5_job, random_stage_graph
from .graph import StageGraph
from .peak import remaining_peak, tree_width, tree_widths
from .trees import Tree, canonical_forest, dropped_edges, treeify

#: what a student's treeify / remaining_peak may not call while its check runs (the library's own answers)
TREEIFY_REFERENCES = (treeify, dropped_edges)
PEAK_REFERENCES = (remaining_peak, tree_widths, tree_width)

__all__ = [
    "exercise_dag", "completion_state", "treeify_cases", "peak_cases", "first_treeify_difference",
    "first_peak_difference", "check_treeify", "check_remaining_peak",
]


# ---- the cases ------------------------------------------------------------------------------------
def exercise_dag(seed: int, max_stages: int = 12) -> StageGraph:
    """Random DAG number ``seed``: even seeds from the lab's SCOPE-like generator, odd ones raw random
    DAGs (spools with three or more consumers, spools shared by consumers of in-degree 1)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, max_stages + 1))
    if seed % 2 == 0:
        return random_stage_graph(rng, stages=n, spools=int(rng.integers(0, n - 1)), max_vertices=30)
    names = [f"S{i + 1}" for i in range(n)]
    p = (0.2, 0.35, 0.5)[seed % 3]
    edges = [(names[i], names[j]) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    return StageGraph({s: int(rng.integers(1, 31)) for s in names}, edges)


def completion_state(graph: StageGraph, seed: int) -> dict[str, int]:
    """A completion state stage barriers can reach: a stage has completed vertices only once all its
    producers have completed."""
    rng = np.random.default_rng(seed)
    V, completed, done = graph.vertices, {}, set()
    for s in graph.topological_order:
        if all(p in done for p in graph.producers(s)) and rng.random() < 0.7:
            completed[s] = int(rng.integers(0, V[s] + 1)) if rng.random() < 0.5 else V[s]
            if completed[s] == V[s]:
                done.add(s)
    return completed


def treeify_cases(hidden: bool = False) -> list[tuple[StageGraph, int, str]]:
    """``(graph, seed, name)``: Fig. 5 with four seeds (all four tie-break outcomes), then 60 random DAGs
    (``hidden``: 60 others with up to 25 stages)."""
    if hidden:
        return [(exercise_dag(k, 25), k, f"exercise_dag({k}, 25)") for k in range(100, 160)]
    g5 = figure5_job()
    return [(g5, s, "the paper's Fig. 5 job") for s in range(4)] + [
        (exercise_dag(k), k, f"exercise_dag({k})") for k in range(60)]


def peak_cases(hidden: bool = False) -> list[tuple[StageGraph, int, dict, str]]:
    """``(graph, treeify seed, completed, name)``: Fig. 5 at the paper's execution point (the answer is
    130), Fig. 5 untouched, then 60 random DAGs at reachable states (``hidden``: 60 others)."""
    if hidden:
        return [(exercise_dag(k, 25), k, completion_state(exercise_dag(k, 25), k + 1), f"exercise_dag({k}, 25)")
                for k in range(200, 260)]
    g5 = figure5_job()
    cases = [(g5, FIGURE5_SEED, dict(FIGURE5_COMPLETED), "the paper's Fig. 5 job at its execution point"),
             (g5, 1, {}, "the paper's Fig. 5 job before it starts")]
    return cases + [(exercise_dag(k), k, completion_state(exercise_dag(k), k), f"exercise_dag({k})") for k in range(60)]


# ---- treeify --------------------------------------------------------------------------------------
def _edge(e) -> str:
    return f"{e[0]} -> {e[1]}"


def _edges(es) -> str:
    return ", ".join(_edge(e) for e in sorted(es)) or "none"


def first_treeify_difference(graph: StageGraph, seed: int, yours) -> str | None:
    """``None`` when ``yours`` (a student's trees for ``graph`` with ``default_rng(seed)``) matches the
    library's trees, else a message naming the first spool whose dropped edges differ."""
    if not isinstance(yours, (list, tuple)) or not all(isinstance(t, Tree) for t in yours):
        return (f"treeify must return a list of Tree (build them with trees_from_edges(graph, kept_edges)), "
                f"got {type(yours).__name__}")
    kept = {e for t in yours for e in t.edges}
    alien = kept - set(graph.edges)
    if alien:
        return f"your trees hold {_edge(sorted(alien)[0])}, which is not an edge of the graph"
    expected = dropped_edges(graph, np.random.default_rng(seed))
    yours_dropped = set(graph.edges) - kept
    for spool in graph.spools:
        want = {e for e in expected if e[0] == spool}
        got = {e for e in yours_dropped if e[0] == spool}
        if want == got:
            continue
        consumers = graph.consumers(spool)
        degrees = ", ".join(f"{c} (in-degree {graph.in_degree(c)})" for c in consumers)
        msg = (f"spool {spool} feeds {degrees}.\n"
               f"  you dropped:  {_edges(got)} (kept {_edges({(spool, c) for c in consumers} - got)})\n"
               f"  the rule drops: {_edges(want)} (keeps {_edges({(spool, c) for c in consumers} - want)})")
        return msg + _treeify_hint(graph, spool, got, want)
    stray = sorted(e for e in yours_dropped if e[0] not in graph.spools)
    if stray:
        return (f"you dropped {_edge(stray[0])}, but {stray[0][0]} feeds only {stray[0][1]}: "
                "only a spool's edges (a stage with several consumers) are dropped")
    if canonical_forest(yours) != canonical_forest(treeify(graph, np.random.default_rng(seed))):
        ref = {t.root: t for t in treeify(graph, np.random.default_rng(seed))}
        mine = {t.root: t for t in yours}
        for root in sorted(set(ref) | set(mine)):
            if root not in mine or root not in ref or mine[root].canonical() != ref[root].canonical():
                return (f"the same edges are dropped, but the tree rooted at {root} differs "
                        f"(yours: {sorted(mine[root].stages) if root in mine else 'missing'}; expected: "
                        f"{sorted(ref[root].stages) if root in ref else 'no such tree'}): "
                        "build the trees with trees_from_edges(graph, kept_edges)")
    return None


def _treeify_hint(graph: StageGraph, spool: str, got: set, want: set) -> str:
    consumers = list(graph.consumers(spool))
    top = max(graph.in_degree(c) for c in consumers)
    tied = [c for c in consumers if graph.in_degree(c) == top]
    if len(want) < len(got) and top <= 1:
        return "\n  every consumer has in-degree 1: the rule drops nothing here"
    if not got:
        return (f"\n  a spool whose consumers have in-degree above 1 loses the edge to the consumer with the "
                f"largest in-degree ({top}: {', '.join(tied)})")
    if len(got) < len(want):
        return ("\n  repeat the rule while the spool feeds several consumers and the largest in-degree among "
                "them is above 1 (a spool with three or more consumers may lose several edges)")
    if len(tied) > 1 and {c for _, c in got} & set(tied) and {c for _, c in want} & set(tied):
        first = tied[0]
        hint = (f"\n  {', '.join(tied)} tie at in-degree {top}: drop tied[int(rng.integers({len(tied)}))], with tied in "
                "the order of graph.consumers(spool) and rng used for ties only, spools in graph.spools order")
        if (spool, first) in got:
            hint += f"; you seem to take the first tied consumer ({first}) every time"
        return hint
    return f"\n  drop the edge to the consumer with the largest in-degree ({top}: {', '.join(tied)})"


def check_treeify(student: Callable, cases: Sequence | None = None, *, hidden: bool = False) -> str:
    """Run ``student(graph, np.random.default_rng(seed))`` on every case; raise at the first difference."""
    cases = treeify_cases(hidden) if cases is None else cases
    for i, (graph, seed, name) in enumerate(cases):
        yours = call_student(student, graph, np.random.default_rng(seed), name="treeify", forbid=TREEIFY_REFERENCES)
        msg = first_treeify_difference(graph, seed, yours)
        if msg:
            raise CheckFailed(f"treeify: case {i} ({name}, rng = np.random.default_rng({seed})): {msg}"
                              + name_case(f"treeify case {i}", {"graph": graph, "seed of rng": seed}))
    return f"treeify: all {len(cases)} cases agree with the reference (the same edges dropped at every spool)"


# ---- remaining_peak -------------------------------------------------------------------------------
def _subtree(t: Tree, stage: str) -> Tree:
    members: set[str] = set()
    stack = [stage]
    while stack:
        s = stack.pop()
        if s not in members:
            members.add(s)
            stack.extend(t.children[s])
    order = tuple(s for s in t.order if s in members)
    return Tree(root=stage, children={s: t.children[s] for s in order},
                vertices={s: t.vertices[s] for s in order}, order=order, graph=t.graph)


def _as_int(x):
    try:
        return int(x) if float(x) == int(x) else x
    except (TypeError, ValueError, OverflowError):
        return x


def first_peak_difference(student: Callable, trees: Sequence[Tree], completed: dict) -> str | None:
    """``None`` when ``student(trees, completed)`` equals Algorithm 1, else a message naming the first
    tree and the first stage in it (children before parents) whose value differs."""
    want = remaining_peak(trees, completed)
    got = _as_int(call_student(student, trees, completed, name="remaining_peak", forbid=PEAK_REFERENCES))
    if got == want:
        return None
    head = f"yours {got!r}, expected {want}"
    widths = tree_widths(trees, completed)
    for t, w in zip(trees, widths):
        try:
            mine = _as_int(student([t], completed))
        except Exception:  # noqa: BLE001 - a function that only works on the whole forest: say what we can
            break
        if mine == w:
            continue
        for s in t.order:
            sub = _subtree(t, s)
            ref = tree_widths([sub], completed)[0]
            try:
                val = _as_int(student([sub], completed))
            except Exception:  # noqa: BLE001
                break
            if val != ref:
                return f"{head}.\n  In the tree rooted at {t.root}: {_stage_story(t, s, completed, val, ref)}"
        return f"{head}.\n  The tree rooted at {t.root}: yours {mine!r}, expected width {w}"
    parts = " + ".join(str(w) for w in widths)
    return f"{head}: the trees' widths are {parts} = {want}; Algorithm 1 adds every tree's width"


def _stage_story(t: Tree, s: str, completed: dict, yours, expected: int) -> str:
    v, c = t.vertices[s], completed.get(s, 0)
    children = t.children[s]
    values = tree_widths([_subtree(t, x) for x in children], completed) if children else []
    where = f"stage {s} ({v} vertices, {c} completed"
    where += f"; children {', '.join(f'{x} = {y}' for x, y in zip(children, values))})" if children else ", no children)"
    if c >= v:
        return (f"{where}: yours {yours!r}, expected 0: a completed stage contributes nothing "
                "(Algorithm 2 returns Empty)")
    rem = v - c
    if children:
        msg = f"{where}: yours {yours!r}, Algorithm 2 gives max({rem}, {' + '.join(map(str, values))}) = {expected}"
    else:
        msg = f"{where}: yours {yours!r}, Algorithm 2 gives its {rem} remaining vertices"
    if len(children) > 1 and yours == max([rem] + values) != expected:
        msg += (f"; you took the largest child: {', '.join(children)} can run side by side, "
                "so their widths add up")
    elif yours == max([v] + ([sum(values)] if values else [])) != expected:
        msg += f"; count only the {rem} vertices not completed yet (vertices - completed), not all {v}"
    return msg


def check_remaining_peak(student: Callable, cases: Sequence | None = None, *, hidden: bool = False) -> str:
    """Run ``student(trees, completed)`` on every case (trees from the library's ``treeify``); raise at the
    first difference, naming the tree and the stage."""
    cases = peak_cases(hidden) if cases is None else cases
    first = None
    for i, (graph, seed, completed, name) in enumerate(cases):
        trees = treeify(graph, np.random.default_rng(seed))
        msg = first_peak_difference(student, trees, completed)
        if msg:
            shown = {s: c for s, c in completed.items() if c}
            raise CheckFailed(f"remaining_peak: case {i} ({name}, trees from treeify with seed {seed}, "
                              f"completed = {shown}): {msg}"
                              + name_case(f"remaining_peak case {i}", {"trees": trees, "completed": completed}))
        if first is None:
            first = tree_widths(trees, completed)
    note = ""
    if cases and cases[0][0] == figure5_job() and cases[0][2] == FIGURE5_COMPLETED:
        note = f" (case 0, Fig. 5: {' + '.join(map(str, first))} = {sum(first)})"
    return f"remaining_peak: all {len(cases)} cases agree with the reference{note}"


# ---- the readings of Algorithm 2, side by side ----------------------------------------------------
def _peak_variant(trees: Sequence[Tree], completed: dict, running: dict | None = None, *, children: str = "sum",
                  completed_rule: bool = True) -> int:
    """Algorithm 1 with a reading changed: ``children="max"``, the completed line dropped, or
    ``running`` subtracted (the "not started" reading). Validates the state like the library."""
    tree_widths(trees, completed, running=running, count="not_started" if running else "not_completed")
    total = 0
    for t in trees:
        value: dict[str, int] = {}
        for s in t.order:
            v, c = t.vertices[s], completed.get(s, 0)
            if completed_rule and c >= v:
                value[s] = 0
                continue
            kids = [value[x] for x in t.children[s]]
            agg = (sum(kids) if children == "sum" else max(kids)) if kids else 0
            value[s] = max(v - c - (running or {}).get(s, 0), agg)
        total += value[t.root]
    return int(total)


def readings(graph: StageGraph, completed: dict, running: dict, seed: int = FIGURE5_SEED):
    """The remaining peak at one execution point under each reading of §4 (a pandas DataFrame):
    Algorithm 2 as the lab reads it, the max of the children instead of their sum, remaining =
    not started, without the "completed" line, every other tie-break of the random drops, and the
    exact heaviest antichain; with each reading's difference from the lab's."""
    import itertools

    import pandas as pd

    from .peak import exact_peak
    from .trees import trees_from_edges

    trees = treeify(graph, np.random.default_rng(seed))
    ours = remaining_peak(trees, completed)
    rows = [("Algorithm 2 as we read it: sum of children, not-completed vertices", ours),
            ("max of the children instead of their sum", _peak_variant(trees, completed, children="max")),
            ("remaining = not started (running vertices not counted)", _peak_variant(trees, completed, running)),
            ("without the 'completed -> Empty' line", _peak_variant(trees, completed, completed_rule=False))]
    # the other tie-breaks: every combination of the tied consumers' drops, as the rule allows
    tied = []
    for spool in graph.spools:
        consumers = list(graph.consumers(spool))
        top = max(graph.in_degree(c) for c in consumers)
        options = [c for c in consumers if graph.in_degree(c) == top]
        if top > 1 and len(options) > 1 and len(consumers) == 2:
            tied.append((spool, options))
    base = set(dropped_edges(graph, np.random.default_rng(seed)))
    mine = {(s, c) for s, c in base if any(s == t for t, _ in tied)}
    for picks in itertools.product(*[opts for _, opts in tied]):
        drop = (base - mine) | {(s, c) for (s, _), c in zip(tied, picks)}
        if drop == base:
            continue
        forest = trees_from_edges(graph, [e for e in graph.edges if e not in drop])
        label = ", ".join(f"{s} drops {c}" for (s, _), c in zip(tied, picks))
        rows.append((f"another tie-break: {label}", remaining_peak(forest, completed)))
    remaining = {s: v - completed.get(s, 0) for s, v in graph.vertices.items()}
    rows.append(("exact heaviest antichain (the best a DAG-only bound can do)", exact_peak(graph, remaining)))
    df = pd.DataFrame(rows, columns=["reading", "remaining peak"]).set_index("reading")
    df["vs ours"] = df["remaining peak"] - ours
    return df
