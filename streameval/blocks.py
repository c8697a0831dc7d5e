"""Columnar reading of a whole text file of rows: blocks of label codes and weights.

:func:`iter_blocks` yields the same rows as :func:`streameval.io.iter_text_rows`, validated the
same way (the same errors, on the same lines), a block at a time: the labels as dense ``int64``
codes (equal labels share a code, across blocks; :class:`Codes` maps them back) and the weights as
an ``int64`` array. A CSV/TSV or JSON-lines file is read 4 MiB at a time; a block whose bytes
hold nothing the row-by-row reader treats specially (no NUL or lone carriage return; no line over
the field size limit or ``max_line``; ASCII or valid UTF-8; for CSV no quote, for JSON lines one
object per line and no ``\\u`` escape) is parsed in C by pyarrow and validated in whole columns
(labels not empty, not null, of one scalar type; weights positive integers in range, the total
under the bound). Any other block goes through the row-by-row reader, which reports its bad rows
with their line numbers: a block with a bad row on its own (its lines are its rows), the rest of
the file once a CSV quote appears (a quoted field may span lines). Without pyarrow, numpy parses
CSV/TSV blocks and one ``json.loads`` a block parses JSON lines, under the same conditions.
Standard input and followed files go row by row, gathered into blocks.

>>> import tempfile, os
>>> from streameval.io import LineSource, RowSpec
>>> path = os.path.join(tempfile.mkdtemp(), "rows.csv")
>>> with open(path, "w") as f:
...     _ = f.write("truth,guess\\na,x\\nb,x\\na,y\\n")
>>> codes = Codes(), Codes()
>>> with LineSource.open(path) as source:
...     [(b.true.tolist(), b.pred.tolist(), b.rows) for b in
...      iter_blocks(source, "csv", RowSpec("truth", "guess"), codes=codes)]
[([0, 1, 0], [0, 0, 1], 3)]
>>> codes[0].labels, codes[1].labels
(['a', 'b'], ['x', 'y'])

Cost: O(1) per row, in C for the blocks pyarrow parses (a dictionary lookup per distinct label
per block in Python).
"""

from __future__ import annotations

import bisect
import codecs
import csv
import io
import os
import stat
from dataclasses import dataclass

import numpy as np

from .io import (
    MAX_TOTAL,
    CsvLayout,
    LineSource,
    RowSpec,
    csv_layout,
    csv_rows,
    iter_text_rows,
    raise_error,
)

__all__ = ["Block", "Codes", "iter_blocks", "columnar", "lines_in", "BLOCK_BYTES", "Positions",
           "ArrayPositions", "row_positions"]

BLOCK_BYTES = 1 << 22
"""Bytes of a CSV/TSV file parsed at once."""

_ROWS = 1 << 16  # rows gathered into a block on the row-by-row path


class Codes:
    """Labels to dense codes ``0, 1, 2, ...`` in order of first appearance (Python equality, as a
    dict groups them); ``labels[code]`` is the label. O(1) per label looked up.

    >>> c = Codes()
    >>> c.of(["b", "a", "b"]).tolist(), c.labels
    ([0, 1, 0], ['b', 'a'])
    """

    def __init__(self):
        self.index: dict = {}
        self.labels: list = []

    def code(self, label) -> int:
        """The code of ``label``, a new one (the next integer) the first time. O(1).

        >>> c = Codes(); c.code("q"), c.code("r"), c.code("q")
        (0, 1, 0)
        """
        index = self.index
        k = index.get(label)
        if k is None:
            k = index[label] = len(self.labels)
            self.labels.append(label)
        return k

    def of(self, labels) -> np.ndarray:
        """The codes of ``labels`` (an iterable), as ``int64``. O(1) per label."""
        code = self.code
        return np.fromiter((code(x) for x in labels), np.int64)

    def lut(self, encoded) -> np.ndarray:
        """The codes of a pyarrow dictionary-encoded array, or of ``(labels, indices)`` (distinct
        labels and each row's index among them): each distinct label looked up once, then
        gathered in C. O(distinct labels) dict look-ups plus O(rows) in numpy.

        >>> c = Codes(); c.of(["q", "r"]).tolist()
        [0, 1]
        >>> c.lut((["u", "q"], [1, 0, 1])).tolist()    # "u" gets the next code, 2
        [0, 2, 0]
        """
        if isinstance(encoded, tuple):
            labels, indices = encoded
            return self.of(labels)[indices]
        table = self.of(encoded.dictionary.to_pylist())
        return table[encoded.indices.to_numpy(zero_copy_only=False)]


