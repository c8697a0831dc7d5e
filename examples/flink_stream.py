"""A live evaluation on Apache Flink: a stream of labelled elements, its metrics as they arrive.

Flink's own generator (the ``datagen`` connector, a sequence ``i = 0, 1, 2, ...`` at a fixed rate)
feeds the synthetic resolver of ``examples/distributed_er.py``: record ``i`` belongs to entity
``i // 5``, the resolver gets 92% right, splits 5% off and merges 3% into the next entity. The
continuous query keeps the histograms as Flink updating aggregates; every ``--interval`` seconds
the current exact metrics are printed, and checked against a streaming ``Contingency`` fed the
same first ``n`` records (parallelism 1: the source emits them in order).

Needs PyFlink (``pip install apache-flink`` in its own virtual environment) and Java 17:

    PYTHONPATH=. /path/to/venv-flink/bin/python examples/flink_stream.py            # 20,000 records
    PYTHONPATH=. /path/to/venv-flink/bin/python examples/flink_stream.py --n 200000 --rate 20000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from distributed_er import HASH, MERGE, SPLIT, numpy_labels  # noqa: E402

SIZE = 5


def source(table_env, n: int, rate: int):
    """The records as a Flink table: ``datagen`` sequence, labels by SQL expressions."""
    k = n // SIZE
    table_env.execute_sql(f"""
        CREATE TEMPORARY TABLE seq (i BIGINT) WITH (
          'connector' = 'datagen', 'number-of-rows' = '{n}', 'rows-per-second' = '{rate}',
          'fields.i.kind' = 'sequence', 'fields.i.start' = '0', 'fields.i.end' = '{n - 1}')""")
    return table_env.sql_query(
        f"SELECT i / {SIZE} AS true_id, CASE WHEN MOD(i * {HASH}, 100) < {SPLIT} THEN {k} + i "
        f"WHEN MOD(i * {HASH}, 100) < {MERGE} THEN MOD(i / {SIZE} + 1, {k}) ELSE i / {SIZE} END "
        "AS pred_id FROM seq"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000, help="records in the stream")
    ap.add_argument("--rate", type=int, default=2_000, help="records per second")
    ap.add_argument("--interval", type=float, default=2.0, help="seconds between reports")
    args = ap.parse_args(argv)
    os.environ.setdefault("JVM_ARGS", "-Xmx1g")

    import streameval as se
    from streameval import flink

    env = flink.local_environment(streaming=True, parallelism=1)
    table = se.Contingency()  # the streaming table over the same prefix, for the check
    table.track_f("elm")
    table.track_f("bcubed")
    seen = 0
    t0 = time.perf_counter()
    print(f"{'time':>6s} {'records':>9s} {'ELM':>8s} {'BCubed':>8s} {'AdjRand':>8s} "
          f"{'NMI':>8s}  equal to the table over the same prefix")
    for report in flink.watch(env, source(env, args.n, args.rate), "true_id", "pred_id",
                              interval=args.interval):
        n = report.stats.n
        if n > seen:
            t, p = numpy_labels(seen, n, args.n, SIZE)
            table.update_many(t, p)
            seen = n
        same = report.stats == table.stats()
        v = report.values
        print(f"{time.perf_counter() - t0:6.1f} {n:9,d} {v['ELM']:8.5f} {v['BCubed']:8.5f} "
              f"{v['AdjustedRand']:8.5f} {v['NormalizedMutualInfo']:8.5f}  {same}", flush=True)
        if not same:
            raise SystemExit(f"the live report over {n} records differs from the table")
    print(f"done: {seen:,} records; every report equal to the streaming table over its prefix")


if __name__ == "__main__":
    main()
