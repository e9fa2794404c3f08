"""``ShaperConfig``: one random SCOPE-like job, a token-limited virtual cluster and a synthetic fleet.

One config feeds the notebook's ``parameters`` cell, its panels and every experiment of
:mod:`cluster_sim.shaper.experiments`. It estimates the work a run creates before anything runs
(:meth:`ShaperConfig.work`, what a panel redraws: the job twice on Mesa's clock) and refuses a
config whose job, cluster stream or fleet would simulate more vertices than ``max_vertex_runs``.

Example
-------
>>> cfg = ShaperConfig.default()
>>> w = cfg.work()
>>> w.unit, w.amount == 3 * cfg.job_vertices(), w.seconds < 1
('vertex runs', True, True)
>>> ShaperConfig.ci().replace(cluster_jobs=500, stages=60, max_vertices=2000)
Traceback (most recent call last):
...
ValueError: ShaperConfig's cluster stream would create about 97,930,000 vertex runs (500 jobs x 48,965 vertices (this seed's job) x 4 runs (two replays for the natural peak, shaping off and on on Mesa's clock)), more than max_vertex_runs=5,000,000 (about 6,121 s of run time, and memory to match): lower cluster_jobs, stages, max_vertices, spools or raise decay; or raise max_vertex_runs on purpose
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from cluster_sim.config import Config, Work, param, seed_param

from .examples import random_stage_graph
from .execution import MODES
from .fleet import CLUSTERS, expected_fleet_vertices

#: wall time per vertex of ``run_job`` (the job replayed once for its natural peak, then run twice
#: on Mesa's clock), measured on the reference 2-core machine: 175-325 us over 600-25,000 vertices
SECONDS_PER_JOB_VERTEX = 250e-6
#: wall time per vertex run of the pure replay (the fleet: natural peak, shaping off, shaping on):
#: 6-11 us measured
SECONDS_PER_REPLAYED_VERTEX = 8e-6
#: run + plot + PNG of a panel redraw that simulates almost nothing
SECONDS_PER_REDRAW = 0.15


@lru_cache(maxsize=4096)
def _job_vertices(seed: int, stages: int, spools: int, max_vertices: int, decay: float) -> int:
    # exactly the graph make_job builds (its first draws from default_rng(seed)); ~1-4 ms
    g = random_stage_graph(np.random.default_rng(seed), stages=stages, spools=spools,
                           max_vertices=max_vertices, decay=decay)
    return g.total_vertices


@dataclass(frozen=True)
class ShaperConfig(Config):
    """One random SCOPE-like job (and a synthetic fleet) run with and without resource shaping."""

    stages: int = param(14, lo=2, hi=60, slider=(2, 40), label='Stages', doc="stages in the random job")
    spools: int = param(3, lo=0, hi=30, label='Spools', doc="stages allowed to feed several consumers (spools)")
    max_vertices: int = param(80, lo=1, hi=2000, step=1, slider=(1, 400), label='Widest stage', unit='vertices', doc="vertices of the widest (first) stages")
    decay: float = param(0.8, lo=0.3, hi=1.0, step=0.05, label='Vertex taper per level', doc="vertex count shrink per stage level (taper)")
    over_allocation: float = param(2.0, lo=0.1, hi=30.0, step=0.1,
                                   label="User's tokens", unit='× natural peak', doc="user's tokens / the job's natural peak (1 = exactly the peak)")
    mode: str = param("conservative", choices=MODES, label='Shaper mode', doc="shaper: off, the paper's conservative, or a variant")
    request_delay: float = param(10.0, lo=0.0, hi=200.0, step=1.0,
                                 label='Re-request delay', unit='s', doc="aggressive mode: seconds until re-requested tokens arrive")
    mean_duration: float = param(10.0, lo=1.0, hi=100.0, step=1.0, label='Mean vertex duration', unit='s', doc="mean vertex duration (s)")
    vertex_sigma: float = param(0.3, lo=0.0, hi=1.5, step=0.05, label='Vertex duration spread σ', doc="lognormal spread of vertex durations in a stage")
    cost_error: float = param(0.0, lo=0.0, hi=1.5, step=0.05,
                              label='Optimizer estimate error σ', doc="lognormal spread of the optimizer's stage-duration estimates (cost-aware mode)")
    progress: float = param(0.3, lo=0.0, hi=1.0, step=0.01, label='Execution point', unit='share of run time', doc="execution point: share of the job's time elapsed")
    cluster_jobs: int = param(12, lo=2, hi=500, slider=(2, 60), label='Jobs in the virtual cluster', doc="jobs arriving at the token-limited virtual cluster")
    cluster_tokens: float = param(1.5, lo=1.0, hi=20.0, step=0.1,
                                  label='Virtual cluster tokens', unit='× largest job', doc="virtual cluster's token capacity / the largest job's tokens")
    fleet_jobs: int = param(30, lo=5, hi=2000, slider=(5, 100), doc="jobs per synthetic cluster")
    fleet_clusters: int = param(3, lo=1, hi=5, doc="synthetic clusters (profiles of the paper's Fig. 4c)")
    fleet_max_width: int = param(1000, lo=2, hi=3000, slider=(2, 1000), doc="cap on a fleet job's widest stage (CI speed)")
    seed: int = seed_param()
    max_vertex_runs: int = param(5_000_000, lo=1, hi=10**9, widget=False,
                                 doc="refuse a config estimated to simulate more vertex runs than this (raise it on purpose)")

    WORK_CAP = "max_vertex_runs"
    #: the fields that make the random job bigger, or smaller as they grow
    JOB_UP = ("stages", "max_vertices", "spools")
    JOB_DOWN = ("decay",)

    def validate(self) -> None:
        if self.spools > max(self.stages - 2, 0):
            raise ValueError(
                f"ShaperConfig.spools={self.spools} is out of range for stages={self.stages}: "
                f"allowed 0 <= spools <= stages - 2 = {max(self.stages - 2, 0)}"
            )
        # the job's own estimate is checked by Config after validate(); the two experiments that
        # multiply it are checked here, against the same cap
        for what, work in (("cluster stream", self.cluster_work()), ("fleet", self.fleet_work())):
            if work.amount > self.max_vertex_runs:
                raise ValueError(
                    f"ShaperConfig's {what} would create {work.describe()}, more than "
                    f"max_vertex_runs={self.max_vertex_runs:,.0f} (about {work.seconds:,.0f} s of run time, and memory "
                    f"to match): {work.advice()}; or raise max_vertex_runs on purpose"
                )

    # ---- the work a run creates --------------------------------------------------------------
    def job_vertices(self) -> int:
        """Vertices of this config's random job (exact: the same graph :func:`make_job` builds)."""
        return _job_vertices(self.seed, self.stages, self.spools, self.max_vertices, float(self.decay))

    def work(self) -> Work:
        """What a panel redraws (``run_job``): the job replayed for its natural peak, then run with
        shaping off and with the config's mode on Mesa's clock (one run when the mode is off)."""
        v = self.job_vertices()
        runs = 2 if self.mode == "off" else 3
        return Work(v * runs, "vertex runs",
                    f"{v:,} vertices (this seed's job) x {runs} runs (natural peak, shaping off"
                    f"{'' if self.mode == 'off' else ', shaping on'})",
                    up=self.JOB_UP, down=self.JOB_DOWN,
                    seconds=SECONDS_PER_REDRAW + v * SECONDS_PER_JOB_VERTEX * (0.6 if self.mode == "off" else 1.0))

    def cluster_work(self) -> Work:
        """``run_cluster``: ``cluster_jobs`` jobs of this shape (other seeds), twice each."""
        v = self.job_vertices()
        n = self.cluster_jobs
        return Work(4 * n * v, "vertex runs",
                    f"{n} jobs x {v:,} vertices (this seed's job) x 4 runs (two replays for the natural peak, "
                    "shaping off and on on Mesa's clock)",
                    up=("cluster_jobs",) + self.JOB_UP, down=self.JOB_DOWN,
                    seconds=n * v * SECONDS_PER_JOB_VERTEX)

    def fleet_work(self) -> Work:
        """``run_fleet``: ``fleet_clusters`` x ``fleet_jobs`` jobs, each replayed three times."""
        profiles = CLUSTERS[: self.fleet_clusters]
        per_job = float(np.mean([expected_fleet_vertices(p, self.fleet_max_width) for p in profiles]))
        jobs = self.fleet_clusters * self.fleet_jobs
        return Work(3 * jobs * per_job, "vertex runs",
                    f"{self.fleet_clusters} clusters x {self.fleet_jobs} jobs x about {per_job:,.0f} vertices "
                    "(expected at this fleet_max_width) x 3 replays",
                    up=("fleet_jobs", "fleet_clusters", "fleet_max_width"), down=(),
                    seconds=3 * jobs * per_job * SECONDS_PER_REPLAYED_VERTEX)

    def describe_work(self) -> str:
        """One line per experiment: its estimated vertex runs and seconds (printed before a long run)."""
        rows = [("the job (run_job, what the panels redraw)", self.work()),
                ("the token-limited cluster (run_cluster)", self.cluster_work()),
                ("the fleet (run_fleet)", self.fleet_work())]
        return "\n".join(f"{name}: {w.describe()}, about {w.seconds:,.1f} s" for name, w in rows)

    # ---- presets -----------------------------------------------------------------------------
    @classmethod
    def ci(cls):
        return cls(stages=12, max_vertices=50, cluster_jobs=8, fleet_jobs=16, fleet_clusters=3, fleet_max_width=300)

    @classmethod
    def default(cls):
        return cls(stages=14, max_vertices=80, fleet_jobs=40, fleet_clusters=5, fleet_max_width=1000)

    @classmethod
    def paper(cls):
        """Five synthetic clusters of 154 jobs each, the size of the paper's §5.2 virtual cluster, with
        the widest stages up to 3,000 vertices; a 20-stage random job of up to 200 vertices a stage (the
        paper gives no job-size distribution; its Fig. 5 job has 12 stages), 40 of them in the
        token-limited cluster. Minutes on a 2-core machine."""
        return cls(stages=20, max_vertices=200, cluster_jobs=40, fleet_jobs=154, fleet_clusters=5,
                   fleet_max_width=3000)
