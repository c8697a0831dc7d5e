"""The faster paths of compare against the paths they replace: the same numbers, bit for bit.

Each fast path (a table-counted factorize, the packed combined product, the swaps over the
columns that differ, the gradients stepped in place, the row sums known from the draw, the
subsampled interval's shared moments) is held here against the plain computation it stands for,
whole output against whole output.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval.comparison as cmp
from streameval import compare
from streameval.comparison import _metrics, bootstrap_multiplicities
from streameval.labels import factorize
from streameval.linearization import Moments, _value, gradients, read_fields, slope_fields, unit_fields
from streameval.stats import ONE, STAT_NAMES
from streameval.units import Combiner, UnitStats, unit_stats_from_codes

METRICS = ["ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo"]


def _documents(rng, n_units: int, per_unit: int = 8):
    units = np.repeat(np.arange(n_units), per_unit)
    t = units * 4 + rng.integers(0, 4, len(units))
    a = np.where(rng.random(len(units)) < 0.8, t, units * 4 + rng.integers(0, 4, len(units)))
    b = np.where(rng.random(len(units)) < 0.6, t, units * 4 + rng.integers(0, 4, len(units)))
    return units, t, a, b


def _stats(rng, n_units: int, metrics):
    units, t, a, b = _documents(rng, n_units)
    keys = cmp._f_keys(metrics)
    return [unit_stats_from_codes(units, t, p, None, n_units, keys) for p in (a, b)]


# --------------------------------------------------------------------------- factorize
@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=40),
       st.sampled_from([np.int64, np.int32, np.int8, np.uint8, np.uint64]), st.integers(0, 3))
def test_integer_labels_counted_in_a_table_get_the_codes_and_uniques_of_np_unique(values, dtype,
                                                                                  spread):
    info = np.iinfo(dtype)
    lo = max(info.min, -(10 ** (3 * spread)))
    x = np.array([lo + v % (10 ** (3 * spread) + 1) for v in values], dtype=object)
    x = np.array([min(max(int(v), info.min), info.max) for v in x], dtype=dtype)
    codes, uniques = factorize(x)
    want_u, want_inv = np.unique(x, return_inverse=True)
    assert codes.dtype == np.int64 and codes.tolist() == want_inv.reshape(-1).tolist()
    assert uniques == want_u.tolist()
    assert [type(u) for u in uniques] == [type(u) for u in want_u.tolist()]


def test_integer_labels_beyond_the_table_are_sorted_as_before():
    for x in (np.array([0, 2**40, 5, 0]), np.array([2**63 + 7, 3, 2**63 + 7], dtype=np.uint64),
              np.array([-(2**63), 2**63 - 1, 0])):
        codes, uniques = factorize(x)
        want_u, want_inv = np.unique(x, return_inverse=True)
        assert codes.tolist() == want_inv.tolist() and uniques == want_u.tolist()


# --------------------------------------------------------------------------- the packed product
def test_packed_combination_equals_each_system_at_the_bound_with_wide_and_small_fields():
    rng = np.random.default_rng(3)
    n_units = 50
    keys = [("elm", 1.0)]
    width = len(STAT_NAMES) + 1
    shared = [int(v) for v in rng.integers(0, 30, n_units)]  # a truth's field, held once
    stats = []
    for _ in range(3):
        rows = []
        for u in range(n_units):
            # small counts, values just below 2**70 (three limbs, the top one small), zeros
            row = [int(rng.integers(0, 1 << int(rng.integers(0, 9)))) for _ in range(width)]
            row[0] = shared[u]
            row[7] = int(rng.integers(1 << 60, 1 << 62)) * 255 + int(rng.integers(0, 255))
            row[-1] = (1 << 70) - 1 - int(rng.integers(0, 1 << 40))
            row[12] = 0
            rows.append(row)
        stats.append(UnitStats.from_rows(rows, keys))
    c = Combiner(stats)
    assert c.columns > c._x.shape[0]  # some columns share one
    bound = stats[0].bound
    m = rng.integers(0, 4, size=(40, n_units))
    m[0] = 0
    m[0, 3] = bound  # every multiplicity on one unit, at the bound
    m[1] = bound // n_units
    m[1, : bound % n_units] += 1  # a row summing to exactly the bound
    m[2] = 0  # an empty resample
    assert int(m.sum(axis=1).max()) == bound
    assert c.combine(m) == [s.combine(m) for s in stats]
    assert c.combine(m, m.sum(axis=1)) == [s.combine(m) for s in stats]
    rest = Combiner(stats, [0, 7, 19])
    got = rest.combine(m)
    for rows, s in zip(got, stats):
        for row, want in zip(rows, s.combine(m)):
            assert [row[f] for f in (0, 7, 19)] == [want[f] for f in (0, 7, 19)]


# --------------------------------------------------------------------------- the swaps
@pytest.mark.parametrize("fields", [None, [0, 2, 3, 4, 5, 6, 7, 8, 9, 19, 20], [0, 2, 5, 8]])
def test_swaps_over_the_columns_that_differ_equal_the_combination_of_the_chosen_units(fields):
    rng = np.random.default_rng(4)
    sa, sb = _stats(rng, 60, _metrics(METRICS))
    swaps = (rng.random((37, 60)) < 0.5).astype(np.float64)
    swaps[0] = 0
    swaps[1] = 1
    ra, rb = sa.swapped(sb, swaps, fields)
    both = sa.stack(sb)
    keep = 1 - swaps
    want_a = both.combine(np.hstack([keep, swaps]).astype(np.int64))
    want_b = both.combine(np.hstack([swaps, keep]).astype(np.int64))
    chosen = range(len(sa.fields)) if fields is None else fields
    for got, want in ((ra, want_a), (rb, want_b)):
        assert [[r[f] for f in chosen] for r in got] == [[r[f] for f in chosen] for r in want]
    if fields is not None and 5 in fields:  # a truth's field: the same in both, no column
        assert all(r[5] == sa.totals[5] for r in ra)


# --------------------------------------------------------------------------- the gradients
def _gradients_read_afresh(ustats, metrics, rows):
    """The central differences with a fresh stats object for every read (the plain path)."""
    nf = len(ustats.fields)
    out = np.zeros((len(metrics), len(rows), nf))
    ref = max(rows, key=lambda r: r[0])
    fields = [read_fields(ustats, m, ref) for m in metrics]
    for r, row in enumerate(rows):
        row = list(row)
        for k, metric in enumerate(metrics):
            for f in fields[k]:
                unit = ONE if f >= len(STAT_NAMES) or STAT_NAMES[f].endswith(("_xlogx", "_sum")) else 1
                v = row[f]
                h = max(2, 2 * int(max(abs(v), unit) * 1e-7 / 2))
                row[f] = v + h
                up = _value(metric, ustats.stats(row))
                row[f] = v - h if v >= h else v
                down = _value(metric, ustats.stats(row))
                row[f] = v
                slope = (up - down) / (h if v < h else 2 * h)
                out[k, r, f] = slope if np.isfinite(slope) else 0.0
    return out


def test_gradients_stepped_in_place_equal_those_read_afresh_bit_for_bit():
    rng = np.random.default_rng(5)
    metrics = _metrics("all")  # every O(1) metric: counts, fixed-point sums, F sums, branches
    sa, sb = _stats(rng, 30, metrics)
    m = bootstrap_multiplicities(30, 45, rng)
    m[0] = 0
    m[0, 4] = 30  # one unit drawn every time
    m[1] = 0  # an empty table
    for us in (sa, sb):
        rows = us.combine(m)
        got = gradients(us, metrics, rows)
        want = _gradients_read_afresh(us, metrics, rows)
        assert np.array_equal(got, want) and got.tobytes() == want.tobytes()
        assert us.combine(m) == rows  # the rows read are left as they were


# --------------------------------------------------------------------------- the standard errors
def test_standard_errors_with_the_row_sums_known_equal_those_summed_bit_for_bit():
    rng = np.random.default_rng(6)
    metrics = _metrics(METRICS)
    sa, sb = _stats(rng, 40, metrics)
    m = bootstrap_multiplicities(40, 70, rng).astype(np.float64)
    m[0] = 0
    m[0, 7] = 40  # one unit, drawn 40 times: no spread
    m[1] = 0
    m[1, 2] = 1  # one unit drawn once
    m[2] = 0  # an empty resample (tot 0: NaN)
    m[3, :5] = 0
    rows = [sa.combine(m), sb.combine(m)]
    grads = [gradients(us, metrics, r) for us, r in zip((sa, sb), rows)]
    mo = Moments([unit_fields(sa), unit_fields(sb)], slope_fields(grads), [(0, 1)])
    plain = mo.standard_errors(grads, m)
    known = mo.standard_errors(grads, m, m.sum(axis=1))
    for x, y in zip(plain[0] + plain[1], known[0] + known[1]):
        assert x.tobytes() == y.tobytes()
    assert np.all(known[0][0][:, :2] == 0.0) and np.all(np.isnan(known[0][0][:, 2]))


def test_the_blocks_row_sums_are_those_of_their_multiplicities():
    rng = np.random.default_rng(7)
    order = list(range(90))
    for resampling, draws in (("multinomial", None), ("multinomial", 20), ("poisson", None)):
        for m, tot in cmp._resample_blocks(order, 70, 3, rng, resampling, draws):
            assert tot.tobytes() == m.sum(axis=1).tobytes()


def test_the_subsampled_interval_reads_the_same_report_with_moments_built_anew(monkeypatch):
    rng = np.random.default_rng(8)
    units, t, a, b = _documents(rng, 120)
    args = {"units": units, "n_resamples": 90, "seed": 3, "interval": "subsampled"}
    shared = compare(t, {"A": a, "B": b}, **args)
    built: list = []

    def anew(self):
        built.append(1)
        return cmp._StandardErrors(self.stats, self.metrics,
                                   [(self.names[i], self.names[j]) for i, j in self.pairs],
                                   self.aggregate, self.per_unit)

    monkeypatch.setattr(cmp._StandardErrors, "fresh", anew)
    alone = compare(t, {"A": a, "B": b}, **args)
    assert built and shared.settings["interval_applied"] == "subsampled"
    assert shared.to_json() == alone.to_json()
    for name in ("A", "B"):
        assert shared.samples[name].tobytes() == alone.samples[name].tobytes()
