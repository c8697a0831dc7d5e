"""Rounding bounds for tests that compare two float paths to the same linearization standard
errors (moments summed in another order or blocking, over other columns, units in another
order): the bound of :func:`streameval.linearization.moment_noise` on each path's ``s2 − s1²/tot``,
from which follow bounds on the standard errors and on the bootstrap-t interval ends that
divide by them. Each bound is computed from the test's own inputs at run time: the cancellation
of the moment formula (``A² / V``) is a property of the data, not a constant."""

from __future__ import annotations

import numpy as np

from streameval.linearization import gradients, moment_noise, unit_fields

EPS = 2.0**-53


def moment_scale(us, metrics, m: np.ndarray, rows) -> np.ndarray:
    """``(metrics, B)``: ``A = Σ_f |g_f| sqrt(Σ_u w_u c_uf²)`` (slopes ``g_f`` at each resample's
    sums, centred unit columns ``c_uf``), the scale of :func:`moment_noise`."""
    x = unit_fields(us)
    c = x - x.mean(axis=0)
    root = np.sqrt(np.asarray(m, dtype=np.float64) @ (c * c))  # (B, fields)
    g = gradients(us, metrics, rows)  # (metrics, B, fields)
    return (np.abs(g) * root[None]).sum(axis=2)


def spread_noise(systems: list, metrics, m: np.ndarray, rows: list, pairs=()) -> tuple[list, list]:
    """``([N of each system], [N of each pair])``, each ``(metrics, B)``: the bound on the rounding
    of ``V = s2 − s1²/tot`` that either path makes (:func:`moment_noise`), with the terms of the
    forms counted over every field (``F(F+1)/2 + 2F`` per system, ``F²`` more for a pair's cross
    form): at least the library's count, which takes only the fields with a slope."""
    f = len(systems[0].fields)
    terms = f * (f + 1) // 2 + 2 * f
    u = systems[0].n_units
    scales = [moment_scale(us, metrics, m, r) for us, r in zip(systems, rows)]
    own = [moment_noise(a, u, terms) for a in scales]
    pair = [moment_noise(scales[a] + scales[b], u, 2 * terms + f * f + 4) for a, b in pairs]
    return own, pair


def assert_spreads_agree(x: np.ndarray, y: np.ndarray, noise: np.ndarray) -> None:
    """Two paths' standard errors ``x``, ``y`` of one exact ``V``: each computed ``V`` is within
    ``N`` of it, and each path zeroes its ``V`` at or below ``N`` (:func:`weighted_spread`), so
    the squares differ by ``≤ 3N`` (``2N`` when both are kept; ``V_y ≤ V + N ≤ V_x + 2N ≤ 3N``
    when one is zeroed), plus the square root's and the test's squaring's rounding
    (``≤ 2ε`` relative each)."""
    x, y = np.asarray(x), np.asarray(y)
    gap = np.abs(x * x - y * y)
    bound = 3 * noise + 4 * EPS * (x * x + y * y)
    ok = gap <= bound
    assert (ok | (np.isnan(x) & np.isnan(y))).all(), (gap[~ok], bound[~ok])


def t_end_bound(values: np.ndarray, theta: float, se: np.ndarray, noise: np.ndarray,
                se0: float, noise0: float, value_error: float = 0.0, other=None) -> float:
    """A bound on how far a bootstrap-t interval end ``θ̂ − q·se0`` (``q`` a quantile of
    ``t_r = (v_r − c)/se_r``, ``c`` the observed value or the mean of the values) moves between
    two paths whose standard errors differ only by the rounding of their moments (the values are
    the same exact tables' metric, equal bit for bit).

    Where both paths keep ``V_r`` (premise, asserted: each spread is 0 in both -- one distinct
    unit -- or ``V_r > 4N_r``), ``|V_x − V_y| ≤ 2N_r`` and the standard errors differ by
    ``2N_r / (se_x + se_y) ≤ 1.16·(N_r/V_r)·se_r`` (``N_r/V_r ≤ 1/4``): a relative ``δ_r = 2N_r/V_r``,
    which moves ``t_r`` by ``≤ |t_r|·δ_r``. A linearly interpolated quantile is 1-Lipschitz in
    the largest change of its inputs (so are the hybrid's union with the percentile ends, and
    the clip at 1), so ``q`` moves by ``≤ max_r |t_r| δ_r``, and ``q·se0`` by that times ``se0``
    plus ``|q|·se0·δ_0``; the end's last subtraction and product add ``4ε`` of ``|θ̂| + |q| se0``.
    Where the two paths' values (and ``θ̂``) may differ too, by ``≤ value_error`` each (a mean
    summed in another order), ``t_r`` moves by ``2·value_error / se_r`` more and the end by
    ``value_error`` more.

    A spread within ``4N`` of its rounding (``V ≤ 4N``: a spread 0 in exact arithmetic, or
    nearly) has no such bound: one path may keep what the other zeroes. ``other = (se, se0)`` of
    the other path then must hold the same standard error there, bit for bit (both zeroed, or
    both equal), so that its ``t`` is the same or left out in both; without ``other`` there must
    be none."""
    v2 = se * se
    ok = (se > 0) & np.isfinite(values)
    low = np.isfinite(values) & (v2 <= 4 * noise)
    low0 = se0 * se0 <= 4 * noise0
    if low.any() or low0:
        assert other is not None, "premise: every kept spread far above its rounding"
        assert (se[low] == other[0][low]).all() and (not low0 or se0 == other[1]), \
            "a spread near its rounding that the two paths do not treat alike"
    live = ok & ~low
    centre = np.nanmean(values)
    t_all = (np.abs(values[ok] - theta) + np.abs(values[ok] - centre)) / se[ok]  # ≥ |t_r|, either centre
    t = (np.abs(values[live] - theta) + np.abs(values[live] - centre)) / se[live]
    dt = t * 2 * noise[live] / v2[live] + 2 * value_error / se[live]  # ≥ |Δt_r|
    d0 = 0.0 if low0 else 2 * noise0 / se0**2
    t_max = t_all.max() if t_all.size else 0.0
    move = se0 * (dt.max() if t.size else 0.0) + t_max * se0 * d0
    return float(move + value_error + 4 * EPS * (abs(theta) + t_max * se0))
