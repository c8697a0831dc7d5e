"""``streameval watch``, run for real: a growing file, standard input, windows, the Prometheus
endpoint over loopback, checkpoints (kill, resume, refuse), Ctrl-C.

Every test bounds its waits; none times anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from contingency_rounding import within
from test_cli import SCRIPT, assert_clean_failure, labelled_rows, needs_script, reference, run

pytestmark = needs_script

WATCH = ["--true", "truth", "--pred", "guess", "--weight", "mult"]


def rows_text(rows) -> str:
    return "".join(f"{t},{p},{w}\n" for t, p, w in rows)


def expected(rows) -> dict:
    ts = [t for t, _, w in rows for _ in range(w)]
    ps = [p for _, p, w in rows for _ in range(w)]
    return reference(ts, ps)


def assert_values(values: dict, rows) -> None:
    for name, want in expected(rows).items():  # (exact value, streameval's rounding bound)
        assert within(values[name], want), (name, values[name], want)


def sample(n=400, seed=0):
    t, p, w = labelled_rows(seed=seed, n=n)
    return list(zip(t, p, w))


def start(*args, stderr=subprocess.PIPE) -> subprocess.Popen:
    """``streameval watch ARGS`` running; its standard error piped, or into ``stderr`` (an open
    file, which a test can read while it runs)."""
    return subprocess.Popen([str(SCRIPT), "watch", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=stderr, stdin=subprocess.DEVNULL, text=True)


def wait_for(predicate, what: str, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def json_lines(path) -> list:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def finish(proc: subprocess.Popen, sig=signal.SIGINT):
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


@contextlib.contextmanager
def paused(proc):
    """``proc`` (a child process) stopped while the block runs: SIGSTOP, then wait until the
    kernel reports it stopped (``waitpid`` with ``WUNTRACED`` returns once every thread of it has
    stopped: none is inside a read), and SIGCONT after the block."""
    proc.send_signal(signal.SIGSTOP)
    try:
        pid, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert pid == proc.pid and os.WIFSTOPPED(status), status
        yield
    finally:
        proc.send_signal(signal.SIGCONT)


# ------------------------------------------------------------------------------ whole files
@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_watch_a_file_to_its_end_all_time_and_window(tmp_path):
    rows = sample()
    path = tmp_path / "rows.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows))
    out = tmp_path / "out.jsonl"
    r = run("watch", path, *WATCH, "--window", 50, "--every", 100, "--interval", 0, "--jsonl", out)
    assert r.returncode == 0, r.stderr
    lines = json_lines(out)
    assert [d["rows"] for d in lines] == [100, 200, 300, 400, 400]
    assert [d["final"] for d in lines] == [False] * 4 + [True]
    assert_values(lines[-1]["all"], rows)
    assert_values(lines[-1]["window"], rows[-50:])
    assert_values(lines[1]["window"], rows[150:200])
    assert lines[-1]["elements"] == sum(w for *_, w in rows)
    text = r.stdout.splitlines()
    assert text[0].startswith("rows 100 | skipped 0 | all/last 50: ELM ")
    assert all(len(line) < 120 for line in text if line.startswith("rows "))  # fits a terminal
    assert "final report, end of input: 400 rows" in r.stdout
    table = text[text.index(next(line for line in text if line.startswith("metric "))):]
    assert table[0].split() == ["metric", "all", "time", "last", "50"]
    assert table[1].split()[0] == "ELM" and len(table) == 1 + len(lines[-1]["all"])


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_watch_standard_input_as_json_lines(tmp_path):
    rows = sample(seed=2)
    body = "".join(json.dumps({"truth": t, "guess": p, "mult": w}) + "\n" for t, p, w in rows)
    r = run("watch", "-", *WATCH, "--input-format", "jsonl", "--every", 1000, "--interval", 0,
            "--jsonl", "-",
            "--metrics", "ELM", "BCubed", "AdjustedRand", input=body)
    assert r.returncode == 0, r.stderr
    (final,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert final["final"] and final["rows"] == 400 and set(final["all"]) == {"ELM", "BCubed", "AdjustedRand"}
    want = expected(rows)
    for name in final["all"]:
        assert within(final["all"][name], want[name]), (name, final["all"][name], want[name])


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_watch_bad_row_stops_or_is_skipped(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("truth,guess,mult\na,x,1\nb,y,zero\nb,y,2\n")
    r = run("watch", path, *WATCH, "--window", 0)
    assert_clean_failure(r, f"{path}, line 3: bad weight 'zero' in column 'mult'")
    assert "stopped at a malformed row: 1 rows" in r.stdout
    r = run("watch", path, *WATCH, "--window", 0, "--on-error", "skip", "--jsonl", "-")
    assert r.returncode == 0, r.stderr
    final = json.loads(r.stdout.splitlines()[-1])
    assert (final["rows"], final["skipped"], final["elements"]) == (2, 1, 3)
    assert f"{path}, line 3: bad weight" in r.stderr


# ------------------------------------------------------------------------------ live streams
APPENDER = """
import sys, time
path, text, chunks = sys.argv[1], sys.stdin.read(), int(sys.argv[2])
lines = text.splitlines(keepends=True)
size = -(-len(lines) // chunks)
for k in range(0, len(lines), size):
    with open(path, "a") as f:
        part = "".join(lines[k:k + size])
        f.write(part[: len(part) // 2]); f.flush(); time.sleep(0.05)  # a line cut mid-write
        f.write(part[len(part) // 2 :])
    time.sleep(0.15)
"""


@pytest.mark.slow
def test_follow_a_file_another_process_appends_to_then_ctrl_c(tmp_path):
    rows = sample(seed=3)
    path = tmp_path / "live.csv"
    path.write_text("truth,guess,mult\n")
    out, ck = tmp_path / "live.jsonl", tmp_path / "live.ckpt.json"
    proc = start(path, *WATCH, "--follow", "--window", 100, "--every", 60, "--interval", 0,
                 "--jsonl", out, "--checkpoint", ck, "--prometheus-port", 0)
    port = served_port(proc)
    writer = subprocess.run([sys.executable, "-c", APPENDER, str(path), "8"], input=rows_text(rows),
                            text=True, timeout=60)
    assert writer.returncode == 0
    wait_for(lambda: [d for d in json_lines(out) if d["rows"] == 360], "360 rows to be reported")
    # Ctrl-C once every row is taken (the endpoint counts them; no line is due after 360): the
    # 360 line alone can come from the first half of the last append, with the rest not yet read
    wait_for(lambda: scrape(port).get("streameval_rows_total") == 400, "all 400 rows to be taken")
    code, stdout, stderr = finish(proc, signal.SIGINT)
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert "final report, interrupted (Ctrl-C): 400 rows" in stdout
    final = json_lines(out)[-1]
    assert final["final"] and final["rows"] == 400
    assert_values(final["all"], rows)
    assert_values(final["window"], rows[-100:])
    assert [d["rows"] for d in json_lines(out)[:-1]] == list(range(60, 400, 60))
    saved = json.loads(ck.read_text())  # saved on exit
    assert saved["body"]["rows"] == 400 and saved["body"]["position"]["line"] == 401


@pytest.mark.slow
def test_a_line_every_t_seconds_when_rows_arrived(tmp_path):
    rows = sample(n=15, seed=9)
    path = tmp_path / "slow.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows[:10]))
    out = tmp_path / "slow.jsonl"
    proc = start(path, *WATCH, "--follow", "--every", 1000, "--interval", 0.3, "--jsonl", out)
    try:
        wait_for(lambda: [d for d in json_lines(out) if d["rows"] == 10], "a timed line at 10 rows")
        with open(path, "a") as f:
            f.write(rows_text(rows[10:]))
        wait_for(lambda: [d for d in json_lines(out) if d["rows"] == 15], "a timed line at 15 rows")
    finally:
        code, _, stderr = finish(proc)
    assert code == 0, stderr
    reports = json_lines(out)
    timed = [d["rows"] for d in reports if not d["final"]]
    assert timed[0] == 10 and timed[-1] == 15
    assert all(a < b for a, b in zip(timed, timed[1:]))  # no line while nothing arrived
    assert reports[-1]["final"] and reports[-1]["rows"] == 15
    assert_values(reports[-1]["all"], rows)


def served_port(proc: subprocess.Popen) -> int:
    """The port of ``watch --prometheus-port 0``'s endpoint, from its first line on stderr."""
    line = proc.stderr.readline()
    match = re.search(r"serving Prometheus metrics on http://127\.0\.0\.1:(\d+)/metrics", line)
    assert match, line
    return int(match.group(1))


def scrape(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("streameval_"):
            key, value = line.rsplit(" ", 1)
            values[key] = float(value)
    return values


@pytest.mark.slow
def test_prometheus_endpoint_on_loopback(tmp_path):
    rows = sample(seed=4)
    path = tmp_path / "prom.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows))
    proc = start(path, *WATCH, "--follow", "--window", 50, "--prometheus-port", 0,
                 "--metrics", "ELM", "AdjustedRand")
    try:
        port = served_port(proc)
        values = wait_for(lambda: (v := scrape(port)).get("streameval_rows_total") == 400 and v,
                          "the endpoint to show 400 rows")
    finally:
        code, _, stderr = finish(proc)
    assert code == 0, stderr
    want_all, want_window = expected(rows), expected(rows[-50:])
    assert values["streameval_elements_total"] == sum(w for *_, w in rows)
    assert values["streameval_rows_skipped_total"] == 0
    for name in ("ELM", "AdjustedRand"):
        # the exposition writes repr(float), which parses back to the same float
        assert within(values[f'streameval_metric{{metric="{name}",scope="all"}}'], want_all[name]), name
        assert within(values[f'streameval_metric{{metric="{name}",scope="window"}}'], want_window[name]), name
    assert 'metric="BCubed"' not in str(values)


# ------------------------------------------------------------------------------ checkpoints
@pytest.mark.slow
def test_checkpoint_kill_resume_equals_an_uninterrupted_run(tmp_path):
    rows = sample(n=600, seed=5)
    path = tmp_path / "stream.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows[:350]))
    ck = tmp_path / "state.json"
    base = [*WATCH, "--window", 120, "--jsonl", "-"]
    args = [*base, "--checkpoint", ck, "--checkpoint-rows", 50]
    proc = start(path, *args, "--follow", "--checkpoint-every", 3600)
    wait_for(lambda: ck.exists() and json.loads(ck.read_text())["body"]["rows"] == 350,
             "a checkpoint at row 350")
    proc.kill()  # SIGKILL: no chance to save anything more
    proc.wait(timeout=30)
    with open(path, "a") as f:
        f.write(rows_text(rows[350:]))
    resumed = run("watch", path, *args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed from {ck}: 350 rows, line 351" in resumed.stderr
    whole = run("watch", path, *base)
    assert whole.returncode == 0, whole.stderr
    a, b = json.loads(resumed.stdout.splitlines()[-1]), json.loads(whole.stdout.splitlines()[-1])
    assert a["rows"] == b["rows"] == 600
    assert (a["all"], a["window"], a["elements"]) == (b["all"], b["window"], b["elements"])
    assert_values(a["all"], rows)
    assert_values(a["window"], rows[-120:])


@pytest.mark.slow
def test_sigterm_saves_the_checkpoint_and_resume_continues(tmp_path):
    rows = sample(seed=6)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"truth": t, "guess": p, "mult": w}) + "\n" for t, p, w in rows))
    ck = tmp_path / "ck.json"
    proc = start(path, *WATCH, "--follow", "--window", 30, "--checkpoint", ck, "--jsonl", "-",
                 "--every", 400, "--interval", 0)
    wait_for(lambda: proc.stdout.readline(), "the first report")
    code, stdout, stderr = finish(proc, signal.SIGTERM)
    assert code == 0, stderr
    body = json.loads(ck.read_text())["body"]
    assert body["rows"] == 400 and body["window"]["size"] == 30 and len(body["window"]["items"]) == 30
    r = run("watch", path, *WATCH, "--window", 30, "--checkpoint", ck, "--resume", "--jsonl", "-")
    assert r.returncode == 0, r.stderr
    final = json.loads(r.stdout.splitlines()[-1])
    assert final["rows"] == 400
    assert_values(final["all"], rows)
    assert_values(final["window"], rows[-30:])


@pytest.mark.slow
def test_corrupt_or_foreign_checkpoints_are_refused(tmp_path):
    rows = sample(n=50, seed=7)
    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows))
    ck = tmp_path / "ck.json"
    args = ["watch", path, *WATCH, "--window", 10, "--checkpoint", ck]
    assert run(*args).returncode == 0
    good = ck.read_text()

    def refused(content, *fragments, extra=()):
        ck.write_text(content)
        r = run(*args, *extra, "--resume")
        assert_clean_failure(r, f"checkpoint {ck} refused: ", *fragments)
        assert r.stdout == ""
        assert ck.read_text() == content  # a refused checkpoint is left as it was

    refused(good[: len(good) // 2], "not valid JSON (corrupt or truncated)")
    refused('{"format": "someone.else", "body": {}}', "not a streameval watch checkpoint")
    doc = json.loads(good)
    doc["body"]["rows"] += 1  # a change that is still valid JSON
    refused(json.dumps(doc), "checksum does not match")
    refused(good, "window size is 10, but --window is 20", extra=("--window", 20))
    refused(good, "written for another input", extra=("--weight", "guess"))
    other = tmp_path / "other.csv"
    other.write_text(path.read_text())
    r = run("watch", other, *WATCH, "--window", 10, "--checkpoint", ck, "--resume")
    assert_clean_failure(r, "written for another input")


@pytest.mark.slow
def test_a_truncated_or_changed_input_is_refused_on_resume(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\n" + rows_text(sample(n=80, seed=8)))
    ck = tmp_path / "ck.json"
    args = ["watch", path, *WATCH, "--checkpoint", ck]
    assert run(*args).returncode == 0
    path.write_text("truth,guess,mult\na,x,1\n")
    assert_clean_failure(run(*args, "--resume"), "was it truncated or replaced?")
    path.write_text("guess,truth,mult\n" + rows_text(sample(n=120, seed=8)))  # columns swapped
    assert_clean_failure(run(*args, "--resume"), "are not those it consumed")


def test_watch_json_lines_say_what_broke_and_when_the_drop_was_flagged(tmp_path):
    """JSON lines carry the window's error account (splits, merges, the top lists; as the
    library's ErrorAccount computes it) and the time of the last drop."""
    from streameval import Contingency, ErrorAccount

    steady = [(f"e{i % 3}", f"c{i % 3}", 1) for i in range(600)]
    broken = [("e0", f"s{i % 4}", 1) if i % 2 else ("e1", "m", 1) for i in range(40)]
    broken += [("e2", "m", 1)] * 10
    path = tmp_path / "rows.csv"
    path.write_text("truth,guess,mult\n" + rows_text(steady + broken))
    r = run("watch", path, *WATCH, "--window", 50, "--drop-block", 10, "--top", 2,
            "--jsonl", "-")
    assert r.returncode == 0, r.stderr
    final = json.loads(r.stdout.splitlines()[-1])
    table = Contingency()
    for t, p, w in broken:
        table.update(t, p, w)
    assert final["broke"] == ErrorAccount(table).report(2)
    assert final["broke"]["split_entities"][0]["entity"] == "e0"  # across s0..s3
    assert final["broke"]["merging_clusters"][0]["cluster"] == "m"  # e1 and e2
    assert final["drops"] >= 1 and 0 < time.time() - final["last_drop"] < 600
    assert final["drop_interval"] is not None and final["drop_reference"] is not None


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_watch_format_json_is_accepted_like_the_other_subcommands(tmp_path):
    """``watch --format json`` (as ``score``/``compare`` spell it) writes the
    JSON lines to standard output, exactly as ``--jsonl -``; with ``--jsonl PATH`` it is refused."""
    rows = sample(120)
    path = tmp_path / "rows.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows))
    common = (path, *WATCH, "--every", 50, "--interval", 0, "--drop-block", 0)
    by_format = run("watch", *common, "--format", "json")
    assert by_format.returncode == 0, by_format.stderr
    lines = [json.loads(line) for line in by_format.stdout.splitlines()]
    assert [v["rows"] for v in lines] == [50, 100, 120] and lines[-1]["final"]
    assert_values(lines[-1]["all"], rows)
    by_jsonl = run("watch", *common, "--jsonl", "-")
    strip = [{k: v for k, v in json.loads(line).items() if k != "time"} for line in by_jsonl.stdout.splitlines()]
    assert strip == [{k: v for k, v in d.items() if k != "time"} for d in lines]
    both = run("watch", *common, "--format", "json", "--jsonl", tmp_path / "out.jsonl")
    assert_clean_failure(both, "--format json writes the JSON lines to standard output")
