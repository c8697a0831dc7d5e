"""Information-theoretic metrics (natural logarithm), with scikit-learn's values and edge cases.

With ``A = Σ a log a``, ``B = Σ b log b``, ``C = Σ n log n`` (kept as exact fixed-point sums):

- ``H(T) = (N log N - A)/N``, ``H(P) = (N log N - B)/N``;
- ``MI = (N log N + C - A - B)/N``;
- ``VI = H(T) + H(P) - 2 MI = (A + B - 2C)/N``.

Each sum changes by one term per update, so every metric here is O(1) per update, revert and read.
The integer differences are taken before the one division, so a perfect match gives exactly
``MI = H(T) = H(P)`` and NMI exactly 1.0.

Edge cases (scikit-learn's): MI is 0.0 on an empty table or when either side has one cluster; NMI is
1.0 when both sides have one cluster (or none) and 0.0 when MI is 0; homogeneity (completeness) is
1.0 when ``H(T)`` (``H(P)``) is 0, all three of homogeneity, completeness, V are 1.0 on an empty
table; V is 0.0 when homogeneity + completeness is 0. VI is 0.0 on an empty table.
"""

from __future__ import annotations

import math
import numbers

from ..stats import ONE, xlogx
from ._ondemand import OnDemand
from .base import Metric
from .quantities import NativeValue, Quantities, shared

__all__ = [
    "MutualInfo",
    "NormalizedMutualInfo",
    "Homogeneity",
    "Completeness",
    "VBeta",
    "VariationOfInformation",
    "AdjustedMutualInfo",
    "adjusted_mutual_info",
    "entropies",
    "expected_mutual_info",
    "size_histograms",
]

_AVERAGES = ("arithmetic", "geometric", "min", "max")


@shared
def entropies(s) -> tuple[float, float, float]:
    """``(H(T), H(P), MI)`` in nats from the stats: ``H(T) = (N log N - Σ a log a)/N``,
    ``H(P) = (N log N - Σ b log b)/N``, ``MI = (N log N + Σ n log n - Σ a log a - Σ b log b)/N``
    (0 for a side with one cluster; MI clamped at 0). O(1).

    A shared quantity: given a :class:`~streameval.metrics.quantities.Quantities`, it is computed
    once per table state for every metric that asks.

    >>> from streameval import Contingency
    >>> t = Contingency()
    >>> for a, b in [(0, 0), (0, 0), (1, 1), (1, 1)]:
    ...     t.update(a, b)
    >>> [round(x, 6) for x in entropies(t)]
    [0.693147, 0.693147, 0.693147]
    """
    if s.__class__ is Quantities:
        return s.entropies
    n = s.n
    if n == 0:
        return 0.0, 0.0, 0.0
    nlogn = xlogx(n)
    scale = n * ONE
    ht = (nlogn - s.sum_row_xlogx) / scale if s.k_true > 1 else 0.0
    hp = (nlogn - s.sum_col_xlogx) / scale if s.k_pred > 1 else 0.0
    if s.k_true <= 1 or s.k_pred <= 1:
        return ht, hp, 0.0
    mi = (nlogn + s.sum_cell_xlogx - s.sum_row_xlogx - s.sum_col_xlogx) / scale
    return ht, hp, max(mi, 0.0)


def _generalized_average(u: float, v: float, method: str) -> float:
    """The mean of two entropies used to normalise MI (scikit-learn's ``average_method``)."""
    if method == "min":
        return min(u, v)
    if method == "geometric":
        return math.sqrt(u * v)
    if method == "arithmetic":
        return (u + v) / 2
    return max(u, v)


class MutualInfo(NativeValue, Metric):
    """Mutual information ``MI`` (nats), scikit-learn's ``mutual_info_score``. O(1).

    >>> m = MutualInfo()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.37489
    """

    _formula = "MutualInfo"

    symmetric = True
    bounds = (0.0, math.inf)

    def value(self, s) -> float:
        """``MI = (N log N + Σ n log n - Σ a log a - Σ b log b) / N`` from the stats ``s``
        (:func:`entropies`). O(1)."""
        return entropies(s)[2]


class _Normalised(NativeValue, Metric, register=False):
    """MI normalised by a mean of the two entropies (``average_method``, scikit-learn's)."""

    symmetric = True

    def __init__(self, average_method: str = "arithmetic"):
        if average_method not in _AVERAGES:
            raise ValueError(f"average_method must be one of {_AVERAGES}, got {average_method!r}")
        self.average_method = average_method
        super().__init__(**({} if average_method == "arithmetic" else {"average_method": average_method}))


