"""The exercise's building blocks: seeded cases catch each named misconception, naming job and stage."""

import numpy as np
import pytest

from cluster_sim.morpheus.packing.stages import _as_lines, _ratio, gang_pieces, place_stage_gangs, stage_interval
from cluster_sim.morpheus.packing.lowcost_cases import check_packing, exercise_cases, first_difference, replay


# ---- the misconceptions, written as a student might --------------------------------------------------
def split_over_total(demands, k, tau_r, a=0):
    """Shares the time by the stage's part of the *whole* job's demand."""
    earlier = sum(1 for s in demands[:k] if s > 0)
    avail = tau_r - a + 1
    length = round(demands[k] / sum(demands) * avail)
    length = min(max(length, 1), avail - earlier)
    return tau_r - length + 1, tau_r


def _place(load, capacity, tau_l, tau_r, demand, gang, container, eligible):
    load, cap, z = _as_lines(load, capacity, container)
    x = np.zeros(load.shape[1], dtype=np.int64)
    occupied = []
    for piece in gang_pieces(demand, gang):
        best, best_cost = -1, np.inf
        for t in eligible(occupied, tau_l, tau_r):
            if np.any(load[:, t] + (x[t] + piece) * z > cap[:, t]):
                continue
            c = float(np.max(_ratio(load[:, t] + x[t] * z, cap[:, t])))
            if c < best_cost:
                best, best_cost = t, c
        if best < 0:
            return None
        x[best] += piece
        occupied.append(best)
    return x


def place_forward(load, capacity, tau_l, tau_r, demand, gang=1, container=1.0):
    """Starts the stage at tau_l and grows it to the right (allocating forward in time)."""
    def eligible(occ, lo, hi):
        right = max(occ) + 1 if occ else lo
        return range(min(right, hi), lo - 1, -1)
    return _place(load, capacity, tau_l, tau_r, demand, gang, container, eligible)


def place_with_holes(load, capacity, tau_l, tau_r, demand, gang=1, container=1.0):
    """Takes the cheapest step anywhere in the interval (leaving holes)."""
    return _place(load, capacity, tau_l, tau_r, demand, gang, container,
                  lambda occ, lo, hi: range(hi, lo - 1, -1))


def place_reference_copy(load, capacity, tau_l, tau_r, demand, gang=1, container=1.0):
    """The right answer through the variants' own loop: the harness itself is sound."""
    return _place(load, capacity, tau_l, tau_r, demand, gang, container,
                  lambda occ, lo, hi: range(hi, max(min(occ) - 1 if occ else hi, lo) - 1, -1))


# ---- the tests -----------------------------------------------------------------------------------------
def test_reference_blocks_pass_the_check():
    msg = check_packing(stage_interval, place_stage_gangs, seeds=(0, 1))
    assert msg.startswith("LowCost with your stage_interval and place_stage_gangs: all 8 cases")


def test_the_harness_loop_with_the_right_rule_passes():
    assert "agree" in check_packing(stage_interval, place_reference_copy, seeds=(0,))


@pytest.mark.parametrize("split, place, cause", [
    (split_over_total, place_stage_gangs, "proportion over total demand"),
    (stage_interval, place_forward, "allocating forward in time"),
    (stage_interval, place_with_holes, "leaving holes"),
])
def test_each_misconception_changes_the_answer_on_every_seed(split, place, cause):
    for seed in (0, 1, 2):
        diffs = [first_difference(replay(c, split, place), replay(c), c) for c in exercise_cases(seed)]
        assert any(diffs), f"{cause}: seed {seed} does not catch it"


@pytest.mark.parametrize("split, place, call", [
    (split_over_total, place_stage_gangs, r"split_over_total\(demands, k=\d, tau_r=\d+\) returned \(\d+, \d+\), "
                                          r"expected \(\d+, \d+\)"),
    (stage_interval, place_forward, r"place_forward\(tau_l=\d+, tau_r=\d+, demand=\d, gang=\d\) returned\n"
                                    r"  yours: .*\n  expected: .*\n  load: "),
    (stage_interval, place_with_holes, r"place_with_holes\(tau_l=\d+, .*\) returned\n  yours: "),
])
def test_check_names_the_first_job_stage_and_call_that_differ(split, place, call):
    with pytest.raises(AssertionError, match=r"seed 0, case \d, job \d \(period \d+, window \[\d+, \d+\), .*\):\n"
                                             r"  end point \d+ \(window steps count from a = \d+\), stage \d: " + call):
        check_packing(split, place, seeds=(0,))


def test_first_difference_names_job_and_stage_of_two_replays():
    case = exercise_cases(0)[0]
    msg = first_difference(replay(case, stage_interval, place_with_holes), replay(case), case)
    assert msg.startswith("seed 0, case 0, job 0") and "stage" in msg and "expected: steps" in msg
    assert first_difference(replay(case), replay(case), case) is None


def test_a_stub_gets_a_clear_message():
    def stub(*args, **kwargs):
        raise NotImplementedError

    with pytest.raises(AssertionError, match="is not implemented yet"):
        check_packing(stage_interval, stub, seeds=(0,))


def test_fig7_split_catches_the_total_demand_reading():
    assert stage_interval((10, 12, 16, 8), 2, 18) == (11, 18)
    assert split_over_total((10, 12, 16, 8), 2, 18) == (12, 18)   # 16/46 * 19 = 6.6 -> 7 steps


def split_off_by_one(demands, k, tau_r, a=0):
    """Counts the steps still available as tau_r - a (one short: both ends count)."""
    earlier = sum(1 for s in demands[:k] if s > 0)
    avail = tau_r - a
    remaining = sum(demands[: k + 1])
    length = min(max((2 * demands[k] * avail + remaining) // (2 * remaining), 1), avail - earlier)
    return tau_r - length + 1, tau_r


def test_the_off_by_one_in_the_steps_available_is_named_in_the_students_terms():
    # before: the library's "ValueError: tau_l=4, tau_r=3 are out of range" from place_stage_gangs
    with pytest.raises(AssertionError, match=r"split_off_by_one\(demands, k=\d, tau_r=\d+\) returned \(\d+, \d+\), "
                                             r"expected \(\d+, \d+\) -- your split counts the steps still available "
                                             r"as tau_r - a = \d+; both ends count"):
        check_packing(split_off_by_one, place_stage_gangs, seeds=(0,))


def test_the_total_demand_reading_is_named():
    with pytest.raises(AssertionError, match=r"split_over_total\(.*\) returned .* -- your split .*shares the time "
                                             r"over the total demand"):
        check_packing(split_over_total, place_stage_gangs, seeds=(0,))
