//! The Python binding: `streameval._native.Table`, the base class of `streameval.Contingency`.
//!
//! Labels are arbitrary hashable Python objects compared with Python's equality; each distinct
//! label is interned once per side. An exact `int` that fits 64 bits is kept as a machine integer
//! (hashed as Python hashes it), so `1`, `1.0`, `True` and `numpy.int64(1)` find one cluster, as
//! in a dict. Every check runs before anything changes: a rejected call leaves the state as it was.

use std::sync::Mutex;

use hashbrown::HashTable;
use num_bigint::BigUint;
use pyo3::exceptions::{PyAssertionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::core::{Core, Counted, STATS};
use crate::terms::{FSpec, Kind, MAX_TOTAL};

/// A label as stored: a machine integer, or the first Python object seen for it with the low
/// 32 bits of its hash (kept, so that forgetting or re-finding a label never calls `__hash__`
/// again: a hash that fails on a later call cannot strand a half-done change).
enum Label {
    Int(i64),
    Obj(Py<PyAny>, u32),
}

/// A label being looked up.
#[derive(Clone, Copy)]
enum Key<'a, 'py> {
    Int(i64),
    Obj(&'a Bound<'py, PyAny>),
}

/// Python's `hash(v)` for an int `v`.
#[inline]
fn int_hash(v: i64) -> i64 {
    const M: u64 = (1u64 << 61) - 1;
    let a = (v.unsigned_abs() % M) as i64;
    let h = if v < 0 { -a } else { a };
    if h == -1 {
        -2
    } else {
        h
    }
}

#[inline]
fn mix(h: u32) -> u64 {
    let x = (h as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

/// A cell being looked up: its true and predicted labels, each with its hash, and its count.
type CellKey<'a, 'py> = ((Key<'a, 'py>, u32), (Key<'a, 'py>, u32), u64);

fn key_of<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<(Key<'a, 'py>, u32)> {
    if obj.is_exact_instance_of::<PyInt>() {
        if let Ok(v) = obj.extract::<i64>() {
            return Ok((Key::Int(v), int_hash(v) as u32));
        }
    }
    Ok((Key::Obj(obj), obj.hash()? as u32))
}

fn label_eq(labels: &[Option<Label>], py: Python<'_>, id: u32, key: Key) -> PyResult<bool> {
    match (labels[id as usize].as_ref().expect("live id"), key) {
        (Label::Int(a), Key::Int(b)) => Ok(*a == b),
        (Label::Int(a), Key::Obj(o)) => o.eq(*a),
        (Label::Obj(s, _), Key::Int(b)) => s.bind(py).eq(b),
        (Label::Obj(s, _), Key::Obj(o)) => Ok(s.bind(py).is(o) || s.bind(py).eq(o)?),
    }
}

/// The labels of one side: label <-> dense id, with ids of emptied clusters reused.
///
/// Labels live in a hash table, except machine integers inside the range of a [`Dense`] index,
/// which a bulk fill sets up when its integer labels are dense: their ids then sit in an array
/// by value, with no hashing.
#[derive(Default)]
struct Interner {
    table: HashTable<(u32, u32)>, // (id, low 32 bits of the Python hash)
    dense: Dense,
    labels: Vec<Option<Label>>,
    free: Vec<u32>,
}

/// The ids of the machine-integer labels `lo..lo + ids.len()`, by value ([`Dense::NONE`]: no
/// such label). Every live `Label::Int` in the range is here, never in the hash table. The
/// range stays inside `(-2**31, 2**31)`, where `int_hash(v) == v` but for `-1`, so the
/// integers that a Python object can equal are found from the low bits of its hash.
#[derive(Clone, Default)]
struct Dense {
    lo: i64,
    ids: Vec<u32>,
    live: usize,
}

impl Dense {
    const NONE: u32 = u32::MAX;

    /// A dense index suits distinct values spanning `lo..=hi`: at most 4 bytes a value more than
    /// the hash table's (an 8-byte entry a value, and room), and inside `(-2**31, 2**31)`.
    fn suits(n: usize, lo: i64, hi: i64) -> bool {
        lo > -(1 << 31) && hi < (1 << 31) && ((hi - lo) as u64) < 2 * n as u64 + 1024
    }

    /// The slot of value `v`, if inside the range.
    #[inline]
    fn slot(&self, v: i64) -> Option<usize> {
        let i = v.wrapping_sub(self.lo) as u64;
        (i < self.ids.len() as u64).then_some(i as usize)
    }

    /// The id of the integer label `v`, if held here.
    #[inline]
    fn get(&self, v: i64) -> Option<u32> {
        self.slot(v).map(|i| self.ids[i]).filter(|&id| id != Self::NONE)
    }

    fn set(&mut self, i: usize, id: u32) {
        self.live += (self.ids[i] == Self::NONE) as usize;
        self.ids[i] = id;
    }

    fn clear_slot(&mut self, i: usize) {
        self.live -= (self.ids[i] != Self::NONE) as usize;
        self.ids[i] = Self::NONE;
    }

    /// The integers of the range whose Python hash has low 32 bits `h`: `v` with
    /// `v as u32 == h`, and `-1` (hashed as `-2`) with `-2`. At most two.
    fn hashed_as(&self, h: u32) -> impl Iterator<Item = i64> + '_ {
        let v = h as i32 as i64;
        let minus_one = (v == -2).then_some(-1);
        std::iter::once(v).filter(|&v| v != -1).chain(minus_one).filter(|&v| self.slot(v).is_some())
    }
}

impl Interner {
    fn equal(&self, py: Python<'_>, id: u32, key: Key) -> PyResult<bool> {
        label_eq(&self.labels, py, id, key)
    }

    /// The number of live labels.
    fn len(&self) -> usize {
        self.table.len() + self.dense.live
    }

    /// The id of `key` in the dense index: a machine integer by its slot, an object among the
    /// integers it can equal (at most two `==`).
    fn find_dense(&self, py: Python<'_>, key: Key, h: u32) -> PyResult<Option<u32>> {
        if self.dense.ids.is_empty() {
            return Ok(None);
        }
        match key {
            Key::Int(v) => Ok(self.dense.get(v)),
            Key::Obj(_) => {
                for v in self.dense.hashed_as(h) {
                    if let Some(id) = self.dense.get(v) {
                        if self.equal(py, id, key)? {
                            return Ok(Some(id));
                        }
                    }
                }
                Ok(None)
            }
        }
    }

    fn find(&self, py: Python<'_>, key: Key, h: u32) -> PyResult<Option<u32>> {
        match self.find_dense(py, key, h)? {
            Some(id) => Ok(Some(id)),
            None => self.find_table(py, key, h),
        }
    }

    /// The id of `key` in the hash table.
    fn find_table(&self, py: Python<'_>, key: Key, h: u32) -> PyResult<Option<u32>> {
        let mut err = None;
        let found = self.table.find(mix(h), |&(id, eh)| {
            if eh != h || err.is_some() {
                return false;
            }
            match self.equal(py, id, key) {
                Ok(b) => b,
                Err(e) => {
                    err = Some(e);
                    false
                }
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(found.map(|&(id, _)| id)),
        }
    }

    /// A new id for `label` in `labels`: an emptied cluster's from `free`, or the next.
    fn new_id(labels: &mut Vec<Option<Label>>, free: &mut Vec<u32>, label: Label) -> u32 {
        match free.pop() {
            Some(id) => {
                labels[id as usize] = Some(label);
                id
            }
            None => {
                labels.push(Some(label));
                (labels.len() - 1) as u32
            }
        }
    }

    /// The id of `key`, interning it if new; `(id, was new)`.
    fn intern(&mut self, py: Python<'_>, key: Key, h: u32) -> PyResult<(u32, bool)> {
        if let Some(id) = self.find_dense(py, key, h)? {
            return Ok((id, false));
        }
        if let Key::Int(v) = key {
            if let Some(i) = self.dense.slot(v) {
                // an integer of the dense range: held there, unless an equal object is hashed
                if let Some(id) = self.find_table(py, key, h)? {
                    return Ok((id, false));
                }
                let id = Self::new_id(&mut self.labels, &mut self.free, Label::Int(v));
                self.dense.set(i, id);
                return Ok((id, true));
            }
        }
        let labels = &self.labels;
        let mut err = None;
        let entry = self.table.entry(
            mix(h),
            |&(id, eh)| {
                if eh != h || err.is_some() {
                    return false;
                }
                label_eq(labels, py, id, key).unwrap_or_else(|e| {
                    err = Some(e);
                    false
                })
            },
            |&(_, eh)| mix(eh),
        );
        if let Some(e) = err {
            return Err(e);
        }
        let vacant = match entry {
            hashbrown::hash_table::Entry::Occupied(o) => return Ok((o.get().0, false)),
            hashbrown::hash_table::Entry::Vacant(v) => v,
        };
        let label = match key {
            Key::Int(v) => Label::Int(v),
            Key::Obj(o) => Label::Obj(o.clone().unbind(), h),
        };
        let id = Self::new_id(&mut self.labels, &mut self.free, label);
        vacant.insert((id, h));
        Ok((id, true))
    }

    /// Intern distinct machine integers at once: `(id of each, ids created)`. Into an empty
    /// interner the ids are `0..` in the order of `vals`, kept in a [`Dense`] index when the
    /// values are dense (no hashing at all). Otherwise the table is visited in the order of its
    /// hash buckets (the values sorted by bucket first), not the values' order, so a million
    /// labels cost a sweep rather than a million cache misses; new labels get their ids in the
    /// order of `vals` (the cluster records are then filled in order too). A failed lookup (a
    /// stored label's `==` raised) changes nothing.
    fn intern_ints(&mut self, py: Python<'_>, vals: &[i64]) -> PyResult<(Vec<u32>, Vec<u32>)> {
        const NEW: u32 = u32::MAX;
        let mut ids = vec![NEW; vals.len()];
        if vals.is_empty() {
            return Ok((ids, Vec::new()));
        }
        if self.len() == 0 {
            // nothing to find: the ids start afresh (every cluster left is empty)
            self.start_afresh(vals);
            let ids: Vec<u32> = (0..vals.len() as u32).collect();
            return Ok((ids.clone(), ids));
        }
        self.reserve(vals.len());
        let (mask, mb) = self.bucket_mask();
        let mut order: Vec<u64> = vals
            .iter()
            .enumerate()
            .map(|(i, &v)| ((mix(int_hash(v) as u32) & mask) << 32) | i as u64)
            .collect();
        crate::core::sort_bits(&mut order, 32 + mb.saturating_sub(crate::core::LOCAL_BITS), 32 + mb);
        for &o in order.iter() {
            let i = o as u32 as usize;
            let v = vals[i];
            if let Some(id) = self.find(py, Key::Int(v), int_hash(v) as u32)? {
                ids[i] = id;
            }
        }
        let mut created = Vec::new();
        let is_new: Vec<bool> = ids.iter().map(|&id| id == NEW).collect();
        self.labels.reserve(vals.len().saturating_sub(self.free.len()));
        for (i, id) in ids.iter_mut().enumerate() {
            if *id == NEW {
                *id = Self::new_id(&mut self.labels, &mut self.free, Label::Int(vals[i]));
                created.push(*id);
            }
        }
        if !created.is_empty() {
            for &o in order.iter() {
                let i = o as u32 as usize;
                if is_new[i] {
                    match self.dense.slot(vals[i]) {
                        Some(s) => self.dense.set(s, ids[i]),
                        None => {
                            let h = int_hash(vals[i]) as u32;
                            self.table.insert_unique(mix(h), (ids[i], h), |&(_, eh)| mix(eh));
                        }
                    }
                }
            }
        }
        Ok((ids, created))
    }

    /// The mask of the table's bucket of a hash, and its bits (after a reserve: hashbrown puts
    /// a hash in bucket `hash & (buckets - 1)`, buckets = capacity * 8 / 7).
    fn bucket_mask(&self) -> (u64, u32) {
        let buckets = (self.table.capacity() / 7 * 8).max(1).next_power_of_two() as u64;
        let mb = buckets.trailing_zeros().min(32);
        ((1u64 << mb) - 1, mb)
    }

    /// Hold exactly the distinct integers `vals` (no label is live), with ids `0..` in their
    /// order: in a [`Dense`] index when they are dense, else in the table, inserted in the order
    /// of its buckets. O(values), or O(their range) for the dense index.
    fn start_afresh(&mut self, vals: &[i64]) {
        self.labels.clear();
        self.free.clear();
        self.table.clear();
        self.dense = Dense::default();
        self.labels.extend(vals.iter().map(|&v| Some(Label::Int(v))));
        let (lo, hi) = vals.iter().fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        if Dense::suits(vals.len(), lo, hi) {
            let mut ids = vec![Dense::NONE; (hi - lo) as usize + 1];
            for (id, &v) in vals.iter().enumerate() {
                ids[(v - lo) as usize] = id as u32;
            }
            self.dense = Dense { lo, ids, live: vals.len() };
            return;
        }
        self.reserve(vals.len());
        let (mask, mb) = self.bucket_mask();
        let mut v: Vec<(u64, (u32, u32))> = vals
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let h = int_hash(x) as u32;
                (mix(h) & mask, (i as u32, h))
            })
            .collect();
        crate::core::sort_by_bits(&mut v, mb.saturating_sub(crate::core::LOCAL_BITS), mb);
        for (_, (id, h)) in v {
            self.table.insert_unique(mix(h), (id, h), |&(_, eh)| mix(eh));
        }
    }

    /// Forget labels just interned (`ids` in the order they were created), newest first, so
    /// that the free list and the label slots are as they were before.
    fn forget(&mut self, py: Python<'_>, ids: &[u32]) {
        for &id in ids.iter().rev() {
            self.remove(py, id);
            if id as usize + 1 == self.labels.len() {
                self.labels.pop();
                self.free.pop();
            }
        }
    }

    fn reserve(&mut self, n: usize) {
        self.table.reserve(n, |&(_, eh)| mix(eh));
    }

    /// The low 32 bits of the Python hash of label `id`, as interned (no Python call).
    fn hash_of(&self, id: u32) -> u32 {
        match self.labels[id as usize].as_ref().expect("live id") {
            Label::Int(v) => int_hash(*v) as u32,
            Label::Obj(_, h) => *h,
        }
    }

    fn remove(&mut self, _py: Python<'_>, id: u32) {
        let dense_slot = match self.labels[id as usize].as_ref().expect("live id") {
            Label::Int(v) => self.dense.slot(*v),
            Label::Obj(..) => None,
        };
        match dense_slot {
            Some(i) => self.dense.clear_slot(i),
            None => {
                let h = self.hash_of(id);
                if let Ok(entry) = self.table.find_entry(mix(h), |&(eid, _)| eid == id) {
                    entry.remove();
                }
            }
        }
        self.labels[id as usize] = None;
        self.free.push(id);
    }

    fn label<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.labels[id as usize].as_ref().expect("live id") {
            Label::Int(v) => v.into_pyobject(py)?.into_any(),
            Label::Obj(o, _) => o.bind(py).clone(),
        })
    }

    fn key_at<'a, 'py>(&self, py: Python<'py>, id: u32, hold: &'a mut Option<Bound<'py, PyAny>>) -> (Key<'a, 'py>, u32) {
        match self.labels[id as usize].as_ref().expect("live id") {
            Label::Int(v) => (Key::Int(*v), int_hash(*v) as u32),
            Label::Obj(o, h) => {
                *hold = Some(o.bind(py).clone());
                (Key::Obj(hold.as_ref().expect("just set")), *h)
            }
        }
    }

    fn clone_ref(&self, py: Python<'_>) -> Interner {
        Interner {
            table: self.table.clone(),
            dense: self.dense.clone(),
            labels: self
                .labels
                .iter()
                .map(|l| {
                    l.as_ref().map(|l| match l {
                        Label::Int(v) => Label::Int(*v),
                        Label::Obj(o, h) => Label::Obj(o.clone_ref(py), *h),
                    })
                })
                .collect(),
            free: self.free.clone(),
        }
    }
}

