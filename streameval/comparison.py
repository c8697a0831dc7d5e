"""Confidence intervals and paired significance tests for clustering metrics, by resampling units.

Clustering metrics are not means over independent elements: an element's score depends on its
cluster-mates, so resampling *elements* breaks clusters apart (or, with weights, turns ``k`` copies
of a pair into ``k²`` pairs) and gives intervals that are far too narrow. The resampling unit is a
block that both labelings partition on their own: a stream in page-stream segmentation, a document in
coreference, a source batch in entity resolution. A unit drawn ``k`` times enters a resample as ``k``
*disjoint copies* (its labels tagged with the copy index), never as a weight ``k``.

Because the copies are disjoint, the table of a resample is the merge of its units' tables, and every
sufficient statistic of :class:`~streameval.stats.ContingencyStats` (cell, row and column sums, the
fixed-point BCubed/ELM/entropy sums, the element-averaged F sums, cluster counts, maxima, singletons)
is the sum of the per-unit statistics. A resample with multiplicities ``m`` therefore has the stats
``Σ_u m_u · S_u``: :func:`compare` computes them for all resamples at once as one exact integer
matrix product (the big fixed-point sums split into 21-bit limbs, so a float64 BLAS product stays
exact), then each metric's ``value(stats)``. The elements are never visited again, and the stats of a
resample equal, bit for bit, those of the table built from its tagged copies.

The methods:

- **Percentile bootstrap** (one system): ``B`` resamples of the units with replacement; the interval is
  the ``α/2`` and ``1-α/2`` quantiles (numpy's linear interpolation) of the ``B`` values (a Poisson
  resample that drew no unit at all has no value and is left out).
- **Paired bootstrap** (Koehn 2004, as sacreBLEU): the same resamples for every system; ``δ_b = m_A -
  m_B``; the interval of ``δ`` from its quantiles; the p-value is the *centred two-sided* variant:
  ``p = (1 + #{|δ_b - δ_obs| ≥ |δ_obs|}) / (1 + B)`` (the resampled differences, shifted to mean the
  observed one, stand in for the null distribution). ``p_greater``, the one-sided p-value for "A is
  not better than B", is ``(1 + #{δ_b - δ_obs ≥ δ_obs}) / (1 + B)`` (for bigger-is-better metrics).
- **Approximate randomization** (Riezler & Maxwell 2005): for each unit, swap the two systems'
  outputs with probability ½; ``p = (1 + #{|δ_r| ≥ |δ_obs|}) / (1 + R)``. The intervals still come
  from the paired bootstrap; the method chooses only the test.

Aggregates: ``"pooled"`` (default) scores one table over all units (labels kept apart per unit);
``"mean"`` averages the per-unit values (the page-stream literature's "mean F1"), a resample's value
being the multiplicity-weighted mean.

Without units there is nothing valid to resample: every metric here depends on pairs of elements,
and singleton units would cut clusters apart, so :func:`compare` refuses (``units`` is required).

>>> import streameval as se
>>> y_true = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
>>> y_a    = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6]
>>> y_b    = [0, 1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5]
>>> units  = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
>>> r = se.compare(y_true, {"A": y_a, "B": y_b}, units=units, metrics=["ELM"],
...                n_resamples=200, seed=1)
>>> r.values["A"]["ELM"].value > r.values["B"]["ELM"].value
True
>>> print(r)  # doctest: +ELLIPSIS
paired_bootstrap over 3 units, 12 elements, 200 resamples, 95% intervals, seed 1
system  metric  value  low     high
A       ELM     0.8333 ...
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from ._version import __version__
from .bootstrap import percentile_interval, poisson_draws, seed64, unit_hash
from .metrics import Metric, resolve
from .stats import STAT_NAMES, ContingencyStats

__all__ = [
    "compare",
    "confidence_interval",
    "ComparisonReport",
    "Interval",
    "Difference",
    "UnitStats",
    "unit_stats",
    "bootstrap_multiplicities",
    "DEFAULT_METRICS",
]

DEFAULT_METRICS = ("ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo")
_METHODS = ("paired_bootstrap", "randomization")
_AGGREGATES = ("pooled", "mean")
_LIMB = 21  # bits per limb: Σ m_u * limb < 2**53 (exact in float64) while Σ m_u < 2**32
_MASK = (1 << _LIMB) - 1
_NSTAT = len(STAT_NAMES)


# --------------------------------------------------------------------------- metrics
def _metrics(metrics) -> list:
    """Fresh metric objects from names (as :func:`streameval.metrics.resolve` reads them), classes
    or instances; O(1) metrics only."""
    if metrics is None:
        metrics = DEFAULT_METRICS
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    out = []
    for item in metrics:
        if isinstance(item, str) and not item.replace(",", " ").split():
            raise ValueError(f"empty metric name {item!r}")
        for m in [c() for c in resolve(item)] if isinstance(item, str) else [item]:
            if isinstance(m, type) and issubclass(m, Metric):
                m = m()
            elif not isinstance(m, Metric):
                raise TypeError(f"not a streameval metric: {m!r}")
            else:
                m = m.clone()
            if m.on_demand:
                raise ValueError(
                    f"{m.name} is computed from the table's cells, not from summable statistics; "
                    "unit resampling supports the O(1) metrics only"
                )
            out.append(m)
    names = [m.name for m in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"metric named twice: {sorted(dup)}")
    if not out:
        raise ValueError("no metric given")
    return out


def _f_keys(metrics) -> list:
    """The ``(kind, beta)`` element-averaged F sums the metrics read (their ``f_specs``, once each)."""
    return list(dict.fromkeys(spec for m in metrics for spec in m.f_specs))


# --------------------------------------------------------------------------- unit statistics
class UnitStats:
    """The per-unit sufficient statistics of one labelling, and their exact weighted sums.

    ``rows[u]`` lists unit ``u``'s :class:`~streameval.stats.ContingencyStats` fields (in
    :attr:`fields` order: the ``STAT_NAMES``, then the tracked F sums) as Python ints.
    :meth:`combine` returns ``Σ_u M[b, u] · rows[u]`` for every row ``b`` of a multiplicity matrix,
    exactly: each column is split into 21-bit limbs, the product is a float64 matrix product whose
    partial sums are integers below ``2**53`` (exact while every row of ``M`` sums to less than
    ``2**32``), and the limbs are joined as Python ints.

    Cost: :meth:`combine` is ``O(B · U · limbs)`` int64 operations plus ``O(B · fields)`` Python int
    operations; :meth:`stats` O(fields) per resample.

    >>> u = UnitStats([ContingencyStats.from_cells([(0, 0, 2)], ()),
    ...                ContingencyStats.from_cells([(0, 0, 1), (1, 0, 1)], ())], ())
    >>> s = u.stats(u.combine(np.array([[2, 0], [1, 1]]))[1])
    >>> s.n, s.cells, s.k_true, s.sum_cell_sq
    (4, 3, 3, 6)
    """

    def __init__(self, stats: list, f_keys):
        f_keys = [tuple(k) for k in f_keys]
        rows = []
        for s in stats:
            row = [getattr(s, name) for name in STAT_NAMES] + [s.f_sums[k] for k in f_keys]
            if any(v < 0 for v in row):  # pragma: no cover - every statistic is a count or a sum of >= 0 terms
                raise ValueError("negative unit statistic")
            rows.append(row)
        self._build(rows, f_keys)

    def _build(self, rows: list, f_keys: list) -> None:
        self.f_keys = f_keys
        self.fields = list(STAT_NAMES) + [("f", k) for k in f_keys]
        self.rows = rows
        self.n_units = len(rows)
        width = len(self.fields)
        self._limbs = []
        cols = []
        for f in range(width):
            bits = max((r[f].bit_length() for r in rows), default=0)
            n = max(1, -(-bits // _LIMB))
            self._limbs.append(n)
            for k in range(n):
                cols.append([(r[f] >> (_LIMB * k)) & _MASK for r in rows])
        self._x = np.array(cols, dtype=np.float64).T.reshape(len(rows), len(cols))
        self.totals = [sum(r[f] for r in rows) for f in range(width)]

    def stack(self, other: UnitStats) -> UnitStats:
        """The units of ``self`` followed by those of ``other`` (same fields). O(U · fields)."""
        if other.f_keys != self.f_keys:
            raise ValueError("cannot stack unit statistics of different F sums")
        new = object.__new__(UnitStats)
        new._build(self.rows + other.rows, self.f_keys)
        return new

    def combine(self, m: np.ndarray) -> list:
        """``[[Σ_u m[b, u] · rows[u][f] for f in fields] for b]``: exact Python ints. See class."""
        m = np.asarray(m, dtype=np.int64)
        if m.ndim != 2 or m.shape[1] != self.n_units:
            raise ValueError(f"multiplicities must have shape (resamples, {self.n_units}), got {m.shape}")
        if m.size and (m.min() < 0 or int(m.sum(axis=1).max()) >= 1 << 32):
            raise ValueError("multiplicities must be >= 0 and sum to less than 2**32 per resample")
        # (B, limb columns): a BLAS product of integers whose every partial sum is below 2**53,
        # so exact in float64 whatever the summation order
        prod = (m.astype(np.float64) @ self._x).astype(np.int64)
        out_cols = []
        c = 0
        for n in self._limbs:
            if n == 1:
                out_cols.append(prod[:, c].tolist())
            else:
                col = prod[:, c].astype(object)
                for k in range(1, n):
                    col = col + (prod[:, c + k].astype(object) << (_LIMB * k))
                out_cols.append(col.tolist())
            c += n
        return [list(r) for r in zip(*out_cols)] if out_cols else [[] for _ in range(len(m))]

    def subset(self, index) -> UnitStats:
        """The statistics of the units ``index`` (in that order, repeats allowed). O(len · fields)."""
        new = object.__new__(UnitStats)
        index = np.asarray(index, dtype=np.int64)
        new.f_keys, new.fields, new._limbs = self.f_keys, self.fields, self._limbs
        new.rows = [self.rows[i] for i in index.tolist()]
        new.n_units = len(new.rows)
        new._x = self._x[index]
        new.totals = [sum(col) for col in zip(*new.rows)] if new.rows else [0] * len(self.fields)
        return new

    def stats(self, row) -> ContingencyStats:
        """A :class:`ContingencyStats` from one combined row. O(fields)."""
        s = object.__new__(ContingencyStats)  # skips the dataclass __init__: a hot path
        d = s.__dict__
        d.update(zip(STAT_NAMES, row))
        d["f_sums"] = dict(zip(self.f_keys, row[_NSTAT:]))
        return s

    def unit(self, u: int) -> ContingencyStats:
        """Unit ``u``'s own stats."""
        return self.stats(self.rows[u])

    def total(self) -> ContingencyStats:
        """The stats of all units together (each once): the observed table's. O(U · fields)."""
        return self.stats(self.totals)


