"""Lab 02's experiments: run -> result for SLO inference (§4), the job resource model (§5) and the
fleet metrics of §2.2 and §9.1 (Fig. 2a, 4, 5, 9a-c), on a seeded synthetic history.

* :func:`run` draws the history of a :class:`~.config.SLOConfig`, finds the periodic jobs, infers
  their SLOs on the training runs, fits R* for each actionable job at ``config.alpha`` and replays
  the held-out runs against R* and the users' own provisioning (:class:`SLOResult`). One
  *focus* job (a multi-stage one with plenty of runs) is kept for the figures of one job.
* :func:`alpha_sweep` (Fig. 9b/9c over alpha), :func:`history_sweep` (R* against the runs of
  history), :func:`pooled_fleet` (the same over several seeds, for claims that must not hang on
  one draw), :func:`lazy_example` (§5's lazy solution and the regulariser). The contract after drift
  is :mod:`.drift`'s, the claims table :mod:`.claims`'.

Example
-------
>>> r = run(SLOConfig.ci())
>>> r.summary().index.tolist()
['user', 'alpha=0.01']
>>> bool(r.focus_fit.n_runs <= r.config.history_runs and r.focus in r.slo.index[r.slo.actionable])
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ...memo import remembered
from ...sweep import run_grid
from .runs import align_skylines
from .config import SLOConfig
from .fleet import (
    PERIODIC_KINDS, FleetEvaluation, consumer_harm, elastic_completion, evaluate_fleet, slack_cdf, user_ratios,
)
from .history import History, generate_history
from .inference import detect_periodic, infer_slo
from .lp import build_lp
from .lp_compact import build_compact_lp
from .penalty import Penalty, penalty
from .skyline import SkylineFit, fit_skyline, max_envelope, mean_skyline, percentile_skyline, user_skyline

#: the alphas of the paper's Fig. 9b/9c comparison (1% is its best balance)
FLEET_ALPHAS = (0.01, 0.1, 0.5)
#: the fewest submissions :func:`.inference.detect_periodic` calls periodic (its default)
MIN_SUBMISSIONS = 5
#: fewer (A, B) pairs than this in a class, and §9.1's proxy is left undecided
MIN_PAIRS = 100
#: runs of history for "R* against the runs"
HISTORY_SIZES = (3, 5, 10, 20, 40)


def policy(alpha: float) -> str:
    """The name of R* at ``alpha`` in the fleet tables (``"alpha=0.01"``)."""
    return f"alpha={alpha:g}"


# ---- one run ------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SLOResult:
    """What :func:`run` measured on one history."""

    config: SLOConfig
    history: History
    detected: pd.DataFrame  # detect_periodic per template, with the generator's kind and true period
    slo: pd.DataFrame  # infer_slo on the periodic templates' training runs
    fleet: FleetEvaluation  # user vs R* at config.alpha on the held-out runs
    focus: str  # the job the one-job figures show
    focus_runs: np.ndarray  # N x K: the training runs R* was fitted on (the most recent history_runs)
    focus_held_out: list  # the held-out successful runs' skylines
    focus_fit: SkylineFit  # R* at config.alpha and config.beta_fraction
    seconds: float  # wall time of the run

    # ---- the focus job's baselines on J(s) -------------------------------------------------------
    def focus_baselines(self) -> dict[str, np.ndarray]:
        """R* and the baselines for the focus job: name -> allocation over its K steps."""
        runs = self.focus_runs
        k = runs.shape[1]
        provisioned = float(self.history.templates.provisioned[self.focus])
        return {
            f"R* ({policy(self.config.alpha)})": self.focus_fit.skyline,
            "max envelope": max_envelope(runs),
            "95th percentile": percentile_skyline(runs, 95.0),
            "mean": mean_skyline(runs),
            "user": user_skyline(provisioned, k),
        }

    def focus_table(self) -> pd.DataFrame:
        """J(s) of each allocation against the focus job's training runs, and its held-out misses
        when it is all the run gets (user: its containers stay until the run ends)."""
        cfg, runs = self.config, self.focus_runs
        d_j = float(self.slo.d_j[self.focus])
        starts = self.history.runs_of(self.focus)
        held = starts[starts.run >= _n_train(starts, cfg.train_fraction)]
        held = held[~held.failed]
        rows = {}
        for name, s in self.focus_baselines().items():
            p: Penalty = penalty(s, runs, cfg.alpha, self.focus_fit.beta if name.startswith("R*") else 0.0)
            after = float(s[0]) if name == "user" else 0.0
            missed = [(r.t_start - r.period_start) + 60.0 * elastic_completion(s, self.history.skylines[self.focus][r.run],
                                                                                after=after) > d_j
                      for r in held.itertuples()]
            rows[name] = {"peak": float(s.max()), "area": float(s.sum()), "over A_o": p.over, "final debt A_u": p.under,
                          "epsilon": p.epsilon, "J(s)": cfg.alpha * p.over + (1 - cfg.alpha) * p.under,
                          "held-out misses": f"{sum(missed)}/{len(missed)}"}
        return pd.DataFrame.from_dict(rows, orient="index")

    # ---- fleet ----------------------------------------------------------------------------------------
    def summary(self) -> pd.DataFrame:
        """Per policy: held-out runs, worst-case SLO miss rate, median provisioned/used (peak, area)."""
        return fleet_summary(self.fleet.per_run)

    def user_ratios(self) -> pd.DataFrame:
        """Fig. 2a: provisioned / used per successful run of the periodic templates."""
        return user_ratios(self.history, kinds=PERIODIC_KINDS)

    def slack(self) -> pd.DataFrame:
        """Fig. 9a: the slack-ratio CDF of the actionable templates."""
        return slack_cdf(self.slo)

    def harm(self) -> pd.DataFrame:
        """§9.1's proxy: P(first consumer fails) when the job met its SLO, missed it, or failed."""
        return consumer_harm(self.history, self.slo)

    def detection(self) -> pd.DataFrame:
        """Per generator kind: templates, how many were found periodic, how many with the right period."""
        d = self.detected
        right = d.periodic & np.isclose(d.period, d.true_period)
        return pd.DataFrame({"templates": d.groupby("kind").size(),
                             f"with {MIN_SUBMISSIONS}+ submissions": (d.n_submissions >= MIN_SUBMISSIONS).groupby(d.kind).sum(),
                             "found periodic": d.periodic.groupby(d.kind).sum(),
                             "right period": right.groupby(d.kind).sum()}).reindex(
            ["periodic", "off_kilter", "aperiodic", "adhoc"]).fillna(0).astype(int)


