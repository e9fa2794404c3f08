"""The paper's experiments in miniature: Fig. 4 (measured vs theoretical shadow ratio), Figs. 10-14
(NoRM / NoRM + 1 scheduler / SafeRM / SmartRM over schedulers and workload level: :func:`compare_modes`), the
settings that reach the paper's effect size and where the gain comes from (:func:`reach_paper`),
Figs. 15-16 (SmartRM, SmartRM-C, SmartRM-A over update delays: :func:`smart_variants`), and the
stale-view timeline of Fig. 3.

Each function returns a pandas DataFrame so notebooks can show and plot it: one row per cell averaged
over its seeds (:func:`run_cells`), or one row per cell and seed (:func:`cell_rows`, ``per_seed=True``:
what a figure with intervals and the labs' claims, :mod:`.claims08` and :mod:`.claims09`, read). Every
sweep over configs and seeds goes through :func:`cluster_sim.sweep.run_grid`: each sweeping function
takes ``client=None, cache=None`` and passes them on (in this process while a sweep is short, on a Dask
cluster when it is long; each point cached on disk).

Example
-------
>>> df = shadow_sweep(RMinerConfig.ci().replace(horizon=5.0), update_delays=(0.5,), durations=(5.0,))
>>> list(df.columns)[:4]
['update_delay', 'mean_task_duration', 'seed', 'measured']
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..sweep import run_grid
from ..sweep.ahead import RunAhead, start_run_ahead
from .config import RMinerConfig
from .model import RMinerModel
from .simulation import SUMMARY_COLUMNS, RMinerResult, run

METRICS = ("cpu_utilization", "throughput", "mean_job_wait", "conflict_rate", "rm_conflict_rate", "shadow_ratio",
           "shadow_used_share", "rm_killed_share", "util_shadow", "util_rm_normal_path", "util_normal",
           "theory_shadow_ratio", "survival_mean")
COUNTS = ("rm_placed", "rm_killed", "rm_normal_path", "diverted")


ROW_COLUMNS = [*METRICS, *COUNTS, "normal_tasks", "tasks_submitted"]  # _row's keys, in its order


def _row(r) -> dict:
    row = {m: getattr(r, m) for m in METRICS}
    row.update({c: r.counts.get(c, 0) for c in COUNTS})
    row["normal_tasks"] = r.scheduled_by.get("normal", 0)  # tasks the normal schedulers started
    row["tasks_submitted"] = r.tasks_submitted
    return row


def _gains(df: pd.DataFrame, keys: list, ref_mode: str, suffix: str) -> None:
    """Add gain columns of every row against the ``ref_mode`` row of the same ``keys`` cell."""
    ref = df[df["mode"] == ref_mode].set_index(keys)
    if ref.empty:
        return
    key = list(zip(*(df[k] for k in keys))) if len(keys) > 1 else list(df[keys[0]])
    r = ref.loc[key]
    df["util_gain" + suffix] = df["cpu_utilization"].to_numpy() - r["cpu_utilization"].to_numpy()
    df["throughput_gain" + suffix] = df["throughput"].to_numpy() / r["throughput"].to_numpy() - 1
    if not suffix:
        df["wait_reduction"] = 1 - df["mean_job_wait"].to_numpy() / r["mean_job_wait"].to_numpy()
        df["conflict_increase"] = df["conflict_rate"].to_numpy() - r["conflict_rate"].to_numpy()
        # where RMiner's utilisation gain over NoRM comes from (they add up to util_gain): RM tasks on
        # shadow resources, RM tasks committed to the CSV (Algorithm 2's normal path), and the normal
        # schedulers doing more or less with the tasks left to them (§4.7: longer ones)
        df["gain_from_shadow"] = df["util_shadow"].to_numpy()
        df["gain_from_rm_normal_path"] = df["util_rm_normal_path"].to_numpy()
        df["gain_from_normal"] = df["util_normal"].to_numpy() - r["util_normal"].to_numpy()


def _check_seeds(seeds, base: RMinerConfig) -> tuple:
    seeds = (base.seed,) if seeds is None else tuple(seeds)
    if not seeds:
        raise ValueError("seeds=() is not allowed: give at least one seed")
    return seeds


# ---- the cells' sweeps: every loop over configs and seeds goes through cluster_sim.sweep.run_grid ------
# Two caches with two jobs, both keyed by the canonical config (equal runs are recognised as equal):
# * _ROWS, in memory (config -> metrics row): a run is a function of its config (all randomness is
#   seeded), so a process runs each cell once. A notebook shows a run (run_remembered) and then sweeps
#   over the same cell, and asks for some cells in two sweeps (NoRM at 8 schedulers, 2x workload is in
#   Figs. 10-14 and in reach_paper; a lab's claims read the runs its figures showed). cell_rows and
#   run_cells (and every sweep built on them, shadow_sweep included) look here first, in this process,
#   and give run_grid only the runs it lacks: a remembered run is not repeated, whether the sweep runs
#   here or on Dask workers (which have memos of their own, empty). Whatever run_grid returns is
#   remembered; forget() empties the memo (a benchmark timing the runs themselves).
# * run_grid's disk cache: a rerun of the notebook, or an interrupted sweep, resumes without running
#   anything it already ran; editing the package's source starts afresh.
_ROWS: dict = {}
_ROWS_MAX = 512


def canonical(config: RMinerConfig) -> RMinerConfig:
    """``config`` with the settings its mode ignores at their defaults (NoRM has no RM scheduler and
    no filter; NoRM + 1 scheduler has no filter), so equal runs are recognised as equal."""
    d = RMinerConfig.__dataclass_fields__
    ignored = {"none": ("rm_speedup", "filter_ratio", "filter_threshold", "adaptive_filter", "rm_max_priority"),
               "plus1": ("filter_ratio", "filter_threshold", "adaptive_filter", "rm_max_priority")}.get(config.mode, ())
    return config.replace(**{f: d[f].default for f in ignored})


def forget() -> None:
    """Empty the memo of runs (the next sweep runs everything it does not find in the disk cache)."""
    _ROWS.clear()


def _remember(config: RMinerConfig, row: dict) -> None:
    if config not in _ROWS:
        if len(_ROWS) >= _ROWS_MAX:
            _ROWS.pop(next(iter(_ROWS)))
        _ROWS[config] = row


def _cell_point(config: RMinerConfig) -> dict:
    """run_cells' point: the metrics row of one run (of a canonical config)."""
    return _row(run(config, record_series=False))


