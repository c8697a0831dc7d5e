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


def gamma(m: int):
    """``γ_m = m·u/(1 - m·u)``: the relative error of a sum of ``m`` terms in any order (so in
    numpy's pairwise sums and their SIMD variants), Higham §3.1."""
    u = mpmath.mpf(U)
    return m * u / (1 - m * u)


def sklearn_mi_error(cells, rows, cols, n: int):
    """A bound on ``|scikit-learn's mutual_info_score - MI|`` (see :func:`sklearn_nmi_bound`)."""
    u, eps, N = mpmath.mpf(U), mpmath.mpf(2) ** -52, mpmath.mpf(n)
    log_n = mpmath.log(N)
    e_terms = mags = mpmath.mpf(0)
    for (t, q), c in cells.items():
        a, b = rows[t], cols[q]
        pr = c / N
        term = pr * mpmath.log(c * N / (a * b))
        lam = mpmath.log(c) + mpmath.log(a * b) + 3 * log_n
        err = pr * (12 * u * lam + 2 * u)
        if abs(term) < eps + err:
            err += abs(term) + err  # zeroed: the computed term, at most |term| + err, is lost
        e_terms += err
        mags += abs(term) + err
    return e_terms + gamma(len(cells)) * mags


def sklearn_nmi_bound(y_true, y_pred):
    """A bound on ``|scikit-learn's normalized_mutual_info_score - exact|`` (arithmetic mean;
    below 2**53 elements): :func:`information_bounds` of the path ``"sklearn"``. With one cluster
    on either side its conventions' exact 1.0 or 0.0: bound 0.

    Its MI sums over the cells ``t = p·(log n - log N) + p·(-log(ab) + log N + log N)``, ``p = n/N``:
    five logarithms (4u each, of magnitude ``Λ = log n + log(ab) + 3 log N``; ``ab`` beyond 2**53
    rounds to a float first, ``u`` more), three additions (``u·Λ`` each), the quotient and the two
    products (``u`` of ``p·Λ`` each): within ``p·(12u·Λ + 2u)`` (second order included); a term
    that comes out below ``2⁻⁵²`` is set to 0 (its whole value more); the sum over the cells adds
    ``γ_cells`` of the sum of magnitudes. Each entropy sums ``-p·(log a - log N)``: two logs, a
    subtraction, a quotient, a product: within ``7u·p·(log a + log N)``, plus ``γ_k`` of the sum.
    """
    return information_bounds(y_true, y_pred, "sklearn")["NormalizedMutualInfo"][1]


def exact_and_bound(y_true, y_pred) -> dict:
    """``{name: (exact value as mpf, bound on |streameval's float - exact|)}`` for the six metrics
    (Rand, AdjustedRand and NormalizedMutualInfo: :func:`pair_bounds` and
    :func:`information_bounds` of the path ``"ours"``)."""
    y_true, y_pred = list(y_true), list(y_pred)
    cells, rows, cols, n = _table(y_true, y_pred)
    u = mpmath.mpf(U)
    out = {}

    def rational(name, v: Fraction, extra=Fraction(0)):
        x = mpmath.mpf(v.numerator) / v.denominator
        out[name] = (x, mpmath.mpf(extra.numerator) / extra.denominator + u * abs(x))

    fixed = FIX * len(cells) / n if n else Fraction(0)
    rational("ELM", _element_f(cells, rows, cols, n, True), fixed)
    rational("BCubed", _element_f(cells, rows, cols, n, False), fixed)
    best = Counter()
    for (_, p), c in cells.items():
        best[p] = max(best[p], c)
    rational("Purity", Fraction(sum(best.values()), n) if n else Fraction(1))
    pairs = pair_bounds(y_true, y_pred, "ours")
    out["Rand"], out["AdjustedRand"] = pairs["Rand"], pairs["AdjustedRand"]
    out["NormalizedMutualInfo"] = information_bounds(y_true, y_pred, "ours")["NormalizedMutualInfo"]
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


