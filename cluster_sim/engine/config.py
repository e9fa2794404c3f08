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
from typing import Any, ClassVar

_MISSING = dataclasses.MISSING


def param(
    default: Any,
    *,
    doc: str,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple | None = None,
    step: float | None = None,
    widget: bool = True,
) -> Any:
    """Declare a config field with its allowed range (``lo``/``hi``, inclusive) or ``choices``.

    ``step`` is the slider step in the widget panel; ``widget=False`` keeps the field out of it
    (for values that make no sense on a slider, such as a trace file or a tuple of weights).
    """
    if isinstance(default, (list, dict, set)):
        raise TypeError("param defaults must be immutable (use a tuple, not a list)")
    meta = {"doc": doc, "lo": lo, "hi": hi, "choices": choices, "step": step, "widget": widget}
    return dataclasses.field(default=default, metadata=meta)


def _type_ok(value: Any, default: Any) -> bool:
    """Accept values of the default's kind: ints for int fields, numbers for float fields."""
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool) or (
            # numpy integers from sweeps are fine
            hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu"
        )
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool) or (
            hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iuf"
        )
    if isinstance(default, str):
        return isinstance(value, str)
    return True


class Config:
    """Base class for experiment configs: validation, presets and ``replace``.

    Subclasses are ``@dataclass(frozen=True)`` and override the presets :meth:`ci` (seconds, for
    CI), :meth:`default` (the interactive default: a slider answers in about a second) and, where
    the paper has one, :meth:`paper` (the paper's own scale).
    """

    PRESETS: ClassVar[tuple[str, ...]] = ("ci", "default", "paper")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            self._check_field(f, getattr(self, f.name))
        self.validate()

    def _check_field(self, f: dataclasses.Field, value: Any) -> None:
        name = f"{type(self).__name__}.{f.name}"
        meta = f.metadata
        doc = f" ({meta['doc']})" if meta.get("doc") else ""
        default = f.default if f.default is not _MISSING else None
        if default is not None and not _type_ok(value, default):
            raise ValueError(
                f"{name}={value!r} has the wrong type: expected {type(default).__name__}{doc}"
            )
        if meta.get("choices") is not None and value not in meta["choices"]:
            allowed = ", ".join(repr(c) for c in meta["choices"])
            raise ValueError(f"{name}={value!r} is not allowed: choose one of {allowed}{doc}")
        lo, hi = meta.get("lo"), meta.get("hi")
        if lo is None and hi is None:
            return
        if isinstance(value, float) and math.isnan(value):
            raise ValueError(f"{name}=nan is not a number{doc}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            lo_s = "-inf" if lo is None else f"{lo:g}"
            hi_s = "inf" if hi is None else f"{hi:g}"
            raise ValueError(
                f"{name}={value!r} is out of range: allowed {lo_s} <= {f.name} <= {hi_s}{doc}"
            )

    def validate(self) -> None:
        """Cross-field checks; override and raise ``ValueError`` naming the fields involved."""

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

    @classmethod
    def from_preset(cls, preset: str = "default", **overrides: Any):
        """A preset with some fields overridden: what a notebook's ``parameters`` cell feeds."""
        if preset not in cls.PRESETS:
            raise ValueError(
                f"preset={preset!r} is not allowed: choose one of {', '.join(cls.PRESETS)}"
            )
        base = getattr(cls, preset)()
        unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            names = ", ".join(f.name for f in dataclasses.fields(cls))
            raise ValueError(f"unknown {cls.__name__} field(s) {unknown}; the fields are: {names}")
        return dataclasses.replace(base, **overrides)

    def replace(self, **changes: Any):
        """A copy with some fields changed (validated again): the building block of sweeps."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            names = ", ".join(f.name for f in dataclasses.fields(self))
            raise ValueError(f"unknown {type(self).__name__} field(s) {unknown}; the fields are: {names}")
        return dataclasses.replace(self, **changes)

    def describe(self) -> dict[str, str]:
        """Field name -> one-line description, for tables in notebooks."""
        return {f.name: f.metadata.get("doc", "") for f in dataclasses.fields(self)}
