"""The hand-over between ``watch``'s reader thread and its main thread."""

from __future__ import annotations

import threading
import time
from collections import deque

__all__ = ["Feed"]


class Feed:
    """Items from the reader thread to the main thread: a deque (appends and pops are atomic),
    an event to wake the main thread when items arrive, and a bound on what may wait.

    Cost O(1) per item on each side.

    >>> feed = Feed()
    >>> for k in range(3):
    ...     feed.put(k)
    >>> feed.take(0.0), feed.take(0.0)
    ([0, 1, 2], [])
    """

    LIMIT = 1 << 16

    def __init__(self):
        self.items: deque = deque()
        self.ready = threading.Event()
        self.stopped = False

    def put(self, item, limit: int | None = None) -> None:
        """Append ``item``, waiting while ``limit`` (default :attr:`LIMIT`) items wait (until the
        run stops). O(1) (plus the wait)."""
        items = self.items
        limit = self.LIMIT if limit is None else limit
        while len(items) >= limit and not self.stopped:
            time.sleep(0.005)
        items.append(item)
        if len(items) == 1:
            self.ready.set()

    def take(self, timeout: float, most: int = 8192) -> list:
        """Up to ``most`` items, waiting up to ``timeout`` seconds for the first. O(items taken)."""
        items = self.items
        if not items:
            self.ready.clear()
            if not items:
                self.ready.wait(timeout)
        pop = items.popleft
        return [pop() for _ in range(min(most, len(items)))]
