"""Lab 00's predictions (cluster_sim/engine/predictions.py): each answer recomputed from the runs it is about, so
an answer cannot drift from what the tour shows; a wrong prediction loses the points after the explanation."""

import numpy as np
import pytest

from cluster_sim.engine import ClusterConfig, ClusterModel, Job, Stage, Task
from cluster_sim.engine import predictions as P
from cluster_sim.engine.claims import decision_throughput, pool_runs
from cluster_sim.predict import PredictionMissed, grade


def one_slot(arrivals, schedulers, update_delay, think_time):
    """§2's machine (2 CPUs), one job of one 2-CPU, 3 s task per arrival: (start of each job, conflicts)."""
    jobs = []
    for job_id, arrival in enumerate(arrivals):
        job = Job(id=job_id, arrival=arrival)
        job.stages.append(Stage(0, [Task(job_id, job, 0, (2, 1), 3.0)]))
        jobs.append(job)
    config = ClusterConfig(machines=1, cpu_per_machine=2, mem_per_machine=4, schedulers=schedulers,
                           think_time=think_time, placement="first_fit", horizon=20.0, update_delay=update_delay)
    model = ClusterModel(config, jobs=jobs, check_every_event=True)
    model.run_until(20.0)
    return [j.tasks[0].start for j in jobs], model.metrics.conflicts


def test_slot_stale_answer_is_the_run():
    (a, b), conflicts = one_slot([0.5, 1.0], 1, 10.0, 0.0)
    assert (a, b, conflicts) == (0.5, 10.0, 0)
    assert P.SLOT_STALE.answer.startswith("at 10,")
    (_, b_fresh), _ = one_slot([0.5, 1.0], 1, 0.0, 0.0)
    assert b_fresh == 3.5 and "at 3.5" in P.SLOT_STALE.explanation


def test_conflict_answer_is_the_run():
    (a, b), conflicts = one_slot([1.0, 1.0], 2, 10.0, 0.1)
    assert conflicts == 1 and a == pytest.approx(1.1) and b == pytest.approx(10.1)
    assert "10.1" in P.CONFLICT.answer
    (_, b_fresh), fresh_conflicts = one_slot([1.0, 1.0], 2, 0.0, 0.1)
    assert fresh_conflicts == 0 and b_fresh > 4.0  # fresh views: no conflict, B waits for A's release


@pytest.mark.parametrize("preset, seeds", [("ci", [0, 1, 2]), ("default", [0, 1])])
def test_stale_wait_answer_is_the_run(preset, seeds):
    runs = pool_runs(ClusterConfig.from_preset(preset).replace(seed=seeds[0]), pool_size=len(seeds),
                     client="inprocess", cache=False)
    wait = runs.pivot(index="seed", columns="update_delay", values="mean_job_wait")
    assert (wait[4.0] > wait[0.0]).all(), f"views 4 s old did not make jobs wait longer at every seed:\n{wait}"
    assert P.STALE_WAIT.answer == "jobs wait longer"


@pytest.mark.parametrize("preset, seeds", [("ci", [0, 3, 4]), ("default", [0])])
def test_decision_throughput_answer_is_the_run(preset, seeds):
    rows = decision_throughput(ClusterConfig.from_preset(preset), seeds=seeds, client="inprocess", cache=False)
    one = rows[rows["schedulers"] == 1].set_index("seed")
    four = rows[rows["schedulers"] == 4].set_index("seed")
    ratio = one["utilisation"] / four["utilisation"]
    assert ratio.between(0.3, 0.7).all(), f"one scheduler's utilisation over four's is not about half: {ratio}"
    assert (one["mean_queue_length"] > 5 * four["mean_queue_length"]).all()
    assert P.DECISION_THROUGHPUT.answer.startswith("about half")


