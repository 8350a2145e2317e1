//! The entry columns of a loaded map other than `first_global_row` and the JSON ones
//! (`path`, `format`, `size_bytes`, `mtime_ms`, `row_count`, `blake3`, `etag`), decoded from
//! the map file one record batch at a time on first use and checked then
//! (`docs/lake-map.md` §2): loading a map decodes the `first_global_row` column of every
//! record batch and the rest of one, so `locate_row` reads the map file's metadata, that
//! column and the one record batch that holds the entry.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};

use super::{Columns, Firsts, LakeMap, LazyJson, TextColumn, column, map_schema};
use crate::config::MapConfig;
use crate::discovery::check_entry_paths;
use crate::error::{Error, Result};
use crate::etag::{ETAG_COLUMN, with_etag_column};

/// Decodes record batch `c` of the map file, projected to the head columns, or says why not.
pub(crate) type HeadDecoder =
    Arc<dyn Fn(usize) -> std::result::Result<RecordBatch, String> + Send + Sync>;

/// The path an entry of a record batch that does not decode reads as: it holds a NUL byte,
/// which no entry path may (the loader refuses one), so no file is ever opened by it, and
/// every fallible reader of the entry reports the damage.
pub(crate) const DAMAGED_PATH: &str = "\0<entry of a damaged record batch of the map file>";

/// The head columns of one record batch of entries.
#[derive(Debug, Clone)]
pub(crate) struct HeadChunk {
    pub(crate) path: StringArray,
    pub(crate) format: StringArray,
    pub(crate) size_bytes: Int64Array,
    pub(crate) mtime_ms: Int64Array,
    pub(crate) row_count: Int64Array,
    pub(crate) blake3: StringArray,
    pub(crate) etag: Option<StringArray>,
}

/// Why a record batch's head columns cannot be used: a message, and the entry it names
/// (for a path that escapes the root).
#[derive(Debug, Clone)]
pub(crate) enum Damage {
    /// The columns do not decode, or their values break a rule of §2.2.
    Invalid(String),
    /// Entry `.0`'s path is not a relative path inside the root (`.1` says why).
    Path(String, &'static str),
}

impl HeadChunk {
    /// The head columns of `batch` (by name), typed and without nulls where §2.2 allows none.
    pub(crate) fn of(batch: &RecordBatch) -> std::result::Result<HeadChunk, Damage> {
        let column = |name: &str| -> std::result::Result<&ArrayRef, Damage> {
            batch
                .schema()
                .index_of(name)
                .ok()
                .map(|i| batch.column(i))
                .ok_or_else(|| Damage::Invalid(format!("missing column {name:?}")))
        };
        let utf8 = |name: &str, nullable: bool| -> std::result::Result<StringArray, Damage> {
            let col = column(name)?;
            let arr = col.as_string_opt::<i32>().ok_or_else(|| {
                Damage::Invalid(format!(
                    "column {name:?} has type {}, expected Utf8",
                    col.data_type()
                ))
            })?;
            if !nullable && arr.null_count() > 0 {
                return Err(Damage::Invalid(format!("column {name:?} has nulls")));
            }
            Ok(arr.clone())
        };
        let int = |name: &str| -> std::result::Result<Int64Array, Damage> {
            let col = column(name)?;
            let arr = col.as_primitive_opt::<Int64Type>().ok_or_else(|| {
                Damage::Invalid(format!(
                    "column {name:?} has type {}, expected Int64",
                    col.data_type()
                ))
            })?;
            if arr.null_count() > 0 {
                return Err(Damage::Invalid(format!("column {name:?} has nulls")));
            }
            Ok(arr.clone())
        };
        let has_etag = batch.schema().index_of(ETAG_COLUMN).is_ok();
        Ok(HeadChunk {
            path: utf8("path", false)?,
            format: utf8("format", false)?,
            size_bytes: int("size_bytes")?,
            mtime_ms: int("mtime_ms")?,
            row_count: int("row_count")?,
            blake3: utf8("blake3", true)?,
            etag: if has_etag {
                Some(utf8(ETAG_COLUMN, true)?)
            } else {
                None
            },
        })
    }

    fn len(&self) -> usize {
        self.path.len()
    }

