"""Batch twins of the coreference and on-demand matching metrics (see :mod:`streameval.batch`).

Written from the published formulas with numpy over an integer-coded contingency table, apart from
the streaming code: MUC from the chain partitions, BLANC from the four link counts, LEA from each
entity's kept links, the basic merge distance from the splits and merges it counts, CEAF and cluster accuracy by a dense assignment per connected block of the
table, AMI with the hypergeometric probabilities of ``scipy.stats.hypergeom``. Every function
returns plain floats: each ``*_score`` returns its F (as every scikit-learn ``*_score`` returns a
float), and ``*_precision_recall_fscore`` returns ``(precision, recall, f)``.
"""

from __future__ import annotations

import math

import numpy as np

from .reference import cells

__all__ = [
    "muc_score",
    "muc_precision_recall_fscore",
    "blanc_score",
    "blanc_precision_recall_fscore",
    "lea_score",
    "lea_precision_recall_fscore",
    "ceaf_score",
    "ceaf_precision_recall_fscore",
    "cluster_accuracy_score",
    "adjusted_mutual_info_score",
    "basic_merge_distance",
]


def _table(labels_true, labels_pred):
    """``(rows, cols, counts, a, b)``: the non-zero cells (row/column codes and counts) and sizes
    (the label metrics' one counting pass, :func:`streameval.batch.reference.cells`)."""
    counts, rows, cols, a, b = cells(labels_true, labels_pred)
    return rows, cols, counts, a, b


def _div(num, den) -> float:
    return float(num) / float(den) if den else 0.0


