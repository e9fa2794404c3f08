"""Clustered IPA (§5.2 "Boosting IPA with clustering", Appendix D.2, Algorithm 4).

Instances are clustered in 1-D by input rows with a density-based method (a kernel density
estimate on log rows; its local minima are the cluster boundaries); a cluster is represented by
its largest instance, so latency is never underestimated. Machines are grouped by their
discretised system state (Ch4) and hardware type (Ch5). IPA then runs on the small (m', n')
matrix of representatives, sending δ = min(β_i, s_j) instances at a time.

>>> rows = np.array([10, 11, 12, 1000, 1100, 13])
>>> density_clusters_1d(rows).tolist()
[1, 1, 1, 0, 0, 1]
"""

from __future__ import annotations

import functools

import numpy as np

from ..validate import finite_array, index_array, number, whole_number
from .placement import check_capacity

__all__ = ["density_clusters_1d", "dbscan_clusters_1d", "machine_groups", "ipa_clustered"]


def density_clusters_1d(rows, bandwidth: float | None = None, bins: int = 256) -> np.ndarray:
    """Cluster instances by input rows: minima of a KDE of log10(rows) split the clusters.

    The KDE is binned (a histogram smoothed with a Gaussian of ``bandwidth`` in log10 units;
    default Silverman's rule), so the cost is O(m + bins). Labels are numbered from the cluster
    of the largest instances (label 0) downwards, without gaps: a density minimum with no instance
    between it and the next makes no cluster (an empty one would be asked about a representative of
    0 rows).
    """
    r = finite_array(rows, "rows", nonneg=True, what="input row counts")
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"rows must be a non-empty 1-D array, got shape {np.shape(rows)}")
    bins = whole_number(bins, "bins", lo=2)
    if bandwidth is not None:
        bandwidth = number(bandwidth, "bandwidth", lo=0, lo_open=True)
    return _remembered_density_labels(r.tobytes(), bandwidth, bins).copy()  # the caller's own array


@functools.lru_cache(maxsize=2048)
def _remembered_density_labels(rows: bytes, bandwidth: float | None, bins: int) -> np.ndarray:
    """:func:`density_clusters_1d` of the checked float rows in ``rows``, remembered: the stage optimiser
    clusters every stage's rows twice (IPA, then RAA), and the capstone plans a day's stages in batches
    of 1,000 (``capstone.plans.STAGES_PER_BATCH``), all IPAs before any RAA: 2,048 holds a batch."""
    return _density_labels(np.log10(np.maximum(np.frombuffer(rows), 1.0)), bandwidth, bins)


def _density_labels(x: np.ndarray, bandwidth: float | None, bins: int) -> np.ndarray:
    """:func:`density_clusters_1d` on validated log10 rows ``x``.

    The stage optimiser asks this twice for every stage it plans (IPA's and RAA's clusters) on a few
    dozen rows, where numpy's percentile, histogram and unique cost far more in their own checks
    than in their work: they are computed here from one sort, each giving exactly their numbers
    (tests/stageopt/test_fast_paths.py compares them with numpy's)."""
    xs = np.sort(x)
    lo, hi = xs[0], xs[-1]
    if hi - lo < 1e-12:
        return np.zeros(x.size, dtype=np.int64)
    if bandwidth is None:
        sd = x.std()
        iqr = _linear_percentile(xs, 0.75) - _linear_percentile(xs, 0.25)  # np.percentile(x, [75, 25])
        spread = min(sd, iqr / 1.34) if iqr > 0 else sd
        bandwidth = 0.9 * spread * x.size ** (-0.2) if spread > 0 else (hi - lo) / 10
    if bandwidth <= 0:
        raise ValueError(f"bandwidth={bandwidth} must be > 0")
    # np.histogram(x, bins, range=(lo, hi)): its edges, and bin i counts edges[i] <= x < edges[i + 1]
    # (the last bin also holds x == hi), which is the rule its estimate-and-correct indexing ends on
    edges = np.linspace(lo, hi, bins + 1, endpoint=True, dtype=float)
    below = np.searchsorted(xs, edges, side="left")
    below[-1] = xs.size
    hist = np.diff(below)
    from scipy.ndimage import gaussian_filter1d  # here, not at the top: ~0.05 s of every kernel

    dens = gaussian_filter1d(hist.astype(float), sigma=bandwidth / (edges[1] - edges[0]), mode="constant")
    # strict local minima of the density (plateaus of zeros count once, at their middle)
    interior = np.flatnonzero((dens[1:-1] < dens[:-2]) & (dens[1:-1] <= dens[2:])) + 1
    cuts = edges[interior] + (edges[1] - edges[0]) / 2
    labels = cuts.size - np.searchsorted(cuts, x, side="right")
    # numbered consecutively in the same order, as np.unique(labels, return_inverse=True) numbers them:
    # the clusters and their order are unchanged
    present = np.zeros(cuts.size + 1, dtype=bool)
    present[labels] = True
    return (np.cumsum(present) - 1)[labels].astype(np.int64)