    /// Checks the chunk against §2.2, its entries being those whose first global rows are
    /// `firsts` and the row after them `end`: every column as long as the chunk, every path
    /// relative and inside the root, sizes and row counts not negative, and each entry's
    /// first row plus its row count the next entry's first row (or `end`).
    pub(crate) fn check(&self, firsts: &[i64], end: u64) -> std::result::Result<(), Damage> {
        let n = firsts.len();
        let lengths = [
            self.path.len(),
            self.format.len(),
            self.size_bytes.len(),
            self.mtime_ms.len(),
            self.row_count.len(),
            self.blake3.len(),
            self.etag.as_ref().map_or(n, Array::len),
        ];
        if lengths.iter().any(|&l| l != n) {
            return Err(Damage::Invalid(format!(
                "a record batch's columns are not all {n} entries long"
            )));
        }
        check_entry_paths(&self.path)
            .map_err(|(i, why)| Damage::Path(self.path.value(i).to_string(), why))?;
        for i in 0..n {
            let path = self.path.value(i);
            let size = self.size_bytes.value(i);
            let rows = self.row_count.value(i);
            let first = firsts[i];
            if size < 0 || rows < 0 || first < 0 {
                return Err(Damage::Invalid(format!(
                    "entry {path:?} has a negative size, row count or first row"
                )));
            }
            let next = firsts.get(i + 1).map_or(end, |&f| f as u64);
            if (first as u64).checked_add(rows as u64) != Some(next) {
                return Err(Damage::Invalid(format!(
                    "entry {path:?}: first_global_row {first} and row_count {rows}, but the \
                     next entry's first row is {next} (first_global_row is the running sum of \
                     row_count)"
                )));
            }
        }
        Ok(())
    }
}

enum Slot {
    Ok(Box<HeadChunk>),
    Damaged(Damage),
}

/// The head columns of a map's entries, in chunks (one record batch of the map file each, or
/// one for a map built in memory), each decoded and checked on first use.
#[derive(Clone)]
pub(crate) struct Heads {
    /// The first entry of each chunk, then the entry count.
    starts: Arc<[usize]>,
    slots: Arc<[OnceLock<Slot>]>,
    decode: Option<HeadDecoder>,
}

impl std::fmt::Debug for Heads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heads")
            .field("entries", &self.len())
            .field("chunks", &self.slots.len())
            .finish()
    }
}

impl Heads {
    /// One chunk, decoded already.
    pub(crate) fn decoded(chunk: HeadChunk) -> Heads {
        let n = chunk.len();
        let slot = OnceLock::new();
        let _ = slot.set(Slot::Ok(Box::new(chunk)));
        Heads {
            starts: Arc::from(vec![0, n]),
            slots: Arc::from(vec![slot]),
            decode: None,
        }
    }

    /// Chunks that `decode` reads on first use; `starts` holds the first entry of each chunk,
    /// then the entry count.
    pub(crate) fn lazy(starts: Arc<[usize]>, decode: HeadDecoder) -> Heads {
        let n = starts.len().saturating_sub(1);
        Heads {
            starts,
            slots: (0..n).map(|_| OnceLock::new()).collect(),
            decode: Some(decode),
        }
    }

    /// Entries.
    pub(crate) fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// Chunks.
    pub(crate) fn chunks(&self) -> usize {
        self.slots.len()
    }

    /// The entries of chunk `c`.
    pub(crate) fn range(&self, c: usize) -> std::ops::Range<usize> {
        self.starts[c]..self.starts[c + 1]
    }

    /// The chunk holding entry `i`, and the entry's row in it.
    pub(crate) fn chunk_of(&self, i: usize) -> (usize, usize) {
        let c = if self.slots.len() == 1 {
            0
        } else {
            self.starts.partition_point(|&s| s <= i) - 1
        };
        (c, i - self.starts[c])
    }

    /// Chunk `c`, decoded and checked by `check` (given the decoded head columns) on first
    /// use.
    pub(crate) fn chunk(
        &self,
        c: usize,
        check: impl FnOnce(&HeadChunk) -> std::result::Result<(), Damage>,
    ) -> std::result::Result<&HeadChunk, &Damage> {
        let slot = self.slots[c].get_or_init(|| {
            let Some(decode) = &self.decode else {
                return Slot::Damaged(Damage::Invalid("no decoder".into()));
            };
            let rows = self.starts[c + 1] - self.starts[c];
            let chunk = decode(c)
                .map_err(Damage::Invalid)
                .and_then(|b| HeadChunk::of(&b))
                .and_then(|h| {
                    if h.len() != rows {
                        return Err(Damage::Invalid(format!(
                            "{} entries where the metadata states {rows}",
                            h.len()
                        )));
                    }
                    check(&h).map(|()| h)
                });
            match chunk {
                Ok(h) => Slot::Ok(Box::new(h)),
                Err(d) => Slot::Damaged(d),
            }
        });
        match slot {
            Slot::Ok(h) => Ok(h),
            Slot::Damaged(d) => Err(d),
        }
    }
}

