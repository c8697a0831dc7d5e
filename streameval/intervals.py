"""Bootstrap intervals and resampling p-values: the arithmetic shared by the batch comparison and
the streaming bootstrap.

- :class:`Interval`: a value and its ``(low, high)`` interval (a named tuple: it unpacks and
  compares as ``(value, low, high)``).
- :func:`percentile_interval`: the ``(1-c)/2`` and ``(1+c)/2`` quantiles of the resampled values.
- :func:`bca_interval`: Efron's bias-corrected and accelerated interval: the same quantiles of the
  same resampled values, taken at levels moved by the bias ``z0`` (the share of resamples below the
  observed value) and the acceleration ``a`` (the skewness of the jackknife over units).
- :func:`studentized_interval`: the bootstrap-t, ``t*_b = (θ*_b − θ̂) / se*_b`` (or centred at the
  resamples' mean, ``centre=``, for the metric's mean over test sets).
- :func:`hybrid_interval`: the union of the percentile interval and the bootstrap-t centred at the
  resamples' mean: what ``interval="adaptive"`` uses where one unit dominates (heavy tails) in the
  streaming bootstrap, and in :func:`streameval.compare` up to 49 units.
- :func:`subsampled_interval`: the hybrid interval joined with the bootstrap-t of ``m``-out-of-``U``
  resamples (fewer units per resample; :func:`subsample_size`): what ``interval="adaptive"`` of
  :func:`streameval.compare` uses, for every metric, where one unit dominates past 49 units.
- :func:`adaptive_choice`: what ``interval="adaptive"`` applies (where one unit holds more than
  15% of a labelling's within-cluster pairs, subsampled past 49 units in
  :func:`streameval.compare` and hybrid otherwise; else studentized), and :func:`interval_bounds`,
  the one dispatch from a method's name to its interval (kept within the metric's range) that
  :func:`streameval.compare` and :class:`streameval.BootstrapEvaluator` both call.
- :func:`p_value`: the one rule for every resampling p-value,
  ``(1 + #{valid draws at least as extreme}) / (1 + #valid draws)``.

>>> vals = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
>>> percentile_interval(vals, 0.5)
(0.2, 0.4)
>>> p_value(np.array([3.0, -1.0, np.nan, 0.5]), 1.0)  # |draw| >= 1 twice of 3 valid draws
0.75
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from .units import DOMINANT_SHARE, JACKKNIFE_GROUPS

__all__ = ["Interval", "percentile_interval", "bca_interval", "studentized_interval", "hybrid_interval",
           "subsampled_interval", "subsample_size", "SUBSAMPLE_SCALE",
           "adaptive_choice", "interval_bounds", "describe_interval", "check_interval_method", "p_value", "json_number",
           "INTERVAL_METHODS", "COMPARE_INTERVAL_METHODS", "STUDENTIZED_METHODS",
           "INTERVAL_NAMES", "INTERVAL_DESCRIPTIONS"]

INTERVAL_METHODS = ("adaptive", "bca", "hybrid", "percentile", "studentized")
"""The interval methods of both the batch comparison and the streaming bootstrap."""
COMPARE_INTERVAL_METHODS = INTERVAL_METHODS + ("subsampled",)
"""The interval methods of :func:`streameval.compare`: the streaming bootstrap's and
``"subsampled"`` (batch only: its ``m``-unit resamples are drawn apart from the replicas)."""
STUDENTIZED_METHODS = ("adaptive", "hybrid", "studentized", "subsampled")
"""The methods that need standard errors (adaptive may apply the studentized, hybrid or subsampled
one)."""
SUBSAMPLE_SCALE = 7
"""The ``m``-out-of-``U`` subsamples draw ``m = min(U, round(SUBSAMPLE_SCALE · √U))`` units (the
simulation's choice between 5, which over-covered NMI with heavy tails, and 10, which under-covered
it with merges across units)."""
_N = NormalDist()
#: each interval method's name in the printed reports (the CLI's too)
INTERVAL_NAMES = {"adaptive": "adaptive", "bca": "BCa", "hybrid": "hybrid", "percentile": "percentile",
                  "studentized": "studentized", "subsampled": "subsampled"}
#: what each applied method computes, in words (``settings["interval"]``)
INTERVAL_DESCRIPTIONS = {
    "bca": "BCa bootstrap over units (bias from the resamples, acceleration from the jackknife over {jack})",
    "studentized": "studentized (bootstrap-t) over units: t = (value_b - value) / se_b, with each "
                   "resample's linearization (delta-method) standard error",
    "hybrid": "hybrid over units: the union of the percentile interval and the bootstrap-t centred at "
              "the resamples' mean, t = (value_b - mean_b value_b) / se_b (each resample's "
              "linearization standard error)",
    "percentile": "percentile bootstrap over units",
    "subsampled": "subsampled over units: the hybrid interval joined with the bootstrap-t, centred at "
                  "the subsamples' mean, of {m}-out-of-{units} resamples (each its own "
                  "linearization standard error)",
}


def describe_interval(method: str, applied: str, n_units: int) -> str:
    """The ``settings["interval"]`` sentence of :func:`streameval.compare` and
    :meth:`streameval.BootstrapEvaluator.settings`: why adaptive applied what it did, then what the
    applied method computes. O(1).

    >>> describe_interval("adaptive", "hybrid", 40)[:45]
    'adaptive: hybrid, since one unit holds more t'
    >>> describe_interval("subsampled", "subsampled", 300)[:60]
    'subsampled over units: the hybrid interval joined with the b'
    """
    jack = "units" if n_units <= JACKKNIFE_GROUPS else f"{JACKKNIFE_GROUPS} groups of units"
    m = subsample_size(n_units)
    if applied == "subsampled" and m >= n_units:
        body = f"subsampled, which with {n_units} units (m = U) is the " + INTERVAL_DESCRIPTIONS["hybrid"]
    else:
        body = INTERVAL_DESCRIPTIONS[applied].format(jack=jack, m=m, units=n_units)
    if method != "adaptive":
        return body
    why = ("studentized, since no unit holds" if applied == "studentized"
           else f"{applied}, since one unit holds")
    return f"adaptive: {why} more than {DOMINANT_SHARE:.0%} of a labelling's within-cluster pairs; {body}"


def check_interval_method(method, methods: tuple = INTERVAL_METHODS) -> str:
    """``method`` if it names one of the interval ``methods`` (the streaming bootstrap's by
    default), else a ``ValueError`` listing them. O(1).

    >>> check_interval_method("hybrid")
    'hybrid'
    >>> check_interval_method("t")
    Traceback (most recent call last):
    ...
    ValueError: interval must be one of 'adaptive', 'bca', 'hybrid', 'percentile', 'studentized', got 't'
    """
    if not isinstance(method, str) or method not in methods:
        raise ValueError(f"interval must be one of {', '.join(map(repr, methods))}, got {method!r}")
    return method


def subsample_size(n_units: int, scale: float | None = None) -> int:
    """``m = min(U, round(7 √U))``: the units each subsample of :func:`subsampled_interval` draws
    (``scale`` in place of 7: the neighbouring sizes the calibration script measures).
    It equals ``U`` up to 49 units (the subsampled interval is then the hybrid one) and falls as a
    share of ``U`` beyond (``m/U → 0``, as the ``m``-out-of-``n`` bootstrap's consistency under
    infinite variance needs): 70 of 100 units, 121 of 300, 221 of 1,000, 700 of 10,000. O(1).

    >>> subsample_size(40), subsample_size(300), subsample_size(10_000)
    (40, 121, 700)
    """
    scale = SUBSAMPLE_SCALE if scale is None else scale  # read at the call: a test may set it
    return min(int(n_units), int(round(scale * math.sqrt(n_units))))


def adaptive_choice(pairs_share: float, n_units: int | None = None) -> str:
    """The interval ``interval="adaptive"`` applies, for every metric: where one unit holds more
    than ``DOMINANT_SHARE`` (15%) of a labelling's within-cluster pairs (heavy-tailed units, where
    the studentized interval under-covers), ``"subsampled"`` when ``m`` (:func:`subsample_size`)
    is below ``n_units`` (:func:`streameval.compare` passes it), and ``"hybrid"`` otherwise (up to
    49 units, where the subsampled interval is the hybrid one, or no ``n_units`` given, as in the
    streaming bootstrap, which draws no subsamples); else ``"studentized"`` (calibrated with
    light tails, where the hybrid one over-covers). The choice of the simulations,
    ``docs/benchmarks/compare-calibration.md`` and ``docs/benchmarks/bootstrap.md``: with heavy
    tails the hybrid interval under-covers ELM's, BCubed's and ARI's population value, the
    subsampled one less (a too-wide interval is the lesser failure). O(1).

    >>> adaptive_choice(0.02), adaptive_choice(0.4)
    ('studentized', 'hybrid')
    >>> adaptive_choice(0.02, 300), adaptive_choice(0.4, 300), adaptive_choice(0.4, 40)
    ('studentized', 'subsampled', 'hybrid')
    """
    if pairs_share <= DOMINANT_SHARE:
        return "studentized"
    return "subsampled" if n_units is not None and subsample_size(n_units) < n_units else "hybrid"


def interval_bounds(kind: str, values: np.ndarray, observed: float, confidence: float, *,
                    jackknife=None, se=None, se_observed: float = math.nan,
                    bounds: tuple | None = None, sub=None) -> tuple[float, float]:
    """The ``(low, high)`` interval of method ``kind`` (``"percentile"``, ``"bca"``,
    ``"studentized"`` or ``"hybrid"``; ``"adaptive"`` is resolved by :func:`adaptive_choice`
    before) from the resampled ``values``: :func:`percentile_interval`, :func:`bca_interval` (with
    ``jackknife``), :func:`studentized_interval` or :func:`hybrid_interval` (with ``se`` and
    ``se_observed``); ``"subsampled"``: :func:`subsampled_interval` with ``sub``, the subsamples'
    ``(values, standard errors)`` (``None`` where ``m = U``: the hybrid interval). An interval with
    a bootstrap-t end is kept within the metric's ``bounds``
    (its ends, ``θ̂ − t·se``, are not resampled values and can step outside: an interval for a
    value in ``[a, b]`` loses nothing by ending at ``a`` or ``b``); the quantile intervals are
    inside already. The cost of the method called.

    >>> vals = np.array([0.4, 0.5, 0.9])
    >>> interval_bounds("studentized", vals, 0.5, 0.5, se=np.full(3, 0.5), se_observed=0.5,
    ...                 bounds=(0.0, 1.0))
    (0.3, 0.55)
    >>> interval_bounds("percentile", vals, 0.5, 0.5)
    (0.45, 0.7)
    """
    if kind == "bca":
        return bca_interval(values, observed, jackknife, confidence)
    if kind == "percentile":
        return percentile_interval(values, confidence)
    if kind == "studentized":
        lo, hi = studentized_interval(values, observed, se, se_observed, confidence)
    elif kind == "hybrid" or (kind == "subsampled" and sub is None):
        lo, hi = hybrid_interval(values, observed, se, se_observed, confidence)
    elif kind == "subsampled":
        lo, hi = subsampled_interval(values, observed, se, se_observed, confidence, *sub)
    else:
        check_interval_method(kind)
        raise ValueError(f"interval {kind!r} is resolved before (adaptive_choice), not computed")
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi


def json_number(v):
    """``v`` as a float, or ``None`` for NaN or ``None`` (JSON has no NaN). O(1).

    >>> json_number(float("nan")), json_number(2)
    (None, 2.0)
    """
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


class Interval(NamedTuple):
    """A metric's observed ``value`` and its ``(low, high)`` confidence interval.

    A named tuple: ``value, low, high = interval`` works, and it equals the plain tuple. Every
    operation O(1).

    >>> iv = Interval(0.5, 0.4, 0.6)
    >>> iv == (0.5, 0.4, 0.6), iv.low, iv.to_dict()
    (True, 0.4, {'value': 0.5, 'low': 0.4, 'high': 0.6})
    """

    value: float
    low: float
    high: float

    def to_dict(self) -> dict:
        """``{"value", "low", "high"}`` with NaN as ``None`` (JSON-safe). O(1)."""
        return {"value": json_number(self.value), "low": json_number(self.low),
                "high": json_number(self.high)}


def _valid(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    return values[~np.isnan(values)]


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of the non-NaN values: their ``(1-c)/2`` and ``(1+c)/2`` quantiles
    (numpy's linear interpolation), ``(nan, nan)`` if none. O(B log B).

    >>> percentile_interval(np.array([0.0, 1.0, 2.0, 3.0, np.nan]), 0.5)
    (0.75, 2.25)
    """
    a = (1 - confidence) / 2
    ok = _valid(values)
    if not len(ok):
        return math.nan, math.nan
    lo, hi = np.quantile(ok, [a, 1 - a])
    return float(lo), float(hi)


