"""Lab 05's claims (Wing §7): what the paper says of PRIO, Wing-Direct, Wing-Agg, Wing-MIL and the
Oracles, measured over a pool of seeds with :mod:`cluster_sim.claims`.

**Must reproduce** (the mechanism's central effect on our workload; the notebook fails without it),
each over both queue modes (one queue per organisation with hard boundaries, §7.1-§7.2, and one
cluster-wide queue, §7.3) at 20 % and 30 % capacity: paired by seed, a seed's four differences
(two modes, two capacities) averaged, so the seeds are the independent units:

* Wing-Agg attains more value than Wing-Direct (§7.2: aggregate value is what Wing adds);
* Wing-Agg attains more value than PRIO (§7.1, §7.3: Wing-guided priorities beat the users');
* Oracle Wing-Agg attains more value than Wing-Agg (§7.2: better predictions pay); at ``paper`` failure chains,
  which neither key sees, widen a seed's gap, and the lead still reproduces over the notebook's pool and the next.

**Reported** (with their intervals and the verdict the rule gives, but no failure): each queue mode
on its own (a mode's gap needs more seeds than a notebook can afford: per-seed differences are
heavy-tailed, a few seeds turning on a few very valuable jobs), Wing-Direct vs PRIO, Wing-Agg vs
Wing-MIL, Oracle Wing-Agg vs Oracle Wing-Direct, the mis-prediction loss (§7.2: at most 4 % for
s <= 5), backfill instead of head-of-queue holding (our modelling choice), and the sizes beside the
paper's at 20 % *of the paper's cluster* (``capacity_basis="paper"``: §7.2's 55 / 42 / 35 %, §7.3's
93 / 84 / 47 %, the Oracle gains).

Every run goes through :func:`cluster_sim.sweep.run_grid` (cached, Dask-ready): :func:`claims_runs`
returns its tidy frame (one row per point and seed), :func:`claims_table` the claims measured on it.

>>> [c.key for c in CLAIMS if c.must]
['agg_beats_direct', 'agg_beats_prio', 'oracle_beats_agg']
>>> sorted({q for c in CLAIMS if c.must for q in c.where["queues"]})
['cluster', 'org']
"""

from __future__ import annotations

import dataclasses
import numbers

import pandas as pd

from ... import claims as _claims
from ...claims import Claim
from ...sweep import run_grid
from .config import POLICY_NAMES, WingConfig
from .experiments import lake_of, run, sweep_metrics

LAB = "05"
#: the capacities the must-reproduce claims pool (our contended range; see the notebook on capacity)
CAPACITIES = (0.2, 0.3)
QUEUES = ("org", "cluster")
#: the mis-prediction scale of §7.2's sensitivity claim ("for s <= 5, at most 4 %")
MISPREDICTION = 5.0
#: seeds in the pool per preset (the notebook states why: the intervals' widths), and how many of them (the
#: pool's first) also run the reported extras: Wing-MIL, the Oracles' sizes, backfill, the paper's capacity basis.
#: At ``paper`` a seed costs about 40 s of CPU (its lake prepared once on one Dask worker, 16 runs of about 2 s):
#: 14 seeds is what fits the notebook's 10 minutes on two cores (4 seeds left every must claim within noise)
POOL_SIZE = {"ci": 20, "default": 20, "paper": 14}
EXTRAS_SIZE = {"ci": 6, "default": 6, "paper": 2}
MAIN_POLICIES = ("prio", "wing_direct", "wing_agg", "oracle_wing_agg")

