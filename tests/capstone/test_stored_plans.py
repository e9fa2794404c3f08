"""Issue 33, Lab 10 at ``paper``: a day's resource plans are made once per notebook and read back by every other
process, bit for bit (cluster_sim/capstone/stored_plans.py); the plans every run of a day shares cannot be changed by
a reader (issue 24: remembered results are read-only); the day's R* fits come from Lab 03's store, bit for bit.
Plans made are counted, never timed."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import pickle
import warnings

import numpy as np
import pytest

from cluster_sim.capstone import CapstoneConfig, make_day, run
from cluster_sim.capstone import day as capstone_day
from cluster_sim.capstone import plans as capstone_plans
from cluster_sim.capstone import stored_plans
from cluster_sim.capstone.day import ALPHA, day_config
from cluster_sim.memo import ReadOnlyDict, check_read_only
from cluster_sim.morpheus import fit_skyline
from cluster_sim.sweep import SweepCacheWarning
from cluster_sim.sweep.cache import _canonical

#: a short ci day with the stage optimiser on (about a hundred stages): a seed no other test file plans
SMALL = CapstoneConfig.ci().replace(horizon=120.0, stageopt=True, seed=5150)
VERTEX_ARRAYS = ("assignment", "theta", "predicted_latency")


def _same_plans(a, b, *, solve_times: bool = True):
    """The same stages in the same order, every array's dtype, shape and bytes, the methods, the tokens."""
    assert list(a.stages) == list(b.stages) and a.tokens == b.tokens and list(a.tokens) == list(b.tokens)
    for k in a.stages:
        x, y = a.stages[k], b.stages[k]
        for plan in ("ipa", "raa"):
            p, q = getattr(x, plan), getattr(y, plan)
            assert p.method == q.method
            assert not solve_times or p.solve_seconds.hex() == q.solve_seconds.hex()
            for f in VERTEX_ARRAYS:
                u, v = getattr(p, f), getattr(q, f)
                assert (u.dtype, u.shape, u.tobytes()) == (v.dtype, v.shape, v.tobytes()), (k, plan, f)
        assert (x.durations.dtype, x.durations.tobytes()) == (y.durations.dtype, y.durations.tobytes())


@pytest.fixture
def planned(monkeypatch):
    """Count the days planned (not read back); the remembered plans forgotten before and after."""
    calls, real = [], capstone_plans._plan_day
    monkeypatch.setattr(capstone_plans, "_plan_day", lambda config: calls.append(config) or real(config))
    capstone_plans._resource_plans.cache_clear()
    yield calls
    capstone_plans._resource_plans.cache_clear()


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A store of this test's own (every process of a notebook finds it through $CLUSTER_SIM_SWEEP_CACHE)."""
    monkeypatch.setenv("CLUSTER_SIM_SWEEP_CACHE", str(tmp_path))
    return tmp_path / stored_plans.FOLDER


def test_plans_read_back_are_the_plans_made_bit_for_bit_and_a_day_is_planned_once(store, planned):
    made = capstone_plans.resource_plans(SMALL)
    assert len(planned) == 1 and len(made.stages) > 20
    assert len(list(store.rglob("*.npz"))) == 1 and len(list(store.rglob("*.json"))) == 1
    capstone_plans._resource_plans.cache_clear()  # another process: nothing remembered, the store filled
    read = capstone_plans.resource_plans(SMALL)
    assert len(planned) == 1 and read is not made
    _same_plans(made, read)
    # every arm with the plans reads the same day's plans: the key is the day's config, not the arm's
    capstone_plans._resource_plans.cache_clear()
    capstone_plans.resource_plans(SMALL.replace(shaper=True, morpheus=True))
    assert len(planned) == 1
    # and the day planned again, apart from the store, is the same (the store changes where plans come from only)
    _same_plans(capstone_plans._plan_day(day_config(SMALL)), read, solve_times=False)


def test_a_run_on_plans_read_back_is_the_run_on_plans_made(store, planned):
    config = SMALL.replace(rminer=True, shaper=True)
    first = run(config)
    capstone_plans._resource_plans.cache_clear()
    again = run(config)
    assert len(planned) == 1 and first.metrics == again.metrics


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "another entry's arrays", "pickled arrays",
                                    "arrays that do not fit together", "entry names no file"])