def _as_list(x, name: str) -> list:
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {x.shape}")
        return x.tolist()
    try:
        return list(x)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of labels, got {type(x).__name__}") from None


def _check_hashable(v, name: str, i: int):
    try:
        hash(v)
    except TypeError:
        raise TypeError(f"{name}[{i}] must be hashable, got {type(v).__name__}: {v!r}") from None
    if v is None or (isinstance(v, float) and v != v):
        raise ValueError(f"{name}[{i}] is missing ({v!r})")


def _group(y_true, preds: dict, units, labels: str, weights=None):
    """``(unit order, {system: [cells per unit]}, cells of the truth alone)`` after the checks."""
    if units is None:
        raise ValueError(
            "units= is required: clustering metrics are not sums over independent elements, so "
            "elements cannot be resampled one by one (that splits clusters and gives intervals far "
            "too narrow). Pass the block each element belongs to (a stream, a document, a source "
            "batch), such that no true or predicted cluster spans two blocks."
        )
    if labels not in ("global", "per_unit"):
        raise ValueError(f'labels must be "global" or "per_unit", got {labels!r}')
    yt = _as_list(y_true, "y_true")
    us = _as_list(units, "units")
    n = len(yt)
    if len(us) != n:
        raise ValueError(f"units has {len(us)} entries, y_true has {n}")
    if n == 0:
        raise ValueError("no elements: y_true is empty")
    index: dict = {}
    for i, u in enumerate(us):
        _check_hashable(u, "units", i)
        if u not in index:
            index[u] = len(index)
    uix = [index[u] for u in us]
    if weights is None:
        ws = [1] * n
    else:
        from ._validate import check_weight

        ws = _as_list(weights, "w")
        if len(ws) != n:
            raise ValueError(f"w has {len(ws)} entries, y_true has {n}")
        ws = [check_weight(x) for x in ws]
    for i, t in enumerate(yt):
        _check_hashable(t, "y_true", i)
    if labels == "global":
        _check_partition(yt, us, "y_true")
    out = {}
    for name, yp in preds.items():
        yp = _as_list(yp, f"y_pred[{name!r}]")
        if len(yp) != n:
            raise ValueError(f"system {name!r} has {len(yp)} predictions, y_true has {n}")
        for i, p in enumerate(yp):
            _check_hashable(p, f"y_pred[{name!r}]", i)
        if labels == "global":
            _check_partition(yp, us, f"system {name!r}")
        cells: list = [{} for _ in index]
        for k, t, p, w in zip(uix, yt, yp, ws):
            d = cells[k]
            d[t, p] = d.get((t, p), 0) + w
        out[name] = cells
    return list(index), out


