//! Arrow data out to Python: results become `pyarrow.Table`s and `pyarrow.RecordBatch`es
//! through the Arrow C data interface, zero-copy.
//!
//! A short read is dominated by this hand-over when the lake's unified schema is wide: the
//! import of a 136-column schema alone costs pyarrow about 70 µs, as much as the arrays of
//! 1,000 rows. So the `pyarrow.Schema` of a result is imported once and kept (a few recent
//! schemas, compared by value), and each batch is handed over as one C struct array imported
//! against that schema (`pyarrow.RecordBatch._import_from_c(array_address, schema)`, the
//! entry point pyarrow has kept since 0.17). A pyarrow without it, or a batch whose schema is
//! not the result's, takes the general path: an Arrow C stream read by
//! `pyarrow.RecordBatchReader.from_stream`.

use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::SchemaRef;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3_arrow::{PySchema, PyTable};

/// Imported `pyarrow.Schema`s of recent results, most recent last.
static SCHEMAS: Mutex<Vec<(SchemaRef, Py<PyAny>)>> = Mutex::new(Vec::new());

/// Schemas kept in [`SCHEMAS`]: a few projections of a few lakes.
const KEPT_SCHEMAS: usize = 8;

/// A pyarrow.Schema.
pub(crate) fn to_schema(py: Python<'_>, schema: SchemaRef) -> PyResult<Bound<'_, PyAny>> {
    PySchema::new(schema).into_pyarrow(py)
}

/// The pyarrow.Schema of `schema`, imported once for equal schemas.
fn cached_schema<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyAny>> {
    {
        let mut kept = SCHEMAS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = kept
            .iter()
            .position(|(s, _)| Arc::ptr_eq(s, schema) || s == schema)
        {
            let hit = kept.remove(i);
            let object = hit.1.bind(py).clone();
            kept.push(hit);
            return Ok(object);
        }
    }
    // Imported without the lock held: the import runs Python code.
    let object = to_schema(py, Arc::clone(schema))?;
    let mut kept = SCHEMAS.lock().unwrap_or_else(PoisonError::into_inner);
    if kept.len() >= KEPT_SCHEMAS {
        kept.remove(0);
    }
    kept.push((Arc::clone(schema), object.clone().unbind()));
    Ok(object)
}

/// `batch` as a pyarrow.RecordBatch of `py_schema` (which describes it), through one C struct
/// array.
fn import_batch<'py>(
    import: &Bound<'py, PyAny>,
    py_schema: &Bound<'py, PyAny>,
    batch: RecordBatch,
) -> PyResult<Bound<'py, PyAny>> {
    let data = StructArray::from(batch).into_data();
    // Boxed so that its address stays put while pyarrow moves the struct out of it; pyarrow
    // leaves it released, and dropping it then frees nothing. On an error before the move,
    // dropping it releases the buffers.
    let mut array = Box::new(FFI_ArrowArray::new(&data));
    let address = std::ptr::from_mut::<FFI_ArrowArray>(&mut array) as usize;
    let imported = import.call1((address, py_schema));
    drop(array);
    imported
}

/// The pyarrow entry point that imports a C struct array against a `pyarrow.Schema`, when this
/// pyarrow has it.
fn batch_importer(py: Python<'_>) -> PyResult<Option<Bound<'_, PyAny>>> {
    let class = py
        .import(intern!(py, "pyarrow"))?
        .getattr(intern!(py, "RecordBatch"))?;
    Ok(class.getattr(intern!(py, "_import_from_c")).ok())
}

/// A pyarrow.Table of `batches`, each of which has the schema `schema`.
pub(crate) fn to_table<'py>(
    py: Python<'py>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'py, PyAny>> {
    let same = batches
        .iter()
        .all(|b| Arc::ptr_eq(b.schema_ref(), &schema) || *b.schema_ref() == schema);
    if let (true, Some(import)) = (same, batch_importer(py)?) {
        let py_schema = cached_schema(py, &schema)?;
        let list = PyList::empty(py);
        for batch in batches {
            list.append(import_batch(&import, &py_schema, batch)?)?;
        }
        return py
            .import(intern!(py, "pyarrow"))?
            .getattr(intern!(py, "Table"))?
            .call_method1(intern!(py, "from_batches"), (list, py_schema));
    }
    stream_reader(py, PyTable::try_new(batches, schema)?)?.call_method0(intern!(py, "read_all"))
}

/// A pyarrow.RecordBatch of `batch`.
pub(crate) fn to_batch(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    let schema = batch.schema();
    if let Some(import) = batch_importer(py)? {
        let py_schema = cached_schema(py, &schema)?;
        return import_batch(&import, &py_schema, batch);
    }
    let table = PyTable::try_new(vec![batch], schema)?;
    stream_reader(py, table)?.call_method0(intern!(py, "read_next_batch"))
}

/// pyarrow's reader of `table`'s Arrow C stream. Not `pyarrow.table()` or
/// `pyarrow.record_batch()`: those first ask whether their argument is a pandas DataFrame,
/// which imports pandas (and numpy) on a process's first call, a third of a second.
fn stream_reader<'py>(py: Python<'py>, table: PyTable) -> PyResult<Bound<'py, PyAny>> {
    py.import(intern!(py, "pyarrow"))?
        .getattr(intern!(py, "RecordBatchReader"))?
        .call_method1(intern!(py, "from_stream"), (table.into_pyobject(py)?,))
}
