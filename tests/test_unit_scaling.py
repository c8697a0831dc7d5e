"""The cosine space's unit vectors at any length: a vector whose squares underflow (a length below
about ``1e-144``, subnormal values) or overflow (above about ``1e154``) is scaled by a power of two
before its length is taken, so its unit vector is the one of any other length, bit for bit, and
within the documented bound of the exact one (an integer oracle); the native kernel's input
paths give the reference's bits; the cosine views do not change when every point is scaled by a
power of two."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import streameval as se
from streameval._unit import cosine_distance, unit_parts

EPS = 2.0**-53
TINY = 2.0**-1074

# directions with values within 2**60 of each other: every power-of-two scaling below keeps them exact
DIRECTIONS = [[3.0, 4.0], [1.0, 1e-8, 3.0], [1.0, 1.0], [0.1, -0.7, 0.3, 0.2, 1e-3], [5.0, 0.0, -2.0]]


def _exact_unit(a: np.ndarray) -> list[Fraction]:
    """``a/||a||`` to a relative ``2**-200``: every float is an integer multiple of ``2**-1074``,
    and the square root of the integer sum of squares is taken with ``math.isqrt``."""
    n = [int(Fraction(float(x)) / Fraction(TINY)) for x in a]
    r = math.isqrt(sum(v * v for v in n) << 400)  # sqrt(Σ n²)·2**200, rounded down
    return [Fraction(v << 200, r) for v in n]


def _valuation(x: float) -> int:
    """The exponent of the lowest set bit of ``x`` (not 0)."""
    f = Fraction(x)
    num = abs(f.numerator)
    return (num & -num).bit_length() - f.denominator.bit_length()


def _scaled(a: np.ndarray, k: int) -> np.ndarray:
    """``a·2**k``, checked exact (scaling back gives ``a``)."""
    b = np.ldexp(a, k)
    assert np.array_equal(np.ldexp(b, -k), a) and np.all(np.isfinite(b))
    return b


@pytest.mark.parametrize("a", DIRECTIONS)
def test_unit_parts_are_the_same_bits_at_every_length(a):
    """The plain path is exact under a scaling that underflows and overflows nothing, so the
    rescaled path must land on its bits: hi and lo equal, the norm scaled."""
    a = np.array(a)
    hi, lo, norm = unit_parts(a[None, :])
    top = math.frexp(float(np.abs(a).max()))[1]
    low = -1074 - min(_valuation(float(x)) for x in a if x != 0)  # the last bit lands on 2**-1074
    for k in (low, low + 1, -1000, -700, -530, -480, 460, 500, 800, 1023 - top):
        if k < low:
            continue
        b = _scaled(a, k)
        h, lw, n = unit_parts(b[None, :])
        assert h.tobytes() == hi.tobytes() and lw.tobytes() == lo.tobytes(), k
        want = math.ldexp(float(norm[0]), k)
        if 2.0**-1022 <= want < math.inf:  # else the length itself rounds or overflows
            assert float(n[0]) == want, k


@pytest.mark.parametrize("a", [[3e-160, 4e-160], [1e-200, 1e-200], [1e-300, 3e-301, -2e-300], [5e-324, 0.0],
                               [5e-324, 1e-323], [2.5e-320, -5e-324, 7e-322], [1e200, 3e199],
                               [1.7e308, 1.7e308], [1.7e308, -1e308, 1e300], [1.7e308, 1e-300],
                               [3.0, 4.0], [1e-150, 2e-150, 3e-150]])
def test_unit_parts_are_within_the_bound_of_the_exact_unit_vector(a):
    """``hi + lo`` is ``a/fl(||a||)`` to ``~ε²`` and ``fl(||a||)`` is within ``(d/2 + 1)·ε`` of
    ``||a||``: each component within ``(d/2 + 2)·ε`` of the exact unit vector (of length 1). The
    plain steps were off by ``5.6e-6`` at ``[3e-160, 4e-160]`` and gave 0 at ``[1e-200, 1e-200]``."""
    a = np.array(a)
    hi, lo, norm = unit_parts(a[None, :])
    exact = _exact_unit(a)
    bound = Fraction(len(a) / 2 + 2) * Fraction(EPS)
    for i, u in enumerate(exact):
        got = Fraction(float(hi[0, i])) + Fraction(float(lo[0, i]))
        assert abs(got - u) <= bound, (i, float(got - u))
    length = math.sqrt(sum(float(x) ** 2 for x in exact))
    assert abs(length - 1.0) <= 4 * EPS
    # the norm: ||a|| to (d/2 + 1)·ε where representable, inf above the largest float
    true = Fraction(float(a[0])) / exact[0] if a[0] != 0 else None
    if true is not None and Fraction(2.0**-1022) <= true < 2**1024:
        assert abs(Fraction(float(norm[0])) / true - 1) <= Fraction(len(a) / 2 + 1) * Fraction(EPS) + Fraction(2.0**-190)
    elif true is not None and true >= 2**1024:
        assert norm[0] == math.inf
    assert norm[0] > 0


def test_only_an_all_zero_row_is_zero():
    hi, lo, norm = unit_parts(np.array([[0.0, 0.0], [0.0, 5e-324], [-5e-324, 0.0]]))
    assert hi.tolist() == [[0.0, 0.0], [0.0, 1.0], [-1.0, 0.0]] and lo.tolist() == [[0.0, 0.0]] * 3
    assert norm.tolist() == [0.0, 5e-324, 5e-324]


def test_cosine_distance_does_not_change_with_the_lengths():
    rng = np.random.default_rng(7)
    a = np.round(rng.normal(size=(20, 4)) * 2.0**20) / 2.0**20
    b = a + np.round(rng.normal(size=a.shape) * 2.0**10) / 2.0**40  # near-parallel: distances ~1e-24, kept  # near-parallel: the distance is ~1e-18, its digits kept
    want = cosine_distance(a, b)
    for ka, kb in ((-1000, 0), (-700, -900), (800, -600), (1000, 1000), (-540, 40), (-1020, 1020)):
        assert cosine_distance(_scaled(a, ka), _scaled(b, kb)).tobytes() == want.tobytes()


def _points(seed: int, n: int = 60, d: int = 3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    X = rng.normal(size=(n, d)) + 3.0 * np.eye(4, d)[y]
    return np.round(X * 4096.0) / 4096.0, y  # multiples of 2**-12 below 2**4: exact from 2**-1062 to 2**1019


@pytest.mark.parametrize("native", [True, False])
def test_summaries_take_every_length_as_the_same_unit_vector(native):
    """``vector`` and ``update_many`` scale a vector to the unit vector of any other length: the
    state of a stream whose points are all scaled by ``2**k`` (lengths from ``1e-320`` to ``1e76``)
    is the unscaled stream's, byte for byte, and the native kernel's equals the reference's."""
    X, y = _points(1)
    top = max(math.frexp(float(v))[1] for v in np.abs(X).ravel())

    def state(X, block):
        s = se.ClusterSummaries(space="cosine", native=native)
        if block:
            s.update_many(X, y.tolist())
        else:
            for x, p in zip(X, y):
                s.update(x, int(p))
        return s.to_dict()

    want = state(X, False)
    for k in (-1060, -1000, -700, -520, -484, 200, 254 - top):
        b = _scaled(X, k)
        assert state(b, False) == want, k
        assert state(b, True) == state(X, True), k
    other = se.ClusterSummaries(space="cosine", native=not native)
    for x, p in zip(_scaled(X, -1060), y):
        other.update(x, int(p))
    assert other.to_dict()["clusters"] == want["clusters"]


