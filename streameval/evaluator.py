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

from collections.abc import Iterable
from functools import partial

from .contingency import NATIVE, Contingency, ValuePlan
from .metrics.base import Metric
from .metrics.quantities import Quantities

__all__ = ["Evaluator"]


def _complete(metrics: dict, table, values: dict) -> dict:
    """A native reading's ``values`` completed in Python: each ``None`` (a metric without a
    native formula, or a formula the native one left to Python) becomes the metric's
    :meth:`~streameval.metrics.base.Metric.shared_value` over one shared
    :class:`~streameval.metrics.quantities.Quantities` of ``table`` (``metrics``: ``{name:
    metric}``). Runs after the native call has returned, never from native code."""
    q = Quantities(table)
    for name, v in values.items():
        if v is None:
            values[name] = metrics[name].shared_value(q)
    return values


def _native_get(read, table, complete):
    """An evaluator's ``get`` over a native table: one native call (``read``, the plan's, over
    ``table``) and, only when a value is missing, ``complete`` in Python."""

    def get() -> dict[str, float]:
        values, missing = read(table)
        return complete(table, values) if missing else values

    return get


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
    :class:`~streameval.metrics.quantities.Quantities` of the table's current version, so the
    quantities several metrics share (pair counts, entropies) are computed once per table state
    rather than once per metric; the values are bit-identical to each metric's own ``get()``
    and ``value(stats)``. The reading is kept until the table's ``version`` changes.
    """

    _plan = None  # the native reading's plan (a ValuePlan), None when the table is not native
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
        """The shared table (assigning another one rebinds :meth:`update` and :meth:`revert`)."""
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
        """Merge predicted cluster ``old`` into ``new`` (:meth:`Contingency.relabel_pred`)."""
        self.table.relabel_pred(old, new)

    def relabel_true(self, old, new) -> None:
        """Merge true cluster ``old`` into ``new`` (:meth:`Contingency.relabel_true`)."""
        self.table.relabel_true(old, new)

    def update_many(self, y_true, y_pred, w=None) -> None:
        """Vectorised bulk :meth:`update` (see :meth:`Contingency.update_many`)."""
        self.table.update_many(y_true, y_pred, w)

    def get(self) -> dict[str, float]:
        """``{name: value}`` for every metric (a new dict), in one pass over shared quantities.

        One read path with one fallback. Every metric with a native formula
        (:class:`~streameval.metrics.quantities.NativeValue`: the formula of
        :meth:`~streameval.metrics.base.Metric.value`, bit for bit) is computed by the native
        table in one call (a :class:`~streameval.contingency.ValuePlan` built once, looked up
        by the formulas' names), which returns and never calls back; then, only if some value is
        missing, Python completes it: each remaining metric's
        :meth:`~streameval.metrics.base.Metric.shared_value` over one
        :class:`~streameval.metrics.quantities.Quantities` of the table (O(1) metrics read the
        shared quantities, on-demand ones the table, cached per version). Without a native table
        (the reference) every metric is read that second way. Cost: O(1) per O(1) metric, the
        shared quantities (pair counts, entropies) computed at most once per table state; the
        native values are kept while the table's ``version`` is unchanged; on-demand metrics add
        their own (cached) cost.

        >>> ev = Evaluator(["ARI", "NMI"])
        >>> ev.update_many([0, 0, 1, 1], [0, 0, 1, 0])
        >>> ev.get() == {name: m.value(ev.table.stats()) for name, m in ev.metrics.items()}
        True
        """
        table = self._table
        plan = self._plan
        if plan is None:
            q = Quantities(table)
            return {name: m.shared_value(q) for name, m in self.metrics.items()}
        values, missing = plan.read(table)
        return _complete(self.metrics, table, values) if missing else values

    def _bind_get(self) -> None:
        """A new reading plan for the current table and metrics; on a native table (and when no
        subclass overrides ``get``) this instance's ``get`` becomes the plan's one native call
        (:func:`_native_get`)."""
        self.__dict__.pop("get", None)
        table = self._table
        plan = self._plan = self._make_plan(table)
        if plan is not None and type(self).get is Evaluator.get:
            # it holds the metrics, not the evaluator: no cycle keeps a dropped table alive
            self.__dict__["get"] = _native_get(plan.read, table, partial(_complete, self.metrics))

    def _make_plan(self, table):
        """The native reading's plan over ``table``: each metric's name and its native formula
        (``None`` for a metric Python reads); ``None`` when ``table`` is not native."""
        if not (NATIVE and isinstance(table, Contingency)):
            return None
        metrics = self.metrics
        return ValuePlan(list(metrics), [m.native_formula for m in metrics.values()])

    def __getstate__(self) -> dict:
        """The state to pickle, without the native reading (made anew when unpickled)."""
        state = self.__dict__.copy()
        for name in ("get", "_plan"):
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

        >>> from river import cluster
        >>> Evaluator().works_with(cluster.KMeans())
        True
        """
        return callable(getattr(model, "predict_one", None)) or callable(
            getattr(model, "learn_predict_one", None)
        )

    def clone(self) -> Evaluator:
        """A fresh evaluator with fresh copies of the same metrics (same names)."""
        return Evaluator({name: m.clone() for name, m in self.metrics.items()})

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v:.6f}" for k, v in self.get().items())
        return f"Evaluator(n={self.table.n}: {body})"
