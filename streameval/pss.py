"""Page-stream segmentation (PSS): evaluate a document splitter page by page.

A page stream is a sequence of scanned pages; a segmenter says, for every page, whether it *starts
a new document*. Both the truth and the prediction are therefore sequences of 0/1 flags, and each
one is a clustering of the pages into contiguous runs (the documents). This module turns the flags
into document indices as the pages arrive and feeds them, one page = one element, into an
:class:`~streameval.Evaluator`: ELM, BCubed and the rest of the suite stay current after every
page, at O(1) per page (plus the element-averaged F's cost of O(cells in the page's row + column),
see :class:`~streameval.ELM`).

Conventions
-----------
- The first page of a stream always starts a document, whatever its flag says.
- ``original_make_index=True`` reproduces the ``make_index`` of the ELM paper's code
  (github.com/irlabamsterdam/elm, ``utils/metricutils.py``), which splits at every 1 *except the
  first* 1. When a stream starts with 1 this changes nothing. When it starts with 0, the pages up to
  the *second* 1 form the first document. The paper's published numbers were computed that way: 8 of
  the 34 BERT prediction streams and one training stream start with 0.
- Several streams (the literature's "mean average F1"): each stream has its own table; the report is
  the mean of the per-stream scores with their sample standard deviation (ddof = 1, NaN for one
  stream), and the *pooled* value of one table over all pages (labels ``(stream, document)``).

Files
-----
- JSON: one object ``{stream id: [0/1 flags in page order]}`` (the format of the paper's data).
- CSV: a header with the columns ``stream``, ``page``, ``flag`` (any order, other columns ignored);
  one row per page; pages of a stream are consecutive integers from 0 or 1, rows in any order.

Malformed files raise :class:`PageStreamError` naming the file, stream, row or page.

>>> ps = PageStream([ELM(), BCubed()])
>>> for t, p in [(1, 1), (0, 1), (1, 1), (0, 0), (0, 0)]:   # truth {1,2},{3,4,5}
...     ps.update(t, p)
>>> {k: round(v, 4) for k, v in ps.get().items()}
{'ELM': 0.6, 'ELM.precision': 1.0, 'ELM.recall': 0.6, 'BCubed': 0.8667, 'BCubed.precision': 1.0, 'BCubed.recall': 0.8}
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .errors import PageStreamError, StreamevalError
from .evaluator import Evaluator
from .io import load_csv, load_json, load_streams
from .io import page_flag as _flag
from .metrics import ELM, BCubed, Metric, resolve

if TYPE_CHECKING:  # the command line's parser: argparse is not imported with streameval
    import argparse

__all__ = [
    "PageStreamError",
    "PageStream",
    "PageStreamEvaluator",
    "flags_to_labels",
    "load_json",
    "load_csv",
    "load_streams",
    "check_streams",
    "all_singletons",
    "one_document",
    "fixed_length",
    "BASELINES",
    "configure_parser",
    "main",
]


# --------------------------------------------------------------------------- flags
def flags_to_labels(flags, *, original_make_index: bool = False) -> np.ndarray:
    """Document index of every page: ``cumsum(flags) - 1`` with the first page forced to start one.

    With ``original_make_index=True`` a stream that starts with 0 also ignores its first 1 (the
    paper code's ``make_index``; see the module docstring). O(pages).

    >>> flags_to_labels([1, 0, 0, 1, 1]).tolist()
    [0, 0, 0, 1, 2]
    >>> flags_to_labels([0, 0, 1, 0, 1]).tolist()
    [0, 0, 1, 1, 2]
    >>> flags_to_labels([0, 0, 1, 0, 1], original_make_index=True).tolist()
    [0, 0, 0, 0, 1]
    """
    f = np.array([_flag(v, f"page {i}") for i, v in enumerate(flags)], dtype=bool)
    if len(f) == 0:
        return np.zeros(0, dtype=np.int64)
    if original_make_index and not f[0]:
        ones = np.flatnonzero(f)
        if len(ones):
            f[ones[0]] = False
    f[0] = True
    return np.cumsum(f, dtype=np.int64) - 1


class _Side:
    """One side (truth or prediction) of a stream: the running document index."""

    __slots__ = ("doc", "skip_first_one")

    def __init__(self) -> None:
        self.doc = -1
        self.skip_first_one = False  # original_make_index: the stream began with 0

    def step(self, flag: int, first: bool, quirk: bool) -> tuple:
        """``(document of the next page, new skip_first_one)``; changes nothing. O(1)."""
        if first:
            return 0, quirk and not flag
        if flag and self.skip_first_one:
            return self.doc, False
        return self.doc + flag, self.skip_first_one


def _checked_pages(true_flags, pred_flags, first_page: int):
    """Both flag lists as 0/1 ints, or :class:`PageStreamError` before anything changes."""
    true_flags, pred_flags = list(true_flags), list(pred_flags)
    if len(true_flags) != len(pred_flags):
        raise PageStreamError(
            f"true and predicted flags differ in length: {len(true_flags)} and {len(pred_flags)}"
        )
    t = [_flag(v, f"page {first_page + i}, true flag") for i, v in enumerate(true_flags)]
    p = [_flag(v, f"page {first_page + i}, predicted flag") for i, v in enumerate(pred_flags)]
    return t, p


def _metric_values(evaluator: Evaluator) -> dict:
    """``{name: value}``, with ``name.precision`` and ``name.recall`` after ELM and BCubed."""
    out = {}
    for name, m in evaluator.metrics.items():
        out[name] = m.get()
        if isinstance(m, (ELM, BCubed)):
            out[f"{name}.precision"] = m.precision
            out[f"{name}.recall"] = m.recall
    return out


def _templates(metrics) -> list:
    """The metric objects given, or every O(1) metric (``resolve(None)``) for ``None``."""
    if metrics is None:
        return [cls() for cls in resolve(None)]
    metrics = list(metrics)
    for m in metrics:
        if not isinstance(m, Metric):
            raise TypeError(f"not a streameval metric: {m!r}")
    return metrics


class PageStream:
    """One page stream evaluated as its pages arrive.

    Parameters
    ----------
    metrics : fresh metrics (default: every O(1) metric of the registry); each ELM and BCubed also
        reports its ``.precision`` and ``.recall``.
    original_make_index : reproduce the ELM paper code's first-1 quirk (module docstring).

    Each page is one element with labels ``(true document, predicted document)``; :meth:`update`
    is one :meth:`Evaluator.update`, so O(1) (plus the element-averaged F's O(row + column
    cells)); :meth:`get` costs what the metrics' reads cost (O(1) each).

    >>> ps = PageStream([ELM()])
    >>> ps.update_many([1, 0, 1], [1, 1, 1])
    >>> ps.pages, round(ps.get()["ELM"], 4)
    (3, 0.3333)
    """

    def __init__(self, metrics=None, *, original_make_index: bool = False):
        self.evaluator = Evaluator(_templates(metrics))
        self.original_make_index = bool(original_make_index)
        self._true = _Side()
        self._pred = _Side()
        self.pages = 0

    @property
    def table(self):
        """The stream's :class:`~streameval.Contingency` (labels are document indices)."""
        return self.evaluator.table

    def labels(self, true_start, pred_start) -> tuple:
        """The ``(true, predicted)`` document indices the next page gets; adds nothing. O(1)."""
        return tuple(s[0] for s in self._steps(true_start, pred_start))

    def _steps(self, true_start, pred_start):
        t = _flag(true_start, f"page {self.pages}, true flag")
        p = _flag(pred_start, f"page {self.pages}, predicted flag")
        first, quirk = self.pages == 0, self.original_make_index
        return self._true.step(t, first, quirk), self._pred.step(p, first, quirk)

    def update(self, true_start, pred_start) -> None:
        """Add the next page, given whether it starts a document in the truth and the prediction."""
        (dt, st), (dp, sp) = self._steps(true_start, pred_start)
        self.evaluator.update(dt, dp)
        self._true.doc, self._true.skip_first_one = dt, st
        self._pred.doc, self._pred.skip_first_one = dp, sp
        self.pages += 1

    def update_many(self, true_flags, pred_flags) -> None:
        """Add many pages (checked first: on a bad flag or a length mismatch nothing is added)."""
        true_flags, pred_flags = _checked_pages(true_flags, pred_flags, self.pages)
        for t, p in zip(true_flags, pred_flags):
            self.update(t, p)

    def get(self) -> dict:
        """``{metric: value}`` over the pages so far."""
        return _metric_values(self.evaluator)