def _info_parts(cells, rows, cols, n: int, who: str):
    """``[(H(T), e), (H(P), e), (MI, e)]``: the exact entropies and MI (mpf) and a bound on the
    path ``who``'s float of each (both sides with two clusters or more; ``n < 2**53``).

    ``"ours"``: :func:`exact_and_bound`'s analysis (integer sums of ``int(fl(x·fl(log x))·2⁶⁴)``).
    ``"sklearn"``: :func:`sklearn_nmi_bound`'s (five logarithms a cell, the ``2⁻⁵²`` zeroing;
    ``-p·(log a - log N)`` a cluster). ``"twin"`` (:mod:`streameval.batch.reference`): a cell
    ``p·log(n·N/(a·b))``, ``p = n/N``: the quotient ``q`` of exact integer products rounds
    (``ε`` in the log), the log ``4ε`` of itself, ``p`` and the product ``ε`` each: within
    ``p·(6ε|log q| + 2ε)``; a cluster ``-p·log p``: within ``p·(6ε|log p| + 2ε)``; each sum
    ``γ_m`` of its terms' magnitudes."""
    u, N = mpmath.mpf(U), mpmath.mpf(n)
    log_n = mpmath.log(N)
    nlogn = _xlogx(n)
    sums = {side: mpmath.fsum(_xlogx(x) for x in d.values()) for side, d in
            (("a", rows), ("b", cols), ("c", cells))}
    exact = [(nlogn - sums["a"]) / n, (nlogn - sums["b"]) / n,
             (nlogn + sums["c"] - sums["a"] - sums["b"]) / n]
    if who == "ours":
        fix = mpmath.mpf(2) ** -64

        def err(value, magnitude, terms):
            e = (6 * u * magnitude + terms * fix) / n
            return e + u * (abs(value) + e)

        return [(exact[0], err(exact[0], nlogn + sums["a"], 1 + len(rows))),
                (exact[1], err(exact[1], nlogn + sums["b"], 1 + len(cols))),
                (exact[2], err(exact[2], nlogn + sums["c"] + sums["a"] + sums["b"],
                               1 + len(cells) + len(rows) + len(cols)))]
    if who == "sklearn":
        e_mi = sklearn_mi_error(cells, rows, cols, n)
        per = 7  # two logs, a subtraction, a quotient, a product
    else:
        terms = [(c / N, mpmath.log(c * N / (rows[t] * cols[q]))) for (t, q), c in cells.items()]
        e = mpmath.fsum(p * (6 * u * abs(lg) + 2 * u) for p, lg in terms)
        e_mi = e + gamma(len(terms)) * (mpmath.fsum(abs(p * lg) for p, lg in terms) + e)
        per = 6

    def entropy(sizes):
        terms = [x / N * (log_n - mpmath.log(x)) for x in sizes]
        if who == "sklearn":
            e = mpmath.fsum(per * u * x / N * (mpmath.log(x) + log_n) for x in sizes)
        else:
            e = mpmath.fsum(t * per * u + 2 * u * x / N for t, x in zip(terms, sizes))
        return e + gamma(len(terms)) * (mpmath.fsum(terms) + e)

    return [(exact[0], entropy(rows.values())), (exact[1], entropy(cols.values())), (exact[2], e_mi)]


def _interval(x, e):
    return max(x - e, mpmath.mpf(0)), x + e


