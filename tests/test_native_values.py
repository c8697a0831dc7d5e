"""The native reading (src/values.rs) against the Python formulas, bit for bit.

Every registered O(1) metric has its formula twice: ``Metric.value(stats)`` in Python (the
definition, shared with the engines) and the native formula's ``read(table)`` (the formula looked
up by the name the metric declares), which ``get()`` and ``Evaluator.get()`` use. These tests drive random tables, from the empty one to totals at the
table's bound (weights far beyond ``2**53``), through every formula with default and other
parameters, and compare the floats' bits (so ``0.0`` against ``-0.0``, or two NaNs, would be told
apart); a Python formula that raises must leave the native one silent (``None``), so the Python
path gives the same error.
"""

from __future__ import annotations

import math
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval as se
from streameval.contingency import NATIVE, NATIVE_FORMULAS, Formula
from streameval.metrics import REGISTRY
from streameval.metrics.quantities import NativeValue
from streameval.reference import ReferenceContingency
from streameval.stats import MAX_TOTAL

pytestmark = pytest.mark.skipif(not NATIVE, reason="the native extension is not built")


def bits(x):
    return struct.pack("<d", x) if isinstance(x, float) else x


def has_formula(cls) -> bool:
    """A class that declares its own native formula (its subclasses do not inherit it)."""
    return issubclass(cls, NativeValue) and "_formula" in vars(cls)


def variants() -> list:
    """Every metric with a native formula, default parameters and others."""
    ms = [cls() for cls in REGISTRY.values() if has_formula(cls)]
    for am in ("geometric", "min", "max"):
        ms.append(se.NormalizedMutualInfo(average_method=am))
    ms += [
        se.VBeta(beta=0.5), se.VBeta(beta=3.0), se.VBeta(beta=1e-300),
        se.ELM(beta=2.0), se.BCubed(beta=0.5), se.ELM(beta=0.3),
        se.ELM(f_convention="f_of_averages"), se.BCubed(f_convention="f_of_averages", beta=3.0),
        se.ELM(f_convention="f_of_averages", beta=1e-3), se.BCubed(f_convention="f_of_averages"),
    ]
    return ms


def test_every_registered_o1_metric_has_a_native_formula():
    native = {cls.__name__ for cls in REGISTRY.values() if has_formula(cls)}
    o1 = {name for name, cls in REGISTRY.items() if not getattr(cls, "on_demand", False)}
    assert native == o1
    for m in variants():
        assert m.native_formula is not None, m.name


def test_python_and_rust_name_the_same_formulas():
    """The registry is keyed by name: every formula a Python metric names (over its parameters)
    is in the native table, and every native formula is named by a Python metric."""
    named = {m.native_formula.name for m in variants()}
    assert named == NATIVE_FORMULAS, (named ^ NATIVE_FORMULAS)
    assert all(Formula(name).name == name for name in NATIVE_FORMULAS)


def test_a_formula_the_registry_lacks_is_an_error():
    class _Renamed(se.Rand):  # (a leading underscore: not registered)
        _formula = "NoSuchFormula"

    with pytest.raises(KeyError, match="no native formula named .NoSuchFormula."):
        Formula("NoSuchFormula")
    with pytest.raises(KeyError, match="NoSuchFormula"):
        _ = _Renamed().native_formula


def python_value(m, table):
    """The Python formula's value, or the exception's type when it raises."""
    try:
        return m.value(table)
    except Exception as e:  # the native reading must then decline
        return type(e)


def check_table(table) -> None:
    """Native == Python for every variant on ``table``; Evaluator.get() and get() too."""
    ms = variants()
    ev = se.Evaluator({f"{i}:{m.name}": m for i, m in enumerate(ms)}, table=table)
    want = {}
    for name, m in ev.metrics.items():
        ref = python_value(m, table)
        got = m.native_formula.read(table)
        if isinstance(ref, type):
            assert got is None, (name, ref)
            continue
        assert got is not None, name
        assert bits(got) == bits(ref), (name, got, ref)
        assert bits(m.get()) == bits(ref), name
        want[name] = ref
    if len(want) == len(ev.metrics):
        got = ev.get()
        assert list(got) == list(want)
        assert [bits(v) for v in got.values()] == [bits(v) for v in want.values()]
        stats = table.stats()  # what the engines pass: the same formula, the same bits
        for name, m in ev.metrics.items():
            assert bits(m.value(stats)) == bits(want[name]), name


