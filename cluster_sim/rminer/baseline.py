"""Exercise 09's baseline question: split RMiner's gain over NoRM into what one more scheduler gives and what the
mining adds beyond it (issue 30: "what NoRM + 1 controls for").

RMiner changes two things at once: it adds a scheduler (the RM scheduler) and it mines shadow resources. NoRM + 1
scheduler adds the first without the second, so on the same workloads (paired by seed)

* ``total``    = RMiner - NoRM           (what the paper reports),
* ``capacity`` = (NoRM + 1) - NoRM       (one more decider, no mining),
* ``mining``   = RMiner - (NoRM + 1)     (what the mining adds beyond the capacity),

each the mean over the seeds of the differences taken within a seed (the same workload), in points of utilisation
(a difference of fractions), and ``total = capacity + mining``. (The mean of paired differences equals the
difference of the means; pairing matters for the interval around it, which the claims layer computes.) :func:`check_gain_split` grades a student's version on hand-made cases chosen so
that each misconception gives another answer, and names the one it sees.

Example
-------
>>> split = gain_split([0.60, 0.62], [0.64, 0.66], [0.61, 0.63])
>>> {k: round(v, 4) for k, v in split.items()}
{'total': 0.01, 'capacity': 0.04, 'mining': -0.03}
"""

from __future__ import annotations

import numpy as np

from ..checking import CheckFailed, call_student

KEYS = ("total", "capacity", "mining")


def _per_seed(name: str, values) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != 1 or a.size == 0 or not np.isfinite(a).all() or ((a < 0) | (a > 1)).any():
        raise ValueError(f"{name}={values!r} is not allowed: give one utilisation in [0, 1] per seed")
    return a


def gain_split(util_none, util_plus1, util_rm) -> dict[str, float]:
    """The reference: ``total``, ``capacity`` and ``mining`` (module docstring), from one utilisation per seed of
    NoRM, NoRM + 1 scheduler and RMiner, the seeds in the same order in all three."""
    none, plus1, rm = (_per_seed(n, v) for n, v in (("util_none", util_none), ("util_plus1", util_plus1),
                                                     ("util_rm", util_rm)))
    if not none.size == plus1.size == rm.size:
        raise ValueError(f"util_none, util_plus1 and util_rm have {none.size}, {plus1.size} and {rm.size} values: "
                         "give one per seed, the same seeds in each")
    return {"total": float(np.mean(rm - none)), "capacity": float(np.mean(plus1 - none)),
            "mining": float(np.mean(rm - plus1))}


#: hand cases (NoRM, NoRM + 1, RMiner per seed): RMiner below NoRM + 1 (as in Lab 09), RMiner above it, and seeds
#: of different utilisation (so a relative gain differs from a difference in points)
HAND_CASES = (
    ([0.60, 0.62, 0.61], [0.64, 0.66, 0.65], [0.61, 0.63, 0.62]),
    ([0.50, 0.55], [0.52, 0.56], [0.55, 0.59]),
    ([0.70, 0.50, 0.60], [0.74, 0.52, 0.61], [0.71, 0.55, 0.59]),
)


def _misconception(got: dict, none, plus1, rm) -> str:
    """The cause a wrong answer shows, when one of the named misconceptions explains it."""
    none, plus1, rm = (np.asarray(x, float) for x in (none, plus1, rm))
    ref = gain_split(none, plus1, rm)
    close = lambda a, b: np.isclose(a, b, rtol=1e-6, atol=1e-9)  # noqa: E731
    if close(got["mining"], ref["total"]) and not close(ref["total"], ref["mining"]):
        return ("your 'mining' is RMiner minus NoRM: that credits the extra scheduler's capacity to the mining. "
                "The mining's part is what RMiner adds beyond NoRM + 1 scheduler (RMiner minus NoRM + 1)")
    if close(got["mining"], -ref["mining"]) or close(got["capacity"], -ref["capacity"]):
        return "a sign is reversed: each part is the later arm minus the earlier one (RMiner - NoRM + 1, NoRM + 1 - NoRM)"
    relative = {"total": np.mean(rm / none - 1), "capacity": np.mean(plus1 / none - 1), "mining": np.mean(rm / plus1 - 1)}
    if any(close(got[k], relative[k]) and not close(relative[k], ref[k]) for k in KEYS):
        return ("a ratio: the gains are in points of utilisation (differences of the fractions), not relative "
                "changes; a relative gain over a different baseline does not add up")
    return "compare each part with the module docstring's definitions"


def check_gain_split(student, cases=HAND_CASES) -> str:
    """Grade ``student(util_none, util_plus1, util_rm) -> dict`` on ``cases``; fail on the first wrong part with
    the misconception it shows."""
    for none, plus1, rm in cases:
        got = call_student(student, list(none), list(plus1), list(rm), name="gain_split", forbid=gain_split)
        if not isinstance(got, dict) or set(got) != set(KEYS):
            raise CheckFailed(f"gain_split should return a dict with the keys {KEYS}, got {got!r}")
        ref = gain_split(none, plus1, rm)
        wrong = [k for k in KEYS if not np.isclose(float(got[k]), ref[k], rtol=1e-6, atol=1e-9)]
        if wrong:
            raise CheckFailed(
                f"gain_split(NoRM={list(none)}, NoRM + 1={list(plus1)}, RMiner={list(rm)}): "
                + ", ".join(f"{k} = {float(got[k]):.4f}, expected {ref[k]:.4f}" for k in wrong)
                + f". Cause: {_misconception({k: float(got[k]) for k in KEYS}, none, plus1, rm)}")
    return f"gain_split: all {len(cases)} cases agree; total = capacity + mining on each"
