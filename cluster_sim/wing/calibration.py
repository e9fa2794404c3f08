"""The lake beside the paper's published statistics: what the generator is calibrated to, and how close.

Policies are compared on a lake only after its statistics are set to the paper's (§1, §2.3, §4.5.3,
§7.1): a lake with fewer dependencies, shallower value or priorities that already know the DAG
would decide the comparison before any policy runs. :data:`TARGETS` holds each statistic the
generator is calibrated to, the paper's value (quoted, or inferred where the paper gives none, and
then said so), and the tolerance within which the mean over seeds must fall;
:func:`lake_statistics` measures them on one lake from what the generator knows (its true
dependencies and downloads) and :func:`calibration_table` over seeds.

* **dependencies per job**: 16M dependencies over 4M jobs (§1), 160k a day over 40k (§6.1);
* **value hidden from job-local valuation**: 83 % (§4.5.3), Owl's aggregate within ω = a week over
  the jobs whose window the log covers (``1 - sum(k) / sum(agg)``);
* **producers with downloads**: the paper gives no number; it implies most producers are
  downloaded themselves (Wing-Direct, which sees only a job's own downloads, completes about as many
  jobs as Wing-Agg, §7.2, fails 13 % of jobs to Wing-Agg's 11 %, §7.3, and beats PRIO), so we ask
  for at least three in four;
* **priority inversions within a queue**: 21 % of recurring templates have a recurring consumer of
  higher priority (Obs. 2), counted within one queue, as priorities are only comparable there
  (footnote 3), with priorities drawn without knowing the DAG (``priorities="independent"``);
* **ad hoc jobs above their queue's mean recurring priority**: "up to 33 %" (Obs. 2);
* **ad hoc share of the value**: recurring jobs carry 9x the value of ad hoc ones (§7.1), 10 %;
* **dependencies within a week**: 98 % (footnote 7);
* **recurring jobs** 68 % (Obs. 1) and **cross-organisation dependencies** 33 % (Obs. 4), at every number of
  organisations: the generator's ``cross_org_share`` is the chance that an input is another organisation's,
  and each input is a different template, taken from an earlier layer when the one above has none of the
  reader's side (before, at Lab 05's 30 organisations, repeated same-organisation picks collapsed and an empty
  side fell back to any organisation: 0.555 over ten ``paper`` lakes, and 0.13 inverted templates, since an
  inversion is counted within a queue).

"Jobs depending on at least one other job" (almost 80 %, §1) is shown beside them and not
calibrated: ours are more connected (see the notebook).

>>> from cluster_sim.wing.lake import LakeConfig, generate_lake
>>> stats = lake_statistics(generate_lake(LakeConfig.ci()))
>>> sorted(TARGETS) == sorted(k for k in stats if k in TARGETS)
True
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .lake import Lake, LakeConfig, generate_lake
from .multihop import owl_closure
from .provenance import DAY

OMEGA = 7 * DAY  # the paper's multi-hop window ω (§4.5.1)


@dataclass(frozen=True)
class Target:
    """One published statistic: the paper's value, where it says so, and the band our mean must fall in."""

    paper: float | None  # None: the paper gives no number (the source says what it implies)
    source: str
    low: float
    high: float
    note: str = ""


TARGETS: dict[str, Target] = {
    "dependencies per job": Target(4.0, "§1: 16M dependencies / 4M jobs; §6.1: 160k / 40k a day", 3.4, 4.6),
    "value hidden from job-local valuation": Target(0.83, "§4.5.3, Fig. 6", 0.77, 0.89),
    "producers with downloads": Target(None, "inferred (§7.2-§7.3: Wing-Direct completes about as many jobs as "
                                            "Wing-Agg); no number in the paper", 0.75, 1.0, "at least 75 %"),
    "templates with a priority-inverted consumer in their queue": Target(0.21, "Obs. 2, footnote 3", 0.16, 0.26),
    "ad hoc jobs above their queue's mean recurring priority": Target(0.33, "Obs. 2 ('up to 33 %')", 0.23, 0.38),
    "ad hoc share of downloads": Target(0.10, "§7.1: recurring jobs carry 9x the value of ad hoc ones", 0.07, 0.13),
    "dependencies within a week": Target(0.98, "footnote 7", 0.96, 1.0),
    "recurring job share": Target(0.68, "Obs. 1", 0.66, 0.70),
    "cross-org share of dependencies": Target(0.33, "Obs. 4", 0.23, 0.43),
}
#: shown beside the targets, not calibrated (the paper's value, its source)
SHOWN = {"jobs depending on at least one other job": (0.80, "§1 ('almost 80 %')")}


