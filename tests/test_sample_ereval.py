"""Agreement with er-evaluation (Binette et al.'s estimators), in its own virtual environment.

er-evaluation pulls plotly and igraph, so it is not a test dependency of the main suite: ``.ci/run``
installs it in a separate venv and runs ``pytest -m ereval tests/test_sample_ereval.py`` there; the
main suite skips this file cleanly. Compared: values and standard errors of pairwise precision,
recall and F, B³ (er-evaluation's entity-averaged form: ``entity_bcubed_*``) and cluster precision,
recall and F, under the uniform and size designs and explicit weights, on er-evaluation's documented
examples, on random problems (hypothesis) and on the real entity-resolution data it ships
(RLdata500 / RLdata10000 with their true identities; the PatentsView inventor benchmark of 401
entities drawn by size among 133,541 mentions).

Tolerance (error analysis). Our values are exact rationals of integer terms rounded once (terms
rounded to 2**-96): they are the reference. er-evaluation computes in float64: its value carries a
few roundings per term and ≤ n ulp in its sums (relative error ≤ (n + 20)·eps). Its standard
error computes ``Σ (D/Ā)² + (N/B̄)² − 2ND/(ĀB̄)``, which cancels: its absolute error is at most
``(n + 20)·eps·Σ ((D/Ā)² + (N/B̄)² + 2|ND|/(ĀB̄))``, so the relative error of the standard error is
at most half that over the exact sum (``_se_bound``). We assert 1e-12 relative, or that bound where
er-evaluation's own cancellation makes it larger (and say so by name).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval as se

pytestmark = pytest.mark.ereval
er = pytest.importorskip("er_evaluation.estimators")
pd = pytest.importorskip("pandas")

EPS = np.finfo(float).eps
OURS = {
    "pairwise_precision": "pairwise_precision_estimator",
    "pairwise_recall": "pairwise_recall_estimator",
    "pairwise_f": "pairwise_f_estimator",
    "entity_bcubed_precision": "b_cubed_precision_estimator",
    "entity_bcubed_recall": "b_cubed_recall_estimator",
    "cluster_precision": "cluster_precision_estimator",
    "cluster_recall": "cluster_recall_estimator",
    "cluster_f": "cluster_f_estimator",
}


def _series(labels_true, labels_pred):
    idx = list(range(len(labels_pred)))
    prediction = pd.Series(index=idx, data=list(labels_pred))
    keep = [i for i, t in enumerate(labels_true) if t is not None]
    sample = pd.Series(index=keep, data=[labels_true[i] for i in keep], dtype=object)
    return prediction, sample


def _er_weights(design, sample):
    if design == "uniform":
        return "uniform"
    if design == "size":
        return "cluster_size"
    return pd.Series(design)


def _se_bound(est: se.SampleEstimator, name: str) -> float:
    """Relative error bound of er-evaluation's standard error (see the module docstring)."""
    n, sn, sd, snn, sdd, snd = est.sums(name)
    if n < 2 or not sn:
        return 0.0
    # Σ (D/Ā)² + (N/B̄)² + 2|ND|/(ĀB̄) (all N, D ≥ 0) over the exact, cancelled sum
    big = (sdd / sd**2 + snn / sn**2 + 2 * snd / (sn * sd)) * n * n
    exact = (sdd * sn * sn + snn * sd * sd - 2 * snd * sn * sd) * n * n / (sn * sn * sd * sd)
    if exact <= 0:
        return math.inf
    return (n + 20) * EPS * big / exact / 2


def _compare(labels_true, labels_pred, design, names=OURS):
    est = se.SampleEstimator(design=design if not isinstance(design, dict)
                             else se.SampleDesign.weights(design))
    for t, p in zip(labels_true, labels_pred):
        est.update(t, p)
    got = est.get()
    prediction, sample = _series(labels_true, labels_pred)
    for ours in names:
        theirs = getattr(er, OURS[ours])
        value, stderr = theirs(prediction, sample, _er_weights(design, sample))
        value, stderr = float(value), float(stderr)
        mine = got[ours]
        assert mine.value == pytest.approx(value, rel=1e-12, abs=1e-300), (ours, mine, value)
        if math.isnan(stderr):
            # er-evaluation also answers NaN when |Ā·B̄| ≤ 1e-8 (np.allclose), a scale-dependent
            # test, and when its cancelling sum of squares rounds below 0 where the exact one is
            # 0 (every entity's N_i/D_i equal: our standard error is exactly 0 there).
            n, sn, sd, *_ = est.sums(ours)
            assert (math.isnan(mine.stderr) or mine.stderr == 0.0
                    or abs(sn * sd) / n**2 / 2**192 <= 1e-8), (ours, mine)
            continue
        rel = max(1e-12, _se_bound(est, ours))
        assert mine.stderr == pytest.approx(stderr, rel=rel, abs=1e-300), (ours, mine, stderr)


