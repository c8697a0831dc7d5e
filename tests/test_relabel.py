"""Relabelling a cluster equals reverting its elements and replaying them under the new label."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streameval as se
from streameval import Contingency
from streameval.errors import MissingLabelError, UnknownElementError

labels = st.integers(0, 5)
streams = st.lists(st.tuples(labels, labels, st.integers(1, 3)), min_size=1, max_size=40)


def _table(stream, track=True):
    t = Contingency()
    if track:
        t.track_f("elm", 1.0)
        t.track_f("bcubed", 2.0)
    for y, p, w in stream:
        t.update(y, p, w)
    return t


def _replayed(stream, old, new, side):
    """The oracle: revert every element of cluster ``old``, replay it under ``new``."""
    t = _table(stream)
    moved = [(y, p, w) for y, p, w in stream if (p if side == "pred" else y) == old]
    for y, p, w in moved:
        t.revert(y, p, w)
    for y, p, w in moved:
        t.update(*((y, new) if side == "pred" else (new, p)), w)
    return t


@pytest.mark.slow
@given(streams, labels, st.integers(0, 7), st.sampled_from(["pred", "true"]))
def test_relabel_equals_revert_and_replay(stream, pick, new, side):
    present = sorted({(p if side == "pred" else y) for y, p, _ in stream})
    old = present[pick % len(present)]
    t = _table(stream)
    (t.relabel_pred if side == "pred" else t.relabel_true)(old, new)
    t._check()
    assert t == _replayed(stream, old, new, side)
    assert t.stats() == _replayed(stream, old, new, side).stats()


@pytest.mark.slow
@given(streams, labels, st.integers(0, 7))
def test_relabel_then_metrics_equal_batch_on_relabelled_labels(stream, pick, new):
    present = sorted({p for _, p, _ in stream})
    old = present[pick % len(present)]
    ev = se.Evaluator()
    for y, p, w in stream:
        ev.update(y, p, w)
    ev.relabel_pred(old, new)
    ref = se.Evaluator()
    for y, p, w in stream:
        ref.update(y, new if p == old else p, w)
    assert ev.get() == ref.get()
    ev.relabel_true(stream[0][0], "t")
    assert ev.table.true_size("t") == sum(w for y, _, w in stream if y == stream[0][0])


def test_relabel_rename_to_fresh_label_keeps_every_value():
    t = _table([(0, "a", 2), (1, "a", 1), (1, "b", 3)])
    before = t.stats()
    t.relabel_pred("a", "z")
    assert t.column("z") == {0: 2, 1: 1} and t.pred_size("a") == 0
    assert t.stats() == before  # a rename changes no sum
    t._check()


def test_relabel_bumps_version_and_same_label_is_a_no_op():
    t = _table([(0, "a", 1), (0, "b", 1)])
    v = t.version
    t.relabel_pred("a", "a")
    assert t.version == v
    t.relabel_pred("a", "b")
    assert t.version == v + 1 and t.k_pred == 1


def test_relabel_unknown_or_missing_label_is_rejected_and_changes_nothing():
    t = _table([(0, "a", 1), (1, "b", 2)])
    before = t.copy()
    with pytest.raises(UnknownElementError, match="predicted cluster 'q'"):
        t.relabel_pred("q", "a")
    with pytest.raises(UnknownElementError, match="true cluster 9"):
        t.relabel_true(9, 0)
    with pytest.raises(MissingLabelError):
        t.relabel_pred("a", None)
    assert t == before