class PageStreamEvaluator:
    """Many page streams, page by page: per-stream scores, their mean and sd, and the pooled value.

    ``update(stream, true_start, pred_start)`` adds one page to ``stream`` (created on first use)
    and to the pooled table (labels ``(stream, document)``). O(1) per page, as :class:`PageStream`.
    :meth:`per_stream` is O(streams · metrics); :meth:`summary` adds the mean, the sample standard
    deviation (ddof = 1; NaN with one stream) and the pooled value, O(streams · metrics).

    >>> ev = PageStreamEvaluator([ELM()])
    >>> ev.update_stream("a", [1, 0, 1, 0], [1, 0, 1, 0])   # perfect
    >>> ev.update_stream("b", [1, 0, 0, 0], [1, 1, 1, 1])   # all singletons, no true singleton
    >>> s = ev.summary()["ELM"]
    >>> s["mean"], round(s["sd"], 4), s["pooled"]
    (0.5, 0.7071, 0.5)
    """

    def __init__(self, metrics=None, *, original_make_index: bool = False):
        self._templates = _templates(metrics)
        self.original_make_index = bool(original_make_index)
        self.streams: dict = {}
        self.pooled = Evaluator([m.clone() for m in self._templates])

    def stream(self, stream_id) -> PageStream:
        """The :class:`PageStream` of ``stream_id`` (created empty on first use)."""
        ps = self.streams.get(stream_id)
        if ps is None:
            ps = PageStream(
                [m.clone() for m in self._templates], original_make_index=self.original_make_index
            )
            self.streams[stream_id] = ps
        return ps

    def update(self, stream_id, true_start, pred_start) -> None:
        """Add the next page of ``stream_id``. O(1)."""
        ps = self.stream(stream_id)
        dt, dp = ps.labels(true_start, pred_start)
        ps.update(true_start, pred_start)
        self.pooled.update((stream_id, dt), (stream_id, dp))

    def update_stream(self, stream_id, true_flags, pred_flags) -> None:
        """Add many pages of one stream (all checked before any is added)."""
        start = self.streams[stream_id].pages if stream_id in self.streams else 0
        true_flags, pred_flags = _checked_pages(true_flags, pred_flags, start)
        for t, p in zip(true_flags, pred_flags):
            self.update(stream_id, t, p)

    def per_stream(self) -> dict:
        """``{stream: {metric: value}}``."""
        return {sid: ps.get() for sid, ps in self.streams.items()}

    def summary(self) -> dict:
        """``{metric: {"mean", "sd", "pooled", "streams"}}`` over the streams seen so far."""
        per = self.per_stream()
        pooled = _metric_values(self.pooled)
        out = {}
        for name, value in pooled.items():
            vals = np.array([v[name] for v in per.values()], dtype=float)
            out[name] = {
                "mean": float(vals.mean()) if len(vals) else math.nan,
                "sd": float(vals.std(ddof=1)) if len(vals) > 1 else math.nan,
                "pooled": value,
                "streams": len(vals),
            }
        return out


