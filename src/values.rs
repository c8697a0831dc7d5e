//! The metrics' values from the table's running sums, natively: the Rust twin of each registered
//! O(1) metric's Python `value(stats)`.
//!
//! Every formula here performs exactly the floating-point operations of its Python definition, in
//! the same order, on the same exact integers, so the two give the same bits (the differential tests
//! in `tests/test_native_values.py` hold them equal over random tables). Two Python operations need
//! care:
//!
//! - `int / int` is *correctly rounded* in Python whatever the operands' size (not
//!   `float(a) / float(b)`): [`div`] computes the correctly rounded quotient of two integers up to
//!   256 bits (round half to even, like Python's `long_true_divide`), with a plain `f64` division
//!   when both operands are exact doubles (then the two coincide).
//! - `math.log` and `math.sqrt` are the C library's: [`crate::terms::xlogx`] calls the same `log`,
//!   and `f64::sqrt` is the IEEE square root (correctly rounded, like C's `sqrt`).
//!
//! A formula whose Python twin would raise (a float division by zero, a missing F sum) or whose
//! intermediate integers would not fit the fixed widths used here returns `None`: the caller then
//! runs the Python formula, which gives the same value or the same error.
//!
//! **Adding a formula**: write it as one small function `fn(&mut Reader, param) -> Option<f64>`
//! below and list it in [`FORMULAS`] under the name its Python metric declares (`_formula`, or
//! what `_formula_key()` returns). Nothing else in Rust changes; `tests/test_native_values.py`
//! fails until the two sides name the same formulas.

use crate::core::{Sums, PRED, TRUE};
use crate::terms::{div_wide_rem, xlogx, Kind, ONE};

/// A native formula: the value over a reading of the sums, with the formula's float parameter
/// (`beta` for VBeta, ELM and BCubed, unused otherwise); `None` to leave it to Python.
pub type Formula = fn(&mut Reader<'_>, f64) -> Option<f64>;

/// The registry of native formulas, by the names the Python metrics declare (`_formula` /
/// `_formula_key()` in `streameval/metrics/*.py`): looked up by name when a plan is built
/// ([`formula`]), never by position.
pub const FORMULAS: &[(&str, Formula)] = &[
    ("Rand", rand),
    ("AdjustedRand", adjusted_rand),
    ("PairPrecision", pair_precision),
    ("PairRecall", pair_recall),
    ("PairF1", pair_f1),
    ("PairJaccard", pair_jaccard),
    ("FowlkesMallows", fowlkes_mallows),
    ("MutualInfo", mutual_info),
    ("NormalizedMutualInfo:arithmetic", nmi_arithmetic),
    ("NormalizedMutualInfo:geometric", nmi_geometric),
    ("NormalizedMutualInfo:min", nmi_min),
    ("NormalizedMutualInfo:max", nmi_max),
    ("Homogeneity", homogeneity),
    ("Completeness", completeness),
    ("VBeta", v_beta),
    ("VariationOfInformation", variation_of_information),
    ("Purity", purity),
    ("InversePurity", inverse_purity),
    ("ELM:element_averaged", elm_element_averaged),
    ("ELM:f_of_averages", elm_f_of_averages),
    ("BCubed:element_averaged", bcubed_element_averaged),
    ("BCubed:f_of_averages", bcubed_f_of_averages),
    ("MUC", muc),
    ("BLANC", blanc),
    ("LEA", lea),
    ("BasicMergeDistance", basic_merge_distance),
];

/// The registered formula named `name`, if any.
pub fn formula(name: &str) -> Option<Formula> {
    FORMULAS.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
}

// ------------------------------------------------------------------ exact integer division

/// An unsigned 256-bit integer `(hi, lo)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct U256 {
    pub hi: u128,
    pub lo: u128,
}

impl U256 {
    pub const ZERO: U256 = U256 { hi: 0, lo: 0 };

    pub fn from(x: u128) -> U256 {
        U256 { hi: 0, lo: x }
    }

    /// The full product of two `u128`.
    pub fn mul(a: u128, b: u128) -> U256 {
        let (a1, a0) = (a >> 64, a & u64::MAX as u128);
        let (b1, b0) = (b >> 64, b & u64::MAX as u128);
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        // middle column: (p00 >> 64) + low halves of p01, p10 (fits in 66 bits)
        let mid = (p00 >> 64) + (p01 & u64::MAX as u128) + (p10 & u64::MAX as u128);
        let lo = (p00 & u64::MAX as u128) | (mid << 64);
        let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
        U256 { hi, lo }
    }