_AGG, _DIRECT, _PRIO, _MIL = "Wing-Agg", "Wing-Direct", "PRIO", "Wing-MIL"
_ORACLE_AGG, _ORACLE_DIRECT = "Oracle Wing-Agg", "Oracle Wing-Direct"
_PLAIN = {"backfill": False, "misprediction": 1.0, "capacity_basis": "peaks"}
_MODE = {"org": "one queue per organisation", "cluster": "one cluster-wide queue"}
_SOURCE = {"org": "§7.1-§7.2, Figs. 10-11", "cluster": "§7.3, Fig. 12"}
#: the paper's value shares at 20 % of its cluster, quoted from its text (Oracle Wing-Agg per organisation: 55 % + 8 %)
PAPER_AT_20 = {
    "org": {_PRIO: 0.35, _DIRECT: 0.42, _AGG: 0.55, _ORACLE_AGG: 0.63},
    "cluster": {_PRIO: 0.47, _DIRECT: 0.84, _AGG: 0.93, _ORACLE_AGG: 0.98},
}
_PAPER_TEXT_AT_20 = {
    "org": {_PRIO: "35 % (§7.1)", _DIRECT: "42 % (§7.2)", _AGG: "55 % (§7.1)",
            _ORACLE_AGG: "Wing-Agg's + 8 % of the value (§7.2)"},
    "cluster": {_PRIO: "47 % (§7.3)", _DIRECT: "84 % (§7.3)", _AGG: "93 % (§7.3)", _ORACLE_AGG: "98 % (§7.3)"},
}
_WHY_SIZE = ("a size: it depends on the paper's Cosmos trace (40k jobs a day, 150+ organisations' real queue sizes); "
             "ours is a reduced-scale synthetic lake")
_WHY_MODE = ("one queue mode on its own: a run of a few hundred jobs turns on a few decisions about a few very "
             "valuable jobs (Zipfian downloads), so one mode's gap needs more seeds than the pool holds; the must "
             "claim pools both modes")
_HINT = "a larger pool (pool_size=); the per-mode rows show which queue mode is short"
#: what widens a seed's gap at ``paper`` (the notebook's section 5 measures it on the claims' runs): failure chains
_PAPER_TAIL = (" At paper a seed's gap also moves with failure chains: a job that fails fails every run job whose "
               "input it writes, and theirs (its failure reach, workload.failure_reach), and a paper day's run keeps "
               "more of its producers inside the run (seed 0: 5.4 % of its 5,847 run jobs reach 100 or more others, "
               "the largest 1,008; at ci 1.7 % of 298, the largest 151); neither key sees that reach (a value share "
               "is 1/N of a consumer's value; rank correlations with it +0.02 for the Oracle's key and +0.09 for "
               "Wing-Agg's on seed 0), so over the notebook's 14 seeds the Oracle's value gap over Wing-Agg has a rank "
               "correlation of -0.73 with its failed-jobs gap")
#: (treatment, baseline, key stem, statement, why it is or is not central)
_GAPS = (
    (_AGG, _DIRECT, "agg_beats_direct", "Wing-Agg attains more value than Wing-Direct",
     "the paper's central claim: the value hidden downstream of a job, which Wing aggregates, is what job-local "
     "value efficiency misses (§7.2)"),
    (_AGG, _PRIO, "agg_beats_prio", "Wing-Agg attains more value than PRIO",
     "Wing-guided priorities against the users' own: what a scheduler gains from Wing (§7.1, §7.3)"),
    (_ORACLE_AGG, _AGG, "oracle_beats_agg", "Oracle Wing-Agg attains more value than Wing-Agg",
     "the true aggregate value efficiency is a better key than its median-based prediction (§7.2)"),
    (_DIRECT, _PRIO, "direct_vs_prio", "Wing-Direct attains more value than PRIO",
     "depends on how users set priorities: PRIO protects producers only as far as their priorities do, Wing-Direct "
     "only as far as they are downloaded themselves (the lake table shows both)"),
)


def _paper_gap(queues: str, a: str, b: str) -> float:
    return PAPER_AT_20[queues][a] - PAPER_AT_20[queues][b]


