"""The panel's callback path, exercised in-process (headless kernels never build widgets).

Each test mirrors a way a student was misled in a real browser (issue: "Panels a student can
trust"); tests/browser/ checks the same behaviour through JupyterLab and Chromium.
"""

import dataclasses

import ipywidgets as widgets
import pytest
from matplotlib.figure import Figure

from cluster_sim.config import Config, param
from cluster_sim.engine import ClusterConfig, run
from cluster_sim.config import Work
from cluster_sim.ui import ConfigPanel, control_for, new_figure, plot_overview


@dataclasses.dataclass(frozen=True)
class Toy(Config):
    """Cheap to run: what the panel does, not what the engine does, is under test here."""

    stages: int = param(14, lo=2, hi=60, slider=(2, 30), doc="stages")
    spools: int = param(3, lo=0, hi=30, doc="spools")
    rate: float = param(0.7, lo=0.01, hi=3.0, step=0.05, slider=(0.05, 1.5), doc="a rate")
    mode: str = param("a", choices=("a", "b"), doc="a mode")
    label: str = param("x", doc="free text")
    seed: int = param(0, lo=0, hi=2**31 - 1, doc="seed")

    def validate(self):
        if self.spools > self.stages - 2:
            raise ValueError(f"Toy.spools={self.spools} is out of range for stages={self.stages}: "
                             f"allowed 0 <= spools <= stages - 2 = {self.stages - 2}")

    def work(self):
        return Work(self.stages * 100.0, "vertices", f"{self.stages} stages x 100", ("stages",), (), self.stages / 10)


def toy_run(config):
    return config


def toy_plot(config):
    fig, ax = new_figure(size=(2, 1))
    ax.set_title(f"{config.stages} {config.spools} {config.rate} {config.mode} {config.label} {config.seed // 2}")
    return fig


def toy_panel(**kw):
    return ConfigPanel(Toy(), toy_run, toy_plot, **kw)


def test_controls_follow_the_field_metadata():
    cfg = ClusterConfig.ci()
    fields = {f.name: f for f in dataclasses.fields(cfg)}
    machines = control_for(fields["machines"], cfg.machines)
    # the slider covers what redraws in about a second, not the whole 1..20,000 the config accepts
    assert isinstance(machines.slider, widgets.IntSlider) and (machines.slider.min, machines.slider.max) == (1, 100)
    assert machines.slider.readout is False and machines.box.value == "10"  # typed values go to the box
    assert isinstance(control_for(fields["placement"], cfg.placement).dropdown, widgets.Dropdown)
    assert isinstance(control_for(fields["update_delay"], cfg.update_delay).slider, widgets.FloatSlider)
    seed = control_for(fields["seed"], cfg.seed)
    assert seed.slider is None and isinstance(seed.box, widgets.Text)  # 2^31 values: a box, no slider
    assert "snapshots" in control_for(fields["update_delay"], cfg.update_delay).doc


def test_moving_a_slider_reruns_and_redraws():
    panel = ConfigPanel(ClusterConfig.ci(), run, plot_overview, fields=["load", "update_delay", "schedulers"])
    first_figure, first_util = panel.figure, panel.result.metrics.utilisation
    assert panel.runs == 1 and isinstance(first_figure, Figure) and panel.image.startswith(b"\x89PNG")
    panel.controls["load"].slider.value = 1.5  # what a user's drag does
    assert panel.runs == 2 and panel.config.load == 1.5 and panel.controls["load"].box.value == "1.5"
    assert panel.figure is not first_figure
    assert panel.result.metrics.utilisation > first_util
    panel.set(update_delay=2.0, schedulers=3)  # several fields, one redraw
    assert panel.runs == 3 and panel.controls["schedulers"].slider.value == 3
    assert panel.result.config.update_delay == 2.0


def test_a_float_slider_reports_the_value_it_shows():
    panel = toy_panel()
    panel.controls["rate"].slider.value = 0.15000000000000002  # what float arithmetic on a 0.05 grid sends
    assert panel.config.rate == 0.15


