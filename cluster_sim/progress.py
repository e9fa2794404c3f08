"""Progress for anything that takes more than a few seconds: sweeps and long single runs.

A bar that is drawn for a two-second run is noise (and, in a headless notebook run, a widget that
can stall the kernel), so bars here are *lazy*: a :class:`LazyBar` opens only once the pace so far
says that what is left takes more than ``PROGRESS_AFTER_SECONDS``. A run that can size itself before
it starts (the engine knows every task it will simulate) prints that estimate first, when it is
over ``ESTIMATE_AFTER_SECONDS``, so a student knows before waiting whether to wait.

* :func:`advance` runs a simulation to an end time in slices of simulated time, with a bar in
  simulated seconds when the run's estimate or its elapsed time is over the threshold (what
  ``ClusterModel.run_until`` does; the slices change nothing: Mesa runs the same events in the same
  order, see its docstring);
* :func:`track` wraps a loop (the stages of Labs 06-07's studies) with a lazy bar;
* :func:`announce` prints a run's estimate before it starts;
* :func:`quiet` turns all three off inside it: a sweep point (the sweep draws its own bar) or a
  panel's redraw (the panel shows its own busy state).

``$CLUSTER_SIM_PROGRESS`` chooses the bar: ``auto`` (tqdm's notebook widget in JupyterLab, text in a
terminal), ``text`` (plain text everywhere: what the headless notebook tests and ``make reproduce``
set) or ``off`` (no bars and no estimates).

>>> with quiet():
...     [x * x for x in track(range(3), desc="squares")]
[0, 1, 4]
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Callable, Iterable, Iterator

__all__ = ["LazyBar", "advance", "track", "announce", "quiet", "style", "PROGRESS_AFTER_SECONDS",
           "ESTIMATE_AFTER_SECONDS", "STYLES"]

#: a bar opens once what is left is estimated above this
PROGRESS_AFTER_SECONDS = 5.0
#: a run estimated above this prints its estimate before it starts
ESTIMATE_AFTER_SECONDS = 10.0
#: ``$CLUSTER_SIM_PROGRESS``: a notebook-aware bar, a plain text bar (headless runs: no widget), none
STYLES = ("auto", "text", "off")
#: a simulation is advanced in this many slices of simulated time (each a ``run_until``)
SLICES = 200

_quiet = contextvars.ContextVar("cluster_sim_progress_quiet", default=False)


def style() -> str:
    """The bar style ``$CLUSTER_SIM_PROGRESS`` asks for; a ``ValueError`` for anything else."""
    value = os.environ.get("CLUSTER_SIM_PROGRESS", "auto")
    if value not in STYLES:
        raise ValueError(f"CLUSTER_SIM_PROGRESS={value!r} is not allowed: choose one of "
                         f"{', '.join(map(repr, STYLES))}")
    return value


def _silent() -> bool:
    return _quiet.get() or style() == "off"


@contextlib.contextmanager
def quiet():
    """No bars and no estimates inside (a sweep point, a panel redraw)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def announce(seconds: float, what: str) -> bool:
    """Print ``what`` and the estimated wall time if it is over ``ESTIMATE_AFTER_SECONDS``
    (and not :func:`quiet`); True if printed."""
    if seconds <= ESTIMATE_AFTER_SECONDS or _silent():
        return False
    print(f"{what}: roughly {_duration(seconds)} on a 2-core machine; a progress bar follows "
          "(CLUSTER_SIM_PROGRESS=off hides both)", flush=True)
    return True


class LazyBar:
    """A tqdm bar over ``total`` units that opens itself once the pace so far says the rest takes
    more than ``after`` seconds, or once it has run that long (``show=True``: at once; ``show=False``
    or :func:`quiet`: never). ``extrapolate=False`` waits for the elapsed time alone: for units whose
    cost is uneven (a simulated second of a busy period costs far more than one of a quiet tail), a
    slow first unit would otherwise open a bar over a run that ends a moment later."""

    def __init__(self, total: float, *, desc: str, unit: str, done: float = 0, show: bool | None = None,
                 after: float | None = None, extrapolate: bool = True):
        self.total, self.desc, self.unit, self.done = total, desc, unit, done
        self.show = False if _silent() else show
        self.extrapolate = extrapolate
        self.after = PROGRESS_AFTER_SECONDS if after is None else after
        self.start, self.computed, self.bar = time.perf_counter(), 0, None
        if self.show is True:
            self._open()

    def _open(self) -> None:
        if self.bar is not None or not self.total:
            return
        if style() == "text":
            from tqdm import tqdm
        else:
            from tqdm.auto import tqdm
        self.bar = tqdm(total=self.total, initial=self.done, desc=self.desc, unit=self.unit)

    def step(self, amount: float = 1) -> None:
        """``amount`` more units are done."""
        self.done += amount
        self.computed += amount
        if self.bar is None and self.show is None and self.computed > 0:
            elapsed = time.perf_counter() - self.start
            left = elapsed / self.computed * (self.total - self.done) if self.extrapolate else 0.0
            if elapsed > self.after or left > self.after:
                self._open()  # opens at self.done: this step is counted
                return
        if self.bar is not None:
            self.bar.update(amount)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def advance(run_until: Callable[[float], None], start: float, end: float, *, desc: str,
            estimate: float | None = None) -> None:
    """``run_until(end)``, in ``SLICES`` slices of simulated time with a bar: at once if the run's
    ``estimate`` (seconds) is over ``PROGRESS_AFTER_SECONDS``, else once it has run that long.

    The slices change no result: Mesa's ``run_until(t)`` executes every event due by ``t`` in order
    and then sets the clock to ``t``; nothing runs between two slices, so the events, their order and
    the times they see are those of one ``run_until(end)``."""
    span = end - start
    if span <= 0 or _silent():
        run_until(end)
        return
    long = estimate is not None and estimate > PROGRESS_AFTER_SECONDS
    bar = LazyBar(span, desc=desc, unit="sim s", show=True if long else None, extrapolate=False)
    try:
        now = start
        for k in range(1, SLICES + 1):
            t = end if k == SLICES else start + span * k / SLICES
            if t <= now:
                continue
            run_until(t)
            bar.step(t - now)
            now = t
    finally:
        bar.close()


def track(iterable: Iterable, *, desc: str, total: int | None = None, unit: str = "it") -> Iterator:
    """The items of ``iterable``, with a lazy bar (``total`` defaults to ``len(iterable)``)."""
    if total is None:
        total = len(iterable)  # type: ignore[arg-type]
    bar = LazyBar(total, desc=desc, unit=unit)
    try:
        for item in iterable:
            yield item
            bar.step()
    finally:
        bar.close()
