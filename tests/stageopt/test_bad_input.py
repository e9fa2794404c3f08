"""Issue 15, finding 5: NaN, negative and out-of-range inputs are refused with a ValueError naming the argument.

Before the fix each of these returned a silently wrong answer (or numpy's own message):
``pareto_indices`` dropped a valid point, ``slots_per_machine`` returned INT64_MIN, ``fuxi_placement``
placed on NaN watermarks, ``stage_latency`` read machine -1 as the last machine, ``ipa_clustered`` left
an instance unplaced at -1 and accepted NaN latencies, ``raa_path`` called a 1-D set "empty" and
``density_clusters_1d`` raised numpy's histogram message.
"""

import numpy as np
import pytest

from cluster_sim.stageopt import fuxi_placement, pareto_indices, raa_general, raa_path, slots_per_machine, stage_latency
from cluster_sim.stageopt.clustering import density_clusters_1d, ipa_clustered, machine_groups
from cluster_sim.stageopt.experiments import optimality_study
from cluster_sim.stageopt.placement import is_column_ordered

nan = np.nan


def test_pareto_indices_refuses_nan_instead_of_dropping_a_valid_point():
    with pytest.raises(ValueError, match=r"points\[0, 1\] is nan"):
        pareto_indices([[1, nan], [2, 1], [0.5, 3]])
    with pytest.raises(ValueError, match="points.*inf"):
        pareto_indices([[1, np.inf], [2, 1]])


@pytest.mark.parametrize("free, theta0, alpha, m, msg", [
    ([[nan, 4.0], [8, 8]], [2, 4], 2, None, r"free\[0, 0\] is nan"),
    ([[-1.0, 4.0], [8, 8]], [2, 4], 2, None, r"free\[0, 0\]=-1.0 is negative"),
    ([[4.0, 4.0]], [nan, 4], 2, None, "theta0"),
    ([[4.0, 4.0]], [2, 4], nan, None, "alpha=nan"),
    ([[4.0, 4.0]], [2, 4], 2.5, None, "alpha=2.5"),
    ([[4.0, 4.0]], [2, 4], 2, 0, "m=0"),
])
def test_slots_per_machine_refuses_bad_free_theta_alpha_m(free, theta0, alpha, m, msg):
    with pytest.raises(ValueError, match=msg):
        slots_per_machine(np.array(free), theta0, alpha, m=m)


def test_fuxi_refuses_nan_watermarks():
    with pytest.raises(ValueError, match=r"watermark\[0\] is nan"):
        fuxi_placement([nan, 0.5], [1, 1], 2)
    with pytest.raises(ValueError, match=r"watermark\[1, 0\] is nan"):
        fuxi_placement([[0.1, 0.2], [nan, 0.3]], [1, 1], 2)
    with pytest.raises(ValueError, match="m=nan"):
        fuxi_placement([0.1, 0.5], [1, 1], nan)


@pytest.mark.parametrize("L, a, msg", [
    ([[1.0, 2.0], [3.0, 4.0]], [-1, 0], r"assignment\[0\]=-1 is not a machine: allowed 0 <= machine <= 1"),
    ([[1.0, 2.0], [3.0, 4.0]], [5, 0], r"assignment\[0\]=5 is not a machine"),
    ([[1.0, 2.0], [3.0, 4.0]], [0.5, 0], r"assignment\[0\]=0.5"),
    ([[nan, 2.0], [3.0, 4.0]], [0, 1], "L must hold finite"),
    ([[1.0, 2.0], [3.0, 4.0]], [0], r"assignment must have one machine per instance"),
])
def test_stage_latency_refuses_machines_that_do_not_exist(L, a, msg):
    with pytest.raises(ValueError, match=msg):
        stage_latency(L, a)


