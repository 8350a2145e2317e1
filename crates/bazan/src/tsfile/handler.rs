//! The `.tsfile` lake handler: a [`Locator`] over `tsfile-index`,
//! registered at run time so that a lake's TsFiles are mapped and sliced like any other file
//! while `lake-map` itself stays free of any TsFile dependency.
//!
//! The rows of a TsFile are its table-model rows, tables in name order (tree-model files:
//! devices in index order). A file with one table (or device) returns that table's Arrow
//! schema; with several, the schema is a `table` (or `device`) column followed by the union of
//! their columns, null where a table has no such column. A column whose type differs between
//! tables or devices (a tree-model measurement INT32 in one device and DOUBLE in another) is
//! widened as the lake's unified schema widens (lake-map.md §10: integers to Int64, numbers
//! to Float64, anything else to LargeUtf8) and each part's values are cast to it; `dump` and
//! `query` keep each device's own schema. Dynamic handlers store no blocks, so a read walks
//! the file from its first table.

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
            match fields.iter_mut().find(|g| g.name() == f.name()) {
                Some(g) if g.data_type() != f.data_type() => {
                    let widened = crate::widen::merge_types(g.data_type(), f.data_type());
                    *g = Field::new(f.name(), widened, true);
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
                            Ok(Arc::new(StringArray::from(vec![name.as_str(); n])) as ArrayRef)
                        } else {
                            match b.column_by_name(f.name()) {
                                // A widened column: this part's values cast to the wider type.
                                Some(c) => crate::widen::cast_array(c, f.data_type())
                                    .map_err(|e| lib_err(path, e)),
                                None => Ok(new_null_array(f.data_type(), n)),
                            }
                        }
                    })
                    .collect::<lake_locators::Result<_>>()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array, Int64Array};
    use tsfile_format::types::TSDataType;
    use tsfile_index::writer::{TsFileWriter, WriterOptions};

    /// A tree-model file whose measurement `s` is INT32 in one device and DOUBLE in the
    /// other maps with `s` widened to Float64, every row counted, each value cast.
    #[test]
    fn measurement_of_different_types_per_device_is_widened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.tsfile");
        let opts = WriterOptions::default();
        let mut w = TsFileWriter::create(&path, opts.clone()).unwrap();
        w.register_device(
            "root.sg.d1",
            false,
            vec![opts.measurement("s", TSDataType::Int32)],
        )
        .unwrap();
        w.register_device(
            "root.sg.d2",
            false,
            vec![opts.measurement("s", TSDataType::Double)],
        )
        .unwrap();
        let batch = |s: ArrayRef| {
            RecordBatch::try_from_iter([
                ("time", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
                ("s", s),
            ])
            .unwrap()
        };
        w.write_tree(
            "root.sg.d1",
            "time",
            &batch(Arc::new(Int32Array::from(vec![3, 4]))),
        )
        .unwrap();
        w.write_tree(
            "root.sg.d2",
            "time",
            &batch(Arc::new(Float64Array::from(vec![0.5, 1.5]))),
        )
        .unwrap();
        w.close().unwrap();
        let index = TsFileLocator
            .index(&path, &IndexOptions::default())
            .unwrap();
        assert_eq!(index.row_count, 4);
        let s = index.schema.field_with_name("s").unwrap();
        assert_eq!(s.data_type(), &DataType::Float64);
        let request = ReadRequest {
            rows: 0..4,
            blocks: None,
            schema: None,
            projection: None,
            batch_size: 0,
        };
        let mut values = Vec::new();
        for b in TsFileLocator.read(&path, &request).unwrap() {
            let b = b.unwrap();
            let col = b.column_by_name("s").unwrap();
            let col = col.as_any().downcast_ref::<Float64Array>().unwrap();
            values.extend(col.iter().flatten());
        }
        values.sort_by(f64::total_cmp);
        assert_eq!(values, [0.5, 1.5, 3.0, 4.0]);
    }
}
