"""Predicting downstream jobs (§3): will one come (T1), and when (T2)? Train on one week, test on the next.

For an upstream job ``ju`` of template ``Ju`` and a recurring template ``Jd`` that has consumed
``Ju``'s output before:

* **T1** predicts that a job of ``Jd`` will come and read ``ju``'s output if at least ``tr``% of
  the training week's jobs of ``Ju`` were read by a job of ``Jd``. Sweeping ``tr`` from 0 to 100
  trades recall for precision (Fig. 2); the paper picks the ``tr`` maximising precision x recall.
* **T2** forecasts the time to dependency (TTD), from ``ju``'s submission to the submission of the
  first job of ``Jd`` reading it, as the training week's median TTD of the pair of templates; it
  is scored on the predictions that are both made and right (RMSE, median absolute error and the
  CDF of the relative error ``(forecast - actual) / actual``, Fig. 3).

Training sees only what had happened by the end of the training week: a read by a job submitted
later does not count. The test week's truth is every later read in the log.

Example
-------
>>> from cluster_sim.wing.lake import LakeConfig, generate_lake
>>> from cluster_sim.wing.provenance import single_hop
>>> lake = generate_lake(LakeConfig.ci())
>>> curve = t1_curve(lake.jobs, single_hop(lake.prov))
>>> list(curve.columns)
['tr', 'precision', 'recall', 'product', 'predicted', 'actual', 'hits']
>>> bool(curve["recall"].is_monotonic_decreasing)          # more selective, less recall
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from .characterise import _check_jobs, classify_templates
from .multihop import drop_self_dependencies, show
from .provenance import DAY

WEEK = 7 * DAY
THRESHOLDS = tuple(range(0, 101, 5))

# The paper's results (§3.2), quoted as published.
PAPER_T1 = {"best tr (%)": 20.0, "recall with a week of training (up to)": 0.95}
PAPER_T2 = {"RMSE (h)": 2.5, "median absolute error (min)": 22.0, "within +-20%": 0.50, "over-estimated by 2x or more": 0.07}


class Pairs(NamedTuple):
    """Upstream jobs with the recurring downstream templates that read them, and the TTD."""

    table: pd.DataFrame  # ju, Ju, Jd, ttd (first downstream submission - ju's submission), first (that submission)
    upstream: pd.DataFrame  # job, template, submit of the recurring jobs that could be read


def _pairs(jobs: pd.DataFrame, deps: pd.DataFrame, recurring: pd.Index) -> Pairs:
    J = jobs.set_index("job")
    d = drop_self_dependencies(deps[["job", "depOn"]])  # a job reading its own output predicts no other job
    t_down = J["template"].reindex(d["job"]).to_numpy()
    t_up = J["template"].reindex(d["depOn"]).to_numpy()
    keep = pd.Index(t_down).isin(recurring) & pd.Index(t_up).isin(recurring)
    sub = J["submit"]
    p = pd.DataFrame({"ju": d["depOn"].to_numpy()[keep], "Ju": t_up[keep], "Jd": t_down[keep],
                      "down_submit": sub.reindex(d["job"]).to_numpy()[keep]})
    p = p.groupby(["ju", "Ju", "Jd"], as_index=False)["down_submit"].min().rename(columns={"down_submit": "first"})
    p["ttd"] = p["first"] - sub.reindex(p["ju"]).to_numpy()
    up = jobs.loc[jobs["template"].isin(recurring), ["job", "template", "submit"]]
    return Pairs(p, up)


def _weeks(jobs: pd.DataFrame, train_week: int) -> tuple[float, float, float]:
    if isinstance(train_week, bool) or not isinstance(train_week, (int, np.integer)) or train_week < 0:
        raise ValueError(f"train_week={show(train_week)} is not allowed: need an integer >= 0")
    t0 = np.floor(jobs["submit"].min() / DAY) * DAY + train_week * WEEK
    span = jobs["submit"].max() - t0
    if span < 2 * WEEK - DAY:
        raise ValueError(f"train_week={train_week} needs two weeks of log from day {t0 / DAY:g}: "
                         f"the log has {max(span, 0) / DAY:.1f} days from there")
    return t0, t0 + WEEK, t0 + 2 * WEEK


def _recurring(jobs: pd.DataFrame, deps: pd.DataFrame, test_end: float, recurring) -> pd.Index:
    if recurring is not None:
        return pd.Index(recurring)
    known = jobs[jobs["submit"] < test_end]  # what Wing knows by the end of the test week
    tc = classify_templates(known, deps[deps["job"].isin(known["job"])])
    return tc.index[tc["recurring"]]


def _fit(pairs: Pairs, a: float, b: float, recurring: pd.Index) -> pd.DataFrame:
    up = pairs.upstream[(pairs.upstream["submit"] >= a) & (pairs.upstream["submit"] < b)]
    seen = pairs.table[pairs.table["ju"].isin(up["job"]) & (pairs.table["first"] < b)]
    n_up = up.groupby("template").size()
    model = seen.groupby(["Ju", "Jd"]).agg(read=("ju", "nunique"), ttd=("ttd", "median")).reset_index()
    model["frac"] = model["read"] / model["Ju"].map(n_up).to_numpy()
    model.attrs["recurring"] = pd.Index(recurring)
    return model


def train(jobs: pd.DataFrame, deps: pd.DataFrame, train_week: int = 0, *, recurring: pd.Index | None = None) -> pd.DataFrame:
    """The model: per (Ju, Jd) seen in the training week, the share of Ju's jobs Jd read (``frac``) and the median TTD."""
    jobs = _check_jobs(jobs)
    a, b, c = _weeks(jobs, train_week)
    recurring = _recurring(jobs, deps, c, recurring)
    return _fit(_pairs(jobs, deps, recurring), a, b, recurring)


