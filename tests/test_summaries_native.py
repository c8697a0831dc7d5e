"""The native kernel of ClusterSummaries and the intrinsic views against the Python reference.

Two summaries (and two evaluators over every registered view) are driven with the same
operations — updates of new and known clusters with lists, tuples, float64 and int arrays, reverts
down to emptied clusters, merges, pickling, rejected calls — one with the native kernel
(``native=True``), one the reference (``native=False``); after every step the whole state is
compared.

What must agree, from the arithmetic (``ε = 2⁻⁵³``):

- counts, labels, slots, free slots, ``n``, ``version``: exactly (integers).
- means and scatters, per cluster and global, in both spaces: bit for bit. Welford's mean step
  is element-wise, ``mean + (x - mean)·(w/n2)``, the same operations in the same order on both
  sides (``w/n2`` is correctly rounded in both); a step's scatter increment
  ``(w·n/n2)·||x - mean||²`` and the cosine space's norm ``sqrt(sum x_i²)`` sum their ``d``
  squares left to right on both sides (``summaries._sum_sq``: no BLAS dot), and ``w·n/n2`` is
  one correctly rounded quotient while ``w·n`` stays below ``2**53`` (as here).
- The views: functions of those with condition number O(1) on this well-separated data, so within
  ``1e-9`` relative (the parity analysis of ``intrinsic_parity.assert_same``); the prequential
  silhouettes' fixed-point sums within one unit of ``2⁻⁵³`` per scored point.
"""

import array
import copy
import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval as se
from streameval.errors import InvalidStateError, InvalidVectorError, UnknownElementError
from streameval.intrinsic import INTRINSIC_REGISTRY

_native = pytest.importorskip("streameval._native", reason="the native module is not built")
EPS = 2.0**-53


class Pair:
    """A native and a reference ClusterSummaries, driven alike; ``check`` compares their whole
    state bit for bit."""

    def __init__(self, space="euclidean", dim=None):
        self.nat = se.ClusterSummaries(dim=dim, space=space)
        self.ref = se.ClusterSummaries(dim=dim, space=space, native=False)

    def do(self, op, x, label, w):
        errors = []
        for s in (self.nat, self.ref):
            try:
                getattr(s, op)(x, label, w)
                errors.append(None)
            except (InvalidVectorError, UnknownElementError, ValueError) as e:
                errors.append(str(e))
        assert errors[0] == errors[1], errors
        self.check()
        return errors[0] is None

    def check(self):
        a, b = self.nat, self.ref
        assert (a.n, a.k, a.version, a.width, a.dim) == (b.n, b.k, b.version, b.width, b.dim)
        assert a._labels == b._labels and a._index == b._index and sorted(a._free) == sorted(b._free)
        w = a.width
        assert np.array_equal(a._count[:w], b._count[:w])
        for x, y in ((a._mean[:w], b._mean[:w]), (a._m2[:w], b._m2[:w]), (a._gmean, b._gmean), (np.float64(a._gm2), np.float64(b._gm2))):
            assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


def vectors(rng, d):
    """The forms a vector arrives in: list, tuple, float64 array, int array, numpy scalars, and
    the buffers the kernel reads or leaves to the reference: a strided view, a big-endian
    array, float32, ``array.array("d")``, a memoryview."""
    v = rng.normal(size=d) * 3 + 1
    kind = rng.integers(0, 10)
    if kind == 0:
        return v.tolist()
    if kind == 1:
        return tuple(v.tolist())
    if kind == 2:
        return v
    if kind == 3:
        return np.round(v).astype(np.int64)
    if kind == 4:
        return [np.float64(t) for t in v]
    if kind == 5:
        return np.repeat(v, 2)[::2]  # not contiguous
    if kind == 6:
        return v.astype(">f8")
    if kind == 7:
        return v.astype(np.float32)
    if kind == 8:
        return array.array("d", v.tolist())
    return memoryview(v)


@pytest.mark.parametrize("space", ["euclidean", "cosine"])
@pytest.mark.parametrize("d", [1, 5, 64])
def test_native_summaries_equal_the_reference_step_by_step(space, d):
    rng = np.random.default_rng(d)
    p = Pair(space)
    live: list = []  # (x, label, w) updates not reverted
    for step in range(400):
        r = rng.random()
        if live and r < 0.3:
            x, label, w = live.pop(int(rng.integers(0, len(live))))
            p.do("revert", x, label, w)
        elif r < 0.33:  # rejected calls: same error, nothing changed
            bad = rng.integers(0, 4)
            x, label = [[1.0] * (d + 1), [float("nan")] * d, "abc", [0.0] * d][bad], int(rng.integers(0, 9))
            if p.do("update", x, label, 1):  # a zero vector is refused in the cosine space only
                live.append((x, label, 1))
            if live:
                x, label, w = live[0]
                p.do("revert", x, label, w + 1000)  # more than the cluster holds
        else:
            x, label, w = vectors(rng, d), int(rng.integers(0, 9)), int(rng.integers(1, 4))
            p.do("update", x, label, w)
            live.append((x, label, w))
        if step == 200:  # pickling rebinds the kernel; the copy goes on as the original
            p.nat = pickle.loads(pickle.dumps(p.nat))
            p.check()
    for x, label, w in live:
        p.do("revert", x, label, w)
    assert p.nat.n == p.ref.n == 0


def test_merge_and_growth_rebind_the_kernel():
    """Merging new clusters in grows the arrays (the kernel is bound anew) and updates go on."""
    rng = np.random.default_rng(7)
    p = Pair(dim=3)
    other = se.ClusterSummaries()
    for j in range(40):
        other.update(rng.normal(size=3), f"c{j}")
    for s in (p.nat, p.ref):
        s.update([0.0, 0.0, 0.0], "c0")
        s.merge(other)
    p.check()
    for j in range(200):
        p.do("update", rng.normal(size=3), f"c{j % 40}", 1)
    assert p.nat.capacity == p.ref.capacity >= 40


def views():
    return {name: cls() for name, cls in INTRINSIC_REGISTRY.items()}


