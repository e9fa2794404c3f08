"""Generate ``exercises/`` from ``solutions/`` with nbgrader's own preprocessors.

``solutions/NN_topic.ipynb`` are ordinary nbgrader source notebooks (solution cells marked with
``### BEGIN SOLUTION`` / ``### END SOLUTION``, check cells locked and graded, optional
``### BEGIN HIDDEN TESTS`` blocks), so an instructor can import them into an nbgrader course
unchanged. This module applies nbgrader's ``ClearSolutions``, ``ClearHiddenTests`` and
``ClearOutput`` to produce the student versions. ``make exercises`` runs it; a test fails when
``exercises/`` is out of date.

Usage::

    python -m cluster_sim.exercises            # regenerate exercises/
    python -m cluster_sim.exercises --check    # exit 1 and list stale files, change nothing
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def _preprocessors():
    try:
        from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions
    except ImportError as e:  # nbgrader is a dev extra
        raise RuntimeError("generating exercises needs nbgrader: pip install -e '.[dev]'") from e
    return [ClearSolutions(enforce_metadata=True), ClearHiddenTests(enforce_metadata=True), ClearOutput()]


def student_version(solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The exercise notebook for one solution notebook (the input is not modified)."""
    nb = nbformat.from_dict(json.loads(json.dumps(solution)))
    resources = {"language": "python"}
    for pre in _preprocessors():
        nb, resources = pre.preprocess(nb, resources)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
            cell.outputs = []
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb, version=4) + "\n"


def generate(solutions: Path = ROOT / "solutions", exercises: Path = ROOT / "exercises",
             check: bool = False, prune: bool = True) -> list[Path]:
    """Write (or with ``check``, only compare) every exercise; return the stale or rewritten paths.

    ``prune`` also removes (or reports) exercises whose solution is gone; pass ``prune=False``
    when ``solutions`` holds only some of the notebooks.
    """
    changed = []
    sources = sorted(solutions.glob("*.ipynb"))
    for src in sources:
        text = render(student_version(nbformat.read(src, as_version=4)))
        dst = exercises / src.name
        if not dst.exists() or dst.read_text() != text:
            changed.append(dst)
            if not check:
                exercises.mkdir(exist_ok=True)
                dst.write_text(text)
    orphans = [p for p in sorted(exercises.glob("*.ipynb")) if prune and not (solutions / p.name).exists()]
    changed.extend(orphans)
    if not check:
        for p in orphans:
            p.unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale exercises")
    args = parser.parse_args(argv)
    changed = generate(check=args.check)
    verb = "stale" if args.check else "written"
    for p in changed:
        print(f"{verb}: {p.relative_to(ROOT)}")
    if args.check and changed:
        print("exercises/ is out of date: run `make exercises`", file=sys.stderr)
        return 1
    if not changed:
        print("exercises/ is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