class NormalizedMutualInfo(_Normalised):
    """Normalised mutual information ``MI / mean(H(T), H(P))``, scikit-learn's values. O(1).

    ``average_method``: ``"arithmetic"`` (default), ``"geometric"``, ``"min"`` or ``"max"``.

    >>> m = NormalizedMutualInfo()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.43987
    """

    _formula = "NormalizedMutualInfo"

    def _formula_key(self) -> str:
        return f"NormalizedMutualInfo:{self.average_method}"

    def value(self, s) -> float:
        """``MI / mean(H(T), H(P))`` from the stats ``s`` (the mean given by ``average_method``); 1.0
        when both sides have one cluster (or none), 0.0 when ``MI = 0``. O(1)."""
        if s.k_true == s.k_pred and s.k_true <= 1:
            return 1.0
        ht, hp, mi = entropies(s)
        if mi == 0:
            return 0.0
        return mi / _generalized_average(ht, hp, self.average_method)


class Homogeneity(NativeValue, Metric):
    """Homogeneity ``MI / H(T)``: each predicted cluster holds one class; 1.0 when ``H(T) = 0``. O(1).

    >>> m = Homogeneity()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.540852
    """

    _formula = "Homogeneity"

    def value(self, s) -> float:
        """``MI / H(T)`` from the stats ``s``; 1.0 when ``H(T) = 0``. O(1)."""
        ht, _, mi = entropies(s)
        return mi / ht if ht else 1.0


class Completeness(NativeValue, Metric):
    """Completeness ``MI / H(P)``: each class lies in one cluster; 1.0 when ``H(P) = 0``. O(1).

    >>> m = Completeness()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.370663
    """

    _formula = "Completeness"

    def value(self, s) -> float:
        """``MI / H(P)`` from the stats ``s``; 1.0 when ``H(P) = 0``. O(1)."""
        _, hp, mi = entropies(s)
        return mi / hp if hp else 1.0


class VBeta(NativeValue, Metric):
    """V-measure ``(1+β) h c / (β h + c)`` of homogeneity ``h`` and completeness ``c``. O(1).

    ``beta`` weighs completeness over homogeneity (scikit-learn's ``v_measure_score``).

    >>> m = VBeta()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.43987
    """

    _formula = "VBeta"

    def _formula_param(self) -> float:
        return self.beta

    def __init__(self, beta: float = 1.0):
        if not (math.isfinite(beta) and beta > 0):
            raise ValueError(f"beta must be a finite number > 0, got {beta!r}")
        self.beta = float(beta)
        self.symmetric = self.beta == 1.0  # swapping the sides swaps h and c
        super().__init__(**({} if self.beta == 1.0 else {"beta": beta}))

    def value(self, s) -> float:
        """``(1+β)·h·c / (β·h + c)`` with ``h = MI/H(T)``, ``c = MI/H(P)`` from the stats ``s``; 1.0 on
        the empty table. O(1)."""
        if s.n == 0:
            return 1.0
        ht, hp, mi = entropies(s)
        h = mi / ht if ht else 1.0
        c = mi / hp if hp else 1.0
        if h + c == 0:
            return 0.0
        return (1 + self.beta) * h * c / (self.beta * h + c)


class VariationOfInformation(NativeValue, Metric):
    """Variation of information ``H(T) + H(P) - 2 MI = (A + B - 2C)/N`` (nats), a distance. O(1).

    Smaller is better; 0 exactly when the clusterings are equal up to relabelling.

    >>> m = VariationOfInformation()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.954771
    """

    _formula = "VariationOfInformation"

    bigger_is_better = False
    symmetric = True
    bounds = (0.0, math.inf)

    def value(self, s) -> float:
        """``(Σ a log a + Σ b log b - 2 Σ n log n) / N`` from the stats ``s`` (clamped at 0);
        0.0 on the empty table. O(1)."""
        n = s.n
        if n == 0:
            return 0.0
        return max(0.0, (s.sum_row_xlogx + s.sum_col_xlogx - 2 * s.sum_cell_xlogx) / (n * ONE))


# -- expected mutual information (the chance term of AMI) ---------------------------------------

_EMI_CHUNK = 1 << 20  # largest number of hypergeometric terms evaluated in one numpy pass


