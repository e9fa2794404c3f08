"""The notebook execution layer: each notebook executed by papermill once per preset in a test run.

:class:`NotebookRun` names one execution (a notebook, a preset, overrides; always ``interactive=False``);
the ``executed`` fixture (tests/conftest.py) executes it on first use and hands the same
:class:`Execution` to every check that needs it: its closing claims, its figures, its outputs, the
``make reproduce`` report. The checks of one run carry the xdist group :attr:`NotebookRun.group`, so
``pytest -n 2 --dist loadgroup`` (``make test``) sends them to one worker, whose session holds the
executed notebook; without xdist the session is the whole run. (Under another ``--dist`` mode a
notebook may be executed once per worker: slower, never wrong.)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "cluster_sim"  # the project's kernel, registered by `make setup` in .venv (never another Python)
#: seconds a cell may take: a guard against a hung kernel (it fails the test instead of hanging CI), never a speed
#: check. Lab 05's claims cell (404 runs at ci, cold cache) took 259 s at load average 14 and passed 300 s at 20,
#: failing both of its executions on the shared 2-core machine; nbgrader's guard (test_nbgrader.HANG) is an hour
CELL_TIMEOUT = 1800
#: how a kernel ends once its notebook has run (nbclient's ``shutdown_kernel``): every output is in by then, and
#: a graceful shutdown (atexit hooks, the interpreter's teardown) cost 1-3 s of each execution; the kernel's
#: process group is killed, so nothing it started outlives it. The nbgrader round trip sets the same.
SHUTDOWN = "immediate"


@dataclass(frozen=True)
class NotebookRun:
    """One headless execution of a notebook: papermill, ``interactive=False``, a preset and overrides."""

    path: Path
    preset: str = "ci"
    overrides: tuple[tuple[str, object], ...] = ()

    @property
    def id(self) -> str:
        extra = "".join(f"+{k}={v}" for k, v in self.overrides)
        return f"{self.path.relative_to(ROOT)}@{self.preset}{extra}"

    @property
    def group(self) -> str:
        """The xdist group of every check that reads this execution (one worker executes it once)."""
        return "papermill-" + self.id.replace("@", "-").replace("/", "-")

    @property
    def parameters(self) -> dict:
        """What papermill injects after the notebook's ``parameters`` cell."""
        params = {"interactive": False, "preset": self.preset}
        if self.overrides:
            params["overrides"] = dict(self.overrides)
        return params

    def param(self, *marks) -> object:
        """A ``pytest.param`` of this run for a check, in the run's xdist group."""
        return pytest.param(self, id=self.id, marks=[pytest.mark.xdist_group(self.group), *marks])


@dataclass
class Execution:
    run: NotebookRun
    output: Path
    seconds: float
    error: BaseException | None = None
    _notebook: object = field(default=None, repr=False)

    @property
    def notebook(self):
        """The executed notebook (outputs included); fails the calling check if the run failed."""
        if self.error is not None:
            first = (str(self.error).strip().splitlines() or [type(self.error).__name__])[-1]
            pytest.fail(f"{self.run.id} did not execute ({first[:300]}); its execution test shows why", pytrace=False)
        if self._notebook is None:
            import nbformat

            self._notebook = nbformat.read(self.output, as_version=4)
        return self._notebook


def execute(run: NotebookRun, folder: Path) -> Execution:
    """Execute ``run`` with papermill into ``folder``; the failure, if any, is kept, not raised.

    No progress bar and no run-time estimate (``CLUSTER_SIM_PROGRESS=off``, tested in
    tests/test_progress.py): whatever lands on stderr is then a warning a student would see, never a
    text bar that a slow machine happened to open. Every figure a cell draws is checked in the kernel
    (``CLUSTER_SIM_LAYOUT_CHECK=on``, :mod:`cluster_sim.figure_watch`): its layout record is in the
    cell's output, for tests/notebooks/test_figures.py to read without running the notebook again.
    """
    from cluster_sim.reproduce import execute_notebook

    out = folder / run.path.name
    settings = {"CLUSTER_SIM_PROGRESS": "off", "CLUSTER_SIM_LAYOUT_CHECK": "on"}  # the kernel inherits them
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    t0 = time.perf_counter()
    error = None
    try:
        execute_notebook(run.path, out, parameters=run.parameters, kernel_name=KERNEL, execution_timeout=CELL_TIMEOUT,
                         cwd=str(run.path.parent), progress_bar=False, shutdown_kernel=SHUTDOWN)
    except Exception as err:  # noqa: BLE001 - kept for every check of this run to report
        error = err
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    seconds = time.perf_counter() - t0
    print(f"{run.id} executed in {seconds:.1f} s")
    return Execution(run, out, seconds, error)