def _check_partition(labels: list, units: list, what: str) -> None:
    home: dict = {}
    for i, (y, u) in enumerate(zip(labels, units)):
        h = home.setdefault(y, u)
        if h != u:
            raise ValueError(
                f"{what}: label {y!r} occurs in unit {h!r} and in unit {u!r} (element {i}); a unit "
                "must hold whole clusters. If labels are only unique within a unit (document "
                'numbers restarting per stream), pass labels="per_unit" (on the command line: '
                "--labels per_unit)."
            )


def unit_stats(cells_per_unit: list, metrics) -> UnitStats:
    """:class:`UnitStats` from ``[{(true, pred): count}]`` per unit, for ``metrics``. O(cells)."""
    keys = _f_keys(metrics)
    return UnitStats(
        [ContingencyStats.from_cells(((t, p, c) for (t, p), c in d.items()), keys) for d in cells_per_unit],
        keys,
    )


def bootstrap_multiplicities(n_units: int, n_resamples: int, rng) -> np.ndarray:
    """``(B, U)`` int64 counts of each unit in ``B`` uniform resamples of ``U`` units with replacement.

    >>> m = bootstrap_multiplicities(5, 3, np.random.default_rng(0))
    >>> m.shape, m.sum(axis=1).tolist()
    ((3, 5), [5, 5, 5])
    """
    idx = rng.integers(0, n_units, size=(n_resamples, n_units))
    flat = (idx + (np.arange(n_resamples) * n_units)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * n_units).reshape(n_resamples, n_units).astype(np.int64)


