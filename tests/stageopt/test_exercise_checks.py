"""Exercises 06 and 07: the solution passes every check cell; each misconception the exercise lists
fails a check with a message naming its cause (issue 15, findings 3 and 6).

The check cells are executed from ``solutions/`` exactly as nbgrader runs them, with the student's
function replaced by a wrong variant.
"""

import heapq
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from cluster_sim.stageopt import exact_min_max_placement, ipa_placement, stage_latency

ROOT = Path(__file__).resolve().parents[2]


def _cells(name):
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    # the graded predictions (cells tagged "prediction") are tested in test_stageopt_predictions.py
    code = [c for c in nb.cells if c.cell_type == "code" and "prediction" not in c.metadata.get("tags", [])]
    meta = [c.metadata.get("nbgrader", {}) for c in code]
    setup = [c.source for c, m in zip(code, meta) if not m and "parameters" not in c.metadata.get("tags", [])]
    solution = [c.source for c, m in zip(code, meta) if m.get("solution")]
    checks = [(m["grade_id"], c.source) for c, m in zip(code, meta) if m.get("grade")]
    return setup, solution, checks


def run_checks(name, fn_name=None, fn=None):
    """Run the notebook's check cells; with ``fn`` the student's function is replaced by it.
    Returns what each check printed (its summary line)."""
    setup, solution, checks = _cells(name)
    ns = {"__name__": "__main__"}
    for src in setup + solution:
        exec(src, ns)
    if fn is not None:
        ns[fn_name] = fn
    printed = []
    ns["print"] = printed.append
    for grade_id, src in checks:
        exec(src, ns)
    return printed


# ---- exercise 06: IPA ------------------------------------------------------------------------------
def solution_ipa():
    setup, solution, _ = _cells("06_stageopt_placement.ipynb")
    ns = {}
    for src in setup + solution:
        exec(src, ns)
    return ns["my_ipa"]


def test_exercise06_solution_passes_and_keeps_theorem_5_1_on_the_tied_case():
    out = run_checks("06_stageopt_placement.ipynb")
    assert len(out) == 2 and "agree with the library" in out[0] and "Theorem 5.1" in out[1]
    L, cap = np.array([[4.0, 5.0], [4.0, 9.0]]), np.array([1, 1])
    my_ipa = solution_ipa()
    # issue 15, finding 3: the old solution (ties to the lower index) gave 9 s here
    assert stage_latency(L, my_ipa(L, cap)) == 5.0 == exact_min_max_placement(L, cap)[1]
    assert my_ipa(L, cap).tolist() == ipa_placement(L, cap).tolist() == [1, 0]


def ties_to_lower_index(L, capacity):
    """The old solution: largest BPL first, ties to the lower instance index (np.argmax)."""
    L = np.asarray(L, float)
    cap = np.asarray(capacity).copy()
    m = L.shape[0]
    a = np.full(m, -1)
    for _ in range(m):
        Lm = np.where(cap[None, :] > 0, L, np.inf)
        best = Lm.argmin(axis=1)
        bpl = Lm[np.arange(m), best]
        bpl[a >= 0] = -np.inf
        i = int(np.argmax(bpl))
        a[i] = best[i]
        cap[best[i]] -= 1
    return a


def ignores_capacity(L, capacity):
    """BPL over every machine, full or not."""
    L = np.asarray(L, float)
    m = L.shape[0]
    a = np.full(m, -1)
    rowsum = L.sum(axis=1)
    for _ in range(m):
        best = L.argmin(axis=1)
        bpl = L[np.arange(m), best].copy()
        bpl[a >= 0] = -np.inf
        cand = np.flatnonzero(bpl == bpl.max())
        i = int(cand[np.argmax(rowsum[cand])])
        a[i] = best[i]
    return a


def lazy_heap(L, capacity):
    """What the old hint ("keeps a max-heap") suggests: a heap whose entries are refreshed on pop."""
    L = np.asarray(L, float)
    cap = np.asarray(capacity).copy()
    m = L.shape[0]
    rowsum = L.sum(axis=1)

    def best(i):
        Lm = np.where(cap > 0, L[i], np.inf)
        j = int(np.argmin(Lm))
        return Lm[j], j

    heap = [(-best(i)[0], -rowsum[i], i) for i in range(m)]
    heapq.heapify(heap)
    a = np.full(m, -1)
    while heap:
        neg, _, i = heapq.heappop(heap)
        b, j = best(i)
        if b != -neg:                         # stale: refresh and push back
            heapq.heappush(heap, (-b, -rowsum[i], i))
            continue
        a[i] = j
        cap[j] -= 1
    return a


def smallest_first(L, capacity):
    L = np.asarray(L, float)
    cap = np.asarray(capacity).copy()
    m = L.shape[0]
    a = np.full(m, -1)
    for _ in range(m):
        Lm = np.where(cap[None, :] > 0, L, np.inf)
        best = Lm.argmin(axis=1)
        bpl = Lm[np.arange(m), best]
        bpl[a >= 0] = np.inf
        i = int(np.argmin(bpl))
        a[i] = best[i]
        cap[best[i]] -= 1
    return a


def never_places_the_last(L, capacity):
    a = ipa_placement(L, capacity)
    a[-1] = -1
    return a


