"""Drop detection: the watched metric over consecutive blocks of elements, fed to a sequential detector.

One implementation, used by :class:`~streameval.Monitor` and by ``streameval watch`` alike:
:class:`BlockDrops` computes the watched metric over each block of ``block`` consecutive
elements (a table of the block's elements, read once when the block is full) and hands the value
to a *detector*, an object with ``update(value) -> bool`` (true: a drop is flagged at this block)
and ``bind(block, bigger_is_better)``. Blocks make the detector's samples nearly independent (the
value of a sliding window after every element is a moving average, strongly autocorrelated).

The detectors:

- :class:`Cusum` (the default): a one-sided CUSUM (Page's test; River's ``PageHinkley`` is the
  same recursion) on the block values standardised by a *reference period* (the first
  ``reference`` blocks). Its threshold is calibrated, from the reference values, to a stated
  expected run length between false alarms (``run_length`` elements), as Alibi Detect calibrates
  its online detectors to an expected run time: the run length of the CUSUM on the reference
  distribution is computed by Brook and Evans' Markov chain and the threshold found by bisection.
  After a drop it takes the next ``reference`` blocks as its new reference.
- :class:`RiverRule`: a River drift detector (``river.drift.ADWIN`` by default: the rule
  ``Monitor`` used before) behind the same interface, with :func:`is_drop` deciding the
  direction of a change.
- :class:`IntervalRule`: the windowed :class:`~streameval.BootstrapEvaluator` interval lies
  entirely below the reference (``Monitor(..., interval=B)``); it flags the block at which the
  interval newly falls below.

Trade-off (see the benchmark, ``docs/benchmarks/drift.md``): a longer ``run_length`` raises the
threshold ``h`` only like ``log(run_length)``, so fewer false alarms cost little delay on a
sudden collapse (one or two blocks) and more on a slow drift (whose per-block shift is small);
a smaller ``k`` (the allowance, in reference standard deviations) catches smaller shifts later.

>>> det = Cusum(reference=20, run_length=10**6)
>>> det.bind(block=25, bigger_is_better=True)
>>> import random
>>> rng = random.Random(1)
>>> [det.update(0.9 + rng.gauss(0, 0.02)) for _ in range(200)].count(True)
0
>>> [det.update(0.5) for _ in range(3)]
[True, False, False]
"""

from __future__ import annotations

import math
import numbers
import time
from collections import deque
from typing import Any, Protocol

__all__ = ["Detector", "Cusum", "RiverRule", "IntervalRule", "BlockDrops", "is_drop",
           "cusum_run_length", "cusum_threshold", "make_detector", "DETECTORS", "block_stats",
           "block_means",
           "one_blas_thread"]

DETECTORS = ("cusum", "adwin", "page-hinkley", "interval")


class Detector(Protocol):
    """What :class:`BlockDrops` feeds: ``bind`` once, then ``update(block value)`` per block.
    The shipped detectors (:class:`Cusum`, :class:`RiverRule`, :class:`IntervalRule`) cost O(1)
    per ``bind`` and their own update per block (each states it).

    >>> det: Detector = Cusum(reference=4, h=3.0)
    >>> det.bind(block=10, bigger_is_better=True)
    >>> [det.update(v) for v in (0.8, 0.82, 0.78, 0.8, 0.8, 0.7, 0.6)]
    [False, False, False, False, False, False, True]
    """

    def bind(self, block: int, bigger_is_better: bool) -> None:
        """Tell the detector the block size (elements per value) and the metric's direction,
        once, before the first :meth:`update`. O(1)."""

    def update(self, value: float) -> bool:
        """Take one block value; true when it flags a drop (a change the bad way). O(1) for
        :class:`Cusum`; the others state theirs."""


def is_drop(detector, value: float, bigger_is_better: bool, since: list) -> bool:
    """Feed one block value to a River drift ``detector``; true when it flags a change *down*
    (up, for a metric where smaller is better).

    The change's direction compares the detector's estimate before and after the update, or, for a
    detector without ``estimation``, the block value with the mean of the block values since the
    previous change (``since = [sum, count]``, updated here). O(the detector's update).

    >>> class Always:  # a detector that flags every value
    ...     drift_detected = True
    ...     def update(self, x):
    ...         pass
    >>> since = [0.0, 0]
    >>> [is_drop(Always(), v, True, since) for v in (0.9, 0.5, 0.7)]
    [False, True, False]
    """
    before = getattr(detector, "estimation", None)
    detector.update(value)
    drop = False
    if detector.drift_detected:
        after = getattr(detector, "estimation", None)
        if before is None or after is None:  # detectors without an estimate
            total, count = since
            before = total / count if count else value
            after = value
        drop = (after < before) if bigger_is_better else (after > before)
        since[0], since[1] = 0.0, 0
    since[0] += value
    since[1] += 1
    return drop


# ---------------------------------------------------------------------------------- CUSUM
def mean_variance(values: list) -> tuple[float, float]:
    """``(mean, sample variance)`` of two or more floats, ``Σx/n`` and ``Σ(x − mean)²/(n − 1)``
    (two passes, Python's sums in order): the one formula the CUSUM's calibration (its ``μ`` and
    ``σ``) and :meth:`BlockDrops.interval` (the standard error of the mean) read. O(n).

    >>> mean_variance([1.0, 2.0, 3.0])
    (2.0, 1.0)
    """
    n = len(values)
    if n < 2:
        raise ValueError(f"a sample variance needs two or more values, got {n}")
    mean = sum(values) / n
    return mean, sum((x - mean) ** 2 for x in values) / (n - 1)


