"""Remembered results that their readers cannot change: :func:`remembered`.

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
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable

__all__ = ["remembered"]


def remembered(maxsize: int) -> Callable[[Callable], Callable]:
    """``functools.lru_cache(maxsize)`` whose callers each get a deep copy of the remembered value.

    The wrapper keeps ``cache_info`` and ``cache_clear``; it pickles by reference like any module-level
    function (sweeps may send it to Dask workers)."""

    def decorate(fn: Callable) -> Callable:
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def copied(*args, **kwargs):
            return copy.deepcopy(cached(*args, **kwargs))

        copied.cache_info = cached.cache_info
        copied.cache_clear = cached.cache_clear
        return copied

    return decorate
