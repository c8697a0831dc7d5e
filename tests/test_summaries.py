"""ClusterSummaries: Welford update, exact-inverse revert, Chan merge, JSON state, input checks,
numerical stability."""

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streameval import CalinskiHarabasz, ClusterSummaries
from streameval.errors import (
    InvalidStateError,
    InvalidVectorError,
    InvalidWeightError,
    MissingLabelError,
    SettingsMismatchError,
    UnknownElementError,
)

# update then revert restores the floats within these bounds (stated in streameval/summaries.py)
REVERT_RTOL = 1e-9
MERGE_RTOL = 1e-9

coords = st.floats(-100, 100, allow_nan=False, allow_infinity=False)
points = st.lists(
    st.tuples(st.lists(coords, min_size=3, max_size=3), st.integers(0, 3), st.integers(1, 3)),
    min_size=1,
    max_size=25,
)


def feed(s, pts):
    for x, p, w in pts:
        s.update(x, p, w)
    return s


def assert_close(a: ClusterSummaries, b: ClusterSummaries, rtol, scale=None):
    """Counts equal exactly; means and scatters equal within rtol of the data's scale."""
    da, db = a.to_dict(), b.to_dict()
    assert da["n"] == db["n"]
    ca = {json.dumps(c[0]): c for c in da["clusters"]}
    cb = {json.dumps(c[0]): c for c in db["clusters"]}
    assert ca.keys() == cb.keys()
    for key in ca:
        _, na, ma, sa = ca[key]
        _, nb, mb, sb = cb[key]
        assert na == nb
        ms = scale if scale is not None else max(1.0, np.abs(ma).max())
        np.testing.assert_allclose(ma, mb, rtol=0, atol=rtol * ms)
        assert sa == pytest.approx(sb, rel=rtol, abs=rtol * ms * ms)
    if da["n"]:
        ms = scale if scale is not None else max(1.0, np.abs(da["mean"]).max())
        np.testing.assert_allclose(da["mean"], db["mean"], rtol=0, atol=rtol * ms)
        assert da["scatter"] == pytest.approx(db["scatter"], rel=rtol, abs=rtol * ms * ms)


def brute(pts):
    """Count, mean and scatter per cluster straight from the points (two passes)."""
    out = {}
    for p in {p for _, p, _ in pts}:
        xs = np.array([x for x, q, w in pts if q == p for _ in range(w)], dtype=float)
        m = xs.mean(axis=0)
        out[p] = (len(xs), m, float(((xs - m) ** 2).sum()))
    return out


# -- values ----------------------------------------------------------------------------------------
@pytest.mark.slow
@given(points)
def test_summaries_match_two_pass_brute_force(pts):
    s = feed(ClusterSummaries(), pts)
    s.check_invariants()
    for p, (n, m, m2) in brute(pts).items():
        got = s.cluster(p)
        assert got[0] == n
        np.testing.assert_allclose(got[1], m, atol=1e-9 * 100)
        assert got[2] == pytest.approx(m2, rel=1e-9, abs=1e-7)


def test_weight_is_multiplicity():
    a, b = ClusterSummaries(), ClusterSummaries()
    a.update([1.0, 2.0], "x", w=3)
    a.update([4.0, 0.0], "x", w=2.0)  # integral float accepted (River's 1.0)
    for _ in range(3):
        b.update([1.0, 2.0], "x")
    for _ in range(2):
        b.update([4.0, 0.0], "x")
    assert_close(a, b, 1e-12)


# -- laws ------------------------------------------------------------------------------------------
@pytest.mark.slow
@given(points, st.lists(coords, min_size=3, max_size=3), st.integers(0, 4), st.integers(1, 4))
def test_update_then_revert_restores_summaries(pts, x, p, w):
    s = feed(ClusterSummaries(), pts)
    before = ClusterSummaries.from_dict(s.to_dict())
    s.update(x, p, w)
    s.revert(x, p, w)
    s.check_invariants()
    scale = max(1.0, max(abs(v) for v in x), max(abs(c) for q, _, _ in pts for c in q))
    assert_close(s, before, REVERT_RTOL, scale=scale)


@pytest.mark.slow
@given(points)
def test_reverting_everything_empties(pts):
    s = feed(ClusterSummaries(), pts)
    for x, p, w in reversed(pts):
        s.revert(x, p, w)
    assert s.n == 0 and s.k == 0 and s.ssw == 0.0
    s.check_invariants()