def _check_histogram(sizes, n: int, side: str) -> list:
    """``sizes`` as a sorted list of ``(size, count)`` pairs, checked to add up to ``n``."""
    pairs = sorted(dict(sizes).items())
    for size, count in pairs:
        if not (isinstance(size, numbers.Integral) and isinstance(count, numbers.Integral)):
            raise ValueError(f"{side} histogram must map int sizes to int counts, got {size!r}: {count!r}")
        if size < 1 or count < 1:
            raise ValueError(f"{side} histogram holds a non-positive size or count: {size!r}: {count!r}")
    total = sum(size * count for size, count in pairs)
    if total != n:
        raise ValueError(f"{side} cluster sizes add up to {total}, not n={n}")
    return [(int(size), int(count)) for size, count in pairs]


def expected_mutual_info(sizes_true, sizes_pred, n: int) -> float:
    """Expected mutual information (nats) of two random clusterings with the given cluster sizes.

    ``sizes_true`` and ``sizes_pred`` are histograms ``{cluster size: number of clusters of that
    size}`` (the only thing the expectation depends on), ``n`` the number of elements. Under the
    permutation model (Vinh, Epps & Bailey 2010) the cell of a true cluster of size ``a`` and a
    predicted cluster of size ``b`` is hypergeometric, and

    ``E[MI] = Σ_a Σ_b c_a c_b Σ_{k=max(1, a+b-n)}^{min(a,b)} (k/n) log(n k/(a b))
    · a! b! (n-a)! (n-b)! / (n! k! (a-k)! (b-k)! (n-a-b+k)!)``

    with ``c_a``, ``c_b`` the multiplicities. Each term is computed exactly as scikit-learn's
    ``expected_mutual_information`` computes it (log-gamma, then ``exp``), so the two agree to
    rounding (1e-12 in the tests); it is 0.0 when either side has at most one cluster. The loop runs
    over *distinct* sizes only, so a distributed engine can ship two small histograms.

    Cost: ``O(Σ_{a,b distinct} min(a, b))`` log-gamma evaluations, vectorised with numpy — at most
    ``O(√n · n)``, and far less for typical size distributions; memory is bounded by chunking.
    Needs SciPy (``scipy.special.gammaln``), imported on first call.

    >>> round(expected_mutual_info({2: 2}, {2: 2}, 4), 10)
    0.2310490602
    >>> expected_mutual_info({4: 1}, {1: 4}, 4)
    0.0
    """
    import numpy as np

    from ..errors import require

    gammaln = require("scipy.special", "the expected mutual information (AMI)", "sklearn").gammaln

    if not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    hist_t = _check_histogram(sizes_true, n, "sizes_true")
    hist_p = _check_histogram(sizes_pred, n, "sizes_pred")
    if sum(c for _, c in hist_t) <= 1 or sum(c for _, c in hist_p) <= 1:
        return 0.0
    b = np.array([s for s, _ in hist_p], dtype=np.int64)
    cb = np.array([c for _, c in hist_p], dtype=np.float64)
    log_b = np.log(b)
    gln_b = gammaln(b + 1)
    gln_nb = gammaln(n - b + 1)
    log_n = np.log(n)
    gln_n = gammaln(n + 1)
    emi = 0.0
    for a, ca in hist_t:
        start = np.maximum(1, a - n + b)
        lengths = np.minimum(a, b) - start + 1
        gln_a = gammaln(a + 1)
        gln_na = gammaln(n - a + 1)
        log_a = np.log(a)
        total = 0.0
        lo = 0
        while lo < len(b):  # chunks of predicted sizes, each under _EMI_CHUNK terms
            cum = np.cumsum(lengths[lo:])
            hi = lo + max(1, int(np.searchsorted(cum, _EMI_CHUNK, side="right")))
            ln = lengths[lo:hi]
            rep = np.repeat(np.arange(lo, hi), ln)
            offsets = np.arange(int(ln.sum())) - np.repeat(np.cumsum(ln) - ln, ln)
            k = (start[rep] + offsets).astype(np.float64)
            bk = b[rep]
            term1 = k / n
            term2 = (log_n + np.log(k)) - log_a - log_b[rep]
            gln = (
                gln_a + gln_b[rep] + gln_na + gln_nb[rep] - (gammaln(k + 1) + gln_n)
                - gammaln(a - k + 1) - gammaln(bk - k + 1) - gammaln(n - a - bk + k + 1)
            )
            total += float(np.dot(term1 * term2 * np.exp(gln), cb[rep]))
            lo = hi
        emi += ca * total
    return emi


