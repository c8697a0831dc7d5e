//! The contingency table's state and its per-element work, in pure Rust (no Python).
//!
//! Clusters are numbered on each side (0: true clusters, the rows; 1: predicted clusters, the
//! columns) by the binding, which interns the Python labels. Cells live in one hash map keyed by
//! `(row, col)`; each cluster lists the clusters it shares a cell with.
//!
//! The element-averaged F-scores couple a cell with both of its margins, so a change of a row's
//! size changes the term of every cell in the row. A cluster with many cells ("big", more than
//! [`BIG_AT`] cells) keeps its cells whose other side is small grouped by `(count, size of the
//! other cluster)`: cells in one group have equal terms and change together, so its share of an
//! update costs O(groups) instead of O(cells). The sizes of big clusters are never copied into
//! anyone's groups (cells between two big clusters are listed apart and read directly), so a
//! change of a big cluster's size costs nothing to propagate; a change of a small cluster's size
//! moves its cells in the groups of its big partners, O(cells of a small cluster) = O(1).
//! One predicted cluster holding every document (the degenerate baselines) then costs
//! O(distinct (document length, count) pairs) per element, flat in the stream's length.

use hashbrown::{HashMap, HashSet};
use smallvec::SmallVec;

use crate::terms::{bcubed_term, elm_term, xlogx, FSpec};

/// A small cluster with more cells than this becomes big.
pub const BIG_AT: usize = 32;
/// A big cluster with fewer cells than this becomes small again (hysteresis).
pub const SMALL_AT: usize = 8;
/// The per-side terms, in this order: size², x·log x of the size, BCubed term, ELM term,
/// largest cell, is-singleton.
pub const N_SIDE_TERMS: usize = 6;

/// The per-side terms of one cluster (see `streameval.stats.side_terms`, their Python twin).
#[inline]
pub fn side_terms(size: u64, sq: u128, max: u64) -> [i128; N_SIDE_TERMS] {
    [
        (size as i128) * (size as i128),
        xlogx(size),
        bcubed_term(sq, size),
        elm_term(sq, size),
        max as i128,
        (size == 1) as i128,
    ]
}

#[derive(Clone, Default, Debug)]
pub struct Big {
    /// the other side's clusters this one shares a cell with
    pub set: HashSet<u32>,
    /// cell count -> number of cells with that count (the largest key is `max`)
    pub hist: HashMap<u64, u32>,
    /// (count, other cluster's size) -> number of cells, for cells whose other side is small
    pub groups: HashMap<(u64, u64), u64>,
    /// cells whose other side is big too
    pub bigbig: HashSet<u32>,
}

#[derive(Clone, Default, Debug)]
pub struct Cluster {
    pub size: u64,
    pub sq: u128,
    pub max: u64,
    /// the other side's clusters this one shares a cell with (while small)
    pub cells: SmallVec<[u32; 2]>,
    pub big: Option<Box<Big>>,
}

impl Cluster {
    pub fn ncells(&self) -> usize {
        match &self.big {
            Some(b) => b.set.len(),
            None => self.cells.len(),
        }
    }

    pub fn others(&self) -> impl Iterator<Item = u32> + '_ {
        self.cells
            .iter()
            .copied()
            .chain(self.big.iter().flat_map(|b| b.set.iter().copied()))
    }
}

/// The running sums (`streameval.stats.ContingencyStats` without the F sums).
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Sums {
    pub n: i128,
    pub cells: i128,
    pub cell_sq: i128,
    pub cell_xlogx: i128,
    pub both_singletons: i128,
    /// non-empty clusters per side
    pub k: [i128; 2],
    /// per side, the sums of [`side_terms`]
    pub side: [[i128; N_SIDE_TERMS]; 2],
}

#[derive(Clone, Default, Debug)]
pub struct Core {
    pub sides: [Vec<Cluster>; 2],
    pub cells: HashMap<u64, u64>,
    pub sums: Sums,
    pub fspecs: Vec<FSpec>,
    pub fsums: Vec<i128>,
}