def rel_close(a: float, b: float, rtol: float) -> bool:
    """Within ``rtol`` relative, or ``1e-9`` absolute: a value near 0 (a scatter of coincident
    points, a compactness of one repeated unit vector) carries the absolute rounding of its sums,
    ``≤ (d + 2)·ε·Σ|terms|``, and the terms here are squared coordinates ``≤ 60²`` over at most 120
    elements: ``≤ 4·2.2e-16·4.3e5 ≈ 4e-10``."""
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return abs(a - b) <= max(rtol * max(abs(a), abs(b)), 1e-9)


@settings(max_examples=25, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.integers(0, 19), st.integers(-3, 3), st.integers(-3, 3), st.integers(1, 3), st.booleans()),
        min_size=1, max_size=80,
    )
)
def test_every_view_reads_the_same_through_the_kernel(ops):
    """Every registered view over native summaries (native reads: distances, SSB, compactness,
    Davies-Bouldin, silhouette scores) against the same views over reference summaries, after
    every update and revert. Clusters sit 10 apart, so every view is well conditioned; up to 20
    of them, so Davies-Bouldin takes single changes (rows rewritten, maxima that fell rescanned)
    as well as rebuilds."""
    nat = se.IntrinsicEvaluator(views())
    ref = se.IntrinsicEvaluator(views(), native=False)
    assert all(s.kernel is None for s in ref.summaries.values())
    live = []
    for label, a, b, w, back in ops:
        if back and live:
            x, lab, ww = live.pop()
            nat.revert(x, lab, ww)
            ref.revert(x, lab, ww)
        else:
            x = [10.0 * label + a + 0.5, 10.0 * (label % 2) + b - 0.25]
            nat.update(x, label, w)
            ref.update(x, label, w)
            live.append((x, label, w))
        got, want = nat.get(), ref.get()
        assert list(got) == list(want)
        for key in want:  # the kernel's reads against numpy's: _tolerance's analysis, k <= 20, d = 2
            assert rel_close(got[key], want[key], _tolerance(20, 2)), (key, got[key], want[key])
    for name, m in ref.metrics.items():
        if m.needs_points:
            assert rel_close(nat[name].final(), m.final(), _tolerance(20, 2)), name


@pytest.mark.parametrize("space", ["euclidean", "cosine"])
@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("d", [2, 6])
def test_update_many_equals_the_updates_one_by_one(space, native, d):
    """Blocks of rows (new and known clusters; integer labels, gathered through a table, and
    strings; weights or none) against the same rows updated one by one on reference summaries:
    the state compared as the single steps are (see the module)."""
    rng = np.random.default_rng(3)
    p = Pair(space)
    p.nat = se.ClusterSummaries(space=space, native=native)
    for block in range(8):
        m = int(rng.integers(1, 60)) if block < 6 else 700  # long blocks: slots met twice in a row
        X = rng.normal(size=(m, d)) * 2 + 1
        y = rng.integers(0, 12, m) if block % 2 else rng.integers(0, 12, m).astype(str).astype(object)
        w = rng.integers(1, 4, m) if block % 4 < 2 else None
        p.nat.update_many(X, y, w)
        for x, label, wi in zip(X, y.tolist(), [1] * m if w is None else w.tolist()):
            p.ref.update(x, label, wi)
        p.nat.version = p.ref.version  # update_many moves it by one per block
        p.check()
        # touched slots are marked changed: the cached views refresh them
        assert set(p.nat.changed_since(p.nat.version - 1).tolist()) <= set(p.nat.slots(np.unique(y).tolist()).tolist())


@pytest.mark.parametrize("space", ["euclidean", "cosine"])
@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 16])
def test_update_many_is_bit_for_bit_the_native_updates(space, d):
    """The native block (d <= 4: one pass, each row's factors beside its steps; beyond: row by
    row) against the native single updates of the same rows, whole state bit for bit: the same
    steps in the same order. Integer labels (gathered through a table) and strings, weights or
    none, short blocks and long ones (slots met twice in a row), all clusters known (each single
    update one native call; blocks that create clusters: the test below)."""
    rng = np.random.default_rng(5)
    labels = list(range(12)) + [str(v) for v in range(12)]
    seed = rng.normal(size=(len(labels), d)) * 2 + 1
    block, singles = se.ClusterSummaries(space=space), se.ClusterSummaries(space=space)
    for s in (block, singles):
        s.update_many(seed, np.array(labels, dtype=object))
    assert block.kernel is not None
    for b in range(8):
        m = int(rng.integers(1, 60)) if b < 6 else 2000
        X = rng.normal(size=(m, d)) * 2 + 1
        y = rng.integers(0, 12, m) if b % 2 else rng.integers(0, 12, m).astype(str).astype(object)
        w = rng.integers(1, 4, m) if b % 4 < 2 else None
        block.update_many(X, y, w)
        for x, label, wi in zip(X, y.tolist(), [1] * m if w is None else w.tolist()):
            assert singles.fast(x, label, wi)
        assert (block.n, block.k, block.width) == (singles.n, singles.k, singles.width)
        for a, b_ in ((block._count, singles._count), (block._mean, singles._mean), (block._m2, singles._m2),
                      (block._gmean, singles._gmean), (np.float64(block._gm2), np.float64(singles._gm2))):
            assert np.asarray(a).tobytes() == np.asarray(b_).tobytes()


def _whole_state(s):
    """Everything the updates write, as bytes and exact integers: counts, means, scatters and the
    global summary, labels, slots and free slots (in the order they are taken again)."""
    w = s.width
    return (s.n, s.k, s.dim, w, list(s._labels), dict(s._index), list(s._free),
            s._count[:w].tobytes(), s._mean[:w].tobytes(), s._m2[:w].tobytes(),
            s._gmean.tobytes(), np.float64(s._gm2).tobytes())