/// The distinct true labels of counted cells, ascending (the cells come sorted by them).
fn true_labels(counted: &Counted) -> Vec<i64> {
    let mut tvals: Vec<i64> = Vec::new();
    let mut last = u64::MAX;
    for &(k, _) in counted.cells.iter() {
        if k >> counted.p_bits != last {
            tvals.push(counted.labels(k).0);
            last = k >> counted.p_bits;
        }
    }
    tvals
}

/// `ids[i] == i` for every `i`.
fn is_identity(ids: &[u32]) -> bool {
    ids.iter().enumerate().all(|(i, &id)| id as usize == i)
}

/// Where each counted cell's predicted label sits among the distinct predicted labels.
enum PredIndex {
    /// by the label's offset from the smallest label (a narrow range)
    Slot(Vec<u32>),
    /// by the cell's position
    Cell(Vec<u32>),
}

/// The distinct predicted labels of counted cells, ascending, and each cell's index among them:
/// with a slot per offset when the labels' range is narrow (two passes over the cells), else by
/// a radix sort of the offsets. O(cells + range).
fn pred_labels(counted: &Counted) -> (Vec<i64>, PredIndex) {
    let (cells, n) = (&counted.cells, counted.cells.len());
    let pmask = (1u64 << counted.p_bits) - 1;
    let mut pvals: Vec<i64> = Vec::new();
    if counted.p_bits < 40 && (1u64 << counted.p_bits) <= 4 * n as u64 + 4096 {
        // mark the offsets present, number them in ascending order
        let mut slot = vec![0u32; 1usize << counted.p_bits];
        for &(k, _) in cells.iter() {
            slot[(k & pmask) as usize] = 1;
        }
        for (o, s) in slot.iter_mut().enumerate() {
            if *s != 0 {
                *s = pvals.len() as u32;
                pvals.push(counted.lo_p.wrapping_add(o as i64));
            }
        }
        return (pvals, PredIndex::Slot(slot));
    }
    let mut offs: Vec<u64> = cells.iter().map(|&(k, _)| k & pmask).collect();
    let mut order: Option<Vec<u64>> = Some((0..n as u64).collect());
    crate::core::radix_sort(&mut offs, &mut order, counted.p_bits);
    let mut pidx: Vec<u32> = vec![0; n];
    let mut last = u64::MAX;
    for (&o, &i) in offs.iter().zip(order.as_ref().unwrap().iter()) {
        if o != last || pvals.is_empty() {
            pvals.push(counted.lo_p.wrapping_add(o as i64));
            last = o;
        }
        pidx[i as usize] = (pvals.len() - 1) as u32;
    }
    (pvals, PredIndex::Cell(pidx))
}

