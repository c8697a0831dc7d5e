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
``Σ_u m_u · S_u``: :func:`compare` computes every unit's statistics at once with numpy
(:mod:`streameval.units`: no Python object per unit or element), then the statistics of all
resamples as one exact matrix product (the fixed-point sums split into limbs small enough that a
float64 BLAS product stays exact), then each metric's ``value(stats)``. The elements are never
visited again, and the stats of a resample equal, bit for bit, those of the table built from its
tagged copies. Cost: linear in elements and in resamples.

Units must hold whole clusters. A cluster of the truth or of any system that crosses two units is
refused (``cross_units="refuse"``), or the units are widened to the connected components of the
units, the truth and every system (``cross_units="widen"``, reported in the warnings with the
largest component's size). With ``labels="per_unit"`` a system whose labels recur across units while
every true label lies in one unit is refused too: reading it per unit would cut its clusters. No
path reports the value of a labelling other than the one given.

The methods:

- **Intervals** (every system and every difference): ``B`` resamples of the units with replacement;
  ``interval="adaptive"`` (default) the studentized interval, or, where one unit holds more than
  15% of a labelling's within-cluster pairs (the heavy-tail warning below), the subsampled one
  for every metric (the hybrid one up to 49 units, where the two are the same)
  (:func:`adaptive_choice`);
  ``interval="studentized"`` the bootstrap-t: ``t_b = (θ_b − θ̂) / se_b`` with ``se_b``
  resample ``b``'s linearization (delta-method) standard error over its units
  (:mod:`streameval.linearization`: one gradient per resample, no nested bootstrap), the interval
  ``(θ̂ − t_{1−α/2} se, θ̂ − t_{α/2} se)`` kept within the metric's range; ``interval="hybrid"``
  the union of the percentile interval and the bootstrap-t centred at the resamples' mean
  (``t_b = (θ_b − θ̄*) / se_b``: an interval for the metric's mean over test sets; see
  :func:`~streameval.intervals.hybrid_interval`); ``interval="subsampled"`` the hybrid interval
  joined with the same bootstrap-t over ``B`` more resamples of ``m = min(U, round(7 √U))`` units
  (the ``m``-out-of-``n`` bootstrap, consistent where the units' sums have infinite variance;
  :func:`~streameval.intervals.subsampled_interval`, drawn after everything else);
  ``interval="percentile"`` the ``α/2`` and ``1-α/2`` quantiles (numpy's linear
  interpolation); ``interval="bca"`` Efron's bias-corrected and accelerated interval (the bias from
  the share of resamples below the observed value, the acceleration from the jackknife over units,
  in at most 1,000 groups). A Poisson resample that drew no unit has no value and is left out.
- **Approximate randomization** (``method="randomization"``, default; Riezler & Maxwell 2005): for
  each unit, swap the two systems' outputs with probability ½; ``δ_r`` the swapped difference.
- **Paired bootstrap** (``method="paired_bootstrap"``; Koehn 2004, as sacreBLEU): the same
  resamples for every system, ``δ_b = m_A - m_B``, centred: ``δ_b - δ_obs`` stands in for the null
  distribution.
