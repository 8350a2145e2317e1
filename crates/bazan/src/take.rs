//! [`Lake::take`]: global rows in any order, read with one call per file of its handler's
//! `read_rows` (one stale check and one open per file, only the blocks, pages or records the
//! rows need decoded), the files read in parallel.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use lake_map::HandlerRegistry;
use rayon::prelude::*;

use super::{Gids, Plan, ScanOptions, conform};
use crate::cancel::CancelToken;
use crate::error::{Error, ErrorKind, Result};
use crate::handlers::handlers;
use crate::lake::Lake;

/// The rows read from one file: one batch in the output schema holding the file's sorted
/// distinct local rows `locals`, in that order.
struct FileRows {
    index: usize,
    locals: Vec<u64>,
    batch: RecordBatch,
}

impl Lake {
    /// Global rows `rows`, in the order given (repeats allowed), as one batch in the unified
    /// schema. The rows of each file are read in one call (its size and mtime checked once,
    /// only the blocks, pages or records holding them decoded); the files are read in
    /// parallel.
    pub fn take(self: &Arc<Self>, rows: &[u64], options: &ScanOptions) -> Result<RecordBatch> {
        let plan = self.plan(options)?;
        let total = self.total_rows();
        // file -> sorted distinct local rows.
        let mut files: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        let mut where_: Vec<(usize, u64)> = Vec::with_capacity(rows.len());
        for &g in rows {
            if g >= total {
                return Err(Error::new(
                    ErrorKind::OutOfRange,
                    format!("row {g} is past the end of the lake ({total} rows)"),
                ));
            }
            let (i, local) = self.map.locate_index(g)?;
            files.entry(i).or_default().push(local);
            where_.push((i, local));
        }
        if rows.is_empty() {
            return Ok(RecordBatch::new_empty(plan.schema));
        }
        for locals in files.values_mut() {
            locals.sort_unstable();
            locals.dedup();
        }
        let registry = handlers();
        let read: Vec<Result<FileRows>> = files
            .into_par_iter()
            .map(|(i, locals)| {
                CancelToken::check(options.cancel.as_ref())?;
                self.take_file(&plan, &registry, i, locals)
            })
            .collect();
        let files: Vec<FileRows> = read.into_iter().collect::<Result<_>>()?;
        let picks: Vec<(usize, usize)> = where_
            .iter()
            .map(|&(i, local)| {
                // Files are in entry order.
                let k = files.partition_point(|f| f.index < i);
                files
                    .get(k)
                    .filter(|f| f.index == i)
                    .and_then(|f| f.locals.binary_search(&local).ok())
                    .map(|r| (k, r))
                    .ok_or_else(|| {
                        Error::new(ErrorKind::Other, "take: a row was not read (internal)")
                    })
            })
            .collect::<Result<_>>()?;
        let refs: Vec<&RecordBatch> = files.iter().map(|f| &f.batch).collect();
        Ok(arrow_select::interleave::interleave_record_batch(
            &refs, &picks,
        )?)
    }

    /// The rows `locals` (sorted, distinct) of entry `i`, in the output schema.
    fn take_file(
        &self,
        plan: &Plan,
        registry: &HandlerRegistry,
        i: usize,
        locals: Vec<u64>,
    ) -> Result<FileRows> {
        let e = self.map.entry(i);
        let projection = plan.projection(self, i)?;
        let read = self
            .map
            .read_rows(i, &locals, Some(&projection), registry)?;
        let got: usize = read.iter().map(RecordBatch::num_rows).sum();
        if got != locals.len() {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "{}: the {} reader returned {got} rows for {} chosen rows",
                    self.root().join(e.path).display(),
                    e.format,
                    locals.len()
                ),
            ));
        }
        // One batch per file: the unified schema may be much wider than the file's, and its
        // missing columns are built once.
        let one = match read.as_slice() {
            [] => return Err(Error::new(ErrorKind::Other, "take: no batch (internal)")),
            [b] => b.clone(),
            more => arrow_select::concat::concat_batches(&widest_nullability(more), more)?,
        };
        let gids = Gids::Rows(e.first_global_row, &locals);
        let batch = conform(plan, &one, gids, e.path)?;
        Ok(FileRows {
            index: i,
            locals,
            batch,
        })
    }
}

/// The schema of `batches` (one file's, so the same columns) with a field nullable when it is
/// nullable in any of them: some readers (orc-rust) declare a column non-nullable in a block
/// that happens to hold no null, and the batches of several blocks must still concatenate.
pub(super) fn widest_nullability(batches: &[RecordBatch]) -> arrow_schema::SchemaRef {
    let first = batches[0].schema();
    let fields: Vec<arrow_schema::FieldRef> = first
        .fields()
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let nullable = batches
                .iter()
                .any(|b| b.schema().fields().get(k).is_none_or(|g| g.is_nullable()));
            if nullable == f.is_nullable() {
                Arc::clone(f)
            } else {
                Arc::new(f.as_ref().clone().with_nullable(nullable))
            }
        })
        .collect();
    Arc::new(arrow_schema::Schema::new_with_metadata(
        fields,
        first.metadata().clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int32Array};
    use arrow_schema::{DataType, Field, Schema};

    #[test]
    fn blocks_of_one_file_concatenate_when_only_some_declare_nulls() {
        let batch = |nullable: bool, values: Vec<Option<i32>>| {
            let schema = Arc::new(Schema::new(vec![Field::new(
                "small",
                DataType::Int32,
                nullable,
            )]));
            let column: ArrayRef = Arc::new(Int32Array::from(values));
            RecordBatch::try_new(schema, vec![column]).unwrap()
        };
        let parts = [batch(false, vec![Some(1)]), batch(true, vec![None])];
        let schema = widest_nullability(&parts);
        assert!(schema.field(0).is_nullable());
        let one = arrow_select::concat::concat_batches(&schema, &parts).unwrap();
        assert_eq!(one.num_rows(), 2);
        // Equal declarations are kept as they are.
        let parts = [batch(false, vec![Some(1)]), batch(false, vec![Some(2)])];
        assert!(!widest_nullability(&parts).field(0).is_nullable());
    }
}