fn error(py: Python<'_>, name: &str, msg: String) -> PyErr {
    match py.import("streameval.errors").and_then(|m| m.getattr(name)) {
        Ok(cls) => match cls.call1((msg,)) {
            Ok(inst) => PyErr::from_value(inst),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// A label that needs no further check (exact int or str, a float that is not NaN).
#[inline]
fn plain(obj: &Bound<'_, PyAny>) -> bool {
    if obj.is_exact_instance_of::<PyInt>() || obj.is_exact_instance_of::<PyString>() {
        return true;
    }
    if let Ok(f) = obj.downcast_exact::<PyFloat>() {
        return !f.value().is_nan();
    }
    false
}

fn bytes_i64(b: &Bound<'_, PyBytes>) -> Vec<i64> {
    b.as_bytes()
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// The elements of a one-dimensional, C-contiguous numpy array of native int64, read in place
/// through its `__array_interface__` (no copy). The caller keeps `obj` alive and runs no Python
/// code while it reads the slice.
fn int64_view<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [i64]> {
    let ai = obj.getattr("__array_interface__")?;
    let typestr: String = ai.get_item("typestr")?.extract()?;
    let native = if cfg!(target_endian = "little") { "<i8" } else { ">i8" };
    let shape: Vec<usize> = ai.get_item("shape")?.extract()?;
    let contiguous = ai.get_item("strides")?.is_none();
    if typestr != native || shape.len() != 1 || !contiguous {
        return Err(PyValueError::new_err(format!(
            "expected a contiguous one-dimensional int64 array, got typestr {typestr}, shape {shape:?}"
        )));
    }
    if shape[0] == 0 {
        return Ok(&[]);
    }
    let (addr, _readonly): (usize, bool) = ai.get_item("data")?.extract()?;
    if addr == 0 || addr % std::mem::align_of::<i64>() != 0 {
        return Err(PyValueError::new_err("int64 array data is not aligned"));
    }
    // SAFETY: numpy guarantees `shape[0]` contiguous, aligned int64 values at `addr` for as long
    // as the array lives (it cannot be resized while referenced); `obj` borrows it for 'a.
    Ok(unsafe { std::slice::from_raw_parts(addr as *const i64, shape[0]) })
}

/// The key of a label held as `(object, hash, int)`: the object when there is one, else the int.
fn held_key<'a, 'py>(h: &'a (Option<Bound<'py, PyAny>>, u32, i64)) -> (Key<'a, 'py>, u32) {
    match &h.0 {
        Some(o) => (Key::Obj(o), h.1),
        None => (Key::Int(h.2), h.1),
    }
}

/// A weight argument: absent (1) or given (checked by `Table::weight`).
pub enum W<'py> {
    One,
    Given(Bound<'py, PyAny>),
}

impl<'py> FromPyObject<'py> for W<'py> {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(W::Given(ob.clone()))
    }
}

/// The native state of a contingency table (see `streameval.Contingency` for the API).
#[pyclass(subclass, module = "streameval._native")]
pub struct Table {
    core: Core,
    names: [Interner; 2],
    missing_skip: bool,
    /// Elements skipped for a missing label (``missing="skip"``), below ``MAX_TOTAL``.
    skipped: u128,
    /// Bumped by every mutation (on-demand metrics cache their value against it).
    version: u64,
    fkeys: Vec<(String, f64)>,
}

/// The `ConcurrentUseError` of `streameval.sync.concurrent_use`: the table is in use by another
/// call (another thread, or a callback such as a label's `__hash__` re-entering it).
fn concurrent(slf: &Bound<'_, PyAny>, what: &str) -> PyErr {
    let py = slf.py();
    match py.import("streameval.sync").and_then(|m| m.getattr("concurrent_use")) {
        Ok(f) => match f.call1((slf, what)) {
            Ok(_) => error(py, "ConcurrentUseError", format!("{what}: the table is in use")),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// The table, mutably, or a `ConcurrentUseError` when another call holds it (never PyO3's
/// "Already borrowed" `RuntimeError`, never a panic).
fn borrow_mut<'py>(slf: &Bound<'py, Table>, what: &str) -> PyResult<PyRefMut<'py, Table>> {
    slf.try_borrow_mut().map_err(|_| concurrent(slf.as_any(), what))
}

/// The table, to read, or a `ConcurrentUseError` when a change to it is running.
fn borrow<'py>(slf: &Bound<'py, Table>, what: &str) -> PyResult<PyRef<'py, Table>> {
    slf.try_borrow().map_err(|_| concurrent(slf.as_any(), what))
}

/// How often (in labels interned or cells visited) a long loop checks for a pending signal
/// (Ctrl-C): a power of two minus one, as a mask.
const SIGNAL_EVERY: usize = (1 << 16) - 1;

#[inline]
fn int(py: Python<'_>, v: i128) -> PyResult<PyObject> {
    Ok(match i64::try_from(v) {
        Ok(x) => x.into_pyobject(py)?.into_any().unbind(),
        Err(_) => v.into_pyobject(py)?.into_any().unbind(),
    })
}

impl Table {
    /// The weight as a count in [1, MAX_TOTAL), or the error Python's `check_weight` gives.
    fn weight(&self, py: Python<'_>, w: W<'_>) -> PyResult<u64> {
        let w = match w {
            W::One => return Ok(1),
            W::Given(w) => w,
        };
        if w.is_exact_instance_of::<PyInt>() {
            if let Ok(x) = w.extract::<u64>() {
                if (1..MAX_TOTAL).contains(&x) {
                    return Ok(x);
                }
            }
        }
        py.import("streameval._validate")?.getattr("check_weight")?.call1((&w,))?.extract()
    }

    /// The error of Python's `check_total` when `add` more elements would reach the bound.
    fn check_total(&self, py: Python<'_>, add: u128) -> PyResult<()> {
        if (self.core.sums.n as u128) + add >= MAX_TOTAL as u128 {
            py.import("streameval._validate")?
                .getattr("check_total")?
                .call1((self.core.sums.n, add))?;
        }
        Ok(())
    }

