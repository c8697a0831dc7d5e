"""The row readers behind the command line (``streameval.io``), in-process: feature-vector columns,
and one column read as both labellings.

The command line does not read vectors yet (the intrinsic metrics land separately); these readers
are the hook it will use, so their validation is pinned down here.
"""

from __future__ import annotations

import json

import pytest

from streameval.io import InputError, RowSpec, read_rows


def rows_of(path, spec, on_error=None):
    kw = {} if on_error is None else {"on_error": on_error}
    return list(read_rows(str(path), spec, **kw))


def test_vector_in_several_csv_columns(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("t,p,x,y\na,1,0.5,-2\nb,2,1e3,0\n")
    assert rows_of(path, RowSpec("t", "p", vector=("x", "y"))) == [
        ("a", "1", 1, (0.5, -2.0)), ("b", "2", 1, (1000.0, 0.0)),
    ]


def test_vector_in_one_column_of_each_format(tmp_path):
    want = [("a", "x", 2, (1.0, 2.0, 3.0)), ("b", "y", 1, (0.0, -1.5, 4.0))]
    tsv = tmp_path / "v.tsv"
    tsv.write_text("t\tp\tw\tvec\na\tx\t2\t1 2 3\nb\ty\t1\t0 -1.5 4\n")
    jsonl = tmp_path / "v.jsonl"
    jsonl.write_text("".join(json.dumps({"t": t, "p": p, "w": w, "vec": list(x)}) + "\n"
                             for t, p, w, x in want))
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "v.parquet"
    pq.write_table(pa.table({"t": ["a", "b"], "p": ["x", "y"], "w": [2, 1],
                             "vec": [[1.0, 2.0, 3.0], [0.0, -1.5, 4.0]]}), parquet)
    for path in (tsv, jsonl, parquet):
        assert rows_of(path, RowSpec("t", "p", "w", vector=("vec",))) == want, path.name


@pytest.mark.parametrize("content, message", [
    ("t,p,x,y\na,1,0.5,2\nb,2,nan,0\n", "v.csv, line 3: vector component 'nan' in column 'x', 'y' is not a finite number"),
    ("t,p,x,y\na,1,0.5,2\nb,2,inf,0\n", "v.csv, line 3: vector component 'inf'"),
    ("t,p,x,y\na,1,0.5,2\nb,2,one,0\n", "v.csv, line 3: vector component 'one'"),
])
def test_bad_vector_components(tmp_path, content, message):
    path = tmp_path / "v.csv"
    path.write_text(content)
    with pytest.raises(InputError) as e:
        rows_of(path, RowSpec("t", "p", vector=("x", "y")))
    assert str(e.value).startswith(f"{tmp_path}/{message}")


def test_vector_of_the_wrong_size_stops_or_is_skipped(tmp_path):
    path = tmp_path / "v.jsonl"
    lines = [{"t": 1, "p": 1, "v": [1, 2]}, {"t": 1, "p": 2, "v": [1, 2, 3]},
             {"t": 2, "p": 2, "v": [3, 4]}, {"t": 2, "p": 2, "v": "12"}]
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    spec = RowSpec("t", "p", vector=("v",))
    with pytest.raises(InputError, match=r"v.jsonl, line 2: vector of the wrong size: 3 values, "
                       r"expected 2 \(the first row's\)"):
        rows_of(path, spec)
    skipped = []
    assert rows_of(path, spec, skipped.append) == [(1, 1, 1, (1.0, 2.0)), (2, 2, 1, (3.0, 4.0))]
    assert [e.line for e in skipped] == [2, 4]
    assert "vector of the wrong size: 1 values, expected 2" in str(skipped[1])


@pytest.mark.parametrize("content", [
    "doc,label\nd1,0\nd1,0\nd2,1\nd2,2\n",        # plain lines: the block parser (pyarrow or numpy)
    'doc,label\nd1,"0"\nd1,0\nd2,1\nd2,2\n',      # a quote: the row-by-row reader
])
def test_score_one_column_as_both_labellings(tmp_path, capsys, content):
    """``--true`` and ``--pred`` naming the same column score the labelling against itself (every
    metric perfect), through every reader; the block parser once read that column twice and failed
    with a traceback."""
    from streameval.cli import main

    path = tmp_path / "same.csv"
    path.write_text(content)
    code = main(["score", str(path), "--true", "label", "--pred", "label", "--format", "json",
                 "--metrics", "ELM", "ARI"])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {"ELM": 1.0, "AdjustedRand": 1.0}
