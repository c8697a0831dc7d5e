"""Sliding windows built on revert: the metrics of the last elements only.

A window keeps the elements it holds, and reverts the oldest from a shared
:class:`~streameval.Evaluator` as new ones push it out, so every reading equals a batch computation
over the window's content. :class:`CountWindow` holds the last ``size`` updates;
:class:`EventTimeWindow` holds the elements whose *event time* lies in the last ``span``, and
accepts elements that arrive out of order within an allowed lateness.

>>> from streameval import ELM, Purity
>>> w = CountWindow(3, [ELM(), Purity()])
>>> for t, p in [(0, "a"), (0, "a"), (1, "a"), (1, "b"), (1, "b")]:
...     w.update(t, p)
>>> w.get()
{'ELM': 0.4444444444444444, 'Purity': 1.0}
>>> len(w)
3
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from ._validate import check_label, check_weight
from .errors import InvalidLabelError, InvalidStateError, StreamevalError, require
from .evaluator import Evaluator
from .labels import same_label
from .state import check_header, header, label_from_json, label_index
from .sync import Guarded, concurrent_use

__all__ = ["CountWindow", "EventTimeWindow"]

_COUNT_FORMAT = "streameval.CountWindow"


class CountWindow(Guarded):
    """The metrics of the last ``size`` updates (each update, whatever its weight, is one slot).

    Parameters
    ----------
    size : the number of updates the window holds (>= 1).
    metrics : what :class:`~streameval.Evaluator` accepts (``None``: every O(1) metric).

    Cost: :meth:`update` is one table update plus at most one revert (O(1)); :meth:`get` is the
    evaluator's. Memory O(size + cells).

    Not thread-safe (see :mod:`streameval.sync`): an update that starts while another is running
    raises :class:`~streameval.errors.ConcurrentUseError`; share a window through
    :class:`~streameval.Synchronized`.

    After four updates a window of 3 holds ``(0, a), (1, a), (1, b)``: purity ``(1 + 1)/3``
    (column ``a`` is split 1-1), and of its 3 pairs only the one apart on both sides agrees
    (Rand ``1/3``):

    >>> from streameval import Purity, Rand
    >>> win = CountWindow(3, [Purity(), Rand()])
    >>> for t, p in [(0, "a"), (0, "a"), (1, "a"), (1, "b")]:
    ...     win.update(t, p)
    >>> len(win), win.get()
    (3, {'Purity': 0.666..., 'Rand': 0.333...})
    """

    def __init__(self, size: int, metrics=None):
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"window size must be an int >= 1, got {size!r}")
        self.size = size
        self.evaluator = metrics if isinstance(metrics, Evaluator) else Evaluator(metrics)
        # optional callback(y_true, y_pred, w) after an element leaves
        self.on_expire: Callable[[Any, Any, int], object] | None = None
        self._items: deque = deque()
        self._init_guard()

    def update(self, y_true, y_pred, w=1) -> None:
        """Add an element; the oldest leaves once the window is full. O(1)."""
        w = check_weight(w)
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "update")
        try:
            self.evaluator.update(y_true, y_pred, w)
            self._items.append((y_true, y_pred, w))
            if len(self._items) > self.size:
                item = self._items.popleft()
                self.evaluator.revert(*item)
            else:
                item = None
        finally:
            guard.release()
        if item is not None and self.on_expire is not None:
            self.on_expire(*item)

    def shift(self, leave: int, ts: list, ps: list, ws: list, y_true, y_pred, w) -> None:
        """Many updates at once, for a caller that accounts for what leaves itself (no
        ``on_expire`` calls): the ``leave`` oldest elements leave (each reverted), the new ones
        (``ts, ps, ws``, also given as the arrays ``y_true, y_pred, w`` for the table's
        ``update_many``; ``w`` may be ``None`` for unit weights) come in. The caller has
        validated them and keeps the window at most ``size`` long (``Monitor.update_many`` does).
        Cost: the table's one ``update_many`` and ``leave`` reverts.

        >>> import numpy as np
        >>> win = CountWindow(3)
        >>> for t, p in [(0, 0), (0, 0), (1, 1)]:
        ...     win.update(t, p)
        >>> win.shift(2, [1, 1], [2, 2], [1, 1], np.array([1, 1]), np.array([2, 2]), None)
        >>> list(win._items)  # the two oldest left, the two new came in
        [(1, 1, 1), (1, 2, 1), (1, 2, 1)]
        """
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "update_many")
        try:
            self.evaluator.update_many(y_true, y_pred, w)
            items = self._items
            revert = self.evaluator.revert
            for _ in range(leave):
                revert(*items.popleft())
            items.extend(zip(ts, ps, ws))
        finally:
            guard.release()

    def get(self) -> dict:
        """``{name: value}`` over the window's content (each metric's formula over the window's
        table). Cost: the evaluator's :meth:`~streameval.Evaluator.get`."""
        return self.evaluator.get()

    def relabel_pred(self, old, new) -> None:
        """Predicted cluster ``old`` becomes ``new`` in the window (see
        :meth:`Contingency.relabel_pred`). O(cells of the two columns + size).

        A cluster the window does not hold raises
        :class:`~streameval.errors.UnknownElementError`, as the table does, and changes nothing.

        >>> w = CountWindow(2)
        >>> w.update(0, "a")
        >>> w.relabel_pred("b", "a")
        Traceback (most recent call last):
        ...
        streameval.errors.UnknownElementError: relabel of predicted cluster 'b': it holds no elements
        """
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "relabel_pred")
        try:
            self.evaluator.table.relabel_pred(old, new)  # raises, unchanged, if old is unknown
            self._items = deque(
                (y, new if same_label(p, old) else p, w) for y, p, w in self._items
            )
        finally:
            guard.release()

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        """The window's ``(y_true, y_pred, w)`` updates, oldest first."""
        return iter(self._items)

    def to_dict(self) -> dict:
        """A JSON-safe dict: the size, the metrics (class name and parameters) and the held updates.

        Labels as in :meth:`Contingency.to_dict` (version 2): each once, in ``labels``; each
        held update is ``[true position, pred position, w]``, oldest first. O(size log size).

        >>> import json
        >>> from streameval import ELM
        >>> w = CountWindow(2, [ELM(beta=2.0)])
        >>> for t, p in [(0, "a"), (0, "a"), (1, "b")]:
        ...     w.update(t, p)
        >>> d = json.loads(json.dumps(w.to_dict()))
        >>> d["metrics"], d["labels"], d["items"]
        ([['ELM(beta=2.0)', 'ELM', {'beta': 2.0}]], {'true': [0, 1], 'pred': ['a', 'b']}, [[0, 0, 1], [1, 1, 1]])
        >>> CountWindow.from_dict(d).get() == w.get()
        True
        """
        true, t_at = label_index(t for t, _, _ in self._items)
        pred, p_at = label_index(p for _, p, _ in self._items)
        return {
            **header(_COUNT_FORMAT, 2),
            "size": self.size,
            "metrics": [
                [name, type(m).__name__, m.params]
                for name, m in self.evaluator.metrics.items()
            ],
            "labels": {"true": true, "pred": pred},
            "items": [[t_at[t], p_at[p], w] for t, p, w in self._items],
        }

    @classmethod
    def from_dict(cls, state: dict) -> CountWindow:
        """Rebuild a window from :meth:`to_dict` by replaying its updates. O(size).

        Raises :class:`~streameval.errors.InvalidStateError` naming the first problem found.

        >>> CountWindow.from_dict({"format": "streameval.CountWindow", "version": 1, "size": 3,
        ...                        "metrics": 5, "items": []})
        Traceback (most recent call last):
        ...
        streameval.errors.InvalidStateError: 'metrics' must be a list of [name, class, params], got 5
        """
        from .metrics import REGISTRY

        check_header(state, _COUNT_FORMAT, (1, 2), ("size", "metrics", "items"))
        size = state["size"]
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise InvalidStateError(f"the window size must be an int >= 1, got {size!r:.80}")
        specs = state["metrics"]
        if not isinstance(specs, list):
            raise InvalidStateError(
                f"'metrics' must be a list of [name, class, params], got {specs!r:.80}"
            )
        metrics = {}
        for k, spec in enumerate(specs):
            try:
                name, kind, params = spec
                if not isinstance(name, str) or not isinstance(kind, str):
                    raise TypeError("name and class must be strings")
                if not isinstance(params, dict):
                    raise TypeError("params must be a dict")
                if name in metrics:
                    raise ValueError(f"duplicate metric name {name!r}")
                metrics[name] = REGISTRY[kind](**params)
            except (TypeError, ValueError, KeyError) as e:
                raise InvalidStateError(
                    f"metrics[{k}]: cannot rebuild {spec!r:.80}: {e!r:.200}"
                ) from None
        items = state["items"]
        try:
            window = cls(state["size"], metrics)
        except ValueError as e:
            raise InvalidStateError(f"invalid CountWindow state: {e}") from None
        if not isinstance(items, list) or len(items) > window.size:
            raise InvalidStateError(f"'items' must be a list of at most {window.size} updates")
        read = _indexed_labels(state) if state["version"] == 2 else None
        for k, item in enumerate(items):
            try:
                t, p, w = item
                if isinstance(w, bool) or not isinstance(w, int):
                    raise TypeError(f"the weight must be an int, got {w!r:.80}")
                if read is None:
                    t, p = label_from_json(t), label_from_json(p)
                else:
                    t, p = read[0][_position(t)], read[1][_position(p)]
                window.update(t, p, w)
            except (TypeError, ValueError, RecursionError, IndexError) as e:
                raise InvalidStateError(f"items[{k}]: {item!r:.80}: {e!s:.300}") from None
        return window