def _gap_claims() -> list[Claim]:
    """The must-reproduce gaps over both queue modes, then each mode's on its own (reported)."""
    out = []
    both = {"queues": list(QUEUES), "capacity": list(CAPACITIES), **_PLAIN}
    for a, b, key, statement, why in _GAPS[:3]:
        text = "; ".join(f"{_MODE[q]}: {_paper_gap(q, a, b):+.0%} of the value at 20 %" for q in QUEUES)
        out.append(Claim(key, f"{statement} (both queue modes, 20-30 % capacity)", "§7.1-§7.3, Figs. 10-12",
                         "value_share", treatment={"policy": a}, baseline={"policy": b}, direction="higher",
                         paper_text=text, must=True, why=why + "." + _PAPER_TAIL, hint=_HINT, where=both,
                         pair_on=("capacity", "queues")))
    for q in QUEUES:
        where = {"queues": q, "capacity": list(CAPACITIES), **_PLAIN}
        for a, b, key, statement, why in _GAPS:
            stem = key.replace("_beats_", "_vs_")
            out.append(Claim(f"{stem}_{q}", f"{statement} ({_MODE[q]}, 20-30 % capacity)", _SOURCE[q], "value_share",
                             treatment={"policy": a}, baseline={"policy": b}, direction="higher",
                             paper_text=f"{_paper_gap(q, a, b):+.0%} of the value at 20 % of the paper's cluster",
                             why=why if key == "direct_vs_prio" else _WHY_MODE, where=where, pair_on=("capacity",)))
    return out


def _extra_claims() -> list[Claim]:
    at20 = {"queues": "org", "capacity": 0.2, **_PLAIN}
    held = {"queues": "org", "capacity": 0.2, "misprediction": 1.0, "capacity_basis": "peaks"}
    out = [
        Claim("agg_vs_mil", "Wing-Agg attains at least as much value as Wing-MIL (one queue per organisation, 20 %)",
              "§7.1", "value_share", treatment={"policy": _AGG}, baseline={"policy": _MIL}, direction="higher",
              paper_text="Wing-Agg outperforms Wing-MIL at all capacities, 'albeit only slightly' (no number)",
              where=at20, why="the paper calls the gap slight; ours depends on our decay model for Wing-MIL's value "
                              "functions"),
        Claim("oracle_agg_vs_oracle_direct", "Oracle Wing-Agg attains more value than Oracle Wing-Direct "
              "(one queue per organisation, 20 %)", "§7.2, Fig. 11", "value_share",
              treatment={"policy": _ORACLE_AGG}, baseline={"policy": _ORACLE_DIRECT}, direction="higher", paper=0.18,
              paper_text="up to +18 % of the value", where=at20, why=_WHY_SIZE),
        Claim("misprediction_loss", f"Values mis-predicted by a factor in [1/s, s] (s = {MISPREDICTION:g}) lose at most "
              "4 % of the value against Oracle Wing-Agg (one queue per organisation, 20 %)", "§7.2", "value_share",
              treatment={"policy": _ORACLE_AGG, "misprediction": MISPREDICTION},
              baseline={"policy": _ORACLE_AGG, "misprediction": 1.0}, direction="equal", tolerance=0.04,
              paper=-0.04, paper_text="at most 4 % lost for s <= 5 (11 % at s = 10)",
              where={"queues": "org", "capacity": 0.2, "backfill": False, "capacity_basis": "peaks"},
              why="the paper's insensitivity rests on Zipfian values over 40k jobs a day; a run of a few hundred jobs "
                  "turns on a few decisions"),
        Claim("agg_vs_prio_backfill", "With backfill, Wing-Agg attains more value than PRIO (one queue per "
              "organisation, 20 %)", "not in the paper (a modelling choice)", "value_share",
              treatment={"policy": _AGG, "backfill": True}, baseline={"policy": _PRIO, "backfill": True},
              direction="higher", where=held,
              why="head-of-queue holding is our choice (YARN's reservation, Cosmos's gang admission), not the "
                  "paper's: this row shows the gap without it"),
        Claim("agg_vs_direct_backfill", "With backfill, Wing-Agg attains more value than Wing-Direct (one queue per "
              "organisation, 20 %)", "not in the paper (a modelling choice)", "value_share",
              treatment={"policy": _AGG, "backfill": True}, baseline={"policy": _DIRECT, "backfill": True},
              direction="higher", where=held, why="as above"),
    ]
    # on the paper's capacity basis: 20 % of a cluster whose job requests peak at 60 % of it
    for q in QUEUES:
        paper_basis = {"queues": q, "capacity": 0.2, "backfill": False, "misprediction": 1.0, "capacity_basis": "paper"}
        for a, b, key, statement, _ in _GAPS[:3]:
            gap = _paper_gap(q, a, b)
            out.append(Claim(f"{key.replace('_beats_', '_vs_')}_paper_basis_{q}",
                             f"{statement} at 20 % of the paper's cluster ({_MODE[q]})", _SOURCE[q], "value_share",
                             treatment={"policy": a}, baseline={"policy": b}, direction="higher", paper=gap,
                             paper_text=f"{gap:+.0%} ({PAPER_AT_20[q][a]:.0%} vs {PAPER_AT_20[q][b]:.0%})",
                             where=paper_basis, why=_WHY_SIZE))
        for policy, value in PAPER_AT_20[q].items():
            out.append(Claim(
                f"size_{q}_{policy.lower().replace(' ', '_').replace('-', '_')}",
                f"{policy}'s share of the value at 20 % of the paper's cluster ({_MODE[q]})", _SOURCE[q],
                "value_share", treatment={"policy": policy}, paper=value, paper_text=_PAPER_TEXT_AT_20[q][policy],
                where=paper_basis, why=_WHY_SIZE))
    return out


