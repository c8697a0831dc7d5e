//! `streameval._native.SummaryKernel`: the per-point work of a `ClusterSummaries`, in place on
//! its numpy arrays.
//!
//! The Python object owns the state (count, mean, scatter per slot, the global mean, the
//! version each slot last changed at) in numpy arrays and binds them here after every
//! reallocation; the kernel keeps a reference to each, so the addresses it holds stay valid.
//! A call that the kernel cannot take whole — a vector it cannot read (a dict, another dtype),
//! a bad value, a new or emptied cluster — returns `None` having changed nothing, and the
//! Python reference path takes the call (and raises its clear error).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PyTuple};
use smallvec::SmallVec;

use crate::summaries::{distance_row, dot, silhouette, slot_scatter, sq_dist, welford, DaviesBouldin, Slots};

type Vector = SmallVec<[f64; 128]>;

/// The address of a C-contiguous numpy array of `typestr` and `ndim` dimensions (writable when
/// `write`), with its shape, through `__array_interface__`.
fn array_view(obj: &Bound<'_, PyAny>, typestr: &str, ndim: usize, write: bool) -> PyResult<(usize, Vec<usize>)> {
    let ai = obj.getattr("__array_interface__")?;
    let ts: String = ai.get_item("typestr")?.extract()?;
    let shape: Vec<usize> = ai.get_item("shape")?.extract()?;
    let contiguous = ai.get_item("strides")?.is_none();
    let (addr, readonly): (usize, bool) = ai.get_item("data")?.extract()?;
    if ts != typestr || shape.len() != ndim || !contiguous || (write && readonly) || addr % 8 != 0 {
        let what = if write { "writable " } else { "" };
        return Err(PyValueError::new_err(format!(
            "expected a {what}C-contiguous {typestr} array of {ndim} dimensions, got {ts}, shape {shape:?}"
        )));
    }
    Ok((addr, shape))
}

fn array_addr(obj: &Bound<'_, PyAny>, typestr: &str, ndim: usize) -> PyResult<(usize, Vec<usize>)> {
    array_view(obj, typestr, ndim, true)
}

fn array_in(obj: &Bound<'_, PyAny>, typestr: &str, ndim: usize) -> PyResult<(usize, Vec<usize>)> {
    array_view(obj, typestr, ndim, false)
}

fn native(kind: &str) -> String {
    format!("{}{}", if cfg!(target_endian = "little") { "<" } else { ">" }, kind)
}

#[pyclass(module = "streameval._native")]
pub struct SummaryKernel {
    cosine: bool,
    d: usize,
    cap: usize,
    keep: Vec<Py<PyAny>>,
    count: usize,
    mean: usize,
    m2: usize,
    gmean: usize,
    touched: usize,
    dist: Option<(Py<PyAny>, usize, usize)>, // the cache of distances between means: (array, address, cap)
    rows: Vec<(f64, f64)>, // each row's sum of the cache, as an unevaluated hi + lo (see `refresh`)
}

/// `hi + lo += x` without losing the rounding error of the addition (Knuth's TwoSum).
#[inline]
fn add_to(acc: &mut (f64, f64), x: f64) {
    let s = acc.0 + x;
    let bp = s - acc.0;
    acc.1 += (acc.0 - (s - bp)) + (x - bp);
    acc.0 = s;
}

impl SummaryKernel {
    /// The checked vector `x` in this space (scaled to unit length for cosine), or `None`.
    fn vector(&self, x: &Bound<'_, PyAny>) -> Option<Vector> {
        let d = self.d;
        let mut v: Vector = SmallVec::with_capacity(d);
        if let Ok(list) = x.downcast_exact::<PyList>() {
            if list.len() != d {
                return None;
            }
            for item in list.iter() {
                v.push(scalar(&item)?);
            }
        } else if let Ok(tup) = x.downcast_exact::<PyTuple>() {
            if tup.len() != d {
                return None;
            }
            for item in tup.iter() {
                v.push(scalar(&item)?);
            }
        } else if x.is_instance_of::<PyDict>() {
            return None;
        } else {
            let ai = x.getattr("__array_interface__").ok()?;
            let ts: String = ai.get_item("typestr").ok()?.extract().ok()?;
            let shape: Vec<usize> = ai.get_item("shape").ok()?.extract().ok()?;
            let strides = ai.get_item("strides").ok()?;
            let (addr, _): (usize, bool) = ai.get_item("data").ok()?.extract().ok()?;
            if ts != native("f8") || shape != [d] || !strides.is_none() || addr % 8 != 0 {
                return None;
            }
            // SAFETY: a live, C-contiguous, aligned float64 array of `d` values (checked above);
            // `x` is borrowed for this call and no Python code runs while it is read.
            v.extend_from_slice(unsafe { std::slice::from_raw_parts(addr as *const f64, d) });
        }
        if !v.iter().all(|t| t.is_finite()) {
            return None;
        }
        if self.cosine {
            let norm = dot(&v, &v).sqrt();
            if norm == 0.0 || !norm.is_finite() {
                return None;
            }
            for t in v.iter_mut() {
                *t /= norm;
            }
        }
        Some(v)
    }

