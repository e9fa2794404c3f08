"""Round 16 (s16cap, issue 33): the capacity scheduler's and the Morpheus model's per-event work made cheaper
changed nothing: every arm's whole cycle at ``ci`` and ``default`` (every field of the result, the admissions,
capacity logs, queue series and task records; see result_golden.py) equals the record written by the code before.

The ``paper`` records (three arms, about 10-30 s of CPU each) are compared when ``CLUSTER_SIM_PAPER_GOLDEN=1``."""

import json
import os

import pytest

import result_golden as golden  # tests/morpheus is on the path (no package here)

RECORDS = json.loads(golden.FILE.read_text())


def _diffs(name: str, got: dict) -> list[str]:
    want = RECORDS[name]
    return [f"{name}/{key}: before {value!r}, now {got.get(key)!r}" for key, value in want.items()
            if got.get(key) != value] + [f"{name}/{key}: new" for key in got if key not in want]


@pytest.mark.parametrize("name", sorted(golden.configs()))
def test_a_whole_cycle_gives_the_record_it_gave_before(name):
    diffs = _diffs(name, golden.cycle_record(golden.configs()[name]))
    assert not diffs, f"{len(diffs)} fields changed:\n" + "\n".join(diffs)


@pytest.mark.skipif(os.environ.get("CLUSTER_SIM_PAPER_GOLDEN") != "1",
                    reason="paper cycles (10-30 s of CPU each): set CLUSTER_SIM_PAPER_GOLDEN=1")
@pytest.mark.parametrize("name", [f"{arm}_paper" for arm in golden.PAPER_ARMS])
def test_a_paper_cycle_gives_the_record_it_gave_before(name):
    diffs = _diffs(name, golden.cycle_record(golden.configs(("paper",))[name]))
    assert not diffs, f"{len(diffs)} fields changed:\n" + "\n".join(diffs)
