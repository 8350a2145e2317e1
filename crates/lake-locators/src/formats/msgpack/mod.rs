//! The MessagePack locator (`.msgpack`, `.mpk`): a concatenation of top-level maps, one per
//! row (an outer array of maps is accepted too), with a byte checkpoint every `stride` rows.
//!
//! Values are walked marker by marker (rmp's [`Marker`]) with every length checked against
//! the bytes left, so skipping a row never builds it. Reading skips rows structurally from the
//! checkpoint, transcodes only the wanted maps to JSON text and decodes that with arrow-json
//! under the stored schema, so MsgPack and JSON rows share one decoder.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};
use rmp::Marker;

use crate::error::{Error, Result};
use crate::formats::json::fast::Inferrer;
use crate::locator::{
    BatchIter, Block, FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns,
};
use crate::stats::StatsBuilder;
use crate::text::infer::{Columns, null_to_utf8};
use crate::text::rowread::{
    batch_size, check_stride, decode_json, end_on_error, finish_blocks, projection_indices,
    schema_for_read, start_block,
};
use crate::text::scan::FileBytes;

mod split;

const FORMAT: &str = "msgpack";

/// Nesting deeper than this is rejected while transcoding (recursion bound).
const MAX_DEPTH: usize = 128;

/// The locator of MessagePack files.
#[derive(Debug, Clone, Copy, Default)]
pub struct MsgPackLocator;

/// A problem at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MpError {
    at: usize,
    message: String,
}

/// The error of the file at `path` for a problem `e` at its byte offset.
fn malformed_at(path: &Path, e: MpError) -> Error {
    Error::malformed(path, FORMAT, e.message).at_byte(e.at as u64)
}

fn mp_err(at: usize, message: impl Into<String>) -> MpError {
    MpError {
        at,
        message: message.into(),
    }
}

/// The head of one value: scalars complete, containers with their element counts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Head<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(u64),
    Map(u64),
    Ext,
}

