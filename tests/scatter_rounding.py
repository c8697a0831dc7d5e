"""Rounding bounds for tests that compare the Calinski-Harabasz index (streameval's batch function,
its streaming summaries) and the Davies-Bouldin index with scikit-learn's, computed from the test's
points at run time: how far each computation may be from the exact value, summed.

The scatters are stationary in the means (``Σ||x - m̂||² = SSW + n||m̂ - m||²``: a mean's error
enters squared), SSB and the centroid distances are not (``2||m_c - g||·δ`` to first order), and
scikit-learn's Euclidean distances expand ``||x||² - 2x·y + ||y||²``, whose error is relative to
``(||x|| + ||y||)²``: the bounds follow each path's operations (a sum of ``m`` terms in any order,
so any SIMD or BLAS kernel: ``γ_m`` of the sum of magnitudes), with the means' errors from
:func:`silhouette_rounding.mean_error` or, for the streaming summaries, from Welford's recurrence
traced point by point (:func:`welford_errors`).
"""

from __future__ import annotations

import numpy as np
from silhouette_rounding import EPS, SLACK, clusters, gamma, mean_error, root_error


def _groups(X, labels):
    X = np.asarray(X, dtype=np.float64)
    inv, k, counts, onehot = clusters(labels)
    counts = counts.astype(np.float64)
    means = (onehot.T @ X) / counts[:, None]
    return X, inv, k, counts, means


def _parts(X, inv, k, counts, means):
    """Stand-ins for the exact ``S_c = Σ||x - m_c||²`` and ``q_c = ||m_c - g||`` (two passes)."""
    g = X.mean(axis=0)
    S = np.bincount(inv, weights=((X - means[inv]) ** 2).sum(axis=1), minlength=k)
    q = np.sqrt(((means - g) ** 2).sum(axis=1))
    return S, q


def welford_errors(X, labels, ops=None):
    """``(δ_c, E2_c, δ_g)``: bounds on the streaming summaries' errors: each cluster mean's
    ``||m̂ - m||``, each scatter's ``|M̂2 - M2|``, the global mean's, for the clusters of
    ``labels`` (the rows ``X`` the summaries hold at the end). ``ops``: the ``(x, label, w)``
    steps as applied (``w < 0`` a revert); by default one ``update`` a row of ``X``, in order.
    Welford's step (``src/summaries.rs``) ``m' = m + (x - m)·fl(w/n')``,
    ``M2' = M2 + fl(w·n/n')·Σ(x_j - m_j)²``: per coordinate the mean's error is multiplied by
    ``|1 - w/n'| = n/n'`` (a contraction for an update, more than 1 for a revert) and gains
    ``γ_3|x_j - m̂_j|·|w|/n'`` (subtraction, factor, product) and ``ε|m̂'_j|`` (the addition); the
    scatter's gains ``|w·n/n'|·(2rδ + δ² + γ_{d+4}(r + δ)²)`` (the old mean's error,
    ``r = ||x - m||``; the squares and their sum, the factor, the product) and ``ε|M̂2'|``; a
    cluster of one element has scatter 0 exactly (the step clamps it), an emptied one starts
    anew. O(steps·d) in Python."""
    X = np.asarray(X, dtype=np.float64)
    uniq, inv = np.unique(np.asarray(labels), return_inverse=True)
    k = len(uniq)
    d = X.shape[1]
    if ops is None:
        ops = [(x, c, 1) for x, c in zip(X, inv.tolist())]
    else:
        slot = {v: i for i, v in enumerate(uniq.tolist())}
        ops = [(np.asarray(x, dtype=np.float64), slot.setdefault(lab, len(slot)), w) for x, lab, w in ops]
    width = max(k, 1 + max((c for _, c, _ in ops), default=0)) + 1
    g3 = gamma(3)
    gd = gamma(d + 4)
    mean = np.zeros((width, d))  # the last row: the global summary
    err = np.zeros((width, d))
    m2 = np.zeros(width)
    e2 = np.zeros(width)
    cnt = np.zeros(width)
    for x, c, w in ops:
        for s in (c, width - 1):
            n_old = cnt[s]
            cnt[s] += w
            if cnt[s] == 0:  # emptied: a new cluster, should one come
                mean[s] = err[s] = 0.0
                m2[s] = e2[s] = 0.0
                continue
            f = w / cnt[s]
            delta = x - mean[s]
            r = np.sqrt(delta @ delta)
            dl = np.sqrt(err[s] @ err[s])
            wn = w * n_old / cnt[s]
            m2[s] += wn * (delta @ delta)
            e2[s] += abs(wn) * (2 * (r + dl) * dl + dl * dl + gd * (r + 2 * dl) ** 2) + EPS * abs(m2[s])
            if cnt[s] == 1:
                m2[s] = e2[s] = 0.0
            mean[s] += delta * f
            err[s] = err[s] * abs(1 - f) + g3 * (np.abs(delta) + err[s]) * abs(f) + EPS * np.abs(mean[s])
    delta_c = SLACK * np.sqrt((err[:k] ** 2).sum(axis=1))
    return delta_c, SLACK * e2[:k], float(SLACK * np.sqrt(err[-1] @ err[-1]))