#[inline]
pub fn key(t: u32, p: u32) -> u64 {
    ((t as u64) << 32) | p as u64
}

/// The key of the cell between cluster `x` of `side` and cluster `y` of the other side.
#[inline]
fn skey(side: usize, x: u32, y: u32) -> u64 {
    if side == 0 {
        key(x, y)
    } else {
        key(y, x)
    }
}

#[inline]
fn dec<K: std::hash::Hash + Eq>(m: &mut HashMap<K, u64>, k: K, by: u64) {
    let v = m.get_mut(&k).expect("group present");
    *v -= by;
    if *v == 0 {
        m.remove(&k);
    }
}

#[inline]
fn inc<K: std::hash::Hash + Eq>(m: &mut HashMap<K, u64>, k: K, by: u64) {
    *m.entry(k).or_insert(0) += by;
}

impl Core {
    pub fn new() -> Core {
        Core::default()
    }

    /// Make room for cluster `id` on `side`.
    pub fn ensure(&mut self, side: usize, id: u32) {
        let v = &mut self.sides[side];
        if v.len() <= id as usize {
            v.resize_with(id as usize + 1, Cluster::default);
        }
    }

    pub fn size(&self, side: usize, id: u32) -> u64 {
        self.sides[side].get(id as usize).map_or(0, |c| c.size)
    }

    pub fn cell(&self, t: u32, p: u32) -> u64 {
        self.cells.get(&key(t, p)).copied().unwrap_or(0)
    }

    fn tracking(&self) -> bool {
        !self.fspecs.is_empty()
    }

    /// `n * F_e` of a cell seen from `side`: `x` is this side's size, `y` the other side's.
    #[inline]
    fn oriented(spec: &FSpec, side: usize, c: u64, x: u64, y: u64) -> i128 {
        if side == 0 {
            spec.term(c, x, y)
        } else {
            spec.term(c, y, x)
        }
    }

    /// Add `d` (negative on revert; the caller checked that the cell stays >= 0 and the total
    /// below the bound) to cell `(t, p)`. O(1), plus for each tracked F-score O(cells) of a small
    /// cluster or O(groups) of a big one on each side.
    pub fn change(&mut self, t: u32, p: u32, d: i64) {
        self.ensure(0, t);
        self.ensure(1, p);
        let k = key(t, p);
        let n0 = self.cells.get(&k).copied().unwrap_or(0);
        let n1 = (n0 as i64 + d) as u64;
        let a0 = self.sides[0][t as usize].size;
        let b0 = self.sides[1][p as usize].size;
        let a1 = (a0 as i64 + d) as u64;
        let b1 = (b0 as i64 + d) as u64;
        let track = self.tracking();
        if track {
            self.f_delta(t, p, n0, n1, [a0, b0], [a1, b1]);
        }
        let both_before = self.both_near(t, p);
        if track {
            self.regroup(t, p, n0, n1, [a0, b0], [a1, b1]);
        }
        if n1 == 0 {
            self.cells.remove(&k);
        } else {
            self.cells.insert(k, n1);
        }
        let s = &mut self.sums;
        s.n += d as i128;
        s.cell_sq += (n1 as i128) * (n1 as i128) - (n0 as i128) * (n0 as i128);
        s.cell_xlogx += xlogx(n1) - xlogx(n0);
        s.cells += (n1 > 0) as i128 - (n0 > 0) as i128;
        s.k[0] += (a1 > 0) as i128 - (a0 > 0) as i128;
        s.k[1] += (b1 > 0) as i128 - (b0 > 0) as i128;
        self.move_side(0, t, p, n0, n1);
        self.move_side(1, p, t, n0, n1);
        self.sums.both_singletons += self.both_near(t, p) - both_before;
        self.reclass(0, t);
        self.reclass(1, p);
    }

