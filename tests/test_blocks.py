"""The columnar reader (:mod:`streameval.blocks`) against the row-by-row one: the same rows, the
same errors on the same lines, whatever the bytes and however they fall into blocks."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streameval import blocks
from streameval.blocks import Codes, iter_blocks
from streameval.errors import InputError
from streameval.io import LineSource, RowSpec, iter_text_rows, raise_error

pytest.importorskip("pyarrow")

FIELDS = ["a", "b", "ab", "1", "01", "2", "3", "0", "-1", "+2", "2.0", " 2", "1_0", "x y", "",
          '"q"', '"a,b"', "é", "٣", "99999999999999999999", "144115188075855743", "\x00", "\r",
          "\t"]


def collected(positions: list):
    """An ``on_error`` that records each error with the source's position as it runs."""
    errors: list = []

    def on_error(e):
        errors.append((str(e), source_of[0].lineno, source_of[0].offset))

    source_of: list = []
    return errors, on_error, source_of


def by_rows(path, fmt, spec, start=None):
    """The rows, errors and positions (each row's line and the offset after it; each error's)."""
    where: list = []
    errors, on_error, source_of = collected(where)
    with LineSource.open(str(path)) as source:
        source_of.append(source)
        rows = []
        for t, p, w in iter_text_rows(source, fmt, spec, on_error, start=start):
            rows.append((t, p, w))
            where.append((source.lineno, source.offset))
    return rows, errors, where


def by_blocks(path, fmt, spec, block_bytes, stop=False, start=None):
    where: list = []
    errors, on_error, source_of = collected(where)
    on_error = raise_error if stop else on_error
    codes = Codes(), Codes()
    rows: list = []
    with LineSource.open(str(path)) as source:
        source_of.append(source)
        for b in iter_blocks(source, fmt, spec, on_error, codes=codes, block_bytes=block_bytes,
                             positions=True, start=start):
            ws = [1] * b.rows if b.weight is None else b.weight.tolist()
            rows += [(codes[0].labels[t], codes[1].labels[p], w)
                     for t, p, w in zip(b.true.tolist(), b.pred.tolist(), ws)]
            assert len(b.true) == len(b.pred) == len(b.lines) == len(b.offsets) == b.rows
            where += list(zip(b.lines.tolist(), b.offsets.tolist()))
    return rows, errors, where


CLEAN = ["a", "b", "ab", "1", "01", "2", "3", "é"]
odd = st.lists(st.sampled_from(FIELDS), min_size=1, max_size=4).map(",".join)
clean = st.lists(st.sampled_from(CLEAN), min_size=3, max_size=3).map(",".join)
line = st.one_of(clean, clean, clean, odd)  # mostly blocks that pyarrow parses
ending = st.sampled_from(["\n", "\n", "\n", "\r\n", ""])


@pytest.mark.parametrize("parser", ["pyarrow", "numpy"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(line, ending), max_size=25),
       header=st.sampled_from(["t,p,w\n", "\ufefft,p,w\n", "t,p\n", ""]),
       block_bytes=st.sampled_from([8, 32, 100, 1 << 22]))
def test_blocks_equal_rows_on_any_bytes(tmp_path, monkeypatch, parser, lines, header,
                                        block_bytes):
    """pyarrow's CSV reader, or numpy's without it, against the csv module row by row."""
    if parser == "numpy":
        monkeypatch.setattr(blocks, "_has_pyarrow", lambda part: False)
    path = tmp_path / "x.csv"
    text = header + "".join(a + (e or "\n") for a, e in lines[:-1])
    if lines:
        text += lines[-1][0] + lines[-1][1]
    path.write_bytes(text.encode("utf-8"))
    if header.strip("\ufeff\n") == "t,p,w":
        spec = RowSpec("t", "p", "w")
    elif header:
        spec = RowSpec("t", "p")
    else:
        spec = RowSpec("1", "3", "2", header=False)
    try:
        want = by_rows(path, "csv", spec)
    except InputError as e:  # the file as a whole (no header): refused alike
        with pytest.raises(InputError, match="."):
            by_blocks(path, "csv", spec, block_bytes)
        assert str(e)
        return
    assert by_blocks(path, "csv", spec, block_bytes) == want


@pytest.mark.parametrize("parser", ["pyarrow", "numpy"])
def test_bad_rows_stop_at_their_line_in_a_large_file(tmp_path, monkeypatch, parser):
    if parser == "numpy":
        monkeypatch.setattr(blocks, "_has_pyarrow", lambda part: False)
    path = tmp_path / "big.tsv"
    good = "".join(f"t{k % 7}\tp{k % 5}\t{1 + k % 3}\n" for k in range(50000))
    path.write_text("t\tp\tw\n" + good + "t1\t\t2\n" + good)
    spec = RowSpec("t", "p", "w")
    with pytest.raises(InputError, match=r"big.tsv, line 50002: missing predicted label"):
        by_blocks(path, "tsv", spec, 1 << 16, stop=True)
    got = by_blocks(path, "tsv", spec, 1 << 16)
    assert got == by_rows(path, "tsv", spec)
    assert len(got[0]) == 100000 and len(got[1]) == 1
    assert got[1][0][1:] == (50002, len("t\tp\tw\n" + good + "t1\t\t2\n"))  # the bad row's place
    line, offset = got[2][49999]  # after row 50,000
    resumed = by_blocks(path, "tsv", spec, 1 << 16, start=(offset, line))
    assert resumed == by_rows(path, "tsv", spec, start=(offset, line))
    assert len(resumed[0]) == 50000


