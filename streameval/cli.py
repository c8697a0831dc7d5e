"""The ``streameval`` command line: ``demo``, ``score``, ``watch`` and ``pss``.

- ``streameval demo``: a generated page stream segmented by an online clusterer, streamed through
  every O(1) metric; prints the final table and plots the metrics along the stream (PNG).
- ``streameval score FILE --true COL --pred COL``: the metrics of a whole file (CSV, TSV, JSON lines,
  Parquet), as a table or as a JSON object of metric name to value.
- ``streameval watch FILE|-``: rows as they arrive (``--follow`` a growing file like ``tail -f``),
  all-time and windowed metrics, a line every N rows or T seconds, JSON lines, a Prometheus endpoint,
  and a JSON checkpoint (saved atomically on a schedule and on exit) to resume from.
- ``streameval pss``: page-stream segmentation scoring, from :mod:`streameval.pss`.

Exit status: 0 on success (a watch stopped with Ctrl-C or SIGTERM included), 1 on bad input or a
refused checkpoint, 2 on a usage error. Errors are one line on standard error, never a traceback.

>>> main(["score", "--help"])  # doctest: +ELLIPSIS
usage: streameval score [-h] --true COL --pred COL ...
...
0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import queue
import signal
import sys
import threading
import time

from .errors import StreamevalError
from .io import (
    FORMATS,
    InputError,
    LineSource,
    RowSpec,
    detect_format,
    iter_parquet_rows,
    iter_text_rows,
)

__all__ = ["main", "build_parser", "make_demo_stream"]

PROG = "streameval"
EXTRA_HINT = "pip install 'streameval[cli]'"


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


# ---------------------------------------------------------------------------------- helpers
def _metric_classes(names) -> list:
    """The metric classes named on the command line (``None``: every O(1) label metric).

    Names are class names, case-insensitive, separated by spaces or commas; ``all`` adds the
    on-demand (not O(1)) label metrics.
    """
    from .metrics import REGISTRY

    label = {k: c for k, c in REGISTRY.items() if getattr(c, "requires_labels", True)}
    default = [c for c in label.values() if not getattr(c, "on_demand", False)]
    if not names:
        return default
    wanted = [n for arg in names for n in arg.split(",") if n.strip()]
    by_lower = {k.lower(): c for k, c in label.items()}
    out: list = []
    for n in wanted:
        n = n.strip()
        if n.lower() == "all":
            out.extend(c for c in label.values() if c not in out)
            continue
        cls = by_lower.get(n.lower())
        if cls is None:
            raise CLIError(f"unknown metric {n!r}; choose from {', '.join(label)} (or 'all')")
        if cls not in out:
            out.append(cls)
    return out


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
def make_demo_stream(seed: int = 0, pages: int = 20000, dim: int = 16):
    """A synthetic page stream and an online clusterer's segmentation of it (labels per page).

    Pages come in streams of about 250 pages; a stream is a run of documents (geometric lengths,
    mean 4 pages). Each document has a random topic vector; each page is its topic plus Gaussian
    noise, and 4% of pages are off-topic (blank or stray pages). The online clusterer reads the pages
    in order and starts a new segment when a page's cosine similarity to the running mean of the
    current segment falls below 0.3: a leader-follower segmenter, as a page-stream model would be.

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
            if mean is None or cos < 0.3:
                seg += 1
                mean, count = x.copy(), 1
            else:
                count += 1
                mean += (x - mean) / count
            y_true.append(f"s{stream}/d{doc}")
            y_pred.append(f"s{stream}/c{seg}")
        stream += 1
    return y_true, y_pred


