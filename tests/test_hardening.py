"""Hardening (library part): failures found by trying to break streameval, one test per item.

Each test is named after the hardening item it pins (``test_13_<item>_...``); each failed on the
code before the fix.
"""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from discover import BATCH, ON_DEMAND  # the batch twin of every registered label metric
from hypothesis import given
from oracles import all_scores
from strategies import mixed_streams
from test_core import close  # a float tolerance

import streameval as se
from streameval import batch
from streameval._validate import is_missing
from streameval.batch import reference as twin
from streameval.errors import InvalidLabelError, InvalidStateError, InvalidWeightError, MissingLabelError

ROOT = Path(__file__).resolve().parents[1]



def plain(v):
    """``v`` with numpy scalars as the equal Python scalars (the brute-force oracle uses ==)."""
    if isinstance(v, tuple):
        return tuple(plain(x) for x in v)
    return v.item() if isinstance(v, np.generic) else v


def objects(values) -> np.ndarray:
    """A 1-D object array holding exactly ``values`` (tuples stay single elements)."""
    arr = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        arr[i] = v
    return arr


def evaluator(names=BATCH, missing="skip"):
    return se.Evaluator([se.REGISTRY[n]() for n in names], table=se.Contingency(missing=missing))


# ------------------------------------------------------------------------------------- item 1
def test_13_1_update_many_keeps_1_and_str_1_apart():
    for ts in ([1, "1"], [True, "True"], ["a", "a\x00"], [1.5, "1.5"]):
        bulk, one = se.Contingency(), se.Contingency()
        bulk.update_many(ts, ["x", "x"])
        for t in ts:
            one.update(t, "x")
        assert bulk.k_true == one.k_true == 2, ts
        assert bulk == one
        bulk._check()


def test_13_1_update_many_merges_what_python_equality_merges():
    bulk, one = se.Contingency(), se.Contingency()
    ts = [1, 1.0, True, np.int64(1), np.float64(1.0), np.bool_(True), "1"]
    bulk.update_many(ts, ["p"] * len(ts))
    for t in ts:
        one.update(t, "p")
    assert bulk == one and bulk.k_true == 2 and bulk.true_size(1) == 6
    bulk._check()


def test_13_1_batch_functions_keep_labels_update_keeps_apart():
    ts = [1, "1", True, "True", "a", "a\x00"]
    ps = [0, 0, 1, 1, 2, 2]
    ev = evaluator()
    for t, p in zip(ts, ps):
        ev.update(t, p)
    assert ev.table.k_true == 5  # {1 == True, "1", "True", "a", "a\x00"}
    got = ev.get()
    for name, f in BATCH.items():
        assert close(f(ts, ps), got[name]), name
        assert close(f(objects(ts), objects(ps)), got[name]), name
    n, a, b = batch.contingency_cells(["a", "a\x00"], [0, 0])
    assert sorted(n.tolist()) == [1, 1] and sorted(a.tolist()) == [1, 1]
    assert batch.inverse_purity_score([0, 0], ["a", "a\x00"]) == 0.5


def test_13_1_coreference_and_candidates_keep_labels_apart():
    ts, ps = [1, "1", 2, 2], ["a", "a", "a\x00", "a"]
    ev = se.Evaluator([se.REGISTRY[n]() for n in ON_DEMAND])
    for t, p in zip(ts, ps):
        ev.update(t, p)
    got = ev.get()
    for name, f in ON_DEMAND.items():
        assert close(f(ts, ps), got[name]), name
    p, r, f = batch.score_candidates(ts, [ps, ["a", "b", "c", "d"]], metric="elm")
    assert close(f[0], twin.elm_score(ts, ps))
    assert close(f[1], twin.elm_score(ts, ["a", "b", "c", "d"]))


