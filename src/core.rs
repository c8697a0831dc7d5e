//! The contingency table's state and its per-element work, in pure Rust (no Python).
//!
//! Clusters are numbered on each side (0: true clusters, the rows; 1: predicted clusters, the
//! columns) by the binding, which interns the Python labels. Cells live in one hash map keyed by
//! `(row, col)`; each cluster lists the clusters it shares a cell with (a small one beside each
//! cell's count, so that settling it reads no cell map: [`Cluster::cells`]).
//!
//! The element-averaged F-scores couple a cell with both of its margins, so a change of a row's
//! size changes the term of every cell in the row: their running sums cost O(cells of the row
//! and column) per element, and the work here is to make that per-cell cost small. A cluster
//! with many cells ("big", more than [`BIG_AT`]) lists each of its cells with its count, in one
//! array ([`Listing`]: settling walks it as a slice, with no lookup in the cell map). A very big
//! one (more than [`GROUP_AT`] cells: "grouped") keeps instead its cells whose other side is
//! small grouped by `(count, size of the other cluster)`: cells in one group have equal terms
//! and change together, so its share of an update costs O(groups) instead of O(cells). The sizes of big
//! clusters are never copied into anyone's groups, so a change of a big cluster's size costs
//! nothing to propagate; a change of a small cluster's size moves its cells in the groups of its
//! grouped partners, O(cells of a small cluster) = O(1). One predicted cluster holding every
//! document (the degenerate baselines) then costs O(distinct (document length, count) pairs) per
//! element, flat in the stream's length. Groups pay only when many partners share a group; below
//! [`GROUP_AT`] cells the plain list is cheaper (no group to update when a partner changes).
//!
//! The F sums are settled lazily ([`Unsettled`]): they hold every cell's terms at the table as it
//! was at the last reading ("settled"). An update only notes its row and column (with their
//! settled sizes) and its cell (with its settled count), O(1) whatever the clusters' sizes; a
//! reading then moves each noted cluster's cells from their settled terms to their current ones,
//! cluster by cluster: O(cells) of a noted small or listing cluster and O(groups) of a noted
//! grouped one, whose groups stay keyed by settled values. A stream read after every element
//! pays for its row and column once; a stream read rarely pays for each cluster once per reading.
//! With every tracked F-score at `beta == 1` (the Evaluator's), a cell's change of terms is
//! computed for both kinds at once, into sums kept in registers, with one hardware division per
//! term for most cells (`crate::terms::unit_move`): the cells whose partner is settled in one
//! tight loop per cluster (`unit_listed`, `unit_small`: the terms' bounds checked once per
//! cluster, while a reading finds few unsettled clusters); no allocation, no hashing (a small
//! cluster's counts are kept beside its partners, a big one's in its listing). The hardware divisions are most of a dense
//! reading's time, so a listed cell memoises its terms at the margin sum it was last settled at
//! ([`Item`]): when its partner's size has not moved since, the next settling of its cluster
//! reads the old terms there and divides for the new ones only (two divisions instead of four).
//! The memo is the cell's, shared by its two ends: a small cluster settling a cell its big
//! partner lists reads the old terms from, and leaves the new ones in, that item ([`memo_cell`];
//! the item found at the position hint kept beside the count, [`hint`]), so that with a reading
//! after each update both ends find the old terms of their cells memoised, whichever end moved
//! last. The memos pay when a cluster is read again before most of its partners changed (a
//! dense table, a big cluster read often) and cost their writes otherwise, so each listing
//! keeps them on only while they hit ([`Listing::next_mode`]). A big cluster's listing is
//! prefetched when an update first notes the cluster, so that it is in cache by the reading.
//! An update takes a cluster's side terms out of the side's sums before putting its new ones
//! in; on a side of few clusters the old ones are read from the cluster's slot ([`SideMemo`]).

use hashbrown::{HashMap, HashSet};
use smallvec::SmallVec;

use crate::terms::{bcubed_term, elm_term, fixed_quot_nz, unit_move, unit_ok, unit_shift, unit_term, xlogx, FSpec, Kind};

/// A small cluster with more cells than this becomes big.
pub const BIG_AT: usize = 16;
/// A big cluster with fewer cells than this becomes small again (hysteresis).
pub const SMALL_AT: usize = 8;
/// A big cluster with more cells than this keeps its cells with small partners grouped by
/// `(count, partner's size)` for the F sums ("grouped"); below, it lists each cell with its count.
pub const GROUP_AT: usize = 1024;
/// A grouped cluster with fewer cells than this lists its cells again (hysteresis).
pub const UNGROUP_AT: usize = 256;
/// Bulk work visits a large structure (the cell map, the clusters, the label tables) in the
/// order of its memory, its entries sorted by their top `LOCAL_BITS` bits of position only:
/// within one of the 2048 ranges the visits are in any order, but the range is in cache.
pub const LOCAL_BITS: u32 = 11;
/// A bulk fill of an empty cell map inserts the cells range by range of the map's buckets, in
/// `2**FILL_RANGE_BITS` ranges: few enough to scatter the cells into cheaply, each range small
/// enough (a 2**26-byte map's is 256 KiB) to stay in cache while it fills.
const FILL_RANGE_BITS: u32 = 8;
/// The digit, in bits, of the counting pass that [`count_bucket`] sorts a bucket of keys by.
const BUCKET_DIGIT: u32 = 11;
/// The digit, in bits, of the buckets [`count_buckets`] scatters the keys into from memory.
const SCATTER_DIGIT: u32 = 10;
/// The side of the true clusters (rows) in the per-side arrays (`Sums::side`, `Core::sides`).
pub const TRUE: usize = 0;
/// The side of the predicted clusters (columns) in the per-side arrays.
pub const PRED: usize = 1;

/// One cluster's terms of its side's sums, or those sums over a side's clusters (see
/// `streameval.stats.side_terms`, the Python twin, and `SIDE_STATS`, which names each field's sum
/// on either side).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct SideSums {
    /// size² (`sum_row_sq`, `sum_col_sq`)
    pub sq: i128,
    /// `xlogx(size)` (`sum_row_xlogx`, `sum_col_xlogx`)
    pub xlogx: i128,
    /// `bcubed_term(squares, size)` (`bcubed_r_sum`, `bcubed_p_sum`)
    pub bcubed: i128,
    /// `elm_term(squares, size)` (`elm_r_sum`, `elm_p_sum`)
    pub elm: i128,
    /// the largest cell (`sum_row_max`, `sum_col_max`)
    pub max: i128,
    /// 1 for a singleton cluster (`true_singletons`, `pred_singletons`)
    pub singletons: i128,
}

impl std::ops::AddAssign for SideSums {
    #[inline]
    fn add_assign(&mut self, o: SideSums) {
        self.sq += o.sq;
        self.xlogx += o.xlogx;
        self.bcubed += o.bcubed;
        self.elm += o.elm;
        self.max += o.max;
        self.singletons += o.singletons;
    }
}

impl std::ops::Sub for SideSums {
    type Output = SideSums;

    /// The change of each sum from `o` to `self` (subtracted first: a sum near the widths'
    /// bound plus a cluster's new terms could overflow before its old ones are taken out).
    #[inline]
    fn sub(self, o: SideSums) -> SideSums {
        SideSums {
            sq: self.sq - o.sq,
            xlogx: self.xlogx - o.xlogx,
            bcubed: self.bcubed - o.bcubed,
            elm: self.elm - o.elm,
            max: self.max - o.max,
            singletons: self.singletons - o.singletons,
        }
    }
}

impl std::ops::SubAssign for SideSums {
    #[inline]
    fn sub_assign(&mut self, o: SideSums) {
        self.sq -= o.sq;
        self.xlogx -= o.xlogx;
        self.bcubed -= o.bcubed;
        self.elm -= o.elm;
        self.max -= o.max;
        self.singletons -= o.singletons;
    }
}

/// [`xlogx`], read from a table for small counts (the same values: the table holds them).
#[inline]
pub fn xlogx_c(x: u64) -> i128 {
    static TABLE: std::sync::OnceLock<Vec<i128>> = std::sync::OnceLock::new();
    if x < 4096 {
        TABLE.get_or_init(|| (0..4096).map(xlogx).collect())[x as usize]
    } else {
        xlogx(x)
    }
}

/// The per-side terms of one cluster (see `streameval.stats.side_terms`, their Python twin).
#[inline]
pub fn side_terms(size: u64, sq: u128, max: u64) -> SideSums {
    side_terms_from(size, max, bcubed_term(sq, size), elm_term(sq, size))
}

/// [`side_terms`] given its two quotients, `bcubed_term(sq, size)` and `elm_term(sq, size)`.
#[inline]
fn side_terms_from(size: u64, max: u64, bcubed: i128, elm: i128) -> SideSums {
    SideSums {
        sq: (size as i128) * (size as i128),
        xlogx: xlogx_c(size),
        bcubed,
        elm,
        max: max as i128,
        singletons: (size == 1) as i128,
    }
}

#[derive(Clone, Default, Debug)]
pub struct Big {
    /// the other side's clusters this one shares a cell with
    pub set: HashSet<u32>,
    /// cell count -> number of cells with that count (the largest key is `max`)
    pub hist: HashMap<u64, u32>,
    /// whether the cells with small partners are in `groups` (more than [`GROUP_AT`] cells)
    pub grouped: bool,
    /// (count, other cluster's size) -> number of cells, for cells whose other side is small,
    /// when `grouped` (kept while F sums are tracked)
    pub groups: HashMap<(u64, u64), u64>,
    /// every other cell: the other cluster and the cell's count (kept while F sums are tracked,
    /// so that settling reads the counts here rather than from the cell map)
    pub listed: Listing,
}

/// One cell a big cluster lists: the other cluster `z`, the count `n`, and a memo of the cell's
/// unit terms (BCubed `2n²/s`, ELM `2n(n-1)/(s-2)`, fixed point, each at most `n < 2**31`: 64
/// fraction bits in `b` and `e`, the integer parts in `bh` and `eh`) at the margin sum `s` for which
/// settling last computed them (`s == 0`: none), by either end of the cell (this cluster's
/// settling, or its small partner's: [`memo_cell`]). The memo is a cache of a pure function of
/// `(n, s)`: any change of `n` empties it, so a hit is the same bits as computing the terms
/// again, and the next settling of either end at an unchanged size of the other spares the two
/// divisions of the cell's old terms.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    pub z: u32,
    s: u32,
    pub n: u64,
    b: u64,
    e: u64,
    bh: u32,
    eh: u32,
}

impl Item {
    fn new(z: u32, n: u64) -> Item {
        Item { z, s: 0, n, b: 0, e: 0, bh: 0, eh: 0 }
    }

    /// The memoised BCubed term (valid when the memo is at the margin sum wanted). O(1).
    #[inline(always)]
    fn memo_b(&self) -> i128 {
        ((self.bh as u128) << 64 | self.b as u128) as i128
    }

    /// The memoised ELM term. O(1).
    #[inline(always)]
    fn memo_e(&self) -> i128 {
        ((self.eh as u128) << 64 | self.e as u128) as i128
    }

    /// Memoise the terms `b1` (BCubed) and `e1` (ELM) of this cell at margin sum `s1`, or empty
    /// the memo when `s1` does not fit in 32 bits. The bounds of [`unit_listed`] (`n < 2**31`;
    /// `s1 >= 2n`, as the cell lies in both margins) keep each term at most `n`, so its integer
    /// part fits in 32 bits. O(1), no branch.
    #[inline(always)]
    fn set_memo(&mut self, s1: u64, b1: i128, e1: i128) {
        debug_assert!(b1 >= 0 && e1 >= 0 && (b1 | e1) >> 95 == 0);
        self.s = if s1 >> 32 == 0 { s1 as u32 } else { 0 };
        self.b = b1 as u64;
        self.e = e1 as u64;
        self.bh = (b1 >> 64) as u32;
        self.eh = (e1 >> 64) as u32;
    }

    /// Whether the memo is empty or holds the terms of the kinds `want` (ELM, BCubed) at
    /// `(n, s)` (a check of the invariant, for [`Core::check`]).
    fn memo_ok(&self, want: [bool; 2]) -> bool {
        let (n, s) = (self.n, self.s as u64);
        self.s == 0
            || ((!want[1] || self.memo_b() == unit_term(Kind::Bcubed, n, s))
                && (!want[0] || self.memo_e() == unit_term(Kind::Elm, n, s)))
    }
}

/// The cells a big cluster lists, `(other cluster, count)` ([`Item`]s): in one array, so that
/// settling walks them as a slice (no hash-table iteration), with each one's position by other
/// cluster for O(1) changes. Equality is as sets of `(z, n)` (the order is that of the changes;
/// the memos are caches, not state).
#[derive(Clone, Debug)]
pub struct Listing {
    items: Vec<Item>,
    pos: HashMap<u32, u32>,
    /// whether settling uses and keeps the memos: [`Listing::ON`], [`Listing::PROBE`], or off
    /// for this many more settlings (a speed choice only: a memo is right whenever it is used)
    mode: u8,
}

impl Default for Listing {
    /// No cells, the memos off at first: a cluster settled a few times only (a large table,
    /// each cluster read rarely) never pays for them.
    fn default() -> Listing {
        Listing { items: Vec::new(), pos: HashMap::new(), mode: Listing::OFF_FOR }
    }
}

impl Listing {
    /// Settling reads and writes the memos and counts its hits.
    const ON: u8 = 0;
    /// Settling writes the memos, for the next one to count its hits.
    const PROBE: u8 = 1;
    /// Below this share of hits (in 64ths) the memos cost more than they spare (their writes,
    /// the second pass over the misses; measured on the density benchmark: a win at about 85%
    /// hits, a loss at about 40%): off for [`Listing::OFF_FOR`] settlings.
    const HITS_AT: usize = 40;
    const OFF_FOR: u8 = 32;

    /// The mode after a settling in this one that found `hits` memo hits among `cells` cells:
    /// on stays on while the memos pay (a cluster read again before most of its partners
    /// changed: a dense table, or a big cluster read often), else goes off; off counts down to
    /// a probe, a probe turns on. O(1).
    #[inline]
    fn next_mode(&self, hits: usize, cells: usize) -> u8 {
        match self.mode {
            Self::ON if hits * 64 < cells * Self::HITS_AT => Self::OFF_FOR,
            Self::ON | Self::PROBE => Self::ON,
            2 => Self::PROBE,
            k => k - 1,
        }
    }

    /// List cell `z` with count `n`, or set its count (emptying its memo). O(1).
    #[inline]
    pub fn insert(&mut self, z: u32, n: u64) {
        match self.pos.entry(z) {
            hashbrown::hash_map::Entry::Occupied(e) => self.items[*e.get() as usize] = Item::new(z, n),
            hashbrown::hash_map::Entry::Vacant(e) => {
                e.insert(self.items.len() as u32);
                self.items.push(Item::new(z, n));
            }
        }
    }

    /// The position of cell `z` in the list, guessed at `h` first (a small partner's [`hint`]):
    /// the guess when it holds `z`, else a lookup (none for the guess [`NO_HINT`]). O(1).
    #[inline(always)]
    fn find(&self, z: u32, h: usize) -> Option<usize> {
        if self.items.get(h).is_some_and(|it| it.z == z) {
            Some(h)
        } else if h == NO_HINT {
            None
        } else {
            self.pos.get(&z).map(|&i| i as usize)
        }
    }

    /// Take cell `z` off the list (nothing when it is not listed). O(1): the last item moves
    /// into its place.
    #[inline]
    pub fn remove(&mut self, z: u32) {
        if let Some(i) = self.pos.remove(&z) {
            self.items.swap_remove(i as usize);
            if let Some(moved) = self.items.get(i as usize) {
                self.pos.insert(moved.z, i);
            }
        }
    }

