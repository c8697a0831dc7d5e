"""Units that hold whole clusters (refused or widened, never cut), the units' warnings, BCa
intervals, one p-value rule, the vectorised unit statistics, the streaming bootstrap's unit
homes, and the compare conveniences (two columns of one file; ``Interval`` everywhere)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streameval as se
from streameval import ELM, AdjustedRand, BCubed, BootstrapEvaluator, Evaluator, compare
from streameval.cli import main
from streameval.comparison import _metrics
from streameval.intervals import Interval, bca_interval, p_value, percentile_interval
from streameval.stats import ContingencyStats
from streameval.units import (
    Combiner,
    UnitStats,
    _distinct,
    _distinct_sorted,
    crossing_label,
    unit_stats_from_codes,
    widen_units,
)


# --------------------------------------------------------------------------- never cut a cluster
def test_per_unit_never_reports_the_value_of_a_cut_cluster():
    # the issue's example: the system merges the two documents' clusters into one; per unit this
    # was cut in two and scored ELM 1.0 (the true ELM is 0.5)
    y, a, units = [0, 0, 1, 1], [7, 7, 7, 7], ["d1", "d1", "d2", "d2"]
    with pytest.raises(ValueError, match="label 7 occurs in unit 'd1' and in unit 'd2'.*cut in two"):
        compare(y, {"A": a}, units=units, labels="per_unit", n_resamples=10, seed=0)
    r = compare(y, {"A": a}, units=units, cross_units="widen", metrics=["ELM"], n_resamples=10,
                seed=0)
    assert r.values["A"]["ELM"].value == se.batch.elm_score(y, a) == 0.5  # one table, one formula
    assert r.settings["units"] == 1 and r.settings["declared_units"] == 2
    assert any("widened" in w and "largest holds 4 elements" in w for w in r.warnings)


def test_per_unit_still_reads_labels_restarting_in_every_unit():
    y = [0, 0, 1, 0, 1, 1]
    p = [0, 1, 1, 0, 0, 1]
    units = ["a", "a", "a", "b", "b", "b"]
    r = compare(y, {"S": p}, units=units, labels="per_unit", metrics=["ELM"], n_resamples=10, seed=0)
    tagged = [(u, t) for u, t in zip(units, y)], [(u, q) for u, q in zip(units, p)]
    assert r.values["S"]["ELM"].value == se.batch.elm_score(*tagged)  # one table, one formula


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6), st.integers(0, 6)), min_size=1,
                max_size=40))
def test_a_reported_value_is_always_the_metric_of_the_labelling_given(rows):
    units = [u for u, _, _ in rows]
    y = [t for _, t, _ in rows]
    p = [q for _, _, q in rows]
    ev = Evaluator([ELM(), BCubed()])
    for a, b in zip(y, p):
        ev.update(a, b)
    want = ev.get()  # the metric of the labelling given, one table over every element
    for kw in ({}, {"labels": "per_unit"}, {"cross_units": "widen"}):
        try:
            r = compare(y, {"S": p}, units=units, metrics=["ELM", "BCubed"], n_resamples=3, seed=0,
                        **kw)
        except ValueError:
            continue  # refused: never a silent wrong value
        if kw.get("labels") == "per_unit" and crossing_label(
                np.unique(units, return_inverse=True)[1], np.unique(y, return_inverse=True)[1]):
            continue  # the truth's labels restart per unit: a different labelling, by declaration
        for name, v in want.items():
            assert r.values["S"][name].value == v, (kw, name)  # one table, one formula


def test_widen_units_joins_units_linked_by_any_labelling():
    units = np.array([0, 0, 1, 1, 2, 2, 3])
    truth = np.array([0, 0, 1, 1, 2, 2, 3])
    a = np.array([5, 5, 6, 6, 6, 7, 8])  # links units 1 and 2
    b = np.array([0, 0, 1, 1, 2, 2, 0])  # links units 3 and 0
    assert widen_units(units, [truth, a, b]).tolist() == [0, 0, 1, 1, 1, 1, 0]


def test_global_refusal_names_the_label_the_units_and_the_remedies():
    with pytest.raises(ValueError, match="system 'A': label 7 occurs in unit 0 and in unit 1.*"
                                         "cross_units=\"widen\""):
        compare([0, 1], {"A": [7, 7]}, units=[0, 1])


# --------------------------------------------------------------------------- warnings
def test_few_units_and_a_dominant_unit_are_warned_about(capsys, tmp_path):
    y = [0, 0, 0, 0, 0, 0, 1, 2]
    r = compare(y, {"A": y}, units=[0, 0, 0, 0, 0, 0, 1, 2], n_resamples=20, seed=0)
    assert any(w.startswith("only 3 units") for w in r.warnings)
    assert any("holds 100% of a labelling's within-cluster pairs" in w for w in r.warnings)
    assert "warning: only 3 units" in str(r)
    assert r.settings["warnings"] == r.warnings
    rng = np.random.default_rng(0)
    units = np.repeat(np.arange(60), 5)
    truth = units * 3 + rng.integers(0, 3, len(units))
    r = compare(truth, {"A": truth}, units=units, n_resamples=20, seed=0)
    assert r.warnings == []
    gold = tmp_path / "g.csv"
    gold.write_text("doc,label\n0,a\n0,a\n1,b\n")
    assert main(["compare", str(gold), str(gold), "--unit", "doc", "--format", "json",
                 "--n-resamples", "20"]) == 0
    assert "streameval: warning: only 2 units" in capsys.readouterr().err


# --------------------------------------------------------------------------- intervals and p-values
def _bca_reference(values, observed, jack, conf):
    """BCa written from Efron & Tibshirani (1993), eq. 14.10-14.15, with SciPy's normal."""
    from scipy.stats import norm

    b = len(values)
    z0 = norm.ppf(min(max((np.sum(values < observed) + 0.5 * np.sum(values == observed)) / b,
                          0.5 / b), 1 - 0.5 / b))
    d = jack.mean() - jack
    a = np.sum(d ** 3) / (6 * np.sum(d ** 2) ** 1.5)
    za = norm.ppf([(1 - conf) / 2, (1 + conf) / 2])
    levels = norm.cdf(z0 + (z0 + za) / (1 - a * (z0 + za)))
    return tuple(np.quantile(values, levels))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.5, 0.99))