    /// The checked labels, or None when a missing label is to be skipped.
    fn labels<'py>(
        &self,
        py: Python<'py>,
        y_true: &Bound<'py, PyAny>,
        y_pred: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        if plain(y_true) && plain(y_pred) {
            return Ok(Some((y_true.clone(), y_pred.clone())));
        }
        let r = py
            .import("streameval._validate")?
            .getattr("check_labels")?
            .call1((y_true, y_pred, self.missing_skip))?;
        if r.is_none() {
            return Ok(None);
        }
        Ok(Some(r.extract()?))
    }

    fn free_if_empty(&mut self, py: Python<'_>, side: usize, id: u32) {
        if self.core.size(side, id) == 0 {
            self.names[side].remove(py, id);
        }
    }

    /// Intern a pair of labels; a failure after the first was interned forgets it again.
    fn intern_pair(&mut self, py: Python<'_>, kt: (Key, u32), kp: (Key, u32)) -> PyResult<(u32, u32)> {
        let (t, new_t) = self.names[0].intern(py, kt.0, kt.1)?;
        match self.names[1].intern(py, kp.0, kp.1) {
            Ok((p, _)) => Ok((t, p)),
            Err(e) => {
                if new_t {
                    self.names[0].remove(py, t);
                }
                Err(e)
            }
        }
    }

    fn change(&mut self, py: Python<'_>, t: u32, p: u32, d: i64) {
        self.core.change(t, p, d);
        if d < 0 {
            self.free_if_empty(py, 0, t);
            self.free_if_empty(py, 1, p);
        }
    }

    /// The id of `label` on a side, or None; an error of its `__hash__` or `__eq__` is raised.
    fn find_label(&self, py: Python<'_>, side: usize, label: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        let (k, h) = key_of(label)?;
        self.names[side].find(py, k, h)
    }

    fn side_of(&self, py: Python<'_>, side: usize, label: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        let (k, h) = match key_of(label) {
            Ok(x) => x,
            Err(_) => return Ok(None), // unhashable: never a label of the table
        };
        self.names[side].find(py, k, h)
    }

    fn relabel(&mut self, py: Python<'_>, side: usize, old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<()> {
        py.import("streameval._validate")?.getattr("check_label")?.call1((new, "new label"))?;
        let o = match self.side_of(py, side, old)? {
            Some(o) => o,
            None => {
                let which = if side == 0 { "true" } else { "predicted" };
                return Err(error(
                    py,
                    "UnknownElementError",
                    format!("relabel of {which} cluster {}: it holds no elements", old.repr()?),
                ));
            }
        };
        if self.side_of(py, side, new)? == Some(o) {
            return Ok(()); // the same label (found as the same cluster, never compared with ==)
        }
        let (k, h) = key_of(new)?;
        let (nw, _) = self.names[side].intern(py, k, h)?;
        let cells: Vec<(u32, u64)> = self.core.sides[side][o as usize]
            .others()
            .map(|z| {
                let c = if side == 0 { self.core.cell(o, z) } else { self.core.cell(z, o) };
                (z, c)
            })
            .collect();
        for (z, c) in cells {
            let (from, to) = if side == 0 { ((o, z), (nw, z)) } else { ((z, o), (z, nw)) };
            self.core.change(from.0, from.1, -(c as i64));
            self.core.change(to.0, to.1, c as i64);
        }
        self.names[side].remove(py, o);
        self.version += 1;
        Ok(())
    }

    /// Add `(row id, col id, count)` cells (the total was checked): to an empty table (or one
    /// with few cells compared with these) in bulk followed by one rebuild, as the reference
    /// does; a few cells one by one; otherwise incrementally, visiting only the clusters they
    /// touch. The same state every way.
    fn add_ids(&mut self, ids: Vec<(u32, u32, u64)>) {
        let held = self.core.sums.cells as usize;
        if held == 0 || ids.len() * 2 >= held {
            self.core.add_cells(&ids);
            self.version += 1;
        } else if ids.len() < 256 {
            for (t, p, c) in ids {
                self.core.change(t, p, c as i64);
                self.version += 1;
            }
        } else {
            self.core.add_incremental(&ids);
            self.version += 1;
        }
    }

    /// Intern the labels of many cells: their ids, or, when a label's `__hash__`/`__eq__`
    /// raises or a signal (Ctrl-C) is pending, the error with every label interned here
    /// forgotten again (the interners as they were). Checks for signals every
    /// [`SIGNAL_EVERY`] + 1 cells.
    fn intern_keys(&mut self, py: Python<'_>, keys: Vec<CellKey>) -> PyResult<Vec<(u32, u32, u64)>> {
        let mut created: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        let mut ids = Vec::with_capacity(keys.len());
        let mut failed = None;
        for (i, (kt, kp, c)) in keys.into_iter().enumerate() {
            if i & SIGNAL_EVERY == SIGNAL_EVERY {
                if let Err(e) = py.check_signals() {
                    failed = Some(e);
                    break;
                }
            }
            let t = match self.names[0].intern(py, kt.0, kt.1) {
                Ok((t, new)) => {
                    if new {
                        created[0].push(t);
                    }
                    t
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            match self.names[1].intern(py, kp.0, kp.1) {
                Ok((p, new)) => {
                    if new {
                        created[1].push(p);
                    }
                    ids.push((t, p, c));
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if failed.is_none() {
            // a Ctrl-C since the last check, before the caller adds anything
            failed = py.check_signals().err();
        }
        match failed {
            None => Ok(ids),
            Some(e) => {
                self.names[0].forget(py, &created[0]);
                self.names[1].forget(py, &created[1]);
                Err(e)
            }
        }
    }

    /// Add cells of labels (`skipped` more elements skipped): totals checked, labels interned
    /// (or, on an error, nothing changed), then the cells added.
    fn add_keys(&mut self, py: Python<'_>, keys: Vec<CellKey>, skipped: u128) -> PyResult<()> {
        let total: u128 = keys.iter().map(|k| k.2 as u128).sum();
        self.check_total(py, total)?;
        self.check_skipped(py, skipped)?;
        let ids = self.intern_keys(py, keys)?;
        if !ids.is_empty() {
            self.add_ids(ids);
        }
        self.skipped += skipped;
        Ok(())
    }

    /// The error of Python's `check_total` when `add` more skipped elements would reach the bound.
    fn check_skipped(&self, py: Python<'_>, add: u128) -> PyResult<()> {
        if self.skipped + add >= MAX_TOTAL as u128 {
            py.import("streameval._validate")?
                .getattr("check_total")?
                .call1((self.skipped, add, "the skipped count"))?;
        }
        Ok(())
    }
}

#[pymethods]
impl Table {
    #[new]
    #[pyo3(signature = (missing = None, *_args, **_kwargs))]
    fn new(
        missing: Option<&Bound<'_, PyAny>>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let skip = match missing {
            None => false,
            Some(m) => match m.extract::<String>().ok().as_deref() {
                Some("raise") => false,
                Some("skip") => true,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "missing must be \"raise\" or \"skip\", got {}",
                        m.repr()?
                    )))
                }
            },
        };
        Ok(Table {
            core: Core::new(),
            names: [Interner::default(), Interner::default()],
            missing_skip: skip,
            skipped: 0,
            version: 0,
            fkeys: Vec::new(),
        })
    }

    // the running sums (``n``, ``sum_row_sq``, ...) are read-only attributes made from the one
    // list crate::core::STATS (see `Stat`, installed on the class by the module)

    /// ``"raise"`` or ``"skip"``: what a missing label does.
    #[getter]
    fn missing(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        Ok(if borrow(slf, "missing")?.missing_skip { "skip" } else { "raise" })
    }

    /// Elements skipped for a missing label (``missing="skip"``).
    #[getter]
    fn get_skipped(slf: &Bound<'_, Self>) -> PyResult<u128> {
        Ok(borrow(slf, "skipped")?.skipped)
    }

    #[setter]
    fn set_skipped(slf: &Bound<'_, Self>, value: u128) -> PyResult<()> {
        let py = slf.py();
        if value >= MAX_TOTAL as u128 {
            py.import("streameval._validate")?.getattr("check_total")?.call1((value, 0, "the skipped count"))?;
        }
        borrow_mut(slf, "skipped")?.skipped = value;
        Ok(())
    }

    /// Bumped by every mutation (on-demand metrics cache their value against it).
    #[getter]
    fn get_version(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(borrow(slf, "version")?.version)
    }

    #[setter]
    fn set_version(slf: &Bound<'_, Self>, value: u64) -> PyResult<()> {
        borrow_mut(slf, "version")?.version = value;
        Ok(())
    }

    /// Add ``w`` elements with true label ``y_true`` and predicted label ``y_pred``. O(1).
    #[pyo3(signature = (y_true, y_pred, w = W::One))]
    fn update<'py>(slf: &Bound<'py, Self>, y_true: &Bound<'py, PyAny>, y_pred: &Bound<'py, PyAny>, w: W<'py>) -> PyResult<()> {
        let py = slf.py();
        let mut guard = borrow_mut(slf, "update")?;
        let this = &mut *guard;
        let w = this.weight(py, w)?;
        let (t, p) = match this.labels(py, y_true, y_pred)? {
            Some(x) => x,
            None => {
                this.check_skipped(py, w as u128)?;
                this.skipped += w as u128;
                return Ok(());
            }
        };
        this.check_total(py, w as u128)?;
        let (t, p) = this.intern_pair(py, key_of(&t)?, key_of(&p)?)?;
        this.core.change(t, p, w as i64);
        this.version += 1;
        Ok(())
    }

    /// Remove ``w`` elements added by :meth:`update` with the same arguments. O(1).
    #[pyo3(signature = (y_true, y_pred, w = W::One))]
    fn revert<'py>(slf: &Bound<'py, Self>, y_true: &Bound<'py, PyAny>, y_pred: &Bound<'py, PyAny>, w: W<'py>) -> PyResult<()> {
        let py = slf.py();
        let mut guard = borrow_mut(slf, "revert")?;
        let this = &mut *guard;
        let w = this.weight(py, w)?;
        let (yt, yp) = match this.labels(py, y_true, y_pred)? {
            Some(x) => x,
            None => {
                if this.skipped < w as u128 {
                    return Err(error(
                        py,
                        "UnknownElementError",
                        format!(
                            "revert of {w} skipped element(s) with a missing label: only {} were skipped",
                            this.skipped
                        ),
                    ));
                }
                this.skipped -= w as u128;
                return Ok(());
            }
        };
        // a label whose hash or == fails now raises that error (never "holds 0 such elements")
        let t = this.find_label(py, 0, &yt)?;
        let p = this.find_label(py, 1, &yp)?;
        let have = match (t, p) {
            (Some(t), Some(p)) => this.core.cell(t, p),
            _ => 0,
        };
        if have < w {
            return Err(error(
                py,
                "UnknownElementError",
                format!(
                    "revert of (y_true={}, y_pred={}, w={w}): the table holds {have} such elements",
                    yt.repr()?,
                    yp.repr()?
                ),
            ));
        }
        let (Some(t), Some(p)) = (t, p) else {
            return Err(PyAssertionError::new_err("a held cell without its labels"));
        };
        this.change(py, t, p, -(w as i64));
        this.version += 1;
        Ok(())
    }

    /// The count of cell ``(t, p)``, 0 if absent. O(1).
    fn get_cell(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>, p: &Bound<'_, PyAny>) -> PyResult<u64> {
        let py = slf.py();
        let guard = borrow(slf, "get_cell")?;
        let this = &*guard;
        Ok(match (this.side_of(py, 0, t)?, this.side_of(py, 1, p)?) {
            (Some(t), Some(p)) => this.core.cell(t, p),
            _ => 0,
        })
    }

    /// Every non-zero cell as a list of ``(true, pred, count)``. O(cells).
    fn cell_list<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let guard = borrow(slf, "items")?;
        let this = &*guard;
        let out = PyList::empty(py);
        for (t, p, c) in this.core.items() {
            let tup = PyTuple::new(py, [this.names[0].label(py, t)?, this.names[1].label(py, p)?, c.into_pyobject(py)?.into_any()])?;
            out.append(tup)?;
        }
        Ok(out)
    }

    /// ``{label: size}`` of the non-empty clusters of a side (0 true, 1 predicted). O(k).
    fn sizes<'py>(slf: &Bound<'py, Self>, side: usize) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        let guard = borrow(slf, "sizes")?;
        let this = &*guard;
        let d = PyDict::new(py);
        for (x, cl) in this.core.sides[side].iter().enumerate() {
            if cl.size > 0 {
                d.set_item(this.names[side].label(py, x as u32)?, cl.size)?;
            }
        }
        Ok(d)
    }

    /// The cells of cluster ``label`` of a side as ``{other label: count}``. O(its cells).
    fn cluster_cells<'py>(slf: &Bound<'py, Self>, side: usize, label: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        let guard = borrow(slf, "cluster_cells")?;
        let this = &*guard;
        let d = PyDict::new(py);
        if let Some(x) = this.side_of(py, side, label)? {
            for z in this.core.sides[side][x as usize].others() {
                let c = if side == 0 { this.core.cell(x, z) } else { this.core.cell(z, x) };
                d.set_item(this.names[1 - side].label(py, z)?, c)?;
            }
        }
        Ok(d)
    }

    /// ``(size, sum of squared cells, largest cell)`` of cluster ``label`` of a side, or None. O(1).
    fn cluster_stats(slf: &Bound<'_, Self>, side: usize, label: &Bound<'_, PyAny>) -> PyResult<Option<(u64, u128, u64)>> {
        let py = slf.py();
        let guard = borrow(slf, "cluster_stats")?;
        let this = &*guard;
        Ok(this.side_of(py, side, label)?.map(|x| {
            let c = &this.core.sides[side][x as usize];
            (c.size, c.sq, c.max)
        }))
    }

    /// The labels of the non-empty clusters of a side. O(k).
    fn labels_of<'py>(slf: &Bound<'py, Self>, side: usize) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let guard = borrow(slf, "labels_of")?;
        let this = &*guard;
        let out = PyList::empty(py);
        for (x, cl) in this.core.sides[side].iter().enumerate() {
            if cl.size > 0 {
                out.append(this.names[side].label(py, x as u32)?)?;
            }
        }
        Ok(out)
    }

    /// Every running sum, in the order of ``streameval.stats.STAT_NAMES``. O(1).
    fn stat_values(slf: &Bound<'_, Self>) -> PyResult<Vec<i128>> {
        let guard = borrow(slf, "stats")?;
        Ok(STATS.iter().map(|(_, get)| get(&guard.core.sums)).collect())
    }

    /// ``[((kind, beta), Σ n·F_e)]`` for the tracked element-averaged F-scores. O(tracked).
    fn f_items(slf: &Bound<'_, Self>) -> PyResult<Vec<((String, f64), i128)>> {
        let mut guard = borrow_mut(slf, "f_sums")?;
        let this = &mut *guard;
        this.core.settle();
        Ok(this.fkeys.iter().cloned().zip(this.core.f_sums().iter().copied()).collect())
    }

    /// Start tracking ``kind`` with ``beta**2 = num/den`` under key ``(kind, beta)``. O(cells).
    fn _track(slf: &Bound<'_, Self>, kind: &str, beta: f64, num: BigUint, den: BigUint) -> PyResult<bool> {
        let mut guard = borrow_mut(slf, "track_f")?;
        let this = &mut *guard;
        if this.fkeys.iter().any(|(k, b)| k == kind && *b == beta) {
            return Ok(false);
        }
        let k = match kind {
            "elm" => Kind::Elm,
            "bcubed" => Kind::Bcubed,
            _ => return Err(PyValueError::new_err(format!("kind must be \"elm\" or \"bcubed\", got {kind:?}"))),
        };
        this.core.track(FSpec::new(k, num, den));
        this.fkeys.push((kind.to_string(), beta));
        Ok(true)
    }

    /// Move predicted cluster ``old`` into ``new``. O(cells of ``old``) updates.
    fn relabel_pred(slf: &Bound<'_, Self>, old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let mut guard = borrow_mut(slf, "relabel_pred")?;
        let this = &mut *guard;
        this.relabel(py, 1, old, new)
    }

    /// Move true cluster ``old`` into ``new``. O(cells of ``old``) updates.
    fn relabel_true(slf: &Bound<'_, Self>, old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let mut guard = borrow_mut(slf, "relabel_true")?;
        let this = &mut *guard;
        this.relabel(py, 0, old, new)
    }

    /// Add checked ``(true, pred, count)`` triples (labels valid, counts >= 1).
    fn _add_triples(slf: &Bound<'_, Self>, triples: &Bound<'_, PyList>) -> PyResult<()> {
        let py = slf.py();
        let mut guard = borrow_mut(slf, "from_dict")?;
        let this = &mut *guard;
        let mut held = Vec::with_capacity(triples.len());
        for item in triples.iter() {
            let (t, p, c): (Bound<'_, PyAny>, Bound<'_, PyAny>, u64) = item.extract()?;
            held.push((t, p, c));
        }
        let mut keys = Vec::with_capacity(held.len());
        for (t, p, c) in held.iter() {
            keys.push((key_of(t)?, key_of(p)?, *c));
        }
        this.add_keys(py, keys, 0)
    }

    /// Add elements given as contiguous int64 numpy arrays of true and predicted labels (and of
    /// checked weights), read in place: the cells are counted natively (a radix sort of one
    /// combined key, in cache, then run lengths), each distinct label is interned once, and the
    /// cells are added. ``False``, with nothing changed, when the labels' ranges are too wide for
    /// one 64-bit key (the caller then counts another way).
    #[pyo3(signature = (t, p, w = None))]
    fn _add_int_arrays(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>, p: &Bound<'_, PyAny>, w: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let py = slf.py();
        let mut guard = borrow_mut(slf, "update_many")?;
        let this = &mut *guard;
        let (t, p) = (int64_view(t)?, int64_view(p)?);
        let w = w.map(int64_view).transpose()?;
        if t.len() != p.len() || w.is_some_and(|w| w.len() != t.len()) {
            return Err(PyValueError::new_err("y_true, y_pred and w must have the same length"));
        }
        if t.is_empty() {
            return Ok(true);
        }
        let total: u128 = match w {
            Some(w) => w.iter().map(|&x| x as u128).sum(),
            None => t.len() as u128,
        };
        this.check_total(py, total)?;
        let counted = match crate::core::count_pairs(t, p, w) {
            Some(c) => c,
            None => return Ok(false),
        };
        // no Python code has run since the arrays were read: from here on only `counted`.
        // A Ctrl-C during the count (the long part) is seen here, before anything changed.
        py.check_signals()?;
        let tvals = true_labels(&counted);
        let (pvals, pindex) = pred_labels(&counted);
        let (tids, t_new) = this.names[0].intern_ints(py, &tvals)?;
        let pids = match this.names[1].intern_ints(py, &pvals).and_then(|(ids, p_new)| {
            // ... and one during the interning, before the cells are added (labels forgotten)
            match py.check_signals() {
                Ok(()) => Ok(ids),
                Err(e) => {
                    this.names[1].forget(py, &p_new);
                    Err(e)
                }
            }
        }) {
            Ok(ids) => ids,
            Err(e) => {
                this.names[0].forget(py, &t_new);
                return Err(e);
            }
        };
        // the cells' ids, written over their keys (the same 16 bytes a cell: no new allocation);
        // labels interned afresh have the ids of their ranks, which need no lookup
        let fresh = is_identity(&tids) && is_identity(&pids);
        let (p_bits, pmask) = (counted.p_bits, (1u64 << counted.p_bits) - 1);
        let (mut row, mut last) = (usize::MAX, u64::MAX);
        let ids: Vec<(u32, u32, u64)> = counted
            .cells
            .into_iter()
            .enumerate()
            .map(|(i, (k, c))| {
                if k >> p_bits != last {
                    row = row.wrapping_add(1);
                    last = k >> p_bits;
                }
                let pi = match &pindex {
                    PredIndex::Slot(slot) => slot[(k & pmask) as usize],
                    PredIndex::Cell(idx) => idx[i],
                };
                if fresh {
                    (row as u32, pi, c)
                } else {
                    (tids[row], pids[pi as usize], c)
                }
            })
            .collect();
        this.add_ids(ids);
        Ok(true)
    }

    /// Add cells given by codes into lists of distinct labels (int64 buffers of codes, counts).
    #[pyo3(signature = (tu, pu, t, p, c, skipped = 0))]
    fn _add_coded_cells(slf: &Bound<'_, Self>, tu: &Bound<'_, PyList>, pu: &Bound<'_, PyList>, t: &Bound<'_, PyBytes>, p: &Bound<'_, PyBytes>, c: &Bound<'_, PyBytes>, skipped: u128) -> PyResult<()> {
        let py = slf.py();
        let mut guard = borrow_mut(slf, "update_many")?;
        let this = &mut *guard;
        let tl: Vec<Bound<'_, PyAny>> = tu.iter().collect();
        let pl: Vec<Bound<'_, PyAny>> = pu.iter().collect();
        let mut tk = Vec::with_capacity(tl.len());
        for x in &tl {
            tk.push(key_of(x)?);
        }
        let mut pk = Vec::with_capacity(pl.len());
        for x in &pl {
            pk.push(key_of(x)?);
        }
        let (t, p, c) = (bytes_i64(t), bytes_i64(p), bytes_i64(c));
        let keys = t
            .iter()
            .zip(p.iter())
            .zip(c.iter())
            .map(|((&t, &p), &c)| (tk[t as usize], pk[p as usize], c as u64))
            .collect();
        this.add_keys(py, keys, skipped)
    }

    /// Add the cells of ``other`` (a different table) in bulk. O(cells of both). Checked first
    /// (totals, the skipped count), then every label interned (a label's failing ``==`` or a
    /// signal forgets them again), and only then the tracked F-scores, the skipped count and
    /// the cells change: a refused merge changes nothing.
    fn _merge_from(slf: &Bound<'_, Self>, other: &Bound<'_, Table>) -> PyResult<()> {
        let py = slf.py();
        let other = borrow(other, "merge")?;
        let mut guard = borrow_mut(slf, "merge")?;
        let this = &mut *guard;
        this.check_total(py, other.core.sums.n as u128)?;
        this.check_skipped(py, other.skipped)?;
        let items = other.core.items();
        // the other table's labels, with their interned hashes (no __hash__ called again)
        let held = |side: usize, id: u32| match other.names[side].labels[id as usize].as_ref() {
            Some(Label::Obj(o, h)) => Ok((Some(o.bind(py).clone()), *h, 0)),
            Some(Label::Int(v)) => Ok((None, int_hash(*v) as u32, *v)),
            None => Err(PyAssertionError::new_err("a cell of the other table without its label")),
        };
        let mut holds = Vec::with_capacity(items.len());
        for &(t, p, c) in items.iter() {
            holds.push((held(0, t)?, held(1, p)?, c));
        }
        let keys: Vec<_> = holds.iter().map(|(t, p, c)| (held_key(t), held_key(p), *c)).collect();
        // a merge always rebuilds, as the reference's does
        let ids = this.intern_keys(py, keys)?;
        for ((kind, beta), spec) in other.fkeys.iter().zip(other.core.fspecs.iter()) {
            if !this.fkeys.iter().any(|(k, b)| k == kind && b == beta) {
                this.core.track(spec.clone());
                this.fkeys.push((kind.clone(), *beta));
            }
        }
        this.skipped += other.skipped;
        this.core.add_cells(&ids);
        this.version += 1;
        Ok(())
    }

    /// Make this (empty) table a copy of ``other``. O(cells).
    fn _copy_from(slf: &Bound<'_, Self>, other: &Bound<'_, Table>) -> PyResult<()> {
        let py = slf.py();
        let other = borrow(other, "copy")?;
        let mut guard = borrow_mut(slf, "copy")?;
        let this = &mut *guard;
        this.core = other.core.clone();
        this.names = [other.names[0].clone_ref(py), other.names[1].clone_ref(py)];
        this.skipped = other.skipped;
        this.fkeys = other.fkeys.clone();
        this.version += 1;
        Ok(())
    }

    /// Assert the native invariants (cells mirrored, records, classes, groups, sums). O(cells).
    fn _check_native(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let guard = borrow(slf, "_check")?;
        let this = &*guard;
        this.core.check().map_err(PyAssertionError::new_err)?;
        for side in 0..2 {
            for (x, cl) in this.core.sides[side].iter().enumerate() {
                let live = this.names[side].labels.get(x).is_some_and(|l| l.is_some());
                if live != (cl.size > 0) {
                    return Err(PyAssertionError::new_err(format!("side {side} id {x}: label and cluster disagree")));
                }
                if live {
                    let mut hold = None;
                    let (k, h) = this.names[side].key_at(py, x as u32, &mut hold);
                    if this.names[side].find(py, k, h)? != Some(x as u32) {
                        return Err(PyAssertionError::new_err(format!("side {side} id {x}: label not found")));
                    }
                }
            }
            if this.names[side].len() as i128 != this.core.sums.k[side] {
                return Err(PyAssertionError::new_err("interned labels and clusters disagree"));
            }
        }
        let _ = PyString::new(py, "");
        Ok(())
    }
}

