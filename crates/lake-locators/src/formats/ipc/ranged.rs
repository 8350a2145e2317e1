//! The index of an Arrow IPC file that is not on this machine (an object in a bucket), read by
//! ranges through a [`RangeRead`]:
//!
//! 1. the footer: the last [`TAIL`] bytes in one request (plus the rest of the footer when it
//!    is longer) and the magic at the start;
//! 2. the record batches' message headers (row counts): one request per run of headers at
//!    most [`HEADER_GAP`] apart, [`IN_FLIGHT`] requests at a time;
//! 3. with statistics on (the default): the buffers of the wanted columns (Int64, Float64,
//!    Utf8, LargeUtf8: see [`super::stats`]) of every batch, and the dictionaries, in
//!    requests of at most [`RUN`] bytes over ranges at most [`BODY_GAP`] apart. When every
//!    column is wanted, steps 2 and 3 are one: whole batches are fetched.
//!
//! The index is the one `index` makes of the local file: the same footer and header checks
//! (the code of [`super`] over the fetched parts, [`Src::Parts`]), the same decoder for the
//! statistics. A batch whose buffers do not match its schema's layout is fetched whole.

use std::collections::VecDeque;
use std::ops::Range;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::FileDecoder;
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;

use super::header::batch_header_rows;
use super::{
    FILE_FORMAT, FooterBlock, MessageWalker, Src, batch_rows, check_block, check_buffers_with, lib,
    read_footer,
};
use crate::error::{Error, Result};
use crate::locator::bytes::RangeRead;
use crate::locator::{Block, FileIndex, IndexOptions};
use crate::stats::StatsBuilder;

/// Bytes of the first request, from the end of the file: the footer of a file of about 600
/// batches (24 bytes a batch, plus the schema).
pub(super) const TAIL: u64 = 16 * 1024;

/// Message headers at most this far apart are fetched in one request.
const HEADER_GAP: u64 = 4 * 1024;

/// Buffers (and batches) at most this far apart are fetched in one request.
const BODY_GAP: u64 = 64 * 1024;

/// The most bytes one request fetches (and so what one part held in memory weighs).
const RUN: u64 = 8 << 20;

/// Requests in flight at once.
const IN_FLIGHT: usize = 8;

/// The bytes `offset..end` of the fetched `parts` (sorted by offset), when one part holds
/// them all.
pub(super) fn part(parts: &[(u64, Bytes)], offset: u64, end: u64) -> Option<&[u8]> {
    if offset >= end {
        return Some(&[]);
    }
    let i = parts.partition_point(|(start, _)| *start <= offset);
    parts[..i].iter().rev().find_map(|(start, b)| {
        let s = usize::try_from(offset - start).ok()?;
        let e = usize::try_from(end.checked_sub(*start)?).ok()?;
        b.get(s..e)
    })
}

/// The error of a read of bytes that were not fetched (a range the fetch plan missed).
pub(super) fn not_fetched(path: &Path, offset: u64, end: u64) -> Error {
    Error::io(
        path,
        std::io::Error::other(format!(
            "bytes {offset}..{end} of the file were not fetched"
        )),
    )
}

/// Fetches `range`, checking that all of it arrived.
fn fetch(path: &Path, read: &RangeRead, range: Range<u64>) -> Result<Bytes> {
    let want = range.end - range.start;
    let got = read(range.clone()).map_err(|e| Error::io(path, e))?;
    if got.len() as u64 != want {
        return Err(Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "range {}..{}: {} of {want} bytes arrived",
                    range.start,
                    range.end,
                    got.len()
                ),
            ),
        ));
    }
    Ok(got)
}

/// `ranges` (any order) merged into requests: ranges at most `gap` apart join while the
/// request stays within [`RUN`] bytes (a larger range is a request of its own). Sorted.
fn coalesce(mut ranges: Vec<Range<u64>>, gap: u64) -> Vec<Range<u64>> {
    ranges.retain(|r| r.start < r.end);
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in ranges {
        if let Some(last) = out.last_mut()
            && r.start <= last.end.saturating_add(gap)
            && r.end.max(last.end) - last.start <= RUN
        {
            last.end = last.end.max(r.end);
            continue;
        }
        out.push(r);
    }
    out
}

