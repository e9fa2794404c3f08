"""The panel's callback path, exercised in-process (headless kernels never build widgets)."""

import dataclasses

import ipywidgets as widgets
import pytest
from matplotlib.figure import Figure

from cluster_sim.engine import ClusterConfig, Config, param, run
from cluster_sim.ui import ConfigPanel, control_for, plot_overview


def test_controls_follow_the_field_metadata():
    cfg = ClusterConfig.ci()
    fields = {f.name: f for f in dataclasses.fields(cfg)}
    machines = control_for(fields["machines"], cfg.machines)
    assert isinstance(machines, widgets.IntSlider) and (machines.min, machines.max) == (1, 20_000)
    assert isinstance(control_for(fields["placement"], cfg.placement), widgets.Dropdown)
    assert isinstance(control_for(fields["update_delay"], cfg.update_delay), widgets.FloatSlider)
    assert isinstance(control_for(fields["seed"], cfg.seed), widgets.BoundedIntText)  # 2^31 values: no slider
    assert isinstance(control_for(fields["horizon"], cfg.horizon), widgets.BoundedFloatText)
    assert "snapshots" in control_for(fields["update_delay"], cfg.update_delay).tooltip


def test_moving_a_slider_reruns_and_redraws():
    panel = ConfigPanel(ClusterConfig.ci(), run, plot_overview, fields=["load", "update_delay", "schedulers"])
    first_figure, first_util = panel.figure, panel.result.metrics.utilisation
    assert panel.runs == 1 and isinstance(first_figure, Figure)
    panel.controls["load"].value = 1.5  # what a user's drag does
    assert panel.runs == 2 and panel.config.load == 1.5
    assert panel.figure is not first_figure
    assert panel.result.metrics.utilisation > first_util
    panel.set(update_delay=2.0, schedulers=3)  # several fields, one redraw
    assert panel.runs == 3 and panel.controls["schedulers"].value == 3
    assert panel.result.config.update_delay == 2.0


def test_a_rejected_value_is_shown_and_the_last_figure_stays():
    panel = ConfigPanel(ClusterConfig.ci(), run, plot_overview, fields=["machines"])
    before = panel.figure
    panel.set(machines=0)
    assert "ClusterConfig.machines=0 is out of range" in panel.error
    assert "out of range" in panel.status.value
    assert panel.figure is before and panel.runs == 1 and panel.config.machines == 10
    assert panel.controls["machines"].value == 10


def test_unknown_fields_and_unsupported_types_are_refused():
    with pytest.raises(ValueError, match=r"fields \['nodes'\] are not fields of ClusterConfig"):
        ConfigPanel(ClusterConfig.ci(), run, plot_overview, fields=["nodes"])

    @dataclasses.dataclass(frozen=True)
    class Weights(Config):
        weights: tuple = param((1.0, 2.0), doc="objective weights")

    with pytest.raises(ValueError, match="declare it with widget=False"):
        control_for(dataclasses.fields(Weights)[0], (1.0, 2.0))


def test_figures_draw_every_panel_of_the_overview():
    result = run(ClusterConfig.ci().replace(stages_per_job=2))
    fig = plot_overview(result)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "Utilisation" and titles[1].startswith("Queue") and titles[3] == "Jobs"
    assert len(fig.axes[2].patches) > 0  # Gantt bars


def test_an_error_raised_by_run_is_shown_and_the_last_state_stays():
    def picky_run(config):
        if config.machines > 12:
            raise ValueError(f"need {config.machines} slots, have 12")
        return run(config)

    panel = ConfigPanel(ClusterConfig.ci(), picky_run, plot_overview, fields=["machines"])
    before = panel.figure
    panel.controls["machines"].value = 20
    assert panel.error == "need 20 slots, have 12" and "need 20 slots" in panel.status.value
    assert panel.config.machines == 10 and panel.figure is before and panel.runs == 1
    panel.controls["machines"].value = 11
    assert panel.error is None and panel.runs == 2
