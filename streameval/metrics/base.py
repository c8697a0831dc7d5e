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
random labelling). Two more declare what a metric needs, so that the engines, the resolver and the
resampling code read a flag instead of a class name: ``on_demand`` (the value is not a function of
the O(1) sums: computed in ``get()`` from the table) and ``from_sizes`` (an on-demand value that
the sums plus the two cluster-size histograms determine, see :meth:`Metric.value_from_sizes`).

River's side of the protocol lives here too (:func:`union`, behind ``metric + metric``, and
:func:`register_with_river`), so that :mod:`streameval.river` depends on this module and not the
other way round.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, ClassVar

from ..contingency import Contingency
from ..errors import require
from ..stats import ONE

__all__ = ["Metric", "REGISTRY", "union", "register_with_river"]

REGISTRY: dict = {}
"""``{class name: class}`` of every metric class (each subclass of :class:`Metric` registers itself)."""


class Described:
    """What every metric object shares: its parameters (:attr:`params`), a name, ``clone``, ``repr``.

    >>> class Half(Described):
    ...     def __init__(self, k=2):
    ...         self._params = {} if k == 2 else {"k": k}
    ...     def get(self):
    ...         return 0.5
    >>> Half(k=3).name, repr(Half()), Half(k=3).params
    ('Half(k=3)', 'Half: 0.500000', {'k': 3})
    """

    _params: dict = {}

    def get(self) -> Any:
        """The current value (each kind of metric defines it)."""
        raise NotImplementedError

    @property
    def params(self) -> dict:
        """The constructor arguments that differ from the defaults (a fresh dict). O(params).

        ``type(m)(**m.params)`` builds a fresh metric equal in kind to ``m``: this is what
        :meth:`clone` does and what a saved window records.
        """
        return dict(self._params)

    def clone(self):
        """A fresh, empty metric with the same parameters. O(params) (plus the new metric's own
        empty table)."""
        return type(self)(**self._params)

    @property
    def name(self) -> str:
        """The class name, with the parameters that differ from the defaults. O(params)."""
        if not self._params:
            return type(self).__name__
        args = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({args})"

    def __repr__(self) -> str:
        return f"{self.name}: {self.get():.6f}"


