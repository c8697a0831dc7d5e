"""The cosine views between near-parallel means: no cancellation, on every CPU.

``1 - cos θ`` between cluster means at an angle ``θ`` is about ``θ²/2``; computed as ``1 - u·v``
it keeps an absolute error of a few ulps of 1, a relative ``~ε/θ²``. That made the engines' path and
the streaming path disagree on ``CosineDaviesBouldin`` by 6.7e-6 above 2,000 clusters: their means
differ by an ulp (two-pass sums against Welford), and the cancelling form turned the ulp into
``ε/θ²``. The inputs below are built so that the cancellation shows whatever the CPU: means at
``θ = 10⁻²…10⁻⁸`` (the cancelling form is wrong by 2·10⁻⁴…100 %), each compared with an oracle in
60-digit decimal arithmetic computed from the very floats the code receives.

The tolerances are the error bounds of :mod:`streameval._unit`: ``cosine_distance`` carries a
relative error ``≤ (2d + 6)·ε + (d·ε/θ)²`` (``ε = 2⁻⁵³``): the unit vectors are carried as
``hi + lo`` to twice the precision, and the norm's own rounding scales a unit vector along itself
(relative ``(d/2 + 1)·ε`` each, and an absolute ``(δ_a - δ_b)²``).
"""

from decimal import Decimal, getcontext

import numpy as np
import pytest

import streameval as se
from streameval import batch
from streameval._unit import cosine_distance
from streameval.intrinsic import cosine_dissimilarity

EPS = 2.0**-53
getcontext().prec = 60
THETAS = [1e-2, 1e-5, 1e-8]


def dec(v) -> list:
    return [Decimal(float(t)) for t in np.asarray(v).reshape(-1)]


def exact_cos_distance(a, b) -> Decimal:
    """``1 - a·b/(|a||b|)`` of the floats ``a``, ``b`` in 60 digits."""
    a, b = dec(a), dec(b)
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = sum(x * x for x in a).sqrt(), sum(x * x for x in b).sqrt()
    return 1 - dot / (na * nb)


def near_parallel(d: int, thetas, seed: int = 0) -> np.ndarray:
    """Unit vectors: a base direction, then one at each angle ``θ`` from it (in a random plane)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=d)
    base /= np.linalg.norm(base)
    rows = [base]
    for t in thetas:
        p = rng.normal(size=d)
        p -= (p @ base) * base
        p /= np.linalg.norm(p)
        rows.append(base * np.cos(t) + p * np.sin(t))
    return np.array(rows)


def bound(d: int, theta: float, extra: float = 0.0) -> float:
    """The analysis' relative error bound of one cosine distance, plus ``extra`` ulps."""
    return (2 * d + 6 + extra) * EPS + (d * EPS / theta) ** 2


def rel(got: float, want: Decimal) -> float:
    return float(abs(Decimal(float(got)) - want) / want)


@pytest.mark.parametrize("d", [2, 7, 64])
def test_cosine_distance_keeps_its_digits_between_near_parallel_vectors(d):
    """The kernel and every place that uses it, against the 60-digit oracle; the cancelling form
    fails on the same floats (what the engines and the stream disagreed by)."""
    u = near_parallel(d, THETAS)
    scale = np.array([1.0, 0.3, 7.0, 0.01])[:, None]  # means of unit vectors have norms <= 1; any norm works
    means = u * scale
    s = se.ClusterSummaries.from_arrays([1, 1, 1, 1], means, [0.0] * 4, space="cosine")
    dist = s.centroid_distances()
    from_base = s.distances_from(means[0])
    for i, theta in enumerate(THETAS, start=1):
        want = exact_cos_distance(means[0], means[i])
        tol = bound(d, theta)
        assert rel(cosine_distance(means[0], means[i]), want) <= tol
        assert rel(dist[0, i], want) <= tol and rel(dist[i, 0], want) <= tol
        assert rel(from_base[i], want) <= tol
        cancelling = 1.0 - (means[0] @ means[i]) / (np.linalg.norm(means[0]) * np.linalg.norm(means[i]))
        if theta <= 1e-5:  # the old form: an absolute error of ulps of 1, relative ~ε/θ²
            assert not rel(cancelling, want) <= tol
    # the batch twin: its Separation is the mean of the same kernel's distances, between the
    # points' unit vectors fl(x/||x||), which it computes first (the cosine space averages unit
    # vectors). That rounding (relative ε per component; the norm's own error is along the
    # vector) turns each vector by at most ε, a pair by Δθ ≤ 2ε, and 1 - cos θ by a relative
    # Δθ·cot(θ/2) + O(Δθ²/θ²) ≤ 4ε/θ + 5(ε/θ)²; the kernel adds bound(d, θ); the sum of the 4x4
    # matrix (positive terms, at most four additions deep in numpy's unrolled sum) and the division
    # add 5ε. Each pair's bound weighs by its share of the sum, with θ ≥ sqrt(2·(1 - cos θ)).
    # (The bound of the smallest angle alone held on one CPU's inputs only: near_parallel's floats
    # come from BLAS, and another kernel's gave 3.98e-15 against its 2.05e-15 at d = 2.)
    labels = np.arange(4)
    pairs = [exact_cos_distance(means[i], means[j]) for i in range(4) for j in range(i + 1, 4)]
    want_sep = sum(pairs) / 6

    def pair_bound(dist: Decimal) -> float:
        theta = float(dist * 2) ** 0.5
        return bound(d, theta) + 4 * EPS / theta + 5 * (EPS / theta) ** 2

    tol_sep = float(sum(w * Decimal(pair_bound(w)) for w in pairs) / sum(pairs)) + 5 * EPS
    assert rel(batch.separation_score(means, labels, distance="cosine"), want_sep) <= tol_sep


