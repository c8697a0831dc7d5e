"""The pure-Python contingency table: the reference the native core is tested against.

This module is the table's definition in plain Python, kept as the reference: the native table
(:class:`streameval.Contingency`, a Rust core) must reach the same state, bit for bit, after any
sequence of operations, and the differential tests drive both side by side. It is also the
fallback when the native extension is not built.

A :class:`ReferenceContingency` counts ``n[i,j]``, the elements with true label ``i`` and predicted label
``j``, together with the row sums ``a[i]``, the column sums ``b[j]`` and the running sums listed in
:class:`~streameval.stats.ContingencyStats`. Metric objects are views that read those sums.

Design notes
------------
- Each true cluster (row) and predicted cluster (column) is one :class:`_Cluster` record: its size,
  its sum of squared cell counts, its cells, and a histogram of its cell counts whose largest key is
  the cluster's largest cell (purity). Rows and columns go through the same code.
- A change of one cell by ``d`` (``+w`` on update, ``-w`` on revert) changes one cell, one row and
  one column; every global sum changes by the difference of one cell term, one row term and one
  column term, all deterministic functions of integer counts (:mod:`streameval.stats`). So
  update∘revert is the identity on the state, bit for bit, and a merge or :meth:`_rebuild` gives
  the same bits as the stream.
- The element-averaged F-scores of ELM and BCubed couple each cell with both of its margins: they are
  tracked only when a metric asks (:meth:`track_f`), at O(cells in the row + cells in the column)
  per update.
- Cells, rows and columns that drop to zero are deleted, and every mutator validates its input
  before touching anything, as in the native table.

>>> from streameval import Contingency
>>> ref, native = ReferenceContingency(), Contingency()
>>> for t, p, w in [(0, "a", 2), (0, "b", 1), (1, "b", 3)]:
...     ref.update(t, p, w)
...     native.update(t, p, w)
>>> ref.revert(0, "b"); native.revert(0, "b")
>>> ref.to_dict() == native.to_dict(), ref.stats() == native.stats()
(True, True)
"""

from __future__ import annotations

import numpy as np

from ._table import TableAPI
from ._validate import (
    MAX_TOTAL,
    check_label,
    check_labels,
    check_total,
    check_weight,
    check_weights,
    sum_by_group,
)
from .errors import (
    UnknownElementError,
)
from .labels import factorize
from .stats import (
    FRAC_BITS,
    STAT_NAMES,
    ContingencyStats,
    add_side_terms,
    beta_ratio,
    f_term,
    xlogx,
)

__all__ = ["ReferenceContingency"]

_F1 = FRAC_BITS + 1  # (1 + beta²) = 2 for beta = 1, folded into the shift


class _Cluster:
    """One row (true cluster) or column (predicted cluster) of the table."""

    __slots__ = ("size", "sq", "max", "hist", "cells")

    def __init__(self):
        self.size = 0  # number of elements
        self.sq = 0  # sum of squared cell counts
        self.max = 0  # largest cell count
        self.hist = {}  # cell count -> number of cells with that count
        self.cells = {}  # label on the other side -> cell count


def _hist_drop(hist: dict, v: int) -> None:
    """One cell of count ``v`` fewer in a cluster's histogram of cell counts (the key goes at 0). O(1)."""
    left = hist[v] - 1
    if left:
        hist[v] = left
    else:
        del hist[v]


def _move(k: _Cluster, other, n0: int, n1: int, d: int):
    """Change cell ``other`` of cluster ``k`` from ``n0`` to ``n1 = n0 + d``.

    The caller moves the cluster's :func:`~streameval.stats.side_terms` in the sums. Cost O(1), except that a revert by ``w > 1`` of the largest cell looks for the next largest
    count in O(min(w, distinct counts)).
    """
    s0, q0, m0 = k.size, k.sq, k.max
    s1 = s0 + d
    q1 = q0 + n1 * n1 - n0 * n0
    hist = k.hist
    if n0:
        _hist_drop(hist, n0)
    if n1:
        hist[n1] = hist.get(n1, 0) + 1
        k.cells[other] = n1
    else:
        del k.cells[other]
    if n1 > m0:
        m1 = n1
    elif n0 == m0 and n0 not in hist:
        if not hist:
            m1 = 0
        elif len(hist) <= n0 - n1:
            m1 = max(hist)
        else:
            m1 = n0 - 1
            while m1 not in hist:
                m1 -= 1
    else:
        m1 = m0
    k.size, k.sq, k.max = s1, q1, m1


