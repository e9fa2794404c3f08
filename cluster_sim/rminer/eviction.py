"""Eviction and conflicts of RM tasks (§3.5, Table 2).

An RM task runs on resources the CSV believes free. Two moments can end that:

* **a view update** - the shadow becomes visible to every scheduler. SafeRM uses shadow resources
  only during their *survival time*: at the update it evicts its running RM tasks, first trying to
  *migrate* them into the normal path (commit their allocation to the CSV, so the views see them)
  and *killing* them if that commit fails. SmartRM keeps them running through the *resource waiting
  delay* (the views see the resources as free, but nobody has taken them yet).
* **a conflict** - a normal commit succeeds in the CSV on resources an RM task occupies (the CSV
  cannot know). RMiner evicts RM tasks on that machine until the normal task fits. SafeRM picks
  the fewest, largest tasks and migrates before it kills; SmartRM evicts the lowest-priority tasks
  first and kills before it migrates (the killed task goes back to the RM queue to restart).

Example
-------
>>> import numpy as np
>>> running = [(11, np.array([2, 1]), 1), (12, np.array([5, 1]), 0), (13, np.array([1, 1]), 0)]
>>> conflict_victims(running, overflow=np.array([3, 0]), mode="safe")    # largest first
[12]
>>> conflict_victims(running, overflow=np.array([3, 0]), mode="smart")   # lowest priority, hungrier first
[12]
>>> conflict_victims(running, overflow=np.array([6, 0]), mode="smart")
[12, 13]
"""

from __future__ import annotations

import numpy as np

EVICTION_ORDER = {"safe": ("migrate", "kill"), "smart": ("kill", "migrate")}


def conflict_victims(running: list[tuple[int, np.ndarray, int]], overflow: np.ndarray, mode: str) -> list[int]:
    """RM tasks to evict from one machine so that ``overflow`` (R,) is covered.

    ``running``: ``(task_id, demand, priority)`` of the RM tasks on the machine. Returns task ids
    in eviction order; raises ``ValueError`` if even evicting them all cannot cover the overflow
    (that would mean the CSV itself is over capacity).
    """
    if mode == "safe":
        order = sorted(running, key=lambda r: (-int(r[1][0]), r[0]))
    elif mode == "smart":
        order = sorted(running, key=lambda r: (r[2], -int(r[1][0]), r[0]))
    else:
        raise ValueError(f"mode={mode!r} is not allowed: choose 'safe' or 'smart'")
    need = np.asarray(overflow, dtype=np.int64).copy()
    victims = []
    for tid, demand, _ in order:
        if not (need > 0).any():
            break
        victims.append(tid)
        need -= demand
    if (need > 0).any():
        raise ValueError(f"overflow={np.asarray(overflow).tolist()} exceeds what the RM tasks occupy")
    return victims


def evict_at_view_update(mode: str) -> bool:
    """Does this mode evict its running RM tasks at a view update? (SafeRM yes, SmartRM no.)"""
    if mode not in EVICTION_ORDER:
        raise ValueError(f"mode={mode!r} is not allowed: choose 'safe' or 'smart'")
    return mode == "safe"