def test_bca_interval_matches_the_textbook_formula(seed, conf):
    rng = np.random.default_rng(seed)
    values = rng.gamma(2.0, size=200)
    jack = rng.gamma(3.0, size=25)
    obs = float(np.median(values)) + rng.normal(0, 0.3)
    got = bca_interval(values, obs, jack, conf)
    # the same formula through scipy's normal: the inverse normal agrees to ~1e-15 relative, and
    # a level difference of 1e-15 moves a linear-interpolation quantile by at most
    # 1e-15 * B * (largest gap) — far below 1e-9 for these values
    np.testing.assert_allclose(got, _bca_reference(values, obs, jack, conf), rtol=0, atol=1e-9)


def test_bca_without_bias_or_skew_is_the_percentile_interval_and_compare_reports_the_method():
    vals = np.linspace(0, 1, 1001)
    # z0 = a = 0: the levels are Φ(Φ⁻¹(q)) = q up to the round trip's few ulps
    np.testing.assert_allclose(bca_interval(vals, 0.5, np.array([1.0, 2.0, 3.0]), 0.9),
                               percentile_interval(vals, 0.9), rtol=1e-12)
    y = [0, 0, 1, 1, 2, 2, 3, 3] * 5
    units = np.repeat(np.arange(20), 2)
    a = [t if i % 7 else t + 10 for i, t in enumerate(y)]
    y = [u * 10 + t for u, t in zip(units, y)]
    a = [u * 100 + t for u, t in zip(units, a)]
    for kind, text in (("bca", "BCa"), ("percentile", "percentile"), ("studentized", "studentized"),
                       ("hybrid", "hybrid")):
        r = compare(y, {"A": a}, units=units, n_resamples=50, seed=0, interval=kind)
        assert r.settings["interval_method"] == kind and f"95% {text} intervals" in str(r)
    assert compare(y, {"A": a}, units=units, n_resamples=50, seed=0).settings["interval_method"] == \
        "adaptive"
    with pytest.raises(ValueError, match="interval must be one of"):
        compare(y, {"A": a}, units=units, interval="bootstrap-t")


