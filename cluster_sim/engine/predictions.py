"""Lab 00's predictions (the tour): asked before §2's one-slot timeline, the two-scheduler conflict, §4's stale
views and §5's decision throughput (see :mod:`cluster_sim.predict`).

Each answer is what the runs show, recomputed by ``tests/engine/test_predictions.py``:

* ``SLOT_STALE`` (00.2) and ``CONFLICT`` (00.3) are hand-built cases: exact, the same at every preset and seed.
* ``STALE_WAIT`` (00.4) is the claim ``waiting_grows_with_staleness``: the gap in mean job wait between 4 s views
  and fresh ones on the stale cluster is positive at every seed run (ci seeds 0-59, default 0-29; module docstring
  of :mod:`cluster_sim.engine.claims`).
* ``DECISION_THROUGHPUT`` (00.5): one scheduler taking 2/λ s per decision (λ the tasks offered per second) against
  four taking as long (:func:`cluster_sim.engine.claims.decision_throughput`). Measured over seeds 0-9 at ci and
  0-4 at default: one scheduler's utilisation is 42-64 % of the four schedulers' at ci and 47-52 % at default
  ("about half": the test accepts 0.3-0.7), and its mean queue length is 12-25 times theirs at ci, 170-200 at
  default.
"""

from __future__ import annotations

from ..predict import Prediction

SLOT_STALE = Prediction(
    "00.2",
    "One machine with 2 CPUs. Job A (2 CPUs for 3 s) arrives at t = 0.5, job B (2 CPUs) at t = 1. The scheduler's "
    "view of the central state is refreshed only every 10 s. When does B start?",
    ("at 1, when it arrives", "at 3.5, when A's CPUs return to the ledger", "at 10, at the next refresh",
     "at 13.5, a refresh period after the release"),
    "at 10, at the next refresh",
    explanation="A's CPUs return to the ledger (the central state) at 3.5, but the scheduler decides on its own "
                "copy, which still shows them taken: B's task is blocked until a refresh changes the copy, at "
                "t = 10. For 6.5 s the CPUs are free and nobody can see them: the Resource Miner paper calls them "
                "shadow resources (Lab 08). With an always-fresh view (update_delay = 0) the release itself wakes "
                "the scheduler and B starts at 3.5.",
    why_wrong={"at 1, when it arrives": "one slot holds one task at a time: A holds both CPUs until 3.5",
               "at 3.5, when A's CPUs return to the ledger": "that is what happens with an always-fresh view; a "
               "stale view does not change when the ledger does",
               "at 13.5, a refresh period after the release": "refreshes happen at fixed times (10, 20, ...), "
                                                              "not a period after each release"})

CONFLICT = Prediction(
    "00.3",
    "The same machine (2 CPUs), now two schedulers, each with its own view refreshed every 10 s. Job A goes to "
    "scheduler 0, job B to scheduler 1; both (2 CPUs for 3 s) arrive at t = 1 and each scheduler takes 0.1 s to "
    "decide. What happens to B?",
    ("it starts at 1.1 next to A: each scheduler has its own view, so each has its own CPUs",
     "its commit is rejected (a conflict) and it starts at the next refresh, t = 10.1",
     "its commit is rejected and it is retried until it succeeds, at A's finish, t = 4.1",
     "it never conflicts: the central state tells scheduler 1 that A took the CPUs"),
    "its commit is rejected (a conflict) and it starts at the next refresh, t = 10.1",
    explanation="Both views show the machine empty, so both schedulers pick it at t = 1.1. A's commit reaches the "
                "central state first and holds the CPUs; B's commit is checked against the ledger and rejected: "
                "a conflict. The rejection refreshes only that machine's row of scheduler 1's view, which now "
                "shows the CPUs taken, so B waits for the next full refresh (t = 10) and starts one decision "
                "later. With always-fresh views scheduler 1 would have seen A's claim: no conflict, and B starts "
                "one decision after A releases its CPUs.",
    why_wrong={"it starts at 1.1 next to A: each scheduler has its own view, so each has its own CPUs":
               "a view is a copy of the one ledger, not a partition of the machines: only 2 CPUs exist",
               "its commit is rejected and it is retried until it succeeds, at A's finish, t = 4.1":
               "after the conflict scheduler 1's view shows the CPUs taken, and it stays that way until the next "
               "refresh: nothing tells it about A's release",
               "it never conflicts: the central state tells scheduler 1 that A took the CPUs":
               "the central state tells a scheduler only at refreshes (or when its commit fails); between them the "
               "scheduler decides on its copy"})

STALE_WAIT = Prediction(
    "00.4",
    "Four schedulers at load 0.9. Compared with always-fresh views, what do views refreshed every 4 s do to the "
    "mean job wait (arrival to first task start)?",
    ("jobs wait longer", "about the same: conflicts are retried at once, so they cost only a decision",
     "jobs wait less: schedulers decide without waiting for fresh state"),
    "jobs wait longer",
    explanation="A stale view hides released resources: a scheduler whose copy shows no room blocks until the next "
                "refresh, although the central state may have had room for seconds (the shadow resources of §2, "
                "now at scale). Conflicts add retries on top. The gap varies from seed to seed with the load each "
                "workload happens to offer, but it was positive at every seed we ran (§7 measures it over a pool).",
    why_wrong={"about the same: conflicts are retried at once, so they cost only a decision":
               "conflicts are the smaller cost; the larger is waiting for a refresh while the ledger has room",
               "jobs wait less: schedulers decide without waiting for fresh state":
               "a scheduler never waits for fresh state to decide; it waits when its stale copy shows no room"})

DECISION_THROUGHPUT = Prediction(
    "00.5",
    "Tasks arrive at λ per second. One scheduler with an always-fresh view now needs 2/λ seconds to decide each "
    "task (so it could keep up with half of them). Against four schedulers that need as long each, sharing the "
    "state on views 0.5 s old, what happens to the cluster's CPU utilisation?",
    ("about the same: the machines, not the scheduler, limit the work done",
     "about half of the four schedulers': the one scheduler places at most λ/2 tasks per second, and its queue grows",
     "higher than the four schedulers': it never conflicts"),
    "about half of the four schedulers': the one scheduler places at most λ/2 tasks per second, and its queue grows",
    explanation="A scheduler is a server too. Little's law applied to it (L = λW with W = the decision time) says it "
                "is busy a fraction λ × think_time of the time: here 2, which cannot be. So it places at most "
                "1/think_time = λ/2 tasks per second, half of what arrives, and the rest piles up in its queue while "
                "machines stand idle. Four schedulers deciding in parallel are each busy half the time and keep up; "
                "the price is that each decides on a copy of the state, hence the conflicts and waits of §4. That "
                "is why shared-state designs exist (Omega): decision throughput.",
    why_wrong={"about the same: the machines, not the scheduler, limit the work done":
               "only if the scheduler keeps up; a task waiting for a decision uses no machine",
               "higher than the four schedulers': it never conflicts":
               "conflicts cost one retry each; a scheduler that cannot keep up leaves half the work undecided"})
