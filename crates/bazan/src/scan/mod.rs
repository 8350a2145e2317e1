//! Reading global rows of a lake in its unified schema: [`Lake::scan`] streams a row range,
//! [`Lake::take`] gathers rows in any order, [`Lake::read_file_rows`] reads part of one
//! file, [`Lake::map_rows`] gives the virtual columns of part of one file from the map alone.
//! Every file is checked against its map entry (size and mtime) before it is read; a
//! changed file is an error naming it, never silently wrong rows.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Int32Array, Int64Array, RecordBatch, StringArray, StringViewArray,
};
use arrow_array::{RecordBatchOptions, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use lake_map::{HandlerRegistry, Segment};

use crate::cancel::CancelToken;
use crate::error::{Error, ErrorKind, Result};
use crate::handlers::handlers;
use crate::lake::Lake;
use crate::unified::conform_columns;

/// The virtual column of global row numbers (Int64).
pub const GID_COLUMN: &str = "_gid";
/// The virtual column of each row's file path (dictionary-encoded Utf8; Utf8View with
/// [`ScanOptions::string_views`]).
pub const PATH_COLUMN: &str = "_path";
/// Rows per batch when [`ScanOptions::batch_size`] is 0.
pub const DEFAULT_BATCH_SIZE: usize = 65_536;

/// What to return from a scan or a take.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Columns, in this order (unified names; `_gid` and `_path` may be named too); `None`
    /// returns every column.
    pub columns: Option<Vec<String>>,
    /// Append `_gid` (the global row number) when not named in `columns`.
    pub with_gid: bool,
    /// Append `_path` (the file's relative path) when not named in `columns`.
    pub with_path: bool,
    /// Rows per batch at most (0: 65,536).
    pub batch_size: usize,
    /// Stops a running scan from another thread.
    pub cancel: Option<CancelToken>,
    /// Return Utf8 columns as Utf8View (same values; Parquet files decode them so without
    /// copying the strings, other formats are cast), and `_path` as Utf8View too (each
    /// batch's views point at the one copy of its path): the types a SQL engine plans with.
    pub string_views: bool,
}

/// One output column of a scan.
#[derive(Debug, Clone)]
enum Out {
    /// A unified column.
    Column(Arc<Field>),
    Gid,
    Path,
}

/// The output plan of a scan: its columns and schema.
#[derive(Debug, Clone)]
struct Plan {
    outs: Vec<Out>,
    schema: SchemaRef,
    /// The unified fields among `outs`, in order (what files are conformed to).
    fields: Vec<Arc<Field>>,
    /// Utf8 columns as Utf8View ([`ScanOptions::string_views`]).
    string_views: bool,
}

impl Plan {
    /// The unified columns of the plan that entry `i` has: what the file is asked for.
    fn projection(&self, lake: &Lake, i: usize) -> Result<Vec<String>> {
        let file_schema = lake.file_schema(i)?;
        Ok(self
            .fields
            .iter()
            // `column_with_name`, not `field_with_name`: the latter formats an error listing
            // every field for each column the file lacks (a tenth of a short slice's time).
            .filter(|f| file_schema.column_with_name(f.name()).is_some())
            .map(|f| f.name().clone())
            .collect())
    }
}

fn gid_field() -> Field {
    Field::new(GID_COLUMN, DataType::Int64, false)
}

fn path_field(string_views: bool) -> Field {
    let data_type = if string_views {
        DataType::Utf8View
    } else {
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
    };
    Field::new(PATH_COLUMN, data_type, false)
}

/// `_path` of `n` rows of the file at `path`: a dictionary of one value, or with string
/// views `n` views of one copy of the path.
fn path_array(path: &str, n: usize, string_views: bool) -> Result<ArrayRef> {
    if string_views {
        let one = StringViewArray::from_iter_values([path]);
        let view = one.views()[0];
        let array =
            StringViewArray::try_new(vec![view; n].into(), one.data_buffers().to_vec(), None)?;
        return Ok(Arc::new(array));
    }
    let keys = Int32Array::from(vec![0; n]);
    let values = Arc::new(StringArray::from(vec![path]));
    Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
        keys, values,
    )?))
}

