"""``streameval watch --every auto`` (the default), run for real on a finished file: which rows
get a report (the rule of :mod:`streameval.cli.cadence`, recomputed here from the rows), the
values at each of them (an :class:`~streameval.Evaluator` fed the same rows), and drop detection
(the same drops as the library's :class:`~streameval.detect.BlockDrops` fed row by row, and a
report at the first 10,000-row mark after each).

Nothing is timed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_cli import needs_script, run

from streameval import ELM, Evaluator
from streameval.cli.cadence import AUTO_MIN_ROWS, AUTO_ROWS_PER_CELL, AUTO_STEP
from streameval.detect import BlockDrops, Cusum

pytestmark = needs_script

COLS = ["--true", "true", "--pred", "pred", "--interval", "0"]


def stream(seed=0) -> tuple:
    """250,000 rows over 2,000 true clusters: right for 150,000 rows (2,000 cells), then a
    predicted label at random: the table grows by thousands of cells per 10,000 rows, and the
    quality drops at row 150,000."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 2000, 250_000)
    p = np.where(np.arange(250_000) < 150_000, t, rng.integers(0, 2000, 250_000))
    return t, p


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple:
    """The file, its rows, and the rows at which the library flags drops."""
    t, p = stream()
    path = tmp_path_factory.mktemp("cadence") / "rows.csv"
    path.write_text("true,pred\n" + "".join(f"{a},{b}\n" for a, b in zip(t.tolist(), p.tolist())))
    return path, t, p, drops_row_by_row(t, p)


def reports(path, *args) -> list:
    r = run("watch", path, *COLS, "--format", "json", *args)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def drops_row_by_row(t, p) -> list:
    """The rows at which the library flags drops, fed one row at a time (watch's defaults:
    ELM over blocks of 100 rows, the cusum)."""
    drops = BlockDrops(ELM(), 100, Cusum())
    for a, b in zip(t.tolist(), p.tolist()):
        drops.update(a, b)
    return drops.drops


def auto_rows(t, p, alarms) -> list:
    """The rows ``--every auto`` reports at, from its rule: a look every AUTO_STEP rows; a report
    when the rows since the last one reach AUTO_MIN_ROWS plus AUTO_ROWS_PER_CELL times the cells
    of the table then, or when a drop was flagged since."""
    out, last, cells = [], 0, 0
    for look in range(AUTO_STEP, len(t) + 1, AUTO_STEP):
        flagged = any(last < a <= look for a in alarms)
        if look - last >= AUTO_MIN_ROWS + AUTO_ROWS_PER_CELL * cells or flagged:
            out.append(look)
            last, cells = look, len(set(zip(t[:look].tolist(), p[:look].tolist())))
    return out


def test_auto_reports_at_the_rows_of_its_rule_with_exact_values(finished):
    path, t, p, alarms = finished
    assert alarms and all(a > 150_000 for a in alarms)  # the stream's drop, no false alarm
    got = reports(path)
    assert got[-1]["final"] and got[-1]["rows"] == len(t)
    rows = [r["rows"] for r in got[:-1]]
    assert rows == auto_rows(t, p, alarms)
    # spaced out by the rule, and one at the first 10,000-row mark after the drop
    assert rows[0] == 100_000 and -(-alarms[0] // AUTO_STEP) * AUTO_STEP in rows
    assert len(rows) < 5
    for r in got:
        n = r["rows"]
        ev = Evaluator()
        ev.update_many(t[:n], p[:n])
        assert r["all"] == {k: (v if v == v else None) for k, v in ev.get().items()}
        win = Evaluator()
        win.update_many(t[n - 1000:n], p[n - 1000:n])
        assert r["window"] == {k: (v if v == v else None) for k, v in win.get().items()}
        flagged = [a for a in alarms if a <= n]
        assert r["drops"] == len(flagged)
        assert r["drop"] == bool(flagged and n - flagged[-1] < 1000)


@pytest.mark.slow  # two watch runs over 250,000 rows: a second of CPU, out of the quick loop
def test_explicit_every_keeps_every_row_count_and_the_same_drops(finished):
    path, t, p, alarms = finished
    got = reports(path, "--every", "10000", "--window", "0", "--metrics", "ELM")
    assert [r["rows"] for r in got] == [*range(10_000, 250_001, 10_000), 250_000]
    assert [r["drops"] for r in got] == [sum(a <= r["rows"] for a in alarms) for r in got]
    again = reports(path, "--every", "auto", "--window", "0", "--metrics", "ELM")
    assert again[-1]["drops"] == got[-1]["drops"] == len(alarms)
    assert again[-1]["all"]["ELM"] == got[-1]["all"]["ELM"]


@pytest.mark.parametrize("bad", ["0", "-3", "often"])
def test_a_bad_every_is_refused(finished, bad, capsys):
    from streameval.cli import main

    assert main(["watch", str(finished[0]), *COLS, "--every", bad]) == 2
    assert "argument --every" in capsys.readouterr().err
