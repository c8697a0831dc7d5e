"""streameval.dask: exact equality with the streaming table on a real LocalCluster and on Dask's
synchronous scheduler; intrinsic values against scikit-learn; a worker memory limit below the
size of the table."""

import tracemalloc
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from intrinsic_parity import CASES, case, davies_bouldin_perturbation, streamed_summaries, views
from intrinsic_parity import assert_same as assert_same_views
from intrinsic_parity import streamed as streamed_views

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import streameval as se  # noqa: E402
from streameval.dask import contingency_stats, evaluate  # noqa: E402
from streameval.errors import InvalidVectorError, InvalidWeightError, MissingLabelError  # noqa: E402
from streameval.metrics import default_metrics  # noqa: E402
from streameval.reference import ReferenceContingency  # noqa: E402

pytestmark = pytest.mark.slow  # every Dask test starts a scheduler or a cluster

MEMORY_LIMIT = 400 * 2**20  # bytes per worker


@pytest.fixture(scope="module")
def client():
    """One real LocalCluster for the module: 2 worker processes, 1 thread, 400 MiB each."""
    # Workers never pause (a paused worker at its limit can stall a shuffle); they spill to disk.
    conf = {"dataframe.shuffle.method": "tasks", "distributed.worker.memory.pause": False}
    with dask.config.set(conf), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, memory_limit=MEMORY_LIMIT,
        dashboard_address=":0",
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def streamed(t, p, w=None, metrics=None):
    """The streaming table and metric values for the same elements (the reference)."""
    ev = se.Evaluator(metrics if metrics is not None else default_metrics())
    ev.update_many(np.asarray(t), np.asarray(p), None if w is None else np.asarray(w))
    return ev.table.stats(), ev.get()


def frame(seed, n=3000, kt=40, kp=60, weights=True, dims=0, strings=False):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, kt, n)
    p = (t * 7 + rng.integers(0, 4, n)) % kp  # correlated with the truth
    df = pd.DataFrame({"gold": t, "guess": p})
    if strings:
        df["gold"] = [f"e{v}" for v in t]
    if weights:
        df["w"] = rng.integers(1, 5, n)
    for d in range(dims):
        df[f"x{d}"] = rng.normal(size=n) + p * 0.5 * (d + 1)
    return df


def assert_same(report, df, weight="w", metrics=None):
    s, values = streamed(df["gold"], df["guess"], df[weight] if weight else None, metrics)
    assert report.stats == s  # every integer and fixed-point sum, bit for bit
    for name, v in values.items():
        assert report.values[name] == v, name


def test_sync_scheduler_equals_stream():
    df = frame(1, strings=True)
    r = evaluate(dd.from_pandas(df, npartitions=5), "gold", "guess", weight="w", scheduler="sync")
    assert_same(r, df)
    assert r.stats.n == df["w"].sum()


@settings(max_examples=15)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(1, 3)), min_size=1,
             max_size=60),
    st.integers(1, 4),
)
def test_any_small_table_equals_stream(rows, parts):
    df = pd.DataFrame(rows, columns=["gold", "guess", "w"])
    r = evaluate(dd.from_pandas(df, npartitions=parts), "gold", "guess", weight="w",
                 scheduler="sync", ami=False)
    assert_same(r, df)


@pytest.mark.parametrize("seed", [0, 1])
def test_local_cluster_equals_stream(client, seed):
    df = frame(seed, n=5000, strings=bool(seed))
    r = evaluate(dd.from_pandas(df, npartitions=4), "gold", "guess", weight="w", split_out=3)
    assert_same(r, df)


def test_unweighted_and_custom_metrics(client):
    df = frame(3, weights=False)
    metrics = [se.ELM(beta=2.0), se.BCubed(f_convention="f_of_averages"), se.Purity()]
    r = evaluate(dd.from_pandas(df, npartitions=3), "gold", "guess", metrics=metrics)
    fresh = [se.ELM(beta=2.0), se.BCubed(f_convention="f_of_averages"), se.Purity()]
    assert_same(r, df, weight=None, metrics=fresh)
    assert set(r.values) == {m.name for m in fresh} | {"AdjustedMutualInfo"}


def test_ami_matches_sklearn():
    from sklearn.metrics import adjusted_mutual_info_score

    df = frame(4)
    r = evaluate(dd.from_pandas(df, npartitions=3), "gold", "guess", weight="w", scheduler="sync")
    expanded = df.loc[df.index.repeat(df["w"])]
    ref = adjusted_mutual_info_score(expanded["gold"], expanded["guess"])
    assert r.values["AdjustedMutualInfo"] == pytest.approx(ref, rel=1e-10)
    assert sum(k * v for k, v in r.sizes_true.items()) == r.stats.n


