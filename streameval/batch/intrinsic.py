"""Batch intrinsic metrics: ``f(X, labels, ...) -> value`` from the formulas, two passes over the data.

Written independently of :mod:`streameval.summaries` (plain numpy: group means first, then the
distances of every point to its mean), these are the users' batch API, the exact path of
:func:`streameval.cluster_report`, and the reference the streaming views are tested against.
``X`` is an ``(N, d)`` array-like of finite numbers, ``labels`` a length-``N`` sequence of cluster
labels (grouped by Python equality; a missing label raises
:class:`~streameval.errors.MissingLabelError`, as the streaming summaries do). ``distance`` is ``"euclidean"`` or ``"cosine"`` (``1 - cos``; vectors scaled to unit
length first, as Alink does). Definitions follow Alink's ``EvalClusterBatchOp`` (and
scikit-learn's functions of the same name where they exist); undefined values (fewer than two
clusters) are NaN. Cost: O(N·d) except where stated.

The six-point example of Alink's documentation:

>>> import numpy as np
>>> X = np.array([[0, 0, 0], [0.1, 0.1, 0.1], [0.2, 0.2, 0.2],
...               [9, 9, 9], [9.1, 9.1, 9.1], [9.2, 9.2, 9.2]])
>>> y = [0, 0, 0, 1, 1, 1]
>>> round(calinski_harabasz_score(X, y), 6), round(compactness_score(X, y), 6)
(12150.0, 0.11547)
>>> round(davies_bouldin_score(X, y), 6), round(separation_score(X, y), 4)
(0.014815, 15.5885)
>>> round(ssb_score(X, y), 6), round(ssw_score(X, y), 6)
(364.5, 0.12)
>>> round(silhouette_score(X, y, metric="sqeuclidean"), 6)
0.999753
"""

from __future__ import annotations

import numpy as np

from .._unit import cosine_distance, unit_rows
from .._validate import real_array, vector_problem
from ..errors import InvalidVectorError
from ..labels import factorize

__all__ = [
    "ssw_score",
    "ssb_score",
    "calinski_harabasz_score",
    "separation_score",
    "compactness_score",
    "davies_bouldin_score",
    "rms_compactness_score",
    "rms_davies_bouldin_score",
    "silhouette_score",
    "silhouette_samples",
    "prequential_silhouette_score",
]

NAN = float("nan")
_HINT = "; every point needs a cluster label (the streaming summaries reject it too)"
_DISTANCES = ("euclidean", "cosine")


def _prepare(X, labels, distance="euclidean"):
    """``(X, inverse, uniques)``: checked float array (unit rows for cosine) and cluster indices."""
    if distance not in _DISTANCES:
        raise ValueError(f"distance must be one of {_DISTANCES}, got {distance!r}")
    X = real_array(X, "X", copy=False)
    if X.ndim != 2 or X.shape[1] == 0:
        raise InvalidVectorError(f"X must be a 2-D array (N, d) with d >= 1, got shape {X.shape}")
    inverse, uniques = factorize(labels, "labels", hint=_HINT)  # None/NaN labels: MissingLabelError
    if len(inverse) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but labels has {len(inverse)} entries")
    problem = vector_problem(X)
    if problem is not None:
        raise InvalidVectorError(f"X {problem}")
    if distance == "cosine":
        if not X.any(axis=1).all():
            raise InvalidVectorError("the cosine distance needs non-zero vectors (a row is all 0)")
        X = unit_rows(X)
    return X, inverse.astype(np.intp, copy=False), uniques


def _means(X, inverse, k):
    """The clusters' counts and means: the sums over the counts, then one correction, the mean of
    each cluster's residuals against that first mean. A cluster of identical points then has the
    point itself as its mean (``3x`` rounds and ``3x/3`` need not be ``x``, but ``x − m`` is exact,
    Sterbenz, and so are its sum, quotient and ``m + (x − m)``), so its SSW is 0 exactly, as the
    streaming Welford sums give it (Calinski-Harabasz's 1.0 at SSW = 0, not ``SSB/10⁻²⁹``);
    elsewhere the correction removes the first mean's rounding to first order. O(N·d)."""
    counts = np.bincount(inverse, minlength=k).astype(np.float64)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, inverse, X)
    means = sums / counts[:, None]
    residuals = np.zeros((k, X.shape[1]))
    np.add.at(residuals, inverse, X - means[inverse])
    return counts, means + residuals / counts[:, None]


def _dist(a, b, distance):
    """Row-wise distance between ``a`` and ``b`` (broadcast), never via norms for Euclidean."""
    if distance == "euclidean":
        diff = a - b
        return np.sqrt(np.einsum("...j,...j->...", diff, diff))
    return cosine_distance(a, b)  # never 1 - u·v, which cancels between near-parallel vectors


