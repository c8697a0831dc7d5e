"""The ``streameval`` command line: ``demo``, ``score``, ``watch``, ``pss``, ``grafana``, ``alerts``.

- ``streameval demo``: a generated page stream segmented by an online clusterer, with a quality drop
  injected half-way, streamed through a :class:`~streameval.Monitor`; prints the final table and
  plots all-time against windowed metrics and the point where the drop is flagged (PNG).
- ``streameval score FILE --true COL --pred COL``: the metrics of a whole file (CSV, TSV, JSON lines,
  Parquet), as a table or as a JSON object of metric name to value.
- ``streameval watch FILE|-``: rows as they arrive (``--follow`` a growing file like ``tail -f``),
  all-time and windowed metrics, a line every N rows or T seconds, JSON lines, a Prometheus endpoint,
  and a JSON checkpoint (saved atomically on a schedule and on exit) to resume from.
- ``streameval pss``: page-stream segmentation scoring, from :mod:`streameval.pss`.
- ``streameval grafana`` / ``streameval alerts``: print the Grafana dashboard and the Prometheus
  alert rules shipped in ``streameval/data/``.

``--metrics`` takes the names :func:`streameval.metrics.resolve` reads, in every subcommand.
Exit status, the same in every subcommand: 0 on success (a watch stopped with Ctrl-C or SIGTERM
included), 1 on bad input or a refused checkpoint, 2 on a usage error. Errors are one line on
standard error, never a traceback.

>>> main(["score", "--help"])  # doctest: +ELLIPSIS
usage: streameval score [-h] --true COL --pred COL ...
...
0
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
from collections import deque

from .errors import InvalidStateError, StreamevalError
from .io import (
    FORMATS,
    MAX_LINE,
    InputError,
    LineSource,
    RowSpec,
    detect_format,
    fingerprint,
    iter_parquet_rows,
    iter_text_rows,
)
from .state import check_header, header

__all__ = ["main", "build_parser", "make_demo_stream"]

PROG = "streameval"
EXTRA_HINT = "pip install 'streameval[cli]'"


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


# ---------------------------------------------------------------------------------- helpers
def _metric_classes(names) -> list:
    """The metric classes named on the command line (``None``: every O(1) label metric), read by
    :func:`streameval.metrics.resolve`: class names, scikit-learn function names, short forms
    (ARI, NMI, ...), ``all``; separated by spaces or commas. The same in every subcommand."""
    from .metrics.resolve import resolve

    return resolve(names)


def _evaluator(classes, table=None):
    from .evaluator import Evaluator

    return Evaluator([cls() for cls in classes], table=table)


class _ErrorPolicy:
    """``--on-error``: ``stop`` raises the first bad row; ``skip`` counts it and goes on."""

    SHOWN = 10  # skipped rows listed in the report

    def __init__(self, mode: str):
        self.mode, self.count = mode, 0
        self.examples: list = []

    def __call__(self, error: InputError) -> None:
        if self.mode == "stop":
            raise error
        self.record(error)

    def record(self, error: InputError) -> None:
        self.count += 1
        if len(self.examples) < self.SHOWN:
            self.examples.append(str(error))

    def report(self) -> None:
        """List the skipped rows (the first ten) on standard error."""
        if not self.count:
            return
        lines = [f"skipped {self.count} malformed row{'s' * (self.count != 1)}:"]
        lines += [f"  {e}" for e in self.examples]
        if self.count > len(self.examples):
            lines.append(f"  ... and {self.count - len(self.examples)} more")
        _warn("\n".join(lines))


def _warn(msg: str) -> None:
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def _finite(v):
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def _table(columns: dict, header=("metric", "value")) -> str:
    """Rows ``name: [values...]`` as an aligned text table."""
    names = list(columns)
    width = max([len(header[0])] + [len(n) for n in names])
    lines = ["  ".join([header[0].ljust(width)] + [h.rjust(10) for h in header[1:]])]
    for n in names:
        cells = ["nan" if v is None or v != v else f"{v:.6f}" for v in columns[n]]
        lines.append("  ".join([n.ljust(width)] + [c.rjust(10) for c in cells]))
    return "\n".join(lines)


def _print_values(ev, fmt: str, title: str, extra: dict | None = None) -> None:
    """The evaluator's values (and ``extra`` ones): a JSON object of name to value, or ``title``
    and a table."""
    values = ev.get()
    values.update(extra or {})
    if fmt == "json":
        print(json.dumps({k: _finite(v) for k, v in values.items()}))
    else:
        print(title)
        print(_table({k: [v] for k, v in values.items()}))


def _progress(total: int, desc: str, enabled: bool, unit: str = "row"):
    """A tqdm bar on a terminal, or a silent counter otherwise."""
    if enabled and sys.stderr.isatty():
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "B",
                        file=sys.stderr, leave=False)
        except ImportError:
            pass

    class _Silent:
        def update(self, n=1):
            pass

        def close(self):
            pass

    return _Silent()


def _spec(args) -> RowSpec:
    vector = tuple(getattr(args, "vector", None) or ())
    return RowSpec(args.true, args.pred, args.weight, header=not args.no_header, vector=vector)


def _intrinsic_evaluator(distance: str):
    """The O(k)-per-read intrinsic metrics of one distance, over shared cluster summaries."""
    from . import intrinsic as im

    if distance == "cosine":
        views = [im.CosineCompactness(), im.CosineSSB(), im.CosineSeparation(),
                 im.CosineDaviesBouldin()]
    else:
        views = [im.SSW(), im.SSB(), im.CalinskiHarabasz(), im.Separation(), im.RMSCompactness(),
                 im.RMSDaviesBouldin()]
    return im.IntrinsicEvaluator(views)


# ---------------------------------------------------------------------------------- demo
def make_demo_stream(seed: int = 0, pages: int = 20000, dim: int = 16, drop: float = 0.5):
    """A synthetic page stream and an online clusterer's segmentation of it (labels per page).

    Pages come in streams of about 250 pages; a stream is a run of documents (geometric lengths,
    mean 4 pages). Each document has a random topic vector; each page is its topic plus Gaussian
    noise, and 4% of pages are off-topic (blank or stray pages). The online clusterer reads the pages
    in order and starts a new segment when a page's cosine similarity to the running mean of the
    current segment falls below 0.3: a leader-follower segmenter, as a page-stream model would be.
    After the first ``drop`` fraction of the pages (``drop=1``: never) the segmenter degrades: its
    threshold falls to -0.2, so it merges neighbouring documents (a quality drop to detect).

    Returns ``(y_true, y_pred)``: lists of labels ``"s<stream>/d<doc>"`` and ``"s<stream>/c<seg>"``.
    Deterministic for a seed. Cost O(pages · dim).

    >>> t, p = make_demo_stream(seed=1, pages=12)
    >>> len(t), len(p), t[0], p[0]
    (12, 12, 's0/d0', 's0/c0')
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    y_true: list = []
    y_pred: list = []
    stream = 0
    degrade_at = int(pages * drop) if drop < 1 else pages + 1
    while len(y_true) < pages:
        n_pages = min(pages - len(y_true), int(rng.integers(150, 350)))
        doc, seg, left = -1, -1, 0
        mean, count = None, 0
        for _ in range(n_pages):
            if left == 0:
                doc += 1
                left = int(rng.geometric(0.25))
                topic = rng.normal(size=dim)
                topic /= np.linalg.norm(topic)
            left -= 1
            if rng.random() < 0.04:
                x = rng.normal(size=dim) / math.sqrt(dim)
            else:
                x = topic + rng.normal(scale=0.8 / math.sqrt(dim), size=dim)
            if mean is not None:
                cos = float(x @ mean) / (float(np.linalg.norm(x) * np.linalg.norm(mean)) or 1.0)
            threshold = 0.3 if len(y_true) < degrade_at else -0.2
            if mean is None or cos < threshold:
                seg += 1
                mean, count = x.copy(), 1
            else:
                count += 1
                mean += (x - mean) / count
            y_true.append(f"s{stream}/d{doc}")
            y_pred.append(f"s{stream}/c{seg}")
        stream += 1
    return y_true, y_pred


