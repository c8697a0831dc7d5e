"""Bad input found by the audit of the public API: each raises an error naming the problem and
leaves the whole state (its pickle, byte for byte) exactly as it was."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

from streameval import ELM, AdjustedRand, BootstrapEvaluator, ClusterReport, EventTimeWindow, Monitor
from streameval.errors import InvalidWeightError, StreamevalError


def _interval_monitor():
    mon = Monitor([ELM()], window=3, block=2, interval=16)
    for t, p, u in [("e1", "c1", "d1"), ("e1", "c1", "d1"), ("e2", "c2", "d2")]:
        mon.update(t, p, unit=u)
    return mon


def _monitor_state(mon) -> tuple:
    """A Monitor does not pickle (its window calls back into it): every part that does, and the
    rest read whole (the window's elements and units, the ranking, the account, the blocks)."""
    det = mon.detection
    blocks = () if det is None else (det.n, det._len, list(det.values), list(det.drops),
                                     pickle.dumps(det._table))
    return (mon.n, pickle.dumps(mon.all_time), pickle.dumps(mon.window.evaluator), list(mon.window),
            list(getattr(mon, "_units", ())), pickle.dumps(mon.interval), mon.ranking.top(10**6),
            mon.account.report(10**6), *blocks)


def test_a_monitors_interval_refuses_a_cluster_across_units_before_any_change():
    """Before: the all-time table, the window and its unit queue took the element, then the
    bootstrap refused it (a monitor whose tables disagreed with its count)."""
    mon = _interval_monitor()
    before = _monitor_state(mon)
    with pytest.raises(ValueError, match="true label 'e2' is in unit 'd2' and now given in unit 'd3'"):
        mon.update("e2", "c9", unit="d3")
    with pytest.raises(ValueError, match="predicted label 'c1' is in unit 'd1' and now given in unit 'd2'"):
        mon.update("e9", "c1", unit="d2")
    assert _monitor_state(mon) == before


def test_a_monitors_interval_accepts_a_cluster_whose_old_unit_leaves_the_window_first():
    """The window is full: its oldest element (``e1`` in ``d1``) leaves on this update, so ``e1``
    may come back in another unit only once no element of it is left in ``d1``."""
    mon = _interval_monitor()
    with pytest.raises(ValueError, match="'e1' is in unit 'd1'"):  # one e1 stays in d1
        mon.update("e1", "c1", unit="d3")
    mon.update("e3", "c3", unit="d3")  # the first e1 leaves
    mon.update("e1", "c1", unit="d4")  # the second (the last of d1) leaves first: accepted
    direct = BootstrapEvaluator({"ELM": ELM()}, n_replicas=16)
    for t, p, u in [("e2", "c2", "d2"), ("e3", "c3", "d3"), ("e1", "c1", "d4")]:
        direct.update(t, p, unit=u)
    assert mon.interval == direct
    assert list(mon.window) == [("e2", "c2", 1), ("e3", "c3", 1), ("e1", "c1", 1)]


@pytest.mark.parametrize("now", [None, 5])
@pytest.mark.parametrize("t", [float("nan"), "x", None])
def test_an_event_time_windows_clock_refuses_a_time_it_cannot_order(now, t):
    """Before: ``advance(nan)`` was silently ignored (or, on a fresh window, set the clock to NaN,
    after which nothing ever expired), ``advance("x")`` set the clock and then raised."""
    w = EventTimeWindow(10, [ELM()])
    if now is not None:
        w.update("e", "c", t=now)
    before = pickle.dumps(w)
    with pytest.raises(StreamevalError, match=f"event time {t!r} must be a number or datetime"):
        w.advance(t)
    assert pickle.dumps(w) == before


def test_bootstrap_intervals_refuse_a_bad_confidence_before_settling_the_replicas():
    bs = BootstrapEvaluator([ELM()], n_replicas=8, seed=1)
    for u in range(3):
        bs.update(u, u, unit=u)
    before = pickle.dumps(bs)
    for bad in (1.5, 0, float("nan"), "0.9"):
        with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1"):
            bs.intervals(confidence=bad)
        with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1"):
            bs.interval("ELM", confidence=bad)
    assert pickle.dumps(bs) == before


@pytest.mark.parametrize("setting, match", [
    ({"report_every": 0}, "report_every must be an int >= 1"),
    ({"report_every": -5}, "report_every must be an int >= 1"),
    ({"report_every": 2.5}, "report_every must be an int >= 1"),
    ({"report_seconds": float("nan")}, "report_seconds must be a finite number of seconds >= 0"),
    ({"report_seconds": -1}, "report_seconds must be a finite number of seconds >= 0"),
    ({"on_report": "print"}, "on_report must be callable"),
    ({"top": -1}, "top must be an int >= 0"),
    ({"reference": float("nan")}, "reference must be a finite number"),
    ({"reference": "0.9"}, "reference must be a finite number"),
])
def test_monitor_settings_that_would_be_read_as_something_else_are_refused(setting, match):
    """Before: ``report_every=0`` meant never, ``-5`` an odd schedule, a NaN ``report_seconds``
    never, ``top=-1`` every cluster but the last, a NaN ``reference`` a window never below it."""
    with pytest.raises((ValueError, TypeError), match=match):
        Monitor([ELM()], **setting)


def test_monitor_settings_at_their_bounds_are_accepted():
    mon = Monitor([ELM()], report_every=1, report_seconds=0.5, on_report=print, top=0, reference=0.9)
    assert (mon.report_every, mon.top, mon.reference) == (1, 0, 0.9)


@pytest.mark.parametrize("calibrated", [False, True])
@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), "0.5", None, True])
def test_a_cusum_refuses_a_block_value_that_is_no_finite_number(calibrated, bad):
    """Before: a string joined the reference blocks and then broke the calibration (state
    changed); an infinite value calibrated a CUSUM at μ = ∞ that could never flag."""
    from streameval.detect import Cusum

    c = Cusum(reference=2, h=3.0)
    c.bind(5, True)
    for v in [0.9, 0.8] if calibrated else [0.9]:
        c.update(v)
    before = pickle.dumps(c)
    with pytest.raises(ValueError, match="a block value must be a finite number"):
        c.update(bad)
    assert pickle.dumps(c) == before
    assert c.update(float("nan")) is False and pickle.dumps(c) == before  # NaN: ignored


