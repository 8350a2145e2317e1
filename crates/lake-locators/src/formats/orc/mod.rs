//! The ORC locator: blocks are stripes, taken from the file footer through orc-rust's
//! `FileMetadata` (offset, index + data + footer lengths, row counts). Reads start at the
//! first touched stripe (orc-rust's file byte range selects stripes by start offset) with a
//! `RowSelection` that skips the rows before the range inside that stripe.
//!
//! orc-rust can panic or allocate from unchecked lengths on malformed files. Every byte range
//! it asks for goes through [`BoundedFile`], which refuses ranges past the end of the file
//! before allocating, and every call into it runs under [`columnar::guard`], which turns a
//! panic into a typed error. A file whose top-level type is not a struct (orc-rust asserts
//! on it) is recognised from its footer first ([`tail`]): counted from its stripes, read
//! refused.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use arrow_schema::SchemaRef;
use bytes::Bytes;
use orc_rust::ArrowReaderBuilder;
use orc_rust::projection::ProjectionMask;
use orc_rust::reader::ChunkReader;
use orc_rust::row_selection::{RowSelection, RowSelector};

use crate::columnar::{self, Projection, Trim};
use crate::error::{Error, Result};
use crate::locator::{BatchIter, Block, FileIndex, IndexOptions, Locator, ReadRequest};
use crate::stats::StatsBuilder;

mod ranged;
mod tail;

const FORMAT: &str = "orc";

/// Locator of ORC files (`.orc`).
#[derive(Debug, Clone, Copy, Default)]
pub struct OrcLocator;

/// A file whose every ranged read is checked against its length before allocating.
///
/// Files of the ORC 0.11 format (Hive 0.11, before the metadata section existed) have no
/// `metadataLength` in their postscript, which orc-rust requires; for them the file is seen
/// with that field appended to the postscript as 0 (a protobuf field may follow the others),
/// so the virtual file is the real one up to the postscript length byte, then `tail`.
#[derive(Debug)]
pub struct BoundedFile {
    file: File,
    /// The length of the file as orc-rust sees it.
    len: u64,
    /// Bytes that replace the file's last byte (the postscript length), when patched.
    tail: Option<Vec<u8>>,
}

impl BoundedFile {
    fn open(path: &Path) -> Result<Self> {
        let (mut file, len) = columnar::open(path)?;
        let tail = Self::metadata_length_patch(&mut file, len).map_err(|e| Error::io(path, e))?;
        let len = match &tail {
            Some(t) => len - 1 + t.len() as u64,
            None => len,
        };
        Ok(BoundedFile { file, len, tail })
    }

    /// The tail that gives a postscript without `metadataLength` (field 5) that field, or
    /// `None` when the postscript has it (or is not readable: orc-rust reports that).
    fn metadata_length_patch(file: &mut File, len: u64) -> std::io::Result<Option<Vec<u8>>> {
        if len < 2 {
            return Ok(None);
        }
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        let ps_len = u64::from(last[0]);
        if ps_len == 0 || ps_len + 1 > len || ps_len + 2 > 255 {
            return Ok(None);
        }
        let mut ps = vec![0u8; ps_len as usize];
        file.seek(SeekFrom::Start(len - 1 - ps_len))?;
        file.read_exact(&mut ps)?;
        Ok(patch_of_postscript(&ps))
    }

    /// The real file's length.
    fn real_len(&self) -> u64 {
        match &self.tail {
            Some(t) => self.len + 1 - t.len() as u64,
            None => self.len,
        }
    }
}

/// The tail that gives postscript `ps` (without its length byte) a `metadataLength` (field
/// 5) of 0, replacing the file's last byte, when it has none (see [`BoundedFile`]).
fn patch_of_postscript(ps: &[u8]) -> Option<Vec<u8>> {
    let ps_len = ps.len() as u64;
    if ps_len == 0 || ps_len + 2 > 255 {
        return None;
    }
    match tail::field_numbers(ps) {
        // Field 5 (metadataLength), varint 0; then the new postscript length.
        Some(fields) if fields.contains(&1) && !fields.contains(&5) => {
            Some(vec![0x28, 0x00, (ps_len + 2) as u8])
        }
        _ => None,
    }
}

impl ChunkReader for BoundedFile {
    type T = Box<dyn Read + Send>;

    fn len(&self) -> u64 {
        self.len
    }

