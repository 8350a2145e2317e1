//! Helpers shared by the locators of the formats with native blocks (Parquet, ORC, Avro and
//! Arrow IPC): opening files, clamping row ranges, resolving projections, picking the blocks a
//! range touches, trimming decoded batches to the range, and turning library panics into
//! typed errors.

use std::fs::File;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};

use crate::error::{Error, Result};
use crate::locator::Block;

/// Opens `path` for reading and returns the file with its length.
pub fn open(path: &Path) -> Result<(File, u64)> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    Ok((file, len))
}

/// Clamps the requested local rows to `[0, total)`; an inverted range becomes empty.
pub fn clamp_rows(rows: &Range<u64>, total: u64) -> Range<u64> {
    let start = rows.start.min(total);
    let end = rows.end.clamp(start, total);
    start..end
}

/// The column indices of `names` in `schema`, in the requested order, or an
/// [`Error::UnknownColumn`] naming the first column the file does not have.
pub fn resolve_projection(path: &Path, schema: &Schema, names: &[String]) -> Result<Vec<usize>> {
    names
        .iter()
        .map(|name| {
            schema.index_of(name).map_err(|_| Error::UnknownColumn {
                path: path.to_path_buf(),
                column: name.clone(),
                available: schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        })
        .collect()
}

/// A projection split into what a reader decodes (sorted, unique file columns) and how to
/// reorder the decoded columns into the requested order.
#[derive(Debug, Clone)]
pub struct Projection {
    /// File column indices to decode, ascending and without duplicates.
    pub decode: Vec<usize>,
    /// For each requested column, its position among the decoded columns.
    pub order: Vec<usize>,
}

impl Projection {
    /// Resolves `names` against `schema`; `None` keeps every column in file order.
    pub fn new(path: &Path, schema: &Schema, names: Option<&[String]>) -> Result<Option<Self>> {
        let Some(names) = names else {
            return Ok(None);
        };
        let wanted = resolve_projection(path, schema, names)?;
        let mut decode = wanted.clone();
        decode.sort_unstable();
        decode.dedup();
        let order = wanted
            .iter()
            .map(|w| decode.binary_search(w).unwrap_or(0))
            .collect();
        Ok(Some(Projection { decode, order }))
    }

    /// Reorders a batch of the decoded columns into the requested order.
    pub fn apply(
        &self,
        batch: &RecordBatch,
    ) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        batch.project(&self.order)
    }
}

/// Reorders `batch` with an optional projection.
pub fn reorder(
    projection: Option<&Projection>,
    batch: RecordBatch,
) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
    match projection {
        Some(p) => p.apply(&batch),
        None => Ok(batch),
    }
}

/// The schema a read returns: the file's schema projected to the requested columns.
pub fn projected_schema(schema: &SchemaRef, projection: Option<&Projection>) -> Result<SchemaRef> {
    match projection {
        None => Ok(schema.clone()),
        Some(p) => {
            let decoded = schema
                .project(&p.decode)
                .map_err(|e| Error::Schema(e.to_string()))?;
            let out = decoded
                .project(&p.order)
                .map_err(|e| Error::Schema(e.to_string()))?;
            Ok(std::sync::Arc::new(out))
        }
    }
}

/// The blocks that hold any row of `rows` (a non-empty range), as an index range into
/// `blocks`. Blocks must be in file order with contiguous row ranges.
pub fn touched_blocks(blocks: &[Block], rows: &Range<u64>) -> Range<usize> {
    let first = blocks.partition_point(|b| b.first_row + b.row_count <= rows.start);
    let end = blocks.partition_point(|b| b.first_row < rows.end);
    first..end.max(first)
}

/// Checks that stored blocks describe a file of `total` rows in contiguous order.
pub fn check_blocks(path: &Path, blocks: &[Block], total: u64) -> Result<()> {
    let mut next = 0u64;
    for b in blocks {
        if b.first_row != next {
            return Err(Error::StaleIndex {
                path: path.to_path_buf(),
                message: format!(
                    "block {} starts at row {} but the previous block ends at row {next}",
                    b.ordinal, b.first_row
                ),
            });
        }
        next = next.saturating_add(b.row_count);
    }
    if next != total {
        return Err(Error::StaleIndex {
            path: path.to_path_buf(),
            message: format!("stored blocks hold {next} rows, the file has {total}"),
        });
    }
    Ok(())
}

