//! The per-point arithmetic of `streameval.ClusterSummaries` and the silhouettes, in Rust.
//!
//! Pure functions over slices (tested by `cargo test`); `summaries_py` binds them to the numpy
//! arrays a `ClusterSummaries` owns. Each follows the Python reference operation for operation
//! (`streameval/summaries.py`, `streameval/intrinsic.py`, `streameval/_unit.py`): element-wise
//! steps give the same bits; sums of `d` terms (dot products) are summed left to right here and
//! in numpy's order there, so they agree to `d` ulps of the sum of their absolute terms, except
//! the sums of squares of an update ([`welford`]'s `||x - mean||²`, a cosine vector's norm by
//! [`dot`]), which the reference adds left to right too (`summaries._sum_sq`): updates give the
//! same bits on both sides, and on every path (single, block, a new cluster's).

use smallvec::SmallVec;

/// `sum_i a_i·b_i`, left to right.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// `sum_i (a_i - b_i)²` in four interleaved partial sums (`i mod 4`) of the first `4·⌊d/4⌋`
/// terms, added pairwise at the end (`(s_0 + s_1) + (s_2 + s_3)`), then the `d mod 4` last terms
/// left to right: a fixed order on every machine (no fused multiply-add), which the compiler and
/// the kernel of [`sq_dists`] turn into vector code (one 256-bit register per row). Like any order
/// of `d` non-negative terms, within `(d - 1)·ε` of the exact sum.
#[inline(always)]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            let t = x[l] - y[l];
            acc[l] += t * t;
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        let t = x - y;
        s += t * t;
    }
    s
}

/// `hi + lo += x` without losing the rounding error of the addition (Knuth's TwoSum): the pair
/// holds the running sum to `~ε²` of the terms' magnitudes, whatever the number of steps.
#[inline]
pub fn add_to(acc: &mut (f64, f64), x: f64) {
    let s = acc.0 + x;
    let bp = s - acc.0;
    acc.1 += (acc.0 - (s - bp)) + (x - bp);
    acc.0 = s;
}

/// Welford's weighted step on `(n, mean, m2)`: add `w` copies of `x` (`w < 0` removes them),
/// leaving `n2 = n + w > 0`. Returns the new scatter (0 for one element, clamped at 0).
/// `mean' = mean + (x - mean)·(w/n2)`, `M2' = M2 + (w·n/n2)·||x - mean||²`.
pub fn welford(mean: &mut [f64], m2: f64, n: i64, w: i64, x: &[f64]) -> f64 {
    let (f, wn) = ratios(n, w);
    welford_with(mean, m2, f, wn, n + w, x)
}

/// Welford's two factors for adding `w` to `n` elements: `(w/n2, w·n/n2)`, each a correctly
/// rounded quotient of the two integers converted to the nearest doubles (Python's `w / n2` and
/// `(w * n) / n2` for integers below `2**53`).
#[inline]
pub fn ratios(n: i64, w: i64) -> (f64, f64) {
    let n2 = n + w;
    debug_assert!(n2 > 0);
    let f = w as f64 / n2 as f64; // both below 2**63: each converted to the nearest double, as i128 would
    let wn = match w.checked_mul(n) {
        Some(p) => p as f64 / n2 as f64, // the same double as the i128 product gives: one rounding
        None => ratio(w as i128 * n as i128, n2 as i128),
    };
    (f, wn)
}

/// [`welford`] with its factors `(f, wn)` = [`ratios`]`(n, w)` given and `n2 = n + w`.
#[inline]
pub fn welford_with(mean: &mut [f64], m2: f64, f: f64, wn: f64, n2: i64, x: &[f64]) -> f64 {
    let mut sq = 0.0;
    for (m, xi) in mean.iter_mut().zip(x) {
        let delta = xi - *m;
        sq += delta * delta;
        *m += delta * f;
    }
    let m2 = m2 + wn * sq;
    if m2 > 0.0 && n2 > 1 {
        m2
    } else {
        0.0
    }
}

/// The summaries a block of rows updates: `count`, `mean` (`cap × d`), `m2` per slot, the global
/// `(n, gmean, gm2)`.
pub struct Block<'a> {
    pub count: &'a mut [i64],
    pub mean: &'a mut [f64],
    pub m2: &'a mut [f64],
    pub gmean: &'a mut [f64],
    pub d: usize,
}

/// Where each row of a block goes: `labels[i]` is its slot, or (with `table`) `table[labels[i]]`.
#[derive(Clone, Copy)]
pub struct Targets<'a> {
    pub labels: &'a [i64],
    pub table: Option<&'a [i64]>,
}

impl Targets<'_> {
    /// Whether every row's slot lies below `cap` (a label outside the table does not). One
    /// branch-free pass over the labels (vector code), plus one over the table.
    fn within(&self, cap: usize) -> bool {
        let below = |vs: &[i64], len: usize| vs.iter().fold(true, |ok, &v| ok & ((v as u64) < len as u64));
        match self.table {
            Some(t) => below(self.labels, t.len()) && below(t, cap),
            None => below(self.labels, cap),
        }
    }
}

/// Add row `i` of `data` (`m × d`, already in the summaries' space) with weight `ws[i]` (`ws`
/// `None`: all 1) to its slot (see [`Targets`]) and to the global summary of `n` elements and
/// scatter `gm2`, marking each touched slot's entry of `touched` with `version`: the very
/// steps of [`welford`], in order, so the state is bit for bit the one single updates give.
/// Everything is checked first (every slot below the arrays' capacity, every weight positive,
/// `data` of the rows' length); on a failure the state is untouched and the error names it.
/// Returns the new global scatter. O(m·d), plus the table's length.
///
/// For d ≤ 4 (while every count stays below 2**53, so that the integers and their products are
/// the doubles [`ratios`] divides), one pass, each row's step fused with its factors: the four
/// quotients of a row (two per summary, divided two at a time) do not depend on the means, so
/// they run beside the chain of dependent operations that the global mean is (a subtraction,
/// a product and an addition per row); no array per row is made.
#[allow(clippy::too_many_arguments)]
pub fn welford_rows(
    b: &mut Block,
    to: Targets,
    ws: Option<&[i64]>,
    data: &[f64],
    n: i64,
    gm2: f64,
    touched: &mut [i64],
    version: i64,
) -> Result<f64, &'static str> {
    let (d, m) = (b.d, to.labels.len());
    let cap = b.count.len();
    if data.len() != m * d || ws.is_some_and(|w| w.len() != m) {
        return Err("the rows, their labels and their weights differ in length");
    }
    if !(to.within(cap) && touched.len() >= cap && b.m2.len() >= cap && b.mean.len() >= cap * d && b.gmean.len() >= d) {
        return Err("slots must lie in the arrays");
    }
    let total = match ws {
        Some(w) => {
            if w.iter().fold(false, |bad, &v| bad | (v <= 0)) {
                return Err("weights must be positive");
            }
            w.iter().try_fold(n, |acc, &v| acc.checked_add(v))
        }
        None => n.checked_add(m as i64),
    };
    let Some(total) = total else {
        return Err("the total weight overflows 64 bits");
    };
    let small = n >= 0 && total < 1 << 53;
    if (1..=4).contains(&d) && small {
        // SAFETY: every slot lies below `cap`, the length of `count`, `m2`, `touched` and of
        // `mean` in rows of d; every weight is positive and every count stays below 2**53
        // (all checked above); `data` holds m rows of d.
        return Ok(unsafe {
            match (to.table, ws) {
                (Some(t), Some(w)) => fused_d(b, m, |r| *t.get_unchecked(*to.labels.get_unchecked(r) as usize) as usize, |r| *w.get_unchecked(r), data, n, gm2, touched, version),
                (Some(t), None) => fused_d(b, m, |r| *t.get_unchecked(*to.labels.get_unchecked(r) as usize) as usize, |_| 1, data, n, gm2, touched, version),
                (None, Some(w)) => fused_d(b, m, |r| *to.labels.get_unchecked(r) as usize, |r| *w.get_unchecked(r), data, n, gm2, touched, version),
                (None, None) => fused_d(b, m, |r| *to.labels.get_unchecked(r) as usize, |_| 1, data, n, gm2, touched, version),
            }
        });
    }
    // d > 4 (the O(d) steps outweigh the rest), or counts from 2**53 (the factors through the
    // integers, as `ratios` has them): row by row
    let slot = |r: usize| match to.table {
        Some(t) => t[to.labels[r] as usize] as usize,
        None => to.labels[r] as usize,
    };
    let (mut n, mut gm2) = (n, gm2);
    for r in 0..m {
        let (s, w, x) = (slot(r), ws.map_or(1, |w| w[r]), &data[r * d..(r + 1) * d]);
        let c = b.count[s];
        b.m2[s] = welford(&mut b.mean[s * d..(s + 1) * d], b.m2[s], c, w, x);
        b.count[s] = c + w;
        touched[s] = version;
        gm2 = welford(b.gmean, gm2, n, w, x);
        n += w;
    }
    Ok(gm2)
}

/// The fused pass of [`welford_rows`] for the dimension `b.d` (1 to 4), with AVX2 where the CPU
/// has it (the same operations: correctly rounded quotients, no fused multiply-add).
///
/// # Safety
/// As [`fused`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn fused_d<S: Fn(usize) -> usize, W: Fn(usize) -> i64>(b: &mut Block, m: usize, slot: S, weight: W, data: &[f64], n: i64, gm2: f64, touched: &mut [i64], version: i64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2_path() {
            return match b.d {
                1 => fused_avx2::<1, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
                2 => fused_avx2::<2, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
                3 => fused_avx2::<3, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
                _ => fused_avx2::<4, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
            };
        }
    }
    match b.d {
        1 => fused::<1, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
        2 => fused::<2, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
        3 => fused::<3, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
        _ => fused::<4, S, W>(b, m, slot, weight, data, n, gm2, touched, version),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn fused_avx2<const D: usize, S: Fn(usize) -> usize, W: Fn(usize) -> i64>(b: &mut Block, m: usize, slot: S, weight: W, data: &[f64], n: i64, gm2: f64, touched: &mut [i64], version: i64) -> f64 {
    fused::<D, S, W>(b, m, slot, weight, data, n, gm2, touched, version)
}

/// One pass over `m` rows of dimension `D`: row `r` (weight `weight(r)`) to slot `slot(r)` and
/// to the global summary, [`welford_with`]'s operations with [`ratios`]' quotients.
///
/// # Safety
/// `slot(r) < b.count.len()` for every `r < m`, and `b.mean`, `b.m2`, `touched` cover that many
/// slots; `data` holds `m` rows of `D`; `b.gmean` holds `D`; every weight is positive and
/// `n + (the weights' sum) < 2**53`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn fused<const D: usize, S: Fn(usize) -> usize, W: Fn(usize) -> i64>(b: &mut Block, m: usize, slot: S, weight: W, data: &[f64], n: i64, gm2: f64, touched: &mut [i64], version: i64) -> f64 {
    // [`welford_with`] on arrays of D by value (the global mean stays in registers)
    #[inline(always)]
    fn step<const D: usize>(mean: [f64; D], m2: f64, f: f64, wn: f64, more: bool, x: &[f64; D]) -> ([f64; D], f64) {
        let mut sq = 0.0;
        let mut out = mean;
        for i in 0..D {
            let delta = x[i] - mean[i];
            sq += delta * delta;
            out[i] = mean[i] + delta * f;
        }
        let m2 = m2 + wn * sq;
        (out, if m2 > 0.0 && more { m2 } else { 0.0 })
    }
    #[inline(always)]
    fn div2(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
        [a[0] / b[0], a[1] / b[1]]
    }
    let (cp, mp, qp, tp) = (b.count.as_mut_ptr(), b.mean.as_mut_ptr() as *mut [f64; D], b.m2.as_mut_ptr(), touched.as_mut_ptr());
    let xp = data.as_ptr() as *const [f64; D];
    let g: &mut [f64; D] = &mut *(b.gmean.as_mut_ptr() as *mut [f64; D]);
    let (mut gv, mut gm2, mut n) = (*g, gm2, n);
    for r in 0..m {
        let (s, w) = (slot(r), weight(r));
        let c = *cp.add(s);
        // counts below 2**53: no overflow, and every integer here (and w·c, w·n) is the double
        // it converts to, or that double correctly rounded, as `ratios` has them
        let (cw, nw) = (c.wrapping_add(w), n.wrapping_add(w));
        *cp.add(s) = cw;
        *tp.add(s) = version;
        let wf = w as f64;
        let [f, wc] = div2([wf, wf * c as f64], [cw as f64, cw as f64]);
        let [gf, gwn] = div2([wf, wf * n as f64], [nw as f64, nw as f64]);
        let x = &*xp.add(r);
        let (mean, q) = (mp.add(s), qp.add(s));
        (*mean, *q) = step(*mean, *q, f, wc, cw > 1, x);
        (gv, gm2) = step(gv, gm2, gf, gwn, nw > 1, x);
        n = nw;
    }
    *g = gv;
    gm2
}

/// Whether the kernels take their AVX2 path: [`Simd::detect`] chose it (the CPU has AVX2 and
/// `STREAMEVAL_SIMD` is not `plain`; read once, then a cached value), so that the variable sends
/// every kernel down the path of a CPU without AVX2, not only the distance rows. The kernels that
/// take an AVX2 path compile one generic body twice (plain and with AVX2 enabled): the same IEEE
/// operations in the same order, no fused multiply-add, so both give the same bits (tested per
/// kernel, and by the Python tests run in a process per path).
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn avx2_path() -> bool {
    Simd::detect() == Simd::Avx2
}

/// The bound on the magnitude of a vector's values (`MAX_VECTOR_VALUE` in
/// `streameval/_validate.py`): below it every squared distance and every scatter over fewer than
/// `2**57` elements stays finite.
pub const MAX_VECTOR_VALUE: f64 = 1.157_920_892_373_162e77; // 2**256, exactly

/// The index of the first of `values` that is NaN, infinite or of magnitude `2**256` or more, if
/// any: blocks of 512 tested at once (the exponent bits compared: vector code), the rare block
/// with a hit searched. O(len).
pub fn first_out_of_range(values: &[f64]) -> Option<usize> {
    const EXP: u64 = 0x7ff0_0000_0000_0000;
    const LIMIT: u64 = (1023 + 256) << 52; // the exponent field of 2**256; NaN and inf have 0x7ff
    for (bi, block) in values.chunks(512).enumerate() {
        if block.iter().fold(false, |acc, t| acc | (t.to_bits() & EXP >= LIMIT)) {
            return block.iter().position(|t| t.is_nan() || t.abs() >= MAX_VECTOR_VALUE).map(|i| bi * 512 + i);
        }
    }
    None
}

/// `a / b` as Python's true division of ints rounds it (correctly rounded) for `|a|, |b| < 2**53`;
/// beyond, within an ulp.
#[inline]
fn ratio(a: i128, b: i128) -> f64 {
    a as f64 / b as f64
}

