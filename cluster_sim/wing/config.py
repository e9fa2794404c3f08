"""``WingDepsConfig``: one experiment of Lab 04 (a synthetic lake and Wing's pipeline over it).

A run generates a lake (:class:`~cluster_sim.wing.lake.LakeConfig` from the lake fields), then
runs what Wing runs on its two logs: the single-hop self-join within a window ``T``
(``window_days``), Table 1's heuristics, the §3 predictor at threshold ``tr`` (trained on week
``train_week``, tested on the next), and Owl's aggregate value with the multi-hop window ω
(``omega_days``) over the jobs whose window the log covers.

The presets keep the paper's ``T`` (30 days), ω (a week) and ``tr`` (20%) and shrink the lake:
three weeks (so a weekly template runs three times, the fewest Table 1 calls recurring) of 40
jobs a day at ``ci``, 200 at ``default`` (a panel redraws in about a second) and 2,000 at
``paper`` (a twentieth of the paper's 40k a day: valuing a paper-scale week with ω took the
paper's own pipeline about a day).

Example
-------
>>> WingDepsConfig.ci().lake_config().jobs_per_day
40
>>> WingDepsConfig.default().replace(omega_days=21.0)
Traceback (most recent call last):
...
ValueError: omega_days=21.0 must be smaller than the lake's days=21: only jobs ending at least ω before the log ends are valued
>>> WingDepsConfig(days=63, jobs_per_day=5_000)
Traceback (most recent call last):
...
ValueError: WingDepsConfig would create about 315,000 jobs (days × jobs_per_day = 63 × 5000), more than max_jobs=60,000 (about 1,016 s of run time, and memory to match): lower days, jobs_per_day; or raise max_jobs on purpose

The memory a run holds grows faster than its jobs: Algorithm 1's closure holds every (ancestor,
descendant) pair within ω, and the pairs a job has grow with the jobs a window holds. A config is
refused when that estimate is over ``max_memory_gib`` (:meth:`WingDepsConfig.work` says what was
measured):

>>> WingDepsConfig.ci().replace(jobs_per_day=5_000, max_jobs=200_000)
Traceback (most recent call last):
...
ValueError: WingDepsConfig would need about 93.7 GiB of memory (the lake 0.7 GiB + 170 bytes x 587,458,502 (ancestor, descendant) pairs within ω = 105,000 jobs x 5595 pairs a job, from jobs_per_day 5000, omega_days 7, orgs 4, cross_org_share 0.3), more than max_memory_gib=8 GiB: lower days, jobs_per_day, omega_days, cross_org_share, downloads_per_job or raise orgs; or raise max_memory_gib on purpose (on a machine with the memory)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, Work, count, field_of, param
from .lake import GIB, PRIORITIES, ROW_BYTES, LakeConfig, closure_pairs_per_job, lake_rows
from .provenance import DAY

#: peak bytes per closure pair of Lab 04's run (Algorithm 1's doubling, its joins built a slice at a time:
#: ``multihop.JOIN_SLICE_ROWS``), beyond the lake's: measured 130-165 (a slice included) at 2.4M, 3.4M,
#: 3.7M, 4.0M and 14.6M pairs (0.6, 0.7, 0.7, 0.8 and 2.1 GiB peak: 700 to 3,000 jobs a day)
PAIR_BYTES = 170.0

WEEK_DAYS = 7


@dataclass(frozen=True)
class WingDepsConfig(Config):
    """Lab 04: Wing's pipeline (single hop, Table 1, the §3 predictor, Owl's value) on a synthetic lake."""

    # the lake: LakeConfig's fields a lab varies, inherited with only what differs restated (the
    # others keep LakeConfig's defaults: lake_config())
    days: int = field_of(LakeConfig, "days", 21, lo=14, widget=False, label="Days simulated", unit="days",
                         doc="days of history (at least two weeks: the predictor trains on one week and tests on the "
                             "next)")
    jobs_per_day: int = field_of(LakeConfig, "jobs_per_day", 200, step=10, slider=(20, 300),
                                   label="Jobs per day")
    orgs: int = field_of(LakeConfig, "orgs", widget=False)
    users_per_org: int = field_of(LakeConfig, "users_per_org")
    recurring_share: float = field_of(LakeConfig, "recurring_share", slider=(0.1, 1.0),
                                      label="Recurring jobs", unit="share")
    cross_org_share: float = field_of(LakeConfig, "cross_org_share", label="Cross-org inputs",
                                      unit="share")
    polling_share: float = field_of(LakeConfig, "polling_share", widget=False)
    overwrite_share: float = field_of(LakeConfig, "overwrite_share", widget=False)
    priorities: str = field_of(LakeConfig, "priorities", widget=False)
    inversion_share: float = field_of(LakeConfig, "inversion_share", widget=False)
    downloads_per_job: float = field_of(LakeConfig, "downloads_per_job", widget=False)
    zipf_s: float = field_of(LakeConfig, "zipf_s", widget=False)
    # Wing's pipeline
    window_days: float = param(30.0, lo=0.25, hi=90.0, step=0.25, slider=(0.25, 30.0),
                               label='Single-hop window T', unit='days', doc="T: the single-hop time window, a write at most T days before the read (the paper: 30)")
    omega_days: float = param(7.0, lo=0.25, hi=62.0, step=0.25, slider=(0.25, 10.0),
                              label='Multi-hop window ω', unit='days', doc="ω: the multi-hop window, downstream jobs submitted at most ω days after a job ends (the paper: 7)")
    tr: float = param(20.0, lo=0.0, hi=100.0, step=5.0,
                      label='Prediction threshold tr', unit='% of jobs', doc="T1's threshold in %: predict a downstream job if at least tr% of the upstream template's jobs had one (the paper: 20)")
    train_week: int = param(0, lo=0, hi=7, widget=False, doc="the week the predictor trains on (it is tested on the next)")
    seed: int = field_of(LakeConfig, "seed")
    max_jobs: int = param(60_000, lo=100, hi=10_000_000, widget=False,
                          doc="refuse a lake with more jobs than this (raise it on purpose for a bigger run)")
    max_memory_gib: float = field_of(LakeConfig, "max_memory_gib")

    WORK_CAP = "max_jobs"
    MEMORY_CAP = "max_memory_gib"

    def validate(self) -> None:
        if self.omega_days >= self.days:
            raise ValueError(f"omega_days={self.omega_days!r} must be smaller than the lake's days={self.days!r}: "
                             "only jobs ending at least ω before the log ends are valued")
        if (self.train_week + 2) * WEEK_DAYS > self.days:
            raise ValueError(f"train_week={self.train_week!r} needs weeks {self.train_week} and {self.train_week + 1} "
                             f"(days 0..{(self.train_week + 2) * WEEK_DAYS}), but the lake has days={self.days!r}")

    def work(self) -> Work:
        """Jobs, a rough time, and the memory the run holds at its peak: the lake (``lake.ROW_BYTES`` a
        ProvRepo row) and Algorithm 1's closure, ``PAIR_BYTES`` a pair, its pairs estimated from the
        lake's size and sharing by :func:`~cluster_sim.wing.lake.closure_pairs_per_job`.

        Measured on the lakes before round 8 (peak RSS beyond the interpreter's 0.17 GiB, seed 0, ω a week,
        estimates of then): 700 jobs a day at
        ``ci``'s four organisations, 2.4M pairs, 0.4 GiB (estimated 0.6); 1,000 jobs a day there, 4.0M
        pairs, 0.6 GiB (estimated 1.2); 2,000 jobs a day there, 12.7M pairs, 1.5 GiB (estimated 4.9);
        ``paper()``, 2,000 jobs a day at 30 organisations, 3.7M pairs,
        0.6 GiB (estimated 2.3: its pairs vary 2.4x over seeds); 3,000 jobs a day at 30 organisations,
        14.6M pairs, 1.9 GiB (estimated 5.0). On round 8's lakes (pairs counted, see ``lake.PAIRS_SCALE``):
        5,000 jobs a day at ``ci``'s four organisations held 336M pairs (estimated 587M, 93.7 GiB);
        ``paper()`` is estimated at 6.8 GiB (41M pairs, 983 a job; lakes of 1,500 jobs a day at 30
        organisations held 213 and 253 pairs a job, 5,000 a day 1,401-2,411). Two weeks of the paper's 40,000 jobs a
        day at 150 organisations, ω a week, would need about 870 GiB (5.5 billion pairs, extrapolated).
        """
        jobs = self.days * self.jobs_per_day
        # measured on the reference 2-core machine: about 0.12 ms a job, plus the closure within ω,
        # which grows faster than linearly with the jobs a window holds (long chains through time)
        per_window = self.jobs_per_day * self.omega_days / 4000.0
        seconds = 1.2e-4 * jobs * (1.0 + per_window ** 1.5)
        lake = ROW_BYTES * lake_rows(jobs, downloads_per_job=self.downloads_per_job)
        per_job = closure_pairs_per_job(self.jobs_per_day, self.omega_days, self.orgs, self.cross_org_share)
        pairs = jobs * per_job
        formula = (f"the lake {lake / GIB:.1f} GiB + {PAIR_BYTES:g} bytes x {count(pairs)} (ancestor, descendant) "
                   f"pairs within ω = {count(jobs)} jobs x {per_job:.0f} pairs a job, from jobs_per_day "
                   f"{self.jobs_per_day}, omega_days {self.omega_days:g}, orgs {self.orgs}, cross_org_share "
                   f"{self.cross_org_share:g}")
        return Work(jobs, "jobs", f"days × jobs_per_day = {self.days} × {self.jobs_per_day}",
                    up=("days", "jobs_per_day"), down=(), seconds=seconds,
                    memory=lake + PAIR_BYTES * pairs, memory_formula=formula,
                    memory_up=("days", "jobs_per_day", "omega_days", "cross_org_share", "downloads_per_job"),
                    memory_down=("orgs",))

    @classmethod
    def ci(cls):
        return cls(days=21, jobs_per_day=40, orgs=4, users_per_org=3)

    @classmethod
    def default(cls):
        return cls(days=21, jobs_per_day=200, orgs=6, users_per_org=4)

    @classmethod
    def paper(cls):
        """The paper's T, ω and tr on three weeks of 2,000 jobs a day (a twentieth of its cluster's daily jobs)."""
        return cls(days=21, jobs_per_day=2_000, orgs=30, users_per_org=6)

    # ---- derived ---------------------------------------------------------------------------------
    @property
    def window(self) -> float:
        """T in seconds."""
        return self.window_days * DAY

    @property
    def omega(self) -> float:
        """ω in seconds."""
        return self.omega_days * DAY

    @property
    def horizon(self) -> float:
        """The end of the log, in seconds."""
        return self.days * DAY

    def lake_config(self) -> LakeConfig:
        """The generator's config for the same lake: the fields the two share, the others at LakeConfig's
        defaults."""
        return LakeConfig.from_config(self)
