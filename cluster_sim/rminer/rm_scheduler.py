"""The RM scheduler's choice: Algorithm 2 of the paper (§3.4), as a pure function over arrays.

**RM path** (lines 1-6): traverse the machines holding shadow resources in descending order of
their shadow amount and take the first whose available shadow covers the demand; the task runs on
shadow resources and is *not* committed to the CSV. SmartRM ("max utilization", Table 2) instead
prefers, among the machines whose shadow fits, those with the most idle resources overall (fewer
normal tasks will be sent there soon, so fewer conflicts).

**Normal path** (lines 7-13): if no machine's shadow fits, the RM scheduler acts as a normal
scheduler on the up-to-date free resources (the first machine that fits, in machine order - the
"traverse nodes with available resources" of line 9); the task takes that machine's shadow first
and the machine's shadow is set to none (line 11). The task is then an ordinary task.

Orders are on resource 0 (CPU), ties broken by machine id, so a decision is reproducible.

Example
-------
>>> import numpy as np
>>> shadow = np.array([[2, 1], [6, 1], [4, 2]])
>>> free = np.array([[10, 4], [7, 2], [30, 8]])
>>> rm_choice(shadow, free, np.array([3, 1]), mode="safe")     # most shadow first: machine 1
(1, 'shadow')
>>> rm_choice(shadow, free, np.array([3, 1]), mode="smart")    # most idle among fitting: machine 2
(2, 'shadow')
>>> rm_choice(shadow, free, np.array([8, 1]), mode="safe")     # no shadow fits: first free fit
(0, 'normal')
"""

from __future__ import annotations

import numpy as np

from ..engine.placement import fitting

SHADOW, NORMAL, NONE = "shadow", "normal", "none"


def shadow_order(shadow: np.ndarray, free: np.ndarray | None = None, mode: str = "safe") -> np.ndarray:
    """Machine ids with some shadow, in the order the RM path traverses them."""
    has = np.flatnonzero(shadow[:, 0] > 0)
    if mode == "smart":
        if free is None:
            raise ValueError("mode='smart' needs the free resources to order machines by idleness")
        keys = (has, -shadow[has, 0], -free[has, 0])  # np.lexsort: last key is primary
    elif mode == "safe":
        keys = (has, -shadow[has, 0])
    else:
        raise ValueError(f"mode={mode!r} is not allowed: choose 'safe' or 'smart'")
    return has[np.lexsort(keys)]


def rm_choice(shadow: np.ndarray, free: np.ndarray, demand: np.ndarray, mode: str = "safe") -> tuple[int, str]:
    """Algorithm 2: ``(machine, "shadow" | "normal")``, or ``(-1, "none")`` if nothing fits.

    ``shadow`` (n, R): available shadow per machine; ``free`` (n, R): truly free resources now
    (CSV free minus what RM tasks occupy, shadow included); ``demand`` (R,).
    """
    shadow = np.asarray(shadow)
    free = np.asarray(free)
    demand = np.asarray(demand)
    if shadow.shape != free.shape or shadow.ndim != 2 or demand.shape != shadow.shape[1:]:
        raise ValueError(
            f"shapes do not match: shadow {shadow.shape}, free {free.shape}, demand {demand.shape}; "
            "need shadow and free (n, R) and demand (R,)"
        )
    if mode not in ("safe", "smart"):
        raise ValueError(f"mode={mode!r} is not allowed: choose 'safe' or 'smart'")
    # the first machine in shadow_order whose shadow fits is the first in that order among those that
    # fit: find it among them (a few), not by sorting every machine with some shadow (hundreds, at every
    # RM decision). "Fits" is tested column by column (placement.fitting): a reduction along the rows'
    # two resources ran a numpy loop of length 2 per machine, 4x the cost, and was a third of an RM decision
    fit = fitting(shadow, demand)
    fit &= shadow[:, 0] > 0
    fit = fit.nonzero()[0]
    if fit.size:
        return int(fit[_first_in_order(shadow[fit, 0], free[fit, 0], mode)]), SHADOW
    ok = fitting(free, demand)
    i = int(ok.argmax())  # the first machine that fits, if any does
    if ok[i]:
        return i, NORMAL
    return -1, NONE


def _first_in_order(shadow0: np.ndarray, free0: np.ndarray, mode: str) -> int:
    """The position of ``shadow_order``'s first machine among candidates in machine order (all with some
    shadow): the most shadow (SmartRM: the most idle, then the most shadow), ties to the lowest id -
    what the sort puts first, without sorting (``argmax`` returns the first of equal maxima)."""
    if mode == "smart":
        shadow0 = np.where(free0 == free0.max(), shadow0, -1)  # only the most idle compete on shadow
    return int(shadow0.argmax())
