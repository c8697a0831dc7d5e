"""Shared intermediate quantities: what several metrics derive from the same table state, once.

Many metrics start from the same derived numbers: the pair counts ``(TP, PP, TT, C2(N))`` feed the
seven pair-counting metrics and BLANC; the entropies ``(H(T), H(P), MI)`` feed the five
information-theoretic ones. A :class:`Quantities` wraps one state of the statistics (a
:class:`~streameval.Contingency` at one ``version``, or a
:class:`~streameval.stats.ContingencyStats`) and computes each shared quantity on first use, at most
once; an :class:`~streameval.Evaluator` builds one per table version and hands it to every metric's
:meth:`~streameval.metrics.base.Metric.value`, so a reading of the whole suite computes each
intermediate once instead of once per metric.

The formulas do not move: each metric family declares its shared quantities next to its formulas
(:func:`shared`), as the same functions that compute them from the stats directly (for example
:func:`~streameval.metrics.pairs.pair_counts`). Such a function, given a :class:`Quantities`, returns
the value held there (computing it from the wrapped stats the first time); given a table or a
``ContingencyStats``, it computes it directly. Either way the same code runs on the same integers,
so a value read through a :class:`Quantities` is bit-identical to the value read from the table or
from ``ContingencyStats`` (the tests check it over the registry).

The native table also computes each O(1) metric's formula itself (:class:`NativeValue`, with the
same floating-point operations on the same integers, so the same bits): a metric's ``get()`` and an
``Evaluator``'s reading of all its metrics are then one native call each, and a :class:`Quantities`
serves the metrics read by their Python formula (subclasses, the reference table).

Every other attribute (``n``, ``sum_col_max``, ``items``, ...) is read from the wrapped stats on
first use and kept, so a metric written against the stats reads a :class:`Quantities` unchanged.
A :class:`Quantities` is a snapshot of one state: build a new one after the table changes
(:attr:`version` records the table's version when it was built; ``None`` for ``ContingencyStats``).

>>> from streameval import Contingency
>>> from streameval.metrics.pairs import pair_counts
>>> t = Contingency()
>>> for a, b in [(0, 0), (0, 0), (0, 1), (1, 1)]:
...     t.update(a, b)
>>> q = Quantities(t)
>>> pair_counts(q) == pair_counts(t) == (1, 2, 3, 6)
True
>>> q.n, q.version == t.version
(4, True)
"""

from __future__ import annotations

from functools import cached_property

from ..contingency import Formula

__all__ = ["Quantities", "quantities", "shared", "NativeValue"]

_SHARED: dict = {}  # quantity name -> function computing it from the stats (never a Quantities)


class _Held:
    """A class attribute of :class:`Quantities` that computes its value on first read, then is
    shadowed by the value kept in the instance's ``__dict__`` (a plain attribute read from then on).

    ``fn`` is ``None`` for a statistic read from the wrapped stats, else the shared quantity's
    function, applied to the wrapped stats.
    """

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn=None):
        self.name, self.fn = name, fn

    def __get__(self, q, owner=None):
        if q is None:
            return self
        fn = self.fn
        value = getattr(q.source, self.name) if fn is None else fn(q.source)
        q.__dict__[self.name] = value
        return value


def shared(fn):
    """Declare ``fn(stats)`` a shared quantity, held by :class:`Quantities` under ``fn.__name__``.

    ``fn`` must begin with ``if s.__class__ is Quantities: return s.<its name>`` so that it serves
    the held value when given a :class:`Quantities`. Returns ``fn`` (use it as a decorator).
    O(1), once per quantity, at import.

    >>> @shared
    ... def twice_n(s):
    ...     if s.__class__ is Quantities:
    ...         return s.twice_n
    ...     return 2 * s.n
    >>> from streameval.stats import ContingencyStats
    >>> twice_n(Quantities(ContingencyStats(n=3)))
    6
    >>> del _SHARED["twice_n"]; del Quantities.twice_n
    """
    name = fn.__name__
    if name in _SHARED and _SHARED[name] is not fn:
        raise ValueError(f"a shared quantity named {name!r} is already declared")
    if name in _STATS or name in ("source", "version"):
        raise ValueError(f"{name!r} is a statistic, not a derived quantity")
    _SHARED[name] = fn
    setattr(Quantities, name, _Held(name, fn))
    return fn


