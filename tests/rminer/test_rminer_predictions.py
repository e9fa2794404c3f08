"""Labs 08 and 09's predictions (issue 30) and what came with them: each answer is recomputed from the lab's own
functions, each is asked before and explained beside its result in the walkthrough, and each is a graded cell of
the exercise that a wrong or missing prediction fails, after the explanation. Also: exercise 09's baseline check
names each misconception; Lab 09's mining timeline; "What this lab leaves out" in 08 and 09 (issue 29)."""

from pathlib import Path

import nbformat
import numpy as np
import pytest

from cluster_sim.predict import PredictionMissed, grade
from cluster_sim.rminer import RMinerConfig, run
from cluster_sim.rminer import predictions as P
from cluster_sim.rminer.baseline import HAND_CASES, check_gain_split, gain_split
from cluster_sim.rminer.config import scaled_think_time
from cluster_sim.rminer.experiments import REACH, run_remembered
from cluster_sim.rminer.plots import plot_mining_timeline

ROOT = Path(__file__).resolve().parents[2]
WALKTHROUGH = {"08_rminer_shadow_resources.ipynb": ("SHADOW_SHARE", "SHADOW_GROWS_WITH_DELAY"),
               "09_rminer_resource_miner.ipynb": ("WHAT_PLUS1_CONTROLS_FOR", "BEYOND_ONE_MORE_SCHEDULER",
                                                  "SMART_USES_MORE_SHADOW", "GAIN_FROM_NORMAL_SCHEDULERS")}
EXERCISE = {"08_rminer_shadow_resources.ipynb": ("SHADOW_SHARE", "SHADOW_GROWS_WITH_DELAY"),
            "09_rminer_resource_miner.ipynb": ("BEYOND_ONE_MORE_SCHEDULER", "SMART_USES_MORE_SHADOW",
                                               "WHAT_PLUS1_CONTROLS_FOR")}


# ---- the answers, recomputed ------------------------------------------------------------------------------------
@pytest.mark.parametrize("preset, seed", [("ci", 0), ("ci", 1), ("default", 2)])
def test_shadow_share_is_the_answer(preset, seed):
    config = RMinerConfig.from_preset(preset, seed=seed)
    assert (config.update_delay, config.mean_task_duration) == (0.5, 5.0)  # what the question states
    assert P.SHADOW_SHARE.is_correct(100 * run(config).shadow_ratio)


@pytest.mark.parametrize("seed", [0, 1])
def test_shadow_grows_in_proportion_to_the_update_delay(seed):
    config = RMinerConfig.from_preset("ci", seed=seed)
    ratio = {d: run(config.replace(update_delay=d, mean_task_duration=l)).shadow_ratio
             for d in (0.3, 1.0) for l in (5.0,)}
    growth = ratio[1.0] / ratio[0.3]
    assert 2.5 < growth < 4.5 and P.SHADOW_GROWS_WITH_DELAY.answer == "about 3x as large", growth


def _lab09_runs(seed):
    base = RMinerConfig.from_preset("ci", seed=seed)
    exp = base.replace(machines=50, horizon=20.0, think_time=scaled_think_time(50), schedulers=8, workload_level=2.0)
    runs = {m: run_remembered(exp.replace(mode=m)) for m in ("none", "plus1", "safe", "smart")}
    runs["smart-A"] = run_remembered(exp.replace(mode="smart", filter_threshold=4.0, **REACH))
    return runs


@pytest.mark.parametrize("seed", [0, 1])
def test_lab09_answers(seed):
    r = _lab09_runs(seed)
    gain = {m: r[m].cpu_utilization - r["none"].cpu_utilization for m in ("plus1", "smart")}
    assert gain["plus1"] > gain["smart"] > 0 and P.BEYOND_ONE_MORE_SCHEDULER.answer == "NoRM + 1 scheduler", gain
    assert r["smart"].shadow_used_share > r["safe"].shadow_used_share > 0 == r["plus1"].shadow_used_share
    assert P.SMART_USES_MORE_SHADOW.answer == "SmartRM"
    a = r["smart-A"]
    parts = {"RM tasks on shadow": a.util_shadow, "RM tasks on the normal path": a.util_rm_normal_path,
             "the normal schedulers": a.util_normal - r["none"].util_normal}
    assert max(parts, key=parts.get) == P.GAIN_FROM_NORMAL_SCHEDULERS.answer, parts


# ---- the notebooks ------------------------------------------------------------------------------------------------
def _cells(folder, name):
    return nbformat.read(ROOT / folder / name, as_version=4).cells


@pytest.mark.parametrize("name", EXERCISE)
def test_exercise_prediction_cells_fail_unsolved_and_wrong_and_pass_solved(name, capsys):
    for folder in ("exercises", "solutions"):
        cells = _cells(folder, name)
        graded = [c for c in cells if c.metadata.get("nbgrader", {}).get("grade") and "grade(" in c.source]
        assert sorted(c.source.split("grade(")[1].split(",")[0] for c in graded) == sorted(EXERCISE[name])
        for cell in graded:
            assert cell.metadata["nbgrader"]["locked"] and cell.metadata["nbgrader"]["points"] == 1
            const = cell.source.split("grade(")[1].split(",")[0]
            var = cell.source.split(",")[1].strip(" )\n")
            answer_cell = next(c for c in cells if c.source.startswith(f"{var} = None"))
            p = getattr(P, const)
            ns = {"grade": grade, const: p}
            if folder == "solutions":
                exec(answer_cell.source, ns)
                exec(cell.source, ns)
                assert "Correct." in capsys.readouterr().out
                continue
            with pytest.raises(NotImplementedError):  # nbgrader's stub, after `var = None`
                exec(answer_cell.source, ns)
            with pytest.raises(PredictionMissed, match="no prediction recorded"):
                exec(cell.source, ns)
            ns[var] = next(c for c in p.choices if c != p.answer) if p.choices else p.answer + 2 * p.tolerance
            with pytest.raises(PredictionMissed):
                exec(cell.source, ns)
            out = capsys.readouterr().out
            assert out.index("Not this time") < out.index(p.explanation[:40])


