"""Lab 10's composition: invariants after every event, the plain engine with every switch off, each
switch equal to its own lab's decisions on the same inputs, and determinism (here and on Dask)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_sim.capstone import SWITCHES, CapstoneConfig, CapstoneModel, ablation, arms, make_day, run, run_model
from cluster_sim.capstone.claims import claim_arms
from cluster_sim.capstone.day import ALPHA, SKYLINE_STEPS, rstar_containers
from cluster_sim.capstone.model import engine_config
from cluster_sim.capstone.plans import cluster_machines, resource_plans, stage_inputs
from cluster_sim.engine import ClusterModel
from cluster_sim.morpheus import ReprovisionRule, ReservationPlan, fit_skyline
from cluster_sim.rminer.model import RMinerModel
from cluster_sim.shaper.shaper import ResourceShaper
from cluster_sim.stageopt.agents import IPAScheduler
from cluster_sim.stageopt.config import ResourcePlanConfig
from cluster_sim.stageopt.experiments import trained_model
from cluster_sim.stageopt.optimizer import StageOptimizer
from cluster_sim.stageopt.workload import resource_grid
from cluster_sim.wing.scheduling.workload import value_efficiency

from .ablation_golden import PATH as GOLDEN, frame_values

SMALL = CapstoneConfig.ci().replace(horizon=400.0)


def records(model) -> list[tuple]:
    """Every task's life: job, stage, machine, start, finish, state (what two runs must agree on)."""
    return [(t.job.id, t.stage, t.machine, t.start, t.finish, t.state) for j in model.arrived for t in j.tasks]


def transparent(day):
    """The same day with every user asking for all of its job's vertices: admission never limits a job."""
    return dataclasses.replace(day, jobs=tuple(dataclasses.replace(j, tokens=j.n_tasks) for j in day.jobs))


def plain(config, model_class=ClusterModel, **attrs):
    """The engine's own model (or a lab's) on the day's jobs, with none of the capstone's layers."""
    day = make_day(config)
    ecfg = engine_config(config, day)
    cls = type("Plain", (model_class,), {"make_jobs": lambda self, rng: day.engine_jobs(), **attrs})
    model = cls(ecfg, check_every_event=True) if model_class is RMinerModel else cls(ecfg, jobs=day.engine_jobs(),
                                                                                     check_every_event=True)
    model.run_until(config.horizon)
    model.check_invariants()
    return model


def capstone(config, **kwargs):
    day = transparent(make_day(config))
    return run_model(config, day=day, tokens=10**9, check_every_event=True, **kwargs)


# ---- invariants after every event ---------------------------------------------------------------
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(switches=st.tuples(*[st.booleans()] * 5), machines=st.integers(4, 12), load=st.floats(0.3, 1.4),
       update_delay=st.sampled_from([0.0, 1.0, 5.0]), seed=st.integers(0, 50), schedulers=st.integers(1, 4),
       raa=st.booleans())
def test_invariants_hold_after_every_event_with_any_switches(switches, machines, load, update_delay, seed, schedulers,
                                                             raa):
    config = CapstoneConfig.ci().replace(**dict(zip(SWITCHES, switches)), machines=machines, load=load,
                                         update_delay=update_delay, seed=seed, schedulers=schedulers, horizon=300.0,
                                         raa=raa)
    model = run_model(config, check_every_event=True)  # raises AssertionError naming the first broken rule
    assert model.layer.held.value <= model.layer.total


@pytest.mark.parametrize("arm", arms(), ids=lambda a: "+".join(s for s in SWITCHES if a[s]) or "none")
def test_every_arm_of_the_ablation_keeps_the_invariants_at_ci(arm):
    run_model(SMALL.replace(**arm), check_every_event=True)


# ---- every switch off: the plain engine --------------------------------------------------------
def test_with_every_switch_off_the_run_equals_the_plain_engine_on_the_same_jobs():
    config = SMALL
    ours, engine = capstone(config), plain(config)
    assert records(ours) == records(engine)
    assert ours.metrics.utilisation == engine.metrics.utilisation