    /// The listed cells, in no particular order.
    #[inline]
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Ask the processor to bring the listed cells into its cache (a hint; no effect on any
    /// value): one prefetch per 64-byte line. O(cells / 2) instructions, no waiting.
    #[inline]
    fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let (p, len) = (self.items.as_ptr() as *const i8, std::mem::size_of_val(&self.items[..]));
            for off in (0..len).step_by(64) {
                // SAFETY: a prefetch never faults; the address lies within the items' array
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(off)) };
            }
        }
    }

    /// Empty every memo (the tracked kinds changed: a memo holds only the kinds tracked when
    /// it was made). O(cells).
    fn forget(&mut self) {
        for it in self.items.iter_mut() {
            it.s = 0;
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl PartialEq for Listing {
    fn eq(&self, o: &Listing) -> bool {
        self.len() == o.len()
            && self.items.iter().all(|it| o.pos.get(&it.z).is_some_and(|&i| o.items[i as usize].n == it.n))
    }
}

#[derive(Clone, Default, Debug)]
pub struct Cluster {
    pub size: u64,
    pub sq: u128,
    pub max: u64,
    /// the other side's clusters this one shares a cell with, each with the cell's count in the
    /// low [`KEPT_BITS`] bits ([`sat`]: read it with [`Cluster::count`]) and, in the top bits,
    /// the cell's position in its partner's listing ([`hint`]: a guess, checked before use),
    /// while small. A count is exact in every state a caller sees; while a bulk add runs, a
    /// list longer than [`BIG_AT`] (made big at its end, from the cell map) may hold stale counts.
    pub cells: SmallVec<[(u32, u32); 2]>,
    pub big: Option<Box<Big>>,
}

/// The bits of a small cluster's kept word ([`Cluster::cells`]) that hold the cell's count; the
/// others hold the position hint ([`hint`]).
pub const KEPT_BITS: u32 = 24;
/// The largest count kept beside a partner, and the mark of a larger one (then the cell map
/// holds it): `2**24 - 1`.
pub const KEPT_MAX: u32 = (1 << KEPT_BITS) - 1;
/// The position hint that means "not listed within the hints' reach" (a position from 255 on,
/// or a partner that lists no cells of small clusters): no memo is looked for.
const NO_HINT: usize = 255;

/// A cell's count as a small cluster keeps it beside its partner: itself below [`KEPT_MAX`],
/// else [`KEPT_MAX`] (then the cell map holds it), with a position hint of 0. O(1).
#[inline(always)]
pub fn sat(n: u64) -> u32 {
    n.min(KEPT_MAX as u64) as u32
}

/// The position hint of a small cluster's kept word: where the cell was last found in its big
/// partner's listing ([`Listing`]), checked against the listed cluster before use, so a stale
/// hint costs a lookup and never a wrong value. O(1).
#[inline(always)]
pub fn hint(c: u32) -> usize {
    (c >> KEPT_BITS) as usize
}

/// Kept word `c` with its position hint set to `h` (at most [`NO_HINT`]). O(1).
#[inline(always)]
fn with_hint(c: u32, h: usize) -> u32 {
    (c & KEPT_MAX) | ((h as u32) << KEPT_BITS)
}

impl Cluster {
    /// The record of a small cluster holding the cells `(other side's id, count)`.
    fn of_cells(cells: impl ExactSizeIterator<Item = (u32, u64)> + Clone) -> Cluster {
        let (mut size, mut sq, mut max) = (0u64, 0u128, 0u64);
        for (_, c) in cells.clone() {
            size += c;
            sq += (c as u128) * (c as u128);
            max = max.max(c);
        }
        Cluster { size, sq, max, cells: cells.map(|(y, c)| (y, sat(c))).collect(), big: None }
    }

    /// The count of the cell with partner `z` (kept word `c`, from [`Cluster::cells`]) of this
    /// small cluster `x` of `side`: the kept count, or from the cell map when saturated. O(1).
    #[inline(always)]
    pub fn count(cells: &HashMap<u64, u64>, side: usize, x: u32, z: u32, c: u32) -> u64 {
        let k = c & KEPT_MAX;
        if k != KEPT_MAX {
            k as u64
        } else {
            cells[&skey(side, x, z)]
        }
    }

    /// Set the kept count of the cell with partner `y` to `n` (listed), keeping its position
    /// hint. O(cells).
    #[inline]
    fn set_count(&mut self, y: u32, n: u64) {
        if let Some(e) = self.cells.iter_mut().find(|e| e.0 == y) {
            e.1 = (e.1 & !KEPT_MAX) | sat(n);
        }
    }

    pub fn ncells(&self) -> usize {
        match &self.big {
            Some(b) => b.set.len(),
            None => self.cells.len(),
        }
    }

    pub fn others(&self) -> impl Iterator<Item = u32> + '_ {
        self.cells
            .iter()
            .map(|e| e.0)
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
    /// per side ([`TRUE`], [`PRED`]), the sums of [`side_terms`]
    pub side: [SideSums; 2],
}

/// One running sum read from the sums.
pub type StatFn = fn(&Sums) -> i128;

/// The running sums by name, in the order of `streameval.stats.STAT_NAMES` (a test holds the
/// two equal): the one list the binding's read-only attributes and `stat_values` are made from.
pub const STATS: &[(&str, StatFn)] = &[
    ("n", |s| s.n),
    ("cells", |s| s.cells),
    ("k_true", |s| s.k[TRUE]),
    ("k_pred", |s| s.k[PRED]),
    ("sum_cell_sq", |s| s.cell_sq),
    ("sum_row_sq", |s| s.side[TRUE].sq),
    ("sum_col_sq", |s| s.side[PRED].sq),
    ("sum_cell_xlogx", |s| s.cell_xlogx),
    ("sum_row_xlogx", |s| s.side[TRUE].xlogx),
    ("sum_col_xlogx", |s| s.side[PRED].xlogx),
    ("bcubed_p_sum", |s| s.side[PRED].bcubed),
    ("bcubed_r_sum", |s| s.side[TRUE].bcubed),
    ("elm_p_sum", |s| s.side[PRED].elm),
    ("elm_r_sum", |s| s.side[TRUE].elm),
    ("sum_col_max", |s| s.side[PRED].max),
    ("sum_row_max", |s| s.side[TRUE].max),
    ("true_singletons", |s| s.side[TRUE].singletons),
    ("pred_singletons", |s| s.side[PRED].singletons),
    ("both_singletons", |s| s.both_singletons),
];

/// What changed since the F sums were last settled ([`Core::settle`]): the sums hold the terms of
/// every cell at its settled count and its clusters' settled sizes. Listed: the clusters whose
/// size changed (with their settled sizes) and the cells whose count changed (with their settled
/// counts); every changed cell's row and column are listed. O(1) to note a change.
#[derive(Clone, Default, Debug)]
pub struct Unsettled {
    /// per side, the unsettled clusters, each once
    list: [Vec<u32>; 2],
    /// per side, one bit per cluster: unsettled or not
    bits: [Vec<u64>; 2],
    /// per side, by cluster, the settled size (read only while the cluster is listed)
    old: [Vec<u64>; 2],
    /// the changed cells' keys and their settled counts (0 for a cell new since)
    cells: HashMap<u64, u64>,
}

impl Unsettled {
    #[inline]
    fn has(&self, side: usize, x: u32) -> bool {
        self.bits[side].get((x >> 6) as usize).is_some_and(|w| w >> (x & 63) & 1 == 1)
    }

    /// List cluster `x` of `side`, whose settled size is `size`, unless it is listed already;
    /// whether it was not.
    #[inline]
    fn add(&mut self, side: usize, x: u32, size: u64) -> bool {
        let i = (x >> 6) as usize;
        let bits = &mut self.bits[side];
        if bits.len() <= i {
            bits.resize(i + 1, 0);
        }
        if bits[i] >> (x & 63) & 1 == 1 {
            return false;
        }
        bits[i] |= 1 << (x & 63);
        self.list[side].push(x);
        let old = &mut self.old[side];
        if old.len() <= x as usize {
            old.resize(x as usize + 1, 0);
        }
        old[x as usize] = size;
        true
    }

    /// The settled count of cell `k`, whose count is now `now`, between cluster `z` of `side`
    /// and a listed cluster: only a cell whose both ends are listed may have changed.
    #[inline]
    fn count(&self, side: usize, z: u32, k: u64, now: u64) -> u64 {
        if self.has(side, z) {
            self.cells.get(&k).copied().unwrap_or(now)
        } else {
            now
        }
    }

    fn is_empty(&self) -> bool {
        self.list[0].is_empty() && self.list[1].is_empty()
    }

    /// Room for `lens` clusters per side, so that noting one ([`Unsettled::add`]) never grows
    /// these arrays: O(1) when they fit, else O(clusters) once (a 10⁵-cluster table's arrays,
    /// grown one cluster id at a time by the updates, cost them about 1,700 instructions each
    /// over the first 2,000).
    fn fit(&mut self, lens: [usize; 2]) {
        for (side, &n) in lens.iter().enumerate() {
            if self.old[side].len() < n {
                self.old[side].resize(n, 0);
            }
            if self.bits[side].len() < n.div_ceil(64) {
                self.bits[side].resize(n.div_ceil(64), 0);
            }
        }
    }

    fn clear(&mut self) {
        for side in 0..2 {
            for &x in &self.list[side] {
                self.bits[side][(x >> 6) as usize] = 0;
            }
            self.list[side].clear();
        }
        // iterated at each settling and cleared after it, each O(capacity): kept within 8 times
        // what the last period between readings noted (a run of updates read once at its end
        // leaves a large map, which readings after each update would otherwise pay for)
        let (len, cap) = (self.cells.len(), self.cells.capacity());
        if cap > 1024 || (cap > 64 && len * 8 < cap) {
            self.cells = HashMap::new();
        } else {
            self.cells.clear();
        }
    }
}

impl Sums {
    /// Add one cluster's [`side_terms`] to the sums of `side`.
    #[inline]
    fn add_side(&mut self, side: usize, terms: SideSums) {
        self.side[side] += terms;
    }
}

/// [`side_terms`] of many clusters, their two quotients (BCubed, ELM: four divisions) kept by
/// `(size, squares)` in a small direct-mapped table: the clusters of a large table repeat few
/// shapes. O(1) a call; 64 KiB, in cache.
struct TermsMemo {
    /// (size, squares, BCubed term, ELM term); the zero entry is right for an empty cluster
    slots: Vec<(u64, u128, i128, i128)>,
}

impl TermsMemo {
    const BITS: u32 = 10;

    fn new() -> TermsMemo {
        TermsMemo { slots: vec![(0, 0, 0, 0); 1 << Self::BITS] }
    }

    /// Exactly `side_terms(size, sq, max)`.
    #[inline]
    fn terms(&mut self, size: u64, sq: u128, max: u64) -> SideSums {
        let mix = size ^ (sq as u64).rotate_left(29) ^ ((sq >> 64) as u64);
        let slot = (mix.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - Self::BITS)) as usize;
        let e = &mut self.slots[slot];
        if e.0 != size || e.1 != sq {
            *e = (size, sq, bcubed_term(sq, size), elm_term(sq, size));
        }
        side_terms_from(size, max, e.2, e.3)
    }
}

/// [`side_terms`] of the clusters of a side of at most [`SideMemo::SLOTS`] clusters, by cluster:
/// each one's quotients (BCubed, ELM: four divisions) and `xlogx` of its size (a logarithm from
/// 4096 on) at the `(size, squares)` it had when last moved, so that an update, which takes a
/// cluster's terms out of its side's sums before putting its new ones in, reads the old ones
/// here instead of computing them again. A cache of a pure function of `(size, squares)`: the
/// same values. O(1) a call; 80 bytes a slot, allocated at the first use.
#[derive(Clone, Debug, Default)]
struct SideMemo {
    /// per side, by cluster
    slots: [Vec<SideSlot>; 2],
}

/// A cluster's slot in [`SideMemo`]: (size, squares, `xlogx`, BCubed term, ELM term); the zero
/// slot is right for an empty cluster.
type SideSlot = (u64, u128, i128, i128, i128);

impl SideMemo {
    /// The clusters of a side with a slot each; a side with more computes every call.
    const SLOTS: usize = 128;

    /// Exactly `side_terms(size, sq, max)` of cluster `x` of `side`, whose side has `len`
    /// clusters.
    #[inline]
    fn terms(&mut self, side: usize, x: u32, len: usize, size: u64, sq: u128, max: u64) -> SideSums {
        if len > Self::SLOTS {
            return side_terms(size, sq, max);
        }
        let slots = &mut self.slots[side];
        if slots.is_empty() {
            slots.resize(Self::SLOTS, (0, 0, 0, 0, 0));
        }
        let e = &mut slots[x as usize];
        if e.0 != size || e.1 != sq {
            *e = (size, sq, xlogx_c(size), bcubed_term(sq, size), elm_term(sq, size));
        }
        let mut t = side_terms_from(size, max, e.3, e.4);
        t.xlogx = e.2;
        t
    }
}

/// What settling needs of the tracked specs (borrowed apart from the clusters it walks).
struct FCtx<'a> {
    specs: &'a [FSpec],
    /// every spec has `beta == 1`: the changes go by kind into the accumulators
    all_unit: bool,
    /// the unit kinds tracked: (ELM, BCubed)
    want: [bool; 2],
}

impl FCtx<'_> {
    /// [`FCtx::cell`] for every listed cell of unsettled big cluster `x` of `side` but those
    /// visited from their other end (small and unsettled, or a big unsettled row). The common
    /// case (unit specs, the other end settled) keeps its sums in registers, with the tracked
    /// kinds fixed at compile time ([`FCtx::listed_k`]). O(cells · specs).
    #[allow(clippy::too_many_arguments)]
    fn listed(&self, un: &Unsettled, acc: &mut [i128; 2], f: &mut [i128], side: usize, x: u32, listed: &mut Listing, other: &[Cluster], sx: (u64, u64)) {
        match self.want {
            [true, true] => self.listed_k::<true, true>(un, acc, f, side, x, listed, other, sx),
            [true, false] => self.listed_k::<true, false>(un, acc, f, side, x, listed, other, sx),
            [false, true] => self.listed_k::<false, true>(un, acc, f, side, x, listed, other, sx),
            [false, false] => self.listed_k::<false, false>(un, acc, f, side, x, listed, other, sx),
        }
    }

    /// [`FCtx::listed`] with the unit kinds wanted (`E`: ELM, `B`: BCubed) as constants.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn listed_k<const E: bool, const B: bool>(&self, un: &Unsettled, acc: &mut [i128; 2], f: &mut [i128], side: usize, x: u32, listed: &mut Listing, other: &[Cluster], sx: (u64, u64)) {
        let (sx0, sx1) = sx;
        if self.all_unit && sx0 != sx1 && (sx0 | sx1) < (1 << 31) && sx0.min(sx1) >= 2 && un.list[1 - side].len() <= 8 {
            // the common case (a reading every few updates): every settled partner's cell in one
            // tight loop, the few unsettled ones after it (a reading after many updates, with
            // many unsettled partners, goes cell by cell below: no second pass over them)
            let mut rest: SmallVec<[(u32, u64); 8]> = SmallVec::new();
            let (olist, obits) = (&un.list[1 - side], &un.bits[1 - side]);
            let items = &mut listed.items;
            let ([e, b], hits) = match (&olist[..], listed.mode <= Listing::PROBE) {
                // one unsettled partner (a reading after each update): a comparison a cell
                (&[one], true) => unit_listed::<E, B, true, _>(items, |z| z == one, other, sx0, sx1, &mut rest),
                (&[one], false) => unit_listed::<E, B, false, _>(items, |z| z == one, other, sx0, sx1, &mut rest),
                (_, true) => unit_listed::<E, B, true, _>(items, |z| is_set(obits, z), other, sx0, sx1, &mut rest),
                (_, false) => unit_listed::<E, B, false, _>(items, |z| is_set(obits, z), other, sx0, sx1, &mut rest),
            };
            let cells = items.len() - rest.len();
            listed.mode = listed.next_mode(hits, cells);
            acc[0] = acc[0].wrapping_add(e);
            acc[1] = acc[1].wrapping_add(b);
            for &(z, n) in rest.iter() {
                let oz = &other[z as usize];
                if side == 0 && oz.big.is_some() {
                    self.cell(un, acc, f, side, x, z, true, n, sx, oz.size);
                }
            }
            return;
        }
        let (mut e, mut b) = (0i128, 0i128);
        // the bounds of `unit_ok` on this end's sizes, once
        let unit = self.all_unit && (sx0 | sx1) < (1 << 62);
        let moved = sx0 != sx1;
        for &Item { z, n, .. } in listed.items() {
            let oz = &other[z as usize];
            if un.has(1 - side, z) {
                if side == 0 && oz.big.is_some() {
                    self.cell(un, acc, f, side, x, z, true, n, sx, oz.size);
                }
                continue; // else from its small unsettled end, or from its big unsettled row
            }
            if !moved {
                continue;
            }
            let y = oz.size;
            if unit && unit_ok(n, y) {
                unit_shift::<E, B>(&mut e, &mut b, n, sx0.wrapping_add(y), sx1.wrapping_add(y));
            } else {
                self.delta(acc, f, side, n, sx0, sx1, y, 1);
            }
        }
        acc[0] = acc[0].wrapping_add(e);
        acc[1] = acc[1].wrapping_add(b);
    }

    /// Settle the cells of unsettled small cluster `x` of `side` (its partners `cells`, settled
    /// size and size now `sx`), each cell but those visited from their row (both ends small and
    /// unsettled: from the row), and put them back into their grouped partners' groups. The
    /// common case (unit specs, the partner settled) in registers, the unit kinds (`E`: ELM, `B`:
    /// BCubed) constants. The counts kept beside the partners: no cell-map lookup (but for a
    /// count of `2**32 - 1` or more). O(cells · specs).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn small_k<const E: bool, const B: bool>(&self, un: &Unsettled, acc: &mut [i128; 2], f: &mut [i128], side: usize, x: u32, partners: &mut [(u32, u32)], other: &mut [Cluster], cells: &HashMap<u64, u64>, sx: (u64, u64)) {
        let (sx0, sx1) = sx;
        let mut rest: SmallVec<[(u32, u32); 8]> = SmallVec::new();
        let partners: &[(u32, u32)] = if self.all_unit && sx0 != sx1 && (sx0 | sx1) < (1 << 31) && sx0.min(sx1) >= 2 && un.list[1 - side].len() <= 8 {
            // the common case (as in `listed_k`): every settled partner's cell in one tight
            // loop, the few unsettled ones below
            let (olist, obits) = (&un.list[1 - side], &un.bits[1 - side]);
            let [e, b] = match olist[..] {
                [one] => unit_small::<E, B, _>(partners, |z| z == one, other, cells, side, x, sx0, sx1, &mut rest),
                _ => unit_small::<E, B, _>(partners, |z| is_set(obits, z), other, cells, side, x, sx0, sx1, &mut rest),
            };
            acc[0] = acc[0].wrapping_add(e);
            acc[1] = acc[1].wrapping_add(b);
            &rest
        } else {
            &*partners
        };
        let (mut e, mut b) = (0i128, 0i128); // the unit changes, in registers
        let unit = self.all_unit && (sx0 | sx1) < (1 << 62);
        for &(z, c) in partners {
            let oz = &mut other[z as usize];
            let zun = un.has(1 - side, z);
            if side == 1 && zun && oz.big.is_none() {
                continue; // from its (small, unsettled) row
            }
            let n = Cluster::count(cells, side, x, z, c);
            let y = oz.size;
            if !zun && unit && unit_ok(n, y) {
                unit_shift::<E, B>(&mut e, &mut b, n, sx0.wrapping_add(y), sx1.wrapping_add(y));
            } else {
                self.cell(un, acc, f, side, x, z, zun, n, sx, y);
            }
            if let Some(ob) = oz.big.as_deref_mut().filter(|b| b.grouped) {
                inc(&mut ob.groups, (n, sx1), 1);
            }
        }
        acc[0] = acc[0].wrapping_add(e);
        acc[1] = acc[1].wrapping_add(b);
    }

    /// Move the F sums from the settled terms of the present cell of count `n` between cluster
    /// `x` of `side` (settled size and size now: `sx`) and `z` of the other side (size now
    /// `sz1`; unsettled: `zun`) to its current ones: into `acc` (by kind) when every spec is a
    /// unit one, else into `f`. O(specs).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn cell(&self, un: &Unsettled, acc: &mut [i128; 2], f: &mut [i128], side: usize, x: u32, z: u32, zun: bool, n: u64, sx: (u64, u64), sz1: u64) {
        let (sx0, sx1) = sx;
        if !zun {
            // the other end settled: the cell's count too; only this end's size moved
            if sx0 != sx1 {
                self.delta(acc, f, side, n, sx0, sx1, sz1, 1);
            }
            return;
        }
        let (n0, sz0) = (un.count(1 - side, z, skey(side, x, z), n), un.old[1 - side][z as usize]);
        if self.all_unit && unit_ok(n.max(n0), sx0 | sx1 | sz0 | sz1) {
            unit_move(acc, self.want, n0, sx0 + sz0, n, sx1 + sz1);
            return;
        }
        for (fi, spec) in f.iter_mut().zip(self.specs.iter()) {
            *fi += Core::oriented(spec, side, n, sx1, sz1) - Core::oriented(spec, side, n0, sx0, sz0);
        }
    }

    /// Add `m` times the change of the terms of a cell of count `n` whose `side` margin moves
    /// from `x0` to `x1` (the other margin `y`): into `acc` (by kind) when every spec is a unit
    /// one ([`unit_move`]: one division a term for most cells), else into `f`. O(specs). The
    /// accumulators' wrapping adds are exact: every partial sum is a sum of terms of the table,
    /// below `2**122` in magnitude.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn delta(&self, acc: &mut [i128; 2], f: &mut [i128], side: usize, n: u64, x0: u64, x1: u64, y: u64, m: u64) {
        if self.all_unit && unit_ok(n, x0 | x1 | y) {
            if m == 1 {
                unit_move(acc, self.want, n, x0 + y, n, x1 + y);
            } else {
                let mut one = [0i128; 2];
                unit_move(&mut one, self.want, n, x0 + y, n, x1 + y);
                for i in 0..2 {
                    acc[i] += one[i] * m as i128;
                }
            }
            return;
        }
        for (fi, spec) in f.iter_mut().zip(self.specs.iter()) {
            let diff = spec.delta(side, n, x0, x1, y);
            *fi += if m == 1 { diff } else { diff * m as i128 };
        }
    }
}

