"""streameval.sql: the one SQL text gives the streaming table's exact sums on DuckDB."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

duckdb = pytest.importorskip("duckdb")

import streameval as se  # noqa: E402
from streameval.errors import InvalidWeightError, MissingLabelError  # noqa: E402
from streameval.metrics import default_metrics  # noqa: E402
from streameval.sql import evaluate_duckdb, from_rows, query  # noqa: E402


def reference(t, p, w=None, metrics=None):
    ev = se.Evaluator(metrics if metrics is not None else default_metrics())
    ev.update_many(np.asarray(t), np.asarray(p), None if w is None else np.asarray(w))
    return ev.table.stats(), ev.get()


def run(df, weight="w", **kw):
    con = duckdb.connect()
    con.register("els", df)
    return evaluate_duckdb("els", "gold", "guess", weight=weight, connection=con, **kw)


@settings(max_examples=30)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from("abcdefg"), st.integers(1, 4)),
                min_size=1, max_size=80))
@pytest.mark.slow
def test_duckdb_equals_stream(rows):
    df = pd.DataFrame(rows, columns=["gold", "guess", "w"])
    r = run(df, ami=False)
    s, values = reference(df["gold"], df["guess"], df["w"])
    assert r.stats == s
    assert r.values == values


@pytest.mark.slow
def test_larger_table_with_beta_and_ami():
    from sklearn.metrics import adjusted_mutual_info_score

    rng = np.random.default_rng(2)
    t = rng.integers(0, 300, 20_000)
    p = (t + rng.integers(0, 3, 20_000)) % 250
    df = pd.DataFrame({"gold": t, "guess": p})
    metrics = [se.ELM(beta=0.5), se.BCubed(beta=2.0), se.AdjustedRand()]
    r = run(df, weight=None, metrics=metrics)
    s, values = reference(t, p, metrics=[se.ELM(beta=0.5), se.BCubed(beta=2.0), se.AdjustedRand()])
    assert r.stats == s
    assert {k: v for k, v in r.values.items() if k != "AdjustedMutualInfo"} == values
    assert r.values["AdjustedMutualInfo"] == pytest.approx(adjusted_mutual_info_score(t, p),
                                                           rel=1e-10)


def test_parquet_file_reader(tmp_path):
    df = pd.DataFrame({"gold": ["x", "x", "y", "y"], "guess": [1, 1, 1, 2]})
    path = tmp_path / "els.parquet"
    df.to_parquet(path)
    r = evaluate_duckdb(f"read_parquet('{path}')", "gold", "guess", metrics=["Purity", "Rand"])
    assert r.values["Purity"] == 0.75 and r.stats.n == 4


def test_result_has_one_row_per_distinct_value():
    n = 10_000
    df = pd.DataFrame({"gold": np.arange(n) // 2, "guess": np.arange(n) // 4})
    con = duckdb.connect()
    con.register("els", df)
    rows = con.execute(query("els", "gold", "guess")).fetchall()
    assert len(rows) == 6  # cell, row, col, fab, missing, badweight: one distinct value each
    assert from_rows(rows).stats.cells == n // 2


@pytest.mark.slow
def test_null_labels_and_bad_weights():
    df = pd.DataFrame({"gold": [1, None, 2], "guess": ["a", "a", None], "w": [1, 2, 4]})
    with pytest.raises(MissingLabelError, match="6 element"):
        run(df)
    r = run(df, missing="skip")
    assert r.skipped == 6 and r.stats.n == 1
    bad = pd.DataFrame({"gold": [1, 2], "guess": [1, 1], "w": [1.0, 0.5]})
    with pytest.raises(InvalidWeightError):
        run(bad)


def test_a_null_weight_is_named_and_a_huge_total_refused():
    """Before: a NULL weight left a NULL cell count behind and ``from_rows`` failed on
    ``int(None)`` (a bare TypeError); weights of 2**58 were taken and three of 2**56 ran out of
    memory in the expected mutual information."""
    nulls = pd.DataFrame({"gold": [1, 1, 2], "guess": [1, 2, 2], "w": pd.array([1, None, 2], dtype="Int64")})
    with pytest.raises(InvalidWeightError, match="sql: 1 weight"):
        run(nulls)
    for w in ([2**58, 1, 1], [2**56] * 3):
        big = pd.DataFrame({"gold": [1, 1, 2], "guess": [1, 2, 2], "w": w})
        with pytest.raises(InvalidWeightError, match=f"total weight is {sum(w)}"):
            run(big)


def test_ami_metric_object_and_matching_metrics():
    rng = np.random.default_rng(3)
    t, p = rng.integers(0, 30, 3000), rng.integers(0, 20, 3000)
    df = pd.DataFrame({"gold": t, "guess": p})
    ami = se.metrics.REGISTRY["AdjustedMutualInfo"]
    r = run(df, weight=None, metrics=[ami(average_method="max")])
    ref = ami(average_method="max")
    ref.table.update_many(t, p)
    assert r.values[ref.name] == ref.get()  # the same sums and size histograms, the same formula
    one = run(pd.DataFrame({"gold": [1, 1, 2], "guess": [5, 5, 5]}), weight=None)
    assert one.values["AdjustedMutualInfo"] == 0.0  # one predicted cluster: as the metric says
    with pytest.raises(ValueError, match="needs the table's cells"):
        run(df, weight=None, metrics=["CEAF"])
