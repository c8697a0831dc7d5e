"""One reading, shared quantities: every value through an Evaluator's Quantities is bit-identical.

An :class:`~streameval.Evaluator` reads all its metrics over one
:class:`~streameval.metrics.quantities.Quantities` of the table (pair counts, entropies computed
once per table version). These tests check, over the whole registry and parameter variants, that
the same float comes out (``==`` on the bits, not approximately) whichever way the stats arrive: the
table itself, ``table.stats()`` (what the engines pass), a ``Quantities`` over either, and
``Evaluator.get()``; and that the Evaluator's cached reading follows every change of the table.
"""

from __future__ import annotations

import math
import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import streams

import streameval as se
from streameval.metrics import REGISTRY
from streameval.metrics.information import entropies
from streameval.metrics.pairs import pair_counts
from streameval.metrics.quantities import Quantities, quantities, shared


def bits(x: float):
    """The exact bit pattern of a float (so 0.0 and -0.0, or two NaNs, compare as bits)."""
    return struct.pack("<d", x)


def variants() -> list:
    """Every registered metric with default parameters, plus the parameterised variants."""
    ms = [cls() for cls in REGISTRY.values()]
    for am in ("geometric", "min", "max"):
        ms += [se.NormalizedMutualInfo(average_method=am), se.AdjustedMutualInfo(average_method=am)]
    ms += [
        se.VBeta(beta=0.5), se.VBeta(beta=2.0), se.ELM(beta=2.0), se.BCubed(beta=0.5),
        se.ELM(f_convention="f_of_averages"), se.BCubed(f_convention="f_of_averages", beta=3.0),
        se.CEAF(variant="mention"),
    ]
    return ms


def evaluator() -> se.Evaluator:
    return se.Evaluator({f"{i}:{m.name}": m for i, m in enumerate(variants())})


def assert_same_values(ev: se.Evaluator) -> None:
    table = ev.table
    stats = table.stats()
    got = ev.get()
    assert list(got) == list(ev.metrics)
    for name, m in ev.metrics.items():
        ref = m.value(table)
        assert bits(got[name]) == bits(ref), name
        assert bits(m.get()) == bits(ref), name
        assert bits(m.value(Quantities(table))) == bits(ref), name
        if not m.on_demand:  # on-demand metrics read the cells
            assert bits(m.value(stats)) == bits(ref), name
            assert bits(m.value(Quantities(stats))) == bits(ref), name


@given(streams(max_size=40), st.integers(0, 3))
def test_shared_reading_is_bit_identical(stream, reverts):
    ev = evaluator()
    assert_same_values(ev)  # the empty table
    for t, p, w in stream:
        ev.update(t, p, w)
    assert_same_values(ev)
    for t, p, w in stream[:reverts]:
        ev.revert(t, p, w)
        assert_same_values(ev)


@pytest.mark.parametrize("seed", range(6))
def test_shared_reading_is_bit_identical_on_larger_random_tables(seed):
    rng = random.Random(seed)
    k = rng.choice([2, 10, 100])
    ev = evaluator()
    for _ in range(rng.choice([50, 500, 3000])):
        t = rng.randrange(k)
        ev.update(t, t if rng.random() < 0.7 else rng.randrange(k), rng.choice([1, 1, 2, 5]))
        if rng.random() < 0.02:
            assert_same_values(ev)
    assert_same_values(ev)


def test_cached_reading_follows_every_change():
    ev = se.Evaluator([se.AdjustedRand(), se.MutualInfo(), se.ELM()])
    for t, p in [(0, 0), (0, 0), (1, 1), (1, 0)]:
        ev.update(t, p)
    first = ev.get()
    assert ev.get() == first  # unchanged table: the same reading
    first["AdjustedRand"] = 2.0  # the caller's dict: the kept reading is not touched
    kept = ev.get()
    assert kept != first and kept["AdjustedRand"] == se.AdjustedRand().value(ev.table.stats())
    ev.update(2, 2)
    second = ev.get()
    again = ev.get()
    assert again == second and again is not second and second != kept  # a fresh dict per call
    ref = {name: m.value(ev.table.stats()) for name, m in ev.metrics.items()}
    assert second == ref
    for change in (lambda: ev.revert(2, 2), lambda: ev.relabel_pred(1, 0),
                   lambda: ev.update_many([5, 5, 6], [7, 7, 7]),
                   lambda: ev.table.merge(se.Contingency())):
        change()
        assert ev.get() == {name: m.value(ev.table.stats()) for name, m in ev.metrics.items()}