CLAIMS: list[Claim] = _gap_claims() + _extra_claims()
#: must claims that a preset only reports, and why: the cause measured at that scale (the notebook shows it on the
#: claims' own runs). The claim keeps its interval and the rule's verdict; only the failure is lifted. Empty: every
#: preset requires every must claim. ``oracle_beats_agg`` was reported at ``paper`` while, on the lake before issue
#: 24's fix, one failure chain reversed a seed (+0.027 [-0.003, +0.057] over seeds 0-13); on the current lake it
#: reproduces there over seeds 0-13 (+0.036 [+0.023, +0.048]) and 14-27 (+0.039 [+0.019, +0.058])
REPORTED_AT: dict[str, dict[str, str]] = {}


def claims_for(preset: str) -> list[Claim]:
    """:data:`CLAIMS` as ``preset`` measures them: a must claim :data:`REPORTED_AT` names for it is only reported,
    with that ``why`` (none is named now: every preset keeps every must claim).

    >>> [c.key for c in claims_for("paper") if c.must]
    ['agg_beats_direct', 'agg_beats_prio', 'oracle_beats_agg']
    >>> claims_for("ci") == CLAIMS
    True
    """
    if preset not in POOL_SIZE:
        raise ValueError(f"preset={preset!r} is not allowed: choose one of {', '.join(POOL_SIZE)}")
    lifted = REPORTED_AT.get(preset, {})
    return [dataclasses.replace(c, must=False, why=lifted[c.key]) if c.key in lifted else c for c in CLAIMS]


def claims_grid(seeds, extras: int) -> list[dict]:
    """The runs the claims need, seed by seed (a seed's lake is prepared once and reused by its runs): the
    main policies in both queue modes at :data:`CAPACITIES` for every seed, and for the first ``extras``
    seeds Wing-MIL, Oracle Wing-Direct, the mis-predicted Oracle, backfill and the paper's capacity basis."""
    points = []
    for i, seed in enumerate(seeds):
        point = {"seed": seed, "backfill": False, "misprediction": 1.0, "capacity_basis": "peaks"}
        points += [{**point, "queues": q, "capacity": c, "policy": p}
                   for q in QUEUES for c in CAPACITIES for p in MAIN_POLICIES]
        if i >= extras:
            continue
        at20 = {**point, "queues": "org", "capacity": 0.2}
        points += [{**at20, "policy": p} for p in ("wing_mil", "oracle_wing_direct")]
        points.append({**at20, "policy": "oracle_wing_agg", "misprediction": MISPREDICTION})
        points += [{**at20, "policy": p, "backfill": True} for p in ("prio", "wing_direct", "wing_agg")]
        points += [{**point, "queues": q, "capacity": 0.2, "policy": p, "capacity_basis": "paper"}
                   for q in QUEUES for p in MAIN_POLICIES]
    return points