/// The smallest sum of squares [`unit_parts`] and [`to_unit`] take as it is: from `2**-960` up
/// (and below infinity) a square that underflows moves the sum by `≤ 2**-1075`, a relative
/// `≤ 2**-115` of it (`_unit.NORM_FLOOR`).
pub const NORM_FLOOR: f64 = f64::from_bits(63 << 52);

/// `2**k` for `-1074 <= k <= 1023`, exactly.
fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// `2**k` as two factors applied in turn (`(x·f1)·f2`): upward in two exact halves (each at most
/// `2**537`), downward in one multiplication (one rounding, `2**k >= 2**-1074`): `_unit.pow2_pair`.
fn pow2_pair(k: i32) -> (f64, f64) {
    if k > 0 {
        (pow2(k - k / 2), pow2(k / 2))
    } else {
        (pow2(k), 1.0)
    }
}

/// `k` with `max_i |a_i|·2**k` in `[1/2, 1)` (minus `frexp`'s exponent of the largest
/// magnitude); 0 when every value is 0 or one is not finite. O(d).
fn pow2_exponent(a: &[f64]) -> i32 {
    let m = a.iter().fold(0.0f64, |m, x| if x.abs() > m || x.is_nan() { x.abs() } else { m });
    if m == 0.0 || !m.is_finite() {
        return 0;
    }
    let (m, shift) = if m < f64::MIN_POSITIVE { (m * pow2(64), 64) } else { (m, 0) };
    -((((m.to_bits() >> 52) & 0x7ff) as i32 - 1022) - shift)
}

/// `a·2**k` for [`pow2_exponent`]'s `k` (its largest magnitude in `[1/2, 1)`: the sum of squares
/// neither underflows nor overflows), and `k`: `_unit.scaled_rows`. Exact but for values that
/// become subnormal when a vector of values near the overflow threshold is scaled down (an
/// absolute `≤ 2**-1075` each). O(d).
fn pow2_scaled(a: &[f64]) -> (Vec<f64>, i32) {
    let k = pow2_exponent(a);
    let (f1, f2) = pow2_pair(k);
    (a.iter().map(|x| x * f1 * f2).collect(), k)
}

/// The unit vector of `a` as `hi + lo` (`hi = fl(a/norm)`, `lo` the exact residual over the
/// norm, by a fused multiply-add) and `norm = fl(||a||)`: `_unit.unit_parts`. Zero: all 0. A
/// vector whose sum of squares is below [`NORM_FLOOR`] or infinite is first scaled by a power of
/// two ([`pow2_scaled`]) and its norm scaled back (which may round to a subnormal or overflow);
/// every other vector takes the plain steps. O(d).
pub fn unit_parts(a: &[f64], hi: &mut [f64], lo: &mut [f64]) -> f64 {
    let s = dot(a, a);
    if (NORM_FLOOR..f64::INFINITY).contains(&s) {
        return unit_parts_of(a, s, hi, lo);
    }
    let (b, k) = pow2_scaled(a);
    let norm = unit_parts_of(&b, dot(&b, &b), hi, lo);
    let (g1, g2) = pow2_pair(-k);
    norm * g1 * g2
}

/// [`unit_parts`] of `a` with its sum of squares `s`, unscaled.
fn unit_parts_of(a: &[f64], s: f64, hi: &mut [f64], lo: &mut [f64]) -> f64 {
    let norm = s.sqrt();
    let safe = if norm > 0.0 { norm } else { 1.0 };
    for ((h, l), x) in hi.iter_mut().zip(lo.iter_mut()).zip(a) {
        *h = x / safe;
        *l = (-*h).mul_add(safe, *x) / safe; // x - h·safe, rounded once
    }
    norm
}

/// `v` scaled to unit length in place as the cosine space's input paths scale a vector,
/// `v / fl(sqrt(Σ v_i²))` (the squares added as in [`dot`]), after [`pow2_scaled`] when the sum of
/// squares is below [`NORM_FLOOR`] or infinite; `false` (and `v` unchanged) when every value is
/// 0: `summaries.ClusterSummaries.vector`. O(d).
pub fn to_unit(v: &mut [f64]) -> bool {
    let mut s = dot(v, v);
    if !(NORM_FLOOR..f64::INFINITY).contains(&s) {
        if v.iter().all(|t| *t == 0.0) {
            return false;
        }
        let (b, _) = pow2_scaled(v);
        v.copy_from_slice(&b);
        s = dot(v, v);
    }
    let norm = s.sqrt();
    for t in v.iter_mut() {
        *t /= norm;
    }
    true
}

/// `||u - v||²/2` for unit vectors as `hi + lo`: the cosine distance without cancellation. The
/// squares summed as in [`sq_dist`].
#[inline]
pub fn unit_half_sq(ha: &[f64], la: &[f64], hb: &[f64], lb: &[f64]) -> f64 {
    let n = ha.len();
    let (la, hb, lb) = (&la[..n], &hb[..n], &lb[..n]);
    let mut acc = [0.0f64; 4];
    let full = n - n % 4;
    let mut i = 0;
    while i < full {
        for l in 0..4 {
            let t = (ha[i + l] - hb[i + l]) + (la[i + l] - lb[i + l]);
            acc[l] += t * t;
        }
        i += 4;
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for i in full..n {
        let t = (ha[i] - hb[i]) + (la[i] - lb[i]);
        s += t * t;
    }
    0.5 * s
}

/// The summaries a view reads: `width` slots of `counts` (0 at a free slot), `means`
/// (`width × d`, row-major) and scatters `m2`.
pub struct Slots<'a> {
    pub counts: &'a [i64],
    pub means: &'a [f64],
    pub m2: &'a [f64],
    pub d: usize,
}

/// The kernels' running state as bytes (pickling: `SummaryKernel.state`, `DaviesBouldinKernel.state`):
/// integers and doubles little-endian, each list preceded by its length. The sums carried this way
/// (an `hi + lo` pair, a moving anchor) depend on the order of the steps that made them, not only
/// on the summaries; a copy rebuilt from the summaries alone could read differently in the last bit.
#[derive(Default)]
pub struct StateOut(pub Vec<u8>);

impl StateOut {
    pub fn int(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub fn num(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub fn nums(&mut self, v: &[f64]) {
        self.int(v.len() as i64);
        for &t in v {
            self.num(t);
        }
    }

    pub fn ints(&mut self, v: impl ExactSizeIterator<Item = i64>) {
        self.int(v.len() as i64);
        for t in v {
            self.int(t);
        }
    }
}

/// Reads what [`StateOut`] wrote; `None` on bytes that end early or a length out of range.
pub struct StateIn<'a> {
    buf: &'a [u8],
}

impl<'a> StateIn<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        StateIn { buf }
    }

    fn word(&mut self) -> Option<[u8; 8]> {
        let (head, rest) = self.buf.split_at_checked(8)?;
        self.buf = rest;
        head.try_into().ok()
    }

    pub fn int(&mut self) -> Option<i64> {
        self.word().map(i64::from_le_bytes)
    }

    pub fn num(&mut self) -> Option<f64> {
        self.word().map(f64::from_le_bytes)
    }

    fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.int()?).ok()?;
        (n <= self.buf.len() / 8).then_some(n)
    }

    pub fn nums(&mut self) -> Option<Vec<f64>> {
        let n = self.len()?;
        (0..n).map(|_| self.num()).collect()
    }

    pub fn ints(&mut self) -> Option<Vec<i64>> {
        let n = self.len()?;
        (0..n).map(|_| self.int()).collect()
    }

    /// Whether every byte was read.
    pub fn done(&self) -> bool {
        self.buf.is_empty()
    }
}

/// What the views derive from each slot, kept per slot and refreshed only for the slots that
/// changed (`SlotCache::set`, O(d)): the sum of the scatters `M2_j` (SSW, as `hi + lo` by
/// TwoSum, so exact to `~ε²` of the scatters whatever the number of changes), `q_j = M2_j/b_j`, the Davies-Bouldin scatter `S_j` (RMS
/// `sqrt(q_j)`, or the cosine one `q_j/(1 + ||mean_j||)`), their sum over the slots as an
/// unevaluated `hi + lo` (TwoSum: the compactness in O(1)), and in the cosine space the mean's
/// norm `r_j` and unit vector as `hi + lo` ([`unit_parts`]). A free slot: all 0. Every entry is the
/// very value the formula gives from the slot (the same operations in the same order), so a read
/// through the cache equals a read from the arrays bit for bit.
#[derive(Default)]
pub struct SlotCache {
    pub cosine: bool,
    pub d: usize,
    pub q: Vec<f64>,
    pub s: Vec<f64>,
    pub r: Vec<f64>,
    pub uh: Vec<f64>,
    pub ul: Vec<f64>,
    pub sum_s: (f64, f64),
    m2: Vec<f64>,           // each slot's scatter as it entered `sum_m2`
    pub sum_m2: (f64, f64), // SSW, as `hi + lo`
}

impl SlotCache {
    /// Empty caches for `cap` slots of dimension `d` (every slot then needs [`SlotCache::set`]).
    pub fn new(cap: usize, d: usize, cosine: bool) -> Self {
        let ud = if cosine { cap * d } else { 0 };
        SlotCache {
            cosine,
            d,
            q: vec![0.0; cap],
            s: vec![0.0; cap],
            r: vec![0.0; cap],
            uh: vec![0.0; ud],
            ul: vec![0.0; ud],
            sum_s: (0.0, 0.0),
            m2: vec![0.0; cap],
            sum_m2: (0.0, 0.0),
        }
    }

    /// The cache as bytes ([`StateOut`]).
    pub fn save(&self, out: &mut StateOut) {
        for v in [&self.q, &self.s, &self.r, &self.uh, &self.ul, &self.m2] {
            out.nums(v);
        }
        for (hi, lo) in [self.sum_s, self.sum_m2] {
            out.num(hi);
            out.num(lo);
        }
    }

    /// The cache [`SlotCache::save`] wrote, for `cap` slots of dimension `d`; `None` when the
    /// bytes do not fit.
    pub fn load(inp: &mut StateIn, cap: usize, d: usize, cosine: bool) -> Option<Self> {
        let ud = if cosine { cap * d } else { 0 };
        let mut v: Vec<Vec<f64>> = Vec::with_capacity(6);
        for want in [cap, cap, cap, ud, ud, cap] {
            let got = inp.nums()?;
            if got.len() != want {
                return None;
            }
            v.push(got);
        }
        let sum_s = (inp.num()?, inp.num()?);
        let sum_m2 = (inp.num()?, inp.num()?);
        let m2 = v.pop()?;
        let ul = v.pop()?;
        let uh = v.pop()?;
        let r = v.pop()?;
        let s = v.pop()?;
        let q = v.pop()?;
        Some(SlotCache { cosine, d, q, s, r, uh, ul, sum_s, m2, sum_m2 })
    }

    /// Slot `j` anew from the summaries (its old scatter leaves the sum, the new one enters).
    pub fn set(&mut self, sl: &Slots, j: usize) {
        let d = self.d;
        let c = sl.counts[j];
        let mean = &sl.means[j * d..(j + 1) * d];
        add_to(&mut self.sum_s, -self.s[j]);
        add_to(&mut self.sum_m2, -self.m2[j]);
        self.m2[j] = if c > 0 { sl.m2[j] } else { 0.0 };
        add_to(&mut self.sum_m2, self.m2[j]);
        if c <= 0 {
            self.q[j] = 0.0;
            self.s[j] = 0.0;
            self.r[j] = 0.0;
            if self.cosine {
                self.uh[j * d..(j + 1) * d].fill(0.0);
                self.ul[j * d..(j + 1) * d].fill(0.0);
            }
            return;
        }
        let q = sl.m2[j] / c as f64;
        self.q[j] = q;
        if self.cosine {
            let r = unit_parts(mean, &mut self.uh[j * d..(j + 1) * d], &mut self.ul[j * d..(j + 1) * d]);
            self.r[j] = r;
            self.s[j] = q / (1.0 + r);
        } else {
            self.s[j] = q.sqrt();
        }
        add_to(&mut self.sum_s, self.s[j]);
    }

    /// The unit vector of slot `j`'s mean as `(hi, lo)` (cosine space).
    #[inline]
    fn unit(&self, j: usize) -> (&[f64], &[f64]) {
        let d = self.d;
        (&self.uh[j * d..(j + 1) * d], &self.ul[j * d..(j + 1) * d])
    }
}

/// The slots whose version in `touched` (versions `>= 0`) is above `since` (`>= -1`), in order:
/// blocks of 16 tested at once (the sign bits of `since - t` or-ed: vector code), the rare block
/// with a hit enumerated. O(width).
pub fn changed_after(touched: &[i64], since: i64) -> Vec<usize> {
    let mut out = Vec::new();
    let blocks = touched.chunks_exact(16);
    let rest = blocks.remainder();
    for (b, block) in blocks.enumerate() {
        let mut acc = [0i64; 16];
        for (a, &t) in acc.iter_mut().zip(block) {
            *a = since.wrapping_sub(t);
        }
        if acc.iter().fold(0, |x, &y| x | y) < 0 {
            out.extend(block.iter().enumerate().filter(|(_, &t)| t > since).map(|(j, _)| 16 * b + j));
        }
    }
    let base = touched.len() - rest.len();
    out.extend(rest.iter().enumerate().filter(|(_, &t)| t > since).map(|(j, _)| base + j));
    out
}

/// `(b - a)/max(a, b)` of a point, from `a` and `b` as [`silhouette`] defines them.
#[inline]
fn score_of(s: &Slots, b: f64, own: usize, singleton: f64, a: impl FnOnce(f64) -> f64) -> f64 {
    if !b.is_finite() {
        return f64::NAN;
    }
    let bo = s.counts[own];
    if bo == 1 {
        return singleton;
    }
    let a = if bo > 1 { a(bo as f64) } else { 0.0 };
    let big = a.max(b);
    if big > 0.0 {
        (b - a) / big
    } else {
        0.0
    }
}

/// The silhouette of `x`, a member of the cluster in slot `own`, against the summaries and
/// their cache: `(b - a)/max(a, b)` (0 when both are 0), `singleton` when its cluster holds one
/// element, NaN when no other cluster exists (`Silhouette._scores` for one point).
///
/// Squared Euclidean (`cosine = false`): the mean distance to cluster `j` is
/// `||x - mean_j||² + M2_j/b_j`, to the other members of its own `(b·||x - mean||² + M2)/(b - 1)`.
/// Cosine (unit `x`, means of unit vectors): `1 - x·mean_j` computed as
/// `(M2_j/b_j)/(1 + r_j) + r_j·||x - mean_j/r_j||²/2` (`r_j = ||mean_j||`; 1 for a zero mean),
/// clipped to `[0, 2]`, and `b·(1 - x·mean)/(b - 1)` to its own. Cost O(k·d).
pub fn silhouette(s: &Slots, cache: &SlotCache, x: &[f64], own: usize, singleton: f64, cosine: bool) -> f64 {
    let d = s.d;
    if !cosine {
        let mut b = f64::INFINITY;
        for j in 0..s.counts.len() {
            if j != own && s.counts[j] > 0 {
                b = b.min(sq_dist(x, &s.means[j * d..(j + 1) * d]) + cache.q[j]);
            }
        }
        let mean = &s.means[own * d..(own + 1) * d];
        return score_of(s, b, own, singleton, |bf| (bf * sq_dist(x, mean) + s.m2[own]) / (bf - 1.0));
    }
    let (mut xh, mut xl) = (vec![0.0; d], vec![0.0; d]);
    unit_parts(x, &mut xh, &mut xl);
    let diss = |j: usize| -> f64 {
        let r = cache.r[j];
        let near = if r > 0.0 {
            let (h, l) = cache.unit(j);
            unit_half_sq(&xh, &xl, h, l)
        } else {
            1.0
        };
        (cache.s[j] + r * near).clamp(0.0, 2.0)
    };
    let mut b = f64::INFINITY;
    for j in 0..s.counts.len() {
        if j != own && s.counts[j] > 0 {
            b = b.min(diss(j));
        }
    }
    score_of(s, b, own, singleton, |bf| bf * diss(own) / (bf - 1.0))
}