def test_native_reading_is_rebound_and_pickles():
    """After its first reading an evaluator's ``get`` is one call to the native table; a new
    table, a new metric, a subclass's own ``get`` and pickling all keep the readings right."""
    import pickle

    ev = se.Evaluator([se.AdjustedRand(), se.ELM()])
    ev.update_many([0, 0, 1, 1, 2], [0, 1, 1, 1, 2])
    want = {name: m.value(ev.table.stats()) for name, m in ev.metrics.items()}
    assert ev.get() == want and ev.get() == want
    copy = pickle.loads(pickle.dumps(ev))
    copy.update(3, 3)
    ev.update(3, 3)
    assert copy.get() == ev.get() != want
    ev.add("Rand", se.Rand())  # a new metric
    assert ev.get() == {**copy.get(), "Rand": se.Rand().value(ev.table.stats())}
    pairs = se.Evaluator([se.AdjustedRand(), se.Rand()])
    pairs.get()
    other = se.Contingency()
    other.update(0, 0)
    pairs.table = other  # the reading follows a new table
    assert pairs.get() == {"AdjustedRand": 1.0, "Rand": 1.0}

    class Rounded(se.Evaluator):
        def get(self):
            return {k: round(v, 2) for k, v in super().get().items()}

    r = Rounded([se.AdjustedRand()])
    r.update_many([0, 0, 1], [0, 1, 1])
    assert r.get() == r.get() == {"AdjustedRand": round(se.AdjustedRand().value(r.table.stats()), 2)}


def test_a_dropped_evaluator_is_freed_without_the_cycle_collector():
    """Its bound reading holds the plan, and the plan's fallback holds the evaluator only
    weakly: dropping the last reference frees it (and its table) at once."""
    import gc
    import weakref

    ev = se.Evaluator(["ARI", "ELM"])
    ev.update(0, 0)
    ev.get()
    ref = weakref.ref(ev)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del ev
        assert ref() is None
    finally:
        if enabled:
            gc.enable()


def test_adding_a_metric_after_a_reading_tracks_its_sums():
    ev = se.Evaluator([se.Rand()])
    ev.update(0, 0)
    ev.update(0, 1)
    ev.get()
    ev.add("ELM", se.ELM())  # starts a new F sum without changing the table's version
    assert ev.get()["ELM"] == se.ELM().value(ev.table) == 0.0


def test_shared_quantities_are_computed_once_per_state():
    t = se.Contingency()
    for a, b in [(0, 0), (0, 1), (1, 1), (2, 2)]:
        t.update(a, b)
    q = Quantities(t)
    assert "pair_counts" not in vars(q) and "entropies" not in vars(q)
    tp, pp, tt, total = pair_counts(q)
    assert (tp, pp, tt, total) == pair_counts(t) == (0, 1, 1, 6)
    assert vars(q)["pair_counts"] is pair_counts(q)  # held, not recomputed
    assert entropies(q) == entropies(t)
    ht, hp, mi = entropies(t)
    assert mi == pytest.approx(math.log(2)) and ht == hp == pytest.approx(1.5 * math.log(2))
    # any statistic reads through; a Quantities of a Quantities shares the stats
    assert (q.n, q.k_true, q.k_pred, q.cells) == (4, 3, 3, 4)
    assert quantities(q) is q and Quantities(q).source is t
    with pytest.raises(AttributeError):
        _ = q.no_such_statistic


def test_declaring_a_shared_quantity_twice_is_an_error():
    def clash(s):
        return 0

    clash.__name__ = "pair_counts"
    with pytest.raises(ValueError, match="already declared"):
        shared(clash)
    assert pair_counts(Quantities(se.Contingency())) == (0, 0, 0, 0)


def test_quantities_do_not_delegate_protocol_names():
    q = Quantities(se.Contingency())
    assert not hasattr(q, "__deepcopy__")
    assert "Quantities(Contingency, version=0" in repr(q)
