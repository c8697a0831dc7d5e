"""Page-stream segmentation: streaming == batch at every page, loaders, baselines, CLI, real data."""

from __future__ import annotations

import argparse
import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streameval import batch
from streameval.batch import pss as bpss
from streameval.cli.pss import configure_parser, main
from streameval.metrics import ELM, AdjustedRand, BCubed, NormalizedMutualInfo, PairF1, Purity
from streameval.pss import (
    PageStream,
    PageStreamError,
    PageStreamEvaluator,
    all_singletons,
    check_streams,
    fixed_length,
    flags_to_labels,
    load_csv,
    load_json,
    load_streams,
    one_document,
)

flags = st.lists(st.integers(0, 1), min_size=1, max_size=40)


@st.composite
def stream_pairs(draw):
    t = draw(flags)
    p = draw(st.lists(st.integers(0, 1), min_size=len(t), max_size=len(t)))
    return t, p


def _suite():
    return [ELM(), BCubed(), AdjustedRand(), NormalizedMutualInfo(), PairF1(), Purity()]


def _batch(t_labels, p_labels) -> dict:
    e = batch.elm_precision_recall_fscore(t_labels, p_labels)
    b = batch.bcubed_precision_recall_fscore(t_labels, p_labels)
    return {
        "ELM": e[2], "ELM.precision": e[0], "ELM.recall": e[1],
        "BCubed": b[2], "BCubed.precision": b[0], "BCubed.recall": b[1],
        "AdjustedRand": batch.adjusted_rand_score(t_labels, p_labels),
        "NormalizedMutualInfo": batch.normalized_mutual_info_score(t_labels, p_labels),
        "PairF1": batch.pair_f1_score(t_labels, p_labels),
        "Purity": batch.purity_score(t_labels, p_labels),
    }


# --------------------------------------------------------------------------- streaming == batch
@pytest.mark.slow
@given(stream_pairs(), st.booleans())
def test_stream_equals_batch_at_every_page(pair, quirk):
    t, p = pair
    ps = PageStream(_suite(), original_make_index=quirk)
    for i in range(len(t)):
        ps.update(t[i], p[i])
        tl = flags_to_labels(t[: i + 1], original_make_index=quirk)
        pl = flags_to_labels(p[: i + 1], original_make_index=quirk)
        got, want = ps.get(), _batch(tl, pl)
        assert got.keys() == want.keys()
        for k in want:
            assert got[k] == pytest.approx(want[k], abs=1e-9), (k, i)
    assert ps.pages == len(t)
    ps.table._check()


@pytest.mark.slow
@given(stream_pairs(), st.booleans())
def test_labels_match_flags_to_labels(pair, quirk):
    t, p = pair
    ps = PageStream([ELM()], original_make_index=quirk)
    got_t, got_p = [], []
    for a, b in zip(t, p):
        dt, dp = ps.labels(a, b)
        ps.update(a, b)
        got_t.append(dt)
        got_p.append(dp)
    assert got_t == flags_to_labels(t, original_make_index=quirk).tolist()
    assert got_p == flags_to_labels(p, original_make_index=quirk).tolist()


@pytest.mark.slow
@given(st.lists(stream_pairs(), min_size=1, max_size=5))
def test_many_streams_mean_sd_and_pooled(pairs):
    ev = PageStreamEvaluator([ELM(), BCubed()])
    for i, (t, p) in enumerate(pairs):
        ev.update_stream(f"s{i}", t, p)
    per = [_batch(flags_to_labels(t), flags_to_labels(p)) for t, p in pairs]
    pooled_t = np.concatenate([flags_to_labels(t) + 1000 * i for i, (t, _) in enumerate(pairs)])
    pooled_p = np.concatenate([flags_to_labels(p) + 1000 * i for i, (_, p) in enumerate(pairs)])
    pooled = _batch(pooled_t, pooled_p)
    for name, s in ev.summary().items():
        vals = np.array([v[name] for v in per])
        assert s["mean"] == pytest.approx(vals.mean(), abs=1e-9)
        if len(vals) > 1:
            assert s["sd"] == pytest.approx(vals.std(ddof=1), abs=1e-9)
        else:
            assert math.isnan(s["sd"])
        assert s["pooled"] == pytest.approx(pooled[name], abs=1e-9)
        assert s["streams"] == len(pairs)