/// [`silhouette`] in the Euclidean space with the distances between means at hand: `row[j]`,
/// the distance from the mean of `own` to that of `j`. By the triangle inequality
/// `||x - mean_j|| >= row[j] - ||x - mean_own||`, so cluster `j` cannot hold the nearest mean
/// distance `b` when `max(0, row[j] - r)² + M2_j/b_j` is above the best found: it is skipped
/// without reading its mean. The bound is shrunk by `BOUND_SAFE` (a relative `2⁻³⁰`, far above the
/// `(d + 8)·ε` rounding of `row[j]`, `r` and the squares, for any `d < 2²⁰`), so a skipped cluster's exact
/// value is above the best's; the best is the minimum of the same computed values as the full
/// scan's up to their own rounding (each within `(d + 2)·ε`, and so is their minimum). The nearest
/// candidates by the bound are taken first. O(k) plus O(d) per cluster not skipped (on
/// separated clusters a few; at worst all, O(k·d)).
pub fn silhouette_pruned(s: &Slots, cache: &SlotCache, x: &[f64], own: usize, singleton: f64, row: &[f64], lb: &mut Vec<f64>) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2_path() {
            // SAFETY: the CPU has AVX2 (`avx2_path` checked it just above).
            return unsafe { silhouette_pruned_avx2(s, cache, x, own, singleton, row, lb) };
        }
    }
    silhouette_pruned_plain(s, cache, x, own, singleton, row, lb)
}

/// `1 − 2⁻³⁰`: the silhouette's bounds are shrunk by it (and the own distance's root grown by
/// `1 + 2⁻³⁰`), far more than their rounding, so a bound never exceeds the distance it bounds.
const BOUND_SAFE: f64 = 1.0 - 1.0 / (1u64 << 30) as f64;

/// The squared distance from `x` to its own cluster's mean, and its root grown by `1 + 2⁻³⁰`: the
/// radius the silhouette's triangle-inequality bounds subtract. O(d).
#[inline(always)]
fn own_reach(s: &Slots, x: &[f64], own: usize) -> (f64, f64) {
    let to_own = sq_dist(x, &s.means[own * s.d..(own + 1) * s.d]);
    (to_own, to_own.sqrt() * (1.0 + 1.0 / (1u64 << 30) as f64))
}

/// A lower bound on `‖x − μ_j‖² + q_j` from the distance `rj` between the means and the radius
/// `r` ([`own_reach`]): `(max(rj − r, 0)² + q_j)`, shrunk by [`BOUND_SAFE`]. The AVX2 pass makes
/// these operations lane by lane. O(1).
#[inline(always)]
fn lower_bound(rj: f64, qj: f64, r: f64) -> f64 {
    let gap = (rj * BOUND_SAFE - r).max(0.0);
    (gap * gap + qj) * BOUND_SAFE
}

/// [`silhouette_pruned`] compiled for any x86-64 (or other) CPU.
pub fn silhouette_pruned_plain(s: &Slots, cache: &SlotCache, x: &[f64], own: usize, singleton: f64, row: &[f64], lb: &mut Vec<f64>) -> f64 {
    silhouette_pruned_body(s, cache, x, own, singleton, row, lb)
}

/// [`silhouette_pruned`] in AVX2 registers, four lanes: one pass makes the bounds (stored) and
/// their lane minima, with the operations of the plain path (`silhouette_pruned_body`) and its
/// fold (`arg_min`: `min(v, lane)` keeps `v` when `v < lane`, as there); the first position of
/// the minimum and the scan of the bounds below the best so far then test four entries at a
/// time and take the ones that pass in order, as one scan would. The same bits
/// (`the_lane_kernels_give_the_plain_bits_on_ties`).
///
/// # Safety
/// The CPU must support AVX2 (callers check `avx2_path()`, or `Simd::widest()`, first).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn silhouette_pruned_avx2(s: &Slots, cache: &SlotCache, x: &[f64], own: usize, singleton: f64, row: &[f64], lb: &mut Vec<f64>) -> f64 {
    use std::arch::x86_64::*;
    let (d, k) = (s.d, s.counts.len());
    let (to_own, r) = own_reach(s, x, own);
    if lb.len() < k {
        lb.resize(k, 0.0); // a scratch buffer of the caller's, every entry below k written next
    }
    let (row, q, counts, lb) = (&row[..k], &cache.q[..k], s.counts, &mut lb[..k]);
    let bound = |j: usize| -> f64 {
        if counts[j] > 0 && j != own {
            lower_bound(row[j], q[j], r)
        } else {
            f64::INFINITY
        }
    };
    let full = k - k % 4;
    let (rp, qp, np, lp) = (row.as_ptr(), q.as_ptr(), counts.as_ptr(), lb.as_mut_ptr());
    let (safe, rv, zero, inf) = (_mm256_set1_pd(BOUND_SAFE), _mm256_set1_pd(r), _mm256_setzero_pd(), _mm256_set1_pd(f64::INFINITY));
    let (izero, four, ov) = (_mm256_setzero_si256(), _mm256_set1_epi64x(4), _mm256_set1_epi64x(own as i64));
    let mut at = _mm256_setr_epi64x(0, 1, 2, 3);
    let mut lanes = inf;
    let mut j = 0;
    while j < full {
        // max(t, 0) is 0 for t NaN too, as f64::max; its sign is squared away
        let gap = _mm256_max_pd(_mm256_sub_pd(_mm256_mul_pd(_mm256_loadu_pd(rp.add(j)), safe), rv), zero);
        let v = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(gap, gap), _mm256_loadu_pd(qp.add(j))), safe);
        let live = _mm256_andnot_si256(_mm256_cmpeq_epi64(at, ov), _mm256_cmpgt_epi64(_mm256_loadu_si256(np.add(j) as *const __m256i), izero));
        let l = _mm256_blendv_pd(inf, v, _mm256_castsi256_pd(live));
        _mm256_storeu_pd(lp.add(j), l);
        lanes = _mm256_min_pd(l, lanes);
        at = _mm256_add_epi64(at, four);
        j += 4;
    }
    for (j, l) in lb.iter_mut().enumerate().skip(full) {
        *l = bound(j);
    }
    let mut folded = [0.0f64; 4];
    _mm256_storeu_pd(folded.as_mut_ptr(), lanes);
    let mut low = f64::INFINITY;
    for &v in folded.iter().chain(&lb[full..]) {
        if v < low {
            low = v;
        }
    }
    let mut b = f64::INFINITY;
    if low < f64::INFINITY {
        // the first position of the minimum
        let (lowv, mut first) = (_mm256_set1_pd(low), usize::MAX);
        let mut j = 0;
        while j < full {
            let m = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_EQ_OQ>(_mm256_loadu_pd(lp.add(j)), lowv));
            if m != 0 {
                first = j + m.trailing_zeros() as usize;
                break;
            }
            j += 4;
        }
        if first == usize::MAX {
            first = lb[full..].iter().position(|&v| v == low).map_or(0, |p| full + p); // 0 when none, as first_equal
        }
        b = sq_dist(x, &s.means[first * d..(first + 1) * d]) + q[first];
        // the bounds below the best so far, four tested at once, the ones that pass in order
        let mut j = 0;
        while j < full {
            let mut m = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_loadu_pd(lp.add(j)), _mm256_set1_pd(b)));
            while m != 0 {
                let i = j + m.trailing_zeros() as usize;
                m &= m - 1;
                if lb[i] < b && i != first {
                    b = b.min(sq_dist(x, &s.means[i * d..(i + 1) * d]) + q[i]);
                }
            }
            j += 4;
        }
        for i in full..k {
            if lb[i] < b && i != first {
                b = b.min(sq_dist(x, &s.means[i * d..(i + 1) * d]) + q[i]);
            }
        }
    }
    score_of(s, b, own, singleton, |bf| (bf * to_own + s.m2[own]) / (bf - 1.0))
}

#[inline(always)]
fn silhouette_pruned_body(s: &Slots, cache: &SlotCache, x: &[f64], own: usize, singleton: f64, row: &[f64], lb: &mut Vec<f64>) -> f64 {
    let (d, k) = (s.d, s.counts.len());
    let (to_own, r) = own_reach(s, x, own);
    lb.clear();
    lb.resize(k, f64::INFINITY); // a scratch buffer of the caller's: no allocation per point
    for (((l, &rj), &qj), &n) in lb.iter_mut().zip(&row[..k]).zip(&cache.q[..k]).zip(s.counts) {
        let v = lower_bound(rj, qj, r);
        *l = if n > 0 { v } else { f64::INFINITY }; // a select: vector code
    }
    lb[own] = f64::INFINITY;
    let (low, at) = arg_min(lb);
    let first = if low < f64::INFINITY { at } else { usize::MAX };
    let mut b = f64::INFINITY;
    if first != usize::MAX {
        b = sq_dist(x, &s.means[first * d..(first + 1) * d]) + cache.q[first];
        // in blocks of 8 bounds tested at once against the best so far (vector code); the rare
        // block with a bound below it taken entry by entry, in order, as one scan would
        for (bi, block) in lb.chunks(8).enumerate() {
            if !block.iter().fold(false, |acc, &l| acc | (l < b)) {
                continue;
            }
            for (t, &l) in block.iter().enumerate() {
                let j = bi * 8 + t;
                if l < b && j != first {
                    b = b.min(sq_dist(x, &s.means[j * d..(j + 1) * d]) + cache.q[j]);
                }
            }
        }
    }
    score_of(s, b, own, singleton, |bf| (bf * to_own + s.m2[own]) / (bf - 1.0))
}

/// The scatter `S_j` of Davies-Bouldin: RMS `sqrt(M2_j/b_j)`, or in the cosine space the mean
/// cosine distance to the mean `(M2_j/b_j)/(1 + ||mean_j||)`; 0 at a free slot.
pub fn slot_scatter(s: &Slots, j: usize, cosine: bool) -> f64 {
    let c = s.counts[j];
    if c <= 0 {
        return 0.0;
    }
    let q = s.m2[j] / c as f64;
    if cosine {
        let mean = &s.means[j * s.d..(j + 1) * s.d];
        q / (1.0 + dot(mean, mean).sqrt())
    } else {
        q.sqrt()
    }
}

/// Distances from the mean of slot `c` to the mean of every slot `j < out.len()`: Euclidean, or
/// the cosine distance without cancellation (1 when a mean is zero), clipped to `[0, 2]`; 0 at
/// a free slot and at `c` itself (`ClusterSummaries.centroid_distances`). The cosine space reads
/// the cached unit vectors. O(k·d).
#[inline(always)]
pub fn distance_row(s: &Slots, cache: &SlotCache, c: usize, cosine: bool, out: &mut [f64]) {
    let d = s.d;
    if s.counts[c] <= 0 {
        out.fill(0.0); // a free slot: no distances
        return;
    }
    if cosine {
        let (hc, lc) = cache.unit(c);
        let rc = cache.r[c];
        for (j, o) in out.iter_mut().enumerate() {
            *o = if j == c || s.counts[j] <= 0 {
                0.0
            } else if rc > 0.0 && cache.r[j] > 0.0 {
                let (hj, lj) = cache.unit(j);
                unit_half_sq(hc, lc, hj, lj).clamp(0.0, 2.0)
            } else {
                1.0
            };
        }
        return;
    }
    let mc = &s.means[c * d..(c + 1) * d];
    let w = out.len();
    sq_dists(&s.means[..w * d], mc, out);
    for (o, &n) in out.iter_mut().zip(s.counts) {
        *o = if n > 0 { o.sqrt() } else { 0.0 }; // a select: vector square roots
    }
    out[c] = 0.0;
}

/// Row and column `c` of the symmetric `cap × cap` matrix `dist` set to the new distances of slot
/// `c` (`row`, its first `row.len()` columns, as [`distance_row`] makes them), and the change of
/// the matrix's sum over both triangles added to `total`: each entry's new value and its old
/// one's negation enter four interleaved `hi + lo` partial sums by TwoSum (lane `j mod 4`, the
/// last chunk padded with zeros), then each lane, doubled (exact), enters `total` by TwoSum. Each
/// step is exact to `ε²` of the entries, so the sum tracks the matrix to a relative `~ε` whatever
/// the number of steps. The old row is read where it is overwritten (row `c` holds column `c`'s
/// old values: the matrix is symmetric). O(row.len()).
pub fn replace_row(dist: &mut [f64], cap: usize, c: usize, row: &[f64], total: &mut (f64, f64)) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2_path() {
            // SAFETY: the CPU has AVX2 (`avx2_path` checked it just above).
            return unsafe { replace_row_avx2(dist, cap, c, row, total) };
        }
    }
    replace_row_plain(dist, cap, c, row, total)
}

/// [`replace_row`] compiled for any CPU.
pub fn replace_row_plain(dist: &mut [f64], cap: usize, c: usize, row: &[f64], total: &mut (f64, f64)) {
    replace_row_body(dist, cap, c, row, total)
}

/// [`replace_row`] compiled with AVX2 (the same operations in the same order: the same bits).
///
/// # Safety
/// The CPU must support AVX2 (callers check `avx2_path()`, or `Simd::widest()`, first).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn replace_row_avx2(dist: &mut [f64], cap: usize, c: usize, row: &[f64], total: &mut (f64, f64)) {
    replace_row_body(dist, cap, c, row, total)
}

