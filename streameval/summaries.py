"""Per-cluster vector summaries: the one mutable state behind the intrinsic metrics.

A :class:`ClusterSummaries` keeps, for every predicted cluster ``j``, its count ``b[j]``, its mean
vector ``mean_j`` and its *scatter* ``M2_j = sum_{x in j} ||x - mean_j||²`` (the within-cluster sum
of squared deviations), plus the same three numbers for the whole stream (the global summary).
Every intrinsic metric (:mod:`streameval.intrinsic`) is a view that reads them.

Design notes
------------
- Update is Welford's method, weighted: adding ``w`` copies of ``x`` to ``(n, mean, M2)`` gives
  ``n' = n + w``, ``mean' = mean + (w/n')·(x - mean)``, ``M2' = M2 + (w·n/n')·||x - mean||²``.
  Its sum of squares ``||x - mean||²`` (and, in the cosine space, the norm that scales ``x``) is
  taken in one order on every path: each square rounded, then added left to right
  (:func:`_sum_sq`, the native kernel's order), never through a BLAS dot, which may fuse or
  reorder the terms. So the reference steps, the native single ones and the native block give
  the same bits, whichever path an update takes (a new cluster's, a dict's, a block's), while
  ``w·n`` stays below ``2**53`` (beyond, the reference divides the exact integer product, the
  kernel its nearest double).
- Revert is the exact algebraic inverse: the same formulas with ``-w`` (``n' = n - w``,
  ``mean' = mean - (w/n')·(x - mean)``, ``M2' = M2 - (w·n/n')·||x - mean||²``, clamped at 0,
  and exactly 0 when one element is left).
  In floating point the round trip restores the count exactly and the mean and scatter up to
  rounding: ``|Δmean| ≤ 1e-9·(|mean| + |x|)`` and ``|ΔM2| ≤ 1e-9·(M2 + w·||x - mean||²)``, bounds
  the tests check (Welford's error per step is a few ulps of those scales).
- Merge is Chan's formula: ``M2 = M2_a + M2_b + ||mean_b - mean_a||²·n_a·n_b/n``. An engine that
  computed ``(count, mean, scatter)`` per cluster in bulk builds the summaries with
  :meth:`ClusterSummaries.from_arrays` (the global summary by a tree of those merges), and every
  intrinsic view reads them as it reads streamed ones.
- :meth:`~ClusterSummaries.check` then :meth:`~ClusterSummaries.apply` splits an update: a caller
  checks one element against several summaries (and its own state) before any changes.
- The shortcut ``sum ||x||² - n·||mean||²`` is never used: it cancels catastrophically when the data
  sit far from the origin (data shifted by 1e8 with unit spread lose every digit).
- ``space="cosine"`` normalises each vector to unit length before it enters (the summaries of
  Alink's cosine metrics: means of unit vectors). A zero vector is then rejected.
- Vectors: lists, tuples, 1-D numpy arrays, or River-style ``{feature: value}`` dicts. The dimension
  (and, for dicts, the feature order) is fixed by ``dim``/``features`` or by the first vector.
  Wrong dimension, unknown or missing features and non-finite values raise
  :class:`~streameval.errors.InvalidVectorError`, and the state is left as it was.
- Clusters live in numpy slots (reused after a cluster empties), so a read over all clusters is
  vectorised. Distances between cluster means, needed by Separation and Davies-Bouldin, are cached
  and refreshed only for the clusters that changed since the last read: O(changed·k·d).

>>> s = ClusterSummaries()
>>> for x, p in [([0, 0], "a"), ([2, 0], "a"), ([10, 10], "b")]:
...     s.update(x, p)
>>> s.n, s.k, s.dim
(3, 2, 2)
>>> n, mean, m2 = s.cluster("a"); n, mean.tolist(), m2
(2, [1.0, 0.0], 2.0)
>>> s.ssw, round(s.ssb(), 6)
(2.0, 120.666667)
>>> s.revert([2, 0], "a")
>>> s.cluster("a")[0], s.ssw
(1, 0.0)
>>> s.update([1, 2, 3], "a")
Traceback (most recent call last):
...
streameval.errors.InvalidVectorError: vector has dimension 3, expected 2
"""

from __future__ import annotations

import base64
import copy
import math
import numbers
import threading
from collections import Counter
from typing import Any, NamedTuple

import numpy as np

from ._unit import cosine_distance, to_unit, unit_rows
from ._validate import (
    MAX_TOTAL,
    MAX_VECTOR_VALUE,
    check_label,
    check_same_settings,
    check_total,
    check_weight,
    check_weights,
    real_array,
    sum_by_group,
    vector_problem,
)
from .errors import InvalidLabelError, InvalidStateError, InvalidVectorError, UnknownElementError
from .labels import factorize
from .state import check_header, header, label_from_json, label_to_json
from .sync import Guarded, concurrent_use

try:  # the per-point kernel (src/summaries.rs); without it every call runs the reference below
    from ._native import ReportStep as _ReportStep
    from ._native import SummaryKernel as _SummaryKernel
except ImportError:  # pragma: no cover - the pure-Python build
    _SummaryKernel = None  # type: ignore[assignment, misc]
    _ReportStep = None  # type: ignore[assignment, misc]

__all__ = ["ClusterSummaries", "Change", "SPACES"]

_FORMAT = "streameval.ClusterSummaries"
_VERSION = 2  # 2: the slot layout, versions and the native kernel's running state (1: clusters only, still read)
SPACES = ("euclidean", "cosine")


class Change(NamedTuple):
    """A checked update or revert, returned by :meth:`ClusterSummaries.check` and made by
    :meth:`ClusterSummaries.apply`.

    ``vector``: the checked vector in the summaries' space (unit length in the cosine space);
    ``label``: the cluster; ``w``: the signed multiplicity (negative for a revert); ``raw``: the
    vector as given (a dict fixes the feature order on the first update); ``summaries`` and
    ``version``: the state it was checked against. A named tuple: O(1) per field.

    >>> s = ClusterSummaries(space="cosine")
    >>> c = s.check([3.0, 4.0], "a", 2)
    >>> c.vector.tolist(), c.label, c.w, s.n        # checked, unit length; nothing changed yet
    ([0.6, 0.8], 'a', 2, 0)
    >>> s.apply(c); s.n
    2
    """

    summaries: ClusterSummaries
    version: int
    vector: np.ndarray
    label: Any
    w: int
    raw: Any


