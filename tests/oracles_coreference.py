"""Brute-force oracles for the coreference and matching metrics, from the original definitions.

Kept apart from both the streaming code and the batch functions. Inputs are lists of
``(y_true, y_pred, w)`` updates; an update of weight ``w`` is ``w`` distinct mentions. Entities are
sets of mention ids, links are sets of unordered mention pairs, and every score is computed from
those sets: O(N²) in the number of mentions, for small test streams only.

Empty-denominator conventions are the reference scorers' (conll scorer.pl v8, coval): a ratio with
an empty denominator is 0, F is 0 when P + R = 0.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction


def entities(stream):
    """``(key, response)``: lists of mention-id sets, one per true / predicted label."""
    key: dict = {}
    resp: dict = {}
    m = 0
    for t, p, w in stream:
        for _ in range(w):
            key.setdefault(t, set()).add(m)
            resp.setdefault(p, set()).add(m)
            m += 1
    return list(key.values()), list(resp.values())


def _ratio(num, den):
    return Fraction(num, den) if den else Fraction(0)


def _f(p, r):
    return 2 * p * r / (p + r) if p + r else Fraction(0)


def _links(ents):
    """Coreference links: the unordered pairs of mentions within an entity."""
    return {frozenset(pair) for e in ents for pair in itertools.combinations(sorted(e), 2)}


def _mentions(ents):
    return set().union(*ents) if ents else set()


# ----------------------------------------------------------------------------------------- MUC
def _muc_side(key, resp):
    """Σ_K (|K| - |p(K)|) and Σ_K (|K| - 1): the partition of each key chain by the response."""
    num = den = 0
    for k in key:
        parts = [k & r for r in resp if k & r]
        num += len(k) - len(parts)
        den += len(k) - 1
    return num, den


def muc(stream):
    key, resp = entities(stream)
    r = _ratio(*_muc_side(key, resp))
    p = _ratio(*_muc_side(resp, key))
    return p, r, _f(p, r)


# --------------------------------------------------------------------------------------- BLANC
def blanc(stream):
    """Luo et al. (2014): P, R, F of the coreference and non-coreference link sets, averaged over
    the link types that are non-empty in the key or the response."""
    key, resp = entities(stream)
    mentions = _mentions(key)
    all_pairs = {frozenset(p) for p in itertools.combinations(sorted(mentions), 2)}
    ck, cr = _links(key), _links(resp)
    nk, nr = all_pairs - ck, all_pairs - cr
    parts = []
    for k_links, r_links in ((ck, cr), (nk, nr)):
        if k_links or r_links:
            both = len(k_links & r_links)
            p, r = _ratio(both, len(r_links)), _ratio(both, len(k_links))
            parts.append((p, r, _f(p, r)))
    if not parts:
        return Fraction(0), Fraction(0), Fraction(0)
    return tuple(sum(x[i] for x in parts) / len(parts) for i in range(3))


# ----------------------------------------------------------------------------------------- LEA
def _lea_side(key, resp):
    """Σ_k |k|·(Σ_r |link(k ∩ r)|)/|link(k)| and Σ_k |k| (Moosavi & Strube 2016, Eq. 1).

    A singleton entity has one self-link, resolved iff the response holds the mention alone."""
    num = den = Fraction(0)
    resp_links = _links(resp)
    resp_singles = {next(iter(r)) for r in resp if len(r) == 1}
    for k in key:
        if len(k) == 1:
            resolved = Fraction(int(next(iter(k)) in resp_singles))
        else:
            k_links = _links([k])
            resolved = Fraction(len(k_links & resp_links), len(k_links))
        num += len(k) * resolved
        den += len(k)
    return num, den


def lea(stream):
    key, resp = entities(stream)
    r = _ratio(*_lea_side(key, resp))
    p = _ratio(*_lea_side(resp, key))
    return p, r, _f(p, r)


# ------------------------------------------------------------------------------- CEAF, accuracy
def phi3(k, r):
    return len(k & r)


def phi4(k, r):
    return Fraction(2 * len(k & r), len(k) + len(r))


def best_alignment(key, resp, phi):
    """Φ* = max over one-to-one alignments of Σ φ, from the similarity matrix: by enumerating every
    injective map for small inputs, by SciPy's dense assignment otherwise."""
    sim = [[phi(k, r) for r in resp] for k in key]
    if not key or not resp:
        return Fraction(0)
    rows, cols = len(key), len(resp)
    if min(rows, cols) <= 6 and max(rows, cols) <= 7:
        if rows <= cols:
            return max(
                sum((sim[i][j] for i, j in enumerate(perm)), Fraction(0))
                for perm in itertools.permutations(range(cols), rows)
            )
        return max(
            sum((sim[i][j] for j, i in enumerate(perm)), Fraction(0))
            for perm in itertools.permutations(range(rows), cols)
        )
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    dense = np.array([[float(x) for x in row] for row in sim])
    i, j = linear_sum_assignment(dense, maximize=True)
    return sum((sim[a][b] for a, b in zip(i.tolist(), j.tolist())), Fraction(0))


def ceaf(stream, variant="entity"):
    key, resp = entities(stream)
    if not key:
        return Fraction(0), Fraction(0), Fraction(0)
    if variant == "mention":
        phi = best_alignment(key, resp, phi3)
        n = len(_mentions(key))
        p, r = Fraction(phi, n), Fraction(phi, n)
    else:
        phi = best_alignment(key, resp, phi4)
        p, r = phi / len(resp), phi / len(key)
    return p, r, _f(p, r)


def cluster_accuracy(stream):
    key, resp = entities(stream)
    if not key:
        return Fraction(1)
    return Fraction(best_alignment(key, resp, phi3), len(_mentions(key)))


def labels(stream):
    """The stream expanded to two label lists, one entry per mention (for scikit-learn)."""
    yt, yp = [], []
    for t, p, w in stream:
        yt += [t] * w
        yp += [p] * w
    return yt, yp


def close(a, b, tol=1e-12) -> bool:
    return math.isclose(float(a), float(b), rel_tol=tol, abs_tol=tol)
