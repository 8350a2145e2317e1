//! Writing a table-model TsFile from Arrow record batches, and `import` of a Parquet, CSV or
//! Arrow IPC file into one. Rows may come in any order; a duplicate timestamp within a device
//! is an error and leaves no file at the output path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use lake_locators::{ReadRequest, registry};
use tsfile_format::schema::TableSchema;
use tsfile_format::types::{ColumnCategory, CompressionType, TSDataType, TSEncoding};
use tsfile_index::writer::{TsFileWriter, WriterOptions, encoding_is_writable, tsfile_type_of};

use crate::error::{Error, ErrorKind, Result};

/// How to write a table-model TsFile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The table name.
    pub table: String,
    /// The time column (integer or timestamp).
    pub time: String,
    /// TAG columns, in this order; they are stored as STRING (integer tags are converted).
    pub tags: Vec<String>,
    /// Per-column encodings by name (`RLE`, `TS_2DIFF`, `GORILLA`, …).
    pub encodings: Vec<(String, String)>,
    /// Compression of every column and of the time column (`LZ4` when `None`).
    pub compression: Option<String>,
}

/// What [`write_table`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteSummary {
    /// The file written.
    pub path: PathBuf,
    /// Rows written.
    pub rows: u64,
    /// The file's size in bytes.
    pub bytes: u64,
}

/// Writes `batches` (one schema) as one table of a new TsFile at `path`, replacing it
/// atomically when it exists.
pub fn write_table(path: &Path, batches: &[RecordBatch], o: &WriteOptions) -> Result<WriteSummary> {
    let batches: Vec<RecordBatch> = batches
        .iter()
        .map(|b| prepare(b.clone(), &o.tags))
        .collect::<Result<_>>()?;
    let Some(first) = batches.first() else {
        return Err(Error::invalid("no rows to write"));
    };
    let schema = first.schema();
    let mut opts = WriterOptions::default();
    if let Some(c) = &o.compression {
        let c = CompressionType::from_name(&c.to_uppercase())
            .ok_or_else(|| Error::invalid(format!("unknown compression {c:?}")))?;
        if c == CompressionType::Lzo {
            return Err(Error::invalid(
                "LZO is never written: Java readers cannot decompress it",
            ));
        }
        opts.default_compression = c;
        opts.time_compression = c;
    }
    let time = schema
        .field_with_name(&o.time)
        .map_err(|_| Error::invalid(format!("no time column {:?}", o.time)))?;
    if !matches!(
        time.data_type(),
        DataType::Int32 | DataType::Int64 | DataType::Timestamp(_, _)
    ) {
        return Err(Error::invalid(format!(
            "time column {:?} is {}, not an integer or timestamp column",
            o.time,
            time.data_type()
        )));
    }
    let mut columns = Vec::new();
    for tag in &o.tags {
        if schema.field_with_name(tag).is_err() {
            return Err(Error::invalid(format!("no TAG column {tag:?}")));
        }
        columns.push(opts.column(tag, TSDataType::String, ColumnCategory::Tag));
    }
    for f in schema.fields() {
        if f.name() == &o.time || o.tags.contains(f.name()) {
            continue;
        }
        let Some(t) = tsfile_type_of(f.data_type()) else {
            return Err(Error::new(
                ErrorKind::UnsupportedFormat,
                format!(
                    "column {:?} has type {}, which TsFile cannot store",
                    f.name(),
                    f.data_type()
                ),
            ));
        };
        columns.push(opts.column(f.name(), t, ColumnCategory::Field));
    }
    for (col, enc) in &o.encodings {
        let spec = format!("{col}={enc}");
        let enc = TSEncoding::from_name(&enc.to_uppercase())
            .ok_or_else(|| Error::invalid(format!("encoding {spec:?}: unknown encoding")))?;
        let Some(c) = columns
            .iter_mut()
            .find(|c| &c.schema.name == col && c.category == ColumnCategory::Field)
        else {
            return Err(Error::invalid(format!(
                "encoding {spec:?}: {col:?} is not a FIELD column"
            )));
        };
        if !encoding_is_writable(enc, c.schema.data_type) {
            return Err(Error::invalid(format!(
                "encoding {spec:?}: {} cannot be written as {}",
                c.schema.data_type.name(),
                enc.name()
            )));
        }
        c.schema.encoding = enc;
    }
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let err = |e: tsfile_index::writer::WriteError| Error::from(e).at(path);
    let mut w = TsFileWriter::create(path, opts).map_err(err)?;
    w.register_table(&o.table, TableSchema { columns })
        .map_err(err)?;
    w.write_table_unsorted(&o.table, &o.time, &batches)
        .map_err(err)?;
    let written = w.close().map_err(err)?;
    let bytes = std::fs::metadata(&written).map(|m| m.len()).unwrap_or(0);
    Ok(WriteSummary {
        path: written,
        rows: rows as u64,
        bytes,
    })
}