@dataclass
class Block:
    """Consecutive valid rows: ``true`` and ``pred`` codes (:class:`Codes`), ``weight`` (``None``:
    every weight is 1), and ``rows``, their number. ``line`` and ``offset``: the position just
    after the block's last line. A record: O(1) per field; :attr:`lines` and :attr:`offsets`
    O(rows) (:func:`iter_blocks` has an example).

    >>> b = Block(np.array([0, 0]), np.array([0, 1]), None, 2, 3, 12, ArrayPositions([2, 3], [8, 12]))
    >>> b.rows, b.lines.tolist(), b.offsets.tolist()
    (2, [2, 3], [8, 12])
    """

    true: np.ndarray
    pred: np.ndarray
    weight: np.ndarray | None
    rows: int
    line: int
    offset: int
    positions: Positions | ArrayPositions | None = None  # with ``positions``: where rows end

    @property
    def lines(self) -> np.ndarray | None:
        """Each row's line number (with ``positions``)."""
        return None if self.positions is None else self.positions.arrays()[0]

    @property
    def offsets(self) -> np.ndarray | None:
        """The offset after each row (with ``positions``)."""
        return None if self.positions is None else self.positions.arrays()[1]


try:  # the native scan of a block's lines (an extension built from older sources lacks it)
    from ._native import row_end as _row_end
except ImportError:  # pragma: no cover - the extension is built by pip install
    _row_end = None  # type: ignore[assignment]


class Positions:
    """Each row's line number and the offset after it, for a block of whole lines starting after
    line ``line`` at byte ``offset`` (its rows are its lines that are not blank), found when asked
    (:meth:`at`): ``watch`` records a position only where it looks (every few thousand rows) and
    at the end of each hand-over, so the block's newlines are scanned once, forwards, each
    question from the last row found before it (natively, eight bytes at a time; without the
    extension, every row's position is found at the first question, :func:`row_positions`).
    O(bytes scanned + log questions) per question. With ``ends`` (the offsets of the block's
    newlines, as the parser found them, given when every line of the block is a row: no blank
    line), row ``j`` is line ``j`` and ends after ``ends[j]``: nothing is scanned, O(1) per
    question.

    >>> pos = Positions(b"a,x\\n\\nb,y\\nc,z\\n", line=1, offset=8)
    >>> pos.at(0), pos.at(2), pos.at(1)
    ((2, 12), (5, 21), (4, 17))
    >>> Positions(b"a,x\\nb,y\\nc,z", line=1, offset=8, ends=[3, 7]).at(2)
    (4, 19)
    """

    def __init__(self, chunk: bytes, line: int, offset: int, ends=None):
        self.chunk, self.line, self.offset = chunk, line, offset
        # the rows found so far, ascending: (rows before the byte, the byte, lines before it)
        self._known: list = [(0, 0, 0)]
        self._arrays: tuple | None = None
        self.ends = ends  # the newlines' offsets, given when every line is a row

    def at(self, j: int) -> tuple:
        """``(line, offset after)`` of row ``j`` (from 0) of the block: scanned from the last
        row found before it; with ``ends``, read from it (row ``j`` is line ``j``). O(bytes
        scanned + log questions), O(1) with ``ends``."""
        ends = self.ends
        if ends is not None:
            if 0 <= j < len(ends):
                return self.line + j + 1, self.offset + int(ends[j]) + 1
            if j == len(ends) and self.chunk and not self.chunk.endswith(b"\n"):
                return self.line + j + 1, self.offset + len(self.chunk)  # unterminated
            raise IndexError(f"row {j} is not in the block")
        if _row_end is None or self._arrays is not None:
            lines, offsets = self.arrays()
            return int(lines[j]), int(offsets[j])
        known = self._known
        k = bisect.bisect_right(known, (j + 1, len(self.chunk) + 1)) - 1  # rows <= j + 1
        rows, pos, lines = known[k]
        if rows == j + 1:  # row j itself was found
            return self.line + lines, self.offset + pos
        got = _row_end(self.chunk, pos, j - rows + 1)
        if got is None:
            raise IndexError(f"row {j} is not in the block")
        end, seen = got
        known.insert(k + 1, (j + 1, end, lines + seen))
        return self.line + lines + seen, self.offset + end

    def arrays(self) -> tuple:
        """``(lines, offsets)``: every row's, as int64 arrays. O(bytes of the block), once."""
        if self._arrays is None:
            ends = self.ends
            if ends is not None:
                size = len(self.chunk)
                after = np.asarray(ends, np.int64) + 1
                if size and not self.chunk.endswith(b"\n"):
                    after = np.append(after, size)
                self._arrays = (self.line + 1 + np.arange(len(after), dtype=np.int64),
                                self.offset + after)
            else:
                self._arrays = row_positions(self.chunk, self.line, self.offset)
        return self._arrays