def _demo_monitor(classes, window: int):
    """A :class:`~streameval.Monitor` over the metrics, flagging drops of ELM (or of the first
    metric) when River is installed."""
    from .monitor import Monitor

    names = [c.__name__ for c in classes]
    watch = "ELM" if "ELM" in names else names[0]
    try:
        import river  # noqa: F401
    except ImportError:
        _warn("no drop detection in the demo: it needs River (pip install 'streameval[river]')")
        return Monitor([c() for c in classes], window=window, watch=watch, detector=False)
    return Monitor([c() for c in classes], window=window, watch=watch)


def cmd_demo(args) -> int:
    """``streameval demo``: stream :func:`make_demo_stream` through a :class:`Monitor` (all-time
    and windowed metrics, drop detection); print the table and plot the story.

    Cost: one Monitor update per page, and ``--points`` readings of every metric.
    """
    classes = _metric_classes(args.metrics)
    mon = _demo_monitor(classes, args.window)
    y_true, y_pred = make_demo_stream(args.seed, args.pages, drop=args.drop)
    n = len(y_true)
    step = max(1, n // args.points)
    xs: list = []
    trace: dict[str, list] = {c.__name__: [] for c in classes}
    wtrace: dict[str, list] = {c.__name__: [] for c in classes}
    bar = _progress(n, "demo", not args.no_progress)
    update = mon.update
    for k in range(n):
        update(y_true[k], y_pred[k])
        if (k + 1) % step == 0 or k + 1 == n:
            bar.update(k + 1 - (xs[-1] if xs else 0))
            xs.append(k + 1)
            for name, v in mon.all_time.get().items():
                trace[name].append(v)
            for name, v in mon.window.get().items():
                wtrace[name].append(v)
    bar.close()
    ev = mon.all_time
    table = ev.table
    _print_values(ev, args.format, f"streameval demo: {n} pages (seed {args.seed}), "
                  f"{table.k_true} true documents, {table.k_pred} predicted segments")
    out = sys.stderr if args.format == "json" else sys.stdout
    injected = int(n * args.drop) if args.drop < 1 else None
    flagged = [d for d in mon.drops if injected is None or d > injected]
    if injected is not None:
        seen = f"flagged by the Monitor at page {flagged[0]}" if flagged else "not flagged"
        print(f"quality drop injected at page {injected}: {seen}", file=out)
    if args.plot:
        try:
            _plot(xs, trace, wtrace, mon, injected, args)
        except ImportError:
            _warn(f"no plot written: matplotlib is not installed ({EXTRA_HINT})")
        else:
            print(f"plot written to {args.plot}", file=out)
    return 0


PLOT_FIRST = ("ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo")


def _plot(xs, trace, wtrace, mon, injected, args) -> None:
    """Up to four metrics, one panel each: all time against the window, the injected drop and the
    points where the Monitor flagged drops of its watched metric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [k for k in PLOT_FIRST if k in trace] + [k for k in trace if k not in PLOT_FIRST]
    names = names[:4]
    cols = 1 if len(names) == 1 else 2
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 3.6 * rows + 0.8), squeeze=False,
                             sharex=True)
    flagged = [d for d in mon.drops if injected is None or d > injected]
    for ax, name in zip(axes.flat, names):
        ax.plot(xs, wtrace[name], color="#e66101", linewidth=1.3,
                label=f"last {args.window} pages (window)")
        ax.plot(xs, trace[name], color="#1b4f9c", linewidth=2.4, label="all time")
        if injected is not None:
            ax.axvspan(injected, xs[-1], color="0.5", alpha=0.08)
            ax.axvline(injected, color="0.35", linestyle="--", linewidth=1.2,
                       label="quality drop injected")
        for d in mon.drops:
            first = bool(flagged) and d == flagged[0]
            ax.axvline(d, color="#c51b7d", linewidth=2.0 if first else 0.8,
                       alpha=1.0 if first else 0.5,
                       label=f"Monitor flags a drop of {mon.watch} (page {d})" if first else None)
        ax.set_title(name, fontsize=11)
        ax.grid(alpha=0.3)
        if mon.all_time.metrics[name].bounds[1] == 1.0:
            ax.set_ylim(min(0.0, min(wtrace[name] + trace[name])), 1.02)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("pages seen")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    story = "no quality drop injected"
    if injected is not None:
        story = (f"a quality drop injected at page {injected}, "
                 + ("flagged by the Monitor" if flagged else "not flagged by the Monitor"))
    fig.suptitle(f"streameval demo: {xs[-1]} pages (seed {args.seed}); {story}", fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(args.plot, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------- score
def cmd_score(args) -> int:
    """``streameval score``: count the file's (true, pred) cells in a dict, build the table once
    (:meth:`Evaluator.update_many`), print the values. O(1) per row; memory O(distinct cells)."""
    import numpy as np

    if getattr(args, "ci", False):  # intervals over units: streameval.cli_compare
        from .cli_compare import cmd_score_ci

        return cmd_score_ci(args)
    classes = _metric_classes(args.metrics)
    policy = _ErrorPolicy(args.on_error)
    spec = _spec(args)
    fmt = _format_or_usage(args.file, args.input_format)
    if fmt == "parquet":
        source = None
        found = iter_parquet_rows(args.file, spec, policy)
    else:
        source = LineSource.open(args.file, max_line=args.max_line_bytes)
        found = iter_text_rows(source, fmt, spec, policy)
    big = source is not None and args.file != "-" and os.path.getsize(args.file) > 2**24
    bar = _progress(os.path.getsize(args.file) if big else 0, args.file,
                    big and not args.no_progress, unit="B")
    counts: dict = {}
    get = counts.get
    rows = done = 0
    vectors = _intrinsic_evaluator(args.distance) if spec.vector else None
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
    ev = _evaluator(classes)
    if counts:
        ts = np.empty(len(counts), dtype=object)
        ps = np.empty(len(counts), dtype=object)
        ts[:] = [k[0] for k in counts]
        ps[:] = [k[1] for k in counts]
        ev.update_many(ts, ps, np.fromiter(counts.values(), dtype=np.int64, count=len(counts)))
    table = ev.table
    _print_values(ev, args.format, f"{args.file}: {rows} rows, {table.n} elements, "
                  f"{table.k_true} true clusters, {table.k_pred} predicted clusters",
                  extra=vectors.get() if vectors is not None else None)
    if rows == 0:
        _warn(f"{args.file} holds no rows to score (an empty table scores 1.0 by convention)")
    policy.report()
    return 0


def _format_or_usage(path, fmt):
    try:
        return detect_format(path, fmt)
    except ValueError as e:
        raise CLIError(str(e)) from None


# ---------------------------------------------------------------------------------- watch
CHECKPOINT_FORMAT = "streameval.watch-checkpoint"
CHECKPOINT_VERSION = 2  # 2: the position carries a fingerprint of the input consumed


def _count_cells(rows, sign=1, counts=None) -> dict:
    """``{(t, p): total weight}`` of ``(t, p, w, ...)`` rows (``sign=-1``: subtracted)."""
    counts = {} if counts is None else counts
    get = counts.get
    for row in rows:
        key = (row[0], row[1])
        counts[key] = get(key, 0) + sign * row[2]
    return counts


def _add_cells(ev, counts: dict) -> None:
    """Apply ``{(t, p): signed weight}`` to an evaluator: additions in one
    :meth:`~streameval.Evaluator.update_many` (as ``score`` does), removals by ``revert``."""
    import numpy as np

    plus = [(k, c) for k, c in counts.items() if c > 0]
    for (t, p), c in counts.items():
        if c < 0:
            ev.revert(t, p, -c)
    if plus:
        ts = np.empty(len(plus), dtype=object)
        ps = np.empty(len(plus), dtype=object)
        ts[:] = [k[0] for k, _ in plus]
        ps[:] = [k[1] for k, _ in plus]
        ev.update_many(ts, ps, np.fromiter((c for _, c in plus), dtype=np.int64, count=len(plus)))


class _Drops:
    """Drop detection as :class:`~streameval.Monitor` does it: the watched metric over consecutive
    blocks of ``block`` rows, each block's value fed to River's ``ADWIN`` (:func:`is_drop`).

    Cost: one small table per block (O(block)), amortised O(1) per row.
    """

    def __init__(self, cls, block: int, recent: int):
        from river import drift

        from .monitor import is_drop

        self.cls, self.block, self.recent = cls, block, recent
        self.detector, self.is_drop = drift.ADWIN(clock=1), is_drop
        self.better = cls.bigger_is_better
        self.rows: list = []
        self.since = [0.0, 0]
        self.seen = 0  # rows fed
        self.drops: list = []  # row counts at which drops were flagged

    def feed(self, rows) -> None:
        block, out = self.block, self.rows
        for row in rows:
            out.append(row)
            if len(out) == block:
                value = self.value(_count_cells(out))
                self.seen += len(out)
                out.clear()
                if value == value and self.is_drop(self.detector, value, self.better, self.since):
                    self.drops.append(self.seen)

    def value(self, cells: dict) -> float:
        """The watched metric over one block's cells ``{(t, p): n}``: ELM and BCubed (default
        parameters) from their per-element F-scores, averaged over the elements; any other metric
        from the table's statistics (:meth:`ContingencyStats.from_cells`). O(cells)."""
        from .stats import ContingencyStats

        name = self.cls.__name__
        if name not in ("ELM", "BCubed"):
            stats = ContingencyStats.from_cells((t, p, c) for (t, p), c in cells.items())
            return self.cls().value(stats)
        a: dict = {}
        b: dict = {}
        n = 0
        for (t, p), c in cells.items():
            a[t] = a.get(t, 0) + c
            b[p] = b.get(p, 0) + c
            n += c
        total = 0.0
        if name == "ELM":  # F_e = 2(n-1)/((a-1)+(b-1)), 1 when a = b = 1
            for (t, p), c in cells.items():
                x, y = a[t], b[p]
                total += c if x == y == 1 else c * 2.0 * (c - 1) / (x + y - 2)
        else:  # BCubed: F_e = 2n/(a+b)
            for (t, p), c in cells.items():
                total += c * 2.0 * c / (a[t] + b[p])
        return total / n

    @property
    def flag(self) -> bool:
        """A drop was flagged within the last ``recent`` rows."""
        return bool(self.drops) and self.seen + len(self.rows) - self.drops[-1] < self.recent


