"""The sufficient statistics of a contingency table, and the exact terms they are sums of.

Every O(1) extrinsic metric is a function of a handful of global sums over the non-zero cells
``n[i,j]``, the true clusters (row sums ``a[i]``) and the predicted clusters (column sums ``b[j]``).
:class:`~streameval.Contingency` keeps these sums current under update, revert and merge;
distributed engines compute the same sums in bulk (group by cell, by row, by column) and fill a
:class:`ContingencyStats`. The metric views turn either into values with the same code, so the two
cannot disagree.

Exactness. Sums of rationals and logarithms are kept as *fixed-point integers*: each term is a
deterministic function of integer counts, rounded once to a multiple of ``2**-64`` (``ONE = 2**64``),
and the sum is a Python ``int``. Adding and subtracting the same term is then exact, so update
followed by revert restores a bit-identical state, and a merge or a rebuild from the counts gives
the same bits as a stream. The rounding error of a sum is below ``(number of terms) * 2**-64``
(plus, for ``x log x``, the float's own ``2**-53`` relative error per term) and never accumulates.

>>> s = ContingencyStats.from_cells([("a", "x", 2), ("a", "y", 1), ("b", "y", 3)])
>>> s.n, s.cells, s.k_true, s.k_pred
(6, 3, 2, 2)
>>> s.sum_cell_sq, s.sum_row_sq, s.sum_col_sq
(14, 18, 20)
>>> s.sum_col_max, s.sum_row_max
(5, 5)
>>> s.bcubed_p_sum / ONE  # sum over predicted clusters of Q[j] / b[j] = 4/2 + 10/4
4.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import NamedTuple

FRAC_BITS = 64
ONE = 1 << FRAC_BITS
from ._validate import MAX_TOTAL  # noqa: E402,F401  (re-exported: the table's bound)

_ONE_F = float(ONE)
_log = math.log


def xlogx(x: int) -> int:
    """``int(x * log(x) * 2**64)``, the float product truncated to an int (0 for ``x <= 1``): one term
    of the entropy sums. O(1).

    >>> xlogx(1), xlogx(0)
    (0, 0)
    >>> abs(xlogx(3) / ONE - 3 * math.log(3)) < 1e-15
    True
    """
    return int(x * _log(x) * _ONE_F) if x > 1 else 0


def bcubed_term(sq: int, size: int) -> int:
    """``sq / size`` in fixed point: a cluster's share of ``N * BCubed precision`` (or recall).

    ``sq`` is the cluster's sum of squared cell counts. Cost O(1).

    >>> bcubed_term(5, 3) == (5 * ONE) // 3
    True
    """
    return (sq << FRAC_BITS) // size if size else 0


def elm_term(sq: int, size: int) -> int:
    """``(sq - size) / (size - 1)`` in fixed point, and ``1`` for a singleton cluster.

    A cluster's share of ``N * ELM precision`` (or recall): each of its elements scores
    ``(n - 1) / (size - 1)``, summed over its cells. Cost O(1).

    >>> elm_term(1, 1) == ONE, elm_term(2, 2) == 0, elm_term(4, 2) == 2 * ONE
    (True, True, True)
    """
    if size > 1:
        return ((sq - size) << FRAC_BITS) // (size - 1)
    return ONE if size == 1 else 0


def precision_loss(sq: int, size: int, term=bcubed_term) -> int:
    """``size − term(sq, size)`` in fixed point: what a cluster of ``size`` elements (sum of
    squared cell counts ``sq``) loses of ``N * precision`` under the per-cluster ``term``
    (:func:`bcubed_term`: ``b − Q/b``, the expected elements of other entities per record
    times ``b``; :func:`elm_term`: ELM's). The one formula of the cluster ranking's costs and the
    error account's merging clusters. Cost O(1).

    >>> precision_loss(5, 3) == 3 * ONE - (5 * ONE) // 3, precision_loss(2, 2, elm_term) == 2 * ONE
    (True, True)
    """
    return size * ONE - term(sq, size)


def beta_ratio(beta: float) -> tuple[int, int]:
    """``beta**2`` as an exact integer ratio ``(num, den)``; ``beta`` must be finite and > 0.

    >>> beta_ratio(1.0), beta_ratio(2), beta_ratio(0.5)
    ((1, 1), (4, 1), (1, 4))
    """
    b = float(beta)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"beta must be a finite number > 0, got {beta!r}")
    r = Fraction(b) ** 2
    return r.numerator, r.denominator


def f_term(kind: str, num: int, den: int, n: int, a: int, b: int) -> int:
    """``n * F_e`` in fixed point for the ``n`` elements of a cell with row sum ``a``, column sum ``b``.

    With ``beta**2 = num/den``, BCubed ``F_e = (1+beta²) n / (beta² a + b)`` and ELM
    ``F_e = (1+beta²)(n-1) / (beta²(a-1) + (b-1))``, and ``1`` when ``a = b = 1``. Cost O(1).

    >>> abs(f_term("bcubed", 1, 1, 1, 2, 1) / ONE - 2 / 3) < 1e-15  # 2n/(a+b) = 2/3
    True
    >>> f_term("elm", 1, 1, 1, 1, 1) == ONE, f_term("elm", 1, 1, 1, 2, 1)
    (True, 0)
    """
    if kind == "elm":
        d = num * (a - 1) + den * (b - 1)
        if d == 0:
            return n << FRAC_BITS
        return ((num + den) * n * (n - 1) << FRAC_BITS) // d
    return ((num + den) * n * n << FRAC_BITS) // (num * a + den * b)


class SideStats(NamedTuple):
    """The names of one side's sums of :func:`side_terms`, one field a term (in the order of the
    terms; the native core's ``SideSums`` has the same fields). A named tuple: O(1) per access.

    >>> SIDE_STATS["row"].sq, SIDE_STATS["col"].singletons
    ('sum_row_sq', 'pred_singletons')
    """

    sq: str
    xlogx: str
    bcubed: str
    elm: str
    max: str
    singletons: str


SIDE_STATS = {
    "row": SideStats("sum_row_sq", "sum_row_xlogx", "bcubed_r_sum", "elm_r_sum", "sum_row_max",
                     "true_singletons"),
    "col": SideStats("sum_col_sq", "sum_col_xlogx", "bcubed_p_sum", "elm_p_sum", "sum_col_max",
                     "pred_singletons"),
}
"""The sums of :func:`side_terms` over the true clusters (rows) and the predicted clusters
(columns), by term (``SIDE_STATS["col"].max == "sum_col_max"``): the one place that names them."""


def side_terms(size: int, sq: int, mx: int) -> tuple:
    """A cluster's share of each per-side sum, in the order of :data:`SIDE_STATS`.

    ``size`` is the cluster's size, ``sq`` its sum of squared cell counts, ``mx`` its largest
    cell: ``(size², xlogx(size), bcubed_term(sq, size), elm_term(sq, size), mx, size == 1)``.
    The one definition of the per-side terms: the reference table, :meth:`ContingencyStats.from_cells`
    and the engines' :func:`~streameval.distributed.stats_from_histograms` call it, and the native
    core's ``side_terms`` (``src/core.rs``) is its twin (the differential tests hold them equal).
    An empty cluster's terms are all 0. Cost O(1).

    >>> side_terms(2, 2, 1) == (4, xlogx(2), ONE, 0, 1, 0)
    True
    >>> side_terms(0, 0, 0)
    (0, 0, 0, 0, 0, 0)
    """
    return (size * size, xlogx(size), bcubed_term(sq, size), elm_term(sq, size), mx,
            int(size == 1))


def add_side_terms(stats, side: str, size: int, sq: int, mx: int, times: int = 1) -> None:
    """Add ``times`` clusters' :func:`side_terms` (negative ``times`` removes) to ``stats``'s
    sums of ``side`` (``"row"`` or ``"col"``): any object with those attributes. O(1).

    Each sum ``Σ`` over the side's clusters gains ``times ×`` the cluster's term (``size²``,
    ``xlogx(size)``, ...): a cluster of 2 in one cell adds ``2² = 4`` to ``sum_row_sq``.

    >>> s = ContingencyStats()
    >>> add_side_terms(s, "row", 2, 4, 2)
    >>> s.sum_row_sq, s.sum_row_max, s.true_singletons
    (4, 2, 0)
    >>> add_side_terms(s, "row", 2, 4, 2, times=-1); s.sum_row_sq
    0
    """
    for name, term in zip(SIDE_STATS[side], side_terms(size, sq, mx)):
        setattr(stats, name, getattr(stats, name) + term * times)


@dataclass
class ContingencyStats:
    """The sums every O(1) extrinsic metric is computed from (a snapshot, or an engine's result).

    Attributes (``n[i,j]`` cells, ``a[i]`` row sums, ``b[j]`` column sums; sums with ``_sum`` in
    fixed point, ``ONE = 2**64``):

    - ``n``: ``N``; ``cells``: non-zero cells; ``k_true``, ``k_pred``: non-empty clusters.
    - ``sum_cell_sq = Σ n²``, ``sum_row_sq = Σ a²``, ``sum_col_sq = Σ b²`` (exact ints).
    - ``sum_cell_xlogx``, ``sum_row_xlogx``, ``sum_col_xlogx``: ``Σ x log x`` (:func:`xlogx`).
    - ``bcubed_p_sum = Σ_j Q[j]/b[j]``, ``bcubed_r_sum = Σ_i S[i]/a[i]`` (:func:`bcubed_term`).
    - ``elm_p_sum``, ``elm_r_sum``: the same with :func:`elm_term`.
    - ``sum_col_max = Σ_j max_i n[i,j]``, ``sum_row_max = Σ_i max_j n[i,j]`` (exact ints).
    - ``true_singletons``, ``pred_singletons``: clusters of size 1; ``both_singletons``: elements
      alone in both their true and their predicted cluster.
    - ``f_sums``: ``{(kind, beta): Σ n·F_e}`` for the element-averaged F-scores being tracked.

    Cost: :meth:`from_cells` is O(cells); every metric's value from the stats is O(1).

    The table ``n[0,a] = 2``, ``n[1,a] = n[1,b] = 1``: rows ``a = (2, 2)``, columns
    ``b = (3, 1)``, so ``Σn² = 6``, ``Σa² = 8``, ``Σb² = 10``; BCubed's precision sum
    ``Σ_j Q[j]/b[j] = 5/3 + 1/1 = 8/3``, ELM's ``(5 - 3)/(3 - 1) + 1 = 2`` (column ``b`` a singleton);
    pair F1 ``2TP/(PP + TT) = 2·1/(3 + 2)``:

    >>> s = ContingencyStats.from_cells([(0, "a", 2), (1, "a", 1), (1, "b", 1)])
    >>> s.n, s.cells, s.sum_cell_sq, s.sum_row_sq, s.sum_col_sq, s.sum_col_max, s.pred_singletons
    (4, 3, 6, 8, 10, 3, 1)
    >>> s.bcubed_p_sum / ONE, s.elm_p_sum / ONE
    (2.666..., 2.0)
    >>> from streameval import Contingency, PairF1
    >>> PairF1().value(s)
    0.4
    >>> t = Contingency()
    >>> for cell in [(0, "a", 2), (1, "a", 1), (1, "b", 1)]:
    ...     t.update(*cell)
    >>> _ = t.track_f("elm"), t.track_f("bcubed")
    >>> t.stats() == s              # the table keeps the same sums, bit for bit
    True
    """

    n: int = 0
    cells: int = 0
    k_true: int = 0
    k_pred: int = 0
    sum_cell_sq: int = 0
    sum_row_sq: int = 0
    sum_col_sq: int = 0
    sum_cell_xlogx: int = 0
    sum_row_xlogx: int = 0
    sum_col_xlogx: int = 0
    bcubed_p_sum: int = 0
    bcubed_r_sum: int = 0
    elm_p_sum: int = 0
    elm_r_sum: int = 0
    sum_col_max: int = 0
    sum_row_max: int = 0
    true_singletons: int = 0
    pred_singletons: int = 0
    both_singletons: int = 0
    f_sums: dict = field(default_factory=dict)

    @classmethod
    def from_cells(cls, cells, f_specs=(("elm", 1.0), ("bcubed", 1.0))) -> ContingencyStats:
        """Compute the stats from ``(true, pred, count)`` triples in O(cells) (the reference).

        ``f_specs`` lists the ``(kind, beta)`` element-averaged F sums to compute.

        >>> ContingencyStats.from_cells([(0, 0, 1), (0, 0, 1)], ()).sum_cell_sq   # one cell of 2
        4
        """
        rows: dict = {}
        cols: dict = {}
        for t, p, c in cells:
            row = rows.setdefault(t, {})
            row[p] = row.get(p, 0) + c
            col = cols.setdefault(p, {})
            col[t] = col.get(t, 0) + c
        s = cls()
        for row in rows.values():
            for c in row.values():
                s.n += c
                s.cells += 1
                s.sum_cell_sq += c * c
                s.sum_cell_xlogx += xlogx(c)
        for side, groups in (("row", rows), ("col", cols)):
            for group in groups.values():
                counts = group.values()
                add_side_terms(s, side, sum(counts), sum(c * c for c in counts), max(counts))
        s.k_true, s.k_pred = len(rows), len(cols)
        a = {t: sum(r.values()) for t, r in rows.items()}
        b = {p: sum(c.values()) for p, c in cols.items()}
        s.both_singletons = sum(
            1 for t, row in rows.items() for p, c in row.items() if a[t] == 1 and b[p] == 1
        )
        for kind, beta in f_specs:
            num, den = beta_ratio(beta)
            s.f_sums[(kind, float(beta))] = sum(
                f_term(kind, num, den, c, a[t], b[p])
                for t, row in rows.items()
                for p, c in row.items()
            )
        return s

    def as_dict(self) -> dict:
        """The stats as a plain dict (``f_sums`` keyed by ``"kind:beta"`` strings). O(fields).

        >>> d = ContingencyStats.from_cells([(0, "a", 2)], [("elm", 1.0)]).as_dict()
        >>> d["n"], d["sum_cell_sq"], d["f_sums"] == {"elm:1.0": 2 * ONE}
        (2, 4, True)
        """
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "f_sums"}
        d["f_sums"] = {f"{k}:{b!r}": v for (k, b), v in self.f_sums.items()}
        return d


STAT_NAMES = tuple(f.name for f in fields(ContingencyStats) if f.name != "f_sums")