// -- reading: the metrics' values from the running sums (src/values.rs) ------------------------

impl Table {
    /// `f` over a reading of the sums, the F sums settled first.
    fn read<R>(&mut self, f: impl FnOnce(&mut crate::values::Reader<'_>) -> R) -> R {
        self.core.settle();
        let core = &self.core;
        let fkeys = &self.fkeys;
        let fsum = move |kind: Kind, beta: f64| {
            (0..fkeys.len()).find(|&i| fkeys[i].1 == beta && core.fspecs[i].kind == kind).map(|i| core.f_sums()[i])
        };
        f(&mut crate::values::Reader::new(&core.sums, &fsum))
    }
}

/// One running sum of the table as a read-only attribute (``Table.n``, ``Table.sum_row_sq``,
/// ...): the module installs one per entry of ``crate::core::STATS``, the one list of the sums.
#[pyclass(frozen, module = "streameval._native")]
struct Stat {
    name: &'static str,
    get: fn(&crate::core::Sums) -> i128,
}

#[pymethods]
impl Stat {
    fn __get__(slf: &Bound<'_, Self>, obj: Option<&Bound<'_, PyAny>>, _owner: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        let py = slf.py();
        let this = slf.get();
        match obj {
            None => Ok(slf.clone().into_any().unbind()),
            Some(obj) => {
                let table = obj.downcast::<Table>()?;
                let guard = borrow(table, this.name)?;
                int(py, (this.get)(&guard.core.sums))
            }
        }
    }

