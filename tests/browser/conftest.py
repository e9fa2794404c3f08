"""A throw-away JupyterLab for the browser tests, and Debian's Chromium driven by Playwright.

JupyterLab serves *copies* of the notebooks from a temporary folder (so Run All can never write
outputs into the repository) on 127.0.0.1 with no token, with its own settings: no autosave, no
news, no cell virtualisation (every cell stays in the page, so the test can read it).

Without Chromium at ``CHROMIUM`` (default ``/usr/bin/chromium``) or without Playwright, every
browser test is skipped with a message naming what to install, and the run's summary repeats it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
#: what a student's kernel has: a long run's progress bar is tqdm's widget, as in JupyterLab by default (the
#: headless notebook tests set CLUSTER_SIM_PROGRESS=text in this process: a text bar is stderr, which the
#: browser test rightly counts as a problem a student would see)
STUDENT_ENV = {"CLUSTER_SIM_PROGRESS": "auto"}
REPORT_DIR = ROOT / "reports" / "browser"
MISSING: list[str] = []


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return (f"Chromium not found at {CHROMIUM}: the browser tests need Debian's package "
                "(apt-get install chromium) or CHROMIUM=/path/to/chromium")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is missing: pip install -e '.[test]'"
    return None


def pytest_terminal_summary(terminalreporter):
    if MISSING:
        terminalreporter.section("BROWSER TESTS SKIPPED", sep="!", red=True, bold=True)
        terminalreporter.line(MISSING[0], red=True, bold=True)
    report = REPORT_DIR / "report.md"
    if report.exists() and report.stat().st_mtime > _SESSION_START:
        terminalreporter.section("browser report")
        terminalreporter.line(report.read_text())


_SESSION_START = time.time()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(folder: Path) -> None:
    """JupyterLab user settings: nothing saved, nothing fetched, every cell kept in the page."""
    plugins = {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                            "checkForUpdates": False},
    }
    for name, value in plugins.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


@contextmanager
def _serving(name: str, args: list[str], home: Path, env: dict, probe: str):
    """Start a server (``args``) in ``home``, wait until ``probe`` answers, stop it afterwards."""
    log = open(home / f"{name}.log", "w")
    server = subprocess.Popen(args, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(probe, timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"{name} exited: {(home / f'{name}.log').read_text()[-2000:]}")
                time.sleep(0.5)
        else:
            raise RuntimeError(f"{name} did not answer on 127.0.0.1 within 60 s")
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _home_with_notebooks(tmp_path_factory, name: str) -> Path:
    reason = _missing()
    if reason:
        MISSING.append(reason)
        pytest.skip(reason)
    home = tmp_path_factory.mktemp(name)
    shutil.copytree(ROOT / "notebooks", home / "notebooks")
    return home


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """``(base_url, folder)`` of a JupyterLab serving copies of notebooks/ on 127.0.0.1."""
    home = _home_with_notebooks(tmp_path_factory, "lab")
    with student_lab(home) as base:
        yield base, home


@contextmanager
def student_lab(home: Path):
    """The base URL of a student's JupyterLab (no instructor extensions) serving ``home`` on 127.0.0.1."""
    _settings(home / "settings")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               **STUDENT_ENV)
    base = f"http://127.0.0.1:{_free_port()}"
    args = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={base.rsplit(':', 1)[1]}",
            "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={home}",
            "--ServerApp.disable_check_xsrf=True", "--LabApp.news_url=", "--allow-root"]
    with _serving("jupyterlab", args, home, env, f"{base}/api/status"):
        yield base


@pytest.fixture(scope="session")
def voila_server(tmp_path_factory):
    """The base URL of Voila serving copies of notebooks/ as dashboards (``make demo``'s mode)."""
    home = _home_with_notebooks(tmp_path_factory, "voila")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               **STUDENT_ENV)
    base = f"http://127.0.0.1:{_free_port()}"
    args = [str(Path(sys.executable).parent / "voila"), "notebooks", "--no-browser", "--Voila.ip=127.0.0.1",
            f"--port={base.rsplit(':', 1)[1]}"]
    with _serving("voila", args, home, env, base):
        yield base


@pytest.fixture(scope="session")
def browser():
    """One Chromium for the whole session (each test opens a context of its own); it starts no server, so the
    exercise test alone (tests/browser/test_exercise_in_browser.py) does not start the notebooks' JupyterLab."""
    reason = _missing()
    if reason:
        MISSING.append(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def report():
    """Rows of the browser report, written to reports/browser/report.md as they come."""
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    rows: list[str] = []
    path = REPORT_DIR / "report.md"

    def add(notebook: str, action: str, control: str, seconds: float | None, outcome: str) -> None:
        shown = "" if seconds is None else f"{seconds:.2f}"
        rows.append(f"| {notebook} | {action} | {control} | {shown} | {outcome} |")
        path.write_text("| notebook | action | control | redraw (s) | outcome |\n| --- | --- | --- | ---: | --- |\n"
                        + "\n".join(rows) + f"\n\nScreenshots: {REPORT_DIR}\n")

    return add
