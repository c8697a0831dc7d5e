"""Live monitoring of a clustering stream: all-time and windowed metrics, drops, costly clusters.

A :class:`Monitor` takes each element once (``update(y_true, y_pred)``) and keeps

- an all-time :class:`~streameval.Evaluator` and a window (:class:`~streameval.CountWindow`, or an
  :class:`~streameval.EventTimeWindow` fed with event times) over the same metrics;
- a *drop detector* (:class:`~streameval.detect.BlockDrops`): the watched metric is computed over
  consecutive, non-overlapping blocks of ``block`` elements, and each block's value goes to a
  sequential detector — by default a one-sided CUSUM (:class:`~streameval.detect.Cusum`) whose
  threshold is calibrated on a reference period to a stated expected run length between false
  alarms; River's ADWIN or Page-Hinkley by name (``detector="adwin"``). Blocks make the detector's
  samples independent (the value of a sliding window after every element is a moving average,
  strongly autocorrelated, and would raise false alarms on a stationary stream). A detected change
  is a *drop* when the metric got worse (lower, or higher for a metric where smaller is better);
  rises are ignored;
- what broke (:class:`~streameval.breakdown.ErrorAccount`): splits, merges and the live top-k
  entities split most and predicted clusters merging most, over the window;
- a live ranking of the predicted clusters that cost the most (see :class:`ClusterCostRanking`),
  over the window's table (over the all-time table without a window);
- optionally (``interval=``), an online Poisson bootstrap of the window
  (:class:`~streameval.BootstrapEvaluator`, elements given with their resampling ``unit``): a drop
  is then flagged only when the window's confidence interval of the watched metric lies entirely
  below the reference (the all-time value, or ``reference=``) — a small window's noise is no drop.
  The interval is the streaming bootstrap's default, adaptive (studentized, or hybrid where one unit
  holds more than 15% of the window's within-cluster pairs: ``compare``'s rule but for its
  subsampled interval, which replicas do not give), unless ``interval_method=`` says otherwise, and
  reports name it beside the window's few-units and dominant-unit warnings. An interval over
  fewer than 30 units does not judge: with the interval alone (``detector=False``) a CUSUM on the
  block values judges instead (:class:`~streameval.detect.IntervalRule`), and with a detector its
  drops are kept ungated.

Reports (:meth:`Monitor.report`) are produced on a schedule (every ``report_every`` elements and/or
``report_seconds`` of wall time) and passed to ``on_report``.

>>> from streameval import ELM, AdjustedRand
>>> mon = Monitor([ELM(), AdjustedRand()], window=4, watch="ELM", block=2, detector=False)
>>> for t, p in [(0, "a"), (0, "a"), (1, "b"), (1, "b"), (1, "a"), (0, "b")]:
...     mon.update(t, p)
>>> r = mon.report()
>>> r["n"], round(r["all_time"]["ELM"], 4), round(r["window"]["ELM"], 4)
(6, 0.3333, 0.25)
>>> [(label, round(cost, 3)) for label, cost in r["worst"]]   # ELM precision loss, window
[('b', 2.0), ('a', 0.0)]
"""

from __future__ import annotations

import math
import numbers
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from ._validate import (
    check_label,
    check_ordered,
    check_total,
    check_weight,
    check_weights,
    is_missing,
)
from .breakdown import ErrorAccount
from .contingency import Contingency
from .detect import BlockDrops, Cusum, IntervalRule, RiverRule, is_drop
from .errors import require
from .evaluator import Evaluator
from .labels import factorize, same_label
from .sample import SampleEstimator
from .stats import ONE, bcubed_term, elm_term, precision_loss
from .sync import Guarded, concurrent_use
from .units import FEW_UNITS
from .window import CountWindow, EventTimeWindow

if TYPE_CHECKING:
    from .bootstrap import BootstrapEvaluator

__all__ = ["Monitor", "ClusterCostRanking", "is_drop"]


def _column(x, name: str):
    """``x`` as one column: a numpy array as it is (pandas and other array-likes through
    ``numpy.asarray``), a list or tuple as it is, any other iterable as a list."""
    if isinstance(x, (np.ndarray, list, tuple)):
        return x
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be a sequence, got a single {type(x).__name__}")
    check_ordered(x, name)
    if hasattr(x, "__array__"):
        return np.asarray(x)
    try:
        return list(x)
    except TypeError:
        raise TypeError(f"{name} must be a sequence, got {type(x).__name__}") from None


_BULK_WINDOW = 8  # update_many takes a count window in bulk from window size / 8 elements on