def test_a_damaged_store_is_said_and_the_day_planned_again(store, planned, damage):
    made = capstone_plans.resource_plans(SMALL)
    (npz,) = store.rglob("*.npz")
    data = npz.read_bytes()
    if damage == "flip a byte":
        npz.write_bytes(data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0x40]) + data[len(data) // 2 + 1:])
    elif damage == "truncate":
        npz.write_bytes(data[: len(data) // 3])
    elif damage == "entry names no file":
        npz.unlink()
    else:
        with np.load(io.BytesIO(data)) as a:
            arrays = dict(a)
        if damage == "another entry's arrays":
            arrays["tokens"] = arrays["tokens"][:-1]
        elif damage == "pickled arrays":
            arrays["keys"] = np.array([object()] * len(arrays["keys"]), dtype=object)
        else:
            arrays["offsets"] = arrays["offsets"][::-1].copy()
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        # the entry rewritten to name the new file, checksums and all (a planted file): its SHA-256 matches, and the
        # arrays are refused all the same
        sha = hashlib.sha256(buffer.getvalue()).hexdigest()
        npz.unlink()
        npz.with_name(f"{npz.name.split('-')[0]}-{sha[:16]}.npz").write_bytes(buffer.getvalue())
        (entry,) = store.rglob("*.json")
        doc = json.loads(entry.read_text())
        payload = doc["payload"]
        payload["metrics"] = [[n, sha if n == "sha256" else v] for n, v in payload["metrics"]]
        doc["sha256"] = hashlib.sha256(_canonical(payload)).hexdigest()
        entry.write_bytes(_canonical(doc))
    capstone_plans._resource_plans.cache_clear()
    with pytest.warns(SweepCacheWarning, match="stored"):
        again = capstone_plans.resource_plans(SMALL)
    assert len(planned) == 2
    _same_plans(made, again, solve_times=False)


def test_the_plans_every_run_shares_cannot_be_changed_by_a_reader(store, planned):
    plans = capstone_plans.resource_plans(SMALL)
    check_read_only(plans)
    key = next(iter(plans.stages))
    before = plans.stages[key].durations.copy()
    with pytest.raises(TypeError, match="read-only"):
        plans.stages[key] = None
    with pytest.raises(TypeError, match="read-only"):
        plans.tokens.update({0: 10**6})
    with pytest.raises(ValueError, match="read-only"):
        plans.stages[key].durations[0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        plans.stages[key].raa.theta[:] = 4.0
    with pytest.raises(AttributeError):
        plans.stages[key].raa.method = "mine"
    again = capstone_plans.resource_plans(SMALL)
    assert again is plans and again.stages[key].durations.tobytes() == before.tobytes() and len(planned) == 1
    # shared, yet it pickles (a result sent between processes) and copies as itself
    for other in (pickle.loads(pickle.dumps(plans)), copy.deepcopy(plans)):
        assert isinstance(other.stages, ReadOnlyDict)
        _same_plans(plans, other)


@pytest.mark.parametrize("value, part", [
    (np.zeros(3), "writeable array"), ({"a": 1}, "dict"), ([1], "list"),
    (ReadOnlyDict(a=[1]), r"\['a'\] is a list"), ((1, np.zeros(2)), r"\[1\] is a writeable array"),
])
def test_check_read_only_names_what_a_reader_could_change(value, part):
    with pytest.raises(TypeError, match=part):
        check_read_only(value)


def test_the_days_rstar_fits_come_from_the_store_bit_for_bit(store, monkeypatch):
    from cluster_sim.morpheus.slo import stored

    config = CapstoneConfig.ci().replace(seed=5151)
    solved, real = [], stored.fit_skyline
    monkeypatch.setattr(stored, "fit_skyline", lambda *a, **k: solved.append(1) or real(*a, **k))
    capstone_day._make_day.cache_clear()
    day = make_day(config)
    n = len(solved)
    assert n == len(day.rstar) >= 4
    capstone_day._make_day.cache_clear()
    again = make_day(config)  # another process of the notebook: every fit read back
    assert len(solved) == n
    for name, runs in again.skylines.items():
        expected = fit_skyline(runs, alpha=ALPHA).skyline
        assert again.rstar[name].tobytes() == day.rstar[name].tobytes() == expected.tobytes()
    capstone_day._make_day.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing damaged: nothing said
        make_day(config)
