"""Issue 33 (Lab 03 at paper): at a new plan step :class:`MorpheusModel` reads only the queues whose planned base
changes at that step (a paper cycle read all 100 queues at each of its 1,441 steps, 144k
``capacity_now`` calls, to change a few). Whole cycles of every arm, both reservation models and the literal worst
case, run with the queues kept and with every queue read at every step (the code before), must give the same
capacity changes, tasks, decisions and metrics; with ``check_every_event`` the model also checks after every event
that each queue is provisioned what ``capacity_now`` says. This test fails if a queue is left out at a step where it
changes (tried: leaving out the last step of each base, where it falls back to 0)."""

import heapq

import numpy as np
import pandas as pd
import pytest

from cluster_sim.morpheus.packing.config import ARMS, MorpheusConfig
from cluster_sim.morpheus.packing.model import STEP, MorpheusModel
from cluster_sim.morpheus.packing.result import collect, sweep_row
from cluster_sim.morpheus.packing.simulation import build_model


def _every_queue_every_step(self) -> None:
    """MorpheusModel._refresh as it was before: every queue read once a step begins or an R* piece changes."""
    now = self.time
    step = int(now // STEP)
    due = step != self._applied_step
    while self._changes and self._changes[0] <= now + 1e-9:
        heapq.heappop(self._changes)
        due = True
    if due:
        self._applied_step = step
        changed = [self.apply(name, residual=False) for name in self.names]
        if any(changed):
            self._residual()


def _cycle(config, check_every_event=False):
    model, w, plan, refused, end = build_model(config, check_every_event=check_every_event)
    model.run_until(end)
    model.check_invariants()
    result = collect(model, config, w, plan, refused, end, 0.0)
    tasks = sorted((t.id, t.start, t.finish) for j in model.jobs for t in j.tasks)
    decisions = pd.DataFrame(model.reprovisioner.decisions if model.reprovisioner else [])
    series = {k: (np.asarray(x).tobytes(), np.asarray(y).tobytes()) for k, (x, y) in result.series.items()}
    return (decisions, tasks, {n: list(v) for n, v in model.capacity_log.items()}, repr(model.metrics), series,
            sweep_row(result), result.runs.to_json(double_precision=15))


CASES = [dict(arm=arm, seed=s) for arm in ARMS for s in (0, 1)] + [
    dict(arm="morpheus_dra", seed=2, reservations="per_run"),
    dict(arm="morpheus", seed=1, reservations="per_run"),
    dict(arm="morpheus_dra", seed=0, worst_case="literal", rho=1.0, hold_seconds=180.0),
    dict(arm="model_only", seed=2, worst_case="resume"),
]


@pytest.mark.parametrize("fields", CASES, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
def test_kept_queues_give_the_cycle_of_every_queue_read(monkeypatch, fields):
    config = MorpheusConfig.ci().replace(**fields)
    kept = _cycle(config, check_every_event=True)
    monkeypatch.setattr(MorpheusModel, "_refresh", _every_queue_every_step)
    every = _cycle(config)
    pd.testing.assert_frame_equal(kept[0], every[0], check_exact=True)
    assert kept[1:] == every[1:]


def test_kept_queues_give_the_default_cycle(monkeypatch):
    config = MorpheusConfig.default().replace(arm="morpheus_dra", seed=3)
    kept = _cycle(config)
    monkeypatch.setattr(MorpheusModel, "_refresh", _every_queue_every_step)
    every = _cycle(config)
    pd.testing.assert_frame_equal(kept[0], every[0], check_exact=True)
    assert kept[1:] == every[1:]