def test_lazy_contingency_stats(client):
    df = frame(5, strings=True)
    lazy = contingency_stats(dd.from_pandas(df, npartitions=4), "gold", "guess", weight="w")
    from dask.delayed import Delayed

    assert isinstance(lazy, Delayed)
    s = lazy.compute()
    ref, _ = streamed(df["gold"], df["guess"], df["w"])
    assert s == ref


@pytest.mark.parametrize("use_cluster", [False, True])
def test_vectors_against_sklearn(request, use_cluster):
    from sklearn.metrics import calinski_harabasz_score, silhouette_score

    scheduler = None if use_cluster else "sync"
    if use_cluster:
        request.getfixturevalue("client")
    df = frame(6, n=1500, kt=8, kp=6, dims=3)
    r = evaluate(dd.from_pandas(df, npartitions=3), "gold", "guess", weight="w",
                 vectors=["x0", "x1", "x2"], scheduler=scheduler)
    assert_same(r, df)
    ex = df.loc[df.index.repeat(df["w"])]
    x = ex[["x0", "x1", "x2"]].to_numpy()
    assert r["CalinskiHarabasz"] == pytest.approx(calinski_harabasz_score(x, ex["guess"]),
                                                  rel=1e-10)
    sil = silhouette_score(x, ex["guess"], metric="sqeuclidean")
    assert r["SqEuclideanSilhouette"] == pytest.approx(sil, rel=1e-9)
    s = r.summaries["euclidean"]
    assert s.n == len(ex) and s.k == 6


def parity_frame(name):
    X, y, w = case(name)
    cols = [f"x{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols).assign(gold=y % 3, guess=y, w=w)
    return (X, y, w), df, cols


@pytest.mark.parametrize("name", CASES)
def test_intrinsic_registry_equals_streaming_views(name):
    """Every registered intrinsic view (and the Alink singleton convention) on Dask: the same keys,
    values and edge cases as the streaming views (silhouettes: their exact final())."""
    (X, y, w), df, cols = parity_frame(name)
    r = evaluate(dd.from_pandas(df, npartitions=3), "gold", "guess", weight="w", vectors=cols,
                 intrinsic=views(), scheduler="sync")
    assert_same_views(r.intrinsic, streamed_views(X, y, w))
    assert r.summaries["euclidean"].n == r.summaries["cosine"].n == int(w.sum())


def test_intrinsic_registry_on_a_cluster_and_above_2000_clusters(client):
    """The same on a real LocalCluster (summaries and views pickled to the workers), with
    k = 2,100 clusters."""
    for name in ("singletons", "large_k"):
        (X, y, w), df, cols = parity_frame(name)
        r = evaluate(dd.from_pandas(df, npartitions=4), "gold", "guess", weight="w", vectors=cols,
                     intrinsic=views())
        mine = streamed_summaries(X, y, w)  # the tolerance's precondition (intrinsic_parity)
        for space, s in r.summaries.items():
            assert davies_bouldin_perturbation(mine[space], s) < 1e-10, (name, space)
        assert_same_views(r.intrinsic, streamed_views(X, y, w))
    assert r.summaries["euclidean"].k == 2100


def test_intrinsic_defaults_and_choices():
    """Default: the Euclidean views under their registry names; silhouette=False drops the pass;
    a cosine view rejects a zero vector, as the streaming one does."""
    (X, y, w), df, cols = parity_frame("general")
    ddf = dd.from_pandas(df, npartitions=2)
    r = evaluate(ddf, "gold", "guess", vectors=cols, scheduler="sync")
    assert list(r.intrinsic) == [m.name for m in se.intrinsic.default_intrinsic_metrics("euclidean")]
    assert list(r.summaries) == ["euclidean"]
    r = evaluate(ddf, "gold", "guess", vectors=cols, silhouette=False, scheduler="sync",
                 intrinsic={"ch": se.CalinskiHarabasz(), "sil": se.SqEuclideanSilhouette()})
    assert list(r.intrinsic) == ["ch"]
    zero = pd.DataFrame({"gold": [1, 2], "guess": [1, 2], "x": [0.0, 1.0]})
    with pytest.raises(InvalidVectorError, match="norm 0"):
        evaluate(dd.from_pandas(zero, npartitions=1), "gold", "guess", vectors=["x"],
                 intrinsic=["CosineSSB"], scheduler="sync")
    assert evaluate(dd.from_pandas(zero, npartitions=1), "gold", "guess", vectors=["x"],
                    intrinsic=["SSB"], scheduler="sync")["SSB"] == 0.5


def test_alink_reference_example():
    pts = np.array([[0, 0, 0], [0.1, 0.1, 0.1], [0.2, 0.2, 0.2], [9, 9, 9], [9.1, 9.1, 9.1],
                    [9.2, 9.2, 9.2]])
    df = pd.DataFrame(pts, columns=["a", "b", "c"]).assign(gold=[0, 0, 0, 1, 1, 1],
                                                           guess=[0, 0, 0, 1, 1, 1])
    r = evaluate(dd.from_pandas(df, npartitions=2), "gold", "guess", vectors=["a", "b", "c"],
                 scheduler="sync")
    assert r["CalinskiHarabasz"] == pytest.approx(12150.0, rel=1e-9)
    assert r["SSB"] == pytest.approx(364.5, rel=1e-12)
    assert r["SSW"] == pytest.approx(0.12, rel=1e-9)
    assert r["Separation"] == pytest.approx(15.5885, abs=1e-4)
    assert r["SqEuclideanSilhouette"] == pytest.approx(0.999753, abs=1e-6)
    assert r["Purity"] == r["NormalizedMutualInfo"] == r["AdjustedRand"] == r["Rand"] == 1.0


def test_scatter_far_from_origin_has_no_cancellation():
    rng = np.random.default_rng(7)
    x = 1e8 + rng.normal(size=(400, 2))
    lab = rng.integers(0, 3, 400)
    df = pd.DataFrame(x, columns=["x0", "x1"]).assign(gold=lab, guess=lab)
    r = evaluate(dd.from_pandas(df, npartitions=3), "gold", "guess", vectors=["x0", "x1"],
                 scheduler="sync", silhouette=False)
    ssw = sum(((x[lab == j] - x[lab == j].mean(axis=0)) ** 2).sum() for j in range(3))
    assert r["SSW"] == pytest.approx(ssw, rel=1e-6)


def test_missing_labels_raise_or_skip():
    df = pd.DataFrame({"gold": [1.0, np.nan, 2.0, 2.0], "guess": ["a", "b", None, "b"],
                       "w": [1, 2, 3, 1]})
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(MissingLabelError, match="2 element"):
        evaluate(ddf, "gold", "guess", scheduler="sync")
    r = evaluate(ddf, "gold", "guess", weight="w", missing="skip", scheduler="sync")
    assert r.skipped == 5 and r.stats.n == 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, np.nan])