def _point_distances(X, labels, distance):
    X, inv, uniq = _prepare(X, labels, distance)
    counts, means = _means(X, inv, len(uniq))
    return _dist(X, means[inv], distance), inv, counts, means


def ssw_score(X, labels, distance="euclidean") -> float:
    """Within-cluster sum of squared distances to the cluster means, ``sum_j sum_{x in j} d(x, mean_j)²``
    (Alink's ``ssw``; for cosine, Alink's ``sum (1 - cos(x, mean_j))²``).

    Cost: O(N·d) plus the labels' factorisation (O(N log N)).

    >>> ssw_score([[0.0], [2.0], [5.0]], ["a", "a", "b"])
    2.0
    """
    d, _, _, _ = _point_distances(X, labels, distance)
    return float(d @ d)


def ssb_score(X, labels, distance="euclidean") -> float:
    """Between-cluster sum of squares ``sum_j b[j]·d(mean_j, mean)²`` (Alink's ``ssb``).

    Cost: O(N·d) plus the labels' factorisation (O(N log N)).

    >>> ssb_score([[0.0], [4.0]], ["a", "b"])
    8.0
    """
    X, inv, uniq = _prepare(X, labels, distance)
    counts, means = _means(X, inv, len(uniq))
    d = _dist(means, X.mean(axis=0), distance)
    return float(counts @ (d * d))


def calinski_harabasz_score(X, labels, distance="euclidean") -> float:
    """``(SSB/(k-1)) / (SSW/(N-k))`` (scikit-learn's ``calinski_harabasz_score`` for Euclidean;
    Alink's ``vrc``). NaN when ``k < 2``; 1.0 when SSW is 0 (scikit-learn).

    Cost: O(N·d) plus the labels' factorisation (O(N log N)).

    >>> calinski_harabasz_score([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1])
    200.0
    """
    X, inv, uniq = _prepare(X, labels, distance)
    k, n = len(uniq), X.shape[0]
    if k < 2:
        return NAN
    ssw = ssw_score(X, labels, distance)
    if ssw == 0.0:
        return 1.0
    return ssb_score(X, labels, distance) * (n - k) / (ssw * (k - 1))


def _centroid_matrix(means, distance):
    d = _dist(means[:, None, :], means[None, :, :], distance)
    np.fill_diagonal(d, 0.0)  # a mean is at distance 0 of itself, even a zero mean under cosine
    return d


def separation_score(X, labels, distance="euclidean") -> float:
    """Mean distance between the means of pairs of clusters (Alink's ``sp``). O(N·d + k²·d).

    >>> separation_score([[0.0, 0.0], [3.0, 4.0]], [0, 1])
    5.0
    """
    X, inv, uniq = _prepare(X, labels, distance)
    k = len(uniq)
    if k < 2:
        return NAN
    _, means = _means(X, inv, k)
    return float(_centroid_matrix(means, distance).sum() / (k * (k - 1)))


def _per_cluster_mean(values, inv, counts):
    return np.bincount(inv, weights=values, minlength=len(counts)) / counts


def compactness_score(X, labels, distance="euclidean") -> float:
    """Alink's compactness ``cp``: the mean over clusters of the mean distance (unsquared) from a
    cluster's points to its mean. Exact here; not a function of fixed-size summaries for Euclidean.

    ``(1/k)·Σ_j (1/b[j])·Σ_{x in j} d(x, mean_j)``. Cost: O(N·d) plus the labels' factorisation
    (O(N log N)).

    >>> compactness_score([[0.0], [2.0], [5.0]], ["a", "a", "b"])
    0.5
    """
    d, inv, counts, _ = _point_distances(X, labels, distance)
    return float(_per_cluster_mean(d, inv, counts).mean())


def _db(scatter, dist):
    if not scatter.any() or not dist.any():
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (scatter[:, None] + scatter[None, :]) / dist
    r[dist == 0] = 0.0
    return float(r.max(axis=1).mean())


def davies_bouldin_score(X, labels, distance="euclidean") -> float:
    """Davies-Bouldin index ``mean_i max_{j≠i} (S_i + S_j)/d(mean_i, mean_j)`` with ``S_i`` the mean
    distance of cluster ``i``'s points to its mean (scikit-learn's ``davies_bouldin_score``;
    Alink's ``db``). NaN when ``k < 2``. O(N·d + k²·d).

    >>> davies_bouldin_score([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1])
    0.2
    """
    d, inv, counts, means = _point_distances(X, labels, distance)
    if len(counts) < 2:
        return NAN
    return _db(_per_cluster_mean(d, inv, counts), _centroid_matrix(means, distance))