class _Watch:
    """The state of ``streameval watch``: all-time and windowed metrics, counts, input position.

    Rows are taken in O(1) each (appended to a pending list); the tables catch up at each report,
    publication or checkpoint (:meth:`flush`): the all-time table by one ``update_many`` of the
    pending rows' cells, the window (the last ``window`` rows) by the net change of its cells, or
    rebuilt when that is cheaper. The values are those of updating row by row (the tables hold
    integer counts; the order of updates does not change them).
    """

    def __init__(self, classes, window: int, drops: _Drops | None = None):
        self.classes = classes
        self.all = _evaluator(classes)
        self.size = window
        self.items: deque | None = deque() if window else None  # the window's rows
        self.win = _evaluator(classes) if window else None
        self.pending: list = []
        self.drops = drops
        self.rows = self.skipped = self.offset = self.line = 0
        self.header = self.fingerprint = None
        self.updated = time.time()  # when the last row was taken

    @property
    def elements(self) -> int:
        return self.all.table.n + sum(row[2] for row in self.pending)

    def flush(self) -> None:
        """Bring the tables up to date with the pending rows."""
        rows = self.pending
        if not rows:
            return
        self.pending = []
        _add_cells(self.all, _count_cells(rows))
        if self.items is not None:
            self._flush_window(rows)
        if self.drops is not None:
            self.drops.feed(rows)

    def _flush_window(self, rows) -> None:
        items, size = self.items, self.size
        assert items is not None and self.win is not None  # a window is kept
        leaving = max(0, len(items) + len(rows) - size)
        if leaving + len(rows) > size:  # cheaper to rebuild from the rows it will hold
            items.extend(rows[-size:])
            while len(items) > size:
                items.popleft()
            self.win = _evaluator(self.classes)
            _add_cells(self.win, _count_cells(items))
            return
        delta = _count_cells((items.popleft() for _ in range(leaving)), sign=-1)
        _add_cells(self.win, _count_cells(rows, counts=delta))
        items.extend(rows)

    def values(self) -> dict:
        self.flush()
        out = {"rows": self.rows, "elements": self.all.table.n, "skipped": self.skipped,
               "all": self.all.get()}
        if self.win is not None:
            out["window"] = self.win.get()
        if self.drops is not None:
            out["drop"] = self.drops.flag
            out["drops"] = len(self.drops.drops)
        return out

    # -- checkpoint ----------------------------------------------------------------
    def to_body(self, input_desc: dict, fingerprint) -> dict:
        """The checkpoint's content (labels from the readers are str, int, float or bool)."""
        self.flush()
        body = {
            "input": input_desc,
            "position": {"offset": self.offset, "line": self.line, "header": self.header,
                         "fingerprint": fingerprint},
            "rows": self.rows,
            "skipped": self.skipped,
            "table": self.all.table.to_dict(),
            "window": None,
        }
        if self.items is not None:
            assert self.win is not None
            body["window"] = {
                "size": self.size,
                "items": [list(item) for item in self.items],
                "table": self.win.table.to_dict(),
            }
        return body

    def load_body(self, body: dict, input_desc: dict, path: str) -> None:
        """Restore from a checkpoint body; raise :class:`CLIError` on anything inconsistent."""
        from .contingency import Contingency

        def refuse(why):
            raise CLIError(f"checkpoint {path} refused: {why}")

        if body.get("input") != input_desc:
            refuse(f"it was written for another input {body.get('input')!r}, not {input_desc!r}")
        try:
            pos = body["position"]
            offset, line, rows, skipped = pos["offset"], pos["line"], body["rows"], body["skipped"]
            header, self.fingerprint = pos["header"], pos["fingerprint"]
            for v in (offset, line, rows, skipped):
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    refuse(f"bad count {v!r}")
            if header is not None and not (
                isinstance(header, list) and all(isinstance(h, str) for h in header)
            ):
                refuse("bad header")
            table = Contingency.from_dict(body["table"])
            self.all = _evaluator(self.classes, table=table)
            win = body["window"]
            if (win is None) != (self.items is None) or (
                win is not None and win.get("size") != self.size
            ):
                size = 0 if win is None else win.get("size")
                refuse(f"its window size is {size}, but --window is {self.size}")
            if win is not None:
                assert self.items is not None and self.win is not None  # sizes agree above
                items = [tuple(item) for item in win["items"]]
                if len(items) > self.size or any(len(item) != 3 for item in items):
                    refuse("bad window items")
                self.items.extend(items)
                _add_cells(self.win, _count_cells(items))
                if Contingency.from_dict(win["table"]) != self.win.table:
                    refuse("its window items do not add up to its window table")
        except CLIError:
            raise
        except (KeyError, TypeError, ValueError, StreamevalError) as e:
            refuse(f"malformed content ({type(e).__name__}: {e})")
        self.offset, self.line, self.rows, self.skipped, self.header = (
            offset, line, rows, skipped, header)