def test_subnormal_vectors_are_unit_vectors_on_both_paths():
    rows = np.array([[5e-324, 0.0], [1e-323, 1.5e-323], [1e-200, 1e-200], [3e-160, 4e-160], [-1e-310, 2e-310]])
    for native in (True, False):
        s = se.ClusterSummaries(space="cosine", native=native)
        s.update_many(rows, [0, 1, 2, 3, 4])
        means = {c[0]: c[2] for c in s.to_dict()["clusters"]}
        assert means[0] == [1.0, 0.0] and means[1] == [2 / math.sqrt(13), 3 / math.sqrt(13)]
        assert means[2] == [math.sqrt(0.5)] * 2 and means[3] == [0.6, 0.8]
        assert means[4] == [-1 / math.sqrt(5), 2 / math.sqrt(5)]
        with pytest.raises(se.errors.InvalidVectorError, match="norm 0"):
            s.update_many(np.array([[1e-300, 0.0], [0.0, 0.0]]), [0, 1])
        with pytest.raises(se.errors.InvalidVectorError, match="non-zero"):
            s.update([0.0, 0.0], 0)


@pytest.mark.parametrize("cls", [se.CosineCompactness, se.CosineSSB, se.CosineSeparation, se.CosineDaviesBouldin,
                                 se.CosineSilhouette])
def test_cosine_views_do_not_change_when_every_point_is_scaled(cls):
    X, y = _points(2)
    want = cls()
    for x, p in zip(X, y):
        want.update(x, int(p))
    for k in (-1060, -700, -490, 240):
        got = cls()
        for x, p in zip(_scaled(X, k), y):
            got.update(x, int(p))
        assert got.get() == want.get(), k


@pytest.mark.parametrize("streaming", [False, True])
def test_the_cosine_report_does_not_change_when_every_point_is_scaled(streaming):
    X, y = _points(3)

    def report(X):
        r = se.cluster_report(X, y, distance="cosine", streaming=streaming)
        return {key: v.tolist() if isinstance(v, np.ndarray) else v for key, v in r.items()}

    want = report(X)
    for k in (-1060, -600, 240):  # values stay below 2**256
        assert report(_scaled(X, k)) == want, k
