//! The per-point arithmetic of `streameval.ClusterSummaries` and the silhouettes, in Rust.
//!
//! Pure functions over slices (tested by `cargo test`); `summaries_py` binds them to the numpy
//! arrays a `ClusterSummaries` owns. Each follows the Python reference operation for operation
//! (`streameval/summaries.py`, `streameval/intrinsic.py`, `streameval/_unit.py`): element-wise
//! steps give the same bits; sums of `d` terms (dot products) are summed left to right here and
//! in numpy's order there, so they agree to `d` ulps of the sum of their absolute terms.

/// `sum_i a_i·b_i`, left to right.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// `sum_i (a_i - b_i)²`, left to right.
#[inline]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        let t = x - y;
        s += t * t;
    }
    s
}

/// Welford's weighted step on `(n, mean, m2)`: add `w` copies of `x` (`w < 0` removes them),
/// leaving `n2 = n + w > 0`. Returns the new scatter (0 for one element, clamped at 0).
/// `mean' = mean + (x - mean)·(w/n2)`, `M2' = M2 + (w·n/n2)·||x - mean||²`.
pub fn welford(mean: &mut [f64], m2: f64, n: i64, w: i64, x: &[f64]) -> f64 {
    let n2 = n + w;
    debug_assert!(n2 > 0);
    let f = ratio(w as i128, n2 as i128);
    let mut sq = 0.0;
    for (m, xi) in mean.iter_mut().zip(x) {
        let delta = xi - *m;
        sq += delta * delta;
        *m += delta * f;
    }
    let m2 = m2 + ratio(w as i128 * n as i128, n2 as i128) * sq;
    if m2 > 0.0 && n2 > 1 {
        m2
    } else {
        0.0
    }
}

/// `a / b` as Python's true division of ints rounds it (correctly rounded) for `|a|, |b| < 2**53`;
/// beyond, within an ulp.
#[inline]
fn ratio(a: i128, b: i128) -> f64 {
    a as f64 / b as f64
}

/// The unit vector of `a` as `hi + lo` (`hi = fl(a/norm)`, `lo` the exact residual over the
/// norm, by a fused multiply-add) and `norm = fl(||a||)`: `_unit.unit_parts`. Zero: all 0.
pub fn unit_parts(a: &[f64], hi: &mut [f64], lo: &mut [f64]) -> f64 {
    let norm = dot(a, a).sqrt();
    let safe = if norm > 0.0 { norm } else { 1.0 };
    for ((h, l), x) in hi.iter_mut().zip(lo.iter_mut()).zip(a) {
        *h = x / safe;
        *l = (-*h).mul_add(safe, *x) / safe; // x - h·safe, rounded once
    }
    norm
}

/// `||u - v||²/2` for unit vectors as `hi + lo`: the cosine distance without cancellation.
#[inline]
pub fn unit_half_sq(ha: &[f64], la: &[f64], hb: &[f64], lb: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..ha.len() {
        let t = (ha[i] - hb[i]) + (la[i] - lb[i]);
        s += t * t;
    }
    0.5 * s
}

/// The summaries a silhouette reads: `width` slots of `counts` (0 at a free slot), `means`
/// (`width × d`, row-major) and scatters `m2`.
pub struct Slots<'a> {
    pub counts: &'a [i64],
    pub means: &'a [f64],
    pub m2: &'a [f64],
    pub d: usize,
}

