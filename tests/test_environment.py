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
