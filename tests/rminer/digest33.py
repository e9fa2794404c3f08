"""Digests of seeded RMiner runs, to show that issue 33's speed-ups changed no result.

``python tests/rminer/digest33.py > tests/rminer/digests33.json`` computes them; the stored file was
computed by the code before the speed-ups (commit 97259c0, this file run against that checkout with
``PYTHONPATH``), and ``test_issue33_speed`` recomputes them with today's code.
"""

from __future__ import annotations

import hashlib
import json

from cluster_sim.rminer import RMinerConfig
from cluster_sim.rminer.model import RMinerModel
from cluster_sim.rminer.simulation import collect

PRESETS = ("ci", "default")
MODES = ("none", "plus1", "safe", "smart")
SEED = 5
#: a slice of the paper's scale (1,500 machines, 2,000 schedulers' decisions per second): the shape the
#: speed-ups are for, short enough for a test (the ``paper`` digests were computed by commit b71cc94)
PAPER_SLICE = 3.0
PAPER_MODES = ("none", "safe", "smart")


def config(preset: str, mode: str) -> RMinerConfig:
    if preset == "paper":
        return RMinerConfig.paper().replace(mode=mode, seed=SEED, horizon=PAPER_SLICE)
    return getattr(RMinerConfig, preset)().replace(mode=mode, seed=SEED)


def digest(model: RMinerModel) -> str:
    """SHA-256 of every task's record and the run's metrics, floats written exactly (``repr``)."""
    h = hashlib.sha256()
    for job in model.arrived:
        for t in job.tasks:
            h.update(repr((t.id, t.job.id, t.demand, t.duration, t.state, t.machine, t.released, t.start,
                           t.finish, t.attempts, t.tag, t.note)).encode())
    r = collect(model)
    h.update(repr(sorted(r.summary().items())).encode())
    h.update(repr(sorted(r.counts.items())).encode())
    h.update(repr(sorted(r.scheduled_by.items())).encode())
    for name in sorted(r.series):
        for part in r.series[name]:
            h.update(repr(list(part)).encode())
    return h.hexdigest()


def compute(preset: str, mode: str) -> str:
    cfg = config(preset, mode)
    model = RMinerModel(cfg)
    model.run_until(cfg.horizon)
    model.check_invariants()
    return digest(model)


if __name__ == "__main__":
    keys = [(p, m) for p in PRESETS for m in MODES] + [("paper", m) for m in PAPER_MODES]
    print(json.dumps({f"{p}/{m}": compute(p, m) for p, m in keys}, indent=1, sort_keys=True))