def _ssb_error(counts, q, eps_c, rel):
    """``Σ n_c·||m̂_c - ĝ||²`` against ``Σ n_c q_c²``: each square moves by ``2qε + ε²``
    (``ε = δ_c + δ_g``), and the arithmetic adds ``rel`` of ``Σ n_c(q + ε)²``."""
    return float((counts * (2 * q * eps_c + eps_c**2)).sum() + rel * (counts * (q + eps_c) ** 2).sum())


def _ratio_bound(ssb, e_ssb, ssw, e_ssw) -> float:
    """Relative bound on ``ssb·(n-k)/(ssw·(k-1))`` from its parts' bounds: two products and a
    quotient (``γ_3``)."""
    assert ssw > e_ssw, "premise: SSW far above its rounding"
    return float((1 + e_ssb / ssb) * (1 + gamma(3)) / (1 - e_ssw / ssw) - 1)


def ch_relative_bounds(X, labels) -> dict:
    """``{path: relative bound on |CH_path - CH|}`` for ``"sklearn"``, ``"batch"``, ``"stream"``.

    scikit-learn: uncorrected means (``np.mean``), ``Σ (x - m̂)²`` over the ``n_c·d`` elements
    (``γ_{n_c d+2}``), ``n_c·Σ(m̂_c - ĝ)²`` (``γ_{d+3}``), each summed over the ``k`` clusters
    (``γ_k``). Batch (:mod:`streameval.batch.intrinsic`): corrected means, distances' square roots
    squared again and summed by a dot product (``γ_{n+d+3}``), SSB's the same way
    (``γ_{k+d+4}``). Stream: :func:`welford_errors`, SSW their sum (``γ_k``), SSB from the anchored
    sums (``2(d+2)ε`` relative by ``SsbAnchor``'s analysis, plus ``γ_{k+d+3}``)."""
    X, inv, k, counts, means = _groups(X, labels)
    n, d = X.shape
    S, q = _parts(X, inv, k, counts, means)
    ssw, ssb = float(S.sum()), float((counts * q * q).sum())
    zeros = np.zeros(n, dtype=np.intp)
    out = {}
    # scikit-learn
    dc = mean_error(X, inv, k, corrected=False)
    dg = float(mean_error(X, zeros, 1, corrected=False)[0])
    gc = np.array([gamma(int(c) * d + 2) for c in counts])
    intra = (counts * dc**2 + gc * (S + counts * dc**2)).sum()
    e_ssw = intra + gamma(k) * (ssw + intra)
    e_ssb = _ssb_error(counts, q, dc + dg, gamma(d + 3) + gamma(k) * (1 + gamma(d + 3)))
    out["sklearn"] = _ratio_bound(ssb, e_ssb, ssw, e_ssw)
    # batch
    dc = mean_error(X, inv, k, corrected=True)
    moved = float((counts * dc**2).sum())
    e_ssw = moved + gamma(n + d + 3) * (ssw + moved)
    e_ssb = _ssb_error(counts, q, dc + dg, gamma(k + d + 4))
    out["batch"] = _ratio_bound(ssb, e_ssb, ssw, e_ssw)
    # stream
    dc, e2, dg = welford_errors(X, labels)
    e_ssw = float(e2.sum()) + gamma(k) * (ssw + float(e2.sum()))
    e_ssb = _ssb_error(counts, q, dc + dg, 2 * (d + 2) * EPS + gamma(k + d + 3))
    out["stream"] = _ratio_bound(ssb, e_ssb, ssw, e_ssw)
    return {key: SLACK * v for key, v in out.items()}


