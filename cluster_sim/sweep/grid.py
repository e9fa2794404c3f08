"""The grid of a sweep: its points, its seeds, the configs they make, and the scalar metrics a row keeps.

Nothing here runs a point: :func:`grid_points` and ``_configs`` check and build every config before anything
runs (a bad field or value is a ``ValueError`` naming the point), and :func:`result_metrics` reads a result's
metrics by the protocol in :mod:`cluster_sim.sweep`'s docstring.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd


# ---- the grid --------------------------------------------------------------------------------------
def _field_names(config) -> list[str]:
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise ValueError(f"base_config={config!r} is not a config dataclass instance "
                         "(give e.g. ShaperConfig.ci())")
    return [f.name for f in dataclasses.fields(config)]


def grid_points(base_config, grid: Mapping[str, Sequence] | Sequence[Mapping[str, Any]]) -> list[dict]:
    """The grid's points as dicts of field -> value, checked against the config's fields.

    ``grid`` is a mapping field -> list of values (every combination, the last field varying
    fastest) or a list of dicts (exactly those points).

    >>> from cluster_sim.engine import ClusterConfig
    >>> grid_points(ClusterConfig.ci(), {"schedulers": [1, 2], "load": [0.5]})
    [{'schedulers': 1, 'load': 0.5}, {'schedulers': 2, 'load': 0.5}]
    >>> grid_points(ClusterConfig.ci(), {"scheduler": [1]})
    Traceback (most recent call last):
    ...
    ValueError: grid field 'scheduler' is not a ClusterConfig field; the fields are: ...
    """
    names = _field_names(base_config)
    cls = type(base_config).__name__

    def check_field(name):
        if name not in names:
            raise ValueError(f"grid field {name!r} is not a {cls} field; the fields are: {', '.join(names)}")

    if isinstance(grid, Mapping):
        for name, values in grid.items():
            check_field(name)
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise ValueError(f"grid[{name!r}]={values!r} is not a list of values: give e.g. "
                                 f"{{{name!r}: [{values!r}]}}")
        lists = {name: list(values) for name, values in grid.items()}
        for name, values in lists.items():
            if not values:
                raise ValueError(f"grid[{name!r}] is empty: give at least one value")
        return [dict(zip(lists, combo)) for combo in itertools.product(*lists.values())]
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise ValueError(f"grid={grid!r} must be a mapping field -> list of values, or a list of dicts")
    points = []
    for k, point in enumerate(grid):
        if not isinstance(point, Mapping):
            raise ValueError(f"grid[{k}]={point!r} is not a dict of field -> value")
        for name in point:
            check_field(name)
        points.append(dict(point))
    if not points:
        raise ValueError("grid is empty: give at least one point")
    return points


def _seed_list(base_config, seeds) -> list | None:
    """The seeds to run (None: the config has no seed field, one run per point)."""
    has_seed = "seed" in _field_names(base_config)
    if seeds is None:
        return [base_config.seed] if has_seed else None
    if not has_seed:
        raise ValueError(f"seeds={seeds!r} given, but {type(base_config).__name__} has no seed field: "
                         "leave seeds=None")
    if isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds={seeds!r} is out of range: give a count >= 1 or a list of seeds")
        return [base_config.seed + k for k in range(int(seeds))]
    if isinstance(seeds, (str, bytes, bool)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds={seeds!r} must be a count (seed, seed+1, ...) or a list of seeds")
    out = list(seeds)
    if not out:
        raise ValueError("seeds=[] is empty: give a count >= 1 or at least one seed")
    return out


def _describe(point: Mapping, seed) -> str:
    parts = [f"{k}={v!r}" for k, v in point.items()]
    if seed is not None:
        parts.append(f"seed={seed!r}")
    return ", ".join(parts) or "(the base config)"


def _configs(base_config, points: list[dict], seeds: list | None) -> list[tuple[dict, Any, Any]]:
    """(point, seed, config) for every run, each config built (and so validated) now."""
    out = []
    for k, point in enumerate(points):
        if seeds is not None and "seed" in point:
            raise ValueError(f"grid point {k} ({_describe(point, None)}) sets seed, and seeds= sets it too: "
                             "put the seeds in seeds= only")
        for seed in (seeds if seeds is not None else [None]):
            changes = dict(point) if seed is None else {**point, "seed": seed}
            try:
                config = base_config.replace(**changes) if hasattr(base_config, "replace") \
                    else dataclasses.replace(base_config, **changes)
            except (ValueError, TypeError) as err:
                raise ValueError(f"grid point {k} ({_describe(point, seed)}) is refused: {err}") from err
            out.append((point, seed, config))
    return out


# ---- metrics ---------------------------------------------------------------------------------------
def _scalar(value) -> bool:
    return isinstance(value, (numbers.Number, str, np.generic)) and not isinstance(value, np.ndarray)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _dataclass_scalars(obj) -> dict:
    out = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    for name, attr in inspect.getmembers(type(obj)):
        if isinstance(attr, property) and not name.startswith("_"):
            out[name] = getattr(obj, name)
    return {k: _plain(v) for k, v in out.items() if _scalar(v) and not k.startswith("_")}


def result_metrics(result) -> dict:
    """The scalar metrics of a result, by the protocol in :mod:`cluster_sim.sweep`'s docstring.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class R:
    ...     latency: float
    ...     trace: list
    ...     @property
    ...     def fast(self): return self.latency < 1
    >>> result_metrics(R(0.5, [1, 2]))
    {'latency': 0.5, 'fast': True}
    """
    m = getattr(result, "metrics", None)
    if m is not None and not isinstance(result, (Mapping, pd.Series)):
        if callable(m) and not dataclasses.is_dataclass(m):
            m = m()
        if isinstance(m, Mapping):
            return {k: _plain(v) for k, v in m.items() if _scalar(v)}
        if isinstance(m, pd.Series):
            return {k: _plain(v) for k, v in m.items() if _scalar(v)}
        if dataclasses.is_dataclass(m):
            return _dataclass_scalars(m)
    if isinstance(result, (Mapping, pd.Series)):
        return {k: _plain(v) for k, v in result.items() if _scalar(v)}
    if _scalar(result):
        return {"value": _plain(result)}
    if dataclasses.is_dataclass(result):
        return _dataclass_scalars(result)
    raise TypeError(f"cannot read metrics from a {type(result).__name__}: give run_grid a "
                    "metrics=callable(result) -> dict of numbers")

