"""The studentized (bootstrap-t) and hybrid intervals and the linearization standard errors
behind them.

Oracles: each metric's formula written again with complex numbers, so that the complex-step
derivative ``Im f(S + i·ε·S_u) / ε`` gives the directional derivative of the metric along a unit's
sums to machine precision (no subtraction, hence no cancellation); and a brute-force bootstrap-t
that builds every resample's table from tagged copies of its units.

Tolerances, from the error of the library's central differences (linearization.py): a step ``h``
of at most ``2`` on counts ``≥ N`` and of ``10⁻⁷`` relative on the larger sums has a truncation
error of ``(h/S)² · |f'''| S³ / (6 |f'|)`` relative, below ``(2/N)²`` times a modest constant for
these rational and logarithmic formulas; with ``N ≥ 1,000`` elements that is ``≤ 4·10⁻⁶``, and the
float rounding of a difference quotient (``2⁻⁵³`` relative value error over a relative step
``≥ 10⁻⁷``) adds ``≤ 10⁻⁹``. We allow ``10⁻⁴`` of the largest score (25 times the bound).
"""

from __future__ import annotations

import cmath

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from se_rounding import assert_spreads_agree, spread_noise, t_end_bound

import streameval.intervals as intervals_module
from streameval import compare
from streameval.comparison import (
    _metrics,
    adaptive_choice,
    bootstrap_multiplicities,
    subsample_size,
    unit_stats,
)
from streameval.intervals import hybrid_interval, studentized_interval, subsampled_interval
from streameval.linearization import (
    gradients,
    moment_noise,
    read_fields,
    standard_errors,
    unit_fields,
)
from streameval.stats import ONE, ContingencyStats

METRICS = ["ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo"]
FIELDS = ("n", "sum_cell_sq", "sum_row_sq", "sum_col_sq", "sum_cell_xlogx", "sum_row_xlogx",
          "sum_col_xlogx", "elm", "bcubed")


def _vector(s: ContingencyStats) -> np.ndarray:
    """The sums the four formulas read, in real units (fixed-point sums divided by ``ONE``)."""
    return np.array([s.n, s.sum_cell_sq, s.sum_row_sq, s.sum_col_sq, s.sum_cell_xlogx / ONE,
                     s.sum_row_xlogx / ONE, s.sum_col_xlogx / ONE, s.f_sums["elm", 1.0] / ONE,
                     s.f_sums["bcubed", 1.0] / ONE], dtype=np.float64)


def _formula(name: str, x):
    """The metric from the sums ``x`` (complex-safe): the definitions of metrics.md."""
    n, cell, row, col, cx, rx, px, elm, bcubed = x
    if name == "ELM":
        return elm / n
    if name == "BCubed":
        return bcubed / n
    if name == "AdjustedRand":
        tp, pp, tt, total = (cell - n) / 2, (col - n) / 2, (row - n) / 2, n * (n - 1) / 2
        fp, fn = pp - tp, tt - tp
        tn = total - pp - tt + tp
        return 2 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))
    nlogn = n * cmath.log(n)
    ht, hp = (nlogn - rx) / n, (nlogn - px) / n
    mi = (nlogn + cx - rx - px) / n
    return mi / ((ht + hp) / 2)


def _value_rtol(name: str, x) -> float:
    """The relative gap allowed between the library's value of a metric (``metric.value``: exact
    integer sums, one correctly rounded ``int / int`` at the end; its native twin the same bits)
    and :func:`_formula` at the float sums ``x`` (:func:`_vector`), from these sums.

    ELM, BCubed: ``F / (N·ONE)`` rounded once against ``(F / ONE) / N`` rounded twice: ``3ε``.
    ARI: ``TP``, ``TN``, ``FP``, ``FN`` are integers and every product is below ``C2(N)² < 2⁵³``
    (asserted), so the float formula is exact up to its last division, correctly rounded as the
    library's: ``2ε``. NMI: each path's ``MI·N = N log N + Σ n log n − Σ a log a − Σ b log b`` is
    off by ``≤ 4ε`` of the sum of its terms' magnitudes (``log`` within an ulp, ``2ε``, the product
    ``ε``, the reading of a fixed-point sum or the test's additions ``ε``), so the two by ``8ε``
    of it; likewise ``(H(T) + H(P))·N`` with ``2N log N + Σ a log a + Σ b log b``; the divisions
    add ``2ε`` each side. The cancellations (sum of magnitudes over the result) are the data's,
    computed here."""
    eps = 2.0**-53
    n, cell, row, col, cx, rx, px, elm, bcubed = (float(v) for v in x)
    if name in ("ELM", "BCubed"):
        return 3 * eps
    if name == "AdjustedRand":
        assert (n * (n - 1) / 2) ** 2 < 2.0**53
        return 2 * eps
    nlogn = n * np.log(n)
    mi, h = nlogn + cx - rx - px, 2 * nlogn - rx - px
    return 8 * eps * ((nlogn + cx + rx + px) / abs(mi) + (2 * nlogn + rx + px) / abs(h)) + 6 * eps