def save_checkpoint(path: str, body: dict) -> None:
    """Write ``{format, version, sha256, body}`` as JSON to a temporary file, then rename it over
    ``path``: a reader (or a crash) sees the old checkpoint or the new one, never half of one.
    The temporary file is removed if the write fails."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    doc = {
        **header(CHECKPOINT_FORMAT, CHECKPOINT_VERSION),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "body": body,
    }
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, sort_keys=True, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    try:  # make the rename itself durable
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temporaries(path: str) -> list:
    """Remove ``PATH.tmp-PID`` files that a killed ``watch`` left (its process is gone);
    return their names. Temporaries of a live process are left alone."""
    import glob

    removed = []
    for tmp in glob.glob(glob.escape(path) + ".tmp-*"):
        pid = tmp.rsplit("-", 1)[1]
        if not pid.isdigit():
            continue
        if int(pid) != os.getpid():
            try:
                os.kill(int(pid), 0)
                continue  # alive (another watch writing the same checkpoint)
            except ProcessLookupError:
                pass
            except (PermissionError, OverflowError):
                continue
        with contextlib.suppress(OSError):
            os.remove(tmp)
            removed.append(tmp)
    return removed


def load_checkpoint(path: str) -> dict:
    """The body of a checkpoint written by :func:`save_checkpoint`; :class:`CLIError` otherwise."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CLIError(f"cannot read checkpoint {path}: {e.strerror}") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CLIError(f"checkpoint {path} refused: it is not valid JSON (corrupt or truncated)") from None
    try:
        check_header(doc, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, what="watch checkpoint")
    except InvalidStateError as e:
        raise CLIError(f"checkpoint {path} refused: {e}") from None
    body = doc.get("body")
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    if not isinstance(body, dict) or hashlib.sha256(text.encode()).hexdigest() != doc.get("sha256"):
        raise CLIError(f"checkpoint {path} refused: its checksum does not match (corrupt)")
    return body


