//! A small in-test locator ("lines": one Int64 value per non-empty line, checkpoints every
//! stride rows) and helpers to build lakes of such files, so the catalog is tested without
//! the real format locators.

use std::fs;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use lake_locators::{
    BatchIter, Block, ColumnStats, Error, FileIndex, IndexOptions, Locator, ReadRequest, Stats,
};
use lake_map::{HandlerRegistry, LakeMap};

/// The test locator. `reads` counts calls of `read`, `seeks` reads that used stored blocks.
pub(crate) struct LinesLocator {
    pub(crate) name: &'static str,
    pub(crate) exts: &'static [&'static str],
    pub(crate) formats: &'static [&'static str],
    pub(crate) reads: Arc<AtomicUsize>,
    pub(crate) seeks: Arc<AtomicUsize>,
}

impl LinesLocator {
    pub(crate) fn new(
        name: &'static str,
        exts: &'static [&'static str],
        formats: &'static [&'static str],
    ) -> Self {
        LinesLocator {
            name,
            exts,
            formats,
            reads: Arc::new(AtomicUsize::new(0)),
            seeks: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]))
    }
}

fn malformed(path: &Path, offset: u64, message: String) -> Error {
    Error::Malformed {
        path: path.to_path_buf(),
        format: "lines",
        offset: Some(offset),
        block: None,
        row: None,
        message,
    }
}

impl Locator for LinesLocator {
    fn name(&self) -> &str {
        self.name
    }
    fn extensions(&self) -> &[&str] {
        self.exts
    }
    fn formats(&self) -> &[&str] {
        self.formats
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> lake_locators::Result<FileIndex> {
        let bytes = fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut blocks: Vec<Block> = Vec::new();
        let mut rows = 0u64;
        let mut offset = 0u64;
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let text = std::str::from_utf8(line).unwrap_or("").trim();
            if !text.is_empty() {
                let v: i64 = text
                    .parse()
                    .map_err(|_| malformed(path, offset, format!("not an integer: {text:?}")))?;
                min = min.min(v);
                max = max.max(v);
                if rows.is_multiple_of(options.stride) {
                    blocks.push(Block {
                        ordinal: blocks.len() as u64,
                        first_row: rows,
                        row_count: 0,
                        first_byte: Some(offset),
                        total_byte_size: Some(0),
                        compressed_size: None,
                        columns: None,
                        stats: None,
                        fine: None,
                    });
                }
                let b = blocks.last_mut().expect("a block was pushed");
                b.row_count += 1;
                rows += 1;
            }
            offset += line.len() as u64;
            if let Some(b) = blocks.last_mut() {
                b.total_byte_size = Some(offset - b.first_byte.unwrap_or(0));
            }
        }
        let stats = if options.stats.is_none() {
            None
        } else {
            let mut s = Stats::new();
            if rows > 0 && options.stats.wants("v") {
                s.insert("v".into(), ColumnStats::Int { min, max });
            }
            Some(s)
        };
        Ok(FileIndex {
            format: self.formats[0].to_string(),
            row_count: rows,
            blocks,
            schema: Self::schema(),
            stats,
        })
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> lake_locators::Result<BatchIter> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        if let Some(cols) = request.projection {
            for c in cols {
                if c != "v" {
                    return Err(Error::UnknownColumn {
                        path: path.to_path_buf(),
                        column: c.clone(),
                        available: "v".into(),
                    });
                }
            }
        }
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = fs::File::open(path).map_err(io)?;
        let (mut row, start_byte) = match request.blocks.and_then(|blocks| {
            blocks
                .iter()
                .rev()
                .find(|b| b.first_row <= request.rows.start && b.row_count > 0)
        }) {
            Some(b) => {
                self.seeks.fetch_add(1, Ordering::SeqCst);
                (b.first_row, b.first_byte.unwrap_or(0))
            }
            None => (0, 0),
        };
        file.seek(SeekFrom::Start(start_byte)).map_err(io)?;
        let mut values = Vec::new();
        for line in BufReader::new(file).lines() {
            let line = line.map_err(io)?;
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if row >= request.rows.end {
                break;
            }
            if row >= request.rows.start {
                values.push(
                    text.parse::<i64>()
                        .map_err(|_| malformed(path, 0, text.into()))?,
                );
            }
            row += 1;
        }
        let columns: Vec<ArrayRef> = match request.projection {
            Some([]) => Vec::new(),
            _ => vec![Arc::new(Int64Array::from(values.clone()))],
        };
        let schema = match request.projection {
            Some([]) => Arc::new(Schema::empty()),
            _ => Self::schema(),
        };
        let batch = if columns.is_empty() {
            RecordBatch::try_new_with_options(
                schema,
                columns,
                &arrow_array::RecordBatchOptions::new().with_row_count(Some(values.len())),
            )
        } else {
            RecordBatch::try_new(schema, columns)
        }
        .map_err(|e| malformed(path, 0, e.to_string()))?;
        Ok(Box::new(std::iter::once(Ok(batch))))
    }
}

/// A registry whose only built-in locator is the lines locator for `.lines`.
pub(crate) fn lines_registry() -> HandlerRegistry {
    HandlerRegistry::with_locators(vec![Arc::new(LinesLocator::new(
        "lines",
        &["lines"],
        &["lines"],
    ))])
}

/// Writes files (relative path, row count) in map order whose values are their global rows.
pub(crate) fn write_lake(root: &Path, files: &[(&str, u64)]) {
    let mut sorted: Vec<&(&str, u64)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut g = 0u64;
    for (path, rows) in sorted {
        let full = root.join(path);
        fs::create_dir_all(full.parent().expect("a parent")).expect("mkdir");
        let mut text = String::new();
        for i in 0..*rows {
            // Blank lines between rows are not rows.
            if i % 5 == 3 {
                text.push('\n');
            }
            text.push_str(&format!("{g}\n"));
            g += 1;
        }
        fs::write(full, text).expect("write lake file");
    }
}

/// Every value of a slice, in order.
pub(crate) fn slice_values(map: &LakeMap, reg: &HandlerRegistry, start: u64, len: u64) -> Vec<i64> {
    let mut out = Vec::new();
    for fs in map.slice(start, len, None, reg).expect("slice") {
        for b in &fs.batches {
            let col = b
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .expect("int64");
            out.extend(col.values().iter().copied());
        }
    }
    out
}

/// A standard test lake: nested files, a zero-row file, a name-order trap.
pub(crate) fn standard_files() -> Vec<(&'static str, u64)> {
    vec![
        ("a.lines", 10),
        ("b/c.lines", 25),
        ("b-2.lines", 3),
        ("empty.lines", 0),
        ("z.lines", 17),
        ("Z.lines", 4),
        ("d/e/f.lines", 40),
    ]
}
