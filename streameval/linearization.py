"""Linearization (delta-method) standard errors of metrics of unit-additive sums, for every
resample at once: what the studentized (bootstrap-t) interval divides by.

Every O(1) metric is a function ``θ = f(S)`` of the table's sums ``S`` (the fields of
:class:`~streameval.stats.ContingencyStats`), and a resample that draws unit ``u`` ``m_u`` times
has ``S = Σ_u m_u · S_u`` (:class:`~streameval.units.UnitStats`). To first order
``θ(S + Δ) ≈ θ(S) + ∇f(S) · Δ``, so with ``g = ∇f(S)`` and unit ``u``'s *linear score*
``z_u = g · S_u``, the variance of ``θ`` over draws of the ``U = Σ m_u`` units is estimated by

    se² = Σ_u m_u (z_u − z̄)²,    z̄ = Σ_u m_u z_u / Σ_u m_u

(the empirical variance of the scores times ``U``: the infinitesimal jackknife). It is exact for a
linear ``f`` and first-order right for every smooth one, and costs, per resample, one gradient
(two metric reads per field the metric reads: central differences) and ``O(U · fields²)``
multiply-adds in one BLAS product (:func:`standard_errors`): no nested bootstrap.

The gradient is taken by central differences on the exact integer sums, with an even integer step
``h`` of about ``10⁻⁷`` of the field, or of one unit of it where the field is smaller (``ONE`` for a
fixed-point sum; at least 2): every metric formula reads counts and fixed-point sums, and the only
integer divisions in them halve quantities that are even for every real table (``Σn² − N``,
``N(N−1)``), so an even step keeps them exact. The truncation error of a central difference is
``O((h/S)²)`` relative (``h/S ≤ 2/N``: below ``10⁻⁴`` for ``N ≥ 200`` elements), far below the
sampling error the standard error describes. A field a metric reads only to choose a branch (the
number of clusters, say) has a zero derivative away from the branch point; a step that crosses one
gives a meaningless slope, so non-finite slopes (and those of a step out of a formula's domain on a
tiny table) are set to 0.

>>> import numpy as np
>>> from streameval.comparison import _metrics
>>> from streameval.units import unit_stats_from_codes
>>> us = unit_stats_from_codes(np.array([0, 0, 0, 1, 1, 2, 2, 2]), np.array([0, 0, 1, 2, 2, 3, 3, 4]),
...                            np.array([0, 0, 0, 1, 2, 3, 3, 3]), None, 3, [("elm", 1.0)])
>>> (se,), _ = standard_errors([us], _metrics(["ELM"]), np.ones((1, 3)), [[us.totals]])
>>> se.shape, bool(se[0, 0] > 0)
((1, 1), True)
"""

from __future__ import annotations

import math

import numpy as np

from .stats import ONE, STAT_NAMES, ContingencyStats
from .units import UnitStats

__all__ = ["read_fields", "gradients", "unit_fields", "standard_errors", "slope_fields", "Moments",
           "mean_standard_errors", "weighted_spread", "moment_noise", "row_products", "PRODUCT_ROWS"]

_NSTAT = len(STAT_NAMES)
_REL_STEP = 1e-7
_CHUNK = 1 << 24  # unit-side columns held at once: 128 MB (as much as a block of multiplicities)
_EPS = 2.0**-53

PRODUCT_ROWS = 32  # rows of every BLAS product of resamples (:func:`row_products`)


