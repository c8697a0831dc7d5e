"""Alink's cluster evaluation in one call: :func:`cluster_report` (batch or streaming) and the
streaming :class:`ClusterReport` behind it.

Alink's ``EvalClusterBatchOp`` returns, for predicted clusters of vectors: ``count``, ``k``,
``clusterArray``, ``countArray``, ``ssw``, ``ssb``, ``vrc`` (Calinski-Harabasz), ``cp``
(compactness), ``sp`` (separation), ``db`` (Davies-Bouldin), ``silhouetteCoefficient`` and, with
labels, ``purity``, ``nmi``, ``ari``, ``ri``. The report returns the same under these keys:

==================  ====================  ========================================================
Alink               report key            batch / streaming
==================  ====================  ========================================================
count, k            count, k              both
clusterArray        cluster_array         both (a tuple of the predicted labels, first-seen order)
countArray          count_array           both (an int64 array of their sizes, same order)
ssw                 ssw                   both Euclidean; cosine: batch only
ssb                 ssb                   both
vrc                 calinski_harabasz     both Euclidean; cosine: batch only
cp                  compactness           batch; streaming cosine; streaming Euclidean gives
                                          ``compactness_rms`` instead (RMS scatter)
sp                  separation            both
db                  davies_bouldin        batch; streaming cosine; streaming Euclidean gives
                                          ``davies_bouldin_rms`` instead (q = 2)
silhouetteCoeff.    silhouette            batch; streaming: exact over the stored points
                                          (:meth:`ClusterReport.final`), and
                                          ``silhouette_prequential`` while streaming
purity, nmi, ...    purity, nmi, ari, ri  both, when labels are given
==================  ====================  ========================================================

The Euclidean silhouette uses squared distances (Alink's definition); the cosine one ``1 - cos``.
A point alone in its cluster scores ``singleton`` (0.0 as in scikit-learn by default; pass 1.0
for Alink's value). NMI is the arithmetic-mean normalisation (Alink's ``2·MI/(H(T)+H(P))``).

>>> X = [[0, 0, 0], [0.1, 0.1, 0.1], [0.2, 0.2, 0.2], [9, 9, 9], [9.1, 9.1, 9.1], [9.2, 9.2, 9.2]]
>>> r = cluster_report(X, [0, 0, 0, 1, 1, 1], labels_true=["a", "a", "a", "b", "b", "b"])
>>> {k: round(v, 6) for k, v in r.items() if isinstance(v, float)}  # doctest: +NORMALIZE_WHITESPACE
{'ssw': 0.12, 'ssb': 364.5, 'calinski_harabasz': 12150.0, 'compactness': 0.11547,
 'separation': 15.588457, 'davies_bouldin': 0.014815, 'silhouette': 0.999753,
 'purity': 1.0, 'nmi': 1.0, 'ari': 1.0, 'ri': 1.0}
>>> r["count"], r["k"], r["cluster_array"], r["count_array"].tolist()
(6, 2, (0, 1), [3, 3])
"""

from __future__ import annotations

import numpy as np

from ._validate import MAX_TOTAL, check_label, check_weight
from .contingency import Contingency
from .errors import UnknownElementError
from .evaluator import Evaluator
from .intrinsic import (
    SSB,
    SSW,
    CalinskiHarabasz,
    CosineCompactness,
    CosineDaviesBouldin,
    CosineSeparation,
    CosineSilhouette,
    CosineSSB,
    IntrinsicEvaluator,
    RMSCompactness,
    RMSDaviesBouldin,
    Separation,
    Silhouette,
    SqEuclideanSilhouette,
)
from .metrics import AdjustedRand, NormalizedMutualInfo, Purity, Rand

__all__ = ["cluster_report", "ClusterReport"]

_DISTANCES = ("euclidean", "cosine")
_PLAIN = (int, str)  # label types that are never missing and always hashable
_HEADS = ("count", "k", "cluster_array", "count_array")  # the keys update_get's native step sets


def _label_evaluator(table=None) -> Evaluator:
    return Evaluator(
        {"purity": Purity(), "nmi": NormalizedMutualInfo(), "ari": AdjustedRand(), "ri": Rand()}, table
    )


