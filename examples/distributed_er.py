"""Entity resolution at scale: 10⁷ records, 10⁶ entities, evaluated exactly on three engines.

A synthetic resolver output: record ``i`` belongs to entity ``i // size``; the resolver gets 92% of
records right, splits 5% off as singletons and merges 3% into the neighbouring entity (a
deterministic hash of ``i`` decides). Every engine generates the same records itself (Dask on its
workers, DuckDB from ``range``, Spark from ``spark.range``), evaluates them, and the exact stats
must agree to the last bit.

    python examples/distributed_er.py            # 10⁷ records (a few minutes on 2 cores)
    python examples/distributed_er.py --quick    # 10⁵ records
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

import numpy as np

HASH = 2654435761  # Knuth's multiplicative hash: record i is "unlucky" when (i * HASH) % 100 < 8
SPLIT, MERGE = 5, 8  # < 5: split off as a singleton; 5..7: merged into the next entity


def numpy_labels(lo: int, hi: int, n: int, size: int):
    """True and predicted labels of records ``lo..hi-1`` (numpy)."""
    i = np.arange(lo, hi, dtype=np.int64)
    true = i // size
    k = n // size
    h = (i * HASH) % 100
    pred = np.where(h < SPLIT, k + i, np.where(h < MERGE, (true + 1) % k, true))
    return true, pred


def dask_frame(n: int, size: int, parts: int):
    """A Dask DataFrame whose partitions are generated on the workers."""
    import dask.dataframe as dd
    import pandas as pd

    step = -(-n // parts)

    def part(j):
        t, p = numpy_labels(j * step, min(n, (j + 1) * step), n, size)
        return pd.DataFrame({"true": t, "pred": p})

    return dd.from_map(part, range(parts))


def sql_source(n: int, size: int) -> str:
    """The same records as a SQL subquery (DuckDB's ``range``)."""
    k = n // size
    return (
        f"(SELECT i // {size} AS true_id, CASE WHEN (i * {HASH}) % 100 < {SPLIT} THEN {k} + i "
        f"WHEN (i * {HASH}) % 100 < {MERGE} THEN (i // {size} + 1) % {k} ELSE i // {size} END "
        f"AS pred_id FROM range({n}) r(i))"
    )


def spark_frame(spark, n: int, size: int):
    """The same records as a Spark DataFrame (``spark.range``, column expressions)."""
    from pyspark.sql import functions as F

    k = n // size
    i = F.col("id")
    h = (i * HASH) % 100
    true = F.floor(i / size).cast("bigint")
    pred = F.when(h < SPLIT, k + i).when(h < MERGE, (true + 1) % k).otherwise(true)
    return spark.range(n).select(true.alias("true"), pred.alias("pred"))


def run_dask(n, size, workers=2, memory_limit="4GiB"):
    import dask
    from distributed import Client, LocalCluster

    from streameval.dask import evaluate

    with (
        dask.config.set({"dataframe.shuffle.method": "tasks"}),
        LocalCluster(n_workers=workers, threads_per_worker=1, memory_limit=memory_limit,
                     dashboard_address=":0") as cluster,
        Client(cluster),
    ):
        parts = max(4, n // 500_000)
        return evaluate(dask_frame(n, size, parts), "true", "pred", split_out=parts)


def run_duckdb(n, size):
    from streameval.sql import evaluate_duckdb

    return evaluate_duckdb(sql_source(n, size), "true_id", "pred_id")


def spark_unavailable() -> str | None:
    """Why Spark cannot run here (pyspark or Java missing), or ``None`` when it can."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'pyspark>=3.5')"
    if shutil.which("java") is None:
        return "Java is not installed (Spark needs a JVM: apt-get install default-jre-headless)"
    return None


def spark_session():
    """A local Spark session (local[2], UI off), or ``None`` when pyspark or Java is missing."""
    if spark_unavailable() is not None:
        return None
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8").config("spark.driver.memory", "8g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_spark(n, size, spark):
    from streameval.spark import evaluate

    return evaluate(spark_frame(spark, n, size), "true", "pred")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10⁵ records instead of 10⁷")
    ap.add_argument("--no-spark", action="store_true")
    args = ap.parse_args(argv)
    n = 100_000 if args.quick else 10_000_000
    size = 10
    runs = {"dask": lambda: run_dask(n, size), "duckdb": lambda: run_duckdb(n, size)}
    skipped = "--no-spark was given" if args.no_spark else spark_unavailable()
    spark = None if skipped else spark_session()
    if spark is not None:
        runs["spark"] = lambda: run_spark(n, size, spark)
    else:
        print(f"Spark skipped: {skipped}; comparing {' and '.join(runs)} only", file=sys.stderr)
    reports = {}
    for name, fn in runs.items():
        t0 = time.perf_counter()
        reports[name] = fn()
        print(f"{name:7s} {time.perf_counter() - t0:7.1f} s")
    if spark is not None:
        spark.stop()
    first = next(iter(reports.values()))
    for name, r in reports.items():
        assert r.stats == first.stats, f"{name} disagrees"
    print(f"{n:,} records, {first.stats.k_true:,} entities, {first.stats.k_pred:,} predicted "
          f"clusters; engines agree on every sum: {', '.join(reports)}"
          + ("" if spark is not None else " (Spark skipped)"))
    for metric in ("ELM", "BCubed", "AdjustedRand", "PairF1", "NormalizedMutualInfo",
                   "AdjustedMutualInfo", "Purity", "InversePurity"):
        print(f"  {metric:22s} {first.values[metric]:.6f}")
    return reports


if __name__ == "__main__":
    main()