/// Reads a Parquet, CSV/TSV/PSV or Arrow IPC file with its lake locator and writes it as one
/// table of a new TsFile at `output`.
pub fn import(input: &Path, output: &Path, o: &WriteOptions) -> Result<WriteSummary> {
    let ext = input
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let Some(locator) = registry::for_extension(&ext) else {
        return Err(Error::new(
            ErrorKind::UnsupportedFormat,
            format!(
                "{}: unknown input format (extension {ext:?})",
                input.display()
            ),
        ));
    };
    let request = ReadRequest {
        rows: 0..u64::MAX,
        blocks: None,
        schema: None,
        projection: None,
        batch_size: 0,
    };
    let batches = locator
        .read(input, &request)?
        .collect::<lake_locators::Result<Vec<_>>>()?;
    if batches.iter().all(|b| b.num_rows() == 0) {
        return Err(Error::invalid(format!(
            "{}: no rows to import",
            input.display()
        )));
    }
    write_table(output, &batches, o).map_err(|e| match e.kind() {
        // Column errors name the input's columns.
        ErrorKind::InvalidArgument | ErrorKind::UnsupportedFormat if e.path().is_none() => {
            e.at(input)
        }
        _ => e,
    })
}

/// Turns integer TAG columns (CSV inference makes `1`, `2` integers) into strings.
fn prepare(batch: RecordBatch, tags: &[String]) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (f, a) in schema.fields().iter().zip(batch.columns()) {
        let is_tag = tags.contains(f.name());
        let converted: Option<ArrayRef> = match (is_tag, a.data_type()) {
            (true, DataType::Int64) => {
                Some(Arc::new(strings(a.as_primitive::<Int64Type>().iter())))
            }
            (true, DataType::Int32) => {
                Some(Arc::new(strings(a.as_primitive::<Int32Type>().iter())))
            }
            (true, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) | (false, _) => None,
            (true, other) => {
                return Err(Error::invalid(format!(
                    "TAG column {:?} is {other}; it must be a string column",
                    f.name()
                )));
            }
        };
        match converted {
            Some(c) => {
                fields.push(Field::new(f.name(), DataType::Utf8, true));
                arrays.push(c);
            }
            None => {
                fields.push(f.as_ref().clone());
                arrays.push(a.clone());
            }
        }
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}

fn strings<T: ToString>(values: impl Iterator<Item = Option<T>>) -> StringArray {
    values.map(|v| v.map(|v| v.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;

    #[test]
    fn integer_tags_become_strings() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 22]))])
            .expect("batch");
        let out = prepare(batch, &["id".to_string()]).expect("prepared");
        assert_eq!(out.schema().field(0).data_type(), &DataType::Utf8);
        let s = out.column(0).as_string::<i32>();
        assert_eq!((s.value(0), s.value(1)), ("1", "22"));
    }
}
