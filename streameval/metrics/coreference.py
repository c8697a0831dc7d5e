"""Coreference and entity-resolution metrics over the shared table: MUC, BLANC, LEA and the basic
merge distance, each O(1) per update, revert, read.

Every element is a *mention*; its true label names its *key entity* (chain), its predicted label its
*response entity*. Every mention is in both (the coreference scorers' "gold mentions" setting), so
in table terms a key entity is a row ``i`` of size ``a[i]``, a response entity a column ``j`` of
size ``b[j]``, and their overlap the cell ``n[i,j]``.

- **MUC** (Vilain et al. 1995): a key chain ``K`` split into ``|p(K)|`` parts by the response
  needs ``|K| - |p(K)|`` of its ``|K| - 1`` links. The parts of row ``i`` are its non-zero cells,
  so recall ``= Σ(a[i] - cells in row i) / Σ(a[i] - 1) = (N - cells)/(N - kT)`` and precision
  ``= (N - cells)/(N - kP)``: exact integers.
- **BLANC** (Recasens & Hovy 2011; Luo et al. 2014 for the boundary cases): precision, recall and F
  of the coreference links (``TP/PP``, ``TP/TT``) and of the non-coreference links
  (``TN/(C2(N)-PP)``, ``TN/(C2(N)-TT)``), averaged; from the exact pair counts
  (:func:`~streameval.metrics.pairs.pair_counts`).
- **LEA** (Moosavi & Strube 2016): recall ``= Σ_i a[i]·res(i) / N`` with
  ``res(i) = Σ_j C2(n[i,j]) / C2(a[i])`` for ``a[i] > 1``, and for a key singleton ``res = 1``
  iff its mention is a response singleton; precision with the roles swapped. For ``a > 1`` the term
  ``a·Σ_j C2(n)/C2(a) = (S - a)/(a - 1)`` (``S`` the row's sum of squared cells) is exactly ELM's
  row term, so ``N·R = elm_r_sum - true_singletons + both_singletons`` and
  ``N·P = elm_p_sum - pred_singletons + both_singletons``: no new running sum is needed, and the
  value is as exact as ELM's fixed-point sums.
- **Basic merge distance** (Menestrina, Whang & Garcia-Molina 2010): the fewest splits and merges
  of clusters that turn the prediction into the truth. Splitting predicted cluster ``j`` by true
  label takes (cells in column ``j``) - 1 splits, then merging the parts of true cluster ``i`` takes
  (cells in row ``i``) - 1 merges: ``BMD = (cells - kP) + (cells - kT)``, exact integers.

Edge cases follow the reference scorers (conll ``scorer.pl`` v8, coval): a ratio with an empty
denominator is 0, F is 0 when P + R = 0. So MUC is 0 when the key (recall) or the response
(precision) has no link — including an all-singleton response to an all-singleton key — LEA is 0
on the empty table, and BLANC is 0 when there is no pair (N < 2). BLANC averages only the link
types present in the key or the response (Luo et al. 2014): ``F_n`` alone when neither has a
coreference link, ``F_c`` alone when both are one entity. See ``docs/coreference.md``.
"""

from __future__ import annotations

from ..stats import ONE
from .base import Metric, harmonic
from .pairs import pair_counts
from .quantities import NativeValue

__all__ = ["MUC", "BLANC", "LEA", "BasicMergeDistance", "blanc_parts"]


def _ratio0(num, den) -> float:
    """``num / den``, 0.0 when ``den == 0`` (the reference scorers' convention)."""
    return num / den if den else 0.0