def _scores(name: str, at: np.ndarray, units: np.ndarray) -> np.ndarray:
    """Complex-step directional derivatives of the metric at ``at`` along each unit's sums."""
    eps = 1e-30
    return np.array([_formula(name, at + 1j * eps * u).imag / eps for u in units])


def _documents(rng, n_units, lo, hi):
    """Per-unit cells ``{(true, pred): count}``: a truth of a few clusters, a noisy system."""
    cells = []
    for _ in range(n_units):
        m = int(rng.integers(lo, hi))
        k = int(rng.integers(2, 8))
        t = rng.integers(0, k, m)
        p = np.where(rng.random(m) < 0.75, t, rng.integers(0, k + 1, m))
        d: dict = {}
        for a, b in zip(t.tolist(), p.tolist()):
            d[a, b] = d.get((a, b), 0) + 1
        cells.append(d)
    return cells


def _unit_vectors(cells) -> np.ndarray:
    return np.array([_vector(ContingencyStats.from_cells([(a, b, c) for (a, b), c in d.items()]))
                     for d in cells])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scores_equal_complex_step_directional_derivatives(seed):
    rng = np.random.default_rng(seed)
    cells = _documents(rng, 12, 80, 200)  # N >= 960 elements: the tolerance's premise
    metrics = _metrics(METRICS)
    us = unit_stats(cells, metrics)
    total = us.totals
    grad = gradients(us, metrics, [total])[:, 0, :]  # (metrics, fields)
    z = grad @ unit_fields(us).T
    at = _vector(us.stats(total))
    vecs = _unit_vectors(cells)
    for k, name in enumerate(METRICS):
        want = _scores(name, at, vecs)
        np.testing.assert_allclose(z[k], want, rtol=0, atol=1e-4 * np.abs(want).max())


def test_fields_read_are_those_of_the_formula():
    metrics = _metrics(METRICS)
    us = unit_stats(_documents(np.random.default_rng(3), 4, 20, 40), metrics)
    names = [[us.fields[i] for i in read_fields(us, m, us.totals)] for m in metrics]
    assert names[0] == ["n", ("f", ("elm", 1.0))]
    assert names[1] == ["n", ("f", ("bcubed", 1.0))]
    assert names[2] == ["n", "sum_cell_sq", "sum_row_sq", "sum_col_sq"]
    assert set(names[3]) == {"n", "k_true", "k_pred", "sum_cell_xlogx", "sum_row_xlogx", "sum_col_xlogx"}


def test_standard_errors_are_the_weighted_spread_of_the_scores_at_each_resample():
    rng = np.random.default_rng(4)
    cells_a = _documents(rng, 10, 100, 200)
    cells_b = _documents(rng, 10, 100, 200)
    metrics = _metrics(METRICS)
    ua, ub = unit_stats(cells_a, metrics), unit_stats(cells_b, metrics)
    m = bootstrap_multiplicities(10, 6, rng)
    ra, rb = ua.combine(m), ub.combine(m)
    (se_a, se_b), (se_d,) = standard_errors([ua, ub], metrics, m, [ra, rb], [(0, 1)])
    va, vb = _unit_vectors(cells_a), _unit_vectors(cells_b)
    for r in range(len(m)):
        at_a, at_b = _vector(ua.stats(ra[r])), _vector(ub.stats(rb[r]))
        w = m[r].astype(np.float64)
        for k, name in enumerate(METRICS):
            za, zb = _scores(name, at_a, va), _scores(name, at_b, vb)
            for z, got in ((za, se_a), (zb, se_b), (za - zb, se_d)):
                mean = (w * z).sum() / w.sum()
                want = np.sqrt((w * (z - mean) ** 2).sum())
                # the scores' own error (1e-4 of the largest, above) bounds the spread's
                assert abs(got[k, r] - want) <= 2e-4 * np.abs(z).max() * np.sqrt(w.sum()), (name, r)


def _tagged_cells(cells, counts) -> list:
    """The cells of the table of ``counts[u]`` disjoint copies of every unit ``u``."""
    out = []
    for u, k in enumerate(counts):
        for c in range(int(k)):
            out += [((u, c, a), (u, c, b), n) for (a, b), n in cells[u].items()]
    return out


@pytest.mark.parametrize("interval", [  # a second each: one in the quick loop, all in the README's command
    pytest.param("studentized", marks=pytest.mark.slow), "hybrid",
    pytest.param("subsampled", marks=pytest.mark.slow)])
