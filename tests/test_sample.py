"""Estimates from a labelled sample: streaming == batch == exact oracle, the algebra (revert, merge,
relabelling), the census relation, the late-label recipe and bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles_sample import entity_terms, exact_estimate, expand

import streameval as se
from streameval import batch
from streameval.errors import SampleDesignError, UnknownElementError
from streameval.sample import ESTIMATES

DESIGNS = ["uniform", "size", "explicit"]


@st.composite
def sampled_streams(draw, max_size: int = 24):
    """``(stream, weights)``: elements ``(t, p, w)`` of a population; the elements of unsampled
    entities carry ``t = None``; ``weights`` gives each sampled entity an explicit weight."""
    size = draw(st.integers(0, max_size))
    k_true = draw(st.integers(1, 6))
    k_pred = draw(st.integers(1, 6))
    ents = draw(st.lists(st.integers(0, k_true - 1), min_size=size, max_size=size))
    preds = draw(st.lists(st.integers(0, k_pred - 1), min_size=size, max_size=size))
    sampled = draw(st.sets(st.integers(0, k_true - 1)))
    ws = [draw(st.integers(1, 2)) if draw(st.booleans()) else 1 for _ in range(size)]
    stream = [(f"e{t}" if t in sampled else None, p, w) for t, p, w in zip(ents, preds, ws)]
    weights = {f"e{t}": draw(st.sampled_from([0.5, 1.0, 3.0, 0.1, 7.25])) for t in sampled}
    return stream, weights


def _design(kind, weights):
    return se.SampleDesign.weights(weights) if kind == "explicit" else kind


def _feed(stream, kind, weights):
    est = se.SampleEstimator(design=_design(kind, weights))
    for t, p, w in stream:
        est.update(t, p, w)
    return est


def _same(a: se.Estimate, b: se.Estimate) -> bool:
    """Bit-identical, NaN equal to NaN."""
    return all((x == y) or (x != x and y != y) for x, y in zip(a, b))


# Tolerances. The streaming estimator rounds each weighted per-entity term once to 2**-96 (a
# relative error far below 1e-20 for these small integers and weights) and then computes the
# estimate and the squared standard error as exact rationals, rounded once: it agrees with the
# exact oracle to a few ulps (rel 1e-14 is generous), except where the exact standard error is 0:
# there the rounded terms leave a residual of order 2**-96 times the terms (≤ 50 here), so an
# absolute 1e-20 bounds it. The batch twin computes in float64: each term
# carries a few roundings (≤ 8 ulp), the means add ≤ log2(n) ulp, so its value agrees to ~30 ulp
# (rel 1e-13). Its standard error sums squares of residuals D/Ā − N/B̄, each with an absolute error
# ≤ ~10 eps·(|D/Ā| + |N/B̄|): with terms ≤ 50 in size here, the error of the standard error is below
# 1e-12 absolute (a residual can cancel to 0 while the exact one is 0: relative bounds fail there).
STREAM_REL = 1e-14
BATCH_REL, BATCH_ABS = 1e-13, 1e-12


def _close(x: float, y: float, rel: float, abs_: float = 0.0) -> bool:
    if x != x or y != y:
        return x != x and y != y
    return math.isclose(x, y, rel_tol=rel, abs_tol=abs_)


def _check_against_oracle(est_get, stream, kind, weights, rel, abs_):
    terms = entity_terms(expand(stream), kind, weights)
    for name in ESTIMATES:
        value, var = exact_estimate(terms.get(name, []))
        got = est_get[name]
        if value is None:
            assert math.isnan(got.value), name
            continue
        assert _close(got.value, float(value), rel, abs_), (name, got, float(value))
        if var is None:
            assert math.isnan(got.stderr) and got.reason, (name, got)
        else:
            assert _close(got.stderr, math.sqrt(var), rel, abs_), (name, got, math.sqrt(var))


@settings(max_examples=25)
@given(sampled_streams(max_size=16), st.sampled_from(DESIGNS))
def test_streaming_equals_batch_equals_oracle_at_every_prefix(case, kind):
    stream, weights = case
    est = se.SampleEstimator(design=_design(kind, weights))
    for i, (t, p, w) in enumerate(stream):
        est.update(t, p, w)
        prefix = stream[: i + 1]
        got = est.get()
        _check_against_oracle(got, prefix, kind, weights, STREAM_REL, 1e-20)
        els = expand(prefix)
        b = batch.estimate_from_sample([t for t, _ in els], [p for _, p in els],
                                       design=_design(kind, weights))
        _check_against_oracle(b, prefix, kind, weights, BATCH_REL, BATCH_ABS)
    est._check()


@given(sampled_streams(), st.sampled_from(DESIGNS), st.randoms(use_true_random=False))
def test_update_then_revert_restores_a_bit_identical_state(case, kind, rnd):
    stream, weights = case
    est = _feed(stream[: len(stream) // 2], kind, weights)
    before, before_get = est.to_dict(), est.get()
    tail = stream[len(stream) // 2:]
    for t, p, w in tail:
        est.update(t, p, w)
        est._check()
    rnd.shuffle(tail)  # revert in any order
    for t, p, w in tail:
        est.revert(t, p, w)
        est._check()
    assert est.to_dict() == before
    assert est == _feed(stream[: len(stream) // 2], kind, weights)
    assert all(_same(est.get()[k], before_get[k]) for k in ESTIMATES)


@given(sampled_streams(), sampled_streams(), st.sampled_from(DESIGNS))
def test_merge_equals_one_stream(a, b, kind):
    weights = {**a[1], **b[1]}
    left, right = _feed(a[0], kind, weights), _feed(b[0], kind, weights)
    left.merge(right)
    left._check()
    whole = _feed(a[0] + b[0], kind, weights)
    assert left == whole
    assert all(_same(left.get()[k], whole.get()[k]) for k in ESTIMATES)
    empty = se.SampleEstimator(design=_design(kind, weights))
    empty.merge(whole)
    assert empty == whole


@given(sampled_streams(), sampled_streams(), st.sampled_from(DESIGNS))
def test_update_many_equals_updates_one_by_one(a, b, kind):
    weights = {**a[1], **b[1]}
    bulk = _feed(a[0], kind, weights)
    stream = b[0]
    bulk.update_many([t for t, _, _ in stream], [p for _, p, _ in stream],
                     [w for _, _, w in stream])
    bulk._check()
    assert bulk == _feed(a[0] + b[0], kind, weights)


def test_update_many_checks_everything_first():
    est = se.SampleEstimator(design=se.SampleDesign.weights({"a": 2.0}))
    est.update("a", 1)
    _unchanged(est, lambda: est.update_many(["a", "b"], [1, 1]), SampleDesignError, "'b'")
    _unchanged(est, lambda: est.update_many(["a", "a"], [1, None]), se.MissingLabelError,
               "y_pred")
    _unchanged(est, lambda: est.update_many(["a"], [1], [0]), se.InvalidWeightError, "positive")
    _unchanged(est, lambda: est.update_many(["a"], [1, 2]), ValueError, "same length")


@given(sampled_streams(), st.sampled_from(DESIGNS))
def test_relabelling_changes_nothing(case, kind):
    stream, weights = case
    est = _feed(stream, kind, weights)
    renamed = [(None if t is None else ("x", t), f"p{p}", w) for t, p, w in stream]
    other = _feed(renamed, kind, {("x", k): v for k, v in weights.items()})
    assert all(_same(est.get()[k], other.get()[k]) for k in ESTIMATES)


@given(sampled_streams())
def test_saved_state_round_trips(case):
    stream, weights = case
    for kind in DESIGNS:
        est = _feed(stream, kind, weights)
        again = se.SampleEstimator.from_dict(est.to_dict())
        assert again == est
        again._check()


def _census_stream(stream):
    return [(t if t is not None else ("u", i), p, w) for i, (t, p, w) in enumerate(stream)]


@given(sampled_streams())
def test_census_ratio_is_the_population_metric(case):
    """Every entity sampled, uniform design: the unadjusted ratio ΣN/ΣD of the pairwise and the
    record-averaged B³ forms is exactly the population metric (and cluster recall the share of
    entities predicted exactly); the estimate is that ratio times the bias adjustment
    1 + n(ΣND·ΣD − ΣD²·ΣN) / ((n−1)·ΣN·ΣD²)."""
    stream = _census_stream(case[0])
    if not stream:
        return
    est = _feed(stream, "uniform", {})
    els = expand(stream)
    t, p = [x for x, _ in els], [y for _, y in els]
    table = se.Contingency()
    for x, y in els:
        table.update(x, y)

    def ratio(name):
        n, sn, sd, snn, sdd, snd = est.sums(name)
        return Fraction(sn, sd) if sd else None

    bp, br, bf = batch.bcubed_precision_recall_fscore(t, p)
    expected = {
        "pairwise_precision": batch.pair_precision_score(t, p),
        "pairwise_recall": batch.pair_recall_score(t, p),
        "pairwise_f": batch.pair_f1_score(t, p),
        "bcubed_precision": bp,
        "bcubed_recall": br,
        "bcubed_f": bf,
        "cluster_recall": sum(1 for e in set(t) if len({q for x, q in els if x == e}) == 1
                              and sum(1 for x, q in els if q == next(q2 for x2, q2 in els
                                                                     if x2 == e)) ==
                              sum(1 for x in t if x == e)) / len(set(t)),
    }
    for name, value in expected.items():
        r = ratio(name)
        if r is None:
            continue
        # the integer terms are exact; the B³ terms carry one 2**-96 rounding each
        assert math.isclose(float(r), value, rel_tol=1e-12, abs_tol=1e-15), (name, r, value)
        n, sn, sd, snn, sdd, snd = est.sums(name)
        e = est.estimate(name)
        if n > 1 and sn:
            adj = 1 + Fraction(n * (snd * sd - sdd * sn), (n - 1) * sn * sd * sd)
            assert math.isclose(e.value, float(r * adj), rel_tol=1e-15)


def test_census_of_a_perfect_clustering():
    """Every ratio ΣN/ΣD is 1. Where every entity's N_i = D_i the estimate is exactly 1 with a 0
    standard error; cluster precision and F have N_i = N·δ_i, D_i = K·c_i, which differ entity by
    entity, so their bias adjustment moves the estimate off the census ratio."""
    est = se.SampleEstimator()
    for t, p in [("a", 1), ("a", 1), ("b", 2), ("c", 3), ("c", 3), ("c", 3)]:
        est.update(t, p)
    got = est.get()
    for name in ESTIMATES:
        n, sn, sd, *_ = est.sums(name)
        assert sn == sd, name
        if not name.startswith(("cluster_precision", "cluster_f")):
            assert (got[name].value, got[name].stderr) == (1.0, 0.0), (name, got[name])
    assert got["cluster_precision"].value == pytest.approx(11 / 12)


def test_documented_example_of_er_evaluation():
    """er-evaluation's docstring example (pairwise precision and recall, uniform weights)."""
    t = ["c1", "c1", "c1", "c2", "c2", None, None, "c4"]
    p = [1, 1, 2, 3, 2, 4, 4, 4]
    est = se.SampleEstimator()
    for x, y in zip(t, p):
        est.update(x, y)
    got = est.get()
    assert got["pairwise_precision"][:2] == pytest.approx((0.3888888888888889,
                                                           0.2545875386086578), rel=1e-15)
    assert got["pairwise_recall"][:2] == pytest.approx((0.296875, 0.10825317547305482),
                                                       rel=1e-15)
    e = got["pairwise_precision"]
    z = 1.959963984540054
    assert (e.low, e.high) == pytest.approx((e.value - z * e.stderr, e.value + z * e.stderr))