/// A bounds-checked cursor over MessagePack bytes.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], MpError> {
        let start = self.pos;
        let end = start
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                mp_err(
                    start,
                    format!(
                        "truncated value: needs {n} bytes, {} left",
                        self.data.len() - start
                    ),
                )
            })?;
        self.pos = end;
        Ok(&self.data[start..end])
    }

    fn be(&mut self, n: usize) -> Result<u64, MpError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn len(&mut self, n: usize) -> Result<usize, MpError> {
        // A length field is at most 32 bits, so it always fits usize on 64-bit targets; the
        // bytes it announces are checked by `take`.
        Ok(self.be(n)? as usize)
    }

    /// Reads the head of the value at the cursor.
    fn head(&mut self) -> Result<Head<'a>, MpError> {
        let at = self.pos;
        let byte = self.take(1)?[0];
        Ok(match Marker::from_u8(byte) {
            Marker::FixPos(v) => Head::Int(i64::from(v)),
            Marker::FixNeg(v) => Head::Int(i64::from(v)),
            Marker::Null => Head::Nil,
            Marker::True => Head::Bool(true),
            Marker::False => Head::Bool(false),
            Marker::U8 => Head::Int(self.be(1)? as i64),
            Marker::U16 => Head::Int(self.be(2)? as i64),
            Marker::U32 => Head::Int(self.be(4)? as i64),
            Marker::U64 => {
                let v = self.be(8)?;
                i64::try_from(v).map_or(Head::UInt(v), Head::Int)
            }
            Marker::I8 => Head::Int(i64::from(self.be(1)? as u8 as i8)),
            Marker::I16 => Head::Int(i64::from(self.be(2)? as u16 as i16)),
            Marker::I32 => Head::Int(i64::from(self.be(4)? as u32 as i32)),
            Marker::I64 => Head::Int(self.be(8)? as i64),
            Marker::F32 => Head::Float(f64::from(f32::from_bits(self.be(4)? as u32))),
            Marker::F64 => Head::Float(f64::from_bits(self.be(8)?)),
            Marker::FixStr(n) => Head::Str(self.take(usize::from(n))?),
            Marker::Str8 => {
                let n = self.len(1)?;
                Head::Str(self.take(n)?)
            }
            Marker::Str16 => {
                let n = self.len(2)?;
                Head::Str(self.take(n)?)
            }
            Marker::Str32 => {
                let n = self.len(4)?;
                Head::Str(self.take(n)?)
            }
            Marker::Bin8 => {
                let n = self.len(1)?;
                Head::Bin(self.take(n)?)
            }
            Marker::Bin16 => {
                let n = self.len(2)?;
                Head::Bin(self.take(n)?)
            }
            Marker::Bin32 => {
                let n = self.len(4)?;
                Head::Bin(self.take(n)?)
            }
            Marker::FixArray(n) => Head::Array(u64::from(n)),
            Marker::Array16 => Head::Array(self.be(2)?),
            Marker::Array32 => Head::Array(self.be(4)?),
            Marker::FixMap(n) => Head::Map(u64::from(n)),
            Marker::Map16 => Head::Map(self.be(2)?),
            Marker::Map32 => Head::Map(self.be(4)?),
            Marker::FixExt1 => self.ext(2)?,
            Marker::FixExt2 => self.ext(3)?,
            Marker::FixExt4 => self.ext(5)?,
            Marker::FixExt8 => self.ext(9)?,
            Marker::FixExt16 => self.ext(17)?,
            Marker::Ext8 => {
                let n = self.len(1)?;
                self.ext(n + 1)?
            }
            Marker::Ext16 => {
                let n = self.len(2)?;
                self.ext(n + 1)?
            }
            Marker::Ext32 => {
                let n = self.len(4)?;
                self.ext(n + 1)?
            }
            Marker::Reserved => return Err(mp_err(at, "reserved marker byte 0xc1")),
        })
    }

    fn ext(&mut self, n: usize) -> Result<Head<'a>, MpError> {
        self.take(n)?;
        Ok(Head::Ext)
    }

    /// Skips one whole value without building it (an explicit count of pending values, so
    /// deep nesting uses no stack). The markers of most values give their length at once
    /// (the header walk of a split file reads nothing else); the others, and a value that
    /// runs past the data, go through [`Cursor::head`], with its errors.
    fn skip_value(&mut self) -> Result<(), MpError> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            let at = self.pos;
            // (bytes of the value, values it holds); `usize::MAX`: left to `head`.
            let (len, holds) = match self.data.get(at) {
                Some(&b @ 0x80..=0x8f) => (1, 2 * u64::from(b & 0x0f)),
                Some(&b @ 0x90..=0x9f) => (1, u64::from(b & 0x0f)),
                Some(&b @ 0xa0..=0xbf) => (1 + usize::from(b & 0x1f), 0),
                Some(0x00..=0x7f | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff) => (1, 0),
                Some(0xcc | 0xd0) => (2, 0),
                Some(0xcd | 0xd1) => (3, 0),
                Some(0xca | 0xce | 0xd2) => (5, 0),
                Some(0xcb | 0xcf | 0xd3) => (9, 0),
                Some(0xc4 | 0xd9) => self
                    .data
                    .get(at + 1)
                    .map_or((usize::MAX, 0), |&n| (2 + usize::from(n), 0)),
                _ => (usize::MAX, 0),
            };
            match at.checked_add(len).filter(|&end| end <= self.data.len()) {
                Some(end) => {
                    self.pos = end;
                    pending += holds;
                }
                None => match self.head()? {
                    Head::Array(n) => pending += n,
                    Head::Map(n) => pending += 2 * n,
                    _ => {}
                },
            }
        }
        Ok(())
    }

    /// [`Cursor::skip_value`] by [`Cursor::head`] alone (the reference of its tests).
    #[cfg(test)]
    fn skip_value_by_heads(&mut self) -> Result<(), MpError> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            match self.head()? {
                Head::Array(n) => pending += n,
                Head::Map(n) => pending += 2 * n,
                _ => {}
            }
        }
        Ok(())
    }
}

