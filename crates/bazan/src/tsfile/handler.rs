//! The `.tsfile` lake handler: a [`Locator`] over `tsfile-index`,
//! registered at run time so that a lake's TsFiles are mapped and sliced like any other file
//! while `lake-map` itself stays free of any TsFile dependency.
//!
//! The rows of a TsFile are its table-model rows, tables in name order (tree-model files:
//! devices in index order). A file with one table (or device) returns that table's Arrow
//! schema; with several, the schema is a `table` (or `device`) column followed by the union of
//! their columns, null where a table has no such column. Dynamic handlers store no blocks, so
//! a read walks the file from its first table.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions, StringArray, new_null_array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lake_locators::stats::StatsBuilder;
use lake_locators::{BatchIter, Error, FileIndex, IndexOptions, Locator, ReadRequest};
use tsfile_index::{DeviceEntry, TableQuery, TreeQuery, TsFileReader};

/// The `.tsfile` handler.
#[derive(Debug, Clone, Copy, Default)]
pub struct TsFileLocator;

enum Part {
    Table(String),
    Device(DeviceEntry),
}

impl Part {
    fn label(&self) -> String {
        match self {
            Part::Table(t) => t.clone(),
            Part::Device(d) => d.path(),
        }
    }
}

fn lib_err(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Library {
        path: path.to_path_buf(),
        format: "tsfile",
        block: None,
        source: Box::new(e),
    }
}

/// An opened file with its parts and the unified schema.
struct Opened {
    reader: TsFileReader,
    parts: Vec<Part>,
    /// `Some(name)` when several parts share the schema through a label column.
    label: Option<&'static str>,
    schema: SchemaRef,
}

fn open(path: &Path) -> lake_locators::Result<Opened> {
    let reader = TsFileReader::open(path).map_err(|e| lib_err(path, e))?;
    let (parts, label) = if reader.is_table_model() {
        let mut names: Vec<String> = reader.table_names().iter().map(|s| s.to_string()).collect();
        names.sort();
        (
            names.into_iter().map(Part::Table).collect::<Vec<_>>(),
            "table",
        )
    } else {
        let devices = reader
            .devices()
            .map_err(|e| lib_err(path, e))?
            .map(|d| d.map(Part::Device))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| lib_err(path, e))?;
        (devices, "device")
    };
    let mut schemas = Vec::with_capacity(parts.len());
    for part in &parts {
        schemas.push(match part {
            Part::Table(t) => reader.table_arrow_schema(t).map_err(|e| lib_err(path, e))?,
            Part::Device(d) => reader
                .read_device(d, &TreeQuery::default())
                .map_err(|e| lib_err(path, e))?
                .schema(),
        });
    }
    if schemas.len() == 1 {
        let schema = schemas.remove(0);
        return Ok(Opened {
            reader,
            parts,
            label: None,
            schema,
        });
    }
    let mut fields: Vec<Field> = vec![Field::new(label, DataType::Utf8, false)];
    for s in &schemas {
        for f in s.fields() {
            match fields.iter().find(|g| g.name() == f.name()) {
                Some(g) if g.data_type() != f.data_type() => {
                    return Err(Error::Unsupported {
                        path: path.to_path_buf(),
                        message: format!(
                            "column {:?} is {} in one {label} and {} in another",
                            f.name(),
                            g.data_type(),
                            f.data_type()
                        ),
                    });
                }
                Some(_) => {}
                None => fields.push(Field::new(f.name(), f.data_type().clone(), true)),
            }
        }
    }
    Ok(Opened {
        reader,
        parts,
        label: Some(label),
        schema: Arc::new(Schema::new(fields)),
    })
}

impl Opened {
    /// The rows of one part in the unified schema.
    fn batches(&self, path: &Path, part: &Part) -> lake_locators::Result<Vec<RecordBatch>> {
        let raw: Vec<RecordBatch> = match part {
            Part::Table(t) => self
                .reader
                .query_table(t, &TableQuery::default())
                .map_err(|e| lib_err(path, e))?
                .collect::<Result<_, _>>()
                .map_err(|e| lib_err(path, e))?,
            Part::Device(d) => vec![
                self.reader
                    .read_device(d, &TreeQuery::default())
                    .map_err(|e| lib_err(path, e))?,
            ],
        };
        let Some(label) = self.label else {
            return Ok(raw);
        };
        let name = part.label();
        raw.into_iter()
            .map(|b| {
                let n = b.num_rows();
                let cols: Vec<ArrayRef> = self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| {
                        if f.name() == label {
                            Arc::new(StringArray::from(vec![name.as_str(); n])) as ArrayRef
                        } else {
                            match b.column_by_name(f.name()) {
                                Some(c) => Arc::clone(c),
                                None => new_null_array(f.data_type(), n),
                            }
                        }
                    })
                    .collect();
                RecordBatch::try_new(Arc::clone(&self.schema), cols).map_err(|e| lib_err(path, e))
            })
            .collect()
    }
}

impl Locator for TsFileLocator {
    fn name(&self) -> &str {
        "tsfile"
    }

    fn extensions(&self) -> &[&str] {
        &["tsfile"]
    }

    fn formats(&self) -> &[&str] {
        &["tsfile"]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> lake_locators::Result<FileIndex> {
        let opened = open(path)?;
        let mut stats = StatsBuilder::new(&opened.schema, &options.stats);
        let mut rows = 0u64;
        for part in &opened.parts {
            for b in opened.batches(path, part)? {
                rows += b.num_rows() as u64;
                stats.update(&b);
            }
        }
        Ok(FileIndex {
            format: "tsfile".into(),
            row_count: rows,
            blocks: Vec::new(),
            schema: Arc::clone(&opened.schema),
            stats: if options.stats.is_none() {
                None
            } else {
                Some(stats.finish())
            },
        })
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> lake_locators::Result<BatchIter> {
        let opened = open(path)?;
        let indices: Option<Vec<usize>> = match request.projection {
            None => None,
            Some(cols) => Some(
                cols.iter()
                    .map(|c| {
                        opened.schema.index_of(c).map_err(|_| Error::UnknownColumn {
                            path: path.to_path_buf(),
                            column: c.clone(),
                            available: opened
                                .schema
                                .fields()
                                .iter()
                                .map(|f| f.name().as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let mut out = Vec::new();
        let mut at = 0u64;
        'parts: for part in &opened.parts {
            for b in opened.batches(path, part)? {
                let n = b.num_rows() as u64;
                let (lo, hi) = (request.rows.start.max(at), request.rows.end.min(at + n));
                if lo < hi {
                    let s = b.slice((lo - at) as usize, (hi - lo) as usize);
                    let s = match &indices {
                        None => s,
                        Some(idx) if idx.is_empty() => RecordBatch::try_new_with_options(
                            Arc::new(Schema::empty()),
                            vec![],
                            &RecordBatchOptions::new().with_row_count(Some(s.num_rows())),
                        )
                        .map_err(|e| lib_err(path, e))?,
                        Some(idx) => s.project(idx).map_err(|e| lib_err(path, e))?,
                    };
                    out.push(Ok(s));
                }
                at += n;
                if at >= request.rows.end {
                    break 'parts;
                }
            }
        }
        Ok(Box::new(out.into_iter()))
    }
}
