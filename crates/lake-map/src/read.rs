//! `slice`: global rows `[start, start + len)` read file by file. Before a file is touched,
//! its current size and mtime are compared with the entry; then its handler reads only the
//! needed blocks (the stored locators), or the file from its start when there are none.
//! [`LakeMap::read_rows`] reads chosen rows of one file in one call (the random take).

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::RecordBatch;
use lake_locators::types::schema_from_json;
use lake_locators::{BatchIter, Block, ReadRequest, RowsRequest};

use crate::discovery::{mtime_ms, resolve_entry};
use crate::error::{Error, Result};
use crate::handlers::{Handler, HandlerRegistry};
use crate::lake_map::{LakeMap, Segment};

/// One file's rows of a slice.
#[derive(Debug, Clone)]
pub struct FileSlice {
    /// Index of the entry in map order.
    pub index: usize,
    /// The entry's relative path.
    pub path: String,
    /// The entry's format.
    pub format: String,
    /// First local row.
    pub local_start: u64,
    /// Rows.
    pub len: u64,
    /// The rows, in the file's schema (projected when asked).
    pub batches: Vec<RecordBatch>,
}

/// An entry ready to read (see `LakeMap::open_entry`).
struct OpenEntry {
    path: PathBuf,
    handler: Handler,
    schema: Option<arrow_schema::SchemaRef>,
    /// The stored blocks, `None` for a dynamic handler or an entry without blocks.
    blocks: Option<Arc<Vec<Block>>>,
}

impl OpenEntry {
    fn blocks(&self) -> Option<&[Block]> {
        self.blocks.as_deref().map(Vec::as_slice)
    }
}