/// What the loader hands over for a map whose head columns are decoded one record batch at
/// a time: where each record batch's entries start (then the entry count), the
/// `first_global_row` column of each record batch, the row count of the last entry, and
/// the decoder of a record batch's head columns.
pub(crate) struct LazyHeads {
    pub(crate) starts: Arc<[usize]>,
    pub(crate) first_global_row: Vec<Int64Array>,
    pub(crate) last_row_count: Option<i64>,
    pub(crate) decode: HeadDecoder,
}

impl LakeMap {
    /// [`LakeMap::from_batch`] of a batch holding every column but the JSON ones, which
    /// `json` reads (when given) as they are used. Every entry is checked here.
    pub(crate) fn from_parts(
        root: &Path,
        config: MapConfig,
        map_schema: u32,
        batch: RecordBatch,
        json: Option<LazyJson>,
        origin: &Path,
    ) -> Result<Self> {
        let missing = |name: &str| Error::invalid(origin, format!("missing column {name:?}"));
        // The JSON columns are kept as bytes: the loader decodes them as Binary so that their
        // UTF-8 is checked per entry when read, not for the whole map at load time. A loaded
        // schema-3 map hands them in `json`, decoded chunk by chunk on first use.
        let text = |name: &str, nullable: bool, lazy: Option<TextColumn>| -> Result<TextColumn> {
            if let Some(col) = lazy {
                return Ok(col);
            }
            let col = column(&batch, name).ok_or_else(|| missing(name))?;
            let arr = TextColumn::decoded(col, nullable).ok_or_else(|| {
                Error::invalid(
                    origin,
                    format!(
                        "column {name:?} has type {}, expected Utf8",
                        col.data_type()
                    ),
                )
            })?;
            if !nullable && arr.has_nulls() {
                return Err(Error::invalid(origin, format!("column {name:?} has nulls")));
            }
            Ok(arr)
        };
        let head = HeadChunk::of(&batch).map_err(|d| damage_error(origin, None, &d))?;
        let first =
            column(&batch, "first_global_row").ok_or_else(|| missing("first_global_row"))?;
        let first_global_row = first_column(first, origin)?;
        let n = batch.num_rows();
        let firsts = first_global_row.values();
        if let Some(&f) = firsts.first()
            && f != 0
        {
            return Err(Error::invalid(
                origin,
                format!(
                    "entry {:?}: first_global_row {f}, expected 0 (the running sum of row_count)",
                    head.path.value(0)
                ),
            ));
        }
        let end = match n {
            0 => 0,
            _ => end_of(firsts[n - 1], head.row_count.value(n - 1)),
        };
        head.check(firsts, end)
            .map_err(|d| damage_error(origin, None, &d))?;
        let lazy = json;
        let cols = Columns {
            heads: Heads::decoded(head),
            first_global_row: Firsts::one(first_global_row),
            row_groups_json: text(
                "row_groups_json",
                false,
                lazy.as_ref().map(|l| l.row_groups_json.clone()),
            )?,
            stats_json: text(
                "stats_json",
                true,
                lazy.as_ref().map(|l| l.stats_json.clone()),
            )?,
            schema_json: text(
                "schema_json",
                true,
                lazy.as_ref().map(|l| l.schema_json.clone()),
            )?,
        };
        Ok(Self::assemble(root, origin, config, map_schema, cols, end))
    }

    /// The map of a schema-3 map file whose head columns are decoded one record batch at a
    /// time (`heads`) and whose JSON columns `json` reads as they are used. Checked here:
    /// `first_global_row` (no nulls, from 0, never decreasing) and the record batch of the
    /// last entry, which gives the total row count; each other record batch is checked (paths,
    /// sizes and row counts against `first_global_row`) when first decoded.
    pub(crate) fn from_lazy(
        root: &Path,
        config: MapConfig,
        heads: LazyHeads,
        json: LazyJson,
        origin: &Path,
    ) -> Result<Self> {
        let LazyHeads {
            starts,
            first_global_row,
            last_row_count,
            decode,
        } = heads;
        let damaged = |why: String| Error::invalid(origin, why);
        if first_global_row.iter().any(|a| a.null_count() > 0) {
            return Err(damaged("column \"first_global_row\" has nulls".into()));
        }
        let firsts = Firsts::new(Arc::clone(&starts), first_global_row).ok_or_else(|| {
            damaged("column \"first_global_row\" has a length other than the entries'".into())
        })?;
        let heads = Heads::lazy(starts, decode);
        let mut prev = 0i64;
        for (i, f) in firsts.iter().enumerate() {
            if f < prev || (i == 0 && f != 0) {
                return Err(damaged(format!(
                    "entry {i}: first_global_row {f} is not the running sum of row_count \
                     (the previous entry's is {prev})"
                )));
            }
            prev = f;
        }
        let total_rows = match (heads.len(), last_row_count) {
            (0, _) => 0,
            (_, Some(rows)) if rows >= 0 => end_of(prev, rows),
            _ => return Err(damaged("the last entry has no row count".into())),
        };
        let cols = Columns {
            heads,
            first_global_row: firsts,
            row_groups_json: json.row_groups_json,
            stats_json: json.stats_json,
            schema_json: json.schema_json,
        };
        Ok(Self::assemble(root, origin, config, 3, cols, total_rows))
    }

