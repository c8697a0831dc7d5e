"""A rounding bound for tests that compare :func:`streameval.batch.silhouette_samples` (Euclidean)
with scikit-learn's: how far the two may be apart on the test's own points, on any CPU and BLAS.

The two compute the same formula with other roundings. scikit-learn's distances come from the
expansion ``||x||² - 2 x·y + ||y||²`` (``euclidean_distances``: a BLAS product, whose order of
summation and use of FMA depend on the kernel OpenBLAS picks for the CPU); the expansion cancels,
so its error is relative to ``(||x|| + ||y||)²``, not to ``d²``. Ours are square roots of sums of
squared differences (relative ``γ_{d+3}``), summed per cluster by a BLAS product. A bound on each
per-cluster sum, then on ``a`` and ``b``, then on ``s = (b - a) / max(a, b)``, computed from the
points at run time: the cancellation is a property of the data, not a constant.
"""

from __future__ import annotations

import numpy as np

EPS = 2.0**-53
# the bounds' own arithmetic rounds too: a relative 1e-12 of slack covers it (and the distances
# and means computed here standing in for the exact ones, a relative few ε away)
SLACK = 1.0 + 1e-12


def gamma(m: int) -> float:
    """``γ_m = m·ε / (1 - m·ε)``: the relative error of a sum or dot product of ``m`` terms in any
    order, with or without fused multiply-adds (Higham, Accuracy and Stability, §3.1)."""
    return m * EPS / (1 - m * EPS)