def test_interleaved_streams_equal_stream_by_stream():
    a = PageStreamEvaluator([ELM()])
    b = PageStreamEvaluator([ELM()])
    s1, s2 = ([1, 0, 1, 1], [1, 1, 0, 1]), ([0, 0, 1], [1, 0, 0])
    b.update_stream("x", *s1)
    b.update_stream("y", *s2)
    for i in range(4):
        a.update("x", s1[0][i], s1[1][i])
        if i < 3:
            a.update("y", s2[0][i], s2[1][i])
    assert a.summary() == b.summary()


def test_first_page_always_starts_a_document():
    assert flags_to_labels([0, 0, 0]).tolist() == [0, 0, 0]
    assert flags_to_labels([]).tolist() == []
    # the paper code's make_index: a leading 0 makes the first 1 a continuation
    assert flags_to_labels([0, 1, 0, 1], original_make_index=True).tolist() == [0, 0, 0, 1]
    assert flags_to_labels([1, 1, 0, 1], original_make_index=True).tolist() == [0, 1, 1, 2]


def test_bad_flags_leave_the_state_unchanged():
    ps = PageStream([ELM()])
    ps.update(1, 1)
    before = ps.table.copy()
    for bad in (2, -1, 0.5, "1", None):
        with pytest.raises(PageStreamError, match="page flag must be 0 or 1"):
            ps.update(bad, 1)
        with pytest.raises(PageStreamError, match="page flag must be 0 or 1"):
            ps.update(1, bad)
    with pytest.raises(PageStreamError, match="differ in length"):
        ps.update_many([1, 0], [1])
    with pytest.raises(PageStreamError, match="page 2, predicted flag"):
        ps.update_many([1, 0], [1, 7])
    assert ps.pages == 1 and ps.table == before
    ev = PageStreamEvaluator([ELM()])
    with pytest.raises(PageStreamError):
        ev.update_stream("s", [1, 0], [1, 3])
    assert ev.streams == {} or ev.stream("s").pages == 0
    assert ev.pooled.table.n == 0
    with pytest.raises(TypeError):
        PageStream(["ELM"])


# --------------------------------------------------------------------------- baselines
@pytest.mark.slow
@given(flags)
def test_baselines(t):
    n = len(t)
    assert all_singletons(t) == [1] * n
    assert one_document(t) == [1] + [0] * (n - 1)
    fl = fixed_length(t)
    docs = int(flags_to_labels(t)[-1]) + 1
    length = max(1, round(n / docs))
    assert fl == [int(i % length == 0) for i in range(n)]
    # all singletons: ELM F1 is the share of pages that are true singleton documents
    tl = flags_to_labels(t)
    sizes = np.bincount(tl)[tl]
    ps = PageStream([ELM()])
    ps.update_many(t, all_singletons(t))
    assert ps.get()["ELM"] == pytest.approx((sizes == 1).mean())
    ps = PageStream([ELM()])
    ps.update_many(t, one_document(t))
    assert ps.get()["ELM.recall"] == 1.0


def test_fixed_length_rejects_bad_length():
    with pytest.raises(PageStreamError, match="at least 1"):
        fixed_length([1, 0, 0], length=0)
    assert fixed_length([]) == []
    assert one_document([]) == []


# --------------------------------------------------------------------------- files
def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 0]", "expected a JSON object"),
        ("{}", "no streams"),
        ('{"a": 1}', "stream 'a': expected a list of 0/1 flags, got int"),
        ('{"a": []}', "stream 'a' has no pages"),
        ('{"a": [1, 0, "x"]}', "stream 'a', page 2: a page flag must be 0 or 1, got 'x'"),
        ('{"a": [1, null]}', "page 1: a page flag must be 0 or 1, got None"),
    ],
)
def test_load_json_errors(tmp_path, text, message):
    with pytest.raises(PageStreamError, match=message):
        load_json(_write(tmp_path, "f.json", text))


