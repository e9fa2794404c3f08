"""SLOConfig's history fields are HistoryParams' (issue 31, item 4): declared once, inherited with only what
changes restated, handed to the generator whole, and refused under the name of the class that owns them."""

from __future__ import annotations

import dataclasses
import math

import pytest

from cluster_sim.config import bounds_text
from cluster_sim.morpheus import HistoryParams, SLOConfig

SHARED = sorted({f.name for f in dataclasses.fields(SLOConfig)} & {f.name for f in dataclasses.fields(HistoryParams)})


def _range(field):
    m = field.metadata
    return m["lo"], m["hi"], m.get("closed", "both")


def test_the_generator_fields_slo_config_shares_are_the_ones_it_had():
    assert SHARED == sorted(["days", "n_periodic", "n_off_kilter", "n_aperiodic", "n_adhoc", "max_steps", "run_noise",
                             "usage_noise", "straggler_rate", "input_delay_rate", "failure_rate", "drift_factor"])


@pytest.mark.parametrize("name", SHARED)
def test_a_shared_field_reaches_the_generator(name):
    """``history_params()`` hands over every field SLOConfig shares with HistoryParams (a copy that lists
    them by hand can drop one: drift_factor was)."""
    cfg = SLOConfig.ci()
    f = SLOConfig.__dataclass_fields__[name]
    lo, hi, _ = _range(f)
    value = getattr(cfg, name)
    other = type(value)((lo + hi) / 2) if isinstance(value, float) else int(lo + 1 if value == lo else lo)
    assert other != value
    assert getattr(cfg.replace(**{name: other}).history_params(), name) == other


@pytest.mark.parametrize("name", SHARED)
def test_a_shared_field_is_declared_once(name):
    """SLOConfig's field is HistoryParams' field: the same doc unless restated, and a range inside the
    generator's, so a value SLOConfig accepts is never refused by the generator under another class's name."""
    mine, theirs = SLOConfig.__dataclass_fields__[name], HistoryParams.__dataclass_fields__[name]
    lo, hi, _ = _range(mine)
    tlo, thi, _ = _range(theirs)
    assert tlo <= lo and hi <= thi, (f"SLOConfig.{name} allows {bounds_text(name, lo, hi)}, HistoryParams only "
                                     f"{bounds_text(name, tlo, thi)}")
    assert mine.metadata["doc"] == theirs.metadata["doc"], (
        f"SLOConfig.{name} and HistoryParams.{name} describe one field two ways: "
        f"{mine.metadata['doc']!r} / {theirs.metadata['doc']!r}")


def test_a_generator_refusal_names_the_generator_not_a_field_slo_config_lacks():
    with pytest.raises(ValueError) as e:
        SLOConfig.ci().history_params(periods=(0.0,), period_weights=(1.0,))
    assert str(e.value).startswith("HistoryParams.periods=(0.0,) is not allowed"), str(e.value)
    assert not hasattr(SLOConfig.ci(), "periods")


def test_a_refused_shared_value_names_slo_config():
    with pytest.raises(ValueError, match=r"^SLOConfig.days=0.5 is out of range: allowed 1 <= days <= 120"):
        SLOConfig.ci().replace(days=0.5)
    with pytest.raises(ValueError, match=r"^SLOConfig.straggler_rate=nan is not a number"):
        SLOConfig.ci().replace(straggler_rate=math.nan)
