"""Every path, file and lab a user can read about must exist in a clone.

Users have the repository only: no ``shared/`` folder, no design notes kept elsewhere, no lab that
is not written yet. This scans what they read (notebooks, README, docs, docstrings and comments of
the package, tests, benchmarks and build files) for file paths and "Lab NN" mentions and checks each
against the clone.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEXT_FILES = ["README.md", "CONTRIBUTING.md", "Makefile", "pyproject.toml", "environment.yml", ".ci/run"]
EXTENSIONS = "ipynb|md|py|toml|yml|yaml|txt|json"
# a path: optional ./ or ../ prefixes, then name/name.../file.ext (or a bare file name with an extension)
PATH = re.compile(rf"(?<![\w/.:-])((?:\.\.?/)*(?:[\w.-]+/)*[\w-]+\.(?:{EXTENSIONS}))(?![\w/-])")
LAB = re.compile(r"\b[Ll]abs?\s+(\d\d)(?:\s*(?:–|-|and|&)\s*(\d\d))?\b")
# names that are not files of this project (libraries' modules, examples in prose)
NOT_OURS = {"setup.py", "conftest.py", "__init__.py", "kernel.json", "overrides.json", "report.md",
            "simpy/core.py", "simpy/events.py", "agents.py", "model.py", "app.py", "ipynb.py", "__main__.py",
            "nbgrader_config.py",  # the instructor's guide has the reader write it, in a course folder
            "test_groups.py",  # what tests/test_environment.py writes into its tmp_path
            "lab.ipynb", "out.ipynb", "plain.ipynb"}  # and test_check_messages.py


def _sources() -> list[tuple[str, Path, str]]:
    """(label, folder the text is relative to, text) for everything a user may read."""
    out = []
    for name in TEXT_FILES:
        p = ROOT / name
        if p.exists():
            out.append((name, p.parent, p.read_text()))
    for p in sorted((ROOT / "docs").glob("*.md")):
        out.append((str(p.relative_to(ROOT)), p.parent, p.read_text()))
    for folder in ("notebooks", "solutions", "exercises"):
        for p in sorted((ROOT / folder).glob("*.ipynb")):
            nb = json.loads(p.read_text())
            for i, cell in enumerate(nb["cells"]):
                out.append((f"{p.relative_to(ROOT)} cell {i}", p.parent, "".join(cell["source"])))
    for folder in ("cluster_sim", "tests", "bench"):
        for p in sorted((ROOT / folder).rglob("*.py")):
            if p.name != "test_references.py":
                out.append((str(p.relative_to(ROOT)), p.parent, _prose(p.read_text())))
    return out


def _prose(code: str) -> str:
    """The strings and comments of Python source: what a reader reads (not ``self.csv``, an attribute)."""
    kept = [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline)
            if t.type in (tokenize.STRING, tokenize.COMMENT)]
    return "\n".join(kept)


#: what the project's commands write (`make browser`, `make reproduce`, the benchmarks, the venv): the
#: docs name these files, but a clone holds them only once that command has run
OUTPUTS = ("reports/", "bench/out/")
#: never the project's files, whatever a run left there (.gitignore's folders)
NOT_PROJECT = {".git", ".venv", "reports", "build", ".pytest_cache", ".hypothesis", "__pycache__", ".ipynb_checkpoints"}


@cache
def project_files() -> frozenset[str]:
    """The files of a clone, relative to its root: git's tracked and not-ignored files, so that nothing a
    test or a command wrote into the working tree (a browser report, a screenshot) counts as existing.
    Outside a git checkout (an unpacked archive): every file but those in :data:`NOT_PROJECT`."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        return frozenset(out.split("\0")) - {""}
    except (OSError, subprocess.SubprocessError):
        files = set()
        for folder, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in NOT_PROJECT and not d.endswith(".egg-info")]
            rel = Path(folder).relative_to(ROOT)
            files |= {str(rel / n) if str(rel) != "." else n for n in names}
        return frozenset(files)


