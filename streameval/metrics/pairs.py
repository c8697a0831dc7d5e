"""Pair-counting metrics, over the ``C2(N)`` unordered pairs of distinct elements.

With ``C2(x) = x(x-1)/2``: pairs together in both ``TP = Σ C2(n[i,j]) = (Σn² - N)/2``, together
in the prediction ``PP = (Σb² - N)/2``, together in the truth ``TT = (Σa² - N)/2``, and
``TN = C2(N) - PP - TT + TP``. The table keeps ``Σn²``, ``Σa²``, ``Σb²`` exactly, so every metric
here is O(1) per update, revert and read, computed from exact integers (no overflow, any ``N``).

Edge cases follow scikit-learn where it defines the metric (``rand_score``,
``adjusted_rand_score``, ``fowlkes_mallows_score``): RI and ARI are 1.0 when no pair is in
disagreement (including ``N < 2``); FMI is 0.0 when no pair is together in both. Pair precision,
recall, F1 and Jaccard are 1.0 when their denominator is 0 (no pair claimed, none missed).
"""

from __future__ import annotations

import math

from .base import Metric, ratio
from .quantities import NativeValue, Quantities, shared

__all__ = [
    "Rand",
    "AdjustedRand",
    "PairPrecision",
    "PairRecall",
    "PairF1",
    "PairJaccard",
    "FowlkesMallows",
    "pair_counts",
]


@shared
def pair_counts(s) -> tuple[int, int, int, int]:
    """``(TP, PP, TT, total pairs)`` from the stats, exact ints: ``TP = (Σn² - N)/2``,
    ``PP = (Σb² - N)/2``, ``TT = (Σa² - N)/2``, ``C2(N) = N(N-1)/2``. O(1).

    A shared quantity: given a :class:`~streameval.metrics.quantities.Quantities`, it is computed
    once per table state for every metric that asks.

    >>> from streameval import Contingency
    >>> t = Contingency()
    >>> for a, b in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     t.update(a, b)
    >>> pair_counts(t)
    (1, 2, 3, 6)
    """
    if s.__class__ is Quantities:
        return s.pair_counts
    n = s.n
    return (s.sum_cell_sq - n) // 2, (s.sum_col_sq - n) // 2, (s.sum_row_sq - n) // 2, n * (n - 1) // 2


class _PairMetric(NativeValue, Metric, register=False):
    """Pair-counting metrics take no parameters; their formulas are native too (``get()`` O(1))."""


class Rand(_PairMetric):
    """Rand index: the share of pairs on which both clusterings agree, ``(TP + TN) / C2(N)``. O(1).

    >>> m = Rand()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.6
    """

    _formula = "Rand"

    symmetric = True

    def value(self, s) -> float:
        """``(TP + TN) / C2(N)`` from the stats ``s`` (:func:`pair_counts`); 1.0 with no disagreeing pair. O(1)."""
        tp, pp, tt, total = pair_counts(s)
        agree = total - pp - tt + 2 * tp
        return 1.0 if agree == total else agree / total


class AdjustedRand(_PairMetric):
    """Adjusted Rand index (Hubert & Arabie), as scikit-learn computes it. O(1).

    ``2(TP·TN - FN·FP) / ((TP+FN)(FN+TN) + (TP+FP)(FP+TN))`` with ``FP = PP - TP``,
    ``FN = TT - TP``; 1.0 when ``FP = FN = 0``. Bounds ``[-0.5, 1]``.

    >>> m = AdjustedRand()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.117647
    """

    _formula = "AdjustedRand"

    symmetric = True
    adjusted = True
    bounds = (-0.5, 1.0)

    def value(self, s) -> float:
        """``2(TP·TN - FN·FP) / ((TP+FN)(FN+TN) + (TP+FP)(FP+TN))`` from the stats ``s``, with
        ``FP = PP - TP``, ``FN = TT - TP``; 1.0 when ``FP = FN = 0``. O(1)."""
        tp, pp, tt, total = pair_counts(s)
        fp, fn = pp - tp, tt - tp
        if fp == 0 and fn == 0:
            return 1.0
        tn = total - pp - tt + tp
        return 2 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


class PairPrecision(_PairMetric):
    """Pair precision ``TP / PP``: the share of predicted links that are true; 1.0 when ``PP = 0``. O(1).

    >>> m = PairPrecision()
    >>> for t, p in [(0, 0), (0, 0), (1, 0)]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.3333
    """

    _formula = "PairPrecision"

    def value(self, s) -> float:
        """``TP / PP`` from the stats ``s``; 1.0 when ``PP = 0``. O(1)."""
        tp, pp, _, _ = pair_counts(s)
        return ratio(tp, pp)


class PairRecall(_PairMetric):
    """Pair recall ``TP / TT``: the share of true links predicted; 1.0 when ``TT = 0``. O(1).

    >>> m = PairRecall()
    >>> for t, p in [(0, 0), (0, 1), (0, 1)]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.3333
    """

    _formula = "PairRecall"

    def value(self, s) -> float:
        """``TP / TT`` from the stats ``s``; 1.0 when ``TT = 0``. O(1)."""
        tp, _, tt, _ = pair_counts(s)
        return ratio(tp, tt)


class PairF1(_PairMetric):
    """Pair F1, the harmonic mean of pair precision and recall: ``2TP / (PP + TT)``. O(1).

    1.0 when neither clustering links any pair.

    >>> m = PairF1()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.4
    """

    _formula = "PairF1"

    symmetric = True

    def value(self, s) -> float:
        """``2TP / (PP + TT)`` from the stats ``s``; 1.0 when ``PP + TT = 0``. O(1)."""
        tp, pp, tt, _ = pair_counts(s)
        return ratio(2 * tp, pp + tt)


class PairJaccard(_PairMetric):
    """Pair Jaccard index ``TP / (PP + TT - TP)``; 1.0 when neither clustering links a pair. O(1).

    >>> m = PairJaccard()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.25
    """

    _formula = "PairJaccard"

    symmetric = True

    def value(self, s) -> float:
        """``TP / (PP + TT - TP)`` from the stats ``s``; 1.0 when the denominator is 0. O(1)."""
        tp, pp, tt, _ = pair_counts(s)
        return ratio(tp, pp + tt - tp)


class FowlkesMallows(_PairMetric):
    """Fowlkes-Mallows index ``TP / sqrt(PP·TT)``, scikit-learn's value; 0.0 when ``TP = 0``. O(1).

    >>> m = FowlkesMallows()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.408248
    """

    _formula = "FowlkesMallows"

    symmetric = True

    def value(self, s) -> float:
        """``sqrt(TP/PP)·sqrt(TP/TT)`` from the stats ``s`` (``2TP = Σn² - N``, ``2PP = Σb² - N``,
        ``2TT = Σa² - N``); 0.0 when ``TP = 0``. O(1)."""
        n = s.n
        tk = s.sum_cell_sq - n
        if tk == 0:
            return 0.0
        pk, qk = s.sum_col_sq - n, s.sum_row_sq - n
        return math.sqrt(tk / pk) * math.sqrt(tk / qk)