def test_load_json_not_utf8(tmp_path):
    p = tmp_path / "f.json"
    p.write_bytes(b'{"\xff": [1]}')
    with pytest.raises(PageStreamError, match="not UTF-8"):
        load_json(p)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty file"),
        ("stream,page\na,1\n", r"missing \['flag'\]"),
        ("stream,page,flag\n", "no rows after the header"),
        ("stream,page,flag\na,x,1\n", "row 2: page 'x' is not an integer"),
        ("stream,page,flag\na,1,2\n", "row 2: a page flag must be 0 or 1, got '2'"),
        ("stream,page,flag\na,1,1\na,1,0\n", "row 3: stream 'a' page 1 is repeated"),
        ("stream,page,flag\na,1,1\na,3,0\n", "pages must be consecutive from 0 or 1, got 1, 3"),
        ("stream,page,flag\na,5,1\n", "pages must be consecutive from 0 or 1, got 5"),
        ("stream,page,flag\na,1\n", "row 2: expected 3 fields, got 2"),
    ],
)
def test_load_csv_errors(tmp_path, text, message):
    with pytest.raises(PageStreamError, match=message):
        load_csv(_write(tmp_path, "f.csv", text))


def test_csv_and_json_agree(tmp_path):
    data = {"s1": [1, 0, 0, 1], "s2": [0, 1]}
    js = _write(tmp_path, "g.json", json.dumps(data))
    rows = ["Flag,Stream,Page,comment"] + [
        f"{f},{s},{i},x" for s, fl in data.items() for i, f in reversed(list(enumerate(fl)))
    ]
    cs = _write(tmp_path, "g.csv", "\n".join(rows) + "\n")
    assert load_streams(js) == load_streams(cs) == data
    with pytest.raises(PageStreamError, match="cannot tell the format"):
        load_streams(_write(tmp_path, "g.txt", ""))
    assert load_streams(_write(tmp_path, "g.txt", json.dumps(data)), "json") == data
    with pytest.raises(PageStreamError, match="unknown page-stream format"):
        load_streams(js, "xml")


def test_check_streams():
    check_streams({"a": [1]}, {"a": [0]})
    with pytest.raises(PageStreamError, match="missing from the predictions: 'b'"):
        check_streams({"a": [1], "b": [1]}, {"a": [1]})
    with pytest.raises(PageStreamError, match="not in the gold file: 'c'"):
        check_streams({"a": [1]}, {"a": [1], "c": [1]})
    many = {f"s{i}": [1] for i in range(8)}
    with pytest.raises(PageStreamError, match=r"\(8 in all\)"):
        check_streams(many, {})


# --------------------------------------------------------------------------- command line
def _run(argv, capsys):
    parser = argparse.ArgumentParser(prog="streameval pss")
    configure_parser(parser)
    status = main(parser.parse_args(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_table_and_json(tmp_path, capsys):
    gold = _write(tmp_path, "gold.json", json.dumps({"a": [1, 0, 1, 0, 0], "b": [1, 1, 0]}))
    pred = _write(tmp_path, "pred.json", json.dumps({"a": [1, 1, 1, 0, 0], "b": [1, 1, 1]}))
    status, out, err = _run([str(gold), str(pred)], capsys)
    assert status == 0 and err == ""
    assert "2 streams, 8 pages" in out and "ELM" in out and "BCubed.recall" in out
    status, out, _ = _run([str(gold), str(pred), "--format", "json", "--per-stream"], capsys)
    doc = json.loads(out)
    assert status == 0 and doc["streams"] == 2 and doc["pages"] == 8
    assert doc["per_stream"]["a"]["ELM"] == pytest.approx(0.6)
    assert doc["metrics"]["ELM"]["mean"] == pytest.approx((0.6 + doc["per_stream"]["b"]["ELM"]) / 2)
    status, out, _ = _run([str(gold), str(pred), "--metrics", "all", "--format", "json"], capsys)
    assert "AdjustedRand" in json.loads(out)["metrics"]
    status, out, _ = _run([str(gold), str(pred), "--metrics", "purity, elm"], capsys)
    assert status == 0 and "Purity" in out
    one = _write(tmp_path, "one.json", json.dumps({"a": [0, 1]}))
    status, out, _ = _run([str(one), str(one), "--format", "json", "--original-make-index"], capsys)
    assert json.loads(out)["metrics"]["ELM"]["sd"] is None  # one stream: no sd


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: [str(d / "missing.json"), str(d / "pred.json")], "No such file"),
        (lambda d: [str(d / "gold.json"), str(d / "bad.json")], "a page flag must be 0 or 1"),
        (lambda d: [str(d / "gold.json"), str(d / "short.json")], "1 in the predictions"),
        (lambda d: [str(d / "gold.json"), str(d / "pred.json"), "--metrics", "Nope"], "unknown metric 'Nope'"),
        (lambda d: [str(d / "gold.json"), str(d / "pred.json"), "--metrics", ","], "names no metric"),
    ],
)
def test_cli_bad_input(tmp_path, capsys, make, message):
    _write(tmp_path, "gold.json", json.dumps({"a": [1, 0]}))
    _write(tmp_path, "pred.json", json.dumps({"a": [1, 1]}))
    _write(tmp_path, "bad.json", json.dumps({"a": [1, 5]}))
    _write(tmp_path, "short.json", json.dumps({"a": [1]}))
    status, out, err = _run(make(tmp_path), capsys)
    assert status == 1 and out == ""  # bad input: 1, as in every subcommand
    assert err.startswith("streameval pss: error:") and message in err
    assert "[Errno" not in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- batch.pss
