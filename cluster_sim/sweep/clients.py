"""The Dask clients a sweep runs on: a LocalCluster of its own or the one kept between sweeps, and what its workers
start with.

A LocalCluster listens on ``$CLUSTER_SIM_DASK_HOST`` (127.0.0.1 by default) and its workers start with
:data:`MALLOC_ENV`; :func:`keep_sweep_cluster` keeps the one ``client="auto"`` starts for this process's next sweeps.
Dask is imported by the functions that start a cluster, never when the package is imported. Other modules reach
``_machine_workers``, ``_open_client`` and ``_KEEP`` through this module (``clients._open_client(...)``), so a
test that replaces one here replaces it for every caller.
"""

from __future__ import annotations

import contextlib
import os


def _machine_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _dask_host() -> str:
    """Where a LocalCluster listens: ``$CLUSTER_SIM_DASK_HOST``, by default 127.0.0.1 (this machine only:
    its scheduler, workers and dashboard would otherwise let anyone on the network run code here)."""
    host = os.environ.get("CLUSTER_SIM_DASK_HOST") or "127.0.0.1"
    if not host.strip() or any(c.isspace() for c in host):
        raise ValueError(f"CLUSTER_SIM_DASK_HOST={host!r} is not allowed: give the address a LocalCluster listens "
                         "on, e.g. 127.0.0.1 (the default: this machine only) or 0.0.0.0 (every interface)")
    return host


#: glibc's malloc settings for the processes that run points: a LocalCluster's workers (in place of Dask's
#: ``MALLOC_TRIM_THRESHOLD_=65536``, in ``distributed.nanny.pre-spawn-environ``) and the notebooks' kernel
#: (``kernelspec/kernel.json``'s ``env``, which a test keeps equal to this). Dask's setting hands freed memory back
#: to the system at once and turns off glibc's dynamic mmap threshold: every array over 128 KiB is mapped when
#: made and unmapped when freed, its pages faulted in and zeroed again each time, and Lab 04's doubling makes and
#: frees such tables all the time. Here arrays up to 32 MiB (glibc's largest threshold) come from the heap, and up
#: to 1 GiB freed at its top is kept for the next ones. Measured on Lab 04's paper seed 0 in one process (load
#: 18-21; the same numbers each time): Dask's setting 5.0M minor page faults, 31.6 s system CPU, 43.5 s user, peak
#: RSS 1.77 GiB; glibc's defaults (the kernel before) 0.53M, 12.7 s, 39.9 s, 1.90 GiB; these 0.10M, 5.0 s, 41.6 s,
#: 1.97 GiB; on Lab 05's lake preparation (1,200 jobs a day, load 19) Dask's setting 1.73M faults and 6.3 s of
#: system CPU, glibc's defaults 169k and 1.7 s, settings like these 53k and 0.6 s. Set explicitly, not only left out: a Nanny copies its pre-spawn settings into this process's own
#: environment, and takes that environment over its settings when the next cluster starts.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824",
              "MALLOC_TOP_PAD_": "67108864"}


@contextlib.contextmanager
def malloc_environ():
    """This process's environment with :data:`MALLOC_ENV` while processes that should start with it are started
    (a spawned interpreter reads its malloc settings at start); the variables as they were afterwards."""
    saved = {k: os.environ.get(k) for k in MALLOC_ENV}
    os.environ.update(MALLOC_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def starts_nothing_ahead(directory, seconds: float) -> bool:
    """True where nothing is worth starting ahead on the second core (:func:`cluster_sim.sweep.start_ahead`,
    :func:`cluster_sim.sweep.ahead.start_run_ahead`): no sweep cache (``directory`` None), a client given for the
    sweeps (the test suite's ``$CLUSTER_SIM_SWEEP_CLIENT``, or Dask's scheduler), one core, or ``seconds`` of work
    within ``AUTO_PARALLEL_SECONDS`` (``ci`` and ``default``)."""
    from . import AUTO_PARALLEL_SECONDS

    return directory is None or bool(os.environ.get("CLUSTER_SIM_SWEEP_CLIENT")) \
        or bool(os.environ.get("DASK_SCHEDULER_ADDRESS")) or _machine_workers() < 2 \
        or seconds <= AUTO_PARALLEL_SECONDS


def _open_client(client, workers: int | None):
    """(client, cluster, close): the Dask client to use and what this sweep must close. A LocalCluster's worker
    processes start with :data:`MALLOC_ENV`."""
    from distributed import Client, LocalCluster
    import dask
    import logging

    if client == "local":
        n = workers or _machine_workers()
        host = _dask_host()
        # port 0: a free port for the dashboard (another cluster may hold 8787)
        dashboard = f"[{host}]:0" if ":" in host else f"{host}:0"
        # the nanny puts its pre-spawn variables into this process's environment (an earlier cluster's stay there
        # and win over the config): set ours for the workers' start (malloc_environ gives this process its own back)
        with malloc_environ(), \
                dask.config.set({f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in MALLOC_ENV.items()}):
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host=host,
                                   dashboard_address=dashboard, silence_logs=logging.ERROR)
        return Client(cluster), cluster, True
    if isinstance(client, str):
        return Client(client), None, True
    return client, None, False


