"""Sliding windows built on revert: the metrics of the last elements only.

A window keeps the elements it holds, and reverts the oldest from a shared
:class:`~streameval.Evaluator` as new ones push it out, so every reading equals a batch computation
over the window's content.

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

from ._validate import check_weight
from .evaluator import Evaluator

__all__ = ["CountWindow"]


class CountWindow:
    """The metrics of the last ``size`` updates (each update, whatever its weight, is one slot).

    Parameters
    ----------
    size : the number of updates the window holds (>= 1).
    metrics : what :class:`~streameval.Evaluator` accepts (``None``: every O(1) metric).

    Cost: :meth:`update` is one table update plus at most one revert (O(1)); :meth:`get` is the
    evaluator's. Memory O(size + cells).
    """

    def __init__(self, size: int, metrics=None):
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"window size must be an int >= 1, got {size!r}")
        self.size = size
        self.evaluator = metrics if isinstance(metrics, Evaluator) else Evaluator(metrics)
        self._items: deque = deque()

    def update(self, y_true, y_pred, w=1) -> None:
        """Add an element; the oldest leaves once the window is full. O(1)."""
        w = check_weight(w)
        self.evaluator.update(y_true, y_pred, w)
        self._items.append((y_true, y_pred, w))
        if len(self._items) > self.size:
            self.evaluator.revert(*self._items.popleft())

    def get(self) -> dict:
        """``{name: value}`` over the window's content."""
        return self.evaluator.get()

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        """The window's ``(y_true, y_pred, w)`` updates, oldest first."""
        return iter(self._items)
