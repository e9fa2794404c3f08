"""Exercise checks that tell a student exactly which case failed and what was expected.

Check cells in ``solutions/`` (and so in the generated ``exercises/``) call :func:`check_cases`
with the student's function, a reference and a list of cases. The first case that disagrees
raises an ``AssertionError`` naming the case, the answer and the expected answer; a function
still holding nbgrader's stub (the line that raises ``NotImplementedError``) gets a message that
says so.

Example
-------
>>> check_cases(lambda x: 2 * x, lambda x: x + x, [((1,), {}), ((5,), {})], name="double")
'double: all 2 cases agree with the reference'
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

NOT_IMPLEMENTED = "is not implemented yet: replace nbgrader's stub (the line raising NotImplementedError) with your code"


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
    """Call the student's function, turning nbgrader's stub into a clear AssertionError."""
    label = name or getattr(fn, "__name__", "your function")
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise AssertionError(f"{label} {NOT_IMPLEMENTED}") from None


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
            raise AssertionError(
                f"{label}: case {i} disagrees with the reference.\n"
                f"  input:    {shown}\n  yours:    {got!r}\n  expected: {want!r}"
            )
    return f"{label}: all {n} cases agree with the reference"