def test_a_value_the_config_rejects_puts_the_control_back_and_the_message_stays():
    """01's first panel: 11 typed into spools was refused, but the slider stayed at 11 and the
    next change ran with spools = 3 while showing 11."""
    panel = toy_panel()
    before = panel.figure
    panel.type_value("spools", "13")
    assert panel.config.spools == 3 and panel.controls["spools"].box.value == "3"
    assert panel.figure is before and panel.runs == 1
    assert panel.error.startswith("spools = 13 was refused: Toy.spools=13 is out of range for stages=14")
    assert panel.error.endswith("Back at spools = 3.") and "color:#b00" in panel.status.value
    assert "spools = 13" in panel.status.value  # still shown ...
    panel.controls["rate"].slider.value = 0.75
    assert panel.error is None and panel.runs == 2  # ... until the next change that runs
    assert "3 0.75" in panel.figure.axes[0].get_title()  # drawn with spools = 3, and the box shows 3
    assert panel.controls["spools"].box.value == "3"


def test_a_slider_move_the_config_rejects_resets_the_slider():
    panel = toy_panel()
    panel.controls["stages"].slider.value = 4  # spools = 3 needs stages >= 5
    assert panel.controls["stages"].slider.value == 14 and panel.controls["stages"].box.value == "14"
    assert "stages = 4 was refused" in panel.error and panel.config.stages == 14


@pytest.mark.parametrize("field, text, message", [
    ("stages", "31", "stages = 31 was refused: allowed 2 <= stages <= 30 on this panel (larger values: set them in the parameters cell)"),
    ("stages", "1", "stages = 1 was refused: allowed 2 <= stages <= 30 on this panel"),
    ("rate", "0", "rate = 0 was refused: allowed 0.05 <= rate <= 1.5 on this panel"),
    ("seed", "-5", "seed = -5 was refused: Toy.seed=-5 is out of range: allowed 0 <= seed <= 2.14748e+09"),
    ("stages", "2.5", "stages = '2.5' is not a whole number: allowed 2 <= stages <= 30 on this panel"),
    ("rate", "abc", "rate = 'abc' is not a number: allowed 0.05 <= rate <= 1.5 on this panel"),
    ("rate", "nan", "rate = 'nan' is not a finite number"),
])
def test_typed_values_outside_the_range_are_refused_never_clamped(field, text, message):
    """mean_task_duration "0" became 0.01 and seed "-5" became 0, silently."""
    panel = toy_panel()
    good = getattr(panel.config, field)
    panel.type_value(field, text)
    assert panel.error.startswith(message), panel.error
    assert getattr(panel.config, field) == good and panel.runs == 1
    control = panel.controls[field]
    assert control.box.value == str(good)
    if control.slider is not None:
        assert control.slider.value == good


def test_typed_values_inside_the_range_run():
    panel = toy_panel()
    panel.type_value("rate", " 1.2 ")
    panel.type_value("seed", "123456789")
    panel.type_value("label", "hello")
    assert (panel.config.rate, panel.config.seed, panel.config.label, panel.runs) == (1.2, 123456789, "hello", 4)
    assert panel.controls["rate"].slider.value == 1.2
    panel.type_value("rate", "1.20")  # the same value: nothing to run
    assert panel.runs == 4 and panel.controls["rate"].box.value == "1.2"


def test_a_change_estimated_far_slower_than_a_second_is_refused_before_it_runs():
    panel = toy_panel(budget_seconds=2.5)
    panel.controls["stages"].slider.value = 30  # 3 s by the toy's estimate
    assert panel.runs == 1 and panel.controls["stages"].slider.value == 14
    assert panel.error.startswith("stages = 30 was refused: about 3,000 vertices (30 stages x 100); that takes "
                                  "about 3 s, more than a panel should wait (about 2 s): lower stages, or run it "
                                  "from the parameters cell")


def test_a_busy_state_shows_while_run_works():
    seen = []

    def slow_run(config):
        seen.append((panel.busy, panel.status.value, panel.output.layout.opacity,
                     panel.controls["rate"].slider.disabled))
        return config

    panel = None
    panel = ConfigPanel.__new__(ConfigPanel)  # so slow_run can look at it during the first run
    ConfigPanel.__init__(panel, Toy(), slow_run, toy_plot, fields=["rate", "mode"])
    panel.set(rate=0.9)
    busy, status, opacity, disabled = seen[-1]
    assert busy and "running with rate = 0.9" in status and opacity == "0.35" and disabled
    assert not panel.busy and panel.output.layout.opacity == "1" and not panel.controls["rate"].slider.disabled
    assert "re-ran in" in panel.status.value and "rate = 0.9" in panel.status.value


