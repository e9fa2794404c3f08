"""ClusterConfig and the Config base: validation messages name field, value and allowed range."""

import dataclasses

import pytest

from cluster_sim.config import Config, param
from cluster_sim.engine import ClusterConfig


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("machines", 0, "ClusterConfig.machines=0 is out of range: allowed 1 <= machines <= 20000"),
        ("update_delay", -0.5, "ClusterConfig.update_delay=-0.5 is out of range: allowed 0 <= update_delay <= 60"),
        ("load", 3.5, "ClusterConfig.load=3.5 is out of range: allowed 0 < load <= 3"),
        ("placement", "tightest", "ClusterConfig.placement='tightest' is not allowed: choose one of 'first_fit'"),
        ("machines", 2.5, "ClusterConfig.machines=2.5 has the wrong type: expected int"),
        ("schedulers", True, "ClusterConfig.schedulers=True has the wrong type: expected int"),
        ("think_time", float("nan"), "ClusterConfig.think_time=nan is not a number"),
    ],
)
def test_bad_values_name_field_value_and_range(field, value, message):
    with pytest.raises(ValueError) as e:
        ClusterConfig(**{field: value})
    assert message in str(e.value)


def test_presets_are_valid_and_ordered_by_scale():
    ci, default, paper = ClusterConfig.ci(), ClusterConfig.default(), ClusterConfig.paper()
    assert ci.machines < default.machines < paper.machines
    assert ClusterConfig.from_preset("ci", machines=12).machines == 12


def test_from_preset_and_replace_reject_unknown_names():
    with pytest.raises(ValueError, match="preset='huge' is not allowed"):
        ClusterConfig.from_preset("huge")
    with pytest.raises(ValueError, match=r"unknown ClusterConfig field\(s\) \['machnies'\]"):
        ClusterConfig.ci().replace(machnies=3)
    with pytest.raises(ValueError, match=r"unknown ClusterConfig field\(s\) \['nodes'\]"):
        ClusterConfig.from_preset("ci", nodes=3)


