//! The in-memory [`LakeMap`] (`docs/lake-map.md` §2.3): the entries as Arrow columns
//! (zero-copy from the map file's memory map), the totals, the configuration,
//! [`LakeMap::locate_row`] and the slice plan that [`crate::slice`] reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};

mod firsts;
mod heads;
mod rebuild;
mod text_column;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use firsts::Firsts;
use heads::{DAMAGED_PATH, HeadChunk, Heads};
pub(crate) use heads::{HeadDecoder, LazyHeads, first_column};
use lake_locators::{Block, Stats};
pub(crate) use rebuild::EntryFrom;
use serde_json::Value;
pub(crate) use text_column::{ChunkDecoder, DAMAGED, TextColumn};

use crate::config::{MapConfig, stats_columns_to_json};
use crate::error::{Error, Result};

/// The map schema this crate writes.
pub const MAP_SCHEMA: u32 = 3;

/// The ten columns of map schema 3 (§2.2) with the schema metadata of §2.1.
pub fn map_schema(config: &MapConfig) -> SchemaRef {
    let fields = vec![
        Field::new("path", DataType::Utf8, false),
        Field::new("format", DataType::Utf8, false),
        Field::new("size_bytes", DataType::Int64, false),
        Field::new("mtime_ms", DataType::Int64, false),
        Field::new("row_count", DataType::Int64, false),
        Field::new("first_global_row", DataType::Int64, false),
        Field::new("row_groups_json", DataType::Utf8, false),
        Field::new("blake3", DataType::Utf8, true),
        Field::new("stats_json", DataType::Utf8, true),
        Field::new("schema_json", DataType::Utf8, true),
    ];
    let metadata: HashMap<String, String> = [
        ("bazan.kind", "lake_map".to_string()),
        ("bazan.version", "1".to_string()),
        ("bazan.payload", "arrow_ipc".to_string()),
        ("bazan.map_schema", MAP_SCHEMA.to_string()),
        (
            "bazan.checkpoint_stride_rows",
            config.checkpoint_stride_rows.to_string(),
        ),
        ("bazan.fingerprint", config.fingerprint.as_str().to_string()),
        (
            "bazan.stats_columns",
            stats_columns_to_json(&config.stats_columns).to_string(),
        ),
        (
            "bazan.text_encoding",
            config.text_encoding.as_str().to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// One map entry, owned (what [`crate::create`] produces and the writer stores).
#[derive(Debug, Clone, PartialEq)]
pub struct MapEntry {
    /// Path relative to the lake root, `/`-separated.
    pub path: String,
    /// Handler name (`parquet`, `csv`, `ndjson`, a dynamic handler's name, ...).
    pub format: String,
    /// Size in bytes when indexed.
    pub size_bytes: u64,
    /// Modification time in ms since the Unix epoch when indexed.
    pub mtime_ms: i64,
    /// Rows in the file.
    pub row_count: u64,
    /// Global index of the file's first row.
    pub first_global_row: u64,
    /// JSON array of the file's blocks (`[]` when none).
    pub row_groups_json: String,
    /// Lowercase hex BLAKE3 digest, when the fingerprint mode is `blake3`.
    pub blake3: Option<String>,
    /// JSON object of column statistics, `None` when stats are off.
    pub stats_json: Option<String>,
    /// The file's schema as JSON (`[{name, type, nullable}]`).
    pub schema_json: Option<String>,
}

/// A borrowed view of one entry of a loaded map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry<'a> {
    /// Position of the entry in map order.
    pub index: usize,
    /// Path relative to the lake root, `/`-separated.
    pub path: &'a str,
    /// Handler name.
    pub format: &'a str,
    /// Size in bytes when indexed.
    pub size_bytes: u64,
    /// Modification time in ms since the Unix epoch when indexed.
    pub mtime_ms: i64,
    /// Rows in the file.
    pub row_count: u64,
    /// Global index of the file's first row.
    pub first_global_row: u64,
    /// JSON array of blocks (`[]` when none).
    pub row_groups_json: &'a str,
    /// BLAKE3 digest (fingerprint `blake3` only).
    pub blake3: Option<&'a str>,
    /// Statistics JSON, `None` when off.
    pub stats_json: Option<&'a str>,
    /// Schema JSON.
    pub schema_json: Option<&'a str>,
}

impl Entry<'_> {
    /// The owned form of this entry.
    pub fn to_owned_entry(&self) -> MapEntry {
        MapEntry {
            path: self.path.to_string(),
            format: self.format.to_string(),
            size_bytes: self.size_bytes,
            mtime_ms: self.mtime_ms,
            row_count: self.row_count,
            first_global_row: self.first_global_row,
            row_groups_json: self.row_groups_json.to_string(),
            blake3: self.blake3.map(str::to_string),
            stats_json: self.stats_json.map(str::to_string),
            schema_json: self.schema_json.map(str::to_string),
        }
    }

    /// The parsed statistics (`None` when off).
    pub fn stats(&self) -> Result<Option<Stats>> {
        self.stats_json
            .map(|s| {
                serde_json::from_str(s)
                    .map_err(|e| Error::invalid(self.path, format!("stats_json of the entry: {e}")))
            })
            .transpose()
    }

    /// The parsed schema JSON (`None` when not stored).
    pub fn schema_value(&self) -> Result<Option<Value>> {
        self.schema_json
            .map(|s| {
                serde_json::from_str(s).map_err(|e| {
                    Error::invalid(self.path, format!("schema_json of the entry: {e}"))
                })
            })
            .transpose()
    }
}

/// The fields of an entry that a check of its file needs ([`LakeMap::head`]), read without
/// its blocks, statistics or schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryHead<'a> {
    /// Path relative to the lake root, `/`-separated.
    pub path: &'a str,
    /// Handler name.
    pub format: &'a str,
    /// Size in bytes when indexed.
    pub size_bytes: u64,
    /// Modification time in ms since the Unix epoch when indexed.
    pub mtime_ms: i64,
    /// Rows in the file.
    pub row_count: u64,
    /// Global index of the file's first row.
    pub first_global_row: u64,
    /// BLAKE3 digest (fingerprint `blake3` only).
    pub blake3: Option<&'a str>,
    /// True when the entry stores statistics.
    pub has_stats: bool,
    /// True when the entry stores its schema.
    pub has_schema: bool,
}

