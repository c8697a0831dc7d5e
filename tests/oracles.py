"""Brute-force oracles: O(n²) over elements and pairs, written from the definitions.

Kept apart from both the streaming code and the batch functions. Exact arithmetic with
``Fraction`` where the definition is rational; ``math.log`` for the information-theoretic ones.
Input: a list of ``(true, pred)`` elements (weights expanded into copies).
"""

from __future__ import annotations

import math
from fractions import Fraction


def expand(stream):
    """``[(t, p, w)]`` -> ``[(t, p)] * w`` elements."""
    return [(t, p) for t, p, w in stream for _ in range(w)]


# ----------------------------------------------------------------------------- element-based
def element_scores(elements, kind: str, beta: float = 1.0, exact: bool = False):
    """Mean per-element P, R, F-beta and the F of the averages, by scanning all elements (as
    ``Fraction`` with ``exact``, else each correctly rounded to a float)."""
    n = len(elements)
    if n == 0:
        return (Fraction(1),) * 4 if exact else (1.0, 1.0, 1.0, 1.0)
    b2 = Fraction(beta) ** 2
    sp = sr = sf = Fraction(0)
    for e, (t, p) in enumerate(elements):
        same_t = same_p = same_both = 0
        for f, (t2, p2) in enumerate(elements):
            if kind == "elm" and f == e:
                continue  # ELM: the element's neighbours only
            same_t += t2 == t
            same_p += p2 == p
            same_both += t2 == t and p2 == p
        tp, fp, fn = same_both, same_p - same_both, same_t - same_both
        if kind == "elm":
            sp += Fraction(tp, same_p) if same_p else 1
            sr += Fraction(tp, same_t) if same_t else 1
            d = (1 + b2) * tp + b2 * fn + fp
            sf += (1 + b2) * tp / d if d else 1
        else:
            sp += Fraction(tp, same_p)
            sr += Fraction(tp, same_t)
            sf += (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)
    P, R, F = sp / n, sr / n, sf / n
    fo = (1 + b2) * P * R / (b2 * P + R) if b2 * P + R else Fraction(0)
    if exact:
        return P, R, F, fo
    return float(P), float(R), float(F), float(fo)


# ----------------------------------------------------------------------------- pairs
def pair_table(elements):
    """Counts over unordered pairs of distinct elements: (both, pred only, true only, neither)."""
    both = pred_only = true_only = neither = 0
    for i in range(len(elements)):
        ti, pi = elements[i]
        for j in range(i + 1, len(elements)):
            tj, pj = elements[j]
            st, sp = ti == tj, pi == pj
            if st and sp:
                both += 1
            elif sp:
                pred_only += 1
            elif st:
                true_only += 1
            else:
                neither += 1
    return both, pred_only, true_only, neither


def pair_scores(elements) -> dict:
    tp, fp, fn, tn = pair_table(elements)
    total = tp + fp + fn + tn
    pp, tt = tp + fp, tp + fn
    ari_den = (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)
    return {
        "Rand": 1.0 if fp + fn == 0 else (tp + tn) / total,
        "AdjustedRand": 1.0 if fp == 0 and fn == 0 else 2 * (tp * tn - fn * fp) / ari_den,
        "PairPrecision": tp / pp if pp else 1.0,
        "PairRecall": tp / tt if tt else 1.0,
        "PairF1": 2 * tp / (pp + tt) if pp + tt else 1.0,
        "PairJaccard": tp / (tp + fp + fn) if tp + fp + fn else 1.0,
        "FowlkesMallows": tp / math.sqrt(pp * tt) if tp else 0.0,
    }


# ----------------------------------------------------------------------------- information
def _counts(values):
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _h(counts, n):
    return -sum(c / n * math.log(c / n) for c in counts.values()) if len(counts) > 1 else 0.0


def information_scores(elements) -> dict:
    n = len(elements)
    ct = _counts(t for t, _ in elements)
    cp = _counts(p for _, p in elements)
    cj = _counts(elements)
    ht, hp = _h(ct, n), _h(cp, n)
    if n == 0 or len(ct) == 1 or len(cp) == 1:
        mi = 0.0
    else:
        mi = max(0.0, sum(c / n * math.log(n * c / (ct[t] * cp[p])) for (t, p), c in cj.items()))
    out = {"MutualInfo": mi, "VariationOfInformation": max(0.0, ht + hp - 2 * mi) if n else 0.0}
    if len(ct) == len(cp) and len(ct) <= 1:
        nmi = dict.fromkeys(("arithmetic", "geometric", "min", "max"), 1.0)
    elif mi == 0:
        nmi = dict.fromkeys(("arithmetic", "geometric", "min", "max"), 0.0)
    else:
        nmi = {
            "arithmetic": mi / ((ht + hp) / 2),
            "geometric": mi / math.sqrt(ht * hp),
            "min": mi / min(ht, hp),
            "max": mi / max(ht, hp),
        }
    out["NMI"] = nmi
    h = mi / ht if ht else 1.0
    c = mi / hp if hp else 1.0
    if n == 0:
        h = c = 1.0
    out["Homogeneity"], out["Completeness"] = h, c
    out["VBeta"] = lambda beta: 1.0 if n == 0 else (0.0 if h + c == 0 else (1 + beta) * h * c / (beta * h + c))
    return out


# ----------------------------------------------------------------------------- matching
def purity(elements, inverse: bool = False) -> float:
    """Each cluster (predicted; true if ``inverse``) credited with its largest class."""
    n = len(elements)
    if n == 0:
        return 1.0
    groups: dict = {}
    for t, p in elements:
        key, other = (t, p) if inverse else (p, t)
        groups.setdefault(key, []).append(other)
    return sum(max(_counts(g).values()) for g in groups.values()) / n


def all_scores(elements) -> dict:
    """Every O(1) metric's value under its registry name (default parameters)."""
    info = information_scores(elements)
    elm = element_scores(elements, "elm")
    bc = element_scores(elements, "bcubed")
    out = {
        "ELM": elm[2],
        "BCubed": bc[2],
        "Purity": purity(elements),
        "InversePurity": purity(elements, inverse=True),
        "MutualInfo": info["MutualInfo"],
        "NormalizedMutualInfo": info["NMI"]["arithmetic"],
        "Homogeneity": info["Homogeneity"],
        "Completeness": info["Completeness"],
        "VBeta": info["VBeta"](1.0),
        "VariationOfInformation": info["VariationOfInformation"],
    }
    out.update(pair_scores(elements))
    return out