def test_a_change_that_draws_the_same_figure_says_so():
    panel = toy_panel()
    panel.type_value("seed", "1")  # the toy draws seed // 2: 0 and 1 look the same
    assert "exactly the same as before" in panel.status.value and panel.runs == 2
    panel.type_value("seed", "2")
    assert "exactly the same" not in panel.status.value


def test_errors_from_run_name_the_field_moved_and_the_panel_stays_usable():
    def picky_run(config):
        if config.machines > 12:
            raise ValueError(f"need {config.machines} slots, have 12")
        return run(config)

    panel = ConfigPanel(ClusterConfig.ci(), picky_run, plot_overview, fields=["machines"])
    before = panel.figure
    panel.controls["machines"].slider.value = 20
    assert panel.error == "machines = 20 could not run: need 20 slots, have 12. Back at machines = 10."
    assert panel.config.machines == 10 and panel.figure is before and panel.runs == 1
    assert panel.controls["machines"].slider.value == 10
    panel.controls["machines"].slider.value = 11
    assert panel.error is None and panel.runs == 2


def test_a_bug_in_run_is_shown_not_swallowed():
    def buggy_run(config):
        if config.mode == "b":
            raise KeyError("oops")
        return config

    panel = ConfigPanel(Toy(), buggy_run, toy_plot, fields=["mode"])
    panel.controls["mode"].dropdown.value = "b"
    assert panel.error.startswith("mode = b failed with KeyError: 'oops' (a bug: please report it)")
    assert panel.controls["mode"].dropdown.value == "a"


def test_unknown_fields_and_unsupported_types_are_refused():
    with pytest.raises(ValueError, match=r"fields \['nodes'\] are not fields of ClusterConfig"):
        ConfigPanel(ClusterConfig.ci(), run, plot_overview, fields=["nodes"])

    @dataclasses.dataclass(frozen=True)
    class Weights(Config):
        weights: tuple = param((1.0, 2.0), doc="objective weights")

    with pytest.raises(ValueError, match="declare it with widget=False"):
        control_for(dataclasses.fields(Weights)[0], (1.0, 2.0))


def test_a_start_beyond_the_slider_keeps_it_and_says_redraws_will_be_slow():
    """A value set in the parameters cell (e.g. the paper preset) must not break the panel cell."""
    panel = ConfigPanel(Toy(stages=40), toy_run, toy_plot)
    stages = panel.controls["stages"]
    assert (stages.slider.min, stages.slider.max, stages.slider.value) == (2, 40, 40)
    assert "Started beyond the range that redraws in about a second: stages = 40 (slider 2..30)" in panel.status.value
    panel.type_value("stages", "35")
    assert panel.config.stages == 35


def test_figures_draw_every_panel_of_the_overview():
    result = run(ClusterConfig.ci().replace(stages_per_job=2))
    fig = plot_overview(result)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "Utilisation" and titles[1].startswith("Queue") and titles[3] == "Jobs"
    assert len(fig.axes[2].collections) == 1 and len(fig.axes[2].collections[0].get_paths()) > 0  # Gantt bars
    # a 10-machine cluster: the Gantt names the machines that exist (it said "machines 0-19")
    assert titles[2].startswith("Tasks on machines 0–9 (")


# ---- issue 28: labels a student reads, one run for a burst of changes, start values on the slider's grid ----------

