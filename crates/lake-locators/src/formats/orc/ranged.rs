//! The ORC index of a file that is not on this machine (an object in a bucket), read by
//! ranges: the file's tail (postscript, footer and metadata) in one request of its last
//! [`TAIL`] bytes, plus one more when the postscript says the footer and metadata are longer.
//! The stripes, row counts and schema then come from the same code as a local file's
//! ([`super::open_with`] over a [`RangedFile`]).
//!
//! Statistics: the local index decodes the data. Here a column's bounds come from the
//! footer's file statistics where those are exact and mean what the decoded values would
//! give: a `bigint` column's integer bounds, a `double` column's bounds when neither is NaN,
//! a `string` or `varchar` column's exact minimum and maximum (not truncated bounds) from a
//! writer at HIVE-8732 or later (whose merged string bounds are right), and a column of
//! values that are all null. Other wanted columns (no footer statistics, as orc-rust
//! writes, or `char`, or truncated bounds) are decoded, and only their streams are fetched.

use std::io::Read;
use std::path::Path;

use arrow_schema::DataType as ArrowType;
use bytes::{Bytes, BytesMut};
use orc_rust::projection::ProjectionMask;
use orc_rust::reader::ChunkReader;
use orc_rust::schema::DataType as OrcType;
use orc_rust::statistics::{ColumnStatistics, TypeStatistics};

use super::{FORMAT, Opened, lib, open_with, patch_of_postscript, tail, unreadable};
use crate::columnar;
use crate::error::{Error, Result};
use crate::locator::bytes::RangeRead;
use crate::locator::{ColumnStats, FileIndex, IndexOptions, Stats, repeated_names};
use crate::stats::StatsBuilder;

/// Bytes of the first request, from the end of the file (orc-rust's own first tail read).
pub(super) const TAIL: u64 = 16 * 1024;

/// The postscript's `writerVersion` from which merged string statistics are right
/// (HIVE-8732).
const HIVE_8732: u64 = 1;

/// A remote ORC file seen as orc-rust's [`ChunkReader`]: its tail is held in memory (read
/// once), every other range is fetched when asked for. Files without `metadataLength` in
/// their postscript are seen patched as [`super::BoundedFile`] sees them.
pub(super) struct RangedFile {
    read: RangeRead,
    /// The length of the file as orc-rust sees it (patched or not).
    len: u64,
    /// Where [`RangedFile::tail`] starts, in the file orc-rust sees.
    tail_start: u64,
    /// The last bytes of the file orc-rust sees.
    tail: Bytes,
    /// The postscript's `writerVersion` (0 when absent).
    writer_version: u64,
}

/// Fetches `range` of the real file, checking that it all arrived.
fn fetch(read: &RangeRead, range: std::ops::Range<u64>) -> std::io::Result<Bytes> {
    let want = range.end - range.start;
    let got = read(range.clone())?;
    if got.len() as u64 != want {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "range {}..{}: {} of {want} bytes arrived",
                range.start,
                range.end,
                got.len()
            ),
        ));
    }
    Ok(got)
}

