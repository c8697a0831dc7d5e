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
    """An :class:`~streameval.Evaluator` of fresh metrics of ``classes`` (on ``table``)."""
    from ..evaluator import Evaluator

    return Evaluator([cls() for cls in classes], table=table)


def intrinsic_evaluator(distance: str):
    """The O(k)-per-read intrinsic metrics of one distance, over shared cluster summaries."""
    from .. import intrinsic as im

    if distance == "cosine":
        views = [im.CosineCompactness(), im.CosineSSB(), im.CosineSeparation(),
                 im.CosineDaviesBouldin()]
    else:
        views = [im.SSW(), im.SSB(), im.CalinskiHarabasz(), im.Separation(), im.RMSCompactness(),
                 im.RMSDaviesBouldin()]
    return im.IntrinsicEvaluator(views)


def cmd_score(args) -> int:
    """``streameval score``: count the file's (true, pred) cells in a dict, build the table once
    (:meth:`Evaluator.update_many`), print the values. O(1) per row; memory O(distinct cells)."""
    import numpy as np

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
                bar.update(source.offset - done)  # type: ignore[union-attr]  # big: a LineSource
                done = source.offset  # type: ignore[union-attr]
    finally:
        bar.close()
        if source is not None:
            source.close()
    ev = evaluator(classes)
    if counts:
        ts = np.empty(len(counts), dtype=object)
        ps = np.empty(len(counts), dtype=object)
        ts[:] = [k[0] for k in counts]
        ps[:] = [k[1] for k in counts]
        ev.update_many(ts, ps, np.fromiter(counts.values(), dtype=np.int64, count=len(counts)))
    table = ev.table
    print_values(ev, args.format, f"{args.file}: {rows} rows, {table.n} elements, "
                  f"{table.k_true} true clusters, {table.k_pred} predicted clusters",
                  extra=vectors.get() if vectors is not None else None)
    if rows == 0:
        warn(f"{args.file} holds no rows to score (an empty table scores 1.0 by convention)")
    policy.report()
    return 0


def add_parser(sub) -> None:
    """Add ``score`` to ``sub`` (an ``add_subparsers()`` object)."""
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