    fn get_read(&self, offset_from_start: u64) -> std::io::Result<Self::T> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(offset_from_start))?;
        match &self.tail {
            None => Ok(Box::new(BufReader::new(file))),
            Some(tail) => {
                let real_end = self.real_len() - 1;
                let body = BufReader::new(file).take(real_end.saturating_sub(offset_from_start));
                let skip = offset_from_start.saturating_sub(real_end) as usize;
                let rest = tail.get(skip..).unwrap_or_default().to_vec();
                Ok(Box::new(body.chain(std::io::Cursor::new(rest))))
            }
        }
    }

    fn get_bytes(&self, offset_from_start: u64, length: u64) -> std::io::Result<Bytes> {
        if offset_from_start
            .checked_add(length)
            .is_none_or(|end| end > self.len)
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "range of {length} bytes at byte {offset_from_start} is past the end of the file ({} bytes)",
                    self.len
                ),
            ));
        }
        let mut buf = vec![0; length as usize];
        if self.tail.is_some() {
            self.get_read(offset_from_start)?.read_exact(&mut buf)?;
            return Ok(buf.into());
        }
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(offset_from_start))?;
        file.read_exact(&mut buf)?;
        Ok(buf.into())
    }
}

fn lib(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::library(path, FORMAT, e)
}

/// An opened file: read by orc-rust, or one whose top-level type is not a struct.
enum Opened<R = BoundedFile> {
    /// orc-rust's reader, the stripes as blocks and the Arrow schema.
    Orc(Box<ArrowReaderBuilder<R>>, Vec<Block>, SchemaRef),
    /// A top-level type that is not a struct (orc-rust asserts on it): counted from the
    /// stripes, one column `value`, reads refused.
    Bare {
        blocks: Vec<Block>,
        schema: SchemaRef,
        kind: u64,
    },
}

/// Opens the file and reads its footer; the stripes as blocks and the Arrow schema.
fn open(path: &Path) -> Result<Opened> {
    open_with(path, BoundedFile::open(path)?)
}

/// [`open`] over any reader of the file (a remote one: [`ranged`]).
fn open_with<R: ChunkReader>(path: &Path, file: R) -> Result<Opened<R>> {
    let len = file.len();
    columnar::guard(path, FORMAT, || {
        // orc-rust asserts that the root type is a struct: other roots are found first.
        if let Some(t) = tail::read_tail(&file).filter(|t| t.root_kind != tail::STRUCT) {
            let stripes = t.stripes.iter().map(|s| {
                let total = s
                    .index_length
                    .checked_add(s.data_length)
                    .and_then(|n| n.checked_add(s.footer_length));
                (s.offset, total, s.rows)
            });
            return Ok(Opened::Bare {
                blocks: stripe_blocks(path, len, stripes, t.rows)?,
                schema: bare_schema(&t),
                kind: t.root_kind,
            });
        }
        let builder = ArrowReaderBuilder::try_new(file).map_err(|e| lib(path, e))?;
        let meta = builder.file_metadata();
        let stripes = meta.stripe_metadatas().iter().map(|s| {
            let total = s
                .index_length()
                .checked_add(s.data_length())
                .and_then(|t| t.checked_add(s.footer_length()));
            (s.offset(), total, s.number_of_rows())
        });
        let blocks = stripe_blocks(path, len, stripes, meta.number_of_rows())?;
        let schema = builder.schema();
        Ok(Opened::Orc(Box::new(builder), blocks, schema))
    })
}

/// The stripes `(offset, index + data + footer length, rows)` as blocks, checked against the
/// file's length and the footer's row count.
fn stripe_blocks(
    path: &Path,
    len: u64,
    stripes: impl Iterator<Item = (u64, Option<u64>, u64)>,
    footer_rows: u64,
) -> Result<Vec<Block>> {
    let mut blocks = Vec::new();
    let mut first_row = 0u64;
    for (i, (offset, total, rows)) in stripes.enumerate() {
        let fits = total
            .and_then(|t| offset.checked_add(t))
            .is_some_and(|end| end <= len);
        let Some(total) = total.filter(|_| fits) else {
            return Err(Error::malformed(
                path,
                FORMAT,
                format!("stripe at byte {offset} runs past the end of the file ({len} bytes)"),
            )
            .at_byte(offset)
            .in_block(i as u64));
        };
        blocks.push(Block {
            ordinal: i as u64,
            first_row,
            row_count: rows,
            first_byte: Some(offset),
            total_byte_size: Some(total),
            compressed_size: None,
            columns: None,
            stats: None,
            fine: None,
        });
        first_row = first_row.checked_add(rows).ok_or_else(|| {
            Error::malformed(path, FORMAT, "stripe row counts overflow").in_block(i as u64)
        })?;
    }
    if first_row != footer_rows {
        return Err(Error::malformed(
            path,
            FORMAT,
            format!("the stripes hold {first_row} rows, the footer says {footer_rows}"),
        ));
    }
    Ok(blocks)
}

