//! [`Lake::take`]: global rows in any order, read with one call per file of its handler's
//! `read_rows` (one stale check and one open per file, only the blocks, pages or records the
//! rows need decoded), the files read in parallel.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use lake_locators::RowsCost;
use lake_map::HandlerRegistry;
use rayon::prelude::*;

use super::{Gids, Plan, ScanOptions, conform};
use crate::block_cache::{BlockCache, Key, Use};
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
        self.take_in(rows, options, &self.cache)
    }

    /// [`Lake::take`] through `cache` (the lake's, or an epoch's own).
    pub(crate) fn take_in(
        self: &Arc<Self>,
        rows: &[u64],
        options: &ScanOptions,
        cache: &BlockCache,
    ) -> Result<RecordBatch> {
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
                self.take_file(&plan, &registry, cache, i, locals)
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
        let sources: Vec<RecordBatch> = files.into_iter().map(|f| f.batch).collect();
        interleave_rows(sources[0].schema(), &sources, &picks)
    }

    /// The rows `locals` (sorted, distinct) of entry `i`, in the output schema.
    fn take_file(
        &self,
        plan: &Plan,
        registry: &HandlerRegistry,
        cache: &BlockCache,
        i: usize,
        locals: Vec<u64>,
    ) -> Result<FileRows> {
        let e = self.map.entry(i);
        let projection = plan.projection(self, i)?;
        let cost = match registry.for_entry(e.path, e.format) {
            Some(h) if !h.dynamic && cache.budget() > 0 => match h.locator.rows_cost() {
                // An epoch reads every block whole sooner or later: a row format's block is
                // kept from its second touch, as a row group is.
                RowsCost::Rows if cache.fills() => RowsCost::MostOfBlock,
                cost => cost,
            },
            _ => RowsCost::Rows,
        };
        let one = match cost {
            RowsCost::Rows => self.take_rows(registry, i, &locals, &projection)?,
            RowsCost::MostOfBlock => {
                self.take_cached(registry, cache, i, &locals, projection, false)?
            }
            RowsCost::WholeBlock => {
                self.take_cached(registry, cache, i, &locals, projection, true)?
            }
        };
        let gids = Gids::Rows(e.first_global_row, &locals);
        let batch = conform(plan, &one, gids, e.path)?;
        Ok(FileRows {
            index: i,
            locals,
            batch,
        })
    }

    /// The rows `locals` (sorted, distinct) of entry `i` in its schema, projected to
    /// `projection`, as one batch: one `read_rows` of its handler.
    fn take_rows(
        &self,
        registry: &HandlerRegistry,
        i: usize,
        locals: &[u64],
        projection: &[String],
    ) -> Result<RecordBatch> {
        let read = self.map.read_rows(i, locals, Some(projection), registry)?;
        self.check_count(i, &read, locals.len())?;
        // One batch per file: the unified schema may be much wider than the file's, and its
        // missing columns are built once.
        match read.as_slice() {
            [] => Err(Error::new(ErrorKind::Other, "take: no batch (internal)")),
            [b] => Ok(b.clone()),
            more => Ok(arrow_select::concat::concat_batches(
                &widest_nullability(more),
                more,
            )?),
        }
    }

    /// An error unless `read` holds `wanted` rows.
    fn check_count(&self, i: usize, read: &[RecordBatch], wanted: usize) -> Result<()> {
        let got: usize = read.iter().map(RecordBatch::num_rows).sum();
        if got == wanted {
            return Ok(());
        }
        let e = self.map.entry(i);
        Err(Error::new(
            ErrorKind::Corrupt,
            format!(
                "{}: the {} reader returned {got} rows for {wanted} chosen rows",
                self.root().join(e.path).display(),
                e.format,
            ),
        ))
    }

    /// [`Lake::take_rows`] through the decoded-block cache (see `block_cache`): kept blocks
    /// are read from memory, blocks admitted now (touched before, or on the first touch when
    /// `first`) are decoded whole and kept, the others read as before; every block at most
    /// once, and the file checked against the map first.
    fn take_cached(
        &self,
        registry: &HandlerRegistry,
        cache: &BlockCache,
        i: usize,
        locals: &[u64],
        projection: Vec<String>,
        first: bool,
    ) -> Result<RecordBatch> {
        let blocks = self.map.blocks(i)?;
        if blocks.is_empty() {
            return self.take_rows(registry, i, locals, &projection);
        }
        // A kept block is used only while the file is the one the map describes.
        self.map.check_fresh(i)?;
        let columns: Arc<[String]> = Arc::from(projection);
        let groups = lake_locators::take::by_block(locals, &blocks);
        let (size_bytes, row_count) = {
            let e = self.map.entry(i);
            (e.size_bytes, e.row_count)
        };
        let key = |block: usize| Key {
            entry: i,
            block,
            columns: Arc::clone(&columns),
        };
        // Where each touched block's rows come from.
        let mut uses: Vec<Use> = Vec::with_capacity(groups.len());
        let (mut admit, mut rows) = (Vec::new(), Vec::new());
        for (b, range) in &groups {
            let block = blocks.get(*b).ok_or_else(|| {
                Error::new(ErrorKind::Other, "take: a row past the blocks (internal)")
            })?;
            // The block's bytes as stored, else its share of the file's.
            let estimate = block.total_byte_size.unwrap_or_else(|| {
                (size_bytes as u128 * block.row_count as u128 / row_count.max(1) as u128) as u64
            });
            let u = cache.lookup(&key(*b), Some(estimate), first);
            match u {
                Use::Admit => admit.extend(block.row_range()),
                Use::Rows => rows.extend_from_slice(&locals[range.clone()]),
                Use::Hit(_) => {}
            }
            uses.push(u);
        }
        // Blocks touched before: decoded whole in one read, cut back into blocks and kept.
        let mut admitted: Vec<Arc<[RecordBatch]>> = Vec::new();
        if !admit.is_empty() {
            let read = self.map.read_rows(i, &admit, Some(&columns), registry)?;
            self.check_count(i, &read, admit.len())?;
            let mut cut = Cutter::new(read);
            for ((b, _), u) in groups.iter().zip(&uses) {
                if matches!(u, Use::Admit) {
                    let n = blocks[*b].row_count as usize;
                    let batches: Arc<[RecordBatch]> = Arc::from(cut.next_rows(n));
                    cache.insert(key(*b), Arc::clone(&batches));
                    admitted.push(batches);
                }
            }
        }
        // The other blocks' wanted rows, in one read as without the cache.
        let read = if rows.is_empty() {
            Vec::new()
        } else {
            let read = self.map.read_rows(i, &rows, Some(&columns), registry)?;
            self.check_count(i, &read, rows.len())?;
            read
        };
        // Every wanted row's (source batch, row in it), in the order of `locals`.
        let mut sources: Vec<RecordBatch> = read.clone();
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(locals.len());
        let mut read_at = RowCursor::new(&read, 0);
        let mut admitted = admitted.into_iter();
        for ((b, range), u) in groups.iter().zip(uses) {
            let whole = match u {
                Use::Hit(batches) => batches,
                Use::Admit => admitted.next().ok_or_else(|| {
                    Error::new(ErrorKind::Other, "take: an admitted block (internal)")
                })?,
                Use::Rows => {
                    for _ in range.clone() {
                        picks.push(read_at.next_row()?);
                    }
                    continue;
                }
            };
            let first = blocks[*b].first_row;
            let mut at = RowCursor::new(&whole, sources.len());
            sources.extend(whole.iter().cloned());
            for &local in &locals[range.clone()] {
                picks.push(at.row((local - first) as usize)?);
            }
        }
        interleave_rows(widest_nullability(&sources), &sources, &picks)
    }
}

