"""Lab 03's simulation (§9 in miniature): the engine's invariants at every event, DRA's caps, the arms'
provisioning, determinism, the Mesa agents, and the errors a bad input gets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cluster_sim.morpheus import (
    ARMS, MorpheusConfig, compare, competitive_table, fig7_example, footprint, lcm_example, pack_many, run, simulate,
)
from cluster_sim.morpheus.packing.model import InferenceService, TelemetryCollector
from cluster_sim.morpheus.packing.periodic import STEP, Run
from cluster_sim.morpheus.packing.simulation import build_model, provision, workload

SMALL = MorpheusConfig.ci().replace(jobs=4, machines=6, cycle_minutes=120)


# ---- the simulation keeps the engine's rules -----------------------------------------------------------
@pytest.mark.parametrize("arm", ARMS)
def test_every_event_keeps_the_invariants(arm):
    """No machine over capacity, every task in one state, every queue at what it is provisioned, the ad hoc
    queue guaranteed exactly the rest, gangs whole: checked after every event of a whole cycle."""
    r = simulate(SMALL.replace(arm=arm), check_every_event=True)
    assert len(r.runs) > 0
    assert 0.0 <= r.slo_violation_rate <= 1.0 and 0.0 < r.utilisation <= 1.0
    done = r.runs.finish.notna()
    assert (r.runs.finish[done] >= r.runs.submit[done]).all()


def test_no_task_lost():
    model, w, plan, refused, end = build_model(SMALL.replace(arm="morpheus_dra"))
    model.run_until(end)
    model.check_invariants()
    periodic = [j for j in model.jobs if isinstance(j.tag, Run)]
    assert sum(j.n_tasks for j in periodic) == sum(r.n_tasks for r in w.runs)
    for job in periodic:
        states = {t.state for t in job.tasks}
        if not math.isnan(job.finish):
            assert states == {"completed"} or all(t.finish <= job.finish + 1e-9 for t in job.tasks)


def test_dra_never_grants_more_than_asked_capped_or_held_by_the_plan():
    r = simulate(MorpheusConfig.ci().replace(arm="morpheus_dra"))
    d = r.decisions
    assert len(d) > 0 and (d.granted > 0).any(), "the held-back run should ask for more"
    assert (d.granted <= d.asked).all()
    assert (d.granted <= d.cap).all()
    assert (d.granted <= d.room).all()
    assert (d.cap <= np.floor(r.config.rho * d.recent_max + 1e-9)).all()
    assert (d.demand > d.reserved).all(), "DRA is only consulted when demand exceeds the reservation"


def test_the_plan_holds_every_reservation_within_capacity_and_window():
    c = MorpheusConfig.ci().replace(arm="morpheus")
    r = run(c)
    r.plan.check()
    assert r.plan.peak() <= 1.0 + 1e-9
    w = r.workload
    for jid, alloc in r.plan.allocations.items():
        job = alloc.job
        assert all(s - alloc.starts[0] == i * job.period for i, s in enumerate(alloc.starts)), "one offset"
        left = alloc.starts[0] % job.period
        x = alloc.containers(r.plan.horizon)
        assert x.sum() == sum(job.demands) * (r.plan.horizon // job.period)
        assert job.a <= left and left + len(alloc.blocks[0]) <= job.d
        assert job.name in {t.name for t in w.templates}


def test_arms_provision_as_documented():
    c = MorpheusConfig.ci()
    w = workload(c)
    users, plan, ids, refused = provision(c.replace(arm="user"), w, 200)
    assert plan is None and all(p.while_running == t.provisioned for t, p in zip(w.templates, users.values()))
    model_only, plan, _, _ = provision(c.replace(arm="model_only"), w, 200)
    assert plan is None
    for name, p in model_only.items():
        assert np.array_equal(p.from_start, w.rstar(name))
    packed, plan, ids, refused = provision(c.replace(arm="morpheus"), w, 200)
    assert set(ids) | set(refused) == {t.name for t in w.templates}
    for name in refused:  # a refused job keeps its user's count
        assert packed[name].while_running == w.template(name).provisioned and packed[name].base is None


def test_same_config_same_result_and_seeds_differ():
    a, b = simulate(SMALL), simulate(SMALL)
    assert a.runs.equals(b.runs) and a.utilisation == b.utilisation
    c = simulate(SMALL.replace(seed=1))
    assert not c.runs[["submit"]].equals(a.runs[["submit"]])


def test_run_is_remembered_and_refuses_other_configs():
    a, b = run(SMALL), run(SMALL)
    assert a is not b and a.runs.equals(b.runs)  # a copy each (tests/morpheus/test_morpheus_remembered.py)
    with pytest.raises(ValueError, match="config=str is not allowed"):
        run("ci")


# ---- the direction of §9 on pooled seeds -------------------------------------------------------------------
def test_dra_misses_fewer_than_users_and_static_on_pooled_seeds():
    t = compare(MorpheusConfig.ci(), arms=("user", "morpheus", "morpheus_dra"), seeds=(0, 1, 2))
    assert t.loc["morpheus_dra", "violations"] < t.loc["user", "violations"]
    assert t.loc["morpheus_dra", "violations"] < t.loc["morpheus", "violations"]
    assert t.loc["morpheus_dra", "reserved_share"] < t.loc["user", "reserved_share"]


# ---- the share of the cluster reserved for periodic jobs ------------------------------------------------------
def _promised_share(r) -> float:
    """The queues' counts added up (series "provisioned"), as a share of the cluster over the run."""
    from cluster_sim.morpheus.packing.simulation import _integral

    return _integral(*r.series["provisioned"], r.end) / (r.config.containers * r.end)


