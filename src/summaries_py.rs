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
use pyo3::intern;
use pyo3::{PyTraverseError, PyVisit};
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use smallvec::SmallVec;

use crate::summaries::{add_to, changed_after, new_row, first_out_of_range, silhouette, silhouette_pruned, sq_dists_on, to_unit, unit_half_sq, unit_parts, welford, welford_rows, Block, Targets, DaviesBouldin, Simd, SlotCache, Slots, SsbAnchor, StateIn, StateOut, MAX_VECTOR_VALUE};

type Vector = SmallVec<[f64; 128]>;

/// The bound arrays, writable: `count`, `mean`, `m2`, `gmean`, `touched`.
type SlicesMut<'a> = (&'a mut [i64], &'a mut [f64], &'a mut [f64], &'a mut [f64], &'a mut [i64]);

/// What `update_score` and `update_values` return: the new global scatter, the point's key, its
/// score, and the step of the silhouette's sum when its record was kept natively.
type Scored<'py> = (f64, Option<Bound<'py, PyBytes>>, Option<f64>, Option<i128>);

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
    dist_total: (f64, f64), // the sum of that cache, as an unevaluated hi + lo (see `refresh`)
    dist_seen: i64,         // the version that cache reflects (-1: every row to compute)
    cache: SlotCache,       // what the views derive per slot, for the slots changed up to `cache_seen`
    cache_seen: i64,
    anchor: SsbAnchor, // SSB in O(d) (Euclidean)
    // the vector `update` checked, by the address of the object it read it from: the `score`
    // that follows it (IntrinsicEvaluator.update, a silhouette's update) takes it without reading
    // the object again; any other call of `score` reads its own
    last: Option<(usize, Vector)>,
    scratch: (Vec<f64>, Vec<f64>), // buffers reused by every call: a row of distances, the silhouette's bounds
    // the (version, slot) of the last updates made here, oldest first: with the current version
    // known (`now`, told by the caller for the length of one call), the slots changed since a
    // version that the log covers without a gap are read from it, not found by a scan of every
    // slot's version (`changed`)
    log: Vec<(i64, usize)>,
    now: Option<i64>,
    live: Option<usize>, // the number of live slots, when the caller told it for the call (`read`)
}

/// The fixed-point scale of the silhouettes' sums (`_FX` in `streameval/intrinsic.py`): 2**53.
const FX: f64 = 9007199254740992.0;

