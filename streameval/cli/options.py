"""The options several subcommands share: metric names, row columns, the bad-row policy, and the
argument types that turn a bad value into a usage error.

>>> positive("3"), non_negative("0"), fraction("0.5"), prometheus_label("job=a")
(3, 0, 0.5, ('job', 'a'))
"""

from __future__ import annotations

import argparse
import math
import re

from ..errors import CLIError, InputError
from ..io import FORMATS, MAX_LINE, RowSpec, detect_format
from .render import warn

__all__ = ["METRICS_HELP", "metric_classes", "ErrorPolicy", "row_spec", "format_or_usage",
           "add_row_options", "positive", "non_negative", "fraction", "port", "prometheus_label"]

METRICS_HELP = ("metric names, separated by spaces or commas: class names (ELM, AdjustedRand), "
                "scikit-learn function names (adjusted_rand_score), short forms (ARI, NMI, AMI, "
                "VI), or 'all' (default: every O(1) label metric)")


def metric_classes(names, on_demand: bool = False) -> list:
    """The metric classes named on the command line (``None``: every O(1) label metric), read by
    :func:`streameval.metrics.resolve`: class names, scikit-learn function names, short forms
    (ARI, NMI, ...), ``all``; separated by spaces or commas. The same in every subcommand.
    O(names + metrics).

    >>> [c.__name__ for c in metric_classes(["ARI,NMI", "b3"])]
    ['AdjustedRand', 'NormalizedMutualInfo', 'BCubed']
    """
    from ..metrics.resolve import resolve

    return resolve(names, on_demand=on_demand)


class ErrorPolicy:
    """``--on-error``: ``stop`` raises the first bad row; ``skip`` counts it and goes on. O(1) per
    bad row (the first ten kept for the report).

    >>> from streameval.errors import InputError
    >>> policy = ErrorPolicy("skip")
    >>> policy(InputError("rows.csv", 3, "missing predicted label"))
    >>> policy.count, policy.examples
    (1, ['rows.csv, line 3: missing predicted label'])
    >>> ErrorPolicy("stop")(InputError("rows.csv", 3, "missing predicted label"))
    Traceback (most recent call last):
    ...
    streameval.errors.InputError: rows.csv, line 3: missing predicted label
    """

    SHOWN = 10  # skipped rows listed in the report

    def __init__(self, mode: str):
        self.mode, self.count = mode, 0
        self.examples: list = []

    def __call__(self, error: InputError) -> None:
        if self.mode == "stop":
            raise error
        self.record(error)

    def record(self, error: InputError) -> None:
        """Count a skipped row, and keep its message while fewer than ``SHOWN`` are kept. O(1)."""
        self.count += 1
        if len(self.examples) < self.SHOWN:
            self.examples.append(str(error))

    def report(self) -> None:
        """List the skipped rows (the first ten) on standard error. O(1)."""
        if not self.count:
            return
        lines = [f"skipped {self.count} malformed row{'s' * (self.count != 1)}:"]
        lines += [f"  {e}" for e in self.examples]
        if self.count > len(self.examples):
            lines.append(f"  ... and {self.count - len(self.examples)} more")
        warn("\n".join(lines))


def row_spec(args) -> RowSpec:
    """The columns named by ``--true``, ``--pred``, ``--weight`` (``--vector``), ``--no-header``.
    O(1).

    >>> import argparse
    >>> spec = row_spec(argparse.Namespace(true="t", pred="p", weight=None, no_header=False))
    >>> spec.true, spec.pred, spec.weight, spec.header
    ('t', 'p', None, True)
    """
    vector = tuple(getattr(args, "vector", None) or ())
    return RowSpec(args.true, args.pred, args.weight, header=not args.no_header, vector=vector,
                   truth_optional=getattr(args, "sample", None) is not None)


def format_or_usage(path, fmt):
    """The input format (``--input-format``, else from the extension); :class:`CLIError` if unknown.
    O(1).

    >>> format_or_usage("rows.jsonl", None), format_or_usage("rows.txt", "tsv")
    ('jsonl', 'tsv')
    """
    try:
        return detect_format(path, fmt)
    except ValueError as e:
        raise CLIError(str(e)) from None


