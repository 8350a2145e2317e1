//! The Avro object container file locator: blocks are OCF data blocks, found by walking the
//! container by hand ([`container`]) because apache-avro hides block boundaries; apache-avro
//! parses the schema and decodes the records of each block ([`decode`]). Reading seeks to the
//! first touched block and decodes records from there, skipping those before the wanted row.

mod container;
mod decode;

use std::path::{Path, PathBuf};

use apache_avro::Schema as AvroSchema;
use apache_avro::reader::datum::GenericDatumReader;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::columnar::{self, Projection};
use crate::error::{Error, Result};
use crate::locator::{BatchIter, Block, FileIndex, IndexOptions, Locator, ReadRequest};
use crate::stats::StatsBuilder;

use container::{BlockFrame, Header, Source};
use decode::{BlockCodec, Columns, Kind};

pub(crate) const FORMAT: &str = "avro";

/// Locator of Avro object container files (`.avro`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AvroLocator;

/// An opened container: header, schemas and codec.
struct Container {
    source: Source,
    header: Header,
    avro: std::sync::Arc<AvroSchema>,
    schema: SchemaRef,
    kinds: Vec<Kind>,
    codec: BlockCodec,
}

impl Container {
    fn open(path: &Path) -> Result<Self> {
        let mut source = Source::open(path)?;
        let header = source.header()?;
        let text = header
            .meta
            .get("avro.schema")
            .ok_or_else(|| Error::malformed(path, FORMAT, "the header has no avro.schema"))?;
        let text = std::str::from_utf8(text)
            .map_err(|_| Error::malformed(path, FORMAT, "avro.schema is not UTF-8"))?;
        let avro = AvroSchema::parse_str(text).map_err(|e| Error::library(path, FORMAT, e))?;
        let (schema, kinds) = decode::arrow_schema(path, &avro)?;
        let codec = BlockCodec::from_name(path, header.meta.get("avro.codec").map(Vec::as_slice))?;
        Ok(Container {
            source,
            header,
            avro: std::sync::Arc::new(avro),
            schema,
            kinds,
            codec,
        })
    }

    /// Walks every block's framing (checking each sync marker) without decoding.
    fn blocks(&mut self) -> Result<Vec<Block>> {
        self.source.seek(self.header.data_start)?;
        let mut blocks = Vec::new();
        let mut first_row = 0u64;
        while let Some(frame) = self.source.frame()? {
            self.source
                .check_sync(&frame, &self.header.sync)
                .map_err(|e| e.in_block(blocks.len() as u64))?;
            blocks.push(Block {
                ordinal: blocks.len() as u64,
                first_row,
                row_count: frame.count,
                first_byte: Some(frame.first_byte),
                total_byte_size: Some(frame.end - frame.first_byte),
                compressed_size: Some(frame.size),
                columns: None,
                stats: None,
                fine: None,
            });
            first_row = first_row
                .checked_add(frame.count)
                .ok_or_else(|| self.source.bad("object counts overflow", frame.first_byte))?;
        }
        Ok(blocks)
    }
}

impl Locator for AvroLocator {
    fn name(&self) -> &str {
        FORMAT
    }

    fn extensions(&self) -> &[&str] {
        &["avro"]
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout::HEAD_AND_BLOCKS)
    }

    fn formats(&self) -> &[&str] {
        &[FORMAT]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FORMAT, || {
            let mut c = Container::open(path)?;
            let blocks = c.blocks()?;
            let row_count = blocks.last().map_or(0, |b| b.first_row + b.row_count);
            let schema = c.schema.clone();
            let stats = if options.stats.is_none() {
                None
            } else {
                let mut builder = StatsBuilder::new(&schema, &options.stats);
                if !builder.is_empty() && row_count > 0 {
                    let all: Vec<usize> = (0..schema.fields().len()).collect();
                    let start = c.header.data_start;
                    c.source.seek(start)?;
                    let batches =
                        Batches::new(path, c, &all, 0, 0..row_count, columnar::DEFAULT_BATCH_SIZE)?;
                    for batch in batches {
                        builder.update(&batch?);
                    }
                }
                Some(builder.finish())
            };
            Ok(FileIndex {
                format: FORMAT.into(),
                row_count,
                blocks,
                schema,
                stats,
            })
        })
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FORMAT, || {
            let mut c = Container::open(path)?;
            let projection = Projection::new(path, &c.schema, request.projection)?;
            let decode: Vec<usize> = match &projection {
                Some(p) => p.decode.clone(),
                None => (0..c.schema.fields().len()).collect(),
            };
            let (start_byte, first_row, rows) = match request.blocks {
                Some(stored) => {
                    let total = stored.last().map_or(0, |b| b.first_row + b.row_count);
                    columnar::check_blocks(path, stored, total)?;
                    let rows = columnar::clamp_rows(&request.rows, total);
                    if rows.is_empty() {
                        return Ok(columnar::empty());
                    }
                    let b = &stored[columnar::touched_blocks(stored, &rows).start];
                    let at = b.first_byte.ok_or_else(|| Error::StaleIndex {
                        path: path.to_path_buf(),
                        message: format!("Avro block {} has no first_byte", b.ordinal),
                    })?;
                    if at < c.header.data_start || at >= c.source.len() {
                        return Err(Error::StaleIndex {
                            path: path.to_path_buf(),
                            message: format!(
                                "Avro block {} starts at byte {at}, outside the data",
                                b.ordinal
                            ),
                        });
                    }
                    // The stored block must still be there: same framing, same object count.
                    c.source.seek(at)?;
                    let frame = c.source.frame().map_err(|e| e.in_block(b.ordinal))?;
                    if frame.map(|f| f.count) != Some(b.row_count) {
                        return Err(Error::StaleIndex {
                            path: path.to_path_buf(),
                            message: format!(
                                "Avro block {} at byte {at} does not hold {} objects",
                                b.ordinal, b.row_count
                            ),
                        });
                    }
                    (at, b.first_row, rows)
                }
                None => {
                    // Without an index, walk the block framing from the start (no block is
                    // decompressed) to find the first touched block.
                    let blocks = c.blocks()?;
                    let total = blocks.last().map_or(0, |b| b.first_row + b.row_count);
                    let rows = columnar::clamp_rows(&request.rows, total);
                    if rows.is_empty() {
                        return Ok(columnar::empty());
                    }
                    let b = &blocks[columnar::touched_blocks(&blocks, &rows).start];
                    (
                        b.first_byte.unwrap_or(c.header.data_start),
                        b.first_row,
                        rows,
                    )
                }
            };
            c.source.seek(start_byte)?;
            let batches = Batches::new(
                path,
                c,
                &decode,
                first_row,
                rows,
                columnar::batch_size(request.batch_size),
            )?;
            let owned = path.to_path_buf();
            Ok(Box::new(batches.map(move |b| {
                b.and_then(|b| {
                    columnar::reorder(projection.as_ref(), b)
                        .map_err(|e| Error::library(&owned, FORMAT, e))
                })
            })))
        })
        .map(|batches| columnar::guard_iter(path, FORMAT, batches))
    }
}

