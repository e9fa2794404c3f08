"""Lab 03's predictions (issue 30): asked before the result the lab exists to show.

Every answer is what the runs show at every preset and over the seeds measured (the comments say what was
measured and how); ``tests/morpheus/test_morpheus_predictions.py`` recomputes each from a run with the lab's own
functions, so an answer cannot drift from the code.
"""

from __future__ import annotations

from ...predict import Prediction

#: Deterministic: ``fig7_example().stage_steps()`` is [(0, 4), (5, 10), (11, 18), (19, 19)].
FIG7_STAGE3 = Prediction(
    "03.fig7",
    "Fig. 7: LowCost places stages right to left. Stage 4 has taken the last step; 19 steps are left for stages "
    "1-3, whose demands are 10, 12 and 16 container-steps (38 in all). How many of the 19 steps does LowCost give "
    "stage 3?",
    None, 8.0, tolerance=0.5, unit="steps",
    explanation="LowCost shares the steps left in proportion to demand: 16 / 38 of 19 steps is 8.0, so stage 3 "
                "gets steps 11-18. Proportional shares give every stage the same density (containers per step), "
                "so no stage forces a high peak; right to left because the last stage must end by d_j, and each "
                "earlier stage then takes its share of what is left before it.",
)

#: Must-reproduce claim ``dra_beats_static`` (Lab 03's claims table, 12 ci seeds, 6 default seeds); measured with
#: ``compare``: ci seeds 0-11 9/106 against 17/106, default seeds 0-5 pooled DRA below static.
DRA = Prediction(
    "03.dra",
    "Same plan, same runs: static Morpheus (R* packed by LowCost) against the same plan with dynamic "
    "reprovisioning (DRA). Pooled over the seeds, does DRA have fewer, about as many, or more worst-case "
    "violations?",
    ("fewer", "about as many", "more"),
    "fewer",
    explanation="A run that outgrows its reservation gets nothing more in the worst case unless DRA grants it "
                "extra containers while its reservation is recent: R* is fitted to past runs and the next run "
                "varies (Lab 02), so some runs need the repair. DRA never takes anything away, it only adds "
                "containers the plan has room for.",
    why_wrong={"about as many": "runs do outgrow R* (Lab 02's held-out misses); DRA repairs a share of them",
               "more": "DRA only adds containers where the plan has room; it cannot make a run slower"},
)

#: ``rescue_case`` at seeds 0-9 at ci and default (tests/morpheus/test_rescue.py): missed without DRA, met with it.
RESCUE = Prediction(
    "03.rescue",
    "Fig. 12 in miniature: a run is held back 5 minutes of its 20-minute reservation, whose end is its deadline. "
    "It could run twice as wide as its reservation. What happens without DRA, and with DRA?",
    ("misses without, meets with", "meets both ways", "misses both ways", "meets without, misses with"),
    "misses without, meets with",
    explanation="Without DRA the run has 15 minutes of its reservation left for 20 minutes of work, and the worst "
                "case gives it nothing after: it misses. With DRA its demand (twice its reservation) exceeds what "
                "is reserved from its first minute, and DRA grants up to rho x the recent reservation while the "
                "plan has room, so it runs twice as wide and ends about 10 minutes after it starts, inside its "
                "reservation: the rescue does not depend on how R_recent is read.",
    why_wrong={"meets both ways": "the worst case gives a run exactly its reservation: 15 minutes of it hold "
                                  "three quarters of the work",
               "misses both ways": "DRA grants extra containers while the reservation is recent and the plan has "
                                   "room; the run can use them because its parallelism is twice its reservation",
               "meets without, misses with": "DRA only adds containers; it never takes any away"},
)
