//! The lake half of the extension: `create_map`, `load_map`, the handler registry, and the
//! `Lake` class (a loaded map) with its row reads, each returning Arrow data to Python through
//! the C data interface. The public, documented API is `bazan/lake.py`, which wraps these.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_schema::{DataType, SchemaRef};
use bazan::{
    CancelToken, CreateOptions, DoctorOptions, Fingerprint, Lake, LakeReader, ScanOptions,
    StatsColumns,
};
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3_arrow::PyArray;

use crate::blocking::{self, OnInterrupt, ProgressPump};
use crate::errors::{self, IntoPy};
use crate::export::{to_batch, to_schema, to_table};
use crate::handler::PyHandler;

fn parse_fingerprint(py: Python<'_>, text: &str) -> PyResult<Fingerprint> {
    text.parse().map_err(|_| {
        errors::invalid(
            py,
            format!("fingerprint must be 'metadata' or 'blake3', not {text:?}"),
        )
    })
}

/// What a map build or update needs besides its options: a cancel token for Ctrl-C, and
/// the progress pump with the engine callback feeding it. The options themselves (stride,
/// threads) are checked by the facade, whose error is raised as it is.
fn build_setup(
    progress: Option<Py<PyAny>>,
) -> (CancelToken, Option<ProgressPump>, Option<bazan::ProgressFn>) {
    match progress {
        Some(cb) => {
            let (pump, feed) = ProgressPump::new(cb);
            (CancelToken::new(), Some(pump), Some(feed))
        }
        None => (CancelToken::new(), None, None),
    }
}

/// Builds the map of the lake at `root` and returns it with the files left out
/// (`skip_errors`), as `(path, message)` pairs, and the facade's warnings about the options.
#[pyfunction]
#[pyo3(signature = (root, *, stride, fingerprint, stats_columns, skip_errors, threads, progress, encoding = "utf-8", storage_options = None, map = None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn create_map(
    py: Python<'_>,
    root: PathBuf,
    stride: u64,
    fingerprint: &str,
    stats_columns: Option<Vec<String>>,
    skip_errors: bool,
    threads: Option<usize>,
    progress: Option<Py<PyAny>>,
    encoding: &str,
    storage_options: Option<bazan::StorageOptions>,
    map: Option<String>,
) -> PyResult<(PyLake, Vec<(String, String)>, Vec<String>)> {
    let text_encoding =
        bazan::text_encoding(encoding).map_err(|e| errors::invalid(py, e.to_string()))?;
    let (cancel, mut pump, feed) = build_setup(progress);
    let options = CreateOptions {
        stride,
        fingerprint: parse_fingerprint(py, fingerprint)?,
        stats: match stats_columns {
            None => StatsColumns::All,
            Some(list) if list.is_empty() => StatsColumns::None,
            Some(list) => StatsColumns::Only(list),
        },
        text_encoding,
        skip_errors,
        threads,
        progress: feed,
        cancel: Some(cancel.clone()),
        storage_options: storage_options.unwrap_or_default(),
        map,
    };
    let created = blocking::run(py, OnInterrupt::Cancel(&cancel), pump.as_mut(), move || {
        bazan::create_map(&root, &options)
    })?;
    let failures = created
        .failures
        .into_iter()
        .map(|f| (f.path, f.message))
        .collect();
    Ok((PyLake::new(created.lake), failures, created.warnings))
}

/// Brings the map of the lake at `root` up to date (a lake without a map gets one) and
/// returns it with the facade's report of what changed: the `bazan map update --json`
/// object, as JSON text.
#[pyfunction]
#[pyo3(signature = (root, *, skip_errors, threads, progress, storage_options = None, map = None))]
pub(crate) fn update_map(
    py: Python<'_>,
    root: PathBuf,
    skip_errors: bool,
    threads: Option<usize>,
    progress: Option<Py<PyAny>>,
    storage_options: Option<bazan::StorageOptions>,
    map: Option<String>,
) -> PyResult<(PyLake, String)> {
    let (cancel, mut pump, feed) = build_setup(progress);
    let options = CreateOptions {
        skip_errors,
        threads,
        progress: feed,
        cancel: Some(cancel.clone()),
        storage_options: storage_options.unwrap_or_default(),
        map,
        ..CreateOptions::default()
    };
    let updated = blocking::run(py, OnInterrupt::Cancel(&cancel), pump.as_mut(), move || {
        bazan::update_map(&root, &options)
    })?;
    let report = updated.to_json().to_string();
    Ok((PyLake::new(updated.map), report))
}

