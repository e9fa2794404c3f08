"""One frozen config dataclass per experiment, validated from its field metadata.

Every experiment's parameters live in one ``@dataclass(frozen=True)`` subclass of :class:`Config`.
Each field is declared with :func:`param`, which records its allowed range (or choices) and a
one-line description. The same metadata drives validation (``__post_init__``), the widget panel
(:mod:`cluster_sim.ui.panel`), sweeps (``config.replace(...)``) and the papermill ``parameters``
cell (``Config.from_preset("ci", **overrides)``).

Example
-------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Toy(Config):
...     machines: int = param(10, lo=1, hi=100, doc="machines in the cluster")
>>> Toy(machines=5).machines
5
>>> Toy(machines=0)
Traceback (most recent call last):
...
ValueError: Toy.machines=0 is out of range: allowed 1 <= machines <= 100 (machines in the cluster)
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

_MISSING = dataclasses.MISSING


#: which ends of ``lo``..``hi`` a field allows (scikit-learn's ``Interval(closed=...)``)
CLOSED = ("both", "left", "right", "neither")


def param(
    default: Any,
    *,
    doc: str,
    lo: float | None = None,
    hi: float | None = None,
    closed: str = "both",
    optional: bool = False,
    choices: tuple | None = None,
    step: float | None = None,
    slider: tuple[float, float] | None = None,
    widget: bool = True,
    label: str | None = None,
    unit: str = "",
) -> Any:
    """Declare a config field with its allowed range (``lo``/``hi``) or ``choices``.

    ``closed`` says which ends of the range are allowed: ``"both"`` (``lo <= x <= hi``, the default),
    ``"left"`` (``lo <= x < hi``), ``"right"`` (``lo < x <= hi``: ``lo=0, closed="right"`` is "more than
    0") or ``"neither"``. ``optional=True`` also allows None ("not set"; the default may be None).
    ``step`` is the slider step in the widget panel, and ``slider`` the range a panel's slider
    offers: what redraws in about a second at the interactive preset (a panel refuses typed values
    outside it; the whole ``lo``..``hi`` stays available from the ``parameters`` cell).
    ``widget=False`` keeps the field off panels (for values that make no sense on a slider, such as
    a trace file or a tuple of weights). ``label`` is what a panel calls the field (a few words a
    student reads; the field's name stays in the tooltip and the parameters cell) and ``unit`` its
    unit (``"s"``, ``"% of jobs"``, ``"days"``; empty for a count or a plain ratio); without a
    label the panel uses the head of ``doc`` (:func:`field_label`).
    """
    if isinstance(default, (list, dict, set)):
        raise TypeError("param defaults must be immutable (use a tuple, not a list)")
    if closed not in CLOSED:
        raise ValueError(f"closed={closed!r} is not allowed: choose one of {', '.join(map(repr, CLOSED))}")
    if default is None and not optional:
        raise ValueError("a param whose default is None must say optional=True")
    if slider is not None:
        s_lo, s_hi = slider
        if not (s_lo < s_hi) or not _within(s_lo, lo, hi, closed) or not _within(s_hi, lo, hi, closed):
            raise ValueError(f"slider={slider!r} must be an increasing pair inside {bounds_text('x', lo, hi, closed)}")
    if label is not None and not (isinstance(label, str) and label.strip()):
        raise ValueError(f"label={label!r} must be a non-empty string (or None: the head of doc)")
    meta = {"doc": doc, "lo": lo, "hi": hi, "closed": closed, "optional": optional, "choices": choices, "step": step,
            "slider": slider, "widget": widget, "label": label, "unit": unit}
    return dataclasses.field(default=default, metadata=meta)


def field_of(source: type, name: str, default: Any = _MISSING, **changes: Any) -> Any:
    """Field ``name`` of the config class ``source``, inherited: the same range, doc and widget, with
    only what changes restated (a default, a narrower range, a doc that says what differs here).

    >>> from cluster_sim.engine import ClusterConfig
    >>> @dataclass(frozen=True)
    ... class Small(Config):
    ...     machines: int = field_of(ClusterConfig, "machines", 4, hi=8, slider=(1, 8))
    ...     seed: int = field_of(ClusterConfig, "seed")
    >>> Small(machines=9)
    Traceback (most recent call last):
    ...
    ValueError: Small.machines=9 is out of range: allowed 1 <= machines <= 8 (machines in the cluster)
    """
    fields = getattr(source, "__dataclass_fields__", {})
    if name not in fields:
        raise ValueError(f"{source.__name__} has no field {name!r}; its fields are: {', '.join(fields)}")
    f = fields[name]
    unknown = sorted(set(changes) - set(f.metadata))
    if unknown:
        raise ValueError(f"field_of({source.__name__}, {name!r}): unknown param option(s) {unknown}; "
                         f"the options are: {', '.join(f.metadata)}")
    meta = {**f.metadata, **changes}
    return param(f.default if default is _MISSING else default, **meta)


def seed_param(**changes: Any) -> Any:
    """The one ``seed`` field every config declares (its range and meaning), with ``changes``
    (e.g. ``widget=False``)."""
    return param(0, **{"lo": 0, "hi": 2**31 - 1, "label": "Random seed",
                       "doc": "random seed (same config and seed: identical results)",
                       **changes})


def _within(x: float, lo: float | None, hi: float | None, closed: str = "both") -> bool:
    above = lo is None or (x >= lo if closed in ("both", "left") else x > lo)
    below = hi is None or (x <= hi if closed in ("both", "right") else x < hi)
    return above and below


def bounds_text(name: str, lo: float | None, hi: float | None, closed: str = "both") -> str:
    """``lo <= name <= hi`` with the range's open ends as ``<`` (an absent end as -inf/inf)."""
    left = "<=" if closed in ("both", "left") else "<"
    right = "<=" if closed in ("both", "right") else "<"
    return (f"{'-inf' if lo is None else f'{lo:g}'} {left} {name} {right} "
            f"{'inf' if hi is None else f'{hi:g}'}")


def field_label(field: dataclasses.Field) -> str:
    """What a panel calls a field: its ``label`` (else the head of its ``doc``, up to the first bracket, colon
    or semicolon), with its ``unit`` in brackets.

    >>> from cluster_sim.morpheus import MorpheusConfig
    >>> [field_label(f) for f in dataclasses.fields(MorpheusConfig) if f.name in ("rho", "hold_seconds")]
    ['DRA fudge factor ρ', 'DRA grant length T (s)']
    """
    meta = field.metadata
    label = meta.get("label")
    if not label:
        head = re.split(r" \(|: |; ", meta.get("doc") or field.name, maxsplit=1)[0].strip()
        label = (head[:1].upper() if head[:1].isascii() else head[:1]) + head[1:]  # σ/μ stays σ/μ
    unit = meta.get("unit") or ""
    return f"{label} ({unit})" if unit else label


def shown(value: Any) -> str:
    """``repr(value)`` for a message, except an integer of 20 digits or more: its order of magnitude
    (``~1e400``). Python refuses to print an int past 4,300 digits, and 400 of them help nobody.

    >>> shown(2.5), shown(10**400), shown(-3 * 10**25)
    ('2.5', '~1e400', '-~1e25')
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**19:
        return f"{'-' if value < 0 else ''}~1e{int(math.log10(abs(value)))}"
    return repr(value)


def _normalise(value: Any, default: Any, name: str) -> Any:
    """Python scalars for numpy scalars (a sweep's ``np.int64(3)`` is a 3), floats for float fields."""
    if isinstance(value, np.ndarray):  # even a 0-d or 1-element array: a config holds scalars
        raise ValueError(f"{name}={value!r} is an array: give a single value")
    if isinstance(value, np.generic):
        value = value.item()  # np.float32('nan') becomes a float nan, caught like any other
    if isinstance(default, float) and isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = float(value)
        if value == 0.0:
            value = 0.0  # -0.0 is 0 for every range check, and numpy refuses a negative-zero sigma
    return value


def _type_ok(value: Any, default: Any) -> bool:
    """Accept values of the default's kind: ints for int fields, numbers for float fields."""
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, float)
    if isinstance(default, str):
        return isinstance(value, str)
    return True


def count(x: float) -> str:
    """A count for a message: 12,345 up to a trillion, then 1.2e+15."""
    return f"{x:,.0f}" if abs(x) < 1e12 else f"{x:.2e}"


@dataclass(frozen=True)
class Work:
    """The work a run of a config will create, estimated before it runs.

    ``amount`` is in ``unit`` (e.g. tasks); ``formula`` says how it was estimated, with the
    numbers; ``up`` are the fields that raise it, ``down`` those that lower it as they grow;
    ``seconds`` is a rough wall time on the reference 2-core machine (what a panel uses to refuse
    a change far slower than a second). Where a run's memory grows faster than ``amount``,
    ``memory`` estimates its peak in bytes, ``memory_formula`` says how (with the numbers) and
    ``memory_up`` / ``memory_down`` name the fields that raise and lower it (0: memory follows the
    amount and is not estimated apart).
    """

    amount: float
    unit: str
    formula: str
    up: tuple[str, ...]
    down: tuple[str, ...]
    seconds: float
    memory: float = 0.0
    memory_formula: str = ""
    memory_up: tuple[str, ...] = ()
    memory_down: tuple[str, ...] = ()

    @property
    def gib(self) -> float:
        """The memory estimate in GiB."""
        return self.memory / 2**30

    @property
    def drivers(self) -> tuple[str, ...]:
        return self.up + self.down

    def describe(self) -> str:
        return f"about {count(self.amount)} {self.unit} ({self.formula})"

    def advice(self, up: tuple[str, ...] | None = None, down: tuple[str, ...] | None = None) -> str:
        """What to change to make it smaller, naming the fields (default: those of the amount)."""
        up, down = (self.up, self.down) if up is None and down is None else (up or (), down or ())
        parts = []
        if up:
            parts.append(f"lower {', '.join(up)}")
        if down:
            parts.append(f"raise {', '.join(down)}")
        return " or ".join(parts)


class Config:
    """Base class for experiment configs: validation, presets, ``replace`` and a work estimate.

    Subclasses are ``@dataclass(frozen=True)`` and override the presets :meth:`ci` (seconds, for
    CI), :meth:`default` (the interactive default: a slider answers in about a second) and, where
    the paper has one, :meth:`paper` (the paper's own scale). A config whose runs can grow without
    bound overrides :meth:`work` and names its cap field in ``WORK_CAP``: a config estimated to
    create more than the cap is refused when it is built, before anything runs. A config whose
    memory grows faster than its work estimates it in ``Work.memory`` and names a cap field in GiB
    in ``MEMORY_CAP``, checked the same way.
    """

    PRESETS: ClassVar[tuple[str, ...]] = ("ci", "default", "paper")
    #: old field name -> the field it is called now: passing the old name is refused, naming the new one
    RENAMED: ClassVar[dict[str, str]] = {}
    #: the field that caps :meth:`work` (None: no cap)
    WORK_CAP: ClassVar[str | None] = None
    #: the field that caps :meth:`work`'s memory, in GiB (None: no cap)
    MEMORY_CAP: ClassVar[str | None] = None

    def __new__(cls, *args: Any, **fields: Any):
        # the dataclass __init__ would raise a TypeError for an unknown keyword; the config's own error
        # names the fields (and, for a renamed one, what it is called now)
        cls._refuse_unknown(fields)
        return super().__new__(cls)

    @classmethod
    def _refuse_unknown(cls, names) -> None:
        """A ``ValueError`` for the names that are not fields of ``cls``, saying what a renamed one is
        called now, then listing the fields."""
        own = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(names) - set(own))
        if not unknown:
            return
        renamed = [f"{cls.__name__}.{old} is now {cls.RENAMED[old]} "
                   f"({cls.__dataclass_fields__[cls.RENAMED[old]].metadata.get('doc', '')})"
                   for old in unknown if old in cls.RENAMED]
        raise ValueError(f"unknown {cls.__name__} field(s) {unknown}; " + "; ".join(renamed)
                         + ("; " if renamed else "") + f"the fields are: {', '.join(own)}")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = self._check_field(f, getattr(self, f.name))
            object.__setattr__(self, f.name, value)
        self.validate()
        self._check_work()

    def _check_field(self, f: dataclasses.Field, given: Any) -> Any:
        """The field's value, normalised (numpy scalars to Python ones, ints to floats for float
        fields); a ``ValueError`` naming the field, the value as given and what is allowed."""
        name = f"{type(self).__name__}.{f.name}"
        meta = f.metadata
        doc = f" ({meta['doc']})" if meta.get("doc") else ""
        default = f.default if f.default is not _MISSING else None
        lo, hi, closed = meta.get("lo"), meta.get("hi"), meta.get("closed", "both")
        if given is None and meta.get("optional"):
            return None
        out_of_range = ValueError(
            f"{name}={shown(given)} is out of range: allowed {bounds_text(f.name, lo, hi, closed)}{doc}")
        value = given
        if default is None and (lo is not None or hi is not None) and not (
                isinstance(given, numbers.Real) and not isinstance(given, bool)):
            raise ValueError(f"{name}={shown(given)} has the wrong type: expected a number or None{doc}")
        if default is not None:
            try:
                value = _normalise(given, default, name)
            except OverflowError:  # an int too large for a float field (10**400): no float is that large
                raise out_of_range from None
            if not _type_ok(value, default):
                raise ValueError(
                    f"{name}={shown(given)} has the wrong type: expected {type(default).__name__}{doc}"
                )
        if meta.get("choices") is not None and value not in meta["choices"]:
            allowed = ", ".join(repr(c) for c in meta["choices"])
            raise ValueError(f"{name}={shown(given)} is not allowed: choose one of {allowed}{doc}")
        if isinstance(value, float) and math.isnan(value):
            raise ValueError(f"{name}=nan is not a number{doc}")
        if not _within(value, lo, hi, closed):
            raise out_of_range
        return value

    def validate(self) -> None:
        """Cross-field checks; override and raise ``ValueError`` naming the fields involved."""

    # ---- the work a run creates --------------------------------------------------------------
    def work(self) -> Work | None:
        """The estimated work of a run of this config (None: small by construction)."""
        return None

    def _check_work(self) -> None:
        if self.WORK_CAP is None and self.MEMORY_CAP is None:
            return
        work = self.work()
        if work is None:
            return
        if self.WORK_CAP is not None:
            cap = getattr(self, self.WORK_CAP)
            self._refuse_over(self.WORK_CAP, work.amount > cap, needs=f"create {work.describe()}",
                              limit=f"{count(cap)} (about {count(work.seconds)} s of run time, and memory to match)",
                              advice=work.advice())
        if self.MEMORY_CAP is not None and work.memory:
            cap = getattr(self, self.MEMORY_CAP)
            self._refuse_over(self.MEMORY_CAP, work.gib > cap,
                              needs=f"need about {work.gib:,.1f} GiB of memory ({work.memory_formula})",
                              limit=f"{cap:g} GiB", advice=work.advice(work.memory_up, work.memory_down),
                              aside=" (on a machine with the memory)")

    def _refuse_over(self, field: str, over: bool, *, needs: str, limit: str, advice: str, aside: str = "") -> None:
        """The refusal of a config whose estimate is over its cap ``field`` (work or memory): what the run
        would need, the cap, what to change."""
        if over:
            raise ValueError(f"{type(self).__name__} would {needs}, more than {field}={limit}: {advice}; "
                             f"or raise {field} on purpose{aside}")

    # ---- presets -------------------------------------------------------------------------
    @classmethod
    def ci(cls):
        """The CI scale: runs in seconds."""
        return cls()

    @classmethod
    def default(cls):
        """The interactive default: a slider change answers in about a second."""
        return cls()

    @classmethod
    def paper(cls):
        """The paper's own scale (minutes on a 2-core machine)."""
        raise ValueError(f"{cls.__name__} has no paper-scale preset")

    def preset_name(self) -> str | None:
        """The preset this config is, its seed aside (a seed override shifts a claim's seed pool, it
        does not change the preset the pool's size was chosen for); None when it is none of them.

        >>> from cluster_sim.engine import ClusterConfig
        >>> ClusterConfig.ci().replace(seed=3).preset_name(), ClusterConfig.ci().replace(machines=11).preset_name()
        ('ci', None)
        """
        seed = {"seed": self.seed} if "seed" in {f.name for f in dataclasses.fields(self)} else {}
        for name in self.PRESETS:
            try:
                preset = getattr(type(self), name)()
            except ValueError:  # a config without this preset (no paper scale)
                continue
            if dataclasses.replace(preset, **seed) == self:
                return name
        return None

    @classmethod
    def from_preset(cls, preset: str = "default", **overrides: Any):
        """A preset with some fields overridden: what a notebook's ``parameters`` cell feeds."""
        if preset not in cls.PRESETS:
            raise ValueError(
                f"preset={preset!r} is not allowed: choose one of {', '.join(cls.PRESETS)}"
            )
        base = getattr(cls, preset)()
        cls._refuse_unknown(overrides)
        return dataclasses.replace(base, **overrides)

    @classmethod
    def from_config(cls, other: "Config", /, **overrides: Any):
        """This config built from ``other``'s fields of the same names (the fields this class shares
        with it), then ``overrides``: for configs that feed one another (a lab's config and the
        engine's or another lab's it is run with). The other fields keep this class's defaults."""
        own = {f.name for f in dataclasses.fields(cls)}
        cls._refuse_unknown(overrides)
        shared = {f.name: getattr(other, f.name) for f in dataclasses.fields(other) if f.name in own}
        return cls(**{**shared, **overrides})

    def replace(self, **changes: Any):
        """A copy with some fields changed (validated again): the building block of sweeps."""
        self._refuse_unknown(changes)
        return dataclasses.replace(self, **changes)

    def describe(self) -> dict[str, str]:
        """Field name -> one-line description, for tables in notebooks."""
        return {f.name: f.metadata.get("doc", "") for f in dataclasses.fields(self)}

    def table(self, fields: tuple[str, ...] | None = None):
        """The notebook's first table: each field's value, what it may be set to, and its meaning.

        ``allowed`` is the validation range (what the ``parameters`` cell accepts); a panel's slider may
        offer less (what redraws in about a second).
        """
        import pandas as pd

        rows = {}
        for f in dataclasses.fields(self):
            if fields is not None and f.name not in fields:
                continue
            meta = f.metadata
            if meta.get("choices") is not None:
                allowed = " | ".join(map(repr, meta["choices"]))
            elif meta.get("lo") is not None or meta.get("hi") is not None:
                closed = meta.get("closed", "both")
                lo = "−∞" if meta.get("lo") is None else f"{meta['lo']:g}"
                hi = "∞" if meta.get("hi") is None else f"{meta['hi']:g}"
                lo += "" if closed in ("both", "left") or meta.get("lo") is None else " (excluded)"
                hi += "" if closed in ("both", "right") or meta.get("hi") is None else " (excluded)"
                allowed = f"{lo} … {hi}"
                if meta.get("optional"):
                    allowed += " | None"
            elif isinstance(f.default, bool):
                allowed = "True | False"
            else:
                allowed = "any " + type(f.default).__name__
            rows[f.name] = {"value": getattr(self, f.name), "allowed": allowed, "meaning": meta.get("doc", "")}
        return pd.DataFrame.from_dict(rows, orient="index")
