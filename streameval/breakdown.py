"""What broke: exact split and merge accounting on a table, with live top-k lists.

On a contingency table (``n[i,j]`` the cells, ``a[i]`` the true entities' sizes, ``b[j]`` the
predicted clusters' sizes), an :class:`ErrorAccount` keeps

- ``splits = cells - K_true``: the extra pieces the entities are split into (the Basic Merge
  Distance's split half: the merges needed to make each entity whole) and
  ``merges = cells - K_pred``: the extra entities the predicted clusters hold (the splits needed
  to separate them). Both are O(1) reads of the table's own counts;
- the entities split across the most predicted clusters (``cells in the row``, ties by size,
  then by label: :func:`label_order`),
  each with its *splitting entropy* ``H_i = log a[i] - Σ_j n[i,j] log n[i,j] / a[i]`` (nats; 0 for
  an entity kept whole; as er-evaluation's record error table);
- the predicted clusters merging the most entities (``cells in the column``, ties by extra, then
  by label), each
  with its *expected extra per record* ``b[j] - Σ_i n[i,j]² / b[j]``: the elements of another
  entity a record of the cluster finds with it, on average (er-evaluation's ``extra``).

Each is maintained under update, revert and merge of the table: :meth:`ErrorAccount.refresh` after
the table changed cell ``(t, p)`` by ``delta`` costs O(log K) (two ``sortedcontainers``
``SortedList`` updates, the per-row ``Σ n log n`` kept as an exact fixed-point integer, so an
update then a revert restores it bit for bit).

>>> from streameval import Contingency
>>> t = Contingency()
>>> acc = ErrorAccount(t)
>>> for y, p in [("e1", "c1"), ("e1", "c2"), ("e1", "c3"), ("e2", "c1"), ("e3", "c4")]:
...     t.update(y, p)
...     acc.refresh(y, p, 1)
>>> acc.splits, acc.merges
(2, 1)
>>> [(e, k, round(h, 4)) for e, k, _, h in acc.split_entities(2)]
[('e1', 3, 1.0986)]
>>> acc.merging_clusters(2)
[('c1', 2, 2, 1.0)]
"""

from __future__ import annotations

import math
import numbers

from ._table import TableAPI
from .errors import require
from .stats import ONE, precision_loss, xlogx

__all__ = ["ErrorAccount", "label_order"]


def label_order(label) -> tuple:
    """The order of labels that breaks the last ties in the lists of :class:`ErrorAccount`, as a
    pair ``(kind, value)``: numbers (booleans, integers, floats, any ``numbers.Real`` but NaN;
    by value) before text (by code point), anything else last (by type name and ``repr``). A key
    of the label alone, so the lists depend on the table, not on the order in which its cells
    came. O(1).

    >>> sorted(["b", 2, "a", 1.5, True, (1, 2)], key=label_order)
    [True, 1.5, 2, 'a', 'b', (1, 2)]
    """
    kind = type(label)
    if kind is str:
        return (1, label)
    if kind is int or kind is bool or (isinstance(label, numbers.Real) and label == label):
        return (0, label)
    if isinstance(label, str):
        return (1, label)
    return (2, f"{kind.__name__}:{label!r}")


