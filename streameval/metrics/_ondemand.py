"""Shared machinery of the on-demand metrics: values computed in ``get()`` and cached per table state.

A metric whose value is not a function of the O(1) running sums (an optimal matching, the expected
mutual information) derives from :class:`OnDemand`, which sets :attr:`Metric.on_demand`, and implements
:meth:`OnDemand._compute` from the table's cells or margins. :meth:`OnDemand._result` caches the result with the table's
``version``, which every mutation bumps, so repeated reads of an unchanged table cost O(1) and any
update, revert or merge invalidates the cache. It is a declared kind of metric, not a special case
of the readers: it has no native formula, and its :meth:`OnDemand.shared_value` (what an
:class:`~streameval.Evaluator` reads) takes the table rather than the shared quantities.
"""

from __future__ import annotations

from .base import Metric


class OnDemand(Metric, register=False):
    """Base of the on-demand metrics (package-internal): ``_compute`` cached per table version."""

    on_demand = True
    _cache = None  # (table, version, result) of the last computation on the bound table

    def _compute(self, table):  # pragma: no cover - abstract
        """The result from a :class:`~streameval.Contingency` (not O(1))."""
        raise NotImplementedError

    def shared_value(self, q) -> float:
        """In an :class:`~streameval.Evaluator`'s reading: the value from the table that the
        shared quantities ``q`` wrap (an on-demand metric reads the cells, not the sums), cached
        per table version. Cost: the metric's computation after a change, O(1) for a repeated
        read of an unchanged table."""
        return self.value(q.source)

    def _result(self, s):
        if not (hasattr(s, "items") and hasattr(s, "version")):
            raise TypeError(
                f"{type(self).__name__} is computed from the table's cells, not from summary "
                f"statistics ({type(s).__name__}); pass a Contingency"
            )
        if s is not self._table:
            return self._compute(s)
        cache = self._cache
        if cache is None or cache[0] is not s or cache[1] != s.version:
            cache = self._cache = (s, s.version, self._compute(s))
        return cache[2]