    /// `self + o`, `None` on overflow (as the integer types' `checked_add`).
    pub fn checked_add(self, o: U256) -> Option<U256> {
        let (lo, c) = self.lo.overflowing_add(o.lo);
        let hi = self.hi.checked_add(o.hi)?.checked_add(c as u128)?;
        Some(U256 { hi, lo })
    }

    pub fn bits(self) -> u32 {
        if self.hi != 0 {
            256 - self.hi.leading_zeros()
        } else {
            128 - self.lo.leading_zeros()
        }
    }

    pub fn is_zero(self) -> bool {
        self.hi == 0 && self.lo == 0
    }
}

impl std::ops::Sub for U256 {
    type Output = U256;

    /// `self - o` for `self >= o` (below, as the integer types: a panic in debug builds).
    fn sub(self, o: U256) -> U256 {
        let (lo, b) = self.lo.overflowing_sub(o.lo);
        U256 { hi: self.hi - o.hi - b as u128, lo }
    }
}

impl std::ops::Shl<u32> for U256 {
    type Output = U256;

    /// `self << k` for `k < 256` (bits shifted out are lost: callers keep room).
    fn shl(self, k: u32) -> U256 {
        if k == 0 {
            self
        } else if k >= 128 {
            U256 { hi: self.lo << (k - 128), lo: 0 }
        } else {
            U256 { hi: (self.hi << k) | (self.lo >> (128 - k)), lo: self.lo << k }
        }
    }
}

/// `2**k` as an `f64`, for `-1022 <= k <= 1023`.
#[inline]
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The double nearest to `(q + f) * 2**e`, ties to even, where `0 <= f < 1` is a fraction that is
/// non-zero exactly when `sticky`; `q` has at least 55 bits whenever `sticky` (so that rounding
/// sees a guard bit beyond the 53 kept).
fn round_scaled(q: u128, sticky: bool, e: i32) -> f64 {
    let len = 128 - q.leading_zeros();
    if len <= 53 {
        debug_assert!(!sticky);
        return (q as u64) as f64 * pow2(e);
    }
    let s = len - 53;
    let mut m = (q >> s) as u64;
    let dropped = q & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    if dropped > half || (dropped == half && (sticky || m & 1 == 1)) {
        m += 1;
    }
    m as f64 * pow2(e + s as i32)
}

/// `(a / d, a % d)` for a 64-bit divisor `d > 0`, in two hardware divisions.
#[inline]
fn divrem_64(a: u128, d: u64) -> (u128, u64) {
    let hi = (a >> 64) as u64;
    // a quotient below 2**64 (a value below 1 of a fixed-point sum over d: the common case)
    // needs one hardware division, not two
    let (qh, r) = if hi < d { (0, hi) } else { (hi / d, hi % d) };
    let (ql, r) = div_wide_rem(r, a as u64, d);
    (((qh as u128) << 64) | ql as u128, r)
}

/// `a / b` correctly rounded for `a >= 0`, `0 < b < 2**64`: the integer part and, when it has
/// fewer than 55 bits, the next bits from the remainder.
#[inline]
fn div_by_u64(a: u128, b: u64) -> f64 {
    let (q, r) = divrem_64(a, b);
    let len = 128 - q.leading_zeros() as i32;
    if len >= 55 {
        return round_scaled(q, r != 0, 0);
    }
    if q == 0 {
        // a < b < 2**64: shift a so the quotient has 55 bits (a << s has 55 + bits(b) <= 119 bits)
        let s = 55 + (64 - b.leading_zeros() as i32) - (128 - a.leading_zeros() as i32);
        let (q2, r2) = divrem_64(a << s, b);
        return round_scaled(q2, r2 != 0, -s);
    }
    let s = 55 - len; // q << s and r << s (r < b < 2**64, s <= 55) both fit
    let (q2, r2) = divrem_64((r as u128) << s, b);
    round_scaled((q << s) | q2, r2 != 0, -s)
}