/// Whether bit `z` of `bits` is set (beyond the words: not).
#[inline(always)]
fn is_set(bits: &[u64], z: u32) -> bool {
    bits.get((z >> 6) as usize).is_some_and(|w| w >> (z & 63) & 1 == 1)
}

/// Add to `e` (ELM, when `E`) and `b` (BCubed, when `B`) the change of the unit terms of a
/// present cell of `n` elements whose partner has `y` elements, its cluster moving from `sx0` to
/// `sx1` elements: [`unit_shift`] within the bounds of [`unit_listed`], without their tests.
#[inline(always)]
fn unit_cell<const E: bool, const B: bool>(e: &mut i128, b: &mut i128, n: u64, y: u64, sx0: u64, sx1: u64) {
    // wrapping: no overflow check, none possible within those bounds
    let (s0, s1) = (sx0.wrapping_add(y), sx1.wrapping_add(y));
    let nn = n.wrapping_mul(n).wrapping_mul(2);
    // a present cell: n >= 1, so both tops below are positive
    if B {
        *b = b.wrapping_add(fixed_quot_nz(nn, s1)).wrapping_sub(fixed_quot_nz(nn, s0));
    }
    if E && n > 1 {
        let top = nn.wrapping_sub(n.wrapping_mul(2));
        *e = e.wrapping_add(fixed_quot_nz(top, s1.wrapping_sub(2))).wrapping_sub(fixed_quot_nz(top, s0.wrapping_sub(2)));
    }
}

/// The unit changes (ELM, BCubed; each only when `E`, `B`) of the cells `items` of a big cluster
/// whose size moved from `sx0` to `sx1` (different, both in `[2, 2**31)`), over the cells whose
/// partner (`other[z]`) is settled (`unsettled(z)` false: a comparison when one partner is
/// unsettled, else its bit); the other cells are pushed to `rest`, for the caller. With
/// `sx < 2**31` each count `n <= sx` is below `2**31`, and a partner's size is below `MAX_TOTAL = 2**57`, so every term is a [`unit_term`] (the bounds of
/// `unit_ok`), and with `sx >= 2` no margin sum is 2 (a cell of one element has no ELM term).
/// The same values as [`unit_shift`] cell by cell, in a loop without tests of those bounds; each
/// cell's old terms taken from its memo when it holds them (its partner's size unchanged since
/// this cluster last settled it), and its new terms memoised: O(cells), two hardware divisions a
/// cell on a memo hit, four on a miss. Its callers have at most 8 unsettled partners, so `rest`
/// never allocates.
#[inline(never)]
fn unit_listed<const E: bool, const B: bool, const M: bool, U: Fn(u32) -> bool>(items: &mut [Item], unsettled: U, other: &[Cluster], sx0: u64, sx1: u64, rest: &mut SmallVec<[(u32, u64); 8]>) -> ([i128; 2], usize) {
    let (mut e, mut b) = (0i128, 0i128);
    if !M {
        for it in items.iter() {
            if unsettled(it.z) {
                push_rest(rest, (it.z, it.n));
                continue;
            }
            unit_cell::<E, B>(&mut e, &mut b, it.n, other[it.z as usize].size, sx0, sx1);
        }
        return ([e, b], 0);
    }
    /// the cells of one pass: the memo misses' `(n, s0)` wait in an array of this length
    const CHUNK: usize = 64;
    let mut misses = 0;
    // not zeroed (1 KiB a call): a slot is read only after this chunk wrote it
    let mut miss = [std::mem::MaybeUninit::<(u64, u64)>::uninit(); CHUNK];
    for chunk in items.chunks_mut(CHUNK) {
        // the new terms of every cell, the old ones from the memos that hold them; the misses
        // noted without a branch (a hit or a miss is as likely as the partners' sizes moved:
        // unpredictable), their old terms computed after the pass
        let mut m = 0usize;
        for it in chunk.iter_mut() {
            if unsettled(it.z) {
                push_rest(rest, (it.z, it.n));
                continue;
            }
            let n = it.n;
            let y = other[it.z as usize].size;
            // wrapping: no overflow check, none possible within those bounds
            let (s0, s1) = (sx0.wrapping_add(y), sx1.wrapping_add(y));
            let nn = n.wrapping_mul(n).wrapping_mul(2);
            // a present cell: n >= 1, so both tops below are positive
            let b1 = if B { fixed_quot_nz(nn, s1) } else { 0 };
            let e1 = if E && n > 1 { fixed_quot_nz(nn.wrapping_sub(n.wrapping_mul(2)), s1.wrapping_sub(2)) } else { 0 };
            let hit = it.s as u64 == s0;
            let keep = -(hit as i128);
            b = b.wrapping_add(b1).wrapping_sub(it.memo_b() & keep);
            e = e.wrapping_add(e1).wrapping_sub(it.memo_e() & keep);
            // m < CHUNK: one slot a cell of the chunk
            miss[m & (CHUNK - 1)] = std::mem::MaybeUninit::new((n, s0));
            m = m.wrapping_add(!hit as usize);
            it.set_memo(s1, b1, e1);
        }
        misses += m;
        for slot in &miss[..m] {
            // SAFETY: slots 0..m were written by this chunk's pass (a miss writes slot m, then
            // counts itself)
            let (n, s0) = unsafe { slot.assume_init() };
            let nn = n.wrapping_mul(n).wrapping_mul(2);
            if B {
                b = b.wrapping_sub(fixed_quot_nz(nn, s0));
            }
            if E && n > 1 {
                e = e.wrapping_sub(fixed_quot_nz(nn.wrapping_sub(n.wrapping_mul(2)), s0.wrapping_sub(2)));
            }
        }
    }
    ([e, b], items.len() - rest.len() - misses)
}

/// `rest.push(cell)`, kept out of the settling loops (a rare branch: few partners are unsettled),
/// so that their registers hold the sums.
#[cold]
#[inline(never)]
fn push_rest<T: Copy>(rest: &mut SmallVec<[T; 8]>, cell: T) {
    rest.push(cell);
}

/// [`unit_listed`] for small cluster `x` of `side`, whose partners are `partners` with the
/// cells' counts ([`Cluster::count`]: the cell map `cells` read only for a saturated one): the
/// unit changes of the cells whose partner is settled, each put back into its partner's groups
/// when that partner is grouped; the unsettled partners are pushed to `rest`. Same bounds as
/// [`unit_listed`]. A cell whose partner lists it (big, not grouped) takes its old terms from,
/// and leaves its new ones in, the memo of its item in that listing ([`memo_cell`]), found at
/// the cell's position [`hint`] (a lookup when the hint is stale, and the hint set again): one
/// memo a cell, shared by its two ends, so that a reading after each update finds the old terms
/// of both ends' cells memoised (two divisions a cell instead of four). O(partners).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn unit_small<const E: bool, const B: bool, U: Fn(u32) -> bool>(partners: &mut [(u32, u32)], unsettled: U, other: &mut [Cluster], cells: &HashMap<u64, u64>, side: usize, x: u32, sx0: u64, sx1: u64, rest: &mut SmallVec<[(u32, u32); 8]>) -> [i128; 2] {
    let (mut e, mut b) = (0i128, 0i128);
    for kept in partners.iter_mut() {
        let (z, c) = *kept;
        if unsettled(z) {
            push_rest(rest, (z, c));
            continue;
        }
        let n = Cluster::count(cells, side, x, z, c);
        let oz = &mut other[z as usize];
        let y = oz.size;
        match oz.big.as_deref_mut() {
            Some(ob) if ob.grouped => {
                unit_cell::<E, B>(&mut e, &mut b, n, y, sx0, sx1);
                inc(&mut ob.groups, (n, sx1), 1);
            }
            Some(ob) => match ob.listed.find(x, hint(c)) {
                Some(i) => {
                    if i != hint(c) {
                        kept.1 = with_hint(c, i.min(NO_HINT));
                    }
                    memo_cell::<E, B>(&mut e, &mut b, &mut ob.listed.items[i], n, y, sx0, sx1);
                }
                None => unit_cell::<E, B>(&mut e, &mut b, n, y, sx0, sx1),
            },
            None => unit_cell::<E, B>(&mut e, &mut b, n, y, sx0, sx1),
        }
    }
    [e, b]
}

/// [`unit_cell`] for a cell listed as `it` by its partner (`n == it.n`): the old terms from its
/// memo when it holds them at the old margin sum `sx0 + y`, else computed; the new terms at
/// `sx1 + y` memoised (when they fit, as [`unit_listed`] keeps them). The same values as
/// [`unit_cell`]: the memo is a cache of a pure function of `(n, s)`. Two or four divisions.
#[inline(always)]
fn memo_cell<const E: bool, const B: bool>(e: &mut i128, b: &mut i128, it: &mut Item, n: u64, y: u64, sx0: u64, sx1: u64) {
    debug_assert_eq!(it.n, n);
    // wrapping: no overflow check, none possible within the bounds of `unit_listed`
    let (s0, s1) = (sx0.wrapping_add(y), sx1.wrapping_add(y));
    let nn = n.wrapping_mul(n).wrapping_mul(2);
    let top = nn.wrapping_sub(n.wrapping_mul(2));
    // a present cell: n >= 1, so both tops below are positive
    let b1 = if B { fixed_quot_nz(nn, s1) } else { 0 };
    let e1 = if E && n > 1 { fixed_quot_nz(top, s1.wrapping_sub(2)) } else { 0 };
    let (b0, e0) = if it.s as u64 == s0 {
        (it.memo_b(), it.memo_e())
    } else {
        (if B { fixed_quot_nz(nn, s0) } else { 0 }, if E && n > 1 { fixed_quot_nz(top, s0.wrapping_sub(2)) } else { 0 })
    };
    *b = b.wrapping_add(b1).wrapping_sub(b0);
    *e = e.wrapping_add(e1).wrapping_sub(e0);
    it.set_memo(s1, b1, e1);
}

#[derive(Clone, Default, Debug)]
pub struct Core {
    pub sides: [Vec<Cluster>; 2],
    pub cells: HashMap<u64, u64>,
    pub sums: Sums,
    pub fspecs: Vec<FSpec>,
    /// the tracked F sums over the settled cells: read them with [`Core::f_sums`]
    fsums: Vec<i128>,
    /// every tracked spec has `beta == 1`: settling computes the terms by [`unit_move`], the
    /// kinds tracked (ELM, BCubed) in `want`
    all_unit: bool,
    want: [bool; 2],
    unsettled: Unsettled,
    /// the side terms of each cluster at its last move, on a side of few clusters
    side_memo: SideMemo,
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

/// This side's clusters and the other side's, both mutable.
#[inline]
fn own_other(sides: &mut [Vec<Cluster>; 2], side: usize) -> (&mut Vec<Cluster>, &mut Vec<Cluster>) {
    let [rows, cols] = sides;
    if side == 0 {
        (rows, cols)
    } else {
        (cols, rows)
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
    /// below the bound) to cell `(t, p)`. O(1), with tracked F-scores too (the F sums are
    /// settled at the next reading); a cluster crossing the big/small threshold settles first.
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
            let un = &mut self.unsettled;
            let fresh = [un.add(0, t, a0), un.add(1, p, b0)];
            un.cells.entry(k).or_insert(n0);
            // a big end noted now will be settled at the next reading: its listing starts its
            // way into the cache, while the caller works between this update and that reading
            for (side, x) in [(0, t), (1, p)] {
                if let Some(b) = self.sides[side][x as usize].big.as_deref().filter(|_| fresh[side]) {
                    b.listed.prefetch();
                }
            }
        }
        let both_before = self.both_near(t, p);
        if track {
            self.list_cell(t, p, n1);
        }
        if n1 == 0 {
            self.cells.remove(&k);
        } else {
            self.cells.insert(k, n1);
        }
        let s = &mut self.sums;
        s.n += d as i128;
        s.cell_sq += (n1 as i128) * (n1 as i128) - (n0 as i128) * (n0 as i128);
        s.cell_xlogx += xlogx_c(n1) - xlogx_c(n0);
        s.cells += (n1 > 0) as i128 - (n0 > 0) as i128;
        s.k[TRUE] += (a1 > 0) as i128 - (a0 > 0) as i128;
        s.k[PRED] += (b1 > 0) as i128 - (b0 > 0) as i128;
        self.move_side(TRUE, t, p, n0, n1);
        self.move_side(PRED, p, t, n0, n1);
        self.sums.both_singletons += self.both_near(t, p) - both_before;
        self.reclass(0, t);
        self.reclass(1, p);
        if track && self.unsettled.cells.len() > 4096 + 2 * self.cells.len() {
            self.settle(); // cells come and go unread (a window): keep the notes bounded
        }
    }

