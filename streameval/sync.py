"""Threads: the rule, a lock-guarded wrapper, and the guard that detects concurrent mutation.

**The rule.** streameval's objects (:class:`~streameval.Contingency`, metrics,
:class:`~streameval.Evaluator`, the windows, :class:`~streameval.Monitor`,
:class:`~streameval.ClusterSummaries`) are **not thread-safe**: one object must be mutated by one
thread at a time. To share one across threads, wrap it in :class:`Synchronized`, which serialises
every method call with a lock. Objects that coordinate several tables (:class:`~streameval.CountWindow`,
:class:`~streameval.EventTimeWindow`, :class:`~streameval.Monitor`) and
:class:`~streameval.ClusterSummaries` also carry a cheap guard: a
mutation that starts while another is running on the same object raises
:class:`~streameval.errors.ConcurrentUseError` instead of corrupting the state. The guard is a
safety net, not a lock: the second caller fails, it does not wait.

>>> import threading
>>> from streameval import Contingency
>>> table = Synchronized(Contingency())
>>> def feed(k):
...     for i in range(1000):
...         table.update(i % 3, k)
>>> threads = [threading.Thread(target=feed, args=(k,)) for k in range(4)]
>>> for t in threads: t.start()
>>> for t in threads: t.join()
>>> table.n, table.k_pred
(4000, 4)
"""

from __future__ import annotations

import functools
import threading
import types

from .errors import ConcurrentUseError

__all__ = ["Synchronized"]


class Synchronized:
    """A proxy that calls the wrapped object's methods one at a time, under a re-entrant lock.

    ``Synchronized(obj)`` forwards every attribute to ``obj``; methods are wrapped so that each
    call holds :attr:`lock` (a ``threading.RLock``, or the ``lock`` you pass, e.g. to share one
    lock between several objects). A method that returns a generator (``Contingency.items``) is
    run to the end under the lock and returns an iterator over the collected values. ``len``,
    ``iter`` (a snapshot), ``[]``, ``repr`` and attribute assignment go through the lock too.

    Only calls made through the wrapper are serialised: an object reached through an attribute
    (``Synchronized(evaluator).table``) is the bare object; hold ``with wrapper.lock:`` around
    several calls that must see one state (a read-modify-write), or around access to such inner
    objects. Cost per call: one lock acquire and release (well under a microsecond) on top of the
    method's own cost.

    >>> from streameval import CountWindow, ELM
    >>> w = Synchronized(CountWindow(2, [ELM()]))
    >>> w.update(0, "a"); w.update(0, "a"); w.update(1, "b")
    >>> len(w), w.get()
    (2, {'ELM': 1.0})
    >>> with w.lock:                      # several calls that must see one state
    ...     snapshot = (list(w), w.get())
    """

    __slots__ = ("_obj", "lock")

    def __init__(self, obj, lock=None):
        if isinstance(obj, Synchronized):
            obj = obj.wrapped
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "lock", lock if lock is not None else threading.RLock())

    @property
    def wrapped(self):
        """The wrapped object (bare: calls on it are not serialised)."""
        return self._obj

    def __getattr__(self, name):
        lock = self.lock
        with lock:
            attr = getattr(self._obj, name)
        if not callable(attr) or isinstance(attr, type):
            return attr

        @functools.wraps(attr)
        def locked(*args, **kwargs):
            with lock:
                out = attr(*args, **kwargs)
                if isinstance(out, types.GeneratorType):
                    out = iter(list(out))
                return out

        return locked

    def __setattr__(self, name, value):
        with self.lock:
            setattr(self._obj, name, value)

    def __len__(self):
        with self.lock:
            return len(self._obj)

    def __iter__(self):
        with self.lock:
            return iter(list(self._obj))

    def __getitem__(self, key):
        with self.lock:
            return self._obj[key]

    def __repr__(self):
        with self.lock:
            return f"Synchronized({self._obj!r})"


def concurrent_use(obj, method: str):
    """Raise the :class:`ConcurrentUseError` of a guarded object whose guard is taken."""
    kind = type(obj).__name__
    raise ConcurrentUseError(
        f"{kind}.{method} was called while another call was changing the same {kind} (from "
        f"another thread, or re-entrantly from a callback): streameval objects are not "
        f"thread-safe; wrap a shared one in streameval.Synchronized"
    )


class Guarded:
    """Mix-in: a non-blocking guard (``self._guard``, a ``threading.Lock``) around mutations.

    A guarded method does ``if not self._guard.acquire(False): concurrent_use(self, "update")``,
    then its work in ``try`` / ``finally: self._guard.release()``. The lock is dropped when the
    object is pickled and made anew when it is unpickled.
    """

    def _init_guard(self) -> None:
        self._guard = threading.Lock()

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_guard", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_guard()
