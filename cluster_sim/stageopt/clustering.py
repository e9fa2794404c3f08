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

import numpy as np
from scipy.ndimage import gaussian_filter1d

from .placement import check_capacity

__all__ = ["density_clusters_1d", "machine_groups", "ipa_clustered"]


def density_clusters_1d(rows, bandwidth: float | None = None, bins: int = 256) -> np.ndarray:
    """Cluster instances by input rows: minima of a KDE of log10(rows) split the clusters.

    The KDE is binned (a histogram smoothed with a Gaussian of ``bandwidth`` in log10 units;
    default Silverman's rule), so the cost is O(m + bins). Labels are numbered from the cluster
    of the largest instances (label 0) downwards.
    """
    x = np.log10(np.maximum(np.asarray(rows, dtype=float), 1.0))
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"rows must be a non-empty 1-D array, got shape {np.shape(rows)}")
    lo, hi = x.min(), x.max()
    if hi - lo < 1e-12:
        return np.zeros(x.size, dtype=np.int64)
    if bandwidth is None:
        sd = x.std()
        iqr = np.subtract(*np.percentile(x, [75, 25]))
        spread = min(sd, iqr / 1.34) if iqr > 0 else sd
        bandwidth = 0.9 * spread * x.size ** (-0.2) if spread > 0 else (hi - lo) / 10
    if bandwidth <= 0:
        raise ValueError(f"bandwidth={bandwidth} must be > 0")
    hist, edges = np.histogram(x, bins=bins, range=(lo, hi))
    dens = gaussian_filter1d(hist.astype(float), sigma=bandwidth / (edges[1] - edges[0]), mode="constant")
    # strict local minima of the density (plateaus of zeros count once, at their middle)
    interior = np.flatnonzero((dens[1:-1] < dens[:-2]) & (dens[1:-1] <= dens[2:])) + 1
    cuts = edges[interior] + (edges[1] - edges[0]) / 2
    labels_low_first = np.searchsorted(cuts, x, side="right")
    return (cuts.size - labels_low_first).astype(np.int64)


def machine_groups(keys) -> tuple[np.ndarray, np.ndarray]:
    """Group machines by identical integer keys (n, c); return (labels (n,), representatives (n',))."""
    keys = np.asarray(keys)
    if keys.ndim != 2 or keys.shape[0] == 0:
        raise ValueError(f"keys must be a non-empty (machines, features) array, got shape {keys.shape}")
    _, first, labels = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return labels.reshape(-1).astype(np.int64), first.astype(np.int64)


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
    inst_labels = np.asarray(inst_labels, dtype=np.int64)
    mach_labels = np.asarray(mach_labels, dtype=np.int64)
    m, n = inst_labels.size, mach_labels.size
    # validates capacity, shapes and "need X slots, have Y" on the full problem
    if n == 0:
        raise ValueError("mach_labels is empty: the machine list is empty")
    cap = check_capacity(m, n, capacity, "mach_labels")
    Lr = np.asarray(L_rep, dtype=float)
    mp, np_ = int(inst_labels.max()) + 1, int(mach_labels.max()) + 1
    if Lr.shape != (mp, np_):
        raise ValueError(f"L_rep must be (instance clusters, machine clusters) = ({mp}, {np_}), got {Lr.shape}")
    rows = np.asarray(rows, dtype=float)
    # instances of each cluster, largest input first (ties: lower id)
    order = np.lexsort((np.arange(m), -rows, inst_labels))
    starts = np.searchsorted(inst_labels[order], np.arange(mp))
    ends = np.searchsorted(inst_labels[order], np.arange(mp), side="right")
    taken = starts.copy()
    beta = ends - starts
    # slots of each machine cluster, round-robin over its machines
    slot_lists = []
    for g in range(np_):
        ms = np.flatnonzero(mach_labels == g)
        c = cap[ms]
        slot_lists.append(np.concatenate([ms[c > r] for r in range(int(c.max()) if c.size else 0)] or [np.zeros(0, np.int64)]))
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
