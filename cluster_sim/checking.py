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

A check grades the student's code, not the library's: while the student's function runs, the
reference functions it is meant to replace are *forbidden* (``forbid=``; :func:`check_cases`
forbids its reference). Entering one of them, by any path (an import, an alias, a registry, a
library helper that calls it), fails the check with :data:`DELEGATED`'s message; the reference
answers are computed outside the student's call. The trap is :mod:`sys.monitoring` on the
forbidden functions' code objects only, so nothing else runs slower and the library's own use of
its references outside the student's call is untouched.

A copy is not the student's code either: a function whose code is the reference's, pasted into the notebook
(renamed, its local names changed, its docstring and comments dropped), fails with :data:`COPIED`'s message
before it runs (:func:`copied_from`: the bytecode compared instruction by instruction, local names and jump
targets normalised), and so does a student function that calls such a copy. A reference too short to tell a
copy from an answer written independently (under :data:`MIN_COPY_INSTRUCTIONS`) is not compared.

A check grades one function: where the student's function calls the student's answers to *other*
exercises (``J`` calls ``debt_table``), ``using=`` hands it the library's versions of those for the
duration of the call (:func:`using_references`), so one mistake costs one check.

Example
-------
>>> check_cases(lambda x: 2 * x, lambda x: x + x, [((1,), {}), ((5,), {})], name="double")
'double: all 2 cases agree with the reference'
>>> def twice(x):
...     return x + x
>>> check_cases(lambda x: twice(x), twice, [((1,), {})], name="double")
Traceback (most recent call last):
...
cluster_sim.checking.Delegated: double calls the library's ...twice, the reference this check compares it with: ...
"""

from __future__ import annotations

import dis
import functools
import inspect
import sys
from collections import Counter
from contextlib import contextmanager
from types import CodeType
from typing import Any, Callable, Iterable, Mapping

import numpy as np

__all__ = ["COPIED", "CheckFailed", "Copied", "DELEGATED", "Delegated", "NOT_IMPLEMENTED", "call_student", "case",
           "check_cases", "copied_from", "forbidden", "install", "name_case", "show_case", "using_references"]

NOT_IMPLEMENTED = "is not implemented yet: replace nbgrader's stub (the line raising NotImplementedError) with your code"
#: the tail of the message of a check whose student code called a forbidden reference
DELEGATED = ("this check grades your own code, so the library's version is unavailable while yours runs: "
             "write it yourself (numpy, pandas and the helpers the exercise names are fine)")


class CheckFailed(AssertionError):
    """An exercise check that failed; its message is all a student needs (see :func:`install`)."""


#: the tail of the message of a check whose student code is a copy of a forbidden reference
COPIED = ("the same code up to names, comments and docstrings. This check grades code you wrote: write it "
          "yourself (reading the library to understand it is fine; pasting it is not an answer)")
#: references shorter than this (instructions, once normalised) are not compared: a one-line answer written
#: independently can be the library's line
MIN_COPY_INSTRUCTIONS = 40


class Delegated(CheckFailed):
    """The student's code called a reference it is meant to replace (nbgrader scores the check 0)."""


class Copied(Delegated):
    """The student's function is the reference's code pasted into the notebook (nbgrader scores the check 0)."""


def _codes(fn: Callable) -> list[CodeType]:
    """The code objects that run when ``fn`` is called (through ``functools.wraps`` layers and ``partial``)."""
    if inspect.isclass(fn):  # a class the student could drive instead: every method it defines
        return [code for member in vars(fn).values() if inspect.isfunction(member) for code in _codes(member)]
    out = []
    while True:
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        code = getattr(fn, "__code__", None)
        if code is None and callable(fn):
            code = getattr(getattr(fn, "__call__", None), "__code__", None)
        if code is None:
            raise ValueError(f"forbid: {fn!r} has no Python code to forbid; allowed: Python functions and "
                             "classes (the library's references)")
        out.append(code)
        if not hasattr(fn, "__wrapped__"):
            return out
        fn = fn.__wrapped__