impl RangedFile {
    /// Reads the tail of the real file of `size` bytes: the last [`TAIL`] bytes, then the rest
    /// of the footer and metadata when the postscript says they start before them.
    pub(super) fn open(path: &Path, read: &RangeRead, size: u64) -> Result<Self> {
        let n = size.min(TAIL);
        let real = fetch(read, size - n..size).map_err(|e| Error::io(path, e))?;
        let mut file = RangedFile {
            read: read.clone(),
            len: size,
            tail_start: size - n,
            tail: real.clone(),
            writer_version: 0,
        };
        let Some((&ps_len, body)) = real.split_last() else {
            return Ok(file);
        };
        let Some(ps) = body
            .len()
            .checked_sub(usize::from(ps_len))
            .and_then(|start| body.get(start..))
        else {
            return Ok(file);
        };
        let (mut footer_len, mut metadata_len) = (0u64, 0u64);
        for (field, v) in tail::fields(ps).unwrap_or_default() {
            match (field, v) {
                (1, tail::Val::Int(v)) => footer_len = v,
                (5, tail::Val::Int(v)) => metadata_len = v,
                (6, tail::Val::Int(v)) => file.writer_version = v,
                _ => {}
            }
        }
        if let Some(patch) = patch_of_postscript(ps) {
            let mut t = BytesMut::from(body);
            t.extend_from_slice(&patch);
            file.len = size - 1 + patch.len() as u64;
            file.tail = t.freeze();
        }
        // The footer and metadata, when they start before the bytes read: one more request.
        let need = footer_len
            .checked_add(metadata_len)
            .and_then(|l| l.checked_add(u64::from(ps_len) + 1));
        if let Some(start) = need.and_then(|need| size.checked_sub(need))
            && start < file.tail_start
        {
            let head = fetch(read, start..file.tail_start).map_err(|e| Error::io(path, e))?;
            let mut t = BytesMut::from(&head[..]);
            t.extend_from_slice(&file.tail);
            file.tail = t.freeze();
            file.tail_start = start;
        }
        Ok(file)
    }

    /// The bytes `offset..offset + length` of the file orc-rust sees.
    fn bytes(&self, offset: u64, length: u64) -> std::io::Result<Bytes> {
        let end = offset.checked_add(length).filter(|&e| e <= self.len);
        let Some(end) = end else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "range of {length} bytes at byte {offset} is past the end of the file ({} bytes)",
                    self.len
                ),
            ));
        };
        if offset >= self.tail_start {
            let s = (offset - self.tail_start) as usize;
            return Ok(self.tail.slice(s..s + length as usize));
        }
        if end <= self.tail_start {
            return fetch(&self.read, offset..end);
        }
        // Straddles the start of the tail (which begins inside the real file's bytes).
        let mut out = BytesMut::from(&fetch(&self.read, offset..self.tail_start)?[..]);
        out.extend_from_slice(&self.tail[..(end - self.tail_start) as usize]);
        Ok(out.freeze())
    }
}

impl ChunkReader for RangedFile {
    type T = Box<dyn Read + Send>;

    fn len(&self) -> u64 {
        self.len
    }

    fn get_read(&self, offset_from_start: u64) -> std::io::Result<Self::T> {
        let rest = self.len.saturating_sub(offset_from_start);
        let bytes = self.bytes(offset_from_start, rest)?;
        Ok(Box::new(std::io::Cursor::new(bytes)))
    }

    fn get_bytes(&self, offset_from_start: u64, length: u64) -> std::io::Result<Bytes> {
        self.bytes(offset_from_start, length)
    }
}

/// What the footer's statistics of one column say: its bounds, that it has no non-null
/// value, or nothing to trust (the column is decoded).
enum FromFooter {
    Bounds(ColumnStats),
    NoValues,
    Decode,
}

/// The statistics of a wanted column of Arrow type `arrow`, ORC type `orc`, from its file
/// statistics `stats` (see the module's rules).
fn from_footer(
    arrow: &ArrowType,
    orc: &OrcType,
    stats: Option<&ColumnStatistics>,
    writer_version: u64,
) -> FromFooter {
    let Some(stats) = stats else {
        return FromFooter::Decode;
    };
    if stats.number_of_values() == 0 {
        // A writer that counts values and saw nulls only; a zero without `hasNull` may be a
        // writer that counts nothing.
        return if stats.has_null() {
            FromFooter::NoValues
        } else {
            FromFooter::Decode
        };
    }
    match (arrow, orc, stats.type_statistics()) {
        (
            ArrowType::Int64,
            OrcType::Long { .. },
            Some(TypeStatistics::Integer { min, max, .. }),
        ) => FromFooter::Bounds(ColumnStats::Int {
            min: *min,
            max: *max,
        }),
        (
            ArrowType::Float64,
            OrcType::Double { .. },
            Some(TypeStatistics::Double { min, max, .. }),
        ) if !min.is_nan() && !max.is_nan() && min <= max => {
            FromFooter::Bounds(ColumnStats::float(*min, *max))
        }
        (
            ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View,
            OrcType::String { .. } | OrcType::Varchar { .. },
            Some(TypeStatistics::String {
                lower_bound,
                upper_bound,
                is_exact_min: true,
                is_exact_max: true,
                ..
            }),
        ) if writer_version >= HIVE_8732 && lower_bound <= upper_bound => {
            FromFooter::Bounds(ColumnStats::Str {
                min_str: lower_bound.clone(),
                max_str: upper_bound.clone(),
            })
        }
        _ => FromFooter::Decode,
    }
}