/// Loads the map of the lake at `root`.
#[pyfunction]
#[pyo3(signature = (root, *, storage_options = None, map = None))]
pub(crate) fn load_map(
    py: Python<'_>,
    root: PathBuf,
    storage_options: Option<bazan::StorageOptions>,
    map: Option<String>,
) -> PyResult<PyLake> {
    let options = bazan::LoadOptions {
        storage_options: storage_options.unwrap_or_default(),
        map,
    };
    let lake = blocking::run(py, OnInterrupt::Leave, None, move || {
        bazan::load_map_with(&root, &options)
    })?;
    Ok(PyLake::new(lake))
}

/// Registers Python callables as the handler of `extension`.
#[pyfunction]
pub(crate) fn register_handler(
    py: Python<'_>,
    extension: &str,
    name: String,
    count_rows: Py<PyAny>,
    read: Py<PyAny>,
) -> PyResult<()> {
    let handler = Arc::new(PyHandler::new(name, count_rows, read));
    bazan::register_handler(extension, handler).py(py)
}

/// Removes the handler registered for `extension`; true when there was one.
#[pyfunction]
pub(crate) fn unregister_handler(py: Python<'_>, extension: &str) -> PyResult<bool> {
    bazan::unregister_handler(extension).py(py)
}

/// The extensions with a registered handler.
#[pyfunction]
pub(crate) fn registered_extensions() -> Vec<String> {
    bazan::registered_extensions()
}

/// A loaded Lake Map (the engine side of `bazan.lake.LakeMap`).
#[pyclass(frozen, module = "bazan._bazan", name = "Lake")]
pub(crate) struct PyLake {
    lake: Arc<Lake>,
}

impl PyLake {
    fn new(lake: Lake) -> Self {
        PyLake {
            lake: Arc::new(lake),
        }
    }

    fn check_start(&self, py: Python<'_>, start: u64) -> PyResult<()> {
        let total = self.lake.total_rows();
        if start > total {
            return Err(errors::out_of_range(
                py,
                format!("row {start} is past the end of the lake ({total} rows)"),
            ));
        }
        Ok(())
    }
}

fn scan_options(columns: Option<Vec<String>>, with_gid: bool, with_path: bool) -> ScanOptions {
    ScanOptions {
        columns,
        with_gid,
        with_path,
        ..ScanOptions::default()
    }
}

/// Global row numbers from a list of ints or an Arrow integer array; negative numbers count
/// from the end.
fn row_numbers(py: Python<'_>, indices: &Bound<'_, PyAny>, total: u64) -> PyResult<Vec<u64>> {
    let signed: Vec<i64> = if let Ok(list) = indices.extract::<Vec<i64>>() {
        list
    } else if indices.hasattr("__arrow_c_array__")? {
        let (array, _) = indices.extract::<PyArray>()?.into_inner();
        if !array.data_type().is_integer() {
            return Err(PyTypeError::new_err(format!(
                "indices must be integers, not an array of {}",
                array.data_type()
            )));
        }
        if array.null_count() > 0 {
            return Err(errors::invalid(py, "indices must not contain nulls"));
        }
        let cast = arrow_cast::cast(&array, &DataType::Int64)
            .map_err(|e| errors::invalid(py, format!("indices: {e}")))?;
        cast.as_primitive::<Int64Type>().values().to_vec()
    } else {
        return Err(PyTypeError::new_err(
            "indices must be a sequence of ints or an Arrow integer array",
        ));
    };
    let total_i = i64::try_from(total).unwrap_or(i64::MAX);
    signed
        .into_iter()
        .map(|i| {
            let g = if i < 0 { i + total_i } else { i };
            if g < 0 || g >= total_i {
                Err(errors::out_of_range(
                    py,
                    format!("row {i} is out of range for a lake of {total} rows"),
                ))
            } else {
                Ok(g as u64)
            }
        })
        .collect()
}

#[pymethods]
impl PyLake {
    /// The lake root.
    #[getter]
    fn root(&self) -> String {
        self.lake.root().display().to_string()
    }

    /// Rows in the lake.
    #[getter]
    fn total_rows(&self) -> u64 {
        self.lake.total_rows()
    }

    /// Files in the map.
    #[getter]
    fn total_files(&self) -> usize {
        self.lake.total_files()
    }