def _capacity(n: int) -> int:
    """The number of slots allocated for ``n``: a multiple of 8 with an odd number of groups of 8,
    so that a row of the ``capacity × capacity`` matrix of distances between means spans an odd
    number of 64-byte cache lines. A column's entries then fall in different cache sets; with a
    power-of-two row every entry of a column maps to the same few sets, and each point's column
    write (``ClusterReport``) missed the cache once per cluster (at k = 1,000, d = 2: 38 µs per
    point with rows of 1,024 slots, 25 µs with 1,032 on the benchmark's machine). O(1).

    >>> [_capacity(n) for n in (1, 8, 9, 16, 17, 1000, 1024)]
    [8, 8, 24, 24, 24, 1000, 1032]
    """
    groups = -(-n // 8)
    return 8 * (groups | 1)


class ClusterSummaries(Guarded):
    """Count, mean vector and scatter per predicted cluster, and for the whole stream.

    Parameters
    ----------
    dim : the vector dimension (default: fixed by the first vector).
    features : for dict vectors, the feature order (default: the first dict's key order).
    space : ``"euclidean"`` (raw vectors) or ``"cosine"`` (each vector scaled to unit length).
    native : run :meth:`update` and :meth:`revert` of a known cluster in the native kernel when it
        is built (default); ``False`` runs the Python reference for every call (the differential
        test drives both). The state, its reads and every other method are the same either way.

    Cost: :meth:`update`, :meth:`revert` O(d); :meth:`merge` O(k·d); reads of :attr:`ssw`, :attr:`n`,
    :attr:`k` O(1) (SSW is summed on demand over the k clusters: O(k)); :meth:`ssb` O(k·d).
    Memory O(k·d), plus a k×k cache of distances between means once they are read.

    >>> s = ClusterSummaries(space="cosine")
    >>> s.update({"u": 3.0, "v": 4.0}, 0)
    >>> s.features, s.cluster(0)[1].tolist()
    (['u', 'v'], [0.6, 0.8])
    """

    def __init__(self, dim: int | None = None, features=None, space: str = "euclidean", native: bool = True):
        if space not in SPACES:
            raise ValueError(f"space must be one of {SPACES}, got {space!r}")
        if features is not None:
            if isinstance(features, (str, bytes)):  # one name is not its characters
                raise ValueError(f"features must be a sequence of feature names, got the single "
                                 f"{type(features).__name__} {features!r}")
            features = list(features)
            try:
                twice = [f for f, c in Counter(features).items() if c > 1]
            except TypeError:
                raise ValueError(f"features must be hashable names, got {features!r:.200}") from None
            if twice:
                raise ValueError(f"features must be distinct names, got {twice!r:.200} more than once")
            if dim is not None and dim != len(features):
                raise ValueError(f"dim={dim} but {len(features)} features were given")
            dim = len(features)
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, numbers.Integral)
                                or dim < 1):
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        self.space = space
        self.features = features
        self._fpos = None if features is None else {f: i for i, f in enumerate(features)}
        self.dim: int | None = None if dim is None else int(dim)
        self.version = 0  # bumped by every mutation: views cache on it
        self._index: dict = {}  # label -> slot
        self._labels: list = []  # slot -> label (None when free)
        self._free: list = []
        self._order: tuple | None = None  # (labels, slot -> position, sizes, version) in first-seen order (size_lists), or None: stale
        self._arrays: tuple | None = None  # (labels tuple, view of the counts or None, slots or None) in first-seen order (size_arrays), or None: stale
        cap = 8
        self._count = np.zeros(cap, dtype=np.int64)
        self._mean = np.zeros((cap, self.dim or 0))
        self._m2 = np.zeros(cap)
        self.n = 0
        self._gmean = np.zeros(self.dim or 0)
        self._gm2 = 0.0
        self._touched = np.zeros(cap, dtype=np.int64)  # slot -> version of its last change
        self._dist: np.ndarray | None = None  # cached distances between means (cap x cap), see centroid_distances
        self._dist_seen = -1  # version the cache reflects
        self._ssb = (-1, 0.0)  # (version, SSB)
        self._guard = threading.Lock()  # Guarded's guard: dropped by pickling, made anew on load
        self._native = bool(native) and _SummaryKernel is not None
        self._kernel: Any = None  # bound to the arrays once the dimension is known (_bind_kernel)
        self._bind_kernel()

    def _bind_kernel(self) -> None:
        """Bind the native kernel to the current arrays (after any of them is reallocated)."""
        if self._native and self.dim is not None and self._mean.shape[1] == self.dim:
            if self._kernel is None:
                self._kernel = _SummaryKernel(self.space == "cosine")
            self._kernel.bind(self._count, self._mean, self._m2, self._gmean, self._touched)
            if self._dist is not None and self._dist.shape[0] == len(self._count):
                self._kernel.bind_dist(self._dist)

    @property
    def kernel(self):
        """The native kernel bound to these summaries' arrays (``streameval._native.SummaryKernel``),
        or ``None`` (the pure-Python build, ``native=False``, or no dimension yet). The views read
        through it when it is there, and through numpy otherwise (the reference)."""
        return self._kernel

    def __getstate__(self):
        state = super().__getstate__()
        kernel = state.pop("_kernel", None)  # bound anew on load, to the unpickled arrays
        # its running sums (SSB's anchor, SSW, compactness, the distance cache's sum) depend on
        # the order of the steps that made them: carried, so that every later read of the copy
        # is the original's bit for bit (SummaryKernel.state)
        state["_kernel_state"] = None if kernel is None else kernel.state()
        state["_arrays"] = None  # a view of the counts: made anew from the loaded ones
        return state

    def __setstate__(self, state):
        state = dict(state)
        kernel_state = state.pop("_kernel_state", None)
        super().__setstate__(state)
        self._arrays = None  # (older pickles hold a slice there, or nothing)
        self._kernel = None
        self._bind_kernel()
        if self._kernel is not None and kernel_state is not None:
            self._kernel.restore(kernel_state)

    # -- input -------------------------------------------------------------
    def vector(self, x) -> np.ndarray:
        """``x`` as a checked float64 array in this stream's feature order (unit length in the
        cosine space). Raises :class:`InvalidVectorError` for a wrong dimension or features, a
        NaN or infinite value, a value of magnitude ``2**256`` or more (its square would overflow
        the sums: :data:`~streameval._validate.MAX_VECTOR_VALUE`), a value a float conversion
        would misread (complex, text: :func:`~streameval._validate.real_array`), or, in the cosine
        space, a zero vector; never mutates the summaries. O(d).

        >>> ClusterSummaries(dim=2).vector((1, float("nan")))
        Traceback (most recent call last):
        ...
        streameval.errors.InvalidVectorError: vector has a non-finite value: [1.0, nan]
        """
        if isinstance(x, dict):
            if self.features is None and self.n:
                raise InvalidVectorError(
                    "this stream's vectors are positional (lists, tuples, arrays), got a dict of features"
                )
            feats = self.features if self.features is not None else list(x)
            if len(x) != len(feats) or (self._fpos is not None and any(k not in self._fpos for k in x)):
                missing = [f for f in feats if f not in x]
                extra = [k for k in x if self._fpos is not None and k not in self._fpos]
                raise InvalidVectorError(
                    f"dict vector does not match the features {feats!r}: missing {missing!r}, "
                    f"unknown {extra!r}"
                )
            arr = real_array([x[f] for f in feats], "vector")
        else:
            if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
                raise InvalidVectorError(
                    f"a vector must be a list, tuple, numpy array or dict, got {type(x).__name__}"
                )
            if self.features is not None:
                raise InvalidVectorError("this stream's vectors are dicts of named features")
            arr = real_array(x, "vector")
            if arr.ndim != 1:
                raise InvalidVectorError(f"a vector must be one-dimensional, got shape {arr.shape}")
        d = self.dim
        if d is not None and arr.shape[0] != d:
            raise InvalidVectorError(f"vector has dimension {arr.shape[0]}, expected {d}")
        if arr.shape[0] == 0:
            raise InvalidVectorError("a vector must have at least one value")
        problem = vector_problem(arr)
        if problem is not None:
            raise InvalidVectorError(f"vector {problem}: {arr.tolist()}")
        if self.space == "cosine":
            unit = to_unit(arr, _sum_sq)
            if unit is None:
                raise InvalidVectorError(
                    "the cosine space needs a non-zero vector (it is scaled to unit length): every "
                    "value is 0"
                )
            arr = unit
        return arr

    def _fix_dim(self, d: int) -> None:
        self.dim = d
        self._mean = np.zeros((len(self._count), d))
        self._gmean = np.zeros(d)
        self._bind_kernel()

    # -- mutation ------------------------------------------------------------
    def update(self, x, y_pred, w=1) -> None:
        """Add ``w`` copies of vector ``x`` to cluster ``y_pred`` (Welford). O(d).

        A known cluster, an ``int`` weight and a list, tuple or float64 array take one native
        call (:meth:`fast`); anything else (a new cluster, a dict, an error to report) the
        reference path."""
        if not self.fast(x, y_pred, w):
            self.apply(self.check(x, y_pred, w))

    def revert(self, x, y_pred, w=1) -> None:
        """Undo :meth:`update` with the same arguments (Welford's exact inverse). O(d).

        Raises :class:`UnknownElementError` when cluster ``y_pred`` holds fewer than ``w`` elements.
        (A revert of a vector the cluster never saw cannot be detected from a summary.)
        """
        if not (w.__class__ is int and self.fast(x, y_pred, -w)):
            self.apply(self.check(x, y_pred, w, revert=True))

    def update_many(self, X, y_pred, w=None) -> None:
        """Add row ``i`` of ``X`` to cluster ``y_pred[i]`` with weight ``w[i]`` (default 1), for
        every row, as :meth:`update` row by row does: the same Welford steps in the same order,
        in one native call (or the reference loop), so the state is the one the single updates
        give, bit for bit, new clusters included (the sums of squares in one order on every
        path: :func:`_sum_sq`; ``tests/test_summaries_native.py``), except that :attr:`version`
        moves by one. Everything is checked first: a bad vector, label or weight raises naming it and
        leaves the summaries as they were. Cost O(m·d), plus O(m) to group integer labels in a
        dense range (else O(m log m)).

        >>> s = ClusterSummaries()
        >>> s.update_many([[0.0, 0.0], [2.0, 0.0], [10.0, 10.0]], ["a", "a", "b"], w=[1, 1, 2])
        >>> s.sizes(), s.cluster("a")[1].tolist(), s.cluster("a")[2]
        ({'a': 2, 'b': 2}, [1.0, 0.0], 2.0)
        >>> s.update_many([[1.0, float("nan")]], ["a"])
        Traceback (most recent call last):
        ...
        streameval.errors.InvalidVectorError: vector 0 has a non-finite value: [1.0, nan]
        """
        arr = _vector_block(X, self.dim, copy=False)
        m = arr.shape[0]
        if self.features is not None:
            raise InvalidVectorError("this stream's vectors are dicts of named features: update them one by one")
        dense = _dense(y_pred, m)  # integer labels: one gather through a table, no codes array
        codes, uniques = (None, dense[1]) if dense is not None else _group(y_pred, m)
        ws = check_weights(w, m)
        if ws is not None:
            ws = np.ascontiguousarray(ws)
        total = m if ws is None else sum_by_group(ws, np.array([0]))[1] if m else 0
        check_total(self.n, total, "the summaries")
        if not m:
            return
        kernel = self._kernel  # None until the dimension is known: the first block takes the reference
        if kernel is not None:
            bad = kernel.check_block(arr)
            if bad is not None:
                raise InvalidVectorError(f"vector {bad[0]} {bad[1]}: {arr[bad[0]].tolist()}")
            vecs = arr
        else:
            vecs = self._checked_rows(arr)
        guard = self._guard  # not thread-safe: a concurrent change raises (streameval.sync)
        if not guard.acquire(False):
            concurrent_use(self, "update_many")
        try:
            if self.dim is None or self._mean.shape[1] != self.dim:
                self._fix_dim(arr.shape[1])
            index = self._index
            slot_of = np.array([index.get(u, -1) for u in uniques], dtype=np.int64)
            new = np.flatnonzero(slot_of < 0)
            if len(new):  # new clusters take slots in the order they first appear, as update gives them
                if codes is None:
                    codes = dense[0][y_pred]
                first = np.unique(codes, return_index=True)[1]
                for i in new[np.argsort(first[new], kind="stable")].tolist():
                    slot_of[i] = self._new_slot(uniques[i])
            version = self.version + 1
            if kernel is not None:
                if codes is None and y_pred.dtype == np.int64 and y_pred.flags.c_contiguous:
                    # integer labels: the kernel gathers each row's slot through the table
                    self._gm2 = kernel.update_many(y_pred, vecs, ws, self.n, self._gm2, version, slot_of[dense[0]])
                else:
                    slots = slot_of[codes] if codes is not None else slot_of[dense[0]][y_pred]
                    self._gm2 = kernel.update_many(slots, vecs, ws, self.n, self._gm2, version)
                self.n += total
            else:  # the reference: update's own steps, row by row
                slots = slot_of[codes] if codes is not None else slot_of[dense[0]][y_pred]
                weights = [1] * m if ws is None else ws.tolist()
                for i, (slot, wi) in enumerate(zip(slots.tolist(), weights)):
                    self._apply_unguarded(vecs[i], self._labels[slot], wi)
                self._touched[np.unique(slots)] = version
            self.version = version
        finally:
            guard.release()

    def _checked_rows(self, arr: np.ndarray) -> np.ndarray:
        """The rows in this space (unit in the cosine space), refusing as :meth:`vector` does."""
        if vector_problem(arr) is not None:
            i = next(i for i, row in enumerate(arr) if vector_problem(row) is not None)
            raise InvalidVectorError(f"vector {i} {vector_problem(arr[i])}: {arr[i].tolist()}")
        if self.space != "cosine":
            return arr
        out = np.empty_like(arr)
        for i, row in enumerate(arr):  # the reference: the very steps of vector()
            unit = to_unit(row, _sum_sq)
            if unit is None:
                raise InvalidVectorError(
                    f"vector {i} has norm 0: every value is 0 (the cosine space scales it to unit length): "
                    f"{row.tolist()}"
                )
            out[i] = unit
        return out

    def fast(self, x, y_pred, w, singleton: float | None = None, points: dict | None = None) -> bool | tuple:
        """Make ``update(x, y_pred, w)`` (``w < 0``: the revert of ``-w``) in one native call
        when it is a plain one: the kernel is built, ``y_pred`` is a known cluster that keeps an
        element, ``w`` an ``int``, ``x`` a list, tuple or float64 array it can read and accept
        (positional vectors: a stream of dicts takes the reference path).
        Returns ``False``, having changed nothing, otherwise: the caller then takes the reference
        path (:meth:`check`, :meth:`apply`), which raises the clear errors. O(d).

        With ``singleton`` (a silhouette's score of a point alone in its cluster), the same call
        also scores ``x`` as :meth:`score_point` does right after it, and returns
        ``(key, score, wfx)`` in place of ``True`` (``key`` ``None`` if the kernel could not
        score it). With ``points`` too (a silhouette's records, ``{(y_pred, key): (multiplicity, ((w, fx), ...))}``) and
        ``w > 0``, the point's record is kept there natively and ``wfx`` is
        ``w·round(score·2**53)``, the step of the silhouette's sum; else ``wfx`` is ``None``
        (the caller keeps the record). O(k·d) then.

        >>> s = ClusterSummaries(); s.update([0.0], "a")     # a new cluster: the reference path
        >>> if not s.fast([2.0], "a", 1):                    # a known one: native when built
        ...     s.update([2.0], "a")
        >>> s.cluster("a")[1:], s.fast([2.0], "b", 1)        # "b" is new: not taken
        ((array([1.]), 2.0), False)
        """
        kernel = self._kernel
        if kernel is None or self.features is not None or w.__class__ is not int or not 0 < self.n + w < MAX_TOTAL or abs(w) >= MAX_TOTAL:
            return False
        try:
            slot = self._index.get(y_pred)
        except TypeError:  # unhashable: the reference path names it
            return False
        if slot is None:
            return False
        guard = self._guard  # not thread-safe: a concurrent change raises (streameval.sync)
        if not guard.acquire(False):
            concurrent_use(self, "update" if w > 0 else "revert")
        try:
            got: bool | tuple = True
            if singleton is None:
                gm2 = kernel.update(slot, x, w, self.n, self._gm2, self.version + 1)
            else:  # update and score in one call (the index keeps its clusters: k is as after it)
                both = kernel.update_score(slot, x, w, self.n, self._gm2, self.version + 1, len(self._labels),
                                           singleton, len(self._index) >= 2, y_pred, points)
                if both is None:
                    return False
                gm2, got = both[0], both[1:]
            if gm2 is None:
                return False
            self._gm2 = gm2
            self.n += w
            self.version += 1
        finally:
            guard.release()
        return got

    def report_step(self, singleton: float, db, codes: bytes, names: tuple, keys: dict, heads: tuple,
                    silhouette: dict, account, mean_name):
        """A native callable ``step(x, y_pred, w)`` (``streameval._native.ReportStep``) that makes
        :meth:`fast` with the silhouette's ``singleton`` and ``points = silhouette["_points"]``,
        then :meth:`kernel_values` of ``codes`` written under ``names``
        (``SummaryKernel.update_values``, one kernel call), the silhouette's
        account of the point (its exact sums ``silhouette["_sum"]`` and ``["_scored"]`` moved
        by ``wfx`` and ``w``, or ``account(x, y_pred, w, key, score, None)`` for a record the
        kernel did not keep), its running mean written into the dict under ``mean_name``,
        and ``count``, ``k``, the labels and their sizes (:meth:`size_arrays`) under the four
        ``heads``, in one call, into and returning a copy of ``keys``: a
        ``ClusterReport``'s ``update_get``, the same state and dict, bit for bit, with no
        Python frame. ``silhouette`` is the silhouette view's own instance dict, which it gives
        (``IntrinsicEvaluator.report_step``); the step reads and writes these summaries'
        attributes (``n``, ``version``, the global scatter) in their instance dict, anew at
        each call. The step returns ``None``, having changed nothing, where :meth:`fast`
        would, where ``w`` is not a positive ``int``, where the kernel cannot give the values
        (fewer than two clusters, no distance cache bound yet), or when the guard is taken:
        the caller then makes the two calls. ``None`` (no step) without the native kernel.
        Cost: that of :meth:`fast` plus :meth:`kernel_values` plus O(k) for the sizes.

        >>> s = ClusterSummaries(); s.update([0.0], "a"); s.update([4.0], "b"); _ = s.centroid_distances()
        >>> sil = {"_points": {}, "_sum": 0, "_scored": 0}
        >>> step = s.report_step(0.0, None, bytes([0]), ("SSW",), {"n": 0, "k": 0, "labels": 0, "sizes": 0},
        ...                      ("n", "k", "labels", "sizes"), sil, None, "silhouette")
        >>> out = step([2.0], "a", 1)
        >>> out["n"], out["SSW"], out["silhouette"], out["sizes"].tolist(), s.n, sil["_scored"]
        (3, 2.0, 0.0, [2, 1], 3, 1)
        """
        if self._kernel is None or _ReportStep is None:
            return None
        return _ReportStep(self, vars(self), silhouette, account, db, singleton, codes, names, keys, heads,
                           mean_name)

    def check(self, x, y_pred, w=1, revert: bool = False) -> Change:
        """Check an update (or, with ``revert=True``, a revert) without changing anything; return
        the :class:`Change` that :meth:`apply` makes. O(d).

        ``update(x, p, w)`` is ``apply(check(x, p, w))``. Splitting the two lets a caller check one
        element against several summaries (and its own state) before any of them changes, so a
        rejected element leaves everything as it was. Raises what :meth:`update` / :meth:`revert`
        raise: :class:`~streameval.errors.InvalidVectorError`, a label or weight error, or
        :class:`~streameval.errors.UnknownElementError` for a revert the cluster cannot give back.

        >>> s = ClusterSummaries()
        >>> c = s.check([1.0, 2.0], "a", w=2)
        >>> c.vector.tolist(), c.label, c.w, s.n      # nothing changed yet
        ([1.0, 2.0], 'a', 2, 0)
        >>> s.apply(c); s.n
        2
        >>> s.check([1.0, 2.0], "a", w=3, revert=True)
        Traceback (most recent call last):
        ...
        streameval.errors.UnknownElementError: revert of (y_pred='a', w=3): the cluster holds 2 elements
        """
        check_label(y_pred, "y_pred")
        w = check_weight(w)
        arr = self.vector(x)
        if revert:
            slot = self._index.get(y_pred)
            have = 0 if slot is None else int(self._count[slot])
            if have < w:
                raise UnknownElementError(
                    f"revert of (y_pred={y_pred!r}, w={w}): the cluster holds {have} elements"
                )
        else:
            check_total(self.n, w, "the summaries")
        return Change(self, self.version, arr, y_pred, -w if revert else w, x)

    def apply(self, change: Change) -> None:
        """Make a change returned by :meth:`check` on these summaries, with no change in between
        (else :class:`ValueError`: the check may no longer hold). O(d).

        >>> s = ClusterSummaries()
        >>> c = s.check([0.0], "a"); s.update([1.0], "b")
        >>> s.apply(c)
        Traceback (most recent call last):
        ...
        ValueError: this change was checked against another state of the summaries: check it again
        """
        if change.summaries is not self or change.version != self.version:
            raise ValueError(
                "this change was checked against another state of the summaries: check it again"
            )
        guard = self._guard  # not thread-safe: a concurrent change raises (streameval.sync)
        if not guard.acquire(False):
            concurrent_use(self, "update" if change.w > 0 else "revert")
        try:
            self._apply_unguarded(change.vector, change.label, change.w, change.raw)
        finally:
            guard.release()

    def _apply_unguarded(self, x: np.ndarray, label, w: int, raw=None) -> None:
        if self.dim is None or self._mean.shape[1] != self.dim:
            self._fix_dim(x.shape[0])
        if self.features is None and isinstance(raw, dict):  # the first dict fixes the order
            self.features = list(raw)
            self._fpos = {f: i for i, f in enumerate(self.features)}
        slot = self._index.get(label)
        if slot is None:
            slot = self._new_slot(label)
        n = int(self._count[slot])
        n2 = n + w
        if n2 == 0:
            self._release(slot)
        else:
            self._mean[slot], self._m2[slot] = _welford(self._mean[slot], float(self._m2[slot]), n, n2, w, x)
            self._count[slot] = n2
        g2 = self.n + w
        if g2 == 0:
            self._gmean[:] = 0.0
            self._gm2 = 0.0
        else:
            self._gmean[:], self._gm2 = _welford(self._gmean, self._gm2, self.n, g2, w, x)
        self.n = g2
        self.version += 1
        self._touched[slot] = self.version

    def _new_slot(self, label) -> int:
        if self._free:
            slot = self._free.pop()
        else:
            slot = len(self._labels)
            if slot == len(self._count):
                self._grow(2 * slot)
            self._labels.append(None)
        self._labels[slot] = label
        self._index[label] = slot
        self._order = self._arrays = None
        return slot

    def _release(self, slot: int) -> None:
        del self._index[self._labels[slot]]
        self._order = self._arrays = None
        self._labels[slot] = None
        self._count[slot] = 0
        self._mean[slot] = 0.0
        self._m2[slot] = 0.0
        self._free.append(slot)

    def _grow(self, cap: int) -> None:
        cap = _capacity(cap)
        old = len(self._count)
        self._arrays = None  # its view of the counts is of the old array
        self._count = np.concatenate([self._count, np.zeros(cap - old, dtype=np.int64)])
        self._mean = np.vstack([self._mean, np.zeros((cap - old, self._mean.shape[1]))])
        self._m2 = np.concatenate([self._m2, np.zeros(cap - old)])
        self._touched = np.concatenate([self._touched, np.zeros(cap - old, dtype=np.int64)])
        if self._dist is not None:
            dist = np.zeros((cap, cap))
            dist[:old, :old] = self._dist
            self._dist = dist
        self._bind_kernel()

    def merge(self, other: ClusterSummaries) -> None:
        """Add the summaries of ``other`` into these (Chan's formula). O(k·d). ``other`` is unchanged.

        Both must have the same ``space``, and the same ``dim`` and ``features`` where both have
        them (fixed up front or by a first vector), else
        :class:`~streameval.errors.SettingsMismatchError` naming the setting and both values,
        nothing changed (an empty ``other`` included). Summaries without feature names (positional
        vectors) merge with named ones of the same dimension: positions are read in the named
        order, the rule :meth:`update` follows when dict and positional vectors meet. ``native``
        is no setting of the readings (the reference summaries give the same values) and may
        differ.

        >>> a, b = ClusterSummaries(), ClusterSummaries()
        >>> a.update([0.0], "x"); b.update([2.0], "x"); b.update([5.0], "y")
        >>> a.merge(b)
        >>> a.cluster("x")[1:], a.n
        ((array([1.]), 2.0), 3)
        """
        if not isinstance(other, ClusterSummaries):
            raise TypeError(f"can only merge ClusterSummaries, got {type(other).__name__}")
        # the settings that decide the readings, each refused (naming it and both values) before
        # anything changes, even when ``other`` is empty: it was built for other vectors
        check_same_settings("ClusterSummaries", [("space", self.space, other.space)])
        if self.dim is not None and other.dim is not None:
            check_same_settings("ClusterSummaries", [("dim", self.dim, other.dim)])
        if self.features is not None and other.features is not None:
            check_same_settings("ClusterSummaries", [("features", self.features, other.features)])
        if other.n == 0:
            return
        check_total(self.n, other.n, "summaries merged with others")
        if self.dim is None and other.dim is not None:  # other.n > 0: its dim is set
            self._fix_dim(other.dim)
        if self.features is None and other.features is not None:
            self.features = list(other.features)
            self._fpos = {f: i for i, f in enumerate(self.features)}
        for label, slot in other._index.items():
            nb = int(other._count[slot])
            mine = self._index.get(label)
            if mine is None:
                mine = self._new_slot(label)
            na = int(self._count[mine])
            self._mean[mine], self._m2[mine] = _chan(
                self._mean[mine], float(self._m2[mine]), na, other._mean[slot], float(other._m2[slot]), nb
            )
            self._count[mine] = na + nb
            self._touched[mine] = self.version + 1
        self._gmean[:], self._gm2 = _chan(self._gmean, self._gm2, self.n, other._gmean, other._gm2, other.n)
        self.n += other.n
        self.version += 1

    def copy(self) -> ClusterSummaries:
        """An independent copy with the same state, the native kernel's running sums and the
        cache of distances between means included, so that the copy and the original, given the
        same calls, read the same values bit for bit (as a pickle round trip does). O(k·d), plus
        O(k²) for the distance cache once it is made.

        >>> s = ClusterSummaries(); s.update([0.0], "a"); s.update([4.0], "b")
        >>> c = s.copy(); c.update([1.0], "a")
        >>> s.sizes(), c.sizes()
        ({'a': 1, 'b': 1}, {'a': 2, 'b': 1})
        """
        return copy.deepcopy(self)

    # -- reads -----------------------------------------------------------------
    @property
    def k(self) -> int:
        """The number of non-empty clusters. O(1)."""
        return len(self._index)

    def labels(self) -> list:
        """The labels of the non-empty clusters. O(k)."""
        return list(self._index)

    def sizes(self) -> dict:
        """``{label: count}`` of the non-empty clusters, in first-seen order. O(k)."""
        labels, counts = self.size_lists()
        return dict(zip(labels, counts))

    def size_lists(self) -> tuple[list, list]:
        """``(labels, counts)``: the non-empty clusters' labels and sizes as two lists, in
        first-seen order (the keys and values of :meth:`sizes`, without building the dict). O(k)
        for the two copies, in C loops: the order and the sizes are cached until a cluster is
        added or emptied, and the sizes of the clusters changed since the last call are patched in
        (found through the kernel's update log, O(changes), else by their versions, O(k)).

        >>> s = ClusterSummaries(); s.update([0.0], "b"); s.update([1.0], "a"); s.update([2.0], "b")
        >>> s.size_lists()
        (['b', 'a'], [2, 1])
        """
        cached = self._order
        if cached is None:
            index = self._index
            slots = np.fromiter(index.values(), dtype=np.intp, count=len(index))
            pos = {slot: i for i, slot in enumerate(index.values())}
            cached = self._order = (list(index), pos, self._count[slots].tolist(), self.version)
        elif cached[3] != self.version:
            labels, pos, counts, seen = cached
            kernel = self._kernel
            w = len(self._labels)
            changed = (kernel.changed_slots(seen, w, self.version) if kernel is not None
                       else np.flatnonzero(self._touched[:w] > seen).tolist())
            count = self._count
            for slot in changed:
                i = pos.get(slot)
                if i is not None:
                    counts[i] = int(count[slot])
            cached = self._order = (labels, pos, counts, self.version)
        return cached[0].copy(), cached[2].copy()

    def size_arrays(self) -> tuple[tuple, np.ndarray]:
        """``(labels, counts)``: the non-empty clusters' labels as a tuple and their sizes as a
        fresh int64 array, in first-seen order (what :meth:`size_lists` gives, without a Python
        object per cluster). The tuple is cached until a cluster is added or emptied (the same
        object in between: it is immutable); the sizes are one copy of a cached view of the counts
        (a gather once a cluster was emptied), O(k) in C.

        >>> s = ClusterSummaries(); s.update([0.0], "b"); s.update([1.0], "a"); s.update([2.0], "b")
        >>> labels, counts = s.size_arrays()
        >>> labels, counts.tolist()
        (('b', 'a'), [2, 1])
        """
        cached = self._arrays
        if cached is None:
            index = self._index
            slots = np.fromiter(index.values(), dtype=np.intp, count=len(index))
            # slots in first-seen order are 0, 1, 2 ... until a cluster is emptied: then a copy
            # of the first k counts (one memcpy of a view kept until the counts are reallocated
            # or a cluster is added or emptied), else a gather
            plain = bool((slots == np.arange(len(slots))).all())
            cached = self._arrays = (tuple(index), self._count[: len(slots)] if plain else None,
                                     None if plain else slots)
        labels, view, slots = cached
        if view is not None:
            return labels, view.copy()
        return labels, np.take(self._count, slots)

    def cluster(self, label):
        """``(count, mean, scatter)`` of cluster ``label`` (a copy of the mean), or ``(0, None, 0.0)``.
        O(d), the copy."""
        slot = self._index.get(label)
        if slot is None:
            return 0, None, 0.0
        return int(self._count[slot]), self._mean[slot].copy(), float(self._m2[slot])

    def global_summary(self):
        """``(N, mean, total scatter SST)`` over every element. O(d)."""
        return self.n, self._gmean.copy(), self._gm2

    @property
    def ssw(self) -> float:
        """Within-cluster sum of squares ``sum_j M2_j``. O(k); through the kernel, O(1) from its
        running sum (TwoSum: exact to ``~ε²`` of the scatters) plus the clusters changed since."""
        if self._kernel is not None:
            return self._kernel.ssw(len(self._labels))
        return float(self._m2[: len(self._labels)].sum())

    def ssb(self) -> float:
        """Between-cluster sum of squares ``sum_j b[j]·||mean_j - mean||²``. O(k·d).

        Computed from the means (not as ``SST - SSW``, which cancels when SSB is small).
        """
        if self.n == 0:
            return 0.0
        if self._ssb[0] != self.version:  # cached per version: SSB and CH views share one read
            if self._kernel is not None:
                self._ssb = (self.version, self._kernel.ssb(len(self._labels), self.n, self.version))
            else:
                counts, means, _ = self.slot_arrays()  # free slots have count 0
                diff = means - self._gmean
                self._ssb = (self.version, float(counts @ np.einsum("ij,ij->i", diff, diff)))
        return self._ssb[1]

    @property
    def capacity(self) -> int:
        """The number of slots allocated (``>= width``): per-slot caches sized by it need no
        resizing until the summaries grow. O(1).

        >>> s = ClusterSummaries(); s.update([0.0], "a")
        >>> s.width, s.capacity
        (1, 8)
        """
        return len(self._count)

    @property
    def width(self) -> int:
        """The number of slots in use, live or free: per-slot arrays are read as ``[:width]``."""
        return len(self._labels)

    def slot_arrays(self):
        """``(counts, means, scatters)`` over slots ``[:width]``, as views (no copy); free slots
        have count 0. O(1). Use :meth:`changed_since` to refresh caches kept per slot."""
        w = len(self._labels)
        return self._count[:w], self._mean[:w], self._m2[:w]

    def slot(self, label):
        """The slot of cluster ``label`` (or ``None``). O(1)."""
        return self._index.get(label)

    def kernel_values(self, codes: bytes, db=None, db_rebuild: bool = False):
        """The native kernel's values of the summary views coded ``codes``, one byte each (``SummaryKernel.values``:
        0 SSW, 1 SSB, 2 CH, 3 separation, 4 compactness, 5 Davies-Bouldin through the
        ``DaviesBouldinKernel`` ``db``) over these summaries now, or ``None`` when the kernel
        cannot give them (no kernel, fewer than two clusters, no distance cache bound yet). One
        call in place of the kernel, width, n, k and version read one by one. Cost: ``values``'.

        >>> s = ClusterSummaries(); s.update([0.0], "a"); s.update([4.0], "b")
        >>> s.update([2.0], "a"); s.kernel_values(bytes([0, 1, 2]))  # SSW, SSB, CH = 6·(3 - 2)/(2·(2 - 1))
        [2.0, 6.0, 3.0]
        """
        kernel = self._kernel
        if kernel is None:
            return None
        return kernel.values(len(self._labels), self.n, len(self._index), self.version, db, db_rebuild, codes)

    def kernel_values_into(self, codes: bytes, names: tuple, out: dict, db=None, db_rebuild: bool = False) -> bool:
        """:meth:`kernel_values`, each value written into ``out`` under the name at its position
        in ``names`` (``SummaryKernel.values_into``: no list made); ``False``, having written
        nothing, where :meth:`kernel_values` gives ``None``. Cost: :meth:`kernel_values`'.

        >>> s = ClusterSummaries(); s.update([0.0], "a"); s.update([4.0], "b"); s.update([2.0], "a")
        >>> out = {"n": 3}
        >>> s.kernel_values_into(bytes([0, 2]), ("SSW", "CH"), out), out
        (True, {'n': 3, 'SSW': 2.0, 'CH': 3.0})
        """
        kernel = self._kernel
        if kernel is None:
            return False
        return kernel.values_into(len(self._labels), self.n, len(self._index), self.version, db, db_rebuild, codes,
                                  names, out)

    def score_point(self, label, x, singleton: float):
        """The native kernel's step for a point ``x`` just added to cluster ``label``:
        ``(key, score)``, with ``score`` the silhouette of ``x`` (``None`` below two clusters),
        or ``None`` when the kernel cannot read ``x`` (or there is no kernel). One call per
        point in place of the kernel, slot, width and k read one by one. The score is
        ``(b - a) / max(a, b)`` with ``a``, ``b`` :class:`~streameval.intrinsic.Silhouette`'s mean
        dissimilarities. Cost: O(k) plus O(d) per cluster the triangle inequality cannot rule out.

        >>> s = ClusterSummaries(); s.update([0.0], "a"); s.update([4.0], "b")
        >>> s.update([1.0], "a"); s.score_point("a", [1.0], 0.0)[1]  # a = 1 (the rest of a), b = 9
        0.8888888888888888
        """
        kernel = self._kernel
        if kernel is None:
            return None
        index = self._index
        return kernel.score(index[label], x, len(self._labels), singleton, len(index) >= 2, self.version)

    def slots(self, labels) -> np.ndarray:
        """The slot of each label in ``labels``, as an int array. O(len(labels)).

        Raises :class:`~streameval.errors.UnknownElementError` naming a label no cluster has.

        >>> s = ClusterSummaries(); s.update([0.0], "a"); s.update([1.0], "b")
        >>> s.slots(["b", "a", "b"]).tolist()
        [1, 0, 1]
        """
        index = self._index
        try:
            return np.fromiter((index[label] for label in labels), dtype=np.intp)
        except KeyError as e:
            raise UnknownElementError(f"no cluster is labelled {e.args[0]!r}") from None

    def distances_from(self, v: np.ndarray) -> np.ndarray:
        """Distances from vector ``v`` (in this space) to the mean of each slot ``[:width]``:
        Euclidean ``||mean_j - v||`` (from the differences), or in the cosine space the cosine
        distance ``1 - cos(mean_j, v)`` (1 when a norm is 0), clipped to ``[0, 2]``. Free slots
        give the distance from the zero vector. O(k·d).

        >>> s = ClusterSummaries(); s.update([3.0, 4.0], "a"); s.update([0.0, 0.0], "b")
        >>> s.distances_from(np.zeros(2)).tolist()
        [5.0, 0.0]
        """
        return _distances(np.asarray(v, dtype=np.float64), self._mean[: len(self._labels)], self.space)

    def vectors(self, X) -> np.ndarray:
        """The rows of a 2-D numeric array as checked float64 vectors of this space (scaled to unit
        length in the cosine space): the batch form of :meth:`vector`. O(rows·d).

        Raises :class:`~streameval.errors.InvalidVectorError` for a wrong shape, values that are
        non-finite, of magnitude ``2**256`` or more, complex or text, or (cosine) zero vectors,
        giving their number.

        >>> ClusterSummaries(space="cosine").vectors([[3.0, 4.0], [0.0, 2.0]]).tolist()
        [[0.6, 0.8], [0.0, 1.0]]
        >>> ClusterSummaries().vectors([[1.0, float("inf")]])
        Traceback (most recent call last):
        ...
        streameval.errors.InvalidVectorError: 1 vector value(s) are NaN or infinite
        """
        arr = _vector_block(X, self.dim, copy=True)
        bad = int((~np.isfinite(arr)).sum())
        if bad:
            raise InvalidVectorError(f"{bad} vector value(s) are NaN or infinite")
        big = int((np.abs(arr) >= MAX_VECTOR_VALUE).sum())
        if big:
            raise InvalidVectorError(f"{big} vector value(s) have a magnitude of 2**256 or more")
        if self.space == "cosine":
            zero = int((~arr.any(axis=1)).sum())
            if zero:
                raise InvalidVectorError(
                    f"{zero} vector(s) have norm 0 (every value 0): the cosine space scales each "
                    "vector to unit length"
                )
            arr = unit_rows(arr)
        return arr

    def changed_since(self, version: int) -> np.ndarray:
        """Slots (live or freed) changed after ``version``. O(width)."""
        return np.flatnonzero(self._touched[: len(self._labels)] > version)

    def centroid_distances(self) -> np.ndarray:
        """The ``width × width`` matrix of distances between the means of slots (a view of the
        cache; rows and columns of free slots are 0): Euclidean, or cosine distance ``1 - cos`` in
        the cosine space (1 when a mean is zero).

        Refreshed for the clusters changed since the last call: O(changed·k·d); a full O(k²·d)
        the first time.
        """
        cap, w = len(self._count), len(self._labels)
        if self._dist is None or self._dist.shape[0] != cap:
            self._dist = np.zeros((cap, cap))
            self._dist_seen = -1
            if self._kernel is not None:
                self._kernel.bind_dist(self._dist)
        if self._kernel is not None and self._kernel.refresh(self._dist_seen, w):
            self._dist_seen = self.version
            return self._dist[:w, :w]
        changed = self.changed_since(self._dist_seen)
        if len(changed):
            live = self._count[:w] > 0
            means = self._mean[:w]
            row: np.ndarray | float
            for s in changed.tolist():
                if live[s]:
                    row = _distances(self._mean[s], means, self.space)
                    row[~live] = 0.0
                    row[s] = 0.0
                else:
                    row = 0.0
                self._dist[s, :w] = row
                self._dist[:w, s] = row
            self._dist_seen = self.version
        return self._dist[:w, :w]

    @classmethod
    def from_arrays(cls, count, mean, scatter, labels=None, space: str = "euclidean",
                    features=None) -> ClusterSummaries:
        """Summaries from per-cluster arrays, as an engine computes them (one row per cluster).

        ``count``: the ``k`` cluster sizes ``b[j]`` (positive integers; integral floats accepted);
        ``mean``: the ``(k, d)`` means ``mean_j``; ``scatter``: the ``k`` scatters
        ``M2_j = sum_{x in j} w·||x - mean_j||²`` (taken as 0 for a cluster of one element, as the stream
        has it); ``labels``: the ``k`` distinct cluster labels
        (default ``0..k-1``); ``space``: the space the arrays were computed in (in the cosine
        space they are summaries of unit vectors, taken as given). The global summary
        ``(N, mean, SST)`` is the pairwise tree of Chan merges over the clusters,
        ``mean = mean_a + (n_b/n)·(mean_b - mean_a)``, ``M2 = M2_a + M2_b + ||mean_b - mean_a||²·n_a·n_b/n``
        (``log2 k`` levels, each vectorised). Cost O(k·d).

        Raises :class:`ValueError` naming the first array that does not fit.

        >>> s = ClusterSummaries.from_arrays([2, 1], [[1.0, 0.0], [10.0, 10.0]], [2.0, 0.0],
        ...                                  labels=["a", "b"])
        >>> s.n, s.k, s.ssw, round(s.ssb(), 6)
        (3, 2, 2.0, 120.666667)
        >>> n, mean, sst = s.global_summary(); mean.round(6).tolist(), round(sst, 6)  # SST = SSW + SSB
        ([4.0, 3.333333], 122.666667)
        """
        if space not in SPACES:
            raise ValueError(f"space must be one of {SPACES}, got {space!r}")
        try:
            counts = np.asarray(count, dtype=np.float64).reshape(-1)
            means = np.asarray(mean, dtype=np.float64)
            m2 = np.asarray(scatter, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as e:
            raise ValueError(f"count, mean and scatter must be numeric arrays: {e}") from None
        k = len(counts)
        if k == 0 and means.size == 0:
            means = means.reshape(0, means.shape[-1] if means.ndim == 2 else 0)
        if means.ndim != 2 or means.shape[0] != k or len(m2) != k:
            raise ValueError(
                f"count ({k}), mean (shape {means.shape}) and scatter ({len(m2)}) must describe the "
                "same clusters: mean must be (k, d)"
            )
        if not (np.isfinite(counts).all() and (counts >= 1).all() and (counts == np.round(counts)).all()
                and (counts < MAX_TOTAL).all()):
            raise ValueError("count must hold integers >= 1 and < 2**57")
        ints = counts.astype(np.int64)
        if int(ints.sum()) >= MAX_TOTAL:
            raise ValueError("the counts add up to 2**57 or more")
        if not np.isfinite(means).all():
            raise ValueError("mean must hold finite numbers")
        if not (np.isfinite(m2).all() and (m2 >= 0).all()):
            raise ValueError("scatter must hold finite numbers >= 0")
        labels = list(range(k)) if labels is None else list(labels)
        if len(labels) != k:
            raise ValueError(f"{len(labels)} labels for {k} clusters")
        for label in labels:
            check_label(label, "label")
        if len(set(labels)) != k:
            raise ValueError("labels must be distinct")
        d = means.shape[1]
        new = cls(dim=d or None, features=features, space=space)
        if k:
            if k > new.capacity:
                new._grow(k)
            new._labels = labels
            new._index = {label: i for i, label in enumerate(labels)}
            new._count[:k] = ints
            new._mean[:k] = means
            new._m2[:k] = np.where(ints > 1, m2, 0.0)  # one element has no scatter
            new.n = int(ints.sum())
            new._gmean[:], new._gm2 = _chan_tree(ints, means, new._m2[:k])
        return new

    # -- state -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-safe dict of the state (floats round-trip exactly through JSON). O(k·d).

        >>> import json
        >>> s = ClusterSummaries(); s.update([1.0, 2.0], "a", w=2)
        >>> d = s.to_dict(); d["clusters"]
        [['a', 2, [1.0, 2.0], 0.0]]
        >>> ClusterSummaries.from_dict(json.loads(json.dumps(d))).to_dict() == d
        True
        """
        clusters = [
            [label_to_json(label), int(self._count[s]), self._mean[s].tolist(), float(self._m2[s])]
            for label, s in self._index.items()
        ]
        return {
            **header(_FORMAT, _VERSION),
            "space": self.space,
            "dim": self.dim,
            "features": None if self.features is None else [label_to_json(f) for f in self.features],
            "n": self.n,
            "mean": self._gmean.tolist(),
            "scatter": self._gm2,
            "clusters": clusters,
            "layout": self._layout(),
        }

    def _layout(self) -> dict:
        """What a copy needs, beyond the clusters, to read as these summaries bit for bit (the
        ``"layout"`` of :meth:`to_dict`): the capacity, each cluster's slot (in the clusters'
        order), the free slots in the order they are reused, the version and each slot's, and
        with the native kernel its running state (``SummaryKernel.state``, base64: SSB's moving
        anchor, the running sums of SSW, compactness and the distance cache, the versions they
        reflect) plus the distance cache's rows older than the summaries (its sum is of those
        entries; the others a copy recomputes to the same bits). O(width) plus the kernel
        state's O(capacity·d) and O(width) per stale row."""
        w = len(self._labels)
        kernel = self._kernel
        stale = None if kernel is None else kernel.stale_rows(w, self.version)
        dist = self._dist  # bound to the kernel whenever it has stale rows to give
        rows = None if stale is None or dist is None else [[j, dist[j, :w].tolist()] for j in stale]
        return {
            "capacity": len(self._count),
            "slots": list(self._index.values()),
            "free": list(self._free),
            "version": self.version,
            "touched": self._touched[:w].tolist(),
            "kernel": None if kernel is None else base64.b64encode(kernel.state()).decode("ascii"),
            "stale": rows,
        }

    @classmethod
    def from_dict(cls, state: dict) -> ClusterSummaries:
        """Rebuild summaries from :meth:`to_dict`'s output, validating it. O(k·d).

        Raises :class:`~streameval.errors.InvalidStateError` naming the first problem found.
        """
        check_header(state, _FORMAT, (1, _VERSION),
                     ("space", "dim", "features", "n", "mean", "scatter", "clusters")
                     + (("layout",) if state.get("version") == _VERSION else ()))
        if state["space"] not in SPACES:
            raise InvalidStateError(f"invalid space {state['space']!r}")
        dim, feats = state["dim"], state["features"]
        if dim is not None and not (isinstance(dim, int) and not isinstance(dim, bool) and dim >= 1):
            raise InvalidStateError(f"'dim' must be a positive int or null, got {dim!r}")
        if feats is not None:
            if not isinstance(feats, list) or len(feats) != dim:
                raise InvalidStateError("'features' must be a list with one name per dimension")
            try:
                feats = [label_from_json(f) for f in feats]
            except InvalidLabelError as e:
                raise InvalidStateError(f"'features': {e}") from None
        new = cls(dim=dim, features=feats, space=state["space"])
        n = state["n"]
        if not (isinstance(n, int) and not isinstance(n, bool) and 0 <= n < MAX_TOTAL):
            raise InvalidStateError(f"'n' must be an int >= 0 and < 2**57, got {n!r:.80}")
        clusters = state["clusters"]
        if not isinstance(clusters, list):
            raise InvalidStateError("'clusters' must be a list of [label, count, mean, scatter]")
        layout = state.get("layout") if state["version"] == _VERSION else None
        slots = None if layout is None else new._lay_out(layout)
        total = 0
        for i, c in enumerate(clusters):
            if not (isinstance(c, list) and len(c) == 4):
                raise InvalidStateError(f"clusters[{i}] must be [label, count, mean, scatter], got {c!r}")
            try:
                label, count, mean, m2 = label_from_json(c[0]), c[1], c[2], c[3]
                check_label(label, "label")
            except ValueError as e:
                raise InvalidStateError(f"clusters[{i}]: {e}") from None
            if label in new._index:
                raise InvalidStateError(f"clusters[{i}]: duplicate label {label!r}")
            if not (isinstance(count, int) and not isinstance(count, bool) and 1 <= count < MAX_TOTAL):
                raise InvalidStateError(
                    f"clusters[{i}]: count must be an int >= 1 and < 2**57, got {count!r:.80}"
                )
            mean = _state_vector(mean, dim, f"clusters[{i}] mean")
            m2 = _state_scatter(m2, f"clusters[{i}] scatter")
            if slots is None:
                slot = new._new_slot(label)
            elif i >= len(slots):
                raise InvalidStateError(f"'layout' slots has {len(slots)} entries for {len(clusters)} clusters")
            else:
                slot = slots[i]
                new._labels[slot] = label
                new._index[label] = slot
            new._count[slot], new._mean[slot], new._m2[slot] = count, mean, m2
            total += count
        if total != n:
            raise InvalidStateError(f"'n' is {n} but the clusters hold {total} elements")
        if slots is not None and len(slots) != len(clusters):
            raise InvalidStateError(f"'layout' slots has {len(slots)} entries for {len(clusters)} clusters")
        if n:
            new._gmean[:] = _state_vector(state["mean"], dim, "global mean")
            new._gm2 = _state_scatter(state["scatter"], "global scatter")
        new.n = n
        if layout is not None:
            new._restore_running(layout)
        return new

    def _lay_out(self, layout) -> list:
        """Take a saved ``"layout"`` (:meth:`_layout`) before the clusters are placed: the
        capacity, the slots in use (free ones included), the free list, the versions. Returns
        the slot of each cluster; raises :class:`InvalidStateError` on a layout
        that does not fit together. O(capacity)."""
        keys = ("capacity", "slots", "free", "version", "touched", "kernel", "stale")
        if not isinstance(layout, dict) or any(key not in layout for key in keys):
            raise InvalidStateError(f"'layout' must be a dict with the keys {list(keys)}")
        cap, slots, free, version, touched = (layout[key] for key in keys[:5])

        def ints(v, what, low, high):
            if not isinstance(v, list) or not all(isinstance(t, int) and not isinstance(t, bool) and low <= t < high for t in v):
                raise InvalidStateError(f"'layout' {what} must be a list of ints in [{low}, {high})")
            return v

        if not (isinstance(cap, int) and not isinstance(cap, bool) and cap >= 8 and _capacity(cap) == cap):
            raise InvalidStateError(f"'layout' capacity must be a capacity the summaries allocate, got {cap!r:.40}")
        if not (isinstance(version, int) and not isinstance(version, bool) and 0 <= version < 2**62):
            raise InvalidStateError(f"'layout' version must be an int >= 0, got {version!r:.40}")
        ints(touched, "touched", 0, version + 1)
        width = len(touched)
        ints(slots, "slots", 0, width)
        ints(free, "free", 0, width)
        if width > cap or sorted(slots + free) != list(range(width)):
            raise InvalidStateError("'layout' slots and free slots must share out the touched ones, one slot per cluster")
        if cap > len(self._count):
            self._grow(cap)
        self._labels = [None] * width
        self._free = list(free)
        self._touched[:width] = touched
        self.version = version
        return slots

    def _restore_running(self, layout: dict) -> None:
        """The native kernel's running state of a saved ``"layout"`` (:meth:`_layout`), once the
        clusters are in place: the distance cache made anew (the same bits as the original's
        entries that are current), its stale rows as saved, then the kernel state restored. A
        build without the kernel, or a layout without its state, keeps what the clusters give
        (the sums rebuilt from them on the next read). Raises :class:`InvalidStateError`,
        before any change to the kernel, on a state or rows that do not fit. O(width²·d) with a
        distance cache, else O(capacity·d)."""
        kernel, saved, stale = self._kernel, layout["kernel"], layout["stale"]
        if kernel is None or saved is None:
            return
        try:
            raw = base64.b64decode(saved.encode("ascii"), validate=True) if isinstance(saved, str) else None
        except (ValueError, UnicodeEncodeError):
            raw = None
        if raw is None:
            raise InvalidStateError("'layout' kernel must be the kernel state in base64")
        w = len(self._labels)
        rows = []
        if stale is not None:
            if not isinstance(stale, list) or not all(isinstance(r, list) and len(r) == 2 for r in stale):
                raise InvalidStateError("'layout' stale must be a list of [slot, row of distances]")
            for j, row in stale:
                if not (isinstance(j, int) and not isinstance(j, bool) and 0 <= j < w):
                    raise InvalidStateError(f"'layout' stale: slot {j!r:.40} is not in use")
                vals = _state_vector(row, w, f"'layout' stale row {j}")
                if (vals < 0).any():
                    raise InvalidStateError(f"'layout' stale row {j} must hold distances >= 0")
                rows.append((j, vals))
        before = kernel.state()
        if stale is not None:
            dist = self._dist = np.zeros((len(self._count),) * 2)
            kernel.bind_dist(dist)
            kernel.refresh(-1, w)  # every row made from the means, then the stale ones as saved
            for j, vals in rows:
                dist[j, :w] = vals
                dist[:w, j] = vals
            # the numpy path (no kernel) recomputes the stale rows: the slots changed after this
            self._dist_seen = min((int(self._touched[j]) for j, _ in rows), default=self.version + 1) - 1
        try:
            kernel.restore(raw)
        except ValueError as e:
            kernel.restore(before)
            raise InvalidStateError(f"'layout' kernel: {e}") from None

    def check_invariants(self) -> None:
        """Assert every invariant (counts positive and summing to N, slots consistent, finite means,
        scatters >= 0, global scatter = SSW + SSB up to rounding). O(k·d). For tests.

        >>> ClusterSummaries.from_arrays([1, 3], [[0.0], [4.0]], [0.0, 2.0]).check_invariants()
        """
        assert len(self._labels) <= len(self._count)
        total = 0
        for label, slot in self._index.items():
            assert self._labels[slot] == label
            assert self._count[slot] >= 1
            assert self._m2[slot] >= 0.0
            assert np.isfinite(self._mean[slot]).all()
            total += int(self._count[slot])
        for slot in self._free:
            assert self._labels[slot] is None and self._count[slot] == 0
        assert total == self.n
        if self.n:
            sst = self.ssw + self.ssb()
            assert abs(sst - self._gm2) <= 1e-7 * max(1.0, sst, self._gm2), (sst, self._gm2)

    def __repr__(self) -> str:
        return f"ClusterSummaries(space={self.space!r}, dim={self.dim}, n={self.n}, k={self.k})"


