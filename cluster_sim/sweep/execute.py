"""Running a sweep's points: in this process, on a Dask cluster (one task a point, or a group's points in one task
on the worker the group last ran on), or in lanes (each worker given one task at a time, this process a lane too).

Each point is :func:`_evaluate`: the metrics of ``run(config)``, wherever it runs. Every outcome goes to the
runner's ``record(i, values, error, traceback)`` and its bar's ``step``; which lane runs a point never changes its
numbers, only when it ends. The clusters come from :mod:`cluster_sim.sweep.clients`, reached through that module.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any

from ..progress import quiet
from . import clients
from .grid import _plain, result_metrics


def _evaluate(config, run: Callable, metrics: Callable | None) -> dict:
    """What each task runs, wherever it runs: the metrics of ``run(config)`` (a small dict). A point
    draws no bar of its own (:func:`cluster_sim.progress.quiet`): the sweep's bar counts points."""
    with quiet():
        result = run(config)
    values = metrics(result) if metrics is not None else result_metrics(result)
    if not isinstance(values, Mapping):
        raise TypeError(f"metrics(result) returned a {type(values).__name__}, not a dict")
    return {str(k): _plain(v) for k, v in values.items()}


def _run_here(todo, configs, run, metrics, record, progress):
    for i in todo:
        try:
            values = _evaluate(configs[i], run, metrics)
        except Exception as err:  # a failed point is reported with the others, not raised alone
            record(i, None, err, traceback.format_exc())
        else:
            record(i, values, None, None)
        progress.step()


def _evaluate_group(configs, run: Callable, metrics: Callable | None) -> list[tuple]:
    """One task of a grouped sweep: its points one after another in one process (so what they share, e.g. a
    lab's prepared workload remembered in the worker, is built once); each point's (values, error, traceback)."""
    out = []
    for config in configs:
        try:
            out.append((_evaluate(config, run, metrics), None, None))
        except Exception as err:  # a failed point is reported with the others, not raised alone
            out.append((None, err, traceback.format_exc()))
    return out


def _evaluate_group_on_worker(configs, run: Callable, metrics: Callable | None) -> tuple[str, list[tuple]]:
    """:func:`_evaluate_group` on a Dask worker, and the worker's address (where the group's state now lives)."""
    from distributed import get_worker

    return get_worker().address, _evaluate_group(configs, run, metrics)


def _home_key(key):
    """A group key as a key of ``homes`` (None if it cannot be one: that group has no remembered home)."""
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _groups(todo, configs, group: Callable | None) -> list[list[int]]:
    """The points of ``todo`` in tasks: one each, or (``group`` given) one task per key, in the grid's order."""
    if group is None:
        return [[i] for i in todo]
    tasks: dict[Any, list[int]] = {}
    for i in todo:
        tasks.setdefault(group(configs[i]), []).append(i)
    return list(tasks.values())


def _run_dask(todo, configs, run, metrics, record, progress, client, workers, group=None, here=()):
    """The points of ``todo`` on Dask: ``client`` ``"auto"`` is the LocalCluster kept between sweeps
    (:func:`clients._kept_cluster`) if :func:`clients.keep_sweep_cluster` is on, else as ``"local"``: a LocalCluster
    of this sweep's own; else a client or an address.
    ``here``: points that run in this process meanwhile (once the others are sent)."""
    from distributed import as_completed

    kept = clients._kept_cluster(workers) if client == "auto" and clients._KEEP[0] else None
    if kept is not None:
        dask_client, cluster, close, homes = kept["client"], None, False, kept["homes"]
    else:
        (dask_client, cluster, close), homes = clients._open_client("local" if client == "auto" else client,
                                                                    workers), {}
    futures = []
    try:
        tasks = _groups(todo, configs, group)
        if group is None:
            futures = dask_client.map(_evaluate, [configs[i] for i in todo], run=run, metrics=metrics, pure=False)
        else:
            # the tasks of most points first (submitted first, and Dask runs higher priorities first among those
            # waiting): a long group handed out last would run alone at the end while the other workers idle (Lab
            # 10's ablation: a seed's six plan-reading arms among single arms); equal sizes in the grid's order
            tasks.sort(key=len, reverse=True)
            # a group goes to the worker it last ran on, which remembers what it prepared, if that worker still
            # lives (a restarted one has another address and remembers nothing); only there, so Dask's work
            # stealing does not move it to a worker that would prepare it again
            keys = [_home_key(group(configs[t[0]])) for t in tasks]
            alive = set(dask_client.scheduler_info(n_workers=-1)["workers"]) if homes else set()
            for t, key in zip(tasks, keys):
                home = homes.get(key) if key is not None else None
                where = {"workers": [home], "allow_other_workers": False} if home in alive else {}
                futures.append(dask_client.submit(_evaluate_group_on_worker, [configs[i] for i in t], run=run,
                                                  metrics=metrics, pure=False, priority=len(t),
                                                  **where))
        index = {f.key: (t, k) for f, t, k in zip(futures, tasks, keys if group is not None else tasks)}
        if here:
            _run_here(here, configs, run, metrics, record, progress)
        for future in as_completed(futures):
            task, key = index[future.key]
            if future.status == "error":  # the task itself failed (a point's error is in its result)
                err = future.exception()
                tb = "".join(traceback.format_exception(type(err), err, future.traceback()))
                for i in task:
                    record(i, None, err, tb)
            elif group is None:
                record(task[0], future.result(), None, None)
            else:
                address, results = future.result()
                if key is not None:
                    homes[key] = address
                for i, (values, err, tb) in zip(task, results):
                    record(i, values, err, tb)
            progress.step(len(task))
            future.release()
    except BaseException:
        if futures:
            dask_client.cancel(futures)
        if kept is not None:
            clients.close_sweep_cluster()  # a cancelled point may still run in a worker: no workers are left behind
        raise
    finally:
        if close:
            clients._close_quietly(dask_client, cluster)