    /// Change cell (x, y) of cluster `x` on `side` from `n0` to `n1`: its list, size, squares,
    /// largest cell and the side's sums.
    fn move_side(&mut self, side: usize, x: u32, y: u32, n0: u64, n1: u64) {
        let cells = &self.cells;
        let cl = &mut self.sides[side][x as usize];
        let (s0, q0, m0) = (cl.size, cl.sq, cl.max);
        let before = side_terms(s0, q0, m0);
        let s1 = s0 + n1 - n0; // wraps correctly for n1 < n0 as s0 >= n0
        let q1 = q0 + (n1 as u128) * (n1 as u128) - (n0 as u128) * (n0 as u128);
        let m1 = match &mut cl.big {
            Some(b) => {
                if n0 == 0 {
                    b.set.insert(y);
                } else if n1 == 0 {
                    b.set.remove(&y);
                }
                let hist = &mut b.hist;
                if n0 > 0 {
                    let v = hist.get_mut(&n0).expect("hist");
                    *v -= 1;
                    if *v == 0 {
                        hist.remove(&n0);
                    }
                }
                if n1 > 0 {
                    *hist.entry(n1).or_insert(0) += 1;
                }
                if n1 > m0 {
                    n1
                } else if n0 == m0 && !hist.contains_key(&n0) {
                    if hist.is_empty() {
                        0
                    } else if (hist.len() as u64) <= n0 - n1 {
                        *hist.keys().max().unwrap()
                    } else {
                        let mut m = n0 - 1;
                        while !hist.contains_key(&m) {
                            m -= 1;
                        }
                        m
                    }
                } else {
                    m0
                }
            }
            None => {
                if n0 == 0 {
                    cl.cells.push(y);
                } else if n1 == 0 {
                    let i = cl.cells.iter().position(|&z| z == y).expect("cell listed");
                    cl.cells.swap_remove(i);
                }
                if n1 > m0 {
                    n1
                } else if n0 == m0 && n1 < n0 {
                    cl.cells
                        .iter()
                        .map(|&z| cells.get(&skey(side, x, z)).copied().unwrap_or(0))
                        .max()
                        .unwrap_or(0)
                } else {
                    m0
                }
            }
        };
        cl.size = s1;
        cl.sq = q1;
        cl.max = m1;
        if s1 == 0 {
            cl.big = None;
            cl.cells = SmallVec::new();
        }
        let after = side_terms(s1, q1, m1);
        let sums = &mut self.sums.side[side];
        for i in 0..N_SIDE_TERMS {
            sums[i] += after[i] - before[i];
        }
    }

    /// Elements alone in both their clusters, among the cells of row `t` and column `p`.
    fn both_near(&self, t: u32, p: u32) -> i128 {
        let (rows, cols) = (&self.sides[0], &self.sides[1]);
        let mut found = 0;
        let rt = rows.get(t as usize).map_or(0, |c| c.size);
        if rt == 1 {
            let j = rows[t as usize].cells[0];
            found += (cols[j as usize].size == 1) as i128;
        }
        if cols.get(p as usize).map_or(0, |c| c.size) == 1 {
            let i = cols[p as usize].cells[0];
            if i != t || rt != 1 {
                found += (rows[i as usize].size == 1) as i128;
            }
        }
        found
    }

