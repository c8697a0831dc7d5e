"""Windows built on revert: every reading equals batch recomputation over the window's content."""

import datetime as dt

import pytest
from contingency_rounding import exact_and_bound, sklearn_nmi_bound, within
from hypothesis import given
from hypothesis import strategies as st

import streameval as se
from streameval import batch
from streameval.errors import InvalidWeightError, MissingLabelError, StreamevalError

METRICS = [se.ELM(), se.BCubed(), se.AdjustedRand(), se.NormalizedMutualInfo(), se.Purity()]


def _fresh():
    return [m.clone() for m in METRICS]


def _batch(content):
    """The same metrics' exact values on ``[(y_true, y_pred, w)]``, each with the bound of
    streameval's rounding (:mod:`contingency_rounding`): ``{name: (exact, bound)}``."""
    yt = [y for y, _, w in content for _ in range(w)]
    yp = [p for _, p, w in content for _ in range(w)]
    exact = exact_and_bound(yt, yp)
    return {m.name: exact[m.name] for m in METRICS}


def _close(got, want):
    assert got.keys() == want.keys()
    for k in got:
        assert within(got[k], want[k]), (k, got[k], want[k])


labels = st.integers(0, 4)
elements = st.tuples(labels, labels, st.integers(1, 3))


@pytest.mark.slow
@given(st.integers(1, 8), st.lists(elements, min_size=1, max_size=40))
def test_count_window_equals_batch_on_its_tail_at_every_step(size, stream):
    w = se.CountWindow(size, _fresh())
    for i, e in enumerate(stream):
        w.update(*e)
        tail = stream[max(0, i + 1 - size) : i + 1]
        assert list(w) == tail
        _close(w.get(), _batch(tail))
    w.evaluator.table._check()


def test_count_window_matches_sklearn_on_a_long_stream():
    import random

    skm = pytest.importorskip("sklearn.metrics")  # the peer is optional: the module runs without it

    rng = random.Random(7)
    stream = [(rng.randrange(5), rng.randrange(6)) for _ in range(400)]
    w = se.CountWindow(50, [se.AdjustedRand(), se.NormalizedMutualInfo()])
    for i, (y, p) in enumerate(stream):
        w.update(y, p)
        if i % 25 == 0 or i == len(stream) - 1:
            yt, yp = zip(*stream[max(0, i - 49) : i + 1])
            got = w.get()
            # ARI: both divide exact integers once (scikit-learn's below 2**53 convert exactly),
            # so the same correctly rounded quotient; NMI: each within its own rounding of the
            # exact value (ours: contingency_rounding; scikit-learn's: its logs, 5 per cell)
            assert got["AdjustedRand"] == skm.adjusted_rand_score(yt, yp)
            want, bound = exact_and_bound(yt, yp)["NormalizedMutualInfo"]
            assert within(got["NormalizedMutualInfo"], (want, bound))
            assert within(skm.normalized_mutual_info_score(yt, yp), (want, sklearn_nmi_bound(yt, yp)))


# event-time windows: times drift forward with jitter, so some elements arrive out of order
timed = st.lists(st.tuples(elements, st.integers(-4, 3)), min_size=1, max_size=40)


def _oracle(arrivals, span, lateness):
    """Brute force: replay the acceptance rule, then filter the accepted elements by time."""
    accepted, late, now = [], 0, None
    for t, e in arrivals:
        if now is not None and (t < now - lateness or t <= now - span):
            late += e[2]
            continue
        accepted.append((t, e))
        now = t if now is None else max(now, t)
    return [(t, e) for t, e in accepted if t > now - span], late


@pytest.mark.slow
@given(timed, st.integers(1, 6), st.integers(0, 6))
def test_event_time_window_equals_batch_on_its_content_at_every_step(stream, span, lateness):
    w = se.EventTimeWindow(span, _fresh(), lateness=lateness)
    arrivals = []
    for i, (e, jitter) in enumerate(stream):
        t = i + jitter
        w.update(*e, t=t)
        arrivals.append((t, e))
        content, late = _oracle(arrivals, span, lateness)
        held = list(w)
        assert sorted(held, key=lambda x: x[0]) == held  # kept in event-time order
        assert sorted(held) == sorted((t, *e) for t, e in content)
        assert w.late == late
        _close(w.get(), _batch([e for _, e in content]))
    w.evaluator.table._check()