def add_row_options(p, *, follow: bool) -> None:
    """The file and the row options of ``score`` and ``watch`` (``follow``: text formats only).
    O(options).

    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_row_options(p, follow=True)
    >>> a = p.parse_args(["-", "--true", "t", "--pred", "p"])
    >>> a.file, a.on_error, a.input_format
    ('-', 'stop', None)
    """
    p.add_argument("file", help="input file ('-' for standard input, read as CSV unless "
                   "--input-format says otherwise)")
    p.add_argument("--true", required=True, metavar="COL", help="column of the true labels")
    p.add_argument("--pred", required=True, metavar="COL", help="column of the predicted labels")
    p.add_argument("--weight", metavar="COL",
                   help="column of positive integer multiplicities (default: 1 per row)")
    p.add_argument("--input-format", choices=FORMATS[:3] if follow else FORMATS,
                   help="file format (default: from the extension: .csv, .tsv, .jsonl/.ndjson/.json"
                   + ("" if follow else ", .parquet") + ")")
    p.add_argument("--no-header", action="store_true",
                   help="CSV/TSV without a header line: columns are 1-based numbers")
    p.add_argument("--metrics", nargs="+", metavar="NAME", help=METRICS_HELP)
    p.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                   help="a malformed row stops with an error naming the file and line (default), "
                   "or is skipped, counted and reported at the end")
    p.add_argument("--max-line-bytes", type=positive, default=MAX_LINE, metavar="N",
                   help=f"a longer line is a bad row (default {MAX_LINE}, 1 MiB): memory stays "
                   "bounded whatever the input")


# ---------------------------------------------------------------------------- argument types
def non_negative(s: str) -> int:
    """An integer option: ASCII digits only, the rule of ``--weight`` (``int()`` alone would also
    take ``1_000``, ``+5``, `` 5`` and non-ASCII digits). O(length).

    >>> non_negative("007")
    7
    >>> non_negative("1_000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not an integer written in plain ASCII digits: '1_000'
    """
    if s[:1] == "-" and s[1:].isascii() and s[1:].isdigit():
        raise argparse.ArgumentTypeError(f"must be >= 0, got {s!r}")
    if not (s.isascii() and s.isdigit()):
        raise argparse.ArgumentTypeError(f"not an integer written in plain ASCII digits: {s!r}")
    return int(s)


def plain_float(s: str, what: str = "a number") -> float:
    """A number option as ``float()`` reads it, but only from plain ASCII text: no digit
    separator, surrounding space or non-ASCII digit (``float()`` takes ``1_0.5``, `` 2`` and
    ``٢``).

    >>> plain_float("2.5e-1")
    0.25
    """
    if not s.isascii() or "_" in s or s != s.strip():
        raise argparse.ArgumentTypeError(f"not {what} written in plain ASCII: {s!r}")
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {s!r}") from None


def seconds(s: str) -> float:
    """A duration in seconds: a finite number >= 0 (``nan``, ``inf`` and negatives refused).

    >>> seconds("2.5"), seconds("0")
    (2.5, 0.0)
    """
    v = plain_float(s, "a number of seconds")
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {s!r}")
    return v


def positive(s: str) -> int:
    """An integer option >= 1, in plain ASCII digits (:func:`non_negative`). O(length).

    >>> positive("3")
    3
    >>> positive("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be >= 1, got '0'
    """
    v = non_negative(s)
    if v == 0:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {s!r}")
    return v


def port(s: str) -> int:
    """A TCP port, 0 to 65535, in plain ASCII digits. O(length).

    >>> port("9464")
    9464
    >>> port("65536")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: a port is 0 to 65535, got '65536'
    """
    v = non_negative(s)
    if v > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {s!r}")
    return v


def fraction(s: str) -> float:
    """A number ``x`` with ``0 < x ≤ 1`` (:func:`plain_float`). O(length).

    >>> fraction("0.25")
    0.25
    >>> fraction("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be in (0, 1], got '0'
    """
    v = plain_float(s)
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {s!r}")
    return v


def prometheus_label(s: str) -> tuple:
    """``KEY=VALUE`` with a Prometheus label name as ``KEY`` (not ``metric`` or ``scope``). O(length).

    >>> prometheus_label("job=er")
    ('job', 'er')
    >>> prometheus_label("metric=x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: the label 'metric' is streameval's own
    """
    key, sep, value = s.partition("=")
    if not sep or not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", key) or key.startswith("__"):
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE with a Prometheus label name as KEY, got {s!r}")
    if key in ("metric", "scope"):
        raise argparse.ArgumentTypeError(f"the label {key!r} is streameval's own")
    return key, value