/// Trims a stream of decoded batches that starts at local row `first_row` to the rows
/// `wanted`, stopping as soon as the range is complete.
pub struct Trim<I> {
    inner: I,
    /// Local row of the next batch's first row.
    at: u64,
    wanted: Range<u64>,
}

impl<I> Trim<I> {
    /// Wraps `inner`, whose first batch starts at local row `first_row`.
    pub fn new(inner: I, first_row: u64, wanted: Range<u64>) -> Self {
        Trim {
            inner,
            at: first_row,
            wanted,
        }
    }
}

impl<I: Iterator<Item = Result<RecordBatch>>> Iterator for Trim<I> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.at >= self.wanted.end {
                return None;
            }
            let batch = match self.inner.next()? {
                Ok(b) => b,
                Err(e) => {
                    // Stop after the first error: the reader's position is unknown now.
                    self.at = self.wanted.end;
                    return Some(Err(e));
                }
            };
            let start = self.at;
            let end = start + batch.num_rows() as u64;
            self.at = end;
            let lo = self.wanted.start.max(start);
            let hi = self.wanted.end.min(end);
            if lo >= hi {
                continue;
            }
            if lo == start && hi == end {
                return Some(Ok(batch));
            }
            return Some(Ok(batch.slice((lo - start) as usize, (hi - lo) as usize)));
        }
    }
}

thread_local! {
    /// True while this thread runs inside [`guard`].
    static IN_GUARD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs a panic hook that stays silent for panics [`guard`] turns into errors (the
/// default hook would print them to stderr before the error is reported) and defers to the
/// previous hook for every other panic. Installed once per process: later calls do nothing.
/// [`guard`] installs it on its first use, so that library users (the Python package, other
/// Rust programs) never see the text of a guarded panic either; a hook a program sets later
/// replaces it.
pub fn quiet_guarded_panics() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_GUARD.with(|g| g.get()) {
                previous(info);
            }
        }));
    });
}

/// Runs a library call that may panic on malformed input (orc-rust, some decoders) and
/// turns a panic into a typed error naming the file.
pub fn guard<T>(path: &Path, format: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_guarded_panics();
    let outer = IN_GUARD.with(|g| g.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    IN_GUARD.with(|g| g.set(outer));
    match result {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(Error::malformed(
                path,
                format,
                format!("the {format} library failed on this file: {what}"),
            ))
        }
    }
}

/// Wraps a batch iterator so that a library panic while decoding becomes a typed error and
/// ends the iteration.
pub fn guard_iter(
    path: &Path,
    format: &'static str,
    inner: crate::locator::BatchIter,
) -> crate::locator::BatchIter {
    let path = path.to_path_buf();
    let mut inner = Some(inner);
    Box::new(std::iter::from_fn(move || {
        let it = inner.as_mut()?;
        match guard(&path, format, || Ok(it.next())) {
            Ok(next) => next,
            Err(e) => {
                inner = None;
                Some(Err(e))
            }
        }
    }))
}

/// An empty batch iterator.
pub fn empty() -> crate::locator::BatchIter {
    Box::new(std::iter::empty())
}

/// The default rows per returned batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// `batch_size`, or the default when it is 0.
pub fn batch_size(requested: usize) -> usize {
    if requested == 0 {
        DEFAULT_BATCH_SIZE
    } else {
        requested
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::locator::test_blocks as blocks;

    #[test]
    fn touched_blocks_skips_empty_and_outside_blocks() {
        let b = blocks(&[10, 0, 10, 10]);
        assert_eq!(touched_blocks(&b, &(0..5)), 0..1);
        assert_eq!(touched_blocks(&b, &(9..11)), 0..3);
        assert_eq!(touched_blocks(&b, &(10..11)), 2..3);
        assert_eq!(touched_blocks(&b, &(25..30)), 3..4);
    }

    #[test]
    fn clamp_rows_handles_past_end_and_inverted() {
        assert_eq!(clamp_rows(&(5..100), 10), 5..10);
        assert_eq!(clamp_rows(&(20..30), 10), 10..10);
        let inverted = std::ops::Range { start: 7, end: 3 };
        assert_eq!(clamp_rows(&inverted, 10), 7..7);
    }

    #[test]
    fn check_blocks_reports_gaps_and_totals() {
        let b = blocks(&[3, 4]);
        assert!(check_blocks(Path::new("f"), &b, 7).is_ok());
        assert!(check_blocks(Path::new("f"), &b, 8).is_err());
    }
}