def metrics_row(config: RMinerConfig) -> dict:
    """The headline metrics of ``run(config)``, remembered: the notebooks ask for some cells twice
    (NoRM at 8 schedulers, 2x workload is in Figs. 10-14 and in the effect-size table)."""
    config = canonical(config)
    row = _ROWS.get(config)
    if row is None:
        row = _cell_point(config)
        _remember(config, row)
    return dict(row)


def run_remembered(config: RMinerConfig) -> "RMinerResult":
    """``run(config)`` with its series (for figures), its metrics remembered for the sweeps: a notebook
    that shows a run and then sweeps over the same cell runs it once."""
    result = run(config)
    _remember(canonical(config), _row(result))
    return result


def estimated_seconds(config: RMinerConfig) -> float:
    """The engine's estimate of ``run(config)``'s time (``config.work().seconds``)."""
    return config.work().seconds


def run_ahead(config: RMinerConfig, *, cache=None) -> RunAhead:
    """``run(config)`` for a figure at the end of a notebook that needs nothing from the cells before it (Labs 08
    and 09's static figures: a paper-scale run, minutes on one core): at ``paper`` it starts now in a process of
    its own, on the second core, while the kernel goes on; the figure's cell takes ``.result()``, the result
    ``run(config)`` gives here (a seeded run does not depend on where it runs). Where nothing is worth starting
    (``ci`` and ``default``: seconds; the test suite; one core; no sweep cache) ``.result()`` runs it then, here
    (:func:`cluster_sim.sweep.ahead.start_run_ahead`)."""
    return start_run_ahead(run, config, estimate=estimated_seconds, cache=cache)


def _changes(base: RMinerConfig, config: RMinerConfig) -> dict:
    """The fields where ``config`` differs from ``base`` (and its seed): a grid point of run_grid."""
    out = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)
           if getattr(config, f.name) != getattr(base, f.name)}
    return {**out, "seed": config.seed}


def _metrics_rows(base: RMinerConfig, configs: list, client, cache) -> dict:
    """Canonical config -> metrics row for every one of ``configs``: from the memo, the rest in one sweep."""
    rows = {c: _ROWS[c] for c in configs if c in _ROWS}
    todo = list(dict.fromkeys(c for c in configs if c not in rows))  # each run once, in the cells' order
    if todo:
        df = run_grid(_cell_point, base, [_changes(base, c) for c in todo], client=client, cache=cache)
        for config, row in zip(todo, df[ROW_COLUMNS].to_dict("records")):
            rows[config] = row
            _remember(config, row)
    return rows