#[inline]
fn utf8(s: &[u8], at: usize) -> Result<&str, MpError> {
    // Most keys and values are short ASCII: a word-at-a-time test, inlined, instead of the
    // call to the full check (a third of a flat file's indexing time).
    if s.is_ascii() {
        // SAFETY: ASCII bytes are UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(s) });
    }
    std::str::from_utf8(s).map_err(|e| mp_err(at + e.valid_up_to(), "invalid UTF-8 in a string"))
}

/// Where rows start: after the outer array's header (and how many elements it holds), or at 0
/// for concatenated maps.
fn body(data: &[u8]) -> Result<(usize, Option<u64>), MpError> {
    let Some(&first) = data.first() else {
        return Ok((0, None));
    };
    if matches!(
        Marker::from_u8(first),
        Marker::FixArray(_) | Marker::Array16 | Marker::Array32
    ) {
        let mut c = Cursor { data, pos: 0 };
        if let Head::Array(n) = c.head()? {
            return Ok((c.pos, Some(n)));
        }
    }
    Ok((0, None))
}

/// Reads the row (a map) at the cursor into `cols`, past it; a nested value sets `nested`
/// and is skipped (the schema then comes from the rows transcoded to JSON).
#[inline]
fn observe_row(
    c: &mut Cursor<'_>,
    cols: &mut Columns,
    wanted: &StatsColumns,
    text: &mut Vec<u8>,
    nested: &mut bool,
) -> Result<(), MpError> {
    let row_start = c.pos;
    let Head::Map(pairs) = c.head()? else {
        return Err(mp_err(row_start, "row is not a map"));
    };
    let mut hint = 0;
    for _ in 0..pairs {
        let key_at = c.pos;
        let Head::Str(key) = c.head()? else {
            return Err(mp_err(key_at, "map key is not a string"));
        };
        let key = utf8(key, key_at + 1)?;
        let idx = cols.index_of(key.as_bytes(), hint, wanted);
        hint = idx + 1;
        let value_at = c.pos;
        let head = c.head()?;
        let col = &mut cols.cols[idx];
        let track = col.tracks();
        text.clear();
        match head {
            Head::Nil => {}
            Head::Bool(b) => col.boolean(if b { b"true" } else { b"false" }),
            Head::Int(v) => {
                if track {
                    let _ = write!(text, "{v}");
                }
                col.int(v, text);
            }
            Head::UInt(v) => {
                if track {
                    let _ = write!(text, "{v}");
                }
                col.float(v as f64, text);
            }
            Head::Float(v) if v.is_finite() => {
                if track {
                    let _ = serde_json::to_writer(&mut *text, &v);
                }
                col.float(v, text);
            }
            // Non-finite floats have no JSON form; they read back as null.
            Head::Float(_) => {}
            Head::Str(s) => {
                let s = utf8(s, value_at)?;
                col.text(s.as_bytes());
            }
            Head::Bin(b) => {
                hex(b, text);
                col.text(text);
            }
            Head::Array(n) | Head::Map(n) => {
                *nested = true;
                let mut pending = if matches!(head, Head::Map(_)) {
                    2 * n
                } else {
                    n
                };
                while pending > 0 {
                    c.skip_value()?;
                    pending -= 1;
                }
            }
            Head::Ext => {
                return Err(mp_err(value_at, "extension types are not supported"));
            }
        }
    }
    Ok(())
}