/// `a / b` correctly rounded (ties to even) for `a >= 0`, `b > 0` below `2**250`.
fn div_u256(a: U256, b: U256) -> Option<f64> {
    if a.is_zero() {
        return Some(0.0);
    }
    let (la, lb) = (a.bits() as i32, b.bits() as i32);
    if la > 250 || lb > 250 || lb == 0 {
        return None;
    }
    if a.hi == 0 && b.hi == 0 {
        let (a, b) = (a.lo, b.lo);
        if a < (1 << 53) && b < (1 << 53) {
            return Some((a as u64) as f64 / (b as u64) as f64); // both exact: IEEE rounds correctly
        }
        if la - lb >= 55 {
            return Some(round_scaled(a / b, a % b != 0, 0));
        }
        let s = 55 - (la - lb);
        if la + s <= 127 {
            let a = a << s;
            return Some(round_scaled(a / b, a % b != 0, -s));
        }
        if lb + s <= 127 {
            // the integer part, then the next `s` bits from the remainder (r < b, so r << s fits)
            let (q0, r) = (a / b, a % b);
            let r = r << s;
            return Some(round_scaled((q0 << s) | (r / b), r % b != 0, -s));
        }
    }
    // the operands aligned to the same length; the quotient `floor(r * 2**55 / d)` (56 bits)
    let t = la - lb;
    let (r, d) = if t >= 0 { (a, b << t as u32) } else { (a << (-t) as u32, b) };
    let (q, rem) = quotient_55(r, d);
    Some(round_scaled(q, !rem.is_zero(), t - 55))
}

/// `(floor(r * 2**55 / d), r * 2**55 mod d)` for `d > 0` and `r < 2d` (both below `2**251`):
/// the quotient, below `2**56`, estimated from the top 64 bits of `d` (one 128-by-64-bit
/// division; the estimate is at most 2 above and 1 below the quotient), then corrected by the
/// exact remainder, computed modulo `2**256`: the true one is in `[0, d)` and the estimate's in
/// `(-2d, 2d)`, below `2**252` in magnitude, so its sign is its top bit. The same values as
/// dividing one quotient bit at a time (`the_division_is_correctly_rounded` holds both to the
/// definition), in about a tenth of the instructions.
fn quotient_55(r: U256, d: U256) -> (u128, U256) {
    let l = d.bits();
    let (q_est, _) = if l <= 64 {
        // r < 2**65: r * 2**55 fits 128 bits
        let top = r.lo << 55;
        (top / d.lo, ())
    } else {
        let e = l - 64;
        let dtop = shr(d, e).lo as u64; // in [2**63, 2**64)
        // floor(r * 2**55 / 2**e), below 2**120
        let rtop = if e >= 55 { shr(r, e - 55).lo } else { (r << (55 - e)).lo };
        (rtop / dtop as u128, ())
    };
    let mut q = q_est;
    // r * 2**55 - q * d, modulo 2**256
    let mut rem = wrapping_sub(r << 55, wrapping_mul_small(d, q));
    while rem.hi >> 127 == 1 {
        // negative: the estimate was above
        q -= 1;
        rem = wrapping_add(rem, d);
    }
    while rem >= d {
        q += 1;
        rem = rem - d;
    }
    (q, rem)
}

/// `x >> k` for `k < 256`.
#[inline]
fn shr(x: U256, k: u32) -> U256 {
    if k == 0 {
        x
    } else if k >= 128 {
        U256 { hi: 0, lo: x.hi >> (k - 128) }
    } else {
        U256 { hi: x.hi >> k, lo: (x.lo >> k) | (x.hi << (128 - k)) }
    }
}

/// `x * m mod 2**256` for `m < 2**64`.
#[inline]
fn wrapping_mul_small(x: U256, m: u128) -> U256 {
    debug_assert!(m >> 64 == 0);
    let p = U256::mul(x.lo, m);
    U256 { hi: p.hi.wrapping_add(x.hi.wrapping_mul(m)), lo: p.lo }
}

/// `x - y mod 2**256`.
#[inline]
fn wrapping_sub(x: U256, y: U256) -> U256 {
    let (lo, b) = x.lo.overflowing_sub(y.lo);
    U256 { hi: x.hi.wrapping_sub(y.hi).wrapping_sub(b as u128), lo }
}

/// `x + y mod 2**256`.
#[inline]
fn wrapping_add(x: U256, y: U256) -> U256 {
    let (lo, c) = x.lo.overflowing_add(y.lo);
    U256 { hi: x.hi.wrapping_add(y.hi).wrapping_add(c as u128), lo }
}