class ClusterReport:
    """Streaming version of Alink's cluster evaluation: ``update(x, y_pred, y_true=None, w=1)``,
    ``revert`` with the same arguments, ``get()`` and :meth:`final`.

    Parameters
    ----------
    distance : ``"euclidean"`` or ``"cosine"``.
    labels : ``True`` to also report purity, NMI, ARI and RI (then ``y_true`` is required).
    singleton : silhouette of a point alone in its cluster (0.0: scikit-learn; 1.0: Alink).
    dim, features : fix the dimension / dict feature order (default: the first vector).

    Keys of :meth:`get`: ``count, k, cluster_array`` (a tuple of the labels, cached between
    reads), ``count_array`` (a fresh int64 array of their sizes: one gather, no Python object per
    cluster) and, Euclidean: ``ssw, ssb,
    calinski_harabasz, separation, compactness_rms, davies_bouldin_rms, silhouette_prequential``;
    cosine: ``ssb, separation, compactness, davies_bouldin, silhouette_prequential``; with labels
    ``purity, nmi, ari, ri``. Cost: update O(k·d) (the prequential silhouette; the rest O(d));
    get O(k²) plus O(k·d) per cluster changed since the last read. Every rejected call leaves the
    report as it was.

    >>> rep = ClusterReport(labels=True)
    >>> for x, p, t in [([0.0, 0.0], 0, "a"), ([0.0, 1.0], 0, "a"), ([5.0, 5.0], 1, "b"), ([5.0, 6.0], 1, "b")]:
    ...     rep.update(x, p, t)
    >>> r = rep.get()
    >>> r["calinski_harabasz"], r["compactness_rms"], r["purity"], r["count_array"].tolist()
    (100.0, 0.5, 1.0, [2, 2])
    >>> round(rep.final()["silhouette"], 6)
    0.980002
    """

    def __init__(self, distance: str = "euclidean", labels: bool = False, singleton: float = 0.0,
                 dim: int | None = None, features=None):
        if distance not in _DISTANCES:
            raise ValueError(f"distance must be one of {_DISTANCES}, got {distance!r}")
        self.distance = distance
        self.labels = bool(labels)
        if distance == "euclidean":
            views = {
                "ssw": SSW(),
                "ssb": SSB(),
                "calinski_harabasz": CalinskiHarabasz(),
                "separation": Separation(),
                "compactness_rms": RMSCompactness(),
                "davies_bouldin_rms": RMSDaviesBouldin(),
                "silhouette_prequential": SqEuclideanSilhouette(singleton),
            }
        else:
            views = {
                "ssb": CosineSSB(),
                "separation": CosineSeparation(),
                "compactness": CosineCompactness(),
                "davies_bouldin": CosineDaviesBouldin(),
                "silhouette_prequential": CosineSilhouette(singleton),
            }
        self.intrinsic = IntrinsicEvaluator(views, dim=dim, features=features)
        self.summaries = self.intrinsic.summaries[distance]
        self.table = Contingency() if labels else None
        self._label_metrics = _label_evaluator(self.table) if labels else None
        # the plain update's one call (no labels: nothing else to keep per point)
        self._plain = None if labels else self.intrinsic.update_scored
        self._keys: dict | None = None
        self._step = None  # update_get's native step (IntrinsicEvaluator.report_step), once the caches are made

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_step"] = None  # native, bound to this report's objects: made anew by the copy
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_step", None)  # pickled before the step was kept

    def _true(self, y_true):
        if not self.labels:
            if y_true is not None:
                raise ValueError("this report was built with labels=False; pass y_true=None")
            return None
        return check_label(y_true, "y_true")

    def update(self, x, y_pred, y_true=None, w=1) -> None:
        """Add ``w`` copies of vector ``x`` predicted in ``y_pred`` (true label ``y_true``).

        A plain call (no labels, a known cluster, an ``int`` weight, a vector the kernel reads)
        is one native call that updates the summaries, scores the point and keeps the
        silhouette's record and sums (once a :meth:`get` has made the caches, with no other
        Python frame: :meth:`update_get`'s native step); anything else is checked in full
        first. O(k·d)."""
        step = self._step
        if step is not None and y_true is None and step.update(x, y_pred, w):
            return  # the same in one native call, no other Python frame (IntrinsicEvaluator.report_step)
        plain = self._plain
        if plain is not None and y_true is None and w.__class__ is int and w > 0 and plain(x, y_pred, w):
            # the evaluator's one native call that also scores the silhouette: a known cluster's
            # label was checked when it came, the summaries check w's bound and x
            return
        t = self._true(y_true) if self.labels or y_true is not None else None
        if y_pred.__class__ not in _PLAIN:  # an int or a str is a label: nothing to check
            check_label(y_pred, "y_pred")
        if w.__class__ is not int or not 0 < w < MAX_TOTAL:
            check_weight(w)
        self.intrinsic.update(x, y_pred, w)  # checks the vector before changing anything
        if self.table is not None:
            self.table.update(t, y_pred, w)

    def revert(self, x, y_pred, y_true=None, w=1) -> None:
        """Undo :meth:`update` with the same arguments. O(k·d), as :meth:`update`."""
        t = self._true(y_true)
        check_label(y_pred, "y_pred")
        w = check_weight(w)
        if self.table is not None and self.table[t, y_pred] < w:
            raise UnknownElementError(
                f"revert of (y_true={t!r}, y_pred={y_pred!r}, w={w}): the table holds "
                f"{self.table[t, y_pred]} such elements"
            )
        self.intrinsic.revert(x, y_pred, w)
        if self.table is not None:
            self.table.revert(t, y_pred, w)

    def get(self) -> dict:
        """Every metric that is exact while streaming, under the keys listed in the class doc
        (each the formula of its :mod:`streameval.intrinsic` view or label metric). Once
        :meth:`update_get`'s native step is made, one native call (the same dict). Cost: O(k²)
        plus O(k·d) per cluster changed since the last read (the class docstring)."""
        step = self._step
        if step is not None:
            out = step.read()
            if out is not None:
                return out
        s = self.summaries
        labels, counts = s.size_arrays()
        keys = self._keys
        if keys is None:
            out = {"count": s.n, "k": len(labels), "cluster_array": labels, "count_array": counts}
            self.intrinsic.get_into(out)
            # the keys every read sets, in order: later reads fill a copy (sized once, no resizing)
            self._keys = keys = dict.fromkeys(out)
        else:
            out = keys.copy()
            out["count"] = s.n
            out["k"] = len(labels)
            out["cluster_array"] = labels
            out["count_array"] = counts
            self.intrinsic.get_into(out)
        if self._label_metrics is not None:
            out.update(self._label_metrics.get())
        elif self._step is None and self._plain is not None:  # the native step, once the caches it needs are made
            self._step = self.intrinsic.report_step(keys, _HEADS)
        return out

    def update_get(self, x, y_pred, y_true=None, w=1) -> dict:
        """:meth:`update` then :meth:`get`: the same state and the same dict, bit for bit. Once
        a :meth:`get` has made the caches, a plain call (no labels, a known cluster, an ``int``
        weight, a vector the kernel reads) is one native call and no other Python frame
        (:meth:`IntrinsicEvaluator.report_step`): it updates the summaries, scores the point,
        keeps its silhouette record and exact sums, and writes the summary views' values, the
        silhouette's running mean, the count, ``k`` and the cluster sizes into a copy of the
        read's keys; anything else makes the two calls (and raises their errors, leaving the
        report as it was). O(k·d) plus the read's cost.

        >>> rep = ClusterReport()
        >>> for x, p in [([0.0, 0.0], 0), ([0.0, 1.0], 0), ([5.0, 5.0], 1)]:
        ...     r = rep.update_get(x, p)
        >>> r = rep.update_get([5.0, 6.0], 1)
        >>> r["calinski_harabasz"], r["count"], r["count_array"].tolist()
        (100.0, 4, [2, 2])
        """
        step = self._step
        if step is not None and y_true is None:
            out = step(x, y_pred, w)
            if out is not None:
                return out
        self.update(x, y_pred, y_true, w)
        return self.get()

    def final(self) -> dict:
        """:meth:`get` plus ``silhouette``: the exact silhouette of the stored points. O(N·k·d)."""
        out = self.get()
        silhouette = self.intrinsic["silhouette_prequential"]
        assert isinstance(silhouette, Silhouette)  # set so in __init__
        out["silhouette"] = silhouette.final()
        return out

    def __repr__(self) -> str:
        return f"ClusterReport(distance={self.distance!r}, labels={self.labels}, n={self.summaries.n})"


