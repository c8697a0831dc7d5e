"""The command line's items of the second round of breaking it: crafted checkpoints, refused
durations, unwritable report files, and ``watch -`` whose reader goes away early. Real
subprocesses throughout."""

from __future__ import annotations

import json
import subprocess

import pytest
from test_cli import SCRIPT, needs_script, run
from test_cli_hardening import one_line_error
from test_cli_watch import WATCH, rows_text, sample

from streameval.cli.checkpoint import load_checkpoint, save_checkpoint

pytestmark = needs_script


def _checkpointed(tmp_path, *extra):
    rows = sample(n=5, seed=4)
    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\n" + rows_text(rows))
    ck = tmp_path / "ck.json"
    args = ["watch", path, "--true", "truth", "--pred", "guess", *extra, "--window", 3,
            "--checkpoint", ck]
    assert run(*args).returncode == 0
    return args, ck


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
@pytest.mark.parametrize("weighted", [False, True])
def test_item09_a_checkpoint_whose_state_contradicts_itself_is_refused(tmp_path, weighted):
    args, ck = _checkpointed(tmp_path, *(["--weight", "mult"] if weighted else []))
    body = load_checkpoint(ck)
    crafted = json.loads(json.dumps(body))
    crafted["rows"] = 1000  # more rows than the table holds elements
    save_checkpoint(ck, crafted)  # with a recomputed digest
    one_line_error(run(*args, "--resume"), "inconsistent state", "1000 rows")
    if not weighted:
        crafted = json.loads(json.dumps(body))
        for cell in crafted["table"]["cells"]:
            cell[2] *= 10**6
        crafted["table"]["n"] *= 10**6
        save_checkpoint(ck, crafted)
        one_line_error(run(*args, "--resume"), "inconsistent state")
    save_checkpoint(ck, body)  # the genuine one still resumes
    assert run(*args, "--resume").returncode == 0


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_item12_a_crafted_track_f_gives_one_line_not_a_traceback(tmp_path):
    args, ck = _checkpointed(tmp_path)
    body = load_checkpoint(ck)
    body["table"]["track_f"] = [["elm", 10**400]]
    save_checkpoint(ck, body)
    one_line_error(run(*args, "--resume"), f"checkpoint {ck} refused", "track_f")


@pytest.mark.parametrize("option, value", [("--interval", "-1"), ("--interval", "nan"),
                                           ("--checkpoint-every", "nan"),
                                           ("--checkpoint-every", "inf")])
def test_item14_durations_must_be_finite_and_not_negative(tmp_path, option, value):
    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\na,b,1\n")
    r = run("watch", path, *WATCH, option, value)
    assert r.returncode == 2 and "finite number of seconds" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_item14_an_unwritable_jsonl_path_is_named(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\na,b,1\n")
    for target in (tmp_path / "no" / "such" / "dir.jsonl", "/dev/full"):
        one_line_error(run("watch", path, *WATCH, "--jsonl", target), f"--jsonl {target}")


def test_item11_watch_stdin_with_its_reader_gone_does_not_abort():
    # the producer keeps standard input open while the consumer of standard output leaves
    producer = subprocess.Popen(
        ["sh", "-c", "echo truth,guess,mult; i=0; while [ $i -lt 300 ]; do echo a$((i%5)),b,1;"
         " i=$((i+1)); sleep 0.01; done"], stdout=subprocess.PIPE)
    watch = subprocess.Popen([str(SCRIPT), "watch", "-", *WATCH, "--jsonl", "-", "--every", "1"],
                             stdin=producer.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert producer.stdout is not None and watch.stdout is not None
    producer.stdout.close()
    watch.stdout.read(10)
    watch.stdout.close()  # as `| head -c 10` does
    _, err = watch.communicate(timeout=60)
    producer.kill()
    producer.wait()
    assert watch.returncode == 1, err  # a broken pipe: status 1, never SIGABRT (-6)
    assert b"Fatal Python error" not in err


def test_a_column_named_twice_in_the_header_is_refused(tmp_path):
    """Before: ``--true t`` read the first of two columns named ``t``, silently, in ``score``
    (file or standard input) and ``watch``; the page-stream reader likewise took the first
    ``flag``."""
    from streameval.io import load_csv
    from streameval.pss import PageStreamError

    path = tmp_path / "twice.csv"
    path.write_text("t,t,p\n1,a,x\n1,b,x\n2,c,y\n")
    one_line_error(run("score", path, "--true", "t", "--pred", "p"),
                   "twice.csv, line 1: column 't' appears 2 times in the header")
    pages = tmp_path / "pages.csv"
    pages.write_text("stream,page,flag,flag\na,1,1,0\n")
    with pytest.raises(PageStreamError, match=r"the header names \['flag'\] more than once"):
        load_csv(pages)