def _evaluate(jobs, deps, train_week, recurring):
    """Train on ``train_week`` and build the next week's test sets, reading the log once: (model, actual, candidates)."""
    jobs = _check_jobs(jobs)
    a, b, c = _weeks(jobs, train_week)
    recurring = _recurring(jobs, deps, c, recurring)
    pairs = _pairs(jobs, deps, recurring)
    model = _fit(pairs, a, b, recurring)
    up = pairs.upstream[(pairs.upstream["submit"] >= b) & (pairs.upstream["submit"] < c)]
    actual = pairs.table[pairs.table["ju"].isin(up["job"])]
    cand = up.rename(columns={"job": "ju", "template": "Ju"})[["ju", "Ju"]].merge(model, on="Ju")
    return model, actual, cand


def _check_thresholds(thresholds) -> np.ndarray:
    th = np.asarray(list(thresholds), dtype=float)
    if th.size == 0 or np.isnan(th).any() or (th < 0).any() or (th > 100).any():
        raise ValueError(f"thresholds={show(list(thresholds))} is not allowed: need percentages in [0, 100]")
    return th


def _check_tr(tr) -> float:
    if isinstance(tr, bool) or not (isinstance(tr, (int, float, np.integer, np.floating)) and 0 <= tr <= 100):
        raise ValueError(f"tr={show(tr)} is not allowed: need a percentage in [0, 100]")
    return float(tr)


def _curve(actual: pd.DataFrame, cand: pd.DataFrame, th: np.ndarray) -> pd.DataFrame:
    truth = set(zip(actual["ju"], actual["Jd"]))
    hit = np.array([(u, d) in truth for u, d in zip(cand["ju"], cand["Jd"])], dtype=bool)
    frac = cand["frac"].to_numpy()
    rows = []
    for tr in th:
        pred = frac >= tr / 100.0 - 1e-12
        n_pred, n_hit = int(pred.sum()), int((pred & hit).sum())
        precision = n_hit / n_pred if n_pred else np.nan
        recall = n_hit / len(truth) if truth else np.nan
        rows.append((tr, precision, recall, precision * recall if n_pred else 0.0, n_pred, len(truth), n_hit))
    return pd.DataFrame(rows, columns=["tr", "precision", "recall", "product", "predicted", "actual", "hits"])


