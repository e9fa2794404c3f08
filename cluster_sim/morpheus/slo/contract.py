"""The contract Morpheus offers a periodic job (Fig. 3, step 2): period, a_j, d_j and R*.

:func:`infer_contracts` chains the pure steps: :func:`.inference.detect_periodic` on the
submissions, :func:`.inference.infer_slo` on the runs of the periodic templates, and
:func:`.skyline.fit_skyline` on the recorded skylines of the actionable ones. Its inputs are plain
tables and lists of arrays, so an agent that records runs (the telemetry collector of the Mesa
side) can call it with what it recorded. The packer of §6 takes a :class:`Contract` as its
periodic reservation request.

Example
-------
>>> import numpy as np
>>> from cluster_sim.morpheus.slo.history import HistoryParams, generate_history
>>> h = generate_history(np.random.default_rng(1), HistoryParams(days=3, n_periodic=4, n_off_kilter=0,
...                                                                n_aperiodic=1, n_adhoc=3))
>>> contracts = infer_contracts(h.submissions, h.runs, h.skyline_lists(), alpha=0.01, max_history=20)
>>> c = next(iter(contracts.values()))
>>> bool(0 <= c.a_j < c.d_j) and c.skyline.ndim == 1 and c.n_runs <= 20
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import validate
from .runs import align_skylines
from .inference import detect_periodic, infer_slo
from .skyline import DEFAULT_BETA_FRACTION, SkylineFit, fit_skyline


@dataclass(frozen=True, eq=False)
class Contract:
    """A recurring reservation request: every ``period`` seconds, R* inside ``[a_j, d_j]`` of the period."""

    template: str
    period: float  # seconds
    a_j: float  # earliest start, seconds after the period start
    d_j: float  # deadline, seconds after the period start
    fit: SkylineFit  # R* and how it was fitted

    @property
    def skyline(self) -> np.ndarray:
        """R*: containers per one-minute step."""
        return self.fit.skyline

    @property
    def n_runs(self) -> int:
        return self.fit.n_runs

    @property
    def window_steps(self) -> int:
        """Whole minutes between a_j and d_j: the room the packer has for R*."""
        return int((self.d_j - self.a_j) // 60)


def infer_contracts(
    submissions: pd.DataFrame,
    runs: pd.DataFrame,
    skylines: Mapping[str, Sequence],
    *,
    alpha: float = 0.01,
    beta_fraction: float = DEFAULT_BETA_FRACTION,
    max_history: int | None = None,
    detect_options: dict | None = None,
    slo_options: dict | None = None,
    fit=fit_skyline,
) -> dict[str, Contract]:
    """Contracts for the periodic, actionable templates that have skylines (template -> Contract).

    ``skylines[template]`` lists the recorded skylines of its successful runs in time order;
    ``max_history`` keeps only the most recent ones (the paper keeps about a month). Templates with
    fewer skylines than ``fit_skyline`` needs are skipped, as are non-actionable ones (they stay on
    manual provisioning). The default ``alpha = 0.01`` is the value the paper found best (§9.1).
    ``fit``: what fits R* (``fit_skyline``'s signature; :func:`.stored.stored_fit` reads fits solved before).
    """
    validate.columns(runs, ["template"], "runs")
    if max_history is not None and (not isinstance(max_history, (int, np.integer)) or max_history < 2):
        raise ValueError(f"max_history={max_history!r} is not allowed: need None or an integer >= 2")
    periodic = detect_periodic(submissions, **(detect_options or {}))
    periodic = periodic[periodic.periodic]
    mine = runs[runs.template.isin(periodic.index)]
    if mine.empty:
        return {}
    slo = infer_slo(mine, **(slo_options or {}))
    out = {}
    for name in slo.index[slo.actionable]:
        recorded = list(skylines.get(name, ()))
        if max_history is not None:
            recorded = recorded[-max_history:]
        if len(recorded) < 2:
            continue
        r_star = fit(align_skylines(recorded), alpha, beta_fraction=beta_fraction)
        out[name] = Contract(name, float(periodic.at[name, "period"]), float(slo.at[name, "a_j"]),
                             float(slo.at[name, "d_j"]), r_star)
    return out
