"""One SQL text that computes the contingency sums, for any SQL engine (DuckDB, Spark SQL, Flink SQL).

:func:`query` writes a single ``SELECT`` (common table expressions, ``GROUP BY``, two inner joins,
``UNION ALL``; only ``SUM``, ``MAX``, ``COUNT``, ``CASE`` and ``CAST(... AS BIGINT)``) whose result
is the four histograms of :mod:`streameval.distributed` plus two check counts, as rows
``(part, x, y, z, cnt, mx)``:

- ``part = 'cell'``: ``x`` a cell count, ``cnt`` the cells with that count;
- ``'row'`` / ``'col'``: ``x`` a cluster size, ``y`` its sum of squared cell counts, ``cnt`` the
  clusters with that pair, ``mx`` the sum of their largest cells;
- ``'fab'``: ``(x, y, z) = (n, a, b)``, a cell count with its row and column sizes, ``cnt`` cells;
- ``'missing'``: ``cnt`` elements with a NULL label; ``'badweight'``: ``cnt`` rows whose weight is
  not a positive integer.

The result has one row per *distinct value*, never one per cell or cluster; :func:`from_rows`
turns it into an exact :class:`~streameval.distributed.Report`. :func:`evaluate_duckdb` runs it on
DuckDB (embedded; works on Parquet/CSV files larger than memory).

>>> import duckdb
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE els AS SELECT * FROM (VALUES (1, 'a'), (1, 'a'), (2, 'a')) v(t, p)")
>>> r = from_rows(con.execute(query("els", true="t", pred="p")).fetchall(), metrics=["Purity"])
>>> r.values["Purity"], r.stats.cells
(0.6666666666666666, 2)
"""

from __future__ import annotations

from .distributed import Histograms, check_counts, make_report, plan_metrics
from .errors import InvalidStateError

__all__ = ["query", "from_rows", "evaluate_duckdb"]

_TEMPLATE = """\
WITH src AS (
  SELECT {true} AS t, {pred} AS p, {weight} AS w FROM {table}
),
els AS (
  SELECT t, p, CAST(w AS BIGINT) AS w FROM src
  WHERE t IS NOT NULL AND p IS NOT NULL
),
cells AS (
  SELECT t, p, SUM(w) AS n FROM els GROUP BY t, p
),
trues AS (
  SELECT t, SUM(n) AS size, SUM(n * n) AS sq, MAX(n) AS mx FROM cells GROUP BY t
),
preds AS (
  SELECT p, SUM(n) AS size, SUM(n * n) AS sq, MAX(n) AS mx FROM cells GROUP BY p
)
SELECT 'cell' AS part, n AS x, CAST(0 AS BIGINT) AS y, CAST(0 AS BIGINT) AS z,
       COUNT(*) AS cnt, CAST(0 AS BIGINT) AS mx
FROM cells GROUP BY n
UNION ALL
SELECT 'row', size, sq, CAST(0 AS BIGINT), COUNT(*), SUM(mx) FROM trues GROUP BY size, sq
UNION ALL
SELECT 'col', size, sq, CAST(0 AS BIGINT), COUNT(*), SUM(mx) FROM preds GROUP BY size, sq
UNION ALL
SELECT 'fab', c.n, r.size, k.size, COUNT(*), CAST(0 AS BIGINT)
FROM cells c JOIN trues r ON c.t = r.t JOIN preds k ON c.p = k.p
GROUP BY c.n, r.size, k.size
UNION ALL
SELECT 'missing', CAST(0 AS BIGINT), CAST(0 AS BIGINT), CAST(0 AS BIGINT),
       CAST(COALESCE(SUM(CASE WHEN t IS NULL OR p IS NULL THEN w ELSE 0 END), 0) AS BIGINT),
       CAST(0 AS BIGINT)
FROM src
UNION ALL
SELECT 'badweight', CAST(0 AS BIGINT), CAST(0 AS BIGINT), CAST(0 AS BIGINT),
       CAST(COUNT(*) AS BIGINT), CAST(0 AS BIGINT)
FROM src
WHERE t IS NOT NULL AND p IS NOT NULL
  AND (w IS NULL OR w <= 0 OR w <> FLOOR(w))"""


def query(table: str, true: str, pred: str, weight: str | None = None) -> str:
    """The SQL text computing the histograms of the elements in ``table``.

    ``table``: a table name or a parenthesised subquery (DuckDB also takes
    ``read_parquet('...')``); ``true``, ``pred``, ``weight``: column names or expressions (quote
    them in the engine's own way if needed), ``weight=None`` counts each row once. Standard SQL:
    runs unchanged on DuckDB, Spark SQL and Flink SQL (batch mode). Cost on the engine: one
    aggregation over the elements, two over the cells, two hash joins.

    >>> print(query("t1", "gold", "guess").splitlines()[1])
      SELECT gold AS t, guess AS p, 1 AS w FROM t1
    """
    return _TEMPLATE.format(table=table, true=true, pred=pred, weight=weight or "1")


