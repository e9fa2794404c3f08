"""Predict, observe, explain: a prediction a student commits to before the result a lab exists to show.

A :class:`Prediction` is a question asked *before* a run, with the answer, the explanation that belongs under the
run's output, and for a multiple-choice question the misconception behind each wrong choice (all three sealed until
the student's graded attempt: see :class:`Prediction`). Each lab keeps its
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
>>> was_open = reveal_answers(False)      # as in a student's notebook (tests open every answer)
>>> p = Prediction("xx.1", "Two jobs share one slot; does the second wait?", ("yes", "no"), "yes",
...                explanation="One slot holds one task at a time.",
...                why_wrong={"no": "a slot is not shared by two tasks at once"})
>>> p
Prediction('xx.1', 'Two jobs share one slot; does the second wait?', choices=('yes', 'no'); the answer is sealed)
>>> p.answer                  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cluster_sim.predict.AnswerSealed: prediction xx.1: its answer is shown after your graded attempt: ...
>>> grade(p, "yes")
Your prediction: yes. The answer: yes. Correct.
<BLANKLINE>
One slot holds one task at a time.
'xx.1: correct'
>>> p.answer                  # open after it
'yes'
>>> grade(p, "maybe")
Traceback (most recent call last):
...
ValueError: prediction for xx.1 is 'maybe'; allowed: one of 'yes', 'no'
>>> _ = reveal_answers(was_open)
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import json
import math
import numbers
import os
import weakref
import zlib
from typing import Mapping

from .checking import CheckFailed

#: The lab packages that hold predictions (``<package>.predictions``), in lab order.
LAB_PACKAGES = ("engine", "shaper", "morpheus.slo", "morpheus.packing", "wing", "stageopt", "rminer", "capstone")


class PredictionMissed(CheckFailed):
    """A graded prediction that was missing or wrong (nbgrader gives its cell zero points)."""


class AnswerSealed(AttributeError):
    """A prediction's answer, explanation or misconceptions read before a graded attempt (see :class:`Prediction`)."""


#: set by :func:`reveal_answers` (tests and instructors): every prediction opens without a graded attempt
_revealed_all = False
#: the predictions graded (or explained) in this process: their answers are open
_attempted: weakref.WeakSet = weakref.WeakSet()


class Prediction:
    """One question asked before a run.

    ``choices`` is a tuple of answers for multiple choice, or ``None`` for a number. A number is correct when
    ``|prediction - answer| <= tolerance``; ``tolerance`` must be positive for a number (a student cannot hit a
    simulated value exactly) and zero for a choice. ``why_wrong`` maps a wrong choice to the misconception it shows.

    **The answer is sealed.** An exercise imports the prediction object into the student's notebook, so nothing on
    it shows the answer before the student commits: a choice is graded against a salted hash of the answer, and
    the answer, the explanation and the misconceptions (whose keys would name the wrong choices, and so the right
    one) are kept sealed; ``answer``, ``explanation`` and ``why_wrong`` open only after a graded attempt
    (:func:`grade`) or the walkthrough's :func:`explain`. The seal keeps the answer out of the object's repr,
    attributes and tab completion; it is not cryptography: the library's source holds the answers in plain text,
    as ``solutions/`` does (``docs/instructors.md`` says how to release without them).
    """

    _FIELDS = ("key", "question", "choices", "tolerance", "unit", "_salt", "_digest", "_sealed")
    __slots__ = _FIELDS + ("__weakref__",)

    def __init__(self, key: str, question: str, choices: tuple[str, ...] | None, answer: str | float,
                 explanation: str, tolerance: float = 0.0, unit: str = "", why_wrong: Mapping[str, str] | None = None):
        why_wrong = dict(why_wrong or {})
        if not key or not isinstance(key, str):
            raise ValueError(f"Prediction.key is {key!r}; allowed: a non-empty string such as '00.2'")
        if choices is not None:
            choices = tuple(choices)
            if len(choices) < 2 or len(set(choices)) != len(choices):
                raise ValueError(f"Prediction {key}: choices are {choices!r}; allowed: two or more distinct")
            if answer not in choices:
                raise ValueError(f"Prediction {key}: answer {answer!r} is not one of {choices!r}")
            if tolerance != 0:
                raise ValueError(f"Prediction {key}: tolerance is {tolerance!r}; allowed: 0 for a choice")
            unknown = set(why_wrong) - set(choices) | ({answer} & set(why_wrong))
            if unknown:
                raise ValueError(f"Prediction {key}: why_wrong names {sorted(unknown)!r}; allowed: wrong choices")
        else:
            if not _is_number(answer):
                raise ValueError(f"Prediction {key}: answer is {answer!r}; allowed: a finite number")
            if not (_is_number(tolerance) and tolerance > 0):
                raise ValueError(f"Prediction {key}: tolerance is {tolerance!r}; allowed: a number > 0")
            if why_wrong:
                raise ValueError(f"Prediction {key}: why_wrong is for choices; a number has none")
            answer = float(answer)
        salt = os.urandom(16)
        for name, value in (("key", key), ("question", question), ("choices", choices), ("tolerance", tolerance),
                            ("unit", unit), ("_salt", salt),
                            ("_digest", _digest(salt, key, answer) if choices is not None else None),
                            ("_sealed", _seal(salt, {"answer": answer, "explanation": explanation,
                                                     "why_wrong": why_wrong}))):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Prediction {self.key} is read-only")

    def __repr__(self) -> str:
        return f"Prediction({self.key!r}, {self.question!r}, choices={self.choices!r}; the answer is sealed)"

    # read-only, so a copy is the object itself; a pickle carries the sealed form
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return _restore, (tuple(getattr(self, name) for name in self._FIELDS),)

    # -- what opens after a graded attempt ----------------------------------------------------------------------------
    def _open(self, part: str):
        if not (_revealed_all or self in _attempted):
            raise AnswerSealed(f"prediction {self.key}: its {part} is shown after your graded attempt: record your "
                               "prediction in the cell above, then run the graded cell")
        return _unseal(self._salt, self._sealed)[part]

    @property
    def answer(self) -> str | float:
        return self._open("answer")

    @property
    def explanation(self) -> str:
        return self._open("explanation")

    @property
    def why_wrong(self) -> dict[str, str]:
        return self._open("why_wrong")

    def shown_answer(self) -> str:
        answer = _unseal(self._salt, self._sealed)["answer"]
        if self.choices is not None:
            return str(answer)
        return f"{_plain(answer)}{' ' + self.unit if self.unit else ''} (± {_plain(self.tolerance)})"

    def _is_correct(self, prediction) -> bool:
        self._validate(prediction)
        if self.choices is not None:
            return hmac.compare_digest(_digest(self._salt, self.key, prediction), self._digest)
        answer = _unseal(self._salt, self._sealed)["answer"]
        return abs(float(prediction) - answer) <= self.tolerance + 1e-12

    def is_correct(self, prediction) -> bool:
        """Whether ``prediction`` is the answer: a graded attempt (the answer opens after it)."""
        correct = self._is_correct(prediction)
        _attempted.add(self)
        return correct

    def _validate(self, prediction) -> None:
        if self.choices is not None:
            if prediction not in self.choices:
                allowed = ", ".join(repr(c) for c in self.choices)
                raise ValueError(f"prediction for {self.key} is {prediction!r}; allowed: one of {allowed}")
        elif not _is_number(prediction):
            raise ValueError(f"prediction for {self.key} is {prediction!r}; allowed: a finite number"
                             + (f" in {self.unit}" if self.unit else ""))