def _run_lanes(tasks, costs, configs, run, metrics, record, progress, workers: int):
    """``tasks`` (lists of point indices) on a new LocalCluster of ``workers`` processes and in this process, longest
    first (``costs``, their estimated seconds; ties keep the grid's order): each worker is given one task at a time,
    the next when its last one ends, and this process takes the next task whenever it is free.

    Handing every task to Dask's scheduler at once let one worker hold two of Lab 04's three paper seeds while the
    other core idled, and this process only waited: here no worker ever holds a task it has not started, so a free
    lane never waits behind a busy one. Which lane runs a task does not change its numbers (``run`` is
    deterministic), only when it ends."""
    import collections
    import threading

    from distributed import as_completed

    pending = collections.deque(sorted(range(len(tasks)), key=lambda k: -costs[k]))  # stable: ties in grid order
    lock = threading.Lock()  # record and the bar are called from this thread and the feeder
    stop = threading.Event()
    failure: list[BaseException] = []

    def take():
        with lock:
            return pending.popleft() if pending and not stop.is_set() else None

    def finish(task, outcomes):
        with lock:
            for i, (values, err, tb) in zip(task, outcomes):
                record(i, values, err, tb)
            progress.step(len(task))

    dask_client, cluster, close = clients._open_client("local", workers)
    submitted = {}  # future key -> (task, worker, future)

    def submit(k, address):
        future = dask_client.submit(_evaluate_group, [configs[i] for i in tasks[k]], run=run, metrics=metrics,
                                    pure=False, workers=[address], allow_other_workers=False)
        submitted[future.key] = (tasks[k], address, future)
        return future

    def feed(running):
        try:
            for future in running:
                task, address, _ = submitted.pop(future.key)
                if stop.is_set():
                    break
                if future.status == "error":  # the task itself failed (a point's error is in its result)
                    err = future.exception()
                    tb = "".join(traceback.format_exception(type(err), err, future.traceback()))
                    finish(task, [(None, err, tb)] * len(task))
                else:
                    finish(task, future.result())
                future.release()
                k = take()
                if k is not None:
                    running.add(submit(k, address))
        except BaseException as err:  # raised in this process once the lanes stop
            failure.append(err)
            stop.set()

    feeder = None
    try:
        dask_client.wait_for_workers(workers)
        running = as_completed()
        for address in sorted(dask_client.scheduler_info()["workers"])[:workers]:
            k = take()
            if k is None:
                break
            running.add(submit(k, address))
        feeder = threading.Thread(target=feed, args=(running,), name="run_grid lanes", daemon=True)
        feeder.start()
        while (k := take()) is not None:
            finish(tasks[k], _evaluate_group([configs[i] for i in tasks[k]], run, metrics))
        feeder.join()
        if failure:
            raise failure[0]
    except BaseException:
        stop.set()
        if submitted:
            dask_client.cancel([f for _, _, f in list(submitted.values())])
        raise
    finally:
        if close:
            clients._close_quietly(dask_client, cluster)