/// Python's `a / b` for integers: correctly rounded; `None` when `b == 0` (Python raises).
#[inline]
pub fn div(a: i128, b: i128) -> Option<f64> {
    const EXACT: u128 = 1 << 53;
    let (ua, ub) = (a.unsigned_abs(), b.unsigned_abs());
    if ua < EXACT && ub < EXACT && b != 0 {
        return Some(a as i64 as f64 / b as i64 as f64); // both exact: IEEE division rounds correctly
    }
    div_slow(a, b)
}

#[inline(never)]
fn div_slow(a: i128, b: i128) -> Option<f64> {
    if b == 0 {
        return None;
    }
    let neg = (a < 0) != (b < 0);
    let (ua, ub) = (a.unsigned_abs(), b.unsigned_abs());
    let q = if ua == 0 {
        0.0
    } else if ub >> 64 == 0 {
        div_by_u64(ua, ub as u64)
    } else {
        div_u256(U256::from(ua), U256::from(ub))?
    };
    Some(if neg { -q } else { q })
}

/// Python's `a / (n * 2**64)` (a fixed-point sum over `n`) for `n > 0`: the correctly rounded
/// `a / n`, scaled by `2**-64` (exact: a power of two, far from the subnormal range).
#[inline]
pub fn div_fixed(a: i128, n: i128) -> Option<f64> {
    let scale = pow2(-(crate::terms::FRAC_BITS as i32));
    if a >= 0 && n > 0 && n >> 64 == 0 {
        // the common case (a mean of at least 2**-10 over n < 2**64 elements): the quotient
        // has 55 bits or more, so it and the remainder's sticky bit round it, as
        // `div_by_u64` does on that path (the same bits), without `div`'s general cases
        let (q, r) = divrem_64(a as u128, n as u64);
        if q >> 54 != 0 {
            return Some(round_scaled(q, r != 0, 0) * scale);
        }
    }
    Some(div(a, n)? * scale)
}

/// Python's `a / b` for a signed 256-bit numerator `(negative, |a|)` and `b > 0`.
pub fn div_wide(neg: bool, a: U256, b: U256) -> Option<f64> {
    let q = div_u256(a, b)?;
    Some(if neg { -q } else { q })
}

/// Python's `x / y` for floats: `None` when `y == 0` (Python raises `ZeroDivisionError`).
#[inline]
fn fdiv(x: f64, y: f64) -> Option<f64> {
    if y == 0.0 {
        None
    } else {
        Some(x / y)
    }
}

/// Python's `min(u, v)` and `max(u, v)` for two floats (the first unless the second is smaller /
/// larger).
#[inline]
fn pmin(u: f64, v: f64) -> f64 {
    if v < u {
        v
    } else {
        u
    }
}

#[inline]
fn pmax(u: f64, v: f64) -> f64 {
    if v > u {
        v
    } else {
        u
    }
}

/// `streameval.metrics.base.ratio`: `num / den`, `empty` when `den == 0`.
#[inline]
fn ratio(num: i128, den: i128, empty: f64) -> Option<f64> {
    if den != 0 {
        div(num, den)
    } else {
        Some(empty)
    }
}

/// `streameval.metrics.base.harmonic`: `(1+β²)PR / (β²P + R)`, 0 when the denominator is 0.
#[inline]
fn harmonic(p: f64, r: f64, beta: f64) -> f64 {
    let b2 = beta * beta;
    let d = b2 * p + r;
    if d != 0.0 {
        (1.0 + b2) * p * r / d // d is not 0: NaN passes, as Python's `if d` lets it
    } else {
        0.0
    }
}

// ------------------------------------------------------------------ the formulas

/// One reading of the sums: the shared quantities (pair counts, entropies) computed at most once.
pub struct Reader<'a> {
    s: &'a Sums,
    fsum: &'a dyn Fn(Kind, f64) -> Option<i128>,
    pairs: (i128, i128, i128, i128),
    entropies: Option<Option<(f64, f64, f64)>>,
}

impl<'a> Reader<'a> {
    /// A reader of `s`; `fsum(kind, beta)` gives a tracked element-averaged F sum, if tracked.
    pub fn new(s: &'a Sums, fsum: &'a dyn Fn(Kind, f64) -> Option<i128>) -> Self {
        let n = s.n;
        let pairs = (
            (s.cell_sq - n).div_euclid(2),
            (s.side[PRED].sq - n).div_euclid(2),
            (s.side[TRUE].sq - n).div_euclid(2),
            (n * (n - 1)).div_euclid(2),
        );
        Reader { s, fsum, pairs, entropies: None }
    }