def test_weights_near_the_bound_are_refused_on_their_line(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("t,p,w\n" + "a,x,72057594037927935\n" * 3)  # 2**56 - 1 each: the third overflows
    rows, errors, _ = got = by_blocks(path, "csv", RowSpec("t", "p", "w"), 1 << 22)
    assert got == by_rows(path, "csv", RowSpec("t", "p", "w"))
    assert len(rows) == 2 and [e[0].split(":")[0][-6:] for e in errors] == ["line 4"]


def test_json_lines_go_row_by_row_into_blocks(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"t": 1, "p": "x"}\n{"t": 1.0, "p": "x", "w": 2}\n{"t": true, "p": null}\n'
                    + '{"t": "a", "p": "b"}\n' * 70000)  # more rows than one gathered block
    rows, errors, where = got = by_blocks(path, "jsonl", RowSpec("t", "p"), 1 << 22)
    assert got == by_rows(path, "jsonl", RowSpec("t", "p"))
    assert rows[:2] == [(1, "x", 1), (1, "x", 1)] and len(rows) == 70002
    assert [e[0] for e in errors] == [f"{path}, line 3: missing predicted label (column 'p' is empty)"]


JSON_VALUES = ['"a"', '"b"', '"é"', '""', '"\\u00e9"', '"\\ud800"', "1", "2", "-0", "1.0", "2.5",
               "true", "false", "null", "[1]", '{"x": 1}', "NaN", "9223372036854775807",
               "9223372036854775808", "1e2", "0"]


def _obj(v) -> str:
    return '{"t": ' + v[0] + ', "p": ' + v[1] + ', "w": ' + v[2] + "}"


json_clean = st.tuples(st.sampled_from(['"a"', '"b"', '"é"']), st.sampled_from(['"x"', '"y"']),
                       st.sampled_from(["1", "2", "3"])).map(_obj)
json_int = st.tuples(st.sampled_from(["1", "2", "0"]), st.sampled_from(["true", "false"])).map(
    lambda v: '{"p": ' + v[1] + ', "t": ' + v[0] + "}")
json_odd = st.one_of(
    st.tuples(st.sampled_from(JSON_VALUES), st.sampled_from(JSON_VALUES),
              st.sampled_from(JSON_VALUES)).map(_obj),
    st.sampled_from(['{"t": "a", "p": "x", "t": "b"}', '{"t": "a", "p": "x"}{"t": "a", "p": "x"}',
                     '[1, 2]', "", "  ", '{"t": "a"}', ' {"t": "a", "p": "x"}', "{", "x",
                     '{"t": "a", "p": "x", "w": 2.0}', '{"t": "a", "p": "x", "w": "2"}',
                     '{"t": "a", "p": "x", "w": 72057594037927935}',
                     # lines that are no object on their own but join into objects across lines
                     '{"t": "a", "p": "x}', '{", "p": "y"}', '{"t": "a", "p": "x"}, "}',
                     '{"t": "{", "p": "x"}', '{"t": "a", "p": {}}', '{"t": "a", "p": "x"}\r']))
json_line = st.one_of(json_clean, json_clean, json_int, json_odd)


@pytest.mark.parametrize("parser", ["pyarrow", "json"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(json_line, ending), max_size=25),
       weighted=st.booleans(), block_bytes=st.sampled_from([8, 64, 200, 1 << 22]))
def test_json_blocks_equal_rows_on_any_lines(tmp_path, monkeypatch, parser, lines, weighted,
                                             block_bytes):
    """pyarrow's JSON reader, or one ``json.loads`` a block without it, takes only the blocks on
    which it agrees with ``json.loads`` line by line: the same rows (labels of the same values and
    types), errors and positions as row by row."""
    if parser == "json":
        monkeypatch.setattr(blocks, "_has_pyarrow", lambda part: False)
    path = tmp_path / "x.jsonl"
    text = "".join(a + (e or "\n") for a, e in lines[:-1])
    if lines:
        text += lines[-1][0] + lines[-1][1]
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    spec = RowSpec("t", "p", "w" if weighted else None)
    want = by_rows(path, "jsonl", spec)
    got = by_blocks(path, "jsonl", spec, block_bytes)
    assert got == want
    # and of the same types: each label as the first equal one read (a dict groups 1 and True)
    codes = Codes(), Codes()
    first = [(codes[0].labels[codes[0].code(t)], codes[1].labels[codes[1].code(p)], w)
             for t, p, w in want[0]]
    assert [tuple(map(type, r)) for r in got[0]] == [tuple(map(type, r)) for r in first]