def bca_interval(values: np.ndarray, observed: float, jackknife: np.ndarray,
                 confidence: float) -> tuple[float, float]:
    """Efron's BCa interval from the resampled ``values``, the ``observed`` value and the
    leave-one-out (or leave-one-group-out) values ``jackknife``.

    ``z0 = Φ⁻¹(#{θ*_b < θ̂} + ½ #{θ*_b = θ̂}) / B)`` (clipped to ``[1/(2B), 1 − 1/(2B)]``), the
    acceleration ``a = Σ d³ / (6 (Σ d²)^{3/2})`` with ``d = mean(θ_(g)) − θ_(g)``, and the bounds are
    the quantiles of the values at ``Φ(z0 + (z0 + z_q) / (1 − a (z0 + z_q)))`` for
    ``q = (1 ∓ c)/2``. With ``z0 = a = 0`` it is the percentile interval. NaN values are left out;
    ``(nan, nan)`` if none. O(B log B + G).

    >>> vals = np.linspace(0, 1, 101)
    >>> np.allclose(bca_interval(vals, 0.5, np.array([0.4, 0.5, 0.6]), 0.9),
    ...             percentile_interval(vals, 0.9), rtol=1e-12)
    True
    """
    ok = _valid(values)
    if not len(ok) or observed != observed:
        return math.nan, math.nan
    b = len(ok)
    share = (np.count_nonzero(ok < observed) + 0.5 * np.count_nonzero(ok == observed)) / b
    share = min(max(share, 0.5 / b), 1 - 0.5 / b)
    z0 = _N.inv_cdf(share)
    jack = _valid(jackknife)
    acc = 0.0
    if len(jack) > 1:
        d = jack.mean() - jack
        ss = float(np.sum(d * d))
        if ss > 0:
            acc = float(np.sum(d * d * d)) / (6.0 * ss ** 1.5)
    levels = []
    for q in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = _N.inv_cdf(q)
        den = 1.0 - acc * (z0 + z)
        if den <= 0:  # an extreme acceleration: the level runs off the end
            levels.append(0.0 if q < 0.5 else 1.0)
            continue
        levels.append(_N.cdf(z0 + (z0 + z) / den))
    lo, hi = np.quantile(ok, levels)
    return float(lo), float(hi)


