"""Resource Miner on the engine: invariants after every event, the paper's shadow model, the
properties the issue asks for, determinism and the directions of §4."""

import numpy as np
import pytest

from cluster_sim.rminer import RMinerConfig, run
from cluster_sim.rminer.model import RMinerModel

SMALL = dict(machines=12, think_time=1 / 40.0, horizon=6.0)


@pytest.mark.parametrize("mode", ["none", "safe", "smart"])
@pytest.mark.parametrize("refresh", ["synchronous", "staggered"])
def test_invariants_hold_after_every_event(mode, refresh):
    # a crowded cluster so that conflicts, collisions with RM tasks and evictions all happen
    cfg = RMinerConfig.ci().replace(mode=mode, view_refresh=refresh, schedulers=16, workload_level=3.0,
                                    filter_threshold=4.0, **SMALL)
    r = run(cfg, check_every_event=True)
    assert r.tasks_scheduled > 0
    if mode != "none":
        assert r.counts["rm_placed"] > 0


def test_smart_rm_conflicts_are_counted_and_resolved():
    cfg = RMinerConfig.ci().replace(mode="smart", schedulers=16, workload_level=3.0, filter_threshold=4.0, **SMALL)
    r = run(cfg, check_every_event=True)
    assert r.counts["rm_collisions"] > 0 and r.counts["rm_killed"] > 0
    assert r.counts["rm_restarted"] == r.counts["rm_killed"]  # kill, then migrate (restart)
    assert r.rm_conflict_rate > 0 and r.conflict_rate >= r.csv_conflict_rate


def test_safe_rm_migrates_at_view_update_and_rarely_kills():
    cfg = RMinerConfig.ci().replace(mode="safe", schedulers=16, workload_level=3.0, filter_threshold=4.0, **SMALL)
    r = run(cfg, check_every_event=True)
    assert r.counts["rm_converted"] > 0
    assert r.counts["rm_killed"] <= r.counts["rm_collisions"]


@pytest.mark.parametrize("d_u", [0.3, 1.0])
@pytest.mark.parametrize("l", [4.0, 5.0])
def test_measured_shadow_ratio_within_15_percent_of_theory(d_u, l):
    for seed in (1, 2):
        r = run(RMinerConfig.ci().replace(update_delay=d_u, mean_task_duration=l, seed=seed), record_series=False)
        assert r.theory_shadow_ratio == pytest.approx(d_u / (2 * l))
        assert r.shadow_ratio == pytest.approx(r.theory_shadow_ratio, rel=0.15), (d_u, l, seed)


def test_survival_times_are_uniform_on_the_update_delay():
    r = run(RMinerConfig.ci().replace(update_delay=0.8), record_series=False)
    assert r.survival_mean == pytest.approx(0.4, rel=0.1)  # E(T_s) = d_u / 2
    edges, dens = r.survival_hist
    assert edges[-1] == pytest.approx(0.8)
    assert np.all(np.abs(dens[1:-1] * 0.8 - 1) < 0.35)  # flat density 1/d_u


def test_no_update_delay_no_shadow_and_rminer_changes_nothing():
    base = RMinerConfig.ci().replace(update_delay=0.0, horizon=8.0)
    plain = run(base.replace(mode="none"))
    assert plain.shadow_ratio == 0.0 and plain.mean_shadow == 0.0
    for mode in ("safe", "smart"):
        r = run(base.replace(mode=mode))
        assert r.counts["diverted"] == 0 and r.counts["rm_placed"] == 0
        assert r.summary() == plain.summary() | {"shadow_used_share": 0.0, "rm_killed_share": 0.0}
        assert r.tasks_scheduled == plain.tasks_scheduled and r.mean_job_wait == plain.mean_job_wait


def test_same_config_same_result():
    cfg = RMinerConfig.ci().replace(mode="smart", horizon=8.0)
    a, b = run(cfg), run(cfg)
    assert a.summary() == b.summary() and a.counts == b.counts
    assert run(cfg.replace(seed=1)).summary() != a.summary()


def test_directions_of_section_4():
    # 8 schedulers at 2x load: scheduling-bound, where the paper sees RMiner's largest gains
    base = RMinerConfig.ci().replace(workload_level=2.0, schedulers=8)
    none, safe, smart = (run(base.replace(mode=m), record_series=False) for m in ("none", "safe", "smart"))
    for rm in (safe, smart):
        assert rm.cpu_utilization > none.cpu_utilization and rm.throughput > none.throughput
        assert rm.mean_job_wait < none.mean_job_wait
    # at the same threshold (d_u, §4.7) SmartRM keeps its RM tasks through the resource waiting delay
    assert smart.util_shadow > safe.util_shadow > 0
    assert smart.shadow_used_share > safe.shadow_used_share > 0
    assert smart.conflict_rate - none.conflict_rate < 0.03  # "a small conflict cost"


