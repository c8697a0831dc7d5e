"""The command line's items of the second round of breaking it: crafted checkpoints, refused
durations, unwritable report files. Real subprocesses throughout."""

from __future__ import annotations

import json

import pytest
from test_cli import needs_script, run
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


def test_item14_an_unwritable_jsonl_path_is_named(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("truth,guess,mult\na,b,1\n")
    for target in (tmp_path / "no" / "such" / "dir.jsonl", "/dev/full"):
        one_line_error(run("watch", path, *WATCH, "--jsonl", target), f"--jsonl {target}")
