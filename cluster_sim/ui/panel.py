"""A widget panel built from a config dataclass: ``run`` + ``plot`` re-invoked on every change.

The controls come from the fields' metadata (range, step, choices, description), so a new config
field appears on the panel without UI code. Headless runs (papermill in CI) never build a panel:
they call the same ``run`` and ``plot`` functions directly, which is what the panel shows.

Example
-------
>>> from cluster_sim.engine import ClusterConfig, run
>>> from cluster_sim.ui import ConfigPanel, plot_overview
>>> panel = ConfigPanel(ClusterConfig.ci(), run, plot_overview, fields=["machines", "load"])
>>> panel.set(load=0.9)                   # what moving the slider does
>>> panel.config.load, panel.runs
(0.9, 2)
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Sequence

import ipywidgets as widgets
from IPython import get_ipython
from IPython.display import display


def control_for(field: dataclasses.Field, value: Any) -> widgets.Widget:
    """The ipywidgets control for one config field, from its metadata."""
    meta = field.metadata
    desc = field.name
    style = {"description_width": "initial"}
    layout = widgets.Layout(width="340px")
    common = dict(description=desc, style=style, layout=layout, tooltip=meta.get("doc", ""),
                  continuous_update=False)
    if meta.get("choices") is not None:
        common.pop("continuous_update")
        return widgets.Dropdown(options=list(meta["choices"]), value=value, **common)
    if isinstance(value, bool):
        common.pop("continuous_update")
        return widgets.Checkbox(value=value, indent=False, **common)
    lo, hi, step = meta.get("lo"), meta.get("hi"), meta.get("step")
    if isinstance(value, int):
        if lo is None or hi is None or hi - lo > 100_000:
            return widgets.BoundedIntText(value=value, min=lo if lo is not None else -2**63,
                                          max=hi if hi is not None else 2**63 - 1, **common)
        return widgets.IntSlider(value=value, min=lo, max=hi, step=int(step or 1), **common)
    if isinstance(value, float):
        if lo is None or hi is None or (lo > 0 and hi / lo > 1e4) or hi - lo > 1e4:
            return widgets.BoundedFloatText(value=value, min=lo if lo is not None else -1e300,
                                            max=hi if hi is not None else 1e300, step=step, **common)
        return widgets.FloatSlider(value=value, min=lo, max=hi, step=step or (hi - lo) / 100,
                                   readout_format=".3g", **common)
    if isinstance(value, str):
        return widgets.Text(value=value, **common)
    raise ValueError(f"field {field.name!r} of type {type(value).__name__} has no widget; declare it with widget=False")


class ConfigPanel:
    """Sliders over a config; every change re-runs ``run(config)`` and redraws ``plot(result)``.

    ``fields`` picks and orders the controls (default: every field whose metadata allows a widget).
    A value the config rejects is shown in the status line and the last good figure stays.
    """

    def __init__(self, config, run: Callable, plot: Callable, fields: Sequence[str] | None = None):
        self.config = config
        self._run = run
        self._plot = plot
        by_name = {f.name: f for f in dataclasses.fields(config)}
        if fields is None:
            fields = [n for n, f in by_name.items() if f.metadata.get("widget", True)]
        unknown = [n for n in fields if n not in by_name]
        if unknown:
            raise ValueError(f"fields {unknown} are not fields of {type(config).__name__}; choose from {sorted(by_name)}")
        self.controls = {n: control_for(by_name[n], getattr(config, n)) for n in fields}
        for name, control in self.controls.items():
            control.observe(self._on_change, names="value")
        self.status = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([
            widgets.GridBox(list(self.controls.values()),
                            layout=widgets.Layout(grid_template_columns="repeat(2, 350px)")),
            self.status, self.output,
        ])
        self.runs = 0
        self.result = None
        self.figure = None
        self.error: str | None = None
        self._muted = False
        self.refresh()

    def set(self, **changes: Any) -> None:
        """Change fields as a user moving the controls would, then redraw once."""
        if self._apply(changes):
            self._muted = True
            try:
                for name, value in changes.items():
                    if name in self.controls:
                        self.controls[name].value = value
            finally:
                self._muted = False

    def _on_change(self, change) -> None:
        if not self._muted:
            self._apply({change["owner"].description: change["new"]})

    def _apply(self, changes: dict) -> bool:
        """Validate, run and redraw; a ValueError (from the config or from ``run`` itself, e.g.
        "need 40 slots, have 32") is shown on the status line and the last good state stays."""
        previous = self.config
        try:
            self.config = self.config.replace(**changes)
            self.refresh()
        except ValueError as e:
            self.config = previous
            self.error = str(e)
            self.status.value = f"<span style='color:#b00'>{self.error}</span>"
            return False
        return True

    def refresh(self) -> None:
        t0 = time.perf_counter()
        self.result = self._run(self.config)
        figure = self._plot(self.result)
        self.runs += 1
        self.error = None
        self.status.value = f"<small>re-ran in {time.perf_counter() - t0:.2f} s</small>"
        if get_ipython() is not None:  # outside a front end (tests, scripts) there is nothing to draw on
            self.output.clear_output(wait=True)
            with self.output:
                display(figure)
        self.figure = figure