def _linear_percentile(xs: np.ndarray, q: float) -> float:
    """np.percentile(x, 100 q)'s default (linear) method on the sorted ``xs`` (two or more values), with
    its arithmetic: the virtual index (n - 1) q, and numpy's lerp from the nearer side."""
    v = (xs.size - 1) * q
    i = int(np.floor(v))
    t = v - i
    a, b = xs[i], xs[i + 1]
    d = b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def dbscan_clusters_1d(rows, eps: float = 0.05, min_samples: int = 5) -> np.ndarray:
    """Cluster instances by input rows with DBSCAN on log10(rows) (Expt 7's IPA+RAA(DBSCAN)).

    ``eps`` is the neighbourhood radius in log10 units (0.05: rows within ~12% of each other),
    ``min_samples`` the neighbours a core point needs. Points DBSCAN calls noise each become a
    cluster of their own, so every instance has a label; labels count from 0 in order of first
    appearance. Unlike :func:`density_clusters_1d` the cost grows with the neighbourhoods
    (up to O(m^2) for dense inputs), which is why the paper found it too slow for production.

    >>> dbscan_clusters_1d([10, 10.5, 11, 10.2, 10.8, 1000, 1010, 1005, 990, 1020, 5e6], min_samples=3).tolist()
    [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2]
    """
    from sklearn.cluster import DBSCAN

    r = finite_array(rows, "rows", nonneg=True, what="input row counts")
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"rows must be a non-empty 1-D array, got shape {np.shape(rows)}")
    eps = number(eps, "eps", lo=0, lo_open=True)
    min_samples = whole_number(min_samples, "min_samples", lo=1)
    x = np.log10(np.maximum(r, 1.0))[:, None]
    labels = DBSCAN(eps=eps, min_samples=min_samples).fit(x).labels_.astype(np.int64)
    noise = labels < 0
    labels[noise] = labels.max() + 1 + np.arange(int(noise.sum()))
    return _first_seen(labels)


def _first_seen(labels: np.ndarray) -> np.ndarray:
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inv.reshape(-1)]


def machine_groups(keys) -> tuple[np.ndarray, np.ndarray]:
    """Group machines by identical integer keys (n, c); return (labels (n,), representatives (n',))."""
    keys = np.asarray(keys)
    if keys.ndim != 2 or keys.shape[0] == 0:
        raise ValueError(f"keys must be a non-empty (machines, features) array, got shape {keys.shape}")
    if keys.dtype.kind == "f":
        finite_array(keys, "keys", what="machine features")
    labels, first = _machine_groups(keys.dtype.str, keys.shape, keys.tobytes())
    return labels.copy(), first.copy()  # the caller's own arrays: the remembered ones stay as computed