def _n_train(runs: pd.DataFrame, train_fraction: float) -> int:
    """The first held-out run number of a template (the same split as :func:`.fleet.evaluate_fleet`)."""
    return int(train_fraction * (runs.run.max() + 1))


def _detected(history: History, config: SLOConfig) -> pd.DataFrame:
    d = detect_periodic(history.submissions, **config.detect_options())
    truth = history.templates.reindex(d.index)
    return d.assign(kind=truth.kind, true_period=truth.period)


def _training_slo(history: History, config: SLOConfig) -> pd.DataFrame:
    runs = history.runs[history.runs.kind.isin(PERIODIC_KINDS)]
    n_train = runs.groupby("template").run.transform(lambda r: int(config.train_fraction * (r.max() + 1)))
    return infer_slo(runs[runs.run < n_train], **config.slo_options())


def _pick_focus(history: History, slo: pd.DataFrame, config: SLOConfig) -> str:
    """A job worth looking at: several stages, as many training runs as R* may use, a long run."""
    best, key = None, None
    for name in slo.index[slo.actionable]:
        t = history.templates.loc[name]
        runs = history.runs_of(name)
        n_train = int((~runs.failed & (runs.run < _n_train(runs, config.train_fraction))).sum())
        k = (t.kind == "periodic", min(len(t.stages), 3), min(n_train, config.history_runs), int(t.steps), name)
        if n_train >= 2 and (key is None or k > key):
            best, key = name, k
    if best is None:
        raise ValueError(
            "no periodic template has an actionable SLO and two training runs: raise days or n_periodic, "
            "or lower cv_threshold's strictness (raise it) or min_slack_ratio"
        )
    return best


