"""Issue 31: one field vocabulary -- fields inherited by name, one seed field, open and closed bounds
and None in ``param``, ``from_config`` for configs that feed one another."""

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass

import pytest

import cluster_sim
from cluster_sim.config import Config, field_of, param, seed_param
from cluster_sim.engine import ClusterConfig


@dataclass(frozen=True)
class Bounds(Config):
    rate: float = param(1.0, lo=0.0, hi=2.0, closed="right", doc="a rate")
    share: float = param(0.5, lo=0.0, hi=1.0, closed="left", doc="a share")
    cap: int | None = param(None, lo=1, hi=10, optional=True, doc="a cap, or None for none")
    weight: float = param(0.5, lo=0.0, hi=1.0, closed="neither", optional=True, doc="a weight")


def test_open_bounds_refuse_their_end_and_say_so():
    assert Bounds(rate=2.0, share=0.0).rate == 2.0
    with pytest.raises(ValueError, match=r"Bounds.rate=0.0 is out of range: allowed 0 < rate <= 2 \(a rate\)"):
        Bounds(rate=0.0)
    with pytest.raises(ValueError, match=r"Bounds.share=1.0 is out of range: allowed 0 <= share < 1"):
        Bounds(share=1.0)
    with pytest.raises(ValueError, match=r"allowed 0 < weight < 1"):
        Bounds(weight=1.0)
    with pytest.raises(ValueError, match="closed='open' is not allowed"):
        param(1.0, lo=0.0, closed="open", doc="x")
    with pytest.raises(ValueError, match="slider"):
        param(1.0, lo=0.0, closed="right", slider=(0.0, 1.0), doc="a slider that offers the excluded end")


def test_none_only_where_a_field_says_optional():
    assert Bounds().cap is None and Bounds(cap=3).cap == 3 and Bounds(weight=None).weight is None
    with pytest.raises(ValueError, match=r"Bounds.cap=11 is out of range: allowed 1 <= cap <= 10"):
        Bounds(cap=11)
    with pytest.raises(ValueError, match=r"Bounds.cap='3' has the wrong type"):
        Bounds(cap="3")
    with pytest.raises(ValueError, match=r"Bounds.rate=None has the wrong type"):
        Bounds(rate=None)
    with pytest.raises(ValueError, match="optional=True"):
        param(None, doc="None without saying it may be None")
    assert Bounds().table().loc["cap", "allowed"] == "1 … 10 | None"
    assert Bounds().table().loc["rate", "allowed"] == "0 (excluded) … 2"


def test_an_inherited_field_keeps_what_it_does_not_restate():
    @dataclass(frozen=True)
    class Lab(Config):
        machines: int = field_of(ClusterConfig, "machines", 4, hi=8, slider=(1, 8))
        load: float = field_of(ClusterConfig, "load")

    engine = ClusterConfig.__dataclass_fields__
    mine = Lab.__dataclass_fields__
    assert mine["machines"].metadata["doc"] == engine["machines"].metadata["doc"]
    assert mine["machines"].metadata["hi"] == 8 and Lab().machines == 4
    assert mine["load"].metadata == engine["load"].metadata and Lab().load == ClusterConfig().load
    with pytest.raises(ValueError, match="has no field 'machine'"):
        field_of(ClusterConfig, "machine")
    with pytest.raises(ValueError, match="unknown param option"):
        field_of(ClusterConfig, "load", 1.0, high=2.0)


def test_from_config_takes_the_shared_fields_then_the_overrides():
    @dataclass(frozen=True)
    class Small(Config):
        machines: int = field_of(ClusterConfig, "machines")
        seed: int = seed_param()
        other: str = param("x", choices=("x", "y"), doc="a field the engine has not")

    cluster = ClusterConfig.ci().replace(machines=7, seed=3)
    small = Small.from_config(cluster, other="y")
    assert (small.machines, small.seed, small.other) == (7, 3, "y")
    back = ClusterConfig.from_config(small)
    assert back.machines == 7 and back.seed == 3 and back.horizon == ClusterConfig().horizon
    with pytest.raises(ValueError, match=r"unknown Small field\(s\) \['horizon'\]"):
        Small.from_config(cluster, horizon=3.0)


def _configs():
    found = set()
    for mod in pkgutil.walk_packages(cluster_sim.__path__, "cluster_sim."):
        for obj in vars(importlib.import_module(mod.name)).values():
            if isinstance(obj, type) and issubclass(obj, Config) and dataclasses.is_dataclass(obj) and obj is not Config:
                found.add(obj)
    return found


def test_every_seed_is_the_one_seed_field():
    seeds = {cls.__name__: cls.__dataclass_fields__["seed"].metadata for cls in _configs()
             if "seed" in cls.__dataclass_fields__}
    one = dict(seed_param().metadata)
    differ = {name: meta["doc"] for name, meta in seeds.items()
              if (meta["doc"], meta["lo"], meta["hi"]) != (one["doc"], one["lo"], one["hi"])}
    assert not differ, f"seed fields declared apart from seed_param(): {differ}"


def test_config_has_one_home():
    """Issue 31, item 6: ``Config`` (and ``param``, ``Work``) came from ``cluster_sim.config`` and again from
    ``cluster_sim.engine`` and ``cluster_sim.engine.config`` (an alias module): one class, three import
    paths. It is imported from ``cluster_sim.config`` only; the engine exports its own configs."""
    import importlib.util

    import cluster_sim.engine as engine

    assert importlib.util.find_spec("cluster_sim.engine.config") is None
    for name in ("Config", "Work", "param", "field_of", "seed_param"):
        assert name not in engine.__all__ and not hasattr(engine, name), name
    assert {"ClusterConfig", "BaseClusterConfig"} <= set(engine.__all__)