    fn __set__(&self, _obj: &Bound<'_, PyAny>, _value: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!("{}: a running sum is read-only", self.name)))
    }

    fn __delete__(&self, _obj: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!("{}: a running sum is read-only", self.name)))
    }

    fn __repr__(&self) -> String {
        format!("<running sum {}>", self.name)
    }
}

/// A native formula of ``src/values.rs``, looked up by the name its Python metric declares, with
/// its float parameter (``beta``, or unused). ``KeyError`` for a name no native formula has.
#[pyclass(frozen, module = "streameval._native")]
pub struct Formula {
    name: &'static str,
    formula: crate::values::Formula,
    param: f64,
}

#[pymethods]
impl Formula {
    #[new]
    #[pyo3(signature = (name, param = 0.0))]
    fn new(name: &str, param: f64) -> PyResult<Self> {
        match crate::values::FORMULAS.iter().find(|(n, _)| *n == name) {
            Some(&(name, formula)) => Ok(Formula { name, formula, param }),
            None => Err(pyo3::exceptions::PyKeyError::new_err(format!("no native formula named {name:?}"))),
        }
    }

    /// The value of this formula over ``table`` now, computed with the Python formula's exact
    /// operations; ``None`` when it is left to the Python formula (which then gives the same
    /// value or raises), or when ``table`` is not a native table. O(1).
    fn read(slf: &Bound<'_, Self>, table: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
        let f = slf.get();
        let Ok(table) = table.downcast::<Table>() else {
            return Ok(None);
        };
        let mut guard = borrow_mut(table, "get")?;
        Ok(guard.read(|r| (f.formula)(r, f.param)))
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.name
    }