    /// Apply to each tracked F sum the change of adding `n1 - n0` to cell (t, p), whose row and
    /// column sizes go from `s0` to `s1`. Called before anything changes.
    fn f_delta(&mut self, t: u32, p: u32, n0: u64, n1: u64, s0: [u64; 2], s1: [u64; 2]) {
        let mut parts: [SmallVec<[(u64, u64, u64); 32]>; 2] = [SmallVec::new(), SmallVec::new()];
        let ends = [(t, p), (p, t)];
        for side in 0..2 {
            let (x, y) = ends[side];
            let cl = &self.sides[side][x as usize];
            let other = &self.sides[1 - side];
            let out = &mut parts[side];
            match &cl.big {
                None => {
                    for &z in cl.cells.iter() {
                        if z != y {
                            let c = self.cells[&skey(side, x, z)];
                            out.push((c, other[z as usize].size, 1));
                        }
                    }
                }
                Some(b) => {
                    for (&(c, sz), &m) in b.groups.iter() {
                        out.push((c, sz, m));
                    }
                    for &z in b.bigbig.iter() {
                        if z != y {
                            let c = self.cells[&skey(side, x, z)];
                            out.push((c, other[z as usize].size, 1));
                        }
                    }
                }
            }
        }
        // the cell (t, p) itself sits in a big endpoint's groups when its other end is small
        let in_groups = [
            n0 > 0 && self.sides[0][t as usize].big.is_some() && !self.is_big(1, p),
            n0 > 0 && self.sides[1][p as usize].big.is_some() && !self.is_big(0, t),
        ];
        for (i, spec) in self.fspecs.iter().enumerate() {
            let mut delta = spec.term(n1, s1[0], s1[1]) - spec.term(n0, s0[0], s0[1]);
            for side in 0..2 {
                let (x0, x1) = (s0[side], s1[side]);
                for &(c, sz, m) in parts[side].iter() {
                    let diff = spec.delta(side, c, x0, x1, sz);
                    delta += if m == 1 { diff } else { diff * m as i128 };
                }
                if in_groups[side] {
                    let y0 = s0[1 - side];
                    delta -= Self::oriented(spec, side, n0, x1, y0) - Self::oriented(spec, side, n0, x0, y0);
                }
            }
            self.fsums[i] += delta;
        }
    }

    fn is_big(&self, side: usize, x: u32) -> bool {
        self.sides[side].get(x as usize).is_some_and(|c| c.big.is_some())
    }

    /// Keep the groups of big clusters in step with a change of cell (t, p) and of the sizes of
    /// row t and column p. Called before the cell and the clusters change.
    fn regroup(&mut self, t: u32, p: u32, n0: u64, n1: u64, s0: [u64; 2], s1: [u64; 2]) {
        let big = [self.is_big(0, t), self.is_big(1, p)];
        let ends = [(t, p), (p, t)];
        for side in 0..2 {
            let (x, y) = ends[side];
            let cells = &self.cells;
            let [rows, cols] = &mut self.sides;
            let (own, other) = if side == 0 { (rows, cols) } else { (cols, rows) };
            if let Some(b) = own[x as usize].big.as_deref_mut() {
                // the cell itself, in the big endpoint's groups or big-big list
                if big[1 - side] {
                    if n0 == 0 {
                        b.bigbig.insert(y);
                    } else if n1 == 0 {
                        b.bigbig.remove(&y);
                    }
                } else {
                    if n0 > 0 {
                        dec(&mut b.groups, (n0, s0[1 - side]), 1);
                    }
                    if n1 > 0 {
                        inc(&mut b.groups, (n1, s1[1 - side]), 1);
                    }
                }
            } else if s0[side] != s1[side] {
                // a small endpoint changed size: its cells in big partners' groups move
                for &z in own[x as usize].cells.iter() {
                    if z == y {
                        continue;
                    }
                    if let Some(ob) = other[z as usize].big.as_deref_mut() {
                        let c = cells[&skey(side, x, z)];
                        dec(&mut ob.groups, (c, s0[side]), 1);
                        inc(&mut ob.groups, (c, s1[side]), 1);
                    }
                }
            }
        }
    }

    /// Make cluster `x` of `side` big or small when its number of cells crossed a threshold.
    fn reclass(&mut self, side: usize, x: u32) {
        let cl = &self.sides[side][x as usize];
        let nc = cl.ncells();
        if cl.big.is_none() && nc > BIG_AT {
            self.promote(side, x);
        } else if cl.big.is_some() && nc < SMALL_AT {
            self.demote(side, x);
        }
    }