/// A remote file and the parts of it already fetched (its tail and magic).
struct Remote<'a> {
    path: &'a Path,
    read: &'a RangeRead,
    size: u64,
    have: Vec<(u64, Bytes)>,
}

/// Fetches `requests`, [`IN_FLIGHT`] at a time, as parts in the same order; a request that
/// the parts already fetched hold is served from them.
fn fetch_all(remote: &Remote<'_>, requests: &[Range<u64>]) -> Result<Vec<(u64, Bytes)>> {
    let (path, read) = (remote.path, remote.read);
    let held = |r: &Range<u64>| {
        remote.have.iter().find_map(|(start, b)| {
            let s = usize::try_from(r.start.checked_sub(*start)?).ok()?;
            let e = usize::try_from(r.end - start).ok()?;
            (e <= b.len()).then(|| b.slice(s..e))
        })
    };
    if requests.iter().all(|r| held(r).is_some()) || requests.len() <= 1 {
        return requests
            .iter()
            .map(|r| match held(r) {
                Some(b) => Ok((r.start, b)),
                None => Ok((r.start, fetch(path, read, r.clone())?)),
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let got: Mutex<Vec<Option<Result<Bytes>>>> =
        Mutex::new((0..requests.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..IN_FLIGHT.min(requests.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(r) = requests.get(i) else { break };
                    let bytes = match held(r) {
                        Some(b) => Ok(b),
                        None => fetch(path, read, r.clone()),
                    };
                    let failed = bytes.is_err();
                    if let Ok(mut slots) = got.lock() {
                        slots[i] = Some(bytes);
                    }
                    if failed {
                        // The others stop taking requests: the first error is returned.
                        next.store(requests.len(), Ordering::Relaxed);
                        break;
                    }
                }
            });
        }
    });
    let slots = got.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::with_capacity(requests.len());
    for (r, slot) in requests.iter().zip(slots) {
        match slot {
            Some(bytes) => out.push((r.start, bytes?)),
            None => {
                // Left when another request failed; that error comes first in order or here.
                return Err(Error::io(
                    path,
                    std::io::Error::other("a request of the same file failed"),
                ));
            }
        }
    }
    Ok(out)
}

/// Fetches `requests` window by window (about [`IN_FLIGHT`] requests of at most [`RUN`]
/// bytes each), calling `each` with the parts of every window: what is held in memory is one
/// window, whatever the file's size.
fn fetch_windows(
    remote: &Remote<'_>,
    requests: &[Range<u64>],
    mut each: impl FnMut(&[(u64, Bytes)]) -> Result<()>,
) -> Result<()> {
    for window in requests.chunks(IN_FLIGHT) {
        let parts = fetch_all(remote, window)?;
        each(&parts)?;
    }
    Ok(())
}

/// The footer of the file: the last `tail` bytes, the rest of the footer when it starts
/// before them, and the first 6 bytes (the magic).
fn footer(
    path: &Path,
    read: &RangeRead,
    size: u64,
    tail: u64,
) -> Result<(super::Footer, Vec<(u64, Bytes)>)> {
    let n = size.min(tail.max(10));
    if size < 18 {
        // Refused by `read_footer` before it reads anything.
        return Ok((read_footer(path, Src::Parts(&[]), size)?, Vec::new()));
    }
    let mut tail = fetch(path, read, size - n..size)?;
    let mut tail_start = size - n;
    // The footer length, in the 10 bytes before the end (checked again by `read_footer`).
    let at = (n - 10) as usize;
    let l = i32::from_le_bytes([tail[at], tail[at + 1], tail[at + 2], tail[at + 3]]);
    if let Ok(l) = u64::try_from(l)
        && l <= size - 18
        && size - 10 - l < tail_start
    {
        let start = size - 10 - l;
        let head = fetch(path, read, start..tail_start)?;
        let mut joined = Vec::with_capacity(head.len() + tail.len());
        joined.extend_from_slice(&head);
        joined.extend_from_slice(&tail);
        tail = Bytes::from(joined);
        tail_start = start;
    }
    let mut parts = Vec::new();
    if tail_start > 0 {
        parts.push((0, fetch(path, read, 0..size.min(6))?));
    }
    parts.push((tail_start, tail));
    Ok((read_footer(path, Src::Parts(&parts), size)?, parts))
}

