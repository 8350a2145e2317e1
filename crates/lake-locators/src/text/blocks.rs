//! What the row formats keep per block beyond its position: the numeric bounds of its rows
//! (the block `stats` of the map, which let a filter skip blocks of a file whose file
//! statistics keep it) and its fine checkpoints (the block `fine` of the map, which let a read
//! start within [`MAP_FINE`] rows of its first row instead of up to a block away).
//!
//! Both are exact whatever the scan's split: a block's bounds are those of its own rows, and
//! its fine checkpoints are the record starts of the rows `MAP_FINE`, `2 * MAP_FINE`, ... of
//! the block, so that a map does not depend on the thread count.

use crate::locator::{Block, FineCheckpoints, Stats};
pub(crate) use crate::text::bounds::BlockBounds;
use crate::text::infer::{ColumnInfer, Columns};
use std::ops::Range;

/// Rows between two fine checkpoints kept in the map: a read skips fewer records than this
/// past its checkpoint. Each costs a few bytes of the map per 256 rows of the file (well
/// under 1% of any text file's size), and nothing to find: the range scans keep a checkpoint
/// every [`FINE_STRIDE`](crate::text::split::FINE_STRIDE) rows, the same. Maps written with
/// another value (4,096, then 1,024 before) still read: a block's `fine.rows` says its own.
pub(crate) const MAP_FINE: u64 = 256;

/// The fine checkpoint stride kept in the map for the stride `stride`, or `None` when blocks
/// get none: blocks of at most [`MAP_FINE`] rows need none, and a stride that is no multiple
/// of it would put the fine checkpoints of consecutive blocks out of step.
pub(crate) fn map_fine(stride: u64) -> Option<u64> {
    (stride > MAP_FINE && stride.is_multiple_of(MAP_FINE)).then_some(MAP_FINE)
}

impl Columns {
    /// Ends a block: the numeric bounds of its rows for every tracked column that had any
    /// (see [`ColumnInfer::flush_block`]).
    pub(crate) fn flush_block(&mut self) -> BlockBounds {
        let mut out = BlockBounds::new();
        for (i, c) in self.cols.iter_mut().enumerate() {
            if c.tracks() {
                let b = c.flush_block();
                if !b.is_empty() {
                    out.push((i, b));
                }
            }
        }
        out
    }

    /// Makes every column's numeric bounds those of all its rows again (after blocks were
    /// flushed).
    pub(crate) fn fold_blocks(&mut self) {
        for c in &mut self.cols {
            c.fold_blocks();
        }
    }
}

/// Joins `other` into `into` (the bounds of more rows of the same block).
pub(crate) fn merge_block(into: &mut BlockBounds, other: &BlockBounds) {
    for (i, b) in other {
        match into.iter_mut().find(|(j, _)| j == i) {
            Some((_, mine)) => mine.merge(b),
            None => into.push((*i, *b)),
        }
    }
}

/// The block statistics of `bounds` under the final columns `cols`: Int64 and Float64
/// columns whose statistics are wanted; `None` when no column has any.
pub(crate) fn block_stats(cols: &[ColumnInfer], bounds: &BlockBounds) -> Option<Stats> {
    let mut stats = Stats::new();
    for (i, b) in bounds {
        let Some(c) = cols.get(*i) else { continue };
        if !c.tracks() {
            continue;
        }
        if let Some(s) = b.stats(&c.data_type()) {
            stats.insert(c.name.clone(), s);
        }
    }
    (!stats.is_empty()).then_some(stats)
}