BIG = MAX_TOTAL - 1

weights = st.one_of(
    st.integers(1, 3),
    st.integers(1, 2**20),
    st.integers(2**53 - 2, 2**53 + 2),
    st.integers(2**53, BIG),
)


@st.composite
def tables(draw):
    """A native table from a random stream of weighted elements, its total below the bound."""
    k_true = draw(st.integers(1, 6))
    k_pred = draw(st.integers(1, 6))
    elements = draw(st.lists(
        st.tuples(st.integers(0, k_true - 1), st.integers(0, k_pred - 1), weights), max_size=25))
    table = se.Contingency()
    left = BIG
    for t, p, w in elements:
        if left < 1:
            break
        w = min(w, left)
        table.update(t, p, w)
        left -= w
    return table


@settings(max_examples=300, deadline=None)
@given(tables())
def test_native_values_equal_the_python_formulas_bit_for_bit(table):
    check_table(table)


def fill(cells) -> se.Contingency:
    table = se.Contingency()
    for t, p, w in cells:
        table.update(t, p, w)
    return table


@pytest.mark.parametrize("name, cells", [
    ("empty", []),
    ("one element", [(0, 0, 1)]),
    ("one heavy element", [(0, 0, BIG)]),
    ("two elements apart", [(0, 0, 1), (1, 1, 1)]),
    ("all singletons", [(i, i, 1) for i in range(50)]),
    ("predicted singletons, one true cluster", [(0, i, 1) for i in range(50)]),
    ("true singletons, one predicted cluster", [(i, 0, 1) for i in range(50)]),
    ("one giant cluster", [(0, 0, 2**56), (0, 0, 2**55)]),
    ("giant against singletons", [(0, 0, 2**56)] + [(0, i, 1) for i in range(1, 30)]),
    ("heavy and light", [(0, 0, 2**56 - 7), (1, 1, 3), (0, 1, 2**53 + 1), (2, 0, 1)]),
    ("at the bound", [(0, 0, 2**55), (1, 1, 2**55), (0, 1, 2**55), (1, 0, 2**55 - 1)]),
    ("wide and heavy", [(i % 7, i % 5, 2**50 + i) for i in range(60)]),
])
def test_edge_tables(name, cells):
    check_table(fill(cells))


@pytest.mark.parametrize("seed", range(4))
def test_streams_with_reverts_and_relabels(seed):
    rng = random.Random(seed)
    table = se.Contingency()
    done = []
    for step in range(400):
        if done and rng.random() < 0.2:
            table.revert(*done.pop(rng.randrange(len(done))))
        else:
            e = (rng.randrange(12), rng.randrange(9), rng.choice([1, 1, 2, 7, 2**40]))
            table.update(*e)
            done.append(e)
        if step % 97 == 0:
            check_table(table.copy())
    table.relabel_pred(0, 1)
    check_table(table)


def test_the_reference_table_reads_through_the_python_formulas():
    stream = [(i % 5, (i * 7) % 4, 1 + i % 3) for i in range(60)]
    native, ref = se.Contingency(), ReferenceContingency()
    a = se.Evaluator({m.name: m for m in variants()}, table=native)
    b = se.Evaluator({m.name: m for m in variants()}, table=ref)
    for t, p, w in stream:
        a.update(t, p, w)
        b.update(t, p, w)
    ga, gb = a.get(), b.get()
    assert [bits(v) for v in ga.values()] == [bits(v) for v in gb.values()]
    assert [bits(m.get()) for m in b.metrics.values()] == [bits(v) for v in gb.values()]


def test_the_native_reading_is_used(monkeypatch):
    """With the extension, get() and Evaluator.get() never run the Python formulas."""
    ev = se.Evaluator()
    single = se.AdjustedRand()
    for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (2, 1)]:
        ev.update(t, p)
        single.update(t, p)
    want = ev.get()
    want_single = single.get()
    ev.update(3, 3)
    ev.revert(3, 3)  # a new version: the next reading is computed, not the kept one

    def boom(self, s):
        raise AssertionError(f"{self.name}: the Python formula ran")

    for cls in {type(m) for m in ev.metrics.values()}:
        monkeypatch.setattr(cls, "value", boom)
    assert ev.get() == want
    assert single.get() == want_single
    assert all(m.get() == want[name] for name, m in ev.metrics.items())