class ArrayPositions:
    """:class:`Positions` of rows read one by one: their lines and offsets, as lists. O(1) per
    question.

    >>> ArrayPositions([2, 4], [12, 20]).at(1)
    (4, 20)
    """

    def __init__(self, lines: list, offsets: list):
        self.lines, self.offsets = lines, offsets

    def at(self, j: int) -> tuple:
        """``(line, offset after)`` of row ``j``. O(1)."""
        return self.lines[j], self.offsets[j]

    def arrays(self) -> tuple:
        """``(lines, offsets)``: every row's, as int64 arrays. O(rows).

        >>> [a.tolist() for a in ArrayPositions([2, 4], [12, 20]).arrays()]
        [[2, 4], [12, 20]]
        """
        return np.array(self.lines, np.int64), np.array(self.offsets, np.int64)


def iter_blocks(source: LineSource, fmt: str, spec: RowSpec, on_error=raise_error, codes=None,
                block_bytes: int = BLOCK_BYTES, start=None, total: int = 0,
                positions: bool = False):
    """Yield :class:`Block` s of the valid rows of a CSV, TSV or JSON-lines :class:`LineSource`
    (read to its end: not followed), bad rows going to ``on_error`` as in
    :func:`~streameval.io.iter_text_rows` (``start`` and ``total`` as there; while ``on_error``
    runs, ``source.lineno`` and ``source.offset`` are the bad row's). ``codes``: the two
    :class:`Codes` of the true and the predicted labels (shared across calls to code several
    files alike). ``positions``: each block also gives each row's line and the offset after it.
    O(bytes) (a block at a time in C where :func:`columnar` allows, else row by row) plus one
    code look-up per distinct label of a block.

    Three rows, one block: the labels coded in order of first appearance, the position after line
    4 (the header is line 1) at byte 16:

    >>> import os, tempfile
    >>> from .io import LineSource, RowSpec
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("t,p\\na,x\\na,x\\nb,y\\n")
    >>> source = LineSource.open(path)
    >>> [(b.true.tolist(), b.pred.tolist(), b.weight, b.rows, b.line, b.offset)
    ...  for b in iter_blocks(source, "csv", RowSpec("t", "p"))]
    [([0, 0, 1], [0, 0, 1], None, 3, 4, 16)]
    >>> columnar(source, "csv")                 # a regular file, not followed
    True
    >>> source.close(); tmp.cleanup()
    """
    codes = codes or (Codes(), Codes())
    if spec.vector:
        raise ValueError("iter_blocks reads labels and weights; vectors go row by row")
    if columnar(source, fmt):
        yield from _text_blocks(source, fmt, spec, on_error, codes, block_bytes, start, total,
                                positions)
        return
    def rows_of(source, layout, spec, on_error, total):
        return iter_text_rows(source, fmt, spec, on_error, start=start, total=total)

    yield from _rows_in_order(source, rows_of, None, spec, on_error, total, codes, positions)


def columnar(source: LineSource, fmt: str = "csv") -> bool:
    """Whether :func:`iter_blocks` parses ``source`` a block at a time: a regular file, not
    followed, whatever ``fmt`` (without pyarrow, CSV and TSV by numpy, JSON lines by one
    ``json.loads`` a block). O(1): one ``fstat``.

    >>> import os, tempfile
    >>> from .io import LineSource
    >>> tmp = tempfile.TemporaryDirectory(); path = os.path.join(tmp.name, "rows.csv")
    >>> open(path, "w").close()
    >>> source = LineSource.open(path); columnar(source, "jsonl")
    True
    >>> source.close()
    >>> source = LineSource.open(path, follow=True, stop=lambda: True); columnar(source)
    False
    >>> source.close(); tmp.cleanup()
    """
    fd = source.fileno()
    return fd is not None and not source.follow and stat.S_ISREG(os.fstat(fd).st_mode)


def _has_pyarrow(part: str) -> bool:
    """Whether ``pyarrow.csv`` or ``pyarrow.json`` can be imported."""
    try:
        __import__(f"pyarrow.{part}")
    except ImportError:
        return False
    return True


def _block(rows: list, ct: Codes, cp: Codes, source: LineSource, lines, offsets) -> Block:
    w = np.fromiter((r[2] for r in rows), np.int64, len(rows))
    block = Block(ct.of(r[0] for r in rows), cp.of(r[1] for r in rows),
                  None if (w == 1).all() else w, len(rows), source.lineno, source.offset)
    if lines is not None:
        block.positions = ArrayPositions(lines, offsets)
    return block


