//! The reads of a delimited file: seek to the checkpoint (a block start or one of its fine
//! checkpoints) before the first wanted row, skip the records before it, and decode the
//! wanted records in batches with arrow-csv.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::Text;
use super::{Opened, field_error, open_for_read};
use crate::error::{Error, Result};
use crate::locator::{BatchIter, ReadRequest};
use crate::text::encoding::{TextEncoding, feed};
use crate::text::rowread::{end_on_error, start_block};
use crate::text::skip::skip_records;

/// [`Locator::read`] of a delimited file in `encoding`.
pub(super) fn read_file(
    path: &Path,
    request: &ReadRequest<'_>,
    encoding: TextEncoding,
) -> Result<BatchIter> {
    let o: Opened = open_for_read(path, request.schema.as_ref(), request.projection, encoding)?;
    let (data, h) = (&o.data, &o.h);
    let blocks = request.blocks.or(o.own_blocks.as_deref());
    let (mut pos, base) = match start_block(path, blocks, request.rows.start, data.len())? {
        Some((byte, first_row)) => (byte, first_row),
        None => (h.body, 0),
    };
    let (skipped_to, skipped) = skip_records(data, pos, request.rows.start - base, h.delim)
        .map_err(|e| field_error(path, h.format, e.into(), None))?;
    pos = skipped_to;
    let remaining = if skipped < request.rows.start - base {
        0
    } else {
        request.rows.end.saturating_sub(request.rows.start)
    };
    let batch_size = if request.batch_size == 0 {
        8192
    } else {
        request.batch_size
    };
    let (format, delim) = (h.format, h.delim);
    Ok(Box::new(CsvBatches {
        path: path.to_path_buf(),
        format,
        data: o.data,
        pos,
        remaining,
        delim,
        schema: o.schema,
        projection: o.projection,
        batch_size,
        encoding: o.encoding,
    }))
}

/// Lazily decodes the wanted records, one batch at a time.
struct CsvBatches {
    path: std::path::PathBuf,
    format: &'static str,
    data: Text,
    pos: usize,
    remaining: u64,
    delim: u8,
    schema: SchemaRef,
    projection: Option<Vec<usize>>,
    batch_size: usize,
    encoding: TextEncoding,
}

impl CsvBatches {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.remaining == 0 || self.pos >= self.data.len() {
            return Ok(None);
        }
        let want = self.remaining.min(self.batch_size as u64);
        let (end, got) = skip_records(&self.data, self.pos, want, self.delim)
            .map_err(|e| field_error(&self.path, self.format, e.into(), None))?;
        if got == 0 {
            return Ok(None);
        }
        let mut builder = arrow_csv::ReaderBuilder::new(self.schema.clone())
            .with_header(false)
            .with_delimiter(self.delim)
            // Records of fewer fields than the schema read nulls in the columns after their
            // last, as the index counted them.
            .with_truncated_rows(true)
            .with_batch_size(got as usize);
        if let Some(p) = &self.projection {
            builder = builder.with_projection(p.clone());
        }
        let mut decoder = builder.build_decoder();
        let lib = |e| Error::library(&self.path, self.format, e);
        feed(&mut decoder, &self.data[self.pos..end], self.encoding).map_err(lib)?;
        // An empty buffer tells the decoder the input ended (a last record without newline).
        decoder.decode(&[]).map_err(lib)?;
        let batch = decoder.flush().map_err(lib)?;
        self.pos = end;
        self.remaining -= got;
        Ok(batch)
    }
}

impl Iterator for CsvBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        end_on_error(self.next_batch(), &mut self.remaining)
    }
}
