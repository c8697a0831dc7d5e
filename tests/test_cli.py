"""The ``streameval`` console script, run for real in subprocesses: help, demo, score, pss, bad input.

The script is the one installed next to the running interpreter (``pip install -e .`` puts it
there); the tests skip with a clear reason when it is absent. Expected values are the metrics' exact
values on the same data (:mod:`contingency_rounding`: fractions and 60-digit logarithms), each
reported value within the rounding bound of streameval's computation; the intrinsic metrics equal,
bit for bit, the library's evaluator fed the same rows.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from contingency_rounding import assert_within_rounding, exact_and_bound, within
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.cli.score import intrinsic_evaluator

SCRIPT = Path(sys.executable).parent / "streameval"
needs_script = pytest.mark.skipif(
    not SCRIPT.exists(),
    reason=f"the streameval console script is not installed next to {sys.executable} "
    "(pip install -e '.[test]')",
)
pytestmark = needs_script


def run(*args, input=None, cwd=None, timeout=60) -> subprocess.CompletedProcess:
    """Run the real console script; return the completed process (text output)."""
    return subprocess.run(
        [str(SCRIPT), *map(str, args)], input=input, capture_output=True, text=True,
        cwd=cwd, timeout=timeout,
    )


def score_json(path, *args) -> dict:
    r = run("score", path, "--format", "json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def reference(y_true, y_pred) -> dict:
    """``{name: (exact value, rounding bound)}`` of the six metrics on the labels
    (:func:`contingency_rounding.exact_and_bound`)."""
    return exact_and_bound(y_true, y_pred)


def assert_matches(values: dict, y_true, y_pred) -> None:
    assert_within_rounding(values, y_true, y_pred)


def assert_clean_failure(r, *fragments) -> None:
    """Exit status 1, one clear message on stderr, no traceback."""
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    for fragment in fragments:
        assert fragment in r.stderr, (fragment, r.stderr)


def labelled_rows(seed=0, n=300):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 8, n)
    p = np.where(rng.random(n) < 0.7, t, rng.integers(0, 10, n))
    w = rng.integers(1, 4, n)
    return [f"t{x}" for x in t], [f"p{x}" for x in p], w.tolist()


# ------------------------------------------------------------------------------ help
@pytest.mark.parametrize("command", [[], ["demo"], ["score"], ["watch"]])
def test_help_on_every_subcommand(command):
    r = run(*command, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: {' '.join(['streameval', *command])}")


def test_usage_error_exits_2_without_traceback():
    r = run("score", "x.csv")  # --true/--pred missing
    assert r.returncode == 2 and "required" in r.stderr and "Traceback" not in r.stderr


def test_python_dash_m_runs_the_same_command():
    r = subprocess.run([sys.executable, "-m", "streameval", "--version"], capture_output=True,
                       text=True, cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0 and r.stdout.startswith("streameval ")


# ------------------------------------------------------------------------------ demo
@pytest.mark.slow
def test_demo_streams_the_generated_data_and_plots(tmp_path):
    from streameval.cli import make_demo_stream

    png = tmp_path / "demo.png"
    r = run("demo", "--pages", 3000, "--seed", 3, "--plot", png, "--format", "json")
    assert r.returncode == 0, r.stderr
    values = json.loads(r.stdout)
    import streameval

    assert set(values) == set(streameval.Evaluator().metrics)  # the full O(1) suite
    y_true, y_pred = make_demo_stream(seed=3, pages=3000)
    assert_matches(values, y_true, y_pred)
    assert 0.5 < values["ELM"] < 0.95  # the clusterer is good, not perfect
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    # same seed, same data: a second run prints the same table
    again = run("demo", "--pages", 3000, "--seed", 3, "--plot", "", "--format", "json")
    assert json.loads(again.stdout) == values


@pytest.mark.slow
def test_demo_injects_a_drop_half_way_and_the_monitor_flags_it(tmp_path):
    import re

    png = tmp_path / "story.png"
    r = run("demo", "--pages", 8000, "--plot", png, "--format", "json")
    assert r.returncode == 0, r.stderr
    match = re.search(r"quality drop injected at page 4000: flagged by the Monitor at page (\d+)",
                      r.stderr)
    assert match, r.stderr
    assert 4000 < int(match.group(1)) < 6000  # flagged soon after, not before
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = run("demo", "--pages", 8000, "--plot", "", "--drop", 1)
    assert r.returncode == 0 and "injected" not in r.stdout + r.stderr


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_demo_plot_labels_its_axes_legends_the_degraded_half_and_flags_only_the_watched_panel():
    """The demo's plot: every panel has a y-axis label, the shaded degraded half is in the
    legend, and the Monitor's drop flags are drawn on the watched metric's panel only."""
    pytest.importorskip("matplotlib")
    import argparse

    from matplotlib.patches import Polygon, Rectangle

    from streameval.cli import demo

    parser = argparse.ArgumentParser()
    demo.add_parser(parser.add_subparsers())
    args = parser.parse_args(["demo", "--pages", "8000", "--no-progress"])
    xs, trace, wtrace, mon, injected, broke = demo.demo_trace(args)
    assert mon.watch == "ELM" and any(d > injected for d in mon.drops)
    fig = demo.demo_figure(xs, trace, wtrace, mon, injected, window=args.window, seed=args.seed,
                           broke=broke)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 4
    for ax in panels:
        assert ax.get_ylabel(), ax.get_title()
        flags = [line for line in ax.get_lines() if line.get_color() == demo.FLAG_COLOR]
        assert bool(flags) == ax.get_title().startswith("ELM"), ax.get_title()
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    shaded = [h for h, lab in zip(legend.legend_handles, labels) if lab.startswith("degraded")]
    assert len(shaded) == 1 and isinstance(shaded[0], (Polygon, Rectangle)), labels
    assert any(lab.startswith("Monitor flags a drop of ELM") for lab in labels), labels
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.slow
def test_demo_prints_a_table_without_progress_bar_when_piped(tmp_path):
    r = run("demo", "--pages", 500, "--plot", tmp_path / "d.png")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("streameval demo: 500 pages (seed 0)")
    assert lines[1].split() == ["metric", "value"]
    assert any(line.split()[0] == "ELM" for line in lines[2:])
    assert "\r" not in r.stderr  # no progress bar off a terminal


# ------------------------------------------------------------------------------ score
def write_all_formats(tmp_path, y_true, y_pred, w) -> list:
    rows = list(zip(y_true, y_pred, w))
    csv = tmp_path / "rows.csv"
    csv.write_text("id,truth,guess,mult\n" + "".join(f"{i},{t},{p},{c}\n" for i, (t, p, c) in enumerate(rows)))
    tsv = tmp_path / "rows.tsv"
    tsv.write_text("id\ttruth\tguess\tmult\n" + "".join(f"{i}\t{t}\t{p}\t{c}\n" for i, (t, p, c) in enumerate(rows)))
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps({"truth": t, "guess": p, "mult": c}) + "\n" for t, p, c in rows))
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"truth": y_true, "guess": y_pred, "mult": w}), parquet, row_group_size=97)
    return [csv, tsv, jsonl, parquet]


@pytest.mark.slow
def test_score_every_format_with_weights(tmp_path):
    y_true, y_pred, w = labelled_rows()
    expanded_t = np.repeat(y_true, w)
    expanded_p = np.repeat(y_pred, w)
    for path in write_all_formats(tmp_path, y_true, y_pred, w):
        values = score_json(path, "--true", "truth", "--pred", "guess", "--weight", "mult")
        assert_matches(values, expanded_t, expanded_p)


def test_score_without_weights_and_without_header(tmp_path):
    y_true, y_pred, _ = labelled_rows(seed=1)
    path = tmp_path / "plain.csv"
    path.write_text("".join(f"{t},x,{p}\n" for t, p in zip(y_true, y_pred)))
    values = score_json(path, "--no-header", "--true", 1, "--pred", 3)
    assert_matches(values, y_true, y_pred)


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_score_table_and_metric_selection(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("t,p\n1,a\n1,a\n2,b\n2,a\n")
    r = run("score", path, "--true", "t", "--pred", "p", "--metrics", "elm,BCubed", "adjustedrand")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"{path}: 4 rows, 4 elements, 2 true clusters, 2 predicted clusters"
    assert [line.split() for line in lines[1:]] == [
        ["metric", "value"], ["ELM", "0.333333"], ["BCubed", "0.666667"], ["AdjustedRand", "0.000000"],
    ]
    r = run("score", "-", "--true", "t", "--pred", "p", "--metrics", "ELM", "--format", "json",
            input=path.read_text())  # standard input, CSV by default
    assert r.returncode == 0
    got = json.loads(r.stdout)
    assert list(got) == ["ELM"] and within(got["ELM"], reference(["1", "1", "2", "2"], list("aaba"))["ELM"])
    r = run("score", path, "--true", "t", "--pred", "p", "--metrics", "NoSuchMetric")
    assert_clean_failure(r, "unknown metric 'NoSuchMetric'", "ELM")


# ------------------------------------------------------------------------------ bad input
BAD_TEXT = [
    # (file name, content, extra args, expected message)
    ("cols.csv", b"t,p,w\na,x,1\na,x\n", ["--weight", "w"],
     "cols.csv, line 3: expected 3 fields as in the header, got 2"),
    ("true.csv", b"t,p\na,x\n,x\n", [], "true.csv, line 3: missing true label (column 't' is empty)"),
    ("pred.tsv", b"t\tp\na\tx\nb\t\n", [], "pred.tsv, line 3: missing predicted label (column 'p' is empty)"),
    ("neg.csv", b"t,p,w\na,x,-1\n", ["--weight", "w"],
     "neg.csv, line 2: bad weight '-1' in column 'w': must be a positive integer multiplicity"),
    ("frac.csv", b"t,p,w\na,x,1\na,x,1.5\n", ["--weight", "w"], "frac.csv, line 3: bad weight '1.5'"),
    ("word.csv", b"t,p,w\na,x,many\n", ["--weight", "w"], "word.csv, line 2: bad weight 'many'"),
    ("bytes.csv", b"t,p\na,x\nb,\xff\xfe\n", [], "bytes.csv, line 3: undecodable text: not UTF-8 (byte 0xff at column 3)"),
    ("header.csv", b"truth,p\na,x\n", [], "header.csv, line 1: no column 't' in the header ('truth', 'p')"),
    ("empty.csv", b"", [], "empty.csv: the file is empty (no header line)"),
    ("json.jsonl", b'{"t": "a", "p": "x"}\n{"t": "a", "p": \n', [], "json.jsonl, line 2: not valid JSON"),
    ("null.jsonl", b'{"t": null, "p": "x"}\n', [], "null.jsonl, line 1: missing true label"),
    ("list.jsonl", b'{"t": [1], "p": "x"}\n', [], "list.jsonl, line 1: true label in column 't' must be a string, number or boolean"),
    ("array.jsonl", b'[1, 2]\n', [], "array.jsonl, line 1: expected a JSON object per line, got list"),
    ("weight.jsonl", b'{"t": 1, "p": 2, "w": 0}\n', ["--weight", "w"], "weight.jsonl, line 1: bad weight '0'"),
    # the one weight rule (docs/cli.md): Python's int() or float() would read each of these
    ("sep.csv", b"t,p,w\na,x,1\na,x,1_000\n", ["--weight", "w"],
     "sep.csv, line 3: bad weight '1_000' in column 'w': must be a positive integer multiplicity "
     "written in plain ASCII digits (no sign, space, decimal point, exponent or digit separator)"),
    ("string.jsonl", b'{"t": 1, "p": 2, "w": 1}\n{"t": 1, "p": 2, "w": "2"}\n', ["--weight", "w"],
     "string.jsonl, line 2: bad weight '\"2\"' in column 'w': must be a positive integer "
     "multiplicity given as an integer, not a string"),
    ("notparquet.parquet", b"PAR1 garbage", [], "notparquet.parquet: not a readable Parquet file"),
]


@pytest.mark.parametrize("name, content, extra, message", BAD_TEXT, ids=[b[0] for b in BAD_TEXT])
def test_bad_input_names_file_line_and_problem(tmp_path, name, content, extra, message):
    path = tmp_path / name
    path.write_bytes(content)
    r = run("score", path, "--true", "t", "--pred", "p", *extra)
    assert_clean_failure(r, f"streameval: error: {tmp_path}/{message}")
    assert r.stdout == ""


@pytest.mark.slow
def test_bad_parquet_row_and_missing_file(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"t": [1, 2, None], "p": ["a", "b", "c"]}), path)
    assert_clean_failure(run("score", path, "--true", "t", "--pred", "p"),
                         f"{path}, row 3: missing true label (column 't' is empty)")
    assert_clean_failure(run("score", tmp_path / "nope.csv", "--true", "t", "--pred", "p"),
                         f"error: {tmp_path}/nope.csv: No such file or directory")
    assert_clean_failure(run("score", tmp_path / "rows.xlsx", "--true", "t", "--pred", "p"),
                         "cannot tell the format", "--input-format")


def test_on_error_skip_counts_and_reports(tmp_path):
    path = tmp_path / "mixed.csv"
    good = [("a", "x", 1), ("a", "x", 2), ("b", "y", 1), ("b", "x", 3)]
    text = b"t,p,w\n" + b"".join(f"{t},{p},{w}\n".encode() for t, p, w in good[:2])
    text += b"a,x\n,y,1\nb,y,0\nb,\xff,1\n" + b"".join(f"{t},{p},{w}\n".encode() for t, p, w in good[2:])
    path.write_bytes(text)
    r = run("score", path, "--true", "t", "--pred", "p", "--weight", "w", "--on-error", "skip",
            "--format", "json")
    assert r.returncode == 0, r.stderr
    assert "streameval: skipped 4 malformed rows:" in r.stderr
    for line in (4, 5, 6, 7):
        assert f"mixed.csv, line {line}: " in r.stderr
    ts = [t for t, _, w in good for _ in range(w)]
    ps = [p for _, p, w in good for _ in range(w)]
    assert_matches(json.loads(r.stdout), ts, ps)


@settings(max_examples=25)
@given(data=st.binary(max_size=300), fmt=st.sampled_from(["csv", "tsv", "jsonl"]),
       skip=st.booleans())
@pytest.mark.slow
def test_fuzz_random_bytes_never_crash(tmp_path_factory, data, fmt, skip):
    path = tmp_path_factory.mktemp("fuzz") / f"random.{fmt}"
    path.write_bytes(b"t,p\n" + data if fmt == "csv" and data[:1] != b"t" else data)
    args = ["score", path, "--true", "t", "--pred", "p", "--format", "json"]
    r = run(*args, *(["--on-error", "skip"] if skip else []))
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (0, 1), r.stderr
    if r.returncode == 0:
        assert isinstance(json.loads(r.stdout), dict)
    else:
        assert r.stderr.startswith("streameval: error: ") and r.stderr.count("\n") == 1


# ------------------------------------------------------------------------------ pss
HAS_PSS = importlib.util.find_spec("streameval.pss") is not None


@pytest.mark.skipif(not HAS_PSS, reason="streameval.pss is not in this checkout")
def test_pss_subcommand_is_wired_to_streameval_pss():
    r = run("pss", "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: streameval pss")


@pytest.mark.skipif(HAS_PSS, reason="streameval.pss is present")
def test_pss_subcommand_says_clearly_when_the_module_is_absent():
    assert_clean_failure(run("pss", "--help"), "no streameval.pss module")


def test_score_with_vector_columns_reports_the_intrinsic_metrics(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3)) + np.repeat(np.eye(3) * 6, 20, axis=0)
    pred = np.repeat([0, 1, 2], 20)
    true = pred.copy()
    true[::7] = (true[::7] + 1) % 3
    path = tmp_path / "vectors.csv"
    lines = ["true,pred,x,y,z"] + [f"{t},{p},{a!r},{b!r},{c!r}" for t, p, (a, b, c)
                                   in zip(true.tolist(), pred.tolist(), X.tolist())]
    path.write_text("\n".join(lines) + "\n")
    values = score_json(path, "--true", "true", "--pred", "pred", "--vector", "x", "y", "z")
    assert_matches(values, true.tolist(), pred.tolist())
    # the command feeds the rows one at a time, in file order, to the evaluator it builds
    # (intrinsic_evaluator); the floats it parses are the shortest reprs written above, so it
    # holds the same vectors, and the same updates in the same order give the same bits
    for distance, args in (("euclidean", ()), ("cosine", ("--distance", "cosine"))):
        ev = intrinsic_evaluator(distance)
        for x, p in zip(X, pred.tolist()):
            ev.update(x, p, 1)
        want = ev.get()
        got = values if distance == "euclidean" else score_json(
            path, "--true", "true", "--pred", "pred", "--vector", "x", "y", "z", *args)
        for name, value in want.items():
            assert got[name] == value, (distance, name, got[name], value)


def test_score_rejects_a_zero_vector_under_cosine_naming_the_row(tmp_path):
    path = tmp_path / "zero.csv"
    path.write_text("true,pred,x,y\na,0,1,2\na,0,0,0\n")
    r = run("score", path, "--true", "true", "--pred", "pred", "--vector", "x", "y",
            "--distance", "cosine")
    assert_clean_failure(r, f"{path}, data row 2:", "non-zero vector")
    r = run("score", path, "--true", "true", "--pred", "pred", "--vector", "x", "y",
            "--distance", "cosine", "--on-error", "skip", "--format", "json")
    assert r.returncode == 0 and "skipped 1 malformed row" in r.stderr
    assert json.loads(r.stdout)["ELM"] == 1.0


def test_import_streameval_loads_no_argparse_and_the_library_never_imports_the_cli():
    """The command line is an edge: ``import streameval`` does not load it (nor argparse), and no
    library module imports ``streameval.cli`` (the cli package imports the library)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = "import sys, streameval\nassert 'argparse' not in sys.modules\nassert 'streameval.cli' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
    package = root / "streameval"
    pattern = re.compile(r"^\s*(from\s+(\.|\.\.|streameval\.)cli\b|import\s+streameval\.cli\b|"
                         r"from\s+(\.|streameval)\s+import\s+[^\n]*\bcli\b)", re.M)
    offenders = [str(p.relative_to(root)) for p in package.rglob("*.py")
                 if "cli" not in p.relative_to(package).parts[:1] and p.name != "__main__.py"
                 and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
