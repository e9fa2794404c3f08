"""The Mesa job manager (equals the pure replay), the fleet analysis and the notebook's functions."""

import numpy as np
import pytest

from cluster_sim.shaper import StageGraph, draw_durations, random_stage_graph, replay
from cluster_sim.shaper.agents import JobPlan, ShapingClusterModel
from cluster_sim.shaper.fleet import CLUSTERS, analyse_fleet, fleet_summary, over_allocated_jobs, synthetic_fleet
from cluster_sim.shaper.lab import (
    ShaperConfig,
    delay_sweep,
    estimate_trace,
    plot_job_panel,
    plot_snapshot,
    run_fleet,
    run_job,
    snapshot,
)


def plans_for(seed, modes=("off", "conservative", "spool_once", "aggressive", "cost_aware", "not_started")):
    g = random_stage_graph(np.random.default_rng(seed), stages=10, spools=2, max_vertices=25, decay=0.9)
    d, m = draw_durations(g, np.random.default_rng(seed))
    return [JobPlan(g, d, tokens=40, mode=mode, arrival=3.0 * k, request_delay=4.0, estimates=m)
            for k, mode in enumerate(modes)]


@pytest.mark.parametrize("seed", [0, 1])
def test_mesa_job_manager_equals_the_pure_replay(seed):
    plans = plans_for(seed)
    model = ShapingClusterModel(plans, check_every_event=True)  # invariants after every event
    model.run_until(model.horizon)
    model.check_invariants()
    assert sorted(model.runs) == list(range(len(plans)))
    for k, p in enumerate(plans):
        ref = replay(p.graph, p.durations, p.tokens, p.mode, request_delay=p.request_delay, estimates=p.estimates)
        got = model.runs[k]
        assert got.latency == pytest.approx(ref.latency, abs=1e-9), p.mode
        assert np.allclose(got.allocation[0] - p.arrival, ref.allocation[0])
        assert np.array_equal(got.allocation[1], ref.allocation[1]), p.mode
        assert np.array_equal(got.usage[1], ref.usage[1]), p.mode
    # every engine task completed; the pool got every token back
    assert model.metrics.tasks_by_state["completed"] == sum(p.graph.total_vertices for p in plans)
    assert model.pool.held.value == 0


def test_token_pool_counts_releases_and_grants():
    # a valley: 30 wide, two narrow stages, 30 wide again
    g = StageGraph({"a": 30, "b": 2, "b2": 2, "c": 30}, [("a", "b"), ("b", "b2"), ("b2", "c")])
    d = {"a": np.ones(30), "b": np.ones(2), "b2": np.full(2, 5.0), "c": np.ones(30)}
    plans = [JobPlan(g, d, 30, "conservative"), JobPlan(g, d, 30, "aggressive", request_delay=2.0),
             JobPlan(g, d, 30, "aggressive", request_delay=10.0)]
    model = ShapingClusterModel(plans, check_every_event=True)
    model.run_until(model.horizon)
    cons, quick, slow = (model.runs[k] for k in range(3))
    assert cons.allocation[1].tolist() == [30, 0]  # the remaining peak never drops below c's 30
    assert quick.requests >= 1 and quick.latency == cons.latency  # asked 5 s ahead, got it in 2
    assert slow.latency == pytest.approx(cons.latency + 5.0)  # asked 5 s ahead, got it in 10
    assert quick.allocation_area < cons.allocation_area
    assert model.pool.granted >= 2 * 26 and model.pool.released >= model.pool.granted


def test_model_needs_plans():
    with pytest.raises(ValueError, match="at least one JobPlan"):
        ShapingClusterModel([])


def test_fleet_savings_never_exceed_the_opportunity():
    rng = np.random.default_rng(0)
    jobs = [j for p in CLUSTERS[:2] for j in synthetic_fleet(rng, 10, p, max_width=200)]
    df = analyse_fleet(jobs)
    assert (df["shaped_area"] >= df["usage_area"] - 1e-6).all()
    assert (df["savings"] >= -1e-12).all() and (df["slowdown"] == 0).all()
    s = fleet_summary(df)
    assert (s["shaper_savings"] <= s["opportunity"] + 1e-9).all()
    assert (s["shaper_savings"] > 0).all()
    assert (df.groupby("cluster")["over_allocated"].mean().round(2) == [0.6, 0.6]).all()


def test_over_allocated_share_is_exact_and_prefers_small_jobs():
    rng = np.random.default_rng(1)
    sizes = np.arange(1, 1001)
    over = over_allocated_jobs(rng, 0.4, sizes)
    assert over.sum() == 400
    assert sizes[over].mean() < sizes[~over].mean()
    with pytest.raises(ValueError, match="over_allocated_share=1.5 is out of range"):
        over_allocated_jobs(rng, 1.5, sizes)


def test_config_validation_names_the_fields():
    with pytest.raises(ValueError, match=r"spools=9 is out of range for stages=6: allowed 0 <= spools <= stages - 2 = 4"):
        ShaperConfig.ci().replace(stages=6, spools=9)
    with pytest.raises(ValueError, match="ShaperConfig.mode='greedy' is not allowed"):
        ShaperConfig.from_preset("ci", mode="greedy")
    with pytest.raises(ValueError, match="ShaperConfig.request_delay=-1.0 is out of range"):
        ShaperConfig.from_preset("ci", request_delay=-1.0)


