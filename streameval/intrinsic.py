"""Intrinsic (feature-based) cluster metrics: views over :class:`~streameval.ClusterSummaries`.

Each metric has ``update(x, y_pred, w=1)``, ``revert`` with the same arguments and ``get()``. It owns
summaries when used alone; an :class:`IntrinsicEvaluator` shares one set of summaries (one per
space: raw vectors, or unit vectors for the cosine metrics) across many views. With ``b[j]`` the
size, ``mean_j`` the mean and ``M2_j`` the scatter of cluster ``j``, ``N`` elements, ``k`` clusters
and ``mean`` the global mean:

========================  =================================================  ========  =========
class                     value                                              get()     Alink
========================  =================================================  ========  =========
SSW                       ``sum_j M2_j``                                     O(k)§     ssw
SSB                       ``sum_j b[j]·||mean_j - mean||²``                  O(k·d)§   ssb
CalinskiHarabasz          ``(SSB/(k-1)) / (SSW/(N-k))``                      O(k·d)§   vrc
Separation                mean ``||mean_i - mean_j||`` over pairs             O(k²)*§   sp
RMSCompactness            mean over clusters of ``sqrt(M2_j/b[j])``          O(k)§     (cp: not)
RMSDaviesBouldin          DB index with ``s_j = sqrt(M2_j/b[j])`` (q = 2)    O(k)*‡    (db: not)
CosineCompactness         mean over clusters of mean ``1 - cos(x, mean_j)``  O(k·d)    cp
CosineSSB                 ``sum_j b[j]·(1 - cos(mean_j, mean))²``            O(k·d)    ssb
CosineSeparation          mean ``1 - cos(mean_i, mean_j)`` over pairs        O(k²)*    sp
CosineDaviesBouldin       DB index with cosine compactness and distances     O(k)*‡    db
SqEuclideanSilhouette     silhouette, squared Euclidean distance             O(1)†     silhouette
CosineSilhouette          silhouette, cosine distance                        O(1)†     silhouette
========================  =================================================  ========  =========

\\* plus O(k·d) per cluster changed since the last read (cached distances between means).
‡ per cluster changed since the last read (and O(k) per row whose maximum fell); a full O(k²)
rebuild on the first read or when more than k/8 clusters changed.
§ natively: SSW, compactness and separation's sum O(1) (running sums), SSB and CH O(d) (anchored
sums), plus the clusters changed since the last read (``docs/intrinsic.md``).
† the silhouettes score each arriving point at update time (O(k·d)): ``get()`` is their running
mean (*prequential*); :meth:`Silhouette.final` is the exact silhouette of the stored points
against the final summaries (O(N·k·d)).

What is exact. Everything in the table is exact (up to float rounding) for the metric it names.
Alink's and scikit-learn's Euclidean *Compactness* and *Davies-Bouldin* use the mean (unsquared)
distance to the final centroid, which no summary of fixed size determines: they are exact in
:mod:`streameval.batch` and :func:`streameval.cluster_report`, and the streaming views offer the
root-mean-square scatter (Davies & Bouldin's q = 2) under their own names. In the cosine space the
mean distance *is* a function of the mean of unit vectors, so Alink's cosine compactness and
Davies-Bouldin are exact while streaming; its cosine SSW (``sum (1 - cos)²``) is not (batch only).

Undefined values are NaN: CH, DB, separation and silhouette with fewer than two clusters, and the
compactnesses with no element (SSW and SSB are then 0). CH is 1.0 when SSW is 0, DB is 0.0 when every scatter or every
distance between means is 0 (scikit-learn's conventions); pairs of coincident means are left out of
DB's maximum.

>>> ev = IntrinsicEvaluator([SSW(), SSB(), CalinskiHarabasz(), SqEuclideanSilhouette()])
>>> for x, p in [((0, 0), "a"), ((0, 1), "a"), ((5, 5), "b"), ((5, 6), "b")]:
...     ev.update(x, p)
>>> {k: round(v, 4) for k, v in ev.get().items()}
{'SSW': 1.0, 'SSB': 50.0, 'CalinskiHarabasz': 100.0, 'SqEuclideanSilhouette': 0.491}
>>> round(ev["SqEuclideanSilhouette"].final(), 4)  # scikit-learn's silhouette_score(metric="sqeuclidean")
0.98
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._unit import unit_half_sq, unit_parts
from ._validate import check_weight
from .errors import UnknownElementError
from .metrics.base import Described
from .summaries import ClusterSummaries

try:  # the native Davies-Bouldin cache (src/summaries_py.rs); the numpy one is the reference
    from ._native import DaviesBouldinKernel as _DaviesBouldinKernel
except ImportError:  # pragma: no cover - the pure-Python build
    _DaviesBouldinKernel = None  # type: ignore[assignment, misc]

__all__ = [
    "IntrinsicMetric",
    "INTRINSIC_REGISTRY",
    "IntrinsicEvaluator",
    "SSW",
    "SSB",
    "CalinskiHarabasz",
    "Separation",
    "RMSCompactness",
    "RMSDaviesBouldin",
    "CosineCompactness",
    "CosineSSB",
    "CosineSeparation",
    "CosineDaviesBouldin",
    "Silhouette",
    "SqEuclideanSilhouette",
    "CosineSilhouette",
    "sq_euclidean_dissimilarity",
    "cosine_dissimilarity",
    "default_intrinsic_metrics",
]

INTRINSIC_REGISTRY: dict = {}
"""Every public intrinsic metric class by name (the common tests run over it)."""
NAN = float("nan")
_NO = object()  # "this view cannot take the revert natively": the reference path decides
_FX = 2**53  # fixed-point scale of the silhouette sums (exact under update/revert)


class IntrinsicMetric(Described):
    """Base class of the intrinsic metrics: a view over :class:`ClusterSummaries`.

    Class metadata: ``bigger_is_better``, ``bounds`` (inclusive), ``space`` (``"euclidean"`` reads
    raw-vector summaries, ``"cosine"`` unit-vector ones), ``alink`` (the key of Alink's
    ``EvalClusterBatchOp`` output this metric equals exactly, or ``None``), ``needs_points``
    (``True`` for the silhouettes, whose exact value needs a second pass over the points against
    the final summaries: :meth:`Silhouette.score_sum`). Subclasses implement :meth:`value` from the
    summaries; every public subclass registers in ``INTRINSIC_REGISTRY``. The streaming
    :meth:`get` is ``value(self.summaries)``; an engine builds the summaries with
    :meth:`ClusterSummaries.from_arrays` and calls the same :meth:`value`.

    Cost: :meth:`update` and :meth:`revert` O(d) (the silhouettes O(k·d)); :meth:`get` and
    :meth:`value` the subclass's read cost (the module's table).

    ``SSB`` of the means 0 (one point) and 3 (two points) about the global mean 2 is
    ``1·2² + 2·1² = 6``; after the revert, means 0 and 4 about 2, ``1·2² + 1·2² = 8``:

    >>> m = SSB()
    >>> m.update([0.0], "a"); m.update([4.0], "b"); m.update([2.0], "b")
    >>> m.get()
    6.0
    >>> m.revert([2.0], "b"); m.get()
    8.0
    >>> m.value(m.summaries) == m.get(), m.summaries.n
    (True, 2)
    """

    bigger_is_better = True
    bounds = (0.0, math.inf)
    space = "euclidean"
    alink: str | None = None
    needs_points = False
    # the value from one ``SummaryKernel.read`` ``(n, k, (ssw, ssb, separation sum, compactness,
    # Davies-Bouldin))``, as ``value`` computes it through the kernel (IntrinsicEvaluator.get), or
    # None: this view is read by ``get``
    _from_read: Callable[..., float] | None = None
    # the same value's code for ``SummaryKernel.values`` (which computes it natively with the same
    # operations): 0 SSW, 1 SSB, 2 CH, 3 separation, 4 compactness; None: not there (Davies-Bouldin,
    # 5, is coded by the evaluator, which knows whether the view is its space's one)
    _code: int | None = None

    def __init_subclass__(cls, register=True, **kw):
        super().__init_subclass__(**kw)
        if register and not cls.__name__.startswith("_"):
            INTRINSIC_REGISTRY[cls.__name__] = cls

    def __init__(self, **params: Any) -> None:
        self._params = params
        self._summaries = ClusterSummaries(space=self.space)

    @property
    def summaries(self) -> ClusterSummaries:
        """The summaries this metric reads (shared when bound by an IntrinsicEvaluator). O(1)."""
        return self._summaries

    def _bind(self, summaries: ClusterSummaries) -> None:
        if summaries.space != self.space:
            raise ValueError(f"{self.name} reads {self.space!r} summaries, got {summaries.space!r}")
        if self._summaries is not summaries and self._summaries.n:
            raise ValueError(f"{self.name} has already seen {self._summaries.n} elements; bind a fresh metric")
        self._summaries = summaries

    # hooks for views that keep per-point state (the silhouettes); run after the summaries change
    def _after_update(self, x: np.ndarray, y_pred, w: int, raw=None) -> None:
        """Called with the checked vector (and the vector as given, ``raw``) after the summaries
        took ``w`` copies of it."""

    def _check_revert(self, x: np.ndarray, y_pred, w: int, raw=None):
        """Raise if a revert cannot be undone by this view; return a token for :meth:`_on_revert`."""

    def _fast_token(self, x, y_pred, w: int):
        """The token of :meth:`_check_revert` for the revert of ``w`` copies of ``x`` (as given),
        or ``_NO`` when this view cannot tell without the reference path (which then raises the
        clear error). Changes nothing."""

    def _on_revert(self, token) -> None:
        """Called after the summaries gave back the element."""

    def _after_fast(self, x, y_pred, w: int) -> None:
        """:meth:`_after_update` after the summaries took ``x`` (as given) by
        :meth:`ClusterSummaries.fast`."""

    def update(self, x, y_pred, w=1) -> None:
        """Add ``w`` copies of vector ``x`` to cluster ``y_pred``. O(d) (silhouettes: O(k·d))."""
        if self._summaries.fast(x, y_pred, w):
            self._after_fast(x, y_pred, w)
            return
        change = self._summaries.check(x, y_pred, w)
        self._summaries.apply(change)
        self._after_update(change.vector, y_pred, change.w, x)

    def revert(self, x, y_pred, w=1) -> None:
        """Undo :meth:`update` with the same arguments. O(d). A plain revert (an ``int`` weight,
        a known cluster that keeps an element, a vector the kernel reads) takes one native call,
        as :meth:`update` does; anything else the reference path."""
        s = self._summaries
        if w.__class__ is int and w > 0 and s.kernel is not None:
            token = self._fast_token(x, y_pred, w)
            if token is not _NO and s.fast(x, y_pred, -w):
                self._on_revert(token)
                return
        change = s.check(x, y_pred, w, revert=True)
        token = self._check_revert(change.vector, y_pred, -change.w, x)
        s.apply(change)
        self._on_revert(token)

    def get(self) -> float:
        """The current value, ``value(self.summaries)``: the subclass's formula over the
        summaries (see the class for its cost)."""
        return self.value(self._summaries)

    def value(self, s: ClusterSummaries) -> float:  # pragma: no cover - abstract
        """The value from summaries ``s``: the same code serves the streaming view (:meth:`get`)
        and the engines, which build ``s`` with :meth:`ClusterSummaries.from_arrays`. Each
        subclass states its formula (from the sizes ``b[j]``, means ``mean_j`` and scatters
        ``M2_j``) and its cost."""
        raise NotImplementedError


# -- sums of squares ---------------------------------------------------------------------------
class SSW(IntrinsicMetric):
    """Within-cluster sum of squares ``SSW = sum_j sum_{x in j} ||x - mean_j||² = sum_j M2_j``.

    Alink's ``ssw`` and the denominator of Calinski-Harabasz. O(k) per ``get``; 0 when empty.

    >>> m = SSW()
    >>> for x in ([0.0], [1.0], [2.0]):
    ...     m.update(x, "a")
    >>> m.get()
    2.0
    """

    bigger_is_better = False
    alink = "ssw"
    _from_read = staticmethod(lambda n, k, r: r[0])
    _code = 0

    def value(self, s):
        """``Σ_j M2_j`` from summaries ``s`` (the kept sum of the clusters' scatters); 0 when empty. O(k)
        (natively O(1), a running sum)."""
        return s.ssw


class SSB(IntrinsicMetric):
    """Between-cluster sum of squares ``SSB = sum_j b[j]·||mean_j - mean||²`` (Alink's ``ssb``).

    Computed from the means, O(k·d) per ``get``; 0 when empty.

    >>> m = SSB()
    >>> m.update([0.0], "a"); m.update([4.0], "b")
    >>> m.get()
    8.0
    """

    alink = "ssb"
    _from_read = staticmethod(lambda n, k, r: r[1])
    _code = 1

    def value(self, s):
        """``Σ_j b[j]·||mean_j - mean||²`` from summaries ``s``; 0 when empty. O(k·d) (natively O(d)
        from anchored sums, plus the clusters changed since the last read)."""
        return s.ssb()


class CalinskiHarabasz(IntrinsicMetric):
    """Calinski-Harabasz (variance ratio) ``(SSB/(k-1)) / (SSW/(N-k))``.

    scikit-learn's ``calinski_harabasz_score`` and Alink's ``vrc``. NaN when ``k < 2``; 1.0 when
    SSW is 0 (scikit-learn). O(k·d) per ``get``.

    >>> m = CalinskiHarabasz()
    >>> for x, p in [([0.0], "a"), ([1.0], "a"), ([10.0], "b"), ([11.0], "b")]:
    ...     m.update(x, p)
    >>> m.get()
    200.0
    """

    alink = "vrc"

    @staticmethod
    def _ratio(n, k, ssw, ssb):
        if k < 2:
            return NAN
        if ssw == 0.0:
            return 1.0
        return ssb * (n - k) / (ssw * (k - 1))

    _from_read = staticmethod(lambda n, k, r: CalinskiHarabasz._ratio(n, k, r[0], r[1]))
    _code = 2

    def value(self, s):
        """``(SSB/(k-1)) / (SSW/(N-k))`` from summaries ``s``; NaN when ``k < 2``, 1.0 when
        ``SSW = 0``. O(k·d), as :class:`SSB`."""
        k = s.k
        return NAN if k < 2 else self._ratio(s.n, k, s.ssw, s.ssb())


# -- distances between means -----------------------------------------------------------------------
def _separation_read(n, k, r):
    if k < 2:
        return NAN
    return None if r[2] is None else r[2] / (k * (k - 1))


def _separation(s: ClusterSummaries) -> float:
    k = s.k
    if k < 2:
        return NAN
    dist = s.centroid_distances()
    total = None if s.kernel is None else s.kernel.dist_sum(s.width)
    return float(dist.sum() if total is None else total) / (k * (k - 1))


def _compactness(s: ClusterSummaries, scatter) -> float:
    """The mean over the live clusters of the per-cluster ``scatter`` (NaN when empty)."""
    if s.k == 0:
        return NAN
    if s.kernel is not None:
        return s.kernel.compactness(s.width, s.k)
    live = s.slot_arrays()[0] > 0
    return float(scatter(s, slice(0, s.width))[live].mean())


def _rms_scatter(s: ClusterSummaries, slots) -> np.ndarray:
    """``sqrt(M2_j / b[j])`` for ``slots`` (0 for free slots)."""
    counts, _, m2 = s.slot_arrays()
    c = counts[slots]
    return np.sqrt(m2[slots] / np.maximum(c, 1)) * (c > 0)


def _cosine_scatter(s: ClusterSummaries, slots) -> np.ndarray:
    """Per slot, the mean of ``1 - cos(x, mean_j)`` = ``1 - ||mean_j||`` for unit vectors, computed
    as ``(M2_j/b[j]) / (1 + ||mean_j||)`` (as ``M2_j/b[j] = 1 - ||mean_j||²``), which keeps its
    digits for tight clusters; 0 for free slots."""
    counts, means, m2 = s.slot_arrays()
    c, mu = counts[slots], means[slots]
    norms = np.sqrt(np.einsum("...j,...j->...", mu, mu))
    return (m2[slots] / np.maximum(c, 1)) / (1.0 + norms) * (c > 0)


class _DaviesBouldinCache:
    """Incremental Davies-Bouldin: ``R[i,j] = (S_i + S_j)/d_ij`` (0 where ``d_ij = 0`` or a slot
    is free), each row's maximum and its position. A changed cluster ``c`` rewrites row and column
    ``c`` (O(k)); a row whose maximum sat in column ``c`` and fell is rescanned (O(k) each). Many
    changes at once, or a first read: one full O(k²) rebuild."""

    def __init__(self, scatter: Callable[..., np.ndarray]) -> None:
        self.scatter = scatter  # (summaries, slots) -> per-slot scatter S
        self.summaries: ClusterSummaries | None = None
        self.seen = -1
        self.R: np.ndarray | None = None
        self.native: Any = None  # the native cache (DaviesBouldinKernel) over summaries with a kernel

    def __getstate__(self):
        # the native cache as its bytes (DaviesBouldinKernel.state): its running sum of the row
        # maxima depends on the order of the changes, so a cache rebuilt on the next read could
        # differ from the original's in the last bit; restored, every later read is the same
        state = dict(self.__dict__)
        state["native"] = None if self.native is None else self.native.state()
        return state

    def __setstate__(self, state):
        state = dict(state)
        native = state["native"]
        if native is not None:
            if _DaviesBouldinKernel is None:  # pragma: no cover - pickled by a native build
                state["native"], state["summaries"] = None, None  # the reference rebuilds on the next read
            else:
                state["native"] = _DaviesBouldinKernel()
                state["native"].restore(native)
        self.__dict__.update(state)

    def value(self, s: ClusterSummaries) -> float:
        if s.k < 2:
            return NAN
        d = s.centroid_distances()
        if s.kernel is not None:
            if self.native is None:
                self.native = _DaviesBouldinKernel()
            got = self.native.value(s.kernel, s.width, s.version, self.summaries is not s)
            if got is not None:
                self.summaries = s
                return got
        w = s.width
        changed = s.changed_since(self.seen)
        cap = s.capacity
        if self.summaries is not s or self.R is None or self.R.shape[0] != cap or 8 * len(changed) > w:
            self._rebuild(s, d, cap)
        else:
            for c in changed.tolist():
                self._change(s, d, c)
        self.seen = s.version
        live = s.slot_arrays()[0] > 0
        return float(self.M[:w][live].mean())

    def _rebuild(self, s, d, cap):
        w = d.shape[0]
        self.summaries = s
        self.R, self.M, self.A, self.S = np.zeros((cap, cap)), np.zeros(cap), np.zeros(cap, np.intp), np.zeros(cap)
        self.S[:w] = self.scatter(s, slice(0, w))
        with np.errstate(divide="ignore"):
            inv = np.where(d > 0, 1.0 / d, 0.0)
        r = self.R[:w, :w]
        np.add.outer(self.S[:w], self.S[:w], out=r)
        r *= inv
        self.M[:w] = r.max(axis=1)
        self.A[:w] = r.argmax(axis=1)

    def _change(self, s, d, c):
        w = d.shape[0]
        R, M, A, S = self.R, self.M[:w], self.A[:w], self.S
        S[c] = self.scatter(s, c)
        dc = d[c]
        with np.errstate(divide="ignore"):
            row = (S[c] + S[:w]) * np.where(dc > 0, 1.0 / dc, 0.0)
        old = R[:w, c].copy()
        R[c, :w] = row
        R[:w, c] = row
        up = row >= M
        M[up] = row[up]
        A[up] = c
        fell = np.flatnonzero((c == A) & (row < old) & ~up)
        for i in fell.tolist():
            A[i] = int(R[i, :w].argmax())
            M[i] = R[i, A[i]]
        A[c] = int(row.argmax())
        M[c] = row[A[c]]


class Separation(IntrinsicMetric):
    """Mean Euclidean distance between the means of pairs of clusters (Alink's ``sp``):
    ``2/(k(k-1))·sum_{i<j} ||mean_i - mean_j||``.

    NaN when ``k < 2``. Cost per ``get``: O(k²) plus O(k·d) per cluster changed since the last read.

    >>> m = Separation()
    >>> for x, p in [([0.0, 0.0], 1), ([3.0, 4.0], 2), ([6.0, 8.0], 3)]:
    ...     m.update(x, p)
    >>> round(m.get(), 12)
    6.666666666667
    """

    alink = "sp"
    _from_read = staticmethod(_separation_read)
    _code = 3

    def value(self, s):
        """``2/(k(k-1))·Σ_{i<j} ||mean_i - mean_j||`` from summaries ``s``; NaN when ``k < 2``.
        O(k²) plus O(k·d) per cluster changed since the last read."""
        return _separation(s)


class RMSCompactness(IntrinsicMetric):
    """Root-mean-square compactness: the mean over clusters of ``sqrt(M2_j / b[j])``, the RMS
    distance of a cluster's points to its mean.

    Not Alink's/scikit-learn's compactness (their mean of *unsquared* distances is batch only:
    :func:`streameval.batch.compactness_score`); it is never larger than RMS. NaN when empty. O(k).

    >>> m = RMSCompactness()
    >>> for x in ([0.0], [2.0]):
    ...     m.update(x, "a")
    >>> m.get()
    1.0
    """

    bigger_is_better = False
    _from_read = staticmethod(lambda n, k, r: r[3])
    _code = 4

    def value(self, s):
        """``(1/k)·Σ_j sqrt(M2_j / b[j])`` over the live clusters of summaries ``s``; NaN when
        empty. O(k)."""
        return _compactness(s, _rms_scatter)


class RMSDaviesBouldin(IntrinsicMetric):
    """Davies-Bouldin index with q = 2 scatter: ``mean_i max_{j≠i} (S_i + S_j) / ||mean_i - mean_j||``
    with ``S_j = sqrt(M2_j / b[j])`` (Davies & Bouldin's general form with q = 2, p = 2).

    Not scikit-learn's/Alink's ``davies_bouldin_score`` (q = 1, mean unsquared distance; batch only:
    :func:`streameval.batch.davies_bouldin_score`). NaN when ``k < 2``. Cost per ``get``: O(k²) plus
    O(k·d) per cluster changed since the last read.

    >>> m = RMSDaviesBouldin()
    >>> for x, p in [([0.0], "a"), ([2.0], "a"), ([10.0], "b"), ([12.0], "b")]:
    ...     m.update(x, p)
    >>> m.get()
    0.2
    """

    bigger_is_better = False

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._cache = _DaviesBouldinCache(_rms_scatter)

    def value(self, s):
        """``(1/k)·Σ_i max_{j≠i} (S_i + S_j) / ||mean_i - mean_j||``, ``S_j = sqrt(M2_j/b[j])``,
        from summaries ``s``; NaN when ``k < 2``. O(k) per changed cluster (a full O(k²) rebuild
        on the first read or after many changes)."""
        return self._cache.value(s)


# -- cosine ----------------------------------------------------------------------------------------
class CosineCompactness(IntrinsicMetric):
    """Cosine compactness: the mean over clusters of the mean cosine distance ``1 - cos(x, mean_j)``
    of a cluster's points to its mean (Alink's ``cp`` with ``distanceType=COSINE``).

    Exact while streaming: for unit vectors ``x`` the mean of ``1 - cos(x, mean_j)`` is
    ``1 - ||mean_j||``, a function of the mean of the unit vectors. NaN when empty. O(k·d).

    >>> m = CosineCompactness()
    >>> m.update([1.0, 0.0], "a"); m.update([0.0, 2.0], "a")
    >>> round(m.get(), 12)
    0.292893218813
    """

    bigger_is_better = False
    bounds = (0.0, 1.0)
    space = "cosine"
    alink = "cp"
    _from_read = staticmethod(lambda n, k, r: r[3])
    _code = 4

    def value(self, s):
        """``(1/k)·Σ_j (1 - ||mean_j||)`` over the live clusters of unit-vector summaries ``s``
        (computed as ``(M2_j/b[j]) / (1 + ||mean_j||)``); NaN when empty. O(k·d)."""
        return _compactness(s, _cosine_scatter)


class CosineSSB(IntrinsicMetric):
    """``sum_j b[j]·(1 - cos(mean_j, mean))²`` over unit vectors (Alink's ``ssb`` with cosine
    distance). O(k·d); 0 when empty.

    >>> m = CosineSSB()
    >>> m.update([1.0, 0.0], "a"); m.update([0.0, 1.0], "b")
    >>> round(m.get(), 12)
    0.171572875254
    """

    space = "cosine"
    alink = "ssb"
    _from_read = staticmethod(lambda n, k, r: r[1])
    _code = 1

    def value(self, s):
        """``Σ_j b[j]·(1 - cos(mean_j, mean))²`` from unit-vector summaries ``s``; 0 when empty. O(k·d)."""
        if s.n == 0:
            return 0.0
        if s.kernel is not None:
            return s.kernel.cosine_ssb(s.width)
        counts = s.slot_arrays()[0]
        d = s.distances_from(s.global_summary()[1])
        return float(counts @ (d * d))


class CosineSeparation(IntrinsicMetric):
    """Mean cosine distance ``1 - cos(mean_i, mean_j)`` between the means (of unit vectors) of
    pairs of clusters (Alink's ``sp`` with cosine distance). NaN when ``k < 2``. O(k²) plus O(k·d)
    per changed cluster.

    >>> m = CosineSeparation()
    >>> m.update([1.0, 0.0], "a"); m.update([0.0, 3.0], "b")
    >>> m.get()
    1.0
    """

    bounds = (0.0, 2.0)
    space = "cosine"
    alink = "sp"
    _from_read = staticmethod(_separation_read)
    _code = 3

    def value(self, s):
        """``2/(k(k-1))·Σ_{i<j} (1 - cos(mean_i, mean_j))`` from unit-vector summaries ``s``;
        NaN when ``k < 2``. O(k²) plus O(k·d) per cluster changed since the last read."""
        return _separation(s)


class CosineDaviesBouldin(IntrinsicMetric):
    """Davies-Bouldin index with cosine compactness and cosine distance between means: Alink's
    ``db`` with ``distanceType=COSINE``, exact while streaming. NaN when ``k < 2``. O(k²) plus
    O(k·d) per changed cluster.

    >>> m = CosineDaviesBouldin()
    >>> for x, p in [([1.0, 0.0], "a"), ([1.0, 0.1], "a"), ([0.0, 1.0], "b")]:
    ...     m.update(x, p)
    >>> round(m.get(), 6)
    0.001307
    """

    bigger_is_better = False
    space = "cosine"
    alink = "db"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._cache = _DaviesBouldinCache(_cosine_scatter)

    def value(self, s):
        """``(1/k)·Σ_i max_{j≠i} (S_i + S_j) / (1 - cos(mean_i, mean_j))`` with ``S_j`` the
        cosine compactness of cluster ``j``, from unit-vector summaries ``s``; NaN when ``k < 2``.
        O(k) per changed cluster (a full O(k²) rebuild on the first read or after many changes)."""
        return self._cache.value(s)


# -- silhouettes -----------------------------------------------------------------------------------
def sq_euclidean_dissimilarity(xs, own, counts, means, scatters):
    """Mean squared Euclidean distances from points to the members of each cluster, from the
    summaries alone: the one function behind :class:`SqEuclideanSilhouette` in a stream and in
    the engines' silhouette pass.

    ``xs``: ``(m, d)`` points; ``own``: the slot of each point's cluster; ``counts``, ``means``,
    ``scatters``: ``b[j]``, ``mean_j``, ``M2_j`` per slot (count 0 at a free slot). Returns
    ``(diss, a)``: ``diss[i, j] = ||x_i - mean_j||² + M2_j/b[j]``, the mean over the members of
    cluster ``j``, and ``a[i] = (b·||x_i - mean||² + M2)/(b - 1)`` over the *other* members of its
    own cluster (0 for a point alone in it). Cost O(m·k·d).

    >>> diss, a = sq_euclidean_dissimilarity(np.array([[0.0]]), np.array([0]), np.array([2, 1]),
    ...                                      np.array([[0.5], [9.0]]), np.array([0.5, 0.0]))
    >>> diss.tolist(), a.tolist()  # to {0, 1}: (0 + 1)/2; to {9}: 81; to the other member: 1
    ([[0.5, 81.0]], [1.0])
    """
    diff = xs[:, None, :] - means[None, :, :]
    sq = np.einsum("ijk,ijk->ij", diff, diff)
    diss = sq + (scatters / np.maximum(counts, 1))[None, :]
    b = counts[own].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.where(b > 1, (b * sq[np.arange(len(xs)), own] + scatters[own]) / np.where(b > 1, b - 1, 1.0), 0.0)
    return diss, a


def cosine_dissimilarity(xs, own, counts, means, scatters):
    """Mean cosine distances from unit vectors to the members of each cluster, from the summaries
    of unit vectors: ``diss[i, j] = 1 - x_i·mean_j`` (clipped to ``[0, 2]``) and, to the other
    members of its own cluster, ``a[i] = b·(1 - x_i·mean)/(b - 1)`` (0 alone). Same arguments and
    result as :func:`sq_euclidean_dissimilarity`. Cost O(m·k·d).

    ``1 - x·mean_j`` is computed without cancellation as ``(1 - r) + r·||x - mean_j/r||²/2`` with
    ``r = ||mean_j||`` and ``1 - r = (M2_j/b[j])/(1 + r)`` (for unit vectors
    ``M2_j/b[j] = 1 - r²``): both terms are non-negative sums, so a point close to a tight
    cluster's mean keeps its digits (``1 - fl(x·mean_j)`` would keep only an absolute few ulps of
    1). A zero mean gives 1.

    >>> diss, a = cosine_dissimilarity(np.array([[1.0, 0.0]]), np.array([0]), np.array([2, 1]),
    ...                                np.array([[0.5, 0.5], [0.0, 1.0]]), np.array([1.0, 0.0]))
    >>> diss.tolist(), a.tolist()
    ([[0.5, 1.0]], [1.0])
    """
    hi, lo, r = unit_parts(means)
    spread = (scatters / np.maximum(counts, 1)) / (1.0 + r)  # 1 - r, from the scatter
    xh, xl, _ = unit_parts(xs)  # x is unit up to rounding: its own hi + lo keeps the identity exact
    near = unit_half_sq(xh[:, None, :], xl[:, None, :], hi[None, :, :], lo[None, :, :])  # 1 - cos(x, mean_j)
    diss = np.clip(spread[None, :] + r[None, :] * np.where(r > 0, near, 1.0), 0.0, 2.0)
    b = counts[own].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.where(b > 1, b * diss[np.arange(len(xs)), own] / np.where(b > 1, b - 1, 1.0), 0.0)
    return diss, a


class Silhouette(IntrinsicMetric, register=False):
    """Base of the streaming silhouettes: ``s(x) = (b - a) / max(a, b)`` where ``a`` is the mean
    distance from ``x`` to the other members of its cluster and ``b`` the smallest mean distance to
    the members of another cluster, both exact from the summaries (:attr:`dissimilarity`).

    - :meth:`get`: *prequential* silhouette, the mean of ``s(x)`` over arriving points, each scored
      against the summaries right after it joined them (a point that arrives while it is in the
      only cluster is not scored). :meth:`revert` removes the score the element got.
    - :meth:`final`: the exact silhouette of every stored point against the current summaries:
      after a stream, the batch silhouette of the whole data set. An engine, which has every point,
      computes the same with :meth:`score_sum` over its partitions and ``value(s, sums)``.

    ``singleton`` is the score of a point alone in its cluster: 0.0 (scikit-learn, the default) or
    1.0 (Alink). ``s = 0`` when ``a = b = 0``. Distances are clipped at 0 against rounding.
    The view stores each distinct (cluster, vector) with its multiplicity and the scores it got:
    memory O(distinct points · d). Update O(k·d); get O(1); final O(N·k·d).

    Prequentially, ``[0]`` arrives alone (not scored), ``[2]`` is a singleton (0.0), and ``[0.5]``
    has ``a = 0.5² = 0.25``, ``b = 1.5² = 2.25``: ``s = 2/2.25``, so :meth:`get` is
    ``(0 + 8/9)/2``. At the end ``[0]`` has ``a = 0.25``, ``b = 4`` (``s = 15/16``): :meth:`final`
    is ``(15/16 + 8/9 + 0)/3``:

    >>> m = SqEuclideanSilhouette()
    >>> for x, p in [([0.0], "a"), ([2.0], "b"), ([0.5], "a")]:
    ...     m.update(x, p)
    >>> round(m.get(), 6), round(m.final(), 6)
    (0.444444, 0.608796)
    """

    bounds = (-1.0, 1.0)
    needs_points = True
    dissimilarity: Callable[..., tuple] = staticmethod(sq_euclidean_dissimilarity)

    def __init__(self, singleton: float = 0.0):
        if isinstance(singleton, bool) or not isinstance(singleton, (int, float)) or not -1 <= singleton <= 1:
            raise ValueError(f"singleton must be a number in [-1, 1] (0.0: scikit-learn, 1.0: Alink), got {singleton!r}")
        super().__init__(**({} if singleton == 0.0 else {"singleton": singleton}))
        self.singleton = float(singleton)
        self._points: dict = {}  # (label, vector bytes) -> (multiplicity, ((w, fixed score), ...)): see _record
        self._sum = 0  # sum of w·score, fixed point (scale 2**53): exact under update/revert
        self._scored = 0  # total weight of scored points

    def _scores(self, s: ClusterSummaries, xs: np.ndarray, own: np.ndarray) -> np.ndarray:
        """Silhouette of each row of ``xs`` (a member of the cluster in slot ``own``) against
        summaries ``s``; NaN where no other cluster exists."""
        counts, means, m2 = s.slot_arrays()
        free = counts == 0
        out = np.empty(len(xs))
        step = max(1, 2_000_000 // max(1, means.size))
        rows = np.arange(len(xs))
        for lo in range(0, len(xs), step):
            sl = slice(lo, lo + step)
            diss, a = self.dissimilarity(xs[sl], own[sl], counts, means, m2)
            diss[rows[sl] - lo, own[sl]] = np.inf
            diss[:, free] = np.inf
            b = diss.min(axis=1)
            big = np.maximum(a, b)
            with np.errstate(invalid="ignore", divide="ignore"):
                val = np.where(big > 0, (b - a) / np.where(big > 0, big, 1.0), 0.0)
            val[counts[own[sl]] == 1] = self.singleton
            val[~np.isfinite(b)] = np.nan
            out[sl] = val
        return out

    def score_sum(self, s: ClusterSummaries, xs, labels, w=None) -> tuple[float, float]:
        """``(sum_i w_i·s(x_i), sum_i w_i)``: the silhouette scores of points ``xs`` (rows in the
        space of ``s``: see :meth:`ClusterSummaries.vectors`) of clusters ``labels`` against
        summaries ``s``, with multiplicities ``w`` (default 1). ``(0.0, 0.0)`` when ``s`` has fewer
        than two clusters. Sums over disjoint parts of the data add up; ``value(s, total)`` is the
        silhouette. Cost O(m·k·d), in blocks of about 2·10⁶ floats.

        >>> s = ClusterSummaries.from_arrays([2, 1], [[0.5], [9.0]], [0.5, 0.0])
        >>> m = SqEuclideanSilhouette()
        >>> part = m.score_sum(s, np.array([[0.0], [1.0]]), [0, 0])
        >>> rest = m.score_sum(s, np.array([[9.0]]), [1])
        >>> round(m.value(s, (part[0] + rest[0], part[1] + rest[1])), 6)  # singleton scores 0
        0.657343
        """
        if s.k < 2:
            return 0.0, 0.0
        xs = np.asarray(xs, dtype=np.float64)
        ws = np.ones(len(xs)) if w is None else np.asarray(w, dtype=np.float64)
        scores = self._scores(s, xs, s.slots(labels))
        return float(ws @ scores), float(ws.sum())

    def _key(self, x: np.ndarray, y_pred, raw):
        """The record key of a point: its cluster and the bytes of its checked vector, as the
        kernel checks it when it reads ``raw`` (so that a point that entered by either path is
        found by both: in the cosine space the two normalise with sums in different orders),
        else numpy's. ``+ 0.0`` folds -0.0 into 0.0."""
        kernel = self._summaries.kernel
        key = None if kernel is None or raw is None else kernel.key(raw)
        return y_pred, ((x + 0.0).tobytes() if key is None else key)

    def _after_update(self, x, y_pred, w, raw=None):
        s = self._summaries
        score = float(self._scores(s, x[None, :], np.array([s.slot(y_pred)]))[0]) if s.k >= 2 else None
        self._record(self._key(x, y_pred, raw), w, score)

    def _after_fast(self, x, y_pred, w):
        s = self._summaries
        got = s.score_point(y_pred, x, self.singleton)
        if got is None:  # pragma: no cover - the kernel read x a moment ago
            self._after_update(s.vector(x), y_pred, w)
            return
        self._record((y_pred, got[0]), w, got[1])

    def _account(self, x, y_pred, w, key, score, wfx) -> None:
        """Take a one-call update's ``(key, score, wfx)`` (:meth:`ClusterSummaries.fast`):
        ``wfx`` set, the record was kept natively, as :meth:`_record` keeps it, and only the
        sums move here; else the record is kept here. O(1)."""
        if wfx is not None:
            self._sum += wfx
            self._scored += w
        elif key is None:  # pragma: no cover - the kernel read x a moment ago
            self._after_fast(x, y_pred, w)
        else:  # not scored (fewer than two clusters), or a score that is not finite: _record raises
            self._record((y_pred, key), w, score)

    def _record(self, key, w, score):
        """Keep the update's record: its weight and fixed-point score under ``key``, as
        ``(multiplicity, ((w, fx), ...))``: tuples of numbers, which the garbage collector stops
        tracking once it has seen them (lists it would traverse at every collection of their
        generation, a cost that grew with the stored points); most points arrive once, so the
        rare second record rebuilds the small tuple. O(1) (O(records of the point) to add one
        more to it). Records pickled as lists ``[w, [(w, fx), ...]]`` read the same."""
        fx = None
        if score is not None:
            fx = round(score * _FX)
            self._sum += w * fx
            self._scored += w
        points = self._points
        rec = points.get(key)
        points[key] = (w, ((w, fx),)) if rec is None else (rec[0] + w, (*rec[1], (w, fx)))

    def _fast_token(self, x, y_pred, w):
        key = self._summaries.kernel.key(x)
        try:
            rec = None if key is None else self._points.get((y_pred, key))
        except TypeError:  # an unhashable label: the reference path names it
            return _NO
        if rec is not None:
            for i, (wi, _) in enumerate(rec[1]):
                if wi == w:
                    return (y_pred, key), i
        return _NO

    def _check_revert(self, x, y_pred, w, raw=None):
        key = self._key(x, y_pred, raw)
        rec = self._points.get(key)
        if rec is not None:
            for i, (wi, _) in enumerate(rec[1]):
                if wi == w:
                    return key, i
        raise UnknownElementError(
            f"revert of (y_pred={y_pred!r}, w={w}) with this vector: {self.name} holds no such update"
        )

    def _on_revert(self, token):
        key, i = token
        rec = self._points[key]
        w, fx = rec[1][i]
        if rec[0] == w:
            del self._points[key]
        else:
            self._points[key] = (rec[0] - w, (*rec[1][:i], *rec[1][i + 1:]))
        if fx is not None:
            self._sum -= w * fx
            self._scored -= w

    def value(self, s, sums=None):
        """With ``sums = (sum w·s(x), sum w)`` from :meth:`score_sum` over every point: the exact
        silhouette ``sum w·s(x) / sum w`` against ``s`` (NaN when ``s`` has fewer than two
        clusters or no point). Without: the prequential value of the stream this view saw, which
        is not a function of the summaries alone (so :meth:`get` is the prequential silhouette).
        O(1)."""
        if sums is None:
            return self.get()
        total, weight = sums
        return total / weight if weight and s.k >= 2 else NAN

    def get(self) -> float:
        """The prequential silhouette: the running mean ``Σ s(x) / scored`` of the scores the
        arriving points got (NaN before a point was scored). O(1)."""
        # sum / (2**53·scored) as (sum / scored) / 2**53: both correctly rounded, and a division
        # by a power of two is exact in the normal range (|sum| >= 1 and scored < 2**63: the quotient
        # is 0 or above 2**-116),
        # so the same double, without multiplying and dividing the big integers
        return self._sum / self._scored / _FX if self._scored else NAN

    def final(self) -> float:
        """Exact silhouette of the stored points against the current summaries (NaN if k < 2).

        After a stream this equals the batch silhouette of all its points. O(N·k·d).
        """
        s = self._summaries
        if s.k < 2 or not self._points:
            return NAN
        recs = list(self._points.items())
        xs = np.array([np.frombuffer(key[1]) for key, _ in recs])
        labels = [key[0] for key, _ in recs]
        ws = np.array([r[0] for _, r in recs], dtype=np.float64)
        return self.value(s, self.score_sum(s, xs, labels, ws))


class SqEuclideanSilhouette(Silhouette):
    """Silhouette with squared Euclidean distance (Alink's and Spark's definition; scikit-learn's
    ``silhouette_score(X, labels, metric="sqeuclidean")``).

    From the summaries (:func:`sq_euclidean_dissimilarity`): the mean squared distance from ``x``
    to the members of cluster ``j`` is ``||x - mean_j||² + M2_j/b[j]``; to the other members of its
    own cluster it is ``(b·||x - mean||² + M2)/(b - 1)``. See :class:`Silhouette` for prequential
    vs final. Cost: update O(k·d), get O(1), final O(N·k·d).

    >>> m = SqEuclideanSilhouette(singleton=1.0)
    >>> for x, p in [([0.0], "a"), ([1.0], "a"), ([9.0], "b")]:
    ...     m.update(x, p)
    >>> m.get(), round(m.final(), 6)  # only [9.0] was scored on arrival: a singleton
    (1.0, 0.990676)
    """

    alink = "silhouetteCoefficient"
    dissimilarity = staticmethod(sq_euclidean_dissimilarity)


class CosineSilhouette(Silhouette):
    """Silhouette with cosine distance ``1 - cos`` (scikit-learn's ``metric="cosine"``; Alink's
    cosine silhouette).

    For unit vectors the mean cosine distance from ``x`` to the members of cluster ``j`` is
    ``1 - x·mean_j`` (``mean_j`` the mean of the unit vectors); to the other members of its own
    cluster it is ``b(1 - x·mean)/(b - 1)`` (:func:`cosine_dissimilarity`). See
    :class:`Silhouette` for prequential vs final. Cost: update O(k·d), get O(1), final O(N·k·d).

    >>> m = CosineSilhouette()
    >>> for x, p in [([1.0, 0.0], "a"), ([1.0, 0.1], "a"), ([0.0, 1.0], "b"), ([0.1, 1.0], "b")]:
    ...     m.update(x, p)
    >>> round(m.final(), 6)
    0.994474
    """

    space = "cosine"
    alink = "silhouetteCoefficient"
    dissimilarity = staticmethod(cosine_dissimilarity)


# -- the evaluator -----------------------------------------------------------------------------------
def default_intrinsic_metrics(space: str | None = None) -> list:
    """One instance of every registered intrinsic metric (of ``space`` only, when given), with
    default parameters, in registry order. O(registry).

    >>> [m.name for m in default_intrinsic_metrics("cosine")]  # doctest: +NORMALIZE_WHITESPACE
    ['CosineCompactness', 'CosineSSB', 'CosineSeparation', 'CosineDaviesBouldin', 'CosineSilhouette']
    """
    return [cls() for cls in INTRINSIC_REGISTRY.values() if space is None or cls.space == space]


class IntrinsicEvaluator:
    """Many intrinsic metrics over shared summaries (one per space used), one update per element.

    Parameters
    ----------
    metrics : a list of metrics (named by their ``name``), a ``{name: metric}`` dict, or ``None``
        for every registered intrinsic metric.
    dim, features : fix the dimension / dict feature order up front (default: the first vector).
    native : ``False`` builds reference summaries (no native kernel; for the differential test).

    A vector is checked in every space before any summary changes, so a rejected call (e.g. a zero
    vector when a cosine metric is present) leaves everything as it was. Cost: :meth:`update` is
    O(d) per space plus O(k·d) per silhouette; :meth:`get` is the sum of the metrics' read costs.

    >>> ev = IntrinsicEvaluator([SSW(), CosineCompactness()])
    >>> ev.update([3.0, 4.0], 0); ev.update([4.0, 3.0], 0)
    >>> {k: round(v, 6) for k, v in ev.get().items()}
    {'SSW': 1.0, 'CosineCompactness': 0.010051}
    >>> sorted(ev.summaries)
    ['cosine', 'euclidean']
    """

    def __init__(self, metrics=None, dim: int | None = None, features=None, native: bool = True):
        self.summaries: dict = {}
        self.metrics: dict = {}
        self._ordered: list = []  # the summaries, cosine first (see update)
        self._hooked: list = []  # the metrics whose _after_fast does something, in order
        self._scorer: Silhouette | None = None  # the silhouette that update scores in the summaries' own call (see add)
        self._plan: list = []  # what get reads per metric (see add)
        self._quick = None  # what get reads in one native call (see _quick_plan)
        self._db: dict = {}  # space -> the one Davies-Bouldin view read by SummaryKernel.read (None: several)
        self._dists: dict = {}  # space -> True when a view reads the distances between means
        self._dim, self._features, self._native = dim, features, native
        if metrics is None:
            metrics = default_intrinsic_metrics()
        items = metrics.items() if isinstance(metrics, dict) else ((m.name, m) for m in metrics)
        for name, metric in items:
            self.add(name, metric)

    def add(self, name: str, metric: IntrinsicMetric) -> None:
        """Bind ``metric`` to the shared summaries of its space under ``name``. O(metrics) (the
        reading plan is made anew)."""
        if not isinstance(metric, IntrinsicMetric):
            raise TypeError(f"{name!r} is not an intrinsic metric: {metric!r}")
        if name in self.metrics:
            raise ValueError(f"a metric named {name!r} is already in the evaluator")
        if any(x.n for x in self.summaries.values()):
            raise ValueError(f"cannot add {name!r} after elements were seen: add every metric first")
        s = self.summaries.get(metric.space)
        if s is None:
            s = self.summaries[metric.space] = ClusterSummaries(self._dim, self._features, metric.space,
                                                                native=self._native)
        metric._bind(s)
        if isinstance(metric, (Separation, CosineSeparation, RMSDaviesBouldin, CosineDaviesBouldin)):
            self._dists[metric.space] = True
        if isinstance(metric, (RMSDaviesBouldin, CosineDaviesBouldin)):
            if metric.space in self._db:
                self._db[metric.space] = None  # two of them: each reads through its own get
            else:
                self._db[metric.space] = metric
        self.metrics[name] = metric
        self._ordered = sorted(self.summaries.values(), key=lambda s: s.space != "cosine")
        self._hooked = [m for m in self.metrics.values() if type(m)._after_fast is not IntrinsicMetric._after_fast]
        # the one silhouette of the one space, when it is the only view with a hook: update scores it
        hooked = self._hooked
        self._scorer = hooked[0] if len(self._ordered) == 1 and len(hooked) == 1 and isinstance(hooked[0], Silhouette) else None
        # what get reads per metric: (name, metric, space, whether it is the space's one
        # Davies-Bouldin view read by the kernel)
        self._plan = [(n, m, m.space, m is self._db.get(m.space)) for n, m in self.metrics.items()]
        self._quick = self._quick_plan()

    def _quick_plan(self):
        """What :meth:`get` reads in one ``SummaryKernel.values`` call, when it can: one space,
        its views coded (``_code``; its one Davies-Bouldin view 5) followed by the others (read
        by their ``get``), so that the values come in the metrics' order. ``(summaries, coded
        names, codes, Davies-Bouldin view or None, [(name, get)] of the others)`` or None."""
        if len(self.summaries) != 1:
            return None
        names, codes, db, others = [], [], None, []
        for name, m, _space, is_db in self._plan:
            code = 5 if is_db else m._code
            if code is None:
                others.append((name, m.get))
                continue
            if others:  # a coded view after an uncoded one: the general path keeps the order
                return None
            db = m if is_db else db
            names.append(name)
            codes.append(code)
        return next(iter(self.summaries.values())), tuple(names), bytes(codes), db, others

    def __getitem__(self, name: str) -> IntrinsicMetric:
        return self.metrics[name]

    def __iter__(self):
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def update(self, x, y_pred, w=1) -> None:
        """Add ``w`` copies of ``x`` to cluster ``y_pred`` in every summary; score silhouettes.

        A plain call (see :meth:`ClusterSummaries.fast`) takes one native call per space, the
        cosine one first: it alone can still refuse ``x`` (a zero vector), and when it took
        ``x`` the Euclidean one, with the same clusters and count, takes it too. Cost: O(d) per
        space plus O(k·d) per silhouette."""
        if w.__class__ is not int or w <= 0:  # the native calls read a negative w as a revert
            w = check_weight(w)
        ordered = self._ordered
        if self._scorer is not None:  # one space, its one hooked view a silhouette
            if self.update_scored(x, y_pred, w):
                return
        elif ordered[0].fast(x, y_pred, w) if len(ordered) == 1 else self._fast(x, y_pred, w):
            for m in self._hooked:  # the views that keep per-point state (the others' hook is empty)
                m._after_fast(x, y_pred, w)
            return
        changes = {space: s.check(x, y_pred, w) for space, s in self.summaries.items()}
        for space, s in self.summaries.items():
            s.apply(changes[space])
        for m in self.metrics.values():
            change = changes[m.space]
            m._after_update(change.vector, y_pred, change.w, x)

    def update_scored(self, x, y_pred, w) -> bool:
        """With one space whose one hooked view is a silhouette (``_scorer``): update and score
        ``x`` in one native call (:meth:`ClusterSummaries.fast` with the singleton score) and keep
        the silhouette's record; ``False``, having changed nothing, when the call is not a plain
        one (the reference path then decides). O(k·d).

        >>> ev = IntrinsicEvaluator([Silhouette()])
        >>> ev.update([0.0, 0.0], "a"); ev.update([4.0, 0.0], "b")
        >>> ev.update_scored([0.0, 1.0], "a", 1), ev.summaries["euclidean"].n
        (True, 3)
        """
        if w.__class__ is not int or w <= 0:  # the native call reads a negative w as a revert
            w = check_weight(w)
        sil = self._scorer
        if sil is None:  # several spaces or hooked views (or switched off): update's other paths
            return False
        got = self._ordered[0].fast(x, y_pred, w, sil.singleton, sil._points)
        if not got:
            return False
        sil._account(x, y_pred, w, *got)
        return True

    def report_step(self, keys: dict, heads: tuple):
        """A native callable ``step(x, y_pred, w)`` that makes :meth:`update` then fills a copy
        of ``keys`` as :meth:`get_into` does and returns it, plus the summaries' count, ``k``,
        labels and sizes under the four ``heads`` (:meth:`ClusterSummaries.report_step`): a
        ``ClusterReport``'s ``update_get`` in one native call, no Python frame, the same state
        and values, bit for bit. ``step`` returns ``None``, having changed nothing, where the call
        is not a plain one (the caller then makes the two calls). ``None`` (no step yet) unless the one-call
        paths are there: one space whose one hooked view is a silhouette, the only view
        :meth:`get_into` does not read natively, and the caches of distances and
        Davies-Bouldin made by an earlier :meth:`get`. Made once: the step reads the
        summaries' and the silhouette's state anew at each call. O(1).

        >>> ev = IntrinsicEvaluator([SSW(), Separation(), Silhouette()])
        >>> ev.update([0.0, 0.0], "a"); ev.update([4.0, 0.0], "b"); _ = ev.get()
        >>> step = ev.report_step({"n": 0, "k": 0, "labels": 0, "sizes": 0}, ("n", "k", "labels", "sizes"))
        >>> out = step([0.0, 1.0], "a", 1)
        >>> out["n"], out["SSW"], out["sizes"].tolist(), {k: v for k, v in out.items() if k in ev.metrics} == ev.get()
        (3, 0.5, [2, 1], True)
        """
        sil, quick = self._scorer, self._quick
        if sil is None or quick is None:
            return None
        s, names, codes, db, others = quick
        if len(others) != 1 or others[0][1] != sil.get or type(sil).get is not Silhouette.get:
            return None  # the step computes the silhouette's own running mean, and nothing else
        native = None
        if db is not None:
            cache = db._cache
            native = cache.native
            if native is None or cache.summaries is not s:  # not read yet: get_into makes it
                return None
        return s.report_step(sil.singleton, native, codes, names, keys, heads, vars(sil), sil._account,
                             others[0][0])

    def _fast(self, x, y_pred, w) -> bool:
        ordered = self._ordered
        for i, s in enumerate(ordered):
            if not s.fast(x, y_pred, w):
                if i:  # pragma: no cover - the summaries share clusters and count: cannot happen
                    raise AssertionError(f"the {s.space} summaries refused what the others took")
                return False
        return bool(ordered)

    def revert(self, x, y_pred, w=1) -> None:
        """Undo :meth:`update` with the same arguments. A plain revert (see :meth:`update`)
        takes one native call per space; anything else the reference path, which checks every
        space and view before any changes. Cost as :meth:`update`."""
        if w.__class__ is int and w > 0 and self._ordered and all(s.kernel is not None for s in self._ordered):
            tokens = [(m, m._fast_token(x, y_pred, w)) for m in self.metrics.values()]
            if all(t is not _NO for _, t in tokens) and self._fast(x, y_pred, -w):
                for m, token in tokens:
                    m._on_revert(token)
                return
        changes = {space: s.check(x, y_pred, w, revert=True) for space, s in self.summaries.items()}
        tokens = []
        for m in self.metrics.values():
            change = changes[m.space]
            tokens.append((m, m._check_revert(change.vector, y_pred, -change.w, x)))
        for space, s in self.summaries.items():
            s.apply(changes[space])
        for m, token in tokens:
            m._on_revert(token)

    def get(self) -> dict:
        """``{name: value}`` for every metric, each by its own formula (see :meth:`get_into`).
        Cost: the sum of the metrics' read costs."""
        out: dict = {}
        self.get_into(out)
        return out

    def get_into(self, out: dict) -> None:
        """Put ``{name: value}`` for every metric into ``out`` (a caller's dict: no copy), the
        values :meth:`get` returns. With the native kernel, the summary views of a space (SSW,
        SSB, CH, separation, compactness, at most one Davies-Bouldin) take their values from one
        ``SummaryKernel.read``, the same numbers their ``get`` gives; the others (the
        silhouettes' O(1) running means) their own ``get``. With one space whose views the
        kernel computes (``_quick_plan``), once the distance and Davies-Bouldin caches are made,
        the values themselves come from one ``SummaryKernel.values`` call (the same doubles: the
        views' formulas with the same operations). Cost: that of :meth:`get`.

        >>> ev = IntrinsicEvaluator([SSW()])
        >>> ev.update([0.0, 0.0], "a"); ev.update([2.0, 0.0], "a")
        >>> out = {"count": 2}
        >>> ev.get_into(out); out
        {'count': 2, 'SSW': 2.0}
        """
        quick = self._quick
        if quick is not None:
            s, names, codes, db, others = quick
            cache = None if db is None else db._cache
            native = None if cache is None else cache.native
            rebuild = cache is not None and cache.summaries is not s
            if (cache is None or native is not None) and s.kernel_values_into(codes, names, out, native, rebuild):
                if cache is not None:
                    cache.summaries = s
                for name, get in others:
                    out[name] = get()
                return
        reads = {}
        for space, s in self.summaries.items():
            kernel = s.kernel
            if kernel is None or s.dim is None:
                continue
            db = self._db.get(space)
            k, width = s.k, s.width
            if self._dists.get(space) and k >= 2 and kernel.dist_sum(width) is None:
                s.centroid_distances()  # the cache of distances between means made and bound to the kernel
            cache = None if db is None or k < 2 else db._cache
            if cache is not None and cache.native is None:
                cache.native = _DaviesBouldinKernel()
            native = None if cache is None else cache.native
            r = kernel.read(width, s.n, k, s.version, native, cache is not None and cache.summaries is not s)
            if cache is not None and r[4] is not None:
                cache.summaries = s
            reads[space] = (s.n, k, r)
        for name, m, space, is_db in self._plan:
            got = reads.get(space)
            value = None
            if got is not None:
                f = m._from_read
                if f is not None:
                    value = f(*got)
                elif is_db and got[1] >= 2:
                    value = got[2][4]
            out[name] = m.get() if value is None else value

    def __repr__(self) -> str:
        n = max((s.n for s in self.summaries.values()), default=0)
        return f"IntrinsicEvaluator(n={n}, metrics={list(self.metrics)})"
