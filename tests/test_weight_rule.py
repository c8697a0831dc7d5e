"""The one weight rule of the command line's readers (docs/cli.md, ``streameval.io._weight``): a
weight is an ASCII decimal integer literal in CSV/TSV and a JSON integer in JSON lines, from 1 to
2**57 - 1; anything else is a bad row named by its line and value. Every reader follows it: the
row-by-row reader (``watch``, standard input, followed files, ``compare``, ``--sample``) and the
block readers of ``score`` (pyarrow; numpy or one ``json.loads`` a block without it), which take a
block only when each weight in it passes and otherwise read the block row by row. The tests drive
every reader with the same bytes and compare the rows, the errors (text, line, offset) and the
positions.

Before, the row-by-row reader took any ``int()`` or integral ``float()`` of a CSV field and any
integral JSON number or numeric string: ``1_000`` read as 1000, ``+2``, `` 2 ``, ``2.0``, ``2e0``,
``1e3``, the Arabic-Indic ``٢`` as 2, JSON ``"2"``, ``2.0`` and ``2e0`` as 2; the block readers,
which fall back to it on anything unusual, took them too.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval import blocks
from streameval.errors import InputError
from streameval.io import MAX_TOTAL, RowSpec

pytest.importorskip("pyarrow")

from test_blocks import by_blocks, by_rows  # noqa: E402  (after the skip: it needs pyarrow)

READERS = ["rows", "pyarrow", "no-pyarrow"]


def read_all(path, fmt: str, spec: RowSpec, monkeypatch, block_bytes: int = 1 << 22) -> dict:
    """``{reader: (rows, errors, positions)}`` of one file by every reader."""
    out = {"rows": by_rows(path, fmt, spec), "pyarrow": by_blocks(path, fmt, spec, block_bytes)}
    with monkeypatch.context() as m:
        m.setattr(blocks, "_has_pyarrow", lambda part: False)
        out["no-pyarrow"] = by_blocks(path, fmt, spec, block_bytes)
    return out


def csv_rule(field: str):
    """The rule itself, written out: the weight, or ``None`` for a bad row."""
    if (re.fullmatch(r"[0-9]+", field) and len(field.lstrip("0")) < 20
            and 0 < int(field) <= MAX_TOTAL):
        return int(field)
    return None


PLAIN = "Q must be a positive integer multiplicity written in plain ASCII digits (no sign, space, " \
        "decimal point, exponent or digit separator)"
NOT_POSITIVE = "Q must be a positive integer multiplicity"
TOO_LARGE = "Q too large (a table's total weight must stay below 2**57)"

CSV_WEIGHTS = [
    # (field, weight or the problem after "bad weight ... in column 'w':")
    ("2", 2), ("007", 7), ("0000000000000000000000002", 2),
    (str(MAX_TOTAL - 1000), MAX_TOTAL - 1000),  # (with the 60 other rows: the total's bound)
    ("1_000", PLAIN), ("+2", PLAIN), (" 2", PLAIN), ("2 ", PLAIN), (" 2 ", PLAIN), ("2.0", PLAIN),
    ("2e0", PLAIN), ("1e3", PLAIN), ("0x10", PLAIN), ("\u0662", PLAIN), ("\uff12", PLAIN),
    ("²", PLAIN), ("true", PLAIN), ("inf", PLAIN), ("nan", PLAIN), ("-", PLAIN), ("--1", PLAIN),
    ("0", NOT_POSITIVE), ("-0", NOT_POSITIVE), ("-1", NOT_POSITIVE), ("00", NOT_POSITIVE),
    (str(MAX_TOTAL + 1), TOO_LARGE), ("9" * 19, TOO_LARGE), ("9" * 5000, TOO_LARGE),
]


def _expected(field_shown: str, want, line: int, path) -> tuple:
    if isinstance(want, int):
        return want, []
    problem = want.replace("Q ", "")
    return None, [f"{path}, line {line}: bad weight {field_shown[:60]!r} in column 'w': {problem}"]


@pytest.mark.parametrize("field, want", CSV_WEIGHTS, ids=[repr(f[:12]) for f, _ in CSV_WEIGHTS])
def test_every_csv_reader_reads_a_weight_by_the_one_rule(tmp_path, monkeypatch, field, want):
    """The field among 60 plain rows (a block the column readers parse when the field passes):
    every reader gives the same rows, errors and positions, and they are the rule's."""
    path = tmp_path / "w.csv"
    path.write_text("t,p,w\n" + "a,x,1\n" * 30 + f"b,y,{field}\n" + "a,x,3\n" * 30,
                    encoding="utf-8")
    got = read_all(path, "csv", RowSpec("t", "p", "w"), monkeypatch)
    assert got["pyarrow"] == got["rows"] and got["no-pyarrow"] == got["rows"]
    rows, errors, _ = got["rows"]
    weight, messages = _expected(field, want, 32, path)
    assert [e[0] for e in errors] == messages
    if weight is None:
        assert len(rows) == 60 and errors[0][1] == 32
    else:
        assert rows[30] == ("b", "y", weight) and len(rows) == 61
    assert csv_rule(field) == weight


