"""``streameval compare``, ``score --ci`` and ``pss --compare``: confidence intervals and paired
tests (:mod:`streameval.comparison`).

- ``streameval compare GOLD SYS_A [SYS_B ...] --unit COL``: each system's metrics with intervals and
  the pairwise differences with p-values. Every file holds one row per element, in the same order,
  with the unit column (``--unit``) and a label column (``--label``, default ``label``; the systems'
  may be named apart with ``--pred-label``, and one system's column given as ``FILE:COLUMN``, so
  that two prediction columns of one file are two systems: ``day1.csv:cluster
  day1.csv:cluster_v2``). The unit of every row must agree between the files: that is how a
  misaligned file is caught. The report's warnings (few units, a dominant unit, widened units)
  are printed with the table, and on standard error with ``--format json``.
- ``streameval score FILE --true COL --pred COL --ci --unit COL``: the usual score, with intervals.
- ``streameval pss --compare GOLD PRED [PRED ...] [--baselines]``: page streams, unit = stream
  (``--baselines`` adds the three baselines of the ELM paper computed from the gold streams).

Output: a plain table (default) or JSON (``--format json``). Errors are one line, exit status 1
(2 for usage errors), as for the other subcommands.

>>> p = argparse.ArgumentParser(prog="streameval")
>>> add_parser(p.add_subparsers(dest="command"))
>>> a = p.parse_args(["compare", "g.csv", "a.csv", "b.csv", "--unit", "doc", "--seed", "3"])
>>> a.gold, a.systems, a.unit, a.label, a.seed, a.method, a.interval
('g.csv', ['a.csv', 'b.csv'], 'doc', 'label', 3, 'randomization', 'adaptive')
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..errors import CLIError
from ..intervals import COMPARE_INTERVAL_METHODS
from .options import metric_classes, non_negative, plain_float, positive

__all__ = ["add_parser", "cmd_compare", "add_score_ci_options", "cmd_score_ci", "cmd_pss_compare"]




class CompareError(CLIError):
    """A user-facing error of the compare commands (printed as one line)."""


def _probability(s: str) -> float:
    v = plain_float(s)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {s!r}")
    return v


def _resampling_options(p, *, tests: bool, n_default: int = 1000) -> None:
    if tests:
        p.add_argument("--method", choices=("randomization", "paired_bootstrap"),
                       default="randomization",
                       help="the test behind the p-values: approximate randomization (default: "
                       "calibrated with few, heavy-tailed or widened units) or the centred paired "
                       "bootstrap (intervals always come from the bootstrap over units)")
    p.add_argument("--interval", choices=COMPARE_INTERVAL_METHODS, default="adaptive",
                   help="bootstrap interval: adaptive (default: studentized, or where one unit "
                   "holds more than 15%% of a labelling's pairs subsampled, hybrid up to 49 "
                   "units), studentized (bootstrap-t with each resample's "
                   "linearization standard error), hybrid (the union of the percentile interval "
                   "and the bootstrap-t centred at the resamples' mean), subsampled (the hybrid "
                   "interval joined with the bootstrap-t of m-out-of-U resamples, m = min(U, "
                   "7 sqrt U)), percentile, or bias-corrected and accelerated (bca)")
    p.add_argument("--n-resamples", type=positive, default=n_default, metavar="B",
                   help=f"bootstrap resamples (and randomization rounds; default {n_default})")
    p.add_argument("--confidence", type=_probability, default=0.95, metavar="C",
                   help="coverage of the intervals (default 0.95)")
    p.add_argument("--seed", type=non_negative, default=0, help="random seed (default 0)")


def add_parser(sub) -> None:
    """Add the ``compare`` subcommand to ``sub`` (an ``add_subparsers()`` object). O(options).

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="streameval")
    >>> add_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["compare", "gold.csv", "a.csv", "b.csv", "--unit", "doc"])
    >>> args.func is cmd_compare, args.systems, args.unit, args.label
    (True, ['a.csv', 'b.csv'], 'doc', 'label')
    """
    p = sub.add_parser(
        "compare", help="is system A better than B? intervals and paired tests over units",
        description="Score several systems against the gold labels with confidence intervals "
        "(adaptive bootstrap over units) and test every pair (paired bootstrap or approximate "
        "randomization). Files: one row per element, in the same order, each with the unit column "
        "and a label column (CSV, TSV, JSON lines or Parquet).")
    p.add_argument("gold", help="gold file")
    p.add_argument("systems", nargs="+", metavar="SYSTEM",
                   help="one file per system, or FILE:COLUMN for the label column COLUMN of FILE "
                   "(two columns of one file are two systems)")
    p.add_argument("--unit", required=True, metavar="COL",
                   help="column of the resampling unit (a block holding whole clusters: a stream, "
                   "a document, a source batch)")
    p.add_argument("--label", default="label", metavar="COL",
                   help="column of the cluster label (default 'label')")
    p.add_argument("--pred-label", metavar="COL",
                   help="column of the label in the system files (default: --label)")
    p.add_argument("--names", nargs="+", metavar="NAME",
                   help="system names (default: the file names)")
    p.add_argument("--metrics", nargs="+", metavar="NAME",
                   help="metric names, as in score (default ELM BCubed AdjustedRand "
                   "NormalizedMutualInfo)")
    _resampling_options(p, tests=True)
    p.add_argument("--aggregate", choices=("pooled", "mean"), default="pooled",
                   help="one table over all units (default), or the mean of per-unit values")
    p.add_argument("--labels", choices=("global", "per_unit"), default="global",
                   help="labels name the same cluster everywhere (default; a cluster spanning two "
                   "units is an error), or only within their unit")
    p.add_argument("--cross-units", choices=("refuse", "widen"), default="refuse",
                   help="a cluster crossing two units is an error (default), or the units are "
                   "widened to the connected components of the units, the truth and every system "
                   "(reported with the largest component's size)")
    p.add_argument("--input-format", choices=("csv", "tsv", "jsonl", "parquet"),
                   help="format of every file (default: from the extension)")
    p.add_argument("--no-header", action="store_true",
                   help="CSV/TSV without a header line: columns are 1-based numbers")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    p.set_defaults(func=cmd_compare)


def _metric_classes(names):
    """The classes ``--metrics`` names (:func:`streameval.metrics.resolve`), or ``None`` for the
    comparison's default metrics."""
    return metric_classes(names) if names else None