@given(mixed_streams(max_size=25))
def test_13_1_mixed_labels_agree_across_update_update_many_and_batch(stream):
    """Mixed label types through update, update_many (list and object array) and batch: the same
    clusters (counted by Python's set) and the same values (and the brute-force oracle's)."""
    ts, ps = stream
    one, bulk, arr = evaluator(), evaluator(), evaluator()
    for t, p in zip(ts, ps):
        one.update(t, p)
    bulk.update_many(ts, ps)
    arr.update_many(objects(ts), objects(ps))
    for ev in (bulk, arr):
        assert ev.table == one.table
        assert ev.table.skipped == one.table.skipped
        ev.table._check()
    one.table._check()
    kept = [(t, p) for t, p in zip(ts, ps) if not is_missing(t) and not is_missing(p)]
    assert one.table.skipped == len(ts) - len(kept)
    kt, kp = [t for t, _ in kept], [p for _, p in kept]
    assert one.table.k_true == len(set(kt)) and one.table.k_pred == len(set(kp))
    assert one.table.n == len(kept)
    got = one.get()
    oracle = all_scores([(plain(t), plain(p)) for t, p in kept])
    for name, f in BATCH.items():
        assert close(f(kt, kp), got[name]), (name, f(kt, kp), got[name])
        if name in oracle:  # the brute-force oracle, where one is written
            assert close(oracle[name], got[name]), (name, oracle[name], got[name])
    if len(kept) < len(ts):  # batch functions have no "skip": a missing label is an error
        with pytest.raises(MissingLabelError):
            batch.elm_score(ts, ps)
        strict = se.Contingency()
        with pytest.raises(MissingLabelError):
            strict.update_many(ts, ps)
        assert strict.n == 0 and strict.version == 0


def test_13_1_label_sequences_are_sequences():
    for bad in ("abc", 5, iter([1, 2, 3]), (x for x in [1, 2, 3])):
        with pytest.raises(ValueError, match="labels_true must be a"):
            batch.rand_score(bad, [1, 2, 3])
        table = se.Contingency()
        with pytest.raises(ValueError, match="y_true must be a"):
            table.update_many(bad, [1, 2, 3])
        assert table.n == 0
    assert batch.rand_score(range(3), {0: 1, 1: 1, 2: 2}.values()) == batch.rand_score([0, 1, 2], [1, 1, 2])


@pytest.mark.parametrize("unordered, match", [
    ({"x", "y", "z"}, "got a set: a set has no order"),
    (frozenset("xyz"), "got a frozenset: a set has no order"),
    ({10: "x", 11: "y", 12: "z"}, r"got a dict, whose iteration gives its keys; pass list\(d.values\(\)\)"),
])
def test_13_1_sets_and_mappings_are_not_label_sequences(unordered, match):
    """Before: a set was paired with the other sequence in its hash order (and with its repeats
    merged), a dict by its keys (element ids, each a singleton): every path returned a value.
    Now each refuses, naming the argument, and nothing changes; dict views keep their order."""
    from streameval.reference import ReferenceContingency

    labels = ["a", "a", "b"]
    with pytest.raises(ValueError, match="labels_pred must be a sequence with one entry per element, " + match):
        batch.rand_score(labels, unordered)
    with pytest.raises(ValueError, match="labels must be a sequence with one entry per element"):
        batch.ssw_score(np.zeros((3, 2)), unordered)
    for table in (se.Contingency(), ReferenceContingency()):
        table.update("a", "x")
        before = pickle.dumps(table)
        with pytest.raises(ValueError, match="y_pred must be a sequence with one entry per element, " + match):
            table.update_many(labels, unordered)
        with pytest.raises(ValueError, match="w must be a sequence with one entry per element"):
            table.update_many(labels, ["x", "y", "z"], {1, 2, 3})
        assert pickle.dumps(table) == before
    mon = se.Monitor([se.ELM()], window=5, detector=False)
    with pytest.raises(ValueError, match="y_pred must be a sequence with one entry per element"):
        mon.update_many(labels, unordered)
    assert mon.n == 0 and mon.all_time.table.n == 0
    est = se.SampleEstimator()
    with pytest.raises(ValueError, match="y_pred must be a sequence with one entry per element"):
        est.update_many(labels, unordered)
    with pytest.raises(ValueError, match="y_true must be a sequence, got a single str"):
        est.update_many("aab", ["x", "y", "z"])
    assert est.n == 0
    summaries = se.ClusterSummaries(dim=2)
    with pytest.raises(ValueError, match="y_pred must be a sequence with one entry per element"):
        summaries.update_many(np.zeros((3, 2)), unordered)
    assert summaries.n == 0
    with pytest.raises(ValueError, match=r"y_pred\['A'\] must be a sequence with one entry per element"):
        se.compare(labels, {"A": unordered}, units=[1, 2, 3])
    with pytest.raises(ValueError, match="units must be a sequence with one entry per element"):
        se.compare(labels, {"A": labels}, units=unordered)
    ordered = {10: "x", 11: "x", 12: "z"}
    assert batch.rand_score(labels, ordered.values()) == batch.rand_score(labels, ["x", "x", "z"])