@pytest.mark.slow
@given(points, points, points)
def test_merge_of_shards_equals_one_stream(a, b, c):
    whole = feed(ClusterSummaries(), a + b + c)
    sa, sb, sc = feed(ClusterSummaries(), a), feed(ClusterSummaries(), b), feed(ClusterSummaries(), c)
    left = ClusterSummaries.from_dict(sa.to_dict())
    left.merge(sb)
    left.merge(sc)  # (a+b)+c
    right = ClusterSummaries.from_dict(sb.to_dict())
    right.merge(sc)
    right.merge(sa)  # (b+c)+a: associative and commutative
    assert_close(left, whole, MERGE_RTOL, scale=100.0)
    assert_close(right, whole, MERGE_RTOL, scale=100.0)
    empty = ClusterSummaries()
    empty.merge(sa)  # the empty summary is the identity
    sa.merge(ClusterSummaries())
    assert_close(empty, sa, 0.0)
    left.check_invariants()


def test_relabelling_changes_nothing_but_names():
    rng = np.random.default_rng(1)
    pts = [(rng.normal(size=2).tolist(), int(rng.integers(3)), 1) for _ in range(30)]
    ren = {0: "z", 1: ("t", 1), 2: 7.5}
    a = feed(ClusterSummaries(), pts)
    b = feed(ClusterSummaries(), [(x, ren[p], w) for x, p, w in pts])
    assert a.ssw == b.ssw and a.ssb() == b.ssb()
    for p in ren:
        assert a.cluster(p)[2] == b.cluster(ren[p])[2]


# -- JSON state ------------------------------------------------------------------------------------
def test_json_round_trip_is_exact_and_copy_independent():
    s = ClusterSummaries()
    feed(s, [([0.1, 0.2], "a", 1), ([1 / 3, 2.5], ("t", 2), 2), ([1e8, -1e-8], 3, 1)])
    d = json.loads(json.dumps(s.to_dict()))
    t = ClusterSummaries.from_dict(d)
    assert t.to_dict() == s.to_dict()
    c = s.copy()
    c.update([0.0, 0.0], "a")
    assert s.cluster("a")[0] == 1


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(format="x"), "not a streameval ClusterSummaries"),
        (lambda d: d.update(version=9), "unsupported"),
        (lambda d: d.pop("clusters"), "lacks the key 'clusters'"),
        (lambda d: d.update(n=5), "'n' is 5"),
        (lambda d: d["clusters"][0].__setitem__(1, 0), "count must be an int >= 1"),
        (lambda d: d["clusters"][0].__setitem__(2, [1.0]), "mean must be a list of 2"),
        (lambda d: d["clusters"][0].__setitem__(3, -1.0), "scatter must be a finite number >= 0"),
        (lambda d: d["clusters"].append(list(d["clusters"][0])), "duplicate label"),
        (lambda d: d.update(space="manhattan"), "invalid space"),
        (lambda d: d["clusters"][0].__setitem__(0, None), "missing"),
    ],
)
def test_from_dict_rejects_malformed_state(change, message):
    s = feed(ClusterSummaries(), [([1.0, 2.0], "a", 2), ([3.0, 1.0], "b", 1)])
    d = s.to_dict()
    change(d)
    with pytest.raises(InvalidStateError, match=message):
        ClusterSummaries.from_dict(d)


# -- inputs ----------------------------------------------------------------------------------------
def test_vector_forms_lists_tuples_arrays_dicts():
    a, b = ClusterSummaries(), ClusterSummaries()
    a.update([1.0, 2.0], 0)
    a.update((3, 4), 0)
    a.update(np.array([5.0, 6.0], dtype=np.float32), 0)
    b.update({"u": 1.0, "v": 2.0}, 0)
    b.update({"v": 4, "u": 3}, 0)  # keys in another order: mapped by name
    b.update({"u": np.float64(5.0), "v": 6.0}, 0)
    assert b.features == ["u", "v"]
    assert_close(a, b, 0.0)
    fixed = ClusterSummaries(features=["v", "u"])
    fixed.update({"u": 1.0, "v": 2.0}, 0)
    assert fixed.cluster(0)[1].tolist() == [2.0, 1.0]


