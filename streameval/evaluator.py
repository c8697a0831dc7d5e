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

import weakref
from collections.abc import Iterable
from functools import partial

from .contingency import Contingency
from .metrics.base import Metric
from .metrics.quantities import NativeValue, Quantities

try:
    from ._native import Table as _NativeTable
    from ._native import ValuePlan as _ValuePlan
except ImportError:  # pragma: no cover - the extension is built by pip install
    _ValuePlan = _NativeTable = None  # type: ignore[assignment, misc]

__all__ = ["Evaluator"]


def _python_read(ref: weakref.ref, table) -> dict:
    """A native plan's fallback: the evaluator ``ref`` names reads ``table`` through Python."""
    evaluator = ref()
    if evaluator is None:  # pragma: no cover - a plan outliving its evaluator
        raise ReferenceError("the evaluator of this reading plan is gone")
    return evaluator._read(table)


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

    _quantities: Quantities | None = None  # the shared reading of the table's last-read version
    _reading: tuple | None = None  # (table, version, {name: value}) of the last reading
    _plan = None  # the native reading's plan (names, formula codes), built on first read
    _all_native = False  # whether every metric of the plan has a native formula
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
        self._reading = None
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
        self._quantities = None  # binding may start new running sums (track_f) at the same version
        self._reading = None
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

        The native table computes every metric that has a native formula in one call
        (:class:`~streameval.metrics.quantities.NativeValue`: the formula of
        :meth:`~streameval.metrics.base.Metric.value`, bit for bit); every other metric's
        ``value`` reads one :class:`~streameval.metrics.quantities.Quantities` of the table. The
        reading is kept while the table's ``version`` is unchanged. Cost: O(1) per O(1) metric,
        the shared quantities (pair counts, entropies) computed at most once; on-demand metrics
        add their own (cached) cost; a repeated reading of an unchanged table builds the dict
        again from the kept values. On the native table, with every metric native, an instance's
        ``get`` is one native call (the plan's ``read`` of the table).

        >>> ev = Evaluator(["ARI", "NMI"])
        >>> ev.update_many([0, 0, 1, 1], [0, 0, 1, 0])
        >>> ev.get() == {name: m.value(ev.table.stats()) for name, m in ev.metrics.items()}
        True
        """
        table = self._table
        plan = self._plan
        if plan is None:
            plan = self._plan = self._make_plan()
        if plan is not False and self._all_native and isinstance(table, _NativeTable):
            return plan.read(table)  # read natively, kept by version
        version = table.version
        reading = self._reading
        if reading is not None and reading[0] is table and reading[1] == version:
            return reading[2].copy()
        out = self._read(table)
        self._reading = (table, version, out)
        return out.copy()

    def _read(self, table) -> dict[str, float]:
        """Every metric's value over ``table`` as it is now, in a new dict."""
        plan = self._plan
        if plan is None:
            plan = self._plan = self._make_plan()
        if plan is not False:
            try:
                out, missing = table._read(plan)
            except AttributeError:  # a table without the native reading (the reference)
                plan = False
        if plan is False:
            return {name: m.value(self._shared(table)) for name, m in self.metrics.items()}
        if missing:  # the metrics left to their Python formula
            q = self._shared(table)
            metrics = self.metrics
            for name, v in out.items():
                if v is None:
                    out[name] = metrics[name].value(q)
        return out

    def _bind_get(self) -> None:
        """A new reading plan for the current table and metrics; when every metric has a native
        formula on a native table (and no subclass overrides ``get``), this instance's ``get``
        becomes one native call (the plan's ``read`` of the table)."""
        self._plan = None
        self.__dict__.pop("get", None)
        table = self._table
        if type(self).get is Evaluator.get and _NativeTable is not None and isinstance(table, _NativeTable):
            plan = self._plan = self._make_plan()
            if self._all_native:
                self.__dict__["get"] = partial(plan.read, table)

    def _shared(self, table) -> Quantities:
        """The :class:`Quantities` of ``table``'s current version (kept while it is unchanged)."""
        q = self._quantities
        if q is None or q.source is not table or q.version != table.version:
            q = self._quantities = Quantities(table)
        return q

    def _make_plan(self):
        """The native reading's plan: each metric's native formula ``(code, param)``, or a code
        no formula has (its Python formula runs); ``False`` without the extension."""
        if _ValuePlan is None:
            return False
        names, codes, params = [], [], []
        for name, m in self.metrics.items():
            spec = m.native_spec if isinstance(m, NativeValue) else None
            code, param = spec if spec is not None else (255, 0.0)
            names.append(name)
            codes.append(code)
            params.append(param)
        self._all_native = 255 not in codes
        # the fallback holds the evaluator weakly: no cycle keeps a dropped table alive
        return _ValuePlan(names, codes, params, partial(_python_read, weakref.ref(self)))

    def __getstate__(self) -> dict:
        """The state to pickle, without the native reading (made anew when unpickled)."""
        state = self.__dict__.copy()
        for name in ("get", "_plan", "_reading", "_quantities"):
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
