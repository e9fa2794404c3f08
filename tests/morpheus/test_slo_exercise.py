"""Issue 30, Lab 02: SLO inference exercised. The reference deadline is infer_slo's d_j; each misconception the
check teaches against fails with a message naming it; the stub says not implemented."""

from __future__ import annotations

import pytest

from cluster_sim.checking import NOT_IMPLEMENTED
from cluster_sim.morpheus import infer_slo
from cluster_sim.morpheus.slo.deadline_cases import _MISTAKES, check_deadline, deadline, deadline_cases


def test_the_reference_is_infer_slos_deadline():
    for runs, q in deadline_cases(0):
        full = runs.assign(t_in_avail=runs.period_start + 300.0)
        slo = infer_slo(full, d_percentile=q, cv_threshold=1.0, min_slack_ratio=0.0)
        assert slo.at["etl", "d_j"] == pytest.approx(deadline(runs, q))


@pytest.mark.parametrize("name", list(_MISTAKES))
def test_each_misconception_fails_naming_it(name):
    wrong, _ = _MISTAKES[name]
    with pytest.raises(AssertionError, match=f"\\({name}\\)"):
        check_deadline(lambda runs, q: wrong(runs, q), seeds=(0, 1))


def test_the_stub_says_not_implemented():
    def stub(runs, q):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match=NOT_IMPLEMENTED[:30]):
        check_deadline(stub)


def test_bad_percentile_is_refused():
    runs, _ = deadline_cases(0)[0]
    with pytest.raises(ValueError, match="d_percentile=101 is out of range"):
        deadline(runs, 101)