/// Where a global row lives: the entry index, the row within the file, and its block.
///
/// It is light on purpose: `locate_row` is a hot path, so the entry's ten fields are not
/// read from the map until [`Location::entry`] asks for them, and the block is borrowed from
/// the map's parsed-blocks cache instead of cloned.
#[derive(Clone, Copy)]
pub struct Location<'a> {
    /// The global row asked for.
    pub global_row: u64,
    /// Position in map order of the entry holding the row.
    pub index: usize,
    /// The row within the file.
    pub local_row: u64,
    /// The block holding it, `None` for entries without locators.
    pub block: Option<&'a Block>,
    map: &'a LakeMap,
}

impl<'a> Location<'a> {
    /// The entry holding the row, borrowed from the map.
    pub fn entry(&self) -> Entry<'a> {
        self.map.entry(self.index)
    }

    /// The head of the entry holding the row (path, format, sizes; no statistics or schema
    /// read from the map).
    pub fn head(&self) -> EntryHead<'a> {
        self.map.head(self.index)
    }
}

impl std::fmt::Debug for Location<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Location")
            .field("global_row", &self.global_row)
            .field("index", &self.index)
            .field("path", &self.entry().path)
            .field("local_row", &self.local_row)
            .field("block", &self.block)
            .finish()
    }
}

impl PartialEq for Location<'_> {
    /// Two locations are equal when they point at the same row of the same map.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.map, other.map)
            && self.global_row == other.global_row
            && self.index == other.index
            && self.local_row == other.local_row
            && self.block == other.block
    }
}

/// One file's part of a slice: local rows `[local_start, local_start + len)` of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Index of the entry in map order.
    pub index: usize,
    /// First local row.
    pub local_start: u64,
    /// Rows.
    pub len: u64,
}

/// The JSON columns of a loaded map, read from the map file as they are used.
#[derive(Debug, Clone)]
pub(crate) struct LazyJson {
    pub(crate) row_groups_json: TextColumn,
    pub(crate) stats_json: TextColumn,
    pub(crate) schema_json: TextColumn,
}