def test_late_label_is_a_revert_and_an_update():
    est = se.SampleEstimator()
    for t, p in [("a", 1), (None, 1), ("b", 2), ("b", 2)]:
        est.update(t, p)
    est.revert(None, 1)
    est.update("a", 1)
    direct = se.SampleEstimator()
    for t, p in [("a", 1), ("a", 1), ("b", 2), ("b", 2)]:
        direct.update(t, p)
    assert est == direct


def test_one_sampled_entity_has_no_standard_error():
    est = se.SampleEstimator()
    est.update("a", 1)
    est.update("a", 1)
    est.update(None, 1)
    e = est.get()["pairwise_precision"]
    assert e.value == 0.5  # TP = 1, FP = 2 links to the unlabelled element: 1 / (1 + 2/2)
    assert math.isnan(e.stderr) and math.isnan(e.low) and math.isnan(e.high)
    assert "one sampled entity" in e.reason
    empty = se.SampleEstimator().get()["bcubed_recall"]
    assert math.isnan(empty.value) and empty.reason == "no sampled entity"


def _state(est):
    return est.to_dict(), {k: tuple(v) for k, v in est.get().items()}


def _unchanged(est, call, error, match):
    before = est.to_dict()
    with pytest.raises(error, match=match):
        call()
    assert est.to_dict() == before
    est._check()


