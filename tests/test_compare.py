"""Unit resampling: exact combination of unit statistics, the streaming Poisson bootstrap's laws,
the batch API's values, errors and reports. (Coverage and calibration: test_compare_coverage.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from se_rounding import spread_noise, t_end_bound

import streameval as se
from streameval import (
    ELM,
    AdjustedRand,
    BCubed,
    BootstrapEvaluator,
    Contingency,
    Evaluator,
    NormalizedMutualInfo,
    Purity,
    compare,
    confidence_interval,
)
from streameval.bootstrap import poisson_multiplicities, unit_hash
from streameval.comparison import (
    UnitStats,
    _metrics,
    bootstrap_multiplicities,
    unit_stats,
)
from streameval.errors import InvalidLabelError, UnknownElementError
from streameval.intervals import INTERVAL_METHODS
from streameval.linearization import standard_errors


def _suite():
    return [ELM(), BCubed(), ELM(beta=2.0), AdjustedRand(), NormalizedMutualInfo(), Purity()]


@st.composite
def unit_data(draw, max_units=5):
    """Elements as (unit, true, pred) with labels scoped by unit (so units hold whole clusters)."""
    n_units = draw(st.integers(1, max_units))
    out = []
    for u in range(n_units):
        size = draw(st.integers(1, 6))
        for _ in range(size):
            t = draw(st.integers(0, 2))
            p = draw(st.integers(0, 2))
            out.append((u, (u, t), (u, p)))
    return out


def _cells(elements, n_units):
    cells = [{} for _ in range(n_units)]
    for u, t, p in elements:
        cells[u][t, p] = cells[u].get((t, p), 0) + 1
    return cells


# --------------------------------------------------------------------------- exactness
@given(unit_data(), st.data())
def test_combined_unit_stats_equal_the_table_of_tagged_copies(elements, data):
    n_units = max(u for u, _, _ in elements) + 1
    metrics = _metrics(_suite())
    ustats = unit_stats(_cells(elements, n_units), metrics)
    mult = data.draw(st.lists(st.integers(0, 3), min_size=n_units, max_size=n_units))
    ev = Evaluator([m.clone() for m in metrics])
    for u, t, p in elements:
        for c in range(mult[u]):
            ev.update((t, c), (p, c))
    (row,) = ustats.combine(np.array([mult]))
    combined = ustats.stats(row)
    assert combined == ev.table.stats()  # every sum, bit for bit, f_sums included
    for m in ev.metrics.values():
        assert m.value(combined) == m.get()


def test_combine_is_exact_for_sums_beyond_int64():
    s = se.ContingencyStats.from_cells([((0, k), (0, k), 3) for k in range(5)] + [(1, 2, 7)])
    us = UnitStats([s, s], list(s.f_sums))
    m = np.array([[5, 0], [1_000_000, 3_000_000]])
    rows = us.combine(m)
    assert rows[1][us.fields.index("elm_p_sum")] == 4_000_000 * s.elm_p_sum
    assert s.sum_cell_xlogx * 4_000_000 > 2**63  # really beyond int64
    assert rows[1][us.fields.index("sum_cell_xlogx")] == 4_000_000 * s.sum_cell_xlogx
    with pytest.raises(ValueError, match="sum to less than 2\\*\\*32"):
        us.combine(np.array([[2**31, 2**31]]))


@given(unit_data())
def test_observed_values_equal_one_evaluator_over_all_elements(elements):
    ev = Evaluator(_suite())
    for _, t, p in elements:
        ev.update(t, p)
    units = [u for u, _, _ in elements]
    r = compare([t for _, t, _ in elements], {"S": [p for _, _, p in elements]}, units=units,
                metrics=_suite(), n_resamples=5, seed=0)
    assert {k: iv.value for k, iv in r.values["S"].items()} == ev.get()


def test_per_unit_labels_equal_tagged_labels():
    y = [0, 0, 1, 0, 1, 1]
    p = [0, 1, 1, 0, 0, 1]
    units = ["a", "a", "a", "b", "b", "b"]
    r = compare(y, {"S": p}, units=units, labels="per_unit", n_resamples=10, seed=0)
    ev = Evaluator([ELM(), BCubed(), AdjustedRand(), NormalizedMutualInfo()])
    for u, t, q in zip(units, y, p):
        ev.update((u, t), (u, q))
    assert {k: iv.value for k, iv in r.values["S"].items()} == ev.get()
    with pytest.raises(ValueError, match='label 0 occurs in unit .a. and in unit .b.'):
        compare(y, {"S": p}, units=units, n_resamples=10, seed=0)


def test_mean_aggregate_is_the_mean_of_per_unit_values():
    y = [0, 0, 1, 1, 0, 0, 0, 1]
    p = [0, 0, 0, 1, 0, 1, 1, 1]
    units = [0, 0, 0, 0, 1, 1, 1, 1]
    r = compare(y, {"S": p}, units=units, labels="per_unit", metrics=["ELM"], aggregate="mean",
                n_resamples=50, seed=3)
    per = [se.batch.elm_score(y[:4], p[:4]), se.batch.elm_score(y[4:], p[4:])]
    # two values: every order adds them alike and halving is exact, so any mean of them is this
    assert r.values["S"]["ELM"].value == np.mean(per)
    lo, hi = r.values["S"]["ELM"].low, r.values["S"]["ELM"].high
    assert min(per) - 1e-12 <= lo <= hi <= max(per) + 1e-12


def test_bootstrap_multiplicities_are_uniform_resamples():
    m = bootstrap_multiplicities(4, 20000, np.random.default_rng(0))
    assert (m.sum(axis=1) == 4).all()
    assert m.mean(axis=0) == pytest.approx([1, 1, 1, 1], abs=0.03)


def test_seeded_results_are_reproducible_and_recorded():
    y, p, u = [0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 2], [0, 0, 0, 0, 1, 1]
    a = compare(y, {"S": p}, units=u, n_resamples=100, seed=11).to_dict()
    b = compare(y, {"S": p}, units=u, n_resamples=100, seed=11).to_dict()
    assert a == b and a["settings"]["seed"] == 11
    c = compare(y, {"S": p}, units=u, n_resamples=100, seed=None)
    assert isinstance(c.settings["seed"], int)
    again = compare(y, {"S": p}, units=u, n_resamples=100, seed=c.settings["seed"])
    assert again.to_dict() == c.to_dict()


# --------------------------------------------------------------------------- tests and reports
def _two_systems():
    rng = np.random.default_rng(5)
    y, a, b, units = [], [], [], []
    for u in range(30):
        for _e in range(8):
            t = int(rng.integers(0, 3))
            y.append((u, t))
            a.append((u, t if rng.random() < 0.9 else int(rng.integers(0, 4))))
            b.append((u, t if rng.random() < 0.6 else int(rng.integers(0, 4))))
            units.append(u)
    return y, a, b, units


@pytest.mark.parametrize("method", ["paired_bootstrap", "randomization"])
def test_a_clear_difference_is_significant_and_identical_systems_are_not(method):
    y, a, b, units = _two_systems()
    r = compare(y, {"A": a, "B": b, "A2": list(a)}, units=units, method=method, n_resamples=500,
                seed=1)
    for metric in ("ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo"):
        d = r.differences["A", "B"][metric]
        assert d.delta > 0 and d.low > 0 and d.p_value < 0.01
        same = r.differences["A", "A2"][metric]
        assert same.delta == 0 and same.p_value == 1.0
        assert r.values["A"][metric] == r.values["A2"][metric]
    assert list(r.differences) == [("A", "B"), ("A", "A2"), ("B", "A2")]


def test_report_renders_as_text_and_json():
    y, a, b, units = _two_systems()
    r = compare(y, {"A": a, "B": b}, units=units, metrics=["ELM", "BCubed"], n_resamples=200, seed=2)
    d = json.loads(r.to_json())
    assert d["settings"]["units"] == 30 and d["settings"]["elements"] == 240
    assert d["settings"]["metrics"] == ["ELM", "BCubed"]
    assert set(d["values"]) == {"A", "B"} and d["differences"][0]["a"] == "A"
    iv = r.values["A"]["ELM"]
    assert d["values"]["A"]["ELM"] == {"value": iv.value, "low": iv.low, "high": iv.high}
    text = str(r)
    assert "30 units, 240 elements, 200 resamples, 95% studentized intervals, seed 2" in text
    assert "A - B" in text and "BCubed" in text
    assert r.samples["A"].shape == (2, 200)


def test_confidence_interval_is_compares_interval():
    y, a, _, units = _two_systems()
    ci = confidence_interval(y, a, units=units, n_resamples=300, seed=4, confidence=0.9)
    r = compare(y, {"system": a}, units=units, n_resamples=300, seed=4, confidence=0.9)
    assert ci == r.values["system"]
    v, lo, hi = ci["ELM"]
    assert lo < v < hi


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"units": None}, ValueError, "units= is required"),
        ({"method": "t-test"}, ValueError, "method must be one of"),
        ({"n_resamples": 0}, ValueError, "n_resamples must be an int >= 1"),
        ({"confidence": 95}, ValueError, "confidence must be a number strictly between 0 and 1"),
        ({"aggregate": "median"}, ValueError, "aggregate must be one of"),
        ({"metrics": ["CEAF"]}, ValueError, "unit resampling supports the O\\(1\\) metrics only"),
        ({"metrics": ["NoSuch"]}, ValueError, "unknown metric 'NoSuch'"),
        ({"seed": -1}, ValueError, "seed must be an int >= 0"),
        ({"units": [0, 0, 1]}, ValueError, "units has 3 entries, y_true has 4"),
        ({"units": [0, 0, [1], 1]}, TypeError, "units\\[2\\] must be hashable"),
        ({"resampling": "jackknife"}, ValueError, "resampling must be"),
    ],
)
def test_bad_arguments_are_refused_clearly(kwargs, error, match):
    args = {"units": [0, 0, 1, 1], "n_resamples": 10, "seed": 0}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        compare([0, 0, 1, 1], {"A": [0, 0, 1, 1]}, **args)


def test_bad_systems_are_refused_clearly():
    with pytest.raises(ValueError, match="system 'B' has 3 predictions, y_true has 4"):
        compare([0, 0, 1, 1], {"A": [0, 0, 1, 1], "B": [0, 0, 1]}, units=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="y_pred\\['A'\\]\\[1\\] is missing"):
        compare([0, 0, 1, 1], {"A": [0, None, 1, 1]}, units=[0, 0, 1, 1])
    with pytest.raises(ValueError, match="non-empty dict"):
        compare([0, 0], {}, units=[0, 0])


# --------------------------------------------------------------------------- streaming
def _feed(bs, elements, w=1):
    for u, t, p in elements:
        bs.update(t, p, w, unit=u)


@settings(max_examples=30)
@given(unit_data(max_units=4), st.integers(0, 2**64 - 1))
# an unseeded run's: NMI's scores equal in every unit (a split unit twice, its transpose once), a
# spread of 0 that the moments left as a residue of 2**-30 on one path, 0 on the other
@example(elements=[(0, (0, 0), (0, 0)), (0, (0, 0), (0, 1)), (1, (1, 0), (1, 0)), (1, (1, 0), (1, 1)),
                   (2, (2, 0), (2, 0)), (2, (2, 1), (2, 0))], seed=0)
# another's: a replica whose cells are all singletons (Σ n log n = 0), where a step of 2 on that
# fixed-point field (10⁻¹⁹ of a unit) read only the metric's rounding, a slope of 2⁻⁵³ that the
# units' sums of about 10²⁰ made scores of 10⁴ (the step is now 10⁻⁷ of a unit at least)
@example(elements=[(0, (0, 0), (0, 0)), (0, (0, 1), (0, 1)), (1, (1, 0), (1, 0)), *[(2, (2, 0), (2, 0))] * 4,
                   (2, (2, 0), (2, 1)), (3, (3, 0), (3, 0)), (3, (3, 0), (3, 1)), (3, (3, 1), (3, 0))],
         seed=468856)
def test_streaming_replicas_equal_the_batch_poisson_resamples_bit_for_bit(elements, seed):
    n_units = max(u for u, _, _ in elements) + 1
    bs = BootstrapEvaluator(_suite(), n_replicas=6, seed=seed)
    _feed(bs, elements)
    metrics = _metrics(_suite())
    ustats = unit_stats(_cells(elements, n_units), metrics)
    m = poisson_multiplicities(range(n_units), 6, seed).T
    for r, row in enumerate(ustats.combine(m)):
        assert bs.replica_stats(r) == ustats.stats(row)
    # ... and the table of k tagged copies of every unit of multiplicity k
    copies = Evaluator(_suite())
    for u, t, p in elements:
        for c in range(m[0, u]):
            copies.update((t, c), (p, c))
    assert bs.replica_stats(0) == copies.table.stats()
    # and the batch API with resampling="poisson" reports the same intervals, method by method
    units = [u for u, _, _ in elements]
    rows, ones = ustats.combine(m), np.ones((1, n_units))
    values = np.array([[mt.value(s) if s.n else np.nan for s in map(ustats.stats, rows)] for mt in metrics])
    (se_r,), _ = standard_errors([ustats], metrics, m, [rows])
    (se0,), _ = standard_errors([ustats], metrics, ones, [[ustats.totals]])
    (noise,), _ = spread_noise([ustats], metrics, m, [rows])
    (noise0,), _ = spread_noise([ustats], metrics, ones, [[ustats.totals]])
    index = {mt.name: k for k, mt in enumerate(metrics)}
    other_se, other_se0 = bs.standard_errors()
    for method in INTERVAL_METHODS:
        r = compare([t for _, t, _ in elements], {"S": [p for _, _, p in elements]}, units=units,
                    metrics=_suite(), n_resamples=6, seed=seed, resampling="poisson",
                    interval=method)
        got = bs.intervals(method)
        for name, iv in r.values["S"].items():
            if method in ("percentile", "bca"):
                # the same replica values, the same quantiles; BCa's jackknife from the same
                # leave-one-group-out tables in the one group order of jackknife_groups: bit for bit
                np.testing.assert_array_equal(tuple(iv), got[name])  # NaN bounds agree too
            elif iv.value == iv.value:
                # the same exact sums and slopes; the standard errors' moments summed over the
                # units in another order (first seen here, hash order in the evaluator): each
                # path within moment_noise of the exact V, carried to the ends by t_end_bound
                k = index[name]
                bound = t_end_bound(values[k], iv.value, se_r[k], noise[k], se0[k, 0], noise0[k, 0],
                                    other=(other_se[k], other_se0[k]))
                np.testing.assert_allclose(tuple(iv)[1:], got[name][1:], rtol=0, atol=bound)
                assert iv.value == got[name].value
            else:  # no value: NaN bounds on both
                np.testing.assert_array_equal(tuple(iv), got[name])


@settings(max_examples=30)
@given(unit_data(), st.data())
def test_revert_law(elements, data):
    keep = data.draw(st.lists(st.booleans(), min_size=len(elements), max_size=len(elements)))
    full = BootstrapEvaluator([ELM(), BCubed(), AdjustedRand()], n_replicas=5, seed=3)
    _feed(full, elements)
    for (u, t, p), k in zip(elements, keep):
        if not k:
            full.revert(t, p, unit=u)
    rest = BootstrapEvaluator([ELM(), BCubed(), AdjustedRand()], n_replicas=5, seed=3)
    _feed(rest, [e for e, k in zip(elements, keep) if k])
    assert full == rest
    for method in INTERVAL_METHODS:  # a function of the state: bit for bit
        assert full.intervals(method) == rest.intervals(method)


@settings(max_examples=30)
@given(unit_data(), st.data())
def test_merge_law(elements, data):
    shard = data.draw(st.lists(st.integers(0, 2), min_size=len(elements), max_size=len(elements)))
    parts = [BootstrapEvaluator([ELM(), NormalizedMutualInfo()], n_replicas=4, seed=9) for _ in range(3)]
    for e, s in zip(elements, shard):
        _feed(parts[s], [e])
    one = BootstrapEvaluator([ELM(), NormalizedMutualInfo()], n_replicas=4, seed=9)
    _feed(one, elements)
    left = BootstrapEvaluator([ELM(), NormalizedMutualInfo()], n_replicas=4, seed=9)
    for p in parts:
        left.merge(p)
    right = BootstrapEvaluator([ELM(), NormalizedMutualInfo()], n_replicas=4, seed=9)
    for p in reversed(parts):
        right.merge(p)
    assert left == one and right == one
    for method in INTERVAL_METHODS:  # units read in hash order: bit for bit
        assert left.intervals(method) == one.intervals(method) == right.intervals(method)


def test_weights_enter_every_copy():
    a = BootstrapEvaluator([ELM()], n_replicas=8, seed=2)
    b = BootstrapEvaluator([ELM()], n_replicas=8, seed=2)
    a.update(0, 0, 3, unit="u")
    for _ in range(3):
        b.update(0, 0, unit="u")
    assert a == b


def test_bad_input_leaves_the_evaluator_unchanged():
    bs = BootstrapEvaluator([ELM()], n_replicas=10, seed=0)
    bs.update(1, 1, unit="u")
    before = BootstrapEvaluator([ELM()], n_replicas=10, seed=0)
    before.update(1, 1, unit="u")
    with pytest.raises(UnknownElementError):
        bs.revert(1, 2, unit="u")
    with pytest.raises(UnknownElementError, match="in unit 'v'"):
        bs.revert(1, 1, unit="v")
    with pytest.raises(InvalidLabelError):
        bs.update([1], 1, unit="u")
    with pytest.raises(InvalidLabelError):
        bs.revert([1], 1, unit="u")
    with pytest.raises(TypeError, match="a unit must be"):
        bs.update(1, 1, unit=[0])
    with pytest.raises(ValueError, match="needs the element's unit"):
        bs.update(1, 1)
    with pytest.raises(se.InvalidWeightError):
        bs.update(1, 1, 0, unit="u")
    assert bs == before
    # an element reverted with the wrong unit: refused, and everything rolled back
    for b in (bs, before):
        b.update(2, 2, unit="v")
    with pytest.raises(UnknownElementError, match="in unit 'v': the unit holds 0 such element"):
        bs.revert(1, 1, unit="v")
    assert bs == before


def test_streaming_warnings_are_compares_few_and_dominant_units():
    bs = BootstrapEvaluator([ELM(), AdjustedRand()], n_replicas=20, seed=0)
    assert bs.warnings() == [] and bs.settings()["units"] == 0
    for u in range(29):
        bs.update((u, 0), (u, 0), 2, unit=u)  # 29 units of one pair each
    (few,) = bs.warnings()
    assert few.startswith("only 29 units") and "fewer than about 30" in few
    bs.update((29, 0), (29, 0), 2, unit=29)
    assert bs.warnings() == []  # 30 units, each 1/30 of the pairs
    bs.update((29, 0), (29, 0), 2, unit=29)  # unit 29: 4 elements, 6 of the 35 true pairs = 17%
    (dominant,) = bs.warnings()
    assert dominant.startswith("one unit holds 17% of the true or predicted within-cluster pairs")
    assert "more than 15%" in dominant
    s = bs.settings()
    assert s["largest_unit_pairs_share"] == round(6 / 35, 6)  # the settings round the quotient to 6 places
    assert (s["interval_method"], s["interval_applied"], s["units"], s["warnings"]) == (
        "adaptive", "hybrid", 30, [dominant])
    # the same thresholds as compare's warnings, on the same data
    r = compare([t for u in range(30) for t in [(u, 0)] * (4 if u == 29 else 2)],
                {"A": [t for u in range(30) for t in [(u, 0)] * (4 if u == 29 else 2)]},
                units=[u for u in range(30) for _ in range(4 if u == 29 else 2)], metrics=["ELM"],
                n_resamples=10, seed=0)
    assert len(r.warnings) == 1 and r.warnings[0].startswith("one unit holds 17%")
    bs.revert((29, 0), (29, 0), 2, unit=29)
    assert bs.warnings() == []  # the reads follow the state


def test_interval_methods_are_checked_and_reported():
    with pytest.raises(ValueError, match="interval must be one of 'adaptive', 'bca', 'hybrid', 'percentile', "
                                         "'studentized', got 'normal'"):
        BootstrapEvaluator([ELM()], interval="normal")
    bs = BootstrapEvaluator([ELM()], n_replicas=30, seed=1, interval="bca")
    for u in range(5):
        bs.update((u, 0), (u, u % 2), unit=u)
        bs.update((u, 0), (u, 0), unit=u)
    assert bs.get() == bs.intervals("bca") != bs.intervals("percentile")
    assert bs.interval("ELM") == tuple(bs.get()["ELM"][1:])
    assert bs.interval("ELM", 0.5, "percentile") == tuple(bs.intervals("percentile", 0.5)["ELM"][1:])
    with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1"):
        bs.intervals(confidence=1.0)
    with pytest.raises(KeyError, match="no metric 'BCubed'"):
        bs.interval("BCubed")
    mon = se.Monitor([ELM()], window=20, detector=False, interval=25, interval_method="percentile")
    for u in range(4):
        mon.update((u, 0), (u, 0), unit=u)
    r = mon.report()
    assert r["window_interval_method"] == "percentile"
    assert r["window_interval_warnings"][0].startswith("only 4 units")
    assert r["window_interval"] == mon.interval.intervals("percentile")["ELM"]
    assert se.Monitor([ELM()], window=20, interval=5).interval.interval_method == "adaptive"
    with pytest.raises(ValueError, match="interval_method= needs interval="):
        se.Monitor([ELM()], window=20, interval_method="bca")
    with pytest.raises(ValueError, match="differs from the BootstrapEvaluator's 'bca'"):
        se.Monitor([ELM()], window=20, interval=BootstrapEvaluator([ELM()], interval="bca"),
                   interval_method="percentile")
    with pytest.raises(ValueError, match="interval must be one of"):
        se.Monitor([ELM()], window=20, interval=5, interval_method="normal")


def test_merge_refuses_different_resamples():
    a = BootstrapEvaluator([ELM()], n_replicas=4, seed=1)
    with pytest.raises(ValueError, match="with seed=2 into one with seed=1"):
        a.merge(BootstrapEvaluator([ELM()], n_replicas=4, seed=2))
    with pytest.raises(ValueError, match=r"with metrics=\['BCubed'\] into one with metrics=\['ELM'\]"):
        a.merge(BootstrapEvaluator([BCubed()], n_replicas=4, seed=1))
    with pytest.raises(TypeError):
        a.merge(Contingency())


def test_poisson_multiplicities_are_stable_and_poisson():
    m = poisson_multiplicities(range(200), 500, seed=123)
    assert m.mean() == pytest.approx(1.0, abs=0.01)
    assert m.var() == pytest.approx(1.0, abs=0.02)
    assert (m == 0).mean() == pytest.approx(np.exp(-1), abs=0.005)
    # a fixed, platform-independent function of (seed, unit, replica): pinned values
    assert unit_hash("stream-7") == 3773045110781880700
    assert poisson_multiplicities(["stream-7", 3, ("a", 1)], 12, seed=5).tolist() == PINNED
    assert (poisson_multiplicities([3.0, np.int64(3), True], 5, 1)[:2] == poisson_multiplicities([3, 3], 5, 1)).all()


PINNED = [
    [2, 1, 1, 1, 1, 4, 1, 2, 3, 1, 0, 2],
    [0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 2, 1],
    [0, 0, 0, 1, 0, 0, 0, 1, 2, 0, 1, 2],
]


# --------------------------------------------------------------------------- monitor
def _docs(n_docs, quality, rng, start=0):
    """Elements of documents of 6 elements, 3 true clusters; a share ``quality`` kept right."""
    for d in range(start, start + n_docs):
        for _ in range(6):
            t = int(rng.integers(0, 3))
            p = t if rng.random() < quality else int(rng.integers(0, 4))
            yield d, (d, t), (d, p)


def test_monitor_flags_a_drop_only_when_the_window_interval_lies_below_the_reference():
    rng = np.random.default_rng(0)
    mon = se.Monitor([ELM()], window=240, watch="ELM", block=30, detector=False, interval=30)
    for d, t, p in _docs(100, 0.95, rng):
        mon.update(t, p, unit=d)
    assert mon.drops == []  # a stationary stream: the window's interval covers the all-time value
    v, lo, hi = mon.report()["window_interval"]
    assert lo <= mon.all_time.get()["ELM"] <= hi and lo <= v <= hi
    for d, t, p in _docs(60, 0.5, rng, start=100):
        mon.update(t, p, unit=d)
    assert len(mon.drops) == 1 and 600 < mon.drops[0] <= 600 + 240
    # the interval follows the window: it equals a fresh bootstrap over the window's elements
    fresh = BootstrapEvaluator([ELM()], n_replicas=30)
    for (t, p, w), u in zip(mon.window, mon._units):
        fresh.update(t, p, w, unit=u)
    assert fresh.get()["ELM"] == mon.window_interval()


def test_monitor_interval_arguments_are_checked():
    with pytest.raises(ValueError, match="needs each element's unit"):
        m = se.Monitor([ELM()], window=10, detector=False, interval=5)
        m.update(0, 0)
    with pytest.raises(ValueError, match="count window"):
        se.Monitor([ELM()], window=None, detector=False, interval=5)
    with pytest.raises(ValueError, match="interval must be an int >= 1"):
        se.Monitor([ELM()], window=10, detector=False, interval=0)
    m = se.Monitor([ELM()], window=10, detector=False, interval=5)
    m.update(0, 0, unit="a")
    assert m.n == 1 and "window_interval" in m.report()
    with pytest.raises(ValueError, match="not supported with interval="):
        m.relabel_pred(0, 1)


@given(unit_data(), st.data())
@settings(max_examples=30)
def test_randomization_rounds_equal_the_swapped_labelings(elements, data):
    from streameval.comparison import _randomized_deltas

    n_units = max(u for u, _, _ in elements) + 1
    other = [(u, t, (u, data.draw(st.integers(0, 2)))) for u, t, _ in elements]
    swap = data.draw(st.lists(st.integers(0, 1), min_size=n_units, max_size=n_units))
    metrics = _metrics(_suite())
    sa = unit_stats(_cells(elements, n_units), metrics)
    sb = unit_stats(_cells(other, n_units), metrics)
    (got,) = _randomized_deltas(sa, sb, metrics, np.array([swap]), "pooled").T
    ea, eb = Evaluator([m.clone() for m in metrics]), Evaluator([m.clone() for m in metrics])
    for (u, t, pa), (_, _, pb) in zip(elements, other):
        ea.update(t, pb if swap[u] else pa)
        eb.update(t, pa if swap[u] else pb)
    want = [ea.get()[m.name] - eb.get()[m.name] for m in metrics]
    assert got.tolist() == want


@pytest.mark.parametrize("aggregate", ["pooled", "mean"])
@pytest.mark.parametrize("resampling", ["multinomial", "poisson"])
@pytest.mark.parametrize("method", ["paired_bootstrap", "randomization"])
def test_blocks_of_resamples_give_the_same_report(monkeypatch, resampling, method, aggregate):
    """The same report, and every resample's value and standard error bit for bit, whatever the
    block size. BLAS rounds a row of a product by the shape it is handed (on every OpenBLAS kernel:
    edge rows of its tiles, thread splits, a matrix-vector product's grouping of rows), so a
    product over a whole block once gave a resample's sums other bits in a block of 7 than in one
    of 97, and the report followed wherever a quantile fell on such a resample (OpenBLAS's Nehalem,
    Atom and Barcelona kernels here): the products go by groups of ``PRODUCT_ROWS`` rows."""
    import streameval.comparison as cmp

    y, a, b, units = _two_systems()
    args = {"units": units, "metrics": ["ELM", "AdjustedRand"], "n_resamples": 97, "seed": 3,
            "resampling": resampling, "method": method, "aggregate": aggregate,
            "interval": "studentized"}
    kept: list = []
    append = cmp._StandardErrors.append
    monkeypatch.setattr(cmp._StandardErrors, "append", lambda self, block: (kept.append(block), append(self, block))[1])

    def run():
        kept.clear()
        report = compare(y, {"A": a, "B": b}, **args)
        ses = [np.concatenate([np.asarray(blk[part][i]) for blk in kept], axis=1)
               for part in (0, 1) for i in range(len(kept[0][part]))]
        return report, ses

    whole, whole_se = run()
    for rows in (1, 2):  # blocks of 32 and of 64 resamples of the 30 units (the last one short)
        monkeypatch.setattr(cmp, "_BLOCK", 30 * rows * cmp.PRODUCT_ROWS)
        blocks, blocks_se = run()
        assert blocks.to_dict() == whole.to_dict()
        for name in ("A", "B"):
            assert blocks.samples[name].tobytes() == whole.samples[name].tobytes()
        assert [x.tobytes() for x in blocks_se] == [x.tobytes() for x in whole_se]


@pytest.mark.parametrize("n_units", [1, 7, 1001])
def test_bootstrap_multiplicities_count_the_one_int64_draw_of_every_resample(n_units):
    # drawn a resample at a time as 32-bit integers: the same numbers, and the same generator
    # state afterwards, as counting one (B, U) int64 draw (the reported figures of a seed rest on it)
    B = 13
    ref, rng = np.random.default_rng(n_units), np.random.default_rng(n_units)
    idx = ref.integers(0, n_units, size=(B, n_units))
    want = np.array([np.bincount(row, minlength=n_units) for row in idx])
    out = np.full((B, n_units), -1.0)
    got = bootstrap_multiplicities(n_units, B, rng, np.float64, out=out)
    assert got is out and np.array_equal(got, want)
    assert rng.random() == ref.random()
    assert np.array_equal(bootstrap_multiplicities(n_units, B, np.random.default_rng(n_units)), want)
    with pytest.raises(ValueError, match="out has shape"):
        bootstrap_multiplicities(n_units, B, rng, out=np.empty((B + 1, n_units)))
