"""Build a notebook's panels without a kernel: its code cells run in an in-process IPython shell.

Headless kernels sometimes stall on widget cells, so CI's papermill runs skip the panels
(``interactive=False``). This runs a notebook's code cells, with the ``parameters`` cell's values
overridden, in a plain in-process shell (no kernel, no comms) up to its last panel cell, and
returns every :class:`~cluster_sim.ui.ConfigPanel` it built, so tests and ``bench/panels.py`` can
drive the panels as a student would.
"""

from __future__ import annotations

import io
import os
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat

from . import panel as panel_module


@contextmanager
def _settings_restored():
    """A notebook's set-up cell changes process-wide settings (pandas display formats, matplotlib
    rcParams); a notebook run in-process must leave them as it found them, or later code in the
    same process (a doctest printing a table) sees the notebook's formats."""
    import matplotlib as mpl
    import pandas as pd

    display = {f"display.{name}": getattr(pd.options.display, name) for name in dir(pd.options.display)}
    display = {key: value for key, value in display.items() if not hasattr(value, "__dir__") or
               type(value).__name__ != "DictWrapper"}  # nested groups (display.html.*) hold no value
    rc = mpl.rcParams.copy()
    try:
        yield
    finally:
        for key, value in display.items():
            pd.set_option(key, value)
        mpl.rcParams.update(rc)


@contextmanager
def _recording_panels(built: list):
    original = panel_module.ConfigPanel.__init__

    def recording_init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.append(self)

    panel_module.ConfigPanel.__init__ = recording_init
    try:
        yield
    finally:
        panel_module.ConfigPanel.__init__ = original


def notebook_panels(path: str | Path, **parameters) -> list:
    """Run ``path``'s code cells up to its last ``ConfigPanel(`` cell with ``interactive=True`` and
    ``parameters`` (e.g. ``preset="default"``) set after its parameters cell; return the panels.

    Raises ``RuntimeError`` naming the cell that failed.
    """
    from IPython.core.interactiveshell import InteractiveShell

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    panel_cells = [i for i, c in enumerate(code) if "ConfigPanel(" in c.source]
    if not panel_cells:
        return []
    settings = {"interactive": True, **parameters}
    built: list = []
    cwd = os.getcwd()
    os.chdir(path.parent)
    shell = InteractiveShell.instance()
    try:
        # what the cells print or display would flood a test log or a benchmark's table
        with _settings_restored(), _recording_panels(built), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            for i, cell in enumerate(code[: panel_cells[-1] + 1]):
                source = cell.source
                if "parameters" in cell.metadata.get("tags", []):
                    source += "".join(f"\n{k} = {v!r}" for k, v in settings.items())
                result = shell.run_cell(source, silent=True)
                if not result.success:
                    error = result.error_in_exec or result.error_before_exec
                    raise RuntimeError(f"{path.name}: code cell {i} failed in-process: {error!r}")
    finally:
        InteractiveShell.clear_instance()
        os.chdir(cwd)
    return built