def studentized_interval(values: np.ndarray, observed: float, se_values: np.ndarray, se_observed: float,
                         confidence: float, centre: float | None = None) -> tuple[float, float]:
    """The studentized (bootstrap-t) interval: with ``t*_b = (θ*_b − c) / se*_b`` over the resamples
    whose standard error is positive, ``(θ̂ − t*_{(1+c)/2} · se, θ̂ − t*_{(1−c)/2} · se)``.

    ``se*_b`` is resample ``b``'s own standard error and ``se`` the observed one (both from the
    linearization, :mod:`streameval.linearization`). The centre ``c`` is ``θ̂`` by default: the
    pivot ``(θ̂ − θ) / se`` of the value at the expected sums, ``θ = f(E S)``, whose bootstrap
    image is ``(θ* − θ̂) / se*``. With ``centre=`` the resamples' mean ``θ̄*``, the pivot is
    ``(θ̂ − E θ̂) / se``: an interval for the metric's *mean over test sets* of this size, which
    differs from ``f(E S)`` by the metric's bias (large where rare giant clusters carry the sums).
    Where the resampled values are skewed *and* their spread moves with their level (a
    heavy-tailed sample: resamples without its largest units are both lower and tighter), the
    quantiles of ``t*`` carry the skew into the interval, which the percentile interval cannot.
    ``(θ̂, θ̂)`` when ``se`` is 0 (one unit: no resampling variation); ``(nan, nan)`` without a
    usable resample. O(B log B).

    >>> vals = np.array([0.4, 0.5, 0.6])
    >>> studentized_interval(vals, 0.5, np.array([0.1, 0.1, 0.1]), 0.1, 0.5)
    (0.45, 0.55)
    >>> studentized_interval(vals, 0.55, np.array([0.1, 0.1, 0.1]), 0.1, 0.5, centre=0.5)
    (0.5, 0.6)
    """
    values = np.asarray(values, dtype=np.float64)
    se_values = np.asarray(se_values, dtype=np.float64)
    if observed != observed or se_observed != se_observed:
        return math.nan, math.nan
    if se_observed == 0:
        return float(observed), float(observed)
    ok = ~np.isnan(values) & (se_values > 0)
    if not ok.any():
        return math.nan, math.nan
    t = (values[ok] - (observed if centre is None else centre)) / se_values[ok]
    a = (1 - confidence) / 2
    t_lo, t_hi = np.quantile(t, [a, 1 - a])
    return float(observed - t_hi * se_observed), float(observed - t_lo * se_observed)


