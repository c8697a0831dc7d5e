//! Where the rows of a block of whole text lines end: the positions `watch` records for its
//! checkpoints, found only for the rows that need one (the Rust twin of
//! `streameval.blocks.row_positions`, which finds every row's in numpy).
//!
//! A block's lines are split at `\n` (an unterminated last line ends at the block's end); a row
//! is a line that is not blank (a blank line is empty or a lone `\r`, as the readers skip them).

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;

/// The high bit of each byte of `word` (little-endian) that is `\n`, the others clear: with
/// `x = word ^ 0x0a..0a` (a newline byte becomes 0), `(x & 0x7f) + 0x7f` sets a byte's high bit
/// iff its low seven bits are not all 0, and it carries into no other byte; or-ed with `x`, a
/// byte's high bit is clear iff the byte is 0. Exact for every byte. O(1).
#[inline]
fn newline_bits(word: u64) -> u64 {
    let x = word ^ NEWLINES;
    !((x & LOW7).wrapping_add(LOW7) | x) & !LOW7
}

/// The lines seen so far from the scan's start and the rows among them, up to the wanted one.
struct Scan {
    start: usize, // the current line's first byte
    found: usize,
    lines: usize,
    rows: usize,
}

impl Scan {
    /// The current line ends at `end` (its `\n`, or the block's end): `Some((offset after it,
    /// lines))` if it is the wanted row.
    #[inline]
    fn line(&mut self, chunk: &[u8], end: usize) -> Option<(usize, usize)> {
        let size = end - self.start;
        self.lines += 1;
        let after = (end + 1).min(chunk.len());
        if size > 1 || (size == 1 && chunk[self.start] != b'\r') {
            self.found += 1;
            if self.found == self.rows {
                return Some((after, self.lines));
            }
        }
        self.start = after;
        None
    }
}

/// From byte `pos` of `chunk` (the start of a line), the `rows`-th row (`rows >= 1`):
/// `(the offset after it, the lines from pos up to and including it)`, or `None` when the block
/// holds fewer rows from there. The newlines are found eight bytes at a time
/// ([`newline_bits`]). O(bytes scanned).
pub fn row_end(chunk: &[u8], pos: usize, rows: usize) -> Option<(usize, usize)> {
    let len = chunk.len();
    let mut scan = Scan { start: pos, found: 0, lines: 0, rows };
    let mut i = pos;
    while i + 8 <= len {
        let word = u64::from_le_bytes(chunk[i..i + 8].try_into().expect("eight bytes"));
        let mut bits = newline_bits(word);
        while bits != 0 {
            let end = i + (bits.trailing_zeros() / 8) as usize;
            bits &= bits - 1;
            if let Some(got) = scan.line(chunk, end) {
                return Some(got);
            }
        }
        i += 8;
    }
    for end in i..len {
        if chunk[end] == b'\n' {
            if let Some(got) = scan.line(chunk, end) {
                return Some(got);
            }
        }
    }
    if scan.start < len {
        return scan.line(chunk, len); // an unterminated last line
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{newline_bits, row_end};

    /// The line-at-a-time scan [`row_end`] replaces: the same answers, the reference.
    fn row_end_by_lines(chunk: &[u8], mut pos: usize, rows: usize) -> Option<(usize, usize)> {
        let len = chunk.len();
        let (mut found, mut lines) = (0usize, 0usize);
        while pos < len {
            let end = chunk[pos..].iter().position(|&c| c == b'\n').map_or(len, |k| pos + k);
            let size = end - pos;
            lines += 1;
            let after = (end + 1).min(len);
            if size > 1 || (size == 1 && chunk[pos] != b'\r') {
                found += 1;
                if found == rows {
                    return Some((after, lines));
                }
            }
            pos = after;
        }
        None
    }

    #[test]
    fn rows_skip_blank_lines() {
        let chunk = b"a,x\n\nb,y\r\n\r\nc,z";
        assert_eq!(row_end(chunk, 0, 1), Some((4, 1)));
        assert_eq!(row_end(chunk, 0, 2), Some((10, 3)));
        assert_eq!(row_end(chunk, 0, 3), Some((15, 5)));
        assert_eq!(row_end(chunk, 4, 1), Some((10, 2)));
        assert_eq!(row_end(chunk, 0, 4), None);
        assert_eq!(row_end(b"", 0, 1), None);
    }

    #[test]
    fn newline_bits_are_exact() {
        for b in 0..=255u8 {
            for other in [0u8, 1, 9, 10, 11, 0x0b, 0x7f, 0x80, 0x8a, 0xff] {
                let word = u64::from_le_bytes([other, b, other, b'\n', b, other, b, other]);
                let want: u64 = (0..8)
                    .filter(|&k| word.to_le_bytes()[k] == b'\n')
                    .map(|k| 0x80u64 << (8 * k))
                    .sum();
                assert_eq!(newline_bits(word), want, "byte {b} beside {other}");
            }
        }
    }

    #[test]
    fn word_scan_equals_the_line_scan() {
        // random blocks of short lines, blank lines, lone and paired carriage returns
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let alphabet = [b'a', b'1', b',', b'\n', b'\n', b'\r', 0xc3, 0x0a ^ 0x80];
        for _ in 0..3000 {
            let len = next(70) as usize;
            let chunk: Vec<u8> = (0..len).map(|_| alphabet[next(8) as usize]).collect();
            let starts: Vec<usize> = std::iter::once(0)
                .chain((0..len).filter(|&k| chunk[k] == b'\n').map(|k| k + 1))
                .filter(|&k| k <= len)
                .collect();
            for &pos in &starts {
                for rows in 1..12 {
                    assert_eq!(row_end(&chunk, pos, rows), row_end_by_lines(&chunk, pos, rows),
                               "{chunk:?} from {pos}, row {rows}");
                }
            }
        }
    }
}
