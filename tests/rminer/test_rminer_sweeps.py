"""Labs 08-09's sweeps go through run_grid: the same tables, bit for bit, as the hand-written loops
they replace; a remembered run is not run again; a 2-worker Dask cluster gives the in-process frame.

The reference functions below are the old code's logic (a loop over cells and seeds, each run's
metrics averaged in seed order), kept here to compare against.
"""

from __future__ import annotations


import pandas as pd
import pytest

from cluster_sim.rminer import RMinerConfig, run
from cluster_sim.rminer import experiments as ex
from cluster_sim.rminer.experiments import (COUNTS, METRICS, REACH, canonical, compare_modes, mode_summaries,
                                            reach_paper, run_cells, run_remembered, shadow_sweep, smart_variants)

pytestmark = pytest.mark.xdist_group("dask")

SMALL = RMinerConfig.ci().replace(horizon=4.0)  # the ci preset, a short horizon
SEEDS = (0, 1, 2)  # three: a mean of two is the same in either order, of three it is not


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch):
    """Each test starts with nothing remembered (the memo is the module's, shared by the session)."""
    monkeypatch.setattr(ex, "_ROWS", {})


def reference_row(r) -> dict:
    row = {m: getattr(r, m) for m in METRICS}
    row.update({c: r.counts.get(c, 0) for c in COUNTS})
    row["normal_tasks"] = r.scheduled_by.get("normal", 0)
    row["tasks_submitted"] = r.tasks_submitted
    return row


def reference_cells(base, cells, seeds=None, **_):
    """The old run_cells: every cell, every seed, one after another; the mean of the seeds' rows."""
    seeds = (base.seed,) if seeds is None else tuple(seeds)
    rows = []
    for cell in cells:
        per_seed = [reference_row(run(canonical(base.replace(**cell, seed=s)), record_series=False)) for s in seeds]
        rows.append({**cell, **pd.DataFrame(per_seed).mean().to_dict(), "seeds": len(seeds)})
    return pd.DataFrame(rows)


def reference_shadow_sweep(base, update_delays, durations, seeds):
    """The old shadow_sweep: update delays x durations x seeds, nested loops."""
    rows = []
    for d_u in update_delays:
        for l in durations:
            for seed in seeds:
                r = run(base.replace(mode="none", update_delay=d_u, mean_task_duration=l, seed=seed),
                        record_series=False)
                rows.append(dict(update_delay=d_u, mean_task_duration=l, seed=seed, measured=r.shadow_ratio,
                                 theory=r.theory_shadow_ratio, survival_mean=r.survival_mean,
                                 utilisation=r.cpu_utilization))
    df = pd.DataFrame(rows)
    df["deviation"] = df["measured"] / df["theory"] - 1.0
    return df


def with_reference_cells(monkeypatch, fn, *args, **kwargs):
    """``fn`` (compare_modes, reach_paper, ...) with its cells computed by the old loop."""
    with monkeypatch.context() as m:
        m.setattr(ex, "run_cells", reference_cells)
        return fn(*args, **kwargs)


SWEEPS = {
    "compare_modes": (compare_modes, SMALL, dict(cells=[(8, 2.0)])),
    "reach_paper": (reach_paper, SMALL, dict(settings=(("default", 1.0, 0.5, 1.0), ("reach", 4.0, 1.0, 4.0)))),
    "smart_variants": (smart_variants, SMALL.replace(workload_level=2.0, **REACH), dict(update_delays=(0.5,), plus1=True)),
}


@pytest.mark.parametrize("name", SWEEPS)
def test_the_tables_equal_the_old_loops_bit_for_bit(name, monkeypatch):
    fn, base, kwargs = SWEEPS[name]
    old = with_reference_cells(monkeypatch, fn, base, seeds=SEEDS, **kwargs)
    new = fn(base, seeds=SEEDS, client="inprocess", cache=False, **kwargs)
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    # and again, every run now read from the memo: the same bits
    pd.testing.assert_frame_equal(fn(base, seeds=SEEDS, client="inprocess", cache=False, **kwargs), old,
                                  check_exact=True)


