//! Where the rows of a block of whole text lines end: the positions `watch` records for its
//! checkpoints, found only for the rows that need one (the Rust twin of
//! `streameval.blocks.row_positions`, which finds every row's in numpy).
//!
//! A block's lines are split at `\n` (an unterminated last line ends at the block's end); a row
//! is a line that is not blank (a blank line is empty or a lone `\r`, as the readers skip them).

/// From byte `pos` of `chunk` (the start of a line), the `rows`-th row (`rows >= 1`):
/// `(the offset after it, the lines from pos up to and including it)`, or `None` when the block
/// holds fewer rows from there. O(bytes scanned).
pub fn row_end(chunk: &[u8], mut pos: usize, rows: usize) -> Option<(usize, usize)> {
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

#[cfg(test)]
mod tests {
    use super::row_end;

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
}
