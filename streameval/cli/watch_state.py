"""The state of ``streameval watch``: all-time and windowed tables, drop detection, input position.

Rows arrive as blocks of label codes (:class:`~streameval.blocks.Codes`: the reader codes each
distinct label once) and are taken in O(1) per block; the tables catch up in bulk at each report,
publication and checkpoint: the all-time table, keyed by the codes themselves as ``score``'s is,
by one :meth:`~streameval.Evaluator.update_many` of the pending codes (the cells counted
natively, no Python object per label), the window, keyed by the labels, by the net change of its
cells or rebuilt. The codes become labels only where labels are shown or saved: what broke
(``--top``) and the checkpoint, whose table is written as the table of the labels writes itself. Drop
detection is the library's own (:class:`~streameval.detect.BlockDrops`, as
:class:`~streameval.Monitor` runs it), fed the codes in bulk; what broke is an
:class:`~streameval.breakdown.ErrorAccount` over the window's table (the all-time one without a
window), kept only when something reads it (``breakdown``: JSON lines, Prometheus). The values are
those of updating row by row.

>>> from streameval.metrics import resolve
>>> state = WatchState(resolve("ELM ARI"), window=2)
>>> state.take_rows([("a", "x", 1), ("a", "x", 1), ("b", "x", 1)])
>>> v = state.values()
>>> round(v["all"]["ELM"], 4), v["window"]["ELM"], state.window_rows()
(0.4444, 0.0, [('a', 'x', 1), ('b', 'x', 1)])
"""

from __future__ import annotations

import math
import time
from collections import deque

import numpy as np

from ..blocks import Codes
from ..breakdown import ErrorAccount, label_order
from ..detect import BlockDrops
from ..errors import CLIError, StreamevalError
from ..sample import SampleEstimator
from .score import evaluator

__all__ = ["WatchState", "count_cells", "add_codes", "coded", "labelled_dict", "coded_table",
           "named_report"]


def count_cells(rows, sign=1, counts=None) -> dict:
    """``{(t, p): total weight}`` of ``(t, p, w, ...)`` rows (``sign=-1``: subtracted). O(rows).

    >>> count_cells([("a", "x", 1), ("a", "x", 2), ("b", "x", 1)])
    {('a', 'x'): 3, ('b', 'x'): 1}
    """
    counts = {} if counts is None else counts
    get = counts.get
    for row in rows:
        key = (row[0], row[1])
        counts[key] = get(key, 0) + sign * row[2]
    return counts


def coded(codes, rows) -> tuple:
    """``(true codes, pred codes, weights or None)`` of ``(t, p, w, ...)`` label rows (``codes``:
    the two :class:`~streameval.blocks.Codes`). O(rows) dictionary lookups.

    >>> codes = Codes(), Codes()
    >>> [a if a is None else a.tolist() for a in coded(codes, [("a", "x", 1), ("b", "x", 1)])]
    [[0, 1], [0, 0], None]
    """
    w = np.fromiter((r[2] for r in rows), np.int64, len(rows))
    return (codes[0].of([r[0] for r in rows]), codes[1].of([r[1] for r in rows]),
            None if (w == 1).all() else w)


def _labels(codes: Codes, c: np.ndarray) -> tuple:
    """``(labels, dense codes)``: the distinct labels of codes ``c`` and each one's index."""
    used, dense = np.unique(c, return_inverse=True)
    lab = codes.labels
    return [lab[k] for k in used.tolist()], dense.astype(np.int64, copy=False)


def add_codes(ev, codes, t, p, w=None) -> None:
    """Add coded rows (``t``, ``p`` codes of ``codes``; weights ``w`` or ``None``: each 1) to an
    evaluator's table in one bulk add, as :meth:`~streameval.Evaluator.update_many` of the labels
    would: each distinct label looked up once, the cells counted in numpy. O(rows log rows) plus
    the table's cost per changed cell.

    >>> from streameval import Evaluator
    >>> codes = Codes(), Codes()
    >>> ev = Evaluator("ELM")
    >>> add_codes(ev, codes, *coded(codes, [("a", "x", 1), ("a", "x", 2), ("b", "y", 1)]))
    >>> sorted(ev.table.items())
    [('a', 'x', 3), ('b', 'y', 1)]
    """
    if not len(t):
        return
    # the cells counted over the codes; each distinct label of them looked up once
    ct, cp, counts = _cells(t, p, w)
    (tl, it), (pl, ip) = _labels(codes[0], ct), _labels(codes[1], cp)
    update = getattr(ev.table, "update_coded", None)  # the native table
    if update is not None:
        update(tl, pl, it, ip, None if w is None and len(counts) == len(t) else counts)
        return
    ts, ps = np.empty(len(tl), object), np.empty(len(pl), object)
    ts[:], ps[:] = tl, pl
    ev.update_many(ts[it], ps[ip], counts)


