"""The engine's seams refactor changed no result: every lab's seeded runs give identical metrics.

See golden.py: the reference numbers were computed by the engine before the refactor.
"""

import json

import pytest

from .golden import FILE, compute


@pytest.mark.xdist_group("golden")
def test_seeded_runs_give_the_metrics_they_gave_before_the_refactor():
    want = json.loads(FILE.read_text())
    got = json.loads(json.dumps(compute(), sort_keys=True))
    diffs = []
    for part in want:
        for scenario, metrics in want[part].items():
            for key, value in metrics.items():
                new = got[part].get(scenario, {}).get(key)
                if new != value:
                    diffs.append(f"{part}/{scenario}/{key}: before {value!r}, now {new!r}")
    assert not diffs, f"{len(diffs)} metrics changed:\n" + "\n".join(diffs[:40])