def run(config: SLOConfig) -> SLOResult:
    """Draw the history, infer SLOs, fit R* at ``config.alpha``, replay the held-out runs."""
    t0 = time.perf_counter()
    history = run_history(config)
    detected = _detected(history, config)
    fleet = evaluate_fleet(history, (config.alpha,), train_fraction=config.train_fraction,
                           beta_fraction=config.beta_fraction, max_history=config.history_runs,
                           slo_options=config.slo_options())
    slo = fleet.slo
    focus = _pick_focus(history, slo, config)
    runs = history.runs_of(focus)
    n_train = _n_train(runs, config.train_fraction)
    train = [history.skylines[focus][r] for r in runs[(runs.run < n_train) & ~runs.failed].run]
    held = [history.skylines[focus][r] for r in runs[(runs.run >= n_train) & ~runs.failed].run]
    matrix = align_skylines(train[-config.history_runs:])
    fit = fleet.fits.get((focus, config.alpha)) or fit_skyline(matrix, config.alpha, beta_fraction=config.beta_fraction)
    return SLOResult(config, history, detected, slo, fleet, focus, matrix, held, fit, time.perf_counter() - t0)


# ---- sweeps -------------------------------------------------------------------------------------------
def alpha_sweep(result: SLOResult, alphas: Sequence[float] = FLEET_ALPHAS) -> FleetEvaluation:
    """Fig. 9b/9c: the same history and held-out runs, R* fitted at each alpha."""
    c = result.config
    return evaluate_fleet(result.history, tuple(alphas), train_fraction=c.train_fraction,
                          beta_fraction=c.beta_fraction, max_history=c.history_runs, slo_options=c.slo_options())


# Sweeps over configs and seeds go through cluster_sim.sweep.run_grid (in this process while short, on a
# Dask cluster when long); a point draws its history again from its config (run_history remembers the last few).
def _history_point(config: SLOConfig) -> dict:
    """history_sweep's point: R* fitted on at most ``config.history_runs`` training runs, against the users."""
    ev = evaluate_fleet(run_history(config), (config.alpha,), train_fraction=config.train_fraction,
                        beta_fraction=config.beta_fraction, max_history=config.history_runs,
                        slo_options=config.slo_options())
    s = ev.summary()
    return {"mean runs used": float(np.mean([f.n_runs for f in ev.fits.values()])),
            "miss_rate": s.miss_rate[policy(config.alpha)], "median_area_ratio": s.median_area_ratio[policy(config.alpha)],
            "user_miss_rate": s.miss_rate["user"], "user_median_area_ratio": s.median_area_ratio["user"]}


def history_sweep(result: SLOResult, sizes: Sequence[int] = HISTORY_SIZES, *, client=None, cache=None) -> pd.DataFrame:
    """R* against the runs: for each number of runs of history, R*'s worst-case miss rate and median
    provisioned/used on the held-out runs (``config.alpha``), beside the users' (which do not depend on it).
    ``client`` and ``cache`` go to :func:`cluster_sim.sweep.run_grid`."""
    df = run_grid(_history_point, result.config, {"history_runs": [int(n) for n in sizes]}, client=client,
                  cache=cache)
    return df[["history_runs", "mean runs used", "miss_rate", "median_area_ratio", "user_miss_rate",
               "user_median_area_ratio"]].set_index("history_runs")