def lake_statistics(lake: Lake, omega: float = OMEGA) -> dict[str, float]:
    """Every statistic of :data:`TARGETS` and :data:`SHOWN` on ``lake`` (from the generator's truth)."""
    if not isinstance(lake, Lake):
        raise ValueError(f"lake must be a Lake (generate_lake's result), got {type(lake).__name__}")
    J = lake.jobs.set_index("job")
    t = lake.truth
    n_j, n_d = max(len(J), 1), max(len(t), 1)
    k = lake.downloads.groupby("job").size().astype(float).reindex(J.index, fill_value=0.0)
    valid = J.index[J["end"] <= lake.horizon - omega]
    # only the valid jobs' aggregates are read: the closure skips the pairs none of them needs (bit for bit the same)
    agg, _ = owl_closure(t[["job", "depOn"]], {"k": k}, omega=omega, jobs=lake.jobs, needed=valid)
    total = float(agg["k"].reindex(valid).sum())
    rec = J["kind"] != "adhoc"
    producers = pd.Index(t["depOn"].unique())
    # Obs. 2 within a queue: recurring templates with a recurring consumer of higher priority in the same queue
    both = rec.reindex(t["job"]).to_numpy() & rec.reindex(t["depOn"]).to_numpy()
    rr = t[both]
    same_queue = J["queue"].reindex(rr["job"]).to_numpy() == J["queue"].reindex(rr["depOn"]).to_numpy()
    higher = J["priority"].reindex(rr["job"]).to_numpy() > J["priority"].reindex(rr["depOn"]).to_numpy()
    templates = J.loc[rec, "template"].nunique()
    inverted = J["template"].reindex(rr["depOn"][same_queue & higher]).nunique()
    qmean = J[rec].groupby("queue")["priority"].mean()
    adhoc = J[~rec]
    adhoc_k = float(k[~rec].sum())
    return {
        "dependencies per job": len(t) / n_j,
        "value hidden from job-local valuation": 1.0 - float(k.reindex(valid).sum()) / total if total > 0 else np.nan,
        "producers with downloads": float((k.reindex(producers) > 0).mean()) if len(producers) else np.nan,
        "templates with a priority-inverted consumer in their queue": inverted / max(templates, 1),
        "ad hoc jobs above their queue's mean recurring priority":
            float((adhoc["priority"] > adhoc["queue"].map(qmean)).mean()) if len(adhoc) else np.nan,
        "ad hoc share of downloads": adhoc_k / float(k.sum()) if k.sum() > 0 else np.nan,
        "dependencies within a week": float((t["lag"] <= 7 * DAY).mean()) if len(t) else np.nan,
        "recurring job share": float(rec.mean()),
        "cross-org share of dependencies": float((J["org"].reindex(t["job"]).to_numpy()
                                                  != J["org"].reindex(t["depOn"]).to_numpy()).sum() / n_d),
        "jobs depending on at least one other job": t["job"].nunique() / n_j,
    }


def statistics_of(config: LakeConfig) -> dict[str, float]:
    """:func:`lake_statistics` of the lake ``config`` generates (what :func:`calibration_table` runs per seed)."""
    return lake_statistics(generate_lake(config))


