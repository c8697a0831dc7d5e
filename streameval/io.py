"""The file readers: (true label, predicted label, weight) rows from CSV, TSV, JSON lines or
Parquet files, validated row by row, and page-stream files (:func:`load_streams`).

Every problem is reported as an :class:`InputError` that names the file, the line (the row for
Parquet) and the problem. A caller passes ``on_error``: a function of the error that either raises it
(stop at the first bad row) or records it and returns (skip the row). Text is read as bytes and
decoded line by line, so undecodable text is pinned to its line too.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "rows.csv")
>>> with open(path, "w") as f:
...     _ = f.write("truth,guess,w\\na,x,1\\na,x,2\\nb,,1\\n")
>>> spec = RowSpec("truth", "guess", "w")
>>> rows = read_rows(path, spec, on_error=raise_error)
>>> next(rows), next(rows)
(('a', 'x', 1), ('a', 'x', 2))
>>> next(rows)
Traceback (most recent call last):
...
streameval.errors.InputError: ...rows.csv, line 4: missing predicted label (column 'guess' is empty)

Cost: O(1) per row (plus the row's length).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._validate import MAX_TOTAL as _TABLE_BOUND
from .errors import InputError, PageStreamError, install_hint

__all__ = [
    "InputError",
    "RowSpec",
    "LineSource",
    "FORMATS",
    "detect_format",
    "read_rows",
    "iter_text_rows",
    "CsvLayout",
    "csv_layout",
    "csv_rows",
    "iter_parquet_rows",
    "raise_error",
    "load_json",
    "load_csv",
    "load_streams",
    "page_flag",
    "fingerprint",
    "MAX_LINE",
    "MAX_TOTAL",
]

FORMATS = ("csv", "tsv", "jsonl", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def raise_error(error: InputError) -> None:
    """The ``on_error`` policy that stops at the first bad row: raise it. O(1).

    >>> raise_error(InputError("rows.csv", 3, "missing predicted label"))
    Traceback (most recent call last):
    ...
    streameval.errors.InputError: rows.csv, line 3: missing predicted label
    """
    raise error


@dataclass(frozen=True)
class RowSpec:
    """Which columns hold the true label, the predicted label and (optionally) the weight.

    Columns are names (header names, JSON keys, Parquet columns), or 1-based positions for text
    files read with ``header=False``. ``vector``: the columns of a feature vector, either several
    numeric columns or one column holding the whole vector (a JSON or Parquet list, or numbers
    separated by spaces in CSV/TSV); rows then carry a fourth item, the vector as a tuple of floats,
    of one dimension per file (the first row's). A frozen record: O(1).

    >>> spec = RowSpec("t", "p", "w")
    >>> spec.true, spec.pred, spec.weight, spec.header, spec.vector
    ('t', 'p', 'w', True, ())
    """

    true: str
    pred: str
    weight: str | None = None
    header: bool = True
    vector: tuple = ()
    truth_optional: bool = False
    """An empty (or null, NaN) true label is read as ``None`` (an unlabelled row of a labelled
    sample) instead of a bad row."""


def detect_format(path: str, fmt: str | None = None) -> str:
    """``fmt`` if given, else the format named by the file's extension (standard input: CSV). O(1).

    >>> detect_format("runs/day1.tsv"), detect_format("x.parquet"), detect_format("-", "jsonl")
    ('tsv', 'parquet', 'jsonl')
    """
    if fmt:
        if fmt not in FORMATS:
            raise ValueError(f"unknown input format {fmt!r}; choose from {', '.join(FORMATS)}")
        return fmt
    if path == "-":
        return "csv"
    ext = os.path.splitext(str(path))[1].lower()
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    raise ValueError(
        f"cannot tell the format of {path!r} from its name; pass --input-format "
        f"({', '.join(FORMATS)})"
    )


MAX_LINE = 1 << 20
"""Default cap on the length of one line (bytes, newline included): 1 MiB."""

MAX_TOTAL = _TABLE_BOUND - 1
"""The largest total weight a table may reach (``2**57 - 1``, the bound of the table's exact
128-bit sums): a weight that would take the total to 2**57 is a bad row."""

_BOM = codecs.BOM_UTF8
_BLOCK = 65536  # bytes hashed at each end of the consumed input by fingerprint()
_FOLLOW_BLOCK = 1 << 16  # bytes read at once from a followed file

ANCHOR = 4096
"""Bytes of a followed file checked before each read (the last ones read): if they moved, the file
was rewritten (copytruncate) and is read again from its start."""


def fingerprint(fd: int, offset: int) -> dict:
    """A fingerprint of the first ``offset`` bytes of the open file ``fd``: the byte count and the
    SHA-256 of its first and of its last 64 KiB (``os.pread``: the file position is left alone).

    Two files that agree on it hold the same head and the same bytes just before ``offset``: the
    input a checkpoint was written for, possibly grown since, and not a replacement or a file
    rotated while nobody watched. O(1) (at most 128 KiB read).

    >>> import tempfile
    >>> with tempfile.TemporaryFile() as f:
    ...     _ = f.write(b"t,p\\na,x\\n")
    ...     f.flush()
    ...     fingerprint(f.fileno(), 4) == fingerprint(f.fileno(), 4), fingerprint(f.fileno(), 4)["bytes"]
    (True, 4)
    """
    head = os.pread(fd, min(offset, _BLOCK), 0)
    tail_start = max(0, offset - _BLOCK)
    tail = os.pread(fd, offset - tail_start, tail_start)
    return {"bytes": offset, "head": hashlib.sha256(head).hexdigest(),
            "tail": hashlib.sha256(tail).hexdigest()}


class LineSource:
    """Decoded lines of a file or of standard input, with the position after the last line read.

    ``lineno`` is the number of the last line handed out (1-based) and ``offset`` the byte offset
    just after it, so a reader can resume exactly there (:meth:`open` with ``offset`` and
    ``lineno``). A UTF-8 byte-order mark at the start of a file is dropped (its bytes still count
    in ``offset``). A line longer than ``max_line`` bytes is an :class:`InputError` naming it: the
    memory a source holds stays bounded whatever the input (``/dev/zero`` included).

    With ``follow=True`` the source waits for more lines at the end of the file, like
    ``tail -F``, until ``stop()`` returns true; an unterminated last line is held back until its
    newline arrives (or until the source stops). It looks for a rotation:

    - truncated (copytruncate): every read (each wake from a poll included) starts with the last
      :data:`ANCHOR` bytes already read; if they are no longer there (the file is smaller, or was
      rewritten, even past the old end), nothing of the read is used and the file is read again
      from its start;
    - replaced (another inode at the path: rename-and-create), checked at the end of the file: it
      reads what the old file still holds, then follows the new file from its start;
    - deleted: it says so and waits for a file to appear at the path.

    ``anchor`` is ``(generation, bytes read, the last of them)``, replaced as one value after each
    read, so another thread can check that the file still holds what was read.

    Each event is described to ``on_notice`` (a function of a message; default: ignored) and counted
    in ``generation``; the new file's lines are numbered from 1 and ``offset`` starts again at 0.
    Undecodable lines go to ``on_error`` (an :class:`InputError`); if it returns, the line is
    dropped. Cost: O(bytes) to read; a followed file adds one stat of the path per poll at its
    end.

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p\\na,x\\nb,y\\n")
    >>> source = LineSource.open(path)
    >>> list(source), source.lineno, source.offset
    (['t,p\\n', 'a,x\\n', 'b,y\\n'], 3, 12)
    >>> source.close()
    >>> source = LineSource.open(path); source.seek(4, 1)     # resume after line 1 (4 bytes)
    >>> list(source), source.lineno
    (['a,x\\n', 'b,y\\n'], 3)
    >>> source.close(); tmp.cleanup()
    """

    def __init__(self, stream, name: str, *, follow=False, poll=0.1, stop=None, offset=0, lineno=0,
                 max_line=MAX_LINE, on_notice=None, path=None):
        self.stream, self.name, self.path = stream, name, path
        self.follow, self.poll, self.stop = follow, poll, stop or (lambda: False)
        self.offset, self.lineno = offset, lineno
        self.max_line = max_line
        self.on_error = raise_error
        self.on_notice = on_notice or (lambda message: None)
        self.header: list[str] | None = None  # the CSV/TSV header, once read
        self.generation = 0  # files followed after the first (rotations, truncations)
        self._decode = codecs.getdecoder("utf-8")
        self._pos = offset  # followed: bytes read from the file (the lines handed out, the pending)
        self._tail = b""  # followed: the last bytes read (up to ANCHOR), ending at _pos
        self.anchor: tuple = (0, offset, b"")  # (generation, _pos, _tail), as one value
        self._lines = None  # the generator of decoded lines (see __iter__)
        self._gone = False
        self._switch = False

    @classmethod
    def open(cls, path: str, **kw) -> LineSource:
        """A source over ``path`` (``"-"``: standard input); :class:`InputError` if it cannot be
        opened (a missing file, standard input closed). O(1)."""
        if path == "-":
            stdin = sys.stdin
            try:
                if stdin is None:
                    raise OSError
                os.fstat(stdin.fileno())
                stream = stdin.buffer
            except (OSError, ValueError, AttributeError):
                raise InputError("<stdin>", None, "standard input is closed") from None
            return cls(stream, "<stdin>", **kw)
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as e:
            raise InputError(path, None, e.strerror or str(e)) from None
        return cls(stream, path, path=path, **kw)

    def fileno(self):
        """The file descriptor being read, or ``None`` for a stream without one. O(1)."""
        try:
            return self.stream.fileno()
        except (OSError, ValueError, AttributeError):
            return None

    def seek(self, offset: int, lineno: int) -> None:
        """Continue after byte ``offset``, which ends line ``lineno`` (a resumed read). O(1) (one
        seek)."""
        size = os.fstat(self.stream.fileno()).st_size
        if size < offset:
            raise InputError(
                self.name, None, f"the file has {size} bytes, fewer than the {offset} already "
                "read: was it truncated or replaced?"
            )
        self.stream.seek(offset)
        self._lines = None  # lines read ahead are dropped
        self.offset, self.lineno, self._pos = offset, lineno, offset
        start = max(0, offset - ANCHOR)
        self._tail = os.pread(self.stream.fileno(), offset - start, start)
        self.anchor = (self.generation, offset, self._tail)

    def close(self) -> None:
        """Close the file (standard input is left open for the process). O(1)."""
        if self.stream is not getattr(sys.stdin, "buffer", None):
            self.stream.close()

    @contextlib.contextmanager
    def reading(self, stream):
        """Within the block, read ``stream`` (the source's next bytes, already read elsewhere) in
        place of the file, counting lines and offsets on; then go back to the file. O(1) to
        enter and leave."""
        saved, self.stream, self._lines = self.stream, stream, None
        try:
            yield self
        finally:
            self.stream, self._lines = saved, None

    def __enter__(self) -> LineSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading -------------------------------------------------------------------
    def _overlong(self, head: bytes):
        """Report the line starting with ``head`` (over ``max_line`` bytes); if the policy skips
        it, read past its newline. Returns the bytes consumed (without holding them)."""
        self.lineno += 1
        self.on_error(InputError(
            self.name, self.lineno,
            f"line longer than {self.max_line} bytes (no newline within it): not a row "
            "(--max-line-bytes raises the cap)"))
        consumed = len(head)
        readline = self.stream.readline
        while True:
            chunk = readline(self.max_line)
            consumed += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                return consumed

    def _raw_lines(self):
        if self.follow:
            yield from self._followed_lines()
            return
        readline, limit = self.stream.readline, self.max_line
        while True:
            raw = readline(limit)
            if not raw:
                return
            if len(raw) == limit and not raw.endswith(b"\n"):
                self.offset += self._overlong(raw)
                continue
            yield raw

    # -- following ------------------------------------------------------------------
    # A followed file is read with os.pread from the position reached, each read starting with
    # the anchor (the last bytes read, up to ANCHOR): if they are not there any more, the file was
    # rewritten under the reader (copytruncate, maybe regrown past the old end before this read)
    # and it is read again from its start. The check and the new bytes come in one read, so no
    # byte of a rewritten file is taken for the continuation of the old one.
    def _anchored_read(self) -> bytes | None:
        """The bytes after the position reached (``b""`` at the end), or ``None`` if the anchor
        is gone (the file was rewritten: the source has restarted at its start)."""
        fd, pos, tail = self.stream.fileno(), self._pos, self._tail
        data = os.pread(fd, len(tail) + _FOLLOW_BLOCK, pos - len(tail))
        if not data.startswith(tail):
            size = os.fstat(fd).st_size
            self._restart()  # before the notice: it reports the new generation
            self._notice(f"truncated (the last bytes read, before byte {pos}, are no longer there; "
                         f"it holds {size} bytes): reading it again from its start")
            return None
        new = data[len(tail):]
        if new:
            self._pos = pos + len(new)
            self._tail = (tail + new)[-ANCHOR:] if len(new) < ANCHOR else new[-ANCHOR:]
            self.anchor = (self.generation, self._pos, self._tail)
        return new

    def _followed_lines(self):
        limit = self.max_line
        pending = b""  # an unterminated line (its newline has not arrived)
        skipping = False  # inside an overlong line, reported: its bytes are dropped
        while True:
            data = self._anchored_read()
            if data is None:
                pending, skipping = b"", False
                continue
            if data:
                if skipping:
                    end = data.find(b"\n")
                    if end < 0:
                        self.offset += len(data)
                        continue
                    self.offset += end + 1
                    data, skipping = data[end + 1:], False
                pending += data
                lines = pending.split(b"\n")
                pending = lines.pop()
                for line in lines:
                    raw = line + b"\n"
                    if len(raw) > limit:
                        self.offset += self._overlong_line(len(raw))
                        continue
                    yield raw
                if len(pending) >= limit:
                    self.offset += self._overlong_line(len(pending))
                    pending, skipping = b"", True
                continue
            if self.stop():
                break
            if self._switch:  # the old file is drained: the rest of it was read above
                if pending and not skipping:
                    yield pending
                pending, skipping = b"", False
                self._open_new()
                continue
            if not self._replaced():
                time.sleep(self.poll)
        if pending and not skipping:
            yield pending

    def _overlong_line(self, size: int) -> int:
        """Report an overlong line of a followed file (``size`` bytes seen); its bytes."""
        self.lineno += 1
        self.on_error(InputError(
            self.name, self.lineno,
            f"line longer than {self.max_line} bytes (no newline within it): not a row "
            "(--max-line-bytes raises the cap)"))
        return size

    def _notice(self, message: str) -> None:
        self.on_notice(f"{self.name}: {message}")

    def _replaced(self) -> bool:
        """At the end of the file: is another file at the path (then read the rest of this one
        and switch), or none (say so once)?"""
        if self.path is None:
            return False
        try:
            st = os.stat(self.path)
        except OSError:
            if not self._gone:
                self._gone = True
                self._notice("deleted (or moved away): waiting for a file to appear at this path")
            return False
        mine = os.fstat(self.stream.fileno())
        if (st.st_ino, st.st_dev) != (mine.st_ino, mine.st_dev):
            self._switch = True  # read what the old file still holds, then switch
            return True
        return False

    def _open_new(self) -> None:
        self._switch = False
        try:
            stream = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        except OSError:  # gone again between the stat and the open: wait for it
            return
        self.stream.close()
        self.stream = stream
        message = ("appeared again: following the new file from its start" if self._gone
                   else "replaced (rotated): following the new file from its start")
        self._restart()  # before the notice: it reports the new generation
        self._notice(message)

    def _restart(self) -> None:
        self._gone = False
        self.offset = self.lineno = self._pos = 0
        self._tail = b""
        self.generation += 1
        self.anchor = (self.generation, 0, b"")

    def __iter__(self):
        """The lines, from one generator per position: the header's reader and the rows' share it
        (a followed source reads ahead in blocks); :meth:`seek` starts another."""
        if self._lines is None:
            self._lines = self._decoded_lines()
        return self._lines

    def _decoded_lines(self):
        decode, name = self._decode, self.name
        for raw in self._raw_lines():
            start = self.offset
            self.lineno += 1
            self.offset += len(raw)
            try:
                if start == 0 and raw.startswith(_BOM):
                    yield decode(raw[3:])[0]
                else:
                    yield decode(raw)[0]
            except UnicodeDecodeError as e:
                col = e.start + (3 if start == 0 and raw.startswith(_BOM) else 0)
                self.on_error(
                    InputError(
                        name, self.lineno,
                        f"undecodable text: not UTF-8 (byte 0x{raw[col]:02x} at column "
                        f"{col + 1})",
                    )
                )


def _label(value, column: str, what: str, err):
    """A label from a CSV field (str) or a JSON value; ``err(problem)`` builds the error."""
    if value is None or value == "":
        raise err(f"missing {what} label (column {column!r} is empty)")
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            raise err(f"missing {what} label (column {column!r} is NaN)")
        return value
    raise err(
        f"{what} label in column {column!r} must be a string, number or boolean, "
        f"got {type(value).__name__}: {str(value)[:60]}"
    )


def _weight(value, column: str, err, text: bool = True) -> int:
    """A positive integer multiplicity from a CSV/TSV field (text) or a JSON/Parquet value, by the
    one weight rule every reader follows (the block readers of :mod:`streameval.blocks` take a
    block only when each of its weights passes it, else read the block row by row through this):

    - text: an ASCII decimal integer literal, the digits ``0``-``9`` only (leading zeros allowed;
      no sign, space, decimal point, exponent, digit separator or non-ASCII digit);
    - a typed value (JSON lines, Parquet): an integer (JSON ``2``; not ``2.0``, ``"2"`` or
      ``true``);

    from 1 to 2**57 - 1. ``text``: ``value`` is a CSV/TSV field, else a typed value. Anything
    else is refused (``err(problem)``), naming the value. O(length of the field).

    >>> _weight("007", "w", ValueError), _weight(3, "w", ValueError, text=False)
    (7, 3)
    >>> for bad, text in [("1_000", True), ("+2", True), (" 2", True), ("2.0", True),
    ...                   ("\u0662", True), (2.0, False), ("2", False), (True, False)]:
    ...     try:
    ...         _weight(bad, "w", ValueError, text)
    ...     except ValueError as e:
    ...         print(str(e).split(" in column")[0])
    bad weight '1_000'
    bad weight '+2'
    bad weight ' 2'
    bad weight '2.0'
    bad weight '٢'
    bad weight '2.0'
    bad weight '"2"'
    bad weight 'true'
    """
    if text:
        if value.isascii() and value.isdigit():
            digits = value.lstrip("0")
            if len(digits) <= _WEIGHT_DIGITS:  # (more digits: too large, not parsed)
                w = int(digits or "0")
                if 0 < w <= MAX_TOTAL:
                    return w
            why = _weight_problem(len(digits) > _WEIGHT_DIGITS or int(digits or "0") > 0)
        elif value[:1] == "-" and value[1:].isascii() and value[1:].isdigit():
            why = _weight_problem(False)  # a negative integer (or -0)
        else:
            why = ("must be a positive integer multiplicity written in plain ASCII digits "
                   "(no sign, space, decimal point, exponent or digit separator)")
        raise err(f"bad weight {value[:60]!r} in column {column!r}: {why}")
    if value.__class__ is int:
        if 0 < value <= MAX_TOTAL:
            return value
        why = _weight_problem(value > 0)
    else:
        kind = {bool: "a boolean", float: "a float", str: "a string"}.get(
            type(value), f"a {type(value).__name__}")
        why = f"must be a positive integer multiplicity given as an integer, not {kind}"
    shown = json.dumps(value, default=str, allow_nan=True)
    raise err(f"bad weight {shown[:60]!r} in column {column!r}: {why}")


_WEIGHT_DIGITS = len(str(MAX_TOTAL))  # a weight's digits at most (leading zeros aside)


def _weight_problem(too_large: bool) -> str:
    return ("too large (a table's total weight must stay below 2**57)" if too_large
            else "must be a positive integer multiplicity")


def _add_total(total: int, w: int, err) -> int:
    """``total + w``, or the error of a row whose weight takes the total to 2**57."""
    total += w
    if total > MAX_TOTAL:
        raise err(f"weight {w} takes the total weight to {total}, over 2**57 - 1: "
                  "the table's counts could not be held")
    return total


class _Vectors:
    """Feature vectors of one file: finite floats, one dimension (the first row's)."""

    def __init__(self, columns):
        self.columns, self.dim = tuple(columns), None

    def parse(self, values: list | tuple, err) -> tuple:
        """A vector from the raw values of the vector columns."""
        cols = self.columns
        if len(cols) == 1:
            v = values[0]
            if isinstance(v, str):
                values = v.split()
            elif isinstance(v, (list, tuple)):
                values = v
        out = []
        for v in values:
            try:
                if isinstance(v, bool) or v is None or isinstance(v, (list, dict)):
                    raise ValueError
                x = float(v)
            except (TypeError, ValueError):
                x = math.nan
            if not math.isfinite(x):
                raise err(f"vector component {str(v)[:30]!r} in column "
                          f"{', '.join(map(repr, cols))} is not a finite number")
            out.append(x)
        if self.dim is None:
            if not out:
                raise err(f"empty vector in column {cols[0]!r}")
            self.dim = len(out)
        elif len(out) != self.dim:
            raise err(f"vector of the wrong size: {len(out)} values, expected {self.dim} "
                      "(the first row's)")
        return tuple(out)


def _column_index(header: list, column: str, name: str, spec_header: bool) -> int:
    if spec_header:
        try:
            at = header.index(column)
        except ValueError:
            shown = ", ".join(repr(h) for h in header[:20])
            raise InputError(name, 1, f"no column {column!r} in the header ({shown})") from None
        times = header.count(column)
        if times > 1:  # which of them was meant cannot be known: never pick one silently
            raise InputError(name, 1, f"column {column!r} appears {times} times in the header: "
                             "rename the copies so that each column read has one name")
        return at
    try:
        k = int(column)
    except ValueError:
        k = 0
    if k < 1:
        raise InputError(name, None, f"without a header, columns are 1-based numbers, got {column!r}")
    return k - 1


@dataclass
class CsvLayout:
    """Where the columns of a CSV/TSV file are: the header (``None`` without one), its field
    count, the 0-based indices of the true, predicted, weight and vector columns, and the
    fewest fields a row needs. A record: O(1); :func:`csv_layout` reads one from a header.

    >>> CsvLayout(",", ["t", "p"], 2, 0, 1, None, [], 2).need
    2
    """

    delimiter: str
    header: list | None
    ncols: int | None
    true: int
    pred: int
    weight: int | None
    vector: list
    need: int


def csv_layout(source: LineSource, fmt: str, spec: RowSpec) -> CsvLayout:
    """Read the header of a CSV/TSV :class:`LineSource` (if ``spec.header``) and find the columns;
    :class:`InputError` if the header is unreadable or lacks a column. O(length of the header).

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("p,t,w\\nx,a,2\\n")
    >>> layout = csv_layout(LineSource.open(path), "csv", RowSpec("t", "p", "w"))
    >>> layout.header, layout.true, layout.pred, layout.weight, layout.need
    (['p', 't', 'w'], 1, 0, 2, 3)
    >>> csv_layout(LineSource.open(path), "csv", RowSpec("t", "q"))
    Traceback (most recent call last):
    ...
    streameval.errors.InputError: ...rows.csv, line 1: no column 'q' in the header ('p', 't', 'w')
    >>> tmp.cleanup()
    """
    name = source.name
    header = None
    if spec.header:
        on_error, source.on_error = source.on_error, raise_error  # the header cannot be skipped
        try:
            header = next(csv.reader(iter(source), delimiter=_DELIMITERS[fmt]), None)
        except csv.Error as e:
            raise InputError(name, source.lineno, f"unreadable header: {e}") from None
        finally:
            source.on_error = on_error
        if header is None:
            raise InputError(name, None, "the file is empty (no header line)")
        source.header = header
    names = header or []
    it = _column_index(names, spec.true, name, spec.header)
    ip = _column_index(names, spec.pred, name, spec.header)
    iw = None if spec.weight is None else _column_index(names, spec.weight, name, spec.header)
    ivs = [_column_index(names, c, name, spec.header) for c in spec.vector]
    need = max(k for k in (it, ip, iw, *ivs) if k is not None) + 1
    return CsvLayout(_DELIMITERS[fmt], header, None if header is None else len(header), it, ip,
                     iw, ivs, need)


_DELIMITERS = {"csv": ",", "tsv": "\t"}


def iter_text_rows(source: LineSource, fmt: str, spec: RowSpec, on_error=raise_error, start=None,
                   total: int = 0):
    """Yield ``(y_true, y_pred, w)`` from a CSV, TSV or JSON-lines :class:`LineSource`.

    After each row, ``source.lineno`` / ``source.offset`` point just past it. A bad row goes to
    ``on_error`` (which raises to stop, or returns to skip it). Blank lines are ignored. CSV/TSV
    fields are labels as text; an empty field is a missing label. ``start=(offset, lineno)`` resumes
    a file after that position (the header, if any, is read first from the top of the file).
    ``total``: the weight already counted (a resumed run); a row that would take the total weight
    over 2**57 - 1 is a bad row. A followed file that starts again (rotated, truncated) may repeat
    its header line: that line is skipped. O(bytes read).

    Resumed after line 2 (byte 12: the header and the first row are 6 bytes each), only the
    last row comes, and the source then stands after line 3, byte 18:

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p,w\\na,x,2\\nb,x,1\\n")
    >>> source = LineSource.open(path)
    >>> list(iter_text_rows(source, "csv", RowSpec("t", "p", "w"), start=(12, 2)))
    [('b', 'x', 1)]
    >>> source.lineno, source.offset
    (3, 18)
    >>> source.close(); tmp.cleanup()
    """
    source.on_error = on_error
    if fmt == "jsonl":
        if start:
            source.seek(*start)
        return (yield from _jsonl_rows(source, spec, on_error, total))
    layout = csv_layout(source, fmt, spec)
    if start:
        source.seek(*start)
    return (yield from csv_rows(source, layout, spec, on_error, total))


def csv_rows(source: LineSource, layout: CsvLayout, spec: RowSpec, on_error=raise_error,
             total: int = 0):
    """Yield the validated rows of a CSV/TSV :class:`LineSource` positioned after its header (as
    :func:`iter_text_rows`); returns the total weight reached (``total`` plus the rows').
    O(bytes read).

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p,w\\na,x,2\\nb,x,1\\n")
    >>> source, spec = LineSource.open(path), RowSpec("t", "p", "w")
    >>> list(csv_rows(source, csv_layout(source, "csv", spec), spec))
    [('a', 'x', 2), ('b', 'x', 1)]
    >>> source.close(); tmp.cleanup()
    """
    name = source.name
    source.on_error = on_error
    reader = csv.reader(iter(source), delimiter=layout.delimiter)
    header, ncols, need = layout.header, layout.ncols, layout.need
    it, ip, iw, ivs = layout.true, layout.pred, layout.weight, layout.vector
    vectors = _Vectors(spec.vector) if ivs else None
    tname, pname, wname = (spec.true, spec.pred, spec.weight)

    def err(problem):
        return InputError(name, source.lineno, problem)

    generation = source.generation
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return total
        except csv.Error as e:
            on_error(err(f"unreadable CSV: {e}"))
            continue
        if not row:
            continue
        if source.generation != generation:  # a new file (rotation): maybe its header again
            generation = source.generation
            if row == header:
                continue
        try:
            if ncols is not None:
                if len(row) != ncols:
                    raise err(f"expected {ncols} fields as in the header, got {len(row)}")
            elif len(row) < need:
                raise err(f"expected at least {need} fields, got {len(row)}")
            t: str | None = row[it]
            p = row[ip]
            if not t:
                if not spec.truth_optional:
                    raise err(f"missing true label (column {tname!r} is empty)")
                t = None
            if not p:
                raise err(f"missing predicted label (column {pname!r} is empty)")
            w = 1 if iw is None or wname is None else _weight(row[iw], wname, err)
            if vectors is not None:
                x = vectors.parse([row[k] for k in ivs], err)
            if iw is not None:
                total = _add_total(total, w, err)
            else:
                total += 1
        except InputError as e:
            on_error(e)
            continue
        yield (t, p, w) if vectors is None else (t, p, w, x)


def _typed_row(t, p, w, x, spec: RowSpec, vectors, err) -> tuple:
    """A row from typed values (JSON, Parquet): labels, weight (``None``: missing), vector values."""
    if spec.truth_optional and (t is None or t == "" or (isinstance(t, float) and t != t)):
        t = None
    else:
        t = _label(t, spec.true, "true", err)
    p = _label(p, spec.pred, "predicted", err)
    if spec.weight is None:
        w = 1
    elif w is None:
        raise err(f"missing weight (column {spec.weight!r} is null or absent)")
    else:
        w = _weight(w, spec.weight, err, text=False)
    return (t, p, w) if vectors is None else (t, p, w, vectors.parse(x, err))


def _jsonl_rows(source: LineSource, spec: RowSpec, on_error, total=0):
    name = source.name
    tname, pname, wname = spec.true, spec.pred, spec.weight
    vectors = _Vectors(spec.vector) if spec.vector else None

    def err(problem):
        return InputError(name, source.lineno, problem)

    for line in source:
        if not line.strip():
            continue
        try:
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError) as e:
                raise err(f"not valid JSON: {e}") from None
            if not isinstance(obj, dict):
                raise err(f"expected a JSON object per line, got {type(obj).__name__}")
            row = _typed_row(obj.get(tname), obj.get(pname), obj.get(wname) if wname else None,
                             [obj.get(c) for c in spec.vector], spec, vectors, err)
            total = _add_total(total, row[2], err)
        except InputError as e:
            on_error(e)
            continue
        yield row
    return total


def iter_parquet_rows(path: str, spec: RowSpec, on_error=raise_error, batch_size=65536):
    """Yield ``(y_true, y_pred, w)`` from a Parquet file (needs pyarrow; rows are numbered 1, 2, ...).
    O(rows), read ``batch_size`` rows at a time.

    >>> import os, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.parquet")
    >>> pq.write_table(pa.table({"t": ["a", "b"], "p": ["x", "x"]}), path)
    >>> list(iter_parquet_rows(path, RowSpec("t", "p")))
    [('a', 'x', 1), ('b', 'x', 1)]
    >>> tmp.cleanup()
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            path, None, "reading Parquet needs pyarrow: " + install_hint("cli")
        ) from None
    try:
        f = pq.ParquetFile(path)
    except OSError as e:
        if e.errno is not None:  # missing, a directory, no permission: no raw "[Errno 2]"
            raise InputError(path, None, e.strerror or str(e)) from None
        raise InputError(path, None, f"not a readable Parquet file: {e}") from None
    except pa.ArrowException as e:  # not Parquet
        raise InputError(path, None, f"not a readable Parquet file: {e}") from None
    columns = [c for c in (spec.true, spec.pred, spec.weight, *spec.vector) if c is not None]
    columns = list(dict.fromkeys(columns))
    vectors = _Vectors(spec.vector) if spec.vector else None
    names = f.schema_arrow.names
    for c in columns:
        if c not in names:
            raise InputError(path, None, f"no column {c!r} in the file (columns: {', '.join(names)})")
    row = total = 0

    def err(problem):
        return InputError(path, row, problem, unit="row")

    try:
        batches = f.iter_batches(batch_size=batch_size, columns=columns)
        for batch in batches:
            ts = batch.column(spec.true).to_pylist()
            ps = batch.column(spec.pred).to_pylist()
            ws = batch.column(spec.weight).to_pylist() if spec.weight else None
            xs = [batch.column(c).to_pylist() for c in spec.vector]
            for k in range(len(ts)):
                row += 1
                try:
                    item = _typed_row(ts[k], ps[k], ws[k] if ws else None, [c[k] for c in xs],
                                      spec, vectors, err)
                    total = _add_total(total, item[2], err)
                except InputError as e:
                    on_error(e)
                    continue
                yield item
    except (pa.ArrowException, OSError) as e:  # a corrupt page deep in the file
        raise InputError(path, row + 1, f"unreadable Parquet data: {e}", unit="row") from None


def read_rows(path: str, spec: RowSpec, fmt: str | None = None, on_error=raise_error):
    """Yield the validated ``(y_true, y_pred, w)`` rows of a whole file (``"-"``: standard input);
    ``(y_true, y_pred, w, vector)`` when ``spec.vector`` names vector columns. O(bytes read).

    A row with an empty predicted label goes to ``on_error``: here a list, so it is skipped:

    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p,w\\na,x,2\\nb,,1\\nc,y,1\\n")
    >>> skipped = []
    >>> list(read_rows(path, RowSpec("t", "p", "w"), on_error=skipped.append))
    [('a', 'x', 2), ('c', 'y', 1)]
    >>> [str(e).split(", ", 1)[1] for e in skipped]
    ["line 3: missing predicted label (column 'p' is empty)"]
    >>> tmp.cleanup()
    """
    fmt = detect_format(path, fmt)
    if fmt == "parquet":
        if path == "-":
            raise InputError("<stdin>", None, "Parquet cannot be read from standard input")
        yield from iter_parquet_rows(path, spec, on_error)
        return
    source = LineSource.open(path)
    try:
        yield from iter_text_rows(source, fmt, spec, on_error)
    finally:
        source.close()


# --------------------------------------------------------------------------- page-stream files
def page_flag(v, where: str) -> int:
    """``v`` as 0 or 1 (bools, 0/1 ints and integral floats, numpy's included); anything else is a
    :class:`~streameval.errors.PageStreamError` that names ``where``. O(1).

    >>> page_flag(True, "page 0"), page_flag(1.0, "page 1")
    (1, 1)
    """
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer, float, np.floating)) and v in (0, 1):
        return int(v)
    raise PageStreamError(f"{where}: a page flag must be 0 or 1, got {v!r}")


def load_json(path) -> dict:
    """Read ``{stream id: [0/1 flags]}`` from a JSON file; :class:`PageStreamError` if malformed.

    O(pages).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "g.json")
    >>> _ = open(p, "w").write('{"s1": [1, 0, 1], "s2": [1]}')
    >>> load_json(p)
    {'s1': [1, 0, 1], 's2': [1]}
    >>> _ = open(p, "w").write('{"s1": [1, 2]}')
    >>> load_json(p)
    Traceback (most recent call last):
    ...
    streameval.errors.PageStreamError: ...g.json: stream 's1', page 1: a page flag must be 0 or 1, got 2
    """
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as e:
        raise PageStreamError(f"{path}: not valid JSON ({e})") from None
    except UnicodeDecodeError as e:
        raise PageStreamError(f"{path}: not UTF-8 text ({e})") from None
    if not isinstance(data, dict):
        raise PageStreamError(
            f"{path}: expected a JSON object {{stream id: [0/1 flags]}}, got {type(data).__name__}"
        )
    if not data:
        raise PageStreamError(f"{path}: no streams")
    out = {}
    for sid, flags in data.items():
        if not isinstance(flags, list):
            raise PageStreamError(
                f"{path}: stream {sid!r}: expected a list of 0/1 flags, got {type(flags).__name__}"
            )
        if not flags:
            raise PageStreamError(f"{path}: stream {sid!r} has no pages")
        out[sid] = [page_flag(v, f"{path}: stream {sid!r}, page {i}") for i, v in enumerate(flags)]
    return out


def load_csv(path) -> dict:
    """Read ``{stream id: [0/1 flags]}`` from a CSV of ``stream,page,flag`` rows (with a header).

    O(pages log pages) (the pages of each stream are sorted).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "g.csv")
    >>> _ = open(p, "w").write("stream,page,flag\\nb,2,1\\na,1,1\\nb,1,1\\na,2,0\\n")
    >>> load_csv(p)
    {'b': [1, 1], 'a': [1, 0]}
    >>> _ = open(p, "w").write("stream,page,flag\\na,1,1\\na,3,0\\n")
    >>> load_csv(p)
    Traceback (most recent call last):
    ...
    streameval.errors.PageStreamError: ...g.csv: stream 'a': pages must be consecutive from 0 or 1, got 1, 3
    """
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except UnicodeDecodeError as e:
        raise PageStreamError(f"{path}: not UTF-8 text ({e})") from None
    except csv.Error as e:
        raise PageStreamError(f"{path}: not valid CSV ({e})") from None
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise PageStreamError(f"{path}: empty file (expected a header stream,page,flag)")
    header = [c.strip().lower() for c in rows[0]]
    missing = [c for c in ("stream", "page", "flag") if c not in header]
    if missing:
        raise PageStreamError(
            f"{path}: the header must name the columns stream, page and flag; missing {missing} "
            f"in {rows[0]}"
        )
    twice = [c for c in ("stream", "page", "flag") if header.count(c) > 1]
    if twice:
        raise PageStreamError(f"{path}: the header names {twice} more than once, in {rows[0]}")
    cs, cp, cf = (header.index(c) for c in ("stream", "page", "flag"))
    pages: dict = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) < len(header):
            raise PageStreamError(f"{path}, row {line}: expected {len(header)} fields, got {len(row)}")
        sid, page = row[cs].strip(), row[cp].strip()
        if not (page.isascii() and page.isdigit()):  # (int() would take 1_0, +1 and ١)
            raise PageStreamError(f"{path}, row {line}: page {page!r} is not an integer written "
                                  "in plain ASCII digits")
        page_no = int(page)
        raw = row[cf].strip()
        flag = {"0": 0, "1": 1}.get(raw)
        if flag is None:
            raise PageStreamError(f"{path}, row {line}: a page flag must be 0 or 1, got {raw!r}")
        stream = pages.setdefault(sid, {})
        if page_no in stream:
            raise PageStreamError(f"{path}, row {line}: stream {sid!r} page {page_no} is repeated")
        stream[page_no] = flag
    if not pages:
        raise PageStreamError(f"{path}: no rows after the header")
    out = {}
    for sid, stream in pages.items():
        order = sorted(stream)
        if order[0] not in (0, 1) or order[-1] - order[0] != len(order) - 1:
            shown = ", ".join(map(str, order[:5])) + (", ..." if len(order) > 5 else "")
            raise PageStreamError(
                f"{path}: stream {sid!r}: pages must be consecutive from 0 or 1, got {shown}"
            )
        out[sid] = [stream[k] for k in order]
    return out


def load_streams(path, fmt: str | None = "auto") -> dict:
    """Read a JSON or CSV page-stream file; ``fmt="auto"`` decides by the file's extension.

    O(pages). Unknown extensions and formats raise :class:`PageStreamError`.

    >>> load_streams("gold.txt")
    Traceback (most recent call last):
    ...
    streameval.errors.PageStreamError: gold.txt: cannot tell the format from the extension '.txt'; use .json or .csv (or pass the format)
    """
    path = Path(path)
    if fmt == "auto":
        fmt = {".json": "json", ".csv": "csv"}.get(path.suffix.lower())
        if fmt is None:
            raise PageStreamError(
                f"{path}: cannot tell the format from the extension {path.suffix!r}; "
                "use .json or .csv (or pass the format)"
            )
    if fmt == "json":
        return load_json(path)
    if fmt == "csv":
        return load_csv(path)
    raise PageStreamError(f"unknown page-stream format {fmt!r}; use json or csv")