def test_event_time_window_with_datetimes_and_advance():
    t0 = dt.datetime(2024, 1, 1)
    w = se.EventTimeWindow(dt.timedelta(minutes=10), [se.Purity()], lateness=dt.timedelta(minutes=2))
    w.update(0, "a", t=t0)
    w.update(1, "a", t=t0 + dt.timedelta(minutes=5))
    w.update(1, "b", t=t0 + dt.timedelta(minutes=4))  # one minute late: accepted
    assert [t.minute for t, *_ in w] == [0, 4, 5]
    assert w.get() == {"Purity": 2 / 3}
    w.advance(t0 + dt.timedelta(minutes=14, seconds=30))  # a clock tick: t0 and t0+4min expire
    assert len(w) == 1 and w.get() == {"Purity": 1.0}
    w.advance(t0)  # time never goes back
    assert w.now == t0 + dt.timedelta(minutes=14, seconds=30)
    w.advance(t0 + dt.timedelta(hours=1))
    assert len(w) == 0 and w.evaluator.table.n == 0


def test_event_time_window_late_policy_and_bad_input_leave_state_unchanged():
    w = se.EventTimeWindow(10, [se.ELM()], lateness=1, on_late="raise")
    w.update(0, "a", t=5)
    state = (list(w), w.evaluator.table.copy(), w.now, w.late)
    with pytest.raises(StreamevalError, match="too late"):
        w.update(0, "a", t=3)
    for bad_time in ("noon", None, float("nan")):
        with pytest.raises(StreamevalError, match="event time"):
            w.update(0, "a", t=bad_time)
    with pytest.raises(MissingLabelError):
        w.update(None, "a", t=1)  # a late element with a bad label is still rejected
    with pytest.raises(MissingLabelError):
        w.update(None, "a", t=6)
    with pytest.raises(InvalidWeightError):
        w.update(0, "a", 0.5, t=6)
    assert (list(w), w.evaluator.table, w.now, w.late) == state


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"span": 0}, "span"),
        ({"span": -1}, "span"),
        ({"span": True}, "span"),
        ({"span": 3, "lateness": -1}, "lateness"),
        ({"span": 3, "on_late": "ignore"}, "on_late"),
    ],
)
def test_event_time_window_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        se.EventTimeWindow(**kwargs)


def test_event_time_window_shares_an_evaluator():
    ev = se.Evaluator([se.Rand()])
    w = se.EventTimeWindow(2.5, ev)
    for t, (y, p) in enumerate([(0, 0), (0, 0), (1, 0), (1, 1)]):
        w.update(y, p, t=float(t))
    assert w.evaluator is ev and ev.table.n == 3  # times 1, 2, 3 are in (0.5, 3]
    assert w.get() == {"Rand": batch.rand_score([0, 1, 1], [0, 0, 1])}


@pytest.mark.slow
@given(st.integers(1, 6), st.lists(elements, max_size=20))
def test_count_window_to_dict_from_dict_round_trips_through_json(size, stream):
    import json

    w = se.CountWindow(size, {"elm": se.ELM(), "b2": se.BCubed(beta=2.0), "ari": se.AdjustedRand()})
    for e in stream:
        w.update(*e)
    back = se.CountWindow.from_dict(json.loads(json.dumps(w.to_dict())))
    assert back.get() == w.get() and list(back) == list(w)
    assert back.evaluator.table == w.evaluator.table
    for e in stream[:3]:  # and both keep sliding the same way
        w.update(*e)
        back.update(*e)
    assert back.get() == w.get()


def test_count_window_state_with_tuple_labels_and_bad_states():
    from streameval.errors import InvalidStateError

    w = se.CountWindow(3, [se.Purity()])
    w.update(("doc", 1), "x", 2)
    d = w.to_dict()
    assert se.CountWindow.from_dict(d).get() == w.get() and list(se.CountWindow.from_dict(d)) == [
        (("doc", 1), "x", 2)
    ]
    d = {**d, "version": 1}  # version 1 (labels in the items) is still read
    bad = [
        ({**d, "format": "other"}, "CountWindow state"),
        ({**d, "version": 9}, "version"),
        ({k: v for k, v in d.items() if k != "items"}, "items"),
        ({**d, "size": 0}, "window size"),
        ({**d, "metrics": [["x", "NoSuchMetric", {}]]}, "metrics\\[0\\]"),
        ({**d, "items": [[1, 2, 1]] * 4}, "at most 3"),
        ({**d, "items": [[1, 2, 0.5]]}, "items\\[0\\]"),
        ({**d, "items": [[None, 2, 1]]}, "items\\[0\\]"),
    ]
    for state, match in bad:
        with pytest.raises(InvalidStateError, match=match):
            se.CountWindow.from_dict(state)