/// How many of the last updates the log keeps (it is cut back to half when it grows beyond).
const LOG: usize = 64;

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
        } else if let Some(got) = buffer_f64(x, d, &mut v) {
            got?;
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
        if !v.iter().all(|t| t.abs() < MAX_VECTOR_VALUE) {
            return None; // NaN, an infinity or a value of 2**256 or more: the reference names it
        }
        if self.cosine && !to_unit(&mut v) {
            return None;
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

    /// The bound distance cache (`cap × cap` doubles), if it fits the arrays: a raw pointer into
    /// the bound numpy array's memory, not `self`'s. A caller makes it a `&mut` slice while it
    /// holds no other one (under the GIL, while the array is bound: `bind_dist` keeps it alive).
    fn dist_raw(&self) -> Option<*mut [f64]> {
        let (_, addr, cap) = self.dist.as_ref()?;
        if *cap != self.cap {
            return None;
        }
        Some(std::ptr::slice_from_raw_parts_mut(*addr as *mut f64, cap * cap))
    }

    /// The slots `[:width]` changed after version `since`, in order: from the log when the
    /// caller told the current version and the log holds every version since (O(changes)),
    /// else by their versions (O(width)). Then the version they bring the reader to.
    fn changed(&self, since: i64, width: usize) -> (Vec<usize>, i64) {
        let touched = &self.touched()[..width.min(self.cap)];
        if let Some(now) = self.now {
            if since >= now {
                return (Vec::new(), since);
            }
            let need = (now - since) as usize;
            if need <= self.log.len() {
                let tail = &self.log[self.log.len() - need..];
                // versions are unique and rise by one per change: an unbroken run since+1..=now
                // in the log is every change since
                if tail.iter().enumerate().all(|(i, &(v, _))| v == since + 1 + i as i64) {
                    let mut out: Vec<usize> = tail.iter().map(|&(_, j)| j).filter(|&j| j < touched.len()).collect();
                    out.sort_unstable();
                    out.dedup();
                    return (out, now);
                }
            }
            return (changed_after(touched, since), now);
        }
        let out = changed_after(touched, since);
        let seen = out.iter().map(|&j| touched[j]).max().unwrap_or(since).max(since);
        (out, seen)
    }

    /// Bring the per-slot cache up to date: the slots `[:width]` changed since the last call,
    /// found by their version (O(width) compares, O(d) per changed slot).
    fn sync(&mut self, width: usize) {
        let width = width.min(self.cap);
        if self.cache.q.len() != self.cap {
            self.cache = SlotCache::new(self.cap, self.d, self.cosine);
            self.cache_seen = -1;
        }
        let (touched, seen) = self.changed(self.cache_seen, width);
        if touched.is_empty() {
            self.cache_seen = seen;
            return;
        }
        let mut cache = std::mem::take(&mut self.cache);
        {
            let sl = self.slots(width);
            for &j in &touched {
                cache.set(&sl, j);
            }
        }
        self.cache = cache;
        self.cache_seen = seen;
    }

    /// `refresh`: the distance rows of the slots changed since `dist_seen`. `false` without a
    /// fitting distance cache.
    fn refresh_rows(&mut self, width: usize) -> bool {
        let width = width.min(self.cap);
        if unsafe { self.dist_raw().map(|p| &mut *p) }.is_none() {
            return false;
        }
        self.sync(width);
        let (changed, seen) = self.changed(self.dist_seen, width);
        self.dist_seen = seen;
        if changed.is_empty() {
            return true;
        }
        let (cap, cosine) = (self.cap, self.cosine);
        let mut row = std::mem::take(&mut self.scratch.0);
        row.resize(width, 0.0); // every entry written before it is read: no zeroing per call
        let dist = unsafe { self.dist_raw().map(|p| &mut *p) }.expect("checked above");
        let slots = self.slots(width);
        let mut total = self.dist_total;
        for &c in &changed {
            new_row(&slots, &self.cache, c, cosine, &mut row, dist, cap, &mut total);
        }
        self.dist_total = total;
        self.scratch.0 = row;
        true
    }

    /// `score` with `self.now` set.
    fn score_at<'py>(&mut self, py: Python<'py>, own: usize, x: &Bound<'py, PyAny>, width: usize, singleton: f64, scored: bool) -> Option<(Bound<'py, PyBytes>, Option<f64>)> {
        if self.d == 0 || own >= width || width > self.cap {
            return None;
        }
        let obj = x.as_ptr() as usize;
        let mut x = match self.last.take() {
            Some((o, v)) if o == obj => v, // checked by the `update` just made
            _ => self.vector(x)?,
        };
        for t in x.iter_mut() {
            *t += 0.0;
        }
        let bytes: Vec<u8> = x.iter().flat_map(|t| t.to_ne_bytes()).collect();
        let key = PyBytes::new(py, &bytes);
        if !scored {
            return Some((key, None));
        }
        if !self.cosine && self.refresh_rows(width) {
            // the distances between means at hand (the views that read them are there): prune
            let cap = self.cap;
            let mut lb = std::mem::take(&mut self.scratch.1);
            let row = &unsafe { self.dist_raw().map(|p| &mut *p) }.expect("refreshed")[own * cap..own * cap + width];
            let slots = self.slots(width);
            let v = silhouette_pruned(&slots, &self.cache, &x, own, singleton, row, &mut lb);
            self.scratch.1 = lb;
            return Some((key, Some(v)));
        }
        self.sync(width);
        let slots = self.slots(width);
        Some((key, Some(silhouette(&slots, &self.cache, &x, own, singleton, self.cosine))))
    }

    fn slices(&mut self) -> SlicesMut<'_> {
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

/// The layout of CPython's `Py_buffer` (stable since Python 3.0; part of the limited API from
/// 3.11, which is why pyo3 does not declare it for an `abi3-py310` build).
#[cfg(unix)]
#[repr(C)]
struct RawBuffer {
    buf: *mut std::ffi::c_void,
    obj: *mut pyo3::ffi::PyObject,
    len: isize,
    itemsize: isize,
    readonly: std::ffi::c_int,
    ndim: std::ffi::c_int,
    format: *mut std::ffi::c_char,
    shape: *mut isize,
    strides: *mut isize,
    suboffsets: *mut isize,
    internal: *mut std::ffi::c_void,
}

#[cfg(unix)]
extern "C" {
    fn PyObject_GetBuffer(obj: *mut pyo3::ffi::PyObject, view: *mut RawBuffer, flags: std::ffi::c_int) -> std::ffi::c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// `x`'s `d` values appended to `v` through the buffer protocol (a C-contiguous float64 buffer
/// of one dimension in the native byte order: a numpy array, `array.array("d")`, a
/// memoryview): `Some(Some(()))` read, `Some(None)` a buffer of another kind (the reference path
/// takes it), `None` no buffer at all (read `__array_interface__`). One C call, no Python
/// object made: what keeps a numpy vector's update near the cost of the arithmetic.
#[cfg(unix)]
fn buffer_f64(x: &Bound<'_, PyAny>, d: usize, v: &mut Vector) -> Option<Option<()>> {
    const PYBUF_FORMAT: std::ffi::c_int = 0x0004;
    const PYBUF_C_CONTIGUOUS: std::ffi::c_int = 0x0020 | 0x0010 | 0x0008;
    // SAFETY: a zeroed Py_buffer is what PyObject_GetBuffer fills; it is released below exactly
    // when it was filled. The GIL is held (`x` is bound).
    unsafe {
        let mut view: RawBuffer = std::mem::zeroed();
        if PyObject_GetBuffer(x.as_ptr(), &mut view, PYBUF_FORMAT | PYBUF_C_CONTIGUOUS) != 0 {
            pyo3::ffi::PyErr_Clear(); // no buffer, or not C-contiguous
            return if x.hasattr("__array_interface__").unwrap_or(false) { Some(None) } else { None };
        }
        let fmt = if view.format.is_null() { &b"B"[..] } else { std::ffi::CStr::from_ptr(view.format).to_bytes() };
        let native_d = matches!(fmt, b"d" | b"@d" | b"=d") || (cfg!(target_endian = "little") && fmt == b"<d") || (cfg!(target_endian = "big") && fmt == b">d");
        let ok = native_d
            && view.itemsize == 8
            && view.ndim == 1
            && !view.shape.is_null()
            && *view.shape == d as isize
            && (view.buf as usize).is_multiple_of(8);
        if ok {
            v.extend_from_slice(std::slice::from_raw_parts(view.buf as *const f64, d));
        }
        PyBuffer_Release(&mut view);
        Some(if ok { Some(()) } else { None })
    }
}

#[cfg(not(unix))]
fn buffer_f64(_x: &Bound<'_, PyAny>, _d: usize, _v: &mut Vector) -> Option<Option<()>> {
    None // elsewhere `__array_interface__` is read (pyo3's abi3-py310 build declares no buffer API)
}

/// A vector element as numpy's `float64` conversion takes it, for `float` and `int` (and their
/// subclasses: `numpy.float64`, `bool`); `None` sends the call to the reference path, which
/// reads every other type (numpy's other scalars) and refuses what it would misread (a complex
/// number's `__float__` drops its imaginary part, a string would be parsed).
#[inline]
fn scalar(item: &Bound<'_, PyAny>) -> Option<f64> {
    if let Ok(f) = item.downcast_exact::<PyFloat>() {
        return Some(f.value());
    }
    scalar_other(item)
}

/// `scalar` of anything but an exact `float`: out of line, so that the float loop stays small.
#[cold]
#[inline(never)]
fn scalar_other(item: &Bound<'_, PyAny>) -> Option<f64> {
    if item.is_instance_of::<PyFloat>() || item.is_instance_of::<PyInt>() {
        return item.extract::<f64>().ok();
    }
    None
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

/// A silhouette's record of a scored point, as `Silhouette._record` keeps it: under
/// `(label, key)` in `points`, `(multiplicity, ((w, fx), ...))` with `fx = round(score·2**53)`
/// (Python's `round`: ties to even; exact, as |score·2**53| <= 2**53), a second record of the
/// same point appended to its tuple. Returns `w·fx`, the silhouette's sum's step; `None`
/// (nothing kept) for a score that is not finite or absent: the caller's record then takes it
/// (and its `round` raises, as before).
fn record<'py>(py: Python<'py>, label: &Bound<'py, PyAny>, key: &Bound<'py, PyBytes>, score: Option<f64>, w: i64, points: &Bound<'py, PyDict>) -> PyResult<Option<i128>> {
    let fx = match score {
        Some(v) if v.is_finite() => (v * FX).round_ties_even() as i64,
        _ => return Ok(None),
    };
    let at = (label, key).into_pyobject(py)?;
    let entry = (w, fx).into_pyobject(py)?;
    let rec = match points.get_item(&at)? {
        None => (w, (entry,)).into_pyobject(py)?,
        Some(rec) => {
            let rec = rec.downcast_into::<PyTuple>()?;
            let have: i64 = rec.get_item(0)?.extract()?;
            let mut all: Vec<Bound<'py, PyAny>> = rec.get_item(1)?.downcast_into::<PyTuple>()?.iter().collect();
            all.push(entry.into_any());
            PyTuple::new(py, [(have + w).into_pyobject(py)?.into_any(), PyTuple::new(py, all)?.into_any()])?
        }
    };
    points.set_item(at, rec)?;
    Ok(Some(w as i128 * fx as i128))
}

/// Write `vals` into `out`, each under the name at its position in `names`.
fn write_values(names: &Bound<'_, PyTuple>, vals: Vec<f64>, out: &Bound<'_, PyDict>) -> PyResult<()> {
    for (name, v) in names.iter().zip(vals) {
        out.set_item(name, v)?;
    }
    Ok(())
}

#[pymethods]
impl SummaryKernel {
    #[new]
    fn new(cosine: bool) -> Self {
        SummaryKernel {
            cosine,
            d: 0,
            cap: 0,
            keep: Vec::new(),
            count: 0,
            mean: 0,
            m2: 0,
            gmean: 0,
            touched: 0,
            dist: None,
            dist_total: (0.0, 0.0),
            dist_seen: -1,
            cache: SlotCache::default(),
            cache_seen: -1,
            anchor: SsbAnchor::new(),
            last: None,
            scratch: Default::default(),
            log: Vec::new(),
            now: None,
            live: None,
        }
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
        self.cache = SlotCache::new(cap, d, self.cosine); // every slot read anew on the next sync
        self.cache_seen = -1;
        self.anchor.version = -1;
        Ok(())
    }

    /// The kernel's running state as bytes, for pickling with its `ClusterSummaries` (the arrays
    /// it is bound to are pickled by their owner): the SSB anchor and its sums, the per-slot cache
    /// and its running sums (SSW, compactness), the distance cache's sum and the versions each of
    /// them reflects, the update log. Those sums depend on the order of the steps that made them,
    /// so a copy whose kernel started afresh would read SSB, CH, SSW, separation and compactness
    /// differently in the last bits; with this state restored ([`SummaryKernel::restore`]) every
    /// later read is the original's, bit for bit. O(cap·d).
    fn state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = StateOut::default();
        for v in [self.cap as i64, self.d as i64, self.cache_seen, self.dist_seen] {
            out.int(v);
        }
        out.num(self.dist_total.0);
        out.num(self.dist_total.1);
        out.ints(self.log.iter().flat_map(|&(v, j)| [v, j as i64]).collect::<Vec<i64>>().into_iter());
        self.anchor.save(&mut out);
        self.cache.save(&mut out);
        PyBytes::new(py, &out.0)
    }

    /// Take back the running state [`SummaryKernel::state`] gave, once bound (`bind`, then
    /// `bind_dist` when there is a distance cache) to the arrays of the same summaries.
    /// Raises `ValueError`, changing nothing, when the bytes do not fit this kernel's arrays.
    /// O(cap·d).
    fn restore(&mut self, state: &[u8]) -> PyResult<()> {
        let bad = || PyValueError::new_err("the kernel state does not fit these summaries' arrays");
        let (cap, d) = (self.cap, self.d);
        let mut inp = StateIn::new(state);
        let (c, dd, cache_seen, dist_seen) = (inp.int(), inp.int(), inp.int(), inp.int());
        if c != Some(cap as i64) || dd != Some(d as i64) || d == 0 {
            return Err(bad());
        }
        let (cache_seen, dist_seen) = (cache_seen.ok_or_else(bad)?, dist_seen.ok_or_else(bad)?);
        let dist_total = (inp.num().ok_or_else(bad)?, inp.num().ok_or_else(bad)?);
        let log = inp.ints().ok_or_else(bad)?;
        if log.len() % 2 != 0 || log.len() > 2 * LOG || log.chunks_exact(2).any(|p| p[1] < 0 || p[1] as usize >= cap) {
            return Err(bad());
        }
        let anchor = SsbAnchor::load(&mut inp, cap, d).ok_or_else(bad)?;
        let cache = SlotCache::load(&mut inp, cap, d, self.cosine).ok_or_else(bad)?;
        if !inp.done() {
            return Err(bad());
        }
        self.log = log.chunks_exact(2).map(|p| (p[0], p[1] as usize)).collect();
        (self.cache_seen, self.dist_seen, self.dist_total) = (cache_seen, dist_seen, dist_total);
        (self.anchor, self.cache) = (anchor, cache);
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
        let obj = x.as_ptr() as usize;
        let x = self.vector(x)?;
        self.last = Some((obj, x.clone())); // the silhouettes' `score` of this very call reads it again
        let d = self.d;
        let follow = !self.cosine && self.anchor.version == version - 1;
        let mut anchor = std::mem::take(&mut self.anchor);
        let (count, mean, m2, gmean, touched) = self.slices();
        let c = count[slot];
        if c <= 0 || c + w <= 0 || n + w <= 0 {
            self.anchor = anchor;
            self.last = None;
            return None;
        }
        let row = &mut mean[slot * d..(slot + 1) * d];
        if follow {
            anchor.remove(slot, c, row);
        }
        m2[slot] = welford(row, m2[slot], c, w, &x);
        count[slot] = c + w;
        touched[slot] = version;
        if follow {
            anchor.add(slot, c + w, row);
            anchor.version = version;
        }
        let g = welford(gmean, gm2, n, w, &x);
        self.anchor = anchor;
        if self.log.len() >= LOG {
            self.log.drain(..LOG / 2);
        }
        self.log.push((version, slot));
        Some(g)
    }

    /// `(key, score)` for the silhouettes: `key` is the checked vector's bytes (`-0.0` folded into
    /// `0.0`), `score` the silhouette of `x` in slot `own` against the slots `[:width]`
    /// (`None` unless `scored`). `None` when `x` cannot be read here. `version`, when given, is
    /// the summaries' current one (the changed slots are then read from the update log).
    #[pyo3(signature = (own, x, width, singleton, scored, version=None))]
    #[allow(clippy::too_many_arguments)]
    fn score<'py>(
        &mut self,
        py: Python<'py>,
        own: usize,
        x: &Bound<'py, PyAny>,
        width: usize,
        singleton: f64,
        scored: bool,
        version: Option<i64>,
    ) -> Option<(Bound<'py, PyBytes>, Option<f64>)> {
        self.now = version;
        let got = self.score_at(py, own, x, width, singleton, scored);
        self.now = None;
        got
    }

    /// `update` then `score` in one call (`IntrinsicEvaluator.update` with one silhouette view):
    /// add `w` copies of `x` to slot `slot` as `update` does (`None`, nothing changed, when it
    /// declines), then the silhouette's `(key, score)` of `x` in that slot against the slots
    /// `[:width]` at the new version `version` (the very steps of the two calls: the same bits).
    /// Returns `(gm2, key, score, wfx)`; `key` is `None` in the (unreachable) case that `score`
    /// cannot read `x` after `update` did. With `label` and `points` (a silhouette's records)
    /// and `w > 0`, the point's record is kept there as `Silhouette._record` keeps it
    /// ([`record`]) and `wfx` is `w·round(score·2**53)`, the step of the silhouette's sum;
    /// else (or for a score that is not finite) `wfx` is `None` and the caller records it.
    /// O(d) plus `score`'s cost.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (slot, x, w, n, gm2, version, width, singleton, scored, label=None, points=None))]
    fn update_score<'py>(
        &mut self,
        py: Python<'py>,
        slot: usize,
        x: &Bound<'py, PyAny>,
        w: i64,
        n: i64,
        gm2: f64,
        version: i64,
        width: usize,
        singleton: f64,
        scored: bool,
        label: Option<&Bound<'py, PyAny>>,
        points: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Scored<'py>>> {
        let Some(g) = self.update(slot, x, w, n, gm2, version) else {
            return Ok(None);
        };
        self.now = Some(version);
        let got = self.score_at(py, slot, x, width, singleton, scored);
        self.now = None;
        Ok(Some(match got {
            Some((key, score)) => {
                let wfx = match (label, points) {
                    (Some(label), Some(points)) if w > 0 => record(py, label, &key, score, w, points)?,
                    _ => None,
                };
                (g, Some(key), score, wfx)
            }
            None => (g, None, None, None),
        }))
    }

    /// `update_score`, then `values` over the summaries after it, in one call (a
    /// `ClusterReport`'s `update_get`): add `w` copies of `x` to slot `slot` and score it as
    /// `update_score` does (`singleton`; scored, since `k >= 2`), then the values of the views
    /// coded `codes` (`values`' codes) for the `n + w` elements in `k` live slots `[:width]` at
    /// `version`, each written as a float into `out` under the name at the same position of
    /// `names` (Davies-Bouldin through `db`, whose cache the caller has read before). The very
    /// steps of the two calls: the same bits. The point's record is kept in `points` under
    /// `label` as `update_score` keeps it. Returns `(gm2, key, score, wfx)` as `update_score`;
    /// `None`, having changed nothing, when `update_score` declines or the values cannot be read
    /// here (`w <= 0`, `k < 2`, separation or Davies-Bouldin without a distance cache,
    /// Davies-Bouldin without `db`, an unknown code, `names` not as long as `codes`). O(d) plus
    /// `score`'s and `values`' costs.
    #[allow(clippy::too_many_arguments)]
    fn update_values<'py>(
        mut slf: PyRefMut<'py, Self>,
        slot: usize,
        x: &Bound<'py, PyAny>,
        w: i64,
        n: i64,
        gm2: f64,
        version: i64,
        width: usize,
        k: usize,
        singleton: f64,
        db: Option<PyRefMut<'py, DaviesBouldinKernel>>,
        codes: &[u8],
        names: &Bound<'py, PyTuple>,
        out: &Bound<'py, PyDict>,
        label: &Bound<'py, PyAny>,
        points: &Bound<'py, PyDict>,
    ) -> PyResult<Option<Scored<'py>>> {
        let wants = |c: u8| codes.contains(&c);
        if k < 2
            || w <= 0
            || names.len() != codes.len()
            || codes.iter().any(|&c| c > 5)
            || (wants(3) || wants(5)) && slf.dist_raw().is_none()
            || wants(5) && db.is_none()
        {
            return Ok(None);
        }
        let py = slf.py();
        let Some(g) = slf.update(slot, x, w, n, gm2, version) else {
            return Ok(None);
        };
        slf.now = Some(version);
        let got = slf.score_at(py, slot, x, width, singleton, true);
        slf.now = None;
        // every value is there: k >= 2, and the distance cache and `db` were checked above
        let vals = Self::values(slf, width, n + w, k, version, db, false, codes).expect("checked before the update");
        write_values(names, vals, out)?;
        Ok(Some(match got {
            Some((key, score)) => {
                let wfx = record(py, label, &key, score, w, points)?;
                (g, Some(key), score, wfx)
            }
            None => (g, None, None, None),
        }))
    }

    /// The silhouettes' key of `x`: the checked vector's bytes (`-0.0` folded into `0.0`), as
    /// `score` gives it, or `None` when `x` cannot be read here. O(d).
    fn key<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
        if self.d == 0 {
            return None;
        }
        let x = self.vector(x)?;
        let bytes: Vec<u8> = x.iter().flat_map(|t| (t + 0.0).to_ne_bytes()).collect();
        Some(PyBytes::new(py, &bytes))
    }

    /// The slots `[:width]` changed after version `since`, the current version being `version`:
    /// from the update log when it holds every change since (O(changes)), else by the slots'
    /// versions (O(width)). In slot order.
    fn changed_slots(&mut self, since: i64, width: usize, version: i64) -> Vec<usize> {
        self.now = Some(version);
        let (out, _) = self.changed(since, width);
        self.now = None;
        out
    }

    /// The slots `[:width]` whose rows in the distance cache are older than the summaries at
    /// `version` (changed since the cache's last refresh; every slot before the first), in
    /// order: the rows a saved state must carry as they are, since the cache's running sum
    /// ([`SummaryKernel::state`]) is of those entries, not of fresh ones. `None` without a
    /// fitting distance cache. O(width).
    fn stale_rows(&mut self, width: usize, version: i64) -> Option<Vec<usize>> {
        self.dist_raw()?;
        self.now = Some(version);
        let (out, _) = self.changed(self.dist_seen, width);
        self.now = None;
        Some(out)
    }

    /// Bind the `cap × cap` float64 cache of distances between means.
    fn bind_dist(&mut self, dist: &Bound<'_, PyAny>) -> PyResult<()> {
        let (addr, shape) = array_addr(dist, &native("f8"), 2)?;
        if shape[0] != self.cap || shape[1] != self.cap {
            return Err(PyValueError::new_err("the distance cache must be capacity × capacity"));
        }
        self.dist = Some((dist.clone().unbind(), addr, self.cap));
        let mut total = (0.0, 0.0);
        for &v in unsafe { self.dist_raw().map(|p| &mut *p) }.expect("just bound").iter() {
            add_to(&mut total, v);
        }
        self.dist_total = total;
        self.dist_seen = -1; // a new array: every row anew on the next refresh
        Ok(())
    }

    /// Rewrite the rows and columns of the distance cache of the slots `[:width]` changed since
    /// the last refresh (or since the cache was bound: every row; `since`, the caller's own
    /// record, is not needed), and the cache's sum: each changed entry's new value and its old one's
    /// negation enter it by TwoSum (in four interleaved `hi + lo` partial sums, so that the steps
    /// overlap), each step exact to `ε²` of the entries, so the sum tracks the matrix to a relative
    /// `~ε` whatever the number of steps. O(changed·width·d). `False` when no cache fitting the
    /// arrays is bound.
    fn refresh(&mut self, since: i64, width: usize) -> bool {
        let _ = since;
        self.refresh_rows(width)
    }

    /// `sum_{i,j < width}` of the distance cache (both triangles; entries beyond `width` are 0):
    /// Separation's sum, kept by `refresh`. O(1).
    fn dist_sum(&self, width: usize) -> Option<f64> {
        let _ = width;
        unsafe { self.dist_raw().map(|p| &mut *p) }?;
        Some(self.dist_total.0 + self.dist_total.1)
    }

    /// SSB `sum_j b_j·||mean_j - mean||²` over the slots `[:width]` of `n` elements at `version`:
    /// O(d) from the anchored sums the updates keep ([`SsbAnchor`]), O(k·d) when they were made
    /// by another path (a new or emptied cluster, a merge, a block) or the global mean moved far
    /// from the anchor.
    fn ssb(&mut self, width: usize, n: i64, version: i64) -> f64 {
        let width = width.min(self.cap);
        if self.anchor.version == version {
            if let Some(v) = self.anchor.value(n, self.gmean()) {
                return v;
            }
        }
        let mut anchor = std::mem::take(&mut self.anchor);
        anchor.rebuild(&self.slots(width), self.cap, self.gmean(), version);
        let v = anchor.value(n, self.gmean()).unwrap_or(f64::NAN);
        self.anchor = anchor;
        v
    }

    /// Cosine SSB `sum_j b_j·(1 - cos(mean_j, mean))²`, the cosine distance without
    /// cancellation (1 for a zero mean), from the cached unit means. O(width·d).
    fn cosine_ssb(&mut self, width: usize) -> f64 {
        self.sync(width);
        let s = self.slots(width);
        let d = s.d;
        let (mut hg, mut lg) = (vec![0.0; d], vec![0.0; d]);
        let rg = unit_parts(self.gmean(), &mut hg, &mut lg);
        let c = &self.cache;
        let mut total = 0.0;
        for j in 0..s.counts.len() {
            if s.counts[j] <= 0 {
                continue;
            }
            let dj = if c.r[j] > 0.0 && rg > 0.0 {
                unit_half_sq(&c.uh[j * d..(j + 1) * d], &c.ul[j * d..(j + 1) * d], &hg, &lg).clamp(0.0, 2.0)
            } else {
                1.0
            };
            total += s.counts[j] as f64 * (dj * dj);
        }
        total
    }

    /// The mean over the `k` live slots `[:width]` of the Davies-Bouldin scatter `S_j` (RMS, or
    /// the cosine one): RMS or cosine compactness, from the cache's running sum. NaN when
    /// `k = 0`. O(1) plus the slots changed since the last read.
    fn compactness(&mut self, width: usize, k: usize) -> f64 {
        if k == 0 {
            return f64::NAN;
        }
        self.sync(width);
        (self.cache.sum_s.0 + self.cache.sum_s.1) / k as f64
    }

    /// SSW `sum_j M2_j` over the slots `[:width]`, from the cache's running sum. O(1) plus the
    /// slots changed since the last read.
    fn ssw(&mut self, width: usize) -> f64 {
        self.sync(width);
        self.cache.sum_m2.0 + self.cache.sum_m2.1
    }

    /// Every read of the views over these summaries in one call: `(ssw, ssb, separation sum,
    /// compactness, Davies-Bouldin)` for `n` elements in `k` live slots `[:width]` at `version`,
    /// each as its own method gives it (`ssb` the cosine one in the cosine space; the
    /// separation sum `None` without a distance cache; Davies-Bouldin `None` without `db`, else
    /// `db.value(self, width, version, db_rebuild)`). O(d) plus the changed slots' O(k·d).
    #[allow(clippy::too_many_arguments)]
    fn read(
        mut slf: PyRefMut<'_, Self>,
        width: usize,
        n: i64,
        k: usize,
        version: i64,
        db: Option<PyRefMut<'_, DaviesBouldinKernel>>,
        db_rebuild: bool,
    ) -> (f64, f64, Option<f64>, f64, Option<f64>) {
        slf.now = Some(version);
        slf.live = Some(k);
        let ssw = slf.ssw(width);
        let ssb = if n == 0 {
            0.0
        } else if slf.cosine {
            slf.cosine_ssb(width)
        } else {
            slf.ssb(width, n, version)
        };
        let sep = if slf.refresh_rows(width) { slf.dist_sum(width) } else { None };
        let compact = slf.compactness(width, k);
        let dbv = match db {
            Some(mut db) if k >= 2 => db.value_of(&mut slf, width, version, db_rebuild),
            _ => None,
        };
        slf.now = None;
        slf.live = None;
        (ssw, ssb, sep, compact, dbv)
    }

    /// The values of the summary views in one call, for `k >= 2` live slots `[:width]` of `n`
    /// elements at `version`: per byte of `codes`, 0 SSW, 1 SSB, 2 Calinski-Harabasz, 3
    /// separation, 4 compactness, 5 Davies-Bouldin (through `db`, rebuilt when `db_rebuild`),
    /// each computed from `read`'s values with the operations of the Python views' formulas
    /// (`ssb·(n - k) / (ssw·(k - 1))`, 1.0 when SSW is 0; the separation sum over `k·(k - 1)`):
    /// the same doubles. `None` (nothing read) when `k < 2`, or separation or Davies-Bouldin is
    /// asked without a distance cache (or Davies-Bouldin without `db`). The cost of `read`.
    #[allow(clippy::too_many_arguments)]
    fn values(slf: PyRefMut<'_, Self>, width: usize, n: i64, k: usize, version: i64, db: Option<PyRefMut<'_, DaviesBouldinKernel>>, db_rebuild: bool, codes: &[u8]) -> Option<Vec<f64>> {
        let wants = |c: u8| codes.contains(&c);
        if k < 2 || (wants(3) || wants(5)) && slf.dist_raw().is_none() || wants(5) && db.is_none() {
            return None;
        }
        let (ssw, ssb, sep, compact, dbv) = Self::read(slf, width, n, k, version, if wants(5) { db } else { None }, db_rebuild);
        let (nk, k1) = ((n - k as i64) as f64, (k - 1) as f64);
        codes
            .iter()
            .map(|&c| {
                Some(match c {
                    0 => ssw,
                    1 => ssb,
                    2 if ssw == 0.0 => 1.0,
                    2 => ssb * nk / (ssw * k1),
                    3 => sep? / (k * (k - 1)) as f64,
                    4 => compact,
                    5 => dbv?,
                    _ => return None,
                })
            })
            .collect()
    }

    /// `values`, each value written as a float into `out` under the name at its position in
    /// `names` (a get's dict: no list made). `False`, having written nothing, where `values`
    /// gives `None` or `names` is not as long as `codes`. The cost of `values`.
    #[allow(clippy::too_many_arguments)]
    fn values_into(slf: PyRefMut<'_, Self>, width: usize, n: i64, k: usize, version: i64, db: Option<PyRefMut<'_, DaviesBouldinKernel>>, db_rebuild: bool, codes: &[u8], names: &Bound<'_, PyTuple>, out: &Bound<'_, PyDict>) -> PyResult<bool> {
        if names.len() != codes.len() {
            return Ok(false);
        }
        match Self::values(slf, width, n, k, version, db, db_rebuild, codes) {
            Some(vals) => write_values(names, vals, out).map(|()| true),
            None => Ok(false),
        }
    }

    /// Check a block of vectors (`m × d` float64) before any change: `None` when every value of
    /// every row is finite and of magnitude below `2**256` (and, in the cosine space, every row of
    /// non-zero finite norm), else `(row, reason)` of the first that is not. O(m·d).
    fn check_block(&self, x: &Bound<'_, PyAny>) -> PyResult<Option<(usize, &'static str)>> {
        let d = self.d;
        let data = rows(x, d)?;
        let first_bad = first_out_of_range(data).map(|at| at / d.max(1));
        let reason = |i: usize| {
            if data[i * d..(i + 1) * d].iter().all(|t| t.is_finite()) {
                "has a value of magnitude 2**256 or more"
            } else {
                "has a non-finite value"
            }
        };
        if !self.cosine {
            return Ok(first_bad.map(|i| (i, reason(i))));
        }
        for (i, row) in data.chunks_exact(d.max(1)).enumerate() {
            if first_bad == Some(i) {
                return Ok(Some((i, reason(i))));
            }
            if row.iter().all(|t| *t == 0.0) {
                return Ok(Some((i, "has norm 0: every value is 0 (the cosine space scales it to unit length)")));
            }
        }
        Ok(None)
    }

    /// Add the rows of `x` (checked by `check_block`) one by one, row `i` with weight `w[i]` (`w`
    /// `None`: all 1) to slot `slots[i]` (with `table`: slot `table[slots[i]]`; live or just
    /// made, all below the capacity), and to the global summary of `n` elements and scatter
    /// `gm2`: the very steps of `update`, in order (`summaries::welford_rows`: for d <= 4 one
    /// pass, each row's factors divided beside its steps). Every touched slot is marked changed
    /// at `version`. Slots and weights are checked before anything is written (a `ValueError`
    /// naming the problem). Returns the new global scatter. O(m·d), plus the table's length.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (slots, x, w, n, gm2, version, table=None))]
    fn update_many(
        &mut self,
        slots: &Bound<'_, PyAny>,
        x: &Bound<'_, PyAny>,
        w: &Bound<'_, PyAny>,
        n: i64,
        gm2: f64,
        version: i64,
        table: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<f64> {
        let d = self.d;
        let data = rows(x, d)?;
        let m = data.len() / d.max(1);
        let labels = ints(slots, m)?;
        let ws = if w.is_none() { None } else { Some(ints(w, m)?) };
        // with `table`, `slots` holds integer labels and row i goes to slot table[labels[i]]:
        // the kernel gathers it in its pass
        let table: Option<&[i64]> = match table {
            Some(t) => {
                let (addr, shape) = array_in(t, &native("i8"), 1)?;
                // SAFETY: as in `rows`.
                Some(if shape[0] == 0 { &[] } else { unsafe { std::slice::from_raw_parts(addr as *const i64, shape[0]) } })
            }
            None => None,
        };
        let cosine = self.cosine;
        let units: Vec<f64>;
        let data = if cosine {
            // the rows scaled to unit length, as `vector` scales one
            let mut rows = data.to_vec();
            for row in rows.chunks_exact_mut(d) {
                to_unit(row); // not all 0: `check_block` refused those
            }
            units = rows;
            &units[..]
        } else {
            data
        };
        let (count, mean, m2, gmean, touched) = self.slices();
        let mut block = Block { count, mean, m2, gmean, d };
        // every slot and weight checked before anything is written
        welford_rows(&mut block, Targets { labels, table }, ws, data, n, gm2, touched, version).map_err(PyValueError::new_err)
    }
}