def test_bad_input_leaves_the_state_unchanged():
    est = se.SampleEstimator(design=se.SampleDesign.probabilities({"a": 0.5, "b": 0.25}))
    est.update("a", 1)
    est.update(None, 1)
    _unchanged(est, lambda: est.update("zz", 1), SampleDesignError, "outside the declared sample")
    _unchanged(est, lambda: est.update("a", None), se.MissingLabelError, "y_pred")
    _unchanged(est, lambda: est.update("a", [1]), se.InvalidLabelError, "hashable")
    _unchanged(est, lambda: est.update("a", 1, 0), se.InvalidWeightError, "positive")
    _unchanged(est, lambda: est.update("a", 1, 1.5), se.InvalidWeightError, "positive")
    _unchanged(est, lambda: est.revert("a", 1, 2), UnknownElementError, "holds 1")
    _unchanged(est, lambda: est.revert(None, 1, 2), UnknownElementError, "unlabelled")
    _unchanged(est, lambda: est.revert("b", 1), UnknownElementError, "holds 0")
    _unchanged(est, lambda: est.declare("a", probability=0.4), SampleDesignError, "cannot change")
    _unchanged(est, lambda: est.declare("c", weight=float("nan")), SampleDesignError, "weight")
    _unchanged(est, lambda: est.declare("c", weight=0), SampleDesignError, "weight")
    _unchanged(est, lambda: est.declare("c", probability=1.5), SampleDesignError, r"\(0, 1\]")
    est.declare("c", probability=1.0)
    est.update("c", 2)
    other = se.SampleEstimator(design=se.SampleDesign.weights({"a": 3.0}))
    _unchanged(est, lambda: est.merge(other), SampleDesignError, "cannot change")
    _unchanged(est, lambda: est.merge(se.SampleEstimator("size")), SampleDesignError, "merge")