/// [`crate::Locator::index_ranged`] of the Arrow IPC file format (see the module).
pub(super) fn index(
    path: &Path,
    size: u64,
    read: &RangeRead,
    options: &IndexOptions,
) -> Result<FileIndex> {
    index_with_tail(path, size, read, options, TAIL)
}

/// [`index`] with a first request of the last `tail` bytes (tests use a few bytes, so that
/// small files are read in many parts).
fn index_with_tail(
    path: &Path,
    size: u64,
    read: &RangeRead,
    options: &IndexOptions,
    tail: u64,
) -> Result<FileIndex> {
    let (footer, have) = footer(path, read, size, tail)?;
    let remote = Remote {
        path,
        read,
        size,
        have,
    };
    let schema = footer.schema.clone();
    let cols = if options.stats.is_none() {
        Vec::new()
    } else {
        super::stats::stats_projection(&schema, &options.stats)
    };
    let whole = !cols.is_empty() && cols.len() == schema.fields().len();
    let (mut blocks, stats) = if whole {
        whole_batches(&remote, &footer, &cols, options)?
    } else {
        let requests = coalesce(
            footer
                .blocks
                .iter()
                .map(|b| b.offset..b.offset + b.meta_len)
                .collect(),
            HEADER_GAP,
        );
        let headers = fetch_all(&remote, &requests)?;
        let blocks = batch_rows(path, Src::Parts(&headers), size, &schema, &footer.blocks)?;
        let stats = if options.stats.is_none() {
            None
        } else if cols.is_empty() {
            Some(Default::default())
        } else {
            Some(column_stats(&remote, &footer, &headers, &cols, options)?)
        };
        (blocks, stats)
    };
    super::header::place_batches(&mut blocks, &footer);
    let row_count = blocks.last().map_or(0, |b| b.first_row + b.row_count);
    Ok(FileIndex {
        format: FILE_FORMAT.into(),
        row_count,
        blocks,
        schema,
        stats,
    })
}

/// The decoder of the statistics columns `cols`, with the file's dictionaries read (fetched
/// and checked as the local index checks them), and the builder of their statistics.
fn decoder(
    remote: &Remote<'_>,
    footer: &super::Footer,
    cols: &[usize],
    options: &IndexOptions,
) -> Result<(FileDecoder, StatsBuilder)> {
    let (path, schema) = (remote.path, &footer.schema);
    let projected = schema
        .project(cols)
        .map_err(|e| Error::Schema(e.to_string()))?;
    let mut decoder =
        FileDecoder::new(schema.clone(), footer.version).with_projection(cols.to_vec());
    if !footer.dictionaries.is_empty() {
        let requests = coalesce(
            footer
                .dictionaries
                .iter()
                .map(|b| b.offset..b.offset + b.meta_len + b.body_len)
                .collect(),
            BODY_GAP,
        );
        let parts = fetch_all(remote, &requests)?;
        footer.check(remote.path, Src::Parts(&parts), remote.size, 0..0)?;
        for b in &footer.dictionaries {
            let (block, data) = message(path, &parts, b)?;
            decoder
                .read_dictionary(&block, &data)
                .map_err(|e| lib(path, FILE_FORMAT, e))?;
        }
    }
    Ok((decoder, StatsBuilder::new(&projected, &options.stats)))
}

