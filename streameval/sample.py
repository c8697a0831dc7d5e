"""Live estimates from a labelled sample of entities, with standard errors.

In production only a *sample* of true clusters (entities) is resolved: every element of a sampled
entity carries its true label, every other element carries none. :class:`SampleEstimator` counts
every element in its predicted cluster's size ``m_k`` (labelled or not) and each labelled element in
its cell ``n_ik`` (sampled entity ``i``, predicted cluster ``k``); from these it estimates the
population's pairwise, B³ and cluster metrics with the ratio-of-means estimators of Binette et al.
(arXiv:2210.01230), each with its standard error and a normal confidence interval. The definitions
are those of the project's metric reference, section "Estimation from a labelled sample".

Per sampled entity ``i`` of size ``c`` (``n = n_ik``, ``m = m_k``, sums over its cells):
``T2 = Σ n(n−1)`` (twice its kept links), ``X = Σ n·m``, ``r = Σ n²``, ``q = Σ n²/m``,
``f = Σ 2n²/(c+m)`` and ``δ = 1`` when the entity is exactly one predicted cluster. Each
estimator is a pair of per-entity terms ``(N_i, D_i)``, multiplied by the entity's weight
``w_i ∝ 1/π_i`` (constant factors common to every entity cancel in the ratio and are left out):

========================== ======================== ==========================
name                        ``N_i``                  ``D_i``
========================== ======================== ==========================
``pairwise_precision``      ``T2``                   ``X − c`` (``2TP + FP``)
``pairwise_recall``         ``T2``                   ``c(c−1)``
``pairwise_f``              ``2·T2``                 ``c² − 2c + X``
``bcubed_precision``        ``q``                    ``c``
``bcubed_recall``           ``r/c``                  ``c``
``bcubed_f``                ``f``                    ``c``
``entity_bcubed_precision`` ``q/c``                  ``1``
``entity_bcubed_recall``    ``r/c²``                 ``1``
``entity_bcubed_f``         ``f/c``                  ``1``
``cluster_recall``          ``δ``                    ``1``
``cluster_precision``       ``N·δ``                  ``K·c``
``cluster_f``               ``2N·δ``                 ``N + K·c``
========================== ======================== ==========================

(``N`` elements and ``K`` predicted clusters in the whole stream.) ``bcubed_*`` is the
record-averaged B³ of :class:`~streameval.BCubed` (its F the element-averaged F); the
``entity_bcubed_*`` forms average over entities, as er-evaluation reports them.

**Exactness.** ``c, T2, X, r, δ`` are integers; ``q`` and ``f`` are kept as sums of fixed-point
integer terms ``⌊n²·2⁹⁶/m⌋`` and ``⌊2n²·2⁹⁶/(c+m)⌋``, and every weighted term ``N_i``, ``D_i`` is
the fixed-point integer ``⌊value·2⁹⁶⌋`` of the exact rational. The state keeps the exact integer
sums ``ΣN, ΣD, ΣN², ΣD², ΣND`` of those terms, so update∘revert restores a bit-identical state,
a merge equals one stream, and a reading is O(1): the estimate and the standard error are exact
rational functions of the integer sums, rounded once to a float.

**Cost.** An update costs O(1) plus the sampled entities that share the element's predicted
cluster (its size enters their terms); a labelled update also recomputes its own entity's ``f``
terms, O(cells of the entity). A reading costs O(1) per estimate.

>>> import streameval as se
>>> est = se.SampleEstimator(design="uniform")
>>> for t, p in [("a", 1), ("a", 1), ("a", 2), ("b", 3), ("b", 2), (None, 4), (None, 4),
...              ("c", 4)]:
...     est.update(t, p)
>>> e = est.get()["pairwise_precision"]
>>> round(e.value, 6), round(e.stderr, 6)
(0.388889, 0.254588)
>>> est.n_sampled, est.n, est.n_labelled
(3, 8, 6)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

from ._validate import (
    MAX_TOTAL,
    check_label,
    check_ordered,
    check_same_settings,
    check_total,
    check_weight,
    is_missing,
)
from .errors import InvalidStateError, SampleDesignError, UnknownElementError
from .labels import same_label
from .sampling import Estimate, SampleDesign, normal_quantile, positive_weight
from .sampling import probability as check_probability
from .state import check_header, header, label_from_json, label_to_json

__all__ = ["Estimate", "SampleDesign", "SampleEstimator", "ESTIMATES", "ratio_estimate"]

FRAC = 96
"""Bits of the fixed point of every non-integer term (``⌊x·2**96⌋``)."""
_ONE = 1 << FRAC
_PLAIN = (int, str)  # label types that hash and compare without surprises (the fast path)


# --- the terms -------------------------------------------------------------------------------
# One definition of each fixed-point cell term; the whole-entity recomputation and the O(1)
# incremental path both call these.


def q_term(n: int, m: int) -> int:
    """``⌊n²·2**96 / m⌋``: a cell's share of ``q = Σ n²/m`` (B³ precision). O(1).

    >>> q_term(1, 2) == 2**95
    True
    """
    return (n * n << FRAC) // m


def f_term(n: int, c: int, m: int) -> int:
    """``⌊2n²·2**96 / (c + m)⌋``: a cell's share of ``f = Σ 2n²/(c+m)`` (element-averaged B³ F,
    ``2n/(c+m)`` per element). O(1).

    >>> f_term(2, 2, 2) == 2 * 2**96
    True
    """
    return (2 * n * n << FRAC) // (c + m)


def _fix(num: int, den: int) -> int:
    """``⌊num/den · 2**96⌋`` for integers ``num ≥ 0``, ``den > 0``."""
    return (num << FRAC) // den


# The weighted terms ("atoms") of one entity, each ⌊value·2**96⌋. An estimator's N and D are
# integer combinations of atoms (coefficients may be the population's N and K).
_A_T2, _A_PD, _A_RD, _A_FD, _A_EBP, _A_EBR, _A_EBF, _A_W, _A_BP, _A_BC, _A_BR, _A_BF, _A_DELTA = (
    range(13)
)
_N_ATOMS = 13

# name -> (N terms, D terms); each term (coefficient, atom); a coefficient is an int or one of
# "N" (elements in the stream), "2N", "K" (predicted clusters).
_SPECS: dict[str, tuple[tuple[tuple[Any, int], ...], tuple[tuple[Any, int], ...]]] = {
    "pairwise_precision": (((1, _A_T2),), ((1, _A_PD),)),
    "pairwise_recall": (((1, _A_T2),), ((1, _A_RD),)),
    "pairwise_f": (((2, _A_T2),), ((1, _A_FD),)),
    "bcubed_precision": (((1, _A_BP),), ((1, _A_BC),)),
    "bcubed_recall": (((1, _A_BR),), ((1, _A_BC),)),
    "bcubed_f": (((1, _A_BF),), ((1, _A_BC),)),
    "entity_bcubed_precision": (((1, _A_EBP),), ((1, _A_W),)),
    "entity_bcubed_recall": (((1, _A_EBR),), ((1, _A_W),)),
    "entity_bcubed_f": (((1, _A_EBF),), ((1, _A_W),)),
    "cluster_precision": ((("N", _A_DELTA),), (("K", _A_BC),)),
    "cluster_recall": (((1, _A_DELTA),), ((1, _A_W),)),
    "cluster_f": ((("2N", _A_DELTA),), (("N", _A_W), ("K", _A_BC))),
}
ESTIMATES: tuple[str, ...] = tuple(_SPECS)
"""The names of every estimate, in reading order."""


def _pairs() -> tuple[tuple[int, int], ...]:
    out: set[tuple[int, int]] = set()
    for num, den in _SPECS.values():
        for xs, ys in ((num, num), (den, den), (num, den)):
            for _, a in xs:
                for _, b in ys:
                    out.add((min(a, b), max(a, b)))
    return tuple(sorted(out))


_PAIRS = _pairs()
_PAIR_INDEX = {p: i for i, p in enumerate(_PAIRS)}


def ratio_estimate(n: int, sn, sd, snn, sdd, snd, z: float) -> Estimate:
    """The bias-adjusted ratio of means and its linearised standard error from the sums of a
    sample of ``n`` pairs ``(N_i, D_i)``: ``sn = ΣN``, ``sd = ΣD``, ``snn = ΣN²``, ``sdd = ΣD²``,
    ``snd = ΣND`` (exact ints or Fractions), with ``z`` the normal quantile of the interval.

    With ``Ā = sd/n``, ``B̄ = sn/n``: value ``(1 + mean(D (N/B̄ − D/Ā)) / ((n−1) Ā)) · B̄/Ā``
    (0 when ``B̄ = 0``; ``B̄/Ā`` when ``n = 1``), standard error
    ``(B̄/Ā) · sqrt(Σ (D/Ā − N/B̄)² / (n (n−1)))``. Both are computed as exact rationals and
    rounded once, so the sum of squares cannot cancel: the standard error is exactly
    ``sqrt(n·(sdd·sn² + snn·sd² − 2·snd·sn·sd) / ((n−1)·sd⁴))`` rounded. O(1).

    >>> ratio_estimate(2, 3, 4, 5, 8, 6, 1.96)
    Estimate(value=0.75, stderr=0.25, low=0.26, high=1.24, reason=None)
    """
    nan = math.nan
    if n == 0:
        return Estimate(nan, nan, nan, nan, "no sampled entity")
    if sd == 0:
        if sn == 0:
            return Estimate(0.0, nan, nan, nan, "every sampled term is 0")
        return Estimate(nan, nan, nan, nan, "the denominator terms sum to 0")  # pragma: no cover
    if sn == 0:
        value = 0.0
    elif n == 1:
        value = _div(sn, sd)
    else:
        value = _div((n - 1) * sn * sd * sd + n * (snd * sd - sdd * sn), (n - 1) * sd**3)
    if n == 1:
        return Estimate(value, nan, nan, nan, "one sampled entity: the standard error is undefined")
    if sn == 0:
        return Estimate(value, nan, nan, nan, "every numerator term is 0: the standard error is "
                        "undefined")
    var = _div(n * (sdd * sn * sn + snn * sd * sd - 2 * snd * sn * sd), (n - 1) * sd**4)
    se = math.sqrt(var)
    return Estimate(value, se, value - z * se, value + z * se)


def _div(a, b) -> float:
    """``a / b`` rounded once (ints divide exactly rounded; Fractions through their ints)."""
    if isinstance(a, Fraction) or isinstance(b, Fraction):
        q = Fraction(a) / Fraction(b)
        return q.numerator / q.denominator
    return a / b


# --- the state -------------------------------------------------------------------------------

# An entity's record: [c, T2, X, r, Q, F, delta, cells {k: n}, atoms tuple, products tuple]
_C, _T2, _X, _R, _Q, _F, _D, _CELLS, _ATOMS, _PRODS = range(10)


class SampleEstimator:
    """Streaming estimates of pairwise, B³ and cluster metrics from a labelled sample of entities.

    ``update(y_true, y_pred, w=1)`` adds ``w`` copies of an element; a missing ``y_true`` (``None``
    or NaN, the library's one missing rule) means the element's entity is not in the sample.
    ``revert`` takes the same arguments. A late label (an element first seen unlabelled whose
    entity is then resolved) is ``revert(None, p)`` then ``update(t, p)``. :meth:`get` reads
    ``{name: Estimate}`` for every name of :data:`ESTIMATES`.

    ``design``: ``"uniform"``, ``"size"``, a :class:`SampleDesign`, or a mapping of explicit
    weights per sampled entity. ``confidence``: the level of the normal intervals.

    Cost: ``update``/``revert`` O(1) plus the sampled entities with a cell in the element's
    predicted cluster (plus the cells of its own entity when labelled); ``get`` O(1) per estimate;
    ``merge`` and ``update_many`` O(the other's cells and columns plus the touched entities'
    cells).

    >>> est = SampleEstimator(design="size")
    >>> for t, p in [("a", 1), ("a", 1), ("b", 2), ("b", 2), (None, 2), ("c", 3)]:
    ...     est.update(t, p)
    >>> round(est.get()["pairwise_precision"].value, 4)
    0.6111
    >>> est.revert(None, 2); est.update("b", 2)   # a late label: the element is in entity b
    >>> est.get()["pairwise_precision"].value
    1.0
    """

    def __init__(self, design: Any = "uniform", *, confidence: float = 0.95):
        self._z = normal_quantile(confidence)
        self.design = SampleDesign.of(design)
        self.confidence = float(confidence)
        self._m: dict[Any, int] = {}  # predicted cluster -> size (all elements)
        self._col: dict[Any, dict[Any, int]] = {}  # predicted cluster -> {entity: n} (labelled)
        self._ent: dict[Any, list] = {}  # entity -> record
        self._n = 0
        self._n_labelled = 0
        self._sums = [0] * _N_ATOMS
        self._psums = [0] * len(_PAIRS)

    # -- reading ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Elements in the stream, labelled or not."""
        return self._n

    @property
    def n_labelled(self) -> int:
        """Elements carrying a true label (of a sampled entity)."""
        return self._n_labelled

    @property
    def n_sampled(self) -> int:
        """Sampled entities with at least one element in the stream."""
        return len(self._ent)

    @property
    def k_pred(self) -> int:
        """Non-empty predicted clusters."""
        return len(self._m)

    @property
    def labelled_share(self) -> float:
        """``n_labelled / n`` (NaN when empty)."""
        return self._n_labelled / self._n if self._n else math.nan

    def sums(self, name: str) -> tuple[int, int, int, int, int, int]:
        """``(n, ΣN, ΣD, ΣN², ΣD², ΣND)`` of estimator ``name``, exact integers in the fixed point
        ``2**96`` (squares ``2**192``). O(1)."""
        num, den = _SPECS[name]
        co = self._coefficients()
        s, p = self._sums, self._psums

        def lin(terms):
            return sum(co(c) * s[a] for c, a in terms)

        def quad(xs, ys):
            return sum(co(c1) * co(c2) * p[_PAIR_INDEX[(min(a, b), max(a, b))]]
                       for c1, a in xs for c2, b in ys)

        return (len(self._ent), lin(num), lin(den), quad(num, num), quad(den, den),
                quad(num, den))

    def _coefficients(self) -> Callable[[Any], int]:
        n, k = self._n, len(self._m)
        table = {"N": n, "2N": 2 * n, "K": k}
        return lambda c: c if c.__class__ is int else table[c]

    def estimate(self, name: str) -> Estimate:
        """The :class:`Estimate` named ``name`` (one of :data:`ESTIMATES`). O(1).

        Each estimate is a ratio of means over the ``n`` sampled entities, ``Σ w_i N_i / Σ w_i D_i``
        with the entity's numerator and denominator terms ``(N_i, D_i)`` of the metric (e.g. for
        pairwise precision, the entity's pairs linked correctly and its pairs linked by the
        prediction), bias-adjusted and with its linearised standard error: :func:`ratio_estimate`.

        >>> est = SampleEstimator()
        >>> for t, p in [("a", 1), ("a", 1), ("b", 1)]:
        ...     est.update(t, p)
        >>> est.estimate("pairwise_recall").value       # every true pair is predicted
        1.0

        Pairwise precision's terms ``(N, D) = (T2, X − c)``: entity ``a`` ``(2, 2·3 − 2)``,
        ``b`` ``(0, 1·3 − 1)``, so ``n = 2``, ``ΣN = 2``, ``ΣD = 6``, ``ΣND = 8``, ``ΣD² = 20``;
        the plain ratio is ``2/6`` (1 of the 3 predicted pairs is true) and the bias-adjusted
        value ``((n−1)·ΣN·(ΣD)² + n·(ΣND·ΣD − ΣD²·ΣN)) / ((n−1)·(ΣD)³) = 88/216``:

        >>> est.estimate("pairwise_precision").value == 88 / 216
        True
        """
        if name not in _SPECS:
            raise KeyError(f"unknown estimate {name!r}; known: {', '.join(ESTIMATES)}")
        return ratio_estimate(*self.sums(name), self._z)

    def get(self) -> dict[str, Estimate]:
        """Every estimate, ``{name: Estimate}`` (each by :meth:`estimate`'s formula). O(1) per
        estimate."""
        return {name: self.estimate(name) for name in ESTIMATES}

    # -- changing -----------------------------------------------------------------------------
    def update(self, y_true, y_pred, w=1) -> None:
        """Add ``w`` copies of an element (``y_true`` missing: not in the sample). Cost: O(1) plus
        the sampled entities with a cell in predicted cluster ``y_pred`` (plus the cells of
        ``y_true``'s entity when labelled)."""
        # fast path: an unlabelled element of a predicted cluster without sampled cells changes
        # one column size (the same result as _change; the checks it skips cannot fail here)
        if (y_true is None and w.__class__ is int and w > 0 and y_pred.__class__ in _PLAIN
                and y_pred == y_pred and y_pred not in self._col and self._n + w < MAX_TOTAL):
            m = self._m
            m[y_pred] = m.get(y_pred, 0) + w
            self._n += w
            return
        self._change(y_true, y_pred, check_weight(w), revert=False)

    def update_many(self, y_true, y_pred, w=None) -> None:
        """Add many elements at once (sequences of equal length; ``w`` a sequence or ``None``):
        the same state as :meth:`update` element by element. Every element is checked before
        any is added. O(elements) dict operations plus one recomputation of each touched entity
        (O(its cells)) — the from-scratch path.

        >>> a, b = SampleEstimator(), SampleEstimator()
        >>> a.update_many(["x", None, "x"], [1, 1, 2])
        >>> for t, p in [("x", 1), (None, 1), ("x", 2)]:
        ...     b.update(t, p)
        >>> a == b
        True
        """
        for name, seq in (("y_true", y_true), ("y_pred", y_pred), ("w", w)):
            if isinstance(seq, (str, bytes)):
                raise ValueError(f"{name} must be a sequence, got a single {type(seq).__name__}")
            if seq is not None:
                check_ordered(seq, name)
        if len(y_true) != len(y_pred) or (w is not None and len(w) != len(y_pred)):
            raise ValueError("y_true, y_pred and w must have the same length")
        weights = [1] * len(y_pred) if w is None else [check_weight(x) for x in w]
        cols: dict[Any, int] = {}
        cells: dict[Any, dict[Any, int]] = {}
        total = labelled = 0
        plain = _PLAIN
        for t, p, x in zip(y_true, y_pred, weights):
            if p.__class__ not in plain or p != p:
                check_label(p, "y_pred", "")
            cols[p] = cols.get(p, 0) + x
            total += x
            if t is None or (t.__class__ not in plain and is_missing(t)):
                continue
            if t.__class__ not in plain:
                check_label(t, "y_true", "")
            row = cells.get(t)
            if row is None:
                if not self.design.declared(t):
                    self.design.weight_of(t, 1)  # raises, naming the entity
                row = cells[t] = {}
            row[p] = row.get(p, 0) + x
            labelled += x
        check_total(self._n, total, "the estimator")
        other = SampleEstimator(SampleDesign.of(self.design), confidence=self.confidence)
        other._m, other._n, other._n_labelled = cols, total, labelled
        for e, row in cells.items():
            other._ent[e] = [0, 0, 0, 0, 0, 0, 0, row, (), ()]
        self.merge(other)

    def revert(self, y_true, y_pred, w=1) -> None:
        """Take out ``w`` copies of an element added by :meth:`update` (same arguments). Cost as
        :meth:`update`."""
        self._change(y_true, y_pred, check_weight(w), revert=True)

    def declare(self, entity, *, weight=None, probability=None) -> None:
        """Add a sampled entity to an explicit design, with its weight or inclusion probability
        (exactly one). Declaring it again with another weight is an error. O(1)."""
        if (weight is None) == (probability is None):
            raise SampleDesignError("declare takes exactly one of weight= or probability=")
        check_label(entity, "entity", "")
        wt = positive_weight(weight) if probability is None else 1 / check_probability(probability)
        self.design.declare(entity, wt)

    def _change(self, y_true, y_pred, w: int, revert: bool) -> None:
        check_label(y_pred, "y_pred", "")
        labelled = not is_missing(y_true)
        if labelled:
            check_label(y_true, "y_true", "")
            if not self.design.declared(y_true):
                self.design.weight_of(y_true, 1)  # raises, naming the entity
        m_old = self._m.get(y_pred, 0)
        if revert:
            if labelled:
                rec = self._ent.get(y_true)
                have = rec[_CELLS].get(y_pred, 0) if rec is not None else 0
            else:
                col = self._col.get(y_pred)
                have = m_old - (sum(col.values()) if col else 0)
            if have < w:
                what = repr(y_true) if labelled else "an unlabelled element"
                raise UnknownElementError(
                    f"cannot revert {w} cop{'y' if w == 1 else 'ies'} of ({what}, {y_pred!r}): "
                    f"the estimator holds {have}"
                )
            dw = -w
        else:
            check_total(self._n, w, "the estimator")
            dw = w
        m_new = m_old + dw
        # the other sampled entities of this column: their X, q and f terms see m change
        col = self._col.get(y_pred)
        if col:
            for e, n in col.items():
                if labelled and same_label(e, y_true):  # never broadcast (numpy scalar, tuple)
                    continue
                rec = self._ent[e]
                c = rec[_C]
                rec[_X] += n * dw
                rec[_Q] += q_term(n, m_new) - q_term(n, m_old)
                rec[_F] += f_term(n, c, m_new) - f_term(n, c, m_old)
                rec[_D] = 1 if (n == c == m_new and len(rec[_CELLS]) == 1) else 0
                self._refresh(e, rec)
        if m_new:
            self._m[y_pred] = m_new
        else:
            del self._m[y_pred]
        self._n += dw
        if labelled:
            self._n_labelled += dw
            rec = self._ent.get(y_true)
            if rec is None:
                rec = self._ent[y_true] = [0, 0, 0, 0, 0, 0, 0, {}, (0,) * _N_ATOMS,
                                           (0,) * len(_PAIRS)]
            cells = rec[_CELLS]
            n_new = cells.get(y_pred, 0) + dw
            if n_new:
                cells[y_pred] = n_new
                self._col.setdefault(y_pred, {})[y_true] = n_new
            else:
                del cells[y_pred]
                col = self._col[y_pred]
                del col[y_true]
                if not col:
                    del self._col[y_pred]
            if cells:
                self._recompute(rec)
                self._refresh(y_true, rec)
            else:
                self._refresh(y_true, None)
                del self._ent[y_true]

    def _recompute(self, rec: list) -> None:
        """Every term of one entity from its cells and the current column sizes. O(cells)."""
        m = self._m
        cells = rec[_CELLS]
        c = sum(cells.values())
        t2 = x = r = q = f = 0
        for k, n in cells.items():
            mk = m[k]
            t2 += n * (n - 1)
            x += n * mk
            r += n * n
            q += q_term(n, mk)
            f += f_term(n, c, mk)
        rec[_C], rec[_T2], rec[_X], rec[_R], rec[_Q], rec[_F] = c, t2, x, r, q, f
        rec[_D] = 1 if len(cells) == 1 and c == m[next(iter(cells))] else 0

    def _refresh(self, entity, rec: list | None) -> None:
        """Replace the entity's atoms and products in the running sums (``None``: remove)."""
        if rec is None:
            atoms: tuple = (0,) * _N_ATOMS
            prods: tuple = (0,) * len(_PAIRS)
            old = self._ent[entity]
        else:
            old = rec
            wt = self.design.weight_of(entity, rec[_C])
            atoms = _atoms(rec, wt.numerator, wt.denominator)
            prods = tuple(atoms[a] * atoms[b] for a, b in _PAIRS)
        s, p = self._sums, self._psums
        for i, (a, b) in enumerate(zip(old[_ATOMS], atoms)):
            if a != b:
                s[i] += b - a
        for i, (a, b) in enumerate(zip(old[_PRODS], prods)):
            if a != b:
                p[i] += b - a
        old[_ATOMS], old[_PRODS] = atoms, prods

    # -- merge and saved state ----------------------------------------------------------------
    def merge(self, other: SampleEstimator) -> None:
        """Add every element of ``other`` (same design; explicit weights must agree; the same
        ``confidence``). The result equals one estimator fed both streams. Refused before anything
        changes: another kind of design or another weight for an entity
        (:class:`~streameval.errors.SampleDesignError`), another ``confidence``
        (:class:`~streameval.errors.SettingsMismatchError`: the merged estimator would report its
        own level over the other's stream). O(other's cells and columns + affected entities).

        >>> a, b = SampleEstimator(), SampleEstimator()
        >>> a.update("e", 1); b.update("e", 1); b.update(None, 2)
        >>> a.merge(b); a.n, a.n_labelled
        (3, 2)
        >>> a.merge(SampleEstimator(confidence=0.9))
        Traceback (most recent call last):
        ...
        streameval.errors.SettingsMismatchError: cannot merge a SampleEstimator with confidence=0.9 into one with confidence=0.95: the confidence must be the same in both
        """
        if not isinstance(other, SampleEstimator):
            raise TypeError(f"can only merge a SampleEstimator, got {type(other).__name__}")
        if self.design.kind != other.design.kind:
            raise SampleDesignError(
                f"cannot merge a {other.design.kind!r} design into a {self.design.kind!r} one")
        check_same_settings("SampleEstimator", [("confidence", self.confidence, other.confidence)])
        merged = SampleDesign.of(self.design)
        for k, wt in other.design.declared_weights().items():
            merged.declare(k, wt)  # raises when a weight differs
        check_total(self._n, other._n, "the estimator")
        self.design = merged
        for k, mk in other._m.items():
            self._m[k] = self._m.get(k, 0) + mk
        self._n += other._n
        self._n_labelled += other._n_labelled
        touched: set[Any] = set()
        for k in other._m:
            touched.update(self._col.get(k, ()))
        for e, orec in other._ent.items():
            rec = self._ent.get(e)
            if rec is None:
                rec = self._ent[e] = [0, 0, 0, 0, 0, 0, 0, {}, (0,) * _N_ATOMS,
                                      (0,) * len(_PAIRS)]
            cells = rec[_CELLS]
            for k, n in orec[_CELLS].items():
                cells[k] = cells.get(k, 0) + n
                self._col.setdefault(k, {})[e] = cells[k]
            touched.add(e)
        for e in touched:
            rec = self._ent[e]
            self._recompute(rec)
            self._refresh(e, rec)

    def to_dict(self) -> dict[str, Any]:
        """The state as JSON-ready data: the design, the column sizes and the labelled cells (the
        terms are recomputed on load). O(columns + cells)."""
        return {
            **header("streameval.SampleEstimator", 1),
            "design": self.design.to_json(),
            "confidence": self.confidence,
            "columns": [[label_to_json(k), m] for k, m in self._m.items()],
            "cells": [[label_to_json(e), label_to_json(k), n]
                      for e, rec in self._ent.items() for k, n in rec[_CELLS].items()],
        }

    @classmethod
    def from_dict(cls, state: Any) -> SampleEstimator:
        """Rebuild an estimator saved by :meth:`to_dict`; a malformed or inconsistent state raises
        :class:`~streameval.errors.InvalidStateError`. O(columns + cells)."""
        check_header(state, "streameval.SampleEstimator", 1,
                     ("design", "confidence", "columns", "cells"))
        try:
            d = state["design"]
            if isinstance(d, str):
                design = SampleDesign(d)
            else:
                design = SampleDesign("explicit", {label_from_json(k): Fraction(a, b)
                                                   for k, a, b in d})
                if any(w <= 0 for w in design.declared_weights().values()):
                    raise ValueError("a weight is not positive")
            est = cls(design, confidence=state["confidence"])
            for k, mk in state["columns"]:
                if not (mk.__class__ is int and mk > 0):
                    raise ValueError(f"bad column size {mk!r}")
                est._m[label_from_json(k)] = mk
                est._n += mk
            for e, k, n in state["cells"]:
                e, k = label_from_json(e), label_from_json(k)
                if not (n.__class__ is int and n > 0) or k not in est._m:
                    raise ValueError(f"bad cell {e!r}, {k!r}, {n!r}")
                if not design.declared(e):
                    raise ValueError(f"entity {e!r} is outside the declared sample")
                rec = est._ent.setdefault(e, [0, 0, 0, 0, 0, 0, 0, {}, (0,) * _N_ATOMS,
                                              (0,) * len(_PAIRS)])
                if k in rec[_CELLS]:
                    raise ValueError(f"cell {e!r}, {k!r} twice")
                rec[_CELLS][k] = n
                est._col.setdefault(k, {})[e] = n
                est._n_labelled += n
            for k, col in est._col.items():
                if sum(col.values()) > est._m[k]:
                    raise ValueError(f"column {k!r} holds more labelled elements than its size")
            for e, rec in est._ent.items():
                est._recompute(rec)
                est._refresh(e, rec)
        except (TypeError, ValueError, KeyError, ZeroDivisionError) as exc:
            if isinstance(exc, InvalidStateError):
                raise
            raise InvalidStateError(f"malformed SampleEstimator state: {exc}") from None
        return est

    def __eq__(self, other: object) -> bool:
        """Equal design, column sizes, cells and running sums (the whole state). O(state)."""
        if not isinstance(other, SampleEstimator):
            return NotImplemented
        return (self.design == other.design and self.confidence == other.confidence
                and self._m == other._m and self._n == other._n
                and self._n_labelled == other._n_labelled
                and {e: r[_CELLS] for e, r in self._ent.items()}
                == {e: r[_CELLS] for e, r in other._ent.items()}
                and {e: r[:_CELLS] + r[_ATOMS:] for e, r in self._ent.items()}
                == {e: r[:_CELLS] + r[_ATOMS:] for e, r in other._ent.items()}
                and self._sums == other._sums and self._psums == other._psums)

    __hash__ = None  # type: ignore[assignment]

    def _check(self) -> None:
        """Assert every invariant: the terms and the sums equal their recomputation. O(state)."""
        n_lab = 0
        sums = [0] * _N_ATOMS
        psums = [0] * len(_PAIRS)
        for e, rec in self._ent.items():
            assert rec[_CELLS], e
            fresh = list(rec)
            self._recompute(fresh)
            assert fresh[:_CELLS] == rec[:_CELLS], (e, fresh[:_CELLS], rec[:_CELLS])
            wt = self.design.weight_of(e, rec[_C])
            atoms = _atoms(rec, wt.numerator, wt.denominator)
            assert atoms == rec[_ATOMS], e
            for i, a in enumerate(atoms):
                sums[i] += a
            for i, (a, b) in enumerate(_PAIRS):
                psums[i] += atoms[a] * atoms[b]
            for k, n in rec[_CELLS].items():
                assert self._col[k][e] == n
            n_lab += rec[_C]
        assert sums == self._sums and psums == self._psums
        assert n_lab == self._n_labelled
        assert sum(self._m.values()) == self._n
        assert all(v > 0 for v in self._m.values())
        for k, col in self._col.items():
            assert col and sum(col.values()) <= self._m[k]
            for e, n in col.items():
                assert self._ent[e][_CELLS][k] == n

    def __repr__(self) -> str:
        return (f"SampleEstimator(design={self.design!r}, n={self._n}, "
                f"n_labelled={self._n_labelled}, n_sampled={len(self._ent)})")


def _atoms(rec: list, wn: int, wd: int) -> tuple[int, ...]:
    """The 13 weighted fixed-point terms of one entity with weight ``wn/wd``. O(1)."""
    c, t2, x, r, q, f, d = rec[_C], rec[_T2], rec[_X], rec[_R], rec[_Q], rec[_F], rec[_D]
    cw = c * wd
    c2w = cw * c
    return (
        _fix(t2 * wn, wd),  # T2
        _fix((x - c) * wn, wd),  # 2TP + FP
        _fix(c * (c - 1) * wn, wd),  # 2·C(c,2)
        _fix((c * c - 2 * c + x) * wn, wd),  # pairwise F denominator ×2
        q * wn // cw,  # q/c
        _fix(r * wn, c2w),  # r/c²
        f * wn // cw,  # f/c
        _fix(wn, wd),  # w
        q * wn // wd,  # q
        _fix(c * wn, wd),  # c
        _fix(r * wn, cw),  # r/c
        f * wn // wd,  # f
        _fix(d * wn, wd),  # δ
    )


def from_pairs(pairs: Iterable[tuple[Any, Any]], design: Any = "uniform") -> SampleEstimator:
    """An estimator fed ``(y_true, y_pred)`` pairs (``y_true`` missing when unlabelled). O(len).

    >>> from_pairs([("a", 1), ("a", 1), (None, 1)]).get()["pairwise_recall"].value
    1.0
    """
    est = SampleEstimator(design)
    for t, p in pairs:
        est.update(t, p)
    return est