    /// Change cell (x, y) of cluster `x` on `side` from `n0` to `n1`: its list, size, squares,
    /// largest cell and the side's sums.
    fn move_side(&mut self, side: usize, x: u32, y: u32, n0: u64, n1: u64) {
        let cells = &self.cells;
        let len = self.sides[side].len();
        let cl = &mut self.sides[side][x as usize];
        let (s0, q0, m0) = (cl.size, cl.sq, cl.max);
        let before = self.side_memo.terms(side, x, len, s0, q0, m0);
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
                    if cl.cells.len() == cl.cells.capacity() {
                        // four more cells, rather than twice as many: a small cluster holds at
                        // most `BIG_AT + 1` cells, and a doubled array's slack would cost a
                        // table of ten cells per cluster about 10 bytes a cell more
                        cl.cells.reserve_exact(4);
                    }
                    cl.cells.push((y, sat(n1)));
                } else {
                    let i = cl.cells.iter().position(|e| e.0 == y).expect("cell listed");
                    if n1 == 0 {
                        cl.cells.swap_remove(i);
                    } else {
                        cl.cells[i].1 = (cl.cells[i].1 & !KEPT_MAX) | sat(n1);
                    }
                }
                if n1 > m0 {
                    n1
                } else if n0 == m0 && n1 < n0 {
                    cl.cells.iter().map(|&(z, c)| Cluster::count(cells, side, x, z, c)).max().unwrap_or(0)
                } else {
                    m0
                }
            }
        };
        cl.size = s1;
        cl.sq = q1;
        cl.max = m1;
        if s1 == 0 && cl.big.is_none() {
            cl.cells = SmallVec::new();
        }
        let after = self.side_memo.terms(side, x, len, s1, q1, m1);
        let sums = &mut self.sums.side[side];
        *sums += after - before;
    }

    /// Elements alone in both their clusters, among the cells of row `t` and column `p`.
    fn both_near(&self, t: u32, p: u32) -> i128 {
        let (rows, cols) = (&self.sides[0], &self.sides[1]);
        let mut found = 0;
        let rt = rows.get(t as usize).map_or(0, |c| c.size);
        if rt == 1 {
            let j = rows[t as usize].cells[0].0;
            found += (cols[j as usize].size == 1) as i128;
        }
        if cols.get(p as usize).map_or(0, |c| c.size) == 1 {
            let i = cols[p as usize].cells[0].0;
            if i != t || rt != 1 {
                found += (rows[i as usize].size == 1) as i128;
            }
        }
        found
    }

    /// Move the F sums from every cell's settled terms to its current ones: O(cells of the
    /// unsettled small clusters + groups and listed cells of the unsettled big ones + changed
    /// cells) · specs, and O(1) when nothing changed. Each present cell with an unsettled end
    /// is visited once: from a small unsettled end (from the row when both are small), else
    /// from the row. The cells of unsettled small clusters leave their grouped partners' groups
    /// (keyed by settled count and size) first, so those groups then hold settled partners only.
    /// No allocation (once the notes' arrays fit the clusters: they are sized here); no
    /// cell-map lookup for a cell whose ends are settled (a small cluster keeps its cells'
    /// counts beside its partners, a big one lists them), one for a cell whose both ends are
    /// unsettled (its settled count).
    pub fn settle(&mut self) {
        if self.tracking() {
            self.unsettled.fit([self.sides[0].len(), self.sides[1].len()]);
        }
        if self.unsettled.is_empty() {
            return;
        }
        let un = &self.unsettled; // borrowed beside the clusters, never moved (a copy of its arrays' headers)
        let f = &mut self.fsums;
        let ctx = FCtx { specs: &self.fspecs, all_unit: self.all_unit, want: self.want };
        // the unit specs' changes, by kind (ELM, BCubed), added to `f` at the end
        let mut acc = [0i128; 2];
        let cells = &self.cells;
        // the cells of unsettled small clusters leave their grouped partners' groups
        for side in 0..2 {
            let (own, other) = own_other(&mut self.sides, side);
            for &x in &un.list[side] {
                let cl = &own[x as usize];
                if cl.big.is_some() {
                    continue;
                }
                let sx0 = un.old[side][x as usize];
                for &(z, c) in cl.cells.iter() {
                    if let Some(ob) = other[z as usize].big.as_deref_mut().filter(|b| b.grouped) {
                        let k = skey(side, x, z);
                        let n0 = un.count(1 - side, z, k, Cluster::count(cells, side, x, z, c));
                        if n0 > 0 {
                            dec(&mut ob.groups, (n0, sx0), 1);
                        }
                    }
                }
            }
        }
        // cells gone since: their settled terms leave the sums, and a grouped end's groups
        for (&k, &n0) in un.cells.iter() {
            if n0 == 0 || cells.contains_key(&k) {
                continue;
            }
            let ends = [(k >> 32) as u32, k as u32];
            let s0 = [un.old[0][ends[0] as usize], un.old[1][ends[1] as usize]];
            for (fi, spec) in f.iter_mut().zip(ctx.specs.iter()) {
                *fi -= spec.term(n0, s0[0], s0[1]);
            }
            for side in 0..2 {
                let (x, z) = (ends[side], ends[1 - side]);
                if self.sides[side][x as usize].big.is_none() {
                    if let Some(ob) = self.sides[1 - side][z as usize].big.as_deref_mut().filter(|b| b.grouped) {
                        dec(&mut ob.groups, (n0, s0[side]), 1);
                    }
                }
            }
        }
        // unsettled big clusters: their groups (settled partners only now) and listed cells
        for side in 0..2 {
            let (own, other) = own_other(&mut self.sides, side);
            for &x in &un.list[side] {
                let cl = &mut own[x as usize];
                let size = cl.size;
                let Some(b) = cl.big.as_deref_mut() else { continue };
                let (sx0, sx1) = (un.old[side][x as usize], size);
                if sx0 != sx1 {
                    for (&(c, sz), &m) in b.groups.iter() {
                        ctx.delta(&mut acc, f, side, c, sx0, sx1, sz, m);
                    }
                }
                ctx.listed(un, &mut acc, f, side, x, &mut b.listed, other, (sx0, sx1));
            }
        }
        // unsettled small clusters: each cell, and back into grouped partners' groups
        for side in 0..2 {
            let (own, other) = own_other(&mut self.sides, side);
            for &x in &un.list[side] {
                let cl = &mut own[x as usize];
                if cl.big.is_some() {
                    continue;
                }
                let sx = (un.old[side][x as usize], cl.size);
                let partners: &mut [(u32, u32)] = &mut cl.cells;
                match ctx.want {
                    [true, true] => ctx.small_k::<true, true>(un, &mut acc, f, side, x, partners, other, cells, sx),
                    [true, false] => ctx.small_k::<true, false>(un, &mut acc, f, side, x, partners, other, cells, sx),
                    [false, true] => ctx.small_k::<false, true>(un, &mut acc, f, side, x, partners, other, cells, sx),
                    [false, false] => ctx.small_k::<false, false>(un, &mut acc, f, side, x, partners, other, cells, sx),
                }
            }
        }
        if ctx.all_unit {
            for (fi, spec) in f.iter_mut().zip(ctx.specs.iter()) {
                *fi += acc[(spec.kind == Kind::Bcubed) as usize];
            }
        }
        self.unsettled.clear();
    }

    /// The tracked F sums, after a [`Core::settle`] (asserted: unsettled sums are not the
    /// sums). O(1).
    pub fn f_sums(&self) -> &[i128] {
        assert!(self.unsettled.is_empty(), "F sums read before settling");
        &self.fsums
    }

    /// The tracked F sums as [`Core::settle`] would leave them, without settling: for readers
    /// that may not change the state (checks, tests). O(1) when settled, else O(state): a copy
    /// is settled.
    pub fn f_sums_now(&self) -> Vec<i128> {
        if self.unsettled.is_empty() {
            return self.fsums.clone();
        }
        let mut c = self.clone();
        c.settle();
        c.fsums
    }

    fn is_big(&self, side: usize, x: u32) -> bool {
        self.sides[side].get(x as usize).is_some_and(|c| c.big.is_some())
    }

    /// Cell (t, p) now holds `n` elements (0: it goes): the lists of its big ends that list it
    /// (a big cluster lists its cells but those a grouped one keeps in its groups). O(1).
    fn list_cell(&mut self, t: u32, p: u32, n: u64) {
        let bigs = [self.is_big(0, t), self.is_big(1, p)];
        for (side, x, y) in [(0, t, p), (1, p, t)] {
            if !bigs[side] {
                continue;
            }
            let b = self.sides[side][x as usize].big.as_deref_mut().expect("big");
            if b.grouped && !bigs[1 - side] {
                continue;
            }
            if n > 0 {
                b.listed.insert(y, n);
            } else {
                b.listed.remove(y);
            }
        }
    }

    /// Make cluster `x` of `side` big or small when its number of cells crossed a threshold.
    /// With tracked F-scores the F sums are settled first when a grouping is involved (the
    /// groups are kept in settled terms): `x` is or becomes grouped, or a partner is grouped.
    /// Otherwise settling reads only current structure (listings hold current counts; the
    /// settled counts and sizes are in [`Unsettled`]), and `x` changes class unsettled: O(1)
    /// beside the class change's own O(cells of `x`).
    fn reclass(&mut self, side: usize, x: u32) {
        let cl = &self.sides[side][x as usize];
        let nc = cl.ncells();
        match cl.big.as_deref() {
            None if nc > BIG_AT => {
                if nc > GROUP_AT || self.partner_grouped(side, x) {
                    self.settle();
                }
                self.promote(side, x);
            }
            Some(_) if nc < SMALL_AT => {
                if self.partner_grouped(side, x) {
                    self.settle();
                }
                self.demote(side, x);
            }
            Some(b) if b.grouped != (if b.grouped { nc >= UNGROUP_AT } else { nc > GROUP_AT }) => {
                self.settle();
                let b = self.sides[side][x as usize].big.as_deref_mut().expect("big");
                b.grouped = !b.grouped;
                if self.tracking() {
                    self.regroup_one(side, x);
                }
            }
            _ => {}
        }
    }

    /// Whether a partner of cluster `x` of `side` keeps its cells grouped. O(cells of `x`).
    fn partner_grouped(&self, side: usize, x: u32) -> bool {
        let other = &self.sides[1 - side];
        self.sides[side][x as usize]
            .others()
            .any(|z| other[z as usize].big.as_deref().is_some_and(|b| b.grouped))
    }

    fn promote(&mut self, side: usize, x: u32) {
        let track = self.tracking();
        let cells = &self.cells;
        let [rows, cols] = &mut self.sides;
        let (own, other) = if side == 0 { (rows, cols) } else { (cols, rows) };
        let cl = &mut own[x as usize];
        // room for 32 distinct counts: the histogram's keys come and go as counts grow, and a
        // full table would rehash (in place, O(capacity)) every few updates
        let mut b = Big { grouped: cl.cells.len() > GROUP_AT, hist: HashMap::with_capacity(32), ..Big::default() };
        let size = cl.size;
        // the counts from the cell map: a bulk add leaves a list it makes big with stale ones
        for (z, _) in std::mem::take(&mut cl.cells) {
            let c = cells[&skey(side, x, z)];
            b.set.insert(z);
            *b.hist.entry(c).or_insert(0) += 1;
            if track {
                let oz = &mut other[z as usize];
                match oz.big.as_deref_mut() {
                    Some(ob) => {
                        if ob.grouped {
                            // a grouped partner kept this cell in its groups while x was small
                            dec(&mut ob.groups, (c, size), 1);
                            ob.listed.insert(x, c);
                        }
                        b.listed.insert(z, c);
                    }
                    None if b.grouped => inc(&mut b.groups, (c, oz.size), 1),
                    None => {
                        b.listed.insert(z, c);
                    }
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
            let c = cells[&skey(side, x, z)];
            cl.cells.push((z, sat(c)));
            if track {
                // a grouped partner takes this cell into its groups; a listing one keeps it
                if let Some(ob) = other[z as usize].big.as_deref_mut().filter(|b| b.grouped) {
                    ob.listed.remove(x);
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
                self.regroup_one(side, x as u32);
            }
        }
    }

    /// Start tracking `spec` (idempotence is the caller's): O(cells) once.
    pub fn track(&mut self, spec: FSpec) {
        self.settle();
        let first = self.fspecs.is_empty();
        let mut total = 0i128;
        for (&k, &c) in self.cells.iter() {
            let (t, p) = ((k >> 32) as usize, (k & 0xffff_ffff) as usize);
            total += spec.term(c, self.sides[0][t].size, self.sides[1][p].size);
        }
        self.fspecs.push(spec);
        self.fsums.push(total);
        self.all_unit = self.fspecs.iter().all(FSpec::is_unit);
        let want = [Kind::Elm, Kind::Bcubed].map(|k| self.fspecs.iter().any(|s| s.kind == k));
        if first {
            self.want = want;
            self.build_groups();
        } else if want != self.want {
            // the listings' memos hold the kinds tracked until now only
            self.want = want;
            for cl in self.sides.iter_mut().flatten() {
                if let Some(b) = cl.big.as_deref_mut() {
                    b.listed.forget();
                }
            }
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
                cl.cells.push((y, sat(n1)));
            } else if cl.cells.len() <= BIG_AT {
                cl.set_count(y, n1); // (a longer list is made big, from the cell map)
            }
            cl.size += c;
            cl.sq += dsq;
            cl.max = cl.max.max(n1);
        }
    }

    /// Add positive counts to cells `(row, col, count)` in bulk, then [`Core::rebuild`]: the same
    /// state as adding them one by one. Each structure is touched in the order of its own memory
    /// rather than the cells': the cell map in the order of its hash buckets, the rows by id, the
    /// columns by id; into an empty table, cells sorted by `(row, col)` are filled record by
    /// record (`fill_sorted`). O(cells given + cells held).
    pub fn add_cells(&mut self, cells: &[(u32, u32, u64)]) {
        if self.cells.is_empty() && cells.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)) {
            self.fill_sorted(cells);
            return;
        }
        self.flatten();
        if cells.is_empty() {
            self.rebuild();
            return;
        }
        let (mt, mp) = self.ensure_ids(cells);
        let n0 = self.upsert_cells(cells, false);
        for side in 0..2 {
            let id_bits = 32 - if side == 0 { mt } else { mp }.leading_zeros();
            let ordered = if side == 0 {
                cells.windows(2).all(|w| w[0].0 <= w[1].0)
            } else {
                cells.windows(2).all(|w| w[0].1 <= w[1].1)
            };
            let own = &mut self.sides[side];
            let mut visit = |x: u32, y: u32, c: u64, a: u64| {
                let b = a + c;
                let cl = &mut own[x as usize];
                if a == 0 {
                    cl.cells.push((y, sat(b)));
                } else if cl.cells.len() <= BIG_AT {
                    cl.set_count(y, b); // (a longer list is made big, from the cell map)
                }
                cl.size += c;
                cl.sq += (b as u128) * (b as u128) - (a as u128) * (a as u128);
                cl.max = cl.max.max(b);
            };
            if ordered {
                for (i, &(t, p, c)) in cells.iter().enumerate() {
                    let a = n0.as_ref().map_or(0, |v| v[i]);
                    if side == 0 {
                        visit(t, p, c, a);
                    } else {
                        visit(p, t, c, a);
                    }
                }
                continue;
            }
            if n0.is_none() {
                // (this side's id << 32 | the other's, count): 16 bytes a cell to sort
                let mut v: Vec<(u64, u64)> = cells
                    .iter()
                    .map(|&(t, p, c)| if side == 0 { (key(t, p), c) } else { (key(p, t), c) })
                    .collect();
                sort_by_bits(&mut v, 32 + id_bits.saturating_sub(LOCAL_BITS), 32 + id_bits);
                for (k, c) in v {
                    visit((k >> 32) as u32, k as u32, c, 0);
                }
                continue;
            }
            // (this side's id, (other side's id, count, count before)), in this side's order
            let mut v: Vec<(u64, (u32, u64, u64))> = cells
                .iter()
                .enumerate()
                .map(|(i, &(t, p, c))| {
                    let a = n0.as_ref().map_or(0, |v| v[i]);
                    if side == 0 {
                        (t as u64, (p, c, a))
                    } else {
                        (p as u64, (t, c, a))
                    }
                })
                .collect();
            sort_by_bits(&mut v, id_bits.saturating_sub(LOCAL_BITS), id_bits);
            for (x, (y, c, a)) in v {
                visit(x as u32, y, c, a);
            }
        }
        // into an empty table, the cells given are the table's, each once
        let fresh = n0.is_none();
        self.rebuild_with(if fresh { Some(cells) } else { None });
    }

    /// Fill an empty table with `cells` sorted by `(row, col)`, each once: the state of
    /// [`Core::add_cells`] (each cluster lists its cells in ascending order of the other side),
    /// built record by record in two sequential passes instead of cell by cell: the rows from
    /// the runs of the cells, the columns from a stable radix sort of the cells by column, and
    /// every sum from the same passes. O(cells + clusters); 32 bytes of scratch a cell.
    fn fill_sorted(&mut self, cells: &[(u32, u32, u64)]) {
        self.insert_distinct(cells);
        let mut s = Sums::default();
        let mut memo = TermsMemo::new();
        let mut over: Vec<(usize, u32)> = Vec::new(); // clusters to make big
        let rows = &mut self.sides[0];
        rows.clear();
        rows.reserve_exact(cells.last().map_or(0, |c| c.0 as usize + 1));
        for run in cells.chunk_by(|a, b| a.0 == b.0) {
            for &(_, _, c) in run {
                s.n += c as i128;
                s.cell_sq += (c as i128) * (c as i128);
                s.cell_xlogx += xlogx_c(c);
            }
            let t = run[0].0;
            rows.resize_with(t as usize, Cluster::default);
            let cl = Cluster::of_cells(run.iter().map(|&(_, p, c)| (p, c)));
            s.k[TRUE] += 1;
            s.add_side(TRUE, memo.terms(cl.size, cl.sq, cl.max));
            if cl.cells.len() > BIG_AT {
                over.push((0, t));
            }
            rows.push(cl);
        }
        s.cells = cells.len() as i128;
        // (col << 32 | row, count), sorted by column; stable, so each column's rows ascend
        let mut by_col: Vec<(u64, u64)> = cells.iter().map(|&(t, p, c)| (key(p, t), c)).collect();
        let col_bits = 32 - by_col.iter().map(|e| (e.0 >> 32) as u32).max().unwrap_or(0).leading_zeros();
        sort_by_bits(&mut by_col, 32, 32 + col_bits);
        let [rows, cols] = &mut self.sides;
        cols.clear();
        cols.reserve_exact(by_col.last().map_or(0, |e| (e.0 >> 32) as usize + 1));
        for run in by_col.chunk_by(|a, b| a.0 >> 32 == b.0 >> 32) {
            let p = (run[0].0 >> 32) as u32;
            cols.resize_with(p as usize, Cluster::default);
            let cl = Cluster::of_cells(run.iter().map(|&(k, c)| (k as u32, c)));
            s.k[PRED] += 1;
            s.add_side(PRED, memo.terms(cl.size, cl.sq, cl.max));
            // an element alone in both its clusters: a column of size 1 whose row has size 1
            if cl.size == 1 {
                s.both_singletons += (rows[run[0].0 as u32 as usize].size == 1) as i128;
            }
            if cl.cells.len() > BIG_AT {
                over.push((1, p));
            }
            cols.push(cl);
        }
        drop(by_col);
        for (side, x) in over {
            self.promote(side, x);
        }
        if self.tracking() {
            self.build_groups();
        }
        self.fsums = self.f_sums_over(cells.iter().copied());
        self.unsettled.clear();
        self.sums = s;
    }

    /// Make room for the largest row and column ids of `cells`; return them. O(cells).
    fn ensure_ids(&mut self, cells: &[(u32, u32, u64)]) -> (u32, u32) {
        let (mut mt, mut mp) = (0u32, 0u32);
        for &(t, p, _) in cells {
            mt = mt.max(t);
            mp = mp.max(p);
        }
        self.ensure(0, mt);
        self.ensure(1, mp);
        (mt, mp)
    }

    /// Add positive counts to cells `(row, col, count)` of a non-empty table without a rebuild:
    /// only the clusters the cells touch and their cells are visited. Their shares of every sum
    /// are taken out, the cells and clusters changed, the groups of big clusters next to them
    /// mended, and their shares added back: the same state as adding the cells one by one.
    /// O(cells given + cells of the touched clusters), plus O(clusters) for two marks.
    #[allow(clippy::needless_range_loop)] // both sides, the same code
    pub fn add_incremental(&mut self, cells: &[(u32, u32, u64)]) {
        self.settle();
        self.ensure_ids(cells);
        let track = self.tracking();
        // the touched clusters of each side, listed once, and marked
        let mut touched: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        let mut mark: [Vec<bool>; 2] = [vec![false; self.sides[0].len()], vec![false; self.sides[1].len()]];
        for &(t, p, _) in cells {
            for (side, x) in [(0, t), (1, p)] {
                if !mark[side][x as usize] {
                    mark[side][x as usize] = true;
                    touched[side].push(x);
                }
            }
        }
        // take out the touched clusters' shares
        let both0 = self.both_touched(&touched, &mark);
        let f0 = if track { self.f_touched(&touched, &mark) } else { Vec::new() };
        for side in 0..2 {
            for &x in &touched[side] {
                let cl = &self.sides[side][x as usize];
                if cl.size > 0 {
                    let terms = side_terms(cl.size, cl.sq, cl.max);
                    self.sums.side[side] -= terms;
                    self.sums.k[side] -= 1;
                }
            }
        }
        if track {
            // a touched small cluster's cells leave the groups of untouched big partners
            self.group_shares(&touched, &mark, false);
        }
        // the cells (in the order of the map's buckets), then the cluster records
        let n0 = self.upsert_cells(cells, true).expect("counts before");
        for (&(t, p, c), &a) in cells.iter().zip(n0.iter()) {
            let b = a + c;
            let s = &mut self.sums;
            s.n += c as i128;
            s.cells += (a == 0) as i128;
            s.cell_sq += (b as i128) * (b as i128) - (a as i128) * (a as i128);
            s.cell_xlogx += xlogx_c(b) - xlogx_c(a);
            for (side, x, y) in [(0, t, p), (1, p, t)] {
                let cl = &mut self.sides[side][x as usize];
                cl.size += c;
                cl.sq += (b as u128) * (b as u128) - (a as u128) * (a as u128);
                cl.max = cl.max.max(b);
                match cl.big.as_deref_mut() {
                    None => {
                        if a == 0 {
                            cl.cells.push((y, sat(b)));
                        } else if cl.cells.len() <= BIG_AT {
                            cl.set_count(y, b); // (a longer list is made big, from the cell map)
                        }
                    }
                    Some(bg) => {
                        if a == 0 {
                            bg.set.insert(y);
                        } else {
                            let v = bg.hist.get_mut(&a).expect("hist");
                            *v -= 1;
                            if *v == 0 {
                                bg.hist.remove(&a);
                            }
                        }
                        *bg.hist.entry(b).or_insert(0) += 1;
                    }
                }
            }
        }
        if track {
            // touched big clusters regroup from their cells; untouched big partners of touched
            // small clusters take those cells back with their new counts and sizes
            for side in 0..2 {
                for &x in &touched[side] {
                    if self.sides[side][x as usize].big.is_some() {
                        self.regroup_one(side, x);
                    }
                }
            }
            self.group_shares(&touched, &mark, true);
        }
        for side in 0..2 {
            for &x in &touched[side] {
                self.reclass(side, x);
            }
        }
        // add the touched clusters' shares back
        for side in 0..2 {
            for &x in &touched[side] {
                let cl = &self.sides[side][x as usize];
                let terms = side_terms(cl.size, cl.sq, cl.max);
                self.sums.side[side] += terms;
                self.sums.k[side] += 1;
            }
        }
        self.sums.both_singletons += self.both_touched(&touched, &mark) - both0;
        if track {
            let f1 = self.f_touched(&touched, &mark);
            for i in 0..self.fsums.len() {
                self.fsums[i] += f1[i] - f0[i];
            }
        }
    }

    /// The count of the cell between cluster `x` of `side` and `z` of the other side.
    #[inline]
    fn cell_of(&self, side: usize, x: u32, z: u32) -> u64 {
        self.cells[&skey(side, x, z)]
    }

    /// Elements alone in both their clusters whose row or column is touched.
    fn both_touched(&self, touched: &[Vec<u32>; 2], mark: &[Vec<bool>; 2]) -> i128 {
        let (rows, cols) = (&self.sides[0], &self.sides[1]);
        let mut found = 0;
        for &x in &touched[0] {
            if rows[x as usize].size == 1 {
                let y = rows[x as usize].cells[0].0;
                found += (cols[y as usize].size == 1) as i128;
            }
        }
        for &y in &touched[1] {
            if cols[y as usize].size == 1 {
                let x = cols[y as usize].cells[0].0;
                found += (!mark[0][x as usize] && rows[x as usize].size == 1) as i128;
            }
        }
        found
    }

    /// Each tracked F sum over the cells whose row or column is touched. The cells' counts are
    /// read from the map in the order of its buckets.
    #[allow(clippy::needless_range_loop)] // both sides, the same code
    fn f_touched(&self, touched: &[Vec<u32>; 2], mark: &[Vec<bool>; 2]) -> Vec<i128> {
        let mut keys: Vec<u64> = Vec::new();
        for side in 0..2 {
            for &x in &touched[side] {
                for z in self.sides[side][x as usize].others() {
                    if side == 1 && mark[0][z as usize] {
                        continue; // counted from its row
                    }
                    keys.push(skey(side, x, z));
                }
            }
        }
        let counts = self.lookup(&keys);
        let (rows, cols) = (&self.sides[0], &self.sides[1]);
        let mut out = vec![0i128; self.fspecs.len()];
        for (&k, &c) in keys.iter().zip(counts.iter()) {
            let (a, b) = (rows[(k >> 32) as usize].size, cols[(k & 0xffff_ffff) as usize].size);
            for (f, spec) in out.iter_mut().zip(self.fspecs.iter()) {
                *f += spec.term(c, a, b);
            }
        }
        out
    }

    /// The counts of present cells `keys`, looked up in the order of the map's buckets.
    fn lookup(&self, keys: &[u64]) -> Vec<u64> {
        use std::hash::BuildHasher;
        let mut out = vec![0u64; keys.len()];
        let buckets = (self.cells.capacity() / 7 * 8).max(1).next_power_of_two() as u64;
        let mask_bits = buckets.trailing_zeros().min(32);
        let mask = (1u64 << mask_bits) - 1;
        let hb = self.cells.hasher();
        let mut order: Vec<u64> = keys.iter().enumerate().map(|(i, &k)| ((hb.hash_one(k) & mask) << 32) | i as u64).collect();
        sort_bits(&mut order, 32 + mask_bits.saturating_sub(LOCAL_BITS), 32 + mask_bits);
        for o in order {
            let i = o as u32 as usize;
            out[i] = self.cells[&keys[i]];
        }
        out
    }

    /// Take out (`add` false) or put back the cells of touched small clusters in the groups of
    /// their untouched big partners.
    #[allow(clippy::needless_range_loop)] // both sides, the same code
    fn group_shares(&mut self, touched: &[Vec<u32>; 2], mark: &[Vec<bool>; 2], add: bool) {
        for side in 0..2 {
            for &x in &touched[side] {
                let cells = &self.cells;
                let [rows, cols] = &mut self.sides;
                let (own, other) = if side == 0 { (rows, cols) } else { (cols, rows) };
                let cl = &own[x as usize];
                if cl.big.is_some() {
                    continue;
                }
                for &(z, _) in cl.cells.iter() {
                    if mark[1 - side][z as usize] {
                        continue; // a touched big partner regroups from scratch
                    }
                    if let Some(ob) = other[z as usize].big.as_deref_mut().filter(|b| b.grouped) {
                        let c = cells[&skey(side, x, z)];
                        if add {
                            inc(&mut ob.groups, (c, cl.size), 1);
                        } else {
                            dec(&mut ob.groups, (c, cl.size), 1);
                        }
                    }
                }
            }
        }
    }

    /// Rebuild the groups and list of big cluster `x` of `side` from its cells.
    fn regroup_one(&mut self, side: usize, x: u32) {
        let (groups, listed) = self.groups_of(side, x);
        let b = self.sides[side][x as usize].big.as_deref_mut().expect("big");
        b.groups = groups;
        b.listed = listed;
    }

    /// The groups and list big cluster `x` of `side` holds from its cells. O(cells).
    #[allow(clippy::type_complexity)]
    fn groups_of(&self, side: usize, x: u32) -> (HashMap<(u64, u64), u64>, Listing) {
        let cl = &self.sides[side][x as usize];
        let grouped = cl.big.as_deref().is_some_and(|b| b.grouped);
        let mut groups = HashMap::new();
        let mut listed = Listing::default();
        for z in cl.others() {
            let oz = &self.sides[1 - side][z as usize];
            let c = self.cell_of(side, x, z);
            if grouped && oz.big.is_none() {
                inc(&mut groups, (c, oz.size), 1);
            } else {
                listed.insert(z, c);
            }
        }
        (groups, listed)
    }

    /// Put `cells` into the empty cell map, each key once (the caller checked), visiting the
    /// map's buckets in order: the cells are first scattered by the top [`FILL_RANGE_BITS`] bits
    /// of their bucket, so a million cells cost a sweep rather than a million cache misses, and
    /// no insert compares keys. O(cells); 18 bytes of scratch a cell.
    fn insert_distinct(&mut self, cells: &[(u32, u32, u64)]) {
        use std::hash::BuildHasher;
        debug_assert!(self.cells.is_empty());
        self.cells.reserve(cells.len());
        // hashbrown puts a hash in bucket `hash & (buckets - 1)`; buckets = capacity * 8 / 7
        let buckets = (self.cells.capacity() / 7 * 8).max(1).next_power_of_two() as u64;
        let bits = buckets.trailing_zeros();
        let shift = bits.saturating_sub(FILL_RANGE_BITS);
        let hb = self.cells.hasher();
        let digits: Vec<u16> = cells
            .iter()
            .map(|&(t, p, _)| ((hb.hash_one(key(t, p)) & (buckets - 1)) >> shift) as u16)
            .collect();
        let ordered = scatter(cells, &digits, 1 << bits.min(FILL_RANGE_BITS), |&(t, p, c)| (key(t, p), c));
        drop(digits);
        for (k, c) in ordered {
            // SAFETY: the map was empty and the caller gives each key once
            unsafe { self.cells.insert_unique_unchecked(k, c) };
        }
    }

    /// Add the counts to the cell map, visiting its hash buckets in order; each cell's count
    /// before its addition (None: the map was empty, every count was 0).
    fn upsert_cells(&mut self, cells: &[(u32, u32, u64)], record: bool) -> Option<Vec<u64>> {
        use std::hash::BuildHasher;
        let was_empty = self.cells.is_empty() && !record;
        self.cells.reserve(cells.len());
        // hashbrown puts a hash in bucket `hash & (buckets - 1)`; buckets = capacity * 8 / 7
        let buckets = (self.cells.capacity() / 7 * 8).max(1).next_power_of_two() as u64;
        let mask_bits = buckets.trailing_zeros().min(32);
        let mask = (1u64 << mask_bits) - 1;
        let hb = self.cells.hasher();
        if was_empty {
            let mut v: Vec<(u64, (u64, u64))> = cells
                .iter()
                .map(|&(t, p, c)| {
                    let k = key(t, p);
                    (hb.hash_one(k) & mask, (k, c))
                })
                .collect();
            sort_by_bits(&mut v, mask_bits.saturating_sub(LOCAL_BITS), mask_bits);
            let mut dup = false;
            for (_, (k, c)) in v {
                let e = self.cells.entry(k).or_insert(0);
                dup |= *e != 0;
                *e += c;
            }
            if dup {
                // a cell given twice (two labels found equal): count from the map again
                self.cells.clear();
                return self.upsert_cells(cells, true);
            }
            return None;
        }
        let mut order: Vec<u64> = cells
            .iter()
            .enumerate()
            .map(|(i, &(t, p, _))| ((hb.hash_one(key(t, p)) & mask) << 32) | i as u64)
            .collect();
        sort_bits(&mut order, 32 + mask_bits.saturating_sub(LOCAL_BITS), 32 + mask_bits);
        let mut n0 = vec![0u64; cells.len()];
        for o in order {
            let i = o as u32 as usize;
            let (t, p, c) = cells[i];
            let e = self.cells.entry(key(t, p)).or_insert(0);
            n0[i] = *e;
            *e += c;
        }
        Some(n0)
    }

    /// Recompute every class, group and sum from the cells and the cluster records. O(cells).
    pub fn rebuild(&mut self) {
        self.rebuild_with(None);
    }

    /// [`Core::rebuild`]; `cells`, when given, are every cell of the table, each once (read
    /// in their order instead of the map's).
    fn rebuild_with(&mut self, cells: Option<&[(u32, u32, u64)]>) {
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
        let (sums, fsums) = match cells {
            Some(cells) => self.sums_over(cells.iter().copied()),
            None => self.compute_sums(),
        };
        self.sums = sums;
        self.fsums = fsums;
        self.unsettled.clear();
    }

    /// Turn every big cluster back into a plain list, before a bulk add.
    pub fn flatten(&mut self) {
        let cells = &self.cells;
        for side in 0..2 {
            for (x, cl) in self.sides[side].iter_mut().enumerate() {
                if let Some(b) = cl.big.take() {
                    // a list longer than `BIG_AT` is made big again after the bulk add, its
                    // counts read from the cell map then: none needed here
                    let short = b.set.len() <= BIG_AT;
                    cl.cells = b
                        .set
                        .into_iter()
                        .map(|z| (z, if short { sat(cells[&skey(side, x as u32, z)]) } else { 0 }))
                        .collect();
                }
            }
        }
    }

    /// Every sum recomputed from the cells and the cluster records. O(cells).
    pub fn compute_sums(&self) -> (Sums, Vec<i128>) {
        self.sums_over(self.cells.iter().map(|(&k, &c)| ((k >> 32) as u32, k as u32, c)))
    }

    /// [`Core::compute_sums`] with the cells given as `(row, col, count)`, each once (in the
    /// order of the rows, the rows' records are read in order).
    fn sums_over(&self, cells: impl Iterator<Item = (u32, u32, u64)>) -> (Sums, Vec<i128>) {
        let mut s = Sums::default();
        let fsums = self.f_sums_over(cells.inspect(|&(_, _, c)| {
            s.n += c as i128;
            s.cells += 1;
            s.cell_sq += (c as i128) * (c as i128);
            s.cell_xlogx += xlogx_c(c);
        }));
        let cols = &self.sides[1];
        let mut memo = TermsMemo::new();
        for side in 0..2 {
            for cl in self.sides[side].iter() {
                if cl.size == 0 {
                    continue;
                }
                s.k[side] += 1;
                s.add_side(side, memo.terms(cl.size, cl.sq, cl.max));
                // an element alone in both its clusters: a row of size 1 whose column has size 1
                if side == 0 && cl.size == 1 {
                    let p = cl.others().next().expect("a cell");
                    s.both_singletons += (cols[p as usize].size == 1) as i128;
                }
            }
        }
        (s, fsums)
    }

    /// Each tracked F sum over the cells given as `(row, col, count)`, each once (the cells
    /// are read whether or not an F-score is tracked). O(cells · tracked F-scores).
    fn f_sums_over(&self, cells: impl Iterator<Item = (u32, u32, u64)>) -> Vec<i128> {
        let mut fsums = vec![0i128; self.fspecs.len()];
        let (rows, cols) = (&self.sides[0], &self.sides[1]);
        for (t, p, c) in cells {
            if !self.fspecs.is_empty() {
                let (a, b) = (rows[t as usize].size, cols[p as usize].size);
                for (f, spec) in fsums.iter_mut().zip(self.fspecs.iter()) {
                    *f += spec.term(c, a, b);
                }
            }
        }
        fsums
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
        if !self.unsettled.is_empty() {
            let mut c = self.clone();
            c.settle(); // the groups are kept in settled terms
            return c.check();
        }
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
                        if (others.len() > GROUP_AT && !b.grouped) || (others.len() < UNGROUP_AT && b.grouped) {
                            return Err(format!("side {side} cluster {x}: grouped with {} cells", others.len()));
                        }
                        if self.tracking() {
                            let (groups, listed) = self.groups_of(side, x);
                            if groups != b.groups || listed != b.listed {
                                return Err(format!("side {side} cluster {x}: groups drifted"));
                            }
                            if let Some(it) = b.listed.items().iter().find(|it| !it.memo_ok(self.want)) {
                                return Err(format!("side {side} cluster {x}: cell {} memoised wrong terms", it.z));
                            }
                        }
                    }
                    None => {
                        if others.len() > BIG_AT {
                            return Err(format!("side {side} cluster {x} small with many cells"));
                        }
                        if let Some(&(z, _)) = cl.cells.iter().find(|&&(z, c)| c & KEPT_MAX != sat(self.cells[&skey(side, x, z)])) {
                            return Err(format!("side {side} cluster {x}: the kept count of cell {z} drifted"));
                        }
                    }
                }
            }
        }
        let (sums, fsums) = self.compute_sums();
        if sums != self.sums {
            return Err(format!("sums drifted: kept {:?}, recomputed {:?}", self.sums, sums));
        }
        if fsums != self.f_sums_now() {
            return Err("tracked F sums drifted".to_string());
        }
        Ok(())
    }
}