def _cell_configs(base: RMinerConfig, cells: list[dict], seeds, client, cache):
    """The seeds, each cell's canonical config per seed, and the metrics row of every one of them."""
    seeds = _check_seeds(seeds, base)
    configs = [[canonical(base.replace(**cell, seed=s)) for s in seeds] for cell in cells]
    rows = _metrics_rows(base, [c for per_cell in configs for c in per_cell], client, cache)
    return seeds, configs, rows


def cell_rows(base: RMinerConfig, cells: list[dict], seeds=None, *, client=None, cache=None) -> pd.DataFrame:
    """One row per (cell, seed), cell by cell with the seeds fastest: the cell's fields, ``seed`` and the
    run's metrics. Every cell runs the same seeded workloads, so two cells' rows of one seed are a paired
    comparison (what :func:`cluster_sim.claims.measure` reads). Runs come from the memo when remembered.
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    seeds, configs, rows = _cell_configs(base, cells, seeds, client, cache)
    return pd.DataFrame([{**cell, "seed": s, **rows[c]} for cell, per_cell in zip(cells, configs)
                         for s, c in zip(seeds, per_cell)])


def run_cells(base: RMinerConfig, cells: list[dict], seeds=None, *, client=None, cache=None) -> pd.DataFrame:
    """One row per cell (a dict of config fields), its metrics averaged over ``seeds`` (default: ``base.seed``; paired:
    every cell runs the same seeded workloads, so differences between cells are not workload noise).
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    seeds, configs, rows = _cell_configs(base, cells, seeds, client, cache)
    out = []
    for cell, per_cell in zip(cells, configs):
        # the mean over seeds in seed order, as a frame of the rows: the old loop's last bit exactly
        per_seed = [rows[c] for c in per_cell]
        out.append({**cell, **pd.DataFrame(per_seed).mean().to_dict(), "seeds": len(seeds)})
    return pd.DataFrame(out)


def shadow_sweep(base: RMinerConfig, update_delays=(0.25, 0.5, 1.0), durations=(2.0, 5.0, 10.0, 20.0),
                 seeds=None, *, client=None, cache=None) -> pd.DataFrame:
    """Fig. 4: measured shadow ratio vs ``d_u / 2l`` over update delays and mean durations (NoRM), one
    row per (update delay, duration, seed) in that order. The runs are remembered like
    :func:`run_cells`' (Lab 08's claims read the same runs as its figure). ``client`` and ``cache`` go to
    :func:`cluster_sim.sweep.run_grid`."""
    update_delays, durations = tuple(update_delays), tuple(durations)
    if not update_delays or not durations:
        raise ValueError(f"update_delays={update_delays!r}, durations={durations!r} are not allowed: give at least "
                         "one update delay and one mean task duration")
    cells = [dict(update_delay=d_u, mean_task_duration=l) for d_u in update_delays for l in durations]
    rows = cell_rows(base.replace(mode="none"), cells, seeds, client=client, cache=cache)
    df = rows[["update_delay", "mean_task_duration", "seed"]].assign(
        measured=rows["shadow_ratio"], theory=rows["theory_shadow_ratio"], survival_mean=rows["survival_mean"],
        utilisation=rows["cpu_utilization"])
    df["deviation"] = df["measured"] / df["theory"] - 1.0
    return df


