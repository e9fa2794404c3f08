"""run_grid: the same frame in-process and on a 2-worker Dask cluster, resumes from its cache,
reports failed points without losing the others, and refuses a bad grid up front.

One LocalCluster serves the session (tests/conftest.py's ``dask_client``: starting one costs seconds); the xdist
group keeps these tests, and the others that use it, in one pytest-xdist worker under ``--dist loadgroup``.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import hashlib
import json
import math
import multiprocessing
import os
import pickle
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import cloudpickle
import numpy as np
import pandas as pd
import pytest

from cluster_sim.engine import ClusterConfig, run
from cluster_sim.sweep import SweepError, cache_key, clients, execute, run_grid

pytestmark = pytest.mark.xdist_group("dask")

# the workers cannot import this test module by name: ship its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

BASE = ClusterConfig.ci().replace(horizon=30.0)
GRID = {"schedulers": [1, 2], "update_delay": [0.0, 2.0]}


@pytest.fixture(autouse=True)
def fresh_paces(monkeypatch):
    """Each test a fresh process as far as auto's remembered paces go (no test depends on another's sweeps)."""
    import cluster_sim.sweep as sweep

    monkeypatch.setattr(sweep, "_PACES", {})


@pytest.fixture
def calls(monkeypatch):
    """The configs run_grid evaluates. (Counted outside the run function: a run function appending to
    a global list would change its own cache key at every call, the list being data it reads.)"""
    seen = []
    evaluate = execute._evaluate

    def counted(config, run, metrics):
        seen.append(config)
        return evaluate(config, run, metrics)

    monkeypatch.setattr(execute, "_evaluate", counted)
    # the count reaches run_grid's points (else a test's "nothing ran" would hold whatever ran)
    run_grid(cheap, BASE, {"schedulers": [1]}, client="inprocess", cache=False, progress=False)
    assert len(seen) == 1, "run_grid evaluates its points through another _evaluate than the one counted"
    seen.clear()
    return seen


def fails_at_three_schedulers(config):
    if config.schedulers == 3:
        raise RuntimeError(f"no room for {config.schedulers} schedulers")
    return run(config)


def headline(result):
    m = result.metrics
    return {"utilisation": m.utilisation, "conflicts": m.conflicts, "mean_job_wait": m.mean_job_wait}


def test_a_two_worker_cluster_gives_the_frame_in_process_execution_gives(dask_client):
    here = run_grid(run, BASE, GRID, seeds=2, client="inprocess", cache=False, progress=False)
    there = run_grid(run, BASE, GRID, seeds=2, client=dask_client, cache=False, progress=False)
    assert there.attrs["sweep"]["where"] == "client" and here.attrs["sweep"]["where"] == "inprocess"
    pd.testing.assert_frame_equal(here, there)
    # one row per (point, seed), in grid order with the seed fastest, and the engine's metrics in it
    assert len(here) == 8
    assert list(here.columns[:3]) == ["schedulers", "update_delay", "seed"]
    assert here[["schedulers", "update_delay", "seed"]].values.tolist() == [
        [s, d, k] for s in (1, 2) for d in (0.0, 2.0) for k in (0, 1)]
    for name in ("utilisation", "conflicts", "mean_job_wait", "conflict_rate", "machines", "horizon"):
        assert name in here.columns, name
    # each row is what run(config) gives directly
    row = here.iloc[5]
    direct = run(BASE.replace(schedulers=int(row.schedulers), update_delay=row.update_delay, seed=int(row.seed)))
    assert row.utilisation == direct.metrics.utilisation and row.conflicts == direct.metrics.conflicts


def test_a_rerun_computes_nothing_and_a_wider_grid_only_its_new_points(tmp_path, calls):
    calls.clear()
    first = run_grid(run, BASE, GRID, client="inprocess", cache=tmp_path, progress=False)
    assert len(calls) == 4 and first.attrs["sweep"]["computed"] == 4
    calls.clear()
    again = run_grid(run, BASE, GRID, client="inprocess", cache=tmp_path, progress=False)
    assert calls == [] and again.attrs["sweep"]["cached"] == 4
    pd.testing.assert_frame_equal(first, again)
    # a wider sweep computes only its new points
    wider = {**GRID, "schedulers": [1, 2, 4]}
    grown = run_grid(run, BASE, wider, client="inprocess", cache=tmp_path, progress=False)
    assert [c.schedulers for c in calls] == [4, 4]
    pd.testing.assert_frame_equal(grown.iloc[:4], first)
    # another metrics function is another cache entry
    calls.clear()
    run_grid(run, BASE, GRID, metrics=headline, client="inprocess", cache=tmp_path, progress=False)
    assert len(calls) == 4
    assert cache_key(BASE, run) != cache_key(BASE, run, headline)
    assert cache_key(BASE, run) != cache_key(BASE.replace(seed=1), run)


def test_cache_false_and_the_environment_variable(tmp_path, monkeypatch, calls):
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CACHE", str(tmp_path / "env"))
    calls.clear()
    run_grid(run, BASE, {"schedulers": [1]}, client="inprocess", progress=False)
    run_grid(run, BASE, {"schedulers": [1]}, client="inprocess", progress=False)
    assert len(calls) == 1 and any((tmp_path / "env").rglob("*.json"))
    run_grid(run, BASE, {"schedulers": [1]}, client="inprocess", cache=False, progress=False)
    assert len(calls) == 2


@pytest.mark.parametrize("where", ["inprocess", "cluster"])
def test_a_failing_point_is_reported_with_its_config_and_the_others_are_kept(where, tmp_path, dask_client):
    client = dask_client if where == "cluster" else "inprocess"
    grid = {"schedulers": [1, 3, 2]}
    with pytest.raises(SweepError) as info:
        run_grid(fails_at_three_schedulers, BASE, grid, seeds=2, metrics=headline, client=client,
                 cache=tmp_path, progress=False)
    err = info.value
    message = str(err)
    assert "2 of 6 runs" in message
    assert "schedulers=3, seed=0: RuntimeError: no room for 3 schedulers" in message
    assert "schedulers=3, seed=1" in message
    frame = err.frame
    assert len(frame) == 6 and frame["error"].notna().sum() == 2
    ok = frame[frame["error"].isna()]
    assert ok["utilisation"].notna().all() and frame.loc[frame.schedulers == 3, "utilisation"].isna().all()
    assert list(err.failed.schedulers) == [3, 3]
    # the points that finished are cached: recording instead of raising recomputes only the failures
    again = run_grid(fails_at_three_schedulers, BASE, grid, seeds=2, metrics=headline, client="inprocess",
                     cache=tmp_path, on_error="record", progress=False)
    assert again.attrs["sweep"]["cached"] == 4 and again.attrs["sweep"]["computed"] == 2
    pd.testing.assert_frame_equal(again, frame)


@pytest.mark.parametrize("grid, words", [
    ({"schedulerz": [1, 2]}, ["'schedulerz'", "not a ClusterConfig field", "schedulers"]),
    ({"update_delay": [1.0, -5.0]}, ["grid point 1", "update_delay=-5.0", "out of range", "0 <= update_delay"]),
    ({"placement": ["first_fit", "nearest"]}, ["grid point 1", "'nearest'", "choose one of"]),
    ({"schedulers": 2}, ["grid['schedulers']=2", "not a list"]),
    ({"schedulers": []}, ["grid['schedulers'] is empty"]),
    ([{"schedulers": 1}, {"seed": 3}], ["grid point 1", "sets seed, and seeds= sets it too"]),
])
def test_a_bad_grid_is_refused_before_anything_runs(grid, words, calls):
    calls.clear()
    with pytest.raises(ValueError) as info:
        run_grid(run, BASE, grid, seeds=2, client="inprocess", cache=False, progress=False)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    assert calls == []


@pytest.mark.parametrize("kwargs, words", [
    (dict(seeds=0), ["seeds=0", ">= 1"]),
    (dict(seeds="3"), ["seeds='3'"]),
    (dict(client="laptop"), ["client='laptop'", "inprocess"]),
    (dict(on_error="ignore"), ["on_error='ignore'", "record"]),
    (dict(workers=0), ["workers=0"]),
    (dict(cache=3), ["cache=3"]),
])
def test_bad_arguments_are_refused_with_their_name(kwargs, words):
    with pytest.raises(ValueError) as info:
        run_grid(run, BASE, {"schedulers": [1]}, **{"progress": False, **kwargs})
    for w in words:
        assert w in str(info.value)


def test_metrics_from_a_dataclass_result_and_its_properties():
    from cluster_sim.shaper import ShaperConfig
    from cluster_sim.shaper.experiments import run_job

    df = run_grid(run_job, ShaperConfig.ci(), {"mode": ["conservative", "aggressive"]}, client="inprocess",
                  cache=False, progress=False)
    for mode, row in zip(("conservative", "aggressive"), df.itertuples()):
        r = run_job(ShaperConfig.ci().replace(mode=mode))
        assert (row.savings, row.slowdown, row.released) == (r.savings, r.slowdown, r.released)
    assert np.isfinite(df["savings"]).all()


def test_auto_runs_a_short_sweep_here_and_the_environment_names_a_cluster(dask_client, monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    here = run_grid(run, BASE, GRID, cache=False, progress=False)
    assert here.attrs["sweep"]["where"] == "inprocess"
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_client.scheduler.address)
    there = run_grid(run, BASE, GRID, cache=False, progress=False)
    assert there.attrs["sweep"]["where"] == dask_client.scheduler.address
    pd.testing.assert_frame_equal(here, there)


def test_an_interrupted_sweep_leaves_no_workers_and_resumes_from_its_cache(monkeypatch, tmp_path, calls):
    import distributed

    import cluster_sim.sweep as sweep

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.setattr(sweep, "AUTO_PARALLEL_SECONDS", 0.0)  # every sweep is "long": auto starts a cluster
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    before = {p.pid for p in multiprocessing.active_children()}
    real = distributed.as_completed

    def interrupted(futures, *args, **kwargs):  # Ctrl-C once the cluster has returned one point
        for future in real(futures, *args, **kwargs):
            yield future
            raise KeyboardInterrupt

    monkeypatch.setattr(distributed, "as_completed", interrupted)
    grid = {"schedulers": [1, 2, 3, 4]}
    with pytest.raises(KeyboardInterrupt):
        run_grid(run, BASE, grid, workers=1, cache=tmp_path, progress=False)
    stray = {p.pid for p in multiprocessing.active_children()} - before
    assert stray == set(), f"worker processes left running: {stray}"
    # the probe ran here and one point came back from the cluster: both are kept
    calls.clear()
    resumed = run_grid(run, BASE, grid, client="inprocess", cache=tmp_path, progress=False)
    assert resumed.attrs["sweep"]["cached"] == 2 and len(calls) == 2
    fresh = run_grid(run, BASE, grid, client="inprocess", cache=False, progress=False)
    pd.testing.assert_frame_equal(resumed, fresh)


def cheap(config):
    return {"x": float(config.schedulers)}


def test_progress_bars_count_every_point_once_and_short_sweeps_draw_none(capsys, monkeypatch):
    import cluster_sim.sweep as sweep

    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "text")
    run_grid(cheap, BASE, GRID, client="inprocess", cache=False, progress=True)
    assert "4/4" in capsys.readouterr().err
    run_grid(cheap, BASE, GRID, client="inprocess", cache=False)  # progress=None: a short sweep, no bar
    assert "sweep" not in capsys.readouterr().err
    monkeypatch.setattr(sweep, "PROGRESS_AFTER_SECONDS", 0.0)  # every sweep "long": the bar opens mid-way
    run_grid(cheap, BASE, GRID, client="inprocess", cache=False)
    err = capsys.readouterr().err
    assert "4/4" in err and "5/4" not in err
    monkeypatch.setenv("CLUSTER_SIM_PROGRESS", "loud")
    with pytest.raises(ValueError, match="CLUSTER_SIM_PROGRESS='loud' is not allowed: choose one of 'auto', 'text', 'off'"):
        run_grid(cheap, BASE, GRID, client="inprocess", cache=False)


# ---- the cache key: every input that decides a point's result is in it -----------------------------------
@dataclasses.dataclass(frozen=True)
class XConfig:
    """A one-field config: the tests below vary the function, not the config."""
    x: float = 1.0


XBASE = XConfig()
XGRID = {"x": [1.0, 2.0]}


def scaled(config, k):
    return {"y": k * config.x}


def double(config):
    return {"y": 2 * config.x}


def scaled_by(k):
    def scale(config):
        return {"y": k * config.x}
    return scale


FACTOR = 1.0


def by_factor(config):
    return {"y": FACTOR * config.x}


def helper(x):
    return x


def _twice(x):
    return 2 * x


def via_helper(config):
    return {"y": helper(config.x)}


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, config):
        return {"y": self.k * config.x}


def _set_global(monkeypatch, name, value):
    monkeypatch.setattr(sys.modules[__name__], name, value)


# (the run function, then a change to it that doubles its results)
CHANGES = {
    "partial": lambda mp: (functools.partial(scaled, k=1.0), lambda: functools.partial(double)),
    "closure": lambda mp: (scaled_by(1.0), lambda: scaled_by(2.0)),
    "global": lambda mp: (by_factor, lambda: _set_global(mp, "FACTOR", 2.0) or by_factor),
    "helper": lambda mp: (via_helper, lambda: mp.setattr(helper, "__code__", _twice.__code__) or via_helper),
    "object": lambda mp: (Scale(1.0), lambda: Scale(2.0)),
}


def sweep_x(fn, cache, **kwargs):
    return run_grid(fn, XBASE, XGRID, client="inprocess", cache=cache, progress=False, **kwargs)


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_run_function_is_computed_again_not_read_from_the_cache(change, tmp_path, monkeypatch):
    first, changed = CHANGES[change](monkeypatch)
    assert sweep_x(first, tmp_path).y.tolist() == [1.0, 2.0]
    # the same function again (or an equal one built afresh) is read back
    same = CHANGES[change](monkeypatch)[0]
    assert sweep_x(same, tmp_path).attrs["sweep"]["cached"] == 2
    again = sweep_x(changed(), tmp_path)
    assert again.y.tolist() == [2.0, 4.0] and again.attrs["sweep"]["computed"] == 2


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_metrics_function_is_computed_again(change, tmp_path, monkeypatch):
    first, changed = CHANGES[change](monkeypatch)

    def as_metrics(fn):  # the metrics function gets the config back as the "result"
        return run_grid(lambda config: config, XBASE, XGRID, metrics=fn, client="inprocess", cache=tmp_path,
                        progress=False)

    assert as_metrics(first).y.tolist() == [1.0, 2.0]
    assert as_metrics(changed()).y.tolist() == [2.0, 4.0]


NOTEBOOK_CELL = """
K = {k}