def test_compare_studentized_and_hybrid_intervals_equal_a_brute_force_bootstrap_t(interval, monkeypatch):
    # subsampled: m = round(2 √15) = 8 of the 15 units (the default scale, 7, draws every unit up
    # to 49 units: the hybrid interval)
    monkeypatch.setattr(intervals_module, "SUBSAMPLE_SCALE", 2)
    rng = np.random.default_rng(5)
    cells = _documents(rng, 15, 60, 120)
    y_true, y_pred, units = [], [], []
    for u, d in enumerate(cells):
        for (a, b), n in d.items():
            y_true += [f"{u}:{a}"] * n
            y_pred += [f"{u}:{b}"] * n
            units += [u] * n
    B, seed, conf = 300, 11, 0.9
    r = compare(y_true, {"A": y_pred}, units=units, metrics=METRICS, n_resamples=B, seed=seed,
                interval=interval, confidence=conf)
    assert r.settings["interval_method"] == r.settings["interval_applied"] == interval
    # the documented resampling: numpy's default_rng(seed), units drawn uniformly with replacement,
    # then (subsampled) the m-out-of-U subsamples from the same generator
    order = sorted(set(units))  # units in order of first appearance = 0..14 here
    gen = np.random.default_rng(seed)
    m = bootstrap_multiplicities(len(order), B, gen)
    assert subsample_size(15) == 8
    m_sub = bootstrap_multiplicities(len(order), B, gen, draws=8)
    assert r.settings["subsample_units"] == (8 if interval == "subsampled" else None)
    vecs = _unit_vectors(cells)
    observed = _vector(ContingencyStats.from_cells(_tagged_cells(cells, np.ones(15))))

    def brute(name, mult):
        values, ses = [], []
        for row in mult:
            s = _vector(ContingencyStats.from_cells(_tagged_cells(cells, row)))
            z = _scores(name, s, vecs)
            mean = (row * z).sum() / row.sum()
            values.append(_formula(name, s).real)
            ses.append(np.sqrt((row * (z - mean) ** 2).sum()))
        return np.array(values), np.array(ses)

    for name in METRICS:
        theta = _formula(name, observed).real
        se0 = np.sqrt(((z := _scores(name, observed, vecs)) - z.mean()) @ (z - z.mean()))
        values, ses = brute(name, m)
        # the bootstrap-t pivot centred at the observed value (studentized) or at the resamples'
        # mean (hybrid, whose interval is then widened to hold the percentile interval too;
        # subsampled: and to hold the subsamples' mean-centred bootstrap-t)
        centre = theta if interval == "studentized" else values.mean()
        lo_t, hi_t = np.quantile((values - centre) / ses, [(1 - conf) / 2, (1 + conf) / 2])
        want = (theta - hi_t * se0, theta - lo_t * se0)
        if interval != "studentized":
            p_lo, p_hi = np.quantile(values, [(1 - conf) / 2, (1 + conf) / 2])
            want = (min(want[0], p_lo), max(want[1], p_hi))
        if interval == "subsampled":
            v_sub, se_sub = brute(name, m_sub)
            ok = se_sub > 0  # a subsample of one distinct unit has no spread: no t
            t_sub = (v_sub[ok] - v_sub.mean()) / se_sub[ok]
            lo_t, hi_t = np.quantile(t_sub, [(1 - conf) / 2, (1 + conf) / 2])
            want = (min(want[0], theta - hi_t * se0), max(want[1], theta - lo_t * se0))
        want = (want[0], min(want[1], 1.0))
        v, lo, hi = r.values["A"][name]
        assert v == pytest.approx(theta, rel=_value_rtol(name, observed), abs=0)
        # the scores' relative error (<= 1e-4, above) moves t and se by as much: ends within
        # 3e-4 of the interval's half-width
        np.testing.assert_allclose((lo, hi), want, rtol=0, atol=3e-4 * (want[1] - want[0]))


def test_studentized_interval_quantiles_of_t():
    values = np.array([0.2, 0.4, 0.5, 0.7, np.nan])
    se = np.array([0.1, 0.2, 0.0, 0.1, 0.1])  # a resample without spread has no t: left out
    t = np.array([(0.2 - 0.5) / 0.1, (0.4 - 0.5) / 0.2, (0.7 - 0.5) / 0.1])
    lo_t, hi_t = np.quantile(t, [0.1, 0.9])
    assert studentized_interval(values, 0.5, se, 0.05, 0.8) == pytest.approx(
        (0.5 - hi_t * 0.05, 0.5 - lo_t * 0.05), abs=1e-15)
    assert studentized_interval(values, 0.5, se, 0.0, 0.8) == (0.5, 0.5)
    lo, hi = studentized_interval(values, float("nan"), se, 0.1, 0.8)
    assert lo != lo and hi != hi


def test_hybrid_interval_is_the_union_of_the_percentile_and_the_mean_centred_bootstrap_t():
    values = np.array([0.2, 0.4, 0.5, 0.9, np.nan])
    se = np.array([0.1, 0.2, 0.0, 0.1, 0.1])  # a resample without spread has no t: left out
    centre = 0.5  # the mean of the four valid values (NaN left out), the zero-se one included
    t = np.array([(0.2 - centre) / 0.1, (0.4 - centre) / 0.2, (0.9 - centre) / 0.1])
    lo_t, hi_t = np.quantile(t, [0.1, 0.9])
    s_lo, s_hi = 0.45 - hi_t * 0.05, 0.45 - lo_t * 0.05
    p_lo, p_hi = np.quantile([0.2, 0.4, 0.5, 0.9], [0.1, 0.9])
    assert hybrid_interval(values, 0.45, se, 0.05, 0.8) == pytest.approx(
        (min(s_lo, p_lo), max(s_hi, p_hi)), abs=1e-15)
    # without a usable standard error, the percentile interval alone; without a value, NaN
    assert hybrid_interval(values, 0.45, np.zeros(5), 0.05, 0.8) == pytest.approx((p_lo, p_hi))
    lo, hi = hybrid_interval(np.full(3, np.nan), 0.45, se[:3], 0.05, 0.8)
    assert lo != lo and hi != hi


