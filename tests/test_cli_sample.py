"""``score --sample`` and ``watch --sample``: a file whose truth field is empty for unlabelled rows
gives the labelled-sample estimates ± standard error (the real console script, in subprocesses;
the expected values from :class:`streameval.SampleEstimator` in-process on the same rows)."""

from __future__ import annotations

import json
import math

import pytest
from test_cli import needs_script, run

import streameval as se

pytestmark = needs_script

ROWS = [("c1", 1), ("c1", 1), ("c1", 2), ("c2", 3), ("c2", 2), ("", 4), ("", 4), ("c4", 4),
        ("c5", 5), ("", 5), ("c6", 6), ("c6", 6)]


def _file(tmp_path, ext="csv"):
    path = tmp_path / f"rows.{ext}"
    if ext == "csv":
        path.write_text("truth,pred\n" + "".join(f"{t},{p}\n" for t, p in ROWS))
    else:
        path.write_text("".join(json.dumps({"truth": t or None, "pred": p}) + "\n"
                                for t, p in ROWS))
    return path


def _expected(design):
    est = se.SampleEstimator(design=design)
    for t, p in ROWS:
        est.update(t or None, str(p))
    return est


def _same(got, want):
    return got == want if want is not None else got is None  # the same estimator, rows, order: the same bits


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
@pytest.mark.parametrize("design", ["uniform", "size"])
def test_score_sample_json_equals_the_estimator(tmp_path, ext, design):
    r = run("score", _file(tmp_path, ext), "--true", "truth", "--pred", "pred", "--sample",
            design, "--format", "json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = _expected(design)
    for name, e in want.get().items():
        for field, v in zip(("value", "stderr", "low", "high"), e[:4]):
            expect = v if math.isfinite(v) else None
            assert _same(got[name][field], expect), (name, field, got[name], e)
    assert got["labelled_share"] == want.labelled_share
    assert got["sampled_entities"] == want.n_sampled == 5


def test_score_sample_table_and_the_error_without_sample(tmp_path):
    path = _file(tmp_path)
    r = run("score", path, "--true", "truth", "--pred", "pred", "--sample", "uniform")
    assert r.returncode == 0, r.stderr
    assert "12 rows, 12 elements, 9 labelled (75.0%), 5 sampled entities" in r.stdout
    line = next(x for x in r.stdout.splitlines() if x.startswith("pairwise_precision "))
    e = _expected("uniform").get()["pairwise_precision"]
    assert line.split()[1:] == [f"{x:.6f}" for x in e[:4]]  # the table prints each float to 6 places
    r = run("score", path, "--true", "truth", "--pred", "pred")
    assert r.returncode == 1 and "missing true label (column 'truth' is empty)" in r.stderr


@pytest.mark.slow  # subprocesses: seconds of CPU, out of the quick loop
def test_watch_sample_reports_estimates_and_resumes_from_its_checkpoint(tmp_path):
    path = _file(tmp_path)
    ck = tmp_path / "ck.json"
    r = run("watch", path, "--true", "truth", "--pred", "pred", "--sample", "size", "--jsonl",
            "-", "--checkpoint", ck)
    assert r.returncode == 0, r.stderr
    last = json.loads(r.stdout.strip().splitlines()[-1])
    want = _expected("size")
    e = want.get()["bcubed_recall"]
    assert last["all"]["bcubed_recall"] == e.value  # the same estimator, rows and order: the same bits
    assert last["estimates"]["bcubed_recall"]["high"] == e.high
    assert last["labelled_share"] == 0.75  # 9 / 12, correctly rounded
    saved = se.SampleEstimator.from_dict(json.loads(ck.read_text())["body"]["sample"])
    assert saved == want
    r = run("watch", path, "--true", "truth", "--pred", "pred", "--sample", "uniform",
            "--checkpoint", ck, "--resume")
    assert r.returncode != 0 and "design" in r.stderr
    r = run("watch", path, "--true", "truth", "--pred", "pred", "--sample", "size",
            "--checkpoint", ck, "--resume")
    assert r.returncode == 0, r.stderr
    assert "labelled share 0.7500" in r.stdout
