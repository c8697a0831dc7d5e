"""Cosine distance without cancellation: unit vectors carried to twice the working precision.

``1 - cos θ`` between two near-parallel vectors is about ``θ²/2``. Computed as ``1 - fl(u·v)`` it
keeps only an absolute error of a few ulps of 1, a relative error ``~(d+2)·ε/(θ²/2)`` (``ε = 2⁻⁵³``):
10⁻³ at ``θ = 10⁻⁶``, every digit at ``θ = 10⁻⁸``. The identity ``1 - u·v = ||u - v||²/2`` for unit
``u, v`` removes that cancellation, but ``u = a/||a||`` rounded per component still moves ``u - v`` by
``~ε`` (a relative ``~ε/θ``). Here each unit vector is the unevaluated sum ``hi + lo`` of two
float arrays with ``hi = fl(a/||a||)`` and ``lo`` its exact residual divided by ``||a||``
(Dekker's error-free product, float operations only, so the same bits on every CPU and SIMD
path), so ``u - v = (hi_u - hi_v) + (lo_u - lo_v)`` is accurate to a relative ``~ε`` per component.

Error bound. The computed norm ``fl(||a||)`` carries a relative error ``δ_a ≤ (d/2 + 1)·ε``; it
scales ``u`` along itself, which changes ``||u - v||²`` by the factor ``1 + δ_a + δ_b`` plus an
absolute ``(δ_a - δ_b)²`` (negligible unless ``θ`` is near ``d·ε``). The per-component errors (the
residual's own rounding ``~ε²``, the two subtractions and the squares and the sum) add a relative
``≤ (d + 4)·ε``. So ``cosine_distance`` has a relative error ``≤ (2d + 6)·ε + (d·ε/θ)²``: about
``d`` ulps whatever the angle, where ``1 - u·v`` loses ``2/θ²`` of them.

The bound holds for every vector whose values are finite and not all 0. The squares of a vector
shorter than about ``1e-144`` underflow (to 0 below ``1e-162``) and those of one longer than about
``1e154`` overflow: such a vector (sum of squares below :data:`NORM_FLOOR`, or infinite) is first
scaled by the power of two that brings its largest magnitude into ``[1/2, 1)``
(:func:`scaled_rows`), which is exact but for values that become subnormal when a vector near the
overflow threshold is scaled down (an absolute ``≤ 2**-1075`` each, far below the bound). Its unit
vector is then the one of its safe-range multiples, bit for bit; every other vector takes the
plain steps, unchanged.

>>> import numpy as np
>>> a = np.array([1.0, 0.0]); b = np.array([1.0, 1e-8])
>>> float(cosine_distance(a, b))           # θ²/2 with θ = atan(1e-8)
5e-17
>>> float(1.0 - a @ b / np.sqrt(b @ b))    # the cancelling form
0.0
"""

from __future__ import annotations

import numpy as np

__all__ = ["NORM_FLOOR", "pow2_pair", "scaled_rows", "to_unit", "unit_rows", "unit_parts", "unit_half_sq", "cosine_distance"]

_SPLIT = 134217729.0  # 2**27 + 1: Dekker's splitter for float64

NORM_FLOOR = 2.0**-960
"""The smallest sum of squares taken as it is: from ``2**-960`` up (and below infinity) a square
that underflows moves the sum by ``≤ 2**-1075``, a relative ``≤ 2**-115`` of it. A vector whose sum
of squares is below (its squares underflow: a length below about ``1e-144``) or infinite (above
about ``1e154``) is scaled by a power of two first (:func:`scaled_rows`)."""


