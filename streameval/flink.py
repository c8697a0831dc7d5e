"""Exact evaluation on Apache Flink (PyFlink): a batch job, and a continuous query over a stream.

**Batch.** :func:`evaluate` runs the plan of :func:`streameval.sql.query` (the same SQL text,
unchanged, on Flink SQL): group the elements by cell, the cells by true and by predicted cluster,
join each cell with its two cluster sizes, and collect the four histograms over *distinct values*.
:func:`streameval.sql.from_rows` turns them into the exact stats, every metric's value (the same
:meth:`Metric.value` code as the streaming table) and AMI. Everything else runs in Flink's JVM; no
Python UDF is involved.

**Continuous.** In streaming mode the same query is an *updating* query: every aggregate and join
is maintained incrementally over an unbounded source, and Flink emits a changelog of the histogram
rows (``+I`` insert, ``-U``/``+U`` update before/after, ``-D`` delete). :class:`Live` runs the
query, reads that changelog in a background thread and applies it to :class:`LiveHistograms`, which
holds the histograms (one entry per distinct value, never the cells) in the Python process. A
retraction in the input — a changed prediction, a late correction, a deleted element, from a
changelog source (Debezium/Canal JSON, CDC connectors) or from ``key=`` (the latest row per element
id wins) — flows through every aggregate as a retraction, exactly as
:meth:`~streameval.Contingency.revert` does in the table. :func:`watch` yields the current metrics
at a chosen interval.

The histograms are *eventually* consistent: while a change propagates through Flink's operators
the Python side sees intermediate rows. :class:`LiveHistograms` keeps eleven running sums that
tie the four histograms together (each of ``N``, ``Σ n²``, ``Σ n·a``, ``Σ n·b`` and the cell count
computed from two or three histograms) and publishes a snapshot only when they all agree; once
the input pauses, the snapshot is the exact result for the elements read so far.

The changelog bookkeeping is plain Python (it runs without Flink):

>>> h = LiveHistograms()
>>> for kind, row in [("+I", ("cell", 2, 0, 0, 1, 0)), ("+I", ("row", 2, 4, 0, 1, 2)),
...                   ("+I", ("col", 2, 4, 0, 1, 2)), ("+I", ("fab", 2, 2, 2, 1, 0))]:
...     h.apply(kind, row)
>>> h.consistent(), h.n
(True, 2)
>>> h.apply("-U", ("cell", 2, 0, 0, 1, 0)); h.consistent()
False

Cost: batch, a few shuffles of the cells in Flink and a result of a few rows per distinct value;
continuous, Flink keeps the cells and the per-cluster rows in its state backend (distributed over
the task managers), and each input change costs O(cells of the two clusters it touches) in Flink
plus O(1) per changelog row in Python. The Python side holds O(distinct values).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time

from .distributed import Report
from .sql import from_rows, query

__all__ = [
    "local_environment",
    "histogram_table",
    "histogram_rows",
    "evaluate",
    "LiveHistograms",
    "Live",
    "watch",
]

_INSERT = {"+I", "+U", "INSERT", "UPDATE_AFTER"}
_RETRACT = {"-U", "-D", "UPDATE_BEFORE", "DELETE"}
_names = itertools.count()


def local_environment(streaming: bool = False, parallelism: int = 1, managed_memory: str = "64m",
                      mini_batch: str | None = "200 ms", mini_batch_size: int = 50_000, config=None):
    """A PyFlink ``TableEnvironment`` on the embedded local mini-cluster, sized for a small machine.

    ``streaming``: streaming mode (for :class:`Live` / :func:`watch`), else batch mode;
    ``parallelism``: default operator parallelism; ``managed_memory``: the task manager's managed
    memory (batch hash tables and sorts spill beyond it); ``mini_batch``: in streaming mode, the
    latency of Flink's mini-batch aggregation (each aggregate then emits one update per key per
    mini-batch, not one per element: essential for throughput), ``None`` to turn it off;
    ``mini_batch_size``: an aggregate also flushes when it has buffered this many records (large,
    so that flushes follow the mini-batch markers, which travel with the data); ``config``: further ``{key: value}`` Flink options. The JVM's heap is set by the ``JVM_ARGS``
    environment variable (e.g. ``-Xmx1g``) before the first environment of the process is made.
    On a cluster, make the environment as usual (``flink run --python ...``) instead. O(1) here
    (the first call starts the JVM). Not run as a doctest: PyFlink and Java live in their own
    environment (the Flink job of ``.ci/run``, ``tests/test_flink.py``).
    """
    from pyflink.common import Configuration
    from pyflink.table import EnvironmentSettings, TableEnvironment

    cfg = Configuration()
    opts = {"parallelism.default": str(parallelism),
            "taskmanager.memory.managed.size": managed_memory}
    if streaming and mini_batch:
        opts.update({"table.exec.mini-batch.enabled": "true",
                     "table.exec.mini-batch.allow-latency": mini_batch,
                     "table.exec.mini-batch.size": str(mini_batch_size)})
    opts.update(config or {})
    for k, v in opts.items():
        cfg.set_string(k, str(v))
    settings = EnvironmentSettings.new_instance()
    settings = settings.in_streaming_mode() if streaming else settings.in_batch_mode()
    return TableEnvironment.create(settings.with_configuration(cfg).build())


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def histogram_table(table_env, table, true: str, pred: str, weight: str | None = None,
                    key: str | None = None):
    """The Flink ``Table`` of histogram rows ``(part, x, y, z, cnt, mx)`` (see :mod:`streameval.sql`).

    ``table``: a PyFlink ``Table`` or the name of a registered table; ``true``, ``pred``,
    ``weight``: column names (quoted here); ``key``: an element-id column, so that a later row
    with the same id *replaces* the earlier one (Flink's keep-last-row deduplication on processing
    time: in streaming mode the replaced row is retracted). Lazy: nothing runs until the table is
    executed. In batch mode the result is final; in streaming mode it is an updating table.
    Cost on the engine: :func:`streameval.sql.query`'s (one aggregation over the elements, two
    over the cells, two hash joins).
    """
    src = table_env.from_path(table) if isinstance(table, str) else table
    columns = src.get_resolved_schema().get_column_names()
    for c in [true, pred] + [c for c in (weight, key) if c is not None]:
        if c not in columns:
            raise KeyError(f"column {c!r} not in the table (it has {columns})")
    if not isinstance(table, str):
        name = f"streameval_src_{next(_names)}"
        table_env.create_temporary_view(name, table)
        table = name
    source = table if any(c in table for c in "(.`") else _quote(table)
    if key is not None:
        name = f"streameval_latest_{next(_names)}"
        table_env.create_temporary_view(
            name,
            table_env.sql_query(
                f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {_quote(key)} "
                f"ORDER BY streameval_pt DESC) AS streameval_rn FROM "
                f"(SELECT *, PROCTIME() AS streameval_pt FROM {source})) WHERE streameval_rn = 1"
            ),
        )
        source = name
    text = query(source, _quote(true), _quote(pred), _quote(weight) if weight else None)
    return table_env.sql_query(text)


def _kind(row) -> str:
    return str(row.get_row_kind())


def histogram_rows(table_env, table, true: str, pred: str, weight: str | None = None,
                   key: str | None = None) -> list:
    """Run :func:`histogram_table` to its end and return its final rows (a bounded input).

    Works in batch mode (only inserts) and in streaming mode over a bounded source (the changelog
    is applied to :class:`LiveHistograms`; the rows left are the final result). Cost: the
    query's on the engine plus O(changelog rows) here.
    """
    h = LiveHistograms()
    with histogram_table(table_env, table, true, pred, weight, key).execute().collect() as rows:
        for row in rows:
            h.apply(_kind(row), tuple(row))
    return h.rows()


def evaluate(table_env, table, true: str, pred: str, weight: str | None = None, metrics=None,
             missing: str = "raise", ami: bool = True, key: str | None = None) -> Report:
    """Evaluate a (bounded) Flink table exactly; returns a :class:`~streameval.distributed.Report`.

    Parameters as :func:`streameval.dask.evaluate` (labels only), with ``table_env`` the PyFlink
    ``TableEnvironment`` (batch mode, or streaming mode over a bounded source) and ``table`` a
    ``Table`` or a registered table's name. Equal, stat for stat and value for value, to a
    :class:`~streameval.Contingency` fed the same elements. NULL labels are missing labels.
    Cost: :func:`histogram_rows`' plus O(distinct values) and the metrics' reads here.
    """
    if missing not in ("raise", "skip"):
        raise ValueError(f'missing must be "raise" or "skip", got {missing!r}')
    rows = histogram_rows(table_env, table, true, pred, weight, key)
    return from_rows(rows, metrics=metrics, missing=missing, ami=ami)


class LiveHistograms:
    """The current rows of the histogram query, kept from its changelog (pure Python).

    :meth:`apply` takes one changelog row: ``kind`` ``"+I"``/``"+U"`` sets the row of its key
    ``(part, x, y, z)``, ``"-U"``/``"-D"`` removes it (and must carry the value being removed,
    else :class:`ValueError`: the changelog is corrupt; nothing is changed). Eleven running sums
    are kept along, O(1) per row, so that :meth:`consistent` is O(1): the histograms agree when

    - ``N = Σ n·c`` over the cells ``= Σ a·k`` over the rows ``= Σ b·k`` over the columns ``= Σ n·c``
      over ``fab``;
    - ``Σ n²·c`` over the cells ``= Σ q·k`` over the rows ``=`` over the columns ``=`` over ``fab``;
    - the number of cells ``= Σ c`` over ``fab``; ``Σ n·a·c`` over ``fab = Σ a²·k`` over the rows;
      ``Σ n·b·c`` over ``fab = Σ b²·k`` over the columns.

    A change that has reached some operators but not others breaks one of them. Memory:
    O(distinct values).

    The histogram rows of the three elements ``(a, x), (a, x), (b, x)``: two cells (of 2 and 1),
    rows of sizes 2 and 1, one column of size 3 (``Σn² = 5``). Taking one cell back leaves the
    histograms inconsistent until its row and column follow (or it comes back):

    >>> from streameval.sql import from_rows
    >>> rows = [("cell", 2, 0, 0, 1, 0), ("cell", 1, 0, 0, 1, 0), ("row", 2, 4, 0, 1, 2),
    ...         ("row", 1, 1, 0, 1, 1), ("col", 3, 5, 0, 1, 2), ("fab", 2, 2, 3, 1, 0),
    ...         ("fab", 1, 1, 3, 1, 0)]
    >>> h = LiveHistograms()
    >>> for row in rows:
    ...     h.apply("+I", row)
    >>> h.n, h.consistent(), from_rows(h.rows(), metrics=["Rand"], ami=False).values
    (3, True, {'Rand': 0.333...})
    >>> h.apply("-D", rows[1]); h.n, h.consistent()
    (2, False)
    >>> h.apply("-D", rows[1])
    Traceback (most recent call last):
    ...
    ValueError: changelog retracts ('cell', 1, 0, 0) = (1, 0) but the current value is None: ...
    """

    _FIELDS = ("cell_n", "cell_sq", "cell_c", "row_n", "row_sq", "row_a2", "col_n", "col_sq",
               "col_b2", "fab_n", "fab_sq", "fab_c", "fab_na", "fab_nb")

    def __init__(self):
        self._rows: dict = {}
        self._sums = dict.fromkeys(self._FIELDS, 0)
        self.changes = 0  # changelog rows applied

    def _account(self, key, val, sign):
        part, x, y, z = key
        cnt = val[0]
        s = self._sums
        if part == "cell":
            s["cell_n"] += sign * x * cnt
            s["cell_sq"] += sign * x * x * cnt
            s["cell_c"] += sign * cnt
        elif part in ("row", "col"):
            s[part + "_n"] += sign * x * cnt
            s[part + "_sq"] += sign * y * cnt
            s["row_a2" if part == "row" else "col_b2"] += sign * x * x * cnt
        elif part == "fab":
            s["fab_n"] += sign * x * cnt
            s["fab_sq"] += sign * x * x * cnt
            s["fab_c"] += sign * cnt
            s["fab_na"] += sign * x * y * cnt
            s["fab_nb"] += sign * x * z * cnt

    def apply(self, kind, row) -> None:
        """Apply one changelog row ``(part, x, y, z, cnt, mx)`` of kind ``+I/+U/-U/-D``. O(1)."""
        kind = str(kind)
        part, x, y, z, cnt, mx = row
        key = (str(part).strip(), int(x), int(y), int(z))
        val = (int(cnt), int(mx or 0))
        if kind in _INSERT:
            old = self._rows.get(key)
            if old is not None:  # an upsert without its -U: replace
                self._account(key, old, -1)
            self._rows[key] = val
            self._account(key, val, 1)
        elif kind in _RETRACT:
            if self._rows.get(key) != val:
                raise ValueError(
                    f"changelog retracts {key} = {val} but the current value is "
                    f"{self._rows.get(key)}: the changelog is incomplete or out of order"
                )
            del self._rows[key]
            self._account(key, val, -1)
        else:
            raise ValueError(f"unknown changelog row kind {kind!r} (expected +I, +U, -U or -D)")
        self.changes += 1

    @property
    def n(self) -> int:
        """Total weight of the elements in the cell histogram, ``Σ n·c``. O(1)."""
        return self._sums["cell_n"]

    def consistent(self) -> bool:
        """Whether the four histograms agree (the identities above). O(1)."""
        s = self._sums
        n, sq = s["cell_n"], s["cell_sq"]
        return (
            s["row_n"] == s["col_n"] == s["fab_n"] == n
            and s["row_sq"] == s["col_sq"] == s["fab_sq"] == sq
            and s["fab_c"] == s["cell_c"]
            and s["fab_na"] == s["row_a2"]
            and s["fab_nb"] == s["col_b2"]
        )

    def rows(self) -> list:
        """The current rows as ``(part, x, y, z, cnt, mx)`` tuples (for :func:`~streameval.sql.from_rows`).
        O(distinct values)."""
        return [k + v for k, v in self._rows.items()]


class Live:
    """A continuous evaluation: the histogram query running in Flink, its changelog applied here.

    ``Live(table_env, table, true=..., pred=..., weight=None, key=None)`` (``table_env`` in
    streaming mode, see :func:`local_environment`) submits the updating query and starts a daemon
    thread reading its changelog into a :class:`LiveHistograms`. Each time the histograms are
    consistent after a change, the thread keeps a copy (O(distinct values)); :meth:`report` builds
    the exact :class:`~streameval.distributed.Report` from the latest copy; :meth:`wait_for` blocks
    until the copy covers a given total weight. Use as a context manager, or call :meth:`close`
    (cancels the Flink job). ``metrics``, ``missing``, ``ami`` as :func:`evaluate` (``ami``
    defaults to ``False`` here: it costs O(distinct size pairs · min size) per report).
    Not run as a doctest (PyFlink and Java: ``tests/test_flink.py``); :class:`LiveHistograms`,
    the part that runs here, has one.
    """

    def __init__(self, table_env, table, true: str, pred: str, weight: str | None = None,
                 key: str | None = None, metrics=None, missing: str = "raise", ami: bool = False):
        if missing not in ("raise", "skip"):
            raise ValueError(f'missing must be "raise" or "skip", got {missing!r}')
        self.metrics, self.missing, self.ami = metrics, missing, ami
        self.histograms = LiveHistograms()
        self._cond = threading.Condition()
        self._snapshot: list | None = None
        self._snapshot_n = -1
        self.version = 0  # consistent snapshots taken so far
        self.finished = False  # the job ended (a bounded source) or was closed
        self.error: BaseException | None = None
        table = histogram_table(table_env, table, true, pred, weight, key)
        self._result = table.execute()
        self._iter = self._result.collect()
        self._closing = False
        self._thread = threading.Thread(target=self._pump, name="streameval-flink", daemon=True)
        self._thread.start()

    def _pump(self):
        h = self.histograms
        try:
            for row in self._iter:
                with self._cond:
                    h.apply(_kind(row), tuple(row))
                    if h.consistent():
                        self._snapshot = h.rows()
                        self._snapshot_n = h.n
                        self.version += 1
                        self._cond.notify_all()
        except BaseException as e:  # noqa: BLE001  (a failed or cancelled job)
            if not self._closing:
                self.error = e
        finally:
            with self._cond:
                self.finished = True
                self._cond.notify_all()

    def report(self) -> Report | None:
        """The exact report of the latest consistent snapshot, or ``None`` before the first one.

        Cost O(distinct values) plus the metrics' reads (and AMI when asked).
        """
        with self._cond:
            rows = self._snapshot
        if rows is None or not any(r[0] == "cell" for r in rows):
            return None
        return from_rows(rows, metrics=self.metrics, missing=self.missing, ami=self.ami)

    def wait_for(self, n: int, timeout: float = 300.0) -> Report | None:
        """Block until a consistent snapshot covers total weight ``n``; return its report
        (``None`` if that snapshot holds no cell yet, as :meth:`report`).

        Raises :class:`TimeoutError` after ``timeout`` seconds, or the job's error if it failed.
        Cost: the wait, then :meth:`report`'s.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._snapshot_n != n:
                if self.error is not None:
                    raise RuntimeError("the Flink job failed") from self.error
                if self.finished:
                    raise RuntimeError(f"the Flink job ended at total weight {self._snapshot_n}, "
                                       f"not {n}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"no consistent snapshot at total weight {n} within {timeout} s (latest: "
                        f"{self._snapshot_n})"
                    )
                self._cond.wait(min(left, 1.0))
        return self.report()

    def reports(self, interval: float = 1.0):
        """Yield :meth:`report` every ``interval`` seconds (once there is one) until the job ends.

        The last report yielded after a bounded source ends is the final, exact result. Cost:
        :meth:`report`'s per report.
        """
        last = None
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self.finished, timeout=interval)
                done, version = self.finished, self.version
            if self.error is not None:
                raise RuntimeError("the Flink job failed") from self.error
            if version and (version != last or not done):
                r = self.report()
                if r is not None:
                    yield r
                last = version
            if done:
                return

    def close(self) -> None:
        """Cancel the Flink job (closing the collect iterator) and join the reader thread. O(1)
        (plus the wait for the thread)."""
        self._closing = True
        with contextlib.suppress(Exception):  # already finished
            self._iter.close()
        self._thread.join(timeout=60)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def watch(table_env, table, true: str, pred: str, weight: str | None = None,
          key: str | None = None, interval: float = 1.0, metrics=None, missing: str = "raise",
          ami: bool = False):
    """Yield the current exact :class:`~streameval.distributed.Report` every ``interval`` seconds.

    A generator over :meth:`Live.reports`: starts the continuous query on ``table`` (``table_env``
    in streaming mode), yields the report of the latest consistent snapshot at each interval, ends
    when the source does (a bounded source) and cancels the job when closed. ``report.stats.n``
    tells how much weight each report covers. Cost: the continuous query's on the engine, O(1)
    per changelog row here, O(distinct values) per report.
    """
    with Live(table_env, table, true, pred, weight, key, metrics, missing, ami) as live:
        yield from live.reports(interval)