/// One indexing pass.
fn index_bytes(path: &Path, data: &[u8], options: &IndexOptions) -> Result<FileIndex> {
    check_stride(path, options)?;
    let wanted = &options.stats;
    let malformed = |e: MpError, row: u64| {
        Error::malformed(path, FORMAT, e.message)
            .at_byte(e.at as u64)
            .at_row(row)
    };
    let (start, outer) = body(data).map_err(|e| malformed(e, 0))?;
    let mut c = Cursor { data, pos: start };
    let mut cols = Columns::default();
    let mut nested = false;
    let mut blocks: Vec<Block> = Vec::new();
    let mut rows = 0u64;
    let mut text = Vec::new();
    // The next checkpoint row: a comparison per row instead of a 64-bit division.
    let mut next_checkpoint = 0u64;
    while c.pos < data.len() && outer.is_none_or(|n| rows < n) {
        let row_start = c.pos;
        if rows == next_checkpoint {
            next_checkpoint += options.stride;
            blocks.push(Block::checkpoint(
                blocks.len() as u64,
                rows,
                row_start as u64,
            ));
        }
        observe_row(&mut c, &mut cols, wanted, &mut text, &mut nested)
            .map_err(|e| malformed(e, rows))?;
        rows += 1;
    }
    if let Some(n) = outer
        && rows < n
    {
        return Err(malformed(
            mp_err(
                data.len(),
                format!("the outer array announces {n} rows, the file ends after {rows}"),
            ),
            rows,
        ));
    }
    if c.pos < data.len() {
        return Err(malformed(
            mp_err(c.pos, "bytes after the outer array"),
            rows,
        ));
    }
    finish_blocks(&mut blocks, rows, data.len() as u64);
    let (schema, stats) = if nested {
        nested_schema_and_stats(path, data, start, rows, wanted)?
    } else {
        let stats = (!wanted.is_none()).then(|| cols.stats());
        (cols.schema(), stats)
    };
    Ok(FileIndex {
        format: FORMAT.to_string(),
        row_count: rows,
        blocks,
        schema,
        stats,
    })
}

fn hex(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
}

/// Appends `s` as a JSON string: copied between quotes when no byte needs an escape (the
/// common case, without `serde_json`'s byte-by-byte escape table), else by `serde_json`.
#[inline]
fn json_string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// Appends the value at the cursor as JSON text (maps with string keys become objects, binary
/// becomes a hex string, non-finite floats null).
fn transcode(c: &mut Cursor<'_>, out: &mut Vec<u8>, depth: usize) -> Result<(), MpError> {
    if depth > MAX_DEPTH {
        return Err(mp_err(c.pos, format!("nesting deeper than {MAX_DEPTH}")));
    }
    let at = c.pos;
    match c.head()? {
        Head::Nil => out.extend_from_slice(b"null"),
        Head::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Head::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Head::UInt(v) => {
            let _ = write!(out, "{v}");
        }
        Head::Float(v) if v.is_finite() => {
            let _ = serde_json::to_writer(&mut *out, &v);
        }
        Head::Float(_) => out.extend_from_slice(b"null"),
        Head::Str(s) => json_string(out, utf8(s, at)?),
        Head::Bin(b) => {
            out.push(b'"');
            hex(b, out);
            out.push(b'"');
        }
        Head::Array(n) => {
            out.push(b'[');
            for i in 0..n {
                if i > 0 {
                    out.push(b',');
                }
                transcode(c, out, depth + 1)?;
            }
            out.push(b']');
        }
        Head::Map(n) => {
            out.push(b'{');
            for i in 0..n {
                if i > 0 {
                    out.push(b',');
                }
                let key_at = c.pos;
                let Head::Str(k) = c.head()? else {
                    return Err(mp_err(key_at, "map key is not a string"));
                };
                json_string(out, utf8(k, key_at)?);
                out.push(b':');
                transcode(c, out, depth + 1)?;
            }
            out.push(b'}');
        }
        Head::Ext => return Err(mp_err(at, "extension types are not supported")),
    }
    Ok(())
}

