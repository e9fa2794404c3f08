"""Predict, observe, explain: a prediction a student commits to before the result a lab exists to show.

A :class:`Prediction` is a question asked *before* a run, with the answer, the explanation that belongs under the
run's output, and for a multiple-choice question the misconception behind each wrong choice. Each lab keeps its
predictions in its own package (``cluster_sim/<lab>/predictions.py``) so the walkthrough and the exercise ask the
same question and tests can reach every one of them (:func:`registry`).

Two ways a notebook uses one:

* **Walkthrough** (``notebooks/``, not graded): :func:`ask` before the run shows the question (with choice buttons
  when interactive); :func:`explain` directly under the run's output shows the explanation, and compares it with the
  student's choice if one was made.
* **Exercise** (``solutions/`` → ``exercises/``, graded by nbgrader): a solution cell holds the student's prediction
  (``prediction_xx = None``), the run's cell follows, and a locked graded cell calls :func:`grade`, which prints the
  verdict and the explanation and then, for a wrong or missing prediction, raises :class:`PredictionMissed` (an
  ``AssertionError``, so nbgrader gives the cell zero points).

Example
-------
>>> p = Prediction("xx.1", "Two jobs share one slot; does the second wait?", ("yes", "no"), "yes",
...                explanation="One slot holds one task at a time.",
...                why_wrong={"no": "a slot is not shared by two tasks at once"})
>>> grade(p, "yes")
Your prediction: yes. The answer: yes. Correct.
<BLANKLINE>
One slot holds one task at a time.
'xx.1: correct'
>>> grade(p, "maybe")
Traceback (most recent call last):
...
ValueError: prediction for xx.1 is 'maybe'; allowed: one of 'yes', 'no'
"""

from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass, field
from typing import Mapping

from .checking import CheckFailed

#: The lab packages that hold predictions (``<package>.predictions``), in lab order.
LAB_PACKAGES = ("engine", "shaper", "morpheus.slo", "morpheus.packing", "wing", "stageopt", "rminer", "capstone")


class PredictionMissed(CheckFailed):
    """A graded prediction that was missing or wrong (nbgrader gives its cell zero points)."""


@dataclass(frozen=True)
class Prediction:
    """One question asked before a run.

    ``choices`` is a tuple of answers for multiple choice, or ``None`` for a number. A number is correct when
    ``|prediction - answer| <= tolerance``; ``tolerance`` must be positive for a number (a student cannot hit a
    simulated value exactly) and zero for a choice. ``why_wrong`` maps a wrong choice to the misconception it shows.
    """

    key: str
    question: str
    choices: tuple[str, ...] | None
    answer: str | float
    explanation: str
    tolerance: float = 0.0
    unit: str = ""
    why_wrong: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.key or not isinstance(self.key, str):
            raise ValueError(f"Prediction.key is {self.key!r}; allowed: a non-empty string such as '00.2'")
        if self.choices is not None:
            if len(self.choices) < 2 or len(set(self.choices)) != len(self.choices):
                raise ValueError(f"Prediction {self.key}: choices are {self.choices!r}; allowed: two or more distinct")
            if self.answer not in self.choices:
                raise ValueError(f"Prediction {self.key}: answer {self.answer!r} is not one of {self.choices!r}")
            if self.tolerance != 0:
                raise ValueError(f"Prediction {self.key}: tolerance is {self.tolerance!r}; allowed: 0 for a choice")
            unknown = set(self.why_wrong) - set(self.choices) | ({self.answer} & set(self.why_wrong))
            if unknown:
                raise ValueError(f"Prediction {self.key}: why_wrong names {sorted(unknown)!r}; allowed: wrong choices")
        else:
            if not _is_number(self.answer):
                raise ValueError(f"Prediction {self.key}: answer is {self.answer!r}; allowed: a finite number")
            if not (_is_number(self.tolerance) and self.tolerance > 0):
                raise ValueError(f"Prediction {self.key}: tolerance is {self.tolerance!r}; allowed: a number > 0")
            if self.why_wrong:
                raise ValueError(f"Prediction {self.key}: why_wrong is for choices; a number has none")

    def shown_answer(self) -> str:
        if self.choices is not None:
            return str(self.answer)
        return f"{_plain(self.answer)}{' ' + self.unit if self.unit else ''} (± {_plain(self.tolerance)})"

    def is_correct(self, prediction) -> bool:
        self._validate(prediction)
        if self.choices is not None:
            return prediction == self.answer
        return abs(float(prediction) - float(self.answer)) <= self.tolerance + 1e-12

    def _validate(self, prediction) -> None:
        if self.choices is not None:
            if prediction not in self.choices:
                allowed = ", ".join(repr(c) for c in self.choices)
                raise ValueError(f"prediction for {self.key} is {prediction!r}; allowed: one of {allowed}")
        elif not _is_number(prediction):
            raise ValueError(f"prediction for {self.key} is {prediction!r}; allowed: a finite number"
                             + (f" in {self.unit}" if self.unit else ""))


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x))