/// `ClusterReport.update_get`'s plain call in one native call per point: what
/// `IntrinsicEvaluator.update` (through `ClusterSummaries.fast` and the silhouette's
/// `_account`), `IntrinsicEvaluator.get_into` and the report's count, `k` and sizes do in
/// Python frames, with the same operations, so the same state and the same dict, bit for bit.
///
/// Made by `ClusterSummaries.report_step` with its own instance dict (`state`): the step reads
/// there the summaries' running count `n`, `version`, global scatter `_gm2`, `_index`,
/// `_labels`, `features`, `_guard`, `_kernel`, `_arrays` and `_count`, and writes back `n`,
/// `version` and `_gm2` as the Python path writes them; and with the silhouette's instance dict
/// (`sil`, given by `IntrinsicEvaluator.report_step`), whose records `_points` it keeps as
/// `update_values` does and whose exact sums `_sum` and `_scored` (Python integers, fixed point
/// of scale 2**53) it adds to with Python's integer addition, its running mean
/// `_sum / _scored / 2**53` by Python's correctly rounded integer division. Nothing is cached
/// from those dicts between calls: each call reads them anew.
#[pyclass(module = "streameval._native")]
pub struct ReportStep {
    owner: Py<PyAny>,  // the ClusterSummaries (its `size_arrays` when its cache of them is stale)
    state: Py<PyDict>, // its instance dict
    sil: Py<PyDict>,   // the silhouette's instance dict
    account: Py<PyAny>, // the silhouette's `_account`: the record the kernel could not keep
    db: Option<Py<DaviesBouldinKernel>>,
    singleton: f64,
    codes: Vec<u8>,
    names: Py<PyTuple>,
    keys: Py<PyDict>,   // the report's keys, in order: each call fills a copy
    heads: Py<PyTuple>, // the report's names of the count, k, the labels and their sizes
    mean_name: Py<PyAny>, // the silhouette's name in the report
    no: Py<PyTuple>,      // `(False,)`: the guard's non-blocking acquire
    // bound methods made once and kept while their object is the one in the state (held, so
    // that no other object can take its address): the guard's acquire and release, the view's copy
    guard: Option<(Py<PyAny>, Py<PyAny>, Py<PyAny>)>,
    copy: Option<(Py<PyAny>, Py<PyAny>)>,
}

