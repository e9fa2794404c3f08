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


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_the_claims_read_the_seeds_already_run_and_give_the_same_table(preset, monkeypatch):
    import pandas as pd

    import cluster_sim.wing.claims as claims04
    from cluster_sim.wing.experiments import run_seeds

    config = WingDepsConfig.from_preset(preset)
    size = 3  # the paper's pool: the notebook's run_seeds(config, 3) are its seeds
    whole = claims04.claims_table(config, pool_size=size, client="inprocess", cache=False)
    seeds = run_seeds(config, 2, client="inprocess", cache=False)  # two of three: the third is run
    ran = []
    monkeypatch.setattr(claims04, "run", lambda c: ran.append(c.seed) or lab_run(c))
    lab_run = __import__("cluster_sim.wing.experiments", fromlist=["run"]).run
    reused = claims04.claims_table(config, pool_size=size, client="inprocess", cache=False, results=seeds)
    assert ran == [2]  # only the seed no result holds
    pd.testing.assert_frame_equal(reused, whole, check_exact=True)
    pd.testing.assert_frame_equal(reused.attrs["runs"], whole.attrs["runs"], check_exact=True)
    with pytest.raises(ValueError, match="another config"):
        claims04.claims_table(config, pool_size=size, results=run_seeds(config.replace(tr=50.0), 1, client="inprocess",
                                                                        cache=False))


def _classify_with_a_function_per_pair(jobs, deps):
    """Table 1's dependency labels as computed before: a Python function per pair of templates."""
    import pandas as pd

    from cluster_sim.wing.characterise import classify_templates

    tc = classify_templates(jobs, deps)
    jc = jobs[["job", "template"]].join(tc[["recurring", "periodic", "polling"]], on="template").set_index("job")
    d = deps[["job", "depOn"]].copy()
    d["t_job"] = jc["template"].reindex(d["job"]).to_numpy()
    d["t_dep"] = jc["template"].reindex(d["depOn"]).to_numpy()
    d["recurring"] = jc["recurring"].reindex(d["job"]).to_numpy() & jc["recurring"].reindex(d["depOn"]).to_numpy()
    d["polling"] = jc["polling"].reindex(d["job"]).to_numpy()
    per_job = d.groupby(["t_job", "t_dep", "job"]).size().rename("n").reset_index()
    pair = per_job.groupby(["t_job", "t_dep"])["n"].agg(one=lambda n: (n == 1).mean(), same=lambda n: n.nunique() == 1)
    pair["hard"] = (pair["one"] > 0.95) | pair["same"]
    hard_pair = pair["hard"].reindex(pd.MultiIndex.from_arrays([d["t_job"], d["t_dep"]])).to_numpy()
    d["hard"] = ~d["polling"] & (~d["recurring"] | hard_pair.astype(bool))
    return jc, d[["job", "depOn", "recurring", "hard", "polling"]]


@pytest.mark.parametrize("preset", ["ci", "default"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_table1s_labels_are_those_of_a_function_per_pair(preset, seed):
    import pandas as pd

    from cluster_sim.wing.characterise import classify

    cfg = WingDepsConfig.from_preset(preset, seed=seed)
    lake = generate_lake(cfg.lake_config())
    deps = single_hop(lake.prov, cfg.window)
    jc, dc = classify(lake.jobs, deps)
    jc_old, dc_old = _classify_with_a_function_per_pair(lake.jobs, deps)
    pd.testing.assert_frame_equal(jc, jc_old, check_exact=True)
    pd.testing.assert_frame_equal(dc, dc_old, check_exact=True)
    assert 0 < dc["hard"].sum() < len(dc)


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_owls_value_from_the_closure_already_computed_is_owl_value(preset):
    from cluster_sim.wing import job_local_value, multi_hop, owl_value, owl_value_of

    cfg = WingDepsConfig.from_preset(preset)
    lake = generate_lake(cfg.lake_config())
    deps = single_hop(lake.prov, cfg.window)
    k = job_local_value(lake.prov, lake.jobs["job"])
    k = k[k.index.isin(np.concatenate([deps["job"], deps["depOn"]]))]
    table = multi_hop(deps).table  # the notebook's unwindowed check computes it anyway
    ours, before = owl_value_of(table, k), owl_value(deps, k)
    assert ours.equals(before) and ours.attrs == before.attrs
    with pytest.raises(ValueError, match="multi_hop's table"):
        owl_value_of(deps, k)
    with pytest.raises(ValueError, match="no value for"):
        owl_value_of(table, k.iloc[1:])
