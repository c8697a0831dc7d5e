"""Shared by test_intrinsic (in process) and test_dask (on Dask): data sets with the intrinsic
edge cases, every registered view, the streaming reference and the comparison.

The streaming reference feeds the rows one by one through an IntrinsicEvaluator; an engine, which
sees every point, is compared with each summary view's ``get()`` and with each silhouette's exact
``final()`` (its ``get()`` is the prequential value, which only a stream has).
"""

import math

import numpy as np
import pytest

import streameval as se
from streameval.intrinsic import INTRINSIC_REGISTRY


def views() -> dict:
    """Every registered view under its name, plus Alink's singleton convention under its own key."""
    out = {name: cls() for name, cls in INTRINSIC_REGISTRY.items()}
    out["AlinkSqEuclideanSilhouette"] = se.SqEuclideanSilhouette(singleton=1.0)
    out["AlinkCosineSilhouette"] = se.CosineSilhouette(singleton=1.0)
    return out


def case(name: str, seed: int = 0):
    """``(X, y, w)``: vectors, predicted clusters, integer weights."""
    rng = np.random.default_rng(seed)
    if name == "general":
        y = rng.integers(0, 6, 400)
        X = rng.normal(size=(400, 3)) + y[:, None] * [0.5, 1.0, -0.3]
        return X, y, rng.integers(1, 4, 400)
    if name == "empty":
        return np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if name == "one_cluster":
        return rng.normal(size=(50, 2)) + 3.0, np.zeros(50, dtype=np.int64), rng.integers(1, 3, 50)
    if name == "singletons":  # three clusters, five alone (w = 1), one alone with w = 2
        y = np.concatenate([rng.integers(0, 3, 60), np.arange(10, 16)])
        X = rng.normal(size=(66, 2)) + y[:, None] * 0.7
        w = np.ones(66, dtype=np.int64)
        w[-1] = 2
        return X, y, w
    if name == "zero_scatter":  # every cluster one repeated point: SSW = 0, CH = 1 by convention
        y = np.repeat([0, 1, 2], 5)
        X = np.array([[1.0, 2.0], [4.0, -1.0], [0.5, 7.0]])[y]
        return X, y, np.ones(15, dtype=np.int64)
    if name == "large_k":  # k > 2,000: the engines once left Separation out above 2,000
        y = np.concatenate([np.arange(2100), rng.integers(0, 2100, 900)])
        X = rng.normal(size=(3000, 2)) + np.stack([y % 50, y // 50], axis=1) * 3.0
        return X, y, np.ones(3000, dtype=np.int64)
    raise ValueError(name)


CASES = ["general", "empty", "one_cluster", "singletons", "zero_scatter"]


def streamed(X, y, w) -> dict:
    """The streaming views' values: ``get()``, and ``final()`` for the silhouettes."""
    ev = se.IntrinsicEvaluator(views())
    for x, p, wi in zip(X, y.tolist(), w.tolist()):
        ev.update(x, p, wi)
    return {name: (m.final() if m.needs_points else m.get()) for name, m in ev.metrics.items()}


def streamed_summaries(X, y, w) -> dict:
    """The streaming path's summaries per space (Welford, one row at a time)."""
    out = {space: se.ClusterSummaries(space=space) for space in ("euclidean", "cosine")}
    for x, p, wi in zip(X, y.tolist(), w.tolist()):
        for s in out.values():
            s.update(x, p, wi)
    return out


EPS = 2.0**-53


def davies_bouldin_perturbation(s, t) -> float:
    """First-order bound on the relative difference of the Davies-Bouldin index (RMS in the
    Euclidean space, Alink's in the cosine space) between summaries ``s`` and ``t`` of the same
    clusters, from how far their means and scatters are apart, plus the computation's own
    rounding.

    ``R_ij = (S_i + S_j)/d_ij`` moves by a relative ``(|ΔS_i| + |ΔS_j|)/(S_i + S_j) + |Δd_ij|/d_ij``;
    a mean moved by ``Δm`` moves ``d_ij = ||m_i - m_j||`` by a relative ``(|Δm_i| + |Δm_j|)/d_ij``,
    and the cosine distance ``θ²/2`` by ``2(Δθ_i + Δθ_j)/θ_ij`` (``Δθ`` the angle a mean turned).
    A row's maximum moves by at most its largest entry's move, and the index (their mean) by the
    mean of those. The computation adds ``(2d + 6)·ε`` per distance (:mod:`streameval._unit`; the
    Euclidean one less), a few ulps for ``S`` and the division: ``4(d + 4)·ε`` in all. Near-parallel
    cluster means make ``d_ij`` small and this bound large: the tolerance of :func:`assert_same` is
    justified where this bound is below it. O(k²·d) memory and time.
    """
    labels = s.labels()
    parts = []
    for summ in (s, t):
        counts, means, m2 = summ.slot_arrays()
        slots = summ.slots(labels)
        c, m, q = counts[slots].astype(np.float64), means[slots], m2[slots]
        if s.space == "cosine":
            r = np.sqrt(np.einsum("ij,ij->i", m, m))
            S, pos = (q / c) / (1.0 + r), m / r[:, None]
        else:
            S, pos = np.sqrt(q / c), m
        parts.append((S, pos))
    (S, pos), (S2, pos2) = parts
    moved = np.sqrt(((pos - pos2) ** 2).sum(axis=1))  # |Δm|, or the angle Δθ a unit mean turned
    dS = np.abs(S - S2)
    gap = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(axis=-1))  # d_ij, or θ_ij
    np.fill_diagonal(gap, np.inf)
    dist = 0.5 * gap**2 if s.space == "cosine" else gap
    factor = 2.0 if s.space == "cosine" else 1.0
    Ssum = S[:, None] + S[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = (np.where(Ssum > 0, (dS[:, None] + dS[None, :]) / Ssum, 0.0)
                    + factor * (moved[:, None] + moved[None, :]) / gap + 4 * (pos.shape[1] + 4) * EPS)
        R = np.where(dist > 0, Ssum / dist, 0.0)
    index = R.max(axis=1).mean()
    return float((R * relative).max(axis=1).mean() / index) if index > 0 else 0.0


def assert_same(engine: dict, ref: dict) -> None:
    """Same keys in the same order; NaN exactly where the reference is NaN; values equal up to
    the rounding of two summation orders.

    The tolerance, ``rel = 1e-9``, from an error analysis. Both paths run the same ``value`` code
    on summaries that differ only by rounding: the stream's Welford means and scatters against the
    engines' two-pass (or partial-sum) ones, a few ulps per cluster of these sizes (relative
    ``~b·ε``, ``b ≤ 30`` members, ``ε = 2⁻⁵³``: ≤ 10⁻¹⁴). Each view is a sum or ratio of
    non-negative terms of those (SSW, SSB, CH, compactness, separation: condition number O(1), so
    ≤ 10⁻¹³ apart), except Davies-Bouldin, whose ratios ``(S_i + S_j)/d_ij`` amplify the means'
    rounding by ``|m|/d_ij`` (Euclidean) or ``2/θ_ij`` (cosine: the distance is ``θ²/2``) — up to
    10⁷ for the large-k case's means 2.7·10⁻⁷ rad apart. The tests bound that amplification on
    their data with :func:`davies_bouldin_perturbation` and check it is below this tolerance.
    The silhouettes are sums of per-point ratios of the same dissimilarities: condition O(1)
    unless a point is equidistant from two clusters, which a score's ``max(a, b)`` keeps bounded.
    A computation that cancels (``1 - u·v`` for the cosine distance: relative ``~ε/θ²``, 6.7·10⁻⁶
    there) would break the bound; the tolerance is not there to absorb it.
    """
    assert list(engine) == list(ref)
    for key, want in ref.items():
        got = engine[key]
        assert isinstance(got, float), (key, got)
        if math.isnan(want):
            assert math.isnan(got), (key, got)
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12), key
