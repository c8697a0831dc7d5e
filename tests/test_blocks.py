"""The columnar reader (:mod:`streameval.blocks`) against the row-by-row one: the same rows, the
same errors on the same lines, whatever the bytes and however they fall into blocks."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(line, ending), max_size=25),
       header=st.sampled_from(["t,p,w\n", "\ufefft,p,w\n", "t,p\n", ""]),
       block_bytes=st.sampled_from([8, 32, 100, 1 << 22]))
def test_blocks_equal_rows_on_any_bytes(tmp_path, lines, header, block_bytes):
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


def test_bad_rows_stop_at_their_line_in_a_large_file(tmp_path):
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
