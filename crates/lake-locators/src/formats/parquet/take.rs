//! [`Locator::read_rows`](crate::Locator::read_rows) of Parquet files: one open, the footer
//! and page index read once, and one reader over the row groups holding a wanted row with a
//! `RowSelection` of exactly the wanted rows, so that only the pages holding them are
//! decoded (whole pages are skipped where the page index or the page headers allow). The
//! touched row groups are decoded on the threads of the caller's pool.

use std::path::Path;

use arrow_array::RecordBatch;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ParquetRecordBatchReaderBuilder, RowSelection, RowSelectionPolicy, RowSelector,
};
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

use super::{FORMAT, blocks, lib_err, load_metadata};
use crate::columnar::{self, Projection};
use crate::error::{Error, Result};
use crate::locator::RowsRequest;
use crate::take::{by_block, check_rows};
use crate::text::scan::FileBytes;

/// The memory map of a file as the bytes a Parquet reader reads (no copy).
struct Mapped(FileBytes);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The file at `path`, memory-mapped, as `Bytes` (a Parquet `ChunkReader` whose reads are
/// slices of the map).
pub(super) fn mapped(path: &Path) -> Result<bytes::Bytes> {
    Ok(bytes::Bytes::from_owner(Mapped(FileBytes::open(path)?)))
}

/// Appends `n` rows of one kind to `selectors`, merging with the last selector of that kind.
fn push(selectors: &mut Vec<RowSelector>, skip: bool, n: usize) {
    if n == 0 {
        return;
    }
    match selectors.last_mut() {
        Some(last) if last.skip == skip => last.row_count += n,
        _ => selectors.push(if skip {
            RowSelector::skip(n)
        } else {
            RowSelector::select(n)
        }),
    }
}

/// The wanted rows `request.rows` of the Parquet file that `open` opens (once for the
/// footer, then once per part: the touched row groups are read in up to four parts per
/// thread of the caller's pool, consecutive groups each).
pub(super) fn read_rows<R: ChunkReader + 'static>(
    path: &Path,
    open: impl Fn() -> Result<R> + Sync,
    request: &RowsRequest<'_>,
) -> Result<Vec<RecordBatch>> {
    let reader = open()?;
    let meta = load_metadata(path, &reader)?;
    drop(reader);
    let file_blocks = blocks(path, meta.metadata())?;
    let total = file_blocks.last().map_or(0, |b| b.first_row + b.row_count);
    if let Some(stored) = request.blocks {
        columnar::check_blocks(path, stored, total)?;
        if stored.len() != file_blocks.len() {
            return Err(Error::StaleIndex {
                path: path.to_path_buf(),
                message: format!(
                    "stored index has {} row groups, the file has {}",
                    stored.len(),
                    file_blocks.len()
                ),
            });
        }
    }
    let projection = Projection::new(path, meta.schema(), request.projection)?;
    let rows = request.rows;
    check_rows(path, rows, Some(total))?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let mask = match &projection {
        Some(p) => ProjectionMask::roots(meta.parquet_schema(), p.decode.iter().copied()),
        None => ProjectionMask::all(),
    };
    let groups = by_block(rows, &file_blocks);
    // A few parts per thread, so that threads done with other files of a take (or with
    // their own parts) share the remaining row groups; a part costs one open and one reader.
    let parts = (rayon::current_num_threads() * 4).clamp(1, groups.len());
    let per_part = groups.len().div_ceil(parts);
    let read: Vec<Result<Vec<RecordBatch>>> = groups
        .par_chunks(per_part)
        .map(|part| {
            // A decoder panic on another thread is this file's typed error too.
            columnar::guard(path, FORMAT, || {
                let mut selectors = Vec::new();
                for (g, range) in part {
                    let block = &file_blocks[*g];
                    // Every row of the group (ascending, distinct, inside it): one selector.
                    if range.len() as u64 == block.row_count {
                        push(&mut selectors, false, range.len());
                        continue;
                    }
                    let mut at = block.first_row;
                    for &r in &rows[range.clone()] {
                        push(&mut selectors, true, (r - at) as usize);
                        push(&mut selectors, false, 1);
                        at = r + 1;
                    }
                    push(
                        &mut selectors,
                        true,
                        (block.first_row + block.row_count - at) as usize,
                    );
                }
                let wanted: usize = part.iter().map(|(_, r)| r.len()).sum();
                let batches =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(open()?, meta.clone())
                        .with_row_groups(part.iter().map(|(g, _)| *g).collect())
                        .with_row_selection(RowSelection::from(selectors))
                        .with_row_selection_policy(RowSelectionPolicy::Selectors)
                        .with_projection(mask.clone())
                        .with_batch_size(wanted.min(columnar::DEFAULT_BATCH_SIZE * 8))
                        .build()
                        .map_err(|e| lib_err(path, e))?;
                let mut out = Vec::new();
                let mut got = 0usize;
                for batch in batches {
                    let batch = batch.map_err(|e| Error::library(path, FORMAT, e))?;
                    got += batch.num_rows();
                    out.push(
                        columnar::reorder(projection.as_ref(), batch)
                            .map_err(|e| Error::library(path, FORMAT, e))?,
                    );
                }
                // arrow-rs ends some structures early without an error: a short read is not
                // the rows.
                if got != wanted {
                    return Err(Error::malformed(
                        path,
                        FORMAT,
                        format!("the row groups returned {got} of the {wanted} rows selected"),
                    ));
                }
                Ok(out)
            })
        })
        .collect();
    let mut out = Vec::new();
    for part in read {
        out.extend(part?);
    }
    Ok(out)
}