def preset_of(config: WingConfig) -> str:
    """The preset whose lake ``config`` has (``"default"`` for any other lake): it sets the pool's size."""
    for name in ("ci", "default", "paper"):
        if getattr(WingConfig, name)().replace(seed=config.seed).lake_key() == config.lake_key():
            return name
    return "default"


def claims_runs(config: WingConfig, *, pool_size: int | None = None, extras: int | None = None, client=None,
                cache=None) -> pd.DataFrame:
    """Every run the claims need, over ``claims.pool(config.seed, pool_size)``, through ``run_grid``.

    One row per run: the grid's fields (seed, queues, capacity, policy as its name, backfill,
    misprediction, capacity_basis) and :func:`~.experiments.sweep_metrics`. ``pool_size`` None: the
    preset's (:data:`POOL_SIZE`); the extras run on the pool's first ``extras`` seeds (None: the
    preset's :data:`EXTRAS_SIZE`, or all of a smaller pool; 0: only the runs of the gap claims)."""
    if not isinstance(config, WingConfig):
        raise ValueError(f"config must be a WingConfig, got {type(config).__name__}")
    preset = preset_of(config)
    size = POOL_SIZE[preset] if pool_size is None else pool_size
    if not isinstance(size, numbers.Integral) or isinstance(size, bool):
        raise ValueError(f"pool_size={size!r} must be an integer >= 2 (seeds in the pool)")
    seeds = _claims.pool(config.seed, int(size))
    if extras is not None and (not isinstance(extras, numbers.Integral) or isinstance(extras, bool) or extras < 0):
        raise ValueError(f"extras={extras!r} must be an integer >= 0 (seeds of the pool that run the reported extras)")
    extras = min(EXTRAS_SIZE[preset] if extras is None else int(extras), len(seeds))
    df = run_grid(run, config, claims_grid(seeds, extras), metrics=sweep_metrics, client=client, cache=cache,
                  group=lake_of)
    df["policy"] = df["policy"].map(POLICY_NAMES)
    return df


def claims_table(config: WingConfig, *, pool_size: int | None = None, client=None, cache=None) -> pd.DataFrame:
    """Lab 05's claims measured over the pool (:func:`cluster_sim.claims.measure`); ``attrs["runs"]``
    holds the frame of runs (:func:`claims_runs`), which the notebook's tables and figures reuse."""
    frame = claims_runs(config, pool_size=pool_size, client=client, cache=cache)
    table = _claims.measure(claims_for(preset_of(config)), frame, lab=LAB)
    table.attrs["runs"] = frame
    return table