def test_bad_weights_raise(bad):
    df = pd.DataFrame({"gold": [1, 2], "guess": [1, 1], "w": [1.0, bad]})
    with pytest.raises(InvalidWeightError, match="not positive integers"):
        evaluate(dd.from_pandas(df, npartitions=1), "gold", "guess", weight="w", scheduler="sync")


def test_a_null_weight_of_a_nullable_column_is_refused_not_dropped():
    """Before: ``w`` NA compared as NA, the bad-weight count skipped it, and the row was dropped
    silently (its element missing from every value)."""
    df = pd.DataFrame({"gold": [1, 1, 2], "guess": [1, 2, 2], "w": pd.array([1, None, 2], dtype="Int64")})
    with pytest.raises(InvalidWeightError, match="1 weight"):
        evaluate(df, "gold", "guess", weight="w", scheduler="sync")


@pytest.mark.parametrize("w", [[2**58, 1, 1], [2**56, 2**56, 2**56]])
def test_a_total_weight_of_2_pow_57_is_refused_as_the_table_refuses_it(w):
    """Before: a weight of 2**58 was taken (the table refuses it), and three of 2**56 ran the
    expected mutual information out of memory (an allocation of 512 PiB)."""
    df = pd.DataFrame({"gold": [1, 1, 2], "guess": [1, 2, 2], "w": w})
    with pytest.raises(InvalidWeightError, match=f"total weight is {sum(w)}: .* below 2\\*\\*57"):
        evaluate(df, "gold", "guess", weight="w", scheduler="sync")


