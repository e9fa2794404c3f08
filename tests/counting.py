"""Helpers that count work, for tests that show a cost without a stopwatch (CONTRIBUTING.md: no test asserts on
wall-clock time). A module of its own so that every test directory imports the same one (``tests/`` is on
``sys.path``, as for ``notebook_runs``)."""

from __future__ import annotations

import sys


def calls_made(fn, *args) -> int:
    """Python-level calls (functions of Python code and of C, numpy's included) made by ``fn(*args)``."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return calls


def python_calls(model, end) -> int:
    """Python-level calls made while running ``model`` to ``end``."""
    return calls_made(model.run_until, end)
