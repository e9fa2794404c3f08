"""Exercise checks that tell a student exactly which case failed and what was expected.

Check cells in ``solutions/`` (and so in the generated ``exercises/``) call :func:`check_cases`
with the student's function, a reference and a list of cases (or a lab's own check, built the same
way). The first case that disagrees raises :class:`CheckFailed` naming the case, the answer and the
expected answer; a function still holding nbgrader's stub (the line that raises
``NotImplementedError``) gets a message that says so.

**One clear message, not a traceback.** A student needs the message (what differs, on which case,
the likely misconception, what to try), not twelve lines of the checker's source. Importing this
module in IPython registers a handler (:func:`install`) that shows a :class:`CheckFailed`, and
its kin :class:`~cluster_sim.claims.ClaimFailed` and :class:`~cluster_sim.predict.PredictionMissed`,
as the message only. The cell still fails as any error does: the kernel answers ``error`` (papermill
stops, a notebook test fails) and the cell holds an error output (nbgrader's autograder scores it 0).

**A case a message names can be looked at.** A check that names a generated case ("random DAG 3")
remembers it with :func:`name_case`, and the message ends with the one line that shows it:
``from cluster_sim.checking import show_case; show_case('random DAG 3')``.

Example
-------
>>> check_cases(lambda x: 2 * x, lambda x: x + x, [((1,), {}), ((5,), {})], name="double")
'double: all 2 cases agree with the reference'
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["CheckFailed", "NOT_IMPLEMENTED", "call_student", "case", "check_cases", "install", "name_case",
           "show_case"]

NOT_IMPLEMENTED = "is not implemented yet: replace nbgrader's stub (the line raising NotImplementedError) with your code"


class CheckFailed(AssertionError):
    """An exercise check that failed; its message is all a student needs (see :func:`install`)."""


# -- one clear message ---------------------------------------------------------------------------------------------

def _message_only(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: the exception's message, without the traceback.

    It shows what ``showtraceback(exception_only=True)`` shows, without its "use %tb" line, through the same
    ``_showtraceback`` (the method a kernel overrides to send the error output): papermill and nbgrader still see
    the cell fail, and its traceback is just ``CheckFailed: message``. ``%tb`` still shows the full one.
    """
    stb = shell.InteractiveTB.get_exception_only(etype, value)
    shell._showtraceback(etype, value, stb)
    return stb


def install(shell=None) -> bool:
    """Show :class:`CheckFailed` and its kin as one message in ``shell`` (default: the running IPython, if any).

    Returns False outside IPython (scripts and pytest see ordinary tracebacks). Called when this module is imported.
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    # AssertionError subclasses raised by checks, claims and graded predictions, all "a message for the student";
    # a plain AssertionError (an ``assert`` in the student's own code, an engine invariant) keeps its traceback
    shell.set_custom_exc((CheckFailed,), _message_only)
    return True


# -- the cases a message names -------------------------------------------------------------------------------------

_named_cases: dict[str, Any] = {}


def name_case(name: str, value: Any) -> str:
    """Remember ``value`` (the inputs of a failing case) under ``name``; return the hint a message ends with."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name_case: name is {name!r}; allowed: a non-empty string such as 'random DAG 3'")
    _named_cases[name] = value
    return f"\n  to look at it: from cluster_sim.checking import show_case; show_case({name!r})"


def case(name: str) -> Any:
    """The inputs of the case a check message named (its own copy, so editing it changes no later check)."""
    import copy

    if name not in _named_cases:
        known = ", ".join(repr(k) for k in _named_cases) or "none yet (run the check cell first)"
        raise ValueError(f"show_case: no case is named {name!r}; the cases checks named: {known}")
    return copy.deepcopy(_named_cases[name])


def show_case(name: str) -> None:
    """Display the case a check message named: each of its inputs under its name (tables as tables)."""
    value = case(name)
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython is a dependency
        display = print
    print(f"{name}:")
    parts = value.items() if isinstance(value, dict) else [("", value)]
    for part, v in parts:
        if part:
            print(f"{part}:")
        display(v)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return bool(np.allclose(a, b, rtol=1e-9, atol=1e-9, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-9, atol=1e-9))
    return a == b


def call_student(fn: Callable, *args: Any, name: str | None = None, **kwargs: Any) -> Any:
    """Call the student's function, turning nbgrader's stub into a clear :class:`CheckFailed`."""
    label = name or getattr(fn, "__name__", "your function")
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise CheckFailed(f"{label} {NOT_IMPLEMENTED}") from None


def check_cases(
    student: Callable,
    reference: Callable,
    cases: Iterable[tuple[tuple, dict]],
    *,
    name: str | None = None,
    same: Callable[[Any, Any], bool] = _same,
    describe: Callable[[tuple, dict], str] | None = None,
) -> str:
    """Run ``student`` and ``reference`` on each ``(args, kwargs)`` case; fail on the first mismatch.

    ``describe(args, kwargs)`` renders a case for the message (default: ``repr`` of the arguments).
    Returns a one-line summary when every case agrees, so a check cell shows what it verified.
    """
    label = name or getattr(student, "__name__", "your function")
    n = 0
    for i, (args, kwargs) in enumerate(cases):
        got = call_student(student, *args, name=label, **kwargs)
        want = reference(*args, **kwargs)
        n += 1
        if not same(got, want):
            shown = describe(args, kwargs) if describe else ", ".join(
                [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
            )
            raise CheckFailed(
                f"{label}: case {i} disagrees with the reference.\n"
                f"  input:    {shown}\n  yours:    {got!r}\n  expected: {want!r}"
            )
    return f"{label}: all {n} cases agree with the reference"


install()
