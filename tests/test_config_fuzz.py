"""A fuzz of every experiment config the package defines (found by walking ``cluster_sim``).

In range → the config is built, or refused with a ``ValueError`` naming one of its fields (a
cross-field rule, a work cap); a lab config that builds an engine config never makes one the
engine refuses. Out of range, NaN of any float type, arrays and wrong types → a ``ValueError``
naming the field. Numpy scalars behave exactly like Python ones.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cluster_sim
from cluster_sim.config import Config


def all_configs() -> list[type]:
    found = set()
    for mod in pkgutil.walk_packages(cluster_sim.__path__, "cluster_sim."):
        module = importlib.import_module(mod.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Config) and obj is not Config and dataclasses.is_dataclass(obj):
                found.add(obj)
    return sorted(found, key=lambda c: c.__name__)


CONFIGS = all_configs()


def numeric_fields(cls):
    return [f for f in dataclasses.fields(cls) if isinstance(f.default, (int, float)) and not isinstance(f.default, bool)
            and f.metadata.get("choices") is None]


def value_in_range(f):
    meta, default = f.metadata, f.default
    if meta.get("choices") is not None:
        return st.sampled_from(meta["choices"])
    if isinstance(default, bool):
        return st.booleans()
    lo, hi = meta.get("lo"), meta.get("hi")
    if isinstance(default, int):
        return st.integers(int(lo) if lo is not None else default - 10, int(hi) if hi is not None else default + 10)
    if isinstance(default, float):
        return st.floats(lo if lo is not None else default - 10.0, hi if hi is not None else default + 10.0,
                         allow_nan=False, allow_infinity=False)
    return st.just(default)


def names_a_field(cls, message: str) -> bool:
    return any(f.name in message for f in dataclasses.fields(cls))


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_in_range_values_build_or_are_refused_naming_a_field(cls, data):
    fields = [f for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING]
    chosen = data.draw(st.lists(st.sampled_from(fields), min_size=1, max_size=4, unique_by=lambda f: f.name))
    values = {f.name: data.draw(value_in_range(f), label=f.name) for f in chosen}
    try:
        cfg = cls(**values)
    except ValueError as e:
        assert names_a_field(cls, str(e)), f"{cls.__name__}({values}) refused without naming a field: {e}"
        return
    if hasattr(cfg, "cluster_config"):  # a lab config that builds the engine's: never an error about it
        cfg.cluster_config()


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_out_of_range_nan_arrays_and_wrong_types_are_refused_naming_the_field(cls):
    for f in numeric_fields(cls):
        lo, hi = f.metadata.get("lo"), f.metadata.get("hi")
        name = f"{cls.__name__}.{f.name}"
        bad = []
        if hi is not None:
            bad.append(hi + (1 if isinstance(f.default, int) else abs(hi) * 0.01 + 1e-6))
        if lo is not None:
            bad.append(lo - (1 if isinstance(f.default, int) else abs(lo) * 0.01 + 1e-6))
        bad += [np.array(f.default), np.array([f.default]), "1", None]
        if isinstance(f.default, int):
            bad += [True, 2.5]
        else:
            bad += [np.float16("nan"), np.float32("nan"), float("nan")]
        for value in bad:
            with pytest.raises(ValueError, match=rf"{name}="):
                cls(**{f.name: value})


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_numbers_too_large_for_a_float_are_refused_naming_the_field_and_its_range(cls):
    """10**400 is no float (float() overflows) and 10**5000 not even printable (past Python's 4300 digits):
    every numeric field of every config refuses both with a ValueError naming the field, the value's size
    and the range -- not an OverflowError from deep inside the validation."""
    for f in numeric_fields(cls):
        for value, shown in ((10**400, "~1e400"), (-10**400, "-~1e400"), (10**5000, "~1e5000")):
            with pytest.raises(ValueError, match=rf"{cls.__name__}.{f.name}={shown} is out of range: allowed"):
                cls(**{f.name: value})


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_numpy_scalars_behave_like_python_ones(cls):
    base = cls()
    changes = {}
    for f in numeric_fields(cls):
        v = getattr(base, f.name)
        changes[f.name] = np.int64(v) if isinstance(v, int) else np.float32(v) if float(np.float32(v)) == v else np.float64(v)
    cfg = cls(**changes)
    assert cfg == base and hash(cfg) == hash(base)
    assert all(type(getattr(cfg, k)) is type(getattr(base, k)) for k in changes)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machines=st.integers(1, 30), load=st.floats(0.05, 1.5), duration=st.floats(1.0, 60.0),
       schedulers=st.integers(1, 6), delay=st.floats(0.0, 5.0), dist=st.sampled_from(["exponential", "lognormal"]),
       refresh=st.sampled_from(["synchronous", "staggered"]), seed=st.integers(0, 2**31 - 1))
def test_small_in_range_engine_configs_run(machines, load, duration, schedulers, delay, dist, refresh, seed):
    from cluster_sim.engine import ClusterConfig, run

    try:
        cfg = ClusterConfig(machines=machines, load=load, mean_task_duration=duration, schedulers=schedulers,
                            update_delay=delay, duration_dist=dist, size_dist=dist, view_refresh=refresh, seed=seed,
                            horizon=30.0)
    except ValueError as e:  # e.g. an update delay of 1e-167 s: more view refreshes than any run can do
        assert "would create about" in str(e) and "update_delay" in str(e), e
        return
    result = run(cfg)
    assert result.metrics.time == 30.0 and not math.isnan(result.metrics.utilisation)


def test_every_config_is_found():
    names = {c.__name__ for c in CONFIGS}
    assert {"ClusterConfig", "RMinerConfig", "ShaperConfig", "PlacementConfig", "ResourcePlanConfig"} <= names
