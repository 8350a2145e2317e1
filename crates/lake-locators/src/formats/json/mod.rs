//! The JSON-family locator: `.ndjson` (always one value per line), `.jsonl` and `.json` (a
//! top-level array when the first non-whitespace byte is `[`, otherwise one value per
//! non-blank line). It produces the `format` `ndjson` or `json_array` by content.
//!
//! Indexing walks the file once with a flat-object tokenizer (checkpoints every `stride`
//! rows, type inference and statistics in the same pass); a file with nested values falls back
//! to arrow-json's own inference so that Struct/List columns come out as arrow-json reads
//! them. Reading seeks to the checkpoint byte, skips rows structurally and decodes only the
//! wanted rows with arrow-json under the stored schema.

pub(crate) mod fast;
pub(crate) mod order;
mod run;
pub(crate) mod split;
pub(crate) use split::fuzz_check;
mod tok;
mod walk;
mod widen;
mod win;

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};
use memchr::memchr;

use crate::error::{Error, Result};
use crate::locator::{
    BatchIter, Block, FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns,
};
use crate::simd::{JSON, Kernel, Window};
use crate::stats::StatsBuilder;
use crate::text::blocks::{map_fine, regroup};
use crate::text::infer::{Columns, null_to_utf8};
use crate::text::rowread::{
    BatchCursor, KnownStarts, NextBatch, batch_size, check_stride, end_on_error, finish_blocks,
    prepare_rows, projection_indices, read_batch, schema_for_read, start_block,
};
use crate::text::scan::{FileBytes, array_next, bom_len, json_value_end, skip_ws};
use tok::{ObjError, scan_object_in};
use walk::{ValueScan, ValuesFound, scan_values_walk};

/// The locator of the JSON family.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonLocator;

/// How rows are laid out in a JSON file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One value per non-blank line.
    Lines,
    /// A top-level array whose `[` is at this byte.
    Array(usize),
}

impl Layout {
    fn format(self) -> &'static str {
        match self {
            Layout::Lines => "ndjson",
            Layout::Array(_) => "json_array",
        }
    }
}

/// Which part of a top-level array a scan reads: the whole array, or one range of a split
/// array (see [`split`]). A range that is not `first` starts at an element; one that is not
/// `last` must end just past the separator before the next range's first element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ArrayPart {
    first: bool,
    last: bool,
}

/// The whole array (and any line file).
const WHOLE: ArrayPart = ArrayPart {
    first: true,
    last: true,
};

fn layout(path: &Path, data: &[u8]) -> Layout {
    let is_ndjson = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("ndjson"));
    let first = skip_ws(data, bom_len(data));
    if !is_ndjson && data.get(first) == Some(&b'[') {
        Layout::Array(first)
    } else {
        Layout::Lines
    }
}

/// Lines read one by one before the streaming reader is tried again after it read none
/// (lines it cannot read, such as long values or escapes, would otherwise pay for the try).
/// Tests try it on every line, so that the differential tests reach it as often as they can.
const STREAM_PAUSE: u32 = if cfg!(test) { 0 } else { 64 };

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first non-blank line from `pos`: `(value start, line end)`, or `None` at the end.
#[inline]
fn next_line(data: &[u8], mut pos: usize) -> Option<(usize, usize)> {
    while pos < data.len() {
        let end = memchr(b'\n', &data[pos..]).map_or(data.len(), |i| pos + i);
        let mut s = pos;
        while s < end && is_ws(data[s]) {
            s += 1;
        }
        if s < end {
            return Some((s, end));
        }
        pos = end + 1;
    }
    None
}

/// Skips `n` non-blank lines from `pos`; returns the position after them and how many there
/// were.
fn skip_lines(data: &[u8], mut pos: usize, n: u64) -> (usize, u64) {
    let mut got = 0;
    while got < n {
        match next_line(data, pos) {
            Some((_, end)) => {
                pos = (end + 1).min(data.len());
                got += 1;
            }
            None => {
                pos = data.len();
                break;
            }
        }
    }
    (pos, got)
}

fn syntax(path: &Path, format: &'static str, at: usize, msg: &str, row: u64) -> Error {
    Error::malformed(path, format, msg.to_string())
        .at_byte(at as u64)
        .at_row(row)
}

/// One indexing pass.
fn index_bytes(path: &Path, data: &[u8], options: &IndexOptions) -> Result<FileIndex> {
    crate::simd::dispatch(Indexer {
        path,
        data,
        options,
    })
}

