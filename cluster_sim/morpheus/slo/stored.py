"""R* fits stored on disk, keyed by what decides them: :func:`stored_fit`, a drop-in for :func:`.skyline.fit_skyline`.

A fit is a pure function of the aligned skylines, ``alpha``, ``beta_fraction`` and the LP's casting (and of the code
and of HiGHS). Lab 03's notebook at ``paper`` needs the same history's 200 LP solves (25 ms each, about 5 s of CPU a
seed) in every process that builds a workload of that seed: the kernel and each Dask worker, for each of the
notebook's seeds, and once more for the trace's configuration (``late_start=0``), whose history is the same. Stored
here, each fit is solved once per notebook and read back by every other process.

The store is the sweep cache's (:mod:`cluster_sim.sweep.cache`), in its folder ``morpheus_fits``: a checksummed JSON
entry per fit, floats written exactly (``float.hex``), the entry naming its key; reading one runs no code, and one
that fails a check is solved again with a :class:`~cluster_sim.sweep.SweepCacheWarning`. The key hashes the
skylines' bytes (with their shape and dtype), ``alpha`` and ``beta_fraction`` exactly, the casting, the package's
version and a digest of its source, and SciPy's version (HiGHS comes with it): editing the package or upgrading
SciPy solves afresh. ``$CLUSTER_SIM_SWEEP_CACHE`` names the folder for every process of a notebook (the workers
inherit the kernel's environment).

Example
-------
>>> import tempfile
>>> runs = [[4, 4, 1], [4, 2, 1], [3, 4, 2]]
>>> with tempfile.TemporaryDirectory() as d:
...     first, again = stored_fit(runs, 0.5, directory=d), stored_fit(runs, 0.5, directory=d)
>>> again.skyline.tolist() == first.skyline.tolist() == fit_skyline(runs, 0.5).skyline.tolist()
True
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np

from ... import validate
from ...sweep.cache import (SweepCacheWarning, _cache_get, _cache_path, _cache_put, _float_text, _source_digest,
                            _version, cache_dir)
from .runs import MIN_RUNS, check_skylines
from .skyline import DEFAULT_BETA_FRACTION, FORMULATIONS, SkylineFit, fit_skyline

__all__ = ["stored_fit", "FIT_FORMAT", "FOLDER"]

FIT_FORMAT = "cluster_sim.morpheus.stored_fit/1"
#: the store's folder inside the sweep cache's
FOLDER = "morpheus_fits"
#: SkylineFit's fields besides the skyline, with their types as stored
_FLOATS = ("over", "under", "epsilon", "objective", "alpha", "beta", "beta_fraction", "unregularised_objective")
_INTS = ("n_runs", "n_steps", "n_variables", "n_constraints", "solves")


def _scipy_version() -> str:
    import scipy

    return scipy.__version__


def fit_key(runs: np.ndarray, alpha: float, beta_fraction: float, formulation: str) -> str:
    """What a fit is stored under: a hash of everything that decides it (see the module docstring)."""
    payload = json.dumps({
        "format": FIT_FORMAT, "skylines": hashlib.sha256(np.ascontiguousarray(runs).tobytes()).hexdigest(),
        "shape": list(runs.shape), "dtype": runs.dtype.str, "alpha": _float_text(alpha),
        "beta_fraction": _float_text(beta_fraction), "formulation": formulation, "version": _version(),
        "source": _source_digest(), "scipy": _scipy_version(),
    }, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _values(fit: SkylineFit) -> dict:
    values = {name: float(getattr(fit, name)) for name in _FLOATS}
    values.update({name: int(getattr(fit, name)) for name in _INTS})
    values["formulation"] = fit.formulation
    values["steps"] = int(fit.skyline.size)
    values.update({f"s{k}": float(x) for k, x in enumerate(fit.skyline.tolist())})
    return values


def _fit(values: dict) -> SkylineFit | None:
    """The stored fit, or None if the entry does not hold one (then it is solved again)."""
    try:
        steps = values["steps"]
        if type(steps) is not int or steps < 0 or len(values) != len(_FLOATS) + len(_INTS) + 2 + steps:
            return None
        skyline = np.array([values[f"s{k}"] for k in range(steps)], dtype=np.float64)
        if any(type(values[n]) is not float for n in _FLOATS) or any(type(values[n]) is not int for n in _INTS) \
                or values["formulation"] not in FORMULATIONS or skyline.dtype != np.float64:
            return None
        return SkylineFit(skyline=skyline, formulation=values["formulation"],
                          **{n: values[n] for n in _FLOATS + _INTS})
    except (KeyError, TypeError, ValueError):
        return None


def stored_fit(skylines, alpha: float, *, beta_fraction: float = DEFAULT_BETA_FRACTION, min_runs: int = MIN_RUNS,
               formulation: str = "compact", directory=None) -> SkylineFit:
    """:func:`.skyline.fit_skyline` with the default solver options, read from the store when it holds this fit,
    else solved and stored. ``directory``: the sweep cache's folder (None: :func:`cluster_sim.sweep.cache_dir`'s
    default, ``$CLUSTER_SIM_SWEEP_CACHE``), or False to solve without the store. The fit returned is the one
    ``fit_skyline`` returns, bit for bit (a test compares every field)."""
    runs = check_skylines(skylines, min_runs=min_runs)
    a = validate.number(alpha, "alpha", lo=0, hi=1)
    frac = validate.number(beta_fraction, "beta_fraction", lo=0)
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation={formulation!r} is not allowed: choose one of {', '.join(map(repr, FORMULATIONS))}")
    folder = None if directory is False else cache_dir(directory)
    if folder is None:
        return fit_skyline(runs, a, beta_fraction=frac, min_runs=min_runs, formulation=formulation)
    folder = Path(folder) / FOLDER
    key = fit_key(runs, float(a), float(frac), formulation)
    values = _cache_get(folder, key)  # None, with a warning, for an entry that fails the sweep cache's checks
    if values is not None:
        fit = _fit(values)
        if fit is not None and (fit.n_runs, fit.n_steps, fit.alpha, fit.beta_fraction, fit.formulation) == (
                runs.shape[0], runs.shape[1], float(a), float(frac), formulation):
            return fit
        warnings.warn(f"stored_fit: ignoring the stored fit {_cache_path(folder, key)}: it does not hold this fit; "
                      "solving it again", SweepCacheWarning, stacklevel=2)
    fit = fit_skyline(runs, a, beta_fraction=frac, min_runs=min_runs, formulation=formulation)
    _cache_put(folder, key, f"fit_skyline({runs.shape[0]} runs x {runs.shape[1]} steps, alpha={a!r}, "
                            f"beta_fraction={frac!r}, formulation={formulation!r})", _values(fit))
    return fit
