//! The fixed-point terms every running sum is made of: the Rust twin of `streameval/stats.py`.
//!
//! Each term is a deterministic function of integer counts, rounded once to a multiple of
//! `2**-64`, so adding and then subtracting the same term is exact. The functions are written to
//! give, bit for bit, the values of their Python definitions (`xlogx`, `bcubed_term`, `elm_term`,
//! `f_term`); the differential tests check it.

use num_bigint::BigUint;
use num_traits::ToPrimitive;

pub const FRAC_BITS: u32 = 64;
pub const ONE: i128 = 1i128 << FRAC_BITS;
const ONE_F: f64 = 18446744073709551616.0;

/// The largest total count a table may hold (exclusive): every sum then fits in an `i128`
/// (the largest, `Σ x log x · 2**64`, stays below `2**57 · ln(2**57) · 2**64 < 2**127`).
pub const MAX_TOTAL: u64 = 1u64 << 57;

/// `int(x * log(x) * 2**64)` (0 for `x <= 1`), as Python computes it: both use the C library's
/// `log` on the double nearest to `x`, and truncate the product.
#[inline]
pub fn xlogx(x: u64) -> i128 {
    if x > 1 {
        let xf = x as f64;
        (xf * xf.ln() * ONE_F) as i128
    } else {
        0
    }
}

/// `(floor((hi * 2**64 + lo) / d), remainder)` for `hi < d`: one hardware division on x86-64
/// (the quotient then fits in 64 bits, so the instruction cannot fault), elsewhere
/// [`div_wide_rem_portable`]. The one place the crate divides 128 bits by 64.
#[inline(always)]
pub fn div_wide_rem(hi: u64, lo: u64, d: u64) -> (u64, u64) {
    debug_assert!(hi < d);
    #[cfg(target_arch = "x86_64")]
    {
        let (q, r): (u64, u64);
        // SAFETY: `div` divides rdx:rax by the operand; hi < d, so the quotient fits in 64 bits
        // and the instruction cannot fault.
        unsafe {
            std::arch::asm!("div {d}", d = in(reg) d, inout("rax") lo => q, inout("rdx") hi => r,
                            options(pure, nomem, nostack));
        }
        (q, r)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        div_wide_rem_portable(hi, lo, d)
    }
}

/// [`div_wide_rem`] in portable 128-bit arithmetic: what every other CPU runs, and the oracle the
/// x86-64 instruction is tested against.
#[inline]
pub fn div_wide_rem_portable(hi: u64, lo: u64, d: u64) -> (u64, u64) {
    let a = ((hi as u128) << 64) | lo as u128;
    ((a / d as u128) as u64, (a % d as u128) as u64)
}

/// `floor((hi * 2**64 + lo) / d)` for `hi < d`: [`div_wide_rem`]'s quotient.
#[inline(always)]
fn div_wide(hi: u64, lo: u64, d: u64) -> u64 {
    div_wide_rem(hi, lo, d).0
}

/// `floor(x * 2**64 / d)` for `x < 2**127 / 2**64 * d`, without a 192-bit intermediate.
#[inline]
pub fn shift_div(x: u128, d: u128) -> i128 {
    if (x | d) >> 64 == 0 {
        // the common case: two 64-bit divisions instead of two 128-bit ones
        return shift_div64(x as u64, d as u64);
    }
    let q = x / d;
    let r = x % d;
    ((q << FRAC_BITS) + ((r << FRAC_BITS) / d)) as i128
}

/// [`shift_div`] of 64-bit operands (`d > 0`): `floor(x · 2**64 / d)` by two 64-bit hardware
/// divisions, exact (the integer part `x / d`, then the remainder's 64 fraction bits).
#[inline]
pub fn shift_div64(x: u64, d: u64) -> i128 {
    let (q, r) = (x / d, x % d);
    (((q as u128) << FRAC_BITS) | div_wide(r, 0, d) as u128) as i128
}

/// `(floor(x / d), x % d)` for `d > 0`: one hardware division ([`div_wide_rem`] of `0:x`).
#[inline(always)]
fn divrem(x: u64, d: u64) -> (u64, u64) {
    debug_assert!(d > 0);
    div_wide_rem(0, x, d)
}

/// `floor(top * 2**64 / d)` for `d > 0`: one division (none for `top == 0`) when `top < d`, as
/// for most cells' F terms (a cell's count is small beside its margins), else two.
#[inline(always)]
pub fn fixed_quot(top: u64, d: u64) -> i128 {
    if top < d {
        if top == 0 {
            0
        } else {
            div_wide(top, 0, d) as i128
        }
    } else {
        let (q, r) = divrem(top, d);
        (((q as u128) << FRAC_BITS) | div_wide(r, 0, d) as u128) as i128
    }
}