def _cells(t, p, w) -> tuple:
    """``(true codes, pred codes, summed signed weights)`` of the distinct cells of coded rows
    (``w`` ``None``: each 1), in exact int64 arithmetic (a table's total stays under 2**57);
    cells summing to 0 left out; in order of true, then predicted code. Rows of one weight
    whose combined keys are few (at most four per row): one count per key (``bincount``,
    O(rows + keys)); else one sort of a combined key (two when the codes are too many for one
    int64).

    >>> [c.tolist() for c in _cells(np.array([1, 0, 1]), np.array([2, 0, 2]), None)]
    [[0, 1], [0, 2], [1, 2]]
    """
    if not len(t):
        return t, p, np.zeros(0, np.int64)
    kp = int(p.max()) + 1
    keys = (int(t.max()) + 1) * kp
    if keys >= 1 << 62:  # no room for one key: sort by both
        order = np.lexsort((p, t))
        key = None
    else:
        key = t * kp + p
        if w is None and keys <= 4 * len(t) + 4096:
            counts = np.bincount(key, minlength=keys)
            cells = np.flatnonzero(counts)
            return cells // kp, cells % kp, counts[cells]
        if w is None:
            key = np.sort(key)
            first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
            c = np.diff(np.append(first, len(key)))
            return key[first] // kp, key[first] % kp, c
        order = np.argsort(key, kind="stable")
    t, p = t[order], p[order]
    w = np.ones(len(t), np.int64) if w is None else w[order]
    new = np.flatnonzero(np.concatenate(([True], (t[1:] != t[:-1]) | (p[1:] != p[:-1]))))
    c = np.add.reduceat(w, new)
    keep = c != 0
    return t[new][keep], p[new][keep], c[keep]


def labelled_dict(table, codes) -> dict:
    """``table.to_dict()`` of a table keyed by the codes of ``codes`` (the two
    :class:`~streameval.blocks.Codes`), as the same table keyed by the labels writes itself: the
    labels in their canonical order (:func:`~streameval.state.label_index`), the cells sorted by
    their positions. O(cells log cells).

    >>> from streameval import Contingency
    >>> codes = Codes(), Codes()
    >>> t, p, _ = coded(codes, [("b", "x", 1), ("a", "y", 1), ("b", "x", 1)])
    >>> table = Contingency(); table.update_many(t, p)
    >>> labels = Contingency(); labels.update_many(["b", "a", "b"], ["x", "y", "x"])
    >>> labelled_dict(table, codes) == labels.to_dict()
    True
    """
    from ..state import label_index

    state = table.to_dict()
    at = []
    for side, c in zip(("true", "pred"), codes):
        named = [c.labels[k] for k in state["labels"][side]]
        state["labels"][side], where = label_index(named)
        at.append([where[x] for x in named])
    st, sp = at
    state["cells"] = sorted([st[a], sp[b], n] for a, b, n in state["cells"])
    return state


def coded_table(table, codes, classes):
    """An evaluator of ``classes`` over the table of ``table``'s cells keyed by the codes of
    ``codes`` (labels not coded yet get the next codes, in the table's order), tracking the F
    sums ``table`` tracks. O(cells).

    >>> from streameval import Contingency
    >>> from streameval.metrics import resolve
    >>> codes = Codes(), Codes()
    >>> labels = Contingency(); labels.update_many(["b", "a", "b"], ["x", "y", "x"])
    >>> ev = coded_table(labels, codes, resolve("ARI"))
    >>> sorted(ev.table.items()), codes[0].labels
    ([(0, 0, 2), (1, 1, 1)], ['b', 'a'])
    """
    ev = evaluator(classes)
    for kind, beta in table.tracked_f():
        ev.table.track_f(kind, beta)
    cells = list(table.items())
    if cells:
        ev.update_many(codes[0].of(c[0] for c in cells), codes[1].of(c[1] for c in cells),
                       np.fromiter((c[2] for c in cells), np.int64, len(cells)))
    return ev


