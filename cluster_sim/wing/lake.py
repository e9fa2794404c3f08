"""A seeded synthetic data lake (§2): organisations, queues, users, job templates, files and downloads.

No public trace has file provenance, so Lab 04 builds one with the structure §2 describes:

* **Organisations** with hierarchical leaf queues (``root.o3.q1``), **users** in each one.
* **Recurring templates** in ``layers`` layers (the template DAG, pipelines of stages): *periodic*
  ones submitted on the clock, *aperiodic* ones at irregular times, and *polling* ones that wait for
  an upstream job to finish and are submitted within 15 minutes of it (Table 1). A template's first
  input comes from the layer above, its others from the ``input_span`` layers above; each later
  layer holds more templates than the one before, and templates prefer popular inputs, so the job
  DAG grows into a few large, bottom-heavy components (Observation 5). An input comes from another
  organisation with probability ``cross_org_share`` (Observation 4), at every number of
  organisations: a template's inputs are different templates, and an input of the reader's own
  organisation that the layers above lack comes from the nearest earlier layer that has one (an
  organisation's first stage, with none earlier, reads uploads instead), never from another
  organisation in its place.
* **Outputs** are either partitioned (a new file per run, ``o2/t17/s0/p41``) or overwritten in
  place (``o2/t17/s1``, a "latest" file), so last-writer-wins matters; a reader of a partitioned
  output reads the latest ``m`` finished partitions, ``m`` its cadence over the upstream's
  (a daily job reads 24 hourly partitions), none finished more than a week before (98% of the
  paper's dependencies are within a week). Some templates keep a state file they read and
  rewrite every run (a chain of dependencies through time); sources read external uploads no job
  wrote (reads before any write).
* **Ad hoc jobs** (one template each) read the latest outputs of recurring templates or a
  previous ad hoc output of the same user; a few *backfill* a partition, rewriting it as a
  second writer.
* **User priorities** (1-10, compared within a queue): with ``priorities="independent"`` (the
  default) each template's is drawn around the queue's level without regard to the DAG, with a
  spread ``priority_sd`` that gives Observation 2's share of templates with a higher-priority
  consumer in their queue; with ``"rise_upstream"`` a producer gets its highest consumer's
  priority but for a share ``inversion_share`` of deliberate inversions (priorities that know the
  DAG, which hands PRIO dependency knowledge the paper's users do not have). Ad hoc priorities
  scatter around the queue's recurring mean.
* **Downloads**: ``downloads_per_job`` on average. A share ``download_floor`` of them is spread
  evenly over every version written (users look at intermediate outputs too); the rest follow a
  popularity rank: each output stream (and each user's ad hoc outputs) gets one, and the r-th gets
  ``C / r**s`` expected downloads per written version (Zipf, s = 1), outputs no template reads
  (reports) more, ad hoc outputs ``adhoc_download_share`` of all downloads (§7.1: recurring jobs
  carry 9x the value of ad hoc ones). They are drawn within a week of the write and before the
  file is overwritten, so each is attributable to one job.

The defaults are calibrated to the paper's published statistics (about 4 dependencies per job,
83% of the value hidden from job-local valuation, Obs. 2's inversions within a queue, ...): see
:mod:`cluster_sim.wing.calibration`.

Times are seconds from the start of day 0. The trace is what happened at full capacity: every
job starts when submitted, reads its inputs then, and writes its outputs when it ends.

Outputs (:class:`Lake`): ``jobs`` (like JobRepo: template, kind, user, org, queue, priority,
submit, start, end, runtime, containers, compute, and ``dep_mode``: a polling job waits for its
inputs, any other fails if one is missing when it is submitted), ``prov`` (like ProvRepo:
``job``, ``file``, ``op``, ``time``), and the generator's ground truth: ``truth`` (the true
single-hop dependencies with their ``lag``, ``mode`` hard or polling, and ``latest``: read from a
file overwritten in place, so an older version would do), ``templates``, ``queues`` (with each
one's share of the compute) and ``downloads`` (each with its true writer).

Example
-------
>>> lake = generate_lake(LakeConfig.ci())
>>> sorted(lake.jobs.columns)[:6]
['compute', 'containers', 'dep_mode', 'end', 'job', 'kind']
>>> sorted(lake.prov["op"].unique())
['download', 'read', 'write']
>>> bool(lake.jobs["kind"].isin(["periodic", "aperiodic", "polling", "adhoc"]).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..config import Config, Work, count, param, seed_param
from .multihop import show
from .provenance import DAY, HOUR

MINUTE = 60.0
CADENCES = (HOUR, 6 * HOUR, DAY, 7 * DAY)  # hourly, every 6 hours, daily (the most common: §3.2), weekly
CADENCE_WEIGHTS = (0.12, 0.18, 0.55, 0.15)
LAYER_GROWTH = 1.4  # each layer of the template DAG has this many times the jobs of the one above
MAX_PARTITIONS = 24  # a reader reads at most this many partitions of one input
READ_HORIZON = 7 * DAY  # and none finished longer ago than this (98% of the paper's dependencies are within a week)
DOWNLOAD_HORIZON = 7 * DAY  # downloads happen within a week of the write (value counted a week: §6.3)
LEAF_BIAS = 4.0  # outputs no recurring template reads are this much more downloaded (reports)
STATEFUL_SHARE = 0.05  # templates that read back their own state file each run
POLL_DELAY = (30.0, 15 * MINUTE)  # polling jobs are submitted this long after their trigger ends (Table 1)
ROLLING_SHARE = 0.5  # inputs read one period at a time; the others read a rolling window of several
ROLLING_WINDOWS = (2, 3, 4, 6, 12)
ADHOC_WINDOWS = ((1, 2, 4, 8), (0.6, 0.15, 0.15, 0.1))  # partitions an ad hoc job reads of one input
CROSS_READER_P = 0.75  # a cross-org reader takes each input from another organisation with this probability
KINDS = ("periodic", "aperiodic", "polling", "adhoc")
PRIORITIES = ("independent", "rise_upstream")
#: the random stream of the template priorities: a lake differs between the priority rules in its priorities only
PRIORITY_STREAM = 0x9121

# ---- the memory a lake and its closure hold, estimated before anything runs ------------------------
# Measured with resource.getrusage (peak RSS of a fresh process, the interpreter's 0.17 GiB apart) on
# the reference 2-core machine; each estimate is an envelope of what was measured, not a mean.
#: the lake: ProvRepo rows per job are the writes and external reads (ROWS_PER_JOB_BASE), the inputs
#: read and the downloads; 6.8-8.8 rows a job measured at the defaults (4.5 inputs, 2 downloads)
ROWS_PER_JOB_BASE = 2.5
#: peak bytes per ProvRepo row while a lake is generated: 358 at 5,000 jobs a day, 349 at 20,000
#: (21 days, 30 organisations: 0.25 and 1.1 GiB), 512 on LakeConfig.paper()'s two days (0.21 GiB)
ROW_BYTES = 450.0
#: the closure's (ancestor, descendant) pairs within ω per job (owl_closure counted them), fitted again on
#: round 8's lakes (a template's inputs distinct, inputs_per_template 3.5): 248 closures on 83 lakes of 21
#: days (40-10,000 jobs a day, 1-150 organisations, cross_org_share 0-1, ω 1, 3 and 7 days, seeds 0-2; the
#: largest 347M pairs, 3,307 a job; 10,000 a day at 30 organisations with ω a week passed 6 GiB of RSS and was
#: stopped; summarised in docs/performance.md)
#: pairs/job = exp(-3.14) * jobs_per_day**0.99 * ω_days**1.31 / orgs**(0.59 (1 - cross_org_share)),
#: least squares in log space on the lakes of 150 jobs a day or more (the 40-a-day lakes flatten the slope; the
#: memory cap is about the large ones). The slope in jobs a day grows with the size (at 30 organisations, ω 3
#: days, 291 pairs a job at 5,000 a day and 798 at 10,000; at 150, ω a week, 301 and 1,281): beyond 10,000 a
#: day the estimate is an extrapolation. Checked at 40,000 a day (round 9, 30 organisations, two weeks of history,
#: seed 0; bench/wing.py --part window-pairs, 10,000 sampled jobs): 191, 1,291, 5,325 and 17,302 pairs a job at
#: ω 1, 2, 3.5 and 7 days, 0.13x-0.91x of the estimate (the fit alone is 3.5x short at a week): still within it.
#: The fit is within 0.29x-3.86x of every measured lake (the worst: 2,411 pairs a job at 5,000 jobs a day,
#: 30 organisations, cross_org_share 0.3, ω a week, seed 1: 1,441 and 1,401 at seeds 0 and 2); the estimate takes
#: 3.9 times it, so it covers every measured lake. The lakes before round 8 were fitted as exp(-4.6) *
#: jobs_per_day**1.03 * ω**1.64 / orgs**(0.57 (1 - share)) times 5: up to 2.8x short on the new lakes at ω a day.
PAIRS_ENVELOPE = 3.9
PAIRS_SCALE = PAIRS_ENVELOPE * float(np.exp(-3.14))
PAIRS_PER_DAY_EXP, PAIRS_OMEGA_EXP, PAIRS_ORGS_EXP = 0.99, 1.31, 0.59
GIB = 2.0**30


def lake_rows(jobs: float, inputs_per_template: float = 4.5, downloads_per_job: float = 2.0) -> float:
    """About how many ProvRepo rows a lake of ``jobs`` jobs holds (an envelope of the measured ones)."""
    return jobs * (ROWS_PER_JOB_BASE + inputs_per_template + downloads_per_job)


def closure_pairs_per_job(jobs_per_day: float, omega_days: float, orgs: int, cross_org_share: float = 0.3) -> float:
    """About how many (ancestor, descendant) pairs within ω a job of the lake has (see ``PAIRS_SCALE``), at most
    every job submitted in the window. The closure holds this times the lake's jobs."""
    fit = (PAIRS_SCALE * jobs_per_day ** PAIRS_PER_DAY_EXP * omega_days ** PAIRS_OMEGA_EXP
           / orgs ** (PAIRS_ORGS_EXP * (1.0 - cross_org_share)))
    return min(fit, jobs_per_day * omega_days)