def _plain(x) -> str:
    """A number as a student writes it (no ``np.float64(...)``, no trailing zeros)."""
    return f"{float(x):.6g}"


def _verdict_lines(p: Prediction, prediction) -> list[str]:
    shown = prediction if p.choices is not None else _plain(prediction)
    if p.is_correct(prediction):
        return [f"Your prediction: {shown}. The answer: {p.shown_answer()}. Correct."]
    lines = [f"Your prediction: {shown}. The answer: {p.shown_answer()}. Not this time."]
    if p.choices is not None and prediction in p.why_wrong:
        lines.append(f"Why {prediction!r} is tempting, and wrong: {p.why_wrong[prediction]}")
    return lines


def grade(p: Prediction, prediction) -> str:
    """The graded check: print the verdict and the explanation, then fail on a missing or wrong prediction.

    The explanation is printed in every case (a student who missed still learns why); the failure comes last so
    nbgrader scores the cell zero.
    """
    if prediction is None:
        raise PredictionMissed(f"{p.key}: no prediction recorded. Set the prediction cell above to "
                               + ("one of " + ", ".join(repr(c) for c in p.choices) if p.choices is not None
                                  else "a number" + (f" in {p.unit}" if p.unit else ""))
                               + " before you run, then run this cell.")
    lines = _verdict_lines(p, prediction)
    print("\n".join(lines) + "\n\n" + p.explanation)
    if not p.is_correct(prediction):
        raise PredictionMissed(f"{p.key}: your prediction {prediction!r} is not the answer; the explanation is above")
    return f"{p.key}: correct"


# -- walkthrough notebooks ------------------------------------------------------------------------------------------

_chosen: dict[str, object] = {}


def ask(p: Prediction, interactive: bool = True):
    """Show the question before the run; with ``interactive``, choice buttons (or a number box) record the answer."""
    from IPython.display import Markdown, display

    lines = [f"**Predict before you run ({p.key}).** {p.question}"]
    if p.choices is not None:
        lines += [f"- {c}" for c in p.choices]
    elif p.unit:
        lines.append(f"Answer in {p.unit}.")
    display(Markdown("\n".join(lines)))
    if not interactive:
        return None
    import ipywidgets as w

    if p.choices is not None:
        widget = w.RadioButtons(options=list(p.choices), value=None, layout=w.Layout(width="auto"))
    else:
        widget = w.FloatText(value=None, description=p.unit or "value")

    def remember(change):
        if change["new"] is not None:
            _chosen[p.key] = change["new"]

    widget.observe(remember, names="value")
    display(widget)
    return widget


def explain(p: Prediction, prediction=None):
    """The explanation, shown directly under the output it explains (with the student's choice, if any)."""
    from IPython.display import Markdown, display

    prediction = _chosen.get(p.key) if prediction is None else prediction
    lines = []
    if prediction is not None:
        lines = _verdict_lines(p, prediction)
    else:
        lines = [f"The answer: {p.shown_answer()}."]
    display(Markdown(f"**Explain ({p.key}).** " + " ".join(lines) + "\n\n" + p.explanation))


def registry() -> dict[str, Prediction]:
    """Every lab's predictions by key (each lab package's ``predictions`` module, where it has one)."""
    found: dict[str, Prediction] = {}
    for pkg in LAB_PACKAGES:
        try:
            module = importlib.import_module(f"cluster_sim.{pkg}.predictions")
        except ModuleNotFoundError as e:
            if e.name != f"cluster_sim.{pkg}.predictions":
                raise
            continue
        for value in vars(module).values():
            if isinstance(value, Prediction):
                if value.key in found and found[value.key] is not value:
                    raise ValueError(f"prediction key {value.key!r} is defined twice")
                found[value.key] = value
    return found