def test_subsampled_interval_joins_the_hybrid_and_the_subsamples_mean_centred_bootstrap_t():
    values = np.array([0.2, 0.4, 0.5, 0.9, np.nan])
    se = np.array([0.1, 0.2, 0.0, 0.1, 0.1])
    hyb = hybrid_interval(values, 0.45, se, 0.05, 0.8)
    assert hyb == pytest.approx((0.26, 0.78), abs=1e-15)  # the percentile interval's ends here
    # subsamples: mean 0.3 (NaN left out), t = -10, -5, 15 (the zero-se one has no t), whose 10%
    # and 90% quantiles are -9 and 11
    sub = np.array([0.1, 0.2, 0.3, 0.6, np.nan])
    sub_se = np.array([0.02, 0.02, 0.0, 0.02, 0.1])
    assert np.quantile([-10.0, -5.0, 15.0], [0.1, 0.9]) == pytest.approx((-9.0, 11.0))
    got = subsampled_interval(values, 0.45, se, 0.05, 0.8, sub, sub_se)
    assert got == pytest.approx((0.45 - 11 * 0.05, 0.45 + 9 * 0.05), abs=1e-15)  # (-0.1, 0.9)
    # a narrower subsamples' interval leaves the hybrid one as it is
    assert subsampled_interval(values, 0.45, se, 0.05, 0.8, sub, sub_se * 10) == hyb
    # subsamples without a value or a spread: the hybrid interval
    assert subsampled_interval(values, 0.45, se, 0.05, 0.8, np.full(3, np.nan), sub_se[:3]) == hyb
    assert subsampled_interval(values, 0.45, se, 0.05, 0.8, sub, np.zeros(5)) == hyb


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=12), st.lists(st.floats(0.01, 1), min_size=2,
       max_size=12), st.lists(st.floats(-1, 1), min_size=2, max_size=12),
       st.floats(-1, 1), st.floats(0.01, 1), st.floats(0.5, 0.99))
def test_subsampled_interval_holds_the_hybrid_one_and_is_shift_equivariant(vals, ses, subs, obs, se0,
                                                                              conf):
    k = min(len(vals), len(ses), len(subs))
    v, s, sub = np.array(vals[:k]), np.array(ses[:k]), np.array(subs[:k])
    lo, hi = subsampled_interval(v, obs, s, se0, conf, sub, s)
    h_lo, h_hi = hybrid_interval(v, obs, s, se0, conf)
    assert lo <= h_lo and hi >= h_hi
    # moving every value (observed, resampled, subsampled) by c moves the interval by c: the
    # pivots are differences of values. Their rounding: the shifted inputs (|v + c| <= 1.25) by
    # 1.25ε each, the means of k values by (k + 1)·1.25ε, the differences by 2ε, in either path:
    # the pivots differ by <= 2.5(k + 4)ε, the t by that over the smallest se, the quantiles
    # (1-Lipschitz) as much, times se0; the ends' shift, product and subtraction add 4ε of
    # |obs| + c + max|t|·se0 (|t| <= 2 / min se), and the percentile ends 4ε of 1.25
    c = 0.25
    eps, t_max = 2.0**-53, 2 / s.min()
    tol = se0 * 2.5 * (k + 4) * eps / s.min() + 4 * eps * (abs(obs) + c + t_max * se0 + 1.25)
    lo2, hi2 = subsampled_interval(v + c, obs + c, s, se0, conf, sub + c, s)
    assert (lo2, hi2) == pytest.approx((lo + c, hi + c), abs=tol)


def test_bootstrap_multiplicities_draws_m_units_from_the_same_stream():
    m = bootstrap_multiplicities(10, 4, np.random.default_rng(1), draws=3)
    idx = np.random.default_rng(1).integers(0, 10, size=(4, 3), dtype=np.int32)
    want = np.array([np.bincount(row, minlength=10) for row in idx])
    assert (m == want).all() and (m.sum(axis=1) == 3).all()
    # without draws, U units per resample as before
    assert (bootstrap_multiplicities(10, 4, np.random.default_rng(1)).sum(axis=1) == 10).all()
    assert [subsample_size(u) for u in (1, 49, 50, 100, 300, 1000, 10_000)] == [1, 49, 49, 70, 121,
                                                                                 221, 700]
    # another scale (the calibration script's neighbours of 7): every unit until c √U < U
    assert [subsample_size(u, 10) for u in (50, 100, 300, 1000)] == [50, 100, 173, 316]