@dataclass(frozen=True)
class LakeConfig(Config):
    """A synthetic data lake (Lab 04): its size, its mix of jobs and its sharing."""

    days: int = param(21, lo=1, hi=63, doc="days of history (value-aware scheduling profiles on two weeks and runs the third)")
    jobs_per_day: int = param(400, lo=20, hi=50_000, doc="jobs submitted per day (the paper's cluster: about 40k)")
    orgs: int = param(6, lo=1, hi=200, doc="organisations, each with its own queues (the paper: 150+)")
    users_per_org: int = param(4, lo=1, hi=100, widget=False, doc="users in each organisation")
    recurring_share: float = param(0.68, lo=0.0, hi=1.0, step=0.02,
                                   doc="share of jobs from recurring templates (the paper: 68%)")
    polling_share: float = param(0.5, lo=0.0, hi=1.0, step=0.05,
                                 doc="share of recurring templates (below the first layer) that wait for their input")
    aperiodic_share: float = param(0.25, lo=0.0, hi=1.0, step=0.05,
                                   doc="share of the non-polling recurring templates submitted at irregular times")
    # 3.5: a template draws 1 + Poisson(inputs_per_template - 1) inputs (at most 6), each a different template.
    # Before inputs were distinct draws, 6.0 gave 3.1-3.7 inputs (repeated picks from a small same-organisation
    # pool collapsed into one, more so the more organisations); 3.5 keeps the dependencies per job calibrated
    # (3.4-4.6, about 4) at every scale.
    inputs_per_template: float = param(3.5, lo=1.0, hi=6.0, step=0.1, widget=False,
                                       doc="mean inputs of a recurring template below the first layer (each a "
                                           "different upstream template; at most 6)")
    cross_org_share: float = param(0.3, lo=0.0, hi=1.0, step=0.05,
                                   doc="chance that an input comes from another organisation (the paper: 33% of dependencies)")
    overwrite_share: float = param(0.35, lo=0.0, hi=1.0, step=0.05,
                                   doc="share of recurring outputs overwritten in place rather than partitioned")
    backfill_share: float = param(0.05, lo=0.0, hi=0.5, step=0.01,
                                  doc="share of ad hoc jobs that rewrite a recent partition of a recurring output")
    layers: int = param(8, lo=1, hi=12, doc="layers of the template DAG: a template's first input comes from the layer "
                                            "above (deeper pipelines hide more value from job-local valuation: the "
                                            "paper's 83%)")
    input_span: int = param(1, lo=1, hi=12, doc="a template's other inputs come from at most this many layers above it "
                                                "(1: each stage of a pipeline reads the stage before)")
    priorities: str = param("independent", choices=PRIORITIES,
                            doc="how users set template priorities: 'independent' of the dependency DAG (each drawn "
                                "around the queue's level), or 'rise_upstream' (a producer gets its highest consumer's "
                                "priority, except a share inversion_share set below it: priorities that know the DAG)")
    priority_sd: float = param(0.45, lo=0.0, hi=5.0, step=0.05,
                               doc="spread of independent template priorities (1-10, rounded): a smaller one gives more "
                                   "ties, so fewer consumers above their producer (Obs. 2: 21% of templates, in one queue)")
    inversion_share: float = param(0.5, lo=0.0, hi=1.0, step=0.05,
                                   doc="priorities='rise_upstream' only: share of consumed templates given a lower priority "
                                       "than one of their consumers")
    downloads_per_job: float = param(8.0, lo=0.0, hi=50.0, step=0.5,
                                     doc="mean downloads per job (outputs ranked by a Zipf law)")
    adhoc_download_share: float = param(0.1, lo=0.0, hi=1.0, step=0.05,
                                        doc="share of all downloads that are of ad hoc jobs' outputs (the paper: "
                                            "recurring jobs carry 9x the value of ad hoc ones, §7.1)")
    download_floor: float = param(0.1, lo=0.0, hi=1.0, step=0.05,
                                  doc="share of all downloads spread evenly over every output written (users look at "
                                      "intermediate outputs too); the rest goes by the Zipf law")
    zipf_s: float = param(1.0, lo=0.5, hi=3.0, step=0.1, doc="Zipf exponent of output popularity (the paper: s = 1)")
    max_containers: int = param(500, lo=1, hi=500, widget=False,
                                doc="the largest job, in containers (job sizes are drawn, then capped here: a smaller cap "
                                    "keeps a reduced-scale lake's jobs small beside its cluster)")
    runtime_scale: float = param(1.0, lo=0.1, hi=10.0, step=0.1, widget=False,
                                 doc="multiplies every job's runtime (recurring templates stay within half their period): a "
                                     "larger scale makes a reduced-scale lake's load less bursty")
    churn: float = param(0.1, lo=0.0, hi=1.0, step=0.05,
                         doc="share of recurring templates that start or stop during the lake")
    seed: int = seed_param()
    max_memory_gib: float = param(8.0, lo=0.25, hi=4096.0, widget=False,
                                  doc="refuse a lake estimated to need more memory than this, in GiB (leaves room on a "
                                      "24 GiB machine; raise it on purpose on a bigger one)")

    MEMORY_CAP = "max_memory_gib"

    def work(self) -> Work:
        """ProvRepo rows, and the memory their generation holds at its peak (``ROW_BYTES`` a row).

        >>> LakeConfig(days=63, jobs_per_day=50_000)
        Traceback (most recent call last):
        ...
        ValueError: LakeConfig would need about 18.5 GiB of memory (450 bytes x 44,100,000 ProvRepo rows = 63 days x 50000 jobs a day x (2.5 + inputs_per_template 3.5 + downloads_per_job 8)), more than max_memory_gib=8 GiB: lower days, jobs_per_day, inputs_per_template, downloads_per_job; or raise max_memory_gib on purpose (on a machine with the memory)
        """
        jobs = self.days * self.jobs_per_day
        rows = lake_rows(jobs, self.inputs_per_template, self.downloads_per_job)
        up = ("days", "jobs_per_day", "inputs_per_template", "downloads_per_job")
        return Work(rows, "ProvRepo rows", self._rows_formula(), up=up, down=(), seconds=1.2e-4 * jobs,
                    memory=ROW_BYTES * rows, memory_formula=f"{ROW_BYTES:g} bytes x {count(rows)} ProvRepo rows = "
                    f"{self._rows_formula()}", memory_up=up)

    def _rows_formula(self) -> str:
        return (f"{self.days} days x {self.jobs_per_day} jobs a day x ({ROWS_PER_JOB_BASE:g} + inputs_per_template "
                f"{self.inputs_per_template:g} + downloads_per_job {self.downloads_per_job:g})")

    @classmethod
    def ci(cls):
        """Two weeks, a few hundred jobs: a train week and a test week for §3."""
        return cls(days=14, jobs_per_day=40, orgs=4, users_per_org=3)

    @classmethod
    def default(cls):
        """Three weeks at reduced scale: value-aware scheduling profiles on two and runs the third."""
        return cls()

    @classmethod
    def paper(cls):
        """Paper-scale days (§6.1: about 40k jobs and 160k dependencies a day): the second day with its inputs."""
        return cls(days=2, jobs_per_day=40_000, orgs=150, users_per_org=9)