/// The IPC block and the message bytes of footer block `b`, from fetched parts.
fn message(
    path: &Path,
    parts: &[(u64, Bytes)],
    b: &FooterBlock,
) -> Result<(arrow_ipc::Block, Buffer)> {
    let end = b.offset + b.meta_len + b.body_len;
    let data = part(parts, b.offset, end).ok_or_else(|| not_fetched(path, b.offset, end))?;
    let block = arrow_ipc::Block::new(b.offset as i64, b.meta_len as i32, b.body_len as i64);
    Ok((block, Buffer::from(data.to_vec())))
}

fn update(
    path: &Path,
    builder: &mut StatsBuilder,
    batch: Result<Option<RecordBatch>, arrow_schema::ArrowError>,
) -> Result<()> {
    if let Some(batch) = batch.map_err(|e| lib(path, FILE_FORMAT, e))? {
        builder.update(&batch);
    }
    Ok(())
}

/// Every column is wanted: the batches are fetched whole (in file order, window by window),
/// their row counts read from the fetched headers and their statistics decoded.
fn whole_batches(
    remote: &Remote<'_>,
    footer: &super::Footer,
    cols: &[usize],
    options: &IndexOptions,
) -> Result<(Vec<Block>, Option<crate::locator::Stats>)> {
    let (path, size) = (remote.path, remote.size);
    let (decoder, mut builder) = decoder(remote, footer, cols, options)?;
    let requests = coalesce(
        footer
            .blocks
            .iter()
            .map(|b| b.offset..b.offset + b.meta_len + b.body_len)
            .collect(),
        BODY_GAP,
    );
    // Each batch lies in one request (ranges are only ever joined): the batches of a window
    // are those starting in it.
    let mut order: Vec<usize> = (0..footer.blocks.len()).collect();
    order.sort_by_key(|&i| footer.blocks[i].offset);
    let mut rows = vec![0u64; footer.blocks.len()];
    let mut next = 0;
    fetch_windows(remote, &requests, |parts| {
        let end = parts.last().map_or(0, |(s, b)| s + b.len() as u64);
        while let Some(&i) = order.get(next) {
            let b = &footer.blocks[i];
            if b.offset >= end {
                break;
            }
            let src = Src::Parts(parts);
            rows[i] = batch_header_rows(path, src, size, &footer.schema, b, i)?;
            check_block(path, src, size, b).map_err(|e| e.in_block(i as u64))?;
            let (block, data) = message(path, parts, b)?;
            update(path, &mut builder, decoder.read_record_batch(&block, &data))?;
            next += 1;
        }
        Ok(())
    })?;
    let mut blocks = Vec::with_capacity(rows.len());
    let mut first_row = 0u64;
    for (i, n) in rows.into_iter().enumerate() {
        blocks.push(Block::rows(i as u64, first_row, n));
        first_row = first_row.checked_add(n).ok_or_else(|| {
            Error::malformed(path, FILE_FORMAT, "record batch row counts overflow")
                .in_block(i as u64)
        })?;
    }
    Ok((blocks, Some(builder.finish())))
}