class _Prometheus:
    """The values of the last publication on ``http://HOST:PORT/metrics``, read at each scrape:

    - ``streameval_metric{metric, scope}`` (gauge; scope ``all`` or ``window``);
    - ``streameval_rows_total``, ``streameval_elements_total``, ``streameval_rows_skipped_total``
      (counters);
    - ``streameval_last_update_timestamp_seconds`` (gauge: Unix time of the last row taken);
    - ``streameval_drop`` (gauge, 0 or 1: a drop of the watched metric was flagged within the
      window) and ``streameval_drops_total`` (counter), when drops are detected.

    Every series carries the ``--label`` pairs. A scrape reads one coherent snapshot.
    """

    def __init__(self, host: str, port: int, labels: dict):
        try:
            from prometheus_client import CollectorRegistry, start_http_server
            from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
        except ImportError:
            raise CLIError(f"--prometheus-port needs prometheus-client: {EXTRA_HINT}") from None
        self.gauge, self.counter = GaugeMetricFamily, CounterMetricFamily
        self.labels = labels
        self.snapshot: tuple[dict, float] | None = None
        registry = CollectorRegistry()
        registry.register(self)
        try:
            self.server, _ = start_http_server(port, addr=host, registry=registry)
        except OSError as e:
            raise CLIError(f"cannot serve Prometheus metrics on {host}:{port}: {e.strerror}") from None
        self.port = self.server.server_port
        _warn(f"serving Prometheus metrics on http://{host}:{self.port}/metrics")

    def publish(self, values: dict, updated: float) -> None:
        self.snapshot = (values, updated)  # one assignment: a scrape sees all of it or none

    def describe(self):
        return []

    def collect(self):
        if self.snapshot is None:
            return
        values, updated = self.snapshot
        keys, vals = list(self.labels), list(self.labels.values())
        g = self.gauge("streameval_metric", "Current value of a clustering evaluation metric",
                       labels=["metric", "scope", *keys])
        for scope in ("all", "window"):
            for name, v in values.get(scope, {}).items():
                g.add_metric([name, scope, *vals], v)
        yield g
        for key, name, text in (("rows", "streameval_rows", "Rows taken (all time)"),
                                ("elements", "streameval_elements",
                                 "Elements (total weight) in the all-time table"),
                                ("skipped", "streameval_rows_skipped", "Malformed rows skipped"),
                                ("drops", "streameval_drops", "Drops of the watched metric flagged")):
            if key in values:
                c = self.counter(name, text, labels=keys)
                c.add_metric(vals, values[key])
                yield c
        g = self.gauge("streameval_last_update_timestamp_seconds",
                       "Unix time at which the last row was taken", labels=keys)
        g.add_metric(vals, updated)
        yield g
        if "drop" in values:
            g = self.gauge("streameval_drop", "1 when a drop of the watched metric was flagged "
                           "within the window, else 0", labels=keys)
            g.add_metric(vals, float(values["drop"]))
            yield g

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


_SHORT = {"AdjustedRand": "ARI", "NormalizedMutualInfo": "NMI", "AdjustedMutualInfo": "AMI",
          "VariationOfInformation": "VI", "FowlkesMallows": "FMI", "MutualInfo": "MI"}


def _short_name(name: str) -> str:
    return _SHORT.get(name, name)


def _status_line(values: dict, window: int, width: int | None = None) -> str:
    """``rows N | skipped S | all/last W: ELM 0.8123/0.7990 BCubed ...`` cut to ``width``
    characters (default: the terminal's), the metrics that do not fit counted at the end."""
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns
    head = f"rows {values['rows']} | skipped {values['skipped']}"
    if values.get("drop"):
        head += " | DROP"
    win = values.get("window")
    head += f" | all/last {window}:" if win is not None else " | all:"
    parts = []
    for k, v in values["all"].items():
        cell = f"{v:.4f}" if win is None else f"{v:.4f}/{win[k]:.4f}"
        parts.append(f"{_short_name(k)} {cell}")
    line = head
    for i, part in enumerate(parts):
        more = len(parts) - i - 1
        tail = f" +{more} more" if more else ""
        if i and len(line) + 1 + len(part) + len(tail) > width - 1:
            return f"{line} +{len(parts) - i} more"
        line += " " + part
    return line


def _json_line(values: dict, final=False) -> str:
    out = {"time": round(time.time(), 3), **values, "final": final}
    for scope in ("all", "window"):
        if scope in out:
            out[scope] = {k: _finite(v) for k, v in out[scope].items()}
    return json.dumps(out)


class _Feed:
    """Items from the reader thread to the main thread: a deque (appends and pops are atomic),
    an event to wake the main thread when items arrive, and a bound on what may wait."""

    LIMIT = 1 << 16

    def __init__(self):
        self.items: deque = deque()
        self.ready = threading.Event()
        self.stopped = False

    def put(self, item) -> None:
        items = self.items
        while len(items) >= self.LIMIT and not self.stopped:
            time.sleep(0.005)
        items.append(item)
        if len(items) == 1:
            self.ready.set()

    def take(self, timeout: float, most: int = 8192) -> list:
        """Up to ``most`` items, waiting up to ``timeout`` seconds for the first."""
        items = self.items
        if not items:
            self.ready.clear()
            if not items:
                self.ready.wait(timeout)
        pop, out = items.popleft, []
        for _ in range(min(most, len(items))):
            out.append(pop())
        return out


def _input_desc(args, fmt: str, spec: RowSpec) -> dict:
    return {
        "path": "<stdin>" if args.file == "-" else os.path.abspath(args.file),
        "format": fmt, "true": spec.true, "pred": spec.pred, "weight": spec.weight,
        "header": spec.header,
    }


def _drops_for(args, classes):
    """The drop detector of ``watch`` (``None`` without River or with ``--drop-block 0``)."""
    if not args.drop_block:
        return None
    names = {c.__name__: c for c in classes}
    cls = names.get("ELM", classes[0])
    if args.drop_metric:
        (cls,) = _metric_classes([args.drop_metric])[:1]
    try:
        return _Drops(cls, args.drop_block, max(args.window, 10 * args.drop_block))
    except ImportError:
        _warn("no drop detection: it needs River (pip install 'streameval[river]')")
        return None