def cluster_report(X, labels_pred, labels_true=None, distance: str = "euclidean",
                   streaming: bool = False, singleton: float = 0.0) -> dict:
    """Alink's ``EvalClusterBatchOp`` in one call: every metric it returns, under clear names.

    Parameters
    ----------
    X : ``(N, d)`` vectors (array-like; rows may be dicts when ``streaming=True``).
    labels_pred : the predicted cluster of each row. labels_true : optional true labels (adds
        ``purity, nmi, ari, ri``).
    distance : ``"euclidean"`` or ``"cosine"``.
    streaming : ``False`` (default) computes every metric exactly in two passes
        (:mod:`streameval.batch`), Alink's mean-distance compactness and Davies-Bouldin included.
        ``True`` feeds the rows one by one through a :class:`ClusterReport` and returns
        :meth:`ClusterReport.final` (the streaming keys, plus the exact final silhouette).
    singleton : silhouette of a point alone in its cluster (0.0: scikit-learn; 1.0: Alink).

    Batch keys: ``count, k, cluster_array, count_array, ssw, ssb, calinski_harabasz, compactness,
    separation, davies_bouldin, silhouette`` (+ labels). Cost: batch O(N·k·d) (the silhouette);
    streaming O(N·k·d) plus one report read.

    >>> r = cluster_report([[1, 0], [1, 0.1], [0, 1], [0.1, 1]], [0, 0, 1, 1], distance="cosine")
    >>> round(r["compactness"], 6), round(r["silhouette"], 6)
    (0.001241, 0.994474)
    >>> s = cluster_report([[1, 0], [1, 0.1], [0, 1], [0.1, 1]], [0, 0, 1, 1], distance="cosine",
    ...                    streaming=True)
    >>> round(s["compactness"], 6), round(s["silhouette"], 6), round(s["silhouette_prequential"], 6)
    (0.001241, 0.994474, 0.497085)
    """
    if distance not in _DISTANCES:
        raise ValueError(f"distance must be one of {_DISTANCES}, got {distance!r}")
    labels_pred = list(labels_pred)
    if labels_true is not None:
        labels_true = list(labels_true)
        if len(labels_true) != len(labels_pred):
            raise ValueError(f"labels_true has {len(labels_true)} entries, labels_pred {len(labels_pred)}")
    if streaming:
        rep = ClusterReport(distance, labels=labels_true is not None, singleton=singleton)
        ts = labels_true if labels_true is not None else [None] * len(labels_pred)
        if len(X) != len(labels_pred):
            raise ValueError(f"X has {len(X)} rows but labels_pred has {len(labels_pred)} entries")
        for x, p, t in zip(X, labels_pred, ts):
            rep.update(x, p, t)
        return rep.final()
    return _batch_report(X, labels_pred, labels_true, distance, singleton)


