"""``streameval watch FILE|-``: rows as they arrive (``--follow`` a growing file like ``tail -f``),
all-time and windowed metrics, a line every N rows or T seconds, JSON lines, a Prometheus endpoint
(:mod:`.prometheus`), and a JSON checkpoint (:mod:`.checkpoint`, saved atomically on a schedule
and on exit) to resume from.

A reader thread parses rows into a :class:`~streameval.cli.feed.Feed` as blocks of label codes
(a whole file a block at a time, :mod:`streameval.blocks`; a followed file or a pipe as rows
arrive); the main thread takes them (O(1) per block) and reports, publishes and checkpoints; the
tables (:class:`~streameval.cli.watch_state.WatchState`) catch up then, in bulk.

>>> status_line({"rows": 12, "skipped": 0, "all": {"AdjustedRand": 0.5}}, 0, width=80)
'rows 12 | skipped 0 | all: ARI 0.5000'
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import signal
import stat
import sys
import threading
import time

from ..blocks import columnar
from ..errors import CLIError, InputError
from ..io import LineSource, RowSpec, fingerprint, iter_text_rows
from .cadence import Cadence, every_option
from .checkpoint import load_checkpoint, remove_stale_temporaries, save_checkpoint
from .feed import Feed
from .options import (
    ErrorPolicy,
    add_row_options,
    format_or_usage,
    metric_classes,
    non_negative,
    plain_float,
    port,
    prometheus_label,
    row_spec,
    seconds,
)
from .prometheus import PrometheusExporter
from .render import finite, text_table, warn
from .sample import add_sample_option
from .watch_state import WatchState

__all__ = ["cmd_watch", "add_parser", "status_line", "json_line", "WatchRun"]

GC_YOUNG = 50_000  # allocations between collections of the youngest generation during a run


_SHORT = {"AdjustedRand": "ARI", "NormalizedMutualInfo": "NMI", "AdjustedMutualInfo": "AMI",
          "VariationOfInformation": "VI", "FowlkesMallows": "FMI", "MutualInfo": "MI"}


def _short_name(name: str) -> str:
    return _SHORT.get(name, name)


def status_line(values: dict, window: int, width: int | None = None) -> str:
    """``rows N | skipped S | all/last W: ELM 0.8123/0.7990 BCubed ...`` cut to ``width``
    characters (default: the terminal's), the metrics that do not fit counted at the end. O(metrics).

    >>> status_line({"rows": 4, "skipped": 0, "all": {"Rand": 0.5}, "window": {"Rand": 1.0}}, 2, 80)
    'rows 4 | skipped 0 | all/last 2: Rand 0.5000/1.0000'
    """
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


def json_line(values: dict, final=False) -> str:
    """One JSON line of ``values`` with the wall-clock ``time`` and ``final``; NaN and infinities
    as ``null`` (:func:`~streameval.cli.render.finite`). O(size of ``values``).

    >>> import json
    >>> d = json.loads(json_line({"rows": 4, "all": {"Rand": float("nan")}}, final=True))
    >>> d["rows"], d["all"], d["final"]
    (4, {'Rand': None}, True)
    """
    out = {"time": round(time.time(), 3), **values, "final": final}
    for scope in ("all", "window"):
        if scope in out:
            out[scope] = {k: finite(v) for k, v in out[scope].items()}
    if "estimates" in out:  # watch --sample
        out["estimates"] = {k: {f: finite(v) for f, v in e.items()}
                            for k, e in out["estimates"].items()}
        out["labelled_share"] = finite(out["labelled_share"])
    return json.dumps(out)


def input_desc(args, fmt: str, spec: RowSpec) -> dict:
    return {
        "path": "<stdin>" if args.file == "-" else os.path.abspath(args.file),
        "format": fmt, "true": spec.true, "pred": spec.pred, "weight": spec.weight,
        "header": spec.header,
    }


def keep_stdin_through_shutdown() -> None:
    """Keep standard input's Python objects alive until the process ends.

    The reader thread (a daemon) may still be blocked reading standard input when ``watch -``
    ends early (its standard output closed, ``| head``; an error): it holds the lock of
    ``sys.stdin.buffer``. At interpreter shutdown, freeing ``sys.stdin`` would close that buffer,
    wait for the lock, and abort the process ("Fatal Python error: _enter_buffered_busy",
    SIGABRT). One more reference to each object means they are never freed, so never closed:
    the process then exits with its own status (the operating system closes the descriptor).
    """
    import ctypes

    for obj in (sys.stdin, getattr(sys.stdin, "buffer", None)):
        if obj is not None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def _waiting(fd: int) -> bool:
    """Whether more input is waiting in descriptor ``fd`` (a pipe): it can be read at once."""
    import select

    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def drops_for(args, classes):
    """The drop detection of ``watch``: the library's :class:`~streameval.detect.BlockDrops`
    (``None`` with ``--drop-block 0``)."""
    from ..detect import BlockDrops, make_detector

    if not args.drop_block:
        return None
    names = {c.__name__: c for c in classes}
    cls = names.get("ELM", classes[0])
    if args.drop_metric:
        (cls,) = metric_classes([args.drop_metric])[:1]
    params = {} if args.drop_run_length is None else {"run_length": args.drop_run_length}
    if params and args.drop_detector != "cusum":
        raise CLIError("--drop-run-length calibrates the cusum detector")
    try:
        keep = max(2, max(args.window, 10 * args.drop_block) // args.drop_block)
        return BlockDrops(cls(), args.drop_block, make_detector(args.drop_detector, **params),
                          keep=keep)
    except (ImportError, ValueError) as e:
        raise CLIError(f"--drop-detector {args.drop_detector}: {e}") from None


def check_fingerprint(source: LineSource, state, path: str, follow: bool = False) -> bool:
    """Whether the file holds the bytes the checkpoint consumed. If not: with ``follow`` (the file
    was rotated or truncated since, maybe while ``watch`` lagged behind the rotation or was not
    running), say so and return false (read the file from its start); else refuse."""
    fd = source.fileno()
    size = os.fstat(fd).st_size
    if state.fingerprint is None:
        why = "it was written after the file was rotated or rewritten under watch"
    elif size < state.offset:
        why = (f"{source.name} has {size} bytes, fewer than the {state.offset} already read: was "
               "it truncated or replaced?")
    elif fingerprint(fd, state.offset) != state.fingerprint:
        why = (f"the first {state.offset} bytes of {source.name} are not those it consumed "
               "(replaced, rewritten, or rotated while watch was not running?)")
    else:
        return True
    if not follow:
        raise CLIError(f"checkpoint {path} refused: {why} (with --follow, a rotated file is read "
                       "from its start)")
    warn(f"{source.name}: rotated or truncated since checkpoint {path} was written ({why}): "
         "reading it from its start; rows written to the old file after the checkpoint are not "
         "counted")
    return False


class WatchRun:
    """One run of ``streameval watch``: the reader thread, the main loop, reports, checkpoints.

    :meth:`run` is the whole run: :meth:`resume`, :meth:`open`, then the reader thread
    (:meth:`reader`) and the main :meth:`loop`, then the last checkpoint, :meth:`final_report`
    and :meth:`close`. Cost: O(1) per row in the main thread (the tables catch up at a report),
    plus each report's reading and each checkpoint's write.

    >>> import os, tempfile
    >>> from streameval.cli import build_parser
    >>> from streameval.cli.options import metric_classes, row_spec
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p\\n0,a\\n0,a\\n1,a\\n1,b\\n")
    >>> args = build_parser().parse_args(["watch", path, "--true", "t", "--pred", "p",
    ...                                   "--metrics", "Purity", "--window", "0"])
    >>> WatchRun(args, "csv", row_spec(args), metric_classes(args.metrics)).run()
    streameval watch: final report, end of input: 4 rows, 4 elements, 0 skipped
    metric    all time
    Purity    0.750000
    0
    >>> tmp.cleanup()
    """

    CHUNK = 512  # rows the reader hands over at once from a regular file
    CHUNK_BLOCK = 16384  # ... from a whole file read a block at a time

    def __init__(self, args, fmt, spec, classes):
        self.args, self.fmt, self.spec = args, fmt, spec
        self.input_desc = input_desc(args, fmt, spec)
        # what broke is kept only when something reads it: JSON lines, the Prometheus endpoint
        breakdown = bool(args.jsonl) or args.prometheus_port is not None
        self.state = WatchState(classes, args.window, drops_for(args, classes), args.top,
                                breakdown=breakdown)
        if args.sample:
            self.state.use_sample(args.sample)
        self.policy = ErrorPolicy(args.on_error)
        self.feed = Feed()
        self.stop = threading.Event()
        self.prom = self.jsonl = None
        self.fd = None  # a descriptor of the file being read, for the checkpoint's fingerprint
        self.interrupted: list = []
        self.error = None
        self.file_error = False
        self.chunk = 1  # rows per hand-over (CHUNK with a descriptor, see open)
        self.pipe: int | None = None  # the descriptor of a pipe (or terminal) being read
        self.buf: tuple = ([], [], [])  # the reader's rows not yet handed over, their positions

    # -- set-up -------------------------------------------------------------------------
    def resume(self) -> None:
        """With ``--checkpoint``: remove stale temporaries and, with ``--resume``, load the saved
        state (tables, window, position). O(size of the checkpoint)."""
        args, state = self.args, self.state
        if not args.checkpoint:
            return
        for tmp in remove_stale_temporaries(args.checkpoint):
            warn(f"removed {tmp}, left by a watch that was killed while writing a checkpoint")
        if args.resume and os.path.exists(args.checkpoint):
            state.load_body(load_checkpoint(args.checkpoint), self.input_desc, args.checkpoint)
            warn(f"resumed from {args.checkpoint}: {state.rows} rows, line {state.line}")
        elif args.resume:
            warn(f"no checkpoint at {args.checkpoint} yet: starting from the beginning")
        self.policy.count = state.skipped

    def open(self) -> None:
        """Open the input (a file, followed or not, or standard input), check a resumed file's
        fingerprint, and open the Prometheus endpoint and the JSON-lines output asked for. O(1)."""
        args, state = self.args, self.state
        self.source = LineSource.open(args.file, follow=args.follow, stop=self._stopping,
                                      poll=args.poll, max_line=args.max_line_bytes,
                                      on_notice=self._notice)
        fd = self.source.fileno()
        # a regular file is read without waiting (a followed one waits at its end, where the
        # source calls _stopping): its rows go over in chunks; a pipe's in chunks while more
        # input is waiting in it, and as they come when none is (a slow stream is never held)
        if fd is not None:
            self.chunk = self.CHUNK
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self.pipe = fd
        if args.file != "-" and fd is not None:
            if state.line and not check_fingerprint(self.source, state, args.checkpoint,
                                                    args.follow):
                state.line = state.offset = 0  # a rotated file: from its start
            self.fd = os.dup(fd)
        self.start = (state.offset, state.line) if args.file != "-" and state.line else None
        if args.prometheus_port is not None:
            self.prom = PrometheusExporter(args.prometheus_host, args.prometheus_port, dict(args.label))
        if args.jsonl:
            try:
                self.jsonl = (sys.stdout if args.jsonl == "-"
                              else open(args.jsonl, "a", encoding="utf-8"))  # noqa: SIM115
            except OSError as e:
                raise CLIError(f"--jsonl {args.jsonl}: cannot open for appending "
                               f"({e.strerror or e})") from None

    # -- the reader thread --------------------------------------------------------------
    # Items in the feed: ``(true codes, pred codes, weights or None, positions, first)`` (int64
    # arrays of the state's codes; row ``k`` of the item ends where ``positions.at(first + k)``
    # says, :class:`~streameval.blocks.Positions`, found only for the rows that need it), or
    # ``(None, kind, payload)`` for an event, in order with the rows.
    def _hand_over(self) -> None:
        """Put the rows read so far into the feed, coded (from the reader thread)."""
        from ..blocks import ArrayPositions
        from .watch_state import coded

        rows, lines, offsets = self.buf
        if rows:
            self.buf = ([], [], [])
            item = (*coded(self.state.codes, rows), ArrayPositions(lines, offsets), 0)
            self.feed.put(item, limit=max(1, Feed.LIMIT // self.chunk))

    def _stopping(self) -> bool:
        """Called by a followed source at the end of the file, before it waits: hand over."""
        self._hand_over()
        return self.stop.is_set()

    def _notice(self, message: str) -> None:
        """From the reader thread (a rotation, truncation, deletion): in order with the rows."""
        self._hand_over()
        source = self.source
        fd = source.fileno()
        self.feed.put((None, "notice", (message, source.generation,
                                        os.dup(fd) if fd is not None else None)))

    def reader(self) -> None:
        """The reader thread: parse rows (a block at a time where :func:`~streameval.blocks.columnar`
        can, else row by row), code their labels and hand them to the main thread through the feed,
        in order with errors and notices. O(bytes read)."""
        feed, source, raised, chunk, pipe = self.feed, self.source, [], self.chunk, self.pipe

        def on_error(e):
            self._hand_over()
            feed.put((None, "error", (e, source.lineno, source.offset)))
            if self.args.on_error == "stop":
                raised.append(e)
                raise e

        try:
            if columnar(source, self.fmt):
                self._read_blocks(on_error)
            else:
                rows = iter_text_rows(source, self.fmt, self.spec, on_error, start=self.start,
                                      total=self.state.elements)
                for row in rows:
                    buf = self.buf
                    buf[0].append(row)
                    buf[1].append(source.lineno)
                    buf[2].append(source.offset)
                    if len(buf[0]) >= chunk or pipe is not None and not _waiting(pipe):
                        self._hand_over()
            self._hand_over()
        except InputError as e:
            self._hand_over()
            if e not in raised:  # a problem with the file as a whole (header, size)
                feed.put((None, "fatal", e))
        except Exception as e:  # an I/O error: reported by the main thread
            self._hand_over()
            feed.put((None, "fatal", e))
        feed.put((None, "end", None))

    def _read_blocks(self, on_error) -> None:
        """A whole file (not followed) read a block at a time
        (:func:`~streameval.blocks.iter_blocks`), its blocks of codes handed over in pieces of
        :attr:`CHUNK_BLOCK` rows, with the block's positions (each row's line and the offset
        after it, found when the main thread asks)."""
        from ..blocks import iter_blocks

        step, put = self.CHUNK_BLOCK, self.feed.put
        for block in iter_blocks(self.source, self.fmt, self.spec, on_error,
                                 codes=self.state.codes, start=self.start,
                                 total=self.state.elements, positions=True):
            t, p, w, pos = block.true, block.pred, block.weight, block.positions
            for k in range(0, block.rows, step):
                cut = slice(k, k + step)
                put((t[cut], p[cut], None if w is None else w[cut], pos, k), limit=2)

    # -- the main thread ----------------------------------------------------------------
    def emit(self, final=False) -> dict:
        """Report the current values: publish them to Prometheus, write a JSON line, print the
        status line; returns the values. Cost: one reading of the tables (:meth:`WatchState.values
        <streameval.cli.watch_state.WatchState.values>`) plus the output."""
        args, state = self.args, self.state
        values = state.values()
        if self.prom is not None:
            self.prom.publish(values, state.updated)
        if self.jsonl is not None:
            try:
                print(json_line(values, final), file=self.jsonl, flush=True)
            except OSError as e:
                if self.jsonl is sys.stdout:
                    raise
                raise CLIError(f"--jsonl {self.args.jsonl}: cannot write ({e.strerror or e})") from None
        if self.jsonl is not sys.stdout and not final:
            print(status_line(values, args.window), flush=True)
        return values

    def checkpoint(self) -> None:
        """Save the state (if ``--checkpoint``). If the followed file was rotated or rewritten
        after the rows counted were read (the reader may be ahead, on the new file), the position
        is saved without a fingerprint: no file matches it, and a resume reads the file at the
        path from its start (``--follow``) or refuses. Cost: the state's size, written to a
        temporary file and renamed."""
        if self.args.checkpoint:
            state = self.state
            state.skipped = self.policy.count
            fp = fingerprint(self.fd, state.offset) if self.fd is not None else None
            if fp is not None and self.source.follow and not self.holds_what_was_read():
                fp = None
            save_checkpoint(self.args.checkpoint, state.to_body(self.input_desc, fp))

    def holds_what_was_read(self) -> bool:
        """The followed file still holds what the reader read (checked after a fingerprint is
        taken, so the fingerprint is of what was read): the reader is on the file whose rows the
        state counts, and its anchor (the last bytes read) is where it was. A file rotated or
        rewritten under the reader fails it until the main thread has taken the notice. O(length
        of the anchor): one read of its last bytes."""
        generation, pos, tail = self.source.anchor
        if generation != getattr(self, "generation", 0):
            return False
        assert self.fd is not None  # a followed file
        return os.pread(self.fd, len(tail), pos - len(tail)) == tail

    def special(self, kind: str, payload) -> bool:
        """Handle a non-row item; false when the run must end. O(1)."""
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
            warn(message)
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
        """The main thread: take rows from the feed into the tables (O(1) per row), report on the
        ``--every`` cadence or the ``--interval``, checkpoint on ``--checkpoint-every`` or
        ``--checkpoint-rows``, until the input ends, an error stops it or a signal arrives."""
        args, state, take = self.args, self.state, self.feed.take
        interval, ck_every, ck_rows = args.interval, args.checkpoint_every, args.checkpoint_rows
        cadence = Cadence(args.every)  # the rows that get a report (--every N or auto)
        cadence.start(state.rows, len(state.drops.drops) if state.drops is not None else 0)
        cadence.cells = state.cells
        now = time.monotonic()
        last_line = last_ck = last_pub = now
        rows_line = rows_ck = state.rows
        saved_header = state.header if state.line else None
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
            # rows are counted in a local until something reads the state (a report, a
            # checkpoint, an event, the end of the batch); ``due``: the next row count at which
            # the cadence looks (a report may fall due) or a checkpoint falls due
            state.header = self.source.header  # read before any row is handed over
            n = state.rows
            look = cadence.next_look
            due = look if not ck_rows else min(look, rows_ck + ck_rows)
            keep = state.take
            last = None  # the last row taken (its positions, its index), whose position the
            # state must record
            for item in batch:
                if item[0] is None:
                    state.rows = n
                    if last is not None:
                        (state.line, state.offset), last = last[0].at(last[1]), None
                    running = self.special(item[1], item[2])
                    if not running:
                        break
                    continue
                t, p, w, pos, first = item
                k, m = 0, len(t)
                while n + m - k >= due:  # the row that completes the due count is in here
                    j = k + due - n
                    keep(t[k:j], p[k:j], None if w is None else w[k:j])
                    n, k = due, j
                    state.rows = n
                    state.line, state.offset = pos.at(first + j - 1)
                    if n >= cadence.next_look:
                        if cadence.due(n, state.alarms):
                            self.emit()
                            cadence.reported(n, state.cells, state.alarms())
                            rows_line, last_line = n, time.monotonic()
                            last_pub = last_line
                        else:
                            cadence.looked()
                    if ck_rows and n - rows_ck >= ck_rows:
                        self.checkpoint()
                        rows_ck, last_ck = n, time.monotonic()
                    look = cadence.next_look
                    due = look if not ck_rows else min(look, rows_ck + ck_rows)
                if k < m:
                    if k:
                        keep(t[k:], p[k:], None if w is None else w[k:])
                    else:
                        keep(t, p, w)
                    n += m - k
                last = (pos, first + m - 1)
            state.rows = n
            if last is not None:
                state.line, state.offset = last[0].at(last[1])
                state.updated = time.time()
            state.header = self.source.header
            now = time.monotonic()
            if state.rows != rows_line and interval and now - last_line >= interval:
                self.emit()
                rows_line, last_line, last_pub = state.rows, now, now
                cadence.on_interval(state.rows)
            elif self.prom is not None and now - last_pub >= 0.5:
                self.prom.publish(state.values(), state.updated)
                last_pub = now
            if args.checkpoint and state.rows != rows_ck and now - last_ck >= ck_every:
                self.checkpoint()
                rows_ck, last_ck = state.rows, time.monotonic()  # timed from the write's end

    def final_report(self) -> None:
        """The last report: why the run ended, the counts, and the all-time and windowed values as
        a table (the estimates with ``--sample``). Cost: one reading of the tables."""
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
        if "estimates" in values:  # watch --sample
            est = values["estimates"]
            print(f"labelled share {values['labelled_share']:.4f}")
            print(text_table({k: [v, est[k]["stderr"], est[k]["low"], est[k]["high"]]
                              for k, v in values["all"].items()},
                             ("estimate", "value", "stderr", "low", "high")), flush=True)
            return
        cols = {k: [v] for k, v in values["all"].items()}
        header: tuple[str, ...] = ("metric", "all time")
        if "window" in values:
            header += (f"last {args.window}",)
            for k, v in values["window"].items():
                cols[k].append(v)
        print(text_table(cols, header), flush=True)

    def run(self) -> int:
        """The whole run (see the class); returns the exit status 0, raises the error that
        stopped it. Cost: O(1) per row in the main thread, plus the reports and checkpoints."""
        self.resume()
        self.open()
        # What exists now (modules, River's detector, the resumed tables) lives for the whole run:
        # frozen out of the garbage collector's scans, which would otherwise walk it again and
        # again as rows are allocated; and the rows that wait for a report (pending, in the feed,
        # in the window) are collected less often. Both undone when the run ends.
        thresholds = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(GC_YOUNG, *thresholds[1:])
        try:
            return self._run()
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            if self.args.file == "-":
                keep_stdin_through_shutdown()

    def _run(self) -> int:
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
        """Close the JSON-lines file, the Prometheus endpoint and the checkpoint's descriptor.
        O(1)."""
        if self.jsonl not in (None, sys.stdout):
            self.jsonl.close()
        if self.prom is not None:
            self.prom.close()
        if self.fd is not None:
            os.close(self.fd)
        if self.args.checkpoint:
            warn(f"checkpoint saved to {self.args.checkpoint}")


def cmd_watch(args) -> int:
    """``streameval watch``: a reader thread parses rows into a feed; the main thread takes them
    (O(1) per row), and reports, publishes and checkpoints (the tables catch up then).

    A finished file of four rows, a line every 2 rows and a window of the last 2 rows: after row
    2 both tables hold ``(0, a), (0, a)`` (Rand 1); at the end the window holds ``(1, a), (1, b)``,
    whose one pair is together in the truth and apart in the prediction (Rand 0), and the whole
    file has Rand ``3/6``:

    >>> import os, tempfile
    >>> from streameval.cli import main
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p\\n0,a\\n0,a\\n1,a\\n1,b\\n")
    >>> main(["watch", path, "--true", "t", "--pred", "p", "--metrics", "Rand", "--every", "2",
    ...       "--window", "2"])
    rows 2 | skipped 0 | all/last 2: Rand 1.0000/1.0000
    rows 4 | skipped 0 | all/last 2: Rand 0.5000/0.0000
    streameval watch: final report, end of input: 4 rows, 4 elements, 0 skipped
    metric    all time    last 2
    Rand      0.500000  0.000000
    0
    >>> tmp.cleanup()
    """
    fmt = format_or_usage(args.file, args.input_format)
    if fmt == "parquet":
        raise CLIError("watch reads text rows (csv, tsv, jsonl); use 'streameval score' for Parquet")
    if args.follow and args.file == "-":
        raise CLIError("--follow applies to files; standard input is read until it closes")
    if args.resume and not args.checkpoint:
        raise CLIError("--resume needs --checkpoint PATH")
    if args.format == "json":  # as the other subcommands spell it: JSON lines on standard output
        if args.jsonl not in (None, "-"):
            raise CLIError("--format json writes the JSON lines to standard output, --jsonl PATH "
                           "to a file: give one of the two")
        args.jsonl = "-"
    if args.sample:  # estimates over the whole stream: no window, no drop detection
        args.window = args.drop_block = 0
    return WatchRun(args, fmt, row_spec(args), metric_classes(args.metrics)).run()


def add_parser(sub) -> None:
    """Add ``watch`` to ``sub`` (an ``add_subparsers()`` object). O(options).

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="streameval")
    >>> add_parser(parser.add_subparsers())
    >>> args = parser.parse_args(["watch", "-", "--true", "t", "--pred", "p"])
    >>> args.func is cmd_watch, args.window, args.follow
    (True, 1000, False)
    """
    p = sub.add_parser("watch", help="follow a live stream of rows: windows, Prometheus, checkpoints",
                       description="Read rows as they arrive from a file or standard input, keep "
                       "all-time and windowed metrics, print a line every N rows or T seconds, "
                       "and on Ctrl-C or at the end print the final report.")
    add_row_options(p, follow=True)
    p.add_argument("--follow", "-f", action="store_true",
                   help="keep reading as the file grows, like tail -f (stop with Ctrl-C)")
    p.add_argument("--window", type=non_negative, default=1000, metavar="N",
                   help="also report the metrics of the last N rows (default 1000; 0: off)")
    p.add_argument("--every", type=every_option, default=None, metavar="N|auto",
                   help="print a line every N rows; auto (the default): at a multiple of 10000 "
                   "rows once 100000 rows plus 16 per cell of the table have come since the "
                   "last line, and at the first multiple of 10000 after a drop")
    p.add_argument("--interval", type=seconds, default=5.0, metavar="T",
                   help="... or every T seconds when rows arrived (default 5; 0: off)")
    p.add_argument("--jsonl", metavar="PATH",
                   help="append each report as a JSON line to PATH ('-': standard output instead "
                   "of text lines)")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="standard output: text lines and the final table (default), or JSON "
                   "lines, one per report, the last one final (the same as --jsonl -)")
    p.add_argument("--prometheus-port", type=port, metavar="PORT",
                   help="serve the current values on http://HOST:PORT/metrics (0: any free port)")
    p.add_argument("--label", type=prometheus_label, action="append", default=[], metavar="KEY=VALUE",
                   help="a label on every Prometheus series, to tell watchers apart (repeatable)")
    p.add_argument("--drop-block", type=non_negative, default=100, metavar="N",
                   help="flag drops of the watched metric over blocks of N rows, as "
                   "streameval.Monitor does (default 100; 0: off)")
    p.add_argument("--drop-detector", choices=("cusum", "adwin", "page-hinkley"), default="cusum",
                   help="the sequential detector fed the block values (default cusum, calibrated "
                   "on the first 40 blocks; adwin and page-hinkley: River's)")
    p.add_argument("--drop-run-length", type=plain_float, metavar="N",
                   help="the cusum's expected rows between false alarms (default 1e8)")
    p.add_argument("--top", type=non_negative, default=5, metavar="K",
                   help="how many split entities and merging clusters to report (default 5)")
    p.add_argument("--drop-metric", metavar="NAME",
                   help="the metric whose drops are flagged (default ELM, else the first one)")
    p.add_argument("--prometheus-host", default="127.0.0.1", metavar="HOST",
                   help="address the Prometheus endpoint binds to (default 127.0.0.1)")
    p.add_argument("--checkpoint", metavar="PATH",
                   help="save the state to PATH (JSON, written atomically) on a schedule and on exit")
    p.add_argument("--checkpoint-every", type=seconds, default=30.0, metavar="T",
                   help="seconds between checkpoints (default 30)")
    p.add_argument("--checkpoint-rows", type=non_negative, default=0, metavar="N",
                   help="also checkpoint every N rows (default 0: off)")
    p.add_argument("--resume", action="store_true",
                   help="start from the --checkpoint file when it exists (and continue in the file "
                   "where it stopped)")
    add_sample_option(p)  # watch --sample DESIGN (all-time estimates; no window, no drops)
    p.add_argument("--poll", type=float, default=0.1, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_watch)