# ------------------------------------------------------------------------------------- item 2
def test_13_2_numpy_scalar_beside_tuple_labels_never_broadcast():
    ev = se.Evaluator([se.ELM(), se.BCubed(), se.Purity()])
    stream = [
        (np.int64(1), "p"), ((1, 2), "p"), ("q", np.float64(2.0)), ("r", (2.0, 3.0)),
        ((1, 2), np.float64(2.0)), (np.int64(1), (2.0, 3.0)),
    ]
    for k, (t, p) in enumerate(stream, 1):
        ev.update(t, p)  # a numpy scalar against a tuple raised "truth value ... ambiguous"
        ev.table._check()
        ts, ps = [plain(t) for t, _ in stream[:k]], [plain(p) for _, p in stream[:k]]
        assert close(ev.get()["ELM"], twin.elm_score(ts, ps))
    for t, p in reversed(stream):
        ev.revert(t, p)
        ev.table._check()
    assert ev.table.n == 0 and ev.table.both_singletons == 0


def test_13_2_relabel_with_numpy_scalar_and_tuple_labels():
    table = se.Contingency()
    table.update("a", np.int64(1))
    table.update("b", (1, 1))
    table.relabel_pred(np.int64(1), (1, 1))  # `old == new` broadcast here
    table._check()
    assert table.k_pred == 1 and table.pred_size((1, 1)) == 2
    w = se.CountWindow(5, [se.ELM()])
    w.update("a", np.int64(1))
    w.update("b", (1, 1))
    w.relabel_pred((1, 1), np.int64(1))
    assert [p for _, p, _ in w] == [1, 1]
    assert w.evaluator.table.k_pred == 1


# ------------------------------------------------------------------------------------- item 3
MISSING = [None, math.nan, np.float64("nan"), pd.NA, pd.NaT, np.datetime64("NaT")]


def test_13_2_a_monitors_window_never_broadcasts_a_leaving_label_against_a_new_one():
    """Before: the window's expiry compared the leaving element with the new one by ``==``, and
    ``(1,) == np.int64(1)`` is ``array([True])``: two different cells were taken for one, the
    error account missed both changes, and ``"broke"`` listed a split entity beside 0 splits
    (later a bare KeyError from inside the account)."""
    from streameval.breakdown import ErrorAccount

    rows = [(np.int64(1), np.int64(1)), (1.0, (1,)), (np.int64(1), (1,)), (2, (1,)), (np.int64(2), 2)]
    a = se.Monitor([se.ELM()], window=2, detector=False)
    b = se.Monitor([se.ELM()], window=2, detector=False)
    for t, p in rows:
        a.update(t, p)
        b.update(plain(t), plain(p))
        assert a.get() == b.get()
        assert a.account.report(10) == ErrorAccount(a.window.evaluator.table).report(10)


