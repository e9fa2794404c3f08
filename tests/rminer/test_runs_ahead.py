"""Issue 33, Labs 08 and 09 at ``paper``: the static figure's paper-scale run starts ahead, in a process of its own,
at the setup cell (:func:`cluster_sim.rminer.experiments.run_ahead`, :func:`cluster_sim.sweep.ahead.start_run_ahead`),
and the figure's cell takes its result. It is the result ``run(config)`` gives in the kernel, field for field, so the
figure draws the same data; nothing starts at ``ci``, ``default``, in the test suite or on one core; a run that fails
ahead is said and computed in the kernel."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from cluster_sim import sweep
from cluster_sim.rminer import RMinerConfig, run
from cluster_sim.rminer.experiments import run_ahead
from cluster_sim.rminer.plots import plot_run, plot_shadow_run
from cluster_sim.sweep.ahead import RunAhead, start_run_ahead

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: the configs the static cells ran before (round 13): Lab 08's and Lab 09's
STATIC = {"08_rminer_shadow_resources": lambda c: c.replace(update_delay=1.0, mean_task_duration=4.0),
          "09_rminer_resource_miner": lambda c: c.replace(mode="safe", workload_level=2.0)}


def same(a, b, where="result") -> None:
    """``a`` and ``b`` equal all the way down (arrays element for element, floats bit for bit), or an
    AssertionError naming the first field that differs."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), \
            f"{where}: arrays differ"
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), f"{where}: {a!r} vs {b!r}"
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} vs {b!r}"


def figure_data(fig) -> list:
    """Every line's and collection's data of a figure, axis by axis."""
    out = []
    for ax in fig.axes:
        out.append([(np.asarray(line.get_xdata(), dtype=float).tolist(), np.asarray(line.get_ydata(), dtype=float).tolist())
                    for line in ax.get_lines()])
        out.append([np.asarray(c.get_offsets()).tolist() for c in ax.collections])
        out.append([(p.get_x(), p.get_height()) for p in ax.patches if hasattr(p, "get_height")])
    return out


@pytest.mark.parametrize("mode", ["none", "safe"])
def test_the_run_taken_ahead_is_the_run_computed_here(ahead_gate_open, tmp_path, capsys, mode):
    """The result that comes back from the process ahead equals run(config) in this process, every field, series
    and count, and both static figures draw the same data from it."""
    config = RMinerConfig.ci().replace(horizon=8.0, mode=mode, workload_level=2.0)
    ahead = run_ahead(config, cache=tmp_path)
    assert ahead.started, "the gate was open: the run should have started in a process of its own"
    taken = ahead.result()
    assert "on the second core: taken" in capsys.readouterr().out
    assert ahead.result() is taken  # asked again, the same object
    here = run(config)
    same(taken, here)
    for plot in (plot_shadow_run, plot_run):
        assert figure_data(plot(taken)) == figure_data(plot(here))


def test_nothing_starts_at_ci_default_in_the_test_suite_or_on_one_core(tmp_path, monkeypatch):
    """The notebooks' static configs at ci and default take seconds: nothing starts (the cell runs it, as before).
    At paper nothing starts in the test suite ($CLUSTER_SIM_SWEEP_CLIENT), on one core or without a cache."""
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.setattr(sweep.clients, "_machine_workers", lambda: 2)
    for preset in ("ci", "default"):
        for static in STATIC.values():
            assert not run_ahead(static(RMinerConfig.from_preset(preset)), cache=tmp_path).started
    paper = STATIC["09_rminer_resource_miner"](RMinerConfig.paper())
    assert not run_ahead(paper, cache=False).started
    monkeypatch.setattr(sweep.clients, "_machine_workers", lambda: 1)
    assert not run_ahead(paper, cache=tmp_path).started
    monkeypatch.setattr(sweep.clients, "_machine_workers", lambda: 2)
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")
    assert not run_ahead(paper, cache=tmp_path).started