/// `d[key]`, a `KeyError` naming it when it is not there.
fn item<'py>(d: &Bound<'py, PyDict>, key: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?.ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.clone().unbind()))
}

#[pymethods]
impl ReportStep {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        owner: &Bound<'_, PyAny>,
        state: &Bound<'_, PyDict>,
        sil: &Bound<'_, PyDict>,
        account: &Bound<'_, PyAny>,
        db: Option<&Bound<'_, DaviesBouldinKernel>>,
        singleton: f64,
        codes: &[u8],
        names: &Bound<'_, PyTuple>,
        keys: &Bound<'_, PyDict>,
        heads: &Bound<'_, PyTuple>,
        mean_name: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        if names.len() != codes.len() || heads.len() != 4 || codes.iter().any(|&c| c > 5) {
            return Err(PyValueError::new_err("a report step needs one name per code (0 to 5) and four heads"));
        }
        Ok(ReportStep {
            owner: owner.clone().unbind(),
            state: state.clone().unbind(),
            sil: sil.clone().unbind(),
            account: account.clone().unbind(),
            db: db.map(|d| d.clone().unbind()),
            singleton,
            codes: codes.to_vec(),
            names: names.clone().unbind(),
            keys: keys.clone().unbind(),
            heads: heads.clone().unbind(),
            mean_name: mean_name.clone().unbind(),
            no: PyTuple::new(owner.py(), [false])?.unbind(),
            guard: None,
            copy: None,
        })
    }

    /// The objects the step holds, for the garbage collector: a cycle through them (a label
    /// that refers back to its report, say) is found and collected, the dicts it holds clearing it.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for obj in [&self.owner, &self.account, &self.mean_name] {
            visit.call(obj)?;
        }
        visit.call(&self.state)?;
        visit.call(&self.sil)?;
        visit.call(&self.keys)?;
        visit.call(&self.names)?;
        visit.call(&self.heads)?;
        visit.call(&self.no)?;
        if let Some(db) = &self.db {
            visit.call(db)?;
        }
        if let Some((g, a, r)) = &self.guard {
            for obj in [g, a, r] {
                visit.call(obj)?;
            }
        }
        if let Some((v, c)) = &self.copy {
            visit.call(v)?;
            visit.call(c)?;
        }
        Ok(())
    }

    /// `update(x, y_pred, w)` then `get()` of the report, the dict returned; `None`, having
    /// changed nothing, when the call is not a plain one (`w` not a positive `int` within the
    /// bound, `y_pred` not a known cluster, `x` not a vector the kernel reads and accepts, a
    /// dict stream, fewer than two clusters, the distance cache not bound, the summaries' guard
    /// taken): the caller then makes the two calls, which raise the clear errors. O(k·d) plus
    /// the read's cost.
    fn __call__<'py>(&mut self, py: Python<'py>, x: &Bound<'py, PyAny>, y_pred: &Bound<'py, PyAny>, w: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyDict>>> {
        Ok(self.take(py, x, y_pred, w, true)?.flatten())
    }

    /// The report's `update(x, y_pred, w)` alone (`IntrinsicEvaluator.update_scored`: the
    /// update, the point's score and record, the silhouette's sums): `True`; `False`, having
    /// changed nothing, where `__call__` declines (the distance cache aside). O(k·d).
    fn update<'py>(&mut self, py: Python<'py>, x: &Bound<'py, PyAny>, y_pred: &Bound<'py, PyAny>, w: &Bound<'py, PyAny>) -> PyResult<bool> {
        Ok(self.take(py, x, y_pred, w, false)?.is_some())
    }

    /// The report's `get()`: a copy of the keys filled as `IntrinsicEvaluator.get_into` and the
    /// report fill it; `None` (nothing read) where the kernel cannot give the values (fewer
    /// than two clusters, no distance cache bound). The read's cost.
    fn read<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let st = self.state.bind(py);
        let Ok(kernel) = item(st, intern!(py, "_kernel"))?.downcast_into::<SummaryKernel>() else {
            return Ok(None);
        };
        let n: i64 = item(st, intern!(py, "n"))?.extract()?;
        let version: i64 = item(st, intern!(py, "version"))?.extract()?;
        let width = item(st, intern!(py, "_labels"))?.len()?;
        let k = item(st, intern!(py, "_index"))?.len()?;
        let db = match &self.db {
            Some(db) => Some(db.bind(py).try_borrow_mut()?),
            None => None,
        };
        let Some(vals) = SummaryKernel::values(kernel.try_borrow_mut()?, width, n, k, version, db, false, &self.codes) else {
            return Ok(None);
        };
        let out = self.keys.bind(py).copy()?;
        write_values(self.names.bind(py), vals, &out)?;
        self.fill(py, &out, n, None)?;
        Ok(Some(out))
    }
}

