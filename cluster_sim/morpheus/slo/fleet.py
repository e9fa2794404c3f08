"""Fleet metrics (paper §2.2 and §9.1): provisioning ratios, worst-case SLO misses, slack, drift.

* :func:`user_ratios`: provisioned / used for the users' own provisioning, peak and area, one row per
  successful run (Fig. 2a).
* :func:`evaluate_fleet`: the paper's 70/30 split per periodic template. SLOs and R* (for each
  alpha) are learnt on the first 70% of the runs; every held-out run is then replayed as elastic
  work against (a) the user's constant provisioning and (b) R* for each alpha, with **no
  opportunistic capacity**: at step k the run may use at most the allocation, falls into debt when
  it needs more, and catches up when it gets more (the same debt as the LP's). R* ends after its K
  steps, so a debt left then is never paid; the user's containers stay with the job until it ends.
  A run misses its SLO when it finishes after d_j. That is the paper's *worst-case SLO misses*
  (Fig. 9c); the provisioned / used ratios of the same runs are Fig. 9b.
* :func:`slack_cdf`: the CDF of ``(T_outRead - T_end) / (T_end - T_start)`` over templates (Fig. 9a).
* :func:`rstar_over_time`: R* refitted as runs accumulate (all of them or a sliding window): how it
  tightens with history and re-adapts after drift (§2.3, Fig. 3 step 6).
* :func:`consumer_harm`: the §9.1 proxy. For each run of a job A with an SLO, did its first
  consumer B fail, split by whether A met its SLO, missed it or failed:
  ``P(B fail | A miss) ~ P(B fail | A fail) > 4 P(B fail | A meet)`` in the paper's trace.

Example
-------
>>> elastic_completion([2, 2, 2], [3, 1, 1])          # short by 1 at first, caught up at step 1
3
>>> elastic_completion([2, 2], [3, 3])                # R* ends with debt left: never finishes
inf
>>> elastic_completion([2, 2], [3, 3], after=2.0)     # a user's containers stay: one more minute
3
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import validate
from .runs import align_skylines
from .history import History
from .inference import infer_slo
from .skyline import DEFAULT_BETA_FRACTION, SkylineFit, fit_skyline

PERIODIC_KINDS = ("periodic", "off_kilter")
_DONE = 1e-9  # debts below this are rounding, not work


def elastic_completion(allocation, skyline, *, after: float = 0.0) -> float:
    """Whole minutes until a run finishes when it may use at most ``allocation[k]`` containers at
    step k (``after`` per step once the allocation has ended); ``inf`` if it never finishes.

    The run falls into debt ``D_k = (D_k-1 + skyline_k - allocation_k)+`` and is done at the first
    step, at or after its own last step, where the debt is zero.
    """
    alloc = np.asarray(allocation, dtype=float).ravel()
    need = np.asarray(skyline, dtype=float).ravel()
    if need.size == 0:
        raise ValueError("skyline is empty: a run has at least one step")
    if not (np.isfinite(alloc).all() and np.isfinite(need).all()) or (alloc < 0).any() or (need < 0).any():
        raise ValueError("allocation and skyline must be finite and >= 0")
    rest = validate.number(after, "after", lo=0)
    n = max(alloc.size, need.size)
    a = np.full(n, rest)
    a[: alloc.size] = alloc
    s = np.zeros(n)
    s[: need.size] = need
    d = 0.0
    for k in range(n):
        d = max(d + s[k] - a[k], 0.0)
        if k >= need.size - 1 and d <= _DONE:
            return k + 1
    if rest <= 0:
        return math.inf
    return n + math.ceil(d / rest - _DONE)


def user_ratios(history: History, *, kinds: Sequence[str] | None = None) -> pd.DataFrame:
    """Provisioned / used per successful run: ``peak_ratio`` (containers / peak used) and
    ``area_ratio`` (containers x minutes run / container-minutes used). Fig. 2a's two curves."""
    runs = history.runs[~history.runs.failed]
    if kinds is not None:
        runs = runs[runs.kind.isin(kinds)]
    peak = np.array([history.skylines[t][r].max() for t, r in zip(runs.template, runs.run)])
    area = np.array([history.skylines[t][r].sum() for t, r in zip(runs.template, runs.run)])
    out = runs[["template", "run", "kind", "provisioned"]].copy()
    out["peak_ratio"] = out.provisioned.to_numpy() / peak
    out["area_ratio"] = out.provisioned.to_numpy() * runs.steps.to_numpy() / area
    return out.reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class FleetEvaluation:
    """What :func:`evaluate_fleet` measured."""

    per_run: pd.DataFrame  # one row per (held-out run, policy)
    slo: pd.DataFrame  # infer_slo on the training runs
    fits: dict  # (template, alpha) -> SkylineFit

    def summary(self) -> pd.DataFrame:
        """Per policy: held-out runs, worst-case SLO miss rate, median peak and area ratios."""
        g = self.per_run.groupby("policy", sort=False)
        return pd.DataFrame({
            "runs": g.size(),
            "miss_rate": g.missed.mean(),
            "median_peak_ratio": g.peak_ratio.median(),
            "median_area_ratio": g.area_ratio.median(),
        })


