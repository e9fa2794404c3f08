"""One run started ahead on the second core, for a cell that needs its whole result (a figure's series), not only
the scalar metrics :func:`cluster_sim.sweep.start_ahead` puts in the sweep cache.

A notebook at ``paper`` whose static figure is drawn from a long run that needs nothing from the cells before it
(Labs 08 and 09: a paper-scale run at the end, minutes on one core while the other idles) starts that run in its
setup cell with :func:`start_run_ahead`; the figure's cell then takes it with :meth:`RunAhead.result`. The run goes
to a separate process (spawned, so it shares nothing with the kernel but the config and the run function, both
pickled) and comes back pickled: a run is seeded and does not depend on where it runs, so the result is the one
``run(config)`` gives here, field for field.

Nothing starts where :func:`~cluster_sim.sweep.start_ahead` would start nothing either: without a sweep cache, with
``$CLUSTER_SIM_SWEEP_CLIENT`` or ``$DASK_SCHEDULER_ADDRESS`` set (the test suite keeps its notebooks in one
process), on one core, or when the run is estimated at ``AUTO_PARALLEL_SECONDS`` or less (the ``ci`` and
``default`` presets). Then :meth:`RunAhead.result` runs ``run(config)`` here, when the cell asks, as the cell did
before. A run that fails ahead (the process cannot start, dies, or the run raises) is said, and computed here
instead (which raises again if the run itself is at fault).

>>> from cluster_sim.rminer import RMinerConfig, run
>>> ahead = start_run_ahead(run, RMinerConfig.ci().replace(horizon=5.0), estimate=lambda c: c.work().seconds)
>>> ahead.started  # seconds of work at ci: nothing starts, result() runs it here
False
>>> ahead.result().config.horizon
5.0
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable

from .. import progress
from . import clients
from .cache import cache_dir

__all__ = ["RunAhead", "start_run_ahead"]


def _run_and_send(run: Callable, config, conn) -> None:
    """The worker process: ``run(config)`` (no bars: nobody sees this process's output), sent back pickled, or the
    error it raised."""
    try:
        with progress.quiet():
            result = run(config)
        conn.send(("ok", result))
    except BaseException as err:  # said by the kernel, which computes the run itself
        conn.send(("error", f"{type(err).__name__}: {err}"))
    finally:
        conn.close()


class RunAhead:
    """``run(config)``, started ahead on another core (``started``) or to be run here when :meth:`result` is asked."""

    def __init__(self, run: Callable, config, *, process=None, conn=None, seconds: float = 0.0):
        self.run, self.config, self.seconds = run, config, seconds
        self._process, self._conn = process, conn
        self._result = None

    @property
    def started(self) -> bool:
        """Whether the run was started in another process (False: :meth:`result` runs it here)."""
        return self._process is not None

    def result(self):
        """The run's result: the one the process ahead computed (waiting for it if it is still running), else
        ``run(config)`` computed here. Asked again, the same object."""
        if self._result is None:
            self._result = self._take() if self.started else self.run(self.config)
        return self._result

    def _take(self):
        t0 = time.perf_counter()
        try:
            status, value = self._conn.recv()
        except Exception as err:  # the process died (killed, out of memory) before it sent all of it
            status, value = "error", f"the process ended without a result ({type(err).__name__}, exit code " \
                                     f"{self._process.exitcode})"
        finally:
            self._conn.close()
            self._process.join()  # reaped: its CPU time counts as this process's children's
        if status == "ok":
            waited = time.perf_counter() - t0
            print(f"the run started ahead (~{self.seconds:.0f} s estimated) on the second core: taken"
                  + (f" after waiting {waited:.0f} s for it" if waited >= 1 else ""), flush=True)
            return value
        print(f"start_run_ahead: the run ahead failed ({value}); computing it here instead", flush=True)
        return self.run(self.config)

    def cancel(self) -> None:
        """End the process ahead if its result was not taken (nothing else would read it)."""
        if self.started and self._result is None and self._process.is_alive():
            self._process.terminate()
            self._process.join()
        if self._conn is not None:
            self._conn.close()

    def __del__(self):
        # a setup cell run again replaces its RunAhead: the old run must not hold a core (and its memory) for nothing
        try:
            self.cancel()
        except Exception:  # at interpreter exit multiprocessing may be half gone; its daemons are ended anyway
            pass

    def __repr__(self) -> str:
        if not self.started:
            return f"RunAhead({self.config!r}, not started: runs here when asked)"
        state = "taken" if self._result is not None else ("running" if self._process.is_alive() else "done")
        return f"RunAhead(~{self.seconds:.0f} s estimated, {state})"


def start_run_ahead(run: Callable, config, *, estimate: Callable, cache=None) -> RunAhead:
    """Start ``run(config)`` now in a process of its own (the second core) and return its :class:`RunAhead`, whose
    ``result()`` a later cell takes; or, where nothing is worth starting (see the module docstring; ``estimate`` is
    ``config -> seconds``, ``cache`` the sweep cache ``run_grid`` would use), a :class:`RunAhead` that runs it here
    when asked. ``run`` must be importable by name (a module's function, not one defined in a notebook)."""
    if not callable(run) or not callable(estimate):
        raise ValueError(f"run={run!r}, estimate={estimate!r} are not allowed: give callables (config -> result, "
                         "config -> seconds)")
    seconds = float(estimate(config))
    if clients.starts_nothing_ahead(cache_dir(cache), seconds):
        return RunAhead(run, config, seconds=seconds)
    try:
        ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: a forked kernel's threads would not come
        receive, send = ctx.Pipe(duplex=False)
        # daemonic: terminated at exit if the notebook never takes it (it failed before the cell that would)
        process = ctx.Process(target=_run_and_send, args=(run, config, send), name="run ahead", daemon=True)
        # the process starts with the sweep workers' malloc settings (a spawned interpreter reads them at start)
        with clients.malloc_environ():
            process.start()
        send.close()  # the child holds its end: the parent sees EOF if the child dies
    except Exception as err:  # said; the cell computes the run itself
        print(f"start_run_ahead: could not start the run ahead ({type(err).__name__}: {err}); its cell computes it "
              "here instead", flush=True)
        return RunAhead(run, config, seconds=seconds)
    print(f"start_run_ahead: a run estimated at ~{seconds:.0f} s starts now in a process of its own (the second "
          "core); the cell that needs it takes its result", flush=True)
    return RunAhead(run, config, process=process, conn=receive, seconds=seconds)