/// Buffers of one field and its children in a record batch message, as arrow-ipc's reader
/// takes them (`variadic` holds the message's variadic buffer counts, taken in field order);
/// `None` for a type whose layout is not followed here.
fn buffer_count(
    field: &Field,
    version: arrow_ipc::MetadataVersion,
    variadic: &mut VecDeque<i64>,
) -> Option<usize> {
    use DataType::*;
    let children = |fields: &mut dyn Iterator<Item = &Field>, variadic: &mut VecDeque<i64>| {
        let mut n = 0;
        for f in fields {
            n += buffer_count(f, version, variadic)?;
        }
        Some(n)
    };
    Some(match field.data_type() {
        Null => 0,
        Boolean
        | Int8
        | Int16
        | Int32
        | Int64
        | UInt8
        | UInt16
        | UInt32
        | UInt64
        | Float16
        | Float32
        | Float64
        | Timestamp(_, _)
        | Date32
        | Date64
        | Time32(_)
        | Time64(_)
        | Duration(_)
        | Interval(_)
        | Decimal32(_, _)
        | Decimal64(_, _)
        | Decimal128(_, _)
        | Decimal256(_, _)
        | FixedSizeBinary(_)
        | Dictionary(_, _) => 2,
        Utf8 | Binary | LargeBinary | LargeUtf8 => 3,
        Utf8View | BinaryView => 2 + usize::try_from(variadic.pop_front()?).ok()?,
        List(f) | LargeList(f) | Map(f, _) => 2 + buffer_count(f, version, variadic)?,
        ListView(f) | LargeListView(f) => 3 + buffer_count(f, version, variadic)?,
        FixedSizeList(f, _) => 1 + buffer_count(f, version, variadic)?,
        Struct(fields) => 1 + children(&mut fields.iter().map(|f| f.as_ref()), variadic)?,
        RunEndEncoded(a, b) => children(&mut [a.as_ref(), b.as_ref()].into_iter(), variadic)?,
        Union(fields, mode) => {
            let own = usize::from(version < arrow_ipc::MetadataVersion::V5)
                + 1
                + usize::from(*mode == arrow_schema::UnionMode::Dense);
            own + children(&mut fields.iter().map(|(_, f)| f.as_ref()), variadic)?
        }
    })
}

/// The body ranges (relative to the body) that the decoder of columns `cols` reads from a
/// record batch message (`meta`, its flatbuffer), or `None` when its buffers do not follow
/// `schema`'s layout (the whole body is then fetched).
fn wanted_buffers(schema: &Schema, cols: &[usize], meta: &[u8]) -> Option<Vec<Range<u64>>> {
    let message = arrow_ipc::root_as_message(meta).ok()?;
    let batch = message.header_as_record_batch()?;
    let buffers: Vec<_> = batch.buffers()?.iter().collect();
    let mut variadic: VecDeque<i64> = batch
        .variadicBufferCounts()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let mut at = 0;
    let mut out = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        let n = buffer_count(field, message.version(), &mut variadic)?;
        if cols.contains(&i) {
            for b in buffers.get(at..at + n)? {
                let start = u64::try_from(b.offset()).ok()?;
                let end = start.checked_add(u64::try_from(b.length()).ok()?)?;
                out.push(start..end);
            }
        }
        at += n;
    }
    (at == buffers.len()).then_some(out)
}