def row_positions(chunk: bytes, line: int, offset: int) -> tuple:
    """Each row's line number and the offset after it, for a block of whole lines starting after
    ``line`` at ``offset`` (the rows are its lines that are not blank), as int64 arrays. O(bytes)
    in numpy.

    >>> [a.tolist() for a in row_positions(b"a,x\\n\\nb,y\\nc,z\\n", line=1, offset=8)]
    [[2, 4, 5], [12, 17, 21]]
    """
    ends = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
    if not chunk.endswith(b"\n"):
        ends = np.append(ends, len(chunk))
    starts = np.concatenate(([0], ends[:-1] + 1))
    size = ends - starts
    first = np.frombuffer(chunk + b"\n", np.uint8)[starts]
    kept = np.flatnonzero((size > 1) | ((size == 1) & (first != 13)))
    return line + 1 + kept, offset + np.minimum(ends[kept] + 1, len(chunk))


def _text_blocks(source: LineSource, fmt: str, spec: RowSpec, on_error, codes, block_bytes: int,
                 start, total: int, positions: bool):
    parse: _Parser | _JsonParser | _NumpyParser | _PyJsonParser
    if fmt == "jsonl":
        layout = None
        parse = (_JsonParser(spec, source.max_line) if _has_pyarrow("json")
                 else _PyJsonParser(spec, source.max_line))
    else:
        layout = csv_layout(source, fmt, spec)
        parse = (_Parser(layout, spec, source.max_line) if _has_pyarrow("csv")
                 else _NumpyParser(layout, spec, source.max_line))
    if start:
        source.seek(*start)
    stream = source.stream
    offset, line = source.offset, source.lineno
    stream.seek(offset)
    carry = b""
    while True:
        data = stream.read(block_bytes)
        buf = carry + data if carry else data
        if not buf:
            return
        cut = buf.rfind(b"\n") + 1 if data else len(buf)
        if not cut:  # no newline in a whole block: a long line, read row by row
            chunk, carry = b"", buf
        else:
            chunk, carry = buf[:cut], buf[cut:]
        parsed = parse(chunk, total, offset == 0) if chunk and parse.may_parse(chunk) else None
        if parsed is not None:
            t, p, w, n, total = parsed
            first, start = line, offset
            ends = parse.ends  # the block's newlines, found by the parser
            lines = len(ends) + (not chunk.endswith(b"\n"))
            line += lines
            offset += len(chunk)
            source.lineno, source.offset = line, offset
            if n:
                block = Block(codes[0].lut(t), codes[1].lut(p), w, n, line, offset)
                if positions:  # every line a row: the parser's newlines answer where rows end
                    block.positions = Positions(chunk, first, start,
                                                ends if n == lines else None)
                yield block
            continue
        if layout is not None and b'"' in buf:
            # a quoted CSV field may span lines: the rest of the file row by row
            source.seek(offset, line)
            yield from _rows_in_order(source, csv_rows, layout, spec, on_error, total, codes,
                                      positions)
            return
        # this block alone, row by row (its lines are its rows), the source reading it meanwhile
        rows_of = csv_rows if layout is not None else _json_rows
        with source.reading(io.BytesIO(chunk)):
            total = yield from _rows_in_order(source, rows_of, layout, spec, on_error, total,
                                              codes, positions)
        line, offset = source.lineno, source.offset


def _json_rows(source: LineSource, layout, spec: RowSpec, on_error, total: int):
    """The JSON-lines rows of ``source`` (as :func:`~streameval.io.iter_text_rows` reads them)."""
    return (yield from iter_text_rows(source, "jsonl", spec, on_error, total=total))


def _rows_in_order(source: LineSource, rows_of, layout, spec, on_error, total, codes, positions):
    """The rows of ``source`` (``rows_of(source, layout, spec, on_error, total)``) as blocks, each
    bad row handed to ``on_error`` after the block of the rows before it, with the source at the
    bad row's position while ``on_error`` runs; returns the total weight reached."""
    errors: list = []

    def defer(error):
        errors.append((error, source.lineno, source.offset))

    rows = rows_of(source, layout, spec, defer, total)
    batch: list = []
    lines: list | None = [] if positions else None
    offsets: list = []

    def flush():
        nonlocal batch, lines, offsets
        if batch:
            yield _block(batch, codes[0], codes[1], source, lines, offsets)
        batch, lines, offsets = [], [] if positions else None, []

    while True:
        try:
            row = next(rows)
        except StopIteration as end:
            total = end.value
            row = None
        if errors:
            yield from flush()
            here = source.lineno, source.offset
            for error, source.lineno, source.offset in errors:
                on_error(error)
            errors.clear()
            source.lineno, source.offset = here
        if row is None:
            yield from flush()
            return total
        batch.append(row)
        if lines is not None:
            lines.append(source.lineno)
            offsets.append(source.offset)
        if len(batch) >= _ROWS:
            yield from flush()