def hybrid_interval(values: np.ndarray, observed: float, se_values: np.ndarray, se_observed: float,
                    confidence: float) -> tuple[float, float]:
    """The union of the percentile interval and the bootstrap-t centred at the resamples' mean
    (:func:`studentized_interval` with ``centre = θ̄*``, the mean of the non-NaN values):
    ``(min(lows), max(highs))``.

    For heavy-tailed units, where each of the two misses on its own side: the mean-centred
    bootstrap-t follows the skew of the resampled values but leans on standard errors that are
    themselves carried by a few units, the percentile interval ignores the skew. On the simulated
    heavy-tailed and cross-merge data of ``docs/benchmarks/compare-calibration.md`` their union
    covers the metric's mean over test sets closer to 95% than either; with light-tailed units it
    over-covers (both are right there and the union is wider than each), which is why
    ``interval="adaptive"`` uses it only where one unit dominates. ``(nan, nan)`` without a usable
    resample. O(B log B).

    >>> vals = np.array([0.4, 0.5, 0.9])
    >>> iv = hybrid_interval(vals, 0.5, np.array([0.1, 0.1, 0.1]), 0.1, 0.5)
    >>> tuple(round(x, 12) for x in iv)  # the bootstrap-t's low end, the percentile's high end
    (0.4, 0.7)
    """
    values = np.asarray(values, dtype=np.float64)
    valid = values[~np.isnan(values)]
    if not len(valid):
        return math.nan, math.nan
    p_lo, p_hi = percentile_interval(valid, confidence)
    s_lo, s_hi = studentized_interval(values, observed, se_values, se_observed, confidence,
                                      centre=float(valid.mean()))
    if s_lo != s_lo:  # no resample with a positive standard error: the percentile interval alone
        return p_lo, p_hi
    return min(p_lo, s_lo), max(p_hi, s_hi)


