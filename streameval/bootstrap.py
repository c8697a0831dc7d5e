"""The online Poisson bootstrap: confidence intervals that stay current while the stream runs.

A :class:`BootstrapEvaluator` keeps the observed table and ``B`` replica tables. In replica ``r`` a
resampling *unit* ``u`` (a stream, a document, a source batch: a block holding whole clusters) has
the multiplicity ``k ~ Poisson(1)``, a deterministic function of ``(seed, u, r)`` drawn from a
counter-based generator (:func:`poisson_multiplicities`): splitmix64 of the seed, a stable 64-bit
hash of the unit (BLAKE2b of a canonical encoding, not Python's salted ``hash``) and the replica
index, turned into a Poisson(1) draw by inversion. An element of unit ``u`` enters replica ``r`` as
``k`` *disjoint copies* — never as a weight ``k``. Since disjoint copies add their statistics, ``k``
copies are kept as one copy in the replica's table *for multiplicity k*: replica ``r`` is a handful
of tables ``T[r][k]`` (one per multiplicity that occurs, ``k = 1, 2, ...``) and its sufficient
statistics are ``Σ_k k · stats(T[r][k])`` — bit for bit those of the table of ``k`` tagged copies
(``tests/test_compare.py``), at the cost of one table update instead of ``k``.

Because the multiplicity depends only on ``(seed, u, r)``:

- the same element always gets the same copies, so :meth:`~BootstrapEvaluator.revert` undoes
  :meth:`~BootstrapEvaluator.update` exactly and windows work;
- shards that see different parts of the stream (even different elements of one unit) give the same
  replicas as one evaluator that saw everything: :meth:`~BootstrapEvaluator.merge` is exact;
- replica ``r`` equals, bit for bit, the batch computation of the same resample
  (:func:`streameval.compare` with ``resampling="poisson"`` and the same seed).

Cost per element: one observed-table update plus one update in each replica where the unit's
multiplicity is not 0: ``1 + (1 - e⁻¹)·B ≈ 1 + 0.63·B`` table updates on average, below ``B + 1``.
A unit's ``B`` multiplicities are computed once (vectorised, O(B)) when it first appears and dropped
when its last element is reverted: memory O(B · live units) besides the tables, plus each live unit's cells (so that a
revert with the wrong unit is refused before anything changes). A read sums the
few multiplicity tables of each replica: O(B · distinct multiplicities) plus the metric reads.

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

import hashlib
import math
import numbers
from typing import Any, ClassVar

import numpy as np

from ._validate import check_weight
from .contingency import Contingency
from .errors import UnknownElementError
from .evaluator import Evaluator
from .metrics.base import Metric
from .stats import STAT_NAMES, ContingencyStats
from .sync import Guarded, concurrent_use

__all__ = [
    "BootstrapEvaluator",
    "poisson_multiplicities",
    "poisson_draws",
    "unit_hash",
    "seed64",
    "percentile_interval",
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
    machine and process, unlike Python's ``hash`` of a str.

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


def seed64(seed) -> int:
    """The generator's 64-bit key of ``seed`` (an int >= 0, taken mod 2**64). O(1).

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


