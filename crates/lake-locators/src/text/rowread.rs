//! Pieces shared by the reads of the checkpointed row formats (delimited, JSON, MsgPack,
//! XLSX): choosing the checkpoint to start from, resolving a projection, and decoding JSON
//! text with arrow-json under a stored schema.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::columnar::resolve_projection;
use crate::error::{Error, Result};
use crate::locator::{Block, FileIndex, IndexOptions, StatsColumns};
use crate::text::scan::FileBytes;

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

/// A byte at or after the end of local row `row - 1`: the first checkpoint (block start or
/// fine checkpoint) of a row at or after `row`, or `None` when none follows (the end of the
/// file bounds the read then). With [`start_block`] it bounds the bytes a read of rows
/// `[start, row)` touches, which are asked of the disk at once ([`prepare_rows`]).
///
pub(crate) fn end_bound(blocks: Option<&[Block]>, row: u64) -> Option<usize> {
    let blocks = blocks?;
    let i = blocks.partition_point(|b| b.first_row < row);
    // The block holding `row - 1` may have a fine checkpoint at or after `row`.
    let fine_end = i.checked_sub(1).and_then(|j| {
        let b = blocks.get(j)?;
        let first = b.first_byte?;
        let fine = b.fine.as_ref().filter(|f| f.rows > 0)?;
        let k = (row - b.first_row).div_ceil(fine.rows);
        let off = fine.bytes.get(usize::try_from(k.checked_sub(1)?).ok()?)?;
        Some(first.saturating_add(*off))
    });
    let next = fine_end.or_else(|| blocks.get(i).and_then(|b| b.first_byte))?;
    usize::try_from(next).ok()
}

/// Readies the map `bytes` of the file at `path` for a read of local rows `rows` (see
/// [`FileBytes::prepare_read`]): with the map's blocks, the bytes from the checkpoint before
/// the first row to the first checkpoint after the last are known, and asked of the disk at
/// once, before anything else is read (a cold slice).
pub(crate) fn prepare_rows(
    path: &Path,
    bytes: &FileBytes,
    blocks: Option<&[Block]>,
    rows: &std::ops::Range<u64>,
) {
    if let Some(blocks) = blocks
        && rows.end > rows.start
        && let Ok(Some((from, _))) = start_block(path, Some(blocks), rows.start, bytes.len())
    {
        let to = end_bound(Some(blocks), rows.end).map_or(bytes.len(), |e| e.min(bytes.len()));
        bytes.prepare_read(from..to);
    }
}

/// The `(local row, file byte)` of block `b`'s start and of each of its fine checkpoints, in
/// order (none when the block has no byte position).
pub(crate) fn block_starts(b: &Block) -> impl Iterator<Item = (u64, u64)> + '_ {
    let first = b.first_byte;
    let fine = b.fine.as_ref().filter(|f| f.rows > 0);
    first.into_iter().flat_map(move |first| {
        let inner = fine.into_iter().flat_map(move |f| {
            (1u64..)
                .zip(&f.bytes)
                .map(move |(k, off)| (b.first_row + k * f.rows, first.saturating_add(*off)))
        });
        std::iter::once((b.first_row, first)).chain(inner)
    })
}

/// Record starts a read knows from the map: the `(local row, byte)` of every block start and
/// fine checkpoint of a row in `rows` after its first, in order. [`read_batch`] splits a batch
/// for two threads at the one nearest its middle instead of skipping half the batch first.
#[derive(Debug, Default)]
pub(crate) struct KnownStarts(Vec<(u64, usize)>);

impl KnownStarts {
    /// The starts of `blocks` (`None`: no index, none known) inside `rows`, within `len` bytes.
    pub(crate) fn new(blocks: Option<&[Block]>, rows: &std::ops::Range<u64>, len: usize) -> Self {
        let mut out = Vec::new();
        let inside = |row: u64| row > rows.start && row < rows.end;
        let Some(blocks) = blocks else {
            return KnownStarts(out);
        };
        let from = blocks
            .partition_point(|b| b.first_row <= rows.start)
            .saturating_sub(1);
        for b in blocks.get(from..).unwrap_or_default() {
            if b.first_row >= rows.end {
                break;
            }
            for (row, byte) in block_starts(b) {
                if inside(row)
                    && let Ok(byte) = usize::try_from(byte)
                    && byte <= len
                {
                    out.push((row, byte));
                }
            }
        }
        KnownStarts(out)
    }

    /// The known start nearest the middle of a batch of `want` records from local row `row`,
    /// as `(byte, records before it)`, when one lies in the batch's middle half.
    pub(crate) fn middle(&self, row: u64, want: u64) -> Option<(usize, u64)> {
        let (lo, hi) = (row + want / 4, row + want - want / 4);
        let target = row + want / 2;
        let at = self.0.partition_point(|&(r, _)| r < lo);
        self.0[at..]
            .iter()
            .take_while(|&&(r, _)| r <= hi)
            .min_by_key(|&&(r, _)| r.abs_diff(target))
            .map(|&(r, byte)| (byte, r - row))
    }
}