def _increment_cdf(z, k: float, bandwidth: float):
    """The CDF of the CUSUM's increment ``z - k``, ``z`` drawn from the reference values smoothed
    by a logistic kernel of standard deviation ``bandwidth`` (its tails are heavier than a
    Gaussian's: the calibration errs towards fewer false alarms)."""
    import numpy as np

    s = bandwidth * math.sqrt(3.0) / math.pi  # the logistic scale of that standard deviation
    centres = np.asarray(z, dtype=np.float64) - k

    def cdf(x):
        x = np.asarray(x, dtype=np.float64)
        u = np.clip((x[..., None] - centres) / s, -60.0, 60.0)  # no denormals
        return (1.0 / (1.0 + np.exp(-u))).mean(axis=-1)

    return cdf


def cusum_run_length(z, k: float, h: float, states: int = 150) -> float:
    """The expected number of steps of ``S ← max(0, S + z - k)`` from 0 until ``S > h``, ``z``
    drawn independently from the (smoothed) values ``z``: Brook and Evans' Markov chain on
    ``states`` cells of ``[0, h]`` (a linear solve, O(states³)).

    On Gaussian values (k = 0.5, h = 4) Siegmund's approximation gives about 336 steps; the
    kernel smoothing of a finite sample shortens it a little (so thresholds err high):

    >>> import random
    >>> rng = random.Random(0)
    >>> z = [rng.gauss(0, 1) for _ in range(5000)]
    >>> 250 < cusum_run_length(z, k=0.5, h=4.0) < 345
    True
    """
    import numpy as np

    z = np.asarray(z, dtype=np.float64)
    bandwidth = max(1.06 * len(z) ** -0.2, 0.05)  # Silverman's rule for unit-variance values
    cdf = _increment_cdf(z, k, bandwidth)
    m = states
    width = 2.0 * h / (2 * m - 1)  # cell j is centred on j·width; cell 0 holds S <= width/2
    d = np.arange(-(m - 1), m + 1)  # j - i for the upper edge of cell j from the centre of i
    upper = cdf((d + 0.5) * width)  # P(S' < upper edge of j | S = centre of i), by j - i
    i = np.arange(m)[:, None]
    j = np.arange(m)[None, :]
    hi = upper[(j - i) + (m - 1)]
    lo = np.where(j == 0, 0.0, upper[np.maximum(j - i - 1, -(m - 1)) + (m - 1)])
    transition = hi - lo
    transition[transition < 1e-30] = 0.0  # tiny probabilities only slow the solve down
    lengths = np.linalg.solve(np.eye(m) - transition, np.ones(m))
    return float(lengths[0])


def cusum_threshold(z, k: float, run_length: float, states: int = 150) -> float:
    """The threshold ``h`` at which the CUSUM on the values ``z`` runs ``run_length`` steps
    between false alarms on average (bisection on :func:`cusum_run_length`, which grows with
    ``h``). O(40 · states³).

    >>> import random
    >>> rng = random.Random(0)
    >>> z = [rng.gauss(0, 1) for _ in range(400)]
    >>> h = cusum_threshold(z, k=0.5, run_length=1000)
    >>> 4.0 < h < 6.5   # the Gaussian CUSUM's h for ARL0 = 1000 and k = 0.5 is about 4.8
    True
    """
    lo, hi = 0.0, 1.0
    while cusum_run_length(z, k, hi, states) < run_length:
        lo, hi = hi, hi * 2
        if hi > 1e4:
            return hi
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if cusum_run_length(z, k, mid, states) < run_length:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-3 * hi:
            break
    return hi


def one_blas_thread():
    """A context in which BLAS/LAPACK runs on one thread (threadpoolctl's, when installed): the
    calibration's small solves (150 unknowns) would otherwise wake OpenBLAS's thread pool, whose
    start and spinning cost far more CPU than the solves (about 0.7 s against 4 ms on a loaded
    2-core machine). :func:`streameval.compare` runs on one thread too. About 10 µs to enter: the
    BLAS libraries are found once (a ``ThreadpoolController``, looked for again only after more
    modules were imported, which may load another BLAS), not at every entry (0.3–7 ms, paid at
    each studentized read of ``Monitor``'s window interval).

    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float(np.ones((2, 3)) @ np.ones(3) @ np.ones(2))
    6.0
    """
    import contextlib
    import sys

    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return contextlib.nullcontext()
    if _BLAS[1] != len(sys.modules):
        _BLAS[:] = [ThreadpoolController(), len(sys.modules)]
    return _BLAS[0].limit(limits=1, user_api="blas")


_BLAS: list = [None, -1]  # one_blas_thread's controller, and len(sys.modules) when it was made


