"""Exact values of the contingency-table metrics the command-line tests read (ELM, BCubed,
AdjustedRand, NormalizedMutualInfo, Rand, Purity), and a bound on how far streameval's float may
be from each, from an error analysis of its computation: no peer's rounding, no constant.

The exact values are computed here from the labels alone (a ``Counter`` of cells): ``Fraction``
for the rational metrics, ``mpmath`` at 60 digits for the logarithms (its own error, ~10⁻⁶⁰, is
far below any bound here). streameval's computation (:mod:`streameval.stats`; the native reading
equals the Python formulas bit for bit, ``tests/test_native_values.py``), ``u = 2⁻⁵³``:

- Rand, AdjustedRand, Purity: one Python ``int / int`` of exact integers, correctly rounded:
  ``|err| ≤ u·|v|``.
- ELM, BCubed (element-averaged F): the sum over the cells of fixed-point terms, each floored to a
  multiple of ``2⁻⁶⁴`` (low by less than ``2⁻⁶⁴``), divided once by ``N·2⁶⁴`` (correctly rounded):
  ``|err| ≤ cells·2⁻⁶⁴/N + u·|v|``.
- NormalizedMutualInfo: ``H(T)``, ``H(P)`` and ``MI`` are exact integer combinations of the terms
  ``int(fl(x·fl(log x))·2⁶⁴)``: the logarithm within 2 ulp (``4u`` relative: glibc, musl and
  Apple's libm document less than 1 ulp), the product ``u``, the truncation ``< 2⁻⁶⁴``, so each
  term within ``6u·x log x + 2⁻⁶⁴``; each entropy within the sum of its terms' errors over ``N``
  plus ``u`` of its quotient; then ``(H(T) + H(P))/2`` and ``MI / that`` round once each, and the
  quotient's bound is the interval of its rounded parts.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import mpmath

U = 2.0**-53
FIX = Fraction(1, 2**64)
mpmath.mp.dps = 60


def _table(y_true, y_pred):
    cells = Counter(zip(y_true, y_pred))
    rows = Counter(y_true)
    cols = Counter(y_pred)
    return cells, rows, cols, len(y_true)


def _c2(x: int) -> int:
    return x * (x - 1) // 2


def _element_f(cells, rows, cols, n: int, elm: bool) -> Fraction:
    """``(1/N) Σ_cells n·F_e``: BCubed ``F_e = 2n/(a+b)``; ELM ``2(n-1)/((a-1)+(b-1))``, 1 if ``a = b = 1``."""
    if n == 0:
        return Fraction(1)
    total = Fraction(0)
    for (t, p), c in cells.items():
        a, b = rows[t], cols[p]
        if elm:
            d = (a - 1) + (b - 1)
            total += c if d == 0 else Fraction(2 * c * (c - 1), d)
        else:
            total += Fraction(2 * c * c, a + b)
    return total / n


def _xlogx(x: int):
    return mpmath.mpf(x) * mpmath.log(x) if x > 1 else mpmath.mpf(0)


def _nmi(cells, rows, cols, n: int):
    """``(value, bound)`` with scikit-learn's conventions (1.0 when both sides have at most one
    cluster, 0.0 when either has one or MI is 0), arithmetic mean of the entropies."""
    kt, kp = len(rows), len(cols)
    if kt == kp and kt <= 1:
        return mpmath.mpf(1), mpmath.mpf(0)
    if kt <= 1 or kp <= 1:
        return mpmath.mpf(0), mpmath.mpf(0)  # MI set to 0.0 exactly: NMI exactly 0.0
    nlogn = _xlogx(n)
    a_sum = mpmath.fsum(_xlogx(x) for x in rows.values())
    b_sum = mpmath.fsum(_xlogx(x) for x in cols.values())
    c_sum = mpmath.fsum(_xlogx(x) for x in cells.values())
    u, fix = mpmath.mpf(U), mpmath.mpf(2) ** -64

    def entropy(value_sum, magnitude_sum, terms):
        exact = value_sum / n
        err = (6 * u * magnitude_sum + terms * fix) / n  # the integer numerator's error, over N
        return exact, err + u * (abs(exact) + err)  # and the quotient's rounding

    ht, e_ht = entropy(nlogn - a_sum, nlogn + a_sum, 1 + kt)
    hp, e_hp = entropy(nlogn - b_sum, nlogn + b_sum, 1 + kp)
    mi, e_mi = entropy(nlogn + c_sum - a_sum - b_sum, nlogn + c_sum + a_sum + b_sum, 1 + len(cells) + kt + kp)
    return _quotient(mi, e_mi, ht, e_ht, hp, e_hp)


def _quotient(mi, e_mi, ht, e_ht, hp, e_hp):
    """``(MI / ((H(T) + H(P))/2), bound)`` from each part's bound: the sum and the quotient round
    once each (the halving is exact), MI is clipped at 0; the quotient's rounded parts lie in an
    interval, and so does the value."""
    u = mpmath.mpf(U)
    norm = (ht + hp) / 2
    e_norm = (e_ht + e_hp) / 2 + u * (norm + (e_ht + e_hp) / 2)
    assert norm - e_norm > 0, "premise: the entropies far above their rounding"
    value = mi / norm
    lo = max(mi - e_mi, 0) / (norm + e_norm) * (1 - u)
    hi = (mi + e_mi) / (norm - e_norm) * (1 + u)
    return value, max(value - lo, hi - value)


def gamma(m: int):
    """``γ_m = m·u/(1 - m·u)``: the relative error of a sum of ``m`` terms in any order (so in
    numpy's pairwise sums and their SIMD variants), Higham §3.1."""
    u = mpmath.mpf(U)
    return m * u / (1 - m * u)


def sklearn_nmi_bound(y_true, y_pred):
    """A bound on ``|scikit-learn's normalized_mutual_info_score - exact|`` (arithmetic mean;
    below 2**53 elements). With one cluster on either side it returns its conventions' exact
    1.0 or 0.0 (those of :func:`exact_and_bound`): bound 0.

    Its MI sums over the cells ``t = p·(log n - log N) + p·(-log(ab) + log N + log N)``, ``p = n/N``:
    five logarithms (4u each, of magnitude ``Λ = log n + log(ab) + 3 log N``; ``ab`` beyond 2**53
    rounds to a float first, ``u`` more), three additions (``u·Λ`` each), the quotient and the two
    products (``u`` of ``p·Λ`` each): within ``p·(12u·Λ + 2u)`` (second order included); a term
    that comes out below ``2⁻⁵²`` is set to 0 (its whole value more); the sum over the cells adds
    ``γ_cells`` of the sum of magnitudes. Each entropy sums ``-p·(log a - log N)``: two logs, a
    subtraction, a quotient, a product: within ``7u·p·(log a + log N)``, plus ``γ_k`` of the sum.
    """
    cells, rows, cols, n = _table(list(y_true), list(y_pred))
    assert n < 2**53
    if len(rows) <= 1 or len(cols) <= 1:
        return mpmath.mpf(0)
    u, eps, N = mpmath.mpf(U), mpmath.mpf(2) ** -52, mpmath.mpf(n)
    log_n = mpmath.log(N)
    mi = e_terms = mags = mpmath.mpf(0)
    for (t, q), c in cells.items():
        a, b = rows[t], cols[q]
        pr = c / N
        term = pr * mpmath.log(c * N / (a * b))
        lam = mpmath.log(c) + mpmath.log(a * b) + 3 * log_n
        err = pr * (12 * u * lam + 2 * u)
        if abs(term) < eps + err:
            err += abs(term) + err  # zeroed: the computed term, at most |term| + err, is lost
        mi += term
        e_terms += err
        mags += abs(term) + err
    e_mi = e_terms + gamma(len(cells)) * mags

    def entropy(sizes):
        terms = [x / N * (log_n - mpmath.log(x)) for x in sizes]
        err = mpmath.fsum(7 * u * x / N * (mpmath.log(x) + log_n) for x in sizes)
        return mpmath.fsum(terms), err + gamma(len(sizes)) * (mpmath.fsum(terms) + err)

    ht, e_ht = entropy(rows.values())
    hp, e_hp = entropy(cols.values())
    return _quotient(mi, e_mi, ht, e_ht, hp, e_hp)[1]


def exact_and_bound(y_true, y_pred) -> dict:
    """``{name: (exact value as mpf, bound on |streameval's float - exact|)}`` for the six metrics."""
    cells, rows, cols, n = _table(list(y_true), list(y_pred))
    u = mpmath.mpf(U)
    out = {}

    def rational(name, v: Fraction, extra=Fraction(0)):
        x = mpmath.mpf(v.numerator) / v.denominator
        out[name] = (x, mpmath.mpf(extra.numerator) / extra.denominator + u * abs(x))

    fixed = FIX * len(cells) / n if n else Fraction(0)
    rational("ELM", _element_f(cells, rows, cols, n, True), fixed)
    rational("BCubed", _element_f(cells, rows, cols, n, False), fixed)
    tp = sum(_c2(c) for c in cells.values())
    pp = sum(_c2(c) for c in cols.values())
    tt = sum(_c2(c) for c in rows.values())
    total = _c2(n)
    agree = total - pp - tt + 2 * tp
    rational("Rand", Fraction(1) if agree == total else Fraction(agree, total))
    fp, fn = pp - tp, tt - tp
    tn = total - tp - fp - fn
    rational("AdjustedRand", Fraction(1) if fp == fn == 0 else
             Fraction(2 * (tp * tn - fn * fp), (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)))
    best = Counter()
    for (_, p), c in cells.items():
        best[p] = max(best[p], c)
    rational("Purity", Fraction(sum(best.values()), n) if n else Fraction(1))
    out["NormalizedMutualInfo"] = _nmi(cells, rows, cols, n)
    return out


def assert_within_rounding(values: dict, y_true, y_pred) -> None:
    """Each of the six metrics in ``values`` within its rounding bound of the exact value."""
    for name, (want, bound) in exact_and_bound(y_true, y_pred).items():
        gap = abs(mpmath.mpf(values[name]) - want)
        assert gap <= bound, (name, values[name], float(want), float(gap), float(bound))


def within(got: float, pair) -> bool:
    """``got`` within ``pair = (exact, bound)`` of :func:`exact_and_bound`."""
    want, bound = pair
    return bool(abs(mpmath.mpf(got) - want) <= bound)
