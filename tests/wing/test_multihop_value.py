"""Algorithm 1 and Owl's valuation against brute-force path enumeration, the closed form and the paper's Fig. 5."""

import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_sim.wing import (
    algorithm1_literal,
    check_extend_reach,
    check_owl_value,
    check_owl_weights,
    closed_form_value,
    diameter,
    expected_iterations,
    extend_reach,
    figure5_example,
    hidden_value,
    multi_hop,
    owl_value,
    owl_value_with,
    owl_weights,
    value_decay,
    value_exploration,
)


# ---- random DAGs with diamonds, labels shuffled so that label order is not topological order ----
@st.composite
def dags(draw, max_jobs=11):
    n = draw(st.integers(2, max_jobs))
    pairs = [(j, u) for j in range(n) for u in range(j)]
    edges = set(draw(st.lists(st.sampled_from(pairs), unique=True, min_size=1, max_size=min(len(pairs), 28))))
    if draw(st.booleans()):  # a diamond hung under job 0: two paths of equal length between n+3 and n
        u, a, b, d = n, n + 1, n + 2, n + 3
        edges |= {(a, u), (b, u), (d, a), (d, b), (u, 0)}
        n += 4
    perm = draw(st.permutations(range(n)))
    deps = pd.DataFrame([(perm[j], perm[u]) for j, u in sorted(edges)], columns=["job", "depOn"])
    jobs = sorted(set(deps["job"]) | set(deps["depOn"]))
    k = pd.Series(draw(st.lists(st.integers(0, 20), min_size=len(jobs), max_size=len(jobs))), index=jobs, dtype=float)
    return deps, k


def graph(deps):
    g = nx.DiGraph()
    g.add_edges_from(zip(deps["depOn"], deps["job"]))  # upstream -> downstream
    return g


def brute_force_pairs(deps, weight=None, e_op=math.prod, p_op=sum, max_hops=None):
    """{(job, depOn): p_op over every path of e_op over its edge weights}, by enumerating simple paths."""
    g = graph(deps)
    w = weight if weight is not None else {(d, u): 1.0 / n for (d, u), n in
                                           zip(zip(deps["job"], deps["depOn"]), deps.groupby("job")["depOn"].transform("size"))}
    out = {}
    for u in g:
        for d in nx.descendants(g, u):
            vals = [e_op([w[(b, a)] for a, b in zip(p, p[1:])]) for p in nx.all_simple_paths(g, u, d)
                    if max_hops is None or len(p) - 1 <= max_hops]
            if vals:
                out[(d, u)] = p_op(vals)
    return out


def as_dict(table, col="agg"):
    return {(j, d): a for j, d, a in zip(table["job"], table["depOn"], table[col])}


def brute_force_value(deps, k, max_hops=None):
    agg = k.copy()
    for (d, u), w in brute_force_pairs(deps, max_hops=max_hops).items():
        agg[u] += w * k[d]
    return agg


