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

import math
from collections.abc import Callable

import numpy as np

from ._validate import check_ordered, is_missing, missing_repr
from .errors import PageStreamError
from .evaluator import Evaluator
from .io import load_csv, load_json, load_streams
from .io import page_flag as _flag
from .metrics import ELM, BCubed, Metric, resolve

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
    try:
        check_ordered(flags, "flags")
    except ValueError as e:
        raise PageStreamError(str(e)) from None
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
    """Both flag lists as 0/1 ints, or :class:`PageStreamError` before anything changes (a set or
    a mapping, whose iteration is not the pages in order, included)."""
    for name, flags in (("true", true_flags), ("predicted", pred_flags)):
        try:
            check_ordered(flags, f"the {name} flags")
        except ValueError as e:
            raise PageStreamError(str(e)) from None
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
        """The stream's :class:`~streameval.Contingency` (labels are document indices). O(1)."""
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
        """Add the next page, given whether it starts a document in the truth and the prediction.
        O(1): one :meth:`Evaluator.update <streameval.Evaluator.update>`."""
        (dt, st), (dp, sp) = self._steps(true_start, pred_start)
        self.evaluator.update(dt, dp)
        self._true.doc, self._true.skip_first_one = dt, st
        self._pred.doc, self._pred.skip_first_one = dp, sp
        self.pages += 1

    def update_many(self, true_flags, pred_flags) -> None:
        """Add many pages (checked first: on a bad flag or a length mismatch nothing is added).
        O(pages)."""
        true_flags, pred_flags = _checked_pages(true_flags, pred_flags, self.pages)
        for t, p in zip(true_flags, pred_flags):
            self.update(t, p)

    def get(self) -> dict:
        """``{metric: value}`` over the pages so far: each metric's formula over the table of
        ``(true document, predicted document)`` pairs, one pair a page (ELM and BCubed with their
        ``.precision`` and ``.recall``). Cost: the metrics' reads, O(1) each.

        Pages 1-3 are one true document and page 4 another; the prediction cuts after page 2.
        ELM's ``F_e = 2(n-1)/((a-1) + (b-1))``: pages 1 and 2 (``n = 2``, ``a = 3``, ``b = 2``)
        score 2/3, page 3 (alone with page 4 in its segment) and page 4 (a true singleton placed
        with page 3) 0; recall ``(n-1)/(a-1)`` (1 for a true singleton) is 1/2, 1/2, 0, 1:

        >>> ps = PageStream([ELM()])
        >>> ps.update_many([1, 0, 0, 1], [1, 0, 1, 0])
        >>> ps.get()["ELM"], ps.get()["ELM.recall"]    # (2/3 + 2/3)/4, (1/2 + 1/2 + 1)/4
        (0.333..., 0.5)
        """
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
        """The :class:`PageStream` of ``stream_id`` (created empty on first use). O(1) (O(metrics)
        when created)."""
        ps = self.streams.get(stream_id)
        if ps is None:
            ps = PageStream(
                [m.clone() for m in self._templates], original_make_index=self.original_make_index
            )
            self.streams[stream_id] = ps
        return ps

    def update(self, stream_id, true_start, pred_start) -> None:
        """Add the next page of ``stream_id``. O(1). A missing stream id (``None``, NaN: each
        NaN would open a stream of its own), an unhashable one or a bad flag raises
        :class:`~streameval.errors.PageStreamError` before anything changes (no stream is
        created)."""
        if is_missing(stream_id):
            raise PageStreamError(f"the stream id is missing ({missing_repr(stream_id)}): name the "
                                  "stream every page belongs to")
        try:
            ps = self.streams.get(stream_id)
        except TypeError:
            raise PageStreamError(f"a stream id must be hashable, got {type(stream_id).__name__}: "
                                  f"{stream_id!r:.80}") from None
        if ps is None:  # a new stream: its first flags checked before it is created
            _flag(true_start, "page 0, true flag")
            _flag(pred_start, "page 0, predicted flag")
            ps = self.stream(stream_id)
        dt, dp = ps.labels(true_start, pred_start)
        ps.update(true_start, pred_start)
        self.pooled.update((stream_id, dt), (stream_id, dp))

    def update_stream(self, stream_id, true_flags, pred_flags) -> None:
        """Add many pages of one stream (all checked before any is added). O(pages)."""
        start = self.streams[stream_id].pages if stream_id in self.streams else 0
        true_flags, pred_flags = _checked_pages(true_flags, pred_flags, start)
        for t, p in zip(true_flags, pred_flags):
            self.update(stream_id, t, p)

    def per_stream(self) -> dict:
        """``{stream: {metric: value}}``. O(streams · metrics)."""
        return {sid: ps.get() for sid, ps in self.streams.items()}

    def summary(self) -> dict:
        """``{metric: {"mean", "sd", "pooled", "streams"}}`` over the streams seen so far: the mean
        ``Σ v_s / S`` and sample standard deviation ``sqrt(Σ (v_s - mean)² / (S - 1))`` of the
        per-stream values, and the metric of the pooled table. O(streams · metrics)."""
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
    """Baseline: every page is its own document. ``[1, 1, ..., 1]``. O(pages).

    >>> all_singletons([1, 0, 0])
    [1, 1, 1]
    """
    return [1] * len(true_flags)


def one_document(true_flags) -> list:
    """Baseline: the whole stream is one document. ``[1, 0, ..., 0]``. O(pages).

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
    O(streams).

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