def compare_modes(base: RMinerConfig, schedulers=(8, 16), workload_levels=(1.0, 1.5, 2.0),
                  modes=("none", "plus1", "safe", "smart"), seeds=None, cells=None, *, per_seed: bool = False,
                  client=None, cache=None) -> pd.DataFrame:
    """Figs. 10-14: one row per (schedulers, workload_level, mode), averaged over ``seeds``; gains relative to
    NoRM of the same cell (``util_gain``, ``throughput_gain``, ...) and, when ``"plus1"`` is among the
    modes, relative to NoRM + 1 scheduler (``util_gain_vs_plus1``, ``throughput_gain_vs_plus1``):
    what shadow mining buys beyond one more scheduler. ``cells`` (a list of (schedulers, workload_level))
    replaces the full grid. ``per_seed=True`` gives one row per (schedulers, workload_level, mode, seed) instead,
    each gain taken against the baseline's run of the same seed (paired), so a figure can show the
    seeds' spread. ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    grid = cells if cells is not None else [(k, level) for k in schedulers for level in workload_levels]
    cells = [dict(schedulers=k, workload_level=level, mode=m) for k, level in grid for m in modes]
    if per_seed:
        df, keys = cell_rows(base, cells, seeds, client=client, cache=cache), ["schedulers", "workload_level", "seed"]
    else:
        df, keys = run_cells(base, cells, seeds, client=client, cache=cache), ["schedulers", "workload_level"]
    _gains(df, keys, "none", "")
    _gains(df, keys, "plus1", "_vs_plus1")
    return df


#: RMiner settings beyond the paper's defaults, for "which settings reach the paper's effect size":
#: (label, rm_speedup, filter_ratio, filter_threshold)
REACH_SETTINGS = (
    ("paper defaults (RM at 1x, ratio 0.5, threshold d_u)", 1.0, 0.5, 1.0),
    ("RM at 4x, ratio 1, threshold d_u", 4.0, 1.0, 1.0),
    ("RM at 4x, ratio 1, threshold 2 d_u (SmartRM-C)", 4.0, 1.0, 2.0),
    ("RM at 4x, ratio 1, threshold 4 d_u (SmartRM-A)", 4.0, 1.0, 4.0),
)
#: the setting the notebook uses to reach the paper's effect size (§4.7's SmartRM-A, diverting every
#: eligible task to an RM scheduler four times as fast as a normal one)
REACH = dict(rm_speedup=4.0, filter_ratio=1.0)


def reach_paper(base: RMinerConfig, settings=REACH_SETTINGS, schedulers: int = 8, workload_level: float = 2.0,
                seeds=None, *, client=None, cache=None) -> pd.DataFrame:
    """SmartRM under each setting, beside NoRM and NoRM + 1 scheduler at the same RM scheduler rate,
    in one (schedulers, workload_level) cell: gains over NoRM and over NoRM + 1. ``client`` and ``cache`` go to
    :func:`cluster_sim.sweep.run_grid`."""
    settings = tuple(settings)
    if not settings or any(len(s) != 4 for s in settings):
        raise ValueError(f"settings={settings!r} is not allowed: give at least one (label, rm_speedup, filter_ratio, "
                         "filter_threshold)")
    cells = [dict(mode="none", rm_speedup=1.0, filter_ratio=0.5, filter_threshold=1.0)]
    for speed in sorted({s[1] for s in settings}):
        cells.append(dict(mode="plus1", rm_speedup=speed, filter_ratio=0.5, filter_threshold=1.0))
    for _, speed, ratio, th in settings:
        cells.append(dict(mode="smart", rm_speedup=speed, filter_ratio=ratio, filter_threshold=th))
    df = run_cells(base.replace(schedulers=schedulers, workload_level=workload_level), cells, seeds, client=client, cache=cache)
    labels = {(s[1], s[2], s[3]): s[0] for s in settings}
    df["setting"] = [labels[(r.rm_speedup, r.filter_ratio, r.filter_threshold)] if r.mode == "smart"
                     else ("NoRM" if r.mode == "none" else f"NoRM + 1 scheduler ({r.rm_speedup:g}x rate)")
                     for r in df.itertuples()]
    none = df[df["mode"] == "none"].iloc[0]
    df["util_gain"] = df["cpu_utilization"] - none.cpu_utilization
    df["throughput_gain"] = df["throughput"] / none.throughput - 1
    df["wait_reduction"] = 1 - df["mean_job_wait"] / none.mean_job_wait
    df["conflict_increase"] = df["conflict_rate"] - none.conflict_rate
    df["gain_from_shadow"] = df["util_shadow"]
    df["gain_from_rm_normal_path"] = df["util_rm_normal_path"]
    df["gain_from_normal"] = df["util_normal"] - none.util_normal
    # against NoRM + 1 at the same rate (NoRM's row: against NoRM + 1 at a normal scheduler's rate)
    plus = df[df["mode"] == "plus1"].set_index("rm_speedup").reindex(df["rm_speedup"])
    df["util_gain_vs_plus1"] = df["cpu_utilization"] - plus["cpu_utilization"].to_numpy()
    df["throughput_gain_vs_plus1"] = df["throughput"] / plus["throughput"].to_numpy() - 1
    return df


#: §4.7's SmartRM variants: the filter threshold in update delays
SMART_VARIANTS = {"SmartRM": 1.0, "SmartRM-C": 2.0, "SmartRM-A": 4.0}


def smart_variants(base: RMinerConfig, update_delays=(0.5, 1.0), variants=SMART_VARIANTS, seeds=None,
                   plus1: bool = False, *, client=None, cache=None) -> pd.DataFrame:
    """Figs. 15-16: NoRM and SmartRM, SmartRM-C, SmartRM-A (``variants``: threshold in update delays)
    at each update delay, with ``base``'s RM scheduler rate and filter ratio (and NoRM + 1 scheduler at
    that rate, if ``plus1``): throughput, utilisation and the share of RM tasks killed by conflicts.
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    update_delays, variants = tuple(update_delays), dict(variants)
    if not update_delays or not variants:
        raise ValueError(f"update_delays={update_delays!r}, variants={variants!r} are not allowed: give at least one "
                         "update delay and one variant")
    cells = []
    for d_u in update_delays:
        cells.append(dict(update_delay=d_u, mode="none"))
        if plus1:
            cells.append(dict(update_delay=d_u, mode="plus1"))
        cells += [dict(update_delay=d_u, mode="smart", filter_threshold=th) for th in variants.values()]
    df = run_cells(base, cells, seeds, client=client, cache=cache)
    names = {v: k for k, v in variants.items()}
    df["variant"] = [names[r.filter_threshold] if r.mode == "smart" else
                     ("NoRM" if r.mode == "none" else "NoRM + 1 scheduler") for r in df.itertuples()]
    _gains(df, ["update_delay"], "none", "")
    if plus1:
        _gains(df, ["update_delay"], "plus1", "_vs_plus1")
    return df