def calibration_table(config: LakeConfig, seeds, *, client=None, cache=None, lakes=(), measured=None
                      ) -> pd.DataFrame:
    """:func:`lake_statistics` of ``config``'s lake at each of ``seeds``, beside the paper's.

    One row per statistic: the paper's value and source, the band the mean must fall in (None for
    the statistics only shown), our mean, standard deviation, min and max over the seeds, and
    ``within`` (the mean inside the band). The per-seed values are in ``attrs["per_seed"]``. The
    seeds' lakes go through :func:`cluster_sim.sweep.run_grid` (``client`` and ``cache`` go to it):
    cached, and on two Dask workers when they would take over a minute (a paper-scale lake takes
    seconds to generate and to measure). ``lakes``: lakes already generated for some of the seeds (Lab 05's
    claims prepared them: :func:`cluster_sim.wing.scheduling.experiments.remembered_lakes`), measured instead
    of generated again (the same lake, so the same numbers); a lake of another config or seed is refused.
    ``measured``: :func:`lake_statistics` already taken for some of the seeds (a dict seed -> statistics; Lab 05
    measures each lake on the Dask worker that prepared it: :func:`cluster_sim.wing.scheduling.lake_calibration`)."""
    from ..sweep import run_grid

    if not isinstance(config, LakeConfig):
        raise ValueError(f"config must be a LakeConfig (e.g. WingConfig.ci().lake_config()), got {type(config).__name__}")
    seeds = list(seeds)
    if len(seeds) < 2 or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"seeds={seeds!r} must be at least two integer seeds (one seed gives no spread)")
    given = _given_lakes(config, [int(s) for s in seeds], lakes)
    measured = {} if measured is None else measured
    if not isinstance(measured, dict) or any(int(s) not in seeds for s in measured):
        raise ValueError(f"measured={measured!r} is not allowed: give a dict seed -> lake_statistics of that seed's "
                         f"lake, for seeds among {seeds}")
    values = {int(seed): dict(v) for seed, v in measured.items()}
    values.update({seed: lake_statistics(lake) for seed, lake in given.items() if seed not in values})
    rest = [int(s) for s in seeds if int(s) not in values]
    if rest:
        runs = run_grid(statistics_of, config, {}, seeds=rest, client=client, cache=cache)
        values.update(zip(rest, runs.to_dict("records")))
    runs = pd.DataFrame([values[int(s)] for s in seeds])
    names = list(TARGETS) + list(SHOWN)
    per_seed = pd.DataFrame(runs[names].to_numpy(float), columns=names, index=pd.Index(seeds, name="seed"))
    rows = []
    for name in list(TARGETS) + list(SHOWN):
        v = per_seed[name]
        target = TARGETS.get(name)
        paper, source = (target.paper, target.source) if target else SHOWN[name]
        rows.append({"statistic": name, "paper": paper, "source": source,
                     "band": f"{target.low:g}-{target.high:g}" if target else "not calibrated",
                     "ours (mean)": float(v.mean()), "sd": float(v.std(ddof=1)), "min": float(v.min()),
                     "max": float(v.max()),
                     "within": bool(target.low <= v.mean() <= target.high) if target else None})
    out = pd.DataFrame(rows).set_index("statistic")
    out.attrs["per_seed"] = per_seed
    return out


def _given_lakes(config: LakeConfig, seeds: list[int], lakes) -> dict[int, Lake]:
    """``lakes`` by seed, each checked to be ``config``'s lake at one of ``seeds``."""
    if isinstance(lakes, Lake) or not hasattr(lakes, "__iter__"):
        raise ValueError(f"lakes={type(lakes).__name__} is not allowed: give a list of lakes (e.g. "
                         "remembered_lakes(config, seeds)), or () for none")
    given = {}
    for lake in lakes:
        if not isinstance(lake, Lake):
            raise ValueError(f"lakes holds a {type(lake).__name__}: give the Lake objects generate_lake made")
        if lake.config.seed not in seeds or lake.config != config.replace(seed=lake.config.seed):
            raise ValueError(f"lakes holds the lake of another config (seed {lake.config.seed}): the calibration "
                             f"measures config's lakes at seeds {seeds}; give those, or leave them out")
        given[lake.config.seed] = lake
    return given