_BLOCK = 1 << 22  # multiplicities per block of resamples


def _block_rows(n_units: int) -> int:
    return max(1, _BLOCK // max(1, n_units))


def _resample_blocks(order: list, n_resamples: int, seed: int, rng, resampling: str):
    """The ``(b, U)`` multiplicity matrices of consecutive blocks of resamples."""
    rows = _block_rows(len(order))
    hashes = None
    if resampling == "poisson":
        hashes = [unit_hash(u) for u in order]
        s64 = seed64(seed)
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        if hashes is None:
            yield bootstrap_multiplicities(len(order), size, rng)
        else:
            yield np.ascontiguousarray(poisson_draws(s64, hashes, size, start).T)


def _values(ustats: UnitStats, metrics, m: np.ndarray, aggregate: str, per_unit=None) -> np.ndarray:
    """``(metrics, B)`` float values of the resamples with multiplicities ``m`` (B x U)."""
    if aggregate == "mean":
        w = m.astype(np.float64)
        tot = w.sum(axis=1)
        tot[tot == 0] = np.nan
        return (w @ per_unit.T / tot[:, None]).T  # per_unit: (metrics, U)
    rows = ustats.combine(m)
    out = np.empty((len(metrics), len(rows)))
    for b, row in enumerate(rows):
        s = ustats.stats(row)
        if not s.n:  # a Poisson resample that drew no unit: no value (left out of the quantiles)
            out[:, b] = np.nan
            continue
        for k, metric in enumerate(metrics):
            out[k, b] = metric.value(s)
    return out


def _per_unit(ustats: UnitStats, metrics) -> np.ndarray:
    return np.array([[metric.value(ustats.unit(u)) for u in range(ustats.n_units)] for metric in metrics])


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Interval:
    """A metric's observed ``value`` and its ``(low, high)`` confidence interval."""

    value: float
    low: float
    high: float

    def __iter__(self):
        return iter((self.value, self.low, self.high))

    def to_dict(self) -> dict:
        return {"value": _num(self.value), "low": _num(self.low), "high": _num(self.high)}


@dataclass(frozen=True)
class Difference:
    """``delta = m_A - m_B`` observed, its interval, and the test's p-values."""

    delta: float
    low: float
    high: float
    p_value: float
    p_greater: float | None = None

    def to_dict(self) -> dict:
        d = {"delta": _num(self.delta), "low": _num(self.low), "high": _num(self.high),
             "p_value": _num(self.p_value)}
        if self.p_greater is not None:
            d["p_greater"] = _num(self.p_greater)
        return d


def _num(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


class ComparisonReport:
    """The result of :func:`compare`: values with intervals, pairwise differences, the settings.

    - ``values[system][metric]``: an :class:`Interval` ``(value, low, high)``;
    - ``differences[(A, B)][metric]``: a :class:`Difference` ``(delta, low, high, p_value,
      p_greater)`` for every pair of systems in the order given (``A`` before ``B``);
    - ``settings``: everything needed to reproduce the numbers (method, resamples, confidence, seed,
      aggregate, label scope, numbers of units and elements, metric names, p-value variant);
    - ``samples[system]``: the ``(metrics, B)`` array of resampled values (for plots).

    :meth:`to_dict` gives a JSON-safe dict, ``str(report)`` (:meth:`to_text`) a plain table.
    """

    def __init__(self, values, differences, settings, samples=None):
        self.values = values
        self.differences = differences
        self.settings = settings
        self.samples = samples or {}

    def to_dict(self) -> dict:
        """JSON-safe: ``{"settings", "values": {sys: {metric: {...}}}, "differences": [...]}``."""
        return {
            "settings": dict(self.settings),
            "values": {s: {m: iv.to_dict() for m, iv in d.items()} for s, d in self.values.items()},
            "differences": [
                {"a": a, "b": b, "metrics": {m: df.to_dict() for m, df in d.items()}}
                for (a, b), d in self.differences.items()
            ],
        }

    def to_json(self, **kw) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), **kw)

    def to_text(self, digits: int = 4) -> str:
        """The values and differences as aligned plain-text tables."""
        st = self.settings
        conf = st["confidence"] * 100
        lines = [
            f"{st['method']} over {st['units']} units, {st['elements']} elements, "
            f"{st['n_resamples']} resamples, {conf:g}% intervals, seed {st['seed']}"
            + ("" if st.get("aggregate", "pooled") == "pooled" else f", aggregate {st['aggregate']}")
        ]
        f = f"{{:.{digits}f}}"
        rows: list[tuple[str, ...]] = [("system", "metric", "value", "low", "high")]
        for s, d in self.values.items():
            for m, iv in d.items():
                rows.append((s, m, *(f.format(v) for v in iv)))
        lines += align_columns(rows)
        if self.differences:
            rows = [("pair", "metric", "delta", "low", "high", "p")]
            for (a, b), d in self.differences.items():
                for m, df in d.items():
                    rows.append((f"{a} - {b}", m, *(f.format(v) for v in (df.delta, df.low, df.high)),
                                 _p(df.p_value)))
            lines.append("")
            lines += align_columns(rows)
        return "\n".join(lines)

    __str__ = to_text

    def __repr__(self) -> str:
        return f"ComparisonReport(systems={list(self.values)}, settings={self.settings!r})"