/// Decodes the rows `wanted` from the block at the source's position (whose first row is
/// `at_row`), block after block, `batch_size` rows per batch.
struct Batches {
    path: PathBuf,
    c: Container,
    columns: Columns,
    /// Local row of the next record to decode.
    at_row: u64,
    wanted: std::ops::Range<u64>,
    batch_size: usize,
    /// The current block's decompressed data and read position.
    data: Vec<u8>,
    cursor: usize,
    left_in_block: u64,
    frame: Option<BlockFrame>,
    done: bool,
}

impl Batches {
    fn new(
        path: &Path,
        c: Container,
        decode: &[usize],
        at_row: u64,
        wanted: std::ops::Range<u64>,
        batch_size: usize,
    ) -> Result<Self> {
        let columns = Columns::new(&c.schema, &c.kinds, decode)?;
        Ok(Batches {
            path: path.to_path_buf(),
            c,
            columns,
            at_row,
            wanted,
            batch_size,
            data: Vec::new(),
            cursor: 0,
            left_in_block: 0,
            frame: None,
            done: false,
        })
    }

    /// Loads the next block; `false` at the end of the file.
    fn next_block(&mut self) -> Result<bool> {
        let Some(frame) = self.c.source.frame()? else {
            return Ok(false);
        };
        let mut data = self.c.source.bytes(frame.size, "block data")?;
        self.c.source.check_sync(&frame, &self.c.header.sync)?;
        self.c.codec.decompress(&mut data).map_err(|m| {
            self.c
                .source
                .bad(format!("cannot decompress block: {m}"), frame.first_byte)
        })?;
        self.data = data;
        self.cursor = 0;
        self.left_in_block = frame.count;
        self.frame = Some(frame);
        Ok(true)
    }

    fn fill(&mut self) -> Result<Option<RecordBatch>> {
        let avro = self.c.avro.clone();
        let reader = GenericDatumReader::builder(&avro)
            .build()
            .map_err(|e| Error::library(&self.path, FORMAT, e))?;
        while self.at_row < self.wanted.end && self.columns.rows() < self.batch_size {
            if self.left_in_block == 0 {
                if !self.next_block()? {
                    return Err(Error::malformed(
                        &self.path,
                        FORMAT,
                        format!(
                            "the file ends at row {} before row {}",
                            self.at_row, self.wanted.end
                        ),
                    ));
                }
                continue;
            }
            let at = self.frame.map_or(0, |f| f.first_byte);
            let mut slice = self.data.get(self.cursor..).unwrap_or_default();
            let before = slice.len();
            let value = reader.read_value(&mut slice).map_err(|e| {
                Error::malformed(&self.path, FORMAT, format!("cannot decode record: {e}"))
                    .at_byte(at)
                    .at_row(self.at_row)
            })?;
            self.cursor += before - slice.len();
            self.left_in_block -= 1;
            if self.left_in_block == 0 && self.cursor != self.data.len() {
                return Err(Error::malformed(
                    &self.path,
                    FORMAT,
                    format!(
                        "{} bytes left over after the block's last record",
                        self.data.len() - self.cursor
                    ),
                )
                .at_byte(at));
            }
            if self.at_row >= self.wanted.start {
                self.columns.push(&value).map_err(|m| {
                    Error::malformed(&self.path, FORMAT, m)
                        .at_byte(at)
                        .at_row(self.at_row)
                })?;
            }
            self.at_row += 1;
        }
        if self.columns.rows() == 0 {
            return Ok(None);
        }
        self.columns
            .finish()
            .map(Some)
            .map_err(|e| Error::library(&self.path, FORMAT, e))
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // The iterator fuses after its end and after its first error.
        let item = self.fill().transpose();
        self.done = !matches!(item, Some(Ok(_)));
        item
    }
}