def test_a_run_not_started_is_computed_when_its_cell_asks(monkeypatch):
    calls = []
    ahead = start_run_ahead(lambda c: calls.append(c) or "result", "config", estimate=lambda c: 1.0, cache=False)
    assert isinstance(ahead, RunAhead) and not ahead.started and not calls
    assert ahead.result() == "result" and calls == ["config"]


def broken_run(config):
    """A run that fails wherever it runs."""
    raise RuntimeError(f"no cluster for {config.machines} machines")


def kill_itself(config):
    """A run whose process dies before it sends anything (as the out-of-memory killer would do)."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def test_a_run_that_fails_ahead_is_said_and_computed_here(ahead_gate_open, tmp_path, capsys):
    """The process ahead dies: the cell says so and computes the run here, the same result as run(config)."""
    config = RMinerConfig.ci().replace(horizon=5.0)
    calls = []

    ahead = start_run_ahead(kill_itself, config, estimate=lambda c: 100.0, cache=tmp_path)
    assert ahead.started
    ahead.run = lambda c: calls.append(c) or run(c)  # what the kernel computes instead
    result = ahead.result()
    out = capsys.readouterr().out
    assert "the run ahead failed (the process ended without a result" in out and "computing it here" in out
    assert calls == [config]
    same(result, run(config))


def test_a_run_that_raises_ahead_raises_in_the_cell_as_it_would_have(ahead_gate_open, tmp_path, capsys):
    config = RMinerConfig.ci().replace(horizon=5.0)
    ahead = start_run_ahead(broken_run, config, estimate=lambda c: 100.0, cache=tmp_path)
    assert ahead.started
    with pytest.raises(RuntimeError, match="no cluster for"):
        ahead.result()
    assert "the run ahead failed (RuntimeError: no cluster for" in capsys.readouterr().out


def test_a_process_that_cannot_start_is_said_and_the_cell_computes_the_run(ahead_gate_open, tmp_path, capsys,
                                                                           monkeypatch):
    import multiprocessing

    def refused(method):
        raise OSError("no processes left")

    monkeypatch.setattr(multiprocessing, "get_context", refused)
    config = RMinerConfig.ci().replace(horizon=5.0)
    ahead = run_ahead(config, cache=tmp_path)
    assert not ahead.started
    assert "could not start the run ahead (OSError: no processes left)" in capsys.readouterr().out
    same(ahead.result(), run(config))


def test_a_run_ahead_nobody_takes_ends_with_its_handle(ahead_gate_open, tmp_path):
    """A setup cell run again replaces its handle: the old run's process is ended, not left holding a core."""
    ahead = run_ahead(RMinerConfig.paper(), cache=tmp_path)  # minutes of work: still running when dropped
    assert ahead.started
    process = ahead._process
    del ahead
    process.join(30)
    assert not process.is_alive() and process.exitcode is not None


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="estimate"):
        start_run_ahead(run, RMinerConfig.ci(), estimate=3.0)


def _cells(name):
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("name", sorted(STATIC))
def test_the_notebooks_static_cell_takes_the_run_started_ahead_of_the_config_it_ran_before(name):
    """The setup cell starts the static figure's run of the config the cell ran before, and the static cell draws
    that run's result (nothing else runs it)."""
    cells = _cells(name)
    setup = next(c for c in cells if "RMinerConfig.from_preset(preset" in c)
    namespace = {}
    exec("from cluster_sim.rminer import RMinerConfig\nconfig = RMinerConfig.paper()\n"
         + next(line for line in setup.splitlines() if line.startswith("static_config =")), namespace)
    assert namespace["static_config"] == STATIC[name](RMinerConfig.paper())
    assert "static_run = run_ahead(static_config)" in setup
    static = [c for c in cells if "static_run.result()" in c]
    assert len(static) == 1 and not any("run(config.replace(" in c for c in cells if "plot_" in c)