    /// `streameval.metrics.pairs.pair_counts`: `(TP, PP, TT, C2(N))`.
    #[inline]
    fn pairs(&self) -> (i128, i128, i128, i128) {
        self.pairs
    }

    /// `streameval.metrics.information.entropies`: `(H(T), H(P), MI)`.
    fn entropies(&mut self) -> Option<(f64, f64, f64)> {
        if let Some(e) = self.entropies {
            return e;
        }
        let e = self.compute_entropies();
        self.entropies = Some(e);
        e
    }

    fn compute_entropies(&self) -> Option<(f64, f64, f64)> {
        let s = self.s;
        let n = s.n;
        if n == 0 {
            return Some((0.0, 0.0, 0.0));
        }
        let nlogn = xlogx(n as u64);
        let (kt, kp) = (s.k[TRUE], s.k[PRED]);
        let (row, col) = (s.side[TRUE].xlogx, s.side[PRED].xlogx);
        let ht = if kt > 1 { div_fixed(nlogn - row, n)? } else { 0.0 };
        let hp = if kp > 1 { div_fixed(nlogn - col, n)? } else { 0.0 };
        if kt <= 1 || kp <= 1 {
            return Some((ht, hp, 0.0));
        }
        let num = (nlogn - row).checked_add(s.cell_xlogx.checked_sub(col)?)?;
        let mi = div_fixed(num, n)?;
        Some((ht, hp, pmax(mi, 0.0)))
    }

    /// The element metrics' `_p`/`_r`: `fixed_mean` of a side's sum.
    fn fixed_mean(&self, total: i128) -> Option<f64> {
        let n = self.s.n;
        if n != 0 {
            div_fixed(total, n)
        } else {
            Some(1.0)
        }
    }

    /// ELM or BCubed: the element-averaged F sum's mean, or F of the averaged P and R.
    fn element(&self, kind: Kind, averaged: bool, beta: f64) -> Option<f64> {
        let s = self.s;
        if averaged {
            let total = (self.fsum)(kind, beta)?;
            return self.fixed_mean(total);
        }
        if s.n == 0 {
            return Some(1.0);
        }
        let (p, r) = match kind {
            Kind::Elm => (s.side[PRED].elm, s.side[TRUE].elm),
            Kind::Bcubed => (s.side[PRED].bcubed, s.side[TRUE].bcubed),
        };
        Some(harmonic(self.fixed_mean(p)?, self.fixed_mean(r)?, beta))
    }

    /// A normalised mutual information: `MI / avg(H(T), H(P))`.
    fn nmi(&mut self, avg: fn(f64, f64) -> Option<f64>) -> Option<f64> {
        let s = self.s;
        if s.k[TRUE] == s.k[PRED] && s.k[TRUE] <= 1 {
            return Some(1.0);
        }
        let (ht, hp, mi) = self.entropies()?;
        if mi == 0.0 {
            return Some(0.0);
        }
        fdiv(mi, avg(ht, hp)?)
    }
}

// ------------------------------------------------------------------ the formulas, one each

fn rand(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (tp, pp, tt, total) = r.pairs();
    let agree = total - pp - tt + 2 * tp;
    if agree == total {
        Some(1.0)
    } else {
        div(agree, total)
    }
}

fn adjusted_rand(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (tp, pp, tt, total) = r.pairs();
    let (fp, fn_) = (pp - tp, tt - tp);
    if fp == 0 && fn_ == 0 {
        return Some(1.0);
    }
    let tn = total - pp - tt + tp;
    if tp < 0 || fp < 0 || fn_ < 0 || tn < 0 {
        return None;
    }
    let (tp, tn, fp, fn_) = (tp as u128, tn as u128, fp as u128, fn_ as u128);
    let (x, y) = (U256::mul(tp, tn), U256::mul(fn_, fp));
    let (neg, diff) = if x >= y { (false, x - y) } else { (true, y - x) };
    let num = diff.checked_add(diff)?;
    let den = U256::mul(tp + fn_, fn_ + tn).checked_add(U256::mul(tp + fp, fp + tn))?;
    if den.is_zero() {
        return None;
    }
    div_wide(neg, num, den)
}

fn pair_precision(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (tp, pp, _, _) = r.pairs();
    ratio(tp, pp, 1.0)
}

