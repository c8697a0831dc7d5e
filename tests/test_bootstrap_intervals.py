"""The streaming bootstrap's interval methods are compare's: the same five names, the same
functions (streameval.intervals.interval_bounds), the same adaptive rule, and the dominance test
kept current from maintained state (a running total and a max-heap per side) rather than a scan."""

from __future__ import annotations

import numpy as np
import pytest
from se_rounding import spread_noise, t_end_bound

import streameval as se
from streameval import BootstrapEvaluator, compare
from streameval.bootstrap import poisson_multiplicities
from streameval.comparison import _metrics, unit_stats
from streameval.intervals import INTERVAL_METHODS, adaptive_choice
from streameval.linearization import standard_errors
from streameval.units import DOMINANT_SHARE, unit_diagnostics

METRICS = ["ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo"]


def _stream(rng, n_units: int, big: int | None = None, extra: int = 30):
    """``(units, y_true, y_pred)``: documents of 3 + Poisson(4) elements (unit ``big`` holds
    ``extra`` more, one dominant unit), a truth of three entities per document, a 20%-noisy
    system; labels tagged with their document, so every unit holds whole clusters."""
    units, yt, yp = [], [], []
    for u in range(n_units):
        n = 3 + int(rng.poisson(4)) + (extra if u == big else 0)
        for _ in range(n):
            t = int(rng.integers(0, 3))
            p = t if rng.random() < 0.8 else int(rng.integers(0, 4))
            units.append(u)
            yt.append((u, t))
            yp.append((u, p))
    return units, yt, yp


def _both(method: str, units, yt, yp, B=100, seed=5, conf=0.9):
    bs = BootstrapEvaluator(_metrics(METRICS), n_replicas=B, seed=seed, interval=method, confidence=conf)
    for u, t, p in zip(units, yt, yp):
        bs.update(t, p, unit=u)
    r = compare(yt, {"A": yp}, units=units, metrics=METRICS, n_resamples=B, seed=seed,
                resampling="poisson", interval=method, confidence=conf)
    return bs, r


def _spreads(units, yt, yp, B, seed):
    """The replica values, standard errors and their moments' rounding bounds (observed table:
    ``se0``, ``noise0``), from the units' tables rebuilt in unit order with the evaluator's
    Poisson multiplicities (:func:`poisson_multiplicities` of (seed, unit, replica))."""
    cells: list = [{} for _ in range(max(units) + 1)]
    for u, t, p in zip(units, yt, yp):
        cells[u][t, p] = cells[u].get((t, p), 0) + 1
    metrics = _metrics(METRICS)
    us = unit_stats(cells, metrics)
    m = poisson_multiplicities(range(len(cells)), B, seed).T
    rows = us.combine(m)
    values = np.array([[mt.value(s) if s.n else np.nan for s in map(us.stats, rows)] for mt in metrics])
    ones = np.ones((1, us.n_units))
    (se,), _ = standard_errors([us], metrics, m, [rows])
    (se0,), _ = standard_errors([us], metrics, ones, [[us.totals]])
    (noise,), _ = spread_noise([us], metrics, m, [rows])
    (noise0,), _ = spread_noise([us], metrics, ones, [[us.totals]])
    return values, se, noise, se0, noise0


@pytest.mark.parametrize("dominant", [False, True])
@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_streaming_interval_is_compares_interval_of_the_same_resamples(method, dominant):
    """Differential: the Poisson replicas are compare's resamples (same seed and unit keys), and
    both call interval_bounds on them. Percentile reads only the replica values (exact tables, the
    same metric code): bit for bit. BCa adds the jackknife's acceleration, from leave-one-group-out
    tables (exact integers) in the one group order both take from jackknife_groups (the units'
    hash ranks): bit for bit too. The bootstrap-t methods divide by
    standard errors that the two compute from the same exact sums through the moment formula
    ``s2 − s1²/tot`` with the units in another order (first seen in compare, hash order in the
    evaluator): each path's ``V`` within ``linearization.moment_noise`` of the exact one, a bound whose
    ratio to ``V`` (the formula's cancellation) is the data's. :func:`se_rounding.t_end_bound`
    carries it through ``t``, the quantiles and the ends, from these inputs at run time."""
    rng = np.random.default_rng(1)
    units, yt, yp = _stream(rng, 40, big=7 if dominant else None)
    bs, r = _both(method, units, yt, yp)
    applied = bs.settings()["interval_applied"]
    assert applied == r.settings["interval_applied"]
    assert applied == (("hybrid" if dominant else "studentized") if method == "adaptive" else method)
    assert bs.settings()["interval"] == r.settings["interval"]
    got = bs.get()
    values, se, noise, se0, noise0 = _spreads(units, yt, yp, B=100, seed=5)
    for m in METRICS:
        mine, theirs = got[m], r.values["A"][m]
        assert mine.value == theirs.value
        if applied in ("percentile", "bca"):
            assert mine == theirs
        else:
            width = theirs.high - theirs.low
            assert width > 0
            k = METRICS.index(m)
            bound = t_end_bound(values[k], theirs.value, se[k], noise[k], se0[k, 0], noise0[k, 0])
            assert bound < 1e-6 * width  # the test still tells a real difference from rounding
            np.testing.assert_allclose(mine[1:], theirs[1:], rtol=0, atol=bound)