    #[getter]
    fn param(&self) -> f64 {
        self.param
    }

    fn __repr__(&self) -> String {
        format!("Formula({:?}, {:?})", self.name, self.param)
    }

    /// Pickled by name: looked up again when unpickled.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (&'static str, f64))> {
        let f = slf.get();
        Ok((slf.get_type().into_any(), (f.name, f.param)))
    }
}

pyo3::create_exception!(
    _native,
    FormulaDeclined,
    pyo3::exceptions::PyException,
    "A native formula of a ValuePlan left its value to Python (its Python twin would raise, or \
     the sums exceed the native widths): read the metrics through their Python formulas."
);

/// What an Evaluator reads natively: its metrics' names, each with its native formula or
/// ``None`` (a metric read by Python), fixed once, and the values of its last reading.
#[pyclass(frozen, module = "streameval._native")]
pub struct ValuePlan {
    names: Vec<Py<PyAny>>,
    formulas: Vec<Option<(crate::values::Formula, f64)>>,
    template: Py<PyDict>,
    /// the values of the last complete reading (NaN where Python reads), of which table (its
    /// address) and version
    last: Mutex<LastReading>,
    /// the plan's own dict of the last values and its references to their floats (`None` where
    /// Python reads): a reading returns a copy of it ([`ValuePlan::read_dict`])
    held: Mutex<Option<Held>>,
}

/// The values of a plan's last complete reading, of which table (its address) and version.
type LastReading = (Option<(usize, u64)>, Vec<f64>);

/// A [`ValuePlan`]'s dict of its last values, never handed out (a reading returns a copy), and
/// the plan's own reference to each of its floats.
struct Held {
    dict: Py<PyDict>,
    floats: Vec<Option<Py<PyAny>>>,
}

/// The offset of a float object's value in its struct (`PyFloatObject.ob_fval`), when this
/// interpreter is CPython and a probe float read and written there is the float Python sees;
/// `None` otherwise (then every reading makes new floats). Checked once.
fn float_value_offset(py: Python<'_>) -> Option<usize> {
    static FOUND: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        let cpython = py
            .import("sys")
            .and_then(|sys| sys.getattr("implementation")?.getattr("name")?.extract::<String>())
            .is_ok_and(|name| name == "cpython");
        if !cpython {
            return None;
        }
        let offset = std::mem::size_of::<pyo3::ffi::PyObject>();
        let probe = PyFloat::new(py, 1.234_567_890_123e-300);
        // SAFETY: `probe` is a float object we alone hold; its struct is a `PyObject` header
        // followed by its double (`PyFloatObject` in CPython's headers), checked here before use
        let ok = unsafe {
            let at = (probe.as_ptr() as *mut u8).add(offset) as *mut f64;
            let seen = at.read_unaligned().to_bits() == 1.234_567_890_123e-300f64.to_bits();
            if seen {
                at.write_unaligned(-2.5);
            }
            seen && pyo3::ffi::PyFloat_AsDouble(probe.as_ptr()) == -2.5
        };
        ok.then_some(offset)
    })
}

#[pymethods]
impl ValuePlan {
    #[new]
    fn new(py: Python<'_>, names: Vec<Bound<'_, PyAny>>, formulas: Vec<Option<PyRef<'_, Formula>>>) -> PyResult<Self> {
        if names.len() != formulas.len() {
            return Err(PyValueError::new_err("names and formulas must have the same length"));
        }
        let template = PyDict::new(py);
        for name in names.iter() {
            template.set_item(name, py.None())?;
        }
        if template.len() != names.len() {
            return Err(PyValueError::new_err("the names must be distinct"));
        }
        Ok(ValuePlan {
            names: names.into_iter().map(|n| n.unbind()).collect(),
            formulas: formulas.iter().map(|f| f.as_ref().map(|f| (f.formula, f.param))).collect(),
            template: template.unbind(),
            last: Mutex::new((None, Vec::new())),
            held: Mutex::new(None),
        })
    }

    /// ``{name: value}`` over ``table`` now (a new dict each call): every native formula's
    /// value, ``None`` for the metrics without one (Python reads them). ``FormulaDeclined`` when
    /// a formula leaves its value to Python. The values are kept while the table's ``version``
    /// is unchanged. Nothing here calls back into Python. O(len).
    fn read<'py>(slf: &Bound<'py, Self>, table: &Bound<'py, Table>) -> PyResult<Bound<'py, PyDict>> {
        slf.get().read_dict(table)
    }

    /// This plan's reading of ``table`` as one native callable: calling it gives
    /// :meth:`read`'s dict, or ``fallback()``'s when a formula declines (``FormulaDeclined``).
    /// The Evaluator's ``get`` when every metric has a native formula: no Python frame per
    /// reading. O(len) a call.
    fn bind(slf: &Bound<'_, Self>, table: &Bound<'_, Table>, fallback: &Bound<'_, PyAny>) -> Reading {
        Reading { plan: slf.clone().unbind(), table: table.clone().unbind(), fallback: fallback.clone().unbind() }
    }

    fn __len__(&self) -> usize {
        self.formulas.len()
    }
}