def size_histograms(table) -> tuple[dict, dict]:
    """``({a: number of true clusters of size a}, {b: ...})`` from a table. O(kT + kP).

    >>> from streameval import Contingency
    >>> t = Contingency()
    >>> for a, b in [(0, 0), (0, 1), (1, 1), (2, 2)]:
    ...     t.update(a, b)
    >>> size_histograms(t)
    ({2: 1, 1: 2}, {1: 2, 2: 1})
    """
    hists = []
    for sizes in (table.true_sizes(), table.pred_sizes()):
        h: dict = {}
        for size in sizes.values():
            h[size] = h.get(size, 0) + 1
        hists.append(h)
    return hists[0], hists[1]


_EPS = 2.220446049250313e-16  # float64 machine epsilon, scikit-learn's clamp


class AdjustedMutualInfo(OnDemand, _Normalised):
    """Adjusted mutual information ``(MI - E[MI]) / (mean(H(T), H(P)) - E[MI])``; on demand.

    Scikit-learn's ``adjusted_mutual_info_score``, edge cases included: 1.0 when both sides have
    one cluster (or none), 0.0 when exactly one side has a single cluster; numerator and denominator
    are kept away from 0 by machine epsilon with their sign, as scikit-learn does.
    ``average_method``: ``"arithmetic"`` (default), ``"geometric"``, ``"min"`` or ``"max"``.

    ``MI``, ``H(T)`` and ``H(P)`` come from the O(1) sums; the expected mutual information under the
    permutation model (:func:`expected_mutual_info`) from the two cluster-size histograms. Cost per
    ``get()`` after a change: O(kT + kP) plus ``O(Σ_{distinct a, b} min(a, b))`` terms of the
    expectation; repeated reads of an unchanged table are O(1) (cached by ``table.version``).
    Updates and reverts stay O(1). Needs SciPy.

    >>> m = AdjustedMutualInfo()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 2)]:
    ...     m.update(t, p)
    >>> round(m.get(), 6)
    0.182824
    >>> m.update(2, 3); m.update(2, 3)
    >>> round(m.get(), 6)
    0.461712
    """

    adjusted = True
    bounds = (-math.inf, 1.0)
    from_sizes = True

    def _compute(self, table) -> float:
        return adjusted_mutual_info(table, *size_histograms(table), self.average_method)

    def value_from_sizes(self, s, sizes_true: dict, sizes_pred: dict) -> float:
        """:func:`adjusted_mutual_info` of the sums and the size histograms (what engines return):
        ``(MI - E[MI]) / (mean(H(T), H(P)) - E[MI])``. Cost: O(kT + kP) histogram entries plus
        the ``O(Σ_{distinct a, b} min(a, b))`` terms of the expectation."""
        return adjusted_mutual_info(s, sizes_true, sizes_pred, self.average_method)

    def value(self, s) -> float:
        """``(MI - E[MI]) / (mean(H(T), H(P)) - E[MI])`` from the table ``s`` (a
        :class:`~streameval.Contingency`: it needs the cluster sizes, not only the sums). Cost as
        ``get()``: O(kT + kP) plus the expectation's terms, cached per table version."""
        return self._result(s)


def adjusted_mutual_info(s, sizes_true: dict, sizes_pred: dict, average_method="arithmetic"):
    """Adjusted mutual information from the stats ``s`` and the two cluster-size histograms.

    ``(MI - EMI) / (mean(H(T), H(P)) - EMI)`` with scikit-learn's edge cases
    (``adjusted_mutual_info_score``): 1.0 when both sides have one cluster (or none), 0.0 when
    exactly one side has one; numerator and denominator kept away from 0 by machine epsilon.
    Shared by :class:`AdjustedMutualInfo` and the distributed engines, which return only the
    histograms. Cost: :func:`expected_mutual_info`.

    >>> from streameval.stats import ContingencyStats
    >>> s = ContingencyStats.from_cells([(0, 0, 2), (1, 1, 2)])
    >>> adjusted_mutual_info(s, {2: 2}, {2: 2})
    1.0
    """
    kt, kp = s.k_true, s.k_pred
    if kt == kp and kt <= 1:
        return 1.0
    if kt == 1 or kp == 1:
        return 0.0
    ht, hp, mi = entropies(s)
    emi = expected_mutual_info(sizes_true, sizes_pred, s.n)
    den = _generalized_average(ht, hp, average_method) - emi
    den = min(den, -_EPS) if den < 0 else max(den, _EPS)
    num = mi - emi
    num = min(num, -_EPS) if num < 0 else max(num, _EPS)
    return num / den