@pytest.mark.parametrize("stream, flags, match", [
    ("s2", (2, 1), "page 0, true flag: a page flag must be 0 or 1, got 2"),
    ("s2", (1, float("nan")), "page 0, predicted flag: a page flag must be 0 or 1, got nan"),
    (None, (1, 1), r"the stream id is missing \(None\)"),
    (float("nan"), (1, 1), r"the stream id is missing \(NaN\)"),
    (["s"], (1, 1), "a stream id must be hashable, got list"),
])
def test_a_page_stream_evaluator_refuses_a_bad_page_without_opening_a_stream(stream, flags, match):
    """Before: a new stream was created (empty) before its first flag was refused, and a NaN
    stream id opened a new stream on every page."""
    from streameval import PageStreamEvaluator
    from streameval.errors import PageStreamError

    ev = PageStreamEvaluator([ELM()])
    ev.update("s1", 1, 1)
    ev.update("s1", 0, 1)
    before = pickle.dumps(ev)
    with pytest.raises(PageStreamError, match=match):
        ev.update(stream, *flags)
    assert pickle.dumps(ev) == before


def _relabel_targets():
    """Every relabel entry point, each holding true cluster 0 and predicted cluster ``"a"``, and
    how to read its whole state."""
    from streameval import Contingency, CountWindow, Evaluator
    from streameval.reference import ReferenceContingency

    def fill(x):
        for t, p in [(0, "a"), (1, "a"), (1, "b")]:
            x.update(t, p) if not isinstance(x, EventTimeWindow) else x.update(t, p, t=1)
        return x

    pickled = pickle.dumps
    mon = fill(Monitor([ELM()], window=5, block=2, detector=False))
    return [
        ("Contingency", fill(Contingency()), pickled),
        ("ReferenceContingency", fill(ReferenceContingency()), pickled),
        ("Evaluator", fill(Evaluator([ELM()])), pickled),
        ("CountWindow", fill(CountWindow(5, [ELM()])), pickled),
        ("EventTimeWindow", fill(EventTimeWindow(10, [ELM()])), pickled),
        ("Monitor", mon, _monitor_state),
    ]