impl Lake {
    fn plan(&self, o: &ScanOptions) -> Result<Plan> {
        let unified = self.schema()?;
        let mut outs = Vec::new();
        match &o.columns {
            None => outs.extend(unified.fields().iter().cloned().map(Out::Column)),
            Some(names) => {
                for name in names {
                    let out = match name.as_str() {
                        GID_COLUMN => Out::Gid,
                        PATH_COLUMN => Out::Path,
                        _ => match unified.field_with_name(name) {
                            Ok(f) => Out::Column(Arc::new(f.clone())),
                            Err(_) => {
                                let names: Vec<&str> =
                                    unified.fields().iter().map(|f| f.name().as_str()).collect();
                                return Err(Error::invalid(format!(
                                    "no column named {name:?} in the lake {} (columns: {})",
                                    self.root().display(),
                                    names.join(", ")
                                )));
                            }
                        },
                    };
                    outs.push(out);
                }
            }
        }
        if o.with_gid && !outs.iter().any(|c| matches!(c, Out::Gid)) {
            outs.push(Out::Gid);
        }
        if o.with_path && !outs.iter().any(|c| matches!(c, Out::Path)) {
            outs.push(Out::Path);
        }
        if o.string_views {
            for out in &mut outs {
                if let Out::Column(f) = out {
                    *f = Arc::new(crate::views::view_field(f));
                }
            }
        }
        let fields: Vec<Arc<Field>> = outs
            .iter()
            .filter_map(|c| match c {
                Out::Column(f) => Some(Arc::clone(f)),
                _ => None,
            })
            .collect();
        let schema = Arc::new(Schema::new(
            outs.iter()
                .map(|c| match c {
                    Out::Column(f) => f.as_ref().clone(),
                    Out::Gid => gid_field(),
                    Out::Path => path_field(o.string_views),
                })
                .collect::<Vec<_>>(),
        ));
        Ok(Plan {
            outs,
            schema,
            fields,
            string_views: o.string_views,
        })
    }

    /// The schema a scan with these options returns.
    pub fn scan_schema(&self, options: &ScanOptions) -> Result<SchemaRef> {
        Ok(self.plan(options)?.schema)
    }

    /// Streams global rows `rows` (clamped at the end of the lake) in the unified schema,
    /// file by file, at most `batch_size` rows per batch. Memory is bounded by a batch and
    /// one file block, not by the range.
    pub fn scan(self: &Arc<Self>, rows: Range<u64>, options: &ScanOptions) -> Result<LakeReader> {
        let plan = self.plan(options)?;
        let len = rows.end.saturating_sub(rows.start);
        let segments: VecDeque<Segment> = if len == 0 {
            VecDeque::new()
        } else {
            self.map.plan_slice(rows.start, len).into_iter().collect()
        };
        Ok(LakeReader::new(Arc::clone(self), plan, segments, options))
    }

    /// About how many bytes of data files a scan of `rows` reads: each file's part of the range
    /// plus the block before it (a read starts at a checkpoint, up to a stride of rows before its
    /// first row), at the file's mean row size, and never more than the file. Front ends use it
    /// to tell a short call from a long one (the Python package runs a short one on the calling
    /// thread; see `crates/bazan-python/src/blocking.rs`).
    pub fn estimated_scan_bytes(&self, rows: Range<u64>) -> u64 {
        let len = rows.end.saturating_sub(rows.start);
        if len == 0 {
            return 0;
        }
        let stride = self.map.config().checkpoint_stride_rows;
        self.map
            .plan_slice(rows.start, len)
            .iter()
            .map(|s| {
                let e = self.map.entry(s.index);
                let read_rows = s.len.saturating_add(stride);
                if e.row_count == 0 || read_rows >= e.row_count {
                    e.size_bytes
                } else {
                    // Widened so that the product cannot overflow.
                    (u128::from(read_rows) * u128::from(e.size_bytes) / u128::from(e.row_count))
                        as u64
                }
            })
            .fold(0, u64::saturating_add)
    }