/// The silhouette of `x`, a member of the cluster in slot `own`, against the summaries:
/// `(b - a)/max(a, b)` (0 when both are 0), `singleton` when its cluster holds one element, NaN
/// when no other cluster exists (`Silhouette._scores` for one point).
///
/// Squared Euclidean (`cosine = false`): the mean distance to cluster `j` is
/// `||x - mean_j||² + M2_j/b_j`, to the other members of its own `(b·||x - mean||² + M2)/(b - 1)`.
/// Cosine (unit `x`, means of unit vectors): `1 - x·mean_j` computed as
/// `(M2_j/b_j)/(1 + r_j) + r_j·||x - mean_j/r_j||²/2` (`r_j = ||mean_j||`; 1 for a zero mean),
/// clipped to `[0, 2]`, and `b·(1 - x·mean)/(b - 1)` to its own. Cost O(k·d).
pub fn silhouette(s: &Slots, x: &[f64], own: usize, singleton: f64, cosine: bool) -> f64 {
    let d = s.d;
    let mut xh = vec![0.0; if cosine { 2 * d } else { 0 }];
    let mut mh = vec![0.0; if cosine { 2 * d } else { 0 }];
    if cosine {
        let (h, l) = xh.split_at_mut(d);
        unit_parts(x, h, l);
    }
    let diss = |j: usize, mh: &mut [f64]| -> f64 {
        let mean = &s.means[j * d..(j + 1) * d];
        let c = s.counts[j].max(1) as f64;
        if cosine {
            let (h, l) = mh.split_at_mut(d);
            let r = unit_parts(mean, h, l);
            let near = if r > 0.0 { unit_half_sq(&xh[..d], &xh[d..], h, l) } else { 1.0 };
            ((s.m2[j] / c) / (1.0 + r) + r * near).clamp(0.0, 2.0)
        } else {
            sq_dist(x, mean) + s.m2[j] / c
        }
    };
    let mut b = f64::INFINITY;
    for j in 0..s.counts.len() {
        if j != own && s.counts[j] > 0 {
            b = b.min(diss(j, &mut mh));
        }
    }
    if !b.is_finite() {
        return f64::NAN;
    }
    let bo = s.counts[own];
    if bo == 1 {
        return singleton;
    }
    let own_d = diss(own, &mut mh);
    let bf = bo as f64;
    let a = if bo > 1 {
        if cosine {
            bf * own_d / (bf - 1.0)
        } else {
            let mean = &s.means[own * d..(own + 1) * d];
            (bf * sq_dist(x, mean) + s.m2[own]) / (bf - 1.0)
        }
    } else {
        0.0
    };
    let big = a.max(b);
    if big > 0.0 {
        (b - a) / big
    } else {
        0.0
    }
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
/// a free slot and at `c` itself (`ClusterSummaries.centroid_distances`).
pub fn distance_row(s: &Slots, c: usize, cosine: bool, out: &mut [f64]) {
    let d = s.d;
    if s.counts[c] <= 0 {
        out.fill(0.0); // a free slot: no distances
        return;
    }
    let mc = &s.means[c * d..(c + 1) * d];
    let (mut hc, mut lc, mut hj, mut lj) = (vec![0.0; d], vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    let rc = if cosine { unit_parts(mc, &mut hc, &mut lc) } else { 0.0 };
    for (j, o) in out.iter_mut().enumerate() {
        if j == c || s.counts[j] <= 0 {
            *o = 0.0;
            continue;
        }
        let mj = &s.means[j * d..(j + 1) * d];
        *o = if cosine {
            let rj = unit_parts(mj, &mut hj, &mut lj);
            if rc > 0.0 && rj > 0.0 {
                unit_half_sq(&hc, &lc, &hj, &lj).clamp(0.0, 2.0)
            } else {
                1.0
            }
        } else {
            sq_dist(mj, mc).sqrt()
        };
    }
}

/// Incremental Davies-Bouldin (`intrinsic._DaviesBouldinCache`): `R[i,j] = (S_i + S_j)/d_ij`
/// (0 where `d_ij = 0`), each row's maximum `m` and its first position `a`. `dist` is the
/// `cap × cap` matrix of distances between means, row-major.
#[derive(Default)]
pub struct DaviesBouldin {
    pub cap: usize,
    r: Vec<f64>,
    m: Vec<f64>,
    a: Vec<usize>,
    s: Vec<f64>,
}

#[inline]
fn inv(d: f64) -> f64 {
    if d > 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

impl DaviesBouldin {
    /// Every entry anew: O(w²).
    pub fn rebuild(&mut self, sl: &Slots, dist: &[f64], cap: usize, w: usize, cosine: bool) {
        self.cap = cap;
        self.r = vec![0.0; cap * cap];
        self.m = vec![0.0; cap];
        self.a = vec![0; cap];
        self.s = vec![0.0; cap];
        for j in 0..w {
            self.s[j] = slot_scatter(sl, j, cosine);
        }
        for i in 0..w {
            let (mut best, mut at) = (f64::NEG_INFINITY, 0);
            for j in 0..w {
                let v = (self.s[i] + self.s[j]) * inv(dist[i * cap + j]);
                self.r[i * cap + j] = v;
                if v > best {
                    (best, at) = (v, j);
                }
            }
            self.m[i] = best;
            self.a[i] = at;
        }
    }

    /// Slot `c` changed: its row and column anew, the maxima that rose or fell with them. O(w),
    /// plus O(w) per row whose maximum sat in column `c` and fell.
    pub fn change(&mut self, sl: &Slots, dist: &[f64], w: usize, c: usize, cosine: bool) {
        let cap = self.cap;
        self.s[c] = slot_scatter(sl, c, cosine);
        let sc = self.s[c];
        let mut row = vec![0.0; w];
        for (j, v) in row.iter_mut().enumerate() {
            *v = (sc + self.s[j]) * inv(dist[c * cap + j]);
        }
        for i in 0..w {
            let old = self.r[i * cap + c];
            let v = row[i];
            self.r[c * cap + i] = v;
            self.r[i * cap + c] = v;
            if v >= self.m[i] {
                self.m[i] = v;
                self.a[i] = c;
            } else if self.a[i] == c && v < old {
                let (mut best, mut at) = (f64::NEG_INFINITY, 0);
                for j in 0..w {
                    let x = self.r[i * cap + j];
                    if x > best {
                        (best, at) = (x, j);
                    }
                }
                self.m[i] = best;
                self.a[i] = at;
            }
        }
        let (mut best, mut at) = (f64::NEG_INFINITY, 0);
        for (j, &v) in row.iter().enumerate() {
            if v > best {
                (best, at) = (v, j);
            }
        }
        self.m[c] = best;
        self.a[c] = at;
    }

    /// The index: the mean of the live rows' maxima.
    pub fn value(&self, counts: &[i64]) -> f64 {
        let (mut sum, mut k) = (0.0, 0usize);
        for (i, &c) in counts.iter().enumerate() {
            if c > 0 {
                sum += self.m[i];
                k += 1;
            }
        }
        sum / k as f64
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
    fn silhouette_of_a_point_from_summaries() {
        // clusters {0, 1} (mean 0.5, M2 0.5) and {9}; the point 0 of the first
        let s = Slots { counts: &[2, 1], means: &[0.5, 9.0], m2: &[0.5, 0.0], d: 1 };
        let a = (2.0 * 0.25 + 0.5) / 1.0; // to its mate 1: 1
        let b = 81.0;
        assert_eq!(silhouette(&s, &[0.0], 0, 0.0, false), (b - a) / b);
        assert_eq!(silhouette(&s, &[9.0], 1, 0.25, false), 0.25); // alone in its cluster
        let one = Slots { counts: &[2], means: &[0.5], m2: &[0.5], d: 1 };
        assert!(silhouette(&one, &[0.0], 0, 0.0, false).is_nan());
    }
}