impl ReportStep {
    /// The update (with the values into a copy of the keys when `read`), the silhouette's
    /// account, and when `read` the rest of the dict (`fill`): `Some(dict or None)`, or
    /// `None` having changed nothing.
    fn take<'py>(&mut self, py: Python<'py>, x: &Bound<'py, PyAny>, y_pred: &Bound<'py, PyAny>, w: &Bound<'py, PyAny>, read: bool) -> PyResult<Option<Option<Bound<'py, PyDict>>>> {
        if !w.is_exact_instance_of::<PyInt>() {
            return Ok(None);
        }
        let Ok(w) = w.extract::<i64>() else {
            return Ok(None); // beyond the bound: the other path says so
        };
        let st = self.state.bind(py);
        let n: i64 = item(st, intern!(py, "n"))?.extract()?;
        if w <= 0 || w >= crate::terms::MAX_TOTAL as i64 - n || !item(st, intern!(py, "features"))?.is_none() {
            return Ok(None);
        }
        let Ok(kernel) = item(st, intern!(py, "_kernel"))?.downcast_into::<SummaryKernel>() else {
            return Ok(None);
        };
        let index = item(st, intern!(py, "_index"))?.downcast_into::<PyDict>()?;
        let k = index.len();
        if k < 2 {
            return Ok(None); // not scored: the silhouette's own path records it
        }
        let slot = match index.get_item(y_pred) {
            Ok(Some(slot)) => slot.extract::<usize>()?,
            Ok(None) => return Ok(None),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => return Ok(None), // unhashable: the other path names it
            Err(e) => return Err(e),
        };
        let guard = item(st, intern!(py, "_guard"))?;
        if !self.guard.as_ref().is_some_and(|(g, ..)| g.is(&guard)) {
            let (acquire, release) = (guard.getattr(intern!(py, "acquire"))?, guard.getattr(intern!(py, "release"))?);
            self.guard = Some((guard.unbind(), acquire.unbind(), release.unbind()));
        }
        let (_, acquire, release) = self.guard.as_ref().expect("set above");
        let release = release.clone_ref(py);
        if !acquire.bind(py).call(self.no.bind(py), None)?.is_truthy()? {
            return Ok(None); // another call is changing the summaries: the other path raises
        }
        let out = if read { Some(self.keys.bind(py).copy()?) } else { None };
        let sil = self.sil.bind(py);
        let done = (|| -> PyResult<Option<Scored<'py>>> {
            let version: i64 = item(st, intern!(py, "version"))?.extract()?;
            let gm2: f64 = item(st, intern!(py, "_gm2"))?.extract()?;
            let width = item(st, intern!(py, "_labels"))?.len()?;
            let points = item(sil, intern!(py, "_points"))?.downcast_into::<PyDict>()?;
            let kern = kernel.try_borrow_mut()?;
            let got = match &out {
                Some(out) => {
                    let db = match &self.db {
                        Some(db) => Some(db.bind(py).try_borrow_mut()?),
                        None => None,
                    };
                    SummaryKernel::update_values(kern, slot, x, w, n, gm2, version + 1, width, k, self.singleton, db,
                                                 &self.codes, self.names.bind(py), out, y_pred, &points)?
                }
                None => {
                    let mut kern = kern;
                    kern.update_score(py, slot, x, w, n, gm2, version + 1, width, self.singleton, true, Some(y_pred), Some(&points))?
                }
            };
            if let Some((g, ..)) = &got {
                st.set_item(intern!(py, "_gm2"), *g)?;
                st.set_item(intern!(py, "n"), n + w)?;
                st.set_item(intern!(py, "version"), version + 1)?;
            }
            Ok(got)
        })();
        release.bind(py).call0()?;
        let Some((_, key, score, wfx)) = done? else {
            return Ok(None);
        };
        // the silhouette's `_account`: its sums move, or (a record the kernel did not keep) its own path
        let sums = match wfx {
            Some(wfx) => {
                let (sum, scored) = (intern!(py, "_sum"), intern!(py, "_scored"));
                let step = match i64::try_from(wfx) {
                    Ok(v) => v.into_pyobject(py)?.into_any(),
                    Err(_) => wfx.into_pyobject(py)?.into_any(),
                };
                let (total, weight) = (item(sil, sum)?.add(step)?, item(sil, scored)?.add(w)?);
                sil.set_item(sum, &total)?;
                sil.set_item(scored, &weight)?;
                Some((total, weight))
            }
            None => {
                self.account.bind(py).call1((x, y_pred, w, key, score, py.None()))?;
                None
            }
        };
        if let Some(out) = &out {
            self.fill(py, out, n + w, sums)?;
        }
        Ok(Some(out))
    }

    /// The silhouette's running mean (of its sums `(_sum, _scored)`, read from its dict unless
    /// given) and the report's count (`n`), `k`, labels and sizes
    /// (`ClusterSummaries.size_arrays`) into `out`.
    fn fill<'py>(&mut self, py: Python<'py>, out: &Bound<'py, PyDict>, n: i64, sums: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>) -> PyResult<()> {
        // the silhouette's get: the running mean, NaN before a point was scored
        let (total, scored) = match sums {
            Some(both) => both,
            None => {
                let sil = self.sil.bind(py);
                (item(sil, intern!(py, "_sum"))?, item(sil, intern!(py, "_scored"))?)
            }
        };
        let mean = if scored.is_truthy()? { total.div(&scored)?.extract::<f64>()? / FX } else { f64::NAN };
        out.set_item(self.mean_name.bind(py), mean)?;
        let st = self.state.bind(py);
        let arrays = item(st, intern!(py, "_arrays"))?;
        let (labels, counts) = if arrays.is_none() {
            let both = self.owner.bind(py).call_method0(intern!(py, "size_arrays"))?;
            (both.get_item(0)?, both.get_item(1)?)
        } else {
            let (labels, view, slots) = (arrays.get_item(0)?, arrays.get_item(1)?, arrays.get_item(2)?);
            let counts = if view.is_none() {
                item(st, intern!(py, "_count"))?.call_method1(intern!(py, "take"), (slots,))?
            } else {
                if !self.copy.as_ref().is_some_and(|(v, _)| v.is(&view)) {
                    let copy = view.getattr(intern!(py, "copy"))?.unbind();
                    self.copy = Some((view.unbind(), copy));
                }
                self.copy.as_ref().expect("set above").1.bind(py).call0()?
            };
            (labels, counts)
        };
        let heads = self.heads.bind(py);
        out.set_item(heads.get_item(0)?, n)?;
        out.set_item(heads.get_item(1)?, labels.len()?)?;
        out.set_item(heads.get_item(2)?, labels)?;
        out.set_item(heads.get_item(3)?, counts)?;
        Ok(())
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

    /// The cache's state as bytes, for pickling (the maxima, their positions, the scatters, the
    /// running sum of the maxima, the version it reflects): a copy restored from it
    /// ([`DaviesBouldinKernel::restore`]) reads as the original, bit for bit, where one rebuilt
    /// from scratch would sum the maxima in another order. O(cap).
    fn state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = StateOut::default();
        out.int(self.seen);
        self.db.save(&mut out);
        PyBytes::new(py, &out.0)
    }

    /// Take back the state [`DaviesBouldinKernel::state`] gave. Raises `ValueError`, changing
    /// nothing, on bytes it did not write. O(cap).
    fn restore(&mut self, state: &[u8]) -> PyResult<()> {
        let mut inp = StateIn::new(state);
        let seen = inp.int();
        let db = DaviesBouldin::load(&mut inp);
        match (seen, db, inp.done()) {
            (Some(seen), Some(db), true) => {
                (self.seen, self.db) = (seen, db);
                Ok(())
            }
            _ => Err(PyValueError::new_err("not a Davies-Bouldin kernel state")),
        }
    }

    /// The index over the slots `[:width]` of `kernel` (its distance cache refreshed), at
    /// `version`: the slots changed since the last call are taken one by one, or all anew when
    /// `rebuild`, on the first call, when the arrays grew, or when more than `width/8` changed.
    /// `None` when `kernel` has no fitting distance cache.
    fn value(&mut self, mut kernel: PyRefMut<'_, SummaryKernel>, width: usize, version: i64, rebuild: bool) -> Option<f64> {
        let before = kernel.now.replace(version);
        let got = self.value_of(&mut kernel, width, version, rebuild);
        kernel.now = before;
        got
    }
}

