"""Failures found by trying to break streameval as an adversarial user would (round two).

Each test is named after the item of the report it covers and fails without its fix: every
refusal leaves the state exactly as it was, no value is silently wrong, no Rust panic crosses
the binding, and concurrent use is refused with :class:`~streameval.errors.ConcurrentUseError`.
"""

from __future__ import annotations

import threading
import time
from fractions import Fraction

import numpy as np
import pytest
from strategies import FailingLabel

import streameval as se
from streameval.contingency import NATIVE
from streameval.errors import (
    ConcurrentUseError,
    InvalidStateError,
    InvalidWeightError,
    UnknownElementError,
)
from streameval.reference import ReferenceContingency

TABLES = [se.Contingency, ReferenceContingency]
needs_native = pytest.mark.skipif(not NATIVE, reason="the native extension is not built")


def snapshot(table):
    """The whole observable state: the cells (labels by repr: they may not be JSON), every sum
    and F sum, the skipped count, the tracked F-scores."""
    cells = sorted((repr(t), repr(p), c) for t, p, c in table.items())
    return cells, table.stats(), table.skipped, table.tracked_f()


@pytest.mark.parametrize("cls", TABLES)
def test_item01_bulk_weights_never_wrap_in_int64(cls):
    t = cls()
    t.update("a", "b")
    before = snapshot(t)
    for n, w in ((129, 2**57 - 1), (256, 2**56)):
        with pytest.raises(InvalidWeightError, match="2\\*\\*57"):
            t.update_many(["a"] * n, ["b"] * n, w=np.full(n, w))
        assert snapshot(t) == before
    # below the bound the same path is exact
    t.update_many(["x", "x"], ["y", "y"], w=np.array([2**55, 2**55]))
    assert t["x", "y"] == 2**56


@pytest.mark.parametrize("cls", TABLES)
def test_item04_one_weight_rule_exact_integer_or_refusal(cls):
    t = cls()
    t.update("a", "b", w=Fraction(2**54 + 2, 2))
    t.update("a", "c", w=np.longdouble(2**53 + 1))
    t.update("a", "d", w=Fraction(2**53 + 1))
    assert (t["a", "b"], t["a", "c"], t["a", "d"]) == (2**53 + 1, 2**53 + 1, 2**53 + 1)
    before = snapshot(t)
    for w in (Fraction(2**54 + 1, 2), Fraction(3, 2), np.longdouble(2.5), True):
        with pytest.raises(InvalidWeightError):
            t.update("a", "b", w=w)
        with pytest.raises(InvalidWeightError):
            t.update_many(["a"], ["b"], w=np.array([w], dtype=object))
    assert snapshot(t) == before
    # the bulk path follows the same rule in both tables: Fraction(4, 2) is the integer 2
    t.update_many(["a", "a"], ["e", "e"], w=[Fraction(4, 2), np.longdouble(2**53 + 1)])
    assert t["a", "e"] == 2**53 + 3


def test_item05_bootstrap_evaluator_refuses_concurrent_use():
    b = se.BootstrapEvaluator(["ELM"], n_replicas=20)
    gate, refused = threading.Event(), []

    class Slow:  # a label whose hash lets another thread in during the update
        def __hash__(self):
            gate.set()
            worker.join()
            return 7

        def __eq__(self, other):
            return other is self

    def other_thread():
        gate.wait()
        try:
            b.update(1, 2, unit="u2")
        except ConcurrentUseError:
            refused.append(True)

    worker = threading.Thread(target=other_thread)
    worker.start()
    b.update(Slow(), 1, unit="u1")
    assert refused == [True]
    assert b.n == 1
    b.update(1, 2, unit="u2")  # the guard was released: the refused update can be made now
    assert b.n == 2 and b.get()["ELM"][0] == b.evaluator.get()["ELM"]


@needs_native
def test_item05_skip_counts_and_cells_change_together_and_borrows_are_concurrent_use():
    t = se.Contingency(missing="skip")
    t.update_many(["a", None, "b"], [1, 2, None], w=[1, 2, 3])
    assert (t.n, t.skipped) == (1, 5)
    seen = []

    class Reader:
        def __hash__(self):
            for read in (lambda: t.n, lambda: t.update(1, 1), lambda: t.skipped):
                try:
                    read()
                except ConcurrentUseError as e:
                    seen.append(str(e))
            return 3

        def __eq__(self, other):
            return other is self

    t.update(Reader(), "z")
    assert seen and len(seen) % 3 == 0 and all("Synchronized" in m for m in seen)
    assert t.n == 2


@pytest.mark.parametrize("cls", TABLES)
def test_item07_skipped_count_is_bounded(cls):
    t = cls(missing="skip")
    t.update(None, 1, w=2**57 - 1)
    before = snapshot(t)
    with pytest.raises(InvalidWeightError, match="skipped"):
        t.update(None, 1, w=1)
    with pytest.raises(InvalidWeightError, match="skipped"):
        t.update_many([None, "a"], [1, "b"])
    assert snapshot(t) == before
    assert cls.from_dict(t.to_dict()).skipped == 2**57 - 1
    other = cls(missing="skip")
    other.update(None, 2)
    with pytest.raises(InvalidWeightError):
        t.merge(other)
    assert snapshot(t) == before