/// The arguments of one indexing pass, run by [`crate::simd::dispatch`] over the window masks
/// of this CPU.
#[derive(Clone, Copy)]
struct Indexer<'a> {
    path: &'a Path,
    data: &'a [u8],
    options: &'a IndexOptions,
}

impl Kernel<JSON> for Indexer<'_> {
    type Output = Result<FileIndex>;

    #[inline(always)]
    fn run<W: Window<JSON>>(self) -> Self::Output {
        index_with::<W>(self.path, self.data, self.options)
    }
}

/// Scans one row value of `data` (a prefix of `full`) from `start` into `cols`; returns the
/// value's end. After the first nested value (`nested` set) values are only delimited: the
/// schema then comes from arrow-json's inference.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn observe_value(
    path: &Path,
    format: &'static str,
    data: &[u8],
    full: &[u8],
    start: usize,
    row: u64,
    cols: &mut Columns,
    wanted: &StatsColumns,
    nested: &mut bool,
) -> Result<usize> {
    if !*nested {
        match scan_object_in(data, full, start, cols, wanted) {
            Ok(end) => return Ok(end),
            Err(ObjError::Nested(_)) => *nested = true,
            Err(ObjError::Syntax(at, msg)) => return Err(syntax(path, format, at, msg, row)),
        }
    }
    if data.get(start) != Some(&b'{') {
        return Err(syntax(path, format, start, "expected an object", row));
    }
    json_value_end(data, start)
        .ok_or_else(|| syntax(path, format, data.len(), "object never closes", row))
}

/// The indexing pass, generic over how window masks are computed (line files only).
#[inline(always)]
fn index_with<W: Window<JSON>>(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
) -> Result<FileIndex> {
    index_lazy::<W>(path, data, options, true)
}

/// [`index_with`], with numbers' text bounds left out while their column is numeric when
/// `lazy` (tests compare it with the eager reading).
#[inline(always)]
fn index_lazy<W: Window<JSON>>(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
    lazy: bool,
) -> Result<FileIndex> {
    check_stride(path, options)?;
    let lay = layout(path, data);
    let format = lay.format();
    let wanted = &options.stats;
    // With fine checkpoints in the map, the scan checkpoints every fine stride and the
    // blocks are grouped from those.
    let fine = map_fine(options.stride);
    let scan_options = IndexOptions {
        stride: fine.unwrap_or(options.stride),
        stats: options.stats.clone(),
    };
    let ValuesFound {
        mut cols,
        blocks,
        rows,
        nested,
        walked,
        ..
    } = scan_values_walk::<W>(&ValueScan {
        path,
        data,
        lay,
        part: WHOLE,
        options: &scan_options,
        lazy,
        walk: true,
        sample: 0,
    })?;
    let (mut blocks, _) = regroup(blocks, Vec::new(), options.stride, fine);
    finish_blocks(&mut blocks, rows, data.len() as u64);
    let (schema, stats) = if nested {
        slow_schema_and_stats(path, data, lay, wanted, walked)?
    } else {
        // A column that turned Utf8 after numbers left out their text bounds: the rows
        // before its turn are read again for them (rare: most columns keep one type).
        if let Some(cut) = cols.pending_end(data.len()) {
            let (rescan, _, _, _) = scan_values::<W>(path, &data[..cut], options, false)?;
            cols.join_pending(&rescan);
        }
        let stats = (!wanted.is_none()).then(|| cols.stats());
        (cols.schema(), stats)
    };
    Ok(FileIndex {
        format: format.to_string(),
        row_count: rows,
        blocks,
        schema,
        stats,
    })
}

/// The row values of `data`: inferred columns, checkpoint blocks (sizes not filled in), row
/// count and whether a nested value was met. With `lazy`, numbers of numeric columns leave
/// their text bounds out (see [`Columns::lazy_text_bounds`]).
#[inline(always)]
fn scan_values<W: Window<JSON>>(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
    lazy: bool,
) -> Result<(Columns, Vec<Block>, u64, bool)> {
    scan_values_as::<W>(path, data, layout(path, data), options, lazy)
}

/// [`scan_values`] of `data` laid out as `lay` (a range of a line file, see [`split`]).
#[inline(always)]
fn scan_values_as<W: Window<JSON>>(
    path: &Path,
    data: &[u8],
    lay: Layout,
    options: &IndexOptions,
    lazy: bool,
) -> Result<(Columns, Vec<Block>, u64, bool)> {
    let found = scan_values_walk::<W>(&ValueScan {
        path,
        data,
        lay,
        part: WHOLE,
        options,
        lazy,
        walk: false,
        sample: 0,
    })?;
    Ok((found.cols, found.blocks, found.rows, found.nested))
}

