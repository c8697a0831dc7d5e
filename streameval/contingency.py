"""The contingency table: the one mutable state behind every label metric.

A :class:`Contingency` counts ``n[i,j]``, the elements with true label ``i`` and predicted label
``j``, together with the row sums ``a[i]``, the column sums ``b[j]`` and the running sums listed in
:class:`~streameval.stats.ContingencyStats`. Metric objects are views that read those sums.

Design notes
------------
- The state and the per-element work live in a Rust core (``streameval._native``, built by maturin
  with ``pip install``): exact integer counts and 128-bit fixed-point sums, each term a
  deterministic function of integer counts (:mod:`streameval.stats` is their definition), so
  update∘revert is the identity on the state, bit for bit, and a merge gives the same bits as the
  stream. The pure-Python :class:`~streameval.reference.ReferenceContingency` is the reference the
  native table is tested against, state for state; it is also the fallback when the extension is
  not built (:data:`NATIVE` says which one is in use).
- Labels are arbitrary hashable Python objects compared with Python's equality (``1``, ``1.0``,
  ``True`` and ``numpy.int64(1)`` are one cluster), interned once per distinct label.
- The element-averaged F-scores of ELM and BCubed couple each cell with both of its margins: they
  are tracked only when a metric asks (:meth:`Contingency.track_f`). The native table settles
  them lazily: an update only notes its row, column and cell (O(1) at any number of cells per
  row), and the next reading moves each noted cluster's cells from their terms at the previous
  reading to their current ones (O(cells of the row and column) when read after every element;
  a stream read rarely pays for each changed cluster once per reading). A cluster with many
  cells keeps them grouped by (count, size of the other cluster), so settling it costs
  O(groups): flat for the degenerate predictions (one predicted cluster, all singletons) whose
  cost grew with the stream before.
- A table holds fewer than ``2**57`` elements (:data:`~streameval.stats.MAX_TOTAL`); an update
  that would reach it is rejected before anything changes.
- Cells, rows and columns that drop to zero are deleted: memory follows the live support.
- Every mutator validates its input before touching anything.

>>> table = Contingency()
>>> for t, p in [(0, "a"), (0, "a"), (0, "b"), (1, "b"), (1, "b")]:
...     table.update(t, p)
>>> table.n, table.cells, table.k_true, table.k_pred
(5, 3, 2, 2)
>>> table[0, "a"], table[1, "a"]
(2, 0)
>>> table.revert(0, "b")
>>> sorted(table.items())
[(0, 'a', 2), (1, 'b', 2)]
>>> table.revert(1, "a")
Traceback (most recent call last):
...
streameval.errors.UnknownElementError: revert of (y_true=1, y_pred='a', w=1): the table holds 0 such elements
"""

from __future__ import annotations

import numpy as np

from ._table import TableAPI
from ._validate import check_total, check_weights, sum_by_group
from .labels import factorize
from .reference import ReferenceContingency
from .stats import beta_ratio

try:
    from ._native import Table as _NativeTable
except ImportError:  # pragma: no cover - the extension is built by pip install
    NATIVE = False
else:
    NATIVE = True
"""``True`` when :class:`Contingency` is the native (Rust) table, ``False`` for the fallback."""

try:  # the native reading (an extension built from older sources lacks it: Python reads then)
    from ._native import FORMULAS as _FORMULAS
    from ._native import Formula, FormulaDeclined, ValuePlan
except ImportError:  # pragma: no cover - the extension is built by pip install
    Formula = ValuePlan = None  # type: ignore[assignment, misc]
    FormulaDeclined = ArithmeticError  # type: ignore[assignment, misc]  # (never raised then)
    _FORMULAS = []

NATIVE_FORMULAS: frozenset = frozenset(_FORMULAS)
"""The names of the metric formulas the native table computes itself (``src/values.rs``, its
one table ``FORMULAS``); empty without the extension. A metric names its formula once
(:class:`~streameval.metrics.quantities.NativeValue`); ``Formula(name, param)`` looks it up by
that name (``KeyError`` for a name the table lacks) and ``ValuePlan`` reads many at once
(``FormulaDeclined`` when a formula leaves its value to Python): the native core's reading,
re-exported here, its Python face (``None`` without the extension)."""

__all__ = ["Contingency", "NATIVE"]


