//! The exact sums of the tables of consecutive blocks of rows: the Rust twin of
//! `streameval.detect.block_stats` (numpy), which drop detection reads every block of
//! `--drop-block` rows (`watch`, `Monitor`).
//!
//! Rows are integer label codes (`t`, `p`, from 0 to [`CODES`]) with weights (`w`, each at least
//! 1, or all 1); block `k` is rows `k·block .. (k+1)·block`. Each block's true labels, predicted
//! labels and cells get dense indices as its rows are read (a code's index in a table over all
//! codes, stamped with the block's number so that nothing is cleared between blocks; a cell's in
//! a grid by its row and column indices, stamped alike, or a hash map for blocks over 128 rows;
//! when the codes' cells are few, a row's cell by its codes directly, and the rows' and columns'
//! indices per cell); then each
//! requested sum is added up exactly over the block's rows, columns and cells: counts in
//! integers, the fixed-point sums (`floor(x · 2**64 / d)` per row, column or cell, as
//! `streameval.stats` defines them) in `i128`. The same values, to the bit, as the numpy twin
//! (the differential test `tests/test_block_sums.py` drives both). O(block) per block, no
//! allocation per block (buffers are reused).

use crate::terms::{fixed_quot_nz, shift_div64, ONE};

/// The sums [`block_sums`] can compute, in the order of `streameval.detect._FAST_STATS`.
pub const NAMES: [&str; 16] = [
    "n", "cells", "k_true", "k_pred", "sum_cell_sq", "sum_row_sq", "sum_col_sq", "bcubed_p_sum",
    "bcubed_r_sum", "elm_p_sum", "elm_r_sum", "sum_col_max", "sum_row_max", "true_singletons",
    "pred_singletons", "both_singletons",
];

/// Codes are below this (their tables, one entry per code, live as long as the thread).
pub const CODES: i64 = 1 << 22;

/// An element-averaged F sum: ELM (`elm`) or BCubed, with `beta² = num / den`.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub elm: bool,
    pub num: u64,
    pub den: u64,
}

/// `floor(x · 2**64 / d)` for `d > 0`, both under `2**64` (see [`block_sums`]' bounds).
#[inline]
fn fixed(x: u64, d: u64) -> i128 {
    shift_div64(x, d)
}

/// Dense indices `0, 1, 2, ...` of the distinct codes (or cells' keys) met within one block, by a
/// table over all codes stamped with the block's number (nothing to clear between blocks). A code's stamp and
/// index sit side by side (`[stamp, index]`): one cache line per lookup, which matters when the
/// table over all codes is far larger than the cache.
#[derive(Default)]
struct Dense {
    slot: Vec<[u32; 2]>,
    now: u32,
    len: u32,
}

impl Dense {
    /// A new block of codes below `size`.
    fn start(&mut self, size: usize) {
        if self.slot.len() < size {
            self.slot.resize(size, [0, 0]);
        }
        self.now = self.now.wrapping_add(1);
        if self.now == 0 {
            self.slot.iter_mut().for_each(|s| s[0] = 0);
            self.now = 1;
        }
        self.len = 0;
    }

    /// The dense index of `code` in this block, and whether it is new.
    #[inline]
    fn get(&mut self, code: usize) -> (usize, bool) {
        let s = &mut self.slot[code];
        if s[0] == self.now {
            (s[1] as usize, false)
        } else {
            *s = [self.now, self.len];
            self.len += 1;
            (self.len as usize - 1, true)
        }
    }
}