def _indexed_labels(state) -> tuple[list, list]:
    """The true and predicted labels of a version-2 window state's index, each read once (so
    distinct tuple labels holding NaN stay distinct)."""
    labels = state.get("labels")
    if not (isinstance(labels, dict) and isinstance(labels.get("true"), list)
            and isinstance(labels.get("pred"), list)):
        raise InvalidStateError("'labels' must be {\"true\": [labels], \"pred\": [labels]}")
    try:
        return ([label_from_json(v, fresh_nan=True) for v in labels["true"]],
                [label_from_json(v, fresh_nan=True) for v in labels["pred"]])
    except (InvalidLabelError, RecursionError) as e:
        raise InvalidStateError(f"labels: {e!s:.300}") from None


def _position(v) -> int:
    """A position into the label index (an int >= 0; a bool or a float is refused)."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise TypeError(f"a label position must be an int >= 0, got {v!r:.80}")
    return v


class EventTimeWindow(Guarded):
    """The metrics of the elements whose event time lies in ``(now - span, now]``.

    ``now`` is the largest event time seen so far (a number, or a ``datetime`` with a
    ``timedelta`` span). Elements may arrive out of order: one whose time is at most ``lateness``
    behind ``now`` and still inside the window is added in its place; a later one is *late*: it is
    dropped and counted in :attr:`late` (or raises :class:`~streameval.errors.StreamevalError`
    when ``on_late="raise"``). When ``now`` advances, the elements that fall out of the window are
    reverted, oldest event time first, so :meth:`get` always equals a batch computation over the
    elements in ``(now - span, now]``.

    Parameters
    ----------
    span : the window's length in event time (> 0).
    metrics : what :class:`~streameval.Evaluator` accepts (``None``: every O(1) metric).
    lateness : how far behind ``now`` an element may arrive (default: ``span``, i.e. anything
        that still falls inside the window).
    on_late : ``"drop"`` (default, counted in :attr:`late`) or ``"raise"``.

    Cost: :meth:`update` is one table update plus O(log m) to keep the m held elements in event-time
    order (a ``sortedcontainers.SortedList``, imported when a window is built), plus one revert
    and O(log m) per element that expires; :meth:`get` is the evaluator's. Memory O(m + cells).

    >>> from streameval import ELM, Purity
    >>> w = EventTimeWindow(10, [ELM(), Purity()], lateness=5)
    >>> for t, (y, p) in zip([0, 4, 2, 11, 12], [(0, "a"), (0, "a"), (1, "a"), (1, "b"), (1, "b")]):
    ...     w.update(y, p, t=t)         # t=2 arrives late, within the lateness: kept in order
    >>> [t for t, *_ in w]             # now = 12: times 0 and 2 have left the window (12 - 10)
    [4, 11, 12]
    >>> w.get()
    {'ELM': 1.0, 'Purity': 1.0}
    >>> w.update(0, "a", t=3)           # 9 behind now: later than the lateness allows
    >>> w.late, len(w)
    (1, 3)
    """

    def __init__(self, span, metrics=None, lateness=None, on_late: str = "drop"):
        SortedKeyList = require("sortedcontainers", "EventTimeWindow", "window").SortedKeyList

        try:
            positive = span > span * 0
        except TypeError:
            positive = False
        if isinstance(span, bool) or not positive:
            raise ValueError(f"span must be a positive number or timedelta, got {span!r}")
        if lateness is None:
            lateness = span
        elif isinstance(lateness, bool) or not lateness >= span * 0:
            raise ValueError(f"lateness must be >= 0, got {lateness!r}")
        if on_late not in ("drop", "raise"):
            raise ValueError(f'on_late must be "drop" or "raise", got {on_late!r}')
        self.span = span
        self.lateness = lateness
        self.on_late = on_late
        self.evaluator = metrics if isinstance(metrics, Evaluator) else Evaluator(metrics)
        # optional callback(y_true, y_pred, w) after an element leaves
        self.on_expire: Callable[[Any, Any, int], object] | None = None
        self.now = None  # the largest event time seen
        self.late = 0  # elements dropped for arriving too late
        self._seq = 0  # arrival counter: orders ties, so labels are never compared
        self._items = SortedKeyList(key=_event_key)
        self._init_guard()

    def update(self, y_true, y_pred, w=1, *, t) -> None:
        """Add ``w`` elements with event time ``t``; expire what leaves the window. O(log m)."""
        w = check_weight(w)
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "update")
        try:
            self._update(y_true, y_pred, w, t)
        finally:
            guard.release()

    def _time_error(self, t) -> StreamevalError:
        return StreamevalError(
            f"event time {t!r} must be a number or datetime, comparable with the window's "
            f"time {self.now!r} and its span {self.span!r}"
        )

    def _update(self, y_true, y_pred, w, t) -> None:
        now = self.now
        try:
            t - self.span
            if t != t or getattr(t, "ndim", 0):  # NaN, or an array (not one time)
                raise TypeError
            too_late = now is not None and bool(t < now - self.lateness or t <= now - self.span)
        except (TypeError, ValueError):  # ValueError: an array, whose comparisons are not one bool
            raise self._time_error(t) from None
        if too_late:
            if self.evaluator.table.missing == "raise":
                check_label(y_true, "y_true")
                check_label(y_pred, "y_pred")
            if self.on_late == "raise":
                raise StreamevalError(
                    f"event time {t!r} is too late: the window is at {now!r} with span "
                    f"{self.span!r} and lateness {self.lateness!r}"
                )
            self.late += w
            return
        self.evaluator.update(y_true, y_pred, w)  # validates the labels before any change
        self._seq += 1
        self._items.add((t, self._seq, y_true, y_pred, w))
        if now is None or t > now:
            self._expire(t)

    def advance(self, t) -> None:
        """Move ``now`` to ``t`` without an element (a clock tick); expire what leaves. O(log m)."""
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "advance")
        try:
            try:  # the time rule of update: a NaN or an incomparable time changes nothing
                t - self.span
                if t != t or getattr(t, "ndim", 0):
                    raise TypeError
                later = self.now is None or bool(t > self.now)
            except (TypeError, ValueError):
                raise self._time_error(t) from None
            if later:
                self._expire(t)
        finally:
            guard.release()

    def _expire(self, t) -> None:
        self.now = t
        items, edge = self._items, t - self.span
        revert = self.evaluator.revert
        while items and items[0][0] <= edge:
            _, _, y_true, y_pred, w = items.pop(0)
            revert(y_true, y_pred, w)
            if self.on_expire is not None:
                self.on_expire(y_true, y_pred, w)

    def get(self) -> dict:
        """``{name: value}`` over the elements in ``(now - span, now]`` (each metric's formula over
        the window's table). Cost: the evaluator's :meth:`~streameval.Evaluator.get`."""
        return self.evaluator.get()

    def relabel_pred(self, old, new) -> None:
        """Predicted cluster ``old`` becomes ``new`` in the window (see
        :meth:`Contingency.relabel_pred`). O(cells of the two columns + m). A cluster the window
        does not hold raises :class:`~streameval.errors.UnknownElementError` and changes nothing,
        as :meth:`CountWindow.relabel_pred`."""
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "relabel_pred")
        try:
            self.evaluator.table.relabel_pred(old, new)  # raises, unchanged, if old is unknown
            items = [
                (t, s, y, new if same_label(p, old) else p, w) for t, s, y, p, w in self._items
            ]
            self._items.clear()
            self._items.update(items)
        finally:
            guard.release()

    def __len__(self) -> int:
        """The number of updates held."""
        return len(self._items)

    def __iter__(self):
        """The held ``(t, y_true, y_pred, w)`` updates by event time (arrival order on ties)."""
        return ((t, y, p, w) for t, _, y, p, w in self._items)


def _event_key(item):
    return item[0], item[1]