impl LakeMap {
    /// Checks that entry `i`'s file still has the stored size and mtime and returns its full
    /// path (a missing, changed or escaping file is an error naming it).
    /// For a lake with an [`crate::EntrySource`], the source checks the entry its own way.
    pub fn check_fresh(&self, i: usize) -> Result<PathBuf> {
        self.check_entry(i)?;
        if let Some(source) = self.source() {
            return source.prepare(self.source_entry(i), None);
        }
        let e = self.entry(i);
        let full = resolve_entry(self.root(), e.path)?;
        let meta = match std::fs::metadata(&full) {
            Ok(m) => m,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Stale {
                    path: full,
                    message: "the file is missing".into(),
                });
            }
            Err(err) => return Err(Error::io(&full, err)),
        };
        if !meta.is_file() {
            return Err(Error::Stale {
                path: full,
                message: "no longer a regular file".into(),
            });
        }
        if meta.len() != e.size_bytes {
            return Err(Error::Stale {
                path: full,
                message: format!(
                    "size is now {} bytes, the map says {}",
                    meta.len(),
                    e.size_bytes
                ),
            });
        }
        let now = mtime_ms(&meta);
        if now != e.mtime_ms {
            return Err(Error::Stale {
                path: full,
                message: format!("mtime is now {now} ms, the map says {}", e.mtime_ms),
            });
        }
        Ok(full)
    }

    /// Entry `i` ready for a read of its local row ranges `rows` by `layout`'s format: the
    /// stale check and, for a lake with an [`crate::EntrySource`], the bytes fetched. Returns
    /// the path to read.
    pub fn prepare_read(
        &self,
        i: usize,
        rows: &[std::ops::Range<u64>],
        layout: Option<lake_locators::ByteLayout>,
    ) -> Result<PathBuf> {
        match self.source() {
            None => self.check_fresh(i),
            Some(source) => {
                let blocks = self.blocks(i)?;
                let need = crate::source::ReadNeed {
                    rows,
                    blocks: &blocks,
                    layout,
                };
                source.prepare(self.source_entry(i), Some(need))
            }
        }
    }

    fn source_entry(&self, i: usize) -> crate::source::SourceEntry<'_> {
        let e = self.entry(i);
        crate::source::SourceEntry {
            index: i,
            path: e.path,
            size_bytes: e.size_bytes,
            etag: self.etag(i),
        }
    }

    /// Reads one segment of a slice (after the stale check) as record batches.
    pub fn read_segment(
        &self,
        segment: &Segment,
        columns: Option<&[String]>,
        registry: &HandlerRegistry,
    ) -> Result<BatchIter> {
        let rows = segment.local_start..segment.local_start + segment.len;
        let file = self.open_entry(segment.index, columns, registry, &[rows])?;
        let request = ReadRequest {
            rows: segment.local_start..segment.local_start + segment.len,
            blocks: file.blocks(),
            schema: file.schema.clone(),
            projection: columns,
            batch_size: 0,
        };
        Ok(file.handler.locator.read(&file.path, &request)?)
    }

    /// Reads the local rows `rows` (ascending, distinct) of entry `i` in one call of its
    /// handler's [`lake_locators::Locator::read_rows`], after one stale check: batches whose
    /// rows, one after the other, are exactly those rows, in the file's schema (projected
    /// when asked). A built-in locator decodes only the blocks, pages or records the rows
    /// need; a dynamic handler is read with the trait's default, by row ranges.
    pub fn read_rows(
        &self,
        i: usize,
        rows: &[u64],
        columns: Option<&[String]>,
        registry: &HandlerRegistry,
    ) -> Result<Vec<RecordBatch>> {
        // Only a lake with an entry source needs the rows as ranges (to fetch their bytes).
        let ranges: Vec<std::ops::Range<u64>> = match self.source() {
            Some(_) => rows.iter().map(|&r| r..r + 1).collect(),
            None => Vec::new(),
        };
        let file = self.open_entry(i, columns, registry, &ranges)?;
        let request = RowsRequest {
            rows,
            blocks: file.blocks(),
            schema: file.schema.clone(),
            projection: columns,
        };
        Ok(file.handler.locator.read_rows(&file.path, &request)?)
    }

    /// Entry `i` ready to read: its handler, stored schema (with `columns` checked against
    /// it) and blocks, after the stale check.
    fn open_entry(
        &self,
        i: usize,
        columns: Option<&[String]>,
        registry: &HandlerRegistry,
        rows: &[std::ops::Range<u64>],
    ) -> Result<OpenEntry> {
        self.check_entry(i)?;
        let e = self.entry(i);
        let handler = registry
            .for_entry(e.path, e.format)
            .ok_or_else(|| Error::NoHandler {
                path: self.root().join(e.path),
                format: e.format.to_string(),
            })?
            .with_text_encoding(self.config().text_encoding);
        let schema = match e.schema_value()? {
            Some(v) => Some(schema_from_json(&v)?),
            None => None,
        };
        if let (Some(schema), Some(columns)) = (&schema, columns) {
            for c in columns {
                if schema.index_of(c).is_err() {
                    let names: Vec<&str> =
                        schema.fields().iter().map(|f| f.name().as_str()).collect();
                    return Err(lake_locators::Error::UnknownColumn {
                        path: self.root().join(e.path),
                        column: c.clone(),
                        available: names.join(", "),
                    }
                    .into());
                }
            }
        }
        let layout = if handler.dynamic {
            None
        } else {
            handler.locator.byte_layout()
        };
        let path = self.prepare_read(i, rows, layout)?;
        let blocks = self.blocks(i)?;
        Ok(OpenEntry {
            path,
            schema,
            blocks: if handler.dynamic || blocks.is_empty() {
                None
            } else {
                Some(blocks)
            },
            handler,
        })
    }

    /// `slice(start, len, columns)`: rows `[start, start + len)` of the lake (clamped at its
    /// end), one [`FileSlice`] per touched file in map order.
    pub fn slice(
        &self,
        start: u64,
        len: u64,
        columns: Option<&[String]>,
        registry: &HandlerRegistry,
    ) -> Result<Vec<FileSlice>> {
        let mut out = Vec::new();
        for segment in self.plan_slice(start, len) {
            let batches = self
                .read_segment(&segment, columns, registry)?
                .collect::<lake_locators::Result<Vec<_>>>()?;
            let got: usize = batches.iter().map(RecordBatch::num_rows).sum();
            let e = self.entry(segment.index);
            if got as u64 != segment.len {
                return Err(Error::Index {
                    path: self.root().join(e.path),
                    message: format!(
                        "the {} reader returned {got} rows for local rows {}..{}",
                        e.format,
                        segment.local_start,
                        segment.local_start + segment.len
                    ),
                });
            }
            out.push(FileSlice {
                index: segment.index,
                path: e.path.to_string(),
                format: e.format.to_string(),
                local_start: segment.local_start,
                len: segment.len,
                batches,
            });
        }
        Ok(out)
    }
}
