"""Set-matching metrics: purity and inverse purity (O(1)); CEAF and cluster accuracy (on demand).

Purity ``(1/N) Σ_j max_i n[i,j]``: each predicted cluster is credited with its largest class.
Inverse purity ``(1/N) Σ_i max_j n[i,j]``: the same with the roles swapped. The table keeps, per
cluster, a histogram of its cell counts, so a cluster's maximum is known after every update and
revert (a maximum falls by at most one on a unit decrement): O(1) per update, revert and read.
The empty table scores 1.0.

CEAF (Luo 2005) and cluster accuracy align true and predicted clusters one-to-one so as to
maximise a total similarity: an optimal assignment, not a function of running sums. They are
computed in ``get()`` from the table's cells (SciPy's sparse assignment solver), cached until the
table changes, and marked ``on_demand = True`` (``Evaluator()`` without arguments leaves them out).
"""

from __future__ import annotations

import math

from ._ondemand import _OnDemand
from .base import Metric, harmonic, ratio

__all__ = ["Purity", "InversePurity", "CEAF", "ClusterAccuracy", "optimal_matching"]


class Purity(Metric):
    """Purity: the share of elements in the majority class of their predicted cluster. O(1).

    >>> m = Purity()
    >>> for t, p in [(0, 0), (0, 0), (1, 0), (1, 1), (2, 1), (2, 1)]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.6667
    """

    def value(self, s) -> float:
        return ratio(s.sum_col_max, s.n)


class InversePurity(Metric):
    """Inverse purity: the share of elements in the majority cluster of their true class. O(1).

    >>> m = InversePurity()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     m.update(t, p)
    >>> m.get()
    0.75
    """

    def value(self, s) -> float:
        return ratio(s.sum_row_max, s.n)


def optimal_matching(cells, weight):
    """A one-to-one matching of true to predicted clusters of largest total ``weight``.

    ``cells`` are ``(true, pred, count)`` triples with ``a`` and ``b`` the row and column sums
    computed from them; ``weight(n, a, b)`` is the similarity of a true and a predicted cluster
    sharing ``n > 0`` elements (pairs sharing none have similarity 0 and never help). Returns the
    matched cells as ``(n, a, b)`` triples.

    Method: a sparse minimum-cost full matching (SciPy's ``min_weight_full_bipartite_matching``,
    LAPJVsp) on costs ``c - weight``, with one dummy column per true cluster at cost ``c`` so that
    leaving a cluster unmatched is allowed; the optimum is exact. Cost: O(cells + kT + kP) to build,
    then the solver's, O(kT·kP·min(kT, kP)) in the worst case and near O(cells) when most clusters
    have one dominant partner.

    >>> sorted(optimal_matching([(0, "x", 2), (0, "y", 1), (1, "y", 3)], lambda n, a, b: n))
    [(2, 3, 2), (3, 3, 4)]
    """
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    rows: dict = {}
    cols: dict = {}
    ri, ci, ns = [], [], []
    for t, p, n in cells:
        ri.append(rows.setdefault(t, len(rows)))
        ci.append(cols.setdefault(p, len(cols)))
        ns.append(n)
    if not ns:
        return []
    a = np.bincount(ri, weights=ns).astype(np.int64)
    b = np.bincount(ci, weights=ns).astype(np.int64)
    ri, ci, ns = np.asarray(ri), np.asarray(ci), np.asarray(ns, dtype=np.int64)
    w = np.array([weight(int(n), int(x), int(y)) for n, x, y in zip(ns, a[ri], b[ci])], dtype=float)
    kt, kp = len(a), len(b)
    top = float(w.max()) + 1.0  # every cost positive: explicit entries, never dropped as zeros
    cost = csr_matrix(
        (np.concatenate([top - w, np.full(kt, top)]),
         (np.concatenate([ri, np.arange(kt)]), np.concatenate([ci, kp + np.arange(kt)]))),
        shape=(kt, kp + kt),
    )
    match_r, match_c = min_weight_full_bipartite_matching(cost)
    chosen = {(int(r), int(c)) for r, c in zip(match_r, match_c) if c < kp}
    return [
        (int(n), int(a[r]), int(b[c]))
        for r, c, n in zip(ri.tolist(), ci.tolist(), ns.tolist())
        if (r, c) in chosen
    ]