/// One entry's parsed blocks, filled on first use.
type BlockSlot = OnceLock<ParsedBlocks>;

/// The parsed blocks of a record batch's entries, allocated on first use.
type BlockChunk = OnceLock<Box<[BlockSlot]>>;

/// The Lake Map in memory: entries, totals and configuration.
pub struct LakeMap {
    root: PathBuf,
    /// The map file the map was loaded from (the root for a map built in memory): what the
    /// error of a damaged record batch names.
    origin: PathBuf,
    config: MapConfig,
    map_schema: u32,
    cols: Columns,
    total_rows: u64,
    /// Sum of the entries' sizes, on first use (it reads every record batch of the map).
    total_bytes: OnceLock<u64>,
    /// Parsed blocks per entry, allocated a record batch of entries at a time on the first
    /// `blocks` call of one of them, so that loading a map and locating a row allocate
    /// nothing per entry of the map.
    blocks: OnceLock<Box<[BlockChunk]>>,
    /// The memory-mapped map file the columns point into (maps loaded from disk).
    mapped: Option<arrow_buffer::Buffer>,
    /// Where the entries' bytes are read from when they are not files under `root` (an
    /// object store); `None` reads the files under `root`.
    source: Option<Arc<dyn crate::source::EntrySource>>,
}

impl std::fmt::Debug for LakeMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LakeMap")
            .field("root", &self.root)
            .field("config", &self.config)
            .field("map_schema", &self.map_schema)
            .field("total_files", &self.total_files())
            .field("total_rows", &self.total_rows)
            .finish()
    }
}

#[derive(Debug, Clone)]
struct Columns {
    /// `path`, `format`, `size_bytes`, `mtime_ms`, `row_count`, `blake3` and the optional
    /// eleventh column `etag` (each object's ETag as its store returned it, in maps of lakes
    /// in object stores), one record batch at a time.
    heads: Heads,
    first_global_row: Firsts,
    row_groups_json: TextColumn,
    stats_json: TextColumn,
    schema_json: TextColumn,
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a ArrayRef> {
    batch.schema().index_of(name).ok().map(|i| batch.column(i))
}

fn opt_str(a: &StringArray, i: usize) -> Option<&str> {
    if a.is_null(i) { None } else { Some(a.value(i)) }
}

impl LakeMap {
    /// Builds a map from owned entries in map order; `first_global_row` must already be the
    /// running sum of `row_count` (see [`assign_first_global_rows`]).
    pub fn from_entries(root: &Path, config: MapConfig, entries: &[MapEntry]) -> Result<Self> {
        let batch = entries_to_batch(entries, &config)?;
        Self::from_batch(root, config, MAP_SCHEMA, batch, root)
    }

    /// The ETag stored for entry `i` (maps of object-store lakes; `None` otherwise).
    pub fn etag(&self, i: usize) -> Option<&str> {
        let (h, j) = self.head_at(i);
        h.and_then(|h| h.etag.as_ref()).and_then(|a| opt_str(a, j))
    }

    /// Reads the entries' bytes through `source` instead of from the files under the root
    /// (a lake in an object store).
    pub fn with_source(mut self, source: Arc<dyn crate::source::EntrySource>) -> Self {
        self.source = Some(source);
        self
    }

    /// The source set by [`LakeMap::with_source`], if any.
    pub fn source(&self) -> Option<&Arc<dyn crate::source::EntrySource>> {
        self.source.as_ref()
    }

    /// Wraps a schema-3 shaped batch, checking every entry (`origin` names the map file in
    /// errors).
    pub(crate) fn from_batch(
        root: &Path,
        config: MapConfig,
        map_schema: u32,
        batch: RecordBatch,
        origin: &Path,
    ) -> Result<Self> {
        Self::from_parts(root, config, map_schema, batch, None, origin)
    }

    /// Keeps the memory map the columns were decoded from (zero-copy) alive and visible.
    pub(crate) fn with_mapping(mut self, mapped: arrow_buffer::Buffer) -> Self {
        self.mapped = Some(mapped);
        self
    }