def _typed(reason: str) -> str:
    return f"Q must be a positive integer multiplicity given as an integer, not {reason}"


JSON_WEIGHTS = [
    ("2", 2, "2"), ("-0", NOT_POSITIVE, "0"), ("0", NOT_POSITIVE, "0"), ("-3", NOT_POSITIVE, "-3"),
    (str(MAX_TOTAL - 1000), MAX_TOTAL - 1000, None), (str(MAX_TOTAL + 1), TOO_LARGE, str(MAX_TOTAL + 1)),
    ("1" + "0" * 40, TOO_LARGE, "1" + "0" * 40),
    ('"2"', _typed("a string"), '"2"'), ('"\u0662"', _typed("a string"), '"\\u0662"'),
    ("2.0", _typed("a float"), "2.0"), ("2e0", _typed("a float"), "2.0"),
    ("1e30", _typed("a float"), "1e+30"), ("true", _typed("a boolean"), "true"),
    ("NaN", _typed("a float"), "NaN"), ("Infinity", _typed("a float"), "Infinity"),
    ("[2]", _typed("a list"), "[2]"), ('{"n": 2}', _typed("a dict"), '{"n": 2}'),
]


@pytest.mark.parametrize("token, want, shown", JSON_WEIGHTS, ids=[j[0][:12] for j in JSON_WEIGHTS])
def test_every_json_lines_reader_reads_a_weight_by_the_one_rule(tmp_path, monkeypatch, token,
                                                                want, shown):
    path = tmp_path / "w.jsonl"
    plain = '{"t": "a", "p": "x", "w": 1}\n'
    path.write_text(plain * 30 + '{"t": "b", "p": "y", "w": ' + token + "}\n" + plain * 30,
                    encoding="utf-8")
    got = read_all(path, "jsonl", RowSpec("t", "p", "w"), monkeypatch)
    assert got["pyarrow"] == got["rows"] and got["no-pyarrow"] == got["rows"]
    rows, errors, _ = got["rows"]
    weight, messages = _expected(shown or "", want, 31, path)
    assert [e[0] for e in errors] == messages
    if weight is not None:
        assert rows[30] == ("b", "y", weight)


def test_a_missing_or_null_json_weight_is_named(tmp_path, monkeypatch):
    path = tmp_path / "w.jsonl"
    path.write_text('{"t": "a", "p": "x", "w": 2}\n{"t": "a", "p": "x", "w": null}\n'
                    '{"t": "a", "p": "x"}\n')
    got = read_all(path, "jsonl", RowSpec("t", "p", "w"), monkeypatch)
    assert got["pyarrow"] == got["rows"] == got["no-pyarrow"]
    assert [e[0].split(": ", 1)[1] for e in got["rows"][1]] == [
        "missing weight (column 'w' is null or absent)"] * 2


def test_json_labels_keep_their_json_values_alike_in_every_reader(tmp_path, monkeypatch):
    """Labels are not numbers to parse: a JSON string of digits and the number are two labels, as
    Python equality groups the numbers (``1``, ``1.0``, ``1e0``; ``0`` and ``-0.0``); ``NaN`` is a
    missing label; ``Infinity`` is the float ``inf``. The same rows, codes and errors in every
    reader (and CSV fields are text: ``1`` and ``1.0`` are two labels)."""
    path = tmp_path / "l.jsonl"
    labels = ["1", '"1"', "1.0", "1e0", "0", "-0.0", '"-0.0"', "Infinity", "-Infinity", "NaN",
              "12345678901234567890123", '"01"']
    path.write_text("".join('{"t": ' + v + ', "p": "x"}\n' for v in labels) * 3)
    got = read_all(path, "jsonl", RowSpec("t", "p"), monkeypatch, block_bytes=64)
    assert got["pyarrow"] == got["rows"] and got["no-pyarrow"] == got["rows"]
    first = {}
    for t, _, _ in got["rows"][0]:
        first.setdefault(t, t)
    kinds = [(repr(v), type(v).__name__) for v in first]
    assert kinds == [("1", "int"), ("'1'", "str"), ("0", "int"), ("'-0.0'", "str"),
                     ("inf", "float"), ("-inf", "float"), ("12345678901234567890123", "int"),
                     ("'01'", "str")]
    assert [e[0].split(": ", 1)[1] for e in got["rows"][1]] == [
        "missing true label (column 't' is NaN)"] * 3
    path = tmp_path / "l.csv"
    path.write_text("t,p\n" + "1,x\n1.0,x\n01,x\n-0,x\n" * 20)
    got = read_all(path, "csv", RowSpec("t", "p"), monkeypatch)
    assert got["pyarrow"] == got["rows"] and got["no-pyarrow"] == got["rows"]
    assert list(dict.fromkeys(t for t, _, _ in got["rows"][0])) == ["1", "1.0", "01", "-0"]


# generated weight fields: digits (ASCII and not), signs, separators, points, exponents, spaces
FIELD = st.text(st.sampled_from("0123456789" * 3 + "+-_. eExX\u0662\uff12²\t"), min_size=1,
                max_size=22)