def test_rm_tasks_are_not_committed_to_the_csv():
    cfg = RMinerConfig.ci().replace(mode="smart", horizon=4.0)
    model = RMinerModel(cfg)
    model.run_until(4.0)
    running_rm = list(model.rm.running.values())
    assert running_rm
    holds = model.csv.ledger.holds()
    visible = {id(h.owner) for h in holds if h.visible}
    hidden = {id(h.owner) for h in holds if not h.visible}
    assert not any(id(r.task) in visible for r in running_rm)  # the CSV never sees them ...
    assert hidden == {id(r.task) for r in running_rm}  # ... they are the one ledger's hidden holds
    assert np.array_equal(model.csv.ledger.hidden, model.rm.srm.occupied)
    assert (model.csv.ledger.free >= model.csv.ledger.truly_free).all()


@pytest.mark.parametrize("kw, msg", [
    ({"mode": "fast"}, "RMinerConfig.mode='fast' is not allowed"),
    ({"update_delay": -0.5}, "RMinerConfig.update_delay=-0.5 is out of range"),
    ({"filter_ratio": 2.0}, "RMinerConfig.filter_ratio=2.0 is out of range"),
    ({"mean_task_cpu": 64.0, "cpu_per_machine": 32}, "must not exceed"),
])
def test_config_errors_name_the_field(kw, msg):
    with pytest.raises(ValueError, match=msg):
        RMinerConfig.ci().replace(**kw)


def test_presets():
    assert RMinerConfig.paper().machines == 1500 and RMinerConfig.paper().horizon == 300.0
    assert RMinerConfig.paper().scheduling_rate == 1000.0
    # ~2.4 million tasks in 300 s at load 1x: 12 tasks x 300 s / 1.43 ms
    cfg = RMinerConfig.paper()
    assert cfg.arrival_rate() * cfg.horizon * cfg.tasks_per_job == pytest.approx(2.52e6, rel=0.01)
    assert RMinerConfig.from_preset("ci", schedulers=16).schedulers == 16


def test_staggered_refresh_shrinks_the_shadow_no_view_can_see():
    # each view is still d_u stale, but some view is refreshed every d_u / k: a release is invisible to
    # every view for U(0, d_u / k), so the shadow ratio is d_u / (2 k l)
    cfg = RMinerConfig.ci().replace(view_refresh="staggered")
    r = run(cfg, record_series=False)
    assert cfg.shadow_period() == cfg.update_delay / cfg.schedulers
    assert r.theory_shadow_ratio == pytest.approx(cfg.update_delay / (2 * cfg.schedulers * cfg.mean_task_duration))
    assert r.shadow_ratio == pytest.approx(r.theory_shadow_ratio, rel=0.15)
    assert r.survival_mean == pytest.approx(cfg.shadow_period() / 2, rel=0.1)


@pytest.mark.parametrize("mode", ["safe", "smart"])
def test_the_rm_side_and_the_meter_agree_on_shadow_under_staggered_refresh(mode):
    """Issue 13, finding 5: the RM scheduler cleared its shadow at every view's refresh while the meter kept
    each view's own (8x longer) shadow, so 'shadow used' fell from a few % to ~0.1%. Now both count what no
    view can see: the share used stays of the same size whichever way the views are refreshed."""
    base = RMinerConfig.ci().replace(mode=mode, seed=1)
    sync = run(base, record_series=False)
    stag = run(base.replace(view_refresh="staggered"), record_series=False)
    assert stag.shadow_used_share > sync.shadow_used_share / 4, (sync.shadow_used_share, stag.shadow_used_share)
    # and the RM scheduler never holds more shadow than the meter says exists (it uses at most all of it)
    model = RMinerModel(base.replace(view_refresh="staggered", horizon=6.0))
    model.run_until(6.0)
    assert model.rm.srm.available[:, 0].sum() <= model.probe.meter.shadow_of(0)


def test_utilisation_and_throughput_add_up_by_who_placed_the_task():
    r = run(RMinerConfig.ci().replace(mode="safe", workload_level=2.0), record_series=False)
    parts = r.util_shadow + r.util_rm_normal_path + r.util_normal
    assert parts == pytest.approx(r.cpu_utilization, rel=1e-12)
    assert r.util_shadow > 0 and r.util_rm_normal_path > 0
    assert sum(r.scheduled_by.values()) == r.tasks_scheduled
    assert r.scheduled_by["rm_shadow"] > 0 and r.scheduled_by["normal"] > 0


def test_norm_plus_one_adds_a_scheduler_at_the_rm_schedulers_rate():
    from collections import Counter

    cfg = RMinerConfig.ci().replace(mode="plus1", rm_speedup=3.0, workload_level=2.0, horizon=8.0)
    model = RMinerModel(cfg)
    model.run_until(cfg.horizon)
    model.check_invariants()
    assert len(model.schedulers) == cfg.schedulers + 1 and model.rm is None
    assert model.schedulers[-1].think_time == pytest.approx(cfg.think_time / 3.0)
    share = Counter(j.scheduler for j in model.arrived)[cfg.schedulers] / len(model.arrived)
    assert share == pytest.approx(3.0 / (cfg.schedulers + 3.0), abs=0.01)  # jobs in proportion to its rate
    one = run(RMinerConfig.ci().replace(mode="plus1"), record_series=False)
    nine = run(RMinerConfig.ci().replace(schedulers=9), record_series=False)
    assert one.summary() == nine.summary()  # at speedup 1 it is exactly one more normal scheduler