def test_13_2_the_sample_estimator_never_broadcasts_entity_labels():
    """Before: an entity ``(1,)`` beside an element of entity ``np.int64(1)`` in the same
    predicted cluster was skipped as if it were that entity (``==`` broadcast to
    ``array([True])``): wrong estimates; with ``(1, 1)`` a bare numpy ValueError."""
    rows = [(np.int64(1), "c", 2), ((1,), "d", 2), (2, "c", 2), (1, "c", 1), ((1,), "c", 2),
            ((1, 1), "c", 1), (np.int64(1), "c", 1)]
    a, b = se.SampleEstimator(), se.SampleEstimator()
    for t, p, w in rows:
        a.update(t, p, w)
        b.update(plain(t), p, w)
    a.revert(np.int64(1), "c")
    b.revert(1, "c")
    assert repr(a.get()) == repr(b.get())  # every estimate, NaN standard errors included
    assert a.get()["bcubed_precision"].value == b.get()["bcubed_precision"].value


@pytest.mark.parametrize("home, other", [((1,), np.int64(1)), (np.int64(1), (1,)), (np.int64(1), (1, 1))])
def test_13_2_bootstrap_units_never_broadcast(home, other):
    """Before: ``np.int64(1) != (1,)`` is ``array([False])``: a cluster given in unit ``(1,)``
    and then in unit ``np.int64(1)`` was accepted across the two units (the replicas then cut
    it), and ``(1, 1)`` raised numpy's ambiguous-truth error."""
    bs = se.BootstrapEvaluator([se.ELM()], n_replicas=4)
    bs.update("x", "y", unit=other)  # the other unit exists: the quick path is tried
    bs.update("e", "c", unit=home)
    before = pickle.dumps(bs)
    with pytest.raises(ValueError, match="true label 'e' is in unit .* and now given in unit"):
        bs.update("e", "c", unit=other)
    shard = se.BootstrapEvaluator([se.ELM()], n_replicas=4)
    shard.update("e", "c", unit=other)
    with pytest.raises(ValueError, match="cannot merge: true label 'e' is in unit"):
        bs.merge(shard)
    assert pickle.dumps(bs) == before


@pytest.mark.parametrize("marker", MISSING, ids=repr)
def test_13_3_every_missing_marker_follows_one_rule_on_every_path(marker):
    skip = se.Contingency(missing="skip")
    skip.update(marker, "a")  # pd.NA was refused here
    skip.update(0, marker, w=2)
    assert skip.skipped == 3 and skip.n == 0
    skip.update_many([marker, 0, 1], ["a", "a", marker])  # pd.NA was counted as a cluster
    assert skip.skipped == 5 and skip.n == 1
    json.dumps(skip.to_dict())  # to_dict used to fail on the pd.NA cluster
    skip.revert(marker, "a", w=5)
    assert skip.skipped == 0
    strict = se.Contingency()
    with pytest.raises(MissingLabelError, match="y_true is missing"):
        strict.update(marker, "a")
    with pytest.raises(MissingLabelError, match=r"y_pred\[1\] is missing"):
        strict.update_many([0, 1], ["a", marker])
    with pytest.raises(MissingLabelError, match=r"labels_true\[0\] is missing"):
        batch.adjusted_rand_score([marker, 1], [0, 0])  # pd.NA raised a TypeError
    with pytest.raises(MissingLabelError):
        batch.elm_score(pd.Series([1, marker], dtype=object), [0, 0])
    with pytest.raises(MissingLabelError):
        se.ClusterSummaries().update([1.0], marker)
    assert strict.n == 0 and strict.version == 0


def test_13_3_pandas_nullable_columns():
    ts = pd.Series([1, 2, None, 2], dtype="Int64")  # holds pd.NA
    ps = pd.Series(["a", "b", "b", None], dtype="string")
    table = se.Contingency(missing="skip")
    table.update_many(ts, ps)
    assert table.skipped == 2 and sorted(table.items()) == [(1, "a", 1), (2, "b", 1)]


# ------------------------------------------------------------------------------------- item 4
INTRINSIC = [
    batch.calinski_harabasz_score, batch.davies_bouldin_score, batch.silhouette_score,
    batch.ssw_score, batch.ssb_score, batch.separation_score, batch.compactness_score,
    batch.rms_compactness_score, batch.rms_davies_bouldin_score, batch.silhouette_samples,
    batch.prequential_silhouette_score,
]