def test_subclasses_and_on_demand_metrics_keep_the_python_path():
    class _Doubled(se.AdjustedRand):  # a leading underscore keeps it out of the registry
        def value(self, s):
            return 2 * super().value(s)

    m, plain = _Doubled(), se.AdjustedRand()
    ev = se.Evaluator({"doubled": m, "plain": plain, "ami": se.AdjustedMutualInfo()})
    for t, p in [(0, 0), (0, 0), (0, 1), (1, 1), (2, 1), (2, 2)]:
        ev.update(t, p)
    assert m.native_formula is None and ev["ami"].native_formula is None
    got = ev.get()
    assert got["doubled"] == m.get() == 2 * plain.get() == 2 * got["plain"]
    assert got["ami"] == se.AdjustedMutualInfo().value(ev.table)


def test_a_python_error_stays_the_same_error():
    """A formula whose Python twin raises is declined natively, so the error is Python's."""
    t = se.Contingency()
    t.update(0, 0)
    elm = se.ELM(beta=2.0)  # its F sum is tracked by its own table, not by ``t``
    assert Formula("ELM:element_averaged", 2.0).read(t) is None
    with pytest.raises(KeyError):
        elm.value(t)


@settings(max_examples=500, deadline=None)
@given(st.integers(-(2**127) + 1, 2**127 - 1), st.integers(-(2**127) + 1, 2**127 - 1))
def test_integer_division_is_pythons(a, b):
    from streameval._native import _true_divide

    if b == 0:
        assert _true_divide(a, b) is None
    else:
        assert bits(_true_divide(a, b)) == bits(a / b)


def test_integer_division_rounds_ties_to_even():
    from streameval._native import _true_divide

    cases = []
    for k in (0, 1, 5, 60):
        for m in (2**53 + 1, 2**53 + 3, 2**54 - 1):  # odd 54-bit numbers: exactly halfway
            cases += [(m << k, 1 << k), (m << 70, 1 << (70 - k)), (-(m << k), 3 << k)]
    cases += [(2**127 - 1, 3), (1, 2**127 - 1), (2**126 + 1, 2**126 - 1), (0, -7)]
    for a, b in cases:
        assert bits(_true_divide(a, b)) == bits(a / b), (a, b)
    assert math.copysign(1.0, _true_divide(0, -7)) == -1.0


def crossings(read) -> list:
    """The calls made while ``read()`` runs: ``(event, name)`` for every Python function entered
    and every built-in (native) function called, from ``sys.setprofile``."""
    import sys

    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(("python", frame.f_code.co_name))
        elif event == "c_call":
            seen.append(("native", getattr(arg, "__qualname__", repr(arg))))

    sys.setprofile(profile)
    try:
        read()
    finally:
        sys.setprofile(None)
    return seen[:-1]  # (the last: setprofile itself)


def test_an_evaluator_reading_crosses_into_rust_once_and_never_back():
    ev = se.Evaluator(variants())  # every native formula (subclasses other tests define are left out)
    ev.update_many([0, 0, 1, 1, 2], [0, 1, 1, 1, 2])
    ev.update(3, 3)  # a new version: the reading is computed, not the kept one
    # the reading is the plan's native callable itself: no Python frame, one native call
    assert type(ev.get).__name__ == "Reading" and type(ev.get).__module__ == "streameval._native"
    seen = crossings(ev.get)
    assert seen == [], seen
    assert ev.get() == {name: m.value(ev.table) for name, m in ev.metrics.items()}
    # with an on-demand metric: the same one native call, then Python reads that metric alone
    mixed = se.Evaluator([se.AdjustedRand(), se.AdjustedMutualInfo()])
    mixed.update_many([0, 0, 1, 1, 2], [0, 1, 1, 1, 2])
    seen = crossings(mixed.get)
    assert [c for c in seen if c[0] == "native"][0] == ("native", "ValuePlan.read")
    assert sum(c == ("native", "ValuePlan.read") for c in seen) == 1
    assert mixed.get()["AdjustedMutualInfo"] == se.AdjustedMutualInfo().value(mixed.table)


