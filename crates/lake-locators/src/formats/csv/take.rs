//! [`Locator::read_rows`](crate::Locator::read_rows) of delimited files: the file is mapped
//! and its header read once; in each checkpoint block holding a wanted row, one pass of the
//! quote-aware record scanner skips the unwanted records and copies only the wanted ones
//! (the blocks on every thread of the caller's pool); then arrow-csv parses those records
//! alone, under the stored schema, in one batch.

use std::path::Path;

use arrow_array::RecordBatch;
use rayon::prelude::*;

use super::{Opened, Text, field_error, open_for_read};
use crate::error::{Error, Result};
use crate::locator::RowsRequest;
use crate::take::{by_block, check_rows, past_end};
use crate::text::encoding::{TextEncoding, feed};
use crate::text::rowread::start_block;
use crate::text::skip::skip_records;

/// The wanted rows `request.rows` of the delimited file at `path`.
pub(super) fn read_rows(
    path: &Path,
    request: &RowsRequest<'_>,
    encoding: TextEncoding,
) -> Result<Vec<RecordBatch>> {
    let Opened {
        data,
        h,
        schema,
        own_blocks,
        projection,
        encoding,
    } = open_for_read(path, request.schema.as_ref(), request.projection, encoding)?;
    let rows = request.rows;
    check_rows(path, rows, None)?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let blocks = request.blocks.or(own_blocks.as_deref());
    let groups = match blocks {
        Some(b) if !b.is_empty() => by_block(rows, b),
        _ => vec![(0, 0..rows.len())],
    };
    let bytes: &Text = &data;
    let data: &[u8] = bytes;
    // Each block's wanted records, copied one after the other, each ending with a line feed.
    let texts: Vec<Vec<u8>> = groups
        .par_iter()
        .map(|(index, range)| -> Result<Vec<u8>> {
            let wanted = &rows[range.clone()];
            let (mut pos, mut at) = match start_block(path, blocks, wanted[0], data.len())? {
                Some((byte, first_row)) => (byte, first_row),
                None => (h.body, 0),
            };
            let block = blocks.and_then(|b| b.get(*index));
            // The block's pages in one kernel call rather than a fault per 4 KiB: the scan
            // reads most of the block (unless fine checkpoints let it skip ahead).
            if let (Text::Mapped(m), Some(b)) = (bytes, block)
                && let (Some(first), Some(n), None) = (b.first_byte, b.total_byte_size, &b.fine)
            {
                m.populate(pos.max(first as usize)..((first + n) as usize).min(data.len()));
            }
            let scan =
                |e: crate::text::scan::ScanError| field_error(path, h.format, e.into(), None);
            let mut text = Vec::new();
            for &r in wanted {
                // A fine checkpoint past the position: seek there instead of skipping to it.
                if block.is_some_and(|b| b.fine.is_some())
                    && let Some((byte, first_row)) = start_block(path, blocks, r, data.len())?
                    && first_row > at
                {
                    (pos, at) = (byte, first_row);
                }
                let (start, skipped) = skip_records(data, pos, r - at, h.delim).map_err(scan)?;
                let (end, one) = skip_records(data, start, 1, h.delim).map_err(scan)?;
                if skipped < r - at || one == 0 {
                    return Err(past_end(path, r, at + skipped));
                }
                text.extend_from_slice(&data[start..end]);
                if text.last() != Some(&b'\n') {
                    text.push(b'\n');
                }
                (pos, at) = (end, r + 1);
            }
            Ok(text)
        })
        .collect::<Result<_>>()?;
    let mut builder = arrow_csv::ReaderBuilder::new(schema)
        .with_header(false)
        .with_delimiter(h.delim)
        // Records of fewer fields than the schema read nulls in the columns after their
        // last, as the index counted them.
        .with_truncated_rows(true)
        .with_batch_size(rows.len());
    if let Some(p) = projection {
        builder = builder.with_projection(p);
    }
    let mut decoder = builder.build_decoder();
    let lib = |e| Error::library(path, h.format, e);
    for text in &texts {
        feed(&mut decoder, text, encoding).map_err(lib)?;
    }
    decoder.decode(&[]).map_err(lib)?;
    let batch = decoder.flush().map_err(lib)?;
    let got = batch.as_ref().map_or(0, RecordBatch::num_rows);
    if got != rows.len() {
        return Err(Error::malformed(
            path,
            h.format,
            format!(
                "{got} records were parsed from the {} wanted ones",
                rows.len()
            ),
        ));
    }
    Ok(batch.into_iter().collect())
}