class Cusum:
    """A one-sided CUSUM on block values, calibrated on a reference period.

    The first ``reference`` block values give the reference mean ``μ`` and standard deviation
    ``σ``, at least ``min_scale`` (0.05, the loss the drift goal is stated in: a nearly perfect
    reference, whose 40 blocks saw no error, would otherwise take one rare error for a drop);
    each later
    value ``x`` adds ``z = (μ - x)/σ`` (``(x - μ)/σ`` when smaller is better) to

        ``S ← max(0, S + z - k)``

    and a drop is flagged when ``S > h``. ``h`` is calibrated so that the expected run length
    between false alarms on the reference distribution is ``run_length`` elements
    (``run_length / block`` blocks; :func:`cusum_threshold`), unless given. After a drop the next
    ``reference`` blocks become the new reference (no flag meanwhile).

    Cost: O(1) per block, plus one calibration (O(40 · 150³) floating-point work, a few
    milliseconds) per reference period.

    >>> det = Cusum(reference=4, h=3.0)
    >>> det.bind(block=10, bigger_is_better=True)
    >>> [det.update(v) for v in (0.8, 0.82, 0.78, 0.8, 0.8, 0.7, 0.6)]  # σ is 0.05 at least
    [False, False, False, False, False, False, True]
    """

    def __init__(self, k: float = 0.5, run_length: float = 10**8, reference: int = 40,
                 h: float | None = None, min_scale: float = 0.05):
        if not (k >= 0 and math.isfinite(k)):
            raise ValueError(f"k must be a finite number >= 0, got {k!r}")
        if not (run_length > 1 and math.isfinite(run_length)):
            raise ValueError(f"run_length must be a finite number > 1, got {run_length!r}")
        if not isinstance(reference, int) or isinstance(reference, bool) or reference < 2:
            raise ValueError(f"reference must be an int >= 2 blocks, got {reference!r}")
        if h is not None and not (h > 0 and math.isfinite(h)):
            raise ValueError(f"h must be a finite number > 0, got {h!r}")
        if not (min_scale > 0):
            raise ValueError(f"min_scale must be > 0, got {min_scale!r}")
        self.k, self.run_length, self.reference = float(k), float(run_length), reference
        self.fixed_h, self.min_scale = h, float(min_scale)
        self.block, self.sign = 1, 1.0
        self.h: float | None = h
        self.mu = self.sigma = math.nan
        self.s = 0.0
        self._ref: list = []

    def bind(self, block: int, bigger_is_better: bool) -> None:
        """Set the block size (the run length is counted in elements) and the bad direction:
        ``z = (μ - x)/σ`` when bigger is better, ``(x - μ)/σ`` otherwise. O(1)."""
        self.block, self.sign = block, (1.0 if bigger_is_better else -1.0)

    @property
    def calibrating(self) -> bool:
        """True while the reference period is being collected."""
        return len(self._ref) < self.reference or self.h is None

    def _calibrate(self) -> None:
        ref = self._ref
        mu, var = mean_variance(ref)
        sd = math.sqrt(var)
        self.mu, self.sigma = mu, max(sd, self.min_scale)
        if self.fixed_h is not None:
            self.h = self.fixed_h
        else:
            z = [self.sign * (mu - x) / self.sigma for x in ref]
            with one_blas_thread():
                self.h = cusum_threshold(z, self.k, max(2.0, self.run_length / self.block))
        self.s = 0.0

    def update(self, value: float) -> bool:
        """Take one block value; true when a drop is flagged. A NaN value (a metric undefined
        on the block) is ignored; an infinite or non-numeric one is refused, changing nothing.
        O(1), ``S ← max(0, S + z - k)``; the value that completes a reference period also
        calibrates ``h`` (:func:`cusum_threshold`, a few milliseconds) unless ``h`` was given."""
        if value != value:
            return False
        if (type(value) is not float  # the common case first: a float is a Real, not a bool
                and (not isinstance(value, numbers.Real) or isinstance(value, bool))
                or not math.isfinite(value)):
            raise ValueError(f"a block value must be a finite number (or NaN: ignored), got {value!r}")
        if len(self._ref) < self.reference:
            self._ref.append(value)
            if len(self._ref) == self.reference:
                self._calibrate()
            return False
        assert self.h is not None
        self.s = max(0.0, self.s + self.sign * (self.mu - value) / self.sigma - self.k)
        if self.s > self.h:
            self.s = 0.0
            self._ref = []  # the next blocks are the new reference
            return True
        return False

    def update_many(self, values) -> list:
        """:meth:`update` of each of ``values`` in turn; the positions (from 0) of the values at
        which a drop was flagged. The same state and flags as the calls one by one, bit for bit:
        a calibrated detector's finite float values run the same recurrence in one loop, any
        other value (while calibrating, NaN, a value :meth:`update` refuses) goes through
        :meth:`update` itself. O(1) per value, without a call per value.

        >>> det, one = Cusum(reference=4, h=3.0), Cusum(reference=4, h=3.0)
        >>> for d in (det, one):
        ...     d.bind(block=10, bigger_is_better=True)
        >>> values = [0.8, 0.82, 0.78, 0.8, 0.8, 0.7, 0.6, float("nan"), 0.8]
        >>> det.update_many(values), [k for k, v in enumerate(values) if one.update(v)]
        ([6], [6])
        """
        flagged: list = []
        k, n = 0, len(values)
        inf = math.inf
        while k < n:
            if len(self._ref) < self.reference or self.h is None:  # calibrating
                if self.update(values[k]):
                    flagged.append(k)
                k += 1
                continue
            s, mu, sigma, sign, slack, h = self.s, self.mu, self.sigma, self.sign, self.k, self.h
            odd = False  # a value for update's own checks (NaN, infinite, not a float)
            while k < n:
                value = values[k]
                if type(value) is not float or not -inf < value < inf:
                    odd = True
                    break
                s = max(0.0, s + sign * (mu - value) / sigma - slack)
                k += 1
                if s > h:
                    s = 0.0
                    self._ref = []  # the next blocks are the new reference
                    flagged.append(k - 1)
                    break
            self.s = s
            if odd:
                if self.update(values[k]):
                    flagged.append(k)
                k += 1
        return flagged

    def __repr__(self) -> str:
        state = ("calibrating" if self.calibrating else
                 f"μ={self.mu:.4g}, σ={self.sigma:.3g}, h={self.h:.3g}, S={self.s:.3g}")
        return (f"Cusum(k={self.k:g}, run_length={self.run_length:g}, "
                f"reference={self.reference}; {state})")