def test_mixed_type_labels_of_a_pandas_frame_group_by_python_equality():
    """Before: Dask turned the object column into strings, merging 1 with "1" and splitting 1
    from 1.0 and True: ELM 0.0 where the library (and Python equality) gives 1/3."""
    gold = pd.Series([1, 1.0, True, "1"], dtype=object)
    df = pd.DataFrame({"gold": gold, "guess": ["a", "a", "b", "b"]})
    r = evaluate(df, "gold", "guess", metrics=["ELM", "AdjustedRand"], ami=False, scheduler="sync")
    ev = se.Evaluator([se.ELM(), se.AdjustedRand()])
    ev.update_many(list(gold), list(df["guess"]))
    assert r.values == ev.get() and r.values["ELM"] == 1 / 3


def test_bad_vectors_and_columns_raise():
    df = pd.DataFrame({"gold": [1, 2], "guess": [1, 1], "x": [0.0, np.inf]})
    ddf = dd.from_pandas(df, npartitions=1)
    with pytest.raises(InvalidVectorError, match="NaN or infinite"):
        evaluate(ddf, "gold", "guess", vectors=["x"], scheduler="sync")
    with pytest.raises(KeyError, match="nope"):
        evaluate(ddf, "gold", "nope", scheduler="sync")
    with pytest.raises(ValueError, match="unknown metric"):
        evaluate(ddf, "gold", "guess", metrics=["NoSuchMetric"], scheduler="sync")


ROWS, PARTS = 50_000, 12  # 600,000 elements, each its own cell: 300,000 true, 600,000 predicted


def _big_part(i):
    import pyarrow as pa
    import pyarrow.compute as pc

    idx = np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)

    def lab(prefix, values):
        s = pc.utf8_lpad(pc.cast(pa.array(values), pa.string()), 33, "0")
        return pd.Series(pc.binary_join_element_wise(prefix, s, ""), dtype=pd.ArrowDtype(pa.string()))

    return pd.DataFrame({"gold": lab("entity-", idx // 2), "guess": lab("record-", idx)})


def _table_bytes_per_cell(sample=20_000):
    """Bytes per cell of this data in the pure-Python reference table (tracemalloc sees Python
    allocations only; the native table needs about a quarter of that, see docs/benchmarks)."""
    part = _big_part(0).iloc[:sample]
    t = np.array(part["gold"].tolist(), dtype=object)
    p = np.array(part["guess"].tolist(), dtype=object)
    tracemalloc.start()
    table = ReferenceContingency()
    table.update_many(t, p)
    used = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert table.cells == sample
    return used / sample


@pytest.mark.soak  # a table larger than a worker's memory limit: minutes (.ci/run's soak step)
def test_worker_memory_limit_below_the_table(client):
    """The reference table held in one process would exceed a worker's limit; the engine, which
    never holds the table, still finishes."""
    n = ROWS * PARTS
    table_bytes = _table_bytes_per_cell() * n
    assert table_bytes > MEMORY_LIMIT  # about 440 MiB against 400 MiB per worker
    client.restart()  # start from fresh worker processes (no memory left over from other tests)
    ddf = dd.from_map(_big_part, range(PARTS))  # generated on the workers, never on the client
    r = evaluate(ddf, "gold", "guess", metrics=["Purity", "InversePurity", "ELM", "BCubed"])
    s = r.stats
    assert (s.n, s.cells, s.k_true, s.k_pred) == (n, n, n // 2, n)
    assert (s.sum_row_sq, s.sum_col_sq, s.sum_col_max, s.sum_row_max) == (2 * n, n, n, n // 2)
    assert r.values["Purity"] == 1.0 and r.values["InversePurity"] == 0.5
    assert r.values["ELM"] == 0.0  # every element misses its true partner
    # 2n/(a+b) = 2/3 per element: n fixed-point terms floored to 2**-64, one rounded quotient
    assert abs(Fraction(r.values["BCubed"]) - Fraction(2, 3)) <= Fraction(1, 2**64) + Fraction(2, 3) * 2.0**-53
    assert r.sizes_true == {2: n // 2} and r.sizes_pred == {1: n}


def test_example_quick_engines_agree(capsys):
    """examples/distributed_er.py --quick: Dask and DuckDB give identical stats (Spark: spark job)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "distributed_er.py"
    spec = importlib.util.spec_from_file_location("distributed_er", path)
    er = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(er)
    reports = er.main(["--quick", "--no-spark"])
    out, err = capsys.readouterr()
    assert "Spark skipped: --no-spark was given" in err and "(Spark skipped)" in out  # says so
    assert reports["dask"].stats == reports["duckdb"].stats
    assert reports["dask"].stats.n == 100_000 and reports["dask"].stats.k_true == 10_000
    t, p = er.numpy_labels(0, 100_000, 100_000, 10)
    ref, _ = streamed(t, p)
    assert reports["duckdb"].stats == ref
