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


# ---- the exercises' graded predictions, cell by cell (the nbgrader round trip runs the same cells) ------------------
import contextlib
import io
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
GRADED = re.compile(r"^print\(grade\((\w+), (prediction_\w+)\)\)$")
LABS = ("04_wing_dependencies_and_value.ipynb", "05_wing_value_scheduling.ipynb")


def _graded_predictions(name):
    sol = nbformat.read(ROOT / "solutions" / name, as_version=4)
    exe = nbformat.read(ROOT / "exercises" / name, as_version=4)
    meta = lambda c: c.metadata.get("nbgrader", {})
    answers = {meta(c)["grade_id"]: c.source for c in sol.cells if meta(c).get("solution")}
    stubs = {meta(c)["grade_id"]: c.source for c in exe.cells if meta(c).get("solution")}
    for c in sol.cells:
        m = GRADED.match(c.source.strip())
        if c.cell_type == "code" and meta(c).get("grade") and meta(c).get("locked") and m:
            yield m.group(1), m.group(2), answers[m.group(2)], stubs[m.group(2)], c.source


CASES = [pytest.param(name, *case, id=f"{name[:2]}:{case[1]}") for name in LABS for case in _graded_predictions(name)]


def test_each_lab_grades_two_predictions():
    assert sorted(c.id for c in CASES) == ["04:prediction_decay", "04:prediction_iterations",
                                           "05:prediction_inversion", "05:prediction_polling"]


def _run(source, ns):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(source, ns)
    except Exception as e:  # noqa: BLE001 - the outcome is what is checked
        return e, out.getvalue()
    return None, out.getvalue()


@pytest.mark.parametrize("name, question, var, answer_cell, stub_cell, check", CASES)
def test_the_graded_cell_fails_an_unsolved_or_wrong_prediction_after_the_explanation(name, question, var, answer_cell,
                                                                                   stub_cell, check):
    import cluster_sim.wing.predictions as preds

    p = getattr(preds, question)
    base = {question: p, "grade": grade}
    ns = dict(base)
    exec(re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", answer_cell, flags=re.M), ns)
    error, out = _run(check, ns)
    assert error is None and f"{p.key}: correct" in out
    for wrong in (c for c in p.choices if c != p.answer):
        error, out = _run(check, {**ns, var: wrong})
        assert isinstance(error, PredictionMissed) and p.explanation in out
    fresh = dict(base)
    with pytest.raises(NotImplementedError):  # the exercise's answer cell: None, then the stub
        exec(stub_cell, fresh)
    error, _ = _run(check, fresh)
    assert isinstance(error, PredictionMissed) and "no prediction recorded" in str(error)


def test_the_discussion_answer_is_in_the_solution_only():
    sol = (ROOT / "solutions" / LABS[1]).read_text()
    exe = (ROOT / "exercises" / LABS[1]).read_text()
    assert "Model answer" in sol and "Model answer" not in exe and "10 / 2 = 5" not in exe
