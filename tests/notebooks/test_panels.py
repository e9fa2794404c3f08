"""Every notebook's widget panel, run in-process with ``interactive=True``.

Headless kernels sometimes stall on widget cells, so CI's papermill runs skip the panels
(``interactive=False``). Here each notebook's cells run in a plain in-process IPython shell (no
kernel, no comms) up to its last panel cell (:func:`cluster_sim.ui.inprocess.notebook_panels`);
then every panel it built is driven as a user would: each control is moved one step, and the
panel must re-run and redraw without an error, or refuse the step with a message naming the
control (never an error about a field the student did not touch), and nothing may warn (a kernel
would print the warning under the panel; the browser tests see that on a few labs only).

This is where every lab's panels are checked; the browser tests (tests/browser/) check what only a
browser shows, on the labs that cover every kind of control.
"""

import warnings
from pathlib import Path

import pytest

from cluster_sim.ui.inprocess import notebook_panels

ROOT = Path(__file__).resolve().parents[2]
WITH_PANELS = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if "ConfigPanel(" in p.read_text()]


def _another_value(control):
    """A different valid value for a control: the next option, or one step along its slider."""
    if control.dropdown is not None:
        options = list(control.dropdown.options)
        return options[(options.index(control.value) + 1) % len(options)]
    if control.checkbox is not None:
        return not control.value
    if control.slider is not None:
        s = control.slider
        up = control.value + s.step
        return up if up <= s.max else control.value - s.step
    return None


@pytest.mark.notebook
@pytest.mark.parametrize("path", WITH_PANELS, ids=lambda p: p.name)
def test_panels_rerun_and_redraw(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # each warning once per place, as a kernel shows it
        for category in (DeprecationWarning, FutureWarning):  # errors, as everywhere in the suite (pyproject.toml)
            warnings.filterwarnings("error", category=category)
        _build_and_drive(path)
    shown = [f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})" for w in caught]
    assert not shown, f"{path.name}: building and driving its panels warned:\n" + "\n".join(shown)


def _build_and_drive(path):
    built = notebook_panels(path)
    assert built, f"{path.name}: its panel cell built no ConfigPanel with interactive=True"
    for k, panel in enumerate(built):
        moved = 0
        for name, control in panel.controls.items():
            value = _another_value(control)
            if value is None or moved >= 3:  # three controls per panel keep this test quick
                continue
            runs = panel.runs
            panel.set(**{name: value})
            if panel.error is not None:
                assert panel.error.startswith(f"{name} = "), f"{path.name} panel {k}: moving {name!r} gave {panel.error}"
                assert getattr(panel.config, name) == control.value
            else:
                assert panel.runs == runs + 1, f"{path.name} panel {k}: moving {name!r} did not re-run the panel"
                assert getattr(panel.config, name) == value and panel.image is not None
                moved += 1
        assert moved, f"{path.name} panel {k}: no control could be moved"


@pytest.mark.notebook
def test_a_notebook_run_in_process_leaves_process_settings_as_it_found_them():
    # Lab 01's set-up cell sets a thousands-separator float format; run in-process, it once leaked
    # into a doctest in the same pytest worker (3600.0 printed as 3,600.00).
    import matplotlib as mpl
    import pandas as pd

    before = (pd.get_option("display.float_format"), pd.get_option("display.max_colwidth"),
              mpl.rcParams["figure.dpi"])
    notebook_panels(ROOT / "notebooks" / "01_plan_aware_shaper.ipynb", preset="ci")
    after = (pd.get_option("display.float_format"), pd.get_option("display.max_colwidth"),
             mpl.rcParams["figure.dpi"])
    assert after == before