def _check_fingerprint(source: LineSource, state, path: str) -> None:
    """Refuse to resume a file whose consumed bytes are not those the checkpoint saw."""
    fd = source.fileno()
    size = os.fstat(fd).st_size
    if size < state.offset:
        raise CLIError(f"checkpoint {path} refused: {source.name} has {size} bytes, fewer than "
                       f"the {state.offset} already read: was it truncated or replaced?")
    if fingerprint(fd, state.offset) != state.fingerprint:
        raise CLIError(f"checkpoint {path} refused: the first {state.offset} bytes of "
                       f"{source.name} are not those it consumed (replaced, rewritten, or "
                       "rotated while watch was not running?)")


class _WatchRun:
    """One run of ``streameval watch``: the reader thread, the main loop, reports, checkpoints."""

    def __init__(self, args, fmt, spec, classes):
        self.args, self.fmt, self.spec = args, fmt, spec
        self.input_desc = _input_desc(args, fmt, spec)
        self.state = _Watch(classes, args.window, _drops_for(args, classes))
        self.policy = _ErrorPolicy(args.on_error)
        self.feed = _Feed()
        self.stop = threading.Event()
        self.prom = self.jsonl = None
        self.fd = None  # a descriptor of the file being read, for the checkpoint's fingerprint
        self.interrupted: list = []
        self.error = None
        self.file_error = False

    # -- set-up -------------------------------------------------------------------------
    def resume(self) -> None:
        args, state = self.args, self.state
        if not args.checkpoint:
            return
        for tmp in remove_stale_temporaries(args.checkpoint):
            _warn(f"removed {tmp}, left by a watch that was killed while writing a checkpoint")
        if args.resume and os.path.exists(args.checkpoint):
            state.load_body(load_checkpoint(args.checkpoint), self.input_desc, args.checkpoint)
            _warn(f"resumed from {args.checkpoint}: {state.rows} rows, line {state.line}")
        elif args.resume:
            _warn(f"no checkpoint at {args.checkpoint} yet: starting from the beginning")
        self.policy.count = state.skipped

    def open(self) -> None:
        args, state = self.args, self.state
        self.source = LineSource.open(args.file, follow=args.follow, stop=self.stop.is_set,
                                      poll=args.poll, max_line=args.max_line_bytes,
                                      on_notice=self._notice)
        fd = self.source.fileno()
        if args.file != "-" and fd is not None:
            if state.line:
                _check_fingerprint(self.source, state, args.checkpoint)
            self.fd = os.dup(fd)
        self.start = (state.offset, state.line) if args.file != "-" and state.line else None
        if args.prometheus_port is not None:
            self.prom = _Prometheus(args.prometheus_host, args.prometheus_port, dict(args.label))
        if args.jsonl:
            self.jsonl = (sys.stdout if args.jsonl == "-"
                          else open(args.jsonl, "a", encoding="utf-8"))  # noqa: SIM115

    # -- the reader thread --------------------------------------------------------------
    def _notice(self, message: str) -> None:
        """From the reader thread (a rotation, truncation, deletion): in order with the rows."""
        source = self.source
        fd = source.fileno()
        self.feed.put((None, "notice", (message, source.generation,
                                        os.dup(fd) if fd is not None else None)))

    def reader(self) -> None:
        put, source, raised = self.feed.put, self.source, []

        def on_error(e):
            put((None, "error", (e, source.lineno, source.offset)))
            if self.args.on_error == "stop":
                raised.append(e)
                raise e

        try:
            rows = iter_text_rows(source, self.fmt, self.spec, on_error, start=self.start,
                                  total=self.state.elements)
            for row in rows:
                put((row, source.lineno, source.offset))
        except InputError as e:
            if e not in raised:  # a problem with the file as a whole (header, size)
                put((None, "fatal", e))
        except Exception as e:  # an I/O error: reported by the main thread
            put((None, "fatal", e))
        put((None, "end", None))

    # -- the main thread ----------------------------------------------------------------
    def emit(self, final=False) -> dict:
        args, state = self.args, self.state
        values = state.values()
        if self.prom is not None:
            self.prom.publish(values, state.updated)
        if self.jsonl is not None:
            print(_json_line(values, final), file=self.jsonl, flush=True)
        if self.jsonl is not sys.stdout and not final:
            print(_status_line(values, args.window), flush=True)
        return values

    def checkpoint(self) -> None:
        if self.args.checkpoint:
            state = self.state
            state.skipped = self.policy.count
            fp = fingerprint(self.fd, state.offset) if self.fd is not None else None
            save_checkpoint(self.args.checkpoint, state.to_body(self.input_desc, fp))

    def special(self, kind: str, payload) -> bool:
        """Handle a non-row item; false when the run must end."""
        state = self.state
        if kind == "error":
            error, line, offset = payload
            if self.args.on_error == "stop":
                self.error = error
                return False
            self.policy.record(error)
            state.skipped = self.policy.count
            state.line, state.offset = line, offset
            return True
        if kind == "notice":
            message, generation, fd = payload
            _warn(message)
            if fd is not None and generation != getattr(self, "generation", 0):
                self.generation = generation
                state.line = state.offset = 0
                if self.fd is not None:
                    os.close(self.fd)
                self.fd = fd
            elif fd is not None:
                os.close(fd)
            return True
        if kind == "fatal":
            self.error, self.file_error = payload, True
        return False

    def loop(self) -> None:
        args, state, take = self.args, self.state, self.feed.take
        every, interval, ck_every, ck_rows = (args.every, args.interval, args.checkpoint_every,
                                              args.checkpoint_rows)
        now = time.monotonic()
        last_line = last_ck = last_pub = now
        rows_line = rows_ck = state.rows
        saved_header = state.header if state.line else None
        pending = state.pending
        running = True
        if self.prom is not None:
            self.prom.publish(state.values(), state.updated)
        while running and not self.interrupted:
            batch = take(0.2)
            if saved_header is not None and batch and batch[0][0] is not None:
                if self.source.header != saved_header:  # first row after a resume
                    self.error = CLIError(f"the header of {args.file} is not the one in the "
                                          f"checkpoint ({self.source.header} != {saved_header})")
                    return
                saved_header = None
            last = None  # the last row item taken, whose position the state must record
            for item in batch:
                row = item[0]
                if row is None:
                    if last is not None:
                        state.line, state.offset, last = last[1], last[2], None
                    running = self.special(item[1], item[2])
                    pending = state.pending
                    if not running:
                        break
                    continue
                pending.append(row)
                state.rows += 1
                last = item
                if state.rows - rows_line >= every or (
                        ck_rows and state.rows - rows_ck >= ck_rows):
                    state.line, state.offset = item[1], item[2]
                    if state.rows - rows_line >= every:
                        self.emit()
                        rows_line, last_line = state.rows, time.monotonic()
                        last_pub = last_line
                    if ck_rows and state.rows - rows_ck >= ck_rows:
                        self.checkpoint()
                        rows_ck, last_ck = state.rows, time.monotonic()
                    pending = state.pending
            if last is not None:
                state.line, state.offset = last[1], last[2]
                state.updated = time.time()
            state.header = self.source.header
            now = time.monotonic()
            if state.rows != rows_line and interval and now - last_line >= interval:
                self.emit()
                rows_line, last_line, last_pub = state.rows, now, now
            elif self.prom is not None and now - last_pub >= 0.5:
                self.prom.publish(state.values(), state.updated)
                last_pub = now
            if args.checkpoint and state.rows != rows_ck and now - last_ck >= ck_every:
                self.checkpoint()
                rows_ck, last_ck = state.rows, time.monotonic()  # timed from the write's end
            pending = state.pending

    def final_report(self) -> None:
        args = self.args
        values = self.emit(final=True)
        if self.jsonl is sys.stdout:
            return
        if self.interrupted:
            why = f"interrupted ({self.interrupted[0]})"
        elif self.file_error:
            why = "stopped by a problem with the input as a whole"
        elif self.error is not None:
            why = "stopped at a malformed row"
        else:
            why = "end of input"
        print(f"streameval watch: final report, {why}: {values['rows']} rows, "
              f"{values['elements']} elements, {values['skipped']} skipped")
        cols = {k: [v] for k, v in values["all"].items()}
        header: tuple[str, ...] = ("metric", "all time")
        if "window" in values:
            header += (f"last {args.window}",)
            for k, v in values["window"].items():
                cols[k].append(v)
        print(_table(cols, header), flush=True)

    def run(self) -> int:
        self.resume()
        self.open()
        # Ctrl-C and SIGTERM only raise a flag, checked between batches: a row is never half
        # counted (tables, window and input position always agree: a checkpoint is consistent).
        signals: dict[int, str] = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
        old = {sig: signal.signal(sig, lambda signum, _: self.interrupted.append(signals[signum]))
               for sig in signals}
        threading.Thread(target=self.reader, daemon=True).start()
        try:
            self.loop()
        finally:
            self.stop.set()
            self.feed.stopped = True
            for sig, handler in old.items():
                signal.signal(sig, handler)
        error = self.error
        if isinstance(error, CLIError):
            raise error
        if error is not None and not isinstance(error, InputError):
            raise CLIError(f"cannot read {self.args.file}: "
                           f"{getattr(error, 'strerror', None) or error}")
        self.checkpoint()
        self.final_report()
        self.close()
        self.policy.report()
        if error is not None:
            raise error
        return 0

    def close(self) -> None:
        if self.jsonl not in (None, sys.stdout):
            self.jsonl.close()
        if self.prom is not None:
            self.prom.close()
        if self.fd is not None:
            os.close(self.fd)
        if self.args.checkpoint:
            _warn(f"checkpoint saved to {self.args.checkpoint}")


