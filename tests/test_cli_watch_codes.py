"""``watch``'s all-time table keyed by the label codes (as ``score``'s is): the same values as the
table of the labels and as ``score``, what broke (``--top``) named by the labels, and a
checkpoint written and read as the table of the labels writes it (a checkpoint of the text-keyed
table loads, and a resume continues to the values of one uninterrupted run)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_cli import needs_script, run
from test_cli_watch import rows_text, sample

from streameval import Evaluator
from streameval.breakdown import ErrorAccount
from streameval.cli.watch_state import WatchState
from streameval.metrics import resolve

CLASSES = resolve("ELM BCubed ARI NMI VI Purity")
INPUT = {"path": "rows.csv", "format": "csv", "true": "t", "pred": "p", "weight": "w",
         "header": True}
# labels of several types; 1, 1.0 and True are one label (Python's equality), as in the table
LABELS = st.sampled_from([0, 1, 2, 1.0, True, "a", "b", "long label", -3])
ROWS = st.lists(st.tuples(LABELS, st.sampled_from(["x", "y", 5, 7.5, "z"]), st.integers(1, 3)),
                max_size=60)


def labelled(rows) -> Evaluator:
    """The text-keyed path: an Evaluator of the labels, updated row by row."""
    ev = Evaluator([c() for c in CLASSES])
    for row in rows:
        ev.update(*row)
    return ev


def state_of(rows, window=0) -> WatchState:
    state = WatchState(CLASSES, window)
    state.take_rows(rows)
    state.flush()
    return state


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, top=st.integers(0, 4))
def test_the_coded_table_reads_the_values_and_names_of_the_labels(rows, top):
    """Without a window, what broke is read on the all-time table, keyed by codes: the same
    values, and the same entities and clusters, named by their labels, as an ErrorAccount over
    the table of the labels refreshed row by row (ties listed by label in both)."""
    state = WatchState(CLASSES, 0, top=top)
    ev = labelled(rows)
    account = ErrorAccount(ev.table.__class__())
    for t, p, w in rows:
        account.table.update(t, p, w)
        account.refresh(t, p, w)
    for k in range(0, len(rows) + 1, 7):  # catch-ups every 7 rows: new labels come mid-stream
        state.take_rows(rows[k:k + 7])
        state.values()
    values = state.values()
    assert values["all"] == ev.get()
    assert values["broke"] == account.report(top)
    assert all(isinstance(c, int) for c, _, _ in state.all.table.items() if rows)


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, cut=st.integers(0, 60), window=st.sampled_from([0, 1, 5]))
# two clusters tied in what broke (two entities each, as large): the resumed account is built
# from the checkpoint's table, whose cells come in another order than the rows did; listed in
# the order they were first ranked, the resume listed y before x (found by another seed)
@example(rows=[(0, "x", 1), (0, "y", 1), (1, "x", 1), ("a", "y", 1)], cut=4, window=0)
def test_a_checkpoint_is_the_table_of_the_labels_and_resumes_exactly(rows, cut, window):
    """The checkpoint's table is, dict for dict, what the table of the labels writes (so a
    checkpoint of the text-keyed table loads); a resume from it codes the labels anew, takes the
    rest of the rows (new labels among them) and ends where one run over all of them ends."""
    first = state_of(rows[:cut], window)
    first.rows = len(rows[:cut])
    body = first.to_body(INPUT, None)
    assert body["table"] == labelled(rows[:cut]).table.to_dict()
    resumed = WatchState(CLASSES, window)
    resumed.load_body(json.loads(json.dumps(body)), INPUT, "ck.json")
    resumed.take_rows(rows[cut:])
    whole = state_of(rows, window)
    whole.rows = resumed.rows = len(rows)
    assert resumed.values() == whole.values()
    assert resumed.to_body(INPUT, None) == whole.to_body(INPUT, None)
    assert whole.to_body(INPUT, None)["table"] == labelled(rows).table.to_dict()


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, cuts=st.lists(st.integers(0, 60), max_size=6),
       window=st.sampled_from([0, 1, 5]))
@example(rows=[("A", "x", 1), ("B", "y", 1), ("A", "z", 1), ("C", "y", 1), ("C", "z", 1)],
         cuts=[1, 2, 3, 4], window=0)
def test_what_broke_does_not_depend_on_how_the_rows_were_batched(rows, cuts, window):
    """The rows taken in one catch-up or in several (as a followed file's reader hands them over,
    which depends on timing): the same lists, ties included (listed by label). Listed in the
    order they were first ranked, the example's tied clusters came as z, y in one catch-up and
    y, z row by row."""
    whole = state_of(rows, window)
    pieces = WatchState(CLASSES, window)
    bounds = [0, *sorted(cuts), len(rows)]
    for a, b in zip(bounds, bounds[1:]):
        pieces.take_rows(rows[a:b])
        pieces.values()
    assert pieces.values()["broke"] == whole.values()["broke"]


def test_a_checkpoint_of_the_labelled_table_loads():
    """A body written by the text-keyed table (the table of the labels' own ``to_dict``, as every
    checkpoint before the coded table held) loads, and reads that table's values."""
    rows = [("a", "x", 2), ("b", "x", 1), (3, "y", 1), ("a", "y", 1)]
    ev = labelled(rows)
    body = {"input": INPUT, "position": {"offset": 40, "line": 5, "header": ["t", "p", "w"],
                                         "fingerprint": None},
            "rows": 4, "skipped": 0, "table": ev.table.to_dict(), "window": None}
    state = WatchState(CLASSES, 0)
    state.load_body(body, INPUT, "ck.json")
    assert state.values()["all"] == ev.get()
    assert sorted(state.codes[0].labels, key=str) == [3, "a", "b"]
    assert state.to_body(INPUT, None)["table"] == body["table"]


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
@needs_script
def test_watch_reads_the_values_of_score_and_names_labels(tmp_path):
    """On one file of string labels with weights, ``watch``'s final all-time values are
    ``score``'s, and its JSON lines name the labels (not codes) in what broke."""
    rows = sample(n=300, seed=3)
    path = tmp_path / "rows.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows))
    cols = ["--true", "truth", "--pred", "guess", "--weight", "mult"]
    score = run("score", path, *cols, "--format", "json")
    watch = run("watch", path, *cols, "--window", 0, "--format", "json", "--interval", 0)
    assert score.returncode == 0 and watch.returncode == 0, (score.stderr, watch.stderr)
    last = json.loads(watch.stdout.splitlines()[-1])
    assert last["final"] and last["all"] == json.loads(score.stdout)
    names = {str(t) for t, _, _ in rows}
    split = last["broke"]["split_entities"]
    assert split and all(e["entity"] in names for e in split)
    assert {e["cluster"] for e in last["broke"]["merging_clusters"]} <= {str(p) for _, p, _ in rows}