/// The schema of a file whose top-level type is not a struct: one column `value` of the
/// type's Arrow counterpart (Null for array, map and uniontype, whose parts are not followed).
fn bare_schema(t: &tail::Tail) -> SchemaRef {
    use arrow_schema::{DataType, Field, Schema, TimeUnit};
    let data_type = match t.root_kind {
        0 => DataType::Boolean,
        1 => DataType::Int8,
        2 => DataType::Int16,
        3 => DataType::Int32,
        4 => DataType::Int64,
        5 => DataType::Float32,
        6 => DataType::Float64,
        7 | 16 | 17 => DataType::Utf8,
        8 => DataType::Binary,
        9 => DataType::Timestamp(TimeUnit::Nanosecond, None),
        14 => {
            let p = t.precision.filter(|p| (1..=38).contains(p)).unwrap_or(38) as u8;
            let s = t.scale.unwrap_or(0).min(u64::from(p)) as i8;
            DataType::Decimal128(p, s)
        }
        15 => DataType::Date32,
        18 => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        _ => DataType::Null,
    };
    std::sync::Arc::new(Schema::new(vec![Field::new("value", data_type, true)]))
}

/// Why orc-rust cannot decode a column of type `t` in the file of `meta` (it would fail or
/// misread), or `None`. The file is still mapped and counted from its stripes; reads of the
/// other columns work.
fn unreadable(
    t: &orc_rust::schema::DataType,
    meta: &orc_rust::reader::metadata::FileMetadata,
) -> Option<String> {
    let orc_rust::schema::DataType::Decimal { precision, .. } = t else {
        return None;
    };
    if *precision == 0 {
        return Some(
            "a decimal without precision (ORC 0.11 / Hive 0.11) is not supported by orc-rust"
                .into(),
        );
    }
    // The pre-release ORC v2 ("UNSTABLE-PRE-2.0", version 1.9999) writes decimals of up to
    // 18 digits as DECIMAL64 in RLE v2, which orc-rust does not decode.
    if *precision <= 18 && meta.file_format_version() == "1.9999" {
        return Some(format!(
            "DECIMAL64 (RLE v2) decimals of precision {precision} are not supported by orc-rust"
        ));
    }
    None
}

/// The stripes' byte range that selects stripes `first..=last` (by their start offsets).
fn stripe_range(blocks: &[Block], touched: &std::ops::Range<usize>) -> std::ops::Range<usize> {
    let start = blocks[touched.start].first_byte.unwrap_or(0) as usize;
    let end = blocks[touched.end - 1].first_byte.unwrap_or(0) as usize + 1;
    start..end
}

impl Locator for OrcLocator {
    fn name(&self) -> &str {
        FORMAT
    }

