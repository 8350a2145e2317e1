//! Apache TsFile: open, describe, query, check and write one file, over `tsfile-index`.
//!
//! Every function takes the file's path and returns [`crate::Error`]s that name it; the JSON
//! shapes of [`info`], [`dump`] and [`check_json`] are the stable ones of `bazan tsfile …
//! --json` (see `docs/cli.md`).

mod handler;
mod write;

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde_json::{Value, json};
pub use tsfile_format::schema::ColumnCategory;
/// The error of [`TsFileReader`]'s calls ([`crate::Error`] converts from it).
pub use tsfile_index::Error as TsFileError;
pub use tsfile_index::check::{CheckReport, Problem, Relaxed};
pub use tsfile_index::dump::hex;
pub use tsfile_index::{TableQuery, TimeRange, TreeQuery, TsFileReader};

pub use handler::TsFileLocator;
pub use write::{WriteOptions, WriteSummary, import, write_table};

use crate::error::{Error, Result};

/// Opens a TsFile (memory-mapped), with errors that name it. A URL (`s3://…/x.tsfile`,
/// `https://…`) is fetched whole into a temporary file first, which is removed at once: the
/// open reader keeps its bytes.
pub fn open(path: &Path) -> Result<TsFileReader> {
    if let Some(url) = path
        .to_str()
        .filter(|s| crate::remote::is_url(s) && crate::remote::local_path(s).is_none())
    {
        let (_guard, local) = crate::remote::fetch_file(url)?;
        return TsFileReader::open(&local).map_err(|e| Error::from(e).at(path));
    }
    if let Some(local) = path.to_str().and_then(crate::remote::local_path) {
        return open(&local);
    }
    TsFileReader::open(path).map_err(|e| Error::from(e).at(path))
}

/// The facts `bazan tsfile info --json` prints: version, size, model, tables with their
/// columns, device and series counts, time range, properties, Bloom filter and where the
/// metadata lies.
pub fn info(path: &Path) -> Result<Value> {
    let reader = open(path)?;
    info_of(&reader).map_err(|e| Error::from(e).at(path))
}

/// [`info`] of a file already open.
pub fn info_of(reader: &TsFileReader) -> tsfile_index::Result<Value> {
    let mut devices = 0usize;
    let mut series = 0usize;
    let mut range: Option<(i64, i64)> = None;
    for device in reader.devices()? {
        let device = device?;
        devices += 1;
        for s in reader.timeseries(&device)? {
            if !s.meta.is_time_column() {
                series += 1;
            }
            let st = &s.meta.statistics;
            if st.count > 0 {
                range = Some(match range {
                    None => (st.start_time, st.end_time),
                    Some((a, b)) => (a.min(st.start_time), b.max(st.end_time)),
                });
            }
        }
    }
    let tables: Vec<Value> = reader
        .table_schemas()
        .iter()
        .map(|t| {
            let columns: Vec<Value> = t
                .schema
                .columns
                .iter()
                .map(|c| {
                    json!({"name": c.schema.name, "data_type": c.schema.data_type.name(),
                           "category": c.category.name(), "encoding": c.schema.encoding.name(),
                           "compression": c.schema.compression.name()})
                })
                .collect();
            json!({"name": t.table_name, "columns": columns})
        })
        .collect();
    let mut props = serde_json::Map::new();
    for p in reader.properties() {
        props.insert(
            p.key.clone(),
            p.value.as_deref().map_or(Value::Null, |v| json!(hex(v))),
        );
    }
    let bloom = reader.bloom_filter().map_or(Value::Null, |b| {
        json!({"size_in_bits": b.size_in_bits, "hash_count": b.hash_count, "bytes": b.bits.len()})
    });
    Ok(json!({
        "format_version": reader.version(),
        "file_size": reader.file_len(),
        "model": if reader.is_table_model() { "table" } else { "tree" },
        "index_tables": reader.table_names(),
        "tables": tables,
        "device_count": devices,
        "series_count": series,
        "time_range": range.map_or(Value::Null, |(a, b)| json!({"start": a, "end": b})),
        "properties": props,
        "bloom_filter": bloom,
        "metadata": {"offset": reader.metadata_start(), "length": reader.metadata_len(),
                     "meta_offset": reader.meta_offset()},
    }))
}

/// Everything the file holds, as JSON in the shape of the conformance answers.
pub fn dump(path: &Path) -> Result<Value> {
    let reader = open(path)?;
    tsfile_index::dump::dump(&reader).map_err(|e| Error::from(e).at(path))
}