fn pair_recall(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (tp, _, tt, _) = r.pairs();
    ratio(tp, tt, 1.0)
}

fn pair_f1(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (tp, pp, tt, _) = r.pairs();
    ratio(2 * tp, pp + tt, 1.0)
}

fn pair_jaccard(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (tp, pp, tt, _) = r.pairs();
    ratio(tp, pp + tt - tp, 1.0)
}

fn fowlkes_mallows(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let s = r.s;
    let n = s.n;
    let tk = s.cell_sq - n;
    if tk == 0 {
        return Some(0.0);
    }
    let (pk, qk) = (s.side[PRED].sq - n, s.side[TRUE].sq - n);
    let (x, y) = (div(tk, pk)?, div(tk, qk)?);
    if x < 0.0 || y < 0.0 {
        return None; // math.sqrt raises
    }
    Some(x.sqrt() * y.sqrt())
}

fn mutual_info(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    Some(r.entropies()?.2)
}

fn nmi_arithmetic(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    r.nmi(|ht, hp| Some((ht + hp) / 2.0))
}

fn nmi_geometric(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    r.nmi(|ht, hp| {
        let x = ht * hp;
        if x < 0.0 {
            None // math.sqrt raises
        } else {
            Some(x.sqrt())
        }
    })
}

fn nmi_min(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    r.nmi(|ht, hp| Some(pmin(ht, hp)))
}

fn nmi_max(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    r.nmi(|ht, hp| Some(pmax(ht, hp)))
}

/// `MI / H`, 1.0 when `H = 0` (homogeneity with `H(T)`, completeness with `H(P)`).
#[inline]
fn explained(mi: f64, h: f64) -> Option<f64> {
    if h != 0.0 {
        fdiv(mi, h)
    } else {
        Some(1.0)
    }
}

fn homogeneity(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (ht, _, mi) = r.entropies()?;
    explained(mi, ht)
}

fn completeness(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (_, hp, mi) = r.entropies()?;
    explained(mi, hp)
}

fn v_beta(r: &mut Reader<'_>, beta: f64) -> Option<f64> {
    if r.s.n == 0 {
        return Some(1.0);
    }
    let (ht, hp, mi) = r.entropies()?;
    let (h, c) = (explained(mi, ht)?, explained(mi, hp)?);
    if h + c == 0.0 {
        return Some(0.0);
    }
    fdiv((1.0 + beta) * h * c, beta * h + c)
}

fn variation_of_information(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let s = r.s;
    let n = s.n;
    if n == 0 {
        return Some(0.0);
    }
    let num = (s.side[TRUE].xlogx - s.cell_xlogx).checked_add(s.side[PRED].xlogx - s.cell_xlogx)?;
    Some(pmax(0.0, div_fixed(num, n)?))
}

fn purity(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    ratio(r.s.side[PRED].max, r.s.n, 1.0)
}

fn inverse_purity(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    ratio(r.s.side[TRUE].max, r.s.n, 1.0)
}

fn elm_element_averaged(r: &mut Reader<'_>, beta: f64) -> Option<f64> {
    r.element(Kind::Elm, true, beta)
}

fn elm_f_of_averages(r: &mut Reader<'_>, beta: f64) -> Option<f64> {
    r.element(Kind::Elm, false, beta)
}

fn bcubed_element_averaged(r: &mut Reader<'_>, beta: f64) -> Option<f64> {
    r.element(Kind::Bcubed, true, beta)
}

fn bcubed_f_of_averages(r: &mut Reader<'_>, beta: f64) -> Option<f64> {
    r.element(Kind::Bcubed, false, beta)
}

fn muc(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let s = r.s;
    let common = s.n - s.cells;
    let p = ratio(common, s.n - s.k[PRED], 0.0)?;
    let rc = ratio(common, s.n - s.k[TRUE], 0.0)?;
    Some(harmonic(p, rc, 1.0))
}

fn blanc(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let (tp, pp, tt, total) = r.pairs();
    let (nk, nr) = (total - tt, total - pp);
    let r0 = |a: i128, b: i128| ratio(a, b, 0.0);
    let mut fc = 0.0;
    let linked = tt != 0 || pp != 0;
    let unlinked = nk != 0 || nr != 0;
    if linked {
        let (pc, rc) = (r0(tp, pp)?, r0(tp, tt)?);
        fc = harmonic(pc, rc, 1.0);
        if !unlinked {
            return Some(fc);
        }
    } else if !unlinked {
        return Some(0.0);
    }
    let tn = total - pp - tt + tp;
    let (pn, rn) = (r0(tn, nr)?, r0(tn, nk)?);
    let fnn = harmonic(pn, rn, 1.0);
    if !linked {
        return Some(fnn);
    }
    Some((fc + fnn) / 2.0)
}

