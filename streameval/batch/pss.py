"""Many candidate clusterings against one truth at once, vectorised with numpy (page streams).

Experiments such as the ELM paper's score thousands of candidate segmentations against a truth.
These functions do it in a few array operations instead of one Python loop per candidate:

- :func:`contiguous_clusterings` enumerates the ``2**(n-1)`` segmentations of ``n`` pages.
- :func:`score_candidates` scores an ``(M, n)`` matrix of candidate labellings (any clusterings,
  not only contiguous ones) against one truth: ELM or BCubed ``(P, R, F)`` per candidate.
- :func:`contiguous_f1_sums` scores many contiguous truths against every contiguous candidate,
  *exactly*: each per-element F1 is a rational ``2n/(a+b)`` (BCubed) or ``2(n-1)/(a+b-2)`` (ELM)
  whose denominator divides ``L = lcm(1..2n)``, so ``L·F_e`` is an integer and the sums are exact
  integers held in float64 (below ``2**53``). Equal scores are therefore bitwise equal, which
  rank statistics with ties (Kendall's tau-b) need. One matrix product per block of truths.
- :func:`rank_agreement` gives Kendall's tau-b and the number of pairs the two rankings order
  oppositely ("swapped pairs"); :func:`contiguous_rank_agreement` does it for every truth.

Written from the formulas, independently of the streaming code in :mod:`streameval.pss`.

>>> flags = contiguous_clusterings(3)
>>> flags.astype(int).tolist()
[[1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]]
>>> p, r, f = score_candidates([0, 0, 1], flags_to_labels(flags), metric="elm")
>>> f.round(3).tolist()
[0.444, 1.0, 0.0, 0.333]
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from ..labels import factorize

__all__ = [
    "contiguous_clusterings",
    "flags_to_labels",
    "score_candidates",
    "segment_entropy",
    "contiguous_f1_sums",
    "rank_agreement",
    "contiguous_rank_agreement",
]

_EXACT = 2.0**53


def contiguous_clusterings(n_elements: int) -> np.ndarray:
    """All ``2**(n-1)`` segmentations of ``n`` ordered elements as boolean "starts" flags.

    Row ``i`` has a 1 in column 0 and the bits of ``i`` (most significant first) in columns
    ``1..n-1``: the order of ``itertools.product((0, 1), repeat=n-1)``, the ELM paper's order.
    O(2**n · n) time and memory.

    >>> contiguous_clusterings(2).astype(int).tolist()
    [[1, 0], [1, 1]]
    """
    if not isinstance(n_elements, (int, np.integer)) or n_elements < 1:
        raise ValueError(f"n_elements must be a positive integer, got {n_elements!r}")
    n = int(n_elements)
    if n > 26:
        raise ValueError(f"2**{n - 1} segmentations do not fit in memory; use n_elements <= 26")
    rows = np.arange(2 ** (n - 1), dtype=np.int64)[:, None]
    bits = (rows >> np.arange(n - 2, -1, -1, dtype=np.int64)[None, :]) & 1
    return np.concatenate([np.ones((len(rows), 1), dtype=bool), bits.astype(bool)], axis=1)


def flags_to_labels(flags) -> np.ndarray:
    """Document index per element of each row of a 2-D flags matrix (column 0 always starts one):
    ``label[k] = Σ_{i ≤ k} flag[i] - 1``. O(rows · pages).

    >>> flags_to_labels([[0, 1, 1, 0]]).tolist()
    [[0, 1, 2, 2]]
    """
    f = _flag_matrix(flags)
    if f.shape[1] == 0:
        return np.zeros(f.shape, dtype=np.int64)
    f[:, 0] = True
    return np.cumsum(f, axis=1) - 1


def _flag_matrix(flags) -> np.ndarray:
    """``flags`` as a 2-D bool matrix (a 1-D sequence is one row), or ``ValueError`` unless every
    value is a 0/1 flag (``bool``, or a number equal to 0 or 1): ``2``, ``0.5`` or the string
    ``"0"`` would otherwise read as a start. O(size)."""
    try:
        raw = np.array(flags, ndmin=2)
    except (TypeError, ValueError) as e:
        raise ValueError(f"flags must be a 2-D matrix of 0/1 page flags: {e}") from None
    kind = raw.dtype.kind
    if raw.ndim != 2 or kind not in "biuf" or kind != "b" and not ((raw == 0) | (raw == 1)).all():
        raise ValueError(
            f"flags must be a 2-D matrix (one row per stream) of 0/1 page flags, got "
            f"{raw.ravel()[:8].tolist()!r:.120} (shape {raw.shape}, dtype {raw.dtype})"
        )
    return raw.astype(bool)


def _codes(values: np.ndarray) -> np.ndarray:
    """Dense 0..k-1 codes of a 1-D array."""
    return np.unique(values, return_inverse=True)[1].reshape(-1)


def score_candidates(labels_true, candidates, *, metric: str = "elm", beta: float = 1.0):
    """ELM or BCubed ``(P, R, F)`` of every row of ``candidates`` against ``labels_true``.

    ``candidates`` is an ``(M, N)`` array of predicted labels (each row one clustering of the same
    ``N`` elements; labels are compared within a row only). Returns three float arrays of length
    ``M``; F is element-averaged F-beta (see :class:`streameval.ELM`). O(M·N log(M·N)).

    >>> p, r, f = score_candidates([0, 0, 1, 1, 1], [[0, 1, 2, 2, 2], [0, 0, 1, 2, 2]], metric="bcubed")
    >>> f.round(4).tolist()
    [0.8667, 0.82]
    """
    if metric not in ("elm", "bcubed"):
        raise ValueError(f'metric must be "elm" or "bcubed", got {metric!r}')
    t = factorize(labels_true, "labels_true")[0]
    c = candidates
    if not (isinstance(c, np.ndarray) and c.dtype.kind in "biufUS"):
        # rows of labels grouped by Python equality, as Contingency.update does (never coerced)
        rows = [factorize(row, f"candidates[{i}]")[0] for i, row in enumerate(c)]
        if any(len(r) != len(t) for r in rows):
            raise ValueError(
                f"candidates must have shape (M, {len(t)}) to match labels_true: a row has "
                f"{next(len(r) for r in rows if len(r) != len(t))} labels"
            )
        c = np.stack(rows) if rows else np.zeros((0, len(t)), dtype=np.int64)
    if c.ndim != 2 or c.shape[1] != len(t):
        raise ValueError(
            f"candidates must have shape (M, {len(t)}) to match labels_true, got {c.shape}"
        )
    m, n = c.shape
    if m == 0 or n == 0:
        return np.ones(m), np.ones(m), np.ones(m)
    a = np.bincount(t)[t].astype(np.float64)  # true cluster size per element
    flat = _codes(c.reshape(-1))
    pred = _codes(flat + np.repeat(np.arange(m), n) * (int(flat.max()) + 1))  # (row, cluster)
    b = np.bincount(pred)[pred].astype(np.float64).reshape(m, n)
    kt = int(t.max()) + 1
    cell = _codes(pred * kt + np.tile(t, m))
    nn = np.bincount(cell)[cell].astype(np.float64).reshape(m, n)
    a = np.broadcast_to(a, (m, n))
    b2 = beta * beta
    if metric == "bcubed":
        p_e, r_e = nn / b, nn / a
        f_e = (1 + b2) * nn / (b2 * a + b)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            p_e = np.where(b > 1, (nn - 1) / (b - 1), 1.0)
            r_e = np.where(a > 1, (nn - 1) / (a - 1), 1.0)
            den = b2 * (a - 1) + (b - 1)
            f_e = np.where(den > 0, (1 + b2) * (nn - 1) / den, 1.0)
    return p_e.mean(axis=1), r_e.mean(axis=1), f_e.mean(axis=1)


def _spans(flags: np.ndarray):
    """First and last element of each element's segment, per row of a flags matrix."""
    m, n = flags.shape
    pos = np.arange(n)
    start = np.maximum.accumulate(np.where(flags, pos, 0), axis=1)
    ends = np.concatenate([flags[:, 1:], np.ones((m, 1), dtype=bool)], axis=1)
    end = np.minimum.accumulate(np.where(ends, pos, n)[:, ::-1], axis=1)[:, ::-1]
    return start, end