@pytest.mark.parametrize("config", [
    MorpheusConfig.ci(),
    MorpheusConfig.ci().replace(machines=1),  # users' counts far beyond the cluster, runs piling up: once 13.9x
], ids=["ci", "one machine"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_reserved_share_is_a_share_of_the_cluster(config, seed):
    """Users' counts (and those of the jobs a plan refuses, which keep them) are promises that may add up to
    more than the cluster, once per active run; the cluster can hold back at most all of itself from the ad
    hoc queue. So the share lies in [0, 1], and is the promised share whenever the promises fit."""
    for arm in ARMS:
        r = run(config.replace(arm=arm, seed=seed))
        assert 0.0 <= r.reserved_share <= 1.0, (arm, r.reserved_share)
        assert r.reserved_share <= _promised_share(r) + 1e-12, arm
        if r.series["provisioned"][1].max() <= r.config.containers:
            assert r.reserved_share == pytest.approx(_promised_share(r), rel=1e-12), arm


def test_reserved_share_is_whole_when_the_promises_exceed_the_cluster():
    r = run(MorpheusConfig.ci().replace(machines=1, arm="user"))
    assert r.reserved_share > 0.9


# ---- footprint and compare ---------------------------------------------------------------------------------
def test_footprint_is_the_smallest_size_reaching_the_target():
    c = MorpheusConfig.ci().replace(arm="morpheus_dra")
    m, tried = footprint(c, 0.8, seeds=(0,), max_machines=c.machines)
    assert m is not None and tried[m] >= 0.8
    assert all(v < 0.8 for k, v in tried.items() if k < m), "a smaller size tried reached the target"
    if m - 1 >= 1:
        assert m - 1 in tried, "bisection ends between a failing and a passing size"


def test_footprint_with_sizes_stops_at_the_first_failure():
    c = MorpheusConfig.ci().replace(arm="user")
    m, tried = footprint(c, 1.0, seeds=(0,), max_machines=c.machines, sizes=(c.machines, c.machines // 2))
    if m is None:
        assert list(tried) == [c.machines]


@pytest.mark.parametrize("target", [0.0, 1.5, -0.1, float("nan"), True])
def test_footprint_refuses_a_bad_target(target):
    with pytest.raises(ValueError, match=r"target=.* is out of range: need 0 < target <= 1"):
        footprint(MorpheusConfig.ci(), target)


def test_compare_refuses_unknown_arms_and_no_seeds():
    with pytest.raises(ValueError, match="arms contains 'both', which is not allowed: choose from 'user'"):
        compare(MorpheusConfig.ci(), arms=("both",))
    with pytest.raises(ValueError, match=r"seeds=\(\) is not allowed"):
        compare(MorpheusConfig.ci(), seeds=())


# ---- the config ------------------------------------------------------------------------------------------------
def test_config_refuses_bad_values_naming_the_field():
    with pytest.raises(ValueError, match="MorpheusConfig.rho"):
        MorpheusConfig.ci().replace(rho=-1.0)
    with pytest.raises(ValueError, match="MorpheusConfig.cycle_minutes"):
        MorpheusConfig.ci().replace(cycle_minutes=100)
    with pytest.raises(ValueError, match="max_tasks"):
        MorpheusConfig.ci().replace(jobs=400, cycle_minutes=1440, machines=2000, adhoc_load=0.9)


def test_work_estimate_tracks_the_tasks_created():
    for c in (MorpheusConfig.ci(), MorpheusConfig.default()):
        r = run(c)
        assert 0.4 < r.tasks / c.work().amount < 2.5, (r.tasks, c.work().amount)


def test_periods_divide_the_cycle():
    for cycle in (120, 240, 480, 720, 1440):
        periods, weights = MorpheusConfig.ci().replace(cycle_minutes=cycle).periods()
        assert all(cycle % p == 0 for p in periods) and abs(sum(weights) - 1) < 1e-9


# ---- the Mesa agents --------------------------------------------------------------------------------------------
def test_telemetry_collector_records_exact_skylines_and_inference_refits():
    c = SMALL.replace(arm="user")
    refits = []

    def factory(model):
        collector = TelemetryCollector(model)
        InferenceService(model, collector, lambda log: refits.append(len(log)) or {}, interval=1800.0, start=1800.0)
        return collector

    model, w, plan, refused, end = build_model(c, collector=factory)
    model.run_until(end)
    col = model.collector
    finished = [j for j in model.jobs if isinstance(j.tag, Run) and not math.isnan(j.finish)]
    assert len(col.recorded) == len(finished) > 0
    skylines = col.log.skylines()
    for job in finished:
        run_ = job.tag
        sky = skylines[run_.template.name][[i for n, i in col.recorded if n == run_.template.name].index(run_.instance)]
        held = sum(t.finish - t.start for t in job.tasks) / STEP
        assert abs(sky.sum() - held) < 1e-6, "the skyline's area is the container-minutes the tasks held"
    assert len(refits) == int(end // 1800.0) and refits == sorted(refits)


# ---- the pure experiments -------------------------------------------------------------------------------------
def test_fig7_and_fig6_examples():
    w = fig7_example()
    lo, hi = w.stage_steps()[2]
    assert hi - lo + 1 == round(16 / 38 * 19) == 8
    assert w.x.sum() == 10 + 12 + 16 + 8
    plan, names = lcm_example()
    plan.check()
    assert len(names) == len(plan.allocations) == 3


def test_lowcost_never_beats_the_milp_optimum():
    t = competitive_table(range(6))
    fits = t[t.optimum_fits]
    assert len(fits) > 0
    for m in ("lowcost", "greedy"):
        placed = fits[fits[f"refused_{m}"] == 0]
        assert (placed[m] >= placed.optimum - 1e-9).all()


def test_pack_many_keeps_both_plans_valid_and_refuses_bad_input():
    lc, gr, peaks = pack_many(20, seed=1)
    lc.check()
    gr.check()
    assert (peaks["lowcost"] >= peaks["mean"] - 1e-9).all() and peaks.lowcost.is_monotonic_increasing
    with pytest.raises(ValueError, match="n_jobs=0 is out of range"):
        pack_many(0)
    with pytest.raises(ValueError, match="load=2 is out of range"):
        pack_many(5, load=2)


def test_the_inference_service_fits_what_fit_skyline_fits_on_the_recorded_runs():
    """Issue 9: the Mesa service's contract equals fit_skyline on the same recorded runs. The service
    refits from what the collector recorded by then; the reference refits from the finished log cut at
    each refit's time, with fit_skyline called directly on that template's last history_runs skylines."""
    from cluster_sim.morpheus import SLOConfig, fit_skyline
    from cluster_sim.morpheus.slo.runs import align_skylines
    from cluster_sim.morpheus.slo.drift import refit

    slo = SLOConfig.ci()
    c = SMALL.replace(arm="user", cycle_minutes=720, hourly_share=1.0)  # 12 runs of each hourly job

    def factory(model):
        # the consumer reads each output at a fixed time of the hour (55 min in), so every run has a
        # deadline with slack to infer (§4's actionable jobs)
        collector = TelemetryCollector(model, read_time=lambda run, t_end: run.period_start + 3300.0)
        model.inference = InferenceService(model, collector, lambda log: refit(log, slo), interval=1800.0,
                                           start=1800.0)
        return collector

    model, *_, end = build_model(c, collector=factory)
    model.run_until(end)
    fitted = [(t, contracts) for t, contracts in model.inference.history if contracts]
    assert len(fitted) >= 3, "too few refits produced a contract: the recorded runs were too few"
    n_runs = [max(c.fit.n_runs for c in contracts.values()) for _, contracts in fitted]
    assert n_runs == sorted(n_runs) and n_runs[-1] > n_runs[0], f"history should grow between refits: {n_runs}"
    log = model.collector.log
    for t, contracts in fitted:
        skylines = log.until(t).skylines()
        for name, contract in contracts.items():
            runs = skylines[name][-slo.history_runs:]
            assert contract.fit.n_runs == len(runs)
            expected = fit_skyline(align_skylines(runs), slo.alpha, beta_fraction=slo.beta_fraction)
            np.testing.assert_allclose(contract.skyline, expected.skyline, atol=1e-6,
                                       err_msg=f"{name} at t = {t:g} s")


@pytest.mark.parametrize("answer", [1, 5, 7, 8, 20, 64])
def test_footprint_bisection_finds_a_known_answer(monkeypatch, answer):
    # attainment as a known step in the cluster's size: the smallest size reaching the target is `answer`
    from cluster_sim.morpheus.packing import simulation

    calls = []

    def known(config, points, seeds, **kw):  # the searches' one seam: every size they ask for goes through it
        calls.extend(m for _, m in points)
        return {(arm, m): 0.9 if m >= answer else 0.5 for arm, m in points}

    monkeypatch.setattr(simulation, "attainments", known)
    c = MorpheusConfig.ci()  # 8 machines: answers above it make the search grow the cluster first
    m, tried = footprint(c, 0.8, seeds=(0,))
    assert m == answer, f"bisection found {m}, the known answer is {answer} (tried {tried})"
    assert len(calls) == len(set(calls)), "a size was simulated twice"
    assert len(calls) <= 2 * math.ceil(math.log2(8 * c.machines)) + 2, f"too many sizes tried: {sorted(calls)}"