    /// The bytes of the memory-mapped map file this map was loaded from, if any. The entry
    /// columns of a schema-3 map point into these bytes (zero-copy).
    pub fn mapped_bytes(&self) -> Option<&[u8]> {
        self.mapped.as_ref().map(|b| b.as_slice())
    }

    /// The lake root the entry paths are relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The stored configuration (old defaults for legacy maps).
    pub fn config(&self) -> &MapConfig {
        &self.config
    }

    /// The map schema the map was read from (1, 2 or 3).
    pub fn map_schema(&self) -> u32 {
        self.map_schema
    }

    /// True when the map stores locators (schema 2 and 3).
    pub fn has_locators(&self) -> bool {
        self.map_schema >= 2
    }

    /// Number of entries.
    pub fn total_files(&self) -> usize {
        self.cols.heads.len()
    }

    /// Sum of the entries' row counts.
    pub fn total_rows(&self) -> u64 {
        self.total_rows
    }

    /// Sum of the entries' sizes (read from every record batch of the map on the first
    /// call; an entry of a damaged record batch counts 0).
    pub fn total_bytes(&self) -> u64 {
        *self.total_bytes.get_or_init(|| {
            (0..self.cols.heads.chunks())
                .filter_map(|c| self.head_chunk(c).ok())
                .flat_map(|h| h.size_bytes.values().iter())
                .fold(0u64, |sum, &s| sum.saturating_add(s as u64))
        })
    }

    /// True when the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.total_files() == 0
    }

    /// The head columns of the record batch holding entry `i` (`None` when it is damaged)
    /// and the entry's row in it.
    fn head_at(&self, i: usize) -> (Option<&HeadChunk>, usize) {
        let (c, j) = self.cols.heads.chunk_of(i);
        (self.head_chunk(c).ok(), j)
    }

    /// Entry `i`'s row count: what its record batch stores, or for an entry of a damaged
    /// record batch the distance to the next entry's first row.
    fn rows_of(&self, h: Option<&HeadChunk>, i: usize, j: usize) -> u64 {
        match h {
            Some(h) => h.row_count.value(j) as u64,
            None => {
                let firsts = &self.cols.first_global_row;
                let next = firsts.get(i + 1).map_or(self.total_rows, |f| f as u64);
                next.saturating_sub(firsts.value(i) as u64)
            }
        }
    }