#[inline(always)]
fn replace_row_body(dist: &mut [f64], cap: usize, c: usize, row: &[f64], total: &mut (f64, f64)) {
    #[inline(always)]
    fn step(hi: &mut [f64; 4], lo: &mut [f64; 4], x: [f64; 4]) {
        for l in 0..4 {
            let s = hi[l] + x[l];
            let bp = s - hi[l];
            lo[l] += (hi[l] - (s - bp)) + (x[l] - bp);
            hi[l] = s;
        }
    }
    let w = row.len();
    assert!(c < cap && w <= cap && dist.len() >= cap * cap);
    let line = &mut dist[c * cap..c * cap + w];
    let (mut hi, mut lo) = ([0.0f64; 4], [0.0f64; 4]);
    let (news, olds) = (row.chunks_exact(4), line.chunks_exact_mut(4));
    let rest_new = news.remainder();
    for (v, o) in news.zip(olds) {
        let new = [v[0], v[1], v[2], v[3]];
        let neg = [-o[0], -o[1], -o[2], -o[3]];
        o.copy_from_slice(&new);
        step(&mut hi, &mut lo, new);
        step(&mut hi, &mut lo, neg);
    }
    let full = w - rest_new.len();
    let (mut new, mut neg) = ([0.0f64; 4], [0.0f64; 4]);
    for (l, (&v, o)) in rest_new.iter().zip(&mut line[full..]).enumerate() {
        new[l] = v;
        neg[l] = -*o;
        *o = v;
    }
    step(&mut hi, &mut lo, new);
    step(&mut hi, &mut lo, neg);
    // column c (the diagonal, in row c too, gets the same value again)
    let base = dist.as_mut_ptr();
    const AHEAD: usize = 16; // rows: the lines of the column asked for before they are written
    for (j, &v) in row.iter().enumerate() {
        // entry (j, c) at j·cap + c < cap² <= dist.len() (j < w <= cap, c < cap: asserted above),
        // so the index products cannot overflow: unchecked
        #[cfg(target_arch = "x86_64")]
        if j + AHEAD < w {
            // SAFETY: a prefetch reads nothing and the address lies in `dist` (j + AHEAD < w).
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(base.add((j + AHEAD).wrapping_mul(cap).wrapping_add(c)) as *const i8) };
        }
        // SAFETY: j < w <= cap and c < cap, so j·cap + c < cap² <= dist.len() (asserted above).
        unsafe { *base.add(j.wrapping_mul(cap).wrapping_add(c)) = v };
    }
    for l in 0..4 {
        // both triangles: twice each (exact), the diagonal stays 0
        add_to(total, 2.0 * hi[l]);
        add_to(total, 2.0 * lo[l]);
    }
}

/// Slot `c` changed: its row of distances ([`distance_row`], into the scratch `row`) written
/// into row and column `c` of `dist` and the matrix's sum ([`replace_row`]). One pass of each,
/// compiled with AVX2 where the CPU has it (the same bits). O(row.len()·d).
#[allow(clippy::too_many_arguments)]
pub fn new_row(s: &Slots, cache: &SlotCache, c: usize, cosine: bool, row: &mut [f64], dist: &mut [f64], cap: usize, total: &mut (f64, f64)) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2_path() {
            // SAFETY: the CPU has AVX2 (`avx2_path` checked it just above).
            return unsafe { new_row_avx2(s, cache, c, cosine, row, dist, cap, total) };
        }
    }
    distance_row(s, cache, c, cosine, row);
    replace_row_body(dist, cap, c, row, total)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn new_row_avx2(s: &Slots, cache: &SlotCache, c: usize, cosine: bool, row: &mut [f64], dist: &mut [f64], cap: usize, total: &mut (f64, f64)) {
    let (d, w) = (s.d, row.len());
    if cosine || s.counts[c] <= 0 || w > s.counts.len() {
        distance_row(s, cache, c, cosine, row);
        return replace_row_body(dist, cap, c, row, total);
    }
    // distance_row's squared distances, then its square roots with replace_row in one pass
    sq_dists(&s.means[..w * d], &s.means[c * d..(c + 1) * d], row);
    finish_row_avx2(row, &s.counts[..w], c, dist, cap, total)
}

/// [`distance_row`]'s square roots (0 at a free slot and at `c`) of the squared distances `sq`
/// of a live slot `c`, written into row and column `c` of `dist` with the change of the
/// matrix's sum, as [`replace_row`] does, in one pass of four lanes: the very operations of the
/// two passes, lane `j mod 4` for entry `j` as there (the same bits:
/// `the_lane_kernels_give_the_plain_bits_on_ties`); the column's strided stores (each a cache
/// line from beyond L2 at k = 1,000) go out beside the square roots and the sum's chain of
/// additions instead of after them, their lines asked for `AHEAD` rows before. O(sq.len()).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn finish_row_avx2(sq: &[f64], counts: &[i64], c: usize, dist: &mut [f64], cap: usize, total: &mut (f64, f64)) {
    use std::arch::x86_64::*;
    #[inline(always)]
    unsafe fn step(hi: &mut __m256d, lo: &mut __m256d, x: __m256d) {
        // replace_row's TwoSum step, lane by lane
        let s = _mm256_add_pd(*hi, x);
        let bp = _mm256_sub_pd(s, *hi);
        *lo = _mm256_add_pd(*lo, _mm256_add_pd(_mm256_sub_pd(*hi, _mm256_sub_pd(s, bp)), _mm256_sub_pd(x, bp)));
        *hi = s;
    }
    let w = sq.len();
    assert!(c < w && w <= cap && counts.len() == w && dist.len() >= cap * cap);
    let base = dist.as_mut_ptr();
    let line = base.add(c * cap);
    let (sp, np) = (sq.as_ptr(), counts.as_ptr());
    let (mut hi, mut lo) = (_mm256_setzero_pd(), _mm256_setzero_pd());
    let sign = _mm256_set1_pd(-0.0);
    let (zero, four, cv) = (_mm256_setzero_si256(), _mm256_set1_epi64x(4), _mm256_set1_epi64x(c as i64));
    let mut at = _mm256_setr_epi64x(0, 1, 2, 3);
    let full = w - w % 4;
    const AHEAD: usize = 32; // rows (8 to 64 measured: 32 the best, by a little)
    let ahead = AHEAD * cap;
    let mut col = base.add(c);
    let mut j = 0;
    while j < full {
        // the square root where the slot is live and not c, else 0 (+0.0: the and of a mask)
        let root = _mm256_sqrt_pd(_mm256_loadu_pd(sp.add(j)));
        let live = _mm256_andnot_si256(_mm256_cmpeq_epi64(at, cv), _mm256_cmpgt_epi64(_mm256_loadu_si256(np.add(j) as *const __m256i), zero));
        let new = _mm256_and_pd(root, _mm256_castsi256_pd(live));
        let old = _mm256_loadu_pd(line.add(j));
        _mm256_storeu_pd(line.add(j), new);
        step(&mut hi, &mut lo, new);
        step(&mut hi, &mut lo, _mm256_xor_pd(old, sign));
        // column c: entries (j..j + 4, c), at (j + t)·cap + c < cap² (j + t < w <= cap, c < cap);
        // `col` steps four rows a quad (no index products, which the release build checks)
        let (l2, h2) = (_mm256_castpd256_pd128(new), _mm256_extractf128_pd::<1>(new));
        if j + AHEAD < full {
            // the column's lines AHEAD rows on asked for now (rows j + AHEAD + r <= full - 1,
            // within dist), so that their fetches overlap the sums' chain
            let pc = col.wrapping_add(ahead) as *const i8;
            _mm_prefetch::<_MM_HINT_T0>(pc);
            _mm_prefetch::<_MM_HINT_T0>(pc.wrapping_add(8 * cap));
            _mm_prefetch::<_MM_HINT_T0>(pc.wrapping_add(16 * cap));
            _mm_prefetch::<_MM_HINT_T0>(pc.wrapping_add(24 * cap));
        }
        _mm_storel_pd(col, l2);
        _mm_storeh_pd(col.wrapping_add(cap), l2);
        _mm_storel_pd(col.wrapping_add(2 * cap), h2);
        _mm_storeh_pd(col.wrapping_add(3 * cap), h2);
        col = col.wrapping_add(4 * cap);
        at = _mm256_add_epi64(at, four);
        j += 4;
    }
    // the last w mod 4 entries, the lanes after them 0 (both steps taken, as replace_row does)
    let (mut new, mut neg) = ([0.0f64; 4], [0.0f64; 4]);
    for (l, j) in (full..w).enumerate() {
        let v = if counts[j] > 0 && j != c { sq[j].sqrt() } else { 0.0 };
        new[l] = v;
        neg[l] = -*line.add(j);
        *line.add(j) = v;
        *base.add(j * cap + c) = v;
    }
    step(&mut hi, &mut lo, _mm256_loadu_pd(new.as_ptr()));
    step(&mut hi, &mut lo, _mm256_loadu_pd(neg.as_ptr()));
    let (mut h, mut l) = ([0.0f64; 4], [0.0f64; 4]);
    _mm256_storeu_pd(h.as_mut_ptr(), hi);
    _mm256_storeu_pd(l.as_mut_ptr(), lo);
    for t in 0..4 {
        // both triangles: twice each (exact), the diagonal stays 0
        add_to(total, 2.0 * h[t]);
        add_to(total, 2.0 * l[t]);
    }
}

/// `out[j] = sq_dist(rows_j, b)` for the rows of `rows` (`out.len() × b.len()`, row-major),
/// each the very value [`sq_dist`] gives (the same operations in the same order per row). Where
/// the CPU has AVX2 (chosen at run time: [`Simd::detect`]), eight rows at a time, each row's four
/// lanes in one register, so that eight sums run side by side: which changes nothing in the
/// result (no fused multiply-add, the same lanes, the same order;
/// `rows_of_distances_are_sq_dist_bit_for_bit`). O(rows·d).
#[inline(always)]
pub fn sq_dists(rows: &[f64], b: &[f64], out: &mut [f64]) {
    sq_dists_on(Simd::detect(), rows, b, out)
}

/// The instruction sets a kernel of this module can be compiled for: the plain build and AVX2.
/// [`Simd::detect`] picks the widest the CPU has (a cached flag). Both paths give the same bits
/// (the same operations in the same order, no fused multiply-add): `cargo test` compares them
/// where the CPU has AVX2, and the private `_native._sq_dists(rows, b, path)` lets the Python
/// tests do the same. (Wider registers buy little: once the means outgrow L1 the pass is bound by
/// reading them — AVX-512 with fused multiply-add saved 5–9 % at 1,000 means of d = 128, in
/// `docs/benchmarks/intrinsic.md`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    Plain,
    Avx2,
}

impl Simd {
    /// The path the kernels take: the widest this CPU runs, or the plain one when the
    /// environment variable `STREAMEVAL_SIMD` is `plain` (read once) — the same bits either way,
    /// so the variable only chooses the speed (and lets a test run each path).
    #[inline]
    pub fn detect() -> Simd {
        static CHOSEN: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| match std::env::var("STREAMEVAL_SIMD").as_deref() {
            Ok("plain") => Simd::Plain,
            _ => Simd::widest(),
        })
    }

    /// The widest path this CPU runs.
    pub fn widest() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                return Simd::Avx2;
            }
        }
        Simd::Plain
    }

    /// Whether this CPU runs `self`.
    pub fn available(self) -> bool {
        self == Simd::Plain || Simd::widest() == Simd::Avx2
    }
}

/// [`sq_dists`] on the path `simd` (which the CPU must run: [`Simd::available`]; else the plain
/// path): for `d < 4` one loop over the rows (the compiler's vector code), else the kernels do the
/// blocks of rows and [`sq_dist`] the rows left over.
#[inline(always)]
pub fn sq_dists_on(simd: Simd, rows: &[f64], b: &[f64], out: &mut [f64]) {
    let (d, w) = (b.len(), out.len());
    let rows = &rows[..w * d];
    match d {
        1 => {
            for (o, r) in out.iter_mut().zip(rows) {
                let t = r - b[0];
                *o = t * t;
            }
            return;
        }
        2 => {
            let (b0, b1) = (b[0], b[1]);
            for (o, r) in out.iter_mut().zip(rows.chunks_exact(2)) {
                let (t0, t1) = (r[0] - b0, r[1] - b1);
                *o = t0 * t0 + t1 * t1; // sq_dist's 0 + t0² + t1²: the same double
            }
            return;
        }
        3 => {
            let (b0, b1, b2) = (b[0], b[1], b[2]);
            for (o, r) in out.iter_mut().zip(rows.chunks_exact(3)) {
                let (t0, t1, t2) = (r[0] - b0, r[1] - b1, r[2] - b2);
                *o = (t0 * t0 + t1 * t1) + t2 * t2;
            }
            return;
        }
        _ => {}
    }
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        if d >= 4 && simd != Simd::Plain && simd.available() {
            // SAFETY: the CPU has the instructions (checked just above); the slices' lengths are
            // checked inside.
            done = unsafe { sq_dists_avx2(rows, b, out) };
        }
    }
    for j in done..w {
        out[j] = sq_dist(&rows[j * d..(j + 1) * d], b);
    }
}

/// `(l0 + l1) + (l2 + l3)` of four rows' four lanes `v`, stored at `o` (`hadd` gives `l0 + l1`
/// and `l2 + l3` of two rows; the two halves of two such then added).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn fold4_store(v: &[std::arch::x86_64::__m256d], o: *mut f64) {
    use std::arch::x86_64::*;
    let h01 = _mm256_hadd_pd(v[0], v[1]); // [a0 + a1, b0 + b1, a2 + a3, b2 + b3]
    let h23 = _mm256_hadd_pd(v[2], v[3]); // the same of rows c and d
    let lo = _mm256_permute2f128_pd::<0x20>(h01, h23); // l0 + l1 of a, b, c, d
    let hi = _mm256_permute2f128_pd::<0x31>(h01, h23); // l2 + l3 of a, b, c, d
    _mm256_storeu_pd(o, _mm256_add_pd(lo, hi));
}

/// Row `r`'s last `d - full` terms added to `o[r]` left to right ([`sq_dist`]'s tail).
#[inline(always)]
unsafe fn tails(p: &[*const f64], bp: *const f64, full: usize, d: usize, o: *mut f64) {
    if full < d {
        for (r, &pr) in p.iter().enumerate() {
            let mut s = *o.add(r);
            for t in full..d {
                let t = *pr.add(t) - *bp.add(t);
                s += t * t;
            }
            *o.add(r) = s;
        }
    }
}

/// What the distance kernels share: `⌊w/R⌋` blocks of `R` rows, each row read through its own
/// pointer (`black_box`: left as they are, the compiler derives each start from the one before,
/// `+ d`, inside the loop, an extra add per row and step); `block(p, full, o)` writes the sums of
/// the first `full = d - d mod step` terms of the rows `p` at `o`, then each row's last terms are
/// added left to right ([`tails`]). Returns how many rows it did.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn in_blocks<const R: usize>(rows: &[f64], b: &[f64], out: &mut [f64], step: usize, block: impl Fn(&[*const f64; R], usize, *mut f64)) -> usize {
    let (d, w) = (b.len(), out.len());
    assert!(d >= step && rows.len() >= w * d);
    let full = d - d % step;
    let blocks = w / R;
    let (rp, bp, op) = (rows.as_ptr(), b.as_ptr(), out.as_mut_ptr());
    for q in 0..blocks {
        let p: [*const f64; R] = std::hint::black_box(std::array::from_fn(|r| rp.add((q * R + r) * d)));
        let o = op.add(q * R);
        block(&p, full, o);
        tails(&p, bp, full, d, o);
    }
    blocks * R
}

