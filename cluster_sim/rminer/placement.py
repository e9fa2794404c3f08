"""A random fit that probes instead of scanning: Omega's random placement at 1500 machines.

The engine's ``random_fit`` builds the boolean "fits" vector over every machine for every
decision (about 60 us at 1500 machines, a third of a paper-scale run). :func:`probe_random_fit`
draws machines uniformly and returns the first that fits; after ``probes`` misses it falls back
to the full scan. Both branches return a machine uniformly distributed over the fitting ones, so
the *distribution* of decisions is exactly ``random_fit``'s; only the random stream differs.

Example
-------
>>> import numpy as np
>>> free = np.array([[0, 0], [3, 3], [0, 9], [5, 1]])
>>> rng = np.random.default_rng(0)
>>> sorted({probe_random_fit(free, (1, 1), rng) for _ in range(200)})
[1, 3]
>>> probe_random_fit(free, (9, 9), rng)
-1
"""

from __future__ import annotations

import numpy as np


def probe_random_fit(free: np.ndarray, demand, rng: np.random.Generator, probes: int = 8,
                     uniforms: "UniformBuffer | None" = None) -> int:
    """A uniformly random machine among those whose ``free`` row covers ``demand``; -1 if none.

    ``uniforms`` (optional) supplies the probes' uniform draws in blocks, which is much cheaper
    than one Generator call per decision; its draws come from ``rng`` too.
    """
    n = free.shape[0]
    d = demand if type(demand) is tuple else tuple(int(x) for x in demand)
    draw = uniforms.next if uniforms is not None else rng.random
    # a probed machine's entries read one by one as Python ints: numpy's row and its tolist() cost twice as much
    rows = memoryview(free)
    for _ in range(probes):
        i = int(draw() * n)
        for r, x in enumerate(d):  # a plain loop: a generator per probe cost a third of it
            if rows[i, r] < x:
                break
        else:
            return i
    idx = np.flatnonzero((free >= np.asarray(d)).all(axis=1))
    if len(idx) == 0:
        return -1
    return int(idx[rng.integers(len(idx))])


class UniformBuffer:
    """Uniform [0, 1) draws from ``rng`` handed out one by one, refilled in blocks."""

    def __init__(self, rng: np.random.Generator, block: int = 4096):
        self.rng, self.block = rng, block
        self._buf: list[float] = []

    def next(self) -> float:
        if not self._buf:
            self._buf = self.rng.random(self.block).tolist()
            self._buf.reverse()
        return self._buf.pop()