class RiverRule:
    """A River drift detector on the block values (``model``: a fresh ``river.drift`` detector;
    default ``ADWIN(clock=1)``, the rule ``Monitor`` used before): a change it detects is a drop
    when its estimate moved the bad way (:func:`is_drop`). O(the model's update) per block.

    ADWIN sees the values fall from 0.9 to 0.3 and flags the change once, some blocks after it;
    for a metric where smaller is better the same change is an improvement, not a drop:

    >>> from river import drift
    >>> values = [0.9] * 60 + [0.3] * 60
    >>> rule = RiverRule(drift.ADWIN(clock=1)); rule.bind(block=25, bigger_is_better=True)
    >>> flagged = [i for i, v in enumerate(values) if rule.update(v)]
    >>> len(flagged), 60 <= flagged[0] < 120
    (1, True)
    >>> rule = RiverRule(drift.ADWIN(clock=1)); rule.bind(block=25, bigger_is_better=False)
    >>> [i for i, v in enumerate(values) if rule.update(v)]
    []
    """

    def __init__(self, model=None):
        if model is None:
            from .errors import require

            model = require("river.drift", "drop detection with River's ADWIN", "river").ADWIN(
                clock=1)
        self.model = model
        self.better = True
        self._since = [0.0, 0]

    def bind(self, block: int, bigger_is_better: bool) -> None:
        """Set the metric's direction (the model counts blocks, not elements). O(1)."""
        self.better = bigger_is_better

    def update(self, value: float) -> bool:
        """Feed one block value to the model (NaN ignored); true when it flags a change the bad
        way (:func:`is_drop`). O(the model's update)."""
        if value != value:
            return False
        return is_drop(self.model, value, self.better, self._since)

    def __repr__(self) -> str:
        return f"RiverRule({type(self.model).__name__})"


class IntervalRule:
    """A drop when the windowed bootstrap interval of the watched metric newly lies entirely on
    the bad side of the reference (``Monitor(..., interval=B)``; checked once per block) — judged
    by the interval only while the window holds at least ``min_units`` resampling units.

    ``below`` is a callable returning whether the interval is below now, ``units`` one returning
    the window's live units (the Monitor binds its own). With fewer than ``min_units`` units
    (default :data:`~streameval.units.FEW_UNITS`, 30: below it the library warns that bootstrap
    intervals are rough; with one unit the interval is a point, the window's own value) the
    interval cannot tell a change from a window's noise, and the rule defers to ``fallback``
    (default: the Monitor's default detector, :class:`Cusum`, calibrated on the block values),
    which is fed every block value whatever the units, so it is calibrated when it is needed.
    :attr:`deferred` counts the blocks it judged. A drop the fallback flags counts as the
    interval's too (the rule does not flag the same drop again when the units come back).
    ``min_units=1`` is the rule without the fallback. O(the interval's reading) per block while
    the units suffice, O(1) (the fallback's update) otherwise.

    >>> rule = IntervalRule(lambda: True, units=lambda: 40)
    >>> rule.bind(block=25, bigger_is_better=True)
    >>> rule.update(0.8), rule.update(0.8), rule.deferred   # newly below, then still below
    (True, False, 0)
    >>> few = IntervalRule(lambda: True, units=lambda: 2, fallback=Cusum(reference=4, h=3.0))
    >>> few.bind(block=10, bigger_is_better=True)
    >>> [few.update(v) for v in (0.8, 0.82, 0.78, 0.8, 0.8, 0.7, 0.6)], few.deferred
    ([False, False, False, False, False, False, True], 7)
    """

    def __init__(self, below=None, *, units=None, min_units: int | None = None, fallback=None):
        from .units import FEW_UNITS

        if min_units is None:
            min_units = FEW_UNITS
        if not isinstance(min_units, int) or isinstance(min_units, bool) or min_units < 1:
            raise ValueError(f"min_units must be an int >= 1, got {min_units!r}")
        self.below = below
        self.units = units
        self.min_units = min_units
        self.fallback = Cusum() if fallback is None else fallback
        self.deferred = 0
        self._was = False

    def bind(self, block: int, bigger_is_better: bool) -> None:
        """Bind the fallback detector (the interval knows its own direction). O(1)."""
        self.fallback.bind(block, bigger_is_better)

    def update(self, value: float) -> bool:
        """Feed the fallback ``value``; with at least ``min_units`` units, true when the interval
        newly lies below the reference, else the fallback's flag. O(the interval's reading), or
        O(1) while the units are few."""
        if self.below is None:
            raise ValueError("IntervalRule needs the Monitor's interval (Monitor(..., interval=B))")
        fell = bool(self.fallback.update(value))
        if self.min_units > 1 and self.units is not None and self.units() < self.min_units:
            self.deferred += 1
            if fell:
                self._was = True
            return fell
        now = bool(self.below())
        drop = now and not self._was
        self._was = now
        return drop

    def __repr__(self) -> str:
        return f"IntervalRule(min_units={self.min_units}, fallback={self.fallback!r})"


def make_detector(name: str, **params) -> Any:
    """A detector by name: ``"cusum"`` (:class:`Cusum`), ``"adwin"`` and ``"page-hinkley"``
    (River's, through :class:`RiverRule`), ``"interval"`` (:class:`IntervalRule`). O(1) (River's
    detectors: their constructor).

    >>> make_detector("cusum", run_length=10**6)
    Cusum(k=0.5, run_length=1e+06, reference=40; calibrating)
    """
    if name == "cusum":
        return Cusum(**params)
    if name in ("adwin", "page-hinkley"):
        from .errors import require

        drift = require("river.drift", f"drop detection with River's {name}", "river")
        return RiverRule(drift.ADWIN(clock=1, **params) if name == "adwin"
                         else drift.PageHinkley(**params))
    if name == "interval":
        return IntervalRule(**params)
    raise ValueError(f"unknown detector {name!r}: one of {', '.join(DETECTORS)}")


