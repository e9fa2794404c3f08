"""The predict–observe–explain layer: a wrong or missing prediction loses its points, the explanation still shows."""

import doctest

import pytest

import cluster_sim.predict as predict
from cluster_sim.predict import Prediction, PredictionMissed, grade, registry

CHOICE = Prediction("t.1", "Does B wait?", ("yes", "no"), "yes", explanation="One slot, one task.",
                    why_wrong={"no": "slots are not shared"})
NUMBER = Prediction("t.2", "Mean wait?", None, 3.5, explanation="Little's law.", tolerance=0.5, unit="s")


def test_doctests():
    assert doctest.testmod(predict).failed == 0


def test_wrong_choice_fails_after_the_explanation(capsys):
    with pytest.raises(PredictionMissed, match="t.1"):
        grade(CHOICE, "no")
    out = capsys.readouterr().out
    assert "Not this time" in out and "slots are not shared" in out
    assert out.index("Not this time") < out.index("One slot, one task.")


def test_number_within_tolerance_passes_and_outside_fails(capsys):
    assert grade(NUMBER, 3.9) == "t.2: correct"
    with pytest.raises(PredictionMissed):
        grade(NUMBER, 4.1)
    assert "Little's law." in capsys.readouterr().out


def test_missing_prediction_says_what_to_do():
    with pytest.raises(PredictionMissed, match="no prediction recorded.*a number in s"):
        grade(NUMBER, None)


@pytest.mark.parametrize("bad, match", [("3", "allowed: a finite number"), (float("nan"), "finite"), (True, "finite")])
def test_bad_number_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        grade(NUMBER, bad)


@pytest.mark.parametrize("kwargs, match", [
    (dict(choices=("a",), answer="a"), "two or more"),
    (dict(choices=("a", "b"), answer="c"), "not one of"),
    (dict(choices=None, answer=1.0, tolerance=0), "tolerance"),
    (dict(choices=("a", "b"), answer="a", why_wrong={"a": "x"}), "why_wrong"),
])
def test_malformed_predictions_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Prediction("t.3", "q", explanation="e", **kwargs)


def test_every_lab_prediction_has_a_wrong_answer_that_fails(capsys):
    """Each registered prediction: its answer passes; every wrong choice (or a number outside the tolerance) loses the
    points, after the verdict, the misconception it shows, and the explanation."""
    for key, p in registry().items():
        assert grade(p, p.answer) == f"{key}: correct"
        capsys.readouterr()
        wrongs = [c for c in p.choices if c != p.answer] if p.choices else [p.answer + 2 * p.tolerance + 1]
        for wrong in wrongs:
            with pytest.raises(PredictionMissed):
                grade(p, wrong)
            out = capsys.readouterr().out
            assert p.explanation in out and out.index("Not this time") < out.index(p.explanation), key
            if p.choices and wrong in p.why_wrong:
                assert p.why_wrong[wrong] in out, key
