//! The reads of a delimited file: seek to the checkpoint (a block start or one of its fine
//! checkpoints) before the first wanted row, skip the records before it, and decode the
//! wanted records in batches with arrow-csv.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::Text;
use super::{Opened, field_error, open_mapped};
use crate::error::{Error, Result};
use crate::locator::{BatchIter, ReadRequest};
use crate::text::encoding::{TextEncoding, feed};
use crate::text::rowread::{
    BatchCursor, KnownStarts, NextBatch, end_on_error, prepare_rows, read_batch, start_block,
};
use crate::text::scan::FileBytes;
use crate::text::skip::skip_records;

/// [`Locator::read`] of a delimited file in `encoding`.
pub(super) fn read_file(
    path: &Path,
    request: &ReadRequest<'_>,
    encoding: TextEncoding,
) -> Result<BatchIter> {
    let bytes = FileBytes::open(path)?;
    prepare_rows(path, &bytes, request.blocks, &request.rows);
    let o: Opened = open_mapped(
        path,
        bytes,
        request.schema.as_ref(),
        request.projection,
        encoding,
    )?;
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
    let known = KnownStarts::new(blocks, &request.rows, data.len());
    Ok(Box::new(CsvBatches {
        at: BatchCursor::new(pos, request.rows.start, remaining, known, batch_size),
        path: path.to_path_buf(),
        format,
        data: o.data,
        delim,
        schema: o.schema,
        projection: o.projection,
        encoding: o.encoding,
    }))
}

/// Lazily decodes the wanted records, one batch at a time.
struct CsvBatches {
    at: BatchCursor,
    path: std::path::PathBuf,
    format: &'static str,
    data: Text,
    delim: u8,
    schema: SchemaRef,
    projection: Option<Vec<usize>>,
    encoding: TextEncoding,
}

impl CsvBatches {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let want = match self.at.begin(self.data.len()) {
            NextBatch::Ready(batch) => return Ok(batch),
            NextBatch::Read(want) => want,
        };
        let skip = |from: usize, records: u64| {
            skip_records(&self.data, from, records, self.delim)
                .map_err(|e| field_error(&self.path, self.format, e.into(), None))
        };
        let read = read_batch(
            &self.path,
            self.format,
            self.at.pos,
            want,
            self.at.middle(want),
            skip,
            |range, n| self.decode(range, n),
        )?;
        Ok(self.at.advance(read, want))
    }

    /// The `records` records in `range` of the text, decoded with arrow-csv.
    fn decode(&self, range: std::ops::Range<usize>, records: u64) -> Result<Option<RecordBatch>> {
        let mut builder = arrow_csv::ReaderBuilder::new(self.schema.clone())
            .with_header(false)
            .with_delimiter(self.delim)
            // Records of fewer fields than the schema read nulls in the columns after their
            // last, as the index counted them.
            .with_truncated_rows(true)
            .with_batch_size(usize::try_from(records).unwrap_or(usize::MAX).max(1));
        if let Some(p) = &self.projection {
            builder = builder.with_projection(p.clone());
        }
        let mut decoder = builder.build_decoder();
        let lib = |e| Error::library(&self.path, self.format, e);
        feed(&mut decoder, &self.data[range], self.encoding).map_err(lib)?;
        // An empty buffer tells the decoder the input ended (a last record without newline).
        decoder.decode(&[]).map_err(lib)?;
        decoder.flush().map_err(lib)
    }
}

impl Iterator for CsvBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        end_on_error(self.next_batch(), &mut self.at.remaining)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    /// Decoded in two halves on two threads (a batch of thousands of records), or in batches
    /// too small to share: the same rows.
    #[test]
    fn halves_decoded_at_once_equal_one_decoding() {
        let mut f = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
        writeln!(f, "id,text,x").unwrap();
        for i in 0..20_000u32 {
            writeln!(f, "{i},\"a, \"\"quoted\"\"\nline {i}\",{}.5", i % 97).unwrap();
        }
        f.flush().unwrap();
        crate::testutil::assert_halves_equal_small_batches(
            &crate::formats::csv::DelimitedLocator,
            f.path(),
        );
    }
}
