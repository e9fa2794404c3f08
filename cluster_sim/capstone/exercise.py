"""Lab 10's open-ended exercise: one composition decision, checked on invariants and on a measured effect.

The decision: a periodic run admitted to its Morpheus reservation gives tokens back (its shaper
releases what its remaining stages cannot use, and at its end it returns the rest). Who gets them?
The naive rule, :func:`~cluster_sim.capstone.model.keep_reservation`, keeps them set aside for the
reservation until its deadline; the student writes ``rule(job, tokens, now) -> "reservation" |
"organisations"`` (``job`` is the run's :class:`~cluster_sim.capstone.day.JobSpec`: its kind,
template, deadline, reservation...).

:func:`check_release_rule` grades it: the rule answers with an allowed choice, the composition's
invariants hold after every event with it, and over a seed pool (paired by seed, every mechanism
on) it lowers the organisations' wait for admission against the naive rule without raising the
periodic runs' SLO violations (the claims layer's verdicts, the same as the notebook's).
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import pandas as pd

from .. import claims as _claims
from ..checking import CheckFailed, call_student, name_case
from ..fingerprint import Unfingerprintable, fingerprint
from ..sweep import run_grid
from .config import SWITCHES, CapstoneConfig
from .day import make_day
from .experiments import metrics_of, run, run_model
from .model import RELEASE_CHOICES, keep_reservation

#: the pool the check measures over (ci, every mechanism on). Measured for the model solution (with LowCost's
#: packed reservations and reprovisioning): the wait falls by 12 s (interval -19 to -5) over seeds 0-7 and by
#: 20 s (-39 to -2) over seeds 5-12; the naive rule against itself fails the claim
#: (tests/capstone/test_claims_exercise.py)
CHECK_SEEDS = 8
RULE_CLAIMS = [
    _claims.Claim(key="rule_shortens_waits", statement="your rule admits the organisations' jobs sooner than the naive one",
                  source="Lab 10 exercise", metric="mean_admission_wait", treatment={"rule": "yours"},
                  baseline={"rule": "naive"}, direction="lower", must=True,
                  why="tokens a reserved run no longer uses are room the organisations' jobs wait for",
                  hint="return 'organisations' for tokens the reservation will not need again"),
    _claims.Claim(key="rule_keeps_slos", statement="your rule does not raise the periodic runs' SLO violations",
                  source="Lab 10 exercise", metric="slo_violation_rate", treatment={"rule": "yours"},
                  baseline={"rule": "naive"}, direction="equal", tolerance=0.05, must=True,
                  why="a reservation exists to keep its run's deadline: giving its room away must not cost SLOs",
                  hint="keep the tokens while the run may still need them (before its last stage, say)"),
    _claims.Claim(key="rule_value", statement="your rule's value attained against the naive rule's",
                  source="Lab 10 exercise", metric="value_share", treatment={"rule": "yours"},
                  baseline={"rule": "naive"}, direction="higher", why="reported: the value follows the waits, noisily"),
]


def run_with_rule(config: CapstoneConfig, rule: Callable | None = None):
    """One day with every mechanism on and ``rule`` deciding where reserved runs' tokens go."""
    return run(config, release_rule=rule)


def rule_table(rule: Callable, config: CapstoneConfig | None = None, seeds=CHECK_SEEDS, *, client=None,
               cache=None) -> pd.DataFrame:
    """The claims table of ``rule`` against the naive rule over ``claims.pool(config.seed, seeds)``.

    ``cache`` goes to :func:`cluster_sim.sweep.run_grid` (None: the default place): the naive rule's days are
    the same for every rule graded, and a rule graded twice (the check, then the notebook's table) is read
    back, not run again. The cache key holds the rule's fingerprint (its code, defaults, closure and the
    globals it reads); a rule that has none (say, one drawing from a ``random.Random``) runs uncached."""
    base = (CapstoneConfig.ci() if config is None else config).replace(**{s: True for s in SWITCHES})
    _asked_once(rule, base, getattr(rule, "__name__", "your rule"))  # a stub or a wrong answer before any day runs
    pool = _claims.pool(base.seed, seeds)
    frames = []
    for name, r in (("naive", keep_reservation), ("yours", rule)):
        one_day = functools.partial(run_with_rule, rule=r)
        f = run_grid(one_day, base, {}, pool, metrics=metrics_of, client=client,
                     cache=cache if _fingerprinted(one_day) else False, progress=False)
        f.insert(0, "rule", name)
        frames.append(f)
    return _claims.measure(RULE_CLAIMS, pd.concat(frames, ignore_index=True), lab="10-exercise")


def _asked_once(rule: Callable, base: CapstoneConfig, name: str) -> None:
    """Ask ``rule`` about the day's first reserved run: nbgrader's stub says it is not implemented, and an answer
    that is not a choice is named, before any day runs (a day meets the rule only when a reserved run first gives
    tokens back, well into it)."""
    sample = next(j for j in make_day(base).jobs if j.reservation is not None)
    answer = call_student(rule, sample, 1, sample.arrival, name=name)
    if answer not in RELEASE_CHOICES:
        raise CheckFailed(f"{name}(job {sample.id}, 1 token, t={sample.arrival:g}) returned {answer!r}: "
                          f"allowed {' or '.join(map(repr, RELEASE_CHOICES))}"
                          + name_case(f"job {sample.id}", {"job": sample, "tokens": 1, "now": sample.arrival}))


def _fingerprinted(fn: Callable) -> bool:
    """Whether ``fn`` has a fingerprint, so run_grid can key its results (else they are computed uncached)."""
    try:
        fingerprint(fn)
    except Unfingerprintable:
        return False
    return True


def check_release_rule(rule: Callable, *, name: str = "my_release_rule", config: CapstoneConfig | None = None,
                       seeds: int = CHECK_SEEDS) -> str:
    """Grade ``rule`` (module docstring); a :class:`~cluster_sim.checking.CheckFailed` names the first thing that failed."""
    base = (CapstoneConfig.ci() if config is None else config).replace(**{s: True for s in SWITCHES})
    _asked_once(rule, base, name)
    checked = lambda job, tokens, now: call_student(rule, job, tokens, now, name=name)  # noqa: E731
    try:
        run_model(base.replace(horizon=min(base.horizon, 400.0)), release_rule=checked, check_every_event=True)
    except ValueError as e:
        raise CheckFailed(f"{name}: {e}") from None
    table = rule_table(rule, base, seeds)
    try:
        _claims.check(table)
    except _claims.ClaimFailed as e:
        raise CheckFailed(f"{name}: the invariants hold, but the measured effect does not: {e}") from None
    row = table.set_index("claim")
    return (f"{name}: invariants hold after every event; over seeds {row.loc['rule_shortens_waits', 'seeds']} the wait "
            f"for admission changes by {row.loc['rule_shortens_waits', 'ours']:+.1f} s (95 % interval "
            f"{row.loc['rule_shortens_waits', 'low']:+.1f} to {row.loc['rule_shortens_waits', 'high']:+.1f}), SLO "
            f"violations by {row.loc['rule_keeps_slos', 'ours']:+.3f}, value attained by "
            f"{row.loc['rule_value', 'ours']:+.3f}")


__all__ = ["CHECK_SEEDS", "RULE_CLAIMS", "check_release_rule", "rule_table", "run_with_rule"]