def helper(x):
    return {body}

def run_cell(config):
    return {{"y": helper(config.x)}}
"""


def notebook_cell(number, k=1.0, body="K * x"):
    """The functions a notebook cell defines: module __main__, the cell's globals, its own file name."""
    namespace = {"__name__": "__main__"}
    source = "\n" * number + NOTEBOOK_CELL.format(k=k, body=body)  # a rerun cell sits on other lines
    exec(compile(source, f"<ipython-input-{number}>", "exec"), namespace)
    return namespace["run_cell"]


def test_a_notebooks_functions_are_keyed_by_their_code_and_the_globals_they_read(tmp_path):
    assert sweep_x(notebook_cell(1), tmp_path).attrs["sweep"]["computed"] == 2
    assert sweep_x(notebook_cell(2), tmp_path).attrs["sweep"]["cached"] == 2  # the same cell run again
    changed_global = sweep_x(notebook_cell(3, k=2.0), tmp_path)
    assert changed_global.y.tolist() == [2.0, 4.0] and changed_global.attrs["sweep"]["computed"] == 2
    changed_helper = sweep_x(notebook_cell(4, body="K * x + 1"), tmp_path)
    assert changed_helper.y.tolist() == [2.0, 3.0] and changed_helper.attrs["sweep"]["computed"] == 2