def cmd_demo(args) -> int:
    """``streameval demo``: stream :func:`make_demo_stream` through the metrics; table and plot.

    Cost: one O(1) update per page, and ``--points`` readings of every metric.
    """
    classes = _metric_classes(args.metrics)
    ev = _evaluator(classes)
    y_true, y_pred = make_demo_stream(args.seed, args.pages)
    n = len(y_true)
    step = max(1, n // args.points)
    xs: list = []
    trace: dict[str, list] = {name: [] for name in ev.metrics}
    bar = _progress(n, "demo", not args.no_progress)
    update, get = ev.update, ev.get
    for k in range(n):
        update(y_true[k], y_pred[k])
        if (k + 1) % step == 0 or k + 1 == n:
            bar.update(k + 1 - (xs[-1] if xs else 0))
            xs.append(k + 1)
            for name, v in get().items():
                trace[name].append(v)
    bar.close()
    table = ev.table
    _print_values(ev, args.format, f"streameval demo: {n} pages (seed {args.seed}), "
                  f"{table.k_true} true documents, {table.k_pred} predicted segments")
    if args.plot:
        try:
            bounded = {k for k, m in ev.metrics.items() if m.bounds[1] == 1.0}
            _plot(xs, trace, bounded, args.plot, f"streameval demo (seed {args.seed}, {n} pages)")
        except ImportError:
            _warn(f"no plot written: matplotlib is not installed ({EXTRA_HINT})")
        else:
            print(f"plot written to {args.plot}", file=sys.stderr if args.format == "json" else sys.stdout)
    return 0


def _plot(xs, trace, bounded, path, title) -> None:
    """Metrics along the stream: scores bounded by 1 on one panel, the others (nats) on another."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    top = {k: v for k, v in trace.items() if k in bounded}
    other = {k: v for k, v in trace.items() if k not in bounded}
    panels = [p for p in (top, other) if p]
    colors = plt.get_cmap("tab20").colors  # type: ignore[attr-defined]  # a ListedColormap
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 4.2 * len(panels)), squeeze=False)
    for ax, series in zip(axes[:, 0], panels):
        for i, (k, v) in enumerate(series.items()):
            ax.plot(xs, v, label=k, linewidth=1.2, color=colors[i % len(colors)])
        ax.set_xlabel("elements seen")
        ax.set_ylabel("score" if series is top else "value (nats)")
        ax.grid(alpha=0.3)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    axes[0, 0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
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
        source = LineSource.open(args.file)
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
CHECKPOINT_VERSION = 1


class _Watch:
    """The state of ``streameval watch``: all-time and windowed metrics, counts, input position."""

    def __init__(self, classes, window: int):
        from .window import CountWindow

        self.classes = classes
        self.all = _evaluator(classes)
        self.window = CountWindow(window, _evaluator(classes)) if window else None
        self.rows = self.skipped = self.offset = self.line = 0
        self.header = None

    def update(self, t, p, w) -> None:
        self.all.update(t, p, w)
        if self.window is not None:
            self.window.update(t, p, w)
        self.rows += 1

    def values(self) -> dict:
        out = {"rows": self.rows, "elements": self.all.table.n, "skipped": self.skipped,
               "all": self.all.get()}
        if self.window is not None:
            out["window"] = self.window.get()
        return out

    # -- checkpoint ----------------------------------------------------------------
    def to_body(self, input_desc: dict) -> dict:
        """The checkpoint's content (labels from the readers are str, int, float or bool)."""
        body = {
            "input": input_desc,
            "position": {"offset": self.offset, "line": self.line, "header": self.header},
            "rows": self.rows,
            "skipped": self.skipped,
            "table": self.all.table.to_dict(),
            "window": None,
        }
        if self.window is not None:
            body["window"] = {
                "size": self.window.size,
                "items": [list(item) for item in self.window],
                "table": self.window.evaluator.table.to_dict(),
            }
        return body

    def load_body(self, body: dict, input_desc: dict, path: str) -> None:
        """Restore from a checkpoint body; raise :class:`CLIError` on anything inconsistent."""
        from .contingency import Contingency
        from .errors import StreamevalError

        def refuse(why):
            raise CLIError(f"checkpoint {path} refused: {why}")

        if body.get("input") != input_desc:
            refuse(f"it was written for another input {body.get('input')!r}, not {input_desc!r}")
        try:
            pos = body["position"]
            offset, line, rows, skipped = pos["offset"], pos["line"], body["rows"], body["skipped"]
            header = pos["header"]
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
            if (win is None) != (self.window is None) or (
                win is not None and win.get("size") != self.window.size  # type: ignore[union-attr]
            ):
                size = 0 if win is None else win.get("size")
                refuse(f"its window size is {size}, but --window is "
                       f"{self.window.size if self.window is not None else 0}")
            if win is not None:
                for item in win["items"]:
                    t, p, w = item
                    self.window.update(t, p, w)  # type: ignore[union-attr]  # checked above
                if Contingency.from_dict(win["table"]) != self.window.evaluator.table:  # type: ignore[union-attr]
                    refuse("its window items do not add up to its window table")
        except CLIError:
            raise
        except (KeyError, TypeError, ValueError, StreamevalError) as e:
            refuse(f"malformed content ({type(e).__name__}: {e})")
        self.offset, self.line, self.rows, self.skipped, self.header = (
            offset, line, rows, skipped, header)


def save_checkpoint(path: str, body: dict) -> None:
    """Write ``{format, version, sha256, body}`` as JSON to a temporary file, then rename it over
    ``path``: a reader (or a crash) sees the old checkpoint or the new one, never half of one."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    doc = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "body": body,
    }
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, sort_keys=True, separators=(",", ":"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
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
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        raise CLIError(f"checkpoint {path} refused: not a streameval watch checkpoint "
                       f"(format {doc.get('format') if isinstance(doc, dict) else None!r})")
    if doc.get("version") != CHECKPOINT_VERSION:
        raise CLIError(f"checkpoint {path} refused: unsupported version {doc.get('version')!r}")
    body = doc.get("body")
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    if not isinstance(body, dict) or hashlib.sha256(text.encode()).hexdigest() != doc.get("sha256"):
        raise CLIError(f"checkpoint {path} refused: its checksum does not match (corrupt)")
    return body


class _Prometheus:
    """Gauges ``streameval_metric{metric, scope}``, ``streameval_rows``, ``streameval_elements``
    and ``streameval_rows_skipped`` on ``http://HOST:PORT/metrics``."""

    def __init__(self, host: str, port: int):
        try:
            from prometheus_client import CollectorRegistry, Gauge, start_http_server
        except ImportError:
            raise CLIError(f"--prometheus-port needs prometheus-client: {EXTRA_HINT}") from None
        self.registry = reg = CollectorRegistry()
        self.metric = Gauge("streameval_metric", "Current value of a clustering evaluation metric",
                            ["metric", "scope"], registry=reg)
        self.rows = Gauge("streameval_rows", "Rows read (all time)", registry=reg)
        self.elements = Gauge("streameval_elements", "Elements in the all-time table", registry=reg)
        self.skipped = Gauge("streameval_rows_skipped", "Malformed rows skipped", registry=reg)
        try:
            self.server, _ = start_http_server(port, addr=host, registry=reg)
        except OSError as e:
            raise CLIError(f"cannot serve Prometheus metrics on {host}:{port}: {e.strerror}") from None
        self.port = self.server.server_port
        _warn(f"serving Prometheus metrics on http://{host}:{self.port}/metrics")

    def publish(self, values: dict) -> None:
        for scope in ("all", "window"):
            for name, v in values.get(scope, {}).items():
                self.metric.labels(metric=name, scope=scope).set(v)
        self.rows.set(values["rows"])
        self.elements.set(values["elements"])
        self.skipped.set(values["skipped"])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _status_line(values: dict, window: int) -> str:
    parts = [f"rows {values['rows']}", f"skipped {values['skipped']}"]
    parts.append("all: " + " ".join(f"{k}={v:.4f}" for k, v in values["all"].items()))
    if "window" in values:
        parts.append(f"last {window}: " + " ".join(f"{k}={v:.4f}" for k, v in values["window"].items()))
    return " | ".join(parts)


def _json_line(values: dict, final=False) -> str:
    out = {"time": round(time.time(), 3), **values, "final": final}
    for scope in ("all", "window"):
        if scope in out:
            out[scope] = {k: _finite(v) for k, v in out[scope].items()}
    return json.dumps(out)


def cmd_watch(args) -> int:
    """``streameval watch``: a reader thread parses rows into a queue; the main thread updates the
    all-time evaluator and the window (O(1) per row), reports, publishes and checkpoints."""
    fmt = _format_or_usage(args.file, args.input_format)
    if fmt == "parquet":
        raise CLIError("watch reads text rows (csv, tsv, jsonl); use 'streameval score' for Parquet")
    if args.follow and args.file == "-":
        raise CLIError("--follow applies to files; standard input is read until it closes")
    if args.resume and not args.checkpoint:
        raise CLIError("--resume needs --checkpoint PATH")
    classes = _metric_classes(args.metrics)
    spec = _spec(args)
    input_desc = {
        "path": "<stdin>" if args.file == "-" else os.path.abspath(args.file),
        "format": fmt, "true": spec.true, "pred": spec.pred, "weight": spec.weight,
        "header": spec.header,
    }
    state = _Watch(classes, args.window)
    if args.resume and os.path.exists(args.checkpoint):
        state.load_body(load_checkpoint(args.checkpoint), input_desc, args.checkpoint)
        _warn(f"resumed from {args.checkpoint}: {state.rows} rows, line {state.line}")
    elif args.resume:
        _warn(f"no checkpoint at {args.checkpoint} yet: starting from the beginning")
    policy = _ErrorPolicy(args.on_error)
    policy.count = state.skipped

    stop = threading.Event()
    try:
        source = LineSource.open(args.file, follow=args.follow, stop=stop.is_set, poll=args.poll)
    except OSError as e:
        raise CLIError(f"cannot read {args.file}: {e.strerror}") from None
    start = (state.offset, state.line) if args.file != "-" and state.line else None
    q: queue.Queue = queue.Queue(maxsize=4096)
    END = object()

    def reader():
        raised = []

        def on_error(e):
            q.put(("error", e, source.lineno, source.offset))
            if args.on_error == "stop":
                raised.append(e)
                raise e

        try:
            for row in iter_text_rows(source, fmt, spec, on_error, start=start):
                q.put(("row", row, source.lineno, source.offset, source.header))
        except InputError as e:
            if e not in raised:  # a problem with the file as a whole (header, size)
                q.put(("fatal", e))
        except Exception as e:  # an I/O error: reported by the main thread
            q.put(("fatal", e))
        q.put(END)

    prom = None
    if args.prometheus_port is not None:
        prom = _Prometheus(args.prometheus_host, args.prometheus_port)
    jsonl = None
    if args.jsonl:
        jsonl = sys.stdout if args.jsonl == "-" else open(args.jsonl, "a", encoding="utf-8")  # noqa: SIM115

    def emit(final=False):
        values = state.values()
        if prom is not None:
            prom.publish(values)
        if jsonl is not None:
            print(_json_line(values, final), file=jsonl, flush=True)
        if jsonl is not sys.stdout and not final:
            print(_status_line(values, args.window), flush=True)
        return values

    def checkpoint():
        if args.checkpoint:
            state.skipped = policy.count
            save_checkpoint(args.checkpoint, state.to_body(input_desc))

    # Ctrl-C and SIGTERM only raise a flag, checked between rows: a row is never half counted
    # (tables, window and input position always agree, so a checkpoint is always consistent).
    interrupted = []
    signals: dict[int, str] = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
    old = {sig: signal.signal(sig, lambda signum, _: interrupted.append(signals[signum]))
           for sig in signals}
    threading.Thread(target=reader, daemon=True).start()
    now = time.monotonic()
    last_line = last_ck = last_pub = now
    rows_line, rows_ck = state.rows, state.rows
    saved_header = state.header
    error = None
    try:
        if prom is not None:
            prom.publish(state.values())
        while not interrupted:
            try:
                item = q.get(timeout=0.2)
            except queue.Empty:
                item = None
            if item is END:
                break
            if item is not None:
                kind = item[0]
                if kind == "row":
                    if saved_header is not None:  # first row after a resume
                        if item[4] != saved_header:
                            error = CLIError(f"the header of {args.file} is not the one in the "
                                             f"checkpoint ({item[4]} != {saved_header})")
                            break
                        saved_header = None
                    state.update(*item[1])
                    state.line, state.offset, state.header = item[2], item[3], item[4]
                elif kind == "error":
                    if args.on_error == "stop":
                        error = item[1]
                        break
                    policy.record(item[1])
                    state.skipped = policy.count
                    state.line, state.offset = item[2], item[3]
                else:
                    error = item[1]
                    break
            now = time.monotonic()
            new = state.rows - rows_line
            if new and (new >= args.every or (args.interval and now - last_line >= args.interval)):
                emit()
                rows_line, last_line, last_pub = state.rows, now, now
            elif prom is not None and now - last_pub >= 0.5:
                prom.publish(state.values())
                last_pub = now
            if args.checkpoint and state.rows != rows_ck and (
                now - last_ck >= args.checkpoint_every
                or (args.checkpoint_rows and state.rows - rows_ck >= args.checkpoint_rows)
            ):
                checkpoint()
                rows_ck, last_ck = state.rows, now
    finally:
        stop.set()
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if isinstance(error, CLIError):
        raise error
    if error is not None and not isinstance(error, InputError):
        raise CLIError(f"cannot read {args.file}: {error}")
    checkpoint()
    values = emit(final=True)
    if jsonl is not sys.stdout:
        why = f"interrupted ({interrupted[0]})" if interrupted else (
            "stopped at a malformed row" if error is not None else "end of input")
        print(f"streameval watch: final report, {why}: {values['rows']} rows, "
              f"{values['elements']} elements, {values['skipped']} skipped")
        cols = {k: [v] for k, v in values["all"].items()}
        header: tuple[str, ...] = ("metric", "all time")
        if "window" in values:
            header += (f"last {args.window}",)
            for k, v in values["window"].items():
                cols[k].append(v)
        print(_table(cols, header), flush=True)
    if jsonl not in (None, sys.stdout):
        jsonl.close()
    if prom is not None:
        prom.close()
    if args.checkpoint:
        _warn(f"checkpoint saved to {args.checkpoint}")
    policy.report()
    if error is not None:
        raise error
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
    p.add_argument("--metrics", nargs="+", metavar="NAME",
                   help="metric class names, or 'all' (default: every O(1) label metric)")
    p.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                   help="a malformed row stops with an error naming the file and line (default), "
                   "or is skipped, counted and reported at the end")


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
    p.add_argument("--metrics", nargs="+", metavar="NAME", help="metric class names (default: all O(1))")
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
    p.add_argument("--prometheus-port", type=int, metavar="PORT",
                   help="serve the current values on http://HOST:PORT/metrics (0: any free port)")
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

    add_compare_parser(sub)  # streameval compare GOLD SYS... --unit COL

    sub.add_parser("pss", add_help=False, help="score predicted page streams against gold ones "
                   "(see 'streameval pss --help')")
    return parser


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