def _t2(actual: pd.DataFrame, cand: pd.DataFrame, tr: float) -> pd.DataFrame:
    pred = cand[cand["frac"] >= tr / 100.0 - 1e-12]
    m = pred.merge(actual, on=["ju", "Ju", "Jd"], suffixes=("_model", ""))
    out = pd.DataFrame({"ju": m["ju"], "Jd": m["Jd"], "forecast": m["ttd_model"], "actual": m["ttd"]})
    out["error"] = out["forecast"] - out["actual"]
    # a TTD of zero cannot be scored relatively (it does not happen when reads follow writes)
    out["relative"] = out["error"] / out["actual"].where(out["actual"] > 0)
    return out.reset_index(drop=True)


def t1_curve(
    jobs: pd.DataFrame,
    deps: pd.DataFrame,
    train_week: int = 0,
    thresholds=THRESHOLDS,
    *,
    recurring: pd.Index | None = None,
) -> pd.DataFrame:
    """Fig. 2: precision and recall of T1 at each threshold ``tr`` (percent), trained on ``train_week``, tested on the next."""
    th = _check_thresholds(thresholds)
    _, actual, cand = _evaluate(jobs, deps, train_week, recurring)
    return _curve(actual, cand, th)


def best_threshold(curve: pd.DataFrame) -> float:
    """The ``tr`` maximising precision x recall (the lowest such ``tr`` on a tie)."""
    if "product" not in curve.columns or curve["product"].isna().all():
        raise ValueError("curve needs a 'product' column with at least one number (from t1_curve)")
    return float(curve.loc[curve["product"].idxmax(), "tr"])


def t2_errors(
    jobs: pd.DataFrame,
    deps: pd.DataFrame,
    train_week: int = 0,
    tr: float = 20.0,
    *,
    recurring: pd.Index | None = None,
) -> pd.DataFrame:
    """T2 on the test week: one row per prediction that was made (at ``tr``) and came true.

    Columns ``ju``, ``Jd``, ``forecast`` and ``actual`` TTD (seconds), ``error`` (forecast - actual)
    and ``relative`` (error / actual).
    """
    tr = _check_tr(tr)
    _, actual, cand = _evaluate(jobs, deps, train_week, recurring)
    return _t2(actual, cand, tr)


def predict(
    jobs: pd.DataFrame,
    deps: pd.DataFrame,
    train_week: int = 0,
    tr: float = 20.0,
    thresholds=THRESHOLDS,
    *,
    recurring: pd.Index | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`t1_curve` and :func:`t2_errors` together, training once: ``(curve, errors)``."""
    th, tr = _check_thresholds(thresholds), _check_tr(tr)
    _, actual, cand = _evaluate(jobs, deps, train_week, recurring)
    return _curve(actual, cand, th), _t2(actual, cand, tr)


def t2_summary(errors: pd.DataFrame) -> dict[str, float]:
    """RMSE (h), median absolute error (min), and the shares within +-20% and over-estimated by 2x or more."""
    if len(errors) == 0:
        raise ValueError("errors is empty: no prediction was both made and right (lower tr, or a longer log)")
    e = errors["error"].to_numpy()
    r = errors["relative"].dropna().to_numpy()
    return {
        "predictions": float(len(errors)),
        "RMSE (h)": float(np.sqrt(np.mean(e**2)) / 3600.0),
        "median absolute error (min)": float(np.median(np.abs(e)) / 60.0),
        "within +-20%": float(np.mean(np.abs(r) <= 0.2)) if r.size else float("nan"),
        "over-estimated by 2x or more": float(np.mean(r >= 1.0)) if r.size else float("nan"),
    }


def relative_error_cdf(errors: pd.DataFrame, grid=None) -> pd.DataFrame:
    """Fig. 3's CDF of ``(forecast - actual) / actual`` on a grid (default -1 .. 3)."""
    g = np.linspace(-1.0, 3.0, 81) if grid is None else np.asarray(grid, dtype=float)
    r = np.sort(errors["relative"].dropna().to_numpy())
    return pd.DataFrame({"relative_error": g, "cdf": np.searchsorted(r, g, side="right") / max(r.size, 1)})