def lines_in(chunk: bytes) -> int:
    """The lines of a block of whole lines (an unterminated last one included). O(bytes).

    >>> lines_in(b"a,x\\nb,y\\n"), lines_in(b"a,x\\nb,y")
    (2, 2)
    """
    return chunk.count(b"\n") + (not chunk.endswith(b"\n"))


def _plain(chunk: bytes, at_start: bool, longest: int):
    """The offsets of the newlines of a block of whole lines, if its bytes hold nothing the
    row-by-row reader treats specially: no NUL or lone carriage return, no byte-order mark at the
    file's start, valid UTF-8, no line of ``longest`` bytes or more; else ``None``."""
    if b"\0" in chunk or chunk.count(b"\r") != chunk.count(b"\r\n"):
        return None
    if at_start and chunk.startswith(codecs.BOM_UTF8):
        return None
    if not chunk.isascii():
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError:
            return None
    ends = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
    last = len(chunk) - 1 - (ends[-1] if len(ends) else -1)  # an unterminated last line
    if last >= longest or len(ends) and (
            ends[0] >= longest or len(ends) > 1 and np.diff(ends).max() > longest):
        return None
    return ends


def _longest(max_line: int) -> int:
    """Lines of this many bytes or more go to the row-by-row reader: no line may reach one of
    its limits (the csv module's field size limit, ``max_line``)."""
    return min(csv.field_size_limit(), max_line - 1)


class _Parser:
    """Parse one block of whole lines with pyarrow, or say it needs the row-by-row reader."""

    def __init__(self, layout: CsvLayout, spec: RowSpec, max_line: int):
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv

        self.pa, self.pc, self.pcsv = pa, pc, pcsv
        self.layout, self.spec = layout, spec
        self.longest = _longest(max_line)
        self.names = [f"c{k}" for k in range(layout.ncols or 0)]
        cols = [layout.true, layout.pred] + ([layout.weight] if layout.weight is not None else [])
        self.cols = cols
        self.parse_options = pcsv.ParseOptions(delimiter=layout.delimiter, quote_char=False,
                                               double_quote=False, escape_char=False,
                                               newlines_in_values=False, ignore_empty_lines=True)

    @staticmethod
    def may_parse(chunk: bytes) -> bool:
        """A quote goes to the row-by-row reader (a quoted field may span lines)."""
        return b'"' not in chunk

    def __call__(self, chunk: bytes, total: int, at_start: bool):
        """``(true, pred, weight, rows, total)`` of a block of whole lines (``at_start``: the
        file's first bytes), or ``None``."""
        pa, pc, pcsv = self.pa, self.pc, self.pcsv
        ends = _plain(chunk, at_start, self.longest)
        self.ends = ends  # the newlines' offsets (read by _text_blocks)
        if ends is None:
            return None
        names = self.names
        if not names:  # no header: the first line's fields name the columns
            first = chunk[:ends[0] if len(ends) else len(chunk)].rstrip(b"\r")
            names = [f"c{k}" for k in range(first.count(self.layout.delimiter.encode()) + 1)]
            if len(names) < self.layout.need:
                return None
        wanted = [names[k] for k in self.cols]
        try:
            table = pcsv.read_csv(
                io.BytesIO(chunk),
                read_options=pcsv.ReadOptions(column_names=names, use_threads=False,
                                              block_size=len(chunk) + 1),
                parse_options=self.parse_options,
                convert_options=pcsv.ConvertOptions(
                    column_types=dict.fromkeys(wanted, pa.string()),
                    include_columns=list(dict.fromkeys(wanted)),  # a column named twice: read once
                    null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False),
            )
        except (pa.ArrowInvalid, ValueError):
            return None
        n = table.num_rows
        if not n:
            return None, None, None, 0, total
        t, p = (table.column(names[k]).combine_chunks() for k in self.cols[:2])
        w = table.column(wanted[2]).combine_chunks() if len(self.cols) == 3 else None
        return _checked(pa, pc, t, p, w, n, total, text_weights=True)