    /// The slots `[:width]` as the pure functions read them.
    fn slots(&self, width: usize) -> Slots<'_> {
        let (cap, d) = (self.cap, self.d);
        let width = width.min(cap);
        // SAFETY: as in `slices`; read only.
        unsafe {
            Slots {
                counts: &std::slice::from_raw_parts(self.count as *const i64, cap)[..width],
                means: &std::slice::from_raw_parts(self.mean as *const f64, cap * d)[..width * d],
                m2: &std::slice::from_raw_parts(self.m2 as *const f64, cap)[..width],
                d,
            }
        }
    }

    fn gmean(&self) -> &[f64] {
        // SAFETY: as in `slices`; read only.
        unsafe { std::slice::from_raw_parts(self.gmean as *const f64, self.d) }
    }

    fn touched(&self) -> &[i64] {
        // SAFETY: as in `slices`; read only.
        unsafe { std::slice::from_raw_parts(self.touched as *const i64, self.cap) }
    }

    /// The bound distance cache as a `cap × cap` slice, if it fits the arrays.
    fn dist_mut(&self) -> Option<&mut [f64]> {
        let (_, addr, cap) = self.dist.as_ref()?;
        if *cap != self.cap {
            return None;
        }
        // SAFETY: bound by `bind_dist` (kept alive there, shape checked); written under the GIL.
        Some(unsafe { std::slice::from_raw_parts_mut(*addr as *mut f64, cap * cap) })
    }

    fn slices(&mut self) -> (&mut [i64], &mut [f64], &mut [f64], &mut [f64], &mut [i64]) {
        let (cap, d) = (self.cap, self.d);
        // SAFETY: the arrays bound by `bind` (kept alive in `keep`, shapes checked there) are
        // distinct numpy buffers, written only under the GIL by this kernel during a call.
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.count as *mut i64, cap),
                std::slice::from_raw_parts_mut(self.mean as *mut f64, cap * d),
                std::slice::from_raw_parts_mut(self.m2 as *mut f64, cap),
                std::slice::from_raw_parts_mut(self.gmean as *mut f64, d),
                std::slice::from_raw_parts_mut(self.touched as *mut i64, cap),
            )
        }
    }
}

/// A vector element as numpy's `float64` conversion takes it, for the common types (`float`,
/// `int`, numpy scalars); `None` sends the call to the reference path.
#[inline]
fn scalar(item: &Bound<'_, PyAny>) -> Option<f64> {
    if let Ok(f) = item.downcast_exact::<PyFloat>() {
        return Some(f.value());
    }
    if item.is_instance_of::<pyo3::types::PyString>() || item.is_instance_of::<pyo3::types::PyBytes>() {
        return None;
    }
    item.extract::<f64>().ok()
}

fn rows<'a>(x: &'a Bound<'_, PyAny>, d: usize) -> PyResult<&'a [f64]> {
    let (addr, shape) = array_in(x, &native("f8"), 2)?;
    if shape[1] != d {
        return Err(PyValueError::new_err(format!("vectors have dimension {}, expected {d}", shape[1])));
    }
    if shape[0] == 0 {
        return Ok(&[]);
    }
    // SAFETY: a live C-contiguous float64 array of shape (m, d), borrowed for the call; no
    // Python code runs while it is read.
    Ok(unsafe { std::slice::from_raw_parts(addr as *const f64, shape[0] * d) })
}

fn ints<'a>(a: &'a Bound<'_, PyAny>, m: usize) -> PyResult<&'a [i64]> {
    let (addr, shape) = array_in(a, &native("i8"), 1)?;
    if shape[0] != m {
        return Err(PyValueError::new_err(format!("expected {m} values, got {}", shape[0])));
    }
    if m == 0 {
        return Ok(&[]);
    }
    // SAFETY: as in `rows`.
    Ok(unsafe { std::slice::from_raw_parts(addr as *const i64, m) })
}