    fn extensions(&self) -> &[&str] {
        &["orc"]
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout {
            head: true,
            tail: true,
            block_end: crate::BlockEnd::Total,
        })
    }

    fn formats(&self) -> &[&str] {
        &[FORMAT]
    }

    fn index_ranged(
        &self,
        path: &Path,
        size: u64,
        read: &crate::RangeRead,
        options: &IndexOptions,
    ) -> Option<Result<FileIndex>> {
        Some(ranged::index(path, size, read, options))
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        let (builder, blocks, schema) = match open(path)? {
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
        // Statistics decode every column: none for a file with columns orc-rust cannot read.
        let meta = builder.file_metadata();
        let any_unreadable = meta
            .root_data_type()
            .children()
            .iter()
            .any(|c| unreadable(c.data_type(), meta).is_some());
        let stats = if options.stats.is_none() || any_unreadable {
            None
        } else {
            let mut stats = StatsBuilder::new(&schema, &options.stats);
            if !stats.is_empty() && row_count > 0 {
                // The footer's column statistics are not used: writers may omit them (orc-rust
                // writes none) and string bounds may be truncated, so the data decides.
                columnar::guard(path, FORMAT, || {
                    let reader = builder
                        .with_batch_size(columnar::DEFAULT_BATCH_SIZE)
                        .build();
                    for batch in reader {
                        stats.update(&batch.map_err(|e| lib(path, e))?);
                    }
                    Ok(())
                })?;
            }
            Some(stats.finish())
        };
        Ok(FileIndex {
            format: FORMAT.into(),
            row_count,
            blocks,
            schema,
            stats,
        })
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        let (builder, file_blocks, schema) = match open(path)? {
            Opened::Orc(builder, blocks, schema) => (*builder, blocks, schema),
            Opened::Bare { blocks, kind, .. } => {
                let total = blocks.last().map_or(0, |b| b.first_row + b.row_count);
                if columnar::clamp_rows(&request.rows, total).is_empty() {
                    return Ok(columnar::empty());
                }
                return Err(Error::Unsupported {
                    path: path.to_path_buf(),
                    message: format!(
                        "ORC files whose top-level type is not a struct ({}) are not read: orc-rust reads only struct roots",
                        tail::kind_name(kind)
                    ),
                });
            }
        };
        let total = file_blocks.last().map_or(0, |b| b.first_row + b.row_count);
        if let Some(stored) = request.blocks {
            columnar::check_blocks(path, stored, total)?;
            let same = stored.len() == file_blocks.len()
                && stored
                    .iter()
                    .zip(&file_blocks)
                    .all(|(s, f)| s.row_count == f.row_count && s.first_byte == f.first_byte);
            if !same {
                return Err(Error::StaleIndex {
                    path: path.to_path_buf(),
                    message: "stored stripes differ from the file's".into(),
                });
            }
        }
        let projection = Projection::new(path, &schema, request.projection)?;
        let rows = columnar::clamp_rows(&request.rows, total);
        if rows.is_empty() {
            return Ok(columnar::empty());
        }
        let wanted: Vec<usize> = match &projection {
            Some(p) => p.decode.clone(),
            None => (0..schema.fields().len()).collect(),
        };
        for (i, c) in builder
            .file_metadata()
            .root_data_type()
            .children()
            .iter()
            .enumerate()
        {
            if let Some(why) = unreadable(c.data_type(), builder.file_metadata())
                && wanted.contains(&i)
            {
                return Err(Error::Unsupported {
                    path: path.to_path_buf(),
                    message: format!("ORC column {:?}: {why}", c.name()),
                });
            }
        }
        let touched = columnar::touched_blocks(&file_blocks, &rows);
        let first = &file_blocks[touched.start];
        let last = &file_blocks[touched.end - 1];
        let span_end = last.first_row + last.row_count;
        let mut selectors = Vec::with_capacity(3);
        if rows.start > first.first_row {
            selectors.push(RowSelector::skip((rows.start - first.first_row) as usize));
        }
        selectors.push(RowSelector::select((rows.end - rows.start) as usize));
        if span_end > rows.end {
            selectors.push(RowSelector::skip((span_end - rows.end) as usize));
        }
        let mut builder = builder
            .with_file_byte_range(stripe_range(&file_blocks, &touched))
            .with_row_selection(RowSelection::from(selectors))
            .with_batch_size(columnar::batch_size(request.batch_size));
        if let Some(p) = &projection {
            let names: Vec<&str> = p
                .decode
                .iter()
                .map(|&i| schema.field(i).name().as_str())
                .collect();
            let mask =
                ProjectionMask::named_roots(builder.file_metadata().root_data_type(), &names);
            builder = builder.with_projection(mask);
        }
        let reader = columnar::guard(path, FORMAT, || Ok(builder.build()))?;
        let owned = path.to_path_buf();
        let mut reader = reader;
        let batches = std::iter::from_fn(move || {
            let next = columnar::guard(&owned, FORMAT, || Ok(reader.next()));
            match next {
                Ok(Some(Ok(b))) => {
                    Some(columnar::reorder(projection.as_ref(), b).map_err(|e| lib(&owned, e)))
                }
                Ok(Some(Err(e))) => Some(Err(lib(&owned, e))),
                Ok(None) => None,
                Err(e) => Some(Err(e)),
            }
        });
        Ok(Box::new(Trim::new(batches, rows.start, rows)))
    }
}
