//! The shape every format implements: [`Locator`], and the index it produces, [`FileIndex`].
//!
//! The field names of [`Block`], [`ColumnChunk`], [`PageLocation`] and [`ColumnStats`] are
//! those of the Lake Map's `row_groups_json` and `stats_json` columns, so their serde forms
//! are stored in the map as they are.

pub mod bytes;
pub mod take;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

use crate::encoding::TextEncoding;
use crate::error::Result;

/// One block of a file, in file order: a Parquet row group, an ORC stripe, an Avro OCF data
/// block, an Arrow record batch, or a checkpoint of `stride` rows of a row format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// Block number within the file, from 0.
    pub ordinal: u64,
    /// Local index of the block's first row.
    pub first_row: u64,
    /// Rows in the block.
    pub row_count: u64,
    /// Byte offset where the block starts, where the format has one.
    pub first_byte: Option<u64>,
    /// Bytes of the block as stored, where the format has them.
    pub total_byte_size: Option<u64>,
    /// Compressed bytes, where the format has them.
    pub compressed_size: Option<u64>,
    /// Per-column detail (Parquet only).
    pub columns: Option<Vec<ColumnChunk>>,
    /// Min/max of the block's Int64 and Float64 columns (the row formats, when statistics
    /// are wanted): what lets a filter skip blocks of a file its file statistics keep.
    /// Absent in maps written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
    /// Finer checkpoints inside the block (the row formats): a reader seeks to the last one
    /// before its first row instead of the block's start. Absent in older maps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fine: Option<FineCheckpoints>,
}

/// Checkpoints every `rows` rows inside a block of a row format, after its first row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FineCheckpoints {
    /// Rows between two checkpoints.
    pub rows: u64,
    /// Byte offset, from the block's `first_byte`, of the rows `rows`, `2 * rows`, ... of the
    /// block.
    pub bytes: Vec<u64>,
}

impl Block {
    /// A block with only its row range (formats without byte positions).
    pub fn rows(ordinal: u64, first_row: u64, row_count: u64) -> Self {
        Block {
            ordinal,
            first_row,
            row_count,
            first_byte: None,
            total_byte_size: None,
            compressed_size: None,
            columns: None,
            stats: None,
            fine: None,
        }
    }

    /// A row checkpoint of the formats without blocks of their own: the block that starts
    /// at row `first_row`, byte `first_byte` (its row count and size are filled in once the
    /// next checkpoint or the end is known).
    pub fn checkpoint(ordinal: u64, first_row: u64, first_byte: u64) -> Self {
        Block {
            first_byte: Some(first_byte),
            ..Block::rows(ordinal, first_row, 0)
        }
    }

    /// The local rows this block holds.
    pub fn row_range(&self) -> Range<u64> {
        self.first_row..self.first_row + self.row_count
    }
}

/// Row-only blocks of `rows` rows each, in file order (for unit tests).
#[cfg(test)]
pub(crate) fn test_blocks(rows: &[u64]) -> Vec<Block> {
    let mut first = 0;
    rows.iter()
        .enumerate()
        .map(|(i, &n)| {
            let b = Block::rows(i as u64, first, n);
            first += n;
            b
        })
        .collect()
}

/// One Parquet column chunk of a row group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnChunk {
    /// Dotted column path.
    pub path: String,
    /// First byte of the compressed column chunk.
    pub first_byte: u64,
    /// Compressed length of the column chunk.
    pub compressed_size: u64,
    /// Page locations from the OffsetIndex, or `None` when the file has none.
    pub page_locations: Option<Vec<PageLocation>>,
}

/// One data page's position, from a Parquet OffsetIndex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageLocation {
    /// Byte offset of the page.
    pub offset: i64,
    /// Compressed size of the page, header included.
    pub compressed_page_size: i32,
    /// Index of the page's first row within the row group.
    pub first_row_index: i64,
}

/// Min/max of the non-null values of one column, for Int64, Float64 and Utf8 columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ColumnStats {
    /// An Int64 column (exact bounds).
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// A Float64 column (NaN ignored).
    Float {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// A Utf8 column, compared by bytes.
    Str {
        /// Smallest value.
        min_str: String,
        /// Largest value.
        max_str: String,
    },
}

impl ColumnStats {
    /// The bounds of a Float64 column, a zero written unsigned: `-0.0` and `0.0` are equal
    /// to readers and to pruning, and neither a Parquet footer (whose writers store a zero
    /// bound as `-0.0` or `0.0` whatever the data holds) nor a fold whose order varies says
    /// which one a file's bound is.
    pub fn float(min: f64, max: f64) -> Self {
        ColumnStats::Float {
            min: min + 0.0,
            max: max + 0.0,
        }
    }
}