def _restore(values: tuple) -> Prediction:
    p = object.__new__(Prediction)
    for slot, value in zip(Prediction._FIELDS, values):
        object.__setattr__(p, slot, value)
    return p


def _digest(salt: bytes, key: str, choice: str) -> bytes:
    return hashlib.sha256(salt + key.encode() + b"\0" + str(choice).encode()).digest()


def _keystream(salt: bytes, n: int) -> bytes:
    blocks = (hashlib.sha256(salt + i.to_bytes(8, "big")).digest() for i in range(n // 32 + 1))
    return b"".join(blocks)[:n]


def _seal(salt: bytes, parts: dict) -> bytes:
    """The parts as bytes nobody reads by accident (compressed, masked with a stream drawn from the salt)."""
    raw = zlib.compress(json.dumps(parts).encode())
    return bytes(a ^ b for a, b in zip(raw, _keystream(salt, len(raw))))


def _unseal(salt: bytes, sealed: bytes) -> dict:
    return json.loads(zlib.decompress(bytes(a ^ b for a, b in zip(sealed, _keystream(salt, len(sealed))))))


def reveal_answers(on: bool = True) -> bool:
    """Open every prediction's answer without a graded attempt (for tests and instructors, never in an exercise);
    ``on=False`` seals them again. Returns whether they were open."""
    global _revealed_all
    was, _revealed_all = _revealed_all, bool(on)
    return was


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x))


def _plain(x) -> str:
    """A number as a student writes it (no ``np.float64(...)``, no trailing zeros)."""
    return f"{float(x):.6g}"


def _verdict_lines(p: Prediction, prediction) -> list[str]:
    shown = prediction if p.choices is not None else _plain(prediction)
    if p._is_correct(prediction):
        return [f"Your prediction: {shown}. The answer: {p.shown_answer()}. Correct."]
    lines = [f"Your prediction: {shown}. The answer: {p.shown_answer()}. Not this time."]
    why_wrong = _unseal(p._salt, p._sealed)["why_wrong"]
    if p.choices is not None and prediction in why_wrong:
        lines.append(f"Why {prediction!r} is tempting, and wrong: {why_wrong[prediction]}")
    return lines


def grade(p: Prediction, prediction) -> str:
    """The graded check: print the verdict and the explanation, then fail on a missing or wrong prediction.

    The explanation is printed in every case (a student who missed still learns why); the failure comes last so
    nbgrader scores the cell zero. A graded attempt opens the prediction's ``answer``, ``explanation`` and
    ``why_wrong``; a missing prediction opens nothing.
    """
    if prediction is None:
        raise PredictionMissed(f"{p.key}: no prediction recorded. Set the prediction cell above to "
                               + ("one of " + ", ".join(repr(c) for c in p.choices) if p.choices is not None
                                  else "a number" + (f" in {p.unit}" if p.unit else ""))
                               + " before you run, then run this cell.")
    lines = _verdict_lines(p, prediction)
    _attempted.add(p)
    print("\n".join(lines) + "\n\n" + p.explanation)
    if not p._is_correct(prediction):
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
    _attempted.add(p)  # the walkthrough shows the answer under the run: it is open from here on
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