EXAMPLE_PRED = [1, 1, 2, 3, 2, 4, 4, 4]


@pytest.mark.parametrize("sample, names", [
    (["c1", "c1", "c1", "c2", "c2", None, None, "c4"], ["pairwise_precision", "pairwise_recall"]),
    (["c1", "c1", "c1", "c2", "c2", None, None, None],
     ["pairwise_f", "entity_bcubed_precision", "entity_bcubed_recall"]),
    (["c1", "c1", "c1", "c2", "c2", "c3", "c3", "c3"],
     ["cluster_precision", "cluster_recall", "cluster_f"]),
])
def test_documented_examples(sample, names):
    """The examples of er-evaluation's docstrings, with their printed values."""
    _compare(sample, EXAMPLE_PRED, "uniform", names)
    _compare(sample, EXAMPLE_PRED, "size", names)


@st.composite
def problems(draw):
    size = draw(st.integers(2, 60))
    k_true = draw(st.integers(1, 12))
    k_pred = draw(st.integers(1, 12))
    ents = draw(st.lists(st.integers(0, k_true - 1), min_size=size, max_size=size))
    preds = draw(st.lists(st.integers(0, k_pred - 1), min_size=size, max_size=size))
    sampled = draw(st.sets(st.integers(0, k_true - 1), min_size=1))
    labels_true = [f"e{t}" if t in sampled else None for t in ents]
    present = {t for t in labels_true if t is not None}
    weights = {t: draw(st.sampled_from([0.5, 1.0, 2.0, 3.7, 10.0])) for t in present}
    return labels_true, preds, weights


@settings(max_examples=40)
@given(problems(), st.sampled_from(["uniform", "size", "explicit"]))
def test_random_problems(problem, design):
    labels_true, preds, weights = problem
    if not any(t is not None for t in labels_true):
        return
    _compare(labels_true, preds, weights if design == "explicit" else design)


def test_rldata500_and_10000():
    """RLdata (bundled with er-evaluation): its toy predictions, a sample of true identities."""
    from er_evaluation.datasets import (
        load_rldata500_disambiguations,
        load_rldata10000_disambiguations,
    )

    rng = np.random.default_rng(7)
    for loader, k in ((load_rldata500_disambiguations, 60), (load_rldata10000_disambiguations, 200)):
        predictions, reference = loader()
        ids = reference.unique()
        chosen = set(rng.choice(ids, size=k, replace=False).tolist())
        for name in ("name", "name_by"):
            pred = predictions[name].reindex(reference.index)
            labels_true = [t if t in chosen else None for t in reference.tolist()]
            _compare(labels_true, pred.tolist(), "uniform")
            _compare(labels_true, pred.tolist(), "size")


@pytest.mark.slow
def test_patentsview_inventor_benchmark():
    """The PatentsView benchmark: 401 inventors drawn by size among 133,541 mentions, and the
    documented estimate for the 2021-12-30 disambiguation (0.9131787709880134, 0.018619907220335144).
    """
    from er_evaluation.datasets import load_pv_disambiguations

    predictions, reference = load_pv_disambiguations()
    prediction = predictions[pd.Timestamp("2021-12-30")].dropna()  # er-evaluation drops NaN too
    labels_true = [None if (t is None or t != t) else t for t in reference.reindex(prediction.index)]
    est = se.SampleEstimator(design="size")
    for t, p in zip(labels_true, prediction.tolist()):
        est.update(t, p)
    got = est.get()["pairwise_precision"]
    assert (got.value, got.stderr) == pytest.approx((0.9131787709880134, 0.018619907220335144),
                                                    rel=1e-12)
    _compare(labels_true, prediction.tolist(), "size",
             ["pairwise_recall", "entity_bcubed_precision", "entity_bcubed_recall"])