@st.composite
def candidate_sets(draw):
    n = draw(st.integers(1, 12))
    truth = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    m = draw(st.integers(1, 6))
    cands = draw(st.lists(st.lists(st.integers(0, 4), min_size=n, max_size=n), min_size=m, max_size=m))
    return truth, cands


@pytest.mark.slow
@given(candidate_sets(), st.sampled_from([1.0, 0.5, 2.0]))
def test_score_candidates_equals_batch(case, beta):
    truth, cands = case
    for metric, fn in (("elm", batch.elm_precision_recall_fscore), ("bcubed", batch.bcubed_precision_recall_fscore)):
        p, r, f = bpss.score_candidates(truth, cands, metric=metric, beta=beta)
        for i, c in enumerate(cands):
            assert (p[i], r[i], f[i]) == pytest.approx(fn(truth, c, beta=beta), abs=1e-12)


def test_score_candidates_input_errors():
    with pytest.raises(ValueError, match="metric"):
        bpss.score_candidates([0], [[0]], metric="rand")
    with pytest.raises(ValueError, match=r"shape \(M, 2\)"):
        bpss.score_candidates([0, 1], [[0, 1, 2]])
    p, r, f = bpss.score_candidates([0, 1], np.zeros((0, 2)))
    assert len(f) == 0
    with pytest.raises(ValueError, match="positive integer"):
        bpss.contiguous_clusterings(0)
    with pytest.raises(ValueError, match="too large"):
        bpss.contiguous_f1_sums(20, [[1] * 20], candidates=[[1] * 20])


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 5, 7])
def test_contiguous_sums_are_exact_and_match_scores(n):
    flags_all = bpss.contiguous_clusterings(n)
    labels = bpss.flags_to_labels(flags_all)
    assert len({tuple(r) for r in flags_all.astype(int)}) == 2 ** (n - 1)
    assert [list(r) for r in flags_all[:, 1:].astype(int)] == [list(p) for p in itertools.product((0, 1), repeat=n - 1)]
    elm, bc, scale = bpss.contiguous_f1_sums(n)
    assert np.array_equal(elm, np.round(elm)) and np.array_equal(bc, np.round(bc))
    for i in range(len(labels)):
        assert elm[i] / scale == pytest.approx(bpss.score_candidates(labels[i], labels, metric="elm")[2], abs=1e-12)
        assert bc[i] / scale == pytest.approx(bpss.score_candidates(labels[i], labels, metric="bcubed")[2], abs=1e-12)


def _swaps(x, y):
    return sum(1 for i, j in itertools.combinations(range(len(x)), 2) if (x[i] - x[j]) * (y[i] - y[j]) < 0)


@pytest.mark.slow
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=30))
def test_rank_agreement_equals_brute_force_and_scipy(xy):
    from scipy.stats import kendalltau

    x, y = np.array(xy).T
    tau, swapped, pairs = bpss.rank_agreement(x, y)
    assert swapped == _swaps(x, y) and pairs == len(x) * (len(x) - 1) // 2
    ref = kendalltau(x, y).statistic
    assert (math.isnan(tau) and math.isnan(ref)) or tau == pytest.approx(ref, abs=1e-12)