def _dense(y, m: int):
    """``(lut, uniques)`` for ``m`` integer labels in a dense non-negative range: ``lut[v]`` the
    code of label ``v`` (uniques in increasing order), by one ``bincount``; else ``None``. O(m)."""
    if isinstance(y, np.ndarray) and y.dtype.kind in "iu" and y.ndim == 1 and len(y) == m and m:
        lo, hi = int(y.min()), int(y.max())
        if lo >= 0 and hi < 4 * m + 1024:
            uniq = np.flatnonzero(np.bincount(y))
            lut = np.zeros(hi + 1, dtype=np.int64)
            lut[uniq] = np.arange(len(uniq))
            return lut, uniq.tolist()
    return None


def _group(y, m: int):
    """``(codes, uniques)`` of ``m`` cluster labels: :func:`_dense` for integer labels in a dense
    non-negative range, else :func:`~streameval.labels.factorize` (which names a missing or
    unhashable label). O(m)."""
    dense = _dense(y, m)
    if dense is not None:
        return dense[0][y], dense[1]
    codes, uniques = factorize(y, "y_pred")
    if len(codes) != m:
        raise ValueError(f"y_pred has {len(codes)} labels for {m} vectors")
    return codes, uniques


def _welford(mean: np.ndarray, m2: float, n: int, n2: int, w: int, x: np.ndarray):
    """``(mean', M2')`` after adding ``w`` copies of ``x`` (``w < 0`` removes them) to ``n``
    elements, leaving ``n2 = n + w > 0``."""
    delta = x - mean
    new_mean = mean + delta * (w / n2)
    m2 = m2 + (w * n / n2) * _sum_sq(delta)
    return new_mean, (m2 if m2 > 0.0 and n2 > 1 else 0.0)  # one element has no scatter