class Metric(Described):
    """Base class of the label metrics.

    Subclasses implement :meth:`value` from the stats (O(1) unless they say otherwise) and, when
    they read element-averaged F sums, list them in :attr:`f_specs` (the table tracks those sums
    once the metric is bound). Each subclass's formula is in table terms (``n[i,j]`` cells,
    ``a[i]`` row and ``b[j]`` column sums, ``N`` elements): e.g. pair precision
    ``TP/PP = (Σn² - N)/(Σb² - N)``. :meth:`update` and :meth:`revert` are the table's (O(1)).

    >>> from streameval import ELM, AdjustedMutualInfo, AdjustedRand, CEAF
    >>> AdjustedRand.on_demand, CEAF.on_demand, AdjustedMutualInfo.from_sizes
    (False, True, True)
    >>> ELM(beta=2.0).f_specs
    [('elm', 2.0), ('elm', 1.0)]
    >>> from streameval import PairPrecision
    >>> m = PairPrecision()
    >>> for t, p in [(0, "a"), (0, "a"), (1, "a")]:   # Σn² = 5, Σb² = 9, N = 3
    ...     m.update(t, p)
    >>> m.get(), (5 - 3) / (9 - 3)
    (0.333..., 0.333...)
    >>> m.revert(1, "a"); m.get()                       # (4 - 2)/(4 - 2)
    1.0
    """

    bigger_is_better = True
    bounds = (0.0, 1.0)
    symmetric = False
    adjusted = False
    requires_labels = True
    on_demand: ClassVar[bool] = False
    """``True`` when the value is not a function of the O(1) running sums (an optimal matching, the
    expected mutual information): it is computed in ``get()`` from the bound table's cells or
    margins and cached per table version. ``Evaluator()`` and ``resolve("all")`` leave such
    metrics out; resampling (:mod:`streameval.bootstrap`, :func:`streameval.compare`) refuses
    them, since their value does not add over units."""
    from_sizes: ClassVar[bool] = False
    """``True`` for an on-demand metric whose value the sums plus the two cluster-size histograms
    ``{size: clusters}`` determine (:meth:`value_from_sizes`): the distributed engines, which
    return exactly these, report it. ``False`` for the metrics that need the cells themselves."""

    native_formula: Any = None
    """The native formula the table computes this metric's value with (declared by name:
    :class:`~streameval.metrics.quantities.NativeValue`), or ``None``: Python reads the metric
    (:meth:`shared_value`)."""

    def __init_subclass__(cls, register=True, **kw):
        super().__init_subclass__(**kw)
        if register and not cls.__name__.startswith("_"):
            REGISTRY[cls.__name__] = cls

    def __init__(self, **params: Any) -> None:
        self._params = params
        self._table = Contingency()
        self._track(self._table)
        if "river.metrics.base" in sys.modules:
            register_with_river()

    # -- the table ---------------------------------------------------------
    @property
    def table(self) -> Contingency:
        """The contingency table this metric reads (shared when bound by an Evaluator). O(1)."""
        return self._table

    @property
    def f_specs(self) -> list[tuple[str, float]]:
        """The element-averaged F sums ``(kind, beta)`` that :meth:`value` reads (none by default).

        ``kind`` is ``"elm"`` or ``"bcubed"``; the sum is ``Σ_cells F_β(cell)`` as
        :meth:`Contingency.track_f` keeps it. A bound table tracks these; an engine computes
        exactly these from its histograms. O(1).
        """
        return []

    def _track(self, table: Contingency) -> None:
        for kind, beta in self.f_specs:
            table.track_f(kind, beta)

    def bind(self, table: Contingency) -> None:
        """Read ``table`` from now on, and make it track the sums in :attr:`f_specs`.

        This is how an :class:`~streameval.Evaluator` (or a River union) shares one table among
        many metrics. The metric must be fresh (its own table empty), otherwise
        ``ValueError``, with nothing changed. Cost: O(1), plus O(cells) once for each F sum the
        table starts tracking.

        >>> from streameval import Contingency, ELM
        >>> t = Contingency(); t.update(0, "a")
        >>> m = ELM(); m.bind(t)
        >>> m.table is t, t.tracked_f(), m.get()
        (True, [('elm', 1.0)], 1.0)
        >>> ELM().bind(t); m.bind(Contingency())
        Traceback (most recent call last):
        ...
        ValueError: ELM has already seen 1 elements; bind a fresh metric
        """
        if self._table is not table and self._table.n:
            raise ValueError(
                f"{self.name} has already seen {self._table.n} elements; bind a fresh metric"
            )
        self._table = table
        self._track(table)

    # -- River's protocol --------------------------------------------------
    def update(self, y_true, y_pred, w=1) -> None:
        """Add ``w`` elements (labels ``y_true``, ``y_pred``) to the table. O(1)."""
        self._table.update(y_true, y_pred, w)

    def revert(self, y_true, y_pred, w=1) -> None:
        """Undo :meth:`update` with the same arguments. O(1)."""
        self._table.revert(y_true, y_pred, w)

    def get(self) -> float:
        """The metric's current value, ``value(table)``: the subclass's formula over the table's
        running sums. O(1) for the O(1) metrics; an on-demand metric states its own cost."""
        return self.value(self._table)

    def value(self, s) -> float:  # pragma: no cover - abstract
        """The value from sufficient statistics ``s``: the one formula for every source.

        ``s`` is a :class:`~streameval.Contingency`, a
        :class:`~streameval.stats.ContingencyStats` (a distributed engine's result), or a
        :class:`~streameval.metrics.quantities.Quantities` wrapping either (an
        :class:`~streameval.Evaluator`'s shared reading, which computes the intermediate
        quantities several metrics need once); the three give bit-identical values. O(1) unless
        the subclass says otherwise.
        """
        raise NotImplementedError

    def shared_value(self, q) -> float:
        """The value in an :class:`~streameval.Evaluator`'s Python reading, given the shared
        :class:`~streameval.metrics.quantities.Quantities` ``q`` of the table: :meth:`value`
        over ``q`` (each intermediate quantity computed once per table state, whichever metric
        asks first). A kind of metric that reads something else says so by overriding it: the
        on-demand metrics read the table ``q`` wraps (its cells, cached per version). O(1) here.

        >>> from streameval import Contingency, Rand
        >>> from streameval.metrics.quantities import Quantities
        >>> t = Contingency(); t.update_many([0, 0, 1], [0, 1, 1])
        >>> Rand().shared_value(Quantities(t)) == Rand().value(t)
        True
        """
        return self.value(q)

    def value_from_sizes(self, s, sizes_true: dict, sizes_pred: dict) -> float:
        """The value from the sums ``s`` and the cluster-size histograms ``{size: clusters}``.

        What a distributed engine can report: :meth:`value` for an O(1) metric (the histograms
        unused), the metric's own formula when :attr:`from_sizes` is set; ``TypeError`` for the
        on-demand metrics that need the cells. Cost: :meth:`value`'s, or the override's.

        >>> from streameval import AdjustedRand
        >>> from streameval.stats import ContingencyStats
        >>> s = ContingencyStats.from_cells([(0, 0, 2), (1, 1, 2)])
        >>> AdjustedRand().value_from_sizes(s, {2: 2}, {2: 2})
        1.0
        """
        if self.on_demand:
            raise TypeError(
                f"{self.name} needs the table's cells (an optimal matching), not only the sums "
                "and the cluster sizes; evaluate it on a Contingency"
            )
        return self.value(s)

    def works_with(self, model) -> bool:
        """``True`` for models that predict a label per element (River clusterers, classifiers).
        O(1)."""
        return callable(getattr(model, "predict_one", None)) or callable(
            getattr(model, "learn_predict_one", None)
        )


    def __add__(self, other):
        """``a + b``: a River ``Metrics`` union over one shared table (:func:`union`).

        Needs River (imported here, not by ``import streameval``).
        """
        return union(self, other)


