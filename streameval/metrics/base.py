"""The metric protocol: small stateful views over a shared :class:`~streameval.Contingency`.

A metric is River-compatible: ``update(y_true, y_pred, w=1)``, ``revert`` with the same arguments,
``get()``, ``bigger_is_better``, ``works_with(model)``, ``clone()``. It owns a table when used alone;
an :class:`~streameval.Evaluator` binds many metrics to one shared table instead. The value is a
pure function of the table's sufficient statistics (:meth:`Metric.value`), so a
:class:`~streameval.stats.ContingencyStats` computed elsewhere (a distributed engine) gives the same
value through the same code.

Class attributes declare the metadata that the common tests check over the registry:
``bigger_is_better``, ``bounds`` (inclusive ``(low, high)``), ``symmetric`` (swapping the roles of
true and predicted labels leaves the value unchanged) and ``adjusted`` (expected value 0 under
random labelling).
"""

from __future__ import annotations

import sys
from typing import Any

from ..contingency import Contingency
from ..stats import ONE

__all__ = ["Metric", "REGISTRY"]

REGISTRY: dict = {}
"""``{class name: class}`` of every metric class (each subclass of :class:`Metric` registers itself)."""


class Described:
    """What every metric object shares: its parameters (``_params``), a name, ``clone``, ``repr``.

    >>> class Half(Described):
    ...     def __init__(self, k=2):
    ...         self._params = {} if k == 2 else {"k": k}
    ...     def get(self):
    ...         return 0.5
    >>> Half(k=3).name, repr(Half())
    ('Half(k=3)', 'Half: 0.500000')
    """

    _params: dict = {}

    def get(self) -> Any:
        """The current value (each kind of metric defines it)."""
        raise NotImplementedError

    def clone(self):
        """A fresh, empty metric with the same parameters."""
        return type(self)(**self._params)

    @property
    def name(self) -> str:
        """The class name, with the parameters that differ from the defaults."""
        if not self._params:
            return type(self).__name__
        args = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({args})"

    def __repr__(self) -> str:
        return f"{self.name}: {self.get():.6f}"


class Metric(Described):
    """Base class of the label metrics.

    Subclasses implement :meth:`value` from the stats (O(1) unless they say otherwise) and may
    override :meth:`_attach` to ask the table for extra running sums.
    """

    bigger_is_better = True
    bounds = (0.0, 1.0)
    symmetric = False
    adjusted = False
    requires_labels = True

    def __init_subclass__(cls, register=True, **kw):
        super().__init_subclass__(**kw)
        if register and not cls.__name__.startswith("_"):
            REGISTRY[cls.__name__] = cls

    def __init__(self, **params: Any) -> None:
        self._params = params
        self._table = Contingency()
        self._attach(self._table)
        if "river.metrics.base" in sys.modules:
            _register_with_river()

    # -- the table ---------------------------------------------------------
    @property
    def table(self) -> Contingency:
        """The contingency table this metric reads (shared when bound by an Evaluator)."""
        return self._table

    def _attach(self, table: Contingency) -> None:
        """Ask ``table`` for the running sums this metric needs (none by default)."""

    def _bind(self, table: Contingency) -> None:
        if self._table is not table and self._table.n:
            raise ValueError(
                f"{self.name} has already seen {self._table.n} elements; bind a fresh metric"
            )
        self._table = table
        self._attach(table)

    # -- River's protocol --------------------------------------------------
    def update(self, y_true, y_pred, w=1) -> None:
        """Add ``w`` elements (labels ``y_true``, ``y_pred``) to the table. O(1)."""
        self._table.update(y_true, y_pred, w)

    def revert(self, y_true, y_pred, w=1) -> None:
        """Undo :meth:`update` with the same arguments. O(1)."""
        self._table.revert(y_true, y_pred, w)

    def get(self) -> float:
        """The metric's current value, from the table's running sums."""
        return self.value(self._table)

    def value(self, s) -> float:  # pragma: no cover - abstract
        """The value from sufficient statistics ``s``: the one formula for every source.

        ``s`` is a :class:`~streameval.Contingency`, a
        :class:`~streameval.stats.ContingencyStats` (a distributed engine's result), or a
        :class:`~streameval.metrics.quantities.Quantities` wrapping either (an
        :class:`~streameval.Evaluator`'s shared reading, which computes the intermediate
        quantities several metrics need once); the three give bit-identical values.
        """
        raise NotImplementedError

    def works_with(self, model) -> bool:
        """``True`` for models that predict a label per element (River clusterers, classifiers)."""
        return callable(getattr(model, "predict_one", None)) or callable(
            getattr(model, "learn_predict_one", None)
        )


    def __add__(self, other):
        """``a + b``: a River ``Metrics`` union over one shared table (:func:`streameval.river.union`).

        Needs River (imported here, not by ``import streameval``).
        """
        from ..river import union

        return union(self, other)



_RIVER_REGISTERED = False


def _register_with_river() -> None:
    """Make River see streameval metrics as label (classification-style) metrics.

    River's ``ClassificationMetric.__add__`` refuses any right operand that is not one, so
    ``river_metric + streameval_metric`` needs streameval's :class:`Metric` registered as a virtual
    subclass (``abc`` registration: no River class changes, no River import by
    ``import streameval``). Called when River's metrics are already loaded: at ``import
    streameval``, by :mod:`streameval.river`, and when a metric is built.
    """
    global _RIVER_REGISTERED
    if _RIVER_REGISTERED:
        return
    try:
        from river.metrics.base import ClassificationMetric
    except ImportError:  # pragma: no cover - River absent
        return
    ClassificationMetric.register(Metric)
    _RIVER_REGISTERED = True


def ratio(num: int, den: int, empty: float = 1.0) -> float:
    """``num / den`` with exact integer division, and ``empty`` when ``den == 0``."""
    return num / den if den else empty


def fixed_mean(total: int, n: int, empty: float = 1.0) -> float:
    """A fixed-point sum divided by ``n`` (a mean over elements), ``empty`` when ``n == 0``."""
    return total / (n * ONE) if n else empty


def harmonic(p: float, r: float, beta: float = 1.0) -> float:
    """``(1+β²)PR / (β²P + R)``, 0 when the denominator is 0."""
    b2 = beta * beta
    d = b2 * p + r
    return (1 + b2) * p * r / d if d else 0.0

