"""Remembered results cannot be changed by their readers: each cache of Labs 02-03 hands out a copy, so a
student who edits what a call returned (a column overwritten, rows dropped, a dict cleared) changes
nothing a later call returns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cluster_sim.morpheus import MorpheusConfig, SLOConfig, compare, run, simulate
from cluster_sim.morpheus.packing import simulation
from cluster_sim.morpheus.slo.experiments import run as run_slo
from cluster_sim.morpheus.slo.experiments import run_history
from cluster_sim.morpheus.packing.stages import place_stage_gangs, stage_interval
from cluster_sim.morpheus.packing.lowcost_cases import _expected, _replay, exercise_cases, replay

PACKING = MorpheusConfig.ci().replace(arm="packing_only")  # misses deadlines at seeds 1 and 2


def test_a_run_changed_by_its_reader_does_not_change_the_next_run_or_compare():
    before = compare(PACKING, arms=("packing_only",), seeds=(1, 2), cache=False)
    assert before.loc["packing_only", "violations"] > 0
    for seed in (1, 2):
        r = run(PACKING.replace(seed=seed))
        r.runs["violated"] = False
        r.refused.clear()
        r.series["provisioned"][1][:] = 0
        r.workload.contracts.clear()
    again = run(PACKING.replace(seed=2))
    assert again.violations > 0 and again.refused and again.workload.contracts
    assert again.series["provisioned"][1].any()
    pd.testing.assert_frame_equal(compare(PACKING, arms=("packing_only",), seeds=(1, 2), cache=False), before)


def test_run_simulates_a_config_once(monkeypatch):
    """Copies on the way out, but the cycle is still simulated once per config."""
    calls = []
    real = simulation.simulate
    monkeypatch.setattr(simulation, "simulate", lambda c: calls.append(c) or real(c))
    c = MorpheusConfig.ci().replace(jobs=4, machines=6, cycle_minutes=120, seed=97)
    a, b = run(c), run(c)
    assert len(calls) == 1 and a is not b and a.runs.equals(b.runs)


def test_the_remembered_workload_cannot_be_changed_through_a_result():
    c = MorpheusConfig.ci().replace(arm="morpheus", jobs=4, machines=6, cycle_minutes=120, seed=98)
    w = simulation.workload(c)
    name = w.templates[0].name
    n_contracts, n_past = len(w.contracts), len(w.history[name])
    w.contracts.clear()
    w.history[name].clear()
    simulate(c).workload.contracts.clear()
    fresh = simulation.workload(c)
    assert len(fresh.contracts) == n_contracts > 0 and len(fresh.history[name]) == n_past > 0


def test_a_history_changed_by_its_reader_does_not_change_the_next_slo_run():
    cfg = SLOConfig.ci()
    before = run_slo(cfg).slo
    h = run_history(cfg)
    hourly = h.runs.template.str.startswith("hourly")
    assert hourly.any()
    h.runs.loc[hourly, "t_out_read"] = np.nan  # never read: no SLO to infer
    h.runs["failed"] = True
    h.submissions["submit_time"] = 0.0
    h.skylines.clear()
    run_slo(cfg).history.skylines.clear()
    after = run_slo(cfg).slo
    assert len(after) == len(before) == 12
    pd.testing.assert_frame_equal(after, before)


def test_the_packing_exercise_reference_cannot_be_changed_by_its_reader():
    case = exercise_cases(seed=0)[0]
    want, windows = _expected(case)
    fresh_want, fresh_windows = _replay(case, stage_interval, place_stage_gangs)
    want.clear()
    windows[0][0][:] = 99.0  # a student's place() writing into the load it was given
    replay(case).clear()
    again_want, again_windows = _expected(case)
    assert again_want == fresh_want
    for got, ref in zip(again_windows, fresh_windows):
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b)