/// The first `8·⌊w/8⌋` rows of [`sq_dists`] for `d >= 4`, in AVX2 registers: row `r`'s lane `l`
/// sums the terms `i ≡ l (mod 4)` of its first `4·⌊d/4⌋`, then `(l0 + l1) + (l2 + l3)` and the
/// tail, as [`sq_dist`]: one load of `b` and per row a subtraction with its load, a product and a
/// sum; the lanes of four rows folded in one register ([`fold4_store`]). Returns how many rows it
/// did.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sq_dists_avx2(rows: &[f64], b: &[f64], out: &mut [f64]) -> usize {
    use std::arch::x86_64::*;
    let bp = b.as_ptr();
    in_blocks::<8>(rows, b, out, 4, |p, full, o| {
        let mut acc = [_mm256_setzero_pd(); 8];
        let mut i = 0;
        while i < full {
            let y = _mm256_loadu_pd(bp.add(i));
            for (a, &pr) in acc.iter_mut().zip(p) {
                // b - x: the negation of x - b exactly (rounding is symmetric), so the same
                // square; in this order the load folds into the subtraction
                let t = _mm256_sub_pd(y, _mm256_loadu_pd(pr.add(i)));
                *a = _mm256_add_pd(*a, _mm256_mul_pd(t, t));
            }
            i += 4;
        }
        fold4_store(&acc[..4], o);
        fold4_store(&acc[4..], o.add(4));
    })
}

/// Incremental Davies-Bouldin (`intrinsic._DaviesBouldinCache`): `R[i,j] = (S_i + S_j)/d_ij`
/// (0 where `d_ij = 0`), each row's maximum `m`, its first position `a`, and the sum of the
/// maxima as `hi + lo` (each change of a maximum enters it by TwoSum). `dist` is the
/// `cap × cap` matrix of distances between means, row-major and symmetric; `s` the scatters
/// `S_j` ([`SlotCache`]). `R` is not stored: an entry is `(S_i + S_j)·(1/d_ij)` from `s` and
/// `dist` whenever it is read (the very operations that made it, so the same bits; `S_i + S_j`
/// and `S_j + S_i` are the same double), which spares a `cap × cap` matrix and its strided
/// column writes. A free slot's row and column are 0 (its distances are), so its maximum is 0
/// and the index is the sum over all rows divided by the number of live ones.
#[derive(Default)]
pub struct DaviesBouldin {
    pub cap: usize,
    m: Vec<f64>,
    a: Vec<usize>,
    s: Vec<f64>,
    sum: (f64, f64),
    row: Vec<f64>,   // scratch for `change`: row c
    other: Vec<f64>, // and a row rescanned
}

#[inline]
fn inv(d: f64) -> f64 {
    let r = 1.0 / d; // computed either way: a select, not a branch (vector code)
    if d > 0.0 {
        r
    } else {
        0.0
    }
}

/// `R[i, j]` for `j < out.len()` into `out`: `(s_i + s_j)·(1/d_ij)`. Vector code.
#[inline(always)]
fn ratio_row(si: f64, s: &[f64], di: &[f64], out: &mut [f64]) {
    for ((v, &sj), &dj) in out.iter_mut().zip(s).zip(di) {
        *v = (si + sj) * inv(dj);
    }
}

/// `ratio_row(si, s, di, out)` then `arg_max(out)`, in four lanes: the ratios and their lane
/// maxima in one pass (`max(v, lane)` keeps `v` when `v > lane`, as `arg_extreme`), then the
/// first position of the maximum four entries at a time. The same bits and position.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn ratios_max_avx2(si: f64, s: &[f64], di: &[f64], out: &mut [f64]) -> (f64, usize) {
    use std::arch::x86_64::*;
    let w = out.len();
    let (s, di) = (&s[..w], &di[..w]);
    let full = w - w % 4;
    let (sp, dp, op) = (s.as_ptr(), di.as_ptr(), out.as_mut_ptr());
    let (siv, one, zero) = (_mm256_set1_pd(si), _mm256_set1_pd(1.0), _mm256_setzero_pd());
    let mut lanes = _mm256_set1_pd(f64::NEG_INFINITY);
    let mut j = 0;
    while j < full {
        let dj = _mm256_loadu_pd(dp.add(j));
        let inv = _mm256_and_pd(_mm256_div_pd(one, dj), _mm256_cmp_pd::<_CMP_GT_OQ>(dj, zero));
        let v = _mm256_mul_pd(_mm256_add_pd(siv, _mm256_loadu_pd(sp.add(j))), inv);
        _mm256_storeu_pd(op.add(j), v);
        lanes = _mm256_max_pd(v, lanes);
        j += 4;
    }
    ratio_row(si, &s[full..], &di[full..], &mut out[full..]);
    fold_max_avx2(lanes, out, full)
}

/// The maximum of the lanes `lanes` (of `row[..full]`) and `row[full..]`, folded as
/// [`arg_extreme`] folds its lanes and rest, and its first position in `row` (four entries at a
/// time); `(-inf, 0)` when nothing is above `-inf`.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_max_avx2(lanes: std::arch::x86_64::__m256d, row: &[f64], full: usize) -> (f64, usize) {
    use std::arch::x86_64::*;
    let mut folded = [0.0f64; 4];
    _mm256_storeu_pd(folded.as_mut_ptr(), lanes);
    let mut best = f64::NEG_INFINITY;
    for &v in folded.iter().chain(&row[full..]) {
        if v > best {
            best = v;
        }
    }
    if best == f64::NEG_INFINITY {
        return (best, 0);
    }
    let (bv, op) = (_mm256_set1_pd(best), row.as_ptr());
    let mut j = 0;
    while j < full {
        let mk = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_EQ_OQ>(_mm256_loadu_pd(op.add(j)), bv));
        if mk != 0 {
            return (best, j + mk.trailing_zeros() as usize);
        }
        j += 4;
    }
    (best, row[full..].iter().position(|&v| v == best).map_or(0, |p| full + p)) // 0 when none, as first_equal
}

/// The minimum of `row` (NaN left out) and its first position (`inf, 0` when there is none
/// below `inf`): [`arg_extreme`].
#[inline(always)]
fn arg_min(row: &[f64]) -> (f64, usize) {
    arg_extreme::<false>(row)
}

/// The maximum of `row` (NaN left out) and its first position (`-inf, 0` when there is none
/// above `-inf`): [`arg_extreme`].
#[inline(always)]
fn arg_max(row: &[f64]) -> (f64, usize) {
    arg_extreme::<true>(row)
}

/// The maximum (`MAX`) or minimum of `row`, NaN left out, in four lanes (vector code; the
/// extreme of a set whatever the order), then the first entry equal to it; `(∓inf, 0)` when
/// no entry passes the starting `∓inf`.
#[inline(always)]
fn arg_extreme<const MAX: bool>(row: &[f64]) -> (f64, usize) {
    let none = if MAX { f64::NEG_INFINITY } else { f64::INFINITY };
    let better = |v: f64, b: f64| if MAX { v > b } else { v < b };
    let mut lanes = [none; 4];
    let quads = row.chunks_exact(4);
    let rest = quads.remainder();
    for q in quads {
        for l in 0..4 {
            lanes[l] = if better(q[l], lanes[l]) { q[l] } else { lanes[l] };
        }
    }
    let mut best = none;
    for &v in lanes.iter().chain(rest) {
        if better(v, best) {
            best = v;
        }
    }
    if best == none {
        return (best, 0);
    }
    (best, first_equal(row, best))
}

/// The first position of `row` holding a value `== best` (0 when none): blocks of 8 tested at
/// once (vector code), the block with a hit searched. O(position).
#[inline(always)]
fn first_equal(row: &[f64], best: f64) -> usize {
    for (bi, block) in row.chunks(8).enumerate() {
        if block.iter().fold(false, |acc, &v| acc | (v == best)) {
            return bi * 8 + block.iter().position(|&v| v == best).unwrap_or(0);
        }
    }
    0
}

impl DaviesBouldin {
    /// The cache as bytes ([`StateOut`]; the scratch rows are not state).
    pub fn save(&self, out: &mut StateOut) {
        out.int(self.cap as i64);
        out.nums(&self.m);
        out.ints(self.a.iter().map(|&a| a as i64));
        out.nums(&self.s);
        out.num(self.sum.0);
        out.num(self.sum.1);
    }

    /// The cache [`DaviesBouldin::save`] wrote; `None` when the bytes do not fit together.
    pub fn load(inp: &mut StateIn) -> Option<Self> {
        let cap = usize::try_from(inp.int()?).ok()?;
        let m = inp.nums()?;
        let a = inp.ints()?.into_iter().map(|a| usize::try_from(a).ok().filter(|&a| a < cap.max(1))).collect::<Option<Vec<usize>>>()?;
        let s = inp.nums()?;
        let sum = (inp.num()?, inp.num()?);
        if m.len() != cap || a.len() != cap || s.len() != cap {
            return None;
        }
        Some(DaviesBouldin { cap, m, a, s, sum, row: Vec::new(), other: Vec::new() })
    }

    /// Every row anew: O(w²).
    pub fn rebuild(&mut self, scat: &[f64], dist: &[f64], cap: usize, w: usize) {
        self.cap = cap;
        self.m = vec![0.0; cap];
        self.a = vec![0; cap];
        self.s = vec![0.0; cap];
        self.sum = (0.0, 0.0);
        self.s[..w].copy_from_slice(&scat[..w]);
        let mut row = std::mem::take(&mut self.row);
        row.resize(w, 0.0);
        for i in 0..w {
            ratio_row(self.s[i], &self.s[..w], &dist[i * cap..i * cap + w], &mut row[..w]);
            let (best, at) = arg_max(&row[..w]);
            self.m[i] = best;
            self.a[i] = at;
            add_to(&mut self.sum, best);
        }
        self.row = row;
    }

    fn set_max(&mut self, i: usize, v: f64, at: usize) {
        add_to(&mut self.sum, -self.m[i]);
        add_to(&mut self.sum, v);
        self.m[i] = v;
        self.a[i] = at;
    }

    /// Slot `c` changed (its scatter is `sc`; `dist` holds its new row and column): the
    /// maxima that rose or fell with row and column `c`. O(w), plus O(w) per row whose maximum
    /// sat in column `c` and fell. Compiled with AVX2 where the CPU has it (the same bits).
    pub fn change(&mut self, sc: f64, dist: &[f64], w: usize, c: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            if avx2_path() {
                // SAFETY: the CPU has AVX2 (`avx2_path` checked it just above).
                return unsafe { self.change_avx2(sc, dist, w, c) };
            }
        }
        self.change_plain(sc, dist, w, c)
    }

    /// [`DaviesBouldin::change`] compiled for any CPU.
    pub fn change_plain(&mut self, sc: f64, dist: &[f64], w: usize, c: usize) {
        self.change_body(sc, dist, w, c)
    }

    /// [`DaviesBouldin::change`] in AVX2 registers, four lanes: one pass makes row `c`'s ratios
    /// (`(s_c + s_j)·(1/d_cj)`, 0 where `d_cj <= 0`: the operations of `ratio_row`), tests them
    /// against the maxima (the blocks where something happens, as `change_body` finds them) and
    /// folds their lane maxima (`max(v, lane)` keeps `v` when `v > lane`, as `arg_max` does); the
    /// rows of those blocks are then taken one by one, in order, as there, a rescanned row in
    /// one such pass too ([`ratios_max_avx2`]). The same bits
    /// (`the_lane_kernels_give_the_plain_bits_on_ties`).
    ///
    /// # Safety
    /// The CPU must support AVX2 (callers check `avx2_path()`, or `Simd::widest()`, first).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub unsafe fn change_avx2(&mut self, sc: f64, dist: &[f64], w: usize, c: usize) {
        use std::arch::x86_64::*;
        let cap = self.cap;
        self.s[c] = sc;
        let mut row = std::mem::take(&mut self.row);
        row.resize(w.max(row.len()), 0.0);
        let di = &dist[c * cap..c * cap + w];
        let (s, m, a) = (&self.s[..w], &self.m[..w], &self.a[..w]);
        let full = w - w % 4;
        let (sp, dp, mp, ap, op) = (s.as_ptr(), di.as_ptr(), m.as_ptr(), a.as_ptr(), row.as_mut_ptr());
        let (scv, one, zero, cv) = (_mm256_set1_pd(sc), _mm256_set1_pd(1.0), _mm256_setzero_pd(), _mm256_set1_epi64x(c as i64));
        let mut lanes = _mm256_set1_pd(f64::NEG_INFINITY);
        let mut hits: SmallVec<[usize; 16]> = SmallVec::new(); // the first rows of the blocks of 4
        let mut j = 0;
        while j < full {
            let dj = _mm256_loadu_pd(dp.add(j));
            // inv: 1/d where d > 0, else 0 (NaN included), as `inv`
            let inv = _mm256_and_pd(_mm256_div_pd(one, dj), _mm256_cmp_pd::<_CMP_GT_OQ>(dj, zero));
            let v = _mm256_mul_pd(_mm256_add_pd(scv, _mm256_loadu_pd(sp.add(j))), inv);
            _mm256_storeu_pd(op.add(j), v);
            let ge = _mm256_cmp_pd::<_CMP_GE_OQ>(v, _mm256_loadu_pd(mp.add(j)));
            let sat = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_loadu_si256(ap.add(j) as *const __m256i), cv));
            if _mm256_movemask_pd(_mm256_or_pd(ge, sat)) != 0 {
                hits.push(j);
            }
            lanes = _mm256_max_pd(v, lanes);
            j += 4;
        }
        ratio_row(sc, &s[full..], &di[full..], &mut row[full..w]);
        for i in full..w {
            if (row[i] >= m[i]) | (a[i] == c) {
                hits.push(i);
                break; // the rest of the last block taken with it
            }
        }
        for &b0 in &hits {
            let end = if b0 < full { b0 + 4 } else { w };
            for i in b0..end {
                // SAFETY (the closure): this function runs only where the CPU has AVX2.
                self.step_row(i, row[i], c, &dist[i * cap..i * cap + w], |si, s, di, out| unsafe { ratios_max_avx2(si, s, di, out) });
            }
        }
        let (best, at) = fold_max_avx2(lanes, &row[..w], full);
        self.set_max(c, best, at);
        self.row = row;
    }

    /// Row `i`'s step for its new ratio `v = R[i, c] = R[c, i]` (`di`: row `i` of the distances,
    /// `w` wide): `v` becomes its maximum when it reaches the old one; else, where the maximum
    /// sat in column `c` and fell (`v < m[i]`, the old `R[i, c]`), the row is rescanned by
    /// `rescan(s_i, s, di, out)` (its ratios into `out`, then their maximum and its first
    /// position). O(1), or O(w) for a rescan.
    #[inline(always)]
    fn step_row(&mut self, i: usize, v: f64, c: usize, di: &[f64], rescan: impl FnOnce(f64, &[f64], &[f64], &mut [f64]) -> (f64, usize)) {
        if v >= self.m[i] {
            self.set_max(i, v, c);
        } else if self.a[i] == c {
            let w = di.len();
            let mut other = std::mem::take(&mut self.other);
            other.resize(w.max(other.len()), 0.0);
            let (best, at) = rescan(self.s[i], &self.s[..w], di, &mut other[..w]);
            self.other = other;
            self.set_max(i, best, at);
        }
    }

    #[inline(always)]
    fn change_body(&mut self, sc: f64, dist: &[f64], w: usize, c: usize) {
        const B: usize = 8;
        let cap = self.cap;
        self.s[c] = sc;
        let mut row = std::mem::take(&mut self.row);
        row.resize(w.max(row.len()), 0.0);
        ratio_row(sc, &self.s[..w], &dist[c * cap..c * cap + w], &mut row[..w]);
        // the blocks of 8 rows where something happens (the new R[i, c] reaches the row's
        // maximum, or the maximum sat in column c), found eight at a time (vector code); the
        // rows of those blocks then taken one by one, in order, as one scan would take them
        // (a row's step reads and writes only its own maximum, so finding them first changes
        // nothing)
        let mut hits: SmallVec<[usize; 16]> = SmallVec::new();
        for (bi, ((r, m), a)) in row[..w].chunks(B).zip(self.m[..w].chunks(B)).zip(self.a[..w].chunks(B)).enumerate() {
            let mut any = false;
            for ((&v, &mi), &ai) in r.iter().zip(m).zip(a) {
                any |= (v >= mi) | (ai == c);
            }
            if any {
                hits.push(bi);
            }
        }
        for &bi in &hits {
            for i in bi * B..(bi * B + B).min(w) {
                self.step_row(i, row[i], c, &dist[i * cap..i * cap + w], |si, s, di, out| {
                    ratio_row(si, s, di, out);
                    arg_max(out)
                });
            }
        }
        let (best, at) = arg_max(&row[..w]);
        self.set_max(c, best, at);
        self.row = row;
    }

    /// The index over `k` live slots: the mean of their rows' maxima. O(1).
    pub fn value(&self, k: usize) -> f64 {
        (self.sum.0 + self.sum.1) / k as f64
    }
}