/// Rows `picks` (source batch, row) of `sources` (batches of `schema`'s columns), as one
/// batch of `schema`. Rows of a wide unified schema lack most columns in most files, so each
/// column is gathered by what its sources hold: null in every source, one null array, shared
/// by the columns of its type (an interleave of null arrays goes through arrow's slow generic
/// path); values in one source only, a take from it whose indices are null where a row comes
/// from another source (one set of indices per source, shared by its columns); values in
/// several, an interleave. The columns are gathered in parallel.
pub(crate) fn interleave_rows(
    schema: arrow_schema::SchemaRef,
    sources: &[RecordBatch],
    picks: &[(usize, usize)],
) -> Result<RecordBatch> {
    use arrow_array::{Array, ArrayRef, UInt32Array};
    let n = picks.len();
    // Per column, the sources holding a value of it.
    let live: Vec<Vec<usize>> = (0..schema.fields().len())
        .map(|c| {
            (0..sources.len())
                .filter(|&k| {
                    let a = sources[k].column(c);
                    a.logical_null_count() != a.len()
                })
                .collect()
        })
        .collect();
    let mut nulls: Vec<(&arrow_schema::DataType, ArrayRef)> = Vec::new();
    let mut shared: Vec<Option<ArrayRef>> = Vec::with_capacity(live.len());
    for (field, live) in schema.fields().iter().zip(&live) {
        shared.push(live.is_empty().then(|| {
            let ty = field.data_type();
            match nulls.iter().find(|(t, _)| *t == ty) {
                Some((_, a)) => Arc::clone(a),
                None => {
                    let a = arrow_array::new_null_array(ty, n);
                    nulls.push((ty, Arc::clone(&a)));
                    a
                }
            }
        }));
    }
    // The take indices of each source that is the only one with values of some column.
    let mut alone: Vec<bool> = vec![false; sources.len()];
    for l in &live {
        if let [k] = l.as_slice() {
            alone[*k] = true;
        }
    }
    let indices: Vec<Option<UInt32Array>> = alone
        .iter()
        .enumerate()
        .map(|(k, &alone)| {
            alone.then(|| {
                picks
                    .iter()
                    .map(|&(s, r)| (s == k).then_some(r as u32))
                    .collect::<UInt32Array>()
            })
        })
        .collect();
    let columns: Vec<ArrayRef> = live
        .par_iter()
        .zip(shared)
        .enumerate()
        .map(|(c, (live, shared))| -> Result<ArrayRef> {
            if let Some(a) = shared {
                return Ok(a);
            }
            if let ([k], Some(idx)) = (
                live.as_slice(),
                live.first().and_then(|&k| indices[k].as_ref()),
            ) {
                return Ok(arrow_select::take::take(sources[*k].column(c), idx, None)?);
            }
            let arrays: Vec<&dyn Array> = sources.iter().map(|s| s.column(c).as_ref()).collect();
            if let Some(bools) = interleave_booleans(&arrays, picks) {
                return Ok(Arc::new(bools));
            }
            Ok(arrow_select::interleave::interleave(&arrays, picks)?)
        })
        .collect::<Result<_>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
    Ok(RecordBatch::try_new_with_options(
        schema, columns, &options,
    )?)
}