/// The schema and statistics of a file with nested values: the JSON locator's byte walk
/// ([`Inferrer`]) over each row transcoded to JSON, one row at a time (memory for one row, not
/// for the file's values). The reference ([`slow_schema_and_stats`]) runs when the walk does
/// not take a row (a duplicate name, deep nesting), when it widens a member (arrow-json's
/// inference over MsgPack rows widens nothing: the reference reports its error) and, for the
/// statistics alone, when the walk keeps none.
fn nested_schema_and_stats(
    path: &Path,
    data: &[u8],
    start: usize,
    rows: u64,
    wanted: &StatsColumns,
) -> Result<(SchemaRef, Option<crate::locator::Stats>)> {
    let malformed = |e: MpError| malformed_at(path, e);
    let mut c = Cursor { data, pos: start };
    let mut line = Vec::new();
    let mut inf = Inferrer::new(wanted);
    for _ in 0..rows {
        if !walk_row(&mut c, &mut line, &mut inf).map_err(malformed)? {
            return slow_schema_and_stats(path, data, start, rows, wanted);
        }
    }
    let inferred = inf.finish();
    if inferred.widened {
        return slow_schema_and_stats(path, data, start, rows, wanted);
    }
    let schema = null_to_utf8(&inferred.schema);
    with_stats(path, data, (start, rows), schema, wanted, Some(&inf))
}

/// Transcodes the row at the cursor into `line` and walks it into `inf`; false when the walk
/// does not take it (the inference is then spoilt).
fn walk_row(c: &mut Cursor<'_>, line: &mut Vec<u8>, inf: &mut Inferrer) -> Result<bool, MpError> {
    line.clear();
    transcode(c, line, 0)?;
    // Transcoded text is UTF-8 (its strings were checked); the check is kept so that a slip
    // there sends the file to the reference, not unchecked text to the walk.
    Ok(std::str::from_utf8(line)
        .ok()
        .and_then(|text| inf.text_row(text))
        .is_some())
}

/// arrow-json's inference over every row transcoded to JSON (for files with nested values),
/// and statistics from decoding them: the reference of [`nested_schema_and_stats`].
fn slow_schema_and_stats(
    path: &Path,
    data: &[u8],
    start: usize,
    rows: u64,
    wanted: &StatsColumns,
) -> Result<(SchemaRef, Option<crate::locator::Stats>)> {
    let malformed = |e: MpError| malformed_at(path, e);
    let mut c = Cursor { data, pos: start };
    let mut lines = Vec::new();
    let mut values = Vec::new();
    // Map keys in order of first appearance, as the fast path and the JSON locator give them.
    let mut order = crate::formats::json::order::KeyOrder::default();
    for _ in 0..rows {
        lines.clear();
        transcode(&mut c, &mut lines, 0).map_err(malformed)?;
        order.add(&lines);
        values.push(
            serde_json::from_slice::<serde_json::Value>(&lines)
                .map_err(|e| ArrowError::JsonError(e.to_string())),
        );
    }
    let inferred = arrow_json::reader::infer_json_schema_from_iterator(values.into_iter())
        .map_err(|e| Error::library(path, FORMAT, e))?;
    let schema = null_to_utf8(&order.apply(&inferred));
    with_stats(path, data, (start, rows), schema, wanted, None)
}

/// `schema` with the statistics `wanted` of the `rows.1` rows from `data[rows.0]`: the byte
/// walk's (`walked`) when it kept them, else decoded ([`decoded_stats`]).
fn with_stats(
    path: &Path,
    data: &[u8],
    (start, rows): (usize, u64),
    schema: SchemaRef,
    wanted: &StatsColumns,
    walked: Option<&Inferrer>,
) -> Result<(SchemaRef, Option<crate::locator::Stats>)> {
    if wanted.is_none() {
        return Ok((schema, None));
    }
    if let Some(stats) = walked.and_then(|w| w.stats(&schema, wanted)) {
        return Ok((schema, Some(stats)));
    }
    let stats = decoded_stats(path, data, start, rows, &schema, wanted)?;
    Ok((schema, Some(stats)))
}