# --------------------------------------------------------------------------- baselines
def all_singletons(true_flags) -> list:
    """Baseline: every page is its own document. ``[1, 1, ..., 1]``.

    >>> all_singletons([1, 0, 0])
    [1, 1, 1]
    """
    return [1] * len(true_flags)


def one_document(true_flags) -> list:
    """Baseline: the whole stream is one document. ``[1, 0, ..., 0]``.

    >>> one_document([1, 0, 1])
    [1, 0, 0]
    """
    n = len(true_flags)
    return [1] + [0] * (n - 1) if n else []


def fixed_length(true_flags, length=None, *, original_make_index: bool = False) -> list:
    """Baseline: documents of a fixed length, by default the stream's mean true document length.

    ``length = round(pages / true documents)`` (Python's ``round``: halves go to even; at least
    1), true documents counted as :func:`flags_to_labels` counts them; the last document takes
    the remainder. O(pages).

    >>> fixed_length([1, 0, 0, 1, 0, 1])   # 6 pages, 3 documents: length 2
    [1, 0, 1, 0, 1, 0]
    >>> fixed_length([1, 0, 0, 0, 0], length=2)
    [1, 0, 1, 0, 1]
    """
    n = len(true_flags)
    if n == 0:
        return []
    if length is None:
        docs = int(flags_to_labels(true_flags, original_make_index=original_make_index)[-1]) + 1
        length = max(1, round(n / docs))
    length = int(length)
    if length < 1:
        raise PageStreamError(f"document length must be at least 1, got {length}")
    return [1 if i % length == 0 else 0 for i in range(n)]


