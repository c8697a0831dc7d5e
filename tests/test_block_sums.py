"""The native block sums (``streameval._native.block_sums``, ``src/block_sums.rs``) against their
numpy reference (:func:`streameval.detect.block_stats` with ``native=False``): the same sums of
every block's table, to the bit, on random blocks and on the edge cases (single-element blocks,
all singletons, one cell, blocks of more than 128 rows, where cells go through a hash map instead
of a grid, codes far apart); and the means drop detection reads (:func:`~streameval.detect.block_means`)
equal to ``fixed_mean`` of the reference sums. The positions ``watch`` records
(:class:`streameval.blocks.Positions`, found natively when asked) against every row's position
found in numpy (:func:`streameval.blocks.row_positions`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.blocks import Positions, row_positions
from streameval.detect import _FAST_STATS, block_means, block_stats
from streameval.metrics.base import fixed_mean

native = pytest.importorskip("streameval._native")
if not hasattr(native, "block_sums"):  # pragma: no cover - an extension built from older sources
    pytest.skip("the extension has no block_sums", allow_module_level=True)

SUBSETS = [("n",), ("both_singletons",), ("sum_cell_sq", "sum_col_max"), ("sum_row_sq",),
           ("elm_r_sum", "true_singletons")]
SPECS = [("elm", 1.0), ("bcubed", 1.0), ("elm", 2.0), ("bcubed", 0.5), ("elm", 0.5)]


def both(t, p, w, block, specs=SPECS, names=_FAST_STATS):
    """The columns of the native kernel and of the numpy reference."""
    got = block_stats(t, p, w, block, specs, names, columns=True, native=True)
    want = block_stats(t, p, w, block, specs, names, columns=True, native=False)
    return got, want


def check(t, p, w, block):
    t, p = np.asarray(t, np.int64), np.asarray(p, np.int64)
    w = None if w is None else np.asarray(w, np.int64)
    got, want = both(t, p, w, block)
    assert want is not None
    assert got == want
    for spec in SPECS:  # what drop detection reads: the mean F per block, divided as Python does
        means = [fixed_mean(f, n) for f, n in zip(want[1][spec], want[0]["n"])]
        assert block_means(t, p, w, block, spec, native=True) == means
        assert block_means(t, p, w, block, spec, native=False) == means
    # a few of the sums alone: the kernel skips the passes they do not need (the F sums alone,
    # the cells' pass alone, the rows' and columns' pass alone)
    for names in SUBSETS:
        assert both(t, p, w, block, SPECS[:2], names)[0] == both(t, p, w, block, SPECS[:2], names)[1]
    # the objects per block (columns=False) as well
    objs = block_stats(t, p, w, block, SPECS, native=True)
    assert [s.f_sums for s in objs] == [dict(zip(want[1], col)) for col in zip(*want[1].values())]


codes = st.one_of(st.integers(0, 3), st.integers(0, 12), st.integers(0, 10**6))


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(codes, codes, st.integers(1, 5)), min_size=1, max_size=300),
       block=st.one_of(st.integers(1, 12), st.integers(100, 150), st.sampled_from([129, 300])),
       weighted=st.booleans())
def test_native_block_sums_are_the_reference_sums(rows, block, weighted):
    rows = rows[: len(rows) // block * block]
    if not rows:
        return
    t, p, w = zip(*rows)
    check(t, p, w if weighted else None, block)


@pytest.mark.parametrize("block", [1, 2, 100, 129, 200])
def test_edge_cases(block):
    n = 2 * block * (200 // block + 1)
    r = np.arange(n)
    check(r, r, None, block)  # every row alone in its cell, row and column: all singletons
    check(r, r[::-1].copy(), r % 3 + 1, block)
    check(np.zeros(n), np.zeros(n), None, block)  # one cell
    check(r % 7, np.zeros(n), None, block)  # one column
    check(np.zeros(n), r % 7 * 100_003, r % 2 + 1, block)  # one row, columns far apart
    rng = np.random.default_rng(block)
    check(rng.integers(0, 10, n), rng.integers(0, 10, n), rng.integers(1, 3, n), block)
    check(r + (1 << 22), r % 5, None, block)  # codes past the kernel's tables: numpy's sums


def test_a_large_stream_in_one_call():
    """The call watch makes: 10,000 rows in blocks of 100, 1,000 true clusters."""
    rng = np.random.default_rng(5)
    t = rng.integers(0, 1_000, 10_000)
    p = np.where(rng.random(10_000) < 0.75, t, rng.integers(0, 1_200, 10_000))
    check(t, p, None, 100)


def test_the_kernel_refuses_what_it_cannot_sum_exactly():
    """Bad input gets an error naming the problem (block_stats checks these first)."""
    t = np.zeros(4, np.int64)
    for args, why in [((t, t, None, 3, [], []), "whole blocks"),
                      ((t - 1, t, None, 2, [], []), "codes >= 0"),
                      ((t + (1 << 22), t, None, 2, [], []), "2\\*\\*22"),
                      ((t, t, np.zeros(4, np.int64), 2, [], []), "weights >= 1"),
                      ((t, t, np.array([1, 1 << 28, 1, 1]), 2, [], []), "2\\*\\*28"),
                      ((t, t, None, 2, [], [(True, 4, 5)]), "num \\+ den"),
                      ((t, t, None, 2, ["x"], []), "no sum"),
                      ((t.astype(np.int32), t, None, 2, [], []), "int64")]:
        with pytest.raises(ValueError, match=why):
            native.block_sums(*args)


# ------------------------------------------------------------------------------ positions
line = st.one_of(st.sampled_from(["a,x", "bb,y", "c,zz", "1,2"]),
                 st.sampled_from(["", "\r"]))  # blank lines: no row
ending = st.sampled_from(["\n", "\n", "\r\n"])


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(st.tuples(line, ending), max_size=30), last=st.sampled_from(["", "d,w"]),
       start=st.tuples(st.integers(0, 50), st.integers(0, 500)), data=st.data())
def test_positions_found_when_asked_are_every_rows(lines, last, start, data):
    chunk = ("".join(a + b for a, b in lines) + last).encode()
    want = list(zip(*(a.tolist() for a in row_positions(chunk, *start))))
    if not want:
        return
    # asked in order, as watch asks, and then in any order (a question behind the last one
    # scans from the last row found before it, or answers from a row found already)
    asked = sorted(data.draw(st.lists(st.integers(0, len(want) - 1), max_size=8)))
    asked += data.draw(st.lists(st.integers(0, len(want) - 1), max_size=4))
    pos = Positions(chunk, *start)
    assert [pos.at(j) for j in asked] == [want[j] for j in asked]
    with pytest.raises(IndexError):
        Positions(chunk, *start).at(len(want))
    assert [tuple(a.tolist()) for a in pos.arrays()] == [tuple(x) for x in zip(*want)]
    if len(want) == len(lines) + bool(last):  # no blank line: the newlines answer directly
        ends = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
        pos = Positions(chunk, *start, ends=ends)
        assert [pos.at(j) for j in asked] == [want[j] for j in asked]
        assert [tuple(a.tolist()) for a in pos.arrays()] == [tuple(x) for x in zip(*want)]
        with pytest.raises(IndexError):
            Positions(chunk, *start, ends=ends).at(len(want))