class ReferenceContingency(TableAPI):
    """Exact streaming contingency table of (true label, predicted label) counts.

    Parameters
    ----------
    missing : ``"raise"`` (default) or ``"skip"``
        What to do with a ``None`` or NaN label: raise :class:`~streameval.errors.MissingLabelError`,
        or skip the element and count it in :attr:`skipped`.

    Cost per call: :meth:`update` and :meth:`revert` O(1) (plus O(cells in the row and the column)
    for each element-averaged F-score tracked); every sum read O(1); :meth:`merge`, :meth:`to_dict`,
    :meth:`from_dict`, :meth:`_check` O(cells). Memory O(cells).

    The attributes named in :class:`~streameval.stats.ContingencyStats` (``n``, ``cells``,
    ``k_true``, ``sum_cell_sq``, ...) are read-only views of the state.

    >>> t = ReferenceContingency()
    >>> t.update("cat", 1, w=3)
    >>> t.update("dog", 1)
    >>> t.n, t.sum_cell_sq, t.sum_col_max
    (4, 10, 3)
    """

    # the state's sums (STAT_NAMES, set by _zero_sums and kept by every mutator) and settings
    n: int
    cells: int
    k_true: int
    k_pred: int
    sum_cell_sq: int
    sum_row_sq: int
    sum_col_sq: int
    sum_cell_xlogx: int
    sum_row_xlogx: int
    sum_col_xlogx: int
    bcubed_p_sum: int
    bcubed_r_sum: int
    elm_p_sum: int
    elm_r_sum: int
    sum_col_max: int
    sum_row_max: int
    true_singletons: int
    pred_singletons: int
    both_singletons: int
    f_sums: dict[tuple[str, float], int]
    missing: str
    skipped: int
    version: int

    def __init__(self, missing: str = "raise"):
        if missing not in ("raise", "skip"):
            raise ValueError(f'missing must be "raise" or "skip", got {missing!r}')
        self.missing = missing
        self.skipped = 0
        self.version = 0  # bumped by every mutation: lets on-demand metrics cache their value
        self._rows: dict = {}
        self._cols: dict = {}
        self._fspecs: list = []  # [(key, kind, num, den)] for the tracked element-averaged F-scores
        self._zero_sums()

    def _zero_sums(self):
        for name in STAT_NAMES:
            setattr(self, name, 0)
        self.f_sums = {key: 0 for key, *_ in self._fspecs}

    # ------------------------------------------------------------------ reading
    def __getitem__(self, key) -> int:
        """``table[t, p]``: the count of cell ``(t, p)``, 0 if absent (reading never creates it)."""
        t, p = key
        return self.get_cell(t, p)

    def get_cell(self, t, p) -> int:
        """The count of cell ``(t, p)``, 0 if absent: ``table[t, p]``, as the native table's
        ``get_cell`` (what :class:`~streameval.breakdown.ErrorAccount` reads after each update).
        O(1).

        >>> table = ReferenceContingency()
        >>> table.update("a", 1, w=2)
        >>> table.get_cell("a", 1), table.get_cell("a", 2), table.get_cell("b", 1)
        (2, 0, 0)
        """
        row = self._rows.get(t)
        return row.cells.get(p, 0) if row is not None else 0

    def items(self):
        """Iterate over the non-zero cells as ``(true, pred, count)``: a snapshot, as the native
        table's (the table may be updated while it is iterated: emptying a table by reverting
        its cells is one loop). O(cells)."""
        return iter([(t, p, c) for t, row in self._rows.items() for p, c in row.cells.items()])

    def true_sizes(self) -> dict:
        """``{true label: a[i]}`` for the non-empty true clusters. O(k_true)."""
        return {t: r.size for t, r in self._rows.items()}

    def pred_sizes(self) -> dict:
        """``{predicted label: b[j]}`` for the non-empty predicted clusters. O(k_pred)."""
        return {p: c.size for p, c in self._cols.items()}

    def row(self, t) -> dict:
        """The cells of true cluster ``t`` as ``{pred: count}`` (a copy). O(cells in the row)."""
        r = self._rows.get(t)
        return dict(r.cells) if r is not None else {}

    def column(self, p) -> dict:
        """The cells of predicted cluster ``p`` as ``{true: count}`` (a copy). O(cells in the column)."""
        c = self._cols.get(p)
        return dict(c.cells) if c is not None else {}

    def true_labels(self) -> list:
        """The labels of the non-empty true clusters. O(k_true)."""
        return list(self._rows)

    def pred_labels(self) -> list:
        """The labels of the non-empty predicted clusters. O(k_pred)."""
        return list(self._cols)

    def true_cluster(self, t):
        """``(size, sum of squared cells, largest cell)`` of true cluster ``t``, or ``None``. O(1)."""
        r = self._rows.get(t)
        return (r.size, r.sq, r.max) if r is not None else None

    def pred_cluster(self, p):
        """``(size, sum of squared cells, largest cell)`` of predicted cluster ``p``, or ``None``.
        O(1)."""
        c = self._cols.get(p)
        return (c.size, c.sq, c.max) if c is not None else None

    def true_size(self, t) -> int:
        """``a[t]``, 0 for an unseen label. O(1)."""
        r = self._rows.get(t)
        return r.size if r is not None else 0

    def pred_size(self, p) -> int:
        """``b[p]``, 0 for an unseen label. O(1)."""
        c = self._cols.get(p)
        return c.size if c is not None else 0

    def tracked_f(self) -> list:
        """The keys ``(kind, beta)`` of the tracked element-averaged F-scores, in order. O(number of
        tracked F-scores)."""
        return [key for key, *_ in self._fspecs]

    # ------------------------------------------------------------------ element-averaged F
    def track_f(self, kind: str, beta: float = 1.0) -> tuple:
        """Start keeping ``Σ n·F_e`` for ``kind`` ``"elm"`` or ``"bcubed"`` and ``beta``.

        Returns the key of :attr:`f_sums`. The first call for a key costs O(cells); afterwards each
        update costs O(cells in its row + cells in its column) more. Idempotent.
        """
        if kind not in ("elm", "bcubed"):
            raise ValueError(f'kind must be "elm" or "bcubed", got {kind!r}')
        num, den = beta_ratio(beta)
        key = (kind, float(beta))
        if key not in self.f_sums:
            self._fspecs.append((key, kind, num, den))
            self.f_sums[key] = sum(
                f_term(kind, num, den, c, self._rows[t].size, self._cols[p].size)
                for t, p, c in self.items()
            )
        return key

    def _f_delta(self, t, p, d: int) -> None:
        """Apply to each tracked F sum the change caused by adding ``d`` to cell ``(t, p)``.

        Called before the counts change. Only the cells of row ``t`` and column ``p`` change their
        ``n·F_e`` (through ``a[t]``, ``b[p]`` and ``n[t,p]``): O(cells in the row + column).
        """
        rows, cols = self._rows, self._cols
        row, col = rows.get(t), cols.get(p)
        a0 = row.size if row is not None else 0
        b0 = col.size if col is not None else 0
        n0 = row.cells.get(p, 0) if row is not None else 0
        a1, b1, n1 = a0 + d, b0 + d, n0 + d
        # the other cells of the row (their column sizes fixed) and of the column (row sizes fixed)
        # clusters are told apart by their records, never by comparing labels (no broadcasting)
        in_row = [(c, cols[j].size) for j, c in row.cells.items() if cols[j] is not col] if row else ()
        in_col = [(c, rows[i].size) for i, c in col.cells.items() if rows[i] is not row] if col else ()
        f_sums = self.f_sums
        for key, kind, num, den in self._fspecs:
            delta = (f_term(kind, num, den, n1, a1, b1) if n1 else 0) - (
                f_term(kind, num, den, n0, a0, b0) if n0 else 0
            )
            if num == den:  # beta = 1: F_e is symmetric in a and b; inline the hot loop
                for cells, x0, x1 in ((in_row, a0, a1), (in_col, b0, b1)):
                    if kind == "bcubed":
                        for c, y in cells:
                            top = c * c << _F1
                            delta += top // (x1 + y) - top // (x0 + y)
                    else:
                        for c, y in cells:
                            top = c * (c - 1) << _F1
                            s0, s1 = x0 + y - 2, x1 + y - 2
                            delta += (top // s1 if s1 else c << FRAC_BITS) - (
                                top // s0 if s0 else c << FRAC_BITS
                            )
            else:
                for c, y in in_row:
                    delta += f_term(kind, num, den, c, a1, y) - f_term(kind, num, den, c, a0, y)
                for c, y in in_col:
                    delta += f_term(kind, num, den, c, y, b1) - f_term(kind, num, den, c, y, b0)
            f_sums[key] += delta

    # ------------------------------------------------------------------ mutation
    def _both_near(self, t, p) -> int:
        """Elements alone in both clusters, among the cells of row ``t`` and column ``p``."""
        rows, cols = self._rows, self._cols
        found = 0
        row = rows.get(t)
        if row is not None and row.size == 1:
            (j,) = row.cells
            found += cols[j].size == 1
        col = cols.get(p)
        if col is not None and col.size == 1:
            (i,) = col.cells
            if rows[i] is not row or row.size != 1:  # cell (t, p) was counted with the row
                found += rows[i].size == 1
        return found

    def _change(self, t, p, d: int):
        """Add ``d`` (may be negative; the caller has checked the count stays >= 0) to cell (t, p)."""
        rows, cols = self._rows, self._cols
        if self._fspecs:
            self._f_delta(t, p, d)
        both_before = self._both_near(t, p)
        row = rows.get(t)
        if row is None:
            row = rows[t] = _Cluster()
            self.k_true += 1
        col = cols.get(p)
        if col is None:
            col = cols[p] = _Cluster()
            self.k_pred += 1
        n0 = row.cells.get(p, 0)
        n1 = n0 + d
        self.n += d
        self.sum_cell_sq += n1 * n1 - n0 * n0
        self.sum_cell_xlogx += xlogx(n1) - xlogx(n0)
        self.cells += (n1 > 0) - (n0 > 0)
        for k, side, other in ((row, "row", p), (col, "col", t)):
            add_side_terms(self, side, k.size, k.sq, k.max, -1)
            _move(k, other, n0, n1, d)
            add_side_terms(self, side, k.size, k.sq, k.max)
        if not row.size:
            del rows[t]
            self.k_true -= 1
        if not col.size:
            del cols[p]
            self.k_pred -= 1
        self.both_singletons += self._both_near(t, p) - both_before
        self.version += 1

    def _labels(self, y_true, y_pred):
        """Checked labels, or ``None`` when a missing label is to be skipped."""
        return check_labels(y_true, y_pred, self.missing == "skip")

    def update(self, y_true, y_pred, w=1) -> None:
        """Add ``w`` elements with true label ``y_true`` and predicted label ``y_pred``. O(1)."""
        if w.__class__ is not int or not 0 < w < MAX_TOTAL:
            w = check_weight(w)
        labels = self._labels(y_true, y_pred)
        if labels is None:
            check_total(self.skipped, w, "the skipped count")
            self.skipped += w
            return
        check_total(self.n, w)
        self._change(labels[0], labels[1], w)

    def revert(self, y_true, y_pred, w=1) -> None:
        """Remove ``w`` elements added by :meth:`update` with the same arguments. O(1).

        Raises :class:`~streameval.errors.UnknownElementError` if the table holds fewer than ``w``
        such elements; the table is then unchanged.
        """
        if w.__class__ is not int or not 0 < w < MAX_TOTAL:
            w = check_weight(w)
        check_total(0, w)
        labels = self._labels(y_true, y_pred)
        if labels is None:
            if self.skipped < w:
                raise UnknownElementError(
                    f"revert of {w} skipped element(s) with a missing label: only {self.skipped} "
                    "were skipped"
                )
            self.skipped -= w
            return
        t, p = labels
        have = self[t, p]
        if have < w:
            raise UnknownElementError(
                f"revert of (y_true={t!r}, y_pred={p!r}, w={w}): the table holds {have} such "
                "elements"
            )
        self._change(t, p, -w)

    def relabel_pred(self, old, new) -> None:
        """Move predicted cluster ``old`` into ``new`` (two clusters merged, or a rename).

        Every element predicted ``old`` is now predicted ``new`` (``new`` may be a fresh label).
        The state is bit-identical to reverting those elements and replaying them with ``new``,
        because every sum is a sum of terms of the counts. Cost O(cells of ``old``), plus
        O(cells of ``old`` + cells of ``new``) per tracked element-averaged F-score; independent
        of the number of elements moved. :meth:`relabel_true` does the same for a true cluster.
        An unknown ``old`` raises :class:`~streameval.errors.UnknownElementError` and changes
        nothing.

        >>> t = ReferenceContingency()
        >>> for y, p in [(0, "a"), (0, "b"), (1, "b"), (1, "c")]:
        ...     t.update(y, p)
        >>> t.relabel_pred("a", "b")
        >>> sorted(t.items()), t.k_pred
        ([(0, 'b', 2), (1, 'b', 1), (1, 'c', 1)], 2)
        """
        self._relabel(old, new, False)

    def relabel_true(self, old, new) -> None:
        """Move true cluster ``old`` into ``new``: :meth:`relabel_pred` with the roles swapped
        (and its cost)."""
        self._relabel(old, new, True)

    def _relabel(self, old, new, true: bool) -> None:
        own, oth = ("row", "col") if true else ("col", "row")
        records, others = (self._rows, self._cols) if true else (self._cols, self._rows)
        check_label(new, "new label")
        if old not in records:
            raise UnknownElementError(
                f"relabel of {'true' if true else 'predicted'} cluster {old!r}: it holds no "
                "elements"
            )
        src, dst = records[old], records.get(new)
        if dst is src:  # the same label (compared as dict keys, never with ==)
            return
        fspecs, f_sums = self._fspecs, self.f_sums

        def fsum(k) -> list:  # Σ n·F_e over the cells of cluster k, per tracked F-score
            if k is None:
                return [0] * len(fspecs)
            return [
                sum(
                    f_term(kind, num, den, n, *((k.size, others[x].size) if true
                                                else (others[x].size, k.size)))
                    for x, n in k.cells.items()
                )
                for _, kind, num, den in fspecs
            ]

        def both(k) -> int:  # 1 if k is a singleton whose element is alone on the other side too
            return k is not None and k.size == 1 and others[next(iter(k.cells))].size == 1

        def terms(k, sign) -> None:  # add (sign=1) or remove (-1) cluster k's own terms
            add_side_terms(self, own, k.size, k.sq, k.max, sign)

        f_before = [x + y for x, y in zip(fsum(src), fsum(dst))]
        both_before = both(src) + both(dst)
        terms(src, -1)
        if dst is None:
            dst = records[new] = _Cluster()
        else:
            terms(dst, -1)
            if true:
                self.k_true -= 1
            else:
                self.k_pred -= 1
        d_cell_sq = d_cell_xl = d_cells = 0
        for x, n in src.cells.items():
            k = others[x]  # the cluster on the other side holding this cell (its size stays)
            add_side_terms(self, oth, k.size, k.sq, k.max, -1)
            n0 = dst.cells.get(x, 0)
            n1 = n0 + n
            d_cell_sq += n1 * n1 - n0 * n0 - n * n
            d_cell_xl += xlogx(n1) - xlogx(n0) - xlogx(n)
            d_cells -= n0 > 0
            k.sq += n1 * n1 - n0 * n0 - n * n
            del k.cells[old]
            k.cells[new] = dst.cells[x] = n1
            for rec, gone in ((k, (n, n0)), (dst, (n0,))):
                hist = rec.hist
                for v in gone:
                    if v:
                        _hist_drop(hist, v)
                hist[n1] = hist.get(n1, 0) + 1
            if n1 > k.max:  # cells only grow or move, so maxima only rise
                k.max = n1
            add_side_terms(self, oth, k.size, k.sq, k.max)
            if n1 > dst.max:
                dst.max = n1
        dst.sq += src.sq + d_cell_sq
        dst.size += src.size
        del records[old]
        terms(dst, +1)
        self.sum_cell_sq += d_cell_sq
        self.sum_cell_xlogx += d_cell_xl
        self.cells += d_cells
        self.both_singletons += both(dst) - both_before
        for (key, *_), before, after in zip(fspecs, f_before, fsum(dst)):
            f_sums[key] += after - before
        self.version += 1

    def update_many(self, y_true, y_pred, w=None) -> None:
        """Add many elements at once from sequences or numpy arrays (vectorised).

        Equivalent to calling :meth:`update` for each element, and gives a bit-identical state.
        Cells are counted with numpy, then applied cell by cell when they are few compared with
        the table, or added in bulk followed by one O(cells) rebuild of the sums. Every label and
        weight is checked before anything changes.

        >>> import numpy as np
        >>> t = ReferenceContingency()
        >>> t.update_many(np.array([0, 0, 1, 1]), np.array(["x", "x", "x", "y"]))
        >>> sorted(t.items())
        [(0, 'x', 2), (1, 'x', 1), (1, 'y', 1)]
        """
        triples = self._count_many(y_true, y_pred, w)
        if triples is None:
            return
        triples, skipped = triples
        check_total(self.skipped, skipped, "the skipped count")
        if len(triples) * 4 < self.cells:
            self._change_all(triples)
        else:
            self._add_cells(triples)
        self.skipped += skipped

    def _change_all(self, triples) -> None:
        """Add a few cells one by one; a label's failing ``==`` midway takes the ones added
        out again (update∘revert is the identity), so the table is as it was. O(len(triples))."""
        done = []
        try:
            for t, p, c in triples:
                self._change(t, p, c)
                done.append((t, p, c))
        except BaseException:
            for t, p, c in reversed(done):
                self._change(t, p, -c)
            raise

    def _count_many(self, y_true, y_pred, w):
        """Check and count a batch: ``([(t, p, count)], skipped)``; labels as Python scalars.

        Labels are grouped by :func:`streameval.labels.factorize` (Python equality, as
        :meth:`update`), never coerced through ``numpy.asarray``.
        """
        it, ut = factorize(y_true, "y_true", missing="skip")
        ip, up = factorize(y_pred, "y_pred", missing="skip")
        if len(it) != len(ip):
            raise ValueError(
                f"y_true and y_pred must have the same length, got {len(it)} and {len(ip)}"
            )
        weights = check_weights(w, len(it))
        keep = (it >= 0) & (ip >= 0)
        if not keep.all():
            if self.missing == "raise":
                hint = (
                    '; pass a label, or use Contingency(missing="skip") to skip and count such '
                    "elements"
                )
                factorize(y_true, "y_true", hint=hint)  # raises, naming the first missing label
                factorize(y_pred, "y_pred", hint=hint)
            skipped = (  # exact even for weights near 2**57 (a Python int sum)
                sum(weights[~keep].tolist()) if weights is not None else int((~keep).sum())
            )
            it, ip = it[keep], ip[keep]
            weights = weights[keep] if weights is not None else None
        else:
            skipped = 0
        if len(it) == 0:
            return ([], skipped) if skipped else None
        kp = len(up)
        code = it * kp + ip
        if weights is None:
            cells, counts = np.unique(code, return_counts=True)
            total = len(code)
        else:
            order = np.argsort(code, kind="stable")
            code, weights = code[order], weights[order]
            starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
            cells = code[starts]
            counts, total = sum_by_group(weights, starts)  # exact: never wraps in int64
        check_total(self.n, total)
        counts = counts.tolist() if isinstance(counts, np.ndarray) else counts
        return [
            (ut[c // kp], up[c % kp], n) for c, n in zip(cells.tolist(), counts)
        ], skipped

    def _add_cells(self, triples, fspecs=()) -> None:
        """Add positive ``(t, p, count)`` triples in bulk (and start tracking ``fspecs``), then
        rebuild the sums. O(cells). The cells are added to copies of the clusters' cells, so a
        label whose ``==`` raises midway leaves the table as it was."""
        triples = list(triples)
        check_total(self.n, sum(c for _, _, c in triples))
        rows = {t: dict(k.cells) for t, k in self._rows.items()}
        cols = {p: dict(k.cells) for p, k in self._cols.items()}
        for t, p, c in triples:
            row = rows.setdefault(t, {})
            col = cols.setdefault(p, {})
            n = row.get(p, 0) + c
            row[p] = n
            col[t] = n
        for records, cells in ((self._rows, rows), (self._cols, cols)):
            records.clear()
            for label, cs in cells.items():
                k = records[label] = _Cluster()
                k.cells = cs
        self._fspecs.extend(fspecs)
        self._rebuild()

    def merge(self, other: ReferenceContingency) -> None:
        """Add the counts of ``other`` into this table (sum of tables). O(cells of both).

        The result is bit-identical to one stream that saw both streams' elements; the tracked
        F-scores become the union of both tables'. ``other`` is unchanged. Both tables must
        have the same ``missing`` policy (else :class:`~streameval.errors.StreamevalError`, nothing
        changed); the ``skipped`` counts add.

        >>> a, b = ReferenceContingency(), ReferenceContingency()
        >>> a.update(1, "x"); b.update(1, "x"); b.update(2, "y")
        >>> a.merge(b)
        >>> sorted(a.items())
        [(1, 'x', 2), (2, 'y', 1)]
        """
        if not isinstance(other, ReferenceContingency):
            raise TypeError(f"can only merge a Contingency, got {type(other).__name__}")
        self._check_same_policy(other)
        triples = list(other.items())
        check_total(self.n, other.n)
        check_total(self.skipped, other.skipped, "the skipped count")
        self._add_cells(triples, [spec for spec in other._fspecs if spec[0] not in self.f_sums])
        self.skipped += other.skipped

    def _rebuild(self) -> None:
        """Recompute every cluster record and sum from the cells. O(cells)."""
        rows, cols = self._rows, self._cols
        self._zero_sums()
        for records in (rows, cols):
            for k in records.values():
                cells = k.cells
                k.size = sum(cells.values())
                k.sq = sum(c * c for c in cells.values())
                hist: dict = {}
                for c in cells.values():
                    hist[c] = hist.get(c, 0) + 1
                k.hist = hist
                k.max = max(hist) if hist else 0
        s = ContingencyStats.from_cells(self.items(), [key for key, *_ in self._fspecs])
        for name in STAT_NAMES:
            setattr(self, name, getattr(s, name))
        self.f_sums = s.f_sums
        self.version += 1

    def copy(self) -> ReferenceContingency:
        """An independent copy with the same state. O(cells)."""
        new = type(self)(self.missing)
        new._fspecs = list(self._fspecs)
        new.skipped = self.skipped
        new._add_cells(list(self.items()))
        return new

    def _check(self) -> None:
        """Assert every invariant of the state (for tests; O(cells))."""
        rows, cols = self._rows, self._cols
        for records, others, side in ((rows, cols, "row"), (cols, rows, "col")):
            for label, k in records.items():
                assert k.cells, f"empty {side} {label!r} kept"
                assert all(c > 0 for c in k.cells.values()), f"zero cell kept in {side} {label!r}"
                assert k.size == sum(k.cells.values()), f"{side} {label!r} size"
                assert k.sq == sum(c * c for c in k.cells.values()), f"{side} {label!r} sq"
                hist: dict = {}
                for c in k.cells.values():
                    hist[c] = hist.get(c, 0) + 1
                assert k.hist == hist, f"{side} {label!r} histogram"
                assert k.max == max(hist), f"{side} {label!r} max"
                for other, c in k.cells.items():
                    assert others[other].cells.get(label) == c, f"{side} {label!r} mirror"
        self._check_sums()