/// Records a batch needs, at least, before its decoding is shared with a second thread
/// ([`read_batch`]).
pub(crate) const SHARED_RECORDS: u64 = 256;

/// Bytes a batch needs, at least, before its decoding is shared: below this the hand-over to
/// another thread (tens of microseconds) costs more than half the decoding saves.
pub(crate) const SHARED_BYTES: usize = 48 << 10;

/// Whether a batch of `records` records in `bytes` bytes is decoded in two halves at once.
pub(crate) fn worth_sharing(records: u64, bytes: usize) -> bool {
    records >= SHARED_RECORDS && bytes >= SHARED_BYTES && rayon::current_num_threads() > 1
}

/// The records of one batch of a row read: where they end, how many there were, and their
/// rows, in one batch or in two halves decoded at once (see [`read_batch`]).
pub(crate) struct BatchRead {
    /// The byte after the last record read.
    pub end: usize,
    /// The records read (fewer than wanted only at the end of the text).
    pub records: u64,
    /// The rows in order: the first half, and the second when the batch was shared.
    pub batches: [Option<RecordBatch>; 2],
}

impl BatchRead {
    /// The first batch to return now; the second, if any, is left in `pending`.
    pub(crate) fn split(self, pending: &mut Option<RecordBatch>) -> Option<RecordBatch> {
        let [a, b] = self.batches;
        match a {
            Some(a) => {
                *pending = b;
                Some(a)
            }
            None => b,
        }
    }
}

/// Where a lazy reader of the rows of a text file stands (the delimited and JSON readers):
/// its batches are read by [`read_batch`] between [`BatchCursor::begin`] and
/// [`BatchCursor::advance`].
#[derive(Debug)]
pub(crate) struct BatchCursor {
    /// The byte of the next wanted record.
    pub(crate) pos: usize,
    /// The local row of the record at `pos`.
    pub(crate) row: u64,
    /// Records still wanted.
    pub(crate) remaining: u64,
    /// Record starts the map knows inside the read.
    known: KnownStarts,
    batch_size: usize,
    /// The second half of a batch decoded in two (see [`read_batch`]), returned next.
    pending: Option<RecordBatch>,
}

/// What a reader does next ([`BatchCursor::begin`]).
pub(crate) enum NextBatch {
    /// Returns this: the second half of the last batch, or `None` at the end.
    Ready(Option<RecordBatch>),
    /// Reads up to this many records from [`BatchCursor::pos`].
    Read(u64),
}

impl BatchCursor {
    /// A reader at the record start `pos` of local row `row`, `remaining` records wanted in
    /// batches of `batch_size`.
    pub(crate) fn new(
        pos: usize,
        row: u64,
        remaining: u64,
        known: KnownStarts,
        batch_size: usize,
    ) -> Self {
        BatchCursor {
            pos,
            row,
            remaining,
            known,
            batch_size,
            pending: None,
        }
    }

    /// The next step of a reader of a text of `len` bytes.
    pub(crate) fn begin(&mut self, len: usize) -> NextBatch {
        if let Some(batch) = self.pending.take() {
            return NextBatch::Ready(Some(batch));
        }
        if self.remaining == 0 || self.pos >= len {
            return NextBatch::Ready(None);
        }
        NextBatch::Read(self.remaining.min(self.batch_size as u64))
    }

    /// The known record start nearest the middle of the next `want` records (see
    /// [`KnownStarts::middle`]).
    pub(crate) fn middle(&self, want: u64) -> Option<(usize, u64)> {
        self.known.middle(self.row, want)
    }

    /// Moves past `read`, a batch of up to `want` records: the batch to return now (the
    /// second half, if any, is returned next).
    pub(crate) fn advance(&mut self, read: BatchRead, want: u64) -> Option<RecordBatch> {
        self.pos = read.end;
        self.row += read.records;
        self.took(read.records, want);
        read.split(&mut self.pending)
    }

    /// Counts `got` records read of `want` asked: fewer end the read (the end of the text).
    pub(crate) fn took(&mut self, got: u64, want: u64) {
        self.remaining = if got < want { 0 } else { self.remaining - got };
    }
}

