"""The online Poisson bootstrap: confidence intervals that stay current while the stream runs.

A :class:`BootstrapEvaluator` keeps the observed table and ``B`` replicas. In replica ``r`` a
resampling *unit* ``u`` (a stream, a document, a source batch: a block holding whole clusters) has
the multiplicity ``k ~ Poisson(1)``, a deterministic function of ``(seed, u, r)`` drawn from a
counter-based generator (:func:`poisson_multiplicities`): splitmix64 of the seed, a stable 64-bit
hash of the unit (BLAKE2b of a canonical encoding, not Python's salted ``hash``) and the replica
index, turned into a Poisson(1) draw by inversion. An element of unit ``u`` enters replica ``r`` as
``k`` *disjoint copies* — never as a weight ``k``. Disjoint copies add their statistics, so a
replica's sufficient statistics are ``Σ_u k_{u,r} · S_u`` with ``S_u`` the statistics of unit
``u``'s own table: the evaluator keeps each unit's table once, and before a read adds ``k_{u,r}``
times the change of every touched unit's statistics to every replica's sums (one multiply-add over
the replicas) — bit for bit the statistics of the table of ``k`` tagged copies
(``tests/test_compare.py``), at the cost of two table updates per element whatever ``B``.

Because the multiplicity depends only on ``(seed, u, r)``:

- the same element always gets the same copies, so :meth:`~BootstrapEvaluator.revert` undoes
  :meth:`~BootstrapEvaluator.update` exactly and windows work;
- shards that see different parts of the stream (even different elements of one unit) give the same
  replicas as one evaluator that saw everything: :meth:`~BootstrapEvaluator.merge` is exact;
- replica ``r`` equals, bit for bit, the batch computation of the same resample
  (:func:`streameval.compare` with ``resampling="poisson"`` and the same seed).

The interval is :func:`streameval.compare`'s, by the same names and the same functions
(:func:`~streameval.intervals.interval_bounds`), from the same replicas (``interval=``):
``"adaptive"`` (default: the hybrid interval where one live unit holds more than 15% of a
labelling's within-cluster pairs, else the studentized one; ``compare`` applies its subsampled
interval there past 49 units, which needs ``m``-out-of-``U`` resamples that replicas of every unit
do not give, so the streaming one stays hybrid), ``"studentized"`` (the
bootstrap-t, each replica divided by its own linearization standard error,
:mod:`streameval.linearization`), ``"hybrid"`` (the union of the percentile interval and the
bootstrap-t centred at the replicas' mean), ``"percentile"`` or ``"bca"`` (the acceleration from
the leave-one-unit-out values: the observed sums minus one unit's). The default is also the
choice of a streaming calibration on ``compare``'s processes (``docs/benchmarks/bootstrap.md``):
the studentized interval where units are light-tailed, the closest to the nominal coverage (tied
with hybrid) where they are heavy-tailed. The share adaptive tests is kept current from the
units' changes (:meth:`~BootstrapEvaluator.pairs_share`: running totals and lazy max-heaps), not
found by a scan. :meth:`~BootstrapEvaluator.warnings` are ``compare``'s few-units and
dominant-unit warnings on the live units.

Cost per element: an update of the observed table and one of the unit's table, plus O(B) once per
new unit to draw its multiplicities. A read costs O(B · fields) per unit touched since the last
read (the multiply-adds) and ``B`` O(1) reads of every metric; the studentized interval adds one
gradient per replica (two reads per field a metric reads) and one BLAS product over the live
units (the hybrid and adaptive intervals too), BCa one read per live unit (at most 1,000 groups). Memory: one table per live unit
(dropped with its last element) and ``B × fields`` integers.

>>> from streameval import ELM
>>> bs = BootstrapEvaluator([ELM()], n_replicas=50, seed=7)
>>> for doc in range(20):
...     for t, p in [(0, 0), (0, 0), (1, 0), (1, 1)]:
...         bs.update((doc, t), (doc, p), unit=doc)
>>> value, low, high = bs.get()["ELM"]
>>> round(value, 4), low <= value <= high
(0.3333, True)
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import math
import numbers
from typing import Any, ClassVar

import numpy as np

from . import intervals as _iv
from ._validate import check_same_settings, check_weight
from .contingency import Contingency
from .detect import one_blas_thread
from .errors import UnknownElementError
from .evaluator import Evaluator
from .intervals import STUDENTIZED_METHODS, Interval, percentile_interval
from .labels import same_label
from .linearization import standard_errors, unit_fields
from .metrics.base import Metric
from .stats import STAT_NAMES, ContingencyStats
from .sync import Guarded, concurrent_use
from .units import DOMINANT_SHARE, FEW_UNITS, JACKKNIFE_GROUPS, UnitStats, pairs_share

__all__ = [
    "BootstrapEvaluator",
    "DEFAULT_INTERVAL",
    "JACKKNIFE_GROUPS",
    "poisson_multiplicities",
    "poisson_draws",
    "unit_hash",
    "jackknife_groups",
    "seed64",
    "percentile_interval",
    "Interval",
]

_M64 = (1 << 64) - 1

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)
# Poisson(1) cumulative probabilities P(K <= k), k = 0..20 (P(K > 20) < 1e-19: below 2**-53)
_CDF = np.cumsum([math.exp(-1) / math.factorial(k) for k in range(21)])


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _C1
    z = (z ^ (z >> np.uint64(27))) * _C2
    return z ^ (z >> np.uint64(31))


def _canonical(u) -> bytes:
    """A stable byte encoding of a unit key; keys equal in Python (``1 == 1.0 == True``) agree."""
    if isinstance(u, np.generic):
        u = u.item()
    if isinstance(u, bool):
        u = int(u)
    if isinstance(u, float) and u.is_integer():
        u = int(u)
    if isinstance(u, int):
        return b"i" + str(u).encode()
    if isinstance(u, str):
        return b"s" + u.encode("utf-8", "surrogatepass")
    if isinstance(u, float):
        return b"f" + repr(u).encode()
    if isinstance(u, bytes):
        return b"b" + u
    if isinstance(u, tuple):
        parts = [_canonical(x) for x in u]
        return b"t" + str(len(parts)).encode() + b"(" + b"".join(
            str(len(p)).encode() + b":" + p for p in parts) + b")"
    if isinstance(u, numbers.Integral):
        return b"i" + str(int(u)).encode()
    raise TypeError(
        f"a unit must be a str, int, float, bytes or a tuple of these, got {type(u).__name__}: {u!r}"
    )


def unit_hash(unit) -> int:
    """A stable 64-bit hash of a unit key (BLAKE2b of a canonical encoding): the same on every run,
    machine and process, unlike Python's ``hash`` of a str: the 8-byte BLAKE2b digest
    (``digest_size=8``) of the encoding, read as a little-endian integer. O(size of the key).

    >>> unit_hash("stream-1") == unit_hash("stream-1"), unit_hash(1) == unit_hash(1.0)
    (True, True)
    >>> unit_hash([1])
    Traceback (most recent call last):
    ...
    TypeError: a unit must be a str, int, float, bytes or a tuple of these, got list: [1]
    """
    if isinstance(unit, float) and unit != unit:
        raise ValueError("a unit cannot be NaN")
    return int.from_bytes(hashlib.blake2b(_canonical(unit), digest_size=8).digest(), "little")


def jackknife_groups(hashes) -> tuple[np.ndarray, int]:
    """``(groups, G)``: the group of each unit in BCa's leave-one-group-out jackknife, given the
    units' :func:`unit_hash` values; the one rule :func:`streameval.compare` and
    :class:`BootstrapEvaluator` share.

    The units are ranked by their hashes (a function of the unit keys alone: not of the order they
    came in, of a list or a numpy array, nor of ``PYTHONHASHSEED``), and the unit of rank ``i`` goes
    to group ``i mod G`` with ``G = min(U, JACKKNIFE_GROUPS)``: every unit its own group up to
    1,000 units, groups of ``⌊U/G⌋`` or ``⌈U/G⌉`` units beyond. Group ``j`` is therefore the same
    set of unit keys, at the same index, whatever path built the table. O(U log U).

    >>> keys = ["b", "a", "c"]
    >>> groups, g = jackknife_groups([unit_hash(u) for u in keys])
    >>> g, sorted(groups.tolist())
    (3, [0, 1, 2])
    >>> again, _ = jackknife_groups([unit_hash(u) for u in reversed(keys)])  # each key keeps its group
    >>> dict(zip(keys, groups.tolist())) == dict(zip(reversed(keys), again.tolist()))
    True
    """
    h = np.fromiter(hashes, dtype=np.uint64)
    n = len(h)
    g = min(n, JACKKNIFE_GROUPS)
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(h, kind="stable")] = np.arange(n, dtype=np.int64)
    return (rank % g if g else rank), g


def seed64(seed) -> int:
    """The generator's 64-bit key of ``seed`` (an int >= 0): ``seed mod 2**64``. O(1).

    >>> seed64(3), seed64(2**64 + 3)
    (3, 3)
    >>> seed64(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an int >= 0, got -1
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    return int(seed) & _M64


def poisson_draws(seed: int, hashes, n_replicas: int, start: int = 0) -> np.ndarray:
    """``(len(hashes), B)`` Poisson(1) multiplicities of the units with these 64-bit hashes, for the
    replicas ``start .. start + B - 1`` (``B = n_replicas``).

    ``z = mix(mix(seed ^ mix(h)) + (r + 1)·φ)`` with splitmix64's finaliser ``mix`` and its
    increment ``φ = 0x9E3779B97F4A7C15`` (all mod 2**64); ``u = (z >> 11) / 2**53``; ``k`` is the
    smallest integer with ``u < P(K <= k)``. ``seed`` is :func:`seed64`'s key, ``hashes`` are
    :func:`unit_hash` values (computed once by a caller that draws many blocks of replicas).
    O(U · B), vectorised.

    >>> h = [unit_hash("a"), unit_hash("b")]
    >>> full = poisson_draws(seed64(3), h, 10)
    >>> bool((poisson_draws(seed64(3), h, 4, start=6) == full[:, 6:]).all())
    True
    >>> bool((full == poisson_multiplicities(["a", "b"], 10, seed=3)).all())
    True
    """
    with np.errstate(over="ignore"):
        h = np.asarray(hashes, dtype=np.uint64).reshape(-1)
        base = _mix(np.uint64(seed) ^ _mix(h))
        r = np.arange(start + 1, start + n_replicas + 1, dtype=np.uint64)
        z = _mix(base[:, None] + r[None, :] * _GOLDEN)
    u = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return np.searchsorted(_CDF, u, side="right").astype(np.int64)


def _draws(seed: int, h: int, n_replicas: int) -> np.ndarray:
    """The ``n_replicas`` multiplicities of one unit (a row of :func:`poisson_draws`)."""
    return poisson_draws(seed, [h], n_replicas)[0]


def poisson_multiplicities(units, n_replicas: int, seed: int = 0) -> np.ndarray:
    """``(U, B)`` int64 Poisson(1) multiplicities of each unit in each replica, from ``(seed, unit, r)``.

    The same numbers :class:`BootstrapEvaluator` uses: a function of the seed, the unit key and the
    replica index only. Cost O(U · B).

    >>> m = poisson_multiplicities(["a", "b", "a"], 1000, seed=3)
    >>> m.shape, bool((m[0] == m[2]).all()), round(float(m.mean()), 1)
    ((3, 1000), True, 1.0)
    """
    if isinstance(n_replicas, bool) or not isinstance(n_replicas, numbers.Integral) or n_replicas < 1:
        raise ValueError(f"n_replicas must be an int >= 1, got {n_replicas!r}")
    s = seed64(seed)
    hashes = [unit_hash(u) for u in units]
    if not hashes:
        return np.zeros((0, int(n_replicas)), dtype=np.int64)
    return poisson_draws(s, hashes, int(n_replicas))


DEFAULT_INTERVAL = "adaptive"
"""The interval :class:`BootstrapEvaluator` reports unless told otherwise: :func:`streameval.compare`'s
default, and the streaming calibration's choice (``docs/benchmarks/bootstrap.md``)."""
_DOMINANT_NOTE = ("(docs/benchmarks/bootstrap.md, 100 and 300 units) 95% adaptive intervals (the "
                  "hybrid one there) covered the population value 88-92% for ELM and BCubed, "
                  "84-85% for NMI and 71-81% for ARI, missing mostly on one side (studentized: "
                  "86-90%, 84-85%, 63-74%), and the metric's mean over test sets of this size "
                  "90-96%")
_I_N, _I_ROW, _I_COL = (STAT_NAMES.index(f) for f in ("n", "sum_row_sq", "sum_col_sq"))


class _Dominance:
    """The largest share of a labelling's within-cluster pairs held by one live unit, kept current
    from the units' synced statistics (what :func:`~streameval.units.unit_diagnostics` computes by
    a scan of every unit).

    A unit's pairs on a side are ``(Σ size² − n) / 2`` of its own table (doubled here: the share
    is a ratio); the total over units is kept as a running sum, and the largest by a max-heap per
    side with lazy deletion: a unit whose statistics changed pushes its new count (the old entry
    stays and is dropped when it reaches the top and no longer matches the unit's count).
    :meth:`note` runs when a unit's change is added to the replicas (at the read after its
    updates), so an update costs nothing more; a read pays O(log U) per unit touched since the
    last read (beside that unit's O(B) multiply-add) and amortised O(log U) to drop stale tops.
    The heaps are rebuilt from the live units when they hold more than twice as many entries as
    there are live units (amortised O(1) per push). An exact max under increases *and* decreases
    in O(1) per change would sort in linear time, so O(log U) per touched unit is the price."""

    __slots__ = ("heaps", "totals", "_seq", "_units")

    def __init__(self, units: dict):
        self._units = units
        self.heaps: tuple[list, list] = ([], [])
        self.totals = [0, 0]
        self._seq = 0

    @staticmethod
    def _pairs(synced: list, side: int) -> int:
        return synced[_I_ROW if side == 0 else _I_COL] - synced[_I_N]

    def note(self, entry: _Unit, before: list, after: list) -> None:
        """A unit's statistics went from ``before`` to ``after``. O(log U)."""
        for side in (0, 1):
            old, new = self._pairs(before, side), self._pairs(after, side)
            if old != new:
                self.totals[side] += new - old
                heap = self.heaps[side]
                if len(heap) > 2 * len(self._units) + 64:
                    self._rebuild(side)
                self._seq += 1
                heapq.heappush(heap, (-new, self._seq, entry))

    def _rebuild(self, side: int) -> None:
        # fresh sequence numbers (never reused: the other side's heap holds older ones, and two
        # entries must never compare their units)
        base = self._seq
        heap = [(-self._pairs(e.synced, side), base + i, e)
                for i, e in enumerate(self._units.values(), 1)]
        self._seq = base + len(heap)
        heapq.heapify(heap)
        self.heaps[side][:] = heap

    def share(self) -> float:
        """``max_u pairs_u / Σ_u pairs_u`` over the true and the predicted side (0 without a pair):
        the same float as :func:`~streameval.units.unit_diagnostics`' ``pairs_share``.
        Amortised O(1)."""
        out = 0.0
        for side in (0, 1):
            heap, total = self.heaps[side], self.totals[side]
            while heap and (-heap[0][0] != self._pairs(heap[0][2].synced, side)
                            or self._units.get(heap[0][2].key) is not heap[0][2]):
                heapq.heappop(heap)
            if heap:
                out = max(out, pairs_share(-heap[0][0], total))
        return out


def _check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


class _Unit:
    """One live unit: its own table, its stable hash, its replica multiplicities, and the
    statistics last added to the replicas' sums (``synced``)."""

    __slots__ = ("table", "key", "h", "k", "nz", "synced")

    def __init__(self, table: Contingency, key, h: int, k: np.ndarray | None, width: int):
        self.table = table
        self.key = key
        self.h = h  # unit_hash of the key: the multiplicities' input and the units' read order
        self.k = k  # drawn at the first read that needs it (many units at once)
        self.nz = None if k is None else np.flatnonzero(k)
        self.synced = [0] * width


def _stat_values(table) -> list:
    """Every running sum of ``table`` in ``STAT_NAMES`` order, then its tracked F sums."""
    read = getattr(table, "stat_values", None)
    vals = list(read()) if read is not None else [getattr(table, n) for n in STAT_NAMES]
    return vals + list(table.f_sums.values())


class _MetricKind:
    """A metric's kind and parameters, compared as a merge compares them (``ELM(beta=2)`` and
    ``ELM(beta=2.0)`` alike), shown by its name."""

    __slots__ = ("cls", "params", "name")

    def __init__(self, metric: Metric):
        self.cls, self.params, self.name = type(metric), metric.params, metric.name

    def __eq__(self, other) -> bool:
        return (isinstance(other, _MetricKind) and self.cls is other.cls
                and self.params == other.params)

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return self.name


class BootstrapEvaluator(Guarded):
    """Metrics with online Poisson-bootstrap confidence intervals over resampling units.

    Parameters
    ----------
    metrics : what :class:`~streameval.Evaluator` accepts (a list or ``{name: metric}`` of fresh
        O(1) metrics; ``None``: every O(1) metric).
    n_replicas : ``B``, the number of bootstrap replicas.
    seed : an int >= 0; with the unit keys it fixes every multiplicity.
    confidence : the coverage of the intervals :meth:`get` reports.
    interval : the interval :meth:`get` reports: ``"adaptive"`` (default, as
        :func:`streameval.compare` but hybrid where ``compare`` subsamples), ``"studentized"``,
        ``"hybrid"``, ``"percentile"`` or ``"bca"`` (:meth:`intervals`; any of them can be read
        from the same replicas).

    Elements arrive with their unit (``update(y_true, y_pred, w=1, unit=...)``); a unit must hold
    whole true and predicted clusters: a label seen in one unit and then given in another is refused
    (``ValueError``, nothing changed), so no cluster is ever cut.

    How the replicas are kept. Replica ``r`` holds ``k_{u,r}`` disjoint copies of every unit ``u``,
    so its sufficient statistics are ``Σ_u k_{u,r} · S_u`` with ``S_u`` the statistics of unit
    ``u``'s own table. The evaluator keeps one table per live unit (and the observed table); an
    update touches the observed table and its unit's table, and marks the unit. Before a read, each
    marked unit's change of statistics ``S_u − S_u(last read)`` is multiplied by the unit's ``B``
    multiplicities and added to the ``B`` replica sums (one vectorised multiply-add over the
    replicas, exact Python integers). The replicas are therefore exactly the batch computation of
    the same resample (:func:`streameval.compare` with ``resampling="poisson"``), and revert and
    merge are exact because the unit tables are.

    Cost: :meth:`update` and :meth:`revert` are two table updates and a few dict operations (plus
    O(B) once per new unit to draw its multiplicities), whatever ``B``; :meth:`get` is
    O(units touched since the last read · B · fields) for the multiply-adds, then ``B`` reads of
    every metric (O(1) each) and a sort of the ``B`` values, plus the method's own work
    (:meth:`standard_errors`, :meth:`jackknife`); :meth:`merge` is O(cells of both).
    Memory: one small table per live unit and ``B × fields`` integers.

    >>> from streameval import BCubed
    >>> a = BootstrapEvaluator([BCubed()], n_replicas=20, seed=1)
    >>> a.update("x", "p", unit="u1"); a.update("x", "q", unit="u1")
    >>> a.revert("x", "q", unit="u1")
    >>> a.get()["BCubed"]
    Interval(value=1.0, low=1.0, high=1.0)
    >>> a.update("x", "p")
    Traceback (most recent call last):
    ...
    ValueError: BootstrapEvaluator.update needs the element's unit: update(y_true, y_pred, unit=...)
    """

    seed: int
    n_replicas: int
    confidence: float
    evaluator: Evaluator
    _f_keys: list[tuple[str, float]]
    _metrics: list[tuple[str, Metric]]
    _units: dict[Any, _Unit]
    _dominance: _Dominance  # the largest unit's share of the pairs, kept current
    _dirty: set
    _homes: tuple[dict, dict]  # label -> [unit, elements] for the true and the predicted side
    _sums: np.ndarray  # (B, fields) object array of the replicas' exact sums
    _cache: tuple | None  # (UnitStats of the live units, multiplicities, their hashes), until the next change
    interval_method: str

    def __init__(self, metrics=None, n_replicas: int = 200, seed: int = 0, confidence: float = 0.95,
                 interval: str = DEFAULT_INTERVAL):
        if isinstance(n_replicas, bool) or not isinstance(n_replicas, numbers.Integral) or n_replicas < 1:
            raise ValueError(f"n_replicas must be an int >= 1, got {n_replicas!r}")
        self.seed = seed64(seed)
        self.n_replicas = int(n_replicas)
        self.confidence = _check_confidence(confidence)
        self.interval_method = _iv.check_interval_method(interval)
        self._cache = None
        self.evaluator = Evaluator(metrics)
        for name, m in self.evaluator.metrics.items():
            if m.on_demand:
                raise ValueError(f"{name} is not an O(1) metric; the bootstrap replicas need O(1) reads")
        self._f_keys = list(self.evaluator.table.f_sums)
        self._metrics = list(self.evaluator.metrics.items())
        self._units = {}
        self._dominance = _Dominance(self._units)
        self._dirty = set()
        self._homes = ({}, {})
        self._sums = np.zeros((self.n_replicas, len(STAT_NAMES) + len(self._f_keys)), dtype=object)
        self._init_guard()

    def _new_unit(self, unit, k=None, h=None) -> _Unit:
        t = Contingency()
        for kind, beta in self._f_keys:
            t.track_f(kind, beta)
        return _Unit(t, unit, unit_hash(unit) if h is None else h, k, self._sums.shape[1])

    # -------------------------------------------------------------- multiplicities
    def multiplicities(self, unit) -> np.ndarray:
        """The unit's ``B`` multiplicities (one per replica). O(B)."""
        return _draws(self.seed, unit_hash(unit), self.n_replicas)

    def _entry(self, unit) -> _Unit | None:
        if unit is None:
            raise ValueError(
                "BootstrapEvaluator.update needs the element's unit: update(y_true, y_pred, unit=...)"
            )
        try:
            entry = self._units.get(unit)
        except TypeError:
            entry = None
        if entry is None:
            unit_hash(unit)  # a unit of an unsupported type raises here
        return entry

    def _check_home(self, y_true, y_pred, unit, leaving=None) -> None:
        """Refuse a label already living in another unit (raises before anything changes);
        ``leaving``: an element ``(y_true, y_pred, w, unit)`` reverted first (a window's expiry)."""
        for side, label, what in ((0, y_true, "true"), (1, y_pred, "predicted")):
            home = self._homes[side].get(label)
            if (home is not None and leaving is not None and same_label(home[0], leaving[3])
                    and home[1] == leaving[2] and same_label(leaving[side], label)):
                home = None  # its only elements leave first
            if home is not None and not same_label(home[0], unit):  # never broadcast
                raise ValueError(
                    f"{what} label {label!r} is in unit {home[0]!r} and now given in unit {unit!r}: "
                    "a unit must hold whole clusters (a cluster across units would be cut in the "
                    "replicas); use a unit that holds both, e.g. the connected component"
                )

    def check_update(self, y_true, y_pred, w=1, *, unit=None, leaving=None) -> None:
        """Raise what :meth:`update` with these arguments would raise for its weight, its unit
        and the units' whole clusters, changing nothing (the labels themselves are checked by the
        table, which refuses them before any change); ``leaving``: an element ``(y_true, y_pred,
        w, unit)`` held here that is reverted first (a count window's oldest, expiring on this
        update). What :class:`~streameval.Monitor` checks before it changes its tables. O(1).

        >>> bs = BootstrapEvaluator([], n_replicas=4)
        >>> bs.update("e", "c", unit="d1")
        >>> bs.check_update("e", "c", unit="d2", leaving=("e", "c", 1, "d1"))  # "e" leaves d1 first
        >>> bs.check_update("e", "k", unit="d2")
        Traceback (most recent call last):
        ...
        ValueError: true label 'e' is in unit 'd1' and now given in unit 'd2': ...
        """
        check_weight(w)
        self._entry(unit)  # the unit is required, of a type unit_hash encodes
        with contextlib.suppress(TypeError):  # an unhashable label: the table names it
            self._check_home(y_true, y_pred, unit, leaving)

    # -------------------------------------------------------------- River's protocol
    def update(self, y_true, y_pred, w=1, *, unit=None) -> None:
        """Add ``w`` elements of ``unit``: to the observed table and to the unit's table (the
        replicas follow at the next read: class docstring). Bad input raises before anything
        changes; a call made while another is changing this object (another thread) raises
        :class:`~streameval.errors.ConcurrentUseError`. Cost: two table updates and a few dict
        operations, whatever ``B`` (plus O(B) once for a new unit's multiplicities)."""
        self._guarded("update", self._update, y_true, y_pred, w, unit)

    def _guarded(self, method: str, fn, *args) -> None:
        """``fn(*args)`` under the guard (:class:`~streameval.sync.Guarded`)."""
        if not self._guard.acquire(False):
            concurrent_use(self, method)
        try:
            fn(*args)
        finally:
            self._guard.release()

    def _update(self, y_true, y_pred, w, unit) -> None:
        w = check_weight(w)
        try:
            entry = self._units.get(unit)
            th, ph = self._homes
            ht, hp = th.get(y_true), ph.get(y_pred)
        except TypeError:  # an unhashable unit or label: checked and named below
            entry = ht = hp = None
        h = None
        if (entry is None or (ht is not None and not same_label(ht[0], unit))
                or (hp is not None and not same_label(hp[0], unit))):
            if entry is None:
                if unit is None:
                    self._entry(unit)  # raises: the unit is required
                h = unit_hash(unit)  # an unsupported unit raises here, before anything changes
            try:
                self._check_home(y_true, y_pred, unit)
            except TypeError:  # an unhashable label: the evaluator names the problem
                self.evaluator.update(y_true, y_pred, w)
                raise  # pragma: no cover - the line above raises
        self.evaluator.update(y_true, y_pred, w)  # validates the labels first
        self._cache = None
        if entry is None:
            entry = self._units[unit] = self._new_unit(unit, h=h)
        entry.table.update(y_true, y_pred, w)
        self._dirty.add(unit)
        if ht is None:
            th[y_true] = [unit, w]
        else:
            ht[1] += w
        if hp is None:
            ph[y_pred] = [unit, w]
        else:
            hp[1] += w

    def revert(self, y_true, y_pred, w=1, *, unit=None) -> None:
        """Undo :meth:`update` with the same arguments (same unit). Raises
        :class:`~streameval.errors.UnknownElementError`, changing nothing, if there is no such
        element. Cost: two table updates and a few dict operations, whatever ``B``."""
        self._guarded("revert", self._revert, y_true, y_pred, w, unit)

    def _revert(self, y_true, y_pred, w, unit) -> None:
        w = check_weight(w)
        entry = self._entry(unit)
        try:
            have = entry.table[y_true, y_pred] if entry is not None else 0
        except TypeError:  # unhashable labels: the evaluator's revert names the problem
            self.evaluator.revert(y_true, y_pred, w)
            raise  # pragma: no cover - the line above raises
        if entry is None or have < w:
            Contingency().update(y_true, y_pred, w)  # a bad label names itself first
            raise UnknownElementError(
                f"revert of (y_true={y_true!r}, y_pred={y_pred!r}, w={w}) in unit {unit!r}: the unit "
                f"holds {have} such element(s)"
            )
        self.evaluator.revert(y_true, y_pred, w)
        self._cache = None
        entry.table.revert(y_true, y_pred, w)
        for side, label in ((0, y_true), (1, y_pred)):
            home = self._homes[side][label]
            home[1] -= w
            if not home[1]:
                del self._homes[side][label]
        if not entry.table.n and not entry.table.skipped:  # the unit is gone: settle it now
            self._sync_unit(entry)
            del self._units[unit]
            self._dirty.discard(unit)
        else:
            self._dirty.add(unit)

    # -------------------------------------------------------------- the replicas' sums
    def _sync_unit(self, entry: _Unit) -> None:
        if entry.k is None:
            entry.k = _draws(self.seed, entry.h, self.n_replicas)
            entry.nz = np.flatnonzero(entry.k)
        now = _stat_values(entry.table)
        delta = [a - b for a, b in zip(now, entry.synced)]
        if any(delta):
            nz = entry.nz
            # exact: Python ints in an object array, one multiply-add per replica and field
            self._sums[nz] += np.multiply.outer(entry.k[nz].astype(object), np.array(delta, dtype=object))
            self._dominance.note(entry, entry.synced, now)
        entry.synced = now

    def _sync_many(self, entries: list) -> None:
        """:meth:`_sync_unit` of many units at once: the changes split into their positive and
        negative parts, each combined over the replicas by one exact limb product
        (:class:`~streameval.units.UnitStats`). O(units · fields + B · fields) Python operations
        and one BLAS product, instead of O(units · B · fields)."""
        from .units import UnitStats

        pos, neg, ks = [], [], []
        for e in entries:
            now = _stat_values(e.table)
            d = [a - b for a, b in zip(now, e.synced)]
            self._dominance.note(e, e.synced, now)
            e.synced = now
            pos.append([x if x > 0 else 0 for x in d])
            neg.append([-x if x < 0 else 0 for x in d])
            ks.append(e.k)
        m = np.ascontiguousarray(np.array(ks, dtype=np.int64).T)  # (B, units)
        bound = int(m.sum(axis=1).max()) if m.size else 1
        for rows, sign in ((pos, 1), (neg, -1)):
            if any(any(r) for r in rows):
                us = UnitStats.from_rows(rows, self._f_keys, max(bound, 1))
                got = np.array(us.combine(m), dtype=object)
                self._sums += got if sign > 0 else -got

    def _sync(self) -> None:
        """Add every marked unit's change of statistics, times its multiplicities, to the replica
        sums (under the guard: it changes the sums). O(marked units · B · fields)."""
        if self._dirty:
            self._guarded("get", self._settle)

    def _settle(self) -> None:
        if self._dirty:
            units = self._units
            fresh = [u for u in self._dirty if units[u].k is None]
            if fresh:  # the new units' multiplicities, drawn in one vectorised call
                draws = poisson_draws(self.seed, [units[u].h for u in fresh], self.n_replicas)
                for u, k in zip(fresh, draws):
                    units[u].k, units[u].nz = k, np.flatnonzero(k)
            if len(self._dirty) < 8:
                for unit in self._dirty:
                    self._sync_unit(units[unit])
            else:
                self._sync_many([units[u] for u in self._dirty])
            self._dirty.clear()

    # -------------------------------------------------------------- reading
    @property
    def n(self) -> int:
        """Elements in the observed table."""
        return self.evaluator.table.n

    @property
    def units(self) -> int:
        """Live units (those holding at least one element)."""
        return len(self._units)

    def _stats_of(self, row) -> ContingencyStats:
        s = object.__new__(ContingencyStats)
        d = s.__dict__
        d.update(zip(STAT_NAMES, (int(v) for v in row)))
        d["f_sums"] = dict(zip(self._f_keys, (int(v) for v in row[len(STAT_NAMES):])))
        return s

    def replica_stats(self, r: int) -> ContingencyStats:
        """Replica ``r``'s sufficient statistics, ``Σ_u k_{u,r} · S_u``: those of the table holding
        ``k_{u,r}`` disjoint copies of every unit. O(fields) after the pending multiply-adds."""
        self._sync()
        return self._stats_of(self._sums[r])

    def _read_rows(self, stats: list) -> np.ndarray:
        """``(metrics, len(stats))`` values of these statistics (NaN for an empty table)."""
        out = np.empty((len(self._metrics), len(stats)))
        for r, s in enumerate(stats):
            if not s.n:  # a replica that drew none of the units seen (or an empty jackknife table)
                out[:, r] = np.nan
                continue
            for i, (_, m) in enumerate(self._metrics):
                out[i, r] = m.value(s)
        return out

    def _values(self) -> np.ndarray:
        """``(metrics, B)`` replica values after the pending multiply-adds."""
        self._sync()
        return self._read_rows([self._stats_of(row) for row in self._sums])

    def replica_values(self) -> dict:
        """``{name: array of the B replica values}`` (NaN for a replica that drew none of the units
        seen). O(B · (fields + metrics)) after the pending multiply-adds."""
        out = self._values()
        return {name: out[i] for i, (name, _) in enumerate(self._metrics)}

    def _live(self) -> tuple:
        """``(UnitStats of the live units, (B, U) multiplicities)`` (:meth:`_live_hashed`)."""
        return self._live_hashed()[:2]

    def _live_hashed(self) -> tuple:
        """``(UnitStats of the live units, (B, U) multiplicities, their hashes)``, the units in the order of their
        hashes (a function of the state, not of the order elements, reverts and merges came in:
        the float sums over units below then do not depend on it either). Cached until the next
        change. O(U · fields) Python operations."""
        self._sync()
        cached = self._cache
        if cached is None:
            entries = sorted(self._units.values(), key=lambda e: e.h)
            us = UnitStats.from_rows([e.synced for e in entries], self._f_keys)
            m = (np.array([e.k for e in entries], dtype=np.int64).T if entries
                 else np.zeros((self.n_replicas, 0), dtype=np.int64))
            cached = self._cache = (us, m, [e.h for e in entries])
        return cached

    def standard_errors(self) -> tuple[np.ndarray, np.ndarray]:
        """``(se, se_observed)``: each replica's linearization standard error, ``(metrics, B)``, and
        the observed table's, ``(metrics,)``: what the studentized interval divides by.

        Replica ``r``'s is ``sqrt(Σ_u k_{u,r} (z_{u,r} − z̄_r)²)`` with ``z_{u,r} = ∇θ(S_r) · S_u``
        the unit's linear score at the replica's sums (:func:`~streameval.linearization.standard_errors`,
        the computation :func:`streameval.compare` runs). Cost: one gradient per replica (two
        metric reads per field a metric reads) and one ``(B, U) × (U, Σ F_k²)`` BLAS product of the
        multiplicities with the units' fields and their pairwise products (``F_k`` the 2 to 6
        fields metric ``k`` reads).

        >>> from streameval import ELM
        >>> bs = BootstrapEvaluator([ELM()], n_replicas=4, seed=2)
        >>> for u in range(3):
        ...     bs.update((u, 0), (u, 0), unit=u); bs.update((u, 1), (u, u % 2), unit=u)
        >>> se, se0 = bs.standard_errors()
        >>> se.shape, bool(se0[0] > 0)
        ((1, 4), True)
        """
        us, m = self._live()
        metrics = [mt for _, mt in self._metrics]
        k = len(metrics)
        if not us.n_units:
            return np.full((k, self.n_replicas), np.nan), np.full(k, np.nan)
        fields = [unit_fields(us)]
        rows = [[int(v) for v in row] for row in self._sums]
        with one_blas_thread():  # small products: a thread pool's wake-up costs more than they do
            (se,), _ = standard_errors([us], metrics, m, [rows], fields=fields)
            (se0,), _ = standard_errors([us], metrics, np.ones((1, us.n_units)), [[us.totals]],
                                        fields=fields)
        return se, se0[:, 0]

    def jackknife(self) -> np.ndarray:
        """``(metrics, G)`` leave-one-unit-out values (``G`` = units; groups of units beyond
        :data:`JACKKNIFE_GROUPS`): the observed sums minus one unit's, exact integers, then one read
        of every metric. What BCa's acceleration is taken from. O(U · fields + G · metrics).

        >>> from streameval import ELM
        >>> bs = BootstrapEvaluator([ELM()], n_replicas=4)
        >>> bs.update("a", "x", unit=1); bs.update("a", "x", unit=1); bs.update("b", "y", unit=2)
        >>> bs.jackknife().tolist()  # without unit 1: one singleton; without unit 2: one pair
        [[1.0, 1.0]]
        """
        us, _, hashes = self._live_hashed()
        groups, g = jackknife_groups(hashes)
        if not g:
            return np.zeros((len(self._metrics), 0))
        return self._read_rows(us.leave_out(groups, g))

    def pairs_share(self) -> float:
        """The largest share of the true or the predicted within-cluster pairs that one live unit
        holds (0 without a pair): what ``interval="adaptive"`` and :meth:`warnings` test against
        :data:`~streameval.units.DOMINANT_SHARE`, the same number as
        :func:`streameval.compare`'s ``settings["largest_unit_pairs_share"]`` on these units.
        Kept current as the units change (a running total and a max-heap per side, class
        ``_Dominance``), not by a scan: O(log U) per unit touched since the last read, beside its
        O(B) multiply-add.

        >>> from streameval import ELM
        >>> bs = BootstrapEvaluator([ELM()], n_replicas=4)
        >>> for u, size in [("a", 3), ("b", 2), ("c", 2)]:  # 3, 1 and 1 true pairs
        ...     for _ in range(size):
        ...         bs.update((u, 0), (u, 0), unit=u)
        >>> bs.pairs_share()
        0.6
        """
        self._sync()
        return self._dominance.share()

    def applied_method(self, method: str | None = None) -> str:
        """The interval ``method`` (default :attr:`interval_method`) computes now: itself, or for
        ``"adaptive"`` the hybrid interval where one live unit holds more than 15% of a
        labelling's within-cluster pairs (:meth:`pairs_share`), else the studentized one
        (:func:`~streameval.intervals.adaptive_choice` without a unit count: the rule of
        :func:`streameval.compare`, whose subsampled interval has no replicas here).
        O(log U) per unit touched since the last read.

        >>> from streameval import ELM
        >>> bs = BootstrapEvaluator([ELM()], n_replicas=4)
        >>> bs.update("a", "x", 2, unit=1); bs.update("b", "y", unit=2)
        >>> bs.applied_method(), bs.applied_method("bca")
        ('hybrid', 'bca')
        """
        method = self.interval_method if method is None else _iv.check_interval_method(method)
        return _iv.adaptive_choice(self.pairs_share()) if method == "adaptive" else method

    def intervals(self, method: str | None = None, confidence: float | None = None) -> dict:
        """``{name: Interval(value, low, high)}`` by ``method`` (default :attr:`interval_method`)
        at ``confidence`` (default :attr:`confidence`), all from the same ``B`` replicas and by the
        functions :func:`streameval.compare` calls (:func:`~streameval.intervals.interval_bounds`):

        - ``"percentile"``: the ``(1 ∓ c)/2`` quantiles of the replica values
          (:func:`~streameval.intervals.percentile_interval`); O(B log B) after the reads;
        - ``"studentized"``: the bootstrap-t, ``t_r = (θ_r − θ̂) / se_r``, the interval
          ``(θ̂ − t_{(1+c)/2} se, θ̂ − t_{(1−c)/2} se)`` kept within the metric's range
          (:func:`~streameval.intervals.studentized_interval`, :meth:`standard_errors`);
        - ``"hybrid"``: the union of the percentile interval and the bootstrap-t centred at the
          replicas' mean, kept within the metric's range
          (:func:`~streameval.intervals.hybrid_interval`, :meth:`standard_errors`);
        - ``"adaptive"``: hybrid where one live unit holds more than 15% of a labelling's
          within-cluster pairs, else studentized (:meth:`applied_method`);
        - ``"bca"``: bias-corrected and accelerated (:func:`~streameval.intervals.bca_interval`,
          the acceleration from :meth:`jackknife`).

        Empty replicas are left out; NaN bounds before any element. Cost: the pending
        multiply-adds, ``B`` reads of every metric and the method's own work (see each).

        >>> from streameval import ELM
        >>> bs = BootstrapEvaluator([ELM()], n_replicas=50, seed=3)
        >>> for u in range(40):
        ...     bs.update((u, 0), (u, 0), unit=u); bs.update((u, 1), (u, u % 3 == 0), unit=u)
        >>> all(lo <= iv.value <= hi for m in ("percentile", "studentized", "bca", "hybrid", "adaptive")
        ...     for iv in bs.intervals(m).values() for lo, hi in [(iv.low, iv.high)])
        True
        """
        c = self.confidence if confidence is None else _check_confidence(confidence)  # before any sync
        used = self.applied_method(method)
        vals = self._values()
        k = len(self._metrics)
        se, se0 = (self.standard_errors() if used in STUDENTIZED_METHODS
                   else ([None] * k, np.full(k, np.nan)))
        jack = self.jackknife() if used == "bca" else [None] * k
        out = {}
        for i, (name, m) in enumerate(self._metrics):
            v = m.get()
            lo, hi = _iv.interval_bounds(used, vals[i], v, c, jackknife=jack[i], se=se[i],
                                     se_observed=float(se0[i]), bounds=m.bounds)
            out[name] = Interval(v, lo, hi)
        return out

    def get(self) -> dict:
        """``{name: Interval(value, low, high)}``: the observed value and the interval of the
        replicas by :attr:`interval_method` at :attr:`confidence` (:meth:`intervals`). An
        :class:`~streameval.Interval` unpacks and compares as a tuple. The value is the metric of
        the observed table; replica ``r``'s value is the metric of the sums ``Σ_u k_{u,r}·S_u``,
        and the bounds come from those ``B`` values (e.g. their ``(1 ∓ c)/2`` quantiles for
        ``"percentile"``). Cost: as :meth:`intervals` -- the pending multiply-adds
        (O(units touched since the last read · B · fields)), ``B`` O(1) reads of every metric,
        and the method's own work."""
        return self.intervals()

    def interval(self, name: str, confidence: float | None = None, method: str | None = None) -> tuple:
        """``(low, high)`` of one metric at ``confidence`` by ``method`` (defaults: the
        evaluator's): the bounds of :meth:`intervals` (formulas there), for that metric. Cost: one
        :meth:`intervals` call (the pending multiply-adds and ``B`` reads of every metric).

        >>> from streameval import ELM
        >>> bs = BootstrapEvaluator([ELM()], n_replicas=20, seed=1)
        >>> bs.update(0, 0, unit="a"); bs.update(1, 1, unit="b")
        >>> bs.interval("ELM", method="percentile")   # every replica is a perfect clustering
        (1.0, 1.0)
        """
        if name not in self.evaluator.metrics:
            raise KeyError(f"no metric {name!r}; have {list(self.evaluator.metrics)}")
        _, lo, hi = self.intervals(method, confidence)[name]
        return lo, hi

    def warnings(self) -> list:
        """What the reader should know before trusting the intervals (strings; empty when
        nothing): fewer than :data:`~streameval.units.FEW_UNITS` live units, or one unit holding
        more than :data:`~streameval.units.DOMINANT_SHARE` of the true or the predicted
        within-cluster pairs (heavy-tailed clusters) — the thresholds of
        :func:`streameval.compare`'s warnings. O(log U) per unit touched since the last read
        (:meth:`pairs_share`).

        >>> from streameval import ELM
        >>> bs = BootstrapEvaluator([ELM()], n_replicas=20)
        >>> bs.update(0, 0, unit="a"); bs.update(1, 1, unit="b")
        >>> bs.warnings()[0][:12]
        'only 2 units'
        """
        share = self.pairs_share()
        u = len(self._units)
        if not u:
            return []
        out = []
        if u < FEW_UNITS:
            out.append(
                f"only {u} units: with fewer than about {FEW_UNITS} units the bootstrap intervals "
                "are rough (95% intervals cover noticeably less than 95% of the time)"
                + (" (with 1 unit there is no resampling variation: the intervals are a point)"
                   if u == 1 else "")
            )
        if share > DOMINANT_SHARE:
            out.append(
                f"one unit holds {share:.0%} of the true or predicted within-cluster pairs (more "
                f"than {DOMINANT_SHARE:.0%}): the cluster sizes look heavy-tailed, and the "
                "population value is then carried by clusters rarer than any in this window. On "
                f"simulated data of that kind {_DOMINANT_NOTE}; read the interval as a lower "
                "bound on the uncertainty"
            )
        return out

    def settings(self) -> dict:
        """What the intervals are: the method asked for (``interval_method``) and the one it applies
        now (``interval_applied``: adaptive's choice, :meth:`applied_method`) with its description
        (``interval``, the sentence :func:`streameval.compare` writes), confidence, replicas, seed,
        live units, the largest unit's share of the pairs, and :meth:`warnings` (JSON-safe).
        O(log U) per unit touched since the last read.

        >>> from streameval import ELM
        >>> s = BootstrapEvaluator([ELM()], interval="bca").settings()
        >>> s["interval_method"], s["interval_applied"], s["units"], s["warnings"]
        ('bca', 'bca', 0, [])
        """
        share = self.pairs_share()
        used = _iv.adaptive_choice(share) if self.interval_method == "adaptive" else self.interval_method
        return {"interval_method": self.interval_method, "interval_applied": used,
                "interval": _iv.describe_interval(self.interval_method, used, len(self._units)),
                "confidence": self.confidence, "n_replicas": self.n_replicas, "seed": self.seed,
                "units": len(self._units), "largest_unit_pairs_share": round(share, 6),
                "warnings": self.warnings()}

    # -------------------------------------------------------------- merging
    def merge(self, other: BootstrapEvaluator) -> None:
        """Add ``other``'s elements (another shard with the same settings).

        Exact: the result equals one evaluator that saw both shards' elements (a unit split across
        the shards included). ``other`` is unchanged. Refused before anything changes
        (:class:`~streameval.errors.SettingsMismatchError` naming the setting and both values):
        another seed or number of replicas (the replicas would be other resamples), other metrics
        (names, order, kinds or parameters), another ``confidence`` or ``interval`` (the merged
        evaluator would report its own over the other's shard without a word). A label living in
        different units in the two shards is refused too (``ValueError``). Cost: O(other's cells
        and units + metrics).

        >>> from streameval import ELM
        >>> a, b = BootstrapEvaluator([ELM()], n_replicas=20), BootstrapEvaluator([ELM()], n_replicas=20)
        >>> a.update(0, 0, unit="d1"); b.update(1, 1, unit="d2")
        >>> a.merge(b); a.n
        2
        >>> a.merge(BootstrapEvaluator([ELM()], n_replicas=20, confidence=0.9))
        Traceback (most recent call last):
        ...
        streameval.errors.SettingsMismatchError: cannot merge a BootstrapEvaluator with confidence=0.9 into one with confidence=0.95: the confidence must be the same in both
        """
        self._guarded("merge", self._merge, other)

    def _merge(self, other: BootstrapEvaluator) -> None:
        if not isinstance(other, BootstrapEvaluator):
            raise TypeError(f"can only merge a BootstrapEvaluator, got {type(other).__name__}")
        metrics, their_metrics = self.evaluator.metrics, other.evaluator.metrics
        check_same_settings("BootstrapEvaluator", [
            ("seed", self.seed, other.seed),  # (else other resamples: another set of replicas)
            ("n_replicas", self.n_replicas, other.n_replicas),
            ("metrics", list(metrics), list(their_metrics)),
        ])
        check_same_settings("BootstrapEvaluator", [
            *((f"metric {name!r}", _MetricKind(m), _MetricKind(their_metrics[name]))
              for name, m in metrics.items()),
            ("confidence", self.confidence, other.confidence),
            ("interval", self.interval_method, other.interval_method),
        ])
        for side, what in ((0, "true"), (1, "predicted")):
            mine = self._homes[side]
            for label, (unit, _) in other._homes[side].items():
                home = mine.get(label)
                if home is not None and not same_label(home[0], unit):
                    raise ValueError(f"cannot merge: {what} label {label!r} is in unit {home[0]!r} "
                                     f"here and in unit {unit!r} in the other shard")
        self.evaluator.table.merge(other.evaluator.table)
        self._cache = None
        for unit, theirs in other._units.items():
            entry = self._units.get(unit)
            if entry is None:
                entry = self._units[unit] = self._new_unit(unit, theirs.k, theirs.h)
            entry.table.merge(theirs.table)
            self._dirty.add(unit)
        for side in (0, 1):
            mine = self._homes[side]
            for label, (unit, c) in other._homes[side].items():
                home = mine.get(label)
                if home is None:
                    mine[label] = [unit, c]
                else:
                    home[1] += c

    def _settings_key(self) -> tuple:
        return (self.seed, self.n_replicas,
                [(name, _MetricKind(m)) for name, m in self.evaluator.metrics.items()],
                self.confidence, self.interval_method)

    def __eq__(self, other) -> bool:
        """Same settings (those :meth:`merge` compares), same observed table and the same table
        in every live unit (hence the same replicas)."""
        if not isinstance(other, BootstrapEvaluator):
            return NotImplemented
        return (
            self._settings_key() == other._settings_key()
            and self.evaluator.table == other.evaluator.table
            and self._units.keys() == other._units.keys()
            and all(e.table == other._units[u].table for u, e in self._units.items())
        )

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"BootstrapEvaluator(n={self.n}, replicas={self.n_replicas}, seed={self.seed})"
