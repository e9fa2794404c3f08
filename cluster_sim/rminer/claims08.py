"""Lab 08's claims: shadow resources against the model of §2.3 (Wang et al., SoCC'23, Fig. 4).

The runs are NoRM runs (plain shared-state scheduling) at the two ends of the paper's update delays,
``d_u`` = 0.3 and 1.0 s, and at its mean task durations ``l`` = 4 and 5 s plus a long one, 20 s, where
Fig. 4's measurement leaves the model: :data:`UPDATE_DELAYS` x :data:`DURATIONS`, whatever the
config's own ``update_delay`` and ``mean_task_duration`` (the claims are the paper's, at its
settings), over a pool of seeds (:func:`cluster_sim.claims.pool`). The notebook's Fig. 4 draws the same
runs: :func:`shadow_sweep` remembers them, so the claims cost nothing after the figure.

**Must reproduce** (the model is the lab's subject, and our exponential workload meets its
assumptions): the measured shadow ratio agrees with ``d_u/2l`` within 15 % where the paper applies it;
a released fragment stays invisible for ``d_u/2`` on average; the shadow grows with the update delay.
**Reported** (sizes of the paper's trace): the paper's "3 % to 12.5 %" at its two corners, and the
deviation growing for long tasks, which the paper puts down to its trace's monolithic tasks.

**Pool sizes** (:data:`POOL_SIZES`): each run measures a ratio of two time integrals over thousands of
tasks, so a few seeds suffice. Over every pool of consecutive seeds in 0-9 (eight pools of three at ``ci``,
seven of four at ``default``), the agreement's 95 % interval lay within -10.9 % to +7.7 % at ``ci`` (half-width
up to 9 %) and within -4.1 % to +2.3 % at ``default``, inside the ±15 % band; the survival's within ±2.1 %
(band ±5 %); the growth with ``d_u`` at least ten times its interval's half-width. The paper preset's runs
are 60 times longer (200 machines, 300 s): three seeds.

Example
-------
>>> [c.key for c in CLAIMS if c.must]
['shadow_matches_theory', 'survival_is_half_the_update_delay', 'shadow_grows_with_the_update_delay']
>>> POOL_SIZES["ci"], UPDATE_DELAYS, DURATIONS
(3, (0.3, 1.0), (4.0, 5.0, 20.0))
"""

from __future__ import annotations

import pandas as pd

from .. import claims
from ..claims import Claim
from .config import RMinerConfig
from .experiments import shadow_sweep
from .theory import theory_shadow_ratio

__all__ = ["CLAIMS", "POOL_SIZES", "UPDATE_DELAYS", "DURATIONS", "claims_frame", "claims_table"]

#: the ends of the paper's update delays (§2.3: "0.3 s to 1.0 s")
UPDATE_DELAYS = (0.3, 1.0)
#: the paper's mean task durations (§2.3: "4 s to 5 s") and a long one, where Fig. 4 deviates
DURATIONS = (4.0, 5.0, 20.0)
PAPER_DURATIONS = [4.0, 5.0]
#: seeds per preset (see the module docstring for why each is enough)
POOL_SIZES = {"ci": 3, "default": 4, "paper": 3}
#: the ±15 % band of agreement (the band Fig. 4's deviation panel draws)
TOLERANCE = 0.15

_GROWTH = sum(theory_shadow_ratio(UPDATE_DELAYS[1], l) - theory_shadow_ratio(UPDATE_DELAYS[0], l)
              for l in DURATIONS) / len(DURATIONS)