# ---- Algorithm 1 ------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(dags())
def test_multi_hop_equals_brute_force_path_enumeration(case):
    deps, _ = case
    table, _ = multi_hop(deps)
    got, want = as_dict(table), brute_force_pairs(deps)
    assert got.keys() == want.keys()
    for pair in want:
        assert got[pair] == pytest.approx(want[pair], rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(dags())
def test_owl_value_equals_brute_force_and_the_closed_form(case):
    deps, k = case
    agg = owl_value(deps, k)
    assert list(agg.index) == list(k.index)
    np.testing.assert_allclose(agg.to_numpy(), brute_force_value(deps, k).to_numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(agg.to_numpy(), closed_form_value(deps, k).to_numpy(), rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(dags())
def test_total_value_is_conserved_on_an_untruncated_dag(case):
    deps, k = case
    agg = owl_value(deps, k)
    sources = sorted(set(deps["depOn"]) - set(deps["job"]))  # jobs with no upstream dependency
    assert agg[sources].sum() == pytest.approx(k.sum(), rel=1e-12)


def test_truncation_loses_value_so_conservation_is_a_real_check():
    deps = pd.DataFrame({"job": [1, 2, 3], "depOn": [0, 1, 2]})
    k = pd.Series([0.0, 0.0, 0.0, 8.0])
    assert owl_value(deps, k)[0] == 8.0
    assert owl_value(deps, k, max_iterations=0)[0] == 0.0  # single hops only: 3's value stops at 2
    assert owl_value(deps, k, max_iterations=1)[0] == 0.0  # paths of at most 2 hops
    assert owl_value(deps, k, max_iterations=2)[0] == 8.0


@settings(max_examples=60, deadline=None)
@given(dags())
def test_loop_runs_floor_log2_diameter_plus_one_iterations(case):
    deps, _ = case
    d = nx.dag_longest_path_length(graph(deps))
    assert diameter(deps) == d
    _, iterations = multi_hop(deps)
    assert iterations == expected_iterations(d) == math.floor(math.log2(d)) + 1


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33])
def test_iterations_on_chains(length):
    deps = pd.DataFrame({"job": range(1, length + 1), "depOn": range(length)})
    table, iterations = multi_hop(deps)
    assert iterations == math.floor(math.log2(length)) + 1
    assert len(table) == length * (length + 1) // 2  # every ordered pair of the chain


def test_no_dependency_no_iteration():
    table, iterations = multi_hop(pd.DataFrame({"job": [], "depOn": []}))
    assert iterations == 0 and len(table) == 0
    assert expected_iterations(0) == 0
    with pytest.raises(ValueError, match="diameter=-1"):
        expected_iterations(-1)


@settings(max_examples=40, deadline=None)
@given(dags(), st.integers(0, 4))
def test_max_iterations_covers_paths_up_to_2_to_the_i_hops(case, i):
    deps, k = case
    agg = owl_value(deps, k, max_iterations=i)
    np.testing.assert_allclose(agg.to_numpy(), brute_force_value(deps, k, max_hops=2**i).to_numpy(), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(dags())
def test_generic_aggregation_functions(case):
    deps, _ = case
    ones = lambda d: np.ones(len(d))
    g = graph(deps)
    # hop counts: e_op = +, p_op = min / max give the shortest / longest path between each pair
    short, _ = multi_hop(deps, ones, np.add, "min")
    long, _ = multi_hop(deps, ones, np.add, "max")
    for (d, u), a in as_dict(short).items():
        assert a == nx.shortest_path_length(g, u, d)
    for (d, u), a in as_dict(long).items():
        assert a == max(len(p) - 1 for p in nx.all_simple_paths(g, u, d))
    # the widest path (max over paths of the product of 1/N weights): a p_op with no inverse
    widest, _ = multi_hop(deps, owl_weights, np.multiply, np.maximum)
    want = brute_force_pairs(deps, p_op=max)
    assert as_dict(widest) == pytest.approx(want)
    # a callable p_op goes through pandas and agrees with the ufunc
    counted, _ = multi_hop(deps, ones, np.multiply, lambda s: s.sum())
    paths, _ = multi_hop(deps, ones, np.multiply, "sum")
    assert as_dict(counted) == as_dict(paths)
    for (d, u), a in as_dict(paths).items():
        assert a == sum(1 for _ in nx.all_simple_paths(g, u, d))


@settings(max_examples=40, deadline=None)
@given(dags(), st.integers(0, 2**31 - 1), st.floats(0.0, 30.0))
def test_time_window_equals_filtering_the_full_closure(case, seed, omega):
    deps, k = case
    rng = np.random.default_rng(seed)
    order = list(nx.topological_sort(graph(deps)))
    submit, end, t = {}, {}, 0.0
    for j in order:  # monotone times: a job is submitted after its inputs ended
        ready = max([end[u] for u in deps.loc[deps["job"] == j, "depOn"]], default=0.0)
        submit[j] = max(t, ready) + rng.uniform(0, 3)
        end[j] = submit[j] + rng.uniform(0.1, 4)
        t = submit[j]
    jobs = pd.DataFrame({"job": list(submit), "submit": list(submit.values()), "end": list(end.values())})
    table, _ = multi_hop(deps, omega=omega, jobs=jobs)
    full = as_dict(multi_hop(deps).table)
    want = {(d, u): a for (d, u), a in full.items() if submit[d] <= end[u] + omega}
    assert as_dict(table) == pytest.approx(want)
    agg = owl_value(deps, k, omega=omega, jobs=jobs)
    direct = k.copy()
    for (d, u), a in want.items():
        direct[u] += a * k[d]
    np.testing.assert_allclose(agg.to_numpy(), direct.to_numpy(), atol=1e-12)


def test_window_is_inclusive_at_omega():
    deps = pd.DataFrame({"job": [1, 2], "depOn": [0, 1]})
    jobs = pd.DataFrame({"job": [0, 1, 2], "submit": [0.0, 2.0, 5.0], "end": [1.0, 3.0, 6.0]})
    # 2 is submitted exactly omega = 4 after 0 ended: the pair counts; with omega just below it does not
    assert (2, 0) not in as_dict(multi_hop(deps, omega=3.999, jobs=jobs).table)
    table, _ = multi_hop(deps, omega=4.0, jobs=jobs)
    assert as_dict(table)[(2, 0)] == 1.0


def test_window_refuses_times_that_run_backwards_along_an_edge():
    deps = pd.DataFrame({"job": [1], "depOn": [0]})
    jobs = pd.DataFrame({"job": [0, 1], "submit": [5.0, 1.0], "end": [6.0, 2.0]})
    with pytest.raises(ValueError, match=r"not monotone along the dependency \(job=1, depOn=0\)"):
        multi_hop(deps, omega=1.0, jobs=jobs)
    with pytest.raises(ValueError, match="omega needs jobs"):
        multi_hop(deps, omega=1.0)
    with pytest.raises(ValueError, match="omega=-1"):
        multi_hop(deps, omega=-1.0, jobs=jobs)
    with pytest.raises(ValueError, match="no submit/end for 1 job"):
        multi_hop(deps, omega=1.0, jobs=jobs.iloc[:1])
    with pytest.raises(ValueError, match="jobs.submit is NaN"):
        multi_hop(deps, omega=1.0, jobs=jobs.assign(submit=[np.nan, 1.0]))


# ---- the pseudocode's subtraction ---------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(dags())
def test_literal_pseudocode_with_bag_semantics_agrees(case):
    deps, _ = case
    lit = algorithm1_literal(deps, "bag")
    ours = multi_hop(deps)
    assert lit.iterations == ours.iterations
    assert as_dict(lit.table) == pytest.approx(as_dict(ours.table))


def test_set_semantics_lose_a_path_when_two_lengths_share_a_weight():
    # j reads m and u; m reads u: j reaches u in one hop (1/2) and in two (1/2 x 1), equal rows
    deps = pd.DataFrame({"job": ["m", "j", "j"], "depOn": ["u", "m", "u"]})
    k = pd.Series({"u": 0.0, "m": 0.0, "j": 4.0})
    assert as_dict(algorithm1_literal(deps, "bag").table)[("j", "u")] == 1.0
    assert as_dict(algorithm1_literal(deps, "set").table)[("j", "u")] == 0.5
    assert owl_value(deps, k)["u"] == 4.0
    with pytest.raises(ValueError, match="semantics='sql'"):
        algorithm1_literal(deps, "sql")


# ---- Fig. 5 -----------------------------------------------------------------------------------
def test_figure5_value_aggregation_and_decay():
    ex = figure5_example()
    agg = owl_value(ex.deps, ex.k)
    assert agg.to_dict() == {"A": 31.0, "B": 2.0, "C": 28.0, "D": 8.0, "E": 16.0}
    t = [0.0, 2.9, 3.0, 4.0, 5.0, 5.5, 7.0, 9.0]
    decay = value_decay(ex.deps, ex.k, ex.submit, "A", t)
    assert decay.tolist() == [31, 31, 29, 29, 1, 1, 1, 1]
    # the wrong readings give different curves
    d_e_at_own_times = [31, 31, 29, 29, 25, 25, 17, 1]  # D and E lost only when they are submitted
    max_not_sum = ex.k["A"] + max(ex.k["B"], agg["C"])  # the max over downstream aggregates
    assert decay.tolist() != d_e_at_own_times
    assert max_not_sum != agg["A"]
    assert (decay - ex.k["A"]).tolist() != decay.tolist()  # forgetting A's own value ends at 0, not 1
    assert decay[-1] == ex.k["A"]


def test_value_decay_rejects_bad_input():
    ex = figure5_example()
    with pytest.raises(ValueError, match="job='Z'"):
        value_decay(ex.deps, ex.k, ex.submit, "Z", [0.0])
    with pytest.raises(ValueError, match="downstream job 'B'"):
        value_decay(ex.deps, ex.k, ex.submit.drop("B"), "A", [0.0])
    with pytest.raises(ValueError, match="NaN"):
        value_decay(ex.deps, ex.k, ex.submit, "A", [np.nan])


# ---- Fig. 6 -----------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(dags())
def test_value_exploration_grows_to_the_whole_value(case):
    deps, k = case
    k = k + 1.0  # positive values: every job's share is defined
    ex = value_exploration(deps, k)
    agg = owl_value(deps, k)
    _, iterations = multi_hop(deps)
    assert list(ex["stage"]) == ["job-local", "single hop"] + [f"iteration {i}" for i in range(1, iterations + 1)]
    assert list(ex["hops"]) == [0] + [2**i for i in range(iterations + 1)]
    assert (np.diff(ex["share"]) >= -1e-12).all()
    assert ex["share"].iloc[-1] == pytest.approx(1.0)
    assert ex["share"].iloc[0] == pytest.approx(1.0 - hidden_value(k, agg))
    assert ex["mean_job_share"].iloc[-1] == pytest.approx(1.0)


def test_value_exploration_counts_jobs_without_dependencies_and_restricts_to_some_jobs():
    """A job of k outside deps finds its own value at every stage (it once became NaN and dropped
    out of the later stages' sums, so the job-local share came out above the single-hop one)."""
    deps = pd.DataFrame({"job": [2, 3, 4], "depOn": [1, 2, 3]})
    k = pd.Series({1: 0.0, 2: 0.0, 3: 0.0, 4: 4.0, 5: 10.0})  # 5 is on its own
    ex = value_exploration(deps, k)
    agg = owl_value(deps, k)
    assert ex["share"].tolist() == pytest.approx([14 / 26, 18 / 26, 22 / 26, 1.0])
    assert ex["share"].iloc[0] == pytest.approx(1.0 - hidden_value(k, agg))
    pd.testing.assert_series_equal(ex.attrs["agg"], agg)
    some = value_exploration(deps, k, over=[1, 2])  # jobs 1 and 2: aggregate 4 each, own value 0
    assert some["share"].tolist() == pytest.approx([0.0, 0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="over names 1 job"):
        value_exploration(deps, k, over=[1, 9])


def test_hidden_value_needs_a_positive_total():
    assert hidden_value(pd.Series([1.0]), pd.Series([4.0])) == 0.75
    with pytest.raises(ValueError, match="positive total"):
        hidden_value(pd.Series([0.0]), pd.Series([0.0]))


# ---- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("deps, match", [
    (pd.DataFrame({"job": [1, 2, 3], "depOn": [3, 1, 2]}), r"cycle .*1 -> 3 -> 2 -> 1"),
    (pd.DataFrame({"job": [1, np.nan], "depOn": [0, 1]}), r"deps.job has 1 missing"),
    (pd.DataFrame({"job": [1]}), r"lacks column\(s\) \['depOn'\]"),
    (pd.DataFrame({"job": [1, 1], "depOn": [0, 0]}), r"2 duplicate|1 duplicate"),
    ([(1, 0)], r"must be a pandas DataFrame"),
])
def test_bad_dependency_tables_are_refused(deps, match):
    with pytest.raises(ValueError, match=match):
        multi_hop(deps)
    if isinstance(deps, pd.DataFrame) and {"job", "depOn"} <= set(deps.columns):
        with pytest.raises(ValueError, match=match):
            owl_value(deps, pd.Series(1.0, index=[0, 1, 2, 3]))


@pytest.mark.parametrize("k, match", [
    (pd.Series({0: 1.0, 1: np.nan}), r"k\[1\]=nan"),
    (pd.Series({0: 1.0, 1: -2.0}), r"k\[1\]=-2.0"),
    (pd.Series({0: 1.0}), r"no value for 1 job"),
    (pd.Series([1.0, 2.0], index=[0, 0]), r"duplicated job"),
    ({0: 1.0, 1: 1.0}, r"must be a pandas Series"),
])
def test_bad_values_are_refused(k, match):
    with pytest.raises(ValueError, match=match):
        owl_value(pd.DataFrame({"job": [1], "depOn": [0]}), k)


def test_bad_weights_and_p_op_are_refused():
    deps = pd.DataFrame({"job": [1], "depOn": [0]})
    with pytest.raises(ValueError, match="wt_fn returned 2 weights for 1 edges"):
        multi_hop(deps, lambda d: np.ones(2))
    with pytest.raises(ValueError, match="NaN weight"):
        multi_hop(deps, lambda d: np.full(1, np.nan))
    with pytest.raises(ValueError, match="p_op='median'"):
        multi_hop(deps, p_op="median")
    with pytest.raises(ValueError, match="max_iterations=-1"):
        multi_hop(deps, max_iterations=-1)


def test_jobs_without_dependencies_keep_their_own_value_in_k_order():
    deps = pd.DataFrame({"job": ["b"], "depOn": ["a"]})
    k = pd.Series({"z": 5.0, "b": 2.0, "a": 1.0})
    assert owl_value(deps, k).to_dict() == {"z": 5.0, "b": 2.0, "a": 3.0}
    assert list(owl_value(deps, k).index) == ["z", "b", "a"]


# ---- the exercise's misconceptions --------------------------------------------------------------
def extend_set_semantics(t1, t2):
    m = t1.merge(t2, left_on="depOn", right_on="job", suffixes=("", "_2"))
    out = pd.DataFrame({"job": m["job"], "depOn": m["depOn_2"], "wt": m["wt"] * m["wt_2"]})
    return out.drop_duplicates(["job", "depOn"])


def weights_over_downstream(deps):
    return 1.0 / deps.groupby("depOn")["job"].transform("size")


def diamond():
    deps = pd.DataFrame({"job": ["a", "b", "d", "d"], "depOn": ["u", "u", "a", "b"]})
    return deps, pd.Series({"u": 1.0, "a": 0.0, "b": 0.0, "d": 10.0})


def test_reference_building_blocks_pass_their_checks(reference_as_student):
    assert "agree" in check_extend_reach(extend_reach)
    assert "agree" in check_owl_weights(owl_weights)
    assert "agree" in check_owl_value(owl_value)
    assert "agree" in check_owl_value(lambda deps, k: owl_value_with(deps, k, extend_reach, owl_weights))


@settings(max_examples=30, deadline=None)
@given(dags())
def test_algorithm1_on_the_reference_blocks_equals_the_library(case):
    deps, k = case
    np.testing.assert_allclose(owl_value_with(deps, k).to_numpy(), owl_value(deps, k).to_numpy(), atol=1e-12)


def test_misconception_set_semantics_counts_a_diamond_once():
    deps, k = diamond()
    assert owl_value(deps, k)["u"] == 11.0
    assert owl_value_with(deps, k, extend=extend_set_semantics)["u"] == 6.0  # half of d's value lost
    with pytest.raises(AssertionError, match=r"through 2 middle jobs .*bag semantics"):
        check_extend_reach(extend_set_semantics)


def test_misconception_weights_over_downstream_edges():
    deps = pd.DataFrame({"job": ["c", "c"], "depOn": ["a", "b"]})  # c reads two jobs, each read only by c
    k = pd.Series({"a": 0.0, "b": 0.0, "c": 4.0})
    assert owl_value(deps, k)[["a", "b"]].tolist() == [2.0, 2.0]
    wrong = owl_value_with(deps, k, wt_fn=weights_over_downstream)
    assert wrong[["a", "b"]].tolist() == [4.0, 4.0]  # c's value counted twice: value is created, not conserved
    with pytest.raises(AssertionError, match=r"1/N over the consumers of depOn"):
        check_owl_weights(weights_over_downstream)


def test_misconception_forgetting_the_jobs_own_value(reference_as_student):
    deps, k = diamond()
    forgot = lambda d, kk: owl_value(d, kk) - kk
    assert forgot(deps, k)["u"] != owl_value(deps, k)["u"]
    with pytest.raises(AssertionError, match=r"short by exactly its own job-local value"):
        check_owl_value(forgot)


def test_checks_report_a_student_stub_and_wrong_shapes(reference_as_student):
    def stub(*args):
        raise NotImplementedError
    for check in (check_extend_reach, check_owl_weights, check_owl_value):
        with pytest.raises(AssertionError, match="not implemented yet"):
            check(stub)
    with pytest.raises(AssertionError, match="without column"):
        check_extend_reach(lambda t1, t2: t1[["job", "depOn"]])
    with pytest.raises(AssertionError, match="one weight per row"):
        check_owl_weights(lambda d: np.ones(1))
    with pytest.raises(AssertionError, match="join t1.depOn to t2.job"):
        check_extend_reach(lambda t1, t2: extend_reach(t2, t1).rename(columns={"job": "depOn", "depOn": "job"}))


def test_a_self_dependency_is_dropped_and_counted_not_refused():
    # a job that read its own earlier write is not an inter-job dependency: the row is dropped
    # (counted in attrs["self_dependencies"]), not refused as a one-job cycle
    from cluster_sim.wing import check_deps, components

    deps = pd.DataFrame({"job": [1, 1, 2], "depOn": [0, 1, 1]})
    clean = check_deps(deps)
    assert list(zip(clean["job"], clean["depOn"])) == [(1, 0), (2, 1)] and clean.attrs["self_dependencies"] == 1
    table, _ = multi_hop(deps)
    assert as_dict(table) == {(1, 0): 1.0, (2, 1): 1.0, (2, 0): 1.0} and table.attrs["self_dependencies"] == 1
    k = pd.Series({0: 0.0, 1: 0.0, 2: 4.0})
    agg = owl_value(deps, k)
    assert agg.tolist() == [4.0, 4.0, 4.0] and agg.attrs["self_dependencies"] == 1  # job 1 passes all of 2's value on
    assert value_exploration(deps, k).attrs["self_dependencies"] == 1
    cc = components(pd.DataFrame({"job": [0, 1, 2, 3]}), deps)
    assert cc["size"].tolist() == [3, 1] and cc.attrs["self_dependencies"] == 1


def test_duplicate_jobs_under_the_window_are_refused_naming_them():
    # JobRepo holds one row per job: two rows for job 1 with other times must not be resolved by keeping one
    deps = pd.DataFrame({"job": [1, 2], "depOn": [0, 1]})
    jobs = pd.DataFrame({"job": [0, 1, 1, 2, 2], "submit": [0.0, 2.0, 2.5, 5.0, 5.0], "end": [1.0, 3.0, 3.5, 6.0, 6.0]})
    with pytest.raises(ValueError, match=r"jobs has 2 job\(s\) with more than one row \(JobRepo holds one row per "
                                         r"job\): 1, 2"):
        multi_hop(deps, omega=4.0, jobs=jobs)
    with pytest.raises(ValueError, match=r"more than one row .*: 1, 2"):
        owl_value(deps, pd.Series(1.0, index=[0, 1, 2]), omega=4.0, jobs=jobs)