class _NumpyParser:
    """Parse one block of whole CSV/TSV lines with numpy (without pyarrow), or say it needs the
    row-by-row reader: the delimiters found in one pass, every line holding the same number of
    fields (the header's, or at least the columns needed), the label fields gathered into
    fixed-width byte strings and grouped by ``numpy.unique`` (decoded once per distinct label),
    the weights read as decimal digits. What it refuses (an empty label, a weight that is not
    1 to 18 plain digits, lines of different lengths in fields, labels longer than 256 bytes)
    goes row by row. O(bytes) in numpy, plus a sort of the labels."""

    WIDEST = 256

    def __init__(self, layout: CsvLayout, spec: RowSpec, max_line: int):
        self.layout, self.spec = layout, spec
        self.longest = _longest(max_line)
        self.delimiter = ord(layout.delimiter)

    may_parse = staticmethod(_Parser.may_parse)

    def __call__(self, chunk: bytes, total: int, at_start: bool):
        ends = _plain(chunk, at_start, self.longest)
        self.ends = ends  # the newlines' offsets (read by _text_blocks)
        if ends is None:
            return None
        u8 = np.frombuffer(chunk, np.uint8)
        if not len(ends) or ends[-1] != len(chunk) - 1:
            ends = np.append(ends, len(chunk))  # an unterminated last line
        starts = np.concatenate(([0], ends[:-1] + 1))
        stops = ends - ((ends > starts) & (u8[np.maximum(ends - 1, 0)] == 13))  # "\r\n"
        kept = stops > starts  # blank lines are no rows
        starts, stops = starts[kept], stops[kept]
        n = len(starts)
        if not n:
            return (([], np.zeros(0, np.int64)), ([], np.zeros(0, np.int64)), None, 0, total)
        is_delim = u8 == self.delimiter
        delims = np.flatnonzero(is_delim)
        wide = np.int32 if len(u8) < 1 << 31 else np.int64
        before = np.zeros(len(u8) + 1, wide)  # the delimiters before each offset
        np.cumsum(is_delim, dtype=wide, out=before[1:])
        first = before[starts]
        fields = before[stops] - first + 1
        layout = self.layout
        width = layout.ncols if layout.ncols is not None else int(fields[0])
        if (fields != width).any() or width < layout.need:
            return None

        def column(k):  # each row's field k: its first byte and the byte after it
            lo = starts if k == 0 else delims[first + k - 1] + 1
            hi = stops if k == width - 1 else delims[first + k]
            return lo, hi

        out = []
        for k in (layout.true, layout.pred):
            labels = self._labels(u8, *column(k))
            if labels is None:
                return None
            out.append(labels)
        w = None
        if layout.weight is not None:
            w = self._weights(u8, *column(layout.weight))
            if w is None:
                return None
        weighed = _weighed(w, n, total)
        return None if weighed is None else (out[0], out[1], weighed[0], n, weighed[1])

    def _matrix(self, u8, lo, hi):
        """The fields ``u8[lo:hi]`` as rows of a byte matrix padded with NULs (``None`` if one is
        empty or wider than :attr:`WIDEST`)."""
        size = hi - lo
        if not len(size) or size.min() < 1 or size.max() > self.WIDEST:
            return None, size
        cols = np.arange(int(size.max()))
        idx = lo[:, None] + cols
        inside = cols < size[:, None]
        return np.where(inside, u8[np.minimum(idx, len(u8) - 1)], 0).astype(np.uint8), size

    def _labels(self, u8, lo, hi):
        """``(distinct labels, each row's index among them)`` of a text column."""
        size = hi - lo
        if len(size) and size.min() >= 1 and size.max() <= 8:
            # labels of up to 8 bytes: grouped as integers, the 8 bytes from each label's first
            # read big-endian with those past its end zeroed (its NUL-padded bytes, ordered as
            # the bytes: the same groups in the same order as below), a faster sort
            padded = np.concatenate((u8, np.zeros(8, np.uint8)))
            raw = np.lib.stride_tricks.sliding_window_view(padded, 8)[lo]
            keys = raw.view(">u8").ravel().astype(np.uint64)
            keys &= np.uint64(0xFFFF_FFFF_FFFF_FFFF) << (8 * (8 - size)).astype(np.uint64)
            distinct, index = np.unique(keys, return_inverse=True)
            return ([b.decode("utf-8") for b in distinct.astype(">u8").view("S8").tolist()],
                    index.astype(np.int64))
        m, _ = self._matrix(u8, lo, hi)
        if m is None:
            return None
        fixed = np.ascontiguousarray(m).view(f"S{m.shape[1]}").ravel()
        fixed, index = np.unique(fixed, return_inverse=True)
        return [b.decode("utf-8") for b in fixed.tolist()], index.astype(np.int64)

    def _weights(self, u8, lo, hi):
        """The integers of a column of 1 to 18 decimal digits; ``None`` if one is not."""
        m, size = self._matrix(u8, lo, hi)
        if m is None or size.max() > 18:
            return None
        digits = m.astype(np.int64) - 48
        inside = np.arange(m.shape[1]) < size[:, None]
        if ((digits < 0) | (digits > 9))[inside].any():
            return None
        value = np.zeros(len(size), np.int64)
        for j in range(m.shape[1]):
            step = inside[:, j]
            value = np.where(step, value * 10 + digits[:, j], value)
        return value


