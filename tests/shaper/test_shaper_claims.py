"""Lab 01 on the claims layer: its claims reproduce over the ci pools, the paper's numbers are claim rows
(paper value and ratio, never a hand-written verdict), and a must-reproduce claim made false fails the check
by name."""

import json
import re
from pathlib import Path

import pytest

from cluster_sim.claims import ClaimFailed, check
from cluster_sim.shaper import ShaperConfig
from cluster_sim.shaper.claims import POOL_SIZE, claims_table, lab_claims, pool_sizes
from cluster_sim.shaper.execution import JobExecution
from cluster_sim.shaper.fleet import PAPER_CLUSTERS, PAPER_VIRTUAL_CLUSTER

ROOT = Path(__file__).resolve().parents[2]
# a small lab for the claims that must fail: a few short jobs, a small fleet
SMALL = ShaperConfig.ci().replace(stages=8, max_vertices=30, cluster_jobs=4, fleet_jobs=6, fleet_clusters=2,
                                  fleet_max_width=60)


@pytest.fixture(scope="module")
def ci_table():
    return claims_table(ShaperConfig.ci(), client="inprocess")


def test_the_labs_claims_reproduce_over_the_ci_pools(ci_table):
    check(ci_table)
    must = ci_table[ci_table["role"] == "must reproduce"]
    assert len(must) == 9 and (must["verdict"] == "reproduced").all()
    n = ci_table.set_index("claim")["n"]
    assert n["shaper_saves"] == n["queueing_falls"] == POOL_SIZE["ci"]["job"]
    assert n["fleet_saves"] == POOL_SIZE["ci"]["fleet"]


def test_the_papers_numbers_are_claim_rows_with_their_ratio(ci_table):
    t = ci_table.set_index("claim")
    clusters = ["Cluster1", "Cluster2", "Cluster3"]  # ci runs the paper's first three clusters
    assert t.loc["fleet_saves", "paper"] == pytest.approx(PAPER_CLUSTERS.loc[clusters, "shaper_savings_over"].mean())
    assert t.loc["mean_job_savings", "paper"] == PAPER_VIRTUAL_CLUSTER["mean_job_savings"]
    assert t.loc["fleet_saves", "ratio"] == pytest.approx(t.loc["fleet_saves", "ours"] / t.loc["fleet_saves", "paper"])
    reported = t[t["role"] == "reported"]
    sizes = reported[reported["direction"] == ""]
    assert len(sizes) == 9 and (sizes["verdict"] == "reported").all() and sizes["ratio"].notna().all()


def test_the_fleet_claims_follow_the_clusters_the_config_runs():
    one = {c.key: c for c in lab_claims(ShaperConfig.ci().replace(fleet_clusters=1))}
    assert "cluster2_saves_most" not in one
    assert one["fleet_saves"].paper == PAPER_CLUSTERS.loc["Cluster1", "shaper_savings_over"]
    assert "cluster2_saves_most" in {c.key for c in lab_claims(ShaperConfig.default())}


def test_a_seed_override_shifts_the_pools_and_keeps_their_sizes():
    assert pool_sizes(ShaperConfig.ci().replace(seed=3)) == POOL_SIZE["ci"]
    assert pool_sizes(ShaperConfig.ci().replace(stages=13)) == {"job": 8, "fleet": 3}


def test_a_shaper_that_never_releases_fails_the_savings_claims_by_name(monkeypatch):
    """The mechanism switched off: the conservative shaper holds its static allocation."""
    monkeypatch.setattr(JobExecution, "_shape", lambda self, now: None)
    table = claims_table(SMALL, pool_size=3, client="inprocess", cache=False)
    with pytest.raises(ClaimFailed) as failed:
        check(table)
    failed_claims = set(re.findall(r"claim '(\w+)'", str(failed.value)))
    assert {"shaper_saves", "queueing_falls", "fleet_saves"} <= failed_claims
    assert "no_latency_penalty" not in failed_claims and "bound_is_conservative" not in failed_claims


def test_a_shaper_that_under_estimates_fails_the_no_penalty_claims_by_name(monkeypatch):
    """Half the remaining peak (never below one token, so the job still ends): vertices wait for tokens."""
    peak = JobExecution.remaining_peak_now
    monkeypatch.setattr(JobExecution, "remaining_peak_now", lambda self, now: max(1, peak(self, now) // 2))
    table = claims_table(SMALL, pool_size=3, client="inprocess", cache=False)
    with pytest.raises(ClaimFailed) as failed:
        check(table)
    failed_claims = set(re.findall(r"claim '(\w+)'", str(failed.value)))
    assert {"no_latency_penalty", "fleet_no_latency_penalty"} <= failed_claims


def test_no_hand_written_verdicts_are_left_in_the_lab():
    """Before: fleet.paper_comparison and the notebook's `extra` table wrote verdict strings by hand."""
    source = (ROOT / "cluster_sim" / "shaper" / "fleet.py").read_text()
    assert "def _verdict" not in source and '"verdict"' not in source
    cells = [c for c in json.loads((ROOT / "notebooks" / "01_plan_aware_shaper.ipynb").read_text())["cells"]
             if c["cell_type"] == "code"]
    code = "".join("".join(c["source"]) for c in cells)
    assert '"verdict"' not in code and "claims_over_seeds" not in code
    closing = "".join(next(c for c in reversed(cells) if "assert" in "".join(c["source"]))["source"])
    assert "claims.record(table)" in closing and "claims.check(table)" in closing