def _read_pairs(path, first, second, fmt, header):
    """``[(first, second)]`` of every row (any bad row stops with its file and line)."""
    from ..io import RowSpec, read_rows

    spec = RowSpec(first, second, None, header=header)
    try:
        return [(a, b) for a, b, _ in read_rows(path, spec, fmt)]
    except ValueError as e:  # detect_format
        raise CompareError(str(e)) from None


def _report(report, fmt: str) -> str:
    if fmt == "json":
        for w in report.warnings:
            print(f"streameval: warning: {w}", file=sys.stderr)
        return report.to_json(indent=2)
    return report.to_text()


def split_system(spec: str, default_column: str) -> tuple[str, str]:
    """``(path, label column)`` of a system argument: ``FILE`` (the column ``default_column``) or
    ``FILE:COLUMN``. A path that exists as given is a file, whatever colons it holds.

    >>> split_system("day1.csv:cluster", "label"), split_system("day1.csv", "label")
    (('day1.csv', 'cluster'), ('day1.csv', 'label'))
    """
    if os.path.exists(spec) or ":" not in spec:
        return spec, default_column
    path, _, column = spec.rpartition(":")
    if not column:
        raise CompareError(f"{spec!r}: no column after ':' (FILE:COLUMN)")
    return path, column


def cmd_compare(args) -> int:
    """``streameval compare``: read the files, align them by row, run :func:`streameval.compare`.
    Cost: O(rows) to read, then :func:`streameval.compare`'s.

    The example of :class:`~streameval.comparison.ComparisonReport` from files: two documents,
    ``A`` scores ELM 1 on ``d1`` and 1/4 on ``d2`` (0.5 in all), ``B`` equals the gold labels:

    >>> import os, tempfile
    >>> from streameval.cli import main
    >>> tmp = tempfile.TemporaryDirectory()
    >>> for name, labels in [("gold", "001123"), ("A", "001223"), ("B", "001123")]:
    ...     with open(os.path.join(tmp.name, f"{name}.csv"), "w") as f:
    ...         _ = f.write("doc,label\\n" + "".join(f"d{1 + (k > 1)},{x}\\n" for k, x in enumerate(labels)))
    >>> gold, a, b = (os.path.join(tmp.name, f"{n}.csv") for n in ("gold", "A", "B"))
    >>> main(["compare", gold, a, b, "--unit", "doc", "--metrics", "ELM", "--n-resamples", "50",
    ...       "--seed", "0"])   # doctest: +ELLIPSIS
    randomization over 2 units, 6 elements, 50 resamples, 95% hybrid intervals, seed 0
    system  metric  value   low     high
    A.csv   ELM     0.5000  0.2500  1.0000
    B.csv   ELM     1.0000  1.0000  1.0000
    <BLANKLINE>
    pair           metric  delta    low      high    p
    A.csv - B.csv  ELM     -0.5000  -0.7500  0.0000  1.0000
    warning: only 2 units: ...
    warning: one unit holds 50% of a labelling's within-cluster pairs ...
    0
    >>> tmp.cleanup()
    """
    from ..comparison import compare

    pred_label = args.pred_label or args.label
    gold = _read_pairs(args.gold, args.unit, args.label, args.input_format, not args.no_header)
    if not gold:
        raise CompareError(f"{args.gold}: no rows")
    names = args.names or [os.path.basename(s) for s in args.systems]
    if len(names) != len(args.systems):
        raise CompareError(f"--names gives {len(names)} names for {len(args.systems)} systems")
    if len(set(names)) != len(names):
        raise CompareError(f"system names must differ, got {names} (use --names)")
    units = [u for u, _ in gold]
    systems = {}
    for name, spec in zip(names, args.systems):
        path, column = split_system(spec, pred_label)
        rows = _read_pairs(path, args.unit, column, args.input_format, not args.no_header)
        if len(rows) != len(gold):
            raise CompareError(f"{path}: {len(rows)} rows, the gold file {args.gold} has {len(gold)}"
                               " (rows are matched by position)")
        for i, ((u, _), gu) in enumerate(zip(rows, units)):
            if u != gu:
                raise CompareError(f"{path}: data row {i + 1} is in unit {u!r}, the gold file's row is "
                                   f"in unit {gu!r} (rows are matched by position)")
        systems[name] = [p for _, p in rows]
    try:
        report = compare([t for _, t in gold], systems, units=units,
                         metrics=_metric_classes(args.metrics), method=args.method,
                         n_resamples=args.n_resamples, confidence=args.confidence, seed=args.seed,
                         aggregate=args.aggregate, labels=args.labels, interval=args.interval,
                         cross_units=args.cross_units)
    except (ValueError, TypeError) as e:
        raise CompareError(str(e)) from None
    print(_report(report, args.format))
    return 0