@dataclass(frozen=True)
class Lake:
    """A generated lake: the two repositories Wing reads, and the generator's ground truth."""

    config: LakeConfig
    jobs: pd.DataFrame  # JobRepo: one row per job
    prov: pd.DataFrame  # ProvRepo: job, file, op, time
    truth: pd.DataFrame  # true single-hop dependencies: job, depOn, lag, files, latest, mode (hard / polling)
    templates: pd.DataFrame  # recurring templates as generated (kind, cadence, layer, inputs, ...)
    queues: pd.DataFrame  # queue, org, share of the lake's compute
    downloads: pd.DataFrame = field(repr=False)  # file, time, job (the true writer)

    @property
    def horizon(self) -> float:
        return self.config.days * DAY

    def day(self, day: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The jobs submitted on ``day`` and the ProvRepo rows Wing needs for their dependencies.

        Those are the reads of the day's jobs, every write before the day ends (their inputs may be
        older) and the day's downloads: what the paper's "~40k jobs and ~160k dependencies a day"
        counts.
        """
        if not (0 <= day < self.config.days):
            raise ValueError(f"day={show(day)} is not allowed: the lake has days 0..{self.config.days - 1}")
        lo, hi = day * DAY, (day + 1) * DAY
        jobs = self.jobs[(self.jobs["submit"] >= lo) & (self.jobs["submit"] < hi)]
        p = self.prov
        keep = ((p["op"] == "read") & p["job"].isin(jobs["job"])) | ((p["op"] == "write") & (p["time"] < hi)) \
            | ((p["op"] == "download") & (p["time"] >= lo) & (p["time"] < hi))
        return jobs.reset_index(drop=True), p[keep].reset_index(drop=True)

    def summary(self) -> dict[str, float]:
        """Headline counts: jobs, dependencies, shares of the generator's truth."""
        j, t = self.jobs.set_index("job"), self.truth
        rec = j["kind"] != "adhoc"
        both_recurring = rec.reindex(t["job"]).to_numpy() & rec.reindex(t["depOn"]).to_numpy()
        cross = j["org"].reindex(t["job"]).to_numpy() != j["org"].reindex(t["depOn"]).to_numpy()
        return {
            "jobs": len(j), "dependencies": len(t), "jobs_per_day": len(j) / self.config.days,
            "dependencies_per_job": len(t) / max(len(j), 1),
            "recurring_job_share": float(rec.mean()) if len(j) else 0.0,
            "recurring_dependency_share": float(both_recurring.mean()) if len(t) else 0.0,
            "cross_org_dependency_share": float(cross.mean()) if len(t) else 0.0,
            "downloads": len(self.downloads),
        }


