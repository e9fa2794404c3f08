"""Settings and fixtures for the whole test session.

Lab sweeps go through :func:`cluster_sim.sweep.run_grid`, which caches results on disk. A test must
exercise the code, not read what an earlier run left in the user's cache, so each run (its xdist
workers, and the notebook kernels they start, which inherit the environment) gets an empty cache
of its own.

``executed`` is the notebook execution layer's fixture (tests/notebook_runs.py): each notebook is
executed once per preset in a run, and every check that needs it reads that one execution.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

from notebook_runs import Execution, NotebookRun, execute

# Bytecode is cached for the run even where the environment turns it off (PYTHONDONTWRITEBYTECODE, set on this
# machine's images): a run starts ~90 kernels, and without pyc files each compiles every cluster_sim module it
# imports again (a kernel's start and import of the labs: 1.7-2.1 s of CPU against 1.5-1.6 s), and each worker
# rewrites and compiles every test module when it collects (16.6 s of CPU against 9.6 s). Set here, before the test
# modules are imported, and unset in the environment every kernel and subprocess of the run inherits. Python writes
# the pyc files atomically (concurrent writers are safe) into __pycache__ (git-ignored), or none where it cannot.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

#: the run's own sweep cache, made by the first process of a run (pytest itself, or xdist's controller) and inherited
#: by its workers: one cache for the run, so a pool one worker computed (a notebook's claims, executed in a kernel
#: that inherits it) is read, not computed again, by the other worker's test of the same claims (tests/engine's tour
#: claims, tests/shaper's, tests/wing's Lab 04 seeds) or by the tour's seed-override run, whose pool shares all but
#: three seeds. Entries are keyed by what computes them (the code's fingerprint, cluster_sim/sweep/cache.py), so an entry
#: is what the code under test computes, and concurrent writers are safe (tests/test_sweep.py).
RUN_CACHE = "CLUSTER_SIM_TEST_RUN_SWEEP_CACHE"
#: the cache this process made, removed when its run ends (``pytest_unconfigure``): every run makes one, and a
#: developer's runs left them in the temporary folder (511 of them, 625 MB, on this machine). A cache given from
#: outside (the variable already set, as xdist's workers and the notebook kernels inherit it) is its maker's to remove.
OWN_RUN_CACHE = None if os.environ.get(RUN_CACHE) else tempfile.mkdtemp(prefix="cluster_sim-sweeps-")
if OWN_RUN_CACHE:
    os.environ[RUN_CACHE] = OWN_RUN_CACHE
os.environ["CLUSTER_SIM_SWEEP_CACHE"] = os.environ[RUN_CACHE]
# Sweeps run in the process that asks for them: the two xdist workers already use both cores, and a
# notebook's sweep that starts its own Dask cluster under that load only adds start-up time. Tests of
# the Dask routes pass client= explicitly.
os.environ.setdefault("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")

# Hypothesis: `make test` (and so CI, .ci/run) loads the "ci" profile, whose examples are a function of each test's
# code (derandomize): a run is reproducible, and a failure in CI is the same failure on a student's or a reviewer's
# machine. Each test keeps its own max_examples; a developer's plain `pytest` keeps hypothesis' random search (and
# its example database), which explores new examples on each run. HYPOTHESIS_PROFILE=ci chooses it by hand.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default"))

# Tests compare the predictions' answers with what the runs show, some in session fixtures (the nbgrader round trip
# types a wrong prediction): the answers are open for the whole session. A student's notebook sees them sealed until
# a graded attempt; tests/test_predict.py checks the seal (its ``sealed`` fixture), and the library's doctest seals them
# for its own example.
from cluster_sim.predict import reveal_answers  # noqa: E402

reveal_answers()


def pytest_unconfigure(config):
    """The run's own sweep cache goes with the run (after xdist's workers have ended: the controller unconfigures
    last). A process started ahead that still writes into it can leave a file behind; that is not an error."""
    if OWN_RUN_CACHE:
        shutil.rmtree(OWN_RUN_CACHE, ignore_errors=True)


@pytest.fixture
def ahead_gate_open(monkeypatch):
    """Where a notebook at ``paper`` starts work ahead on the second core (``cluster_sim.sweep.start_ahead``,
    ``start_run_ahead``): no test-suite client, two cores, and no threshold, so a short ``ci`` run starts too."""
    from cluster_sim import sweep

    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr(sweep, "AUTO_PARALLEL_SECONDS", 0.0)
    monkeypatch.setattr(sweep.clients, "_machine_workers", lambda: 2)


@pytest.fixture
def forbid(monkeypatch):
    """``forbid(f, g, ...)`` makes each function or class raise if it is called, wherever cluster_sim
    holds it (a module that did ``from .x import f`` holds its own reference), and returns the list
    of the calls it refused. A test shows that a config is refused *before anything runs* by
    forbidding what a run would do and checking that the list stays empty: counted work, not a
    stopwatch (CONTRIBUTING.md: no test asserts on wall-clock time).
    """
    calls: list[str] = []

    def _forbid(*targets):
        for target in targets:
            name = f"{target.__module__}.{target.__qualname__}"

            def refused(*args, _name=name, **kwargs):
                calls.append(_name)
                raise AssertionError(f"{_name} ran: the refusal should have come first")

            if isinstance(target, type):  # a class: building one is running it
                monkeypatch.setattr(target, "__init__", refused)
                continue
            for module in [m for n, m in sys.modules.items() if n.split(".")[0] == "cluster_sim" and m]:
                for attr, value in list(vars(module).items()):
                    if value is target:
                        monkeypatch.setattr(module, attr, refused)
        return calls

    return _forbid


@pytest.fixture
def reference_as_student(monkeypatch):
    """The exercise checks with their delegation trap off (cluster_sim.checking.forbidden a no-op): for tests
    that grade the library's own reference, or a misconception built on it, to test a check's messages. A
    student's code never runs with it (tests/test_checking.py shows each lab's checks refuse delegation)."""
    from contextlib import nullcontext

    import cluster_sim.checking as checking

    monkeypatch.setattr(checking, "forbidden", lambda *refs, **kw: nullcontext())


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """``executed(run)``: the :class:`Execution` of a :class:`NotebookRun`, executed on first use."""
    done: dict[NotebookRun, Execution] = {}

    def get(run: NotebookRun) -> Execution:
        if run not in done:
            done[run] = execute(run, tmp_path_factory.mktemp("executed"))
        return done[run]

    return get


@pytest.fixture(scope="session")
def dask_client():
    """One two-worker LocalCluster (separate processes, the dashboard on 127.0.0.1) for every test that only needs a
    cluster to send work to: starting one costs 2-12 s on a loaded 2-core machine, and the suite started four. Tests
    that ask for it are marked ``@pytest.mark.xdist_group("dask")``, so under ``--dist loadgroup`` one xdist worker
    starts it once. A test that leaves state on the workers clears it first (tests/test_sweep.py's ``_PREPARED``) or
    counts a difference (tests/capstone's plans); tests of a cluster's start-up, shutdown or interruption start their
    own."""
    import logging

    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client
