"""River integration: streameval metrics where River expects a metric, and River clusterers.

streameval metrics already speak River's metric protocol (``update(y_true, y_pred, w=1)``,
``revert`` with the same arguments, ``get()``, ``bigger_is_better``, ``works_with(model)``,
``clone()``), so they work unchanged in

- ``river.utils.Rolling(ELM, window_size=100)`` and ``river.utils.TimeRolling(ELM, period=...)``
  (both replay ``revert``; values equal the metric alone on the window's content);
- ``river.evaluate.progressive_val_score(dataset, clusterer, ELM())``, for River's clusterers
  (``KMeans``, ``DBSTREAM``, ``DenStream``, ``CluStream``, ``STREAMKMeans``, ``TextClust``);
- ``river.metrics.base.Metrics`` unions: :func:`union` (or ``ELM() + AdjustedRand()``) builds one
  whose streameval members share a single contingency table, updated once per element (defined
  with the metric protocol in :mod:`streameval.metrics.base`, re-exported here).

This module adds what River's clusterer API needs, and nothing else:

- :func:`Clusterer` wraps a River clusterer so that it predicts ``None`` (no prediction, which
  River's progressive evaluation skips) until the model has a cluster: ``STREAMKMeans`` raises
  before its first ``learn_one``, and ``DBSTREAM``, ``DenStream``, ``CluStream`` answer ``0``
  while they have no cluster at all.
- :func:`progressive_evaluate` is River's progressive validation loop (predict, score, learn) for
  any target with ``update(y_true, y_pred)``: an :class:`~streameval.Evaluator`, a window or a
  :class:`~streameval.monitor.Monitor`.

River is imported when one of these is used, never by ``import streameval``.

>>> from river import cluster, evaluate, utils
>>> from streameval import ELM, AdjustedRand
>>> points = [(0.0, "a"), (0.3, "a"), (2.0, "b"), (2.4, "b"), (5.0, "c")] * 3
>>> stream = [({"x": v}, y) for v, y in points]
>>> metrics = union(ELM(), AdjustedRand())
>>> evaluate.progressive_val_score(stream, cluster.KMeans(n_clusters=2, seed=3), metrics)
ELM: 0.787692
AdjustedRand: 0.653465
>>> rolling = utils.Rolling(ELM, window_size=4)
>>> for t, p in [(0, 0), (0, 0), (1, 1), (1, 1), (1, 0)]:
...     rolling.update(t, p)
>>> from streameval.batch import elm_score
>>> rolling.get() == elm_score([0, 1, 1, 1], [0, 1, 1, 0])   # the last four elements
True
"""

from __future__ import annotations

import functools
import sys

from .errors import require
from .metrics.base import register_with_river, union

__all__ = ["union", "Clusterer", "progressive_evaluate"]

if "river.metrics.base" in sys.modules:  # river_metric + streameval_metric, when River is loaded
    register_with_river()


@functools.cache
def _clusterer_class():
    base = require("river.base", "streameval.river.Clusterer", "river")

    class Clusterer(base.Clusterer):
        """A River clusterer whose prediction is ``None`` until the wrapped model has a cluster.

        Parameters
        ----------
        model : the River clusterer (``learn_one``/``predict_one``).
        predict_kwargs : extra keyword arguments for ``model.predict_one`` (e.g. TextClust's
            ``type="macro"``).

        A model "has a cluster" when its ``centers`` are non-empty after ``predict_one``
        (DenStream and DBSTREAM rebuild their clusters there); models without ``centers``
        (TextClust, which returns ``None`` itself) are passed through. Cost: the model's own.
        """

        def __init__(self, model, predict_kwargs: dict | None = None):
            self.model = model
            self.predict_kwargs = predict_kwargs

        def learn_one(self, x, **kwargs):
            self.model.learn_one(x, **kwargs)

        def predict_one(self, x, **kwargs):
            model = self.model
            try:
                y_pred = model.predict_one(x, **{**(self.predict_kwargs or {}), **kwargs})
            except ValueError:  # STREAMKMeans before any learn_one: min() of no centers
                if getattr(model, "centers", True):
                    raise
                return None
            # DBSTREAM, DenStream and CluStream answer 0 while they have no cluster at all (their
            # centers are refreshed by predict_one, so look after it)
            return y_pred if getattr(model, "centers", True) else None

        @property
        def centers(self):
            return getattr(self.model, "centers", None)

        @classmethod
        def _unit_test_params(cls):
            from river import cluster

            yield {"model": cluster.KMeans()}

    return Clusterer