# ---- exercise 09's baseline check ----------------------------------------------------------------------------------
def _solution_gain_split():
    cell = next(c for c in _cells("solutions", "09_rminer_resource_miner.ipynb")
                if c.metadata.get("nbgrader", {}).get("grade_id") == "gain_split")
    ns = {"np": np}
    exec(cell.source, ns)
    return ns["gain_split"]


def test_the_solution_passes_and_adds_up():
    assert "all 3 cases agree" in check_gain_split(_solution_gain_split())
    for case in HAND_CASES:
        s = gain_split(*case)
        assert np.isclose(s["total"], s["capacity"] + s["mining"])


def _against_norm(n, p, r):
    s = gain_split(n, p, r)
    return s | {"mining": s["total"]}


def _sign(n, p, r):
    s = gain_split(n, p, r)
    return s | {"mining": -s["mining"]}


def _ratio(n, p, r):
    n, p, r = (np.asarray(x) for x in (n, p, r))
    return {"total": np.mean(r / n - 1), "capacity": np.mean(p / n - 1), "mining": np.mean(r / p - 1)}


@pytest.mark.parametrize("wrong, cause", [(_against_norm, "credits the extra scheduler's capacity to the mining"),
                                          (_sign, "a sign is reversed"), (_ratio, "a ratio")])
def test_each_misconception_fails_with_its_cause(wrong, cause, reference_as_student):
    with pytest.raises(AssertionError, match=cause):
        check_gain_split(wrong)


def test_unsolved_gain_split_says_not_implemented():
    def stub(*a):
        raise NotImplementedError()
    with pytest.raises(AssertionError, match="not implemented yet"):
        check_gain_split(stub)


@pytest.mark.parametrize("bad", [([], [], []), ([0.5, 0.6], [0.5], [0.5, 0.6]), ([1.5], [0.5], [0.5]),
                                 ([float("nan")], [0.5], [0.5])])
def test_gain_split_refuses_bad_input(bad):
    with pytest.raises(ValueError, match="util_"):
        gain_split(*bad)


# ---- Lab 09's timeline, and the text the issues asked for -----------------------------------------------------------
def test_mining_timeline_draws_one_axes_and_refuses_an_impossible_order():
    assert len(plot_mining_timeline().axes) == 1
    with pytest.raises(ValueError, match="rm_start"):
        plot_mining_timeline(release=0.3, rm_start=0.2)
    with pytest.raises(ValueError, match="commit"):
        plot_mining_timeline(commit=0.4)
    with pytest.raises(ValueError, match="amount"):
        plot_mining_timeline(amount=4)


def _markdown(name):
    return [c.source for c in _cells("notebooks", name) if c.cell_type == "markdown"]


@pytest.mark.parametrize("name", ["08_rminer_shadow_resources.ipynb", "09_rminer_resource_miner.ipynb"])
def test_what_this_lab_leaves_out_and_a_glossary(name):
    md = "\n".join(_markdown(name))
    assert "## What this lab leaves out" in md and "### Glossary" in md


def test_lab09_defines_w_d_where_first_used_and_says_its_readings():
    md = _markdown("09_rminer_resource_miner.ipynb")
    first = next(s for s in md if "W_d" in s)
    assert "resource waiting delay" in first
    text = "\n".join(md)
    assert "most shadow first¹" in text and "¹ Our reading" in text
    assert "*commits them to the CSV at each update*" in text and "is our reading" in text
    code = [c.source for c in _cells("notebooks", "09_rminer_resource_miner.ipynb") if c.cell_type == "code"]
    assert any("plot_mining_timeline(" in s for s in code)
    # section 7 leads with the two panels that carry the message, the full figure after the explanation
    assert next(i for i, s in enumerate(code) if "plot_modes_message(" in s) < next(
        i for i, s in enumerate(code) if s.strip() == "plot_modes(modes_seeds)")


def test_lab08_answers_why_not_shorten_the_update_delay():
    text = "\n".join(_markdown("08_rminer_shadow_resources.ipynb"))
    assert "Why not simply shorten $d_u$?" in text and "synchronisation" in text


@pytest.mark.parametrize("name", ["06_stageopt_placement.ipynb", "07_stageopt_resource_plans.ipynb",
                                  "08_rminer_shadow_resources.ipynb", "09_rminer_resource_miner.ipynb"])
def test_discussion_model_answers_are_in_the_solution_only(name):
    answers = [c for c in _cells("solutions", name) if c.cell_type == "markdown"
               and c.metadata.get("nbgrader", {}).get("solution") and "**Model answer.**" in c.source]
    assert len(answers) == 1 and answers[0].metadata["nbgrader"]["points"] == 0
    exercise = (ROOT / "exercises" / name).read_text()
    assert "Model answer" not in exercise
    for line in answers[0].source.splitlines()[2:-1]:
        assert line.strip() not in exercise, f"{name}: the model answer's line {line[:60]!r} ships in the exercise"