@pytest.mark.slow
def test_contiguous_rank_agreement_brute_force_and_processes():
    n = 6
    tau, swapped = bpss.contiguous_rank_agreement(n, block=7)
    elm, bc, _ = bpss.contiguous_f1_sums(n)
    assert swapped.tolist() == [_swaps(elm[i], bc[i]) for i in range(len(elm))]
    tau2, swapped2 = bpss.contiguous_rank_agreement(n, n_jobs=2, block=8)
    assert np.array_equal(swapped, swapped2) and np.allclose(tau, tau2, equal_nan=True)
    with pytest.raises(ValueError, match="same length"):
        bpss.rank_agreement([1, 2], [1])


@pytest.mark.slow
@given(st.lists(st.lists(st.integers(0, 1), min_size=6, max_size=6), min_size=1, max_size=5))
def test_segment_entropy(rows):
    got = bpss.segment_entropy(rows)
    for r, h in zip(rows, got):
        sizes = np.bincount(flags_to_labels(r)) / len(r)
        assert h == pytest.approx(-(sizes * np.log(sizes)).sum(), abs=1e-12)


# --------------------------------------------------------------------------- real data
def test_bert_predictions_match_the_paper(pss_dir):
    gold = load_json(pss_dir / "test.json")
    pred = load_json(pss_dir / "bert_predictions_test.json")
    check_streams(gold, pred)
    ev = PageStreamEvaluator([ELM(), BCubed()], original_make_index=True)
    for sid, fl in gold.items():
        ev.update_stream(sid, fl, pred[sid])
    s = ev.summary()
    published = {  # BERTExperiment.ipynb: mean (sd) over the 34 test streams, rounded to 2
        "BCubed.precision": (0.93, 0.07), "BCubed.recall": (0.85, 0.26), "BCubed": (0.83, 0.24),
        "ELM.precision": (0.92, 0.08), "ELM.recall": (0.85, 0.26), "ELM": (0.80, 0.24),
    }
    for name, (mean, sd) in published.items():
        assert round(s[name]["mean"], 2) == mean and round(s[name]["sd"], 2) == sd, name
    assert sum(len(v) for v in gold.values()) == 25676 and s["ELM"]["streams"] == 34
    # without the quirk the ELM precision does not match the published 0.92
    plain = PageStreamEvaluator([ELM()])
    for sid, fl in gold.items():
        plain.update_stream(sid, fl, pred[sid])
    assert round(plain.summary()["ELM.precision"]["mean"], 2) == 0.93


def test_dataset_shape_matches_source(pss_dir):
    train, test = load_json(pss_dir / "train.json"), load_json(pss_dir / "test.json")
    allg = {**train, **test}
    assert len(train) == 76 and len(test) == 34
    assert sum(len(v) for v in allg.values()) == 89491
    assert sum(sum(v) for v in allg.values()) == 24180
    assert [s for s, v in train.items() if v[0] == 0] == ["stream_50"]


@pytest.mark.parametrize("flags", [[[1, 2, 0]], [[1, 0.5]], [["1", "0"]], [[1, None]], {1, 0}])
def test_batch_flag_matrices_hold_only_0_and_1(flags):
    """Before: the flags were cast to bool, so 2, 0.5, the string "0" and None read as starts
    (or not) silently, and a set became one object; an empty row raised a bare IndexError."""
    from streameval.batch import flags_to_labels, segment_entropy

    for f in (flags_to_labels, segment_entropy):
        with pytest.raises(ValueError, match="flags must be a 2-D matrix .* of 0/1 page flags"):
            f(flags)
    assert flags_to_labels([[True, 0, 1.0]]).tolist() == [[0, 0, 1]]
    assert flags_to_labels([[]]).shape == (1, 0)
    with pytest.raises(ValueError, match="at least one page"):
        segment_entropy([[]])


@pytest.mark.parametrize("flags", [{0, 1}, {0: 1, 1: 0}])
def test_streamed_flags_must_be_in_page_order(flags):
    """Before: a set gave its flags in hash order, a dict its keys (page numbers as flags)."""
    import pickle

    from streameval.pss import PageStreamError, PageStreamEvaluator, flags_to_labels

    ev = PageStreamEvaluator()
    ev.update_stream("s", [1, 0], [1, 1])
    before = pickle.dumps(ev)
    with pytest.raises(PageStreamError, match="the true flags must be a sequence with one entry per element"):
        ev.update_stream("s", flags, [1, 0])
    with pytest.raises(PageStreamError, match="flags must be a sequence with one entry per element"):
        flags_to_labels(flags)
    assert pickle.dumps(ev) == before
