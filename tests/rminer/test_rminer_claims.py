"""Labs 08-09 on the claims layer (issue 25): each lab's claims reproduce over its ci pool; a claim that
must reproduce, made false by switching the mechanism off, fails the check by name; the pool follows the
seed; figures that show an effect pool seeds or say "one seed"; the notebooks close on the claims table.

The claims' runs are remembered in the package's memo, so each test starts with an empty one (a
monkeypatched model must never be read back as the real one), and nothing is cached on disk.
"""

import matplotlib

matplotlib.use("Agg")

import json
from pathlib import Path

import numpy as np
import pytest

from cluster_sim.claims import ClaimFailed, check
from cluster_sim.rminer import RMinerConfig, claims08, claims09
from cluster_sim.rminer import experiments as ex
from cluster_sim.rminer import model as rminer_model
from cluster_sim.rminer.experiments import compare_modes, reach_paper, smart_variants
from cluster_sim.rminer.model import ShadowProbe
from cluster_sim.rminer.plots import plot_fig4, plot_modes, plot_reach, plot_variants

ROOT = Path(__file__).resolve().parents[2]
CI = RMinerConfig.ci()  # both labs' sweep base at the ci preset (50 machines, 20 s)
SHORT = CI.replace(horizon=5.0)  # for the tests that only need the claims to fail or the pool to move


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch):
    monkeypatch.setattr(ex, "_ROWS", {})


# The claims over the ci pool are checked where a student meets them: the notebook's execution at ci
# (tests/notebooks/test_notebooks.py runs it once and reads its recorded claims back), not measured again here.


def test_lab08_fails_by_name_when_releases_are_seen_at_once(monkeypatch):
    """Views that learn of every release at once (no staleness): no shadow, so the agreement with d_u/2l
    and the growth with the update delay must fail, each named."""
    release = ShadowProbe.on_release

    def seen_at_once(self, task, t):
        release(self, task, t)
        if self.active:
            self.meter.sync(t)

    monkeypatch.setattr(ShadowProbe, "on_release", seen_at_once)
    table = claims08.claims_table(SHORT, pool_size=2, client="inprocess", cache=False)
    with pytest.raises(ClaimFailed) as err:
        check(table)
    message = str(err.value)
    for key in ("shadow_matches_theory", "survival_is_half_the_update_delay", "shadow_grows_with_the_update_delay"):
        assert f"claim {key!r}" in message
    assert "Try:" in message


def test_lab09_fails_by_name_when_the_rm_scheduler_never_uses_shadow(monkeypatch):
    """The RM scheduler given the normal schedulers' rule (no shadow in its view): it is then one more
    scheduler, NoRM + 1's baseline, and the claims that RMiner mines shadow must fail, each named."""
    real = rminer_model.rm_choice
    monkeypatch.setattr(rminer_model, "rm_choice",
                        lambda shadow, free, demand, mode: real(np.zeros_like(shadow), free, demand, mode))
    table = claims09.claims_table(SHORT, pool_size=2, client="inprocess", cache=False)
    with pytest.raises(ClaimFailed) as err:
        check(table)
    message = str(err.value)
    for key in ("safe_mines_shadow", "smart_mines_shadow", "smart_uses_more_shadow_than_safe"):
        assert f"claim {key!r}" in message
    assert "'conflict_cost_small'" not in message


def test_a_seed_override_shifts_the_pool_and_never_shrinks_it():
    tiny = SHORT.replace(machines=10, think_time=1500 / (10 * 1000))
    table = claims08.claims_table(tiny.replace(seed=7), pool_size=3, client="inprocess", cache=False)
    assert set(table["seeds"]) == {"7,8,9"} and set(table["n"]) == {3}