CLAIMS = [
    Claim("shadow_matches_theory",
          "Measured shadow resources are almost the same as the model's d_u/2l of the allocated (l = 4-5 s, "
          "d_u = 0.3-1.0 s)", "§2.3 eq. (6), Fig. 4", "deviation", baseline=0.0, direction="equal",
          tolerance=TOLERANCE, where={"mean_task_duration": PAPER_DURATIONS},
          paper_text='"almost the same" as d_u/2l', must=True,
          why="the model is the lab's subject; our exponential durations and Poisson arrivals meet its "
              "assumptions, so the exact measurement must agree within the ±15 % band of Fig. 4's panel",
          hint="a longer horizon (the cluster starts empty) or more machines in the parameters cell"),
    Claim("survival_is_half_the_update_delay",
          "A released resource stays invisible for T_s ~ U(0, d_u): d_u/2 on average", "§2.3 eq. (3)",
          "survival_deviation", baseline=0.0, direction="equal", tolerance=0.05,
          paper_text="E(T_s) = d_u/2 (assumed)", must=True,
          why="the model's one assumption about time: releases fall uniformly in the update period",
          hint="a longer horizon: fragments still open at the horizon are not counted"),
    Claim("shadow_grows_with_the_update_delay",
          "Shadow resources grow with the update delay (d_u = 1.0 s vs 0.3 s, l = 4, 5, 20 s)",
          "§2.3 eq. (6), Fig. 4", "measured", treatment={"update_delay": UPDATE_DELAYS[1]},
          baseline={"update_delay": UPDATE_DELAYS[0]}, direction="higher", pair_on=("mean_task_duration",),
          paper=_GROWTH, paper_text=f"d_u/2l: +{_GROWTH:.3f} of the allocated", must=True,
          why="the model's first factor, and Lab 09's premise: the longer the views stay stale, the more "
              "there is to mine",
          hint="update_delay must stay > 0 in the runs; look at ShadowProbe's view-update hook"),
    Claim("three_percent_corner",
          "Shadow resources are about 3 % of the allocated at d_u = 0.3 s, l = 5 s", "§2.3",
          "measured", treatment={"update_delay": 0.3, "mean_task_duration": 5.0}, paper=0.03,
          paper_text="3 % (the low end of 3 % to 12.5 %)",
          why="the paper's number is its model at its traces' l and d_u; ours is measured on a synthetic "
              "workload: a size, reported beside it"),
    Claim("twelve_and_a_half_percent_corner",
          "Shadow resources are about 12.5 % of the allocated at d_u = 1.0 s, l = 4 s", "§2.3",
          "measured", treatment={"update_delay": 1.0, "mean_task_duration": 4.0}, paper=0.125,
          paper_text="12.5 % (the high end of 3 % to 12.5 %)",
          why="as the 3 % corner: a size, reported"),
    Claim("deviation_grows_for_long_tasks",
          "The deviation from the model grows for long tasks (|measured/theory - 1| at l = 20 s vs 5 s)",
          "§2.3, Fig. 4", "abs_deviation", treatment={"mean_task_duration": 20.0},
          baseline={"mean_task_duration": 5.0}, direction="higher", pair_on=("update_delay",),
          paper_text="deviation larger for long tasks",
          why="the paper puts it down to its traces' monolithic, resource-hungry tasks, which our ≈1-slot "
              "tasks lack; ours comes from a fuller cluster at a fixed arrival rate, where stale views "
              "overcommit machines and allocations eat released slots. A size of the workload: reported",
          hint="more seeds or a longer horizon (long tasks take longer to reach steady state)"),
]


def claims_frame(config: RMinerConfig, seeds, *, client=None, cache=None) -> pd.DataFrame:
    """The claims' runs, one row per (update delay, duration, seed): :func:`shadow_sweep`'s columns plus
    ``abs_deviation`` and ``survival_deviation`` (mean survival over half the shadow period, minus 1)."""
    df = shadow_sweep(config, UPDATE_DELAYS, DURATIONS, seeds, client=client, cache=cache)
    df["abs_deviation"] = df["deviation"].abs()
    # theory * l = shadow period / 2: the mean of U(0, shadow period), staggered refreshes included
    df["survival_deviation"] = df["survival_mean"] / (df["theory"] * df["mean_task_duration"]) - 1.0
    return df


def claims_table(config: RMinerConfig, *, pool_size=None, client=None, cache=None) -> pd.DataFrame:
    """Lab 08's claims measured over ``pool_size`` seeds from ``config.seed`` (default: the ``default``
    preset's pool) on ``config``'s cluster (the notebook passes its sweep's base)."""
    size = POOL_SIZES["default"] if pool_size is None else pool_size
    frame = claims_frame(config, claims.pool(config.seed, size), client=client, cache=cache)
    return claims.measure(CLAIMS, frame, lab="08")