def _sum_sq(v: np.ndarray) -> float:
    """``sum_i v_i²``, each square rounded, added left to right: the order of the native kernel's
    ``dot`` and ``welford`` (``src/summaries.rs``), so the two give the same bits. ``v @ v`` would
    not: numpy hands it to BLAS, whose dot may fuse the products into the sum (OpenBLAS's does)
    or split it into lanes, by machine. O(d)."""
    return float(np.add.accumulate(v * v)[-1])  # an accumulation runs in order: out[i] = out[i-1] + in[i]


def _chan(ma: np.ndarray, m2a: float, na: int, mb: np.ndarray, m2b: float, nb: int):
    """Chan et al.'s merge of two ``(n, mean, M2)`` summaries."""
    if na == 0:
        return mb.copy(), m2b
    n = na + nb
    delta = mb - ma
    return ma + delta * (nb / n), m2a + m2b + float(delta @ delta) * (na * nb / n)


def _chan_tree(counts: np.ndarray, means: np.ndarray, m2: np.ndarray):
    """``(mean, M2)`` of the union of ``k >= 1`` summaries: Chan's merge applied pairwise, level by
    level (a balanced tree, so rounding grows with ``log k``), each level vectorised."""
    n, mu, q = counts.astype(np.float64), means.copy(), m2.astype(np.float64)
    while len(n) > 1:
        odd = len(n) % 2
        a, b = slice(0, len(n) - odd, 2), slice(1, len(n), 2)
        nn = n[a] + n[b]
        delta = mu[b] - mu[a]
        merged_mu = mu[a] + delta * (n[b] / nn)[:, None]
        merged_q = q[a] + q[b] + np.einsum("ij,ij->i", delta, delta) * (n[a] * n[b] / nn)
        if odd:
            nn = np.append(nn, n[-1])
            merged_mu = np.vstack([merged_mu, mu[-1:]])
            merged_q = np.append(merged_q, q[-1])
        n, mu, q = nn, merged_mu, merged_q
    return mu[0].copy(), float(q[0])