def rms_compactness_score(X, labels) -> float:
    """Mean over clusters of the root-mean-square distance of a cluster's points to its mean
    (twin of :class:`streameval.RMSCompactness`).

    ``(1/k)·Σ_j sqrt((1/b[j])·Σ_{x in j} ||x - mean_j||²)``. Cost: O(N·d) plus the labels' factorisation
    (O(N log N)).

    >>> rms_compactness_score([[0.0], [2.0], [5.0]], ["a", "a", "b"])
    0.5
    """
    d, inv, counts, _ = _point_distances(X, labels, "euclidean")
    return float(np.sqrt(_per_cluster_mean(d * d, inv, counts)).mean())


def rms_davies_bouldin_score(X, labels) -> float:
    """Davies-Bouldin index with RMS scatter (q = 2; twin of :class:`streameval.RMSDaviesBouldin`).

    ``(1/k)·Σ_i max_{j≠i} (S_i + S_j)/||mean_i - mean_j||`` with ``S_j`` the RMS scatter. Cost:
    O(N·d + k²·d) plus the labels' factorisation (O(N log N)).

    >>> rms_davies_bouldin_score([[0.0], [2.0], [10.0], [13.0]], [0, 0, 1, 1])
    0.2
    """
    d, inv, counts, means = _point_distances(X, labels, "euclidean")
    if len(counts) < 2:
        return NAN
    return _db(np.sqrt(_per_cluster_mean(d * d, inv, counts)), _centroid_matrix(means, "euclidean"))


_SILHOUETTE_METRICS = ("euclidean", "sqeuclidean", "cosine")


def _silhouette_totals_euclidean(xs, X, inv, k):
    """``(len(xs), k)``: per row of ``xs`` the sum of its Euclidean distances to each cluster."""
    onehot = np.zeros((X.shape[0], k))
    onehot[np.arange(X.shape[0]), inv] = 1.0
    diff = xs[:, None, :] - X[None, :, :]
    return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff)) @ onehot


def silhouette_samples(X, labels, metric="euclidean", singleton=0.0) -> np.ndarray:
    """Silhouette of every point, ``(b - a)/max(a, b)`` (0 when both are 0): ``a`` the mean
    distance to the other points of its cluster, ``b`` the smallest mean distance to another
    cluster. ``metric`` is ``"euclidean"`` (scikit-learn's default), ``"sqeuclidean"`` (Alink's
    "Euclidean" silhouette) or ``"cosine"``; ``singleton`` is the score of a point alone in its
    cluster (0.0: scikit-learn, 1.0: Alink). Needs ``k >= 2``.

    Euclidean: every pairwise distance, in blocks of rows (O(N²·d) time, O(N·d) extra memory per
    block). Squared Euclidean and cosine: the mean distances to a cluster come from its mean and
    scatter (``sum_{y in j} ||x-y||² = b_j·||x - mean_j||² + sum_{y in j} ||y - mean_j||²``; for
    unit vectors ``sum_{y in j} (1 - x·y) = b_j·(1 - x·mean_j)``), O(N·k·d).

    >>> silhouette_samples([[0.0], [1.0], [9.0]], [0, 0, 1], singleton=1.0).round(4).tolist()
    [0.8889, 0.875, 1.0]
    >>> silhouette_samples([[0.0], [1.0], [9.0]], [0, 0, 1], "sqeuclidean", 1.0).round(4).tolist()
    [0.9878, 0.9844, 1.0]
    """
    if metric not in _SILHOUETTE_METRICS:
        raise ValueError(f"metric must be one of {_SILHOUETTE_METRICS}, got {metric!r}")
    X, inv, uniq = _prepare(X, labels, "cosine" if metric == "cosine" else "euclidean")
    k = len(uniq)
    if k < 2:
        raise ValueError(f"the silhouette needs at least 2 clusters, got {k}")
    counts, means = _means(X, inv, k)
    out = np.empty(X.shape[0])
    if metric == "sqeuclidean":
        scatter = np.bincount(inv, weights=np.einsum("ij,ij->i", X - means[inv], X - means[inv]), minlength=k)
    width = X.shape[0] if metric == "euclidean" else k
    step = max(1, 2_000_000 // (width * X.shape[1]))
    for lo in range(0, X.shape[0], step):
        xs, own = X[lo : lo + step], inv[lo : lo + step]
        r = np.arange(len(xs))
        if metric == "euclidean":
            total = _silhouette_totals_euclidean(xs, X, inv, k)
        elif metric == "sqeuclidean":
            diff = xs[:, None, :] - means[None, :, :]
            total = counts * np.einsum("ijk,ijk->ij", diff, diff) + scatter  # sum over each cluster
        else:
            total = counts * np.clip(1.0 - xs @ means.T, 0.0, 2.0)
        own_n = counts[own]
        a = np.where(own_n > 1, total[r, own] / np.maximum(own_n - 1, 1), 0.0)
        other = total / counts
        other[r, own] = np.inf
        b = other.min(axis=1)
        big = np.maximum(a, b)
        s = np.where(big > 0, (b - a) / np.where(big > 0, big, 1.0), 0.0)
        s[own_n == 1] = singleton
        out[lo : lo + step] = s
    return out


def _random_state(random_state):
    """``random_state`` as scikit-learn's ``check_random_state`` reads it: ``None`` is numpy's global
    RandomState (``numpy.random``'s functions draw from it), an int seeds a new ``RandomState``; a
    ``RandomState`` or ``Generator`` is used as is."""
    if random_state is None:
        return np.random
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return np.random.RandomState(random_state)
    if isinstance(random_state, (np.random.RandomState, np.random.Generator)):
        return random_state
    raise ValueError(f"random_state must be None, an int, a numpy RandomState or Generator, got {random_state!r}")


def _subsample(X, labels, sample_size, random_state):
    """The points ``permutation(N)[:sample_size]`` of ``random_state``: scikit-learn's sample, so
    the same seed picks the same points."""
    if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)) or sample_size < 1:
        raise ValueError(f"sample_size must be a positive int, got {sample_size!r}")
    X = np.asarray(X)
    if X.ndim != 2:
        raise InvalidVectorError(f"X must be two-dimensional (points x features), got shape {X.shape}")
    if len(labels) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} points but labels has {len(labels)}")
    idx = _random_state(random_state).permutation(X.shape[0])[:sample_size]
    picked = np.asarray(labels)[idx] if hasattr(labels, "__array__") else [labels[i] for i in idx.tolist()]
    return X[idx], picked