BASELINES: dict[str, Callable[..., list]] = {
    "all_singletons": all_singletons,
    "one_document": one_document,
    "fixed_length": fixed_length,
}


# --------------------------------------------------------------------------- files
# the readers of page-stream files live beside the other readers, in streameval.io


def check_streams(gold: dict, pred: dict) -> None:
    """Raise :class:`PageStreamError` unless both hold the same streams with the same lengths.

    >>> check_streams({"a": [1, 0]}, {"a": [1]})
    Traceback (most recent call last):
    ...
    streameval.errors.PageStreamError: stream 'a': 2 pages in the gold file, 1 in the predictions
    """
    missing = [s for s in gold if s not in pred]
    extra = [s for s in pred if s not in gold]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing from the predictions: {_some(missing)}")
        if extra:
            parts.append(f"not in the gold file: {_some(extra)}")
        raise PageStreamError("the streams differ; " + "; ".join(parts))
    for sid, flags in gold.items():
        if len(flags) != len(pred[sid]):
            raise PageStreamError(
                f"stream {sid!r}: {len(flags)} pages in the gold file, {len(pred[sid])} in the "
                "predictions"
            )


def _some(ids: list) -> str:
    shown = ", ".join(repr(s) for s in ids[:5])
    return f"{shown}, ... ({len(ids)} in all)" if len(ids) > 5 else shown


