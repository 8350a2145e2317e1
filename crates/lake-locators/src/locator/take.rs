//! The pieces of [`Locator::read_rows`] every format shares: checking the requested rows,
//! grouping them by block, keeping the wanted rows of a decoded batch, and the default
//! implementation over [`Locator::read`] that formats without a faster way use (and every
//! dynamic handler, which implements `read` only).

use std::ops::Range;
use std::path::Path;

use arrow_array::{RecordBatch, UInt32Array};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::locator::{Block, Locator, RowsRequest};

/// Checks that `rows` are ascending, distinct and below `total` (when known).
pub fn check_rows(path: &Path, rows: &[u64], total: Option<u64>) -> Result<()> {
    if let Some(w) = rows.windows(2).find(|w| w[0] >= w[1]) {
        return Err(Error::InvalidRequest {
            path: path.to_path_buf(),
            message: format!(
                "rows must be ascending and distinct, row {} comes after row {}",
                w[1], w[0]
            ),
        });
    }
    if let (Some(total), Some(&last)) = (total, rows.last())
        && last >= total
    {
        return Err(past_end(path, last, total));
    }
    Ok(())
}

/// The error for a wanted row the file does not have (the index no longer fits the file).
pub(crate) fn past_end(path: &Path, row: u64, total: u64) -> Error {
    Error::StaleIndex {
        path: path.to_path_buf(),
        message: format!("row {row} is past the end of the file ({total} rows)"),
    }
}

/// Splits ascending `rows` by the block holding each: `(block index, range of rows)` in
/// order, one item per touched block. Rows past the last block go with the last block (the
/// caller checks them against the row count).
pub fn by_block(rows: &[u64], blocks: &[Block]) -> Vec<(usize, Range<usize>)> {
    let mut out: Vec<(usize, Range<usize>)> = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        // The last block starting at or before the row.
        let b = blocks
            .partition_point(|b| b.first_row <= rows[i])
            .saturating_sub(1);
        let end = match blocks.get(b + 1) {
            Some(next) => i + rows[i..].partition_point(|&r| r < next.first_row),
            None => rows.len(),
        };
        out.push((b, i..end));
        i = end;
    }
    out
}

/// Wanted rows further apart than this, in a block with fine checkpoints, are read by
/// separate reads: a read seeks to the fine checkpoint before its first row, and skipping
/// records to a row costs far less than decoding the rows between two wanted ones.
const SPARSE_GAP: u64 = 64;

/// The groups of [`by_block`] cut where two wanted rows of a block with fine checkpoints lie
/// more than [`SPARSE_GAP`] rows apart (formats without them read each block in one go).
pub(crate) fn split_sparse(
    rows: &[u64],
    blocks: &[Block],
    groups: Vec<(usize, Range<usize>)>,
) -> Vec<(usize, Range<usize>)> {
    let mut out = Vec::with_capacity(groups.len());
    for (b, range) in groups {
        if blocks.get(b).is_none_or(|b| b.fine.is_none()) {
            out.push((b, range));
            continue;
        }
        let mut start = range.start;
        for i in range.start + 1..range.end {
            if rows[i] - rows[i - 1] > SPARSE_GAP {
                out.push((b, start..i));
                start = i;
            }
        }
        out.push((b, start..range.end));
    }
    out
}

/// Keeps the wanted rows of decoded batches as they stream by, in order.
pub(crate) struct Picker<'a> {
    /// The wanted rows still ahead, ascending.
    rows: &'a [u64],
    /// Local row of the next batch's first row.
    at: u64,
}

impl<'a> Picker<'a> {
    /// A picker of `rows` over batches whose first starts at local row `first_row`.
    pub(crate) fn new(rows: &'a [u64], first_row: u64) -> Self {
        Picker {
            rows,
            at: first_row,
        }
    }

    /// The wanted rows of `batch` (the next batch of the stream), or `None` when it has none.
    pub(crate) fn pick(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        let start = self.at;
        let end = start + batch.num_rows() as u64;
        self.at = end;
        let n = self.rows.partition_point(|&r| r < end);
        let (here, rest) = self.rows.split_at(n);
        self.rows = rest;
        // Rows before the batch cannot be wanted here (a stream never goes back).
        let here = &here[here.partition_point(|&r| r < start)..];
        if here.is_empty() {
            return Ok(None);
        }
        Ok(Some(take_rows(batch, start, here)?))
    }

    /// The first wanted row not seen yet, if any.
    pub(crate) fn missing(&self) -> Option<u64> {
        self.rows.first().copied()
    }

    /// Local row just past the batches seen so far.
    pub(crate) fn seen_to(&self) -> u64 {
        self.at
    }
}

