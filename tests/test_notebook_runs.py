"""The retry of `cluster_sim.reproduce.execute_notebook` (the suite's executions and `make reproduce`): a kernel
that died before it started (a TCP port taken between jupyter_client choosing it and the kernel binding it) is
started again; a notebook's own error is kept."""

import pytest

from cluster_sim import reproduce
from notebook_runs import ROOT, NotebookRun, execute

RUN = NotebookRun(ROOT / "notebooks" / "00_cluster_sim_tour.ipynb")


def _papermill_failing(monkeypatch, errors):
    calls = []

    def fake(*args, **kwargs):
        calls.append(args)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]

    monkeypatch.setattr("papermill.execute_notebook", fake)
    return calls


def test_a_kernel_that_died_before_it_started_is_started_again(monkeypatch, tmp_path):
    died = RuntimeError("Kernel died before replying to kernel_info")
    calls = _papermill_failing(monkeypatch, [died, died])
    assert execute(RUN, tmp_path).error is None and len(calls) == 3


def test_the_retries_end_and_the_last_error_is_kept(monkeypatch, tmp_path):
    died = RuntimeError("Kernel died before replying to kernel_info")
    calls = _papermill_failing(monkeypatch, [died] * 5)
    assert execute(RUN, tmp_path).error is died and len(calls) == 1 + reproduce.KERNEL_START_RETRIES


@pytest.mark.parametrize("error", [RuntimeError("a cell failed"), ValueError("Kernel died before replying to kernel_info")])
def test_any_other_error_is_the_notebooks_and_is_not_run_again(monkeypatch, tmp_path, error):
    calls = _papermill_failing(monkeypatch, [error])
    assert execute(RUN, tmp_path).error is error and len(calls) == 1


def test_make_reproduce_starts_a_kernel_again_too(monkeypatch, tmp_path):
    died = RuntimeError("Kernel died before replying to kernel_info")
    calls = _papermill_failing(monkeypatch, [died])
    lab = reproduce.execute(RUN.path, "ci", tmp_path, timeout=60)
    assert lab.error is None and len(calls) == 2
