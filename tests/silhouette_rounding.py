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
    _, inv = np.unique(np.asarray(labels), return_inverse=True)
    k = int(inv.max()) + 1
    counts = np.bincount(inv, minlength=k)
    onehot = np.zeros((n, k))
    onehot[np.arange(n), inv] = 1.0
    norm = np.sqrt(np.einsum("ij,ij->i", X, X))
    diff = X[:, None, :] - X[None, :, :]
    dist = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    # the bound's own arithmetic rounds too: a relative 1e-12 of slack covers it (and the
    # distances above standing in for the exact ones, a relative γ_{d+3} away)
    slack = 1.0 + 1e-12
    e2 = gamma(d + 3) * (norm[:, None] + norm[None, :]) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        theirs = np.where(dist > 0, np.minimum(e2 / dist, np.sqrt(e2)), np.sqrt(e2))
    theirs = theirs + EPS * (dist + theirs)
    np.fill_diagonal(theirs, 0.0)
    ours = gamma(d + 3) * dist
    sums = dist @ onehot  # (n, k)
    moved = (theirs + ours) @ onehot  # the distances' errors, summed per cluster
    err = slack * (moved + gamma(n) * (2 * sums + moved))
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
    out[scored] = slack * ((big_a + big_b)[scored] / m[scored] + 4 * EPS)
    return out


def score_bound(X, labels, samples: np.ndarray) -> float:
    """A bound on the two scores' difference: the mean of :func:`sample_bound`, plus each side's
    rounding of the mean of its ``n`` scores (``γ_n`` of the mean of ``|s|``, ``samples`` either
    side's scores)."""
    n = len(samples)
    return float(sample_bound(X, labels).mean() + 2 * gamma(n) * np.abs(samples).mean() * (1 + 1e-12))
