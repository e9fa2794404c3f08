"""Lab 04 at ``paper`` within minutes (issue 33): the doubling's window chooses the join rows it keeps instead
of dropping them after building them, and the claims read the seeds the notebook already ran. Each change is
exact: the old algorithm, kept here, gives the same tables bit for bit on seeded lakes; work is counted, not
timed."""

from typing import NamedTuple

import numpy as np
import pytest

import cluster_sim.wing.multihop as multihop
from cluster_sim.wing import WingDepsConfig, generate_lake, single_hop

#: the tests that read ``before_and_after``'s runs: one xdist worker makes them (tests/notebook_runs.py's groups)
IN_ITS_GROUP = pytest.mark.xdist_group("lab04_before_and_after")
#: ... and those that read ``doublings``
DOUBLINGS_GROUP = pytest.mark.xdist_group("lab04_doublings")


def _extend_built_then_windowed(t1, t2, e_op, times, reduce, n, keep=()):
    """The doubling's extend before the change: every row of ``t1 ⋈ t2`` built, then the window ω applied."""
    lo = np.searchsorted(t2.job, t1.dep, side="left")
    cnt = np.searchsorted(t2.job, t1.dep, side="right") - lo
    j, d, w = multihop._window(times)(*multihop._join(t1, t2, e_op, lo, cnt))
    return multihop._Tab(*reduce(np.concatenate([p.job for p in keep] + [j]), np.concatenate([p.dep for p in keep] + [d]),
                                 np.concatenate([p.wt for p in keep] + [w]), n))


def _states(deps, jobs, omega):
    return [(i, s, f) for i, s, f, _ in multihop.doubling(deps, omega=omega, jobs=jobs)]


class Doublings(NamedTuple):
    new: list  # the doubling's states with the windowed join
    old: list  # ... with every row of the join built, then windowed (_extend_built_then_windowed)
    new_rows: int  # rows the joins built in the first
    old_rows: int  # ... and in the second


@pytest.fixture(scope="module")
def doublings():
    """``doublings(preset, seed, omega)``: the doubling over the preset's lake at ``seed`` each way, with the rows its
    joins built. The bit-for-bit test compares the states; the rows test reads the counts of the same two doublings at
    ``default``, seed 0 and the config's ω (it ran them a second time, 7 s). Only that one's states are kept for the
    module (and the four small lakes). The tests that read it are one xdist group, so one worker makes them."""
    kept, lakes = {}, {}

    def get(preset, seed, omega):
        key = (preset, seed, omega)
        if key in kept:
            return kept[key]
        cfg = WingDepsConfig.from_preset(preset, seed=seed)
        if (preset, seed) not in lakes:  # each lake once for its four ω, as the test did
            lake = generate_lake(cfg.lake_config())
            lakes[preset, seed] = lake.jobs, single_hop(lake.prov, cfg.window)
        jobs, deps = lakes[preset, seed]
        built = []
        join = multihop._join

        def counted(*args):
            out = join(*args)
            built.append(len(out[0]))
            return out

        with pytest.MonkeyPatch.context() as m:
            m.setattr(multihop, "_join", counted)
            new = _states(deps, jobs, omega)
            new_rows = sum(built)
            built.clear()
            m.setattr(multihop, "_extend", _extend_built_then_windowed)
            old = _states(deps, jobs, omega)
        out = Doublings(new, old, new_rows, sum(built))
        if key == ("default", 0, cfg.omega):
            kept[key] = out
        return out

    return get


@pytest.mark.parametrize("preset", ["ci", "default"])
@pytest.mark.parametrize("seed", [0, 1])
@DOUBLINGS_GROUP
def test_the_windowed_join_gives_the_doublings_tables_bit_for_bit(doublings, preset, seed):
    cfg = WingDepsConfig.from_preset(preset, seed=seed)
    for omega in (cfg.omega, 86400.0, 3600.0, 0.0):
        new, old, _, _ = doublings(preset, seed, omega)
        assert len(new) == len(old) and (len(new) > 2 or omega < cfg.omega)
        for (i, s1, f1), (k, s2, f2) in zip(new, old, strict=True):
            assert i == k
            for a, b in zip(list(s1) + list(f1), list(s2) + list(f2)):
                assert a.dtype == b.dtype and np.array_equal(a, b), f"iteration {i}, ω = {omega}"


@DOUBLINGS_GROUP
def test_the_windowed_join_builds_only_the_rows_the_window_keeps(doublings):
    cfg = WingDepsConfig.default()
    assert cfg.seed == 0
    _, _, windowed, every = doublings("default", cfg.seed, cfg.omega)
    assert 0 < windowed < every / 2, (windowed, every)