def test_adaptive_interval_subsamples_every_metric_past_49_units():
    rng = np.random.default_rng(4)
    cells = _documents(rng, 140, 2, 6) + [{(0, 0): 400, (0, 1): 60, (1, 1): 40}]  # one giant unit
    y_true = [f"{u}:{a}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    y_pred = [f"{u}:{b}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    units = [u for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    kw = {"units": units, "n_resamples": 200, "seed": 3, "method": "paired_bootstrap"}
    r = compare(y_true, {"A": y_pred, "B": y_true}, metrics=METRICS, **kw)
    assert r.settings["interval_applied"] == "subsampled" == adaptive_choice(
        r.settings["largest_unit_pairs_share"], 141)
    assert r.settings["subsample_units"] == subsample_size(141) == 83
    assert r.settings["interval"].startswith("adaptive: subsampled, since one unit holds more than 15%")
    assert "95% subsampled intervals" in str(r)
    hyb = compare(y_true, {"A": y_pred, "B": y_true}, metrics=METRICS, interval="hybrid", **kw)
    sub = compare(y_true, {"A": y_pred, "B": y_true}, metrics=METRICS, interval="subsampled", **kw)
    # every metric's interval, and every difference's, is the subsampled one of the same seed
    assert r.values == sub.values and r.differences == sub.differences
    for name in r.values["A"]:
        # the subsamples are drawn after the U-unit resamples: the subsampled interval holds the
        # hybrid one of the same seed
        (_, lo, hi), (_, h_lo, h_hi) = sub.values["A"][name], hyb.values["A"][name]
        assert lo <= h_lo and hi >= h_hi
        d, h = sub.differences["A", "B"][name], hyb.differences["A", "B"][name]
        assert d.low <= h.low and d.high >= h.high and d.p_value == h.p_value


def test_adaptive_interval_is_hybrid_where_one_unit_dominates_up_to_49_units():
    rng = np.random.default_rng(9)
    light = _documents(rng, 40, 5, 12)  # 40 units of similar size: none holds 15% of the pairs
    heavy = light[:-1] + [{(0, 0): 300, (0, 1): 40, (1, 1): 30}]  # one giant unit
    for cells, want in ((light, "studentized"), (heavy, "hybrid")):
        y_true = [f"{u}:{a}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
        y_pred = [f"{u}:{b}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
        units = [u for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
        kw = {"units": units, "n_resamples": 100, "seed": 3}
        r = compare(y_true, {"A": y_pred, "B": y_true}, **kw)
        assert r.settings["interval_method"] == "adaptive"
        assert r.settings["interval_applied"] == want == adaptive_choice(
            r.settings["largest_unit_pairs_share"], 40)  # m = U at 40 units: hybrid, not subsampled
        assert r.settings["subsample_units"] is None
        assert r.settings["interval"].startswith(f"adaptive: {want}")
        assert f"95% {want} intervals" in str(r)
        same = compare(y_true, {"A": y_pred, "B": y_true}, interval=want, **kw)
        assert r.values == same.values and r.differences == same.differences


def test_one_unit_gives_a_point_and_the_interval_stays_within_the_metric_range():
    r = compare([0, 0, 1, 1], {"A": [0, 0, 1, 2]}, units=[0, 0, 0, 0], metrics=["ARI"],
                n_resamples=50, seed=0, interval="studentized")
    v, lo, hi = r.values["A"]["AdjustedRand"]
    assert lo == hi == v
    rng = np.random.default_rng(6)
    cells = _documents(rng, 8, 5, 12)
    y_true = [f"{u}:{a}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    y_pred = [f"{u}:{b}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    units = [u for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    r = compare(y_true, {"A": y_pred, "B": y_true}, units=units, n_resamples=200, seed=1,
                interval="studentized")
    for name, iv in r.values["B"].items():  # B is the truth: 1.0, and no spread
        assert iv == (1.0, 1.0, 1.0), name
    for name, (v, lo, hi) in r.values["A"].items():
        assert -0.5 <= lo <= v <= hi <= 1.0, name
    for name, d in r.differences["A", "B"].items():
        assert d.low <= d.delta <= d.high <= 1.5, name


def test_moments_taken_over_blocks_of_units_give_the_same_standard_errors(monkeypatch):
    import streameval.linearization as lin

    rng = np.random.default_rng(7)
    metrics = _metrics(METRICS)
    ua = unit_stats(_documents(rng, 30, 20, 60), metrics)
    ub = unit_stats(_documents(rng, 30, 20, 60), metrics)
    m = bootstrap_multiplicities(30, 20, rng)
    rows = [ua.combine(m), ub.combine(m)]
    whole = standard_errors([ua, ub], metrics, m, rows, [(0, 1)])
    monkeypatch.setattr(lin, "_CHUNK", 50)  # blocks of a few units: the sums only regroup
    blocks = standard_errors([ua, ub], metrics, m, rows, [(0, 1)])
    # the same moments summed in another grouping: each path's s2 − s1²/tot within moment_noise
    # N of the exact V (whose ratio to V, the formula's cancellation A²/V, is the data's: computed
    # here, not assumed), so the squares of the two standard errors differ by at most 3N
    own, pair = spread_noise([ua, ub], metrics, m, rows, [(0, 1)])
    for x, y, noise in zip(whole[0] + whole[1], blocks[0] + blocks[1], own + pair):
        assert_spreads_agree(x, y, noise)


def test_mean_aggregate_studentized_interval_is_the_t_interval_of_the_per_unit_mean():
    rng = np.random.default_rng(8)
    cells = _documents(rng, 12, 10, 30)
    y_true = [f"{u}:{a}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    y_pred = [f"{u}:{b}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    units = [u for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    B, seed = 200, 3
    r = compare(y_true, {"A": y_pred}, units=units, metrics=["BCubed"], n_resamples=B, seed=seed,
                aggregate="mean", interval="studentized")
    # the mean of per-unit values is linear: its standard error is the weighted spread / count
    v = np.array([_formula("BCubed", _vector(ContingencyStats.from_cells(
        [(a, b, n) for (a, b), n in d.items()]))).real for d in cells])
    m = bootstrap_multiplicities(12, B, np.random.default_rng(seed)).astype(np.float64)
    means = m @ v / 12
    se = np.sqrt((m * (v - means[:, None]) ** 2).sum(axis=1)) / 12
    se0 = np.sqrt(((v - v.mean()) ** 2).sum()) / 12
    lo_t, hi_t = np.quantile((means - v.mean()) / se, [0.025, 0.975])
    want = (v.mean() - hi_t * se0, min(v.mean() - lo_t * se0, 1.0))
    _, lo, hi = r.values["A"]["BCubed"]
    # the library's spread from the moments (mean_standard_errors: s2 − s1²/tot of the centred
    # values, within moment_noise(sqrt(s2), U, 3) of the exact V; se² = V / tot²), this one's
    # two-pass (within the same bound: U + 2 roundings of the same magnitudes); the means of
    # U = 12 values summed in another order differ by <= (U + 2)·ε·max|v|: t_end_bound
    c = v - v.mean()
    noise = moment_noise(np.sqrt(m @ (c * c)), 12, 3) / m.sum(axis=1) ** 2
    noise0 = float(moment_noise(np.sqrt(c @ c), 12, 3)) / 144
    bound = t_end_bound(means, v.mean(), se, noise, se0, noise0, 14 * 2.0**-53 * np.abs(v).max())
    np.testing.assert_allclose((lo, hi), want, rtol=0, atol=bound)


def test_streaming_bootstrap_intervals_equal_brute_force_ones_from_rebuilt_tables():
    """BootstrapEvaluator: each replica's table rebuilt from tagged copies of its units (Poisson
    multiplicities from (seed, unit, replica)), the bootstrap-t from complex-step scores, and BCa
    from the leave-one-unit-out tables."""
    from streameval import BootstrapEvaluator
    from streameval.bootstrap import jackknife_groups, poisson_multiplicities, unit_hash
    from streameval.comparison import _metrics as metric_objects
    from streameval.intervals import bca_interval

    rng = np.random.default_rng(9)
    cells = _documents(rng, 15, 60, 120)
    B, seed, conf = 120, 4, 0.9
    bs = BootstrapEvaluator(metric_objects(METRICS), n_replicas=B, seed=seed, confidence=conf)
    for u in rng.permutation(15).tolist():  # units in any order: the evaluator reads them by hash
        for (a, b), n in cells[u].items():
            bs.update(f"{u}:{a}", f"{u}:{b}", n, unit=u)
    assert bs.interval_method == "adaptive"  # the methods are asked for by name below
    m = poisson_multiplicities(range(15), B, seed)  # (units, replicas)
    vecs = _unit_vectors(cells)
    observed = _vector(ContingencyStats.from_cells(_tagged_cells(cells, np.ones(15))))
    tables = [ContingencyStats.from_cells(_tagged_cells(cells, m[:, r])) for r in range(B)]
    jack_tables = [ContingencyStats.from_cells(_tagged_cells(cells, np.arange(15) != u)) for u in range(15)]
    groups, n_groups = jackknife_groups([unit_hash(u) for u in range(15)])
    assert n_groups == 15  # every unit its own group
    for r in range(B):  # the replicas are the rebuilt tables, exactly
        assert bs.replica_stats(r) == tables[r] or not m[:, r].any()
    studentized, bca = bs.intervals("studentized"), bs.intervals("bca")
    for name in METRICS:
        theta = _formula(name, observed).real
        se0 = np.sqrt(((z := _scores(name, observed, vecs)) - z.mean()) @ (z - z.mean()))
        t = []
        for r in range(B):
            row = m[:, r]
            if (row > 0).sum() < 2:  # no unit, or copies of one: no spread, no t (left out)
                continue
            s = _vector(tables[r])
            z = _scores(name, s, vecs)
            mean = (row * z).sum() / row.sum()
            t.append((_formula(name, s).real - theta) / np.sqrt((row * (z - mean) ** 2).sum()))
        lo_t, hi_t = np.quantile(t, [(1 - conf) / 2, (1 + conf) / 2])
        want = (theta - hi_t * se0, min(theta - lo_t * se0, 1.0))
        v, lo, hi = studentized[name]
        assert v == pytest.approx(theta, rel=_value_rtol(name, observed), abs=0)
        # as for compare above: the scores' relative error (<= 1e-4) moves the ends by <= 3e-4 of
        # the interval's half-width
        np.testing.assert_allclose((lo, hi), want, rtol=0, atol=3e-4 * (want[1] - want[0]))
        # BCa: the same replica values (exact tables, the same metric code) and the jackknife
        # of the rebuilt leave-one-out tables, put in the evaluator's group order (units ranked
        # by hash, jackknife_groups) so that the acceleration's float sums run in one order:
        # bit for bit
        metric = metric_objects([name])[0]
        values = np.array([metric.value(s) if s.n else np.nan for s in tables])
        jack = np.empty(15)
        jack[groups] = [metric.value(s) for s in jack_tables]
        want = bca_interval(values, v, jack, conf)
        assert tuple(bca[name][1:]) == want
        assert bca[name].value == v


def test_a_resample_of_copies_of_one_unit_has_no_spread():
    """Copies of one unit: every score equals the mean, the standard error is 0 exactly (the
    moments' rounding residue would otherwise enter the bootstrap-t as a huge t)."""
    metrics = _metrics(METRICS)
    us = unit_stats(_documents(np.random.default_rng(10), 3, 5, 9), metrics)
    m = np.array([[2, 0, 0], [0, 0, 3], [1, 1, 0], [0, 0, 0]])
    (se,), _ = standard_errors([us], metrics, m, [us.combine(m)])
    assert (se[:, :2] == 0).all() and (se[:, 2] > 0).all() and np.isnan(se[:, 3]).all()


def test_units_with_equal_scores_have_no_spread_and_the_others_keep_theirs():
    """Units whose scores are equal though their sums differ (a true cluster split in two units,
    merged in its transpose: NMI's slopes on the row and column entropy sums are equal, so every
    unit scores the same): the spread is 0 exactly, at the observed table, at every resample and
    for the paired difference. Without the moments' rounding bound the formula left ``2**-30`` at
    the observed table and ``~10⁻⁹`` at resamples, which the bootstrap-t divided by (an unseeded
    run of ``test_compare.py`` found it: the batch and the streaming paths, adding in other
    orders, got residues of opposite signs). Every other spread is the direct two-pass one of
    the scores, within the bound's share of it: computed ``V`` within ``noise`` of the exact
    square, so ``|se − want| ≤ noise / want``, plus the direct sum's own rounding (each score
    within ``F·ε·Σ_f |g_f x_uf|``)."""
    eps = 2.0**-53
    cells = [{((0, 0), (0, 0)): 1, ((0, 0), (0, 1)): 1}, {((1, 0), (1, 0)): 1, ((1, 0), (1, 1)): 1},
             {((2, 0), (2, 0)): 1, ((2, 1), (2, 0)): 1}]
    metrics = _metrics(["NormalizedMutualInfo", "AdjustedRand", "Purity"])
    us = unit_stats(cells, metrics)
    m = np.array([[1, 1, 1], [1, 3, 1], [0, 2, 2], [2, 1, 0], [1, 0, 1]])
    (se, twice), (diff,) = standard_errors([us, us], metrics, m, [us.combine(m)] * 2, [(0, 1)])
    assert (se[0] == 0).all() and (diff == 0).all() and (twice == se).all()
    x = unit_fields(us)
    c = x - x.mean(axis=0)
    spreads = 0
    for r, row in enumerate(us.combine(m)):
        g = gradients(us, metrics, [row])[:, 0]
        w = m[r].astype(np.float64)
        for k in range(len(metrics)):
            z = x @ g[k]
            if np.ptp(z[w > 0]) == 0:  # the same scores, bit for bit
                assert se[k, r] == 0, (k, r)
                continue
            want = np.sqrt(w @ (z - (w @ z) / w.sum()) ** 2)
            f = np.count_nonzero(g[k])
            a = np.abs(g[k]) @ np.sqrt(w @ (c * c))
            noise = moment_noise(a, len(w), f * f + 2 * f)
            direct = f * eps * np.sqrt(w @ (np.abs(x) @ np.abs(g[k])) ** 2) + 4 * eps * want
            assert abs(se[k, r] - want) <= noise / want + direct, (k, r, se[k, r], want)
            spreads += se[k, r] > 0.01
    assert spreads >= 5


def test_moments_over_more_fields_or_held_once_give_the_same_standard_errors():
    # compare builds one Moments from the observed slopes for every block: extra fields (zero
    # slopes) add exact zeros, and a block with a slope elsewhere gets moments of its own
    from streameval.linearization import Moments, slope_fields

    rng = np.random.default_rng(9)
    metrics = _metrics(METRICS)
    ua = unit_stats(_documents(rng, 25, 20, 60), metrics)
    ub = unit_stats(_documents(rng, 25, 20, 60), metrics)
    m = bootstrap_multiplicities(25, 15, rng).astype(np.float64)
    rows = [ua.combine(m), ub.combine(m)]
    fields = [unit_fields(ua), unit_fields(ub)]
    grads = [gradients(us, metrics, r) for us, r in zip((ua, ub), rows)]
    want = standard_errors([ua, ub], metrics, m, rows, [(0, 1)])
    own_n, pair_n = spread_noise([ua, ub], metrics, m, rows, [(0, 1)])
    own = slope_fields(grads)
    wide = [[sorted(set(o) | {0, 1, 2}) for o in per] for per in own]  # n, cells, k_true added
    for mo in (Moments(fields, own, [(0, 1)]), Moments(fields, wide, [(0, 1)])):
        assert mo.covers(grads)
        got = mo.standard_errors(grads, m)
        # the same moments summed over other columns (BLAS blocks them by the width): each
        # path within moment_noise of the exact V, as in the test above
        for x, y, noise in zip(want[0] + want[1], got[0] + got[1], own_n + pair_n):
            assert_spreads_agree(x, y, noise)
    narrow = [[o[:1] for o in per] for per in own]
    assert not Moments(fields, narrow, [(0, 1)]).covers(grads)


def test_compare_gives_the_same_report_when_a_block_needs_moments_of_its_own(monkeypatch):
    import streameval.linearization as lin

    rng = np.random.default_rng(10)
    cells = _documents(rng, 30, 10, 30)
    y_true = [f"{u}:{a}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    y_pred = [f"{u}:{b}" for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    units = [u for u, d in enumerate(cells) for (a, b), n in d.items() for _ in range(n)]
    args = {"units": units, "metrics": METRICS, "n_resamples": 60, "seed": 4}
    # B: every third element of a unit moved to its own cluster 'x' of that unit
    b = [f"{u}:{t if i % 3 else 'x'}" for i, (u, t) in enumerate(zip(units, y_true))]
    whole = compare(y_true, {"A": y_pred, "B": b}, **args)
    monkeypatch.setattr(lin.Moments, "covers", lambda self, grads: False)
    alone = compare(y_true, {"A": y_pred, "B": b}, **args)
    assert whole.settings["interval_applied"] == "studentized"
    # the same exact tables and values; the standard errors from moments over other columns
    # (BLAS blocks the sums by the width): each path within moment_noise of the exact V, which
    # t_end_bound carries through t, the quantiles and the ends (from these inputs)
    metrics = _metrics(METRICS)
    cells_b: list = [{} for _ in cells]
    for u, t, p in zip(units, y_true, b):
        key = (t, p)  # labels tagged by unit already: the unit's cells
        cells_b[u][key] = cells_b[u].get(key, 0) + 1
    ua, ub = unit_stats(cells, metrics), unit_stats(cells_b, metrics)
    m = bootstrap_multiplicities(30, 60, np.random.default_rng(4))
    ones = np.ones((1, 30))
    rows, obs = [ua.combine(m), ub.combine(m)], [[ua.totals], [ub.totals]]
    (se_a, se_b), (se_d,) = standard_errors([ua, ub], metrics, m, rows, [(0, 1)])
    (s0_a, s0_b), (s0_d,) = standard_errors([ua, ub], metrics, ones, obs, [(0, 1)])
    (n_a, n_b), (n_d,) = spread_noise([ua, ub], metrics, m, rows, [(0, 1)])
    (n0_a, n0_b), (n0_d,) = spread_noise([ua, ub], metrics, ones, obs, [(0, 1)])
    val_a = np.array([[mt.value(ua.stats(r)) for r in rows[0]] for mt in metrics])
    val_b = np.array([[mt.value(ub.stats(r)) for r in rows[1]] for mt in metrics])
    for k, name in enumerate(METRICS):
        for sys_name, v, se, n, s0, n0 in (("A", val_a, se_a, n_a, s0_a, n0_a),
                                           ("B", val_b, se_b, n_b, s0_b, n0_b)):
            iv = whole.values[sys_name][name]
            assert iv.value == metrics[k].value((ua if sys_name == "A" else ub).stats(obs[sys_name == "B"][0]))
            bound = t_end_bound(v[k], iv.value, se[k], n[k], s0[k, 0], n0[k, 0])
            np.testing.assert_allclose(alone.values[sys_name][name][1:], iv[1:], rtol=0, atol=bound)
        d, dd = whole.differences["A", "B"][name], alone.differences["A", "B"][name]
        assert (se_d[k] > 0).sum() > 50  # the rebuilt resamples are compare's (with spread)
        bound = t_end_bound(val_a[k] - val_b[k], d.delta, se_d[k], n_d[k], s0_d[k, 0], n0_d[k, 0])
        np.testing.assert_allclose((dd.low, dd.high), (d.low, d.high), rtol=0, atol=bound)
