"""``streameval score FILE --true COL --pred COL``: the metrics of a whole file (CSV, TSV, JSON
lines, Parquet), as a table or as a JSON object of metric name to value; ``--vector`` adds the
intrinsic metrics of the predicted clusters, ``--ci`` intervals over units (:mod:`.compare`).
"""

from __future__ import annotations

import os

from ..errors import InputError, StreamevalError
from ..io import LineSource, iter_parquet_rows, iter_text_rows
from .options import ErrorPolicy, add_row_options, format_or_usage, metric_classes, row_spec
from .render import print_values, progress, warn

__all__ = ["cmd_score", "add_parser", "intrinsic_evaluator", "evaluator"]


def evaluator(classes, table=None):
    """An :class:`~streameval.Evaluator` of fresh metrics of ``classes`` (on ``table``).
    O(metrics).

    >>> from streameval import ELM, Purity
    >>> list(evaluator([ELM, Purity]).metrics)
    ['ELM', 'Purity']
    """
    from ..evaluator import Evaluator

    return Evaluator([cls() for cls in classes], table=table)


def intrinsic_evaluator(distance: str):
    """The O(k)-per-read intrinsic metrics of one distance, over shared cluster summaries.
    O(metrics) to build.

    >>> list(intrinsic_evaluator("cosine").metrics)
    ['CosineCompactness', 'CosineSSB', 'CosineSeparation', 'CosineDaviesBouldin']
    """
    from .. import intrinsic as im

    if distance == "cosine":
        views = [im.CosineCompactness(), im.CosineSSB(), im.CosineSeparation(),
                 im.CosineDaviesBouldin()]
    else:
        views = [im.SSW(), im.SSB(), im.CalinskiHarabasz(), im.Separation(), im.RMSCompactness(),
                 im.RMSDaviesBouldin()]
    return im.IntrinsicEvaluator(views)


def cmd_score(args) -> int:
    """``streameval score``: the file read a block at a time (:func:`streameval.blocks.iter_blocks`:
    label codes and weights, parsed in C by pyarrow where it can), the table built by a few
    :meth:`Evaluator.update_many` calls, the values printed. O(1) per row; memory O(distinct cells)
    plus a bounded number of rows waiting for the next ``update_many``.

    Four rows (``n[0,a] = 2``, ``n[1,a] = n[1,b] = 1``): pair precision ``TP/PP = 1/3``, purity
    ``(2 + 1)/4``:

    >>> import os, tempfile
    >>> from streameval.cli import main
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p\\n0,a\\n0,a\\n1,a\\n1,b\\n")
    >>> main(["score", path, "--true", "t", "--pred", "p", "--metrics", "PairPrecision", "Purity"])
    /...rows.csv: 4 rows, 4 elements, 2 true clusters, 2 predicted clusters
    metric              value
    PairPrecision    0.333333
    Purity           0.750000
    0
    >>> tmp.cleanup()
    """
    if getattr(args, "ci", False):  # intervals over units: streameval.cli.compare
        from .compare import cmd_score_ci

        return cmd_score_ci(args)
    if getattr(args, "sample", None):  # estimates from a labelled sample: streameval.cli.sample
        from .sample import cmd_score_sample

        return cmd_score_sample(args)
    classes = metric_classes(args.metrics)
    policy = ErrorPolicy(args.on_error)
    spec = row_spec(args)
    fmt = format_or_usage(args.file, args.input_format)
    ev = evaluator(classes)
    if fmt == "parquet" or spec.vector:
        rows, vectors = _score_rows(args, fmt, spec, policy, ev)
    else:
        rows, vectors = _score_blocks(args, fmt, spec, policy, ev), None
    table = ev.table
    print_values(ev, args.format, f"{args.file}: {rows} rows, {table.n} elements, "
                  f"{table.k_true} true clusters, {table.k_pred} predicted clusters",
                  extra=vectors.get() if vectors is not None else None)
    if rows == 0:
        warn(f"{args.file} holds no rows to score (an empty table scores 1.0 by convention)")
    policy.report()
    return 0


FLUSH = 1 << 21  # rows taken before they go into the table in one update_many