@pytest.mark.parametrize("f", INTRINSIC, ids=lambda f: f.__name__)
@pytest.mark.parametrize("marker", [None, math.nan, pd.NA], ids=repr)
def test_13_4_batch_intrinsic_functions_reject_missing_labels(f, marker):
    X = [[0.0], [1.0], [5.0], [6.0]]
    summaries = se.ClusterSummaries()
    with pytest.raises(MissingLabelError):  # the streaming summaries' error
        summaries.update(X[3], marker)
    with pytest.raises(MissingLabelError, match=r"labels\[3\] is missing"):
        f(X, [0, 0, 1, marker])
    with pytest.raises(MissingLabelError):
        f(X, np.array([0.0, 0.0, 1.0, np.nan]))
    assert close(float(np.mean(f(X, [0, 0, 1, 1]))), float(np.mean(f(X, ["0", "0", 1, True]))))


# ------------------------------------------------------------------------------------- item 7
@pytest.fixture
def fast_switching():
    """Switch threads every few microseconds, so that unguarded code would interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _hammer(target, n_threads=4, per_thread=2000):
    errors = []

    def run(k):
        try:
            for i in range(per_thread):
                target.update(i % 7, (k, i % 3))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _sequential_table(n_threads=4, per_thread=2000):
    table = se.Contingency()
    for k in range(n_threads):
        for i in range(per_thread):
            table.update(i % 7, (k, i % 3))
    return table


@pytest.mark.slow  # threads hammering four wrappers: a second of CPU, out of the quick loop
def test_13_7_synchronized_wrapper_loses_nothing(fast_switching):
    want = _sequential_table()
    table = se.Synchronized(se.Contingency())
    _hammer(table)
    assert table.wrapped == want
    table.wrapped._check()
    ev = se.Synchronized(se.Evaluator([se.ELM(), se.AdjustedRand()]))
    _hammer(ev)
    assert sorted(ev.table.items()) == sorted(want.items())
    assert ev.get() == se.Evaluator([se.ELM(), se.AdjustedRand()], want.copy()).get()
    ev.table._check()
    win = se.Synchronized(se.CountWindow(50, [se.ELM()]))
    _hammer(win)
    assert len(win) == 50
    rebuilt = se.Contingency()
    for t, p, w in win:
        rebuilt.update(t, p, w)
    assert sorted(win.evaluator.table.items()) == sorted(rebuilt.items())
    win.evaluator.table._check()
    mon = se.Synchronized(se.Monitor([se.ELM(), se.Purity()], window=40, block=10, detector=False))
    _hammer(mon)
    assert mon.n == 8000 and sorted(mon.all_time.table.items()) == sorted(want.items())
    assert len(mon.window) == 40 and mon.window.evaluator.table.n == 40
    mon.all_time.table._check()
    assert mon.get()["n"] == 8000


def _concurrent_update_from(callback_target, call):
    """Run ``call`` in another thread while this thread is inside a guarded method."""
    seen = []

    def other():
        try:
            call()
        except Exception as e:
            seen.append(e)

    th = threading.Thread(target=other)
    th.start()
    th.join()
    return seen


def test_13_7_guard_raises_instead_of_corrupting():
    w = se.EventTimeWindow(2, [se.ELM()])
    seen = []
    w.on_expire = lambda *item: seen.extend(_concurrent_update_from(w, lambda: w.update(1, "b", t=9)))
    w.update(0, "a", t=0)
    w.update(0, "a", t=5)  # expires t=0: the callback runs inside update
    assert len(seen) == 1 and isinstance(seen[0], se.errors.ConcurrentUseError)
    assert "Synchronized" in str(seen[0])
    assert len(w) == 1 and w.evaluator.table.n == 1  # the refused update changed nothing

    mon = se.Monitor([se.ELM()], window=2, detector=False)
    inner = mon.window.on_expire
    found = []

    def on_expire(*item):
        inner(*item)
        found.extend(_concurrent_update_from(mon, lambda: mon.update(9, "z")))

    mon.window.on_expire = on_expire
    for t, p in [(0, "a"), (0, "a"), (1, "b")]:
        mon.update(t, p)
    assert [type(e) for e in found] == [se.errors.ConcurrentUseError]
    assert mon.n == 3 and mon.all_time.table.n == 3 and 9 not in mon.all_time.table.true_sizes()


def test_13_7_thread_rule_is_documented():
    rules = (ROOT / "docs" / "rules.md").read_text()
    assert "not thread-safe" in rules and "Synchronized" in rules and "ConcurrentUseError" in rules
    assert "rules.md" in (ROOT / "mkdocs.yml").read_text()


# ------------------------------------------------------------------------------------- item 8
@pytest.mark.parametrize("w", [10**300, 1e286, 2**57, float(2**57), np.uint64(2**57)], ids=repr)
def test_13_8_huge_weight_rejected_before_the_table_changes(w):
    ev = se.Evaluator()
    ev.update(0, "a")
    ev.update(1, "a")
    before, values = ev.table.copy(), ev.get()
    for call in (lambda: ev.update(0, "b", w), lambda: ev.revert(0, "a", w),
                 lambda: ev.update_many([0], ["b"], [w] if not isinstance(w, int) else np.array([float(w)]))):
        with pytest.raises(InvalidWeightError, match="2\\*\\*57"):
            call()
        assert ev.table == before and ev.get() == values
    with pytest.raises(InvalidWeightError):
        se.CountWindow(3).update(0, 0, w)
    with pytest.raises(InvalidWeightError):
        se.ClusterSummaries().update([0.0], 0, w)


def test_13_8_total_count_stays_below_2_pow_57():
    table = se.Contingency()
    table.update(0, "a", w=2**57 - 2)  # the largest supported total is 2**57 - 1
    table.update(1, "b")
    before = table.copy()
    with pytest.raises(InvalidWeightError, match="2\\*\\*57"):
        table.update(1, "b")
    with pytest.raises(InvalidWeightError, match="2\\*\\*57"):
        table.update_many([1, 2], ["b", "c"])
    assert table == before
    table._check()
    bulk = se.Contingency()
    with pytest.raises(InvalidWeightError, match="2\\*\\*57"):
        bulk.update_many([0, 1], ["a", "b"], np.array([2**56, 2**56], dtype=np.int64))
    assert bulk.n == 0
    bulk.update_many([0, 0, 1], ["a", "a", "b"], np.array([2**55, 2**55, 5], dtype=np.int64))
    assert bulk[0, "a"] == 2**56 and bulk.n == 2**56 + 5  # exact: no float rounding
    other = bulk.copy()
    with pytest.raises(InvalidWeightError, match="2\\*\\*57"):
        bulk.merge(other)
    assert bulk == other
    mon = se.Monitor([se.ELM()], window=se.EventTimeWindow(10, [se.ELM()]), detector=False)
    mon.update(0, "a", 2**57 - 1, t=0)
    with pytest.raises(InvalidWeightError):
        mon.update(0, "a", t=20)  # the window has room again, the all-time table has not
    assert len(mon.window) == 1 and mon.n == 1


# ------------------------------------------------------------------------------------ item 10
def _nested(depth):
    label = "x"
    for _ in range(depth):
        label = [label]
    return label


def test_13_10_crafted_contingency_states_raise_invalid_state_error():
    good = se.Contingency()
    good.update("a", "b", w=2)
    d = {**good.to_dict(), "version": 1}  # version 1 (labels in the cells) is still read
    bad = [
        ({**d, "cells": [["a", "b", 10**300]], "n": 10**300}, "2\\*\\*57"),
        ({**d, "cells": [[_nested(900), "b", 2]]}, "deep"),
        ({**d, "n": 2.0}, "'n'"),
        ({**d, "n": True, "cells": [["a", "b", 1]]}, "'n'"),
        ({**d, "cells": [["a", "b", 2**56], ["a", "c", 2**56]], "n": 2**57}, "2\\*\\*57"),
        ({**d, "cells": [[{"float": "nope"}, "b", 2]]}, "cells\\[0\\]"),
        ({**d, "skipped": 10**300}, "skipped"),
    ]
    for state, match in bad:
        with pytest.raises(InvalidStateError, match=match):
            se.Contingency.from_dict(state)


def test_13_10_crafted_window_and_summaries_states_raise_invalid_state_error():
    w = se.CountWindow(3, [se.ELM()])
    w.update(0, "a")
    d = {**w.to_dict(), "version": 1}  # version 1 (labels in the items) is still read
    bad = [
        [1], 5, None,
        {**d, "metrics": 5}, {**d, "metrics": None}, {**d, "metrics": [5]},
        {**d, "metrics": [["ELM", "ELM", 5]]},
        {**d, "items": [[0, "a", 10**300]]}, {**d, "items": [[0, "a", 1.0]]},
        {**d, "items": [[0, "a", True]]}, {**d, "items": [[_nested(900), "a", 1]]},
        {**d, "size": 1.0}, {**d, "size": True}, {**d, "items": 5},
    ]
    for state in bad:
        with pytest.raises(InvalidStateError):
            se.CountWindow.from_dict(state)
    s = se.ClusterSummaries()
    s.update([1.0], "a")
    d = s.to_dict()
    for state in (
        {**d, "n": 10**300, "clusters": [["a", 10**300, [1.0], 0.0]]},
        {**d, "clusters": [[_nested(900), 1, [1.0], 0.0]]},
        {**d, "n": True},
        {**d, "clusters": [[{"float": 1}, 1, [1.0], 0.0]]},
    ):
        with pytest.raises(InvalidStateError):
            se.ClusterSummaries.from_dict(state)


# ------------------------------------------------------------------------------------ item 12
def _river_stream():
    points = [(0.0, "a"), (0.3, "a"), (2.0, "b"), (2.4, "b"), (5.0, "c")] * 4
    return [({"x": v}, y) for v, y in points]


def test_13_12_progressive_evaluate_with_a_monitor():
    from river import cluster

    from streameval.river import progressive_evaluate

    mon = se.Monitor([se.ELM(), se.AdjustedRand()], window=6, block=5, detector=False)
    ev = se.Evaluator([se.ELM(), se.AdjustedRand()])
    got = list(progressive_evaluate(_river_stream(), cluster.KMeans(n_clusters=2, seed=3), mon, step=5))
    want = list(progressive_evaluate(_river_stream(), cluster.KMeans(n_clusters=2, seed=3), ev, step=5))
    assert [n for n, _ in got] == [5, 10, 15, 20]
    for (_, report), (_, values) in zip(got, want):
        assert report["all_time"] == values
    assert mon.report()["n"] == mon.n


def test_13_12_evaluator_in_river_progressive_val_score():
    from river import cluster, evaluate

    from streameval.river import union

    ev = se.Evaluator([se.ELM(), se.AdjustedRand()])
    out = evaluate.progressive_val_score(_river_stream(), cluster.KMeans(n_clusters=2, seed=3), ev)
    u = evaluate.progressive_val_score(
        _river_stream(), cluster.KMeans(n_clusters=2, seed=3), union(se.ELM(), se.AdjustedRand())
    )
    assert out is ev and list(ev.get().values()) == u.get()
    assert ev.clone().table.n == 0 and list(ev.clone().metrics) == list(ev.metrics)


def test_13_12_river_metric_plus_streameval_metric_in_both_orders():
    from river import metrics

    pairs = [(0, "a"), (0, "a"), (1, "b"), (1, "a"), (2, "b")]
    ts, ps = [t for t, _ in pairs], [p for _, p in pairs]
    for combined in (metrics.AdjustedRand() + se.ELM(), se.ELM() + metrics.AdjustedRand()):
        for t, p in pairs:
            combined.update(t, p)
        values = dict(zip((type(m).__name__ for m in combined), combined.get()))
        assert close(values["ELM"], twin.elm_score(ts, ps))
        assert close(values["AdjustedRand"], twin.adjusted_rand_score(ts, ps))
    many = metrics.Accuracy() + se.Purity() + se.ELM()
    assert len(many) == 3


# ------------------------------------------------------------------------------------ item 13
@pytest.mark.parametrize(
    "blocked, code, extra",
    [
        ("sortedcontainers", "streameval.EventTimeWindow(5)", "window"),
        ("sortedcontainers", "streameval.Monitor(detector=False)", "window"),
        ("river", "streameval.Monitor(detector='adwin')", "river"),
        ("river", "streameval.ELM() + streameval.Purity()", "river"),
        ("scipy", "streameval.batch.ceaf_score([0, 1], [1, 0])", "sklearn"),
        ("scipy", "streameval.batch.adjusted_mutual_info_score([0, 1], [1, 0])", "sklearn"),
        ("scipy", "e = streameval.Evaluator([streameval.CEAF()]); e.update(0, 1); e.get()", "sklearn"),
    ],
)
def test_13_13_missing_optional_dependency_names_the_extra(blocked, code, extra):
    script = (
        f"import sys\nsys.modules[{blocked!r}] = None\n"
        "import streameval\n"
        "try:\n"
        f"    {code}\n"
        "except streameval.MissingDependencyError as e:\n"
        "    assert isinstance(e, ImportError)\n"
        "    print(e)\n"
        "else:\n"
        "    print('no error')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert f'pip install "streameval[{extra}]"' in out.stdout, out.stdout
    assert blocked in out.stdout


# ------------------------------------------------------------------------------------ item 16
def test_13_16_to_dict_is_canonical_whichever_equal_label_came_first():
    dumps = set()
    for first in (1, 1.0, True, np.int64(1), np.float64(1.0)):
        table = se.Contingency()
        table.update(first, "p")
        table.update(1, "p")
        table.update(True, 2.0)
        table.update(("t", first), np.bool_(False))
        dumps.add(json.dumps(table.to_dict()))
        w = se.CountWindow(2, [se.ELM()])
        w.update(first, 1.0)
        dumps.add(json.dumps(w.to_dict()))
        s = se.ClusterSummaries()
        s.update([0.0], first)
        dumps.add(json.dumps(s.to_dict()))
    assert len(dumps) == 3


def test_13_16_non_finite_labels_are_standard_json_and_read_back():
    table = se.Contingency()
    for t, p in [(math.inf, "a"), (-math.inf, "a"), (("x", math.inf), 0.5), (1e300, 2)]:
        table.update(t, p)
    text = json.dumps(table.to_dict(), allow_nan=False)  # raised: Infinity is not JSON
    assert "Infinity" not in text and '{"float": "inf"}' in text
    back = se.Contingency.from_dict(json.loads(text))
    assert back == table
    assert back[math.inf, "a"] == 1 and back[("x", math.inf), 0.5] == 1
    w = se.CountWindow(3, [se.ELM()])
    w.update(math.inf, -math.inf)
    w2 = se.CountWindow.from_dict(json.loads(json.dumps(w.to_dict(), allow_nan=False)))
    assert list(w2) == [(math.inf, -math.inf, 1)]
    s = se.ClusterSummaries()
    s.update([1.0], -math.inf)
    s2 = se.ClusterSummaries.from_dict(json.loads(json.dumps(s.to_dict(), allow_nan=False)))
    assert s2.cluster(-math.inf)[0] == 1
    with pytest.raises(InvalidLabelError, match="cannot be saved"):
        table.update(b"bytes", 0)
        table.to_dict()


def test_13_7_summaries_guard_and_pickling_keep_working():
    import pickle

    s = se.ClusterSummaries()
    s.update([1.0, 2.0], "a")
    s._guard.acquire()  # as if another thread were inside an update
    try:
        with pytest.raises(se.errors.ConcurrentUseError, match="ClusterSummaries.update"):
            s.update([0.0, 0.0], "b")
    finally:
        s._guard.release()
    assert s.n == 1 and s.k == 1
    for obj in (s, se.CountWindow(3, [se.ELM()]), se.EventTimeWindow(3, [se.ELM()])):
        copy = pickle.loads(pickle.dumps(obj))
        assert copy._guard.acquire(False)  # a fresh, free guard
        copy._guard.release()