/// `items` mapped by `f`, stably grouped by their digits (`digits[i] < groups`): one counting
/// pass and one scatter, O(items + groups).
fn scatter<T, U>(items: &[T], digits: &[u16], groups: usize, f: impl Fn(&T) -> U) -> Vec<U> {
    assert_eq!(items.len(), digits.len());
    let mut at = vec![0usize; groups + 1];
    for &d in digits {
        at[d as usize + 1] += 1;
    }
    for g in 0..groups {
        at[g + 1] += at[g];
    }
    let mut out: Vec<U> = Vec::with_capacity(items.len());
    let dst = out.as_mut_ptr();
    for (x, &d) in items.iter().zip(digits) {
        let i = &mut at[d as usize];
        // SAFETY: the offsets partition 0..items.len() (counted from the same digits), so each
        // slot of out's allocation is written exactly once, in bounds
        unsafe { dst.add(*i).write(f(x)) };
        *i += 1;
    }
    // SAFETY: every slot below items.len() was just written
    unsafe { out.set_len(items.len()) };
    out
}

/// Sort `keys` (below `2**bits`), carrying `weights` along, by least-significant-digit radix
/// sort: O(N · bits / 11), no comparisons, two sequential sweeps a pass.
pub fn radix_sort(keys: &mut Vec<u64>, weights: &mut Option<Vec<u64>>, bits: u32) {
    match weights {
        None => sort_bits(keys, 0, bits),
        Some(w) => {
            // carry each weight by its index in the low bits of a second key
            let n = keys.len();
            let mut order: Vec<u64> = (0..n as u64).collect();
            let mut tagged: Vec<u64> = keys.clone();
            radix_sort_pairs(&mut tagged, &mut order, bits);
            let w2: Vec<u64> = order.iter().map(|&i| w[i as usize]).collect();
            *keys = tagged;
            *w = w2;
        }
    }
}