# ---- one switch on: the lab's own decisions -----------------------------------------------------
def test_stageopt_alone_places_as_lab_06s_ipa_scheduler_on_the_same_jobs():
    config = SMALL.replace(stageopt=True, raa=False)  # IPA placement only: one token per vertex
    ours, lab = capstone(config), plain(config, scheduler_class=IPAScheduler)
    assert records(ours) == records(lab)
    assert records(ours) != records(capstone(SMALL))  # and IPA does change where tasks run


def lab_07_optimizer():
    """Lab 07's stage optimiser, built here from Lab 07's public functions (not the capstone's)."""
    c = ResourcePlanConfig.ci()
    model = trained_model(c.seed, c.train_stages, c.levels, c.trace_noise, c.max_iter)[0]
    return StageOptimizer(model, theta0=(1.0, 1.0), alpha=c.alpha, grid=resource_grid((1.0, 2.0, 4.0), (1.0, 2.0, 4.0)))


def test_stageopt_gives_every_stage_lab_07s_resource_plan_and_the_engine_runs_it():
    """Issue 32: under stageopt every vertex held one token for its day's duration (IPA placement only).
    Each stage gets the plan Lab 07's RAA chooses on IPA's placement of the same stage, and the engine runs
    each vertex with it: its cores as tokens and CPU, its memory, its duration scaled by the model's latency
    under the plan over that under θ0."""
    config = SMALL.replace(stageopt=True)
    model = run_model(config, check_every_event=True)
    so, machines = lab_07_optimizer(), cluster_machines(config)
    tasks = {(t.job.id, t.stage): [] for j in model.arrived for t in j.tasks}
    for j in model.arrived:
        for t in j.tasks:
            tasks[t.job.id, t.stage].append(t)
    sizes = set()
    for spec in model.day.jobs:
        if spec.id not in {j.id for j in model.arrived}:
            continue
        for s, d in enumerate(spec.durations):
            stage = stage_inputs(config, spec.id, s, d)
            ipa = so.ipa(stage, machines)
            raa = so.raa(stage, machines, ipa)  # Lab 07's RAA Path + WUN, called through its own API
            ran = tasks[spec.id, s]
            assert [t.demand for t in ran] == [tuple(int(x) for x in th) for th in raa.theta], (spec.id, s)
            np.testing.assert_array_equal([t.duration for t in ran], d * raa.predicted_latency / ipa.predicted_latency)
            sizes |= {t.demand for t in ran}
    assert len(sizes) > 1 and sizes != {(1, 1)}  # RAA does size vertices differently
    # the queue layer counts a vertex's cores: a job's tasks at the schedulers or running never hold more than it
    assert any(m.tokens_completed != m.completed for m in model.job_managers.values())


def test_the_days_resource_plans_take_a_few_model_calls_not_four_a_stage(monkeypatch):
    """Issue 33: at paper the plans of 12,117 stages cost 115 s of CPU, nearly all of it the forest's cost
    per call (four calls a stage). The stages are planned in batches, one model call a round for all of a
    batch, with the plans test_stageopt_gives_every_stage_lab_07s_resource_plan_and_the_engine_runs_it checks."""
    from cluster_sim.capstone.plans import STAGES_PER_BATCH
    from cluster_sim.stageopt.latency_model import LatencyModel

    from cluster_sim.capstone.plans import stage_optimizer

    stage_optimizer()  # trained first: its training predicts once, which run alone this test counted as a plan's call
    calls = []
    predict = LatencyModel.predict
    monkeypatch.setattr(LatencyModel, "predict", lambda self, X: calls.append(len(X)) or predict(self, X))
    config = SMALL.replace(stageopt=True, seed=4242)  # a seed no other test plans (the plans are remembered)
    plans = resource_plans(config)
    batches = math.ceil(len(plans.stages) / STAGES_PER_BATCH)
    assert len(plans.stages) > 4 and len(calls) == 4 * batches


