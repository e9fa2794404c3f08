"""Lab 10's predictions (issue 30's convention): asked before the result, explained beside it."""

from __future__ import annotations

from ..predict import Prediction

# Over seeds 0-15 at ci and 0-9 at default, value_share with everything on and with everything but
# Wing differ by less than 0.02 on average (ci: 0.766 vs 0.762), against +0.07 for Wing alone at ci:
# the direction of the question (Wing's gain shrinks on top of the shaper) holds at every seed pool.
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