@dataclass(frozen=True, eq=False)
class Pooled:
    """The fleet of several seeds: claims about rates should not hang on one draw."""

    config: SLOConfig
    seeds: tuple
    alphas: tuple
    per_run: pd.DataFrame  # evaluate_fleet's held-out runs of every seed (a ``seed`` column added)
    histories: tuple  # History per seed
    slos: tuple  # infer_slo on the training runs, per seed
    fits: tuple  # evaluate_fleet's fits per seed: (template, alpha) -> SkylineFit

    def summary(self) -> pd.DataFrame:
        return fleet_summary(self.per_run)

    def of_seed(self, seed: int) -> pd.DataFrame:
        """The held-out runs of one seed."""
        return self.per_run[self.per_run.seed == seed]

    def user_ratios(self) -> pd.DataFrame:
        """Fig. 2a over every seed's periodic runs (template names get a ``seed:`` prefix)."""
        return pd.concat([user_ratios(h, kinds=PERIODIC_KINDS).assign(template=lambda d, s=s: f"{s}:" + d.template)
                          for s, h in zip(self.seeds, self.histories)], ignore_index=True)

    def slo(self) -> pd.DataFrame:
        """Every seed's inferred SLOs, one table (index ``seed:template``)."""
        return pd.concat([slo.rename(index=lambda t, s=s: f"{s}:{t}") for s, slo in zip(self.seeds, self.slos)])

    def harm(self) -> pd.DataFrame:
        """§9.1's proxy with the pairs of every seed added up."""
        total = sum(consumer_harm(h, slo)[["pairs", "consumer_failures"]] for h, slo in zip(self.histories, self.slos))
        return total.assign(p_consumer_fail=total.consumer_failures / total.pairs.where(total.pairs > 0))

    def with_slo_share(self) -> float:
        """Share of the periodic templates' runs whose template got an actionable SLO (§9.1: over 70%)."""
        hits = total = 0
        for h, slo in zip(self.histories, self.slos):
            periodic = h.runs[h.runs.kind.isin(PERIODIC_KINDS)]
            hits += int(periodic.template.isin(slo.index[slo.actionable]).sum())
            total += len(periodic)
        return hits / total

    def detection_errors(self) -> list[str]:
        """Templates whose periodicity or period detection got wrong, over every seed (empty: none).

        A periodic template with fewer than :data:`MIN_SUBMISSIONS` submissions is *expected* to stay
        unrecognised: that is the detector's documented minimum, not an error."""
        bad = []
        for s, h in zip(self.seeds, self.histories):
            d = _detected(h, self.config)
            should = d.kind.isin(PERIODIC_KINDS) & (d.n_submissions >= MIN_SUBMISSIONS)
            wrong = (d.periodic != should) | (d.periodic & ~np.isclose(d.period, d.true_period))
            bad += [f"seed {s}: {t} ({d.kind[t]}, period {d.true_period[t]:g} s, found {d.period[t]:g} s, "
                    f"periodic={bool(d.periodic[t])})" for t in d.index[wrong]]
        return bad


def _fleet_point(config: SLOConfig) -> FleetEvaluation:
    """pooled_fleet's point: the fleet of ``config.seed``'s history with R* at ``config.alpha``."""
    return evaluate_fleet(run_history(config), (config.alpha,), train_fraction=config.train_fraction,
                          beta_fraction=config.beta_fraction, max_history=config.history_runs,
                          slo_options=config.slo_options())


def _fleet_tables(ev: FleetEvaluation) -> dict:
    """What a pooled_fleet point sends back: the tables, not the history (the caller draws it again)."""
    return {"per_run": ev.per_run, "slo": ev.slo, "fits": ev.fits}