BAD = [
    ([1.0, 2.0, 3.0], 0, 1, InvalidVectorError, "dimension 3, expected 2"),
    ([1.0, float("nan")], 0, 1, InvalidVectorError, "non-finite"),
    ([1.0, float("inf")], 0, 1, InvalidVectorError, "non-finite"),
    ([[1.0, 2.0]], 0, 1, InvalidVectorError, "one-dimensional"),
    (["a", "b"], 0, 1, InvalidVectorError, "numbers"),
    ("ab", 0, 1, InvalidVectorError, "list, tuple"),
    (3.0, 0, 1, InvalidVectorError, "list, tuple"),
    ({"u": 1.0}, 0, 1, InvalidVectorError, "features"),
    ([1.0, 2.0], None, 1, MissingLabelError, "missing"),
    ([1.0, 2.0], 0, 0, InvalidWeightError, "positive integer"),
    ([1.0, 2.0], 0, 1.5, InvalidWeightError, "positive integer"),
]


@pytest.mark.parametrize("x, p, w, err, message", BAD)
def test_bad_input_rejected_state_untouched(x, p, w, err, message):
    s = feed(ClusterSummaries(), [([1.0, 2.0], 0, 2), ([0.0, 1.0], 1, 1)])
    before, version = s.to_dict(), s.version
    with pytest.raises(err, match=message):
        s.update(x, p, w)
    with pytest.raises(err):
        s.revert(x, p, w)
    assert s.to_dict() == before and s.version == version


def test_dict_stream_rejects_unknown_and_missing_features():
    s = ClusterSummaries()
    s.update({"u": 1.0, "v": 2.0}, 0)
    before = s.to_dict()
    for bad in ({"u": 1.0, "w": 2.0}, {"u": 1.0}, [1.0, 2.0]):
        with pytest.raises(InvalidVectorError):
            s.update(bad, 0)
    assert s.to_dict() == before


def test_revert_unknown_cluster_or_too_many_rejected():
    s = feed(ClusterSummaries(), [([1.0, 2.0], 0, 2)])
    before = s.to_dict()
    with pytest.raises(UnknownElementError, match="holds 0 elements"):
        s.revert([1.0, 2.0], "nope")
    with pytest.raises(UnknownElementError, match="holds 2 elements"):
        s.revert([1.0, 2.0], 0, w=3)
    assert s.to_dict() == before


def test_cosine_space_normalises_and_rejects_zero():
    s = ClusterSummaries(space="cosine")
    s.update([3.0, 4.0], 0)
    with pytest.raises(InvalidVectorError, match="non-zero"):
        s.update([0.0, 0.0], 0)
    assert s.n == 1 and s.cluster(0)[1].tolist() == [0.6, 0.8]


def test_merge_rejects_mismatched_summaries():
    a = feed(ClusterSummaries(), [([1.0, 2.0], 0, 1)])
    b = feed(ClusterSummaries(), [([1.0, 2.0, 3.0], 0, 1)])
    with pytest.raises(SettingsMismatchError, match="with dim=3 into one with dim=2"):
        a.merge(b)
    with pytest.raises(SettingsMismatchError, match="with space='cosine' into one with space='euclidean'"):
        a.merge(ClusterSummaries(space="cosine"))


# -- numerical stability -------------------------------------------------------------------------
def shifted_data(shift):
    rng = np.random.default_rng(7)
    centers = rng.normal(scale=5.0, size=(4, 3))
    labels = rng.integers(0, 4, size=400)
    X = centers[labels] + rng.normal(size=(400, 3))  # unit spread around each center
    return X + shift, labels


def shortcut_ssw(X, labels):
    """The textbook shortcut ``sum ||x||² - n·||mean||²`` per cluster (what NOT to do)."""
    total = 0.0
    for j in np.unique(labels):
        xs = X[labels == j]
        total += float((xs * xs).sum() - len(xs) * (xs.mean(axis=0) ** 2).sum())
    return total