/// Statistics of a file: column name → bounds. Columns of other types, and columns without
/// any non-null value, are absent.
pub type Stats = BTreeMap<String, ColumnStats>;

/// Which columns get statistics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StatsColumns {
    /// Every supported column (the map's `null`).
    #[default]
    All,
    /// No statistics (the map's `[]`).
    None,
    /// Only these columns.
    Only(Vec<String>),
}

impl StatsColumns {
    /// True when statistics of `column` are wanted.
    pub fn wants(&self, column: &str) -> bool {
        match self {
            StatsColumns::All => true,
            StatsColumns::None => false,
            StatsColumns::Only(list) => list.iter().any(|c| c == column),
        }
    }

    /// True when no statistics at all are wanted.
    pub fn is_none(&self) -> bool {
        match self {
            StatsColumns::None => true,
            StatsColumns::Only(list) => list.is_empty(),
            StatsColumns::All => false,
        }
    }
}

/// The names that more than one of `names` bears. Statistics are keyed by column name, so a
/// repeated name (a CSV header with two `x` or several empty cells, an Arrow schema with a
/// repeated field) gets none, in the file's statistics and its blocks': its bounds could be
/// either column's, and a filter pruning by them could drop rows of the other.
pub(crate) fn repeated_names<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> std::collections::HashSet<&'a str> {
    let mut seen = std::collections::HashSet::new();
    let mut repeated = std::collections::HashSet::new();
    for name in names {
        if !seen.insert(name) {
            repeated.insert(name);
        }
    }
    repeated
}

/// The default rows per checkpoint of the row formats: [`IndexOptions::default`]'s stride and
/// the map's default `checkpoint_stride_rows` (lake-map re-exports it).
pub const DEFAULT_STRIDE: u64 = 65_536;

/// Options of [`Locator::index`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexOptions {
    /// Rows per checkpoint of the row formats (and logical XLSX blocks). Must be > 0.
    pub stride: u64,
    /// Which columns get statistics.
    pub stats: StatsColumns,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            stride: DEFAULT_STRIDE,
            stats: StatsColumns::All,
        }
    }
}

/// What [`Locator::index`] learns about a file in one pass.
#[derive(Debug, Clone)]
pub struct FileIndex {
    /// The handler name stored in the map's `format` column (`parquet`, `ndjson`,
    /// `json_array`, `csv`, ...). For JSON the shape is decided by the content.
    pub format: String,
    /// Rows in the file.
    pub row_count: u64,
    /// The blocks, in file order; their row counts add up to `row_count`.
    pub blocks: Vec<Block>,
    /// The schema [`Locator::read`] returns for this file.
    pub schema: SchemaRef,
    /// Column statistics, or `None` when they were not requested.
    pub stats: Option<Stats>,
}

/// What to read: local rows of one file, optionally with the index made earlier.
#[derive(Debug, Clone, Default)]
pub struct ReadRequest<'a> {
    /// Local rows `[start, end)`, clamped to the file's rows.
    pub rows: Range<u64>,
    /// The blocks from an earlier [`Locator::index`]; `None` reads from the start of the file.
    pub blocks: Option<&'a [Block]>,
    /// The schema from an earlier [`Locator::index`]; required for inferred formats to return
    /// the same types for every block. `None` infers it again (a direct read).
    pub schema: Option<SchemaRef>,
    /// Column names to return, in this order; `None` returns every column.
    pub projection: Option<&'a [String]>,
    /// Rows per returned batch at most (0 = the locator's default).
    pub batch_size: usize,
}

/// What to read with [`Locator::read_rows`]: chosen local rows of one file, optionally with
/// the index made earlier.
#[derive(Debug, Clone, Default)]
pub struct RowsRequest<'a> {
    /// Local rows, ascending and distinct, each below the file's row count (a row past the
    /// end is an error, not clamped).
    pub rows: &'a [u64],
    /// The blocks from an earlier [`Locator::index`]; `None` reads from the start of the file.
    pub blocks: Option<&'a [Block]>,
    /// The schema from an earlier [`Locator::index`] (see [`ReadRequest::schema`]).
    pub schema: Option<SchemaRef>,
    /// Column names to return, in this order; `None` returns every column.
    pub projection: Option<&'a [String]>,
}

impl<'a> RowsRequest<'a> {
    /// The [`ReadRequest`] of local rows `rows` with this request's blocks, schema and
    /// projection.
    pub fn range(&self, rows: Range<u64>) -> ReadRequest<'a> {
        ReadRequest {
            rows,
            blocks: self.blocks,
            schema: self.schema.clone(),
            projection: self.projection,
            batch_size: 0,
        }
    }
}