/// Reads one batch of up to `want` records from byte `from`: `skip(from, n)` finds the end of
/// `n` records (and how many there were), `decode(range, n)` decodes the `n` records in
/// `range`.
///
/// A large batch is decoded in two halves at once (a deep slice is mostly this decoding): the
/// caller's thread finds the middle record and decodes the first half, while a thread of the
/// pool skips the second half and decodes it. The middle is `middle` (a record start the map
/// knows, `(byte, records from `from`)`, see [`KnownStarts::middle`]) when given, so that the
/// second thread starts at once; else the first half is skipped to find it. The halves are
/// returned as two batches, in order; joining them would copy every value once more.
pub(crate) fn read_batch<S, D>(
    path: &Path,
    format: &'static str,
    from: usize,
    want: u64,
    middle: Option<(usize, u64)>,
    skip: S,
    decode: D,
) -> Result<BatchRead>
where
    S: Fn(usize, u64) -> Result<(usize, u64)> + Sync,
    D: Fn(std::ops::Range<usize>, u64) -> Result<Option<RecordBatch>> + Sync,
{
    let decode = |range: std::ops::Range<usize>, n: u64| match n {
        0 => Ok(None),
        _ => decode(range, n),
    };
    let one = |end: usize, records: u64| -> Result<BatchRead> {
        Ok(BatchRead {
            end,
            records,
            batches: [decode(from..end, records)?, None],
        })
    };
    if want < SHARED_RECORDS || rayon::current_num_threads() < 2 {
        let (end, records) = skip(from, want)?;
        return one(end, records);
    }
    let (mid, first, known) = match middle {
        Some((byte, n)) if byte > from && n > 0 && n < want => (byte, n, true),
        _ => {
            let (mid, first) = skip(from, want / 2)?;
            (mid, first, false)
        }
    };
    // The second half is taken to be about as long as the first.
    let bytes = (mid - from).saturating_mul(2);
    if (!known && first < want / 2) || !worth_sharing(want, bytes) {
        let (end, second) = skip(mid, want - first)?;
        return one(end, first + second);
    }
    let mut tail = None;
    let mut head = None;
    rayon::in_place_scope(|s| {
        s.spawn(|_| {
            tail = Some(
                skip(mid, want - first)
                    .and_then(|(end, second)| Ok((end, second, decode(mid..end, second)?))),
            )
        });
        head = Some(decode(from..mid, first));
    });
    let (Some(head), Some(tail)) = (head, tail) else {
        return Err(Error::library(
            path,
            format,
            "a decoding thread ended without a result",
        ));
    };
    let head = head?;
    let (end, second, tail) = tail?;
    Ok(BatchRead {
        end,
        records: first + second,
        batches: [head, tail],
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locator::FineCheckpoints;

    /// Rows 0..40 at bytes 0.. with a fine checkpoint every 10 rows (rows 10, 20, 30 at bytes
    /// 100, 200, 300), then rows 40.. from byte 450 without fine checkpoints.
    fn blocks() -> Vec<Block> {
        let mut a = Block::rows(0, 0, 40);
        a.first_byte = Some(0);
        a.fine = Some(FineCheckpoints {
            rows: 10,
            bytes: vec![100, 200, 300],
        });
        let mut b = Block::rows(1, 40, 25);
        b.first_byte = Some(450);
        vec![a, b]
    }

    #[test]
    fn known_starts_are_the_checkpoints_inside_a_read_and_the_middle_is_nearest() {
        let b = blocks();
        let starts = |rows: std::ops::Range<u64>, len| KnownStarts::new(Some(&b), &rows, len).0;
        assert_eq!(
            starts(0..65, 1000),
            vec![(10, 100), (20, 200), (30, 300), (40, 450)]
        );
        // Strictly inside: the read's own first row is not a split point.
        assert_eq!(starts(10..40, 1000), vec![(20, 200), (30, 300)]);
        assert_eq!(starts(41..65, 1000), vec![]);
        // Positions past the end of the data are left out.
        assert_eq!(starts(0..65, 300), vec![(10, 100), (20, 200), (30, 300)]);
        assert!(KnownStarts::new(None, &(0..65), 1000).0.is_empty());
        let k = KnownStarts::new(Some(&b), &(0..65), 1000);
        // 40 records from row 0: the middle half is rows 10..=30, nearest 20.
        assert_eq!(k.middle(0, 40), Some((200, 20)));
        // 20 records from row 5: rows 10..=20 qualify, 15 is the target; 10 and 20 tie, the
        // first wins.
        assert_eq!(k.middle(5, 20), Some((100, 5)));
        // No known start in the middle half of rows 41..61.
        assert_eq!(k.middle(41, 20), None);
        assert_eq!(k.middle(0, 4), None);
    }

    #[test]
    fn end_bound_is_the_first_checkpoint_at_or_after_the_row() {
        let b = blocks();
        let cases = [
            (0, Some(0)),
            (1, Some(100)),
            (5, Some(100)),
            (10, Some(100)),
            (11, Some(200)),
            (30, Some(300)),
            (31, Some(450)),
            (40, Some(450)),
            (41, None),
            (65, None),
        ];
        for (row, want) in cases {
            assert_eq!(end_bound(Some(&b), row), want, "row {row}");
        }
        assert_eq!(end_bound(None, 5), None);
        // The start of a read of the same rows lies at or before the bound.
        for row in 1..65u64 {
            let (start, _) = start_block(Path::new("t"), Some(&b), row - 1, 1000)
                .unwrap()
                .unwrap();
            assert!(
                end_bound(Some(&b), row).is_none_or(|e| e > start),
                "row {row}"
            );
        }
    }
}