def _int_array(y):
    """``y`` as a one-dimensional array of int64-representable integers, or ``None``."""
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        # pandas: its own conversion; pyarrow (whose to_numpy is zero-copy only by default,
        # refusing strings and nulls): numpy's, as factorize and the batch functions read it
        y = np.asarray(y) if type(y).__module__.startswith("pyarrow") else y.to_numpy()
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iu"):
        return None
    if y.dtype == np.uint64 and len(y) and int(y.max()) >= 2**63:
        return None
    return y


def _distinct(labels, name: str):
    """:func:`~streameval.labels.factorize` of a list of labels, at C speed when they are
    distinct strings and integers (what a columnar reader gives: none is missing, none needs
    grouping)."""
    labels = list(labels)
    if set(map(type, labels)) <= {str, int} and len(set(labels)) == len(labels):
        return np.arange(len(labels), dtype=np.int64), labels
    return factorize(labels, name)


def _count(key: np.ndarray, w):
    """``(distinct keys, count per key)``: numpy's unique-counting, weights summed exactly (as
    Python ints when an int64 sum could wrap, :func:`~streameval._validate.sum_by_group`)."""
    if w is None:
        return np.unique(key, return_counts=True)
    order = np.argsort(key, kind="stable")
    k = key[order]
    starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    counts, _ = sum_by_group(w[order], starts)
    return k[starts], counts