def segment_entropy(flags) -> np.ndarray:
    """Entropy ``H = -Σ (a/N) ln(a/N)`` of each row's segmentation (natural log). O(rows · pages).

    >>> segment_entropy([[1, 0, 1, 0]]).round(4).tolist()
    [0.6931]
    """
    f = _flag_matrix(flags)
    if f.shape[1] == 0:
        raise ValueError("flags must have at least one page (an empty stream has no segments)")
    f[:, 0] = True
    n = f.shape[1]
    start, end = _spans(f)
    size = (end - start + 1) / n
    return -(np.log(size).sum(axis=1)) / n


class _Segments:
    """Segments containing each element, numbered 0..S-1 over all elements."""

    all_local: np.ndarray  # local ids of every contiguous clustering (set by _segments)
    onehot_all: Any  # its sparse one-hot matrix (a scipy.sparse.csr_matrix)

    def __init__(self, n: int):
        self.n = n
        self.count = [(k + 1) * (n - k) for k in range(n)]
        self.offset = np.concatenate([[0], np.cumsum(self.count)[:-1]]).astype(np.int64)
        self.size = int(sum(self.count))
        self.scale = math.lcm(*range(1, 2 * n + 1))
        if n * self.scale >= _EXACT:
            raise ValueError(f"exact sums need n * lcm(1..2n) < 2**53; n_elements={n} is too large")
        self.tables: dict[str, list[np.ndarray]] = {"elm": [], "bcubed": []}
        for k in range(n):
            s = np.repeat(np.arange(k + 1), n - k)  # local segment id -> (start, end)
            e = np.tile(np.arange(k, n), k + 1)
            s1, s2 = s[:, None], s[None, :]
            e1, e2 = e[:, None], e[None, :]
            inter = np.minimum(e1, e2) - np.maximum(s1, s2) + 1
            ab = (e1 - s1 + 1) + (e2 - s2 + 1)
            bc = (2 * inter * self.scale) // ab
            elm = np.where(ab > 2, (2 * (inter - 1) * self.scale) // np.maximum(ab - 2, 1), self.scale)
            self.tables["bcubed"].append(bc.astype(np.float64))
            self.tables["elm"].append(elm.astype(np.float64))

    def local(self, flags: np.ndarray) -> np.ndarray:
        """Local segment id of each element (within the segments containing it)."""
        start, end = _spans(flags)
        k = np.arange(self.n)[None, :]
        return start * (self.n - k) + (end - k)

    def onehot(self, local: np.ndarray):
        """Sparse ``(M, S)`` 0/1 matrix: row ``c`` marks each element's segment in candidate ``c``."""
        from ..errors import require

        csr_matrix = require("scipy.sparse", "streameval.batch.contiguous_f1_sums", "pss").csr_matrix

        m = len(local)
        cols = (self.offset[None, :] + local).ravel()
        indptr = np.arange(0, m * self.n + 1, self.n)
        return csr_matrix((np.ones(m * self.n), cols, indptr), shape=(m, self.size))

    def sums(self, tru: np.ndarray, cand: np.ndarray):
        """``Σ_k L·F_e`` for every (truth, candidate) pair of local-id matrices, per metric.

        Sparse one-hot candidates times per-truth look-up rows: each entry is a sum of ``n``
        integers below 2**53, exact in float64 whatever the summation order.
        """
        h = self.onehot_all if cand is self.all_local else self.onehot(cand)
        out = []
        for metric in ("elm", "bcubed"):
            g = np.empty((len(tru), self.size), dtype=np.float64)
            for k, table in enumerate(self.tables[metric]):
                g[:, self.offset[k] : self.offset[k] + self.count[k]] = table[tru[:, k]]
            out.append(np.ascontiguousarray((h @ g.T).T))
        return out


def contiguous_f1_sums(n_elements: int, truths=None, *, candidates=None):
    """Exact ELM and BCubed F1 of contiguous truths against contiguous candidates.

    ``truths`` and ``candidates`` are flags matrices (default: every segmentation, in the order of
    :func:`contiguous_clusterings`). Returns ``(elm, bcubed, scale)``: two float64 arrays of shape
    ``(len(truths), len(candidates))`` holding ``scale · F1`` as exact integers, so
    ``elm / scale`` is the element-averaged ELM F1. Per element ``k`` a table gives ``L·F_e`` for
    every (true segment, predicted segment) containing ``k``; each score is a sum of ``n`` table
    entries, computed as one matrix product per metric (``T × S`` by ``S × M``, ``S = Σ_k
    (k+1)(n-k)``, 560 for 14 elements). Cost: the tables, O((T + M)·S), then the two products,
    O(T·S·M).

    >>> elm, bc, scale = contiguous_f1_sums(5, [[1, 0, 1, 0, 0]], candidates=[[1, 1, 1, 0, 0], [1, 0, 1, 1, 0]])
    >>> (elm / scale).round(4).tolist(), (bc / scale).round(4).tolist()
    ([[0.6, 0.6667]], [[0.8667, 0.82]])
    """
    seg = _segments(int(n_elements))
    cand = seg.all_local if candidates is None else seg.local(_as_flags(candidates, seg.n))
    tru = seg.all_local if truths is None else seg.local(_as_flags(truths, seg.n))
    elm, bc = seg.sums(tru, cand)
    return elm, bc, seg.n * seg.scale


@lru_cache(maxsize=4)
def _segments(n: int) -> _Segments:
    seg = _Segments(n)
    seg.all_local = seg.local(contiguous_clusterings(n))
    seg.onehot_all = seg.onehot(seg.all_local)
    return seg


def _as_flags(flags, n: int) -> np.ndarray:
    f = np.array(flags, dtype=bool, ndmin=2)
    if f.shape[1] != n:
        raise ValueError(f"flags must have {n} columns, got shape {f.shape}")
    f[:, 0] = True
    return f


def _runs(sorted_rows: np.ndarray):
    """Per row of a row-sorted array: a mask of run starts and the number of tied pairs."""
    r, m = sorted_rows.shape
    start = np.ones((r, m), dtype=bool)
    start[:, 1:] = sorted_rows[:, 1:] != sorted_rows[:, :-1]
    idx = np.flatnonzero(np.concatenate([start, np.ones((r, 1), dtype=bool)], axis=1).ravel())
    lengths = np.diff(idx)
    lengths = lengths[(idx[:-1] % (m + 1)) != m]  # drop the row separators
    row_of_run = np.repeat(np.arange(r), start.sum(axis=1))
    ties = np.bincount(row_of_run, weights=lengths * (lengths - 1) / 2, minlength=r)
    return start, lengths, row_of_run, np.rint(ties).astype(np.int64)


def _dense_rank(values: np.ndarray):
    """Per row: dense ranks (0 = smallest) and the number of tied pairs. O(M log M) per row."""
    order = np.argsort(values, axis=1)
    start, _, _, ties = _runs(np.take_along_axis(values, order, axis=1))
    rank = np.empty(values.shape, dtype=np.int64)
    rank[np.arange(len(values))[:, None], order] = np.cumsum(start, axis=1) - 1
    return rank, ties


def _fenwick_paths(size: int):
    """Index paths of a Fenwick tree over ``1..size``: prefix-sum reads and point updates,
    padded (reads with 0, a cell that stays 0; updates with ``size + 1``, a spare cell)."""
    levels = int(size).bit_length() + 1
    v = np.arange(size + 1, dtype=np.int64)
    reads = np.zeros((size + 1, levels), dtype=np.int64)
    writes = np.full((size + 1, levels), size + 1, dtype=np.int64)
    idx, up = v.copy(), v.copy()
    for k in range(levels):
        reads[:, k] = idx
        idx = idx - (idx & -idx)
        writes[:, k] = np.where((up >= 1) & (up <= size), up, size + 1)
        up = up + (up & -up)
    return reads, writes


def _agreement(x: np.ndarray, y: np.ndarray):
    """Row-wise Kendall tau-b and swapped pairs of two ``(R, M)`` arrays of exact values.

    Candidates equal in both scores are merged into weighted groups, sorted by (x, y); a Fenwick
    tree over the y-ranks, advanced for all rows at once, counts for each group the weight of
    earlier groups with a larger y (their x is smaller: same-x groups come in increasing y).
    """
    r, m = x.shape
    n0 = m * (m - 1) // 2
    rx, n1 = _dense_rank(x)
    ry, n2 = _dense_rank(y)
    ky = int(ry.max()) + 1
    key = np.sort(rx * ky + ry, axis=1)
    start, weight, row_of_group, n3 = _runs(key)
    groups = start.sum(axis=1)
    slot = np.arange(len(weight)) - np.repeat(np.cumsum(groups) - groups, groups)
    gy = np.zeros((r, int(groups.max())), dtype=np.int64)  # padding: weight 0
    gw = np.zeros_like(gy)
    gy[row_of_group, slot] = key[start] % ky + 1
    gw[row_of_group, slot] = weight
    reads, writes = _fenwick_paths(ky)
    tree = np.zeros((r, ky + 2), dtype=np.int64)
    rows = np.arange(r)[:, None]
    seen = np.zeros(r, dtype=np.int64)
    swapped = np.zeros(r, dtype=np.int64)
    for j in range(gy.shape[1]):
        v, w = gy[:, j], gw[:, j]
        le = tree[rows, reads[v]].sum(axis=1)  # weight of earlier groups with y-rank <= this
        swapped += w * (seen - le)
        tree[rows, writes[v]] += w[:, None]
        seen += w
    concordant = n0 - n1 - n2 + n3 - swapped
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (concordant - swapped) / np.sqrt((n0 - n1).astype(np.float64) * (n0 - n2))
    return tau, swapped, n0


def rank_agreement(x, y):
    """Kendall's tau-b of ``x`` and ``y`` and the number of pairs they order oppositely.

    Returns ``(tau_b, swapped, pairs)``: ``swapped`` (D) counts pairs ``i < j`` with
    ``(x_i - x_j)(y_i - y_j) < 0`` (a tie in either is not a swap), ``pairs = n0 = C(m, 2)`` and
    ``tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2))`` with ``C + D = n0 - n1 - n2 + n3`` (``n1``,
    ``n2``, ``n3``: pairs tied in x, in y, in both). Exact integer counts, O(m log m); tau-b is
    NaN when ``x`` or ``y`` is constant. Equals :func:`scipy.stats.kendalltau` (variant b).

    >>> rank_agreement([1, 2, 3, 4], [1, 3, 2, 4])
    (0.6666666666666666, 1, 6)
    """
    x = np.asarray(x, dtype=np.float64).reshape(1, -1)
    y = np.asarray(y, dtype=np.float64).reshape(1, -1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.shape[1]} and {y.shape[1]}")
    if x.shape[1] < 2:
        return math.nan, 0, 0
    tau, swapped, n0 = _agreement(x, y)
    return float(tau[0]), int(swapped[0]), n0


def _agreement_block(args):
    n, lo, hi = args
    seg = _segments(n)
    elm, bc = seg.sums(seg.all_local[lo:hi], seg.all_local)
    tau, swapped, _ = _agreement(elm, bc)
    return np.stack([tau, swapped.astype(np.float64)], axis=1)


def contiguous_rank_agreement(n_elements: int, *, n_jobs: int = 1, block: int = 1024):
    """For every contiguous truth of ``n`` elements, ELM vs BCubed over every contiguous candidate.

    Returns ``(tau_b, swapped)``: arrays of length ``2**(n-1)``, Kendall's tau-b between the two
    rankings of the ``2**(n-1)`` candidates and the number of candidate pairs they order
    oppositely (out of ``C(2**(n-1), 2)``). ``n_jobs`` worker processes share the truths in
    blocks. For 14 elements (8,192 × 8,192) this is the ELM paper's all-against-all experiment.
    Cost: the ``M × M`` scores of :func:`contiguous_f1_sums` (``M = 2**(n-1)``: two
    ``(M, S) × (S, M)`` products, ``S = Σ_k (k+1)(n-k)``, O(n³)), then one tau-b per truth by
    sorting and a Fenwick tree, O(M log M): O(M²·S) in all.

    >>> tau, swapped = contiguous_rank_agreement(4)
    >>> swapped.astype(int).tolist()
    [0, 2, 0, 3, 2, 3, 3, 2]
    """
    n = int(n_elements)
    total = 2 ** (n - 1)
    jobs = [(n, lo, min(lo + block, total)) for lo in range(0, total, block)]
    if n_jobs > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=n_jobs) as pool:
            parts = list(pool.map(_agreement_block, jobs))
    else:
        parts = [_agreement_block(j) for j in jobs]
    res = np.concatenate(parts)
    return res[:, 0], res[:, 1]
