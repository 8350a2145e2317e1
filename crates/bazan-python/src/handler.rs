//! Python handlers: a pair of Python callables registered for a file extension, wrapped as a
//! facade [`Locator`]. `bazan.lake.register_handler` passes wrappers that call the user's
//! functions: `count_rows(path) -> int` and `read(path, start, length, columns) -> (schema,
//! iterator of pyarrow.RecordBatch)`. The engine calls them from its worker threads, which
//! take the GIL for each call; an exception they raise is carried through the engine as the
//! source of the locator error and raised again as itself.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bazan::{BatchIter, FileIndex, IndexOptions, Locator, LocatorError, ReadRequest};
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3_arrow::{PyRecordBatch, PySchema};

/// A handler made of Python callables.
pub(crate) struct PyHandler {
    name: String,
    count_rows: Py<PyAny>,
    read: Py<PyAny>,
}

impl PyHandler {
    /// A handler named `name` (the map's `format` of its files).
    pub(crate) fn new(name: String, count_rows: Py<PyAny>, read: Py<PyAny>) -> Self {
        PyHandler {
            name,
            count_rows,
            read,
        }
    }
}

/// The locator error carrying a Python exception.
fn py_err(path: &Path, e: PyErr) -> LocatorError {
    LocatorError::Library {
        path: path.to_path_buf(),
        format: "python handler",
        block: None,
        source: Box::new(e),
    }
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl PyHandler {
    /// Calls the read wrapper: the stream's schema and a Python iterator of its batches.
    fn open(
        &self,
        path: &Path,
        start: u64,
        length: Option<u64>,
        columns: Option<Vec<String>>,
    ) -> Result<(SchemaRef, Py<PyAny>), LocatorError> {
        Python::attach(|py| {
            let out = self
                .read
                .call1(py, (path_text(path), start, length, columns))?;
            let (schema, batches): (PySchema, Py<PyAny>) = out.extract(py)?;
            Ok((schema.into_inner(), batches))
        })
        .map_err(|e| py_err(path, e))
    }
}

impl Locator for PyHandler {
    fn name(&self) -> &str {
        &self.name
    }

    fn extensions(&self) -> &[&str] {
        // Registered for one extension by the facade's registry, not by this list.
        &[]
    }

    fn formats(&self) -> &[&str] {
        // Entries find the handler by its name.
        &[]
    }

    fn index(&self, path: &Path, _options: &IndexOptions) -> Result<FileIndex, LocatorError> {
        let rows = Python::attach(|py| -> PyResult<u64> {
            self.count_rows
                .call1(py, (path_text(path),))?
                .extract::<u64>(py)
        })
        .map_err(|e| py_err(path, e))?;
        let (schema, _) = self.open(path, 0, Some(0), None)?;
        Ok(FileIndex {
            format: self.name.clone(),
            row_count: rows,
            // Dynamic handlers store no blocks (lake-map.md §4).
            blocks: Vec::new(),
            schema,
            stats: None,
        })
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter, LocatorError> {
        let start = request.rows.start;
        let length = (request.rows.end != u64::MAX).then(|| request.rows.end.saturating_sub(start));
        let columns = request.projection.map(<[String]>::to_vec);
        let (_, batches) = self.open(path, start, length, columns.clone())?;
        Ok(Box::new(PyBatches {
            path: path.to_path_buf(),
            batches: Some(batches),
            columns,
        }))
    }
}

/// The batches of one handler read, pulled from the Python iterator one at a time.
struct PyBatches {
    path: std::path::PathBuf,
    batches: Option<Py<PyAny>>,
    columns: Option<Vec<String>>,
}

impl PyBatches {
    /// The batch projected to the requested columns, in their order.
    fn project(&self, batch: RecordBatch) -> Result<RecordBatch, LocatorError> {
        let Some(columns) = &self.columns else {
            return Ok(batch);
        };
        let schema = batch.schema();
        let mut picks = Vec::with_capacity(columns.len());
        for c in columns {
            let i = schema
                .index_of(c)
                .map_err(|_| LocatorError::UnknownColumn {
                    path: self.path.clone(),
                    column: c.clone(),
                    available: schema
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            picks.push(i);
        }
        batch.project(&picks).map_err(|e| LocatorError::Library {
            path: self.path.clone(),
            format: "python handler",
            block: None,
            source: Box::new(e),
        })
    }
}

impl Iterator for PyBatches {
    type Item = Result<RecordBatch, LocatorError>;

    fn next(&mut self) -> Option<Self::Item> {
        let it = self.batches.as_ref()?;
        let got = Python::attach(|py| -> PyResult<Option<RecordBatch>> {
            match it.call_method0(py, "__next__") {
                Ok(b) => Ok(Some(b.extract::<PyRecordBatch>(py)?.into_inner())),
                Err(e) if e.is_instance_of::<PyStopIteration>(py) => Ok(None),
                Err(e) => Err(e),
            }
        });
        match got {
            Ok(Some(batch)) => Some(self.project(batch)),
            Ok(None) => {
                self.batches = None;
                None
            }
            Err(e) => {
                self.batches = None;
                Some(Err(py_err(&self.path, e)))
            }
        }
    }
}
