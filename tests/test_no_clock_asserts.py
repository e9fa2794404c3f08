"""No test asserts on wall-clock time (CONTRIBUTING.md): a timed assert passes on a quiet machine and
fails on a loaded one (a CI runner, a 2-core laptop running the suite), so it tests the machine.

Tests count work instead (events, vertex runs, calls; see the ``forbid`` fixture in conftest.py for
"refused before anything runs"). Measuring and printing times is fine: the browser tests write redraw
times to their report. This scans every test module: an ``assert`` may not use a clock reading, a
name computed from one, or a function that returns one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: functions of the ``time`` module that read a clock
CLOCKS = {"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
          "process_time_ns", "thread_time", "thread_time_ns"}


def _reads_clock(node: ast.AST, clock_names: set[str], tainted: set[str], clock_functions: set[str]) -> bool:
    """Whether ``node`` calls a clock, or uses a name or calls a function that carries a clock reading."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Attribute) and f.attr in CLOCKS and isinstance(f.value, ast.Name) and f.value.id == "time":
                return True
            if isinstance(f, ast.Name) and (f.id in clock_names or f.id in clock_functions):
                return True
            if isinstance(f, ast.Attribute) and f.attr in clock_functions:
                return True
        if isinstance(sub, ast.Name) and sub.id in tainted:
            return True
    return False


def _targets(node: ast.AST) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def timed_asserts(source: str, label: str = "<source>") -> list[str]:
    """``label:line`` of every assert that compares a clock reading (directly or through names)."""
    tree = ast.parse(source)
    clock_names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "time"
                   for a in n.names if a.name in CLOCKS}
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    scopes = [tree, *functions]
    tainted: dict[int, set[str]] = {id(s): set() for s in scopes}
    clock_functions: set[str] = set()
    changed = True
    while changed:  # names assigned from clock readings, and functions returning them, until nothing new
        changed = False
        for scope in scopes:
            names = tainted[id(scope)]
            for node in ast.walk(scope):
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                    if _reads_clock(node.value, clock_names, names, clock_functions) and not _targets(node) <= names:
                        names |= _targets(node)
                        changed = True
                if (scope is not tree and isinstance(node, ast.Return) and node.value is not None
                        and scope.name not in clock_functions
                        and _reads_clock(node.value, clock_names, names, clock_functions)):
                    clock_functions.add(scope.name)
                    changed = True
    found = []
    for scope in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Assert) and _reads_clock(node.test, clock_names, tainted[id(scope)], clock_functions):
                found.append(f"{label}:{node.lineno}")
    return sorted(set(found))


@pytest.mark.parametrize("source", [
    "import time\ndef test():\n    t0 = time.perf_counter()\n    work()\n    assert time.perf_counter() - t0 < 1.0\n",
    "import time\ndef test():\n    t0 = time.time()\n    work()\n    measured = time.time() - t0\n    assert measured < 3 * estimate\n",
    "from time import monotonic as now\ndef test():\n    start = now()\n    work()\n    assert now() - start < 1\n",
    "import time\ndef run_all():\n    t0 = time.perf_counter()\n    return time.perf_counter() - t0\n"
    "def test():\n    assert run_all() < 60\n",
])
def test_the_scan_finds_an_assert_on_the_clock(source):
    assert timed_asserts(source), source


def test_the_scan_lets_a_test_measure_and_print_times():
    source = ("import time\ndef test():\n    t0 = time.perf_counter()\n    n = work()\n"
              "    print(f'{time.perf_counter() - t0:.1f} s')\n    assert n == 3\n    assert len(events) == n\n")
    assert timed_asserts(source) == []


def test_no_test_asserts_on_wall_clock_time():
    found = [hit for p in sorted(TESTS.rglob("*.py")) for hit in timed_asserts(p.read_text(), str(p.relative_to(TESTS)))]
    assert not found, ("these asserts compare wall-clock time (they fail on a loaded machine); count the work "
                       "instead, or show that nothing ran with the forbid fixture:\n" + "\n".join(found))
