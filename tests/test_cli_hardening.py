"""The command line under adversarial input: huge weights, closed standard input, bad
ports, overlong lines, byte-order marks, stale temporaries, checkpoints resumed against another
input, file-level problems, exit codes; the metric-name resolver in every subcommand;
mixed label types through ``score`` against the Python API. Real subprocesses throughout.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import SCRIPT, assert_clean_failure, needs_script, run
from test_cli_watch import WATCH, rows_text, sample

pytestmark = needs_script

SCORE = ["--true", "t", "--pred", "p"]


def one_line_error(r, *fragments) -> None:
    """Exit status 1, exactly one line on standard error naming the problem, no traceback."""
    assert_clean_failure(r, *fragments)
    assert r.stderr.startswith("streameval: error: ") and r.stderr.count("\n") == 1, r.stderr


def run_closed_stdin(*args) -> subprocess.CompletedProcess:
    """The console script with file descriptor 0 closed (not merely empty)."""
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=60, stdin=None, preexec_fn=lambda: os.close(0))


# ------------------------------------------------------------------------------ item 8
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
@pytest.mark.parametrize("name, content, message", [
    ("max.csv", f"t,p,w\na,x,{2**57 - 1}\nb,y,1\n", "max.csv, line 3: weight 1 takes the total weight to"),
    ("huge.csv", "t,p,w\na,x,1" + "0" * 300 + "\n", "huge.csv, line 2: bad weight '1000000000"),
    ("huge.jsonl", '{"t": 1, "p": 2, "w": 1e300}\n', "huge.jsonl, line 1: bad weight '1e+300'"),
    ("bigint.jsonl", '{"t": 1, "p": 2, "w": 1' + "0" * 300 + "}\n", "bigint.jsonl, line 1: bad weight"),
    ("twice.jsonl", f'{{"t": 1, "p": 2, "w": {2**56}}}\n{{"t": 1, "p": 2, "w": {2**56}}}\n',
     f"twice.jsonl, line 2: weight {2**56} takes the total weight to {2**57}"),
])
def test_item8_huge_weights_are_one_line_errors(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    r = run("score", path, *SCORE, "--weight", "w")
    one_line_error(r, f"{tmp_path}/{message}")
    assert r.stdout == ""
    r = run("watch", path, *SCORE, "--weight", "w", "--jsonl", "-")
    assert_clean_failure(r, message)


def test_item8_a_skipped_huge_weight_leaves_the_rest_counted(tmp_path):
    path = tmp_path / "skip.csv"
    path.write_text(f"t,p,w\na,x,2\nb,y,{10**30}\nb,y,1\n")
    r = run("score", path, *SCORE, "--weight", "w", "--on-error", "skip", "--format", "json",
            "--metrics", "Purity")
    assert r.returncode == 0 and json.loads(r.stdout) == {"Purity": 1.0}
    assert "line 3: bad weight" in r.stderr and "too large" in r.stderr


# ------------------------------------------------------------------------------ item 9
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
@pytest.mark.parametrize("command", [["score", "-", *SCORE], ["watch", "-", *SCORE]])
def test_item9_closed_standard_input(command):
    one_line_error(run_closed_stdin(*command), "<stdin>: standard input is closed")


def test_item9_prometheus_port_out_of_range_is_a_usage_error():
    r = run("watch", "x.csv", *SCORE, "--prometheus-port", 99999)
    assert r.returncode == 2 and "a port is 0 to 65535, got '99999'" in r.stderr
    assert "Traceback" not in r.stderr
    r = run("watch", "x.csv", *SCORE, "--label", "no-equals")
    assert r.returncode == 2 and "expected KEY=VALUE" in r.stderr


# ------------------------------------------------------------------------------ item 11
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_item11_an_overlong_line_is_named_and_memory_stays_bounded(tmp_path):
    path = tmp_path / "long.csv"
    path.write_bytes(b"t,p\na,x\n" + b"b," + b"y" * 3_000_000 + b"\nc,z\n")
    one_line_error(run("score", path, *SCORE),
                   f"{path}, line 3: line longer than 1048576 bytes")
    r = run("score", path, *SCORE, "--on-error", "skip", "--format", "json", "--metrics", "ELM")
    assert r.returncode == 0 and json.loads(r.stdout) == {"ELM": 1.0}
    assert "line 3: line longer than" in r.stderr
    # /dev/zero never ends a line: stopped at once, with the cap in force
    r = run("score", "/dev/zero", *SCORE, "--input-format", "csv", "--max-line-bytes", 4096,
            timeout=30)
    one_line_error(r, "/dev/zero, line 1: line longer than 4096 bytes")


# ------------------------------------------------------------------------------ item 14
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_item14_a_utf8_bom_is_not_part_of_the_first_column(tmp_path):
    csv = tmp_path / "bom.csv"
    csv.write_bytes(b"\xef\xbb\xbft,p\na,x\na,y\n")
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes(b'\xef\xbb\xbf{"t": "a", "p": "x"}\n{"t": "a", "p": "y"}\n')
    for path in (csv, jsonl):
        r = run("score", path, *SCORE, "--format", "json", "--metrics", "Purity")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == {"Purity": 1.0}
        r = run("watch", path, *SCORE, "--jsonl", "-", "--window", 0)
        assert r.returncode == 0 and json.loads(r.stdout)["rows"] == 2, r.stderr


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_item14_stale_checkpoint_temporaries_are_removed(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\n" + rows_text(sample(n=20)))
    ck = tmp_path / "ck.json"
    dead = tmp_path / "ck.json.tmp-4194999"  # above any pid_max: no such process
    dead.write_text("{half a checkpo")
    alive = tmp_path / f"ck.json.tmp-{os.getpid()}"  # this test's own process: left alone
    alive.write_text("{")
    r = run("watch", path, *WATCH, "--checkpoint", ck)
    assert r.returncode == 0, r.stderr
    assert not dead.exists() and alive.exists()
    assert f"removed {dead}" in r.stderr
    assert json.loads(ck.read_text())["body"]["rows"] == 20


def test_item14_checkpoint_timer_starts_after_the_write(tmp_path, monkeypatch, capsys):
    """A checkpoint slower than --checkpoint-every must not make every batch checkpoint: the
    clock (a fake one, advanced 1 s per reading and 100 s per save) restarts after the write."""
    from streameval import cli
    from streameval.cli import watch
    from streameval.cli.feed import Feed

    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\n" + rows_text(sample(n=1000)))
    clock = [0.0]

    def monotonic():
        clock[0] += 1.0
        return clock[0]

    saves, takes = [], []
    real_save, real_take = watch.save_checkpoint, Feed.take

    def slow_save(p, body):
        clock[0] += 100.0
        saves.append(body["rows"])
        real_save(p, body)

    def small_take(self, timeout, most=8192):
        takes.append(1)
        return real_take(self, timeout, most=20)

    monkeypatch.setattr(watch.time, "monotonic", monotonic)
    monkeypatch.setattr(watch, "save_checkpoint", slow_save)
    monkeypatch.setattr(Feed, "take", small_take)
    monkeypatch.setattr(watch.WatchRun, "CHUNK", 1)  # a row per item: many small batches
    # (from the columnar reader too: blocks of 5 rows, as it holds at most two waiting blocks and
    # its thread sleeps 5 ms while two wait, so that a block a row would cost seconds)
    monkeypatch.setattr(watch.WatchRun, "CHUNK_BLOCK", 5)
    status = cli.main(["watch", str(path), *WATCH, "--checkpoint", str(tmp_path / "ck.json"),
                       "--checkpoint-every", "50", "--interval", "0", "--drop-block", "0"])
    assert status == 0
    assert len(takes) >= 50 and saves[-1] == 1000
    # each loop reads the clock about twice: 50 s between saves means many loops between them
    assert len(saves) <= len(takes) // 10, (len(saves), len(takes))
    capsys.readouterr()


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty (no header line)"),
    (b"a,b,c\n1,2,3\n", "no column 'truth' in the header"),
])
def test_item14_file_level_problems_are_reported_as_such(tmp_path, content, message):
    path = tmp_path / "whole.csv"
    path.write_bytes(content)
    r = run("watch", path, *WATCH)
    assert_clean_failure(r, message)
    assert "stopped by a problem with the input as a whole: 0 rows" in r.stdout
    assert "malformed row" not in r.stdout


# ------------------------------------------------------------------------------ item 15
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_item15_missing_files_and_exit_codes_agree_across_subcommands(tmp_path):
    missing = tmp_path / "nope"
    for r in (run("score", f"{missing}.csv", *SCORE), run("score", f"{missing}.parquet", *SCORE),
              run("watch", f"{missing}.csv", *SCORE)):
        one_line_error(r, f"{missing}.", "No such file or directory")
        assert "[Errno" not in r.stderr
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"s": [1, 0, 1]}))
    r = run("pss", gold, f"{missing}.json")
    assert r.returncode == 1 and "[Errno" not in r.stderr and "No such file or directory" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"s": [1, 7, 1]}))
    r = run("pss", gold, bad)  # bad input: 1 in every subcommand (was 2 in pss)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


# ------------------------------------------------------------------------------ item 6
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_item6_a_checkpoint_refuses_another_input_with_the_same_header(tmp_path):
    path = tmp_path / "r.csv"
    first = sample(n=60, seed=1)
    path.write_text("truth,guess,mult\n" + rows_text(first))
    ck = tmp_path / "ck.json"
    args = ["watch", path, *WATCH, "--window", 10, "--checkpoint", ck]
    assert run(*args).returncode == 0
    saved = ck.read_text()
    assert json.loads(saved)["body"]["position"]["fingerprint"]["bytes"] == path.stat().st_size
    # the same header, longer, other rows: resuming would skip and mis-split rows
    path.write_text("truth,guess,mult\n" + rows_text(sample(n=200, seed=2)))
    r = run(*args, "--resume")
    assert_clean_failure(r, f"checkpoint {ck} refused", "are not those it consumed")
    assert ck.read_text() == saved
    # the same file grown: accepted, and continues where it stopped
    more = sample(n=40, seed=3)
    path.write_text("truth,guess,mult\n" + rows_text(first) + rows_text(more))
    r = run(*args, "--resume", "--jsonl", "-")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["rows"] == 100


# ------------------------------------------------------------------------------ fuzz
PIECES = st.sampled_from([
    b"t,p,w\n", b"a,b,1\n", b"\xef\xbb\xbf", b"\x00", b"a\x00,b\x00,1\n", b"1" * 400 + b"\n",
    b"x" * 5000, str(2**63).encode(), b"1e300", b"9" * 5000, b"-0", b"nan", b"inf",
    b'{"t": 1, "p": 2, "w": 1e309}\n', b'{"t": "\\u0000", "p": [1], "w": 1}\n', b",,,\n",
    b'"unterminated\n', b"\r\n", b"\xff\xfe", b"\n",
])


@pytest.mark.slow
@pytest.mark.soak  # 40 examples, a process each: minutes (.ci/run's soak step)
@settings(max_examples=40, deadline=None)
@given(parts=st.lists(PIECES, max_size=12), fmt=st.sampled_from(["csv", "tsv", "jsonl"]),
       command=st.sampled_from(["score", "watch"]), skip=st.booleans())
def test_fuzz_huge_numbers_nul_bytes_boms_overlong_lines(tmp_path_factory, parts, fmt, command,
                                                         skip):
    path = tmp_path_factory.mktemp("fuzz") / f"input.{fmt}"
    path.write_bytes(b"".join(parts))
    args = [command, path, *SCORE, "--weight", "w", "--max-line-bytes", 4096]
    args += ["--format", "json"] if command == "score" else ["--jsonl", "-", "--window", 3]
    r = run(*args, *(["--on-error", "skip"] if skip else []))
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (0, 1), r.stderr
    if r.returncode == 1:
        errors = [line for line in r.stderr.splitlines() if line.startswith("streameval: error: ")]
        assert len(errors) == 1, r.stderr
        if command == "score":
            assert r.stderr.count("\n") == 1, r.stderr
    else:
        json.loads(r.stdout.splitlines()[-1])


# ------------------------------------------------------------------------------ resolver
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_metric_names_resolve_the_same_in_every_subcommand(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("t,p\n1,a\n1,a\n2,b\n2,a\n3,c\n")
    names = ["ARI", "nmi", "adjusted_mutual_info_score", "VI", "v_measure_score", "BCubed"]
    want = ["AdjustedRand", "NormalizedMutualInfo", "AdjustedMutualInfo",
            "VariationOfInformation", "VBeta", "BCubed"]
    r = run("score", path, *SCORE, "--format", "json", "--metrics", *names)
    assert r.returncode == 0, r.stderr
    scored = json.loads(r.stdout)
    assert list(scored) == want
    r = run("watch", path, *SCORE, "--jsonl", "-", "--window", 0, "--metrics", ",".join(names))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["all"] == scored
    from sklearn import metrics as sk

    # both divide exact integers once (scikit-learn's below 2**53 convert exactly): the same
    # correctly rounded quotient
    assert scored["AdjustedRand"] == sk.adjusted_rand_score([1, 1, 2, 2, 3], list("aabac"))
    # 'all' is the same set everywhere: score, watch and Evaluator()
    import streameval

    r = run("score", path, *SCORE, "--format", "json", "--metrics", "all")
    assert list(json.loads(r.stdout)) == list(streameval.Evaluator().metrics)
    r = run("watch", path, *SCORE, "--jsonl", "-", "--window", 0, "--metrics", "all")
    assert list(json.loads(r.stdout)["all"]) == list(streameval.Evaluator("all").metrics)
    one_line_error(run("score", path, *SCORE, "--metrics", "ARI", "nope"),
                   "unknown metric 'nope'", "ARI, RI, NMI")


def test_pss_takes_the_same_metric_names(tmp_path):
    gold, pred = tmp_path / "g.json", tmp_path / "p.json"
    gold.write_text(json.dumps({"s": [1, 0, 1, 0, 0]}))
    pred.write_text(json.dumps({"s": [1, 1, 1, 0, 0]}))
    r = run("pss", gold, pred, "--format", "json", "--metrics", "ARI", "nmi,ELM")
    assert r.returncode == 0, r.stderr
    names = [k for k in json.loads(r.stdout)["metrics"] if "." not in k]  # ELM.precision, ...
    assert names == ["AdjustedRand", "NormalizedMutualInfo", "ELM"]


# ------------------------------------------------------------------------------ mixed labels
LABELS = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, 1.0, -0.0, 2.5]), st.booleans(),
    st.sampled_from(["1", "a", "a\x00", "True", "", "\x00"]), st.none(),
)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.tuples(LABELS, LABELS, st.integers(1, 3)), min_size=1, max_size=30))
def test_mixed_label_types_through_score_agree_with_the_python_api(tmp_path_factory, rows):
    """JSON lines keep their types: ``score`` must count the clusters ``Evaluator.update`` counts
    and give its values (missing labels skipped by both)."""
    from streameval import Evaluator

    path = tmp_path_factory.mktemp("mixed") / "rows.jsonl"
    path.write_text("".join(json.dumps({"t": t, "p": p, "w": w}) + "\n" for t, p, w in rows))
    r = run("score", path, *SCORE, "--weight", "w", "--format", "json", "--on-error", "skip")
    assert r.returncode == 0, r.stderr
    ev = Evaluator()
    kept = [(t, p, w) for t, p, w in rows if t not in (None, "") and p not in (None, "")]
    for t, p, w in kept:
        ev.update(t, p, w)
    header = run("score", path, *SCORE, "--weight", "w", "--on-error", "skip")
    first = header.stdout.splitlines()[0]
    assert f"{len(kept)} rows, {ev.table.n} elements, {ev.table.k_true} true clusters, " \
           f"{ev.table.k_pred} predicted clusters" in first
    got = json.loads(r.stdout)
    for name, value in ev.get().items():
        if value == value and np.isfinite(value):
            assert got[name] == value, name  # the same counts, the same value code: the same bits


# ------------------------------------------------------------------------------ watch's tables
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 4), st.sampled_from("abcd"), st.integers(1, 3)),
                     max_size=80),
       size=st.integers(1, 12), cuts=st.lists(st.integers(0, 80), max_size=8))
def test_watch_tables_catch_up_to_the_values_of_row_by_row_updates(rows, size, cuts):
    """``watch`` takes rows in O(1) and brings its tables up to date at reports: at any flush
    point, all time and window equal an Evaluator and a CountWindow updated row by row."""
    from streameval import CountWindow, Evaluator
    from streameval.cli.watch_state import WatchState
    from streameval.metrics import resolve

    classes = resolve("ELM BCubed ARI NMI VI Purity")
    state = WatchState(classes, size)
    ev, win = Evaluator([c() for c in classes]), CountWindow(size, [c() for c in classes])
    for k, row in enumerate(rows, 1):
        state.take_rows([row])
        ev.update(*row)
        win.update(*row)
        if k in cuts or k == len(rows):
            values = state.values()
            assert values["all"] == ev.get() and values["window"] == win.get()
            assert state.win.table == win.evaluator.table and state.window_rows() == list(win)


def test_the_status_line_fits_the_terminal():
    from streameval.cli.watch import status_line

    values = {"rows": 123456, "skipped": 7, "drop": True,
              "all": {f"Metric{k}": 0.5 for k in range(20)},
              "window": {f"Metric{k}": 0.25 for k in range(20)}}
    for width in (80, 120, 200):  # the counts and one metric always show
        line = status_line(values, 1000, width)
        assert len(line) < width and line.startswith("rows 123456 | skipped 7 | DROP | all/last 1000: ")
        shown = line.count("/0.2500")
        assert shown >= 1 and line.endswith(f"+{20 - shown} more")
    wide = status_line(values, 1000, 10_000)
    assert wide.count("/0.2500") == 20 and "more" not in wide


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([0, 1, 2, "a", True, 1.0]), st.sampled_from("xyz"),
                               st.integers(1, 5)), min_size=1, max_size=90),
       block=st.integers(1, 12), name=st.sampled_from(["ELM", "BCubed", "AdjustedRand", "VI"]),
       cut=st.integers(0, 90))
def test_watch_drop_detection_is_the_monitors_block_values_and_drops(rows, block, name, cut):
    """watch feeds rows in bulk to the library's BlockDrops: each block value is, to the bit, the
    metric over a table of the block's elements, and the drops are those of a Monitor fed the
    same rows one by one (one detector implementation, no copy in the command line)."""
    from streameval import Evaluator, Monitor
    from streameval.cli.watch_state import WatchState
    from streameval.detect import BlockDrops, Cusum
    from streameval.metrics import resolve

    (cls,) = resolve(name)
    state = WatchState([cls], 0, BlockDrops(cls(), block, Cusum(reference=2, h=0.5)))
    state.take_rows(rows[:cut])
    state.flush()
    state.take_rows(rows[cut:])
    state.flush()
    mon = Monitor([cls()], window=None, watch=cls.__name__, block=block,
                  detector=Cusum(reference=2, h=0.5))
    for t, p, w in rows:
        mon.update(t, p, w)
    expected = []
    for k in range(0, len(rows) - len(rows) % block, block):
        ev = Evaluator([cls()])
        for row in rows[k:k + block]:
            ev.update(*row)
        expected.append(ev.get()[cls.__name__])
    assert state.drops is not None
    same = [repr(v) for v in expected]  # to the bit (repr: NaN equals NaN)
    assert [repr(v) for v in state.drops.values] == [repr(v) for v in mon.block_values] == same
    assert state.drops.drops == mon.drops
