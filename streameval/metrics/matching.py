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

from ._ondemand import OnDemand
from .base import Metric, harmonic, ratio
from .quantities import NativeValue

__all__ = ["Purity", "InversePurity", "CEAF", "ClusterAccuracy", "optimal_matching"]


class Purity(NativeValue, Metric):
    """Purity: the share of elements in the majority class of their predicted cluster,
    ``Σ_j max_i n[i,j] / N``. O(1).

    >>> m = Purity()
    >>> for t, p in [(0, 0), (0, 0), (1, 0), (1, 1), (2, 1), (2, 1)]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.6667
    """

    _formula = "Purity"

    def value(self, s) -> float:
        """``Σ_j max_i n[i,j] / N`` from the stats ``s`` (the kept column maxima); 1.0 on the empty
        table. O(1)."""
        return ratio(s.sum_col_max, s.n)


class InversePurity(NativeValue, Metric):
    """Inverse purity: the share of elements in the majority cluster of their true class,
    ``Σ_i max_j n[i,j] / N``. O(1).

    >>> m = InversePurity()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     m.update(t, p)
    >>> m.get()
    0.75
    """

    _formula = "InversePurity"

    def value(self, s) -> float:
        """``Σ_i max_j n[i,j] / N`` from the stats ``s`` (the kept row maxima); 1.0 on the empty
        table. O(1)."""
        return ratio(s.sum_row_max, s.n)


def _best_other(group, w, k):
    """Per cell, the largest weight among the *other* cells of its row (or column); 0 if none."""
    import numpy as np

    order = np.lexsort((-w, group))  # by group, heaviest first
    g, ws = group[order], w[order]
    first = np.ones(len(g), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    heads = np.flatnonzero(first)
    top = np.zeros(k, dtype=w.dtype)
    top[g[heads]] = ws[heads]
    runner_up = np.zeros(k, dtype=w.dtype)
    nxt = heads + 1
    ok = nxt < len(g)
    ok[ok] &= g[nxt[ok]] == g[heads[ok]]
    runner_up[g[heads[ok]]] = ws[nxt[ok]]
    is_head = np.zeros(len(g), dtype=bool)
    is_head[order[heads]] = True
    return np.where(is_head, runner_up[group], top[group])


def optimal_matching(cells, weight):
    """A one-to-one matching of true to predicted clusters of largest total ``weight``.

    ``cells`` are ``(true, pred, count)`` triples with ``a`` and ``b`` the row and column sums
    computed from them; ``weight(n, a, b)`` (numpy arrays in, array out) is the similarity of a true
    and a predicted cluster sharing ``n > 0`` elements (pairs sharing none have similarity 0 and
    never help). Returns the matched cells as ``(n, a, b)`` triples.

    Method, exact:

    1. A cell whose weight is at least the best other weight in its row plus the best other weight
       in its column belongs to an optimal matching (exchanging it into any optimal matching loses
       at most those two). Such cells, taken greedily without sharing a row or column, are fixed:
       in a good clustering that is nearly every cluster.
    2. The rest is a sparse minimum-cost full matching (SciPy's ``min_weight_full_bipartite_matching``,
       LAPJVsp) on costs ``c - weight``, with one dummy column per true cluster at cost ``c`` so that
       a cluster may stay unmatched.

    Cost: O(cells log cells + kT + kP) for step 1, then the solver's on what is left:
    O(r·c·min(r, c)) in the worst case for ``r`` rows and ``c`` columns left.

    >>> sorted(optimal_matching([(0, "x", 2), (0, "y", 1), (1, "y", 3)], lambda n, a, b: n))
    [(2, 3, 2), (3, 3, 4)]
    """
    import numpy as np

    from ..errors import require

    csr_matrix = require("scipy.sparse", "the optimal matching (CEAF, ClusterAccuracy)", "sklearn").csr_matrix
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
    ri, ci, ns = np.asarray(ri), np.asarray(ci), np.asarray(ns, dtype=np.int64)
    kt, kp = len(rows), len(cols)
    a, b = np.bincount(ri, weights=ns).astype(np.int64), np.bincount(ci, weights=ns).astype(np.int64)
    w = np.asarray(weight(ns, a[ri], b[ci]))
    slack = w - _best_other(ri, w, kt) - _best_other(ci, w, kp)
    # integer weights compare exactly; float ones only fix a cell with a margin above rounding
    candidates = np.flatnonzero(slack >= (0 if w.dtype.kind in "iu" else 1e-9))
    chosen, row_done, col_done = [], np.zeros(kt, dtype=bool), np.zeros(kp, dtype=bool)
    for cell in candidates.tolist():
        r, c = ri[cell], ci[cell]
        if not (row_done[r] or col_done[c]):
            row_done[r] = col_done[c] = True
            chosen.append(cell)
    rest = np.flatnonzero(~row_done[ri] & ~col_done[ci])
    if len(rest):
        r_ids, rr = np.unique(ri[rest], return_inverse=True)
        c_ids, cc = np.unique(ci[rest], return_inverse=True)
        nr, nc = len(r_ids), len(c_ids)
        wr = w[rest].astype(float)
        top = float(wr.max()) + 1.0  # every cost positive: explicit entries, never dropped as zeros
        cost = csr_matrix(
            (np.concatenate([top - wr, np.full(nr, top)]),
             (np.concatenate([rr, np.arange(nr)]), np.concatenate([cc, nc + np.arange(nr)]))),
            shape=(nr, nc + nr),
        )
        match_r, match_c = min_weight_full_bipartite_matching(cost)
        pairs = {(int(x), int(y)) for x, y in zip(match_r, match_c) if y < nc}
        chosen += [int(rest[k]) for k in range(len(rest)) if (int(rr[k]), int(cc[k])) in pairs]
    return [(int(ns[k]), int(a[ri[k]]), int(b[ci[k]])) for k in chosen]


def _phi3(n, a, b):
    return n


def _phi4(n, a, b):
    return 2 * n / (a + b)


_VARIANTS = ("entity", "mention")


class CEAF(OnDemand):
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
            phi = math.fsum(2 * c / (x + y) for c, x, y in optimal_matching(table.items(), _phi4))
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
        """F1 ``2PR/(P + R)`` (what :meth:`get` returns). On demand, cached."""
        return self._result(self._table)[2]

    def value(self, s) -> float:
        """F1 ``2PR / (P + R)`` of the optimal alignment of the table ``s`` (a
        :class:`~streameval.Contingency`). Cost: O(cells + kT + kP) plus the assignment, cached
        per table version."""
        return self._result(s)[2]


class ClusterAccuracy(OnDemand):
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
        """``max_g Σ_i n[i, g(i)] / N`` over one-to-one maps ``g``, from the table ``s`` (a
        :class:`~streameval.Contingency`). Cost as :class:`CEAF`'s, cached per table version."""
        return self._result(s)
