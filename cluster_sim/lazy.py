"""Names a module re-exports from another that only some of its users need, imported on first use (PEP 562).

A lab package re-exports its figures (``plot_*``) so that a notebook imports everything from one place; the figures'
module imports matplotlib, and with it Pillow, pyparsing and (through :mod:`cluster_sim.ui`) ipywidgets: about
0.5 s of CPU in every process that imports the package. An exercise that draws nothing need not pay it, and each
nbgrader autograde of a lab is a fresh kernel that pays it again (tests/notebooks/test_nbgrader.py grades four
students a lab). :func:`lazy` gives the package a module ``__getattr__`` (and ``__dir__``, so the names stay
visible to ``dir()`` and tab completion) that imports the module the first time one of its names is asked for;
``from package import plot_x`` and ``package.plot_x`` work as before. tests/test_lazy_imports.py checks it.

>>> import sys, cluster_sim.stageopt as stageopt
>>> stageopt.plot_placement.__module__
'cluster_sim.stageopt.plots'
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable


def lazy(package: str, module: str, names: Iterable[str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the module ``package``: each of ``names`` is read from the module ``module``
    (an absolute name) when first asked for, and then kept in ``package``'s namespace."""
    names = frozenset(names)

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # asked once: the next use is an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | names)

    return __getattr__, __dir__