@pytest.mark.parametrize("space", ["euclidean", "cosine"])
@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 16])
@pytest.mark.parametrize("weighted", [False, True])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       plan=st.lists(st.tuples(st.integers(1, 30), st.booleans(), st.floats(0.0, 1.0)), min_size=1, max_size=5))
def test_blocks_that_create_clusters_are_bit_for_bit_the_single_updates(space, d, weighted, seed, plan):
    """Blocks whose rows create clusters — the very first block (the dimension not yet known),
    clusters never seen, clusters reverted away and made again in freed slots, the whole stream
    reverted to nothing and started again — against the same rows updated one by one, natively
    (a new cluster's update: the reference path, its sums of squares in the kernel's order) and
    on the pure reference (``native=False``): the whole state bit for bit after every block and
    every revert. Integer labels (gathered through a table) and strings."""
    rng = np.random.default_rng(seed)
    block = se.ClusterSummaries(space=space)
    singles = se.ClusterSummaries(space=space)
    ref = se.ClusterSummaries(space=space, native=False)
    added: dict = {}  # label -> the (row, weight) pairs it holds
    for m, strings, gone in plan:
        X = rng.normal(size=(m, d)) * rng.choice([1e-3, 1.0, 1e3]) + rng.normal(size=d)
        y = rng.integers(0, 8, m)
        labels = y.astype(str).astype(object) if strings else y
        w = rng.integers(1, 5, m) if weighted else None
        block.update_many(X, labels, w)
        for x, label, wi in zip(X, labels.tolist(), [1] * m if w is None else w.tolist()):
            singles.update(x, label, wi)
            ref.update(x, label, wi)
            added.setdefault(label, []).append((x, wi))
        assert block.kernel is not None and _whole_state(block) == _whole_state(singles) == _whole_state(ref)
        # revert whole clusters away (the last revert frees the slot; gone = 1: the whole stream)
        for label in [v for v in list(added) if rng.random() < gone]:
            for x, wi in added.pop(label):
                for s in (block, singles, ref):
                    s.revert(x, label, wi)
            assert _whole_state(block) == _whole_state(singles) == _whole_state(ref)


def test_update_many_checks_everything_first():
    """A bad row, label or weight anywhere in the block: a clear error, the state as it was."""
    for native in (True, False):
        s = se.ClusterSummaries(space="cosine", native=native)
        s.update_many(np.ones((3, 2)), [0, 1, 1])
        before = s.to_dict()
        X = np.ones((4, 2))
        X[2] = 0.0
        with pytest.raises(InvalidVectorError, match="vector 2 has norm 0"):
            s.update_many(X, [0, 5, 6, 7])
        X[2] = np.nan
        with pytest.raises(InvalidVectorError, match="vector 2 has a non-finite value"):
            s.update_many(X, [0, 5, 6, 7])
        with pytest.raises(se.errors.MissingLabelError, match=r"y_pred\[1\]"):
            s.update_many(np.ones((2, 2)), [0, None])
        with pytest.raises(se.errors.InvalidWeightError):
            s.update_many(np.ones((2, 2)), [0, 9], w=[1, 0])
        with pytest.raises(InvalidVectorError, match="dimension 3"):
            s.update_many(np.ones((2, 3)), [0, 9])
        assert s.to_dict() == before


def _reference_copy(s):
    """Reference summaries holding the very state of ``s`` (no kernel: every read through numpy)."""
    new = se.ClusterSummaries.from_dict(s.to_dict())
    new._native, new._kernel = False, None
    return new


def _tolerance(k: int, d: int) -> float:
    """How far a native read may be from numpy's over the same summaries (relative; ``ε = 2⁻⁵³``):

    - SSB: the kernel's anchored sums are within ``2(d + 2)·ε`` of the formula (``SsbAnchor`` in
      ``src/summaries.rs``: Cauchy-Schwarz bounds the cancellation while the anchor is near the
      global mean); numpy's sum of ``k`` terms of ``d + 2`` roundings each within
      ``(d + 2 + log2 k)·ε``. CH is SSB over SSW: SSW summed in two orders, ``log2 k·ε`` more.
    - Separation: the kernel's sum of the distance matrix is kept to ``~ε²`` (TwoSum), each
      distance within ``(d/2 + 2)·ε``; numpy's pairwise sum of ``k²`` of them within
      ``2·log2 k·ε``.
    - Compactness, Davies-Bouldin: sums of per-cluster values of a few ulps each (TwoSum against
      numpy's pairwise order); DB's ratios carry the distances' ``(d/2 + 2)·ε``, the scatters'
      and the division's few ulps (its conditioning on these separated clusters is O(1)).
    - A silhouette score: the pruned scan skips only clusters whose exact value is above the
      best (the bound shrunk by ``2⁻³⁰``), so it is the same minimum up to each value's
      ``(d + 2)·ε``; ``(b - a)/max(a, b)`` then costs a few ulps more, times its conditioning
      ``max(a, b)/|b - a|`` (bounded on these separated clusters by 4).
    ``(4d + 16 + 4·log2 k)·ε`` bounds each of these.
    """
    return (4 * d + 16 + 4 * math.log2(max(k, 2))) * EPS


@pytest.mark.parametrize(("shift", "d"), [(0.0, 7), (1e6, 7), (1e6, 19)])
def test_report_reads_equal_the_reference_with_many_clusters_and_reverts(shift, d):
    """60 clusters in 7 or 19 dimensions (the distance kernels' four lanes and their tail of
    three terms; far from the origin with ``shift``: SSB's anchored sums must not
    cancel), updates and plain reverts through the native kernel (one call each); after every
    few steps each native read against the numpy reference's over the very same state, and every
    silhouette score on arrival against the reference's."""
    rng = np.random.default_rng(11)
    k = 60
    centers = rng.normal(scale=8.0, size=(k, d)) + shift
    names = ["SSW", "SSB", "CalinskiHarabasz", "Separation", "RMSCompactness", "RMSDaviesBouldin"]
    ev = se.IntrinsicEvaluator([INTRINSIC_REGISTRY[n]() for n in names] + [se.SqEuclideanSilhouette()])
    sil = ev["SqEuclideanSilhouette"]
    s = ev.summaries["euclidean"]
    tol = _tolerance(k, d)
    live = []
    for step in range(600):
        if live and rng.random() < 0.25:
            x, p, w = live.pop(int(rng.integers(0, len(live))))
            ev.revert(x, p, w)
            continue
        p = int(rng.integers(0, k))
        x = centers[p] + rng.normal(size=d)
        w = int(rng.integers(1, 3))
        known = s.slot(p) is not None
        ev.update(x, p, w)
        live.append((x, p, w))
        ref = _reference_copy(s)
        if known and s.k >= 2:  # scored by the kernel on arrival
            fx = sil._points[(p, (x + 0.0).tobytes())][1][-1][1]
            want = float(sil._scores(ref, x[None, :], ref.slots([p]))[0])
            assert abs(fx / 2.0**53 - want) <= tol * abs(want) + 2.0**-53, (step, fx / 2.0**53, want)
        if step % 5 == 0 and s.k >= 2:
            got = ev.get()  # one native read for the summary views: what each view's get gives
            assert all(got[name] == ev[name].get() for name in names), step
            for name in names:
                want = INTRINSIC_REGISTRY[name]().value(ref)
                assert abs(got[name] - want) <= tol * abs(want), (step, name, got[name], want)
    assert s.n == sum(w for _, _, w in live)


