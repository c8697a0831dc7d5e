"""The shared formulas against brute-force oracles: a cluster's precision loss
(:func:`streameval.stats.precision_loss`: the Monitor's ranking and the error account), the one
linearization spread
(:func:`streameval.linearization.weighted_spread`: every system's, paired difference's and mean's
standard error) and the one sample variance of the drop detection
(:func:`streameval.detect.mean_variance`: the CUSUM's calibration and the blocks' interval)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.detect import BlockDrops, Cusum, mean_variance
from streameval.linearization import mean_standard_errors, weighted_spread
from streameval.stats import ONE, elm_term, precision_loss

_EPS = 2.0**-53


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-1000, 1000), st.integers(0, 5)), min_size=1, max_size=40))
def test_weighted_spread_is_the_exact_weighted_spread(zw):
    """Integer scores and weights: ``s1``, ``s2``, ``s1²`` and ``tot`` are exact in float64 (all
    below 2**53), so the only roundings are ``s1²/tot`` (relative ε = 2⁻⁵³), the subtraction
    (ε of the result) and the sqrt (ε): ``|got² − exact²| ≤ 2ε·s1²/tot + 2ε·exact² + ulps``,
    hence the bound below (a spread that is 0 exactly may come out as sqrt of that residue)."""
    z = np.array([a for a, _ in zw], dtype=np.float64)
    w = np.array([b for _, b in zw], dtype=np.float64)
    tot_i = int(w.sum())
    if tot_i == 0:
        return
    s1, s2, tot = np.array([w @ z]), np.array([w @ (z * z)]), np.array([w.sum()])
    got = float(weighted_spread(s1, s2, tot)[0])
    mean = Fraction(sum(b * a for a, b in zw), tot_i)
    exact2 = sum(b * (a - mean) ** 2 for a, b in zw)
    bound = 4 * _EPS * (float(s1[0]) ** 2 / tot_i + float(exact2)) + 1e-300
    assert abs(got * got - float(exact2)) <= bound
    assert got >= 0


def test_paired_and_mean_standard_errors_read_the_one_spread():
    """The mean's standard error is the spread of the per-unit values over ``Σ m``; the paired
    difference's moments (``Σ w z_a² + Σ w z_b² − 2 Σ w z_a z_b``) are those of ``z_a − z_b``."""
    rng = np.random.default_rng(3)
    v = rng.random((2, 30))
    m = rng.integers(0, 3, (5, 30))
    got = mean_standard_errors(v, m)
    for k in range(2):
        for b in range(5):
            w = m[b]
            tot = Fraction(int(w.sum()))
            vals = [Fraction(x) for x in v[k]]
            mean = sum(Fraction(int(a)) * x for a, x in zip(w, vals)) / tot
            want = math.sqrt(sum(Fraction(int(a)) * (x - mean) ** 2 for a, x in zip(w, vals))) / tot
            # centring by the float mean, then the one-spread roundings: a few ulps of the values
            assert abs(got[k, b] - float(want)) <= 1e-12 * max(1.0, float(want))
    za, zb = rng.integers(-50, 50, 20).astype(float), rng.integers(-50, 50, 20).astype(float)
    w = rng.integers(1, 4, 20).astype(float)
    d = za - zb
    paired = weighted_spread(np.array([w @ za - w @ zb]),
                             np.array([w @ (za * za) + w @ (zb * zb) - 2 * (w @ (za * zb))]),
                             np.array([w.sum()]))
    direct = weighted_spread(np.array([w @ d]), np.array([w @ (d * d)]), np.array([w.sum()]))
    assert paired.tolist() == direct.tolist()  # integer scores: every moment exact


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=50))
def test_mean_variance_is_the_exact_sample_variance(xs):
    """Oracle: exact rationals. The two-pass float mean is within ε·Σ|x|/n of the exact one, each
    centred square within (2|d|·that + 2ε d²), summed with n ε growth: the bound below."""
    mean, var = mean_variance(xs)
    n = len(xs)
    exact_mean = sum(map(Fraction, xs)) / n
    exact_var = sum((Fraction(x) - exact_mean) ** 2 for x in xs) / (n - 1)
    scale = max(abs(x) for x in xs)
    assert abs(mean - float(exact_mean)) <= n * _EPS * scale + 1e-300
    assert abs(var - float(exact_var)) <= 8 * n * _EPS * (scale * scale) * n / (n - 1) + 1e-300


