//! Pieces shared by the reads of the checkpointed row formats (delimited, JSON, MsgPack,
//! XLSX): choosing the checkpoint to start from, resolving a projection, and decoding JSON
//! text with arrow-json under a stored schema.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::columnar::resolve_projection;
use crate::error::{Error, Result};
use crate::locator::{Block, FileIndex, IndexOptions, StatsColumns};

/// The schema and blocks a read works with: the stored schema of an earlier index (the
/// caller's blocks then apply), or, for a direct read, a fresh index of the whole file without
/// statistics, so that a direct read infers exactly what an index would.
pub(crate) fn schema_for_read(
    stored: Option<&SchemaRef>,
    index: impl FnOnce(&IndexOptions) -> Result<FileIndex>,
) -> Result<(SchemaRef, Option<Vec<Block>>)> {
    match stored {
        Some(schema) => Ok((schema.clone(), None)),
        None => {
            let options = IndexOptions {
                stats: StatsColumns::None,
                ..IndexOptions::default()
            };
            let index = index(&options)?;
            Ok((index.schema, Some(index.blocks)))
        }
    }
}

/// Rejects a zero stride (every format needs at least one row per checkpoint).
pub(crate) fn check_stride(path: &Path, options: &IndexOptions) -> Result<()> {
    if options.stride == 0 {
        return Err(Error::Unsupported {
            path: path.to_path_buf(),
            message: "the checkpoint stride must be at least 1 row".into(),
        });
    }
    Ok(())
}

/// The checkpoint to start a read of local row `row` from: `(first_byte, first_row)` of the
/// last block starting at or before `row`, or `None` when there are no blocks (read from the
/// start). A block whose byte lies past the end of the file means the index is stale.
pub(crate) fn start_block(
    path: &Path,
    blocks: Option<&[Block]>,
    row: u64,
    len: usize,
) -> Result<Option<(usize, u64)>> {
    let Some(blocks) = blocks else {
        return Ok(None);
    };
    let i = blocks.partition_point(|b| b.first_row <= row);
    let Some(block) = i.checked_sub(1).and_then(|i| blocks.get(i)) else {
        return Ok(None);
    };
    let first = block.first_byte.ok_or_else(|| Error::StaleIndex {
        path: path.to_path_buf(),
        message: format!("block {} has no byte position", block.ordinal),
    })?;
    // The last fine checkpoint at or before `row`, when the block has them.
    let (byte, first_row) = match &block.fine {
        Some(fine) if fine.rows > 0 => {
            let k = (row - block.first_row) / fine.rows;
            match k.checked_sub(1).and_then(|i| fine.bytes.get(i as usize)) {
                Some(&off) => (first.saturating_add(off), block.first_row + k * fine.rows),
                None => (first, block.first_row),
            }
        }
        _ => (first, block.first_row),
    };
    if byte > len as u64 {
        return Err(Error::StaleIndex {
            path: path.to_path_buf(),
            message: format!(
                "block {} starts at byte {byte}, past the end of the file ({len} bytes)",
                block.ordinal
            ),
        });
    }
    Ok(Some((byte as usize, first_row)))
}

/// Column indices of a projection by name, or `None` for every column.
pub(crate) fn projection_indices(
    path: &Path,
    schema: &SchemaRef,
    projection: Option<&[String]>,
) -> Result<Option<Vec<usize>>> {
    let Some(names) = projection else {
        return Ok(None);
    };
    resolve_projection(path, schema, names).map(Some)
}

/// Decodes `rows` JSON values in `text` (whitespace-separated) with arrow-json under
/// `schema`, then applies the projection. Numbers and booleans in Utf8 columns become their
/// text, as the inference promised.
pub(crate) fn decode_json(
    path: &Path,
    format: &'static str,
    schema: &SchemaRef,
    text: &[u8],
    rows: usize,
    projection: Option<&[usize]>,
) -> Result<Option<RecordBatch>> {
    if rows == 0 {
        return Ok(None);
    }
    let lib = |e| Error::library(path, format, e);
    let mut decoder = arrow_json::ReaderBuilder::new(schema.clone())
        .with_batch_size(rows)
        .with_coerce_primitive(true)
        .build_decoder()
        .map_err(lib)?;
    let mut buf = text;
    while !buf.is_empty() {
        let n = decoder.decode(buf).map_err(lib)?;
        if n == 0 {
            break;
        }
        buf = &buf[n..];
    }
    let batch = decoder.flush().map_err(lib)?;
    match (batch, projection) {
        (Some(b), Some(p)) => Ok(Some(b.project(p).map_err(lib)?)),
        (b, _) => Ok(b),
    }
}

/// The batch size of a request (0 = the default of 8,192 rows).
pub(crate) fn batch_size(requested: usize) -> usize {
    if requested == 0 { 8192 } else { requested }
}
/// The next item of a row-format batch iterator from its `next_batch` result: an error is
/// returned once and ends the iteration (`remaining` becomes 0).
pub(crate) fn end_on_error(
    next: Result<Option<RecordBatch>>,
    remaining: &mut u64,
) -> Option<Result<RecordBatch>> {
    match next {
        Ok(batch) => batch.map(Ok),
        Err(e) => {
            *remaining = 0;
            Some(Err(e))
        }
    }
}

/// Fills in the row counts and byte sizes of checkpoint blocks from their starts.
pub(crate) fn finish_blocks(blocks: &mut [Block], rows: u64, end_byte: u64) {
    let n = blocks.len();
    for i in 0..n {
        let (next_row, next_byte) = match blocks.get(i + 1) {
            Some(b) => (b.first_row, b.first_byte.unwrap_or(end_byte)),
            None => (rows, end_byte),
        };
        let b = &mut blocks[i];
        b.row_count = next_row - b.first_row;
        b.total_byte_size = b.first_byte.map(|f| next_byte - f);
    }
}
