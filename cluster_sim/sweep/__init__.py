"""One sweep runner for every lab: a grid of configs × seeds → a tidy pandas frame.

:func:`run_grid` runs ``run(config)`` for every point of a grid and every seed, and returns one
row per (point, seed): the grid's fields and the seed first, then the result's metrics, then the
config's other fields. Configs are the labs' frozen dataclasses (``base_config.replace(**point)``),
so every point is validated before anything runs: a bad grid field or value is refused up front
with a ``ValueError`` naming the point.

>>> from cluster_sim.engine import ClusterConfig, run
>>> base = ClusterConfig.ci().replace(horizon=20.0)
>>> df = run_grid(run, base, {"schedulers": [1, 2]}, seeds=2, client="inprocess", cache=False,
...               progress=False)
>>> df[["schedulers", "seed"]].values.tolist()
[[1, 0], [1, 1], [2, 0], [2, 1]]
>>> bool((df["utilisation"] > 0).all())
True

**Metrics protocol.** A row holds the scalar metrics of the result, found in this order:

1. ``metrics=`` given to :func:`run_grid`: a callable ``result -> dict`` of scalars (module-level
   or defined in a notebook; it runs where ``run`` runs, so only the small dict travels back);
2. the result's ``metrics`` attribute: called if it is a method, a mapping used as is, a
   dataclass read as below (the engine's ``ClusterResult.metrics`` is a ``ClusterMetrics``);
3. a mapping or a ``pandas.Series`` result: its items; a number: one column ``value``;
4. a dataclass result: its scalar fields and its scalar-valued properties (e.g. the shaper's
   ``JobResult.savings``).

Non-scalar values (arrays, frames, nested results) are left out; pass ``metrics=`` to pick them.

**Where it runs** (``client=``):

* ``None`` (the default): ``$CLUSTER_SIM_SWEEP_CLIENT`` if set (one of the names below; the test suite
  sets ``inprocess``: two notebooks executing side by side must not each start a cluster), else the
  Dask scheduler at ``DASK_SCHEDULER_ADDRESS`` if that variable is
  set, otherwise ``"auto"``.
* ``"auto"``: points run in this process one after another, each timed; as soon as the points left
  would take more than ``AUTO_PARALLEL_SECONDS`` (a minute) at the pace of the slowest point so far,
  they go to a Dask ``LocalCluster`` (as ``"local"``), else they all run here. The route is decided
  after every point, not from the first alone: a first point the run function remembers (a cycle a
  notebook already showed) takes no time and would keep a long sweep on one core. The slowest pace is
  remembered in this process per run function and base config, so the next sweep of the same runs
  (another grid on the same config) goes to the workers at once instead of running a probe here first. A notebook's sweeps at the ``ci`` and ``default``
  presets take seconds, so they never pay the seconds a cluster takes to start (nor compete with
  other notebooks CI runs at the same time); paper-scale sweeps use every core. The time of a
  point is measured rather than taken from ``config.work()``, which estimates the config's own
  ``run`` and not the smaller or larger function a lab may sweep with it; a caller whose ``run`` is the
  config's own passes ``estimate=`` (e.g. ``lambda c: c.work().seconds``): the route is then chosen before
  anything runs, so a grid of two long points starts both at once instead of timing the first alone. A long
  estimated sweep runs on a LocalCluster of one worker fewer than the cores and in this process too (it would
  otherwise only wait), the longest points first, each worker given one point at a time (see ``execute._run_lanes``).
  With ``group=``, the rest of the group the probe point began stays here (what it prepared is remembered
  here), run while the workers run the other groups. After :func:`keep_sweep_cluster` (a notebook's setup
  cell) the cluster is kept for the process's next sweeps, and a group goes back to the worker it ran on.
* ``"inprocess"``: one point after another in this process (tests, tiny grids, ``pdb``).
* ``"local"``: a ``LocalCluster`` of ``workers`` processes (default: the cores this process may
  use), one thread each, closed when the sweep ends, fails or is interrupted. Its scheduler, workers
  and dashboard listen on 127.0.0.1 only (anyone who reaches a Dask scheduler can run code on it);
  ``$CLUSTER_SIM_DASK_HOST`` names another address to listen on.
* a ``distributed.Client``, or a scheduler address such as ``"tcp://10.0.0.5:8786"``: the same
  grid, unchanged, on an existing Dask cluster (a client you pass stays open).

**Cache.** Each point's metrics are stored on disk under a key hashing the config (its class and
its fields' values), the fingerprints of the run and metrics functions, the package version and a
digest of the package's source, so a rerun or an interrupted sweep resumes where it stopped, and
editing any lab's code starts afresh. A function's fingerprint (:mod:`cluster_sim.fingerprint`)
covers what decides its result: its code, defaults and closure values and the globals it reads (a
helper it calls, a constant, an array), each fingerprinted in turn; a ``functools.partial``'s
arguments; a callable object's state. A function defined in a notebook is keyed by its code and
the notebook's globals it reads: running its cell again keeps the key, editing it or a global it
reads changes it. What has no stable state (a generator, an open file, a random generator, an
object whose state Python cannot read) is refused with a ``ValueError`` naming where it was found:
pass ``cache_key="..."`` (a string that stands for the functions; change it whenever what they
compute changes) or ``cache=False``.

An entry is a JSON file ``<key>.json``: the metrics (floats written exactly, as ``float.hex``), the
key and a sha256 checksum of both. Reading one runs no code; one that fails a check (damaged, not
JSON, or copied from another key) is computed again with a :class:`SweepCacheWarning` naming the
file. Only numbers, booleans, strings and None are stored: a point whose metrics hold anything else
(a frame, a whole result) is computed every time (``attrs["sweep"]["uncached"]`` counts them).
Entries of earlier versions (``.pkl``) are never read; they can be deleted. The directory is
``cache=`` (a path), else ``$CLUSTER_SIM_SWEEP_CACHE``, else ``$XDG_CACHE_HOME/cluster_sim/sweeps``
(by default ``~/.cache/cluster_sim/sweeps``); ``cache=False`` turns it off. Failed points are not
cached: a rerun tries them again.

**Ahead.** :func:`start_ahead` starts a notebook's later sweeps now, on a Dask LocalCluster of one worker, while
the kernel does long work of its own (the tour at ``paper``: its cluster and the capacity scheduler keep one core
busy for minutes); each point lands in the cache, and a later ``run_grid`` of the same point waits for it and reads
it instead of computing it again. The frame is the one it would have computed: the same keys, the same numbers.
The worker takes the points one at a time: a ``run_grid`` that needs points the worker has not started yet computes
those itself (its own way: here, or on a cluster of its own) with its other points, and only then waits for the one
the worker is computing, so a kernel that reaches its sweep early never sits idle while the worker works through a
queue.
:func:`computing_ahead` says which points a worker still holds (running or queued), so a caller can run its own long
points first while the worker goes on (Labs 06-07's claims pool).

**Failures.** A point that raises does not stop the others. With ``on_error="raise"`` (the
default), once every other point has finished, :class:`SweepError` lists each failed point (its
grid values, seed and the exception) and carries the whole frame (``err.frame``, with an ``error``
column) - a student cannot average over rows that silently went missing. ``on_error="record"``
returns that frame instead: metrics NaN and ``error`` set on the failed rows.

**Progress.** A ``tqdm.auto`` bar (a widget in JupyterLab, text in a terminal) shows when
``progress=True``, or with ``progress=None`` as soon as the points finished so far say the rest
will take more than ``PROGRESS_AFTER_SECONDS`` (short sweeps draw no bar, so headless notebook
runs create no widget). ``$CLUSTER_SIM_PROGRESS=text`` draws a plain text bar instead of a
widget (what the headless notebook tests and ``make reproduce`` set: widgets can stall a headless
kernel), ``off`` none; interrupting (Ctrl-C, the notebook's stop button) cancels the pending
points and closes a cluster the sweep started, leaving no workers behind.

**The package.** This module is the runner (:func:`run_grid`, its frame, the paces ``"auto"`` remembers);
:mod:`~cluster_sim.sweep.grid` builds the points, seeds and configs and reads a result's metrics,
:mod:`~cluster_sim.sweep.cache` keys and stores the points, :mod:`~cluster_sim.sweep.clients` opens and keeps the
Dask clusters, and :mod:`~cluster_sim.sweep.execute` runs the points on them or here.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import threading
import time
from collections.abc import Callable

import pandas as pd

from ..fingerprint import Unfingerprintable, fingerprint
from ..progress import PROGRESS_AFTER_SECONDS as _PROGRESS_AFTER_SECONDS
from ..progress import LazyBar
from ..progress import style as progress_style
# the points run through these two modules' names (execute._run_here, clients._machine_workers, ...): a test that
# replaces one there replaces it for the runner too
from . import clients, execute
from .cache import (ENTRY_FORMAT, MAX_ENTRY_BYTES, SweepCacheWarning, _cache_get, _cache_put, _callable_name,
                    _functions_fingerprint, _point_key, cache_dir, cache_key)
from .clients import MALLOC_ENV, close_sweep_cluster, keep_sweep_cluster
from .grid import _configs, _describe, _seed_list, grid_points, result_metrics

__all__ = ["run_grid", "SweepError", "grid_points", "result_metrics", "cache_dir", "cache_key",
           "SweepCacheWarning", "keep_sweep_cluster", "start_ahead", "computing_ahead", "Ahead", "AHEAD_ARGUMENTS", "close_sweep_cluster", "MALLOC_ENV",
           "AUTO_PARALLEL_SECONDS", "PROGRESS_AFTER_SECONDS", "CLIENTS", "ON_ERROR", "ENTRY_FORMAT", "MAX_ENTRY_BYTES"]

#: ``client="auto"`` starts a LocalCluster when the remaining points are estimated above this
AUTO_PARALLEL_SECONDS = 60.0
#: ``progress=None`` shows a bar when the sweep is estimated above this
PROGRESS_AFTER_SECONDS = _PROGRESS_AFTER_SECONDS
CLIENTS = ("auto", "inprocess", "local")
ON_ERROR = ("raise", "record")


class SweepError(RuntimeError):
    """Some points of a sweep failed; ``frame`` holds every row (``error`` set on the failed ones)."""

    def __init__(self, message: str, frame: pd.DataFrame, failed: pd.DataFrame):
        super().__init__(message)
        self.frame = frame
        self.failed = failed


class _Progress(LazyBar):
    """The sweep's bar, in points: with ``progress=None`` opened only once the pace so far says the
    sweep is long (``PROGRESS_AFTER_SECONDS``, read when the sweep starts)."""

    def __init__(self, progress, total: int, done: int):
        super().__init__(total, desc="sweep", unit="point", done=done, show=progress, after=PROGRESS_AFTER_SECONDS)


# ---- the runner ------------------------------------------------------------------------------------
#: the slowest point ``client="auto"`` ran in this process, per run function and base config (see _pace_key)
_PACES: dict[tuple, float] = {}


def _pace_key(run: Callable, metrics: Callable | None, base_config) -> tuple | None:
    """What an earlier sweep's pace is remembered under: the run and metrics functions (by name) and the base config
    (its fingerprint), so a notebook's next sweep of the same runs (another grid on the same config: Lab 03's
    footprint rounds, its comparison after its rescue sweep) needs no probe in this process before using the
    workers. None (nothing remembered) for a config that cannot be fingerprinted."""
    try:
        return (_callable_name(run), None if metrics is None else _callable_name(metrics), fingerprint(base_config))
    except Unfingerprintable:
        return None


def run_grid(run: Callable, base_config, grid, seeds=None, *, metrics: Callable | None = None,
             client=None, workers: int | None = None, cache=None, on_error: str = "raise",
             progress: bool | None = None, cache_key: str | None = None,
             group: Callable | None = None, estimate: Callable | None = None, paced_as=None,
             _ahead: bool = False) -> pd.DataFrame:
    """Run ``run(config)`` at every grid point and seed; one row per (point, seed).

    Parameters
    ----------
    run : callable ``config -> result`` (a lab's ``run``, ``run_job``, ...).
    base_config : the config every point changes (a frozen config dataclass).
    grid : mapping field -> list of values (all combinations), or a list of dicts (those points).
    seeds : None (the base config's seed, or the grid's own ``seed`` values), a count ``n``
        (``seed .. seed + n - 1``, the labs' convention) or a list of seeds. The seed varies fastest.
    metrics : optional ``result -> dict`` of scalars (else the protocol in the module docstring).
    client : None, ``"auto"``, ``"inprocess"``, ``"local"``, a ``distributed.Client`` or a
        scheduler address (see the module docstring).
    workers : the size of a LocalCluster this sweep starts (default: the usable cores).
    cache : a directory, None (the default place) or False (no cache).
    on_error : ``"raise"`` (a :class:`SweepError` after the other points finish) or ``"record"``
        (an ``error`` column).
    progress : True, False, or None (a bar once the sweep is estimated to take over a few seconds).
    cache_key : a string that stands for ``run`` and ``metrics`` in the cache key, instead of their
        fingerprints: for functions that cannot be fingerprinted (see the module docstring). Change
        it whenever what they compute changes; sweeps that give the same string share entries.
    group : optional ``config -> key``: on a Dask cluster, the points with the same key go to one worker as
        one task and run there one after another, in the grid's order (e.g. a lab's points on one lake:
        the worker prepares it once and remembers it, where single points would have each worker prepare
        every lake). The frame is the same; in this process the points run in the grid's order anyway.
    estimate : optional ``config -> seconds``: with ``client="auto"``, the points' estimated seconds choose where
        they run before any of them does, instead of timing the first here (which runs it alone, before the
        others start: a grid of two long points ran one after the other). For a ``run`` that ``config.work()``
        estimates (the engine's own ``run``): ``estimate=lambda c: c.work().seconds``. The points then run
        longest first, one at a time on each worker and in this process (``workers`` is then the cluster's
        size; by default one fewer than the cores, as this process is a lane too).
    paced_as : optional config whose remembered pace (``client="auto"``) this sweep shares, instead of
        ``base_config``'s: for a base config that changes what the runs compute but not what they cost
        (Lab 03's footprints measure the trace's runs, ``late_start=0``, on the same cycles as its comparison).

    The frame's ``attrs["sweep"]`` records the runs computed and read from the cache, the computed
    ones the cache could not hold (``uncached``), where they ran and the wall time.
    """
    t0 = time.perf_counter()
    if not callable(run):
        raise ValueError(f"run={run!r} is not callable: give the lab's run function, e.g. run_job")
    if metrics is not None and not callable(metrics):
        raise ValueError(f"metrics={metrics!r} is not callable: give a function result -> dict")
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error={on_error!r} is not allowed: choose one of {', '.join(map(repr, ON_ERROR))}")
    if progress not in (True, False, None):
        raise ValueError(f"progress={progress!r} is not allowed: choose True, False or None")
    progress_style()  # a bad $CLUSTER_SIM_PROGRESS is refused before anything runs
    if workers is not None and (not isinstance(workers, numbers.Integral) or isinstance(workers, bool) or workers < 1):
        raise ValueError(f"workers={workers!r} is out of range: give a count >= 1")
    if client is None:
        client = (os.environ.get("CLUSTER_SIM_SWEEP_CLIENT") or os.environ.get("DASK_SCHEDULER_ADDRESS")
                  or "auto")
    if isinstance(client, str) and client not in CLIENTS and "://" not in client:
        raise ValueError(f"client={client!r} is not allowed: choose one of {', '.join(map(repr, CLIENTS))}, "
                         "a scheduler address such as 'tcp://host:8786', or a distributed.Client")
    if cache_key is not None and (type(cache_key) is not str or not cache_key.strip()):
        raise ValueError(f"cache_key={cache_key!r} is not allowed: give a non-empty string naming what run and "
                         "metrics compute (e.g. 'my_run v2'), or None to fingerprint them")
    if group is not None and not callable(group):
        raise ValueError(f"group={group!r} is not callable: give a function config -> key (e.g. the seed), or None")
    if estimate is not None and not callable(estimate):
        raise ValueError(f"estimate={estimate!r} is not callable: give a function config -> seconds "
                         "(e.g. lambda c: c.work().seconds), or None")
    if client in ("auto", "local"):
        clients._dask_host()  # a bad $CLUSTER_SIM_DASK_HOST is refused before anything runs
    directory = cache_dir(cache)

    points, seed_list, runs, configs, keys = _plan(run, base_config, grid, seeds, metrics, cache_key, directory)

    values: list[dict | None] = [None] * len(runs)
    errors: list[str | None] = [None] * len(runs)
    tracebacks: list[str | None] = [None] * len(runs)
    todo = []
    # points start_ahead's worker is computing: read once it has stored them, after this sweep's own (those its
    # worker had not started are this sweep's now: computed here, while it goes on)
    ahead, taken = ({}, 0) if _ahead else _take_ahead(keys)
    if ahead or taken:
        print(f"run_grid: {len(ahead)} point{'' if len(ahead) == 1 else 's'} being computed ahead on a Dask worker "
              "(start_ahead), read when stored"
              + (f"; {taken} it had not started computed by this sweep" if taken else ""), flush=True)
    later = [i for i, key in enumerate(keys) if key in ahead]
    for i, key in enumerate(keys):
        if key in ahead:
            continue
        hit = _cache_get(directory, key)
        if hit is None:
            todo.append(i)
        else:
            values[i] = hit
    cached = len(runs) - len(todo) - len(later)
    uncached = []

    def record(i, result, err, tb):
        if err is None:
            values[i] = result
            if not _cache_put(directory, keys[i], configs[i], result):
                uncached.append(i)
        else:
            errors[i] = f"{type(err).__name__}: {err}"
            tracebacks[i] = tb
        if _ahead:
            _ahead_done(keys[i])  # stored (or failed: the sweep that waits computes it)

    bar = _Progress(progress, len(runs), cached)
    where = "cache"
    try:
        if todo:
            if client == "inprocess":
                where = "inprocess"
                execute._run_here(todo, configs, run, metrics, record, bar)
            elif client == "auto" and estimate is not None:
                tasks = execute._groups(todo, configs, group)
                costs = [sum(float(estimate(configs[i])) for i in task) for task in tasks]
                seconds = sum(costs)
                if len(tasks) > 1 and seconds > AUTO_PARALLEL_SECONDS and clients._machine_workers() > 1 \
                        and clients._KEEP[0]:
                    # a kept cluster (keep_sweep_cluster): its workers, where each group ran before
                    where = "local"
                    print(f"run_grid: {len(todo)} points estimated at ~{seconds:.0f} s in one process: on the kept Dask "
                          f"LocalCluster (client='inprocess' keeps them here)", flush=True)
                    execute._run_dask(todo, configs, run, metrics, record, bar, "auto", workers, group)
                elif len(tasks) > 1 and seconds > AUTO_PARALLEL_SECONDS and clients._machine_workers() > 1:
                    where = "local"
                    # this process is one of the lanes: it would otherwise only wait for the workers
                    n = workers or min(clients._machine_workers() - 1, len(tasks) - 1)
                    print(f"run_grid: {len(todo)} points estimated at ~{seconds:.0f} s in one process: starting a Dask "
                          f"LocalCluster of {n} worker{'s' if n > 1 else ''}, this process running points too "
                          "(client='inprocess' keeps them all here)", flush=True)
                    execute._run_lanes(tasks, costs, configs, run, metrics, record, bar, n)
                else:
                    where = "inprocess"
                    execute._run_here(todo, configs, run, metrics, record, bar)
            elif client == "auto":
                where = "inprocess"
                paced = _pace_key(run, metrics, base_config if paced_as is None else paced_as)
                pace = _PACES.get(paced, 0.0)  # the slowest point run here so far (or by an earlier sweep)
                home = {j: execute._home_key(group(configs[j])) for j in todo} if group is not None else {}
                # with a kept cluster (keep_sweep_cluster) a group's home outlives the sweep: the groups this
                # process ran in earlier sweeps stay here, and those a live worker ran go back to it at once (no
                # point of theirs timed here first: here it would be prepared again, alone, while the workers wait)
                kept = group is not None and clients._KEEP[0]
                here_before = clients._HERE if kept else set()
                workers_homes = clients._KEPT.get("homes", {}) if kept and clients._kept_alive() else {}
                # the groups of the points run here: what they prepared is remembered here
                probed = {h for h in home.values() if h is not None and h in here_before}
                for k, i in enumerate(todo):
                    rest = todo[k:]
                    # the rest of a group a point here started stays here (it would be prepared again on a
                    # worker), run while the workers run the other groups
                    mine = [j for j in rest if home.get(j) is not None and home[j] in probed]
                    theirs = [j for j in rest if not (home.get(j) is not None and home[j] in probed)]
                    # on a running kept cluster no start is paid: groups a worker holds, or two or more groups none
                    # of which began here (their first point would run here alone), go to the workers at once
                    at_once = bool(workers_homes) and (any(home.get(j) in workers_homes for j in theirs)
                                                       or (k == 0 and len({home.get(j) for j in theirs}) > 1))
                    # decided again after every point: a point the run function remembers takes no time and
                    # says nothing of the rest, so the first point that costs something sets the pace
                    # one point left runs here: a cluster's start would cost more than it saves
                    if theirs and clients._machine_workers() > 1 and (
                            at_once or (len(theirs) > 1 and pace * len(rest) > AUTO_PARALLEL_SECONDS)):
                        where = "local"
                        print(f"run_grid: {len(rest)} points left at about {pace:.1f} s each (~{pace * len(rest):.0f} "
                              f"s in one process): {len(theirs)} to a Dask LocalCluster of "
                              f"{workers or clients._machine_workers()} workers"
                              + (f", the {len(mine)} of the groups begun here stay here" if mine else "")
                              + " (client='inprocess' keeps them all here)", flush=True)
                        execute._run_dask(theirs, configs, run, metrics, record, bar, "auto", workers, group,
                                  **({"here": mine} if mine else {}))
                        break
                    if home.get(i) is not None:
                        probed.add(home[i])
                        if kept:
                            clients._HERE.add(home[i])
                    t = time.perf_counter()
                    execute._run_here([i], configs, run, metrics, record, bar)
                    pace = max(pace, time.perf_counter() - t)
                    if paced is not None:
                        _PACES[paced] = pace
            else:
                where = client if isinstance(client, str) else "client"
                execute._run_dask(todo, configs, run, metrics, record, bar, client, workers, group)
        if later:
            waited = time.perf_counter()
            for i in later:
                ahead[keys[i]].wait()
            waited = time.perf_counter() - waited
            if waited >= 1:
                print(f"run_grid: waited {waited:.0f} s for the points computed ahead", flush=True)
            missing = []  # failed ahead (or the worker stopped): computed here, raising as it would have
            for i in later:
                hit = _cache_get(directory, keys[i])
                if hit is None:
                    missing.append(i)
                else:
                    values[i] = hit
                    cached += 1
                    bar.step(1)
            if missing:
                todo += missing
                execute._run_here(missing, configs, run, metrics, record, bar)
    finally:
        bar.close()

    frame = _frame(runs, values, errors, points, seed_list, on_error == "record" or any(errors))
    frame.attrs["sweep"] = {"runs": len(runs), "cached": cached, "computed": len(todo), "uncached": len(uncached),
                            "failed": sum(e is not None for e in errors), "where": where,
                            "seconds": time.perf_counter() - t0}
    failed = [i for i, e in enumerate(errors) if e is not None]
    if failed and on_error == "raise":
        lines = [f"  {_describe(runs[i][0], runs[i][1])}: {errors[i]}" for i in failed]
        first_tb = tracebacks[failed[0]] or ""
        raise SweepError(
            f"{len(failed)} of {len(runs)} runs of {getattr(run, '__qualname__', run)!r} failed "
            f"(the other {len(runs) - len(failed)} finished and are cached; err.frame holds every row):\n"
            + "\n".join(lines) + f"\nthe first failure's traceback:\n{first_tb}",
            frame, frame.loc[failed])
    return frame


def _frame(runs, values, errors, points, seed_list, with_error: bool) -> pd.DataFrame:
    grid_fields = list(dict.fromkeys(k for p in points for k in p))
    lead = grid_fields + (["seed"] if seed_list is not None and "seed" not in grid_fields else [])
    metric_names = list(dict.fromkeys(k for v in values if v for k in v))
    rows = []
    for (point, seed, config), v, err in zip(runs, values, errors):
        fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
        clash = sorted(set(v or ()) & set(fields))
        if clash:
            raise ValueError(f"metric(s) {clash} have the names of config fields: rename them with metrics=")
        row = {k: fields[k] for k in lead}
        row.update({k: (v or {}).get(k, math.nan) for k in metric_names})
        if with_error:
            row["error"] = err
        row.update({k: val for k, val in fields.items() if k not in row})
        rows.append(row)
    return pd.DataFrame(rows)


def _plan(run, base_config, grid, seeds, metrics, cache_key, directory):
    """A sweep's points, seeds, (point, seed, config) runs, configs and cache keys (``""`` without a cache)."""
    points = grid_points(base_config, grid)
    # a grid that sets seed itself (e.g. every seed of a job next to every delay) needs no seeds=
    seed_list = None if seeds is None and any("seed" in p for p in points) else _seed_list(base_config, seeds)
    runs = _configs(base_config, points, seed_list)  # every config validated before anything runs
    configs = [c for _, _, c in runs]
    if directory is None:
        keys = [""] * len(configs)  # no cache: nothing needs a key (or a fingerprint)
    else:
        functions = _functions_fingerprint(run, metrics, cache_key)  # once: the functions are the same at every point
        keys = [_point_key(c, functions) for c in configs]
    return points, seed_list, runs, configs, keys


# ---- sweeps started ahead ----------------------------------------------------------------------------
#: the cache keys of the points :func:`start_ahead` has still to store, each with the event set once it has (or
#: has failed, or the sweeps ahead ended): a ``run_grid`` that needs one waits for it instead of computing it again
_AHEAD: dict[str, threading.Event] = {}
#: those of ``_AHEAD`` the worker has started; the others a ``run_grid`` that needs them takes (under the lock)
_AHEAD_STARTED: set[str] = set()
_AHEAD_LOCK = threading.Lock()
#: what ``start_ahead`` accepts of ``run_grid``'s arguments (where and how it runs is its own choice)
AHEAD_ARGUMENTS = ("run", "base_config", "grid", "seeds", "metrics", "cache_key", "estimate")


def _take_ahead(keys) -> tuple[dict[str, threading.Event], int]:
    """Of ``keys``, the points a sweep started ahead is computing, each with the event set once it is stored (or
    failed); and how many its worker had not started, taken from it (the caller computes them: not stored, they are
    not in the cache)."""
    with _AHEAD_LOCK:
        taken = [k for k in dict.fromkeys(keys) if k and k in _AHEAD and k not in _AHEAD_STARTED]
        for k in taken:
            _AHEAD.pop(k).set()  # the worker skips it; a sweep elsewhere waiting for it finds no entry and computes it
        return {k: _AHEAD[k] for k in dict.fromkeys(keys) if k and k in _AHEAD}, len(taken)


def computing_ahead(run: Callable, base_config, grid, seeds=None, *, metrics: Callable | None = None, cache=None,
                    cache_key: str | None = None) -> list[bool]:
    """For each run of ``run_grid(run, base_config, grid, seeds, ...)``, in its frame's order: whether a sweep
    :func:`start_ahead` started still holds it (its worker computing it, or to compute it: not stored yet).
    ``run_grid`` waits for the point the worker is computing and computes those it has not started itself; a caller
    whose other points are long can run them first (a ``run_grid`` of those alone), while the worker goes on, then
    read the whole sweep.

    >>> from cluster_sim.engine import ClusterConfig, run
    >>> computing_ahead(run, ClusterConfig.ci(), {"load": [0.5, 0.9]}, cache=False)
    [False, False]
    """
    directory = cache_dir(cache)
    keys = _plan(run, base_config, grid, seeds, metrics, cache_key, directory)[-1]
    return [bool(k) and k in _AHEAD for k in keys]


def _ahead_done(key: str) -> None:
    with _AHEAD_LOCK:
        event = _AHEAD.pop(key, None)
        _AHEAD_STARTED.discard(key)
    if event is not None:
        event.set()


def _ahead_point(sweep: dict, config, dask_client, directory) -> None:
    """One point of a sweep ahead, on the worker: ``run_grid`` of that config alone (its cache key is the point's
    key in the whole sweep: a key depends on the config and the functions only)."""
    run_grid(sweep["run"], config, [{}], metrics=sweep.get("metrics"), cache_key=sweep.get("cache_key"),
             client=dask_client, cache=directory, on_error="record", progress=False, _ahead=True)


class Ahead:
    """Sweeps :func:`start_ahead` runs on a worker: ``wait()`` until they end; ``points`` they compute."""

    def __init__(self, thread: threading.Thread, points: int, seconds: float):
        self.thread, self.points, self.seconds = thread, points, seconds

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the sweeps to end (True if they did within ``timeout``)."""
        self.thread.join(timeout)
        return not self.thread.is_alive()

    def __repr__(self) -> str:
        state = "running" if self.thread.is_alive() else "done"
        return f"Ahead({self.points} points, ~{self.seconds:.0f} s estimated, {state})"


def start_ahead(sweeps, *, cache=None) -> Ahead | None:
    """Start ``run_grid(**sweep)`` for each of ``sweeps`` (dicts of :data:`AHEAD_ARGUMENTS`, ``estimate`` required)
    on a Dask LocalCluster of one worker, one sweep after another, while this process goes on; each point is stored
    in the sweep cache. A later ``run_grid`` of the same points (same functions and configs, so the same cache keys)
    waits for those still being computed and reads them from the cache, instead of computing them again; its frame
    is the one it would have computed (a point's numbers do not depend on where it runs).

    For a notebook whose long sweeps come after long work in the kernel (the tour at ``paper``: its own run and the
    capacity scheduler's keep one core busy for minutes, while its sweeps and side runs need nothing from them): the
    second core runs them meanwhile. Nothing is started (None) where ``run_grid(client=None)`` would not start a
    cluster either: without a cache, with ``$CLUSTER_SIM_SWEEP_CLIENT`` or ``$DASK_SCHEDULER_ADDRESS`` set (the
    test suite keeps its notebooks in process), on one core, or when the points not yet cached are estimated at
    ``AUTO_PARALLEL_SECONDS`` or less in all. A point that fails ahead is computed again by the sweep that needs it
    (which raises as it would have).
    """
    directory = cache_dir(cache)
    plans, seconds = [], 0.0
    for sweep in sweeps:
        if not isinstance(sweep, dict) or set(sweep) - set(AHEAD_ARGUMENTS) or \
                not {"run", "base_config", "grid", "estimate"} <= set(sweep) or not callable(sweep["estimate"]):
            raise ValueError(f"sweeps: {sweep!r} is not allowed: give dicts of run_grid's arguments "
                             f"{', '.join(AHEAD_ARGUMENTS)}, with run, base_config, grid and estimate")
        *_, configs, keys = _plan(sweep["run"], sweep["base_config"], sweep["grid"], sweep.get("seeds"),
                                  sweep.get("metrics"), sweep.get("cache_key"), directory)
        missing = [(c, k) for c, k in zip(configs, keys) if directory is not None and _cache_get(directory, k) is None]
        seconds += sum(float(sweep["estimate"](c)) for c, _ in missing)
        plans.append((sweep, missing))
    if clients.starts_nothing_ahead(directory, seconds):
        return None
    mine = {}
    with _AHEAD_LOCK:
        for _, missing in plans:
            for _, k in missing:
                if k not in _AHEAD and k not in mine:
                    mine[k] = _AHEAD[k] = threading.Event()

    def ahead():
        try:
            dask_client, cluster, close = clients._open_client("local", 1)
            try:
                # one point at a time, so that a sweep that needs a point not started yet can take it (_take_ahead)
                for sweep, missing in plans:
                    for config, k in missing:
                        with _AHEAD_LOCK:
                            if k not in mine or _AHEAD.get(k) is not mine[k]:
                                continue  # taken by the sweep that needs it, or another sweep ahead's
                            _AHEAD_STARTED.add(k)
                        _ahead_point(sweep, config, dask_client, directory)
                        _ahead_done(k)  # stored, failed, or found stored already: a sweep waiting for it goes on
            finally:
                if close:
                    clients._close_quietly(dask_client, cluster)
        except BaseException as err:  # the sweeps that wait compute what is missing, and raise what fails
            print(f"start_ahead: the sweeps ahead stopped ({type(err).__name__}: {err}); the cells that need their "
                  "points compute them here instead", flush=True)
        finally:
            with _AHEAD_LOCK:
                for k, event in mine.items():
                    if _AHEAD.get(k) is event:
                        del _AHEAD[k]
                    _AHEAD_STARTED.discard(k)
            for event in mine.values():
                event.set()

    print(f"start_ahead: {len(mine)} sweep points (~{seconds:.0f} s in one process) start now on a Dask LocalCluster "
          "of 1 worker; the sweeps that run them read them from the sweep cache", flush=True)
    thread = threading.Thread(target=ahead, name="run_grid ahead", daemon=True)
    thread.start()
    return Ahead(thread, len(mine), seconds)
