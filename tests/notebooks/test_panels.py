"""Every notebook's widget panel, run in-process with ``interactive=True``.

Headless kernels sometimes stall on widget cells, so CI's papermill runs skip the panels
(``interactive=False``). Here each notebook's cells run in a plain in-process IPython shell (no
kernel, no comms) up to its last panel cell; then every panel it built is driven as a user would:
one control is moved, and the panel must re-run and redraw without an error.
"""

from pathlib import Path

import nbformat
import pytest

from cluster_sim.ui import panel as panel_module

ROOT = Path(__file__).resolve().parents[2]
WITH_PANELS = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if "ConfigPanel(" in p.read_text()]


def _another_value(control):
    """A different valid value for a control: the next option, or a step along a slider."""
    if hasattr(control, "options") and control.options:
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return options[(options.index(control.value) + 1) % len(options)]
    if isinstance(control.value, bool):
        return not control.value
    hi = getattr(control, "max", None)
    step = getattr(control, "step", None) or 1
    up = control.value + step
    return up if hi is None or up <= hi else control.value - step


@pytest.mark.notebook
@pytest.mark.parametrize("path", WITH_PANELS, ids=lambda p: p.name)
def test_panels_rerun_and_redraw(path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    built = []
    original_init = panel_module.ConfigPanel.__init__

    def recording_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(panel_module.ConfigPanel, "__init__", recording_init)
    monkeypatch.chdir(path.parent)
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    last_panel = max(i for i, c in enumerate(code) if "ConfigPanel(" in c.source)
    shell = InteractiveShell.instance()
    try:
        for i, cell in enumerate(code[: last_panel + 1]):
            source = cell.source
            if "parameters" in cell.metadata.get("tags", []):
                source += "\ninteractive = True"
            result = shell.run_cell(source, silent=True)
            assert result.success, f"{path.name}: code cell {i} failed in-process: {result.error_in_exec or result.error_before_exec!r}"
    finally:
        InteractiveShell.clear_instance()
    assert built, f"{path.name}: its panel cell built no ConfigPanel with interactive=True"
    for panel in built:
        name, control = next(iter(panel.controls.items()))
        runs = panel.runs
        control.value = _another_value(control)
        assert panel.error is None, f"{path.name}: moving {name!r} gave {panel.error}"
        assert panel.runs == runs + 1, f"{path.name}: moving {name!r} did not re-run the panel"
        assert panel.figure is not None
