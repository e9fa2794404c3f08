"""The paper's experiments in miniature: Fig. 4 (measured vs theoretical shadow ratio), Figs. 10-14
(NoRM / SafeRM / SmartRM over schedulers and load), and the stale-view timeline of Fig. 3.

Each function returns a pandas DataFrame (one row per run) so notebooks can show and plot it.

Example
-------
>>> df = shadow_sweep(RMinerConfig.ci().replace(horizon=5.0), update_delays=(0.5,), durations=(5.0,))
>>> list(df.columns)[:4]
['update_delay', 'mean_task_duration', 'seed', 'measured']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .config import RMinerConfig
from .model import RMinerModel
from .simulation import run

# Figs. 10, 12, 13, 14 of the paper, as read from the text (§4.2-4.5): the ranges it reports.
PAPER_REPORTS = {
    "SafeRM utilisation gain over NoRM": "+1.5% to +4%",
    "SmartRM utilisation gain over NoRM": "+1.6% to +5.8%",
    "shadow resources used, SafeRM": "26% to 82%",
    "shadow resources used, SmartRM": "58% to 112%",
    "throughput gain, SafeRM": "up to +10%",
    "throughput gain, SmartRM": "up to +28%",
    "job wait time reduction": "up to 25.4% (8 sched.), 10.4% (16 sched.)",
    "conflict increase": "SafeRM +0.5% avg (<3% worst), SmartRM +0.73% avg (3% worst)",
    "shadow ratio (theory, l=4-5 s, d_u=0.3-1 s)": "3% to 12.5%",
}


def shadow_sweep(base: RMinerConfig, update_delays=(0.25, 0.5, 1.0), durations=(2.0, 5.0, 10.0, 20.0),
                 seeds=(0,)) -> pd.DataFrame:
    """Fig. 4: measured shadow ratio vs ``d_u / 2l`` over update delays and mean durations (NoRM)."""
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


def compare_modes(base: RMinerConfig, schedulers=(8, 16), loads=(1.0, 1.5, 2.0),
                  modes=("none", "safe", "smart")) -> pd.DataFrame:
    """Figs. 10-14: one run per (schedulers, load, mode); gains relative to NoRM of the same cell."""
    rows = []
    for k in schedulers:
        for load in loads:
            for mode in modes:
                r = run(base.replace(schedulers=k, load=load, mode=mode), record_series=False)
                rows.append(dict(schedulers=k, load=load, mode=mode, cpu_utilization=r.cpu_utilization,
                                 throughput=r.throughput, mean_job_wait=r.mean_job_wait,
                                 conflict_rate=r.conflict_rate, rm_conflict_rate=r.rm_conflict_rate,
                                 shadow_ratio=r.shadow_ratio, shadow_used_share=r.shadow_used_share,
                                 rm_killed_share=r.rm_killed_share, rm_tasks=r.counts.get("rm_placed", 0)))
    df = pd.DataFrame(rows)
    ref = df[df["mode"] == "none"].set_index(["schedulers", "load"])
    key = list(zip(df["schedulers"], df["load"]))
    df["util_gain"] = df["cpu_utilization"].to_numpy() - ref.loc[key, "cpu_utilization"].to_numpy()
    df["throughput_gain"] = df["throughput"].to_numpy() / ref.loc[key, "throughput"].to_numpy() - 1
    df["wait_reduction"] = 1 - df["mean_job_wait"].to_numpy() / ref.loc[key, "mean_job_wait"].to_numpy()
    df["conflict_increase"] = df["conflict_rate"].to_numpy() - ref.loc[key, "conflict_rate"].to_numpy()
    return df


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
    probe = _TimelineProbe(model, machine)
    model.csv.release_listeners.append(probe.on_release)
    model.csv.commit_listeners.append(probe.on_commit)
    model.csv.sync_listeners.append(probe.on_sync)
    probe.record(0.0)
    model.run_until(config.horizon)
    t, c, v = (np.array(x) for x in zip(*probe.rows))
    return Timeline(t, c, v, np.array(probe.syncs), np.array(probe.releases), machine,
                    int(model.csv.ledger.capacity[machine, 0]), config.horizon)