def test_adaptive_applies_what_the_dominance_rule_says_as_the_units_change():
    rng = np.random.default_rng(3)
    units, yt, yp = _stream(rng, 40)
    bs = BootstrapEvaluator(_metrics(["ELM"]), n_replicas=50, seed=2)
    assert bs.interval_method == "adaptive" == se.bootstrap.DEFAULT_INTERVAL
    for u, t, p in zip(units, yt, yp):
        bs.update(t, p, unit=u)
    share = bs.pairs_share()
    assert share < DOMINANT_SHARE and bs.applied_method() == "studentized"
    assert bs.get() == bs.intervals("studentized")
    # one document grows until it holds more than 15% of the true pairs: adaptive turns hybrid
    grown = 0
    while bs.pairs_share() <= DOMINANT_SHARE:
        bs.update(("big", 0), ("big", 0), unit="big")
        grown += 1
    assert adaptive_choice(bs.pairs_share()) == "hybrid" == bs.applied_method()
    assert bs.get() == bs.intervals("hybrid") != bs.intervals("studentized")
    assert bs.settings()["interval_applied"] == "hybrid"
    assert bs.settings()["interval"].startswith("adaptive: hybrid, since one unit holds more than 15%")
    # and back: reverting one of its elements puts it at or below 15% again
    bs.revert(("big", 0), ("big", 0), unit="big")
    assert bs.pairs_share() <= DOMINANT_SHARE and bs.applied_method() == "studentized"
    assert grown > 1


def _scan_share(bs: BootstrapEvaluator) -> float:
    us, _ = bs._live()
    return unit_diagnostics([us])["pairs_share"] if us.n_units else 0.0


def test_the_maintained_pairs_share_equals_a_scan_of_the_units_through_updates_reverts_and_merges():
    """The running totals and lazy max-heaps against unit_diagnostics' scan of every live unit
    (the number compare reports), after every read: units that grow, shrink, vanish and come back,
    stale heap tops, heap rebuilds (more than 2U + 64 entries) and merged shards. Both are a
    ratio of exact integers rounded once: equal as floats."""
    rng = np.random.default_rng(11)
    a = BootstrapEvaluator(_metrics(["ELM"]), n_replicas=8, seed=1)
    b = BootstrapEvaluator(_metrics(["ELM"]), n_replicas=8, seed=1)
    live: list = []
    for step in range(1500):
        target = a if step % 3 else b
        mine = [x for x in live if x[0] is target]
        if mine and rng.random() < 0.35:
            x = mine[int(rng.integers(len(mine)))]
            live.remove(x)
            target.revert(*x[1:3], unit=x[3])
        else:
            u = int(rng.integers(0, 12))
            t = (u, int(rng.integers(0, 3 if u else 1)))  # unit 0: one true cluster, grows big
            p = (u, int(rng.integers(0, 3)))
            target.update(t, p, unit=u)
            live.append((target, t, p, u))
        if step % 7 == 0:
            assert a.pairs_share() == _scan_share(a)
            assert b.pairs_share() == _scan_share(b)
    assert max(len(h) for h in a._dominance.heaps) <= 2 * a.units + 65  # rebuilt, not unbounded
    a.merge(b)
    assert a.pairs_share() == _scan_share(a) > 0
    one = BootstrapEvaluator(_metrics(["ELM"]), n_replicas=8, seed=1)
    for _, t, p, u in live:
        one.update(t, p, unit=u)
    assert one == a and one.pairs_share() == a.pairs_share()
    assert one.get() == a.get()