def _batch_report(X, labels_pred, labels_true, distance, singleton) -> dict:
    from . import batch

    for p in labels_pred:
        check_label(p, "labels_pred")
    order: dict = {}
    for p in labels_pred:
        order[p] = order.get(p, 0) + 1
    out = {"count": len(labels_pred), "k": len(order), "cluster_array": tuple(order),
           "count_array": np.fromiter(order.values(), dtype=np.int64, count=len(order))}
    metric = "sqeuclidean" if distance == "euclidean" else "cosine"
    out["ssw"] = batch.ssw_score(X, labels_pred, distance)
    out["ssb"] = batch.ssb_score(X, labels_pred, distance)
    out["calinski_harabasz"] = batch.calinski_harabasz_score(X, labels_pred, distance)
    out["compactness"] = batch.compactness_score(X, labels_pred, distance)
    out["separation"] = batch.separation_score(X, labels_pred, distance)
    out["davies_bouldin"] = batch.davies_bouldin_score(X, labels_pred, distance)
    out["silhouette"] = batch.silhouette_score(X, labels_pred, metric, singleton)
    if labels_true is not None:
        out["purity"] = batch.purity_score(labels_true, labels_pred)
        out["nmi"] = batch.normalized_mutual_info_score(labels_true, labels_pred)
        out["ari"] = batch.adjusted_rand_score(labels_true, labels_pred)
        out["ri"] = batch.rand_score(labels_true, labels_pred)
    return out
