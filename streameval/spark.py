"""Exact evaluation of a Spark DataFrame with DataFrame expressions only (no Python UDFs).

The plan is the one of :func:`streameval.sql.query`, written with ``groupBy``/``agg``/``join``:
group the elements by cell, the cells by true and by predicted cluster, join each cell with its two
cluster sizes, and collect four histograms over *distinct values* (one ``unionByName``, one
``collect``). Everything else runs in the JVM; the driver receives a few thousand rows at most for
typical data, and :func:`streameval.sql.from_rows` turns them into exact stats, every metric's value
and AMI, through the same code as the streaming table.

Cost: three shuffles of the cells and two joins on the executors; driver memory O(distinct values).
Vectors (intrinsic metrics) are not offered here: use :mod:`streameval.dask`.
"""

from __future__ import annotations

from functools import reduce

from .distributed import Report
from .sql import from_rows

__all__ = ["evaluate", "histogram_frame"]


def histogram_frame(sdf, true: str, pred: str, weight: str | None = None):
    """The lazy Spark DataFrame of histogram rows ``(part, x, y, z, cnt, mx)`` (see sql.py).

    Built from DataFrame expressions only, so it runs entirely in the JVM. Cost on the engine:
    :func:`streameval.sql.query`'s (one aggregation over the elements, two over the cells, two
    joins). Not run as a doctest: pyspark and Java are in the separate Spark job of ``.ci/run``
    (``tests/test_spark.py``).
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    for c in [true, pred] + ([weight] if weight else []):
        if c not in sdf.columns:
            raise KeyError(f"column {c!r} not in the frame (it has {sdf.columns})")
    big = "bigint"
    zero = F.lit(0).cast(big)

    def missing(c):
        cond = F.col(c).isNull()
        if isinstance(sdf.schema[c].dataType, (DoubleType, FloatType)):
            cond = cond | F.isnan(F.col(c))
        return cond

    src = sdf.select(
        F.col(true).alias("t"),
        F.col(pred).alias("p"),
        (F.col(weight) if weight else F.lit(1)).alias("w"),
        (missing(true) | missing(pred)).alias("miss"),
    )
    els = src.where(~F.col("miss")).select("t", "p", F.col("w").cast(big).alias("w"))
    cells = els.groupBy("t", "p").agg(F.sum("w").alias("n"))
    sides = {
        key: cells.groupBy(key).agg(
            F.sum("n").alias("size"), F.sum(F.col("n") * F.col("n")).alias("sq"),
            F.max("n").alias("mx"),
        )
        for key in ("t", "p")
    }

    def shape(df, part, x, y=zero, z=zero, cnt="cnt", mx=zero):
        cols = {"x": x, "y": y, "z": z, "cnt": cnt, "mx": mx}
        return df.select(
            F.lit(part).alias("part"),
            *[(F.col(v) if isinstance(v, str) else v).cast(big).alias(k) for k, v in cols.items()],
        )

    count = F.count(F.lit(1)).alias("cnt")
    parts = [shape(cells.groupBy("n").agg(count), "cell", "n")]
    for key, part in (("t", "row"), ("p", "col")):
        agg = sides[key].groupBy("size", "sq").agg(count, F.sum("mx").alias("mx"))
        parts.append(shape(agg, part, "size", "sq", mx="mx"))
    joined = cells.join(sides["t"].select("t", F.col("size").alias("a")), "t").join(
        sides["p"].select("p", F.col("size").alias("b")), "p"
    )
    parts.append(shape(joined.groupBy("n", "a", "b").agg(count), "fab", "n", "a", "b"))
    n_missing = src.agg(
        F.coalesce(F.sum(F.when(F.col("miss"), F.col("w")).otherwise(0)), F.lit(0)).alias("cnt")
    )
    parts.append(shape(n_missing, "missing", zero))
    w = F.col("w")
    bad = src.where(~F.col("miss") & (w.isNull() | (w <= 0) | (w != F.floor(w))))
    parts.append(shape(bad.agg(count), "badweight", zero))
    return reduce(DataFrame.unionByName, parts)


def evaluate(sdf, true: str, pred: str, weight: str | None = None, metrics=None,
             missing: str = "raise", ami: bool = True) -> Report:
    """Evaluate a Spark DataFrame exactly; returns a :class:`~streameval.distributed.Report`.

    Parameters as :func:`streameval.dask.evaluate` (labels only). Equal, stat for stat, to a
    :class:`~streameval.Contingency` fed the same elements. Cost: :func:`histogram_frame`'s on
    the engine, then O(distinct values) and the metrics' reads here. Not run as a doctest
    (pyspark and Java: ``tests/test_spark.py``).
    """
    rows = histogram_frame(sdf, true, pred, weight).collect()
    return from_rows([tuple(r) for r in rows], metrics=metrics, missing=missing, ami=ami)
