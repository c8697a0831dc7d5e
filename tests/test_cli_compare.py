"""The command-line hooks: ``streameval compare``, ``score --ci`` and ``pss --compare``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import streameval as se
from streameval.cli import main


def _write(path, header, rows):
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    gold, a, b = [], [], []
    for u in range(15):
        for _ in range(6):
            t = int(rng.integers(0, 3))
            gold.append((f"d{u}", f"d{u}-{t}"))
            a.append((f"d{u}", f"d{u}-{t if rng.random() < 0.9 else int(rng.integers(0, 4))}"))
            b.append((f"d{u}", f"d{u}-{t if rng.random() < 0.6 else int(rng.integers(0, 4))}"))
    return {
        "gold": _write(tmp_path / "gold.csv", "doc,label", gold),
        "a": _write(tmp_path / "a.csv", "doc,label", a),
        "b": _write(tmp_path / "b.csv", "doc,label", b),
        "rows": _write(tmp_path / "rows.csv", "doc,truth,guess",
                       [(g[0], g[1], x[1]) for g, x in zip(gold, a)]),
        "data": (gold, a, b),
    }


def test_compare_prints_the_same_numbers_as_the_api(files, capsys):
    rc = main(["compare", files["gold"], files["a"], files["b"], "--unit", "doc", "--names", "A",
               "B", "--metrics", "ELM", "BCubed", "--n-resamples", "300", "--seed", "5",
               "--format", "json"])
    assert rc == 0
    got = json.loads(capsys.readouterr().out)
    gold, a, b = files["data"]
    r = se.compare([g[1] for g in gold], {"A": [x[1] for x in a], "B": [x[1] for x in b]},
                   units=[g[0] for g in gold], metrics=["ELM", "BCubed"], n_resamples=300, seed=5)
    assert got == json.loads(r.to_json())
    assert main(["compare", files["gold"], files["a"], files["b"], "--unit", "doc",
                 "--n-resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "a.csv - b.csv" in out and "15 units, 90 elements, 100 resamples" in out


def test_compare_reports_misaligned_files(files, tmp_path, capsys):
    _, a, _ = files["data"]
    shifted = _write(tmp_path / "s.csv", "doc,label", a[1:] + a[:1])
    assert main(["compare", files["gold"], shifted, "--unit", "doc"]) == 1
    assert "data row 6 is in unit 'd1', the gold file's row is in unit 'd0'" in capsys.readouterr().err
    short = _write(tmp_path / "short.csv", "doc,label", a[:-1])
    assert main(["compare", files["gold"], short, "--unit", "doc"]) == 1
    assert "89 rows, the gold file" in capsys.readouterr().err
    assert main(["compare", files["gold"], files["a"], "--unit", "nope"]) == 1
    assert "no column 'nope'" in capsys.readouterr().err
    assert main(["compare", files["gold"], files["a"]]) == 2  # --unit is required


def test_compare_refuses_clusters_spanning_units(tmp_path, capsys):
    g = _write(tmp_path / "g.csv", "doc,label", [("d0", "x"), ("d1", "x")])
    assert main(["compare", g, g, "--unit", "doc"]) == 1
    assert "label 'x' occurs in unit 'd0' and in unit 'd1'" in capsys.readouterr().err
    assert main(["compare", g, g, "--unit", "doc", "--labels", "per_unit", "--n-resamples", "10"]) == 0


def test_score_ci(files, capsys):
    rc = main(["score", files["rows"], "--true", "truth", "--pred", "guess", "--ci", "--unit",
               "doc", "--metrics", "ELM", "AdjustedRand", "--n-resamples", "200", "--seed", "1",
               "--format", "json"])
    assert rc == 0
    cap = capsys.readouterr()
    got = json.loads(cap.out)
    gold, a, _ = files["data"]
    ci = se.confidence_interval([g[1] for g in gold], [x[1] for x in a], units=[g[0] for g in gold],
                                metrics=["ELM", "AdjustedRand"], n_resamples=200, seed=1)
    assert got["metrics"] == {k: iv.to_dict() for k, iv in ci.items()}
    assert got["settings"]["units"] == 15
    # 15 units: the few-units warning, in the JSON and on standard error
    assert got["settings"]["warnings"][0].startswith("only 15 units")
    assert "streameval: warning: only 15 units" in cap.err
    assert main(["score", files["rows"], "--true", "truth", "--pred", "guess", "--ci", "--unit",
                 "doc", "--metrics", "ELM", "--n-resamples", "50"]) == 0
    assert "warning: only 15 units" in capsys.readouterr().out
    assert main(["score", files["rows"], "--true", "truth", "--pred", "guess", "--ci"]) == 1
    assert "--ci needs --unit" in capsys.readouterr().err
    # without --ci, score is unchanged (and accepts the new options silently)
    assert main(["score", files["rows"], "--true", "truth", "--pred", "guess", "--metrics", "ELM",
                 "--format", "json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"ELM"}


def test_score_ci_skips_bad_rows_once(tmp_path, capsys):
    path = _write(tmp_path / "r.csv", "doc,truth,guess",
                  [("d0", "a", "x"), ("d0", "a", "x"), ("", "b", "y"), ("d1", "c", ""), ("d1", "c", "z")])
    assert main(["score", path, "--true", "truth", "--pred", "guess", "--ci", "--unit", "doc",
                 "--on-error", "skip", "--metrics", "ELM", "--n-resamples", "20"]) == 0
    captured = capsys.readouterr()
    assert "3 rows, 2 units" in captured.out
    assert "skipped 2 malformed rows" in captured.err
    assert main(["score", path, "--true", "truth", "--pred", "guess", "--ci", "--unit", "doc"]) == 1


def test_pss_compare(tmp_path, capsys):
    gold = {f"s{i}": [1, 0, 0, 1, 0, 1, 0, 0, 1, 0] for i in range(8)}
    pred = {f"s{i}": [1, 0, 0, 1, 1, 1, 0, 0, 1, 0] for i in range(8)}
    g, p = tmp_path / "g.json", tmp_path / "p.json"
    g.write_text(json.dumps(gold))
    p.write_text(json.dumps(pred))
    rc = main(["pss", "--compare", str(g), str(p), "--names", "mine", "--baselines",
               "--n-resamples", "200", "--format", "json"])
    assert rc == 0
    got = json.loads(capsys.readouterr().out)
    assert got["settings"]["systems"] == ["mine", "all_singletons", "one_document", "fixed_length"]
    assert got["settings"]["aggregate"] == "mean" and got["settings"]["units"] == 8
    ev = se.PageStreamEvaluator([se.ELM(), se.BCubed()])
    for sid, flags in gold.items():
        ev.update_stream(sid, flags, pred[sid])
    # the command builds the same evaluator from the same streams in the same order: the same bits
    assert got["values"]["mine"]["ELM"]["value"] == ev.summary()["ELM"]["mean"]
    assert main(["pss", "--compare", str(g)]) == 1
    assert "nothing to compare" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"s0": [1, 0]}))
    assert main(["pss", "--compare", str(g), str(bad)]) == 1
    # without --compare, pss is unchanged
    assert main(["pss", str(g), str(p), "--metrics", "ELM"]) == 0


def test_pss_compare_on_the_elm_paper_data(pss_dir, capsys):
    rc = main(["pss", "--compare", str(pss_dir / "test.json"),
               str(pss_dir / "bert_predictions_test.json"), "--names", "BERT", "--baselines",
               "--original-make-index", "--n-resamples", "500", "--format", "json"])
    assert rc == 0
    got = json.loads(capsys.readouterr().out)
    bert = got["values"]["BERT"]
    assert round(bert["ELM"]["value"], 2) == 0.80 and round(bert["BCubed"]["value"], 2) == 0.83
    assert bert["ELM"]["low"] < 0.80 < bert["ELM"]["high"]
    for d in got["differences"]:
        if d["a"] == "BERT":
            assert d["metrics"]["ELM"]["low"] > 0 and d["metrics"]["ELM"]["p_value"] < 0.01


def test_help(capsys):
    assert main(["compare", "--help"]) == 0
    assert "--unit COL" in capsys.readouterr().out
