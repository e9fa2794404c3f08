"""Remembered results that their readers cannot change: :func:`remembered`, :class:`ReadOnlyDict`.

A lab remembers what is slow to compute and asked for again (a run a notebook's tables pool, a
history a panel redraws from, a trained model). ``functools.lru_cache`` alone hands every caller the
*same* object, so a reader who edits what it got (``result.runs["violated"] = False``, a row dropped
from a history's table) silently changes every later answer for that input. :func:`remembered` is
``lru_cache`` with a deep copy on the way out: each caller gets its own copy, the remembered value
stays as it was computed. Copying a lab's result costs about 1% of computing it (measured: 2-15 ms
against 0.3-5 s for the caches in this package).

>>> @remembered(maxsize=4)
... def table(n):
...     return {"rows": list(range(n))}
>>> t = table(3)
>>> t["rows"].clear()
>>> table(3), table.cache_info().hits
({'rows': [0, 1, 2]}, 1)

A value too large to copy at every read (a paper day's resource plans: 2 s to copy, read by every run of the day) is
made read-only by the function that makes it instead, and shared: ``remembered(maxsize, read_only=True)`` checks
once, when it is computed, that nothing in it can be changed (:func:`check_read_only`: arrays not writeable,
mappings :class:`ReadOnlyDict`, dataclasses frozen, tuples), and hands every caller the same object.

>>> @remembered(maxsize=4, read_only=True)
... def counts(n):
...     return ReadOnlyDict(n=n)
>>> counts(3)["n"] = 4
Traceback (most recent call last):
...
TypeError: this ReadOnlyDict is read-only: it is a remembered result every caller shares; change a copy (dict(...))
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import numbers
from collections.abc import Callable

import numpy as np

__all__ = ["ReadOnlyDict", "check_read_only", "remembered"]


class ReadOnlyDict(dict):
    """A dict whose readers cannot change it: a remembered value every caller shares. It pickles and copies as
    itself."""

    def _refuse(self, *args, **kwargs):
        raise TypeError(f"this {type(self).__name__} is read-only: it is a remembered result every caller shares; "
                        "change a copy (dict(...))")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return type(self), (dict(self),)


def check_read_only(value, where: str = "the value") -> None:
    """A ``TypeError`` naming the first part of ``value`` a reader could change (a writeable array, a dict, a list,
    a dataclass that is not frozen, an object of a kind not known to be read-only); None if there is none."""
    if value is None or isinstance(value, (str, bytes, numbers.Number, np.generic)):
        return
    if isinstance(value, np.ndarray):
        if value.flags.writeable or value.dtype == object:
            raise TypeError(f"{where} is a writeable array: make it read-only (setflags(write=False))")
    elif isinstance(value, ReadOnlyDict):
        for k, v in value.items():
            check_read_only(k, f"{where}'s key {k!r}")
            check_read_only(v, f"{where}[{k!r}]")
    elif type(value) in (tuple, frozenset):
        for i, v in enumerate(value):
            check_read_only(v, f"{where}[{i}]")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not type(value).__dataclass_params__.frozen:
            raise TypeError(f"{where} is a {type(value).__name__}, a dataclass that is not frozen")
        for f in dataclasses.fields(value):
            check_read_only(getattr(value, f.name), f"{where}.{f.name}")
    else:
        raise TypeError(f"{where} is a {type(value).__name__}: not known to be read-only (give arrays that are "
                        "not writeable, ReadOnlyDict, tuples, frozen dataclasses)")


def remembered(maxsize: int, *, read_only: bool = False) -> Callable[[Callable], Callable]:
    """``functools.lru_cache(maxsize)`` whose callers each get a deep copy of the remembered value; or, with
    ``read_only=True``, the value itself, which the function made read-only (checked once, when it is computed:
    :func:`check_read_only`).

    The wrapper keeps ``cache_info`` and ``cache_clear``; it pickles by reference like any module-level
    function (sweeps may send it to Dask workers)."""

    def decorate(fn: Callable) -> Callable:
        if read_only:
            @functools.wraps(fn)
            def checked(*args, **kwargs):
                value = fn(*args, **kwargs)
                check_read_only(value, f"{fn.__qualname__}'s result")
                return value

            shared = functools.lru_cache(maxsize=maxsize)(checked)
            return shared

        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def copied(*args, **kwargs):
            return copy.deepcopy(cached(*args, **kwargs))

        copied.cache_info = cached.cache_info
        copied.cache_clear = cached.cache_clear
        return copied

    return decorate
