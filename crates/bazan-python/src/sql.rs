//! `bazan.sql(query, **tables)`: SQL over lakes, TsFiles and Arrow streams through the SQL
//! front end (`bazan-sql`, Apache DataFusion), with the GIL released while it runs; with
//! `stream=True` a `pyarrow.RecordBatchReader` over the running query instead of a table.

use std::path::PathBuf;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::PyRecordBatchReader;
use pyo3_arrow::input::AnyRecordBatch;

use crate::blocking::{self, OnInterrupt};
use crate::export::to_table;
use crate::lake::PyLake;

/// One table of a query, as the caller gave it.
enum Source {
    Lake(std::sync::Arc<bazan::Lake>),
    Path(PathBuf),
    Stream(Box<dyn arrow_array::RecordBatchReader + Send>),
}

/// What a query returns: all its rows, or the stream of a running query.
enum Output {
    Rows(arrow_schema::SchemaRef, Vec<arrow_array::RecordBatch>),
    Stream(bazan_sql::SqlStream),
}

/// A SQL error as a facade error: a query that does not parse or plan is an invalid argument
/// (Python's `ValueError`), lake and TsFile errors keep their kind.
fn facade_error(e: bazan_sql::Error) -> bazan::Error {
    match e {
        bazan_sql::Error::Bazan(inner) => inner,
        bazan_sql::Error::Query(m) => bazan::Error::invalid(m),
        other => bazan::Error::new(bazan::ErrorKind::Other, other.to_string()),
    }
}

/// Runs `query` over `tables` (name → `Lake`, a path to a lake or a `.tsfile`, or any object
/// with `__arrow_c_stream__`) and returns a `pyarrow.Table`, or with `stream` a
/// `pyarrow.RecordBatchReader` whose batches come as the query produces them.
#[pyfunction]
#[pyo3(signature = (query, tables, *, threads=None, trust_map=false, workers=None, stream=false))]
pub(crate) fn sql<'py>(
    py: Python<'py>,
    query: String,
    tables: &Bound<'py, PyDict>,
    threads: Option<usize>,
    trust_map: bool,
    workers: Option<Vec<String>>,
    stream: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let mut sources = Vec::with_capacity(tables.len());
    for (name, value) in tables.iter() {
        let name: String = name.extract()?;
        let source = if let Ok(lake) = value.cast::<PyLake>() {
            Source::Lake(lake.get().lake())
        } else if let Ok(path) = value.extract::<PathBuf>() {
            Source::Path(path)
        } else if let Ok(stream) = value.extract::<AnyRecordBatch>() {
            Source::Stream(stream.into_reader()?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "table {name:?}: expected a LakeMap, a path or an object with \
                 __arrow_c_stream__, not {}",
                value.get_type().name()?
            )));
        };
        sources.push((name, source));
    }
    let cluster = match workers {
        Some(urls) => Some(
            bazan_sql::cluster::Cluster::new(&urls)
                .map_err(|e| crate::errors::invalid(py, e.to_string()))?,
        ),
        None => None,
    };
    let (output, notes) = blocking::run(py, OnInterrupt::Leave, None, move || {
        let mut session = match (cluster, threads) {
            (Some(c), t) => {
                let t = t
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
                bazan_sql::SqlSession::on_cluster(c, t)
            }
            (None, Some(n)) => bazan_sql::SqlSession::with_threads(n),
            (None, None) => bazan_sql::SqlSession::new(),
        }
        .map_err(facade_error)?;
        session.set_trust_map(trust_map);
        for (name, source) in sources {
            match source {
                Source::Lake(lake) => session.register_lake_map(&name, lake),
                Source::Path(path) => session.register_path(&name, &path).map(|_| ()),
                Source::Stream(reader) => session.register_batches(&name, reader),
            }
            .map_err(facade_error)?;
        }
        if stream {
            let rows = session.sql_stream(&query).map_err(facade_error)?;
            let notes = rows.notes().to_vec();
            return Ok((Output::Stream(rows), notes));
        }
        let out = session.sql_counted(&query).map_err(facade_error)?;
        Ok((Output::Rows(out.schema, out.batches), out.notes))
    })?;
    for note in notes {
        let text = std::ffi::CString::new(note.replace('\0', " "))
            .map_err(|e| PyTypeError::new_err(e.to_string()))?;
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyUserWarning>(),
            &text,
            1,
        )?;
    }
    match output {
        Output::Rows(schema, batches) => to_table(py, schema, batches),
        // pyarrow reads the stream with the GIL released; an error of the run (a file changed
        // since it was mapped) is raised by pyarrow with the message naming the file.
        Output::Stream(rows) => PyRecordBatchReader::new(Box::new(rows)).into_pyarrow(py),
    }
}

/// Registers `sql` in the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sql, m)?)
}