@pytest.mark.parametrize("i", range(6))
@pytest.mark.parametrize("side", ["pred", "true"])
def test_every_relabel_entry_point_refuses_an_unknown_cluster_alike(i, side):
    """One rule for every relabel entry point: an unknown ``old`` raises
    :class:`UnknownElementError` with the table's message and changes nothing. Before: a window
    (and so a Monitor's window) silently did nothing where the table raised."""
    from streameval.errors import UnknownElementError

    name, target, read = _relabel_targets()[i]
    relabel = getattr(target, f"relabel_{side}", None)
    if relabel is None:  # the windows and the Monitor move predicted clusters only
        pytest.skip(f"{name} has no relabel_{side}")
    what = "predicted" if side == "pred" else "true"
    before = read(target)
    for unknown in ("zz", 7, None):
        with pytest.raises(UnknownElementError,
                           match=f"^relabel of {what} cluster {unknown!r}: it holds no elements$"):
            relabel(unknown, "a" if side == "pred" else 0)
    assert read(target) == before
    relabel("a" if side == "pred" else 0, "c" if side == "pred" else 2)  # a known one still moves
    assert read(target) != before


def test_a_window_refuses_a_cluster_that_has_left_it_and_the_monitor_still_moves_it():
    """A cluster that only the all-time table still holds: a window refuses to relabel it (it
    holds no such element), while a Monitor moves it in the all-time table and leaves its
    window (which does not hold it) alone."""
    from streameval import CountWindow
    from streameval.errors import UnknownElementError

    w = CountWindow(2, [ELM()])
    for t, p in [(0, "old"), (1, "b"), (1, "c")]:
        w.update(t, p)
    before = pickle.dumps(w)
    with pytest.raises(UnknownElementError, match="relabel of predicted cluster 'old'"):
        w.relabel_pred("old", "b")
    assert pickle.dumps(w) == before
    mon = Monitor([ELM()], window=2, detector=False)
    for t, p in [(0, "old"), (1, "b"), (1, "c")]:
        mon.update(t, p)
    window = pickle.dumps(mon.window.evaluator)
    mon.relabel_pred("old", "b")
    assert mon.all_time.table.pred_sizes() == {"b": 2, "c": 1}
    assert pickle.dumps(mon.window.evaluator) == window


@pytest.mark.parametrize("reference", [False, True])
def test_tables_under_different_missing_policies_refuse_to_merge(reference):
    """The merge law on missing labels (docs/rules.md): only tables with the same ``missing``
    policy merge, whatever their skipped counts. Before: a ``"skip"`` table's skipped count was
    carried into a ``"raise"`` table, which could then never revert those elements, and a
    ``"raise"`` table merged into a ``"skip"`` one silently. The differential
    ``tests/test_native.py::test_merge_under_another_missing_policy_native_equals_reference``
    holds the native and reference tables to the same law."""
    from streameval import Contingency
    from streameval.errors import StreamevalError
    from streameval.reference import ReferenceContingency

    cls = ReferenceContingency if reference else Contingency
    raising, skipping, empty_skip = cls(), cls(missing="skip"), cls(missing="skip")
    raising.update(0, "a")
    skipping.update(None, "a", w=3)
    skipping.update(1, "b")
    states = [pickle.dumps(x) for x in (raising, skipping, empty_skip)]
    for into, other, msg in [
        (raising, skipping, "missing='skip' (3 skipped) into one with missing='raise'"),
        (raising, empty_skip, "missing='skip' (0 skipped) into one with missing='raise'"),
        (skipping, raising, "missing='raise' (0 skipped) into one with missing='skip'"),
    ]:
        with pytest.raises(StreamevalError, match=r"^cannot merge a table with " + re.escape(msg)
                           + ": the missing-label policies must match$"):
            into.merge(other)
    assert [pickle.dumps(x) for x in (raising, skipping, empty_skip)] == states
    empty_skip.merge(skipping)  # the same policy: the skipped counts add
    assert (empty_skip.n, empty_skip.skipped) == (1, 3)