    fn promote(&mut self, side: usize, x: u32) {
        let track = self.tracking();
        let cells = &self.cells;
        let [rows, cols] = &mut self.sides;
        let (own, other) = if side == 0 { (rows, cols) } else { (cols, rows) };
        let cl = &mut own[x as usize];
        let mut b = Big::default();
        let size = cl.size;
        for z in std::mem::take(&mut cl.cells) {
            let c = cells[&skey(side, x, z)];
            b.set.insert(z);
            *b.hist.entry(c).or_insert(0) += 1;
            if track {
                let oz = &mut other[z as usize];
                if let Some(ob) = oz.big.as_deref_mut() {
                    dec(&mut ob.groups, (c, size), 1);
                    ob.bigbig.insert(x);
                    b.bigbig.insert(z);
                } else {
                    inc(&mut b.groups, (c, oz.size), 1);
                }
            }
        }
        cl.big = Some(Box::new(b));
    }

    fn demote(&mut self, side: usize, x: u32) {
        let track = self.tracking();
        let cells = &self.cells;
        let [rows, cols] = &mut self.sides;
        let (own, other) = if side == 0 { (rows, cols) } else { (cols, rows) };
        let cl = &mut own[x as usize];
        let b = cl.big.take().expect("big");
        let size = cl.size;
        for z in b.set {
            cl.cells.push(z);
            if track {
                if let Some(ob) = other[z as usize].big.as_deref_mut() {
                    let c = cells[&skey(side, x, z)];
                    ob.bigbig.remove(&x);
                    inc(&mut ob.groups, (c, size), 1);
                }
            }
        }
    }

    /// Build the groups of every big cluster from scratch (when F tracking starts). O(cells).
    fn build_groups(&mut self) {
        for side in 0..2 {
            for x in 0..self.sides[side].len() {
                if self.sides[side][x].big.is_none() {
                    continue;
                }
                let mut groups = HashMap::new();
                let mut bigbig = HashSet::new();
                for z in self.sides[side][x].others() {
                    let oz = &self.sides[1 - side][z as usize];
                    if oz.big.is_some() {
                        bigbig.insert(z);
                    } else {
                        let c = self.cells[&skey(side, x as u32, z)];
                        inc(&mut groups, (c, oz.size), 1);
                    }
                }
                let b = self.sides[side][x].big.as_deref_mut().unwrap();
                b.groups = groups;
                b.bigbig = bigbig;
            }
        }
    }

    /// Start tracking `spec` (idempotence is the caller's): O(cells) once.
    pub fn track(&mut self, spec: FSpec) {
        let first = self.fspecs.is_empty();
        let mut total = 0i128;
        for (&k, &c) in self.cells.iter() {
            let (t, p) = ((k >> 32) as usize, (k & 0xffff_ffff) as usize);
            total += spec.term(c, self.sides[0][t].size, self.sides[1][p].size);
        }
        self.fspecs.push(spec);
        self.fsums.push(total);
        if first {
            self.build_groups();
        }
    }

    /// Add positive counts to cells in bulk: the cells, lists and cluster records are kept, the
    /// sums are not; [`Core::rebuild`] next. Big clusters must have been flattened first.
    #[inline]
    pub fn add_bulk(&mut self, t: u32, p: u32, c: u64) {
        self.ensure(0, t);
        self.ensure(1, p);
        let e = self.cells.entry(key(t, p)).or_insert(0);
        let n0 = *e;
        let n1 = n0 + c;
        *e = n1;
        let dsq = (n1 as u128) * (n1 as u128) - (n0 as u128) * (n0 as u128);
        for (side, x, y) in [(0, t, p), (1, p, t)] {
            let cl = &mut self.sides[side][x as usize];
            if n0 == 0 {
                cl.cells.push(y);
            }
            cl.size += c;
            cl.sq += dsq;
            cl.max = cl.max.max(n1);
        }
    }

    /// Recompute every class, group and sum from the cells and the cluster records. O(cells).
    pub fn rebuild(&mut self) {
        for side in 0..2 {
            for x in 0..self.sides[side].len() {
                if self.sides[side][x].cells.len() > BIG_AT {
                    self.promote(side, x as u32);
                }
            }
        }
        if self.tracking() {
            self.build_groups();
        }
        let (sums, fsums) = self.compute_sums();
        self.sums = sums;
        self.fsums = fsums;
    }