def _p(p: float) -> str:
    return "n/a" if p != p else (f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}")


def align_columns(rows) -> list:
    """Rows of cells as lines with each column left-aligned to its widest cell (trailing spaces cut).

    >>> align_columns([("metric", "value"), ("ELM", "0.5")])
    ['metric  value', 'ELM     0.5']
    """
    widths = [max(len(str(r[k])) for r in rows) for k in range(len(rows[0]))]
    return ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


# --------------------------------------------------------------------------- the API
def _check_settings(method, n_resamples, confidence, aggregate):
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if not isinstance(n_resamples, (int, np.integer)) or isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an int >= 1, got {n_resamples!r}")
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")
    if aggregate not in _AGGREGATES:
        raise ValueError(f"aggregate must be one of {_AGGREGATES}, got {aggregate!r}")


def _seed(seed) -> int:
    if seed is None:
        entropy = cast(int, np.random.SeedSequence().entropy)  # fresh OS entropy: an int
        return int(entropy % (1 << 63))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")
    return int(seed)


def compare(
    y_true,
    systems: dict,
    *,
    units,
    metrics=None,
    method: str = "paired_bootstrap",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    aggregate: str = "pooled",
    labels: str = "global",
    resampling: str = "multinomial",
    w=None,
) -> ComparisonReport:
    """Each system's metric values with confidence intervals, and paired tests between systems.

    Parameters
    ----------
    y_true : true labels, one per element.
    systems : ``{name: predicted labels}`` (one or more systems, each as long as ``y_true``).
    units : the resampling unit of each element (required; see the module docstring). A unit must
        hold whole true and predicted clusters.
    metrics : metric names (as :func:`streameval.metrics.resolve` reads them: ``"ARI"``, ``"all"``,
        ...), classes or instances (O(1) metrics; default ELM, BCubed, ARI, NMI).
    method : ``"paired_bootstrap"`` or ``"randomization"``: the test behind the p-values. The
        intervals always come from the (paired) percentile bootstrap over units.
    n_resamples : ``B`` bootstrap resamples (and ``R`` randomization rounds).
    confidence : the intervals' coverage, e.g. 0.95.
    seed : seeds numpy's PCG64 generator; ``None`` draws one, recorded in ``settings``.
    aggregate : ``"pooled"`` (one table over all units) or ``"mean"`` (mean of per-unit values).
    labels : ``"global"``: a label names the same cluster wherever it occurs, and no cluster may
        span two units (checked); ``"per_unit"``: labels are read within their unit (a document
        number that restarts per stream).
    resampling : ``"multinomial"`` (the classical bootstrap: ``U`` units drawn with replacement) or
        ``"poisson"`` (each unit's multiplicity Poisson(1), from ``(seed, unit, resample)`` exactly as
        :class:`~streameval.BootstrapEvaluator` draws it, so resample ``r`` equals its replica ``r``).
    w : optional positive integer multiplicities of the elements (default 1 each).

    Returns a :class:`ComparisonReport`. Cost: grouping O(elements); per system one
    :class:`UnitStats` (O(cells)), one exact product of the ``(B, U)`` multiplicities with the unit
    statistics, and ``B`` metric reads (O(1) each); randomization adds the same for ``R`` swaps per
    pair. Resamples are drawn in blocks of at most ``2**22`` multiplicities (the same numbers as one
    draw), so memory is O(U · cells + B · metrics · systems), not O(B · U).

    >>> r = compare([0, 0, 1, 1, 2, 2], {"A": [0, 0, 1, 1, 2, 2], "B": [0, 1, 1, 1, 2, 2]},
    ...             units=[0, 0, 0, 0, 1, 1], metrics=["BCubed"], n_resamples=100, seed=0)
    >>> d = r.differences["A", "B"]["BCubed"]
    >>> round(d.delta, 4), 0 < d.p_value <= 1
    (0.2222, True)
    >>> compare([0, 0], {"A": [0, 0]}, units=None)
    Traceback (most recent call last):
    ...
    ValueError: units= is required: ...
    """
    _check_settings(method, n_resamples, confidence, aggregate)
    if resampling not in ("multinomial", "poisson"):
        raise ValueError(f'resampling must be "multinomial" or "poisson", got {resampling!r}')
    if not isinstance(systems, dict) or not systems:
        raise ValueError("systems must be a non-empty dict {name: predicted labels}")
    seed = _seed(seed)
    metrics = _metrics(metrics)
    order, cells = _group(y_true, systems, units, labels, w)
    n_units = len(order)
    stats = {name: unit_stats(c, metrics) for name, c in cells.items()}
    rng = np.random.default_rng(seed)
    names = [mt.name for mt in metrics]
    observed, per_unit = {}, {}
    for name, us in stats.items():
        if aggregate == "mean":
            per_unit[name] = _per_unit(us, metrics)
            observed[name] = per_unit[name].mean(axis=1)
        else:
            total = us.total()
            observed[name] = np.array([mt.value(total) for mt in metrics])
    # resamples in blocks of at most _BLOCK multiplicities (memory O(_BLOCK), whatever B and U);
    # every system reads the same block, so the resamples are paired
    parts: dict = {name: [] for name in stats}
    for m in _resample_blocks(order, n_resamples, seed, rng, resampling):
        for name, us in stats.items():
            parts[name].append(_values(us, metrics, m, aggregate, per_unit.get(name)))
    samples = {name: np.concatenate(p, axis=1) for name, p in parts.items()}
    values = {
        name: {
            mn: Interval(float(observed[name][k]), *percentile_interval(samples[name][k], confidence))
            for k, mn in enumerate(names)
        }
        for name in stats
    }
    sys_names = list(stats)
    pairs = [(a, b) for i, a in enumerate(sys_names) for b in sys_names[i + 1:]]
    differences = {}
    swaps = None
    if method == "randomization" and pairs:
        swaps = True
        rparts: dict = {pair: [] for pair in pairs}
        for start in range(0, n_resamples, _block_rows(n_units)):
            size = min(_block_rows(n_units), n_resamples - start)
            block = (rng.random((size, n_units)) < 0.5).astype(np.int64)
            for a, b in pairs:
                rparts[a, b].append(_randomized_deltas(stats[a], stats[b], metrics, block, aggregate,
                                                       per_unit.get(a), per_unit.get(b)))
    for a, b in pairs:
        delta_obs = observed[a] - observed[b]
        deltas = samples[a] - samples[b]
        if swaps is not None:
            rand = np.concatenate(rparts[a, b], axis=1)
        d = {}
        for k, mn in enumerate(names):
            lo, hi = percentile_interval(deltas[k], confidence)
            obs = float(delta_obs[k])
            sign = 1.0 if metrics[k].bigger_is_better else -1.0
            if swaps is None:
                centred = deltas[k] - obs
                p = _p_two_sided(centred, obs)
                pg = (1 + int(np.sum(sign * centred >= sign * obs - _tol(obs)))) / (1 + n_resamples)
            else:
                p = _p_two_sided(rand[k], obs)
                pg = (1 + int(np.sum(sign * rand[k] >= sign * obs - _tol(obs)))) / (1 + n_resamples)
            d[mn] = Difference(obs, lo, hi, p, pg)
        differences[a, b] = d
    settings = {
        "method": method,
        "n_resamples": int(n_resamples),
        "confidence": float(confidence),
        "seed": seed,
        "resampling": resampling,
        "generator": (
            "numpy PCG64 (default_rng)" if resampling == "multinomial"
            else "splitmix64 of (seed, BLAKE2b(unit), resample), Poisson(1) by inversion"
        ),
        "aggregate": aggregate,
        "labels": labels,
        "units": n_units,
        "elements": sum(sum(d.values()) for d in next(iter(cells.values()))),
        "metrics": names,
        "systems": sys_names,
        "interval": "percentile bootstrap over units",
        "p_value": (
            "paired bootstrap, centred, two-sided: (1 + #{|d_b - d_obs| >= |d_obs|}) / (1 + B)"
            if method == "paired_bootstrap"
            else "approximate randomization, two-sided: (1 + #{|d_r| >= |d_obs|}) / (1 + R)"
        ),
        "streameval": __version__,
    }
    return ComparisonReport(values, differences, settings, samples)


