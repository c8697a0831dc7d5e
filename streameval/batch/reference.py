"""The independent numpy twins of the batch label metrics: the tests' oracle, and the fallback.

Written from the formulas with numpy, separately from the streaming code (it imports neither the
table nor the metrics): each labelling is factorised once, the cells counted once, and every
value computed from those counts in floating point. The public functions of
:mod:`streameval.batch.labels` count natively and read the streaming metrics' exact sums; the
tests hold them against these twins and a brute-force oracle, and without the native extension
they call these twins. Each function is O(N log N) for the factorisation plus O(cells) for the
score. Labels are grouped as :meth:`streameval.Contingency.update` groups them (Python equality,
see :mod:`streameval.labels`); a missing label (``None``, NaN, ``pandas.NA``, ``NaT``) raises
:class:`~streameval.errors.MissingLabelError`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import require
from ..labels import factorize


def _factorize(values, name: str) -> np.ndarray:
    """Cluster indices of ``values``, grouped by Python equality (:func:`streameval.labels.factorize`)."""
    return factorize(values, name)[0]


def same_length(it, ip) -> None:
    """Refuse two labellings of different lengths, naming both lengths. O(1).

    >>> same_length([0, 1], [0])
    Traceback (most recent call last):
    ValueError: labels_true and labels_pred must have the same length, got 2 and 1
    """
    if len(it) != len(ip):
        raise ValueError(
            f"labels_true and labels_pred must have the same length, got {len(it)} and {len(ip)}"
        )


def cells(labels_true, labels_pred):
    """``(n, rows, cols, sizes_true, sizes_pred)``: the count, row and column of every non-zero
    cell, and the cluster sizes of each side; each labelling factorised once. O(N log N).

    >>> [x.tolist() for x in cells([0, 0, 1], ["x", "y", "y"])]
    [[1, 1, 1], [0, 0, 1], [0, 1, 1], [2, 1], [1, 2]]
    """
    it = _factorize(labels_true, "labels_true")
    ip = _factorize(labels_pred, "labels_pred")
    same_length(it, ip)
    if len(it) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty, empty
    kt, kp = int(it.max()) + 1, int(ip.max()) + 1
    if kt * kp <= 4 * len(it):  # a small table: count every cell at once
        counts = np.bincount(it * kp + ip, minlength=kt * kp)
        cells = np.flatnonzero(counts)
        n = counts[cells]
    else:
        cells, n = np.unique(it * kp + ip, return_counts=True)
    return (n.astype(np.int64), cells // kp, cells % kp,
            np.bincount(it, minlength=kt).astype(np.int64), np.bincount(ip, minlength=kp).astype(np.int64))


def contingency_cells(labels_true, labels_pred):
    """The non-zero cells of the contingency table as numpy arrays.

    Returns ``(n, a, b)``: per non-zero cell its count ``n[i,j]``, its row sum ``a[i]`` and its
    column sum ``b[j]`` (int64 arrays of equal length). O(N log N).

    >>> n, a, b = contingency_cells([0, 0, 1], ["x", "y", "y"])
    >>> n.tolist(), a.tolist(), b.tolist()
    ([1, 1, 1], [2, 2, 1], [1, 2, 2])
    """
    n, rows, cols, a, b = cells(labels_true, labels_pred)
    return n, a[rows], b[cols]


def sorted_codes(values, name: str) -> tuple[np.ndarray, int]:
    """``(codes, number of clusters)``: cluster indices numbered in the sorted order of the labels,
    as ``numpy.unique`` numbers them (scikit-learn's rows and columns); first-seen order for labels
    that do not sort. O(N log N).

    >>> [x if isinstance(x, int) else x.tolist() for x in sorted_codes(["b", "a", "b"], "labels")]
    [[1, 0, 1], 2]
    """
    codes, uniques = factorize(values, name)
    try:
        order = sorted(range(len(uniques)), key=uniques.__getitem__)
    except TypeError:  # e.g. strings beside numbers: no order, keep first seen
        return codes, len(uniques)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[order] = np.arange(len(uniques))
    return rank[codes], len(uniques)


def contingency_matrix(labels_true, labels_pred, *, eps=None, sparse=False, dtype=np.int64):
    """The contingency table as scikit-learn's ``sklearn.metrics.cluster.contingency_matrix``
    returns it: ``C[i, j]`` counts the elements of true class ``i`` predicted in cluster ``j``,
    rows and columns in the sorted order of the labels. ``sparse=True`` gives a SciPy CSR matrix
    (``pip install "streameval[sklearn]"``); ``eps`` is added to every cell of the dense table
    (refused with ``sparse=True``, as scikit-learn refuses it). Labels are grouped by Python
    equality (:mod:`streameval.labels`). Cost O(N log N) plus the table's size:
    ``k_true·k_pred`` dense, the non-zero cells sparse.

    >>> contingency_matrix(["b", "a", "a", "b"], [1, 1, 2, 2])
    array([[1, 1],
           [1, 1]])
    >>> contingency_matrix([0, 0, 1], [5, 5, 7], sparse=True).toarray()
    array([[2, 0],
           [0, 1]])
    """
    it, kt = sorted_codes(labels_true, "labels_true")
    ip, kp = sorted_codes(labels_pred, "labels_pred")
    same_length(it, ip)
    if sparse:
        if eps is not None:
            raise ValueError("eps cannot be set when sparse=True: it would fill every cell")
        sp = require("scipy.sparse", "contingency_matrix(sparse=True)", "sklearn")
        table = sp.coo_matrix((np.ones(len(it), dtype=dtype), (it, ip)), shape=(kt, kp), dtype=dtype)
        table = table.tocsr()
        table.sum_duplicates()
        return table
    dense = np.bincount(it * kp + ip, minlength=kt * kp).reshape(kt, kp).astype(dtype)
    return dense if eps is None else dense + eps


def pair_confusion_matrix(labels_true, labels_pred) -> np.ndarray:
    """The 2×2 pair confusion matrix of scikit-learn: over *ordered* pairs of distinct elements,
    ``[[TN, FP], [FN, TP]]`` (so each count is twice the pairs: ``C[1, 1] = 2·TP``), where TP are
    the pairs together in both labellings, FP together only in ``labels_pred`` and FN only in
    ``labels_true``. Exact integers; cost O(N log N).

    >>> pair_confusion_matrix([0, 0, 1, 1], [0, 0, 1, 2]).tolist()
    [[8, 0], [2, 2]]
    """
    tp, pp, tt, total = _pairs(labels_true, labels_pred)
    return np.array([[2 * (total - pp - tt + tp), 2 * (pp - tp)], [2 * (tt - tp), 2 * tp]], dtype=np.int64)


# --------------------------------------------------------------------------- element-based
def _element_score(labels_true, labels_pred, beta, f_convention, elm) -> tuple[float, float, float]:
    if f_convention not in ("element_averaged", "f_of_averages"):
        raise ValueError(f"unknown f_convention {f_convention!r}")
    n, a, b = (x.astype(np.float64) for x in contingency_cells(labels_true, labels_pred))
    total = n.sum()
    if total == 0:
        return 1.0, 1.0, 1.0
    b2 = beta * beta
    if elm:
        with np.errstate(divide="ignore", invalid="ignore"):
            p_e = np.where(b > 1, (n - 1) / (b - 1), 1.0)
            r_e = np.where(a > 1, (n - 1) / (a - 1), 1.0)
            den = b2 * (a - 1) + (b - 1)
            f_e = np.where(den > 0, (1 + b2) * (n - 1) / den, 1.0)
    else:
        p_e, r_e = n / b, n / a
        f_e = (1 + b2) * n / (b2 * a + b)
    p = float((n * p_e).sum() / total)
    r = float((n * r_e).sum() / total)
    if f_convention == "element_averaged":
        f = float((n * f_e).sum() / total)
    else:
        f = (1 + b2) * p * r / (b2 * p + r) if b2 * p + r else 0.0
    return p, r, f


def elm_precision_recall_fscore(
    labels_true, labels_pred, *, beta=1.0, f_convention="element_averaged"
) -> tuple[float, float, float]:
    """ELM precision, recall and F-beta ``(P, R, F)``; see :class:`streameval.ELM`.

    Per element in cell ``(i, j)``: ``P_e = (n-1)/(b-1)`` (1 if ``b = 1``), ``R_e = (n-1)/(a-1)``
    (1 if ``a = 1``), ``F_e = (1+β²)(n-1)/(β²(a-1)+(b-1))`` (1 if ``a = b = 1``), averaged over
    elements; ``f_convention="f_of_averages"`` gives ``F = (1+β²)PR/(β²P+R)`` instead. The triple
    of scikit-learn's ``precision_recall_fscore_support``; :func:`elm_score` gives F alone.

    >>> elm_precision_recall_fscore([1, 1], [1, 2])  # the ELM paper's 2-element example
    (1.0, 0.0, 0.0)
    """
    return _element_score(labels_true, labels_pred, beta, f_convention, True)


def elm_score(labels_true, labels_pred, *, beta=1.0, f_convention="element_averaged") -> float:
    """ELM F-beta, a float (see :func:`elm_precision_recall_fscore` for ``(P, R, F)``).

    >>> elm_score([1, 1], [1, 2])  # the ELM paper's 2-element example: BCubed F 0.667, ELM 0
    0.0
    >>> round(elm_score([1, 1, 2], [1, 1, 1]), 4)
    0.4444
    """
    return _element_score(labels_true, labels_pred, beta, f_convention, True)[2]


def bcubed_precision_recall_fscore(
    labels_true, labels_pred, *, beta=1.0, f_convention="element_averaged"
) -> tuple[float, float, float]:
    """BCubed precision, recall and F-beta ``(P, R, F)``; see :class:`streameval.BCubed`.

    Per element: ``P_e = n/b``, ``R_e = n/a``, ``F_e = (1+β²)n/(β²a+b)``, averaged over elements.

    >>> [round(x, 3) for x in bcubed_precision_recall_fscore([1, 1], [1, 2])]
    [1.0, 0.5, 0.667]
    """
    return _element_score(labels_true, labels_pred, beta, f_convention, False)


def bcubed_score(labels_true, labels_pred, *, beta=1.0, f_convention="element_averaged") -> float:
    """BCubed F-beta, a float (see :func:`bcubed_precision_recall_fscore` for ``(P, R, F)``).

    >>> round(bcubed_score([1, 1], [1, 2]), 3)
    0.667
    """
    return _element_score(labels_true, labels_pred, beta, f_convention, False)[2]


# --------------------------------------------------------------------------- pair counting
def _pairs(labels_true, labels_pred):
    n, _, _, a, b = cells(labels_true, labels_pred)
    total_n = int(n.sum())
    return _c2_sum(n), _c2_sum(b), _c2_sum(a), total_n * (total_n - 1) // 2


def _c2_sum(sizes: np.ndarray) -> int:
    """``Σ C(s, 2)`` exactly: int64 while it cannot overflow (``Σ s² ≤ (Σ s)² < 2⁶³``), Python
    integers beyond."""
    total = int(sizes.sum())
    if total < 3_000_000_000:
        return int((sizes * (sizes - 1) // 2).sum())
    obj = sizes.astype(object)
    return int((obj * (obj - 1) // 2).sum())


def rand_score(labels_true, labels_pred) -> float:
    """Rand index ``(TP + TN) / C2(N)``; 1.0 when every pair agrees (or ``N < 2``).

    >>> rand_score([0, 0, 1], [0, 1, 1])
    0.3333333333333333
    """
    tp, pp, tt, total = _pairs(labels_true, labels_pred)
    tn = total - pp - tt + tp
    return 1.0 if tp + tn == total else (tp + tn) / total


def adjusted_rand_score(labels_true, labels_pred) -> float:
    """Adjusted Rand index (Hubert & Arabie); 1.0 when no pair is in disagreement.

    >>> round(adjusted_rand_score([0, 0, 1, 1], [0, 0, 1, 2]), 6)
    0.571429
    """
    tp, pp, tt, total = _pairs(labels_true, labels_pred)
    expected = pp * tt / total if total else 0.0
    mean = (pp + tt) / 2
    if pp == tp and tt == tp:
        return 1.0
    return (tp - expected) / (mean - expected)


def pair_precision_score(labels_true, labels_pred) -> float:
    """Share of predicted same-cluster pairs that are true: ``TP / PP`` (1.0 if ``PP = 0``).

    >>> pair_precision_score([0, 0, 1], [0, 0, 0])
    0.3333333333333333
    """
    tp, pp, _, _ = _pairs(labels_true, labels_pred)
    return tp / pp if pp else 1.0


def pair_recall_score(labels_true, labels_pred) -> float:
    """Share of true same-cluster pairs that are predicted: ``TP / TT`` (1.0 if ``TT = 0``).

    >>> pair_recall_score([0, 0, 0], [0, 0, 1])
    0.3333333333333333
    """
    tp, _, tt, _ = _pairs(labels_true, labels_pred)
    return tp / tt if tt else 1.0


def pair_f1_score(labels_true, labels_pred) -> float:
    """Harmonic mean of pair precision and recall, ``2TP / (PP + TT)`` (1.0 if both are 0).

    >>> pair_f1_score([0, 0, 0, 1], [0, 0, 1, 1])
    0.4
    """
    tp, pp, tt, _ = _pairs(labels_true, labels_pred)
    return 2 * tp / (pp + tt) if pp + tt else 1.0


def pair_jaccard_score(labels_true, labels_pred) -> float:
    """Pair Jaccard ``TP / (PP + TT - TP)`` (1.0 if neither clustering links a pair).

    >>> pair_jaccard_score([0, 0, 0, 1], [0, 0, 1, 1])
    0.25
    """
    tp, pp, tt, _ = _pairs(labels_true, labels_pred)
    return tp / (pp + tt - tp) if pp + tt - tp else 1.0


def fowlkes_mallows_score(labels_true, labels_pred) -> float:
    """Fowlkes-Mallows ``TP / sqrt(PP·TT)``; 0.0 when ``TP = 0`` (scikit-learn's convention).

    >>> round(fowlkes_mallows_score([0, 0, 1, 1], [0, 0, 0, 1]), 6)
    0.408248
    """
    tp, pp, tt, _ = _pairs(labels_true, labels_pred)
    return tp / math.sqrt(pp * tt) if tp else 0.0


# --------------------------------------------------------------------------- information
def _entropy(sizes: np.ndarray) -> float:
    sizes = sizes[sizes > 0].astype(np.float64)
    if len(sizes) <= 1:
        return 0.0
    p = sizes / sizes.sum()
    return float(-(p * np.log(p)).sum())


def _info(labels_true, labels_pred):
    """``(H(T), H(P), MI, k_true, k_pred)`` in nats."""
    n, rows, cols, sizes_t, sizes_p = cells(labels_true, labels_pred)
    ht, hp = _entropy(sizes_t), _entropy(sizes_p)
    total = float(n.sum())
    if total == 0 or ht == 0 or hp == 0:
        return ht, hp, 0.0, len(sizes_t), len(sizes_p)
    n, a, b = n.astype(np.float64), sizes_t[rows].astype(np.float64), sizes_p[cols].astype(np.float64)
    mi = float((n / total * np.log(n * total / (a * b))).sum())
    return ht, hp, max(mi, 0.0), len(sizes_t), len(sizes_p)


def _contingency_info(contingency) -> float:
    """Mutual information of a given contingency table (dense array or SciPy sparse matrix of
    non-negative counts, integer or float), the labels not needed: ``Σ (n/N) log(N n / (a b))``
    over its non-zero cells, with ``a``/``b`` its row/column sums; 0.0 with a single row or column."""
    if hasattr(contingency, "tocoo"):  # SciPy sparse
        coo = contingency.tocoo()
        shape = coo.shape
        rows, cols, n = coo.row, coo.col, np.asarray(coo.data, dtype=np.float64)
    else:
        table = np.asarray(contingency)
        if table.ndim != 2 or table.dtype.kind not in "iuf":
            raise ValueError(f"contingency must be a two-dimensional array of counts, got {table.dtype} "
                             f"of shape {table.shape}")
        shape = table.shape
        rows, cols = np.nonzero(table)
        n = table[rows, cols].astype(np.float64)
    if not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ValueError("contingency must hold finite, non-negative counts")
    if shape[0] <= 1 or shape[1] <= 1 or n.sum() == 0:
        return 0.0
    a = np.bincount(rows, weights=n, minlength=shape[0])[rows]
    b = np.bincount(cols, weights=n, minlength=shape[1])[cols]
    keep = n > 0
    n, a, b = n[keep], a[keep], b[keep]
    total = n.sum()
    return max(float((n / total * np.log(n * total / (a * b))).sum()), 0.0)


def mutual_info_score(labels_true, labels_pred, *, contingency=None) -> float:
    """Mutual information ``Σ (n/N) log(N n / (a b))`` in nats; 0.0 if a side has one cluster.

    ``contingency``: a table already counted (as :func:`contingency_matrix` or scikit-learn's
    returns it, dense or sparse); the labels are then ignored (pass ``None``), as in
    scikit-learn. Cost O(N log N) from labels, O(cells) from a sparse table.

    >>> round(mutual_info_score([0, 0, 1, 1], [0, 0, 1, 1]), 6)
    0.693147
    >>> round(mutual_info_score(None, None, contingency=[[2, 0], [0, 2]]), 6)
    0.693147
    """
    if contingency is not None:
        return _contingency_info(contingency)
    return _info(labels_true, labels_pred)[2]


def normalized_mutual_info_score(labels_true, labels_pred, *, average_method: str = "arithmetic") -> float:
    """``MI / mean(H(T), H(P))``; 1.0 if both sides have one cluster (or none), 0.0 if MI = 0.

    >>> normalized_mutual_info_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    ht, hp, mi, kt, kp = _info(labels_true, labels_pred)
    if kt == kp and kt <= 1:
        return 1.0
    if mi == 0:
        return 0.0
    norm = {
        "arithmetic": (ht + hp) / 2,
        "geometric": math.sqrt(ht * hp),
        "min": min(ht, hp),
        "max": max(ht, hp),
    }
    if average_method not in norm:
        raise ValueError(f"unknown average_method {average_method!r}")
    return mi / norm[average_method]


def homogeneity_completeness_v_measure(
    labels_true, labels_pred, *, beta: float = 1.0
) -> tuple[float, float, float]:
    """``(homogeneity, completeness, V-beta)``; scikit-learn's edge cases (empty input: all 1.0).

    >>> [round(x, 3) for x in homogeneity_completeness_v_measure([0, 0, 1, 1], [0, 0, 0, 0])]
    [0.0, 1.0, 0.0]
    """
    ht, hp, mi, kt, kp = _info(labels_true, labels_pred)
    if kt == 0 and kp == 0:  # empty input
        return 1.0, 1.0, 1.0
    h = mi / ht if ht else 1.0
    c = mi / hp if hp else 1.0
    v = 0.0 if h + c == 0 else (1 + beta) * h * c / (beta * h + c)
    return h, c, v


def homogeneity_score(labels_true, labels_pred) -> float:
    """Homogeneity ``MI / H(T)`` (1.0 when ``H(T) = 0``).

    >>> homogeneity_score([0, 0, 1, 1], [0, 0, 1, 2])
    1.0
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[0]


def completeness_score(labels_true, labels_pred) -> float:
    """Completeness ``MI / H(P)`` (1.0 when ``H(P) = 0``).

    >>> completeness_score([0, 0, 1, 2], [0, 0, 1, 1])
    1.0
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[1]


def v_measure_score(labels_true, labels_pred, *, beta=1.0) -> float:
    """V-measure ``(1+β)hc / (βh + c)``.

    >>> v_measure_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred, beta=beta)[2]


def variation_of_information(labels_true, labels_pred) -> float:
    """Variation of information ``H(T) + H(P) - 2 MI`` in nats (0 for identical clusterings).

    >>> round(variation_of_information([0, 0, 1, 1], [0, 0, 0, 0]), 6)
    0.693147
    """
    ht, hp, mi, _, _ = _info(labels_true, labels_pred)
    return max(0.0, ht + hp - 2 * mi)


# --------------------------------------------------------------------------- matching
def _purity(labels_major, labels_minor) -> float:
    """Share of elements in the largest ``labels_minor`` class of their ``labels_major`` cluster."""
    major = _factorize(labels_major, "labels")
    minor = _factorize(labels_minor, "labels")
    if len(major) != len(minor):
        raise ValueError(
            f"labels_true and labels_pred must have the same length, got {len(minor)} and "
            f"{len(major)}"
        )
    if len(major) == 0:
        return 1.0
    km = int(minor.max()) + 1
    cells, n = np.unique(major * km + minor, return_counts=True)
    best = np.zeros(int(major.max()) + 1, dtype=np.int64)
    np.maximum.at(best, cells // km, n)
    return float(best.sum() / len(major))


def purity_score(labels_true, labels_pred) -> float:
    """Purity ``(1/N) Σ_j max_i n[i,j]`` (1.0 for empty input).

    >>> purity_score([0, 0, 1, 1], [0, 0, 0, 0])
    0.5
    """
    return _purity(labels_pred, labels_true)


def inverse_purity_score(labels_true, labels_pred) -> float:
    """Inverse purity ``(1/N) Σ_i max_j n[i,j]`` (1.0 for empty input).

    >>> inverse_purity_score([0, 0, 1, 1], [0, 0, 0, 0])
    1.0
    """
    return _purity(labels_true, labels_pred)
