"""``streameval watch --follow`` across log rotation (copytruncate, rename-and-create, deletion),
and a SIGKILL loop that resumes from checkpoints, across a rotation, to exactly the values of an
uninterrupted run. Real subprocesses; every wait is bounded; nothing is timed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import time

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

import pytest
from test_cli import needs_script, run
from test_cli_watch import WATCH, finish, json_lines, paused, rows_text, sample, start, wait_for

pytestmark = needs_script

METRICS = ["--metrics", "ELM", "BCubed", "ARI", "NMI", "VI", "Purity"]
HEADER = "truth,guess,mult\n"


def append(path, text: str) -> None:
    with open(path, "a") as f:
        f.write(text)


def reported(out, rows: int):
    return lambda: [d for d in json_lines(out) if d["rows"] == rows]


def scored(path) -> dict:
    r = run("score", path, *WATCH, *METRICS, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow
def test_follow_copytruncate_rename_and_create_and_deletion(tmp_path):
    parts = [sample(n=60, seed=s) for s in range(5)]
    live = tmp_path / "live.csv"
    live.write_text(HEADER + rows_text(parts[0]))
    out = tmp_path / "out.jsonl"
    ck = tmp_path / "ck.json"
    log = tmp_path / "stderr.txt"  # read while it runs: the deletion step waits for its message
    with open(log, "w") as err:
        proc = start(live, *WATCH, *METRICS, "--follow", "--window", 40, "--every", 100000,
                     "--interval", 0.05, "--jsonl", out, "--poll", 0.02, "--checkpoint", ck,
                     stderr=err)
    total = len(parts[0])
    try:
        wait_for(reported(out, total), "the first part")
        # copytruncate: copy, then truncate in place; the writer goes on writing rows at once
        shutil.copy(live, tmp_path / "live.csv.1")
        with open(live, "r+") as f:
            f.truncate(0)
        append(live, rows_text(parts[1]))  # longer than what was read: a size check misses it
        total += len(parts[1])
        wait_for(reported(out, total), "the rows written after the truncation")
        # rename-and-create: rows still written to the old file, then a new file with a header.
        # The new file takes the path in one atomic rename, so the path is never missing (a
        # poll in between would see a deletion, which the next step tests on its own)
        os.link(live, tmp_path / "live.csv.2")
        append(tmp_path / "live.csv.2", rows_text(parts[2]))
        fresh = tmp_path / "live.csv.new"
        fresh.write_text(HEADER + rows_text(parts[3]))
        os.replace(fresh, live)
        total += len(parts[2]) + len(parts[3])
        wait_for(reported(out, total), "the renamed file's last rows and the new file")
        # deletion: the path disappears until the watcher has seen it gone (a fixed pause missed
        # it when no poll fell within the pause: the new file was then a replacement), then a
        # file appears again
        live.unlink()
        wait_for(lambda: "deleted (or moved away)" in log.read_text(), "the deletion to be seen")
        live.write_text(HEADER + rows_text(parts[4]))
        total += len(parts[4])
        wait_for(reported(out, total), "the file that appeared after the deletion")
    finally:
        code, _, _ = finish(proc)
    stderr = log.read_text()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert f"{live}: truncated" in stderr
    assert f"{live}: replaced (rotated): following the new file from its start" in stderr
    assert f"{live}: deleted (or moved away): waiting for a file to appear" in stderr
    assert f"{live}: appeared again: following the new file from its start" in stderr
    final = json_lines(out)[-1]
    assert final["final"] and final["rows"] == total and final["skipped"] == 0
    # its checkpoint describes the file now at the path: a resume is accepted and adds nothing
    again = run("watch", live, *WATCH, *METRICS, "--window", 40, "--checkpoint", ck, "--resume",
                "--jsonl", "-")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["all"] == final["all"]
    whole = tmp_path / "whole.csv"  # the concatenated input, scored in one go
    whole.write_text(HEADER + "".join(rows_text(p) for p in parts))
    want = scored(whole)
    assert final["elements"] == sum(w for p in parts for *_, w in p)
    for name, value in want.items():
        assert final["all"][name] == value, name  # the same counts, the same value code: the same bits


def checkpointed(ck) -> int:
    try:
        return json.loads(ck.read_text())["body"]["rows"]
    except (OSError, ValueError, KeyError):
        return -1


def kill(proc, ck, before: int, rng, during_write: bool, written: int) -> bool:
    """SIGKILL ``proc``: as soon as a checkpoint's temporary file appears (``during_write``; or
    once every one of the ``written`` rows is checkpointed, when no temporary will come: the
    writes were over before one was seen), or a random pause after it checkpointed past
    ``before`` rows. True if a temporary was left behind (killed mid-write)."""
    tmp = f"{ck}.tmp-{proc.pid}"
    if during_write:
        end = look = time.monotonic()
        end += 60
        while not os.path.exists(tmp) and proc.poll() is None:
            now = time.monotonic()
            if now >= look:  # the checkpoint read every 5 ms, the temporary looked for between
                if now >= end or checkpointed(ck) == written:
                    break
                look = now + 0.005
    else:
        wait_for(lambda: checkpointed(ck) > before or proc.poll() is not None,
                 "a checkpoint past the last one", timeout=120)
        time.sleep(rng.uniform(0, 0.3))
    assert proc.poll() is None, proc.communicate()[1]  # still running: not refused, not crashed
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return os.path.exists(tmp)


def kill_inside_a_checkpoint_write(proc, ck, log, written: int, feed) -> bool | None:
    """SIGKILL ``proc`` inside the write of a checkpoint, however fast the disk. Once it is idle
    -- it has resumed (its stderr ``log`` says so: the temporaries it removes at start are
    removed) and checkpointed the ``written`` rows the file holds -- its temporary
    ``CK.tmp-PID`` is created here and held under a read lease (Linux ``F_SETLEASE``); ``feed()``
    then gives it rows, and its next checkpoint blocks in opening the temporary for writing until
    the lease is let go. It is killed once the lease's break is pending (the open waiting,
    ``F_GETLEASE``), well within the kernel's ``fs.lease-break-time`` (45 s by default). True if
    the temporary was left behind; ``None`` (nothing done) where leases are refused."""
    try:
        wait_for(lambda: ("resumed from" in log.read_text() or "no checkpoint at" in
                          log.read_text()) and (written == 0 or checkpointed(ck) == written),
                 "the run to catch up", timeout=120)
        if fcntl is None or not hasattr(fcntl, "F_SETLEASE"):
            return None
        tmp = f"{ck}.tmp-{proc.pid}"
        before = checkpointed(ck)
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL))  # not one of its own
        ignore = signal.signal(signal.SIGIO, signal.SIG_IGN)  # the kernel's notice of the break
        fd = os.open(tmp, os.O_RDONLY)
        try:
            try:
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            except OSError:  # a file system without leases (NFS, ...)
                os.remove(tmp)
                return None
            feed()
            wait_for(lambda: fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_UNLCK
                     or proc.poll() is not None, "a checkpoint's write to wait on the lease",
                     timeout=120)
            assert proc.poll() is None, log.read_text()  # still running, blocked in the open
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            os.close(fd)
            signal.signal(signal.SIGIO, ignore)
    except BaseException:  # a wait timed out: no watch left running
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        raise
    assert checkpointed(ck) == before, "the held write completed (fs.lease-break-time passed?)"
    return os.path.exists(tmp)


@pytest.mark.slow
@pytest.mark.soak  # 34 killed and resumed runs: minutes (.ci/run's soak step)
def test_sigkill_loop_resumes_exactly_across_a_rotation(tmp_path):
    """34 runs, each given a chunk of new rows and killed with SIGKILL (every third inside the
    write of a checkpoint); the 17th run sees the file rotated (rename and create) under it.

    Of the runs killed in a checkpoint's write, every other one is killed as soon as the
    temporary appears (which may land after the write: where fsync costs nothing the write
    takes microseconds), the others while the write is held open
    (:func:`kill_inside_a_checkpoint_write`): those leave the temporary behind whatever the
    speed of the disk and the load, for the next run to remove."""
    rng = random.Random(13)
    chunks = [sample(n=60, seed=100 + k) for k in range(35)]
    live = tmp_path / "live.csv"
    live.write_text(HEADER)
    ck = tmp_path / "state.json"
    args = [*WATCH, *METRICS, "--window", 50, "--checkpoint", ck, "--checkpoint-rows", 5,
            "--checkpoint-every", 3600, "--every", 100000, "--interval", 0, "--jsonl", "-"]
    written = mid_write = 0
    held = []  # what each held kill left: True (the temporary), None (no lease here)
    for k in range(34):
        before = checkpointed(ck)
        rows = chunks[k + (k >= 17)]  # the run's new rows (the 17th's old-file rows aside)
        if k == 17:  # rotate under a running watcher, kill it once it checkpointed the new file
            append(live, rows_text(chunks[k]))
            written += len(chunks[k])
            proc = start(live, *args, "--follow", "--resume")
            wait_for(lambda n=written: checkpointed(ck) == n, "the old file's last rows")
            os.rename(live, tmp_path / "live.csv.1")
            live.write_text(HEADER)
            before = checkpointed(ck)
        elif k % 6 == 0:  # killed inside a held checkpoint write
            log = tmp_path / f"watch-{k}.log"
            with open(log, "w") as err:
                proc = start(live, *args, "--follow", "--resume", stderr=err)
            held.append(kill_inside_a_checkpoint_write(
                proc, ck, log, written, lambda rows=rows: append(live, rows_text(rows))))
            if held[-1] is not None:
                mid_write += held[-1]
                written += len(rows)
                continue
        else:
            proc = start(live, *args, "--follow", "--resume")
        append(live, rows_text(rows))
        written += len(rows)
        mid_write += kill(proc, ck, before, rng, during_write=k % 3 == 0, written=written)
    assert None in held or held == [True] * 6, held
    assert mid_write >= 1, mid_write
    # the last run reads to the end of the new file and stops
    resumed = run("watch", live, *args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    got = json.loads(resumed.stdout.splitlines()[-1])
    whole = tmp_path / "whole.csv"
    whole.write_text(HEADER + "".join(rows_text(c) for c in chunks))
    straight = run("watch", whole, *WATCH, *METRICS, "--window", 50, "--jsonl", "-")
    assert straight.returncode == 0, straight.stderr
    want = json.loads(straight.stdout.splitlines()[-1])
    assert got["rows"] == want["rows"] == written == 35 * 60
    assert (got["all"], got["window"], got["elements"]) == (want["all"], want["window"],
                                                           want["elements"])
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp-" in p.name) == []


# ------------------------------------------------- copytruncate, then growth before the next poll
# (and a checkpoint behind a rotation). The rows carry an id column of a chosen width, so the
# row length varies between the runs; the new file is longer than the old one, so it has grown
# past the old offset by the time the watcher wakes.
HEADER_ID = "truth,guess,mult,id\n"
SLOW_POLL = ["--poll", 1.0]  # the rewrite lands while the reader sleeps
# the reader reads the file once, hands its rows over at the end and sleeps for an hour: nothing
# written after the main thread has taken those rows is read by this process
ASLEEP = ["--poll", 3600]


def id_rows(n: int, seed: int, width: int) -> str:
    return "".join(f"{t},{p},{w},{seed * 100000 + k:0{width}d}\n"
                   for k, (t, p, w) in enumerate(sample(n=n, seed=seed)))


def copytruncate_and_rewrite(live, text: str) -> None:
    """What logrotate's copytruncate does, then the writer at once writes ``text``: all within
    microseconds, between two polls of the watcher."""
    shutil.copy(live, f"{live}.1")
    with open(live, "r+") as f:
        f.truncate(0)
        f.write(text)


def assert_counts_every_row(final: dict, tmp_path, *parts: str) -> None:
    whole = tmp_path / "whole.csv"
    whole.write_text(HEADER_ID + "".join(parts))
    want = scored(whole)
    assert final["rows"] == sum(p.count("\n") for p in parts)
    for name, value in want.items():
        assert final["all"][name] == value, name  # the same counts, the same value code: the same bits


@pytest.mark.slow
@pytest.mark.parametrize("width", [1, 9, 40])
def test_rotation_after_growth_loses_no_row(tmp_path, width):
    """Copytruncate, then growth past the old offset before
    the next poll: no row lost, no row spliced, the truncation reported. The watcher is stopped
    (SIGSTOP) across the truncation and the rewrite, so no poll can fall between them and see
    the file shorter than its offset: the growth past it is the path taken."""
    old, new = id_rows(100, 1, width), id_rows(230, 2, width)
    live = tmp_path / "live.csv"
    live.write_text(HEADER_ID + old)
    out = tmp_path / "out.jsonl"
    proc = start(live, *WATCH, *METRICS, "--follow", "--every", 100000, "--interval", 0.05,
                 "--jsonl", out, *SLOW_POLL, "--drop-block", 0)
    try:
        wait_for(reported(out, 100), "the first file's rows")
        with paused(proc):
            copytruncate_and_rewrite(live, HEADER_ID + new)
        wait_for(reported(out, 330), "every row of the rewritten file")
    finally:
        code, _, stderr = finish(proc)
    assert code == 0, stderr
    assert f"{live}: truncated" in stderr
    final = json_lines(out)[-1]
    assert final["final"] and final["skipped"] == 0
    assert_counts_every_row(final, tmp_path, old, new)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_copytruncate_with_regrowth_under_a_kill_and_resume(tmp_path, sig):
    """The same under SIGKILL (the last checkpoint is of the old file) and SIGTERM (the
    checkpoint written on exit, after the rewrite but before the reader's next poll): the resumed
    watch sees the rewrite, says so, reads the file from its start, and loses nothing.

    The first watch must not read the rewritten file before the signal: its reader makes its
    last read at the end of the old file, before handing over the rows that bring the checkpoint
    to 120, then sleeps (``ASLEEP``) through the rewrite and the signal. (With a poll of a second,
    a poll falling between the rewrite and the signal -- the test process descheduled there --
    let it read and checkpoint all 380 rows: nothing was lost, but the resumed watch then had
    neither a rotation to report nor a row to read, and the test waited for them in vain.)"""
    old, new = id_rows(120, 3, 5), id_rows(260, 4, 5)
    live = tmp_path / "live.csv"
    live.write_text(HEADER_ID + old)
    ck = tmp_path / "ck.json"
    args = [*WATCH, *METRICS, "--follow", "--every", 100000, "--interval", 0.05,
            "--checkpoint", ck, "--checkpoint-rows", 10, "--drop-block", 0]
    proc = start(live, *args, *ASLEEP, "--jsonl", tmp_path / "first.jsonl")
    wait_for(lambda: checkpointed(ck) == 120, "the old file checkpointed")
    copytruncate_and_rewrite(live, HEADER_ID + new)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert "Traceback" not in stderr
    out = tmp_path / "out.jsonl"
    proc = start(live, *args, "--resume", "--poll", 0.02, "--jsonl", out)
    try:
        wait_for(reported(out, 380), "every row of the rewritten file")
    finally:
        code, _, stderr = finish(proc)
    assert code == 0, stderr
    assert "rotated or truncated since checkpoint" in stderr and "reading it from its start" in stderr
    assert_counts_every_row(json_lines(out)[-1], tmp_path, old, new)


@pytest.mark.slow
def test_checkpoint_behind_a_rotation_does_not_refuse_resume(tmp_path):
    """A checkpoint of the old file (written while watch lagged behind a rotation,
    or before a rotation while it was not running) no longer matches the file at the path: with
    --follow, resume reads the new file from its start instead of refusing for ever; without
    --follow it refuses and says how to go on."""
    old, new = id_rows(200, 5, 3), id_rows(40, 6, 3)
    live = tmp_path / "live.csv"
    live.write_text(HEADER_ID + old)
    ck = tmp_path / "ck.json"
    args = [*WATCH, *METRICS, "--checkpoint", ck, "--drop-block", 0]
    assert run("watch", live, *args).returncode == 0
    os.rename(live, tmp_path / "live.csv.1")  # rename-and-create: a shorter file at the path
    live.write_text(HEADER_ID + new)
    refused = run("watch", live, *args, "--resume")
    assert refused.returncode == 1 and "fewer than the" in refused.stderr
    assert "with --follow, a rotated file is read from its start" in refused.stderr
    out = tmp_path / "out.jsonl"
    proc = start(live, *args, "--follow", "--resume", "--interval", 0.05, "--jsonl", out,
                 "--poll", 0.02)
    try:
        wait_for(reported(out, 240), "the new file's rows after the old file's")
    finally:
        code, _, stderr = finish(proc)
    assert code == 0, stderr
    assert "rotated or truncated since checkpoint" in stderr
    assert_counts_every_row(json_lines(out)[-1], tmp_path, old, new)
    # and once it has read the new file, its checkpoint resumes it exactly
    again = run("watch", live, *args, "--resume", "--jsonl", "-")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["rows"] == 240


@pytest.mark.slow
def test_checkpoint_while_lagging_behind_a_rotation_resumes(tmp_path):
    """The lag itself: a big first file keeps the main thread busy while the
    reader has already switched to the rotated-in file; killed then, the checkpoint describes the
    old file. The resume is accepted, and counts the new file's rows after what was checkpointed."""
    old, new = id_rows(60000, 7, 2), id_rows(50, 8, 2)
    live = tmp_path / "live.csv"
    live.write_text(HEADER_ID + old)
    ck = tmp_path / "ck.json"
    args = [*WATCH, *METRICS, "--follow", "--checkpoint", ck, "--checkpoint-rows", 500,
            "--every", 500, "--interval", 0, "--drop-block", 0]
    fresh = tmp_path / "fresh.csv"
    fresh.write_text(HEADER_ID + new)
    proc = start(live, *args, "--poll", 0.01, "--jsonl", tmp_path / "first.jsonl")
    wait_for(lambda: checkpointed(ck) > 0, "the first checkpoint")
    os.link(live, tmp_path / "live.csv.1")
    os.replace(fresh, live)  # the reader is ahead: it switches long before the main thread
    wait_for(lambda: checkpointed(ck) >= 1000, "a few checkpoints")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    body = json.loads(ck.read_text())["body"]
    lagging = body["rows"] <= 60000 and body["position"]["offset"] > live.stat().st_size
    out = tmp_path / "out.jsonl"
    proc = start(live, *args, "--resume", "--poll", 0.02, "--interval", 0.05, "--jsonl", out)
    want = body["rows"] + 50 if lagging else 60050
    try:
        wait_for(reported(out, want), "the new file's rows")
    finally:
        code, _, stderr = finish(proc)
    assert code == 0, stderr
    assert json_lines(out)[-1]["rows"] == want
    if lagging:
        assert "rotated or truncated since checkpoint" in stderr