def test_replace_revalidates_and_config_is_frozen():
    cfg = ClusterConfig.ci()
    with pytest.raises(ValueError, match="machines"):
        cfg.replace(machines=-1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.machines = 3


def test_every_field_has_a_description():
    for f in dataclasses.fields(ClusterConfig):
        assert f.metadata.get("doc"), f.name


def test_arrival_rate_offers_the_requested_load():
    cfg = ClusterConfig(machines=10, cpu_per_machine=8, load=0.5, tasks_per_job=4.0,
                        mean_task_cpu=2.0, mean_task_duration=5.0)
    # 0.5 * 80 CPU = 40 CPU busy on average = rate * 4 tasks * 2 CPU * 5 s
    assert cfg.arrival_rate() == pytest.approx(1.0)


def test_cross_field_validation_hook():
    @dataclasses.dataclass(frozen=True)
    class Window(Config):
        lo: float = param(0.0, lo=0, hi=10, doc="start")
        hi: float = param(5.0, lo=0, hi=10, doc="end")

        def validate(self):
            if self.lo >= self.hi:
                raise ValueError(f"Window.lo={self.lo} must be below Window.hi={self.hi}")

    with pytest.raises(ValueError, match="Window.lo=6.0 must be below Window.hi=5.0"):
        Window(lo=6)
    with pytest.raises(ValueError, match="has no paper-scale preset"):
        Window.paper()


def test_param_refuses_mutable_defaults():
    with pytest.raises(TypeError, match="immutable"):
        param([1, 2], doc="weights")


def test_numpy_scalars_become_python_values():
    import numpy as np

    cfg = ClusterConfig(seed=np.int64(3), load=np.float32(0.5), machines=np.int32(20), horizon=100)
    assert (type(cfg.seed), type(cfg.load), type(cfg.machines), type(cfg.horizon)) == (int, float, int, float)
    assert cfg == ClusterConfig(seed=3, load=0.5, machines=20, horizon=100.0)  # same config, same hash
    assert hash(cfg) == hash(ClusterConfig(seed=3, load=0.5, machines=20, horizon=100.0))


@pytest.mark.parametrize("value, message", [
    (__import__("numpy").float32("nan"), "ClusterConfig.load=nan is not a number"),
    (__import__("numpy").array(0.5), "is an array: give a single value"),
    (__import__("numpy").array([0.5]), "is an array: give a single value"),
    ("0.5", "has the wrong type: expected float"),
])
def test_nan_of_any_float_type_arrays_and_strings_are_refused(value, message):
    with pytest.raises(ValueError, match=message):
        ClusterConfig(load=value)


@pytest.mark.parametrize("field, value, message", [
    ("load", 10**400, "ClusterConfig.load=~1e400 is out of range: allowed 0 < load <= 3"),
    ("load", -10**400, "ClusterConfig.load=-~1e400 is out of range: allowed 0 < load <= 3"),
    ("machines", 10**5000, "ClusterConfig.machines=~1e5000 is out of range: allowed 1 <= machines <= 20000"),
    ("machines", 2**63, "ClusterConfig.machines=9223372036854775808 is out of range"),
], ids=["1e400", "-1e400", "1e5000", "2**63"])
def test_numbers_too_large_for_a_float_or_a_message_are_refused_naming_field_value_and_range(field, value, message):
    """An int of 400 digits once escaped as OverflowError from float(); one of 5000 made the message itself
    fail (Python refuses to print ints past 4300 digits)."""
    with pytest.raises(ValueError) as e:
        ClusterConfig(**{field: value})
    assert str(e.value).startswith(message)


def test_negative_zero_is_zero():
    cfg = ClusterConfig(update_delay=-0.0)
    assert cfg.update_delay == 0.0 and str(cfg.update_delay) == "0.0"


def test_a_config_too_big_to_run_is_refused_up_front_naming_the_estimate_and_its_drivers(forbid):
    from cluster_sim.engine import ClusterModel, workload

    ran = forbid(workload.generate_jobs, ClusterModel)  # what a run does: draw the jobs, build the model
    with pytest.raises(ValueError) as e:
        ClusterConfig(machines=500, mean_task_duration=0.01, horizon=600.0)  # once a MemoryError after minutes
    assert ran == []
    msg = str(e.value)
    assert "about 168,000,000 events (168,000,000 tasks" in msg and "more than max_events=5,000,000" in msg
    assert "lower machines" in msg and "raise mean_task_duration" in msg and "raise max_events on purpose" in msg
    assert ClusterConfig(machines=500, mean_task_duration=0.01, horizon=600.0, max_events=200_000_000).machines == 500


def test_view_refreshes_count_as_work_too():
    """A tiny update delay in range (1e-300 s) once made a 30 s run refresh views forever."""
    with pytest.raises(ValueError, match=r"view refreshes = horizon 30 s / update_delay 1e-300 s x 2 schedulers"):
        ClusterConfig.ci().replace(update_delay=1e-300, horizon=30.0)
    fine = ClusterConfig.ci().replace(update_delay=0.5, horizon=30.0).work()
    assert fine.amount == pytest.approx(fine.amount - 120 + 120) and "120 view refreshes" in fine.formula


def test_slider_ranges_lie_inside_the_validation_ranges_and_presets_lie_on_the_slider_grid():
    """A value off a slider's grid (min + k * step) jumps when the slider is first touched."""
    from cluster_sim.ui.panel import slider_range

    off_grid = []
    for cls in _all_configs():
        for f in dataclasses.fields(cls):
            meta = f.metadata
            step = meta.get("step") or 1
            rng = slider_range(f, f.default) if isinstance(f.default, (int, float)) else None
            if rng is None or isinstance(f.default, bool) or not meta.get("widget", True):
                continue
            lo = rng[0]
            for preset in ("ci", "default", "paper"):
                try:
                    cfg = getattr(cls, preset)()
                except ValueError:
                    continue
                value = getattr(cfg, f.name)
                if rng[0] <= value <= rng[1]:
                    k = (value - lo) / step
                    if abs(k - round(k)) > 1e-6:
                        off_grid.append(f"{cls.__name__}.{f.name}={value} ({preset}) off {lo} + k * {step}")
    assert not off_grid, "preset values off their slider's grid:\n" + "\n".join(off_grid)


def _all_configs():
    import importlib
    import pkgutil

    import cluster_sim

    found = set()
    for mod in pkgutil.walk_packages(cluster_sim.__path__, "cluster_sim."):
        module = importlib.import_module(mod.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Config) and obj is not Config and dataclasses.is_dataclass(obj):
                found.add(obj)
    assert len(found) >= 5, found
    return sorted(found, key=lambda c: c.__name__)


def test_the_notebooks_first_table_gives_every_fields_allowed_values():
    from cluster_sim.engine import ClusterConfig

    table = ClusterConfig.ci().table()
    assert list(table.columns) == ["value", "allowed", "meaning"]
    assert list(table.index) == [f.name for f in __import__("dataclasses").fields(ClusterConfig)]
    assert "'random'" in table.loc["placement", "allowed"].split(" | ")
    lo, hi = (ClusterConfig.__dataclass_fields__["machines"].metadata[k] for k in ("lo", "hi"))
    assert table.loc["machines", "allowed"] == f"{lo:g} … {hi:g}"
    hi = ClusterConfig.__dataclass_fields__["load"].metadata["hi"]
    assert table.loc["load", "allowed"] == f"0 (excluded) … {hi:g}"  # load > 0 (closed="right")
    assert list(ClusterConfig.ci().table(fields=("load", "machines")).index) == ["machines", "load"]