    /// Bytes of the mapped files.
    #[getter]
    fn total_bytes(&self) -> u64 {
        self.lake.total_bytes()
    }

    /// The budget of the decoded-block cache that `take` fills (bytes; 0: off).
    #[getter]
    fn cache_bytes(&self) -> u64 {
        self.lake.cache_bytes()
    }

    #[setter]
    fn set_cache_bytes(&self, budget: u64) {
        self.lake.set_cache_bytes(budget);
    }

    /// Bytes the decoded-block cache holds now.
    #[getter]
    fn cached_bytes(&self) -> u64 {
        self.lake.cached_bytes()
    }

    /// The map's fingerprint mode.
    #[getter]
    fn fingerprint(&self) -> &'static str {
        self.lake.config().fingerprint.as_str()
    }

    /// The map's checkpoint stride.
    #[getter]
    fn stride(&self) -> u64 {
        self.lake.config().checkpoint_stride_rows
    }

    /// The text encoding of the map's delimited files (`utf-8` or `latin-1`).
    #[getter]
    fn text_encoding(&self) -> &'static str {
        self.lake.config().text_encoding.as_str()
    }

    /// The path of the map file.
    #[getter]
    fn map_path(&self) -> String {
        self.lake.map_path().display().to_string()
    }

    /// The unified schema.
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let schema = self.lake.schema().py(py)?;
        to_schema(py, schema)
    }

    /// The schema of a read with these options.
    #[pyo3(signature = (columns=None, with_gid=false, with_path=false))]
    fn scan_schema<'py>(
        &self,
        py: Python<'py>,
        columns: Option<Vec<String>>,
        with_gid: bool,
        with_path: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = scan_options(columns, with_gid, with_path);
        let schema = self.lake.scan_schema(&options).py(py)?;
        to_schema(py, schema)
    }

    /// The map table as stored, one row per file.
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let batch = self.lake.entries_batch().py(py)?;
        to_table(py, batch.schema(), vec![batch])
    }

    /// The whole map as the `bazan map show --json` object, as JSON text.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        let value = self.lake.to_json().py(py)?;
        Ok(value.to_string())
    }

    /// `(path, local_row, file_index, format)` of global row `g`.
    fn locate_row(&self, py: Python<'_>, g: i64) -> PyResult<(String, u64, usize, String)> {
        let total = self.lake.total_rows();
        if g < 0 || g as u64 >= total {
            return Err(errors::out_of_range(
                py,
                format!("row {g} is out of range for a lake of {total} rows"),
            ));
        }
        let at = self.lake.locate_row(g as u64).py(py)?;
        Ok((at.path, at.local_row, at.index, at.format))
    }

    /// Global rows `[start, start + length)` (clamped at the end) as a pyarrow.Table.
    #[pyo3(signature = (start, length, columns=None, with_gid=false, with_path=false))]
    fn slice<'py>(
        &self,
        py: Python<'py>,
        start: u64,
        length: u64,
        columns: Option<Vec<String>>,
        with_gid: bool,
        with_path: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.check_start(py, start)?;
        let cancel = CancelToken::new();
        let options = ScanOptions {
            cancel: Some(cancel.clone()),
            ..scan_options(columns, with_gid, with_path)
        };
        let lake = Arc::clone(&self.lake);
        let rows = start..start.saturating_add(length);
        let bytes = lake.estimated_scan_bytes(rows.clone());
        let (schema, batches) =
            blocking::run_short(py, OnInterrupt::Cancel(&cancel), bytes, move || {
                let reader = lake.scan(rows, &options)?;
                let schema = reader.schema();
                Ok((schema, reader.collect_batches()?))
            })?;
        to_table(py, schema, batches)
    }

    /// Global rows in the order given as a pyarrow.Table.
    #[pyo3(signature = (indices, columns=None, with_gid=false, with_path=false))]
    fn take<'py>(
        &self,
        py: Python<'py>,
        indices: &Bound<'py, PyAny>,
        columns: Option<Vec<String>>,
        with_gid: bool,
        with_path: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rows = row_numbers(py, indices, self.lake.total_rows())?;
        let cancel = CancelToken::new();
        let options = ScanOptions {
            cancel: Some(cancel.clone()),
            ..scan_options(columns, with_gid, with_path)
        };
        let lake = Arc::clone(&self.lake);
        // Each row may need a block of its own; the sum stops once it is past the bound.
        let mut bytes = 0u64;
        for &r in &rows {
            bytes = bytes.saturating_add(lake.estimated_scan_bytes(r..r + 1));
            if bytes > blocking::SHORT_BYTES {
                break;
            }
        }
        let batch = blocking::run_short(py, OnInterrupt::Cancel(&cancel), bytes, move || {
            lake.take(&rows, &options)
        })?;
        to_table(py, batch.schema(), vec![batch])
    }

    /// A stream of batches of global rows `[start, stop)`.
    #[pyo3(signature = (start, stop, batch_size, columns=None, with_gid=false, with_path=false))]
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        py: Python<'_>,
        start: u64,
        stop: u64,
        batch_size: usize,
        columns: Option<Vec<String>>,
        with_gid: bool,
        with_path: bool,
    ) -> PyResult<BatchStream> {
        if batch_size == 0 {
            return Err(errors::invalid(py, "batch_size must be at least 1"));
        }
        self.check_start(py, start)?;
        let cancel = CancelToken::new();
        let options = ScanOptions {
            batch_size,
            cancel: Some(cancel.clone()),
            ..scan_options(columns, with_gid, with_path)
        };
        let reader = self.lake.scan(start..stop.max(start), &options).py(py)?;
        Ok(BatchStream {
            schema: reader.schema(),
            reader: Mutex::new(Some(reader)),
            cancel,
        })
    }

    /// The doctor's report as JSON text (the `bazan doctor --json` object plus `errors`).
    #[pyo3(signature = (progress=None))]
    fn doctor(&self, py: Python<'_>, progress: Option<Py<PyAny>>) -> PyResult<String> {
        let (mut pump, feed) = match progress {
            Some(cb) => {
                let (pump, feed) = ProgressPump::new(cb);
                (Some(pump), Some(feed))
            }
            None => (None, None),
        };
        let options = DoctorOptions {
            progress: feed,
            ..DoctorOptions::default()
        };
        let lake = Arc::clone(&self.lake);
        let report = blocking::run(py, OnInterrupt::Leave, pump.as_mut(), move || {
            lake.doctor(&options)
        })?;
        serde_json::to_string(&report)
            .map_err(|e| errors::internal(py, format!("doctor report: {e}")))
    }

    fn __repr__(&self) -> String {
        format!(
            "Lake(root={:?}, files={}, rows={})",
            self.lake.root().display().to_string(),
            self.lake.total_files(),
            self.lake.total_rows()
        )
    }
}