/// The statistics of the `rows` rows from `data[start]` transcoded to JSON and decoded by
/// arrow-json under `schema`, 8,192 rows at a time.
fn decoded_stats(
    path: &Path,
    data: &[u8],
    start: usize,
    rows: u64,
    schema: &SchemaRef,
    wanted: &StatsColumns,
) -> Result<crate::locator::Stats> {
    let malformed = |e: MpError| malformed_at(path, e);
    let mut builder = StatsBuilder::new(schema, wanted);
    let mut lines = Vec::new();
    let mut c = Cursor { data, pos: start };
    let mut done = 0;
    while done < rows {
        let n = (rows - done).min(8192);
        lines.clear();
        for _ in 0..n {
            transcode(&mut c, &mut lines, 0).map_err(malformed)?;
            lines.push(b'\n');
        }
        if let Some(batch) = decode_json(path, FORMAT, schema, &lines, n as usize, None)? {
            builder.update(&batch);
        }
        done += n;
    }
    Ok(builder.finish())
}

impl Locator for MsgPackLocator {
    fn name(&self) -> &str {
        FORMAT
    }

    fn infers_schema(&self) -> bool {
        true
    }

    fn extensions(&self) -> &[&str] {
        &["msgpack", "mpk"]
    }

    fn reads_whole_file(&self) -> bool {
        true
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout::HEAD_AND_BLOCKS)
    }

    fn formats(&self) -> &[&str] {
        &[FORMAT]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        if let Some(index) = split::index_split(path, options)? {
            return Ok(index);
        }
        let data = FileBytes::open_whole(path)?;
        index_bytes(path, &data, options)
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        let data = FileBytes::open(path)?;
        let malformed = |e: MpError| malformed_at(path, e);
        let (schema, blocks) =
            schema_for_read(request.schema.as_ref(), |o| index_bytes(path, &data, o))?;
        let projection = projection_indices(path, &schema, request.projection)?;
        let blocks = request.blocks.or(blocks.as_deref());
        let (start, outer) = body(&data).map_err(malformed)?;
        let (pos, base) =
            start_block(path, blocks, request.rows.start, data.len())?.unwrap_or((start, 0));
        let mut c = Cursor { data: &data, pos };
        let mut skipped = 0;
        while skipped < request.rows.start - base.min(request.rows.start) && c.pos < data.len() {
            c.skip_value().map_err(malformed)?;
            skipped += 1;
        }
        let pos = c.pos;
        // In an outer array, rows end with its last element.
        let left_in_file = outer.map_or(u64::MAX, |n| n.saturating_sub(request.rows.start));
        Ok(Box::new(MsgPackBatches {
            path: path.to_path_buf(),
            data,
            pos,
            remaining: request
                .rows
                .end
                .saturating_sub(request.rows.start)
                .min(left_in_file),
            schema,
            projection,
            batch_size: batch_size(request.batch_size),
        }))
    }
}

/// Lazily transcodes and decodes the wanted rows, one batch at a time.
struct MsgPackBatches {
    path: PathBuf,
    data: FileBytes,
    pos: usize,
    remaining: u64,
    schema: SchemaRef,
    projection: Option<Vec<usize>>,
    batch_size: usize,
}

impl MsgPackBatches {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let want = self.remaining.min(self.batch_size as u64);
        let mut c = Cursor {
            data: &self.data,
            pos: self.pos,
        };
        let mut lines = Vec::new();
        let mut got = 0;
        while got < want && c.pos < self.data.len() {
            transcode(&mut c, &mut lines, 0).map_err(|e| {
                Error::malformed(&self.path, FORMAT, e.message).at_byte(e.at as u64)
            })?;
            lines.push(b'\n');
            got += 1;
        }
        self.pos = c.pos;
        self.remaining = if got < want { 0 } else { self.remaining - got };
        decode_json(
            &self.path,
            FORMAT,
            &self.schema,
            &lines,
            got as usize,
            self.projection.as_deref(),
        )
    }
}