class _Trap:
    """One :mod:`sys.monitoring` tool whose ``PY_START`` callback fails a call of a forbidden code object.

    Forbidding nests (a check inside a check's student call): each code object is counted, and its events
    are switched off when the last forbidding scope that named it ends.
    """

    def __init__(self):
        self.tool: int | None = None
        self.active: Counter = Counter()
        self.names: dict[CodeType, str] = {}
        self.student: list[str] = []   # the innermost student call's name is last
        self.hits: list[str] = []

    def _claim(self) -> int:
        if self.tool is None:
            mon = sys.monitoring
            free = [i for i in (3, 4) if mon.get_tool(i) is None]  # 0-2 and 5 are the debugger's, coverage's,
            if not free:                                            # profiler's and optimizer's by convention
                raise RuntimeError("cluster_sim.checking: no free sys.monitoring tool id (3 and 4 are taken)")
            self.tool = free[0]
            mon.use_tool_id(self.tool, "cluster_sim.checking")
            mon.register_callback(self.tool, mon.events.PY_START, self._entered)
        return self.tool

    def _entered(self, code: CodeType, offset: int):
        # events are on for a code object only while a scope forbids it (switched off as the last one ends)
        who = self.student[-1] if self.student else "your function"
        self.hits.append(self.names[code])
        raise Delegated(f"{who} calls the library's {self.names[code]}, the reference this check compares it "
                        f"with: {DELEGATED}")

    @contextmanager
    def forbidding(self, refs: Iterable[tuple[CodeType, str]], student: str):
        refs = list(refs)
        if not refs:  # nothing to forbid: no tool claimed
            yield
            return
        tool = self._claim()
        mon = sys.monitoring
        for code, name in refs:
            self.active[code] += 1
            self.names[code] = name
            mon.set_local_events(tool, code, mon.events.PY_START)
        self.student.append(student)
        hits_before = len(self.hits)
        try:
            yield
        except Delegated:
            del self.hits[hits_before:]  # reported by the exception on its way out: not a hidden call
            raise
        finally:
            self.student.pop()
            for code, _ in refs:
                self.active[code] -= 1
                if self.active[code] <= 0:
                    del self.active[code]
                    mon.set_local_events(tool, code, 0)
        if len(self.hits) > hits_before:  # the student's code caught our failure and carried on: it still fails
            raise Delegated(f"{student} calls the library's {self.hits[hits_before]}, the reference this check "
                            f"compares it with: {DELEGATED}")


_TRAP = _Trap()


# -- a pasted reference ---------------------------------------------------------------------------------------------

_SKIPPED_OPS = {"RESUME", "NOP", "CACHE", "EXTENDED_ARG"}
_fingerprints: dict[CodeType, tuple] = {}


def _fingerprint(code: CodeType) -> tuple:
    """``code``'s instructions with what a paste changes normalised away: local and free variable names become their
    order of first use, jump targets the index of the instruction they land on, nested code objects (generator
    expressions, inner functions) their own fingerprint; the docstring, the comments, the line numbers and the
    function's name are not instructions. What stays: the operations, the constants, the global and attribute names."""
    if code in _fingerprints:
        return _fingerprints[code]
    instructions = [i for i in dis.get_instructions(code) if i.opname not in _SKIPPED_OPS]
    index = {i.offset: n for n, i in enumerate(instructions)}
    offsets = sorted(index)
    local: dict[str, int] = {}
    out = []
    for i in instructions:
        if i.opcode in dis.haslocal or i.opcode in dis.hasfree:
            names = i.argval if isinstance(i.argval, tuple) else (i.argval,)   # LOAD_FAST_LOAD_FAST holds two
            arg = tuple(local.setdefault(n, len(local)) for n in names)
        elif i.opcode in dis.hasjrel or i.opcode in dis.hasjabs:
            landing = next((o for o in offsets if o >= i.argval), None)
            arg = index.get(landing, -1)
        elif isinstance(i.argval, CodeType):
            arg = _fingerprint(i.argval)
        else:
            arg = repr(i.argval)
        out.append((i.opname, arg))
    _fingerprints[code] = tuple(out)
    return _fingerprints[code]


def _student_functions(fn: Callable) -> list[Callable]:
    """``fn`` and the functions of its own module (a notebook's) that it calls by name, and they in turn."""
    fn = fn.func if isinstance(fn, functools.partial) else fn
    module, ns = getattr(fn, "__module__", None), getattr(fn, "__globals__", None) or {}
    found, todo = [], [fn]
    while todo:
        f = todo.pop()
        code = getattr(f, "__code__", None)
        if code is None or any(f is g for g in found):
            continue
        found.append(f)
        names, codes = set(), [code]
        while codes:
            c = codes.pop()
            names |= set(c.co_names)
            codes += [k for k in c.co_consts if isinstance(k, CodeType)]
        todo += [ns[n] for n in sorted(names) if inspect.isfunction(ns.get(n)) and ns[n].__module__ == module]
    return found


