"""Bad input: a clear error that names the problem, and the state exactly as it was."""

from __future__ import annotations

import math

import numpy as np
import pytest

import streameval as se
from streameval.errors import (
    InvalidLabelError,
    InvalidStateError,
    InvalidWeightError,
    MissingLabelError,
    UnknownElementError,
)


@pytest.fixture
def ev():
    ev = se.Evaluator([se.ELM(), se.BCubed(beta=2), se.AdjustedRand(), se.Purity()])
    for t, p in [(0, "a"), (0, "a"), (1, "b"), (2, "b")]:
        ev.update(t, p)
    return ev


def assert_unchanged(ev, call, error, match):
    before, values, version = ev.table.copy(), ev.get(), ev.table.version
    with pytest.raises(error, match=match):
        call()
    assert ev.table == before and ev.get() == values and ev.table.version == version
    ev.table._check()


@pytest.mark.parametrize("t,p,match", [
    (None, "a", "y_true is missing"),
    (0, None, "y_pred is missing"),
    (math.nan, "a", r"y_true is missing \(NaN\)"),
    (0, np.float64("nan"), r"y_pred is missing \(NaN\)"),
])
def test_missing_labels_are_rejected(ev, t, p, match):
    assert_unchanged(ev, lambda: ev.update(t, p), MissingLabelError, match)
    assert_unchanged(ev, lambda: ev.revert(t, p), MissingLabelError, match)


def test_unhashable_labels_are_rejected(ev):
    assert_unchanged(ev, lambda: ev.update([1], "a"), InvalidLabelError, "y_true must be hashable")
    assert_unchanged(ev, lambda: ev.update(0, np.array([1, 2])), InvalidLabelError,
                     "y_pred must be hashable")


@pytest.mark.parametrize("w", [0, -1, 1.5, math.nan, math.inf, "1", None, True])
def test_bad_weights_are_rejected(ev, w):
    assert_unchanged(ev, lambda: ev.update(0, "a", w), InvalidWeightError, "positive integer")
    assert_unchanged(ev, lambda: ev.revert(0, "a", w), InvalidWeightError, "positive integer")


def test_integral_float_weights_are_accepted():
    t = se.Contingency()
    t.update(1, 1, 2.0)
    t.update(1, 1, np.int64(3))
    t.revert(1, 1, 1.0)
    assert t[1, 1] == 4


@pytest.mark.parametrize("t,p,w,match", [
    (5, "a", 1, r"revert of \(y_true=5, y_pred='a', w=1\): the table holds 0"),
    (0, "b", 1, r"revert of \(y_true=0, y_pred='b', w=1\): the table holds 0"),
    (0, "a", 3, r"w=3\): the table holds 2"),
])
def test_unknown_reverts_are_rejected(ev, t, p, w, match):
    assert_unchanged(ev, lambda: ev.revert(t, p, w), UnknownElementError, match)


def test_missing_labels_can_be_skipped_and_counted():
    t = se.Contingency(missing="skip")
    t.update(None, 1)
    t.update(1, math.nan, w=2)
    t.update(1, 1)
    assert (t.n, t.skipped) == (1, 3)
    t.revert(None, None)
    assert t.skipped == 2
    with pytest.raises(UnknownElementError, match="only 2 were skipped"):
        t.revert(None, 1, w=3)
    with pytest.raises(ValueError, match='missing must be "raise" or "skip"'):
        se.Contingency(missing="ignore")


def test_update_many_rejects_bad_batches_before_changing_anything(ev):
    assert_unchanged(ev, lambda: ev.update_many([1, 2], [1]), ValueError, "same length")
    assert_unchanged(ev, lambda: ev.update_many([[1, 2]], [[1, 2]]), ValueError, "one-dimensional")
    assert_unchanged(ev, lambda: ev.update_many([1.0, np.nan], [1, 2]), MissingLabelError,
                     r"y_true\[1\] is missing")
    assert_unchanged(ev, lambda: ev.update_many(np.array([1, None], dtype=object), [1, 2]),
                     MissingLabelError, r"y_true\[1\] is missing")
    assert_unchanged(ev, lambda: ev.update_many([1, 2], [1, 2], w=[1, 0]), InvalidWeightError,
                     "positive integer")
    assert_unchanged(ev, lambda: ev.update_many([1, 2], [1, 2], w=[1, 2.5]), InvalidWeightError,
                     "positive integer")
    assert_unchanged(ev, lambda: ev.update_many([1, 2], [1, 2], w=[1]), ValueError, "same length")
    assert_unchanged(ev, lambda: ev.update_many(np.array([1, [2]], dtype=object), [1, 2]),
                     InvalidLabelError, "hashable")