def subsampled_interval(values: np.ndarray, observed: float, se_values: np.ndarray, se_observed: float,
                        confidence: float, sub_values: np.ndarray, sub_se_values: np.ndarray
                        ) -> tuple[float, float]:
    """The :func:`hybrid_interval` of the ``U``-unit resamples joined with the mean-centred
    bootstrap-t of ``m``-out-of-``U`` resamples (``sub_values``, ``sub_se_values``: each draws
    ``m < U`` units with replacement): ``(min(lows), max(highs))``.

    The ``m``-out-of-``U`` bootstrap-t: ``t*_b = (θ*_b − θ̄*) / se*_b`` over the subsamples (each
    studentized by its own linearization standard error, ``θ̄*`` their mean), and the interval
    ``(θ̂ − t*_{(1+c)/2} · se, θ̂ − t*_{(1−c)/2} · se)`` with ``se`` the full sample's. The
    statistic is self-normalized, so a subsample's ``t`` has the scale of the sample's without a
    rate to estimate; drawing fewer units than the sample holds is what keeps the bootstrap
    consistent when the units' sums have infinite variance (heavy tails: Zipf-sized clusters,
    whose pair counts have no variance), where the ``U``-out-of-``U`` resamples copy the sample's
    own largest units too often and give ``t`` too light a tail — the interval then misses on the
    side away from the rare giant clusters. Where ``m = U`` it is the hybrid interval.
    ``(nan, nan)`` without a usable resample. O(B log B).

    >>> vals, se = np.array([0.4, 0.5, 0.9]), np.array([0.1, 0.1, 0.1])
    >>> iv = subsampled_interval(vals, 0.5, se, 0.1, 0.5, np.array([0.0, 0.0, 0.9]), se)
    >>> tuple(round(x, 12) for x in iv)  # t* = -3, -3, 6: the subsamples' bootstrap-t is wider
    (0.35, 0.8)
    """
    lo, hi = hybrid_interval(values, observed, se_values, se_observed, confidence)
    sub = np.asarray(sub_values, dtype=np.float64)
    valid = sub[~np.isnan(sub)]
    if not len(valid):
        return lo, hi
    s_lo, s_hi = studentized_interval(sub, observed, sub_se_values, se_observed, confidence,
                                      centre=float(valid.mean()))
    if s_lo != s_lo or lo != lo:
        return (lo, hi) if lo == lo else (s_lo, s_hi)
    return min(lo, s_lo), max(hi, s_hi)


def p_value(null: np.ndarray, statistic: float, *, two_sided: bool = True) -> float:
    """``(1 + #{valid draws at least as extreme as statistic}) / (1 + #valid draws)``.

    ``null`` holds draws of the statistic under the null hypothesis (NaN draws, from resamples
    without a value, are left out of both counts). Two-sided: ``|draw| ≥ |statistic|``; one-sided:
    ``draw ≥ statistic``. Ties within ``1e-12`` (relative) count as extreme: values from equal
    statistics are equal exactly, but the same value reached through two float paths may differ
    in the last bits. ``nan`` without a valid draw. O(B).

    >>> p_value(np.array([0.5, 2.0, -2.0]), 1.0), p_value(np.array([0.5, 2.0, -2.0]), 1.0, two_sided=False)
    (0.75, 0.5)
    """
    ok = _valid(null)
    if not len(ok) or statistic != statistic:
        return math.nan
    tol = 1e-12 * max(1.0, abs(statistic))
    if two_sided:
        extreme = np.count_nonzero(np.abs(ok) >= abs(statistic) - tol)
    else:
        extreme = np.count_nonzero(ok >= statistic - tol)
    return (1 + int(extreme)) / (1 + len(ok))