@pytest.mark.parametrize("cls", TABLES)
def test_item08_failed_merge_and_failing_eq_change_nothing(cls):
    a = cls(missing="skip")
    a.update("x", "y", w=2**56)
    b = cls(missing="skip")
    b.track_f("elm")
    b.update("x", "y", w=2**56)
    b.update(None, "y")
    before = snapshot(a)
    with pytest.raises(InvalidWeightError):
        a.merge(b)
    assert snapshot(a) == before and a.tracked_f() == []
    # a label whose == raises midway through update_many and merge
    t = cls(missing="skip")
    t.update(7, "p")
    before = snapshot(t)
    with pytest.raises(RuntimeError):
        t.update_many(["new1", "new2", FailingLabel(7, RuntimeError)], ["q", "r", "s"])
    t._check()
    assert snapshot(t) == before
    other = cls(missing="skip")
    other.track_f("bcubed")
    other.update_many(["new3", "new4", FailingLabel(7, RuntimeError)], ["q", "r", "s"])
    other.update(None, 1)
    with pytest.raises(RuntimeError):
        t.merge(other)
    t._check()
    assert snapshot(t) == before and t.tracked_f() == []


@needs_native
def test_item10_no_panic_crosses_the_binding():
    ev = se.Evaluator(["ELM", "ARI"])
    errors = []

    class Reentrant:  # a hash that reads the evaluator during its update
        def __hash__(self):
            try:
                ev.get()
            except ConcurrentUseError as e:
                errors.append(e)
            return 11

        def __eq__(self, other):
            return other is self

    ev.update(Reentrant(), 1)
    assert errors and ev.table.n == 1  # (the hash runs twice: the check, then the lookup)

    class Third:  # a hash failing on its third call, during revert
        calls = 0

        def __hash__(self):
            Third.calls += 1
            if Third.calls == 3:
                raise RuntimeError("hash failed")
            return 5

        def __eq__(self, other):
            return other is self

    t = se.Contingency()
    label = Third()
    t.update(label, 1)
    t.update("b", 1)
    before = snapshot(t)
    with pytest.raises(RuntimeError, match="hash failed"):
        t.revert(label, 1)
    assert snapshot(t) == before
    t._check()
    t.revert(label, 1)  # the fourth call succeeds, and so does the revert
    assert t.n == 1


@needs_native
def test_item10_threads_reading_during_an_update_get_an_error_not_a_panic():
    ev = se.Evaluator(["ELM", "purity"])
    gate, outcomes = threading.Event(), []

    class Slow:
        def __hash__(self):
            gate.set()
            worker.join()
            return 13

        def __eq__(self, other):
            return other is self

    def reader():
        gate.wait()
        for read in (ev.get, lambda: ev.table.stats(), lambda: ev.table.f_sums):
            try:
                read()
                outcomes.append("value")
            except ConcurrentUseError:
                outcomes.append("refused")

    worker = threading.Thread(target=reader)
    worker.start()
    ev.update(Slow(), 1)
    assert outcomes == ["refused"] * 3
    assert set(ev.get().values()) == {1.0}


@pytest.mark.parametrize("cls", TABLES)
def test_item13_pyarrow_arrays_with_and_without_nulls(cls):
    pa = pytest.importorskip("pyarrow")
    t = cls(missing="skip")
    t.update_many(pa.array(["a", "b", "a"]), pa.array(["x", "y", "x"]))
    t.update_many(pa.array([1, None, 3]), pa.array([1, 2, None]), w=pa.array([1, 2, 3]))
    t.update_many(pa.chunked_array([[5, 5], [6]]), pa.chunked_array([[0], [0, 1]]))
    assert sorted(t.items(), key=repr) == sorted(
        [("a", "x", 2), ("b", "y", 1), (1, 1, 1), (5, 0, 2), (6, 1, 1)], key=repr)
    assert t.skipped == 5


@pytest.mark.parametrize("cls", TABLES)
def test_item14_revert_with_a_failing_hash_names_the_failure(cls):
    class Flaky:
        calls = 0

        def __hash__(self):
            Flaky.calls += 1
            if Flaky.calls >= 2:
                raise RuntimeError("hash failed")
            return 1

    t = cls()
    t.update("a", "b")
    with pytest.raises(RuntimeError, match="hash failed"):
        t.revert(Flaky(), "b")
    with pytest.raises(UnknownElementError, match="holds 0 such elements"):
        t.revert("c", "b")
    assert t.n == 1