#[pymethods]
impl SummaryKernel {
    #[new]
    fn new(cosine: bool) -> Self {
        SummaryKernel { cosine, d: 0, cap: 0, keep: Vec::new(), count: 0, mean: 0, m2: 0, gmean: 0, touched: 0, dist: None, rows: Vec::new() }
    }

    /// Bind the arrays of a `ClusterSummaries`: `count` (cap, int64), `mean` (cap × d, float64),
    /// `m2` (cap), `gmean` (d), `touched` (cap, int64).
    fn bind(
        &mut self,
        count: &Bound<'_, PyAny>,
        mean: &Bound<'_, PyAny>,
        m2: &Bound<'_, PyAny>,
        gmean: &Bound<'_, PyAny>,
        touched: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (i8s, f8s) = (native("i8"), native("f8"));
        let (c, cs) = array_addr(count, &i8s, 1)?;
        let (m, ms) = array_addr(mean, &f8s, 2)?;
        let (q, qs) = array_addr(m2, &f8s, 1)?;
        let (g, gs) = array_addr(gmean, &f8s, 1)?;
        let (t, ts) = array_addr(touched, &i8s, 1)?;
        let (cap, d) = (cs[0], ms[1]);
        if ms[0] != cap || qs[0] != cap || ts[0] != cap || gs[0] != d || d == 0 {
            return Err(PyValueError::new_err("the summaries' arrays do not fit together"));
        }
        self.keep = [count, mean, m2, gmean, touched].into_iter().map(|o| o.clone().unbind()).collect();
        (self.cap, self.d, self.count, self.mean, self.m2, self.gmean, self.touched) = (cap, d, c, m, q, g, t);
        Ok(())
    }

    /// Add `w` copies of `x` to slot `slot` (`w < 0`: remove them) and to the global summary of
    /// `n` elements and scatter `gm2`, marking the slot changed at `version`. Returns the new
    /// global scatter, or `None` (nothing changed) when the call needs the reference path: `x`
    /// unreadable or invalid, the slot free or emptied by the call, the stream emptied.
    #[allow(clippy::too_many_arguments)]
    fn update(&mut self, slot: usize, x: &Bound<'_, PyAny>, w: i64, n: i64, gm2: f64, version: i64) -> Option<f64> {
        if self.d == 0 || slot >= self.cap || w == 0 {
            return None;
        }
        let x = self.vector(x)?;
        let d = self.d;
        let (count, mean, m2, gmean, touched) = self.slices();
        let c = count[slot];
        if c <= 0 || c + w <= 0 || n + w <= 0 {
            return None;
        }
        m2[slot] = welford(&mut mean[slot * d..(slot + 1) * d], m2[slot], c, w, &x);
        count[slot] = c + w;
        touched[slot] = version;
        Some(welford(gmean, gm2, n, w, &x))
    }

