"""Lab 00 (the tour) on the claims layer: its claims reproduce over the ci pool, and each kind of claim
fails the check, by name, when what it claims is made false."""

import json
from pathlib import Path

import numpy as np
import pytest

from cluster_sim.claims import ClaimFailed, check
from cluster_sim.engine import CentralStateView, ClusterConfig, run
from cluster_sim.engine import claims as tour
from cluster_sim.engine.claims import CLAIMS, POOL_SIZE, claims_table, default_pool_size, tour_metrics

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "00_cluster_sim_tour.ipynb"
SMALL = ClusterConfig.ci().replace(horizon=80.0)  # a short run: the claims that must fail fail at any size


def test_the_tours_claims_reproduce_over_the_ci_pool():
    table = claims_table(ClusterConfig.ci(), client="inprocess")
    check(table)
    assert (table["role"] == "must reproduce").all() and (table["verdict"] == "reproduced").all()
    assert (table["n"] == POOL_SIZE["ci"]).all() and table["seeds"].iloc[0] == "0,1,2,3,4,5,6,7,8,9"
    assert list(table["claim"]) == [c.key for c in CLAIMS]


def test_a_seed_override_shifts_the_pool_and_keeps_its_size():
    assert default_pool_size(ClusterConfig.ci().replace(seed=7)) == POOL_SIZE["ci"]
    assert default_pool_size(ClusterConfig.default()) == POOL_SIZE["default"]
    assert default_pool_size(ClusterConfig.ci().replace(machines=12)) == max(POOL_SIZE.values())
    table = claims_table(SMALL.replace(seed=7), pool_size=2, client="inprocess", cache=False)
    assert set(table["seeds"]) == {"7,8"}


def test_views_that_are_never_stale_fail_the_stale_view_claims_by_name(monkeypatch):
    """The mechanism switched off: every local view reads the ledger itself, whatever update_delay says."""
    new_view = CentralStateView.new_view
    monkeypatch.setattr(CentralStateView, "new_view", lambda self, fresh: new_view(self, True))
    table = claims_table(SMALL, pool_size=3, client="inprocess", cache=False)
    with pytest.raises(ClaimFailed) as failed:
        check(table)
    message = str(failed.value)
    assert "'stale_views_conflict'" in message and "'waiting_grows_with_staleness'" in message
    assert "within noise" in message and "Try:" in message
    assert "'littles_law'" not in message and "'fresh_views_never_conflict'" not in message


def test_a_time_in_queue_not_counted_up_to_the_horizon_breaks_littles_law(monkeypatch):
    """A plausible slip: W over the tasks that started only. The identity's band catches it."""
    def started_only(result):
        t, T = result.tasks, result.metrics.time
        started = ~np.isnan(t["released"]) & ~np.isnan(t["start"])
        lam = float((~np.isnan(t["released"])).sum() / T)
        w = float((t["start"] - t["released"])[started].mean())
        return {"lambda": lam, "w": w, "lambda_w": lam * w}

    monkeypatch.setattr(tour, "littles_law", started_only)
    table = claims_table(SMALL, pool_size=3, client="inprocess", cache=False)
    with pytest.raises(ClaimFailed, match=r"claim 'littles_law' .* must reproduce and is (differs|within noise)"):
        check(table)


def test_the_identities_hold_on_one_run_of_each_kind():
    for config in (ClusterConfig.ci(), ClusterConfig.ci().replace(schedulers=4, load=1.2, update_delay=2.0,
                                                                     hardware_types=3, speed_spread=1.0)):
        m = tour_metrics(run(config))
        assert m["mean_queue_length"] == pytest.approx(m["lambda_w"], abs=1e-9)
        assert m["utilisation"] == pytest.approx(m["utilisation_from_records"], abs=1e-9)
        assert m["offered_share"] == pytest.approx(m["accounted_share"], abs=1e-9)


def test_the_tours_closing_cell_records_and_checks_the_claims_table():
    """Before: the closing cell built a `claims` frame with a hand-computed `holds` column."""
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    closing = "".join(next(c for c in reversed(cells) if "assert" in "".join(c["source"]))["source"])
    assert "claims.record(table)" in closing and "claims.check(table)" in closing
    source = "".join("".join(c["source"]) for c in cells)
    assert '"holds"' not in source and "claims_table(config)" in source


@pytest.mark.parametrize("preset", ["ci", "default", "paper"])
def test_the_stale_cluster_is_buildable_at_every_preset_and_only_paper_is_capped(preset):
    """At paper the stale cluster (load 0.9, 4 schedulers on 1,500 machines) was 5.2 M tasks, past max_events:
    notebook 00 stopped at §4 under `make reproduce SCALE=paper`."""
    from cluster_sim.engine.claims import STALE, STALE_MAX_MACHINES, stale_config

    config = getattr(ClusterConfig, preset)()
    stale = stale_config(config)  # raised ValueError (max_events) at paper before
    assert stale.machines == min(config.machines, STALE_MAX_MACHINES)
    assert (stale.schedulers, stale.load) == (STALE["schedulers"], STALE["load"])
    if preset != "paper":
        assert stale == config.replace(**STALE)


def test_the_decision_throughput_think_time_is_not_rounded_away_at_paper(monkeypatch):
    """At paper λ is 7,680 tasks/s, so DECISION_LOAD / λ = 0.00026 s rounded to three decimals was 0: one scheduler
    on the true state kept up for free and §5 showed nothing."""
    config = ClusterConfig.paper()
    bases = []
    monkeypatch.setattr(tour, "run_grid", lambda fn, base, grid, **kw: bases.append(base))
    tour.decision_throughput(config)
    busy = tour.offered_task_rate(config) * bases[0].think_time  # one scheduler's share of time deciding
    assert busy == pytest.approx(tour.DECISION_LOAD, rel=1e-2)
