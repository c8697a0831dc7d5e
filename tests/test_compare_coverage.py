"""Coverage, calibration and power of unit resampling, on synthetic data from a known process.

The generating process: a fixed *population* of documents (units). A document has ``4 + Poisson(4)``
elements in ``1 .. size/2 + 1`` true clusters (uniform labels); a system keeps an element's true
label with probability ``1 - noise`` and otherwise draws one of ``k + 1`` labels (so it both merges
and splits). A sample is ``n`` documents drawn with replacement from the population.

The *population value* is the metric at the expected statistics of an ``n``-document sample,
``n/P · Σ_population S_u``: for ELM and BCubed (ratios of sums) this is exactly the value on the
union of all ``P`` population documents; ARI (through the ``C2(N)`` pairs) and NMI (through
``log N``) depend on the number of documents pooled, so their target is taken at the sample's scale.

Sizes (stated in docs/compare.md): ``P = 5000`` documents, samples of ``n = 250`` documents,
``B = 400`` resamples, 1,000 seeded repetitions; the percentile interval of the multinomial
bootstrap and of the Poisson bootstrap (the :class:`~streameval.BootstrapEvaluator`'s
resamples, whose replicas equal these bit for bit: test_compare.py) must cover the population
value in 93–97% of the repetitions. The runs are vectorised through the library's own unit-stat
combination (:class:`~streameval.comparison.UnitStats`).
"""

from __future__ import annotations

import numpy as np
import pytest

from streameval.bootstrap import percentile_interval, poisson_multiplicities
from streameval.comparison import (
    _metrics,
    _randomized_deltas,
    _values,
    bootstrap_multiplicities,
    unit_stats,
)
from streameval.intervals import p_value as _p_two_sided

# calibration simulations (1,000 seeded repetitions each): minutes, in .ci/run's soak step
pytestmark = [pytest.mark.slow, pytest.mark.soak]

METRICS = ["ELM", "BCubed", "AdjustedRand", "NormalizedMutualInfo"]


def _documents(rng, n_docs, noises):
    """``[[cells of system s] for each document]`` for one truth per document and each noise."""
    out = []
    for _ in range(n_docs):
        m = 4 + rng.poisson(4)
        k = int(rng.integers(1, m // 2 + 2))
        t = rng.integers(0, k, m)
        systems = []
        for noise in noises:
            p = t.copy()
            flip = rng.random(m) < noise
            p[flip] = rng.integers(0, k + 1, int(flip.sum()))
            d: dict = {}
            for a, b in zip(t.tolist(), p.tolist()):
                d[a, b] = d.get((a, b), 0) + 1
            systems.append(d)
        out.append(systems)
    return out


def _target(us, metrics, n):
    s = us.stats([float(x) * n / us.n_units for x in us.totals])
    return np.array([m.value(s) for m in metrics])


def test_percentile_intervals_cover_the_population_value():
    P, n, B, reps = 5000, 250, 400, 1000
    metrics = _metrics(METRICS)
    rng = np.random.default_rng(2024)
    pop = unit_stats([d[0] for d in _documents(rng, P, [0.2])], metrics)
    theta = _target(pop, metrics, n)
    cover = np.zeros((2, len(metrics)))
    for rep in range(reps):
        sample = pop.subset(rng.integers(0, P, n))
        plans = (
            bootstrap_multiplicities(n, B, rng),
            np.ascontiguousarray(poisson_multiplicities(range(n), B, seed=rep).T),
        )
        for j, m in enumerate(plans):
            values = _values(sample, metrics, m, "pooled")
            for k in range(len(metrics)):
                lo, hi = percentile_interval(values[k], 0.95)
                cover[j, k] += lo <= theta[k] <= hi
    cover /= reps
    print("coverage (multinomial, poisson) x (ELM, BCubed, ARI, NMI):", cover.tolist())
    assert ((cover >= 0.93) & (cover <= 0.97)).all(), cover


def _pair_trial(rng, pop_a, pop_b, n, B, metrics):
    """One sample of ``n`` documents: (paired bootstrap p, randomization p) per metric."""
    idx = rng.integers(0, pop_a.n_units, n)
    sa, sb = pop_a.subset(idx), pop_b.subset(idx)
    m = bootstrap_multiplicities(n, B, rng)
    va, vb = _values(sa, metrics, m, "pooled"), _values(sb, metrics, m, "pooled")
    ta, tb = sa.total(), sb.total()
    obs = np.array([mt.value(ta) - mt.value(tb) for mt in metrics])
    swaps = (rng.random((B, n)) < 0.5).astype(np.int64)
    rand = _randomized_deltas(sa, sb, metrics, swaps, "pooled")
    boot = [_p_two_sided(va[k] - vb[k] - obs[k], obs[k]) for k in range(len(metrics))]
    perm = [_p_two_sided(rand[k], obs[k]) for k in range(len(metrics))]
    return boot, perm


def _rejection_rates(noise_b, reps, n, B, seed):
    metrics = _metrics(METRICS)
    rng = np.random.default_rng(seed)
    docs = _documents(rng, 4000, [0.2, noise_b])
    pop_a = unit_stats([d[0] for d in docs], metrics)
    pop_b = unit_stats([d[1] for d in docs], metrics)
    rejected = np.zeros((2, len(metrics)))
    for _ in range(reps):
        boot, perm = _pair_trial(rng, pop_a, pop_b, n, B, metrics)
        rejected[0] += np.array(boot) < 0.05
        rejected[1] += np.array(perm) < 0.05
    return rejected / reps


def test_same_distribution_gives_p_below_005_in_3_to_7_percent():
    rates = _rejection_rates(0.2, reps=1000, n=100, B=300, seed=7)
    print("false positive rate (paired bootstrap, randomization) x metrics:", rates.tolist())
    assert ((rates >= 0.03) & (rates <= 0.07)).all(), rates


def test_known_difference_is_detected_with_the_stated_power():
    # docs/compare.md states: with 100 documents, system B at noise 0.3 against A at 0.2 is
    # detected (p < 0.05) in at least 80% of samples under ELM and BCubed, by both tests
    rates = _rejection_rates(0.3, reps=200, n=100, B=300, seed=8)
    print("power (paired bootstrap, randomization) x metrics:", rates.tolist())
    assert (rates[:, :2] >= 0.80).all(), rates