impl DaviesBouldinKernel {
    fn value_of(&mut self, kernel: &mut SummaryKernel, width: usize, version: i64, rebuild: bool) -> Option<f64> {
        let cap = kernel.cap;
        let width = width.min(cap);
        unsafe { kernel.dist_raw().map(|p| &mut *p) }?;
        kernel.refresh_rows(width);
        let kernel = &*kernel;
        let dist = unsafe { kernel.dist_raw().map(|p| &mut *p) }?;
        let s = kernel.slots(width);
        let scat = &kernel.cache.s;
        let (changed, _) = kernel.changed(self.seen, width);
        if rebuild || self.seen < 0 || self.db.cap != cap || 8 * changed.len() > width {
            self.db.rebuild(scat, dist, cap, width);
        } else {
            for &c in &changed {
                self.db.change(scat[c], dist, width, c);
            }
        }
        self.seen = version;
        let live = match kernel.live {
            Some(k) => k, // told by the caller (`read`)
            None => s.counts.iter().filter(|&&c| c > 0).count(),
        };
        Some(self.db.value(live))
    }
}

/// The paths of the distance kernels this CPU runs, narrowest first (for the tests).
#[pyfunction]
fn _simd_paths() -> Vec<&'static str> {
    [(Simd::Plain, "plain"), (Simd::Avx2, "avx2")].into_iter().filter(|(p, _)| p.available()).map(|(_, n)| n).collect()
}