impl Iterator for MsgPackBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        end_on_error(self.next_batch(), &mut self.remaining)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::testutil::{XorShift, stress_cases};
    use rmp::encode;

    /// Panics with the error of a write into a `Vec` (which does not fail).
    fn put<T, E: std::fmt::Display>(r: std::result::Result<T, E>) {
        if let Err(e) = r {
            panic!("writing MsgPack: {e}");
        }
    }

    /// A random value of one of a few shapes per `name`, so that columns mostly agree and
    /// sometimes do not (ints and floats join, strings and structs do not).
    fn value(out: &mut Vec<u8>, rng: &mut XorShift, name: usize, depth: usize) {
        match (name + rng.below(60) / 59 + depth) % 8 {
            0 => put(encode::write_sint(out, rng.next() as i64 >> rng.below(64))),
            1 => put(encode::write_f64(
                out,
                (rng.next() % 20_000) as f64 / 8.0 - 1000.0,
            )),
            2 => put(encode::write_str(
                out,
                [
                    "a",
                    "b\"c",
                    "\u{e9}t\u{e9}",
                    "x\ny",
                    "",
                    "tab\t",
                    "\u{65e5}\u{672c}",
                ][rng.below(7)],
            )),
            3 => put(encode::write_bool(out, rng.below(2) == 0)),
            4 if depth < 3 => {
                let n = rng.below(4);
                put(encode::write_array_len(out, n as u32));
                for _ in 0..n {
                    value(out, rng, name, depth + 1);
                }
            }
            5 if depth < 3 => {
                let n = rng.below(4);
                put(encode::write_map_len(out, n as u32));
                for k in 0..n {
                    // A repeated name now and then (the reference path's case).
                    let key = if rng.below(40) == 0 { 0 } else { k };
                    put(encode::write_str(out, &format!("k{key}")));
                    value(out, rng, name + k, depth + 1);
                }
            }
            6 => put(encode::write_bin(out, &[0, 0xff, 7][..rng.below(4)])),
            _ => put(encode::write_nil(out)),
        }
    }

    /// Skipping by marker lengths ends where skipping head by head does, with the same
    /// error, on well-formed values, truncations and byte soup.
    #[test]
    fn skips_by_marker_lengths_equal_skips_by_heads() {
        let mut rng = XorShift(0x5eed_5c1b);
        for case in 0..stress_cases(2000) {
            let rows = 1 + rng.below(5);
            let mut data = random_rows(&mut rng, rows, case % 7, case % 2 == 0);
            match case % 4 {
                0 => data.truncate(rng.below(data.len() + 1)),
                1 => {
                    let at = rng.below(data.len());
                    data[at] = rng.next() as u8;
                }
                2 => {
                    data = crate::testutil::byte_soup(
                        case as u64,
                        1 + case % 40,
                        &[
                            0xc4, 0xd9, 0xdc, 0x81, 0x92, 0xa3, 0xcb, 0x05, 0xc1, 0xd4, 0xff, 0x00,
                        ],
                    )
                }
                _ => {}
            }
            let mut fast = Cursor {
                data: &data,
                pos: 0,
            };
            let mut slow = Cursor {
                data: &data,
                pos: 0,
            };
            loop {
                let (a, b) = (fast.skip_value(), slow.skip_value_by_heads());
                assert_eq!(a, b, "case {case} on {data:02x?}");
                assert_eq!(fast.pos, slow.pos, "case {case} on {data:02x?}");
                if a.is_err() || fast.pos >= data.len() {
                    break;
                }
            }
        }
    }

    /// Strings are written as `serde_json` writes them, with and without escapes.
    #[test]
    fn json_strings_match_serde_json() {
        let texts = [
            "",
            "plain",
            "a\"b",
            "back\\slash",
            "tab\t",
            "nl\n",
            "\u{0}",
            "\u{1f}",
            "\u{7f}",
            "caf\u{e9}",
            "\u{65e5}\u{672c}",
            "\u{1f600}",
            " ~",
            "/",
        ];
        for t in texts {
            let mut out = Vec::new();
            json_string(&mut out, t);
            match serde_json::to_vec(t) {
                Ok(want) => assert_eq!(out, want, "{t:?}"),
                Err(e) => panic!("serde_json on {t:?}: {e}"),
            }
        }
    }

    /// `rows` random maps of up to six names (`c0`..), each name's values mostly of one
    /// kind (`shift` moves the kinds); with `nested`, some are arrays and maps.
    pub(super) fn random_rows(
        rng: &mut XorShift,
        rows: usize,
        shift: usize,
        nested: bool,
    ) -> Vec<u8> {
        let mut data = Vec::new();
        let names = 1 + rng.below(6);
        for _ in 0..rows {
            let n = 1 + rng.below(names);
            put(encode::write_map_len(&mut data, n as u32));
            // Distinct names in a row, in a rotated order.
            let first = rng.below(names);
            for k in 0..n {
                let name = (k + first) % names;
                put(encode::write_str(&mut data, &format!("c{name}")));
                // Depth 3 takes no arrays nor maps.
                value(&mut data, rng, name + shift, if nested { 0 } else { 3 });
            }
        }
        data
    }

    /// The walk over transcoded rows agrees with arrow-json's inference over `serde_json`
    /// values and with statistics from decoding, or leaves the file to it: same schema, same
    /// statistics, same error, for every wanted set of columns.
    #[test]
    fn nested_files_agree_with_the_reference() {
        let path = Path::new("nested.msgpack");
        let mut rng = XorShift(0x5eed_2026);
        let wanted = [
            StatsColumns::All,
            StatsColumns::None,
            StatsColumns::Only(vec!["c1".into(), "c4".into()]),
        ];
        let mut agreed = 0;
        for case in 0..stress_cases(300) {
            let rows = 1 + rng.below(30);
            let data = random_rows(&mut rng, rows, case % 3, true);
            for w in &wanted {
                let fast = nested_schema_and_stats(path, &data, 0, rows as u64, w);
                let slow = slow_schema_and_stats(path, &data, 0, rows as u64, w);
                match (fast, slow) {
                    (Ok(f), Ok(s)) => {
                        assert_eq!(f, s, "case {case}, {w:?}");
                        agreed += 1;
                    }
                    (Err(f), Err(s)) => assert_eq!(f.to_string(), s.to_string(), "case {case}"),
                    (f, s) => {
                        panic!("case {case}, {w:?}: the walk gives {f:?}, the reference {s:?}")
                    }
                }
            }
        }
        // Most cases must reach the comparison of results, not only of errors.
        assert!(
            agreed > stress_cases(300),
            "only {agreed} cases agreed on a result"
        );
    }

    #[test]
    fn heads_and_truncation() {
        let mut c = Cursor {
            data: &[0x81, 0xa1, b'a', 0xcd, 0x01, 0x00, 0xd0, 0xff, 0xda, 0x00],
            pos: 0,
        };
        assert_eq!(c.head().unwrap(), Head::Map(1));
        assert_eq!(c.head().unwrap(), Head::Str(b"a"));
        assert_eq!(c.head().unwrap(), Head::Int(256));
        assert_eq!(c.head().unwrap(), Head::Int(-1));
        let err = c.head().unwrap_err();
        assert_eq!(err.at, 9);
        let mut big = Cursor {
            data: &[0xdd, 0xff, 0xff, 0xff, 0xff, 0x01],
            pos: 0,
        };
        assert!(big.skip_value().is_err());
    }
}