class ErrorAccount:
    """Splits, merges and the top-k split entities and merging clusters of ``table``, current
    after each :meth:`refresh` (O(log K)).

    Build it on a table (its present cells are counted, O(cells log cells)); then call
    :meth:`refresh` ``(t, p, delta)`` each time the table's cell ``(t, p)`` changed by ``delta``
    (``+w`` an update, ``-w`` a revert, the other table's count for a merged cell; several
    changes to one cell may be summed into one call). :meth:`merge` merges a table and refreshes.

    Entries equal in both ranks are listed by label (:func:`label_order`), or by
    ``order = (entity key, cluster key)``: two functions of a label giving a pair ``(kind,
    value)`` as :func:`label_order` does (for a table keyed by codes, the key of the label a code
    stands for); one O(1) key per row or column when it is first ranked. The lists
    then depend on the table alone, not on the order of the calls that brought its cells (an
    account built on a table lists what one refreshed along the way lists).

    >>> from streameval import Contingency
    >>> t = Contingency()
    >>> t.update_many(["e2", "e2", "e1", "e1"], ["c2", "c9", "c1", "c9"])
    >>> [e for e, *_ in ErrorAccount(t).split_entities(3)]
    ['e1', 'e2']
    >>> by_number = (lambda e: (0, -int(e[1:])), label_order)
    >>> [e for e, *_ in ErrorAccount(t, order=by_number).split_entities(3)]
    ['e2', 'e1']
    """

    def __init__(self, table, order: tuple | None = None):
        self._sorted = require("sortedcontainers", "ErrorAccount (what broke)", "window").SortedList
        self.table = table
        self._order = order or (label_order, label_order)
        self._row_cells: dict = {}
        self._row_xlogx: dict = {}
        self._col_cells: dict = {}
        self._row_entry: dict = {}  # label -> its key in _rows
        self._col_entry: dict = {}
        self._row_label: dict = {}  # id -> label
        self._col_label: dict = {}
        self._next = 0
        self._rows = self._sorted()
        self._cols = self._sorted()
        rows, cols, xl = self._row_cells, self._col_cells, self._row_xlogx
        for t, p, c in table.items():
            rows[t] = rows.get(t, 0) + 1
            cols[p] = cols.get(p, 0) + 1
            xl[t] = xl.get(t, 0) + xlogx(c)
        self._rerank(rows, cols, rebuild=True)

    # ---------------------------------------------------------------- counts
    @property
    def splits(self) -> int:
        """``cells - K_true``: extra pieces of the split entities. O(1)."""
        return self.table.cells - self.table.k_true

    @property
    def merges(self) -> int:
        """``cells - K_pred``: extra entities held by the merging clusters. O(1)."""
        return self.table.cells - self.table.k_pred

    # ---------------------------------------------------------------- maintenance
    def refresh(self, t, p, delta: int) -> None:
        """The table's cell ``(t, p)`` changed by ``delta`` (already applied). O(log K)."""
        if self._count(t, p, delta):
            self._rank_row(t)
            self._rank_col(p)

    def refresh_many(self, cells, renew: tuple | None = None) -> None:
        """:meth:`refresh` of each ``(t, p, delta)`` of ``cells`` (distinct cells, all changes
        already applied to the table), each row and column ranked once: the same lists as the
        calls one by one. ``renew``: ``(rows, cols)`` that emptied and filled again meanwhile
        (or are new), each in the order it last filled again: they take fresh ids in that order,
        as the calls one by one would have given them (ties then rank as they would). O(cells + touched clusters · log K), and the lists rebuilt in one sort
        (O(K log K)) when the clusters touched are more than an eighth of them.

        >>> from streameval import Contingency
        >>> t = Contingency()
        >>> acc = ErrorAccount(t)
        >>> t.update_many(["e1", "e1", "e2"], ["c1", "c2", "c1"])
        >>> acc.refresh_many([("e1", "c1", 1), ("e1", "c2", 1), ("e2", "c1", 1)])
        >>> acc.report(1)["split_entities"][0]["entity"], acc.merging_clusters(1)[0][:2]
        ('e1', ('c1', 2))
        """
        rows: dict = {}
        cols: dict = {}
        if renew is not None:  # fresh ids, in the order given (ranked first, so they get them)
            for t in renew[0]:
                self._drop(t, self._row_entry, self._rows, self._row_label)
                rows[t] = None
            for p in renew[1]:
                self._drop(p, self._col_entry, self._cols, self._col_label)
                cols[p] = None
        count = self._count
        for t, p, delta in cells:
            if count(t, p, delta):
                rows[t] = cols[p] = None
        self._rerank(rows, cols)

    @staticmethod
    def _drop(label, entries: dict, ranked, labels: dict) -> None:
        """Forget ``label``'s entry (it takes a fresh id when ranked again)."""
        entry = entries.pop(label, None)
        if entry is not None:
            ranked.remove(entry)
            del labels[entry[-1]]

    def _count(self, t, p, delta: int) -> bool:
        """Count the change of cell ``(t, p)`` by ``delta`` in the per-row and per-column sums;
        whether there was one."""
        if not delta:
            return False
        new = self.table.get_cell(t, p)
        old = new - delta
        step = (old == 0 and new > 0) - (old > 0 and new == 0)
        if step:
            rows, cols = self._row_cells, self._col_cells
            rows[t] = rows.get(t, 0) + step
            cols[p] = cols.get(p, 0) + step
        xl = self._row_xlogx
        xl[t] = xl.get(t, 0) + xlogx(new) - xlogx(old)
        return True

    def _rerank(self, rows, cols, rebuild: bool = False) -> None:
        """Rank the rows and columns given (each once), one by one or by rebuilding each list."""
        for touched, entry, attr, entries in ((rows, self._row_entry_of, "_rows", self._row_entry),
                                              (cols, self._col_entry_of, "_cols", self._col_entry)):
            ranked = getattr(self, attr)
            if rebuild or 8 * len(touched) > len(ranked):
                for x in touched:
                    entry(x)
                setattr(self, attr, self._sorted(entries.values()))
                continue
            for x in touched:
                self._move(ranked, *entry(x))

    def merge(self, other) -> None:
        """Merge table ``other`` into the table (:meth:`Contingency.merge`) and account for its
        cells. O(cells of other · log K). What the table refuses (another kind of object, another
        ``missing`` policy) raises its error, and the account is unchanged."""
        cells = list(other.items()) if isinstance(other, TableAPI) else []
        self.table.merge(other)  # refuses before anything changes
        self.refresh_many(cells)

    def _new_id(self) -> int:
        self._next += 1
        return self._next

    def _rank_row(self, t) -> None:
        self._move(self._rows, *self._row_entry_of(t))

    def _rank_col(self, p) -> None:
        self._move(self._cols, *self._col_entry_of(p))

    @staticmethod
    def _move(ranked, old, new) -> None:
        """Replace key ``old`` by ``new`` in ``ranked`` (``None``: no key)."""
        if old is not None:
            ranked.remove(old)
        if new is not None:
            ranked.add(new)

    def _row_entry_of(self, t) -> tuple:
        """Row ``t``'s ``(old, new)`` keys in the ranking (``None``: none), the maps updated."""
        old = self._row_entry.pop(t, None)
        size = self.table.true_size(t)
        if not size:
            for d in (self._row_cells, self._row_xlogx):
                d.pop(t, None)
            if old is not None:
                del self._row_label[old[-1]]
            return old, None
        ident = old[-1] if old is not None else self._new_id()
        self._row_label[ident] = t
        kind, tie = old[2:4] if old is not None else self._order[0](t)
        entry = self._row_entry[t] = (-self._row_cells[t], -size, kind, tie, ident)
        return old, entry

    def _col_entry_of(self, p) -> tuple:
        """Column ``p``'s ``(old, new)`` keys in the ranking, the maps updated."""
        old = self._col_entry.pop(p, None)
        k = self.table.pred_cluster(p)
        if k is None:
            self._col_cells.pop(p, None)
            if old is not None:
                del self._col_label[old[-1]]
            return old, None
        size, sq = k[0], k[1]
        ident = old[-1] if old is not None else self._new_id()
        self._col_label[ident] = p
        kind, tie = old[2:4] if old is not None else self._order[1](p)
        entry = self._col_entry[p] = (-self._col_cells[p], -precision_loss(sq, size), kind, tie,
                                      ident)
        return old, entry

    # ---------------------------------------------------------------- reading
    @staticmethod
    def _top(ranked, labels: dict, k: int):
        """``(label, cells, key)`` of the first ``k`` entries with at least 2 cells."""
        for key in ranked.islice(0, k):
            if key[0] > -2:
                return
            yield labels[key[-1]], -key[0], key

    def split_entities(self, k: int = 5) -> list:
        """Up to ``k`` entities split across the most predicted clusters (at least 2), as
        ``(entity, clusters, size, splitting entropy in nats)``. O(log K + k)."""
        xl = self._row_xlogx
        return [(t, c, -key[1], math.log(-key[1]) + xl[t] / ONE / key[1])
                for t, c, key in self._top(self._rows, self._row_label, k)]

    def merging_clusters(self, k: int = 5) -> list:
        """Up to ``k`` predicted clusters merging the most entities (at least 2), as
        ``(cluster, entities, size, expected extra per record)``. O(log K + k)."""
        size = self.table.pred_size
        return [(p, c, size(p), -key[1] / ONE)
                for p, c, key in self._top(self._cols, self._col_label, k)]

    def report(self, k: int = 5) -> dict:
        """``{"splits", "merges", "split_entities", "merging_clusters"}``, the lists as dicts
        (JSON-ready when the labels are). O(log K + k)."""
        return {
            "splits": self.splits,
            "merges": self.merges,
            "split_entities": [{"entity": t, "clusters": c, "size": a, "entropy": h}
                               for t, c, a, h in self.split_entities(k)],
            "merging_clusters": [{"cluster": p, "entities": c, "size": b, "extra_per_record": x}
                                 for p, c, b, x in self.merging_clusters(k)],
        }

    def __repr__(self) -> str:
        return f"ErrorAccount(splits={self.splits}, merges={self.merges})"