/// Calls `f(start, end)` for every row value of the file (structural walk, no validation
/// beyond what is needed to find the values; the first pass validated the structure).
fn walk_rows(
    path: &Path,
    data: &[u8],
    lay: Layout,
    mut f: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    let format = lay.format();
    let broken = |at: usize| syntax(path, format, at, "value never ends", 0);
    match lay {
        Layout::Lines => {
            let mut pos = bom_len(data);
            while let Some((s, end)) = next_line(data, pos) {
                f(s, end)?;
                pos = end + 1;
            }
        }
        Layout::Array(open) => {
            let mut p = skip_ws(data, open + 1);
            if data.get(p) == Some(&b']') {
                return Ok(());
            }
            loop {
                let end = json_value_end(data, p).ok_or_else(|| broken(p))?;
                f(p, end)?;
                match array_next(data, end) {
                    Ok(Some(n)) => p = n,
                    Ok(None) => break,
                    Err(at) => return Err(broken(at)),
                }
            }
        }
    }
    Ok(())
}

/// arrow-json's inference over every row (for files with nested values), and statistics from
/// decoding the file under that schema.
fn slow_schema_and_stats(
    path: &Path,
    data: &[u8],
    lay: Layout,
    wanted: &StatsColumns,
    walked: Option<fast::Inferrer>,
) -> Result<(SchemaRef, Option<crate::locator::Stats>)> {
    let format = lay.format();
    // The scan's walk took every row: its schema, and its statistics when it has them.
    if let Some(w) = &walked {
        let schema = null_to_utf8(&w.finish().schema);
        if wanted.is_none() {
            return Ok((schema, None));
        }
        if let Some(stats) = w.stats(&schema, wanted) {
            return Ok((schema, Some(stats)));
        }
    }
    let mut values = Vec::new();
    walk_rows(path, data, lay, |s, e| {
        values.push((s, e));
        Ok(())
    })?;
    // The byte walk of `fast` when it covers the rows, else the reference: arrow-json's
    // inference over `serde_json` values with the widening of `widen` (which also reports
    // what the walk leaves to it).
    let fast = fast::infer_state(data, &values, wanted);
    let schema = match &fast {
        Some(f) => null_to_utf8(&f.finish().schema),
        None => null_to_utf8(&slow_schema(path, format, data, &values)?),
    };
    if wanted.is_none() {
        return Ok((schema, None));
    }
    if let Some(stats) = fast.as_ref().and_then(|f| f.stats(&schema, wanted)) {
        return Ok((schema, Some(stats)));
    }
    let stats = slow_stats(path, format, data, &values, &schema, wanted)?;
    Ok((schema, Some(stats)))
}

/// The statistics of the rows `values` decoded by arrow-json under `schema` (the reference
/// of [`fast::Inferrer::stats`]).
fn slow_stats(
    path: &Path,
    format: &'static str,
    data: &[u8],
    values: &[(usize, usize)],
    schema: &SchemaRef,
    wanted: &StatsColumns,
) -> Result<crate::locator::Stats> {
    let mut builder = StatsBuilder::new(schema, wanted);
    let mut buf = Vec::new();
    for chunk in values.chunks(8192) {
        buf.clear();
        for &(s, e) in chunk {
            buf.extend_from_slice(&data[s..e]);
            buf.push(b'\n');
        }
        if let Some(batch) = widen::decode(path, format, schema, &buf, chunk.len(), None)? {
            builder.update(&batch);
        }
    }
    Ok(builder.finish())
}

/// arrow-json's inference over `serde_json` values of the rows `values`, with members whose
/// types disagree between rows widened to JSON text (widen.rs), and struct fields in order
/// of first appearance ([`order`]).
fn slow_schema(
    path: &Path,
    format: &'static str,
    data: &[u8],
    values: &[(usize, usize)],
) -> Result<arrow_schema::Schema> {
    let iter = || {
        values.iter().map(|&(s, e)| {
            serde_json::from_slice::<serde_json::Value>(&data[s..e])
                .map_err(|err| ArrowError::JsonError(format!("at byte {s}: {err}")))
        })
    };
    let schema = widen::infer(iter).map_err(|e| Error::library(path, format, e))?;
    let mut order = order::KeyOrder::default();
    for &(s, e) in values {
        order.add(&data[s..e]);
    }
    Ok(order.apply(&schema))
}

impl Locator for JsonLocator {
    fn name(&self) -> &str {
        "json"
    }

    fn infers_schema(&self) -> bool {
        true
    }

    fn extensions(&self) -> &[&str] {
        &["ndjson", "jsonl", "json"]
    }