def copied_from(student: Callable, references: Iterable[Callable]) -> tuple[str, str] | None:
    """``(student function, reference)`` names if ``student``, or a function of its module it calls, is a copy of one
    of ``references`` (the same :func:`_fingerprint`, not the same code object: the reference itself is a delegation,
    which :func:`forbidden` reports); else None.

    >>> def ref(xs):
    ...     \"\"\"The library's.\"\"\"
    ...     total = 0
    ...     for x in xs:
    ...         if x > 0:
    ...             total += x * x
    ...         else:
    ...             total -= abs(x) // 2 + len(xs) - min(xs) * max(xs) + sum(xs) % 7 + sorted(xs)[0]
    ...     return total if total > 0 else -total
    >>> def mine(values):            # pasted and renamed
    ...     acc = 0
    ...     for v in values:
    ...         if v > 0:
    ...             acc += v * v
    ...         else:
    ...             acc -= abs(v) // 2 + len(values) - min(values) * max(values) + sum(values) % 7 + sorted(values)[0]
    ...     return acc if acc > 0 else -acc
    >>> copied_from(mine, [ref])
    ('mine', '...ref')
    >>> copied_from(ref, [ref]) is None          # the reference itself: a call, not a copy
    True
    """
    refs = [(code, _label(ref)) for ref in references for code in _codes(ref)]
    prints = {_fingerprint(code): name for code, name in refs if len(_fingerprint(code)) >= MIN_COPY_INSTRUCTIONS}
    if not prints:
        return None
    ref_codes = {code for code, _ in refs}
    for f in _student_functions(student):
        if f.__code__ in ref_codes:
            continue
        name = prints.get(_fingerprint(f.__code__))
        if name is not None:
            return getattr(f, "__name__", "your function"), name
    return None


def _label(fn: Callable) -> str:
    fn = fn.func if isinstance(fn, functools.partial) else fn
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    return f"{module}.{name}" if module.startswith("cluster_sim") else name


@contextmanager
def forbidden(*references: Callable, student: str = "your function", code: Callable | None = None):
    """While the block runs, calling any of ``references`` (by any path) fails with :class:`Delegated`.

    ``code``: the student's function; if it (or a function of its notebook it calls) is a copy of one of
    ``references`` (:func:`copied_from`), the block does not run and :class:`Copied` says so.

    >>> def reference(x):
    ...     return 2 * x
    >>> with forbidden(reference, student="double"):
    ...     reference(1)
    Traceback (most recent call last):
    ...
    cluster_sim.checking.Delegated: double calls the library's ...reference, the reference this check compares it with: ...
    >>> reference(1)   # allowed again outside the block
    2
    """
    if code is not None and (copy := copied_from(code, references)) is not None:
        fn_name, ref_name = copy
        where = "" if fn_name == student else f" (through {fn_name}, which it calls)"
        raise Copied(f"{student}{where} is a copy of the library's {ref_name}, the reference this check compares it "
                     f"with: {COPIED}")
    refs = [(c, _label(fn)) for fn in references for c in _codes(fn)]
    with _TRAP.forbidding(refs, student):
        yield


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


@contextmanager
def using_references(student: Callable, references: Mapping[str, Callable] | None):
    """While the block runs, each name of ``references`` in the namespace ``student`` was defined in (a
    notebook's globals) is the library's function: the student's other answers are out of this check.

    >>> def twice(x):
    ...     return 3 * x                       # another exercise's (wrong) answer
    >>> def quadruple(x):
    ...     return twice(twice(x))
    >>> with using_references(quadruple, {"twice": lambda x: x + x}):
    ...     quadruple(1)
    4
    >>> quadruple(1)                           # the student's own again
    9
    """
    ns = getattr(student, "__globals__", None)
    if not references or ns is None:
        yield
        return
    for name, ref in references.items():
        if not callable(ref):
            raise ValueError(f"using_references: {name}={ref!r}; allowed: a function (the library's version)")
    missing = object()
    saved = {name: ns.get(name, missing) for name in references}
    ns.update({name: ref for name, ref in references.items() if saved[name] is not missing})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is not missing:
                ns[name] = value


def call_student(fn: Callable, *args: Any, name: str | None = None, forbid: Callable | Iterable[Callable] = (),
                 using: Mapping[str, Callable] | None = None, **kwargs: Any) -> Any:
    """Call the student's function, turning nbgrader's stub into a clear AssertionError.

    ``forbid``: the library reference(s) the student's function is meant to replace; calling one while it
    runs fails with :class:`Delegated` (see :func:`forbidden`). ``using``: the student's other exercise
    functions, by name, replaced by the library's for the call (see :func:`using_references`).
    """
    label = name or getattr(fn, "__name__", "your function")
    refs = [forbid] if callable(forbid) else list(forbid)
    try:
        with using_references(fn, using), forbidden(*refs, student=label, code=fn):
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
    forbid: Iterable[Callable] = (),
    using: Mapping[str, Callable] | None = None,
) -> str:
    """Run ``student`` and ``reference`` on each ``(args, kwargs)`` case; fail on the first mismatch.

    ``reference`` (and ``forbid``, for other functions that would do the student's work) cannot be called
    by the student's code while it runs; ``using`` replaces the student's other exercise functions (see
    :func:`call_student`).

    ``describe(args, kwargs)`` renders a case for the message (default: ``repr`` of the arguments).
    Returns a one-line summary when every case agrees, so a check cell shows what it verified.
    """
    label = name or getattr(student, "__name__", "your function")
    n = 0
    for i, (args, kwargs) in enumerate(cases):
        want = reference(*args, **kwargs)
        got = call_student(student, *args, name=label, forbid=[reference, *forbid], using=using, **kwargs)
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