def _phi3(n: int, a: int, b: int) -> int:
    return n


def _phi4(n: int, a: int, b: int) -> float:
    return 2 * n / (a + b)


_VARIANTS = ("entity", "mention")


class CEAF(_OnDemand):
    """CEAF, the constrained entity-alignment F-measure (Luo 2005); computed on demand.

    True and predicted clusters (key and response entities) are aligned one-to-one to maximise the
    total similarity ``Φ``; with every element in both:

    - ``variant="entity"`` (CEAF-e, φ4): similarity ``2 n[i,j] / (a[i] + b[j])``; recall ``Φ/kT``,
      precision ``Φ/kP``;
    - ``variant="mention"`` (CEAF-m, φ3): similarity ``n[i,j]``; recall = precision = ``Φ/N``.

    ``get()`` returns F1 (harmonic mean; 0 when P + R = 0); ``precision`` and ``recall`` are
    properties. The empty table scores 0, as in the reference scorers. Cost per ``get()`` after a
    change: O(cells + kT + kP) plus the assignment (see :func:`optimal_matching`); repeated reads of
    an unchanged table are O(1) (cached by ``table.version``). Updates and reverts stay O(1).

    >>> m = CEAF()
    >>> for t, p in [(1, "a"), (1, "a"), (1, "b"), (2, "b"), (2, "b"), (3, "c")]:
    ...     m.update(t, p)
    >>> round(m.precision, 4), round(m.recall, 4), round(m.get(), 4)
    (0.8667, 0.8667, 0.8667)
    >>> round(CEAF(variant="mention").clone().get(), 4)
    0.0
    """

    symmetric = True

    def __init__(self, variant: str = "entity"):
        if variant not in _VARIANTS:
            raise ValueError(f"variant must be one of {_VARIANTS}, got {variant!r}")
        self.variant = variant
        super().__init__(**({} if variant == "entity" else {"variant": variant}))

    def _compute(self, table) -> tuple[float, float, float]:
        n = table.n
        if not n:
            return 0.0, 0.0, 0.0
        if self.variant == "mention":
            phi = sum(c for c, _, _ in optimal_matching(table.items(), _phi3))
            p = r = phi / n
        else:
            phi = math.fsum(_phi4(*m) for m in optimal_matching(table.items(), _phi4))
            p, r = phi / table.k_pred, phi / table.k_true
        return p, r, harmonic(p, r)

    @property
    def precision(self) -> float:
        """Precision ``Φ/kP`` (entity) or ``Φ/N`` (mention). On demand, cached."""
        return self._result(self._table)[0]

    @property
    def recall(self) -> float:
        """Recall ``Φ/kT`` (entity) or ``Φ/N`` (mention). On demand, cached."""
        return self._result(self._table)[1]

    @property
    def f1(self) -> float:
        """F1 (what :meth:`get` returns). On demand, cached."""
        return self._result(self._table)[2]

    def value(self, s) -> float:
        return self._result(s)[2]


class ClusterAccuracy(_OnDemand):
    """Cluster accuracy: the share of elements kept by the best one-to-one cluster matching.

    ``max over one-to-one maps g of Σ_i n[i, g(i)] / N`` (the Hungarian "clustering accuracy";
    with every element in both clusterings it equals CEAF-m). Computed on demand in ``get()``;
    cost as :class:`CEAF`'s, cached until the table changes. The empty table scores 1.0 (as purity).

    >>> m = ClusterAccuracy()
    >>> for t, p in [(0, "x"), (0, "x"), (0, "y"), (1, "y"), (1, "y"), (2, "y")]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.6667
    """

    symmetric = True

    def _compute(self, table) -> float:
        if not table.n:
            return 1.0
        return sum(c for c, _, _ in optimal_matching(table.items(), _phi3)) / table.n

    def value(self, s) -> float:
        return self._result(s)
