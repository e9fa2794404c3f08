"""``WingConfig``: one experiment of Lab 05 (value-aware scheduling of a synthetic lake on a YARN-like cluster).

A run generates a lake (:class:`~cluster_sim.wing.lake.LakeConfig` from the lake fields) of
``history_days`` (Wing's profiles: the paper's first two weeks), ``run_days`` that are simulated (the
paper's third week, shortened) and a week after them in which the run's outputs are still downloaded
(value is counted up to a week after completion, §6.3). The run's jobs are replayed on a
:class:`~cluster_sim.engine.CapacityClusterModel` whose capacity is ``capacity`` times what the
workload needs (each queue its own peak in the trace), ordered by ``policy``.

Example
-------
>>> WingConfig.ci().lake_config().days                  # 14 days of history + 2 run + 8 of downloads
24
>>> WingConfig.ci().replace(policy="fifo")
Traceback (most recent call last):
...
ValueError: WingConfig.policy='fifo' is not allowed: choose one of 'prio', 'wing_direct', 'wing_agg', 'wing_mil', 'oracle_wing_direct', 'oracle_wing_agg' (how each queue orders its jobs: user priority (PRIO), predicted job-local or aggregate value efficiency (Wing-Direct, Wing-Agg), Millennium with Wing's value functions (Wing-MIL), or the true values (Oracles))
>>> try:
...     WingConfig(jobs_per_day=20_000)
... except ValueError as e:
...     print(str(e)[:98])
WingConfig would create about 480,000 jobs (days × jobs_per_day = (14 + 2 + 8) × 20000), more than
"""

from __future__ import annotations

from dataclasses import dataclass

from ...config import Config, Work, count, param, seed_param
from ..lake import GIB, PRIORITIES, ROW_BYTES, LakeConfig, closure_pairs_per_job, lake_rows
from ..provenance import DAY

POLICIES = ("prio", "wing_direct", "wing_agg", "wing_mil", "oracle_wing_direct", "oracle_wing_agg")
POLICY_NAMES = {"prio": "PRIO", "wing_direct": "Wing-Direct", "wing_agg": "Wing-Agg", "wing_mil": "Wing-MIL",
                "oracle_wing_direct": "Oracle Wing-Direct", "oracle_wing_agg": "Oracle Wing-Agg"}
QUEUE_MODES = ("org", "cluster")
#: what capacity is a share of: each organisation's own peak use in the trace (ours), or the paper's cluster,
#: whose job requests peak at about 60 % of it (§7.3, Fig. 7)
CAPACITY_BASES = ("peaks", "paper")
#: the paper's job-requested use peaks at about this share of its cluster (§7.3: "these requests peak at around 60%")
PAPER_REQUEST_PEAK = 0.6
#: value is counted up to a week after completion (§6.3), so the lake runs on this long after the run
VALUE_DAYS = 7
#: the lake's last day: outputs of a job ending after the run's last submission are downloaded a week after it
TAIL_DAYS = VALUE_DAYS + 1
#: Algorithm 1's loop counter at which every lake converges (2**20 hops): "until it converges"
CONVERGED = 20
#: peak bytes per closure pair of Owl's aggregates (``owl_closure`` holds only the pairs still to be read, 16
#: bytes each, and builds a level in slices): 12.9 traced on 3.7M pairs (tests/wing/test_closure_streamed.py),
#: 15.4 of peak RSS on the 174M pairs of bench/wing.py's 5,000 jobs a day (42M held at once; holding every
#: pair took 37-43 bytes a pair, 6.3 GiB there)
CLOSURE_PAIR_BYTES = 20.0
#: the same with ``iterations`` below convergence (``owl_within_hops`` keeps each hop count's pairs:
#: up to 3.4 times the closure's at 1,000 jobs a day, 24 bytes each, and their concatenation)
WITHIN_HOPS_PAIR_BYTES = 200.0