@pytest.mark.parametrize("cls", TABLES)
def test_item14_from_dict_errors_are_all_invalid_state(cls):
    good = cls()
    good.update("a", "b", w=2)
    base = good.to_dict()
    bad = [
        {**base, "track_f": [["elm", 10**400]]},
        {**base, "track_f": [["elm", "x"]]},
        {**base, "track_f": [["nope", 1.0]]},
        {**base, "track_f": [["elm"]]},
        {**base, "track_f": "elm"},
        {**base, "cells": [["a", "b", 10**400]]},
        {**base, "skipped": 10**400},
        {**base, "missing": ["skip"]},
    ]
    for state in bad:
        with pytest.raises(InvalidStateError):
            cls.from_dict(state)


@pytest.mark.parametrize("cls", TABLES)
def test_item03_tuple_labels_holding_nan_survive_a_save(cls):
    import json

    a, b = (float("nan"), 1), (float("nan"), 1)  # two distinct labels (different NaN objects)
    t = cls()
    t.update(a, "x")
    t.update(b, "x")
    t.update(a, "y", w=2)
    d = json.loads(json.dumps(t.to_dict(), allow_nan=False))
    back = cls.from_dict(d)
    back._check()
    assert (back.k_true, back.cells, back.n) == (2, 3, 4)
    assert back.stats() == t.stats() and back.to_dict() == t.to_dict()
    w = se.CountWindow(5, [se.ELM(), se.Purity()])
    for y_true, y_pred in ((a, "x"), (b, "x"), (a, "y")):
        w.update(y_true, y_pred)
    w2 = se.CountWindow.from_dict(json.loads(json.dumps(w.to_dict())))
    assert w2.get() == w.get() and w2.evaluator.table.k_true == 2


@pytest.mark.parametrize("cls", TABLES)
def test_item16_saved_states_write_each_label_once(cls):
    import json

    big = "L" * 100_000
    t = cls()
    for k in range(10):
        t.update(big, k, w=k + 1)
        t.update(k, big)
    text = json.dumps(t.to_dict())
    assert text.count(big) == 2 and len(text) < 2 * len(big) + 2_000  # once per side
    d = json.loads(text)
    assert d["version"] == 2 and d["cells"] == sorted(d["cells"])
    assert cls.from_dict(d) == t
    w = se.CountWindow(20, [se.ELM()])
    for k in range(10):
        w.update(big, k)
    assert json.dumps(w.to_dict()).count(big) == 1
    # version 1 (labels in every cell) still loads; a crafted index is refused
    v1 = {**{k: v for k, v in d.items() if k != "labels"}, "version": 1,
          "cells": [[tt, pp, c] for tt, pp, c in t.items()]}
    assert cls.from_dict(json.loads(json.dumps(v1))) == t
    for bad in ({**d, "labels": {"true": [big, big], "pred": d["labels"]["pred"]}},
                {**d, "cells": d["cells"] + [[0, 99, 1]]},
                {**d, "labels": {**d["labels"], "pred": d["labels"]["pred"] + ["unused"]}},
                {**d, "cells": [[True, 0, 1]]}):
        with pytest.raises(InvalidStateError):
            cls.from_dict(bad)


@needs_native
def test_item06_ctrl_c_during_a_native_bulk_count_rolls_back(tmp_path):
    """SIGALRM (raising KeyboardInterrupt, as Ctrl-C does) arrives 1 ms into an update_many of
    2·10⁶ integer labels: the native count checks for signals before anything changes, so the
    call raises with the table as it was (never applied, then raised).

    The timer is armed inside ``pytest.raises``, so the interrupt is caught wherever it lands. On
    a loaded machine this process can be off the CPU for over 1 ms between arming the timer and
    calling update_many: the interrupt then lands in this function before the call (the handler's
    frame is this one), the table is checked to be as it was, and the attempt is made again until
    the interrupt lands inside the call."""
    import inspect
    import signal

    if not hasattr(signal, "setitimer"):
        pytest.skip("no interval timers on this platform")
    n = 2_000_000
    t_lab, p_lab = np.arange(n, dtype=np.int64) % 1000, np.arange(n, dtype=np.int64) % 7
    table = se.Contingency()
    table.update(1, 1)
    before = snapshot(table)
    here, landed = inspect.currentframe(), []

    def interrupt(signum, frame):
        landed.append(frame)  # the Python frame running when the handler was called
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        for _ in range(100):
            landed.clear()
            with pytest.raises(KeyboardInterrupt):
                signal.setitimer(signal.ITIMER_REAL, 0.001)
                table.update_many(t_lab, p_lab)
                time.sleep(5)  # (only if the whole call took under 1 ms: the signal lands here)
            assert snapshot(table) == before
            if landed[0] is not here:  # inside update_many (its native count, or its Python)
                break
        else:
            pytest.fail("in 100 attempts the interrupt never landed inside update_many")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        landed.clear()  # (no frames kept alive)
    table._check()
    table.update_many(t_lab[:10], p_lab[:10])  # the table works on
    assert table.n == 11
