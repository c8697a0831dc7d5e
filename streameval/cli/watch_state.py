"""The state of ``streameval watch``: all-time and windowed tables, drop detection, input position.

Rows are taken in O(1) each; the tables catch up in bulk at each report, publication and
checkpoint. Drop detection is the library's own (:class:`~streameval.detect.BlockDrops`, as
:class:`~streameval.Monitor` runs it), fed the rows in bulk; what broke is an
:class:`~streameval.breakdown.ErrorAccount` over the window's table (the all-time one without a
window). The values are those of updating row by row.

>>> from streameval.metrics import resolve
>>> state = WatchState(resolve("ELM ARI"), window=2)
>>> state.pending += [("a", "x", 1), ("a", "x", 1), ("b", "x", 1)]
>>> v = state.values()
>>> round(v["all"]["ELM"], 4), v["window"]["ELM"]
(0.4444, 0.0)
"""

from __future__ import annotations

import math
import time
from collections import deque
from operator import itemgetter

from ..breakdown import ErrorAccount
from ..detect import BlockDrops
from ..errors import CLIError, StreamevalError
from ..sample import SampleEstimator
from .score import evaluator

__all__ = ["WatchState", "count_cells", "add_cells", "add_rows"]

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


def add_cells(ev, counts: dict, account: ErrorAccount | None = None) -> None:
    """Apply ``{(t, p): signed weight}`` to an evaluator: additions in one
    :meth:`~streameval.Evaluator.update_many` (as ``score`` does), removals by ``revert``; then
    refresh ``account`` (an :class:`~streameval.breakdown.ErrorAccount` of its table), if any,
    for each changed cell."""
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
    if account is not None:
        refresh = account.refresh
        for (t, p), c in counts.items():
            refresh(t, p, c)


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


class _Held:
    """What ``watch --sample`` holds, for :func:`inconsistency`: the estimator's elements (its
    table stays empty: anything in it is skipped, i.e. inconsistent)."""

    def __init__(self, n: int, in_table: int):
        self.n, self.skipped = n, in_table


def inconsistency(table, rows: int, items, weighted: bool) -> str | None:
    """What contradicts itself in a checkpoint's saved state, or ``None``. O(cells + window).

    A checkpoint whose digest was recomputed after an edit passes the digest check; its content
    must still agree with itself: every counted row is one element of the table (at least one,
    with a weight column), the table skips nothing (a missing label is a bad row), and the
    window's rows are among the table's (each of its cells at most the table's).
    """
    if table.skipped:
        return f"the table skipped {table.skipped} elements, but watch counts no skipped element"
    if table.n != rows and not weighted or table.n < rows:
        return (f"the table holds {table.n} elements but {rows} rows were counted"
                + (" (each row adds at least one)" if weighted else " (one element a row)"))
    if items is not None:
        if len(items) > rows:
            return f"the window holds {len(items)} rows, more than the {rows} counted"
        for (t, p), c in count_cells(items).items():
            if c > table[t, p]:
                return f"the window's cell ({t!r}, {p!r}) holds {c}, the table's {table[t, p]}"
    return None


class WatchState:
    """The state of ``streameval watch``: all-time and windowed metrics, counts, input position.

    Rows are taken in O(1) each (appended to a pending list); the tables catch up at each report,
    publication or checkpoint (:meth:`flush`): the all-time table by one ``update_many`` of the
    pending rows' cells, the window (the last ``window`` rows) by the net change of its cells, or
    rebuilt when that is cheaper. The values are those of updating row by row (the tables hold
    integer counts; the order of updates does not change them).
    """

    def __init__(self, classes, window: int, drops: BlockDrops | None = None, top: int = 5):
        self.classes = classes
        self.all = evaluator(classes)
        self.size = window
        self.items: deque | None = deque() if window else None  # the window's rows
        self.win = evaluator(classes) if window else None
        self.pending: list = []
        self.drops = drops
        self.recent = max(window, 10 * drops.block) if drops is not None else 0
        self.top = top
        self.account = ErrorAccount((self.win or self.all).table)
        self.rows = self.skipped = self.offset = self.line = 0
        self.header = self.fingerprint = None
        self.updated = time.time()  # when the last row was taken
        self.sample: SampleEstimator | None = None  # watch --sample: instead of the tables

    def use_sample(self, design: str) -> None:
        """Estimate from a labelled sample (``watch --sample``): rows go to a
        :class:`~streameval.SampleEstimator`; the tables, window and drops stay off."""
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
        else:
            refresh = self.account.refresh
            for (t, p), c in count_cells(rows).items():
                refresh(t, p, c)
        if self.drops is not None:
            w = [row[2] for row in rows]
            self.drops.update_many([row[0] for row in rows], [row[1] for row in rows],
                                   None if w.count(1) == len(w) else w)

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
            self.account = ErrorAccount(self.win.table)
            return
        delta = count_cells((items.popleft() for _ in range(leaving)), sign=-1)
        add_cells(self.win, count_cells(rows, counts=delta), self.account)
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
            out["drop"] = self.drops.flag(self.recent)
            out["drops"] = len(self.drops.drops)
            out["last_drop"] = self.drops.last_drop_time
            # the watched metric's sampling-error band over the blocks of the window, and the
            # detector's reference level (a calibrated Cusum's reference mean)
            out["drop_interval"] = self.drops.interval(max(2, self.recent // self.drops.block))
            mu = getattr(self.drops.detector, "mu", None)
            out["drop_reference"] = mu if mu is not None and math.isfinite(mu) else None
        out["broke"] = self.account.report(self.top)
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
            held = table if self.sample is None else _Held(self.sample.n, table.n)
            why = inconsistency(held, rows, self.items, input_desc.get("weight") is not None)
            if why:
                refuse(f"inconsistent state: {why}")
            self.account = ErrorAccount((self.win or self.all).table)
        except CLIError:
            raise
        except (ArithmeticError, KeyError, MemoryError, RecursionError, TypeError, ValueError,
                StreamevalError) as e:
            refuse(f"malformed content ({type(e).__name__}: {e})")
        self.offset, self.line, self.rows, self.skipped, self.header = (
            offset, line, rows, skipped, header)