def _weighed(w, n: int, total: int):
    """``(weights, total)`` of a block of ``n`` rows with int64 weights ``w`` (``None``: each 1):
    ``None`` for weights all 1, the total plus the block's; or ``None`` when a weight is not from
    1 to 2**57 or the total would come near the bound (the row-by-row reader then names the row).
    The total stays exact in int64: each weight is under 2**57 and a block has under 2**22 rows;
    a block that would take it over half the bound is read row by row."""
    if w is None:
        return None, total + n
    if w.min() < 1 or w.max() > MAX_TOTAL:
        return None
    if total + float(w.sum(dtype=np.float64)) >= MAX_TOTAL / 2:
        return None
    return (None if (w == 1).all() else w), total + int(w.sum())


def _checked(pa, pc, t, p, raw, n: int, total: int, text_weights: bool):
    """``(true, pred, weight, rows, total)`` of parsed columns whose values are all valid (no
    empty label; weights positive integers under the bound, the total staying under it), the
    labels dictionary-encoded, ``weight`` ``None`` when every weight is 1; else ``None``."""
    for labels in (t, p):
        if labels.null_count or pa.types.is_string(labels.type) and (
                pc.min(pc.binary_length(labels)).as_py() == 0):
            return None  # a missing label: reported row by row
    w = None
    if raw is not None:
        if raw.null_count:
            return None
        if text_weights:
            if not pc.all(pc.ascii_is_decimal(raw)).as_py():
                return None
            try:
                raw = pc.cast(raw, pa.int64())
            except pa.ArrowInvalid:  # over 18 digits
                return None
        elif not pa.types.is_int64(raw.type):  # 2.0, true, "2": the row-by-row reader decides
            return None
        w = raw.to_numpy()
    weighed = _weighed(w, n, total)
    if weighed is None:
        return None
    return t.dictionary_encode(), p.dictionary_encode(), weighed[0], n, weighed[1]


class _JsonParser:
    """Parse one block of whole JSON lines with pyarrow, or say it needs the row-by-row reader.

    pyarrow's JSON reader and Python's ``json.loads`` agree on the blocks it takes: every line an
    object on its own (it starts with ``{`` and ends with ``}``, and pyarrow finds as many rows as
    lines: two objects on a line, which Python refuses, go row by row), no ``\\u`` escape (lone
    surrogates), no key twice (pyarrow refuses it), labels all strings, all integers in int64 or
    all booleans in each column (a float, a null, a nested value, a number too big for int64 or a
    column changing type go row by row, as do weights that are not all int64).
    """

    def __init__(self, spec: RowSpec, max_line: int):
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.json as pjson

        self.pa, self.pc, self.pjson = pa, pc, pjson
        self.spec = spec
        self.longest = _longest(max_line)
        self.cols = [spec.true, spec.pred] + ([spec.weight] if spec.weight else [])

    @staticmethod
    def may_parse(chunk: bytes) -> bool:
        return b"\\u" not in chunk

    def __call__(self, chunk: bytes, total: int, at_start: bool):
        """``(true, pred, weight, rows, total)`` of a block of whole lines, or ``None``."""
        pa, pc, pjson = self.pa, self.pc, self.pjson
        ends = _plain(chunk, at_start, self.longest)
        self.ends = ends  # the newlines' offsets (read by _text_blocks)
        if ends is None or not len(ends) or ends[-1] != len(chunk) - 1:
            return None  # (an unterminated last line: the row-by-row reader)
        u8 = np.frombuffer(chunk, np.uint8)
        starts = np.concatenate(([0], ends[:-1] + 1))
        if (u8[starts] != 123).any() or (u8[ends - 1] != 125).any():  # "{" ... "}"
            return None
        try:
            table = pjson.read_json(io.BytesIO(chunk), read_options=pjson.ReadOptions(
                use_threads=False, block_size=len(chunk) + 1))
        except (pa.ArrowInvalid, ValueError):
            return None
        n = table.num_rows
        if n != len(ends) or not all(c in table.column_names for c in self.cols):
            return None
        t, p = (table.column(c).combine_chunks() for c in self.cols[:2])
        for labels in (t, p):
            if not (pa.types.is_string(labels.type) or pa.types.is_int64(labels.type)
                    or pa.types.is_boolean(labels.type)):
                return None
        w = table.column(self.cols[2]).combine_chunks() if len(self.cols) == 3 else None
        return _checked(pa, pc, t, p, w, n, total, text_weights=False)