def test_controls_show_a_readable_label_with_units_and_keep_the_field_name_in_the_tooltip():
    from cluster_sim.morpheus import MorpheusConfig
    from cluster_sim.wing import WingDepsConfig

    for cfg, name, label in ((MorpheusConfig.ci(), "rho", "DRA fudge factor ρ"),
                             (MorpheusConfig.ci(), "hold_seconds", "DRA grant length T (s)"),
                             (WingDepsConfig.ci(), "tr", "Prediction threshold tr (% of jobs)"),
                             (WingDepsConfig.ci(), "omega_days", "Multi-hop window ω (days)")):
        field = next(f for f in dataclasses.fields(cfg) if f.name == name)
        control = control_for(field, getattr(cfg, name))
        shown = control.widget.children[0]
        assert shown.value == label
        assert shown.tooltip.startswith(f"{name}: ") and control.doc in shown.tooltip
    # without a label, the head of the description, capitalised (never the bare field name)
    assert toy_panel().controls["rate"].widget.children[0].value == "A rate"


def test_a_label_must_be_a_string():
    with pytest.raises(ValueError, match="label=''"):
        param(1, doc="x", label="")


def test_a_burst_of_slider_changes_runs_once_with_the_latest_value():
    deferred = []
    panel = toy_panel(defer=deferred.append)
    slider = panel.controls["rate"].slider
    for value in (0.75, 0.8, 0.85, 0.9):  # four arrow-key presses before the kernel gets to run
        slider.value = value
    panel.controls["mode"].dropdown.value = "b"
    assert panel.runs == 1 and len(deferred) == 1  # nothing ran yet; one run is waiting
    deferred.pop()()
    assert panel.runs == 2 and (panel.config.rate, panel.config.mode) == (0.9, "b")
    slider.value = 0.95  # the next change waits again
    assert len(deferred) == 1 and panel.runs == 2


def on_a_fresh_loop(coroutine_function):
    """Run a coroutine on its own event loop in its own thread: a test session may already hold a running loop in
    the main thread (the browser tests' driver), where ``asyncio.run`` refuses to start."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(coroutine_function())).result()


def test_on_an_event_loop_a_burst_runs_once_after_it_ends(monkeypatch):
    """What a kernel does: widget messages are handled on a running loop, so the run waits for the burst."""
    import asyncio

    from cluster_sim.ui import panel as panel_module
    from cluster_sim.ui.panel import DEBOUNCE_SECONDS

    monkeypatch.setattr(panel_module, "_in_kernel", lambda: True)

    panel = toy_panel()

    async def burst():
        for value in (0.75, 0.8, 0.85):
            panel.controls["rate"].slider.value = value
        during = panel.runs
        await asyncio.sleep(3 * DEBOUNCE_SECONDS)
        return during

    assert on_a_fresh_loop(burst) == 1
    assert panel.runs == 2 and panel.config.rate == 0.85


def test_a_running_loop_outside_a_kernel_runs_at_once():
    """A loop nobody feeds widget messages through (a browser driver's, in a test session) must not defer runs."""
    import asyncio

    panel = toy_panel()

    async def change():
        panel.controls["rate"].slider.value = 0.75
        return panel.runs

    assert on_a_fresh_loop(change) == 2 and panel.config.rate == 0.75


@pytest.mark.parametrize("start, pressed", [(0.68, 0.73), (0.02, 0.07)])
def test_a_start_value_off_the_slider_grid_does_not_jump(start, pressed):
    """recurring_share = 0.68 on a 0.05 grid from 0 moved to 0.7 on the first key press: the grid now runs through
    the start value (same step, inside the range), so a key press moves it by one step."""
    panel = ConfigPanel(Toy(rate=start), toy_run, toy_plot)
    slider = panel.controls["rate"].slider
    assert slider.value == start
    assert abs((slider.value - slider.min) / slider.step - round((slider.value - slider.min) / slider.step)) < 1e-9
    assert min(0.05, start) <= slider.min and slider.max <= 1.5 and 1.5 - slider.max < slider.step  # 0.02: beyond
    slider.value = slider.value + slider.step  # an arrow-key press
    assert panel.config.rate == pressed


def test_the_wing_start_value_the_student_met_is_on_its_grid():
    from cluster_sim.wing import WingDepsConfig

    cfg = WingDepsConfig.ci().replace(recurring_share=0.68)
    field = next(f for f in dataclasses.fields(cfg) if f.name == "recurring_share")
    slider = control_for(field, 0.68).slider
    assert slider.value == 0.68 and round((0.68 - slider.min) / slider.step, 9).is_integer()