def _merge_alphas(points: list[dict], alphas: tuple) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """``evaluate_fleet(history, alphas)`` put together from one evaluation per alpha of the same history:
    they hold the same held-out runs in the same order, each a user row then its alpha's row; the whole
    has each run's user row then one row per alpha, and the fits template by template."""
    pairs = len(points[0]["per_run"]) // 2
    parts = [points[0]["per_run"].iloc[0::2]] + [p["per_run"].iloc[1::2] for p in points]
    order = (np.arange(len(parts)) * pairs + np.arange(pairs)[:, None]).ravel()  # run by run, user first
    per_run = pd.concat(parts).iloc[order].reset_index(drop=True)
    names = dict.fromkeys(name for name, _ in points[0]["fits"])
    fits = {(name, a): p["fits"][(name, a)] for name in names for a, p in zip(alphas, points)}
    return per_run, points[0]["slo"], fits


def pooled_fleet(config: SLOConfig, seeds: Sequence[int] | None = None,
                 alphas: Sequence[float] | None = None, *, client=None, cache=None) -> Pooled:
    """:func:`alpha_sweep` over several seeds (default: ``config.seed`` and the next two), with
    ``alphas`` (default :data:`FLEET_ALPHAS` and ``config.alpha``). Each (seed, alpha) is a point of one
    :func:`cluster_sim.sweep.run_grid` sweep (``client`` and ``cache`` go to it)."""
    seeds = tuple(int(s) for s in (seeds if seeds is not None else (config.seed, config.seed + 1, config.seed + 2)))
    alphas = tuple(sorted(set(FLEET_ALPHAS) | {config.alpha})) if alphas is None else tuple(alphas)
    if not seeds or not alphas:
        raise ValueError(f"seeds={seeds!r} and alphas={alphas!r} must not be empty: give at least one of each")
    # seed by seed, every alpha for each: in this process a seed's history is drawn once (run_history remembers it)
    grid = [{"seed": s, "alpha": a} for s in seeds for a in alphas]
    df = run_grid(_fleet_point, config, grid, metrics=_fleet_tables, client=client, cache=cache)
    points = df[["per_run", "slo", "fits"]].to_dict("records")
    rows, histories, slos, fits = [], [], [], []
    for k, s in enumerate(seeds):
        per_run, slo, fit = _merge_alphas(points[k * len(alphas):(k + 1) * len(alphas)], alphas)
        rows.append(per_run.assign(seed=s))
        histories.append(run_history(config.replace(seed=s))), slos.append(slo), fits.append(fit)
    return Pooled(config, seeds, alphas, pd.concat(rows, ignore_index=True), tuple(histories), tuple(slos),
                  tuple(fits))


def fleet_summary(per_run: pd.DataFrame) -> pd.DataFrame:
    """Per policy (user first, then by alpha): runs, miss rate, share of the misses where the run outlived
    R* (``minutes`` infinite), median peak and area ratios, and ``typical_factor``: how far from 1:1 the
    area ratio typically is, in either direction (``exp`` of the median ``|log ratio|``: 2 means half the
    runs got within a factor of 2 of what they used). A median ratio near 1 can hide over- and
    under-provisioned runs that cancel; the typical factor cannot."""
    g = per_run.groupby("policy", sort=False)
    with np.errstate(divide="ignore"):  # an empty R* (alpha = 1 on a sparse job) is infinitely far from 1:1
        log_off = np.abs(np.log(per_run.area_ratio.to_numpy()))
    out = pd.DataFrame({"runs": g.size(), "miss_rate": g.missed.mean(),
                        "outlived_share": g.apply(lambda d: float((~np.isfinite(d.minutes[d.missed])).mean())
                                                  if d.missed.any() else 0.0, include_groups=False),
                        "median_peak_ratio": g.peak_ratio.median(), "median_area_ratio": g.area_ratio.median(),
                        "typical_factor": np.exp(pd.Series(log_off, index=per_run.index).groupby(per_run.policy,
                                                                                                 sort=False).median())})
    order = sorted(out.index, key=lambda p: -1.0 if p == "user" else float(p.split("=")[1]))
    return out.loc[order]