def pow2_pair(k) -> tuple[np.ndarray, np.ndarray]:
    """``2**k`` (``-1074 <= k <= 2046``, integer arrays) as two factors ``(f1, f2)`` applied in turn,
    ``(x·f1)·f2``: upward in two exact halves (each at most ``2**1023``), downward in one
    multiplication (one rounding). The native kernel's ``pow2_pair``. O(1) per entry.

    >>> [f.tolist() for f in pow2_pair(np.array([3, -2]))]
    [[4.0, 0.25], [2.0, 1.0]]
    """
    k = np.asarray(k)
    up = k > 0
    return np.ldexp(1.0, np.where(up, k - k // 2, k)), np.ldexp(1.0, np.where(up, k // 2, 0))


def scaled_rows(a: np.ndarray, need) -> tuple[np.ndarray, np.ndarray]:
    """``(b, k)``: the rows of ``a`` (shape ``(..., d)``) where ``need`` holds multiplied by
    ``2**k``, ``k`` chosen from the row's largest magnitude ``m`` so that ``m·2**k`` lies in
    ``[1/2, 1)`` (``k = -frexp(m)[1]``): its sum of squares neither underflows nor overflows. Other
    rows (and all-zero ones) get ``k = 0``, the same bits. Exact but for values that become
    subnormal when a row near the overflow threshold is scaled down (an absolute ``≤ 2**-1075``
    each). O(d) per row.

    >>> b, k = scaled_rows(np.array([[3e-200, 4e-200], [3.0, 4.0]]), np.array([True, False]))
    >>> k.tolist(), bool(0.5 <= b[0].max() < 1.0), b[1].tolist()
    ([662, 0], True, [3.0, 4.0])
    """
    m = np.max(np.abs(a), axis=-1, initial=0.0)
    k = np.where(np.asarray(need) & (m > 0) & np.isfinite(m), -np.frexp(m)[1], 0)
    f1, f2 = pow2_pair(k)
    return (a * f1[..., None]) * f2[..., None], k


def to_unit(v: np.ndarray, sum_sq) -> np.ndarray | None:
    """``v / fl(sqrt(s))`` with ``s = sum_sq(v)`` (one-dimensional ``v``): the cosine space's unit
    vector of an input, after :func:`scaled_rows` when ``s`` is below :data:`NORM_FLOOR` or
    infinite; ``None`` when every value of ``v`` is 0. The native kernel's ``to_unit``. O(d).

    >>> to_unit(np.array([3e-200, 4e-200]), lambda v: float(v @ v)).tolist()
    [0.6, 0.8]
    """
    s = sum_sq(v)
    if not NORM_FLOOR <= s < np.inf:
        if not v.any():
            return None
        v, _ = scaled_rows(v, True)
        s = sum_sq(v)
    return v / np.sqrt(s)


def _two_product_error(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``a·b - p`` exactly, for ``p = fl(a·b)`` (Dekker's TwoProduct; |a|, |b| < 2**996)."""
    ca = _SPLIT * a
    ah = ca - (ca - a)
    al = a - ah
    cb = _SPLIT * b
    bh = cb - (cb - b)
    bl = b - bh
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def unit_rows(a: np.ndarray) -> np.ndarray:
    """The rows of ``a`` (shape ``(m, d)``, none all 0) over their lengths, ``a / fl(sqrt(Σ a²))``
    with the squares summed by ``einsum``, a row whose sum of squares is below :data:`NORM_FLOOR` or
    infinite scaled by :func:`scaled_rows` first. O(d) per row.

    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 1e-300]])).tolist()
    [[0.6, 0.8], [0.0, 1.0]]
    """
    a, sq, _ = _safe_squares(a)
    return a / np.sqrt(sq)[:, None]


def _safe_squares(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(b, sq, k)``: the rows of ``a`` (shape ``(..., d)``) with those whose sum of squares (by
    ``einsum``) is below :data:`NORM_FLOOR` or infinite scaled by ``2**k`` (:func:`scaled_rows`),
    and the rows' sums of squares; ``k`` is ``None`` where no row needed it (``b`` is ``a``).
    O(d) per row."""
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.einsum("...j,...j->...", a, a)
    need = ~((sq >= NORM_FLOOR) & (sq < np.inf))
    if not np.any(need):
        return a, sq, None
    b, k = scaled_rows(a, need)  # an exact change of length (but for subnormal results)
    return b, np.where(need, np.einsum("...j,...j->...", b, b), sq), k


def unit_parts(a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hi, lo, norm)`` of the rows of ``a`` (shape ``(..., d)``): ``hi + lo`` is ``a/norm`` to a
    relative ``~ε²`` per component, ``norm = fl(||a||)``. All-zero rows give ``hi = lo = 0`` and
    ``norm = 0``; a row scaled first (:data:`NORM_FLOOR`) has its norm scaled back, which rounds
    where it is subnormal and is ``inf`` above the largest float. The native kernel's
    ``unit_parts``. O(d) per row.

    >>> hi, lo, n = unit_parts(np.array([[3.0, 4.0], [0.0, 0.0]]))
    >>> hi.tolist(), n.tolist()
    ([[0.6, 0.8], [0.0, 0.0]], [5.0, 0.0])
    """
    a, sq, k = _safe_squares(np.asarray(a, dtype=np.float64))
    norm = np.sqrt(sq)
    safe = np.where(norm > 0, norm, 1.0)[..., None]
    hi = a / safe
    p = hi * safe
    # a - hi·safe exactly: a - p is exact (Sterbenz: p is within an ulp of a), then the product's error
    lo = ((a - p) - _two_product_error(hi, np.broadcast_to(safe, hi.shape), p)) / safe
    if k is not None:  # the length scaled back
        g1, g2 = pow2_pair(-k)
        with np.errstate(over="ignore"):
            norm = (norm * g1) * g2
    return hi, lo, norm


def unit_half_sq(hi_a, lo_a, hi_b, lo_b) -> np.ndarray:
    """``||u - v||²/2`` for unit vectors given as ``hi + lo`` (broadcast over leading axes): the
    cosine distance ``1 - u·v`` without cancellation. O(d) per pair."""
    diff = (hi_a - hi_b) + (lo_a - lo_b)
    return 0.5 * np.einsum("...j,...j->...", diff, diff)


def cosine_distance(a, b) -> np.ndarray:
    """Cosine distance ``1 - cos(a, b)`` between rows of ``a`` and ``b`` (broadcast), clipped to
    ``[0, 2]``; 1 when either norm is 0. Relative error ``≤ (2d + 6)·ε`` (see the module). O(d) per
    pair.

    >>> cosine_distance(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([0.0, 2.0])).tolist()
    [1.0, 1.0]
    """
    ha, la, na = unit_parts(a)
    hb, lb, nb = unit_parts(b)
    half = unit_half_sq(ha, la, hb, lb)
    return np.clip(np.where((na > 0) & (nb > 0), half, 1.0), 0.0, 2.0)
