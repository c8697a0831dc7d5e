"""Per-unit sufficient statistics, their exact weighted sums, and the units themselves.

A resampling *unit* is a block of elements that holds whole true and predicted clusters. The table
of a resample that draws unit ``u`` ``m_u`` times (as disjoint copies) has the statistics
``Σ_u m_u · S_u`` (:class:`~streameval.stats.ContingencyStats` fields are sums over cells, rows and
columns). This module computes every unit's ``S_u`` for all units at once with numpy
(:func:`unit_stats_from_codes`: no Python object per unit or per element; the fixed-point terms are
computed once per *distinct* count pattern with the reference functions of :mod:`streameval.stats`,
so they are bit for bit the table's), and combines them for many resamples with one exact
floating-point matrix product (:class:`UnitStats`).

It also holds what is known about the units before any resampling: :func:`crossing_label` (a
cluster that crosses two units), :func:`widen_units` (the connected components of the units and
every labelling: the smallest units that hold whole clusters), and :func:`unit_diagnostics` (how
many units, and how much of the pairs the largest one holds).

>>> import numpy as np
>>> us = unit_stats_from_codes(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 1]),
...                            np.array([0, 1, 2, 2]), None, 2, [("elm", 1.0)])
>>> s = us.stats(us.combine(np.array([[2, 1]]))[0])
>>> s.n, s.cells, s.k_true, s.k_pred, s.sum_cell_sq
(6, 5, 3, 5, 8)
"""

from __future__ import annotations

import numpy as np

from .stats import (
    STAT_NAMES,
    ContingencyStats,
    bcubed_term,
    beta_ratio,
    elm_term,
    f_term,
    xlogx,
)

__all__ = [
    "UnitStats",
    "Combiner",
    "Unread",
    "UNREAD",
    "unit_stats_from_codes",
    "crossing_label",
    "widen_units",
    "unit_diagnostics",
    "pairs_share",
    "FEW_UNITS",
    "DOMINANT_SHARE",
    "JACKKNIFE_GROUPS",
]

FEW_UNITS = 30
"""Below this many units a report warns that intervals and tests are approximate."""
DOMINANT_SHARE = 0.15
"""A report warns when one unit holds more than this share of a labelling's pairs."""
JACKKNIFE_GROUPS = 1000
"""BCa's jackknife (``compare`` and the streaming bootstrap) leaves out one unit at a time up to
this many units, one group of units beyond (the unit of rank ``i`` by its key's stable hash in
group ``i mod 1000``: :func:`streameval.bootstrap.jackknife_groups`): O(units) reads at most 1,000."""

_NSTAT = len(STAT_NAMES)
_EXACT = 52  # a float64 holds every integer below 2**53; keep one bit of slack
_SMALL_N = 1 << 31  # below this many elements every square and every sum of squares fits int64


def _bits(x: int) -> int:
    return max(1, int(x).bit_length())


class Unread(Exception):
    """A statistic left out of a combination (:data:`UNREAD`) was used: combine in full instead.

    >>> try:
    ...     UNREAD * 2
    ... except Unread as e:
    ...     print(e)
    a statistic left out of the combination was read
    """


class _UnreadField:
    """Stands for a statistic that a combination left out (the metrics at hand do not read it):
    any use of it (arithmetic, comparison, truth value, conversion) raises :class:`Unread`, so a
    formula that reads it after all, on some branch, is never given a wrong number.

    >>> UNREAD + 1
    Traceback (most recent call last):
    ...
    streameval.units.Unread: a statistic left out of the combination was read
    """

    __slots__ = ()

    def _unread(self, *args):
        raise Unread("a statistic left out of the combination was read")

    __bool__ = __int__ = __index__ = __float__ = __complex__ = __round__ = _unread
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _unread
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unread
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unread
    __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __lshift__ = __rshift__ = _unread
    __and__ = __rand__ = __or__ = __ror__ = __divmod__ = __rdivmod__ = _unread
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "UNREAD"


UNREAD = _UnreadField()