    /// Entry `i` in map order (panics when out of range, like slice indexing). An entry of a
    /// record batch of the map file that does not decode or check reads with a path no file
    /// has (it holds a NUL byte) and without blocks, statistics or schema; the fallible
    /// readers ([`LakeMap::blocks`], [`LakeMap::locate_row`], [`LakeMap::check_entries`])
    /// report the damage.
    pub fn entry(&self, i: usize) -> Entry<'_> {
        let c = &self.cols;
        let (h, j) = self.head_at(i);
        let damaged = h.is_none();
        Entry {
            index: i,
            path: h.map_or(DAMAGED_PATH, |h| h.path.value(j)),
            format: h.map_or(DAMAGED, |h| h.format.value(j)),
            size_bytes: h.map_or(0, |h| h.size_bytes.value(j) as u64),
            mtime_ms: h.map_or(i64::MIN, |h| h.mtime_ms.value(j)),
            row_count: self.rows_of(h, i, j),
            first_global_row: c.first_global_row.value(i) as u64,
            row_groups_json: if damaged {
                DAMAGED
            } else {
                c.row_groups_json.str(i).unwrap_or("[]")
            },
            blake3: h.and_then(|h| opt_str(&h.blake3, j)),
            stats_json: if damaged { None } else { c.stats_json.str(i) },
            schema_json: if damaged { None } else { c.schema_json.str(i) },
        }
    }

    /// Entry `i`'s fields that an update or a check compares with the file, without
    /// reading its blocks, statistics or schema (whose presence the map file's metadata
    /// states for most record batches): what [`LakeMap::entry`] costs a record batch's
    /// JSON decompression for. Panics when out of range, like slice indexing.
    pub fn head(&self, i: usize) -> EntryHead<'_> {
        let c = &self.cols;
        let (h, j) = self.head_at(i);
        EntryHead {
            path: h.map_or(DAMAGED_PATH, |h| h.path.value(j)),
            format: h.map_or(DAMAGED, |h| h.format.value(j)),
            size_bytes: h.map_or(0, |h| h.size_bytes.value(j) as u64),
            mtime_ms: h.map_or(i64::MIN, |h| h.mtime_ms.value(j)),
            row_count: self.rows_of(h, i, j),
            first_global_row: c.first_global_row.value(i) as u64,
            blake3: h.and_then(|h| opt_str(&h.blake3, j)),
            has_stats: h.is_some() && !c.stats_json.is_null(i),
            has_schema: h.is_some() && !c.schema_json.is_null(i),
        }
    }

    /// Entry `i`'s path (panics when out of range).
    pub(crate) fn path(&self, i: usize) -> &str {
        let (h, j) = self.head_at(i);
        h.map_or(DAMAGED_PATH, |h| h.path.value(j))
    }

    /// The dictionary of the `schema_json` column when it is dictionary-encoded.
    pub(crate) fn schema_dictionary(&self) -> Option<arrow_array::BinaryArray> {
        self.cols.schema_json.dictionary_values()
    }

    /// Every entry in map order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = Entry<'_>> + '_ {
        (0..self.total_files()).map(|i| self.entry(i))
    }

    /// Every entry, owned.
    pub fn to_entries(&self) -> Vec<MapEntry> {
        self.entries().map(|e| e.to_owned_entry()).collect()
    }

    /// The entry of a relative path, if the map has one.
    pub fn find(&self, path: &str) -> Option<Entry<'_>> {
        (0..self.total_files())
            .find(|&i| self.path(i) == path)
            .map(|i| self.entry(i))
    }

    /// The parsed blocks of entry `i` (cached after the first call).
    pub fn blocks(&self, i: usize) -> Result<Arc<Vec<Block>>> {
        self.cached_blocks(i).map(|p| Arc::clone(&p.blocks))
    }

    /// The cache slot of entry `i`'s parsed blocks, parsing `row_groups_json` on first use.
    /// A hit costs two atomic loads and no reference-count traffic.
    fn cached_blocks(&self, i: usize) -> Result<&ParsedBlocks> {
        let (c, j) = self.cols.heads.chunk_of(i);
        let cache = self.blocks.get_or_init(|| {
            (0..self.cols.heads.chunks())
                .map(|_| OnceLock::new())
                .collect()
        });
        let slot = &cache[c]
            .get_or_init(|| self.cols.heads.range(c).map(|_| OnceLock::new()).collect())[j];
        if let Some(b) = slot.get() {
            return Ok(b);
        }
        self.check_entry(i)?;
        let path = self.path(i);
        let json = self.cols.row_groups_json.str(i).unwrap_or("[]");
        let parsed: Vec<Block> = serde_json::from_str(json).map_err(|err| {
            Error::invalid(
                self.root.join(path),
                format!("row_groups_json of the entry: {err}"),
            )
        })?;
        Ok(slot.get_or_init(|| ParsedBlocks::new(parsed)))
    }

    /// The entry index holding global row `g`, and the local row (no file access).
    pub fn locate_index(&self, g: u64) -> Result<(usize, u64)> {
        if g >= self.total_rows {
            return Err(Error::RowOutOfRange {
                row: g,
                total_rows: self.total_rows,
            });
        }
        let firsts = &self.cols.first_global_row;
        // Zero-row entries share their first row with the next entry; the last entry whose
        // first row is <= g is the one holding it.
        let i = firsts.last_at_or_before(g).ok_or(Error::RowOutOfRange {
            row: g,
            total_rows: self.total_rows,
        })?;
        Ok((i, g - firsts.value(i) as u64))
    }

    /// `locate_row(g)`: the entry index, local row and block of global row `g` (the entry's
    /// fields through [`Location::entry`]). Trusts the catalog.
    pub fn locate_row(&self, g: u64) -> Result<Location<'_>> {
        let (i, local) = self.locate_index(g)?;
        let block = self.cached_blocks(i)?.find(local);
        Ok(Location {
            global_row: g,
            index: i,
            local_row: local,
            block,
            map: self,
        })
    }

    /// The files and local rows of global rows `[start, start + len)`, clamped at the end of
    /// the lake; zero-row files are not listed. A zero-length slice inside the lake gives one
    /// empty segment in the file holding `start`.
    pub fn plan_slice(&self, start: u64, len: u64) -> Vec<Segment> {
        let end = start.saturating_add(len).min(self.total_rows);
        let mut out = Vec::new();
        if len == 0 {
            // An empty slice inside the lake still names the file it starts in.
            if let Ok((index, local_start)) = self.locate_index(start) {
                out.push(Segment {
                    index,
                    local_start,
                    len: 0,
                });
            }
            return out;
        }
        if start >= end {
            return out;
        }
        let Ok((mut i, mut local)) = self.locate_index(start) else {
            return out;
        };
        let mut at = start;
        while at < end && i < self.total_files() {
            let e = self.head(i);
            let take = (e.row_count - local).min(end - at);
            if take > 0 {
                out.push(Segment {
                    index: i,
                    local_start: local,
                    len: take,
                });
            }
            at += take;
            local = 0;
            i += 1;
        }
        out
    }
}