_PARTS = ("cell", "row", "col", "fab", "missing", "badweight")
# the parts whose rows are keyed (one row per key in one query's result), and what the key is
_KEYED = {"cell": "n", "row": "(size, sq)", "col": "(size, sq)", "fab": "(n, a, b)"}


def from_rows(rows, metrics=None, missing: str = "raise", ami: bool = True):
    """A :class:`~streameval.distributed.Report` from the rows of :func:`query`'s result.

    ``rows``: an iterable of ``(part, x, y, z, cnt, mx)`` tuples (any engine's fetch). Raises the
    library's errors for NULL labels (unless ``missing="skip"``) or bad weights, and
    :class:`~streameval.errors.InvalidStateError` for rows that are no result of one query: a
    row of an unknown kind, or two rows of one histogram with the same key (the results of
    several queries concatenated: one would overwrite the other, and adding them is wrong too,
    since a cluster split across shards is not two clusters). Cost O(rows of the result) plus
    the metrics' reads.

    >>> from_rows([("cell", 1, 0, 0, 2, 0), ("cell", 1, 0, 0, 3, 0)])
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidStateError: sql: two 'cell' rows for n = 1 in the result: the rows of one query give each once (the results of several queries, e.g. of shards, cannot be joined row by row: query the union of the shards' elements)
    """
    chosen, f_specs = plan_metrics(metrics)
    h = Histograms()
    rows = [(part.strip(), *rest) for part, *rest in rows]  # engines may pad CHAR literals
    # the counts of missing labels and bad weights first: a NULL weight leaves NULL sums behind
    n_missing = sum(int(r[4] or 0) for r in rows if r[0] == "missing")
    bad = sum(int(r[4] or 0) for r in rows if r[0] == "badweight")
    check_counts(n_missing, bad, missing, "sql")
    seen: set = set()
    for part, x, y, z, cnt, mx in rows:
        if part not in _PARTS:
            raise InvalidStateError(f"sql: unknown row kind {part!r} in the result (expected one "
                                    f"of {', '.join(map(repr, _PARTS))})")
        x, y, z, cnt = int(x), int(y), int(z), int(cnt)
        key = (part, x, y, z)
        if key in seen and part in _KEYED:  # never one overwriting the other, never summed
            raise InvalidStateError(
                f"sql: two {part!r} rows for {_KEYED[part]} = "
                f"{key[1] if part == 'cell' else key[1:3] if part != 'fab' else key[1:]} in the result: the rows of one query give each once (the results of several "
                "queries, e.g. of shards, cannot be joined row by row: query the union of the "
                "shards' elements)"
            )
        seen.add(key)
        if part == "cell":
            h.cells[x] = cnt
        elif part in ("row", "col"):
            getattr(h, part + "s")[x, y] = (cnt, int(mx))
        elif part == "fab":
            h.fab[x, y, z] = cnt
    return make_report(h, chosen, f_specs, ami=ami, skipped=n_missing if missing == "skip" else 0)


def evaluate_duckdb(table: str, true: str, pred: str, weight: str | None = None, metrics=None,
                    missing: str = "raise", ami: bool = True, connection=None):
    """Run :func:`query` on DuckDB and return the report.

    ``connection``: a ``duckdb`` connection holding ``table`` (default: a new in-memory one, so
    ``table`` should then be a file reader such as ``read_parquet('big.parquet')``). Cost:
    :func:`query`'s on DuckDB, then :func:`from_rows`'.

    Three elements, cells ``(a, x) = 2`` and ``(b, x) = 1``: of 3 pairs, 1 is linked on both
    sides and 2 only in the prediction, so Rand is ``1/3``:

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('a', 'x'), ('a', 'x'), ('b', 'x')) v(gold, guess)")
    >>> r = evaluate_duckdb("t", "gold", "guess", metrics=["Rand"], ami=False, connection=con)
    >>> r.values, r.stats.n, sorted(r.sizes_true.items())    # true clusters of sizes 1 and 2
    ({'Rand': 0.333...}, 3, [(1, 1), (2, 1)])
    """
    import duckdb

    con = connection if connection is not None else duckdb.connect()
    rows = con.execute(query(table, true, pred, weight)).fetchall()
    return from_rows(rows, metrics=metrics, missing=missing, ami=ami)