def test_under_the_resource_plans_jobs_ask_the_days_rule_in_tokens_and_the_shaper_weighs_tokens():
    config = SMALL.replace(stageopt=True, shaper=True, morpheus=True, load=1.2)
    model = run_model(config, check_every_event=True)
    plans = model.plans
    for spec in model.day.jobs:
        widths = plans.widths(spec.id)
        largest = max(int(plans.stages[spec.id, s].theta[:, 0].max()) for s in range(len(spec.widths)))
        peak = ResourceShaper().peak(spec.graph(widths), {})
        assert plans.tokens[spec.id] == max(largest, min(config.tokens // 4, math.ceil(config.over_allocation * peak)))
    log = model.shaper_log
    assert sum(r[-1] for r in log) > 0
    graphs = {j.id: j.graph(plans.widths(j.id)) for j in model.day.jobs}
    for job, completed, running, held, released in log:  # Lab 01's shaper on the graph in tokens
        assert released == ResourceShaper().tokens_to_release(graphs[job], held, completed, running)


def test_stage_inputs_refuse_durations_that_are_not_positive_naming_them():
    for bad in ([], [1.0, math.nan], [2.0, -1.0], [0.0]):
        with pytest.raises(ValueError, match="durations"):
            stage_inputs(SMALL, 0, 0, bad)
    with pytest.raises(ValueError, match="widths"):
        make_day(SMALL).jobs[0].graph((1,) * 9)


def test_rminer_alone_decides_as_labs_08_09s_smartrm_on_the_same_jobs():
    config = SMALL.replace(rminer=True)
    ours, lab = capstone(config), plain(config, model_class=RMinerModel)
    assert records(ours) == records(lab)
    assert ours.rm.counts == lab.rm.counts and ours.rm.counts["rm_placed"] > 0


def test_shaper_alone_releases_what_lab_01s_shaper_says_at_every_completion():
    model = run_model(SMALL.replace(shaper=True), check_every_event=True)
    log = model.shaper_log
    assert sum(r[-1] for r in log) > 0
    graphs = {j.id: j.graph() for j in model.day.jobs}
    for job, completed, running, held, released in log:
        assert released == ResourceShaper().tokens_to_release(graphs[job], held, completed, running)
    assert model.layer.released_early == sum(r[-1] for r in log)


def test_wing_alone_orders_every_organisation_queue_by_wing_aggs_predicted_efficiency():
    config = SMALL.replace(wing=True, load=1.4)
    day = make_day(config)
    meta = day.history.iloc[:0]  # the lab's function on the day's own history gives the same predictions
    jobs = [dict(job=j.id, template=j.template if j.kind != "adhoc" else f"{j.template}-{j.id}",
                 kind="adhoc" if j.kind == "adhoc" else "recurring", user=j.user) for j in day.jobs]
    import pandas as pd
    assert value_efficiency(day.history, pd.DataFrame(jobs)).equals(day.efficiency)
    eff = day.efficiency.to_dict()
    seen = []

    class Checked(CapstoneModel):
        def after_event(self):
            super().after_event()
            for queue in self.layer.waiting.values():
                keys = [(-eff[m.job.id], m.job.arrival) for m in queue]
                assert keys == sorted(keys)
                seen.append(len(queue))

    model = Checked(config)
    model.run_until(config.horizon)
    assert max(seen) >= 2  # queues did hold several jobs to order
    assert meta.empty


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_morpheus_packs_the_reservations_with_lab_03s_lowcost_plan_on_the_same_requests(preset):
    config = CapstoneConfig.from_preset(preset).replace(morpheus=True)
    day = make_day(config)
    lab = ReservationPlan(config.tokens, SKYLINE_STEPS)  # Lab 03's plan, fed the same requests in the same order
    placed = 0
    for name, request in day.requests.items():
        fit = fit_skyline(day.skylines[name], alpha=ALPHA).skyline  # R*, fitted by Lab 02-03's LP
        if request is not None:
            assert list(request.demands) == rstar_containers(fit).tolist()
        ours, theirs = day.allocations[name], (lab.place(request) if request is not None else None)
        assert (ours is None) == (theirs is None), name
        if ours is not None:
            placed += 1
            assert ours.starts == theirs.starts and all(np.array_equal(a, b) for a, b in zip(ours.blocks, theirs.blocks))
    assert placed >= 1 and np.array_equal(day.plan.load, lab.load)
    # every periodic run of a placed template is reserved its instance's block: its peak, from its first step to its last
    for j in day.jobs:
        if j.kind == "periodic":
            alloc = day.allocations[j.template]
            if alloc is None:  # refused by the plan: R* from the submission to the deadline, unpacked
                fit = fit_skyline(day.skylines[j.template], alpha=ALPHA).skyline
                assert j.reservation == (min(j.tokens, max(1, math.ceil(fit.max() - 1e-6))), j.arrival, j.deadline)
            else:
                block = np.asarray(alloc.blocks[0])
                first = (alloc.starts[0] + round((j.arrival - min(x.arrival for x in day.jobs if x.template == j.template))
                                                 / (alloc.job.period * day.step)) * alloc.job.period)
                assert j.reservation == (min(j.tokens, int(block.max())), first * day.step,
                                         (first + block.size) * day.step)
                assert j.arrival <= j.reservation[1] and j.reservation[2] <= j.deadline + 1e-9


def test_morpheus_reprovisions_as_lab_03s_rule_decides_on_the_same_inputs():
    decisions = []
    for seed in range(3):
        model = run_model(SMALL.replace(morpheus=True, horizon=900.0, load=1.2, seed=seed), check_every_event=True)
        decisions += model.dra_log
        assert not model.live_grants or all(g[1] > 0 for g in model.live_grants.values())
    assert decisions and any(d["given"] > 0 for d in decisions)
    rule = ReprovisionRule(hold_seconds=make_day(SMALL).step, recent_seconds=2 * make_day(SMALL).step)
    for d in decisions:
        grant = rule.decide(d["demand"], d["reserved"], d["recent"], d["room"])  # Lab 03's rule, on what ours saw
        assert (grant.containers, grant.reason) == (d["granted"], d["reason"]), d
        assert d["demand"] > d["reserved"] and 0 <= d["given"] <= d["granted"]


def test_morpheus_alone_keeps_periodic_runs_from_waiting_with_everything_else():
    config = SMALL.replace(morpheus=True)
    on, off = run_model(config, check_every_event=True), run_model(SMALL, check_every_event=True)

    def waits(model):
        return [model.layer.admitted.get(j.id, model.time) - j.arrival for j in model.arrived if j.tag.kind == "periodic"]

    # without preemption a run may wait for organisation work admitted before its reservation began,
    # but reserved runs wait far less than runs queued with everything else
    assert np.mean(waits(on)) < np.mean(waits(off))
    assert np.mean(np.array(waits(on)) == 0) > np.mean(np.array(waits(off)) == 0)


# ---- determinism ---------------------------------------------------------------------------------
def test_the_same_config_and_seed_give_identical_results_and_another_seed_another_day():
    config = SMALL.replace(**{s: True for s in SWITCHES})
    a, b = run(config), run(config)
    assert a.metrics == b.metrics and a.jobs.equals(b.jobs)
    assert run(config.replace(seed=1)).metrics != a.metrics


def test_a_days_jobs_cannot_be_changed_and_every_copy_of_the_day_shares_them():
    from cluster_sim.memo import check_read_only

    day = make_day(SMALL)
    check_read_only(day.jobs)
    with pytest.raises(ValueError, match="read-only"):
        day.jobs[0].durations[0][0] = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        day.jobs[0].tokens = 5
    day.history.loc[:, "agg_value"] = -1.0  # the day's frames are the reader's own copies
    again = make_day(SMALL)
    assert again.jobs[0] is day.jobs[0] and (again.history.agg_value != -1.0).all()


def test_the_resource_plans_are_the_same_for_the_same_config_and_seed():
    config = SMALL.replace(stageopt=True)
    a, b = run_model(config), run_model(config)
    assert records(a) == records(b)
    assert [t.demand for j in a.arrived for t in j.tasks] == [t.demand for j in b.arrived for t in j.tasks]
    # the plans handed out are shared read-only: editing them is refused, and no later run changes
    with pytest.raises(ValueError, match="read-only"):
        resource_plans(config).stages[0, 0].durations[:] = 1.0
    with pytest.raises(TypeError, match="read-only"):
        resource_plans(config).tokens[0] = 1
    assert records(run_model(config)) == records(a)


def test_an_ablation_builds_each_day_once_however_many_arms_cycle_through_the_seeds():
    from cluster_sim.capstone.day import _make_day

    config = SMALL.replace(horizon=60.0, seed=1000)  # seeds no other test builds
    before = _make_day.cache_info().misses
    ablation(config, 8, points=arms()[:2], client="inprocess", cache=False)
    assert _make_day.cache_info().misses - before == 8  # one per seed, not one per run (16)


@pytest.mark.xdist_group("dask")  # the session's cluster (tests/conftest.py)
def test_an_ablation_on_dask_gives_the_frame_it_gives_in_process(dask_client):
    points = [arms()[0], arms()[6]]  # none and all
    here = ablation(SMALL, 2, points=points, client="inprocess", cache=False)
    there = ablation(SMALL, 2, points=points, client=dask_client, cache=False)
    pd_cols = [c for c in here.columns]
    assert here[pd_cols].equals(there[pd_cols])
    assert list(here.arm) == ["none", "none", "all", "all"]


def plans_made() -> int:
    """The resource plans this process has made (run on each Dask worker)."""
    from cluster_sim.capstone.plans import _resource_plans

    return _resource_plans.cache_info().misses


@pytest.mark.xdist_group("dask")
def test_an_ablation_on_dask_plans_each_seeds_day_once_not_once_per_worker(dask_client):
    """The arms that read a day's resource plans go to one worker together: with two seeds, two plans are made
    in all (points handed out one at a time had each worker plan every seed's day)."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this module by name
    config = SMALL.replace(horizon=60.0, seed=2000)  # seeds no other test plans
    points = [a for a in claim_arms() if a["stageopt"]] + [arms()[0]]  # six arms with the plans, two without
    before = sum(dask_client.run(plans_made).values())
    there = ablation(config, 2, points=points, client=dask_client, cache=False)
    assert sum(dask_client.run(plans_made).values()) - before == 2
    here = ablation(config, 2, points=points, client="inprocess", cache=False)
    assert here.equals(there)


# ---- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [("machines", 1), ("load", 0.0), ("morpheus", 1), ("placement", "random")])
def test_bad_configs_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        CapstoneConfig.ci().replace(**{field: value})


def test_a_model_refuses_what_is_not_a_capstone_config():
    with pytest.raises(ValueError, match="CapstoneConfig"):
        CapstoneModel(engine_config(SMALL, make_day(SMALL)))


def test_the_capstone_inherits_the_fields_it_shares_with_the_labs_it_composes():
    """Issue 31: the capstone's cluster fields were copies of the engine's (and ``over_allocation`` and ``orgs``
    of Labs 01 and 05's), each with a doc of its own; they are the same fields, inherited by name with
    ``field_of`` (only the day's defaults and ranges restated), so a name means one thing across labs:
    ``load`` is the engine's offered CPU load, and ``RMinerConfig`` (the paper's ``workload_level``) does not
    take it."""
    from cluster_sim.engine import ClusterConfig
    from cluster_sim.rminer import RMinerConfig
    from cluster_sim.shaper import ShaperConfig
    from cluster_sim.wing.scheduling import WingConfig

    fields = {f.name: f for f in dataclasses.fields(CapstoneConfig)}
    for source, names in ((ClusterConfig, ("machines", "cpu_per_machine", "hardware_types", "speed_spread",
                                           "schedulers", "update_delay", "think_time", "placement", "load",
                                           "mean_task_duration", "duration_sigma")),
                          (ShaperConfig, ("over_allocation",)), (WingConfig, ("orgs",))):
        for name in names:
            inherited = source.__dataclass_fields__[name].metadata
            assert fields[name].metadata["label"] == inherited["label"], (name, source.__name__)
            assert fields[name].metadata["unit"] == inherited["unit"], (name, source.__name__)
    assert "load" not in {f.name for f in dataclasses.fields(RMinerConfig)}


# ---- the ablation's numbers are the code's before its per-event work was cut ------------------------------------


#: how far a recorded float may be from today's: the same code rounds differently in the last bits on another CPU
#: (numpy's and OpenBLAS's AVX-512 kernels against the AVX2 ones: the record was made on an AVX-512 machine, and
#: an AVX2-only EPYC gives 1e-16-relative differences in 4-5 columns of the claim arms with stage optimisation on)
ROUNDING = 1e-12


def _same_up_to_rounding(today: dict, recorded: dict) -> list[str]:
    """The (column, row, today, recorded) cells that differ: non-floats exactly, floats beyond ``ROUNDING``."""
    assert today.keys() == recorded.keys()
    bad = []
    for column, values in today.items():
        assert len(values) == len(recorded[column]), column
        for row, (a, b) in enumerate(zip(values, recorded[column])):
            if isinstance(a, str) and isinstance(b, str) and a.lstrip("-").startswith("0x"):
                x, y = float.fromhex(a), float.fromhex(b)
                if not (x == y or math.isclose(x, y, rel_tol=ROUNDING, abs_tol=ROUNDING)):
                    bad.append(f"{column}[{row}]: {x!r} != recorded {y!r}")
            elif a != b:
                bad.append(f"{column}[{row}]: {a!r} != recorded {b!r}")
    return bad


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_the_ablation_frame_equals_the_one_recorded_before_the_runs_were_made_cheaper(preset):
    """Every claim arm over two seeds against the frame the code gave before the per-event work of the runs was
    cut (IPA over machines with a slot, the shaper's peak kept up to date, the plans keyed without copying the
    day): an optimisation that changed a number would show here. Non-floats are equal; floats (recorded as hex)
    are equal up to ``ROUNDING``, because the last bits depend on the CPU's vector kernels, not on the code.
    Regenerate only for a change that is meant to change results: tests/capstone/ablation_golden.py."""
    frame = ablation(CapstoneConfig.from_preset(preset), 2, points=claim_arms(), client="inprocess", cache=False)
    assert _same_up_to_rounding(frame_values(frame), json.loads(GOLDEN.read_text())[preset]) == []


def test_the_recorded_ablation_check_sees_a_change_beyond_rounding():
    """The tolerant comparison still fails on a number that moved (one ulp-scale step passes, 1e-9 does not)."""
    recorded = json.loads(GOLDEN.read_text())["ci"]
    column = "utilisation"
    value = float.fromhex(recorded[column][0])
    near, moved = dict(recorded), dict(recorded)
    near[column] = [math.nextafter(value, 1.0).hex()] + recorded[column][1:]
    moved[column] = [(value * (1 + 1e-9)).hex()] + recorded[column][1:]
    assert _same_up_to_rounding(near, recorded) == []
    assert _same_up_to_rounding(moved, recorded) == [f"{column}[0]: {value * (1 + 1e-9)!r} != recorded {value!r}"]
    flipped = dict(recorded, arm=["x"] + recorded["arm"][1:])
    assert _same_up_to_rounding(flipped, recorded) == [f"arm[0]: 'x' != recorded {recorded['arm'][0]!r}"]