@pytest.mark.parametrize("preset", ["ci", "default"])
@IN_ITS_GROUP
def test_the_claims_read_the_seeds_already_run_and_give_the_same_table(preset, monkeypatch, before_and_after):
    import dataclasses

    import pandas as pd

    import cluster_sim.wing.claims as claims04
    from cluster_sim.wing.experiments import run as lab_run

    config = WingDepsConfig.from_preset(preset)
    size = 3  # the paper's pool: the notebook's run_seeds(config, 3) are its seeds
    whole = claims04.claims_table(config, pool_size=size, client="inprocess", cache=False)
    seeds = [before_and_after(preset, s).new for s in (0, 1)]  # two of three, run by run: the third is run
    ran = []
    monkeypatch.setattr(claims04, "run", lambda c: ran.append(c.seed) or lab_run(c))
    reused = claims04.claims_table(config, pool_size=size, client="inprocess", cache=False, results=seeds)
    assert ran == [2]  # only the seed no result holds
    pd.testing.assert_frame_equal(reused, whole, check_exact=True)
    pd.testing.assert_frame_equal(reused.attrs["runs"], whole.attrs["runs"], check_exact=True)
    other = dataclasses.replace(seeds[0], config=config.replace(tr=50.0))  # a run of another config: only its
    with pytest.raises(ValueError, match="another config"):                # config is read before the refusal
        claims04.claims_table(config, pool_size=size, results=[other])
    assert ran == [2]


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


def _extend_rows(monkeypatch):
    """Count the rows of the tables the doubling's joins build (``_extend``'s output)."""
    built = []
    extend = multihop._extend

    def counted(*args, **kwargs):
        out = extend(*args, **kwargs)
        built.append(len(out))
        return out

    monkeypatch.setattr(multihop, "_extend", counted)
    return built


def _exploration_before(deps, k, *, omega=None, jobs=None, over=None):
    """``value_exploration`` before the change: the doubling keeps every short path, one bincount over both tables."""
    import pandas as pd

    from cluster_sim.wing.value import check_values

    deps = multihop.check_deps(deps)
    k = check_values(k, deps)
    keep = k.index if over is None else pd.Index(over)
    rows = [("job-local", 0, k)]
    for i, short, ftr, labels in multihop.doubling(deps, omega=omega, jobs=jobs):
        kk = k.reindex(labels).to_numpy()
        j, d, w = (np.concatenate([a, b]) for a, b in zip(short, ftr))
        ds = np.bincount(d, weights=w * kk[j], minlength=len(labels))
        rows.append(("single hop" if i == 0 else f"iteration {i}", 2 ** i,
                     k + pd.Series(ds, index=labels).reindex(k.index, fill_value=0.0)))
    agg = rows[-1][2].rename("agg_value")
    total = agg.reindex(keep)
    pos = total > 0
    out = pd.DataFrame({
        "stage": [r[0] for r in rows], "hops": [r[1] for r in rows],
        "share": [float(r[2].reindex(keep).sum() / total.sum()) if total.sum() > 0 else 1.0 for r in rows],
        "mean_job_share": [float((r[2].reindex(keep)[pos] / total[pos]).mean()) if pos.any() else 1.0 for r in rows],
    })
    out.attrs["agg"] = agg
    out.attrs["self_dependencies"] = deps.attrs["self_dependencies"]
    return out


class BeforeAndAfter(NamedTuple):
    new: object  # experiments.run(cfg) as it is
    old: object  # ... with value_exploration as it was before (_exploration_before)
    kept: int  # rows the doubling's joins built in the first run
    every: int  # ... and in the second


@pytest.fixture(scope="module")
def before_and_after():
    """``before_and_after(preset, seed)``: Lab 04's run of the preset at ``seed``, with value_exploration as it is and
    as it was before issue 33, each made once for the tests of this module (the claims' pools of seeds 0 and 1 and
    the runs at those seeds are seeds 0-3: each is run once each way, where each test ran its own, 16 runs a preset).
    The tests that read it are one xdist group, so one worker makes them."""
    import cluster_sim.wing.experiments as experiments

    done = {}

    def get(preset, seed):
        if (preset, seed) not in done:
            cfg = WingDepsConfig.from_preset(preset, seed=seed)
            with pytest.MonkeyPatch.context() as m:
                built = _extend_rows(m)
                new = experiments.run(cfg)
                kept = sum(built)
                m.setattr(experiments, "value_exploration", _exploration_before)
                built.clear()
                old = experiments.run(cfg)
            done[preset, seed] = BeforeAndAfter(new, old, kept, sum(built))
        return done[preset, seed]

    return get