@pytest.mark.parametrize("space", ["euclidean", "cosine"])
def test_revert_takes_the_native_path_and_restores_the_silhouette_exactly(space):
    """A plain revert is one native call (the summaries' version moves by one, no reference
    check), finds the point whichever path recorded it (a new cluster's first point enters by
    the reference path; in the cosine space the two normalise with sums in different orders),
    and gives back its fixed-point score exactly."""
    rng = np.random.default_rng(5)
    sil = se.CosineSilhouette() if space == "cosine" else se.SqEuclideanSilhouette()
    ev = se.IntrinsicEvaluator({"sil": sil, "sep": se.CosineSeparation() if space == "cosine" else se.Separation()})
    pts = [(rng.normal(size=9) + 3 * (i % 4), i % 4, 1 + i % 2) for i in range(40)]
    for x, p, w in pts[:4]:  # the first point of each cluster: the reference path
        ev.update(x.tolist(), p, w)
    before = (sil._sum, sil._scored, {k: list(v[1]) for k, v in sil._points.items()})
    for x, p, w in pts[4:]:
        ev.update(x, p, w)
    s = ev.summaries[space]
    for x, p, w in reversed(pts[4:]):
        v = s.version
        ev.revert(x, p, w)
        assert s.version == v + 1
    assert (sil._sum, sil._scored) == before[:2]
    assert {k: list(v[1]) for k, v in sil._points.items()} == before[2]
    for x, p, w in pts[:4]:  # recorded by the reference path, reverted through the kernel's key
        if s.cluster(p)[0] > w:
            ev.revert(np.array(x), p, w)
    with pytest.raises(UnknownElementError):
        ev.revert(pts[5][0], pts[5][1], pts[5][2])  # already reverted: no such update


_finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(0, 21), st.data())
def test_every_simd_path_gives_the_plain_bits_and_the_exact_sum(d, m, data):
    """The distance kernels (plain and AVX2, where this CPU runs it) on the same rows give
    the same bits — one order of operations, no fused multiply-add — and each distance is
    within the bound of :func:`_check_sq_dists` of the exact ``||x - b||²``."""
    rows = np.array(data.draw(st.lists(_finite, min_size=m * d, max_size=m * d)), dtype=np.float64).reshape(m, d)
    b = np.array(data.draw(st.lists(_finite, min_size=d, max_size=d)), dtype=np.float64)
    _check_sq_dists(rows, b)


def test_distances_that_underflow_keep_the_plain_bits_and_the_exact_sum():
    """Squares below the smallest normal double (an unseeded run drew ``x = 0``,
    ``b = 5.8·10⁻²⁶⁵``: the square, ``3.3·10⁻⁵²⁹``, rounds to 0), and sums of subnormal squares."""
    _check_sq_dists(np.array([[0.0]]), np.array([5.778060197158037e-265]))
    tiny = 2.0**-540
    rows = np.array([[tiny, -tiny, 3 * tiny, 0.0, tiny], [1e-300, 2e-300, 0.0, 1.0, -1e-160]])
    _check_sq_dists(rows, np.array([0.0, tiny, 1e-170, 2.0**-1074, 1e-155]))


def _check_sq_dists(rows: np.ndarray, b: np.ndarray) -> None:
    """Every SIMD path gives the plain bits on ``rows``, and each distance is within
    ``(d + 3)·ε·exact + d·2⁻¹⁰⁷⁴`` of the exact ``||x - b||²`` (rational arithmetic). The model
    ``fl(x ∘ y) = (x ∘ y)(1 + δ) + η``, ``|δ| ≤ ε``, ``|η| ≤ 2⁻¹⁰⁷⁵`` (half the smallest subnormal,
    ``η = 0`` for sums and differences, which are exact in the subnormal range): each difference
    and each square rounds once (``2ε``), a sum of ``d`` non-negative terms in any order
    ``(d − 1)·ε``, so ``(d + 3)·ε`` relative to first order, and the ``d`` squares that underflow
    add at most ``2⁻¹⁰⁷⁵`` each (doubled for the sums' growth)."""
    from fractions import Fraction

    from streameval import _native

    m, d = rows.shape
    paths = _native._simd_paths()
    assert paths[0] == "plain"
    plain = np.full(m, -1.0)
    _native._sq_dists(rows, b, plain, "plain")
    for path in paths[1:]:
        got = np.full(m, -1.0)
        _native._sq_dists(rows, b, got, path)
        assert got.tobytes() == plain.tobytes(), path
    for row, v in zip(rows.tolist(), plain.tolist()):
        exact = sum((Fraction(x) - Fraction(y)) ** 2 for x, y in zip(row, b.tolist()))
        bound = Fraction((d + 3) * EPS) * exact + d * Fraction(2) ** -1074
        assert abs(Fraction(v) - exact) <= bound, (row, b, v)