def _distances(m: np.ndarray, means: np.ndarray, space: str) -> np.ndarray:
    """Distances from ``m`` to each row of ``means``: Euclidean (from the differences, never from
    norms) or cosine distance ``1 - cos`` (1 when a norm is 0), clipped to ``[0, 2]``: never as
    ``1 - u·v``, which cancels to a relative error ``~ε/θ²`` between means at a small angle ``θ``
    (:mod:`streameval._unit`; about ``2d`` ulps whatever the angle). O(k·d)."""
    if space == "euclidean":
        diff = means - m
        return np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return cosine_distance(means, m)


def _state_vector(v, dim, what):
    if not isinstance(v, list) or (dim is not None and len(v) != dim):
        raise InvalidStateError(f"{what} must be a list of {dim} numbers")
    try:
        arr = np.array(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidStateError(f"{what} must hold numbers") from None
    if arr.ndim != 1 or not np.isfinite(arr).all():
        raise InvalidStateError(f"{what} must hold finite numbers")
    return arr


def _state_scatter(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise InvalidStateError(f"{what} must be a finite number >= 0, got {v!r}")
    return float(v)


def _vector_block(X, dim: int | None, *, copy: bool) -> np.ndarray:
    """``X`` as a C-contiguous 2-D float64 array, one row per vector, of dimension ``dim`` when it is
    known (a copy when ``copy``); :class:`InvalidVectorError` names what is wrong. O(m·d)."""
    arr = np.ascontiguousarray(real_array(X, "vector", copy=copy))  # refuses complex values and text
    if arr.ndim != 2 or (arr.shape[0] and arr.shape[1] == 0):
        raise InvalidVectorError(f"vectors must be a 2-D array with one row per vector, got shape {arr.shape}")
    if dim is not None and arr.shape[0] and arr.shape[1] != dim:
        raise InvalidVectorError(f"vectors have dimension {arr.shape[1]}, expected {dim}")
    return arr