def information_bounds(y_true, y_pred, who: str, betas=(1.0,)) -> dict:
    """``{name: (exact, bound)}`` for MutualInfo, NormalizedMutualInfo under each average
    method (named as streameval names the metric), Homogeneity, Completeness and VBeta under
    each ``beta``, for the path ``who`` (``"ours"``, ``"sklearn"``, ``"twin"``), with the
    conventions all three share (scikit-learn's): an empty input scores 1.0 but MI 0.0; a side
    with one cluster has entropy 0.0 exactly, MI 0.0 exactly, homogeneity (completeness) 1.0 where
    its entropy is 0; NMI 1.0 where both sides have at most one cluster.

    From the parts' intervals (:func:`_info_parts`): each ratio is monotone in its parts, so its
    float lies between the ratios of the parts' ends, widened by the roundings of its own
    operations (a quotient ``ε``; the arithmetic mean's sum ``ε``, the geometric mean's product and
    root ``2ε``; V's ``(1+β)hc/(βh + c)`` five operations)."""
    cells, rows, cols, n = _table(list(y_true), list(y_pred))
    assert n < 2**53
    u = mpmath.mpf(U)
    one, zero = (mpmath.mpf(1), mpmath.mpf(0)), (mpmath.mpf(0), mpmath.mpf(0))
    avgs = ("arithmetic", "geometric", "min", "max")
    nmi_names = ["NormalizedMutualInfo"] + [f"NormalizedMutualInfo(average_method={m!r})" for m in avgs[1:]]
    v_names = ["VBeta" if b == 1.0 else f"VBeta(beta={b})" for b in betas]
    if n == 0:
        return {"MutualInfo": zero, **dict.fromkeys(nmi_names + ["Homogeneity", "Completeness"] + v_names, one)}
    kt, kp = len(rows), len(cols)
    if kt <= 1 or kp <= 1:
        h = one if kt <= 1 else zero
        c = one if kp <= 1 else zero
        nmi = one if kt == kp else zero
        v = {name: zero if h[0] + c[0] == 0 else (mpmath.mpf(1 + b) * h[0] * c[0] / (b * h[0] + c[0]), mpmath.mpf(0))
             for name, b in zip(v_names, betas)}
        return {"MutualInfo": zero, **dict.fromkeys(nmi_names, nmi), "Homogeneity": h, "Completeness": c, **v}
    (ht, e_ht), (hp, e_hp), (mi, e_mi) = _info_parts(cells, rows, cols, n, who)
    t_lo, t_hi = _interval(ht, e_ht)
    p_lo, p_hi = _interval(hp, e_hp)
    m_lo, m_hi = _interval(mi, e_mi)
    assert t_lo > 0 and p_lo > 0, "premise: the entropies far above their rounding"

    def ratio(value, lo, hi):
        return value, max(value - lo, hi - value)

    out = {"MutualInfo": (mi, e_mi)}
    norms = {"arithmetic": ((ht + hp) / 2, (t_lo + p_lo) / 2 * (1 - u), (t_hi + p_hi) / 2 * (1 + u)),
             "geometric": (mpmath.sqrt(ht * hp), mpmath.sqrt(t_lo * p_lo) * (1 - u) ** 2,
                           mpmath.sqrt(t_hi * p_hi) * (1 + u) ** 2),
             "min": (min(ht, hp), min(t_lo, p_lo), min(t_hi, p_hi)),
             "max": (max(ht, hp), max(t_lo, p_lo), max(t_hi, p_hi))}
    for name, method in zip(nmi_names, avgs):
        norm, lo, hi = norms[method]
        out[name] = ratio(mi / norm, m_lo / hi * (1 - u), m_hi / lo * (1 + u))
    h = (mi / ht, m_lo / t_hi * (1 - u), m_hi / t_lo * (1 + u))
    c = (mi / hp, m_lo / p_hi * (1 - u), m_hi / p_lo * (1 + u))
    out["Homogeneity"], out["Completeness"] = ratio(*h), ratio(*c)
    for name, b in zip(v_names, betas):
        b = mpmath.mpf(b)

        def vb(x, y, b=b):
            return (1 + b) * x * y / (b * x + y) if x + y > 0 else mpmath.mpf(0)

        out[name] = ratio(vb(h[0], c[0]), vb(h[1], c[1]) * (1 - u) ** 5, vb(h[2], c[2]) * (1 + u) ** 5)
    return out