def run_history(config: SLOConfig) -> History:
    """The history :func:`run` learns from (the same draw for the same config).

    The last few draws are kept: a panel moving alpha, beta or a percentile redraws from the same
    history, so only the inference and the LPs run again. Each call returns its own copy: a reader
    may change it without changing what the next call (or :func:`run`) learns from.
    """
    return _history(config.seed, config.history_params())


@remembered(maxsize=4)
def _history(seed: int, params) -> History:
    return generate_history(np.random.default_rng(seed), params)


def regulariser_sweep(result: SLOResult, fractions: Sequence[float] = (0.0, 0.1, 0.5, 1.0, 2.0)) -> pd.DataFrame:
    """R* of the focus job at ``config.alpha`` for several beta fractions: how lazy it is (epsilon), what it
    costs (over, area) and how many held-out runs outlive it."""
    rows = []
    for b in fractions:
        f = fit_skyline(result.focus_runs, result.config.alpha, beta_fraction=float(b))
        outlived = sum(math.isinf(elastic_completion(f.skyline, h)) for h in result.focus_held_out)
        rows.append({"beta_fraction": float(b), "beta": f.beta, "epsilon": f.epsilon, "over A_o": f.over,
                     "final debt A_u": f.under, "area": f.area, "held-out runs outliving R*":
                     f"{outlived}/{len(result.focus_held_out)}"})
    return pd.DataFrame(rows).set_index("beta_fraction")


# ---- §5's lazy solution ---------------------------------------------------------------------------------------
#: three runs; run 0 works at steps 0-1, runs 1-2 at steps 1-2, and run 2 ends with a burst of 200
LAZY_RUNS = ((1.0, 1.0, 0.0, 0.0), (0.0, 1.0, 1.0, 0.0), (0.0, 1.0, 1.0, 200.0))


@dataclass(frozen=True, eq=False)
class LazyExample:
    runs: np.ndarray
    alpha: float
    lazy: SkylineFit  # beta_fraction = 0: one solve, the lazy optimum
    regularised: SkylineFit  # beta = beta_fraction * V

    def table(self) -> pd.DataFrame:
        """The two solutions and their terms, each scored with and without the regulariser's beta."""
        rows = {}
        for name, fit in (("without the regulariser", self.lazy), ("with beta = %g V" % self.regularised.beta_fraction,
                                                                   self.regularised)):
            p = penalty(fit.skyline, self.runs, self.alpha, self.regularised.beta)
            rows[name] = {"R*": np.round(fit.skyline, 6).tolist(), "over A_o": p.over, "final debt A_u": p.under,
                          "epsilon": p.epsilon, "J without beta": self.alpha * p.over + (1 - self.alpha) * p.under,
                          "J with beta": p.objective}
        return pd.DataFrame.from_dict(rows, orient="index")


def lazy_example(alpha: float = 0.5, beta_fraction: float = 0.1, runs=LAZY_RUNS) -> LazyExample:
    """Fit R* to ``runs`` without and with the regulariser (§5, "Avoiding lazy solutions")."""
    arr = np.asarray(runs, dtype=float)
    return LazyExample(arr, alpha, fit_skyline(arr, alpha, beta_fraction=0.0),
                       fit_skyline(arr, alpha, beta_fraction=beta_fraction))


# ---- the paper's numbers beside ours ----------------------------------------------------------------------------
def month_lp_size(n_runs: int = 30, n_steps: int = 1440) -> dict[str, tuple[int, int]]:
    """Variables and constraints of the regularised LP for ``n_runs`` x ``n_steps`` (a month at one-minute
    steps), in the paper's casting and in the compact one (built on a seeded stand-in, not solved)."""
    runs = np.random.default_rng(0).uniform(0.0, 10.0, (n_runs, n_steps))
    out = {}
    for name, build in (("recursion", build_lp), ("compact", build_compact_lp)):
        lp = build(runs, 0.01, 1.0)
        out[name] = (lp.n_variables, lp.n_constraints)
    return out