/// [`radix_sort`] carrying a second array of the same length.
fn radix_sort_pairs(keys: &mut Vec<u64>, vals: &mut Vec<u64>, bits: u32) {
    const B: u32 = 11;
    let n = keys.len();
    let mut kbuf = vec![0u64; n];
    let mut vbuf = vec![0u64; n];
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
        for (i, &k) in keys.iter().enumerate() {
            let b = ((k >> shift) & ((1 << B) - 1)) as usize;
            kbuf[off[b]] = k;
            vbuf[off[b]] = vals[i];
            off[b] += 1;
        }
        std::mem::swap(keys, &mut kbuf);
        std::mem::swap(vals, &mut vbuf);
        shift += B;
    }
}

/// Sort `keys` stably on their bits `lo..hi` only (the other bits ride along: put an index
/// below `lo`), by least-significant-digit radix passes of at most 11 bits. The counts of every
/// pass come from one read of the keys; a pass whose digit is the same for every key is skipped.
pub fn sort_bits(keys: &mut Vec<u64>, lo: u32, hi: u32) {
    let n = keys.len();
    if n < 2 || hi <= lo {
        return;
    }
    let passes = (hi - lo).div_ceil(11);
    let width = (hi - lo).div_ceil(passes); // even digits: 40 bits are 4 passes of 10
    let mask = (1u64 << width) - 1;
    let mut counts = vec![[0usize; 1 << 11]; passes as usize];
    for &k in keys.iter() {
        for (j, c) in counts.iter_mut().enumerate() {
            c[((k >> (lo + j as u32 * width)) & mask) as usize] += 1;
        }
    }
    let mut buf = vec![0u64; n];
    for (j, c) in counts.iter_mut().enumerate() {
        if c.contains(&n) {
            continue; // one digit for every key: the pass would not move anything
        }
        let shift = lo + j as u32 * width;
        let mut total = 0;
        for o in c.iter_mut() {
            let x = *o;
            *o = total;
            total += x;
        }
        for &k in keys.iter() {
            let b = ((k >> shift) & mask) as usize;
            // SAFETY-free indexing: offsets stay below n by construction
            buf[c[b]] = k;
            c[b] += 1;
        }
        std::mem::swap(keys, &mut buf);
    }
}

/// Sort `v` stably on bits `lo..hi` of each element's key, carrying the payloads along (no
/// gather through an index afterwards): least-significant-digit radix passes of at most 11
/// bits, the counts of every pass from one read, a pass with one digit for all skipped.
pub fn sort_by_bits<T: Copy>(v: &mut Vec<(u64, T)>, lo: u32, hi: u32) {
    let n = v.len();
    if n < 2 || hi <= lo {
        return;
    }
    let passes = (hi - lo).div_ceil(11);
    let width = (hi - lo).div_ceil(passes);
    let mask = (1u64 << width) - 1;
    let mut counts = vec![[0usize; 1 << 11]; passes as usize];
    for &(k, _) in v.iter() {
        for (j, c) in counts.iter_mut().enumerate() {
            c[((k >> (lo + j as u32 * width)) & mask) as usize] += 1;
        }
    }
    let mut buf: Vec<(u64, T)> = Vec::with_capacity(n);
    let mut filled = false; // buf's slots are written once by the first pass that moves keys
    for (j, c) in counts.iter_mut().enumerate() {
        if c.contains(&n) {
            continue;
        }
        let shift = lo + j as u32 * width;
        let mut total = 0;
        for o in c.iter_mut() {
            let x = *o;
            *o = total;
            total += x;
        }
        let dst = buf.as_mut_ptr();
        for &e in v.iter() {
            let b = ((e.0 >> shift) & mask) as usize;
            // SAFETY: the offsets of one pass partition 0..n, so each of the n slots of buf's
            // allocation is written exactly once, in bounds
            unsafe { dst.add(c[b]).write(e) };
            c[b] += 1;
        }
        if !filled {
            // SAFETY: every slot below n was just written
            unsafe { buf.set_len(n) };
            filled = true;
        }
        std::mem::swap(v, &mut buf);
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

/// The cells of integer label pairs, counted: the key `(t - lo_t) << p_bits | (p - lo_p)` of
/// each distinct pair, ascending, with its count (or summed weight).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub lo_t: i64,
    pub lo_p: i64,
    /// bits of the predicted label's offset in a key
    pub p_bits: u32,
    pub cells: Vec<(u64, u64)>,
}

impl Counted {
    /// The labels of a cell's key.
    #[inline]
    pub fn labels(&self, key: u64) -> (i64, i64) {
        let t = (key >> self.p_bits) as i64;
        let p = (key & ((1u64 << self.p_bits) - 1)) as i64;
        (self.lo_t.wrapping_add(t), self.lo_p.wrapping_add(p))
    }
}

fn min_max(v: &[i64]) -> (i64, i64) {
    // one read of the array; four lanes of branch-free minima and maxima
    let (mut lo, mut hi) = ([i64::MAX; 4], [i64::MIN; 4]);
    let chunks = v.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for j in 0..4 {
            lo[j] = lo[j].min(c[j]);
            hi[j] = hi[j].max(c[j]);
        }
    }
    for &x in rest {
        lo[0] = lo[0].min(x);
        hi[0] = hi[0].max(x);
    }
    (*lo.iter().min().unwrap(), *hi.iter().max().unwrap())
}

/// Count the pairs `(t[i], p[i])` (weighted by `w[i]` when given; the caller checked that the
/// total fits): `None` when the labels' ranges are too wide for one 64-bit key
/// `(t - lo_t) << p_bits | (p - lo_p)`.
///
/// Unweighted keys of at most 48 bits are counted by `count_buckets` (one sweep over main
/// memory, the sorting in cache); weighted or wider ones by a radix sort of the keys, carrying
/// the weights. O(N) either way, no hashing.
pub fn count_pairs(t: &[i64], p: &[i64], w: Option<&[i64]>) -> Option<Counted> {
    assert_eq!(t.len(), p.len());
    let n = t.len();
    if n == 0 {
        return Some(Counted { lo_t: 0, lo_p: 0, p_bits: 0, cells: Vec::new() });
    }
    let (lo_t, hi_t) = min_max(t);
    let (lo_p, hi_p) = min_max(p);
    let bits_of = |lo: i64, hi: i64| 64 - (hi.wrapping_sub(lo) as u64).leading_zeros();
    let (t_bits, p_bits) = (bits_of(lo_t, hi_t), bits_of(lo_p, hi_p));
    if t_bits + p_bits > 63 {
        return None;
    }
    let bits = t_bits + p_bits;
    let cells = if w.is_none() && bits <= 48 && n < u32::MAX as usize {
        count_buckets(t, p, lo_t, lo_p, p_bits, bits)
    } else {
        let mut keys: Vec<u64> = t
            .iter()
            .zip(p.iter())
            .map(|(&a, &b)| ((a.wrapping_sub(lo_t) as u64) << p_bits) | (b.wrapping_sub(lo_p) as u64))
            .collect();
        let mut weights = w.map(|w| w.iter().map(|&x| x as u64).collect::<Vec<u64>>());
        radix_sort(&mut keys, &mut weights, bits);
        run_lengths(&keys, weights.as_deref())
    };
    Some(Counted { lo_t, lo_p, p_bits, cells })
}

/// Count the pairs by their combined key `(t - lo_t) << p_bits | (p - lo_p)` (below `2**bits`,
/// `bits - 16 <= 32`): one pass counts the keys' top digit, a second scatters the keys' low 32
/// bits into those buckets, then each bucket (in cache) is radix-sorted and run-length counted.
/// The 64-bit keys are never stored: 4 bytes of scratch per element.
fn count_buckets(t: &[i64], p: &[i64], lo_t: i64, lo_p: i64, p_bits: u32, bits: u32) -> Vec<(u64, u64)> {
    let n = t.len();
    let top = bits.saturating_sub(32).max(SCATTER_DIGIT.min(bits));
    let shift = bits - top;
    let low = if shift == 64 { u64::MAX } else { (1u64 << shift) - 1 };
    let key = |a: i64, b: i64| ((a.wrapping_sub(lo_t) as u64) << p_bits) | (b.wrapping_sub(lo_p) as u64);
    let nb = 1usize << top;
    let mut off = vec![0usize; nb + 1];
    if shift >= p_bits {
        // the top digit is the true label's: the predicted labels need not be read
        let s = shift - p_bits;
        for &a in t.iter() {
            off[((a.wrapping_sub(lo_t) as u64) >> s) as usize + 1] += 1;
        }
    } else {
        for (&a, &b) in t.iter().zip(p.iter()) {
            off[(key(a, b) >> shift) as usize + 1] += 1;
        }
    }
    for b in 0..nb {
        off[b + 1] += off[b];
    }
    let keys = t.iter().zip(p.iter()).map(|(&a, &b)| key(a, b));
    let mut buf = scatter_combined(keys, &off, |k| ((k >> shift) as usize, (k & low) as u32));
    let mut cells: Vec<(u64, u64)> = Vec::with_capacity(n / 4 + 16);
    let mut scratch: Vec<u32> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    for d in 0..nb {
        let seg = &mut buf[off[d]..off[d + 1]];
        if seg.is_empty() {
            continue;
        }
        count_bucket(seg, &mut scratch, &mut counts, shift, (d as u64) << shift, &mut cells);
    }
    cells
}

/// The values of `items` grouped by their buckets, `(bucket, value) = split(item)`, bucket `d`
/// at `off[d]..off[d + 1]` (the offsets counted from the same items, in bucket order), each
/// bucket's values in the order given. The writes are combined in software: a bucket's values
/// gather in a cache line of their own and go to memory a line at a time, so thousands of
/// buckets cost streaming writes rather than a cache miss each. O(items + buckets).
fn scatter_combined(
    items: impl Iterator<Item = u64>,
    off: &[usize],
    split: impl Fn(u64) -> (usize, u32),
) -> Vec<u32> {
    const LINE: usize = 16; // 64 bytes of u32
    let nb = off.len() - 1;
    let n = off[nb];
    let mut out: Vec<u32> = Vec::with_capacity(n);
    let dst = out.as_mut_ptr();
    let mut lines = vec![[0u32; LINE]; nb];
    let mut fill = vec![0usize; nb];
    let mut pos = off[..nb].to_vec();
    for item in items {
        let (d, v) = split(item);
        let f = fill[d];
        lines[d][f] = v;
        if f + 1 == LINE {
            assert!(pos[d] + LINE <= off[d + 1], "the offsets count the items");
            // SAFETY: pos[d] + LINE <= off[d + 1] <= n: in bounds; each slot is written once
            unsafe { std::ptr::copy_nonoverlapping(lines[d].as_ptr(), dst.add(pos[d]), LINE) };
            pos[d] += LINE;
            fill[d] = 0;
        } else {
            fill[d] = f + 1;
        }
    }
    for d in 0..nb {
        assert_eq!(pos[d] + fill[d], off[d + 1], "the offsets count the items");
        // SAFETY: the rest of bucket d, up to off[d + 1] <= n
        unsafe { std::ptr::copy_nonoverlapping(lines[d].as_ptr(), dst.add(pos[d]), fill[d]) };
    }
    // SAFETY: every slot below n was written once
    unsafe { out.set_len(n) };
    out
}

/// Append the distinct keys of a bucket (32-bit keys below `2**bits`, in cache) to `cells`,
/// ascending, as `(base | key, count)`: one counting pass on their top `d` bits scatters them
/// into `scratch`, then each run of one top digit (a few keys) is sorted by insertion (a long
/// run by pdqsort) and its equal keys counted. The digit has about as many values as the bucket
/// has keys, `d = min(bits, BUCKET_DIGIT, floor(log2 keys))`, so the counters (in `off`, reused
/// between buckets, only the `2**d + 1` used cleared) cost no more than the keys: a table fed a
/// few hundred thousand rows at a time has buckets of a few hundred keys. O(keys).
fn count_bucket(
    seg: &[u32],
    scratch: &mut Vec<u32>,
    off: &mut Vec<u32>,
    bits: u32,
    base: u64,
    cells: &mut Vec<(u64, u64)>,
) {
    scratch.clear();
    if seg.len() < 48 {
        scratch.extend_from_slice(seg);
        scratch.sort_unstable();
        push_runs(scratch, base, cells);
        return;
    }
    let d = bits.min(BUCKET_DIGIT).min(usize::BITS - 1 - seg.len().leading_zeros());
    let shift = bits - d;
    let m = 1usize << d;
    off.clear();
    off.resize(m + 1, 0);
    for &k in seg {
        off[(k >> shift) as usize + 1] += 1;
    }
    for i in 0..m {
        off[i + 1] += off[i];
    }
    // off[i]: where run i starts; moved on as its keys are placed, it ends where run i ends
    scratch.resize(seg.len(), 0);
    for &k in seg {
        let b = (k >> shift) as usize;
        scratch[off[b] as usize] = k;
        off[b] += 1;
    }
    let mut start = 0usize;
    for &end in &off[..m] {
        let end = end as usize;
        let run = &mut scratch[start..end];
        start = end;
        if run.len() <= 16 {
            for j in 1..run.len() {
                let x = run[j];
                let mut k = j;
                while k > 0 && run[k - 1] > x {
                    run[k] = run[k - 1];
                    k -= 1;
                }
                run[k] = x;
            }
        } else {
            run.sort_unstable();
        }
        push_runs(run, base, cells);
    }
}