_PATH_SCRIPT = """
import numpy as np
import streameval as se
rng = np.random.default_rng(5)
k, d = 30, 19
centers = rng.normal(scale=6.0, size=(k, d)) + 1e3
rep = se.ClusterReport()
out = []
for i in range(400):
    p = int(rng.integers(0, k))
    rep.update(centers[p] + rng.normal(size=d), p)
    if i % 7 == 0:
        out.append([float(v).hex() for v in rep.get().values() if isinstance(v, float)])
# the fused Welford blocks (d = 1 to 4), then a cosine report over updates and reverts at d = 4
for d in (1, 2, 3, 4):
    s = se.ClusterSummaries()
    X, y = rng.normal(size=(300, d)) * 40.0 + 7.0, rng.integers(0, 12, 300)
    s.update_many(X, y, w=rng.integers(1, 4, 300))
    s.update_many(X[:120], y[:120])
    n, gmean, sst = s.global_summary()
    out.append([float(v).hex() for c in sorted(s.sizes()) for v in [*s.cluster(c)[1], s.cluster(c)[2]]])
    out.append([n] + [float(v).hex() for v in [*gmean, sst, s.ssw, s.ssb()]])
# points on a coarse lattice (equal means and distances: ties in every minimum and maximum), 37
# clusters (a width that is not a multiple of 4), reverts that empty clusters; every read
rep, live = se.ClusterReport(), []
for i in range(700):
    p = int(rng.integers(0, 37))
    x = rng.integers(0, 3, size=6) * 1.5 + (p % 4) * 3.0
    rep.update(x, p)
    live.append((x, p))
    if i % 5 == 4:
        rep.revert(*live.pop(int(rng.integers(0, len(live)))))
    out.append([float(v).hex() for v in rep.get().values() if isinstance(v, float)])
out.append(rep.intrinsic.summaries["euclidean"].centroid_distances().tobytes().hex())
rep = se.ClusterReport("cosine")
pts = [(rng.normal(size=4) + 3.0 * (p % 3), p) for p in rng.integers(0, 25, 300).tolist()]
for i, (x, p) in enumerate(pts):
    rep.update(x, p)
    if i % 3 == 2:
        rep.revert(*pts[i - 1])
    if i % 11 == 0:
        out.append([float(v).hex() for v in rep.get().values() if isinstance(v, float)])
print(out)
"""


