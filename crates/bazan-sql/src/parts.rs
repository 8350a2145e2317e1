//! Scan partitions of a lake: the selected global rows cut into per-file pieces at block
//! boundaries, then grouped into partitions of about equal row counts, so that one large file
//! is read by several cores and a small selection stays in one partition.

use std::ops::Range;

use crate::filters::FileFacts;
use crate::rowset::RowSet;

/// Local rows `[start, end)` of one file of the lake: what a partition of a lake scan reads
/// is a list of these ([`crate::LakeScanExec::partitions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "proto", derive(serde::Serialize, serde::Deserialize))]
pub struct Part {
    /// Entry index in map order.
    pub file: usize,
    /// First local row.
    pub start: u64,
    /// One past the last local row.
    pub end: u64,
    /// Blocks of the file this part touches (1 for a file without blocks).
    pub blocks: u64,
}

impl Part {
    /// Rows in the part.
    pub fn rows(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// The per-file local ranges of a row set, in map order.
pub(crate) fn file_ranges(rows: &RowSet, files: &[FileFacts]) -> Vec<(usize, Range<u64>)> {
    let mut out = Vec::new();
    for r in rows.ranges() {
        // First file whose rows end after r.start (files are in global-row order).
        let mut i = files.partition_point(|f| f.first + f.rows <= r.start);
        while i < files.len() && files[i].first < r.end {
            let f = &files[i];
            let start = r.start.max(f.first);
            let end = r.end.min(f.first + f.rows);
            if start < end {
                out.push((i, start - f.first..end - f.first));
            }
            i += 1;
        }
    }
    out
}

/// Cuts the local ranges at block boundaries (`block_starts(i)`: the first local row of every
/// block of file `i`, ascending; empty for a file without blocks) and groups the pieces, in
/// order, into at most `target` partitions of about equal rows. Always one partition at least.
pub(crate) fn plan_partitions(
    ranges: &[(usize, Range<u64>)],
    block_starts: &dyn Fn(usize) -> Vec<u64>,
    target: usize,
) -> Vec<Vec<Part>> {
    let mut pieces: Vec<Part> = Vec::new();
    for (file, range) in ranges {
        let starts = block_starts(*file);
        if starts.is_empty() {
            pieces.push(Part {
                file: *file,
                start: range.start,
                end: range.end,
                blocks: 1,
            });
            continue;
        }
        // Blocks overlapping the range: from the one holding range.start.
        let first = starts.partition_point(|&s| s <= range.start).max(1) - 1;
        let mut at = range.start;
        for (k, _) in starts.iter().enumerate().skip(first) {
            let block_end = starts.get(k + 1).copied().unwrap_or(u64::MAX);
            let end = block_end.min(range.end);
            if at < end {
                pieces.push(Part {
                    file: *file,
                    start: at,
                    end,
                    blocks: 1,
                });
                at = end;
            }
            if at >= range.end {
                break;
            }
        }
    }
    let total: u64 = pieces.iter().map(Part::rows).sum();
    let target = target.max(1).min(pieces.len().max(1));
    let per = total.div_ceil(target as u64).max(1);
    let mut out: Vec<Vec<Part>> = vec![Vec::new()];
    let mut in_current = 0u64;
    for piece in pieces {
        if in_current >= per && out.len() < target {
            out.push(Vec::new());
            in_current = 0;
        }
        in_current += piece.rows();
        let current = out.last_mut().expect("out starts with one partition");
        match current.last_mut() {
            Some(last) if last.file == piece.file && last.end == piece.start => {
                last.end = piece.end;
                last.blocks += piece.blocks;
            }
            _ => current.push(piece),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(first: u64, rows: u64) -> FileFacts {
        FileFacts {
            path: format!("f{first}"),
            first,
            rows,
            columns: None,
            bounds: Vec::new(),
        }
    }

    #[test]
    fn ranges_split_by_file() {
        let files = vec![facts(0, 10), facts(10, 0), facts(10, 5), facts(15, 20)];
        let rows = RowSet::from_ranges(vec![8..12, 14..16, 30..40]);
        assert_eq!(
            file_ranges(&rows, &files),
            vec![(0, 8..10), (2, 0..2), (2, 4..5), (3, 0..1), (3, 15..20)]
        );
    }

    #[test]
    fn one_file_is_cut_at_blocks_into_partitions() {
        let blocks = |_: usize| vec![0, 100, 200, 300];
        let parts = plan_partitions(&[(0, 0..400)], &blocks, 2);
        assert_eq!(
            parts,
            vec![
                vec![Part {
                    file: 0,
                    start: 0,
                    end: 200,
                    blocks: 2
                }],
                vec![Part {
                    file: 0,
                    start: 200,
                    end: 400,
                    blocks: 2
                }],
            ]
        );
        let parts = plan_partitions(&[(0, 150..160)], &blocks, 4);
        assert_eq!(
            parts,
            vec![vec![Part {
                file: 0,
                start: 150,
                end: 160,
                blocks: 1
            }]]
        );
        let none = plan_partitions(&[], &blocks, 4);
        assert_eq!(none, vec![Vec::<Part>::new()]);
        let no_blocks = |_: usize| Vec::new();
        let parts = plan_partitions(&[(0, 0..10), (1, 0..10)], &no_blocks, 8);
        assert_eq!(parts.len(), 2);
    }
}
