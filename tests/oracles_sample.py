"""Brute-force oracle of the labelled-sample estimators: exact Fractions, by pairs of elements.

Kept apart from the streaming (:mod:`streameval.sample`) and batch (:mod:`streameval.batch.sample`)
code. Every per-entity term comes from enumerating elements and pairs of elements, and the
estimate and its squared standard error are exact rationals of the spec's formulas.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations


def expand(stream):
    """``[(t, p, w)]`` (``t`` None when unlabelled) as one ``(t, p)`` per copy."""
    return [(t, p) for t, p, w in stream for _ in range(w)]


def entity_terms(elements, design="uniform", weights=None):
    """``{name: [(N_i, D_i)]}`` over the sampled entities, exact, from the spec's literal forms."""
    preds = [p for _, p in elements]
    m = {}
    for p in preds:
        m[p] = m.get(p, 0) + 1
    total, k_pred = len(elements), len(m)
    entities = {}
    for idx, (t, _p) in enumerate(elements):
        if t is not None:
            entities.setdefault(t, []).append(idx)
    out: dict[str, list] = {}
    for e, members in entities.items():
        c = len(members)
        tp = sum(1 for i, j in combinations(members, 2) if preds[i] == preds[j])
        # links from a member to any element of another entity, labelled or not (ordered pairs)
        fp = sum(1 for i in members for j in range(total)
                 if j not in members and preds[j] == preds[i])
        bp = [Fraction(sum(1 for j in members if preds[j] == preds[i]), m[preds[i]])
              for i in members]
        br = [Fraction(sum(1 for j in members if preds[j] == preds[i]), c) for i in members]
        bf = [Fraction(2 * sum(1 for j in members if preds[j] == preds[i]), c + m[preds[i]])
              for i in members]
        own = {preds[i] for i in members}
        delta = 1 if len(own) == 1 and m[next(iter(own))] == c else 0
        extra = sum(m[preds[i]] - c for i in members)
        if design == "uniform":
            w = Fraction(1)
        elif design == "size":
            w = Fraction(1, c)
        else:
            w = Fraction(weights[e])
        terms = {
            "pairwise_precision": (tp, tp + Fraction(fp, 2)),
            "pairwise_recall": (tp, Fraction(c * (c - 1), 2)),
            "pairwise_f": (2 * tp, c * (c - 1) + Fraction(extra, 2)),
            "bcubed_precision": (sum(bp), c),
            "bcubed_recall": (sum(br), c),
            "bcubed_f": (sum(bf), c),
            "entity_bcubed_precision": (sum(bp) / c, 1),
            "entity_bcubed_recall": (sum(br) / c, 1),
            "entity_bcubed_f": (sum(bf) / c, 1),
            "cluster_precision": (total * delta, k_pred * c),
            "cluster_recall": (delta, 1),
            "cluster_f": (Fraction(2 * total, k_pred) * delta, Fraction(total, k_pred) + c),
        }
        for name, (N, D) in terms.items():
            out.setdefault(name, []).append((Fraction(N) * w, Fraction(D) * w))
    return out


def exact_estimate(pairs):
    """``(value, stderr²)`` as exact Fractions (``None`` where undefined) of the ratio estimator."""
    n = len(pairs)
    if n == 0:
        return None, None
    A = sum(d for _, d in pairs) / n
    B = sum(v for v, _ in pairs) / n
    if A == 0:
        return Fraction(0), None
    if B == 0:
        return Fraction(0), None
    if n == 1:
        return B / A, None
    adj = 1 + sum(d * (v / B - d / A) for v, d in pairs) / n / ((n - 1) * A)
    var = (B / A) ** 2 * sum((d / A) ** 2 + (v / B) ** 2 - 2 * v * d / (A * B)
                             for v, d in pairs) / (n * (n - 1))
    return adj * B / A, var