def test_a_declined_formula_falls_back_to_every_python_formula():
    """A plan whose formula leaves its value to Python raises ``FormulaDeclined`` (nothing is
    called back); the evaluator's reading then runs the Python formulas, which give Python's
    own value or error."""
    from streameval.contingency import FormulaDeclined, ValuePlan
    from streameval.evaluator import _native_get

    t = se.Contingency()
    t.update(0, 0)
    plan = ValuePlan(["elm", "ari"], [Formula("ELM:element_averaged", 2.0), Formula("AdjustedRand")])
    with pytest.raises(FormulaDeclined):
        plan.read(t)  # the table does not track ELM's F sum at beta 2
    metrics = {"elm": se.ELM(beta=2.0), "ari": se.AdjustedRand()}
    with pytest.raises(KeyError):  # Python's error, as elm.value(t) gives it
        _native_get(plan, t, metrics, [])()
    t.track_f("elm", 2.0)
    assert _native_get(plan, t, metrics, [])() == {"elm": 1.0, "ari": 1.0}


@pytest.mark.parametrize("rows, c", [(3, 60), (10, 25)])
def test_dense_rows_read_after_every_update_equal_the_reference(rows, c):
    """The default Evaluator over rows of ``c`` cells (listed rows, small or listed columns: the
    density sweep's shape), updates alternating between the dense rows and sparse clusters,
    with reverts, read after every one: the native reading (its settled F sums and fixed-point
    means) equals the reference table's Python reading bit for bit."""
    rng = random.Random(rows * 1000 + c)
    native, ref = se.Contingency(), ReferenceContingency()
    a, b = se.Evaluator(table=native), se.Evaluator(table=ref)
    kp = max(rows, c)
    cells = [(r, r % kp, 4 * c) for r in range(rows)]
    cells += [(r, q, rng.choice([1, 2])) for r in range(rows)
              for q in rng.sample([q for q in range(kp) if q != r % kp], c - 1)]
    a.update_many(*map(list, zip(*cells)))
    for t, p, w in cells:
        b.update(t, p, w)
    done = []
    for i in range(240):
        if done and rng.random() < 0.25:
            e = done.pop(rng.randrange(len(done)))
            a.revert(*e)
            b.revert(*e)
        else:
            r = rng.randrange(rows)
            e = ((r, r % kp if rng.random() < 0.75 else rng.randrange(kp), 1) if i % 2 == 0
                 else (10**6 + rng.randrange(4), 10**6 + rng.randrange(4), rng.choice([1, 2])))
            a.update(*e)
            b.update(*e)
            done.append(e)
        ga, gb = a.get(), b.get()
        assert list(ga) == list(gb)
        assert [bits(v) for v in ga.values()] == [bits(v) for v in gb.values()], i


def test_readings_kept_by_the_caller_keep_their_values():
    """A reading is a new plain dict each time, whatever the caller keeps: the plan refills the
    floats of its own dict in place only while no one else holds them (a reading dropped at
    once), so a dict kept, a value taken from one, or a dict the caller changed never sees a
    later reading, and each reading equals the reference table's bit for bit, with every mix of
    kept and dropped readings."""
    rng = random.Random(7)
    native, ref = se.Contingency(), ReferenceContingency()
    a, b = se.Evaluator(table=native), se.Evaluator(table=ref)
    kept, values = [], []
    for i in range(120):
        t, p = rng.randrange(6), rng.randrange(5)
        a.update(t, p)
        b.update(t, p)
        got, want = a.get(), b.get()
        assert type(got) is dict and list(got) == list(want)
        assert [bits(v) for v in got.values()] == [bits(v) for v in want.values()], i
        if i % 3 == 0:
            kept.append((got, {k: bits(v) for k, v in got.items()}))
        elif i % 3 == 1:
            values.append((got["ELM"], bits(got["ELM"])))
            got["ELM"] = "changed by the caller"
        if i % 5 == 0:
            assert a.get() is not a.get() and a.get() == a.get()  # same version: equal copies
        del got
    for d, want in kept:
        assert {k: bits(v) for k, v in d.items()} == want
    for v, want in values:
        assert bits(v) == want
    assert a.get()["ELM"] != "changed by the caller"