    /// Streams local rows `local` of entry `i` (clamped to the file) in the unified schema.
    pub fn read_file_rows(
        self: &Arc<Self>,
        i: usize,
        local: Range<u64>,
        options: &ScanOptions,
    ) -> Result<LakeReader> {
        let plan = self.plan(options)?;
        self.file_reader(i, local, plan, options)
    }

    /// Streams the virtual columns (`_gid`, `_path`: `options` names no other) of local rows
    /// `local` of entry `i` (clamped to the file) from the map alone: no file is opened, so
    /// none is checked either; the caller answers for the file's freshness (a SQL scan
    /// checks it with [`Lake::check_fresh`] when it plans the query).
    pub fn map_rows(
        self: &Arc<Self>,
        i: usize,
        local: Range<u64>,
        options: &ScanOptions,
    ) -> Result<LakeReader> {
        let plan = self.plan(&ScanOptions {
            columns: Some(options.columns.clone().unwrap_or_default()),
            ..options.clone()
        })?;
        if let Some(f) = plan.fields.first() {
            return Err(Error::invalid(format!(
                "map_rows returns only {GID_COLUMN} and {PATH_COLUMN}, not {:?}",
                f.name()
            )));
        }
        let mut reader = self.file_reader(i, local, plan, options)?;
        reader.from_map = true;
        Ok(reader)
    }

    /// A reader of local rows `local` of entry `i` (clamped to the file) by `plan`.
    fn file_reader(
        self: &Arc<Self>,
        i: usize,
        local: Range<u64>,
        plan: Plan,
        options: &ScanOptions,
    ) -> Result<LakeReader> {
        self.check_index(i)?;
        let rows = self.map.entry(i).row_count;
        let start = local.start.min(rows);
        let end = local.end.min(rows);
        let mut segments = VecDeque::new();
        if end > start {
            segments.push_back(Segment {
                index: i,
                local_start: start,
                len: end - start,
            });
        }
        Ok(LakeReader::new(Arc::clone(self), plan, segments, options))
    }
}

/// The global row numbers of a file batch's rows, for `_gid`.
#[derive(Debug, Clone, Copy)]
enum Gids<'a> {
    /// Consecutive, from this one.
    From(u64),
    /// The entry's first global row, and each row's local row.
    Rows(u64, &'a [u64]),
}

/// One file batch in the output schema: its columns conformed to the unified fields, and the
/// virtual columns added.
fn conform(plan: &Plan, batch: &RecordBatch, gids: Gids<'_>, path: &str) -> Result<RecordBatch> {
    let n = batch.num_rows();
    let mut unified = conform_columns(batch, &plan.fields)?.into_iter();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(plan.outs.len());
    for out in &plan.outs {
        columns.push(match out {
            Out::Column(_) => unified
                .next()
                .ok_or_else(|| Error::new(ErrorKind::Other, "scan: column count (internal)"))?,
            Out::Gid => match gids {
                Gids::From(first) => {
                    let start = first as i64;
                    Arc::new(Int64Array::from_iter_values(start..start + n as i64))
                }
                Gids::Rows(first, locals) => Arc::new(Int64Array::from_iter_values(
                    locals.iter().map(|l| (first + l) as i64),
                )),
            },
            Out::Path => path_array(path, n, plan.string_views)?,
        });
    }
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(&plan.schema),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(n)),
    )?)
}

mod take;
pub(crate) use take::interleave_rows;