# ---- templates -------------------------------------------------------------------------------
class _Templates:
    """Recurring templates, generated layer by layer until each layer's share of the job budget is spent."""

    def __init__(self, cfg: LakeConfig, rng: np.random.Generator, users: pd.DataFrame):
        self.cfg, self.rng, self.users = cfg, rng, users
        self.rows: list[dict] = []
        self.org = np.zeros(64, np.int64)
        self.cons = np.zeros(64)
        # churn and the lake's edges (runs cut at the start and end) cost jobs: aim a little higher
        budget = cfg.recurring_share * cfg.jobs_per_day / (1.0 - 0.25 * cfg.churn) / 0.96
        w = LAYER_GROWTH ** np.arange(cfg.layers)
        for layer, b in enumerate(budget * w / w.sum()):
            self._fill_layer(layer, b)
        self.consumers = self.cons[: len(self.rows)].astype(int).tolist()
        self._priorities()

    def _grow(self) -> None:
        if len(self.rows) >= len(self.org):
            self.org = np.concatenate([self.org, np.zeros_like(self.org)])
            self.cons = np.concatenate([self.cons, np.zeros_like(self.cons)])

    def _fill_layer(self, layer: int, budget: float) -> None:
        rng, cfg = self.rng, self.cfg
        per_day = np.array([DAY / c for c in CADENCES])
        first = len(self.rows)
        upstream = np.array([r["tid"] for r in self.rows if r["layer"] == layer - 1], dtype=np.int64)
        # other inputs: from the input_span layers above (a pipeline's stage reads the stages just before it)
        earlier = np.array([r["tid"] for r in self.rows if layer - cfg.input_span <= r["layer"] < layer], dtype=np.int64)
        if not earlier.size:
            earlier = np.arange(first)
        # every earlier layer's templates, nearest first: where a side the candidates lack is looked for
        self.nearest = [np.array([r["tid"] for r in self.rows if r["layer"] == lo], dtype=np.int64)
                        for lo in range(layer - 1, -1, -1)]
        users = self.users
        while budget >= per_day.min():
            user = users.iloc[int(rng.integers(len(users)))]
            org = int(user["org"])
            # cross-org reading is a habit of some templates (a compliance team reading everyone's
            # logs), not a coin flipped per input: fewer jobs touch another organisation
            cross = CROSS_READER_P if rng.random() < min(1.0, cfg.cross_org_share / CROSS_READER_P) else 0.0
            kind = "periodic"
            trigger = None
            if layer > 0 and upstream.size and rng.random() < cfg.polling_share:
                trigger = self._pick_input(upstream, org, cross)  # None: nothing of its organisation to wait for
                if trigger is not None and per_day[CADENCES.index(self.rows[trigger]["cadence"])] <= budget:
                    kind = "polling"
                else:
                    trigger = None
            if kind == "polling":
                cadence = self.rows[trigger]["cadence"]
            else:
                p = np.where(per_day <= budget, CADENCE_WEIGHTS, 0.0)
                cadence = CADENCES[int(rng.choice(len(CADENCES), p=p / p.sum()))]
                if rng.random() < cfg.aperiodic_share:
                    kind = "aperiodic"
            budget -= DAY / cadence
            tid = len(self.rows)
            self._grow()
            self.org[tid] = org
            n_streams = 1 + int(rng.random() < 0.3)
            row = {
                "template": f"o{org}/t{tid}", "tid": tid, "layer": layer, "kind": kind, "cadence": cadence,
                "org": org, "user": user["user"], "queue": user["queue"],
                "runtime_median": float(np.clip(rng.lognormal(np.log(15 * MINUTE * cfg.runtime_scale), 0.9), MINUTE,
                                                min(6 * HOUR, 0.5 * cadence))),
                "containers": int(np.clip(np.round(rng.lognormal(np.log(8), 1.1)), 1, cfg.max_containers)),
                "streams": ["overwrite" if rng.random() < cfg.overwrite_share else "partition" for _ in range(n_streams)],
                "stateful": bool(kind != "polling" and cadence <= DAY and rng.random() < STATEFUL_SHARE),
                "inputs": [],
            }
            self.rows.append(row)
            if layer == 0:
                row["external"] = 1 + int(rng.integers(2))  # sources read uploads no job wrote
                continue
            row["external"] = int(rng.random() < 0.15)
            n_in = max(1, int(min(1 + rng.poisson(cfg.inputs_per_template - 1.0), 6)))
            first_input = trigger if trigger is not None else \
                self._pick_input(upstream if upstream.size else earlier, org, cross)  # one from the layer above
            chosen = [] if first_input is None else [first_input]
            for _ in range(n_in - 1):
                c = self._pick_input(earlier, org, cross, chosen)
                if c is not None:
                    chosen.append(c)
            if not chosen:  # the organisation's first stage, with no input from another: a source of its own
                row["external"] = max(row["external"], 1)
            for i, c in enumerate(chosen):
                up = self.rows[c]
                s = int(rng.integers(len(up["streams"])))
                self.cons[c] += 1
                # a rolling window: some readers take several periods of a partitioned input at once
                window = 1 if rng.random() < ROLLING_SHARE else int(rng.choice(ROLLING_WINDOWS))
                row["inputs"].append({"tid": c, "stream": s, "mode": up["streams"][s], "window": window,
                                      "trigger": trigger is not None and i == 0})

    def _pick_input(self, candidates: np.ndarray, org: int, cross: float, chosen=()) -> int | None:
        """An upstream template not in ``chosen``: from another organisation with probability ``cross``, popular
        ones first (preferential attachment: hubs emerge).

        The side drawn (this organisation or another) is kept at every scale: when ``candidates`` hold no template
        of it that is not already chosen, the nearest earlier layer that holds one gives it. There is no input
        (None) when every earlier template of the side is already chosen, or when the reader's organisation has
        no earlier template at all (its first pipeline stage reads uploads instead); a cross-organisation input
        is taken from the reader's organisation only when no other organisation has an earlier template (a lake
        of one organisation). (With 30 organisations a layer holds about two templates of a reader's
        organisation: drawing them with replacement and dropping repeats lost half the same-organisation inputs,
        and an empty side fell back to any organisation: 57 % of the inputs were cross-organisation where 30 %
        were drawn, and the share grew with the organisations.)"""
        rng = self.rng
        want_other = rng.random() < cross
        x = rng.random()
        layers = [candidates] + self.nearest  # the candidates first, then each earlier layer, nearest first
        side = [layer[self.org[layer] != org] for layer in layers] if want_other else []
        if not any(s.size for s in side):  # a same-organisation input, or no other organisation to read
            side = [layer[self.org[layer] == org] for layer in layers]
        pool = next((p for p in (s[~np.isin(s, chosen)] for s in side) if p.size), None)
        if pool is None:
            return None
        w = np.cumsum((1.0 + self.cons[pool]) ** 1.2)  # preferential attachment: hubs emerge
        return int(pool[min(int(np.searchsorted(w, x * w[-1], side="right")), len(pool) - 1)])

    def _priorities(self) -> None:
        """User priorities 1-10 (compared within a queue): drawn without knowing the DAG (``independent``), or
        rising upstream with a share of deliberate inversions (``rise_upstream``, Observation 2). They come from
        their own random stream, so the two rules give the same lake but for the priorities."""
        rng = np.random.default_rng([self.cfg.seed, PRIORITY_STREAM])
        if self.cfg.priorities == "independent":
            for r in self.rows:
                r["priority"] = int(np.clip(np.round(rng.normal(5.0, self.cfg.priority_sd)), 1, 10))
                r["inverted"] = False
            return
        for r in self.rows:
            r["priority"] = int(np.clip(np.round(rng.normal(5.0, 1.5)), 1, 10))
            r["inverted"] = False
        down: dict[int, list[int]] = {}
        for r in self.rows:
            for i in r["inputs"]:
                if i["tid"] != r["tid"]:
                    down.setdefault(i["tid"], []).append(r["tid"])
        for r in sorted(self.rows, key=lambda r: -r["layer"]):  # consumers (deeper layers) are settled first
            cons = down.get(r["tid"])
            if not cons:
                continue
            top = max(self.rows[c]["priority"] for c in cons)
            if rng.random() < self.cfg.inversion_share and top > 1:
                r["priority"] = int(max(1, top - 1 - rng.integers(3)))
                r["inverted"] = True
            else:
                r["priority"] = max(r["priority"], top)

    def table(self) -> pd.DataFrame:
        t = pd.DataFrame(self.rows)
        t["consumers"] = self.consumers
        return t