@dataclass(frozen=True)
class WingConfig(Config):
    """Lab 05: PRIO, Wing-Direct, Wing-Agg, Wing-MIL and the Oracles on a YARN-like cluster (Wing §5-§7)."""

    # the experiment
    policy: str = param("wing_agg", choices=POLICIES,
                        label='Queue order', doc="how each queue orders its jobs: user priority (PRIO), predicted job-local or aggregate value "
                            "efficiency (Wing-Direct, Wing-Agg), Millennium with Wing's value functions (Wing-MIL), "
                            "or the true values (Oracles)")
    capacity: float = param(0.2, lo=0.05, hi=1.0, step=0.05,
                            label='Cluster capacity', unit='share of need', doc="cluster capacity as a share of what the workload needs (capacity_basis 'peaks': 1 = each "
                                "queue holds its peak in the trace, so every job starts when it is submitted)")
    capacity_basis: str = param("peaks", choices=CAPACITY_BASES,
                                label='Capacity measured against', doc="what capacity is a share of: each organisation's own peak use in the trace "
                                    "('peaks'), or the paper's cluster ('paper': the trace's cluster-wide peak of "
                                    "requests is 60% of it, and each organisation's queue a share in proportion to its "
                                    "peak)")
    queues: str = param("org", choices=QUEUE_MODES,
                        label='Queues', doc="one queue per organisation with hard boundaries (§6), or one cluster-wide queue (§7.3)")
    backfill: bool = param(False,
                           label='Backfill', doc="let a job start ahead of the queue's first job when that job's gang does not fit yet "
                               "(False: the first job keeps the room it waits for, as YARN reserves room for the "
                               "request at the head of a queue, and a gang is admitted only when it fits whole)")
    misprediction: float = param(1.0, lo=1.0, hi=100.0, step=0.05, slider=(1.0, 10.0),
                                 label='Mis-prediction factor s', unit='×', doc="s: each job's value efficiency, as the Wing policies see it, times a random factor "
                                     "in [1/s, s] (1 = no error; the paper's sensitivity study, §7.2)")
    iterations: int = param(CONVERGED, lo=0, hi=CONVERGED, widget=False,
                            doc="iterations of Algorithm 1 behind Wing-Agg's aggregate values: 0 = job-local value (no "
                                "hop: the paper's '0 iterations', Wing-Direct's key), i = paths of up to 2**i hops "
                                "(Algorithm 1's loop counter), 20 = until it converges")
    seed: int = seed_param()  # the lake's and the mis-prediction factors' draws
    # the lake
    jobs_per_day: int = param(150, lo=20, hi=50_000, step=10, slider=(60, 300),
                              label='Jobs per day', doc="jobs submitted per day (the paper's cluster: about 40k)")
    orgs: int = param(3, lo=1, hi=200, widget=False, doc="organisations, each with its own queues (the paper: 150+)")
    users_per_org: int = param(4, lo=1, hi=100, widget=False, doc="users in each organisation")
    max_containers: int = param(8, lo=1, hi=500, widget=False,
                                doc="the largest job, in containers (a reduced-scale lake keeps its jobs small beside its "
                                    "queues, as Cosmos's are beside its organisations')")
    runtime_scale: float = param(4.0, lo=0.1, hi=10.0, step=0.1, widget=False,
                                 doc="multiplies the lake's job runtimes (longer jobs: a smoother, heavier load)")
    polling_share: float = param(0.5, lo=0.0, hi=1.0, step=0.05, widget=False,
                                 doc="share of recurring templates (below the first layer) that wait for their input")
    priorities: str = param("independent", choices=PRIORITIES,
                            label='User priorities', doc="how users set template priorities: 'independent' of the dependency DAG (the paper's "
                                "setting: Obs. 2's inversions within a queue), or 'rise_upstream' (a producer gets its "
                                "highest consumer's priority, but for a share of inversions: PRIO then knows the DAG)")
    history_days: int = param(14, lo=7, hi=28, widget=False,
                              doc="days of history Wing's profiles learn from (the paper: two weeks)")
    run_days: int = param(2, lo=1, hi=3, widget=False,
                          doc="days that are simulated (the paper: a week; the run plus a week of downloads must fit "
                              "the engine's horizon of 1e6 s)")
    omega_days: float = param(7.0, lo=0.25, hi=7.0, step=0.25, widget=False,
                              doc="ω: the multi-hop window of the aggregate value, in days (the paper: 7)")
    slots_per_machine: int = param(4, lo=1, hi=1024, widget=False, doc="containers a machine holds")
    max_jobs: int = param(60_000, lo=100, hi=10_000_000, widget=False,
                          doc="refuse a lake with more jobs than this (raise it on purpose for a bigger run)")
    max_memory_gib: float = param(8.0, lo=0.25, hi=4096.0, widget=False,
                                  doc="refuse a run estimated to need more memory than this, in GiB (leaves room on a "
                                      "24 GiB machine; raise it on purpose on a bigger one)")

    WORK_CAP = "max_jobs"
    MEMORY_CAP = "max_memory_gib"
    # the default preset is the fields' defaults (Config.default): two weeks of history and two simulated days of
    # 150 jobs (four users per organisation), where a policy or capacity redraws in about a second

    @classmethod
    def ci(cls):
        """Two weeks of history and two simulated days of 150 jobs (about 300 simulated jobs)."""
        return cls(jobs_per_day=150, users_per_org=3)

    @classmethod
    def paper(cls):
        """Three simulated days of 2,000 jobs (a twentieth of the paper's 40k a day; its run was a week)."""
        return cls(jobs_per_day=2_000, orgs=30, users_per_org=6, run_days=3, max_jobs=100_000)

    def validate(self) -> None:
        if self.omega_days > self.history_days / 2:
            raise ValueError(f"omega_days={self.omega_days!r} must be at most half of history_days={self.history_days!r}: "
                             "the profiles learn from history jobs whose window ω the history covers")

    def work(self) -> Work:
        """Jobs, a rough time, and the memory the preparation holds at its peak: the lake (``lake.ROW_BYTES``
        a ProvRepo row) and Owl's closure over the history (or over the run and the week after it, if
        longer), its pairs estimated by :func:`~cluster_sim.wing.lake.closure_pairs_per_job`.

        Measured: the history's closure at the bench's 5,000 jobs a day (``bench/wing.py --part
        scheduling``, 174M pairs) peaked at 3.0 GiB of RSS with the lake's rows loaded (estimated 3.1);
        on the lakes before round 8; on round 8's it is estimated at 3.6 GiB (170M pairs).
        ``paper()`` is estimated at 0.7 GiB. The paper's 40,000 jobs a day at 30 organisations (the
        bench's) is estimated at 202 GiB and refused (10.7 billion pairs over two weeks of history; counted
        from sampled jobs without building it, 9.3 billion: see ``lake.PAIRS_SCALE``). At ω a day and 7 days
        of history it is estimated at 12.4 GiB and ran in 2.1 GiB (bench/wing.py's docstring).
        """
        jobs = self.days * self.jobs_per_day
        # the lake and Wing's pipeline (about 0.15 ms a job, plus the closure within ω, which grows faster than
        # the jobs a window holds) and the simulation of the run (about 2 ms a simulated job at tight capacity)
        per_window = self.jobs_per_day * self.omega_days / 3000.0
        seconds = 1.5e-4 * jobs * (1.0 + per_window ** 1.5) + 2e-3 * self.run_days * self.jobs_per_day
        lake = ROW_BYTES * lake_rows(jobs)
        closed_days = max(self.history_days, self.run_days + TAIL_DAYS)  # the two closures run one after the other
        per_job = closure_pairs_per_job(self.jobs_per_day, self.omega_days, self.orgs)
        pairs = closed_days * self.jobs_per_day * per_job
        per_pair = CLOSURE_PAIR_BYTES if self.iterations == CONVERGED else WITHIN_HOPS_PAIR_BYTES
        formula = (f"the lake {lake / GIB:.1f} GiB + {per_pair:g} bytes x {count(pairs)} (ancestor, descendant) pairs "
                   f"within ω = {closed_days} days x {self.jobs_per_day} jobs a day x {per_job:.0f} pairs a job, from "
                   f"jobs_per_day {self.jobs_per_day}, omega_days {self.omega_days:g}, orgs {self.orgs}"
                   + ("" if self.iterations == CONVERGED else f", iterations {self.iterations} (every hop count's pairs)"))
        return Work(jobs, "jobs", f"days × jobs_per_day = ({self.history_days} + {self.run_days} + {TAIL_DAYS}) × "
                    f"{self.jobs_per_day}", up=("jobs_per_day", "run_days", "history_days"), down=(), seconds=seconds,
                    memory=lake + per_pair * pairs, memory_formula=formula,
                    memory_up=("jobs_per_day", "history_days", "omega_days"), memory_down=("orgs",))

    # ---- derived ---------------------------------------------------------------------------------
    @property
    def days(self) -> int:
        """The lake's length: history, the run, and the week its outputs are downloaded in (and a day for runtimes)."""
        return self.history_days + self.run_days + TAIL_DAYS

    @property
    def run_start(self) -> float:
        return self.history_days * DAY

    @property
    def run_end(self) -> float:
        return (self.history_days + self.run_days) * DAY

    @property
    def omega(self) -> float:
        return self.omega_days * DAY

    def lake_config(self) -> LakeConfig:
        """The generator's config for this experiment's lake (its other fields at LakeConfig's defaults)."""
        return LakeConfig(days=self.days, jobs_per_day=self.jobs_per_day, orgs=self.orgs,
                          users_per_org=self.users_per_org, polling_share=self.polling_share,
                          max_containers=self.max_containers, runtime_scale=self.runtime_scale,
                          priorities=self.priorities, seed=self.seed,
                          max_memory_gib=self.max_memory_gib)

    def lake_key(self) -> tuple:
        """What the lake and Wing's profiles depend on (a run with another policy or capacity reuses them)."""
        return (self.lake_config(), self.history_days, self.run_days, self.omega_days)
