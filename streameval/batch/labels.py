"""Batch label metrics, ``f(labels_true, labels_pred) -> value``, counted by the native table.

Each function counts its two labellings once into a :class:`~streameval.Contingency` with
:meth:`~streameval.Contingency.update_many` (integer arrays read in place and counted by the
native radix sort; other labels coded first by :func:`streameval.labels.factorize`, then counted
natively) and reads the value with the streaming metric's own formula on the table's exact sums:
a batch value is bit-identical to what the streaming metric reports after the same elements.
Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells) for the table, then
O(1) for the value.

The independent numpy twins, written from the formulas separately from the streaming code, live
in :mod:`streameval.batch.reference`: the tests hold these functions against them and against a
brute-force oracle, and without the native extension (``streameval.contingency.NATIVE`` false)
these functions call them. Labels are grouped by Python equality (:mod:`streameval.labels`); a
missing label (``None``, NaN, ``pandas.NA``, ``NaT``) raises
:class:`~streameval.errors.MissingLabelError` naming ``labels_true[i]`` or ``labels_pred[i]``.

>>> adjusted_rand_score([0, 0, 1, 1], [1, 1, 0, 0])
1.0
>>> import streameval as se
>>> m = se.NormalizedMutualInfo()
>>> m.table.update_many([0, 0, 1, 2], ["a", "b", "b", "b"])
>>> normalized_mutual_info_score([0, 0, 1, 2], ["a", "b", "b", "b"]) == m.get()   # the same bits
True
"""

from __future__ import annotations

import numpy as np

from ..contingency import NATIVE, Contingency
from ..errors import require
from ..labels import factorize
from ..metrics import element, information, matching, pairs
from . import reference as twin
from .reference import contingency_cells  # noqa: F401  (re-exported: the cells as numpy arrays)

__all__ = [
    "contingency_cells",
    "contingency_matrix",
    "pair_confusion_matrix",
    "elm_score",
    "elm_precision_recall_fscore",
    "bcubed_score",
    "bcubed_precision_recall_fscore",
    "rand_score",
    "adjusted_rand_score",
    "pair_precision_score",
    "pair_recall_score",
    "pair_f1_score",
    "pair_jaccard_score",
    "fowlkes_mallows_score",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "homogeneity_score",
    "completeness_score",
    "v_measure_score",
    "homogeneity_completeness_v_measure",
    "variation_of_information",
    "purity_score",
    "inverse_purity_score",
]


def _int_labels(values) -> np.ndarray | None:
    """``values`` as a one-dimensional int64-representable integer array, or ``None``."""
    if not isinstance(values, (np.ndarray, list, tuple, str, bytes)) and hasattr(values, "__array__"):
        values = np.asarray(values)  # pandas, pyarrow: as factorize reads them
    if (isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "iu"
            and values.dtype != np.uint64):
        return values
    return None


