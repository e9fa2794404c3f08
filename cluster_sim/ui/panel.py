"""A widget panel built from a config dataclass: ``run`` + ``plot`` re-invoked on every change.

The controls come from the fields' metadata (range, slider range, step, choices, description), so
a new config field appears on the panel without UI code. Headless runs (papermill in CI) never
build a panel: they call the same ``run`` and ``plot`` functions directly, which is what the panel
shows.

What a student can trust (each is tested in-process and in a real browser):

- **A slider covers what redraws in about a second**: its range is the field's ``slider`` range
  (declared with :func:`~cluster_sim.config.param`), not the whole validation range. Larger
  values stay available from the notebook's ``parameters`` cell.
- **A typed value is never clamped.** Next to each slider is a box for typing a value; a value
  outside the slider's range, or one the config refuses, is rejected with the allowed range.
- **A rejected value puts the control back** to the last value that ran, and the message naming
  the field stays until the next change that runs.
- **A change too big for a panel is refused before it runs**: when the config estimates the work a
  run creates (:meth:`~cluster_sim.config.Config.work`), a change estimated to take far
  longer than a second is refused with the estimate and the fields that drive it.
- **A busy state shows while ``run`` works** (the status line says what is running and the old
  figure is dimmed), and a change that draws exactly the same figure says so.

Example
-------
>>> from cluster_sim.engine import ClusterConfig, run
>>> from cluster_sim.ui import ConfigPanel, plot_overview
>>> panel = ConfigPanel(ClusterConfig.ci(), run, plot_overview, fields=["machines", "load"])
>>> panel.set(load=0.9)                   # what moving the slider does
>>> panel.config.load, panel.runs
(0.9, 2)
>>> panel.type_value("machines", "0")     # what typing 0 into the machines box does
>>> panel.config.machines, panel.controls["machines"].value
(10, 10)
>>> print(panel.error)
machines = 0 was refused: allowed 1 <= machines <= 100 on this panel (larger values: set them in the parameters cell). Back at machines = 10.
"""

from __future__ import annotations

import dataclasses
import html
import io
import math
import time
from typing import Any, Callable, Sequence

import ipywidgets as widgets

from ..config import field_label
from ..progress import quiet

#: a change estimated to take longer than this many seconds is refused by a panel (the slider
#: ranges aim at about one second; the estimate is rough, so the budget leaves room)
PANEL_BUDGET_SECONDS = 5.0
#: at most this many values on a slider; a wider range gets a typed box only (e.g. a seed)
MAX_SLIDER_VALUES = 100_000
#: changes made within this many seconds of each other (arrow keys held down, a slider dragged) run once, with the
#: latest values: each run takes about a second, and a run per key press would queue up seconds of stale redraws
DEBOUNCE_SECONDS = 0.3