def row_products(w, x) -> np.ndarray:
    """``w @ x`` for a ``(B, K)`` matrix ``w`` and a ``(K, N)`` matrix (or ``(K,)`` vector) ``x``:
    ``out[b] = Σ_k w[b, k] · x[k]``, as BLAS products of :data:`PRODUCT_ROWS` rows at a time (the
    last group padded with zero rows), so that a row's rounding does not depend on the other rows.

    One BLAS call on all ``B`` rows rounds a row's sums differently with ``B``: the kernel's order
    of summation depends on the shape it is handed (rows at the edge of its register tiles take
    other micro-kernels, threads split other shapes otherwise, a matrix-vector product groups rows
    by position), so the same resample in a block of 7 and in a block of 97 got sums some ulps
    apart, on every OpenBLAS kernel tried (SkylakeX, Haswell, Zen, Nehalem, ...). Here every call
    has the one shape ``(PRODUCT_ROWS, K) × (K, N)`` and row ``b`` sits at position
    ``b mod PRODUCT_ROWS``: its bits depend on its own row and ``x`` only, for blocks that start at
    multiples of :data:`PRODUCT_ROWS` (as ``compare``'s do). Across machines the bits may differ
    (another BLAS kernel), within a machine they do not. O(B · K · N) multiply-adds in
    ``⌈B / PRODUCT_ROWS⌉`` BLAS calls.

    >>> w = np.arange(80.0).reshape(40, 2)
    >>> row_products(w, np.array([1.0, -1.0])).tolist() == [-1.0] * 40
    True
    >>> row_products(w, np.ones((2, 3))).shape
    (40, 3)
    """
    w = np.asarray(w, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    vector = x.ndim == 1
    x2 = np.ascontiguousarray(x.reshape(len(x), -1) if vector else x)
    b, r = len(w), PRODUCT_ROWS
    out = np.empty((b, x2.shape[1]))
    full = b - b % r
    for lo in range(0, full, r):
        np.matmul(w[lo:lo + r], x2, out=out[lo:lo + r])
    if full < b:
        pad = np.zeros((r, w.shape[1]))
        pad[: b - full] = w[full:]
        out[full:] = (pad @ x2)[: b - full]
    return out[:, 0] if vector else out


class _Recorder:
    """A stand-in for a stats object that notes which fields a metric reads."""

    def __init__(self, stats: ContingencyStats, f_keys: list):
        self._stats, self._f_keys = stats, f_keys
        self.read: set[int] = set()

    def __getattr__(self, name):
        value = getattr(self._stats, name)
        if name == "f_sums":
            return _DictRecorder(value, self.read, self._f_keys)
        if name in STAT_NAMES:
            self.read.add(STAT_NAMES.index(name))
        return value


class _DictRecorder(dict):
    def __init__(self, d: dict, read: set, f_keys: list):
        super().__init__(d)
        self._read, self._f_keys = read, f_keys

    def __getitem__(self, key):
        self._read.add(_NSTAT + self._f_keys.index(key))
        return super().__getitem__(key)


def read_fields(ustats: UnitStats, metric, row) -> list:
    """The indices (into ``ustats.fields``) of the fields ``metric`` reads at the combined ``row``:
    the fields its formula ``θ(S)`` depends on there (adjusted Rand: ``N``, ``Σn²``, ``Σa²``,
    ``Σb²``). O(fields): one metric read through a recorder of the fields.

    >>> import numpy as np
    >>> from streameval import AdjustedRand
    >>> us = UnitStats([ContingencyStats.from_cells([(0, 0, 2), (1, 1, 1)], ())], ())
    >>> [us.fields[i] for i in read_fields(us, AdjustedRand(), us.totals)]
    ['n', 'sum_cell_sq', 'sum_row_sq', 'sum_col_sq']
    """
    rec = _Recorder(ustats.stats(row), list(ustats.f_keys))
    metric.value(rec)
    return sorted(rec.read)


def _step(v: int, unit: int = 1) -> int:
    """The even step of a field of value ``v`` whose unit is ``unit`` (``ONE`` for a fixed-point
    sum, 1 for a count): ``10⁻⁷`` of the field, or of one unit where the field is smaller, and at
    least 2. A fixed-point sum at 0 (every cell a singleton: ``Σ n log n = 0``) then steps by
    ``10⁻⁷`` of a unit, not by ``2·2⁻⁶⁴`` of one, which moved the metric by less than its rounding
    and read that rounding as a slope. O(1).

    >>> _step(0), _step(10**9), _step(0, ONE) == _step(ONE)
    (2, 100, True)
    """
    return max(2, 2 * int(max(abs(v), unit) * _REL_STEP / 2))


def _fixed_point(field) -> bool:
    """Whether a field of :attr:`UnitStats.fields` is a fixed-point sum (``ONE = 2**64`` a unit):
    the ``Σ x log x`` sums, the BCubed and ELM sums, the tracked F sums. O(1)."""
    return isinstance(field, tuple) or field.endswith(("_xlogx", "_sum"))


def _value(metric, stats) -> float:
    """The metric at perturbed sums; NaN where they are no table's (a tiny table stepped out of
    its formula's domain, e.g. more pairs than elements allow): the slope then counts as 0."""
    try:
        return metric.value(stats)
    except (ArithmeticError, ValueError):
        return float("nan")


def gradients(ustats: UnitStats, metrics, rows) -> np.ndarray:
    """``(metrics, len(rows), fields)`` gradients ``∂θ/∂S_f`` of each metric at each combined row
    (central differences with an even integer step, see the module). ``2 ×`` (fields read) metric
    reads per metric and row: O(metrics · rows · fields read).

    >>> from streameval import BCubed
    >>> us = UnitStats([ContingencyStats.from_cells([(0, 0, 1500), (1, 0, 500)])], [("bcubed", 1.0)])
    >>> g = gradients(us, [BCubed()], [us.totals])[0, 0]
    >>> s = us.stats(us.totals)
    >>> exact = -s.f_sums["bcubed", 1.0] / (s.n ** 2 * 2.0 ** 64)  # d(F/(N·ONE))/dN
    >>> bool(abs(g[0] / exact - 1) < 1e-5)  # (h/N)² = 1e-6 relative: the central difference's error
    True
    """
    nf = len(ustats.fields)
    out = np.zeros((len(metrics), len(rows), nf))
    if not len(rows):
        return out
    ref = max(rows, key=lambda r: r[0])  # the fullest table: an empty one returns before reading
    fields = [read_fields(ustats, m, ref) for m in metrics]
    units = [ONE if _fixed_point(f) else 1 for f in ustats.fields]
    # where each field lives in a stats object: its attribute, or its key in ``f_sums``
    names = [(True, name) for name in STAT_NAMES] + [(False, key) for key in ustats.f_keys]
    for r, row in enumerate(rows):
        s = ustats.stats(row)  # one object per row: a field is stepped in place, then put back
        for k, metric in enumerate(metrics):
            for f in fields[k]:
                attr, key = names[f]
                held = s.__dict__ if attr else s.f_sums
                v = row[f]
                h = _step(v, units[f])
                held[key] = v + h
                up = _value(metric, s)
                held[key] = v - h if v >= h else v
                down = _value(metric, s)
                held[key] = v
                slope = (up - down) / (h if v < h else 2 * h)
                out[k, r, f] = slope if math.isfinite(slope) else 0.0
    return out


def unit_fields(ustats: UnitStats) -> np.ndarray:
    """``(U, fields)`` float64 sums of every unit (:meth:`UnitStats.field_values`). O(U · columns).

    >>> us = UnitStats([ContingencyStats.from_cells([(0, 0, 2)], ())], ())
    >>> unit_fields(us)[0, :3].tolist()
    [2.0, 1.0, 1.0]
    """
    return ustats.field_values()


def standard_errors(systems: list, metrics, m: np.ndarray, rows: list, pairs=(),
                    fields: list | None = None) -> tuple[list, list]:
    """Linearization standard errors at the resamples with multiplicities ``m`` (``(B, U)``):
    ``([se of each system], [se of each paired difference])``, each ``(metrics, B)``.

    ``systems`` are :class:`~streameval.units.UnitStats` over the same units, ``rows[i]`` system
    ``i``'s combined rows (``systems[i].combine(m)``), ``pairs`` index pairs ``(i, j)`` whose
    difference ``θ_i − θ_j`` is wanted (scores ``z_i − z_j``: the pairing is in), ``fields`` the
    systems' :func:`unit_fields` if already computed. The module's ``se² = Σ_u m_u (z_u − z̄)²``.
    Computed from the moments of the units' (centred) fields rather than from the ``(B, U)`` scores
    (:class:`Moments`): with ``x_u`` unit ``u``'s fields, ``Σ_u m_u z_u = g · Σ_u m_u x_u`` and
    ``Σ_u m_u z_u² = gᵀ (Σ_u m_u x_u x_uᵀ) g`` (over the fields the metric reads), one BLAS product
    of the multiplicities with the units' fields and their pairwise products for all metrics,
    systems and pairs at once. Cost per resample: the gradients (two reads per field read), plus
    ``O(U · P)`` multiply-adds, ``P`` the distinct products of two fields some metric, system or
    pair needs (each metric ``k`` reads 2 to 4 fields); memory ``O(B · P)`` and the unit-side
    columns.

    >>> import numpy as np
    >>> from streameval import ELM
    >>> us = UnitStats([ContingencyStats.from_cells([(0, 0, 2), (1, 0, 1)]),
    ...                 ContingencyStats.from_cells([(0, 0, 3)])], [("elm", 1.0)])
    >>> m = np.array([[2, 0], [1, 1]])
    >>> se, _ = standard_errors([us], [ELM()], m, [us.combine(m)])
    >>> float(se[0][0, 0]), bool(se[0][0, 1] > 0)  # one unit drawn twice: no spread
    (0.0, True)
    """
    if fields is None:
        fields = [unit_fields(us) for us in systems]
    w = np.asarray(m, dtype=np.float64)
    grads = [gradients(us, metrics, r) for us, r in zip(systems, rows)]  # (metrics, B, fields)
    return Moments(fields, slope_fields(grads), pairs).standard_errors(grads, w)


def slope_fields(grads: list) -> list:
    """``[[fields with a non-zero slope somewhere, for each metric] for each system]`` of the
    ``(metrics, B, fields)`` gradients of each system (:func:`gradients`). O(size of the
    gradients).

    >>> slope_fields([np.array([[[0.0, 2.0, 0.0]], [[1.0, 0.0, 0.0]]])])
    [[[1], [0]]]
    """
    return [[np.flatnonzero(np.any(g[k] != 0, axis=0)).tolist() for k in range(g.shape[0])]
            for g in grads]


class Moments:
    """The units' centred fields and their pairwise products that the standard errors need, held
    once for every block of resamples (:func:`standard_errors` builds one per call; ``compare``
    one per call of its own, for all its blocks).

    ``fields[i]`` is system ``i``'s ``(U, fields)`` :func:`unit_fields`, ``own[i][k]`` the fields
    whose slope metric ``k`` of system ``i`` may use (:func:`slope_fields`), ``pairs`` the index
    pairs of the differences. A field is centred over the units (a shift of every unit's fields
    leaves the spread of the scores unchanged, and keeps the moments small); a centred column
    that two systems share (the truth's: ``n``, the row sums) is one variable, and each product of
    two variables is one column, whichever metric, system or pair needs it. :meth:`sums` is the
    product of the multiplicities with these columns, held whole up to ``_CHUNK`` floats and
    otherwise rebuilt block by block over groups of units. Cost: ``O(U · (V + P))`` to build
    (``V`` variables, ``P`` products), ``O(B · U · (V + P))`` BLAS per call of :meth:`sums`.

    >>> x = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.0]])
    >>> mo = Moments([x, x], [[[0, 1]], [[0, 1]]], [(0, 1)])
    >>> mo.n_vars, len(mo.products)  # the two systems share both fields
    (2, 3)
    """

    def __init__(self, fields: list, own: list, pairs=()):
        self.own = [[list(o) for o in per] for per in own]
        self.pairs = list(pairs)
        cols: list = []
        seen: dict = {}
        self.var: list = []  # per system: field -> variable
        for i, f in enumerate(fields):
            d = {}
            for fi in sorted({x for o in self.own[i] for x in o}):
                col = np.ascontiguousarray(f[:, fi] - f[:, fi].mean())
                key = col[:8].tobytes() + np.float64(col.sum()).tobytes()
                v = next((v for v in seen.get(key, ()) if np.array_equal(cols[v], col)), None)
                if v is None:
                    v = len(cols)
                    cols.append(col)
                    seen.setdefault(key, []).append(v)
                d[fi] = v
            self.var.append(d)
        self.n_vars = len(cols)
        self._cols = cols
        need: set = set()
        for i, per in enumerate(self.own):
            for o in per:
                need.update(self._pair(self.var[i][a], self.var[i][b]) for a in o for b in o)
        for a, b in self.pairs:
            for oa, ob in zip(self.own[a], self.own[b]):
                need.update(self._pair(self.var[a][f], self.var[b][g]) for f in oa for g in ob)
        self.products = sorted(need)
        self._col = {p: self.n_vars + j for j, p in enumerate(self.products)}
        self.n_units = len(fields[0]) if fields else 0
        width = self.n_vars + len(self.products)
        self._x = self._columns(0, self.n_units) if self.n_units * width <= _CHUNK else None
        # each quadratic form as (slope index, slope index, column, coefficient) arrays
        self._quad = [[self._form(o, o, self.var[i], self.var[i], True) for o in per]
                      for i, per in enumerate(self.own)]
        # the columns Σ_u w_u c_uf² of each metric's fields (in every form: its diagonal), which
        # bound the moments' rounding (:func:`moment_noise`)
        self._diag = [[np.array([self._col[(self.var[i][f], self.var[i][f])] for f in o], dtype=np.intp)
                       for o in per] for i, per in enumerate(self.own)]
        self._cross = [[self._form(oa, ob, self.var[a], self.var[b], False)
                        for oa, ob in zip(self.own[a], self.own[b])] for a, b in self.pairs]

    @staticmethod
    def _pair(v: int, w: int) -> tuple:
        return (v, w) if v <= w else (w, v)

    def _form(self, oa, ob, va, vb, symmetric: bool):
        fa, fb, col, coef = [], [], [], []
        for i, f in enumerate(oa):
            for j, g in enumerate(ob):
                if symmetric and j < i:
                    continue
                fa.append(f)
                fb.append(g)
                col.append(self._col[self._pair(va[f], vb[g])])
                coef.append(1.0 if (not symmetric or i == j) else 2.0)
        return (np.array(fa, dtype=np.intp), np.array(fb, dtype=np.intp),
                np.array(col, dtype=np.intp), np.array(coef))

    def _columns(self, lo: int, hi: int) -> np.ndarray:
        """The ``(hi - lo, V + P)`` columns of units ``lo .. hi-1``: centred variables, products."""
        out = np.empty((self.n_vars + len(self.products), hi - lo))  # column by column, then
        for v, col in enumerate(self._cols):                           # one transposing copy
            out[v] = col[lo:hi]
        for j, (v, w) in enumerate(self.products):
            np.multiply(self._cols[v][lo:hi], self._cols[w][lo:hi], out=out[self.n_vars + j])
        return np.ascontiguousarray(out.T)

    def covers(self, grads: list) -> bool:
        """Whether every non-zero slope of ``grads`` lies in the fields these moments hold.
        O(size of ``grads``)."""
        for g, per in zip(grads, self.own):
            for k, o in enumerate(per):
                rest = np.ones(g.shape[2], dtype=bool)
                rest[o] = False
                if np.any(g[k][:, rest] != 0):
                    return False
        return True

    def sums(self, w: np.ndarray) -> np.ndarray:
        """``(B, V + P)``: ``Σ_u w_bu c_u`` for every column ``c``. O(B · U · (V + P)): one
        ``(B, U) × (U, V + P)`` product (in blocks of units when the columns are not kept)."""
        if self._x is not None:
            return row_products(w, self._x)
        width = self.n_vars + len(self.products)
        total = np.zeros((len(w), width))
        step = max(1, _CHUNK // max(1, width))
        for lo in range(0, self.n_units, step):
            hi = min(self.n_units, lo + step)
            total += row_products(w[:, lo:hi], self._columns(lo, hi))
        return total

    def standard_errors(self, grads: list, w: np.ndarray, tot=None) -> tuple[list, list]:
        """``([se of each system], [se of each pair])``, each ``(metrics, B)``, at the resamples
        ``w`` (``(B, U)`` float64, row sums ``tot`` if known) with the ``(metrics, B, fields)``
        gradients of each system (whose non-zero slopes these moments must cover: :meth:`covers`).
        Given ``tot``, ``w`` is taken to be ``>= 0``, as drawn. Each is
        :func:`weighted_spread` of the scores ``z_u = Σ_f g_f c_uf``: ``sqrt(s2 - s1²/tot)``
        with ``s1 = Σ_u w_u z_u``, ``s2 = Σ_u w_u z_u²``, read from the moments' column sums.
        Cost: :meth:`sums` plus O(B · terms of the quadratic forms) per metric."""
        s = self.sums(w)
        if tot is None:
            tot = w.sum(axis=1)
            one = _one_unit(w)
        else:
            tot = np.asarray(tot, dtype=np.float64)
            # one positive multiplicity iff the largest is the whole (exact sums of integers)
            one = (tot > 0) & (w.max(axis=1, initial=0.0) == tot)
        tot = np.where(tot > 0, tot, np.nan)
        n_metrics = grads[0].shape[0] if grads else 0
        se = [np.empty((n_metrics, len(w))) for _ in grads]
        sed = [np.empty((n_metrics, len(w))) for _ in self.pairs]
        u = self.n_units
        for k in range(n_metrics):
            s1, s2, scale, terms = [], [], [], []
            for i, g in enumerate(grads):
                gk, o = g[k], self.own[i][k]
                s1.append(_row_sums(gk[:, o] * s[:, [self.var[i][f] for f in o]]))  # Σ w z
                fa, fb, col, coef = self._quad[i][k]
                s2.append(_row_sums(gk[:, fa] * gk[:, fb] * s[:, col] * coef))  # Σ w z²
                # Σ_f |g_f| sqrt(Σ_u w_u c_uf²): what the moments' rounding scales with
                scale.append(_row_sums(np.abs(gk[:, o]) * np.sqrt(np.maximum(s[:, self._diag[i][k]], 0.0))))
                terms.append(len(coef) + 2 * len(o))
                se[i][k] = weighted_spread(s1[i], s2[i], tot, moment_noise(scale[i], u, terms[i]))
            for j, (a, b) in enumerate(self.pairs):
                fa, fb, col, coef = self._cross[j][k]
                cross = _row_sums(grads[a][k][:, fa] * grads[b][k][:, fb] * s[:, col] * coef)  # Σ w z_a z_b
                # the scores z_a − z_b: Σ w (z_a − z_b)² = Σ w z_a² + Σ w z_b² − 2 Σ w z_a z_b
                noise = moment_noise(scale[a] + scale[b], u, terms[a] + terms[b] + len(coef) + 4)
                sed[j][k] = weighted_spread(s1[a] - s1[b], s2[a] + s2[b] - 2 * cross, tot, noise)
        for x in se + sed:
            x[:, one] = 0.0
        return se, sed


def _row_sums(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=1)`` added left to right, column after column: each row's sum in one order
    whatever the number of rows and the array's layout (numpy's reduction sums a C-ordered row
    pairwise, an F-ordered array -- what ``a[:, idx]`` gives -- column by column, and a single row
    either way), so that a resample's standard error does not depend on its block. O(B · T)."""
    if x.shape[1] == 0:
        return np.zeros(len(x))
    out = x[:, 0].copy()
    for t in range(1, x.shape[1]):
        out += x[:, t]
    return out


def weighted_spread(s1, s2, tot, noise=None):
    """``sqrt(Σ_u w_u (z_u − z̄)²)`` from the moments ``s1 = Σ_u w_u z_u``, ``s2 = Σ_u w_u z_u²``
    and ``tot = Σ_u w_u`` (arrays, one entry per resample): ``sqrt(s2 − s1²/tot)``, the one
    formula of every linearization standard error (a system's, a paired difference's, a mean of
    per-unit values'), and 0 where ``s2 − s1²/tot`` is at most ``noise`` (the formula's rounding
    error, :func:`moment_noise`; without it, where it is not positive). A spread that is 0 in
    exact arithmetic (scores that are all equal) leaves a rounding residue of either sign, some
    ``10⁻⁹`` of the scores once square-rooted, which the bootstrap-t would divide by; ``tot`` is
    NaN for an empty resample. O(B).

    >>> weighted_spread(np.array([3.0]), np.array([5.0]), np.array([2.0]))  # z = 1, 2: Σ(z − 1.5)²
    array([0.70710678])
    >>> weighted_spread(np.array([0.0]), np.array([2.0**-60]), np.array([3.0]), np.array([1e-16]))
    array([0.])
    """
    v = s2 - s1 * s1 / tot
    if noise is not None:
        v = np.where(v <= noise, 0.0, v)  # NaN (an empty resample) stays NaN
    return np.sqrt(np.maximum(v, 0.0))


def moment_noise(scale, n_units: int, n_terms: int):
    """A bound on the rounding error of ``s2 − s1²/tot`` (:func:`weighted_spread`) as
    :class:`Moments` computes it: ``(4U + T + 16)·ε·A²`` with ``ε = 2⁻⁵³``, ``U`` the units,
    ``T`` the terms of the forms (products of two slopes and a column, plus twice the fields) and
    ``A = Σ_f |g_f| sqrt(Σ_u w_u c_uf²)`` over the fields ``f`` (slopes ``g_f``, centred unit
    columns ``c_uf``, integer weights ``w_u``, each an array over the resamples).

    Error analysis, to first order in ε (``γ_n = nε``). The scores are ``z_u = Σ_f g_f c_uf``;
    ``Σ_u w_u z_u² ≤ A²`` (Minkowski) and ``|Σ_u w_u z_u| ≤ sqrt(tot)·A`` (Cauchy–Schwarz).
    Centring rounds each ``c_uf`` by a relative ε, moving each score by at most
    ``ε Σ_f |g_f||c_uf|``, whose weighted norm is at most ``εA``: the spread moves by ``≤ εA``,
    its square by ``≤ 3εA²``. Each column sum ``Σ_u w_u c_ua c_ub`` (a product, then ``U``
    additions in any order) is off by ``≤ γ_{U+1} Σ_u w_u |c_ua c_ub| ≤ γ_{U+1}
    sqrt(S_aa S_bb)``; the form ``s2 = Σ coef·g_a·g_b·S_ab`` adds ``γ_{T+2}`` of the sum of its
    terms' magnitudes, ``Σ coef |g_a g_b| sqrt(S_aa S_bb) = A²``: ``(γ_{U+1} + γ_{T+2})·A²``.
    ``s1 = Σ_f g_f S_f`` is off by ``≤ γ_{U+F} Σ_f |g_f| Σ_u w_u |c_uf| ≤ γ_{U+F} sqrt(tot)·A``,
    so ``s1²/tot`` by ``≤ (2γ_{U+F} + 3ε)·A²``; the subtraction adds ``ε·A²``. The sum is below
    ``(3U + T + 2F + 10)·ε·A²``; blocks of units summed apart add at most ``U`` more additions,
    and ``T`` here counts ``2F``: hence the bound (16 covering the second-order terms).
    O(size of ``scale``).

    >>> float(moment_noise(np.array([1.0]), 3, 6)[0]) == 34 * 2.0**-53
    True
    """
    return (4 * n_units + n_terms + 16) * _EPS * np.asarray(scale) ** 2


def _one_unit(w: np.ndarray) -> np.ndarray:
    """The resamples that drew exactly one distinct unit (``k ≥ 1`` copies of it): every score
    equals the mean, so the spread is 0 exactly — the moment formula's ``s2 − s1²/tot`` would leave
    a rounding residue (``~10⁻⁹``) that the bootstrap-t would divide by."""
    return np.count_nonzero(w > 0, axis=1) == 1


def mean_standard_errors(per_unit: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``(metrics, B)`` standard errors of the ``m``-weighted mean of per-unit values
    (``aggregate="mean"``, a linear statistic): ``sqrt(Σ_u m_u (v_u − v̄)²) / Σ_u m_u``.
    O(metrics · B · U).

    >>> mean_standard_errors(np.array([[0.0, 1.0]]), np.array([[1, 1]])).round(4).tolist()
    [[0.3536]]
    """
    w = np.asarray(m, dtype=np.float64)
    tot = w.sum(axis=1)
    tot = np.where(tot > 0, tot, np.nan)
    one = _one_unit(w)
    out = []
    for v in np.asarray(per_unit, dtype=np.float64):
        c = v - v.mean()  # centred: the spread is shift-invariant, the moments stay small
        s1, s2 = row_products(w, np.stack([c, c * c], axis=1)).T  # one field, slope 1: A² = s2
        se = weighted_spread(s1, s2, tot, moment_noise(np.sqrt(s2), len(c), 3)) / tot  # (:func:`moment_noise`)
        se[one] = 0.0
        out.append(se)
    return np.array(out)