def _refills(codes: np.ndarray, n_old: int, size: int, first: int) -> tuple[list, list]:
    """For the labels ``codes`` of a count window's ``n_old`` elements followed by a batch of new
    ones (window ``size``; positions ``[first, len)`` in the window at the end), as one update per
    new element would see them: ``(touched, refilled)`` positions. ``touched``: one position per
    label that a new or a leaving element carries (its last such); ``refilled``: for each label
    in the window at the end whose cluster was empty just before some new element of it came
    (absent, or every earlier element gone: the previous one at a position below ``j − size``),
    the position where that last happened, in increasing order: the order in which the clusters
    take fresh ids. O(len log len) numpy.

    >>> _refills(np.array([0, 1, 0, 2, 1]), 2, 2, 3)  # window 2: [0, 1] then 0, 2, 1
    ([2, 3, 4], [3, 4])
    """
    end = len(codes)
    order = np.argsort(codes, kind="stable")
    prev = np.full(end, -1, dtype=np.int64)
    same = codes[order[1:]] == codes[order[:-1]]
    prev[order[1:][same]] = order[:-1][same]
    j = np.arange(n_old, end, dtype=np.int64)
    filled = prev[n_old:] < np.maximum(0, j - size)
    k = int(codes.max()) + 1 if end else 0
    last_fill = np.full(k, -1, dtype=np.int64)
    np.maximum.at(last_fill, codes[n_old:][filled], j[filled])
    alive = np.zeros(k, dtype=bool)
    alive[codes[first:]] = True
    touched_pos = np.full(k, -1, dtype=np.int64)
    moving = np.concatenate([np.arange(min(first, n_old)), j])  # leaving old, then every new
    np.maximum.at(touched_pos, codes[moving], moving)
    refilled = np.sort(last_fill[alive & (last_fill >= 0)])
    touched = np.sort(touched_pos[touched_pos >= 0])
    return touched.tolist(), refilled.tolist()