/// SSB `sum_j b_j·||mean_j - g||²` in O(d) per read, by a moving anchor `c`:
/// with `A = sum_j b_j·||mean_j - c||²` and `B = sum_j b_j·(mean_j - c)`, for any `g`,
/// `SSB(g) = A - 2(g - c)·B + N·||g - c||²` (expand the square; no assumption on `g`). A change of
/// cluster `j` takes its old terms out of `A` and `B` and puts its new ones in (O(d), each sum
/// an unevaluated `hi + lo`, TwoSum, so no rounding accumulates over the steps); a read is O(d).
///
/// Error analysis (the tolerance of the tests): Cauchy-Schwarz gives `|B| ≤ sqrt(N·A)`, so while
/// `N·||g - c||² ≤ τ·A` (τ = 1/64) the cross term is at most `2√τ·A = A/4`, the last one `A/64`,
/// and `SSB ≥ (1 - 2√τ)·A = 3A/4`: each term carries the rounding of a `d`-term sum, `(d + 2)·ε`
/// of its size, so SSB is within `(d + 2)·ε·(1 + 1/4 + 1/64)/(3/4) < 2(d + 2)·ε` relative of the
/// exact value of the formula. When `g` has drifted further, the anchor moves to `g` and `A`, `B`
/// are summed anew (O(k·d); after `~N/8` points of a stationary stream, so O(k·d/N) amortised).
#[derive(Default)]
pub struct SsbAnchor {
    pub version: i64, // the summaries' version the sums reflect; -1: none
    c: Vec<f64>,
    t: Vec<f64>, // each slot's term b_j·||mean_j - c||², as it entered A
    a: (f64, f64),
    b: Vec<(f64, f64)>,
}

impl SsbAnchor {
    const TAU: f64 = 1.0 / 64.0;

    /// No sums yet: the first read builds them.
    pub fn new() -> Self {
        SsbAnchor { version: -1, ..Default::default() }
    }

    /// The anchor and its sums as bytes ([`StateOut`]).
    pub fn save(&self, out: &mut StateOut) {
        out.int(self.version);
        out.nums(&self.c);
        out.nums(&self.t);
        out.num(self.a.0);
        out.num(self.a.1);
        out.nums(&self.b.iter().flat_map(|&(hi, lo)| [hi, lo]).collect::<Vec<f64>>());
    }

    /// The anchor [`SsbAnchor::save`] wrote, over `cap` slots of dimension `d`; `None` when the
    /// bytes do not fit. An anchor of no version (the next read builds it) loads as [`SsbAnchor::new`].
    pub fn load(inp: &mut StateIn, cap: usize, d: usize) -> Option<Self> {
        let version = inp.int()?;
        let c = inp.nums()?;
        let t = inp.nums()?;
        let a = (inp.num()?, inp.num()?);
        let b = inp.nums()?;
        if version < 0 {
            return Some(SsbAnchor::new());
        }
        if c.len() != d || t.len() != cap || b.len() != 2 * d {
            return None;
        }
        let b = b.chunks_exact(2).map(|p| (p[0], p[1])).collect();
        Some(SsbAnchor { version, c, t, a, b })
    }

    /// Slot `j`'s terms (count `count`, mean `mean`) out of the sums.
    pub fn remove(&mut self, j: usize, count: i64, mean: &[f64]) {
        add_to(&mut self.a, -self.t[j]);
        self.t[j] = 0.0;
        let w = count as f64;
        for ((b, m), c) in self.b.iter_mut().zip(mean).zip(&self.c) {
            add_to(b, -(w * (m - c)));
        }
    }

    /// Slot `j`'s terms into the sums.
    pub fn add(&mut self, j: usize, count: i64, mean: &[f64]) {
        if count <= 0 {
            return;
        }
        let w = count as f64;
        let t = w * sq_dist(mean, &self.c);
        self.t[j] = t;
        add_to(&mut self.a, t);
        for ((b, m), c) in self.b.iter_mut().zip(mean).zip(&self.c) {
            add_to(b, w * (m - c));
        }
    }

    /// Anchor at `g` and sum the `cap` slots anew. O(k·d).
    pub fn rebuild(&mut self, sl: &Slots, cap: usize, g: &[f64], version: i64) {
        let d = sl.d;
        self.c = g.to_vec();
        self.t = vec![0.0; cap];
        self.a = (0.0, 0.0);
        self.b = vec![(0.0, 0.0); d];
        for j in 0..sl.counts.len() {
            self.add(j, sl.counts[j], &sl.means[j * d..(j + 1) * d]);
        }
        self.version = version;
    }

    /// SSB at global mean `g` of `n` elements, or `None` when `g` is too far from the anchor.
    pub fn value(&self, n: i64, g: &[f64]) -> Option<f64> {
        let a = self.a.0 + self.a.1;
        let (mut cross, mut e2) = (0.0, 0.0);
        for ((gi, ci), bi) in g.iter().zip(&self.c).zip(&self.b) {
            let e = gi - ci;
            cross += e * (bi.0 + bi.1);
            e2 += e * e;
        }
        let last = n as f64 * e2;
        if last > Self::TAU * a || (a == 0.0 && e2 > 0.0) {
            return None;
        }
        Some((a - 2.0 * cross + last).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welford_update_then_revert() {
        let mut mean = vec![0.0, 0.0];
        let mut m2 = welford(&mut mean, 0.0, 0, 1, &[0.0, 0.0]);
        m2 = welford(&mut mean, m2, 1, 1, &[2.0, 0.0]);
        assert_eq!((mean.clone(), m2), (vec![1.0, 0.0], 2.0));
        m2 = welford(&mut mean, m2, 2, 2, &[4.0, 0.0]); // weights: {0, 2, 4, 4}
        assert_eq!((mean.clone(), m2), (vec![2.5, 0.0], 11.0));
        m2 = welford(&mut mean, m2, 4, -2, &[4.0, 0.0]);
        assert_eq!((mean, m2), (vec![1.0, 0.0], 2.0));
    }

    #[test]
    fn unit_parts_are_exact_to_twice_the_precision() {
        let a = [1.0, 1e-8, 3.0];
        let (mut h, mut l) = ([0.0; 3], [0.0; 3]);
        let n = unit_parts(&a, &mut h, &mut l);
        for i in 0..3 {
            // h·n + l·n reproduces a to far below an ulp of a
            let back = h[i].mul_add(n, l[i] * n);
            assert!((back - a[i]).abs() <= 1e-16 * a[i].abs(), "{i}");
        }
        let b = [1.0, 2e-8, 3.0];
        let (mut hb, mut lb) = ([0.0; 3], [0.0; 3]);
        unit_parts(&b, &mut hb, &mut lb);
        // 1 - cos = |a×b|²/(|a|²|b|²(1 + cos)), the cross product (-3e-8, 0, 1e-8) without cancellation
        let got = unit_half_sq(&h, &l, &hb, &lb);
        let cross2 = 3e-8f64 * 3e-8 + 1e-8 * 1e-8;
        let (na2, nb2) = (dot(&a, &a), dot(&b, &b));
        let want = cross2 / (na2 * nb2 * (1.0 + dot(&a, &b) / (na2 * nb2).sqrt()));
        assert!((got - want).abs() < 1e-13 * want, "{got} {want}");
        // the cancelling form loses it
        let naive = 1.0 - dot(&a, &b) / (na2 * nb2).sqrt();
        assert!((naive - want).abs() > 1e-3 * want);
    }

    #[test]
    fn unit_vectors_are_the_same_bits_at_every_length() {
        // a·2**k is exact here, and so is the plain path's sum of squares on `a`: the rescaled
        // path must give the plain bits (hi, lo) and the norm scaled by 2**k where representable
        let a = [0.75, -0.5, 0.125];
        let (mut h0, mut l0) = ([0.0; 3], [0.0; 3]);
        let n0 = unit_parts(&a, &mut h0, &mut l0);
        let mut u0 = a;
        assert!(to_unit(&mut u0));
        for k in [-1071, -1050, -1000, -700, -484, -481, 300, 520, 700, 1000, 1023] {
            let b: Vec<f64> = a.iter().map(|x| x * pow2_pair(k).0 * pow2_pair(k).1).collect();
            assert!(b.iter().zip(&a).all(|(y, x)| y * pow2_pair(-k).0 * pow2_pair(-k).1 == *x), "{k}");
            let (mut h, mut l) = ([0.0; 3], [0.0; 3]);
            let n = unit_parts(&b, &mut h, &mut l);
            assert_eq!((h, l), (h0, l0), "{k}");
            let want = n0 * pow2_pair(k).0 * pow2_pair(k).1;
            assert!(n == want && n > 0.0, "{k} {n} {want}");
            let mut u = b.clone();
            assert!(to_unit(&mut u));
            assert_eq!(u, u0, "{k}");
        }
        // [3e-160, 4e-160]: the plain squares are subnormal; [1e-200, 1e-200]: they are 0
        let (mut h, mut l) = ([0.0; 2], [0.0; 2]);
        assert_eq!(unit_parts(&[3e-160, 4e-160], &mut h, &mut l), 5e-160);
        assert_eq!(h, [0.6, 0.8]);
        let (mut h1, mut l1) = ([0.0; 2], [0.0; 2]);
        let x = 1e-200 * pow2(662); // in [1/2, 1), exactly
        unit_parts(&[x, x], &mut h1, &mut l1);
        assert_eq!(unit_parts(&[1e-200, 1e-200], &mut h, &mut l), 1e-200 * std::f64::consts::SQRT_2);
        assert_eq!((h, l), (h1, l1));
        assert_eq!(unit_parts(&[f64::MAX, f64::MAX], &mut h, &mut l), f64::INFINITY);
        unit_parts(&[f64::MAX / 2.0, f64::MAX / 2.0], &mut h1, &mut l1); // rescaled as well
        let (mut h2, mut l2) = ([0.0; 2], [0.0; 2]);
        unit_parts(&[f64::MAX * pow2(-1024), f64::MAX * pow2(-1024)], &mut h2, &mut l2);
        assert_eq!((h, l), (h2, l2));
        assert_eq!((h1, l1), (h2, l2));
        assert_eq!(unit_parts(&[-5e-324, 0.0], &mut h, &mut l), 5e-324);
        assert_eq!((h, l), ([-1.0, 0.0], [0.0, 0.0]));
        assert_eq!(unit_parts(&[0.0, 0.0], &mut h, &mut l), 0.0);
        assert_eq!((h, l), ([0.0; 2], [0.0; 2]));
        let mut z = [0.0, -0.0];
        assert!(!to_unit(&mut z));
        // frexp's exponent, negated, on normal and subnormal magnitudes
        for (x, k) in [(1.0, -1), (0.75, 0), (5e-324, 1073), (1e-310, 1029), (f64::MAX, -1024), (3.0, -2)] {
            assert_eq!(pow2_exponent(&[0.0, -x]), k, "{x}");
        }
    }

    fn cached(s: &Slots, cosine: bool) -> SlotCache {
        let mut c = SlotCache::new(s.counts.len(), s.d, cosine);
        for j in 0..s.counts.len() {
            c.set(s, j);
        }
        c
    }

    #[test]
    fn silhouette_of_a_point_from_summaries() {
        // clusters {0, 1} (mean 0.5, M2 0.5) and {9}; the point 0 of the first
        let s = Slots { counts: &[2, 1], means: &[0.5, 9.0], m2: &[0.5, 0.0], d: 1 };
        let c = cached(&s, false);
        let a = (2.0 * 0.25 + 0.5) / 1.0; // to its mate 1: 1
        let b = 81.0;
        assert_eq!(silhouette(&s, &c, &[0.0], 0, 0.0, false), (b - a) / b);
        assert_eq!(silhouette(&s, &c, &[9.0], 1, 0.25, false), 0.25); // alone in its cluster
        let one = Slots { counts: &[2], means: &[0.5], m2: &[0.5], d: 1 };
        assert!(silhouette(&one, &cached(&one, false), &[0.0], 0, 0.0, false).is_nan());
    }

    #[test]
    fn pruned_silhouette_equals_the_full_scan() {
        // 40 clusters on a grid in 3 dimensions, points around them
        let (k, d) = (40usize, 3usize);
        let mut means = vec![0.0; k * d];
        let mut counts = vec![0i64; k];
        let mut m2 = vec![0.0; k];
        for j in 0..k {
            means[j * d] = (j % 7) as f64 * 3.0;
            means[j * d + 1] = (j / 7) as f64 * 2.5;
            means[j * d + 2] = (j % 3) as f64 * 0.5;
            counts[j] = 1 + (j as i64 % 4);
            m2[j] = if counts[j] > 1 { 0.3 * j as f64 } else { 0.0 };
        }
        counts[5] = 0; // a free slot
        m2[5] = 0.0;
        let s = Slots { counts: &counts, means: &means, m2: &m2, d };
        let c = cached(&s, false);
        for own in [0usize, 3, 17, 39] {
            let mut row = vec![0.0; k];
            distance_row(&s, &c, own, false, &mut row);
            for t in 0..20 {
                let x: Vec<f64> = (0..d).map(|i| means[own * d + i] + ((t * 7 + i * 3) % 11) as f64 * 0.4 - 2.0).collect();
                let full = silhouette(&s, &c, &x, own, 0.25, false);
                let pruned = silhouette_pruned(&s, &c, &x, own, 0.25, &row, &mut Vec::new());
                assert_eq!(full, pruned, "own {own}, point {t}");
            }
        }
    }

    #[test]
    fn a_block_is_bit_for_bit_its_rows_one_by_one() {
        for d in 1..=6 {
            a_block_of_dimension(d);
        }
    }

    fn a_block_of_dimension(d: usize) {
        let (m, cap) = (1500usize, 4usize);
        let data: Vec<f64> = (0..m * d).map(|i| ((i * 7919) % 1013) as f64 * 0.37 - 150.0).collect();
        let slots: Vec<usize> = (0..m).map(|i| (i * 31 + i / 7) % cap).collect();
        let ws: Vec<i64> = (0..m).map(|i| 1 + (i % 3) as i64).collect();
        let state = (vec![1i64; cap], vec![0.5; cap * d], vec![0.0; cap], vec![0.5; d]);
        block_equals_rows(d, &slots, &ws, &data, state, cap as i64, 0.0);
    }

    #[test]
    fn rows_by_label_are_bit_for_bit_the_rows_one_by_one() {
        // every dimension of the fused pass and beyond, labels through a table or not, weights
        // or none, slots met twice in a row and far apart
        for d in 1..=6 {
            let (m, cap) = (1500usize, 5usize);
            let data: Vec<f64> = (0..m * d).map(|i| ((i * 7919) % 1013) as f64 * 0.37 - 150.0 + 1.0 / (1 + i) as f64).collect();
            let labels: Vec<i64> = (0..m).map(|i| ((i * 31 + i / 7) % 9) as i64).collect();
            let table: Vec<i64> = vec![3, 0, 4, 1, 2, 0, 3, 1, 4];
            let ws: Vec<i64> = (0..m).map(|i| 1 + (i % 3) as i64).collect();
            let state = (vec![1i64; cap], vec![0.5; cap * d], vec![0.0; cap], vec![0.5; d]);
            for (with_table, with_ws) in [(false, false), (false, true), (true, false), (true, true)] {
                let lab: Vec<i64> = if with_table { labels.clone() } else { labels.iter().map(|&v| v % cap as i64).collect() };
                let to = Targets { labels: &lab, table: with_table.then_some(&table[..]) };
                rows_equal_rows(d, to, with_ws.then_some(&ws[..]), &data, state.clone(), cap as i64, 0.0);
            }
        }
        // counts beyond 2**53: the general path
        let big = 1i64 << 60;
        let state = (vec![big, 5], vec![0.5; 4], vec![1.0; 2], vec![0.5; 2]);
        let to = Targets { labels: &[0, 1, 0], table: None };
        rows_equal_rows(2, to, Some(&[3, 1, 2]), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], state.clone(), big + 5, 1.0);
        rows_equal_rows(2, to, None, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], state, big + 5, 1.0);
    }

