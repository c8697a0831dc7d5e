"""The state of ``streameval watch``: all-time and windowed tables, drop detection, input position.

Rows are taken in O(1) each; the tables catch up in bulk at each report, publication and
checkpoint, and drop detection computes the watched metric over each block of rows at once.
The values are those of updating row by row.

>>> from streameval.metrics import resolve
>>> state = WatchState(resolve("ELM ARI"), window=2)
>>> state.pending += [("a", "x", 1), ("a", "x", 1), ("b", "x", 1)]
>>> v = state.values()
>>> round(v["all"]["ELM"], 4), v["window"]["ELM"]
(0.4444, 0.0)
"""

from __future__ import annotations

import time
from collections import deque
from itertools import count
from operator import itemgetter

from ..errors import CLIError, StreamevalError
from .score import evaluator

__all__ = ["WatchState", "Drops", "count_cells", "add_cells", "add_rows", "block_f_values"]

_TRUE, _PRED, _WEIGHT = itemgetter(0), itemgetter(1), itemgetter(2)


def count_cells(rows, sign=1, counts=None) -> dict:
    """``{(t, p): total weight}`` of ``(t, p, w, ...)`` rows (``sign=-1``: subtracted).

    >>> count_cells([("a", "x", 1), ("a", "x", 2), ("b", "x", 1)])
    {('a', 'x'): 3, ('b', 'x'): 1}
    """
    counts = {} if counts is None else counts
    get = counts.get
    for row in rows:
        key = (row[0], row[1])
        counts[key] = get(key, 0) + sign * row[2]
    return counts


def add_cells(ev, counts: dict) -> None:
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


def add_rows(ev, rows) -> None:
    """Add ``(t, p, w, ...)`` rows to an evaluator in one :meth:`~streameval.Evaluator.update_many`
    (the labels as lists: grouped by Python equality, cells counted in numpy; ``w`` left out when
    every weight is 1). O(rows) plus the table's cost per changed cell.

    >>> from streameval import Evaluator
    >>> ev = Evaluator("ELM")
    >>> add_rows(ev, [("a", "x", 1), ("a", "x", 2), ("b", "y", 1)])
    >>> sorted(ev.table.items())
    [('a', 'x', 3), ('b', 'y', 1)]
    """
    import numpy as np

    w = np.fromiter(map(_WEIGHT, rows), np.int64, len(rows))
    ev.update_many(list(map(_TRUE, rows)), list(map(_PRED, rows)),
                   None if (w == 1).all() else w)


def _codes(labels: list):
    """Labels as int64 codes, equal labels (Python's equality) sharing one, in order of first
    appearance; and the number of distinct labels."""
    import numpy as np

    index = dict(zip(dict.fromkeys(labels), count()))
    return np.fromiter(map(index.__getitem__, labels), np.int64, len(labels)), len(index)


