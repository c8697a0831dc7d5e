"""Set-matching metrics: purity and inverse purity.

Purity ``(1/N) Σ_j max_i n[i,j]``: each predicted cluster is credited with its largest class.
Inverse purity ``(1/N) Σ_i max_j n[i,j]``: the same with the roles swapped. The table keeps, per
cluster, a histogram of its cell counts, so a cluster's maximum is known after every update and
revert (a maximum falls by at most one on a unit decrement): O(1) per update, revert and read.
The empty table scores 1.0.
"""

from __future__ import annotations

from .base import Metric, ratio

__all__ = ["Purity", "InversePurity"]


class Purity(Metric):
    """Purity: the share of elements in the majority class of their predicted cluster. O(1).

    >>> m = Purity()
    >>> for t, p in [(0, 0), (0, 0), (1, 0), (1, 1), (2, 1), (2, 1)]:
    ...     m.update(t, p)
    >>> round(m.get(), 4)
    0.6667
    """

    def value(self, s) -> float:
        return ratio(s.sum_col_max, s.n)


class InversePurity(Metric):
    """Inverse purity: the share of elements in the majority cluster of their true class. O(1).

    >>> m = InversePurity()
    >>> for t, p in [(0, 0), (0, 0), (0, 1), (1, 1)]:
    ...     m.update(t, p)
    >>> m.get()
    0.75
    """

    def value(self, s) -> float:
        return ratio(s.sum_row_max, s.n)
