"""Shared helpers for the engines (Dask, Spark, SQL): from four small histograms to a report.

Every O(1) extrinsic metric reads the sums of :class:`~streameval.stats.ContingencyStats`. An
engine computes them in bulk without ever gathering the table: it groups the elements by cell
``(true, pred)``, then the cells by row and by column, and returns four *histograms* whose length
is the number of distinct values, not the number of cells or clusters:

- ``cells``: ``{n: number of cells with count n}``;
- ``rows`` / ``cols``: ``{(size, sq): (clusters, Σ largest cell)}`` per true / predicted cluster,
  ``sq`` being the cluster's sum of squared cell counts;
- ``fab``: ``{(n, a, b): cells}``, each cell joined with its row size ``a`` and column size ``b``
  (the element-averaged F-scores couple the three).

:func:`stats_from_histograms` turns them into a ``ContingencyStats`` with the very term functions the
streaming table uses, in exact integer arithmetic, so an engine's stats are bit-identical to a
:class:`~streameval.Contingency` fed the same elements. :func:`~streameval.metrics.information.adjusted_mutual_info` needs only
the two cluster-size histograms (through
:func:`streameval.metrics.information.expected_mutual_info`).

>>> h = Histograms(cells={2: 1, 1: 1, 3: 1}, rows={(3, 5): (1, 2), (3, 9): (1, 3)},
...                cols={(2, 4): (1, 2), (4, 10): (1, 3)},
...                fab={(2, 3, 2): 1, (1, 3, 4): 1, (3, 3, 4): 1})
>>> s = stats_from_histograms(h)
>>> from streameval.stats import ContingencyStats
>>> s == ContingencyStats.from_cells([("a", "x", 2), ("a", "y", 1), ("b", "y", 3)])
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._validate import MAX_TOTAL
from .errors import InvalidWeightError, MissingLabelError
from .metrics.information import adjusted_mutual_info
from .stats import SIDE_STATS, ContingencyStats, add_side_terms, beta_ratio, f_term, xlogx

__all__ = [
    "Histograms",
    "Report",
    "stats_from_histograms",
    "plan_metrics",
    "make_report",
    "check_counts",
    "plan_intrinsic",
    "intrinsic_values",
]


@dataclass
class Histograms:
    """The four histograms an engine returns (see the module docstring). Plain dicts of ints.
    A record: O(1) per field.

    The table ``n[a,x] = 2``, ``n[a,y] = 1``, ``n[b,y] = 3``: row ``a`` has size 3 and
    ``Σn² = 5``, row ``b`` size 3 and ``9``; column ``x`` size 2, column ``y`` size 4 and ``10``:

    >>> h = Histograms(cells={2: 1, 1: 1, 3: 1}, rows={(3, 5): (1, 2), (3, 9): (1, 3)},
    ...                cols={(2, 4): (1, 2), (4, 10): (1, 3)},
    ...                fab={(2, 3, 2): 1, (1, 3, 4): 1, (3, 3, 4): 1})
    >>> h.sizes("rows"), h.sizes("cols")
    ({3: 2}, {2: 1, 4: 1})
    """

    cells: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)
    cols: dict = field(default_factory=dict)
    fab: dict = field(default_factory=dict)

    def sizes(self, side: str) -> dict:
        """``{cluster size: number of clusters}`` for ``side`` ``"rows"`` or ``"cols"``.
        O(entries of that histogram)."""
        out: dict = {}
        for (size, _), (count, _) in getattr(self, side).items():
            out[size] = out.get(size, 0) + count
        return out


def stats_from_histograms(h: Histograms, f_specs=(("elm", 1.0), ("bcubed", 1.0))):
    """Exact :class:`~streameval.stats.ContingencyStats` from the four histograms.

    Each distinct value's term is computed once with :mod:`streameval.stats`'s term functions and
    multiplied by its count, all in Python ints: the result equals the streaming table's stats bit
    for bit. A total count of ``2**57`` or more raises
    :class:`~streameval.errors.InvalidWeightError`, as the streaming table refuses it. Cost
    O(distinct values in the histograms), independent of the number of elements.

    >>> h = Histograms(cells={2: 1, 1: 1}, rows={(2, 4): (1, 2), (1, 1): (1, 1)},
    ...                cols={(3, 5): (1, 2)}, fab={(2, 2, 3): 1, (1, 1, 3): 1})
    >>> s = stats_from_histograms(h, ())
    >>> s.n, s.cells, s.sum_cell_sq, s.sum_row_sq, s.sum_col_sq, s.sum_col_max
    (3, 2, 5, 5, 9, 2)
    """
    total = sum(n * count for n, count in h.cells.items())
    if total >= MAX_TOTAL:  # the streaming table's bound, checked before any term is computed
        raise InvalidWeightError(
            f"the elements' total weight is {total}: a table's total count must stay below 2**57"
        )
    s = ContingencyStats()
    for n, count in h.cells.items():
        s.n += n * count
        s.cells += count
        s.sum_cell_sq += n * n * count
        s.sum_cell_xlogx += xlogx(n) * count
    for side, hist in (("row", h.rows), ("col", h.cols)):
        for (size, sq), (count, max_sum) in hist.items():
            # the largest cells enter as their sum over the clusters of this (size, sq)
            add_side_terms(s, side, size, sq, 0, count)
            largest = SIDE_STATS[side].max
            setattr(s, largest, getattr(s, largest) + max_sum)
        setattr(s, "k_true" if side == "row" else "k_pred", sum(c for c, _ in hist.values()))
    s.both_singletons = h.fab.get((1, 1, 1), 0)
    for kind, beta in f_specs:
        num, den = beta_ratio(beta)
        s.f_sums[(kind, float(beta))] = sum(
            f_term(kind, num, den, n, a, b) * count for (n, a, b), count in h.fab.items()
        )
    return s


def plan_metrics(metrics):
    """The metric objects to report and the element-averaged F sums they need.

    ``metrics``: ``None`` (every O(1) metric), or a list of metric objects and names (each name
    as :func:`streameval.metrics.resolve` reads it: ``"ARI"``, ``"all"``, ...).
    Returns ``(list of metrics, list of (kind, beta))``; the F specs are the metrics'
    :attr:`~streameval.metrics.base.Metric.f_specs`, so the engine computes exactly what
    :meth:`Metric.value` will read. An on-demand metric is accepted only when its value follows
    from the sums and the cluster sizes (:attr:`~streameval.metrics.base.Metric.from_sizes`).

    >>> chosen, f_specs = plan_metrics(["ELM", "ARI"])
    >>> [m.name for m in chosen], f_specs
    (['ELM', 'AdjustedRand'], [('elm', 1.0)])
    """
    from .metrics import Metric, resolve

    if metrics is None:
        metrics = [None]
    elif isinstance(metrics, str):
        metrics = [metrics]
    out = []
    for item in metrics:
        for m in [c() for c in resolve(item)] if item is None or isinstance(item, str) else [item]:
            if not isinstance(m, Metric):
                raise TypeError(f"not a streameval metric: {m!r}")
            if m.on_demand and not m.from_sizes:
                raise ValueError(
                    f"{m.name} needs the table's cells (an optimal matching): not available from "
                    "an engine's sums; evaluate it on a Contingency"
                )
            out.append(m)
    return out, list(dict.fromkeys(spec for m in out for spec in m.f_specs))


def check_counts(missing: int, bad_weights: int, policy: str, where: str) -> None:
    """Raise the library's errors for missing labels or bad weights counted by an engine. O(1).

    >>> check_counts(3, 0, "skip", "spark")       # skipped, as asked: nothing raised
    >>> check_counts(0, 2, "raise", "spark")
    Traceback (most recent call last):
    ...
    streameval.errors.InvalidWeightError: spark: 2 weight(s) are not positive integers ...
    """
    if bad_weights:
        raise InvalidWeightError(
            f"{where}: {bad_weights} weight(s) are not positive integers (null, zero, negative or "
            "fractional)"
        )
    if missing and policy == "raise":
        raise MissingLabelError(
            f"{where}: {missing} element(s) have a missing (null/NaN) true or predicted label; "
            'pass missing="skip" to skip and count them'
        )


@dataclass
class Report:
    """What an engine returns: metric values, the exact stats, the size histograms.

    ``values``: ``{metric name: value}`` (plus ``"AdjustedMutualInfo"`` when asked);
    ``stats``: the :class:`~streameval.stats.ContingencyStats`; ``sizes_true`` / ``sizes_pred``:
    ``{cluster size: clusters}``; ``skipped``: elements skipped for a missing label;
    ``intrinsic``: ``{name: value}`` from the vectors (the keys an
    :class:`~streameval.IntrinsicEvaluator` over the same views reports), or ``None``;
    ``summaries``: the ``{space: ClusterSummaries}`` they were read from, or ``None``.
    ``report[name]`` reads an intrinsic value, else a label metric's. A record: O(1) per look-up
    (:func:`make_report` builds one from histograms).

    >>> rep = Report({"Rand": 0.5}, ContingencyStats(n=4), {2: 2}, {4: 1}, intrinsic={"SSW": 1.0})
    >>> rep["Rand"], rep["SSW"], rep.skipped
    (0.5, 1.0, 0)
    """

    values: dict
    stats: ContingencyStats
    sizes_true: dict
    sizes_pred: dict
    skipped: int = 0
    intrinsic: dict | None = None
    summaries: dict | None = None

    def __getitem__(self, name):
        if self.intrinsic and name in self.intrinsic:
            return self.intrinsic[name]
        return self.values[name]


def make_report(h: Histograms, metrics, f_specs, ami=True, skipped=0, intrinsic=None) -> Report:
    """Stats, every metric's value (through :meth:`Metric.value`) and AMI, from the histograms.
    Cost: :func:`stats_from_histograms`, O(distinct values), then the metrics' O(1) formulas and
    AMI's expectation over the size histograms.

    The histograms of :class:`Histograms`' example: ``N = 6``, ``Σn² = 14``, ``Σa² = 18``,
    ``Σb² = 20``, so ``TP = 4``, ``TT = 6``, ``PP = 7`` of 15 pairs, Rand ``(15 - 7 - 6 + 8)/15``;
    purity ``(2 + 3)/6``:

    >>> from streameval import Purity, Rand
    >>> h = Histograms(cells={2: 1, 1: 1, 3: 1}, rows={(3, 5): (1, 2), (3, 9): (1, 3)},
    ...                cols={(2, 4): (1, 2), (4, 10): (1, 3)},
    ...                fab={(2, 3, 2): 1, (1, 3, 4): 1, (3, 3, 4): 1})
    >>> r = make_report(h, [Rand(), Purity()], [], ami=False)
    >>> r.values, r["Rand"] == 10 / 15, r.stats.n
    ({'Rand': 0.666..., 'Purity': 0.833...}, True, 6)
    """
    s = stats_from_histograms(h, f_specs)
    st, sp = h.sizes("rows"), h.sizes("cols")
    values = {m.name: m.value_from_sizes(s, st, sp) for m in metrics}
    if ami and "AdjustedMutualInfo" not in values:
        values["AdjustedMutualInfo"] = adjusted_mutual_info(s, st, sp)
    return Report(values, s, st, sp, skipped, intrinsic)


def plan_intrinsic(views=None, points: bool = True) -> dict:
    """The intrinsic views an engine reports, as ``{name: view}``.

    ``views``: ``None`` (every registered view of the Euclidean space: ``SSW``, ``SSB``,
    ``CalinskiHarabasz``, ``Separation``, ``RMSCompactness``, ``RMSDaviesBouldin``,
    ``SqEuclideanSilhouette``), a list of views or registry names (named by their ``name``), or a
    ``{name: view}`` dict: the same as :class:`~streameval.IntrinsicEvaluator` takes, so the engine
    reports the keys an evaluator over those views reports. ``points=False`` leaves out the views
    whose value needs a second pass over the points (the silhouettes). O(views).

    >>> sorted(plan_intrinsic(["SSW", "CosineSilhouette"], points=False))
    ['SSW']
    """
    from .intrinsic import INTRINSIC_REGISTRY, IntrinsicMetric, default_intrinsic_metrics

    if views is None:
        views = default_intrinsic_metrics("euclidean")
    items = list(views.items()) if isinstance(views, dict) else [(None, v) for v in views]
    out: dict = {}
    for name, view in items:
        if isinstance(view, str):
            if view not in INTRINSIC_REGISTRY:
                raise ValueError(f"unknown intrinsic metric {view!r}; known: {sorted(INTRINSIC_REGISTRY)}")
            view = INTRINSIC_REGISTRY[view]()
        if not isinstance(view, IntrinsicMetric):
            raise TypeError(f"not an intrinsic metric: {view!r}")
        name = view.name if name is None else name
        if name in out:
            raise ValueError(f"two intrinsic metrics are named {name!r}")
        if points or not view.needs_points:
            out[name] = view
    return out


def intrinsic_values(views: dict, summaries: dict, point_sums: dict | None = None) -> dict:
    """``{name: value}``: each view's :meth:`~streameval.intrinsic.IntrinsicMetric.value` over the
    summaries of its space (``summaries``: ``{space: ClusterSummaries}``, as built by
    :meth:`~streameval.ClusterSummaries.from_arrays`), the very code a streaming view runs in
    ``get()``. A view with ``needs_points`` (a silhouette) gets ``point_sums[name]``, the
    ``(sum w·s(x), sum w)`` of its :meth:`~streameval.intrinsic.Silhouette.score_sum` over every
    partition: its exact value over all the points (its streaming ``final()``). Cost: the views'.

    >>> from streameval import ClusterSummaries
    >>> s = ClusterSummaries.from_arrays([2, 2], [[0.0, 0.5], [5.0, 5.5]], [0.5, 0.5])
    >>> intrinsic_values(plan_intrinsic(["SSW", "CalinskiHarabasz"]), {"euclidean": s})
    {'SSW': 1.0, 'CalinskiHarabasz': 100.0}
    """
    point_sums = point_sums or {}
    out = {}
    for name, view in views.items():
        s = summaries[view.space]
        if view.needs_points:
            out[name] = view.value(s, point_sums.get(name, (0.0, 0.0)))
        else:
            out[name] = view.value(s)
    return out