/// One entry's parsed blocks, and whether binary search over them gives the same answer
/// as a scan.
#[derive(Debug)]
struct ParsedBlocks {
    blocks: Arc<Vec<Block>>,
    /// First rows never decrease and blocks with rows do not overlap (what every locator
    /// writes); a hand-edited or foreign map may break this, and is then scanned.
    sorted: bool,
}

impl ParsedBlocks {
    fn new(blocks: Vec<Block>) -> Self {
        let mut sorted = true;
        let mut prev_first = 0u64;
        let mut end = 0u64;
        for b in &blocks {
            if b.first_row < prev_first || (b.row_count > 0 && b.first_row < end) {
                sorted = false;
                break;
            }
            prev_first = b.first_row;
            if b.row_count > 0 {
                end = b.first_row.saturating_add(b.row_count);
            }
        }
        ParsedBlocks {
            blocks: Arc::new(blocks),
            sorted,
        }
    }

    /// The first block with rows that holds local row `local`. In a sorted list only the
    /// last block with rows starting at or before `local` can hold it, so a binary search
    /// finds it; otherwise the blocks are scanned in order.
    fn find(&self, local: u64) -> Option<&Block> {
        let holds = |b: &&Block| {
            b.row_count > 0 && local >= b.first_row && local - b.first_row < b.row_count
        };
        if !self.sorted {
            return self.blocks.iter().find(holds);
        }
        let after = self.blocks.partition_point(|b| b.first_row <= local);
        self.blocks[..after]
            .iter()
            .rev()
            .find(|b| b.row_count > 0)
            .filter(holds)
    }
}

/// Sets each entry's `first_global_row` to the sum of the row counts before it.
pub fn assign_first_global_rows(entries: &mut [MapEntry]) {
    let mut next = 0u64;
    for e in entries {
        e.first_global_row = next;
        next += e.row_count;
    }
}

fn to_i64(v: u64, what: &str, path: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::Config(format!("{path}: {what} {v} exceeds i64")))
}