def test_run_job_modes_and_determinism():
    cfg = ShaperConfig.ci()
    a, b = run_job(cfg), run_job(cfg)
    assert a.shaped.allocation_area == b.shaped.allocation_area
    assert a.slowdown == 0.0 and 0 < a.savings < 1
    assert a.released > 0
    off = run_job(cfg.replace(mode="off"))
    assert off.savings == 0.0
    agg = run_job(cfg.replace(mode="aggressive", request_delay=0.0))
    assert agg.slowdown == 0.0 and agg.savings >= a.savings


def test_estimate_trace_bounds_and_snapshot():
    cfg = ShaperConfig.ci()
    df = estimate_trace(cfg)
    assert (df["tree"] >= df["actual"]).all()
    e = df.dropna(subset=["exact"])
    assert len(e) > 10 and (e["tree"] >= e["exact"]).all() and (e["exact"] >= e["actual"]).all()
    snap = snapshot(cfg.replace(progress=0.3))
    assert snap.peak == sum(snap.widths) and snap.peak >= 0
    assert snapshot(cfg.replace(progress=0.0)).peak >= snap.peak


def test_delay_sweep_shape():
    sw = delay_sweep(ShaperConfig.ci(), delays=(0.0, 60.0), jobs=3)
    assert list(sw["delay"]) == [0.0, 60.0]
    assert sw["slowdown"].iloc[0] == 0.0
    assert (sw["aggressive_savings"] >= sw["conservative_savings"]).all()


def test_cost_sweep_same_plans_only_estimates_change():
    from cluster_sim.shaper.lab import cost_sweep

    cs = cost_sweep(ShaperConfig.ci(), errors=(0.0, 1.0), jobs=3)
    assert list(cs.index) == [0.0, 1.0]
    assert cs["conservative_savings"].nunique() == 1  # the same jobs at every error level
    assert ((cs["savings"] > 0) & (cs["worst_slowdown"] >= cs["slowdown"])).all()


def test_run_fleet_and_panel():
    from cluster_sim.ui import ConfigPanel

    fleet = run_fleet(ShaperConfig.ci().replace(fleet_jobs=5, fleet_clusters=2, fleet_max_width=50))
    assert list(fleet.summary.index) == ["Cluster1", "Cluster2"]
    panel = ConfigPanel(ShaperConfig.ci(), run_job, plot_job_panel,
                        fields=["stages", "spools", "over_allocation", "mode", "request_delay", "seed"])
    panel.set(mode="aggressive", request_delay=30.0)
    assert panel.result.config.mode == "aggressive" and panel.figure is not None
    panel.set(spools=50)  # rejected: the status line names the field, the last figure stays
    assert "spools" in panel.error
    snap_panel = ConfigPanel(ShaperConfig.ci(), snapshot, plot_snapshot, fields=["progress", "seed"])
    before = snap_panel.result.peak
    snap_panel.set(progress=0.9)
    assert snap_panel.result.peak <= before and snap_panel.figure is not None


def test_released_tokens_let_the_next_job_start_sooner():
    # two copies of a job that tapers; the pool fits 1.5 allocations, so the second must wait
    g = StageGraph({"scan": 40, "agg": 4}, [("scan", "agg")])
    d = {"scan": np.full(40, 2.0), "agg": np.full(4, 10.0)}
    result = {}
    for mode in ("off", "conservative"):
        plans = [JobPlan(g, d, 40, mode, arrival=0.0), JobPlan(g, d, 40, mode, arrival=1.0)]
        model = ShapingClusterModel(plans, token_capacity=60, check_every_event=True)
        model.run()
        result[mode] = model
    assert result["off"].admitted[1] == result["off"].finished[0] == 12.0  # waits for the whole first job
    assert result["conservative"].admitted[1] == 2.0  # the first job kept only agg's 4 tokens at t = 2
    assert result["conservative"].runs[1].latency == result["off"].runs[1].latency


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_conservative_shaping_no_job_is_admitted_later(seed):
    """FIFO admission + release-only shaping + no latency penalty => every admission is no later."""
    from cluster_sim.shaper.lab import cluster_plans

    cfg = ShaperConfig.ci().replace(seed=seed, cluster_jobs=6, cluster_tokens=1.2)
    admitted = {}
    for mode in ("off", "conservative"):
        plans = cluster_plans(cfg, mode)
        cap = int(np.ceil(1.2 * max(p.tokens for p in plans)))
        model = ShapingClusterModel(plans, token_capacity=cap)
        model.run()
        admitted[mode] = np.array([model.admitted[k] for k in range(len(plans))])
    assert (admitted["conservative"] <= admitted["off"] + 1e-9).all()


def test_token_capacity_below_a_job_is_refused():
    g = StageGraph({"a": 5}, [])
    plan = JobPlan(g, {"a": np.ones(5)}, 50)
    with pytest.raises(ValueError, match="token_capacity=20 is below the largest job's 50 tokens"):
        ShapingClusterModel([plan], token_capacity=20)


def test_run_cluster_reports_both_runs():
    from cluster_sim.shaper.lab import plot_cluster, run_cluster

    res = run_cluster(ShaperConfig.ci().replace(cluster_jobs=4))
    assert set(res.runs) == {"off", "conservative"}
    off, on = res.runs["off"], res.shaped
    assert (on.jobs["admitted"] <= off.jobs["admitted"] + 1e-9).all()
    assert on.jobs["token_seconds"].sum() < off.jobs["token_seconds"].sum()
    assert off.held[1].max() <= off.capacity and on.released > 0
    assert plot_cluster(res) is not None