def test_a_river_union_whose_member_refuses_a_revert_changes_nothing():
    """A union whose members do not all share its table (one joined with history): a revert that
    the shared table accepts and a member's own table refuses. Before: the shared table (and the
    members before the refusing one) had already reverted it."""
    pytest.importorskip("river")
    from streameval import Purity
    from streameval.errors import UnknownElementError

    used = Purity()
    used.update(5, "z")
    u = ELM() + AdjustedRand()
    u.update(0, "a")
    u = u + used  # keeps its own table: it has seen (5, "z") and not (0, "a")
    u.update(1, "b")
    before = (pickle.dumps(u.table), pickle.dumps(used.table))
    with pytest.raises(UnknownElementError, match="revert of \\(y_true=0, y_pred='a', w=1\\)"):
        u.revert(0, "a")
    with pytest.raises(UnknownElementError):
        u.revert(5, "z")  # the other way round: the shared table refuses first
    assert (pickle.dumps(u.table), pickle.dumps(used.table)) == before
    u.revert(1, "b")  # held by both: reverted in both
    assert (u.table.n, used.table.n) == (1, 1)


def test_an_error_accounts_merge_refuses_with_the_tables_error_and_changes_nothing():
    """Before: merging something that is not a table raised an ``AttributeError`` from reading
    its cells (``'list' object has no attribute 'items'``) instead of the table's refusal."""
    from streameval import Contingency
    from streameval.breakdown import ErrorAccount
    from streameval.errors import StreamevalError

    account = ErrorAccount(Contingency())
    for t, p in [(0, "a"), (0, "b"), (1, "b")]:
        account.table.update(t, p)
        account.refresh(t, p, 1)
    before = (pickle.dumps(account.table), account.report(10))
    with pytest.raises(TypeError, match="can only merge a Contingency, got list"):
        account.merge([(0, "a", 1)])
    skipping = Contingency(missing="skip")
    skipping.update(2, "c")
    with pytest.raises(StreamevalError, match="the missing-label policies must match"):
        account.merge(skipping)
    assert (pickle.dumps(account.table), account.report(10)) == before


@pytest.mark.parametrize("w", [-1, 0, True, 1.5])
@pytest.mark.parametrize("report", [False, True])
def test_a_bad_weight_to_an_intrinsic_update_is_refused_before_the_native_call(w, report):
    # the native update reads a negative weight as a revert: every entry point checks w first
    from streameval.intrinsic import SSW, IntrinsicEvaluator, SqEuclideanSilhouette

    ev = ClusterReport() if report else IntrinsicEvaluator([SSW(), SqEuclideanSilhouette()])
    for x, p in [([0.0, 0.0], 0), ([1.0, 0.0], 0), ([5.0, 5.0], 1)]:
        ev.update(x, p)
    before = pickle.dumps(ev)
    with pytest.raises(InvalidWeightError):
        ev.update([1.0, 0.0], 0, w=w) if not report else ev.update([1.0, 0.0], 0, None, w)
    assert pickle.dumps(ev) == before


_MISREAD = [  # (vector, error fragment): values a float64 conversion read silently, or overflowed
    ([np.complex128(1 + 2j), 2.0], "got complex values (the imaginary part would be lost)"),
    ([np.complex64(3), 2.0], "got complex values"),
    (np.array([1 + 2j, 2.0]), "got complex values"),
    (["1", 2.0], "got text or bytes: ['1', '2.0']"),
    ([b"1", 2.0], "got text or bytes"),
    (np.array(["1", "2"], dtype=object), "got text or bytes"),
    ([10**400, 2.0], "vector values must be numbers: int too large to convert to float"),
    ([1e300, 1e300], "vector has a value of magnitude 2**256 or more"),
    ([-(2.0**256), 1.0], "vector has a value of magnitude 2**256 or more"),
]


