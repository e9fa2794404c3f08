"""Issue 33, Lab 03 at ``paper``: the contracts' R* fits are solved once per notebook, and what is read back is what
``fit_skyline`` solves, bit for bit (cluster_sim/morpheus/slo/stored.py). Solves are counted, never timed."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from cluster_sim.morpheus import MorpheusConfig, simulate
from cluster_sim.morpheus.packing import simulation
from cluster_sim.morpheus.packing.result import sweep_row
from cluster_sim.morpheus.slo import skyline, stored
from cluster_sim.morpheus.slo.runs import align_skylines
from cluster_sim.sweep import SweepCacheWarning

SMALL = MorpheusConfig.ci().replace(jobs=4, machines=6, cycle_minutes=120)


def _same_fit(a, b):
    """Every field of two SkylineFits equal, the skyline and the floats to the bit."""
    assert a.skyline.dtype == b.skyline.dtype and a.skyline.tobytes() == b.skyline.tobytes()
    for f in dataclasses.fields(a):
        if f.name != "skyline":
            x, y = getattr(a, f.name), getattr(b, f.name)
            assert type(x) is type(y) and (x.hex() == y.hex() if isinstance(x, float) else x == y), f.name


def _histories(config):
    """Every template's aligned skylines of a Lab 03 workload's history, as its contracts fit them."""
    log = simulation.workload(config).log
    return [align_skylines(list(s)) for s in log.skylines().values() if len(s) >= 2]


@pytest.fixture
def solves(monkeypatch):
    """Count the fits stored_fit solves (not those it reads)."""
    calls = []
    real = stored.fit_skyline
    monkeypatch.setattr(stored, "fit_skyline", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@pytest.mark.parametrize("config", [MorpheusConfig.ci(), MorpheusConfig.default().replace(seed=4)])
def test_a_stored_fit_is_the_solved_one_bit_for_bit(tmp_path, config, solves):
    runs = _histories(config)
    assert len(runs) >= 5
    solves.clear()  # the workload's own fits
    for alpha in (config.alpha, 0.5, 1.0, 0.0):
        for r in runs:
            direct = skyline.fit_skyline(r, alpha)
            first = stored.stored_fit(r, alpha, directory=tmp_path)  # solved and stored
            again = stored.stored_fit(r, alpha, directory=tmp_path)  # read back
            _same_fit(first, direct)
            _same_fit(again, direct)
    assert len(solves) == 4 * len(runs), "a stored fit was solved again"


def test_the_key_holds_what_decides_the_fit(tmp_path, solves):
    r = _histories(SMALL)[0]
    solves.clear()
    stored.stored_fit(r, 0.01, directory=tmp_path)
    stored.stored_fit(r, 0.02, directory=tmp_path)  # another alpha
    stored.stored_fit(r, 0.01, beta_fraction=0.2, directory=tmp_path)
    stored.stored_fit(r, 0.01, formulation="recursion", directory=tmp_path)
    changed = r.copy()
    changed[0, 0] += 1.0
    _same_fit(stored.stored_fit(changed, 0.01, directory=tmp_path), skyline.fit_skyline(changed, 0.01))
    assert len(solves) == 5
    stored.stored_fit(r, 0.01, directory=tmp_path)
    assert len(solves) == 5
    stored.stored_fit(r, 0.01, directory=False)  # no store
    assert len(solves) == 6


def test_a_damaged_or_misplaced_entry_is_solved_again_with_a_warning(tmp_path, solves):
    r, other = _histories(SMALL)[:2]
    solves.clear()
    direct = skyline.fit_skyline(r, 0.01)
    stored.stored_fit(r, 0.01, directory=tmp_path)
    stored.stored_fit(other, 0.01, directory=tmp_path)
    folder = tmp_path / stored.FOLDER
    mine, theirs = (next(folder.rglob(f"{stored.fit_key(np.asarray(x, float), 0.01, 0.1, 'compact')}.json"))
                    for x in (r, other))
    # a changed number: the checksum no longer matches
    doc = json.loads(mine.read_text())
    doc["payload"]["metrics"][-1][1]["float"] = (2.5).hex()
    mine.write_text(json.dumps(doc))
    with pytest.warns(SweepCacheWarning, match="checksum"):
        _same_fit(stored.stored_fit(r, 0.01, directory=tmp_path), direct)
    # another fit's entry copied under this one's name: it names another key
    mine.write_bytes(theirs.read_bytes())
    with pytest.warns(SweepCacheWarning, match="another point"):
        _same_fit(stored.stored_fit(r, 0.01, directory=tmp_path), direct)
    assert len(solves) == 2 + 2
    _same_fit(stored.stored_fit(r, 0.01, directory=tmp_path), direct)  # stored again, whole
    assert len(solves) == 4


def test_every_late_start_and_every_process_shares_a_historys_fits(solves):
    """The notebook's config and the trace's (late_start=0) share a seed's history: its LPs are solved once in a
    process, and a process started afresh (the memos cleared, as on a new Dask worker) reads them all back."""
    config = SMALL.replace(seed=31)
    n = len(simulation.workload(config).contracts)
    assert len(solves) == n > 0
    simulation.workload(config.replace(late_start=0.0))
    simulation.workload(config.replace(late_start=7.0))
    assert len(solves) == n
    simulation._workload.cache_clear()
    simulation._history.cache_clear()
    simulation.workload(config.replace(late_start=0.0))
    assert len(solves) == n, "a new process solved fits the store holds"


@pytest.mark.parametrize("arm", ["morpheus_dra", "model_only"])
def test_cycles_on_stored_fits_are_the_cycles_on_solved_ones(tmp_path, monkeypatch, arm):
    """Whole cycles, both late_start values, with the store cold, warm, and switched off (fit_skyline itself)."""
    for late in (SMALL.late_start, 0.0):
        config = SMALL.replace(arm=arm, seed=32, late_start=late)
        monkeypatch.setenv("CLUSTER_SIM_SWEEP_CACHE", str(tmp_path / f"{arm}-{late}"))  # a cold store
        rows = []
        for fit in ("store", "store", skyline.fit_skyline):
            simulation._workload.cache_clear()
            simulation._history.cache_clear()
            if fit != "store":
                monkeypatch.setattr(simulation, "stored_fit", fit)
            r = simulate(config)
            rows.append((sweep_row(r), r.runs.to_json(double_precision=15),
                         {k: c.skyline.tobytes() for k, c in r.workload.contracts.items()}))
        assert rows[0] == rows[1] == rows[2]
        monkeypatch.undo()