class UnitStats:
    """The per-unit sufficient statistics of one labelling, and their exact weighted sums.

    Each unit's value of each field (the ``STAT_NAMES``, then the tracked F sums: :attr:`fields`)
    is held as ``W``-bit limbs in an int64 matrix ``(U, columns)``. :meth:`combine` returns
    ``Σ_u M[b, u] · S_u`` for every row ``b`` of a multiplicity matrix, exactly: the limbs are below
    ``2**W`` and every row of ``M`` sums to at most ``bound`` with ``bound · 2**W ≤ 2**52``, so the
    float64 matrix product has only integer partial sums below ``2**53`` (exact whatever the
    summation order or SIMD width), and the limbs are joined as Python ints. A row summing beyond
    ``bound`` is combined through a narrower copy of the limbs (still exact; up to ``2**32``).

    Cost: :meth:`combine` is one ``(B, U) × (U, columns)`` BLAS product plus ``O(B · columns)``
    Python int operations; :meth:`stats` is O(fields) per resample. Build with
    :func:`unit_stats_from_codes` (vectorised) or from a list of stats (``UnitStats(stats,
    f_keys)``, O(U · fields) Python operations).

    >>> u = UnitStats([ContingencyStats.from_cells([(0, 0, 2)], ()),
    ...                ContingencyStats.from_cells([(0, 0, 1), (1, 0, 1)], ())], ())
    >>> s = u.stats(u.combine(np.array([[2, 0], [1, 1]]))[1])
    >>> s.n, s.cells, s.k_true, s.sum_cell_sq
    (4, 3, 3, 6)
    """

    f_keys: list
    fields: list
    n_units: int
    width: int
    bound: int
    _x: np.ndarray
    _layout: list  # (first column, limbs) per field

    def __init__(self, stats: list, f_keys, bound: int | None = None):
        f_keys = [tuple(k) for k in f_keys]
        rows = []
        for s in stats:
            row = [getattr(s, name) for name in STAT_NAMES] + [s.f_sums[k] for k in f_keys]
            if any(v < 0 for v in row):  # pragma: no cover - counts and sums of >= 0 terms
                raise ValueError("negative unit statistic")
            rows.append(row)
        self._from_rows(rows, f_keys, bound)

    # ----------------------------------------------------------------- construction
    def _from_rows(self, rows: list, f_keys: list, bound: int | None) -> None:
        width = _NSTAT + len(f_keys)
        maxima = [max((r[f] for r in rows), default=0) for f in range(width)]
        self._setup(f_keys, len(rows), bound, maxima)
        x = np.zeros((len(rows), self._x_cols()), dtype=np.int64)
        mask = (1 << self.width) - 1
        for f, (c, n) in enumerate(self._layout):
            for k in range(n):
                x[:, c + k] = [(r[f] >> (self.width * k)) & mask for r in rows]
        self._x = x

    def _setup(self, f_keys: list, n_units: int, bound: int | None, maxima: list) -> None:
        self.f_keys = f_keys
        self.fields = list(STAT_NAMES) + [("f", k) for k in f_keys]
        self.n_units = n_units
        self.bound = int(bound) if bound is not None else 2 * n_units + 64
        self.width = _EXACT - _bits(self.bound)
        if self.width < 8:
            raise ValueError(f"bound {self.bound} leaves fewer than 8 bits per limb")
        layout, c = [], 0
        for mx in maxima:
            n = max(1, -(-_bits(mx) // self.width))
            layout.append((c, n))
            c += n
        self._layout = layout

    def _x_cols(self) -> int:
        c, n = self._layout[-1]
        return c + n

    def _empty_like(self, n_units: int) -> UnitStats:
        new = object.__new__(UnitStats)
        new.f_keys, new.fields, new.width, new.bound = self.f_keys, self.fields, self.width, self.bound
        new._layout = self._layout
        new.n_units = n_units
        return new

    # ----------------------------------------------------------------- reading
    @property
    def rows(self) -> list:
        """Every unit's fields as Python ints (O(U · fields) Python operations: for small U)."""
        return [self._join(self._x[u:u + 1])[0] for u in range(self.n_units)]

    def _join(self, prod: np.ndarray, layout: list | None = None) -> list:
        """Rows of exact Python ints from rows of limb sums (int64 or exact float64), of every
        field (or of the fields whose ``(first column, limbs)`` in ``prod`` are ``layout``)."""
        prod = np.asarray(prod)
        if prod.dtype != np.int64:
            prod = prod.astype(np.int64)
        cols = []
        for c, n in self._layout if layout is None else layout:
            col = prod[:, c].tolist()
            for k in range(1, n):
                hi = prod[:, c + k].tolist()
                sh = self.width * k
                col = [a + (b << sh) for a, b in zip(col, hi)]
            cols.append(col)
        return [list(r) for r in zip(*cols)] if len(prod) else []

    @property
    def totals(self) -> list:
        """Every field summed over the units (each once): exact Python ints. O(U · columns) the
        first time, then a copy of the cached list."""
        got = self.__dict__.get("_totals")
        if got is None:
            got = self.__dict__["_totals"] = self._join(self._x.sum(axis=0, keepdims=True))[0]
        return list(got)

    def limbs(self) -> np.ndarray:
        """The ``(U, columns)`` int64 limb matrix (read-only view). O(1)."""
        v = self._x.view()
        v.flags.writeable = False
        return v

    def combine(self, m: np.ndarray) -> list:
        """``[[Σ_u m[b, u] · S_u[f] for f in fields] for b]``: exact Python ints. See the class.
        Cost: one ``(B, U) × (U, columns)`` BLAS product plus O(B · columns) Python int operations."""
        m = np.asarray(m, dtype=np.int64)
        if m.ndim != 2 or m.shape[1] != self.n_units:
            raise ValueError(f"multiplicities must have shape (resamples, {self.n_units}), got {m.shape}")
        if not m.size:
            return [[0] * len(self.fields) for _ in range(len(m))]
        top = int(m.sum(axis=1).max())
        if m.min() < 0 or top >= 1 << 32:
            raise ValueError("multiplicities must be >= 0 and sum to less than 2**32 per resample")
        if top > self.bound:
            return self._narrow(top).combine(m)
        return self._join(m.astype(np.float64) @ self.float_limbs())

    def float_limbs(self) -> np.ndarray:
        """The limb matrix as float64 (exact: every limb is below ``2**W``), cached. O(U · columns)
        the first time, O(1) after."""
        xf = self.__dict__.get("_xf")
        if xf is None:
            xf = self.__dict__["_xf"] = self._x.astype(np.float64)
        return xf

    def field_values(self) -> np.ndarray:
        """``(U, fields)`` float64: every unit's fields, its exact ints rounded once (``Σ_k limb_k ·
        2**(W·k)``; limbs below ``2**W``, so the only rounding is the float's own). O(U · columns).

        >>> u = UnitStats([ContingencyStats.from_cells([(0, 0, 2)], ())], ())
        >>> u.field_values()[0, :3].tolist()
        [2.0, 1.0, 1.0]
        """
        out = np.zeros((self.n_units, len(self.fields)), order="F")  # by column, as it is read
        for f, (c, n) in enumerate(self._layout):
            for k in range(n):
                out[:, f] += self._x[:, c + k].astype(np.float64) * 2.0 ** (self.width * k)
        return out

    def combine_ints(self, m: np.ndarray) -> np.ndarray:
        """The limb sums of :meth:`combine` as an int64 ``(B, columns)`` matrix (not joined):
        ``Σ_u m[b, u] · limb[u, c]``. O(B · U · columns): one ``(B, U) × (U, columns)`` BLAS
        product."""
        m = np.asarray(m, dtype=np.int64)
        if m.size and int(m.sum(axis=1).max()) > self.bound:
            raise ValueError(f"multiplicities sum beyond the bound {self.bound}")
        return (m.astype(np.float64) @ self.float_limbs()).astype(np.int64)

    @staticmethod
    def combine_all(stats: list, m: np.ndarray) -> list:
        """:meth:`combine` of several unit statistics over the same units with the same
        multiplicities, as one BLAS product (O(B · U · columns) for the columns of all of them,
        plus their joins; their limb columns side by side, each distinct column
        once: :class:`Combiner`): a list of row lists, one per element of ``stats``."""
        return Combiner(stats).combine(m)

    def swapped(self, other: UnitStats, swaps: np.ndarray, fields=None) -> tuple[list, list]:
        """The combined rows of ``self`` and ``other`` after exchanging their units where
        ``swaps[r, u] = 1``: ``(Σ_u [s ? other : self]_u, Σ_u [s ? self : other]_u)`` for every
        round ``r``. One product of the 0/1 swaps with the limb differences ``other − self``
        (signed limbs, ``|Σ| < U · 2**W``: exact; a limb column where the two are equal for every
        unit, a field of the truth they share, is left out of it: its sums are 0), added to and
        taken from the two totals. ``fields``: the indices of the fields to combine (default all;
        the others are :data:`UNREAD`). O(R · U · columns that differ) BLAS plus O(R · fields)
        Python."""
        if (other.n_units, other.f_keys) != (self.n_units, self.f_keys):
            raise ValueError("swapped needs the statistics of the same units and fields")
        swaps = np.asarray(swaps)
        if self.n_units > self.bound or self.width != other.width:
            both = self.stack(other)
            keep = 1 - swaps
            rows = both.combine(np.vstack([np.hstack([keep, swaps]), np.hstack([swaps, keep])]))
            return rows[:len(swaps)], rows[len(swaps):]
        chosen = tuple(range(len(self.fields)) if fields is None else fields)
        cache: dict = self.__dict__.setdefault("_swaps", {})
        cached = cache.get((id(other), chosen))
        if cached is None or cached[0] is not other:
            cached = cache[id(other), chosen] = (other, *self._difference(other, chosen))
        _, layout, keep, diff = cached
        # the product over the columns where the two differ (the truth's fields, shared, do
        # not): the others are exact zeros
        prod = np.zeros((len(swaps), sum(n for _, n in layout)))
        if len(keep):  # (kept, U) x (U, R): BLAS's faster orientation for a few columns
            prod[:, keep] = (diff @ swaps.astype(np.float64, copy=False).T).T
        moved = self._join(prod, layout)
        ta, tb = self.totals, other.totals
        rows_a, rows_b = [], []
        for row in moved:
            a = [UNREAD] * len(ta) if len(chosen) < len(ta) else list(ta)
            b = list(a)
            for f, d in zip(chosen, row):
                a[f] = ta[f] + d
                b[f] = tb[f] - d
            rows_a.append(a)
            rows_b.append(b)
        return rows_a, rows_b

    def _difference(self, other: UnitStats, fields) -> tuple[list, np.ndarray, np.ndarray]:
        """``other − self`` limb by limb for the ``fields``, in a layout holding both (float64,
        signed): that layout (``(first column, limbs)`` of each field) to join products with, the
        indices of its columns that are not 0 for every unit, and those columns ``(kept, U)``."""
        layout, c = [], 0
        for f in fields:
            n = max(self._layout[f][1], other._layout[f][1])
            layout.append((c, n))
            c += n
        diff = np.zeros((c, self.n_units), dtype=np.float64)  # by column: (columns, U)
        for us, sign in ((other, 1.0), (self, -1.0)):
            for f, (d0, _) in zip(fields, layout):
                c0, n = us._layout[f]
                diff[d0:d0 + n] += sign * us._x[:, c0:c0 + n].T
        keep = np.flatnonzero(np.any(diff != 0, axis=1))
        return layout, keep, diff[keep]

    def _narrow(self, bound: int) -> UnitStats:
        new = object.__new__(UnitStats)
        new._from_rows(self.rows, self.f_keys, bound)
        return new

    def stack(self, other: UnitStats) -> UnitStats:
        """The units of ``self`` followed by those of ``other`` (same fields). O(U · columns)."""
        if other.f_keys != self.f_keys:
            raise ValueError("cannot stack unit statistics of different F sums")
        if (other.width, other._layout) != (self.width, self._layout):
            return UnitStats.from_rows(self.rows + other.rows, self.f_keys,
                                       max(self.bound, other.bound))
        new = self._empty_like(self.n_units + other.n_units)
        new._x = np.vstack([self._x, other._x])
        return new

    @classmethod
    def from_rows(cls, rows, f_keys, bound: int | None = None) -> UnitStats:
        """From every unit's fields as Python ints (:attr:`fields` order; ``bound``: the largest
        row sum of the multiplicities :meth:`combine` will be given cheaply). O(U · fields)."""
        new = object.__new__(cls)
        new._from_rows(rows, list(f_keys), bound)
        return new

    def subset(self, index) -> UnitStats:
        """The statistics of the units ``index`` (in that order, repeats allowed). O(len · columns)."""
        index = np.asarray(index, dtype=np.int64)
        new = self._empty_like(len(index))
        new._x = self._x[index]
        return new

    def stats(self, row) -> ContingencyStats:
        """A :class:`ContingencyStats` from one combined row. O(fields)."""
        s = object.__new__(ContingencyStats)  # skips the dataclass __init__: a hot path
        d = s.__dict__
        d.update(zip(STAT_NAMES, row))
        d["f_sums"] = dict(zip(self.f_keys, row[_NSTAT:]))
        return s

    def unit(self, u: int) -> ContingencyStats:
        """Unit ``u``'s own stats. O(fields)."""
        return self.stats(self._join(self._x[u:u + 1])[0])

    def total(self) -> ContingencyStats:
        """The stats of all units together (each once): the observed table's. O(U · columns)."""
        return self.stats(self.totals)

    def leave_out(self, groups: np.ndarray, n_groups: int) -> list:
        """The stats of all units but those of group ``g``, for every ``g < n_groups`` (the
        jackknife's leave-one-group-out tables). ``groups[u]`` is unit ``u``'s group.
        O(U · columns) numpy plus O(n_groups · fields) Python."""
        sums = np.zeros((n_groups, self._x.shape[1]), dtype=np.int64)
        np.add.at(sums, np.asarray(groups, dtype=np.int64), self._x)
        rest = self._x.sum(axis=0, keepdims=True) - sums  # >= 0 limb by limb
        return [self.stats(r) for r in self._join(rest)]


class Combiner:
    """:meth:`UnitStats.combine` of several unit statistics over the same units, for many blocks of
    multiplicities: their limb columns side by side in one float64 matrix built once, a column
    that several share (the truth's fields are the same for every system: ``n``, the row sums)
    held once, and columns of small values (counts, the top limbs) packed into the bits of one
    column where their sums cannot overlap. :meth:`combine` is then one ``(B, U) × (U, packed
    columns)`` BLAS product, exact as :meth:`UnitStats.combine` is (the same limbs, the same
    bound), the unpacking shifts and the joins. Statistics of other units, bounds or fields (F
    sums), or multiplicities beyond the bound, are combined one by one. Cost: O(U · columns) to
    build, once; each :meth:`combine` as described.

    >>> a = UnitStats([ContingencyStats.from_cells([(0, 0, 2)], ()),
    ...                ContingencyStats.from_cells([(0, 0, 1), (1, 0, 1)], ())], ())
    >>> b = UnitStats([ContingencyStats.from_cells([(0, 0, 1), (0, 1, 1)], ()),
    ...                ContingencyStats.from_cells([(0, 0, 1), (1, 0, 1)], ())], ())
    >>> c = Combiner([a, b])
    >>> c.columns < 2 * a.limbs().shape[1]  # shared columns (n, the row sums) held once
    True
    >>> c.combine(np.array([[2, 1]]))[1] == b.combine(np.array([[2, 1]]))
    True
    """

    def __init__(self, stats: list, fields=None):
        self.stats = list(stats)
        self._x = None
        self.columns = sum(s.limbs().shape[1] for s in self.stats)
        if len(self.stats) < 2 or len({(s.n_units, s.bound, tuple(s.f_keys))
                                       for s in self.stats}) != 1:
            return  # (statistics of other fields: combined one by one, each its own fields)
        nf = len(self.stats[0].fields)
        self.fields = list(range(nf)) if fields is None else sorted(set(fields))
        cols: list = []  # (system, column) of each distinct column
        seen: dict = {}
        self._index, self._layouts = [], []
        for i, s in enumerate(self.stats):
            x = s.limbs()
            idx: list = []
            layout: list = []
            for f in self.fields:
                c0, n = s._layout[f]
                layout.append((len(idx), n))
                for c in range(c0, c0 + n):
                    col = x[:, c]
                    key = col[:8].tobytes() + col.sum().tobytes()
                    j = next((j for j in seen.get(key, ()) if np.array_equal(
                        self.stats[cols[j][0]].limbs()[:, cols[j][1]], col)), None)
                    if j is None:
                        j = len(cols)
                        cols.append((i, c))
                        seen.setdefault(key, []).append(j)
                    idx.append(j)
            self._index.append(np.array(idx, dtype=np.intp))
            self._layouts.append(layout)
        self.columns = len(cols)
        # columns packed side by side in the bits of one float64 column where they fit: a column
        # whose limbs are below 2**b sums, over multiplicities summing to at most the bound
        # (below 2**B), to below 2**(B + b); columns given B + b bits each, at offsets o, sum to
        # Σ 2**o S below 2**52 (no carry from one into the next), and every partial sum of
        # these non-negative terms is an integer below it: exact, in any order. A full limb
        # (b = W) takes a column of its own; the small counts and the top limbs share.
        top = _bits(self.stats[0].bound)
        need = [top + _bits(int(self.stats[i].limbs()[:, c].max(initial=0))) for i, c in cols]
        bins: list = []  # [bits used, [(column, offset)]] of each packed column
        for j in sorted(range(len(cols)), key=lambda j: -need[j]):  # first fit, widest first
            home = next((b for b in bins if b[0] + need[j] <= _EXACT), None)
            if home is None:
                home = [0, []]
                bins.append(home)
            home[1].append((j, home[0]))
            home[0] += need[j]
        packed = np.zeros((len(bins), self.stats[0].n_units), dtype=np.int64)
        self._unpack = []  # (packed column, column, offset, mask)
        for p, (_, items) in enumerate(bins):
            for j, off in items:
                i, c = cols[j]
                packed[p] += self.stats[i].limbs()[:, c] << off
                self._unpack.append((p, j, off, (1 << need[j]) - 1))
        self._x = packed.astype(np.float64)  # (packed columns, U): exact, below 2**52

    def combine(self, m: np.ndarray, totals: np.ndarray | None = None) -> list:
        """``[s.combine(m) for s in stats]``, from one product where it can; the fields left out
        (``fields``) are :data:`UNREAD`. ``totals``: ``m``'s row sums if known (then ``m`` is
        taken to be ``>= 0``, as drawn). Cost: one ``(B, U) × (U, packed columns)`` BLAS product
        plus O(B · columns) unpacking and joins."""
        m = np.asarray(m)
        if (self._x is None or not m.size or m.ndim != 2 or m.shape[1] != self._x.shape[1]
                or (totals is None and m.min() < 0)
                or int((m.sum(axis=1) if totals is None else totals).max()) > self.stats[0].bound):
            return [s.combine(m) for s in self.stats]
        # (packed columns, U) x (U, B): BLAS's faster orientation for a few dozen columns
        packed = (self._x @ m.astype(np.float64, copy=False).T).astype(np.int64)
        prod = np.empty((len(m), self.columns), dtype=np.int64)
        for p, j, off, mask in self._unpack:
            np.bitwise_and(packed[p] >> off, mask, out=prod[:, j])
        nf = len(self.stats[0].fields)
        out = []
        for s, idx, layout in zip(self.stats, self._index, self._layouts):
            rows = s._join(prod[:, idx], layout)
            if len(self.fields) < nf:
                full = []
                for r in rows:
                    row = [UNREAD] * nf
                    for f, v in zip(self.fields, r):
                        row[f] = v
                    full.append(row)
                rows = full
            out.append(rows)
        return out


# --------------------------------------------------------------------------- vectorised build
def _groups(keys: np.ndarray):
    """``(order, starts)``: a stable sort of ``keys`` and where each run of equal keys starts."""
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], ks[1:] != ks[:-1]))) if len(ks) else np.zeros(0, np.int64)
    return order, starts