    /// `(key, score)` for the silhouettes: `key` is the checked vector's bytes (`-0.0` folded into
    /// `0.0`), `score` the silhouette of `x` in slot `own` against the slots `[:width]`
    /// (`None` unless `scored`). `None` when `x` cannot be read here.
    fn score<'py>(
        &mut self,
        py: Python<'py>,
        own: usize,
        x: &Bound<'py, PyAny>,
        width: usize,
        singleton: f64,
        scored: bool,
    ) -> Option<(Bound<'py, PyBytes>, Option<f64>)> {
        if self.d == 0 || own >= width || width > self.cap {
            return None;
        }
        let mut x = self.vector(x)?;
        for t in x.iter_mut() {
            *t += 0.0;
        }
        let bytes: Vec<u8> = x.iter().flat_map(|t| t.to_ne_bytes()).collect();
        let key = PyBytes::new(py, &bytes);
        if !scored {
            return Some((key, None));
        }
        let (cosine, d) = (self.cosine, self.d);
        let (count, mean, m2, _, _) = self.slices();
        let slots = Slots { counts: &count[..width], means: &mean[..width * d], m2: &m2[..width], d };
        Some((key, Some(silhouette(&slots, &x, own, singleton, cosine))))
    }

    /// Bind the `cap × cap` float64 cache of distances between means.
    fn bind_dist(&mut self, dist: &Bound<'_, PyAny>) -> PyResult<()> {
        let (addr, shape) = array_addr(dist, &native("f8"), 2)?;
        if shape[0] != self.cap || shape[1] != self.cap {
            return Err(PyValueError::new_err("the distance cache must be capacity × capacity"));
        }
        self.dist = Some((dist.clone().unbind(), addr, self.cap));
        let cap = self.cap;
        let sums: Vec<(f64, f64)> = {
            let m = self.dist_mut().expect("just bound");
            (0..cap)
                .map(|i| {
                    let mut acc = (0.0, 0.0);
                    for &v in &m[i * cap..(i + 1) * cap] {
                        add_to(&mut acc, v);
                    }
                    acc
                })
                .collect()
        };
        self.rows = sums;
        Ok(())
    }

    /// Rewrite the rows and columns of the distance cache of the slots `[:width]` changed after
    /// version `since`, and each row's sum: a changed row's anew, every other row's by adding
    /// the new entry and subtracting the old one into its `hi + lo` pair (TwoSum: each step exact
    /// to `ε²` of the entries, so the sums track the matrix to a relative `~ε` whatever the number
    /// of steps). O(changed·width·d). `False` when no cache fitting the arrays is bound.
    fn refresh(&mut self, since: i64, width: usize) -> bool {
        let width = width.min(self.cap);
        let changed: Vec<usize> = (0..width).filter(|&j| self.touched()[j] > since).collect();
        let cap = self.cap;
        let cosine = self.cosine;
        let mut row = vec![0.0; width];
        if self.rows.len() != cap {
            return false;
        }
        let mut rows = std::mem::take(&mut self.rows);
        let Some(dist) = self.dist_mut() else {
            self.rows = rows;
            return false;
        };
        for &c in &changed {
            distance_row(&self.slots(width), c, cosine, &mut row);
            let mut fresh = (0.0, 0.0);
            for (j, &v) in row.iter().enumerate() {
                let old = dist[j * cap + c];
                dist[c * cap + j] = v;
                dist[j * cap + c] = v;
                add_to(&mut fresh, v);
                if j != c {
                    add_to(&mut rows[j], v);
                    add_to(&mut rows[j], -old);
                }
            }
            rows[c] = fresh;
        }
        self.rows = rows;
        true
    }

    /// `sum_{i,j < width}` of the distance cache (both triangles): Separation's sum, from the
    /// row sums kept by `refresh`. O(width).
    fn dist_sum(&self, width: usize) -> Option<f64> {
        self.dist_mut()?;
        if self.rows.len() != self.cap {
            return None;
        }
        let mut acc = (0.0, 0.0);
        for r in &self.rows[..width.min(self.cap)] {
            add_to(&mut acc, r.0);
            add_to(&mut acc, r.1);
        }
        Some(acc.0 + acc.1)
    }

    /// SSB `sum_j b_j·||mean_j - mean||²` over the slots `[:width]`. O(width·d).
    fn ssb(&self, width: usize) -> f64 {
        let s = self.slots(width);
        let g = self.gmean();
        (0..s.counts.len())
            .filter(|&j| s.counts[j] > 0)
            .map(|j| s.counts[j] as f64 * sq_dist(&s.means[j * s.d..(j + 1) * s.d], g))
            .sum()
    }

    /// Cosine SSB `sum_j b_j·(1 - cos(mean_j, mean))²`, the cosine distance without
    /// cancellation (1 for a zero mean). O(width·d).
    fn cosine_ssb(&self, width: usize) -> f64 {
        let s = self.slots(width);
        let d = s.d;
        let (mut hg, mut lg, mut h, mut l) = (vec![0.0; d], vec![0.0; d], vec![0.0; d], vec![0.0; d]);
        let rg = crate::summaries::unit_parts(self.gmean(), &mut hg, &mut lg);
        let mut total = 0.0;
        for j in 0..s.counts.len() {
            if s.counts[j] <= 0 {
                continue;
            }
            let r = crate::summaries::unit_parts(&s.means[j * d..(j + 1) * d], &mut h, &mut l);
            let dj = if r > 0.0 && rg > 0.0 {
                crate::summaries::unit_half_sq(&h, &l, &hg, &lg).clamp(0.0, 2.0)
            } else {
                1.0
            };
            total += s.counts[j] as f64 * (dj * dj);
        }
        total
    }

    /// The mean over the live slots `[:width]` of the Davies-Bouldin scatter `S_j` (RMS, or the
    /// cosine one): RMS or cosine compactness. NaN with no live slot. O(width·d).
    fn compactness(&self, width: usize) -> f64 {
        let s = self.slots(width);
        let (mut sum, mut k) = (0.0, 0usize);
        for j in 0..s.counts.len() {
            if s.counts[j] > 0 {
                sum += slot_scatter(&s, j, self.cosine);
                k += 1;
            }
        }
        if k == 0 {
            f64::NAN
        } else {
            sum / k as f64
        }
    }

    /// Check a block of vectors (`m × d` float64) before any change: `None` when every row is
    /// finite (and, in the cosine space, of non-zero finite norm), else `(row, reason)` of the
    /// first that is not. O(m·d).
    fn check_block(&self, x: &Bound<'_, PyAny>) -> PyResult<Option<(usize, &'static str)>> {
        let d = self.d;
        let data = rows(x, d)?;
        for (i, row) in data.chunks_exact(d.max(1)).enumerate() {
            if !row.iter().all(|t| t.is_finite()) {
                return Ok(Some((i, "has a non-finite value")));
            }
            if self.cosine {
                let norm = dot(row, row).sqrt();
                if norm == 0.0 || !norm.is_finite() {
                    return Ok(Some((i, "has norm 0 or an infinite norm (the cosine space scales it to unit length)")));
                }
            }
        }
        Ok(None)
    }

    /// Add the rows of `x` (checked by `check_block`) one by one, row `i` with weight `w[i]` to
    /// slot `slots[i]` (live or just made, all below the capacity), and to the global summary of
    /// `n` elements and scatter `gm2`: the very steps of `update`, in order. Every touched slot
    /// is marked changed at `version`. Returns the new global scatter. O(m·d).
    #[allow(clippy::too_many_arguments)]
    fn update_many(
        &mut self,
        slots: &Bound<'_, PyAny>,
        x: &Bound<'_, PyAny>,
        w: &Bound<'_, PyAny>,
        n: i64,
        gm2: f64,
        version: i64,
    ) -> PyResult<f64> {
        let d = self.d;
        let data = rows(x, d)?;
        let m = data.len() / d.max(1);
        let slots = ints(slots, m)?;
        let ws = ints(w, m)?;
        let cap = self.cap;
        if slots.iter().any(|&s| s < 0 || s as usize >= cap) || ws.iter().any(|&v| v <= 0) {
            return Err(PyValueError::new_err("slots must lie in the arrays and weights be positive"));
        }
        let cosine = self.cosine;
        let (count, mean, m2, gmean, touched) = self.slices();
        let (mut n, mut gm2) = (n, gm2);
        let mut unit = vec![0.0; d];
        for i in 0..m {
            let row = &data[i * d..(i + 1) * d];
            let v: &[f64] = if cosine {
                let norm = dot(row, row).sqrt();
                for (u, r) in unit.iter_mut().zip(row) {
                    *u = r / norm;
                }
                &unit
            } else {
                row
            };
            let (s, wi) = (slots[i] as usize, ws[i]);
            let c = count[s];
            m2[s] = welford(&mut mean[s * d..(s + 1) * d], m2[s], c, wi, v);
            count[s] = c + wi;
            touched[s] = version;
            gm2 = welford(gmean, gm2, n, wi, v);
            n += wi;
        }
        Ok(gm2)
    }
}