def _positive_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def _finite(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _check_settings(report_every, report_seconds, on_report, top, reference) -> None:
    """Refuse the Monitor settings that would otherwise be silently read as something else
    (``report_every=0`` as never, a negative one as an odd schedule, a NaN ``report_seconds``
    as never, ``top=-1`` as all but the last, a NaN ``reference`` as never below)."""
    if report_every is not None and not _positive_int(report_every):
        raise ValueError(f"report_every must be an int >= 1 (elements) or None, got {report_every!r}")
    if report_seconds is not None and not (_finite(report_seconds) and report_seconds >= 0):
        raise ValueError(f"report_seconds must be a finite number of seconds >= 0 or None, "
                         f"got {report_seconds!r}")
    if on_report is not None and not callable(on_report):
        raise TypeError(f"on_report must be callable (it is called with each report), got "
                        f"{type(on_report).__name__}")
    if not (isinstance(top, int) and not isinstance(top, bool) and top >= 0):
        raise ValueError(f"top must be an int >= 0 (the reports' list length), got {top!r}")
    if reference is not None and not _finite(reference):
        raise ValueError(f"reference must be a finite number or None, got {reference!r}")


class ClusterCostRanking:
    """The predicted clusters of a table, ranked by cost, kept current in O(log k) per change.

    ``cost="elm"`` (default): cluster ``j``'s ELM precision loss, ``b - Σ_e P_e`` over its ``b``
    elements, which is ``(b² - Q)/(b - 1)`` for ``b > 1`` and 0 for a singleton
    (``Q = Σ_i n[i,j]²``);
    ``b² - Q`` is twice the number of pairs in ``j`` from different true clusters, so the cost is
    the mixed pairs per element-neighbour. ``cost="bcubed"``: BCubed precision loss ``b - Q/b``.
    Either way the costs of all clusters sum to ``N·(1 - precision)``: the ranking says which
    clusters hold the precision the clustering is losing. Each cost is a fixed-point integer
    computed from the column's ``(size, sq)`` record in O(1), so ties and order are exact.

    Call :meth:`refresh` with a predicted label after the table changed that column; the ranking
    is a ``sortedcontainers.SortedList`` of ``(-cost, id)`` (O(log k) per refresh).

    >>> t = Contingency()
    >>> for y, p in [(0, "a"), (1, "a"), (0, "b"), (0, "b"), (1, "c")]:
    ...     t.update(y, p)
    >>> rank = ClusterCostRanking(t)
    >>> rank.top(2)
    [('a', 2.0), ('b', 0.0)]
    """

    def __init__(self, table: Contingency, cost: str = "elm"):
        SortedList = require("sortedcontainers", "ClusterCostRanking (Monitor)", "window").SortedList

        if cost not in ("elm", "bcubed"):
            raise ValueError(f'cost must be "elm" or "bcubed", got {cost!r}')
        self.table = table
        self.cost = cost
        self._term = elm_term if cost == "elm" else bcubed_term
        self._sorted = SortedList()
        self._entry: dict = {}  # label -> (-cost, id)
        self._label: dict = {}  # id -> label
        self._next = 0
        for p in table.pred_labels():
            self.refresh(p)

    def _cost(self, size: int, sq: int) -> int:
        return precision_loss(sq, size, self._term)

    def refresh(self, label) -> None:
        """Re-rank predicted cluster ``label`` after a change to it (or its removal). O(log k)."""
        entry = self._entry.pop(label, None)
        if entry is not None:
            self._sorted.remove(entry)
        k = self.table.pred_cluster(label)
        if k is None:
            if entry is not None:
                del self._label[entry[1]]
            return
        if entry is None:
            ident = self._next
            self._next += 1
            self._label[ident] = label
        else:
            ident = entry[1]
        entry = self._entry[label] = (-self._cost(k[0], k[1]), ident)
        self._sorted.add(entry)

    def refresh_many(self, labels, renew=()) -> None:
        """:meth:`refresh` of each of ``labels`` after many changes to the table, ``renew`` (a
        subset, in order) being the clusters that emptied and filled again meanwhile (or are
        new): they take fresh ids in that order, as the refreshes one by one would have given
        them, so ties rank as they would. O(log k) each.

        >>> t = Contingency()
        >>> rank = ClusterCostRanking(t)
        >>> t.update_many([0, 1, 0], ["b", "a", "a"])
        >>> rank.refresh_many(["a", "b"], renew=["b", "a"])  # "b" came first
        >>> rank.top(2)
        [('a', 2.0), ('b', 0.0)]
        """
        for label in renew:
            entry = self._entry.pop(label, None)
            if entry is not None:
                self._sorted.remove(entry)
                del self._label[entry[1]]
            self.refresh(label)
        for label in labels:
            self.refresh(label)

    def top(self, k: int = 5) -> list:
        """The ``k`` costliest predicted clusters as ``(label, cost in elements)``. O(log n + k)."""
        return [(self._label[i], -c / ONE) for c, i in self._sorted.islice(0, k)]

    def __len__(self) -> int:
        return len(self._sorted)


class Monitor(Guarded):
    """Feeds an all-time evaluator and a window, reports on a schedule, flags drops, ranks clusters,
    and says what broke.

    Parameters
    ----------
    metrics : a list of fresh metrics, a ``{name: metric}`` dict, or ``None`` (every O(1) metric).
        The all-time evaluator gets them; the window gets clones.
    window : an int (a :class:`~streameval.CountWindow` of that many updates), a window object
        (``CountWindow`` or ``EventTimeWindow`` with its own metrics), or ``None``.
    watch : the name of the metric whose drops are flagged (``None``: no drop detection).
    block : elements per block of the watched metric fed to the detector
        (:class:`~streameval.detect.BlockDrops`).
    detector : ``None`` (default: a :class:`~streameval.detect.Cusum` calibrated on the first 40
        blocks to 10⁸ elements between false alarms), a detector (``bind``, ``update(value)``:
        :class:`~streameval.detect.Cusum`, :class:`~streameval.detect.RiverRule`, ...), a name
        for :func:`~streameval.detect.make_detector` (``"cusum"``, ``"adwin"``,
        ``"page-hinkley"``, ``"interval"``), a River drift detector (``update(x)``,
        ``drift_detected``; wrapped in a ``RiverRule``), or ``False`` (no detection).
    report_every : report every that many elements; ``report_seconds``: every that many seconds
        (checked at each update); ``on_report``: called with each report dict.
    cost, top : the cluster ranking's cost (``"elm"`` or ``"bcubed"``) and the reports' list
        length (the ranking and the lists of :class:`~streameval.breakdown.ErrorAccount`).
    interval : ``None`` (default), an int ``B`` or a fresh :class:`~streameval.BootstrapEvaluator`
        holding the watched metric: bootstrap the count window over units (``update(..., unit=)``).
        A drop the detector finds is kept only if the window's interval lies below the reference
        (or the window holds fewer than 30 units: the interval cannot judge there);
        with ``detector=False`` (or ``"interval"``) the interval alone is checked every ``block``
        elements, and a drop is flagged when the interval newly falls below the reference
        (:class:`~streameval.detect.IntervalRule`; while the window holds fewer than 30 units it
        defers to a :class:`~streameval.detect.Cusum` on the block values).
    interval_method : with an int ``interval=``, the bootstrap interval: ``"adaptive"``
        (default: :func:`streameval.compare`'s rule with hybrid in place of subsampled, the
        streaming calibration's choice,
        ``docs/benchmarks/bootstrap.md``), ``"studentized"``, ``"hybrid"``, ``"percentile"`` or
        ``"bca"`` (:meth:`BootstrapEvaluator.intervals <streameval.BootstrapEvaluator.intervals>`).
    reference : the value the window is compared with (default: the all-time value when checked).
    sample : ``None`` (default), or a sampling design (``"uniform"``, ``"size"``, a
        :class:`~streameval.SampleDesign`): the labelled elements are a sample of whole entities
        and a missing ``y_true`` means "not in the sample". Every element then also feeds a
        :class:`~streameval.SampleEstimator`, and reports carry ``estimates`` (``{name:
        Estimate}``: value ± standard error, interval) and ``labelled_share``. An unlabelled
        element goes to the estimator only; the tables, window, detection and ranking see the
        labelled elements (their values are then the naive labelled-only scores, which overstate
        precision: read the estimates). With ``sample``, :meth:`update_many` is not offered.

    Cost per :meth:`update`: one all-time table update, one window update (plus one revert per
    element that leaves), one block-table update (a table of the block's elements, read every
    ``block`` elements: O(1) amortised), O(log k) per changed cell for the ranking and the
    error account, and the detector's update once per block. :meth:`report` reads every metric.

    Not thread-safe (see :mod:`streameval.sync`): an update that starts while another is running
    raises :class:`~streameval.errors.ConcurrentUseError`; share a monitor through
    :class:`~streameval.Synchronized`. :meth:`get` (a report that leaves ``new_drop`` pending)
    makes a monitor a target of :func:`streameval.river.progressive_evaluate`.

    >>> from streameval import ELM
    >>> Monitor([ELM()], window=100, block=25)
    Monitor(n=0, metrics=['ELM'], window=CountWindow(100), watch='ELM', block=25, \
detector=Cusum(k=0.5, run_length=1e+08, reference=40; calibrating), drops=[])
    """

    def __init__(
        self,
        metrics=None,
        *,
        window=1000,
        watch: str | None = "ELM",
        block: int = 25,
        detector=None,
        report_every: int | None = None,
        report_seconds: float | None = None,
        on_report=None,
        cost: str = "elm",
        top: int = 5,
        interval=None,
        interval_method: str | None = None,
        reference: float | None = None,
        sample=None,
    ):
        self.all_time = Evaluator(metrics)
        if window is None or isinstance(window, (CountWindow, EventTimeWindow)):
            self.window = window
        else:
            clones = {name: m.clone() for name, m in self.all_time.metrics.items()}
            self.window = CountWindow(window, clones)
        if watch is not None and watch not in self.all_time.metrics:
            raise ValueError(
                f"watch={watch!r} is not one of the monitored metrics {list(self.all_time)}"
            )
        if not isinstance(block, int) or isinstance(block, bool) or block < 1:
            raise ValueError(f"block must be an int >= 1, got {block!r}")
        _check_settings(report_every, report_seconds, on_report, top, reference)
        self.watch = watch
        self.block = block
        self.report_every = report_every
        self.report_seconds = report_seconds
        self.on_report = on_report
        self.top = top
        self.n = 0  # updates seen
        self.last_report: dict | None = None
        self._reported_drops = 0
        self._last_time = time.monotonic()
        ranked = self.window.evaluator.table if self.window is not None else self.all_time.table
        self.ranking = ClusterCostRanking(ranked, cost)
        self.account = ErrorAccount(ranked)
        self._pending: tuple | None = None  # an element the window added, not yet accounted
        self._init_guard()
        if self.window is not None:
            self.window.on_expire = self._expired
        self.interval: BootstrapEvaluator | None = None
        self.reference = reference
        self.sample: SampleEstimator | None = None if sample is None else SampleEstimator(sample)
        if interval is not None:
            self._setup_interval(interval, interval_method)
        elif interval_method is not None:
            raise ValueError("interval_method= needs interval= (the bootstrap it describes)")
        self.detection: BlockDrops | None = None
        if watch is not None and (detector is not False or self.interval is not None):
            det = self._detector(detector)
            self.detection = BlockDrops(self.all_time.metrics[watch], block, det,
                                        gate=None if isinstance(det, IntervalRule) else self._gate())
        # the element counts at which drops were flagged, and the watched metric over each block
        self.drops: list = self.detection.drops if self.detection is not None else []
        self.block_values: list = self.detection.values if self.detection is not None else []

    def _detector(self, detector):
        if detector is None:
            return Cusum()
        if detector is False or detector == "interval":
            if self.interval is None:
                return IntervalRule()
            return IntervalRule(self._interval_below, units=self._interval_units)
        if isinstance(detector, str):
            from .detect import make_detector

            return make_detector(detector)
        if isinstance(detector, IntervalRule) and detector.below is None and self.interval is not None:
            detector.below = self._interval_below
            if detector.units is None:
                detector.units = self._interval_units
        if hasattr(detector, "bind"):
            return detector
        return RiverRule(detector)  # a River drift detector

    def _gate(self):
        """With an interval, a drop another detector flags is kept only if the interval is below,
        or if the window holds fewer than :data:`~streameval.units.FEW_UNITS` units (an interval
        over so few units cannot tell a change from the window's noise: the detector, calibrated
        on the block values, judges alone). An :class:`~streameval.detect.IntervalRule` is not
        gated: it reads the interval itself, with the same few-units rule."""
        if self.interval is None:
            return None

        def gate() -> bool:
            return self._interval_units() < FEW_UNITS or self._interval_below()

        return gate

    @property
    def detector(self):
        """The detector the blocks are fed to (``None`` without detection)."""
        return None if self.detection is None else self.detection.detector

    def _expired(self, y_true, y_pred, w) -> None:
        # the window has added the new element (pending) and removed this one before calling:
        # the account learns the two changes in that order (or as one, on one cell)
        pending, self._pending = self._pending, None
        if pending is not None:
            if same_label(pending[0], y_true) and same_label(pending[1], y_pred):  # no broadcast
                self.account.refresh(y_true, y_pred, pending[2] - w)
                self.ranking.refresh(y_pred)
                return
            self.account.refresh(*pending)
        self.ranking.refresh(y_pred)
        self.account.refresh(y_true, y_pred, -w)

    def _window_update(self, y_true, y_pred, w, **t) -> None:
        """Update the window and the account (in the order the table changed)."""
        assert self.window is not None
        self._pending = (y_true, y_pred, w)
        try:
            self.window.update(y_true, y_pred, w, **t)
        except BaseException:
            self._pending = None
            raise
        if self._pending is not None:
            self._pending = None
            self.account.refresh(y_true, y_pred, w)

    # ------------------------------------------------------------------ bootstrap interval
    def _setup_interval(self, interval, method: str | None) -> None:
        from .bootstrap import DEFAULT_INTERVAL, BootstrapEvaluator

        if self.watch is None:
            raise ValueError("interval= needs a watched metric (watch=)")
        if not isinstance(self.window, CountWindow):
            raise ValueError("interval= bootstraps a count window: pass window=N or a CountWindow")
        if isinstance(interval, BootstrapEvaluator):
            if interval.n or self.watch not in interval.evaluator.metrics:
                raise ValueError(
                    f"interval= must be a fresh BootstrapEvaluator holding {self.watch!r}"
                )
            if method is not None and method != interval.interval_method:
                raise ValueError(f"interval_method={method!r} differs from the BootstrapEvaluator's "
                                 f"{interval.interval_method!r}: give it to the BootstrapEvaluator")
            self.interval = interval
        elif isinstance(interval, int) and not isinstance(interval, bool) and interval >= 1:
            self.interval = BootstrapEvaluator(
                {self.watch: self.all_time.metrics[self.watch].clone()}, n_replicas=interval,
                interval=DEFAULT_INTERVAL if method is None else method,
            )
        else:
            raise ValueError(f"interval must be an int >= 1 or a BootstrapEvaluator, got {interval!r}")
        self._units: deque[Any] = deque()  # the unit of each element in the window, oldest first
        ranking_refresh = self.window.on_expire

        def expire(y_true, y_pred, w):
            ranking_refresh(y_true, y_pred, w)
            self.interval.revert(y_true, y_pred, w, unit=self._units.popleft())

        self.window.on_expire = expire

    def window_interval(self) -> tuple | None:
        """``(value, low, high)`` of the watched metric over the window (``None`` without
        ``interval=``). Cost: one read of the window's
        :meth:`BootstrapEvaluator.get <streameval.BootstrapEvaluator.get>`."""
        return None if self.interval is None else self.interval.get()[self.watch]

    def _interval_units(self) -> int:
        """The live resampling units of the window's bootstrap. O(1)."""
        assert self.interval is not None
        return self.interval.units

    def _interval_below(self) -> bool:
        """Whether the window's interval lies entirely on the bad side of the reference."""
        interval = self.window_interval()
        assert interval is not None and self.watch is not None  # called only with interval=
        _, low, high = interval
        ref = self.reference
        if ref is None:
            ref = self.all_time.metrics[self.watch].get()
        if self.all_time.metrics[self.watch].bigger_is_better:
            return high < ref
        return low > ref

    def update(self, y_true, y_pred, w=1, *, t=None, unit=None) -> None:
        """Take one element (``t``: its event time, for an event-time window; ``unit``: its
        resampling unit, required with ``interval=``).

        Bad input raises before anything changes. Cost: one all-time table update, one window
        update (plus a revert per element that leaves it), one block-table update, O(log k) per
        changed cell for the ranking and the error account, and the detector's update once per
        ``block`` elements (the block's reading, amortised O(1)).
        """
        w = check_weight(w)
        if self.interval is not None:
            if unit is None:
                raise ValueError("a Monitor with interval= needs each element's unit: update(..., unit=)")
            # the unit's type, and the clusters' units (after the window's oldest leaves, as it
            # will), checked before anything changes
            assert isinstance(self.window, CountWindow)
            leaving = None
            if len(self.window) >= self.window.size:
                oldest = next(iter(self.window))
                leaving = (*oldest, self._units[0])
            self.interval.check_update(y_true, y_pred, w, unit=unit, leaving=leaving)
        sample = self.sample
        if sample is not None:  # validated before anything changes
            if is_missing(y_true):
                return self._update_unlabelled(y_pred, w)
            check_label(y_true, "y_true", "")
            if not sample.design.declared(y_true):
                sample.design.weight_of(y_true, 1)  # raises, naming the entity
            check_total(sample.n, w, "the sample estimator")
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "update")
        try:
            emit = self._update(y_true, y_pred, w, t, unit)
            if sample is not None:
                sample.update(y_true, y_pred, w)
        finally:
            guard.release()
        if emit:
            self._emit()

    def _update_unlabelled(self, y_pred, w) -> None:
        """``sample=``: an element outside the sample goes to the estimator only."""
        assert self.sample is not None
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "update")
        try:
            self.sample.update(None, y_pred, w)  # validates before changing
            self.n += 1
            emit = self._due(1)
        finally:
            guard.release()
        if emit:
            self._emit()

    def _update(self, y_true, y_pred, w, t, unit) -> bool:
        window = self.window
        if isinstance(window, EventTimeWindow):
            if t is None:
                raise ValueError("an event-time window needs the element's time: update(..., t=)")
            check_total(self.all_time.table.n, w)  # the all-time table fills first: check it first
            self._window_update(y_true, y_pred, w, t=t)  # validates everything before changing
            self.all_time.update(y_true, y_pred, w)
        else:
            self.all_time.update(y_true, y_pred, w)  # validates the labels before changing
            if window is not None:
                if self.interval is not None:
                    self._units.append(unit)
                self._window_update(y_true, y_pred, w)
            else:
                self.account.refresh(y_true, y_pred, w)
        if self.interval is not None:
            self.interval.update(y_true, y_pred, w, unit=unit)
        self.ranking.refresh(y_pred)
        self.n += 1
        if self.detection is not None:
            self.detection.update(y_true, y_pred, w)
        return self._due(1)

    def _due(self, added: int) -> bool:
        every = self.report_every
        return bool(every and self.n // every > (self.n - added) // every) or (
            self.report_seconds is not None
            and time.monotonic() - self._last_time >= self.report_seconds
        )

    def update_many(self, y_true, y_pred, w=None) -> None:
        """Take many elements at once (numpy arrays, or sequences; ``w``: weights or ``None``):
        the state of calling :meth:`update` for each, the drop detection's blocks read in bulk
        (:meth:`BlockDrops.update_many <streameval.detect.BlockDrops.update_many>`: integer
        arrays whole blocks at a time); at most one report, after them. For a count window or
        none, without ``interval=`` (give event times and units one by one with :meth:`update`).

        Bad input (any label or weight, mismatched lengths) raises before anything changes.
        Cost: the all-time table's ``update_many`` and the block tables in bulk, on the arrays as
        given; the error account and the ranking learn the net change of each cell and cluster
        the batch touches (O(log k) each, :meth:`ErrorAccount.refresh_many
        <streameval.breakdown.ErrorAccount.refresh_many>`), not each element; a count window
        takes the batch in one ``update_many`` of the elements that stay and one revert per old
        element that leaves (O(window + N) vectorised to find which clusters emptied and filled
        again: their tie order is that of the updates one by one). A batch shorter than an
        eighth of the window goes element by element (cheaper than reading the window).
        ``docs/benchmarks/monitor.md`` measures both.

        >>> import numpy as np
        >>> from streameval import ELM
        >>> mon = Monitor([ELM()], window=3, detector=False)
        >>> mon.update_many(np.array(["a", "a", "b", "b"]), np.array(["x", "x", "x", "y"]))
        >>> mon.n, len(mon.window), mon.get()["broke"]["splits"]  # entity b split in two
        (4, 3, 1)
        """
        if self.sample is not None:
            raise ValueError("update_many is not offered with sample=: give the elements one by "
                             "one with update()")
        if isinstance(self.window, EventTimeWindow) or self.interval is not None:
            raise ValueError("update_many takes a count window (or none) without interval=: "
                             "give event times or units one by one with update()")
        y_true, y_pred = _column(y_true, "y_true"), _column(y_pred, "y_pred")
        n = len(y_true)
        if n != len(y_pred):
            raise ValueError(f"y_true and y_pred differ in length: {n} != {len(y_pred)}")
        if w is not None:
            w = _column(w, "w")
            if len(w) != n:
                raise ValueError(f"w has {len(w)} weights for {n} elements")
        weights = check_weights(w, n)  # None, or checked int64 weights
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "update_many")
        try:
            self.all_time.update_many(y_true, y_pred, weights)  # validates all before changing
            if self.window is not None:
                ts = y_true.tolist() if isinstance(y_true, np.ndarray) else list(y_true)
                ps = y_pred.tolist() if isinstance(y_pred, np.ndarray) else list(y_pred)
                ws = [1] * n if weights is None else weights.tolist()
                if _BULK_WINDOW * n >= self.window.size:
                    self._window_many(y_true, y_pred, weights, ts, ps, ws)
                else:  # a few elements beside a long window: one by one is cheaper
                    ranking = self.ranking
                    for t, p, x in zip(ts, ps, ws):
                        self._window_update(t, p, x)
                        ranking.refresh(p)
            elif n:
                self._refresh_cells(y_true, y_pred, weights)
            self.n += n
            if self.detection is not None:
                self.detection.update_many(y_true, y_pred, weights)
            emit = self._due(n)
        finally:
            guard.release()
        if emit:
            self._emit()

    def _window_many(self, y_true, y_pred, weights, ts: list, ps: list, ws: list) -> None:
        """A count window takes ``n`` elements at once, in the state of ``n`` window updates
        (each adding one, then expiring the oldest once full): the window's table adds the
        elements still inside at the end in one ``update_many`` and reverts the old elements that
        leave; the error account and the ranking learn the net change of every cell and cluster
        touched. Their tie order is that of the updates one by one: a cluster that emptied and
        filled again within the batch (or is new) takes a fresh id, in the order in which it last
        filled again (:func:`_refills`). O(window + n) vectorised, O(log k) per cluster touched,
        and one table revert per old element that leaves."""
        window = self.window
        assert isinstance(window, CountWindow)
        size, old = window.size, list(window)
        n_old, n = len(old), len(ts)
        end = n_old + n
        first = max(0, end - size)  # positions [first, end) are the window's at the end
        leave_old = min(first, n_old)  # old elements that leave
        stay_new = max(0, first - n_old)  # the new elements from this index stay
        all_t = [e[0] for e in old] + ts
        all_p = [e[1] for e in old] + ps
        ct, _ = factorize(all_t, "y_true")
        cp, _ = factorize(all_p, "y_pred")
        w_all = np.array([e[2] for e in old] + ws, dtype=np.int64)
        rows, renew_rows = _refills(ct, n_old, size, first)
        cols, renew_cols = _refills(cp, n_old, size, first)
        # the net change of each cell: + the new elements that stay, − the old ones that leave
        sign = np.zeros(end, dtype=np.int64)
        sign[n_old + stay_new:] = 1
        sign[:leave_old] = -1
        moved = np.flatnonzero(sign)
        n_p = int(cp.max()) + 1 if end else 1
        key = ct[moved] * n_p + cp[moved]
        cells, at, inv = np.unique(key, return_index=True, return_inverse=True)
        delta = np.zeros(len(cells), dtype=np.int64)
        np.add.at(delta, inv.reshape(-1), (sign * w_all)[moved])
        window.shift(leave_old, ts[stay_new:], ps[stay_new:], ws[stay_new:],
                      y_true[stay_new:], y_pred[stay_new:],
                      None if weights is None else weights[stay_new:])
        pos = moved[at]
        self.account.refresh_many(
            [(all_t[i], all_p[i], d) for i, d in zip(pos.tolist(), delta.tolist()) if d],
            renew=([all_t[i] for i in renew_rows], [all_p[i] for i in renew_cols]))
        self.ranking.refresh_many([all_p[i] for i in cols], [all_p[i] for i in renew_cols])

    def _refresh_cells(self, y_true, y_pred, weights) -> None:
        """Without a window: the account and the ranking learn the batch's distinct cells (their
        summed weights) and predicted clusters, each in the order of its first element: the
        order the per-element refreshes would have met them, hence the same tie order.
        O(N log N) numpy + O(distinct cells · log k)."""
        ct, ut = factorize(y_true, "y_true")
        cp, up = factorize(y_pred, "y_pred")
        key = ct * len(up) + cp  # below len(ut) · len(up) <= N²: fits an int64 for N < 3·10⁹
        cells, first, inv = np.unique(key, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        if weights is None:
            delta = np.bincount(inv, minlength=len(cells))
        else:  # exact: the all-time table has just accepted the batch, so every sum is < 2**57
            delta = np.zeros(len(cells), dtype=np.int64)
            np.add.at(delta, inv, weights)
        order = np.argsort(first, kind="stable")
        rows, cols = np.divmod(cells[order], len(up))
        self.account.refresh_many(zip(map(ut.__getitem__, rows.tolist()),
                                      map(up.__getitem__, cols.tolist()), delta[order].tolist()))
        labels, at = np.unique(cp, return_index=True)
        refresh = self.ranking.refresh
        for p in labels[np.argsort(at, kind="stable")].tolist():
            refresh(up[p])

    def relabel_pred(self, old, new) -> None:
        """The clusterer merged (or renamed) predicted cluster ``old`` into ``new``: move it in the
        all-time table, the window and the current block (:meth:`Contingency.relabel_pred`).
        Cost: O(cells of ``old``) per table that holds it, two ranking refreshes, and the error
        account recounted, O(cells log cells)."""
        if self.interval is not None:
            raise ValueError("relabel_pred is not supported with interval= (the bootstrap replicas "
                             "hold tagged copies of the labels)")
        guard = self._guard
        if not guard.acquire(False):
            concurrent_use(self, "relabel_pred")
        try:
            self.all_time.table.relabel_pred(old, new)  # holds every element: raises if unknown
            if self.detection is not None and self.detection.table.pred_size(old):
                self.detection.table.relabel_pred(old, new)
            if self.window is not None and self.window.evaluator.table.pred_size(old):
                self.window.relabel_pred(old, new)
            self.ranking.refresh(old)
            self.ranking.refresh(new)
            self.account = ErrorAccount(self.account.table)  # recounted: O(cells log cells)
        finally:
            guard.release()

    def worst(self, k: int | None = None) -> list:
        """The ``k`` (default ``top``) costliest predicted clusters, ``(label, cost)``.
        O(log K + k) for K ranked clusters (:meth:`ClusterCostRanking.top`)."""
        return self.ranking.top(self.top if k is None else k)

    def report(self) -> dict:
        """``{"n", "all_time", "window", "watch", "drops", "new_drop", "worst", "broke"}``.

        ``all_time``/``window`` map metric names to values (``window`` is ``None`` without one);
        ``drops`` lists the element counts at which drops were flagged; ``new_drop`` says whether
        one was flagged since the previous report; ``worst`` is :meth:`worst`; ``broke`` is what
        broke over the window (the all-time table without one): splits, merges, the entities
        split across most predicted clusters and the clusters merging most entities
        (:meth:`ErrorAccount.report <streameval.breakdown.ErrorAccount.report>`). With
        ``interval=`` the report also has ``window_interval``: ``(value, low, high)`` of the
        watched metric, ``window_interval_method`` (the method asked for: ``"adaptive"``,
        ``"studentized"``, ``"hybrid"``, ``"percentile"`` or ``"bca"``),
        ``window_interval_applied`` (the one computed: adaptive's choice) and
        ``window_interval_warnings`` (few units, a dominant unit:
        :meth:`BootstrapEvaluator.warnings <streameval.BootstrapEvaluator.warnings>`; and, when the
        drops are judged by the :class:`~streameval.detect.IntervalRule`, that it defers to its
        fallback detector while the window holds fewer than its ``min_units``); with
        ``sample=``, ``estimates`` and ``labelled_share``. Cost: a read of every metric on the
        all-time table and on the window (O(1) each for O(1) metrics), the ``top`` worst clusters
        and the error account's report; with ``interval=`` one bootstrap read, with ``sample=``
        one estimator read.

        >>> from streameval import BCubed
        >>> mon = Monitor([BCubed()], window=None, watch=None, sample="uniform")
        >>> for t, p in [("a", 1), ("a", 1), (None, 1), ("b", 2), ("b", 2)]:
        ...     mon.update(t, p)
        >>> r = mon.report()
        >>> round(r["estimates"]["pairwise_precision"].value, 4), r["labelled_share"]
        (0.5926, 0.8)
        """
        report = self.get()
        self._reported_drops = len(self.drops)
        return report

    def get(self) -> dict:
        """The dict :meth:`report` returns, without marking the drops as reported. Cost: as
        :meth:`report`.

        So a monitor can be the target of :func:`streameval.river.progressive_evaluate`, which
        yields ``(n, target.get())``.

        >>> from streameval import ELM
        >>> mon = Monitor([ELM()], window=2, detector=False)
        >>> mon.update(0, "a"); mon.update(0, "a")
        >>> mon.get()["window"]
        {'ELM': 1.0}
        """
        new_drop = len(self.drops) > self._reported_drops
        extra: dict[str, Any] = {}
        if self.interval is not None:
            extra["window_interval"] = self.window_interval()
            extra["window_interval_method"] = self.interval.interval_method
            extra["window_interval_applied"] = self.interval.applied_method()
            warnings = self.interval.warnings()
            rule = self.detector
            fewest = rule.min_units if isinstance(rule, IntervalRule) else FEW_UNITS
            if rule is not None and self.interval.units < fewest:
                judge = rule.fallback if isinstance(rule, IntervalRule) else rule
                warnings.append(
                    f"the window holds {self.interval.units} units, fewer than {fewest}: drops are "
                    f"judged by the detector alone ({type(judge).__name__} on the block values), "
                    "not by the interval"
                )
            extra["window_interval_warnings"] = warnings
        if self.sample is not None:
            extra["estimates"] = self.sample.get()
            extra["labelled_share"] = self.sample.labelled_share
        return {
            "n": self.n,
            "all_time": self.all_time.get(),
            "window": self.window.get() if self.window is not None else None,
            "watch": self.watch,
            "drops": list(self.drops),
            "new_drop": new_drop,
            "worst": self.worst(),
            "broke": self.account.report(self.top),
            **extra,
        }

    def _emit(self) -> None:
        self._last_time = time.monotonic()
        self.last_report = self.report()
        if self.on_report is not None:
            self.on_report(self.last_report)

    def __repr__(self) -> str:
        window = self.window
        if isinstance(window, CountWindow):
            win = f"CountWindow({window.size})"
        else:
            win = repr(None) if window is None else type(window).__name__
        return (f"Monitor(n={self.n}, metrics={list(self.all_time.metrics)}, window={win}, "
                f"watch={self.watch!r}, block={self.block}, detector={self.detector!r}, "
                f"drops={self.drops})")