    #[test]
    fn the_plain_fused_pass_is_the_one_this_cpu_runs() {
        // the build without AVX2 (run directly) gives the bits of the path `welford_rows` takes
        fn both<const D: usize>() {
            let (m, cap) = (700usize, 3usize);
            let data: Vec<f64> = (0..m * D).map(|i| ((i * 7919) % 1013) as f64 * 0.37 - 150.0 + 1.0 / (1 + i) as f64).collect();
            let labels: Vec<i64> = (0..m).map(|i| ((i * 31 + i / 7) % cap) as i64).collect();
            let ws: Vec<i64> = (0..m).map(|i| 1 + (i % 3) as i64).collect();
            let run = |plain: bool| {
                let (mut count, mut mean, mut m2, mut gmean) = (vec![1i64; cap], vec![0.5; cap * D], vec![0.0; cap], vec![0.5; D]);
                let mut touched = vec![0i64; cap];
                let mut b = Block { count: &mut count, mean: &mut mean, m2: &mut m2, gmean: &mut gmean, d: D };
                let g = if plain {
                    // SAFETY: every label < cap, weights positive, counts far below 2**53
                    unsafe { fused::<D, _, _>(&mut b, m, |r| labels[r] as usize, |r| ws[r], &data, cap as i64, 0.0, &mut touched, 3) }
                } else {
                    welford_rows(&mut b, Targets { labels: &labels, table: None }, Some(&ws), &data, cap as i64, 0.0, &mut touched, 3).unwrap()
                };
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                (count, bits(&mean), bits(&m2), bits(&gmean), g.to_bits(), touched)
            };
            assert_eq!(run(true), run(false), "d {D}");
        }
        both::<1>();
        both::<2>();
        both::<3>();
        both::<4>();
    }