def block_f_values(rows, block: int, elm: bool) -> list:
    """ELM (``elm``) or BCubed, default parameters, over each block of ``block`` consecutive rows
    (``len(rows)`` a multiple of ``block``): per block, the per-element F-scores averaged over its
    elements, ``Σ_cells n·F / N`` with ELM's ``F = 2(n-1)/((a-1)+(b-1))`` (1 when ``a = b = 1``)
    and BCubed's ``F = 2n/(a+b)``.

    Counted in numpy (exact int64 counts and margins) and summed in floating point cell by cell in
    the order the cells first appear in the block, so each value is, to the bit, the one of the
    per-block loop :meth:`Drops.value`. O(rows log rows).

    >>> rows = [("a", "x", 1), ("a", "x", 1), ("b", "x", 1), ("b", "y", 1)]
    >>> block_f_values(rows, 2, elm=True), block_f_values(rows, 2, elm=False)
    ([1.0, 0.0], [1.0, 0.6666666666666666])
    """
    import numpy as np

    n = len(rows)
    nb = n // block
    if not nb:
        return []
    tc, kt = _codes(list(map(_TRUE, rows)))
    pc, kp = _codes(list(map(_PRED, rows)))
    w = np.fromiter(map(_WEIGHT, rows), np.int64, n)
    key = (np.arange(n, dtype=np.int64) // block * kt + tc) * kp + pc
    cells, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    ones = bool((w == 1).all())  # then every sum below is at most n: exact in a float64 bincount
    if ones:
        c = np.bincount(inverse, minlength=len(cells))
    else:
        c = np.zeros(len(cells), np.int64)
        np.add.at(c, inverse, w)
    cb, rest = np.divmod(cells, kt * kp)
    ct, cp = np.divmod(rest, kp)
    margins = []
    for side in (cb * kt + ct, cb * kp + cp):
        _, where = np.unique(side, return_inverse=True)
        where = where.reshape(-1)
        if ones:
            sums = np.bincount(where, weights=c).astype(np.int64)
        else:
            sums = np.zeros(int(where.max()) + 1, np.int64)
            np.add.at(sums, where, c)
        margins.append(sums[where])
    a, b = margins
    cf = c.astype(np.float64)
    if elm:
        d = a + b - 2
        alone = d == 0  # a = b = 1: F = 1, the term is the count (1)
        term = np.where(alone, cf, cf * 2.0 * (c - 1).astype(np.float64)
                        / np.where(alone, 1, d).astype(np.float64))
    else:
        term = cf * 2.0 * cf / (a + b).astype(np.float64)
    order = np.argsort(first, kind="stable")  # blocks in turn, cells by first appearance
    totals = np.bincount(cb[order], weights=term[order], minlength=nb)  # sums in array order
    sizes = np.add.reduceat(w, np.arange(0, n, block))
    return (totals / sizes.astype(np.float64)).tolist()


class Drops:
    """Drop detection as :class:`~streameval.Monitor` does it: the watched metric over consecutive
    blocks of ``block`` rows, each block's value fed to River's ``ADWIN``
    (:func:`~streameval.monitor.is_drop`).

    Rows are fed in bulk (:meth:`feed`); the blocks they complete are evaluated at once
    (:func:`block_f_values` for ELM and BCubed, else a table per block, as the Monitor does). Cost O(1)
    amortised per row, plus the detector's update per block.
    """

    CHUNK = 16384  # rows evaluated at once (whole blocks): bounds the arrays

    def __init__(self, cls, block: int, recent: int):
        from river import drift

        from ..monitor import is_drop

        self.cls, self.block, self.recent = cls, block, recent
        self.detector, self.is_drop = drift.ADWIN(clock=1), is_drop
        self.better = cls.bigger_is_better
        self.rows: list = []  # the rows of the unfinished block
        self.since = [0.0, 0]
        self.seen = 0  # rows fed in finished blocks
        self.drops: list = []  # row counts at which drops were flagged

    def feed(self, rows) -> None:
        block = self.block
        if self.rows:
            rows = self.rows + rows
        whole = len(rows) - len(rows) % block
        self.rows = rows[whole:]
        step = block * max(1, self.CHUNK // block)
        detector, better, since, is_drop = self.detector, self.better, self.since, self.is_drop
        for start in range(0, whole, step):
            for value in self.block_values(rows[start:min(whole, start + step)]):
                self.seen += block
                if value == value and is_drop(detector, value, better, since):
                    self.drops.append(self.seen)

    def block_values(self, rows) -> list:
        """The watched metric over each block of ``rows`` (whole blocks)."""
        block, name = self.block, self.cls.__name__
        if name in ("ELM", "BCubed"):
            return block_f_values(rows, block, name == "ELM")
        out = []
        for k in range(0, len(rows), block):  # as the Monitor does: the metric over a table
            ev = evaluator([self.cls])
            add_rows(ev, rows[k:k + block])
            out.append(ev.get()[name])
        return out

    def value(self, cells: dict) -> float:
        """The watched metric over one block's cells ``{(t, p): n}``: ELM and BCubed (default
        parameters) from their per-element F-scores, averaged over the elements; any other metric
        from the table's statistics (:meth:`ContingencyStats.from_cells`). O(cells)."""
        from ..stats import ContingencyStats

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


class WatchState:
    """The state of ``streameval watch``: all-time and windowed metrics, counts, input position.

    Rows are taken in O(1) each (appended to a pending list); the tables catch up at each report,
    publication or checkpoint (:meth:`flush`): the all-time table by one ``update_many`` of the
    pending rows' cells, the window (the last ``window`` rows) by the net change of its cells, or
    rebuilt when that is cheaper. The values are those of updating row by row (the tables hold
    integer counts; the order of updates does not change them).
    """

    def __init__(self, classes, window: int, drops: Drops | None = None):
        self.classes = classes
        self.all = evaluator(classes)
        self.size = window
        self.items: deque | None = deque() if window else None  # the window's rows
        self.win = evaluator(classes) if window else None
        self.pending: list = []
        self.drops = drops
        self.rows = self.skipped = self.offset = self.line = 0
        self.header = self.fingerprint = None
        self.updated = time.time()  # when the last row was taken
        self.sample = None  # watch --sample: a SampleEstimator instead of the tables

    def use_sample(self, design: str) -> None:
        """Estimate from a labelled sample (``watch --sample``): rows go to a
        :class:`~streameval.SampleEstimator`; the tables, window and drops stay off."""
        from ..sample import SampleEstimator

        self.sample = SampleEstimator(design=design)

    @property
    def elements(self) -> int:
        held = self.all.table.n if self.sample is None else self.sample.n
        return held + sum(row[2] for row in self.pending)

    def flush(self) -> None:
        """Bring the tables up to date with the pending rows."""
        rows = self.pending
        if not rows:
            return
        self.pending = []
        if self.sample is not None:
            update = self.sample.update
            for t, p, w in rows:
                update(t, p, w)
            return
        add_rows(self.all, rows)
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
            self.win = evaluator(self.classes)
            add_rows(self.win, items)
            return
        delta = count_cells((items.popleft() for _ in range(leaving)), sign=-1)
        add_cells(self.win, count_cells(rows, counts=delta))
        items.extend(rows)

    def values(self) -> dict:
        self.flush()
        if self.sample is not None:
            from .sample import sample_values

            return {"rows": self.rows, "elements": self.sample.n, "skipped": self.skipped,
                    **sample_values(self.sample)}
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
        if self.sample is not None:
            body["sample"] = self.sample.to_dict()
        if self.items is not None:  # the window's rows, saved as a CountWindow saves itself
            from ..window import CountWindow

            window = CountWindow(self.size, [cls() for cls in self.classes])
            for t, p, w in self.items:
                window.update(t, p, w)
            body["window"] = window.to_dict()
        return body

    def load_body(self, body: dict, input_desc: dict, path: str) -> None:
        """Restore from a checkpoint body; raise :class:`CLIError` on anything inconsistent."""
        from ..contingency import Contingency

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
            if (self.sample is None) != (body.get("sample") is None):
                refuse("it was written with" + ("out" if self.sample is not None else "")
                       + " --sample")
            if self.sample is not None:
                from ..sample import SampleEstimator

                sample = SampleEstimator.from_dict(body["sample"])
                if sample.design != self.sample.design:
                    refuse(f"its design is {sample.design!r}, not {self.sample.design!r}")
                self.sample = sample
            self.all = evaluator(self.classes, table=table)
            win = body["window"]
            if (win is None) != (self.items is None) or (
                isinstance(win, dict) and win.get("size") != self.size
            ):
                size = 0 if win is None else win.get("size")
                refuse(f"its window size is {size}, but --window is {self.size}")
            if win is not None:
                from ..window import CountWindow

                assert self.items is not None and self.win is not None  # sizes agree above
                self.items.extend(CountWindow.from_dict(win))
                add_cells(self.win, count_cells(self.items))
        except CLIError:
            raise
        except (KeyError, TypeError, ValueError, StreamevalError) as e:
            refuse(f"malformed content ({type(e).__name__}: {e})")
        self.offset, self.line, self.rows, self.skipped, self.header = (
            offset, line, rows, skipped, header)