@pytest.mark.parametrize("bad, match", [
    ({"a": 0.0}, "probability"), ({"a": -0.1}, "probability"), ({"a": float("nan")}, "probability"),
    ({"a": 1.5}, "probability"), ({"a": "0.5"}, "probability"), ({None: 0.5}, "missing"),
])
def test_bad_probabilities_are_refused(bad, match):
    with pytest.raises(se.StreamevalError, match=match):
        se.SampleDesign.probabilities(bad)


@pytest.mark.parametrize("bad", [{"a": 0}, {"a": -2.0}, {"a": math.inf}, {"a": math.nan}])
def test_bad_weights_are_refused(bad):
    with pytest.raises(SampleDesignError, match="weight"):
        se.SampleDesign.weights(bad)
    with pytest.raises(SampleDesignError, match="weight"):
        batch.estimate_from_sample(["a"], [1], design=bad)


def test_bad_design_and_confidence():
    with pytest.raises(SampleDesignError, match="'uniform', 'size'"):
        se.SampleEstimator(design="stratified")
    with pytest.raises(SampleDesignError, match="confidence"):
        se.SampleEstimator(confidence=1.5)
    with pytest.raises(SampleDesignError, match="outside the declared sample"):
        batch.estimate_from_sample(["a", "b"], [1, 1], design={"a": 1.0})
    with pytest.raises(ValueError, match="differ in length"):
        batch.estimate_from_sample(["a", "b"], [1], design="size")
    with pytest.raises(se.MissingLabelError):
        batch.estimate_from_sample(["a", "b"], [1, None])


def test_malformed_saved_states_are_refused():
    est = se.SampleEstimator()
    est.update("a", 1)
    good = est.to_dict()
    for broken in ({**good, "cells": [["a", 9, 1]]}, {**good, "cells": [["a", 1, 5]]},
                   {**good, "columns": [[1, -1]]}, {**good, "version": 2},
                   {**good, "design": [["a", 1, 0]]}):
        with pytest.raises(se.InvalidStateError):
            se.SampleEstimator.from_dict(broken)


@given(sampled_streams(), st.sampled_from(DESIGNS))
def test_monitor_with_a_sample_reports_the_estimates(case, kind):
    stream, weights = case
    mon = se.Monitor([se.BCubed()], window=5, watch="BCubed", block=2, detector=False,
                     sample=_design(kind, weights))
    for t, p, w in stream:
        mon.update(t, p, w)
    want = _feed(stream, kind, weights)
    got = mon.report()
    assert mon.sample == want and mon.n == len(stream)
    assert all(_same(got["estimates"][k], want.get()[k]) for k in ESTIMATES)
    labelled = [(t, p, w) for t, p, w in stream if t is not None]
    assert mon.all_time.table.n == sum(w for *_, w in labelled)  # the tables: labelled only


def test_monitor_with_a_sample_refuses_bad_input_unchanged():
    mon = se.Monitor([se.BCubed()], window=3, watch=None,
                     sample=se.SampleDesign.weights({"a": 1.0}))
    mon.update("a", 1)
    mon.update(None, 1)
    before = (mon.sample.to_dict(), mon.all_time.table.to_dict(), mon.n)
    for call, error in ((lambda: mon.update("b", 1), SampleDesignError),
                        (lambda: mon.update(None, None), se.MissingLabelError),
                        (lambda: mon.update("a", 1, 0), se.InvalidWeightError),
                        (lambda: mon.update_many(["a"], [1]), ValueError)):
        with pytest.raises(error):
            call()
        assert (mon.sample.to_dict(), mon.all_time.table.to_dict(), mon.n) == before