def test_heap_rebuilds_on_one_side_with_tied_counts_keep_the_share_exact():
    """Five units with equal pair counts; elements that change only the true side's pairs (a
    predicted singleton) or only the predicted side's (a true singleton), at random, read at
    random: the two sides' heaps are rebuilt at different times and hold equal counts, so their
    entries must be ordered by sequence numbers never reused within a heap (never by the units:
    a reused number once raised TypeError comparing two units), and the share stays the scan's."""
    rng = np.random.default_rng(0)
    bs = BootstrapEvaluator(_metrics(["ELM"]), n_replicas=2, seed=0)
    for u in range(5):
        bs.update((u, 0), (u, 0), 2, unit=u)  # one true and one predicted pair per unit
    for step in range(600):
        u = int(rng.integers(5))
        t, p = ((u, 0), (u, "solo", step)) if rng.random() < 0.5 else ((u, "solo", step), (u, 0))
        bs.update(t, p, unit=u)
        if rng.random() < 0.5:
            assert bs.pairs_share() == _scan_share(bs) == 3 / 7  # 3 pairs of 7 on the side
        bs.revert(t, p, unit=u)
        if rng.random() < 0.5:
            assert bs.pairs_share() == _scan_share(bs) == 1 / 5
        for heap in bs._dominance.heaps:  # a tie on the count is broken by a unique number
            assert len({seq for _, seq, _ in heap}) == len(heap)


def test_bad_interval_names_get_a_clear_error_and_change_nothing():
    for bad in ("normal", "Studentized", None, 3):
        with pytest.raises(ValueError, match="interval must be one of 'adaptive', 'bca', 'hybrid', "
                                             "'percentile', 'studentized', got"):
            BootstrapEvaluator([se.ELM()], interval=bad)
    bs = BootstrapEvaluator([se.ELM()], n_replicas=10)
    bs.update("a", "x", unit=1)
    before = bs.get()
    with pytest.raises(ValueError, match="interval must be one of .* got 'bootstrap-t'"):
        bs.intervals("bootstrap-t")
    with pytest.raises(ValueError, match="interval must be one of"):
        bs.interval("ELM", method="t")
    with pytest.raises(ValueError, match="interval must be one of"):
        compare([0, 0], {"A": [0, 0]}, units=[0, 1], interval="t")
    assert bs.get() == before and bs.interval_method == "adaptive"


# --------------------------------------------------------------------------- the Monitor with few units per window
def _segments(seed: int, n: int = 3500, change: int = 2000, seg: int = 1500):
    """Segments of 1,500 elements (a window of 1,000 holds one or two units), four entities per
    segment, 5% errors, and from element ``change`` on a collapse (every element of a segment
    in one predicted cluster): the case where the interval rule used to miss sudden changes."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        u = i // seg
        t = int(rng.integers(0, 4))
        p = t if rng.random() > 0.05 else int(rng.integers(0, 4))
        out.append((u, (u, t), (u, 99 if i >= change else p)))
    return out


@pytest.mark.slow  # three monitors over 2,500 elements each: a second of CPU, out of the quick loop
def test_the_interval_rule_defers_to_the_cusum_while_the_window_holds_few_units():
    from streameval.detect import IntervalRule

    drops, old = [], []
    for seed in range(3):
        mon = se.Monitor([se.ELM()], window=1000, block=25, detector="interval", interval=20)
        raw = se.Monitor([se.ELM()], window=1000, block=25, detector=IntervalRule(min_units=1),
                         interval=20)
        for u, t, p in _segments(seed):
            mon.update(t, p, unit=u)
            raw.update(t, p, unit=u)
        assert mon.detector.deferred == 140 and raw.detector.deferred == 0  # every block: 1-2 units
        drops.append(mon.drops)
        old.append(raw.drops)
        r = mon.report()
        assert r["window_interval_applied"] in ("studentized", "hybrid")
        assert any("fewer than 30: drops are judged by the detector alone (Cusum" in w
                   for w in r["window_interval_warnings"])
    # the CUSUM on the block values catches the collapse 75 elements (3 blocks) after it, and
    # nothing before it; the bare interval rule flags noise before the change
    assert drops == [[2075], [2075], [2075]]
    assert old == [[1050, 1150, 1700, 1825, 2500], [1025, 1250, 1725, 1875, 2025, 2300, 2500],
                   [1025, 1225, 1450, 1575, 1650, 2500]]
    with pytest.raises(ValueError, match="min_units must be an int >= 1"):
        IntervalRule(min_units=0)


def test_a_detectors_drop_is_not_gated_by_an_interval_over_few_units():
    """Monitor(interval=B) with a detector: the interval gate keeps a drop only where the window's
    interval lies below the reference, except with fewer than 30 units, where the detector (the
    CUSUM calibrated on the block values) judges alone."""
    mon = se.Monitor([se.ELM()], window=1000, block=25, interval=20)  # the default Cusum, gated
    for u, t, p in _segments(0):
        mon.update(t, p, unit=u)
    assert mon.drops == [2075]
    assert mon.report()["window_interval_warnings"][-1].startswith(
        "the window holds 2 units, fewer than 30: drops are judged by the detector alone (Cusum")