    /// Turn every big cluster back into a plain list, before a bulk add.
    pub fn flatten(&mut self) {
        for side in 0..2 {
            for cl in self.sides[side].iter_mut() {
                if let Some(b) = cl.big.take() {
                    cl.cells = b.set.into_iter().collect();
                }
            }
        }
    }

    /// Every sum recomputed from the cells and the cluster records. O(cells).
    pub fn compute_sums(&self) -> (Sums, Vec<i128>) {
        let mut s = Sums::default();
        let mut fsums = vec![0i128; self.fspecs.len()];
        let (rows, cols) = (&self.sides[0], &self.sides[1]);
        for (&k, &c) in self.cells.iter() {
            s.n += c as i128;
            s.cell_sq += (c as i128) * (c as i128);
            s.cell_xlogx += xlogx(c);
            if !self.fspecs.is_empty() {
                let (a, b) = (rows[(k >> 32) as usize].size, cols[(k & 0xffff_ffff) as usize].size);
                for (f, spec) in fsums.iter_mut().zip(self.fspecs.iter()) {
                    *f += spec.term(c, a, b);
                }
            }
        }
        s.cells = self.cells.len() as i128;
        for side in 0..2 {
            for cl in self.sides[side].iter() {
                if cl.size == 0 {
                    continue;
                }
                s.k[side] += 1;
                let terms = side_terms(cl.size, cl.sq, cl.max);
                for i in 0..N_SIDE_TERMS {
                    s.side[side][i] += terms[i];
                }
            }
        }
        // an element alone in both its clusters: a row of size 1 whose one column has size 1
        for row in rows.iter() {
            if row.size == 1 {
                let p = row.others().next().expect("a cell");
                s.both_singletons += (cols[p as usize].size == 1) as i128;
            }
        }
        (s, fsums)
    }

    /// Every cell as (row, col, count).
    pub fn items(&self) -> Vec<(u32, u32, u64)> {
        let mut out = Vec::with_capacity(self.cells.len());
        for (t, cl) in self.sides[0].iter().enumerate() {
            for p in cl.others() {
                out.push((t as u32, p, self.cells[&key(t as u32, p)]));
            }
        }
        out
    }

    /// Assert every invariant of the state; the first violation as an error message. O(cells).
    pub fn check(&self) -> Result<(), String> {
        for side in 0..2 {
            for (x, cl) in self.sides[side].iter().enumerate() {
                let x = x as u32;
                let others: Vec<u32> = cl.others().collect();
                let mut size = 0u64;
                let mut sq = 0u128;
                let mut hist: HashMap<u64, u32> = HashMap::new();
                for &z in &others {
                    let c = *self
                        .cells
                        .get(&skey(side, x, z))
                        .ok_or(format!("side {side} cluster {x} lists a missing cell {z}"))?;
                    if c == 0 {
                        return Err(format!("zero cell kept in side {side} cluster {x}"));
                    }
                    if !self.sides[1 - side][z as usize].others().any(|w| w == x) {
                        return Err(format!("side {side} cluster {x}: cell {z} not mirrored"));
                    }
                    size += c;
                    sq += (c as u128) * (c as u128);
                    *hist.entry(c).or_insert(0) += 1;
                }
                let distinct: HashSet<u32> = others.iter().copied().collect();
                if distinct.len() != others.len() {
                    return Err(format!("side {side} cluster {x} lists a cell twice"));
                }
                if size != cl.size || sq != cl.sq {
                    return Err(format!("side {side} cluster {x}: size or squares drifted"));
                }
                if cl.max != hist.keys().copied().max().unwrap_or(0) {
                    return Err(format!("side {side} cluster {x}: max drifted"));
                }
                match &cl.big {
                    Some(b) => {
                        if !cl.cells.is_empty() || b.hist != hist {
                            return Err(format!("side {side} big cluster {x}: list or hist"));
                        }
                        if others.len() < SMALL_AT {
                            return Err(format!("side {side} cluster {x} big with few cells"));
                        }
                        if self.tracking() {
                            let mut groups = HashMap::new();
                            let mut bigbig = HashSet::new();
                            for &z in &others {
                                let oz = &self.sides[1 - side][z as usize];
                                if oz.big.is_some() {
                                    bigbig.insert(z);
                                } else {
                                    inc(&mut groups, (self.cells[&skey(side, x, z)], oz.size), 1);
                                }
                            }
                            if groups != b.groups || bigbig != b.bigbig {
                                return Err(format!("side {side} cluster {x}: groups drifted"));
                            }
                        }
                    }
                    None => {
                        if others.len() > BIG_AT {
                            return Err(format!("side {side} cluster {x} small with many cells"));
                        }
                    }
                }
            }
        }
        let (sums, fsums) = self.compute_sums();
        if sums != self.sums {
            return Err(format!("sums drifted: kept {:?}, recomputed {:?}", self.sums, sums));
        }
        if fsums != self.fsums {
            return Err("tracked F sums drifted".to_string());
        }
        Ok(())
    }
}