def _policy(alpha: float) -> str:
    return f"alpha={alpha:g}"


def evaluate_fleet(
    history: History,
    alphas: Sequence[float] = (0.01, 0.1, 0.5),
    *,
    train_fraction: float = 0.7,
    beta_fraction: float = DEFAULT_BETA_FRACTION,
    max_history: int | None = None,
    slo_options: dict | None = None,
) -> FleetEvaluation:
    """Fig. 9b and 9c on a synthetic history (see the module docstring).

    Per periodic template with an actionable SLO on its training runs: the user's provisioning and
    R* for each alpha against every successful held-out run. ``max_history`` caps the training runs
    used for R* (the most recent ones).
    """
    alphas = [validate.number(a, "alpha", lo=0, hi=1) for a in alphas]
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction={train_fraction!r} is out of range: allowed 0 < train_fraction < 1")
    runs = history.runs[history.runs.kind.isin(PERIODIC_KINDS)]
    n_train = runs.groupby("template").run.transform(lambda r: int(train_fraction * (r.max() + 1)))
    train, test = runs[runs.run < n_train], runs[(runs.run >= n_train) & ~runs.failed]
    slo = infer_slo(train, **(slo_options or {}))
    rows, fits = [], {}
    for name in slo.index[slo.actionable]:
        held = test[test.template == name]
        trained = [history.skylines[name][r] for r in train[(train.template == name) & ~train.failed].run]
        if max_history is not None:
            trained = trained[-max_history:]
        if len(trained) < 2 or held.empty:
            continue
        matrix = align_skylines(trained)
        d_j = float(slo.at[name, "d_j"])
        policies = [("user", None)]
        for a in alphas:
            fits[(name, a)] = fit_skyline(matrix, a, beta_fraction=beta_fraction)
            policies.append((_policy(a), fits[(name, a)]))
        for run in held.itertuples(index=False):
            sky = history.skylines[name][run.run]
            started = run.t_start - run.period_start
            for policy, fit in policies:
                if fit is None:
                    alloc, after = np.array([float(run.provisioned)]), float(run.provisioned)
                    peak, area = float(run.provisioned), float(run.provisioned) * sky.size
                else:
                    alloc, after = fit.skyline, 0.0
                    peak, area = fit.peak, fit.area
                minutes = elastic_completion(alloc, sky, after=after)
                finish = started + 60.0 * minutes
                rows.append((name, int(run.run), policy, peak / sky.max(), area / sky.sum(), minutes,
                             finish, d_j, bool(finish > d_j)))
    per_run = pd.DataFrame(rows, columns=["template", "run", "policy", "peak_ratio", "area_ratio", "minutes",
                                          "finish", "d_j", "missed"])
    return FleetEvaluation(per_run, slo, fits)