def pair_bounds(y_true, y_pred, who: str) -> dict:
    """``{name: (exact, bound)}`` for Rand, AdjustedRand and FowlkesMallows on the path ``who``
    (``"ours"``, ``"sklearn"``, ``"twin"``), below ``2**53`` pairs.

    Rand: one quotient of exact integers everywhere (scikit-learn's int64 convert exactly): ``ε``.
    AdjustedRand: ours and scikit-learn's one quotient of exact integers, ``ε``; the twin's
    ``(TP - E)/(M - E)`` with ``E = PP·TT/C2`` and ``M = (PP + TT)/2`` rounded once each and a
    subtraction each side of the quotient: the interval of its rounded parts. FowlkesMallows: ours
    and scikit-learn's ``sqrt(TP/PP)·sqrt(TP/TT)`` (two quotients, two roots, a product: ``4ε``),
    the twin's ``TP/sqrt(PP·TT)`` (the product's conversion, the root, the quotient: ``3ε``)."""
    cells, rows, cols, n = _table(list(y_true), list(y_pred))
    u = mpmath.mpf(U)
    tp = sum(_c2(c) for c in cells.values())
    pp = sum(_c2(c) for c in cols.values())
    tt = sum(_c2(c) for c in rows.values())
    total = _c2(n)
    assert total < 2**53

    def mp(f: Fraction):
        return mpmath.mpf(f.numerator) / f.denominator

    agree = total - pp - tt + 2 * tp
    rand = mpmath.mpf(1) if agree == total else mp(Fraction(agree, total))
    out = {"Rand": (rand, u * rand)}
    fp, fn = pp - tp, tt - tp
    tn = total - tp - fp - fn
    if fp == fn == 0:
        out["AdjustedRand"] = (mpmath.mpf(1), mpmath.mpf(0))
    else:
        ari = mp(Fraction(2 * (tp * tn - fn * fp), (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)))
        if who != "twin":
            out["AdjustedRand"] = (ari, u * abs(ari))
        else:
            e = mp(Fraction(pp * tt, total)) if total else mpmath.mpf(0)
            num, den = tp - e, mpmath.mpf(pp + tt) / 2 - e
            e_num = u * abs(e) + u * (abs(num) + u * abs(e))
            e_den = u * abs(e) + u * (abs(den) + u * abs(e))
            assert abs(den) > e_den, "premise: the denominator far above its rounding"
            corners = [(num + a) / (den + b) for a in (-e_num, e_num) for b in (-e_den, e_den)]
            lo, hi = min(corners) * (1 - u * mpmath.sign(min(corners))), max(corners) * (1 + u * mpmath.sign(max(corners)))
            out["AdjustedRand"] = (ari, max(ari - lo, hi - ari))
    fmi = mpmath.mpf(0) if tp == 0 else mpmath.mpf(tp) / mpmath.sqrt(mpmath.mpf(pp) * tt)
    out["FowlkesMallows"] = (fmi, (3 if who == "twin" else 4) * u * (1 + 4 * u) * fmi)
    return out


def assert_paths_within(values: dict, y_true, y_pred, who: str, betas=(1.0,)) -> None:
    """Each of ``values`` (names as streameval's) within the path ``who``'s bound of the exact
    value (:func:`pair_bounds`, :func:`information_bounds`)."""
    bounds = {**pair_bounds(y_true, y_pred, who), **information_bounds(y_true, y_pred, who, betas)}
    for name, got in values.items():
        assert within(got, bounds[name]), (who, name, got, float(bounds[name][0]), float(bounds[name][1]))


def _harmonic(p, r, b2):
    d = b2 * p + r
    return (1 + b2) * p * r / d if d else mpmath.mpf(0)