def cmd_watch(args) -> int:
    """``streameval watch``: a reader thread parses rows into a feed; the main thread takes them
    (O(1) per row), and reports, publishes and checkpoints (the tables catch up then)."""
    fmt = _format_or_usage(args.file, args.input_format)
    if fmt == "parquet":
        raise CLIError("watch reads text rows (csv, tsv, jsonl); use 'streameval score' for Parquet")
    if args.follow and args.file == "-":
        raise CLIError("--follow applies to files; standard input is read until it closes")
    if args.resume and not args.checkpoint:
        raise CLIError("--resume needs --checkpoint PATH")
    return _WatchRun(args, fmt, _spec(args), _metric_classes(args.metrics)).run()


# ---------------------------------------------------------------------------------- data
DATA_FILES = {"grafana": "grafana-dashboard.json", "alerts": "prometheus-alerts.yml"}


def cmd_data(args) -> int:
    """``streameval grafana`` / ``streameval alerts``: print a file shipped in the package."""
    from importlib import resources

    sys.stdout.write(resources.files(__package__).joinpath("data").joinpath(DATA_FILES[args.data])
                     .read_text(encoding="utf-8"))
    return 0


# ---------------------------------------------------------------------------------- pss
def cmd_pss(argv) -> int:
    """``streameval pss ...``: parsed and run by :mod:`streameval.pss`, imported only here."""
    import importlib

    if "--compare" in argv:  # intervals and paired tests: streameval.cli_compare
        from .cli_compare import cmd_pss_compare

        return cmd_pss_compare([a for a in argv if a != "--compare"])
    try:
        pss = importlib.import_module(f"{__package__}.pss")
    except ModuleNotFoundError as e:
        if e.name != f"{__package__}.pss":
            raise CLIError(f"streameval pss needs {e.name}: {EXTRA_HINT}") from None
        raise CLIError(
            "the pss subcommand is not available: this installation has no streameval.pss module "
            "(page-stream segmentation)"
        ) from None
    parser = argparse.ArgumentParser(
        prog=f"{PROG} pss", description="Score predicted page streams against gold page streams."
    )
    pss.configure_parser(parser)
    return int(pss.main(parser.parse_args(argv)) or 0)


# ---------------------------------------------------------------------------------- parser
METRICS_HELP = ("metric names, separated by spaces or commas: class names (ELM, AdjustedRand), "
                "scikit-learn function names (adjusted_rand_score), short forms (ARI, NMI, AMI, "
                "VI), or 'all' (default: every O(1) label metric)")


def _add_row_options(p, *, follow: bool) -> None:
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
    p.add_argument("--max-line-bytes", type=_positive, default=MAX_LINE, metavar="N",
                   help=f"a longer line is a bad row (default {MAX_LINE}, 1 MiB): memory stays "
                   "bounded whatever the input")


