"""Labs extend the engine only through its documented seams, never through its private members."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "cluster_sim" / "engine"
PRIVATE = re.compile(r"(?:self\.|def |class )(_[a-z]\w*)")
USE = re.compile(r"\.(_[a-z]\w*)\b")


def engine_private_names() -> set[str]:
    names = set()
    for p in ENGINE.glob("*.py"):
        names |= set(PRIVATE.findall(p.read_text()))
    return names


def private_uses() -> list[str]:
    private = engine_private_names()
    found = []
    for p in sorted((ROOT / "cluster_sim").rglob("*.py")):
        if ENGINE in p.parents:
            continue
        text = p.read_text()
        own = set(PRIVATE.findall(text))  # a lab's own private members may share a name
        for n, line in enumerate(text.splitlines(), 1):
            for name in USE.findall(line):
                if name in private and name not in own:
                    found.append(f"{p.relative_to(ROOT)}:{n}: uses the engine's private {name!r}: {line.strip()}")
    return found


def test_no_lab_reaches_into_a_private_member_of_the_engine():
    found = private_uses()
    assert not found, "use the engine's documented seams (cluster_sim/engine/__init__.py):\n" + "\n".join(found)


def test_the_check_would_see_a_private_use(tmp_path, monkeypatch):
    assert "_queued" in engine_private_names() and "_release_waiters" in engine_private_names()


def test_every_seam_the_contract_names_exists():
    from cluster_sim.engine import CapacityClusterModel, ClusterConfig, ClusterModel, Scheduler

    doc = (ENGINE / "__init__.py").read_text()
    model = ClusterModel(ClusterConfig.ci(), jobs=[])
    for name in ("schedule", "schedule_every", "callback", "make_jobs", "make_schedulers", "route", "task_started",
                 "task_ended", "job_finished", "job_failed", "queue_changed", "view_synced", "check_invariants",
                 "check_ledger", "check_tasks", "settle", "after_event"):
        assert f"{name}(" in doc and callable(getattr(model, name)), name
    for name in ("queue_key", "decide", "choose", "on_blocked"):
        assert f"{name}(" in doc and callable(getattr(Scheduler, name)), name
    for name in ("commit", "kill", "evict"):
        assert f"csv.{name}(" in doc and callable(getattr(model.csv, name)), name
    assert CapacityClusterModel.__name__ in doc