def _distinct(*cols: np.ndarray) -> tuple[list, np.ndarray]:
    """The distinct rows of the non-negative int64 columns ``cols``, as tuples of Python ints, and
    each row's index among them: ``(rows, inverse)``. The columns are read as the digits of one
    mixed-radix key; a key range within a few times the row count is counted in a table (O(n)),
    a wider one sorted (one int64 key, or the columns themselves beyond ``2**62``).

    >>> rows, inverse = _distinct(np.array([3, 1, 3]), np.array([9, 1, 9]))
    >>> rows, inverse.tolist()
    ([(1, 1), (3, 9)], [1, 0, 1])
    """
    n = len(cols[0])
    if not n:
        return [], np.zeros(0, dtype=np.int64)
    radix = [int(c.max()) + 1 for c in cols]
    span = 1
    for r in radix:
        span *= r
    if min(int(c.min()) for c in cols) < 0 or span >= 1 << 62:
        return _distinct_sorted(*cols)
    key = cols[0].astype(np.int64)
    for c, r in zip(cols[1:], radix[1:]):
        key = key * r + c
    if span <= max(4 * n, 1 << 16):
        present = np.zeros(span, dtype=bool)
        present[key] = True
        uniq = np.flatnonzero(present)
        inverse = (np.cumsum(present) - 1)[key]
    else:
        uniq, inverse = np.unique(key, return_inverse=True)
        inverse = inverse.reshape(-1)
    digits = []
    for r in radix[:0:-1]:
        digits.append((uniq % r).tolist())
        uniq = uniq // r
    digits.append(uniq.tolist())
    return list(zip(*digits[::-1])), inverse