impl ValuePlan {
    /// ``{name: value}`` over ``table`` now (a new dict each call): every native formula's
    /// value, ``None`` for the metrics without one (Python reads them). ``FormulaDeclined`` when
    /// a formula leaves its value to Python. The values are kept while the table's ``version``
    /// is unchanged. Nothing here calls back into Python. O(len).
    fn read_dict<'py>(&self, table: &Bound<'py, Table>) -> PyResult<Bound<'py, PyDict>> {
        let py = table.py();
        let p = self;
        let mut last = p.last.lock().map_err(|_| PyValueError::new_err("a reading panicked"))?;
        let (key, values) = &mut *last;
        {
            let mut guard = borrow_mut(table, "get")?;
            let now = Some((table.as_ptr() as usize, guard.version));
            if *key != now {
                *key = None; // nothing kept until the values are complete
                values.clear();
                let complete = guard.read(|r| {
                    for f in p.formulas.iter() {
                        match f {
                            Some((f, param)) => match f(r, *param) {
                                Some(v) => values.push(v),
                                None => return false,
                            },
                            None => values.push(f64::NAN), // read by Python: left None
                        }
                    }
                    true
                });
                if !complete {
                    return Err(FormulaDeclined::new_err("a native formula left its value to Python"));
                }
                *key = now;
            }
        }
        let Some(offset) = float_value_offset(py) else {
            // new floats into a copy of the template
            let d = p.template.bind(py).copy()?;
            for ((name, &v), f) in p.names.iter().zip(values.iter()).zip(p.formulas.iter()) {
                if f.is_some() {
                    d.set_item(name, PyFloat::new(py, v))?;
                }
            }
            return Ok(d);
        };
        // The plan's own dict holds the values; a reading returns a copy of it (a copy of the
        // keys and 21 references: no key looked up, no float made, where filling a new dict
        // costs a lookup and a float a value). A float the plan's dict and the plan alone hold
        // (its reference count is 2: no returned dict, no caller holds it) is set to its new
        // value in place: no one else can see it change. One still held elsewhere (a dict
        // returned earlier and kept, or a value taken from it) is left as it is and replaced
        // in the plan's dict by a new float.
        let mut held = p.held.lock().map_err(|_| PyValueError::new_err("a reading panicked"))?;
        let held = match &mut *held {
            Some(h) => h,
            none => none.insert(Held { dict: p.template.bind(py).copy()?.unbind(), floats: p.names.iter().map(|_| None).collect() }),
        };
        let dict = held.dict.bind(py);
        for (((name, &v), f), mine) in p.names.iter().zip(values.iter()).zip(p.formulas.iter()).zip(held.floats.iter_mut()) {
            if f.is_none() {
                continue;
            }
            if let Some(obj) = mine {
                // SAFETY: `obj` is a live float (made here by `PyFloat::new`); with a reference
                // count of 2 its only holders are the plan's dict and `mine`, both private, so
                // writing its value (at the offset checked by `float_value_offset`) is seen by
                // no one until the copy below hands it out with its new value
                unsafe {
                    let ptr = obj.as_ptr();
                    if pyo3::ffi::Py_REFCNT(ptr) == 2 {
                        let at = (ptr as *mut u8).add(offset) as *mut f64;
                        if at.read_unaligned().to_bits() != v.to_bits() {
                            at.write_unaligned(v);
                        }
                        continue;
                    }
                }
                if obj.bind(py).extract::<f64>()?.to_bits() == v.to_bits() {
                    continue; // held elsewhere, and the value it already has
                }
            }
            let new = PyFloat::new(py, v);
            dict.set_item(name, &new)?;
            *mine = Some(new.into_any().unbind());
        }
        dict.copy()
    }

}

/// A [`ValuePlan`]'s reading of one table, callable with no arguments (``ValuePlan.bind``).
#[pyclass(frozen, module = "streameval._native")]
pub struct Reading {
    plan: Py<ValuePlan>,
    table: Py<Table>,
    fallback: Py<PyAny>,
}

#[pymethods]
impl Reading {
    /// The plan's dict over the table, or ``fallback()`` when a formula declines. O(len).
    fn __call__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.plan.get().read_dict(self.table.bind(py)) {
            Ok(d) => Ok(d.into_any()),
            Err(e) if e.is_instance_of::<FormulaDeclined>(py) => self.fallback.bind(py).call0(),
            Err(e) => Err(e),
        }
    }

    fn __repr__(&self) -> String {
        format!("<native reading of {} metrics>", self.plan.get().formulas.len())
    }
}

/// Python's ``a / b`` for ints below ``2**127`` in magnitude, as the native formulas compute it
/// (for the tests); ``None`` when ``b == 0``.
#[pyfunction]
fn _true_divide(a: i128, b: i128) -> Option<f64> {
    crate::values::div(a, b)
}

/// The exact sums of the tables of each whole block of `block` rows (int64 code arrays `t`, `p`,
/// weights `w` or ``None``): ``({name: [int per block]}, [[F sum per block] per spec])`` for the
/// sums `names` (of ``block_sums::NAMES``) and the element-averaged F `specs` (``(elm, num, den)``),
/// or with `means` the F sums' means over each block's elements (``fixed_mean``: Python's
/// ``sum / (n * 2**64)``) as floats. The twin of ``streameval.detect.block_stats`` (numpy), equal
/// to it to the bit; the caller checks its limits first (codes 0 to 2**22, weights at least 1
/// with each block's total under 2**28, ``num + den <= 8``). O(rows).
#[pyfunction]
#[pyo3(signature = (t, p, w, block, names, specs, means=false))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn block_sums<'py>(
    py: Python<'py>,
    t: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    w: Option<&Bound<'py, PyAny>>,
    block: usize,
    names: Vec<String>,
    specs: Vec<(bool, u64, u64)>,
    means: bool,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyList>)> {
    use crate::block_sums::{Spec, NAMES};

    let (tv, pv) = (int64_view(t)?, int64_view(p)?);
    let wv = match w {
        Some(w) => int64_view(w)?,
        None => &[],
    };
    if block == 0 || tv.len() != pv.len() || !tv.len().is_multiple_of(block)
        || !(wv.is_empty() || wv.len() == tv.len())
    {
        return Err(PyValueError::new_err("block_sums: t, p (and w) of one length, whole blocks"));
    }
    // every code in 0..CODES iff their bitwise or is (CODES is a power of two): one pass each
    let codes = crate::block_sums::bits_of(tv) | crate::block_sums::bits_of(pv);
    if !(0..crate::block_sums::CODES).contains(&codes)
        || wv.iter().any(|&x| x < 1)
        || specs.iter().any(|&(_, num, den)| num == 0 || den == 0 || num + den > 8)
    {
        return Err(PyValueError::new_err("block_sums: codes >= 0 and < 2**22, weights >= 1, 0 < num + den <= 8"));
    }
    if wv.chunks(block).any(|c| c.iter().map(|&x| x as u64).sum::<u64>() >= 1 << 28) {
        return Err(PyValueError::new_err("block_sums: a block's total weight reaches 2**28"));
    }
    let mut want = [false; 16];
    want[0] = means; // the means divide by each block's n
    for name in &names {
        match NAMES.iter().position(|&x| x == name) {
            Some(k) => want[k] = true,
            None => return Err(PyValueError::new_err(format!("block_sums: no sum {name:?}"))),
        }
    }
    let specs: Vec<Spec> = specs.iter().map(|&(elm, num, den)| Spec { elm, num, den }).collect();
    let (sums, fsums) = crate::block_sums::block_sums(tv, pv, wv, block, &want, &specs);
    let out = PyDict::new(py);
    for (k, column) in sums.iter().enumerate() {
        if want[k] {
            // counts fit in an int64; the fixed-point sums are 128-bit
            let list = if column.iter().all(|&v| i64::try_from(v).is_ok()) {
                PyList::new(py, column.iter().map(|&v| v as i64))?
            } else {
                PyList::new(py, column)?
            };
            out.set_item(NAMES[k], list)?;
        }
    }
    let f = PyList::empty(py);
    for column in &fsums {
        if means {
            let n = &sums[0];
            let values: Vec<f64> = column
                .iter()
                .zip(n)
                .map(|(&s, &n)| crate::values::div_fixed(s, n).unwrap_or(1.0))
                .collect();
            f.append(PyList::new(py, values)?)?;
        } else {
            f.append(PyList::new(py, column)?)?;
        }
    }
    Ok((out, f))
}

/// From byte `pos` of the bytes `chunk` (the start of a line), the `rows`-th row (a line not
/// blank): ``(offset after it, lines from pos up to and including it)``; ``None`` when fewer
/// rows follow. The twin of ``streameval.blocks.row_positions``. O(bytes scanned).
#[pyfunction]
fn row_end(chunk: &Bound<'_, PyBytes>, pos: usize, rows: usize) -> PyResult<Option<(usize, usize)>> {
    if rows == 0 || pos > chunk.as_bytes().len() {
        return Err(PyValueError::new_err("row_end: rows >= 1, pos within the bytes"));
    }
    Ok(crate::lines::row_end(chunk.as_bytes(), pos, rows))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Table>()?;
    m.add("MAX_TOTAL", MAX_TOTAL)?;
    m.add_class::<ValuePlan>()?;
    m.add_class::<Reading>()?;
    crate::summaries_py::register(m)?;
    m.add_function(wrap_pyfunction!(_true_divide, m)?)?;
    m.add_function(wrap_pyfunction!(block_sums, m)?)?;
    m.add_function(wrap_pyfunction!(row_end, m)?)?;
    m.add_class::<Formula>()?;
    m.add("FormulaDeclined", m.py().get_type::<FormulaDeclined>())?;
    m.add("FORMULAS", crate::values::FORMULAS.iter().map(|&(name, _)| name).collect::<Vec<_>>())?;
    m.add("STAT_NAMES", STATS.iter().map(|&(name, _)| name).collect::<Vec<_>>())?;
    let table = m.getattr("Table")?;
    for &(name, get) in STATS {
        table.setattr(name, Bound::new(m.py(), Stat { name, get })?)?;
    }
    Ok(())
}