@pytest.mark.parametrize("variant, cause", [
    (ties_to_lower_index, r"case 1: decision 1 of 2 differs.*cause: instances 0 and 1 tie at the largest BPL 4.*"
                          r"larger row sum.*breaks Theorem 5\.1.*stage latency 9 instead of 5"),
    (ignores_capacity, r"case 0: machine 0 over capacity: your plan puts 2 instances on it \(\[0, 1\]\), capacity\[0\] = 1"),
    (lazy_heap, r"case 3: decision 2 of 3 differs.*cause: instance 1's BPL rose from 4 to 6 when machine 0 filled up "
                r"at decision 1.*refresh the BPL of every instance.*as soon as that machine fills up"),
    (smallest_first, r"case 0: decision 1 of 2 differs.*take the largest, not the smallest"),
    (never_places_the_last, r"case 0: instance 1 is sent to machine -1, which does not exist.*never placed"),
])
def test_exercise06_misconception_fails_naming_its_cause(variant, cause):
    with pytest.raises(AssertionError) as err:
        run_checks("06_stageopt_placement.ipynb", "my_ipa", variant)
    assert re.search(cause, str(err.value), re.S), str(err.value)


def test_exercise06_stub_fails_with_the_not_implemented_message():
    from cluster_sim.checking import NOT_IMPLEMENTED

    def stub(L, capacity):
        raise NotImplementedError()
    with pytest.raises(AssertionError, match=re.escape(NOT_IMPLEMENTED)):
        run_checks("06_stageopt_placement.ipynb", "my_ipa", stub)


def test_exercise06_visible_checks_hold_a_tied_column_ordered_case():
    _, _, checks = _cells("06_stageopt_placement.ipynb")
    assert all("[[4.0, 5.0], [4.0, 9.0]]" in src for _, src in checks)


def test_exercise06_text_describes_the_library_not_a_heap():
    nb = nbformat.read(ROOT / "solutions" / "06_stageopt_placement.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "keeps a max-heap" not in text and "ties: the lower instance index" not in text
    assert "larger row sum" in text and "only ever *rises*" in text
    walk = nbformat.read(ROOT / "notebooks" / "06_stageopt_placement.ipynb", as_version=4)
    assert "keeps a max-heap" not in "\n".join(c.source for c in walk.cells)


# ---- exercise 07: RAA Path -------------------------------------------------------------------------
def solution_raa():
    setup, solution, _ = _cells("07_stageopt_resource_plans.ipynb")
    ns = {}
    for src in setup + solution:
        exec(src, ns)
    return ns["my_raa_path"]


def test_exercise07_solution_passes():
    out = run_checks("07_stageopt_resource_plans.ipynb")
    assert len(out) == 2 and all("agree" in line for line in out)


def ascending(sets):
    return solution_raa()(sets)[::-1]


def records_every_pop(sets):
    sets = [np.asarray(s, float) for s in sets]
    sets = [s[np.argsort(-s[:, 0])] for s in sets]
    lam = [0] * len(sets)
    heap = [(-s[0, 0], i) for i, s in enumerate(sets)]
    heapq.heapify(heap)
    front = []
    while True:
        q, i = heapq.heappop(heap)
        front.append((max(s[l, 0] for s, l in zip(sets, lam)), sum(s[l, 1] for s, l in zip(sets, lam))))
        lam[i] += 1
        if lam[i] == len(sets[i]):
            return np.array(front)
        heapq.heappush(heap, (-sets[i][lam[i], 0], i))


def unsorted_sets(sets):
    """Walks each set in the order given instead of latency descending."""
    sets = [np.asarray(s, float) for s in sets]
    lam = [0] * len(sets)
    heap = [(-s[0, 0], i) for i, s in enumerate(sets)]
    heapq.heapify(heap)
    front, s_max = [], np.inf
    while True:
        q, i = heapq.heappop(heap)
        if -q < s_max:
            front.append((-q, sum(s[l, 1] for s, l in zip(sets, lam))))
            s_max = -q
        lam[i] += 1
        if lam[i] == len(sets[i]):
            return np.array(front)
        heapq.heappush(heap, (-sets[i][lam[i], 0], i))


def cost_after_the_step(sets):
    sets = [np.asarray(s, float) for s in sets]
    sets = [s[np.argsort(-s[:, 0])] for s in sets]
    lam = [0] * len(sets)
    heap = [(-s[0, 0], i) for i, s in enumerate(sets)]
    heapq.heapify(heap)
    front, s_max = [], np.inf
    while True:
        q, i = heapq.heappop(heap)
        lam[i] += 1
        done = lam[i] == len(sets[i])
        if -q < s_max:
            front.append((-q, sum(s[min(l, len(s) - 1), 1] for s, l in zip(sets, lam))))
            s_max = -q
        if done:
            return np.array(front)
        heapq.heappush(heap, (-sets[i][lam[i], 0], i))


@pytest.mark.parametrize("variant, cause", [
    (ascending, r"case 0: your front is in ascending latency order; RAA Path records it slowest"),
    (records_every_pop, r"case 1: your front has 2 points at stage latency 10 \(\[\[10.0, 2.0\], \[10.0, 3.0\]\]\).*"
                        r"Record a state only when the popped latency is lower"),
    (unsorted_sets, r"case \d+: "),
    (cost_after_the_step, r"case 0: at stage latency 300 your cost is 10, the front's is 9.*recorded before the popped instance steps"),
])
def test_exercise07_misconception_fails_naming_its_cause(variant, cause):
    with pytest.raises(AssertionError) as err:
        run_checks("07_stageopt_resource_plans.ipynb", "my_raa_path", variant)
    assert re.search(cause, str(err.value), re.S), str(err.value)
    assert "differs from" not in str(err.value) or variant is unsorted_sets