/// The file being read by a [`LakeReader`].
struct Current {
    segment: Segment,
    path: String,
    first_gid: u64,
    seen: u64,
    batches: lake_locators::BatchIter,
    /// Part of a batch larger than the batch size, still to return.
    rest: Option<RecordBatch>,
    /// The file lacks columns of the output (they are added as nulls to each batch).
    lacks_columns: bool,
}

/// Bytes of a file's short batches joined into one before the columns it lacks are added
/// ([`join_short`]).
const JOIN_BYTES: usize = 1 << 20;

/// `first` and the batches after it in `cur`, joined while they are short: up to the batch
/// size and [`JOIN_BYTES`]. A file that lacks output columns gets them as nulls in each
/// batch, and each output batch costs its consumer something per column (pyarrow imports
/// every array of every batch: 136 columns took it 0.23 ms), so the two halves of a short
/// read decoded at once are better joined when the file has few of the output's columns.
fn join_short(first: RecordBatch, cur: &mut Current, batch_size: usize) -> Result<RecordBatch> {
    let mut rows = first.num_rows();
    let mut bytes = first.get_array_memory_size();
    let mut parts = vec![first];
    while rows < batch_size && bytes <= JOIN_BYTES {
        let Some(next) = cur.batches.next() else {
            break;
        };
        let next = next.map_err(Error::from)?;
        rows += next.num_rows();
        bytes += next.get_array_memory_size();
        parts.push(next);
    }
    if parts.len() == 1 {
        return Ok(parts.swap_remove(0));
    }
    // Batches of one file may differ in nullability (see `widest_nullability`).
    let schema = take::widest_nullability(&parts);
    Ok(arrow_select::concat::concat_batches(&schema, &parts)?)
}

/// A stream of record batches of a lake in its unified schema (an Arrow
/// [`RecordBatchReader`]): returned by [`Lake::scan`] and [`Lake::read_file_rows`].
pub struct LakeReader {
    lake: Arc<Lake>,
    plan: Plan,
    registry: HandlerRegistry,
    segments: VecDeque<Segment>,
    current: Option<Current>,
    batch_size: usize,
    cancel: Option<CancelToken>,
    /// Only virtual columns, built from the map ([`Lake::map_rows`]): no file is opened.
    from_map: bool,
    done: bool,
}

impl std::fmt::Debug for LakeReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LakeReader")
            .field("schema", &self.plan.schema)
            .field("segments_left", &self.segments.len())
            .finish()
    }
}

/// A reader's next batch from `step`, ending the reader (`done`) at its end or at its first
/// error: what every batch reader of the facade returns from `next_batch`.
pub(crate) fn fused<T>(done: &mut bool, step: Result<Option<T>>) -> Option<Result<T>> {
    match step {
        Ok(Some(b)) => Some(Ok(b)),
        Ok(None) => {
            *done = true;
            None
        }
        Err(e) => {
            *done = true;
            Some(Err(e))
        }
    }
}

impl LakeReader {
    fn new(lake: Arc<Lake>, plan: Plan, segments: VecDeque<Segment>, o: &ScanOptions) -> Self {
        LakeReader {
            lake,
            plan,
            registry: handlers(),
            segments,
            current: None,
            batch_size: if o.batch_size == 0 {
                DEFAULT_BATCH_SIZE
            } else {
                o.batch_size
            },
            cancel: o.cancel.clone(),
            from_map: false,
            done: false,
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.plan.schema)
    }