def _summary_point(config: RMinerConfig) -> dict:
    """mode_summaries' point: the headline numbers of one run."""
    return run(config, record_series=False).summary()


def mode_summaries(base: RMinerConfig, modes=("none", "safe", "smart"), *, client=None,
                   cache=None) -> pd.DataFrame:
    """One row per mode (the index) on ``base``: :meth:`RMinerResult.summary`'s headline numbers.
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    df = run_grid(_summary_point, base, {"mode": list(modes)}, client=client, cache=cache)
    return df.set_index("mode")[list(SUMMARY_COLUMNS)].rename_axis(None)


def node_utilisation(base: RMinerConfig, modes=("none", "safe", "smart")) -> dict:
    """Fig. 11: per mode, (times, mean, standard deviation) of per-node CPU utilisation over the run."""
    # a loop, not run_grid: it collects each run's series (arrays for a figure), not scalar metrics
    return {m: run(base.replace(mode=m)).series["node_util"] for m in modes}


@dataclass
class Timeline:
    """CSV free vs scheduler 0's view of one machine over time (Fig. 3 of the paper)."""

    times: np.ndarray
    csv_free: np.ndarray
    view_free: np.ndarray
    syncs: np.ndarray
    releases: np.ndarray
    machine: int
    capacity: int
    horizon: float


class _TimelineProbe:
    def __init__(self, model: RMinerModel, machine: int):
        self.model, self.m = model, machine
        self.rows, self.syncs, self.releases = [], [], []

    def record(self, t: float) -> None:
        csv = self.model.csv
        led = csv.ledger
        self.rows.append((t, int(led.capacity[self.m, 0] - led.allocated[self.m, 0]),
                          int(csv.views[0].free[self.m, 0])))

    def on_release(self, task, t):
        if task.machine == self.m:
            self.releases.append(t)
            self.record(t)

    def on_commit(self, task, t):
        if task.machine == self.m:
            self.record(t)

    def on_sync(self, view, t):
        if view is self.model.csv.views[0]:
            self.syncs.append(t)
            self.record(t)


def stale_view_timeline(config: RMinerConfig, machine: int = 0) -> Timeline:
    """Record, on one machine, the CSV's free CPU and what scheduler 0's local view shows."""
    model = RMinerModel(config.replace(mode="none", view_refresh="synchronous"), record_series=False)
    model.start()  # the views exist from the start on
    probe = _TimelineProbe(model, machine)
    model.csv.subscribe(probe)
    probe.record(0.0)
    model.run_until(config.horizon)
    t, c, v = (np.array(x) for x in zip(*probe.rows))
    return Timeline(t, c, v, np.array(probe.syncs), np.array(probe.releases), machine,
                    int(model.csv.ledger.capacity[machine, 0]), config.horizon)