/// [`fixed_quot`] for `top > 0` (no test of zero): `floor(top * 2**64 / d)` for `d > 0`.
#[inline(always)]
pub fn fixed_quot_nz(top: u64, d: u64) -> i128 {
    debug_assert!(top > 0 && d > 0);
    if top < d {
        div_wide(top, 0, d) as i128
    } else {
        let (q, r) = divrem(top, d);
        (((q as u128) << FRAC_BITS) | div_wide(r, 0, d) as u128) as i128
    }
}

/// `n * F_e` in fixed point for `beta == 1` ([`FSpec::term`] of a unit spec) of a cell of `n`
/// elements whose margins sum to `s = a + b`; requires `n < 2**31` and `s < 2**63` (then
/// `2n²` and `s` fit in 64 bits). The same value as `FSpec::term`. O(1): at most two divisions.
#[inline(always)]
pub fn unit_term(kind: Kind, n: u64, s: u64) -> i128 {
    match kind {
        Kind::Elm => elm_unit(n, s),
        Kind::Bcubed => bcubed_unit(n, s),
    }
}

/// [`unit_term`] of ELM: `2n(n-1) / (s - 2)`; a cell of one element has no neighbours (0), or
/// is alone in both its clusters (`s == 2`: 1).
#[inline(always)]
fn elm_unit(n: u64, s: u64) -> i128 {
    if n > 1 {
        // s >= 2n >= 4: the divisor is positive; 2n² < 2**63
        fixed_quot(n.wrapping_mul(n - 1).wrapping_mul(2), s.wrapping_sub(2))
    } else {
        ((n == 1 && s == 2) as i128) << FRAC_BITS
    }
}

/// [`unit_term`] of BCubed: `2n² / s` (`s >= 2n > 0` for a present cell).
#[inline(always)]
fn bcubed_unit(n: u64, s: u64) -> i128 {
    if n == 0 {
        0
    } else {
        fixed_quot(n.wrapping_mul(n).wrapping_mul(2), s)
    }
}

/// Add to `acc` (ELM, BCubed; each only when asked for by `want`) the change of a cell's unit
/// terms from `n0` elements with margins summing to `s0` to `n1` with `s1` (bounds of
/// [`unit_term`]). A cell of one element away from singletons has no ELM term either way: no
/// work. Wrapping adds: exact while every partial sum stays a sum of terms (below `2**122`).
#[inline(always)]
pub fn unit_move(acc: &mut [i128; 2], want: [bool; 2], n0: u64, s0: u64, n1: u64, s1: u64) {
    if want[1] {
        acc[1] = acc[1].wrapping_add(bcubed_unit(n1, s1).wrapping_sub(bcubed_unit(n0, s0)));
    }
    if want[0] && ((n0 | n1) > 1 || s0 == 2 || s1 == 2) {
        acc[0] = acc[0].wrapping_add(elm_unit(n1, s1).wrapping_sub(elm_unit(n0, s0)));
    }
}

/// [`unit_move`] for a cell whose count `n > 0` stays (`s0 -> s1`: only a margin moved), into the
/// accumulators `e` (ELM, when `E`) and `b` (BCubed, when `B`) the caller keeps in registers; the
/// kinds are fixed at compile time, so the loops calling this carry no test of them.
#[inline(always)]
pub fn unit_shift<const E: bool, const B: bool>(e: &mut i128, b: &mut i128, n: u64, s0: u64, s1: u64) {
    let nn = n.wrapping_mul(n).wrapping_mul(2);
    if B && n > 0 {
        *b = b.wrapping_add(fixed_quot(nn, s1)).wrapping_sub(fixed_quot(nn, s0));
    }
    if E {
        if n > 1 {
            let top = nn.wrapping_sub(2 * n);
            *e = e.wrapping_add(fixed_quot(top, s1.wrapping_sub(2))).wrapping_sub(fixed_quot(top, s0.wrapping_sub(2)));
        } else if n == 1 && (s0 == 2 || s1 == 2) {
            *e = e.wrapping_add(elm_unit(1, s1)).wrapping_sub(elm_unit(1, s0));
        }
    }
}

/// The bounds within which [`unit_term`] holds, for a cell of `n` elements with margins whose
/// OR is `margins`.
#[inline(always)]
pub fn unit_ok(n: u64, margins: u64) -> bool {
    n < (1 << 31) && margins < (1 << 62)
}