fn simd_path(path: &str) -> PyResult<Simd> {
    let simd = match path {
        "plain" => Simd::Plain,
        "avx2" => Simd::Avx2,
        _ => return Err(PyValueError::new_err(format!("unknown path {path:?}: plain or avx2"))),
    };
    if !simd.available() {
        return Err(PyValueError::new_err(format!("this CPU does not run the {path} path")));
    }
    Ok(simd)
}

/// The floor of one exact distance row, for the benchmark: a copy of `k` means `(k, d)`; a call
/// `(j)` computes the squared distances from mean `j` to every mean (one pass over the `k·d`
/// doubles, by the kernel of `path`) and returns the first. O(k·d) per call.
#[pyclass(module = "streameval._native")]
pub struct RowPass {
    means: Vec<f64>,
    out: Vec<f64>,
    d: usize,
    simd: Simd,
}

#[pymethods]
impl RowPass {
    #[new]
    fn new(means: &Bound<'_, PyAny>, path: &str) -> PyResult<Self> {
        let simd = simd_path(path)?;
        let (_, shape) = array_in(means, &native("f8"), 2)?;
        let d = shape[1];
        let data = rows(means, d)?.to_vec();
        let k = data.len().checked_div(d).unwrap_or(0);
        Ok(RowPass { means: data, out: vec![0.0; k], d, simd })
    }

