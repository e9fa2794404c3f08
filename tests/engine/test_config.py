"""ClusterConfig and the Config base: validation messages name field, value and allowed range."""

import dataclasses

import pytest

from cluster_sim.engine import ClusterConfig, Config, param


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("machines", 0, "ClusterConfig.machines=0 is out of range: allowed 1 <= machines <= 20000"),
        ("update_delay", -0.5, "ClusterConfig.update_delay=-0.5 is out of range: allowed 0 <= update_delay <= 60"),
        ("load", 3.5, "ClusterConfig.load=3.5 is out of range: allowed 0.01 <= load <= 3"),
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

    with pytest.raises(ValueError, match="Window.lo=6 must be below Window.hi=5.0"):
        Window(lo=6)
    with pytest.raises(ValueError, match="has no paper-scale preset"):
        Window.paper()


def test_param_refuses_mutable_defaults():
    with pytest.raises(TypeError, match="immutable"):
        param([1, 2], doc="weights")