def test_json_lines_are_parsed_a_block_at_a_time(tmp_path, monkeypatch):
    """A plain JSON-lines file goes through pyarrow, not through ``json.loads``."""
    import json

    path = tmp_path / "x.jsonl"
    path.write_text("".join(f'{{"t": {k % 7}, "p": "c{k % 5}", "w": {1 + k % 2}}}\n'
                            for k in range(5000)))
    want = by_rows(path, "jsonl", RowSpec("t", "p", "w"))

    def refused(*a, **k):
        raise AssertionError("json.loads called")

    monkeypatch.setattr(json, "loads", refused)
    got = by_blocks(path, "jsonl", RowSpec("t", "p", "w"), 1 << 14)
    assert got == want and len(got[0]) == 5000


def test_without_pyarrow_json_lines_are_parsed_a_block_at_a_time(tmp_path, monkeypatch):
    """No pyarrow: a plain JSON-lines file goes through one ``json.loads`` a block, not one a
    line; a bad line in it is still named by its line (its block read row by row)."""
    import json

    monkeypatch.setattr(blocks, "_has_pyarrow", lambda part: False)
    path = tmp_path / "x.jsonl"
    good = "".join(f'{{"t": {k % 7}, "p": "c{k % 5}", "w": {1 + k % 2}}}\n' for k in range(5000))
    path.write_text(good + '{"t": 1, "p": ""}\n' + good)
    spec = RowSpec("t", "p", "w")
    want = by_rows(path, "jsonl", spec)
    calls = []
    real = json.loads
    monkeypatch.setattr(json, "loads", lambda s, **k: calls.append(len(s)) or real(s, **k))
    got = by_blocks(path, "jsonl", spec, 1 << 14)
    assert got == want and len(got[0]) == 10000
    assert [e[0] for e in got[1]] == [f"{path}, line 5001: missing predicted label (column 'p' "
                                      "is empty)"]
    # one call a block, but for the block holding the bad line (one a line)
    line_calls = [c for c in calls if c < 100]
    assert len(calls) - len(line_calls) < 20 and len(line_calls) < 1000
    with pytest.raises(InputError, match=r"x.jsonl, line 5001: missing predicted label"):
        by_blocks(path, "jsonl", spec, 1 << 14, stop=True)


def test_without_pyarrow_csv_blocks_are_parsed_by_numpy(tmp_path, monkeypatch):
    """No pyarrow: a plain CSV still goes a block at a time (numpy), not through the csv module."""
    import csv

    monkeypatch.setattr(blocks, "_has_pyarrow", lambda part: False)
    path = tmp_path / "x.csv"
    path.write_text("t,p,w\n" + "".join(f"e{k % 7},c{k % 5},{1 + k % 2}\n" for k in range(5000)))
    want = by_rows(path, "csv", RowSpec("t", "p", "w"))
    calls = []
    real = csv.reader
    monkeypatch.setattr(csv, "reader", lambda *a, **k: calls.append(1) or real(*a, **k))
    got = by_blocks(path, "csv", RowSpec("t", "p", "w"), 1 << 14)
    assert got == want and len(got[0]) == 5000 and len(calls) == 1  # the header only


@settings(max_examples=60, deadline=None)
@given(labels=st.lists(st.sampled_from([0, 1, 2, "a", "b", True, 1.0, 2.5]), min_size=1,
                       max_size=6),
       rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(1, 3)),
                     max_size=30))
def test_update_coded_is_update_many_of_the_labels(labels, rows):
    """Codes into label lists (repeated, equal or mixed labels included) give the state of
    update_many of the labels themselves."""
    import numpy as np

    from streameval import Contingency

    rows = [(t % len(labels), p % len(labels), w) for t, p, w in rows]
    t, p, w = (np.array([r[k] for r in rows], np.int64) for k in range(3))
    coded, plain = Contingency(), Contingency()
    coded.update_coded(labels, labels[::-1], t, p, w)
    plain.update_many([labels[k] for k in t.tolist()], [labels[::-1][k] for k in p.tolist()], w)
    assert coded == plain


def test_update_coded_refuses_bad_input_and_changes_nothing():
    import numpy as np

    from streameval import Contingency
    from streameval.errors import MissingLabelError

    table = Contingency()
    table.update("a", "x")
    before = table.to_dict()
    for labels, codes, error in [(["a", None], [1], MissingLabelError),
                                 (["a"], [1], ValueError), (["a"], [-1], ValueError)]:
        with pytest.raises(error):
            table.update_coded(labels, ["x", "y"], np.array(codes), np.array([0]))
    with pytest.raises(ValueError, match="weight"):
        table.update_coded(["a"], ["x"], np.array([0]), np.array([0]), np.array([0]))
    assert table.to_dict() == before