/// What [`Locator::read_rows`] of a few rows of a block costs next to a read of the whole
/// block ([`Locator::rows_cost`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsCost {
    /// Only up to the wanted rows is read (the row formats, from a checkpoint): a whole
    /// block costs far more.
    Rows,
    /// About the whole block's decode, though only the wanted values are built (a Parquet
    /// row group: random rows touch nearly every compressed page); a whole read costs a few
    /// times more.
    MostOfBlock,
    /// The whole block's decode: every touched block is decoded and checked whole, then cut
    /// down (an Arrow record batch), so a whole read costs the same.
    WholeBlock,
}

/// Record batches returned by [`Locator::read`].
pub type BatchIter = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// One data-file format: its names and the two operations over a file.
pub trait Locator: Send + Sync {
    /// The handler's name, for messages and registries (`parquet`, `json`, `csv`, ...).
    fn name(&self) -> &str;

    /// Lower-case extensions without the dot that this locator handles.
    fn extensions(&self) -> &[&str];

    /// The `format` names this locator produces in [`FileIndex::format`], so that a stored
    /// entry finds its locator again (`json` produces `ndjson` and `json_array`).
    fn formats(&self) -> &[&str];

    /// One pass over the file: row count, blocks, schema and statistics.
    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex>;

    /// True when [`Locator::index`] reads every byte of the file (the text and row formats),
    /// so that a caller indexing many files may have the OS read it ahead with
    /// [`crate::prefetch_file`]; false (the default) for formats indexed from a footer or
    /// from headers.
    fn reads_whole_file(&self) -> bool {
        false
    }

    /// What [`Locator::read_rows`] of a few rows of a block costs next to a read of the
    /// whole block, which tells a caller taking rows of the same blocks again and again
    /// whether keeping decoded blocks pays (see [`RowsCost`]).
    fn rows_cost(&self) -> RowsCost {
        RowsCost::Rows
    }

    /// True when the schema [`Locator::index`] returns is inferred from the file's values
    /// (the text and row formats: CSV and its kin, JSON, MsgPack, XLSX) rather than declared
    /// by the file: a Utf8 column then only says that no value of it read as another type,
    /// and one with no value at all has no type to give. False (the default) for formats
    /// whose files declare their schema.
    fn infers_schema(&self) -> bool {
        false
    }

    /// True when a scan should decode this format's reads on the thread that consumes the
    /// batches: column chunks that decode into a few large buffers (Parquet, Arrow IPC),
    /// measured faster so. False (the default) when reading ahead on a thread of its own pays
    /// (text parsing, the row formats, handlers registered at run time).
    fn decodes_inline(&self) -> bool {
        false
    }

    /// True when a read honours a [`ReadRequest::schema`] that types Utf8 columns Utf8View
    /// by decoding those columns as views directly (Parquet); false (the default) when the
    /// locator returns Utf8 whatever the request says.
    fn decodes_string_views(&self) -> bool {
        false
    }

    /// This format's locator reading its text in `encoding`, when the format is text whose
    /// encoding the caller chooses (the delimited formats, whose maps store it); `None` (the
    /// default) when no text encoding applies to the format.
    fn with_text_encoding(&self, encoding: TextEncoding) -> Option<Arc<dyn Locator>> {
        let _ = encoding;
        None
    }

    /// Reads local rows of the file as Arrow record batches (see [`ReadRequest`]).
    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter>;

    /// Reads the local rows `request.rows` (ascending, distinct) in one call: batches whose
    /// rows, one after the other, are exactly those rows in that order, with the same values
    /// [`Locator::read`] returns for each of them. The file is opened once.
    ///
    /// The default reads, for each block holding a wanted row (or, without blocks, once for
    /// the whole span), the range from its first to its last wanted row with
    /// [`Locator::read`] and keeps the wanted rows of each batch as it streams by; formats
    /// override it to decode only what the wanted rows need.
    fn read_rows(&self, path: &Path, request: &RowsRequest<'_>) -> Result<Vec<RecordBatch>> {
        take::read_rows_by_ranges(self, path, request)
    }

    /// Which bytes a read of some blocks touches ([`bytes::ByteLayout`]), so that a remote
    /// file is fetched by ranges; `None` (the default) when a read may touch any byte of the
    /// file, which is then fetched whole.
    fn byte_layout(&self) -> Option<bytes::ByteLayout> {
        None
    }

    /// Indexes a file that is not on this machine by reading only the ranges the index
    /// needs through `read` (a footer, say), as [`Locator::index`] would index it; `None`
    /// (the default) when the format's index reads the whole file, which the caller then
    /// fetches whole. `path` names the file in errors.
    fn index_ranged(
        &self,
        path: &Path,
        size: u64,
        read: &bytes::RangeRead,
        options: &IndexOptions,
    ) -> Option<Result<FileIndex>> {
        let _ = (path, size, read, options);
        None
    }
}