/// Sort `keys` (below `2**bits`), carrying `weights` along, by least-significant-digit radix
/// sort: O(N · bits / 11), no comparisons, two sequential sweeps a pass.
pub fn radix_sort(keys: &mut Vec<u64>, weights: &mut Option<Vec<u64>>, bits: u32) {
    const B: u32 = 11;
    let n = keys.len();
    let mut kbuf = vec![0u64; n];
    let mut wbuf = weights.as_ref().map(|_| vec![0u64; n]);
    let mut shift = 0;
    while shift < bits.max(1) {
        let mut off = vec![0usize; 1 << B];
        for &k in keys.iter() {
            off[((k >> shift) & ((1 << B) - 1)) as usize] += 1;
        }
        let mut total = 0;
        for o in off.iter_mut() {
            let c = *o;
            *o = total;
            total += c;
        }
        match (weights.as_ref(), wbuf.as_mut()) {
            (Some(w), Some(wb)) => {
                for (i, &k) in keys.iter().enumerate() {
                    let b = ((k >> shift) & ((1 << B) - 1)) as usize;
                    kbuf[off[b]] = k;
                    wb[off[b]] = w[i];
                    off[b] += 1;
                }
            }
            _ => {
                for &k in keys.iter() {
                    let b = ((k >> shift) & ((1 << B) - 1)) as usize;
                    kbuf[off[b]] = k;
                    off[b] += 1;
                }
            }
        }
        std::mem::swap(keys, &mut kbuf);
        if let (Some(w), Some(wb)) = (weights.as_mut(), wbuf.as_mut()) {
            std::mem::swap(w, wb);
        }
        shift += B;
    }
}