class Quantities:
    """One state of the statistics ``s`` and the shared quantities derived from it, each computed once.

    ``s``: a :class:`~streameval.Contingency` (read at its current ``version``), a
    :class:`~streameval.stats.ContingencyStats`, or a :class:`Quantities` (its stats are reused).
    Attribute access computes a declared shared quantity (:func:`shared`) on first use, or reads a
    statistic from ``s`` on first use; later reads are plain attribute reads. Cost: O(1) to build;
    each first read costs what computing that quantity costs (O(1) for every shared quantity).

    >>> from streameval.stats import ContingencyStats
    >>> q = Quantities(ContingencyStats.from_cells([(0, "x", 2), (1, "y", 2)]))
    >>> q.n, q.k_true, q.version is None
    (4, 2, True)
    """

    def __init__(self, s):
        if s.__class__ is Quantities:
            s = s.source
        self.source = s
        self.version = getattr(s, "version", None)

    def __getattr__(self, name: str):
        # Any other attribute of the wrapped stats (``items``, ...): read once, then held.
        if name[:2] == "__":  # never delegate protocol lookups (copy, pickle)
            raise AttributeError(name)
        value = getattr(self.source, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        held = ", ".join(k for k in self.__dict__ if k not in ("source", "version"))
        return f"Quantities({type(self.source).__name__}, version={self.version}, held: {held})"


try:  # the statistics every table and ContingencyStats has: one descriptor each (fast first read)
    from ..stats import STAT_NAMES as _STAT_NAMES
except ImportError:  # pragma: no cover - then __getattr__ reads them
    _STAT_NAMES = ()
_STATS = frozenset((*_STAT_NAMES, "f_sums"))
for _name in _STATS:
    setattr(Quantities, _name, _Held(_name))


def quantities(s) -> Quantities:
    """``s`` itself if it is a :class:`Quantities`, else a new one over ``s``. O(1).

    >>> from streameval.stats import ContingencyStats
    >>> q = quantities(ContingencyStats(n=2))
    >>> quantities(q) is q
    True
    """
    return s if s.__class__ is Quantities else Quantities(s)


class NativeValue:
    """Mixin of the metrics whose formula the native table also computes (``src/values.rs``).

    A class declares ``_formula``, the name of its formula in the native registry (the one table
    ``FORMULAS`` of ``src/values.rs``; refined by :meth:`_formula_key` for parameters that pick
    another formula) and :meth:`_formula_param` (``beta``, when it has one): the name is the whole
    contract between the two languages (``tests/test_native_values.py`` fails when a metric names
    a formula the registry lacks, or the reverse). ``get()`` then asks the table for the value
    directly, in one native call with the same floating-point operations as
    :meth:`~streameval.metrics.base.Metric.value` (bit-identical; the tests compare the bits); an
    :class:`~streameval.Evaluator` reads all such metrics in one call. The Python formula stays
    the definition and runs whenever the native one does not apply: a subclass that does not
    declare ``_formula`` itself, a table without the native reading
    (:class:`~streameval.reference.ReferenceContingency`), no extension built, or a formula the
    native one leaves to Python (sums beyond the native widths, or a Python error: the native
    call then answers ``None`` and the Python formula gives the same value or the same error).

    Cost of ``get()``: O(1), one native call.

    >>> from streameval import AdjustedRand
    >>> m = AdjustedRand()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     m.update(t, p)
    >>> m.get() == m.value(m.table), m.native_formula.name
    (True, 'AdjustedRand')
    """

    _formula = ""

    def _formula_key(self) -> str:
        """The formula's name in the native registry for this instance's parameters."""
        return self._formula

    def _formula_param(self) -> float:
        """The formula's float parameter (``beta``), 0.0 when it has none."""
        return 0.0

    @cached_property
    def native_formula(self):
        """The native :class:`~streameval.contingency.Formula` of this metric (looked up by
        name, with its parameter), or ``None`` (then the Python formula runs): what :meth:`get`
        and an :class:`~streameval.Evaluator`'s one native reading pass to the table.
        ``KeyError`` when the registry has no formula of that name. Computed once per metric
        (its parameters are fixed at construction). O(1)."""
        if Formula is None or "_formula" not in type(self).__dict__:  # a subclass may redefine the value
            return None
        return Formula(self._formula_key(), float(self._formula_param()))

    def get(self) -> float:
        """The metric's current value, from the table's running sums: the metric's :meth:`value`
        formula, computed by the native table with the same operations when it can. O(1)."""
        formula = self.native_formula
        table = self._table  # type: ignore[attr-defined]
        if formula is not None:
            v = formula.read(table)  # None for a table without native formulas
            if v is not None:
                return v
        return self.value(table)  # type: ignore[attr-defined]