/// What to read from one TsFile: a table (table model) or a device (tree model).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// The table to read (table model).
    pub table: Option<String>,
    /// The device to read, by its path (tree model).
    pub device: Option<String>,
    /// Columns to return, in this order; `None` returns every column.
    pub columns: Option<Vec<String>>,
    /// Smallest time kept (inclusive).
    pub start_time: Option<i64>,
    /// Largest time kept (inclusive).
    pub end_time: Option<i64>,
    /// Keep only the devices whose TAG column equals the value (table queries only).
    pub tags: Vec<(String, String)>,
}

/// Reads the rows of one table or device: its schema and record batches, the same values
/// as the official reader returns.
pub fn query(path: &Path, q: &Query) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let mut batches = Vec::new();
    let schema = query_with(path, q, |_, b| {
        batches.push(b);
        Ok(())
    })?;
    Ok((schema, batches))
}

/// As [`query`], handing each batch to `each` (with the result's schema) as soon as it is
/// decoded, so that a caller writing them out holds one batch at a time. Returns the schema
/// (also for a query without rows); an error of `each` stops the read and is returned.
pub fn query_with(
    path: &Path,
    q: &Query,
    mut each: impl FnMut(&SchemaRef, RecordBatch) -> Result<()>,
) -> Result<SchemaRef> {
    let reader = open(path)?;
    let ctx = |e: tsfile_index::Error| Error::from(e).at(path);
    let range = TimeRange::new(q.start_time, q.end_time);
    match (&q.table, &q.device) {
        (Some(_), Some(_)) => Err(Error::invalid("give a table or a device, not both")),
        (None, None) => Err(Error::invalid(
            "give a table (table model) or a device (tree model)",
        )),
        (Some(table), None) => {
            if !reader.is_table_model() {
                return Err(Error::invalid(format!(
                    "{}: a tree-model file has no tables; use --device PATH",
                    path.display()
                )));
            }
            let query = TableQuery {
                columns: q.columns.clone(),
                time_range: range,
                tags: q
                    .tags
                    .iter()
                    .map(|(k, v)| (k.clone(), Some(v.clone())))
                    .collect(),
                batch_size: 0,
            };
            let it = reader.query_table(table, &query).map_err(ctx)?;
            let schema = it.schema();
            for b in it {
                each(&schema, b.map_err(ctx)?)?;
            }
            Ok(schema)
        }
        (None, Some(device_path)) => {
            if !q.tags.is_empty() {
                return Err(Error::invalid(
                    "--tag filters apply to --table queries only",
                ));
            }
            let device = reader
                .device_by_path(device_path)
                .map_err(ctx)?
                .ok_or_else(|| {
                    Error::new(
                        crate::ErrorKind::InvalidArgument,
                        format!("{}: device {device_path:?} not found", path.display()),
                    )
                })?;
            if let Some(cols) = &q.columns {
                let names: Vec<String> = reader
                    .timeseries(&device)
                    .map_err(ctx)?
                    .iter()
                    .map(|s| s.name().to_string())
                    .collect();
                if let Some(missing) = cols.iter().find(|c| *c != "time" && !names.contains(c)) {
                    return Err(Error::invalid(format!(
                        "{}: device {device_path:?} has no measurement {missing:?}",
                        path.display()
                    )));
                }
            }
            let query = TreeQuery {
                columns: q.columns.clone(),
                time_range: range,
                batch_size: 0,
            };
            let batch = reader.read_device(&device, &query).map_err(ctx)?;
            let schema = batch.schema();
            each(&schema, batch)?;
            Ok(schema)
        }
    }
}

/// The table names of a table-model file (sorted), or an empty list for a tree-model file.
pub fn table_names(path: &Path) -> Result<Vec<String>> {
    let reader = open(path)?;
    let mut names: Vec<String> = reader.table_names().iter().map(|s| s.to_string()).collect();
    names.sort();
    Ok(names)
}

/// Validates every structure and decodes every page: the problems found (none for a valid
/// file) and the series whose statistics were compared within a lossy encoding's precision
/// rather than exactly. An error is returned only when the file cannot be opened at all.
pub fn check(path: &Path) -> Result<CheckReport> {
    tsfile_index::check::check_path_report(path).map_err(|e| Error::from(e).at(path))
}

/// The JSON form of one problem found by [`check`].
pub fn problem_json(p: &Problem) -> Value {
    json!({"structure": p.structure, "offset": p.offset, "message": p.message})
}

/// The JSON object `bazan tsfile check --json` prints: `file`, `valid`, `problems` and
/// `relaxed` (the comparisons made within a lossy encoding's precision, and why).
pub fn check_json(path: &Path, report: &CheckReport) -> Value {
    let list: Vec<Value> = report.problems.iter().map(problem_json).collect();
    json!({"file": path.display().to_string(), "valid": report.is_valid(), "problems": list,
           "relaxed": report.relaxed_json()})
}
