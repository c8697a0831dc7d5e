"""streameval.flink.LiveHistograms, the Python side of the continuous query, without Flink.

The histogram rows of a table are computed here from its cells (the batch plan, in Python); the
changelog between two states (``-U``/``-D`` of rows that went away or changed, then ``+I``/``+U``)
is what an updating Flink query emits. Applying it must give the table's exact stats after each
update or revert, and a half-applied change must not pass as consistent.
"""

from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streameval as se
from streameval.flink import LiveHistograms
from streameval.sql import from_rows


def histogram_rows(table: se.Contingency) -> dict:
    """``{(part, x, y, z): (cnt, mx)}`` of the query over ``table``'s elements."""
    cells = list(table.items())
    rows, cols = defaultdict(list), defaultdict(list)
    for t, p, n in cells:
        rows[t].append(n)
        cols[p].append(n)
    out: dict = defaultdict(lambda: [0, 0])
    for _, _, n in cells:
        out["cell", n, 0, 0][0] += 1
    size = {}
    for part, side in (("row", rows), ("col", cols)):
        for label, ns in side.items():
            size[part, label] = sum(ns)
            v = out[part, sum(ns), sum(x * x for x in ns), 0]
            v[0] += 1
            v[1] += max(ns)
    for t, p, n in cells:
        out["fab", n, size["row", t], size["col", p]][0] += 1
    out["missing", 0, 0, 0][0] += 0
    out["badweight", 0, 0, 0][0] += 0
    return {k: tuple(v) for k, v in out.items()}


def changelog(old: dict, new: dict):
    """The retract-mode changelog from ``old`` to ``new`` rows (cells first, then the others)."""
    out = []
    for key, val in old.items():
        if new.get(key) != val:
            out.append(("-U" if key in new else "-D", key + val))
    for key, val in new.items():
        if old.get(key) != val:
            out.append(("+U" if key in old else "+I", key + val))
    return out


ops = st.lists(
    st.tuples(st.booleans(), st.integers(0, 5), st.sampled_from("abcdef"), st.integers(1, 3)),
    min_size=1, max_size=60,
)


@given(ops)
def test_changelog_of_updates_and_reverts_gives_the_tables_stats(steps):
    table, live, state = se.Contingency(), LiveHistograms(), {}
    table.track_f("elm")
    table.track_f("bcubed")
    added = []
    for revert, t, p, w in steps:
        if revert and added:
            table.revert(*added.pop(t % len(added)))
        else:
            table.update(t, p, w)
            added.append((t, p, w))
        new = histogram_rows(table)
        for kind, row in changelog(state, new):
            live.apply(kind, row)
        state = new
        assert live.consistent()
        assert live.n == table.stats().n
        if live.n:
            assert from_rows(live.rows(), ami=False).stats == table.stats()


def test_half_applied_change_is_not_consistent():
    table = se.Contingency()
    table.track_f("elm")
    table.track_f("bcubed")
    table.update_many(["x", "x", "y"], ["A", "A", "B"])
    live = LiveHistograms()
    old = histogram_rows(table)
    for kind, row in changelog({}, old):
        live.apply(kind, row)
    table.update("y", "A")
    log = changelog(old, histogram_rows(table))
    seen_inconsistent = False
    for kind, row in log[:-1]:
        live.apply(kind, row)
        seen_inconsistent |= not live.consistent()
    assert seen_inconsistent and not live.consistent()
    live.apply(*log[-1])
    assert live.consistent() and from_rows(live.rows(), ami=False).stats == table.stats()


def test_bad_changelog_rows_raise_and_change_nothing():
    live = LiveHistograms()
    live.apply("+I", ("cell", 1, 0, 0, 2, 0))
    before = (live.rows(), live.changes, live.n)
    with pytest.raises(ValueError, match="retracts"):
        live.apply("-U", ("cell", 1, 0, 0, 3, 0))
    with pytest.raises(ValueError, match="retracts"):
        live.apply("-D", ("cell", 2, 0, 0, 1, 0))
    with pytest.raises(ValueError, match="row kind"):
        live.apply("?", ("cell", 1, 0, 0, 2, 0))
    assert (live.rows(), live.changes, live.n) == before
    live.apply("-D", ("cell ", 1, 0, 0, 2, 0))  # padded CHAR literal, as Flink may send it
    assert live.rows() == [] and live.consistent()