def pooled(frame: pd.DataFrame, by, *, metric: str = "value_share") -> pd.DataFrame:
    """The mean of ``metric`` per group of ``by`` over the seeds of ``frame``, with the half-width of its
    95 % t interval (``±``; empty for one seed) and the number of seeds (``n``): what a figure or a
    table of this lab shows beside a mean.

    >>> f = pd.DataFrame({"policy": ["a"] * 3 + ["b"] * 3, "seed": [0, 1, 2] * 2, "value_share": [.5, .6, .7, .4, .4, .4]})
    >>> pooled(f, "policy").round(3).to_dict("index")
    {'a': {'mean': 0.6, '±': 0.248, 'n': 3}, 'b': {'mean': 0.4, '±': 0.0, 'n': 3}}
    """
    from scipy import stats

    by = [by] if isinstance(by, str) else list(by)
    if metric not in frame.columns or "seed" not in frame.columns:
        raise ValueError(f"frame needs columns 'seed' and {metric!r}; it has {list(frame.columns)}")
    g = frame.groupby(by + ["seed"], sort=False)[metric].mean().groupby(level=by, sort=False)
    out = g.agg(["mean", "std", "count"])
    n = out["count"].to_numpy()
    half = stats.t.ppf(0.975, (n - 1).clip(1)) * out["std"].fillna(0.0).to_numpy() / (n ** 0.5)
    return pd.DataFrame({"mean": out["mean"], "±": pd.Series(half, index=out.index).where(n > 1), "n": n},
                        index=out.index)


def panel_setting(frame: pd.DataFrame, treatment: str = _AGG, baseline: str = _PRIO) -> dict:
    """Where the notebook's panel opens: the claims' setting (queue mode x capacity, plain runs) whose paired gap
    ``treatment - baseline`` has the highest lower end of its 95 % interval over the pool (the setting where switching
    the policy shows the lab's effect most surely), and of its seeds the one whose gap is nearest the pooled mean (a
    typical seed, not the best one; ties go to the lower seed).

    Returns ``queues``, ``capacity``, ``seed``, the pooled ``gap`` with its ``±`` and ``n``, and ``seed_gap``.

    >>> f = pd.DataFrame({"queues": "org", "capacity": [0.2] * 6 + [0.3] * 6, "seed": [0, 0, 1, 1, 2, 2] * 2,
    ...                   "policy": ["Wing-Agg", "PRIO"] * 6, "backfill": False, "misprediction": 1.0,
    ...                   "capacity_basis": "peaks",
    ...                   "value_share": [.5, .4, .6, .4, .4, .4, .5, .45, .52, .45, .55, .45]})
    >>> s = panel_setting(f)
    >>> s["capacity"], s["seed"], round(s["gap"], 3), round(s["seed_gap"], 3)
    (0.3, 1, 0.073, 0.07)
    """
    need = ["queues", "capacity", "seed", "policy", "backfill", "misprediction", "capacity_basis", "value_share"]
    if not isinstance(frame, pd.DataFrame) or [c for c in need if c not in frame.columns]:
        raise ValueError(f"frame must be the claims' runs (claims_runs) with columns {need}; got "
                         f"{list(frame.columns) if isinstance(frame, pd.DataFrame) else type(frame).__name__}")
    for arm in (treatment, baseline):
        if not (frame["policy"] == arm).any():
            raise ValueError(f"policy {arm!r} has no runs in frame; it has {sorted(frame['policy'].unique())}")
    plain = frame[~frame["backfill"].astype(bool) & (frame["misprediction"] == 1.0)
                  & (frame["capacity_basis"] == "peaks") & frame["policy"].isin([treatment, baseline])]
    wide = plain.pivot_table(index=["queues", "capacity", "seed"], columns="policy", values="value_share")
    gap = (wide[treatment] - wide[baseline]).dropna().rename("gap").reset_index()
    stats = pooled(gap, ["queues", "capacity"], metric="gap")
    low = stats["mean"] - stats["±"].fillna(0.0)
    queues, capacity = low.idxmax()
    mean = float(stats.loc[(queues, capacity), "mean"])
    here = gap[(gap["queues"] == queues) & (gap["capacity"] == capacity)].assign(dist=lambda d: (d["gap"] - mean).abs())
    typical = here.sort_values(["dist", "seed"]).iloc[0]
    return {"queues": queues, "capacity": float(capacity), "seed": int(typical["seed"]), "gap": mean,
            "±": float(stats.loc[(queues, capacity), "±"]), "n": int(stats.loc[(queues, capacity), "n"]),
            "seed_gap": float(typical["gap"])}