def test_p_value_and_p_greater_share_one_denominator_with_empty_poisson_resamples():
    # 2 units: about e**-2 = 13.5% of Poisson resamples draw no unit and have no value
    y, a, b = [0, 0, 1, 1], [0, 0, 1, 2], [0, 5, 1, 1]
    for method in ("paired_bootstrap", "randomization"):
        r = compare(y, {"A": a, "B": b}, units=[0, 0, 1, 1], metrics=["ELM"], method=method,
                    n_resamples=400, seed=1, resampling="poisson")
        d = r.differences["A", "B"]["ELM"]
        valid = int(np.sum(~np.isnan(r.samples["A"][0] - r.samples["B"][0])))
        denominator = (valid if method == "paired_bootstrap" else 400) + 1
        for p in (d.p_value, d.p_greater):
            assert math.isclose(p * denominator, round(p * denominator), abs_tol=1e-9), (method, p)
    assert p_value(np.array([np.nan, 1.0, -3.0]), 2.0) == 2 / 3
    assert p_value(np.array([np.nan, 1.0, -3.0]), 2.0, two_sided=False) == 1 / 3


# --------------------------------------------------------------------------- vectorised unit stats
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 4),
                          st.integers(1, 5)), min_size=1, max_size=50),
       st.lists(st.integers(0, 4), min_size=4, max_size=4))
def test_vectorised_unit_stats_equal_the_reference_per_unit_bit_for_bit(rows, mult):
    metrics = _metrics([ELM(), BCubed(), ELM(beta=2.0), AdjustedRand()])
    keys = list(dict.fromkeys(s for m in metrics for s in m.f_specs))
    units = np.array([u for u, *_ in rows])
    # labels tagged by unit: every cluster inside one unit
    t = np.unique([u * 10 + x for u, x, _, _ in rows], return_inverse=True)[1]
    p = np.unique([u * 10 + x for u, _, x, _ in rows], return_inverse=True)[1]
    w = np.array([c for *_, c in rows])
    us = unit_stats_from_codes(units, t, p, w, 4, keys)
    ref = []
    for u in range(4):
        cells: dict = {}
        for (uu, a, b, c) in rows:
            if uu == u:
                cells[a, b] = cells.get((a, b), 0) + c
        ref.append(ContingencyStats.from_cells([(a, b, c) for (a, b), c in cells.items()], keys))
        assert us.unit(u) == ref[u]
    both = UnitStats(ref, keys)
    (row,) = us.combine(np.array([mult]))
    assert us.stats(row) == both.stats(both.combine(np.array([mult]))[0])
    (a_rows, b_rows) = UnitStats.combine_all([us, us], np.array([mult, mult]))
    assert a_rows == b_rows == us.combine(np.array([mult, mult]))
    groups = np.array([0, 1, 0, 1])
    for g, s in enumerate(us.leave_out(groups, 2)):
        assert s == us.stats(us.combine(np.array([(groups != g).astype(int)]))[0])


def test_combiner_holds_a_shared_column_once_and_combines_as_each_system():
    rng = np.random.default_rng(2)
    u = np.repeat(np.arange(20), 6)
    t = u * 3 + rng.integers(0, 3, len(u))
    keys = [("elm", 1.0), ("bcubed", 1.0)]
    sa = unit_stats_from_codes(u, t, u * 4 + rng.integers(0, 4, len(u)), None, 20, keys)
    sb = unit_stats_from_codes(u, t, u * 4 + rng.integers(0, 4, len(u)), None, 20, keys)
    c = Combiner([sa, sb])
    # the truth's fields (n, k_true, the row sums of squares and of x log x, true singletons)
    # are the same columns in both systems
    assert c.columns <= sa.limbs().shape[1] + sb.limbs().shape[1] - 5
    m = rng.integers(0, 3, size=(9, 20))
    assert c.combine(m) == [sa.combine(m), sb.combine(m)]
    big = np.full((1, 20), sa.bound)  # beyond the bound: each system on its own (narrower limbs)
    assert c.combine(big) == [sa.combine(big), sb.combine(big)]