# -- River's side of the protocol ---------------------------------------------------------
_RIVER_REGISTERED = False


def register_with_river() -> None:
    """Make River see streameval metrics as label (classification-style) metrics.

    River's ``ClassificationMetric.__add__`` refuses any right operand that is not one, so
    ``river_metric + streameval_metric`` needs streameval's :class:`Metric` registered as a virtual
    subclass (``abc`` registration: no River class changes, no River import by
    ``import streameval``). Called when River's metrics are already loaded: at ``import
    streameval``, by :mod:`streameval.river`, and when a metric is built. Idempotent; O(1).

    >>> from river.metrics.base import ClassificationMetric
    >>> from streameval import ELM
    >>> register_with_river(); isinstance(ELM(), ClassificationMetric)
    True
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


@functools.cache
def _union_class():
    Metrics = require("river.metrics.base", "a union of metrics (metric + metric)", "river").Metrics
    register_with_river()

    class SharedMetrics(Metrics):
        """A River ``Metrics`` union whose fresh streameval members share one table.

        ``update``/``revert`` change the shared table once, then the other members (River metrics,
        and streameval metrics that keep their own table because they, or the union, had already
        seen elements when they joined) one by one. Cost: one table update plus the other
        members' costs.
        """

        def __init__(self, metrics, str_sep="\n"):
            super().__init__([], str_sep)
            self.table = Contingency()
            for m in metrics:
                self.append(m)

        def append(self, m):
            if isinstance(m, Metric) and not m.table.n and not self.table.n:
                m.bind(self.table)  # both fresh: share; otherwise each keeps its own history
            super().append(m)

        def __add__(self, other):
            self.append(other)
            return self

        def _split(self):
            """(whether a member reads the shared table, the members that do not)."""
            table = self.table
            others = [m for m in self if not (isinstance(m, Metric) and m.table is table)]
            return len(others) < len(self), others

        def update(self, y_true, y_pred, w=1):
            self._all_or_none("update", "revert", y_true, y_pred, w)

        def revert(self, y_true, y_pred, w=1):
            self._all_or_none("revert", "update", y_true, y_pred, w)

        def _all_or_none(self, do, undo, y_true, y_pred, w):
            """``do`` on the shared table, then on each other member; if one refuses (an unknown
            revert in a member's own table, a bad label), ``undo`` the members already changed
            (update and revert are exact inverses) and re-raise: the union is as it was."""
            shared, others = self._split()
            done = []
            try:
                for target in ([self.table] if shared else []) + others:
                    getattr(target, do)(y_true, y_pred, w)
                    done.append(target)
            except BaseException:
                for target in reversed(done):
                    getattr(target, undo)(y_true, y_pred, w)
                raise

        def clone(self):
            return type(self)([m.clone() for m in self], self.str_sep)

    return SharedMetrics


def union(*metrics, str_sep: str = "\n"):
    """A ``river.metrics.base.Metrics`` of ``metrics`` that updates one shared table per element.

    Fresh streameval metrics are bound to the union's table (so the union costs one table update,
    whatever the number of metrics); River metrics, and streameval metrics that have already seen
    elements, are updated on their own. ``metric + metric`` on streameval metrics calls this
    (also exported as :func:`streameval.river.union`). ``get()`` returns the list of values,
    River's convention; ``progressive_val_score`` accepts it. Needs River.

    >>> from streameval import ELM, Purity
    >>> u = union(ELM(), Purity())
    >>> for t, p in [(0, "a"), (0, "a"), (1, "a")]:
    ...     u.update(t, p)
    >>> u.get(), u.table.n
    ([0.4444444444444444, 0.6666666666666666], 3)
    """
    return _union_class()(list(metrics), str_sep)


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

