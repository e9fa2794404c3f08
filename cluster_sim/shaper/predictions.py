"""Lab 01's predictions (the plan-aware shaper): asked before §4's toy job, §6's token-limited cluster and §7's
fleet (see :mod:`cluster_sim.predict`).

Each answer is what the runs show, recomputed by ``tests/shaper/test_predictions.py``:

* ``NOT_STARTED`` (01.4): the toy job of §4 is hand-built (fixed durations): exact at every preset and seed. Without
  shaping and with the paper's reading it ends at 5 s; with the *not started* reading at 9 s.
* ``CLUSTER_QUEUEING`` (01.6): :func:`cluster_sim.shaper.experiments.run_cluster`. Over seeds 0-7 at ci and 0-3 at
  default every job runs exactly as long with the shaper as without it (run times equal to 1e-12 s: the no-latency
  theorem of §5.2) and mean queueing falls at every seed (ci: from 83-233 s to 0-1.3 s; default: from 163-276 s to
  0 s); no job is ever admitted later (the claims ``no_latency_penalty``, ``queueing_falls``, ``no_job_admitted_later``).
* ``OPPORTUNITY`` (01.7): :func:`cluster_sim.shaper.experiments.run_fleet`. The shaper's savings never exceed the
  opportunity (a theorem: it never holds fewer tokens than are in use) and stay below it in every cluster: over seeds
  0-1 at ci it takes 68-93 % of the over-allocated jobs' opportunity (the claim ``savings_below_opportunity``).
"""

from __future__ import annotations

from ..predict import Prediction

NOT_STARTED = Prediction(
    "01.4",
    "The toy job holds 20 tokens: stage b (ten vertices of 5 s) runs beside a short chain a → c (ten vertices of 1 s "
    "each). Without shaping it ends at 5 s. A shaper that counts only the vertices *not yet started* as remaining "
    "(running vertices left out) gives tokens back at every vertex completion. When does the job end?",
    ("at 5 s, as without shaping: a shaper only gives back tokens the job cannot use",
     "later than 5 s: the shaper gives back tokens the job still needs",
     "before 5 s: holding fewer tokens, the job waits less"),
    "later than 5 s: the shaper gives back tokens the job still needs",
    explanation="Running vertices hold their tokens until they finish. When a completes, the not-started estimate "
                "sees c's ten waiting vertices and none of b's (all started): 10 tokens, which b's running vertices "
                "already hold. The shaper keeps those and gives back the rest, so c must wait for b to end. Then, as "
                "each of c's vertices starts, it stops counting too, and c trickles through on fewer and fewer "
                "tokens. The "
                "paper's reading (not *completed*) counts running vertices, can never fall below what the job can "
                "still run, and keeps the 5 s: its 'no performance penalty' holds only with that reading.",
    why_wrong={"at 5 s, as without shaping: a shaper only gives back tokens the job cannot use":
               "true of the paper's (not completed) reading; the not-started estimate can fall below what is "
               "running right now",
               "before 5 s: holding fewer tokens, the job waits less":
               "a job's own vertices never wait for fewer tokens to be held: releasing tokens cannot speed it up"})

CLUSTER_QUEUEING = Prediction(
    "01.6",
    "A stream of over-allocated jobs shares a token pool too small for all of them at once: a job is admitted only "
    "when its whole allocation is free (first come, first served). The same stream runs with shaping off and with "
    "the paper's shaper. What happens?",
    ("each job runs exactly as long as before, and jobs wait less to be admitted",
     "jobs wait less to be admitted, but each runs longer: it holds fewer tokens",
     "nothing changes: tokens a job gives back can only return to that job",
     "jobs wait longer to be admitted: tokens given back mid-run come too late to help"),
    "each job runs exactly as long as before, and jobs wait less to be admitted",
    explanation="The paper's shaper gives back only tokens the rest of the job can provably never use, so each job "
                "runs exactly as before (§5.2: no performance penalty; the run times agree to rounding). The "
                "tokens it gives back return to the pool, and the next job in the queue is admitted as soon as its "
                "whole allocation is free: sooner. By induction no job is ever admitted later (every earlier job "
                "holds at most its static tokens and ends no later), so the saved queueing is pure gain (§3.1).",
    why_wrong={"jobs wait less to be admitted, but each runs longer: it holds fewer tokens":
               "it gives back only tokens no remaining stage can use; the job's vertices never wait for one",
               "nothing changes: tokens a job gives back can only return to that job":
               "they return to the shared pool, where they admit the next job",
               "jobs wait longer to be admitted: tokens given back mid-run come too late to help":
               "a token given back early can only make the pool fuller sooner, never later"})

OPPORTUNITY = Prediction(
    "01.7",
    "The opportunity of an over-allocated job is what it holds but never uses: allocated minus actual "
    "token-seconds (Fig. 4c). How much of it does the paper's shaper save (Fig. 7)?",
    ("all of it: it gives back every token the job does not use",
     "a share of it, below 100 % in every cluster",
     "more than the opportunity: it also trims the job's peak"),
    "a share of it, below 100 % in every cluster",
    explanation="The shaper never holds fewer tokens than are in use, so its savings can never exceed allocated − "
                "actual. It gets less because it only gives back: after a valley it must keep what the next peak "
                "needs; its tree bound is conservative (shared spools, waits between trees); and it acts at vertex "
                "completions, so the first wave holds the full allocation.",
    why_wrong={"all of it: it gives back every token the job does not use":
               "it gives back only tokens no *future* stage can use; a valley before a peak keeps its tokens",
               "more than the opportunity: it also trims the job's peak":
               "it never holds fewer tokens than the job is using, so it cannot save more than the unused ones"})
