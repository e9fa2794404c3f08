"""The capacity scheduler's speed-up (issue 33) changed no decision: every lab's seeded runs on it give
the records they gave before (see capacity_golden.py)."""

import json

import pytest

from . import capacity_golden as golden


def _diffs(part: str, got: dict) -> list[str]:
    want = json.loads(golden.FILE.read_text())[part]
    got = json.loads(json.dumps(got, sort_keys=True))
    out = [f"{part}/{name}: missing" for name in want if name not in got]
    for name, record in want.items():
        for key, value in record.items():
            new = got.get(name, {}).get(key)
            if new != value:
                out.append(f"{part}/{name}/{key}: before {value!r}, now {new!r}")
    return out


# Lab 03's cycles as the labs run them (admission passes batched) are compared by tests/morpheus/test_result_golden.py,
# whose records hold every field of these (the tasks with their attempts, the admissions, the metrics, the capacity
# logs, the DRA decisions, the preemptions) for the same cycles: simulating them here again cost the suite about 10 s.
# The Mesa-event-per-admission path below still compares them with these records.
@pytest.mark.xdist_group("golden")
@pytest.mark.parametrize("part", ["engine", "wing"])
def test_seeded_runs_on_the_capacity_scheduler_give_the_records_they_gave_before(part):
    scenarios = {"engine": golden.engine_scenarios, "morpheus": golden.morpheus_scenarios,
                 "wing": golden.wing_scenarios}
    got = scenarios[part]()
    diffs = _diffs(part, got)
    assert not diffs, f"{len(diffs)} records changed:\n" + "\n".join(diffs[:40])


@pytest.mark.xdist_group("golden")
@pytest.mark.parametrize("part", ["engine", "morpheus", "wing"])
def test_the_same_records_with_a_mesa_event_per_admission_pass(part, monkeypatch):
    # decision_events="each" schedules every admission pass (and arrival) as a Mesa event of its own, as before
    # passes were batched (ClusterModel.schedule_batched at low priority): both paths give the records above
    from cluster_sim.engine import ClusterModel

    monkeypatch.setattr(ClusterModel, "decision_events", "each")
    scenarios = {"engine": golden.engine_scenarios, "morpheus": golden.morpheus_scenarios,
                 "wing": golden.wing_scenarios}
    diffs = _diffs(part, scenarios[part]())
    assert not diffs, f"{len(diffs)} records changed:\n" + "\n".join(diffs[:40])