def assert_element_within(got, P, R, F, convention: str, beta: float, cells: int, n: int, who: str) -> None:
    """``got = (precision, recall, F)`` of ELM or BCubed within the path ``who``'s bound of the
    exact ``P``, ``R``, ``F`` (``Fraction``; ``F`` the element-averaged one or the F of the exact
    averages, by ``convention``), over ``n`` elements in ``cells`` cells.

    Ours (fixed point, :mod:`streameval.stats`): a sum of per-cluster or per-cell terms each
    floored to ``2⁻⁶⁴`` (at most ``n`` of them, so below ``2⁻⁶⁴`` after the division by ``n``) and
    one correctly rounded quotient: ``2⁻⁶⁴ + ε·v``. The twin (numpy): a cell's term (ELM
    ``n·(n-1)/(b-1)``, BCubed ``n·n/b``; F's ``(1+β²)·…/(β²a + b)`` four operations) within
    ``γ_6``, their sum ``γ_cells``, the division ``ε``: ``γ_{cells+7}·v`` (all terms ``≥ 0``). The
    F of the averages, ``(1+β²)pr/(β²p + r)`` (``β²`` exact for the ``β`` tested: asserted), is
    increasing in ``p`` and ``r``: between its values at the ends of their intervals, five
    roundings wider."""
    u = mpmath.mpf(U)
    b2 = Fraction(beta) ** 2
    assert float(beta) * float(beta) == b2, "premise: β² exact in floating point"
    if n == 0:
        assert tuple(got) == (1.0, 1.0, 1.0)
        return

    def mp(f):
        return mpmath.mpf(f.numerator) / f.denominator

    def bound(v):
        return (mpmath.mpf(2) ** -64 + u * v) if who == "ours" else gamma(cells + 7) * v

    p, r = mp(P), mp(R)
    e_p, e_r = bound(p), bound(r)
    assert abs(mpmath.mpf(got[0]) - p) <= e_p, ("precision", who, got[0], float(p))
    assert abs(mpmath.mpf(got[1]) - r) <= e_r, ("recall", who, got[1], float(r))
    f = mp(F)
    if convention == "element_averaged":
        e_f = bound(f)
    else:
        B = mp(b2)
        lo = _harmonic(max(p - e_p, mpmath.mpf(0)), max(r - e_r, mpmath.mpf(0)), B) * (1 - u) ** 5
        hi = _harmonic(p + e_p, r + e_r, B) * (1 + u) ** 5
        e_f = max(f - lo, hi - f)
    assert abs(mpmath.mpf(got[2]) - f) <= e_f, ("F", convention, who, got[2], float(f))


def fixed_close(got: float, exact: Fraction) -> bool:
    """``got``, a mean of fixed-point terms (ELM and BCubed precision, recall, element-averaged F:
    at most ``N`` terms each floored to ``2⁻⁶⁴``, one correctly rounded quotient by ``N``), within
    ``2⁻⁶⁴ + ε·|exact|`` of ``exact``."""
    return abs(Fraction(got) - exact) <= Fraction(1, 2**64) + abs(exact) * Fraction(U)


def element_close(got: float, exact: Fraction, who: str, n: int) -> bool:
    """An ELM or BCubed precision, recall or element-averaged F over ``n`` elements within the
    path ``who``'s bound of ``exact`` (:func:`assert_element_within`: ours ``2⁻⁶⁴ + ε·v``, the
    twin ``γ_{cells+7}·v`` with ``cells ≤ n``)."""
    if who == "ours":
        return fixed_close(got, exact)
    v = mpmath.mpf(exact.numerator) / exact.denominator
    return bool(abs(mpmath.mpf(got) - v) <= gamma(n + 7) * v)


def element_error(got: float, who: str, n: int) -> Fraction:
    """The bound of :func:`element_close` from the float ``got`` itself (the exact value is within
    it, so ``|exact| ≤ |got|/(1 - γ)``), for comparisons between two such floats."""
    g = abs(Fraction(got))
    if who == "ours":
        return (Fraction(1, 2**64) + g * Fraction(U)) / (1 - Fraction(U))
    gm = Fraction((n + 7) * U) / (1 - Fraction((n + 7) * U))  # γ_{n+7}
    return g * gm / (1 - gm)