# ------------------------------------------------------------------------------ score --ci
def add_score_ci_options(p) -> None:
    """Add ``--ci``, ``--unit``, ``--n-resamples``, ``--confidence``, ``--seed``, ``--labels`` to
    ``score``. O(options).

    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> add_score_ci_options(p)
    >>> a = p.parse_args(["--ci", "--unit", "doc"])
    >>> a.ci, a.unit, a.interval, a.labels
    (True, 'doc', 'adaptive', 'global')
    """
    g = p.add_argument_group("confidence intervals (--ci)")
    g.add_argument("--ci", action="store_true",
                   help="also report bootstrap intervals over the units of --unit")
    g.add_argument("--interval", choices=COMPARE_INTERVAL_METHODS, default="adaptive",
                   help="with --ci: adaptive (default: studentized, or where one unit dominates "
                   "subsampled, hybrid up to 49 units), studentized (bootstrap-t), hybrid, "
                   "subsampled, percentile or bca")
    g.add_argument("--unit", metavar="COL", help="column of the resampling unit (needed by --ci)")
    g.add_argument("--n-resamples", type=positive, default=1000, metavar="B",
                   help="bootstrap resamples for --ci (default 1000)")
    g.add_argument("--confidence", type=_probability, default=0.95, metavar="C",
                   help="coverage of the --ci intervals (default 0.95)")
    g.add_argument("--seed", type=non_negative, default=0, help="random seed of --ci (default 0)")
    g.add_argument("--labels", choices=("global", "per_unit"), default="global",
                   help="with --ci: labels name the same cluster everywhere (default; a cluster "
                   "spanning two units is an error), or only within their unit")


def _numbered_rows(path, spec, fmt, on_error):
    """``{row number: row}`` of a file's good rows (line numbers for text, row numbers for Parquet)."""
    from ..io import LineSource, detect_format, iter_parquet_rows, iter_text_rows

    try:
        fmt = detect_format(path, fmt)
    except ValueError as e:
        raise CompareError(str(e)) from None
    out = {}
    if fmt == "parquet":
        seen = [0]

        def policy(e):
            seen[0] += 1
            on_error(e)

        for row in iter_parquet_rows(path, spec, policy):
            seen[0] += 1
            out[seen[0]] = row
        return out
    source = LineSource.open(path)
    try:
        for row in iter_text_rows(source, fmt, spec, on_error):
            out[source.lineno] = row
    finally:
        source.close()
    return out