def build_parser() -> argparse.ArgumentParser:
    """The ``streameval`` argument parser (``pss``'s own options come from :mod:`streameval.pss`)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Exact streaming evaluation of clusterings: score files, watch live streams.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("demo", help="stream a generated page stream through every metric",
                       description="Generate a page stream and an online clusterer's segmentation "
                       "of it (from a seed; nothing is downloaded), stream it through every O(1) "
                       "metric, print the final table and plot the metrics along the stream.")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--pages", type=_positive, default=20000, help="pages in the stream (default 20000)")
    p.add_argument("--plot", default="streameval-demo.png", metavar="PATH",
                   help="PNG file for the plot (default streameval-demo.png; '' for none)")
    p.add_argument("--points", type=_positive, default=200,
                   help="how many times along the stream the metrics are recorded (default 200)")
    p.add_argument("--metrics", nargs="+", metavar="NAME", help=METRICS_HELP)
    p.add_argument("--window", type=_positive, default=1000, metavar="N",
                   help="the window of the windowed metrics, in pages (default 1000)")
    p.add_argument("--drop", type=_fraction, default=0.5, metavar="F",
                   help="inject a quality drop after this fraction of the stream (default 0.5; "
                   "1: none): the segmenter starts merging neighbouring documents")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("score", help="score a whole file of (true, predicted[, weight]) rows",
                       description="Compute the metrics of a file of (true label, predicted label"
                       "[, weight]) rows: CSV, TSV, JSON lines or Parquet.")
    _add_row_options(p, follow=False)
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="a table, or a JSON object of metric name to value")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (shown on a terminal for files over 16 MB)")
    p.add_argument("--vector", nargs="+", metavar="COL",
                   help="feature-vector columns (several numeric columns, or one column holding "
                   "the whole vector): also report the intrinsic metrics of the predicted clusters")
    p.add_argument("--distance", choices=("euclidean", "cosine"), default="euclidean",
                   help="distance of the intrinsic metrics (with --vector; default euclidean)")
    from .cli_compare import add_parser as add_compare_parser
    from .cli_compare import add_score_ci_options

    add_score_ci_options(p)  # score --ci --unit COL
    p.set_defaults(func=cmd_score)
    add_compare_parser(sub)  # streameval compare GOLD SYS... --unit COL

    p = sub.add_parser("watch", help="follow a live stream of rows: windows, Prometheus, checkpoints",
                       description="Read rows as they arrive from a file or standard input, keep "
                       "all-time and windowed metrics, print a line every N rows or T seconds, "
                       "and on Ctrl-C or at the end print the final report.")
    _add_row_options(p, follow=True)
    p.add_argument("--follow", "-f", action="store_true",
                   help="keep reading as the file grows, like tail -f (stop with Ctrl-C)")
    p.add_argument("--window", type=_non_negative, default=1000, metavar="N",
                   help="also report the metrics of the last N rows (default 1000; 0: off)")
    p.add_argument("--every", type=_positive, default=10000, metavar="N",
                   help="print a line every N rows (default 10000)")
    p.add_argument("--interval", type=float, default=5.0, metavar="T",
                   help="... or every T seconds when rows arrived (default 5; 0: off)")
    p.add_argument("--jsonl", metavar="PATH",
                   help="append each report as a JSON line to PATH ('-': standard output instead "
                   "of text lines)")
    p.add_argument("--prometheus-port", type=_port, metavar="PORT",
                   help="serve the current values on http://HOST:PORT/metrics (0: any free port)")
    p.add_argument("--label", type=_label, action="append", default=[], metavar="KEY=VALUE",
                   help="a label on every Prometheus series, to tell watchers apart (repeatable)")
    p.add_argument("--drop-block", type=_non_negative, default=100, metavar="N",
                   help="flag drops of the watched metric over blocks of N rows, as "
                   "streameval.Monitor does (River's ADWIN; default 100; 0: off)")
    p.add_argument("--drop-metric", metavar="NAME",
                   help="the metric whose drops are flagged (default ELM, else the first one)")
    p.add_argument("--prometheus-host", default="127.0.0.1", metavar="HOST",
                   help="address the Prometheus endpoint binds to (default 127.0.0.1)")
    p.add_argument("--checkpoint", metavar="PATH",
                   help="save the state to PATH (JSON, written atomically) on a schedule and on exit")
    p.add_argument("--checkpoint-every", type=float, default=30.0, metavar="T",
                   help="seconds between checkpoints (default 30)")
    p.add_argument("--checkpoint-rows", type=_non_negative, default=0, metavar="N",
                   help="also checkpoint every N rows (default 0: off)")
    p.add_argument("--resume", action="store_true",
                   help="start from the --checkpoint file when it exists (and continue in the file "
                   "where it stopped)")
    p.add_argument("--poll", type=float, default=0.1, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_watch)

    for name, what in (("grafana", "a Grafana dashboard (JSON) for the watch metrics"),
                       ("alerts", "Prometheus alert rules (YAML) for the watch metrics")):
        p = sub.add_parser(name, help=f"print {what}",
                           description=f"Print {what}, shipped in the package as "
                           f"streameval/data/{DATA_FILES[name]}.")
        p.set_defaults(func=cmd_data, data=name)

    sub.add_parser("pss", add_help=False, help="score predicted page streams against gold ones "
                   "(see 'streameval pss --help')")
    return parser


def _port(s: str) -> int:
    v = _non_negative(s)
    if v > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {s!r}")
    return v


def _fraction(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {s!r}")
    return v


def _label(s: str) -> tuple:
    import re

    key, sep, value = s.partition("=")
    if not sep or not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", key) or key.startswith("__"):
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE with a Prometheus label name as KEY, got {s!r}")
    if key in ("metric", "scope"):
        raise argparse.ArgumentTypeError(f"the label {key!r} is streameval's own")
    return key, value


def _positive(s: str) -> int:
    v = _non_negative(s)
    if v == 0:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {s!r}")
    return v


def _non_negative(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {s!r}")
    return v


def main(argv=None) -> int:
    """Run the command line; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "pss":
            return cmd_pss(argv[1:])
        args = build_parser().parse_args(argv)
        return args.func(args)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except (CLIError, StreamevalError) as e:  # InputError is a StreamevalError
        _warn(f"error: {e}")
        return 1
    except KeyboardInterrupt:
        _warn("interrupted")
        return 130
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            # the reader went away (e.g. '| head'); silence the flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        where = f"{e.filename}: " if e.filename else ""
        _warn(f"error: {where}{e.strerror or e}")
        return 1


def console() -> None:  # the console script's entry point
    sys.exit(main())