def _in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (where widget messages arrive on the kernel's event loop)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def later(callback: Callable[[], Any]) -> None:
    """Run ``callback`` once the changes arriving now have arrived: after :data:`DEBOUNCE_SECONDS` in a kernel
    (it handles widget messages on its running event loop; those queued behind a run arrive before it), or at once
    elsewhere (an in-process shell, a script, a test). Both conditions: a process may hold a running loop it does
    not feed widget messages through (a test session's browser driver does)."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None or not _in_kernel():
        callback()
    else:
        loop.call_later(DEBOUNCE_SECONDS, callback)


def _decimals(step: float) -> int:
    """Decimal places that represent multiples of ``step`` exactly (0.05 -> 2, 1e-3 -> 3)."""
    text = f"{step:.10f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def slider_range(field: dataclasses.Field, value: Any) -> tuple[float, float] | None:
    """The range a slider offers for ``field``: its declared ``slider`` range, else its validation
    range when that is narrow enough for a slider; None when it gets a typed box only."""
    meta = field.metadata
    if meta.get("slider") is not None:
        return meta["slider"]
    lo, hi = meta.get("lo"), meta.get("hi")
    if lo is None or hi is None:
        return None
    step = meta.get("step") or (1 if isinstance(value, int) else (hi - lo) / 100)
    if (hi - lo) / step > MAX_SLIDER_VALUES:
        return None
    return lo, hi


class FieldControl:
    """One config field on a panel: a slider with a box for typed values, a dropdown, a checkbox
    or a text box. ``value`` is the field's value as the panel last ran it.

    A change is reported as ``on_change(name, value)``; a typed text that is not a number of the
    field's kind as ``on_invalid(name, text, reason)``. :meth:`show` puts a value on every part
    of the control without reporting it (used to reset a rejected value).
    """

    def __init__(self, field: dataclasses.Field, value: Any, on_change: Callable, on_invalid: Callable):
        self.name = field.name
        self.field = field
        meta = field.metadata
        self.doc = meta.get("doc", "")
        self._on_change, self._on_invalid = on_change, on_invalid
        self._muted = False
        self.kind = type(value)
        self.slider = self.box = self.dropdown = self.checkbox = None
        self.range = None
        self.beyond: tuple | None = None  # the slider range the start value lies beyond, if it does
        self.off_grid: tuple | None = None  # (lo, hi, step) of the declared grid the start value is not on, if so
        self.label = field_label(field)
        # the readable label is what a student reads; the field's name (what the parameters cell and the messages
        # call it) and its description stay in the tooltip
        self.tooltip = f"{self.name}: {self.doc}" if self.doc else self.name
        label = widgets.Label(self.label, layout=widgets.Layout(width="210px"), tooltip=self.tooltip)
        label.add_class("cs-label")
        if meta.get("choices") is not None:
            self.dropdown = widgets.Dropdown(options=list(meta["choices"]), value=value, tooltip=self.tooltip,
                                             layout=widgets.Layout(width="180px"))
            self.dropdown.observe(self._from_widget, names="value")
            parts = [label, self.dropdown]
        elif isinstance(value, bool):
            self.checkbox = widgets.Checkbox(value=value, indent=False, tooltip=self.tooltip)
            self.checkbox.observe(self._from_widget, names="value")
            parts = [label, self.checkbox]
        elif isinstance(value, (int, float)):
            self.range = slider_range(field, value)
            if self.range is not None and not self.range[0] <= value <= self.range[1]:
                # started beyond the slider (a value from the parameters cell): keep it reachable
                self.beyond = self.range
                self.range = (min(self.range[0], value), max(self.range[1], value))
            parts = [label]
            if self.range is not None:
                lo, hi = self.range
                common = dict(readout=False, continuous_update=False, tooltip=self.tooltip,
                              layout=widgets.Layout(width="170px"))
                if isinstance(value, int):
                    step = int(meta.get("step") or 1)
                    lo, hi = self._grid_through(value, lo, hi, step)
                    self.slider = widgets.IntSlider(value=value, min=lo, max=hi, step=step, **common)
                else:
                    step = meta.get("step") or (hi - lo) / 100
                    self._places = max(_decimals(step), _decimals(value))
                    lo, hi = self._grid_through(value, lo, hi, step)
                    self.slider = widgets.FloatSlider(value=value, min=lo, max=hi, step=step, **common)
                self.slider.observe(self._from_widget, names="value")
                parts.append(self.slider)
            self.box = widgets.Text(value=_format(value), continuous_update=False, tooltip=self.tooltip,
                                    layout=widgets.Layout(width="90px"))
            self.box.observe(self._from_box, names="value")
            parts.append(self.box)
        elif isinstance(value, str):
            self.box = widgets.Text(value=value, continuous_update=False, tooltip=self.tooltip,
                                    layout=widgets.Layout(width="180px"))
            self.box.observe(self._from_box, names="value")
            parts = [label, self.box]
        else:
            raise ValueError(f"field {field.name!r} of type {type(value).__name__} has no widget; "
                             "declare it with widget=False")
        self.value = value
        self.widget = widgets.HBox(parts, layout=widgets.Layout(width="490px"))
        self.widget.add_class("cs-field")
        self.widget.add_class(f"cs-field-{self.name}")

    def _grid_through(self, value, lo, hi, step):
        """The slider's (min, max): its range, shifted onto the grid through ``value`` when the start value lies
        between two grid points (a slider whose grid misses its value moves it to a grid point on the first key
        press: 0.68 on a 0.05 grid from 0 jumps to 0.7). The grid keeps its step and stays inside the range."""
        below = math.floor((value - lo) / step + 1e-9)
        if abs(lo + below * step - value) <= 1e-9 * max(1.0, abs(value)):
            return lo, hi  # already on the grid
        new_lo = value - below * step
        new_hi = new_lo + math.floor((hi - new_lo) / step + 1e-9) * step
        if isinstance(value, float):
            new_lo, new_hi = round(new_lo, self._places), round(new_hi, self._places)
        self.off_grid = (lo, hi, step)
        return new_lo, new_hi

    # ---- reading what the user did ----------------------------------------------------------
    def _from_widget(self, change) -> None:
        if self._muted:
            return
        new = change["new"]
        if self.slider is not None and isinstance(new, float):
            new = round(new, self._places)  # a float slider's 0.15000000000000002 is the 0.15 shown
        self._on_change(self.name, new)

    def _from_box(self, change) -> None:
        if self._muted:
            return
        text = change["new"].strip()
        if self.kind is str:
            self._on_change(self.name, text)
            return
        try:
            number = float(text)
        except ValueError:
            self._on_invalid(self.name, text, f"is not a number{self.range_text()}")
            return
        if self.kind is int:
            if not number.is_integer():
                self._on_invalid(self.name, text, f"is not a whole number{self.range_text()}")
                return
            number = int(number)
        elif not math.isfinite(number):
            self._on_invalid(self.name, text, f"is not a finite number{self.range_text()}")
            return
        self._on_change(self.name, number)

    def range_text(self) -> str:
        if self.range is not None:
            return f": allowed {_format(self.range[0])} <= {self.name} <= {_format(self.range[1])} on this panel"
        lo, hi = self.field.metadata.get("lo"), self.field.metadata.get("hi")
        if lo is not None and hi is not None:
            return f": allowed {_format(lo)} <= {self.name} <= {_format(hi)}"
        return ""

    def outside_slider(self, value: Any) -> bool:
        return self.range is not None and not (self.range[0] <= value <= self.range[1])

    # ---- showing a value ---------------------------------------------------------------------
    def show(self, value: Any) -> None:
        """Put ``value`` on every part of the control without reporting a change."""
        self._muted = True
        try:
            for w in (self.slider, self.dropdown, self.checkbox):
                if w is not None:
                    w.value = value
            if self.box is not None:
                self.box.value = _format(value)
        finally:
            self._muted = False
        self.value = value

    def set_disabled(self, disabled: bool) -> None:
        for w in (self.slider, self.box, self.dropdown, self.checkbox):
            if w is not None:
                w.disabled = disabled


def control_for(field: dataclasses.Field, value: Any) -> FieldControl:
    """The control a panel shows for one config field (its parts are plain ipywidgets)."""
    return FieldControl(field, value, on_change=lambda *a: None, on_invalid=lambda *a: None)


def render_png(figure) -> bytes:
    """The figure as PNG bytes at the figure's dpi (its constrained layout already fits the canvas,
    so no second "tight" pass is drawn)."""
    buf = io.BytesIO()
    figure.savefig(buf, format="png")
    return buf.getvalue()


class ConfigPanel:
    """Controls over a config; every change re-runs ``run(config)`` and redraws ``plot(result)``.

    ``fields`` picks and orders the controls (default: every field whose metadata allows a
    widget). ``budget_seconds`` is the longest estimated run the panel starts (see
    :meth:`Config.work <cluster_sim.config.Config.work>`); larger runs belong in the
    ``parameters`` cell. ``defer(callback)`` runs a control's change once the changes right
    behind it have arrived (default :func:`later`), so rapid changes make one run of the latest values.
    """

    def __init__(self, config, run: Callable, plot: Callable, fields: Sequence[str] | None = None,
                 *, budget_seconds: float = PANEL_BUDGET_SECONDS, defer: Callable[[Callable], Any] = later):
        self.config = config
        self._defer = defer  # how a control's change waits for the ones right behind it (see ``later``)
        self._pending: dict[str, Any] = {}
        self._run = run
        self._plot = plot
        self.budget_seconds = budget_seconds
        by_name = {f.name: f for f in dataclasses.fields(config)}
        if fields is None:
            fields = [n for n, f in by_name.items() if f.metadata.get("widget", True)]
        unknown = [n for n in fields if n not in by_name]
        if unknown:
            raise ValueError(f"fields {unknown} are not fields of {type(config).__name__}; choose from {sorted(by_name)}")
        self.controls = {n: FieldControl(by_name[n], getattr(config, n), self._on_change, self._on_invalid)
                         for n in fields}
        self.status = widgets.HTML()
        self.status.add_class("cs-status")
        # the figure is an Image widget's value, not an Output widget's display: a coalesced change runs after its
        # message was handled (see ``later``), where an Output widget no longer captures what is displayed
        self.view = widgets.Image(format="png", layout=widgets.Layout(max_width="100%", height="auto"))
        self.output = widgets.Box([self.view])
        self.output.add_class("cs-figure")
        grid = widgets.GridBox([c.widget for c in self.controls.values()],
                               layout=widgets.Layout(grid_template_columns="repeat(2, 500px)"))
        self.widget = widgets.VBox([grid, self.status, self.output])
        self.widget.add_class("cs-panel")
        self.runs = 0
        self.result = None
        self.figure = None
        self.image: bytes | None = None
        self.error: str | None = None
        self.busy = False
        self.seconds = float("nan")  # how long the last redraw took (run + plot + render)
        self._redraw(config, "")
        beyond = [f"{n} = {_format(c.value)} (slider {_format(c.beyond[0])}..{_format(c.beyond[1])})"
                  for n, c in self.controls.items() if c.beyond is not None]
        if beyond:
            self.status.value += (f"<br><small>Started beyond the range that redraws in about a second: "
                                  f"{html.escape(', '.join(beyond))}; expect slower redraws.</small>")

    # ---- what a user does ----------------------------------------------------------------------
    def set(self, **changes: Any) -> None:
        """Change fields as a user moving the controls would, then redraw once."""
        self._apply(changes)

    def type_value(self, name: str, text: str) -> None:
        """Type ``text`` into the box of field ``name`` (as a user would), then redraw."""
        box = self.controls[name].box
        if box is None:
            raise ValueError(f"field {name!r} has no box to type into on this panel")
        box.value = text

    def _on_change(self, name: str, value: Any) -> None:
        # coalesce: the changes that arrive before the deferred run are applied together, each field at its latest
        first = not self._pending
        self._pending[name] = value
        if first:
            self._defer(self._apply_pending)

    def _apply_pending(self) -> None:
        changes, self._pending = self._pending, {}
        if changes:
            self._apply(changes)

    def _on_invalid(self, name: str, text: str, reason: str) -> None:
        self._reject({name: text}, f"{name} = {text!r} {reason}")

    # ---- validate, run, redraw -----------------------------------------------------------------
    def _apply(self, changes: dict) -> bool:
        """Validate, run and redraw; a refused change resets its controls and says why."""
        moved = ", ".join(f"{k} = {_format(v)}" for k, v in changes.items())
        for name, value in changes.items():
            control = self.controls.get(name)
            if control is not None and control.outside_slider(value):
                lo, hi = control.range
                return self._reject(changes, (
                    f"{name} = {_format(value)} was refused: allowed {_format(lo)} <= {name} <= {_format(hi)} "
                    "on this panel (larger values: set them in the parameters cell)"))
        try:
            config = self.config.replace(**changes)
        except ValueError as e:
            return self._reject(changes, f"{moved} was refused: {e}")
        if config == self.config:  # e.g. "10" typed over 10: nothing to run, only tidy the controls
            for name in changes:
                if name in self.controls:
                    self.controls[name].show(getattr(config, name))
            return True
        work = config.work() if hasattr(config, "work") else None
        if work is not None and work.seconds > self.budget_seconds:
            return self._reject(changes, (
                f"{moved} was refused: {work.describe()}; that takes about {work.seconds:.0f} s, more than a "
                f"panel should wait (about {self.budget_seconds:.0f} s): {work.advice()}, "
                "or run it from the parameters cell"))
        return self._redraw(config, moved, changes)

    def _redraw(self, config, moved: str, changes: dict | None = None) -> bool:
        self._set_busy(True, moved)
        t0 = time.perf_counter()
        try:
            with quiet():  # the panel shows its own busy state; a bar would land in the output area
                result = self._run(config)
            figure = self._plot(result)
            image = render_png(figure)
        except ValueError as e:
            if changes is None:
                raise
            return self._reject(changes, f"{moved} could not run: {e}")
        except Exception as e:
            if changes is None:
                raise
            # a bug, not a bad value: still shown where the student looks, and the panel stays usable
            return self._reject(changes, f"{moved} failed with {type(e).__name__}: {e} (a bug: please report it)")
        finally:
            self._set_busy(False)
        self.seconds = time.perf_counter() - t0
        same = self.image == image
        self.config, self.result, self.figure, self.image = config, result, figure, image
        for name, control in self.controls.items():
            if control.value != getattr(config, name):
                control.show(getattr(config, name))
        self.runs += 1
        self.error = None
        # the figure first, then the status: "re-ran" must never stand next to the old figure
        self.view.value = image
        note = ""
        if same and changes:
            note = (f" The figure is exactly the same as before: at this setting {moved} changes nothing drawn "
                    "(a step too small to cross the next event or decision); try a larger step.")
        self.status.value = f"<small>re-ran in {self.seconds:.2f} s{' with ' + html.escape(moved) if moved else ''}." \
                            f"{html.escape(note)}</small>"
        return True

    def _reject(self, changes: dict, message: str) -> bool:
        back = ", ".join(f"{k} = {_format(getattr(self.config, k))}" for k in changes if hasattr(self.config, k))
        self.error = f"{message}. Back at {back}." if back else message
        for name in changes:
            if name in self.controls:
                self.controls[name].show(getattr(self.config, name))
        self.status.value = f"<span style='color:#b00'>{html.escape(self.error)}</span>"
        return False

    def _set_busy(self, busy: bool, moved: str = "") -> None:
        self.busy = busy
        if busy:
            what = f" with {html.escape(moved)}" if moved else ""
            self.status.value = f"<span class='cs-busy'>⏳ running{what} …</span>"
            self.output.layout.opacity = "0.35"
        else:
            self.output.layout.opacity = "1"
        for control in self.controls.values():
            control.set_disabled(busy)
