"""The Voila dashboard (``make demo``) opens every page a notebook links to (issue 28: the link to
docs/references.md answered "403: File not allowlisted").

Voila serves a notebook at ``/`` and sends a relative link to ``/voila/files/<path>``, a file under its root
directory that must match one of its allowlist patterns. ``make demo`` serves from the repository's root; this
checks that every relative link in a notebook resolves there to a file the Makefile's allowlist lets through.
(Measured by hand: ``make demo LAB=00`` then ``curl -L http://127.0.0.1:8866/docs/references.md`` answers 200,
text/markdown; before, 403.)
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def demo_settings() -> tuple[str, list[str]]:
    make = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    files = re.search(r"^VOILA_FILES := (.*)$", make, re.M).group(1)
    root = re.search(r'--Voila\.root_dir="([^"]*)"', files).group(1)
    allow = re.findall(r"--VoilaConfiguration\.file_allowlist='([^']*)'", files)
    assert "$(VOILA_FILES)" in make.split("\ndemo:")[1].split("\n\n")[0], "make demo does not pass VOILA_FILES"
    return root, allow


def test_the_dashboard_serves_every_page_a_notebook_links_to():
    root, allow = demo_settings()
    assert root == "$(CURDIR)", "make demo must serve from the repository's root (links go to ../docs)"
    links = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                links += [(path.name, m) for m in re.findall(r"\]\((\.\./[^)#\s]+)", cell.source)]
    assert links, "no relative link found: the test would check nothing"
    for name, link in links:
        target = (ROOT / "notebooks" / link).resolve()
        served = target.relative_to(ROOT).as_posix()
        assert target.is_file(), f"{name} links to {link}, which is not a file"
        assert any(re.fullmatch(p, served) for p in allow), (
            f"{name} links to {link}: Voila would answer 403 for {served}; allowed: {allow}")
