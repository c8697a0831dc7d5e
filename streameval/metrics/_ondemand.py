"""Shared machinery of the on-demand metrics: values computed in ``get()`` and cached per table state.

A metric whose value is not a function of the O(1) running sums (an optimal matching, the expected
mutual information) derives from :class:`OnDemand`, which sets :attr:`Metric.on_demand`, and implements
:meth:`OnDemand._compute` from the table's cells or margins. :meth:`OnDemand._result` caches the result with the table's
``version``, which every mutation bumps, so repeated reads of an unchanged table cost O(1) and any
update, revert or merge invalidates the cache.
"""

from __future__ import annotations

from .base import Metric
from .quantities import Quantities


class OnDemand(Metric, register=False):
    """Base of the on-demand metrics (package-internal): ``_compute`` cached per table version."""

    on_demand = True
    _cache = None  # (table, version, result) of the last computation on the bound table

    def _compute(self, table):  # pragma: no cover - abstract
        """The result from a :class:`~streameval.Contingency` (not O(1))."""
        raise NotImplementedError

    def _result(self, s):
        if s.__class__ is Quantities:  # an Evaluator's shared reading: the table it wraps
            s = s.source
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