def test_update_many_can_skip_missing_labels():
    t = se.Contingency(missing="skip")
    t.update_many([1.0, np.nan, 2.0], [1, 1, 2], w=[1, 5, 1])
    assert (t.n, t.skipped) == (2, 5)


GOOD = se.Contingency()
GOOD.update("a", "x", 2)


def _version_1(d: dict) -> dict:
    """The same state in the version-1 layout (each label written in its cells), which still loads."""
    labels = d.pop("labels")
    d.update(version=1, cells=[[labels["true"][i], labels["pred"][j], c] for i, j, c in d["cells"]])
    return d


@pytest.mark.parametrize("mutate,match", [
    (lambda d: d.update(format="other"), "not a streameval Contingency state"),
    (lambda d: d.update(version=99), "unsupported Contingency state version 99"),
    (lambda d: d.pop("cells"), "lacks the key 'cells'"),
    (lambda d: d.update(cells="nope"), "'cells' must be a list"),
    (lambda d: _version_1(d).update(cells=[["a", "x"]]), r"cells\[0\] must be \[true, pred, count\]"),
    (lambda d: _version_1(d).update(cells=[["a", "x", 0]]), r"cells\[0\]: count must be an int >= 1"),
    (lambda d: _version_1(d).update(cells=[["a", "x", 1.5]]), r"cells\[0\]: count must be an int >= 1"),
    (lambda d: _version_1(d).update(cells=[[None, "x", 2]]), r"cells\[0\]: true is missing"),
    (lambda d: _version_1(d).update(cells=[["a", "x", 1], ["a", "x", 1]]),
     r"cells\[1\]: cell \('a', 'x'\) appears twice"),
    (lambda d: d.update(cells=[[0, 0]]), r"cells\[0\] must be \[true position, pred position, count\]"),
    (lambda d: d.update(cells=[[0, 1, 2]]), r"cells\[0\] must be \[true position, pred position, count\]"),
    (lambda d: d.update(cells=[[0, 0, 0]]), r"cells\[0\]: count must be an int >= 1"),
    (lambda d: d.update(cells=[[0, 0, 1], [0, 0, 1]]), r"cells\[1\]: cell \(0, 0\) appears twice"),
    (lambda d: d.update(labels={"true": [None], "pred": ["x"]}), r"labels.true\[0\]"),
    (lambda d: d.update(n=3), "'n' is 3 but the cells sum to 2"),
    (lambda d: d.update(skipped=-1), "'skipped' must be an int >= 0"),
    (lambda d: d.update(missing="maybe"), "invalid 'missing' policy"),
    (lambda d: d.update(track_f=[["elm", -1]]), "invalid track_f entry"),
    (lambda d: d.update(track_f=[["xyz", 1.0]]), "invalid track_f entry"),
])
def test_from_dict_rejects_malformed_or_inconsistent_states(mutate, match):
    d = GOOD.to_dict()
    mutate(d)
    with pytest.raises(InvalidStateError, match=match):
        se.Contingency.from_dict(d)


def test_a_version_1_state_still_loads():
    assert se.Contingency.from_dict(_version_1(GOOD.to_dict())).to_dict() == GOOD.to_dict()


def test_from_dict_rejects_non_dicts_and_to_dict_rejects_unserialisable_labels():
    with pytest.raises(InvalidStateError, match="must be a dict"):
        se.Contingency.from_dict([1, 2])
    t = se.Contingency()
    t.update(frozenset({1}), 1)
    with pytest.raises(InvalidLabelError, match="cannot be saved as JSON"):
        t.to_dict()


def test_labels_use_python_equality():
    t = se.Contingency()
    t.update(1, True)
    t.update(1.0, 1)
    assert t.cells == 1 and t[1, 1] == 2


def test_batch_functions_reject_bad_input():
    with pytest.raises(ValueError, match="same length"):
        se.batch.elm_score([1, 2], [1])
    with pytest.raises(MissingLabelError, match=r"labels_pred\[1\] is missing"):
        se.batch.rand_score([1, 2], [1, None])
    with pytest.raises(ValueError, match="one-dimensional"):
        se.batch.mutual_info_score([[1]], [[1]])
    with pytest.raises(ValueError, match="beta must be a finite number > 0"):
        se.ELM(beta=0)
    with pytest.raises(ValueError, match="f_convention must be one of"):
        se.BCubed(f_convention="macro")
    with pytest.raises(ValueError, match="average_method must be one of"):
        se.NormalizedMutualInfo(average_method="median")
