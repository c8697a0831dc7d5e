"""Batch twins of the label metrics, from a numpy contingency table (see :mod:`streameval.batch`).

Each function is O(N log N) for the factorisation plus O(cells) for the score. Labels are grouped
as :meth:`streameval.Contingency.update` groups them (Python equality, see
:mod:`streameval.labels`); a missing label (``None``, NaN, ``pandas.NA``, ``NaT``) raises
:class:`~streameval.errors.MissingLabelError`.
"""

from __future__ import annotations

import math

import numpy as np

from ..labels import factorize


def _factorize(values, name: str) -> np.ndarray:
    """Cluster indices of ``values``, grouped by Python equality (:func:`streameval.labels.factorize`)."""
    return factorize(values, name)[0]


def contingency_cells(labels_true, labels_pred):
    """The non-zero cells of the contingency table as numpy arrays.

    Returns ``(n, a, b)``: per non-zero cell its count ``n[i,j]``, its row sum ``a[i]`` and its
    column sum ``b[j]`` (int64 arrays of equal length). O(N log N).

    >>> n, a, b = contingency_cells([0, 0, 1], ["x", "y", "y"])
    >>> n.tolist(), a.tolist(), b.tolist()
    ([1, 1, 1], [2, 2, 1], [1, 2, 2])
    """
    it = _factorize(labels_true, "labels_true")
    ip = _factorize(labels_pred, "labels_pred")
    if len(it) != len(ip):
        raise ValueError(
            f"labels_true and labels_pred must have the same length, got {len(it)} and {len(ip)}"
        )
    if len(it) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    kp = int(ip.max()) + 1
    cells, n = np.unique(it * kp + ip, return_counts=True)
    rows, cols = cells // kp, cells % kp
    a = np.bincount(it)[rows]
    b = np.bincount(ip)[cols]
    return n.astype(np.int64), a.astype(np.int64), b.astype(np.int64)


def _clusters(labels) -> np.ndarray:
    """Cluster sizes of one labelling."""
    return np.bincount(_factorize(labels, "labels"))


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
    n, _, _ = contingency_cells(labels_true, labels_pred)
    total_n = int(n.sum())
    obj = n.astype(object)
    tp = int((obj * (obj - 1) // 2).sum()) if len(n) else 0
    a = _clusters(labels_true).astype(object)
    b = _clusters(labels_pred).astype(object)
    tt = int((a * (a - 1) // 2).sum()) if len(a) else 0
    pp = int((b * (b - 1) // 2).sum()) if len(b) else 0
    return tp, pp, tt, total_n * (total_n - 1) // 2


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
    n, a, b = (x.astype(np.float64) for x in contingency_cells(labels_true, labels_pred))
    ht = _entropy(_clusters(labels_true))
    hp = _entropy(_clusters(labels_pred))
    total = n.sum()
    if total == 0 or ht == 0 or hp == 0:
        return ht, hp, 0.0
    mi = float((n / total * np.log(n * total / (a * b))).sum())
    return ht, hp, max(mi, 0.0)


def mutual_info_score(labels_true, labels_pred) -> float:
    """Mutual information ``Σ (n/N) log(N n / (a b))`` in nats; 0.0 if a side has one cluster.

    >>> round(mutual_info_score([0, 0, 1, 1], [0, 0, 1, 1]), 6)
    0.693147
    """
    return _info(labels_true, labels_pred)[2]


def normalized_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic"):
    """``MI / mean(H(T), H(P))``; 1.0 if both sides have one cluster (or none), 0.0 if MI = 0.

    >>> normalized_mutual_info_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    kt, kp = len(_clusters(labels_true)), len(_clusters(labels_pred))
    if kt == kp and kt <= 1:
        return 1.0
    ht, hp, mi = _info(labels_true, labels_pred)
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


def homogeneity_completeness_v_measure(labels_true, labels_pred, *, beta=1.0):
    """``(homogeneity, completeness, V-beta)``; scikit-learn's edge cases (empty input: all 1.0).

    >>> [round(x, 3) for x in homogeneity_completeness_v_measure([0, 0, 1, 1], [0, 0, 0, 0])]
    [0.0, 1.0, 0.0]
    """
    if len(_factorize(labels_true, "labels_true")) == 0 and len(
        _factorize(labels_pred, "labels_pred")
    ) == 0:
        return 1.0, 1.0, 1.0
    ht, hp, mi = _info(labels_true, labels_pred)
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
    ht, hp, mi = _info(labels_true, labels_pred)
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
