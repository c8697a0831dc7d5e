"""Drop detection read a block at a time: :func:`streameval.detect.block_stats` gives each block
table's sums exactly (the native table's own, to the bit), and :class:`BlockDrops` fed whole
chunks of codes flags the same drops at the same rows, from the same block values, as row by row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval import Contingency, Evaluator
from streameval.detect import BlockDrops, Cusum, block_stats
from streameval.metrics import resolve
from streameval.stats import STAT_NAMES

EXACT = [s for s in STAT_NAMES if "xlogx" not in s]
SPECS = [("elm", 1.0), ("bcubed", 1.0), ("elm", 2.0), ("bcubed", 0.5)]


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(1, 4)),
                     min_size=1, max_size=120),
       block=st.integers(1, 30), weighted=st.booleans())
def test_block_stats_are_the_tables_sums(rows, block, weighted):
    rows = rows[: len(rows) // block * block]
    if not rows:
        return
    t, p, w = (np.array(c, np.int64) for c in zip(*rows))
    got = block_stats(t, p, w if weighted else None, block, SPECS)
    assert got is not None and len(got) == len(rows) // block
    cols, f_cols = block_stats(t, p, w if weighted else None, block, SPECS, columns=True)
    assert all(cols[name] == [getattr(s, name) for s in got] for name in EXACT)
    assert all(f_cols[spec] == [s.f_sums[spec] for s in got] for spec in f_cols)
    for k, st_ in enumerate(got):
        table = Contingency()
        for kind, beta in SPECS:
            table.track_f(kind, beta)
        cut = slice(k * block, (k + 1) * block)
        table.update_many(t[cut], p[cut], w[cut] if weighted else None)
        for name in EXACT:
            assert getattr(st_, name) == getattr(table, name), name
        assert st_.f_sums == table.f_sums


def test_block_stats_leave_large_weights_to_the_tables():
    t = np.zeros(4, np.int64)
    assert block_stats(t, t, np.array([1, 1 << 28, 1, 1]), 2) is None
    assert block_stats(t, t, None, 2, [("elm", 0.3)]) is None  # beta² not a small ratio
    assert block_stats(t, t, None, 3) is None  # not a whole number of blocks


def _drops(name, rows, block, chunks, codes):
    """A BlockDrops of ``name`` fed ``rows`` in the given chunks (as int codes or as labels)."""
    (cls,) = resolve(name)
    d = BlockDrops(cls(), block, Cusum(reference=3, h=0.8))
    t, p, w = (list(c) for c in zip(*rows))
    if codes:
        t, p, w = (np.array(c, np.int64) for c in (t, p, w))
    bounds = sorted({0, len(rows), *[c for c in chunks if c < len(rows)]})
    for a, b in zip(bounds, bounds[1:]):
        d.update_many(t[a:b], p[a:b], w[a:b])
    return d


@settings(max_examples=50, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 3)),
                     min_size=1, max_size=200),
       block=st.integers(1, 25), chunks=st.lists(st.integers(0, 200), max_size=6),
       name=st.sampled_from(["ELM", "BCubed", "AdjustedRand", "PairF1", "FowlkesMallows",
                             "Purity", "MUC", "BLANC", "VI"]))
def test_block_processing_flags_the_drops_of_row_by_row(rows, block, chunks, name):
    """Whole chunks of codes (block_stats) against labels one row at a time (a table per block):
    the same block values to the bit, the same drops at the same rows."""
    fast = _drops(name, rows, block, chunks, codes=True)
    (cls,) = resolve(name)
    slow = BlockDrops(cls(), block, Cusum(reference=3, h=0.8))
    for t, p, w in rows:
        slow.update(str(t), f"c{p}", w)
    assert list(fast.values) == list(slow.values)
    assert fast.drops == slow.drops and fast.n == slow.n == len(rows)
    # and each value is the metric over a table of the block's rows
    for k, v in enumerate(fast.values):
        ev = Evaluator([cls()])
        for row in rows[k * block:(k + 1) * block]:
            ev.update(*row)
        want = ev.get()[cls.__name__]
        assert want == v or (v != v and want != want)


@pytest.mark.parametrize("name", ["ELM", "AdjustedRand"])
def test_a_drop_is_flagged_at_the_same_row_in_a_large_stream(name):
    """A stream whose clusterer collapses halfway: the drop flagged at the same element count,
    chunks of 10,000 codes against one element at a time."""
    rng = np.random.default_rng(7)
    n = 20_000
    t = rng.integers(0, 50, n)
    p = np.where(np.arange(n) < n // 2, t, rng.integers(0, 50, n))
    (cls,) = resolve(name)
    fast = BlockDrops(cls(), 100, Cusum(reference=20, run_length=10**6))
    for k in range(0, n, 10_000):
        fast.update_many(t[k:k + 10_000], p[k:k + 10_000])
    slow = BlockDrops(cls(), 100, Cusum(reference=20, run_length=10**6))
    for a, b in zip(t.tolist(), p.tolist()):
        slow.update(a, b)
    assert fast.drops == slow.drops and fast.drops and fast.drops[0] > n // 2
    assert list(fast.values) == list(slow.values)


def test_labels_outside_the_codes_go_through_the_tables():
    """Negative, unsigned past int64 and huge labels: the same values as a table per block."""
    (cls,) = resolve("ELM")
    for t in (np.array([-1, 5, -1, 7]), np.array([2**64 - 1, 3, 2**64 - 1, 3], np.uint64),
              np.array([10**15, 1, 10**15, 2])):
        p = np.array([0, 0, 1, 1])
        fast = BlockDrops(cls(), 2, Cusum(reference=2, h=0.5))
        fast.update_many(t, p)
        slow = BlockDrops(cls(), 2, Cusum(reference=2, h=0.5))
        for a, b in zip(t.tolist(), p.tolist()):
            slow.update(a, b)
        assert list(fast.values) == list(slow.values) and fast.n == 4


def test_labels_outside_the_codes_are_checked_once_per_call(monkeypatch):
    """A long array the bulk path refuses (negative labels) is checked once, not once per block
    (each check scans the rest of the array: once per block made a call quadratic), and its
    blocks go through the tables with the same values as one element at a time."""
    calls = []
    check = BlockDrops._block_values

    def counted(self, t, p, w):
        calls.append(len(t))
        return check(self, t, p, w)

    monkeypatch.setattr(BlockDrops, "_block_values", counted)
    rng = np.random.default_rng(3)
    t = rng.integers(-20, 20, 2_003)
    p = rng.integers(-5, 5, 2_003)
    (cls,) = resolve("ELM")
    fast = BlockDrops(cls(), 10, Cusum(reference=20, h=5.0))
    fast.update_many(t[:7], p[:7])  # an unfinished block first: no whole block, no check
    fast.update_many(t[7:], p[7:])
    assert calls == [1_990]  # after the first block is completed: the rest's whole blocks, once
    slow = BlockDrops(cls(), 10, Cusum(reference=20, h=5.0))
    for a, b in zip(t.tolist(), p.tolist()):
        slow.update(a, b)
    assert list(fast.values) == list(slow.values) and fast.n == slow.n == 2_003


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.one_of(st.floats(0, 1), st.just(float("nan")), st.sampled_from([0.0, 1.0])),
                       max_size=120),
       reference=st.integers(2, 6), h=st.sampled_from([None, 0.3, 2.0]),
       bigger=st.booleans(), cuts=st.lists(st.integers(0, 120), max_size=4))
def test_cusum_update_many_is_update_one_by_one(values, reference, h, bigger, cuts):
    """Cusum.update_many (watch's blocks, in one loop) flags the same values and leaves the same
    state, bit for bit, as update called value by value, across recalibrations after flags."""
    from streameval.detect import Cusum

    one, many = (Cusum(reference=reference, h=h) for _ in range(2))
    for det in (one, many):
        det.bind(block=10, bigger_is_better=bigger)
    expected = [k for k, v in enumerate(values) if one.update(v)]
    got, start = [], 0
    for cut in sorted({c for c in cuts if c < len(values)} | {len(values)}):
        got += [start + k for k in many.update_many(values[start:cut])]
        start = cut
    assert got == expected
    assert repr((many.s, many.mu, many.sigma, many.h, many._ref)) == \
        repr((one.s, one.mu, one.sigma, one.h, one._ref))


def test_cusum_update_many_refuses_an_infinite_value_as_update_does():
    det = Cusum(reference=2, h=1.0)
    det.bind(block=10, bigger_is_better=True)
    with pytest.raises(ValueError, match="finite number"):
        det.update_many([0.5, 0.6, 0.5, float("inf")])