def slack_cdf(slo: pd.DataFrame, *, actionable_only: bool = True) -> pd.DataFrame:
    """Fig. 9a: sorted ``slack_ratio`` of the templates and the share at or below each (``cdf``).

    >>> slo = pd.DataFrame({"slack_ratio": [3.0, 0.5, 2.0, 8.0], "actionable": [True] * 4})
    >>> slack_cdf(slo).cdf.tolist()
    [0.25, 0.5, 0.75, 1.0]
    """
    if "slack_ratio" not in slo.columns:
        raise ValueError(f"slo is missing column 'slack_ratio' (an infer_slo result), got {list(slo.columns)}")
    s = slo[slo.actionable] if actionable_only and "actionable" in slo.columns else slo
    x = np.sort(s.slack_ratio.dropna().to_numpy(dtype=float))
    return pd.DataFrame({"slack_ratio": x, "cdf": np.arange(1, x.size + 1) / max(x.size, 1)})


def rstar_over_time(
    skylines: Sequence,
    alpha: float,
    *,
    window: int | None = None,
    first: int = 3,
    every: int = 1,
    beta_fraction: float = DEFAULT_BETA_FRACTION,
) -> pd.DataFrame:
    """Refit R* before each run ``n >= first`` (every ``every`` runs) on the runs before it (all, or
    the last ``window``), and replay run ``n`` against it.

    One row per refit: ``fitted_at`` (n), ``n_history``, R*'s ``peak`` and ``area``, and the next
    run's ``delay`` (minutes beyond its own length; ``inf`` if it never finishes on R* alone).

    >>> runs = [[2, 2]] * 4 + [[2, 2, 2, 2]] * 4      # the job doubles in length at run 4
    >>> rstar_over_time(runs, 0.1, window=2).delay.tolist()   # one run late, then R* has adapted
    [0.0, inf, 0.0, 0.0, 0.0]
    """
    runs = [np.asarray(r, dtype=float).ravel() for r in skylines]
    if window is not None and (not isinstance(window, (int, np.integer)) or window < 2):
        raise ValueError(f"window={window!r} is not allowed: need None or an integer >= 2")
    if not isinstance(first, (int, np.integer)) or first < 2 or first >= len(runs):
        raise ValueError(f"first={first!r} is not allowed: need 2 <= first < {len(runs)} (the number of runs)")
    if not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"every={every!r} is not allowed: need an integer >= 1")
    rows = []
    for n in range(first, len(runs), every):
        hist = runs[max(0, n - window):n] if window else runs[:n]
        fit: SkylineFit = fit_skyline(align_skylines(hist), alpha, beta_fraction=beta_fraction)
        minutes = elastic_completion(fit.skyline, runs[n])
        rows.append((n, len(hist), fit.peak, fit.area, float(minutes - runs[n].size)))
    return pd.DataFrame(rows, columns=["fitted_at", "n_history", "peak", "area", "delay"])


def consumer_harm(history: History, slo: pd.DataFrame, *, consumer: int = 0) -> pd.DataFrame:
    """The §9.1 proxy on the generator's consumers: ``P(B fails)`` by A's outcome (meet / miss / fail).

    A is every run of a template with an actionable SLO in ``slo``; B its consumer number
    ``consumer`` (0: the first scheduled one). A misses when ``t_end - period_start > d_j``.
    """
    for col in ("d_j", "actionable"):
        if col not in slo.columns:
            raise ValueError(f"slo is missing column {col!r} (an infer_slo result), got {list(slo.columns)}")
    ok = slo[slo.actionable]
    runs = history.runs[history.runs.template.isin(ok.index)]
    reads = history.reads[history.reads.consumer == consumer][["template", "run", "consumer_failed"]]
    pairs = runs.merge(reads, on=["template", "run"], how="inner")
    late = (pairs.t_end - pairs.period_start) > pairs.template.map(ok.d_j)
    outcome = np.where(pairs.failed, "fail", np.where(late, "miss", "meet"))
    g = pairs.groupby(outcome).consumer_failed
    out = pd.DataFrame({"pairs": g.size(), "consumer_failures": g.sum()}).reindex(["meet", "miss", "fail"], fill_value=0)
    out["p_consumer_fail"] = out.consumer_failures / out.pairs.where(out.pairs > 0)
    out.index.name = "outcome_of_A"
    return out