# ---- the lake --------------------------------------------------------------------------------
class _Builder:
    def __init__(self, cfg: LakeConfig):
        self.cfg = cfg
        self.rng = np.random.default_rng(cfg.seed)
        self.horizon = cfg.days * DAY
        self.jobs: list[dict[str, np.ndarray]] = []
        self.reads: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # job ids, file names, times
        self.writes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.next_job = 0
        self.inst: dict[int, dict[str, np.ndarray]] = {}  # per template: job ids, submit, end (by instance)

    # -- organisations, queues, users
    def people(self) -> pd.DataFrame:
        cfg, rng = self.cfg, self.rng
        rows = []
        for o in range(cfg.orgs):
            n_q = 1 + int(rng.binomial(2, 0.4))
            for u in range(cfg.users_per_org):
                rows.append({"org": o, "user": f"o{o}/u{u}", "queue": f"root.o{o}.q{int(rng.integers(n_q))}"})
        users = pd.DataFrame(rows)
        # a few users submit most ad hoc jobs; each has a typical ad hoc priority offset
        users["adhoc_weight"] = rng.pareto(1.5, len(users)) + 0.2
        return users

    def _add_jobs(self, tid_name: str, kind: str, row: dict, submit: np.ndarray, runtime: np.ndarray,
                  priority: np.ndarray, dep_mode: str) -> np.ndarray:
        n = len(submit)
        ids = np.arange(self.next_job, self.next_job + n)
        self.next_job += n
        self.jobs.append({
            "job": ids, "template": np.full(n, tid_name, object), "kind": np.full(n, kind, object),
            "user": np.full(n, row["user"], object), "org": np.full(n, row["org"]), "queue": np.full(n, row["queue"], object),
            "priority": priority, "submit": submit, "runtime": runtime, "containers": np.full(n, row["containers"]),
            "dep_mode": np.full(n, dep_mode, object)})
        return ids

    def _read(self, jobs: np.ndarray, files, times: np.ndarray) -> None:
        if len(jobs):
            self.reads.append((np.asarray(jobs), np.asarray(files, dtype=object), np.asarray(times, dtype=float)))

    def _write(self, jobs: np.ndarray, files, times: np.ndarray) -> None:
        if len(jobs):
            self.writes.append((np.asarray(jobs), np.asarray(files, dtype=object), np.asarray(times, dtype=float)))

    # -- recurring jobs
    def _active(self) -> tuple[float, float]:
        rng, h = self.rng, self.horizon
        x = rng.random()
        if x < self.cfg.churn / 2:
            return float(rng.uniform(0.2, 0.8) * h), h  # a template born during the lake
        if x < self.cfg.churn:
            return 0.0, float(rng.uniform(0.2, 0.8) * h)  # one retired during the lake
        return 0.0, h

    def _submits(self, t: dict, phase: float) -> tuple[np.ndarray, np.ndarray | None]:
        """Submission times, and for a polling template the trigger run each one follows."""
        rng = self.rng
        start, stop = self._active()
        c = t["cadence"]
        trig = None
        if t["kind"] == "polling":
            up = self.inst[t["inputs"][0]["tid"]]
            s = up["end"] + rng.uniform(*POLL_DELAY, len(up["end"]))
            trig = np.arange(len(s))
        elif t["kind"] == "periodic":
            k0 = np.ceil((start - phase) / c)
            s = phase + c * np.arange(k0, np.floor((stop - phase) / c) + 1) + rng.uniform(0.0, 2.0)
            s = s + rng.uniform(0.0, 1.0, len(s))  # on the clock, to the second
        else:  # aperiodic: gaps with a coefficient of variation of 0.7
            n = int(3 * (stop - start) / c) + 3
            s = start + rng.uniform(0, c) + np.cumsum(rng.gamma(2.0, c / 2.0, n)) - c
        keep = (s >= start) & (s < stop) & (s >= 0)
        order = np.argsort(s[keep], kind="stable")
        return s[keep][order], (trig[keep][order] if trig is not None else None)

    def recurring(self, templates: _Templates) -> None:
        rng = self.rng
        phases: dict[int, float] = {}
        for t in templates.rows:
            c = t["cadence"]
            # downstream templates run a while after their inputs' usual completion
            ups = [phases[i["tid"]] + 2 * templates.rows[i["tid"]]["runtime_median"] for i in t["inputs"]
                   if i["tid"] in phases]
            phase = ((max(ups) if ups else rng.uniform(0, c)) + rng.uniform(0, min(HOUR, c / 4))) % c
            phases[t["tid"]] = phase
            submit, trigger_run = self._submits(t, phase)
            runtime = t["runtime_median"] * rng.lognormal(0.0, 0.25, len(submit))
            ids = self._add_jobs(t["template"], t["kind"], t, submit, runtime, np.full(len(submit), t["priority"]),
                                 "polling" if t["kind"] == "polling" else "hard")
            end = submit + runtime
            self.inst[t["tid"]] = {"job": ids, "submit": submit, "end": end, "by_end": np.argsort(end, kind="stable"),
                                   "trigger_run": trigger_run}
            for s, mode in enumerate(t["streams"]):
                base = f"{t['template']}/s{s}"
                files = [f"{base}/p{i}" for i in range(len(ids))] if mode == "partition" else [base] * len(ids)
                self._write(ids, files, end)
            if t["stateful"]:
                self._read(ids, [f"{t['template']}/state"] * len(ids), submit)
                self._write(ids, [f"{t['template']}/state"] * len(ids), end)
            for e in range(t["external"]):
                self._read(ids, [f"ext/o{t['org']}/{t['template']}/{e}"] * len(ids), submit)
            for inp in t["inputs"]:
                self._read_input(t, inp, templates.rows[inp["tid"]], ids, submit)

    def _read_input(self, t: dict, inp: dict, up: dict, ids: np.ndarray, submit: np.ndarray) -> None:
        base = f"{up['template']}/s{inp['stream']}"
        if inp["mode"] == "overwrite":
            self._read(ids, [base] * len(ids), submit)
            return
        u = self.inst[up["tid"]]
        if inp["trigger"]:  # a polling job reads exactly the partition whose completion triggered it
            runs = self.inst[t["tid"]]["trigger_run"]
            self._read(ids, [f"{base}/p{i}" for i in runs], submit)
            return
        m = int(np.clip(np.round(inp["window"] * t["cadence"] / up["cadence"]), 1, MAX_PARTITIONS))
        ends = u["end"][u["by_end"]]
        done = np.searchsorted(ends, submit, side="left")  # partitions finished strictly before the read
        for back in range(1, m + 1):
            pos = done - back
            ok = pos >= 0
            ok[ok] = submit[ok] - ends[pos[ok]] <= READ_HORIZON  # a partition older than that is not read
            inst = u["by_end"][pos[ok]]
            self._read(ids[ok], [f"{base}/p{i}" for i in inst], submit[ok])

    # -- ad hoc jobs
    def adhoc(self, templates: _Templates, users: pd.DataFrame, n: int) -> None:
        rng, cfg = self.rng, self.cfg
        if n == 0:
            return
        rows = templates.rows
        w = users["adhoc_weight"].to_numpy()
        who = rng.choice(len(users), size=n, p=w / w.sum())
        # working hours are busier: a mild daily cycle
        day = rng.integers(0, cfg.days, n)
        hour = (rng.normal(14.0, 4.0, n) % 24.0) * HOUR
        submit = np.sort(np.clip(day * DAY + hour, 0, self.horizon - 1.0))
        runtime = np.clip(rng.lognormal(np.log(5 * MINUTE * cfg.runtime_scale), 1.0, n), 30.0, 4 * HOUR * cfg.runtime_scale)
        containers = np.clip(np.round(rng.lognormal(np.log(4), 1.0, n)), 1, min(200, cfg.max_containers)).astype(int)
        qmean = pd.DataFrame(rows).groupby("queue")["priority"].mean() if rows else pd.Series(dtype=float)
        ids = np.arange(self.next_job, self.next_job + n)
        self.next_job += n
        end = submit + runtime
        u = users.iloc[who].reset_index(drop=True)
        u_org, u_user = u["org"].to_numpy(), u["user"].to_numpy(object)
        base_prio = u["queue"].map(qmean).fillna(5.0).to_numpy()
        priority = np.clip(np.round(base_prio + rng.normal(-1.0, 2.0, n)), 1, 10).astype(int)
        self.jobs.append({
            "job": ids, "template": np.array([f"adhoc/{i}" for i in ids], object), "kind": np.full(n, "adhoc", object),
            "user": u["user"].to_numpy(object), "org": u["org"].to_numpy(), "queue": u["queue"].to_numpy(object),
            "priority": priority, "submit": submit, "runtime": runtime, "containers": containers,
            "dep_mode": np.full(n, "hard", object)})
        self._write(ids, [f"adhoc/{i}/out" for i in ids], end)
        # popularity of recurring outputs for ad hoc readers: consumers + 1, cross-org as for templates
        cons = np.array(templates.consumers, dtype=float) + 1.0
        org_of = np.array([r["org"] for r in rows])
        samplers: dict[tuple[int, bool], np.ndarray] = {}

        def sampler(org: int, cross: bool) -> np.ndarray:
            key = (org, cross)
            if key not in samplers:
                mask = (org_of != org) if cross else (org_of == org)
                if not mask.any():
                    mask = np.ones(len(rows), bool)
                samplers[key] = np.cumsum(np.where(mask, cons, 0.0))
            return samplers[key]
        last_by_user: dict[str, list[int]] = {}
        share = min(1.0, cfg.cross_org_share / CROSS_READER_P)
        cross_user = {name: (CROSS_READER_P if rng.random() < share else 0.0) for name in users["user"]}
        r_jobs, r_files, r_times, w_jobs, w_files, w_times = [], [], [], [], [], []
        for k in range(n):
            j, t, org, user = int(ids[k]), float(submit[k]), int(u_org[k]), u_user[k]
            x = rng.random()
            mine = last_by_user.setdefault(user, [])
            if x < 0.12 and mine:  # build on one's own previous ad hoc result (if it has finished)
                prev = [p for p in mine[-5:] if end[p] < t]
                if prev:
                    r_jobs.append(j); r_files.append(f"adhoc/{ids[prev[-1]]}/out"); r_times.append(t)
            elif x < 0.9 and rows:
                for _ in range(1 + int(rng.poisson(1.0))):
                    cum = sampler(org, rng.random() < cross_user.get(user, 0.0))
                    tid = min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(rows) - 1)
                    up, ui = rows[tid], self.inst[tid]
                    s = int(rng.integers(len(up["streams"])))
                    base = f"{up['template']}/s{s}"
                    if up["streams"][s] == "overwrite":
                        r_jobs.append(j); r_files.append(base); r_times.append(t)
                        continue
                    done = int(np.searchsorted(ui["end"][ui["by_end"]], t, side="left"))
                    if done == 0:
                        continue
                    f = f"{base}/p{int(ui['by_end'][done - 1])}"
                    back = int(rng.choice(ADHOC_WINDOWS[0], p=ADHOC_WINDOWS[1]))
                    ends = ui["end"][ui["by_end"]]
                    for b in range(min(back, done)):
                        if t - ends[done - 1 - b] <= READ_HORIZON:
                            r_jobs.append(j); r_files.append(f"{base}/p{int(ui['by_end'][done - 1 - b])}"); r_times.append(t)
                    if rng.random() < cfg.backfill_share:  # rewrite the partition: a second writer of the file
                        w_jobs.append(j); w_files.append(f); w_times.append(float(end[k]))
            else:
                r_jobs.append(j); r_files.append(f"ext/{user}/upload{int(rng.integers(3))}"); r_times.append(t)
            mine.append(k)
        self._read(np.array(r_jobs, dtype=np.int64), r_files, np.array(r_times))
        self._write(np.array(w_jobs, dtype=np.int64), w_files, np.array(w_times))

    # -- the file system: who wrote the version each read and download sees
    @staticmethod
    def _cat(parts):
        if not parts:
            return np.zeros(0, np.int64), np.zeros(0, object), np.zeros(0)
        return (np.concatenate([p[0] for p in parts]).astype(np.int64), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]))

    def finish(self, templates: _Templates, users: pd.DataFrame) -> Lake:
        rng, cfg = self.rng, self.cfg
        jobs = pd.DataFrame({c: np.concatenate([j[c] for j in self.jobs]) for c in self.jobs[0]})
        jobs = jobs.sort_values("job", ignore_index=True)
        jobs["start"] = jobs["submit"]
        jobs["end"] = jobs["submit"] + jobs["runtime"]
        jobs["compute"] = jobs["runtime"] * jobs["containers"]  # container-seconds
        rj, rf, rt = self._cat(self.reads)
        # a job that picks the same input twice still reads the file once
        first = ~pd.DataFrame({"j": rj, "f": rf, "t": rt}).duplicated().to_numpy()
        rj, rf, rt = rj[first], rf[first], rt[first]
        wj, wf, wt = self._cat(self.writes)
        # events of the horizon only: jobs still running at the end have not written yet
        keep = wt < self.horizon
        wj, wf, wt = wj[keep], wf[keep], wt[keep]
        files = pd.Index(pd.unique(np.concatenate([wf, rf])))
        wc, rc = files.get_indexer(wf), files.get_indexer(rf)
        # versions: writes sorted by (file, time); the next write of the same file ends a version's life
        order = np.lexsort((wt, wc))
        wj, wf, wt, wc = wj[order], wf[order], wt[order], wc[order]
        nxt = np.full(len(wt), np.inf)
        same = wc[1:] == wc[:-1]
        nxt[:-1][same] = wt[1:][same]
        writer = self._last_writer(wc, wt, rc, rt)
        seen = writer >= 0
        reads = pd.DataFrame({"job": rj[seen], "depOn": wj[writer[seen]], "file": rf[seen],
                              "lag": rt[seen] - wt[writer[seen]], "latest": ~pd.Series(rf[seen]).str.contains("/p").to_numpy()})
        reads = reads[reads["job"] != reads["depOn"]]
        truth = (reads.groupby(["job", "depOn"], as_index=False, sort=True)
                 .agg(lag=("lag", "min"), files=("file", "nunique"), latest=("latest", "all")))
        # a polling job waits for each input; any other job fails if a hard input is missing when it is
        # submitted, unless it reads a "latest" file, of which an older version will do (stale data)
        polls = jobs.set_index("job")["dep_mode"].reindex(truth["job"]).to_numpy() == "polling"
        truth["mode"] = np.where(polls, "polling", "hard")
        truth.attrs["reads_without_writer"] = int((~seen).sum())
        downloads = self._downloads(templates, users, jobs, wj, wf, wt, nxt)
        prov = pd.concat([
            pd.DataFrame({"job": rj, "file": rf, "op": "read", "time": rt}),
            pd.DataFrame({"job": wj, "file": wf, "op": "write", "time": wt}),
            pd.DataFrame({"job": pd.array([pd.NA] * len(downloads), dtype="Int64"), "file": downloads["file"].to_numpy(),
                          "op": "download", "time": downloads["time"].to_numpy()}),
        ], ignore_index=True)
        prov["job"] = prov["job"].astype("Int64")
        prov = prov.sort_values(["time", "op"], kind="stable", ignore_index=True)
        tt = templates.table()
        queues = jobs.groupby(["queue", "org"], as_index=False)["compute"].sum()
        queues["share"] = queues["compute"] / queues["compute"].sum()
        jobs = jobs[["job", "template", "kind", "user", "org", "queue", "priority", "submit", "start", "end", "runtime",
                     "containers", "compute", "dep_mode"]]
        return Lake(cfg, jobs, prov, truth, tt, queues[["queue", "org", "share"]], downloads)

    @staticmethod
    def _last_writer(wc: np.ndarray, wt: np.ndarray, rc: np.ndarray, rt: np.ndarray) -> np.ndarray:
        """Index (into the sorted writes) of the version each read sees, -1 if none.

        Reads and writes are merged in (file, time) order, a read before a write at the same
        instant; a running maximum of write positions carries the latest write forward.
        """
        n_w = len(wc)
        code = np.concatenate([wc, rc])
        time = np.concatenate([wt, rt])
        is_read = np.concatenate([np.zeros(n_w, np.int8), np.ones(len(rc), np.int8)])
        # at equal (file, time) the read sorts first: it must not see that write
        order = np.lexsort((-is_read, time, code))
        pos = np.where(is_read[order] == 0, order, -1)  # write positions are their own index (sorted by file, time)
        last = np.maximum.accumulate(pos) if len(pos) else pos
        ok = last >= 0
        same_file = np.zeros(len(order), bool)
        same_file[ok] = code[np.where(ok, last, 0)][ok] == code[order][ok]
        result = np.full(len(rc), -1, np.int64)
        r = is_read[order] == 1
        idx = order[r] - n_w
        result[idx] = np.where(same_file[r], last[r], -1)
        return result

    def _downloads(self, templates: _Templates, users, jobs, wj, wf, wt, nxt) -> pd.DataFrame:
        """Zipf popularity per output stream (and per user's ad hoc outputs), Poisson downloads per version."""
        rng, cfg = self.rng, self.cfg
        if len(wj) == 0 or cfg.downloads_per_job == 0:
            return pd.DataFrame({"file": pd.Series([], dtype=object), "time": pd.Series([], dtype=float),
                                 "job": pd.Series([], dtype=np.int64)})
        wfs = pd.Series(wf)
        unit = wfs.str.replace(r"/p\d+$", "", regex=True)
        is_adhoc = wfs.str.startswith("adhoc/").to_numpy()
        user_of = jobs.set_index("job")["user"]
        unit = np.where(is_adhoc, "user:" + user_of.reindex(wj).astype(str).to_numpy(), unit.to_numpy())
        state = wfs.str.endswith("/state").to_numpy()
        units = pd.Index(pd.unique(unit[~state]))
        rank = rng.permutation(len(units)) + 1.0
        pop = pd.Series(1.0 / rank ** cfg.zipf_s, index=units)
        read_streams = set()
        for t in templates.rows:
            for i in t["inputs"]:
                read_streams.add(f"{templates.rows[i['tid']]['template']}/s{i['stream']}")
        report = np.array([(u not in read_streams and not u.startswith("user:")) for u in units])
        pop = pop * np.where(report, LEAF_BIAS, 1.0)
        lam = np.where(state, 0.0, pop.reindex(unit).fillna(0.0).to_numpy())
        total = cfg.downloads_per_job * len(jobs)
        # a floor spread evenly over the versions users can download, the rest by popularity; ad hoc outputs
        # take adhoc_download_share of all downloads (§7.1: recurring jobs carry 9x the value of ad hoc ones)
        floor = np.where(state, 0.0, cfg.download_floor * total / max(int((~state).sum()), 1))
        by_popularity = (1.0 - cfg.download_floor) * total
        lam_a, lam_r = np.where(is_adhoc, lam, 0.0), np.where(is_adhoc, 0.0, lam)
        adhoc = float(np.clip(cfg.adhoc_download_share * total - floor[is_adhoc].sum(), 0.0, by_popularity))
        if lam_r.sum() <= 0:
            adhoc = by_popularity
        elif lam_a.sum() <= 0:
            adhoc = 0.0
        mean = floor + lam_a * adhoc / max(lam_a.sum(), 1e-12) + lam_r * (by_popularity - adhoc) / max(lam_r.sum(), 1e-12)
        count = rng.poisson(mean)
        idx = np.repeat(np.arange(len(wj)), count)
        life = np.minimum(nxt[idx] - wt[idx], DOWNLOAD_HORIZON)
        t = wt[idx] + life * rng.beta(1.0, 3.0, len(idx))  # most downloads soon after the write
        ok = (t < self.horizon) & (t > wt[idx]) & (t < nxt[idx])
        d = pd.DataFrame({"file": wf[idx][ok], "time": t[ok], "job": wj[idx][ok]})
        return d.sort_values("time", ignore_index=True)


def generate_lake(config: LakeConfig | None = None) -> Lake:
    """Generate a lake from ``config`` (default: :meth:`LakeConfig.default`); the same config gives the same lake."""
    cfg = LakeConfig.default() if config is None else config
    if not isinstance(cfg, LakeConfig):
        raise ValueError(f"config must be a LakeConfig, got {type(cfg).__name__}")
    b = _Builder(cfg)
    users = b.people()
    templates = _Templates(cfg, b.rng, users)
    b.recurring(templates)
    n_rec = b.next_job
    share = cfg.recurring_share
    n_adhoc = int(round(n_rec * (1 - share) / share)) if share > 0 else cfg.jobs_per_day * cfg.days
    b.adhoc(templates, users, n_adhoc)
    return b.finish(templates, users)