# --------------------------------------------------------------------------- command line
def _pick_metrics(spec):
    """Fresh metrics named by ``--metrics`` (:func:`streameval.metrics.resolve`'s syntax)."""
    names = [spec] if isinstance(spec, str) else list(spec)
    if not " ".join(names).replace(",", " ").split():
        raise PageStreamError("--metrics names no metric")
    return [cls() for cls in resolve(names)]


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``pss`` arguments: gold and predictions files, format, metrics, options.

    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="streameval pss")
    >>> configure_parser(p)
    >>> a = p.parse_args(["gold.json", "pred.json", "--format", "json", "--metrics", "ELM"])
    >>> a.gold, a.predictions, a.format, a.metrics, a.original_make_index
    ('gold.json', 'pred.json', 'json', ['ELM'], False)
    """
    parser.add_argument("gold", help="gold page-stream file (.json {stream: [0/1]} or .csv stream,page,flag)")
    parser.add_argument("predictions", help="predicted page-stream file, same format and streams")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="report format")
    parser.add_argument(
        "--input-format", choices=("auto", "json", "csv"), default="auto",
        help="format of both input files (default: by extension)",
    )
    parser.add_argument(
        "--metrics", nargs="+", default=["ELM,BCubed"], metavar="NAME",
        help="metric names, separated by commas or spaces: class names, scikit-learn function "
        "names or short forms (ARI, NMI, ...); 'all' for every O(1) metric (default: ELM,BCubed)",
    )
    parser.add_argument("--per-stream", action="store_true", help="also report every stream")
    parser.add_argument(
        "--original-make-index", action="store_true",
        help="reproduce the ELM paper code's quirk: a stream starting with 0 ignores its first 1",
    )


def _evaluate(args) -> PageStreamEvaluator:
    gold = load_streams(args.gold, args.input_format)
    pred = load_streams(args.predictions, args.input_format)
    check_streams(gold, pred)
    metrics = _pick_metrics(args.metrics)
    ev = PageStreamEvaluator(metrics, original_make_index=args.original_make_index)
    for sid, flags in gold.items():
        ev.update_stream(sid, flags, pred[sid])
    return ev


def _num(v):
    return None if isinstance(v, float) and math.isnan(v) else v


def _cell(v: float) -> str:
    return "    n/a" if math.isnan(v) else f"{v:7.4f}"


def _report(ev: PageStreamEvaluator, fmt: str, per_stream: bool) -> str:
    summary = ev.summary()
    pages = sum(ps.pages for ps in ev.streams.values())
    if fmt == "json":
        doc = {
            "streams": len(ev.streams),
            "pages": pages,
            "metrics": {k: {kk: _num(vv) for kk, vv in v.items()} for k, v in summary.items()},
        }
        if per_stream:
            doc["per_stream"] = {
                str(s): {k: _num(v) for k, v in vals.items()} for s, vals in ev.per_stream().items()
            }
        return json.dumps(doc, indent=2)
    width = max(len("metric"), *(len(k) for k in summary))
    lines = [
        f"{len(ev.streams)} streams, {pages} pages",
        f"{'metric':<{width}}  {'mean':>7}  {'sd':>7}  {'pooled':>7}",
    ]
    for name, s in summary.items():
        lines.append(f"{name:<{width}}  " + "  ".join(_cell(s[k]) for k in ("mean", "sd", "pooled")))
    if per_stream:
        names = list(summary)
        lines += ["", "stream\t" + "\t".join(names)]
        for sid, vals in ev.per_stream().items():
            lines.append(f"{sid}\t" + "\t".join(f"{vals[n]:.4f}" for n in names))
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """Score ``args.predictions`` against ``args.gold``; print the report; return the exit status.

    Bad input (unreadable or malformed files, mismatched streams, unknown metrics) prints one
    ``streameval pss: error: ...`` line on stderr and returns 1, as every subcommand does on bad
    input (2 is argparse's usage error). O(pages) plus the report.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for name, flags in (("g.json", [1, 0, 1, 0, 0]), ("p.json", [1, 1, 1, 0, 0])):
    ...     _ = open(os.path.join(d, name), "w").write(json.dumps({"s": flags}))
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> configure_parser(p)
    >>> main(p.parse_args([os.path.join(d, "g.json"), os.path.join(d, "p.json")]))
    1 streams, 5 pages
    metric              mean       sd   pooled
    ELM               0.6000      n/a   0.6000
    ELM.precision     1.0000      n/a   1.0000
    ELM.recall        0.6000      n/a   0.6000
    BCubed            0.8667      n/a   0.8667
    BCubed.precision  1.0000      n/a   1.0000
    BCubed.recall     0.8000      n/a   0.8000
    0
    """
    try:
        ev = _evaluate(args)
    except StreamevalError as e:
        print(f"streameval pss: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a missing or unreadable file: no raw "[Errno 2]"
        where = f"{e.filename}: " if e.filename else ""
        print(f"streameval pss: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    print(_report(ev, args.format, args.per_stream))
    return 0
