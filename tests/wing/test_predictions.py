"""Labs 04 and 05's predictions are what the runs show (issue 30): each answer recomputed with the labs' own functions."""

import pytest

from cluster_sim.predict import PredictionMissed, grade
from cluster_sim.wing import doubling_example, doubling_trace, expected_iterations, diameter, figure5_example, \
    multi_hop, value_decay
from cluster_sim.wing.predictions import DECAY, INVERSION, ITERATIONS, POLLING
from cluster_sim.wing.scheduling import inversion_example


def test_decay_a_late_a_keeps_only_its_own_value():
    ex = figure5_example()
    assert ex.submit.to_dict() == {"A": 0.0, "B": 3.0, "C": 5.0, "D": 6.0, "E": 8.0}  # the times the question gives
    assert float(value_decay(ex.deps, ex.k, ex.submit, "A", [5.5])[0]) == float(DECAY.answer)
    # the wrong choices are the wrong readings' numbers
    paths = multi_hop(ex.deps).table.query("depOn == 'A'").set_index("job")["agg"]
    own_time = ex.k["A"] + sum(paths[j] * ex.k[j] for j in paths.index if ex.submit[j] > 5.5)
    assert own_time == 25.0 and float(value_decay(ex.deps, ex.k, ex.submit, "A", [4.0])[0]) == 29.0


def test_iterations_of_the_doubling_example():
    deps, k = doubling_example()
    assert diameter(deps) == 8
    assert int(doubling_trace(deps, k)["iteration"].iloc[-1]) == expected_iterations(8) == int(ITERATIONS.answer)


def test_inversion_only_wing_agg_completes_c():
    completes = {p: inversion_example(p).loc["C", "state"] == "completed" for p in ("prio", "wing_direct", "wing_agg")}
    assert completes == {"prio": False, "wing_direct": False, "wing_agg": True}
    assert INVERSION.answer == "only Wing-Agg"
    eff = inversion_example("wing_agg")["efficiency"]
    assert round(eff["A"], 5) == 0.00119 and "0.00119" in INVERSION.explanation


@pytest.mark.parametrize("p", [DECAY, ITERATIONS, INVERSION, POLLING])
def test_a_wrong_choice_loses_the_point_after_its_misconception(p, capsys):
    for wrong in (c for c in p.choices if c != p.answer):
        with pytest.raises(PredictionMissed):
            grade(p, wrong)
        out = capsys.readouterr().out
        assert p.why_wrong[wrong] in out and out.index(p.why_wrong[wrong]) < out.index(p.explanation)


@pytest.mark.parametrize("preset", ["ci", "default"])
def test_polling_dependents_wait_and_never_fail(preset):
    from cluster_sim.wing.predictions import POLLING
    from cluster_sim.wing.scheduling import WingConfig, run, workload_for

    assert POLLING.answer == "it waits for its input and runs once the input exists"
    waited = 0
    for seed in range(3):
        cfg = WingConfig.from_preset(preset).replace(seed=seed, capacity=0.2, queues="org", policy="wing_mil")
        w, r = workload_for(cfg), run(cfg)
        deps = w.deps[w.deps["job"].isin(r.jobs["job"])]
        polling_only = deps.groupby("job")["mode"].agg(lambda m: (m == "polling").all())
        polling_only = polling_only[polling_only].index
        jobs = r.jobs.set_index("job")
        failed = jobs.loc[polling_only].query("state == 'failed'").index
        # a polling job fails only when its writer failed (the output never comes), never for being late
        assert r.failures.reindex(failed).str.contains("which writes it, failed").all(), f"seed {seed}"
        up_finish = jobs["finish"].reindex(deps["depOn"]).to_numpy()
        late = deps.assign(up=up_finish, submit=jobs["submit"].reindex(deps["job"]).to_numpy())
        late = late[late["job"].isin(polling_only) & (late["up"] > late["submit"])]
        waited += int((jobs.loc[late["job"].unique(), "start"] >= late.groupby("job")["up"].max()).sum())
    assert waited > 0, "no polling job had to wait for its input: the question has no case to show"