def silhouette_score(X, labels, metric="euclidean", singleton=0.0, *, sample_size=None,
                     random_state=None) -> float:
    """Mean of :func:`silhouette_samples`: scikit-learn's ``silhouette_score`` (its default
    ``metric="euclidean"``, or ``"sqeuclidean"``, ``"cosine"``) when ``singleton=0``; Alink's
    with ``metric="sqeuclidean", singleton=1``. NaN when ``k < 2`` (scikit-learn raises; see the
    conventions page). Cost: O(N²·d) for Euclidean, O(N·k·d) for the other two.

    ``sample_size``: score a random sample of that many points instead (scikit-learn's option:
    the points ``random_state.permutation(N)[:sample_size]``, so an int ``random_state`` picks the
    same points as scikit-learn's); the Euclidean cost falls to O(sample_size²·d).

    >>> round(silhouette_score([[0.0], [1.0], [9.0], [10.0]], [0, 0, 1, 1]), 6)
    0.888545
    >>> round(silhouette_score([[0.0], [1.0], [9.0], [10.0]], [0, 0, 1, 1], metric="sqeuclidean"), 6)
    0.987579
    >>> round(silhouette_score([[0.0], [1.0], [9.0], [10.0], [11.0]], [0, 0, 1, 1, 1],
    ...                        sample_size=4, random_state=0), 6)
    0.888545
    """
    if sample_size is not None:
        X, labels = _subsample(X, labels, sample_size, random_state)
    X, _, uniq = _prepare(X, labels, "euclidean")
    if len(uniq) < 2:
        return NAN
    return float(silhouette_samples(X, labels, metric, singleton).mean())


def prequential_silhouette_score(X, labels, metric="sqeuclidean", singleton=0.0) -> float:
    """Twin of the streaming silhouettes' ``get()``: point ``i`` is scored against points ``0..i``
    (itself included), and points that arrive while their cluster is the only one are skipped;
    the mean of the scores (NaN if none). Brute force over pairs: O(N²·d).

    >>> prequential_silhouette_score([[0.0], [1.0], [9.0], [10.0]], [0, 0, 1, 1])
    0.494475138121547
    """
    if metric not in ("sqeuclidean", "cosine"):
        raise ValueError(f"metric must be 'sqeuclidean' or 'cosine', got {metric!r}")
    X, inv, _ = _prepare(X, labels, "euclidean" if metric == "sqeuclidean" else "cosine")
    scores = []
    for i in range(X.shape[0]):
        seen = inv[: i + 1]
        if len(set(seen.tolist())) < 2:
            continue
        if metric == "sqeuclidean":
            diff = X[: i + 1] - X[i]
            d = np.einsum("ij,ij->i", diff, diff)
        else:
            d = np.clip(1.0 - X[: i + 1] @ X[i], 0.0, 2.0)
        own = seen == inv[i]
        if own.sum() == 1:
            scores.append(singleton)
            continue
        a = d[own].sum() / (own.sum() - 1)
        b = min(d[seen == j].mean() for j in set(seen.tolist()) if j != inv[i])
        big = max(a, b)
        scores.append((b - a) / big if big > 0 else 0.0)
    return float(np.mean(scores)) if scores else NAN