fn lea(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let s = r.s;
    let n = s.n;
    if n == 0 {
        return Some(harmonic(0.0, 0.0, 1.0));
    }
    let both = s.both_singletons * ONE;
    let (t, p) = (&s.side[TRUE], &s.side[PRED]);
    let pl = div_fixed(p.elm - p.singletons * ONE + both, n)?;
    let rl = div_fixed(t.elm - t.singletons * ONE + both, n)?;
    Some(harmonic(pl, rl, 1.0))
}

/// The basic merge distance: `2·cells - kT - kP` splits and merges, an integer (below `2**58`)
/// converted with round-half-even, as Python's `float(int)`.
fn basic_merge_distance(r: &mut Reader<'_>, _: f64) -> Option<f64> {
    let s = r.s;
    Some((2 * s.cells - s.k[TRUE] - s.k[PRED]) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use num_traits::ToPrimitive;

    /// The correctly rounded quotient by the definition: exact rationals through num-bigint.
    fn reference(a: &BigUint, b: &BigUint) -> f64 {
        // scale so the quotient has 60+ bits, then round by hand (ties to even)
        let la = a.bits() as i64;
        let lb = b.bits() as i64;
        let s = 64 - (la - lb);
        let (num, den) = if s >= 0 { (a << s as u64, b.clone()) } else { (a.clone(), b << (-s) as u64) };
        let q = &num / &den;
        let r = &num % &den;
        let q = q.to_u128().unwrap();
        round_scaled(q, r != BigUint::ZERO, -s as i32)
    }

    fn big(x: U256) -> BigUint {
        (BigUint::from(x.hi) << 128u32) + BigUint::from(x.lo)
    }

    #[test]
    fn the_division_is_correctly_rounded() {
        let mut x: u128 = 0x1234_5678_9abc_def0;
        for i in 0..20000u32 {
            x = x.wrapping_mul(0x2545F4914F6CDD1D_u128 | 1).wrapping_add(0x9E3779B97F4A7C15 + i as u128);
            let y = x.rotate_left(61) ^ 0xdead_beef;
            let (sa, sb) = (i % 200, (i / 7) % 200);
            let a = U256::from(x >> (i % 128)) << sa.min(120);
            let b = U256::from((y >> ((i / 3) % 128)) | 1) << sb.min(120);
            let got = div_u256(a, b).unwrap();
            let want = reference(&big(a), &big(b));
            assert_eq!(got.to_bits(), want.to_bits(), "{a:?} / {b:?}");
        }
        // the signed entry point, every size of operand (its 64-bit divisor path included)
        for i in 0..20000u32 {
            x = x.wrapping_mul(0x2545F4914F6CDD1D_u128 | 1).wrapping_add(0x9E3779B97F4A7C15 + i as u128);
            let y = x.rotate_left(37) ^ 0x5555_aaaa;
            let a = (x >> (1 + i % 127)) as i128 * if i % 3 == 0 { -1 } else { 1 };
            let b = ((y >> (1 + (i / 5) % 127)) | 1) as i128;
            let want = reference(&BigUint::from(a.unsigned_abs()), &BigUint::from(b as u128));
            let want = if a < 0 { -want } else { want };
            assert_eq!(div(a, b).unwrap().to_bits(), want.to_bits(), "{a} / {b}");
        }
        // ties to even, exactly halfway
        assert_eq!(div((1i128 << 54) + 1, 1), Some((1u128 << 54) as f64));
        assert_eq!(div((1i128 << 54) + 3, 1), Some(((1u128 << 54) + 4) as f64));
        assert_eq!(div(-7, 2), Some(-3.5));
        assert_eq!(div(1, 0), None);
        assert_eq!(div(0, -5).map(f64::to_bits), Some((-0.0f64).to_bits())); // as Python: 0 / -5 == -0.0
        assert_eq!(div(0, 5).map(f64::to_bits), Some(0.0f64.to_bits()));
    }

    /// The quotient of `div_u256`'s last path one bit at a time (its former definition).
    fn quotient_by_bits(mut r: U256, d: U256) -> (u128, U256) {
        let mut q: u128 = 0;
        if r >= d {
            r = r - d;
            q = 1;
        }
        for _ in 0..55 {
            r = r << 1;
            q <<= 1;
            if r >= d {
                r = r - d;
                q |= 1;
            }
        }
        (q, r)
    }

    #[test]
    fn the_estimated_quotient_equals_the_bit_by_bit_one_at_every_width() {
        // operands of every length up to 250 bits (divisors of 1 to 250 bits, numerators below
        // twice the divisor), the quotient's estimate corrected up and down, against the
        // division one quotient bit at a time and the exact rational rounded by num-bigint
        let mut x: u128 = 0x0123_4567_89ab_cdef;
        let mut next = || {
            x = x.wrapping_mul(0x2545F4914F6CDD1D_u128 | 1).wrapping_add(0x9E3779B97F4A7C15);
            x ^ (x >> 67)
        };
        for i in 0..30000u32 {
            let l = 1 + i % 250;
            let d = shr(U256 { hi: next(), lo: next() }, 256 - l).max(U256::from(1));
            let d = U256 { hi: d.hi | if l > 128 { 1 << (l - 129) } else { 0 }, lo: d.lo | if l <= 128 { 1 << (l - 1) } else { 0 } };
            let r = match i % 4 {
                0 => d,
                1 => d.checked_add(d).unwrap() - U256::from(1),
                2 => (d - U256::from(1)).max(U256::from(1)),
                _ => shr(U256 { hi: next(), lo: next() }, 255 - l),
            };
            let r = if r >= d.checked_add(d).unwrap() { d } else { r };
            assert_eq!(quotient_55(r, d), quotient_by_bits(r, d), "{r:?} / {d:?}");
            let a = shr(U256 { hi: next(), lo: next() }, 256 - (1 + (i / 250) % 250));
            if !a.is_zero() && a.bits() <= 250 && d.bits() <= 250 {
                let got = div_u256(a, d).unwrap();
                assert_eq!(got.to_bits(), reference(&big(a), &big(d)).to_bits(), "{a:?} / {d:?}");
            }
        }
    }

    #[test]
    fn wide_products_are_exact() {
        let a = u128::MAX >> 10;
        let b = (u128::MAX >> 15) - 12345;
        let p = U256::mul(a, b);
        assert_eq!(big(p), BigUint::from(a) * BigUint::from(b));
        let s = p.checked_add(U256::mul(b, b)).unwrap();
        assert_eq!(big(s), BigUint::from(a) * BigUint::from(b) + BigUint::from(b) * BigUint::from(b));
        assert_eq!(big(s - p), BigUint::from(b) * BigUint::from(b));
        assert_eq!(p.checked_add(U256 { hi: u128::MAX, lo: 0 }), None);
    }

    #[test]
    fn the_fixed_mean_fast_path_equals_the_division() {
        // div_fixed's common path against the general division, scaled the same way
        let mut x: u128 = 7;
        for i in 0..20000u128 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407 + i);
            let n = ((x >> 64) as u64 >> (x % 64) as u32).max(1) as i128;
            let a = (x.rotate_left(17) >> (1 + (x % 90) as u32)) as i128;
            for a in [a, a >> 40, n << 64, (n << 64) + 1, (n << 63) - 1] {
                let slow = div(a, n).map(|q| q * pow2(-64));
                assert_eq!(div_fixed(a, n).map(f64::to_bits), slow.map(f64::to_bits), "{a} / {n}");
            }
        }
    }

    #[test]
    fn empty_table_values() {
        let s = Sums::default();
        let fsum = |_, _| Some(0);
        let mut r = Reader::new(&s, &fsum);
        let zero = ["FowlkesMallows", "MutualInfo", "VariationOfInformation", "MUC", "BLANC", "LEA",
                    "BasicMergeDistance"];
        for &(name, f) in FORMULAS {
            let want = if zero.contains(&name) { 0.0 } else { 1.0 };
            assert_eq!(f(&mut r, 1.0), Some(want), "{name}");
            assert_eq!(formula(name).map(|g| g as usize), Some(f as usize), "{name}");
        }
        assert!(formula("NoSuchFormula").is_none());
        let mut names: Vec<&str> = FORMULAS.iter().map(|&(n, _)| n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FORMULAS.len(), "a formula's name is listed twice");
    }
}