/// Append the distinct keys of sorted `keys` to `cells` as `(base | key, count)`.
#[inline]
fn push_runs(keys: &[u32], base: u64, cells: &mut Vec<(u64, u64)>) {
    let mut i = 0;
    while i < keys.len() {
        let v = keys[i];
        let mut j = i + 1;
        while j < keys.len() && keys[j] == v {
            j += 1;
        }
        cells.push((base | v as u64, (j - i) as u64));
        i = j;
    }
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

    /// The Evaluator's specs: both kinds at `beta == 1` (settled by kind, [`unit_move`]).
    fn unit_tracked() -> Core {
        let mut c = Core::new();
        for kind in [Kind::Elm, Kind::Bcubed] {
            c.track(FSpec::new(kind, BigUint::from(1u32), BigUint::from(1u32)));
        }
        assert!(c.all_unit && c.want == [true, true]);
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
        assert!(c.f_sums_now().iter().all(|&f| f == 0));
    }

    #[test]
    fn small_clusters_keep_counts_across_32_bits() {
        // counts about 2**24 (kept beside the partner up to KEPT_MAX - 1, else read from the
        // cell map) and about 2**32, crossing those bounds both ways in small clusters, beside
        // small counts; bulk adds onto such a table; read at random times
        for mut c in [tracked(), unit_tracked()] {
            let mut rng = Rng(0x2545F4914F6CDD1D);
            let mut live: Vec<(u32, u32, i64)> = Vec::new();
            for step in 0..3000 {
                if live.is_empty() || rng.below(10) < 6 {
                    let (t, p) = (rng.below(12) as u32, rng.below(12) as u32);
                    let w = match rng.below(4) {
                        0 => (1i64 << 32) - 3 + rng.below(5) as i64,
                        1 => KEPT_MAX as i64 - 2 + rng.below(5) as i64,
                        _ => 1 + rng.below(3) as i64,
                    };
                    c.change(t, p, w);
                    live.push((t, p, w));
                } else {
                    let i = rng.below(live.len() as u64) as usize;
                    let (t, p, w) = live.swap_remove(i);
                    c.change(t, p, -w);
                }
                if rng.below(7) == 0 {
                    let want = c.compute_sums().1;
                    c.settle();
                    assert_eq!(c.f_sums(), &want[..]);
                }
                if step % 101 == 0 {
                    c.check().unwrap();
                    let cells: Vec<(u32, u32, u64)> =
                        (0..3).map(|_| (rng.below(14) as u32, rng.below(14) as u32, 1 + rng.below(1 << 33))).collect();
                    c.add_cells(&cells);
                    c.check().unwrap();
                    for (t, p, n) in cells {
                        live.push((t, p, n as i64));
                    }
                }
            }
            assert!(c.sides.iter().flatten().any(|cl| cl.cells.iter().any(|e| e.1 & KEPT_MAX == KEPT_MAX)));
            c.check().unwrap();
        }
    }

    #[test]
    fn lazily_settled_f_sums_equal_the_recomputed_ones() {
        // small clusters only (lazy), then a big column (settled, eager), read at random times
        let mut rng = Rng(7);
        let mut c = tracked();
        for step in 0..4000u32 {
            let big = step > 2000 && rng.below(3) == 0;
            let (t, p) = (rng.below(300) as u32, if big { 0 } else { 1 + rng.below(200) as u32 });
            let d = if c.cell(t, p) > 0 && rng.below(4) == 0 { -1 } else { 1 };
            c.change(t, p, d);
            if rng.below(50) == 0 {
                let unsettled = !c.unsettled.is_empty();
                let want = c.compute_sums().1;
                assert_eq!(c.f_sums_now(), want);
                c.settle();
                assert_eq!(c.f_sums(), &want[..], "after settling {unsettled}");
            }
        }
        assert!(c.is_big(1, 0));
        c.check().unwrap();
    }

    /// A dense stream: rows of `per_row` cells around a diagonal, updated and reverted.
    fn dense_step(rng: &mut Rng, c: &mut Core, k: u64, per_row: u64, live: &mut Vec<(u32, u32, i64)>) {
        if live.is_empty() || rng.below(10) < 7 {
            let t = rng.below(k);
            let p = if rng.below(5) < 3 { t } else { (t * 7 + rng.below(per_row) * 13) % (k * 2) };
            let w = 1 + rng.below(2) as i64;
            c.change(t as u32, p as u32, w);
            live.push((t as u32, p as u32, w));
        } else {
            let i = rng.below(live.len() as u64) as usize;
            let (t, p, w) = live.swap_remove(i);
            c.change(t, p, -w);
        }
    }

    #[test]
    fn settled_f_sums_equal_the_recomputed_ones_at_any_density_and_order() {
        // dense rows (big, > BIG_AT cells) beside sparse ones, updates alternating between big
        // and small clusters, reads after every element, every few, or rarely; clusters turn
        // big, small and empty; the settled sums equal a recomputation from the cells
        let cases = [(1u64, 6u64, 60u64, 1u64), (2, 40, 45, 3), (3, 200, 8, 1), (4, 12, 200, 50), (5, 30, 40, 400),
                     (6, 20, 25, 1), (7, 8, 200, 1)];
        for ((seed, k, per_row, read_every), make) in cases.iter().flat_map(|&case| [(case, tracked as fn() -> Core), (case, unit_tracked)]) {
            let mut rng = Rng(seed * 0x9E37_79B9);
            let mut c = make();
            let mut live = Vec::new();
            for step in 0..5000u64 {
                if step % 2 == 0 {
                    dense_step(&mut rng, &mut c, k, per_row, &mut live);
                } else {
                    // a small cluster far from the dense ones
                    let (t, p) = (1000 + rng.below(50) as u32, 1000 + rng.below(50) as u32);
                    let d = if c.cell(t, p) > 0 && rng.below(3) == 0 { -1 } else { 1 };
                    c.change(t, p, d);
                }
                if rng.below(read_every) == 0 {
                    let want = c.compute_sums().1;
                    assert_eq!(c.f_sums_now(), want, "seed {seed} step {step}");
                    c.settle();
                    assert_eq!(c.f_sums(), &want[..], "seed {seed} step {step}");
                }
                if step % 499 == 0 {
                    c.check().unwrap();
                }
            }
            assert!((0..2).any(|side| (0..c.sides[side].len() as u32).any(|x| c.is_big(side, x))));
            for (t, p, w) in live.drain(..) {
                c.change(t, p, -w);
            }
            for t in 1000..1050u32 {
                for p in 1000..1050u32 {
                    let n = c.cell(t, p);
                    if n > 0 {
                        c.change(t, p, -(n as i64));
                    }
                }
            }
            c.settle();
            assert!(c.f_sums().iter().all(|&f| f == 0), "seed {seed}: an empty table's F sums");
            c.check().unwrap();
        }
    }

    #[test]
    fn a_cluster_groups_its_cells_past_group_at_and_lists_them_again_below_ungroup_at() {
        // one column gains 1,100 small rows (grouped past GROUP_AT) beside a listed dense row,
        // read every few updates, then loses them again (listed below UNGROUP_AT)
        for make in [tracked as fn() -> Core, unit_tracked] {
            let mut rng = Rng(3);
            let mut c = make();
            let mut ops = Vec::new();
            for i in 0..1100u32 {
                ops.push((i, 0u32));
                if i % 3 == 0 {
                    ops.push((5000, 1 + rng.below(60) as u32)); // a dense row of listed cells
                }
            }
            let check = |c: &mut Core, i: usize| {
                if i.is_multiple_of(29) {
                    let want = c.compute_sums().1;
                    c.settle();
                    assert_eq!(c.f_sums(), &want[..], "step {i}");
                }
            };
            for (i, &(t, p)) in ops.iter().enumerate() {
                c.change(t, p, 1);
                check(&mut c, i);
            }
            assert!(c.sides[1][0].big.as_ref().is_some_and(|b| b.grouped && b.listed.is_empty()));
            c.check().unwrap();
            for (i, &(t, p)) in ops.iter().enumerate().rev() {
                c.change(t, p, -1);
                if t == 250 && p == 0 {
                    let b = c.sides[1][0].big.as_ref().expect("big");
                    assert!(!b.grouped && b.groups.is_empty() && b.listed.len() == 250);
                    c.check().unwrap();
                }
                check(&mut c, i);
            }
            c.settle();
            assert!(c.f_sums().iter().all(|&f| f == 0));
            c.check().unwrap();
        }
    }

    #[test]
    fn clusters_turn_big_and_small_between_readings_beside_grouped_and_listing_partners() {
        // row 5000 shares a cell with a grouped column (its class change moves that cell between
        // the column's groups and its listing: settled first), row 6000 only with listing or
        // small columns (its class changes unsettled); both gain and lose cells past BIG_AT and
        // below SMALL_AT, read every few updates
        for make in [tracked as fn() -> Core, unit_tracked] {
            let mut c = make();
            for i in 0..1100u32 {
                c.change(i, 0, 1);
            }
            c.settle();
            let mut ops = vec![(5000u32, 0u32)];
            for j in 1..3 * BIG_AT as u32 {
                ops.push((5000, j));
                ops.push((6000, 100 + j));
                ops.push((7000 + j % 5, 100 + j)); // the columns of row 6000 turn big too
            }
            let mut step = 0;
            let mut check = |c: &mut Core| {
                step += 1;
                if step % 7 == 0 {
                    let want = c.compute_sums().1;
                    c.settle();
                    assert_eq!(c.f_sums(), &want[..], "step {step}");
                    c.check().unwrap();
                }
            };
            for &(t, p) in &ops {
                c.change(t, p, 2);
                check(&mut c);
            }
            assert!(c.is_big(0, 5000) && c.is_big(0, 6000));
            for &(t, p) in ops.iter().rev() {
                c.change(t, p, -2);
                check(&mut c);
            }
            assert!(!c.is_big(0, 5000) && !c.is_big(0, 6000));
            c.settle();
            assert_eq!(c.f_sums(), &c.compute_sums().1[..]);
            c.check().unwrap();
        }
    }

    #[test]
    fn an_update_does_no_f_work_until_the_reading() {
        // between two readings an update only notes its row, column and cell, whether its
        // clusters hold 1 cell or 200: the F sums are untouched until settled
        let mut rng = Rng(11);
        let mut c = tracked();
        let mut live = Vec::new();
        for _ in 0..20_000 {
            dense_step(&mut rng, &mut c, 20, 200, &mut live);
        }
        c.settle();
        assert!(c.is_big(0, 3));
        let before = c.fsums.clone();
        for i in 0..200u32 {
            // a big row, then a small cluster, then a new cell of a big row
            c.change(3, 3, 1);
            c.change(5000 + i % 7, 5000, 1);
            c.change(4, 39, 1);
            assert_eq!(c.fsums, before);
            assert!(c.unsettled.cells.len() <= 3 + 7);
        }
        let want = c.compute_sums().1;
        c.settle();
        assert_eq!(c.f_sums(), &want[..]);
        c.check().unwrap();
    }

    #[test]
    fn update_then_revert_restores_the_sums_bit_for_bit() {
        let mut rng = Rng(42);
        let mut c = tracked();
        for _ in 0..3000 {
            c.change(rng.below(40) as u32, rng.below(5) as u32, 1);
        }
        let (sums, fsums) = (c.sums.clone(), c.f_sums_now());
        for _ in 0..50 {
            let (t, p) = (rng.below(40) as u32, rng.below(5) as u32);
            c.change(t, p, 3);
            c.change(t, p, -3);
        }
        assert_eq!(c.sums, sums);
        assert_eq!(c.f_sums_now(), fsums);
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
        assert_eq!(bulk.f_sums_now(), streamed.f_sums_now());
    }

    /// A heavy-tailed random batch of cells: a few clusters get many cells (big ones).
    fn batch(rng: &mut Rng, m: usize, k: u64) -> Vec<(u32, u32, u64)> {
        (0..m)
            .map(|_| {
                let t = if rng.below(4) == 0 { rng.below(3) } else { rng.below(k) } as u32;
                let p = if rng.below(4) == 0 { rng.below(3) } else { rng.below(k) } as u32;
                (t, p, 1 + rng.below(3))
            })
            .collect()
    }

    #[test]
    fn incremental_and_bulk_adds_equal_the_stream() {
        for (seed, tracking) in [(11u64, true), (12, false), (13, true)] {
            let mut rng = Rng(seed);
            let mut streamed = if tracking { tracked() } else { Core::new() };
            let mut bulk = streamed.clone();
            let mut incr = streamed.clone();
            for round in 0..12 {
                let k = if round % 3 == 0 { 40 } else { 400 };
                let cells = batch(&mut rng, 300 + 50 * round, k);
                for &(t, p, c) in &cells {
                    streamed.change(t, p, c as i64);
                }
                bulk.add_cells(&cells);
                if round == 0 {
                    incr.add_cells(&cells);
                } else {
                    incr.add_incremental(&cells);
                }
                for c in [&bulk, &incr] {
                    c.check().unwrap();
                    assert_eq!(c.sums, streamed.sums);
                    assert_eq!(c.f_sums_now(), streamed.f_sums_now());
                    assert_eq!(c.cells, streamed.cells);
                }
                // then some removals, element by element, from the incremental one
                for &(t, p, c) in cells.iter().take(40) {
                    streamed.change(t, p, -(c as i64));
                    incr.change(t, p, -(c as i64));
                    bulk.change(t, p, -(c as i64));
                }
                incr.check().unwrap();
                assert_eq!(incr.sums, streamed.sums);
                assert_eq!(incr.f_sums_now(), streamed.f_sums_now());
            }
        }
    }

    /// One cluster's record in `records`.
    type Record = (u32, u64, u128, u64, Vec<u32>);

    /// The clusters of `c` as `(size, squares, max, sorted list of the other side)` per side,
    /// without the empty ones.
    fn records(c: &Core) -> Vec<Vec<Record>> {
        c.sides
            .iter()
            .map(|side| {
                let live = side.iter().enumerate().filter(|(_, cl)| cl.size > 0);
                live.map(|(x, cl)| {
                    let mut others: Vec<u32> = cl.others().collect();
                    others.sort_unstable();
                    (x as u32, cl.size, cl.sq, cl.max, others)
                })
                .collect()
            })
            .collect()
    }

    #[test]
    fn sorted_fill_equals_the_stream() {
        for (seed, tracking) in [(21u64, true), (22, false)] {
            let mut rng = Rng(seed);
            // a table that held cells and was emptied (its records stay, empty), and a new one
            let mut emptied = if tracking { tracked() } else { Core::new() };
            for &(t, p, c) in &batch(&mut rng, 500, 300) {
                emptied.change(t, p, c as i64);
                emptied.change(t, p, -(c as i64));
            }
            for start in [emptied, if tracking { tracked() } else { Core::new() }] {
                // every id even (gaps), big clusters on both sides; sorted, each cell once
                let mut cells: Vec<(u32, u32, u64)> = batch(&mut rng, 3000, 200)
                    .into_iter()
                    .map(|(t, p, c)| (2 * t, 2 * p, c))
                    .collect();
                cells.sort_unstable();
                cells.dedup_by_key(|c| (c.0, c.1));
                let mut streamed = start.clone();
                for &(t, p, c) in &cells {
                    streamed.change(t, p, c as i64);
                }
                let mut filled = start;
                filled.add_cells(&cells);
                filled.check().unwrap();
                assert_eq!(filled.sums, streamed.sums);
                assert_eq!(filled.f_sums_now(), streamed.f_sums_now());
                assert_eq!(filled.cells, streamed.cells);
                assert_eq!(records(&filled), records(&streamed));
                assert!(filled.sides.iter().all(|s| s.iter().any(|cl| cl.big.is_some())));
                // each small cluster lists the other side in ascending order
                for side in &filled.sides {
                    assert!(side.iter().all(|cl| cl.cells.windows(2).all(|w| w[0] < w[1])));
                }
            }
        }
    }

    #[test]
    fn the_settling_kernels_equal_the_terms_cell_by_cell() {
        // unit_listed and unit_small against unit_shift cell by cell, over random counts and
        // sizes within their bounds (small and large, tops below and above the divisors), with
        // unsettled partners found by comparison or by bit, and a grouped partner's group
        let mut rng = Rng(0x5151_7777);
        for round in 0..300u64 {
            let k = 1 + rng.below(40) as usize;
            let big = round % 3 == 0;
            let mut other: Vec<Cluster> = (0..k)
                .map(|_| Cluster { size: 1 + rng.below(if big { 1 << 40 } else { 500 }), ..Cluster::default() })
                .collect();
            let grouped = rng.below(k as u64) as usize;
            other[grouped].big = Some(Box::new(Big { grouped: true, ..Big::default() }));
            let (sx0, sx1) = (2 + rng.below(1 << 20), 2 + rng.below(1 << 30));
            let mut items: Vec<(u32, u64)> = Vec::new();
            for z in 0..k as u32 {
                if rng.below(4) > 0 {
                    let top = if rng.below(2) == 0 { 3 } else { sx0.min(sx1) };
                    items.push((z, 1 + rng.below(top)));
                }
            }
            let un: Vec<u32> = (0..k as u32).filter(|_| rng.below(5) == 0).collect();
            let mut bits = vec![0u64; k.div_ceil(64)];
            for &z in &un {
                bits[(z >> 6) as usize] |= 1 << (z & 63);
            }
            let (mut e, mut b) = (0i128, 0i128);
            let mut rest_want = Vec::new();
            for &(z, n) in &items {
                if un.contains(&z) {
                    rest_want.push((z, n));
                } else {
                    unit_shift::<true, true>(&mut e, &mut b, n, sx0 + other[z as usize].size, sx1 + other[z as usize].size);
                }
            }
            let fresh = || items.iter().map(|&(z, n)| Item::new(z, n)).collect::<Vec<Item>>();
            let mut listed = fresh();
            let mut rest = SmallVec::new();
            assert_eq!(unit_listed::<true, true, true, _>(&mut listed, |z| is_set(&bits, z), &other, sx0, sx1, &mut rest), ([e, b], 0));
            assert_eq!(rest.to_vec(), rest_want);
            let mut rest = SmallVec::new();
            assert_eq!(unit_listed::<true, true, false, _>(&mut fresh(), |z| is_set(&bits, z), &other, sx0, sx1, &mut rest), ([e, b], 0));
            assert_eq!(rest.to_vec(), rest_want);
            assert!(listed.iter().all(|it| it.memo_ok([true, true])));
            if let [one] = un[..] {
                let mut rest = SmallVec::new();
                assert_eq!(unit_listed::<true, true, true, _>(&mut fresh(), |z| z == one, &other, sx0, sx1, &mut rest), ([e, b], 0));
                assert_eq!(rest.to_vec(), rest_want);
            }
            let mut rest = SmallVec::new();
            let mut only_b = fresh();
            assert_eq!(unit_listed::<false, true, true, _>(&mut only_b, |z| is_set(&bits, z), &other, sx0, sx1, &mut rest).0[1], b);
            assert!(only_b.iter().all(|it| it.memo_ok([false, true])));
            // the next settling, from sx1 to sx2, with some partners' sizes changed since (their
            // memos then stale): memo hits and misses give the terms computed afresh
            let mut moved = other.clone();
            for oz in moved.iter_mut() {
                if rng.below(3) == 0 {
                    oz.size += 1 + rng.below(3);
                }
            }
            let sx2 = 2 + rng.below(if round % 2 == 0 { 1 << 30 } else { 2 * sx1 });
            let (mut e2, mut b2) = (0i128, 0i128);
            for &(z, n) in &items {
                if !un.contains(&z) {
                    unit_shift::<true, true>(&mut e2, &mut b2, n, sx1 + moved[z as usize].size, sx2 + moved[z as usize].size);
                }
            }
            // a hit: a settled partner of unchanged size whose terms at sx1 were memoised (a
            // margin sum of 32 bits; the terms, at most n < 2**31, always fit)
            let fit = |z: u32, _n: u64| sx1 + other[z as usize].size < 1 << 32;
            let hits = items.iter().filter(|&&(z, n)| !un.contains(&z) && moved[z as usize].size == other[z as usize].size && fit(z, n)).count();
            let mut rest = SmallVec::new();
            assert_eq!(unit_listed::<true, true, true, _>(&mut listed, |z| is_set(&bits, z), &moved, sx1, sx2, &mut rest), ([e2, b2], hits));
            assert!(listed.iter().all(|it| it.memo_ok([true, true])));
            // the same cells seen from a small row 7 (side 0) and a small column 7 (side 1)
            for side in 0..2 {
                let cells: HashMap<u64, u64> = items.iter().map(|&(z, n)| (skey(side, 7, z), n)).collect();
                // the kept counts beside the partners (a saturated one read from the cell map)
                let mut partners: Vec<(u32, u32)> = items.iter().map(|&(z, n)| (z, sat(n))).collect();
                let mut rest = SmallVec::new();
                let got = unit_small::<true, true, _>(&mut partners, |z| is_set(&bits, z), &mut other, &cells, side, 7, sx0, sx1, &mut rest);
                assert_eq!(got, [e, b]);
                assert_eq!(rest.to_vec(), rest_want.iter().map(|&(z, n)| (z, sat(n))).collect::<Vec<_>>());
                let g = other[grouped].big.as_deref_mut().unwrap();
                let n = items.iter().find(|&&(z, _)| z as usize == grouped && !un.contains(&z)).map(|&(_, n)| n);
                assert_eq!(g.groups.get(&(n.unwrap_or(0), sx1)).copied(), n.map(|_| 1), "the grouped partner's group");
                g.groups.clear();
                // the same, some partners big and listing the cell (among others, at a random
                // place), its memo empty, at the old margin sum (a hit), or at another one (a
                // miss), the kept position hint right, wrong, or "none": the same changes, and
                // the memos then at the new margin sums, the hints at the cells' places
                let mut with_lists = other.clone();
                let mut listing: Vec<(u32, usize, u64)> = Vec::new(); // (partner, hint, memo kind)
                for (i, &(z, n)) in items.iter().enumerate() {
                    if z as usize == grouped || rng.below(2) == 0 {
                        continue;
                    }
                    let mut l = Listing::default();
                    let before = rng.below(5) as u32;
                    for j in 0..before {
                        l.insert(100 + j, 1 + rng.below(9));
                    }
                    l.insert(7, n);
                    for j in 0..rng.below(4) as u32 {
                        l.insert(200 + j, 1 + rng.below(9));
                    }
                    let at = before as usize;
                    let s0 = sx0 + other[z as usize].size;
                    let memo = rng.below(3);
                    let s = if memo == 1 { s0 } else { s0 + 1 };
                    if memo > 0 && s < 1 << 32 {
                        l.items[at].set_memo(s, unit_term(Kind::Bcubed, n, s), unit_term(Kind::Elm, n, s));
                    }
                    let h = [at, (at + 1) % 7, NO_HINT][rng.below(3) as usize];
                    partners[i].1 = with_hint(partners[i].1, h);
                    with_lists[z as usize].big = Some(Box::new(Big { listed: l, ..Big::default() }));
                    listing.push((z, h, memo));
                }
                let mut rest = SmallVec::new();
                let got = unit_small::<true, true, _>(&mut partners, |z| is_set(&bits, z), &mut with_lists, &cells, side, 7, sx0, sx1, &mut rest);
                assert_eq!(got, [e, b], "round {round} side {side}: memoised partners");
                for &(z, h, _) in &listing {
                    let l = &with_lists[z as usize].big.as_deref().unwrap().listed;
                    let at = l.pos[&7] as usize;
                    let it = l.items[at];
                    assert!(it.memo_ok([true, true]));
                    let kept = partners.iter().find(|e| e.0 == z).unwrap().1;
                    let s1 = sx1 + other[z as usize].size;
                    if un.contains(&z) || (h == NO_HINT && at != NO_HINT) {
                        continue; // not settled from here, or no memo looked for
                    }
                    assert_eq!(hint(kept), at, "the hint set to the cell's place");
                    assert_eq!(it.s as u64, if s1 < 1 << 32 { s1 } else { 0 }, "the new terms memoised");
                }
            }
        }
    }

    #[test]
    fn listed_cells_memoise_their_terms_while_it_pays_and_stay_exact() {
        // three rows of 60 listed cells, read after every update: while their partners (the
        // columns) stay put between two settlings of a row the memos turn on; when every row
        // update comes after 30 updates of other rows over the same columns, most memos are
        // stale at the next settling and they turn off again; the sums exact all along
        let mut c = unit_tracked();
        let mut rng = Rng(77);
        for t in 0..3u32 {
            for p in 0..60u32 {
                c.change(t, p, 1 + ((t + p) % 2) as i64);
            }
        }
        c.settle();
        let modes = |c: &Core| -> Vec<u8> { (0..3).map(|t| c.sides[0][t].big.as_deref().expect("big").listed.mode).collect() };
        let (mut seen_on, mut seen_off_after_on) = (false, false);
        for step in 0..6000u64 {
            let churn = step >= 3000;
            let t = if churn && step % 31 != 0 { 3 + rng.below(40) as u32 } else { rng.below(3) as u32 };
            let p = if rng.below(4) == 0 { t % 60 } else { rng.below(60) as u32 };
            c.change(t, p, 1);
            c.settle();
            if step % 97 == 0 {
                assert_eq!(c.f_sums(), &c.compute_sums().1[..], "step {step}");
            }
            let m = modes(&c);
            seen_on |= !churn && m.contains(&Listing::ON);
            seen_off_after_on |= seen_on && churn && m.iter().all(|&k| k > Listing::PROBE);
        }
        assert!(seen_on, "quiet partners: the memos turn on");
        assert!(seen_off_after_on, "churning partners: the memos turn off");
        c.check().unwrap(); // every memo holds its terms
        assert_eq!(c.f_sums(), &c.compute_sums().1[..]);
    }

    #[test]
    fn small_columns_share_their_cells_memos_with_their_big_rows_and_stay_exact() {
        // a K = 10 table of big rows (25 cells) and small columns (10 cells), with counts large
        // enough that most terms are above 1 (their integer parts memoised too), read after
        // every update, with reads after several updates between; updates alternate between a
        // row's diagonal and its other cells, some revert, and cells go and come back (the
        // listings move their items: the columns' position hints go stale and are found
        // again); the sums exact at every reading, every memo right, and the memos shared: the
        // columns' hints point at their cells, and the rows' memos hold terms above 1 (with the
        // unit specs; a spec of another beta settles cell by cell, without memos)
        for (make, unit) in [(unit_tracked as fn() -> Core, true), (tracked, false)] {
            let mut c = make();
            let mut rng = Rng(0xD1CE);
            for t in 0..10u32 {
                for p in 0..25u32 {
                    c.change(t, p, if p == t { 400 } else { 20 + rng.below(40) as i64 });
                }
            }
            c.settle();
            let mut live: Vec<(u32, u32, i64)> = Vec::new();
            for step in 0..4000u64 {
                let t = rng.below(10) as u32;
                match rng.below(10) {
                    0 if !live.is_empty() => {
                        let (t, p, w) = live.swap_remove(rng.below(live.len() as u64) as usize);
                        c.change(t, p, -w);
                    }
                    1 => {
                        // a cell leaves its row's listing and comes back (at the end)
                        let p = 10 + rng.below(15) as u32;
                        let n = c.cell(t, p) as i64;
                        live.retain(|&(a, b, _)| (a, b) != (t, p));
                        c.change(t, p, -n);
                        if rng.below(4) > 0 {
                            c.settle();
                        }
                        c.change(t, p, n);
                    }
                    k => {
                        let p = if k < 7 { t } else { rng.below(25) as u32 };
                        c.change(t, p, 1);
                        live.push((t, p, 1));
                    }
                }
                if rng.below(6) > 0 {
                    c.settle();
                    assert_eq!(c.f_sums(), &c.compute_sums().1[..], "step {step}");
                }
                if step % 397 == 0 {
                    c.check().unwrap();
                }
            }
            c.settle();
            c.check().unwrap();
            assert_eq!(c.f_sums(), &c.compute_sums().1[..]);
            let (rows, cols) = (&c.sides[0], &c.sides[1]);
            assert!(rows[..10].iter().all(|r| r.big.is_some()) && cols[..25].iter().all(|p| p.big.is_none()));
            if !unit {
                continue;
            }
            let mut hinted = 0;
            for (p, col) in cols[..25].iter().enumerate() {
                for &(t, kept) in col.cells.iter() {
                    let l = &rows[t as usize].big.as_deref().unwrap().listed;
                    hinted += (l.items.get(hint(kept)).map(|it| it.z) == Some(p as u32)) as usize;
                }
            }
            assert!(hinted > 200, "the columns' hints find their cells: {hinted} of 250");
            let above_one = rows[..10].iter().flat_map(|r| r.big.as_deref().unwrap().listed.items.iter()).filter(|it| it.s != 0 && it.bh > 0).count();
            assert!(above_one > 100, "memoised terms above 1: {above_one}");
        }
    }

    #[test]
    fn memoised_side_terms_equal_the_terms() {
        let mut rng = Rng(9);
        let mut memo = TermsMemo::new();
        for _ in 0..20_000 {
            // few sizes, so shapes repeat and collide in the memo
            let cells: Vec<u64> = (0..1 + rng.below(4)).map(|_| 1 + rng.below(6)).collect();
            let size: u64 = cells.iter().sum();
            let sq: u128 = cells.iter().map(|&c| (c as u128) * (c as u128)).sum();
            let max = *cells.iter().max().unwrap();
            assert_eq!(memo.terms(size, sq, max), side_terms(size, sq, max));
        }
        assert_eq!(memo.terms(0, 0, 0), side_terms(0, 0, 0));
        // the clusters' slots: sizes moving up and down (a slot's shape seen again, and new
        // ones), sizes past the logarithm table's 4096, sides of few and of many clusters, and
        // a fresh slot read for an empty cluster
        let mut memo = SideMemo::default();
        assert_eq!(memo.terms(1, 5, 10, 0, 0, 0), side_terms(0, 0, 0));
        let mut shapes: Vec<(u64, u128, u64)> = vec![(0, 0, 0); 2 * SideMemo::SLOTS];
        for _ in 0..20_000 {
            let (side, len) = (rng.below(2) as usize, [20, SideMemo::SLOTS, 3 * SideMemo::SLOTS][rng.below(3) as usize]);
            let x = rng.below(len as u64) as u32;
            let i = side * SideMemo::SLOTS + x as usize % SideMemo::SLOTS;
            let (size, sq, max) = if rng.below(2) == 0 {
                shapes[i]
            } else {
                let top = if rng.below(3) == 0 { 9000 } else { 5 };
                let cells: Vec<u64> = (0..1 + rng.below(3)).map(|_| 1 + rng.below(top)).collect();
                (cells.iter().sum(), cells.iter().map(|&c| (c as u128) * (c as u128)).sum(), *cells.iter().max().unwrap())
            };
            shapes[i] = (size, sq, max);
            assert_eq!(memo.terms(side, x, len, size, sq, max), side_terms(size, sq, max));
        }
    }

    #[test]
    fn count_pairs_equals_a_sort() {
        let mut rng = Rng(5);
        for (n, span_t, span_p, lo) in [(0usize, 1u64, 1u64, 0i64), (1, 1, 1, -7), (5000, 3, 100_000, i64::MIN + 5), (70_000, 5000, 5000, -2500), (70_000, 1 << 30, 1 << 17, 1 << 40), (300_000, 5000, 5000, 3), (300_000, 2, 1 << 20, -9), (300_000, 1 << 20, 3, 0)] {
            let t: Vec<i64> = (0..n).map(|_| lo.wrapping_add(rng.below(span_t) as i64)).collect();
            let p: Vec<i64> = (0..n).map(|_| lo.wrapping_add(rng.below(span_p) as i64)).collect();
            let w: Vec<i64> = (0..n).map(|_| 1 + rng.below(5) as i64).collect();
            for weighted in [false, true] {
                let mut expect: std::collections::BTreeMap<(i64, i64), u64> = Default::default();
                for i in 0..n {
                    *expect.entry((t[i], p[i])).or_insert(0) += if weighted { w[i] as u64 } else { 1 };
                }
                let got = count_pairs(&t, &p, if weighted { Some(&w) } else { None }).unwrap();
                let got: Vec<((i64, i64), u64)> = got.cells.iter().map(|&(k, c)| (got.labels(k), c)).collect();
                assert_eq!(got, expect.into_iter().collect::<Vec<_>>());
            }
        }
        // ranges too wide for one key
        assert!(count_pairs(&[i64::MIN, i64::MAX], &[0, 1], None).is_none());
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

    #[test]
    fn a_listing_is_a_set_of_counts_with_constant_time_changes() {
        let mut l = Listing::default();
        for z in 0..10u32 {
            l.insert(z, z as u64 + 1);
        }
        l.insert(3, 40); // a count changes in place
        l.remove(0); // the last item moves into the hole
        l.remove(0); // not listed: nothing
        l.remove(9);
        let mut items: Vec<(u32, u64)> = l.items().iter().map(|it| (it.z, it.n)).collect();
        items.sort_unstable();
        let want: Vec<(u32, u64)> = (1..9u32).map(|z| (z, if z == 3 { 40 } else { z as u64 + 1 })).collect();
        assert_eq!(items, want);
        for it in l.items() {
            assert_eq!(l.items()[l.pos[&it.z] as usize].z, it.z);
        }
        // equal as sets, whatever the order
        let mut m = Listing::default();
        for &(z, n) in want.iter().rev() {
            m.insert(z, n);
        }
        assert!(l == m);
        m.insert(1, 7);
        assert!(l != m);
    }
}