/// The distinct keys of a sorted array and their counts (or summed weights).
pub fn run_lengths(keys: &[u64], weights: Option<&[u64]>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (i, &k) in keys.iter().enumerate() {
        let w = weights.map_or(1, |w| w[i]);
        match out.last_mut() {
            Some(last) if last.0 == k => last.1 += w,
            _ => out.push((k, w)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::Kind;

    #[test]
    fn radix_sort_sorts_and_carries_weights() {
        let mut rng = Rng(3);
        let mut keys: Vec<u64> = (0..5000).map(|_| rng.below(1 << 40)).collect();
        let mut w: Option<Vec<u64>> = Some(keys.iter().map(|k| k % 7 + 1).collect());
        let mut expect = keys.clone();
        expect.sort();
        radix_sort(&mut keys, &mut w, 40);
        assert_eq!(keys, expect);
        assert!(keys.iter().zip(w.unwrap()).all(|(k, w)| w == k % 7 + 1));
        assert_eq!(run_lengths(&[1, 1, 4, 9, 9, 9], None), vec![(1, 2), (4, 1), (9, 3)]);
    }
    use num_bigint::BigUint;

    /// A small deterministic generator (xorshift) for the tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn tracked() -> Core {
        let mut c = Core::new();
        for kind in [Kind::Elm, Kind::Bcubed] {
            c.track(FSpec::new(kind, BigUint::from(1u32), BigUint::from(1u32)));
        }
        c.track(FSpec::new(Kind::Bcubed, BigUint::from(4u32), BigUint::from(1u32)));
        c
    }

    #[test]
    fn random_updates_and_reverts_keep_every_invariant() {
        let mut rng = Rng(0x9E3779B97F4A7C15);
        let mut c = tracked();
        let mut live: Vec<(u32, u32, i64)> = Vec::new();
        for step in 0..6000 {
            // heavy-tailed: a few clusters get many cells, so clusters turn big and small again
            if live.is_empty() || rng.below(10) < 6 {
                let t = if rng.below(3) == 0 { 0 } else { rng.below(60) as u32 };
                let p = if rng.below(3) == 0 { 1 } else { rng.below(60) as u32 };
                let w = 1 + rng.below(3) as i64;
                c.change(t, p, w);
                live.push((t, p, w));
            } else {
                let i = rng.below(live.len() as u64) as usize;
                let (t, p, w) = live.swap_remove(i);
                c.change(t, p, -w);
            }
            if step % 97 == 0 {
                c.check().unwrap();
            }
        }
        c.check().unwrap();
        for (t, p, w) in live.drain(..) {
            c.change(t, p, -w);
        }
        c.check().unwrap();
        assert_eq!(c.sums, Sums::default());
        assert!(c.fsums.iter().all(|&f| f == 0));
    }

    #[test]
    fn update_then_revert_restores_the_sums_bit_for_bit() {
        let mut rng = Rng(42);
        let mut c = tracked();
        for _ in 0..3000 {
            c.change(rng.below(40) as u32, rng.below(5) as u32, 1);
        }
        let (sums, fsums) = (c.sums.clone(), c.fsums.clone());
        for _ in 0..50 {
            let (t, p) = (rng.below(40) as u32, rng.below(5) as u32);
            c.change(t, p, 3);
            c.change(t, p, -3);
        }
        assert_eq!(c.sums, sums);
        assert_eq!(c.fsums, fsums);
        c.check().unwrap();
    }

    #[test]
    fn one_predicted_cluster_costs_groups_not_cells() {
        // everything in one predicted cluster: its cells fall into few (count, row size) groups
        let mut c = tracked();
        for doc in 0..5000u32 {
            for _ in 0..(1 + doc % 7) {
                c.change(doc, 0, 1);
            }
        }
        let b = c.sides[1][0].big.as_ref().expect("column 0 is big");
        assert_eq!(b.set.len(), 5000);
        assert_eq!(b.groups.len(), 7);
        c.check().unwrap();
    }

    #[test]
    fn bulk_rebuild_equals_the_stream() {
        let mut rng = Rng(7);
        let mut streamed = tracked();
        let mut bulk = tracked();
        for _ in 0..4000 {
            let (t, p, w) = (rng.below(50) as u32, rng.below(3) as u32, 1 + rng.below(4));
            streamed.change(t, p, w as i64);
            bulk.add_bulk(t, p, w);
        }
        bulk.rebuild();
        bulk.check().unwrap();
        assert_eq!(bulk.sums, streamed.sums);
        assert_eq!(bulk.fsums, streamed.fsums);
    }

    #[test]
    fn largest_supported_total_fits_every_sum() {
        let mut c = tracked();
        let big = (crate::terms::MAX_TOTAL - 1) as i64;
        c.change(0, 0, big / 2);
        c.change(1, 0, big / 2);
        c.check().unwrap();
        c.change(0, 0, -(big / 2));
        c.change(1, 0, -(big / 2));
        assert_eq!(c.sums, Sums::default());
    }
}
