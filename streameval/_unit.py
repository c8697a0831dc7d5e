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

>>> import numpy as np
>>> a = np.array([1.0, 0.0]); b = np.array([1.0, 1e-8])
>>> float(cosine_distance(a, b))           # θ²/2 with θ = atan(1e-8)
5e-17
>>> float(1.0 - a @ b / np.sqrt(b @ b))    # the cancelling form
0.0
"""

from __future__ import annotations

import numpy as np

__all__ = ["unit_parts", "unit_half_sq", "cosine_distance"]

_SPLIT = 134217729.0  # 2**27 + 1: Dekker's splitter for float64


def _two_product_error(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``a·b - p`` exactly, for ``p = fl(a·b)`` (Dekker's TwoProduct; |a|, |b| < 2**996)."""
    ca = _SPLIT * a
    ah = ca - (ca - a)
    al = a - ah
    cb = _SPLIT * b
    bh = cb - (cb - b)
    bl = b - bh
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def unit_parts(a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hi, lo, norm)`` of the rows of ``a`` (shape ``(..., d)``): ``hi + lo`` is ``a/norm`` to a
    relative ``~ε²`` per component, ``norm = fl(||a||)``. Rows of norm 0 give ``hi = lo = 0``. O(d)
    per row.

    >>> hi, lo, n = unit_parts(np.array([[3.0, 4.0], [0.0, 0.0]]))
    >>> hi.tolist(), n.tolist()
    ([[0.6, 0.8], [0.0, 0.0]], [5.0, 0.0])
    """
    a = np.asarray(a, dtype=np.float64)
    norm = np.sqrt(np.einsum("...j,...j->...", a, a))
    safe = np.where(norm > 0, norm, 1.0)[..., None]
    hi = a / safe
    p = hi * safe
    # a - hi·safe exactly: a - p is exact (Sterbenz: p is within an ulp of a), then the product's error
    lo = ((a - p) - _two_product_error(hi, np.broadcast_to(safe, hi.shape), p)) / safe
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