@functools.lru_cache(maxsize=16)
def _machine_groups(dtype: str, shape: tuple, data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """:func:`machine_groups` of the keys in ``data``, remembered: a stage optimiser asks about the same
    machines for every stage it plans (twice a stage: IPA and RAA), and np.unique over rows sorts."""
    keys = np.frombuffer(data, dtype=dtype).reshape(shape)
    _, first, labels = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return labels.reshape(-1).astype(np.int64), first.astype(np.int64)


@functools.lru_cache(maxsize=16)
def _machine_slots(labels: bytes, capacity: bytes, groups: int) -> tuple[np.ndarray, ...]:
    """Each machine cluster's slots, round-robin over its machines in index order (one instance per
    machine before any gets a second), remembered read-only: a stage optimiser hands out the same
    machines' slots to every stage it places (``labels`` and ``capacity`` are int64 arrays' bytes)."""
    mach_labels, cap = np.frombuffer(labels, dtype=np.int64), np.frombuffer(capacity, dtype=np.int64)
    slot_lists = []
    for g in range(groups):
        ms = np.flatnonzero(mach_labels == g)
        c = cap[ms]
        slots = np.concatenate([ms[c > r] for r in range(int(c.max()) if c.size else 0)] or [np.zeros(0, np.int64)])
        slots.setflags(write=False)
        slot_lists.append(slots)
    return tuple(slot_lists)


def ipa_clustered(L_rep, inst_labels, rows, mach_labels, capacity) -> np.ndarray:
    """Algorithm 4: IPA over instance clusters × machine clusters.

    ``L_rep`` (m', n') holds the predicted latency of each instance cluster's representative on
    each machine cluster's representative; ``inst_labels`` (m,) and ``mach_labels`` (n,) map
    instances and machines to those rows and columns; ``rows`` (m,) orders instances inside a
    cluster (largest first); ``capacity`` (n,) is β_j per machine. Returns the (m,) machine of
    every instance. Inside a machine cluster, slots are handed out round-robin over its machines
    in index order (one instance per machine before any gets a second), a deterministic stand-in
    for the paper's random pick.
    """
    if np.ndim(inst_labels) != 1 or np.size(inst_labels) == 0:
        raise ValueError(f"inst_labels must be a non-empty 1-D array, got shape {np.shape(inst_labels)}")
    if np.ndim(mach_labels) != 1 or np.size(mach_labels) == 0:
        raise ValueError("mach_labels is empty: the machine list is empty")
    # a negative label would leave its instances unplaced (-1) or read the last cluster's latency
    inst_labels = index_array(inst_labels, "inst_labels", what="instance cluster label")
    mach_labels = index_array(mach_labels, "mach_labels", what="machine cluster label")
    m, n = inst_labels.size, mach_labels.size
    # validates capacity, shapes and "need X slots, have Y" on the full problem
    cap = check_capacity(m, n, capacity, "mach_labels")
    Lr = np.asarray(L_rep, dtype=float)
    mp, np_ = int(inst_labels.max()) + 1, int(mach_labels.max()) + 1
    if Lr.shape != (mp, np_):
        raise ValueError(f"L_rep must be (instance clusters, machine clusters) = ({mp}, {np_}), got {Lr.shape}")
    finite_array(Lr, "L_rep", nonneg=True, what="latencies")
    rows = finite_array(rows, "rows", nonneg=True, what="input row counts")
    if rows.shape != (m,):
        raise ValueError(f"rows must have one entry per instance: shape ({m},) like inst_labels, got {rows.shape}")
    return _ipa_clustered(Lr, inst_labels, rows, mach_labels, cap)


def _ipa_clustered(Lr: np.ndarray, inst_labels: np.ndarray, rows: np.ndarray, mach_labels: np.ndarray,
                   cap: np.ndarray) -> np.ndarray:
    """:func:`ipa_clustered` on checked arguments: float ``Lr`` (m', n'), int64 labels numbering their
    clusters 0.. without gaps, float ``rows`` (m,) and int64 ``cap`` (n,) with room for the stage (the
    stage optimiser's own, made by the clustering, the model and :func:`~.placement.slots_per_machine`)."""
    m = inst_labels.size
    mp, np_ = Lr.shape
    # instances of each cluster, largest input first (ties: lower id)
    order = np.lexsort((np.arange(m), -rows, inst_labels))
    starts = np.searchsorted(inst_labels[order], np.arange(mp))
    ends = np.searchsorted(inst_labels[order], np.arange(mp), side="right")
    taken = starts.copy()
    beta = ends - starts
    slot_lists = _machine_slots(mach_labels.tobytes(), cap.tobytes(), np_)
    s = np.array([len(x) for x in slot_lists], dtype=np.int64)
    used = np.zeros(np_, dtype=np.int64)
    assignment = np.full(m, -1, dtype=np.int64)
    Lm = np.where(s[None, :] > 0, Lr, np.inf)
    active = beta > 0
    while active.any():
        best = np.argmin(Lm, axis=1)
        bpl = np.where(active, Lm[np.arange(mp), best], -np.inf)
        i = int(np.argmax(bpl))          # largest BPL; ties to the lower cluster id
        j = int(best[i])
        delta = int(min(beta[i], s[j]))
        inst = order[taken[i]: taken[i] + delta]
        assignment[inst] = slot_lists[j][used[j]: used[j] + delta]
        taken[i] += delta
        used[j] += delta
        beta[i] -= delta
        s[j] -= delta
        if beta[i] == 0:
            active[i] = False
        if s[j] == 0:
            Lm[:, j] = np.inf
    return assignment
