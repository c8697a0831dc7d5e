"""River integration with real River models and wrappers (no mocks)."""

import datetime as dt
import itertools
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

river = pytest.importorskip("river")
from contingency_rounding import exact_and_bound, within  # noqa: E402
from river import cluster, datasets, evaluate, feature_extraction, preprocessing, utils  # noqa: E402
from river import metrics as rm  # noqa: E402
from river.metrics.base import Metrics  # noqa: E402

import streameval as se  # noqa: E402
from streameval.metrics import default_metrics  # noqa: E402
from streameval.river import Clusterer, progressive_evaluate, union  # noqa: E402


def _stream(n=120, seed=5, k_true=4, k_pred=5):
    rng = random.Random(seed)
    return [(rng.randrange(k_true), rng.randrange(k_pred)) for _ in range(n)]


def _alone(metric, content):
    """The same metric, fed only ``content`` from scratch."""
    m = metric.clone()
    for y, p in content:
        m.update(y, p)
    return m.get()


@pytest.mark.slow
def test_import_streameval_does_not_import_river():
    code = (
        "import sys, streameval, streameval.window, streameval.monitor\n"
        "import streameval.river\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('river', 'sortedcontainers', 'sklearn', 'matplotlib', 'scipy', 'argparse'))\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


@pytest.mark.parametrize("metric", default_metrics(), ids=lambda m: m.name)
def test_metric_inside_rolling_equals_the_metric_alone_on_the_window(metric):
    stream = _stream()
    rolling = utils.Rolling(type(metric), window_size=7, **metric.params)
    for i, (y, p) in enumerate(stream):
        rolling.update(y, p)
        assert rolling.get() == _alone(metric, stream[max(0, i - 6) : i + 1])
    rolling.table._check()


def test_rolling_passes_constructor_arguments_and_works_with_weights():
    rolling = utils.Rolling(se.BCubed, window_size=3, beta=2.0)
    for y, p, w in [(0, "a", 1), (0, "b", 2.0), (1, "b", 3), (1, "b", 1)]:
        rolling.update(y, p, w=w)
    alone = se.BCubed(beta=2.0)
    for y, p, w in [(0, "b", 2), (1, "b", 3), (1, "b", 1)]:
        alone.update(y, p, w)
    assert rolling.get() == alone.get() and rolling.obj.beta == 2.0


@pytest.mark.parametrize("metric", [se.ELM(), se.AdjustedRand(), se.NormalizedMutualInfo()], ids=str)
def test_metric_inside_time_rolling_equals_the_metric_alone_on_the_period(metric):
    rng = random.Random(11)
    t0 = dt.datetime(2024, 5, 1)
    period = dt.timedelta(hours=5)
    roll = utils.TimeRolling(type(metric), period=period)
    seen = []
    for i, (y, p) in enumerate(_stream(80)):
        t = t0 + dt.timedelta(hours=i + rng.choice([0, 0, 0, -1, -2]))  # some arrive late
        roll.update(y, p, t=t)
        seen.append((t, y, p))
        latest = max(s[0] for s in seen)
        if t == latest:  # TimeRolling expires (time <= latest - period) when the latest advances
            content = [(y, p) for s, y, p in seen if s > latest - period]
            assert roll.get() == _alone(metric, content)
    roll.table._check()


def test_metrics_union_values_equal_each_metric_alone_and_one_table_is_shared():
    stream = _stream(60)
    members = [se.ELM(), se.BCubed(), se.AdjustedRand(), se.Purity(), rm.AdjustedRand()]
    u = union(*[m.clone() for m in members])
    plain = Metrics([m.clone() for m in members])  # River's own union: one table per metric
    for y, p in stream:
        u.update(y, p)
        plain.update(y, p)
    alone = [_alone(m, stream) for m in members[:4]]
    assert u.get()[:4] == alone == plain.get()[:4]
    # River's ARI is a peer oracle: its pair counts (twice ours, as floats) and their products stay
    # below 2**53, so exact, and its one division rounds the same rational as ours: the same float
    assert len(stream) ** 4 < 2**53 and u.get()[4] == u.get()[2]
    assert all(m.table is u.table for m in u[:4]) and u.table.n == len(stream)
    for y, p in stream[40:]:
        u.revert(y, p)
    assert u.get()[:4] == [_alone(m, stream[:40]) for m in members[:4]]
    assert isinstance(u, Metrics) and isinstance(u.clone(), Metrics) and u.clone().table.n == 0


def test_plus_builds_a_river_union_and_appends():
    u = se.ELM() + se.Purity()
    u = u + se.AdjustedRand()
    assert isinstance(u, Metrics) and [m.name for m in u] == ["ELM", "Purity", "AdjustedRand"]
    used = se.Rand()
    used.update(0, 0)
    u = u + used  # a metric with history keeps its own table
    for y, p in [(0, 0), (1, 0)]:
        u.update(y, p)
    assert u.table.n == 2 and used.table.n == 3
    late = se.ELM()
    u = u + late  # joining a union with history: starts from scratch, as in River
    u.update(1, 1)
    assert late.table is not u.table and late.table.n == 1 and u.table.n == 3
    only_river = union(rm.Rand())
    only_river.update(0, 0)
    assert only_river.table.n == 0 and only_river.get() == [1.0]
    assert str(u).splitlines()[0] == "ELM: 0.000000"


@pytest.mark.parametrize(
    "river_metric, ours",
    [
        (rm.AdjustedRand, se.AdjustedRand),
        (rm.Rand, se.Rand),
        (rm.MutualInfo, se.MutualInfo),
        (rm.NormalizedMutualInfo, se.NormalizedMutualInfo),
        (rm.Homogeneity, se.Homogeneity),
        (rm.Completeness, se.Completeness),
        (rm.VBeta, se.VBeta),
        (rm.FowlkesMallows, se.FowlkesMallows),
    ],
)
def test_values_equal_rivers_own_metrics_under_rolling(river_metric, ours):
    theirs, mine = utils.Rolling(river_metric, window_size=20), utils.Rolling(ours, window_size=20)
    for i, (y, p) in enumerate(_stream(100, seed=3)):
        theirs.update(y, p)
        mine.update(y, p)
        if i >= 2:
            assert math.isclose(theirs.get(), mine.get(), rel_tol=1e-9, abs_tol=1e-9), i


def _segments(n=250):
    return list(itertools.islice(datasets.ImageSegments(), n))


CLUSTERERS = {
    "KMeans": lambda: cluster.KMeans(n_clusters=7, halflife=0.3, sigma=1, seed=1),
    "DBSTREAM": lambda: cluster.DBSTREAM(clustering_threshold=1.5, fading_factor=0.05),
    "DenStream": lambda: cluster.DenStream(decaying_factor=0.01, beta=0.5, mu=2.5, epsilon=0.5,
                                           n_samples_init=20),
    "CluStream": lambda: cluster.CluStream(n_macro_clusters=7, max_micro_clusters=20,
                                           time_gap=50, seed=1),
    "STREAMKMeans": lambda: cluster.STREAMKMeans(chunk_size=20, n_clusters=7, seed=1),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", CLUSTERERS)
def test_progressive_val_score_of_a_river_clusterer_equals_a_hand_loop(name):
    data = _segments()
    make = lambda: preprocessing.StandardScaler() | Clusterer(CLUSTERERS[name]())  # noqa: E731
    metrics = union(se.ELM(), se.BCubed(), se.AdjustedRand(), se.NormalizedMutualInfo())
    evaluate.progressive_val_score(data, make(), metrics)
    model, yt, yp = make(), [], []
    for x, y in data:  # River's loop, by hand: predict, score, learn
        p = model.predict_one(x)
        if p is not None:
            yt.append(y)
            yp.append(p)
        model.learn_one(x)
    assert len(set(yp)) >= 2, "the clusterer should find more than one cluster"
    exact = exact_and_bound(yt, yp)  # the exact values, streameval's rounding bounds
    want = [exact[k] for k in ("ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo")]
    for got, ref in zip(metrics.get(), want):
        assert within(got, ref), (got, ref)
    assert metrics.table.n == len(yt)
    ev = se.Evaluator([se.ELM(), se.BCubed(), se.AdjustedRand(), se.NormalizedMutualInfo()])
    (n, values), = progressive_evaluate(data, make(), ev)
    assert n == len(data) and list(values.values()) == metrics.get()


def test_stream_k_means_needs_the_adapter_and_first_prediction_is_none():
    x = {"a": 1.0}
    with pytest.raises(ValueError):
        cluster.STREAMKMeans(chunk_size=5, n_clusters=2).predict_one(x)
    model = Clusterer(cluster.STREAMKMeans(chunk_size=5, n_clusters=2, seed=1))
    assert model.predict_one(x) is None and se.ELM().works_with(model)


def test_text_clust_progressive_evaluation_equals_a_hand_loop():
    texts = [("the cat sat on the mat", "pets"), ("stocks fell as markets slid", "fin"),
             ("a dog chased the cat", "pets"), ("bond yields rose while stocks fell", "fin"),
             ("my dog likes the mat", "pets"), ("markets rallied and stocks rose", "fin")] * 4
    bow = feature_extraction.BagOfWords()
    data = [(bow.transform_one(t), y) for t, y in texts]
    make = lambda: cluster.TextClust(real_time_fading=False, fading_factor=0.0005,  # noqa: E731
                                     tgap=100, auto_r=True, radius=0.9)
    elm = evaluate.progressive_val_score(data, make(), se.ELM())
    model, yt, yp = make(), [], []
    for x, y in data:
        p = model.predict_one(x)
        if p is not None:
            yt.append(y)
            yp.append(p)
        model.learn_one(x)
    assert len(yt) == len(data) - 1  # TextClust has no cluster for the first text
    assert within(elm.get(), exact_and_bound(yt, yp)["ELM"])  # streameval's rounding of the exact ELM


def test_iter_progressive_val_score_with_a_rolling_metric_equals_a_windowed_hand_loop():
    data = _segments(150)
    make = lambda: preprocessing.StandardScaler() | cluster.KMeans(n_clusters=7, seed=2)  # noqa: E731
    steps = evaluate.iter_progressive_val_score(data, make(), utils.Rolling(se.ELM, window_size=40),
                                                step=30)
    got = [s["Rolling"].get() for s in steps]
    window = se.CountWindow(40, [se.ELM()])
    want = [v["ELM"] for _, v in progressive_evaluate(data, make(), window, step=30)]
    assert got == want and len(got) == 5


@pytest.mark.slow
def test_the_river_clustering_example_runs_and_writes_its_plot(tmp_path):
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "plot.png"
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "river_clustering.py"), "--fast", "--out", str(out)],
        check=True, capture_output=True, text=True, cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"},
    )
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ImageSegments: 400 elements")
    rows = [ln.split() for ln in lines if ln.startswith(("KMeans", "STREAMKMeans"))]
    assert [r[:2] for r in rows] == [["KMeans", "all_time"], ["KMeans", "window"],
                                     ["STREAMKMeans", "all_time"], ["STREAMKMeans", "window"]]
    assert all(0 <= float(v) <= 1 for r in rows for v in r[2:4])