def exact_cosine_db(counts, means, scatters) -> Decimal:
    """Alink's cosine Davies-Bouldin from the summaries, in 60 digits: ``S_j = 1 - |mean_j|``, taken
    as the summaries give it, ``(M2_j/b_j)/(1 + |mean_j|)`` (``M2_j/b_j = 1 - |mean_j|²`` for unit
    vectors; the form that does not cancel for a tight cluster),
    ``R_ij = (S_i + S_j)/(1 - cos(mean_i, mean_j))``, the mean of each row's maximum."""
    k = len(counts)
    S = [Decimal(float(q)) / int(b) / (1 + sum(x * x for x in dec(m)).sqrt())
         for b, m, q in zip(counts, means, scatters)]
    rows = []
    for i in range(k):
        rows.append(max((S[i] + S[j]) / exact_cos_distance(means[i], means[j]) for j in range(k) if j != i))
    return sum(rows) / k


@pytest.mark.parametrize("d", [2, 16])
def test_cosine_davies_bouldin_keeps_its_digits_when_means_differ_by_an_ulp(d):
    """Two clusters whose means are 10⁻⁷ apart, and the same summaries with one mean moved by an
    ulp (what two summation orders give): each value is within the analysis' bound of its own
    60-digit oracle, so the two agree to ~d ulps plus the true change; the cancelling form moved
    them apart by ~ε/θ² = 10⁻², the 6.7e-6 of the engine path above 2,000 clusters."""
    theta = 1e-7
    u = near_parallel(d, [theta, 0.5], seed=d)
    # unit vectors averaged: a cluster mean has norm r < 1 and scatter M2 = b·(1 - r²)
    r = np.array([0.999, 0.998, 0.9])
    counts = np.array([5, 3, 4])
    means = u * r[:, None]
    scatters = counts * (1.0 - r * r)
    nudged = means.copy()
    nudged[1, 0] = np.nextafter(nudged[1, 0], np.inf)
    values = []
    for m in (means, nudged):
        s = se.ClusterSummaries.from_arrays(counts, m, scatters, space="cosine")
        got = se.CosineDaviesBouldin().value(s)
        # per entry: the distance's bound, S_j = (M2_j/b_j)/(1 + r_j) a few ulps, the sum and
        # the division 2 more; the mean of three positive maxima 3 more
        assert rel(got, exact_cosine_db(counts, m, scatters)) <= bound(d, theta, 12)
        values.append(got)
    true_change = abs(exact_cosine_db(counts, means, scatters) - exact_cosine_db(counts, nudged, scatters))
    gap = abs(Decimal(values[0]) - Decimal(values[1]))
    assert gap <= true_change + 2 * Decimal(bound(d, theta, 12)) * Decimal(values[0])


@pytest.mark.parametrize("d", [2, 32])
def test_cosine_silhouette_distances_keep_their_digits_near_a_tight_mean(d):
    """``1 - x·mean_j`` for a point next to a tight cluster's mean, from the summaries, against
    the oracle ``mean over the members of 1 - cos(x, y)``: the members are ``±`` a small tilt
    around one direction, so their mean and scatter are exact and the true value is ~10⁻¹²."""
    theta = 1e-6
    u = near_parallel(d, [theta, 2 * theta, 3 * theta], seed=3)
    members = u[[1, 2]]  # a cluster of two unit vectors
    x = u[3]
    mean = members.mean(axis=0)
    scatter = float(((members - mean) ** 2).sum())
    diss, a = cosine_dissimilarity(x[None, :], np.array([0]), np.array([2]), mean[None, :], np.array([scatter]))
    want = sum(exact_cos_distance(x, y) for y in members) / 2
    # the summaries' own rounding: the mean (an ulp per component moves it by an angle ~ε, a
    # relative ~2ε/θ of the distance), the scatter (relative ~(d+2)ε of 1 - |mean|), the kernel
    assert rel(diss[0, 0], want) <= bound(d, theta, 8) + 4 * EPS / theta