def _distinct_sorted(*cols: np.ndarray) -> tuple[list, np.ndarray]:
    """:func:`_distinct` by a lexicographic sort of the columns (any int64 values)."""
    n = len(cols[0])
    order = np.lexsort(cols[::-1])
    srt = [c[order] for c in cols]
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for c in srt:
        new[1:] |= c[1:] != c[:-1]
    firsts = np.flatnonzero(new)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return list(zip(*(c[firsts].tolist() for c in srt))), inverse


def _terms(fn, *cols: np.ndarray, memo: dict | None = None) -> tuple[list, np.ndarray]:
    """``fn`` of every row of ``cols`` computed once per distinct row: ``(values, inverse)``
    (``memo``: the distinct rows of columns seen before, by identity)."""
    key = tuple(id(c) for c in cols)
    got = memo.get(key) if memo is not None else None
    if got is None:
        got = _distinct(*cols)
        if memo is not None:
            memo[key] = (got, cols)  # the columns kept alive: their ids stay theirs
    else:
        got = got[0]
    rows, inverse = got
    return [fn(*row) for row in rows], inverse


class _Builder:
    """Per-unit sums of many fields into ``W``-bit limbs."""

    def __init__(self, n_units: int, bound: int):
        self.n_units = n_units
        self.width = _EXACT - _bits(bound)
        self.sums: list = []  # per field: (limbs, U) int64, not yet normalised

    def add_ints(self, units: np.ndarray, values: np.ndarray) -> None:
        """A field whose items are int64 values whose per-unit sums fit int64."""
        s = np.zeros(self.n_units, dtype=np.int64)
        np.add.at(s, units, values.astype(np.int64, copy=False))
        self.sums.append(s[None, :])

    def add_terms(self, units: np.ndarray, values: list, inverse: np.ndarray) -> None:
        """A field whose items are Python ints ``values[inverse[i]]`` (any size, >= 0)."""
        top = max(values, default=0)
        # limbs of every per-unit sum: the items' limbs are summed limb by limb (each < 2**W, so a
        # sum of fewer than 2**(62-W) items stays in int64) and normalised afterwards
        n = max(1, -(-(_bits(top) + _bits(len(inverse))) // self.width))
        mask = (1 << self.width) - 1
        table = np.array([[(v >> (self.width * k)) & mask for v in values] for k in range(n)],
                         dtype=np.int64).reshape(n, len(values))
        s = np.zeros((n, self.n_units), dtype=np.int64)
        if len(inverse):
            for k in range(n):  # limb by limb, each contiguous: numpy's one-dimensional add.at
                np.add.at(s[k], units, table[k][inverse])  # is the fast one
        self.sums.append(s)

    def build(self, f_keys: list, bound: int) -> UnitStats:
        w = self.width
        mask = (1 << w) - 1
        cols = []
        layout = []
        c = 0
        for s in self.sums:
            # carry until every limb is below 2**W (values stay exact: Σ s[k] 2**(Wk))
            parts = []
            carry = np.zeros(self.n_units, dtype=np.int64)
            k = 0
            while k < len(s) or carry.any():
                cur = (s[k] if k < len(s) else 0) + carry
                parts.append(cur & mask)
                carry = cur >> w
                k += 1
            # drop limbs that are 0 for every unit at the top (keep one)
            while len(parts) > 1 and not parts[-1].any():
                parts.pop()
            layout.append((c, len(parts)))
            c += len(parts)
            cols += parts
        us = object.__new__(UnitStats)
        us.f_keys = f_keys
        us.fields = list(STAT_NAMES) + [("f", k) for k in f_keys]
        us.n_units = self.n_units
        us.bound = bound
        us.width = w
        us._layout = layout
        # column-major: each limb column written once, contiguous (the products and the fields
        # read the limbs by column; a row-major stack wrote every column across all the rows)
        us._x = np.array(cols).T if cols else np.zeros((self.n_units, 0), np.int64)
        return us


def unit_stats_from_codes(units, y_true, y_pred, w, n_units: int, f_keys, bound: int | None = None
                          ) -> UnitStats:
    """:class:`UnitStats` of every unit from integer codes, vectorised.

    ``units[i]`` (in ``0 .. n_units-1``), ``y_true[i]``, ``y_pred[i]`` are int codes of element
    ``i`` (a true or predicted code must occur in one unit only: :func:`crossing_label` checks it),
    ``w`` its integer multiplicity (``None``: 1 each). Cells, rows and columns are grouped by
    sorting; the fixed-point terms (:func:`~streameval.stats.xlogx`, ``bcubed_term``,
    ``elm_term``, ``f_term``) are computed once per distinct argument tuple with the reference
    functions, so every sum equals, bit for bit, :meth:`ContingencyStats.from_cells` of the unit.
    Cost O(N log N) numpy plus O(distinct count patterns) Python calls.

    Unit 0 holds one cell of 2 (``n = 2``, ``Σn² = 4``), unit 1 a true pair split in two
    (``Σn² = 2``, ``Σa² = 4``, ``Σb² = 2``); both together add up:

    >>> us = unit_stats_from_codes([0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], None, 2, ())
    >>> rows = us.combine(np.array([[1, 0], [0, 1], [1, 1]]))
    >>> [(s.n, s.cells, s.sum_cell_sq, s.sum_row_sq, s.sum_col_sq) for s in map(us.stats, rows)]
    [(2, 1, 4, 4, 4), (2, 2, 2, 4, 2), (4, 3, 6, 8, 6)]
    """
    units = np.asarray(units, dtype=np.int64)
    t = np.asarray(y_true, dtype=np.int64)
    p = np.asarray(y_pred, dtype=np.int64)
    f_keys = [(str(k), float(b)) for k, b in f_keys]
    bound = int(bound) if bound is not None else 2 * n_units + 64
    weights = np.ones(len(t), dtype=np.int64) if w is None else np.asarray(w, dtype=np.int64)
    total = int(weights.sum()) if len(weights) else 0
    width = _EXACT - _bits(bound)
    per_unit = np.bincount(units, minlength=n_units).max() if len(units) else 0
    if total >= _SMALL_N or per_unit >= 1 << (62 - width):
        # squares beyond int64, or a unit's limb sums beyond int64: the per-unit reference path
        return _by_reference(units, t, p, weights, n_units, f_keys, bound)
    kp = int(p.max()) + 1 if len(p) else 1
    order, starts = _groups(t * kp + p)
    cnt = np.add.reduceat(weights[order], starts) if len(starts) else np.zeros(0, np.int64)
    first = order[starts]
    ct, cp, cu = t[first], p[first], units[first]
    # rows: the cells are sorted by (true, pred), so a row's cells are consecutive
    rstart = np.flatnonzero(np.concatenate(([True], ct[1:] != ct[:-1]))) if len(ct) else starts[:0]
    a = np.add.reduceat(cnt, rstart) if len(cnt) else cnt
    a_sq = np.add.reduceat(cnt * cnt, rstart) if len(cnt) else cnt
    a_mx = np.maximum.reduceat(cnt, rstart) if len(cnt) else cnt
    ru = cu[rstart]
    row_of_cell = np.repeat(np.arange(len(rstart)), np.diff(np.append(rstart, len(ct))))
    # columns
    corder, cstart = _groups(cp)
    ccnt = cnt[corder]
    b = np.add.reduceat(ccnt, cstart) if len(ccnt) else ccnt
    b_sq = np.add.reduceat(ccnt * ccnt, cstart) if len(ccnt) else ccnt
    b_mx = np.maximum.reduceat(ccnt, cstart) if len(ccnt) else ccnt
    cu_col = cu[corder][cstart]
    col_of_cell = np.empty(len(ct), dtype=np.int64)
    col_of_cell[corder] = np.repeat(np.arange(len(cstart)), np.diff(np.append(cstart, len(ct))))
    a_cell, b_cell = a[row_of_cell], b[col_of_cell]

    bld = _Builder(n_units, bound)
    memo: dict = {}  # the BCubed and ELM terms read the same (sq, size) pairs, every F sum its cells
    ones_cells = np.ones(len(cnt), dtype=np.int64)
    for name in STAT_NAMES:
        if name == "n":
            bld.add_ints(cu, cnt)
        elif name == "cells":
            bld.add_ints(cu, ones_cells)
        elif name == "k_true":
            bld.add_ints(ru, np.ones(len(a), np.int64))
        elif name == "k_pred":
            bld.add_ints(cu_col, np.ones(len(b), np.int64))
        elif name == "sum_cell_sq":
            bld.add_ints(cu, cnt * cnt)
        elif name == "sum_row_sq":
            bld.add_ints(ru, a * a)
        elif name == "sum_col_sq":
            bld.add_ints(cu_col, b * b)
        elif name == "sum_cell_xlogx":
            bld.add_terms(cu, *_terms(xlogx, cnt, memo=memo))
        elif name == "sum_row_xlogx":
            bld.add_terms(ru, *_terms(xlogx, a, memo=memo))
        elif name == "sum_col_xlogx":
            bld.add_terms(cu_col, *_terms(xlogx, b, memo=memo))
        elif name == "bcubed_p_sum":
            bld.add_terms(cu_col, *_terms(bcubed_term, b_sq, b, memo=memo))
        elif name == "bcubed_r_sum":
            bld.add_terms(ru, *_terms(bcubed_term, a_sq, a, memo=memo))
        elif name == "elm_p_sum":
            bld.add_terms(cu_col, *_terms(elm_term, b_sq, b, memo=memo))
        elif name == "elm_r_sum":
            bld.add_terms(ru, *_terms(elm_term, a_sq, a, memo=memo))
        elif name == "sum_col_max":
            bld.add_ints(cu_col, b_mx)
        elif name == "sum_row_max":
            bld.add_ints(ru, a_mx)
        elif name == "true_singletons":
            bld.add_ints(ru, (a == 1).astype(np.int64))
        elif name == "pred_singletons":
            bld.add_ints(cu_col, (b == 1).astype(np.int64))
        elif name == "both_singletons":
            bld.add_ints(cu, ((a_cell == 1) & (b_cell == 1)).astype(np.int64))
        else:  # pragma: no cover - a new statistic must be added here
            raise AssertionError(f"no vectorised sum for {name}")
    for kind, beta in f_keys:
        num, den = beta_ratio(beta)
        bld.add_terms(cu, *_terms(lambda n, x, y, kind=kind, num=num, den=den:
                                  f_term(kind, num, den, n, x, y), cnt, a_cell, b_cell,
                                  memo=memo))
    return bld.build(f_keys, bound)


def _by_reference(units, t, p, weights, n_units, f_keys, bound) -> UnitStats:
    cells: list = [{} for _ in range(n_units)]
    for u, a, b, c in zip(units.tolist(), t.tolist(), p.tolist(), weights.tolist()):
        d = cells[u]
        d[a, b] = d.get((a, b), 0) + c
    stats = [ContingencyStats.from_cells(((a, b, c) for (a, b), c in d.items()), f_keys) for d in cells]
    return UnitStats(stats, f_keys, bound)


# --------------------------------------------------------------------------- the units
def crossing_label(units: np.ndarray, labels: np.ndarray):
    """The first element whose label also occurs in another unit, as ``(element, first element of
    that label)``, or ``None`` when every label lies in one unit. O(N log N).

    >>> crossing_label(np.array([0, 0, 1, 1]), np.array([5, 5, 6, 5]))
    (3, 0)
    >>> crossing_label(np.array([0, 0, 1]), np.array([5, 5, 6])) is None
    True
    """
    units = np.asarray(units, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    if not len(labels):
        return None
    first = np.full(int(labels.max()) + 1, -1, dtype=np.int64)
    idx = np.arange(len(labels))
    first[labels[::-1]] = idx[::-1]  # the first element of each label (last write wins)
    bad = np.flatnonzero(units != units[first[labels]])
    if not len(bad):
        return None
    i = int(bad[0])
    return i, int(first[labels[i]])


def widen_units(units: np.ndarray, labellings: list) -> np.ndarray:
    """The connected components of the declared units and every labelling, as unit codes.

    Two elements are in one component when they share a declared unit or a cluster of any
    labelling (truth or a system), directly or through a chain. The components are the smallest
    units holding whole clusters of every labelling. Codes are numbered by first appearance.
    O(N log N) numpy plus a union-find over the distinct (unit, label) pairs.

    >>> widen_units(np.array([0, 0, 1, 1, 2]), [np.array([0, 0, 1, 1, 2]),
    ...                                         np.array([7, 7, 7, 7, 8])]).tolist()
    [0, 0, 0, 0, 1]
    """
    units = np.asarray(units, dtype=np.int64)
    n_units = int(units.max()) + 1 if len(units) else 0
    parent = list(range(n_units))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for lab in labellings:
        lab = np.asarray(lab, dtype=np.int64)
        if not len(lab):
            continue
        pairs = np.unique(np.stack([lab, units], axis=1), axis=0)
        # consecutive pairs of one label link their units
        same = np.flatnonzero(pairs[1:, 0] == pairs[:-1, 0])
        for a, b in zip(pairs[same, 1].tolist(), pairs[same + 1, 1].tolist()):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    roots = np.array([find(u) for u in range(n_units)], dtype=np.int64)
    comp = roots[units]
    _, first = np.unique(comp, return_index=True)
    rank = np.empty(n_units, dtype=np.int64)
    rank[comp[np.sort(first)]] = np.arange(len(first))
    return rank[comp]


def pairs_share(largest: int, total: int) -> float:
    """``largest / total`` of exact integer pair counts, correctly rounded (0.0 without a pair):
    the share of a labelling's within-cluster pairs one unit holds. The one formula of
    :func:`unit_diagnostics` and :meth:`BootstrapEvaluator.pairs_share
    <streameval.BootstrapEvaluator.pairs_share>` (both count ``Σ size² − N``, twice the pairs:
    the ratio is the same). O(1).

    >>> pairs_share(3, 5), pairs_share(0, 0)
    (0.6, 0.0)
    """
    return largest / total if total > 0 else 0.0


def _exact_field(us: UnitStats, name: str) -> np.ndarray:
    """Field ``name`` of every unit, exact: int64 when it fits one limb, else Python ints."""
    c, n = us._layout[STAT_NAMES.index(name)]
    if n == 1:
        return us.limbs()[:, c]
    return np.array([r[0] for r in us._join(us.limbs(), [(c, n)])], dtype=object)


def unit_diagnostics(ustats: list) -> dict:
    """How many units, and how dominant the largest is, over several labellings' unit statistics.

    ``pairs_share``: the largest share of one labelling's within-cluster pairs (true or predicted,
    ``Σ size² − N`` halved) that a single unit holds, over the labellings given (exact integer
    counts, :func:`pairs_share`); ``elements_share``: the largest unit's share of the elements.
    O(U · columns).

    Each of two units holds one of the two true pairs (a share of 1/2), but unit 0 holds the only
    predicted pair (a share of 1):

    >>> us = unit_stats_from_codes([0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], None, 2, ())
    >>> unit_diagnostics([us])
    {'units': 2, 'largest_unit_elements': 2, 'elements_share': 0.5, 'pairs_share': 1.0}
    """
    out = {"units": 0, "largest_unit_elements": 0, "elements_share": 0.0, "pairs_share": 0.0}
    for us in ustats:
        out["units"] = us.n_units
        if not us.n_units:
            continue
        totals = dict(zip(us.fields, us.totals))
        n_el = _exact_field(us, "n")
        big = int(np.argmax(n_el))
        if totals["n"]:
            out["largest_unit_elements"] = max(out["largest_unit_elements"], int(n_el[big]))
            out["elements_share"] = max(out["elements_share"], int(n_el[big]) / totals["n"])
        for side in ("sum_row_sq", "sum_col_sq"):
            twice = _exact_field(us, side) - n_el  # twice each unit's pairs
            out["pairs_share"] = max(out["pairs_share"],
                                     pairs_share(int(twice.max()), totals[side] - totals["n"]))
    return out
