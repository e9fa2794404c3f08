"""The test run's own sweep cache (tests/conftest.py): every run reads and writes an empty cache of its own, shared
by its xdist workers and kernels, and removes it when it ends; a cache given from outside is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import RUN_CACHE

ROOT = Path(__file__).resolve().parents[1]
INNER = "tests/test_run_cache.py::test_the_run_sweeps_into_its_own_cache"


def test_the_run_sweeps_into_its_own_cache():
    cache = os.environ[RUN_CACHE]
    assert os.environ["CLUSTER_SIM_SWEEP_CACHE"] == cache
    assert Path(cache).is_dir()
    print(f"run cache: {cache}")


def _run_inner(tmp_path: Path, **env) -> str:
    """One small pytest run in a fresh process, its temporary folder in ``tmp_path``; its output."""
    environ = {k: v for k, v in os.environ.items() if k not in (RUN_CACHE, "CLUSTER_SIM_SWEEP_CACHE")}
    environ.update(TMPDIR=str(tmp_path), **env)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", INNER], cwd=ROOT,
                         env=environ, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def _cache_of(stdout: str) -> Path:
    return Path(next(line for line in stdout.splitlines() if "run cache: " in line).split("run cache: ")[1])


def test_a_run_removes_the_cache_it_made_when_it_ends(tmp_path):
    cache = _cache_of(_run_inner(tmp_path))
    assert cache.parent == tmp_path and cache.name.startswith("cluster_sim-sweeps-")
    assert not cache.exists(), f"the run left its sweep cache {cache}"
    assert not list(tmp_path.glob("cluster_sim-sweeps-*"))


def test_a_cache_given_from_outside_is_kept(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "entry").write_text("kept")
    assert _cache_of(_run_inner(tmp_path, **{RUN_CACHE: str(given)})) == given
    assert (given / "entry").read_text() == "kept"