def _f(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _c2(x) -> int:
    x = np.asarray(x, dtype=object)
    return int((x * (x - 1) // 2).sum()) if len(x) else 0


def muc_precision_recall_fscore(labels_true, labels_pred) -> tuple[float, float, float]:
    """MUC ``(P, R, F1)`` (Vilain et al. 1995); see :class:`streameval.MUC`.

    Recall ``Σ_K (|K| - |p(K)|) / Σ_K (|K| - 1)`` over key chains ``K``, ``p(K)`` the parts the
    response splits ``K`` into; precision the same with key and response swapped; 0 for an empty
    denominator.

    Cost: O(N log N) to count the cells, then O(cells + kT + kP).

    >>> muc_precision_recall_fscore([0, 0, 0, 0], [0, 0, 1, 1])  # Vilain et al., Table 1, row 1
    (1.0, 0.6666666666666666, 0.8)
    """
    rows, cols, _, a, b = _table(labels_true, labels_pred)
    parts_of_key = np.bincount(rows, minlength=len(a))  # response parts of each key chain
    parts_of_resp = np.bincount(cols, minlength=len(b))
    r = _div((a - parts_of_key).sum(), (a - 1).sum())
    p = _div((b - parts_of_resp).sum(), (b - 1).sum())
    return p, r, _f(p, r)


def muc_score(labels_true, labels_pred) -> float:
    """MUC F1, a float (see :func:`muc_precision_recall_fscore` for ``(P, R, F1)``).

    ``2PR/(P + R)`` of :func:`muc_precision_recall_fscore`'s ``P`` and ``R``. Cost: O(N log N) to count
    the cells, then O(cells + kT + kP).

    >>> muc_score([0, 0, 0, 0], [0, 0, 1, 1])  # Vilain et al., Table 1, row 1
    0.8
    """
    return muc_precision_recall_fscore(labels_true, labels_pred)[2]


def blanc_precision_recall_fscore(labels_true, labels_pred) -> tuple[float, float, float]:
    """BLANC ``(P, R, F)`` (Recasens & Hovy 2011; Luo et al. 2014); see :class:`streameval.BLANC`.

    Coreference links: ``P_c = |C_k ∩ C_r| / |C_r|``, ``R_c = |C_k ∩ C_r| / |C_k|``; non-coreference
    links likewise with ``N_k``, ``N_r``; each of P, R, F is the mean over the link types present in
    the key or the response (0 when none is).

    Cost: O(N log N) to count the cells, then O(cells + kT + kP).

    >>> p_r_f = blanc_precision_recall_fscore([0, 1, 1, 2, 2, 2], [0, 1, 2, 3, 4, 5])  # TC-A-10
    >>> [round(x, 5) for x in p_r_f]
    [0.36667, 0.5, 0.42308]
    """
    _, _, counts, a, b = _table(labels_true, labels_pred)
    n = int(counts.sum())
    both, ck, cr = _c2(counts), _c2(a), _c2(b)
    total = n * (n - 1) // 2
    nk, nr = total - ck, total - cr
    non_both = total - ck - cr + both
    scores = []
    for inter, key, resp in ((both, ck, cr), (non_both, nk, nr)):
        if key or resp:
            p, r = _div(inter, resp), _div(inter, key)
            scores.append((p, r, _f(p, r)))
    if not scores:
        return 0.0, 0.0, 0.0
    p, r, f = (float(np.mean([s[i] for s in scores])) for i in range(3))
    return p, r, f


def blanc_score(labels_true, labels_pred) -> float:
    """BLANC F, a float (see :func:`blanc_precision_recall_fscore` for ``(P, R, F)``).

    ``(F_c + F_n)/2`` (one of them alone, or 0, at the boundaries of
    :func:`blanc_precision_recall_fscore`). Cost: O(N log N) to count the cells, then
    O(cells + kT + kP).

    >>> round(blanc_score([0, 1, 1, 2, 2, 2], [0, 1, 2, 3, 4, 5]), 5)  # TC-A-10
    0.42308
    """
    return blanc_precision_recall_fscore(labels_true, labels_pred)[2]


def _lea_side(groups, counts, sizes_of_group, singles_both):
    """``Σ_e |e|·res(e)``: per entity its size times the share of its links kept."""
    kept = np.zeros(len(sizes_of_group))
    np.add.at(kept, groups, counts * (counts - 1) / 2.0)
    sizes = sizes_of_group.astype(float)
    big = sizes > 1
    return float((sizes[big] * kept[big] / (sizes[big] * (sizes[big] - 1) / 2)).sum()) + singles_both


def lea_precision_recall_fscore(labels_true, labels_pred) -> tuple[float, float, float]:
    """LEA ``(P, R, F1)`` (Moosavi & Strube 2016); see :class:`streameval.LEA`.

    Recall ``Σ_k |k| · Σ_r link(k ∩ r)/link(k) / Σ_k |k|`` with ``link(e) = |e|(|e|-1)/2``; a key
    singleton counts its self-link, resolved iff the response also has it alone. Precision swaps
    key and response. 0 on empty input.

    Cost: O(N log N) to count the cells, then O(cells + kT + kP).

    >>> [round(x, 4) for x in lea_precision_recall_fscore([0, 1, 1, 2, 2, 2], [0, 0, 0, 0, 0, 0])]  # TC-A-11
    [0.2667, 0.8333, 0.404]
    """
    rows, cols, counts, a, b = _table(labels_true, labels_pred)
    n = int(counts.sum())
    if n == 0:
        return 0.0, 0.0, 0.0
    singles_both = int(((a[rows] == 1) & (b[cols] == 1)).sum())
    r = _lea_side(rows, counts, a, singles_both) / n
    p = _lea_side(cols, counts, b, singles_both) / n
    return p, r, _f(p, r)


def lea_score(labels_true, labels_pred) -> float:
    """LEA F1, a float (see :func:`lea_precision_recall_fscore` for ``(P, R, F1)``).

    ``2PR/(P + R)`` of :func:`lea_precision_recall_fscore`'s ``P`` and ``R``. Cost: O(N log N) to count
    the cells, then O(cells + kT + kP).

    >>> round(lea_score([0, 1, 1, 2, 2, 2], [0, 0, 0, 0, 0, 0]), 4)  # TC-A-11
    0.404
    """
    return lea_precision_recall_fscore(labels_true, labels_pred)[2]


def _assignment_total(rows, cols, sim, kt, kp) -> float:
    """Largest total similarity of a one-to-one matching, solved per connected block of cells."""
    from ..errors import require

    linear_sum_assignment = require(
        "scipy.optimize", "batch.ceaf_score and batch.cluster_accuracy_score", "sklearn"
    ).linear_sum_assignment
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if len(sim) == 0:
        return 0.0
    graph = coo_matrix((np.ones(len(rows)), (rows, kt + cols)), shape=(kt + kp, kt + kp))
    _, comp = connected_components(graph, directed=False)
    block = comp[rows]
    total = []
    for c in np.unique(block):
        sel = block == c
        r_ids, r = np.unique(rows[sel], return_inverse=True)
        c_ids, cc = np.unique(cols[sel], return_inverse=True)
        dense = np.zeros((len(r_ids), len(c_ids)))
        dense[r, cc] = sim[sel]
        i, j = linear_sum_assignment(dense, maximize=True)
        total.extend(dense[i, j].tolist())
    return math.fsum(total)


def ceaf_precision_recall_fscore(labels_true, labels_pred, *, variant="entity") -> tuple[float, float, float]:
    """CEAF ``(P, R, F1)`` (Luo 2005), ``variant`` ``"entity"`` (φ4) or ``"mention"`` (φ3).

    ``Φ = max over one-to-one alignments g of Σ_K φ(K, g(K))``; φ4 ``= 2|K∩R|/(|K|+|R|)`` with
    recall ``Φ/#key entities`` and precision ``Φ/#response entities``; φ3 ``= |K∩R|`` with recall and
    precision ``Φ/N``. 0 on empty input. Needs SciPy.

    Cost: O(N log N) to count the cells, then the assignment per connected block of cells
    (O(r·c·min(r, c)) at worst for a block of ``r`` true and ``c`` predicted clusters).

    >>> gold = [0] * 5 + [1] * 2 + [2] * 5  # Luo (2005), Figure 1
    >>> [round(x, 3) for x in ceaf_precision_recall_fscore(gold, [0] * 5 + [1] * 7)]  # system (a): F 0.733
    [0.917, 0.611, 0.733]
    """
    if variant not in ("entity", "mention"):
        raise ValueError(f"variant must be 'entity' or 'mention', got {variant!r}")
    rows, cols, counts, a, b = _table(labels_true, labels_pred)
    n = int(counts.sum())
    if n == 0:
        return 0.0, 0.0, 0.0
    if variant == "mention":
        phi = _assignment_total(rows, cols, counts.astype(float), len(a), len(b))
        p = r = phi / n
    else:
        sim = 2.0 * counts / (a[rows] + b[cols])
        phi = _assignment_total(rows, cols, sim, len(a), len(b))
        p, r = phi / len(b), phi / len(a)
    return p, r, _f(p, r)


def ceaf_score(labels_true, labels_pred, *, variant="entity") -> float:
    """CEAF F1, a float (see :func:`ceaf_precision_recall_fscore` for ``(P, R, F1)``).

    ``2PR/(P + R)`` of :func:`ceaf_precision_recall_fscore`'s ``P`` and ``R``. Cost: O(N log N) to count
    the cells, then the assignment per connected block of cells (O(r·c·min(r, c)) at worst for a block
    of ``r`` true and ``c`` predicted clusters).

    >>> round(ceaf_score([0] * 5 + [1] * 2 + [2] * 5, [0] * 5 + [1] * 7), 3)  # Luo (2005)
    0.733
    """
    return ceaf_precision_recall_fscore(labels_true, labels_pred, variant=variant)[2]


def cluster_accuracy_score(labels_true, labels_pred) -> float:
    """Best one-to-one matching accuracy ``max_g Σ_i n[i, g(i)] / N``; 1.0 on empty input.

    Cost: O(N log N) to count the cells, then the assignment per connected block of cells
    (O(r·c·min(r, c)) at worst for a block of ``r`` true and ``c`` predicted clusters).

    >>> cluster_accuracy_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    rows, cols, counts, a, b = _table(labels_true, labels_pred)
    n = int(counts.sum())
    if n == 0:
        return 1.0
    return _assignment_total(rows, cols, counts.astype(float), len(a), len(b)) / n


def _expected_mi(a, b, n) -> float:
    """``E[MI]`` under the permutation model, with ``scipy.stats.hypergeom`` probabilities."""
    from ..errors import require

    hypergeom = require("scipy.stats", "batch.adjusted_mutual_info_score", "sklearn").hypergeom

    emi = 0.0
    for ai in a.tolist():
        for bj in b.tolist():
            k = np.arange(max(1, ai + bj - n), min(ai, bj) + 1)
            pmf = hypergeom.pmf(k, n, ai, bj)
            emi += float(np.sum(k / n * np.log(n * k / (ai * bj)) * pmf))
    return emi


def adjusted_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic") -> float:
    """Adjusted mutual information, scikit-learn's definition and edge cases; needs SciPy.

    ``(MI - E[MI]) / (mean(H(T), H(P)) - E[MI])`` with ``average_method`` ``"arithmetic"``,
    ``"geometric"``, ``"min"`` or ``"max"``; 1.0 when both sides have one cluster (or none), 0.0
    when one side has one cluster. Cost O(kT·kP·min size) for the expectation.

    >>> adjusted_mutual_info_score([0, 0, 1, 1], [0, 0, 1, 1])
    1.0
    """
    if average_method not in ("arithmetic", "geometric", "min", "max"):
        raise ValueError(f"unknown average_method {average_method!r}")
    _, _, counts, a, b = _table(labels_true, labels_pred)
    if len(a) == len(b) and len(a) <= 1:
        return 1.0
    if len(a) == 1 or len(b) == 1:
        return 0.0
    n = int(counts.sum())
    mi = float(np.sum(counts / n * np.log(counts / n))) - float(
        np.sum(a / n * np.log(a / n)) + np.sum(b / n * np.log(b / n))
    )
    mi = max(mi, 0.0)
    ht = -float(np.sum(a / n * np.log(a / n)))
    hp = -float(np.sum(b / n * np.log(b / n)))
    mean = {
        "arithmetic": (ht + hp) / 2,
        "geometric": math.sqrt(ht * hp),
        "min": min(ht, hp),
        "max": max(ht, hp),
    }[average_method]
    emi = _expected_mi(a, b, n)
    eps = np.finfo(np.float64).eps
    den = mean - emi
    den = min(den, -eps) if den < 0 else max(den, eps)
    num = mi - emi
    num = min(num, -eps) if num < 0 else max(num, eps)
    return float(num / den)


def basic_merge_distance(labels_true, labels_pred) -> float:
    """Basic merge distance (Menestrina et al. 2010); see :class:`streameval.BasicMergeDistance`.

    The fewest splits and merges of clusters that turn the prediction into the truth: each
    predicted cluster split into its parts by true label (its distinct true labels - 1 splits),
    then the parts of each true cluster merged (its distinct predicted labels - 1 merges).
    Returned as a float; 0 for identical clusterings. O(N log N).

    >>> basic_merge_distance([1, 1, 1, 2, 2, 3], ["a", "a", "b", "b", "b", "c"])
    2.0
    >>> basic_merge_distance([0, 0, 0, 0], [0, 1, 2, 3])   # three merges
    3.0
    """
    rows, cols, _, a, b = _table(labels_true, labels_pred)
    splits = int((np.bincount(cols, minlength=len(b)) - 1).sum())
    merges = int((np.bincount(rows, minlength=len(a)) - 1).sum())
    return float(splits + merges)