def davies_bouldin_bound(X, labels) -> float:
    """A bound on ``|DB_batch - DB_sklearn|`` (Euclidean).

    ``R_ij = (S_i + S_j)/D_ij``, ``S_i`` the mean distance of cluster ``i``'s points to its mean,
    ``D_ij`` the distance between the means. scikit-learn: uncorrected means (``δ``); the
    distances by the expansion, within ``γ_{d+3}(||x|| + ||m̂||)²`` squared (so ``min(E/D, √E)``
    unsquared, plus ``ε``) and ``δ`` from the mean's error; ``S_i`` their average (``γ_{n_i+1}``).
    Ours: corrected means (``δ``), distances direct (``γ_{d+2}`` relative, plus ``δ``), averaged
    by ``bincount`` (``γ_{n_i+1}``); ``D_ij`` within ``δ_i + δ_j`` plus ``γ_{d+2}``. Each
    ``R_ij`` then moves by at most ``(ΔS_i + ΔS_j + R·ΔD)/(D - ΔD)`` (plus ``2ε`` of the sum and
    quotient), a row's maximum by its largest move, the mean by the mean of those plus ``γ_k``."""
    X, inv, k, counts, means = _groups(X, labels)
    n, d = X.shape
    r = np.sqrt(((X - means[inv]) ** 2).sum(axis=1))  # distance to the own mean
    S = np.bincount(inv, weights=r, minlength=k) / counts
    D = np.sqrt(((means[:, None, :] - means[None, :, :]) ** 2).sum(axis=2))
    norm_x = np.sqrt((X * X).sum(axis=1))
    norm_m = np.sqrt((means * means).sum(axis=1))
    gi = np.array([gamma(int(c) + 1) for c in counts])
    # scikit-learn
    dk = mean_error(X, inv, k, corrected=False)
    e2 = gamma(d + 3) * (norm_x + norm_m[inv] + dk[inv]) ** 2
    per = root_error(e2, r) + dk[inv] + EPS * (r + dk[inv])
    dS_sk = np.bincount(inv, weights=per, minlength=k) / counts + gi * (S + np.bincount(inv, weights=per, minlength=k) / counts)
    e2 = gamma(d + 3) * (norm_m[:, None] + norm_m[None, :] + dk[:, None] + dk[None, :]) ** 2
    dD_sk = root_error(e2, D) + dk[:, None] + dk[None, :] + EPS * D
    # ours
    dk = mean_error(X, inv, k, corrected=True)
    per = gamma(d + 2) * (r + dk[inv]) + dk[inv]
    dS_ours = np.bincount(inv, weights=per, minlength=k) / counts + gi * (S + np.bincount(inv, weights=per, minlength=k) / counts)
    dD_ours = dk[:, None] + dk[None, :] + gamma(d + 2) * (D + dk[:, None] + dk[None, :])
    dS, dD = dS_sk + dS_ours, dD_sk + dD_ours
    off = ~np.eye(k, dtype=bool)
    assert (D[off] > dD[off]).all(), "premise: the cluster means far apart against their rounding"
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.where(off, (S[:, None] + S[None, :]) / D, 0.0)
        move = np.where(off, (dS[:, None] + dS[None, :] + R * dD) / (D - dD) + 2 * EPS * R, 0.0)
    index = R.max(axis=1).mean()
    return float(SLACK * (move.max(axis=1).mean() + 2 * gamma(k) * (index + move.max(axis=1).mean())))


def ch_gap_bound(X, labels, path: str, sklearn_value: float) -> float:
    """A bound on ``|CH_path - CH_sklearn|``: ``CH·(r_path + r_sklearn)`` with the exact ``CH`` at
    most ``CH_sklearn / (1 - r_sklearn)`` (:func:`ch_relative_bounds`)."""
    r = ch_relative_bounds(X, labels)
    return float(abs(sklearn_value) * (r[path] + r["sklearn"]) / (1 - r["sklearn"]))