TABLE = np.zeros(5000)
FRAME = pd.DataFrame({"a": np.arange(100.0), "b": ["s"] * 100})
RECORD = XConfig(x=1.0)
NESTED = {"weights": [1.0, 2.0], "names": ("a", "b")}


def reads_data(config):
    return {"y": TABLE[4000] + FRAME.a.iloc[50] + RECORD.x + NESTED["weights"][1] + config.x}


@pytest.mark.parametrize("name, change", [
    ("TABLE", lambda t: np.where(np.arange(5000) == 4000, 1.0, t)),   # repr elides the middle of it
    ("TABLE", lambda t: t.astype(np.float32)),
    ("FRAME", lambda f: f.assign(a=f.a.where(f.index != 50, -1.0))),
    ("FRAME", lambda f: f.rename(columns={"b": "c"})),
    ("FRAME", lambda f: f.assign(a=f.a.where(f.index != 0, -0.0))),  # only the sign of a zero (1 / x differs)
    ("RECORD", lambda r: XConfig(x=2.0)),
    ("NESTED", lambda d: {**d, "weights": [1.0, 3.0]}),
])
def test_data_the_function_reads_is_in_the_key_by_value(name, change, monkeypatch):
    before = cache_key(XBASE, reads_data)
    value = getattr(sys.modules[__name__], name)
    _set_global(monkeypatch, name, copy.deepcopy(value))
    assert cache_key(XBASE, reads_data) == before, "an equal copy is the same key"
    _set_global(monkeypatch, name, change(value))
    assert cache_key(XBASE, reads_data) != before


def test_the_key_does_not_change_as_a_function_warms_up_or_in_another_process(tmp_path):
    run_cell = notebook_cell(1)
    before = cache_key(XBASE, run_cell)
    for _ in range(200):  # the interpreter specialises a hot function's bytecode in place
        run_cell(XBASE)
    assert cache_key(XBASE, run_cell) == before
    # string hashing differs between processes: a set's order must not reach the key
    script = ("from cluster_sim.fingerprint import fingerprint; ns = {'__name__': '__main__'};"
              "exec('MODES = {\"a\", \"b\", \"c\", \"d\", (\"e\", 1)}\\n"
              "def f(c):\\n    return {\"n\": len(MODES & {\"a\", \"e\"})}', ns);"
              "print(fingerprint(ns['f']))")
    keys = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(keys) == 1, keys


def test_what_cannot_be_fingerprinted_is_refused_unless_the_sweep_names_its_key(tmp_path):
    numbers = (i for i in range(100))
    refused = {
        "a generator": lambda config: {"y": config.x + next(numbers)},
        "an open file": Scale(open(os.devnull)),
        "a random generator": Scale(np.random.default_rng(1)),
    }
    for what, fn in refused.items():
        with pytest.raises(ValueError) as info:
            sweep_x(fn, tmp_path)
        message = str(info.value)
        for words in ("run=", what, "cache_key=", "cache=False"):
            assert words in message, (words, message)
    assert "'numbers'" in str(pytest.raises(ValueError, sweep_x, refused["a generator"], tmp_path).value)
    assert "'k'" in str(pytest.raises(ValueError, sweep_x, refused["an open file"], tmp_path).value)
    refused["an open file"].k.close()
    # an explicit key replaces the functions' fingerprint; without a cache nothing needs one
    assert sweep_x(refused["a generator"], tmp_path, cache_key="numbers, v1").attrs["sweep"]["computed"] == 2
    assert sweep_x(refused["a generator"], False).attrs["sweep"]["computed"] == 2
    assert sweep_x(double, tmp_path, cache_key="numbers, v1").attrs["sweep"]["cached"] == 2  # the user's word
    assert sweep_x(double, tmp_path, cache_key="double, v1").attrs["sweep"]["computed"] == 2