/// The schema-3 record batch of entries.
pub(crate) fn entries_to_batch(entries: &[MapEntry], config: &MapConfig) -> Result<RecordBatch> {
    let mut size = Vec::with_capacity(entries.len());
    let mut rows = Vec::with_capacity(entries.len());
    let mut first = Vec::with_capacity(entries.len());
    for e in entries {
        size.push(to_i64(e.size_bytes, "size_bytes", &e.path)?);
        rows.push(to_i64(e.row_count, "row_count", &e.path)?);
        first.push(to_i64(e.first_global_row, "first_global_row", &e.path)?);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            entries.iter().map(|e| &e.path),
        )),
        Arc::new(StringArray::from_iter_values(
            entries.iter().map(|e| &e.format),
        )),
        Arc::new(Int64Array::from(size)),
        Arc::new(Int64Array::from_iter_values(
            entries.iter().map(|e| e.mtime_ms),
        )),
        Arc::new(Int64Array::from(rows)),
        Arc::new(Int64Array::from(first)),
        Arc::new(StringArray::from_iter_values(
            entries.iter().map(|e| &e.row_groups_json),
        )),
        Arc::new(StringArray::from_iter(
            entries.iter().map(|e| e.blake3.as_deref()),
        )),
        Arc::new(StringArray::from_iter(
            entries.iter().map(|e| e.stats_json.as_deref()),
        )),
        Arc::new(StringArray::from_iter(
            entries.iter().map(|e| e.schema_json.as_deref()),
        )),
    ];
    RecordBatch::try_new(map_schema(config), columns).map_err(|source| Error::Arrow {
        path: PathBuf::from("<map>"),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(ordinal: u64, first_row: u64, row_count: u64) -> Block {
        Block::rows(ordinal, first_row, row_count)
    }

    /// The answer of the original linear scan, which the binary search must match.
    fn scan(blocks: &[Block], local: u64) -> Option<u64> {
        blocks
            .iter()
            .find(|b| b.row_count > 0 && b.row_range().contains(&local))
            .map(|b| b.ordinal)
    }

    fn check(blocks: Vec<Block>, expect_sorted: bool) {
        let max = blocks
            .iter()
            .map(|b| b.first_row + b.row_count)
            .max()
            .unwrap_or(0);
        let parsed = ParsedBlocks::new(blocks.clone());
        assert_eq!(parsed.sorted, expect_sorted, "{blocks:?}");
        for local in 0..max + 2 {
            assert_eq!(
                parsed.find(local).map(|b| b.ordinal),
                scan(&blocks, local),
                "local row {local} in {blocks:?}"
            );
        }
    }

    #[test]
    fn sorted_blocks_use_binary_search_and_match_a_scan() {
        check(vec![], true);
        check(
            vec![block(0, 0, 10), block(1, 10, 10), block(2, 20, 5)],
            true,
        );
        // Zero-row blocks before, between and after, sharing first rows with real ones.
        check(
            vec![
                block(0, 0, 0),
                block(1, 0, 4),
                block(2, 4, 0),
                block(3, 4, 0),
                block(4, 4, 6),
                block(5, 10, 0),
            ],
            true,
        );
        // A gap: rows 5..8 are in no block.
        check(vec![block(0, 0, 5), block(1, 8, 2)], true);
    }

    #[test]
    fn unsorted_or_overlapping_blocks_fall_back_to_a_scan() {
        check(vec![block(0, 10, 10), block(1, 0, 10)], false);
        check(vec![block(0, 0, 10), block(1, 5, 10)], false);
        check(vec![block(0, 0, 4), block(1, 4, 0), block(2, 2, 0)], false);
    }

    #[test]
    fn location_reads_its_entry_lazily_and_borrows_its_block() {
        let entries = vec![
            MapEntry {
                path: "a.csv".into(),
                format: "csv".into(),
                size_bytes: 10,
                mtime_ms: 1,
                row_count: 3,
                first_global_row: 0,
                row_groups_json: r#"[{"ordinal":0,"first_row":0,"row_count":3}]"#.into(),
                blake3: None,
                stats_json: None,
                schema_json: None,
            },
            MapEntry {
                path: "b.csv".into(),
                format: "csv".into(),
                size_bytes: 20,
                mtime_ms: 2,
                row_count: 4,
                first_global_row: 3,
                row_groups_json: "[]".into(),
                blake3: None,
                stats_json: None,
                schema_json: None,
            },
        ];
        let map = LakeMap::from_entries(Path::new("/lake"), MapConfig::default(), &entries)
            .expect("valid entries");
        let l = map.locate_row(2).expect("row 2");
        assert_eq!((l.index, l.local_row), (0, 2));
        assert_eq!(l.entry(), map.entry(0));
        assert_eq!(l.block.map(|b| b.ordinal), Some(0));
        assert!(std::ptr::eq(
            l.block.expect("block"),
            &map.blocks(0).expect("blocks")[0]
        ));
        let l = map.locate_row(5).expect("row 5");
        assert_eq!((l.entry().path, l.local_row, l.block), ("b.csv", 2, None));
        assert_eq!(l, map.locate_row(5).expect("row 5"));
        assert_ne!(l, map.locate_row(6).expect("row 6"));
    }
}