@pytest.mark.parametrize("scale", [1, 1000, 1 << 21])
def test_distinct_rows_by_table_sort_or_lexsort_are_the_rows_of_the_columns(scale):
    # scale 1: a narrow key counted in a table; 1000: a wide key sorted; 2**21: three columns
    # beyond 2**62 together, sorted column by column
    rng = np.random.default_rng(scale)
    cols = [rng.integers(0, 6, 500) * scale + rng.integers(0, 2, 500) for _ in range(3)]
    for got in (_distinct(*cols), _distinct_sorted(*cols)):
        rows, inverse = got
        want = sorted(set(zip(*(c.tolist() for c in cols))))
        assert sorted(rows) == want and len(rows) == len(want)
        assert [rows[i] for i in inverse] == list(zip(*(c.tolist() for c in cols)))


class _Branchy(se.metrics.base.Metric):
    """Reads ``both_singletons`` only above ``top`` predicted clusters: a field that the observed
    tables do not show compare reading."""

    def __init__(self, top: int):
        super().__init__(top=top)

    def value(self, s) -> float:
        top = self._params["top"]
        return s.sum_cell_sq / s.n ** 2 if s.k_pred <= top else s.both_singletons / s.n


@pytest.mark.parametrize("method", ["paired_bootstrap", "randomization"])
def test_a_field_left_out_of_the_combination_and_read_after_all_gives_the_full_result(
        monkeypatch, method):
    import streameval.comparison as cmp
    from streameval.stats import STAT_NAMES
    from streameval.units import UnitStats

    rng = np.random.default_rng(5)
    units = np.repeat(np.arange(40), 4)
    y = units * 3 + rng.integers(0, 3, len(units))
    a = np.where(rng.random(len(units)) < 0.7, y, units * 3 + rng.integers(0, 3, len(units)))
    b = np.where(rng.random(len(units)) < 0.5, y, units * 3 + rng.integers(0, 3, len(units)))
    top = max(len(np.unique(a)), len(np.unique(b)))  # resamples and swaps go above it
    args = {"units": units, "metrics": [_Branchy(top), "ARI"], "n_resamples": 200, "seed": 2,
            "method": method}
    stats = [cmp.unit_stats([{(0, 0): 2}], [AdjustedRand()])]
    assert "both_singletons" not in [STAT_NAMES[f] for f in cmp._fields_read(stats, [_Branchy(1)])]
    full_blocks: list = []
    combine_all = UnitStats.combine_all
    monkeypatch.setattr(UnitStats, "combine_all", staticmethod(
        lambda st, m: full_blocks.append(len(m)) or combine_all(st, m)))
    left_out = compare(y, {"A": a, "B": b}, **args)
    assert full_blocks  # a block was combined again in full
    monkeypatch.setattr(cmp, "_fields_read", lambda stats, metrics: None)  # every field
    full = compare(y, {"A": a, "B": b}, **args)
    assert left_out.to_dict() == full.to_dict()
    for name in ("A", "B"):
        assert np.array_equal(left_out.samples[name], full.samples[name], equal_nan=True)


