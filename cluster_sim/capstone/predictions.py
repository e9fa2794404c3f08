"""Lab 10's predictions (issue 30's convention): asked before the result, explained beside it."""

from __future__ import annotations

from ..predict import Prediction

# Measured (run_grid over the ablation's arms): at ci over seeds 0-13, Wing alone raises value_share by
# +0.14 on average, Wing on top of the four others by +0.02 (all vs all-wing); over every 3-seed window
# of those seeds the gain on top is below half the gain alone (0.00-0.05 against 0.08-0.20). At default
# over seeds 0-9 wing_after_shaper is "equal" within 0.05 in every 6-seed pool.
WING_AFTER_SHAPER = Prediction(
    key="10.wing",
    question=("Wing alone raises the value attained by ordering the queues. With the four other mechanisms on "
              "(the shaper among them), does Wing add more value than alone, about as much, or much less?"),
    choices=("more than alone", "about as much", "much less"),
    answer="much less",
    explanation=("Ordering matters only while jobs wait for tokens. The shaper gives back the tokens a job's "
                 "remaining stages cannot use, so jobs are admitted almost at once and the queues Wing orders are "
                 "nearly empty: there is little left to reorder."),
    why_wrong={
        "more than alone": "Wing has nothing to add when no job waits: more mechanisms do not give it more queue.",
        "about as much": "Compare the admission waits: with the shaper on they fall several-fold, and Wing acts only on them.",
    },
)

# Measured (the claims' ablation): conflict_rate is 0.000 for task-by-task placement and 0.028 (sd 0.009) with
# IPA alone at ci over seeds 0-13, 0.026-0.029 at default; ipa_meets_conflicts is reproduced in every 8-seed
# pool at ci and 6-seed pool at default.
IPA_CONFLICTS = Prediction(
    key="10.ipa",
    question=("Four schedulers place tasks on views of the cluster refreshed every few seconds. With IPA placing "
              "each stage as a whole (the longest vertices on the fastest machines), do their commits meet more "
              "conflicts than task-by-task placement, about as many, or fewer?"),
    choices=("more", "about as many", "fewer"),
    answer="more",
    explanation=("Every scheduler's stale view shows the same machines free, and IPA sends every stage's longest "
                 "vertices to the same fastest ones: parallel plans collide on them until the views refresh. "
                 "Task-by-task worst-fit placement spreads each scheduler's tasks over the emptiest machines it "
                 "sees, and its own claims move it on to others."),
    why_wrong={
        "about as many": "Placement rules that agree on 'the best machine' are what make optimistic commits collide.",
        "fewer": "IPA plans on the same stale view as the others: planning better does not make the view fresher.",
    },
)