def test_the_cusum_and_the_block_interval_read_mean_variance():
    from streameval import ELM

    values = [0.9, 0.8, 0.95, 0.7, 0.85]
    mean, var = mean_variance(values)
    cusum = Cusum(reference=5, h=4.0)
    cusum.bind(10, True)
    for v in values:
        cusum.update(v)
    assert (cusum.mu, cusum.sigma) == (mean, max(math.sqrt(var), cusum.min_scale))
    drops = BlockDrops(ELM(), block=1, detector=Cusum(reference=2, h=9.0))
    drops.values.extend(values + [float("nan")])  # a NaN block is left out
    assert drops.interval(6, 2.0) == (mean, mean - 2.0 * math.sqrt(var / 5), mean + 2.0 * math.sqrt(var / 5))
    assert drops.interval(1) is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 10**6), min_size=1, max_size=8))
def test_precision_loss_is_the_exact_loss_rounded_up(cells):
    """A cluster with these cell counts: BCubed's loss ``b − Q/b`` and ELM's ``b − (Q − b)/(b − 1)``
    (0 for a singleton), exact rationals; the fixed-point term is floored, so the loss is the
    exact one times ONE rounded up."""
    b, q = sum(cells), sum(c * c for c in cells)
    assert precision_loss(q, b) == math.ceil(ONE * (b - Fraction(q, b)))
    elm = 0 if b == 1 else math.ceil(ONE * (b - Fraction(q - b, b - 1)))
    assert precision_loss(q, b, elm_term) == elm


def test_the_ranking_and_the_account_read_precision_loss():
    from streameval import Contingency
    from streameval.breakdown import ErrorAccount
    from streameval.monitor import ClusterCostRanking

    t = Contingency()
    t.update_many(["a", "a", "b", "b", "b", "c"], ["x", "x", "x", "y", "y", "y"])
    account = ErrorAccount(t)
    for cost, term in (("bcubed", None), ("elm", elm_term)):
        want = {p: precision_loss(t.pred_cluster(p)[1], t.pred_size(p), *([term] if term else [])) / ONE
                for p in ("x", "y")}
        assert dict(ClusterCostRanking(t, cost).top()) == want
    assert {p: extra for p, _, _, extra in account.merging_clusters()} == {
        p: precision_loss(t.pred_cluster(p)[1], t.pred_size(p)) / ONE for p in ("x", "y")}


def test_pairs_share_is_exact_beyond_float_integers_in_the_scan_and_the_streaming_bootstrap():
    """Units of about 2**45 elements (one cluster each, given as weights), so about 2**90 pairs:
    compare's scan (unit_diagnostics) and the bootstrap's maintained share (its heaps) both give
    the exact ratio, correctly rounded: the rational oracle's float. (For these sizes the ratio
    of the float-rounded counts is one ulp off.)"""
    from streameval import ELM, BootstrapEvaluator
    from streameval.units import pairs_share, unit_diagnostics

    sizes = {"a": 28246803929342, "b": 20831573911857, "c": 3633307271842}
    bs = BootstrapEvaluator([ELM()], n_replicas=4)
    for u, size in sizes.items():
        bs.update(("t", u), ("p", u), size, unit=u)
    twice = {u: s * s - s for u, s in sizes.items()}
    want = float(Fraction(max(twice.values()), sum(twice.values())))
    assert bs.pairs_share() == want
    assert unit_diagnostics([bs._live()[0]])["pairs_share"] == want
    assert pairs_share(0, 0) == 0.0