@pytest.mark.parametrize("key", [3, "", b"v1"])
def test_a_bad_cache_key_is_refused(key):
    with pytest.raises(ValueError, match=r"cache_key=.* is not allowed"):
        sweep_x(double, False, cache_key=key)


def test_the_keys_source_digest_covers_every_module_of_the_package():
    """Editing any lab's code starts its points afresh: the digest in every key is of each .py file of cluster_sim
    (its path and bytes), not only of the sweep's own package, which is a folder of cluster_sim."""
    import cluster_sim
    from cluster_sim.sweep.cache import _source_digest

    root = Path(cluster_sim.__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    assert _source_digest() == h.hexdigest()[:16]


def _module_names(module, source: str, name: str) -> list[str]:
    """The module-level functions a name passed to run_grid may stand for: itself, or, for a local
    variable (``lab, study, claims = _lab(config)``), every function the module defines."""
    import inspect

    if hasattr(module, name):
        return [name]
    return [n for n, f in vars(module).items() if inspect.isfunction(f) and f.__module__ == module.__name__]


def test_every_lab_sweep_function_has_a_fingerprint():
    """The run and metrics functions every lab passes to run_grid (found in the package's source)."""
    import ast
    import importlib

    import cluster_sim
    from cluster_sim.sweep.cache import _functions_fingerprint

    root = Path(cluster_sim.__file__).parent
    checked = 0
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        if "run_grid(" not in source or path.relative_to(root).parts[0] == "sweep":
            continue
        module = importlib.import_module(".".join(("cluster_sim",) + path.relative_to(root).with_suffix("").parts))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_grid":
                for fn in [node.args[0]] + [k.value for k in node.keywords if k.arg == "metrics"]:
                    assert isinstance(fn, ast.Name), ast.unparse(fn)
                    for name in _module_names(module, source, fn.id):
                        assert len(_functions_fingerprint(getattr(module, name), None)) == 64, name
                        checked += 1
    assert checked >= 20, checked


# ---- the cache entries: read without running code, checked, never trusted when damaged ---------------------
def typed(config):
    return {"six": 6.0, "third": 1 / 3, "nan": math.nan, "minus_inf": -math.inf, "minus_zero": -0.0, "count": 7,
            "big": 2 ** 70, "ok": True, "name": "né ✓", "nothing": None, "x2": config.x * 2}


def everything(result):
    return result  # None too (the default protocol keeps numbers and strings only)


def sweep_typed(cache):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = run_grid(typed, XBASE, {"x": [3.0]}, metrics=everything, client="inprocess", cache=cache,
                      progress=False)
    return df, [str(w.message) for w in caught]


def entry_file(directory):
    [entry] = [p for p in directory.rglob("*") if p.is_file()]
    return entry


def assert_same_bits(df, ref):
    pd.testing.assert_frame_equal(df, ref, check_exact=True)
    assert [math.copysign(1, v) for v in (df.minus_zero[0], ref.minus_zero[0])] == [-1, -1]


def read_back(directory, key):
    """What the cache gives for a point, and the warnings it gave."""
    from cluster_sim.sweep.cache import _cache_get

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = _cache_get(directory, key)
    return values, [str(w.message) for w in caught]


def bits(values: dict) -> dict:
    return {k: struct.pack(">d", v).hex() if type(v) is float else (type(v), v) for k, v in values.items()}


def test_every_damaged_byte_of_an_entry_is_caught_or_harmless(tmp_path):
    first, _ = sweep_typed(tmp_path)
    entry = entry_file(tmp_path)
    original = entry.read_bytes()
    key = entry.stem
    stored, _ = read_back(tmp_path, key)
    assert bits(stored) == bits(typed(XConfig(x=3.0)))
    outcomes = collections.Counter()
    for i in range(len(original)):
        for mask in (1 << (i % 8), 0xFF):
            damaged = bytearray(original)
            damaged[i] ^= mask
            entry.write_bytes(bytes(damaged))
            values, warned = read_back(tmp_path, key)
            if values is not None:  # read back: only if the damage changed nothing it says
                assert bits(values) == bits(stored) and warned == [], (i, mask, warned)
                outcomes["read"] += 1
            else:
                assert len(warned) == 1 and str(entry) in warned[0], (i, mask, warned)
                outcomes["refused"] += 1
            if i % 50 == 0:  # and the whole sweep: the same frame, the point stored again
                df, warned_again = sweep_typed(tmp_path)
                assert_same_bits(df, first)
                assert df.attrs["sweep"]["computed"] == (values is None) and warned_again == warned
                assert entry.read_bytes() == original
    assert outcomes["refused"] > 0.9 * 2 * len(original), outcomes


@pytest.mark.parametrize("damage", ["truncated", "empty", "renamed", "a directory", "raw float", "overflowing float",
                                    "huge"])
def test_a_damaged_entry_is_recomputed_with_a_warning_naming_it(damage, tmp_path):
    first, _ = sweep_typed(tmp_path)
    entry = entry_file(tmp_path)
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[:len(data) // 2])
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "renamed":  # another point's entry, with a valid checksum, under this point's name
        run_grid(typed, XBASE, {"x": [4.0]}, metrics=everything, client="inprocess", cache=tmp_path, progress=False)
        other = next(p for p in tmp_path.rglob("*") if p.is_file() and p != entry)
        entry.write_bytes(other.read_bytes())
    elif damage == "a directory":
        entry.unlink()
        entry.mkdir()
    elif damage in ("raw float", "overflowing float"):  # well-formed, with a valid checksum, but not ours
        doc = json.loads(data)
        doc["payload"]["metrics"][0][1] = 6.0 if damage == "raw float" else {"float": "0x1p+99999"}
        text = json.dumps(doc["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        doc["sha256"] = hashlib.sha256(text.encode()).hexdigest()
        entry.write_text(json.dumps(doc))
    elif damage == "huge":
        entry.write_bytes(b"[" * 10_000_000)
    df, warned = sweep_typed(tmp_path)
    assert_same_bits(df, first)
    assert df.attrs["sweep"]["computed"] == 1
    assert warned and all(str(entry) in w for w in warned), warned
    if damage != "a directory":  # (where it cannot be stored again either: a second warning says so)
        assert len(warned) == 1 and entry.read_bytes() == data, warned


class Planted:
    """Unpickling this makes a directory: a stand-in for any code a planted pickle could run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (str(self.marker),)


def test_a_planted_pickle_is_never_loaded(tmp_path):
    cache, marker = tmp_path / "cache", tmp_path / "code ran"
    key = cache_key(XConfig(x=3.0), typed, everything)
    bomb = pickle.dumps(Planted(marker))
    for name in (f"{key}.pkl", f"{key}.json", f"{key}"):
        (cache / key[:2]).mkdir(parents=True, exist_ok=True)
        (cache / key[:2] / name).write_bytes(bomb)
    df, _ = sweep_typed(cache)
    assert not marker.exists() and df.six.tolist() == [6.0] and df.attrs["sweep"]["computed"] == 1
    pickle.loads(bomb)  # the bomb is live: loading it would have run its code
    assert marker.is_dir()


def with_a_frame(result):
    return {"frame": pd.DataFrame(result, index=[0]), "y": result["y"]}


def test_a_point_whose_metrics_json_cannot_hold_is_computed_every_time(tmp_path):
    for _ in range(2):
        df = sweep_x(double, tmp_path, metrics=with_a_frame)
        assert df.attrs["sweep"]["computed"] == 2 and df.attrs["sweep"]["uncached"] == 2
        pd.testing.assert_frame_equal(df.frame[1], pd.DataFrame({"y": [4.0]}))
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


# ---- the Dask cluster a sweep starts listens on this machine only ---------------------------------------
def test_a_local_cluster_listens_on_127_0_0_1_only(monkeypatch):
    from distributed.comm.utils import get_tcp_server_addresses

    monkeypatch.delenv("CLUSTER_SIM_DASK_HOST", raising=False)
    client, cluster, close = clients._open_client("local", 1)
    try:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        assert cluster.dashboard_link.startswith("http://127.0.0.1:")
        assert {a[0] for a in get_tcp_server_addresses(cluster.scheduler.http_server)} == {"127.0.0.1"}
        assert all(a.startswith("tcp://127.0.0.1:") for a in client.scheduler_info()["workers"])
        served = client.run(lambda dask_worker: [a[0] for a in get_tcp_server_addresses(dask_worker.http_server)])
        assert {h for hosts in served.values() for h in hosts} == {"127.0.0.1"}
    finally:
        client.close()
        cluster.close()


def test_the_environment_chooses_where_a_local_cluster_listens(monkeypatch):
    monkeypatch.delenv("CLUSTER_SIM_DASK_HOST", raising=False)
    assert clients._dask_host() == "127.0.0.1"
    monkeypatch.setenv("CLUSTER_SIM_DASK_HOST", "10.0.0.5")
    assert clients._dask_host() == "10.0.0.5"
    monkeypatch.setenv("CLUSTER_SIM_DASK_HOST", " ")
    with pytest.raises(ValueError, match="CLUSTER_SIM_DASK_HOST=' ' is not allowed"):
        run_grid(double, XBASE, XGRID, client="local", cache=False, progress=False)


def test_the_environment_can_keep_every_sweep_in_process(monkeypatch):
    """What the test suite sets: two notebooks executing side by side must not each start a cluster."""
    import cluster_sim.sweep as sweep

    monkeypatch.setattr(sweep, "AUTO_PARALLEL_SECONDS", 0.0)  # auto would start a cluster for anything
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")
    assert run_grid(run, BASE, GRID, cache=False, progress=False).attrs["sweep"]["where"] == "inprocess"
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CLIENT", "nowhere")
    with pytest.raises(ValueError, match="client='nowhere' is not allowed"):
        run_grid(run, BASE, GRID, cache=False, progress=False)


_PREPARED: collections.Counter = collections.Counter()  # seed -> preparations in this process (a worker's own)


def prepared_per_seed(config):
    """A lab's run on a workload it prepares once per seed and process (as Lab 05 remembers its lake)."""
    _PREPARED[config.seed] += 1
    return {"pid": os.getpid(), "preparations": _PREPARED[config.seed], "utilisation": run(config).metrics.utilisation}


def test_grouped_points_run_on_one_worker_so_each_prepares_its_workload_once(dask_client):
    dask_client.run(_PREPARED.clear)
    grid = {"schedulers": [1, 2, 3], "update_delay": [0.0, 2.0]}
    there = run_grid(prepared_per_seed, BASE, grid, seeds=4, client=dask_client, cache=False, progress=False,
                     group=lambda config: config.seed)
    # each seed's six points ran in one process, one after another: the first prepared, the rest reused it
    for seed, rows in there.groupby("seed"):
        assert rows["pid"].nunique() == 1, seed
        assert sorted(rows["preparations"]) == list(range(1, 7)), seed
    here = run_grid(run, BASE, grid, seeds=4, client="inprocess", cache=False, progress=False)
    assert there["utilisation"].tolist() == here["utilisation"].tolist()
    with pytest.raises(ValueError, match="group=3 is not callable"):
        run_grid(run, BASE, grid, client="inprocess", cache=False, group=3)


class _Clock:
    """A clock the points below advance by what they cost (no test asserts on wall-clock time)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def test_auto_goes_on_timing_points_while_they_are_remembered_and_sends_the_slow_rest_to_workers(monkeypatch):
    """The probe's first point may be one the run function remembers (Lab 03's cycle the notebook already ran):
    it takes no time and says nothing about the rest, so auto keeps timing points here until one costs
    something, and the points left then go to the workers."""
    import cluster_sim.sweep as sweep

    clock = _Clock()
    cost = {1: 0.0, 2: 40.0, 3: 40.0, 4: 40.0}  # seconds per point: the first remembered, the rest a cycle each

    def cycle(config):
        clock.now += cost[config.schedulers]
        return {"x": float(config.schedulers)}

    sent = []

    def to_workers(todo, configs, run, metrics, record, progress, client, workers, group=None):
        sent.extend(configs[i].schedulers for i in todo)
        execute._run_here(todo, configs, run, metrics, record, progress)

    monkeypatch.setattr(sweep, "time", clock)
    monkeypatch.setattr(execute, "_run_dask", to_workers)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    df = run_grid(cycle, BASE, {"schedulers": [1, 2, 3, 4]}, client="auto", cache=False, progress=False)
    # the remembered point and the first slow one ran here; 2 left x 40 s > a minute: those to the workers
    assert sent == [3, 4] and df.attrs["sweep"]["where"] == "local"
    assert df["x"].tolist() == [1.0, 2.0, 3.0, 4.0]
    # the next sweep of the same runs knows their pace: no probe here, every point to the workers
    sent.clear()
    df = run_grid(cycle, BASE, {"schedulers": [2, 3]}, client="auto", cache=False, progress=False)
    assert sent == [2, 3] and df["x"].tolist() == [2.0, 3.0]
    sent.clear()
    sweep._PACES.clear()  # a fresh process
    cost.update({2: 20.0, 3: 20.0, 4: 20.0})  # 2 left x 20 s, then 1 x 20 s: under a minute, all here
    df = run_grid(cycle, BASE, {"schedulers": [1, 2, 3, 4]}, client="auto", cache=False, progress=False)
    assert sent == [] and df.attrs["sweep"]["where"] == "inprocess"
    # another base config is another sweep's runs: its pace is measured again
    df = run_grid(cycle, BASE.replace(horizon=31.0), {"schedulers": [1, 2, 3]}, client="auto", cache=False,
                  progress=False)
    assert sent == [] and df.attrs["sweep"]["where"] == "inprocess"
def test_a_sweep_paced_as_another_config_starts_at_its_pace(monkeypatch):
    """Issue 33 (Lab 03 at paper): the footprint searches measure the trace's runs (``late_start=0``), a base config
    of its own, so their first round was probed here again and its points, about 13 s each, ran one after another in
    the kernel (4 left x 13 s: under a minute), a core idle. ``paced_as`` shares the pace of the runs they cost
    the same as: every point goes to the workers at once. Counted, not timed (the clock is the points' cost)."""
    import cluster_sim.sweep as sweep

    clock = _Clock()

    def cycle(config):
        clock.now += 20.0
        return {"x": float(config.schedulers)}

    sent = []

    def to_workers(todo, configs, run, metrics, record, progress, client, workers, group=None):
        sent.extend(configs[i].schedulers for i in todo)
        execute._run_here(todo, configs, run, metrics, record, progress)

    monkeypatch.setattr(sweep, "time", clock)
    monkeypatch.setattr(execute, "_run_dask", to_workers)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    grid = {"schedulers": [1, 2, 3, 4, 5]}
    run_grid(cycle, BASE, grid, client="auto", cache=False, progress=False)  # probed: 20 s a point
    assert sent == [2, 3, 4, 5]
    sent.clear()
    trace = BASE.replace(horizon=31.0)
    df = run_grid(cycle, trace, {"schedulers": [1, 2, 3, 4]}, client="auto", cache=False, progress=False,
                  paced_as=BASE)
    assert sent == [1, 2, 3, 4] and df.attrs["sweep"]["where"] == "local"
    assert df["x"].tolist() == [1.0, 2.0, 3.0, 4.0]
    sent.clear()  # without it, the other base config is probed again and its 4 points of 20 s stay here
    df = run_grid(cycle, trace, {"schedulers": [1, 2, 3, 4]}, client="auto", cache=False, progress=False)
    assert sent == [] and df.attrs["sweep"]["where"] == "inprocess"


def test_an_estimate_sends_long_points_to_the_workers_together_without_a_probe(monkeypatch):
    """Issue 33 (Lab 00 at paper): ``client="auto"`` timed the first point here before sending the rest to a
    cluster, so a grid of two long points (the tour's decision-throughput arms, minutes each) ran one after the
    other. With ``estimate=`` the route is chosen before anything runs; a short grid stays here."""
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    routes = []
    monkeypatch.setattr(execute, "_run_here", lambda todo, *a, **k: routes.append(("here", list(todo))))
    monkeypatch.setattr(execute, "_run_lanes", lambda tasks, *a, **k: routes.append(("lanes", [i for t in tasks for i in t])))
    grid = {"schedulers": [1, 4]}
    run_grid(run, BASE, grid, cache=False, progress=False, on_error="record", estimate=lambda c: 100.0)
    assert routes == [("lanes", [0, 1])]
    routes.clear()
    run_grid(run, BASE, grid, cache=False, progress=False, on_error="record", estimate=lambda c: 1.0)
    assert routes == [("here", [0, 1])]
    with pytest.raises(ValueError, match="estimate=3 is not callable"):
        run_grid(run, BASE, grid, cache=False, estimate=3)


def test_the_tours_decision_arms_and_pool_are_estimated_by_the_engine(monkeypatch):
    """The tour's arms and pool are the engine's own run of their configs: ``config.work()`` estimates them."""
    import cluster_sim.engine.claims as tour

    seen = []
    monkeypatch.setattr(tour, "run_grid", lambda *a, **k: seen.append(k.get("estimate")) or pd.DataFrame())
    tour.decision_throughput(ClusterConfig.paper())
    tour.pool_runs(ClusterConfig.paper(), pool_size=2)
    assert [e(ClusterConfig.paper()) for e in seen] == [ClusterConfig.paper().work().seconds] * 2


def where_it_ran(config):
    """A point that says which process ran it (the numbers are the engine's, wherever it runs)."""
    return {"pid": os.getpid(), "utilisation": run(config).metrics.utilisation}


#: estimated seconds per point of the lanes' tests: the longest first is schedulers=2, then 3, then 1
LANE_COSTS = {1: 10.0, 2: 30.0, 3: 20.0}


def lane_cost(config):
    return LANE_COSTS[config.schedulers]


def test_an_estimated_sweep_gives_each_worker_one_point_and_runs_one_here_longest_first(monkeypatch):
    """Issue 33 (Lab 04 at paper): the three seeds went to a two-worker cluster all at once and one worker ran two
    of them one after the other while the other core idled, this process only waiting. With ``estimate=`` each
    worker is given one point at a time, longest first, and this process runs the next one itself."""
    import cluster_sim.sweep as sweep

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.setattr(sweep, "AUTO_PARALLEL_SECONDS", 0.0)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    grid = {"schedulers": [1, 2, 3]}
    here = run_grid(where_it_ran, BASE, grid, client="inprocess", cache=False, progress=False)
    # two workers and this process: three lanes for three points, one point each
    df = run_grid(where_it_ran, BASE, grid, client="auto", workers=2, cache=False, progress=False, estimate=lane_cost)
    assert df.attrs["sweep"]["where"] == "local"
    pid = df.set_index("schedulers")["pid"]
    assert pid.nunique() == 3, pid.to_dict()
    # the two longest went to the workers first; this process took the next
    assert pid[1] == os.getpid() and os.getpid() not in (pid[2], pid[3])
    pd.testing.assert_frame_equal(df.drop(columns="pid"), here.drop(columns="pid"))


def test_by_default_an_estimated_sweep_starts_one_worker_fewer_than_the_cores(monkeypatch):
    """This process is a lane too: on two cores one worker and this process run the points (two seeds at a time,
    not three: Lab 04's paper seeds hold about 6 GB each)."""
    import cluster_sim.sweep as sweep

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.setattr(sweep, "AUTO_PARALLEL_SECONDS", 0.0)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    sizes = []
    opened = clients._open_client
    monkeypatch.setattr(clients, "_open_client", lambda client, workers, *a: sizes.append(workers) or opened(client, workers, *a))
    df = run_grid(where_it_ran, BASE, {"schedulers": [1, 2, 3]}, client="auto", cache=False, progress=False,
                  estimate=lane_cost)
    assert sizes == [1]
    pid = df.set_index("schedulers")["pid"]
    assert pid.nunique() == 2 and pid[2] != os.getpid() and pid[3] == os.getpid(), pid.to_dict()


def _faults_of_reused_buffers(rounds: int = 100) -> int:
    """Minor page faults of making and freeing a 1 MiB array ``rounds`` times (the first one made before counting).

    With glibc's dynamic mmap threshold the freed block is reused from the heap (no new page); with it turned off
    (``MALLOC_TRIM_THRESHOLD_`` set) every array is mapped afresh, its 256 pages faulted in each round."""
    import resource

    np.ones(1 << 17)  # 1 MiB: mapped; freeing it raises the threshold above it
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(rounds):
        a = np.ones(1 << 17)
        del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_a_local_clusters_workers_reuse_freed_arrays_instead_of_faulting_them_in_again(monkeypatch):
    """Issue 33 (Lab 04 at paper): the seeds' system time, 313 s of 1,197 s, was mostly page faults in the Dask
    workers, whose MALLOC_TRIM_THRESHOLD_ (Dask's pre-spawn default) made glibc map and unmap every large array.
    A LocalCluster's workers get ``MALLOC_ENV`` instead (Dask's other settings still reach them), even after
    another cluster's Nanny has copied Dask's setting into this process's environment; a worker reusing a
    buffer faults a few pages, not 256 a round (counted, not timed)."""
    import dask
    import distributed  # noqa: F401  (its settings are dask's once it is imported)

    import cluster_sim.sweep as sweep

    assert dask.config.get("distributed.nanny.pre-spawn-environ")["MALLOC_TRIM_THRESHOLD_"] == 65536
    for name in sweep.MALLOC_ENV:  # restored after the test: the Nanny writes them into this process's environment
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as an earlier cluster's Nanny leaves it
    dask_setting = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | {"MALLOC_TRIM_THRESHOLD_": "65536"}
    client, cluster, close = clients._open_client("local", 1)
    try:
        seen = client.run(lambda: {k: os.environ.get(k) for k in [*sweep.MALLOC_ENV, "OMP_NUM_THREADS"]})
        assert list(seen.values()) == [{**sweep.MALLOC_ENV, "OMP_NUM_THREADS": "1"}]
        faults = list(client.run(_faults_of_reused_buffers).values())[0]
        assert faults < 100 * 256 / 10, faults
    finally:
        client.close()
        cluster.close()
    # the same count in a process that has the setting: every round faults its pages in again
    out = subprocess.run([sys.executable, "-c", "import cloudpickle, sys; "
                          "print(cloudpickle.loads(sys.stdin.buffer.read())())"],
                         input=cloudpickle.dumps(_faults_of_reused_buffers), capture_output=True, check=True,
                         env=dask_setting)
    assert int(out.stdout) >= 100 * 256 * 0.9, out.stdout

_STARTED: list = []  # the points a one-thread worker in this process started, in order


def started_in_order(config):
    _STARTED.append(config.x)
    return {"y": config.x}


def test_grouped_tasks_of_more_points_go_first_so_no_long_task_runs_alone_at_the_end():
    """Longest first (by points): a group of three points is started before the single points submitted ahead of it,
    so on two workers it cannot be the one task left running while the other worker idles."""
    import logging

    from distributed import Client, LocalCluster

    _STARTED.clear()
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0",
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    try:
        grid = {"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}
        frame = run_grid(started_in_order, XBASE, grid, client=client, cache=False, progress=False,
                         group=lambda config: "long" if config.x >= 4.0 else config.x)
    finally:
        client.close()
        cluster.close()
    assert _STARTED == [4.0, 5.0, 6.0, 1.0, 2.0, 3.0]
    assert frame["y"].tolist() == grid["x"]  # the frame stays in the grid's order


def _worker_malloc():
    from cluster_sim.sweep import MALLOC_ENV

    return {k: os.environ.get(k) for k in MALLOC_ENV}


def test_auto_keeps_its_cluster_for_the_next_sweep_and_sends_a_group_where_it_ran(monkeypatch):
    """Issue 33 (Lab 05 at paper): each of the notebook's sweeps that went to the workers started a new
    LocalCluster, so every seed's lake was prepared again on a fresh worker. With ``keep_sweep_cluster()`` (the
    notebook's setup cell), ``client="auto"`` keeps its cluster for the process's next sweeps while its workers
    live, and sends a grouped task to the worker that ran that group
    before (where the lab remembers what it prepared). Counted: preparations, not time."""
    import cluster_sim.sweep as sweep

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("CLUSTER_SIM_SWEEP_CLIENT", raising=False)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    sweep.close_sweep_cluster()
    monkeypatch.setattr(clients, "_KEEP", [False])
    # off by default: each sweep's cluster is closed when it ends (other labs' workers' memory goes with it)
    off = run_grid(prepared_per_seed, BASE, {"schedulers": [1, 2]}, seeds=2, cache=False, progress=False,
                   estimate=lambda c: 100.0)
    assert off.attrs["sweep"]["where"] == "local" and not clients._KEPT
    with pytest.raises(ValueError, match="keep='yes' is not allowed"):
        sweep.keep_sweep_cluster("yes")
    sweep.keep_sweep_cluster()
    before = {p.pid for p in multiprocessing.active_children()}
    grid = {"schedulers": [1, 2, 3], "update_delay": [0.0, 2.0]}
    first = clients._open_client  # a second cluster start would fail the test
    starts = []
    monkeypatch.setattr(clients, "_open_client", lambda *a: starts.append(a) or first(*a))
    try:
        sweeps = [run_grid(prepared_per_seed, BASE, grid, seeds=4, cache=False, progress=False, group=lambda c: c.seed,
                           estimate=lambda c: 100.0) for _ in range(3)]
        assert [s.attrs["sweep"]["where"] for s in sweeps] == ["local"] * 3
        assert len(starts) == 1, "one cluster for the three sweeps"
        # every seed prepared once in the whole session: its later points ran where it was prepared
        after = pd.concat(sweeps, keys=range(3), names=["sweep"]).reset_index(level=0)
        for seed, rows in after.groupby("seed"):
            assert rows["pid"].nunique() == 1, seed
            assert sorted(rows["preparations"]) == list(range(1, 19)), seed
        # its workers start with glibc's malloc settings that keep large arrays' pages mapped between tasks
        client = clients._KEPT["client"]
        assert set(map(str, client.run(_worker_malloc).values())) == {str(sweep.MALLOC_ENV)}
        assert os.environ.get("MALLOC_TRIM_THRESHOLD_") != sweep.MALLOC_ENV["MALLOC_TRIM_THRESHOLD_"], \
            "the kernel's own environment is left as it was"
        assert sweeps[2]["utilisation"].tolist() == run_grid(run, BASE, grid, seeds=4, client="inprocess", cache=False,
                                                             progress=False)["utilisation"].tolist()
    finally:
        sweep.close_sweep_cluster()
    assert not clients._KEPT and {p.pid for p in multiprocessing.active_children()} <= before, "workers left running"


def test_auto_keeps_the_rest_of_the_group_its_probe_began_here(monkeypatch):
    """Issue 33 (Lab 05 at paper): ``client="auto"`` times a first point here (which prepares its seed's lake in
    this process) and then sent the rest, that seed's other points too, to the workers, where the lake was
    prepared again. Now the rest of the probed group runs here while the workers run the other groups."""
    import cluster_sim.sweep as sweep

    clock = _Clock()

    def lake_run(config):
        clock.now += 40.0  # a point's run (its lake's preparation) at the papers' scale
        return {"x": float(config.schedulers + 10 * config.seed)}

    sent, stayed = [], []

    def to_workers(todo, configs, run, metrics, record, progress, client, workers, group=None, here=()):
        sent.extend((configs[i].seed, configs[i].schedulers) for i in todo)
        execute._run_here(todo, configs, run, metrics, record, progress)  # as a worker would (another process)
        stayed.extend((configs[i].seed, configs[i].schedulers) for i in here)
        execute._run_here(list(here), configs, run, metrics, record, progress)

    monkeypatch.setattr(sweep, "time", clock)
    monkeypatch.setattr(execute, "_run_dask", to_workers)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    monkeypatch.setattr(sweep, "_PACES", {})
    grid = [{"seed": s, "schedulers": n} for s in (0, 1, 2) for n in (1, 2, 3)]
    df = run_grid(lake_run, BASE, grid, client="auto", cache=False, progress=False, group=lambda c: c.seed)
    assert df.attrs["sweep"]["where"] == "local"
    assert sent == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)], "the other seeds' points to the workers"
    assert stayed == [(0, 2), (0, 3)], "the probed seed's other points here"
    assert df["x"].tolist() == [float(n + 10 * s) for s in (0, 1, 2) for n in (1, 2, 3)]
    # without a group the probe's seed is one more point for the workers (as before)
    sent.clear(), stayed.clear()
    monkeypatch.setattr(sweep, "_PACES", {})
    run_grid(lake_run, BASE, grid, client="auto", cache=False, progress=False)
    assert len(sent) == 8 and stayed == []


def test_a_kept_clusters_sweeps_keep_each_group_where_it_was_prepared_without_probing_again(monkeypatch):
    """Issue 33 (Lab 05 at paper, round 12): with ``keep_sweep_cluster()`` a group's home outlives its sweep. A
    group this process ran in an earlier sweep stays here (it was sent to a worker, which prepared its lake again:
    the capacity sweep, one seed the kernel held, ran alone on a worker); a group a live worker ran goes back to it
    at once, without a point of it timed here first (the lake table prepared two seeds in the kernel); and on the
    running kept cluster, two or more groups none of which began here go to the workers at once (the priority-rule
    sweep timed its first new lake here alone). Counted with a fake clock and fake workers, not timed."""
    import cluster_sim.sweep as sweep

    clock = _Clock()
    prepared: dict = {}  # seed -> where its lake was prepared

    def lake_run(config):
        if config.seed not in prepared.setdefault("here", set()):
            prepared["here"].add(config.seed)
            clock.now += 40.0  # the lake's preparation at the papers' scale
        clock.now += 2.0
        return {"x": float(config.schedulers + 10 * config.seed)}

    sent, stayed = [], []

    def to_workers(todo, configs, run, metrics, record, progress, client, workers, group=None, here=()):
        sent.append(sorted({(configs[i].seed, configs[i].schedulers) for i in todo}))
        for i in todo:  # as a worker would (another process: the lakes it prepares are not prepared here)
            record(i, {"x": float(configs[i].schedulers + 10 * configs[i].seed)}, None, None)
            clients._KEPT["homes"][group(configs[i])] = "tcp://worker"
        stayed.append(sorted((configs[i].seed, configs[i].schedulers) for i in here))
        execute._run_here(list(here), configs, run, metrics, record, progress)

    monkeypatch.setattr(sweep, "time", clock)
    monkeypatch.setattr(execute, "_run_dask", to_workers)
    monkeypatch.setattr(clients, "_machine_workers", lambda: 2)
    monkeypatch.setattr(clients, "_KEEP", [True])
    monkeypatch.setattr(clients, "_KEPT", {"homes": {}})
    monkeypatch.setattr(clients, "_HERE", set())
    alive = [False]  # the kept cluster starts with the first sweep that sends points to it
    monkeypatch.setattr(clients, "_kept_alive", lambda: alive[0])
    monkeypatch.setattr(sweep, "_PACES", {})

    def grid(seeds, schedulers=(1, 2, 3)):
        return [{"seed": s, "schedulers": n} for s in seeds for n in schedulers]

    def sweep_of(points, base=BASE):
        sent.clear(), stayed.clear()
        df = run_grid(lake_run, base, points, client="auto", cache=False, progress=False, group=lambda c: c.seed)
        assert df["x"].tolist() == [float(p["schedulers"] + 10 * p["seed"]) for p in points]

    # the claims: seed 0 probed here (its lake prepared here), seeds 1 and 2 to the workers
    sweep_of(grid((0, 1, 2)))
    assert sent == [[(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]] and stayed == [[(0, 2), (0, 3)]]
    assert clients._HERE == {0} and prepared["here"] == {0}
    alive[0] = True
    # the capacity sweep, on seed 0 alone at the known pace: here, where its lake is (was sent to a worker)
    sweep_of(grid((0,), (4, 5, 6)))
    assert sent == [] and prepared["here"] == {0}
    # the lake table, a new run function (no pace yet): seed 0 here, seeds 1 and 2 at once to their worker
    sweep_of(grid((0, 1, 2), (7,)), base=BASE.replace(horizon=31.0))
    assert sent == [[(1, 7), (2, 7)]] and stayed == [[(0, 7)]] and prepared["here"] == {0}
    # the priority-rule sweep, new lakes (another base config, no pace yet): both to the workers at once
    sweep_of(grid((5, 6)), base=BASE.replace(horizon=32.0))
    assert sent == [[(5, 1), (5, 2), (5, 3), (6, 1), (6, 2), (6, 3)]] and stayed == [[]]
    assert prepared["here"] == {0}, "no new lake prepared here"
    # without a kept cluster, as before: the first point timed here, then the rest
    monkeypatch.setattr(clients, "_KEEP", [False])
    sweep_of(grid((8, 9)), base=BASE.replace(horizon=33.0))
    assert prepared["here"] == {0, 8} and sent == [[(9, 1), (9, 2), (9, 3)]] and stayed == [[(8, 2), (8, 3)]]