/// The requested sums (`want[k]`: [`NAMES`]`[k]`) and F sums (`specs`) of each whole block of
/// `block` rows: `(sums[name][block], f[spec][block])` (a name not wanted gets an empty column).
/// `w` empty: every weight 1. Requires `t.len() == p.len()`, a whole number of blocks, codes
/// from 0 to [`CODES`], weights at least 1 with each block's total under `2**28`, and `num + den <= 8`
/// (the numpy twin's limits; every term then fits with room to spare). Each block's rows,
/// columns and cells get dense indices (codes looked up in tables stamped per block; a cell by
/// its codes when the codes' cells are few, else by its row and column indices in a grid, or a
/// hash map for blocks over 128 rows): O(block) per block.
pub fn block_sums(
    t: &[i64],
    p: &[i64],
    w: &[i64],
    block: usize,
    want: &[bool; 16],
    specs: &[Spec],
) -> (Vec<Vec<i128>>, Vec<Vec<i128>>) {
    assert!(block > 0 && t.len() == p.len() && t.len().is_multiple_of(block));
    assert!(w.is_empty() || w.len() == t.len());
    let blocks = t.len() / block;
    let mut sums: Vec<Vec<i128>> = want
        .iter()
        .map(|&on| if on { Vec::with_capacity(blocks) } else { Vec::new() })
        .collect();
    let mut fsums: Vec<Vec<i128>> = specs.iter().map(|_| Vec::with_capacity(blocks)).collect();
    if blocks == 0 {
        return (sums, fsums);
    }
    // the tables' sizes: above every code (the bitwise or of non-negative codes is at least
    // their largest and under the next power of two; one pass that vectorises, unlike a max)
    let kt = (bits_of(t) as usize) + 1;
    let kp = (bits_of(p) as usize) + 1;
    // the code tables and the cells' grid live as long as the thread: made once, not zeroed at
    // each call (a table over 10**5 codes would cost more to clear than a call's 10**4 rows to
    // sum)
    SCRATCH.with(|scratch| {
        let (rows, cols, grid) = &mut *scratch.borrow_mut();
        let input = Rows { t, p, w, block };
        sum_blocks(&input, want, specs, (kt, kp), (rows, cols, grid), (&mut sums, &mut fsums));
    });
    (sums, fsums)
}

/// The bitwise or of `codes` (0 when empty): for codes from 0 it is at least the largest, and
/// under [`CODES`] exactly when every code is (`CODES` is a power of two; a negative code makes
/// it negative). O(n), vectorised.
pub fn bits_of(codes: &[i64]) -> i64 {
    codes.iter().fold(0, |acc, &x| acc | x)
}

thread_local! {
    static SCRATCH: std::cell::RefCell<(Dense, Dense, Dense)> = std::cell::RefCell::default();
}

/// The rows of a [`block_sums`] call: codes, weights (empty: each 1), rows per block.
struct Rows<'a> {
    t: &'a [i64],
    p: &'a [i64],
    w: &'a [i64],
    block: usize,
}

/// The largest total weight of a block (exclusive), as the numpy twin's limit: with `num + den
/// <= 8` every term below fits in a `u64` (see [`sum_blocks`]).
const MAX_BLOCK_TOTAL: u64 = 1 << 28;

/// One block's rows (codes `t`, `p`, weights `w` if `WEIGHTED`, else each 1) counted, the block's
/// code tables and cell grid started: each row's and column's total (`a`, `b`, by dense index)
/// and each cell's `(count, row, column)` pushed to `cells` (empty) in the order first met. A
/// cell is found by the dense index of its key `row · 128 + column` in `grid` (block ≤ 128
/// rows: `128²` keys). The tables' stamps, counts and slices are held in locals for the loop
/// (a handful of instructions a row, no call). O(rows).
#[inline(never)]
fn count_in_grid<const WEIGHTED: bool>(
    (t, p, w): (&[i64], &[i64], &[i64]),
    (rows, cols, grid): (&mut Dense, &mut Dense, &mut Dense),
    (a, b): (&mut [u64], &mut [u64]),
    cells: &mut Vec<(u64, u32, u32)>,
) {
    let n = t.len();
    let (p, w) = (&p[..n], if WEIGHTED { &w[..n] } else { w });
    let (rnow, cnow, gnow) = (rows.now, cols.now, grid.now);
    let (mut rlen, mut clen, mut glen) = (rows.len, cols.len, grid.len);
    let (rslot, cslot, gslot) = (&mut rows.slot[..], &mut cols.slot[..], &mut grid.slot[..]);
    for r in 0..n {
        let c = if WEIGHTED { w[r] as u64 } else { 1 };
        let s = &mut rslot[t[r] as usize];
        let (i, new_row) = if s[0] == rnow {
            (s[1] as usize, false)
        } else {
            *s = [rnow, rlen];
            rlen += 1;
            (rlen as usize - 1, true)
        };
        let s = &mut cslot[p[r] as usize];
        let (j, new_col) = if s[0] == cnow {
            (s[1] as usize, false)
        } else {
            *s = [cnow, clen];
            clen += 1;
            (clen as usize - 1, true)
        };
        // a new row or column starts its total (and is a new cell)
        tally(&mut a[i], new_row, c);
        tally(&mut b[j], new_col, c);
        // the cell's key: i, j < 128 (a block's rows), so no two cells share one
        let s = &mut gslot[i << 7 | j];
        if s[0] == gnow {
            cells[s[1] as usize].0 += c;
        } else {
            *s = [gnow, glen];
            glen += 1;
            cells.push((c, i as u32, j as u32));
        }
    }
    (rows.len, cols.len, grid.len) = (rlen, clen, glen);
}

