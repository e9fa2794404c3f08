"""Lab 04 at ``paper`` within minutes (issue 33): the doubling's window chooses the join rows it keeps instead
of dropping them after building them, and the claims read the seeds the notebook already ran. Each change is
exact: the old algorithm, kept here, gives the same tables bit for bit on seeded lakes; work is counted, not
timed."""

import numpy as np
import pytest

import cluster_sim.wing.multihop as multihop
from cluster_sim.wing import WingDepsConfig, generate_lake, single_hop


def _extend_built_then_windowed(t1, t2, e_op, times, reduce, n, keep=()):
    """The doubling's extend before the change: every row of ``t1 ⋈ t2`` built, then the window ω applied."""
    lo = np.searchsorted(t2.job, t1.dep, side="left")
    cnt = np.searchsorted(t2.job, t1.dep, side="right") - lo
    j, d, w = multihop._window(times)(*multihop._join(t1, t2, e_op, lo, cnt))
    return multihop._Tab(*reduce(np.concatenate([p.job for p in keep] + [j]), np.concatenate([p.dep for p in keep] + [d]),
                                 np.concatenate([p.wt for p in keep] + [w]), n))


def _states(deps, jobs, omega):
    return [(i, s, f) for i, s, f, _ in multihop.doubling(deps, omega=omega, jobs=jobs)]


@pytest.mark.parametrize("preset", ["ci", "default"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_windowed_join_gives_the_doublings_tables_bit_for_bit(monkeypatch, preset, seed):
    cfg = WingDepsConfig.from_preset(preset, seed=seed)
    lake = generate_lake(cfg.lake_config())
    deps = single_hop(lake.prov, cfg.window)
    for omega in (cfg.omega, 86400.0, 3600.0, 0.0):
        new = _states(deps, lake.jobs, omega)
        with monkeypatch.context() as m:
            m.setattr(multihop, "_extend", _extend_built_then_windowed)
            old = _states(deps, lake.jobs, omega)
        assert len(new) == len(old) and (len(new) > 2 or omega < cfg.omega)
        for (i, s1, f1), (k, s2, f2) in zip(new, old, strict=True):
            assert i == k
            for a, b in zip(list(s1) + list(f1), list(s2) + list(f2)):
                assert a.dtype == b.dtype and np.array_equal(a, b), f"iteration {i}, ω = {omega}"


def test_the_windowed_join_builds_only_the_rows_the_window_keeps(monkeypatch):
    cfg = WingDepsConfig.default()
    lake = generate_lake(cfg.lake_config())
    deps = single_hop(lake.prov, cfg.window)
    built = []
    join = multihop._join

    def counted(*args):
        out = join(*args)
        built.append(len(out[0]))
        return out

    monkeypatch.setattr(multihop, "_join", counted)
    _states(deps, lake.jobs, cfg.omega)
    windowed = sum(built)
    built.clear()
    monkeypatch.setattr(multihop, "_extend", _extend_built_then_windowed)
    _states(deps, lake.jobs, cfg.omega)
    assert 0 < windowed < sum(built) / 2, (windowed, sum(built))