def Clusterer(model, predict_kwargs: dict | None = None):
    """Wrap a River clusterer for progressive evaluation: ``None`` until it has a cluster.

    Returns an instance of a ``river.base.Clusterer`` subclass (built when first used, so that
    River loads only here), usable in pipelines and in ``evaluate.progressive_val_score``, which
    skips ``None`` predictions. Cost: O(1) per call on top of the wrapped model's own
    ``predict_one`` and ``learn_one`` (the class is built once).

    >>> from river import cluster, evaluate
    >>> from streameval import ELM
    >>> model = Clusterer(cluster.STREAMKMeans(chunk_size=2, n_clusters=2, seed=1))
    >>> model.predict_one({"x": 0.0}) is None   # the bare model raises ValueError here
    True
    >>> stream = [({"x": v}, y) for v, y in [(0.0, 0), (0.1, 0), (4.0, 1), (4.2, 1), (9.0, 2)] * 2]
    >>> evaluate.progressive_val_score(stream, model, ELM())   # 9 scored: the first is skipped
    ELM: 0.740741
    """
    return _clusterer_class()(model, predict_kwargs)


def progressive_evaluate(dataset, model, target, *, step: int | None = None):
    """River's progressive validation loop, scoring into any ``target`` with ``update``.

    For each ``(x, y)`` (or ``(x, y, kwargs)``) of ``dataset``: ``y_pred = model.predict_one(x)``;
    ``target.update(y, y_pred)`` unless the prediction is ``None`` (as River skips it); then
    ``model.learn_one(x)``. With ``step``, yields ``(elements seen, target.get())`` every ``step``
    elements and once at the end; without, yields only at the end. ``target`` may be a metric, an
    :class:`~streameval.Evaluator`, a window or a :class:`~streameval.monitor.Monitor`. The values
    equal those of ``river.evaluate.progressive_val_score`` with the same metrics. Cost per
    element: the model's ``predict_one`` and ``learn_one`` plus one ``target.update``; one
    ``target.get()`` per ``step``.

    >>> from river import cluster
    >>> import streameval as se
    >>> points = [(0.0, "a"), (0.3, "a"), (2.0, "b"), (2.4, "b"), (5.0, "c")] * 3
    >>> stream = [({"x": v}, y) for v, y in points]
    >>> ev = se.Evaluator([se.ELM(), se.AdjustedRand()])
    >>> model = cluster.KMeans(n_clusters=2, seed=3)
    >>> for n, values in progressive_evaluate(stream, model, ev, step=10):
    ...     print(n, {k: round(v, 4) for k, v in values.items()})
    10 {'ELM': 0.7667, 'AdjustedRand': 0.6341}
    15 {'ELM': 0.7877, 'AdjustedRand': 0.6535}
    """
    n = 0
    last = None
    predict, learn, update = model.predict_one, model.learn_one, target.update
    for x, y, *extra in dataset:
        kwargs = dict(extra[0]) if extra else {}
        kwargs.pop("w", None)
        y_pred = predict(x, **kwargs)
        if y_pred is not None and y_pred != {}:
            update(y, y_pred)
        learn(x, **kwargs)
        n += 1
        if step and n % step == 0:
            last = n
            yield n, target.get()
    if last != n:
        yield n, target.get()