/// [`count_in_grid`] when the codes' cells are few (`kt · kp <=` [`DIRECT_KEYS`], `kp` the
/// columns' codes): a row is counted in its cell found directly by the key `t · kp + p` in
/// `keys` (one table lookup a row), and only then each cell's row and column get their dense
/// indices and totals (in the order the cells were first met, which is the order the rows and
/// columns were: a row's or column's first row starts a new cell). The same tables, totals and
/// cells, in the same order, as [`count_in_grid`]. O(rows + cells).
#[inline(never)]
fn count_by_keys<const WEIGHTED: bool>(
    (t, p, w): (&[i64], &[i64], &[i64]),
    kp: usize,
    (rows, cols, keys): (&mut Dense, &mut Dense, &mut Dense),
    (a, b): (&mut [u64], &mut [u64]),
    cells: &mut Vec<(u64, u32, u32)>,
) {
    let n = t.len();
    let (p, w) = (&p[..n], if WEIGHTED { &w[..n] } else { w });
    let (know, mut klen) = (keys.now, keys.len);
    let kslot = &mut keys.slot[..];
    for r in 0..n {
        let c = if WEIGHTED { w[r] as u64 } else { 1 };
        let (tr, pr) = (t[r] as usize, p[r] as usize);
        let s = &mut kslot[tr * kp + pr];
        if s[0] == know {
            cells[s[1] as usize].0 += c;
        } else {
            *s = [know, klen];
            klen += 1;
            cells.push((c, tr as u32, pr as u32)); // codes are under 2**22
        }
    }
    keys.len = klen;
    for cell in cells.iter_mut() {
        let (c, tr, pr) = *cell;
        let (i, new_row) = rows.get(tr as usize);
        let (j, new_col) = cols.get(pr as usize);
        tally(&mut a[i], new_row, c);
        tally(&mut b[j], new_col, c);
        *cell = (c, i as u32, j as u32);
    }
}

/// Add `c` to a row's or column's total, which starts at `c` when `new` (the slot taken in
/// this block: its old value is another block's). O(1).
#[inline(always)]
fn tally(total: &mut u64, new: bool, c: u64) {
    *total = if new { c } else { *total + c };
}

/// The most cells (`kt · kp`, codes below `kt` and `kp`) for which [`count_by_keys`] finds a
/// row's cell by its codes directly (a table of 2**16 keys, 512 KiB).
const DIRECT_KEYS: usize = 1 << 16;

/// [`count_in_grid`] for blocks over 128 rows: a cell found by its `(row, column)` in a hash
/// map (cleared here). O(rows).
fn count_in_map(
    (t, p, w): (&[i64], &[i64], &[i64]),
    (rows, cols): (&mut Dense, &mut Dense),
    cell_map: &mut hashbrown::HashMap<(u32, u32), u32>,
    (a, b): (&mut [u64], &mut [u64]),
    cells: &mut Vec<(u64, u32, u32)>,
) {
    cell_map.clear();
    for (r, (&tr, &pr)) in t.iter().zip(p).enumerate() {
        let c = if w.is_empty() { 1 } else { w[r] as u64 };
        let (i, new_row) = rows.get(tr as usize);
        let (j, new_col) = cols.get(pr as usize);
        tally(&mut a[i], new_row, c);
        tally(&mut b[j], new_col, c);
        let next = cells.len() as u32;
        let at = *cell_map.entry((i as u32, j as u32)).or_insert(next);
        if at == next {
            cells.push((c, i as u32, j as u32));
        } else {
            cells[at as usize].0 += c;
        }
    }
}