    fn assemble(
        root: &Path,
        origin: &Path,
        config: MapConfig,
        map_schema: u32,
        cols: Columns,
        total_rows: u64,
    ) -> Self {
        LakeMap {
            root: root.to_path_buf(),
            origin: origin.to_path_buf(),
            config,
            map_schema,
            cols,
            total_rows,
            total_bytes: OnceLock::new(),
            blocks: OnceLock::new(),
            mapped: None,
            source: None,
        }
    }

    /// Record batch `c`'s head columns, decoded and checked on first use.
    pub(super) fn head_chunk(&self, c: usize) -> std::result::Result<&HeadChunk, &Damage> {
        self.cols.heads.chunk(c, |h| {
            let range = self.cols.heads.range(c);
            let firsts = &self.cols.first_global_row;
            // The last record batch's last entry ends the lake.
            let end = firsts.get(range.end).map_or(self.total_rows, |f| f as u64);
            h.check(firsts.chunk(c), end)
        })
    }

    /// The error of record batch `c`'s damage.
    pub(super) fn chunk_error(&self, c: usize, d: &Damage) -> Error {
        let chunks = self.cols.heads.chunks();
        damage_error(&self.origin, (chunks > 1).then_some(c), d)
    }

    /// Decodes and checks the record batch holding entry `i` (panics when out of range):
    /// its damage as an error naming the map file. What every fallible reader of an entry
    /// (its blocks, the stale check before a read) does first.
    pub fn check_entry(&self, i: usize) -> Result<()> {
        assert!(
            i < self.total_files(),
            "entry {i} of {}",
            self.total_files()
        );
        let (c, _) = self.cols.heads.chunk_of(i);
        self.head_chunk(c)
            .map(|_| ())
            .map_err(|d| self.chunk_error(c, d))
    }

    /// Decodes and checks every record batch of the map's entries (paths, sizes, row counts
    /// against `first_global_row`): the first damage as an error naming the map file. What
    /// loading a map does not do, so that reading a few entries reads a few record batches.
    pub fn check_entries(&self) -> Result<()> {
        for c in 0..self.cols.heads.chunks() {
            self.head_chunk(c).map_err(|d| self.chunk_error(c, d))?;
        }
        Ok(())
    }

    /// Every record batch's head columns, concatenated (the one chunk itself, zero-copy,
    /// for a map of one record batch).
    fn head_columns(&self) -> Result<HeadChunk> {
        let n = self.cols.heads.chunks();
        let chunks = (0..n)
            .map(|c| self.head_chunk(c).map_err(|d| self.chunk_error(c, d)))
            .collect::<Result<Vec<&HeadChunk>>>()?;
        if let [one] = chunks.as_slice() {
            return Ok((*one).clone());
        }
        let concat = |arrays: Vec<&dyn Array>| -> Result<ArrayRef> {
            arrow_select::concat::concat(&arrays).map_err(|source| Error::Arrow {
                path: self.origin.clone(),
                source,
            })
        };
        let col = |f: fn(&HeadChunk) -> &dyn Array| concat(chunks.iter().map(|h| f(h)).collect());
        let batch = RecordBatch::try_from_iter(
            [
                ("path", col(|h| &h.path)?),
                ("format", col(|h| &h.format)?),
                ("size_bytes", col(|h| &h.size_bytes)?),
                ("mtime_ms", col(|h| &h.mtime_ms)?),
                ("row_count", col(|h| &h.row_count)?),
                ("blake3", col(|h| &h.blake3)?),
            ]
            .into_iter()
            .chain(match chunks.first().and_then(|h| h.etag.as_ref()) {
                Some(_) => Some((
                    ETAG_COLUMN,
                    concat(
                        chunks
                            .iter()
                            .filter_map(|h| h.etag.as_ref().map(|a| a as &dyn Array))
                            .collect(),
                    )?,
                )),
                None => None,
            }),
        )
        .map_err(|source| Error::Arrow {
            path: self.origin.clone(),
            source,
        })?;
        HeadChunk::of(&batch).map_err(|d| damage_error(&self.origin, None, &d))
    }