# ---------------------------------------------------------------------------------- blocks
_FAST_STATS = ("n", "cells", "k_true", "k_pred", "sum_cell_sq", "sum_row_sq", "sum_col_sq",
               "bcubed_p_sum", "bcubed_r_sum", "elm_p_sum", "elm_r_sum", "sum_col_max",
               "sum_row_max", "true_singletons", "pred_singletons", "both_singletons")


class _BlockStats:
    """The exact sums of one block's table that :func:`block_stats` computes (any of the
    statistics of :class:`~streameval.stats.ContingencyStats` but the ``x log x`` sums): what a
    metric's ``value`` reads. Reading one not computed raises ``AttributeError`` and records its
    name in :attr:`missed`."""

    __slots__ = (*_FAST_STATS, "f_sums")
    f_sums: dict
    missed: set = set()
    version = None  # a snapshot (as ContingencyStats)

    def __getattr__(self, name: str):
        if name in _FAST_STATS:
            _BlockStats.missed.add(name)
        raise AttributeError(name)


try:  # the native twin of block_stats (an extension built from older sources lacks it)
    from ._native import block_sums as _native_sums
except ImportError:  # pragma: no cover - the extension is built by pip install
    _native_sums = None  # type: ignore[assignment]
_NATIVE_CODES = 1 << 22  # the kernel's codes are below this (a table entry per code)


def _exact_limits(w, rows: int, block: int, ratios: list) -> bool:
    """Whether the blocks' sums stay exact in fixed point (numpy and native alike): every F
    spec's ``beta² = num / den`` with ``num + den <= 8`` (numerators under 2**62, denominators
    under 2**31) and every block's total weight (``w``: ``None`` for unit weights) under 2**28.
    O(rows)."""
    import numpy as np

    return max((num + den for num, den in ratios), default=2) <= 8 and (
        w is None or int(np.add.reduceat(w, np.arange(0, rows, block)).max()) < 1 << 28)


def _native_takes(native: bool | None, t, p, w, codes: int) -> bool:
    """Whether :func:`block_stats` and :func:`block_means` hand int64 codes ``t``, ``p`` (``codes``
    of them: their largest plus one) and weights ``w`` to the native kernel: asked for (or not
    refused), present, and within its code and weight limits (codes from 0 below 2**22, weights
    at least 1; the callers check the F specs' and the blocks' totals). O(rows)."""
    return (native is not False and _native_sums is not None and codes <= _NATIVE_CODES
            and int(min(t.min(), p.min())) >= 0 and (w is None or int(w.min()) >= 1))


def block_means(t, p, w, block: int, spec: tuple, native: bool | None = None) -> list | None:
    """The mean over each block's elements of the element-averaged F sum ``spec`` (``(kind,
    beta)``): what ELM and BCubed (:attr:`~streameval.metrics.element.ELM.mean_f_spec`) read,
    ``fixed_mean(F sum, n)`` per block, to the bit; ``None`` where :func:`block_stats` declines.
    One native call (the means divided in Rust, as Python divides) when the extension has it,
    else :func:`block_stats` and a division per block. O(rows) natively.

    >>> import numpy as np
    >>> block_means(np.array([0, 0, 0, 1]), np.array([0, 0, 1, 1]), None, 2, ("elm", 1.0))
    [1.0, 0.0]
    """
    import numpy as np

    from .metrics.base import fixed_mean

    rows = len(t)
    if rows and rows % block == 0:
        kind, beta = spec
        from .stats import beta_ratio

        num, den = beta_ratio(beta)
        if _exact_limits(w, rows, block, [(num, den)]) and _native_takes(
                native, t, p, w, int(max(t.max(), p.max())) + 1):
            return _native_sums(np.ascontiguousarray(t, np.int64), np.ascontiguousarray(p, np.int64),
                                None if w is None else np.ascontiguousarray(w, np.int64), block,
                                [], [(kind == "elm", num, den)], True)[1][0]
    got = block_stats(t, p, w, block, [spec], ("n",), columns=True, native=native)
    if got is None:
        return None
    return [fixed_mean(f, n) for f, n in zip(got[1][spec], got[0]["n"])]


def _fixed_div(x, d):
    """``(x << 64) // d`` of int64 arrays (``0 <= x < 2**62``, ``0 < d < 2**31``) as three int64
    arrays ``(high, mid, low)`` with the quotient ``high·2**64 + mid·2**32 + low`` (``mid`` and
    ``low`` under ``2**32``): long division in base ``2**32``, exact."""
    import numpy as np

    high, r = np.divmod(x, d)
    mid, r = np.divmod(r << 32, d)
    low = (r << 32) // d
    return high, mid, low


def _stable_order(key):
    """``np.argsort(key, kind="stable")`` of a non-negative int64 array: each key packed with its
    index in one int64 and the packed keys sorted (numpy's plain sort of int64 is several times
    faster than its stable argsort); the stable argsort when they do not fit in 63 bits."""
    import numpy as np

    n = len(key)
    bits = max(1, (n - 1).bit_length())
    if not n or int(key.max()) >= (1 << (63 - bits)):
        return np.argsort(key, kind="stable")
    packed = (key << bits) | np.arange(n, dtype=np.int64)
    packed.sort()
    return packed & ((1 << bits) - 1)


def _groups(key):
    """The first index of each run of equal values of a sorted array, and each run's length."""
    import numpy as np

    first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    return first, np.diff(np.append(first, len(key)))


