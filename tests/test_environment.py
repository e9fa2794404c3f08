"""environment.yml (conda) and pyproject.toml name the same packages."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _name(spec: str) -> str:
    return re.split(r"[\s\[<>=!~;]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_conda_and_pip_dependencies_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip = {_name(d) for d in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        pip |= {_name(d) for d in extra}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)} - {"python", "pip"}
    assert pip - conda == set(), f"in pyproject.toml but not environment.yml: {sorted(pip - conda)}"
    assert conda - pip == set(), f"in environment.yml but not pyproject.toml: {sorted(conda - pip)}"
    assert "python=3.12" in env["dependencies"] and "conda-forge" in env["channels"]


def test_mesa_is_pinned_with_its_network_extra():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "mesa[network]>=3.5,<4" in deps


def test_conda_installs_the_project_and_its_kernel():
    """`conda env create -f environment.yml` must be the whole conda set-up."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert any(p.startswith("-e .") for p in pip) and "./kernelspec" in pip


def test_the_kernel_the_notebooks_name_is_installed_by_make_too():
    makefile = (ROOT / "Makefile").read_text()
    assert "./kernelspec" in makefile
    spec = __import__("json").loads((ROOT / "kernelspec" / "kernel.json").read_text())
    assert spec["argv"][0] == "python"  # jupyter_client runs the server's own Python for it
    assert spec["display_name"] == "Python (cluster_sim)"


def test_the_kernel_has_the_malloc_settings_the_sweeps_workers_have():
    """A sweep's points run in the kernel too (``run_grid``'s lanes): glibc's settings there are the workers'
    (``cluster_sim.sweep.MALLOC_ENV``: why, and what they were measured to save)."""
    from cluster_sim.sweep import MALLOC_ENV

    spec = __import__("json").loads((ROOT / "kernelspec" / "kernel.json").read_text())
    assert spec["env"] == MALLOC_ENV


def test_readme_and_makefile_agree_on_how_python_is_found():
    find = re.search(r"FIND_PYTHON := for p in (.*?); do", (ROOT / "Makefile").read_text(), re.S).group(1)
    makefile = []
    for token in find.split():
        if token.startswith("$${PYTHON"):
            makefile.append("$PYTHON")
        elif "pyenv" in token.lower():
            makefile.append("pyenv")
        elif re.fullmatch(r"(/[\w/]+/)?python3(\.\d+)?", token):
            makefile.append(token)
    readme = (ROOT / "README.md").read_text()
    order = [readme.index("pyenv's") if w == "pyenv" else readme.index(f"`{w}`") for w in makefile]
    assert len(makefile) >= 8 and order == sorted(order), (
        f"README lists the interpreters in another order than the Makefile's {makefile}")


def _lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not an exact pin (name==version)"
            pins[_name(name)] = version.strip()
    return pins


def test_the_installed_packages_are_the_locked_versions():
    """`make test` installs requirements.lock's exact versions: a semester's numbers do not move under a course."""
    import importlib.metadata

    pins = _lock()
    import sysconfig

    # the environment's own packages (setuptools puts its vendored copies on sys.path too)
    site = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    installed = {_name(d.metadata["Name"]): d.version for d in importlib.metadata.distributions(path=site)}
    differ = {n: (v, installed.get(n)) for n, v in pins.items() if installed.get(n) != v}
    assert not differ, f"installed versions differ from requirements.lock (locked, installed): {differ}; run `make setup`"


def test_the_lock_covers_every_dependency_and_both_installs_use_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {_name(d) for d in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        names |= {_name(d) for d in extra}
    assert names - set(_lock()) == set(), f"not in requirements.lock: {sorted(names - set(_lock()))}"
    assert "-c requirements.lock" in (ROOT / "Makefile").read_text()
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert "-c requirements.lock" in pip


def test_one_version_number_everywhere():
    import cluster_sim

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert str(citation["version"]) == version == cluster_sim.__version__
    assert f"## {version}" in (ROOT / "CHANGELOG.md").read_text(), f"CHANGELOG.md has no entry for {version}"
    for name in ("LICENSE", "LICENSE-content.md"):
        assert (ROOT / name).exists(), name


def test_the_student_release_has_no_solutions(tmp_path):
    import subprocess
    import tarfile

    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        import pytest
        pytest.skip("not a git checkout")
    done = subprocess.run(["make", "-s", "-C", str(ROOT), "student-release", f"DIST={tmp_path}"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (archive,) = tmp_path.glob("cluster_sim-student-*.tar.gz")
    names = tarfile.open(archive).getnames()
    assert not [n for n in names if "/solutions/" in n or "/tests/" in n], "the student release holds solutions or tests"
    assert any(n.endswith("exercises/00_cluster_sim_tour.ipynb") for n in names)
    assert any(n.endswith("notebooks/00_cluster_sim_tour.ipynb") for n in names)


def test_xdist_keeps_a_group_on_one_worker(tmp_path):
    """`make test` runs `pytest -n 2 --dist loadgroup`: the checks of one notebook execution (and the
    browser tests, which share one JupyterLab) are an xdist group, run by one worker, so the notebook
    is executed once (tests/notebook_runs.py). pytest 9.2 silently broke the grouping
    (pytest-dev/pytest-xdist#1386): each check then ran wherever, and executed its notebook again."""
    import subprocess
    import sys

    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_groups.py").write_text(
        "import os, time\nimport pytest\n\n"
        "@pytest.mark.xdist_group('one')\n@pytest.mark.parametrize('i', range(6))\n"
        "def test_grouped(i):\n    time.sleep(0.05)\n    print('GROUPED', os.environ['PYTEST_XDIST_WORKER'])\n\n"
        "@pytest.mark.parametrize('i', range(6))\ndef test_free(i):\n    time.sleep(0.05)\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                           "-rA", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    workers = set(re.findall(r"GROUPED (gw\d+)", done.stdout))
    assert len(workers) == 1, f"the group ran on {sorted(workers)}: --dist loadgroup does not group (see pyproject.toml)"


def test_the_run_and_the_kernels_it_starts_keep_compiled_bytecode():
    """A test run caches bytecode even where the environment says not to (``PYTHONDONTWRITEBYTECODE``, set on
    this machine's images): else each of a run's ~90 kernels compiles every cluster_sim module it imports again (a
    kernel started and importing the labs: 1.7-2.1 s of CPU against 1.5-1.6 s with pyc files, load average 13-17),
    and each xdist worker rewrites and compiles every test module at collection (16.6 s of CPU against 9.6 s).
    tests/conftest.py lifts it for the run and for every process the run starts; the pyc files go where Python puts
    them (``__pycache__``, git-ignored)."""
    import os
    import sys

    assert not sys.dont_write_bytecode
    assert not os.environ.get("PYTHONDONTWRITEBYTECODE")
    code = "import sys; print(sys.dont_write_bytecode)"
    import subprocess

    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_make_test_draws_the_same_hypothesis_examples_every_run():
    """`make test` (CI's command) loads the "ci" profile: derandomized, no example database, so a run's examples are
    a function of the tests' code and a failure is the same failure on another machine (tests/conftest.py)."""
    from hypothesis import settings

    make = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    recipe = re.search(r"^test:.*\n\t(.*)$", make, re.M).group(1)
    assert recipe.startswith("HYPOTHESIS_PROFILE=ci "), recipe
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None