def _score_blocks(args, fmt, spec, policy, ev) -> int:
    """Add the rows of a text file to ``ev`` (labels as codes), in ``update_many`` calls of at least
    :data:`FLUSH` rows (or the whole file); the number of rows."""
    import numpy as np

    from ..blocks import iter_blocks

    source = LineSource.open(args.file, max_line=args.max_line_bytes)
    big = args.file != "-" and os.path.getsize(args.file) > 2**24
    bar = progress(os.path.getsize(args.file) if big else 0, args.file,
                   big and not args.no_progress, unit="B")
    waiting: list = []
    rows = held = done = 0

    def flush():
        ts = np.concatenate([b.true for b in waiting])
        ps = np.concatenate([b.pred for b in waiting])
        w = None
        if any(b.weight is not None for b in waiting):
            w = np.concatenate([np.ones(b.rows, np.int64) if b.weight is None else b.weight
                                for b in waiting])
        ev.update_many(ts, ps, w)
        waiting.clear()

    try:
        for block in iter_blocks(source, fmt, spec, policy):
            waiting.append(block)
            rows += block.rows
            held += block.rows
            if held >= FLUSH:
                flush()
                held = 0
            if big:
                bar.update(block.offset - done)
                done = block.offset
        if waiting:
            flush()
    finally:
        bar.close()
        source.close()
    return rows


def _score_rows(args, fmt, spec, policy, ev):
    """Count the cells of a Parquet file, or of rows with vectors, in a dict; build the table once.
    The number of rows and the intrinsic evaluator (``None`` without ``--vector``)."""
    import numpy as np

    if fmt == "parquet":
        source = None
        found = iter_parquet_rows(args.file, spec, policy)
    else:
        source = LineSource.open(args.file, max_line=args.max_line_bytes)
        found = iter_text_rows(source, fmt, spec, policy)
    big = source is not None and args.file != "-" and os.path.getsize(args.file) > 2**24
    bar = progress(os.path.getsize(args.file) if big else 0, args.file,
                   big and not args.no_progress, unit="B")
    counts: dict = {}
    get = counts.get
    rows = done = 0
    vectors = intrinsic_evaluator(args.distance) if spec.vector else None
    try:
        for row in found:
            t, p, w = row[0], row[1], row[2]
            if vectors is not None:
                try:
                    vectors.update(row[3], p, w)
                except StreamevalError as e:  # e.g. a zero vector under the cosine distance
                    policy(InputError(args.file, rows + 1, str(e), unit="data row"))
                    continue
            key = (t, p)
            counts[key] = get(key, 0) + w
            rows += 1
            if not rows & 0xFFFF and big:
                bar.update(source.offset - done)  # big: a LineSource
                done = source.offset
    finally:
        bar.close()
        if source is not None:
            source.close()
    if counts:
        ts = np.empty(len(counts), dtype=object)
        ps = np.empty(len(counts), dtype=object)
        ts[:] = [k[0] for k in counts]
        ps[:] = [k[1] for k in counts]
        ev.update_many(ts, ps, np.fromiter(counts.values(), dtype=np.int64, count=len(counts)))
    return rows, vectors


def add_parser(sub) -> None:
    """Add ``score`` to ``sub`` (an ``add_subparsers()`` object). O(options).

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="streameval")
    >>> add_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["score", "f.csv", "--true", "t", "--pred", "p"])
    >>> args.func is cmd_score, args.format
    (True, 'table')
    """
    from .compare import add_score_ci_options
    from .sample import add_sample_option

    p = sub.add_parser("score", help="score a whole file of (true, predicted[, weight]) rows",
                       description="Compute the metrics of a file of (true label, predicted label"
                       "[, weight]) rows: CSV, TSV, JSON lines or Parquet.")
    add_row_options(p, follow=False)
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="a table, or a JSON object of metric name to value")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (shown on a terminal for files over 16 MB)")
    p.add_argument("--vector", nargs="+", metavar="COL",
                   help="feature-vector columns (several numeric columns, or one column holding "
                   "the whole vector): also report the intrinsic metrics of the predicted clusters")
    p.add_argument("--distance", choices=("euclidean", "cosine"), default="euclidean",
                   help="distance of the intrinsic metrics (with --vector; default euclidean)")
    add_score_ci_options(p)  # score --ci --unit COL
    add_sample_option(p)  # score --sample DESIGN
    p.set_defaults(func=cmd_score)