    fn open(&self, segment: Segment) -> Result<Current> {
        let e = self.lake.map.entry(segment.index);
        let projection = self.plan.projection(&self.lake, segment.index)?;
        let lacks_columns = projection.len() < self.plan.fields.len();
        let batches = if self.plan.string_views {
            crate::views::read_segment(&self.lake.map, &segment, &projection, &self.registry)?
        } else {
            self.lake
                .map
                .read_segment(&segment, Some(&projection), &self.registry)?
        };
        Ok(Current {
            segment,
            path: e.path.to_string(),
            first_gid: e.first_global_row + segment.local_start,
            seen: 0,
            batches,
            rest: None,
            lacks_columns,
        })
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        if self.from_map {
            return self.step_from_map();
        }
        loop {
            CancelToken::check(self.cancel.as_ref())?;
            let Some(mut cur) = self.current.take() else {
                match self.segments.pop_front() {
                    None => return Ok(None),
                    Some(segment) => {
                        self.current = Some(self.open(segment)?);
                        continue;
                    }
                }
            };
            let batch = match cur.rest.take() {
                Some(b) => b,
                None => match cur.batches.next() {
                    Some(b) if cur.lacks_columns => {
                        join_short(b.map_err(Error::from)?, &mut cur, self.batch_size)?
                    }
                    Some(b) => b.map_err(Error::from)?,
                    None => {
                        if cur.seen != cur.segment.len {
                            let e = self.lake.map.entry(cur.segment.index);
                            return Err(Error::new(
                                ErrorKind::Corrupt,
                                format!(
                                    "{}: the {} reader returned {} rows for local rows {}..{}",
                                    self.lake.root().join(e.path).display(),
                                    e.format,
                                    cur.seen,
                                    cur.segment.local_start,
                                    cur.segment.local_start + cur.segment.len
                                ),
                            ));
                        }
                        continue;
                    }
                },
            };
            let batch = if batch.num_rows() > self.batch_size {
                cur.rest = Some(batch.slice(self.batch_size, batch.num_rows() - self.batch_size));
                batch.slice(0, self.batch_size)
            } else {
                batch
            };
            let first_gid = cur.first_gid + cur.seen;
            cur.seen += batch.num_rows() as u64;
            if cur.seen > cur.segment.len {
                let e = self.lake.map.entry(cur.segment.index);
                return Err(Error::new(
                    ErrorKind::Corrupt,
                    format!(
                        "{}: the {} reader returned more than the {} rows asked for",
                        self.lake.root().join(e.path).display(),
                        e.format,
                        cur.segment.len
                    ),
                ));
            }
            let out = conform(&self.plan, &batch, Gids::From(first_gid), &cur.path);
            self.current = Some(cur);
            if batch.num_rows() == 0 {
                continue;
            }
            return out.map(Some);
        }
    }
}

impl LakeReader {
    /// The next batch of a [`Lake::map_rows`] reader: the virtual columns of the next
    /// `batch_size` rows of its part, from the map.
    fn step_from_map(&mut self) -> Result<Option<RecordBatch>> {
        CancelToken::check(self.cancel.as_ref())?;
        let Some(segment) = self.segments.front_mut() else {
            return Ok(None);
        };
        let n = segment.len.min(self.batch_size as u64);
        let e = self.lake.map.entry(segment.index);
        let first = e.first_global_row + segment.local_start;
        segment.local_start += n;
        segment.len -= n;
        if segment.len == 0 {
            self.segments.pop_front();
        }
        let options = RecordBatchOptions::new().with_row_count(Some(n as usize));
        let rows =
            RecordBatch::try_new_with_options(Arc::new(Schema::empty()), Vec::new(), &options)?;
        conform(&self.plan, &rows, Gids::From(first), e.path).map(Some)
    }
}

impl Iterator for LakeReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl LakeReader {
    /// The next batch, with the facade's error (the `Iterator` impl wraps it in an
    /// `ArrowError` for Arrow's reader trait). After an error the stream ends.
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.done {
            return None;
        }
        let step = self.step();
        crate::scan::fused(&mut self.done, step)
    }

    /// Every remaining batch, or the first error.
    pub fn collect_batches(mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next_batch() {
            out.push(b?);
        }
        Ok(out)
    }
}

impl RecordBatchReader for LakeReader {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.plan.schema)
    }
}