    fn __call__(&mut self, j: usize) -> PyResult<f64> {
        let d = self.d;
        if d == 0 || j >= self.out.len() {
            return Err(PyValueError::new_err(format!("no mean {j}")));
        }
        let b = self.means[j * d..(j + 1) * d].to_vec();
        sq_dists_on(self.simd, &self.means, &b, &mut self.out);
        Ok(self.out[0])
    }
}

/// `out[j] = ||rows_j - b||²` for the C-contiguous float64 arrays `rows` `(m, d)`, `b` `(d,)` and
/// the writable `out` `(m,)`, by the kernel of `path` (`plain` or `avx2`: one of
/// `_simd_paths()`), as the distance rows of the views compute them. For the tests (every path
/// gives the same bits) and the benchmark (one pass over `m·d` doubles). O(m·d).
#[pyfunction]
fn _sq_dists(rows: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, out: &Bound<'_, PyAny>, path: &str) -> PyResult<()> {
    let simd = simd_path(path)?;
    let (baddr, bshape) = array_in(b, &native("f8"), 1)?;
    let d = bshape[0];
    let data = self::rows(rows, d)?;
    let m = data.len().checked_div(d).unwrap_or(0);
    let (oaddr, oshape) = array_addr(out, &native("f8"), 1)?;
    if oshape[0] != m || d == 0 {
        return Err(PyValueError::new_err(format!("expected {m} outputs and d > 0, got {} and d = {d}", oshape[0])));
    }
    // SAFETY: live C-contiguous float64 arrays of the checked shapes, borrowed for the call (no
    // Python code runs meanwhile); `out` is writable and, a separate array, not `rows` or `b`
    // unless the caller aliases them (then the result is unspecified, never out of bounds).
    let (bv, ov) = unsafe { (std::slice::from_raw_parts(baddr as *const f64, d), std::slice::from_raw_parts_mut(oaddr as *mut f64, m)) };
    sq_dists_on(simd, data, bv, ov);
    Ok(())
}

/// Add the classes to the module (called from the module's init).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SummaryKernel>()?;
    m.add_class::<DaviesBouldinKernel>()?;
    m.add_class::<ReportStep>()?;
    m.add_class::<RowPass>()?;
    m.add_function(wrap_pyfunction!(_simd_paths, m)?)?;
    m.add_function(wrap_pyfunction!(_sq_dists, m)?)
}