    fn reads_whole_file(&self) -> bool {
        true
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout::HEAD_AND_BLOCKS)
    }

    fn formats(&self) -> &[&str] {
        &["ndjson", "json_array"]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        // A large line file is read in ranges on every thread of the caller's pool.
        if let Some(index) = split::index_split(path, options)? {
            return Ok(index);
        }
        let data = FileBytes::open_whole(path)?;
        index_bytes(path, &data, options)
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        let data = FileBytes::open(path)?;
        prepare_rows(path, &data, request.blocks, &request.rows);
        let lay = layout(path, &data);
        let (schema, blocks) =
            schema_for_read(request.schema.as_ref(), |o| index_bytes(path, &data, o))?;
        let projection = projection_indices(path, &schema, request.projection)?;
        let blocks = request.blocks.or(blocks.as_deref());
        let first = match lay {
            Layout::Lines => bom_len(&data),
            Layout::Array(open) => {
                let p = skip_ws(&data, open + 1);
                if data.get(p) == Some(&b']') {
                    data.len()
                } else {
                    p
                }
            }
        };
        let (mut pos, base) =
            start_block(path, blocks, request.rows.start, data.len())?.unwrap_or((first, 0));
        let to_skip = request.rows.start.saturating_sub(base);
        let mut done = false;
        match lay {
            Layout::Lines => {
                let (p, got) = skip_lines(&data, pos, to_skip);
                pos = p;
                done = got < to_skip;
            }
            Layout::Array(_) => {
                for _ in 0..to_skip {
                    match next_element(path, &data, pos)? {
                        Some((_, next)) => pos = next,
                        None => {
                            done = true;
                            break;
                        }
                    }
                }
            }
        }
        let known = KnownStarts::new(blocks, &request.rows, data.len());
        Ok(Box::new(JsonBatches {
            at: BatchCursor::new(
                pos,
                request.rows.start,
                if done {
                    0
                } else {
                    request.rows.end.saturating_sub(request.rows.start)
                },
                known,
                batch_size(request.batch_size),
            ),
            path: path.to_path_buf(),
            format: lay.format(),
            array: matches!(lay, Layout::Array(_)),
            data,
            schema,
            projection,
        }))
    }
}

/// The array element starting at `pos`: `(its end, the start of the next element or the end
/// of the data)`, or `None` when `pos` is at or past the end of the elements.
fn next_element(path: &Path, data: &[u8], pos: usize) -> Result<Option<(usize, usize)>> {
    if pos >= data.len() {
        return Ok(None);
    }
    let end = json_value_end(data, pos).ok_or_else(|| {
        Error::malformed(path, "json_array", "array element never ends").at_byte(pos as u64)
    })?;
    match array_next(data, end) {
        Ok(Some(n)) => Ok(Some((end, n))),
        Ok(None) => Ok(Some((end, data.len()))),
        Err(at) => {
            Err(Error::malformed(path, "json_array", "expected ',' or ']'").at_byte(at as u64))
        }
    }
}

/// Lazily decodes the wanted rows, one batch at a time.
struct JsonBatches {
    at: BatchCursor,
    path: PathBuf,
    format: &'static str,
    array: bool,
    data: FileBytes,
    schema: SchemaRef,
    projection: Option<Vec<usize>>,
}

impl JsonBatches {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let want = match self.at.begin(self.data.len()) {
            NextBatch::Ready(batch) => return Ok(batch),
            NextBatch::Read(want) => want,
        };
        let decode = |text: &[u8], rows: u64| {
            widen::decode(
                &self.path,
                self.format,
                &self.schema,
                text,
                rows as usize,
                self.projection.as_deref(),
            )
        };
        if !self.array {
            let skip = |from: usize, n: u64| Ok(skip_lines(&self.data, from, n));
            let read = read_batch(
                &self.path,
                self.format,
                self.at.pos,
                want,
                self.at.middle(want),
                skip,
                |range, rows| decode(&self.data[range], rows),
            )?;
            return Ok(self.at.advance(read, want));
        }
        // The elements of an array, each copied onto a line of its own.
        let mut text = Vec::new();
        let mut got = 0;
        while got < want {
            match next_element(&self.path, &self.data, self.at.pos)? {
                Some((end, next)) => {
                    text.extend_from_slice(&self.data[self.at.pos..end]);
                    text.push(b'\n');
                    self.at.pos = next;
                    got += 1;
                }
                None => break,
            }
        }
        self.at.took(got, want);
        decode(&text, got)
    }
}

impl Iterator for JsonBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        end_on_error(self.next_batch(), &mut self.at.remaining)
    }
}

#[cfg(test)]
mod tests;