if NATIVE:

    class Contingency(TableAPI, _NativeTable):
        """Exact streaming contingency table of (true label, predicted label) counts.

        Parameters
        ----------
        missing : ``"raise"`` (default) or ``"skip"``
            What to do with a missing label (``None``, NaN): raise
            :class:`~streameval.errors.MissingLabelError`, or skip the element and count it in
            :attr:`skipped`.

        Cost per call: :meth:`update` and :meth:`revert` O(1) (plus, per tracked
        element-averaged F-score, O(cells) of a small cluster once per reading, or O(groups) of
        a large one); every sum read O(1) (the F sums: plus the cells left to settle); :meth:`merge`, :meth:`to_dict`, :meth:`from_dict`, :meth:`_check`
        O(cells). Memory O(cells).

        The attributes named in :class:`~streameval.stats.ContingencyStats` (``n``, ``cells``,
        ``k_true``, ``sum_cell_sq``, ...) are read-only views of the state.

        >>> t = Contingency()
        >>> t.update("cat", 1, w=3)
        >>> t.update("dog", 1)
        >>> t.n, t.sum_cell_sq, t.sum_col_max
        (4, 10, 3)
        """

        __slots__ = ()

        def __init__(self, missing: str = "raise") -> None:
            # the native constructor (``__new__``) has checked and stored ``missing``
            pass

        # ---------------------------------------------------------------- reading
        def __getitem__(self, key) -> int:
            """``table[t, p]``: the count of cell ``(t, p)``, 0 if absent. O(1)."""
            t, p = key
            return self.get_cell(t, p)

        def items(self):
            """Iterate over the non-zero cells as ``(true, pred, count)``. O(cells)."""
            return iter(self.cell_list())

        def true_sizes(self) -> dict:
            """``{true label: a[i]}`` for the non-empty true clusters. O(k_true)."""
            return self.sizes(0)

        def pred_sizes(self) -> dict:
            """``{predicted label: b[j]}`` for the non-empty predicted clusters. O(k_pred)."""
            return self.sizes(1)

        def true_labels(self) -> list:
            """The labels of the non-empty true clusters. O(k_true)."""
            return self.labels_of(0)

        def pred_labels(self) -> list:
            """The labels of the non-empty predicted clusters. O(k_pred)."""
            return self.labels_of(1)

        def row(self, t) -> dict:
            """The cells of true cluster ``t`` as ``{pred: count}``. O(cells in the row)."""
            return self.cluster_cells(0, t)

        def column(self, p) -> dict:
            """The cells of predicted cluster ``p`` as ``{true: count}``. O(cells in the column)."""
            return self.cluster_cells(1, p)

        def true_size(self, t) -> int:
            """``a[t]``, 0 for an unseen label. O(1)."""
            s = self.cluster_stats(0, t)
            return s[0] if s else 0

        def pred_size(self, p) -> int:
            """``b[p]``, 0 for an unseen label. O(1)."""
            s = self.cluster_stats(1, p)
            return s[0] if s else 0

        def pred_cluster(self, p):
            """``(size, sum of squared cells, largest cell)`` of predicted cluster ``p``, or
            ``None``. O(1)."""
            return self.cluster_stats(1, p)

        def true_cluster(self, t):
            """``(size, sum of squared cells, largest cell)`` of true cluster ``t``, or ``None``. O(1)."""
            return self.cluster_stats(0, t)

        @property
        def f_sums(self) -> dict:
            """``{(kind, beta): Σ n·F_e}`` for the tracked element-averaged F-scores."""
            return dict(self.f_items())

        def tracked_f(self) -> list:
            """The keys ``(kind, beta)`` of the tracked element-averaged F-scores, in order.
            O(number of tracked F-scores)."""
            return [key for key, _ in self.f_items()]

        # ---------------------------------------------------------------- element-averaged F
        def track_f(self, kind: str, beta: float = 1.0) -> tuple:
            """Start keeping ``Σ n·F_e`` for ``kind`` ``"elm"`` or ``"bcubed"`` and ``beta``.

            Returns the key of :attr:`f_sums`. The first call for a key costs O(cells);
            afterwards an update costs, on each side, O(cells) of a small cluster the first time
            it changes after a reading (the reading then puts its cells' terms back), or
            O(groups) of a large one. Idempotent.
            """
            if kind not in ("elm", "bcubed"):
                raise ValueError(f'kind must be "elm" or "bcubed", got {kind!r}')
            num, den = beta_ratio(beta)
            key = (kind, float(beta))
            self._track(kind, float(beta), num, den)
            if self.cells:
                self.version += 1
            return key

        # ---------------------------------------------------------------- bulk
        def update_many(self, y_true, y_pred, w=None) -> None:
            """Add many elements at once from sequences or numpy arrays.

            Gives exactly the state of calling :meth:`update` for each element: labels keep
            Python's identity (``[1, "1"]`` are two labels, ``"a\\x00"`` keeps its NUL; see
            :func:`streameval.labels.factorize`), weights stay integers. Cells are counted
            columnar: integer arrays natively, read in place (a radix sort of one combined
            64-bit key, O(N)), other labels by their codes in numpy (O(N log N)); each distinct
            label is interned once. The cells then go into the table in bulk with one O(cells)
            rebuild when it is empty (or small beside them), one by one when they are few,
            otherwise incrementally, visiting only the clusters they touch. Every label, weight
            and the total are checked before anything changes.

            >>> import numpy as np
            >>> t = Contingency()
            >>> t.update_many(np.array([0, 0, 1, 1]), np.array(["x", "x", "x", "y"]))
            >>> sorted(t.items())
            [(0, 'x', 2), (1, 'x', 1), (1, 'y', 1)]
            """
            yt, yp = _int_array(y_true), _int_array(y_pred)
            if yt is not None and yp is not None and len(yt) == len(yp):
                self._add_int_array(yt, yp, check_weights(w, len(yt)))
                return
            it, ut = factorize(y_true, "y_true", missing="skip")
            ip, up = factorize(y_pred, "y_pred", missing="skip")
            if len(it) != len(ip):
                raise ValueError(
                    f"y_true and y_pred must have the same length, got {len(it)} and {len(ip)}"
                )
            w = check_weights(w, len(it))
            gone = (it < 0) | (ip < 0)
            skipped = 0
            if gone.any():
                if self.missing == "raise":
                    hint = (
                        '; pass a label, or use Contingency(missing="skip") to skip and count '
                        "such elements"
                    )
                    factorize(y_true, "y_true", hint=hint)  # raises, naming the first one
                    factorize(y_pred, "y_pred", hint=hint)
                skipped = sum(w[gone].tolist()) if w is not None else int(gone.sum())
                it, ip = it[~gone], ip[~gone]
                w = w[~gone] if w is not None else None
            self._add_counted(ut, up, it, ip, w, skipped)

        def update_coded(self, true_labels, pred_labels, t, p, w=None) -> None:
            """Add the elements ``(true_labels[t[i]], pred_labels[p[i]], w[i])``: labels given
            once each, elements as integer codes into them (as a columnar reader or a
            dictionary-encoded column has them).

            The same state as :meth:`update_many` of the labels, and the same checks before
            anything changes (missing labels, codes out of range, weights, the total). Cost:
            the labels grouped once (O(labels)), the cells counted in numpy (O(N log N)).

            >>> import numpy as np
            >>> t = Contingency()
            >>> t.update_coded(["a", "b"], ["x", "x"], np.array([0, 1, 0]), np.array([0, 1, 1]))
            >>> sorted(t.items())
            [('a', 'x', 2), ('b', 'x', 1)]
            """
            it, ut = _distinct(true_labels, "true_labels")
            ip, up = _distinct(pred_labels, "pred_labels")
            t, p = np.asarray(t), np.asarray(p)
            if t.ndim != 1 or p.ndim != 1 or len(t) != len(p):
                raise ValueError("t and p must be one-dimensional code arrays of the same length")
            for codes, labels, name in ((t, it, "t"), (p, ip, "p")):
                if len(codes) and (codes.dtype.kind not in "iu" or int(codes.min()) < 0
                                   or int(codes.max()) >= len(labels)):
                    raise ValueError(f"{name} must hold integer codes 0 to {len(labels) - 1}")
            w = check_weights(w, len(t))
            if not len(t):
                return
            self._add_counted(ut, up, it[t], ip[p], w)

        def _add_counted(self, ut: list, up: list, it, ip, w, skipped: int = 0) -> None:
            """Count the cells of coded labels and add them, with ``skipped`` skipped elements,
            in one native call; the totals (of the cells, and of the skipped count) are checked
            first, exactly, so a refused batch changes nothing."""
            cells, counts = _count(it * len(up) + ip, w) if len(it) else (np.zeros(0, np.int64), [])
            total = int(sum(counts)) if not isinstance(counts, np.ndarray) else int(counts.sum())
            check_total(self.n, total)
            if skipped:
                check_total(self.skipped, skipped, "the skipped count")
            t, p = np.divmod(np.asarray(cells, dtype=np.int64), max(len(up), 1))

            def as_bytes(a) -> bytes:
                return np.ascontiguousarray(a, dtype=np.int64).tobytes()

            coded = (ut, up, as_bytes(t), as_bytes(p), as_bytes(counts))
            # the skipped count is added in the same native call as the cells (one borrow: never
            # the cells without the count); passed only when there is one to add
            self._add_coded_cells(*coded, skipped) if skipped else self._add_coded_cells(*coded)

        def _add_int_array(self, yt: np.ndarray, yp: np.ndarray, w) -> None:
            """Integer labels: cells counted natively over one combined key (a radix sort), the
            arrays read in place, no Python object per label; labels too spread for one 64-bit
            key are coded first."""
            def as_int64(a: np.ndarray) -> np.ndarray:
                return np.ascontiguousarray(a, dtype=np.int64)

            wa = as_int64(w) if w is not None else None
            if self._add_int_arrays(as_int64(yt), as_int64(yp), wa):
                return
            it, ut = factorize(yt, "y_true")
            ip, up = factorize(yp, "y_pred")
            self._add_counted(ut, up, it, ip, w)

        def _add_cells(self, triples) -> None:
            """Add checked ``(true, pred, count)`` triples (bulk, as :meth:`from_dict` does)."""
            self._add_triples(list(triples))

        def merge(self, other: Contingency) -> None:
            """Add the counts of ``other`` into this table (sum of tables). O(cells of both).

            The result is bit-identical to one stream that saw both streams' elements; the
            tracked F-scores become the union of both tables'. ``other`` is unchanged. Both tables must
            have the same ``missing`` policy (else :class:`~streameval.errors.StreamevalError`, nothing
            changed); the ``skipped`` counts add.

            >>> a, b = Contingency(), Contingency()
            >>> a.update(1, "x"); b.update(1, "x"); b.update(2, "y")
            >>> a.merge(b)
            >>> sorted(a.items())
            [(1, 'x', 2), (2, 'y', 1)]
            """
            if not isinstance(other, Contingency):
                raise TypeError(f"can only merge a Contingency, got {type(other).__name__}")
            self._check_same_policy(other)
            self._merge_from(other.copy() if other is self else other)

        def __reduce__(self):
            return (_unpickle, (self.missing, self.skipped, self.tracked_f(), self.cell_list()))

        def copy(self) -> Contingency:
            """An independent copy with the same state. O(cells)."""
            new = type(self)(self.missing)
            new._copy_from(self)
            return new

        def _check(self) -> None:
            """Assert every invariant of the state (for tests; O(cells))."""
            self._check_native()
            self._check_sums()

    def _unpickle(missing, skipped, tracked, cells) -> Contingency:
        table = Contingency(missing)
        for kind, beta in tracked:
            table.track_f(kind, beta)
        if cells:
            table._add_cells(cells)
        table.skipped = skipped
        return table

else:  # pragma: no cover - only without the built extension
    Contingency = ReferenceContingency  # type: ignore[misc, assignment]