/// Statistics of columns `cols` (not all of the file's): from each batch, only the buffers
/// of those columns are fetched, decoded from a message whose other buffers are left zero
/// (the decoder skips them without reading).
fn column_stats(
    remote: &Remote<'_>,
    footer: &super::Footer,
    headers: &[(u64, Bytes)],
    cols: &[usize],
    options: &IndexOptions,
) -> Result<crate::locator::Stats> {
    let (path, size) = (remote.path, remote.size);
    let (decoder, mut builder) = decoder(remote, footer, cols, options)?;
    // Per batch: its message (continuation, length, flatbuffer) and the absolute ranges of
    // the buffers to fetch.
    let mut plans = Vec::with_capacity(footer.blocks.len());
    for (i, b) in footer.blocks.iter().enumerate() {
        let mut walker = MessageWalker {
            path,
            format: FILE_FORMAT,
            src: Src::Parts(headers),
            len: size,
            at: b.offset,
        };
        let m = walker
            .next_message()?
            .ok_or_else(|| {
                Error::malformed(
                    path,
                    FILE_FORMAT,
                    "a footer block points at an end-of-stream marker",
                )
                .at_byte(b.offset)
            })
            .map_err(|e| e.in_block(i as u64))?;
        if m.total != b.meta_len + b.body_len {
            return Err(Error::malformed(
                path,
                FILE_FORMAT,
                format!(
                    "footer block says {} + {} bytes, the message at its offset has {}",
                    b.meta_len, b.body_len, m.total
                ),
            )
            .at_byte(b.offset)
            .in_block(i as u64));
        }
        let body = b.offset + b.meta_len;
        let ranges: Vec<Range<u64>> = match wanted_buffers(&footer.schema, cols, &m.meta) {
            // A buffer past the body is fetched up to the body's end: the decoder refuses it
            // as it refuses it in the local index.
            Some(r) => r
                .into_iter()
                .map(|r| body + r.start.min(b.body_len)..body + r.end.min(b.body_len))
                .collect(),
            None => std::iter::once(body..body + b.body_len).collect(),
        };
        let ranges: Vec<Range<u64>> = ranges.into_iter().filter(|r| r.start < r.end).collect();
        plans.push((m, ranges));
    }
    let requests = coalesce(
        plans.iter().flat_map(|(_, r)| r.iter().cloned()).collect(),
        BODY_GAP,
    );
    // Batches in the order of their last buffer; each window decodes those whose buffers
    // all lie in it or in parts kept from the window before.
    let mut order: Vec<usize> = (0..plans.len()).collect();
    let last_end = |i: usize| plans[i].1.iter().map(|r| r.end).max().unwrap_or(0);
    order.sort_by_key(|&i| last_end(i));
    let next = std::cell::Cell::new(0);
    let mut drain = |all: &[(u64, Bytes)], end: u64| -> Result<()> {
        while let Some(&i) = order.get(next.get()) {
            if last_end(i) > end {
                break;
            }
            let (m, ranges) = &plans[i];
            let b = &footer.blocks[i];
            let mut data = vec![0u8; (b.meta_len + b.body_len) as usize];
            let meta = part(headers, b.offset, b.offset + b.meta_len)
                .ok_or_else(|| not_fetched(path, b.offset, b.offset + b.meta_len))?;
            data[..meta.len()].copy_from_slice(meta);
            for r in ranges {
                let bytes =
                    part(all, r.start, r.end).ok_or_else(|| not_fetched(path, r.start, r.end))?;
                let s = (r.start - b.offset) as usize;
                data[s..s + bytes.len()].copy_from_slice(bytes);
            }
            // The compressed buffers that were fetched are checked as the local index checks
            // every buffer; the others are not decoded.
            check_buffers_with(path, FILE_FORMAT, m, |at| {
                let got = part(all, at, at + 8).and_then(|b| <[u8; 8]>::try_from(b).ok());
                Ok(got.unwrap_or([0; 8]))
            })
            .map_err(|e| e.in_block(i as u64))?;
            let block =
                arrow_ipc::Block::new(b.offset as i64, b.meta_len as i32, b.body_len as i64);
            let batch = decoder.read_record_batch(&block, &Buffer::from(data));
            update(path, &mut builder, batch).map_err(|e| e.in_block(i as u64))?;
            next.set(next.get() + 1);
        }
        Ok(())
    };
    // The parts that may hold buffers of a batch decoded with a later window (the batches of
    // a sound file do not overlap: the next one's buffers start after the others').
    let mut carry: Vec<(u64, Bytes)> = Vec::new();
    fetch_windows(remote, &requests, |parts| {
        let end = parts.last().map_or(0, |(s, b)| s + b.len() as u64);
        let mut all: Vec<(u64, Bytes)> = std::mem::take(&mut carry);
        all.extend(parts.iter().cloned());
        drain(&all, end)?;
        let first = order
            .get(next.get())
            .and_then(|&i| plans[i].1.iter().map(|r| r.start).min());
        if let Some(first) = first {
            carry = all
                .into_iter()
                .filter(|(s, b)| s + b.len() as u64 > first)
                .collect();
        }
        Ok(())
    })?;
    // Batches without a buffer to fetch, and any the plan missed (an error).
    drain(&carry, u64::MAX)?;
    Ok(builder.finish())
}

#[cfg(test)]
mod tests;