@pytest.mark.parametrize("L_rep, inst, rows, mach, cap, msg", [
    ([[1.0, 2.0]], [0, -1], [1.0, 2.0], [0, 1], [1, 1], r"inst_labels\[1\]=-1 is negative"),
    ([[nan, 2.0]], [0, 0], [1.0, 2.0], [0, 1], [1, 1], r"L_rep\[0, 0\] is nan"),
    ([[-1.0, 2.0]], [0, 0], [1.0, 2.0], [0, 1], [1, 1], r"L_rep\[0, 0\]=-1.0 is negative"),
    ([[1.0, 2.0]], [0, 0], [1.0, nan], [0, 1], [1, 1], r"rows\[1\] is nan"),
    ([[1.0, 2.0]], [0, 0], [1.0, 2.0, 3.0], [0, 1], [1, 1], "rows must have one entry per instance"),
    ([[1.0, 2.0]], [0, 0], [1.0, 2.0], [0, -2], [1, 1], r"mach_labels\[1\]=-2 is negative"),
])
def test_ipa_clustered_refuses_negative_labels_and_nan(L_rep, inst, rows, mach, cap, msg):
    with pytest.raises(ValueError, match=msg):
        ipa_clustered(np.array(L_rep), inst, rows, mach, cap)


def test_raa_path_names_a_one_dimensional_set_as_such():
    with pytest.raises(ValueError, match=r"pareto_sets\[0\] must be a \(points, objectives\) array.*shape \(2,\)"):
        raa_path([np.array([1.0, 2.0])])
    with pytest.raises(ValueError, match=r"pareto_sets\[0\] must be a \(points, objectives\) array"):
        raa_general([np.array([1.0, 2.0])])


@pytest.mark.parametrize("rows, kw, msg", [
    ([1.0, nan, 3.0], {}, r"rows\[1\] is nan"),
    ([1.0, -4.0, 3.0], {}, r"rows\[1\]=-4.0 is negative"),
    ([1.0, 10.0, 300.0], {"bandwidth": nan}, "bandwidth=nan"),
    ([1.0, 10.0, 300.0], {"bins": 0}, "bins=0"),
    ([1.0, 10.0, 300.0], {"bins": 10**400}, "bins=~1e400"),  # was an OverflowError from math.isfinite
    ([1.0, 10.0, 300.0], {"bandwidth": 10**400}, "bandwidth=~1e400"),
])
def test_density_clusters_refuses_nan_and_negative_rows(rows, kw, msg):
    with pytest.raises(ValueError, match=msg):
        density_clusters_1d(rows, **kw)


def test_is_column_ordered_and_machine_groups_refuse_nan():
    with pytest.raises(ValueError, match="L must hold finite"):
        is_column_ordered([[1.0, nan]])
    with pytest.raises(ValueError, match="keys"):
        machine_groups(np.array([[1.0, nan]]))


@pytest.mark.parametrize("kw, msg", [({"cases": 0}, "cases=0"), ({"m": 0}, "m=0"), ({"n": -1}, "n=-1"),
                                     ({"perturb": nan}, "perturb=nan"), ({"perturb": -0.1}, "perturb=-0.1"),
                                     # an int too large for a float: an OverflowError before issue 31
                                     ({"cases": 10**400}, "cases=~1e400"), ({"perturb": 10**400}, "perturb=~1e400")])
def test_optimality_study_refuses_bad_sizes(kw, msg):
    with pytest.raises(ValueError, match=msg):
        optimality_study(**kw)


def test_labs_06_07_check_their_arguments_with_the_one_validation_module():
    """Issue 31, item 5: one validation kit for pure functions' arguments (``cluster_sim.validate``); the
    lab's own copy (``_check`` in stageopt) is gone, so a rule reads the same in every lab."""
    import importlib.util

    from cluster_sim import validate
    from cluster_sim.stageopt import clustering, experiments, placement, raa

    assert importlib.util.find_spec("cluster_sim.stageopt._check") is None
    for module in (clustering, experiments, placement, raa):
        for name in ("finite_array", "index_array", "whole_number", "number"):
            if hasattr(module, name):
                assert getattr(module, name) is getattr(validate, name), (module.__name__, name)