def _differential_weights(tmp_path_factory, monkeypatch, fields, block_bytes):
    path = tmp_path_factory.mktemp("w") / "w.csv"
    path.write_text("t,p,w\n" + "".join(f"a{k % 3},x{k % 2},{f}\n" for k, f in enumerate(fields)),
                    encoding="utf-8")
    got = read_all(path, "csv", RowSpec("t", "p", "w"), monkeypatch, block_bytes)
    assert got["pyarrow"] == got["rows"] and got["no-pyarrow"] == got["rows"]
    rows, errors, _ = got["rows"]
    kept, refused, total = [], [], 0
    for k, f in enumerate(fields):
        w = csv_rule(f)
        if w is None:
            refused.append((k + 2, f"bad weight {f[:60]!r} in column 'w': "))
        elif total + w > MAX_TOTAL:  # the rule's other half: the total stays under the bound
            refused.append((k + 2, f"weight {w} takes the total weight to {total + w}, over"))
        else:
            kept.append(w)
            total += w
    assert [w for _, _, w in rows] == kept
    assert [e[1] for e in errors] == [line for line, _ in refused]
    for (message, line, _), (_, problem) in zip(errors, refused):
        assert message.startswith(f"{path}, line {line}: {problem}") and "\n" not in message


@settings(max_examples=40, deadline=None)
@given(fields=st.lists(st.one_of(FIELD, st.integers(1, 99).map(str)), min_size=1, max_size=12),
       block_bytes=st.sampled_from([16, 1 << 22]))
def test_generated_weight_fields_every_reader_alike(tmp_path_factory, fields, block_bytes):
    """Hypothesis over weight strings: every reader's rows and errors are the rule's."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _differential_weights(tmp_path_factory, monkeypatch, fields, block_bytes)


@pytest.mark.slow
@pytest.mark.soak  # 2,000 examples, three readers each: about a minute
@settings(max_examples=2000, deadline=None)
@given(fields=st.lists(st.one_of(FIELD, st.integers(0, 2**60).map(str)), min_size=1, max_size=30),
       block_bytes=st.sampled_from([16, 64, 1 << 22]))
def test_generated_weight_fields_every_reader_alike_soak(tmp_path_factory, fields, block_bytes):
    with pytest.MonkeyPatch.context() as monkeypatch:
        _differential_weights(tmp_path_factory, monkeypatch, fields, block_bytes)


def test_the_rule_refuses_what_int_would_take():
    """The gap itself: each of these is a Python ``int()`` or an integral ``float()``, which the
    row-by-row reader used to take."""
    from streameval.io import _weight

    def err(problem):
        return InputError("f", 1, problem)

    for field in ["1_000", "+2", " 2 ", "2.0", "2e0", "\u0662", "\uff12"]:
        assert float(field) == 2 or float(field) == 1000  # Python reads each as a number
        with pytest.raises(InputError, match=re.escape(f"bad weight {field!r}")):
            _weight(field, "w", err)
    assert _weight(str(MAX_TOTAL), "w", err) == MAX_TOTAL == _weight(MAX_TOTAL, "w", err, False)
    for value in ["2", 2.0, True]:
        with pytest.raises(InputError, match="given as an integer, not a"):
            _weight(value, "w", err, text=False)


def test_the_command_lines_numbers_follow_the_same_plain_ascii_rule(tmp_path):
    """The integer options (``--window``, ``--every``, ``--seed``, ``--n-resamples``, ...) and a
    page-stream CSV's page numbers: ASCII digits only; the number options (``--interval``,
    ``--confidence``, ``--drop-run-length``, ...) plain ASCII text. Before, ``int()`` and
    ``float()`` took ``1_000``, ``+5``, `` 5`` and ``٥`` (a page ``1_0`` was page 10)."""
    import argparse

    from streameval.cli.options import non_negative, plain_float, seconds
    from streameval.errors import PageStreamError
    from streameval.io import load_csv

    assert non_negative("007") == 7 and plain_float("2.5e-1") == 0.25 and seconds("0") == 0.0
    for text in ["1_000", "+5", " 5", "5 ", "\u0665", "5.0", "0x5", ""]:
        with pytest.raises(argparse.ArgumentTypeError, match="not an integer written in plain"):
            non_negative(text)
    with pytest.raises(argparse.ArgumentTypeError, match="must be >= 0, got '-1'"):
        non_negative("-1")
    for text in ["1_0.5", " 2", "\u0662", "2.5\u00a0"]:
        with pytest.raises(argparse.ArgumentTypeError, match="written in plain ASCII"):
            plain_float(text)
    path = tmp_path / "p.csv"
    for page in ["1_0", "+1", "\u0661", "-1"]:
        path.write_text(f"stream,page,flag\na,0,1\na,{page},0\n", encoding="utf-8")
        with pytest.raises(PageStreamError, match=re.escape(
                f"row 3: page {page!r} is not an integer written in plain ASCII digits")):
            load_csv(path)