/// The keys of the cells' grid: `row · 128 + column` for a block of at most 128 rows.
const GRID_KEYS: usize = 128 * 128;

/// [`block_sums`]' work, with the code tables of the true and predicted labels (codes below
/// `kt`, `kp`), into its columns. Only the passes the wanted sums need are made: the F sums
/// alone (what `block_means` asks) read just the cells and their rows' and columns' totals.
///
/// Why 64 bits suffice: a block's total `n < 2**28` (asserted per block), so a cell, row or
/// column total `s <= n < 2**28`, a sum of squares `q <= s² < 2**56`, and with `num + den <= 8`
/// (so `num, den <= 7`) an F term's numerator `(num + den)·n·n < 2**59` and denominator
/// `num·a + den·b < 7·2**29 < 2**32`; `shift_div64` (or `fixed_quot_nz`, for a numerator above
/// 0) of them is `floor(x · 2**64 / d)` exactly.
#[allow(clippy::type_complexity)]
fn sum_blocks(
    input: &Rows<'_>,
    want: &[bool; 16],
    specs: &[Spec],
    (kt, kp): (usize, usize),
    (rows, cols, grid): (&mut Dense, &mut Dense, &mut Dense),
    (sums, fsums): (&mut [Vec<i128>], &mut [Vec<i128>]),
) {
    let Rows { t, p, w, block } = *input;
    assert!(specs.iter().all(|s| s.num + s.den <= 8), "beta² = num / den needs num + den <= 8");
    let blocks = t.len() / block;
    // which passes the wanted sums need: the cells' squares and largest cells per row and column
    // (sum_cell_sq, the BCubed and ELM sums, the largest cells, both_singletons), the per-row
    // and per-column sums (sum_row_sq .. pred_singletons)
    let cell_pass = want[4] || want[7..=12].iter().any(|&x| x) || want[15];
    let side_pass = want[5..=14].iter().any(|&x| x);
    // cells by (row, column) index in a grid (a table over 128² keys, stamped per block as the
    // code tables are), else in a hash map
    let by_grid = block <= 128;
    // or, when the codes' cells are few, by their codes directly (the grid's table over their keys)
    let direct = kt.checked_mul(kp).is_some_and(|keys| keys <= DIRECT_KEYS);
    let mut cell_map: hashbrown::HashMap<(u32, u32), u32> = hashbrown::HashMap::new();
    // per block: each row's and column's total, its cells' squares and largest cell; each
    // cell's (count, row, column)
    let (mut a, mut b): (Vec<u64>, Vec<u64>) = (vec![0; block], vec![0; block]);
    let (mut rsq, mut csq): (Vec<u64>, Vec<u64>) = (vec![0; block], vec![0; block]);
    let (mut rmax, mut cmax): (Vec<u64>, Vec<u64>) = (vec![0; block], vec![0; block]);
    let mut cells: Vec<(u64, u32, u32)> = Vec::with_capacity(block);
    for k in 0..blocks {
        let lo = k * block;
        rows.start(kt);
        cols.start(kp);
        cells.clear();
        if direct {
            grid.start(kt * kp);
        } else if by_grid {
            grid.start(GRID_KEYS);
        }
        let (bt, bp) = (&t[lo..lo + block], &p[lo..lo + block]);
        let bw = if w.is_empty() { w } else { &w[lo..lo + block] };
        let totals = (&mut a[..], &mut b[..]);
        match (by_grid, bw.is_empty()) {
            _ if direct && bw.is_empty() => {
                count_by_keys::<false>((bt, bp, bw), kp, (rows, cols, grid), totals, &mut cells)
            }
            _ if direct => count_by_keys::<true>((bt, bp, bw), kp, (rows, cols, grid), totals, &mut cells),
            (true, true) => count_in_grid::<false>((bt, bp, bw), (rows, cols, grid), totals, &mut cells),
            (true, false) => count_in_grid::<true>((bt, bp, bw), (rows, cols, grid), totals, &mut cells),
            (false, _) => count_in_map((bt, bp, bw), (rows, cols), &mut cell_map, totals, &mut cells),
        }
        let (m, k_true, k_pred) = (cells.len(), rows.len as usize, cols.len as usize);
        let n: u64 = a[..k_true].iter().sum();
        assert!(n < MAX_BLOCK_TOTAL, "a block's total weight must be under 2**28");
        let mut values = [0i128; 16];
        values[..4].copy_from_slice(&[n as i128, m as i128, k_true as i128, k_pred as i128]);
        if cell_pass {
            rsq[..k_true].iter_mut().for_each(|x| *x = 0);
            csq[..k_pred].iter_mut().for_each(|x| *x = 0);
            rmax[..k_true].iter_mut().for_each(|x| *x = 0);
            cmax[..k_pred].iter_mut().for_each(|x| *x = 0);
            let (mut cell_sq, mut both) = (0i128, 0i128);
            for &(n, i, j) in &cells {
                let (i, j) = (i as usize, j as usize);
                let sq = n * n;
                rsq[i] += sq;
                csq[j] += sq;
                rmax[i] = rmax[i].max(n);
                cmax[j] = cmax[j].max(n);
                cell_sq += sq as i128;
                both += (a[i] == 1 && b[j] == 1) as i128;
            }
            values[4] = cell_sq;
            values[15] = both;
        }
        if side_pass {
            // the per-row and per-column sums (of the first k_true rows, k_pred columns)
            let side = |tot: &[u64], sq: &[u64], mx: &[u64], count: usize, bc: bool, elm: bool| {
                let (mut s2, mut smax, mut single, mut fb, mut fe) = (0i128, 0i128, 0i128, 0i128, 0i128);
                for x in 0..count {
                    let (s, q) = (tot[x], sq[x]);
                    s2 += (s * s) as i128;
                    smax += mx[x] as i128;
                    single += (s == 1) as i128;
                    if bc {
                        fb += fixed(q, s);
                    }
                    if elm {
                        fe += if s > 1 { fixed(q - s, s - 1) } else { ONE };
                    }
                }
                (s2, smax, single, fb, fe)
            };
            let (row_sq, row_max, t_single, bc_r, elm_r) = side(&a, &rsq, &rmax, k_true, want[8], want[10]);
            let (col_sq, col_max, p_single, bc_p, elm_p) = side(&b, &csq, &cmax, k_pred, want[7], want[9]);
            values[5..15].copy_from_slice(&[
                row_sq, col_sq, bc_p, bc_r, elm_p, elm_r, col_max, row_max, t_single, p_single,
            ]);
        }
        for (column, (&on, &v)) in sums.iter_mut().zip(want.iter().zip(values.iter())) {
            if on {
                column.push(v);
            }
        }
        for (column, s) in fsums.iter_mut().zip(specs) {
            let (num, den) = (s.num, s.den);
            let mut f = 0i128;
            for &(n, i, j) in &cells {
                let (ra, cb) = (a[i as usize], b[j as usize]);
                f += if s.elm {
                    let d = num * (ra - 1) + den * (cb - 1);
                    if d == 0 {
                        ONE // alone in its row and column (n = 1): F = 1
                    } else if n > 1 {
                        fixed_quot_nz((num + den) * n * (n - 1), d)
                    } else {
                        0
                    }
                } else {
                    fixed_quot_nz((num + den) * n * n, num * ra + den * cb)
                };
            }
            column.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [bool; 16] = [true; 16];

    fn sums_of(t: &[i64], p: &[i64], w: &[i64], block: usize) -> Vec<Vec<i128>> {
        block_sums(t, p, w, block, &ALL, &[]).0
    }

    #[test]
    fn counts_of_a_small_block() {
        // cells (0,5):1 (0,6):1 (1,6):2 — rows 2, 2; columns 1, 3
        let s = sums_of(&[0, 0, 1, 1], &[5, 6, 6, 6], &[], 4);
        let get = |name: &str| s[NAMES.iter().position(|&x| x == name).unwrap()][0];
        assert_eq!(get("n"), 4);
        assert_eq!(get("cells"), 3);
        assert_eq!((get("k_true"), get("k_pred")), (2, 2));
        assert_eq!(get("sum_cell_sq"), 1 + 1 + 4);
        assert_eq!((get("sum_row_sq"), get("sum_col_sq")), (8, 10));
        assert_eq!((get("sum_row_max"), get("sum_col_max")), (3, 3));
        assert_eq!((get("true_singletons"), get("pred_singletons")), (0, 1));
        assert_eq!(get("both_singletons"), 0);
        // BCubed recall: rows (1+1)/2 + 4/2 = 3; precision: 1/1 + (1+4)/3
        assert_eq!(get("bcubed_r_sum"), 3 * ONE);
        assert_eq!(get("bcubed_p_sum"), ONE + shift_div64(5, 3));
    }

    #[test]
    fn blocks_are_separate_and_weights_count() {
        let s = block_sums(&[0, 0, 0, 1], &[0, 0, 0, 1], &[1, 2, 3, 1], 2, &ALL, &[
            Spec { elm: true, num: 1, den: 1 },
            Spec { elm: false, num: 1, den: 1 },
        ]);
        assert_eq!(s.0[0], vec![3, 4]); // n per block
        assert_eq!(s.0[1], vec![1, 2]); // cells
        // block 0: one cell of 3 in a row and column of 3: ELM F = 2·3·2/4 = 3; BCubed 2·9/6 = 3
        // block 1: (0,0):3, (1,1):1 alone: ELM 0 + 1 (n·2**64), BCubed 3 + 1
        assert_eq!(s.1[0], vec![3 * ONE, 4 * ONE]);
        assert_eq!(s.1[1], vec![3 * ONE, 4 * ONE]);
    }

    #[test]
    fn cells_by_codes_or_by_grid_are_the_same_sums() {
        // the same rows with codes few (cells found by their codes) and spread out (past
        // DIRECT_KEYS: cells found in the grid of dense indices), weighted and not
        let (t, p): (Vec<i64>, Vec<i64>) = (0..400).map(|r| (r * 7 % 9, r * r % 11)).unzip();
        let w: Vec<i64> = (0..400).map(|r| r % 4 + 1).collect();
        let (wide_t, wide_p): (Vec<i64>, Vec<i64>) =
            t.iter().zip(&p).map(|(&a, &b)| (a * 40_000, b * 30_000 + 7)).unzip();
        const { assert!(9 * 11 <= DIRECT_KEYS && 320_001 * 300_008 > DIRECT_KEYS as u64) };
        let specs = [Spec { elm: true, num: 1, den: 1 }, Spec { elm: false, num: 2, den: 1 }];
        for weights in [&w[..], &[]] {
            for block in [1, 7, 100, 128] {
                let rows = 400 / block * block;
                let wt = if weights.is_empty() { weights } else { &weights[..rows] };
                let few = block_sums(&t[..rows], &p[..rows], wt, block, &ALL, &specs);
                let wide = block_sums(&wide_t[..rows], &wide_p[..rows], wt, block, &ALL, &specs);
                assert_eq!(few, wide, "block {block}");
            }
        }
    }

    #[test]
    fn singletons_and_unwanted_columns() {
        let mut want = [false; 16];
        want[15] = true;
        let s = block_sums(&[0, 1, 2], &[0, 1, 1], &[], 3, &want, &[]);
        assert!(s.0[0].is_empty());
        assert_eq!(s.0[15], vec![1]);
    }

    #[test]
    fn a_sum_alone_is_the_same_sum() {
        // the passes skipped for the sums not wanted change none of the others
        let (t, p): (Vec<i64>, Vec<i64>) = (0..60).map(|r| (r * 7 % 5, r * 3 % 4)).unzip();
        let w: Vec<i64> = (0..60).map(|r| r % 3 + 1).collect();
        let specs = [Spec { elm: true, num: 1, den: 1 }, Spec { elm: false, num: 3, den: 1 }];
        let (all, f_all) = block_sums(&t, &p, &w, 20, &ALL, &specs);
        for k in 0..16 {
            let mut want = [false; 16];
            want[k] = true;
            let (one, f_one) = block_sums(&t, &p, &w, 20, &want, &specs);
            assert_eq!(one[k], all[k], "{}", NAMES[k]);
            assert_eq!(f_one, f_all);
        }
        assert_eq!(block_sums(&t, &p, &w, 20, &[false; 16], &specs).1, f_all);
    }
}