- **One p-value rule** for both tests: ``p = (1 + #{valid draws d: |d| ≥ |δ_obs|}) / (1 + #valid
  draws)``, and ``p_greater`` (one-sided, "A is not better than B", signs flipped for a
  smaller-is-better metric) ``(1 + #{d ≥ δ_obs}) / (1 + #valid draws)`` with the same denominator.

Warnings (``report.warnings``, printed with the table): fewer than 30 units; one unit holding more
than 15% of a labelling's within-cluster pairs (heavy-tailed cluster sizes); widened units.
``docs/compare.md`` gives the
measured coverage and calibration of each method in each setting.

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
randomization over 3 units, 12 elements, 200 resamples, 95% hybrid intervals, seed 1
system  metric  value   low     high
A       ELM     0.8333  ...
warning: only 3 units: ...
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import cast

import numpy as np

from ._validate import check_ordered
from ._version import __version__
from .bootstrap import jackknife_groups, poisson_draws, seed64, unit_hash
from .detect import one_blas_thread
from .errors import InvalidLabelError
from .intervals import (
    COMPARE_INTERVAL_METHODS,
    INTERVAL_NAMES,
    STUDENTIZED_METHODS,
    Interval,
    adaptive_choice,
    check_interval_method,
    describe_interval,
    interval_bounds,
    p_value,
    subsample_size,
)
from .intervals import json_number as _num
from .labels import factorize
from .linearization import (
    PRODUCT_ROWS,
    Moments,
    gradients,
    mean_standard_errors,
    read_fields,
    row_products,
    slope_fields,
    unit_fields,
)
from .metrics import Metric, resolve
from .units import (
    DOMINANT_SHARE,
    FEW_UNITS,
    Combiner,
    UnitStats,
    Unread,
    crossing_label,
    unit_diagnostics,
    unit_stats_from_codes,
    widen_units,
)

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
_METHODS = ("randomization", "paired_bootstrap")
_AGGREGATES = ("pooled", "mean")
_CROSS = ("refuse", "widen")


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


# --------------------------------------------------------------------------- grouping
def _as_list(x, name: str) -> list:
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {x.shape}")
        return x.tolist()
    check_ordered(x, name)
    try:
        return list(x)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of labels, got {type(x).__name__}") from None


def _codes(values, name: str):
    """``(codes, uniques)`` of a label sequence (:func:`streameval.labels.factorize`); a missing
    label is a ``ValueError`` and an unhashable one a ``TypeError``, each naming ``name[i]``."""
    if not isinstance(values, np.ndarray):
        values = _as_list(values, name)
    try:
        return factorize(values, name)
    except InvalidLabelError as e:
        raise TypeError(str(e)) from None


@dataclass
class _Grouped:
    """The input as integer codes: units, truth, each system, weights, and the unit keys."""

    keys: list  # unit key of each unit code
    units: np.ndarray
    truth: np.ndarray
    systems: dict
    weights: np.ndarray | None
    declared: int  # units declared (before any widening)
    widened: bool


def _scoped(units: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Codes of the pairs ``(unit, label)``: labels read within their unit."""
    key = units * (int(codes.max()) + 1 if len(codes) else 1) + codes
    return np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _group(y_true, preds: dict, units, labels: str, weights=None, cross_units: str = "refuse"
           ) -> _Grouped:
    """The input as codes, after the checks (lengths, missing labels, clusters within units)."""
    if units is None:
        raise ValueError(
            "units= is required: clustering metrics are not sums over independent elements, so "
            "elements cannot be resampled one by one (that splits clusters and gives intervals far "
            "too narrow). Pass the block each element belongs to (a stream, a document, a source "
            "batch), such that no true or predicted cluster spans two blocks."
        )
    if labels not in ("global", "per_unit"):
        raise ValueError(f'labels must be "global" or "per_unit", got {labels!r}')
    if cross_units not in _CROSS:
        raise ValueError(f"cross_units must be one of {_CROSS}, got {cross_units!r}")
    if cross_units == "widen" and labels != "global":
        raise ValueError('cross_units="widen" needs labels="global" (a label must name one cluster '
                         "wherever it occurs for clusters to cross units)")
    check_ordered(y_true, "y_true")
    check_ordered(units, "units")
    for name, yp in preds.items():
        check_ordered(yp, f"y_pred[{name!r}]")
    n = len(y_true) if hasattr(y_true, "__len__") else None
    if n is None:
        y_true = _as_list(y_true, "y_true")
        n = len(y_true)
    if len(units) != n:
        raise ValueError(f"units has {len(units)} entries, y_true has {n}")
    if n == 0:
        raise ValueError("no elements: y_true is empty")
    ucodes, ukeys = _codes(units, "units")
    if weights is None:
        ws = None
    else:
        from ._validate import check_weight

        wl = _as_list(weights, "w")
        if len(wl) != n:
            raise ValueError(f"w has {len(wl)} entries, y_true has {n}")
        ws = np.array([check_weight(x) for x in wl], dtype=np.int64)  # each below 2**57
    tcodes, tkeys = _codes(y_true, "y_true")
    pcodes, pkeys = {}, {}
    for name, yp in preds.items():
        if (len(yp) if hasattr(yp, "__len__") else len(_as_list(yp, "y_pred"))) != n:
            yp = _as_list(yp, f"y_pred[{name!r}]")
            raise ValueError(f"system {name!r} has {len(yp)} predictions, y_true has {n}")
        pcodes[name], pkeys[name] = _codes(yp, f"y_pred[{name!r}]")
    declared = len(ukeys)
    widened = False
    if labels == "per_unit":
        # labels are read within their unit; a labelling whose labels never recur across units
        # reads the same either way. A system whose labels recur across units while the truth's
        # do not is ambiguous (a cluster that crosses units, or numbers restarting per unit?):
        # reading it per unit would cut its cross-unit clusters, so it is refused.
        truth_global = crossing_label(ucodes, tcodes) is None
        for name, pc in pcodes.items():
            hit = crossing_label(ucodes, pc)
            if truth_global and hit is not None:
                i, j = hit
                raise ValueError(
                    f"system {name!r}: label {pkeys[name][pc[i]]!r} occurs in unit "
                    f"{ukeys[ucodes[j]]!r} and in unit {ukeys[ucodes[i]]!r} (element {i}) while "
                    'every true label lies in one unit: with labels="per_unit" this cluster '
                    "would be cut in two and the metric would not be that of the labelling "
                    "given. If the cluster really crosses the units, widen them "
                    '(cross_units="widen", labels="global"; on the command line --cross-units '
                    "widen); if the labels restart in every unit, number the true labels the "
                    "same way."
                )
        tcodes = _scoped(ucodes, tcodes)
        pcodes = {name: _scoped(ucodes, pc) for name, pc in pcodes.items()}
    elif cross_units == "widen":
        wide = widen_units(ucodes, [tcodes, *pcodes.values()])
        if int(wide.max()) + 1 < declared:
            widened = True
            # a component is named by its first declared unit
            first = np.full(int(wide.max()) + 1, -1, dtype=np.int64)
            idx = np.arange(len(wide))
            first[wide[::-1]] = idx[::-1]
            ukeys = [ukeys[ucodes[i]] for i in first.tolist()]
            ucodes = wide
    else:
        for what, codes, keys in [("y_true", tcodes, tkeys)] + [
                (f"system {name!r}", pcodes[name], pkeys[name]) for name in pcodes]:
            hit = crossing_label(ucodes, codes)
            if hit is not None:
                i, j = hit
                raise ValueError(
                    f"{what}: label {keys[codes[i]]!r} occurs in unit {ukeys[ucodes[j]]!r} and in "
                    f"unit {ukeys[ucodes[i]]!r} (element {i}); a unit must hold whole clusters. "
                    "If labels are only unique within a unit (document numbers restarting per "
                    'stream), pass labels="per_unit" (on the command line: --labels per_unit); if '
                    'clusters really cross the units, pass cross_units="widen" (--cross-units '
                    "widen) to resample the connected components of the units and every labelling."
                )
    return _Grouped(list(ukeys), ucodes, tcodes, pcodes, ws, declared, widened)


def unit_stats(cells_per_unit: list, metrics, bound: int | None = None) -> UnitStats:
    """:class:`UnitStats` from ``[{(true, pred): count}]`` per unit, for ``metrics``. O(cells).

    Each unit's row holds the sufficient statistics of its own table (``N``, ``Σn²``, ``Σa²``,
    ``Σb²``, ...); a resample's statistics are ``Σ_u k_u·S_u``, its units' rows times their
    multiplicities.

    >>> from streameval import PairF1
    >>> us = unit_stats([{(0, "a"): 2}, {(1, "b"): 1, (1, "c"): 1}], [PairF1()])
    >>> rows = us.combine(np.array([[1, 1], [0, 2]]))   # each unit once; unit 1 twice
    >>> [(s.n, s.cells, s.sum_cell_sq, s.sum_row_sq, s.sum_col_sq) for s in map(us.stats, rows)]
    [(4, 3, 6, 8, 6), (4, 4, 4, 8, 4)]
    """
    keys = _f_keys(metrics)
    u, t, p, c = [], [], [], []
    for k, d in enumerate(cells_per_unit):
        for (a, b), n in d.items():
            u.append(k)
            t.append(a)
            p.append(b)
            c.append(n)
    uc = np.array(u, dtype=np.int64)
    tc = _scoped(uc, factorize(t, "y_true")[0]) if t else uc
    pc = _scoped(uc, factorize(p, "y_pred")[0]) if p else uc
    return unit_stats_from_codes(uc, tc, pc, np.array(c, dtype=np.int64), len(cells_per_unit), keys,
                                 bound)


def bootstrap_multiplicities(n_units: int, n_resamples: int, rng, dtype=np.int64,
                             out: np.ndarray | None = None, draws: int | None = None) -> np.ndarray:
    """``(B, U)`` counts of each unit in ``B`` uniform resamples of ``U`` units with replacement
    (int64, or ``dtype``: float64 feeds the exact product without a copy; ``out``: an array of that
    shape to fill instead, so that blocks of resamples reuse one buffer; ``draws``: units drawn per
    resample, ``U`` by default, fewer for the ``m``-out-of-``U`` bootstrap of
    :func:`subsample_size`).

    Resample ``b`` is the ``U`` (or ``draws``) draws ``rng.integers(0, U)`` after those of
    resamples ``0..b-1``, counted. The draws are made a few resamples at a time as 32-bit integers: numpy draws a range
    below ``2**32`` from the generator's 32-bit output whatever the dtype asked for, so these are
    the same numbers (and leave ``rng`` in the same state) as one ``(B, U)`` int64 draw, at a fifth
    of its cost and without the ``(B, U)`` index matrix. O(B · U).

    >>> m = bootstrap_multiplicities(5, 3, np.random.default_rng(0))
    >>> m.shape, m.sum(axis=1).tolist()
    ((3, 5), [5, 5, 5])
    """
    if out is None:
        out = np.empty((n_resamples, n_units), dtype=dtype)
    elif out.shape != (n_resamples, n_units):
        raise ValueError(f"out has shape {out.shape}, not ({n_resamples}, {n_units})")
    if n_units >= 1 << 31:  # pragma: no cover - 2**31 units
        for b in range(n_resamples):
            out[b] = np.bincount(rng.integers(0, n_units, size=n_units if draws is None else draws),
                                 minlength=n_units)
        return out
    k = n_units if draws is None else int(draws)
    ones = np.ones(k)
    step = max(1, (1 << 16) // max(1, k))  # resamples drawn at once (small U: fewer calls)
    for lo in range(0, n_resamples, step):
        idx = rng.integers(0, n_units, size=(min(step, n_resamples - lo), k), dtype=np.int32)
        for b, row in enumerate(idx, lo):  # float64 counts from bincount: exact sums of ones
            out[b] = np.bincount(row.astype(np.intp), weights=ones, minlength=n_units)
    return out


_BLOCK = 1 << 22  # multiplicities per block of resamples (32 MB of float64; BLAS on one thread)


def _block_rows(n_units: int) -> int:
    """Resamples per block: a multiple of ``PRODUCT_ROWS``, so that every resample sits at the
    same place in the BLAS products whatever the block size (:func:`~streameval.linearization.row_products`)."""
    rows = _BLOCK // max(1, n_units)
    return max(PRODUCT_ROWS, rows - rows % PRODUCT_ROWS)


def _resample_blocks(order: list, n_resamples: int, seed: int, rng, resampling: str,
                     draws: int | None = None):
    """``(m, tot)``: the ``(b, U)`` float64 multiplicity matrices of consecutive blocks of
    resamples (``draws`` units each, multinomially from ``rng``, when given: the ``m``-out-of-``U``
    subsamples) and their row sums (known for a multinomial draw: every row draws ``U`` or
    ``draws`` units). One buffer is filled block after block (fresh pages for every block cost
    more than drawing into them): a block is valid until the next one is asked for."""
    rows = _block_rows(len(order))
    hashes = None
    if resampling == "poisson":
        hashes = [unit_hash(u) for u in order]
        s64 = seed64(seed)
    buf = np.empty((min(rows, n_resamples), len(order)))
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        if hashes is None or draws is not None:
            m = bootstrap_multiplicities(len(order), size, rng, np.float64, out=buf[:size],
                                         draws=draws)
            yield m, np.full(size, float(len(order) if draws is None else draws))
        else:
            buf[:size] = poisson_draws(s64, hashes, size, start).T
            yield buf[:size], buf[:size].sum(axis=1)


def _values(ustats: UnitStats, metrics, m: np.ndarray, aggregate: str, per_unit=None) -> np.ndarray:
    """``(metrics, B)`` float values of the resamples with multiplicities ``m`` (B x U)."""
    if aggregate == "mean":
        w = m.astype(np.float64)
        tot = w.sum(axis=1)
        tot[tot == 0] = np.nan
        return (row_products(w, per_unit.T) / tot[:, None]).T  # per_unit: (metrics, U)
    rows = ustats.combine(m)
    return _read(ustats, metrics, rows)


def _read(ustats: UnitStats, metrics, rows) -> np.ndarray:
    """``(metrics, len(rows))`` values of combined rows (NaN for an empty table)."""
    out = np.empty((len(metrics), len(rows)))
    for b, row in enumerate(rows):
        s = ustats.stats(row) if not hasattr(row, "n") else row
        if not s.n:  # a Poisson resample that drew no unit: no value (left out of the quantiles)
            out[:, b] = np.nan
            continue
        for k, metric in enumerate(metrics):
            out[k, b] = metric.value(s)
    return out


def _per_unit(ustats: UnitStats, metrics) -> np.ndarray:
    return np.array([[metric.value(ustats.unit(u)) for u in range(ustats.n_units)] for metric in metrics])


def _jackknife(ustats: UnitStats, metrics, aggregate: str, per_unit=None, grouping=None) -> np.ndarray:
    """``(metrics, G)`` leave-one-group-out values, the units in the groups ``grouping``
    (``(groups, G)`` from :func:`~streameval.bootstrap.jackknife_groups` of the units' hashes;
    default: of the unit numbers ``0 .. U-1`` as keys), the rule
    :class:`~streameval.bootstrap.BootstrapEvaluator` uses: every unit its own group up to
    ``JACKKNIFE_GROUPS`` units, else groups of units (a grouped jackknife, whose skewness estimates
    the same acceleration), in an order that depends on the unit keys only.
    O(U · columns + G · fields)."""
    n = ustats.n_units
    groups, g = grouping if grouping is not None else jackknife_groups(map(unit_hash, range(n)))
    if len(groups) != n:
        raise ValueError(f"grouping has {len(groups)} entries for {n} units")
    if aggregate == "mean":
        sums = np.zeros((per_unit.shape[0], g))
        counts = np.bincount(groups, minlength=g).astype(np.float64)
        for k in range(per_unit.shape[0]):
            sums[k] = np.bincount(groups, weights=per_unit[k], minlength=g)
        rest = n - counts
        with np.errstate(invalid="ignore", divide="ignore"):
            return (per_unit.sum(axis=1)[:, None] - sums) / np.where(rest > 0, rest, np.nan)
    return _read(ustats, metrics, ustats.leave_out(groups, g))


def _difference_bounds(bounds):
    return bounds[0] - bounds[1], bounds[1] - bounds[0]


class _StandardErrors:
    """The linearization standard errors of every system and every pair, observed and per resample
    (``interval="studentized"``), gathered block by block. Pooled: one :class:`Moments` for every
    block, over the fields whose slopes are non-zero at the observed table (a block with a slope
    elsewhere, a branch of a formula, gets moments of its own)."""

    def __init__(self, stats: dict, metrics, pairs: list, aggregate: str, per_unit: dict):
        self.stats, self.metrics, self.aggregate, self.per_unit = stats, metrics, aggregate, per_unit
        self.names = list(stats)
        self.pairs = [(self.names.index(a), self.names.index(b)) for a, b in pairs]
        self.parts: list = [[] for _ in self.names]
        self.pair_parts: list = [[] for _ in pairs]
        n = next(iter(stats.values())).n_units
        ones = np.ones((1, n))
        if aggregate == "pooled":
            self.fields = [unit_fields(us) for us in stats.values()]
            grads = self._gradients([[us.totals] for us in stats.values()])
            self.moments = Moments(self.fields, slope_fields(grads), self.pairs)
            self.observed, self.observed_pairs = self.moments.standard_errors(grads, ones)
        else:
            self.observed, self.observed_pairs = self.block(ones, None)

    def fresh(self) -> _StandardErrors:
        """Standard errors to gather over other resamples of the same units (the subsampled
        interval's): the same observed ones and moments, no block yet. O(1)."""
        new = object.__new__(_StandardErrors)
        new.__dict__.update(self.__dict__)
        new.parts = [[] for _ in self.names]
        new.pair_parts = [[] for _ in self.pairs]
        return new

    def _gradients(self, rows) -> list:
        return [gradients(us, self.metrics, r) for us, r in zip(self.stats.values(), rows)]

    def block(self, m: np.ndarray, rows, tot=None) -> tuple:
        """The standard errors of one block of resamples (``rows``: each system's combined rows;
        ``tot``: ``m``'s row sums if known)."""
        if self.aggregate == "mean":
            se = [mean_standard_errors(self.per_unit[name], m) for name in self.names]
            sed = [mean_standard_errors(self.per_unit[self.names[a]] - self.per_unit[self.names[b]], m)
                   for a, b in self.pairs]
            return se, sed
        grads = self._gradients(rows)
        se, sed = self.moments.standard_errors(grads, m, tot)
        if self.moments.covers(grads):
            return se, sed
        # resamples with a slope beyond the observed fields (a formula's branch): each pattern of
        # slopes gets moments of its own, computed on the whole block (each resample at its place
        # in the products) and taken on the resamples of that pattern, so that a resample's
        # standard error depends on its own slopes only, never on which resamples share its block
        patterns: list = []
        for b in range(len(m)):
            mine = [g[:, b:b + 1] for g in grads]
            patterns.append(None if self.moments.covers(mine) else repr(slope_fields(mine)))
        for key in dict.fromkeys(p for p in patterns if p is not None):
            these = np.array([p == key for p in patterns])
            own = slope_fields([g[:, these] for g in grads])  # the pattern itself
            se_k, sed_k = Moments(self.fields, own, self.pairs).standard_errors(grads, m, tot)
            for x, y in zip(se + sed, se_k + sed_k):
                x[:, these] = y[:, these]
        return se, sed

    def append(self, block: tuple) -> None:
        """Keep one block's standard errors (:meth:`block`)."""
        se, sed = block
        for part, x in zip(self.parts + self.pair_parts, se + sed):
            part.append(x)

    def system(self, name: str):
        i = self.names.index(name)
        return np.concatenate(self.parts[i], axis=1), self.observed[i][:, 0]

    def pair(self, a: str, b: str):
        j = self.pairs.index((self.names.index(a), self.names.index(b)))
        return np.concatenate(self.pair_parts[j], axis=1), self.observed_pairs[j][:, 0]


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Difference:
    """``delta = m_A - m_B`` observed, its interval, and the test's p-values.

    ``low``/``high`` bound the resampled differences ``m_A(r) - m_B(r)`` by the report's interval
    method; ``p_value`` is two-sided, ``p_greater`` one-sided (``A`` better than ``B``). A plain
    frozen record: every method O(1).

    >>> Difference(delta=-0.5, low=-0.75, high=0.0, p_value=1.0).to_dict()
    {'delta': -0.5, 'low': -0.75, 'high': 0.0, 'p_value': 1.0}
    """

    delta: float
    low: float
    high: float
    p_value: float
    p_greater: float | None = None

    def to_dict(self) -> dict:
        """JSON-safe: the fields as numbers (NaN and infinities as strings), ``p_greater`` only when
        set. O(1)."""
        d = {"delta": _num(self.delta), "low": _num(self.low), "high": _num(self.high),
             "p_value": _num(self.p_value)}
        if self.p_greater is not None:
            d["p_greater"] = _num(self.p_greater)
        return d


class ComparisonReport:
    """The result of :func:`compare`: values with intervals, pairwise differences, the settings.

    - ``values[system][metric]``: an :class:`~streameval.Interval` ``(value, low, high)``;
    - ``differences[(A, B)][metric]``: a :class:`Difference` ``(delta, low, high, p_value,
      p_greater)`` for every pair of systems in the order given (``A`` before ``B``);
    - ``settings``: everything needed to reproduce the numbers (method, interval method,
      resamples, confidence, seed, aggregate, label scope, numbers of units and elements, metric
      names, p-value rule, the units' diagnostics);
    - ``warnings``: what the reader should know before trusting the numbers (few units, a dominant
      unit, widened units), also in ``settings["warnings"]`` and printed by :meth:`to_text`;
    - ``samples[system]``: the ``(metrics, B)`` array of resampled values (for plots).

    :meth:`to_dict` gives a JSON-safe dict, ``str(report)`` (:meth:`to_text`) a plain table.
    Every method is O(systems·metrics + pairs·metrics), the size of the report.

    Two units, hand-checked. ``A`` is perfect on unit 0 (one cluster of 2) and scores ELM 1/4 on
    unit 1 (only the singleton 3 keeps ``F_e = 1``), ``B`` is perfect on both: the observed ELM of
    ``A`` is ``(2 + 0 + 0 + 0 + 1)/6 = 0.5``. A resample holds two draws of the units, so ``A``'s
    resampled values are 1 (unit 0 twice), 0.5 or 0.25 (unit 1 twice), and ``A − B`` is 0, −0.5 or
    −0.75. The randomization test swaps ``A`` and ``B`` per unit: on unit 1 only, which flips the
    sign, so every arrangement is as extreme as the one observed (``p = 1``):

    >>> r = compare([0, 0, 1, 1, 2, 3], {"A": [0, 0, 1, 2, 2, 3], "B": [0, 0, 1, 1, 2, 3]},
    ...             units=[0, 0, 1, 1, 1, 1], metrics=["ELM"], n_resamples=50, seed=0)
    >>> r.values["A"]["ELM"]
    Interval(value=0.5, low=0.25, high=1.0)
    >>> r.differences["A", "B"]["ELM"]
    Difference(delta=-0.5, low=-0.75, high=0.0, p_value=1.0, p_greater=1.0)
    >>> [w[:12] for w in r.warnings]          # few units; one unit holds half the pairs
    ['only 2 units', 'one unit hol']
    >>> print(r.to_text().splitlines()[0])
    randomization over 2 units, 6 elements, 50 resamples, 95% hybrid intervals, seed 0
    >>> r.to_dict()["differences"][0]["metrics"]["ELM"]["delta"]
    -0.5
    """

    def __init__(self, values, differences, settings, samples=None):
        self.values = values
        self.differences = differences
        self.settings = settings
        self.samples = samples or {}

    @property
    def warnings(self) -> list:
        """The report's warnings (strings; empty when there is nothing to warn about). O(warnings)."""
        return list(self.settings.get("warnings", ()))

    def to_dict(self) -> dict:
        """JSON-safe: ``{"settings", "values": {sys: {metric: {...}}}, "differences": [...]}``.
        O(size of the report)."""
        return {
            "settings": dict(self.settings),
            "values": {s: {m: iv.to_dict() for m, iv in d.items()} for s, d in self.values.items()},
            "differences": [
                {"a": a, "b": b, "metrics": {m: df.to_dict() for m, df in d.items()}}
                for (a, b), d in self.differences.items()
            ],
        }

    def to_json(self, **kw) -> str:
        """:meth:`to_dict` as JSON text. O(size of the report)."""
        return json.dumps(self.to_dict(), **kw)

    def to_text(self, digits: int = 4) -> str:
        """The values and differences as aligned plain-text tables, then the warnings. O(size of
        the report)."""
        st = self.settings
        conf = st["confidence"] * 100
        lines = [
            f"{st['method']} over {st['units']} units, {st['elements']} elements, "
            f"{st['n_resamples']} resamples, {conf:g}% "
            f"{INTERVAL_NAMES[st.get('interval_applied', st.get('interval_method', 'percentile'))]} "
            f"intervals, seed {st['seed']}"
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
        for w in self.warnings:
            lines.append(f"warning: {w}")
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
def _check_settings(method, n_resamples, confidence, aggregate, interval):
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if not isinstance(n_resamples, (int, np.integer)) or isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an int >= 1, got {n_resamples!r}")
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")
    if aggregate not in _AGGREGATES:
        raise ValueError(f"aggregate must be one of {_AGGREGATES}, got {aggregate!r}")
    check_interval_method(interval, COMPARE_INTERVAL_METHODS)


def _seed(seed) -> int:
    if seed is None:
        entropy = cast(int, np.random.SeedSequence().entropy)  # fresh OS entropy: an int
        return int(entropy % (1 << 63))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")
    return int(seed)


def _warnings(g: _Grouped, diag: dict) -> list:
    out = []
    u = diag["units"]
    if g.widened:
        out.append(
            f"clusters cross the declared units: the {g.declared} declared units were widened to "
            f"{u} connected components of the units, the truth and every system; the largest "
            f"holds {diag['largest_unit_elements']} elements ({diag['elements_share']:.0%} of them, "
            f"{diag['pairs_share']:.0%} of a labelling's pairs)"
        )
    if u < FEW_UNITS:
        out.append(
            f"only {u} units: with fewer than about {FEW_UNITS} units the intervals are rough "
            "(95% intervals cover noticeably less than 95% of the time) and the test only "
            "approximate; report the units, and read a small p-value with care"
            + (" (with 1 unit there is no resampling variation: the intervals are a point)"
               if u == 1 else "")
        )
    if diag["pairs_share"] > DOMINANT_SHARE:
        out.append(
            f"one unit holds {diag['pairs_share']:.0%} of a labelling's within-cluster pairs (more "
            f"than {DOMINANT_SHARE:.0%}): the cluster sizes look heavy-tailed, and the population "
            "value is then carried by clusters rarer than any in this sample (the default "
            "interval is then the subsampled one, the hybrid one up to 49 units, for the "
            "metric's mean over test sets of this size). "
            "On simulated data of that kind (docs/compare.md) these 95% intervals covered that "
            "mean 92-99% of the time for ELM, BCubed and ARI and 92-96% for NMI (with heavier "
            "tails, Zipf(2.2) cluster sizes, 93-98% and 85-88%), and the "
            "population value 90-98% for ELM and BCubed, 85-93% for NMI and only 67-90% for ARI, "
            "missing mostly on one side; read any interval as one for the population value as a "
            "lower bound on the uncertainty. The randomization test stays exact"
        )
    return out


def _on_one_blas_thread(fn):
    """``fn`` run with BLAS on one thread (threadpoolctl's, when installed): a product of a block
    of resamples with the units' columns is a few hundred rows by ``U``, a shape whose split over
    OpenBLAS's threads costs, on a loaded machine, up to 30 times the CPU of one thread (its
    threads spin waiting for each other); compare's other work is single-threaded anyway."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with one_blas_thread():
            return fn(*args, **kwargs)

    return run


@_on_one_blas_thread
def compare(
    y_true,
    systems: dict,
    *,
    units,
    metrics=None,
    method: str = "randomization",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    aggregate: str = "pooled",
    labels: str = "global",
    resampling: str = "multinomial",
    w=None,
    interval: str = "adaptive",
    cross_units: str = "refuse",
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
    method : the test behind the p-values: ``"randomization"`` (default: approximate
        randomization, calibrated in every setting measured) or ``"paired_bootstrap"`` (the centred
        paired bootstrap; over-rejects with few or dominant units, see ``docs/compare.md``).
    n_resamples : ``B`` bootstrap resamples (and ``R`` randomization rounds).
    confidence : the intervals' coverage, e.g. 0.95.
    seed : seeds numpy's PCG64 generator; ``None`` draws one, recorded in ``settings``.
    aggregate : ``"pooled"`` (one table over all units) or ``"mean"`` (mean of per-unit values).
    labels : ``"global"``: a label names the same cluster wherever it occurs, and no cluster may
        span two units (checked); ``"per_unit"``: labels are read within their unit (a document
        number that restarts per stream). A system whose labels recur across units while every
        true label lies in one unit is refused: reading it per unit would cut its clusters.
    resampling : ``"multinomial"`` (the classical bootstrap: ``U`` units drawn with replacement) or
        ``"poisson"`` (each unit's multiplicity Poisson(1), from ``(seed, unit, resample)`` exactly as
        :class:`~streameval.BootstrapEvaluator` draws it, so resample ``r`` equals its replica ``r``).
    w : optional positive integer multiplicities of the elements (default 1 each).
    interval : ``"adaptive"`` (default: ``"studentized"``, or where one unit holds more than 15%
        of a labelling's within-cluster pairs ``"subsampled"``, ``"hybrid"`` up to 49 units,
        :func:`adaptive_choice`; the same for every metric, recorded in
        ``settings["interval_applied"]``), ``"studentized"`` (the bootstrap-t,
        ``t_b = (θ_b − θ̂) / se_b`` with each resample's linearization standard error,
        :mod:`streameval.linearization`; the ends are kept within the metric's range),
        ``"hybrid"`` (the union of the percentile interval and the bootstrap-t centred at the
        resamples' mean, :func:`~streameval.intervals.hybrid_interval`), ``"subsampled"`` (the
        hybrid interval joined with the bootstrap-t of resamples of ``m = min(U, round(7 √U))``
        units, :func:`~streameval.intervals.subsampled_interval`), ``"percentile"`` (the
        quantiles of the resampled values) or ``"bca"`` (bias-corrected and accelerated, the
        acceleration from the jackknife over units); the same resamples in every case. The
        default is the simulation's choice (``docs/benchmarks/compare-calibration.md``): the
        studentized interval is calibrated with light-tailed units; where units are heavy-tailed
        the studentized and hybrid ones are too narrow (too often below ARI's population value,
        above NMI's and BCubed's), and the subsampled one misses least, erring wide where it errs
        (ARI's mean over test sets).
    cross_units : ``"refuse"`` (default: a cluster of any labelling that crosses two units is an
        error) or ``"widen"``: resample the connected components of the units, the truth and every
        system instead (reported, with the largest component's size, in the warnings).

    Returns a :class:`ComparisonReport`. Cost: grouping O(N log N) numpy; per system one
    :class:`~streameval.units.UnitStats` (vectorised, O(N log N)); for all systems at once one
    exact product of the ``(B, U)`` multiplicities with the limbs of the fields the metrics read
    (a BLAS product, :class:`~streameval.units.Combiner`), ``B`` metric reads per system (O(1)
    each) and (BCa) a jackknife of at most 1,000 groups of units; the studentized interval adds
    per resample and system one gradient (two metric reads per field a metric reads) and, for all
    systems and pairs at once, one product of the multiplicities with the units' centred fields
    and their distinct pairwise products (``O(U · P)`` per resample,
    :class:`~streameval.linearization.Moments`); randomization adds one product and ``R`` reads
    per pair; the subsampled interval repeats the resampling, the reads and the standard errors of
    its metrics over ``B`` resamples of ``m`` units. So ``O(N log N + B · U · columns)``: linear
    in the resamples and, but for the sort, in the elements. Resamples are drawn in blocks of at most ``2**22`` multiplicities (the same
    numbers as one draw) and BLAS runs on one thread, so memory is O(U · columns + B · metrics ·
    systems), not O(B · U).

    >>> r = compare([0, 0, 1, 1, 2, 2], {"A": [0, 0, 1, 1, 2, 2], "B": [0, 1, 1, 1, 2, 2]},
    ...             units=[0, 0, 0, 0, 1, 1], metrics=["BCubed"], n_resamples=100, seed=0)
    >>> d = r.differences["A", "B"]["BCubed"]
    >>> round(d.delta, 4), 0 < d.p_value <= 1
    (0.2222, True)
    >>> r.warnings[0][:12]
    'only 2 units'
    >>> compare([0, 0], {"A": [0, 0]}, units=None)
    Traceback (most recent call last):
    ...
    ValueError: units= is required: ...
    """
    _check_settings(method, n_resamples, confidence, aggregate, interval)
    if resampling not in ("multinomial", "poisson"):
        raise ValueError(f'resampling must be "multinomial" or "poisson", got {resampling!r}')
    if not isinstance(systems, dict) or not systems:
        raise ValueError("systems must be a non-empty dict {name: predicted labels}")
    seed = _seed(seed)
    metrics = _metrics(metrics)
    g = _group(y_true, systems, units, labels, w, cross_units)
    order = g.keys
    n_units = len(order)
    keys = _f_keys(metrics)
    stats = {name: unit_stats_from_codes(g.units, g.truth, pc, g.weights, n_units, keys)
             for name, pc in g.systems.items()}
    diag = unit_diagnostics(list(stats.values()))
    # the interval (adaptive: by the units' diagnostics, the same for every metric)
    used = adaptive_choice(diag["pairs_share"], n_units) if interval == "adaptive" else interval
    rng = np.random.default_rng(seed)
    names = [mt.name for mt in metrics]
    observed, per_unit, jack = {}, {}, {}
    # BCa's jackknife groups: by the unit keys' stable hashes (a unit key unit_hash cannot encode
    # is a TypeError naming it), the same groups BootstrapEvaluator forms from the same units
    try:
        grouping = jackknife_groups(map(unit_hash, order)) if used == "bca" else None
    except TypeError as e:
        raise TypeError(f'interval="bca" groups the units by a stable hash of their keys: {e} '
                        "(name the units by str or int keys)") from None
    for name, us in stats.items():
        if aggregate == "mean":
            per_unit[name] = _per_unit(us, metrics)
            observed[name] = per_unit[name].mean(axis=1)
        else:
            observed[name] = _read(us, metrics, [us.total()])[:, 0]
        jack[name] = (_jackknife(us, metrics, aggregate, per_unit.get(name), grouping) if used == "bca"
                      else np.zeros((len(metrics), 0)))
    sys_names = list(stats)
    pairs = [(a, b) for i, a in enumerate(sys_names) for b in sys_names[i + 1:]]
    ses = (_StandardErrors(stats, metrics, pairs, aggregate, per_unit)
           if used in STUDENTIZED_METHODS else None)
    read = _fields_read(list(stats.values()), metrics) if aggregate == "pooled" else None
    samples = _resampled(stats, metrics, _resample_blocks(order, n_resamples, seed, rng, resampling),
                         ses, aggregate, per_unit, read)
    differences = {}
    rparts: dict = {}
    if method == "randomization" and pairs:
        rparts = {pair: [] for pair in pairs}
        rows_r = _block_rows(n_units)
        draws = np.empty((min(rows_r, n_resamples), n_units))  # one buffer for every block
        for start in range(0, n_resamples, rows_r):
            size = min(rows_r, n_resamples - start)
            block = rng.random(out=draws[:size])
            np.less(block, 0.5, out=block)  # the swaps: 0/1, exact
            for a, b in pairs:
                try:
                    d = _randomized_deltas(stats[a], stats[b], metrics, block, aggregate,
                                           per_unit.get(a), per_unit.get(b), read)
                except Unread:  # a formula read a field left out: this block in full
                    d = _randomized_deltas(stats[a], stats[b], metrics, block, aggregate)
                rparts[a, b].append(d)
    # the m-out-of-U subsamples of the subsampled intervals, drawn after everything else (the
    # other numbers stay those of the same seed without them); none where m = U
    m_sub = subsample_size(n_units)
    sub: dict = {}  # (system, metric index) -> (subsampled values, their standard errors)
    sub_pairs: dict = {}  # the same of each pair's differences, by (a, b, metric index)
    if used == "subsampled" and m_sub < n_units:
        sub_ses = ses.fresh() if ses is not None else _StandardErrors(stats, metrics, pairs,
                                                                       aggregate, per_unit)
        sub_samples = _resampled(
            stats, metrics, _resample_blocks(order, n_resamples, seed, rng, resampling, m_sub),
            sub_ses, aggregate, per_unit, read)
        for name in stats:
            sub_se = sub_ses.system(name)[0]
            for k in range(len(metrics)):
                sub[name, k] = (sub_samples[name][k], sub_se[k])
        for a, b in pairs:
            sub_se = sub_ses.pair(a, b)[0]
            for k in range(len(metrics)):
                sub_pairs[a, b, k] = (sub_samples[a][k] - sub_samples[b][k], sub_se[k])
    values = {}
    for name in stats:
        se, se0 = ses.system(name) if ses is not None else ([None] * len(names), [np.nan] * len(names))
        values[name] = {
            mn: Interval(float(observed[name][k]),
                         *interval_bounds(used, samples[name][k], float(observed[name][k]),
                                          confidence, jackknife=jack[name][k], se=se[k],
                                          se_observed=float(se0[k]), bounds=metrics[k].bounds,
                                          sub=sub.get((name, k))))
            for k, mn in enumerate(names)
        }
    for a, b in pairs:
        delta_obs = observed[a] - observed[b]
        deltas = samples[a] - samples[b]
        jd = jack[a] - jack[b]
        null = np.concatenate(rparts[a, b], axis=1) if rparts else deltas - delta_obs[:, None]
        se, se0 = ses.pair(a, b) if ses is not None else ([None] * len(names), [np.nan] * len(names))
        d = {}
        for k, mn in enumerate(names):
            obs = float(delta_obs[k])
            lo, hi = interval_bounds(used, deltas[k], obs, confidence, jackknife=jd[k], se=se[k],
                                     se_observed=float(se0[k]),
                                     bounds=_difference_bounds(metrics[k].bounds),
                                     sub=sub_pairs.get((a, b, k)))
            sign = 1.0 if metrics[k].bigger_is_better else -1.0
            p = p_value(null[k], obs)
            pg = p_value(sign * null[k], sign * obs, two_sided=False)
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
        "cross_units": cross_units,
        "units": n_units,
        "declared_units": g.declared,
        "largest_unit_elements": diag["largest_unit_elements"],
        "largest_unit_pairs_share": round(diag["pairs_share"], 6),
        "elements": int(sum(stats[sys_names[0]].totals[:1])),
        "metrics": names,
        "systems": sys_names,
        "interval_method": interval,
        "interval_applied": used,
        "subsample_units": m_sub if used == "subsampled" else None,
        "interval": describe_interval(interval, used, n_units),
        "p_value": (
            "paired bootstrap, centred: p = (1 + #{|d_b - d_obs| >= |d_obs|}) / (1 + #valid b)"
            if method == "paired_bootstrap"
            else "approximate randomization: p = (1 + #{|d_r| >= |d_obs|}) / (1 + R)"
        ) + "; p_greater: the same count one-sided, same denominator",
        "warnings": _warnings(g, diag),
        "streameval": __version__,
    }
    return ComparisonReport(values, differences, settings, samples)


def _fields_read(stats: list, metrics) -> list:
    """The fields (indices into ``UnitStats.fields``) some metric reads at some system's observed
    table, and ``n`` (every read checks it)."""
    out = {0}
    for us in stats:
        tot = us.totals
        for metric in metrics:
            out.update(read_fields(us, metric, tot))
    return sorted(out)


def _resampled(stats: dict, metrics, blocks, ses, aggregate: str, per_unit: dict, read) -> dict:
    """``{system: (metrics, B) values}`` of the resamples of ``blocks`` (each a ``(b, U)``
    multiplicity matrix and its row sums; every system reads the same block, so the resamples are paired), their
    standard errors appended to ``ses`` block by block. Pooled, only the fields ``read`` are
    combined (the others are UNREAD: a formula that reads one after all, on some branch, has its
    block combined in full)."""
    parts: dict = {name: [] for name in stats}
    combiner = Combiner(list(stats.values()), read) if aggregate == "pooled" else None
    for m, tot in blocks:
        if combiner is not None:
            try:
                vals, block_se = _pooled_block(stats, metrics, m, combiner.combine(m, tot), ses, tot)
            except Unread:
                full = UnitStats.combine_all(list(stats.values()), m)
                vals, block_se = _pooled_block(stats, metrics, m, full, ses, tot)
        else:
            vals = [_values(us, metrics, m, aggregate, per_unit.get(name)) for name, us in stats.items()]
            block_se = ses.block(m, None, tot) if ses is not None else None
        for name, v in zip(stats, vals):
            parts[name].append(v)
        if ses is not None:
            ses.append(block_se)
    return {name: np.concatenate(p, axis=1) for name, p in parts.items()}


def _pooled_block(stats: dict, metrics, m, combined: list, ses, tot):
    """The values of every system at one block of resamples, and their standard errors."""
    vals = [_read(us, metrics, rows) for us, rows in zip(stats.values(), combined)]
    return vals, (ses.block(m, combined, tot) if ses is not None else None)


def _randomized_deltas(sa: UnitStats, sb: UnitStats, metrics, swaps, aggregate, pa=None, pb=None,
                       fields=None):
    """``(metrics, R)`` differences after swapping A's and B's outputs on the units where swaps=1
    (pooled: combining the ``fields`` only, the others :data:`~streameval.units.UNREAD`)."""
    if aggregate == "mean":
        s = swaps.astype(np.float64)
        diff = pa - pb  # (metrics, U)
        signs = 1.0 - 2.0 * s  # unswapped +1, swapped -1
        return (row_products(signs, diff.T) / diff.shape[1]).T
    # A's outputs on the unswapped units and B's on the swapped ones (and the reverse for B): the
    # totals plus and minus one exact product of the swaps with the units' differences B - A
    ra, rb = sa.swapped(sb, swaps, fields)
    return _read(sa, metrics, ra) - _read(sa, metrics, rb)


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
    interval: str = "adaptive",
    cross_units: str = "refuse",
) -> dict:
    """``{metric: Interval(value, low, high)}``: one system's bootstrap intervals over units.

    The same resampling as :func:`compare` (see there for the parameters and the cost): the value
    is the metric of the whole labelling; resample ``r`` draws the units with replacement, its
    statistics are ``Σ_u k_{u,r}·S_u`` (``k_{u,r}`` draws of unit ``u``, ``S_u`` its table's
    sums), and the bounds come from the ``B`` resampled values by ``interval``.

    Unit 0 is perfect (ELM 1), unit 1 scores 1/4: the value is ``3/6`` and every resampled
    value is 1, 0.5 or 0.25, so the bounds are two of those (:class:`ComparisonReport`):

    >>> ci = confidence_interval([0, 0, 1, 1, 2, 3], [0, 0, 1, 2, 2, 3], units=[0, 0, 1, 1, 1, 1],
    ...                          metrics=["ELM"], n_resamples=200, seed=0)
    >>> v, lo, hi = ci["ELM"]
    >>> v, lo in (0.25, 0.5), hi
    (0.5, True, 1.0)
    """
    r = compare(y_true, {"system": y_pred}, units=units, metrics=metrics, n_resamples=n_resamples,
                confidence=confidence, seed=seed, aggregate=aggregate, labels=labels,
                resampling=resampling, w=w, interval=interval, cross_units=cross_units)
    return dict(r.values["system"])