def block_stats(t, p, w, block: int, f_specs=(), names=_FAST_STATS, columns: bool = False,
                native: bool | None = None):
    """The sums ``names`` of the table of each block of ``block`` consecutive rows (int64 label
    codes ``t``, ``p`` at least 0, weights ``w`` or ``None``; a whole number of blocks), computed
    for all blocks at once in numpy, exactly (integers; fixed-point sums by long division, equal
    to the tables' own to the bit), with the element-averaged F sums of ``f_specs`` (``(kind,
    beta)`` pairs); ``None`` when a block's total weight or ``beta²`` is too large for the exact
    int64 arithmetic (the caller then builds the tables). O(rows log rows) in numpy, O(blocks) in
    Python. ``columns``: ``({name: [one value per block]}, {spec: [F sum per block]})`` instead
    of one object per block. ``native`` (default: when the extension has it): the same sums from
    the native kernel (``streameval._native.block_sums``, O(rows) in Rust, one call; codes under
    2**22),
    equal to the numpy ones to the bit (``native=False``: numpy, the reference; the differential
    test drives both).

    >>> import numpy as np
    >>> from streameval import Contingency
    >>> s = block_stats(np.array([0, 0, 1, 1]), np.array([5, 6, 6, 6]), None, 2, [("elm", 1.0)])
    >>> t = Contingency(); _ = t.track_f("elm"); t.update_many([1, 1], [6, 6])
    >>> [(x.n, x.k_pred, x.elm_p_sum == t.elm_p_sum, x.f_sums) for x in s][1]
    (2, 1, True, {('elm', 1.0): 36893488147419103232})
    """
    import numpy as np

    from .stats import beta_ratio

    rows = len(t)
    blocks = rows // block
    if not blocks or rows != blocks * block:
        return None
    specs = [(kind, float(beta), *beta_ratio(beta)) for kind, beta in f_specs]
    t = np.asarray(t, np.int64)
    p = np.asarray(p, np.int64)
    if w is not None:
        w = np.asarray(w, np.int64)
    if not _exact_limits(w, rows, block, [(num, den) for _, _, num, den in specs]):
        return None
    kt, kp = int(t.max()) + 1, int(p.max()) + 1
    if blocks * kt * kp >= 1 << 62:
        return None
    if _native_takes(native, t, p, w, max(kt, kp)):
        wanted = [k for k in _FAST_STATS if k in names]
        sums, fs = _native_sums(np.ascontiguousarray(t), np.ascontiguousarray(p),
                                None if w is None else np.ascontiguousarray(w), block, wanted,
                                [(kind == "elm", num, den) for kind, _, num, den in specs])
        f_sums = [((kind, beta), f) for (kind, beta, _, _), f in zip(specs, fs)]
        return _block_output(sums, f_sums, blocks, columns)
    # the cells: one key (block, true, pred) sorted; a cell's count is its run's total weight
    key = (np.arange(rows, dtype=np.int64) // block * kt + t) * kp + p
    if w is None:
        key.sort()
        first, n = _groups(key)
    else:
        order = _stable_order(key)
        key = key[order]
        first, _ = _groups(key)
        n = np.add.reduceat(w[order], first)
    ckey = key[first]
    cp = ckey % kp
    rkey = ckey // kp  # (block, true)
    cb = rkey // kt
    need = set(names)
    out: dict = {}

    def per_block(values, owner):
        """Per-block sums of ``values`` (``None``: counts) over entries sorted by block."""
        if values is None:
            return np.bincount(owner, minlength=blocks)
        return np.add.reduceat(values, np.searchsorted(owner, np.arange(blocks)))

    def fixed(x, d, owner):  # the per-block sums of (x << 64) // d, as Python ints
        parts = [per_block(q, owner).tolist() for q in _fixed_div(x, d)]
        return [(h << 64) + (m << 32) + lo for h, m, lo in zip(*parts)]

    def fixed_some(x, d, owner):  # the same where some blocks may have no entry (sum 0)
        cut = np.searchsorted(owner, np.arange(blocks + 1))
        parts = []
        for q in _fixed_div(x, d):  # exact: each part's running total stays under 2**62
            run = np.concatenate(([0], np.cumsum(q)))
            parts.append((run[cut[1:]] - run[cut[:-1]]).tolist())
        return [(h << 64) + (m << 32) + lo for h, m, lo in zip(*parts)]

    rfirst, rlen = _groups(rkey)  # the rows: runs of cells of one (block, true label)
    rb = cb[rfirst]
    a = np.add.reduceat(n, rfirst)
    a_cell = np.repeat(a, rlen)
    # the columns: each cell's column total, by a count over (block, pred) keys when they are
    # few, else by sorting the cells
    bkey = cb * kp + cp
    if blocks * kp <= 4 * rows:
        b_all = np.bincount(bkey, weights=n, minlength=blocks * kp).astype(np.int64)  # exact:
        b_cell = b_all[bkey]  # each total is under 2**28
        present = np.flatnonzero(b_all)
        b, colb = b_all[present], present // kp
        corder = None
    else:
        corder = _stable_order(bkey)
        kfirst, klen = _groups(bkey[corder])
        b = np.add.reduceat(n[corder], kfirst)
        b_cell = np.empty_like(n)
        b_cell[corder] = np.repeat(b, klen)
        colb = cb[corder][kfirst]
    if "n" in need:
        out["n"] = per_block(n, cb).tolist()
    if "cells" in need:
        out["cells"] = per_block(None, cb).tolist()
    if "k_true" in need:
        out["k_true"] = per_block(None, rb).tolist()
    if "k_pred" in need:
        out["k_pred"] = per_block(None, colb).tolist()
    if "sum_cell_sq" in need:
        out["sum_cell_sq"] = per_block(n * n, cb).tolist()
    if "sum_row_sq" in need:
        out["sum_row_sq"] = per_block(a * a, rb).tolist()
    if "sum_col_sq" in need:
        out["sum_col_sq"] = per_block(b * b, colb).tolist()
    if "true_singletons" in need:
        out["true_singletons"] = per_block((a == 1).astype(np.int64), rb).tolist()
    if "pred_singletons" in need:
        out["pred_singletons"] = per_block((b == 1).astype(np.int64), colb).tolist()
    if "both_singletons" in need:
        out["both_singletons"] = per_block(((a_cell == 1) & (b_cell == 1)).astype(np.int64),
                                           cb).tolist()
    if need & {"sum_row_max", "bcubed_r_sum", "elm_r_sum"}:
        rsq = np.add.reduceat(n * n, rfirst)
        out["sum_row_max"] = per_block(np.maximum.reduceat(n, rfirst), rb).tolist()
        out["bcubed_r_sum"] = fixed(rsq, a, rb)
        # elm_term: (sq - size) / (size - 1), and 1 for a singleton cluster
        out["elm_r_sum"] = fixed(np.where(a > 1, rsq - a, 1), np.maximum(a - 1, 1), rb)
    if need & {"sum_col_max", "bcubed_p_sum", "elm_p_sum"}:
        if corder is None:
            corder = _stable_order(bkey)
            kfirst, _ = _groups(bkey[corder])
        kn = n[corder]
        csq = np.add.reduceat(kn * kn, kfirst)
        out["sum_col_max"] = per_block(np.maximum.reduceat(kn, kfirst), colb).tolist()
        out["bcubed_p_sum"] = fixed(csq, b, colb)
        out["elm_p_sum"] = fixed(np.where(b > 1, csq - b, 1), np.maximum(b - 1, 1), colb)
    f_sums = []
    for kind, beta, num, den in specs:
        if kind == "elm":
            d = num * (a_cell - 1) + den * (b_cell - 1)
            # a cell of a singleton row and column (d = 0) adds (n << 64) // 1, one of a single
            # element otherwise 0: only the cells of 2 elements or more need a division
            alone = np.bincount(cb[d == 0], minlength=blocks).tolist()
            more = np.flatnonzero(n > 1)
            divided = fixed_some((num + den) * n[more] * (n[more] - 1), d[more], cb[more])
            f_sums.append(((kind, beta), [(k << 64) + q for k, q in zip(alone, divided)]))
        else:
            f_sums.append(((kind, beta), fixed((num + den) * n * n, num * a_cell + den * b_cell,
                                                cb)))
    return _block_output({k: v for k, v in out.items() if k in need}, f_sums, blocks, columns)


def _block_output(out: dict, f_sums: list, blocks: int, columns: bool):
    """:func:`block_stats`' answer from its columns ``out`` (the sums asked for) and ``f_sums``
    (``[(spec, [F sum per block])]``)."""
    if columns:
        return out, dict(f_sums)
    stats = []
    keys = list(out)
    cols = [out[k] for k in keys]
    for k in range(blocks):
        st = _BlockStats()
        for name, column in zip(keys, cols):
            setattr(st, name, column[k])
        st.f_sums = {spec: sums[k] for spec, sums in f_sums}
        stats.append(st)
    return stats


class BlockDrops:
    """The watched ``metric`` over consecutive blocks of ``block`` elements, each block's value
    fed to ``detector`` (default :class:`Cusum`); the element counts at which drops were flagged.

    ``gate`` (optional): a callable; a drop the detector flags is kept only if it returns true
    (the Monitor's interval check). Elements come one at a time (:meth:`update`) or in bulk
    (:meth:`update_many`, whole blocks read at once); both give the same block values, bit for bit.

    ``keep``: how many of the latest block values :attr:`values` holds (``None``: all, one float
    per block; a long-running monitor passes a bound).

    Cost: O(1) amortised per element (one block-table update; a block read once), plus the
    detector's update per block. Memory O(block) plus one float per kept block value.

    >>> from streameval import ELM
    >>> drops = BlockDrops(ELM(), block=2, detector=Cusum(reference=3, h=2.0))
    >>> drops.update_many(["a"] * 6 + ["a", "b"] * 2, ["x"] * 10)  # flagged at the 4th block
    [8]
    >>> drops.values
    [1.0, 1.0, 1.0, 0.0, 0.0]
    """

    def __init__(self, metric, block: int = 25, detector=None, gate=None, keep: int | None = None):
        if not isinstance(block, int) or isinstance(block, bool) or block < 1:
            raise ValueError(f"block must be an int >= 1, got {block!r}")
        self.metric = metric
        self.block = block
        self.detector = Cusum() if detector is None else detector
        self.detector.bind(block, metric.bigger_is_better)
        self.gate = gate
        self.n = 0  # elements seen
        self.drops: list = []  # element counts at which a drop was flagged
        # the metric over each finished block (the latest ``keep``)
        self.values: Any = [] if keep is None else deque(maxlen=keep)
        self.last_drop_time: float | None = None  # Unix time of the last flag
        self._fast: bool | None = None  # whole blocks of integer codes read by block_stats
        self._names: tuple = ()  # the sums of block_stats the metric's value reads
        self._new_block()

    def _new_block(self) -> None:
        from .evaluator import Evaluator

        self._table = Evaluator({"m": self.metric.clone()})
        self._len = 0

    def _end_block(self) -> bool:
        ev = self._table
        value = ev.get()["m"]
        # empty the block's table by reverting its cells (an exact state: update then revert
        # restores it bit for bit), cheaper than building a new evaluator: O(cells of the block)
        for t, p, c in ev.table.items():
            ev.revert(t, p, c)
        self._len = 0
        return self._take_value(value)

    def _take_value(self, value: float) -> bool:
        """A finished block's value: kept, and fed to the detector (at :attr:`n`)."""
        self.values.append(value)
        if self.detector.update(value) and (self.gate is None or self.gate()):
            self.drops.append(self.n)
            self.last_drop_time = time.time()
            return True
        return False

    def _take_values(self, values: list) -> None:
        """:meth:`_take_value` of each of ``values``, the blocks ending at :attr:`n` plus one,
        two, ... blocks: in one :meth:`Cusum.update_many` call when the detector has one and no
        gate reads the state between blocks (the same values, drops and state)."""
        many = getattr(self.detector, "update_many", None)
        if many is None or self.gate is not None:
            for value in values:
                self.n += self.block
                self._take_value(value)
            return
        flagged = many(values)
        base, block = self.n, self.block
        self.values.extend(values)
        self.n += block * len(values)
        if flagged:
            self.drops.extend(base + block * (k + 1) for k in flagged)
            self.last_drop_time = time.time()

    def _block_values(self, t, p, w) -> list | None:
        """The metric over each whole block of integer-coded rows, from :func:`block_stats`
        (all blocks at once); ``None`` when they must go through a table (labels not integer
        arrays, weights too large, a metric reading another statistic: then never again)."""
        if self._fast is False:
            return None
        import numpy as np

        from .metrics.quantities import Quantities

        arrays = [x for x in (t, p, w) if x is not None]
        if not all(isinstance(x, np.ndarray) and x.dtype.kind in "iu" for x in arrays):
            return None
        if len(t) and (int(min(t.min(), p.min())) < 0 or int(max(t.max(), p.max())) >= 1 << 62):
            return None  # codes are 0 to 2**62 (an unsigned label past int64 would wrap)
        if self.metric.on_demand:  # reads the table itself
            self._fast = False
            return None
        value, specs = self.metric.value, self.metric.f_specs
        spec = getattr(self.metric, "mean_f_spec", None)
        if spec is not None:  # its value is fixed_mean(its F sum, n): no object per block
            return block_means(t, p, w, self.block, spec)
        while True:  # the sums the metric reads: found on its first blocks, then only those
            stats = block_stats(t, p, w, self.block, specs, self._names)
            if stats is None:
                return None
            _BlockStats.missed.clear()
            try:
                return [value(Quantities(st)) for st in stats]
            except (AttributeError, KeyError):
                missed = _BlockStats.missed - set(self._names)
                if not missed:
                    self._fast = False  # a sum block_stats does not give
                    return None
                self._names = (*self._names, *missed)

    @property
    def table(self):
        """The table of the unfinished block's elements."""
        return self._table.table

    def update(self, y_true, y_pred, w=1) -> bool:
        """Take one (validated) element; true when it completes a block flagged as a drop. O(1)
        amortised: one block-table update, and once per block the metric's reading and the
        detector's update."""
        self._table.update(y_true, y_pred, w)
        self._len += 1
        self.n += 1
        if self._len == self.block:
            return self._end_block()
        return False

    def update_many(self, y_true, y_pred, w=None) -> list:
        """Take many (validated) elements; returns the element counts of the drops flagged.

        Whole blocks of integer label arrays (codes, as ``watch`` passes them) are read all at
        once (:func:`block_stats`: the block tables' sums, exact, in numpy; the metric's formula
        per block), the rest through the block's table; the values are the same to the bit.
        O(elements) in numpy plus O(1) per block (its formula and the detector's update)."""
        n = len(y_true)
        first = len(self.drops)
        start = 0
        bulk = True  # tried once per call: a refusal (labels not codes) holds for the whole input
        while start < n:
            whole = (n - start) // self.block * self.block
            if bulk and not self._len and whole:
                bulk = False
                cut = slice(start, start + whole)
                values = self._block_values(y_true[cut], y_pred[cut],
                                            None if w is None else w[cut])
                if values is not None:
                    self._take_values(values)
                    start += whole
                    continue
            stop = min(n, start + self.block - self._len)
            self._table.update_many(y_true[start:stop], y_pred[start:stop],
                                    None if w is None else w[start:stop])
            self.n += stop - start
            self._len += stop - start
            start = stop
            if self._len == self.block:
                self._end_block()
        return self.drops[first:]

    def interval(self, blocks: int, z: float = 1.96) -> tuple | None:
        """``(mean, low, high)``: the mean of the last ``blocks`` block values (NaN ones left out)
        and its normal-approximation interval ``mean ± z·s/√m`` (``s`` their standard deviation,
        ``m`` their number; blocks are nearly independent samples, so this is the sampling-error
        band of the windowed metric, as NannyML draws one); ``None`` under two values. O(blocks).

        >>> from streameval import ELM
        >>> drops = BlockDrops(ELM(), block=2, detector=Cusum(reference=2, h=9.0))
        >>> _ = drops.update_many(["a", "a", "a", "b", "a", "a", "a", "b"], ["x"] * 8)
        >>> drops.values, drops.interval(4)
        ([1.0, 0.0, 1.0, 0.0], (0.5, -0.0658..., 1.0658...))
        """
        recent = [v for v in list(self.values)[-blocks:] if v == v]
        m = len(recent)
        if m < 2:
            return None
        mean, var = mean_variance(recent)
        half = z * math.sqrt(var / m)  # the standard error of the mean
        return mean, mean - half, mean + half

    def flag(self, recent: int) -> bool:
        """A drop was flagged within the last ``recent`` elements. O(1)."""
        return bool(self.drops) and self.n - self.drops[-1] < recent

    def __repr__(self) -> str:
        return (f"BlockDrops({type(self.metric).__name__}, block={self.block}, "
                f"detector={self.detector!r}, n={self.n}, drops={len(self.drops)})")
