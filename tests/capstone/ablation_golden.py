"""The ablation frames tests/capstone/ablation_golden.json records (claim arms, two seeds, ci and default), with
floats as hex; tests/capstone/test_capstone.py compares them up to rounding, since their last bits depend on the
CPU. Regenerate only for a change meant to change results:
``python -m tests.capstone.ablation_golden`` from the repository."""

from __future__ import annotations

import json
from pathlib import Path

from cluster_sim.capstone import CapstoneConfig, ablation
from cluster_sim.capstone.claims import claim_arms

PATH = Path(__file__).with_name("ablation_golden.json")


def frame_values(frame) -> dict:
    return {c: [float(x).hex() if isinstance(x, float) else x for x in frame[c].tolist()] for c in frame.columns}


def main() -> None:
    frames = {preset: frame_values(ablation(CapstoneConfig.from_preset(preset), 2, points=claim_arms(),
                                            client="inprocess", cache=False)) for preset in ("ci", "default")}
    PATH.write_text(json.dumps(frames, indent=0) + "\n")


if __name__ == "__main__":
    main()
