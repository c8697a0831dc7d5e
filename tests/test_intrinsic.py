"""Intrinsic metric views, their batch twins and the Alink-style report.

Oracles: Alink's documented example (exact values derived below), scikit-learn where it defines the
same metric, and brute force over pairs of points (kept here, apart from both implementations).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import scatter_rounding
import silhouette_rounding
from hypothesis import example, given
from hypothesis import strategies as st
from intrinsic_parity import (
    CASES,
    assert_same,
    case,
    davies_bouldin_perturbation,
    streamed,
    streamed_summaries,
    views,
)
from sklearn import metrics as skm

import streameval as se
from streameval import batch
from streameval.distributed import intrinsic_values, plan_intrinsic
from streameval.errors import InvalidVectorError, UnknownElementError

# -- Alink's reference example ----------------------------------------------------------------------
ALINK_X = np.array([[0, 0, 0], [0.1, 0.1, 0.1], [0.2, 0.2, 0.2], [9, 9, 9], [9.1, 9.1, 9.1], [9.2, 9.2, 9.2]])
ALINK_Y = [0, 0, 0, 1, 1, 1]
ALINK_T = ["a", "a", "a", "b", "b", "b"]
SQRT3 = math.sqrt(3)


def alink_silhouette_exact() -> float:
    """Squared distances along (1,1,1) are 3·Δ²; per point a = mean to its 2 mates, b = mean to
    the 3 others. By symmetry the 6 points give 3 distinct scores, each twice."""
    pts = [Fraction(v, 10) for v in (0, 1, 2, 90, 91, 92)]
    total = Fraction(0)
    for i, x in enumerate(pts):
        own = [y for j, y in enumerate(pts) if j != i and (j < 3) == (i < 3)]
        other = [y for j, y in enumerate(pts) if (j < 3) != (i < 3)]
        a = sum(3 * (x - y) ** 2 for y in own) / 2
        b = sum(3 * (x - y) ** 2 for y in other) / 3
        total += 1 - a / b
    return float(total / 6)


ALINK_EXACT = {
    "calinski_harabasz": 12150.0,  # 364.5·(6-2) / (0.12·(2-1))
    "compactness": 0.2 * SQRT3 / 3,  # per cluster (0.1√3 + 0 + 0.1√3)/3
    "davies_bouldin": 0.4 / 27,  # (2·0.2√3/3) / (9√3)
    "separation": 9 * SQRT3,
    "ssb": 364.5,  # 2 clusters · 3 points · 3·4.5²
    "ssw": 0.12,  # 2 clusters · 3·(0.1² + 0 + 0.1²)
    "silhouette": alink_silhouette_exact(),
}
ALINK_PRINTED = {  # Alink's printed (rounded) values
    "calinski_harabasz": "12150.0",
    "compactness": "0.11547",
    "davies_bouldin": "0.014815",
    "separation": "15.5885",
    "ssb": "364.5",
    "ssw": "0.12",
    "silhouette": "0.999753",
}


def test_alink_exact_values_round_to_printed():
    for key, printed in ALINK_PRINTED.items():
        decimals = len(printed.split(".")[1])
        assert f"{round(ALINK_EXACT[key], decimals)}" == printed, key


@pytest.mark.parametrize("streaming", [False, True])
def test_alink_example_report(streaming):
    r = se.cluster_report(ALINK_X, ALINK_Y, labels_true=ALINK_T, streaming=streaming)
    for key in ("ssw", "ssb", "calinski_harabasz", "separation", "silhouette"):
        assert r[key] == pytest.approx(ALINK_EXACT[key], rel=1e-9, abs=1e-12), key
    if not streaming:  # Alink's mean-distance compactness and DB: batch only (Euclidean)
        assert r["compactness"] == pytest.approx(ALINK_EXACT["compactness"], rel=1e-9)
        assert r["davies_bouldin"] == pytest.approx(ALINK_EXACT["davies_bouldin"], rel=1e-9)
    else:
        assert "compactness" not in r and "davies_bouldin" not in r
        # the RMS variants under their own names: sqrt(0.02·3/3) per cluster
        assert r["compactness_rms"] == pytest.approx(math.sqrt(0.02), rel=1e-9)
    for key in ("purity", "nmi", "ari", "ri"):
        assert r[key] == 1.0
    assert (r["count"], r["k"], r["cluster_array"], r["count_array"].tolist()) == (6, 2, (0, 1), [3, 3])
    assert r["count_array"].dtype == np.int64


def test_alink_example_views_and_batch_twins():
    views = {
        "ssw": se.SSW(), "ssb": se.SSB(), "calinski_harabasz": se.CalinskiHarabasz(),
        "separation": se.Separation(), "silhouette": se.SqEuclideanSilhouette(),
    }
    ev = se.IntrinsicEvaluator(views)
    for x, p in zip(ALINK_X, ALINK_Y):
        ev.update(x, p)
    got = ev.get()
    got["silhouette"] = ev["silhouette"].final()
    for key, v in got.items():
        assert v == pytest.approx(ALINK_EXACT[key], rel=1e-9), key
    twins = {
        "ssw": batch.ssw_score, "ssb": batch.ssb_score, "calinski_harabasz": batch.calinski_harabasz_score,
        "separation": batch.separation_score, "compactness": batch.compactness_score,
        "davies_bouldin": batch.davies_bouldin_score,
        "silhouette": lambda X, y: batch.silhouette_score(X, y, metric="sqeuclidean"),  # Alink's
    }
    for key, f in twins.items():
        assert f(ALINK_X, ALINK_Y) == pytest.approx(ALINK_EXACT[key], rel=1e-9), key


# -- data --------------------------------------------------------------------------------------------
def blobs(seed, n=60, k=4, d=3, spread=1.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=4.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    y[:k] = np.arange(k)  # every cluster non-empty
    rng.shuffle(y)
    return centers[y] + spread * rng.normal(size=(n, d)), y


def stream(metric, X, y):
    for x, p in zip(X, y):
        metric.update(x, int(p))
    return metric


# -- scikit-learn as oracle --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_sklearn_oracle(seed):
    X, y = blobs(seed)
    # each against scikit-learn within the bound of both computations' rounding on these points
    # (scatter_rounding: the means' errors, Welford's traced, the expansions' cancellation)
    ref = skm.calinski_harabasz_score(X, y)
    ch = stream(se.CalinskiHarabasz(), X, y).get()
    assert abs(ch - ref) <= scatter_rounding.ch_gap_bound(X, y, "stream", ref)
    assert abs(batch.calinski_harabasz_score(X, y) - ref) <= scatter_rounding.ch_gap_bound(X, y, "batch", ref)
    db = skm.davies_bouldin_score(X, y)
    assert abs(batch.davies_bouldin_score(X, y) - db) <= scatter_rounding.davies_bouldin_bound(X, y)
    for metric, view in (("euclidean", None), ("sqeuclidean", se.SqEuclideanSilhouette),
                         ("cosine", se.CosineSilhouette)):
        ref = skm.silhouette_score(X, y, metric=metric)
        # against scikit-learn's within the bound of both computations' rounding on these points
        # (silhouette_rounding: its distances; ours from the means, Welford's in a stream)
        ours = batch.silhouette_samples(X, y, metric=metric)
        if view is not None:  # the streaming views are named for the distance they use
            got = stream(view(), X, y).final()
            assert abs(got - ref) <= silhouette_rounding.score_bound(X, y, ours, metric, "stream"), metric
        gap = np.abs(ours - skm.silhouette_samples(X, y, metric=metric))
        assert (gap <= silhouette_rounding.SAMPLE_BOUNDS[metric](X, y)).all(), metric
        score = batch.silhouette_score(X, y, metric=metric)
        assert abs(score - ref) <= silhouette_rounding.score_bound(X, y, ours, metric), metric


def test_batch_silhouette_defaults_to_sklearn_euclidean():
    # scikit-learn's default metric is the (unsquared) Euclidean distance, and so is batch's
    X, y = blobs(7, n=80)
    ours = batch.silhouette_samples(X, y)
    # scikit-learn's distances expand ||x||² - 2x·y + ||y||² with BLAS: apart from ours by the
    # bound of silhouette_rounding on these points, whatever kernel this CPU's BLAS takes
    assert (np.abs(ours - skm.silhouette_samples(X, y)) <= silhouette_rounding.sample_bound(X, y)).all()
    score = batch.silhouette_score(X, y)
    assert abs(score - skm.silhouette_score(X, y)) <= silhouette_rounding.score_bound(X, y, ours)
    assert score != pytest.approx(skm.silhouette_score(X, y, metric="sqeuclidean"))
    with pytest.raises(ValueError, match="metric must be one of"):
        batch.silhouette_score(X, y, metric="manhattan")


def test_singleton_convention_both_ways():
    X = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    y = [0, 0, 1]
    sk = skm.silhouette_samples(X, y, metric="sqeuclidean")
    assert sk[2] == 0.0  # scikit-learn: a point alone in its cluster scores 0
    for singleton in (0.0, 1.0):
        want = (sk[0] + sk[1] + singleton) / 3
        assert stream(se.SqEuclideanSilhouette(singleton=singleton), X, y).final() == pytest.approx(want, rel=1e-12)
        assert batch.silhouette_score(X, y, "sqeuclidean", singleton) == pytest.approx(want, rel=1e-12)
    assert se.SqEuclideanSilhouette(singleton=1.0).name == "SqEuclideanSilhouette(singleton=1.0)"
    with pytest.raises(ValueError, match="singleton"):
        se.SqEuclideanSilhouette(singleton=2)


# -- brute-force oracles for the silhouettes -----------------------------------------------------
def brute_scores(X, y, metric, singleton, upto=None):
    """Silhouette of point ``upto`` (or all points) among X[:upto+1], straight from pairs."""
    n = len(X)

    def dist(i, j):
        if metric == "sqeuclidean":
            return float(((X[i] - X[j]) ** 2).sum())
        a, b = X[i], X[j]
        return max(0.0, 1.0 - float(a @ b) / math.sqrt(float(a @ a) * float(b @ b)))

    def score(i, members):
        labels = {y[j] for j in members}
        if len(labels) < 2:
            return None
        own = [j for j in members if y[j] == y[i] and j != i]
        if not own:
            return singleton
        a = sum(dist(i, j) for j in own) / len(own)
        b = min(
            sum(dist(i, j) for j in members if y[j] == c) / sum(1 for j in members if y[j] == c)
            for c in labels if c != y[i]
        )
        return (b - a) / max(a, b) if max(a, b) > 0 else 0.0

    if upto is None:
        return [score(i, range(n)) for i in range(n)]
    return score(upto, range(upto + 1))


@pytest.mark.parametrize("view, metric", [(se.SqEuclideanSilhouette, "sqeuclidean"), (se.CosineSilhouette, "cosine")])
@pytest.mark.parametrize("singleton", [0.0, 1.0])
def test_silhouettes_equal_brute_force_at_every_prefix(view, metric, singleton):
    X, y = blobs(11, n=30, k=3, spread=2.0)
    m = view(singleton=singleton)
    scored = []
    for i in range(len(X)):
        m.update(X[i], int(y[i]))
        s = brute_scores(X, y, metric, singleton, upto=i)
        if s is not None:
            scored.append(s)
        want = sum(scored) / len(scored) if scored else math.nan
        assert m.get() == pytest.approx(want, rel=1e-9, abs=1e-12, nan_ok=True)
        pre = batch.prequential_silhouette_score(X[: i + 1], y[: i + 1], metric, singleton)
        assert pre == pytest.approx(want, rel=1e-9, abs=1e-12, nan_ok=True)
        if len(set(y[: i + 1].tolist())) >= 2:
            final = brute_scores(X[: i + 1], y[: i + 1], metric, singleton)
            assert m.final() == pytest.approx(np.mean(final), rel=1e-9, abs=1e-12)


def test_silhouette_revert_restores_value_bit_for_bit():
    X, y = blobs(5, n=40)
    m = se.SqEuclideanSilhouette()
    stream(m, X[:20], y[:20])
    before = (m.get(), m._sum, m._scored)
    stream(m, X[20:], y[20:])
    for x, p in zip(X[20:][::-1], y[20:][::-1]):
        m.revert(x, int(p))
    assert (m.get(), m._sum, m._scored) == before
    with pytest.raises(UnknownElementError, match="holds no such update"):
        m.revert(X[25], int(y[25]))  # already reverted: that vector is not in cluster y[25]
    assert (m.get(), m._sum, m._scored) == before and m.summaries.n == 20
    # the stored points follow the reverts: the final pass is the batch value of the 20 left
    # within both computations' rounding (silhouette_rounding, Welford's errors traced through
    # the 40 updates and 20 reverts the summaries took)
    ops = [(x, int(p), 1) for x, p in zip(X, y)] + [(x, int(p), -1) for x, p in zip(X[20:][::-1], y[20:][::-1])]
    ref = skm.silhouette_score(X[:20], y[:20], metric="sqeuclidean")
    ours = batch.silhouette_samples(X[:20], y[:20], metric="sqeuclidean")
    assert abs(m.final() - ref) <= silhouette_rounding.score_bound(X[:20], y[:20], ours, "sqeuclidean", "stream", ops)


def test_weights_equal_repeated_updates():
    X, y = blobs(8, n=20)
    ws = np.random.default_rng(8).integers(1, 4, size=20)
    a = se.IntrinsicEvaluator([se.SSW(), se.CalinskiHarabasz(), se.RMSDaviesBouldin(), se.CosineCompactness()])
    b = se.IntrinsicEvaluator([se.SSW(), se.CalinskiHarabasz(), se.RMSDaviesBouldin(), se.CosineCompactness()])
    for x, p, w in zip(X, y, ws):
        a.update(x, int(p), w=int(w))
        for _ in range(w):
            b.update(x, int(p))
    for key, v in a.get().items():
        assert v == pytest.approx(b.get()[key], rel=1e-9)
    Xr, yr = np.repeat(X, ws, axis=0), np.repeat(y, ws)
    sil = se.SqEuclideanSilhouette()
    for x, p, w in zip(X, y, ws):
        sil.update(x, int(p), w=int(w))
    # within both computations' rounding on the repeated points (Welford's weighted steps traced)
    ref = skm.silhouette_score(Xr, yr, metric="sqeuclidean")
    ours = batch.silhouette_samples(Xr, yr, metric="sqeuclidean")
    ops = [(x, int(p), int(w)) for x, p, w in zip(X, y, ws)]
    assert abs(sil.final() - ref) <= silhouette_rounding.score_bound(Xr, yr, ours, "sqeuclidean", "stream", ops)


# -- streaming == batch at every prefix --------------------------------------------------------------
TWINS = [
    (se.SSW, lambda X, y: batch.ssw_score(X, y)),
    (se.SSB, lambda X, y: batch.ssb_score(X, y)),
    (se.CalinskiHarabasz, lambda X, y: batch.calinski_harabasz_score(X, y)),
    (se.Separation, lambda X, y: batch.separation_score(X, y)),
    (se.RMSCompactness, batch.rms_compactness_score),
    (se.RMSDaviesBouldin, batch.rms_davies_bouldin_score),
    (se.CosineCompactness, lambda X, y: batch.compactness_score(X, y, distance="cosine")),
    (se.CosineSSB, lambda X, y: batch.ssb_score(X, y, distance="cosine")),
    (se.CosineSeparation, lambda X, y: batch.separation_score(X, y, distance="cosine")),
    (se.CosineDaviesBouldin, lambda X, y: batch.davies_bouldin_score(X, y, distance="cosine")),
]


def test_registry_is_covered_by_twins():
    covered = {cls.__name__ for cls, _ in TWINS} | {"SqEuclideanSilhouette", "CosineSilhouette"}
    assert set(se.INTRINSIC_REGISTRY) == covered


vec = st.lists(st.floats(-50, 50, allow_nan=False, allow_infinity=False), min_size=2, max_size=2)


def _directions_defined(X: np.ndarray, y: list) -> bool:
    """Whether every mean of unit vectors (each cluster's and the global one) has norm ``≥ 10⁻³``:
    where the cosine views are a well-conditioned function of the points.

    The cosine views depend on the means' directions only, and a mean of unit vectors can cancel
    to (nearly) 0, where its direction is decided by rounding: an unseeded run drew six unit vectors
    of one cluster summing to 0, whose SSB is 0 on one path (two equal means a few ulps from 0,
    distance 0) and 6 on the other (exact zero means, distance 1 by convention), and one drew
    ``(1, 4.7·10⁻¹⁶¹)`` and ``(-1, 0)``, a mean of norm ``2.3·10⁻¹⁶¹`` whose square underflows.
    Error analysis: the two paths' means of ``n ≤ 20`` unit vectors (``d = 2``, components at most
    1) differ by ``‖Δm‖ ≤ √d·(n + 2)·ε ≈ 3.4·10⁻¹⁵``, which turns a mean's direction by
    ``Δθ ≤ ‖Δm‖/(‖m‖ − ‖Δm‖)``; ``1 − cos`` moves by at most ``Δθ``, so the compactness and the
    separation move by ``≤ 2Δθ`` and SSB (``Σ_j n_j d_j²``, ``d_j ≤ 2``) by ``≤ 4NΔθ ≤ 80Δθ``. The
    test's absolute tolerance, ``10⁻⁹``, holds for ``Δθ ≤ 1.2·10⁻¹¹``, i.e. ``‖m‖ ≥ 3·10⁻⁴``:
    ``10⁻³`` leaves a margin. Below it the views are not compared (the Euclidean ones still are)."""
    U = X / np.linalg.norm(X, axis=1)[:, None]
    labels = np.array(y)
    means = [U[labels == c].mean(axis=0) for c in set(y)] + [U.mean(axis=0)]
    return min(float(np.linalg.norm(m)) for m in means) >= 1e-3


def _davies_bouldin_conditioned(X: np.ndarray, y: list, space: str) -> bool:
    """Whether the Davies-Bouldin index of ``space`` is conditioned for the test's tolerance: the
    first-order bound on its change under the rounding of the cluster means is below a tenth of
    ``max(10⁻⁶·index, 10⁻⁹·scale)``.

    The index ``mean_i max_j R_ij``, ``R_ij = (S_i + S_j)/d_ij``, amplifies the means' rounding by
    ``1/d_ij``, without bound as two means meet: an unseeded run drew ``(0, 1)``, ``(0, −1)`` and
    ``(1, 1)`` in one cluster and ``(1, 1)`` in another, means parallel in exact arithmetic, a
    rounded angle of ``10⁻¹⁶`` and cosine indexes of 2.6 and 2.8·10³² on the two paths. Error
    analysis: a mean of ``n`` vectors of components at most ``M`` is off by
    ``δ ≤ √d·(n + 2)·ε·M`` (``M = 1`` for unit vectors, whose mean's direction then turns by
    ``Δθ ≤ δ/(‖m‖ − δ)``); a point's distance to its mean moves by ``≤ δ`` (Euclidean) or ``≤ Δθ``
    (``1 − cos``), and so does ``S`` (an RMS or a mean of them); ``d_ij`` moves by ``≤ δ_i + δ_j``,
    or relatively by ``2(Δθ_i + Δθ_j)/θ_ij`` (``1 − cos = θ²/2`` to first order). So
    ``|ΔR_ij| ≤ (ΔS_i + ΔS_j)/d_ij + R_ij·|Δd_ij|/d_ij``, and the index moves by at most the mean
    over ``i`` of the largest over ``j``. O(k²·d + N·d)."""
    eps, labels = 2.0**-53, np.array(y)
    n, dim = X.shape
    xs = X / np.linalg.norm(X, axis=1)[:, None] if space == "cosine" else X
    clusters = sorted(set(y), key=y.index)
    if len(clusters) < 2:
        return True  # NaN on both paths
    delta = math.sqrt(dim) * (n + 2) * eps * (1.0 if space == "cosine" else float(np.abs(X).max()))
    means = np.array([xs[labels == c].mean(axis=0) for c in clusters])
    if space == "cosine":
        r = np.linalg.norm(means, axis=1)
        turn = delta / (r - delta)  # Δθ of each mean's direction (r ≥ 10⁻³: _directions_defined)
        units = means / r[:, None]
        S = np.array([(1.0 - xs[labels == c] @ u).mean() for c, u in zip(clusters, units)])
        chord = np.linalg.norm(units[:, None, :] - units[None, :, :], axis=-1)
        theta = 2.0 * np.arcsin(np.minimum(chord / 2.0, 1.0))  # accurate at small angles (arccos is not)
        dist, dS = 1.0 - np.cos(theta), turn
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = 2.0 * (turn[:, None] + turn[None, :]) / theta
    else:
        S = np.array([math.sqrt(((xs[labels == c] - m) ** 2).sum(axis=1).mean()) for c, m in zip(clusters, means)])
        dist = np.linalg.norm(means[:, None, :] - means[None, :, :], axis=-1)
        dS = np.full(len(clusters), delta)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = 2.0 * delta / dist
    with np.errstate(divide="ignore", invalid="ignore"):
        R = (S[:, None] + S[None, :]) / dist
        dR = (dS[:, None] + dS[None, :]) / dist + R * rel
    np.fill_diagonal(R, -np.inf)
    np.fill_diagonal(dR, 0.0)
    index, change = float(R.max(axis=1).mean()), float(dR.max(axis=1).mean())
    scale = max(1.0, float(np.abs(X).max())) ** 2
    return math.isfinite(change) and change <= 0.1 * max(1e-6 * abs(index), 1e-9 * scale)


@pytest.mark.slow
@given(st.lists(st.tuples(vec, st.integers(0, 3)), min_size=1, max_size=20))
# an unseeded run's: three copies of one point, whose batch mean (3x/3) missed x, so that SSW was
# 4·10⁻²⁹ and Calinski-Harabasz 1.7·10³¹ instead of the 1.0 of SSW = 0
@example(pts=[([0.0, 1.0], 1), ([0.0, 21.851744049971877], 0), ([0.0, 21.851744049971877], 0),
              ([0.0, 21.851744049971877], 0)])
# two unseeded runs': means of unit vectors at 0 and at 2.3·10⁻¹⁶¹ (:func:`_directions_defined`)
@example(pts=[([0.0, 1.0], 0), ([0.0, 1.0], 0), ([0.0, -1.0], 0), ([0.0, -1.0], 0), ([1.0, 0.0], 0),
              ([-1.0, 0.0], 0)])
@example(pts=[([1.0, 4.663073806492706e-161], 0), ([-1.0, 0.0], 0)])
@example(pts=[([0.0, 1.0], 1), ([0.0, -1.0], 1), ([1.0, 1.0], 0), ([1.0, 1.0], 1)])  # :func:`_davies_bouldin_conditioned`
def test_streaming_equals_batch_at_every_prefix(pts):
    pts = [(x, p) for x, p in pts if math.hypot(*x) > 1e-3]  # cosine needs non-zero vectors
    ev = se.IntrinsicEvaluator([cls() for cls, _ in TWINS])
    for i, (x, p) in enumerate(pts):
        ev.update(x, p)
        X = np.array([q for q, _ in pts[: i + 1]])
        y = [q for _, q in pts[: i + 1]]
        cosine_defined = _directions_defined(X, y)
        for cls, twin in TWINS:
            if cls.space == "cosine" and not cosine_defined:
                continue
            if "DaviesBouldin" in cls.__name__ and not _davies_bouldin_conditioned(X, y, cls.space):
                continue  # near-coincident (or near-parallel) means: not conditioned for rel = 1e-6
            got, want = ev[cls.__name__].get(), twin(X, y)
            scale = max(1.0, float(np.abs(X).max())) ** 2
            assert got == pytest.approx(want, rel=1e-6, abs=1e-9 * scale, nan_ok=True), cls.__name__


def test_relabelling_changes_nothing():
    X, y = blobs(21)
    perm = {0: "d", 1: ("x", 0), 2: 17, 3: "a"}
    a = se.IntrinsicEvaluator()
    b = se.IntrinsicEvaluator()
    for x, p in zip(X, y):
        a.update(x, int(p))
        b.update(x, perm[int(p)])
    for key, v in a.get().items():
        assert b.get()[key] == pytest.approx(v, rel=1e-12), key
    for name in ("SqEuclideanSilhouette", "CosineSilhouette"):
        assert b[name].final() == pytest.approx(a[name].final(), rel=1e-12)


def test_merge_of_shards_gives_the_same_metrics():
    X, y = blobs(4, n=90)
    whole = stream(se.CalinskiHarabasz(), X, y)
    shards = [stream(se.CalinskiHarabasz(), X[i::3], y[i::3]) for i in range(3)]
    merged = se.CalinskiHarabasz()
    for s in shards:
        merged.summaries.merge(s.summaries)
    assert merged.get() == pytest.approx(whole.get(), rel=1e-9)


# -- metadata, edge cases, atomicity ----------------------------------------------------------------
def test_declared_bounds_hold_and_metadata_is_declared():
    X, y = blobs(2, n=40, spread=3.0)
    for name, cls in se.INTRINSIC_REGISTRY.items():
        m = stream(cls(), X, y)
        low, high = cls.bounds
        assert low <= m.get() <= high, name
        assert isinstance(cls.bigger_is_better, bool) and cls.space in ("euclidean", "cosine")
        assert cls.__doc__ and ">>>" in cls.__doc__, name
        assert not issubclass(cls, se.Metric)  # label-metric registry stays clean
        assert name not in se.REGISTRY


def test_edge_cases():
    one = stream(se.IntrinsicEvaluator(), np.array([[1.0, 2.0], [2.0, 1.0]]), [0, 0])
    for name in ("CalinskiHarabasz", "Separation", "RMSDaviesBouldin", "CosineSeparation",
                 "CosineDaviesBouldin", "SqEuclideanSilhouette", "CosineSilhouette"):
        assert math.isnan(one[name].get()), name
    assert math.isnan(one["SqEuclideanSilhouette"].final())
    assert se.SSW().get() == 0.0 and math.isnan(se.RMSCompactness().get())
    # SSW = 0 (every cluster a single repeated point): CH is 1.0 as in scikit-learn
    pts = np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 3.0]])
    assert stream(se.CalinskiHarabasz(), pts, [0, 0, 1]).get() == 1.0 == skm.calinski_harabasz_score(pts, [0, 0, 1])
    # coincident means are left out of DB's maximum; all coincident -> 0.0 (scikit-learn)
    same = np.array([[0.0], [2.0], [1.0], [1.0]])
    assert stream(se.RMSDaviesBouldin(), same, [0, 0, 1, 1]).get() == 0.0
    assert batch.davies_bouldin_score(same, [0, 0, 1, 1]) == 0.0 == skm.davies_bouldin_score(same, [0, 0, 1, 1])


def test_evaluator_rejects_bad_vector_atomically():
    ev = se.IntrinsicEvaluator([se.SSW(), se.CosineCompactness(), se.CosineSilhouette()])
    ev.update([1.0, 2.0], "a")
    before = {k: s.to_dict() for k, s in ev.summaries.items()}
    with pytest.raises(InvalidVectorError, match="non-zero"):
        ev.update([0.0, 0.0], "a")  # fine for SSW, not for the cosine space: nothing changes
    with pytest.raises(InvalidVectorError, match="dimension"):
        ev.update([1.0, 2.0, 3.0], "a")
    with pytest.raises(UnknownElementError):
        ev.revert([5.0, 5.0], "a")  # cluster holds one element, but never saw this vector
    assert {k: s.to_dict() for k, s in ev.summaries.items()} == before
    with pytest.raises(ValueError, match="already seen"):
        se.IntrinsicEvaluator({"x": stream(se.SSW(), [[1.0]], [0])})
    with pytest.raises(TypeError):
        se.IntrinsicEvaluator([se.Purity()])


def test_report_streaming_revert_and_labels():
    X, y = blobs(9, n=30)
    t = [int(p) % 2 for p in y]
    rep = se.ClusterReport(labels=True)
    for x, p, q in zip(X, y, t):
        rep.update(x, int(p), q)
    before = rep.get()
    rep.update([9.0, 9.0, 9.0], 0, 1)
    rep.revert([9.0, 9.0, 9.0], 0, 1)
    after = rep.get()
    for key, v in before.items():
        assert after[key] == pytest.approx(v, rel=1e-9), key
    b = se.cluster_report(X, y, labels_true=t)
    for key in ("ssw", "ssb", "calinski_harabasz", "separation", "purity", "nmi", "ari", "ri"):
        assert before[key] == pytest.approx(b[key], rel=1e-9), key
    assert rep.final()["silhouette"] == pytest.approx(b["silhouette"], rel=1e-9)
    with pytest.raises(se.MissingLabelError):
        rep.update(X[0], 0, None)
    with pytest.raises(UnknownElementError):
        rep.revert(X[0], int(y[0]), 5)  # no element with true label 5
    assert rep.get()["count"] == 30
    with pytest.raises(ValueError, match="labels=False"):
        se.ClusterReport().update([1.0], 0, "t")


def test_cosine_report_batch_vs_streaming():
    X, y = blobs(12, n=40)
    b = se.cluster_report(X, y, distance="cosine")
    s = se.cluster_report(X, y, distance="cosine", streaming=True)
    for key in ("ssb", "separation", "compactness", "davies_bouldin", "silhouette"):
        assert s[key] == pytest.approx(b[key], rel=1e-9), key
    # the batch report's silhouette is batch.silhouette_score's: against scikit-learn's within both
    # computations' rounding on these points (silhouette_rounding.cosine_sample_bound)
    assert b["silhouette"] == batch.silhouette_score(X, y, metric="cosine")
    ours = batch.silhouette_samples(X, y, metric="cosine")
    gap = abs(b["silhouette"] - skm.silhouette_score(X, y, metric="cosine"))
    assert gap <= silhouette_rounding.score_bound(X, y, ours, "cosine")
    assert "ssw" in b and "ssw" not in s  # Alink's cosine SSW (sum of squared 1-cos) is batch only
    with pytest.raises(ValueError, match="distance"):
        se.cluster_report(X, y, distance="manhattan")


def test_cached_distance_views_under_random_updates_and_reverts():
    """Separation and the Davies-Bouldin views keep caches refreshed per changed cluster; with
    many clusters (the incremental path) they must equal the batch twins on the live points."""
    rng = np.random.default_rng(17)
    views = [se.Separation(), se.RMSDaviesBouldin(), se.CosineSeparation(), se.CosineDaviesBouldin()]
    ev = se.IntrinsicEvaluator(views)
    centers = rng.normal(scale=6.0, size=(40, 3))
    live = []
    for step in range(500):
        if live and rng.random() < 0.45:
            x, p = live.pop(int(rng.integers(len(live))))
            ev.revert(x, p)
        else:
            p = int(rng.integers(40))
            x = (centers[p] + rng.normal(size=3)).tolist()
            ev.update(x, p)
            live.append((x, p))
        if (step % 5 and step < 450) or not live:
            continue  # read after a few changes, as a dashboard would
        X, y = np.array([x for x, _ in live]), [p for _, p in live]
        got = ev.get()
        want = {
            "Separation": batch.separation_score(X, y),
            "RMSDaviesBouldin": batch.rms_davies_bouldin_score(X, y),
            "CosineSeparation": batch.separation_score(X, y, distance="cosine"),
            "CosineDaviesBouldin": batch.davies_bouldin_score(X, y, distance="cosine"),
        }
        for key, v in want.items():
            assert got[key] == pytest.approx(v, rel=1e-9, nan_ok=True), (step, key)


# -- the engines' path: per-cluster arrays -> ClusterSummaries.from_arrays -> each view's value --------

def engine_summaries(X, y, w) -> dict:
    """What an engine builds, in numpy: per cluster count, mean and scatter (two passes,
    weighted), then summaries from the arrays, per space."""
    summaries = {}
    for space in ("euclidean", "cosine"):
        xs = se.ClusterSummaries(space=space).vectors(X)
        labels = list(dict.fromkeys(y.tolist()))
        count = np.array([w[y == j].sum() for j in labels])
        mean = np.array([(w[y == j, None] * xs[y == j]).sum(axis=0) / w[y == j].sum() for j in labels])
        scatter = np.array([(w[y == j] * ((xs[y == j] - m) ** 2).sum(axis=1)).sum()
                            for j, m in zip(labels, mean)])
        summaries[space] = se.ClusterSummaries.from_arrays(
            count, mean.reshape(len(labels), X.shape[1]), scatter, labels=labels, space=space
        )
    return summaries


def engine_in_process(X, y, w) -> dict:
    """What an engine does: :func:`engine_summaries`, then every view's ``value`` (the
    silhouettes with their ``score_sum`` over the points, in two halves as two partitions would
    give)."""
    vs = plan_intrinsic(views())
    summaries = engine_summaries(X, y, w)
    sums = {}
    half = len(X) // 2
    for name, v in vs.items():
        if v.needs_points:
            s = summaries[v.space]
            xs = s.vectors(X)
            a = v.score_sum(s, xs[:half], y[:half].tolist(), w[:half])
            b = v.score_sum(s, xs[half:], y[half:].tolist(), w[half:])
            sums[name] = (a[0] + b[0], a[1] + b[1])
    return intrinsic_values(vs, summaries, sums)


@pytest.mark.parametrize("name", CASES)
def test_engine_path_equals_streaming_views(name):
    """Over the whole registry: the engines' path gives the streaming views' values, keys and
    edge cases (NaN for one cluster or none, the singleton convention of each view, CH = 1 when
    SSW = 0)."""
    X, y, w = case(name)
    ref = streamed(X, y, w)
    got = engine_in_process(X, y, w)
    assert_same(got, ref)
    if name == "empty":
        assert got["SSW"] == got["SSB"] == got["CosineSSB"] == 0.0
    if name == "singletons":  # singletons score 0 (scikit-learn) or 1 (Alink)
        assert got["AlinkSqEuclideanSilhouette"] > got["SqEuclideanSilhouette"]
    if name == "zero_scatter":
        assert got["CalinskiHarabasz"] == 1.0 and got["RMSDaviesBouldin"] == 0.0


@pytest.mark.slow
def test_engine_path_equals_streaming_views_above_2000_clusters():
    """Above 2,000 clusters, means sit 2.7e-7 rad apart: the Davies-Bouldin indexes amplify the
    two paths' rounding most there. The tolerance's precondition is checked on the data (the
    first-order bound of the two paths' gap, from their summaries, is below it), then the values
    are compared."""
    X, y, w = case("large_k")
    ref = streamed(X, y, w)
    got = engine_in_process(X, y, w)
    mine, theirs = streamed_summaries(X, y, w), engine_summaries(X, y, w)
    for space in ("euclidean", "cosine"):
        assert davies_bouldin_perturbation(mine[space], theirs[space]) < 1e-10, space
    assert_same(got, ref)
    assert not math.isnan(got["Separation"])


def test_from_arrays_matches_streamed_summaries():
    """The global summary by Chan's tree of merges equals the streamed one; bad arrays raise."""
    X, y, w = case("general")
    s = se.ClusterSummaries()
    for x, p, wi in zip(X, y.tolist(), w.tolist()):
        s.update(x, p, wi)
    labels = s.labels()
    counts, means, m2 = s.slot_arrays()
    slots = s.slots(labels)
    t = se.ClusterSummaries.from_arrays(counts[slots], means[slots], m2[slots], labels=labels)
    t.check_invariants()
    assert (t.n, t.k, t.sizes()) == (s.n, s.k, s.sizes())
    n1, g1, sst1 = s.global_summary()
    n2, g2, sst2 = t.global_summary()
    assert n1 == n2 and np.allclose(g1, g2, rtol=1e-12) and sst2 == pytest.approx(sst1, rel=1e-12)
    with pytest.raises(ValueError, match="integers >= 1"):
        se.ClusterSummaries.from_arrays([1, 0], [[0.0], [1.0]], [0.0, 0.0])
    with pytest.raises(ValueError, match="same clusters"):
        se.ClusterSummaries.from_arrays([1, 2], [[0.0]], [0.0, 0.0])
    with pytest.raises(ValueError, match="distinct"):
        se.ClusterSummaries.from_arrays([1, 2], [[0.0], [1.0]], [0.0, 0.0], labels=["a", "a"])
    with pytest.raises(ValueError, match="scatter"):
        se.ClusterSummaries.from_arrays([1, 2], [[0.0], [1.0]], [0.0, -1.0])
    empty = se.ClusterSummaries.from_arrays([], np.zeros((0, 4)), [])
    assert (empty.n, empty.k, empty.dim, empty.ssw) == (0, 0, 4, 0.0)


def test_check_then_apply_leaves_state_on_rejection():
    """check() changes nothing; apply() refuses a change checked against another state."""
    s = se.ClusterSummaries()
    s.update([0.0, 0.0], "a")
    before = s.to_dict()
    change = s.check([1.0, 1.0], "b", 2)
    assert s.to_dict() == before
    with pytest.raises(InvalidVectorError):
        s.check([1.0], "a")
    with pytest.raises(UnknownElementError):
        s.check([0.0, 0.0], "a", 2, revert=True)
    assert s.to_dict() == before
    s.apply(change)
    assert s.sizes() == {"a": 1, "b": 2}
    with pytest.raises(ValueError, match="another state"):
        s.apply(change)
    other = se.ClusterSummaries()
    with pytest.raises(ValueError, match="another state"):
        other.apply(s.check([0.0, 0.0], "a"))


def test_report_arrays_are_cached_labels_and_fresh_sizes():
    # cluster_array: one immutable tuple until a cluster is added or emptied; count_array: a
    # fresh int64 array per read (changing it changes nothing in the report)
    rep = se.ClusterReport()
    for x, p in [([0.0, 0.0], "a"), ([1.0, 0.0], "b"), ([0.0, 1.0], "a")]:
        rep.update(x, p)
    r1 = rep.get()
    r1["count_array"][0] = 99
    rep.update([2.0, 2.0], "b")
    r2 = rep.get()
    assert r2["cluster_array"] is r1["cluster_array"] and r2["cluster_array"] == ("a", "b")
    assert r2["count_array"].tolist() == [2, 2] and r1["count_array"].tolist() == [99, 1]
    rep.update([5.0, 5.0], "c")
    assert rep.get()["cluster_array"] == ("a", "b", "c")
    rep.revert([1.0, 0.0], "b")
    rep.revert([2.0, 2.0], "b")  # "b" emptied: gone from both
    r3 = rep.get()
    assert (r3["cluster_array"], r3["count_array"].tolist()) == (("a", "c"), [2, 1])