class BootstrapEvaluator(Guarded):
    """Metrics with online Poisson-bootstrap confidence intervals over resampling units.

    Parameters
    ----------
    metrics : what :class:`~streameval.Evaluator` accepts (a list or ``{name: metric}`` of fresh
        O(1) metrics; ``None``: every O(1) metric).
    n_replicas : ``B``, the number of bootstrap replicas.
    seed : an int >= 0; with the unit keys it fixes every multiplicity.
    confidence : the coverage of the intervals :meth:`get` reports (percentile intervals).

    Elements arrive with their unit (``update(y_true, y_pred, w=1, unit=...)``); a unit must hold
    whole true and predicted clusters (labels of different units never meet), e.g. labels
    ``(stream, document)`` with unit ``stream``.

    Cost: :meth:`update` and :meth:`revert` are ``1 + #{r: k_r > 0}`` table updates (``1 + 0.63·B``
    on average) plus O(B) once per new unit; :meth:`get` sums each replica's few multiplicity
    tables and reads every metric (O(B) for O(1) metrics), then sorts the ``B`` values;
    :meth:`merge` is O(cells of all tables).

    >>> from streameval import BCubed
    >>> a = BootstrapEvaluator([BCubed()], n_replicas=20, seed=1)
    >>> a.update("x", "p", unit="u1"); a.update("x", "q", unit="u1")
    >>> a.revert("x", "q", unit="u1")
    >>> a.get()["BCubed"]
    (1.0, 1.0, 1.0)
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
    _tables: list[dict[int, Contingency]]  # replica -> {k: Contingency}
    _units: dict[Any, list[Any]]  # unit -> [{(true, pred): count}, [(replica, k) for k > 0]]

    def __init__(self, metrics=None, n_replicas: int = 200, seed: int = 0, confidence: float = 0.95):
        if isinstance(n_replicas, bool) or not isinstance(n_replicas, numbers.Integral) or n_replicas < 1:
            raise ValueError(f"n_replicas must be an int >= 1, got {n_replicas!r}")
        if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
            raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
        self.seed = seed64(seed)
        self.n_replicas = int(n_replicas)
        self.confidence = float(confidence)
        self.evaluator = Evaluator(metrics)
        for name, m in self.evaluator.metrics.items():
            if m.on_demand:
                raise ValueError(f"{name} is not an O(1) metric; the bootstrap replicas need O(1) reads")
        self._f_keys = list(self.evaluator.table.f_sums)
        self._metrics = list(self.evaluator.metrics.items())
        self._tables = [{} for _ in range(self.n_replicas)]  # replica -> {k: Contingency}
        self._units = {}  # unit -> [{(true, pred): count}, [(replica, k) for k > 0]]
        self._init_guard()

    def _table(self, r: int, k: int) -> Contingency:
        t = self._tables[r].get(k)
        if t is None:
            t = self._tables[r][k] = Contingency()
            for kind, beta in self._f_keys:
                t.track_f(kind, beta)
        return t

    # -------------------------------------------------------------- multiplicities
    def multiplicities(self, unit) -> np.ndarray:
        """The unit's ``B`` multiplicities (one per replica). O(B)."""
        return _draws(self.seed, unit_hash(unit), self.n_replicas)

    def _plan(self, unit):
        if unit is None:
            raise ValueError(
                "BootstrapEvaluator.update needs the element's unit: update(y_true, y_pred, unit=...)"
            )
        try:
            entry = self._units.get(unit)
        except TypeError:
            entry = None
        if entry is not None:
            return entry[1]
        k = self.multiplicities(unit)  # a unit of an unsupported type raises here
        nz = np.flatnonzero(k)
        return list(zip(nz.tolist(), k[nz].tolist()))

    # -------------------------------------------------------------- River's protocol
    def update(self, y_true, y_pred, w=1, *, unit=None) -> None:
        """Add ``w`` elements of ``unit``: once to the observed table, ``k_r`` disjoint copies to
        replica ``r`` (module docstring). Bad input raises before anything changes; a call made
        while another is changing this object (another thread) raises
        :class:`~streameval.errors.ConcurrentUseError`."""
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
        plan = self._plan(unit)
        self.evaluator.update(y_true, y_pred, w)  # validates the labels first
        tables = self._tables
        for r, k in plan:
            table = tables[r].get(k)
            if table is None:
                table = self._table(r, k)
            table.update(y_true, y_pred, w)
        entry = self._units.get(unit)
        if entry is None:
            self._units[unit] = [{(y_true, y_pred): w}, plan]
        else:
            cells = entry[0]
            cells[y_true, y_pred] = cells.get((y_true, y_pred), 0) + w

    def revert(self, y_true, y_pred, w=1, *, unit=None) -> None:
        """Undo :meth:`update` with the same arguments (same unit). Raises
        :class:`~streameval.errors.UnknownElementError`, changing nothing, if there is no such
        element."""
        self._guarded("revert", self._revert, y_true, y_pred, w, unit)

    def _revert(self, y_true, y_pred, w, unit) -> None:
        w = check_weight(w)
        plan = self._plan(unit)
        entry = self._units.get(unit)
        try:
            have = entry[0].get((y_true, y_pred), 0) if entry is not None else 0
        except TypeError:  # unhashable labels: the evaluator's revert names the problem
            self.evaluator.revert(y_true, y_pred, w)
            raise  # pragma: no cover - the line above raises
        if entry is None or have < w:  # (no entry: have is 0)
            raise UnknownElementError(
                f"revert of (y_true={y_true!r}, y_pred={y_pred!r}, w={w}) in unit {unit!r}: the unit "
                f"holds {have} such element(s)"
            )
        self.evaluator.revert(y_true, y_pred, w)
        tables = self._tables
        for r, k in plan:
            tables[r][k].revert(y_true, y_pred, w)
        cells = entry[0]
        if have == w:
            del cells[y_true, y_pred]
            if not cells:
                del self._units[unit]
        else:
            cells[y_true, y_pred] = have - w

    # -------------------------------------------------------------- reading
    @property
    def n(self) -> int:
        """Elements in the observed table."""
        return self.evaluator.table.n

    def replica_stats(self, r: int) -> ContingencyStats:
        """Replica ``r``'s sufficient statistics, ``Σ_k k · stats(T[r][k])``: those of the table
        holding ``k`` disjoint copies of every unit of multiplicity ``k``. O(distinct k)."""
        total = [0] * len(STAT_NAMES)
        f_sums = dict.fromkeys(self._f_keys, 0)
        for k, t in self._tables[r].items():
            if not t.n:
                continue
            for i, name in enumerate(STAT_NAMES):
                total[i] += k * getattr(t, name)
            for key, v in t.f_sums.items():
                f_sums[key] += k * v
        return ContingencyStats(**dict(zip(STAT_NAMES, total)), f_sums=f_sums)

    def replica_values(self) -> dict:
        """``{name: array of the B replica values}`` (NaN for a replica that drew none of the units
        seen). O(B · (distinct k + metrics))."""
        out = np.empty((len(self._metrics), self.n_replicas))
        for r in range(self.n_replicas):
            s = self.replica_stats(r)
            if not s.n:  # the replica drew none of the units seen: no value
                out[:, r] = np.nan
                continue
            for i, (_, m) in enumerate(self._metrics):
                out[i, r] = m.value(s)
        return {name: out[i] for i, (name, _) in enumerate(self._metrics)}

    def get(self) -> dict:
        """``{name: (value, low, high)}``: the observed value and the percentile interval of the
        replicas at :attr:`confidence` (empty replicas left out; NaN bounds before any element)."""
        out = {}
        for name, vals in self.replica_values().items():
            lo, hi = percentile_interval(vals, self.confidence)
            out[name] = (self.evaluator.metrics[name].get(), lo, hi)
        return out

    def interval(self, name: str, confidence: float | None = None) -> tuple:
        """``(low, high)`` of one metric at ``confidence`` (default :attr:`confidence`)."""
        c = self.confidence if confidence is None else confidence
        return percentile_interval(self.replica_values()[name], c)

    # -------------------------------------------------------------- merging
    def merge(self, other: BootstrapEvaluator) -> None:
        """Add ``other``'s elements (another shard with the same seed, replicas and metrics).

        Exact: the result equals one evaluator that saw both shards' elements. ``other`` is unchanged.
        """
        self._guarded("merge", self._merge, other)

    def _merge(self, other: BootstrapEvaluator) -> None:
        if not isinstance(other, BootstrapEvaluator):
            raise TypeError(f"can only merge a BootstrapEvaluator, got {type(other).__name__}")
        if (other.seed, other.n_replicas) != (self.seed, self.n_replicas):
            raise ValueError(
                f"cannot merge: seed/replicas differ ({self.seed}, {self.n_replicas}) vs "
                f"({other.seed}, {other.n_replicas}); the replicas would not be the same resamples"
            )
        if list(other.evaluator.metrics) != list(self.evaluator.metrics):
            raise ValueError(
                f"cannot merge: metrics differ ({list(self.evaluator.metrics)} vs "
                f"{list(other.evaluator.metrics)})"
            )
        self.evaluator.table.merge(other.evaluator.table)
        for r, theirs in enumerate(other._tables):
            for k, table in theirs.items():
                if table.n or table.skipped:
                    self._table(r, k).merge(table)
        for unit, (theirs, plan) in other._units.items():
            entry = self._units.get(unit)
            if entry is None:
                self._units[unit] = [dict(theirs), plan]
            else:
                cells = entry[0]
                for key, c in theirs.items():
                    cells[key] = cells.get(key, 0) + c

    def __eq__(self, other) -> bool:
        """Same settings, same observed table and same replica tables."""
        if not isinstance(other, BootstrapEvaluator):
            return NotImplemented
        return (
            (self.seed, self.n_replicas, list(self.evaluator.metrics))
            == (other.seed, other.n_replicas, list(other.evaluator.metrics))
            and self.evaluator.table == other.evaluator.table
            and all(_live(a) == _live(b) for a, b in zip(self._tables, other._tables))
            and {u: e[0] for u, e in self._units.items()} == {u: e[0] for u, e in other._units.items()}
        )

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"BootstrapEvaluator(n={self.n}, replicas={self.n_replicas}, seed={self.seed})"


def _live(tables: dict) -> dict:
    """A replica's multiplicity tables that hold something (an emptied table equals none)."""
    return {k: t for k, t in tables.items() if t.n or t.skipped}


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of the non-NaN values: their ``(1-c)/2`` and ``(1+c)/2`` quantiles
    (numpy's linear interpolation), ``(nan, nan)`` if none. The interval of a
    :class:`BootstrapEvaluator` and of :func:`streameval.compare`. O(B log B).

    >>> percentile_interval(np.array([0.0, 1.0, 2.0, 3.0, np.nan]), 0.5)
    (0.75, 2.25)
    """
    a = (1 - confidence) / 2
    ok = values[~np.isnan(values)]
    if not len(ok):
        return math.nan, math.nan
    lo, hi = np.quantile(ok, [a, 1 - a])
    return float(lo), float(hi)