def _hashed(values):
    """A numpy string array as a list of Python strings: one dictionary pass numbers them several
    times faster than sorting the fixed-width strings (the same labels: a numpy string array
    holds no missing label, and its elements compare as the Python strings do)."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "US":
        return values.tolist()
    return values


def _codes(values, name: str) -> np.ndarray:
    """An integer array itself (the table counts it in place), else the labels' cluster codes
    (:func:`streameval.labels.factorize`)."""
    ints = _int_labels(values)
    return factorize(_hashed(values), name)[0] if ints is None else ints


def _count(labels_true, labels_pred, *metrics) -> Contingency:
    """The contingency table of two labellings, counted natively in one bulk call, then
    ``metrics`` (fresh label metrics) bound to it. Cost O(N) for integer arrays, O(N log N) for
    other labels, plus O(cells).

    >>> import streameval as se
    >>> ari, nmi = se.AdjustedRand(), se.NormalizedMutualInfo()
    >>> table = _count([0, 0, 1, 1], ["x", "x", "y", "z"], ari, nmi)
    >>> table.n, table.cells, round(ari.get(), 6), round(nmi.get(), 6)
    (4, 3, 0.571429, 0.8)
    """
    it, ip = _codes(labels_true, "labels_true"), _codes(labels_pred, "labels_pred")
    twin.same_length(it, ip)
    table = Contingency()
    table.update_many(it, ip)
    for metric in metrics:  # bound after the count: an F sum is then built once over the cells
        metric.bind(table)
    return table


def _ordered_codes(values, name: str) -> tuple[np.ndarray, int]:
    """``(codes, number of clusters)`` numbered in the labels' sorted order: for an integer array
    whose range is at most ``4N``, by counting the values present (O(N + range), no sort);
    otherwise as the twin numbers them (:func:`streameval.batch.reference.sorted_codes`)."""
    ints = _int_labels(values)
    if ints is not None and len(ints):
        x = ints.astype(np.int64, copy=False)
        lo, hi = int(x.min()), int(x.max())
        if hi - lo <= 4 * len(x):
            present = np.bincount(x - lo, minlength=hi - lo + 1) > 0
            return (np.cumsum(present) - 1)[x - lo], int(present.sum())
    return twin.sorted_codes(_hashed(values), name)


def contingency_matrix(labels_true, labels_pred, *, eps=None, sparse: bool = False, dtype=np.int64):
    """The contingency table as scikit-learn's ``sklearn.metrics.cluster.contingency_matrix``
    returns it: ``C[i, j]`` counts the elements of true class ``i`` predicted in cluster ``j``,
    rows and columns in the sorted order of the labels. ``sparse=True`` gives a SciPy CSR matrix
    (``pip install "streameval[sklearn]"``), built directly from the counted cells in row order;
    ``eps`` is added to every cell of the dense table (refused with ``sparse=True``, as
    scikit-learn refuses it). Labels are grouped by Python equality (:mod:`streameval.labels`).
    Cost: O(N) for integer arrays of range at most ``4N`` (else O(N log N)), plus the table's
    size: ``k_true·k_pred`` dense, the non-zero cells sparse. The twin
    (:func:`streameval.batch.reference.contingency_matrix`) goes through a coordinate matrix.

    >>> contingency_matrix([2, 2, 1, 1, 1], ["a", "b", "b", "b", "a"])
    array([[1, 2],
           [1, 1]])
    >>> contingency_matrix([3, 3, 8], [0, 1, 1], sparse=True).toarray()
    array([[1, 1],
           [0, 1]])
    """
    if sparse and eps is not None:
        raise ValueError("eps cannot be set when sparse=True: it would fill every cell")
    it, kt = _ordered_codes(labels_true, "labels_true")
    ip, kp = _ordered_codes(labels_pred, "labels_pred")
    twin.same_length(it, ip)
    key = it * kp + ip
    small = kt * kp <= 4 * len(key)  # then count every cell at once, else sort the keys
    if not sparse:
        if small:
            dense = np.bincount(key, minlength=kt * kp)
        else:
            dense = np.zeros(kt * kp, dtype=np.int64)
            cells, n = np.unique(key, return_counts=True)
            dense[cells] = n
        dense = dense.reshape(kt, kp).astype(dtype)
        return dense if eps is None else dense + eps
    sp = require("scipy.sparse", "contingency_matrix(sparse=True)", "sklearn")
    if small:
        counts = np.bincount(key, minlength=kt * kp)
        cells = np.flatnonzero(counts)
        n = counts[cells]
    else:
        cells, n = np.unique(key, return_counts=True)
    indptr = np.concatenate(([0], np.cumsum(np.bincount(cells // kp, minlength=kt))))
    return sp.csr_matrix((n.astype(dtype), cells % kp, indptr), shape=(kt, kp), dtype=dtype)


def _read(metric, labels_true, labels_pred, fallback, **params) -> float:
    """``metric``'s value over the two labellings, counted natively; ``fallback`` (the twin)
    without the native extension."""
    if not NATIVE:
        return fallback(labels_true, labels_pred, **params)
    _count(labels_true, labels_pred, metric)
    return metric.get()


def pair_confusion_matrix(labels_true, labels_pred) -> np.ndarray:
    """The 2×2 pair confusion matrix of scikit-learn: over *ordered* pairs of distinct elements,
    ``[[TN, FP], [FN, TP]]`` (each count is twice the unordered pairs: ``C[1, 1] = 2·TP``), where
    TP are the pairs together in both labellings, FP together only in ``labels_pred`` and FN only
    in ``labels_true``; from the table's exact ``Σn²``, ``Σa²``, ``Σb²``. Exact integers; cost
    O(N) for integer arrays, O(N log N) otherwise.

    >>> pair_confusion_matrix([0, 0, 1, 1], [0, 0, 1, 2]).tolist()
    [[8, 0], [2, 2]]
    """
    if not NATIVE:
        return twin.pair_confusion_matrix(labels_true, labels_pred)
    tp, pp, tt, total = pairs.pair_counts(_count(labels_true, labels_pred))
    fp, fn = pp - tp, tt - tp
    return 2 * np.array([[total - tp - fp - fn, fp], [fn, tp]], dtype=np.int64)


# --------------------------------------------------------------------------- element-based
def elm_precision_recall_fscore(
    labels_true, labels_pred, *, beta: float = 1.0, f_convention: str = "element_averaged"
) -> tuple[float, float, float]:
    """ELM precision, recall and F-beta ``(P, R, F)``; see :class:`streameval.ELM`.

    Per element in cell ``(i, j)``: ``P_e = (n-1)/(b-1)`` (1 if ``b = 1``), ``R_e = (n-1)/(a-1)``
    (1 if ``a = 1``), ``F_e = (1+β²)(n-1)/(β²(a-1)+(b-1))`` (1 if ``a = b = 1``), averaged over
    elements; ``f_convention="f_of_averages"`` gives ``F = (1+β²)PR/(β²P+R)`` instead. The triple
    of scikit-learn's ``precision_recall_fscore_support``; :func:`elm_score` gives F alone. Cost
    O(N) (integer arrays) or O(N log N), plus O(cells) for the element-averaged F.

    >>> elm_precision_recall_fscore([1, 1], [1, 2])  # the ELM paper's 2-element example
    (1.0, 0.0, 0.0)
    """
    return _element(element.ELM, labels_true, labels_pred, beta, f_convention)


def _element(cls, labels_true, labels_pred, beta, f_convention) -> tuple[float, float, float]:
    metric = cls(beta=beta, f_convention=f_convention)
    if not NATIVE:
        fallback = (twin.elm_precision_recall_fscore if cls is element.ELM
                    else twin.bcubed_precision_recall_fscore)
        return fallback(labels_true, labels_pred, beta=beta, f_convention=f_convention)
    _count(labels_true, labels_pred, metric)
    return metric.precision, metric.recall, metric.get()


def elm_score(labels_true, labels_pred, *, beta: float = 1.0,
              f_convention: str = "element_averaged") -> float:
    """ELM F-beta, a float (see :func:`elm_precision_recall_fscore` for ``(P, R, F)``).

    ``Σ_e F_e / N`` with ``F_e = (1+β²)(n-1)/(β²(a-1) + (b-1))`` (1 when ``a = b = 1``) by default.
    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> elm_score([1, 1], [1, 2])  # the ELM paper's 2-element example: BCubed F 0.667, ELM 0
    0.0
    >>> round(elm_score([1, 1, 2], [1, 1, 1]), 4)
    0.4444
    """
    return _element(element.ELM, labels_true, labels_pred, beta, f_convention)[2]


def bcubed_precision_recall_fscore(
    labels_true, labels_pred, *, beta: float = 1.0, f_convention: str = "element_averaged"
) -> tuple[float, float, float]:
    """BCubed precision, recall and F-beta ``(P, R, F)``; see :class:`streameval.BCubed`.

    Per element: ``P_e = n/b``, ``R_e = n/a``, ``F_e = (1+β²)n/(β²a+b)``, averaged over elements.
    Cost as :func:`elm_precision_recall_fscore`.

    >>> [round(x, 3) for x in bcubed_precision_recall_fscore([1, 1], [1, 2])]
    [1.0, 0.5, 0.667]
    """
    return _element(element.BCubed, labels_true, labels_pred, beta, f_convention)


def bcubed_score(labels_true, labels_pred, *, beta: float = 1.0,
                 f_convention: str = "element_averaged") -> float:
    """BCubed F-beta, a float (see :func:`bcubed_precision_recall_fscore` for ``(P, R, F)``).

    ``Σ_e F_e / N`` with ``F_e = (1+β²)n/(β²a + b)`` by default. Cost: O(N) for integer arrays
    (O(N log N) for other labels) plus O(cells), then O(1).

    >>> round(bcubed_score([1, 1], [1, 2]), 3)
    0.667
    """
    return _element(element.BCubed, labels_true, labels_pred, beta, f_convention)[2]


# --------------------------------------------------------------------------- pair counting
# With TP = Σ C2(n), PP = Σ C2(b), TT = Σ C2(a), from the table's exact sums of squares; each
# function costs O(N) for integer arrays (O(N log N) otherwise) plus O(cells), its value O(1).
def rand_score(labels_true, labels_pred) -> float:
    """Rand index ``(TP + TN) / C2(N)``; 1.0 when every pair agrees (or ``N < 2``).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> rand_score([0, 0, 1], [0, 1, 1])
    0.3333333333333333
    """
    return _read(pairs.Rand(), labels_true, labels_pred, twin.rand_score)


def adjusted_rand_score(labels_true, labels_pred) -> float:
    """Adjusted Rand index (Hubert & Arabie), scikit-learn's
    ``2(TP·TN - FN·FP) / ((TP+FN)(FN+TN) + (TP+FP)(FP+TN))``; 1.0 when no pair is in disagreement.

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> round(adjusted_rand_score([0, 0, 1, 1], [0, 0, 1, 2]), 6)
    0.571429
    """
    return _read(pairs.AdjustedRand(), labels_true, labels_pred, twin.adjusted_rand_score)


def pair_precision_score(labels_true, labels_pred) -> float:
    """Share of predicted same-cluster pairs that are true: ``TP / PP`` (1.0 if ``PP = 0``).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> pair_precision_score([0, 0, 1], [0, 0, 0])
    0.3333333333333333
    """
    return _read(pairs.PairPrecision(), labels_true, labels_pred, twin.pair_precision_score)


def pair_recall_score(labels_true, labels_pred) -> float:
    """Share of true same-cluster pairs that are predicted: ``TP / TT`` (1.0 if ``TT = 0``).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> pair_recall_score([0, 0, 0], [0, 0, 1])
    0.3333333333333333
    """
    return _read(pairs.PairRecall(), labels_true, labels_pred, twin.pair_recall_score)


def pair_f1_score(labels_true, labels_pred) -> float:
    """Harmonic mean of pair precision and recall, ``2TP / (PP + TT)`` (1.0 if both are 0).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> pair_f1_score([0, 0, 0, 1], [0, 0, 1, 1])
    0.4
    """
    return _read(pairs.PairF1(), labels_true, labels_pred, twin.pair_f1_score)


def pair_jaccard_score(labels_true, labels_pred) -> float:
    """Pair Jaccard ``TP / (PP + TT - TP)`` (1.0 if neither clustering links a pair).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> pair_jaccard_score([0, 0, 0, 1], [0, 0, 1, 1])
    0.25
    """
    return _read(pairs.PairJaccard(), labels_true, labels_pred, twin.pair_jaccard_score)


def fowlkes_mallows_score(labels_true, labels_pred) -> float:
    """Fowlkes-Mallows ``TP / sqrt(PP·TT)``; 0.0 when ``TP = 0`` (scikit-learn's convention).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> round(fowlkes_mallows_score([0, 0, 1, 1], [0, 0, 0, 1]), 6)
    0.408248
    """
    return _read(pairs.FowlkesMallows(), labels_true, labels_pred, twin.fowlkes_mallows_score)


# --------------------------------------------------------------------------- information
# From the table's exact fixed-point Σ x log x of cells, rows and columns: the integer
# differences are taken before the one division, so a perfect match gives exactly MI = H(T) = H(P).
def mutual_info_score(labels_true, labels_pred, *, contingency=None) -> float:
    """Mutual information ``Σ (n/N) log(N n / (a b))`` in nats; 0.0 if a side has one cluster.

    ``contingency``: a table already counted (as :func:`contingency_matrix` or scikit-learn's
    returns it, dense or sparse); the labels are then ignored (pass ``None``), as in
    scikit-learn, and the value is computed from the table's cells (O(cells)). From labels:
    O(N) for integer arrays, O(N log N) otherwise.

    >>> round(mutual_info_score([0, 0, 1, 1], [0, 0, 1, 1]), 6)
    0.693147
    >>> round(mutual_info_score(None, None, contingency=[[2, 0], [0, 2]]), 6)
    0.693147
    """
    if contingency is not None:
        return twin.mutual_info_score(None, None, contingency=contingency)
    return _read(information.MutualInfo(), labels_true, labels_pred, twin.mutual_info_score)


def normalized_mutual_info_score(labels_true, labels_pred, *, average_method: str = "arithmetic") -> float:
    """``MI / mean(H(T), H(P))`` with ``average_method`` ``"arithmetic"``, ``"geometric"``,
    ``"min"`` or ``"max"``; 1.0 if both sides have one cluster (or none), 0.0 if MI = 0.

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> normalized_mutual_info_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    return _read(information.NormalizedMutualInfo(average_method), labels_true, labels_pred,
                 twin.normalized_mutual_info_score, average_method=average_method)


def homogeneity_completeness_v_measure(
    labels_true, labels_pred, *, beta: float = 1.0
) -> tuple[float, float, float]:
    """``(homogeneity, completeness, V-beta)``: ``MI/H(T)``, ``MI/H(P)``,
    ``(1+β)hc/(βh+c)``; scikit-learn's edge cases (empty input: all 1.0), from one count.

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> [round(x, 3) for x in homogeneity_completeness_v_measure([0, 0, 1, 1], [0, 0, 0, 0])]
    [0.0, 1.0, 0.0]
    """
    metrics = information.Homogeneity(), information.Completeness(), information.VBeta(beta)
    if not NATIVE:
        return twin.homogeneity_completeness_v_measure(labels_true, labels_pred, beta=beta)
    _count(labels_true, labels_pred, *metrics)
    h, c, v = (m.get() for m in metrics)
    return h, c, v


def homogeneity_score(labels_true, labels_pred) -> float:
    """Homogeneity ``MI / H(T)`` (1.0 when ``H(T) = 0``).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> homogeneity_score([0, 0, 1, 1], [0, 0, 1, 2])
    1.0
    """
    return _read(information.Homogeneity(), labels_true, labels_pred, twin.homogeneity_score)


def completeness_score(labels_true, labels_pred) -> float:
    """Completeness ``MI / H(P)`` (1.0 when ``H(P) = 0``).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> completeness_score([0, 0, 1, 2], [0, 0, 1, 1])
    1.0
    """
    return _read(information.Completeness(), labels_true, labels_pred, twin.completeness_score)


def v_measure_score(labels_true, labels_pred, *, beta: float = 1.0) -> float:
    """V-measure ``(1+β)hc / (βh + c)``.

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> v_measure_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    return _read(information.VBeta(beta), labels_true, labels_pred, twin.v_measure_score, beta=beta)


def variation_of_information(labels_true, labels_pred) -> float:
    """Variation of information ``H(T) + H(P) - 2 MI`` in nats (0 for identical clusterings).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> round(variation_of_information([0, 0, 1, 1], [0, 0, 0, 0]), 6)
    0.693147
    """
    return _read(information.VariationOfInformation(), labels_true, labels_pred, twin.variation_of_information)


# --------------------------------------------------------------------------- matching
def purity_score(labels_true, labels_pred) -> float:
    """Purity ``(1/N) Σ_j max_i n[i,j]`` (1.0 for empty input), from the table's largest cell
    per column.

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> purity_score([0, 0, 1, 1], [0, 0, 0, 0])
    0.5
    """
    return _read(matching.Purity(), labels_true, labels_pred, twin.purity_score)


def inverse_purity_score(labels_true, labels_pred) -> float:
    """Inverse purity ``(1/N) Σ_i max_j n[i,j]`` (1.0 for empty input).

    Cost: O(N) for integer arrays (O(N log N) for other labels) plus O(cells), then O(1).

    >>> inverse_purity_score([0, 0, 1, 1], [0, 0, 0, 0])
    1.0
    """
    return _read(matching.InversePurity(), labels_true, labels_pred, twin.inverse_purity_score)