/// A stream of record batches of a lake; every `__next__` decodes on a worker thread with
/// the GIL released.
#[pyclass(frozen, module = "bazan._bazan", name = "BatchStream")]
pub(crate) struct BatchStream {
    schema: SchemaRef,
    reader: Mutex<Option<LakeReader>>,
    cancel: CancelToken,
}

#[pymethods]
impl BatchStream {
    /// The schema of every batch (a pyarrow.Schema).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_schema(py, Arc::clone(&self.schema))
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let taken = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(mut reader) = taken else {
            return Err(PyStopIteration::new_err(()));
        };
        let (reader, next) =
            blocking::run(py, OnInterrupt::Cancel(&self.cancel), None, move || {
                let next = reader.next_batch();
                Ok((reader, next))
            })?;
        match next {
            None => Err(PyStopIteration::new_err(())),
            Some(Err(e)) => Err(errors::to_py(py, e)),
            Some(Ok(batch)) => {
                *self.reader.lock().unwrap_or_else(PoisonError::into_inner) = Some(reader);
                to_batch(py, batch)
            }
        }
    }

    /// Stops the stream (the next `__next__` raises StopIteration).
    fn close(&self) {
        self.cancel.cancel();
        self.reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// Registers the lake functions and classes in the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(create_map, m)?)?;
    m.add_function(wrap_pyfunction!(load_map, m)?)?;
    m.add_function(wrap_pyfunction!(update_map, m)?)?;
    m.add_function(wrap_pyfunction!(register_handler, m)?)?;
    m.add_function(wrap_pyfunction!(unregister_handler, m)?)?;
    m.add_function(wrap_pyfunction!(registered_extensions, m)?)?;
    m.add_class::<PyLake>()?;
    m.add_class::<BatchStream>()?;
    Ok(())
}

impl PyLake {
    /// The loaded lake, shared (for the SQL front end).
    pub(crate) fn lake(&self) -> Arc<Lake> {
        Arc::clone(&self.lake)
    }
}