def named_report(report: dict, codes) -> dict:
    """What broke (:meth:`~streameval.breakdown.ErrorAccount.report`) of a table keyed by the
    codes of ``codes``, its entities and clusters named by their labels. O(k).

    >>> from streameval.blocks import Codes
    >>> codes = (Codes(), Codes()); _ = codes[0].of(["e1", "e2"]), codes[1].of(["c1"])
    >>> report = {"split_entities": [{"entity": 1, "clusters": 2}],
    ...           "merging_clusters": [{"cluster": 0, "entities": 2}]}
    >>> named_report(report, codes)
    {'split_entities': [{'entity': 'e2', 'clusters': 2}], 'merging_clusters': [{'cluster': 'c1', 'entities': 2}]}
    """
    lt, lp = codes[0].labels, codes[1].labels
    for entry in report["split_entities"]:
        entry["entity"] = lt[entry["entity"]]
    for entry in report["merging_clusters"]:
        entry["cluster"] = lp[entry["cluster"]]
    return report


def _ones(t, w):
    return np.ones(len(t), np.int64) if w is None else w


def _joined(blocks: list) -> tuple:
    """``(t, p, w)`` of blocks of coded rows, one after another (``w`` ``None``: each 1)."""
    if len(blocks) == 1:
        return blocks[0]
    t = np.concatenate([b[0] for b in blocks])
    p = np.concatenate([b[1] for b in blocks])
    w = (None if all(b[2] is None for b in blocks)
         else np.concatenate([_ones(b[0], b[2]) for b in blocks]))
    return t, p, w


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

    Rows are taken as blocks of codes (:meth:`take`, O(1) per block; :meth:`take_rows` codes label
    rows first); the tables catch up at each report, publication or checkpoint (:meth:`flush`):
    the all-time table (keyed by the codes, as ``score``'s) by one
    :meth:`~streameval.Evaluator.update_many` of the pending codes, the window (the last
    ``window`` rows) by the net change of its cells, or rebuilt when that is cheaper; the drop
    detection by one :meth:`~streameval.detect.BlockDrops.update_many` of the codes. What broke
    (``breakdown``) is refreshed for each changed cell at each catch-up; without ``breakdown``
    it is not kept (and not reported). The values are those of updating row by row (the tables
    hold integer counts; the order of updates and the keys of the cells do not change them).
    Labels are shown and saved, never codes: what broke names the labels (:func:`named_report`
    over the all-time table), a checkpoint holds the table of the labels (:func:`labelled_dict`)
    and a resumed one is coded anew (:func:`coded_table`).

    Four rows in a window of 2: the all-time table has purity ``(2 + 1)/4`` and Rand ``3/6``; the
    window holds ``(1, a), (1, b)``, two pure columns (purity 1) whose one pair is apart in the
    prediction and together in the truth (Rand 0):

    >>> from streameval import Purity, Rand
    >>> state = WatchState([Purity, Rand], window=2)
    >>> state.take_rows([(0, "a", 1), (0, "a", 1), (1, "a", 1), (1, "b", 1)])
    >>> state.elements, state.cells      # taken; the tables catch up at the next report
    (4, 0)
    >>> v = state.values()
    >>> v["all"], v["window"], state.cells
    ({'Purity': 0.75, 'Rand': 0.5}, {'Purity': 1.0, 'Rand': 0.0}, 3)
    >>> state.window_rows()
    [(1, 'a', 1), (1, 'b', 1)]
    """

    def __init__(self, classes, window: int, drops: BlockDrops | None = None, top: int = 5,
                 codes=None, breakdown: bool = True):
        self.classes = classes
        self.codes = codes if codes is not None else (Codes(), Codes())
        self.all = evaluator(classes)
        self.size = window
        self.win = evaluator(classes) if window else None
        self._window: deque = deque()  # the window's rows: blocks (t, p, w) of codes
        self._wrows = 0  # rows in it
        self.pending: list = []  # blocks (t, p, w) of codes not yet in the tables
        self._fed = 0  # how many of them drop detection has already taken (:meth:`alarms`)
        self.drops = drops
        self.recent = max(window, 10 * drops.block) if drops is not None else 0
        self.top = top
        self.breakdown = breakdown
        self.account = self._new_account() if breakdown else None
        self.rows = self.skipped = self.offset = self.line = 0
        self.header = self.fingerprint = None
        self.updated = time.time()  # when the last row was taken
        self.sample: SampleEstimator | None = None  # watch --sample: instead of the tables

    def _new_account(self) -> ErrorAccount:
        """What broke over the window's table (keyed by the labels) or, without a window, the
        all-time one (keyed by the codes); ties listed by label
        (:func:`~streameval.breakdown.label_order`), not by code."""
        if self.win is not None:
            return ErrorAccount(self.win.table)
        lt, lp = self.codes[0].labels, self.codes[1].labels
        return ErrorAccount(self.all.table, order=(lambda c: label_order(lt[c]),
                                                   lambda c: label_order(lp[c])))

    def use_sample(self, design: str) -> None:
        """Estimate from a labelled sample (``watch --sample``): rows go to a
        :class:`~streameval.SampleEstimator`; the tables, window and drops stay off. O(1)."""
        self.sample = SampleEstimator(design=design)

    def take(self, t, p, w=None) -> None:
        """Take a block of validated rows: ``t``, ``p`` int64 codes of :attr:`codes`, ``w`` their
        weights (``None``: each 1). O(1)."""
        self.pending.append((t, p, w))

    def take_rows(self, rows) -> None:
        """Take ``(t, p, w)`` label rows (coded here). O(rows)."""
        if rows:
            self.take(*coded(self.codes, rows))

    @property
    def cells(self) -> int:
        """The cells of the all-time table (as of the last catch-up). O(1)."""
        return self.all.table.cells

    def alarms(self) -> int:
        """The drops flagged so far, drop detection first given the rows taken (the tables do
        not catch up). O(the rows not yet given to it)."""
        if self.drops is None:
            return 0
        fed = self._fed
        blocks = self.pending[fed:]
        if blocks:
            joined = _joined(blocks)
            self.drops.update_many(*joined)
            self.pending[fed:] = [joined]  # joined once: the catch-up reads these codes again
        self._fed = len(self.pending)
        return len(self.drops.drops)

    @property
    def elements(self) -> int:
        """The elements taken: those counted in the tables (or the estimator) plus the pending
        ones' weights. O(pending blocks)."""
        held = self.all.table.n if self.sample is None else self.sample.n
        return held + sum(len(t) if w is None else int(w.sum()) for t, _, w in self.pending)

    def _decoded(self, t, p, w) -> list:
        """The label rows of coded ones. O(rows)."""
        lt, lp = self.codes[0].labels, self.codes[1].labels
        ws = [1] * len(t) if w is None else w.tolist()
        return [(lt[a], lp[b], c) for a, b, c in zip(t.tolist(), p.tolist(), ws)]

    def flush(self) -> None:
        """Bring the tables up to date with the pending rows: one ``update_many`` of their codes
        into the all-time table, the window's net change of cells (or a rebuild), the drop
        detection's blocks. O(pending rows) in numpy plus O(changed cells)."""
        blocks, fed = self.pending, self._fed
        if not blocks:
            return
        self.pending, self._fed = [], 0
        t, p, w = _joined(blocks)
        if self.sample is not None:
            update = self.sample.update
            for a, b, c in self._decoded(t, p, w):
                update(a, b, c)
            return
        self.all.update_many(t, p, w)  # keyed by the codes, as score's table
        if self.win is not None:
            self._flush_window(t, p, w)
        elif self.account is not None:
            self._refresh(t, p, w)
        if self.drops is not None and fed < len(blocks):
            self.drops.update_many(*(_joined(blocks[fed:]) if fed else (t, p, w)))

    def _refresh(self, t, p, w) -> None:
        """Refresh what broke for each cell the signed rows changed (already applied)."""
        if self.account is not None:  # over the all-time table: keyed by the codes
            self.account.refresh_many(zip(*(x.tolist() for x in _cells(t, p, w))))

    def _window_pop(self, rows: int) -> tuple:
        """Take the first ``rows`` rows out of the window: their codes and weights."""
        out = []
        window = self._window
        while rows:
            t, p, w = window[0]
            if len(t) <= rows:
                window.popleft()
                out.append((t, p, _ones(t, w)))
                rows -= len(t)
                self._wrows -= len(t)
            else:
                window[0] = (t[rows:], p[rows:], None if w is None else w[rows:])
                out.append((t[:rows], p[:rows], _ones(t[:rows], None if w is None else w[:rows])))
                self._wrows -= rows
                rows = 0
        empty = np.zeros(0, np.int64)
        return tuple(np.concatenate([b[k] for b in out]) if out else empty for k in range(3))

    def _flush_window(self, t, p, w) -> None:
        size, n = self.size, len(t)
        assert self.win is not None  # a window is kept
        leaving = max(0, self._wrows + n - size)
        if leaving + n > size:  # cheaper to rebuild from the rows it will hold
            if n >= size:  # only the last rows stay
                self._window.clear()
                t, p, w = t[n - size:], p[n - size:], None if w is None else w[n - size:]
                self._wrows = 0
            self._window.append((t, p, w))
            self._wrows += len(t)
            self._window_pop(self._wrows - size)
            self.win = evaluator(self.classes)
            wt, wp, ww = self.window_codes()
            add_codes(self.win, self.codes, wt, wp, ww)
            if self.account is not None:
                self.account = self._new_account()
            return
        ot, op, ow = self._window_pop(leaving)
        self._window.append((t, p, w))
        self._wrows += n
        ct, cp, cw = _cells(np.concatenate((ot, t)), np.concatenate((op, p)),
                            np.concatenate((-ow, _ones(t, w))))
        lt, lp = self.codes[0].labels, self.codes[1].labels
        gone = cw < 0
        for a, b, c in zip(ct[gone].tolist(), cp[gone].tolist(), cw[gone].tolist()):
            self.win.revert(lt[a], lp[b], -c)
        came = ~gone
        add_codes(self.win, self.codes, ct[came], cp[came], cw[came])
        if self.account is not None:
            self.account.refresh_many((lt[a], lp[b], c)
                                      for a, b, c in zip(ct.tolist(), cp.tolist(), cw.tolist()))

    def window_codes(self) -> tuple:
        """``(t, p, w)``: the codes and weights (``None``: each 1) of the window's rows. O(window)."""
        blocks = list(self._window)
        if not blocks:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), None
        return _joined(blocks)

    def window_rows(self) -> list:
        """The window's rows as ``(t, p, w)`` labels, oldest first (after :meth:`flush`). O(window)."""
        return self._decoded(*self.window_codes())

    def values(self) -> dict:
        """What a report shows: ``{"rows", "elements", "skipped", "all", "window", ...}`` (each
        metric's value over the all-time table and over the window; the drops and what broke when
        kept), after :meth:`flush`. Cost: the catch-up, then one reading of each table."""
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
        if self.account is not None:
            broke = self.account.report(self.top)
            out["broke"] = broke if self.win is not None else named_report(broke, self.codes)
        return out

    # -- checkpoint ----------------------------------------------------------------
    def to_body(self, input_desc: dict, fingerprint) -> dict:
        """The checkpoint's content (labels from the readers are str, int, float or bool). O(cells
        + window)."""
        self.flush()
        body = {
            "input": input_desc,
            "position": {"offset": self.offset, "line": self.line, "header": self.header,
                         "fingerprint": fingerprint},
            "rows": self.rows,
            "skipped": self.skipped,
            "table": labelled_dict(self.all.table, self.codes),
            "window": None,
        }
        if self.sample is not None:
            body["sample"] = self.sample.to_dict()
        if self.win is not None:  # the window's rows, saved as a CountWindow saves itself
            from ..window import CountWindow

            window = CountWindow(self.size, [cls() for cls in self.classes])
            for t, p, w in self.window_rows():
                window.update(t, p, w)
            body["window"] = window.to_dict()
        return body

    def load_body(self, body: dict, input_desc: dict, path: str) -> None:
        """Restore from a checkpoint body; raise :class:`CLIError` on anything inconsistent.
        O(cells + window)."""
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
            self.all = coded_table(table, self.codes, self.classes)
            win = body["window"]
            if (win is None) != (self.win is None) or (
                isinstance(win, dict) and win.get("size") != self.size
            ):
                size = 0 if win is None else win.get("size")
                refuse(f"its window size is {size}, but --window is {self.size}")
            items = None
            if win is not None:
                from ..window import CountWindow

                assert self.win is not None  # sizes agree above
                items = list(CountWindow.from_dict(win))
                if items:
                    t, p, w = coded(self.codes, items)
                    self._window.append((t, p, w))
                    self._wrows += len(t)
                    add_codes(self.win, self.codes, t, p, w)
            held = table if self.sample is None else _Held(self.sample.n, table.n)
            why = inconsistency(held, rows, items, input_desc.get("weight") is not None)
            if why:
                refuse(f"inconsistent state: {why}")
            if self.breakdown:
                self.account = self._new_account()
        except CLIError:
            raise
        except (ArithmeticError, KeyError, MemoryError, RecursionError, TypeError, ValueError,
                StreamevalError) as e:
            refuse(f"malformed content ({type(e).__name__}: {e})")
        self.offset, self.line, self.rows, self.skipped, self.header = (
            offset, line, rows, skipped, header)