/// Groups checkpoints every `fine` rows (record starts of the rows `0, fine, 2 * fine, ...`,
/// in order, sizes not filled in) into blocks of `stride` rows (a multiple of `fine`) that
/// keep the others as their fine checkpoints. Also returns, per block, the range of `fine`
/// entries it took, for the caller to join per-checkpoint facts.
pub(crate) fn group_fine(
    fine: Vec<Block>,
    stride: u64,
    fine_rows: u64,
) -> (Vec<Block>, Vec<std::ops::Range<usize>>) {
    let mut blocks: Vec<Block> = Vec::with_capacity(fine.len() / (stride / fine_rows) as usize + 1);
    let mut taken = Vec::with_capacity(blocks.capacity());
    for (k, f) in fine.into_iter().enumerate() {
        if f.first_row.is_multiple_of(stride) || blocks.is_empty() {
            blocks.push(Block {
                ordinal: blocks.len() as u64,
                first_row: f.first_row,
                ..f
            });
            taken.push(k..k + 1);
            continue;
        }
        let (Some(block), Some(range)) = (blocks.last_mut(), taken.last_mut()) else {
            continue;
        };
        range.end = k + 1;
        if let (Some(start), Some(at)) = (block.first_byte, f.first_byte) {
            block
                .fine
                .get_or_insert_with(|| FineCheckpoints {
                    rows: fine_rows,
                    bytes: Vec::new(),
                })
                .bytes
                .push(at - start);
        }
    }
    (blocks, taken)
}

/// The blocks of a scan that checkpointed every `fine` rows (when `Some`) grouped into
/// blocks of `stride` rows with their fine checkpoints, each with the joined bounds of the
/// checkpoints it took (`bounds` is empty when no statistics were gathered). Without `fine`
/// the scan's blocks are the blocks.
pub(crate) fn regroup(
    blocks: Vec<Block>,
    bounds: Vec<BlockBounds>,
    stride: u64,
    fine: Option<u64>,
) -> (Vec<Block>, Vec<BlockBounds>) {
    let Some(fine) = fine else {
        return (blocks, bounds);
    };
    let (blocks, taken) = group_fine(blocks, stride, fine);
    if bounds.is_empty() {
        return (blocks, bounds);
    }
    let joined = taken
        .into_iter()
        .map(|r| {
            let mut b = BlockBounds::new();
            for part in bounds.get(r).into_iter().flatten() {
                merge_block(&mut b, part);
            }
            b
        })
        .collect();
    (blocks, joined)
}

/// Sets each block's statistics from its bounds (see [`block_stats`]); `bounds` is empty when
/// no statistics were gathered.
pub(crate) fn attach_stats(blocks: &mut [Block], cols: &[ColumnInfer], bounds: &[BlockBounds]) {
    for (block, b) in blocks.iter_mut().zip(bounds) {
        block.stats = block_stats(cols, b);
    }
}

/// The bounds of the blocks of a split scan, joined range by range. A range's scan gathers
/// bounds per checkpoint of its own (every `fine` rows from its first); those that lie in one
/// block join it, and the few that hold a block start are read again in two parts.
pub(crate) struct SplitBounds {
    stride: u64,
    fine: u64,
    blocks: Vec<BlockBounds>,
    straddles: Vec<Straddle>,
}

/// Rows of a range's checkpoint that hold the start of block `before + 1`.
struct Straddle {
    before: usize,
    /// The first row of the next block.
    row: u64,
    /// Bytes of the checkpoint's rows.
    bytes: Range<usize>,
}

impl SplitBounds {
    /// Nothing joined yet: blocks of `stride` rows, ranges checkpointed every `fine` rows
    /// (at most `stride`).
    pub(crate) fn new(stride: u64, fine: u64) -> Self {
        SplitBounds {
            stride,
            fine,
            blocks: Vec::new(),
            straddles: Vec::new(),
        }
    }

    fn slot(&mut self, block: usize) -> &mut BlockBounds {
        if self.blocks.len() <= block {
            self.blocks.resize_with(block + 1, BlockBounds::new);
        }
        &mut self.blocks[block]
    }