def test_an_unread_field_refuses_every_use():
    from streameval.units import UNREAD, Unread

    for use in (lambda x: x + 1, lambda x: 1 - x, lambda x: x == 0, lambda x: bool(x),
                lambda x: float(x), lambda x: x // 2, lambda x: max(x, 1), lambda x: -x):
        with pytest.raises(Unread):
            use(UNREAD)


# --------------------------------------------------------------------------- streaming homes
def test_streaming_bootstrap_refuses_a_cluster_across_units_and_changes_nothing():
    bs = BootstrapEvaluator([ELM()], n_replicas=10, seed=0)
    bs.update("x", "p", unit="u1")
    before = BootstrapEvaluator([ELM()], n_replicas=10, seed=0)
    before.update("x", "p", unit="u1")
    with pytest.raises(ValueError, match="true label 'x' is in unit 'u1' and now given in unit 'u2'"):
        bs.update("x", "q", unit="u2")
    with pytest.raises(ValueError, match="predicted label 'p' is in unit 'u1'"):
        bs.update("y", "p", unit="u2")
    assert bs == before and bs.replica_stats(3) == before.replica_stats(3)
    other = BootstrapEvaluator([ELM()], n_replicas=10, seed=0)
    other.update("x", "q", unit="u9")
    with pytest.raises(ValueError, match="cannot merge: true label 'x'"):
        bs.merge(other)
    assert bs == before
    bs.revert("x", "p", unit="u1")  # the label's home is freed with its last element
    bs.update("x", "p", unit="u2")
    assert bs.units == 1


def test_streaming_bootstrap_reads_equal_after_any_read_pattern():
    # the replica sums catch up lazily: reading after every element or once at the end is the same
    rng = np.random.default_rng(3)
    a = BootstrapEvaluator([ELM(), AdjustedRand()], n_replicas=16, seed=5)
    b = BootstrapEvaluator([ELM(), AdjustedRand()], n_replicas=16, seed=5)
    ops = []
    for _ in range(300):
        u = int(rng.integers(0, 40))
        ops.append(((u, int(rng.integers(0, 3))), (u, int(rng.integers(0, 3))), u))
    for k, (t, p, u) in enumerate(ops):
        a.update(t, p, unit=u)
        b.update(t, p, unit=u)
        if k % 3 == 0:
            a.get()
        if k % 5 == 4:
            t0, p0, u0 = ops[k - 2]
            a.revert(t0, p0, unit=u0)
            b.revert(t0, p0, unit=u0)
    va, vb = a.replica_values(), b.replica_values()
    for name in va:
        np.testing.assert_array_equal(va[name], vb[name])
    assert all(a.replica_stats(r) == b.replica_stats(r) for r in range(16))


# --------------------------------------------------------------------------- conveniences: two columns, one Interval
def test_bootstrap_get_returns_the_exported_interval_like_compare():
    assert se.Interval is Interval and "Interval" in se.__all__
    bs = BootstrapEvaluator([ELM()], n_replicas=20, seed=1)
    for d in range(10):
        bs.update((d, 0), (d, 0), unit=d)
        bs.update((d, 0), (d, d % 2), unit=d)
    got = bs.get()["ELM"]
    assert isinstance(got, se.Interval)
    value, low, high = got
    assert (got.value, got.low, got.high) == (value, low, high) and got == tuple(got)
    r = compare([(u, 0) for u in range(10) for _ in range(2)],
                {"A": [(u, v) for u in range(10) for v in (0, u % 2)]},
                units=[u for u in range(10) for _ in range(2)], metrics=["ELM"], n_resamples=20)
    assert type(r.values["A"]["ELM"]) is type(got)


def test_two_prediction_columns_of_one_file_are_two_systems(tmp_path, capsys):
    rng = np.random.default_rng(0)
    lines = ["doc,label,cluster,cluster_v2"]
    gold, c1, c2, units = [], [], [], []
    for u in range(12):
        for _ in range(5):
            t = int(rng.integers(0, 3))
            x = t if rng.random() < 0.9 else int(rng.integers(0, 4))
            z = t if rng.random() < 0.6 else int(rng.integers(0, 4))
            lines.append(f"d{u},d{u}-{t},d{u}-{x},d{u}-{z}")
            units.append(f"d{u}")
            gold.append(f"d{u}-{t}")
            c1.append(f"d{u}-{x}")
            c2.append(f"d{u}-{z}")
    day1 = tmp_path / "day1.csv"
    day1.write_text("\n".join(lines) + "\n")
    assert main(["compare", str(day1), f"{day1}:cluster", f"{day1}:cluster_v2", "--unit", "doc",
                 "--names", "v1", "v2", "--metrics", "ELM", "--n-resamples", "100", "--seed", "2",
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = compare(gold, {"v1": c1, "v2": c2}, units=units, metrics=["ELM"], n_resamples=100, seed=2)
    assert got == json.loads(want.to_json())
    assert main(["compare", str(day1), f"{day1}:nosuch", "--unit", "doc"]) == 1
    assert "nosuch" in capsys.readouterr().err