/// Rows `picks` of boolean `arrays`, or `None` when one is not boolean: arrow's interleave
/// takes booleans through its generic path, which copies every source's array data first.
fn interleave_booleans(
    arrays: &[&dyn arrow_array::Array],
    picks: &[(usize, usize)],
) -> Option<arrow_array::BooleanArray> {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    let bools: Vec<&arrow_array::BooleanArray> = arrays
        .iter()
        .map(|a| a.as_boolean_opt())
        .collect::<Option<_>>()?;
    Some(
        picks
            .iter()
            .map(|&(s, r)| {
                let a = bools[s];
                a.is_valid(r).then(|| a.value(r))
            })
            .collect(),
    )
}

/// Cuts a stream of batches into runs of a given number of rows (zero-copy slices).
struct Cutter {
    batches: std::vec::IntoIter<RecordBatch>,
    current: Option<RecordBatch>,
}

impl Cutter {
    fn new(batches: Vec<RecordBatch>) -> Self {
        Cutter {
            batches: batches.into_iter(),
            current: None,
        }
    }

    /// The next `n` rows (fewer only when the stream ends, which the caller's row count
    /// check rules out).
    fn next_rows(&mut self, mut n: usize) -> Vec<RecordBatch> {
        let mut out = Vec::new();
        while n > 0 {
            let Some(b) = self.current.take().or_else(|| self.batches.next()) else {
                break;
            };
            if b.num_rows() <= n {
                n -= b.num_rows();
                if b.num_rows() > 0 {
                    out.push(b);
                }
            } else {
                out.push(b.slice(0, n));
                self.current = Some(b.slice(n, b.num_rows() - n));
                n = 0;
            }
        }
        out
    }
}

/// Rows of consecutive batches, numbered from 0, as (source index, row in the batch): the
/// batches are sources `first_source..` of an interleave.
struct RowCursor {
    /// Row number (from 0) where each batch starts, and one past the last row.
    starts: Vec<usize>,
    first_source: usize,
    next: usize,
}

impl RowCursor {
    fn new(batches: &[RecordBatch], first_source: usize) -> Self {
        let mut starts = Vec::with_capacity(batches.len() + 1);
        let mut at = 0;
        starts.push(0);
        for b in batches {
            at += b.num_rows();
            starts.push(at);
        }
        RowCursor {
            starts,
            first_source,
            next: 0,
        }
    }

    /// Row `r` of the run.
    fn row(&mut self, r: usize) -> Result<(usize, usize)> {
        if r >= *self.starts.last().unwrap_or(&0) {
            return Err(Error::new(
                ErrorKind::Other,
                "take: a row past a kept block (internal)",
            ));
        }
        let k = self.starts.partition_point(|&s| s <= r) - 1;
        Ok((self.first_source + k, r - self.starts[k]))
    }

    /// The row after the last one asked with `next_row`.
    fn next_row(&mut self) -> Result<(usize, usize)> {
        let r = self.next;
        self.next += 1;
        self.row(r)
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