def _exists(ref: str, base: Path) -> bool:
    ref = ref.rstrip(".")
    if ref in NOT_OURS:
        return True
    files = project_files()
    if "/" not in ref:  # a bare file name: anywhere in the project
        return any(f == ref or f.endswith("/" + ref) for f in files)
    for candidate in (base / ref, ROOT / ref):
        rel = os.path.relpath(os.path.normpath(candidate), ROOT)
        if rel in files or rel.startswith(OUTPUTS):
            return True
    return False


def _labs() -> set[str]:
    return {p.name[:2] for p in (ROOT / "notebooks").glob("*.ipynb")}


def broken_references(sources=None) -> list[str]:
    labs = _labs()
    broken = []
    for label, base, text in sources if sources is not None else _sources():
        for m in PATH.finditer(text):
            ref = m.group(1)
            if ref.startswith(("http", "www.")) or "shared/" in ref or "NN_" in ref:
                continue  # web links, shared/ (reported below), placeholders such as NN_topic.ipynb
            if not _exists(ref, base):
                broken.append(f"{label}: names {ref!r}, which the clone does not hold")
        if "shared/" in text and "shared/" not in label:
            for line in text.splitlines():
                if re.search(r"(?<![\w])(\.\./)?shared/", line):
                    broken.append(f"{label}: names a shared/ path no user has ({line.strip()[:80]!r}); "
                                  "cite the paper from docs/references.md")
                    break
        for m in LAB.finditer(text):
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            missing = [f"{n:02d}" for n in range(lo, hi + 1) if f"{n:02d}" not in labs]
            if missing:
                broken.append(f"{label}: names {m.group(0)!r}, but notebooks/ has no lab {', '.join(missing)}")
    return broken


def test_every_path_file_and_lab_a_user_reads_about_exists():
    broken = broken_references()
    assert not broken, f"{len(broken)} references a user cannot follow:\n" + "\n".join(broken)


@pytest.mark.parametrize("text, expected", [
    ("see `../shared/papers/morpheus_osdi16.txt` §5", "names a shared/ path"),
    ("our design rules are in DESIGN.md", "names 'DESIGN.md', which the clone does not hold"),
    ("continue with Lab 42", "names 'Lab 42', but notebooks/ has no lab 42"),
    ("labs 00–41 build on", "notebooks/ has no lab"),
    ("open notebooks/99_nowhere.ipynb", "names 'notebooks/99_nowhere.ipynb'"),
])
def test_the_checker_finds_what_a_user_could_not_follow(text, expected):
    found = broken_references([("example", ROOT, text)])
    assert found and expected in found[0], found


def test_the_checker_accepts_what_exists():
    assert broken_references([("example", ROOT / "notebooks",
                               "see ../docs/references.md, notebooks/00_cluster_sim_tour.ipynb, Lab 00, "
                               "labs 08–09 and cluster_sim/engine/model.py")]) == []


def test_a_file_a_run_left_behind_is_not_a_file_of_the_clone(tmp_path, monkeypatch):
    """The browser tests write reports/browser/report.md: whether it exists depends on whether they ran
    before, so a text naming an output is accepted as an output, and a text naming any other file that
    only a run left in the working tree (ignored by git) is reported."""
    assert broken_references([("example", ROOT, "report and screenshots in reports/browser/report.md")]) == []
    (tmp_path / ".gitignore").write_text("/reports/\n/left.md\n")
    (tmp_path / "kept.md").write_text("")
    (tmp_path / "left.md").write_text("")  # as a test run might leave it
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "stale.md").write_text("")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    project_files.cache_clear()
    try:
        found = broken_references([("example", tmp_path, "see kept.md, left.md and docs/left.md")])
    finally:
        project_files.cache_clear()
    assert found == ["example: names 'left.md', which the clone does not hold",
                     "example: names 'docs/left.md', which the clone does not hold"], found


def test_the_instructors_learning_path_is_what_the_notebooks_measure():
    from cluster_sim import course

    guide = course.GUIDE.read_text()
    assert course.guide_with_table(guide) == guide, (
        "docs/instructors.md's learning path differs from the notebooks: run `python -m cluster_sim.course --write`")
    assert all(f"`{p.stem}`" in guide for p in (ROOT / "notebooks").glob("*.ipynb")), "a lab is missing from the table"