def sample_bound(X, labels) -> np.ndarray:
    """Per point, a bound on ``|s_ours - s_sklearn|`` for the Euclidean silhouette (scikit-learn's
    convention: 0 for a point alone in its cluster, on both sides).

    Distances. scikit-learn's ``D2 = fl(fl(-2·G + ||x||²) + ||y||²)``, with ``G`` and the squared
    norms each within ``γ_d`` of their magnitudes: ``|D2 - d²| ≤ E = γ_{d+3}·(||x|| + ||y||)²``
    (the two additions add ``2ε`` of that); clipped at 0 and square-rooted,
    ``|√D2 - d| ≤ min(E/d, √E)``, plus ``ε`` of the root. The diagonal is 0 on both sides.
    Ours: within ``γ_{d+3}·d`` of ``d``.
    Sums over a cluster ``c`` (``S_c``, all terms ``≥ 0``): the distances' errors add up, and each
    side's summation adds ``γ_n`` of its sum. ``a = S_own/(n_own - 1)`` and
    ``b = min_c S_c/n_c`` (a minimum moves by at most the largest move of its arguments) then
    differ by ``A`` and ``B``, the divisions adding ``ε`` each side.
    The score: ``s`` has partial derivatives of magnitude ``≤ 1/max(a, b)`` in ``a`` and in ``b``,
    so ``|Δs| ≤ (A + B) / m`` with ``m`` the smallest ``max(a, b)`` either side can have
    (asserted positive), plus ``4ε`` for the subtraction and division on both sides.
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    inv, k, counts, onehot = clusters(labels)
    norm = np.sqrt(np.einsum("ij,ij->i", X, X))
    diff = X[:, None, :] - X[None, :, :]
    dist = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    e2 = gamma(d + 3) * (norm[:, None] + norm[None, :]) ** 2
    theirs = root_error(e2, dist)
    theirs = theirs + EPS * (dist + theirs)
    np.fill_diagonal(theirs, 0.0)
    ours = gamma(d + 3) * dist
    sums = dist @ onehot  # (n, k)
    moved = (theirs + ours) @ onehot  # the distances' errors, summed per cluster
    err = SLACK * (moved + gamma(n) * (2 * sums + moved))
    return from_sums(sums, err, counts, inv)


def from_sums(sums: np.ndarray, err: np.ndarray, counts: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """Per point, the bound on the two scores' difference from ``sums[i, c]`` (point ``i``'s sum
    of distances to cluster ``c``, a stand-in for the exact one) and ``err[i, c]`` (a bound on the
    two sides' sums' difference): ``a = S_own/(n_own - 1)`` and ``b = min_c S_c/n_c`` (a minimum
    moves by at most the largest move of its arguments) differ by ``A`` and ``B``, the divisions
    adding ``ε`` each side; ``s`` has partial derivatives of magnitude ``≤ 1/max(a, b)``, so
    ``|Δs| ≤ (A + B) / m`` with ``m`` the smallest ``max(a, b)`` either side can have (asserted
    positive), plus ``4ε`` for the subtraction and division on both sides. 0 for a point alone
    in its cluster (scikit-learn's convention, on both sides)."""
    n = len(inv)
    own = counts[inv]
    rows = np.arange(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(own > 1, sums[rows, inv] / np.maximum(own - 1, 1), 0.0)
        big_a = np.where(own > 1, err[rows, inv] / np.maximum(own - 1, 1), 0.0) + 2 * EPS * a
        per = (err + 2 * EPS * sums) / counts
    per[rows, inv] = 0.0
    big_b = per.max(axis=1)
    other = sums / counts
    other[rows, inv] = np.inf
    b = other.min(axis=1)
    m = np.maximum(a, b) - np.maximum(big_a, big_b)
    scored = own > 1
    assert (m[scored] > 0).all(), "premise: max(a, b) far above its rounding"
    out = np.zeros(n)
    out[scored] = SLACK * ((big_a + big_b)[scored] / m[scored] + 4 * EPS)
    return out


def one_hot(inv: np.ndarray, k: int) -> np.ndarray:
    """The ``(rows, k)`` matrix with a 1 at each row's cluster ``inv``: per-cluster sums are
    products with it."""
    onehot = np.zeros((len(inv), k))
    onehot[np.arange(len(inv)), inv] = 1.0
    return onehot


def clusters(labels):
    """``(inv, k, counts, onehot)``: each row's cluster (the rank of its label), the number of
    clusters, their sizes and :func:`one_hot`."""
    _, inv = np.unique(np.asarray(labels), return_inverse=True)
    k = int(inv.max()) + 1
    return inv, k, np.bincount(inv, minlength=k), one_hot(inv, k)


def root_error(e2, dist):
    """A bound on ``|√(D² + e) - D|`` for ``|e| ≤ e2`` (clipped at 0): ``min(e2/D, √e2)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dist > 0, np.minimum(e2 / dist, np.sqrt(e2)), np.sqrt(e2))


def mean_error(X: np.ndarray, inv: np.ndarray, k: int, corrected: bool) -> np.ndarray:
    """Per cluster, a bound on ``||m̂ - m||₂``, the distance of a computed cluster mean from the
    exact mean of the rows ``X`` (as given).

    A sum in any order over the division (numpy's ``mean``, or the sums of ``np.add.at``):
    within ``γ_{n+1}·mean|x_j|`` per coordinate. ``corrected`` (:mod:`streameval.batch.intrinsic`'s
    ``_means``): that mean plus the mean of the residuals ``x - m̂₀``, whose exact sum is
    ``n(m - m̂₀)``: within ``γ_{n+1}·mean|x_j - m̂₀_j|`` of that, plus ``ε`` of the residual mean and
    ``ε`` of the last addition, of ``|m_j|``. The per-coordinate bounds' Euclidean norm."""
    counts = np.bincount(inv, minlength=k).astype(np.float64)
    onehot = one_hot(inv, k)
    g = np.array([gamma(int(c) + 1) for c in counts])[:, None]
    means = (onehot.T @ X) / counts[:, None]
    first = g * (onehot.T @ np.abs(X)) / counts[:, None]
    if corrected:
        dev = (onehot.T @ np.abs(X - means[inv])) / counts[:, None] + 2 * first  # ≥ mean|x - m̂₀|
        first = g * dev + EPS * (first + 2 * (np.abs(means) + first))
    return SLACK * np.sqrt((first * first).sum(axis=1))


def sqeuclidean_sample_bound(X, labels, path: str = "batch", ops=None) -> np.ndarray:
    """Per point, a bound on ``|s_ours - s_sklearn|`` for the squared Euclidean silhouette.

    scikit-learn's (scipy's ``pdist``/``cdist`` ``sqeuclidean``): each ``Σ (x_j - y_j)²`` within
    ``γ_{d+1}`` of itself (a subtraction, a square and a sum each term; all terms ``≥ 0``), the
    diagonal exactly 0, summed per cluster by ``bincount`` (``γ_n``): within ``γ_{n+d+1}·T_c``.
    Ours (:func:`streameval.batch.silhouette_samples`): ``T_c = n_c·||x - m_c||² + S_c`` from the
    corrected means (``δ_c`` of :func:`mean_error`): ``||x - m̂||²`` moves by ``2rδ + δ²``
    (``r = ||x - m_c||``), the scatter ``Σ||y - m̂||² = S_c + n_c||m̂ - m||²`` by ``n_cδ²``, and
    the arithmetic (squares and sums ``γ_{d+1}``, the scatter's sum ``γ_{n_c}``, the product and
    the last sum ``ε`` each) adds ``γ_{n_c+d+3}`` of the terms' magnitudes.
    ``path="stream"``: the streaming view's ``final()``, ``||x - m̂_c||² + M̂2_c/n_c`` (and
    ``(n·||x - m̂||² + M̂2)/(n - 1)`` for its own cluster) from Welford's means and scatters
    (:func:`scatter_rounding.welford_errors`: ``δ_c`` and ``|M̂2_c - S_c| ≤ E2_c``): the same
    moves, ``E2_c`` for the scatter, and ``γ_{d+4}``, ``γ_3`` for the squares, the division and
    the sum."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    inv, k, counts, onehot = clusters(labels)
    diff = X[:, None, :] - X[None, :, :]
    sums = np.einsum("ijk,ijk->ij", diff, diff) @ onehot  # T, (n, k)
    theirs = gamma(n + d + 1) * sums
    means = (onehot.T @ X) / counts[:, None]
    r = np.sqrt(((X[:, None, :] - means[None, :, :]) ** 2).sum(axis=2))  # (n, k)
    scatter = onehot.T @ ((X - means[inv]) ** 2).sum(axis=1)
    if path == "stream":
        from scatter_rounding import welford_errors

        delta, e2, _ = welford_errors(X, labels, ops)
        ours = (counts * (2 * r * delta + delta**2 + gamma(d + 4) * (r + delta) ** 2) + e2
                + gamma(3) * (counts * (r + delta) ** 2 + scatter + e2))
    else:
        delta = mean_error(X, inv, k, corrected=True)
        g = np.array([gamma(int(c) + d + 3) for c in counts])
        ours = counts * (2 * r * delta + 2 * delta**2) + g * (
            counts * (r + delta) ** 2 + scatter + counts * delta**2)
    return from_sums(sums, SLACK * (theirs + ours), counts, inv)


def unit_error(d: int) -> float:
    """A bound on ``||û - u||₂`` for ``û`` the row over its computed length
    ``fl(sqrt(Σ x²))`` (scikit-learn's ``normalize``, streameval's ``unit_rows``): the length is
    within ``γ_d/2 + ε`` of itself (the square root halves the sum's relative error), each
    quotient within ``ε``."""
    eta = gamma(d) / 2 + EPS
    return SLACK * (eta / (1 - eta) + EPS * (1 + eta))


def cosine_sample_bound(X, labels, path: str = "batch", ops=None) -> np.ndarray:
    """Per point, a bound on ``|s_ours - s_sklearn|`` for the cosine silhouette (``1 - cos``).

    The exact sums ``T_c = Σ_{y in c} (1 - u_x·u_y) = n_c(1 - u_x·m_c)``, ``u`` the unit rows.
    scikit-learn's distances ``1 - û_x·û_y`` (a BLAS product, any kernel), with ``ν`` of
    :func:`unit_error` each: the product moves by ``2ν + ν²``, rounds within ``γ_d(1 + ν)²``, and
    ``1 -`` adds ``ε`` of at most ``2 + …``: an absolute ``E`` a pair (the diagonal too, zeroed
    or not), ``n_c·E`` and ``γ_n`` of the sum per cluster. Ours: ``n_c·clip(1 - û·m̂)`` with
    ``m̂`` the corrected mean of the computed unit rows, within ``ν + δ_c`` of ``m_c``
    (:func:`mean_error` on those rows, plus their own ``ν``): the product moves by
    ``ν(1 + ν + δ) + ν + δ`` and rounds within ``γ_d(1 + ν)(1 + ν + δ)``; ``1 -``, the clip and the
    product by ``n_c`` add ``5ε`` of ``2``. ``path="stream"``: the streaming view's ``final()``,
    the same from the Welford means of the unit rows (:func:`scatter_rounding.welford_errors`)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    inv, k, counts, onehot = clusters(labels)
    U = X / np.sqrt(np.einsum("ij,ij->i", X, X))[:, None]
    sums = np.clip(1.0 - U @ U.T, 0.0, 2.0) @ onehot
    nu = unit_error(d)
    pair = 2 * nu + nu * nu + gamma(d) * (1 + nu) ** 2 + 3 * EPS
    theirs = counts * pair + gamma(n) * (sums + counts * pair)
    if path == "stream":
        from scatter_rounding import welford_errors

        unit = None if ops is None else [(x / np.sqrt(x @ x), lab, w) for x, lab, w in ops]
        delta = welford_errors(U, labels, unit)[0] + nu
    else:
        delta = mean_error(U, inv, k, corrected=True) + nu
    ours = counts * (nu * (1 + nu + delta) + nu + delta + gamma(d) * (1 + nu) * (1 + nu + delta)
                     + 10 * EPS)
    return from_sums(sums, SLACK * (theirs + ours), counts, inv)


SAMPLE_BOUNDS = {"euclidean": sample_bound, "sqeuclidean": sqeuclidean_sample_bound,
                 "cosine": cosine_sample_bound}


def score_bound(X, labels, samples: np.ndarray, metric: str = "euclidean", path: str = "batch",
                ops=None) -> float:
    """A bound on the two scores' difference: the mean of the metric's sample bound, plus each
    side's rounding of the mean of its ``n`` scores (``γ_n`` of the mean of ``|s|``, ``samples``
    either side's scores; a weighted sum over the weight, for the streaming view, the same). ``path``:
    ``"batch"`` or ``"stream"`` (the squared Euclidean and cosine views' ``final()``; ``ops``
    the steps the summaries took, :func:`scatter_rounding.welford_errors`)."""
    n = len(samples)
    bound = SAMPLE_BOUNDS[metric](X, labels) if metric == "euclidean" else SAMPLE_BOUNDS[metric](X, labels, path, ops)
    return float(bound.mean() + 2 * gamma(n) * np.abs(samples).mean() * SLACK)
