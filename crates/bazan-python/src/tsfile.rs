//! The TsFile half of the extension: `info`, `read` and `write` of one file through the
//! facade's `bazan::tsfile`. The public, documented API is `bazan/tsfile.py`.

use std::path::PathBuf;

use arrow_array::RecordBatch;
use bazan::tsfile::{Query, WriteOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_arrow::input::AnyRecordBatch;
use serde_json::Value;

use crate::blocking::{self, OnInterrupt};
use crate::errors;
use crate::export::to_table;

/// A JSON value as Python objects (objects keep their key order; integers stay exact).
pub(crate) fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// The `bazan tsfile info --json` object of a file.
#[pyfunction]
pub(crate) fn tsfile_info(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    let value = blocking::run(py, OnInterrupt::Leave, None, move || {
        bazan::tsfile::info(&path)
    })?;
    json_to_py(py, &value)
}

/// The rows of one table or device as a pyarrow.Table.
#[pyfunction]
#[pyo3(signature = (path, *, table=None, device=None, columns=None, start_time=None, end_time=None, tags=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tsfile_read(
    py: Python<'_>,
    path: PathBuf,
    table: Option<String>,
    device: Option<String>,
    columns: Option<Vec<String>>,
    start_time: Option<i64>,
    end_time: Option<i64>,
    tags: Vec<(String, String)>,
) -> PyResult<Bound<'_, PyAny>> {
    let query = Query {
        table,
        device,
        columns,
        start_time,
        end_time,
        tags,
    };
    let (schema, batches) = blocking::run(py, OnInterrupt::Leave, None, move || {
        bazan::tsfile::query(&path, &query)
    })?;
    to_table(py, schema, batches)
}

/// Writes Arrow data (any object with `__arrow_c_stream__` or `__arrow_c_array__`) as one
/// table of a new TsFile; returns `(rows, bytes)`.
#[pyfunction]
#[pyo3(signature = (path, data, *, table, time, tags, encodings, compression))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tsfile_write(
    py: Python<'_>,
    path: PathBuf,
    data: AnyRecordBatch,
    table: String,
    time: String,
    tags: Vec<String>,
    encodings: Vec<(String, String)>,
    compression: Option<String>,
) -> PyResult<(u64, u64)> {
    if table.is_empty() {
        return Err(errors::invalid(py, "table must not be empty"));
    }
    let reader = data.into_reader()?;
    let options = WriteOptions {
        table,
        time,
        tags,
        encodings,
        compression,
    };
    // Interrupted, the write is finished (or fails) before KeyboardInterrupt is raised, so
    // that no temporary file is left behind.
    let summary = blocking::run(py, OnInterrupt::Wait, None, move || {
        let batches = reader
            .collect::<Result<Vec<RecordBatch>, _>>()
            .map_err(bazan::Error::from)?;
        bazan::tsfile::write_table(&path, &batches, &options)
    })?;
    Ok((summary.rows, summary.bytes))
}

/// Registers the TsFile functions in the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tsfile_info, m)?)?;
    m.add_function(wrap_pyfunction!(tsfile_read, m)?)?;
    m.add_function(wrap_pyfunction!(tsfile_write, m)?)?;
    Ok(())
}