def _tol(x: float) -> float:
    """Slack for float ties in the p-value counts (values from equal stats are equal exactly)."""
    return 1e-12 * max(1.0, abs(x))


def _p_two_sided(null: np.ndarray, obs: float) -> float:
    ok = null[~np.isnan(null)]
    return (1 + int(np.sum(np.abs(ok) >= abs(obs) - _tol(obs)))) / (1 + len(ok))


def _randomized_deltas(sa: UnitStats, sb: UnitStats, metrics, swaps, aggregate, pa=None, pb=None):
    """``(metrics, R)`` differences after swapping A's and B's outputs on the units where swaps=1."""
    if aggregate == "mean":
        s = swaps.astype(np.float64)
        diff = pa - pb  # (metrics, U)
        signs = 1.0 - 2.0 * s  # unswapped +1, swapped -1
        return (signs @ diff.T / diff.shape[1]).T
    # A's outputs on the unswapped units and B's on the swapped ones (and the reverse for B): one
    # exact combination over the stacked units of both systems, with 0/1 multiplicities
    both = sa.stack(sb)
    keep = 1 - swaps
    ra = both.combine(np.hstack([keep, swaps]))
    rb = both.combine(np.hstack([swaps, keep]))
    out = np.empty((len(metrics), len(swaps)))
    for r in range(len(swaps)):
        s_a, s_b = both.stats(ra[r]), both.stats(rb[r])
        for k, metric in enumerate(metrics):
            out[k, r] = metric.value(s_a) - metric.value(s_b)
    return out


def confidence_interval(
    y_true,
    y_pred,
    *,
    units,
    metrics=None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    aggregate: str = "pooled",
    labels: str = "global",
    resampling: str = "multinomial",
    w=None,
) -> dict:
    """``{metric: Interval(value, low, high)}``: one system's percentile bootstrap intervals over units.

    The same resampling as :func:`compare` (see there for the parameters and the cost).

    >>> ci = confidence_interval([0, 0, 1, 1, 2, 3], [0, 0, 1, 2, 2, 3], units=[0, 0, 1, 1, 1, 1],
    ...                          metrics=["ELM"], n_resamples=200, seed=0)
    >>> v, lo, hi = ci["ELM"]
    >>> lo <= v <= hi
    True
    """
    r = compare(y_true, {"system": y_pred}, units=units, metrics=metrics, n_resamples=n_resamples,
                confidence=confidence, seed=seed, aggregate=aggregate, labels=labels,
                resampling=resampling, w=w)
    return dict(r.values["system"])