    /// The entry columns but the JSON ones (`path`, `format`, `size_bytes`, `mtime_ms`,
    /// `row_count`, `first_global_row`, `blake3`, and `etag` when the map has it), as one
    /// record batch: every record batch of the map decoded and checked, and for a map of one
    /// uncompressed record batch pointing into the memory map (zero-copy).
    pub fn batch(&self) -> Result<RecordBatch> {
        let h = self.head_columns()?;
        let mut columns: Vec<(&str, ArrayRef)> = vec![
            ("path", Arc::new(h.path)),
            ("format", Arc::new(h.format)),
            ("size_bytes", Arc::new(h.size_bytes)),
            ("mtime_ms", Arc::new(h.mtime_ms)),
            ("row_count", Arc::new(h.row_count)),
            (
                "first_global_row",
                Arc::new(self.cols.first_global_row.to_array()),
            ),
            ("blake3", Arc::new(h.blake3)),
        ];
        if let Some(etag) = h.etag {
            columns.push((ETAG_COLUMN, Arc::new(etag)));
        }
        RecordBatch::try_from_iter(columns).map_err(|source| Error::Arrow {
            path: self.origin.clone(),
            source,
        })
    }

    /// The entries as a schema-3 record batch with every column typed as the map file stores
    /// it (the JSON columns as Utf8, their UTF-8 checked here); what the writer stores.
    pub fn to_record_batch(&self) -> Result<RecordBatch> {
        let c = &self.cols;
        let h = self.head_columns()?;
        let utf8 = |a: &TextColumn, name: &str| -> Result<ArrayRef> {
            a.to_utf8().map(|s| Arc::new(s) as ArrayRef).map_err(|i| {
                Error::invalid(
                    &self.root,
                    format!(
                        "column {name}: the value of entry {:?} is not valid UTF-8",
                        h.path.value(i)
                    ),
                )
            })
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(h.path.clone()),
            Arc::new(h.format.clone()),
            Arc::new(h.size_bytes.clone()),
            Arc::new(h.mtime_ms.clone()),
            Arc::new(h.row_count.clone()),
            Arc::new(c.first_global_row.to_array()),
            utf8(&c.row_groups_json, "row_groups_json")?,
            Arc::new(h.blake3.clone()),
            utf8(&c.stats_json, "stats_json")?,
            utf8(&c.schema_json, "schema_json")?,
        ];
        let mut schema = map_schema(&self.config);
        let mut columns = columns;
        if let Some(etag) = &h.etag {
            (schema, columns) = with_etag_column(&schema, columns, Arc::new(etag.clone()));
        }
        RecordBatch::try_new(schema, columns).map_err(|source| Error::Arrow {
            path: self.root.clone(),
            source,
        })
    }
}

/// The row after an entry whose first row is `first` and which holds `rows` rows (saturated:
/// the check of the entry then fails).
fn end_of(first: i64, rows: i64) -> u64 {
    (first.max(0) as u64).saturating_add(rows.max(0) as u64)
}

/// The `first_global_row` column: Int64 without nulls.
pub(crate) fn first_column(col: &ArrayRef, origin: &Path) -> Result<Int64Array> {
    let arr = col.as_primitive_opt::<Int64Type>().ok_or_else(|| {
        Error::invalid(
            origin,
            format!(
                "column \"first_global_row\" has type {}, expected Int64",
                col.data_type()
            ),
        )
    })?;
    if arr.null_count() > 0 {
        return Err(Error::invalid(
            origin,
            "column \"first_global_row\" has nulls",
        ));
    }
    Ok(arr.clone())
}

/// The error of a record batch's damage (`chunk`: which record batch, when the map has
/// several).
fn damage_error(origin: &Path, chunk: Option<usize>, d: &Damage) -> Error {
    match d {
        Damage::Invalid(why) => match chunk {
            Some(c) => Error::invalid(origin, format!("record batch {c} of the map: {why}")),
            None => Error::invalid(origin, why.clone()),
        },
        Damage::Path(entry, why) => Error::PathEscape {
            map: origin.to_path_buf(),
            entry: entry.clone(),
            message: (*why).to_string(),
        },
    }
}