    /// Joins the next range: its first row is `first`, its checkpoints `fine` (bytes
    /// absolute), `bounds` the bounds per checkpoint (empty without statistics), `rows` its
    /// rows and `end` the byte after it.
    pub(crate) fn join(
        &mut self,
        first: u64,
        fine: &[Block],
        bounds: Vec<BlockBounds>,
        rows: u64,
        end: usize,
    ) {
        for (k, b) in bounds.into_iter().enumerate() {
            let lo = first + k as u64 * self.fine;
            let hi = first + ((k as u64 + 1) * self.fine).min(rows);
            if hi <= lo {
                continue;
            }
            let (b0, b1) = (
                (lo / self.stride) as usize,
                ((hi - 1) / self.stride) as usize,
            );
            if b0 == b1 {
                merge_block(self.slot(b0), &b);
                continue;
            }
            let byte = |i: usize| fine.get(i).and_then(|f| f.first_byte).map(|x| x as usize);
            let start = byte(k).unwrap_or(end);
            self.straddles.push(Straddle {
                before: b0,
                row: b1 as u64 * self.stride,
                bytes: start..byte(k + 1).unwrap_or(end),
            });
        }
    }

    /// The bounds of every block (empty without statistics): `checkpoints` (in row order)
    /// hold every block start, and `scan` gives the bounds of the records in a byte range.
    /// `None` when a block start is missing or a scan fails.
    pub(crate) fn finish(
        mut self,
        checkpoints: &[Block],
        mut scan: impl FnMut(Range<usize>) -> Option<BlockBounds>,
    ) -> Option<Vec<BlockBounds>> {
        for s in std::mem::take(&mut self.straddles) {
            let i = checkpoints.partition_point(|b| b.first_row < s.row);
            let at = checkpoints
                .get(i)
                .filter(|b| b.first_row == s.row)?
                .first_byte? as usize;
            let before = scan(s.bytes.start..at)?;
            merge_block(self.slot(s.before), &before);
            let after = scan(at..s.bytes.end)?;
            merge_block(self.slot(s.before + 1), &after);
        }
        Some(self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locator::ColumnStats;
    use crate::text::bounds::NumBounds;
    use arrow_schema::DataType;

    fn at(row: u64, byte: u64) -> Block {
        Block {
            first_byte: Some(byte),
            ..Block::rows(0, row, 0)
        }
    }

    #[test]
    fn fine_checkpoints_group_into_blocks() {
        let fine = vec![at(0, 10), at(4, 20), at(8, 35), at(12, 50), at(16, 70)];
        let (blocks, taken) = group_fine(fine, 8, 4);
        assert_eq!(blocks.len(), 3);
        assert_eq!((blocks[0].first_row, blocks[0].first_byte), (0, Some(10)));
        assert_eq!(
            blocks[0].fine.as_ref().map(|f| &f.bytes[..]),
            Some(&[10][..])
        );
        assert_eq!(blocks[1].fine.as_ref().map(|f| f.rows), Some(4));
        assert_eq!(
            blocks[1].fine.as_ref().map(|f| &f.bytes[..]),
            Some(&[15][..])
        );
        assert_eq!(blocks[2].fine, None);
        assert_eq!(blocks[2].ordinal, 2);
        assert_eq!(taken, vec![0..2, 2..4, 4..5]);
    }

    #[test]
    fn bounds_follow_the_final_type() {
        let b = NumBounds {
            int: Some((-3, 7)),
            float: Some((0.5, 9.5)),
        };
        assert_eq!(
            b.stats(&DataType::Int64),
            Some(ColumnStats::Int { min: -3, max: 7 })
        );
        assert_eq!(
            b.stats(&DataType::Float64),
            Some(ColumnStats::Float {
                min: -3.0,
                max: 9.5
            })
        );
        assert_eq!(b.stats(&DataType::Utf8), None);
        let mut m: BlockBounds = vec![(1, b)];
        merge_block(
            &mut m,
            &vec![
                (
                    1,
                    NumBounds {
                        int: Some((-9, 0)),
                        float: None,
                    },
                ),
                (2, NumBounds::default()),
            ],
        );
        assert_eq!(m[0].1.int, Some((-9, 7)));
        assert_eq!(m.len(), 2);
        assert!(m[1].1.is_empty());
        assert_eq!(map_fine(65_536), Some(256));
        assert_eq!(map_fine(4096), Some(256));
        assert_eq!(map_fine(1536), Some(256));
        assert_eq!(map_fine(256), None);
        assert_eq!(map_fine(100), None);
        assert_eq!(map_fine(10_000), None);
    }
}
