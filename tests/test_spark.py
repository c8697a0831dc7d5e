"""streameval.spark and the SQL text on Spark SQL (local[2], UI off). Marked ``spark``; skipped
without pyspark or Java. CI runs them in a separate job when ``java`` is on the PATH."""

import os
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java", allow_module_level=True)

import streameval as se  # noqa: E402
from streameval.errors import MissingLabelError  # noqa: E402
from streameval.metrics import default_metrics  # noqa: E402
from streameval.spark import evaluate  # noqa: E402
from streameval.sql import from_rows, query  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("streameval-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def data(seed=0, n=4000):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 60, n)
    p = (t * 3 + rng.integers(0, 4, n)) % 70
    return pd.DataFrame({"gold": [f"e{v}" for v in t], "guess": p, "w": rng.integers(1, 4, n)})


def reference(df, weight=True):
    ev = se.Evaluator(default_metrics())
    ev.update_many(df["gold"].to_numpy(object), df["guess"].to_numpy(),
                   df["w"].to_numpy() if weight else None)
    return ev.table.stats(), ev.get()


@pytest.mark.parametrize("weight", [True, False])
def test_dataframe_api_equals_stream(spark, weight):
    df = data()
    r = evaluate(spark.createDataFrame(df), "gold", "guess", weight="w" if weight else None)
    s, values = reference(df, weight)
    assert r.stats == s
    assert {k: v for k, v in r.values.items() if k != "AdjustedMutualInfo"} == values


def test_sql_text_runs_on_spark_sql(spark):
    df = data(1)
    spark.createDataFrame(df).createOrReplaceTempView("els")
    rows = spark.sql(query("els", "gold", "guess", "w")).collect()
    r = from_rows([tuple(x) for x in rows])
    s, values = reference(df)
    assert r.stats == s


def test_missing_labels(spark):
    df = spark.createDataFrame([("a", 1.0), (None, 2.0), ("b", float("nan"))], ["gold", "guess"])
    with pytest.raises(MissingLabelError, match="2 element"):
        evaluate(df, "gold", "guess")
    assert evaluate(df, "gold", "guess", missing="skip").skipped == 2