/// Rows `rows` (ascending, all inside the batch) of `batch`, whose first row is local row
/// `first_row`: the batch itself when it is exactly those rows, a slice when they are
/// consecutive, else a gather.
pub(crate) fn take_rows(batch: &RecordBatch, first_row: u64, rows: &[u64]) -> Result<RecordBatch> {
    let (Some(&lo), Some(&hi)) = (rows.first(), rows.last()) else {
        return Ok(batch.slice(0, 0));
    };
    let n = batch.num_rows();
    let (lo, hi) = ((lo - first_row) as usize, (hi - first_row) as usize);
    if hi - lo + 1 == rows.len() {
        if lo == 0 && rows.len() == n {
            return Ok(batch.clone());
        }
        return Ok(batch.slice(lo, rows.len()));
    }
    if batch.num_columns() == 0 {
        // No column to gather (a projection of none): only the row count.
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows.len()));
        return RecordBatch::try_new_with_options(batch.schema(), Vec::new(), &options)
            .map_err(|e| Error::Schema(e.to_string()));
    }
    let indices: UInt32Array = rows.iter().map(|r| (r - first_row) as u32).collect();
    arrow_select::take::take_record_batch(batch, &indices).map_err(|e| Error::Schema(e.to_string()))
}

/// [`Locator::read_rows`] by range reads: for each block holding a wanted row (or once for
/// the whole span when there are no blocks), one [`Locator::read`] from the block's first to
/// its last wanted row, keeping the wanted rows of each batch as it streams by; the blocks
/// are read on the threads of the caller's pool.
pub fn read_rows_by_ranges<L: Locator + ?Sized>(
    locator: &L,
    path: &Path,
    request: &RowsRequest<'_>,
) -> Result<Vec<RecordBatch>> {
    let rows = request.rows;
    check_rows(path, rows, None)?;
    let groups = match request.blocks {
        Some(blocks) if !blocks.is_empty() => split_sparse(rows, blocks, by_block(rows, blocks)),
        _ if rows.is_empty() => Vec::new(),
        _ => vec![(0, 0..rows.len())],
    };
    // The blocks on the threads of the caller's pool, as a take of several blocks was read
    // before this call existed.
    let one = |(_, range): &(usize, Range<usize>)| -> Result<Vec<RecordBatch>> {
        let group = &rows[range.clone()];
        let (Some(&lo), Some(&hi)) = (group.first(), group.last()) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut picker = Picker::new(group, lo);
        for batch in locator.read(path, &request.range(lo..hi + 1))? {
            if let Some(b) = picker.pick(&batch?)? {
                out.push(b);
            }
            if picker.missing().is_none() {
                break;
            }
        }
        match picker.missing() {
            Some(row) => Err(past_end(path, row, picker.seen_to())),
            None => Ok(out),
        }
    };
    // One range (always, without blocks: a run-time handler) is read on the calling thread.
    let read: Vec<Result<Vec<RecordBatch>>> = if groups.len() > 1 {
        groups.par_iter().map(one).collect()
    } else {
        groups.iter().map(one).collect()
    };
    let mut out = Vec::new();
    for part in read {
        out.extend(part?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{Array, Int64Array};

    use crate::locator::test_blocks as blocks;

    #[test]
    fn sparse_rows_of_blocks_with_fine_checkpoints_are_read_apart() {
        let mut b = blocks(&[1000, 1000]);
        b[1].fine = Some(crate::locator::FineCheckpoints {
            rows: 100,
            bytes: vec![10; 9],
        });
        let rows = [0, 500, 1000, 1010, 1500, 1999];
        let groups = split_sparse(&rows, &b, by_block(&rows, &b));
        assert_eq!(groups, vec![(0, 0..2), (1, 2..4), (1, 4..5), (1, 5..6)]);
    }

    #[test]
    fn by_block_groups_rows_and_skips_empty_blocks() {
        let b = blocks(&[10, 0, 10, 10]);
        let rows = [0, 9, 10, 19, 25, 29];
        assert_eq!(by_block(&rows, &b), vec![(0, 0..2), (2, 2..4), (3, 4..6)]);
        assert_eq!(by_block(&[], &b), vec![]);
        assert_eq!(by_block(&[40], &b), vec![(3, 0..1)]);
    }

    #[test]
    fn check_rows_refuses_unsorted_repeated_and_past_end() {
        let p = Path::new("f");
        assert!(check_rows(p, &[1, 2, 5], Some(6)).is_ok());
        assert!(check_rows(p, &[2, 1], None).is_err());
        assert!(check_rows(p, &[2, 2], None).is_err());
        let e = check_rows(p, &[1, 6], Some(6)).unwrap_err().to_string();
        assert!(
            e.contains("row 6 is past the end of the file (6 rows)"),
            "{e}"
        );
    }

    #[test]
    fn picker_keeps_wanted_rows_across_batches() {
        let batch = |from: i64, n: i64| {
            let a: Arc<dyn Array> = Arc::new(Int64Array::from_iter_values(from..from + n));
            RecordBatch::try_from_iter([("v", a)]).unwrap()
        };
        let rows = [3, 4, 5, 7, 12];
        let mut p = Picker::new(&rows, 2);
        let got: Vec<RecordBatch> = [batch(2, 4), batch(6, 4), batch(10, 4)]
            .iter()
            .filter_map(|b| p.pick(b).unwrap())
            .collect();
        assert_eq!(p.missing(), None);
        let values: Vec<i64> = got
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                a.values().to_vec()
            })
            .collect();
        assert_eq!(values, rows.iter().map(|&r| r as i64).collect::<Vec<_>>());
    }
}