def _json_blocked(chunk: bytes, longest: int, at_start: bool):
    """``(ends, stops)`` of a block of whole JSON lines that each hold one object on its own, as
    bytes can tell it: every line starts with ``{`` and ends with ``}`` (before a ``\\r\\n``),
    and the block holds as many ``{`` as lines (one a line, its first byte; see
    :class:`_PyJsonParser`); else ``None``."""
    ends = _plain(chunk, at_start, longest)
    if ends is None or not len(ends) or ends[-1] != len(chunk) - 1:
        return None  # (an unterminated last line: the row-by-row reader)
    u8 = np.frombuffer(chunk, np.uint8)
    starts = np.concatenate(([0], ends[:-1] + 1))
    stops = ends - (u8[ends - 1] == 13)  # a CRLF ending (_plain: no lone carriage return)
    if (stops <= starts).any() or (u8[starts] != 123).any() or (u8[stops - 1] != 125).any():
        return None
    if chunk.count(b"{") != len(ends):
        return None
    return ends


def _json_label(value) -> bool:
    """Whether the row-by-row reader takes ``value`` as a label as it is (not missing, a string,
    number or boolean; :func:`~streameval.io._label`; a missing true label, which ``--sample``
    allows, goes row by row)."""
    if isinstance(value, str):
        return value != ""
    if isinstance(value, float):
        return value == value
    return isinstance(value, int)


class _PyJsonParser:
    """Parse one block of whole JSON lines without pyarrow: one ``json.loads`` of the block made
    an array (``"[" + lines joined by "," + "]"``), or say it needs the row-by-row reader.

    It takes a block only when that array holds each line's own object: every line starts with
    ``{``, ends with ``}`` and holds no other ``{``, and the array holds as many elements as lines,
    all objects. An object opens at a ``{``, so the k-th element opens at the k-th line's ``{``;
    it closes before the next line's ``{``, with nothing but blanks and the ``,`` joined in after
    it (another ``,`` would start another element), so at its line's last ``}``: each element is
    its line's text, which ``json.loads`` alone reads the same. The rows are then checked in whole columns
    as the row-by-row reader checks each (labels: strings not empty, numbers not NaN, booleans;
    weights: ``int`` from 1 to 2**57, the total staying under the bound); a block where one is not
    goes row by row, which names the row. Labels keep their values and types: each distinct one
    (as a dict groups them: ``1``, ``1.0`` and ``True`` alike) in order of first appearance, as
    :class:`Codes` would meet them row by row. O(bytes) in C, plus two dictionary lookups a row
    (C loops, no Python frame per row).
    """

    def __init__(self, spec: RowSpec, max_line: int):
        import json

        self.loads = json.loads
        self.spec = spec
        self.longest = _longest(max_line)

    @staticmethod
    def may_parse(chunk: bytes) -> bool:
        return True

    def __call__(self, chunk: bytes, total: int, at_start: bool):
        """``(true, pred, weight, rows, total)`` of a block of whole lines, or ``None``."""
        ends = _json_blocked(chunk, self.longest, at_start)
        self.ends = ends  # the newlines' offsets (read by _text_blocks)
        if ends is None:
            return None
        n = len(ends)
        text = chunk.decode("utf-8")  # valid (_plain)
        try:
            rows = self.loads("[" + text[:-1].replace("\n", ",") + "]")
        except (ValueError, RecursionError):
            return None  # a line that is not JSON: row by row, which names it
        if len(rows) != n or set(map(type, rows)) != {dict}:
            return None
        spec = self.spec
        out = []
        for name in (spec.true, spec.pred):
            values = [row.get(name) for row in rows]
            try:
                distinct = dict.fromkeys(values)
            except TypeError:  # a list or an object: not a label
                return None
            if not all(map(_json_label, distinct)):
                return None
            index = {v: k for k, v in enumerate(distinct)}
            out.append((list(distinct), np.fromiter(map(index.__getitem__, values), np.int64, n)))
        w = None
        if spec.weight is not None:
            ws = [row.get(spec.weight) for row in rows]
            if set(map(type, ws)) != {int}:
                return None  # (a float, a string, a boolean, a null: row by row decides)
            try:
                w = np.array(ws, np.int64)
            except OverflowError:
                return None
        weighed = _weighed(w, n, total)
        return None if weighed is None else (out[0], out[1], weighed[0], n, weighed[1])
