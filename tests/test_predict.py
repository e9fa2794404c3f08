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


@pytest.fixture
def sealed(monkeypatch):
    """As in a student's notebook: no answer opened by tests/conftest.py's switch, no graded attempt yet."""
    monkeypatch.setattr(predict, "_revealed_all", False)
    monkeypatch.setattr(predict, "_attempted", predict.weakref.WeakSet())


def test_the_answer_is_not_readable_from_the_object_an_exercise_imports(sealed):
    """Issue 29: ``PRED.answer`` in a student's namespace gave the answer away. Before a graded attempt the answer, the
    explanation and the misconceptions (whose keys name the wrong choices) are sealed: not an attribute, not in the
    repr, not in any value the object holds."""
    for key, p in registry().items():
        for part in ("answer", "explanation", "why_wrong"):
            with pytest.raises(predict.AnswerSealed, match=f"{key}: its {part} is shown after your graded attempt"):
                getattr(p, part)
        predict._revealed_all = True
        secrets, answer = [p.explanation, *p.why_wrong.values()], p.answer
        predict._revealed_all = False
        values = [getattr(p, slot) for slot in Prediction._FIELDS if slot not in ("_sealed", "question")]
        assert p.choices or answer not in [v for v in values if isinstance(v, (int, float))], key
        held = [repr(p)] + [repr(v) for v in values]
        held.append(p._sealed.decode("latin-1"))
        assert not hasattr(p, "__dict__"), key
        for secret in secrets:
            assert not any(secret[:30] in h for h in held), (key, secret[:30])


def test_a_graded_attempt_opens_the_answer(sealed, capsys):
    with pytest.raises(predict.AnswerSealed):
        CHOICE.answer
    with pytest.raises(PredictionMissed):
        grade(CHOICE, "no")
    assert CHOICE.answer == "yes" and CHOICE.explanation == "One slot, one task." and "no" in CHOICE.why_wrong
    with pytest.raises(PredictionMissed):       # a missing prediction is no attempt
        grade(NUMBER, None)
    with pytest.raises(predict.AnswerSealed):
        NUMBER.answer


def test_a_prediction_is_read_only_and_survives_a_copy_and_a_pickle(capsys):
    import copy
    import pickle

    with pytest.raises(AttributeError, match="read-only"):
        CHOICE.choices = ("yes",)
    assert copy.deepcopy(CHOICE) is CHOICE
    again = pickle.loads(pickle.dumps(CHOICE))
    assert grade(again, "yes") == "t.1: correct" and again.choices == CHOICE.choices


def test_interactive_ask_shows_a_control_that_records_the_answer(monkeypatch):
    # the notebooks' ask cells with interactive=True: the panels test ran them until it ran only the cells its
    # panels need (issue 24), so their widgets are checked here
    import ipywidgets as w

    monkeypatch.setattr(predict, "_chosen", {})  # this test's answer reaches no other test
    buttons, box = predict.ask(CHOICE, True), predict.ask(NUMBER, True)
    assert isinstance(buttons, w.RadioButtons) and list(buttons.options) == ["yes", "no"] and buttons.value is None
    assert isinstance(box, w.FloatText) and box.description == "s"
    buttons.value = "no"
    assert predict._chosen["t.1"] == "no"