/// `sq / size` in fixed point: a cluster's share of `N * BCubed precision` (or recall).
#[inline]
pub fn bcubed_term(sq: u128, size: u64) -> i128 {
    if size == 0 {
        0
    } else {
        shift_div(sq, size as u128)
    }
}

/// `(sq - size) / (size - 1)` in fixed point, `1` for a singleton, `0` for an empty cluster.
#[inline]
pub fn elm_term(sq: u128, size: u64) -> i128 {
    if size > 1 {
        shift_div(sq - size as u128, (size - 1) as u128)
    } else if size == 1 {
        ONE
    } else {
        0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Elm,
    Bcubed,
}

/// One tracked element-averaged F-score: its kind and `beta**2 = num / den`.
#[derive(Clone, Debug)]
pub struct FSpec {
    pub kind: Kind,
    pub num: BigUint,
    pub den: BigUint,
    /// `(num, den)` when both are below `2**16` (then every product fits in 128 bits).
    small: Option<(u128, u128)>,
    /// `beta == 1` (`num == den == 1`): the common case, in 64-bit arithmetic for cells below 2**31.
    unit: bool,
}

impl FSpec {
    pub fn new(kind: Kind, num: BigUint, den: BigUint) -> FSpec {
        let lim = BigUint::from(1u32 << 16);
        let small = if num < lim && den < lim {
            Some((num.to_u128().unwrap(), den.to_u128().unwrap()))
        } else {
            None
        };
        let unit = small == Some((1, 1));
        FSpec { kind, num, den, small, unit }
    }

    /// `beta == 1`: [`unit_term`] computes this spec's terms.
    pub fn is_unit(&self) -> bool {
        self.unit
    }

    /// `n * F_e` in fixed point for the `n` elements of a cell with row sum `a`, column sum `b`
    /// (Python's `f_term(kind, num, den, n, a, b)`); 0 for an empty cell. The common case
    /// (`beta == 1`, a cell below `2**31`, margins below `2**62`: [`unit_term`]) is inlined into
    /// the caller: at most two hardware divisions. O(1).
    #[inline(always)]
    pub fn term(&self, n: u64, a: u64, b: u64) -> i128 {
        if self.unit && unit_ok(n, a | b) {
            return unit_term(self.kind, n, a + b);
        }
        self.term_general(n, a, b)
    }

    /// [`FSpec::term`] for every case.
    #[inline(never)]
    fn term_general(&self, n: u64, a: u64, b: u64) -> i128 {
        if n == 0 {
            return 0;
        }
        match self.small {
            Some((num, den)) => {
                let (n, a, b) = (n as u128, a as u128, b as u128);
                match self.kind {
                    Kind::Elm => {
                        let d = num * (a - 1) + den * (b - 1);
                        if d == 0 {
                            (n as i128) << FRAC_BITS
                        } else {
                            shift_div((num + den) * n * (n - 1), d)
                        }
                    }
                    Kind::Bcubed => shift_div((num + den) * n * n, num * a + den * b),
                }
            }
            None => self.big_term(n, a, b),
        }
    }

    /// `term(n, x1, y) - term(n, x0, y)` seen from `side` (0: `x` is the row sum `a`, `y` the
    /// column sum `b`; 1: the other way round): the change of one cell's term when one of its
    /// margins changes. The common `beta == 1` case is inlined (its terms are symmetric in the two
    /// margins); the value is the same as the two `term` calls. O(1).
    #[inline(always)]
    pub fn delta(&self, side: usize, n: u64, x0: u64, x1: u64, y: u64) -> i128 {
        if self.unit && unit_ok(n, x0 | x1 | y) {
            // both in [0, 2**127): no overflow
            return unit_term(self.kind, n, x1 + y) - unit_term(self.kind, n, x0 + y);
        }
        if side == 0 {
            self.term(n, x1, y) - self.term(n, x0, y)
        } else {
            self.term(n, y, x1) - self.term(n, y, x0)
        }
    }

    #[cold]
    fn big_term(&self, n: u64, a: u64, b: u64) -> i128 {
        let (num, den) = (&self.num, &self.den);
        let s = num + den;
        let (top, d) = match self.kind {
            Kind::Elm => {
                let d = num * (a - 1) + den * (b - 1);
                if d == BigUint::ZERO {
                    return (n as i128) << FRAC_BITS;
                }
                (s * n * (n - 1), d)
            }
            Kind::Bcubed => (s * n * n, num * a + den * b),
        };
        ((top << FRAC_BITS) / d).to_i128().expect("an F term exceeds 128 bits")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wide_division_is_its_portable_twin() {
        // the edges (d = 1, the largest d, hi = d - 1, lo at both ends), then divisors of every
        // width, each with a random hi < d and lo (xorshift: the same cases on every machine)
        let mut cases = vec![(0, 0, 1), (0, u64::MAX, 1), (0, 5, 3), (u64::MAX - 1, u64::MAX, u64::MAX), (u64::MAX - 1, 0, u64::MAX), (6, u64::MAX, 7)];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = (x >> (i % 64)).max(1);
            let y = x.rotate_left(29);
            cases.push((y % d, x.wrapping_mul(0x2545_F491_4F6C_DD1D), d));
        }
        for (hi, lo, d) in cases {
            let (q, r) = div_wide_rem(hi, lo, d);
            assert_eq!((q, r), div_wide_rem_portable(hi, lo, d), "{hi} {lo} {d}");
            assert!(r < d);
            assert_eq!((q as u128) * d as u128 + r as u128, ((hi as u128) << 64) | lo as u128);
            if hi == 0 {
                assert_eq!(divrem(lo, d), (lo / d, lo % d));
            }
        }
    }

    #[test]
    fn terms_match_their_definitions() {
        assert_eq!(xlogx(0), 0);
        assert_eq!(xlogx(1), 0);
        assert_eq!(bcubed_term(5, 3), (5i128 << 64) / 3);
        assert_eq!(elm_term(1, 1), ONE);
        assert_eq!(elm_term(2, 2), 0);
        assert_eq!(elm_term(4, 2), 2 * ONE);
        // a large cluster: the split division equals the wide one
        let sq: u128 = (1u128 << 100) + 12345;
        let size: u64 = (1u64 << 50) + 7;
        let wide = BigUint::from(sq) << 64u32;
        assert_eq!(bcubed_term(sq, size), (wide / size).to_i128().unwrap());
    }

    #[test]
    fn the_fast_division_equals_the_wide_one() {
        let mut x: u128 = 1;
        for i in 0..2000u128 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407 + i);
            let (a, d) = (x >> 70, ((x >> 5) as u64 as u128) | 1);
            let wide = (BigUint::from(a) << 64u32) / BigUint::from(d);
            assert_eq!(shift_div(a, d), wide.to_i128().unwrap(), "{a} / {d}");
            let small_d = (d & 0xffff) | 1;
            let wide = (BigUint::from(a & 0xffff_ffff) << 64u32) / BigUint::from(small_d);
            assert_eq!(shift_div(a & 0xffff_ffff, small_d), wide.to_i128().unwrap());
        }
    }

    #[test]
    fn small_and_big_f_paths_agree() {
        for kind in [Kind::Elm, Kind::Bcubed] {
            let unit = FSpec::new(kind, BigUint::from(1u32), BigUint::from(1u32));
            for &(n, a, b) in &[(1u64, 1u64, 1u64), (1, 2, 1), (3, 5, 7), (1000, 4000, 1000),
                                (1 << 30, 1 << 40, 1 << 31), (7, 7, 9)] {
                assert_eq!(unit.term(n, a, b), unit.big_term(n, a, b), "{n} {a} {b}");
            }
            let small = FSpec::new(kind, BigUint::from(4u32), BigUint::from(9u32));
            for &(n, a, b) in &[(1u64, 1u64, 1u64), (1, 2, 1), (3, 5, 7), (1000, 4000, 1000)] {
                assert_eq!(small.term(n, a, b), small.big_term(n, a, b));
            }
        }
        let f = FSpec::new(Kind::Bcubed, BigUint::from(1u32), BigUint::from(1u32));
        assert_eq!(f.term(1, 2, 1), (2i128 << 64) / 3);
        // the inlined change of a term equals the difference of the two terms, from either side
        for kind in [Kind::Elm, Kind::Bcubed] {
            for (num, den) in [(1u32, 1u32), (4, 9)] {
                let f = FSpec::new(kind, BigUint::from(num), BigUint::from(den));
                for &(n, x0, x1, y) in &[(1u64, 1u64, 2u64, 1u64), (1, 2, 1, 1), (3, 5, 7, 9),
                                          (1000, 4000, 3999, 1000), (7, 7, 8, 7), (1 << 31, 1 << 40, (1 << 40) + 1, 1 << 33)] {
                    assert_eq!(f.delta(0, n, x0, x1, y), f.term(n, x1, y) - f.term(n, x0, y));
                    assert_eq!(f.delta(1, n, x0, x1, y), f.term(n, y, x1) - f.term(n, y, x0));
                }
            }
        }
    }
}
