"""The Evaluator: one shared contingency table, many metric views, one update per element.

>>> from streameval import Evaluator, ELM, AdjustedRand, NormalizedMutualInfo
>>> ev = Evaluator([ELM(), AdjustedRand(), NormalizedMutualInfo(average_method="max")])
>>> for t, p in [(0, "a"), (0, "a"), (1, "b"), (1, "b"), (1, "a")]:
...     ev.update(t, p)
>>> {k: round(v, 4) for k, v in ev.get().items()}
{'ELM': 0.5333, 'AdjustedRand': 0.1667, "NormalizedMutualInfo(average_method='max')": 0.4325}
>>> ev.table.n
5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from .contingency import NATIVE, Contingency, FormulaDeclined, ValuePlan
from .metrics.base import Metric
from .metrics.quantities import Quantities

__all__ = ["Evaluator"]


def _python_values(metrics: dict, table) -> dict:
    """Every metric's value over ``table`` in Python: its
    :meth:`~streameval.metrics.base.Metric.shared_value` over one shared
    :class:`~streameval.metrics.quantities.Quantities` of the table (``metrics``: ``{name:
    metric}``). The one fallback: a table without the native reading, or a native formula that
    left its value to Python (its Python formula then gives the same value, or raises)."""
    q = Quantities(table)
    return {name: m.shared_value(q) for name, m in metrics.items()}


def _native_get(plan, table, metrics: dict, python: list):
    """An evaluator's ``get`` over a native table: one native call (``plan``'s reading of
    ``table``), never calling back; then the metrics named in ``python`` (no native formula)
    read in Python over the table's shared quantities. When a native formula leaves its value
    to Python (``FormulaDeclined``), every metric is read in Python instead. With no metric
    left to Python the reading is the native callable ``plan.bind(table, fallback)`` itself:
    no Python frame per reading."""
    if not python:
        return plan.bind(table, partial(_python_values, metrics, table))
    read = plan.read

    def get_and_complete() -> dict[str, float]:
        try:
            values = read(table)
        except FormulaDeclined:
            return _python_values(metrics, table)
        q = Quantities(table)
        for name in python:
            values[name] = metrics[name].shared_value(q)
        return values

    return get_and_complete


class Evaluator:
    """Many metrics over one shared :class:`~streameval.Contingency`, updated once per element.

    Parameters
    ----------
    metrics : a list of metrics (named by :attr:`Metric.name`), a ``{name: metric}`` dict, or
        ``None`` for every O(1) metric in the registry with default parameters. Names are
        accepted too, alone or in the list (``"ARI, NMI"``, ``["ELM", "adjusted_rand_score"]``,
        ``"all"``), as :func:`streameval.metrics.resolve` reads them.
    table : an existing table to share (default: a new one).

    Each metric must be fresh (it has seen no elements); it is rebound to the shared table.
    Adding a metric never changes what the others report. Cost: :meth:`update` and :meth:`revert`
    are one table update (O(1); the element-averaged F-scores add their row and column cost once
    per reading, or O(groups) next to a large cluster: :meth:`Contingency.track_f`).
    :meth:`get` reads every metric with a native formula in one call to the native table
    (:class:`~streameval.metrics.quantities.NativeValue`), and the others in one pass over one
    :class:`~streameval.metrics.quantities.Quantities` of the table, so the quantities several
    metrics share (pair counts, entropies) are computed once per reading rather than once per
    metric; the values are bit-identical to each metric's own ``get()`` and ``value(stats)``.
    The native values are kept until the table's ``version`` changes.

    Four elements, hand-checked: the table has ``n[0,a] = 2``, ``n[1,a] = n[1,b] = 1``, so of
    the ``C2(4) = 6`` pairs ``TP = 1`` are linked in both, ``PP = 3`` in the prediction,
    ``TT = 2`` in the truth; Rand ``= (6 - PP - TT + 2TP)/6 = 3/6``, pair precision ``TP/PP``, and
    purity ``(2 + 1)/4`` (the majority of each predicted cluster):

    >>> from streameval import PairPrecision, Purity, Rand
    >>> ev = Evaluator([Rand(), PairPrecision(), Purity()])
    >>> for t, p in [(0, "a"), (0, "a"), (1, "a"), (1, "b")]:
    ...     ev.update(t, p)
    >>> ev.get()
    {'Rand': 0.5, 'PairPrecision': 0.333..., 'Purity': 0.75}
    >>> ev.revert(1, "b")          # back to three elements: TT = 1, agreeing pairs 1 of 3
    >>> ev.get()
    {'Rand': 0.333..., 'PairPrecision': 0.333..., 'Purity': 0.666...}
    >>> ev.update_many([1], ["b"])  # the same state as update(1, "b")
    >>> ev.relabel_pred("b", "a")   # one predicted cluster of 4: PP = 6, purity 2/4
    >>> ev.get()
    {'Rand': 0.333..., 'PairPrecision': 0.333..., 'Purity': 0.5}
    >>> ev.clone().get()            # fresh metrics, same names, empty table
    {'Rand': 1.0, 'PairPrecision': 1.0, 'Purity': 1.0}
    """

    _get: Callable[[], dict[str, float]]  # the reading bound by _bind_get: the native plan's, or Python's
    _building = False  # while __init__ adds the metrics (the reading is bound once, after)

    def __init__(
        self, metrics: Iterable[Metric] | dict[str, Metric] | None = None, table: Contingency | None = None
    ):
        self.table = table if table is not None else Contingency()
        self.metrics: dict[str, Metric] = {}
        if metrics is None:
            from .metrics import default_metrics

            metrics = default_metrics()
        elif isinstance(metrics, str) or (
            isinstance(metrics, (list, tuple)) and any(isinstance(m, str) for m in metrics)
        ):  # names, as the command line takes them (streameval.metrics.resolve)
            from .metrics.resolve import resolve

            listed = [metrics] if isinstance(metrics, str) else metrics
            metrics = [m for item in listed
                       for m in ([c() for c in resolve(item)] if isinstance(item, str) else [item])]
        items = metrics.items() if isinstance(metrics, dict) else ((m.name, m) for m in metrics)
        self._building = True
        for name, metric in items:
            self.add(name, metric)
        del self._building
        self._bind_get()

    @property
    def table(self) -> Contingency:
        """The shared table (assigning another one rebinds :meth:`update` and :meth:`revert`).
        O(1) to read; O(metrics) to assign (every reading is bound anew)."""
        return self._table

    @table.setter
    def table(self, table: Contingency) -> None:
        self._table = table
        if "metrics" in self.__dict__:
            self._bind_get()
        # update and revert are the table's own (one call less per element), unless overridden
        cls = type(self)
        for name in ("update", "revert"):
            if getattr(cls, name) is getattr(Evaluator, name):
                self.__dict__[name] = getattr(table, name)

    def add(self, name: str, metric: Metric) -> None:
        """Bind ``metric`` to the shared table under ``name``. O(cells) at most, once."""
        if not isinstance(metric, Metric):
            raise TypeError(f"{name!r} is not a streameval metric: {metric!r}")
        if name in self.metrics:
            raise ValueError(f"a metric named {name!r} is already in the evaluator")
        metric.bind(self.table)
        self.metrics[name] = metric
        if not self._building:
            self._bind_get()

    def __getitem__(self, name: str) -> Metric:
        return self.metrics[name]

    def __iter__(self):
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def update(self, y_true, y_pred, w=1) -> None:
        """Add ``w`` elements to the shared table (every metric sees them). O(1).

        An instance calls its table's ``update`` directly (bound when the table is set).
        """
        self.table.update(y_true, y_pred, w)

    def revert(self, y_true, y_pred, w=1) -> None:
        """Undo :meth:`update` with the same arguments. O(1) (the table's own, as :meth:`update`)."""
        self.table.revert(y_true, y_pred, w)

    def relabel_pred(self, old, new) -> None:
        """Merge predicted cluster ``old`` into ``new`` (:meth:`Contingency.relabel_pred`).
        O(cells of ``old``) table updates."""
        self.table.relabel_pred(old, new)

    def relabel_true(self, old, new) -> None:
        """Merge true cluster ``old`` into ``new`` (:meth:`Contingency.relabel_true`).
        O(cells of ``old``) table updates."""
        self.table.relabel_true(old, new)

    def update_many(self, y_true, y_pred, w=None) -> None:
        """Vectorised bulk :meth:`update` (see :meth:`Contingency.update_many`): O(N) for integer
        arrays, O(N log N) for other labels, plus O(cells) into the table."""
        self.table.update_many(y_true, y_pred, w)

    def get(self) -> dict[str, float]:
        """``{name: value}`` for every metric (a new dict), in one pass over shared quantities.

        One read path with one fallback. On a native table, every metric with a native formula
        (:class:`~streameval.metrics.quantities.NativeValue`: the formula of
        :meth:`~streameval.metrics.base.Metric.value`, bit for bit) is computed in one native
        call (a :class:`~streameval.contingency.ValuePlan` of the formulas, looked up by the
        names the metrics declare) that returns and never calls back into Python; the metrics
        of the other kinds are then read in Python: their
        :meth:`~streameval.metrics.base.Metric.shared_value` over one
        :class:`~streameval.metrics.quantities.Quantities` of the table (an O(1) metric without
        a native formula reads the shared quantities, an on-demand metric the table's cells,
        cached per version). The one fallback: every metric read that second way, on a table
        without the native reading (the reference), or when a native formula leaves its value
        to Python (its Python formula then gives the same value or raises the same error).
        Cost: O(1) per O(1) metric, the shared quantities (pair counts, entropies) computed at
        most once per reading; the native values are kept while the table's ``version`` is
        unchanged; on-demand metrics add their own (cached) cost. An instance's ``get`` is its
        bound reading (one native call when every metric has a native formula).

        >>> ev = Evaluator(["ARI", "NMI"])
        >>> ev.update_many([0, 0, 1, 1], [0, 0, 1, 0])
        >>> ev.get() == {name: m.value(ev.table.stats()) for name, m in ev.metrics.items()}
        True
        """
        return self._get()

    def _bind_get(self) -> None:
        """A new reading plan for the current table and metrics (:func:`_native_get` over a
        native table, :func:`_python_values` otherwise), bound as this instance's ``get`` unless
        a subclass overrides it."""
        self.__dict__.pop("get", None)
        table, metrics = self._table, self.metrics
        plan = self._make_plan(table)
        if plan is None:
            self._get = partial(_python_values, metrics, table)
        else:
            python = [name for name, m in metrics.items() if m.native_formula is None]
            self._get = _native_get(plan, table, metrics, python)
        if type(self).get is Evaluator.get:
            self.__dict__["get"] = self._get

    def _make_plan(self, table):
        """The native reading's plan over ``table``: each metric's name and its native formula
        (``None`` for a metric Python reads); ``None`` when ``table`` is not native."""
        if ValuePlan is None or not (NATIVE and isinstance(table, Contingency)):
            return None
        metrics = self.metrics
        return ValuePlan(list(metrics), [m.native_formula for m in metrics.values()])

    def __getstate__(self) -> dict:
        """The state to pickle, without the native reading (made anew when unpickled)."""
        state = self.__dict__.copy()
        for name in ("get", "_get"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_get()

    # -- River's metric protocol (``evaluate.progressive_val_score(dataset, model, evaluator)``)
    requires_labels = True  # River passes predicted labels, not probabilities
    works_with_weights = True

    def works_with(self, model) -> bool:
        """``True`` for models that predict a label per element (River clusterers, classifiers).
        O(1).

        >>> from river import cluster
        >>> Evaluator().works_with(cluster.KMeans())
        True
        """
        return callable(getattr(model, "predict_one", None)) or callable(
            getattr(model, "learn_predict_one", None)
        )

    def clone(self) -> Evaluator:
        """A fresh evaluator with fresh copies of the same metrics (same names). O(metrics)."""
        return Evaluator({name: m.clone() for name, m in self.metrics.items()})

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v:.6f}" for k, v in self.get().items())
        return f"Evaluator(n={self.table.n}: {body})"