def test_the_cells_read_back_from_the_disk_cache_are_the_same_bits(tmp_path, monkeypatch):
    cells = [dict(mode="none"), dict(mode="smart", filter_threshold=4.0)]
    first = run_cells(SMALL, cells, SEEDS, client="inprocess", cache=tmp_path)
    monkeypatch.setattr(ex, "_ROWS", {})
    calls = []
    monkeypatch.setattr(ex, "run", lambda *a, **k: calls.append(a) or run(*a, **k))
    again = run_cells(SMALL, cells, SEEDS, client="inprocess", cache=tmp_path)
    assert calls == [], "every run should have been read from the disk cache"
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    pd.testing.assert_frame_equal(first, reference_cells(SMALL, cells, SEEDS), check_exact=True)


def test_shadow_sweep_equals_the_old_loop_bit_for_bit():
    grid = dict(update_delays=(0.3, 1.0), durations=(2.0, 5.0), seeds=SEEDS)
    new = shadow_sweep(SMALL, **grid, client="inprocess", cache=False)
    pd.testing.assert_frame_equal(new, reference_shadow_sweep(SMALL, **grid), check_exact=True)


def test_a_remembered_run_is_not_run_again_by_the_sweep(monkeypatch):
    """The notebook shows a run (run_remembered), then sweeps over its cell: one run of it, not two;
    a cell whose mode ignores a setting is the same run as the cell without it."""
    calls = []
    monkeypatch.setattr(ex, "run", lambda config, **k: calls.append(config) or run(config, **k))
    shown = run_remembered(SMALL.replace(mode="smart", schedulers=8, workload_level=2.0))
    assert len(calls) == 1
    df = compare_modes(SMALL, cells=[(8, 2.0)], modes=("none", "smart"), client="inprocess", cache=False)
    assert [c.mode for c in calls[1:]] == ["none"], "only NoRM was left to run"
    assert df.set_index("mode").loc["smart", "cpu_utilization"] == shown.cpu_utilization
    calls.clear()
    run_cells(SMALL, [dict(mode="none", schedulers=8, workload_level=2.0, rm_speedup=4.0, filter_ratio=1.0)],
              client="inprocess", cache=False)
    assert calls == [], "NoRM with RM settings is NoRM: remembered from compare_modes"
    run_cells(SMALL, [dict(mode="plus1"), dict(mode="plus1", filter_threshold=4.0)], client="inprocess", cache=False)
    assert len(calls) == 1, "two cells of one run: it runs once"


def test_mode_summaries_are_the_runs_summaries():
    df = mode_summaries(SMALL.replace(workload_level=2.0), client="inprocess", cache=False)
    assert list(df.index) == ["none", "safe", "smart"]
    for mode in df.index:
        assert df.loc[mode].to_dict() == run(SMALL.replace(workload_level=2.0, mode=mode), record_series=False).summary()


def test_bad_seeds_and_grids_are_refused():
    with pytest.raises(ValueError, match="seeds"):
        shadow_sweep(SMALL, seeds=())
    with pytest.raises(ValueError, match="update_delay"):
        shadow_sweep(SMALL, update_delays=())
    with pytest.raises(ValueError, match="update_delay"):
        shadow_sweep(SMALL, update_delays=(-1.0,), cache=False)


def test_a_two_worker_dask_cluster_gives_the_in_process_tables(monkeypatch, dask_client):
    tiny = SMALL.replace(horizon=2.0)
    cells = dict(cells=[(8, 2.0)], modes=("none", "smart"), seeds=(0, 1))
    here = compare_modes(tiny, **cells, client="inprocess", cache=False)
    fig4 = shadow_sweep(tiny, update_delays=(0.5,), durations=(2.0,), client="inprocess", cache=False)
    monkeypatch.setattr(ex, "_ROWS", {})  # nothing remembered: every run goes to the workers
    there = compare_modes(tiny, **cells, client=dask_client, cache=False)
    fig4_there = shadow_sweep(tiny, update_delays=(0.5,), durations=(2.0,), client=dask_client, cache=False)
    pd.testing.assert_frame_equal(there, here, check_exact=True)
    pd.testing.assert_frame_equal(fig4_there, fig4, check_exact=True)