@pytest.mark.parametrize("preset", ["ci", "default"])
@pytest.mark.parametrize("seed", [0, 1])
@IN_ITS_GROUP
def test_the_doubling_kept_to_the_valid_jobs_gives_the_same_tables_bit_for_bit(before_and_after, preset, seed):
    """Fig. 6's shares read only the valid jobs' paths: the short table keeps only theirs (issue 33). The
    exploration table, every job's ``agg`` and the claims' rows are those of the doubling that kept every path.
    The claims are measured on the pool's runs made each way (claims_table's ``results``: the rows it reads are
    those its own runs give, test_the_claims_read_the_seeds_already_run_and_give_the_same_table)."""
    import pandas as pd

    from cluster_sim.claims import pool
    from cluster_sim.wing.claims import claims_table, metrics_of

    cfg = WingDepsConfig.from_preset(preset, seed=seed)
    new, old, kept, every = before_and_after(preset, seed)
    assert 0 < kept < 0.9 * every, (kept, every)  # the last ω of the log holds many short paths (ci 18 %, default 56 %)
    pd.testing.assert_frame_equal(new.exploration, old.exploration, check_exact=True)
    assert new.iterations == old.iterations
    assert new.exploration.attrs["agg"].drop(new.valid).isna().all()  # the others' paths were not kept
    agg, old_agg = new.agg, old.exploration.attrs["agg"]  # the others': a second doubling kept to their paths
    assert agg.name == old_agg.name and agg.index.equals(old_agg.index)
    assert np.array_equal(agg.to_numpy(), old_agg.to_numpy())
    assert metrics_of(new) == metrics_of(old)
    runs = [before_and_after(preset, s) for s in pool(seed, 3)]
    claims = claims_table(cfg, pool_size=3, client="inprocess", cache=False, results=[r.new for r in runs])
    old_claims = claims_table(cfg, pool_size=3, client="inprocess", cache=False, results=[r.old for r in runs])
    pd.testing.assert_frame_equal(claims, old_claims, check_exact=True)
    pd.testing.assert_frame_equal(claims.attrs["runs"], old_claims.attrs["runs"], check_exact=True)


def test_the_doublings_upstream_keeps_only_those_short_paths_and_refuses_a_string():
    import pandas as pd

    deps = pd.DataFrame({"job": [2, 3, 4, 5], "depOn": [1, 2, 3, 4]})  # a chain 1 <- 2 <- 3 <- 4 <- 5
    whole = list(multihop.doubling(deps))
    kept = list(multihop.doubling(deps, upstream=[1, 3]))
    assert [i for i, *_ in kept] == [i for i, *_ in whole]
    for (_, s1, f1, labels), (_, s2, f2, _) in zip(kept, whole, strict=True):
        assert set(labels[s1.dep]) <= {1, 3}
        ours = s2.dep[np.isin(labels[s2.dep], [1, 3])]
        assert np.array_equal(s1.dep, ours) and all(np.array_equal(a, b) for a, b in zip(f1, f2))
    with pytest.raises(ValueError, match="upstream='1' is not allowed"):
        list(multihop.doubling(deps, upstream="1"))


def test_the_last_iterations_do_not_sum_the_short_table_again(monkeypatch):
    """A short pair nothing is added to passes through an iteration unchanged (issue 33: at ``paper`` the last
    four iterations added a few thousand pairs to 40M and each sorted and summed all 40M again); the tables are
    those of the doubling that summed them again (the bit-for-bit test above). The lake is one whose last
    frontier is small, as at ``paper`` (default seed 2: 65 pairs against 212,761 short ones); with a large one
    (seed 0: 42,128) the frontier's jobs hold most of the short pairs and there is little to leave out."""
    cfg = WingDepsConfig.default().replace(seed=2)
    lake = generate_lake(cfg.lake_config())
    deps = single_hop(lake.prov, cfg.window)
    summed = []
    reducer = multihop._reducer

    def counting(p_op):
        reduce = reducer(p_op)

        def counted(job, dep, wt, n):
            summed[-1] += len(job)
            return reduce(job, dep, wt, n)

        return counted

    monkeypatch.setattr(multihop, "_reducer", counting)
    states = []
    summed.append(0)
    for i, short, ftr, _ in multihop.doubling(deps, omega=cfg.omega, jobs=lake.jobs):
        states.append((i, len(short), len(ftr), summed[-1]))
        summed.append(0)
    assert states[-2][2] < 0.01 * states[-2][1], states  # the premise: a small frontier before the last iteration
    i, short, ftr, rows = states[-1]
    # the last iteration finds no path: it sums only the pairs of the jobs of the frontier before it (before: all)
    assert ftr == 0 and 0 < rows < short / 4, states


def test_the_pools_seeds_are_estimated_so_the_paper_pool_starts_together(monkeypatch):
    """Issue 33: at ``paper`` the notebook's three seeds went through ``run_grid``'s probe (the first seed alone in
    the kernel) and then a two-worker cluster, where one worker ran the other two in turn. With the config's own
    estimate the route is chosen before anything runs, and a paper pool is long enough to use every lane."""
    import pandas as pd

    import cluster_sim.sweep as sweep
    import cluster_sim.wing.claims as claims04
    import cluster_sim.wing.experiments as experiments

    seen = []
    fake = lambda *a, **k: seen.append(k.get("estimate")) or pd.DataFrame({"result": []})  # noqa: E731
    monkeypatch.setattr(experiments, "run_grid", fake)
    monkeypatch.setattr(claims04, "run_grid", fake)
    paper = WingDepsConfig.paper()
    experiments.run_seeds(paper, 3)
    claims04.claims_runs(paper, pool_size=3)
    assert [e(paper) for e in seen] == [paper.work().seconds] * 2
    assert 3 * paper.work().seconds > sweep.AUTO_PARALLEL_SECONDS > 3 * WingDepsConfig.default().work().seconds