/// The incremental Davies-Bouldin index of one view, over a `SummaryKernel`'s arrays and its
/// distance cache (`_DaviesBouldinCache` natively).
#[pyclass(module = "streameval._native")]
pub struct DaviesBouldinKernel {
    db: DaviesBouldin,
    seen: i64,
}

#[pymethods]
impl DaviesBouldinKernel {
    #[new]
    fn new() -> Self {
        DaviesBouldinKernel { db: DaviesBouldin::default(), seen: -1 }
    }

    /// The index over the slots `[:width]` of `kernel` (its distance cache refreshed), at
    /// `version`: the slots changed since the last call are taken one by one, or all anew when
    /// `rebuild`, on the first call, when the arrays grew, or when more than `width/8` changed.
    /// `None` when `kernel` has no fitting distance cache.
    fn value(&mut self, kernel: PyRef<'_, SummaryKernel>, width: usize, version: i64, rebuild: bool) -> Option<f64> {
        let cap = kernel.cap;
        let width = width.min(cap);
        let dist = kernel.dist_mut()?;
        let s = kernel.slots(width);
        let changed: Vec<usize> = (0..width).filter(|&j| kernel.touched()[j] > self.seen).collect();
        if rebuild || self.seen < 0 || self.db.cap != cap || 8 * changed.len() > width {
            self.db.rebuild(&s, dist, cap, width, kernel.cosine);
        } else {
            for &c in &changed {
                self.db.change(&s, dist, width, c, kernel.cosine);
            }
        }
        self.seen = version;
        Some(self.db.value(s.counts))
    }
}

/// Add the classes to the module (called from the module's init).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SummaryKernel>()?;
    m.add_class::<DaviesBouldinKernel>()
}