def test_shift_by_1e8_keeps_ssw_and_ch():
    X0, y = shifted_data(0.0)
    X1, _ = shifted_data(1e8)
    values = []
    for X in (X0, X1):
        ch = CalinskiHarabasz()
        for x, p in zip(X, y):
            ch.update(x, int(p))
        values.append((ch.summaries.ssw, ch.get()))
    (ssw0, ch0), (ssw1, ch1) = values
    assert ssw1 == pytest.approx(ssw0, rel=1e-6)
    assert ch1 == pytest.approx(ch0, rel=1e-6)
    # the sum-of-squares shortcut loses every digit on the same data
    assert shortcut_ssw(X0, y) == pytest.approx(ssw0, rel=1e-9)
    assert abs(shortcut_ssw(X1, y) - ssw0) > 1e-6 * ssw0


def test_invariants_under_random_operations():
    rng = np.random.default_rng(3)
    s, live = ClusterSummaries(), []
    for _ in range(400):
        if live and rng.random() < 0.4:
            x, p, w = live.pop(int(rng.integers(len(live))))
            s.revert(x, p, w)
        else:
            item = (rng.normal(size=4).tolist(), int(rng.integers(6)), int(rng.integers(1, 3)))
            s.update(*item)
            live.append(item)
        s.check_invariants()
    assert s.n == sum(w for _, _, w in live)
    assert math.isfinite(s.ssw)


# -- one stateful machine: random updates, reverts and merges, check_invariants() after every step ---------
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule  # noqa: E402

from streameval import batch  # noqa: E402


class SummariesMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.s = ClusterSummaries()
        self.live = []  # (vector, label, w) currently in the summaries

    @rule(x=st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=2),
          p=st.sampled_from("abcd"), w=st.integers(1, 3))
    def update(self, x, p, w):
        self.s.update(x, p, w)
        self.live.append((x, p, w))

    @precondition(lambda self: self.live)
    @rule(i=st.integers(0, 10**6))
    def revert(self, i):
        x, p, w = self.live.pop(i % len(self.live))
        self.s.revert(x, p, w)

    @rule(x=st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=2), p=st.sampled_from("ab"))
    def merge_shard(self, x, p):
        shard = ClusterSummaries()
        shard.update(x, p)
        self.s.merge(shard)
        self.live.append((x, p, 1))

    @invariant()
    def consistent(self):
        self.s.check_invariants()
        assert self.s.n == sum(w for _, _, w in self.live)
        if self.live:
            X = np.array([x for x, _, w in self.live for _ in range(w)])
            y = [p for _, p, w in self.live for _ in range(w)]
            assert self.s.ssw == pytest.approx(batch.ssw_score(X, y), rel=1e-7, abs=1e-7)
            assert self.s.ssb() == pytest.approx(batch.ssb_score(X, y), rel=1e-7, abs=1e-7)


TestSummariesMachine = SummariesMachine.TestCase
TestSummariesMachine.pytestmark = [pytest.mark.slow]  # a unittest class: marked here


# -- from_arrays: the engines' way in ------------------------------------------------------------------
def arrays_of(s: ClusterSummaries):
    labels = s.labels()
    counts, means, m2 = s.slot_arrays()
    slots = s.slots(labels)
    return counts[slots], means[slots], m2[slots], labels


@given(points)
def test_from_arrays_equals_the_stream(pts):
    """Summaries rebuilt from the per-cluster arrays equal the streamed ones: the clusters exactly,
    the global summary (Chan's tree of merges against Welford's sequence) within rounding."""
    s = feed(ClusterSummaries(), pts)
    count, mean, m2, labels = arrays_of(s)
    t = ClusterSummaries.from_arrays(count, mean, m2, labels=labels)
    t.check_invariants()
    assert t.to_dict()["clusters"] == s.to_dict()["clusters"]
    assert_close(t, s, MERGE_RTOL)


@given(points, points)
def test_from_arrays_then_merge_equals_from_arrays_of_the_union(a, b):
    """Built from arrays, summaries merge like streamed ones (labels of b shifted apart)."""
    b = [(x, p + 10, w) for x, p, w in b]
    sa, sb = feed(ClusterSummaries(), a), feed(ClusterSummaries(), b)
    left = ClusterSummaries.from_arrays(*arrays_of(sa)[:3], labels=arrays_of(sa)[3])
    left.merge(ClusterSummaries.from_arrays(*arrays_of(sb)[:3], labels=arrays_of(sb)[3]))
    sa.merge(sb)
    c, m, q, lab = arrays_of(sa)
    whole = ClusterSummaries.from_arrays(c, m, q, labels=lab)
    assert left.sizes() == whole.sizes()
    assert_close(left, whole, MERGE_RTOL)