@pytest.mark.parametrize("x, fragment", _MISREAD)
@pytest.mark.parametrize("native", [True, False])
def test_a_vector_numpy_would_misread_is_refused_on_every_path(x, fragment, native):
    """Before: a complex value lost its imaginary part (a warning at most, and none on the
    native path for a list of numpy complex scalars), a string was parsed as a number, a huge
    int raised a bare OverflowError, and values near 1e300 were taken, their squares overflowing
    to an SSW of ``nan`` (native) or ``inf`` (reference). Now each is an InvalidVectorError on the
    summaries (both paths), their blocks, the evaluators and the batch functions; nothing
    changes."""
    from streameval import ClusterSummaries, IntrinsicEvaluator, batch
    from streameval.errors import InvalidVectorError

    summaries = ClusterSummaries(dim=2, native=native)
    summaries.update([1.0, 2.0], "a")  # a known cluster: the native fast path is tried first
    evaluators = [IntrinsicEvaluator(dim=2), ClusterReport(dim=2)]
    for ev in evaluators:
        ev.update(np.array([1.0, 2.0]), "a")
        ev.get()
    before = [pickle.dumps(o) for o in (summaries, *evaluators)]
    for target in (summaries, *evaluators):
        with pytest.raises(InvalidVectorError, match=re.escape(fragment)):
            target.update(x, "a")
    block = np.array([[0.0, 0.0], [0.0, 0.0]], dtype=np.asarray(x).dtype)
    block[1] = x
    with pytest.raises(InvalidVectorError):
        summaries.update_many(block, ["a", "a"])
    assert [pickle.dumps(o) for o in (summaries, *evaluators)] == before
    with pytest.raises(InvalidVectorError):
        batch.ssw_score(block, [0, 1])


@pytest.mark.parametrize("native", [True, False])
def test_vector_values_just_below_the_bound_are_kept_exactly(native):
    from streameval import ClusterSummaries

    top = np.nextafter(2.0**256, 0.0)  # the largest magnitude accepted
    s = ClusterSummaries(dim=2, native=native)
    s.update([top, 1.0], "a")
    s.update_many(np.array([[-top, True]]), ["b"])  # a bool reads as 1.0
    assert s.cluster("a")[1].tolist() == [top, 1.0] and s.cluster("b")[1].tolist() == [-top, 1.0]
    assert np.isfinite(s.ssb()) and s.ssw == 0.0


@pytest.mark.parametrize("t", [np.array([1.0, 2.0]), np.array([3.0])])
def test_an_event_time_window_refuses_an_array_as_a_time(t):
    """Before: a 2-element array raised numpy's "truth value of an array is ambiguous", a
    1-element array was taken as a time (and became the clock)."""
    w = EventTimeWindow(10, [ELM()])
    w.update("e", "c", t=5)
    before = pickle.dumps(w)
    with pytest.raises(StreamevalError, match="must be a number or datetime"):
        w.update("e", "c", t=t)
    with pytest.raises(StreamevalError, match="must be a number or datetime"):
        w.advance(t)
    assert pickle.dumps(w) == before and w.now == 5


@pytest.mark.parametrize("settings, match", [
    ({"features": "xy"}, "features must be a sequence of feature names, got the single str 'xy'"),
    ({"features": ["x", "y", "x"]}, r"features must be distinct names, got \['x'\] more than once"),
    ({"features": [["x"], "y"]}, "features must be hashable names"),
    ({"dim": True}, "dim must be a positive integer, got True"),
])
def test_summaries_settings_that_would_be_read_as_something_else_are_refused(settings, match):
    """Before: ``features="xy"`` made two one-letter features, a repeated name made summaries
    that refused every dict vector, and ``dim=True`` was a dimension of 1."""
    from streameval import ClusterSummaries, IntrinsicEvaluator

    for make in (ClusterSummaries, IntrinsicEvaluator, ClusterReport):
        with pytest.raises(ValueError, match=match):
            make(**settings)