/// [`crate::Locator::index_ranged`] of ORC: the index [`super::OrcLocator`]'s `index` makes
/// of the same bytes, from the tail (and the streams of the columns whose statistics the
/// footer cannot give).
pub(super) fn index(
    path: &Path,
    size: u64,
    read: &RangeRead,
    options: &IndexOptions,
) -> Result<FileIndex> {
    let file = RangedFile::open(path, read, size)?;
    let writer_version = file.writer_version;
    let (builder, blocks, schema) = match open_with(path, file)? {
        Opened::Orc(builder, blocks, schema) => (*builder, blocks, schema),
        Opened::Bare { blocks, schema, .. } => {
            return Ok(FileIndex {
                format: FORMAT.into(),
                row_count: blocks.last().map_or(0, |b| b.first_row + b.row_count),
                blocks,
                schema,
                stats: None,
            });
        }
    };
    let row_count = blocks.last().map_or(0, |b| b.first_row + b.row_count);
    let meta = builder.file_metadata();
    let columns = meta.root_data_type().children();
    let any_unreadable = columns
        .iter()
        .any(|c| unreadable(c.data_type(), meta).is_some());
    if options.stats.is_none() || any_unreadable {
        return Ok(FileIndex {
            format: FORMAT.into(),
            row_count,
            blocks,
            schema,
            stats: None,
        });
    }
    let mut stats = Stats::new();
    let mut decode = Vec::new();
    if row_count > 0 {
        let repeated = repeated_names(schema.fields().iter().map(|f| f.name().as_str()));
        let file_stats = meta.column_file_statistics();
        for (i, field) in schema.fields().iter().enumerate() {
            let name = field.name();
            let eligible = matches!(
                field.data_type(),
                ArrowType::Int64
                    | ArrowType::Float64
                    | ArrowType::Utf8
                    | ArrowType::LargeUtf8
                    | ArrowType::Utf8View
            );
            if !eligible || !options.stats.wants(name) || repeated.contains(name.as_str()) {
                continue;
            }
            // The Arrow schema has one field per child of the root, in order.
            let said = match columns.get(i).filter(|c| c.name() == name) {
                Some(c) => from_footer(
                    field.data_type(),
                    c.data_type(),
                    file_stats.get(c.data_type().column_index()),
                    writer_version,
                ),
                None => FromFooter::Decode,
            };
            match said {
                FromFooter::Bounds(s) => {
                    stats.insert(name.clone(), s);
                }
                FromFooter::NoValues => {}
                FromFooter::Decode => decode.push(i),
            }
        }
    }
    if !decode.is_empty() {
        let projected = schema
            .project(&decode)
            .map_err(|e| Error::Schema(e.to_string()))?;
        let names: Vec<&str> = projected
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        let mask = ProjectionMask::named_roots(meta.root_data_type(), &names);
        let mut decoded = StatsBuilder::new(&projected, &options.stats);
        // Only the projected columns' streams are fetched, stripe by stripe.
        columnar::guard(path, FORMAT, || {
            let reader = builder
                .with_projection(mask)
                .with_batch_size(columnar::DEFAULT_BATCH_SIZE)
                .build();
            for batch in reader {
                decoded.update(&batch.map_err(|e| lib(path, e))?);
            }
            Ok(())
        })?;
        stats.extend(decoded.finish());
    }
    Ok(FileIndex {
        format: FORMAT.into(),
        row_count,
        blocks,
        schema,
        stats: Some(stats),
    })
}

#[cfg(test)]
mod tests;