def cmd_score_ci(args) -> int:
    """``streameval score --ci``: the metrics of the file with intervals over the units of ``--unit``.

    The file is read twice (labels and weight; unit), the rows joined by their line number; with
    ``--on-error skip`` a row bad in either read is skipped (and reported once). Cost: O(rows) to
    read, then :func:`streameval.confidence_interval`'s.

    Two documents labelled alike on both sides: every resample is a perfect clustering.

    >>> import os, tempfile
    >>> from streameval.cli import main
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("doc,t,p\\nd1,0,a\\nd1,0,a\\nd2,1,b\\nd2,2,c\\n")
    >>> main(["score", path, "--true", "t", "--pred", "p", "--ci", "--unit", "doc",
    ...       "--metrics", "ELM", "--n-resamples", "20", "--seed", "0"])   # doctest: +ELLIPSIS
    /...rows.csv: 4 rows, 2 units, 20 resamples, 95% ... intervals over units, seed 0
    metric  value     low       high
    ELM     1.000000  1.000000  1.000000
    warning: only 2 units: ...
    0
    >>> tmp.cleanup()
    """
    from ..comparison import compare
    from ..intervals import INTERVAL_NAMES
    from ..io import RowSpec

    if not args.unit:
        raise CompareError("--ci needs --unit COL: the column of the resampling unit (a block "
                           "holding whole clusters)")
    if getattr(args, "vector", None):
        raise CompareError("--ci does not combine with --vector (intervals are for label metrics)")
    if args.file == "-":
        raise CompareError("--ci reads the file twice: give a file, not standard input")
    bad: dict = {}

    def on_error(e):
        if args.on_error == "stop":
            raise e
        bad.setdefault(e.line, str(e))

    header = not args.no_header
    labels = _numbered_rows(args.file, RowSpec(args.true, args.pred, args.weight, header=header),
                            args.input_format, on_error)
    units = _numbered_rows(args.file, RowSpec(args.unit, args.true, None, header=header),
                           args.input_format, on_error)
    keys = [k for k in labels if k in units]
    if not keys:
        raise CompareError(f"{args.file} holds no rows to score")
    classes = [c for c in metric_classes(args.metrics) if not c.on_demand]
    try:
        report = compare(
            [labels[k][0] for k in keys], {"system": [labels[k][1] for k in keys]},
            units=[units[k][0] for k in keys], w=[labels[k][2] for k in keys],
            metrics=[c() for c in classes], n_resamples=args.n_resamples,
            confidence=args.confidence, seed=args.seed, labels=args.labels,
            interval=args.interval,
        )
    except (ValueError, TypeError) as e:
        raise CompareError(str(e)) from None
    ci = report.values["system"]
    n_units = len({units[k][0] for k in keys})
    if args.format == "json":
        print(json.dumps({
            "metrics": {k: iv.to_dict() for k, iv in ci.items()},
            "settings": {"rows": len(keys), "units": n_units, "n_resamples": args.n_resamples,
                         "confidence": args.confidence, "seed": args.seed, "labels": args.labels,
                         "interval": report.settings["interval"],
                         "warnings": report.warnings},
        }))
        for w in report.warnings:
            print(f"streameval: warning: {w}", file=sys.stderr)
    else:
        conf = f"{args.confidence * 100:g}%"
        print(f"{args.file}: {len(keys)} rows, {n_units} units, {args.n_resamples} resamples, "
              f"{conf} {INTERVAL_NAMES[report.settings['interval_applied']]} bootstrap "
              f"intervals over units, seed {args.seed}")
        rows = [("metric", "value", "low", "high")]
        rows += [(k, *(f"{v:.6f}" for v in iv)) for k, iv in ci.items()]
        from ..comparison import align_columns

        print("\n".join(align_columns(rows)))
        for w in report.warnings:
            print(f"warning: {w}")
    if bad:
        shown = list(bad.values())[:10]
        more = f"\n  ... and {len(bad) - len(shown)} more" if len(bad) > len(shown) else ""
        print(f"streameval: skipped {len(bad)} malformed row{'s' * (len(bad) != 1)}:\n  "
              + "\n  ".join(shown) + more, file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------ pss --compare
def pss_compare_parser() -> argparse.ArgumentParser:
    """The parser of ``streameval pss --compare``."""
    p = argparse.ArgumentParser(
        prog="streameval pss --compare",
        description="Compare page-stream segmenters with confidence intervals and paired tests; "
        "the resampling unit is the stream.")
    p.add_argument("gold", help="gold page-stream file (.json {stream: [0/1]} or .csv stream,page,flag)")
    p.add_argument("predictions", nargs="*", metavar="PRED",
                   help="predicted page-stream files (same streams and lengths as the gold)")
    p.add_argument("--baselines", action="store_true",
                   help="also compare the ELM paper's baselines computed from the gold: "
                   "all_singletons, one_document, fixed_length")
    p.add_argument("--names", nargs="+", metavar="NAME", help="names of the prediction files")
    p.add_argument("--metrics", default="ELM,BCubed",
                   help="metric names, separated by commas or spaces, as in score (default ELM,BCubed)")
    _resampling_options(p, tests=True)
    p.add_argument("--aggregate", choices=("mean", "pooled"), default="mean",
                   help="mean of the per-stream values (default; the literature's mean F1), or one "
                   "pooled table")
    p.add_argument("--original-make-index", action="store_true",
                   help="reproduce the ELM paper code's quirk (see streameval pss --help)")
    p.add_argument("--input-format", choices=("auto", "json", "csv"), default="auto",
                   help="format of the input files (default: by extension)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    return p


def cmd_pss_compare(argv) -> int:
    """``streameval pss --compare ...`` (``argv`` without ``--compare``); returns the exit status.
    Cost: O(pages) to read, then :func:`streameval.compare`'s.

    >>> import tempfile, os, json as js
    >>> d = tempfile.mkdtemp()
    >>> gold = {f"s{i}": [1, 0, 0, 1, 0, 1, 0, 0] for i in range(6)}
    >>> _ = open(os.path.join(d, "g.json"), "w").write(js.dumps(gold))
    >>> cmd_pss_compare([os.path.join(d, "g.json"), "--baselines", "--metrics", "ELM",
    ...                  "--n-resamples", "100"])  # doctest: +ELLIPSIS
    randomization over 6 units, 48 elements, 100 resamples, 95% hybrid intervals, seed 0, aggregate mean
    system          metric  value   low     high
    all_singletons  ELM     0.0000  0.0000  0.0000
    ...
    0
    """
    from ..comparison import compare
    from ..io import load_streams
    from ..pss import BASELINES, check_streams, flags_to_labels

    args = pss_compare_parser().parse_args(argv)
    gold = load_streams(args.gold, args.input_format)
    systems = {}
    names = args.names or [os.path.basename(p) for p in args.predictions]
    if len(names) != len(args.predictions):
        raise CompareError(f"--names gives {len(names)} names for {len(args.predictions)} files")
    for name, path in zip(names, args.predictions):
        pred = load_streams(path, args.input_format)
        check_streams(gold, pred)
        systems[name] = pred
    if args.baselines:
        for name, fn in BASELINES.items():
            if name in systems:
                raise CompareError(f"a prediction file is named {name!r}, like a baseline; use --names")
            if name == "fixed_length":
                systems[name] = {s: fn(f, original_make_index=args.original_make_index)
                                 for s, f in gold.items()}
            else:
                systems[name] = {s: fn(f) for s, f in gold.items()}
    if not systems:
        raise CompareError("nothing to compare: give prediction files and/or --baselines")
    quirk = args.original_make_index
    units, y_true = [], []
    preds: dict[str, list] = {name: [] for name in systems}
    for sid, flags in gold.items():
        t = flags_to_labels(flags, original_make_index=quirk).tolist()
        units += [sid] * len(t)
        y_true += t
        for name, streams in systems.items():
            preds[name] += flags_to_labels(streams[sid], original_make_index=quirk).tolist()
    metrics = metric_classes(args.metrics)
    try:
        report = compare(y_true, preds, units=units, metrics=metrics, method=args.method,
                         n_resamples=args.n_resamples, confidence=args.confidence, seed=args.seed,
                         aggregate=args.aggregate, labels="per_unit", interval=args.interval)
    except (ValueError, TypeError) as e:
        raise CompareError(str(e)) from None
    print(_report(report, args.format))
    return 0