def test_the_report_is_the_same_on_every_simd_path():
    """A report over one stream (d = 19: the four-lane kernels and their tail), one over a lattice
    (ties and equal means, 37 clusters, reverts that empty clusters; its distance matrix too), summaries filled
    in blocks at d = 1 to 4 (the fused Welford passes) and a cosine report with reverts, run in a
    fresh process on each path this CPU has (``STREAMEVAL_SIMD``, which every kernel with an AVX2
    path follows): every read, bit for bit."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from streameval import _native

    root = str(Path(__file__).resolve().parents[1])
    runs = {}
    for path in _native._simd_paths():
        env = dict(os.environ, STREAMEVAL_SIMD=path, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        done = subprocess.run([sys.executable, "-c", _PATH_SCRIPT], env=env, capture_output=True, text=True, check=True)
        runs[path] = done.stdout
    assert len(set(runs.values())) == 1, {p: r[:200] for p, r in runs.items()}


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_the_reports_one_call_paths_equal_the_call_by_call_ones(distance):
    """``ClusterReport`` with its one-call paths (an update that scores the point in the same
    native call, a get whose values come from one ``SummaryKernel.values``) against the same
    report with them switched off (``fast`` then ``score_point``; ``read`` and each view's
    formula in Python): over updates and reverts at 40 clusters, every read and the
    silhouette's records equal bit for bit."""
    rng = np.random.default_rng(3)
    k, d = 40, 5
    centers = rng.normal(scale=6.0, size=(k, d)) + 2.0
    quick, plain = se.ClusterReport(distance), se.ClusterReport(distance)
    plain.intrinsic._scorer = plain.intrinsic._quick = None
    assert quick.intrinsic._scorer is not None and quick.intrinsic._quick is not None

    def same(a, b):
        ra, rb = a.get(), b.get()
        assert list(ra) == list(rb)
        for key in ra:
            va, vb = ra[key], rb[key]
            if isinstance(va, float):
                assert np.float64(va).tobytes() == np.float64(vb).tobytes(), (key, va, vb)
            elif isinstance(va, np.ndarray):
                assert va.tolist() == vb.tolist()
            else:
                assert va == vb, key

    live = []
    for step in range(500):
        if live and rng.random() < 0.2:
            x, p = live.pop(int(rng.integers(0, len(live))))
            quick.revert(x, p)
            plain.revert(x, p)
        else:
            p = int(rng.integers(0, k))
            x = centers[p] + rng.normal(size=d)
            quick.update(x, p)
            plain.update(x, p)
            live.append((x, p))
        if step % 3 == 0:
            same(quick, plain)
    sq, sp = quick.intrinsic["silhouette_prequential"], plain.intrinsic["silhouette_prequential"]
    assert (sq._sum, sq._scored) == (sp._sum, sp._scored)
    assert {key: list(v[1]) for key, v in sq._points.items()} == {key: list(v[1]) for key, v in sp._points.items()}


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_the_reports_update_get_equals_update_then_get(distance):
    """``ClusterReport.update_get`` (one native call: the update, the point's score and the
    summary views' values written into the read's dict) against ``update`` then ``get`` on a
    report with every one-call path switched off (``fast`` then ``score_point``; ``read`` and
    each view's formula in Python) and on one with them on: over updates and reverts at 40
    clusters, read after every update, every dict equal bit for bit, the silhouette's records
    too; and the one call is the one taken once the caches are made."""
    rng = np.random.default_rng(5)
    k, d = 40, 5
    centers = rng.normal(scale=6.0, size=(k, d)) + 2.0
    fused, quick, plain = se.ClusterReport(distance), se.ClusterReport(distance), se.ClusterReport(distance)
    plain.intrinsic._scorer = plain.intrinsic._quick = None
    two_calls = []
    update = fused.update

    def counted(*args):
        two_calls.append(args)
        update(*args)

    fused.update = counted  # update_get's other path: update then get

    def same(ra, rb):
        assert _bits(ra) == _bits(rb)

    live, updates = [], 0
    for _ in range(600):
        if live and rng.random() < 0.2:
            x, p = live.pop(int(rng.integers(0, len(live))))
            for rep in (fused, quick, plain):
                rep.revert(x, p)
        else:
            p = int(rng.integers(0, k))
            x = centers[p] + rng.normal(size=d)
            got = fused.update_get(x if rng.random() < 0.5 else x.tolist(), p)
            quick.update(x, p)
            plain.update(x, p)
            same(got, plain.get())
            same(got, quick.get())
            live.append((x, p))
            updates += 1
    same(fused.get(), plain.get())
    sf, sp = fused.intrinsic["silhouette_prequential"], plain.intrinsic["silhouette_prequential"]
    assert (sf._sum, sf._scored) == (sp._sum, sp._scored)
    assert {key: list(v[1]) for key, v in sf._points.items()} == {key: list(v[1]) for key, v in sp._points.items()}
    # the two calls only for the first read, new clusters and clusters emptied by a revert
    assert len(two_calls) < updates // 4, (len(two_calls), updates)


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_the_reports_native_step_survives_copies_weights_and_new_clusters(distance):
    """The report's native step (made by its first read) against a report with every one-call
    path off, over a stream where clusters keep appearing, weights of 1 and 2, reverts of
    earlier updates, and the report replaced mid-stream by a pickled copy and by a deep copy
    (each makes its step anew): every dict equal bit for bit, whichever of ``update_get`` or
    ``update`` then ``get`` is called."""
    rng = np.random.default_rng(11)
    d = 3
    centers = rng.normal(scale=5.0, size=(30, d)) + 1.0
    rep, plain = se.ClusterReport(distance), se.ClusterReport(distance)
    plain.intrinsic._scorer = plain.intrinsic._quick = None
    live = []
    for i in range(1200):
        if i == 600:
            rep = pickle.loads(pickle.dumps(rep))
        elif i == 900:
            rep = copy.deepcopy(rep)
        if live and rng.random() < 0.2:
            x, p, w = live.pop(int(rng.integers(len(live))))
            rep.revert(x, p, w=w)
            plain.revert(x, p, w=w)
            assert _bits(rep.get()) == _bits(plain.get()), i
            continue
        p = int(rng.integers(0, min(30, 2 + i // 40)))  # a new cluster every 40 points or so
        x = centers[p] + rng.normal(size=d)
        w = int(rng.integers(1, 3))
        if rng.random() < 0.7:
            got = rep.update_get(x, p, w=w)
        else:
            rep.update(x, p, w=w)
            got = rep.get()
        plain.update(x, p, w=w)
        assert _bits(got) == _bits(plain.get()), i
        live.append((x, p, w))
    assert rep._step is not None  # the step was taken, not only the two calls


def test_update_get_rejects_as_update_does_and_changes_nothing():
    """A bad call of ``update_get`` raises what ``update`` raises and leaves the report as it
    was (the one-call path declines it, the two calls check it in full)."""
    rep = se.ClusterReport()
    for x, p in [([0.0, 0.0], 0), ([0.0, 1.0], 0), ([5.0, 5.0], 1), ([5.0, 6.0], 1)]:
        rep.update_get(x, p)
    before = _bits(rep.get())
    state = rep.summaries.kernel.state()
    for args, error in [
        (([float("nan"), 0.0], 0), se.errors.InvalidVectorError),
        (([1.0, 2.0, 3.0], 0), se.errors.InvalidVectorError),
        ((["a", 0.0], 1), se.errors.InvalidVectorError),
        (([1.0, 2.0], [1]), se.errors.InvalidLabelError),
        (([1.0, 2.0], 0, None, 0), ValueError),
        (([1.0, 2.0], 0, None, 1.5), (TypeError, ValueError)),
        (([1.0, 2.0], 0, "t"), ValueError),
    ]:
        with pytest.raises(error):
            rep.update_get(*args)
        assert _bits(rep.get()) == before
        assert rep.summaries.kernel.state() == state


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_the_reports_native_step_is_the_python_path_bit_for_bit(distance):
    """``ClusterReport``'s native step (``update``, ``get`` and ``update_get`` in one native call
    each, no Python frame: ``IntrinsicEvaluator.report_step``) against the same report with every
    one-call path off, over updates with weights 1 to 3 and ``2**12`` (a silhouette step
    ``w·round(score·2**53)`` beyond int64), lists and arrays, new clusters, reverts that empty
    clusters (the sizes then gathered): every dict bit for bit, and the whole state after each
    step (the summaries' count, version and global scatter, the kernel's running state, the
    silhouette's exact sums and records); the step is made by the first read with two clusters
    and taken by every later plain call."""
    rng = np.random.default_rng(11)
    k, d = 12, 4
    centers = rng.normal(scale=6.0, size=(k + 4, d)) + 2.0
    fast, plain = se.ClusterReport(distance), se.ClusterReport(distance)
    plain.intrinsic._scorer = plain.intrinsic._quick = None
    python_calls = []
    scored = fast._plain

    def counted(*args):
        python_calls.append(args)
        return scored(*args)

    fast._plain = counted  # the Python path of a plain update, which the step replaces

    def state(rep):
        s, sil = rep.summaries, rep.intrinsic["silhouette_prequential"]
        return (s.n, s.version, np.float64(s._gm2).tobytes(), s.kernel.state() if s.kernel else None,
                sil._sum, sil._scored, dict(sil._points))

    live, taken = [], 0
    for i in range(700):
        if live and rng.random() < 0.25:
            x, p, w = live.pop(int(rng.integers(0, len(live))))
            fast.revert(x, p, w=w)
            plain.revert(x, p, w=w)
            continue
        p = int(rng.integers(0, k + (4 if i > 300 else 0)))  # new clusters late in the stream too
        x = centers[p] + rng.normal(size=d)
        w = int(rng.choice([1, 1, 1, 2, 3, 2**12]))
        arg = x if rng.random() < 0.5 else x.tolist()
        known = fast._step is not None and p in fast.summaries.labels() and fast.summaries.k >= 2
        before = len(python_calls)
        how = i % 3
        if how == 0:
            got = fast.update_get(arg, p, w=w)
        else:
            fast.update(arg, p, w=w)
            got = fast.get() if how == 1 else None
        plain.update(x, p, w=w)
        if got is not None:
            assert _bits(got) == _bits(plain.get()), i
        assert state(fast) == state(plain), i
        if known:
            assert len(python_calls) == before, i  # the step took it
            taken += 1
        live.append((x, p, w))
    assert fast._step is not None and taken > 300
    assert _bits(fast.get()) == _bits(plain.get())
    # a silhouette step beyond int64, and the total's bound: the same on both, refused alike
    p = fast.summaries.labels()[0]
    w = se._validate.MAX_TOTAL - fast.summaries.n - 1
    assert _bits(fast.update_get(centers[0], p, w=w)) == _bits(plain.update_get(centers[0], p, w=w))
    assert state(fast) == state(plain) and abs(fast.intrinsic["silhouette_prequential"]._sum) > 2**64
    for rep in (fast, plain):
        with pytest.raises(ValueError, match="2\\*\\*57|total"):
            rep.update_get(centers[0], p, w=1)
    assert state(fast) == state(plain)


def test_the_reports_native_step_refuses_concurrent_use_and_changes_nothing():
    """With the summaries' guard taken (another call changing them), the native step declines
    and the report's own path raises ``ConcurrentUseError``, the report unchanged."""
    rep = se.ClusterReport()
    for x, p in [([0.0, 0.0], 0), ([0.0, 1.0], 0), ([5.0, 5.0], 1), ([5.0, 6.0], 1)]:
        rep.update_get(x, p)
    assert rep._step is not None
    before, state = _bits(rep.get()), rep.summaries.kernel.state()
    guard = rep.summaries._guard
    assert guard.acquire(False)
    try:
        for call in (rep.update_get, rep.update):
            with pytest.raises(se.errors.ConcurrentUseError):
                call([1.0, 1.0], 0)
    finally:
        guard.release()
    assert _bits(rep.get()) == before and rep.summaries.kernel.state() == state
    assert rep.summaries.n == 4


def test_a_cycle_through_the_reports_native_step_is_collected():
    """The native step holds the summaries, the silhouette's dict and the report's keys; the
    garbage collector sees through it (``ReportStep.__traverse__``), so a cycle that passes
    through it (here a label that refers back to its report) is collected."""
    import gc
    import weakref

    class Label:
        def __init__(self, v):
            self.v, self.report = v, None

        def __hash__(self):
            return hash(self.v)

        def __eq__(self, other):
            return isinstance(other, Label) and other.v == self.v

    def made():
        rep = se.ClusterReport()
        a, b = Label(0), Label(1)
        for x, p in [([0.0, 0.0], a), ([0.0, 1.0], a), ([5.0, 5.0], b), ([5.0, 6.0], b), ([1.0, 1.0], a)]:
            rep.update_get(x, p)
        assert rep._step is not None
        a.report = rep  # report -> step -> summaries -> their index -> label -> report
        return weakref.ref(rep), weakref.ref(rep.summaries)

    refs = made()
    gc.collect()
    assert [r() for r in refs] == [None, None]


# -- a copy goes on as the original, bit for bit ---------------------------------------------------
def _bits(v):
    """A read as comparable bits: a float by its 8 bytes (so NaN equals NaN, -0.0 differs from
    0.0), an array by its dtype, shape and bytes, containers item by item."""
    if isinstance(v, float):
        return ("f", np.float64(v).tobytes())
    if isinstance(v, np.ndarray):
        return ("a", str(v.dtype), v.shape, v.tobytes())
    if isinstance(v, dict):
        return {k: _bits(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_bits(x) for x in v)
    return v


def _summary_reads(s):
    """Every read of a ClusterSummaries (through its kernel where it has one), and the whole
    state: arrays, distance cache and the kernel's running state."""
    out = {"ssw": s.ssw, "ssb": s.ssb(), "sizes": s.size_lists()}
    if s.k >= 2:
        out["dist"] = s.centroid_distances().copy()
        out["values"] = s.kernel_values(bytes([0, 1, 2, 3, 4]))
    out["arrays"] = [a[: s.width].copy() for a in s.slot_arrays()] + [s.global_summary()[1], s.global_summary()[2]]
    out["kernel"] = s.kernel.state()
    return out


def _copy_cases():
    return {
        "report": lambda: se.ClusterReport("euclidean"),
        "report-cosine": lambda: se.ClusterReport("cosine", labels=True),
        "evaluator": lambda: se.IntrinsicEvaluator(views()),  # two spaces: the general read path
        "summaries": lambda: se.ClusterSummaries(),
    }


@pytest.mark.parametrize("how", ["pickle", "copy"])
@pytest.mark.parametrize("case", list(_copy_cases()))
def test_a_copy_reads_as_the_original_bit_for_bit(case, how):
    """Copied (pickled, or ``ClusterSummaries.copy``) at a random step, a report, an evaluator or
    summaries given the same updates, reverts and merges as the original reads the same values,
    bit for bit, at every later step: the kernels' running sums (SSB's moving anchor, SSW,
    compactness, the distance cache's sum, Davies-Bouldin's maxima) depend on the order of the
    steps that made them, so the copy carries them (a kernel started afresh differed in the last
    bit of SSB and CH in about half the reads). Every step is read up to 40 steps after the copy
    (a skipped read rebuilds the anchor: the original's then matches a fresh one), some are
    skipped after that, so the anchor both follows the updates and is rebuilt."""
    rng = np.random.default_rng(sorted(_copy_cases()).index(case) + 10 * (how == "copy"))
    make = _copy_cases()[case]
    d, k = 6, 16
    centers = rng.normal(size=(k, d)) * 10 + 5
    a = make()
    b = None
    cut = int(rng.integers(60, 160))
    summaries = case == "summaries"
    live: list = []
    for step in range(240):
        if live and rng.random() < 0.3:
            x, p, t = live.pop(int(rng.integers(0, len(live))))
            ops = [("revert", x, p, t)]
        elif summaries and rng.random() < 0.03:  # a merge: the kernel's sums rebuilt from its arrays
            other = se.ClusterSummaries()
            for j in rng.integers(0, k + 4, size=3).tolist():
                other.update((centers[j % k] + rng.normal(size=d)).tolist(), 1000 + step * 10 + j)
            ops = [("merge", other, None, None)]
        else:
            p = int(rng.integers(0, k))
            x = (centers[p] + rng.normal(size=d)).tolist()
            t = int(rng.integers(0, 3)) if case == "report-cosine" else None
            live.append((x, p, t))
            ops = [("update", x, p, t)]
        for obj in (a,) if b is None else (a, b):
            for op, x, p, t in ops:
                if op == "merge":
                    obj.merge(x)
                elif summaries:
                    getattr(obj, op)(x, p)
                else:
                    getattr(obj, op)(x, p, *(() if case == "evaluator" else (t,)))
        read = step < cut + 40 or rng.random() < 0.8  # a skipped read would rebuild both anchors alike
        if step == cut:
            b = pickle.loads(pickle.dumps(a)) if how == "pickle" else (a.copy() if summaries else copy.deepcopy(a))
        elif b is not None and read:
            if summaries:
                assert _bits(_summary_reads(a)) == _bits(_summary_reads(b)), step
            else:
                assert _bits(a.get()) == _bits(b.get()), step
                for s, t in zip(_evaluator(a).summaries.values(), _evaluator(b).summaries.values()):
                    assert s.kernel.state() == t.kernel.state(), step
        elif read:
            _summary_reads(a) if summaries else a.get()
    assert b is not None


@pytest.mark.parametrize("space", ["euclidean", "cosine"])
def test_a_json_round_trip_reads_as_the_original_bit_for_bit(space):
    """Saved by ``to_dict`` through JSON text and loaded by ``from_dict`` at a step where the
    distance cache has rows older than the summaries (an update since the last read), summaries
    given the same 400 further updates, reverts and merges as the original read the same
    values, bit for bit, at every step: the saved form carries the slot layout, the versions,
    the kernel's running state (SSB's moving anchor, SSW, compactness, the distance cache's
    sum) and the stale rows that sum is of. A state of the first version (clusters only) still
    loads, its sums rebuilt from the clusters as before."""
    rng = np.random.default_rng(7 + (space == "cosine"))
    d, k = 6, 16
    centers = rng.normal(size=(k, d)) * 10 + 5
    a = se.ClusterSummaries(space=space)
    live: list = []

    def step(objs, i):
        if live and rng.random() < 0.3:
            x, p = live.pop(int(rng.integers(0, len(live))))
            for obj in objs:
                obj.revert(x, p)
        elif rng.random() < 0.03:  # a merge: the kernel's sums rebuilt from its arrays
            other = se.ClusterSummaries(space=space)
            for j in rng.integers(0, k + 4, size=3).tolist():
                other.update((centers[j % k] + rng.normal(size=d)).tolist(), 1000 + i * 10 + j)
            for obj in objs:
                obj.merge(other)
        else:
            p = int(rng.integers(0, k))
            x = (centers[p] + rng.normal(size=d)).tolist()
            live.append((x, p))
            for obj in objs:
                obj.update(x, p)

    for i in range(150):
        step((a,), i)
        _summary_reads(a)
    gone = live[-1][1]
    for x, p in [e for e in live if e[1] == gone]:  # a cluster emptied: its slot free
        live.remove((x, p))
        a.revert(x, p)
    _summary_reads(a)
    for p in [(gone + 1 + j) % k for j in range(3)]:  # no read since: rows of the distance cache
        x = (centers[p] + rng.normal(size=d)).tolist()  # older than the summaries
        live.append((x, p))
        a.update(x, p)
    saved = a.to_dict()
    assert saved["version"] == 2 and saved["layout"]["stale"], "the cut should leave stale rows"
    assert saved["layout"]["free"], "the stream should have emptied a cluster by then"
    b = se.ClusterSummaries.from_dict(json.loads(json.dumps(saved)))
    assert b.to_dict() == saved
    for i in range(153, 553):
        step((a, b), i)
        if i < 200 or rng.random() < 0.8:  # a skipped read rebuilds both anchors alike
            assert _bits(_summary_reads(a)) == _bits(_summary_reads(b)), i
    first = {**{key: v for key, v in saved.items() if key != "layout"}, "version": 1}
    c = se.ClusterSummaries.from_dict(first)  # the first version: the clusters, their sums rebuilt
    assert {key: v for key, v in c.to_dict().items() if key not in ("layout", "version")} == \
        {key: v for key, v in first.items() if key != "version"}


def test_a_json_layout_that_does_not_fit_is_refused():
    """A saved layout whose slots, versions or kernel state do not fit the clusters is refused
    with an error naming it."""
    s = se.ClusterSummaries()
    for j in range(3):
        s.update([float(j), 1.0], j)
    s.update([5.0, 5.0], 1)
    s.centroid_distances()
    good = s.to_dict()
    bad_cases = [
        (lambda L: L.update(slots=[0, 0, 1]), "share out"),
        (lambda L: L.update(capacity=9), "capacity"),
        (lambda L: L.update(touched=[-1, 0, 0]), "touched"),
        (lambda L: L.update(kernel="!!"), "base64"),
        (lambda L: L.update(kernel=good["layout"]["kernel"][:-8]), "kernel"),
        (lambda L: L.update(stale=[[7, [0.0, 0.0, 0.0]]]), "not in use"),
    ]
    for change, message in bad_cases:
        d = json.loads(json.dumps(good))
        change(d["layout"])
        with pytest.raises(InvalidStateError, match=message):
            se.ClusterSummaries.from_dict(d)


def _evaluator(obj):
    return obj.intrinsic if isinstance(obj, se.ClusterReport) else obj


def test_kernel_state_refused_when_it_does_not_fit():
    """A kernel state from other summaries (another capacity or dimension), or cut short, is
    refused with a clear error and changes nothing."""
    s, t = se.ClusterSummaries(), se.ClusterSummaries()
    for j in range(3):
        s.update([float(j), 1.0], j)
        t.update([float(j), 1.0, 2.0], j)
    s.ssb()
    state = s.kernel.state()
    for bad in (t.kernel.state(), state[:-8], state + b"\0" * 8, b""):
        with pytest.raises(ValueError, match="does not fit"):
            s.kernel.restore(bad)
    assert s.kernel.state() == state
    db = _native.DaviesBouldinKernel()
    with pytest.raises(ValueError, match="not a Davies-Bouldin kernel state"):
        db.restore(b"\1")
