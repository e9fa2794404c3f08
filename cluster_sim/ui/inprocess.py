"""Build a notebook's panels without a kernel: its code cells run in an in-process IPython shell.

Headless kernels sometimes stall on widget cells, so CI's papermill runs skip the panels
(``interactive=False``). This runs a notebook's code cells, with the ``parameters`` cell's values
overridden, in a plain in-process shell (no kernel, no comms) up to its last panel cell, and
returns every :class:`~cluster_sim.ui.ConfigPanel` it built, so tests and ``bench/panels.py`` can
drive the panels as a student would. Only the cells the panel cells need run (:func:`cells_needed`): a cell
that only shows a table or a figure, or computes what no panel reads, is skipped; papermill's executions
run every cell.
"""

from __future__ import annotations

import ast
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


def _transformed(source: str) -> str:
    """A cell's source as Python (IPython's ``%magics`` and ``!shell`` lines turned into calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _names(source: str, modules: set[str]) -> tuple[set[str], set[str]]:
    """The names a cell may bind or change, and the names it reads (anywhere: function bodies read globals
    when called). A change is an assignment, an import, a ``def``/``class``, a store into an attribute or item
    of a name (``x.a = 1``, ``x[0] = 1``), or a method call on a name (``x.append(1)``), unless the name is a
    module (``np.mean(x)`` changes nothing). ``from m import *`` may bind anything: ``"*"``."""
    tree = ast.parse(_transformed(source))
    bound, read = set(), set()

    def root(node):
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            node = node.func if isinstance(node, ast.Call) else node.value
        return node.id if isinstance(node, ast.Name) else None

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            bound.add(root(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = root(node.func)
            if name not in modules:
                bound.add(name)
    bound.discard(None)
    return bound, read


def cells_needed(sources: list[str], panels: list[int], parameters: int | None = None) -> list[int]:
    """The cells (indices into ``sources``, in order) that the ``panels`` cells need: the panel cells, the
    ``parameters`` cell, and every earlier cell that binds or changes a name a needed cell reads (see
    :func:`_names`), transitively. Names only: a call that changes an argument in place (``f(x)``) is not seen;
    the labs' functions leave their arguments as they were (remembered results are read-only), so
    a cell calling ``run(config)`` is not taken to change ``config``."""
    modules = set()
    for source in sources:
        for node in ast.walk(ast.parse(_transformed(source))):
            if isinstance(node, ast.Import):
                modules |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    names = [_names(source, modules) for source in sources[: max(panels) + 1]]
    keep = set(panels) | ({parameters} if parameters is not None else set())
    wanted: set[str] = set()
    for i in range(max(panels), -1, -1):
        bound, read = names[i]
        if i in keep or bound & wanted or "*" in bound:
            keep.add(i)
            wanted |= read  # not less what it binds: a binding may be conditional, the earlier one stays wanted
    return sorted(keep)


def notebook_panels(path: str | Path, **parameters) -> list:
    """Run the code cells of ``path`` that its ``ConfigPanel(`` cells need (:func:`cells_needed`), with
    ``interactive=True`` and ``parameters`` (e.g. ``preset="default"``) set after its parameters cell; return
    the panels.

    Raises ``RuntimeError`` naming the cell that failed.
    """
    from IPython.core.interactiveshell import InteractiveShell

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    panel_cells = [i for i, c in enumerate(code) if "ConfigPanel(" in c.source]
    if not panel_cells:
        return []
    parameters_cell = next((i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", [])), None)
    needed = cells_needed([c.source for c in code], panel_cells, parameters_cell)
    settings = {"interactive": True, **parameters}
    built: list = []
    cwd = os.getcwd()
    os.chdir(path.parent)
    shell = InteractiveShell.instance()
    try:
        # what the cells print or display would flood a test log or a benchmark's table
        with _settings_restored(), _recording_panels(built), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            for i in needed:
                cell = code[i]
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