    /// `welford_rows` from `state` leaves the very state the rows' `welford` steps one by one
    /// leave, and marks the touched slots (and only those) with the version.
    fn rows_equal_rows(d: usize, to: Targets, ws: Option<&[i64]>, data: &[f64], state: State, n: i64, gm2: f64) {
        let (mut count, mut mean, mut m2, mut gmean) = state.clone();
        let (mut c2, mut mean2, mut m22, mut g2) = state;
        let cap = count.len();
        let mut touched = vec![0i64; cap];
        let got = {
            let mut b = Block { count: &mut count, mean: &mut mean, m2: &mut m2, gmean: &mut gmean, d };
            welford_rows(&mut b, to, ws, data, n, gm2, &mut touched, 7).expect("a good block")
        };
        let (mut n, mut gq) = (n, gm2);
        let mut want_touched = vec![0i64; cap];
        for i in 0..to.labels.len() {
            let s = match to.table {
                Some(t) => t[to.labels[i] as usize] as usize,
                None => to.labels[i] as usize,
            };
            let (w, x) = (ws.map_or(1, |w| w[i]), &data[i * d..(i + 1) * d]);
            m22[s] = welford(&mut mean2[s * d..(s + 1) * d], m22[s], c2[s], w, x);
            c2[s] += w;
            want_touched[s] = 7;
            gq = welford(&mut g2, gq, n, w, x);
            n += w;
        }
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            (count, bits(&mean), bits(&m2), bits(&gmean), got.to_bits(), touched),
            (c2, bits(&mean2), bits(&m22), bits(&g2), gq.to_bits(), want_touched),
            "d {d}, table {}, weights {}",
            to.table.is_some(),
            ws.is_some()
        );
    }

    #[test]
    fn a_bad_block_by_label_is_refused_with_the_state_untouched() {
        let d = 2;
        let state = (vec![2i64, 3], vec![0.5, 1.5, 2.5, 3.5], vec![1.0, 2.0], vec![0.25, 0.75]);
        let data = [1.0, 2.0, 3.0, 4.0];
        let table = [1i64, 0];
        let bad_table = [1i64, 2];
        type Case<'a> = (Targets<'a>, Option<&'a [i64]>, &'a [f64], &'a str); // where, weights, rows, error
        let cases: [Case; 6] = [
            (Targets { labels: &[0, 2], table: None }, None, &data, "slots must lie in the arrays"),
            (Targets { labels: &[0, -1], table: None }, None, &data, "slots must lie in the arrays"),
            (Targets { labels: &[0, 2], table: Some(&table) }, None, &data, "slots must lie in the arrays"),
            (Targets { labels: &[0, 1], table: Some(&bad_table) }, None, &data, "slots must lie in the arrays"),
            (Targets { labels: &[0, 1], table: None }, Some(&[1, 0]), &data, "weights must be positive"),
            (Targets { labels: &[0, 1], table: None }, None, &data[..3], "the rows, their labels and their weights differ in length"),
        ];
        for (to, ws, data, msg) in cases {
            let (mut count, mut mean, mut m2, mut gmean) = state.clone();
            let mut touched = vec![0i64; 2];
            let mut b = Block { count: &mut count, mean: &mut mean, m2: &mut m2, gmean: &mut gmean, d };
            assert_eq!(welford_rows(&mut b, to, ws, data, 5, 3.0, &mut touched, 9), Err(msg));
            assert_eq!((count, mean, m2, gmean, touched), (state.0.clone(), state.1.clone(), state.2.clone(), state.3.clone(), vec![0, 0]));
        }
    }

    type State = (Vec<i64>, Vec<f64>, Vec<f64>, Vec<f64>); // counts, means, scatters, global mean

    /// `welford_rows` from `state` (and `n` elements of scatter `gm2`) leaves the very state
    /// the rows' `welford` steps one by one leave.
    fn block_equals_rows(d: usize, slots: &[usize], ws: &[i64], data: &[f64], state: State, n: i64, gm2: f64) {
        let (mut count, mut mean, mut m2, mut gmean) = state.clone();
        let (mut c2, mut mean2, mut m22, mut g2) = state;
        let got = {
            let mut b = Block { count: &mut count, mean: &mut mean, m2: &mut m2, gmean: &mut gmean, d };
            let labels: Vec<i64> = slots.iter().map(|&s| s as i64).collect();
            let mut touched = vec![0i64; b.count.len()];
            welford_rows(&mut b, Targets { labels: &labels, table: None }, Some(ws), data, n, gm2, &mut touched, 1).expect("a good block")
        };
        let (mut n, mut gq) = (n, gm2);
        for i in 0..slots.len() {
            let (s, w, x) = (slots[i], ws[i], &data[i * d..(i + 1) * d]);
            m22[s] = welford(&mut mean2[s * d..(s + 1) * d], m22[s], c2[s], w, x);
            c2[s] += w;
            gq = welford(&mut g2, gq, n, w, x);
            n += w;
        }
        assert_eq!((count, mean, m2, gmean, got.to_bits()), (c2, mean2, m22, g2, gq.to_bits()), "d {d}");
    }

    #[test]
    fn rows_of_distances_are_sq_dist_bit_for_bit() {
        // every path this CPU runs (plain, AVX2), each dimension's kernel and tail
        let paths: Vec<Simd> = [Simd::Plain, Simd::Avx2].into_iter().filter(|p| p.available()).collect();
        for d in [1usize, 2, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 64, 127, 128, 130] {
            for w in [0usize, 3, 19, 20] {
                // blocks of eight and of four, and rows left over
                let rows: Vec<f64> = (0..w * d).map(|i| ((i * 7919) % 1013) as f64 * 0.37 - 150.0 + 1.0 / (1 + i) as f64).collect();
                let b: Vec<f64> = (0..d).map(|i| (i as f64).sin() * 3.0).collect();
                let mut out = vec![0.0; w];
                sq_dists(&rows, &b, &mut out);
                for &path in &paths {
                    let mut on = vec![-1.0; w];
                    sq_dists_on(path, &rows, &b, &mut on);
                    assert_eq!(on.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "d {d}, w {w}, {path:?}");
                }
                for j in 0..w {
                    let want = sq_dist(&rows[j * d..(j + 1) * d], &b);
                    assert_eq!(out[j].to_bits(), want.to_bits(), "d {d}, row {j}");
                }
            }
        }
    }

    #[test]
    fn sq_dist_sums_in_its_stated_order() {
        // lanes i mod 4 added pairwise, then the tail left to right
        let a: Vec<f64> = (0..19).map(|i| 1.0 + (i as f64) * 1e-3 + if i % 5 == 0 { 1e8 } else { 0.0 }).collect();
        let b = vec![0.25; 19];
        let t: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).collect();
        let mut s = [0.0f64; 4];
        for i in 0..16 {
            s[i % 4] += t[i];
        }
        let want = (((s[0] + s[1]) + (s[2] + s[3])) + t[16] + t[17]) + t[18];
        assert_eq!(sq_dist(&a, &b).to_bits(), want.to_bits());
        let four = ((t[0] + t[1]) + (t[2] + t[3]) + t[4]) + t[5];
        assert_eq!(sq_dist(&a[..6], &b[..6]).to_bits(), four.to_bits());
    }

    #[test]
    fn a_block_with_wide_products_is_still_its_rows_one_by_one() {
        // counts near 2**62: w·c beyond i64, the factors by the wide path
        let (d, cap) = (2usize, 2usize);
        let big = 1i64 << 62;
        let data = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let (slots, ws) = ([0usize, 1, 0], [3i64, 1, 2]);
        let state = (vec![big, 5], vec![0.5; cap * d], vec![1.0; cap], vec![0.5; d]);
        block_equals_rows(d, &slots, &ws, &data, state, big + 5, 1.0);
    }

    #[test]
    fn the_first_value_out_of_range_is_found_in_any_block() {
        assert_eq!(MAX_VECTOR_VALUE, 2f64.powi(256));
        let mut v = vec![1.0; 2000];
        v[100] = -MAX_VECTOR_VALUE * (1.0 - f64::EPSILON / 2.0); // the largest value below the bound
        assert_eq!(first_out_of_range(&v), None);
        v[1900] = -MAX_VECTOR_VALUE;
        assert_eq!(first_out_of_range(&v), Some(1900));
        v[1500] = f64::NAN;
        v[1700] = f64::INFINITY;
        assert_eq!(first_out_of_range(&v), Some(1500));
        v[3] = f64::NEG_INFINITY;
        assert_eq!(first_out_of_range(&v), Some(3));
    }

    #[test]
    fn changed_after_finds_every_slot_above() {
        let t: Vec<i64> = (0..50).map(|j| if j % 13 == 4 { 9 } else { 2 }).collect();
        assert_eq!(changed_after(&t, 5), vec![4, 17, 30, 43]);
        assert!(changed_after(&t, 9).is_empty());
    }

    #[test]
    fn sq_dist_in_lanes_is_the_exact_sum_for_small_integers() {
        let a: Vec<f64> = (0..11).map(|i| i as f64).collect();
        let b = vec![1.0; 11];
        assert_eq!(sq_dist(&a, &b), (0..11).map(|i| ((i - 1) * (i - 1)) as f64).sum::<f64>());
    }

    #[test]
    fn the_cache_sums_scatters_and_forgets_a_freed_slot() {
        let s = Slots { counts: &[2, 4], means: &[0.0, 1.0], m2: &[8.0, 4.0], d: 1 };
        let mut c = cached(&s, false);
        assert_eq!((c.q[0], c.s[0], c.s[1], c.sum_s.0 + c.sum_s.1), (4.0, 2.0, 1.0, 3.0));
        let freed = Slots { counts: &[0, 4], means: &[0.0, 1.0], m2: &[0.0, 4.0], d: 1 };
        c.set(&freed, 0);
        assert_eq!((c.s[0], c.sum_s.0 + c.sum_s.1), (0.0, 1.0));
    }

    #[test]
    fn anchored_ssb_follows_changes_and_moves_its_anchor() {
        // clusters {0, 2} and {100}: means 1 and 100, N = 3, g = 34: SSB = 2·33² + 66² = 6534
        let s = Slots { counts: &[2, 1], means: &[1.0, 100.0], m2: &[2.0, 0.0], d: 1 };
        let mut an = SsbAnchor::new();
        an.rebuild(&s, 2, &[34.0], 7);
        assert_eq!(an.value(3, &[34.0]), Some(6534.0));
        // 34 joins cluster 0 (mean 12), g stays 34: SSB = 3·22² + 66² = 5808
        an.remove(0, 2, &[1.0]);
        an.add(0, 3, &[12.0]);
        assert_eq!(an.value(4, &[34.0]), Some(5808.0));
        // 38 joins cluster 1 (mean 69), g = 34.8: SSB = 3·22.8² + 2·34.2² = 3898.8, by the cross term
        an.remove(1, 1, &[100.0]);
        an.add(1, 2, &[69.0]);
        let got = an.value(5, &[34.8]).unwrap();
        assert!((got - 3898.8).abs() <= 1e-12 * 3898.8, "{got}");
        // far from the anchor: a read asks for a new one
        assert_eq!(an.value(5, &[60.0]), None);
    }

    /// A grid of `k` clusters in `d` dimensions, some free, with scatters: for the kernels' tests.
    fn grid(k: usize, d: usize) -> (Vec<i64>, Vec<f64>, Vec<f64>) {
        let mut means = vec![0.0; k * d];
        let mut counts = vec![0i64; k];
        let mut m2 = vec![0.0; k];
        for j in 0..k {
            for i in 0..d {
                means[j * d + i] = ((j * 7 + i * 13) % 29) as f64 * 0.731 + (j / 5) as f64 * 1.9 - 3.0 + 1.0 / (1 + j + i) as f64;
            }
            counts[j] = if j % 11 == 5 { 0 } else { 1 + (j as i64 % 4) };
            m2[j] = if counts[j] > 1 { 0.37 * j as f64 } else { 0.0 };
        }
        (counts, means, m2)
    }

    #[test]
    fn new_rows_keep_the_matrix_and_its_sum() {
        // every row written by replace_row: the matrix is the full one, and its tracked sum
        // is the exact sum of its entries to a few ulps of it
        for (k, d) in [(37usize, 2usize), (40, 5), (9, 1)] {
            let (counts, means, m2) = grid(k, d);
            let s = Slots { counts: &counts, means: &means, m2: &m2, d };
            let c = cached(&s, false);
            let mut dist = vec![0.0; k * k];
            let mut total = (0.0, 0.0);
            let mut row = vec![0.0; k];
            for pass in 0..2 {
                for j in (0..k).rev() {
                    new_row(&s, &c, j, false, &mut row, &mut dist, k, &mut total);
                    let _ = pass;
                }
            }
            for i in 0..k {
                let mut want = vec![0.0; k];
                distance_row(&s, &c, i, false, &mut want);
                for j in 0..k {
                    assert_eq!(dist[i * k + j].to_bits(), dist[j * k + i].to_bits());
                    assert_eq!(dist[i * k + j].to_bits(), want[j].to_bits(), "k {k}, d {d}, ({i}, {j})");
                }
            }
            let exact: f64 = dist.iter().sum();
            assert!((total.0 + total.1 - exact).abs() <= 1e-13 * exact, "{total:?} {exact}");
        }
    }

    /// The kernels with an AVX2 path give the very bits of their plain path (on a CPU without
    /// AVX2 there is one path: nothing to compare).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_kernels_give_the_plain_bits() {
        if Simd::widest() != Simd::Avx2 {
            return;
        }
        for (k, d) in [(37usize, 2usize), (61, 3), (40, 5), (23, 16), (9, 1)] {
            let (counts, means, m2) = grid(k, d);
            let s = Slots { counts: &counts, means: &means, m2: &m2, d };
            let c = cached(&s, false);
            // rows and column writes and the sum
            let (mut d1, mut d2) = (vec![0.5; k * k], vec![0.5; k * k]);
            let (mut t1, mut t2) = ((0.0, 0.0), (0.0, 0.0));
            let mut row = vec![0.0; k];
            for j in [0, k / 2, k - 1, 3] {
                distance_row(&s, &c, j, false, &mut row);
                replace_row_plain(&mut d1, k, j, &row, &mut t1);
                unsafe { replace_row_avx2(&mut d2, k, j, &row, &mut t2) };
            }
            assert_eq!((d1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), t1.0.to_bits(), t1.1.to_bits()),
                       (d2.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), t2.0.to_bits(), t2.1.to_bits()));
            // the pruned silhouette
            for own in [0usize, 7, k - 1] {
                if counts[own] == 0 {
                    continue;
                }
                distance_row(&s, &c, own, false, &mut row);
                for t in 0..15 {
                    let x: Vec<f64> = (0..d).map(|i| means[own * d + i] + ((t * 7 + i * 3) % 11) as f64 * 0.4 - 2.0).collect();
                    let a = silhouette_pruned_plain(&s, &c, &x, own, 0.25, &row, &mut Vec::new());
                    let b = unsafe { silhouette_pruned_avx2(&s, &c, &x, own, 0.25, &row, &mut Vec::new()) };
                    assert_eq!(a.to_bits(), b.to_bits(), "k {k}, d {d}, own {own}, point {t}");
                }
            }
            // Davies-Bouldin's changes
            let mut full = vec![0.0; k * k];
            let mut tot = (0.0, 0.0);
            for j in 0..k {
                new_row(&s, &c, j, false, &mut row, &mut full, k, &mut tot);
            }
            let (mut p, mut v) = (DaviesBouldin::default(), DaviesBouldin::default());
            p.rebuild(&c.s, &full, k, k);
            v.rebuild(&c.s, &full, k, k);
            for (step, j) in [1usize, k / 3, k - 2, 1].into_iter().enumerate() {
                let sc = c.s[j] * (1.5 + step as f64);
                p.change_plain(sc, &full, k, j);
                unsafe { v.change_avx2(sc, &full, k, j) };
                assert_eq!((p.m.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), &p.a, p.sum.0.to_bits(), p.sum.1.to_bits()),
                           (v.m.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), &v.a, v.sum.0.to_bits(), v.sum.1.to_bits()));
            }
            // and the maxima are a rebuild's from the same scatters
            let mut fresh = DaviesBouldin::default();
            fresh.rebuild(&p.s.clone(), &full, k, k);
            assert_eq!(p.m, fresh.m, "k {k}, d {d}");
        }
    }

    /// A xorshift generator: the randomized tests' inputs, the same on every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// `k` slots in `d` dimensions on a coarse lattice: many means equal (distances 0 between live
    /// slots) and many distances equal, a few slots free, scatters from three values (equal
    /// ratios): ties for every minimum and maximum the kernels look for.
    fn lattice(rng: &mut Rng, k: usize, d: usize) -> (Vec<i64>, Vec<f64>, Vec<f64>) {
        let means = (0..k * d).map(|_| rng.below(3) as f64 * 1.5).collect();
        let counts = (0..k).map(|_| if rng.below(7) == 0 { 0 } else { 1 + rng.below(3) as i64 }).collect::<Vec<_>>();
        let m2 = counts.iter().map(|&n| if n > 1 { [0.0, 0.75, 3.0][rng.below(3)] } else { 0.0 }).collect();
        (counts, means, m2)
    }

    /// The AVX2 kernels written lane by lane (the fused row write, the silhouette's bounds, the
    /// Davies-Bouldin row and its rescans) against the plain ones, on lattices full of ties and
    /// duplicate means, every width mod 4, widths below the capacity, free slots: the matrix, its
    /// sum, the scores, the maxima, their positions and their sum, bit for bit.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_lane_kernels_give_the_plain_bits_on_ties() {
        if Simd::widest() != Simd::Avx2 {
            return;
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for trial in 0..150 {
            let k = 1 + rng.below(41);
            let d = 1 + rng.below(9);
            let cap = k + rng.below(3);
            let (counts, mut means, m2) = lattice(&mut rng, k, d);
            let start: Vec<f64> = (0..cap * cap).map(|_| rng.below(4) as f64 * 0.5).collect();
            let (mut d1, mut d2) = (start.clone(), start);
            let (mut t1, mut t2) = ((1.0, 0.0), (1.0, 0.0));
            let (mut r1, mut r2) = (vec![0.0; k], vec![0.0; k]);
            let (mut p, mut v) = (DaviesBouldin::default(), DaviesBouldin::default());
            for step in 0..3 * k {
                let j = rng.below(k);
                if step >= k {
                    // a mean moves (to a lattice point: ties again)
                    means[j * d + rng.below(d)] = rng.below(3) as f64 * 1.5;
                }
                let s = Slots { counts: &counts, means: &means, m2: &m2, d };
                let c = cached(&s, false);
                distance_row(&s, &c, j, false, &mut r1);
                replace_row_plain(&mut d1, cap, j, &r1, &mut t1);
                unsafe { new_row_avx2(&s, &c, j, false, &mut r2, &mut d2, cap, &mut t2) };
                assert_eq!((bits(&d1), t1.0.to_bits(), t1.1.to_bits()), (bits(&d2), t2.0.to_bits(), t2.1.to_bits()), "trial {trial}, k {k}, d {d}, step {step}");
                if step + 1 == k {
                    // every row written once: Davies-Bouldin from here, a change per step
                    p.rebuild(&c.s, &d1, cap, k);
                    v.rebuild(&c.s, &d1, cap, k);
                } else if step >= k {
                    let sc = [c.s[j], 0.0, c.s[rng.below(k)]][rng.below(3)];
                    p.change_plain(sc, &d1, k, j);
                    unsafe { v.change_avx2(sc, &d2, k, j) };
                    assert_eq!((bits(&p.m), &p.a, p.sum.0.to_bits(), p.sum.1.to_bits()), (bits(&v.m), &v.a, v.sum.0.to_bits(), v.sum.1.to_bits()), "trial {trial}, k {k}, d {d}, step {step}");
                }
                if counts[j] > 0 {
                    // points at the lattice's nodes (on means, between them) and off it
                    for t in 0..6 {
                        let x: Vec<f64> = (0..d).map(|i| if t < 4 { rng.below(3) as f64 * 1.5 } else { means[j * d + i] + (rng.below(5) as f64 - 2.0) * 0.3 }).collect();
                        let row = &d1[j * cap..j * cap + k];
                        let a = silhouette_pruned_plain(&s, &c, &x, j, 0.25, row, &mut Vec::new());
                        let b = unsafe { silhouette_pruned_avx2(&s, &c, &x, j, 0.25, row, &mut vec![7.0; 3]) };
                        assert_eq!(a.to_bits(), b.to_bits(), "trial {trial}, k {k}, d {d}, own {j}, point {x:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn davies_bouldin_changes_equal_a_rebuild() {
        // three slots on a line; slot 1 moves
        let dist = |m: &[f64]| -> Vec<f64> {
            let mut out = vec![0.0; 9];
            for i in 0..3 {
                for j in 0..3 {
                    out[i * 3 + j] = (m[i] - m[j]).abs();
                }
            }
            out
        };
        let (s0, s1) = ([1.0, 0.5, 2.0], [1.0, 0.7, 2.0]);
        let mut db = DaviesBouldin::default();
        db.rebuild(&s0, &dist(&[0.0, 3.0, 10.0]), 3, 3);
        let moved = dist(&[0.0, 5.0, 10.0]);
        db.change(0.7, &moved, 3, 1);
        let mut fresh = DaviesBouldin::default();
        fresh.rebuild(&s1, &moved, 3, 3);
        assert_eq!(db.m, fresh.m);
        assert!((db.value(3) - fresh.value(3)).abs() <= 1e-15 * fresh.value(3));
    }

    #[test]
    fn saved_states_load_as_they_were_and_go_on_alike() {
        // each running state saved then loaded: the same bits, and the same bits after the same
        // further steps (the sums depend on the order of the steps, so nothing else would do)
        let (k, d) = (23usize, 3usize);
        let (counts, means, m2) = grid(k, d);
        let s = Slots { counts: &counts, means: &means, m2: &m2, d };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let g: Vec<f64> = (0..d).map(|i| 0.1 * i as f64).collect();
        let mut an = SsbAnchor::new();
        an.rebuild(&s, k, &g, 4);
        an.remove(2, counts[2], &means[6..9]);
        an.add(2, counts[2] + 1, &[0.3, 0.2, 0.1]);
        let mut c = cached(&s, true);
        let mut full = vec![0.0; k * k];
        let (mut tot, mut row) = ((0.0, 0.0), vec![0.0; k]);
        for j in 0..k {
            new_row(&s, &c, j, false, &mut row, &mut full, k, &mut tot);
        }
        let mut db = DaviesBouldin::default();
        db.rebuild(&c.s, &full, k, k);
        db.change(c.s[4] * 2.0, &full, k, 4);
        let mut out = StateOut::default();
        an.save(&mut out);
        c.save(&mut out);
        db.save(&mut out);
        let mut inp = StateIn::new(&out.0);
        let mut an2 = SsbAnchor::load(&mut inp, k, d).unwrap();
        let mut c2 = SlotCache::load(&mut inp, k, d, true).unwrap();
        let mut db2 = DaviesBouldin::load(&mut inp).unwrap();
        assert!(inp.done());
        for step in 0..3 {
            let j = 5 + step;
            for a in [&mut an, &mut an2] {
                a.remove(j, counts[j], &means[j * d..(j + 1) * d]);
                a.add(j, counts[j] + 2, &[1.0, -0.5, 0.25]);
            }
            for x in [&mut c, &mut c2] {
                x.set(&s, j);
            }
            for x in [&mut db, &mut db2] {
                x.change(c.s[j] * 0.5, &full, k, j);
            }
            assert_eq!(an.value(40, &g).map(f64::to_bits), an2.value(40, &g).map(f64::to_bits));
            assert_eq!((bits(&an.t), bits(&an.c), an.a.0.to_bits(), an.a.1.to_bits()), (bits(&an2.t), bits(&an2.c), an2.a.0.to_bits(), an2.a.1.to_bits()));
            assert_eq!((bits(&c.s), bits(&c.uh), c.sum_s.0.to_bits(), c.sum_m2.1.to_bits()), (bits(&c2.s), bits(&c2.uh), c2.sum_s.0.to_bits(), c2.sum_m2.1.to_bits()));
            assert_eq!((bits(&db.m), &db.a, db.sum.0.to_bits(), db.sum.1.to_bits()), (bits(&db2.m), &db2.a, db2.sum.0.to_bits(), db2.sum.1.to_bits()));
        }
        // bytes that do not fit are refused
        let mut short = StateIn::new(&out.0[..out.0.len() - 8]);
        assert!(SsbAnchor::load(&mut short, k, d).is_some() && SlotCache::load(&mut short, k, d, true).is_some());
        assert!(DaviesBouldin::load(&mut short).is_none());
        assert!(SsbAnchor::load(&mut StateIn::new(&out.0), k + 1, d).is_none());
        let mut huge = StateOut::default();
        huge.int(i64::MAX);
        assert!(StateIn::new(&huge.0).nums().is_none());
    }
}
