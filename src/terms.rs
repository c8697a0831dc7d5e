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

/// `floor((hi * 2**64 + lo) / d)` for `hi < d`: one hardware division on x86-64.
#[inline]
fn div_wide(hi: u64, lo: u64, d: u64) -> u64 {
    debug_assert!(hi < d);
    #[cfg(target_arch = "x86_64")]
    {
        let q: u64;
        // SAFETY: `div` divides rdx:rax by the operand; hi < d, so the quotient fits in 64 bits
        // and the instruction cannot fault.
        unsafe {
            std::arch::asm!("div {d}", d = in(reg) d, inout("rax") lo => q, inout("rdx") hi => _,
                            options(pure, nomem, nostack));
        }
        q
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ((((hi as u128) << 64) | lo as u128) / d as u128) as u64
    }
}

/// `floor(x * 2**64 / d)` for `x < 2**127 / 2**64 * d`, without a 192-bit intermediate.
#[inline]
pub fn shift_div(x: u128, d: u128) -> i128 {
    if (x | d) >> 64 == 0 {
        // the common case: two 64-bit divisions instead of two 128-bit ones
        let (x, d) = (x as u64, d as u64);
        let (q, r) = (x / d, x % d);
        return (((q as u128) << FRAC_BITS) | div_wide(r, 0, d) as u128) as i128;
    }
    let q = x / d;
    let r = x % d;
    ((q << FRAC_BITS) + ((r << FRAC_BITS) / d)) as i128
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

    /// `n * F_e` in fixed point for the `n` elements of a cell with row sum `a`, column sum `b`
    /// (Python's `f_term(kind, num, den, n, a, b)`); 0 for an empty cell. The common case
    /// (`beta == 1`, a non-empty cell below `2**31`, margins below `2**62`, no `0/0`) is inlined
    /// into the caller: two hardware divisions. O(1).
    #[inline(always)]
    pub fn term(&self, n: u64, a: u64, b: u64) -> i128 {
        if self.unit && n.wrapping_sub(1) < (1 << 31) - 1 && (a | b) < (1 << 62) {
            // 2n² and a + b fit in 64 bits: the same value as the general path, in fewer steps
            let (top, d) = match self.kind {
                Kind::Elm => (2 * n * (n - 1), (a + b).wrapping_sub(2)),
                Kind::Bcubed => (2 * n * n, a + b),
            };
            if d != 0 {
                if top == 0 {
                    return 0; // ELM, a cell of one element: no neighbours, no division
                }
                let (q, r) = (top / d, top % d);
                return (((q as u128) << FRAC_BITS) | div_wide(r, 0, d) as u128) as i128;
            }
        }
        self.term_general(n, a, b)
    }

    /// [`FSpec::term`] for every case.
    #[inline(never)]
    fn term_general(&self, n: u64, a: u64, b: u64) -> i128 {
        if n == 0 {
            return 0;
        }
        if self.unit && n < (1 << 31) && a < (1 << 62) && b < (1 << 62) {
            let (top, d) = match self.kind {
                Kind::Elm => (2 * n * (n - 1), a + b - 2),
                Kind::Bcubed => (2 * n * n, a + b),
            };
            if d == 0 {
                return (n as i128) << FRAC_BITS;
            }
            return shift_div(top as u128, d as u128);
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
        const LIM: u64 = 1 << 62;
        if self.unit && n < (1 << 31) && (x0 | x1 | y) < LIM {
            // no overflow within these bounds: n < 2**31 and x, y < 2**62 (plain wrapping ops)
            let (top, off) = match self.kind {
                Kind::Elm => (n.wrapping_mul(n.wrapping_sub(1)).wrapping_mul(2), 2),
                Kind::Bcubed => (n.wrapping_mul(n).wrapping_mul(2), 0),
            };
            let t = |x: u64| {
                let d = x.wrapping_add(y).wrapping_sub(off);
                if d == 0 {
                    (n as i128) << FRAC_BITS
                } else if top == 0 {
                    0 // ELM, a cell of one element
                } else {
                    // shift_div's 64-bit case: top and d are below 2**64
                    let (q, r) = (top / d, top % d);
                    (((q as u128) << FRAC_BITS) | div_wide(r, 0, d) as u128) as i128
                }
            };
            return t(x1).wrapping_sub(t(x0)); // both in [0, 2**127): no overflow
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
            let (a, d) = ((x >> 70) as u128, ((x >> 5) as u64 as u128) | 1);
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
