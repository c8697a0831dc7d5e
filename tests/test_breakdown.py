"""What broke (streameval.breakdown.ErrorAccount): splits, merges and the top-k lists equal a
brute-force recomputation from the table's cells at every prefix of random update, revert and merge
sequences, and over a Monitor's window."""

import math
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from streameval import ELM, Contingency, Monitor
from streameval.breakdown import ErrorAccount


def brute(table):
    """Every count from the cells, with plain loops."""
    cells = list(table.items())
    rows, cols = Counter(), Counter()
    row_n: dict = {}
    col_n: dict = {}
    for t, p, c in cells:
        rows[t] += 1
        cols[p] += 1
        row_n.setdefault(t, []).append(c)
        col_n.setdefault(p, []).append(c)
    entropy = {t: -sum(c / sum(ns) * math.log(c / sum(ns)) for c in ns) for t, ns in row_n.items()}
    extra = {p: sum(c * (sum(ns) - c) for c in ns) / sum(ns) for p, ns in col_n.items()}
    return {
        "splits": len(cells) - len(row_n), "merges": len(cells) - len(col_n),
        "rows": {t: (k, sum(row_n[t]), entropy[t]) for t, k in rows.items()},
        "cols": {p: (k, sum(col_n[p]), extra[p]) for p, k in cols.items()},
    }


def check(acc, table, k=4):
    want = brute(table)
    assert (acc.splits, acc.merges) == (want["splits"], want["merges"])
    # each listed entity: its counts, its entropy (a sum of ~cells terms each within 2**-52
    # relative, against the fixed-point sum: 1e-9 absolute is far above both roundings)
    split = [r for r in want["rows"].values() if r[0] >= 2]
    top = acc.split_entities(k)
    assert [(c, a) for _, c, a, _ in top] == sorted(((c, a) for c, a, _ in split),
                                                    reverse=True)[:k]
    for t, c, a, h in top:
        assert (c, a) == want["rows"][t][:2]
        assert h == pytest.approx(want["rows"][t][2], abs=1e-9)
    merging = [r for r in want["cols"].values() if r[0] >= 2]
    top = acc.merging_clusters(k)
    # the order ties on exact fixed-point extras; compare the sorted keys within rounding
    got_keys = [(c, x) for _, c, _, x in top]
    want_keys = sorted(((c, x) for c, _, x in merging), reverse=True)[:k]
    assert [c for c, _ in got_keys] == [c for c, _ in want_keys]
    for (_, x), (_, y) in zip(got_keys, want_keys):
        assert x == pytest.approx(y, abs=1e-9)
    for p, c, b, x in top:
        assert (c, b) == want["cols"][p][:2]
        assert x == pytest.approx(want["cols"][p][2], abs=1e-9)


ops = st.lists(st.tuples(st.sampled_from(["update", "update", "update", "revert", "merge"]),
                         st.integers(0, 6), st.sampled_from([0, 1, 2, "x", "y"]),
                         st.integers(1, 3)), max_size=60)


@settings(max_examples=80, deadline=None)
@given(ops=ops)
def test_account_equals_brute_force_at_every_prefix_under_revert_and_merge(ops):
    table = Contingency()
    acc = ErrorAccount(table)
    for op, t, p, w in ops:
        if op == "update":
            table.update(t, p, w)
            acc.refresh(t, p, w)
        elif op == "revert":
            w = min(w, table[t, p])
            if not w:
                continue
            table.revert(t, p, w)
            acc.refresh(t, p, -w)
        else:
            other = Contingency()
            other.update(t, p, w)
            other.update(t + 1, p, 1)
            acc.merge(other)
        check(acc, table)
    rebuilt = ErrorAccount(table.copy())  # counted from scratch: the same lists
    assert acc.report(10) == rebuilt.report(10)


@settings(max_examples=30, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=50),
       size=st.integers(1, 12))
def test_a_monitors_account_is_over_its_window(rows, size):
    mon = Monitor([ELM()], window=size, detector=False, top=3)
    for t, p in rows:
        mon.update(t, p)
        check(mon.account, mon.window.evaluator.table, k=3)
    bulk = Monitor([ELM()], window=size, detector=False, top=3)
    bulk.update_many([t for t, _ in rows], [p for _, p in rows])
    assert bulk.report() == mon.report()  # update_many: the state of one update per element
    assert list(bulk.window) == list(mon.window)


def test_update_then_revert_restores_the_account_bit_for_bit():
    table = Contingency()
    acc = ErrorAccount(table)
    for t, p in [(1, "a"), (1, "b"), (2, "b"), (3, "c")]:
        table.update(t, p)
        acc.refresh(t, p, 1)
    before = (dict(acc._row_xlogx), acc.report(5))
    table.update(1, "c", 3)
    acc.refresh(1, "c", 3)
    table.revert(1, "c", 3)
    acc.refresh(1, "c", -3)
    assert (dict(acc._row_xlogx), acc.report(5)) == before


def _ranked(acc) -> tuple:
    """Both lists in order, each entry as its label and its key without the tie-breaking id."""
    return ([(acc._row_label[k[-1]], k[:2]) for k in acc._rows],
            [(acc._col_label[k[-1]], k[:2]) for k in acc._cols])


@settings(max_examples=60, deadline=None)
@given(start=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=80),
       batch=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(-2, 3)),
                      max_size=40))
# columns 1 and 2 tied (two entities each): counted from scratch, 1 came first; refreshed, 2 (it
# was in the table before the batch): listed by first ranking, the rebuilt account differed
@example(start=[(0, 0), (1, 2)], batch=[(0, 1, 1), (0, 2, 1), (1, 1, 1)])
def test_refresh_many_is_refresh_one_by_one(start, batch):
    """A batch of cell changes refreshed at once (each cluster ranked once, the lists rebuilt
    when many are touched) leaves the account as refreshing each cell in turn."""
    table = Contingency()
    table.update_many([t for t, _ in start], [p for _, p in start])
    one, many = ErrorAccount(table), ErrorAccount(table)
    changes: dict = {}
    for t, p, w in batch:
        w = max(w, -table[t, p])  # a revert takes at most the cell's count
        if w > 0:
            table.update(t, p, w)
        elif w < 0:
            table.revert(t, p, -w)
        changes[t, p] = changes.get((t, p), 0) + w
    for (t, p), w in changes.items():
        one.refresh(t, p, w)
    many.refresh_many((t, p, w) for (t, p), w in changes.items())
    assert _ranked(many) == _ranked(one)
    assert (many._row_xlogx, many._row_cells, many._col_cells) == (
        one._row_xlogx, one._row_cells, one._col_cells)
    assert many.report(10) == one.report(10) == ErrorAccount(table.copy()).report(10)
    check(many, table)