class _PRF(NativeValue, Metric, register=False):
    """A metric with precision, recall and F1; :meth:`get` returns F1. Subclasses give ``_pr``."""

    def _pr(self, s) -> tuple[float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def precision(self) -> float:
        """Precision (the subclass's formula: e.g. MUC's ``(N - cells)/(N - kP)``). O(1)."""
        return self._pr(self._table)[0]

    @property
    def recall(self) -> float:
        """Recall (the subclass's formula: e.g. MUC's ``(N - cells)/(N - kT)``). O(1)."""
        return self._pr(self._table)[1]

    @property
    def f1(self) -> float:
        """F1, the harmonic mean ``2PR/(P + R)`` of precision and recall (0 when both are 0). O(1)."""
        return self.value(self._table)

    def value(self, s) -> float:
        """F1 ``2PR / (P + R)`` of the precision and recall of the stats ``s``; 0 when ``P + R = 0``. O(1)."""
        return harmonic(*self._pr(s))


class MUC(_PRF):
    """MUC (Vilain et al. 1995): link-based precision and recall over the partitions of the chains.

    Recall ``(N - cells)/(N - kT)``, precision ``(N - cells)/(N - kP)``, F1 their harmonic mean;
    ``get()`` returns F1. A ratio with no links to count (``N = kT`` or ``N = kP``) is 0, as in the
    reference scorers; MUC ignores singletons and rewards merging. Cost: O(1) per update, revert
    and read.

    >>> m = MUC()
    >>> for t, p in [(1, "a"), (1, "a"), (1, "b"), (2, "b"), (2, "b"), (3, "c")]:
    ...     m.update(t, p)
    ...     print(f"{m.get():.4f}")
    0.0000
    1.0000
    0.6667
    0.5000
    0.6667
    0.6667
    >>> m.precision, m.recall
    (0.6666666666666666, 0.6666666666666666)
    """

    _formula = "MUC"

    symmetric = True

    def _pr(self, s) -> tuple[float, float]:
        common = s.n - s.cells
        return _ratio0(common, s.n - s.k_pred), _ratio0(common, s.n - s.k_true)


def blanc_parts(s) -> dict:
    """BLANC's two link types from the stats: ``{"coref": (P, R, F), "non_coref": (P, R, F)}``,
    ``P_c = TP/PP``, ``R_c = TP/TT``, ``P_n = TN/(C2(N) - PP)``, ``R_n = TN/(C2(N) - TT)``, each F
    their harmonic mean.

    A link type absent from both the key and the response is left out (Luo et al. 2014). Each ratio
    with an empty denominator is 0. O(1).

    >>> from streameval import Contingency
    >>> t = Contingency()
    >>> for a, b in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     t.update(a, b)
    >>> {k: tuple(round(x, 4) for x in v) for k, v in blanc_parts(t).items()}
    {'coref': (0.5, 0.3333, 0.4), 'non_coref': (0.5, 0.6667, 0.5714)}
    """
    tp, pp, tt, total = pair_counts(s)
    parts = {}
    if tt or pp:
        p, r = _ratio0(tp, pp), _ratio0(tp, tt)
        parts["coref"] = (p, r, harmonic(p, r))
    nk, nr = total - tt, total - pp
    if nk or nr:
        tn = total - pp - tt + tp
        p, r = _ratio0(tn, nr), _ratio0(tn, nk)
        parts["non_coref"] = (p, r, harmonic(p, r))
    return parts


class BLANC(NativeValue, Metric):
    """BLANC (Recasens & Hovy 2011, with Luo et al. 2014's boundary rules). O(1).

    Coreference links: ``P_c = TP/PP``, ``R_c = TP/TT``; non-coreference links:
    ``P_n = TN/(C2(N)-PP)``, ``R_n = TN/(C2(N)-TT)``; ``F_c``, ``F_n`` their F1. BLANC's precision,
    recall and F are the means over the link types that occur in the key or the response, so
    ``get() = (F_c + F_n)/2`` in general, ``F_n`` when no one is linked on either side, ``F_c`` when
    both sides are one entity, and 0 when there is no pair. Note that BLANC's F is the mean of the
    two F's, not the harmonic mean of its P and R. Cost: O(1) per update, revert and read.

    >>> m = BLANC()
    >>> for t, p in [(1, "a"), (1, "a"), (1, "b"), (2, "b"), (2, "b"), (3, "c")]:
    ...     m.update(t, p)
    >>> round(m.precision, 4), round(m.recall, 4), round(m.get(), 4)
    (0.6591, 0.6591, 0.6591)
    """

    _formula = "BLANC"

    symmetric = True

    def _means(self, s) -> tuple[float, float, float]:
        # blanc_parts(s) averaged, without building its dict (the same operations, the same bits)
        tp, pp, tt, total = pair_counts(s)
        nk, nr = total - tt, total - pp
        if tt or pp:
            pc, rc = _ratio0(tp, pp), _ratio0(tp, tt)
            fc = harmonic(pc, rc)
            if not (nk or nr):
                return pc, rc, fc
        elif not (nk or nr):
            return 0.0, 0.0, 0.0
        tn = total - pp - tt + tp
        pn, rn = _ratio0(tn, nr), _ratio0(tn, nk)
        fn = harmonic(pn, rn)
        if not (tt or pp):
            return pn, rn, fn
        return (pc + pn) / 2, (rc + rn) / 2, (fc + fn) / 2

    @property
    def precision(self) -> float:
        """Mean precision over the link types present, ``(P_c + P_n)/2`` when both are. O(1)."""
        return self._means(self._table)[0]

    @property
    def recall(self) -> float:
        """Mean recall over the link types present, ``(R_c + R_n)/2`` when both are. O(1)."""
        return self._means(self._table)[1]

    @property
    def f1(self) -> float:
        """Mean F1 over the link types present, ``(F_c + F_n)/2`` when both are (what :meth:`get`
        returns). O(1)."""
        return self._means(self._table)[2]

    def value(self, s) -> float:
        """``(F_c + F_n) / 2`` from the stats ``s`` (one of them alone, or 0, at the boundaries given
        in the class docstring). O(1)."""
        return self._means(s)[2]


class LEA(_PRF):
    """LEA, the link-based entity-aware metric (Moosavi & Strube 2016). O(1).

    Recall ``Σ_i a[i]·res(i) / N``, ``res(i) = Σ_j C2(n[i,j]) / C2(a[i])`` (the share of key
    entity ``i``'s links that the response keeps), weighted by the entity's size; a key singleton
    resolves (``res = 1``) iff its mention is a response singleton. Precision swaps the roles; F1 is
    their harmonic mean and what ``get()`` returns. Computed from ELM's row and column sums and the
    singleton counts (see the module docstring); the empty table scores 0. Cost: O(1) per update,
    revert and read.

    >>> m = LEA()
    >>> for t, p in [(1, "a"), (1, "a"), (1, "b"), (2, "b"), (2, "b"), (3, "c")]:
    ...     m.update(t, p)
    >>> round(m.precision, 4), round(m.recall, 4), round(m.get(), 4)
    (0.6667, 0.6667, 0.6667)
    """

    _formula = "LEA"

    symmetric = True

    def _pr(self, s) -> tuple[float, float]:
        n = s.n
        if not n:
            return 0.0, 0.0
        both = s.both_singletons * ONE
        p = (s.elm_p_sum - s.pred_singletons * ONE + both) / (n * ONE)
        r = (s.elm_r_sum - s.true_singletons * ONE + both) / (n * ONE)
        return p, r


class BasicMergeDistance(NativeValue, Metric):
    """Basic merge distance (Menestrina, Whang & Garcia-Molina 2010): the fewest cluster splits and
    merges that turn the prediction into the truth, ``BMD = 2·cells - kT - kP``. O(1).

    Splitting every predicted cluster by true label takes ``cells - kP`` splits (a column with
    ``c`` non-zero cells splits ``c - 1`` times); each part then lies in one true cluster, and
    merging the parts of every true cluster takes ``cells - kT`` merges. An integer, returned as a
    float: 0 when the clusterings agree (and on the empty table), smaller is better, symmetric, no
    upper bound. A weight counts copies of one element, which join a cell already there: only the
    numbers of non-zero cells and of non-empty rows and columns, which the table keeps, move.
    Cost: O(1) per update, revert and read.

    >>> m = BasicMergeDistance()
    >>> for t, p in [(1, "a"), (1, "a"), (1, "b"), (2, "b"), (2, "b"), (3, "c")]:
    ...     m.update(t, p)
    >>> m.get()  # split b into its 1 and its 2, merge that 1 with a
    2.0
    >>> m.revert(1, "b"); m.get()
    0.0
    """

    _formula = "BasicMergeDistance"

    bigger_is_better = False
    bounds = (0.0, float("inf"))
    symmetric = True

    def value(self, s) -> float:
        """``2·cells - kT - kP`` from the stats ``s``, as a float. O(1)."""
        return float(2 * s.cells - s.k_true - s.k_pred)