#: the LocalCluster ``client="auto"`` started, kept for this process's next sweeps while its workers live, once
#: :func:`keep_sweep_cluster` is on (a notebook's sweeps at paper scale: each new cluster costs its start, and its
#: fresh workers would prepare again what the last ones remembered, e.g. Lab 05's lakes): client, cluster, its
#: (workers, host), and ``homes``, the worker each group key (``run_grid(group=)``) last ran on. Closed at exit, by
#: :func:`close_sweep_cluster`, or when a sweep on it fails or is interrupted (a cancelled point may still be running
#: in a worker).
_KEPT: dict = {}
_AT_EXIT: list = []
_KEEP: list = [False]
#: the group keys (``run_grid(group=)``) whose points ``client="auto"`` ran in this process while
#: :func:`keep_sweep_cluster` was on: what they prepared is remembered here, so a later sweep keeps them here too
_HERE: set = set()


def keep_sweep_cluster(keep: bool = True) -> None:
    """Whether ``client="auto"`` keeps the LocalCluster it starts for this process's next sweeps (off by default:
    a sweep's cluster is closed when the sweep ends, and its workers' memory with it). A notebook whose sweeps at
    paper scale reuse what the workers prepared turns it on in its setup cell (Lab 05: each seed's lake, prepared
    once on one worker; a group of points goes back to the worker it ran on). The kept cluster's workers start with
    :data:`MALLOC_ENV`. It is closed at exit, by :func:`close_sweep_cluster`, or by ``keep_sweep_cluster(False)``.
    Sweeps at the ``ci`` and ``default`` presets never start a cluster, so this changes nothing there."""
    if type(keep) is not bool:
        raise ValueError(f"keep={keep!r} is not allowed: give True (keep the cluster for the next sweeps) or False")
    _KEEP[0] = keep
    if not keep:
        close_sweep_cluster()


def close_sweep_cluster() -> None:
    """Close the LocalCluster ``client="auto"`` keeps between sweeps (if any); the next long sweep starts another.
    Called at exit; call it to free the workers' memory (and what they remember) before then."""
    kept = dict(_KEPT)
    _KEPT.clear()
    _HERE.clear()
    if not kept:
        return
    try:
        _close_quietly(kept["client"], kept["cluster"])
    except Exception:  # at exit or after a failure: the cluster may be half gone already
        pass


def _kept_alive() -> bool:
    """Whether the kept cluster is running (a sweep that reaches it pays no cluster start)."""
    return bool(_KEPT) and _KEPT["client"].status == "running" and \
        getattr(_KEPT["cluster"].status, "name", "") == "running"


def _kept_cluster(workers: int | None) -> dict:
    """The cluster ``client="auto"`` keeps (see :data:`_KEPT`): the running one if it has this size and host,
    else a new one (the old one closed)."""
    import atexit

    shape = (workers or _machine_workers(), _dask_host())
    if _KEPT:
        if _KEPT["shape"] == shape and _KEPT["client"].status == "running" and \
                getattr(_KEPT["cluster"].status, "name", "") == "running":
            return _KEPT
        close_sweep_cluster()
    client, cluster, _ = _open_client("local", shape[0])
    _KEPT.update(client=client, cluster=cluster, shape=shape, homes={})
    if not _AT_EXIT:
        atexit.register(close_sweep_cluster)
        _AT_EXIT.append(True)
    return _KEPT


def _close_quietly(dask_client, cluster) -> None:
    """Close a sweep's client and its LocalCluster (if any) without the page of INFO lines closing logs."""
    import logging

    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        dask_client.close()
        if cluster is not None:
            cluster.close()
    finally:
        quiet.setLevel(level)