def test_the_claims_read_the_runs_the_notebooks_figures_made(monkeypatch):
    """Fig. 4's runs, then Lab 08's claims: nothing runs again. Section 7's per-seed sweep, then Lab 09's
    claims: only the cells section 7 lacks run."""
    calls = []
    real_run = ex.run
    monkeypatch.setattr(ex, "run", lambda config, **k: calls.append(config) or real_run(config, **k))
    tiny = SHORT.replace(horizon=2.0)
    fig4 = claims08.claims_frame(tiny, [0, 1], client="inprocess", cache=False)
    assert len(calls) == len(fig4) == len(claims08.UPDATE_DELAYS) * len(claims08.DURATIONS) * 2
    calls.clear()
    claims08.claims_table(tiny, pool_size=2, client="inprocess", cache=False)
    assert calls == [], "Lab 08's claims ran again what its Fig. 4 ran"
    compare_modes(tiny, cells=[(8, 2.0), (16, 2.0)], seeds=[0, 1], per_seed=True, client="inprocess", cache=False)
    calls.clear()
    claims09.claims_table(tiny, pool_size=2, client="inprocess", cache=False)
    assert len(calls) == (len(claims09.CELLS) - 8) * 2, "only the cells section 7 lacks were run"


def test_per_seed_rows_average_to_the_tables_and_their_gains_are_paired():
    tiny = SHORT.replace(horizon=2.0)
    seeds = [0, 1, 2]
    per_seed = compare_modes(tiny, cells=[(8, 2.0)], modes=("none", "smart"), seeds=seeds, per_seed=True,
                             client="inprocess", cache=False)
    assert list(per_seed["seed"]) == seeds * 2
    mean = compare_modes(tiny, cells=[(8, 2.0)], modes=("none", "smart"), seeds=seeds, client="inprocess",
                         cache=False)
    for col in ("cpu_utilization", "throughput", "shadow_used_share"):
        assert per_seed.groupby("mode", sort=False)[col].mean().to_numpy() == pytest.approx(mean[col].to_numpy())
    smart, none = (per_seed[per_seed["mode"] == m].set_index("seed") for m in ("smart", "none"))
    assert smart["util_gain"].to_numpy() == pytest.approx((smart["cpu_utilization"] - none["cpu_utilization"]).to_numpy())


def bars(fig):
    from matplotlib.container import BarContainer

    return [c for ax in fig.axes for c in ax.containers if isinstance(c, BarContainer)]


def titles(fig):
    return " ".join([fig._suptitle.get_text() if fig._suptitle else ""] + [ax.get_title() for ax in fig.axes])


def test_figures_that_show_an_effect_pool_seeds_or_say_one_seed():
    tiny = SHORT.replace(horizon=2.0)
    pooled = compare_modes(tiny, cells=[(8, 2.0)], seeds=[0, 1, 2], per_seed=True, client="inprocess", cache=False)
    fig = plot_modes(pooled)
    assert "mean of 3 seeds (0-2)" in titles(fig) and "95% interval" in titles(fig)
    assert all(bar.errorbar is not None for bar in bars(fig)), "every bar carries the interval of its mean"
    one = plot_modes(compare_modes(tiny, cells=[(8, 2.0)], per_seed=True, client="inprocess", cache=False))
    assert "one seed (seed 0)" in titles(one)
    assert all(bar.errorbar is None for bar in bars(one)), "one seed has no interval to draw"
    fig4 = claims08.claims_frame(tiny, [0, 1], client="inprocess", cache=False)
    assert "mean of 2 seeds" in titles(plot_fig4(fig4))
    assert "one seed" in titles(plot_fig4(fig4[fig4["seed"] == 0]))
    reach = reach_paper(tiny, settings=(("default", 1.0, 0.5, 1.0),), client="inprocess", cache=False)
    assert "one seed" in titles(plot_reach(reach))
    variants = smart_variants(tiny.replace(workload_level=2.0), update_delays=(0.5,), seeds=[0, 1], client="inprocess",
                              cache=False)
    assert "mean of 2 seeds" in titles(plot_variants(variants))


@pytest.mark.parametrize("name", ["08_rminer_shadow_resources", "09_rminer_resource_miner"])
def test_the_notebooks_close_on_the_claims_table_and_write_no_verdict_by_hand(name):
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    closing = [s for s in code if "assert" in s][-1]
    assert "record(table)" in closing and "check(table)" in closing and "claims_table(" in closing
    every = "\n".join(code)
    assert "claims hold" not in every and "PAPER_REPORTS" not in every
